/*
 * bench_core.c - cost of the hot core primitives: histogram record, PCG32
 * draws, lognormal draws, token-bucket take. Prints ns per call; no verdict.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/hist.h"
#include "core/ratelimit.h"
#include "core/rng.h"

#define VALUES (1 << 20) /* 8 MB of precomputed values: RNG cost stays out */

static volatile uint64_t sink_u64;
static volatile double sink_double;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void report(const char *what, double ns, long ops) {
    printf("%-44s %8.2f ns/op  (%ld ops)\n", what, ns / (double)ops, ops);
}

static void bench_hist_record(const int64_t *values) {
    static fb_hist h; /* 37 KB: not on the stack */
    fb_hist_init(&h);
    const long rounds = 50;
    double t0 = now_ns();
    for (long r = 0; r < rounds; r++) {
        for (size_t i = 0; i < VALUES; i++) fb_hist_record(&h, values[i]);
    }
    double t1 = now_ns();
    sink_u64 = fb_hist_count(&h) + (uint64_t)fb_hist_percentile(&h, 99);
    report("fb_hist_record (lognormal latencies)", t1 - t0, rounds * VALUES);
}

static void bench_rng_u32(void) {
    fb_rng r;
    fb_rng_derive(&r, 1, 2, 3);
    const long n = 200000000;
    uint32_t acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) acc ^= fb_rng_u32(&r);
    double t1 = now_ns();
    sink_u64 = acc;
    report("fb_rng_u32", t1 - t0, n);
}

static void bench_rng_lognormal(void) {
    fb_rng r;
    fb_rng_derive(&r, 1, 2, 4);
    const long n = 20000000;
    double acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) acc += fb_rng_lognormal(&r, 600000.0, 3000000.0);
    double t1 = now_ns();
    sink_double = acc;
    report("fb_rng_lognormal", t1 - t0, n);
}

static void bench_bucket_take(void) {
    /* 1000 tokens/s asked for every 750 us on average: about 3 in 4 takes succeed. */
    fb_bucket b;
    fb_bucket_init(&b, 1000, FB_US_PER_S, 0);
    const long n = 100000000;
    uint64_t taken = 0;
    fb_time_us now = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        now += (i & 1) ? 700 : 800;
        taken += fb_bucket_take(&b, 1, now);
    }
    double t1 = now_ns();
    sink_u64 = taken;
    report("fb_bucket_take", t1 - t0, n);
}

int main(void) {
    int64_t *values = malloc(VALUES * sizeof *values);
    if (!values) {
        fprintf(stderr, "bench_core: out of memory\n");
        return 1;
    }
    fb_rng r;
    fb_rng_derive(&r, 42, 0, 0);
    for (size_t i = 0; i < VALUES; i++) {
        values[i] = (int64_t)fb_rng_lognormal(&r, 600000.0, 3000000.0);
    }
    bench_hist_record(values);
    bench_rng_u32();
    bench_rng_lognormal();
    bench_bucket_take();
    free(values);
    return 0;
}
