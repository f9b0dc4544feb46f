/*
 * test_budget.c - retry budgets on their own: gRPC A6 token bucket, AWS quota.
 *
 * How fb_retry_next() charges a budget is tested in test_retry.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/budget.h"
#include "core/retry.h"

static fb_budget budget(fb_budget_config cfg) {
    fb_budget b;
    assert_int_equal(fb_budget_init(&b, &cfg), FB_OK);
    return b;
}

static void budget_none_always_allows(void **state) {
    (void)state;
    fb_budget b;
    assert_int_equal(fb_budget_init(&b, NULL), FB_OK);
    for (int i = 0; i < 100; i++) {
        fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0);
        assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    }
    assert_int_equal(fb_budget_stats_get(&b)->allowed, 100);
    assert_int_equal(fb_budget_stats_get(&b)->refused, 0);
}

static void budget_init_rejects_impossible_config(void **state) {
    (void)state;
    fb_budget b;
    fb_budget_config c = {.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 1001};
    assert_int_equal(fb_budget_init(&b, &c), FB_ERANGE);
    c = (fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .ratio = -0.5};
    assert_int_equal(fb_budget_init(&b, &c), FB_ERANGE);
    c = (fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .ratio = 0.0001};
    assert_int_equal(fb_budget_init(&b, &c), FB_ERANGE);
    c = (fb_budget_config){.kind = (fb_budget_kind)(FB_BUDGET_CONCURRENCY + 1)};
    assert_int_equal(fb_budget_init(&b, &c), FB_EINVAL);
    c = (fb_budget_config){.kind = FB_BUDGET_QUOTA};
    assert_int_equal(fb_budget_init(&b, &c), FB_OK);
    assert_int_equal(fb_budget_available(&b), 500);
    assert_int_equal(b.cfg.retry_cost, 5);
    assert_int_equal(b.cfg.timeout_cost, 10);
    assert_int_equal(b.cfg.no_retry_refund, 0); /* the zero rule: optional, so none */
}

static void budget_token_bucket_starts_full_and_retries_cost_nothing(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET});
    assert_true(fb_budget_tokens(&b) == 10.0);
    for (int i = 0; i < 50; i++) assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_true(fb_budget_tokens(&b) == 10.0);
}

static void budget_token_bucket_needs_strictly_more_than_half_grpc_a6(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 10});
    for (int i = 0; i < 4; i++) fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0);
    assert_true(fb_budget_tokens(&b) == 6.0);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0);
    assert_true(fb_budget_tokens(&b) == 5.0); /* exactly max / 2: refused */
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    fb_budget_on_success(&b, NULL);
    assert_true(fb_budget_tokens(&b) == 5.1);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_int_equal(fb_budget_stats_get(&b)->allowed, 2);
    assert_int_equal(fb_budget_stats_get(&b)->refused, 1);
}

static void budget_token_bucket_failure_floors_at_zero(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 3});
    for (int i = 0; i < 10; i++) fb_budget_on_failure(&b, FB_OUT_TIMEOUT, 0);
    assert_true(fb_budget_tokens(&b) == 0.0);
    fb_budget_on_success(&b, NULL);
    assert_true(fb_budget_tokens(&b) == 0.1);
}

static void budget_token_bucket_success_adds_ratio_up_to_max(void **state) {
    (void)state;
    fb_budget b =
        budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 10, .ratio = 0.1});
    for (int i = 0; i < 5; i++) fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0);
    /* Ten additions of 0.1 are exactly one token: counts are kept in thousandths. */
    for (int i = 0; i < 10; i++) fb_budget_on_success(&b, NULL);
    assert_true(fb_budget_tokens(&b) == 6.0);
    for (int i = 0; i < 1000; i++) fb_budget_on_success(&b, NULL);
    assert_true(fb_budget_tokens(&b) == 10.0);
}

static void budget_token_bucket_ignores_success_and_cancel_as_failures(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET});
    fb_budget_on_failure(&b, FB_OUT_SUCCESS, 0);
    fb_budget_on_failure(&b, FB_OUT_CANCELLED, 0);
    assert_true(fb_budget_tokens(&b) == 10.0);
}

static void budget_quota_withdraws_retry_cost_and_more_after_timeout(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA});
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_int_equal(fb_budget_available(&b), 495);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TIMEOUT, 0));
    assert_int_equal(fb_budget_available(&b), 485);
    assert_true(fb_budget_withdraw(&b, FB_OUT_RATE_LIMITED, 0));
    assert_int_equal(fb_budget_available(&b), 480);
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0); /* a quota charges retries, not failures */
    assert_int_equal(fb_budget_available(&b), 480);
}

