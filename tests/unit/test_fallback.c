/* test_fallback.c - the request path: skips, retries, fallbacks, stops. Times are data. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/fallback.h"
#include "tests/unit/helpers.h"

/* Classes as fb_classify's default table gives them. */
static const fb_class OK = {.outcome = FB_OUT_SUCCESS, .effect = FB_EFFECT_SUCCESS};
static const fb_class E503 = {.outcome = FB_OUT_TRANSIENT,
                              .retryable = true,
                              .effect = FB_EFFECT_FAILURE,
                              .may_fallback = true};
static const fb_class E400 = {.outcome = FB_OUT_PERMANENT, .effect = FB_EFFECT_IGNORE};
static const fb_class POLICY = {.outcome = FB_OUT_POLICY, .effect = FB_EFFECT_IGNORE};
static const fb_class CONTEXT = {
    .outcome = FB_OUT_CONTEXT_LENGTH, .effect = FB_EFFECT_IGNORE, .may_fallback = true};
static const fb_class TIMEOUT_NO_RETRY = {
    .outcome = FB_OUT_TIMEOUT, .effect = FB_EFFECT_FAILURE, .may_fallback = true};

/* A 503 after output had streamed. */
static fb_class e503_streamed(void) {
    fb_class c = E503;
    c.after_first_token = true;
    return c;
}

#define assert_attempt(d, p)                                                                       \
    do {                                                                                           \
        assert_int_equal((d).action, FB_ACT_ATTEMPT);                                              \
        assert_int_equal((d).provider, (p));                                                       \
    } while (0)

#define assert_wait(d, p, us)                                                                      \
    do {                                                                                           \
        assert_int_equal((d).action, FB_ACT_WAIT);                                                 \
        assert_int_equal((d).provider, (p));                                                       \
        assert_int_equal((d).delay_us, (us));                                                      \
    } while (0)

#define assert_done(d, s)                                                                          \
    do {                                                                                           \
        assert_int_equal((d).action, FB_ACT_DONE);                                                 \
        assert_string_equal(fb_stop_name((d).stop), fb_stop_name(s));                              \
    } while (0)

/* A chain of providers, each with a breaker (3 failures in a row open it for 10 s). */
typedef struct chain {
    fb_fallback fb;
    fb_fallback_config cfg;
    fb_breaker br[FB_FALLBACK_PROVIDERS_MAX];
    fb_ratelimit rl[FB_FALLBACK_PROVIDERS_MAX];
    fb_retry_policy retry;
    fb_budget budget;
} chain;

/* Provider i's breaker opens after `failures` failures in a row, for 10 s. */
static void chain_breaker(chain *ch, uint32_t i, uint32_t failures) {
    fb_breaker_config bc = {.consecutive_failures = failures, .open_us = 10 * S};
    assert_int_equal(fb_breaker_init(&ch->br[i], &bc, 0), FB_OK);
    ch->cfg.providers[i].breaker = &ch->br[i];
}

static void chain_setup(chain *ch, uint32_t n) {
    memset(ch, 0, sizeof *ch);
    ch->cfg.provider_count = n;
    for (uint32_t i = 0; i < n; i++) chain_breaker(ch, i, 3);
}

/* Exponential backoff from base_us, no jitter: waits of base, 2 base, 4 base... */
static void chain_retry(chain *ch, fb_retry_config rc) {
    rc.jitter = FB_JITTER_NONE;
    assert_int_equal(fb_retry_policy_init(&ch->retry, &rc), FB_OK);
    ch->cfg.retry = &ch->retry;
}

static void chain_limit(chain *ch, uint32_t i, fb_ratelimit_config rc) {
    assert_int_equal(fb_ratelimit_init(&ch->rl[i], &rc, 0), FB_OK);
    ch->cfg.providers[i].ratelimit = &ch->rl[i];
}

static void chain_init(chain *ch) {
    assert_int_equal(fb_fallback_init(&ch->fb, &ch->cfg), FB_OK);
}

/* Open a breaker the way traffic does: failed calls until it opens (at most three). */
static void trip(fb_breaker *b, fb_time_us now_us) {
    for (int i = 0; i < 3 && fb_breaker_state_get(b) != FB_BREAKER_OPEN; i++) {
        fb_breaker_permit p;
        assert_true(fb_breaker_allow(b, now_us, &p));
        fb_breaker_record(b, &p,
                          &(fb_breaker_result){.effect = FB_EFFECT_FAILURE,
                                               .duration_us = 0,
                                               .hint_us = FB_TIME_NONE},
                          now_us);
    }
    assert_int_equal(fb_breaker_state_get(b), FB_BREAKER_OPEN);
}

static uint64_t breaker_asked(const fb_breaker *b) {
    const fb_breaker_stats *st = fb_breaker_stats_get(b);
    return st->admitted + st->rejected;
}

/* ---- the happy path and plain fallback ---- */

static void fallback_primary_success(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch,
                (fb_retry_config){.attempts = 3, .base_us = 100 * MS, .attempt_timeout_us = 2 * S});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_int_equal(d.timeout_us, 2 * S);
    assert_false(d.resume);
    assert_false(d.via_fallback);

    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 350 * MS);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(d.provider, 0);
    assert_false(d.via_fallback);
    assert_false(d.degraded);
    assert_int_equal(d.last_outcome, FB_OUT_SUCCESS);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 1);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 0);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_primary_503_retries_then_fallback_succeeds(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    assert_int_equal(d.last_outcome, FB_OUT_TRANSIENT);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_attempt(d, 0);
    assert_false(d.via_fallback);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2100 * MS);
    assert_wait(d, 0, 200 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 2300 * MS);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 3300 * MS);
    assert_attempt(d, 1);
    assert_true(d.via_fallback);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 4300 * MS);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(d.provider, 1);
    assert_true(d.via_fallback);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 4);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 1);
    /* Three failures in a row opened the primary's breaker. */
    assert_int_equal(fb_breaker_state_get(&ch.br[0]), FB_BREAKER_OPEN);
}

/* The counts are a view of the request, and a new request on the same struct starts them at 0. */
static void fallback_request_stats_get_follows_the_request_and_restarts_with_begin(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .backoff = FB_BACKOFF_NONE});
    chain_init(&ch);
    fb_fallback_request req;
    const fb_fallback_request_stats *st = fb_fallback_request_stats_get(&req);

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_int_equal(st->attempts, 1);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S); /* no backoff: at once */
    assert_attempt(d, 0);
    assert_int_equal(st->retries, 1);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_attempt(d, 1);
    assert_int_equal(st->fallbacks, 1);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 3 * S);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(st->attempts, 3);
    assert_int_equal(st->retries, 1);
    assert_int_equal(st->fallbacks, 1);

    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 4 * S);
    assert_ptr_equal(fb_fallback_request_stats_get(&req), st);
    assert_int_equal(st->attempts, 1);
    assert_int_equal(st->retries + st->fallbacks, 0);
}

static void fallback_retry_state_is_fresh_for_each_provider(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_breaker(&ch, 0, 100);
    chain_breaker(&ch, 1, 100);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_attempt(d, 1);
    /* The fallback's first retry waits the first backoff again, not the third. */
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 3 * S);
    assert_wait(d, 1, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 3100 * MS);
    assert_attempt(d, 1);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 4 * S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(d.provider, 1);
    assert_int_equal(d.last_outcome, FB_OUT_TRANSIENT);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 4);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 1);
}

static void fallback_every_provider_visited_once(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    for (uint32_t i = 0; i < 3; i++) chain_breaker(&ch, i, 100);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;
    int per_provider[3] = {0, 0, 0};
    int steps = 0;

    fb_time_us t = 0;
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, t);
    while (d.action != FB_ACT_DONE && steps++ < 100) {
        t += 50 * MS;
        if (d.action == FB_ACT_ATTEMPT) {
            per_provider[d.provider]++;
            d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, t);
        } else {
            assert_true(d.delay_us > 0);
            t += d.delay_us;
            d = fb_fallback_resume(&ch.fb, &req, t);
        }
    }
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(per_provider[0], 2);
    assert_int_equal(per_provider[1], 2);
    assert_int_equal(per_provider[2], 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 6);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 3);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 2);
    /* The request is over: a stray resume does not start anything. */
    d = fb_fallback_resume(&ch.fb, &req, t + S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 6);
}

static void fallback_without_retry_policy_one_attempt_per_provider(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_int_equal(d.timeout_us, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 1);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 0);
}

static void fallback_zero_delay_retry_attempts_at_once(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .backoff = FB_BACKOFF_NONE});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    /* No WAIT of 0: the retry is the next ATTEMPT. */
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 1);
}

/*
 * wait_always (a replay that times each retry itself): a retry at once is a WAIT of 0 marked
 * as a retry of a sent attempt; a limiter's wait and a retry of a call the breaker rejected
 * are not marked (nothing was sent: no recorded time is the caller's to give them).
 */
static void fallback_wait_always_makes_each_retry_a_marked_wait(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 1);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .backoff = FB_BACKOFF_NONE});
    ch.cfg.wait_always = true;
    chain_init(&ch);
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_false(d.retry);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 0);
    assert_true(d.retry);
    d = fb_fallback_resume(&ch.fb, &req, 1 * S);
    assert_attempt(d, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 1);

    chain_setup(&ch, 1);
    chain_retry(&ch, (fb_retry_config){.attempts = 3,
                                       .backoff = FB_BACKOFF_CONSTANT,
                                       .base_us = 4 * S,
                                       .retry_rejected = FB_ON});
    ch.cfg.wait_always = true;
    chain_init(&ch);
    trip(&ch.br[0], 0);
    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_wait(d, 0, 4 * S); /* rejected: its policy's wait, unmarked */
    assert_false(d.retry);
}

