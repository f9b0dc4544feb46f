/*
 * test_conclimit.c - the adaptive concurrency limit (core/conclimit.c) at
 * exact values: Netflix concurrency-limits 78a74b98's AIMDLimit and
 * Gradient2Limit step by step (the integer truncations, the clamps, the
 * warm-up of the long rtt average, its decay, the app-limited rule), and
 * SimpleLimiter's admission (inflight < limit, the sample's inflight
 * including the call, onIgnore without a sample). The expected doubles were
 * computed with Python floats (IEEE binary64, as Java's doubles), the
 * library's formulas transcribed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/conclimit.h"
#include "tests/unit/helpers.h"

static fb_conclimit make(fb_conclimit_config cfg) {
    fb_conclimit cl;
    assert_int_equal(fb_conclimit_init(&cl, &cfg), FB_OK);
    return cl;
}

/* Each sample's limit in turn, as "a b c". */
static void expect_limits(fb_conclimit *cl, const fb_time_us *rtt, const uint32_t *inflight,
                          const bool *dropped, size_t n, const uint32_t *want) {
    for (size_t i = 0; i < n; i++) {
        fb_conclimit_sample(cl, rtt[i], inflight[i], dropped ? dropped[i] : false);
        assert_int_equal(fb_conclimit_limit(cl), want[i]);
    }
}

/* ---- defaults and ranges ---- */

static void conclimit_zeroed_config_is_a_fixed_limit_of_20(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){0});
    assert_int_equal(fb_conclimit_limit(&cl), 20);
    fb_conclimit_sample(&cl, 10 * S, 1, true);
    fb_conclimit_sample(&cl, 1 * MS, 20, false);
    assert_int_equal(fb_conclimit_limit(&cl), 20); /* FixedLimit._update returns getLimit() */
}

static void conclimit_init_rejects_out_of_range(void **state) {
    (void)state;
    fb_conclimit cl;
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.backoff_ratio = 0.4}),
                     FB_ERANGE);
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.backoff_ratio = 1.0}),
                     FB_ERANGE);
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.rtt_tolerance = 0.99}),
                     FB_ERANGE);
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.smoothing = 1.5}), FB_ERANGE);
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.min_limit = 300}), FB_ERANGE);
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.algo = 7}), FB_EINVAL);
    assert_int_equal(fb_conclimit_init(&cl, &(fb_conclimit_config){.backoff_ratio = 0.5}), FB_OK);
}

/* ---- AIMD ---- */

/* +1 while half the limit is in use, nothing when less is, clamped to max. */
static void aimd_grows_by_one_when_half_the_limit_is_in_flight(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){.algo = FB_CONCLIMIT_AIMD, .max_limit = 22});
    static const fb_time_us rtt[] = {100 * MS, 100 * MS, 100 * MS, 100 * MS, 100 * MS};
    /* 10 * 2 >= 20: 21; 10 * 2 < 21: stays; 11 * 2 >= 21: 22; then the max holds it */
    static const uint32_t inflight[] = {10, 10, 11, 22, 22};
    static const uint32_t want[] = {21, 21, 22, 22, 22};
    expect_limits(&cl, rtt, inflight, NULL, 5, want);
}

/* (int)(limit * 0.9): 21 -> 18.900000000000002 -> 18; 18 -> 16.2 -> 16; 10 -> 9.0 -> 9. */
static void aimd_backs_off_by_the_ratio_truncated(void **state) {
    (void)state;
    fb_conclimit cl =
        make((fb_conclimit_config){.algo = FB_CONCLIMIT_AIMD, .initial_limit = 21, .min_limit = 9});
    static const fb_time_us rtt[] = {1 * MS, 1 * MS, 1 * MS, 1 * MS, 1 * MS, 1 * MS, 1 * MS};
    static const uint32_t inflight[] = {1, 1, 1, 1, 1, 1, 1};
    static const bool drop[] = {true, true, true, true, true, true, true};
    /* 21, 18, 16 (16.2), 14 (14.4), 12 (12.6), 10 (10.8), 9 (9.0): then the min holds it */
    static const uint32_t want[] = {18, 16, 14, 12, 10, 9, 9};
    expect_limits(&cl, rtt, inflight, drop, 7, want);
}

