/*
 * test_hedge.c - hedged requests (core/hedge.c) at explicit times: when each
 * attempt is due (gRPC A6's example: maxAttempts 4, hedgingDelay 500 ms),
 * what a success, a handled and an unhandled failure decide (Polly v8,
 * gRPC), a refused hedge, Polly's special delays, and the percentile delay
 * over a window of answers (nearest rank).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/hedge.h"
#include "tests/unit/helpers.h"

static fb_hedge_policy policy(fb_hedge_config cfg) {
    fb_hedge_policy h;
    assert_int_equal(fb_hedge_policy_init(&h, &cfg), FB_OK);
    return h;
}

static void hedge_defaults_are_pollys(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){0});
    const fb_hedge_config *c = fb_hedge_policy_config(&h);
    assert_int_equal(c->max_attempts, 2); /* MaxHedgedAttempts 1, plus the first */
    assert_int_equal(c->delay_us, 2 * S);
    assert_int_equal(c->target, FB_HEDGE_SAME);
    fb_hedge_policy bad;
    assert_int_equal(fb_hedge_policy_init(&bad, &(fb_hedge_config){.max_attempts = 1}), FB_ERANGE);
    assert_int_equal(fb_hedge_policy_init(&bad, &(fb_hedge_config){.max_attempts = 11}), FB_ERANGE);
    assert_int_equal(fb_hedge_policy_init(&bad, &(fb_hedge_config){.delay_us = -5}), FB_ERANGE);
    assert_int_equal(fb_hedge_policy_init(&bad, &(fb_hedge_config){.percentile = 101}), FB_ERANGE);
    assert_int_equal(fb_hedge_policy_init(&bad, &(fb_hedge_config){.target = 2}), FB_EINVAL);
}

/* gRPC A6: "after 1ms ... one outstanding RPC, after 501ms two, after 1001ms three, after 1501ms
 * four". */
static void hedge_sends_one_more_after_each_delay(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 4, .delay_us = 500 * MS});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, 500 * MS, 0);
    assert_false(fb_hedge_due(&h, &g, 500 * MS - 1));
    assert_true(fb_hedge_due(&h, &g, 500 * MS));
    fb_hedge_sent(&h, &g, 500 * MS, 500 * MS);
    assert_int_equal(g.next_at_us, 1000 * MS);
    fb_hedge_sent(&h, &g, 500 * MS, 1000 * MS);
    fb_hedge_sent(&h, &g, 500 * MS, 1500 * MS);
    assert_int_equal(g.launched, 4);
    assert_int_equal(g.outstanding, 4);
    assert_int_equal(g.next_at_us, FB_TIME_MAX);
    assert_false(fb_hedge_due(&h, &g, 10 * S));
}

/* The first success wins, whichever attempt it is; a loser answering later decides nothing. */
static void hedge_first_success_wins(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 3, .delay_us = 100 * MS});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, 100 * MS, 0);
    fb_hedge_sent(&h, &g, 100 * MS, 100 * MS);
    assert_int_equal(fb_hedge_result(&h, &g, true, false, 150 * MS), FB_HEDGE_WON);
    assert_true(g.done);
    assert_false(fb_hedge_due(&h, &g, 200 * MS)); /* the third is never sent */
    assert_int_equal(fb_hedge_result(&h, &g, true, false, 180 * MS), FB_HEDGE_WAIT);
}

/*
 * A handled failure sends the next attempt at once ("shortcutting its
 * hedging delay"), and the one after it is due a delay after that.
 */
static void hedge_handled_failure_sends_the_next_at_once(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 3, .delay_us = 1 * S});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, 1 * S, 0);
    assert_int_equal(fb_hedge_result(&h, &g, false, true, 200 * MS), FB_HEDGE_SEND_NOW);
    assert_true(fb_hedge_due(&h, &g, 200 * MS));
    fb_hedge_sent(&h, &g, 1 * S, 200 * MS);
    assert_int_equal(g.next_at_us, 1200 * MS);
    assert_int_equal(g.outstanding, 1);
}

/* An unhandled failure (gRPC: a fatal status) ends the call with it, the others still out. */
static void hedge_unhandled_failure_ends_the_call(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 3, .delay_us = 1 * S});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, 1 * S, 0);
    fb_hedge_sent(&h, &g, 1 * S, 1 * S);
    assert_int_equal(fb_hedge_result(&h, &g, false, false, 1500 * MS), FB_HEDGE_FAILED);
    assert_true(g.done);
}