/*
 * An engine with nothing to ask before an attempt (no breaker, limiter, budget or groups) takes
 * send()'s plain way on a request's first attempt, a retry at once and a fallback: the same
 * decisions and counts as the same chain with a limiter at each provider that admits everything,
 * which takes the full way.
 */
static void fallback_plain_engine_decides_as_one_with_limits_that_admit_all(void **state) {
    (void)state;
    chain a, b;
    for (int k = 0; k < 2; k++) {
        chain *ch = k ? &b : &a;
        memset(ch, 0, sizeof *ch);
        ch->cfg.provider_count = 3;
        ch->cfg.providers[1].attempt_timeout_us = 4 * S;
        chain_retry(ch, (fb_retry_config){.attempts = 3,
                                          .backoff = FB_BACKOFF_NONE,
                                          .retry_after = FB_RETRY_AFTER_IGNORE,
                                          .attempt_timeout_us = 10 * S});
        if (k)
            for (uint32_t i = 0; i < 3; i++)
                chain_limit(ch, i, (fb_ratelimit_config){.requests_per_min = 1000000});
        chain_init(ch);
    }
    assert_true(a.fb.plain);
    assert_false(b.fb.plain);
    const fb_class *seq[] = {&E503, &E503, &E503, &TIMEOUT_NO_RETRY, &E503, &E503, &OK};
    fb_fallback_request ra, rb;
    fb_fallback_decision da = fb_fallback_begin(&a.fb, &ra, 1000, NULL, 0, 0);
    fb_fallback_decision db = fb_fallback_begin(&b.fb, &rb, 1000, NULL, 0, 0);
    for (size_t i = 0;; i++) {
        assert_int_equal(da.action, db.action);
        assert_int_equal(da.provider, db.provider);
        assert_int_equal(da.delay_us, db.delay_us);
        assert_int_equal(da.timeout_us, db.timeout_us);
        assert_int_equal(da.stop, db.stop);
        assert_int_equal(da.via_fallback, db.via_fallback);
        assert_int_equal(da.last_outcome, db.last_outcome);
        assert_memory_equal(fb_fallback_request_stats_get(&ra), fb_fallback_request_stats_get(&rb),
                            sizeof(fb_fallback_request_stats));
        if (da.action == FB_ACT_DONE || i == sizeof seq / sizeof *seq) break;
        assert_int_equal(da.action, FB_ACT_ATTEMPT);
        fb_time_us now = (fb_time_us)(i + 1) * S;
        da = fb_fallback_result(&a.fb, &ra, seq[i], FB_TIME_NONE, now);
        db = fb_fallback_result(&b.fb, &rb, seq[i], FB_TIME_NONE, now);
    }
    assert_done(da, FB_STOP_SUCCESS);
    assert_int_equal(da.provider, 2);
    assert_int_equal(fb_fallback_request_stats_get(&ra)->retries, 4);
    assert_int_equal(fb_fallback_request_stats_get(&ra)->fallbacks, 2);
}

/* Two engines' decisions are the same, field by field. */
static void assert_same_decision(const fb_fallback_decision *a, const fb_fallback_decision *b) {
    assert_int_equal(a->action, b->action);
    assert_int_equal(a->provider, b->provider);
    assert_int_equal(a->delay_us, b->delay_us);
    assert_int_equal(a->timeout_us, b->timeout_us);
    assert_int_equal(a->resume, b->resume);
    assert_int_equal(a->retry, b->retry);
    assert_int_equal(a->stop, b->stop);
    assert_int_equal(a->degraded, b->degraded);
    assert_int_equal(a->via_fallback, b->via_fallback);
    assert_int_equal(a->last_outcome, b->last_outcome);
}

/* ... and so is what their requests hold for the next step. */
static void assert_same_request(const fb_fallback_request *a, const fb_fallback_request *b) {
    assert_memory_equal(&a->stats, &b->stats, sizeof a->stats);
    assert_int_equal(a->pos, b->pos);
    assert_int_equal(a->cur, b->cur);
    assert_int_equal(a->phase, b->phase);
    assert_int_equal(a->attempted, b->attempted);
    assert_int_equal(a->skipped, b->skipped);
    assert_int_equal(a->last_provider, b->last_provider);
    assert_int_equal(a->window_floor, b->window_floor);
    assert_int_equal(a->retried, b->retried);
    assert_int_equal(a->resume, b->resume);
    assert_int_equal(a->last_outcome, b->last_outcome);
    assert_int_equal(a->retry.attempt, b->retry.attempt);
    assert_int_equal(a->retry.attempts_max, b->retry.attempts_max);
    assert_int_equal(a->retry.start_us, b->retry.start_us);
    assert_int_equal(a->retry.prev_delay_us, b->retry.prev_delay_us);
    assert_int_equal(a->permit.kind, b->permit.kind);
    assert_int_equal(a->permit.admitted_us, b->permit.admitted_us);
    assert_int_equal(a->permit.generation, b->permit.generation);
    assert_int_equal(a->permit.id, b->permit.id);
}

/*
 * A plain engine's short ways (send_plain, and fb_fallback_result's for an answer before the
 * first token) against the full way, on random chains, policies and answers: the same engine
 * with its `plain` mark cleared takes the full way, and must decide the same at every step.
 */
static void fallback_plain_ways_decide_as_the_full_way_on_random_requests(void **state) {
    (void)state;
    static const fb_class *const answers[] = {&OK,   &E503,   &E503,    &E503,
                                              &E400, &POLICY, &CONTEXT, &TIMEOUT_NO_RETRY};
    fb_rng rng;
    fb_rng_seed(&rng, 24, 1);
    uint32_t short_ways = 0;
    for (int run = 0; run < 2000; run++) {
        chain a;
        memset(&a, 0, sizeof a);
        a.cfg.provider_count = 1 + (uint32_t)fb_rng_below(&rng, 4);
        for (uint32_t i = 0; i < a.cfg.provider_count; i++) {
            a.cfg.providers[i].context_window = (uint32_t)fb_rng_below(&rng, 3) * 1000;
            a.cfg.providers[i].attempt_timeout_us = (fb_time_us)fb_rng_below(&rng, 3) * S;
        }
        a.cfg.context_check = fb_rng_below(&rng, 2);
        a.cfg.degraded = fb_rng_below(&rng, 2);
        a.cfg.wait_always = fb_rng_below(&rng, 4) == 0;
        a.cfg.stream = (fb_stream_policy)fb_rng_below(&rng, 4);
        uint32_t kind = (uint32_t)fb_rng_below(&rng, 4);
        if (kind > 0) { /* else no retry policy */
            fb_retry_config rc = {.attempts = 1 + (uint32_t)fb_rng_below(&rng, 4),
                                  .backoff = FB_BACKOFF_NONE,
                                  .retry_after = FB_RETRY_AFTER_IGNORE,
                                  .attempt_timeout_us = (fb_time_us)fb_rng_below(&rng, 3) * S};
            if (kind == 2) rc.deadline_us = (fb_time_us)(2 + fb_rng_below(&rng, 8)) * S;
            if (kind == 3) rc.backoff = FB_BACKOFF_CONSTANT; /* a retry waits */
            chain_retry(&a, rc);
        }
        chain_init(&a);
        assert_true(a.fb.plain);
        chain b = a;
        b.cfg.retry = a.cfg.retry ? &b.retry : NULL;
        chain_init(&b);
        b.fb.plain = false;

        uint8_t order[FB_FALLBACK_PROVIDERS_MAX] = {0};
        uint32_t len = 1 + (uint32_t)fb_rng_below(&rng, a.cfg.provider_count);
        for (uint32_t i = 0; i < len; i++)
            order[i] = (uint8_t)((i + (uint32_t)run) % a.cfg.provider_count);
        bool own = fb_rng_below(&rng, 2);
        uint32_t tokens = (uint32_t)fb_rng_below(&rng, 2500);
        fb_time_us now = (fb_time_us)fb_rng_below(&rng, 100) * S;
        fb_fallback_request ra, rb;
        fb_fallback_decision da =
            fb_fallback_begin(&a.fb, &ra, tokens, own ? order : NULL, own ? len : 0, now);
        fb_fallback_decision db =
            fb_fallback_begin(&b.fb, &rb, tokens, own ? order : NULL, own ? len : 0, now);
        for (int step = 0; step < 40; step++) {
            assert_same_decision(&da, &db);
            assert_same_request(&ra, &rb);
            if (da.action == FB_ACT_DONE) break;
            now += (fb_time_us)fb_rng_below(&rng, 2000) * MS;
            if (da.action == FB_ACT_WAIT) {
                da = fb_fallback_resume(&a.fb, &ra, now);
                db = fb_fallback_resume(&b.fb, &rb, now);
                continue;
            }
            fb_class c = *answers[fb_rng_below(&rng, sizeof answers / sizeof *answers)];
            c.after_first_token = fb_rng_below(&rng, 6) == 0;
            if (fb_rng_below(&rng, 6) == 0) c.attempts = 1 + (uint32_t)fb_rng_below(&rng, 4);
            fb_time_us hint = fb_rng_below(&rng, 2) ? FB_TIME_NONE : 3 * S;
            short_ways += !c.after_first_token;
            da = fb_fallback_result(&a.fb, &ra, &c, hint, now);
            db = fb_fallback_result(&b.fb, &rb, &c, hint, now);
        }
    }
    assert_true(short_ways > 2000); /* the short ways were taken, not only the full one */
}

