/* test_ratelimit.c - token buckets and the requests/tokens limiter, at exact times. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/ratelimit.h"
#include "tests/unit/helpers.h"

static void bucket_init_rejects_bad_sizes(void **state) {
    (void)state;
    fb_bucket b;
    assert_int_equal(fb_bucket_init(&b, 0, S, 0), FB_EINVAL);
    assert_int_equal(fb_bucket_init(&b, -1, S, 0), FB_EINVAL);
    assert_int_equal(fb_bucket_init(&b, 10, 0, 0), FB_EINVAL);
    assert_int_equal(fb_bucket_init(&b, 10, -S, 0), FB_EINVAL);
    /* capacity * period_us must fit in int64: 1.6e11 tokens/min does not. */
    assert_int_equal(fb_bucket_init(&b, INT64_C(160000000000), FB_US_PER_MIN, 0), FB_ERANGE);
    assert_int_equal(fb_bucket_init(&b, INT64_C(150000000000), FB_US_PER_MIN, 0), FB_OK);
}

static void bucket_starts_full_and_takes_whole_tokens(void **state) {
    (void)state;
    fb_bucket b;
    assert_int_equal(fb_bucket_init(&b, 10, S, 5 * S), FB_OK);
    assert_int_equal(fb_bucket_available(&b, 5 * S), 10);
    assert_true(fb_bucket_take(&b, 10, 5 * S));
    assert_false(fb_bucket_take(&b, 1, 5 * S));
    assert_int_equal(fb_bucket_available(&b, 5 * S), 0);
    /* 10 per second is one token per 100 ms. */
    assert_int_equal(fb_bucket_available(&b, 5 * S + 99 * MS), 0);
    assert_int_equal(fb_bucket_available(&b, 5 * S + 100 * MS), 1);
    assert_int_equal(fb_bucket_available(&b, 5 * S + 450 * MS), 4);
    /* Full again after one period, and never above capacity. */
    assert_int_equal(fb_bucket_available(&b, 6 * S), 10);
    assert_int_equal(fb_bucket_available(&b, 600 * S), 10);
}

static void bucket_take_more_than_available_takes_nothing(void **state) {
    (void)state;
    fb_bucket b;
    fb_bucket_init(&b, 10, S, 0);
    assert_true(fb_bucket_take(&b, 7, 0));
    assert_false(fb_bucket_take(&b, 4, 0));
    assert_int_equal(fb_bucket_available(&b, 0), 3);
    assert_false(fb_bucket_take(&b, 11, 10 * S)); /* more than capacity: never */
    assert_false(fb_bucket_take(&b, -1, 10 * S));
    assert_true(fb_bucket_take(&b, 0, 10 * S));
    assert_int_equal(fb_bucket_available(&b, 10 * S), 10);
}

static void bucket_wait_after_drain_matches_unit3216(void **state) {
    (void)state;
    /*
     * curl's tests/unit/unit3216.c: 10 tokens/s, drain 5, 3, then 1 ms later
     * 3 more, leaving -1 whole token, and assert the wait to the millisecond.
     * Here the wait is for one whole token at 10 tokens/s, to the microsecond.
     */
    fb_bucket b;
    const fb_time_us t0 = 1000 * S;
    fb_bucket_init(&b, 10, S, t0);
    assert_true(fb_bucket_take(&b, 5, t0));
    assert_int_equal(fb_bucket_available(&b, t0), 5);
    assert_true(fb_bucket_take(&b, 3, t0));
    assert_int_equal(fb_bucket_available(&b, t0), 2);
    fb_bucket_reserve(&b, 3, t0 + 1 * MS); /* 2.01 - 3 = -0.99 tokens */
    assert_int_equal(fb_bucket_available(&b, t0 + 1 * MS), -1);
    /* 1.99 tokens missing at 10 per second: 199 ms. */
    assert_int_equal(fb_bucket_wait(&b, 1, t0 + 1 * MS), 199 * MS);
    assert_int_equal(fb_bucket_wait(&b, 1, t0 + 2 * MS), 198 * MS);
    assert_int_equal(fb_bucket_wait(&b, 2, t0 + 2 * MS), 298 * MS);
    assert_int_equal(fb_bucket_available(&b, t0 + 1 * S + 2 * MS), 9);
    assert_int_equal(fb_bucket_available(&b, t0 + 2 * S + 2 * MS), 10); /* capped */
    assert_int_equal(fb_bucket_wait(&b, 10, t0 + 2 * S + 2 * MS), 0);
}