/* A sample slower than the timeout (5 s by default) is a drop; exactly 5 s is not. */
static void aimd_counts_a_sample_over_the_timeout_as_a_drop(void **state) {
    (void)state;
    fb_conclimit cl =
        make((fb_conclimit_config){.algo = FB_CONCLIMIT_AIMD, .initial_limit = 40, .min_limit = 1});
    static const fb_time_us rtt[] = {5 * S, 5 * S + 1, 5 * S + 1};
    static const uint32_t inflight[] = {20, 20, 1};
    /* 40 -> 41 (20 * 2 >= 40); 41 * 0.9 = 36.9 -> 36; 36 * 0.9 = 32.4 -> 32 */
    static const uint32_t want[] = {41, 36, 32};
    expect_limits(&cl, rtt, inflight, NULL, 3, want);
}

/* The defaults' minimum is 20: a drop at 20 stays at 20 (and a drop at 21 too). */
static void aimd_default_minimum_is_the_initial_limit(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){.algo = FB_CONCLIMIT_AIMD});
    fb_conclimit_sample(&cl, 1 * MS, 10, false);
    assert_int_equal(fb_conclimit_limit(&cl), 21);
    fb_conclimit_sample(&cl, 1 * MS, 10, true);
    assert_int_equal(fb_conclimit_limit(&cl), 20);
    fb_conclimit_sample(&cl, 1 * MS, 10, true);
    assert_int_equal(fb_conclimit_limit(&cl), 20);
    assert_int_equal(fb_conclimit_stats_get(&cl)->limit_min, 20);
    assert_int_equal(fb_conclimit_stats_get(&cl)->limit_max, 21);
}

/* ---- Gradient2 ---- */

/*
 * The first samples warm the long average up as a plain mean: 100, 150,
 * 200 ms. The gradient stays 1 (1.5 x long / short >= 1), so each sample
 * adds queue_size x smoothing = 0.8: 20.8, 21.6, 22.400000000000002.
 */
static void gradient2_warms_up_with_a_plain_average(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){.algo = FB_CONCLIMIT_GRADIENT2});
    static const fb_time_us rtt[] = {100 * MS, 200 * MS, 300 * MS};
    static const double want_long[] = {100000.0, 150000.0, 200000.0};
    static const double want_est[] = {20.8, 21.6, 22.400000000000002};
    static const uint32_t want[] = {20, 21, 22};
    for (int i = 0; i < 3; i++) {
        fb_conclimit_sample(&cl, rtt[i], 20, false);
        assert_true(fb_conclimit_long_rtt(&cl) == want_long[i]);
        assert_true(fb_conclimit_estimate(&cl) == want_est[i]);
        assert_int_equal(fb_conclimit_limit(&cl), want[i]);
    }
}

/*
 * After ten samples of 100 ms the average is exponential with factor
 * 2 / 601: a sample of 160 ms moves it to 100199.66722129783 and, the
 * gradient now 1.5 x 100199.67 / 160000 = 0.939, the estimate from
 * 28.000000000000007 to 28.460482529118142 (limit 28).
 */
static void gradient2_long_average_is_exponential_after_warm_up(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){.algo = FB_CONCLIMIT_GRADIENT2});
    for (int i = 0; i < 10; i++) fb_conclimit_sample(&cl, 100 * MS, 20, false);
    assert_true(fb_conclimit_long_rtt(&cl) == 100000.0);
    assert_true(fb_conclimit_estimate(&cl) == 28.000000000000007);
    assert_int_equal(fb_conclimit_limit(&cl), 28);
    fb_conclimit_sample(&cl, 160 * MS, 20, false);
    assert_true(fb_conclimit_long_rtt(&cl) == 100199.66722129783);
    assert_true(fb_conclimit_estimate(&cl) == 28.460482529118142);
    assert_int_equal(fb_conclimit_limit(&cl), 28);
}

/*
 * Ten samples of 1 s, then one of 100 ms: the long average (997005 us) is
 * over twice the sample, so it decays by 0.95 to 947154.7420965058; the
 * step itself used the value before the decay (gradient 1: 48.8).
 */
static void gradient2_decays_a_long_average_twice_the_sample(void **state) {
    (void)state;
    fb_conclimit cl = make(
        (fb_conclimit_config){.algo = FB_CONCLIMIT_GRADIENT2, .initial_limit = 40, .min_limit = 1});
    for (int i = 0; i < 10; i++) fb_conclimit_sample(&cl, 1 * S, 40, false);
    assert_true(fb_conclimit_estimate(&cl) == 48.000000000000014);
    fb_conclimit_sample(&cl, 100 * MS, 40, false);
    assert_true(fb_conclimit_long_rtt(&cl) == 947154.7420965058);
    assert_true(fb_conclimit_estimate(&cl) == 48.80000000000002);
    assert_int_equal(fb_conclimit_limit(&cl), 48);
}

