/* test_hist.c - bucket layout, percentile rule, relative error, merge, clamping. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hist.h"
#include "core/rng.h"

static fb_hist h1, h2, h3; /* 37 KB each: keep them off the stack */

/* p50 of {v, FB_HIST_VALUE_MAX}: the highest value of v's bucket, unclamped by max. */
static int64_t reported_for(int64_t v) {
    fb_hist_init(&h1);
    fb_hist_record(&h1, v);
    fb_hist_record(&h1, FB_HIST_VALUE_MAX);
    return fb_hist_percentile(&h1, 50);
}

static void hist_values_below_sub_buckets_are_exact(void **state) {
    (void)state;
    for (int64_t v = 0; v < FB_HIST_SUB_BUCKETS; v++) assert_int_equal(reported_for(v), v);
    /* The first value past the exact range shares a bucket of width 2. */
    assert_int_equal(reported_for(FB_HIST_SUB_BUCKETS), FB_HIST_SUB_BUCKETS + 1);
}

static void hist_relative_error_below_one_percent_at_every_bucket_edge(void **state) {
    (void)state;
    /*
     * Every bucket of every octave: its first value, second value, middle and
     * last value are reported as the bucket's last value, less than 1% above.
     */
    const int half = FB_HIST_SUB_BUCKETS / 2;
    int checked = 0;
    for (int shift = 1; FB_HIST_SUB_BUCKETS * (INT64_C(1) << (shift - 1)) <= FB_HIST_VALUE_MAX;
         shift++) {
        int64_t width = INT64_C(1) << shift;
        for (int64_t sub = half; sub < 2 * half; sub++) {
            int64_t lo = sub << shift, hi = lo + width - 1;
            int64_t probes[] = {lo, lo + 1, lo + width / 2, hi};
            for (size_t k = 0; k < 4; k++) {
                int64_t v = probes[k];
                int64_t got = reported_for(v);
                assert_int_equal(got, hi);
                assert_true(got >= v);
                assert_true((got - v) * 100 < v);
                checked++;
            }
        }
    }
    /* 34 octaves above the exact range, 128 buckets each, 4 probes. */
    assert_int_equal(checked, (42 - FB_HIST_SUB_BITS) * half * 4);
}

static void hist_relative_error_below_one_percent_for_random_values(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 1, 0, 0);
    for (int i = 0; i < 20000; i++) {
        /* Log-uniform magnitude, uniform within it: every octave gets probed. */
        int64_t v = (int64_t)fb_rng_below(&r, UINT64_C(1) << (1 + fb_rng_below(&r, 42)));
        int64_t got = reported_for(v);
        assert_true(got >= v);
        assert_true((got - v) * 100 <= v);
    }
}

static void hist_single_value_is_every_percentile(void **state) {
    (void)state;
    /* Clamping to [min, max] makes a lone value exact at any percentile. */
    fb_hist_init(&h1);
    fb_hist_record(&h1, 123456789);
    assert_int_equal(fb_hist_percentile(&h1, 0), 123456789);
    assert_int_equal(fb_hist_percentile(&h1, 50), 123456789);
    assert_int_equal(fb_hist_percentile(&h1, 99.9), 123456789);
    assert_int_equal(fb_hist_percentile(&h1, 100), 123456789);
}

static void hist_percentile_reports_bucket_high_clamped_to_min_and_max(void **state) {
    (void)state;
    /* 1000 and 1001 share bucket [1000, 1003]; 5000 is in [5000, 5023]. */
    fb_hist_init(&h1);
    fb_hist_record(&h1, 1000);
    fb_hist_record(&h1, 5000);
    assert_int_equal(fb_hist_percentile(&h1, 0), 1000);    /* min, exactly */
    assert_int_equal(fb_hist_percentile(&h1, 50), 1003);   /* bucket high */
    assert_int_equal(fb_hist_percentile(&h1, 50.1), 5000); /* clamped to max */
    assert_int_equal(fb_hist_percentile(&h1, 100), 5000);  /* max, exactly */

    fb_hist_init(&h1);
    fb_hist_record(&h1, 1000);
    fb_hist_record(&h1, 1001);
    assert_int_equal(fb_hist_percentile(&h1, 50), 1001);
}

