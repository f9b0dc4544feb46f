/*
 * test_breaker.c - the circuit breaker's contract (core/breaker.h), one case per
 * rule and per decision of docs/breaker.md ("Decisions, and why"). Time is data:
 * every call passes an explicit now_us and every assertion is exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "core/breaker.h"
#include "tests/unit/helpers.h"

#define LOG_MAX 32

typedef struct ev_log {
    fb_breaker_event ev[LOG_MAX];
    int n;
} ev_log;

static void log_event(void *ctx, const fb_breaker_event *ev) {
    ev_log *l = ctx;
    if (l->n < LOG_MAX) l->ev[l->n] = *ev;
    l->n++;
}

static void init_ok(fb_breaker *b, fb_breaker_config *cfg, ev_log *log, fb_time_us now_us) {
    if (log) {
        *log = (ev_log){0};
        cfg->on_event = log_event;
        cfg->event_ctx = log;
    }
    assert_int_equal(fb_breaker_init(b, cfg, now_us), FB_OK);
}

static fb_breaker_permit admit(fb_breaker *b, fb_time_us now_us) {
    fb_breaker_permit p;
    assert_true(fb_breaker_allow(b, now_us, &p));
    return p;
}

static void reject(fb_breaker *b, fb_time_us now_us) {
    fb_breaker_permit p;
    assert_false(fb_breaker_allow(b, now_us, &p));
    assert_int_equal(p.kind, FB_PERMIT_REJECTED);
}

static void report(fb_breaker *b, const fb_breaker_permit *p, fb_effect e, fb_time_us now_us) {
    fb_breaker_record(
        b, p, &(fb_breaker_result){.effect = e, .duration_us = 0, .hint_us = FB_TIME_NONE}, now_us);
}

/* allow() then record() at the same instant. */
static void call(fb_breaker *b, fb_effect e, fb_time_us now_us) {
    fb_breaker_permit p = admit(b, now_us);
    report(b, &p, e, now_us);
}

static void calls(fb_breaker *b, fb_effect e, int n, fb_time_us now_us) {
    for (int i = 0; i < n; i++) call(b, e, now_us);
}

static void timed_call(fb_breaker *b, fb_effect e, fb_time_us duration_us, fb_time_us now_us) {
    fb_breaker_permit p = admit(b, now_us);
    fb_breaker_record(
        b, &p,
        &(fb_breaker_result){.effect = e, .duration_us = duration_us, .hint_us = FB_TIME_NONE},
        now_us);
}

#define assert_state(b, s) assert_int_equal(fb_breaker_state_get(b), (s))

static void assert_event(const fb_breaker_event *ev, fb_breaker_state from, fb_breaker_state to,
                         fb_breaker_cause cause, fb_time_us at_us) {
    assert_int_equal(ev->from, from);
    assert_int_equal(ev->to, to);
    assert_int_equal(ev->cause, cause);
    assert_int_equal(ev->at_us, at_us);
}

static fb_breaker_config count_cfg(uint32_t window_calls, uint32_t minimum_calls) {
    return (fb_breaker_config){.mode = FB_BREAKER_MODE_COUNT_WINDOW,
                               .window_calls = window_calls,
                               .minimum_calls = minimum_calls};
}

/* Trip a count-window breaker (window 4, minimum 4, rate 0.5) at t with four failures. */
static void trip_count4(fb_breaker *b, fb_breaker_config *cfg, ev_log *log, fb_time_us t) {
    cfg->mode = FB_BREAKER_MODE_COUNT_WINDOW;
    cfg->window_calls = 4;
    cfg->minimum_calls = 4;
    init_ok(b, cfg, log, 0);
    calls(b, FB_EFFECT_FAILURE, 4, t);
    assert_state(b, FB_BREAKER_OPEN);
}

/* ---- init ---- */

static void breaker_init_applies_defaults(void **state) {
    (void)state;
    fb_breaker b;
    assert_int_equal(fb_breaker_init(&b, NULL, 0), FB_OK);
    assert_int_equal(b.cfg.mode, FB_BREAKER_MODE_CONSECUTIVE);
    assert_int_equal(b.cfg.consecutive_failures, 5);
    assert_int_equal(b.cfg.window_calls, 100);
    assert_int_equal(b.cfg.window_us, 60 * S);
    assert_int_equal(b.cfg.window_buckets, 10);
    assert_int_equal(b.cfg.minimum_calls, 100);
    assert_true(b.cfg.failure_rate == 0.5);
    assert_true(b.cfg.slow_rate == 1.0);
    assert_int_equal(b.cfg.slow_us, 0);
    assert_int_equal(b.cfg.half_open_permits, 1);
    assert_int_equal(b.cfg.open_us, 60 * S);
    assert_int_equal(b.cfg.probe_lease_us, 60 * S);
    assert_int_equal(b.cfg.open_us_max, 600 * S);
    assert_int_equal(b.cfg.honor_hint, FB_OFF); /* the zero rule: no waiting for hints */
    assert_int_equal(b.cfg.late_results, FB_LATE_DROP);
    assert_int_equal(b.cfg.probe_limit, FB_PROBES_CONCURRENT);
    assert_int_equal(b.cfg.probe_verdict, FB_VERDICT_FIRST_FAILURE);
    assert_int_equal(b.cfg.open_deadline, FB_CMP_REACH);
    assert_int_equal(b.cfg.trip_compare, FB_CMP_REACH);
    assert_int_equal(b.cfg.evaluate, FB_EVAL_EVERY_RECORD);
    assert_int_equal(b.cfg.bucket_anchor, FB_BUCKETS_EPOCH);
    assert_int_equal(b.cfg.cancelled_as, FB_EFFECT_IGNORE);
    assert_int_equal(b.cfg.half_open_max_us, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(fb_breaker_generation(&b), 1);
    assert_int_equal(fb_breaker_open_until(&b), FB_TIME_NONE);

    fb_breaker_config cfg = {.open_us = 5 * S};
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_OK);
    assert_int_equal(b.cfg.probe_lease_us, 5 * S);
    assert_int_equal(b.cfg.open_us_max, 50 * S);
    cfg = (fb_breaker_config){.open_us = FB_TIME_MAX / 2};
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_OK);
    assert_int_equal(b.cfg.open_us_max, FB_TIME_MAX);
}

static void breaker_init_rejects_invalid_config(void **state) {
    (void)state;
    fb_rng rng;
    fb_rng_seed(&rng, 1, 1);
    const double nan = NAN;
    struct {
        fb_breaker_config cfg;
        int rc;
    } cases[] = {
        {{.failure_rate = -0.1}, FB_ERANGE},
        {{.failure_rate = 1.0000001}, FB_ERANGE},
        {{.failure_rate = nan}, FB_ERANGE},
        {{.slow_rate = 1.5}, FB_ERANGE},
        {{.slow_rate = -1.0}, FB_ERANGE},
        {{.window_calls = FB_BREAKER_CALLS_MAX + 1}, FB_ERANGE},
        {{.window_buckets = FB_BREAKER_BUCKETS_MAX + 1, .window_us = 129 * S}, FB_ERANGE},
        {{.half_open_permits = FB_BREAKER_PROBES_MAX + 1}, FB_ERANGE},
        {{.window_us = -1}, FB_ERANGE},
        {{.slow_us = -1}, FB_ERANGE},
        {{.probe_lease_us = -1}, FB_ERANGE},
        {{.open_us = -1}, FB_ERANGE},
        {{.open_us_max = -1}, FB_ERANGE},
        {{.open_us = 10 * S, .open_us_max = 9 * S}, FB_ERANGE},
        {{.open_jitter = 1.0, .rng = &rng}, FB_ERANGE},
        {{.open_jitter = -0.1, .rng = &rng}, FB_ERANGE},
        {{.open_jitter = nan, .rng = &rng}, FB_ERANGE},
        {{.open_jitter = 0.2}, FB_EINVAL},
        {{.window_us = 10 * S, .window_buckets = 7}, FB_EINVAL},
        {{.window_buckets = 7}, FB_EINVAL}, /* default 60 s is not a multiple of 7 us */
        {{.mode = (fb_breaker_mode)4}, FB_EINVAL},
        {{.open_growth = (fb_open_growth)4}, FB_EINVAL},
        {{.initial = FB_BREAKER_STATE_COUNT}, FB_EINVAL},
        {{.honor_hint = (fb_switch)3}, FB_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fb_breaker b = {.state = FB_BREAKER_HALF_OPEN};
        int rc = fb_breaker_init(&b, &cases[i].cfg, 0);
        if (rc != cases[i].rc) fail_msg("case %zu: got %d, want %d", i, rc, cases[i].rc);
        assert_int_equal(b.state, FB_BREAKER_HALF_OPEN); /* untouched on error */
    }
    assert_int_equal(fb_breaker_init(NULL, NULL, 0), FB_EINVAL);

    /* The limits themselves are accepted. */
    fb_breaker b;
    fb_breaker_config ok = {.failure_rate = 1.0,
                            .slow_rate = 1.0,
                            .window_calls = FB_BREAKER_CALLS_MAX,
                            .window_buckets = FB_BREAKER_BUCKETS_MAX,
                            .window_us = 128 * S,
                            .half_open_permits = FB_BREAKER_PROBES_MAX,
                            .open_us = 10 * S,
                            .open_us_max = 10 * S,
                            .open_jitter = 0.999,
                            .rng = &rng};
    assert_int_equal(fb_breaker_init(&b, &ok, 0), FB_OK);
}

static void breaker_initial_state_comes_from_config(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.initial = FB_BREAKER_OPEN, .open_us = 10 * S};
    init_ok(&b, &cfg, NULL, 5 * S);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_open_until(&b), 15 * S);
    assert_int_equal(b.trips, 1);
    assert_int_equal(fb_breaker_stats_get(&b)->transitions, 0);
    reject(&b, 15 * S - 1);
    fb_breaker_permit p = admit(&b, 15 * S);
    assert_int_equal(p.kind, FB_PERMIT_PROBE);

    cfg = (fb_breaker_config){.initial = FB_BREAKER_FORCED_OPEN};
    init_ok(&b, &cfg, NULL, 0);
    reject(&b, 1000 * S);
}

/* ---- CONSECUTIVE ---- */

static void breaker_consecutive_trips_at_threshold_not_before(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 3};
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 10);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(log.n, 0);
    call(&b, FB_EFFECT_FAILURE, 20);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_CONSECUTIVE_FAILURES, 20);
    assert_int_equal(log.ev[0].consecutive_failures, 3);
    assert_int_equal(log.ev[0].calls, 0); /* no window in this mode */
    assert_int_equal(log.ev[0].failures, 0);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
}

static void breaker_consecutive_success_resets_run(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 3, .slow_us = 100};
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    timed_call(&b, FB_EFFECT_SUCCESS, 500, 0); /* slow successes reset the run too */
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    call(&b, FB_EFFECT_SUCCESS, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_OPEN);
}

static void breaker_consecutive_ignore_neither_counts_nor_resets(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 3};
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    calls(&b, FB_EFFECT_IGNORE, 10, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_OPEN);
}

/* ---- COUNT_WINDOW ---- */

static void breaker_failure_rate_equal_to_threshold_trips(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(10, 10);
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_SUCCESS, 6, 0);
    calls(&b, FB_EFFECT_FAILURE, 4, 0);
    assert_state(&b, FB_BREAKER_CLOSED); /* 4/10 < 0.5 */
    assert_true(fb_breaker_failure_rate(&b) == 0.4);
    call(&b, FB_EFFECT_FAILURE, 0); /* the oldest success slides out: 5/10 >= 0.5 */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE, 0);
    assert_int_equal(log.ev[0].calls, 10);
    assert_int_equal(log.ev[0].failures, 5);
}

/*
 * The rule is the observed ratio failures/calls >= rate, compared as doubles:
 * 7/25 and 0.28 are the same double, although 25 * 0.28 rounds above 7.
 */
static void breaker_rate_threshold_compares_the_observed_ratio(void **state) {
    (void)state;
    /* A full window of `calls` with `failures - 1` failures, then one more replaces a success. */
    static const struct {
        uint32_t calls, failures;
        double rate;
    } cases[] = {{10, 3, 0.3}, {25, 7, 0.28}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fb_breaker b;
        fb_breaker_config cfg = count_cfg(cases[i].calls, cases[i].calls);
        cfg.failure_rate = cases[i].rate;
        init_ok(&b, &cfg, NULL, 0);
        calls(&b, FB_EFFECT_SUCCESS, (int)(cases[i].calls - cases[i].failures + 1), 0);
        calls(&b, FB_EFFECT_FAILURE, (int)cases[i].failures - 1, 0);
        assert_state(&b, FB_BREAKER_CLOSED);
        call(&b, FB_EFFECT_FAILURE, 0);
        assert_state(&b, FB_BREAKER_OPEN);
    }
}

static void breaker_count_window_minimum_is_capped_at_window_size(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.mode = FB_BREAKER_MODE_COUNT_WINDOW, .window_calls = 4};
    init_ok(&b, &cfg, NULL, 0); /* minimum_calls defaults to 100 */
    assert_int_equal(b.cfg.minimum_calls, 4);
    calls(&b, FB_EFFECT_FAILURE, 3, 0);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_OPEN);
}

static void breaker_success_that_reaches_minimum_can_trip(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(10, 4);
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_FAILURE, 3, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_SUCCESS, 7);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE, 7);
    assert_int_equal(log.ev[0].calls, 4);
    assert_int_equal(log.ev[0].failures, 3);
}