static void bucket_wait_rounds_up_to_the_first_microsecond_that_suffices(void **state) {
    (void)state;
    /* 3 tokens/s: a token takes 333333.33 us, so the wait is 333334 us. */
    fb_bucket b;
    fb_bucket_init(&b, 3, S, 0);
    assert_true(fb_bucket_take(&b, 3, 0));
    assert_int_equal(fb_bucket_wait(&b, 1, 0), 333334);
    assert_int_equal(fb_bucket_wait(&b, 1, 333333), 1);
    assert_false(fb_bucket_take(&b, 1, 333333)); /* rounding down would have lied */
    assert_int_equal(fb_bucket_wait(&b, 1, 333334), 0);
    assert_true(fb_bucket_take(&b, 1, 333334));
    /* Two tokens from 2 units (of 10^6 per token) above empty: (2 * 10^6 - 2) / 3 exactly. */
    assert_int_equal(fb_bucket_wait(&b, 2, 333334), 666666);
}

static void bucket_wait_for_more_than_capacity_is_forever(void **state) {
    (void)state;
    fb_bucket b;
    fb_bucket_init(&b, 10, S, 0);
    assert_int_equal(fb_bucket_wait(&b, 11, 0), FB_TIME_MAX);
    assert_int_equal(fb_bucket_wait(&b, 10, 0), 0);
    assert_int_equal(fb_bucket_wait(&b, 0, 0), 0);
}

static void bucket_time_going_backwards_counts_as_no_time(void **state) {
    (void)state;
    /* 10 tokens/s in a bucket of 100. */
    fb_bucket b;
    fb_bucket_init(&b, 100, 10 * S, 10 * S);
    assert_true(fb_bucket_take(&b, 100, 10 * S));
    assert_int_equal(fb_bucket_available(&b, 5 * S), 0);
    assert_int_equal(fb_bucket_wait(&b, 1, 5 * S), 100 * MS); /* measured from 10 s */
    assert_false(fb_bucket_take(&b, 1, 5 * S));
    /* Only the second after 10 s counts: the 5 s jump back is not earned twice. */
    assert_int_equal(fb_bucket_available(&b, 11 * S), 10);
}

static void bucket_refills_exactly_in_small_steps(void **state) {
    (void)state;
    /* 7 tokens per 3 s: not a whole number of microseconds per token. */
    fb_bucket a, b;
    fb_bucket_init(&a, 7, 3 * S, 0);
    fb_bucket_init(&b, 7, 3 * S, 0);
    assert_true(fb_bucket_take(&a, 7, 0));
    assert_true(fb_bucket_take(&b, 7, 0));
    for (fb_time_us t = 1; t <= 2 * S; t += 13) (void)fb_bucket_available(&a, t);
    (void)fb_bucket_available(&a, 2 * S);
    (void)fb_bucket_available(&b, 2 * S);
    assert_memory_equal(&a, &b, sizeof a);
    /* 2 s at 7/3 tokens per s: 4.67 tokens. */
    assert_int_equal(fb_bucket_available(&a, 2 * S), 4);
}

