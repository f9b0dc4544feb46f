/*
 * test_retry.c - retry decisions, and how they use a budget and a Retry-After hint.
 * The budgets alone are in test_budget.c, the header parsers in test_retry_after.c.
 *
 * Exact values where nothing is drawn (jitter NONE or no rng). Where jitter
 * draws, the assertions are bounds and statistical properties that hold for
 * any sound uniform generator, not values of one PRNG's sequence.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/retry.h"
#include "tests/unit/helpers.h"

#define DRAWS 20000

static const fb_class transient = {.outcome = FB_OUT_TRANSIENT,
                                   .retryable = true,
                                   .effect = FB_EFFECT_FAILURE,
                                   .may_fallback = true};
static const fb_class timed_out = {.outcome = FB_OUT_TIMEOUT,
                                   .retryable = true,
                                   .effect = FB_EFFECT_FAILURE,
                                   .may_fallback = true};
static const fb_class permanent = {.outcome = FB_OUT_PERMANENT,
                                   .retryable = false,
                                   .effect = FB_EFFECT_SUCCESS,
                                   .may_fallback = false};

static fb_retry_policy policy(fb_retry_config cfg) {
    fb_retry_policy p;
    assert_int_equal(fb_retry_policy_init(&p, &cfg), FB_OK);
    return p;
}

/* No jitter: every delay below is an exact value. */
static fb_retry_config exact(fb_backoff b, fb_time_us base_us, fb_time_us max_us) {
    return (fb_retry_config){
        .attempts = FB_RETRY_ATTEMPTS_MAX,
        .backoff = b,
        .base_us = base_us,
        .delay_us_max = max_us,
        .jitter = FB_JITTER_NONE,
    };
}

/* Retry state of a request started at start_us whose attempt number `attempts` is failing:
 * the next fb_retry_next() counts it. */
static fb_retry_state after(uint32_t attempts, fb_time_us start_us) {
    fb_retry_state s;
    fb_retry_begin(&s, start_us);
    s.attempt = attempts - 1;
    return s;
}

static fb_rng seeded(uint64_t stream) {
    fb_rng r;
    fb_rng_seed(&r, 20261129, stream);
    return r;
}

/* The delay fb_retry_next() returns for retry number n (a fresh request each time). */
static fb_time_us delay_for(const fb_retry_policy *p, uint32_t n, fb_rng *rng) {
    fb_retry_state s = after(n, 0);
    fb_retry_decision d = fb_retry_next(p, &s, &transient, FB_TIME_NONE, NULL, rng, 0);
    assert_true(d.retry);
    return d.delay_us;
}

/* ---- policy ------------------------------------------------------------------------------ */

static void retry_policy_zero_config_gets_documented_defaults(void **state) {
    (void)state;
    fb_retry_policy p;
    assert_int_equal(fb_retry_policy_init(&p, NULL), FB_OK);
    assert_int_equal(p.cfg.attempts, 3);
    assert_int_equal(p.cfg.backoff, FB_BACKOFF_EXPONENTIAL);
    assert_int_equal(p.cfg.base_us, 500 * MS);
    assert_true(p.cfg.multiplier == 2.0);
    assert_int_equal(p.cfg.delay_us_max, 60 * S);
    assert_int_equal(p.cfg.jitter, FB_JITTER_NONE); /* the zero rule: nothing is drawn */
    assert_true(p.cfg.jitter_fraction == 0.25);
    assert_int_equal(p.cfg.cap_order, FB_CAP_BEFORE_JITTER);
    assert_int_equal(p.cfg.retry_after, FB_RETRY_AFTER_MAX);
    assert_int_equal(p.cfg.retry_after_us_max, 60 * S);
    assert_int_equal(p.cfg.above_max, FB_ABOVE_MAX_CLAMP);
    assert_int_equal(p.cfg.ignore_zero_hint, FB_OFF);
    assert_int_equal(p.cfg.jitter_us, 1 * S);
    assert_int_equal(p.cfg.resolution_us, 0);
    assert_int_equal(p.cfg.deadline_us, 0);
    assert_int_equal(p.cfg.attempt_timeout_us, 0);
    assert_true(p.cfg.retry_after_jitter == 0.0);
}

static void retry_policy_rejects_impossible_config(void **state) {
    (void)state;
    fb_retry_policy p;
    fb_retry_config c = {.attempts = FB_RETRY_ATTEMPTS_MAX + 1};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_ERANGE);
    c = (fb_retry_config){.multiplier = 0.5};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_ERANGE);
    c = (fb_retry_config){.jitter_fraction = 1.5};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_ERANGE);
    c = (fb_retry_config){.base_us = -1};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.deadline_us = -1};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.jitter = (fb_jitter)(FB_JITTER_DECORRELATED_V2 + 1)};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.multiplier = 0.0 / 0.0};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.attempts = FB_RETRY_ATTEMPTS_MAX};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_OK);
}

/* ---- attempt numbering ------------------------------------------------------------------- */

static void retry_single_attempt_never_retries(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 100 * MS, 60 * S);
    c.attempts = 1;
    fb_retry_policy p = policy(c);
    fb_retry_state s = after(1, 0);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 0);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_ATTEMPTS);
}

static void retry_three_attempts_give_exactly_two_retries(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 100 * MS, 60 * S);
    c.attempts = 3;
    fb_retry_policy p = policy(c);
    fb_retry_state s;
    fb_retry_begin(&s, 0);
    fb_time_us now = 0;
    int retries = 0;
    for (;;) {
        fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, now);
        if (!d.retry) {
            assert_int_equal(d.reason, FB_GIVEUP_ATTEMPTS);
            break;
        }
        retries++;
        now += d.delay_us;
    }
    assert_int_equal(retries, 2);
    assert_int_equal(s.attempt, 3);
}

static void retry_begin_sets_start_and_counts_nothing(void **state) {
    (void)state;
    fb_retry_state s;
    fb_retry_begin(&s, 5 * S);
    assert_int_equal(s.attempt, 0);
    assert_int_equal(s.start_us, 5 * S);
    /* The deadline runs from the request's start, whenever the first attempt went out. */
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S);
    c.deadline_us = 10 * S;
    fb_retry_policy p = policy(c);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 13 * S);
    assert_true(d.retry); /* 13 + 1 < 5 + 10 */
    d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 14 * S);
    assert_int_equal(d.reason, FB_GIVEUP_DEADLINE); /* 14 + 1 >= 15 */
}