static void breaker_count_window_forgets_old_outcomes(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = count_cfg(4, 4);
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    calls(&b, FB_EFFECT_SUCCESS, 3, 0);
    assert_true(fb_breaker_failure_rate(&b) == 0.25);
    call(&b, FB_EFFECT_SUCCESS, 0);
    assert_true(fb_breaker_failure_rate(&b) == 0.0);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_OPEN);
}

/* A ring larger than one bit word: the window wraps across words correctly. */
static void breaker_count_window_wraps_across_words(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = count_cfg(130, 130);
    cfg.failure_rate = 0.5;
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 64, 0);
    calls(&b, FB_EFFECT_SUCCESS, 66, 0);
    assert_true(fb_breaker_failure_rate(&b) == 64.0 / 130.0);
    for (int round = 0; round < 3; round++) {
        calls(&b, FB_EFFECT_SUCCESS, 64, 0); /* replaces the 64 failures */
        calls(&b, FB_EFFECT_FAILURE, 64, 0);
        calls(&b, FB_EFFECT_SUCCESS, 2, 0);
        assert_true(fb_breaker_failure_rate(&b) == 64.0 / 130.0);
    }
    call(&b, FB_EFFECT_FAILURE, 0); /* replaces a success: 65/130 */
    assert_state(&b, FB_BREAKER_OPEN);
}

static void breaker_slow_threshold_is_strict_and_slow_rate_trips(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(4, 4);
    cfg.failure_rate = 1.0;
    cfg.slow_us = 100;
    cfg.slow_rate = 0.5;
    init_ok(&b, &cfg, &log, 0);
    for (int i = 0; i < 4; i++) timed_call(&b, FB_EFFECT_SUCCESS, 100, 0);
    assert_state(&b, FB_BREAKER_CLOSED); /* duration == slow_us is not slow */
    timed_call(&b, FB_EFFECT_SUCCESS, 101, 0);
    assert_state(&b, FB_BREAKER_CLOSED); /* 1/4 */
    timed_call(&b, FB_EFFECT_FAILURE, 101, 3);
    assert_state(&b, FB_BREAKER_OPEN); /* 2/4 slow */
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_SLOW_CALL_RATE, 3);
    assert_int_equal(log.ev[0].calls, 4);
    assert_int_equal(log.ev[0].slow, 2);
    assert_int_equal(log.ev[0].failures, 1); /* a slow failure counts in both */
}

static void breaker_count_window_forgets_old_slow_calls(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = count_cfg(4, 4);
    cfg.failure_rate = 1.0;
    cfg.slow_us = 100;
    cfg.slow_rate = 0.5;
    init_ok(&b, &cfg, NULL, 0);
    timed_call(&b, FB_EFFECT_SUCCESS, 200, 0);
    for (int i = 0; i < 8; i++) timed_call(&b, FB_EFFECT_SUCCESS, 50, 0); /* slides it out */
    timed_call(&b, FB_EFFECT_SUCCESS, 200, 0);
    assert_state(&b, FB_BREAKER_CLOSED); /* 1/4 slow, not 2/4 */
    timed_call(&b, FB_EFFECT_SUCCESS, 200, 0);
    assert_state(&b, FB_BREAKER_OPEN);
}

static void breaker_failure_rate_names_the_cause_when_both_rules_break(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(2, 2);
    cfg.slow_us = 10;
    cfg.slow_rate = 0.5;
    init_ok(&b, &cfg, &log, 0);
    timed_call(&b, FB_EFFECT_FAILURE, 50, 0);
    timed_call(&b, FB_EFFECT_FAILURE, 50, 0);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.ev[0].cause, FB_CAUSE_FAILURE_RATE);
}

/* ---- TIME_WINDOW ---- */

static fb_breaker_config time_cfg(uint32_t minimum_calls, double rate) {
    return (fb_breaker_config){.mode = FB_BREAKER_MODE_TIME_WINDOW,
                               .window_us = 10 * S,
                               .window_buckets = 10,
                               .minimum_calls = minimum_calls,
                               .failure_rate = rate};
}

static void breaker_time_window_trips_once_minimum_reached_resilience4j_842(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = time_cfg(5, 0.5);
    cfg.window_us = 60 * S;
    init_ok(&b, &cfg, &log, 0);
    for (int i = 0; i < 4; i++) call(&b, FB_EFFECT_FAILURE, S + i);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
    call(&b, FB_EFFECT_FAILURE, S + 4); /* well inside the first minute */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.ev[0].at_us, S + 4);
    assert_int_equal(log.ev[0].calls, 5);
}

static void breaker_time_window_below_minimum_never_trips(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = time_cfg(3, 0.5);
    init_ok(&b, &cfg, NULL, 0);
    /* One failure every 5 s: never more than two in a 10 s window. */
    for (fb_time_us t = 0; t <= 100 * S; t += 5 * S) {
        call(&b, FB_EFFECT_FAILURE, t);
        assert_state(&b, FB_BREAKER_CLOSED);
        assert_true(fb_breaker_failure_rate(&b) == -1.0);
    }
}

/* line/armeria#2761: a result exactly on a bucket boundary belongs to the new bucket. */
static void breaker_bucket_boundary_event_is_counted_armeria_2761(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = time_cfg(2, 0.5);
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_SUCCESS, 1 * S); /* bucket 1 = [1 s, 2 s) */
    call(&b, FB_EFFECT_FAILURE, 11 * S - 1);
    assert_state(&b, FB_BREAKER_OPEN); /* the success is still in the window: 1/2 */

    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_SUCCESS, 1 * S);
    call(&b, FB_EFFECT_FAILURE, 11 * S); /* bucket 1 expired: 1 call, below minimum */
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
}

/* Buckets are aligned to multiples of bucket_us since time 0, not to init time. */
static void breaker_time_buckets_align_to_time_zero(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = time_cfg(2, 0.5);
    init_ok(&b, &cfg, NULL, 1500 * MS);
    call(&b, FB_EFFECT_SUCCESS, 1999 * MS); /* bucket [1 s, 2 s) */
    call(&b, FB_EFFECT_FAILURE, 11 * S);    /* that bucket has expired */
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 11 * S);
    assert_state(&b, FB_BREAKER_OPEN); /* 2 failures, both counted */

    init_ok(&b, &cfg, NULL, 1500 * MS);
    call(&b, FB_EFFECT_SUCCESS, 2 * S); /* bucket [2 s, 3 s) */
    call(&b, FB_EFFECT_FAILURE, 12 * S - 1);
    assert_state(&b, FB_BREAKER_OPEN);
}

/* Before time 0 too: bucket k is [k * bucket_us, (k + 1) * bucket_us), floor division. */
static void breaker_time_buckets_align_before_time_zero(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = time_cfg(2, 0.5);
    init_ok(&b, &cfg, NULL, -1500 * MS);
    call(&b, FB_EFFECT_SUCCESS, -1500 * MS); /* bucket [-2 s, -1 s) */
    call(&b, FB_EFFECT_FAILURE, 8 * S - 1);
    assert_state(&b, FB_BREAKER_OPEN);

    init_ok(&b, &cfg, NULL, -1500 * MS);
    call(&b, FB_EFFECT_SUCCESS, -1500 * MS);
    call(&b, FB_EFFECT_FAILURE, 8 * S); /* window [-1 s, 9 s) */
    assert_state(&b, FB_BREAKER_CLOSED);
}

static void breaker_expiring_successes_trip_on_allow(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = time_cfg(3, 0.6);
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 5 * S); /* 2/4 */
    call(&b, FB_EFFECT_SUCCESS, 6 * S);     /* 2/5 */
    admit(&b, 10 * S - 1);
    assert_state(&b, FB_BREAKER_CLOSED);
    reject(&b, 10 * S); /* bucket 0 expires: 2/3 >= 0.6, tripped before admitting */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE, 10 * S);
    assert_int_equal(log.ev[0].calls, 3);
    assert_int_equal(log.ev[0].failures, 2);
}

static void breaker_expiring_successes_trip_on_poll(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = time_cfg(3, 0.6);
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 5 * S);
    call(&b, FB_EFFECT_SUCCESS, 6 * S);
    fb_breaker_poll(&b, 10 * S - 1);
    assert_state(&b, FB_BREAKER_CLOSED);
    fb_breaker_poll(&b, 10 * S);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_open_until(&b), 70 * S);
}

static void breaker_expiring_failures_and_slow_calls_leave_the_window(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = time_cfg(3, 0.5);
    cfg.slow_us = 100;
    cfg.slow_rate = 0.5;
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    timed_call(&b, FB_EFFECT_SUCCESS, 200, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 5 * S); /* 1/4 failed, 1/4 slow */
    fb_breaker_poll(&b, 10 * S);
    assert_true(fb_breaker_failure_rate(&b) == -1.0); /* 2 calls left */
    timed_call(&b, FB_EFFECT_FAILURE, 200, 10 * S);
    assert_state(&b, FB_BREAKER_CLOSED); /* 1/3 failed and 1/3 slow: both old ones are gone */
    assert_true(fb_breaker_failure_rate(&b) == 1.0 / 3.0);
}

static void breaker_time_window_huge_gap_clears_window(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = time_cfg(3, 0.6);
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    assert_true(fb_breaker_failure_rate(&b) == 0.5);
    fb_breaker_poll(&b, 1000000 * S);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
    calls(&b, FB_EFFECT_FAILURE, 2, 1000000 * S);
    assert_state(&b, FB_BREAKER_CLOSED); /* the old calls are gone: 2 < 3 */
    call(&b, FB_EFFECT_SUCCESS, 1000005 * S);
    assert_state(&b, FB_BREAKER_OPEN); /* 2/3 */
    assert_int_equal(log.ev[0].calls, 3);
    assert_int_equal(log.ev[0].failures, 2);
}

/* ---- denominator and reset ---- */

static void breaker_ignored_and_rejected_calls_are_not_in_denominator(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.open_us = 100};
    trip_count4(&b, &cfg, &log, 0);
    for (int i = 0; i < 10; i++) reject(&b, 50);
    assert_int_equal(fb_breaker_stats_get(&b)->rejected, 10);
    fb_breaker_permit probe = admit(&b, 100);
    report(&b, &probe, FB_EFFECT_SUCCESS, 100);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_true(fb_breaker_failure_rate(&b) == -1.0); /* the rejections are not calls */
    call(&b, FB_EFFECT_FAILURE, 200);
    calls(&b, FB_EFFECT_IGNORE, 20, 200);
    calls(&b, FB_EFFECT_SUCCESS, 2, 200);
    assert_true(fb_breaker_failure_rate(&b) == -1.0); /* 3 calls, ignores not counted */
    call(&b, FB_EFFECT_SUCCESS, 200);
    assert_true(fb_breaker_failure_rate(&b) == 0.25);
    assert_state(&b, FB_BREAKER_CLOSED);
}

static void breaker_window_is_fresh_after_close_resilience4j_547(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.open_us = 100};
    trip_count4(&b, &cfg, NULL, 0);
    fb_breaker_permit probe = admit(&b, 100);
    report(&b, &probe, FB_EFFECT_SUCCESS, 100);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 101); /* would re-trip on carried counts (5/5) */
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);

    cfg = time_cfg(2, 0.5);
    cfg.open_us = S;
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    assert_state(&b, FB_BREAKER_OPEN);
    probe = admit(&b, S);
    report(&b, &probe, FB_EFFECT_SUCCESS, S);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, S); /* same bucket as the old failures */
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
}

/* ---- OPEN -> HALF_OPEN ---- */

static void breaker_open_becomes_half_open_exactly_at_deadline(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 1000};
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 100);
    assert_int_equal(fb_breaker_open_until(&b), 1100);
    reject(&b, 1099);
    assert_int_equal(fb_breaker_retry_in(&b, 1099), 1);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_retry_in(&b, 1100), 0);
    fb_breaker_permit p = admit(&b, 1100);
    assert_int_equal(p.kind, FB_PERMIT_PROBE);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(log.n, 2);
    assert_event(&log.ev[1], FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, 1100);
    assert_int_equal(log.ev[1].open_until_us, FB_TIME_NONE);

    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 100);
    fb_breaker_poll(&b, 1099);
    assert_state(&b, FB_BREAKER_OPEN);
    fb_breaker_poll(&b, 1100);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
}

/* ---- HALF_OPEN ---- */

static void breaker_half_open_admits_exactly_permitted_probes_polly_216(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .probe_lease_us = 100};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p = admit(&b, 10);
    assert_int_equal(p.kind, FB_PERMIT_PROBE);
    for (int i = 0; i < 50; i++) reject(&b, 10 + i);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->rejected, 50);

    cfg.half_open_permits = 3;
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    uint32_t slots = 0;
    for (int i = 0; i < 3; i++) {
        p = admit(&b, 10);
        assert_int_equal(p.kind, FB_PERMIT_PROBE);
        slots |= 1u << p.slot;
    }
    assert_int_equal(slots, 7);
    reject(&b, 10);
    reject(&b, 11);
    assert_int_equal(fb_breaker_retry_in(&b, 11), 99); /* earliest lease ends at 110 */
}