static void bucket_debt_is_repaid_over_several_periods(void **state) {
    (void)state;
    /* Reserving 30 from a full bucket of 10 leaves a 20-token debt: 2 s at 10/s. */
    fb_bucket b;
    fb_bucket_init(&b, 10, S, 0);
    fb_bucket_reserve(&b, 30, 0);
    assert_int_equal(fb_bucket_available(&b, 0), -20);
    assert_int_equal(fb_bucket_wait(&b, 1, 0), 2100 * MS);
    /* A gap longer than one period must not be cut to one period's refill. */
    assert_int_equal(fb_bucket_available(&b, 2500 * MS), 5);
    assert_int_equal(fb_bucket_available(&b, 3 * S), 10);
}

static void bucket_huge_gaps_and_debts_do_not_overflow(void **state) {
    (void)state;
    /* The largest bucket: capacity * period_us = 9e18 units. */
    fb_bucket b;
    fb_bucket_init(&b, INT64_C(150000000000), FB_US_PER_MIN, 0);
    fb_bucket_reserve(&b, INT64_C(150000000000), 0);
    fb_bucket_reserve(&b, INT64_C(150000000000), 0); /* -9e18: near INT64_MIN */
    assert_int_equal(fb_bucket_available(&b, 0), -INT64_C(150000000000));
    assert_int_equal(fb_bucket_wait(&b, 1, 0), FB_US_PER_MIN + 1);
    /* A week later: elapsed * capacity overflows int64, the bucket is full. */
    assert_int_equal(fb_bucket_available(&b, 7 * 24 * 60 * FB_US_PER_MIN), INT64_C(150000000000));
    /* From the earliest to the latest time there is. */
    fb_bucket_init(&b, 1000, S, INT64_MIN);
    assert_true(fb_bucket_take(&b, 1000, INT64_MIN));
    assert_int_equal(fb_bucket_available(&b, INT64_MAX), 1000);
}

static void bucket_reserve_saturates_instead_of_wrapping(void **state) {
    (void)state;
    fb_bucket b;
    fb_bucket_init(&b, 2, S, 0);
    fb_bucket_reserve(&b, INT64_MAX, 0);
    fb_bucket_reserve(&b, 2, 0);
    assert_true(fb_bucket_available(&b, 0) < 0);
    assert_int_equal(b.level, INT64_MIN);
    /* 2^63 units of debt at 2 units per us is more than FB_TIME_MAX us away. */
    assert_true(fb_bucket_wait(&b, 1, 0) > INT64_C(1) << 61);
    assert_false(fb_bucket_take(&b, 1, 0));
}

static void bucket_refund_gives_back_but_never_above_capacity(void **state) {
    (void)state;
    fb_bucket b;
    fb_bucket_init(&b, 10, S, 0);
    assert_true(fb_bucket_take(&b, 6, 0));
    fb_bucket_refund(&b, 2, 0);
    assert_int_equal(fb_bucket_available(&b, 0), 6);
    fb_bucket_refund(&b, 9, 0);
    assert_int_equal(fb_bucket_available(&b, 0), 10);
    /* A refund pays a debt back first. */
    fb_bucket_reserve(&b, 25, 0);
    fb_bucket_refund(&b, 15, 0);
    assert_int_equal(fb_bucket_available(&b, 0), 0);
    fb_bucket_refund(&b, INT64_MAX, 0);
    assert_int_equal(fb_bucket_available(&b, 0), 10);
    fb_bucket_refund(&b, -5, 0);
    assert_int_equal(fb_bucket_available(&b, 0), 10);
}

static void ratelimit_init_validates_config(void **state) {
    (void)state;
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = -1};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_EINVAL);
    c = (fb_ratelimit_config){.tokens_per_min = -1};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_EINVAL);
    c = (fb_ratelimit_config){.wait_us_max = -1};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_EINVAL);
    c = (fb_ratelimit_config){.mode = (fb_ratelimit_mode)7};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_EINVAL);
    c = (fb_ratelimit_config){.tokens_per_min = INT64_MAX};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_ERANGE);
    c = (fb_ratelimit_config){0};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_OK);
    assert_int_equal(rl.cfg.wait_us_max, 60 * S);
}

