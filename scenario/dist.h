/*
 * dist.h - drawing from a scenario's distributions (latencies, token counts).
 *
 * The scenario format's distributions (sim_dist, below: constant,
 * uniform, exponential, lognormal by median and p99, empirical: values with
 * weights) sampled from a
 * caller-owned stream. Values are bounded so that no sum of them can
 * overflow a time: durations at 1e15 us (~31 years), token counts at 1e8.
 */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/fb.h"
#include "core/rng.h"

typedef enum sim_dist_kind {
    SIM_DIST_CONSTANT = 0,
    SIM_DIST_UNIFORM,     /* a..b */
    SIM_DIST_EXPONENTIAL, /* mean a */
    SIM_DIST_LOGNORMAL,   /* median a, p99 b */
    SIM_DIST_EMPIRICAL    /* value v[i] with weight cw[i] - cw[i - 1]; a: the median */
} sim_dist_kind;

#define SIM_DIST_POINTS_MAX 16 /* values of an empirical distribution */

/* A distribution of a non-negative quantity (tokens, or microseconds). */
typedef struct sim_dist {
    sim_dist_kind kind;
    double a, b;
    bool prepared;      /* ln_a and sigma are set (scn_dist_prepare in dist.h) */
    double ln_a, sigma; /* lognormal: log(a) and log(b / a) / z(0.99), computed once */
    uint32_t n;         /* empirical: its values, and their cumulative weights (the last 1) */
    double v[SIM_DIST_POINTS_MAX], cw[SIM_DIST_POINTS_MAX];
} sim_dist;

/*
 * Compute once what every draw of d would compute again (a lognormal's two
 * logarithms); the loader calls it. Draws from a distribution that was not
 * prepared are the same numbers, only slower.
 */
void scn_dist_prepare(sim_dist *d);
/* One draw, unbounded (negative and NaN are possible for a bad distribution). */
double scn_dist_draw(fb_rng *rng, const sim_dist *d);
/* A duration in microseconds, in [0, 1e15]. */
fb_time_us scn_dist_draw_us(fb_rng *rng, const sim_dist *d);
/* A token count, in [0, 1e8]. */
uint32_t scn_dist_draw_tokens(fb_rng *rng, const sim_dist *d);
/*
 * A prepared lognormal (true) is drawn from its inverse-CDF table by an owner that keeps one,
 * filled by scn_dist_table (fb_lntab in core/rng.h: the simulator's per-request and
 * per-attempt draws, random streams fusebox-3); scn_dist_draw_us_tab and
 * scn_dist_draw_tokens_tab are scn_dist_draw_us and scn_dist_draw_tokens with its table
 * (t NULL: without one).
 */
bool scn_dist_has_table(const sim_dist *d);
void scn_dist_table(const sim_dist *d, fb_lntab *t);

/* llround(v) for 0 < v < 2^53, without the call: v - trunc(v) is exact, and a half rounds up
 * (away from zero) as llround's does. */
static inline int64_t scn__round_positive(double v) {
    int64_t i = (int64_t)v;
    return v - (double)i >= 0.5 ? i + 1 : i;
}
/* A drawn value as a duration in [0, 1e15] us, and as a token count in [0, 1e8]. */
static inline fb_time_us scn__bound_us(double v) {
    if (!(v > 0)) return 0;
    if (v > 1e15) return (fb_time_us)1e15;
    return scn__round_positive(v);
}
static inline uint32_t scn__bound_tokens(double v) {
    if (!(v > 0)) return 0;
    if (v > 1e8) return 100000000u;
    return (uint32_t)scn__round_positive(v);
}
/* Inline, as the simulator draws them per request and per attempt: a table's draw, a
 * constant (no draw), an exponential duration (the draw without scn_dist_draw's two calls),
 * else the call. */
static inline fb_time_us scn_dist_draw_us_tab(fb_rng *rng, const sim_dist *d, const fb_lntab *t) {
    if (t) return scn__bound_us(fb_rng_lognormal_tab(rng, t));
    if (d->kind == SIM_DIST_CONSTANT) return scn__bound_us(d->a);
    if (d->kind == SIM_DIST_EXPONENTIAL && d->a > 0)
        return scn__bound_us(fb_rng_exponential(rng, d->a));
    return scn_dist_draw_us(rng, d);
}
static inline uint32_t scn_dist_draw_tokens_tab(fb_rng *rng, const sim_dist *d, const fb_lntab *t) {
    if (t) return scn__bound_tokens(fb_rng_lognormal_tab(rng, t));
    if (d->kind == SIM_DIST_CONSTANT) return scn__bound_tokens(d->a);
    return scn_dist_draw_tokens(rng, d);
}
/*
 * The u-quantile of d (0 <= u < 1): a draw from d made of one uniform draw u, for a
 * caller whose randomness comes as uniforms (the fault model's draw function, fault.h).
 * Unbounded, as scn_dist_draw.
 */
double scn_dist_quantile(const sim_dist *d, double u);

#endif /* SIM_DIST_H */
