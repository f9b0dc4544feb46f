/*
 * bench_breaker.c - ns per allow()+record() pair in each breaker mode.
 *
 * Mostly-success traffic (one failure in 29 calls, one slow call in 31) that
 * keeps the breaker CLOSED (slow-call tracking on), so the figure is the steady-state hot path. The
 * time window sees time advance 1 ms per call, so it rolls a 1 s bucket every
 * 1000 calls. Prints figures only; the best of several runs is reported.
 */
#include <stdio.h>
#include <time.h>

#include "core/breaker.h"

#define PAIRS 20000000L
#define RUNS 5
#define PERIOD (29 * 31) /* the traffic pattern repeats after this many calls */

static volatile uint64_t sink;
static fb_effect effects[PERIOD];
static fb_time_us durations[PERIOD];

/* One failure in 29 calls, one slow call (900 ms > 500 ms) in 31; precomputed. */
static void make_traffic(void) {
    for (int i = 0; i < PERIOD; i++) {
        effects[i] = i % 29 == 0 ? FB_EFFECT_FAILURE : FB_EFFECT_SUCCESS;
        durations[i] = i % 31 == 0 ? 900 * FB_US_PER_MS : 200 * FB_US_PER_MS;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One timed run: returns ns per pair; checks the breaker stayed closed. */
static double run(const fb_breaker_config *cfg, fb_time_us step_us) {
    fb_breaker b;
    if (fb_breaker_init(&b, cfg, 0) != FB_OK) return -1.0;
    fb_time_us now = 0;
    uint64_t admitted = 0;
    int j = 0;
    double t0 = now_s();
    for (long i = 0; i < PAIRS; i++) {
        fb_breaker_permit p;
        if (fb_breaker_allow(&b, now, &p)) admitted++;
        fb_breaker_record(&b, &p,
                          &(fb_breaker_result){.effect = effects[j],
                                               .duration_us = durations[j],
                                               .hint_us = FB_TIME_NONE},
                          now);
        now += step_us;
        if (++j == PERIOD) j = 0;
    }
    double t1 = now_s();
    sink += admitted + fb_breaker_stats_get(&b)->stale;
    if (fb_breaker_state_get(&b) != FB_BREAKER_CLOSED) return -1.0;
    return (t1 - t0) * 1e9 / (double)PAIRS;
}

static void bench(const char *name, const fb_breaker_config *cfg, fb_time_us step_us) {
    double best = -1.0;
    for (int r = 0; r < RUNS; r++) {
        double ns = run(cfg, step_us);
        if (ns < 0) {
            printf("breaker %-13s  breaker left CLOSED: bench invalid\n", name);
            return;
        }
        if (best < 0 || ns < best) best = ns;
    }
    printf("breaker %-13s  %6.2f ns per allow+record pair (best of %d x %ld pairs)\n", name, best,
           RUNS, PAIRS);
}

int main(void) {
    make_traffic();
    fb_breaker_config consecutive = {
        .mode = FB_BREAKER_MODE_CONSECUTIVE,
        .consecutive_failures = 5,
        .slow_us = 500 * FB_US_PER_MS,
    };
    fb_breaker_config count = {
        .mode = FB_BREAKER_MODE_COUNT_WINDOW,
        .window_calls = 100,
        .minimum_calls = 20,
        .failure_rate = 0.5,
        .slow_us = 500 * FB_US_PER_MS,
        .slow_rate = 0.5,
    };
    fb_breaker_config timed = {
        .mode = FB_BREAKER_MODE_TIME_WINDOW,
        .window_us = 10 * FB_US_PER_S,
        .window_buckets = 10,
        .minimum_calls = 20,
        .failure_rate = 0.5,
        .slow_us = 500 * FB_US_PER_MS,
        .slow_rate = 0.5,
    };
    bench("CONSECUTIVE", &consecutive, FB_US_PER_MS);
    bench("COUNT_WINDOW", &count, FB_US_PER_MS);
    bench("TIME_WINDOW", &timed, FB_US_PER_MS);
    return 0;
}