static void breaker_half_open_closes_after_permitted_successes(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 3};
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p[3];
    for (int i = 0; i < 3; i++) p[i] = admit(&b, 10);
    report(&b, &p[0], FB_EFFECT_SUCCESS, 11);
    report(&b, &p[1], FB_EFFECT_SUCCESS, 12);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    report(&b, &p[2], FB_EFFECT_SUCCESS, 13);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(log.n, 3);
    assert_event(&log.ev[2], FB_BREAKER_HALF_OPEN, FB_BREAKER_CLOSED, FB_CAUSE_PROBES_SUCCEEDED,
                 13);
    assert_int_equal(log.ev[2].calls, 3);
    assert_int_equal(log.ev[2].failures, 0);
    assert_int_equal(log.ev[2].trips, 0);
    assert_int_equal(fb_breaker_open_until(&b), FB_TIME_NONE);
}

/* A reported probe frees its slot: concurrency, not a total, is capped. */
static void breaker_reported_probe_frees_its_slot(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 2};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit a = admit(&b, 10);
    fb_breaker_permit c = admit(&b, 10);
    reject(&b, 10);
    assert_int_equal(fb_breaker_retry_in(&b, 10), 10); /* both slots leased until 20 */
    report(&b, &a, FB_EFFECT_SUCCESS, 11);
    assert_int_equal(fb_breaker_retry_in(&b, 11), 0);
    fb_breaker_permit d = admit(&b, 12);
    assert_int_equal(d.slot, a.slot);
    report(&b, &d, FB_EFFECT_SUCCESS, 13);
    assert_state(&b, FB_BREAKER_CLOSED);
    report(&b, &c, FB_EFFECT_SUCCESS, 14); /* the breaker moved on */
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
}

static void breaker_half_open_any_probe_failure_reopens(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 3};
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p[3];
    for (int i = 0; i < 3; i++) p[i] = admit(&b, 10);
    report(&b, &p[0], FB_EFFECT_SUCCESS, 11);
    report(&b, &p[1], FB_EFFECT_FAILURE, 12);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.n, 3);
    assert_event(&log.ev[2], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_PROBE_FAILED, 12);
    assert_int_equal(log.ev[2].calls, 2);
    assert_int_equal(log.ev[2].failures, 1);
    assert_int_equal(log.ev[2].trips, 2);
    assert_int_equal(log.ev[2].open_until_us, 22);
    report(&b, &p[2], FB_EFFECT_SUCCESS, 13);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    assert_state(&b, FB_BREAKER_OPEN);
}

static void breaker_slow_probe_counts_as_failure(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .slow_us = 100};
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    timed_call(&b, FB_EFFECT_SUCCESS, 101, 10);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.ev[2].cause, FB_CAUSE_PROBE_FAILED);
    assert_int_equal(log.ev[2].slow, 1);
    assert_int_equal(log.ev[2].failures, 0);
    timed_call(&b, FB_EFFECT_SUCCESS, 100, 30); /* not slow: closes */
    assert_state(&b, FB_BREAKER_CLOSED);
}

/*
 * erpc/erpc PR #1118, App-vNext/Polly#1979: a probe whose outcome the breaker
 * does not count must give its permit back, or half-open never completes.
 */
static void breaker_ignored_probe_releases_permit_erpc_1118(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p = admit(&b, 10);
    reject(&b, 10);
    report(&b, &p, FB_EFFECT_IGNORE, 11);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    for (int i = 0; i < 5; i++) call(&b, FB_EFFECT_IGNORE, 12 + i);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    call(&b, FB_EFFECT_SUCCESS, 20);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/*
 * diegosouzapw/OmniRoute#13836, resilience4j#935: a probe that never reports
 * must not wedge the breaker; its lease ends at admitted + probe_lease_us.
 */
static void breaker_hung_probe_lease_expires_omniroute_13836(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .probe_lease_us = 500};
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit hung = admit(&b, 10);
    reject(&b, 509);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_retry_in(&b, 509), 1);
    reject(&b, 510); /* lease over: re-opened, and this call is rejected */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(log.n, 3);
    assert_event(&log.ev[2], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_PROBE_LEASE_EXPIRED,
                 510);
    assert_int_equal(log.ev[2].trips, 2);
    assert_int_equal(log.ev[2].open_until_us, 520);
    report(&b, &hung, FB_EFFECT_SUCCESS, 515); /* too late: stale */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);

    /* poll() expires the lease too. */
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    admit(&b, 10);
    fb_breaker_poll(&b, 509);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    fb_breaker_poll(&b, 510);
    assert_state(&b, FB_BREAKER_OPEN);

    /* And so does record(): a probe reporting exactly at its lease end is too late. */
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    hung = admit(&b, 10);
    report(&b, &hung, FB_EFFECT_SUCCESS, 510);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
}

static void breaker_double_report_of_a_probe_is_stale(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 2};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p = admit(&b, 10);
    report(&b, &p, FB_EFFECT_SUCCESS, 11);
    report(&b, &p, FB_EFFECT_SUCCESS, 12); /* would close with 2 "successes" */
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    fb_breaker_permit q = admit(&b, 13); /* reuses the slot, another lease */
    assert_int_equal(q.slot, p.slot);
    report(&b, &p, FB_EFFECT_FAILURE, 14); /* the old permit cannot end q's lease */
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 2);
}

/* ---- generations and stale results ---- */

/* App-vNext/Polly#217: a success admitted before the trip must not close a half-open breaker. */
static void breaker_stale_success_does_not_close_polly_217(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 2, .open_us = 100};
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit old = admit(&b, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 1);
    assert_state(&b, FB_BREAKER_OPEN);
    fb_breaker_permit probe = admit(&b, 101);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    report(&b, &old, FB_EFFECT_SUCCESS, 102);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    reject(&b, 103); /* the probe's slot is still leased */
    report(&b, &probe, FB_EFFECT_SUCCESS, 104);
    assert_state(&b, FB_BREAKER_CLOSED);
}

static void breaker_stale_failure_does_not_count_in_new_window(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 2, .open_us = 100};
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit old = admit(&b, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 1);
    call(&b, FB_EFFECT_SUCCESS, 101);
    assert_state(&b, FB_BREAKER_CLOSED);
    report(&b, &old, FB_EFFECT_FAILURE, 102);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    call(&b, FB_EFFECT_FAILURE, 103); /* a run of 1, not 2 */
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 104);
    assert_state(&b, FB_BREAKER_OPEN);
}

static void breaker_generation_increments_on_every_transition(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10};
    init_ok(&b, &cfg, &log, 0);
    assert_int_equal(fb_breaker_generation(&b), 1);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_int_equal(fb_breaker_generation(&b), 2);
    call(&b, FB_EFFECT_SUCCESS, 10);
    assert_int_equal(fb_breaker_generation(&b), 4);
    assert_int_equal(fb_breaker_set_state(&b, FB_BREAKER_CLOSED, 20), FB_OK);
    assert_int_equal(fb_breaker_generation(&b), 5);
    assert_int_equal(log.n, 4);
    for (int i = 0; i < log.n; i++) assert_int_equal(log.ev[i].generation, (uint64_t)i + 2);
    const fb_breaker_stats *st = fb_breaker_stats_get(&b);
    assert_int_equal(st->transitions, 4);
    assert_int_equal(st->opens, 1);
    assert_int_equal(st->admitted, 2);
}

static void breaker_rejected_and_untracked_permits_are_no_ops(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1};
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit none = {.generation = 1, .kind = FB_PERMIT_REJECTED};
    fb_breaker_permit untracked = {.generation = 1, .kind = FB_PERMIT_UNTRACKED};
    report(&b, &none, FB_EFFECT_FAILURE, 0);
    report(&b, &untracked, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 0);

    /* A CALL permit that the current state could not have issued records nothing. */
    ev_log log;
    cfg.open_us = 10;
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit forged = {.generation = fb_breaker_generation(&b), .kind = FB_PERMIT_CALL};
    report(&b, &forged, FB_EFFECT_FAILURE, 1);
    fb_breaker_poll(&b, 10);
    assert_int_equal(log.n, 2);
    assert_int_equal(log.ev[1].calls, 0);
    assert_int_equal(log.ev[1].consecutive_failures, 0);
}

/* ---- open duration ---- */

/* Trip a consecutive(1) breaker again and again without closing; return the open durations. */
static void open_durations(fb_breaker *b, fb_time_us *d, int n) {
    fb_time_us t = 0;
    call(b, FB_EFFECT_FAILURE, t);
    for (int i = 0; i < n; i++) {
        fb_time_us until = fb_breaker_open_until(b);
        d[i] = until - t;
        t = until;
        fb_breaker_permit probe = admit(b, t);
        report(b, &probe, FB_EFFECT_FAILURE, t);
    }
}

/* Five consecutive open durations with open_us 10 s under `growth` and a cap. */
static void assert_growth(fb_open_growth growth, fb_time_us max_us, const fb_time_us want_s[5]) {
    fb_breaker b;
    fb_breaker_config cfg = {
        .consecutive_failures = 1, .open_us = 10 * S, .open_growth = growth, .open_us_max = max_us};
    init_ok(&b, &cfg, NULL, 0);
    fb_time_us d[5];
    open_durations(&b, d, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(d[i], want_s[i] * S);
    assert_int_equal(b.trips, 6); /* the last probe failure opened a sixth time */
}

static void breaker_open_duration_grows_linearly_to_cap(void **state) {
    (void)state;
    assert_growth(FB_OPEN_GROWTH_LINEAR, 35 * S, (const fb_time_us[]){10, 20, 30, 35, 35});
    assert_growth(FB_OPEN_GROWTH_NONE, 35 * S, (const fb_time_us[]){10, 10, 10, 10, 10});
}

static void breaker_open_duration_grows_exponentially_to_cap(void **state) {
    (void)state;
    assert_growth(FB_OPEN_GROWTH_EXPONENTIAL, 50 * S, (const fb_time_us[]){10, 20, 40, 50, 50});

    /* Many trips: no overflow, the duration stays at the cap. */
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1,
                             .open_us = 10 * S,
                             .open_growth = FB_OPEN_GROWTH_EXPONENTIAL,
                             .open_us_max = FB_TIME_MAX};
    init_ok(&b, &cfg, NULL, 0);
    b.trips = 200;
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_int_equal(fb_breaker_open_until(&b), FB_TIME_MAX);
    cfg.open_growth = FB_OPEN_GROWTH_LINEAR;
    init_ok(&b, &cfg, NULL, 0);
    b.trips = UINT32_MAX;
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_int_equal(b.trips, UINT32_MAX);
    assert_int_equal(fb_breaker_open_until(&b), 10 * S * (fb_time_us)UINT32_MAX);
}

static void breaker_trips_reset_on_close(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {
        .consecutive_failures = 1, .open_us = 10, .open_growth = FB_OPEN_GROWTH_EXPONENTIAL};
    init_ok(&b, &cfg, NULL, 0);
    fb_time_us d[3];
    open_durations(&b, d, 3);
    assert_int_equal(d[2], 40);
    fb_time_us t = fb_breaker_open_until(&b);
    call(&b, FB_EFFECT_SUCCESS, t);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(b.trips, 0);
    call(&b, FB_EFFECT_FAILURE, t + 1);
    assert_int_equal(fb_breaker_open_until(&b), t + 1 + 10);
}

static void breaker_hint_extends_open_up_to_cap(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {
        .consecutive_failures = 1, .open_us = 10 * S, .open_us_max = 60 * S, .honor_hint = FB_ON};
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit p = admit(&b, 0);
    fb_breaker_record(
        &b, &p,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 30 * S}, 1);
    assert_int_equal(fb_breaker_open_until(&b), 1 + 30 * S);

    init_ok(&b, &cfg, NULL, 0);
    p = admit(&b, 0);
    fb_breaker_record(
        &b, &p,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 3600 * S},
        1);
    assert_int_equal(fb_breaker_open_until(&b), 1 + 60 * S); /* capped */

    init_ok(&b, &cfg, NULL, 0);
    p = admit(&b, 0);
    fb_breaker_record(
        &b, &p,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 2 * S}, 1);
    assert_int_equal(fb_breaker_open_until(&b), 1 + 10 * S); /* max(duration, hint) */

    /* A probe failure with a hint. */
    fb_breaker_permit probe = admit(&b, 1 + 10 * S);
    fb_breaker_record(
        &b, &probe,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 45 * S},
        20 * S);
    assert_int_equal(fb_breaker_open_until(&b), 65 * S);
}

static void breaker_hint_ignored_when_off_or_not_tripping(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 2, .open_us = 10 * S, .honor_hint = FB_OFF};
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit p = admit(&b, 0);
    fb_breaker_record(
        &b, &p,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 30 * S}, 0);
    p = admit(&b, 0);
    fb_breaker_record(
        &b, &p,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 30 * S}, 0);
    assert_int_equal(fb_breaker_open_until(&b), 10 * S);

    cfg.honor_hint = FB_ON;
    init_ok(&b, &cfg, NULL, 0);
    p = admit(&b, 0);
    fb_breaker_record(
        &b, &p,
        &(fb_breaker_result){.effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = 30 * S},
        0); /* does not trip */
    p = admit(&b, 0);
    fb_breaker_record(&b, &p,
                      &(fb_breaker_result){
                          .effect = FB_EFFECT_FAILURE, .duration_us = 0, .hint_us = FB_TIME_NONE},
                      0);
    assert_int_equal(fb_breaker_open_until(&b), 10 * S);
}

