/*
 * test_gateway_core.c - the core options the gateway presets (LiteLLM Router,
 * Portkey, Envoy) needed, each pinned with exact times: retry floors, holds
 * and header rules; the concurrency retry budget; breakers without
 * half-open, LiteLLM's cooldown counters, Envoy's decaying ejection
 * multiplier and ejection limit; groups in the fallback engine. The presets'
 * own rules are in test_presets_gateway.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/fallback.h"
#include "tests/unit/helpers.h"

static const fb_class E503 = {.outcome = FB_OUT_TRANSIENT,
                              .retryable = true,
                              .effect = FB_EFFECT_FAILURE,
                              .may_fallback = true};
static const fb_class E429 = {.outcome = FB_OUT_RATE_LIMITED,
                              .retryable = true,
                              .effect = FB_EFFECT_FAILURE,
                              .may_fallback = true};
static const fb_class OK = {.outcome = FB_OUT_SUCCESS, .effect = FB_EFFECT_SUCCESS};

static fb_retry_policy policy(fb_retry_config c) {
    fb_retry_policy p;
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_OK);
    return p;
}

/* The delays of retries 1..n after failures of class c, each with hint h[k] (NULL: none). */
static void delays(const fb_retry_policy *p, const fb_class *c, const fb_time_us *h, uint32_t n,
                   fb_rng *rng, fb_time_us *out) {
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    for (uint32_t k = 0; k < n; k++) {
        fb_retry_decision d = fb_retry_next(p, &st, c, h ? h[k] : FB_TIME_NONE, NULL, rng, 0);
        out[k] = d.retry ? d.delay_us : -1;
    }
}

/* ---- retry ---- */

/* LiteLLM retry_after: min(max(0.5 * 2^k, floor), cap). */
static void retry_floor_applies_before_the_cap(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){
        .retries = 6, .base_us = 500 * MS, .delay_us_max = 8 * S, .delay_us_min = 2 * S});
    fb_time_us d[6];
    delays(&p, &E503, NULL, 6, NULL, d);
    const fb_time_us want[] = {2 * S, 2 * S, 2 * S, 4 * S, 8 * S, 8 * S};
    for (int i = 0; i < 6; i++) assert_int_equal(d[i], want[i]);
    p = policy((fb_retry_config){.retries = 2, .delay_us_max = 8 * S, .delay_us_min = 20 * S});
    delays(&p, &E503, NULL, 2, NULL, d);
    assert_int_equal(d[0], 8 * S); /* the floor never passes the cap */
}

/* router.py f292d1ae: the first sleep and the loop's first both use exponent 0. */
static void retry_backoff_hold_repeats_the_base(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){
        .retries = 5, .base_us = 500 * MS, .delay_us_max = 8 * S, .backoff_hold = 1});
    fb_time_us d[5];
    delays(&p, &E503, NULL, 5, NULL, d);
    const fb_time_us want[] = {500 * MS, 500 * MS, 1 * S, 2 * S, 4 * S};
    for (int i = 0; i < 5; i++) assert_int_equal(d[i], want[i]);
    assert_int_equal(fb_retry_backoff(&p, 1), 500 * MS);
    assert_int_equal(fb_retry_backoff(&p, 3), 1 * S);
}

/* LiteLLM: min(., 8) + U(0, 0.75): the jitter on top may pass the cap. */
static void retry_cap_backoff_only_lets_jitter_pass(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){.retries = 8,
                                                 .base_us = 500 * MS,
                                                 .delay_us_max = 8 * S,
                                                 .jitter = FB_JITTER_ADDITIVE,
                                                 .jitter_us = 750 * MS,
                                                 .cap_order = FB_CAP_BACKOFF_ONLY});
    fb_rng rng, copy;
    fb_rng_seed(&rng, 7, 1);
    copy = rng;
    fb_time_us d[8];
    delays(&p, &E503, NULL, 8, &rng, d);
    for (int i = 0; i < 8; i++) {
        fb_time_us base = fb_retry_backoff(&p, (uint32_t)i + 1);
        assert_int_equal(d[i], base + (fb_time_us)(fb_rng_uniform(&copy) * 750e3));
    }
    assert_true(d[7] >= 8 * S && d[7] < 8 * S + 750 * MS);
}