/* Item 6 of issue 10: a caller that only calls fb_retry_next() cannot retry forever. */
static void retry_next_counts_each_failed_attempt_once(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_LINEAR, 100 * MS, 60 * S));
    fb_retry_state s = after(2, 0);
    fb_retry_decision a = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 0);
    assert_int_equal(s.attempt, 2);
    fb_retry_decision b = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 0);
    assert_int_equal(s.attempt, 3);
    assert_int_equal(a.delay_us, 200 * MS); /* retry 2 */
    assert_int_equal(b.delay_us, 300 * MS); /* retry 3 */

    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 100 * MS, 60 * S);
    c.attempts = 4;
    p = policy(c);
    fb_retry_begin(&s, 0);
    int retries = 0;
    while (fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 0).retry) retries++;
    assert_int_equal(retries, 3);
    assert_int_equal(s.attempt, 4);
}

/* Polly MaxRetryAttempts = 3 makes 4 calls; resilience4j maxAttempts = 3 makes 3. */
static void retry_retries_count_the_calls_after_the_first(void **state) {
    (void)state;
    fb_retry_policy p;
    fb_retry_config c = {.retries = 3};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_OK);
    assert_int_equal(p.cfg.attempts, 4);
    fb_retry_state s;
    fb_retry_begin(&s, 0);
    int calls = 1;
    while (fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 0).retry) calls++;
    assert_int_equal(calls, 4);
    c = (fb_retry_config){.attempts = 3};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_OK);
    fb_retry_begin(&s, 0);
    calls = 1;
    while (fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 0).retry) calls++;
    assert_int_equal(calls, 3);
    c = (fb_retry_config){.attempts = 3, .retries = 2}; /* one count, not two */
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.retries = FB_RETRY_ATTEMPTS_MAX};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_ERANGE);
}

static void retry_not_retryable_outcome_gives_up_first(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 100 * MS, 60 * S);
    c.attempts = 1;
    fb_retry_policy p = policy(c);
    fb_retry_state s = after(1, 0); /* attempts are exhausted too: not-retryable is reported */
    fb_retry_decision d = fb_retry_next(&p, &s, &permanent, FB_TIME_NONE, NULL, NULL, 0);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_NOT_RETRYABLE);
    d = fb_retry_next(&p, &s, NULL, FB_TIME_NONE, NULL, NULL, 0);
    assert_int_equal(d.reason, FB_GIVEUP_NOT_RETRYABLE);
}

static void retry_exhausted_attempts_draw_nothing(void **state) {
    (void)state;
    fb_retry_config c = {.attempts = 2, .above_max = FB_ABOVE_MAX_GIVEUP};
    fb_retry_policy p = policy(c);
    fb_retry_state s = after(2, 0);
    fb_rng r = seeded(1), untouched = seeded(1);
    /* The header is above the cap, but attempts are checked before the delay. */
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, 600 * S, NULL, &r, 0);
    assert_int_equal(d.reason, FB_GIVEUP_ATTEMPTS);
    assert_memory_equal(&r, &untouched, sizeof r);
}

/* ---- backoff values ---------------------------------------------------------------------- */

static void retry_constant_backoff_is_base_every_time(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_CONSTANT, 300 * MS, 60 * S));
    for (uint32_t n = 1; n <= 5; n++) assert_int_equal(delay_for(&p, n, NULL), 300 * MS);
    assert_int_equal(fb_retry_backoff(&p, 999999), 300 * MS);
    fb_retry_policy low = policy(exact(FB_BACKOFF_CONSTANT, 3 * S, 2 * S));
    assert_int_equal(fb_retry_backoff(&low, 1), 2 * S);
}

static void retry_linear_backoff_is_base_times_retry_number(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_LINEAR, 250 * MS, 1 * S));
    assert_int_equal(delay_for(&p, 1, NULL), 250 * MS);
    assert_int_equal(delay_for(&p, 2, NULL), 500 * MS);
    assert_int_equal(delay_for(&p, 3, NULL), 750 * MS);
    assert_int_equal(delay_for(&p, 4, NULL), 1 * S);
    assert_int_equal(delay_for(&p, 5, NULL), 1 * S);
    fb_retry_policy huge = policy(exact(FB_BACKOFF_LINEAR, INT64_MAX / 2, INT64_MAX));
    assert_int_equal(fb_retry_backoff(&huge, 999999), INT64_MAX);
}

static void retry_exponential_backoff_doubles_from_base_to_cap(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S));
    const fb_time_us want[] = {500 * MS, 1 * S,  2 * S,  4 * S, 8 * S,
                               16 * S,   32 * S, 60 * S, 60 * S};
    for (uint32_t n = 1; n <= 9; n++) {
        assert_int_equal(fb_retry_backoff(&p, n), want[n - 1]);
        assert_int_equal(delay_for(&p, n, NULL), want[n - 1]);
    }
    assert_int_equal(p.cap_retry, 8); /* 500 ms * 2^7 = 64 s is the first to reach 60 s */
}

static void retry_exponential_backoff_with_fractional_multiplier(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 10 * S);
    c.multiplier = 1.5;
    fb_retry_policy p = policy(c);
    assert_int_equal(fb_retry_backoff(&p, 1), 1000 * MS);
    assert_int_equal(fb_retry_backoff(&p, 2), 1500 * MS);
    assert_int_equal(fb_retry_backoff(&p, 3), 2250 * MS);
    assert_int_equal(fb_retry_backoff(&p, 4), 3375 * MS);
    assert_int_equal(fb_retry_backoff(&p, 7), 10 * S); /* 11.39 s capped */
}

static void retry_backoff_none_retries_immediately(void **state) {
    (void)state;
    fb_retry_config c = {.backoff = FB_BACKOFF_NONE, .attempts = 10};
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(2), untouched = seeded(2);
    assert_int_equal(delay_for(&p, 1, &r), 0);
    assert_int_equal(delay_for(&p, 9, &r), 0);
    assert_memory_equal(&r, &untouched, sizeof r);
}

static void retry_exponential_no_overflow_at_attempt_10000_aws_sdk_java_v2_1673(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S));
    assert_int_equal(fb_retry_backoff(&p, 10000), 60 * S);
    assert_int_equal(fb_retry_backoff(&p, 999999), 60 * S);
    assert_int_equal(fb_retry_backoff(&p, UINT32_MAX), 60 * S);
    assert_int_equal(delay_for(&p, 10000, NULL), 60 * S);
    assert_int_equal(delay_for(&p, FB_RETRY_ATTEMPTS_MAX - 1, NULL), 60 * S);

    /* The largest base and cap a config can hold, and a steep multiplier. */
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, INT64_MAX / 4, INT64_MAX);
    c.multiplier = 1000.0;
    fb_retry_policy big = policy(c);
    assert_int_equal(fb_retry_backoff(&big, 2), INT64_MAX);
    assert_int_equal(fb_retry_backoff(&big, 10000), INT64_MAX);

    /* Capped after jitter: the uncapped value at attempt 10,000 is far beyond a double. */
    fb_retry_config after_cfg = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    after_cfg.jitter = FB_JITTER_FULL;
    after_cfg.cap_order = FB_CAP_AFTER_JITTER;
    fb_retry_policy pa = policy(after_cfg);
    fb_rng r = seeded(3);
    for (int i = 0; i < 1000; i++) {
        fb_time_us d = delay_for(&pa, 10000 + (uint32_t)i, &r);
        assert_true(d >= 0 && d <= 60 * S);
    }
}