static void breaker_open_jitter_stays_within_bounds_and_cap(void **state) {
    (void)state;
    fb_breaker b;
    fb_rng rng;
    fb_rng_seed(&rng, 42, 7);
    fb_breaker_config cfg = {.consecutive_failures = 1,
                             .open_us = 1000 * MS,
                             .open_jitter = 0.5,
                             .rng = &rng,
                             .open_us_max = 1200 * MS};
    init_ok(&b, &cfg, NULL, 0);
    fb_time_us d[200];
    open_durations(&b, d, 200);
    fb_time_us lo = d[0], hi = d[0];
    for (int i = 0; i < 200; i++) {
        assert_in_range(d[i], 500 * MS, 1200 * MS); /* [d(1-f), min(d(1+f), max)] */
        if (d[i] < lo) lo = d[i];
        if (d[i] > hi) hi = d[i];
    }
    assert_true(lo < hi); /* jitter is applied */

    /* Growth then jitter: the capped duration is jittered, then capped again. */
    cfg.open_growth = FB_OPEN_GROWTH_EXPONENTIAL;
    cfg.open_us_max = 4000 * MS;
    init_ok(&b, &cfg, NULL, 0);
    open_durations(&b, d, 50);
    assert_in_range(d[0], 500 * MS, 1500 * MS);
    assert_in_range(d[1], 1000 * MS, 3000 * MS);
    for (int i = 3; i < 50; i++) assert_in_range(d[i], 2000 * MS, 4000 * MS);
}

static void breaker_open_until_saturates_at_time_max(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10 * S};
    init_ok(&b, &cfg, NULL, FB_TIME_MAX - S);
    call(&b, FB_EFFECT_FAILURE, FB_TIME_MAX - S);
    assert_int_equal(fb_breaker_open_until(&b), FB_TIME_MAX);
    reject(&b, FB_TIME_MAX - 1);
    assert_state(&b, FB_BREAKER_OPEN);
}

/* ---- manual states ---- */

static void breaker_forced_open_rejects_everything(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {0};
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_permit old = admit(&b, 0);
    assert_int_equal(fb_breaker_set_state(&b, FB_BREAKER_FORCED_OPEN, 5), FB_OK);
    for (int i = 0; i < 5; i++) reject(&b, (fb_time_us)i * 1000 * S);
    assert_int_equal(fb_breaker_retry_in(&b, 0), FB_TIME_MAX);
    assert_int_equal(fb_breaker_open_until(&b), FB_TIME_MAX);
    report(&b, &old, FB_EFFECT_FAILURE, 6);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_FORCED_OPEN, FB_CAUSE_MANUAL, 5);
    assert_int_equal(log.ev[0].open_until_us, FB_TIME_MAX);
    assert_int_equal(fb_breaker_stats_get(&b)->opens, 0);
}

static void breaker_forced_closed_records_but_never_trips(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(4, 4);
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_set_state(&b, FB_BREAKER_FORCED_CLOSED, 0);
    calls(&b, FB_EFFECT_FAILURE, 100, 1);
    assert_state(&b, FB_BREAKER_FORCED_CLOSED);
    assert_true(fb_breaker_failure_rate(&b) == 1.0);
    assert_int_equal(log.n, 1);
    assert_int_equal(fb_breaker_retry_in(&b, 1), 0);
}

static void breaker_disabled_admits_untracked_and_records_nothing(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .initial = FB_BREAKER_DISABLED};
    init_ok(&b, &cfg, NULL, 0);
    for (int i = 0; i < 10; i++) {
        fb_breaker_permit p = admit(&b, i);
        assert_int_equal(p.kind, FB_PERMIT_UNTRACKED);
        report(&b, &p, FB_EFFECT_FAILURE, i);
    }
    assert_state(&b, FB_BREAKER_DISABLED);
    const fb_breaker_stats *st = fb_breaker_stats_get(&b);
    assert_int_equal(st->admitted, 10);
    assert_int_equal(st->stale, 0);
    assert_int_equal(st->transitions, 0);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
}

static void breaker_metrics_only_signals_once_per_excursion(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(4, 4);
    cfg.initial = FB_BREAKER_METRICS_ONLY;
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_FAILURE, 4, 1);
    calls(&b, FB_EFFECT_FAILURE, 3, 2); /* still above: no second event */
    assert_state(&b, FB_BREAKER_METRICS_ONLY);
    assert_int_equal(log.n, 1);
    fb_breaker_event *ev = &log.ev[0];
    assert_event(ev, FB_BREAKER_METRICS_ONLY, FB_BREAKER_METRICS_ONLY, FB_CAUSE_THRESHOLD_EXCEEDED,
                 1);
    assert_int_equal(ev->calls, 4);
    assert_int_equal(ev->failures, 4);
    assert_int_equal(ev->generation, 1); /* not a transition */
    assert_int_equal(fb_breaker_generation(&b), 1);
    calls(&b, FB_EFFECT_SUCCESS, 3, 3); /* 1/4: re-armed */
    assert_int_equal(log.n, 1);
    call(&b, FB_EFFECT_FAILURE, 4); /* 1/4 */
    assert_int_equal(log.n, 1);
    call(&b, FB_EFFECT_FAILURE, 4); /* 2/4: a new excursion */
    assert_int_equal(log.n, 2);
    assert_int_equal(log.ev[1].at_us, 4);
    assert_int_equal(fb_breaker_stats_get(&b)->transitions, 0);

    /* CONSECUTIVE: the run of failures is the rule. */
    cfg = (fb_breaker_config){.consecutive_failures = 2, .initial = FB_BREAKER_METRICS_ONLY};
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_FAILURE, 5, 0);
    call(&b, FB_EFFECT_SUCCESS, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    assert_int_equal(log.n, 2);
    assert_int_equal(log.ev[1].consecutive_failures, 2);
}

static void breaker_metrics_only_signals_on_window_expiry(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = time_cfg(3, 0.6);
    cfg.initial = FB_BREAKER_METRICS_ONLY;
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 5 * S);
    call(&b, FB_EFFECT_SUCCESS, 6 * S); /* 2/5 */
    assert_int_equal(log.n, 0);
    fb_breaker_poll(&b, 10 * S); /* 2/3 */
    assert_int_equal(log.n, 1);
    assert_int_equal(log.ev[0].cause, FB_CAUSE_THRESHOLD_EXCEEDED);
    assert_int_equal(log.ev[0].at_us, 10 * S);
}

static void breaker_set_state_closed_starts_fresh(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(4, 4);
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_FAILURE, 1, 0);
    calls(&b, FB_EFFECT_SUCCESS, 3, 0);
    fb_breaker_permit old = admit(&b, 0);
    assert_int_equal(fb_breaker_set_state(&b, FB_BREAKER_CLOSED, 7), FB_OK);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_CLOSED, FB_CAUSE_MANUAL, 7);
    assert_int_equal(log.ev[0].calls, 4);
    assert_int_equal(log.ev[0].failures, 1);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
    report(&b, &old, FB_EFFECT_FAILURE, 8);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    assert_int_equal(fb_breaker_set_state(&b, FB_BREAKER_STATE_COUNT, 9), FB_EINVAL);
    assert_int_equal(fb_breaker_set_state(&b, (fb_breaker_state)-1, 9), FB_EINVAL);
}

static void breaker_set_state_half_open_starts_fresh_probes(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 2};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    admit(&b, 10);
    admit(&b, 10);
    reject(&b, 10);
    fb_breaker_set_state(&b, FB_BREAKER_HALF_OPEN, 11);
    admit(&b, 11);
    admit(&b, 11);
    reject(&b, 11);
}

static void breaker_set_state_open_counts_as_a_trip(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.open_us = 10, .open_growth = FB_OPEN_GROWTH_LINEAR};
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_set_state(&b, FB_BREAKER_OPEN, 100);
    assert_int_equal(fb_breaker_open_until(&b), 110);
    fb_breaker_set_state(&b, FB_BREAKER_OPEN, 105);
    assert_int_equal(fb_breaker_open_until(&b), 125);
    assert_int_equal(log.n, 2);
    assert_event(&log.ev[1], FB_BREAKER_OPEN, FB_BREAKER_OPEN, FB_CAUSE_MANUAL, 105);
    assert_int_equal(log.ev[1].trips, 2);
    assert_int_equal(fb_breaker_stats_get(&b)->opens, 2);
}

static void breaker_sync_copies_remote_state(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.open_us = 10 * S};
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_permit old = admit(&b, 0);
    assert_int_equal(fb_breaker_sync(&b, FB_BREAKER_OPEN, 42 * S, 5 * S), FB_OK);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_open_until(&b), 42 * S);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_SYNC, 5 * S);
    assert_int_equal(log.ev[0].open_until_us, 42 * S);
    assert_int_equal(log.ev[0].trips, 1);
    report(&b, &old, FB_EFFECT_SUCCESS, 6 * S);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);

    /* Same state: not a transition, but the deadline is copied. */
    assert_int_equal(fb_breaker_sync(&b, FB_BREAKER_OPEN, 50 * S, 7 * S), FB_OK);
    assert_int_equal(log.n, 1);
    assert_int_equal(fb_breaker_generation(&b), 2);
    reject(&b, 50 * S - 1);
    admit(&b, 50 * S);
    assert_state(&b, FB_BREAKER_HALF_OPEN);

    assert_int_equal(fb_breaker_sync(&b, FB_BREAKER_CLOSED, FB_TIME_NONE, 51 * S), FB_OK);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(log.ev[log.n - 1].cause, FB_CAUSE_SYNC);
    assert_int_equal(b.trips, 0);
    assert_int_equal(fb_breaker_sync(&b, FB_BREAKER_OPEN, FB_TIME_NONE, 52 * S), FB_EINVAL);
    assert_int_equal(fb_breaker_sync(&b, FB_BREAKER_STATE_COUNT, 0, 52 * S), FB_EINVAL);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/* ---- events and names ---- */

static void breaker_event_payload_is_complete(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(8, 4);
    cfg.slow_us = 50;
    cfg.open_us = 1000;
    init_ok(&b, &cfg, &log, 0);
    timed_call(&b, FB_EFFECT_SUCCESS, 60, 1);
    timed_call(&b, FB_EFFECT_FAILURE, 10, 2);
    timed_call(&b, FB_EFFECT_SUCCESS, 10, 3);
    timed_call(&b, FB_EFFECT_FAILURE, 10, 4);
    assert_int_equal(log.n, 1);
    fb_breaker_event *ev = &log.ev[0];
    assert_int_equal(ev->at_us, 4);
    assert_int_equal(ev->from, FB_BREAKER_CLOSED);
    assert_int_equal(ev->to, FB_BREAKER_OPEN);
    assert_int_equal(ev->cause, FB_CAUSE_FAILURE_RATE);
    assert_int_equal(ev->calls, 4);
    assert_int_equal(ev->failures, 2);
    assert_int_equal(ev->slow, 1);
    assert_int_equal(ev->consecutive_failures, 1);
    assert_int_equal(ev->trips, 1);
    assert_int_equal(ev->open_until_us, 1004);
    assert_int_equal(ev->generation, 2);

    /* The whole sequence through recovery. */
    admit(&b, 1004);
    assert_int_equal(log.n, 2);
    assert_event(&log.ev[1], FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, 1004);
    assert_int_equal(log.ev[1].calls, 0);
    assert_int_equal(log.ev[1].trips, 1);
    assert_int_equal(log.ev[1].generation, 3);
}

static void breaker_state_and_cause_names(void **state) {
    (void)state;
    assert_string_equal(fb_breaker_state_name(FB_BREAKER_CLOSED), "closed");
    assert_string_equal(fb_breaker_state_name(FB_BREAKER_HALF_OPEN), "half_open");
    assert_string_equal(fb_breaker_state_name(FB_BREAKER_METRICS_ONLY), "metrics_only");
    assert_string_equal(fb_breaker_state_name(FB_BREAKER_STATE_COUNT), "unknown");
    assert_string_equal(fb_breaker_cause_name(FB_CAUSE_CONSECUTIVE_FAILURES),
                        "consecutive_failures");
    assert_string_equal(fb_breaker_cause_name(FB_CAUSE_PROBE_LEASE_EXPIRED), "probe_lease_expired");
    assert_string_equal(fb_breaker_cause_name(FB_CAUSE_SYNC), "sync");
    assert_string_equal(fb_breaker_cause_name(FB_CAUSE_COUNT), "unknown");
}

/* ---- library semantics (docs/breaker.md "Library semantics") ---- */

/* A 1-failure breaker, opened by a failure at time 0. */
static void open_at_zero(fb_breaker *b, fb_breaker_config *cfg, ev_log *log) {
    init_ok(b, cfg, log, 0);
    call(b, FB_EFFECT_FAILURE, 0);
}

/* Trip a 2-failure consecutive breaker (open 10 us) at t = 1, holding a permit admitted at 0. */
static fb_breaker_permit trip_holding_late(fb_breaker *b, fb_breaker_config *cfg, ev_log *log) {
    cfg->consecutive_failures = 2;
    cfg->open_us = 10;
    init_ok(b, cfg, log, 0);
    fb_breaker_permit late = admit(b, 0);
    calls(b, FB_EFFECT_FAILURE, 2, 1); /* OPEN until 11 */
    return late;
}