/*
 * fb_fallback_retries_at_once against the decisions themselves: on random chains (breakers or
 * none, retry policies that retry at once, wait, or have a deadline, wait_always) and random
 * requests, at each attempt it is asked for a random answer; then a copy of the request is
 * given that answer again and again, and the retries at once at the same provider it decides
 * are counted. The count must equal the answer for an engine that retries at once with nothing
 * else to decide, and the answer must never be more than the count (0 for any other engine).
 */
static void fallback_retries_at_once_foresees_the_decisions(void **state) {
    (void)state;
    static const fb_class *const answers[] = {&OK, &E503, &E503, &E400, &TIMEOUT_NO_RETRY};
    fb_rng rng;
    fb_rng_seed(&rng, 25, 1);
    uint32_t foreseen = 0, asked = 0;
    for (int run = 0; run < 3000; run++) {
        chain a;
        memset(&a, 0, sizeof a);
        a.cfg.provider_count = 1 + (uint32_t)fb_rng_below(&rng, 3);
        for (uint32_t i = 0; i < a.cfg.provider_count; i++) {
            a.cfg.providers[i].attempt_timeout_us = (fb_time_us)fb_rng_below(&rng, 3) * S;
            if (fb_rng_below(&rng, 4) == 0) chain_breaker(&a, i, 3);
        }
        a.cfg.wait_always = fb_rng_below(&rng, 5) == 0;
        uint32_t kind = (uint32_t)fb_rng_below(&rng, 4);
        if (kind > 0) {
            fb_retry_config rc = {.attempts = 1 + (uint32_t)fb_rng_below(&rng, 6),
                                  .backoff = FB_BACKOFF_NONE,
                                  .retry_after = FB_RETRY_AFTER_IGNORE};
            if (kind == 2) rc.deadline_us = (fb_time_us)(2 + fb_rng_below(&rng, 8)) * S;
            if (kind == 3 && fb_rng_below(&rng, 2)) rc.backoff = FB_BACKOFF_CONSTANT;
            chain_retry(&a, rc);
        }
        chain_init(&a);
        fb_time_us now = (fb_time_us)fb_rng_below(&rng, 100) * S;
        fb_fallback_request r;
        fb_fallback_decision d = fb_fallback_begin(&a.fb, &r, 100, NULL, 0, now);
        for (int step = 0; step < 12 && d.action != FB_ACT_DONE; step++) {
            now += (fb_time_us)fb_rng_below(&rng, 1500) * MS;
            if (d.action == FB_ACT_WAIT) {
                d = fb_fallback_resume(&a.fb, &r, now);
                continue;
            }
            fb_class c = *answers[fb_rng_below(&rng, sizeof answers / sizeof *answers)];
            if (fb_rng_below(&rng, 8) == 0) c.attempts = 1 + (uint32_t)fb_rng_below(&rng, 5);
            if (fb_rng_below(&rng, 10) == 0) c.after_first_token = true;
            fb_time_us until, per;
            uint32_t n = fb_fallback_retries_at_once(&a.fb, &r, &c, &until, &per);
            asked++;
            /* the decisions, on a copy, while the clock stays before `until` */
            chain b = a;
            for (uint32_t i = 0; i < b.cfg.provider_count; i++)
                if (a.cfg.providers[i].breaker) b.cfg.providers[i].breaker = &b.br[i];
            b.cfg.retry = a.cfg.retry ? &b.retry : NULL;
            chain_init(&b);
            fb_fallback_request rb = r;
            uint8_t at = d.provider;
            uint32_t k = 0;
            fb_time_us t = now;
            for (; k < 20; k++) {
                if (until != FB_TIME_MAX && t >= until) break;
                fb_fallback_decision e = fb_fallback_result(&b.fb, &rb, &c, FB_TIME_NONE, t);
                if (e.action != FB_ACT_ATTEMPT || e.provider != at) break;
                if (per > 0 && until == FB_TIME_MAX) assert_int_equal(e.timeout_us, per);
                t += MS;
            }
            /* result_plain's way (a failure streamed takes the full one: its stream policy) */
            bool plain =
                a.fb.plain && a.fb.retry_plain && !a.cfg.wait_always && !c.after_first_token;
            if (n > 0) foreseen++;
            if (plain && (until == FB_TIME_MAX || now + 20 * MS < until))
                assert_int_equal(n < 20 ? n : 20, k);
            else
                assert_true(n <= k);
            d = fb_fallback_result(&a.fb, &r, &c, FB_TIME_NONE, now);
        }
    }
    assert_true(foreseen > 200 && asked > 3000); /* both kinds of answer (289 of 5,477) */
}

/*
 * A lean engine's short ways (send_at without the limiters, the breakers' inline allow, and
 * fb_fallback_result's for a success) against the full way, on random chains of breakers,
 * budgets, policies and answers, a few requests at a time so that the breakers move: the same
 * chain with its own breakers and budget and the `lean` mark cleared takes the full way, and
 * must decide the same at every step.
 */
static void fallback_lean_ways_decide_as_the_full_way_on_random_requests(void **state) {
    (void)state;
    static const fb_class *const answers[] = {&OK,   &OK,     &E503,    &E503,
                                              &E400, &POLICY, &CONTEXT, &TIMEOUT_NO_RETRY};
    static const fb_budget_kind budgets[] = {FB_BUDGET_NONE, FB_BUDGET_TOKEN_BUCKET,
                                             FB_BUDGET_QUOTA, FB_BUDGET_CONCURRENCY};
    fb_rng rng;
    fb_rng_seed(&rng, 24, 4);
    uint32_t short_ways = 0, lean_runs = 0;
    for (int run = 0; run < 1000; run++) {
        chain a;
        memset(&a, 0, sizeof a);
        a.cfg.provider_count = 1 + (uint32_t)fb_rng_below(&rng, 4);
        for (uint32_t i = 0; i < a.cfg.provider_count; i++) {
            a.cfg.providers[i].context_window = (uint32_t)fb_rng_below(&rng, 3) * 1000;
            a.cfg.providers[i].attempt_timeout_us = (fb_time_us)fb_rng_below(&rng, 3) * S;
            if (fb_rng_below(&rng, 3) == 0) continue; /* no breaker */
            fb_breaker_config bc = {.open_us = (fb_time_us)(1 + fb_rng_below(&rng, 5)) * S};
            if (fb_rng_below(&rng, 2)) {
                bc.consecutive_failures = 1 + (uint32_t)fb_rng_below(&rng, 3);
            } else {
                bc.mode = FB_BREAKER_MODE_TIME_WINDOW;
                bc.window_us = 10 * S;
                bc.minimum_calls = 1 + (uint32_t)fb_rng_below(&rng, 5);
                bc.failure_rate = 0.5;
            }
            assert_int_equal(fb_breaker_init(&a.br[i], &bc, 0), FB_OK);
            a.cfg.providers[i].breaker = &a.br[i];
        }
        fb_budget_kind bk = budgets[fb_rng_below(&rng, 4)];
        if (bk != FB_BUDGET_NONE) {
            fb_budget_config bc = {.kind = bk, .max_tokens = 4, .ratio = 0.5, .capacity = 6};
            assert_int_equal(fb_budget_init(&a.budget, &bc), FB_OK);
            a.cfg.budget = &a.budget;
        }
        a.cfg.context_check = fb_rng_below(&rng, 2);
        a.cfg.degraded = fb_rng_below(&rng, 2);
        a.cfg.wait_always = fb_rng_below(&rng, 4) == 0;
        a.cfg.stream = (fb_stream_policy)fb_rng_below(&rng, 4);
        uint32_t kind = (uint32_t)fb_rng_below(&rng, 4);
        if (kind > 0) { /* else no retry policy */
            fb_retry_config rc = {.attempts = 1 + (uint32_t)fb_rng_below(&rng, 4),
                                  .backoff = FB_BACKOFF_NONE,
                                  .retry_after = FB_RETRY_AFTER_IGNORE,
                                  .retry_rejected = fb_rng_below(&rng, 2) ? FB_ON : FB_OFF,
                                  .attempt_timeout_us = (fb_time_us)fb_rng_below(&rng, 3) * S};
            if (kind == 2) rc.deadline_us = (fb_time_us)(2 + fb_rng_below(&rng, 8)) * S;
            if (kind == 3) rc.backoff = FB_BACKOFF_CONSTANT; /* a retry waits */
            chain_retry(&a, rc);
        }
        chain_init(&a);
        assert_true(a.fb.lean != a.fb.plain); /* no breaker nor budget: plain */
        lean_runs += a.fb.lean;
        chain b = a;
        b.cfg.retry = a.cfg.retry ? &b.retry : NULL;
        b.cfg.budget = a.cfg.budget ? &b.budget : NULL;
        for (uint32_t i = 0; i < b.cfg.provider_count; i++)
            if (a.cfg.providers[i].breaker) b.cfg.providers[i].breaker = &b.br[i];
        chain_init(&b);
        b.fb.lean = false;
        b.fb.plain = false;

        fb_time_us now = (fb_time_us)fb_rng_below(&rng, 100) * S;
        for (int request = 0; request < 8; request++) {
            uint8_t order[FB_FALLBACK_PROVIDERS_MAX] = {0};
            uint32_t len = 1 + (uint32_t)fb_rng_below(&rng, a.cfg.provider_count);
            for (uint32_t i = 0; i < len; i++)
                order[i] = (uint8_t)((i + (uint32_t)run) % a.cfg.provider_count);
            bool own = fb_rng_below(&rng, 2);
            uint32_t tokens = (uint32_t)fb_rng_below(&rng, 2500);
            fb_fallback_request ra, rb;
            fb_fallback_decision da =
                fb_fallback_begin(&a.fb, &ra, tokens, own ? order : NULL, own ? len : 0, now);
            fb_fallback_decision db =
                fb_fallback_begin(&b.fb, &rb, tokens, own ? order : NULL, own ? len : 0, now);
            for (int step = 0; step < 40; step++) {
                assert_same_decision(&da, &db);
                assert_same_request(&ra, &rb);
                if (da.action == FB_ACT_DONE) break;
                now += (fb_time_us)fb_rng_below(&rng, 2000) * MS;
                if (da.action == FB_ACT_WAIT) {
                    da = fb_fallback_resume(&a.fb, &ra, now);
                    db = fb_fallback_resume(&b.fb, &rb, now);
                    continue;
                }
                fb_class c = *answers[fb_rng_below(&rng, sizeof answers / sizeof *answers)];
                c.after_first_token = fb_rng_below(&rng, 6) == 0;
                fb_time_us hint = fb_rng_below(&rng, 2) ? FB_TIME_NONE : 3 * S;
                short_ways += c.outcome == FB_OUT_SUCCESS;
                da = fb_fallback_result(&a.fb, &ra, &c, hint, now);
                db = fb_fallback_result(&b.fb, &rb, &c, hint, now);
            }
            if (da.action != FB_ACT_DONE) {
                fb_fallback_cancel(&a.fb, &ra, now);
                fb_fallback_cancel(&b.fb, &rb, now);
            }
            for (uint32_t i = 0; i < a.cfg.provider_count; i++) {
                if (!a.cfg.providers[i].breaker) continue;
                assert_int_equal(fb_breaker_state_get(&a.br[i]), fb_breaker_state_get(&b.br[i]));
                assert_memory_equal(fb_breaker_stats_get(&a.br[i]), fb_breaker_stats_get(&b.br[i]),
                                    sizeof(fb_breaker_stats));
            }
            if (a.cfg.budget)
                assert_memory_equal(fb_budget_stats_get(&a.budget), fb_budget_stats_get(&b.budget),
                                    sizeof(fb_budget_stats));
        }
    }
    assert_true(short_ways > 2000); /* the short ways were taken, not only the full one */
    assert_true(lean_runs > 800);
}