/* Fewer in flight than half the estimate: the limit does not move (19 < 20), 20 moves it. */
static void gradient2_does_not_move_when_app_limited(void **state) {
    (void)state;
    fb_conclimit cl = make(
        (fb_conclimit_config){.algo = FB_CONCLIMIT_GRADIENT2, .initial_limit = 40, .min_limit = 1});
    fb_conclimit_sample(&cl, 100 * MS, 19, false);
    assert_true(fb_conclimit_estimate(&cl) == 40.0);
    assert_true(fb_conclimit_long_rtt(&cl) == 100000.0); /* the average still took the sample */
    fb_conclimit_sample(&cl, 100 * MS, 20, false);
    assert_true(fb_conclimit_estimate(&cl) == 40.8);
}

/*
 * Latency that quadruples after warm-up: 10 x 100 ms (46 grows to 54),
 * then 400 ms twice, with 50 in flight. The gradient is clamped at 0.5
 * (1.5 x ~101000 / 400000 = 0.38), so each step is est x 0.9 + 0.8:
 * 49.4, then 45.26.
 */
static void gradient2_gradient_is_clamped_at_one_half(void **state) {
    (void)state;
    fb_conclimit cl = make(
        (fb_conclimit_config){.algo = FB_CONCLIMIT_GRADIENT2, .initial_limit = 46, .min_limit = 1});
    for (int i = 0; i < 10; i++) fb_conclimit_sample(&cl, 100 * MS, 50, false);
    double e = fb_conclimit_estimate(&cl); /* 54 after 10 steps of +0.8 */
    assert_true(e > 53.99 && e < 54.01);
    fb_conclimit_sample(&cl, 400 * MS, 50, false);
    assert_true(fb_conclimit_estimate(&cl) == e * (1 - 0.2) + (e * 0.5 + 4) * 0.2);
    assert_int_equal(fb_conclimit_limit(&cl), 49); /* 54 x 0.9 + 0.8 = 49.4 */
    fb_conclimit_sample(&cl, 400 * MS, 50, true);  /* didDrop plays no part */
    assert_int_equal(fb_conclimit_limit(&cl), 45); /* 49.4 x 0.9 + 0.8 = 45.26 */
}

/* ---- the limiter ---- */

/* inflight < limit admits; the permit's inflight counts the call itself; a rejection holds nothing.
 */
static void limiter_admits_below_the_limit_and_rejects_at_it(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){.initial_limit = 2});
    fb_conclimit_permit a, b, c;
    assert_true(fb_conclimit_acquire(&cl, 0, &a));
    assert_int_equal(a.inflight, 1);
    assert_true(fb_conclimit_acquire(&cl, 5 * MS, &b));
    assert_int_equal(b.inflight, 2);
    assert_false(fb_conclimit_acquire(&cl, 6 * MS, &c));
    assert_false(c.held);
    assert_int_equal(fb_conclimit_inflight(&cl), 2);
    fb_conclimit_release(&cl, &a, FB_CONCLIMIT_IGNORED, 10 * MS);
    fb_conclimit_release(&cl, &a, FB_CONCLIMIT_SUCCESS, 10 * MS); /* twice: nothing */
    assert_int_equal(fb_conclimit_inflight(&cl), 1);
    assert_true(fb_conclimit_acquire(&cl, 11 * MS, &c));
    const fb_conclimit_stats *st = fb_conclimit_stats_get(&cl);
    assert_int_equal(st->acquired, 3);
    assert_int_equal(st->rejected, 1);
    assert_int_equal(st->ignored, 1);
    assert_int_equal(st->successes, 0);
}

/*
 * The sample is (now - acquire, inflight at acquire, dropped): an AIMD
 * limit of 4 with two calls in flight grows on the first's success
 * (2 x 2 >= 4), a dropped one cuts it, an ignored one leaves it.
 */
