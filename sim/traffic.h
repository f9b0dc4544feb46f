/*
 * traffic.h - arrival processes of one traffic class.
 *
 * The rate at time t is base(t) * (1 + A cos(2 pi (t - peak) / period)),
 * where base(t) is the spike's rate inside a spike, else the ramp's linear
 * interpolation (constant beyond its ends), else the class rate. Poisson
 * arrivals are drawn by thinning against a bound that holds until the next
 * breakpoint (ramp point, spike edge); at a breakpoint the draw restarts,
 * which the exponential's lack of memory makes exact. Constant arrivals are
 * spaced 1/rate(t) apart. Either way an arrival at real time x is scheduled
 * at floor(x) us and the fraction is carried into the next gap, so the
 * realised rate is unbiased at any rate.
 * Bursts (many arrivals at one instant, or spread evenly over `over`) are
 * produced separately. Replayed arrivals are the class's recorded times, one
 * after the other, with no randomness. Each class draws from its own stream, so the
 * arrivals are the same for every variant of a scenario.
 */
#ifndef SIM_TRAFFIC_H
#define SIM_TRAFFIC_H

#include "core/rng.h"
#include "scenario/scenario.h"

typedef struct sim_traffic {
    const sim_class *c;
    fb_time_us end_us;
    fb_rng rng;
    fb_time_us next_us;                  /* next open-loop arrival; FB_TIME_MAX when none */
    double carry_us;                     /* the last arrival's fraction of a microsecond */
    bool started;                        /* constant arrivals: the first one is at the start */
    uint32_t burst_i, burst_k;           /* next burst arrival: burst index, arrival within it */
    fb_time_us seg_start_us, seg_end_us; /* Poisson: a segment of constant rate... */
    double seg_bound;                    /* ...and its rate */
    double seg_mean_us;                  /* 1e6 / (seg_bound * scale): its mean gap; 0: none */
    double scale;                        /* x the class's rate: 1, or 1 / pods (a per-pod source) */
    uint32_t replay_i;                   /* replayed arrivals: the next one */
} sim_traffic;

void sim_traffic_init(sim_traffic *tr, const sim_class *c, uint64_t seed, uint32_t class_index,
                      fb_time_us end_us);
/* Rate (per second) of the class at time t. */
double sim_traffic_rate(const sim_class *c, fb_time_us t);
/* The most arrivals a second the scenario's classes together reach (their ramps' and spikes'
   highest rates, at a diurnal peak); 0 when one's is not known ahead (closed loop, replayed,
   bursts). A hint: the event queue's bucket width (sim_queue_init_rate). */
double sim_traffic_peak_rate(const sim_scenario *sc);
/* First open-loop arrival at or after `from`; FB_TIME_MAX when none before end_us. */
fb_time_us sim_traffic_next(sim_traffic *tr, fb_time_us from);
/* Time of the next burst arrival (advancing the cursor); FB_TIME_MAX when none. */
fb_time_us sim_traffic_next_burst(sim_traffic *tr);

#endif /* SIM_TRAFFIC_H */