static void bucket_capacity_is_the_configured_size_and_zero_when_off(void **state) {
    (void)state;
    fb_bucket b;
    assert_int_equal(fb_bucket_init(&b, 10, S, 0), FB_OK);
    assert_int_equal(fb_bucket_capacity(&b), 10);
    assert_true(fb_bucket_take(&b, 10, 0));
    fb_bucket_reserve(&b, 5, 0); /* in debt: the capacity does not move */
    assert_int_equal(fb_bucket_capacity(&b), 10);
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = 60};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_OK);
    assert_int_equal(fb_bucket_capacity(&rl.requests), 60);
    assert_int_equal(fb_bucket_capacity(&rl.tokens), 0); /* no token limit */
}

static void ratelimit_stats_get_counts_every_decision(void **state) {
    (void)state;
    /* 2 requests per minute, waits up to 30 s: one every 30 s once the burst is spent. */
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = 2, .wait_us_max = 30 * S};
    assert_int_equal(fb_ratelimit_init(&rl, &c, 0), FB_OK);
    const fb_ratelimit_stats *st = fb_ratelimit_stats_get(&rl);
    assert_int_equal(st->admitted + st->delayed + st->rejected + st->released, 0);
    assert_int_equal(fb_ratelimit_acquire(&rl, 0, 0).wait_us, 0);
    assert_int_equal(fb_ratelimit_acquire(&rl, 0, 0).wait_us, 0);
    assert_int_equal(fb_ratelimit_acquire(&rl, 0, 0).wait_us, 30 * S); /* admitted, delayed */
    assert_false(fb_ratelimit_acquire(&rl, 0, 0).admitted);            /* would wait 60 s */
    fb_ratelimit_release(&rl, 0, 0);
    assert_ptr_equal(fb_ratelimit_stats_get(&rl), st);
    assert_int_equal(st->admitted, 3);
    assert_int_equal(st->delayed, 1);
    assert_int_equal(st->rejected, 1);
    assert_int_equal(st->released, 1);
}

static void ratelimit_without_limits_admits_everything_now(void **state) {
    (void)state;
    fb_ratelimit rl;
    assert_int_equal(fb_ratelimit_init(&rl, NULL, 0), FB_OK);
    for (int i = 0; i < 1000; i++) {
        fb_ratelimit_decision d = fb_ratelimit_acquire(&rl, 1000000, 0);
        assert_true(d.admitted);
        assert_int_equal(d.wait_us, 0);
    }
    assert_int_equal(fb_ratelimit_stats_get(&rl)->admitted, 1000);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->delayed, 0);
}

static void ratelimit_wait_mode_reserves_and_returns_growing_waits(void **state) {
    (void)state;
    /* 60 requests per minute: one per second once the burst is spent. */
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = 60};
    fb_ratelimit_init(&rl, &c, 0);
    for (int i = 0; i < 60; i++) {
        fb_ratelimit_decision d = fb_ratelimit_acquire(&rl, 0, 0);
        assert_true(d.admitted);
        assert_int_equal(d.wait_us, 0);
    }
    fb_ratelimit_decision d = fb_ratelimit_acquire(&rl, 0, 0);
    assert_true(d.admitted);
    assert_int_equal(d.wait_us, 1 * S);
    d = fb_ratelimit_acquire(&rl, 0, 0);
    assert_int_equal(d.wait_us, 2 * S);
    /* 250 ms later the queue ahead has shrunk by a quarter of a request. */
    d = fb_ratelimit_acquire(&rl, 0, 250 * MS);
    assert_int_equal(d.wait_us, 2750 * MS);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->admitted, 63);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->delayed, 3);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->rejected, 0);
}