static void retry_decorrelated_no_overflow_at_large_attempts_polly_2163(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.jitter = FB_JITTER_DECORRELATED;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(4);
    fb_retry_state s = after(1, 0);
    fb_time_us now = 0;
    for (uint32_t n = 1; n < 5000; n++) {
        fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, now);
        assert_true(d.retry);
        assert_true(d.delay_us >= 500 * MS && d.delay_us <= 60 * S);
        now += d.delay_us;
    }
}

/* ---- jitter ------------------------------------------------------------------------------ */

static void retry_without_rng_jitter_behaves_as_none(void **state) {
    (void)state;
    const fb_jitter kinds[] = {FB_JITTER_FULL, FB_JITTER_EQUAL, FB_JITTER_DECORRELATED,
                               FB_JITTER_PROPORTIONAL};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
        c.jitter = kinds[i];
        fb_retry_policy p = policy(c);
        assert_int_equal(delay_for(&p, 3, NULL), 2 * S);
    }
}

/*
 * DRAWS delays for retry n under exponential 500 ms backoff with jitter j:
 * each must lie in [lo, hi]; returns their mean and, in min and max, the extremes.
 */
static double draw_stats(fb_jitter j, double fraction, uint32_t n, fb_time_us lo, fb_time_us hi,
                         fb_time_us *min, fb_time_us *max) {
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.jitter = j;
    c.jitter_fraction = fraction;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(5 + (uint64_t)j);
    double sum = 0;
    *min = INT64_MAX;
    *max = 0;
    for (int i = 0; i < DRAWS; i++) {
        fb_time_us d = delay_for(&p, n, &r);
        assert_true(d >= lo && d <= hi);
        sum += (double)d;
        *min = d < *min ? d : *min;
        *max = d > *max ? d : *max;
    }
    return sum / DRAWS;
}

static void retry_full_jitter_stays_within_zero_and_backoff(void **state) {
    (void)state;
    fb_time_us lo, hi;
    double mean = draw_stats(FB_JITTER_FULL, 0, 3, 0, 2 * S, &lo, &hi); /* backoff 2 s */
    assert_true(mean > 0.98 * S && mean < 1.02 * S);                    /* U(0, 2 s) has mean 1 s */
    assert_true(lo < 20 * MS && hi > 1980 * MS);                        /* it spans the interval */
}

static void retry_equal_jitter_keeps_half_the_backoff(void **state) {
    (void)state;
    fb_time_us lo, hi;
    double mean = draw_stats(FB_JITTER_EQUAL, 0, 4, 2 * S, 4 * S, &lo, &hi); /* backoff 4 s */
    assert_true(mean > 2.97 * S && mean < 3.03 * S);
    assert_true(lo < 2020 * MS && hi > 3980 * MS);
}

static void retry_proportional_jitter_stays_within_fraction(void **state) {
    (void)state;
    fb_time_us lo, hi;
    double mean = draw_stats(FB_JITTER_PROPORTIONAL, 0.2, 5, 6400 * MS, 9600 * MS, &lo, &hi);
    assert_true(mean > 7.95 * S && mean < 8.05 * S); /* backoff 8 s, +-20 % */
    assert_true(lo < 6450 * MS && hi > 9550 * MS);
}

static void retry_cap_before_jitter_never_exceeds_cap_openai_agents_python_2676(void **state) {
    (void)state;
    const fb_jitter kinds[] = {FB_JITTER_FULL, FB_JITTER_EQUAL, FB_JITTER_DECORRELATED,
                               FB_JITTER_PROPORTIONAL};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 10 * S);
        c.jitter = kinds[k];
        c.jitter_fraction = 0.5;
        c.cap_order = FB_CAP_BEFORE_JITTER;
        fb_retry_policy p = policy(c);
        fb_rng r = seeded(8 + k);
        for (uint32_t n = 1; n <= 40; n++) {
            for (int i = 0; i < 500; i++) {
                fb_time_us d = delay_for(&p, n, &r);
                assert_true(d >= 0 && d <= 10 * S);
            }
        }
    }
    /* Proportional at the cap draws inside [cap (1 - f), cap]: no pile-up on the cap. */
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 10 * S);
    c.jitter = FB_JITTER_PROPORTIONAL;
    c.jitter_fraction = 0.5;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(12);
    int at_cap = 0;
    for (int i = 0; i < DRAWS; i++) {
        fb_time_us d = delay_for(&p, 30, &r);
        assert_true(d >= 5 * S && d <= 10 * S);
        at_cap += d == 10 * S;
    }
    assert_true(at_cap < 10);
}

static void retry_cap_after_jitter_clamps_jittered_value_to_cap(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 10 * S);
    c.jitter = FB_JITTER_FULL;
    c.cap_order = FB_CAP_AFTER_JITTER;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(13);
    int at_cap = 0;
    for (int i = 0; i < DRAWS; i++) {
        fb_time_us d = delay_for(&p, 6, &r); /* uncapped 32 s: U(0, 32 s) then capped at 10 s */
        assert_true(d >= 0 && d <= 10 * S);
        at_cap += d == 10 * S;
    }
    /* P(U(0, 32) >= 10) = 0.6875; the capped-before order would put almost none there. */
    assert_true(at_cap > (int)(0.66 * DRAWS) && at_cap < (int)(0.71 * DRAWS));
}

static void retry_decorrelated_starts_at_base_and_grows_from_last_delay(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 60 * S);
    c.jitter = FB_JITTER_DECORRELATED;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(14);
    for (int i = 0; i < 2000; i++) {
        fb_retry_state s = after(1, 0);
        fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
        assert_true(d.delay_us >= 1 * S && d.delay_us <= 3 * S); /* U(base, 3 base) */
        assert_int_equal(s.prev_delay_us, d.delay_us);
        fb_time_us prev = d.delay_us;
        d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
        assert_true(d.delay_us >= 1 * S && d.delay_us <= 3 * prev);
    }
}

static void retry_decorrelated_prev_is_the_returned_delay_including_header(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 60 * S);
    c.jitter = FB_JITTER_DECORRELATED;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(15);
    fb_time_us hi = 0;
    for (int i = 0; i < 2000; i++) {
        fb_retry_state s = after(1, 0);
        fb_retry_decision d = fb_retry_next(&p, &s, &transient, 15 * S, NULL, &r, 0);
        assert_int_equal(d.delay_us, 15 * S); /* max(header, U(1 s, 3 s)) */
        assert_int_equal(s.prev_delay_us, 15 * S);
        d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
        assert_true(d.delay_us >= 1 * S && d.delay_us <= 45 * S); /* U(base, 3 * 15 s) */
        hi = d.delay_us > hi ? d.delay_us : hi;
    }
    assert_true(hi > 40 * S); /* the header raised the next range */
}