/* LiteLLM: a Retry-After of 0 < d <= 60 s waits d + the same U(0, 0.75) draw. */
static void retry_hint_jitter_adds_the_draw(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){.retries = 2,
                                                 .jitter = FB_JITTER_ADDITIVE,
                                                 .jitter_us = 750 * MS,
                                                 .cap_order = FB_CAP_BACKOFF_ONLY,
                                                 .retry_after = FB_RETRY_AFTER_AS_IS,
                                                 .retry_after_us_max = 60 * S,
                                                 .above_max = FB_ABOVE_MAX_BACKOFF,
                                                 .ignore_zero_hint = FB_ON,
                                                 .hint_jitter = FB_ON});
    fb_rng rng, copy;
    fb_rng_seed(&rng, 3, 1);
    copy = rng;
    const fb_time_us h[] = {2 * S, 61 * S};
    fb_time_us d[2];
    delays(&p, &E429, h, 2, &rng, d);
    assert_int_equal(d[0], 2 * S + (fb_time_us)(fb_rng_uniform(&copy) * 750e3));
    /* above 60 s: the backoff (retry 2: 1 s) with its own draw */
    assert_int_equal(d[1], 1 * S + (fb_time_us)(fb_rng_uniform(&copy) * 750e3));
}

/* Portkey: only a 429's header counts. */
static void retry_hint_rate_limited_only(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){.retries = 1,
                                                 .base_us = 1 * S,
                                                 .retry_after = FB_RETRY_AFTER_AS_IS,
                                                 .hint_rate_limited_only = FB_ON});
    fb_time_us h = 50 * MS, d;
    delays(&p, &E503, &h, 1, NULL, &d);
    assert_int_equal(d, 1 * S);
    delays(&p, &E429, &h, 1, NULL, &d);
    assert_int_equal(d, 50 * MS);
}

/* Portkey: the headers honoured add up to at most 60 s; past it, no retry. */
static void retry_headers_have_a_total(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){.retries = 5,
                                                 .base_us = 1 * S,
                                                 .delay_us_max = FB_TIME_MAX,
                                                 .retry_after = FB_RETRY_AFTER_AS_IS,
                                                 .retry_after_us_max = 60 * S - 1,
                                                 .above_max = FB_ABOVE_MAX_GIVEUP,
                                                 .retry_after_total_us_max = 60 * S});
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_retry_decision d = fb_retry_next(&p, &st, &E429, 30 * S, NULL, NULL, 0);
    assert_true(d.retry);
    d = fb_retry_next(&p, &st, &E429, 30 * S, NULL, NULL, 0); /* exactly 60 s in all */
    assert_true(d.retry);
    d = fb_retry_next(&p, &st, &E429, 1 * MS, NULL, NULL, 0);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_RETRY_AFTER_CAP);
    fb_retry_begin(&st, 0);
    d = fb_retry_next(&p, &st, &E429, 60 * S, NULL, NULL, 0); /* >= 60 s: not retried */
    assert_false(d.retry);
}

/* Portkey resets async-retry's timeouts to 0 after a honoured header. */
static void retry_hint_zeroes_later_backoff(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){.retries = 3,
                                                 .base_us = 1 * S,
                                                 .delay_us_max = FB_TIME_MAX,
                                                 .retry_after = FB_RETRY_AFTER_AS_IS,
                                                 .hint_zeroes_backoff = FB_ON});
    const fb_time_us h[] = {FB_TIME_NONE, 50 * MS, FB_TIME_NONE};
    fb_time_us d[3];
    delays(&p, &E429, h, 3, NULL, d);
    assert_int_equal(d[0], 1 * S);
    assert_int_equal(d[1], 50 * MS);
    assert_int_equal(d[2], 0);
}