/* Every attempt failed: wait for the last one out, then EXHAUSTED (the first one's failure). */
static void hedge_all_failed_is_exhausted_after_the_last(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 2, .delay_us = 1 * S});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, 1 * S, 0);
    fb_hedge_sent(&h, &g, 1 * S, 1 * S);
    assert_int_equal(fb_hedge_result(&h, &g, false, true, 1100 * MS), FB_HEDGE_WAIT);
    assert_int_equal(fb_hedge_result(&h, &g, false, true, 1200 * MS), FB_HEDGE_EXHAUSTED);
    assert_true(g.done);
}

/* A hedge nothing admits stops the hedging: wait for those out, or end when none is. */
static void hedge_refused_sends_no_more(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 3, .delay_us = 1 * S});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, 1 * S, 0);
    assert_int_equal(fb_hedge_refused(&g), FB_HEDGE_WAIT);
    assert_false(fb_hedge_due(&h, &g, 5 * S));
    assert_int_equal(fb_hedge_result(&h, &g, false, true, 6 * S), FB_HEDGE_EXHAUSTED);
    fb_hedge_begin(&h, &g, 1 * S, 0);
    assert_int_equal(fb_hedge_result(&h, &g, false, true, 10 * MS), FB_HEDGE_SEND_NOW);
    assert_int_equal(fb_hedge_refused(&g), FB_HEDGE_EXHAUSTED);
}

/* Polly's Delay = Zero sends every attempt at once; InfiniteTimeSpan only after a failure. */
static void hedge_at_once_and_only_on_failure(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.max_attempts = 3, .delay_us = FB_HEDGE_AT_ONCE});
    fb_hedge_group g;
    fb_hedge_begin(&h, &g, FB_HEDGE_AT_ONCE, 7 * MS);
    assert_true(fb_hedge_due(&h, &g, 7 * MS));
    fb_hedge_sent(&h, &g, FB_HEDGE_AT_ONCE, 7 * MS);
    assert_true(fb_hedge_due(&h, &g, 7 * MS));
    fb_hedge_policy f = policy((fb_hedge_config){.max_attempts = 2, .delay_us = FB_TIME_MAX});
    fb_hedge_begin(&f, &g, FB_TIME_MAX, 0);
    assert_false(fb_hedge_due(&f, &g, 3600 * S));
    assert_int_equal(fb_hedge_result(&f, &g, false, true, 3601 * S), FB_HEDGE_SEND_NOW);
}

/*
 * p50 of a full window of 4 is the 2nd smallest (nearest rank ceil(2)), p95
 * the 4th (ceil(3.8)); before the window is full the fixed delay holds; a
 * new answer replaces the oldest.
 */
static void hedge_percentile_delay_over_the_last_answers(void **state) {
    (void)state;
    fb_hedge_policy h = policy((fb_hedge_config){.delay_us = 1 * S, .percentile = 50, .window = 4});
    fb_hedge_policy p95 =
        policy((fb_hedge_config){.delay_us = 1 * S, .percentile = 95, .window = 4});
    fb_hedge_policy p25 =
        policy((fb_hedge_config){.delay_us = 1 * S, .percentile = 25, .window = 4});
    fb_hedge_window w;
    fb_hedge_window_init(&w, &h);
    static const fb_time_us lat[] = {100 * MS, 400 * MS, 200 * MS};
    for (int i = 0; i < 3; i++) fb_hedge_window_add(&w, lat[i]);
    assert_int_equal(fb_hedge_delay(&h, &w), 1 * S); /* 3 of 4: not yet */
    fb_hedge_window_add(&w, 300 * MS);
    assert_int_equal(fb_hedge_delay(&h, &w), 200 * MS);
    assert_int_equal(fb_hedge_delay(&p95, &w), 400 * MS);
    fb_hedge_window_add(&w, 50 * MS); /* replaces 100 ms: 50 200 300 400 */
    assert_int_equal(fb_hedge_delay(&p25, &w), 50 * MS);
    assert_int_equal(fb_hedge_delay(&h, &w), 200 * MS);
    fb_hedge_window_add(&w, 500 * MS); /* replaces 400 ms: 50 200 300 500 */
    assert_int_equal(fb_hedge_delay(&p95, &w), 500 * MS);
    fb_hedge_policy fixed = policy((fb_hedge_config){.delay_us = 750 * MS});
    assert_int_equal(fb_hedge_delay(&fixed, &w), 750 * MS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hedge_defaults_are_pollys),
        cmocka_unit_test(hedge_sends_one_more_after_each_delay),
        cmocka_unit_test(hedge_first_success_wins),
        cmocka_unit_test(hedge_handled_failure_sends_the_next_at_once),
        cmocka_unit_test(hedge_unhandled_failure_ends_the_call),
        cmocka_unit_test(hedge_all_failed_is_exhausted_after_the_last),
        cmocka_unit_test(hedge_refused_sends_no_more),
        cmocka_unit_test(hedge_at_once_and_only_on_failure),
        cmocka_unit_test(hedge_percentile_delay_over_the_last_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