static void retry_draws_exactly_one_number_per_jittered_decision(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.jitter = FB_JITTER_FULL;
    c.retry_after = FB_RETRY_AFTER_AS_IS;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(16), model = seeded(16);
    fb_retry_state s = after(1, 0);
    (void)fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
    (void)fb_rng_uniform(&model);
    assert_memory_equal(&r, &model, sizeof r);
    /* Even when the header decides the delay: the stream does not shift with the reply. */
    (void)fb_retry_next(&p, &s, &transient, 2 * S, NULL, &r, 0);
    (void)fb_rng_uniform(&model);
    assert_memory_equal(&r, &model, sizeof r);

    fb_retry_policy none = policy(exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S));
    (void)fb_retry_next(&none, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
    assert_memory_equal(&r, &model, sizeof r);
}

/* ---- Retry-After policy ------------------------------------------------------------------ */

static fb_retry_decision next_with_hint(const fb_retry_config *c, fb_time_us hint_us) {
    fb_retry_policy p = policy(*c);
    fb_retry_state s = after(1, 0); /* backoff 500 ms */
    return fb_retry_next(&p, &s, &transient, hint_us, NULL, NULL, 0);
}

static void retry_after_max_takes_the_larger_of_header_and_backoff(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.retry_after = FB_RETRY_AFTER_MAX;
    assert_int_equal(next_with_hint(&c, 2 * S).delay_us, 2 * S);
    assert_int_equal(next_with_hint(&c, 100 * MS).delay_us, 500 * MS);
    assert_int_equal(next_with_hint(&c, 0).delay_us, 500 * MS);
    assert_int_equal(next_with_hint(&c, FB_TIME_NONE).delay_us, 500 * MS);
    assert_int_equal(next_with_hint(&c, -7).delay_us, 500 * MS); /* negative = absent */
}

static void retry_after_as_is_uses_the_header_when_present(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.retry_after = FB_RETRY_AFTER_AS_IS;
    assert_int_equal(next_with_hint(&c, 100 * MS).delay_us, 100 * MS);
    assert_int_equal(next_with_hint(&c, 0).delay_us, 0);
    assert_int_equal(next_with_hint(&c, 2 * S).delay_us, 2 * S);
    assert_int_equal(next_with_hint(&c, FB_TIME_NONE).delay_us, 500 * MS);
}

static void retry_after_ignore_uses_backoff_only(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.retry_after = FB_RETRY_AFTER_IGNORE;
    c.above_max = FB_ABOVE_MAX_GIVEUP;
    assert_int_equal(next_with_hint(&c, 2 * S).delay_us, 500 * MS);
    fb_retry_decision d = next_with_hint(&c, 3600 * S); /* ignored, so never above the cap */
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 500 * MS);
}

static void retry_after_above_cap_is_clamped_by_default(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.retry_after_us_max = 30 * S;
    fb_retry_decision d = next_with_hint(&c, 300 * S);
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 30 * S);
    c.retry_after = FB_RETRY_AFTER_AS_IS;
    assert_int_equal(next_with_hint(&c, 300 * S).delay_us, 30 * S);
}

static void retry_after_above_cap_gives_up_when_configured(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.retry_after_us_max = 120 * S; /* openai-python >= 3.3.1 */
    c.above_max = FB_ABOVE_MAX_GIVEUP;
    fb_retry_decision d = next_with_hint(&c, 120 * S + 1);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_RETRY_AFTER_CAP);
    d = next_with_hint(&c, 120 * S); /* at the cap is still honoured */
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 120 * S);
}

/* ---- deadline ---------------------------------------------------------------------------- */

static void retry_deadline_at_the_exact_boundary_gives_up(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S);
    c.deadline_us = 10 * S;
    fb_retry_policy p = policy(c);
    fb_retry_state s = after(1, 2 * S); /* deadline at 12 s */
    /* The retry would start at 12 s exactly: it could not finish before the deadline. */
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 11 * S);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_DEADLINE);
    d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, 11 * S - 1);
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 1 * S);
}

static void retry_deadline_counts_the_header_delay(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S);
    c.deadline_us = 10 * S;
    fb_retry_policy p = policy(c);
    fb_retry_state s = after(1, 0);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, 20 * S, NULL, NULL, 1 * S);
    assert_int_equal(d.reason, FB_GIVEUP_DEADLINE);
}

static void retry_deadline_zero_means_none(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S));
    fb_retry_state s = after(1, 0);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, NULL, INT64_MAX);
    assert_true(d.retry);
}

/* ---- budgets, through fb_retry_next() ---------------------------------------------------- */

static fb_budget budget(fb_budget_config cfg) {
    fb_budget b;
    assert_int_equal(fb_budget_init(&b, &cfg), FB_OK);
    return b;
}

static void budget_retry_next_charges_every_retryable_failure_grpc_a6(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S);
    c.attempts = 2;
    fb_retry_policy p = policy(c);
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET});
    fb_retry_state s = after(2, 0); /* attempts exhausted: the failure still counts */
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0);
    assert_int_equal(d.reason, FB_GIVEUP_ATTEMPTS);
    assert_true(fb_budget_tokens(&b) == 9.0);
    d = fb_retry_next(&p, &s, &permanent, FB_TIME_NONE, &b, NULL, 0); /* not retryable: no */
    assert_true(fb_budget_tokens(&b) == 9.0);
    const fb_budget_stats *st = fb_budget_stats_get(&b);
    assert_int_equal(st->allowed + st->refused, 0); /* nothing was withdrawn */
}

static void budget_token_bucket_refuses_through_retry_next(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S));
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 4});
    fb_retry_state s = after(1, 0);
    /* 4 -> 3 (> 2: retry), 3 -> 2 (not > 2: budget). */
    assert_true(fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0).retry);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_BUDGET);
    assert_int_equal(s.budget_withdrawn, 0); /* a token bucket takes nothing per retry */
}

static void budget_quota_refunds_what_the_last_retry_took(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S));
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 100});
    fb_retry_state s = after(1, 0);
    assert_int_equal(s.budget_withdrawn, 0);
    assert_true(fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0).retry);
    assert_int_equal(s.budget_withdrawn, 5);
    assert_true(fb_retry_next(&p, &s, &timed_out, FB_TIME_NONE, &b, NULL, 1 * S).retry);
    assert_int_equal(s.budget_withdrawn, 10);
    assert_int_equal(fb_budget_available(&b), 85);
    fb_budget_on_success(&b, &s); /* botocore: the last acquired amount comes back */
    assert_int_equal(fb_budget_available(&b), 95);
}