static void hist_percentiles_of_uniform_1_to_100000(void **state) {
    (void)state;
    fb_hist_init(&h1);
    for (int64_t v = 1; v <= 100000; v++) fb_hist_record(&h1, v);
    assert_int_equal(fb_hist_count(&h1), 100000);
    assert_int_equal(fb_hist_min(&h1), 1);
    assert_int_equal(fb_hist_max(&h1), 100000);
    assert_true(fb_hist_mean(&h1) == 50000.5);

    /* The exact rank-k value is k; the histogram reports k's bucket high. */
    assert_int_equal(fb_hist_percentile(&h1, 0), 1);
    assert_int_equal(fb_hist_percentile(&h1, 50), 50175);
    assert_int_equal(fb_hist_percentile(&h1, 90), 90111);
    assert_int_equal(fb_hist_percentile(&h1, 99), 99327);
    /* Rank 99900's bucket ends at 100351, past the maximum. */
    assert_int_equal(fb_hist_percentile(&h1, 99.9), 100000);
    assert_int_equal(fb_hist_percentile(&h1, 100), 100000);

    static const double ps[] = {1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        int64_t exact = (int64_t)(ps[i] * 1000 + 0.5);
        int64_t got = fb_hist_percentile(&h1, ps[i]);
        assert_true(got >= exact);
        assert_true((got - exact) * 100 < exact);
    }
}

static void hist_rank_is_the_ceiling_of_p_percent(void **state) {
    (void)state;
    /* Values 0..9: p10 is rank 1 (0), p10.01 is rank 2 (1), p99.9 is rank 10 (9). */
    fb_hist_init(&h1);
    for (int64_t v = 0; v < 10; v++) fb_hist_record(&h1, v);
    assert_int_equal(fb_hist_percentile(&h1, 10), 0);
    assert_int_equal(fb_hist_percentile(&h1, 10.01), 1);
    assert_int_equal(fb_hist_percentile(&h1, 50), 4);
    assert_int_equal(fb_hist_percentile(&h1, 90), 8);
    assert_int_equal(fb_hist_percentile(&h1, 90.5), 9);
    assert_int_equal(fb_hist_percentile(&h1, 99.9), 9);

    /* p99.9 of 1000 is rank 999, although 99.9 / 100 * 1000 is 999.0000000000001. */
    fb_hist_init(&h1);
    fb_hist_record_n(&h1, 0, 999);
    fb_hist_record(&h1, 1);
    assert_int_equal(fb_hist_percentile(&h1, 99.9), 0);
    assert_int_equal(fb_hist_percentile(&h1, 99.91), 1);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t samples[200000];

static void hist_percentiles_of_lognormal_latencies_within_one_percent(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 2, 0, 0);
    const size_t n = sizeof samples / sizeof samples[0];
    fb_hist_init(&h1);
    for (size_t i = 0; i < n; i++) {
        samples[i] = (int64_t)fb_rng_lognormal(&r, 600000.0, 3000000.0);
        fb_hist_record(&h1, samples[i]);
    }
    qsort(samples, n, sizeof samples[0], cmp_i64);
    static const double ps[] = {50, 90, 99, 99.9};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        int64_t exact = samples[(size_t)(ps[i] * (double)n / 100) - 1];
        int64_t got = fb_hist_percentile(&h1, ps[i]);
        assert_true(got >= exact);
        assert_true((got - exact) * 100 < exact);
    }
}

/*
 * The definition, from the sorted values: the value of rank ceil(p% of n)
 * reported as its bucket's highest value (reported_for), clamped to max.
 */
static int64_t percentile_by_definition(const int64_t *sorted, size_t n, double p) {
    if (!(p > 0.0)) return sorted[0];
    if (p >= 100.0) return sorted[n - 1];
    double rank_d = ceil(p * (double)n / 100.0);
    size_t rank = rank_d < 1.0 ? 1 : (size_t)rank_d;
    if (rank > n) rank = n;
    int64_t v = reported_for(sorted[rank - 1]);
    return v > sorted[n - 1] ? sorted[n - 1] : v;
}