static void breaker_late_result_dropped_by_default_gobreaker(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {0};
    fb_breaker_permit late = trip_holding_late(&b, &cfg, NULL);
    fb_breaker_permit probe = admit(&b, 11);
    report(&b, &late, FB_EFFECT_SUCCESS, 12);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    assert_int_equal(fb_breaker_stats_get(&b)->late, 0);
    report(&b, &probe, FB_EFFECT_SUCCESS, 13);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/* resilience4j and Polly record a result in whatever state is current when it arrives. */
static void breaker_late_result_counted_by_the_current_state(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.late_results = FB_LATE_COUNT};
    fb_breaker_permit late = trip_holding_late(&b, &cfg, &log);
    report(&b, &late, FB_EFFECT_FAILURE, 5); /* in OPEN: nothing decides there */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->late, 1);

    late = trip_holding_late(&b, &cfg, &log);
    fb_breaker_permit probe = admit(&b, 11);
    report(&b, &late, FB_EFFECT_SUCCESS, 12); /* Polly: any result in HALF_OPEN decides */
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_HALF_OPEN, FB_BREAKER_CLOSED,
                 FB_CAUSE_PROBES_SUCCEEDED, 12);
    report(&b, &probe, FB_EFFECT_FAILURE, 13); /* the probe, now late, counts in CLOSED */
    report(&b, &probe, FB_EFFECT_FAILURE, 14);
    assert_state(&b, FB_BREAKER_OPEN); /* two failures in the new window */
    assert_int_equal(fb_breaker_stats_get(&b)->late, 3);

    late = trip_holding_late(&b, &cfg, &log);
    (void)admit(&b, 11);
    report(&b, &late, FB_EFFECT_FAILURE, 12);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_PROBE_FAILED,
                 12);
}

/* gobreaker MaxRequests, resilience4j permittedNumberOfCallsInHalfOpenState: a total. */
static void breaker_probe_limit_per_period_or_concurrent(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 2};
    open_at_zero(&b, &cfg, NULL);
    fb_breaker_permit p1 = admit(&b, 10);
    (void)admit(&b, 10);
    report(&b, &p1, FB_EFFECT_SUCCESS, 11);
    (void)admit(&b, 11); /* concurrent: the reported probe's slot is free again */

    cfg.probe_limit = FB_PROBES_PER_PERIOD;
    open_at_zero(&b, &cfg, NULL);
    p1 = admit(&b, 10);
    fb_breaker_permit p2 = admit(&b, 10);
    report(&b, &p1, FB_EFFECT_SUCCESS, 11);
    reject(&b, 11);                                   /* two admitted this period: no third */
    assert_int_equal(fb_breaker_retry_in(&b, 11), 9); /* until p2's lease ends (10 + 10) */
    report(&b, &p2, FB_EFFECT_IGNORE, 12);            /* an ignored probe gives its permit back */
    fb_breaker_permit p3 = admit(&b, 12);
    report(&b, &p3, FB_EFFECT_SUCCESS, 13);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/* resilience4j: half-open decides by rate once min(minimumNumberOfCalls, permitted) are in. */
static void breaker_probe_verdict_by_rate_resilience4j(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1,
                             .open_us = 10,
                             .half_open_permits = 4,
                             .probe_limit = FB_PROBES_PER_PERIOD,
                             .probe_verdict = FB_VERDICT_RATE};
    const fb_effect fail_half[] = {FB_EFFECT_SUCCESS, FB_EFFECT_FAILURE, FB_EFFECT_SUCCESS,
                                   FB_EFFECT_FAILURE};
    open_at_zero(&b, &cfg, &log);
    for (int i = 0; i < 4; i++) {
        call(&b, fail_half[i], 10 + i);
        /* the first failure does not re-open: 3 outcomes are below min(100, 4) */
        assert_state(&b, i < 3 ? FB_BREAKER_HALF_OPEN : FB_BREAKER_OPEN);
    }
    assert_event(&log.ev[log.n - 1], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE,
                 13); /* 2 / 4 >= 0.5 */
    assert_int_equal(log.ev[log.n - 1].calls, 4);

    open_at_zero(&b, &cfg, &log);
    const fb_effect one_fail[] = {FB_EFFECT_FAILURE, FB_EFFECT_SUCCESS, FB_EFFECT_SUCCESS,
                                  FB_EFFECT_SUCCESS};
    for (int i = 0; i < 4; i++) call(&b, one_fail[i], 10 + i);
    assert_state(&b, FB_BREAKER_CLOSED); /* 1 / 4 < 0.5 */

    cfg.minimum_calls = 2; /* min(2, 4): decided after two */
    open_at_zero(&b, &cfg, NULL);
    call(&b, FB_EFFECT_SUCCESS, 10);
    call(&b, FB_EFFECT_FAILURE, 11);
    assert_state(&b, FB_BREAKER_OPEN);
}

/* resilience4j and gobreaker leave OPEN after the deadline (isAfter, Before); Polly at it. */
static void breaker_open_deadline_reach_or_pass(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10};
    open_at_zero(&b, &cfg, NULL);
    assert_int_equal(fb_breaker_retry_in(&b, 9), 1);
    (void)admit(&b, 10);

    cfg.open_deadline = FB_CMP_PASS;
    open_at_zero(&b, &cfg, NULL);
    assert_int_equal(fb_breaker_retry_in(&b, 9), 2);
    assert_int_equal(fb_breaker_retry_in(&b, 10), 1);
    reject(&b, 10);
    assert_state(&b, FB_BREAKER_OPEN);
    (void)admit(&b, 11);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
}

/* gobreaker's default ReadyToTrip is ConsecutiveFailures > 5; opossum and cockatiel rates are >. */
static void breaker_trip_compare_pass_needs_more_than_the_threshold(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 5, .trip_compare = FB_CMP_PASS};
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 5, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 0); /* the 6th */
    assert_state(&b, FB_BREAKER_OPEN);

    cfg = count_cfg(4, 4);
    cfg.trip_compare = FB_CMP_PASS;
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    assert_state(&b, FB_BREAKER_CLOSED); /* 2 / 4 is not > 0.5 */
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_OPEN); /* 3 / 4 */
}

/* gobreaker, Polly and opossum look at the rules only when a failure is recorded. */
static void breaker_evaluate_on_failure_only(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = count_cfg(4, 4);
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    assert_state(&b, FB_BREAKER_OPEN); /* every record: the success reaching 4 calls trips */

    cfg.evaluate = FB_EVAL_ON_FAILURE;
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_FAILURE, 2, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 1); /* F S S F: 2 / 4 */
    assert_state(&b, FB_BREAKER_OPEN);

    /* Nor when expiring successes raise the rate. */
    cfg = (fb_breaker_config){.mode = FB_BREAKER_MODE_TIME_WINDOW,
                              .window_us = 10 * S,
                              .minimum_calls = 2,
                              .evaluate = FB_EVAL_ON_FAILURE};
    init_ok(&b, &cfg, NULL, 0);
    calls(&b, FB_EFFECT_SUCCESS, 2, 0);
    calls(&b, FB_EFFECT_FAILURE, 1, 5 * S); /* 1 / 3 */
    (void)admit(&b, 10 * S);                /* the successes left: 1 / 1, not looked at */
    assert_state(&b, FB_BREAKER_CLOSED);
}

/* Rules looked at when a call asks to be admitted, not when results come in. */
static void breaker_evaluate_at_admission(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = count_cfg(4, 4);
    cfg.evaluate = FB_EVAL_AT_ADMISSION;
    init_ok(&b, &cfg, &log, 0);
    calls(&b, FB_EFFECT_FAILURE, 3, 0);
    fb_breaker_permit p = admit(&b, 1);
    report(&b, &p, FB_EFFECT_FAILURE, 2);
    assert_state(&b, FB_BREAKER_CLOSED); /* 4 / 4, but nobody asked yet */
    reject(&b, 3);
    assert_int_equal(log.n, 1);
    assert_event(&log.ev[0], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE, 3);
}

/* Polly: a sub-window starts at the first result after the last one filled; it leaves whole. */
static void breaker_buckets_first_event_polly(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.mode = FB_BREAKER_MODE_TIME_WINDOW,
                             .window_us = 10 * S,
                             .minimum_calls = 1,
                             .failure_rate = 1.0};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_SUCCESS, 500 * MS); /* EPOCH: in [0, 1 s), gone at 10 s */
    fb_breaker_poll(&b, 10 * S);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);

    cfg.bucket_anchor = FB_BUCKETS_FIRST_EVENT;
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_SUCCESS, 500 * MS);  /* starts [0.5 s, 1.5 s) */
    call(&b, FB_EFFECT_SUCCESS, 1400 * MS); /* same bucket */
    call(&b, FB_EFFECT_SUCCESS, 1500 * MS); /* a new one at 1.5 s */
    fb_breaker_poll(&b, 10 * S + 499 * MS);
    assert_int_equal(b.calls, 3);
    fb_breaker_poll(&b, 10 * S + 500 * MS); /* the first bucket leaves with both results */
    assert_int_equal(b.calls, 1);
    fb_breaker_poll(&b, 11 * S + 500 * MS);
    assert_true(fb_breaker_failure_rate(&b) == -1.0);
}

/* gobreaker v2: buckets from the state's start; a result lands in its admission's bucket. */
static void breaker_buckets_state_start_gobreaker(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.mode = FB_BREAKER_MODE_TIME_WINDOW,
                             .window_us = 10 * S,
                             .minimum_calls = 1,
                             .failure_rate = 1.0,
                             .bucket_anchor = FB_BUCKETS_STATE_START};
    init_ok(&b, &cfg, NULL, 300 * MS); /* buckets [0.3 s, 1.3 s), [1.3 s, 2.3 s), ... */
    fb_breaker_permit p = admit(&b, 1200 * MS);
    report(&b, &p, FB_EFFECT_SUCCESS, 1500 * MS); /* lands in [0.3 s, 1.3 s) */
    fb_breaker_poll(&b, 10 * S + 299 * MS);
    assert_int_equal(b.calls, 1);
    fb_breaker_poll(&b, 10 * S + 300 * MS);
    assert_int_equal(b.calls, 0);

    init_ok(&b, &cfg, NULL, 300 * MS);
    p = admit(&b, 300 * MS);
    report(&b, &p, FB_EFFECT_FAILURE, 12 * S); /* its bucket has left: counted nowhere */
    assert_int_equal(b.calls, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/* resilience4j releases a cancelled call; gobreaker counts it as a failure; Polly as a success. */
static void breaker_cancelled_counts_as_configured(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_CANCELLED, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit probe = admit(&b, 10);
    report(&b, &probe, FB_EFFECT_CANCELLED, 11); /* ignored: frees the slot */
    (void)admit(&b, 11);

    cfg.cancelled_as = FB_EFFECT_FAILURE;
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_CANCELLED, 0);
    assert_state(&b, FB_BREAKER_OPEN);

    cfg.cancelled_as = FB_EFFECT_SUCCESS;
    open_at_zero(&b, &cfg, NULL);
    call(&b, FB_EFFECT_CANCELLED, 10);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/* resilience4j maxWaitDurationInHalfOpenState, then transitionToStateAfterWaitDuration. */
static void breaker_half_open_max_wait(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_max_us = 5};
    open_at_zero(&b, &cfg, &log);
    fb_breaker_permit probe = admit(&b, 10); /* its lease would end at 20 */
    assert_int_equal(fb_breaker_retry_in(&b, 12), 3);
    fb_breaker_poll(&b, 14);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    fb_breaker_poll(&b, 15);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN,
                 FB_CAUSE_HALF_OPEN_MAX_WAIT, 15);
    report(&b, &probe, FB_EFFECT_SUCCESS, 16);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);

    cfg.half_open_expiry = FB_EXPIRE_TO_CLOSED;
    open_at_zero(&b, &cfg, &log);
    (void)admit(&b, 10);
    reject(&b, 14);
    (void)admit(&b, 15); /* closed at 15, by the call that noticed */
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_string_equal(fb_breaker_cause_name(FB_CAUSE_HALF_OPEN_MAX_WAIT), "half_open_max_wait");
}

/*
 * resilience4j CircuitBreakerMetrics.forHalfOpen: half-open decides after min(minimumNumberOfCalls,
 * permitted) results, the minimum as given, not capped at slidingWindowSize (issue 20, 1).
 */
static void breaker_half_open_minimum_not_capped_by_the_window(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = count_cfg(1, 6); /* closed: the minimum capped at 1 */
    cfg.half_open_permits = 2;
    cfg.open_us = 10;
    cfg.probe_limit = FB_PROBES_PER_PERIOD;
    cfg.probe_verdict = FB_VERDICT_RATE;
    cfg.half_open_minimum = 6;
    open_at_zero(&b, &cfg, NULL);
    assert_state(&b, FB_BREAKER_OPEN);
    call(&b, FB_EFFECT_SUCCESS, 10);
    assert_state(&b, FB_BREAKER_HALF_OPEN); /* min(6, 2) = 2 results needed */
    call(&b, FB_EFFECT_SUCCESS, 11);
    assert_state(&b, FB_BREAKER_CLOSED);

    cfg.half_open_minimum = 0; /* minimum_calls after its cap: 1 */
    open_at_zero(&b, &cfg, NULL);
    call(&b, FB_EFFECT_SUCCESS, 10);
    assert_state(&b, FB_BREAKER_CLOSED);
}

/*
 * half_open_timer: the half-open period ends at entry + half_open_max_us, stamped then, and the
 * open period counts from there, however late it is noticed (issue 20, 2).
 */