static void budget_quota_drained_refills_with_successes_aws_sdk_go_v2_3550(void **state) {
    (void)state;
    fb_retry_policy p = policy(exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S));
    fb_budget b =
        budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 50, .no_retry_refund = 1});
    /* An outage drains the quota: ten retries, then every retry is refused. */
    for (int i = 0; i < 10; i++) {
        fb_retry_state s = after(1, 0);
        assert_true(fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0).retry);
    }
    assert_int_equal(fb_budget_available(&b), 0);
    fb_retry_state s = after(1, 0);
    assert_int_equal(fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0).reason,
                     FB_GIVEUP_BUDGET);
    /* The provider recovers: successes without retries refill it one unit each. */
    for (int i = 0; i < 5; i++) fb_budget_on_success(&b, NULL);
    s = after(1, 0);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 0);
    assert_true(d.retry);
    assert_int_equal(fb_budget_available(&b), 0);
    /* That request then succeeds and returns its 5: the quota is never stuck at zero. */
    fb_budget_on_success(&b, &s);
    assert_int_equal(fb_budget_available(&b), 5);
    for (int i = 0; i < 1000; i++) fb_budget_on_success(&b, NULL);
    assert_int_equal(fb_budget_available(&b), 50);
}

static void budget_not_charged_when_another_check_refuses(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_CONSTANT, 1 * S, 60 * S);
    c.deadline_us = 5 * S;
    c.retry_after_us_max = 30 * S;
    c.above_max = FB_ABOVE_MAX_GIVEUP;
    fb_retry_policy p = policy(c);
    fb_budget b = budget((fb_budget_config){.kind = FB_BUDGET_QUOTA, .capacity = 100});
    fb_retry_state s = after(1, 0);
    fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, &b, NULL, 4 * S);
    assert_int_equal(d.reason, FB_GIVEUP_DEADLINE);
    d = fb_retry_next(&p, &s, &transient, 31 * S, &b, NULL, 0);
    assert_int_equal(d.reason, FB_GIVEUP_RETRY_AFTER_CAP);
    assert_int_equal(fb_budget_available(&b), 100);
    assert_int_equal(fb_budget_stats_get(&b)->allowed + fb_budget_stats_get(&b)->refused, 0);
    assert_int_equal(s.budget_withdrawn, 0);
}

static void giveup_names_are_stable(void **state) {
    (void)state;
    assert_string_equal(fb_giveup_name(FB_GIVEUP_NONE), "none");
    assert_string_equal(fb_giveup_name(FB_GIVEUP_NOT_RETRYABLE), "not_retryable");
    assert_string_equal(fb_giveup_name(FB_GIVEUP_ATTEMPTS), "attempts");
    assert_string_equal(fb_giveup_name(FB_GIVEUP_DEADLINE), "deadline");
    assert_string_equal(fb_giveup_name(FB_GIVEUP_BUDGET), "budget");
    assert_string_equal(fb_giveup_name(FB_GIVEUP_RETRY_AFTER_CAP), "retry_after_cap");
    assert_string_equal(fb_giveup_name((fb_giveup)99), "unknown");
}

/* Envoy's rate-limited back-off: jitter upward from the header, never below it. */
static void retry_after_jitter_spreads_clients_above_the_header(void **state) {
    (void)state;
    fb_retry_config cfg = exact(FB_BACKOFF_CONSTANT, 100 * MS, 60 * S);
    cfg.retry_after = FB_RETRY_AFTER_MAX;
    fb_retry_policy plain = policy(cfg);
    cfg.retry_after_jitter = 0.5;
    fb_retry_policy spread = policy(cfg);
    fb_rng rng = seeded(77);
    fb_time_us lo = FB_TIME_MAX, hi = 0;
    double sum = 0;
    for (int i = 0; i < DRAWS; i++) {
        fb_retry_state s = after(1, 0);
        fb_retry_decision d = fb_retry_next(&plain, &s, &transient, 2 * S, NULL, &rng, 0);
        assert_int_equal(d.delay_us, 2 * S); /* without it everyone returns together */
        s = after(1, 0);
        d = fb_retry_next(&spread, &s, &transient, 2 * S, NULL, &rng, 0);
        assert_true(d.retry);
        if (d.delay_us < lo) lo = d.delay_us;
        if (d.delay_us > hi) hi = d.delay_us;
        sum += (double)d.delay_us;
    }
    assert_true(lo >= 2 * S);
    assert_true(hi <= 3 * S);
    assert_true(lo < 2 * S + 50 * MS && hi > 3 * S - 50 * MS);
    assert_in_range((int64_t)(sum / DRAWS), 2450 * MS, 2550 * MS);
    /* when the backoff is longer than the header, the backoff stands unjittered */
    fb_retry_state s = after(1, 0);
    fb_retry_decision d = fb_retry_next(&spread, &s, &transient, 10 * MS, NULL, &rng, 0);
    assert_int_equal(d.delay_us, 100 * MS);
    cfg.retry_after_jitter = -1;
    fb_retry_policy bad;
    assert_int_equal(fb_retry_policy_init(&bad, &cfg), FB_ERANGE);
}

/* ---- library forms (docs/retry.md "Library semantics") ---------------------------------- */

/* The delay for retry n with rng `r`, and the uniform draw it used (from a copy of r). */
static fb_time_us drawn_delay(const fb_retry_policy *p, uint32_t n, uint64_t stream, double *u) {
    fb_rng r = seeded(stream), model = seeded(stream);
    *u = fb_rng_uniform(&model);
    return delay_for(p, n, &r);
}

/* resilience4j IntervalFunction.ofExponentialBackoff: x -> (long)(x * multiplier), in ms. */
static void retry_resilience4j_exponential_truncates_each_step(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.multiplier = 1.5;
    c.resolution_us = 1 * MS;
    fb_retry_policy p = policy(c);
    const fb_time_us want_ms[] = {500, 750, 1125, 1687, 2530, 3795}; /* not 1687.5, 2531.25 */
    for (uint32_t n = 1; n <= 6; n++)
        assert_int_equal(fb_retry_backoff(&p, n), want_ms[n - 1] * MS);
    c.resolution_us = 0; /* exact growth: microseconds */
    p = policy(c);
    assert_int_equal(fb_retry_backoff(&p, 4), 1687500);
    assert_int_equal(fb_retry_backoff(&p, 5), 2531250);
}

/*
 * fb_retry_delay_at: the delay at a given draw. resilience4j randomize() computes in whole ms:
 * 1100 ms, factor 0.9 at the largest draw is 110 + (1 - 2^-53) * 1981, which rounds to 2091.0
 * in doubles (recorded from resilience4j 2.4.0); in microseconds it would stay below 2091 ms.
 */