static void hist_percentiles_in_one_scan_equal_the_definition(void **state) {
    (void)state;
    /* a tick's few values far apart, dense clusters, every scale; p's in and out of order */
    static const double up[] = {0, 1, 25, 50, 50, 90, 99, 99.9, 99.99, 100};
    static const double down[] = {99, 50, 99.9, 0.5, 100, 50};
    fb_rng r;
    fb_rng_derive(&r, 3, 0, 0);
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)fb_rng_below(&r, round % 4 == 0 ? 3 : 300);
        uint64_t scale = UINT64_C(1) << (1 + fb_rng_below(&r, 42));
        uint64_t base = round % 3 == 0 ? fb_rng_below(&r, scale) : 0;
        fb_hist_init(&h2);
        for (size_t i = 0; i < n; i++) {
            samples[i] = (int64_t)(base + fb_rng_below(&r, round % 3 == 0 ? 64 : scale));
            fb_hist_record(&h2, samples[i]);
        }
        qsort(samples, n, sizeof samples[0], cmp_i64);
        int64_t got_up[sizeof up / sizeof up[0]], got_down[sizeof down / sizeof down[0]];
        fb_hist_percentiles(&h2, up, sizeof up / sizeof up[0], got_up);
        fb_hist_percentiles(&h2, down, sizeof down / sizeof down[0], got_down);
        for (size_t k = 0; k < sizeof up / sizeof up[0]; k++) {
            int64_t want = percentile_by_definition(samples, n, up[k]);
            assert_int_equal(got_up[k], want);
            assert_int_equal(fb_hist_percentile(&h2, up[k]), want);
        }
        for (size_t k = 0; k < sizeof down / sizeof down[0]; k++)
            assert_int_equal(got_down[k], percentile_by_definition(samples, n, down[k]));
    }
    int64_t none[2] = {-1, -1};
    fb_hist_init(&h2);
    fb_hist_percentiles(&h2, up + 3, 2, none);
    assert_int_equal(none[0], 0);
    assert_int_equal(none[1], 0);
}

static void hist_empty_reports_zero(void **state) {
    (void)state;
    fb_hist_init(&h1);
    assert_int_equal(fb_hist_count(&h1), 0);
    assert_int_equal(fb_hist_min(&h1), 0);
    assert_int_equal(fb_hist_max(&h1), 0);
    assert_true(fb_hist_mean(&h1) == 0.0);
    assert_int_equal(fb_hist_percentile(&h1, 0), 0);
    assert_int_equal(fb_hist_percentile(&h1, 50), 0);
    assert_int_equal(fb_hist_percentile(&h1, 100), 0);
}

static void hist_negative_values_record_as_zero(void **state) {
    (void)state;
    fb_hist_init(&h1);
    fb_hist_record(&h1, -5);
    fb_hist_record(&h1, INT64_MIN);
    fb_hist_record(&h1, 10);
    assert_int_equal(fb_hist_count(&h1), 3);
    assert_int_equal(fb_hist_min(&h1), 0);
    assert_int_equal(fb_hist_percentile(&h1, 60), 0);
    assert_int_equal(fb_hist_percentile(&h1, 70), 10);
    assert_true(fb_hist_mean(&h1) * 3 == 10.0);
    assert_int_equal(h1.clamped, 0);
}

static void hist_values_above_max_clamp_and_are_counted(void **state) {
    (void)state;
    fb_hist_init(&h1);
    fb_hist_record(&h1, 7);
    fb_hist_record(&h1, FB_HIST_VALUE_MAX);
    fb_hist_record(&h1, FB_HIST_VALUE_MAX + 1);
    fb_hist_record(&h1, INT64_MAX);
    fb_hist_record_n(&h1, INT64_MAX, 3);
    assert_int_equal(fb_hist_count(&h1), 7);
    assert_int_equal(h1.clamped, 5); /* FB_HIST_VALUE_MAX itself is in range */
    assert_int_equal(fb_hist_max(&h1), FB_HIST_VALUE_MAX);
    assert_int_equal(fb_hist_percentile(&h1, 50), FB_HIST_VALUE_MAX);
    assert_int_equal(fb_hist_percentile(&h1, 100), FB_HIST_VALUE_MAX);
    assert_int_equal(h1.counts[FB_HIST_BUCKETS - 1], 6);
}

static void hist_record_n_equals_n_records(void **state) {
    (void)state;
    fb_hist_init(&h1);
    fb_hist_init(&h2);
    fb_hist_record_n(&h1, 4242, 5);
    fb_hist_record_n(&h1, 99, 0); /* nothing at all: min stays 4242 */
    for (int i = 0; i < 5; i++) fb_hist_record(&h2, 4242);
    assert_memory_equal(&h1, &h2, sizeof h1);
}