/* The first failure's class sets the request's attempts (LiteLLM RetryPolicy). */
static void retry_first_failure_sets_attempts(void **state) {
    (void)state;
    fb_retry_policy p = policy((fb_retry_config){.retries = 5, .backoff = FB_BACKOFF_NONE});
    fb_class c = E503;
    c.attempts = 2;
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    assert_true(fb_retry_next(&p, &st, &c, FB_TIME_NONE, NULL, NULL, 0).retry);
    fb_class later = E503;
    later.attempts = 6; /* only the first failure's counts */
    fb_retry_decision d = fb_retry_next(&p, &st, &later, FB_TIME_NONE, NULL, NULL, 0);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_ATTEMPTS);
    c.attempts = 1; /* RetryPolicy 0 retries */
    fb_retry_begin(&st, 0);
    assert_false(fb_retry_next(&p, &st, &c, FB_TIME_NONE, NULL, NULL, 0).retry);
}

/* ---- the concurrency budget ---- */

/* Envoy: retries in progress < max(min_retry_concurrency, percent of attempts in progress). */
static void budget_concurrency_counts_retries_in_progress(void **state) {
    (void)state;
    fb_budget b;
    assert_int_equal(fb_budget_init(&b, &(fb_budget_config){.kind = FB_BUDGET_CONCURRENCY}), FB_OK);
    fb_retry_state s[5];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 3; i++) {
        assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
        s[i].budget_held = true;
    }
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0)); /* min 3 */
    fb_budget_release(&b, &s[0]);
    fb_budget_release(&b, &s[0]); /* twice: once */
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    /* 20% of 25 attempts in progress is 5 */
    for (int i = 0; i < 25; i++) fb_budget_attempt(&b, true);
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_true(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    /* 24 in progress: 4.8 truncates to 4, below the 5 held */
    fb_budget_attempt(&b, false);
    assert_false(fb_budget_withdraw(&b, FB_OUT_TRANSIENT, 0));
    assert_int_equal(fb_budget_stats_get(&b)->refused, 4);
}

/* ---- breakers ---- */

static void rec(fb_breaker *b, fb_effect e, fb_time_us now) {
    fb_breaker_permit p;
    fb_breaker_allow(b, now, &p);
    if (p.kind == FB_PERMIT_REJECTED) p = (fb_breaker_permit){.kind = FB_PERMIT_CALL};
    fb_breaker_record(b, &p, &(fb_breaker_result){.effect = e, .hint_us = FB_TIME_NONE}, now);
}

static void rec_with(fb_breaker *b, fb_breaker_result r, fb_time_us now) {
    fb_breaker_permit p;
    fb_breaker_allow(b, now, &p);
    if (p.kind == FB_PERMIT_REJECTED) p = (fb_breaker_permit){.kind = FB_PERMIT_CALL};
    fb_breaker_record(b, &p, &r, now);
}

/* No half-open: the open period's end closes the breaker (REACH and PASS). */
static void breaker_recovery_close_skips_half_open(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = {
        .consecutive_failures = 1, .open_us = 5 * S, .recovery = FB_RECOVER_CLOSE};
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec(&b, FB_EFFECT_FAILURE, 1 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    assert_false(fb_breaker_admits(&b, 6 * S - 1));
    assert_true(fb_breaker_admits(&b, 6 * S));
    fb_breaker_poll(&b, 6 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    c.open_deadline = FB_CMP_PASS;
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec(&b, FB_EFFECT_FAILURE, 1 * S);
    fb_breaker_poll(&b, 6 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    fb_breaker_poll(&b, 6 * S + 1);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
}

/* A failure can open at once, or never by itself; a per-result limit replaces the run's. */
static void breaker_trip_verdicts(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = {.consecutive_failures = 5, .open_us = 5 * S};
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .trip = FB_TRIP_NOW}, 0);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_open_until(&b), 5 * S);
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 9; i++)
        rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .trip = FB_TRIP_NEVER}, 0);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    rec(&b, FB_EFFECT_FAILURE, 0); /* the run counted them: 10 >= 5 */
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec(&b, FB_EFFECT_FAILURE, 0);
    rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .failure_limit = 2}, 0);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
}