static void retry_delay_at_gives_the_range_in_the_library_units(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1000 * MS, 60 * S);
    c.multiplier = 1.1;
    c.jitter = FB_JITTER_RANDOMIZED;
    c.jitter_fraction = 0.9;
    c.resolution_us = 1 * MS;
    c.cap_order = FB_CAP_AFTER_JITTER;
    fb_retry_policy p = policy(c);
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    assert_int_equal(fb_retry_delay_at(&p, &st, 2, 0.0), 110 * MS);
    assert_int_equal(fb_retry_delay_at(&p, &st, 2, 1.0 - 0x1.0p-53), 2091 * MS);
    assert_int_equal(fb_retry_delay_at(&p, &st, 2, 0.5), (fb_time_us)floor(110 + 0.5 * 1981) * MS);
    c.jitter = FB_JITTER_NONE; /* no jitter: the backoff whatever the draw */
    p = policy(c);
    assert_int_equal(fb_retry_delay_at(&p, &st, 2, 0.7), 1100 * MS);
}

/* resilience4j randomize(): min + random * (max - min + 1), then (long): the +1 quirk. */
static void retry_resilience4j_randomized_adds_one_unit(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, 60 * S);
    c.multiplier = 1.5;
    c.jitter = FB_JITTER_RANDOMIZED;
    c.jitter_fraction = 0.5;
    c.resolution_us = 1 * MS;
    c.cap_order = FB_CAP_AFTER_JITTER; /* ofExponentialRandomBackoff: jitter, then min(max) */
    fb_retry_policy p = policy(c);
    for (uint64_t k = 0; k < 200; k++) {
        double u = 0;
        fb_time_us d = drawn_delay(&p, 2, k, &u); /* 750 ms: [375, 1125 + 1) ms, truncated */
        assert_int_equal(d, (fb_time_us)floor((375.0 + u * 751.0)) * MS);
    }
    c.jitter_fraction = 1e-9; /* no spread: the extra unit never reaches the next ms */
    p = policy(c);
    double u = 0;
    assert_int_equal(drawn_delay(&p, 3, 7, &u), 1125 * MS);
}

/* openai-python/-node, anthropic-python: min(0.5 * 2^n, 8) * (1 - 0.25 * random()). */
static void retry_stainless_sdk_backoff_and_retry_after(void **state) {
    (void)state;
    fb_retry_config c = {.attempts = 3,
                         .base_us = 500 * MS,
                         .delay_us_max = 8 * S,
                         .jitter = FB_JITTER_DOWN,
                         .jitter_fraction = 0.25,
                         .retry_after = FB_RETRY_AFTER_AS_IS,
                         .retry_after_us_max = 60 * S,
                         .above_max = FB_ABOVE_MAX_BACKOFF,
                         .ignore_zero_hint = FB_ON};
    c.attempts = FB_RETRY_ATTEMPTS_MAX;
    fb_retry_policy p = policy(c);
    double u = 0;
    fb_time_us d = drawn_delay(&p, 2, 3, &u);
    assert_int_equal(d, (fb_time_us)(1.0 * S * (1.0 - 0.25 * u)));
    d = drawn_delay(&p, 6, 4, &u); /* 0.5 * 2^5 = 16 s, capped at 8 s first */
    assert_int_equal(d, (fb_time_us)(8.0 * S * (1.0 - 0.25 * u)));
    /* Retry-After: 0 < d <= 60 s honoured as is; above, or 0, the backoff (no rng: 500 ms). */
    assert_int_equal(next_with_hint(&c, 30 * S).delay_us, 30 * S);
    assert_int_equal(next_with_hint(&c, 60 * S).delay_us, 60 * S);
    assert_int_equal(next_with_hint(&c, 60 * S + 1).delay_us, 500 * MS);
    assert_int_equal(next_with_hint(&c, 0).delay_us, 500 * MS);
    c.ignore_zero_hint = FB_OFF; /* openai-node: 0 <= d */
    assert_int_equal(next_with_hint(&c, 0).delay_us, 0);
    /* openai-python >= 2.52 (PR #3555): up to 120 s honoured, above not retried at all. */
    c.retry_after_us_max = 120 * S;
    c.above_max = FB_ABOVE_MAX_GIVEUP;
    assert_int_equal(next_with_hint(&c, 120 * S).delay_us, 120 * S);
    assert_int_equal(next_with_hint(&c, 120 * S + 1).reason, FB_GIVEUP_RETRY_AFTER_CAP);
    /* anthropic-sdk-typescript: any value honoured, no cap. */
    c.retry_after_us_max = FB_TIME_MAX;
    assert_int_equal(next_with_hint(&c, 3600 * S).delay_us, 3600 * S);
}

/* Vercel AI SDK: 2000 * 2^n ms, no jitter; a header honoured below 60 s or below the backoff. */
static void retry_vercel_ai_sdk_backoff_and_retry_after(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 2 * S, FB_TIME_MAX);
    c.retry_after = FB_RETRY_AFTER_AS_IS;
    c.retry_after_us_max = 60 * S - 1; /* ms < 60 * 1000 */
    c.above_max = FB_ABOVE_MAX_BACKOFF;
    fb_retry_policy p = policy(c);
    assert_int_equal(delay_for(&p, 1, NULL), 2 * S);
    assert_int_equal(delay_for(&p, 2, NULL), 4 * S);
    assert_int_equal(next_with_hint(&c, 59 * S).delay_us, 59 * S);
    fb_retry_state s = after(1, 0);
    assert_int_equal(fb_retry_next(&p, &s, &transient, 60 * S, NULL, NULL, 0).delay_us, 2 * S);
    s = after(6, 0); /* backoff 64 s: a 61 s header is shorter, so honoured */
    assert_int_equal(fb_retry_next(&p, &s, &transient, 61 * S, NULL, NULL, 0).delay_us, 61 * S);
    s = after(6, 0);
    assert_int_equal(fb_retry_next(&p, &s, &transient, 70 * S, NULL, NULL, 0).delay_us, 64 * S);
}

/* tenacity wait_exponential_jitter: min(max, initial * exp_base^(n-1) + U(0, jitter)). */
static void retry_tenacity_exponential_jitter_adds_then_caps(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 10 * S);
    c.jitter = FB_JITTER_ADDITIVE;
    c.jitter_us = 1 * S;
    c.cap_order = FB_CAP_AFTER_JITTER;
    fb_retry_policy p = policy(c);
    double u = 0;
    fb_time_us d = drawn_delay(&p, 3, 5, &u);
    assert_int_equal(d, (fb_time_us)(4.0 * S + u * 1.0 * S));
    assert_int_equal(drawn_delay(&p, 4, 5, &u), 8 * S + (fb_time_us)(u * 1.0 * S) < 10 * S
                                                    ? 8 * S + (fb_time_us)(u * 1.0 * S)
                                                    : 10 * S);
    assert_int_equal(drawn_delay(&p, 5, 5, &u), 10 * S); /* 16 s + jitter, capped */
}