static void hist_merge_equals_recording_both(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 3, 0, 0);
    fb_hist_init(&h1);
    fb_hist_init(&h2);
    fb_hist_init(&h3);
    for (int i = 0; i < 50000; i++) {
        int64_t a = (int64_t)fb_rng_lognormal(&r, 1000.0, 50000.0);
        int64_t b = (int64_t)fb_rng_lognormal(&r, 300000.0, 2000000.0);
        fb_hist_record(&h1, a);
        fb_hist_record(&h2, b);
        fb_hist_record(&h3, a);
        fb_hist_record(&h3, b);
    }
    fb_hist_record(&h2, INT64_MAX); /* clamped counts merge too */
    fb_hist_record(&h3, INT64_MAX);
    fb_hist_merge(&h1, &h2);
    /* The sum is an integer, exact in any order, so the structs match bit for bit. */
    assert_memory_equal(&h1, &h3, sizeof h1);
}

/*
 * The sum stays exact beyond 2^53 and 2^64, where a double's would round: so
 * merging in any order gives the same mean as recording one by one.
 */
static void hist_sum_is_exact_beyond_2_pow_64(void **state) {
    (void)state;
    fb_hist_init(&h1);
    fb_hist_record_n(&h1, 5, (UINT64_C(1) << 63) + 1); /* 5 * 2^63 + 5 = 2 * 2^64 + 2^63 + 5 */
    assert_true(h1.sum_high == 2);
    assert_true(h1.sum == (UINT64_C(1) << 63) + 5);
    assert_true(fb_hist_mean(&h1) == 5.0);
    /* 2^30 of the largest value: 2^72 - 2^30, a sum no double adds up one by one */
    fb_hist_init(&h1);
    fb_hist_record_n(&h1, FB_HIST_VALUE_MAX, UINT64_C(1) << 30);
    assert_true(fb_hist_mean(&h1) == (double)FB_HIST_VALUE_MAX);
    /* recorded in two halves and merged, one value (a carry) at a time, it is the same sum */
    fb_hist_init(&h2);
    fb_hist_init(&h3);
    fb_hist_record_n(&h2, FB_HIST_VALUE_MAX, (UINT64_C(1) << 29) - 1);
    fb_hist_record_n(&h3, FB_HIST_VALUE_MAX, UINT64_C(1) << 29);
    fb_hist_record(&h3, FB_HIST_VALUE_MAX);
    fb_hist_merge(&h2, &h3);
    assert_memory_equal(&h1, &h2, sizeof h1);
    /* and subtracting a part leaves the rest's sum, the borrow included */
    fb_hist_subtract(&h2, &h3);
    fb_hist_init(&h1);
    fb_hist_record_n(&h1, FB_HIST_VALUE_MAX, (UINT64_C(1) << 29) - 1);
    assert_true(h2.sum_high == h1.sum_high && h2.sum == h1.sum);
    assert_true(h1.sum_high == (UINT64_C(1) << 7) - 1); /* (2^42 - 1)(2^29 - 1) < 2^71 */
}

static void hist_merge_with_empty_changes_nothing(void **state) {
    (void)state;
    fb_hist_init(&h1);
    fb_hist_init(&h2);
    fb_hist_record(&h1, 500);
    fb_hist_record(&h1, 700);
    memcpy(&h3, &h1, sizeof h1);
    fb_hist_merge(&h1, &h2);
    assert_memory_equal(&h1, &h3, sizeof h1);
    /* And into an empty one: the result is a copy. */
    fb_hist_merge(&h2, &h1);
    assert_memory_equal(&h2, &h3, sizeof h1);
    assert_int_equal(fb_hist_min(&h2), 500);
}

/* A sliding window: merging three ticks then subtracting the first equals merging the last two. */
static void hist_subtract_undoes_a_merge(void **state) {
    (void)state;
    fb_hist a, b, c, win, expect;
    fb_hist_init(&a);
    fb_hist_init(&b);
    fb_hist_init(&c);
    for (int64_t v = 1; v <= 1000; v++) fb_hist_record(&a, v * 1000);
    for (int64_t v = 1; v <= 500; v++) fb_hist_record(&b, v * 37);
    fb_hist_record(&c, 5);
    fb_hist_record(&c, 90000);
    fb_hist_init(&win);
    fb_hist_merge(&win, &a);
    fb_hist_merge(&win, &b);
    fb_hist_merge(&win, &c);
    fb_hist_subtract(&win, &a);
    fb_hist_init(&expect);
    fb_hist_merge(&expect, &b);
    fb_hist_merge(&expect, &c);
    assert_int_equal(fb_hist_count(&win), fb_hist_count(&expect));
    assert_memory_equal(win.counts, expect.counts, sizeof win.counts);
    assert_int_equal(fb_hist_percentile(&win, 50), fb_hist_percentile(&expect, 50));
    assert_int_equal(fb_hist_percentile(&win, 99), fb_hist_percentile(&expect, 99));
    /* a's max (1,000,000) is gone: the max narrows to c's 90000 bucket */
    assert_true(fb_hist_max(&win) < 1000000);
    assert_true(fb_hist_max(&win) >= 90000);
    assert_int_equal(fb_hist_min(&win), 5);
    fb_hist_subtract(&win, &b);
    fb_hist_subtract(&win, &c);
    assert_int_equal(fb_hist_count(&win), 0);
    assert_int_equal(fb_hist_max(&win), 0);
    assert_int_equal(fb_hist_percentile(&win, 99), 0);
}

