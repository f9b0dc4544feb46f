/* dist.c - sampling the scenario's distributions; see dist.h. */
#include "scenario/dist.h"

#include <math.h>

/* The standard normal's 0.99 quantile, as fb_rng_lognormal (core/rng.c) uses it. */
#define Z_P99 2.3263478740408408

void scn_dist_prepare(sim_dist *d) {
    d->prepared = false;
    if (d->kind != SIM_DIST_LOGNORMAL || !(d->a > 0.0) || !(d->b > d->a)) return;
    d->ln_a = log(d->a);
    d->sigma = log(d->b / d->a) / Z_P99;
    d->prepared = true;
}

/* fb_rng_lognormal(rng, a, b) with its logarithms taken once: the same operations on the same
 * values, so the same bits (tests/unit/test_dist.c compares them). */
static double lognormal(fb_rng *rng, const sim_dist *d) {
    if (!d->prepared) return fb_rng_lognormal(rng, d->a, d->b);
    double z = fb_rng_normal(rng);
    return exp(d->ln_a + d->sigma * z);
}

/* One of the values, each as likely as its weight. */
static double empirical(fb_rng *rng, const sim_dist *d) {
    if (d->n == 0) return d->a;
    double u = fb_rng_uniform(rng);
    for (uint32_t i = 0; i + 1 < d->n; i++)
        if (u < d->cw[i]) return d->v[i];
    return d->v[d->n - 1];
}

double scn_dist_draw(fb_rng *rng, const sim_dist *d) {
    switch (d->kind) {
    case SIM_DIST_CONSTANT:
        return d->a;
    case SIM_DIST_UNIFORM:
        return d->a + (d->b - d->a) * fb_rng_uniform(rng);
    case SIM_DIST_EXPONENTIAL:
        return d->a > 0 ? fb_rng_exponential(rng, d->a) : 0;
    case SIM_DIST_LOGNORMAL:
        return lognormal(rng, d);
    case SIM_DIST_EMPIRICAL:
        return empirical(rng, d);
    }
    return d->a;
}

/* llround(v) for 0 < v < 2^53, without the call: v - trunc(v) is exact, and a half rounds up
 * (away from zero) as llround's does. */
static int64_t round_positive(double v) {
    int64_t i = (int64_t)v;
    return v - (double)i >= 0.5 ? i + 1 : i;
}

fb_time_us scn_dist_draw_us(fb_rng *rng, const sim_dist *d) {
    double v = scn_dist_draw(rng, d);
    if (!(v > 0)) return 0;
    if (v > 1e15) return (fb_time_us)1e15;
    return round_positive(v);
}

uint32_t scn_dist_draw_tokens(fb_rng *rng, const sim_dist *d) {
    double v = scn_dist_draw(rng, d);
    if (!(v > 0)) return 0;
    if (v > 1e8) return 100000000u;
    return (uint32_t)round_positive(v);
}