/* tenacity wait_exponential_jitter(jitter=0) adds uniform(0, 0): one draw, nothing added. */
static void retry_additive_jitter_none_draws_and_adds_nothing(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, 10 * S);
    c.jitter = FB_JITTER_ADDITIVE;
    c.jitter_us = FB_TIME_NONE;
    c.cap_order = FB_CAP_AFTER_JITTER;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(9), model = seeded(9);
    assert_int_equal(delay_for(&p, 3, &r), 4 * S);
    (void)fb_rng_uniform(&model); /* the draw was made: both streams are one draw on */
    assert_true(fb_rng_u64(&r) == fb_rng_u64(&model));
    c.jitter_us = -2; /* other negative values stay invalid */
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
}

/* tenacity wait_random_exponential(multiplier=0.5, exp_base=1.5): uniform(0, 8542968.75 us). */
static void retry_cap_before_jitter_exact_keeps_the_fraction(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500 * MS, FB_TIME_MAX);
    c.multiplier = 1.5;
    c.jitter = FB_JITTER_FULL;
    c.cap_order = FB_CAP_BEFORE_JITTER_EXACT;
    fb_retry_policy p = policy(c);
    double u = 0;
    for (uint64_t k = 0; k < 50; k++) {
        fb_time_us d = drawn_delay(&p, 8, k, &u);
        assert_int_equal(d, (fb_time_us)(8542968.75 * u)); /* not 8542968 * u */
    }
    c.delay_us_max = 2 * S; /* capped before the draw: uniform(0, 2 s) */
    p = policy(c);
    fb_time_us capped = drawn_delay(&p, 8, 3, &u);
    assert_int_equal(capped, (fb_time_us)(2.0 * S * u));
}

/* cockatiel halfJitterGenerator, initialDelay 0.5 ms: floor((d + U d) / 2) ms of d = 0.5 * 2^k. */
static void retry_resolution_delay_only_grows_unrounded(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 500, 30 * S);
    c.jitter = FB_JITTER_EQUAL;
    c.resolution_us = 1 * MS;
    c.resolution_delay_only = FB_ON;
    fb_retry_policy p = policy(c);
    double u = 0;
    for (uint64_t k = 0; k < 50; k++) {
        fb_time_us d = drawn_delay(&p, 3, k, &u); /* 2 ms: floor(1 + u) ms = 1 ms */
        assert_int_equal(d, (fb_time_us)floor((2.0 + u * 2.0) / 2.0) * MS);
    }
    c.resolution_delay_only = FB_DEFAULT; /* each step rounded: 0.5 ms is 0, and stays 0 */
    p = policy(c);
    assert_int_equal(drawn_delay(&p, 3, 0, &u), 0);
}

/* LangChain JS AsyncCaller -> p-retry 4 -> retry: Math.round((random + 1) * 1000 * 2^k). */
static void retry_p_retry_randomize_rounds_to_ms(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 1 * S, FB_TIME_MAX);
    c.jitter = FB_JITTER_UP;
    c.jitter_fraction = 1.0;
    c.resolution_us = 1 * MS;
    c.rounding = FB_ROUND_NEAREST;
    c.cap_order = FB_CAP_AFTER_JITTER;
    fb_retry_policy p = policy(c);
    for (uint64_t k = 0; k < 200; k++) {
        double u = 0;
        fb_time_us d = drawn_delay(&p, 3, k, &u); /* [4000, 8000] ms */
        assert_int_equal(d, (fb_time_us)floor((1.0 + u) * 4000.0 + 0.5) * MS);
    }
}

/* Polly v8 exponential with UseJitter, and cockatiel's ExponentialBackoff: decorrelated V2. */
static void retry_decorrelated_v2_follows_pollys_formula(void **state) {
    (void)state;
    fb_retry_config c = exact(FB_BACKOFF_EXPONENTIAL, 2 * S, FB_TIME_MAX);
    c.jitter = FB_JITTER_DECORRELATED_V2;
    fb_retry_policy p = policy(c);
    fb_rng r = seeded(21), model = seeded(21);
    fb_retry_state s = after(1, 0);
    double prev = 0.0;
    for (uint32_t k = 0; k < 6; k++) {
        double t = (double)k + fb_rng_uniform(&model);
        double next = pow(2.0, t) * tanh(sqrt(4.0 * t));
        fb_time_us want = (fb_time_us)((next - prev) * (1.0 / 1.4) * (double)(2 * S));
        prev = next;
        fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
        assert_int_equal(d.delay_us, want);
        assert_true(s.jitter_state == next);
    }
    /* Polly: the first retry falls in [0, 2^1 f) = [0, 4 s) for base f = 2 s. */
    for (uint64_t k = 0; k < 500; k++) {
        double u = 0;
        fb_time_us d = drawn_delay(&p, 1, 100 + k, &u);
        assert_true(d >= 0 && d < 4 * S);
    }
    c.delay_us_max = 30 * S; /* cockatiel maxDelay; Polly MaxDelay: capped after */
    p = policy(c);
    s = after(1, 0);
    for (int k = 0; k < 20; k++) {
        fb_retry_decision d = fb_retry_next(&p, &s, &transient, FB_TIME_NONE, NULL, &r, 0);
        assert_true(d.delay_us >= 0 && d.delay_us <= 30 * S);
    }
}

static void retry_policy_rejects_unknown_forms(void **state) {
    (void)state;
    fb_retry_policy p;
    fb_retry_config c = {.above_max = (fb_above_max)3};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.rounding = (fb_rounding)2};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.resolution_us = -1};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.jitter_us = -2};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
    c = (fb_retry_config){.ignore_zero_hint = (fb_switch)3};
    assert_int_equal(fb_retry_policy_init(&p, &c), FB_EINVAL);
}

/*
 * A policy with nothing to decide but the count (no backoff, Retry-After ignored, no deadline)
 * takes fb_retry_next's short way: the same decisions, and the same state after each, as the
 * same policy with a deadline too far to matter, which takes the long way.
 */