/*
 * A sliding window of ticks of random width and place: after every step the
 * running sum holds exactly the counts of the ticks inside, and its min and
 * max are the exact ones or the edges of their buckets (under 1% away).
 */
static void hist_sliding_window_keeps_the_ticks_inside(void **state) {
    (void)state;
    enum { K = 4, TICKS = 60 };
    static fb_hist ring[K], win, expect;
    fb_rng r;
    fb_rng_derive(&r, 11, 0, 0);
    fb_hist_init(&win);
    for (int k = 0; k < K; k++) fb_hist_init(&ring[k]);
    for (int t = 0; t < TICKS; t++) {
        fb_hist *tick = &ring[t % K];
        if (t >= K) fb_hist_subtract_clear(&win, tick);
        double lo = 10.0 * (double)(1 + fb_rng_below(&r, 100000));
        int n = (int)fb_rng_below(&r, 50); /* some ticks are empty */
        for (int i = 0; i < n; i++) fb_hist_record(tick, (int64_t)(lo * (1 + fb_rng_uniform(&r))));
        fb_hist_merge(&win, tick);
        fb_hist_init(&expect);
        for (int k = 0; k < K && k <= t; k++) fb_hist_merge(&expect, &ring[k]);
        assert_int_equal(fb_hist_count(&win), fb_hist_count(&expect));
        assert_memory_equal(win.counts, expect.counts, sizeof win.counts);
        assert_true(fb_hist_min(&win) <= fb_hist_min(&expect));
        assert_true(fb_hist_max(&win) >= fb_hist_max(&expect));
        assert_true((double)fb_hist_min(&win) >= (double)fb_hist_min(&expect) * 0.99);
        assert_true((double)fb_hist_max(&win) <= (double)fb_hist_max(&expect) * 1.01);
    }
}

/* The window's step: subtract the oldest tick and empty it, in one pass, as the two calls do. */
static void hist_subtract_clear_equals_subtract_then_clear(void **state) {
    (void)state;
    static fb_hist a, b, win, a2, win2, fresh;
    fb_hist_init(&a);
    fb_hist_init(&b);
    fb_hist_init(&win);
    fb_hist_init(&fresh);
    for (int64_t v = 1; v <= 1000; v++) fb_hist_record(&a, v * 1000);
    for (int64_t v = 1; v <= 500; v++) fb_hist_record(&b, v * 37);
    fb_hist_record(&a, INT64_MAX);
    fb_hist_merge(&win, &a);
    fb_hist_merge(&win, &b);
    a2 = a;
    win2 = win;
    fb_hist_subtract(&win2, &a2);
    fb_hist_clear(&a2);
    fb_hist_subtract_clear(&win, &a);
    assert_memory_equal(&win, &win2, sizeof win);
    assert_memory_equal(&a, &fresh, sizeof a);
    /* src's counts beyond dst's range (not merged into it) are emptied too */
    fb_hist_subtract_clear(&fresh, &b);
    fb_hist_init(&a2);
    assert_memory_equal(&b, &a2, sizeof b);
    assert_int_equal(fb_hist_count(&fresh), 0);
    fb_hist_init(&win);
    fb_hist_record(&win, 500000);
    fb_hist_init(&b);
    fb_hist_record(&b, 10);
    fb_hist_record(&b, 500000);
    fb_hist_record(&b, 90000000);
    fb_hist_subtract_clear(&win, &b); /* below and above win's one bucket */
    assert_memory_equal(&b, &a2, sizeof b);
    assert_memory_equal(&win, &a2, sizeof win);
}