static fb_breaker_config cooldown_v2(void) {
    return (fb_breaker_config){.mode = FB_BREAKER_MODE_COOLDOWN,
                               .window_us = 60 * S,
                               .minimum_calls = 5,
                               .failure_rate = 0.5,
                               .trip_compare = FB_CMP_PASS,
                               .open_us = 5 * S,
                               .open_deadline = FB_CMP_PASS,
                               .recovery = FB_RECOVER_CLOSE};
}

/* LiteLLM v2: failures / (failures + successes) > 0.5 with at least 5 requests. */
static void breaker_cooldown_rate_rule(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = cooldown_v2();
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 4; i++) rec(&b, FB_EFFECT_FAILURE, (fb_time_us)i * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED); /* 4 < 5 requests */
    rec(&b, FB_EFFECT_FAILURE, 4 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_open_until(&b), 9 * S);
    /* with 10 successes: 10 failures make 0.5 (not > 0.5), the 11th opens */
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 10; i++) rec(&b, FB_EFFECT_SUCCESS, 0);
    for (int i = 0; i < 10; i++) rec(&b, FB_EFFECT_FAILURE, 1 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    rec(&b, FB_EFFECT_FAILURE, 1 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
}

/* Each count expires 60 s after its last increment (now > last + 60 s), separately. */
static void breaker_cooldown_counts_expire_apart(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = cooldown_v2();
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 10; i++) rec(&b, FB_EFFECT_SUCCESS, 0);
    for (int i = 0; i < 4; i++) rec(&b, FB_EFFECT_FAILURE, 30 * S);
    /* at exactly 60 s after the last success the successes still count */
    rec(&b, FB_EFFECT_FAILURE, 60 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    /* one microsecond later they expired: 6 failures of 6 */
    rec(&b, FB_EFFECT_FAILURE, 60 * S + 1);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    /* the failures' count restarts after 60 s without one */
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 4; i++) rec(&b, FB_EFFECT_FAILURE, 0);
    rec(&b, FB_EFFECT_FAILURE, 60 * S + 1);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
}

/* No transition clears the counts: after a cooldown one failure cools again at once. */
static void breaker_cooldown_counts_survive_the_cooldown(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = cooldown_v2();
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 5; i++) rec(&b, FB_EFFECT_FAILURE, 0);
    assert_int_equal(fb_breaker_open_until(&b), 5 * S);
    fb_breaker_poll(&b, 5 * S + 1);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    rec(&b, FB_EFFECT_FAILURE, 6 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_open_until(&b), 11 * S);
    /* a failure while cooling (an attempt that was in flight) restarts the period */
    fb_breaker_permit late = {.kind = FB_PERMIT_CALL, .generation = 1};
    fb_breaker_record(&b, &late,
                      &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .hint_us = FB_TIME_NONE},
                      8 * S);
    assert_int_equal(fb_breaker_open_until(&b), 13 * S);
}

/* LiteLLM v1: a failure that would make the count exceed allowed_fails opens, uncounted. */
static void breaker_cooldown_count_rule(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = {.mode = FB_BREAKER_MODE_COOLDOWN,
                           .cooldown_rule = FB_COOLDOWN_COUNT,
                           .window_us = 5 * S,        /* failed_calls' ttl: cooldown_time */
                           .consecutive_failures = 4, /* allowed_fails 3 */
                           .open_us = 5 * S,
                           .open_deadline = FB_CMP_PASS,
                           .recovery = FB_RECOVER_CLOSE};
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 3; i++) rec(&b, FB_EFFECT_FAILURE, (fb_time_us)i * S);
    rec(&b, FB_EFFECT_SUCCESS, 3 * S); /* successes change nothing */
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    rec(&b, FB_EFFECT_FAILURE, 3 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
    /* more than 5 s between failures: the count restarts */
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    for (int i = 0; i < 3; i++) rec(&b, FB_EFFECT_FAILURE, (fb_time_us)i * 6 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    /* allowed_fails_policy: this failure's own limit (RateLimitErrorAllowedFails 0) */
    rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .failure_limit = 1}, 20 * S);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_OPEN);
}

