/* dist.c - sampling the scenario's distributions; see dist.h. */
#include "sim/dist.h"

#include <math.h>

double sim_dist_draw(fb_rng *rng, const sim_dist *d) {
    switch (d->kind) {
    case SIM_DIST_CONSTANT:
        return d->a;
    case SIM_DIST_UNIFORM:
        return d->a + (d->b - d->a) * fb_rng_uniform(rng);
    case SIM_DIST_EXPONENTIAL:
        return d->a > 0 ? fb_rng_exponential(rng, d->a) : 0;
    case SIM_DIST_LOGNORMAL:
        return fb_rng_lognormal(rng, d->a, d->b);
    }
    return d->a;
}

fb_time_us sim_dist_draw_us(fb_rng *rng, const sim_dist *d) {
    double v = sim_dist_draw(rng, d);
    if (!(v > 0)) return 0;
    if (v > 1e15) return (fb_time_us)1e15;
    return (fb_time_us)llround(v);
}

uint32_t sim_dist_draw_tokens(fb_rng *rng, const sim_dist *d) {
    double v = sim_dist_draw(rng, d);
    if (!(v > 0)) return 0;
    if (v > 1e8) return 100000000u;
    return (uint32_t)llround(v);
}