static void breaker_half_open_timer_counts_from_its_due_time(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {
        .consecutive_failures = 1, .open_us = 10, .half_open_max_us = 5, .half_open_timer = FB_ON};
    open_at_zero(&b, &cfg, &log);
    assert_int_equal(fb_breaker_next_timer(&b), FB_TIME_NONE); /* open: no open_timer */
    (void)admit(&b, 12);                                       /* half-open at 12 */
    assert_int_equal(fb_breaker_next_timer(&b), 17);
    (void)admit(&b, 30); /* open again at 17 until 27: at 30 half-open again, a probe */
    assert_event(&log.ev[2], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_HALF_OPEN_MAX_WAIT,
                 17);
    assert_int_equal(log.ev[2].open_until_us, 27);
    assert_event(&log.ev[3], FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, 30);
    assert_int_equal(log.n, 4);

    cfg.half_open_timer = FB_OFF; /* the call that finds it expired reopens, counting from it */
    open_at_zero(&b, &cfg, &log);
    (void)admit(&b, 12);
    assert_int_equal(fb_breaker_next_timer(&b), FB_TIME_NONE);
    reject(&b, 30);
    assert_event(&log.ev[2], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_HALF_OPEN_MAX_WAIT,
                 30);
    assert_int_equal(log.ev[2].open_until_us, 40);
}

/*
 * open_timer (resilience4j automaticTransitionFromOpenToHalfOpenEnabled): OPEN -> HALF_OPEN at
 * open_until, stamped then even when noticed later; with half_open_timer, a chain of them.
 */
static void breaker_open_timer_stamps_the_deadline(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .open_timer = FB_ON};
    open_at_zero(&b, &cfg, &log);
    assert_int_equal(fb_breaker_next_timer(&b), 10);
    (void)admit(&b, 25);
    assert_event(&log.ev[1], FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, 10);

    cfg.half_open_timer = FB_ON;
    cfg.half_open_max_us = 5;
    open_at_zero(&b, &cfg, &log);
    fb_breaker_poll(&b, 31); /* half-open 10, open 15-25, half-open 25, open 30 */
    assert_int_equal(log.n, 5);
    assert_event(&log.ev[4], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_HALF_OPEN_MAX_WAIT,
                 30);
    assert_int_equal(fb_breaker_next_timer(&b), 40);

    cfg.open_deadline = FB_CMP_PASS; /* due 1 us after the deadline */
    open_at_zero(&b, &cfg, &log);
    assert_int_equal(fb_breaker_next_timer(&b), 11);
}

/*
 * FB_EVAL_RECORD_ONLY (resilience4j ClosedState): expired buckets change nothing at admission;
 * the next result judges the window (issue 20, 3).
 */
static void breaker_evaluate_record_only(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.mode = FB_BREAKER_MODE_TIME_WINDOW,
                             .window_us = 2 * S,
                             .window_buckets = 2,
                             .minimum_calls = 1,
                             .failure_rate = 0.6,
                             .evaluate = FB_EVAL_RECORD_ONLY};
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_SUCCESS, 0);
    call(&b, FB_EFFECT_FAILURE, 1400 * MS); /* 1 of 2 */
    fb_breaker_permit p = admit(&b, 2 * S); /* the success at 0 expired: 1 of 1, not looked at */
    assert_state(&b, FB_BREAKER_CLOSED);
    report(&b, &p, FB_EFFECT_SUCCESS, 2 * S); /* 1 of 2 */
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 2100 * MS); /* 2 of 3 */
    assert_state(&b, FB_BREAKER_OPEN);

    cfg.evaluate = FB_EVAL_EVERY_RECORD; /* the expiry itself trips */
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_SUCCESS, 0);
    call(&b, FB_EFFECT_FAILURE, 1400 * MS);
    reject(&b, 2 * S);
}

/*
 * release_any (resilience4j HalfOpenState.releasePermission): cancelling a call admitted
 * before the transition gives a half-open permit back (issue 20, 4).
 */
static void breaker_release_any_gives_a_permit_back(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = count_cfg(2, 2);
    cfg.open_us = 10;
    cfg.half_open_permits = 1;
    cfg.probe_limit = FB_PROBES_PER_PERIOD;
    cfg.probe_verdict = FB_VERDICT_RATE;
    cfg.late_results = FB_LATE_COUNT;
    cfg.release_any = FB_ON;
    for (int on = 1; on >= 0; on--) {
        cfg.release_any = on ? FB_ON : FB_OFF;
        init_ok(&b, &cfg, NULL, 0);
        fb_breaker_permit early = admit(&b, 0);
        calls(&b, FB_EFFECT_FAILURE, 2, 1); /* open until 11 */
        (void)admit(&b, 11);                /* half-open: its one permit */
        reject(&b, 12);
        report(&b, &early, FB_EFFECT_CANCELLED, 13);
        if (on) {
            (void)admit(&b, 14);
            reject(&b, 15);
        } else {
            reject(&b, 14);
        }
    }
}

/* Item 6 of issue 10: permits are told apart by admission, not by their lease's end. */
static void breaker_double_report_stale_when_new_probe_took_slot_same_instant(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 10, .half_open_permits = 2};
    open_at_zero(&b, &cfg, NULL);
    fb_breaker_permit p = admit(&b, 10);
    report(&b, &p, FB_EFFECT_SUCCESS, 10);
    fb_breaker_permit q = admit(&b, 10); /* same slot, same lease end */
    assert_int_equal(q.slot, p.slot);
    assert_true(q.id != p.id);
    report(&b, &p, FB_EFFECT_SUCCESS, 10); /* would have been q's, and closed the breaker */
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    report(&b, &q, FB_EFFECT_SUCCESS, 10);
    assert_state(&b, FB_BREAKER_CLOSED);
}

static void breaker_init_rejects_unknown_semantics(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cases[] = {
        {.late_results = (fb_late_result)4},
        {.probe_limit = (fb_probe_limit)3},
        {.probe_verdict = (fb_probe_verdict)2},
        {.open_deadline = (fb_compare)2},
        {.trip_compare = (fb_compare)2},
        {.evaluate = (fb_evaluate)4},
        {.open_timer = (fb_switch)3},
        {.half_open_timer = (fb_switch)3},
        {.release_any = (fb_switch)3},
        {.release_any = FB_ON}, /* needs PER_PERIOD */
        {.bucket_anchor = (fb_bucket_anchor)3},
        {.cancelled_as = FB_EFFECT_CANCELLED},
        {.half_open_expiry = (fb_half_open_expiry)2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (fb_breaker_init(&b, &cases[i], 0) != FB_EINVAL) fail_msg("case %zu accepted", i);
    fb_breaker_config neg = {.half_open_max_us = -1};
    assert_int_equal(fb_breaker_init(&b, &neg, 0), FB_ERANGE);
}

/* opossum (lib/circuit.js fail(), lib/status.js): 10 buckets of 100 us, > 50 %, no minimum. */
static fb_breaker_config fires_config(void) {
    return (fb_breaker_config){.mode = FB_BREAKER_MODE_TIME_WINDOW,
                               .window_us = 1000,
                               .window_buckets = 10,
                               .failure_rate = 0.5,
                               .trip_compare = FB_CMP_PASS,
                               .evaluate = FB_EVAL_ON_FAILURE,
                               .open_us = 300,
                               .half_open_permits = 1,
                               .probe_limit = FB_PROBES_PER_PERIOD,
                               .late_results = FB_LATE_COUNT,
                               .window_scope = FB_WINDOW_FIRES};
}

/* Rejections are fires: after the close, 1 failure in 4 fires does not open again. */
static void breaker_fires_count_rejections_and_survive_transitions(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = fires_config();
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0); /* 1 failure / 1 fire: open until 300 */
    assert_state(&b, FB_BREAKER_OPEN);
    reject(&b, 100);
    reject(&b, 200);
    call(&b, FB_EFFECT_SUCCESS, 300); /* the trial closes */
    assert_state(&b, FB_BREAKER_CLOSED);
    /* the window still holds 4 fires (0, 100, 200, 300) and the failure at 0 */
    call(&b, FB_EFFECT_FAILURE, 400); /* 2 / 5 = 40 % */
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 500); /* 3 / 6 = 50 %: not more than half */
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 999); /* 4 / 7 */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE,
                 999);
    assert_int_equal(log.ev[log.n - 1].calls, 7);
    assert_int_equal(log.ev[log.n - 1].failures, 4);
}

/* A failure whose fire left the window is a rate over no fires: it opens without a minimum. */
static void breaker_fires_failure_alone_opens_without_minimum(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = fires_config();
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit p = admit(&b, 0);
    fb_breaker_poll(&b, 1000); /* the bucket of 0 leaves the window at 1000 */
    assert_state(&b, FB_BREAKER_CLOSED);
    report(&b, &p, FB_EFFECT_FAILURE, 1000);
    assert_state(&b, FB_BREAKER_OPEN);

    cfg.minimum_calls = 2; /* volumeThreshold 2 */
    init_ok(&b, &cfg, NULL, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 10);
    assert_state(&b, FB_BREAKER_OPEN);
}

/*
 * A failure exactly at a rotation from a call made before the previous one: by default it comes
 * before the rotation (a result on a timer set at the call: the older timer), judged with the
 * bucket that leaves; after_timers ON (settled from outside the timers) after it, without.
 */
static void breaker_fires_result_after_timers_comes_after_the_rotation(void **state) {
    (void)state;
    for (int after = 0; after < 2; after++) {
        fb_breaker b;
        fb_breaker_config cfg = fires_config();
        init_ok(&b, &cfg, NULL, 0);
        fb_breaker_permit p = admit(&b, 0);
        call(&b, FB_EFFECT_SUCCESS, 0); /* 2 fires in the bucket [0, 100) */
        fb_breaker_poll(&b, 1000);      /* which leaves at 1000 */
        fb_breaker_record(&b, &p,
                          &(fb_breaker_result){.effect = FB_EFFECT_FAILURE,
                                               .hint_us = FB_TIME_NONE,
                                               .after_timers = after ? FB_ON : FB_DEFAULT},
                          1000);
        /* before: 1 failure in 2 fires, not over half; after: 1 failure, no fire left */
        assert_state(&b, after ? FB_BREAKER_OPEN : FB_BREAKER_CLOSED);
    }
}

/* A late failure counts in the window in any state; FIRES needs an EPOCH time window. */
static void breaker_fires_late_failure_counts_and_needs_a_time_window(void **state) {
    (void)state;
    fb_breaker b;
    fb_breaker_config cfg = fires_config();
    cfg.failure_rate = 0.9;
    init_ok(&b, &cfg, NULL, 0);
    fb_breaker_permit late = admit(&b, 0);
    fb_breaker_set_state(&b, FB_BREAKER_OPEN, 1);
    report(&b, &late, FB_EFFECT_FAILURE, 2); /* counted although OPEN */
    fb_breaker_set_state(&b, FB_BREAKER_CLOSED, 3);
    call(&b, FB_EFFECT_FAILURE, 4); /* 2 failures / 2 fires = 100 % > 90 % */
    assert_state(&b, FB_BREAKER_OPEN);
    cfg = fires_config();
    cfg.mode = FB_BREAKER_MODE_COUNT_WINDOW;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
    cfg = fires_config();
    cfg.bucket_anchor = FB_BUCKETS_FIRST_EVENT;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
    cfg = fires_config();
    cfg.probe_verdict = FB_VERDICT_RATE;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
    cfg = fires_config();
    cfg.window_scope = (fb_window_scope)2;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
}

/*
 * gobreaker's Interval (v2/gobreaker.go currentState: `cb.expiry.Before(now)` ->
 * toNewGeneration): in CLOSED the counts start afresh at the first call past the interval, as a
 * new generation, without a transition.
 */
static void breaker_closed_interval_clears_the_counts(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = {.consecutive_failures = 3, .open_us = 100, .closed_interval_us = 10};
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 1);
    fb_breaker_permit old = admit(&b, 5);
    call(&b, FB_EFFECT_FAILURE, 10); /* at the interval's end: still the same counts */
    uint64_t gen = fb_breaker_generation(&b);
    call(&b, FB_EFFECT_FAILURE, 11); /* past it: a new generation, this is the first failure */
    assert_int_equal(fb_breaker_generation(&b), gen + 1);
    report(&b, &old, FB_EFFECT_FAILURE, 12); /* admitted before: stale */
    assert_int_equal(fb_breaker_stats_get(&b)->stale, 1);
    call(&b, FB_EFFECT_FAILURE, 12);
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_int_equal(log.n, 0); /* no transition */
    call(&b, FB_EFFECT_FAILURE, 13);
    assert_state(&b, FB_BREAKER_OPEN);
    /* the next interval runs from the close: 113 + 10 */
    call(&b, FB_EFFECT_SUCCESS, 113);
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_FAILURE, 114);
    call(&b, FB_EFFECT_FAILURE, 123);
    gen = fb_breaker_generation(&b);
    fb_breaker_poll(&b, 124);
    assert_int_equal(fb_breaker_generation(&b), gen + 1);
    call(&b, FB_EFFECT_FAILURE, 125);
    assert_state(&b, FB_BREAKER_CLOSED);
    cfg.closed_interval_us = -1;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_ERANGE);
}

/*
 * gobreaker's afterRequest calls currentState(now) before judging a result: a result reported
 * after the open period moves OPEN to HALF_OPEN at its own time (and, admitted in CLOSED, is
 * then dropped). Recorded from gobreaker v2.4.0 (tests/conformance/gobreaker-2.4.0, "random
 * 0009": the transition at the late result, not at the next request). Off (the default), the
 * move waits for the next allow().
 */