/* LiteLLM: a Retry-After is the cooldown time; Retry-After: 0 cools nothing. */
static void breaker_hint_replaces_the_open_time(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = {.consecutive_failures = 1,
                           .open_us = 5 * S,
                           .open_us_max = 1000 * S,
                           .honor_hint = FB_ON,
                           .hint_mode = FB_HINT_REPLACES,
                           .recovery = FB_RECOVER_CLOSE};
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .hint_us = 2 * S}, 0);
    assert_int_equal(fb_breaker_open_until(&b), 2 * S);
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .hint_us = 0}, 0);
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    rec_with(&b, (fb_breaker_result){.effect = FB_EFFECT_FAILURE, .hint_us = FB_TIME_NONE}, 0);
    assert_int_equal(fb_breaker_open_until(&b), 5 * S);
}

/* Envoy: base * k, k + 1 per ejection, - 1 per healthy sweep; un-ejected at a sweep. */
static void breaker_linear_decay_with_sweeps(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = {.consecutive_failures = 1,
                           .open_us = 30 * S,
                           .open_us_max = 300 * S,
                           .open_growth = FB_OPEN_GROWTH_LINEAR_DECAY,
                           .decay_us = 10 * S,
                           .open_align_us = 10 * S,
                           .recovery = FB_RECOVER_CLOSE};
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    rec(&b, FB_EFFECT_FAILURE, 5 * S);
    assert_int_equal(fb_breaker_open_until(&b), 40 * S); /* 35 s, at the 40 s sweep */
    fb_breaker_poll(&b, 42 * S);                         /* noticed late: closed at 40 s */
    assert_int_equal(fb_breaker_state_get(&b), FB_BREAKER_CLOSED);
    rec(&b, FB_EFFECT_FAILURE, 45 * S); /* no sweep since: k = 2 */
    assert_int_equal(fb_breaker_open_until(&b), 110 * S);
    fb_breaker_poll(&b, 110 * S);
    rec(&b, FB_EFFECT_FAILURE, 145 * S); /* three sweeps (120, 130, 140): k = 0, then 1 */
    assert_int_equal(fb_breaker_open_until(&b), 180 * S);
    /* the multiplier stops at (max + base) / base: 11, min(330, 300) = 300 s */
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    fb_time_us t = 0;
    for (int i = 0; i < 12; i++) {
        rec(&b, FB_EFFECT_FAILURE, t);
        t = fb_breaker_open_until(&b);
        fb_breaker_poll(&b, t);
    }
    assert_int_equal(b.growth_k, 11);
}

/* Envoy max_ejection_percent: 10% of 3 hosts ejects one; the refused run starts again. */
static void breaker_eject_group_limits_opens(void **state) {
    (void)state;
    fb_eject_group g;
    fb_eject_group_init(&g, 3, 10.0);
    fb_breaker b[3];
    fb_breaker_config c = {.consecutive_failures = 2,
                           .open_us = 30 * S,
                           .recovery = FB_RECOVER_CLOSE,
                           .eject_group = &g};
    for (int i = 0; i < 3; i++) assert_int_equal(fb_breaker_init(&b[i], &c, 0), FB_OK);
    rec(&b[0], FB_EFFECT_FAILURE, 0);
    rec(&b[0], FB_EFFECT_FAILURE, 0);
    assert_int_equal(g.open, 1);
    rec(&b[1], FB_EFFECT_FAILURE, 1 * S);
    rec(&b[1], FB_EFFECT_FAILURE, 1 * S);
    assert_int_equal(fb_breaker_state_get(&b[1]), FB_BREAKER_CLOSED);
    assert_int_equal(g.refused, 1);
    rec(&b[1], FB_EFFECT_FAILURE, 2 * S); /* the run was cleared: 1 < 2 */
    assert_int_equal(fb_breaker_state_get(&b[1]), FB_BREAKER_CLOSED);
    fb_breaker_poll(&b[0], 30 * S);
    assert_int_equal(g.open, 0);
    rec(&b[1], FB_EFFECT_FAILURE, 31 * S);
    assert_int_equal(fb_breaker_state_get(&b[1]), FB_BREAKER_OPEN);
    fb_eject_group_init(&g, 2, 0.0); /* 0%: never */
    assert_int_equal(fb_breaker_init(&b[2], &c, 0), FB_OK);
    rec(&b[2], FB_EFFECT_FAILURE, 0);
    rec(&b[2], FB_EFFECT_FAILURE, 0);
    assert_int_equal(fb_breaker_state_get(&b[2]), FB_BREAKER_CLOSED);
}