static void budget_quota_refuses_when_not_enough_is_left(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 14});
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0)); /* 9 */
    assert_false(fb_budget_withdraw(&b, FB_OUT_TIMEOUT, 0));  /* needs 10 */
    assert_int_equal(fb_budget_available(&b), 9);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0)); /* 4 */
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_int_equal(fb_budget_available(&b), 4);
    assert_int_equal(fb_budget_stats_get(&b)->allowed, 2);
    assert_int_equal(fb_budget_stats_get(&b)->refused, 2);
}

static void budget_quota_refunds_no_retry_refund_without_retries(void **state) {
    (void)state;
    fb_budget b =
        budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 100, .no_retry_refund = 1});
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    fb_retry_state clean; /* one attempt, no retry: nothing withdrawn */
    fb_retry_begin(&clean, 0);
    fb_budget_on_success(&b, &clean);
    assert_int_equal(fb_budget_available(&b), 96);
    fb_budget_on_success(&b, NULL);
    assert_int_equal(fb_budget_available(&b), 97);
}

/* Item 6 of issue 10: a refund of 0 is no refund (it used to become 1 silently). */
static void budget_quota_refund_of_zero_refunds_nothing(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 100});
    assert_int_equal(b.cfg.no_retry_refund, 0);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    fb_budget_on_success(&b, NULL);
    fb_retry_state clean;
    fb_retry_begin(&clean, 0);
    fb_budget_on_success(&b, &clean);
    assert_int_equal(fb_budget_available(&b), 95);
    fb_retry_state retried = {.budget_withdrawn = 5}; /* what a retry took still comes back */
    fb_budget_on_success(&b, &retried);
    assert_int_equal(fb_budget_available(&b), 100);
}

static void budget_quota_never_refills_above_capacity(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 20});
    fb_budget_on_success(&b, NULL);
    assert_int_equal(fb_budget_available(&b), 20);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    fb_retry_state s = {.attempt = 3, .budget_withdrawn = 10};
    fb_budget_on_success(&b, &s);
    assert_int_equal(fb_budget_available(&b), 20);
}

static void budget_stats_get_counts_every_withdrawal_and_nothing_else(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 12});
    const fb_budget_stats *st = fb_budget_stats_get(&b);
    assert_int_equal(st->allowed, 0);
    assert_int_equal(st->refused, 0);
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0); /* failures and successes are not withdrawals */
    fb_budget_on_success(&b, NULL);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));  /* 7 left */
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));  /* 2 left */
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0)); /* needs 5 */
    assert_ptr_equal(fb_budget_stats_get(&b), st);             /* a view, not a copy */
    assert_int_equal(st->allowed, 2);
    assert_int_equal(st->refused, 1);
    assert_int_equal(fb_budget_init(&b, NULL), FB_OK);
    assert_int_equal(fb_budget_stats_get(&b)->allowed + fb_budget_stats_get(&b)->refused, 0);
}

static void budget_cost_is_what_a_quota_withdrawal_takes(void **state) {
    (void)state;
    fb_budget q = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA});
    assert_int_equal(fb_budget_cost(&q, FB_OUT_TRANSIENT), 5);
    assert_int_equal(fb_budget_cost(&q, FB_OUT_RATE_LIMITED), 5);
    assert_int_equal(fb_budget_cost(&q, FB_OUT_TIMEOUT), 10);
    assert_int_equal(fb_budget_available(&q), 500); /* asking costs nothing */
    q = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .retry_cost = 3, .timeout_cost = 7});
    assert_int_equal(fb_budget_cost(&q, FB_OUT_TRANSIENT), 3);
    assert_int_equal(fb_budget_cost(&q, FB_OUT_TIMEOUT), 7);
    fb_budget t = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET});
    assert_int_equal(fb_budget_cost(&t, FB_OUT_TIMEOUT), 0);
    fb_budget n = budget((fb_budget_config){.kind = FB_BUDGET_NONE});
    assert_int_equal(fb_budget_cost(&n, FB_OUT_TRANSIENT), 0);
}

static void budget_levels_start_at_the_rounded_maximum(void **state) {
    (void)state;
    fb_budget t = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 7.0004});
    assert_true(fb_budget_tokens(&t) == 7.0); /* 3 decimals, as gRPC */
    t = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 2.5});
    assert_true(fb_budget_tokens(&t) == 2.5);
    fb_budget q = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 42});
    assert_int_equal(fb_budget_available(&q), 42);
}