static void fallback_non_retryable_outcome_falls_back_at_once(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &TIMEOUT_NO_RETRY, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 1);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 1);
}

/* ---- breakers ---- */

static void fallback_open_breaker_skips_without_attempt(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_init(&ch);
    trip(&ch.br[0], 0);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_attempt(d, 1);
    /* via_fallback means "not the chain's primary": a skipped primary counts too,
     * but `fallbacks` counts only moves after a failed attempt */
    assert_true(d.via_fallback);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 1);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 0);
    assert_int_equal(fb_breaker_stats_get(&ch.br[0])->rejected, 1);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(d.provider, 1);
    assert_true(d.via_fallback);
}

static void fallback_half_open_admits_one_requests_probe(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_init(&ch);
    trip(&ch.br[0], 0);
    fb_fallback_request r1, r2, r3;

    fb_fallback_decision d1 = fb_fallback_begin(&ch.fb, &r1, 1000, NULL, 0, 10 * S);
    assert_attempt(d1, 0);
    assert_int_equal(fb_breaker_state_get(&ch.br[0]), FB_BREAKER_HALF_OPEN);
    fb_fallback_decision d2 = fb_fallback_begin(&ch.fb, &r2, 1000, NULL, 0, 10 * S);
    assert_attempt(d2, 1);
    d2 = fb_fallback_result(&ch.fb, &r2, &OK, FB_TIME_NONE, 10400 * MS);
    assert_done(d2, FB_STOP_SUCCESS);
    d1 = fb_fallback_result(&ch.fb, &r1, &OK, FB_TIME_NONE, 10500 * MS);
    assert_done(d1, FB_STOP_SUCCESS);
    assert_int_equal(d1.provider, 0);
    assert_int_equal(fb_breaker_state_get(&ch.br[0]), FB_BREAKER_CLOSED);
    fb_fallback_decision d3 = fb_fallback_begin(&ch.fb, &r3, 1000, NULL, 0, 11 * S);
    assert_attempt(d3, 0);
}

static void fallback_breaker_asked_again_at_resume(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 100 * MS);
    assert_wait(d, 0, 100 * MS);
    /* Other requests open the breaker while this one waits. */
    trip(&ch.br[0], 150 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 200 * MS);
    assert_attempt(d, 1);
    assert_true(d.via_fallback);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 1);
}

/*
 * retry_rejected (resilience4j RetryImpl, Polly, cockatiel: their retries handle the breaker's
 * CallNotPermittedException / BrokenCircuitException like any exception): a rejection is a
 * counted attempt, waited for; the breaker's open period can end during the waits.
 */
static void fallback_retry_rejected_waits_through_an_open_breaker(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 1);
    chain_retry(&ch, (fb_retry_config){.attempts = 3,
                                       .backoff = FB_BACKOFF_CONSTANT,
                                       .base_us = 4 * S,
                                       .retry_rejected = FB_ON});
    chain_init(&ch);
    trip(&ch.br[0], 0); /* open until 10 s */
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_wait(d, 0, 4 * S); /* attempt 1 rejected */
    d = fb_fallback_resume(&ch.fb, &req, 5 * S);
    assert_wait(d, 0, 4 * S); /* attempt 2 rejected */
    d = fb_fallback_resume(&ch.fb, &req, 9 * S);
    assert_done(d, FB_STOP_BREAKER_OPEN); /* attempt 3 rejected: maxAttempts spent */
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 0);
    assert_int_equal(fb_breaker_stats_get(&ch.br[0])->rejected, 3);

    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 7 * S);
    assert_wait(d, 0, 4 * S);
    d = fb_fallback_resume(&ch.fb, &req, 11 * S); /* half-open: the retry is the probe */
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 12 * S);
    assert_done(d, FB_STOP_SUCCESS);
}

/* A zero backoff still waits (for 0): a rejection loop never recurses. */
static void fallback_retry_rejected_zero_delay_is_a_wait(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 1);
    chain_retry(&ch, (fb_retry_config){
                         .attempts = 1000, .backoff = FB_BACKOFF_NONE, .retry_rejected = FB_ON});
    chain_init(&ch);
    trip(&ch.br[0], 0);
    fb_fallback_request req;
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    int waits = 0;
    for (; d.action == FB_ACT_WAIT; waits++) {
        assert_int_equal(d.delay_us, 0);
        d = fb_fallback_resume(&ch.fb, &req, 1 * S);
    }
    assert_int_equal(waits, 999);
    assert_done(d, FB_STOP_BREAKER_OPEN);
}

static void fallback_result_records_effect_into_breaker(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_breaker(&ch, 0, 1);
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 1);
    assert_int_equal(fb_breaker_state_get(&ch.br[0]), FB_BREAKER_OPEN);
}

/* A breaker behind callbacks, recording what the engine asked. */
typedef struct fake_port {
    bool admit;
    int allows;
    int records;
    fb_time_us allow_at_us;
    fb_effect effect;
    fb_time_us duration_us;
    fb_time_us hint_us;
    fb_time_us record_at_us;
} fake_port;

static bool fake_allow(void *ctx, fb_time_us now_us, fb_breaker_permit *permit) {
    fake_port *f = ctx;
    f->allows++;
    f->allow_at_us = now_us;
    permit->admitted_us = now_us;
    permit->kind = f->admit ? FB_PERMIT_CALL : FB_PERMIT_REJECTED;
    return f->admit;
}

static void fake_record(void *ctx, const fb_breaker_permit *permit, const fb_breaker_result *result,
                        fb_time_us now_us) {
    fake_port *f = ctx;
    (void)permit;
    f->records++;
    f->effect = result->effect;
    f->duration_us = result->duration_us;
    f->hint_us = result->hint_us;
    f->record_at_us = now_us;
}

static void fallback_breaker_port_used_instead_of_breaker(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    fake_port port = {.admit = true};
    ch.cfg.providers[0].port = (fb_breaker_port){fake_allow, fake_record, &port, NULL};
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 2 * S);
    assert_attempt(d, 0);
    assert_int_equal(port.allows, 1);
    assert_int_equal(port.allow_at_us, 2 * S);
    d = fb_fallback_result(&ch.fb, &req, &E503, 5 * S, 2300 * MS);
    assert_attempt(d, 1);
    assert_int_equal(port.records, 1);
    assert_int_equal(port.effect, FB_EFFECT_FAILURE);
    assert_int_equal(port.duration_us, 300 * MS);
    assert_int_equal(port.hint_us, 5 * S);
    assert_int_equal(port.record_at_us, 2300 * MS);
    /* The in-process breaker of the same provider was never consulted. */
    assert_int_equal(breaker_asked(&ch.br[0]), 0);

    port.admit = false;
    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 3 * S);
    assert_attempt(d, 1);
    assert_int_equal(port.allows, 2);
    assert_int_equal(port.records, 1);
}