static void breaker_cooldown_needs_recovery_close(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config c = {.mode = FB_BREAKER_MODE_COOLDOWN};
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_EINVAL);
    c.recovery = FB_RECOVER_CLOSE;
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_OK);
    c.hint_mode = (fb_hint_mode)2;
    assert_int_equal(fb_breaker_init(&b, &c, 0), FB_EINVAL);
}

/* ---- groups in the fallback engine ---- */

typedef struct gchain {
    fb_fallback fb;
    fb_fallback_config cfg;
    fb_breaker br[4];
    fb_retry_policy retry;
    fb_rng rng;
} gchain;

/* Providers 0, 1, 2 in group 0 and 3 in group 1; breakers open on one failure for 10 s. */
static void gchain_setup(gchain *g, fb_pick pick, fb_retry_config rc) {
    memset(g, 0, sizeof *g);
    g->cfg.provider_count = 4;
    g->cfg.pick = pick;
    g->cfg.group[3] = 1;
    for (int i = 0; i < 4; i++) {
        fb_breaker_config bc = {
            .consecutive_failures = 1, .open_us = 10 * S, .recovery = FB_RECOVER_CLOSE};
        assert_int_equal(fb_breaker_init(&g->br[i], &bc, 0), FB_OK);
        g->cfg.providers[i].breaker = &g->br[i];
    }
    assert_int_equal(fb_retry_policy_init(&g->retry, &rc), FB_OK);
    g->cfg.retry = &g->retry;
    fb_rng_seed(&g->rng, 11, 1);
    g->cfg.rng = &g->rng;
}

/* Retries pick again among the members that admit; the group's retries are counted together. */
static void groups_retries_spread_over_members(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_RANDOM, (fb_retry_config){.retries = 2, .backoff = FB_BACKOFF_NONE});
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 0);
    uint32_t seen = 0;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(d.action, FB_ACT_ATTEMPT);
        assert_true(d.provider < 3);
        assert_false(seen & (1u << d.provider)); /* the failed ones are open */
        seen |= 1u << d.provider;
        d = fb_fallback_result(&g.fb, &req, &E503, FB_TIME_NONE, 0);
    }
    assert_int_equal(seen, 7u);
    assert_int_equal(d.action, FB_ACT_ATTEMPT); /* the group's 3 attempts: fall back */
    assert_int_equal(d.provider, 3);
    assert_true(d.via_fallback);
    const fb_fallback_request_stats *st = fb_fallback_request_stats_get(&req);
    assert_int_equal(st->retries, 2);
    assert_int_equal(st->fallbacks, 1);
    d = fb_fallback_result(&g.fb, &req, &OK, FB_TIME_NONE, 0);
    assert_int_equal(d.stop, FB_STOP_SUCCESS);
    assert_true(d.via_fallback);
}

/* Weights: 3 to 1 between two members, over many first picks. */
static void groups_random_pick_is_weighted(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_RANDOM, (fb_retry_config){.attempts = 1});
    g.cfg.group[2] = 2; /* group 0: providers 0 and 1 */
    g.cfg.weight[0] = 3;
    g.cfg.weight[1] = 1;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    uint32_t n0 = 0;
    for (int i = 0; i < 4000; i++) {
        fb_fallback_request req;
        fb_fallback_decision d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 0);
        n0 += d.provider == 0;
        fb_fallback_result(&g.fb, &req, &OK, FB_TIME_NONE, 0);
    }
    assert_true(n0 > 2850 && n0 < 3150);
}