/* An all-zero histogram (calloc) is initialized by fb_hist_clear. */
static void hist_clear_initializes_zero_bytes(void **state) {
    (void)state;
    static fb_hist zero, fresh;
    memset(&zero, 0, sizeof zero);
    fb_hist_init(&fresh);
    fb_hist_clear(&zero);
    assert_memory_equal(&zero, &fresh, sizeof zero);
}

/* clear and copy touch only the buckets in use, and leave what init and a struct copy leave. */
static void hist_clear_and_copy_equal_init_and_assignment(void **state) {
    (void)state;
    static fb_hist h, fresh, dst, expect;
    fb_hist_init(&h);
    fb_hist_init(&fresh);
    fb_hist_init(&dst);
    fb_hist_record(&h, -3); /* counted as 0: the lowest bucket */
    for (int64_t v = 1; v <= 2000; v++) fb_hist_record(&h, v * 997);
    fb_hist_record(&h, FB_HIST_VALUE_MAX + 5); /* clamped: the highest bucket */
    fb_hist_record(&dst, 123456);              /* dst's own buckets must go */
    fb_hist_copy(&dst, &h);
    expect = h;
    assert_memory_equal(&dst, &expect, sizeof dst);
    fb_hist_clear(&h);
    assert_memory_equal(&h, &fresh, sizeof h);
    fb_hist_record(&h, 42);
    fb_hist_copy(&dst, &h); /* the wide copy shrinks to one value */
    assert_memory_equal(&dst, &h, sizeof dst);
    fb_hist_clear(&h);
    fb_hist_copy(&dst, &h); /* an empty copy */
    assert_memory_equal(&dst, &fresh, sizeof dst);
}

/* One value in several histograms at once (three, two): each as fb_hist_record leaves it. */
static void hist_record_three_and_two_equal_records(void **state) {
    (void)state;
    static fb_hist a[3], b[3];
    const int64_t values[] = {
        -5, 0, 1, 255, 256, 1000, 123456789, FB_HIST_VALUE_MAX, FB_HIST_VALUE_MAX + 1, INT64_MAX};
    for (int i = 0; i < 3; i++) {
        fb_hist_init(&a[i]);
        fb_hist_init(&b[i]);
    }
    fb_hist_record(&a[2], 77); /* histograms that differ before */
    fb_hist_record(&b[2], 77);
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
        fb_hist_record_three(&a[0], &a[1], &a[2], values[k]);
        for (size_t i = 0; i < 3; i++) fb_hist_record(&b[i], values[k]);
    }
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
        fb_hist_record_two(&a[1], &a[2], values[k]);
        fb_hist_record(&b[1], values[k]);
        fb_hist_record(&b[2], values[k]);
    }
    for (int i = 0; i < 3; i++) assert_memory_equal(&a[i], &b[i], sizeof a[i]);
    assert_int_equal(fb_hist_count(&a[0]), 10);
    assert_int_equal(a[0].clamped, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hist_values_below_sub_buckets_are_exact),
        cmocka_unit_test(hist_relative_error_below_one_percent_at_every_bucket_edge),
        cmocka_unit_test(hist_relative_error_below_one_percent_for_random_values),
        cmocka_unit_test(hist_single_value_is_every_percentile),
        cmocka_unit_test(hist_percentile_reports_bucket_high_clamped_to_min_and_max),
        cmocka_unit_test(hist_percentiles_of_uniform_1_to_100000),
        cmocka_unit_test(hist_rank_is_the_ceiling_of_p_percent),
        cmocka_unit_test(hist_percentiles_of_lognormal_latencies_within_one_percent),
        cmocka_unit_test(hist_percentiles_in_one_scan_equal_the_definition),
        cmocka_unit_test(hist_empty_reports_zero),
        cmocka_unit_test(hist_negative_values_record_as_zero),
        cmocka_unit_test(hist_values_above_max_clamp_and_are_counted),
        cmocka_unit_test(hist_record_n_equals_n_records),
        cmocka_unit_test(hist_merge_equals_recording_both),
        cmocka_unit_test(hist_sum_is_exact_beyond_2_pow_64),
        cmocka_unit_test(hist_merge_with_empty_changes_nothing),
        cmocka_unit_test(hist_subtract_undoes_a_merge),
        cmocka_unit_test(hist_clear_and_copy_equal_init_and_assignment),
        cmocka_unit_test(hist_subtract_clear_equals_subtract_then_clear),
        cmocka_unit_test(hist_sliding_window_keeps_the_ticks_inside),
        cmocka_unit_test(hist_clear_initializes_zero_bytes),
        cmocka_unit_test(hist_record_three_and_two_equal_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