/* DEPOSIT: each request adds `deposit`, each retry takes `cost` while tokens >= threshold. */
static void budget_deposit_fills_per_request_and_drains_per_retry(void **state) {
    (void)state;
    fb_budget b = budget(
        (fb_budget_config){.kind = FB_BUDGET_DEPOSIT, .max_tokens = 2, .deposit = 0.5, .cost = 1});
    assert_true(fb_budget_tokens(&b) == 2.0); /* starts full */
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0)); /* 0 < threshold 1 */
    fb_budget_on_request(&b, 0);
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0)); /* 0.5 */
    fb_budget_on_request(&b, 0);
    assert_true(fb_budget_tokens(&b) == 1.0);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    /* successes and failures change nothing: only requests deposit */
    fb_budget_on_success(&b, NULL);
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 0);
    assert_true(fb_budget_tokens(&b) == 0.0);
    for (int i = 0; i < 10; i++) fb_budget_on_request(&b, 0);
    assert_true(fb_budget_tokens(&b) == 2.0); /* capped at max */
    assert_int_equal(fb_budget_stats_get(&b)->allowed, 3);
    assert_int_equal(fb_budget_stats_get(&b)->refused, 2);
    fb_budget c = budget((fb_budget_config){.kind = FB_BUDGET_DEPOSIT});
    assert_true(fb_budget_tokens(&c) == 10.0); /* defaults: max 10, deposit 0.1, cost 1 */
    fb_budget_on_request(&c, 0);
    assert_true(fb_budget_tokens(&c) == 10.0);
}

/* RETRY_BREAKER: retries stop while failures / requests over the window pass the ratio. */
static void budget_retry_breaker_gates_retries_on_the_failure_ratio(void **state) {
    (void)state;
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_RETRY_BREAKER,
                                            .window_us = 10 * FB_US_PER_S,
                                            .buckets = 10,
                                            .failure_ratio = 0.5,
                                            .min_requests = 4});
    /* requests at 0, 1, 2, 3 s; two failures at 1 s (in time order, as callers report) */
    fb_budget_on_request(&b, 0);
    fb_budget_on_request(&b, 1 * FB_US_PER_S);
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 1 * FB_US_PER_S);
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 1 * FB_US_PER_S);
    fb_budget_on_failure(&b, FB_OUT_CANCELLED, 1 * FB_US_PER_S); /* not a failure */
    fb_budget_on_request(&b, 2 * FB_US_PER_S);
    fb_budget_on_request(&b, 3 * FB_US_PER_S);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 3 * FB_US_PER_S)); /* 2 <= 0.5 * 4 */
    fb_budget_on_failure(&b, FB_OUT_TRANSIENT, 3 * FB_US_PER_S);
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 3 * FB_US_PER_S)); /* 3 > 2 */
    uint32_t req, fail;
    fb_budget_window(&b, 3 * FB_US_PER_S, &req, &fail);
    assert_int_equal(req, 4);
    assert_int_equal(fail, 3);
    /* at 11.5 s the slices of 0 s and 1 s (with both early failures) have expired... */
    fb_budget_window(&b, 11500 * FB_US_PER_MS, &req, &fail);
    assert_int_equal(req, 2);
    assert_int_equal(fail, 1);
    /* ... and below min_requests nothing is refused */
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 11500 * FB_US_PER_MS));
    /* a long quiet gap clears the whole window */
    fb_budget_on_request(&b, 100 * FB_US_PER_S);
    fb_budget_window(&b, 100 * FB_US_PER_S, &req, &fail);
    assert_int_equal(req, 1);
    assert_int_equal(fail, 0);
    fb_budget_config bad = {.kind = FB_BUDGET_RETRY_BREAKER, .window_us = 10, .buckets = 3};
    fb_budget x;
    assert_int_equal(fb_budget_init(&x, &bad), FB_ERANGE); /* 3 does not divide 10 us */
    bad.buckets = FB_BUDGET_BUCKETS_MAX + 1;
    assert_int_equal(fb_budget_init(&x, &bad), FB_ERANGE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(budget_deposit_fills_per_request_and_drains_per_retry),
        cmocka_unit_test(budget_retry_breaker_gates_retries_on_the_failure_ratio),
        cmocka_unit_test(budget_none_always_allows),
        cmocka_unit_test(budget_init_rejects_impossible_config),
        cmocka_unit_test(budget_token_bucket_starts_full_and_retries_cost_nothing),
        cmocka_unit_test(budget_token_bucket_needs_strictly_more_than_half_grpc_a6),
        cmocka_unit_test(budget_token_bucket_failure_floors_at_zero),
        cmocka_unit_test(budget_token_bucket_success_adds_ratio_up_to_max),
        cmocka_unit_test(budget_token_bucket_ignores_success_and_cancel_as_failures),
        cmocka_unit_test(budget_quota_withdraws_retry_cost_and_more_after_timeout),
        cmocka_unit_test(budget_quota_refuses_when_not_enough_is_left),
        cmocka_unit_test(budget_quota_refunds_no_retry_refund_without_retries),
        cmocka_unit_test(budget_quota_refund_of_zero_refunds_nothing),
        cmocka_unit_test(budget_quota_never_refills_above_capacity),
        cmocka_unit_test(budget_stats_get_counts_every_withdrawal_and_nothing_else),
        cmocka_unit_test(budget_cost_is_what_a_quota_withdrawal_takes),
        cmocka_unit_test(budget_levels_start_at_the_rounded_maximum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