/* ROUND_ROBIN: a rotation shared by the requests, over the members that admit. */
static void groups_round_robin_rotates(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_ROUND_ROBIN, (fb_retry_config){.attempts = 1});
    uint32_t cursor = 0;
    g.cfg.rr_cursor = &cursor;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    const uint8_t want[] = {0, 1, 2, 0};
    for (int i = 0; i < 4; i++) {
        fb_fallback_request req;
        fb_fallback_decision d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 0);
        assert_int_equal(d.provider, want[i]);
        fb_fallback_result(&g.fb, &req, &OK, FB_TIME_NONE, 0);
    }
}

/* LiteLLM: a retry waits 0 while a deployment of the group is healthy, its backoff when none. */
static void groups_zero_wait_while_one_admits(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_RANDOM,
                 (fb_retry_config){.retries = 3, .base_us = 1 * S, .delay_us_max = 8 * S});
    g.cfg.zero_wait_if_healthy = FB_ON;
    g.cfg.healthy_gate = FB_ON;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 0);
    d = fb_fallback_result(&g.fb, &req, &E503, FB_TIME_NONE, 0);
    assert_int_equal(d.action, FB_ACT_ATTEMPT); /* two others admit: no wait */
    d = fb_fallback_result(&g.fb, &req, &E503, FB_TIME_NONE, 0);
    assert_int_equal(d.action, FB_ACT_ATTEMPT);
    d = fb_fallback_result(&g.fb, &req, &E503, FB_TIME_NONE, 0);
    /* none admits now: retry 3 waits its backoff (4 s)... */
    assert_int_equal(d.action, FB_ACT_WAIT);
    assert_int_equal(d.delay_us, 4 * S);
    /* ...and finding them all cooling, counts an attempt without a call, then falls back */
    d = fb_fallback_resume(&g.fb, &req, 4 * S);
    assert_int_equal(d.action, FB_ACT_ATTEMPT);
    assert_int_equal(d.provider, 3);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 4);
}

/* LiteLLM should_retry_this_error: no healthy deployment after the first failure, no retry. */
static void groups_healthy_gate_at_first_failure(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_RANDOM, (fb_retry_config){.retries = 3, .backoff = FB_BACKOFF_NONE});
    g.cfg.group[1] = 2;
    g.cfg.group[2] = 3; /* group 0 is provider 0 alone */
    g.cfg.healthy_gate = FB_ON;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 0);
    assert_int_equal(d.provider, 0);
    d = fb_fallback_result(&g.fb, &req, &E503, FB_TIME_NONE, 0); /* 0 is open now */
    assert_int_equal(d.action, FB_ACT_ATTEMPT);
    assert_int_equal(d.provider, 1);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 0);
    /* without the gate the engine retries... and finds 0 open: falls back all the same */
    g.cfg.healthy_gate = FB_OFF;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    fb_breaker_poll(&g.br[0], 20 * S);
    d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 20 * S);
    assert_int_equal(d.provider, 0);
    d = fb_fallback_result(&g.fb, &req, &E503, FB_TIME_NONE, 20 * S);
    assert_int_equal(d.provider, 1);
}

/* LiteLLM context_window_fallbacks: a context-length failure leaves for its own chain. */
static void groups_context_chain(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_RANDOM, (fb_retry_config){.attempts = 1});
    g.cfg.on_context_length = (fb_fallback_chain){.set = true, .order = {3}, .len = 1};
    g.cfg.order_len = 3; /* the generic chain: group 0 only */
    g.cfg.order[0] = 0;
    g.cfg.order[1] = 1;
    g.cfg.order[2] = 2;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    fb_class ctx = {
        .outcome = FB_OUT_CONTEXT_LENGTH, .effect = FB_EFFECT_IGNORE, .may_fallback = true};
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 0);
    d = fb_fallback_result(&g.fb, &req, &ctx, FB_TIME_NONE, 0);
    assert_int_equal(d.action, FB_ACT_ATTEMPT);
    assert_int_equal(d.provider, 3);
    /* set with no chain: the failure ends the request */
    g.cfg.on_context_length = (fb_fallback_chain){.set = true};
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    d = fb_fallback_begin(&g.fb, &req, 0, NULL, 0, 1 * S);
    d = fb_fallback_result(&g.fb, &req, &ctx, FB_TIME_NONE, 1 * S);
    assert_int_equal(d.action, FB_ACT_DONE);
    assert_int_equal(d.stop, FB_STOP_CONTEXT_LENGTH);
}