static void limiter_samples_on_success_and_drop_not_on_ignore(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){
        .algo = FB_CONCLIMIT_AIMD, .initial_limit = 4, .min_limit = 1, .timeout_us = 1 * S});
    fb_conclimit_permit a, b, c;
    assert_true(fb_conclimit_acquire(&cl, 0, &a));
    assert_true(fb_conclimit_acquire(&cl, 0, &b));
    fb_conclimit_release(&cl, &b, FB_CONCLIMIT_SUCCESS, 200 * MS); /* inflight 2: 2 x 2 >= 4 */
    assert_int_equal(fb_conclimit_limit(&cl), 5);
    fb_conclimit_release(&cl, &a, FB_CONCLIMIT_IGNORED, 300 * MS);
    assert_int_equal(fb_conclimit_limit(&cl), 5);
    assert_true(fb_conclimit_acquire(&cl, 1 * S, &c));
    fb_conclimit_release(&cl, &c, FB_CONCLIMIT_SUCCESS, 2 * S + 1); /* rtt 1 s + 1 us: a drop */
    assert_int_equal(fb_conclimit_limit(&cl), 4);                   /* (int)(5 x 0.9) */
    assert_int_equal(fb_conclimit_stats_get(&cl)->drops, 0);        /* reported as a success */
}

/* A limit that fell below the calls in flight admits nothing until enough have ended. */
static void limiter_below_inflight_admits_nothing(void **state) {
    (void)state;
    fb_conclimit cl =
        make((fb_conclimit_config){.algo = FB_CONCLIMIT_AIMD, .initial_limit = 3, .min_limit = 1});
    fb_conclimit_permit p[3], q;
    for (int i = 0; i < 3; i++) assert_true(fb_conclimit_acquire(&cl, 0, &p[i]));
    fb_conclimit_release(&cl, &p[0], FB_CONCLIMIT_DROPPED, 10 * MS); /* 3 x 0.9 = 2.7 -> 2 */
    assert_int_equal(fb_conclimit_limit(&cl), 2);
    assert_false(fb_conclimit_acquire(&cl, 10 * MS, &q));            /* 2 in flight, limit 2 */
    fb_conclimit_release(&cl, &p[1], FB_CONCLIMIT_DROPPED, 20 * MS); /* 2 x 0.9 -> 1 */
    assert_false(fb_conclimit_acquire(&cl, 20 * MS, &q));            /* 1 in flight, limit 1 */
    fb_conclimit_release(&cl, &p[2], FB_CONCLIMIT_IGNORED, 30 * MS);
    assert_true(fb_conclimit_acquire(&cl, 30 * MS, &q));
}

/* The gRPC interceptor's mapping: OK success, UNAVAILABLE dropped, the rest ignored. */
static void result_of_follows_the_grpc_interceptor(void **state) {
    (void)state;
    fb_conclimit cl = make((fb_conclimit_config){0});
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_SUCCESS), FB_CONCLIMIT_SUCCESS);
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_TRANSIENT), FB_CONCLIMIT_DROPPED);
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_RATE_LIMITED), FB_CONCLIMIT_DROPPED);
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_TIMEOUT), FB_CONCLIMIT_IGNORED);
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_PERMANENT), FB_CONCLIMIT_IGNORED);
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_CONTEXT_LENGTH), FB_CONCLIMIT_IGNORED);
    assert_int_equal(fb_conclimit_result_of(&cl, FB_OUT_CANCELLED), FB_CONCLIMIT_IGNORED);
    fb_conclimit d = make((fb_conclimit_config){.timeout_drops = FB_ON});
    assert_int_equal(fb_conclimit_result_of(&d, FB_OUT_TIMEOUT), FB_CONCLIMIT_DROPPED);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conclimit_zeroed_config_is_a_fixed_limit_of_20),
        cmocka_unit_test(conclimit_init_rejects_out_of_range),
        cmocka_unit_test(aimd_grows_by_one_when_half_the_limit_is_in_flight),
        cmocka_unit_test(aimd_backs_off_by_the_ratio_truncated),
        cmocka_unit_test(aimd_counts_a_sample_over_the_timeout_as_a_drop),
        cmocka_unit_test(aimd_default_minimum_is_the_initial_limit),
        cmocka_unit_test(gradient2_warms_up_with_a_plain_average),
        cmocka_unit_test(gradient2_long_average_is_exponential_after_warm_up),
        cmocka_unit_test(gradient2_decays_a_long_average_twice_the_sample),
        cmocka_unit_test(gradient2_does_not_move_when_app_limited),
        cmocka_unit_test(gradient2_gradient_is_clamped_at_one_half),
        cmocka_unit_test(limiter_admits_below_the_limit_and_rejects_at_it),
        cmocka_unit_test(limiter_samples_on_success_and_drop_not_on_ignore),
        cmocka_unit_test(limiter_below_inflight_admits_nothing),
        cmocka_unit_test(result_of_follows_the_grpc_interceptor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