static void ratelimit_wait_mode_rejects_beyond_wait_max_and_takes_nothing(void **state) {
    (void)state;
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = 60, .wait_us_max = 1500 * MS};
    fb_ratelimit_init(&rl, &c, 0);
    for (int i = 0; i < 60; i++) assert_true(fb_ratelimit_acquire(&rl, 0, 0).admitted);
    assert_int_equal(fb_ratelimit_acquire(&rl, 0, 0).wait_us, 1 * S);
    /* Next would wait 2 s > 1.5 s: rejected, and the rejection reserves nothing. */
    assert_false(fb_ratelimit_acquire(&rl, 0, 0).admitted);
    assert_false(fb_ratelimit_acquire(&rl, 0, 0).admitted);
    assert_int_equal(fb_bucket_wait(&rl.requests, 1, 0), 2 * S);
    /* A wait of exactly wait_us_max is admitted. */
    fb_ratelimit_decision d = fb_ratelimit_acquire(&rl, 0, 500 * MS);
    assert_true(d.admitted);
    assert_int_equal(d.wait_us, 1500 * MS);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->admitted, 62);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->delayed, 2);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->rejected, 2);
}

static void ratelimit_wait_is_the_larger_of_the_two_buckets(void **state) {
    (void)state;
    /* 10 requests/s and 100 tokens/s. */
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = 600, .tokens_per_min = 6000};
    fb_ratelimit_init(&rl, &c, 0);
    fb_ratelimit_decision d = fb_ratelimit_acquire(&rl, 6000, 0);
    assert_true(d.admitted);
    assert_int_equal(d.wait_us, 0);
    /* Tokens are the bottleneck: 50 tokens at 100/s. */
    d = fb_ratelimit_acquire(&rl, 50, 0);
    assert_int_equal(d.wait_us, 500 * MS);
    /* Requests are the bottleneck: drain the 598 left in the burst with no tokens. */
    for (int i = 0; i < 598; i++) (void)fb_ratelimit_acquire(&rl, 0, 0);
    d = fb_ratelimit_acquire(&rl, 0, 0); /* request 601: 100 ms */
    assert_int_equal(d.wait_us, 100 * MS);
    assert_int_equal(fb_bucket_available(&rl.requests, 0), -1);
    assert_int_equal(fb_bucket_available(&rl.tokens, 0), -50);
}

static void ratelimit_rejects_requests_larger_than_the_token_capacity(void **state) {
    (void)state;
    static const fb_ratelimit_mode modes[] = {FB_RATELIMIT_WAIT, FB_RATELIMIT_REJECT};
    for (size_t i = 0; i < 2; i++) {
        fb_ratelimit rl;
        fb_ratelimit_config c = {.requests_per_min = 60, .tokens_per_min = 1000, .mode = modes[i]};
        fb_ratelimit_init(&rl, &c, 0);
        assert_false(fb_ratelimit_acquire(&rl, 1001, 0).admitted);
        assert_int_equal(fb_bucket_available(&rl.requests, 0), 60);
        assert_int_equal(fb_bucket_available(&rl.tokens, 0), 1000);
        assert_true(fb_ratelimit_acquire(&rl, 1000, 0).admitted);
        assert_int_equal(fb_ratelimit_stats_get(&rl)->rejected, 1);
        assert_int_equal(fb_ratelimit_stats_get(&rl)->admitted, 1);
    }
}