/* An engine's CONCURRENCY budget: the slot of a retry is freed by its attempt's result. */
static void groups_budget_slot_lives_until_the_result(void **state) {
    (void)state;
    gchain g;
    gchain_setup(&g, FB_PICK_ORDER, (fb_retry_config){.retries = 3, .backoff = FB_BACKOFF_NONE});
    for (int i = 0; i < 4; i++) g.cfg.providers[i].breaker = NULL;
    fb_budget b;
    assert_int_equal(fb_budget_init(&b, &(fb_budget_config){.kind = FB_BUDGET_CONCURRENCY,
                                                            .min_retry_concurrency = 1}),
                     FB_OK);
    g.cfg.budget = &b;
    assert_int_equal(fb_fallback_init(&g.fb, &g.cfg), FB_OK);
    fb_fallback_request r1, r2;
    fb_fallback_begin(&g.fb, &r1, 0, NULL, 0, 0);
    fb_fallback_begin(&g.fb, &r2, 0, NULL, 0, 0);
    fb_fallback_decision d1 = fb_fallback_result(&g.fb, &r1, &E503, FB_TIME_NONE, 0);
    assert_int_equal(d1.action, FB_ACT_ATTEMPT); /* r1 holds the one slot */
    fb_fallback_decision d2 = fb_fallback_result(&g.fb, &r2, &E503, FB_TIME_NONE, 0);
    assert_int_equal(d2.provider, 1); /* refused: r2 falls back instead of retrying */
    d1 = fb_fallback_result(&g.fb, &r1, &OK, FB_TIME_NONE, 1 * S);
    assert_int_equal(d1.stop, FB_STOP_SUCCESS);
    assert_int_equal(b.active_retries, 0);
    d2 = fb_fallback_result(&g.fb, &r2, &E503, FB_TIME_NONE, 1 * S);
    assert_int_equal(d2.action, FB_ACT_ATTEMPT);
    assert_int_equal(d2.provider, 1); /* a retry of 1 now */
    fb_fallback_cancel(&g.fb, &r2, 2 * S);
    assert_int_equal(b.active_retries, 0);
    assert_int_equal(b.active_attempts, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_floor_applies_before_the_cap),
        cmocka_unit_test(retry_backoff_hold_repeats_the_base),
        cmocka_unit_test(retry_cap_backoff_only_lets_jitter_pass),
        cmocka_unit_test(retry_hint_jitter_adds_the_draw),
        cmocka_unit_test(retry_hint_rate_limited_only),
        cmocka_unit_test(retry_headers_have_a_total),
        cmocka_unit_test(retry_hint_zeroes_later_backoff),
        cmocka_unit_test(retry_first_failure_sets_attempts),
        cmocka_unit_test(budget_concurrency_counts_retries_in_progress),
        cmocka_unit_test(breaker_recovery_close_skips_half_open),
        cmocka_unit_test(breaker_trip_verdicts),
        cmocka_unit_test(breaker_cooldown_rate_rule),
        cmocka_unit_test(breaker_cooldown_counts_expire_apart),
        cmocka_unit_test(breaker_cooldown_counts_survive_the_cooldown),
        cmocka_unit_test(breaker_cooldown_count_rule),
        cmocka_unit_test(breaker_hint_replaces_the_open_time),
        cmocka_unit_test(breaker_linear_decay_with_sweeps),
        cmocka_unit_test(breaker_eject_group_limits_opens),
        cmocka_unit_test(breaker_cooldown_needs_recovery_close),
        cmocka_unit_test(groups_retries_spread_over_members),
        cmocka_unit_test(groups_random_pick_is_weighted),
        cmocka_unit_test(groups_round_robin_rotates),
        cmocka_unit_test(groups_zero_wait_while_one_admits),
        cmocka_unit_test(groups_healthy_gate_at_first_failure),
        cmocka_unit_test(groups_context_chain),
        cmocka_unit_test(groups_budget_slot_lives_until_the_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