static void fallback_cancel_releases_half_open_probe_trap_2(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_init(&ch);
    trip(&ch.br[0], 0);
    fb_fallback_request r1, r2, r3;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &r1, 1000, NULL, 0, 10 * S);
    assert_attempt(d, 0);
    d = fb_fallback_begin(&ch.fb, &r2, 1000, NULL, 0, 10 * S);
    assert_attempt(d, 1);
    fb_fallback_cancel(&ch.fb, &r1, 10200 * MS);
    /* Neither a success nor a failure: still half-open, the probe slot free again. */
    assert_int_equal(fb_breaker_state_get(&ch.br[0]), FB_BREAKER_HALF_OPEN);
    d = fb_fallback_begin(&ch.fb, &r3, 1000, NULL, 0, 10300 * MS);
    assert_attempt(d, 0);
    /* The cancelled request is over. */
    d = fb_fallback_resume(&ch.fb, &r1, 10400 * MS);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(fb_fallback_request_stats_get(&r1)->attempts, 1);
}

static void fallback_cancel_reports_cancelled_to_port(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 1);
    fake_port port = {.admit = true};
    ch.cfg.providers[0].port = (fb_breaker_port){fake_allow, fake_record, &port, NULL};
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    fb_fallback_cancel(&ch.fb, &req, 700 * MS);
    assert_int_equal(port.records, 1);
    assert_int_equal(port.effect, FB_EFFECT_CANCELLED); /* counted as the breaker says */
    assert_int_equal(port.duration_us, 700 * MS);
    /* A second cancel holds no permit any more. */
    fb_fallback_cancel(&ch.fb, &req, 800 * MS);
    assert_int_equal(port.records, 1);
}

/* ---- errors that end the request ---- */

static void fallback_permanent_400_no_retry_no_fallback(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E400, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_PERMANENT);
    assert_int_equal(d.provider, 0);
    assert_false(d.degraded);
    assert_int_equal(d.last_outcome, FB_OUT_PERMANENT);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 1);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_policy_rejection_never_falls_back(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &POLICY, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_POLICY);
    assert_false(d.degraded);
    assert_int_equal(d.last_outcome, FB_OUT_POLICY);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 2);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
    assert_int_equal(breaker_asked(&ch.br[2]), 0);
}

/* ---- context windows (the seed incident: 95k prompt, windows 200k / 32k / 128k) ---- */

static void chain_windows(chain *ch, const uint32_t *windows, uint32_t n) {
    chain_setup(ch, n);
    for (uint32_t i = 0; i < n; i++) ch->cfg.providers[i].context_window = windows[i];
}

static void fallback_context_check_skips_32k_for_95k_prompt(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {200000, 32000, 128000};
    chain_windows(&ch, windows, 3);
    ch.cfg.context_check = true;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 95000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 2);
    assert_true(d.via_fallback);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(d.provider, 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 2);
}

static void fallback_without_context_check_small_window_is_tried(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {200000, 32000, 128000};
    chain_windows(&ch, windows, 3);
    chain_init(&ch);
    fb_fallback_request req;

    /* The incident as it happened: the 32k fallback gets the 95k prompt... */
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 95000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 1);
    /* ...and its context-length error is routed on to the larger window. */
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 1200 * MS);
    assert_attempt(d, 2);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 3);
}

static void fallback_context_length_error_skips_smaller_windows(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {32000, 16000, 32000, 128000};
    chain_windows(&ch, windows, 4);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 40000, NULL, 0, 0);
    assert_attempt(d, 0);
    /* Not retried; 16k and the equal 32k are skipped. */
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 3);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
    assert_int_equal(breaker_asked(&ch.br[2]), 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 2);
}

static void fallback_context_length_error_unknown_window_counts_as_larger(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {32000, 16000, 0};
    chain_windows(&ch, windows, 3);
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 40000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 2);
}

static void fallback_context_length_error_without_larger_window_ends(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {128000, 32000};
    chain_windows(&ch, windows, 2);
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 150000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_CONTEXT_LENGTH);
    assert_false(d.degraded);
    assert_int_equal(d.last_outcome, FB_OUT_CONTEXT_LENGTH);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_context_length_floor_outlives_skipped_provider(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {32000, 64000, 16000};
    chain_windows(&ch, windows, 3);
    chain_init(&ch);
    trip(&ch.br[1], 0);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 40000, NULL, 0, 1 * S);
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 2 * S);
    /* 64k is larger but its breaker is open; 16k is smaller than what already failed. */
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(breaker_asked(&ch.br[2]), 0);
}

static void fallback_context_length_error_on_last_provider_ends(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {32000, 0};
    chain_windows(&ch, windows, 2);
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 40000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 1);
    /* Even from a provider of unknown window, the chain ended on the prompt's length. */
    d = fb_fallback_result(&ch.fb, &req, &CONTEXT, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_CONTEXT_LENGTH);
    assert_true(d.degraded);
    assert_int_equal(d.provider, 1);
}

/* ---- client-side rate limits ---- */

static void fallback_ratelimit_wait_then_attempt_without_reacquiring(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_limit(&ch, 0, (fb_ratelimit_config){.requests_per_min = 1, .wait_us_max = 120 * S});
    chain_init(&ch);
    fb_fallback_request req;

    /* Somebody else took this minute's request. */
    fb_ratelimit_decision rl = fb_ratelimit_acquire(&ch.rl[0], 1000, 0);
    assert_true(rl.admitted);
    assert_int_equal(rl.wait_us, 0);

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_wait(d, 0, 60 * S);
    /* The breaker is not asked while the request waits for the limiter. */
    assert_int_equal(breaker_asked(&ch.br[0]), 0);
    d = fb_fallback_resume(&ch.fb, &req, 60 * S);
    assert_attempt(d, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 1);
    /* One reservation, not two: the next request waits one period, not two. */
    rl = fb_ratelimit_acquire(&ch.rl[0], 1000, 60 * S);
    assert_true(rl.admitted);
    assert_int_equal(rl.wait_us, 60 * S);
}

static void fallback_ratelimit_acquired_again_for_each_retry(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    chain_limit(&ch, 0, (fb_ratelimit_config){.requests_per_min = 1, .wait_us_max = 120 * S});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    /* The retry is another request to the provider: it waits for the limiter. */
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_wait(d, 0, 60 * S - 1100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 60 * S);
    assert_attempt(d, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 1);
}

static void fallback_ratelimit_reject_skips_provider(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_limit(&ch, 0, (fb_ratelimit_config){.requests_per_min = 1, .mode = FB_RATELIMIT_REJECT});
    chain_init(&ch);
    fb_fallback_request req;

    assert_true(fb_ratelimit_acquire(&ch.rl[0], 1000, 0).admitted);
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_attempt(d, 1);
    assert_true(d.via_fallback);
    assert_int_equal(breaker_asked(&ch.br[0]), 0);
}

static void fallback_ratelimit_wait_past_deadline_skips_provider(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 1, .deadline_us = 30 * S});
    chain_limit(&ch, 0, (fb_ratelimit_config){.requests_per_min = 1, .wait_us_max = 120 * S});
    chain_init(&ch);
    fb_fallback_request req;

    assert_true(fb_ratelimit_acquire(&ch.rl[0], 1000, 0).admitted);
    /* Waiting 60 s cannot end before the 30 s deadline: try the next provider now. */
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 1);
    assert_int_equal(d.timeout_us, 30 * S);
}

/* ---- deadlines and timeouts ---- */

static void fallback_deadline_passed_during_wait_ends_at_resume(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS, .deadline_us = 1 * S});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_int_equal(d.timeout_us, 1 * S);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 200 * MS);
    assert_wait(d, 0, 100 * MS);
    /* The caller comes back late: no attempt anywhere, not even on the healthy fallback. */
    d = fb_fallback_resume(&ch.fb, &req, 1 * S);
    assert_done(d, FB_STOP_DEADLINE);
    assert_false(d.degraded);
    assert_int_equal(d.provider, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 1);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_deadline_giveup_does_not_fall_back(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 500 * MS, .deadline_us = 1 * S});
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    /* The retry would start at 1.1 s, after the 1 s deadline. */
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 600 * MS);
    assert_done(d, FB_STOP_DEADLINE);
    assert_false(d.degraded);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_attempt_timeout_bounded_by_deadline(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3,
                                       .base_us = 100 * MS,
                                       .attempt_timeout_us = 400 * MS,
                                       .deadline_us = 1200 * MS});
    ch.cfg.providers[1].attempt_timeout_us = 250 * MS;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_int_equal(d.timeout_us, 400 * MS);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 400 * MS);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 500 * MS);
    assert_int_equal(d.timeout_us, 400 * MS);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 900 * MS);
    assert_wait(d, 0, 200 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_attempt(d, 0);
    assert_int_equal(d.timeout_us, 100 * MS);

    /* A provider's own timeout replaces the policy's. */
    d = fb_fallback_begin(&ch.fb, &req, 1000, (const uint8_t[]){1}, 1, 5 * S);
    assert_attempt(d, 1);
    assert_int_equal(d.timeout_us, 250 * MS);
}