static void ratelimit_reject_mode_admits_only_when_both_are_available_now(void **state) {
    (void)state;
    fb_ratelimit rl;
    fb_ratelimit_config c = {
        .requests_per_min = 2, .tokens_per_min = 600, .mode = FB_RATELIMIT_REJECT};
    fb_ratelimit_init(&rl, &c, 0);
    assert_true(fb_ratelimit_acquire(&rl, 500, 0).admitted);
    /* Requests are available but tokens are not: nothing is taken from either. */
    assert_false(fb_ratelimit_acquire(&rl, 200, 0).admitted);
    assert_int_equal(fb_bucket_available(&rl.requests, 0), 1);
    assert_int_equal(fb_bucket_available(&rl.tokens, 0), 100);
    fb_ratelimit_decision d = fb_ratelimit_acquire(&rl, 100, 0);
    assert_true(d.admitted);
    assert_int_equal(d.wait_us, 0);
    /* Tokens are available but requests are not. */
    assert_false(fb_ratelimit_acquire(&rl, 0, 0).admitted);
    /* A request refills every 30 s, to the microsecond. */
    assert_false(fb_ratelimit_acquire(&rl, 0, 30 * S - 1).admitted);
    assert_true(fb_ratelimit_acquire(&rl, 0, 30 * S).admitted);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->admitted, 3);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->rejected, 3);
    assert_int_equal(fb_ratelimit_stats_get(&rl)->delayed, 0);
}

static void ratelimit_negative_tokens_count_as_zero(void **state) {
    (void)state;
    fb_ratelimit rl;
    fb_ratelimit_config c = {.tokens_per_min = 100, .mode = FB_RATELIMIT_REJECT};
    fb_ratelimit_init(&rl, &c, 0);
    assert_true(fb_ratelimit_acquire(&rl, -50, 0).admitted);
    assert_int_equal(fb_bucket_available(&rl.tokens, 0), 100);
}

static void ratelimit_time_going_backwards_counts_as_no_time(void **state) {
    (void)state;
    fb_ratelimit rl;
    fb_ratelimit_config c = {.requests_per_min = 60};
    fb_ratelimit_init(&rl, &c, 100 * S);
    for (int i = 0; i < 60; i++) (void)fb_ratelimit_acquire(&rl, 0, 100 * S);
    /* A caller with a stale clock waits as if it were 100 s, not less. */
    assert_int_equal(fb_ratelimit_acquire(&rl, 0, 40 * S).wait_us, 1 * S);
    assert_int_equal(fb_ratelimit_acquire(&rl, 0, 101 * S).wait_us, 1 * S);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bucket_init_rejects_bad_sizes),
        cmocka_unit_test(bucket_starts_full_and_takes_whole_tokens),
        cmocka_unit_test(bucket_take_more_than_available_takes_nothing),
        cmocka_unit_test(bucket_wait_after_drain_matches_unit3216),
        cmocka_unit_test(bucket_wait_rounds_up_to_the_first_microsecond_that_suffices),
        cmocka_unit_test(bucket_wait_for_more_than_capacity_is_forever),
        cmocka_unit_test(bucket_time_going_backwards_counts_as_no_time),
        cmocka_unit_test(bucket_refills_exactly_in_small_steps),
        cmocka_unit_test(bucket_debt_is_repaid_over_several_periods),
        cmocka_unit_test(bucket_huge_gaps_and_debts_do_not_overflow),
        cmocka_unit_test(bucket_reserve_saturates_instead_of_wrapping),
        cmocka_unit_test(bucket_refund_gives_back_but_never_above_capacity),
        cmocka_unit_test(ratelimit_init_validates_config),
        cmocka_unit_test(bucket_capacity_is_the_configured_size_and_zero_when_off),
        cmocka_unit_test(ratelimit_stats_get_counts_every_decision),
        cmocka_unit_test(ratelimit_without_limits_admits_everything_now),
        cmocka_unit_test(ratelimit_wait_mode_reserves_and_returns_growing_waits),
        cmocka_unit_test(ratelimit_wait_mode_rejects_beyond_wait_max_and_takes_nothing),
        cmocka_unit_test(ratelimit_wait_is_the_larger_of_the_two_buckets),
        cmocka_unit_test(ratelimit_rejects_requests_larger_than_the_token_capacity),
        cmocka_unit_test(ratelimit_reject_mode_admits_only_when_both_are_available_now),
        cmocka_unit_test(ratelimit_negative_tokens_count_as_zero),
        cmocka_unit_test(ratelimit_time_going_backwards_counts_as_no_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
