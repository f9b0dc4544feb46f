/*
 * dist.h - drawing from a scenario's distributions (latencies, token counts).
 *
 * The scenario format's distributions (sim_dist in scenario.h: constant,
 * uniform, exponential, lognormal by median and p99, empirical: values with
 * weights) sampled from a
 * caller-owned stream. Values are bounded so that no sum of them can
 * overflow a time: durations at 1e15 us (~31 years), token counts at 1e8.
 */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include <stdint.h>

#include "core/fb.h"
#include "core/rng.h"
#include "scenario/scenario.h"

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

#endif /* SIM_DIST_H */