static void fallback_deadline_spans_the_request(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .base_us = 200 * MS, .deadline_us = 1 * S});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &TIMEOUT_NO_RETRY, FB_TIME_NONE, 700 * MS);
    /* The fallback's retry state is fresh, its deadline is not. */
    assert_attempt(d, 1);
    assert_int_equal(d.timeout_us, 300 * MS);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 900 * MS);
    assert_done(d, FB_STOP_DEADLINE);
}

static void fallback_no_fallback_once_deadline_passed(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {0, 8000};
    chain_windows(&ch, windows, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 1, .deadline_us = 1 * S});
    ch.cfg.context_check = true;
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 9000, NULL, 0, 0);
    assert_attempt(d, 0);
    /* Timed out with the deadline: the request ends there, not at the chain's (degraded) end. */
    d = fb_fallback_result(&ch.fb, &req, &TIMEOUT_NO_RETRY, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_DEADLINE);
    assert_false(d.degraded);
    assert_int_equal(d.last_outcome, FB_OUT_TIMEOUT);
}

/* ---- the end of the chain ---- */

static void fallback_degraded_answer_when_all_breakers_open(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    ch.cfg.degraded = true;
    chain_init(&ch);
    for (int i = 0; i < 3; i++) trip(&ch.br[i], 0);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_done(d, FB_STOP_BREAKER_OPEN);
    assert_true(d.degraded);
    assert_false(d.via_fallback);
    assert_int_equal(d.last_outcome, FB_OUT_SUCCESS);
    assert_int_equal(d.provider, 2);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 0);

    ch.cfg.degraded = false;
    chain_init(&ch);
    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_done(d, FB_STOP_BREAKER_OPEN);
    assert_false(d.degraded);
}

static void fallback_exhausted_after_a_failed_attempt(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    ch.cfg.degraded = true;
    chain_init(&ch);
    trip(&ch.br[1], 0);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 1 * S);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_true(d.degraded);
    assert_int_equal(d.provider, 0);
    assert_int_equal(d.last_outcome, FB_OUT_TRANSIENT);
}

static void fallback_skip_reason_precedence_breaker_limiter_context(void **state) {
    (void)state;
    chain ch;
    const uint32_t windows[] = {8000, 0, 0};
    chain_windows(&ch, windows, 3);
    ch.cfg.context_check = true;
    chain_limit(&ch, 1, (fb_ratelimit_config){.requests_per_min = 1, .mode = FB_RATELIMIT_REJECT});
    chain_init(&ch);
    assert_true(fb_ratelimit_acquire(&ch.rl[1], 1, 0).admitted);
    trip(&ch.br[2], 0);
    fb_fallback_request req;

    /* Too long for 0, limited on 1, open on 2: the breaker is named. */
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 9000, NULL, 0, 1 * S);
    assert_done(d, FB_STOP_BREAKER_OPEN);
    /* Without the breaker, the limiter. */
    d = fb_fallback_begin(&ch.fb, &req, 9000, (const uint8_t[]){0, 1}, 2, 1 * S);
    assert_done(d, FB_STOP_RATE_LIMITED);
    /* A window alone. */
    d = fb_fallback_begin(&ch.fb, &req, 9000, (const uint8_t[]){0}, 1, 1 * S);
    assert_done(d, FB_STOP_CONTEXT_LENGTH);
    assert_false(d.degraded);
}

/* ---- per-request order ---- */

static void fallback_order_override_per_request(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    chain_init(&ch);
    fb_fallback_request req;
    const uint8_t order[] = {2, 0};

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, order, 2, 0);
    assert_attempt(d, 2);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 0);
    assert_true(d.via_fallback);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(d.provider, 0);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_configured_order_is_used(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    ch.cfg.order[0] = 1;
    ch.cfg.order[1] = 2;
    ch.cfg.order_len = 2;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 1);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 2);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(breaker_asked(&ch.br[0]), 0);
}

static void fallback_invalid_order_override_ends_request(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 3);
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;
    const uint8_t dup[] = {1, 1};
    const uint8_t out_of_range[] = {0, 3};
    const uint8_t nine[] = {0, 1, 2, 0, 1, 2, 0, 1, 2};

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, dup, 2, 0);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_false(d.degraded);
    d = fb_fallback_begin(&ch.fb, &req, 1000, out_of_range, 2, 0);
    assert_done(d, FB_STOP_EXHAUSTED);
    d = fb_fallback_begin(&ch.fb, &req, 1000, dup, 0, 0);
    assert_done(d, FB_STOP_EXHAUSTED);
    d = fb_fallback_begin(&ch.fb, &req, 1000, nine, 9, 0);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 0);
    for (int i = 0; i < 3; i++) assert_int_equal(breaker_asked(&ch.br[i]), 0);
}

/* ---- failures after the first token ---- */

static void fallback_stream_fail_ends_request(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_breaker(&ch, 0, 1);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    ch.cfg.stream = FB_STREAM_FAIL;
    ch.cfg.degraded = true;
    chain_init(&ch);
    fb_fallback_request req;
    fb_class broken = e503_streamed();

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &broken, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_STREAM_BROKEN);
    assert_false(d.degraded);
    assert_int_equal(d.last_outcome, FB_OUT_TRANSIENT);
    /* The breaker still heard about the failure. */
    assert_int_equal(fb_breaker_state_get(&ch.br[0]), FB_BREAKER_OPEN);
    assert_int_equal(breaker_asked(&ch.br[1]), 0);
}

static void fallback_stream_fail_retries_before_first_token(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    ch.cfg.stream = FB_STREAM_FAIL;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
}

static void fallback_stream_resume_sets_resume_on_later_attempts(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .base_us = 100 * MS});
    ch.cfg.stream = FB_STREAM_RESUME;
    chain_init(&ch);
    fb_fallback_request req;
    fb_class broken = e503_streamed();

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_false(d.resume);
    d = fb_fallback_result(&ch.fb, &req, &broken, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_attempt(d, 0);
    assert_true(d.resume);
    /* Failing before a token again does not forget what the user has seen. */
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_attempt(d, 1);
    assert_true(d.resume);
}

static void fallback_stream_buffer_and_retry_retry_from_scratch(void **state) {
    (void)state;
    const fb_stream_policy policies[] = {FB_STREAM_BUFFER, FB_STREAM_RETRY};
    for (int i = 0; i < 2; i++) {
        chain ch;
        chain_setup(&ch, 2);
        chain_retry(&ch, (fb_retry_config){.attempts = 2, .base_us = 100 * MS});
        ch.cfg.stream = policies[i];
        chain_init(&ch);
        fb_fallback_request req;
        fb_class broken = e503_streamed();

        fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
        d = fb_fallback_result(&ch.fb, &req, &broken, FB_TIME_NONE, 1 * S);
        assert_wait(d, 0, 100 * MS);
        d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
        assert_attempt(d, 0);
        assert_false(d.resume);
        d = fb_fallback_result(&ch.fb, &req, &broken, FB_TIME_NONE, 2 * S);
        assert_attempt(d, 1);
        assert_false(d.resume);
    }
}

/* ---- retry budget ---- */

static void fallback_retry_budget_refusal_moves_to_fallback(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    fb_budget_config bc = {.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 10, .ratio = 0.1};
    assert_int_equal(fb_budget_init(&ch.budget, &bc), FB_OK);
    /* Five failures leave 5 tokens: not above half of 10, no more retries. */
    for (int i = 0; i < 5; i++) fb_budget_on_failure(&ch.budget, FB_OUT_TRANSIENT, 0);
    ch.cfg.budget = &ch.budget;
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_attempt(d, 1);
    assert_int_equal(fb_fallback_request_stats_get(&req)->retries, 0);
    assert_int_equal(fb_fallback_request_stats_get(&req)->fallbacks, 1);

    /* The same request without the budget retries. */
    ch.cfg.budget = NULL;
    chain_init(&ch);
    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
}

static void fallback_success_refills_retry_budget(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    fb_budget_config bc = {.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 10, .ratio = 0.1};
    assert_int_equal(fb_budget_init(&ch.budget, &bc), FB_OK);
    for (int i = 0; i < 4; i++) fb_budget_on_failure(&ch.budget, FB_OUT_TRANSIENT, 0);
    ch.cfg.budget = &ch.budget;
    chain_init(&ch);
    fb_fallback_request req;

    /* 6 tokens; a success adds 0.1. */
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_SUCCESS);
    /* The next failure costs 1: 5.1 is still above half, so it may retry (5.0 would not). */
    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 2 * S);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 3 * S);
    assert_wait(d, 0, 100 * MS);
}

static void fallback_quota_refund_covers_retry_before_fallback(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    for (uint32_t i = 0; i < 2; i++) chain_breaker(&ch, i, 100);
    chain_retry(&ch, (fb_retry_config){.attempts = 2, .base_us = 100 * MS});
    fb_budget_config bc = {
        .kind = FB_BUDGET_QUOTA, .capacity = 10, .retry_cost = 5, .no_retry_refund = 1};
    assert_int_equal(fb_budget_init(&ch.budget, &bc), FB_OK);
    ch.cfg.budget = &ch.budget;
    chain_init(&ch);
    fb_fallback_request req;

    /* Retry on the primary (10 -> 5), success on the fallback: the 5 come back. */
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 2 * S);
    assert_attempt(d, 1);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 3 * S);
    assert_done(d, FB_STOP_SUCCESS);

    /* With 10 again, the next request can retry twice (a refund of 1 would leave one). */
    d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 4 * S);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 5 * S);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_resume(&ch.fb, &req, 5100 * MS);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 6 * S);
    assert_attempt(d, 1);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 7 * S);
    assert_wait(d, 1, 100 * MS);
}