static void breaker_result_after_open_period_moves_to_half_open(void **state) {
    (void)state;
    for (int on = 0; on < 2; on++) {
        fb_breaker b;
        ev_log log;
        fb_breaker_config cfg = {.consecutive_failures = 1, .open_us = 100};
        if (on) cfg.open_elapses_on_result = FB_ON;
        init_ok(&b, &cfg, &log, 0);
        fb_breaker_permit a = admit(&b, 0), c = admit(&b, 0);
        call(&b, FB_EFFECT_FAILURE, 1);         /* open until 101 */
        report(&b, &a, FB_EFFECT_FAILURE, 100); /* before the end (101): still open */
        assert_state(&b, FB_BREAKER_OPEN);
        report(&b, &c, FB_EFFECT_SUCCESS, 150);
        assert_state(&b, on ? FB_BREAKER_HALF_OPEN : FB_BREAKER_OPEN);
        assert_int_equal(fb_breaker_stats_get(&b)->stale, 2); /* both from CLOSED: dropped */
        fb_breaker_permit p = admit(&b, 160);                 /* the probe */
        assert_int_equal(log.n, 2);
        assert_event(&log.ev[1], FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED,
                     on ? 150 : 160);
        report(&b, &p, FB_EFFECT_SUCCESS, 161);
        assert_state(&b, FB_BREAKER_CLOSED);
    }
    fb_breaker b;
    fb_breaker_config bad = {.open_elapses_on_result = (fb_switch)3};
    assert_int_equal(fb_breaker_init(&b, &bad, 0), FB_EINVAL);
}

/* pybreaker calling() (tests/conformance/pybreaker-1.4.1): the configuration of its preset. */
static fb_breaker_config as_admitted_cfg(uint32_t fail_max, uint32_t successes) {
    return (fb_breaker_config){.consecutive_failures = fail_max,
                               .open_us = 100,
                               .half_open_permits = successes,
                               .probe_lease_us = FB_TIME_MAX,
                               .evaluate = FB_EVAL_ON_FAILURE,
                               .late_results = FB_LATE_AS_ADMITTED,
                               .probe_limit = FB_PROBES_NONE};
}

/* Half-open admits every caller; PROBES_NONE without AS_ADMITTED is refused. */
static void breaker_probes_none_admits_every_caller(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = as_admitted_cfg(1, 1);
    init_ok(&b, &cfg, &log, 0);
    call(&b, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p[20];
    for (int i = 0; i < 20; i++) p[i] = admit(&b, 100);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_true(fb_breaker_admits(&b, 100));
    report(&b, &p[3], FB_EFFECT_SUCCESS, 101);
    assert_state(&b, FB_BREAKER_CLOSED);
    cfg.late_results = FB_LATE_COUNT;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
    cfg = as_admitted_cfg(1, 1);
    cfg.mode = FB_BREAKER_MODE_COUNT_WINDOW;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
}

/*
 * A CLOSED call's failure judged by CircuitClosedState.on_failure whatever the state now: the
 * counter, not cleared on opening, is still at fail_max, so it re-opens a half-open breaker;
 * once a success reset the counter, it does not.
 */
static void breaker_as_admitted_closed_failure_reopens_half_open(void **state) {
    (void)state;
    for (int reset = 0; reset < 2; reset++) {
        fb_breaker b;
        ev_log log;
        fb_breaker_config cfg = as_admitted_cfg(2, 2);
        init_ok(&b, &cfg, &log, 0);
        fb_breaker_permit late = admit(&b, 0);
        call(&b, FB_EFFECT_FAILURE, 1);
        call(&b, FB_EFFECT_FAILURE, 2); /* opens: counter 2 */
        fb_breaker_permit probe = admit(&b, 102);
        if (reset) report(&b, &probe, FB_EFFECT_SUCCESS, 103); /* 1 of 2: counter 0 */
        report(&b, &late, FB_EFFECT_FAILURE, 104);
        assert_state(&b, reset ? FB_BREAKER_HALF_OPEN : FB_BREAKER_OPEN);
        if (!reset)
            assert_event(&log.ev[2], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN,
                         FB_CAUSE_CONSECUTIVE_FAILURES, 104);
    }
}

/* A late failure in OPEN re-opens from now; a half-open call's success closes from OPEN. */
static void breaker_as_admitted_results_act_from_any_state(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = as_admitted_cfg(1, 1);
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_permit late = admit(&b, 0);
    call(&b, FB_EFFECT_FAILURE, 1);           /* open until 101 */
    report(&b, &late, FB_EFFECT_FAILURE, 50); /* open again, until 150 */
    reject(&b, 101);
    reject(&b, 149);
    fb_breaker_permit a = admit(&b, 150), c = admit(&b, 150);
    report(&b, &a, FB_EFFECT_FAILURE, 151); /* a probe's failure: open until 251 */
    assert_state(&b, FB_BREAKER_OPEN);
    report(&b, &c, FB_EFFECT_SUCCESS, 152); /* the other probe's success closes it */
    assert_state(&b, FB_BREAKER_CLOSED);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_OPEN, FB_BREAKER_CLOSED, FB_CAUSE_PROBES_SUCCEEDED,
                 152);
    (void)admit(&b, 153);
}

/* cockatiel's ConsecutiveBreaker (tests/conformance/cockatiel-4.0.0): its preset's breaker. */
static fb_breaker_config run_cfg(uint32_t n) {
    return (fb_breaker_config){.consecutive_failures = n,
                               .open_us = 100,
                               .open_us_max = 100,
                               .half_open_permits = 1,
                               .probe_lease_us = FB_TIME_MAX,
                               .evaluate = FB_EVAL_ON_FAILURE,
                               .late_results = FB_LATE_RUN,
                               .probe_limit = FB_PROBES_PER_PERIOD,
                               .cancelled_as = FB_EFFECT_FAILURE};
}

/* RUN needs CONSECUTIVE mode; a late success in HALF_OPEN resets the run and never closes. */
static void breaker_run_late_success_resets_never_closes(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = run_cfg(2);
    cfg.mode = FB_BREAKER_MODE_COUNT_WINDOW;
    assert_int_equal(fb_breaker_init(&b, &cfg, 0), FB_EINVAL);
    cfg = run_cfg(2);
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_permit l1 = admit(&b, 0), l2 = admit(&b, 0), l3 = admit(&b, 0);
    call(&b, FB_EFFECT_FAILURE, 1);
    call(&b, FB_EFFECT_FAILURE, 2); /* opens: run 2, kept */
    fb_breaker_permit probe = admit(&b, 102);
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    report(&b, &l1, FB_EFFECT_SUCCESS, 103); /* the run back to 0; no close */
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->late, 1);
    report(&b, &l2, FB_EFFECT_FAILURE, 104); /* run 1 of 2 */
    assert_state(&b, FB_BREAKER_HALF_OPEN);
    report(&b, &l3, FB_EFFECT_CANCELLED, 105); /* cancelled_as FAILURE: run 2, opens */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN,
                 FB_CAUSE_CONSECUTIVE_FAILURES, 105);
    uint64_t stale = fb_breaker_stats_get(&b)->stale;
    report(&b, &probe, FB_EFFECT_SUCCESS, 106); /* its half-open period is over */
    assert_state(&b, FB_BREAKER_OPEN);
    assert_int_equal(fb_breaker_stats_get(&b)->stale, stale + 1);
    reject(&b, 204);
    (void)admit(&b, 205);
}

/*
 * A late failure leaves an OPEN breaker as it is (its deadline too) but raises the run; a
 * trial that outlives its period counts nowhere, not even in the CLOSED that follows.
 */
static void breaker_run_late_failure_leaves_open_and_stale_trial(void **state) {
    (void)state;
    fb_breaker b;
    ev_log log;
    fb_breaker_config cfg = run_cfg(1);
    init_ok(&b, &cfg, &log, 0);
    fb_breaker_permit l1 = admit(&b, 0), l2 = admit(&b, 0);
    call(&b, FB_EFFECT_FAILURE, 1); /* open until 101 */
    int opened = log.n;
    report(&b, &l1, FB_EFFECT_FAILURE, 50);
    assert_int_equal(log.n, opened);
    assert_int_equal(fb_breaker_open_until(&b), 101);
    fb_breaker_permit trial = admit(&b, 101);
    report(&b, &l2, FB_EFFECT_FAILURE, 102); /* the run reaches 1: half-open opens again */
    assert_state(&b, FB_BREAKER_OPEN);
    fb_breaker_permit next = admit(&b, 202);
    report(&b, &next, FB_EFFECT_SUCCESS, 202);
    assert_state(&b, FB_BREAKER_CLOSED);
    report(&b, &trial, FB_EFFECT_FAILURE, 203); /* stale: the CLOSED run does not move */
    assert_state(&b, FB_BREAKER_CLOSED);
    call(&b, FB_EFFECT_SUCCESS, 204);
    call(&b, FB_EFFECT_FAILURE, 205); /* a fresh failure still opens at once */
    assert_state(&b, FB_BREAKER_OPEN);
    /* the trial's own failure opens; a cancelled trial too */
    fb_breaker_permit t2 = admit(&b, 305);
    report(&b, &t2, FB_EFFECT_CANCELLED, 306);
    assert_state(&b, FB_BREAKER_OPEN);
    assert_event(&log.ev[log.n - 1], FB_BREAKER_HALF_OPEN, FB_BREAKER_OPEN, FB_CAUSE_PROBE_FAILED,
                 306);
}

/* Two permits handed out alike. */
static void assert_same_permit(const fb_breaker_permit *a, const fb_breaker_permit *b) {
    assert_int_equal(a->generation, b->generation);
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->admitted_us, b->admitted_us);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->slot, b->slot);
}

/* Two breakers are in the same state, counts and stats. */
static void assert_same_breaker(const fb_breaker *a, const fb_breaker *b) {
    assert_int_equal(a->state, b->state);
    assert_int_equal(a->generation, b->generation);
    assert_int_equal(a->open_until_us, b->open_until_us);
    assert_int_equal(a->calls, b->calls);
    assert_int_equal(a->failures, b->failures);
    assert_int_equal(a->slow, b->slow);
    assert_int_equal(a->consecutive_failures, b->consecutive_failures);
    assert_int_equal(a->ring_head, b->ring_head);
    assert_int_equal(a->trips, b->trips);
    assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
    assert_memory_equal(a->buckets, b->buckets, sizeof a->buckets);
    assert_memory_equal(a->fail_bits, b->fail_bits, sizeof a->fail_bits);
}

/*
 * record()'s short way (record_closed, for a CLOSED generation's SUCCESS or FAILURE) against
 * its full steps, on random configs, times and results: the same breaker with its
 * plain_record mark cleared takes the full steps, and must end in the same state after each.
 */
static void breaker_short_record_counts_as_the_full_steps(void **state) {
    (void)state;
    static const fb_effect effects[] = {FB_EFFECT_SUCCESS, FB_EFFECT_SUCCESS, FB_EFFECT_FAILURE,
                                        FB_EFFECT_FAILURE, FB_EFFECT_IGNORE,  FB_EFFECT_CANCELLED};
    fb_rng rng;
    fb_rng_seed(&rng, 24, 2);
    uint64_t short_ways = 0;
    for (int run = 0; run < 300; run++) {
        fb_breaker_config cfg = {
            .mode = (fb_breaker_mode)fb_rng_below(&rng, 3),
            .consecutive_failures = 2 + (uint32_t)fb_rng_below(&rng, 4),
            .window_calls = 4 + (uint32_t)fb_rng_below(&rng, 20),
            .window_us = 10 * S,
            .window_buckets = (uint32_t[]){1, 2, 5, 10, 20}[fb_rng_below(&rng, 5)],
            .minimum_calls = 1 + (uint32_t)fb_rng_below(&rng, 10),
            .failure_rate = 0.2 + 0.2 * (double)fb_rng_below(&rng, 4),
            .slow_us = fb_rng_below(&rng, 2) ? 300 * MS : 0,
            .open_us = 2 * S,
            .evaluate = (fb_evaluate)fb_rng_below(&rng, 4),
            .trip_compare = (fb_compare)fb_rng_below(&rng, 2),
            .late_results = (fb_late_result)fb_rng_below(&rng, 2),
            .closed_interval_us = fb_rng_below(&rng, 3) == 0 ? 7 * S : 0,
            .cancelled_as = (fb_effect)fb_rng_below(&rng, 3),
        };
        fb_breaker a, b;
        init_ok(&a, &cfg, NULL, 0);
        assert_true(a.plain_record);
        b = a;
        b.plain_record = false;
        fb_breaker_permit held[4];
        uint32_t n_held = 0;
        fb_time_us now = 0;
        for (int step = 0; step < 300; step++) {
            now += (fb_time_us)fb_rng_below(&rng, 800) * MS;
            if (n_held < 4 && fb_rng_below(&rng, 2)) {
                fb_breaker_permit pa, pb;
                bool ya = fb_breaker_allow(&a, now, &pa), yb = fb_breaker_allow(&b, now, &pb);
                assert_int_equal(ya, yb);
                assert_same_permit(&pa, &pb);
                if (ya) held[n_held++] = pa;
            } else if (n_held > 0) {
                uint32_t k = (uint32_t)fb_rng_below(&rng, n_held);
                fb_breaker_result r = {
                    .effect = effects[fb_rng_below(&rng, sizeof effects / sizeof *effects)],
                    .duration_us = (fb_time_us)fb_rng_below(&rng, 600) * MS,
                    .hint_us = fb_rng_below(&rng, 2) ? FB_TIME_NONE : 5 * S,
                    .trip = fb_rng_below(&rng, 8) == 0 ? (fb_trip)(1 + fb_rng_below(&rng, 2))
                                                       : FB_TRIP_RULES,
                    .failure_limit =
                        fb_rng_below(&rng, 4) ? 0 : 1 + (uint32_t)fb_rng_below(&rng, 3),
                };
                short_ways += a.state == FB_BREAKER_CLOSED && held[k].generation == a.generation &&
                              r.trip == FB_TRIP_RULES &&
                              (r.effect == FB_EFFECT_SUCCESS || r.effect == FB_EFFECT_FAILURE);
                fb_breaker_record(&a, &held[k], &r, now);
                fb_breaker_record(&b, &held[k], &r, now);
                held[k] = held[--n_held];
            }
            assert_same_breaker(&a, &b);
        }
    }
    assert_true(short_ways > 5000); /* the short way was taken, not only the full steps */
}