static void retry_plain_policy_decides_as_the_long_way(void **state) {
    (void)state;
    fb_retry_config c = {.attempts = 6,
                         .backoff = FB_BACKOFF_NONE,
                         .retry_after = FB_RETRY_AFTER_IGNORE,
                         .hint_whole_seconds = FB_ON,
                         .ignore_zero_hint = FB_ON,
                         .hint_zeroes_backoff = FB_ON};
    fb_retry_policy plain = policy(c);
    c.deadline_us = INT64_MAX / 4;
    fb_retry_policy longer = policy(c);
    assert_true(plain.plain);
    assert_false(longer.plain);
    c.deadline_us = 0;
    c.rate_limit_needs_hint = FB_ON; /* a 429 without a header gives up: a decision */
    assert_false(policy(c).plain);
    c.rate_limit_needs_hint = FB_OFF;
    c.retry_after = FB_RETRY_AFTER_MAX;
    assert_false(policy(c).plain);
    c.retry_after = FB_RETRY_AFTER_IGNORE;
    c.backoff = FB_BACKOFF_CONSTANT;
    assert_false(policy(c).plain);

    const fb_class limited = {.outcome = FB_OUT_RATE_LIMITED,
                              .retryable = true,
                              .effect = FB_EFFECT_FAILURE,
                              .may_fallback = true};
    fb_class own = transient;
    own.attempts = 3; /* the request's first failure sets its own attempts */
    const fb_class *seq[] = {&own, &limited, &timed_out, &transient, &transient, &permanent};
    const fb_time_us hints[] = {FB_TIME_NONE, 0, 1500 * MS, 2 * S, FB_TIME_NONE, 5 * S};
    for (int first = 0; first < 2; first++) {
        fb_retry_state a, b;
        fb_retry_begin(&a, 7 * S);
        fb_retry_begin(&b, 7 * S);
        for (size_t i = (size_t)first; i < sizeof seq / sizeof *seq; i++) {
            fb_time_us now = 7 * S + (fb_time_us)i * S;
            fb_retry_decision x = fb_retry_next(&plain, &a, seq[i], hints[i], NULL, NULL, now);
            fb_retry_decision y = fb_retry_next(&longer, &b, seq[i], hints[i], NULL, NULL, now);
            assert_int_equal(x.retry, y.retry);
            assert_int_equal(x.delay_us, y.delay_us);
            assert_int_equal(x.reason, y.reason);
            assert_int_equal(a.attempt, b.attempt);
            assert_int_equal(a.attempts_max, b.attempts_max);
            assert_int_equal(a.prev_delay_us, b.prev_delay_us);
            assert_int_equal(a.hint_total_us, b.hint_total_us);
            assert_int_equal(a.hint_honoured, b.hint_honoured);
            assert_true(a.jitter_state == b.jitter_state);
        }
        assert_int_equal(a.attempts_max, first ? 0 : 3);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_after_jitter_spreads_clients_above_the_header),
        cmocka_unit_test(retry_policy_zero_config_gets_documented_defaults),
        cmocka_unit_test(retry_policy_rejects_impossible_config),
        cmocka_unit_test(retry_single_attempt_never_retries),
        cmocka_unit_test(retry_three_attempts_give_exactly_two_retries),
        cmocka_unit_test(retry_begin_sets_start_and_counts_nothing),
        cmocka_unit_test(retry_next_counts_each_failed_attempt_once),
        cmocka_unit_test(retry_retries_count_the_calls_after_the_first),
        cmocka_unit_test(retry_not_retryable_outcome_gives_up_first),
        cmocka_unit_test(retry_exhausted_attempts_draw_nothing),
        cmocka_unit_test(retry_constant_backoff_is_base_every_time),
        cmocka_unit_test(retry_linear_backoff_is_base_times_retry_number),
        cmocka_unit_test(retry_exponential_backoff_doubles_from_base_to_cap),
        cmocka_unit_test(retry_exponential_backoff_with_fractional_multiplier),
        cmocka_unit_test(retry_backoff_none_retries_immediately),
        cmocka_unit_test(retry_exponential_no_overflow_at_attempt_10000_aws_sdk_java_v2_1673),
        cmocka_unit_test(retry_decorrelated_no_overflow_at_large_attempts_polly_2163),
        cmocka_unit_test(retry_without_rng_jitter_behaves_as_none),
        cmocka_unit_test(retry_full_jitter_stays_within_zero_and_backoff),
        cmocka_unit_test(retry_equal_jitter_keeps_half_the_backoff),
        cmocka_unit_test(retry_proportional_jitter_stays_within_fraction),
        cmocka_unit_test(retry_cap_before_jitter_never_exceeds_cap_openai_agents_python_2676),
        cmocka_unit_test(retry_cap_after_jitter_clamps_jittered_value_to_cap),
        cmocka_unit_test(retry_decorrelated_starts_at_base_and_grows_from_last_delay),
        cmocka_unit_test(retry_decorrelated_prev_is_the_returned_delay_including_header),
        cmocka_unit_test(retry_draws_exactly_one_number_per_jittered_decision),
        cmocka_unit_test(retry_after_max_takes_the_larger_of_header_and_backoff),
        cmocka_unit_test(retry_after_as_is_uses_the_header_when_present),
        cmocka_unit_test(retry_after_ignore_uses_backoff_only),
        cmocka_unit_test(retry_after_above_cap_is_clamped_by_default),
        cmocka_unit_test(retry_after_above_cap_gives_up_when_configured),
        cmocka_unit_test(retry_deadline_at_the_exact_boundary_gives_up),
        cmocka_unit_test(retry_deadline_counts_the_header_delay),
        cmocka_unit_test(retry_deadline_zero_means_none),
        cmocka_unit_test(budget_retry_next_charges_every_retryable_failure_grpc_a6),
        cmocka_unit_test(budget_token_bucket_refuses_through_retry_next),
        cmocka_unit_test(budget_quota_refunds_what_the_last_retry_took),
        cmocka_unit_test(budget_quota_drained_refills_with_successes_aws_sdk_go_v2_3550),
        cmocka_unit_test(budget_not_charged_when_another_check_refuses),
        cmocka_unit_test(giveup_names_are_stable),
        cmocka_unit_test(retry_resilience4j_exponential_truncates_each_step),
        cmocka_unit_test(retry_resilience4j_randomized_adds_one_unit),
        cmocka_unit_test(retry_delay_at_gives_the_range_in_the_library_units),
        cmocka_unit_test(retry_stainless_sdk_backoff_and_retry_after),
        cmocka_unit_test(retry_vercel_ai_sdk_backoff_and_retry_after),
        cmocka_unit_test(retry_tenacity_exponential_jitter_adds_then_caps),
        cmocka_unit_test(retry_additive_jitter_none_draws_and_adds_nothing),
        cmocka_unit_test(retry_cap_before_jitter_exact_keeps_the_fraction),
        cmocka_unit_test(retry_resolution_delay_only_grows_unrounded),
        cmocka_unit_test(retry_p_retry_randomize_rounds_to_ms),
        cmocka_unit_test(retry_decorrelated_v2_follows_pollys_formula),
        cmocka_unit_test(retry_policy_rejects_unknown_forms),
        cmocka_unit_test(retry_plain_policy_decides_as_the_long_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