/* ---- misuse and configuration ---- */

static void fallback_result_without_attempt_ends_request(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_retry(&ch, (fb_retry_config){.attempts = 3, .base_us = 100 * MS});
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &E503, FB_TIME_NONE, 1 * S);
    assert_wait(d, 0, 100 * MS);
    d = fb_fallback_result(&ch.fb, &req, &OK, FB_TIME_NONE, 1050 * MS);
    assert_done(d, FB_STOP_EXHAUSTED);
    d = fb_fallback_resume(&ch.fb, &req, 1100 * MS);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(fb_fallback_request_stats_get(&req)->attempts, 1);
}

static void fallback_resume_during_attempt_releases_permit(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 1);
    fake_port port = {.admit = true};
    ch.cfg.providers[0].port = (fb_breaker_port){fake_allow, fake_record, &port, NULL};
    chain_init(&ch);
    fb_fallback_request req;

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_resume(&ch.fb, &req, 1 * S);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(port.records, 1);
    assert_int_equal(port.effect, FB_EFFECT_CANCELLED);
}

static void fallback_cancelled_attempt_outcome_ends_request(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_init(&ch);
    fb_fallback_request req;
    const fb_class cancelled = {.outcome = FB_OUT_CANCELLED, .effect = FB_EFFECT_IGNORE};

    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    d = fb_fallback_result(&ch.fb, &req, &cancelled, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_CANCELLED);
}

static void fallback_init_rejects_bad_config(void **state) {
    (void)state;
    fb_fallback fb;
    fb_fallback_config cfg = {.provider_count = 2};
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_OK);
    assert_int_equal(fb_fallback_init(NULL, &cfg), FB_EINVAL);
    assert_int_equal(fb_fallback_init(&fb, NULL), FB_EINVAL);

    cfg.provider_count = 0;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.provider_count = FB_FALLBACK_PROVIDERS_MAX + 1;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.provider_count = 2;

    cfg.order_len = 2;
    cfg.order[0] = 1;
    cfg.order[1] = 1;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.order[1] = 2;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.order[1] = 0;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_OK);
    cfg.order_len = FB_FALLBACK_PROVIDERS_MAX + 1;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.order_len = 0;

    fake_port port = {0};
    cfg.providers[1].port.allow = fake_allow;
    cfg.providers[1].port.ctx = &port;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.providers[1].port.record = fake_record;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_OK);

    cfg.providers[0].attempt_timeout_us = -1;
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
    cfg.providers[0].attempt_timeout_us = 0;

    cfg.stream = (fb_stream_policy)(FB_STREAM_RETRY + 1);
    assert_int_equal(fb_fallback_init(&fb, &cfg), FB_EINVAL);
}

static void fallback_stop_names(void **state) {
    (void)state;
    assert_string_equal(fb_stop_name(FB_STOP_SUCCESS), "success");
    assert_string_equal(fb_stop_name(FB_STOP_BREAKER_OPEN), "breaker_open");
    assert_string_equal(fb_stop_name(FB_STOP_CANCELLED), "cancelled");
    assert_string_equal(fb_stop_name(FB_STOP_COUNT), "unknown");
}

/* A request that waited for the limiter and then found its breaker open was
 * never sent: its reservation goes back, or an open breaker drains the budget. */
static void fallback_ratelimit_reservation_returned_when_breaker_rejects(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 2);
    chain_limit(&ch, 0, (fb_ratelimit_config){.requests_per_min = 1, .wait_us_max = 120 * S});
    chain_init(&ch);
    fb_fallback_request req;

    assert_true(fb_ratelimit_acquire(&ch.rl[0], 1000, 0).admitted);
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_wait(d, 0, 60 * S);
    trip(&ch.br[0], 55 * S); /* the breaker opens (for 10 s) while the request waits */
    d = fb_fallback_resume(&ch.fb, &req, 60 * S);
    assert_attempt(d, 1);
    assert_int_equal(fb_ratelimit_stats_get(&ch.rl[0])->released, 1);
    /* the minute's request is free again: the next caller goes at once */
    fb_ratelimit_decision rl = fb_ratelimit_acquire(&ch.rl[0], 1000, 60 * S);
    assert_true(rl.admitted);
    assert_int_equal(rl.wait_us, 0);
}

/* Cancelled while waiting for the limiter: the reservation goes back too. */
static void fallback_cancel_during_limiter_wait_returns_the_reservation(void **state) {
    (void)state;
    chain ch;
    chain_setup(&ch, 1);
    chain_limit(&ch, 0, (fb_ratelimit_config){.requests_per_min = 1, .wait_us_max = 120 * S});
    chain_init(&ch);
    fb_fallback_request req;
    assert_true(fb_ratelimit_acquire(&ch.rl[0], 1000, 0).admitted);
    fb_fallback_decision d = fb_fallback_begin(&ch.fb, &req, 1000, NULL, 0, 0);
    assert_wait(d, 0, 60 * S);
    fb_fallback_cancel(&ch.fb, &req, 10 * S);
    assert_int_equal(fb_ratelimit_stats_get(&ch.rl[0])->released, 1);
    assert_int_equal(fb_ratelimit_acquire(&ch.rl[0], 1000, 60 * S).wait_us, 0);
}

/* ---- the concurrency limit ---- */

/*
 * A full concurrency limit skips the provider like a rejecting limiter:
 * the second request goes to provider 1 at once, and a chain where every
 * limit is full ends RATE_LIMITED without any attempt or breaker call.
 */
static void fallback_full_concurrency_limit_skips_the_provider(void **state) {
    (void)state;
    fb_fallback_decision d;
    chain ch;
    chain_setup(&ch, 2);
    fb_conclimit cl[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fb_conclimit_init(&cl[i], &(fb_conclimit_config){.initial_limit = 1}),
                         FB_OK);
        ch.cfg.providers[i].conclimit = &cl[i];
    }
    chain_init(&ch);
    fb_fallback_request a, b, c;
    d = fb_fallback_begin(&ch.fb, &a, 10, NULL, 0, 0);
    assert_attempt(d, 0);
    d = fb_fallback_begin(&ch.fb, &b, 10, NULL, 0, 1 * MS);
    assert_attempt(d, 1);
    assert_true(d.via_fallback);
    uint64_t asked = breaker_asked(&ch.br[0]) + breaker_asked(&ch.br[1]);
    d = fb_fallback_begin(&ch.fb, &c, 10, NULL, 0, 2 * MS);
    assert_done(d, FB_STOP_RATE_LIMITED);
    assert_int_equal(breaker_asked(&ch.br[0]) + breaker_asked(&ch.br[1]), asked);
    assert_int_equal(fb_conclimit_stats_get(&cl[0])->rejected, 2);
    assert_int_equal(fb_conclimit_stats_get(&cl[1])->rejected, 1);
    /* a's success frees provider 0's slot */
    d = fb_fallback_result(&ch.fb, &a, &OK, FB_TIME_NONE, 3 * MS);
    assert_done(d, FB_STOP_SUCCESS);
    d = fb_fallback_begin(&ch.fb, &c, 10, NULL, 0, 4 * MS);
    assert_attempt(d, 0);
}

/*
 * The result goes to the limit as the gRPC interceptor says: a 503 is a
 * drop (AIMD 20 -> 18 with min 1), a success a sample, a cancel nothing;
 * a breaker that rejects gives the permit back without a sample.
 */