/*
 * fb_breaker_allow_inline's short ways (now <= allow_until_us: admitted; now <=
 * reject_until_us: rejected) against fb_breaker_allow's steps, on random configs (buckets of
 * each anchor, FIRES, evaluation at admission, a closed interval, both open deadlines, an open
 * timer), times that sometimes go back, results, manual transitions and synced deadlines: the
 * same breaker with both cleared before each ask takes the steps, and must end the same.
 */
static void breaker_inline_allow_admits_as_the_steps(void **state) {
    (void)state;
    static const fb_effect effects[] = {FB_EFFECT_SUCCESS, FB_EFFECT_FAILURE, FB_EFFECT_IGNORE};
    fb_rng rng;
    fb_rng_seed(&rng, 24, 3);
    uint64_t short_ways = 0, short_rejections = 0;
    for (int run = 0; run < 300; run++) {
        bool fires = fb_rng_below(&rng, 6) == 0;
        fb_breaker_config cfg = {
            .mode = fires ? FB_BREAKER_MODE_TIME_WINDOW : (fb_breaker_mode)fb_rng_below(&rng, 3),
            .window_calls = 4 + (uint32_t)fb_rng_below(&rng, 20),
            .window_us = 10 * S,
            .window_buckets = (uint32_t[]){1, 2, 5, 10, 20}[fb_rng_below(&rng, 5)],
            .minimum_calls = 1 + (uint32_t)fb_rng_below(&rng, 10),
            .failure_rate = 0.2 + 0.2 * (double)fb_rng_below(&rng, 4),
            .open_us = 2 * S,
            .evaluate = (fb_evaluate)fb_rng_below(&rng, 4),
            .closed_interval_us = fb_rng_below(&rng, 3) == 0 ? 7 * S : 0,
            .bucket_anchor = fires ? FB_BUCKETS_EPOCH : (fb_bucket_anchor)fb_rng_below(&rng, 3),
            .window_scope = fires ? FB_WINDOW_FIRES : FB_WINDOW_PER_STATE,
            .open_deadline = (fb_compare)fb_rng_below(&rng, 2),
            .open_timer = fb_rng_below(&rng, 8) == 0 ? FB_ON : FB_DEFAULT,
        };
        fb_breaker a, b;
        init_ok(&a, &cfg, NULL, 0);
        b = a;
        fb_breaker_permit held[4];
        uint32_t n_held = 0;
        fb_time_us now = 0;
        for (int step = 0; step < 300; step++) {
            now += (fb_time_us)fb_rng_below(&rng, 1600) * MS - (fb_rng_below(&rng, 10) == 0) * S;
            if (now < 0) now = 0;
            uint64_t pick = fb_rng_below(&rng, 40);
            if (pick == 0) {
                fb_breaker_state to = (fb_breaker_state)fb_rng_below(&rng, 3);
                assert_int_equal(fb_breaker_set_state(&a, to, now), FB_OK);
                assert_int_equal(fb_breaker_set_state(&b, to, now), FB_OK);
            } else if (pick == 1) { /* a shared store's deadline, in the same state or not */
                fb_time_us until = now + (fb_time_us)fb_rng_below(&rng, 4000) * MS;
                assert_int_equal(fb_breaker_sync(&a, FB_BREAKER_OPEN, until, now), FB_OK);
                assert_int_equal(fb_breaker_sync(&b, FB_BREAKER_OPEN, until, now), FB_OK);
            } else if (n_held < 4 && pick % 2 == 0) {
                fb_breaker_permit pa, pb;
                /* allow()'s own short way applies: so does the inline one */
                bool quick = a.state == FB_BREAKER_CLOSED && cfg.evaluate != FB_EVAL_AT_ADMISSION &&
                             !fires && cfg.bucket_anchor != FB_BUCKETS_FIRST_EVENT &&
                             now <= a.closed_until_us &&
                             (cfg.mode != FB_BREAKER_MODE_TIME_WINDOW ||
                              now - a.newest_start_us < a.bucket_us);
                assert_true(!quick || now <= a.allow_until_us);
                /* ... and its rejection in an OPEN period that runs on */
                bool runs_on = cfg.open_deadline == FB_CMP_PASS ? now <= a.open_until_us
                                                                : now < a.open_until_us;
                bool shut =
                    a.state == FB_BREAKER_OPEN && cfg.open_timer != FB_ON && !fires && runs_on;
                assert_true(!shut || now <= a.reject_until_us);
                short_ways += now <= a.allow_until_us;
                short_rejections += now <= a.reject_until_us;
                b.allow_until_us = INT64_MIN;
                b.reject_until_us = INT64_MIN;
                bool ya = fb_breaker_allow_inline(&a, now, &pa);
                bool yb = fb_breaker_allow_inline(&b, now, &pb);
                assert_int_equal(ya, yb);
                assert_same_permit(&pa, &pb);
                if (ya) held[n_held++] = pa;
            } else if (n_held > 0) {
                uint32_t k = (uint32_t)fb_rng_below(&rng, n_held);
                fb_breaker_result r = {.effect = effects[fb_rng_below(&rng, 3)],
                                       .duration_us = (fb_time_us)fb_rng_below(&rng, 600) * MS,
                                       .hint_us = FB_TIME_NONE};
                fb_breaker_record(&a, &held[k], &r, now);
                fb_breaker_record(&b, &held[k], &r, now);
                held[k] = held[--n_held];
            }
            assert_same_breaker(&a, &b);
            assert_int_equal(a.closed_until_us, b.closed_until_us);
            assert_int_equal(a.newest_start_us, b.newest_start_us);
        }
    }
    assert_true(short_ways > 5000); /* the short ways were taken, not only the steps */
    assert_true(short_rejections > 2000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(breaker_init_applies_defaults),
        cmocka_unit_test(breaker_init_rejects_invalid_config),
        cmocka_unit_test(breaker_initial_state_comes_from_config),
        cmocka_unit_test(breaker_consecutive_trips_at_threshold_not_before),
        cmocka_unit_test(breaker_consecutive_success_resets_run),
        cmocka_unit_test(breaker_consecutive_ignore_neither_counts_nor_resets),
        cmocka_unit_test(breaker_failure_rate_equal_to_threshold_trips),
        cmocka_unit_test(breaker_rate_threshold_compares_the_observed_ratio),
        cmocka_unit_test(breaker_count_window_minimum_is_capped_at_window_size),
        cmocka_unit_test(breaker_success_that_reaches_minimum_can_trip),
        cmocka_unit_test(breaker_count_window_forgets_old_outcomes),
        cmocka_unit_test(breaker_count_window_wraps_across_words),
        cmocka_unit_test(breaker_slow_threshold_is_strict_and_slow_rate_trips),
        cmocka_unit_test(breaker_count_window_forgets_old_slow_calls),
        cmocka_unit_test(breaker_failure_rate_names_the_cause_when_both_rules_break),
        cmocka_unit_test(breaker_time_window_trips_once_minimum_reached_resilience4j_842),
        cmocka_unit_test(breaker_time_window_below_minimum_never_trips),
        cmocka_unit_test(breaker_bucket_boundary_event_is_counted_armeria_2761),
        cmocka_unit_test(breaker_time_buckets_align_to_time_zero),
        cmocka_unit_test(breaker_time_buckets_align_before_time_zero),
        cmocka_unit_test(breaker_expiring_successes_trip_on_allow),
        cmocka_unit_test(breaker_expiring_successes_trip_on_poll),
        cmocka_unit_test(breaker_expiring_failures_and_slow_calls_leave_the_window),
        cmocka_unit_test(breaker_time_window_huge_gap_clears_window),
        cmocka_unit_test(breaker_ignored_and_rejected_calls_are_not_in_denominator),
        cmocka_unit_test(breaker_window_is_fresh_after_close_resilience4j_547),
        cmocka_unit_test(breaker_open_becomes_half_open_exactly_at_deadline),
        cmocka_unit_test(breaker_half_open_admits_exactly_permitted_probes_polly_216),
        cmocka_unit_test(breaker_half_open_closes_after_permitted_successes),
        cmocka_unit_test(breaker_reported_probe_frees_its_slot),
        cmocka_unit_test(breaker_half_open_any_probe_failure_reopens),
        cmocka_unit_test(breaker_slow_probe_counts_as_failure),
        cmocka_unit_test(breaker_ignored_probe_releases_permit_erpc_1118),
        cmocka_unit_test(breaker_hung_probe_lease_expires_omniroute_13836),
        cmocka_unit_test(breaker_double_report_of_a_probe_is_stale),
        cmocka_unit_test(breaker_stale_success_does_not_close_polly_217),
        cmocka_unit_test(breaker_stale_failure_does_not_count_in_new_window),
        cmocka_unit_test(breaker_generation_increments_on_every_transition),
        cmocka_unit_test(breaker_rejected_and_untracked_permits_are_no_ops),
        cmocka_unit_test(breaker_open_duration_grows_linearly_to_cap),
        cmocka_unit_test(breaker_open_duration_grows_exponentially_to_cap),
        cmocka_unit_test(breaker_trips_reset_on_close),
        cmocka_unit_test(breaker_hint_extends_open_up_to_cap),
        cmocka_unit_test(breaker_hint_ignored_when_off_or_not_tripping),
        cmocka_unit_test(breaker_open_jitter_stays_within_bounds_and_cap),
        cmocka_unit_test(breaker_open_until_saturates_at_time_max),
        cmocka_unit_test(breaker_forced_open_rejects_everything),
        cmocka_unit_test(breaker_forced_closed_records_but_never_trips),
        cmocka_unit_test(breaker_disabled_admits_untracked_and_records_nothing),
        cmocka_unit_test(breaker_metrics_only_signals_once_per_excursion),
        cmocka_unit_test(breaker_metrics_only_signals_on_window_expiry),
        cmocka_unit_test(breaker_set_state_closed_starts_fresh),
        cmocka_unit_test(breaker_set_state_half_open_starts_fresh_probes),
        cmocka_unit_test(breaker_set_state_open_counts_as_a_trip),
        cmocka_unit_test(breaker_sync_copies_remote_state),
        cmocka_unit_test(breaker_event_payload_is_complete),
        cmocka_unit_test(breaker_state_and_cause_names),
        cmocka_unit_test(breaker_late_result_dropped_by_default_gobreaker),
        cmocka_unit_test(breaker_late_result_counted_by_the_current_state),
        cmocka_unit_test(breaker_probe_limit_per_period_or_concurrent),
        cmocka_unit_test(breaker_probe_verdict_by_rate_resilience4j),
        cmocka_unit_test(breaker_open_deadline_reach_or_pass),
        cmocka_unit_test(breaker_trip_compare_pass_needs_more_than_the_threshold),
        cmocka_unit_test(breaker_evaluate_on_failure_only),
        cmocka_unit_test(breaker_evaluate_at_admission),
        cmocka_unit_test(breaker_buckets_first_event_polly),
        cmocka_unit_test(breaker_buckets_state_start_gobreaker),
        cmocka_unit_test(breaker_cancelled_counts_as_configured),
        cmocka_unit_test(breaker_half_open_max_wait),
        cmocka_unit_test(breaker_double_report_stale_when_new_probe_took_slot_same_instant),
        cmocka_unit_test(breaker_half_open_minimum_not_capped_by_the_window),
        cmocka_unit_test(breaker_half_open_timer_counts_from_its_due_time),
        cmocka_unit_test(breaker_open_timer_stamps_the_deadline),
        cmocka_unit_test(breaker_evaluate_record_only),
        cmocka_unit_test(breaker_release_any_gives_a_permit_back),
        cmocka_unit_test(breaker_init_rejects_unknown_semantics),
        cmocka_unit_test(breaker_fires_count_rejections_and_survive_transitions),
        cmocka_unit_test(breaker_fires_failure_alone_opens_without_minimum),
        cmocka_unit_test(breaker_fires_late_failure_counts_and_needs_a_time_window),
        cmocka_unit_test(breaker_fires_result_after_timers_comes_after_the_rotation),
        cmocka_unit_test(breaker_closed_interval_clears_the_counts),
        cmocka_unit_test(breaker_result_after_open_period_moves_to_half_open),
        cmocka_unit_test(breaker_probes_none_admits_every_caller),
        cmocka_unit_test(breaker_as_admitted_closed_failure_reopens_half_open),
        cmocka_unit_test(breaker_as_admitted_results_act_from_any_state),
        cmocka_unit_test(breaker_run_late_success_resets_never_closes),
        cmocka_unit_test(breaker_run_late_failure_leaves_open_and_stale_trial),
        cmocka_unit_test(breaker_short_record_counts_as_the_full_steps),
        cmocka_unit_test(breaker_inline_allow_admits_as_the_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