static void fallback_results_reach_the_concurrency_limit(void **state) {
    (void)state;
    fb_fallback_decision d;
    chain ch;
    chain_setup(&ch, 1);
    fb_conclimit cl;
    assert_int_equal(
        fb_conclimit_init(&cl, &(fb_conclimit_config){.algo = FB_CONCLIMIT_AIMD, .min_limit = 1}),
        FB_OK);
    ch.cfg.providers[0].conclimit = &cl;
    chain_init(&ch);
    fb_fallback_request a;
    d = fb_fallback_begin(&ch.fb, &a, 10, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_int_equal(fb_conclimit_inflight(&cl), 1);
    d = fb_fallback_result(&ch.fb, &a, &E503, FB_TIME_NONE, 10 * MS);
    assert_done(d, FB_STOP_EXHAUSTED);
    assert_int_equal(fb_conclimit_limit(&cl), 18);
    assert_int_equal(fb_conclimit_inflight(&cl), 0);
    d = fb_fallback_begin(&ch.fb, &a, 10, NULL, 0, 20 * MS);
    assert_attempt(d, 0);
    fb_fallback_cancel(&ch.fb, &a, 30 * MS);
    assert_int_equal(fb_conclimit_stats_get(&cl)->ignored, 1);
    assert_int_equal(fb_conclimit_limit(&cl), 18);
    trip(&ch.br[0], 40 * MS);
    d = fb_fallback_begin(&ch.fb, &a, 10, NULL, 0, 40 * MS);
    assert_done(d, FB_STOP_BREAKER_OPEN);
    assert_int_equal(fb_conclimit_inflight(&cl), 0);
    assert_int_equal(fb_conclimit_stats_get(&cl)->ignored, 2);
}

/* ---- several attempts at once ---- */

/*
 * A hedge to the same provider takes its own permits (a second breaker
 * admission, a second concurrency slot); to the next one it skips a full
 * provider. Detached, the request's result records nothing: each attempt
 * ends on its own permits.
 */
static void fallback_hedge_takes_its_own_permits(void **state) {
    (void)state;
    fb_fallback_decision d;
    chain ch;
    chain_setup(&ch, 3);
    chain_retry(&ch, (fb_retry_config){.attempts = 1, .attempt_timeout_us = 2 * S});
    fb_conclimit cl[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fb_conclimit_init(&cl[i], &(fb_conclimit_config){.initial_limit = 2}),
                         FB_OK);
        ch.cfg.providers[i].conclimit = &cl[i];
    }
    chain_init(&ch);
    fb_conclimit_permit full;
    assert_true(fb_conclimit_acquire(&cl[1], 0, &full));
    assert_true(fb_conclimit_acquire(&cl[1], 0, &full)); /* provider 1 is full */
    fb_fallback_request a;
    d = fb_fallback_begin(&ch.fb, &a, 10, NULL, 0, 0);
    assert_attempt(d, 0);
    fb_fallback_permits h0, h1, h2, none;
    fb_fallback_detach(&a, &h0);
    assert_true(h0.held);
    assert_int_equal(h0.provider, 0);
    fb_time_us t = 0;
    assert_true(fb_fallback_hedge(&ch.fb, &a, false, 500 * MS, &h1, &t));
    assert_int_equal(h1.provider, 0);
    assert_int_equal(t, 2 * S);
    assert_int_equal(fb_conclimit_inflight(&cl[0]), 2);
    assert_false(fb_fallback_hedge(&ch.fb, &a, false, 600 * MS, &none, &t)); /* 0 is full now */
    assert_true(fb_fallback_hedge(&ch.fb, &a, true, 700 * MS, &h2, &t));
    assert_int_equal(h2.provider, 2); /* 1 is full: skipped */
    /* the hedge on 0 wins: it ends with its success, the others are cancelled */
    fb_fallback_end(&ch.fb, &h1, &OK, FB_TIME_NONE, 800 * MS);
    fb_fallback_end(&ch.fb, &h0, NULL, FB_TIME_NONE, 800 * MS);
    fb_fallback_end(&ch.fb, &h2, NULL, FB_TIME_NONE, 800 * MS);
    fb_fallback_end(&ch.fb, &h2, &E503, FB_TIME_NONE, 900 * MS); /* ended already: nothing */
    d = fb_fallback_result(&ch.fb, &a, &OK, FB_TIME_NONE, 800 * MS);
    assert_done(d, FB_STOP_SUCCESS);
    assert_int_equal(fb_conclimit_inflight(&cl[0]), 0);
    assert_int_equal(fb_conclimit_inflight(&cl[2]), 0);
    const fb_breaker_stats *b0 = fb_breaker_stats_get(&ch.br[0]);
    assert_int_equal(b0->admitted, 2);
    assert_int_equal(fb_conclimit_stats_get(&cl[0])->successes, 1);
    assert_int_equal(fb_conclimit_stats_get(&cl[0])->ignored, 1);
    assert_int_equal(fb_fallback_request_stats_get(&a)->attempts, 1); /* hedges are not counted */
}

/* No hedge past the deadline, nor once the request has no attempt out. */
static void fallback_hedge_refused_after_the_deadline(void **state) {
    (void)state;
    fb_fallback_decision d;
    chain ch;
    chain_setup(&ch, 1);
    chain_retry(&ch, (fb_retry_config){.attempts = 1, .deadline_us = 1 * S});
    chain_init(&ch);
    fb_fallback_request a;
    fb_fallback_permits h;
    fb_time_us t = 0;
    d = fb_fallback_begin(&ch.fb, &a, 10, NULL, 0, 0);
    assert_attempt(d, 0);
    assert_true(fb_fallback_hedge(&ch.fb, &a, false, 400 * MS, &h, &t));
    assert_int_equal(t, 600 * MS); /* the time left */
    fb_fallback_end(&ch.fb, &h, NULL, FB_TIME_NONE, 500 * MS);
    assert_false(fb_fallback_hedge(&ch.fb, &a, false, 1 * S, &h, &t));
    assert_false(h.held);
    d = fb_fallback_result(&ch.fb, &a, &OK, FB_TIME_NONE, 1 * S);
    assert_done(d, FB_STOP_SUCCESS);
    assert_false(fb_fallback_hedge(&ch.fb, &a, false, 1 * S, &h, &t));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fallback_ratelimit_reservation_returned_when_breaker_rejects),
        cmocka_unit_test(fallback_cancel_during_limiter_wait_returns_the_reservation),
        cmocka_unit_test(fallback_primary_success),
        cmocka_unit_test(fallback_primary_503_retries_then_fallback_succeeds),
        cmocka_unit_test(fallback_request_stats_get_follows_the_request_and_restarts_with_begin),
        cmocka_unit_test(fallback_retry_state_is_fresh_for_each_provider),
        cmocka_unit_test(fallback_every_provider_visited_once),
        cmocka_unit_test(fallback_without_retry_policy_one_attempt_per_provider),
        cmocka_unit_test(fallback_zero_delay_retry_attempts_at_once),
        cmocka_unit_test(fallback_wait_always_makes_each_retry_a_marked_wait),
        cmocka_unit_test(fallback_plain_engine_decides_as_one_with_limits_that_admit_all),
        cmocka_unit_test(fallback_plain_ways_decide_as_the_full_way_on_random_requests),
        cmocka_unit_test(fallback_lean_ways_decide_as_the_full_way_on_random_requests),
        cmocka_unit_test(fallback_retries_at_once_foresees_the_decisions),
        cmocka_unit_test(fallback_non_retryable_outcome_falls_back_at_once),
        cmocka_unit_test(fallback_open_breaker_skips_without_attempt),
        cmocka_unit_test(fallback_half_open_admits_one_requests_probe),
        cmocka_unit_test(fallback_breaker_asked_again_at_resume),
        cmocka_unit_test(fallback_retry_rejected_waits_through_an_open_breaker),
        cmocka_unit_test(fallback_retry_rejected_zero_delay_is_a_wait),
        cmocka_unit_test(fallback_result_records_effect_into_breaker),
        cmocka_unit_test(fallback_breaker_port_used_instead_of_breaker),
        cmocka_unit_test(fallback_cancel_releases_half_open_probe_trap_2),
        cmocka_unit_test(fallback_cancel_reports_cancelled_to_port),
        cmocka_unit_test(fallback_permanent_400_no_retry_no_fallback),
        cmocka_unit_test(fallback_policy_rejection_never_falls_back),
        cmocka_unit_test(fallback_context_check_skips_32k_for_95k_prompt),
        cmocka_unit_test(fallback_without_context_check_small_window_is_tried),
        cmocka_unit_test(fallback_context_length_error_skips_smaller_windows),
        cmocka_unit_test(fallback_context_length_error_unknown_window_counts_as_larger),
        cmocka_unit_test(fallback_context_length_error_without_larger_window_ends),
        cmocka_unit_test(fallback_context_length_floor_outlives_skipped_provider),
        cmocka_unit_test(fallback_context_length_error_on_last_provider_ends),
        cmocka_unit_test(fallback_ratelimit_wait_then_attempt_without_reacquiring),
        cmocka_unit_test(fallback_ratelimit_acquired_again_for_each_retry),
        cmocka_unit_test(fallback_ratelimit_reject_skips_provider),
        cmocka_unit_test(fallback_ratelimit_wait_past_deadline_skips_provider),
        cmocka_unit_test(fallback_deadline_passed_during_wait_ends_at_resume),
        cmocka_unit_test(fallback_deadline_giveup_does_not_fall_back),
        cmocka_unit_test(fallback_attempt_timeout_bounded_by_deadline),
        cmocka_unit_test(fallback_deadline_spans_the_request),
        cmocka_unit_test(fallback_no_fallback_once_deadline_passed),
        cmocka_unit_test(fallback_degraded_answer_when_all_breakers_open),
        cmocka_unit_test(fallback_exhausted_after_a_failed_attempt),
        cmocka_unit_test(fallback_skip_reason_precedence_breaker_limiter_context),
        cmocka_unit_test(fallback_order_override_per_request),
        cmocka_unit_test(fallback_configured_order_is_used),
        cmocka_unit_test(fallback_invalid_order_override_ends_request),
        cmocka_unit_test(fallback_stream_fail_ends_request),
        cmocka_unit_test(fallback_stream_fail_retries_before_first_token),
        cmocka_unit_test(fallback_stream_resume_sets_resume_on_later_attempts),
        cmocka_unit_test(fallback_stream_buffer_and_retry_retry_from_scratch),
        cmocka_unit_test(fallback_retry_budget_refusal_moves_to_fallback),
        cmocka_unit_test(fallback_success_refills_retry_budget),
        cmocka_unit_test(fallback_quota_refund_covers_retry_before_fallback),
        cmocka_unit_test(fallback_result_without_attempt_ends_request),
        cmocka_unit_test(fallback_resume_during_attempt_releases_permit),
        cmocka_unit_test(fallback_cancelled_attempt_outcome_ends_request),
        cmocka_unit_test(fallback_init_rejects_bad_config),
        cmocka_unit_test(fallback_stop_names),
        cmocka_unit_test(fallback_full_concurrency_limit_skips_the_provider),
        cmocka_unit_test(fallback_results_reach_the_concurrency_limit),
        cmocka_unit_test(fallback_hedge_takes_its_own_permits),
        cmocka_unit_test(fallback_hedge_refused_after_the_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
