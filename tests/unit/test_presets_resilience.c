/*
 * test_presets_resilience.c - resilience4j, Polly, gobreaker and pybreaker
 * presets, rule by rule, at exact times. These libraries do not run here, so
 * each test states the rule as the library's source has it (file, version,
 * the line's code) and drives the layer the preset built: its breaker
 * configuration through core/breaker.c, its retry through core/retry.c.
 * cockatiel, opossum and tenacity are recorded from the libraries
 * themselves (tests/conformance/, replayed by tests/e2e/conformance.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/breaker.h"
#include "core/classify.h"
#include "core/fallback.h"
#include "core/retry.h"
#include "core/rng.h"
#include "scenario/preset.h"
#include "scenario/scenario.h"
#include "tests/unit/helpers.h"

/* The layer a preset builds from `keys` ("\"preset\": \"polly\", ..."), in a one-provider scenario.
 */
typedef struct layer_case {
    sim_scenario *sc;
    const sim_layer *L;
} layer_case;

static void scenario_json(char *json, size_t n, const char *keys) {
    snprintf(json, n,
             "{\"name\":\"r\",\"duration\":\"1s\",\"providers\":[{\"name\":\"p\",\"latency\":"
             "{\"ttft\":\"5ms\"}}],\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":"
             "\"1/s\"},\"prompt_tokens\":1,\"completion_tokens\":1}],\"variants\":{\"v\":"
             "{\"layers\":[{\"name\":\"lib\",%s}]}}}",
             keys);
}

static layer_case preset_layer(const char *keys) {
    char json[2048];
    scenario_json(json, sizeof json, keys);
    layer_case lc;
    lc.sc = th_load(json);
    lc.L = &lc.sc->variants[0].layers[0];
    return lc;
}

/* The error a preset layer gives (the loader's message), for the rejections. */
static void preset_error(const char *keys, const char *fragment) {
    char json[2048];
    scenario_json(json, sizeof json, keys);
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = scn_parse(json, strlen(json), "t.json", NULL, 0, NULL, &sc, &err);
    assert_int_not_equal(rc, FB_OK);
    if (strstr(err.msg, fragment) == NULL) fail_msg("'%s' not in '%s'", fragment, err.msg);
}

/* The layer's breaker for its provider, started at 0. */
static void breaker_of(const layer_case *lc, fb_breaker *b) {
    assert_true(lc->L->per_provider[0].has_breaker);
    assert_int_equal(fb_breaker_init(b, &lc->L->per_provider[0].breaker, 0), FB_OK);
}

static fb_breaker_permit admitted(fb_breaker *b, fb_time_us t) {
    fb_breaker_permit p;
    if (!fb_breaker_allow(b, t, &p)) fail_msg("rejected at %lld us", (long long)t);
    return p;
}

static void rejected(fb_breaker *b, fb_time_us t) {
    fb_breaker_permit p;
    if (fb_breaker_allow(b, t, &p)) fail_msg("admitted at %lld us", (long long)t);
}

static void result(fb_breaker *b, const fb_breaker_permit *p, fb_effect e, fb_time_us dur,
                   fb_time_us t) {
    fb_breaker_record(
        b, p, &(fb_breaker_result){.effect = e, .duration_us = dur, .hint_us = FB_TIME_NONE}, t);
}

/* n calls with effect e at t, each over at once. */
static void calls_at(fb_breaker *b, int n, fb_effect e, fb_time_us t) {
    for (int i = 0; i < n; i++) {
        fb_breaker_permit p = admitted(b, t);
        result(b, &p, e, 0, t);
    }
}

static void state_is(const fb_breaker *b, fb_breaker_state s) {
    assert_string_equal(fb_breaker_state_name(fb_breaker_state_get(b)), fb_breaker_state_name(s));
}

/* A request's retry decisions: delays[i] before retry i + 1; returns the calls it makes. */
static uint32_t calls_made(const sim_layer *L, int status, uint64_t seed, fb_time_us *delays,
                           uint32_t cap) {
    fb_retry_policy pol;
    assert_int_equal(fb_retry_policy_init(&pol, &L->retry), FB_OK);
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &L->classify), FB_OK);
    fb_class c = fb_classify(&cl, &(fb_reply){.status = status, .should_retry = -1});
    if (L->has_retry_on) c.retryable = (L->retry_on_outcomes >> c.outcome) & 1u;
    fb_rng rng;
    fb_rng_seed(&rng, seed, 3);
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    for (uint32_t n = 1; n <= cap; n++) {
        fb_retry_decision d = fb_retry_next(&pol, &st, &c, FB_TIME_NONE, NULL, &rng, 0);
        if (!d.retry) return n;
        if (delays) delays[n - 1] = d.delay_us;
    }
    return cap + 1;
}

/*
 * One request through the layer's retry and its (open) breaker together: how many tries it
 * makes before it ends, each rejected, and when it ends (core/fallback.c, as the sim runs it).
 */
static int tries_while_open(const layer_case *lc, fb_breaker *b, fb_time_us start,
                            fb_time_us *end) {
    fb_retry_policy pol;
    assert_int_equal(fb_retry_policy_init(&pol, &lc->L->retry), FB_OK);
    fb_fallback_config fc = {.provider_count = 1, .retry = &pol};
    fc.providers[0].breaker = b;
    fb_fallback fb;
    assert_int_equal(fb_fallback_init(&fb, &fc), FB_OK);
    fb_fallback_request req;
    fb_time_us now = start;
    fb_fallback_decision d = fb_fallback_begin(&fb, &req, 1, NULL, 0, now);
    int tries = 1;
    for (; d.action == FB_ACT_WAIT; tries++) {
        now += d.delay_us;
        d = fb_fallback_resume(&fb, &req, now);
    }
    *end = now;
    if (d.action == FB_ACT_ATTEMPT) return -tries; /* got through on try number -n */
    assert_string_equal(fb_stop_name(d.stop), "breaker_open");
    return tries;
}

/* ---- resilience4j 2.4.0 ---- */

/* RetryImpl.onError: `if (numOfAttempts >= maxAttempts) throw` -- maxAttempts = 3 makes 3 calls. */
static void r4j_max_attempts_counts_the_first_call(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\"");
    assert_int_equal(calls_made(lc.L, 503, 1, NULL, 100), 3);
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"resilience4j\", \"maxAttempts\": 1");
    assert_int_equal(calls_made(lc.L, 503, 1, NULL, 100), 1);
    scn_free(lc.sc);
}

/* RetryConfig DEFAULT_WAIT_DURATION 500 ms, IntervalFunction.of(500): constant. */
static void r4j_wait_duration_is_constant_500ms(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"maxAttempts\": 4");
    fb_time_us d[3];
    assert_int_equal(calls_made(lc.L, 503, 1, d, 100), 4);
    for (int i = 0; i < 3; i++) assert_int_equal(d[i], 500 * MS);
    scn_free(lc.sc);
}

/*
 * IntervalFunction.ofExponentialBackoff: LongStream.iterate(i, x -> (long)(x * m)):
 * 500, 750, 1125, 1687, 2530 ms with m = 1.5 (each step truncated), then min(.., max) (Spring
 * reads the max only with the multiplier given).
 */
static void r4j_exponential_backoff_truncates_each_step(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"maxAttempts\": 7, "
                                 "\"waitDuration\": \"500ms\", \"enableExponentialBackoff\": true, "
                                 "\"exponentialBackoffMultiplier\": 1.5, "
                                 "\"exponentialMaxWaitDuration\": \"PT3S\"");
    fb_time_us d[6];
    assert_int_equal(calls_made(lc.L, 503, 1, d, 100), 7);
    const fb_time_us want[] = {500 * MS, 750 * MS, 1125 * MS, 1687 * MS, 2530 * MS, 3 * S};
    for (int i = 0; i < 6; i++) assert_int_equal(d[i], want[i]);
    scn_free(lc.sc);
}

/*
 * CommonRetryConfigurationProperties.configureRetryIntervalFunction runs only when
 * waitDuration != null: enableExponentialBackoff alone leaves the 500 ms constant.
 */
static void r4j_exponential_needs_wait_duration_in_spring(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"maxAttempts\": 4, "
                                 "\"enableExponentialBackoff\": true, "
                                 "\"exponentialBackoffMultiplier\": 3");
    fb_time_us d[3];
    calls_made(lc.L, 503, 1, d, 100);
    for (int i = 0; i < 3; i++) assert_int_equal(d[i], 500 * MS);
    scn_free(lc.sc);
}

/* IntervalFunction.randomize: (d - f d) + random * (2 f d + 1), (long): [500, 1500] ms whole. */
static void r4j_randomized_wait_in_whole_milliseconds(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"maxAttempts\": 2, "
                                 "\"waitDuration\": 1000, \"enableRandomizedWait\": true");
    fb_time_us lo = FB_TIME_MAX, hi = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        fb_time_us d[1];
        calls_made(lc.L, 503, seed, d, 100);
        assert_int_equal(d[0] % MS, 0);
        lo = d[0] < lo ? d[0] : lo;
        hi = d[0] > hi ? d[0] : hi;
    }
    assert_true(lo >= 500 * MS && lo < 520 * MS);
    assert_true(hi <= 1500 * MS && hi > 1480 * MS);
    scn_free(lc.sc);
}

/* recordExceptions / retryExceptions empty: every exception, so a 404 and a 429 too. */
static void r4j_every_error_answer_is_recorded_and_retried(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\"");
    assert_int_equal(calls_made(lc.L, 404, 1, NULL, 100), 3);
    assert_int_equal(calls_made(lc.L, 429, 1, NULL, 100), 3);
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &lc.L->classify), FB_OK);
    const int statuses[] = {404, 429, 500, 400};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(
            fb_classify(&cl, &(fb_reply){.status = statuses[i], .should_retry = -1}).effect,
            FB_EFFECT_FAILURE);
    scn_free(lc.sc);
}

/*
 * CircuitBreakerMetrics.checkIfThresholdsExceeded: failureRate >= failureRateThreshold once
 * minimumNumberOfCalls (100) are in the COUNT_BASED window of 100: 50 of 100 trips.
 */
static void r4j_trips_at_half_of_100_calls(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 50, FB_EFFECT_SUCCESS, 0);
    calls_at(&b, 49, FB_EFFECT_FAILURE, 1 * S);
    state_is(&b, FB_BREAKER_CLOSED); /* 99 calls: below the minimum */
    calls_at(&b, 1, FB_EFFECT_FAILURE, 2 * S);
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
}

/*
 * OpenState.tryAcquirePermission: clock.instant().isAfter(retryAfterWaitDuration) -- still open
 * at exactly waitDurationInOpenState (60 s); HalfOpenState admits
 * permittedNumberOfCallsInHalfOpenState (10) calls in all, then judges their rate.
 */
static void r4j_half_open_admits_10_calls_then_judges_the_rate(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"minimumNumberOfCalls\": 4, "
                                 "\"slidingWindowSize\": 4");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 4, FB_EFFECT_FAILURE, 0);
    state_is(&b, FB_BREAKER_OPEN);
    rejected(&b, 60 * S);
    fb_breaker_permit probes[10];
    for (int i = 0; i < 10; i++) probes[i] = admitted(&b, 60 * S + 1);
    rejected(&b, 60 * S + 2); /* the 11th */
    state_is(&b, FB_BREAKER_HALF_OPEN);
    /* min(minimumNumberOfCalls 4, 10) = 4 results judge: 2 of 4 failed >= 50 % */
    for (int i = 0; i < 3; i++)
        result(&b, &probes[i], i < 2 ? FB_EFFECT_FAILURE : FB_EFFECT_SUCCESS, 0, 61 * S);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    result(&b, &probes[3], FB_EFFECT_SUCCESS, 0, 61 * S);
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);

    lc = preset_layer("\"preset\": \"resilience4j\", \"minimumNumberOfCalls\": 4, "
                      "\"slidingWindowSize\": 4, \"permittedNumberOfCallsInHalfOpenState\": 4");
    breaker_of(&lc, &b);
    calls_at(&b, 4, FB_EFFECT_FAILURE, 0);
    calls_at(&b, 3, FB_EFFECT_SUCCESS, 60 * S + 1);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 60 * S + 1); /* 1 of 4: 25 % < 50 % closes */
    state_is(&b, FB_BREAKER_CLOSED);
    scn_free(lc.sc);
}

/* automaticTransitionFromOpenToHalfOpenEnabled: a timer at waitDurationInOpenState. */
static void r4j_automatic_transition_at_the_deadline(void **state) {
    (void)state;
    layer_case lc = preset_layer(
        "\"preset\": \"resilience4j\", \"minimumNumberOfCalls\": 2, \"slidingWindowSize\": 2, "
        "\"waitDurationInOpenState\": \"10s\", "
        "\"automaticTransitionFromOpenToHalfOpenEnabled\": true");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 0);
    rejected(&b, 10 * S - 1);
    (void)admitted(&b, 10 * S);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    scn_free(lc.sc);
}

/* maxWaitDurationInHalfOpenState: HalfOpenState's scheduled toOpenState after that long. */
static void r4j_max_wait_in_half_open(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"minimumNumberOfCalls\": 1, "
                                 "\"waitDurationInOpenState\": \"1s\", "
                                 "\"maxWaitDurationInHalfOpenState\": \"5s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    (void)admitted(&b, 2 * S); /* half-open at 2 s, the probe never reports */
    fb_breaker_poll(&b, 7 * S - 1);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    fb_breaker_poll(&b, 7 * S);
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
}

/*
 * The breaker as resilience4j 2.4.0 runs it (recorded: tests/conformance/resilience4j-2.4.0-
 * circuitbreaker): half-open's minimum as given (CircuitBreakerMetrics.forHalfOpen), the
 * half-open and (automatic) open periods as scheduled tasks, no evaluation at admission
 * (ClosedState.tryAcquirePermission), releasePermission() from any call.
 */
static void r4j_breaker_semantics_as_recorded(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"slidingWindowSize\": 1, "
                                 "\"minimumNumberOfCalls\": 6, "
                                 "\"permittedNumberOfCallsInHalfOpenState\": 2, "
                                 "\"waitDurationInOpenState\": \"50ms\"");
    const fb_breaker_config *bc = &lc.L->per_provider[0].breaker;
    assert_int_equal(bc->half_open_minimum, 6);
    assert_int_equal(bc->half_open_timer, FB_ON);
    assert_int_equal(bc->open_timer, FB_OFF);
    assert_int_equal(bc->evaluate, FB_EVAL_RECORD_ONLY);
    assert_int_equal(bc->release_any, FB_ON);
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    calls_at(&b, 1, FB_EFFECT_SUCCESS, 100 * MS);
    state_is(&b, FB_BREAKER_HALF_OPEN); /* one success of min(6, 2) */
    calls_at(&b, 1, FB_EFFECT_SUCCESS, 200 * MS);
    state_is(&b, FB_BREAKER_CLOSED);
    scn_free(lc.sc);

    lc = preset_layer("\"preset\": \"resilience4j\", \"slidingWindowType\": \"TIME_BASED\", "
                      "\"slidingWindowSize\": 2, \"failureRateThreshold\": 60, "
                      "\"minimumNumberOfCalls\": 1");
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_SUCCESS, 0);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 1400 * MS);
    (void)admitted(&b, 2 * S); /* the case: admitted by resilience4j */
    scn_free(lc.sc);

    lc = preset_layer("\"preset\": \"resilience4j\", \"minimumNumberOfCalls\": 1, "
                      "\"waitDurationInOpenState\": \"1s\", "
                      "\"automaticTransitionFromOpenToHalfOpenEnabled\": true");
    assert_int_equal(lc.L->per_provider[0].breaker.open_timer, FB_ON);
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    assert_int_equal(fb_breaker_next_timer(&b), 1 * S);
    scn_free(lc.sc);
}

/*
 * configureRetryIntervalFunction (resilience4j-framework-common 2.4.0): with
 * enableExponentialBackoff, exponentialMaxWaitDuration is read only with
 * exponentialBackoffMultiplier given (and, randomized, randomizedWaitFactor too), and
 * randomizedWaitFactor only with the multiplier given; IntervalFunction refuses a wait
 * under 1 ms (recorded: tests/conformance/resilience4j-2.4.0-retry).
 */
static void r4j_retry_keys_read_as_spring_reads_them(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"waitDuration\": \"100ms\", "
                                 "\"enableExponentialBackoff\": true, "
                                 "\"exponentialMaxWaitDuration\": \"300ms\"");
    assert_int_equal(lc.L->retry.delay_us_max, FB_TIME_MAX); /* no multiplier: no cap */
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"resilience4j\", \"waitDuration\": \"100ms\", "
                      "\"enableExponentialBackoff\": true, \"exponentialBackoffMultiplier\": 2, "
                      "\"exponentialMaxWaitDuration\": \"300ms\"");
    assert_int_equal(lc.L->retry.delay_us_max, 300 * MS);
    scn_free(lc.sc);
    lc = preset_layer(
        "\"preset\": \"resilience4j\", \"waitDuration\": \"100ms\", "
        "\"enableExponentialBackoff\": true, \"enableRandomizedWait\": true, "
        "\"exponentialBackoffMultiplier\": 2, \"exponentialMaxWaitDuration\": \"300ms\", "
        "\"randomizedWaitFactor\": 0.1");
    assert_int_equal(lc.L->retry.delay_us_max, 300 * MS);
    assert_true(lc.L->retry.jitter_fraction == 0.1);
    scn_free(lc.sc);
    lc = preset_layer(
        "\"preset\": \"resilience4j\", \"waitDuration\": \"100ms\", "
        "\"enableExponentialBackoff\": true, \"enableRandomizedWait\": true, "
        "\"exponentialBackoffMultiplier\": 2, \"exponentialMaxWaitDuration\": \"300ms\"");
    assert_int_equal(lc.L->retry.delay_us_max, FB_TIME_MAX); /* no factor: no cap */
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"resilience4j\", \"waitDuration\": \"100ms\", "
                      "\"enableExponentialBackoff\": true, \"enableRandomizedWait\": true, "
                      "\"randomizedWaitFactor\": 0.1");
    assert_true(lc.L->retry.jitter_fraction == 0.5); /* no multiplier: the default factor */
    scn_free(lc.sc);
    preset_error("\"preset\": \"resilience4j\", \"waitDuration\": \"0ms\", "
                 "\"enableExponentialBackoff\": true",
                 "waitDuration under 1 ms with enableExponentialBackoff");
    preset_error("\"preset\": \"resilience4j\", \"waitDuration\": \"0ms\", "
                 "\"enableRandomizedWait\": true",
                 "waitDuration under 1 ms with enableRandomizedWait");
}

/* How the layer classifies an answer: the breaker's effect and whether the Retry retries it. */
static fb_class classified(const layer_case *lc, int status, fb_transport transport) {
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &lc->L->classify), FB_OK);
    fb_reply rep = {.status = status, .transport = transport, .should_retry = -1};
    return scn_layer_classify(lc->L, &cl, &rep, 0);
}

/*
 * CircuitBreakerStateMachine.handleThrowable: ignoreExceptions first (the permit released,
 * nothing counted), then recordExceptions (a failure), else a success; RetryConfig: retried when
 * in retryExceptions (or none given) and not in ignoreExceptions. A class covers its subclasses:
 * HttpClientErrorException every 4xx answer, 429 and 408 included.
 */
static void r4j_exception_lists_as_failures(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"ignoreExceptions\": "
                                 "[\"org.springframework.web.client.HttpClientErrorException\"]");
    assert_int_equal(classified(&lc, 429, FB_TRANSPORT_NONE).effect, FB_EFFECT_IGNORE);
    assert_int_equal(classified(&lc, 408, FB_TRANSPORT_NONE).effect, FB_EFFECT_IGNORE);
    assert_int_equal(classified(&lc, 404, FB_TRANSPORT_NONE).effect, FB_EFFECT_IGNORE);
    assert_int_equal(classified(&lc, 503, FB_TRANSPORT_NONE).effect, FB_EFFECT_FAILURE);
    assert_int_equal(classified(&lc, 0, FB_TRANSPORT_TIMEOUT).effect, FB_EFFECT_FAILURE);
    assert_true(classified(&lc, 429, FB_TRANSPORT_NONE).retryable); /* the Retry's lists: none */
    scn_free(lc.sc);

    lc = preset_layer("\"preset\": \"resilience4j\", \"recordExceptions\": "
                      "[\"HttpServerErrorException\", \"java.io.IOException\"], "
                      "\"retryExceptions\": [\"HttpClientErrorException.TooManyRequests\"], "
                      "\"retryIgnoreExceptions\": [\"java.net.ConnectException\"]");
    assert_int_equal(classified(&lc, 404, FB_TRANSPORT_NONE).effect, FB_EFFECT_SUCCESS);
    assert_int_equal(classified(&lc, 500, FB_TRANSPORT_NONE).effect, FB_EFFECT_FAILURE);
    assert_int_equal(classified(&lc, 0, FB_TRANSPORT_RESET).effect, FB_EFFECT_FAILURE);
    assert_true(classified(&lc, 429, FB_TRANSPORT_NONE).retryable);
    assert_false(classified(&lc, 503, FB_TRANSPORT_NONE).retryable);
    assert_false(classified(&lc, 0, FB_TRANSPORT_CONNECT).retryable);
    assert_int_equal(lc.L->retry.retry_rejected, FB_OFF); /* CallNotPermittedException not listed */
    scn_free(lc.sc);

    lc = preset_layer("\"preset\": \"resilience4j\", \"retryExceptions\": [\"Exception\"]");
    assert_int_equal(lc.L->retry.retry_rejected, FB_ON);
    assert_true(classified(&lc, 400, FB_TRANSPORT_NONE).retryable);
    scn_free(lc.sc);

    preset_error(
        "\"preset\": \"resilience4j\", \"ignoreExceptions\": [\"com.acme.BusinessException\"]",
        "ignoreExceptions: fusebox cannot place 'com.acme.BusinessException'; it knows "
        "Throwable");
    char known[800];
    scn_r4j_exception_names(known, sizeof known);
    assert_non_null(strstr(known, "HttpClientErrorException.TooManyRequests"));
    assert_int_equal(scn_r4j_exception_kinds(
                         "org.springframework.web.client.HttpClientErrorException$TooManyRequests"),
                     scn_r4j_exception_kinds("HttpClientErrorException.TooManyRequests"));
    assert_int_equal(scn_r4j_exception_kinds("HttpClientErrorException.TooMany"), -1);
}

/*
 * TIME_BASED: SlidingTimeWindowMetrics, slidingWindowSize epoch-second buckets; a slow call is
 * durationInNanos > slowCallDurationThreshold, judged against slowCallRateThreshold.
 */
static void r4j_time_based_window_and_slow_calls(void **state) {
    (void)state;
    layer_case lc =
        preset_layer("\"preset\": \"resilience4j\", \"slidingWindowType\": \"TIME_BASED\", "
                     "\"slidingWindowSize\": 10, \"minimumNumberOfCalls\": 4, "
                     "\"slowCallDurationThreshold\": \"2s\", \"slowCallRateThreshold\": 50");
    const fb_breaker_config *bc = &lc.L->per_provider[0].breaker;
    assert_int_equal(bc->window_us, 10 * S);
    assert_int_equal(bc->window_buckets, 10);
    fb_breaker b;
    breaker_of(&lc, &b);
    fb_breaker_permit p[4];
    for (int i = 0; i < 4; i++) p[i] = admitted(&b, 0);
    result(&b, &p[0], FB_EFFECT_SUCCESS, 2 * S, 2 * S); /* exactly 2 s: not slow */
    result(&b, &p[1], FB_EFFECT_SUCCESS, 2 * S + 1, 2 * S + 1);
    result(&b, &p[2], FB_EFFECT_SUCCESS, 0, 3 * S);
    state_is(&b, FB_BREAKER_CLOSED);
    result(&b, &p[3], FB_EFFECT_SUCCESS, 3 * S, 3 * S); /* 2 slow of 4 = 50 % */
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
    preset_error("\"preset\": \"resilience4j\", \"slidingWindowType\": \"TIME_BASED\", "
                 "\"slidingWindowSize\": 300",
                 "at most 128 seconds");
    preset_error("\"preset\": \"resilience4j\", \"failureRateTreshold\": 50",
                 "did you mean 'failureRateThreshold'");
}

/*
 * Retry(CircuitBreaker(call)): RetryImpl retries every exception (retryExceptions empty), the
 * breaker's CallNotPermittedException too, so a rejected call is an attempt waited for.
 */
static void r4j_rejected_calls_are_attempts_of_the_retry(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"resilience4j\", \"minimumNumberOfCalls\": 1, "
                                 "\"waitDurationInOpenState\": \"5s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0); /* open until 5 s */
    fb_time_us end;
    assert_int_equal(tries_while_open(&lc, &b, 1 * S, &end), 3);
    assert_int_equal(end, 2 * S); /* 1 s + 2 x 500 ms */
    /* at 4.5 s: rejected, then 5 s (still open: isAfter), then 5.5 s: half-open, through */
    assert_int_equal(tries_while_open(&lc, &b, 4500 * MS, &end), -3);
    assert_int_equal(end, 5500 * MS);
    scn_free(lc.sc);
}

/* ---- Polly 8.7.0 ---- */

/* RetryConstants.DefaultRetryCount = 3 retries: 4 calls, where resilience4j's 3 makes 3. */
static void polly_max_retry_attempts_counts_retries(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\"");
    fb_time_us d[3];
    assert_int_equal(calls_made(lc.L, 503, 1, d, 100), 4);
    for (int i = 0; i < 3; i++) assert_int_equal(d[i], 2 * S); /* DefaultBaseDelay, Constant */
    scn_free(lc.sc);
}

/* RetryHelper.GetRetryDelayCore: Linear (k + 1) d, Exponential 2^k d; then MaxDelay caps it. */
static void polly_backoff_types_and_max_delay(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MaxRetryAttempts\": 4, \"Delay\": "
                                 "\"00:00:00.500\", \"BackoffType\": \"Linear\"");
    fb_time_us d[4];
    calls_made(lc.L, 503, 1, d, 100);
    for (int i = 0; i < 4; i++) assert_int_equal(d[i], (i + 1) * 500 * MS);
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"polly\", \"MaxRetryAttempts\": 5, \"Delay\": \"00:00:01\", "
                      "\"BackoffType\": \"Exponential\", \"MaxDelay\": \"00:00:05\"");
    fb_time_us e[5];
    calls_made(lc.L, 503, 1, e, 100);
    const fb_time_us want[] = {1 * S, 2 * S, 4 * S, 5 * S, 5 * S};
    for (int i = 0; i < 5; i++) assert_int_equal(e[i], want[i]);
    scn_free(lc.sc);
    preset_error("\"preset\": \"polly\", \"Delay\": \"2s\"", "is a TimeSpan");
}

/* RetryHelper.ApplyJitter: d + (d * 0.5 * r - d * 0.25), so Constant 2 s is in [1.5, 2.5) s. */
static void polly_jitter_on_constant_is_a_quarter_either_way(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MaxRetryAttempts\": 1, "
                                 "\"UseJitter\": true");
    fb_time_us lo = FB_TIME_MAX, hi = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        fb_time_us d[1];
        calls_made(lc.L, 503, seed, d, 100);
        lo = d[0] < lo ? d[0] : lo;
        hi = d[0] > hi ? d[0] : hi;
    }
    assert_true(lo >= 1500 * MS && lo < 1520 * MS);
    assert_true(hi < 2500 * MS && hi > 2480 * MS);
    scn_free(lc.sc);
}

/*
 * AdvancedCircuitBehavior.OnActionFailure: Throughput >= MinimumThroughput (100) and
 * FailureRate >= FailureRatio (0.1), looked at after a failure only.
 */
static void polly_opens_at_a_tenth_of_100_after_a_failure(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 90, FB_EFFECT_SUCCESS, 0);
    calls_at(&b, 9, FB_EFFECT_FAILURE, 1 * S);
    state_is(&b, FB_BREAKER_CLOSED); /* 99 calls: below the throughput */
    calls_at(&b, 1, FB_EFFECT_FAILURE, 2 * S);
    state_is(&b, FB_BREAKER_OPEN); /* 10 of 100 = FailureRatio: >= opens */
    scn_free(lc.sc);
}

/*
 * CircuitStateController.PermitHalfOpenCircuitTest_NeedsLock: now >= _blockedUntil (5 s)
 * admits one trial; OnActionPreExecuteAsync rejects the rest while it runs.
 */
static void polly_half_open_at_break_duration_one_trial(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MinimumThroughput\": 2, "
                                 "\"FailureRatio\": 0.5");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 0);
    state_is(&b, FB_BREAKER_OPEN);
    rejected(&b, 5 * S - 1);
    fb_breaker_permit trial = admitted(&b, 5 * S);
    rejected(&b, 5 * S + 1);
    rejected(&b, 600 * S);                               /* no lease: the trial holds half-open */
    result(&b, &trial, FB_EFFECT_CANCELLED, 0, 601 * S); /* unhandled: a success, closes */
    state_is(&b, FB_BREAKER_CLOSED);
    scn_free(lc.sc);
}

/* The retry's default ShouldHandle handles BrokenCircuitException: 4 tries, 2 s apart. */
static void polly_retry_handles_broken_circuit_exceptions(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MinimumThroughput\": 2, "
                                 "\"FailureRatio\": 0.5");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 0); /* broken until 5 s */
    fb_time_us end;
    assert_int_equal(tries_while_open(&lc, &b, 0, &end), -4); /* 0, 2 s, 4 s rejected; 6 s */
    assert_int_equal(end, 6 * S);
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"gobreaker\"");
    assert_int_not_equal(lc.L->retry.retry_rejected, FB_ON); /* no retry to retry with */
    scn_free(lc.sc);
}

/*
 * RollingHealthMetrics.UpdateCurrentWindow (8.7.0, lines 45-63): a new window starts at the
 * first call that finds the current one SamplingDuration / 10 (3 s) old, and a window leaves
 * when `now - StartedAt >= _samplingDuration`: a call ages with its window, not by itself.
 */
static void polly_sampling_windows_start_at_the_first_call(void **state) {
    (void)state;
    const char *keys = "\"preset\": \"polly\", \"MinimumThroughput\": 2, \"FailureRatio\": 0.5";
    struct {
        fb_time_us t1, t2, t3; /* a failure at t1, a success at t2 (FB_TIME_NONE: none) and
                                  the failure at t3 that is judged */
        bool opens;
    } cases[] = {
        /* the window of 0 s is 30 s old at 30 s: gone (>=), one failure left */
        {0, FB_TIME_NONE, 30 * S, false},
        {0, FB_TIME_NONE, 30 * S - 1, true},
        /* windows start at calls, not on a grid from 0: the window of 1 s is 29.5 s old */
        {1 * S, FB_TIME_NONE, 30500 * MS, true},
        /* a success at 2.9 s falls in the window of 0 s and leaves with it at 31 s, 28.1 s old:
           one call left, below MinimumThroughput */
        {0, 2900 * MS, 31 * S, false},
        {0, 2900 * MS, 30 * S - 1, true}, /* 2 failures of 3 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        layer_case lc = preset_layer(keys);
        fb_breaker b;
        breaker_of(&lc, &b);
        calls_at(&b, 1, FB_EFFECT_FAILURE, cases[i].t1);
        if (cases[i].t2 != FB_TIME_NONE) calls_at(&b, 1, FB_EFFECT_SUCCESS, cases[i].t2);
        calls_at(&b, 1, FB_EFFECT_FAILURE, cases[i].t3);
        if ((fb_breaker_state_get(&b) == FB_BREAKER_OPEN) != cases[i].opens)
            fail_msg("case %zu: %s", i, fb_breaker_state_name(fb_breaker_state_get(&b)));
        scn_free(lc.sc);
    }
}

/*
 * CircuitStateController.OnHandledOutcomeAsync (8.7.0, line 231): in HalfOpen a handled
 * outcome opens the circuit again, OpenCircuitFor_NeedsLock (line 348) for BreakDuration
 * from that moment.
 */
static void polly_trial_failure_opens_for_another_break(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MinimumThroughput\": 2, "
                                 "\"FailureRatio\": 0.5");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit trial = admitted(&b, 5 * S);
    result(&b, &trial, FB_EFFECT_FAILURE, 500 * MS, 5500 * MS);
    state_is(&b, FB_BREAKER_OPEN);
    rejected(&b, 10500 * MS - 1);
    fb_breaker_permit again = admitted(&b, 10500 * MS); /* the next trial */
    result(&b, &again, FB_EFFECT_SUCCESS, 0, 10500 * MS);
    state_is(&b, FB_BREAKER_CLOSED);
    scn_free(lc.sc);
}

/*
 * Results of calls admitted before a transition: OnUnhandledOutcomeAsync (8.7.0, line 201)
 * closes a HalfOpen circuit whoever's call it was; OnHandledOutcomeAsync (line 231) reopens
 * it; in Open both are only counted (AdvancedCircuitBehavior.OnActionFailure, lines 30-38)
 * and the break is not extended. CloseCircuit_NeedsLock resets the metrics (line 289).
 */
static void polly_late_results_act_on_the_state_they_arrive_in(void **state) {
    (void)state;
    const char *keys = "\"preset\": \"polly\", \"MinimumThroughput\": 2, \"FailureRatio\": 0.5";
    layer_case lc = preset_layer(keys);
    fb_breaker b;
    breaker_of(&lc, &b);
    fb_breaker_permit x = admitted(&b, 0), w = admitted(&b, 0);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 1 * S); /* open until 6 s */
    result(&b, &w, FB_EFFECT_FAILURE, 2 * S, 2 * S);
    state_is(&b, FB_BREAKER_OPEN);
    rejected(&b, 6 * S - 1); /* not extended */
    fb_breaker_permit trial = admitted(&b, 6 * S);
    result(&b, &x, FB_EFFECT_SUCCESS, 7 * S, 7 * S); /* x's success closes */
    state_is(&b, FB_BREAKER_CLOSED);
    result(&b, &trial, FB_EFFECT_FAILURE, 2 * S, 8 * S); /* 1 call since the reset */
    state_is(&b, FB_BREAKER_CLOSED);
    scn_free(lc.sc);

    lc = preset_layer(keys);
    breaker_of(&lc, &b);
    w = admitted(&b, 0);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 1 * S);
    trial = admitted(&b, 6 * S);
    result(&b, &w, FB_EFFECT_FAILURE, 7 * S, 7 * S); /* w's failure reopens: until 12 s */
    state_is(&b, FB_BREAKER_OPEN);
    rejected(&b, 12 * S - 1);
    admitted(&b, 12 * S);
    scn_free(lc.sc);
}

/*
 * RetryHelper.DecorrelatedJitterBackoffV2 (8.7.0, lines 75-111): t = attempt + r, next =
 * 2^t tanh(sqrt(4 t)), delay = (next - prev) / 1.4 * Delay. The delays telescope: the first is
 * in [0, 2 tanh(2) / 1.4) Delay = [0, 1.3772) s, the sum of four is next(3 + r) / 1.4 Delay, in
 * [8 tanh(sqrt 12), 16 tanh(4)) / 1.4 s = [5.7031, 11.4209) s, whatever the draws.
 */
static void polly_exponential_jitter_is_decorrelated_v2(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MaxRetryAttempts\": 4, \"Delay\": "
                                 "\"00:00:01\", \"BackoffType\": \"Exponential\", "
                                 "\"UseJitter\": true");
    fb_time_us lo = FB_TIME_MAX, hi = 0, first_hi = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        fb_time_us d[4];
        assert_int_equal(calls_made(lc.L, 503, seed, d, 100), 5);
        fb_time_us sum = d[0] + d[1] + d[2] + d[3];
        assert_true(d[0] >= 0 && d[0] < 1377183);
        first_hi = d[0] > first_hi ? d[0] : first_hi;
        lo = sum < lo ? sum : lo;
        hi = sum > hi ? sum : hi;
    }
    /* each delay is truncated to whole microseconds: the sum may lose up to 4 us */
    assert_true(lo >= 5703099 - 4 && lo < 5703099 + 60 * MS);
    assert_true(hi < 11420907 && hi > 11420907 - 120 * MS);
    assert_true(first_hi > 1300 * MS);
    scn_free(lc.sc);
}

/*
 * DefaultPredicates.HandleOutcome (8.7.0, Utils/DefaultPredicates.cs line 6): every exception
 * but OperationCanceledException -- 4xx included; the delay is the backoff's, a Retry-After is
 * not read (RetryResilienceStrategy reads one only through a DelayGenerator, line 87).
 */
static void polly_every_error_is_handled_retry_after_is_not_read(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"MaxRetryAttempts\": 1");
    const int statuses[] = {400, 401, 404, 429, 500, 503};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        assert_int_equal(calls_made(lc.L, statuses[i], 1, NULL, 100), 2);
    fb_retry_policy pol;
    assert_int_equal(fb_retry_policy_init(&pol, &lc.L->retry), FB_OK);
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &lc.L->classify), FB_OK);
    fb_class c = fb_classify(&cl, &(fb_reply){.status = 429, .should_retry = -1});
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_retry_decision d = fb_retry_next(&pol, &st, &c, 30 * S, NULL, NULL, 0);
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 2 * S); /* Delay, not the 30 s header */
    scn_free(lc.sc);
}

/*
 * RetryHelper.GetRetryDelayCore (8.7.0, lines 115-118): a zero Delay is a zero delay whatever
 * the backoff; GetRetryDelay (lines 30-33) caps at a MaxDelay of zero too. The options'
 * [Range] attributes: MinimumThroughput >= 2 (CircuitBreakerConstants.MinimumValidThroughput),
 * SamplingDuration and BreakDuration in [00:00:00.500, 1.00:00:00], MaxRetryAttempts >= 1.
 */
static void polly_zero_delay_and_option_ranges(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"polly\", \"Delay\": \"00:00:00\", "
                                 "\"BackoffType\": \"Exponential\", \"UseJitter\": true");
    fb_time_us d[3];
    assert_int_equal(calls_made(lc.L, 503, 1, d, 100), 4);
    for (int i = 0; i < 3; i++) assert_int_equal(d[i], 0);
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"polly\", \"MaxDelay\": \"00:00:00\", \"BackoffType\": "
                      "\"Linear\"");
    assert_int_equal(calls_made(lc.L, 503, 1, d, 100), 4);
    for (int i = 0; i < 3; i++) assert_int_equal(d[i], 0);
    scn_free(lc.sc);
    preset_error("\"preset\": \"polly\", \"MinimumThroughput\": 1", "MinimumThroughput");
    preset_error("\"preset\": \"polly\", \"BreakDuration\": \"00:00:00.499\"", "BreakDuration");
    preset_error("\"preset\": \"polly\", \"SamplingDuration\": \"1.00:00:01\"", "SamplingDuration");
    preset_error("\"preset\": \"polly\", \"MaxRetryAttempts\": 0", "MaxRetryAttempts");
}

/* ---- gobreaker v2.4.0 ---- */

/* defaultReadyToTrip: counts.ConsecutiveFailures > 5 -- the 6th failure in a row trips. */
static void gobreaker_trips_on_the_6th_consecutive_failure(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"gobreaker\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 5, FB_EFFECT_FAILURE, 0);
    calls_at(&b, 1, FB_EFFECT_SUCCESS, 1);
    calls_at(&b, 5, FB_EFFECT_FAILURE, 2);
    state_is(&b, FB_BREAKER_CLOSED);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 3);
    state_is(&b, FB_BREAKER_OPEN);
    assert_int_equal(calls_made(lc.L, 503, 1, NULL, 100), 1); /* no retries */
    scn_free(lc.sc);
}

/* currentState: cb.expiry.Before(now) -- open at exactly Timeout, half-open just after. */
static void gobreaker_timeout_passes_the_deadline(void **state) {
    (void)state;
    layer_case lc =
        preset_layer("\"preset\": \"gobreaker\", \"ReadyToTrip\": {\"ConsecutiveFailures\": 0}, "
                     "\"Timeout\": \"1m30s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0); /* > 0: the first failure */
    rejected(&b, 90 * S);
    (void)admitted(&b, 90 * S + 1);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    scn_free(lc.sc);
}

/*
 * ConsecutiveFailures is a field of Counts, read by the default ReadyToTrip, not a Settings
 * field: the preset takes it inside ReadyToTrip, and a Settings-level key is an error.
 */
static void gobreaker_ready_to_trip_takes_the_counts_field(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"gobreaker\", "
                                 "\"ReadyToTrip\": {\"ConsecutiveFailures\": 2}");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 0);
    state_is(&b, FB_BREAKER_CLOSED);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 1); /* > 2 */
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
    preset_error("\"preset\": \"gobreaker\", \"ConsecutiveFailures\": 2",
                 "has no parameter 'ConsecutiveFailures'");
    preset_error("\"preset\": \"gobreaker\", \"ReadyToTrip\": {\"TotalFailures\": 2}",
                 "has no parameter 'ReadyToTrip.TotalFailures'");
}

/*
 * afterRequest reads currentState first: a late result after Timeout moves the breaker to
 * half-open at its time (tests/conformance/gobreaker-2.4.0).
 */
static void gobreaker_late_result_after_timeout_enters_half_open(void **state) {
    (void)state;
    layer_case lc =
        preset_layer("\"preset\": \"gobreaker\", "
                     "\"ReadyToTrip\": {\"ConsecutiveFailures\": 0}, \"Timeout\": \"1s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    fb_breaker_permit p = admitted(&b, 0);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    result(&b, &p, FB_EFFECT_FAILURE, 0, 1 * S + 1);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    scn_free(lc.sc);
}

/*
 * beforeRequest: half-open rejects once counts.validRequests() >= maxRequests; onSuccess closes
 * at ConsecutiveSuccesses >= maxRequests; MaxRequests 0 means 1.
 */
static void gobreaker_max_requests_in_half_open(void **state) {
    (void)state;
    layer_case lc =
        preset_layer("\"preset\": \"gobreaker\", \"MaxRequests\": 3, "
                     "\"ReadyToTrip\": {\"ConsecutiveFailures\": 0}, \"Timeout\": \"10s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit p[3];
    for (int i = 0; i < 3; i++) p[i] = admitted(&b, 11 * S);
    rejected(&b, 11 * S);
    result(&b, &p[0], FB_EFFECT_SUCCESS, 0, 12 * S);
    rejected(&b, 12 * S); /* a result does not give the request back */
    result(&b, &p[1], FB_EFFECT_SUCCESS, 0, 12 * S);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    result(&b, &p[2], FB_EFFECT_SUCCESS, 0, 12 * S);
    state_is(&b, FB_BREAKER_CLOSED);
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"gobreaker\"");
    assert_int_equal(lc.L->per_provider[0].breaker.half_open_permits, 1);
    scn_free(lc.sc);
}

/* afterRequest: `if generation != previous { return }` -- a result from before a trip is dropped.
 */
static void gobreaker_drops_results_of_another_generation(void **state) {
    (void)state;
    layer_case lc =
        preset_layer("\"preset\": \"gobreaker\", \"ReadyToTrip\": {\"ConsecutiveFailures\": 0}, "
                     "\"Timeout\": \"10s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    fb_breaker_permit before = admitted(&b, 0);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 1);
    (void)admitted(&b, 11 * S + 2); /* half-open, its trial in flight */
    result(&b, &before, FB_EFFECT_FAILURE, 0, 11 * S + 3);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    scn_free(lc.sc);
    preset_error("\"preset\": \"gobreaker\", \"Interval\": \"30s\", \"BucketPeriod\": \"5s\"",
                 "not modelled");
    preset_error("\"preset\": \"gobreaker\", \"Timeout\": 60", "is a Go duration");
}

/* currentState: closed and `cb.expiry.Before(now)` -> toNewGeneration: Interval clears the run. */
static void gobreaker_interval_clears_the_consecutive_failures(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"gobreaker\", \"Interval\": \"10s\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 5, FB_EFFECT_FAILURE, 9 * S);
    calls_at(&b, 5, FB_EFFECT_FAILURE, 10 * S + 1); /* a new generation: 5 again, not 10 */
    state_is(&b, FB_BREAKER_CLOSED);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 20 * S); /* 20 s is not after 10 s + 1 + 10 s */
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
}

/* ---- pybreaker 1.4.1 ---- */

/* CircuitClosedState.on_failure: counter >= fail_max -- the 5th failure opens. */
static void pybreaker_trips_on_the_5th_failure(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"pybreaker\"");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 4, FB_EFFECT_FAILURE, 0);
    state_is(&b, FB_BREAKER_CLOSED);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 1);
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
}

/*
 * CircuitOpenState.before_call: `now < opened_at + timeout` rejects, so a call at exactly
 * reset_timeout is made; CircuitHalfOpenState.on_success closes at success_threshold.
 */
static void pybreaker_reset_timeout_and_success_threshold(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"pybreaker\", \"fail_max\": 1, "
                                 "\"reset_timeout\": 2.5, \"success_threshold\": 2");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    rejected(&b, 2500 * MS - 1);
    calls_at(&b, 1, FB_EFFECT_SUCCESS, 2500 * MS);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    calls_at(&b, 1, FB_EFFECT_SUCCESS, 2600 * MS);
    state_is(&b, FB_BREAKER_CLOSED);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 2700 * MS);
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
}

/*
 * with breaker.calling(): the block runs outside the lock (generator_call), so half-open admits
 * every caller and a result is judged by its admission's state: a half-open call's late failure
 * opens the breaker another probe closed. Mode "call" keeps the permits and the current state's
 * judgement.
 */
static void pybreaker_calling_mode_judges_by_admission(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"pybreaker\", \"fail_max\": 1, "
                                 "\"reset_timeout\": 1, \"mode\": \"calling\"");
    assert_int_equal(lc.L->per_provider[0].breaker.late_results, FB_LATE_AS_ADMITTED);
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    fb_breaker_permit a = admitted(&b, 1 * S), c = admitted(&b, 1 * S);
    result(&b, &a, FB_EFFECT_SUCCESS, 0, 1 * S + 1);
    state_is(&b, FB_BREAKER_CLOSED);
    result(&b, &c, FB_EFFECT_FAILURE, 0, 1 * S + 2);
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
    lc = preset_layer("\"preset\": \"pybreaker\", \"fail_max\": 1, \"reset_timeout\": 1");
    assert_int_equal(lc.L->per_provider[0].breaker.late_results, FB_LATE_COUNT);
    breaker_of(&lc, &b);
    calls_at(&b, 1, FB_EFFECT_FAILURE, 0);
    (void)admitted(&b, 1 * S);
    rejected(&b, 1 * S); /* success_threshold 1: one at a time */
    scn_free(lc.sc);
    preset_error("\"preset\": \"pybreaker\", \"mode\": \"with\"", "mode");
}

/*
 * cockatiel (tests/conformance/cockatiel-4.0.0): a call admitted while closed counts in the
 * ConsecutiveBreaker's run whatever the state at its result: a late success neither closes a
 * half-open breaker nor lets the next late failure reopen it; an aborted call (its signal
 * went to execute(), and the call rejects) is a failure.
 */
static void cockatiel_late_results_and_cancellation(void **state) {
    (void)state;
    layer_case lc = preset_layer("\"preset\": \"cockatiel\", \"consecutive\": 2, "
                                 "\"halfOpenAfter\": 100");
    assert_int_equal(lc.L->per_provider[0].breaker.late_results, FB_LATE_RUN);
    assert_int_equal(lc.L->per_provider[0].breaker.cancelled_as, FB_EFFECT_FAILURE);
    fb_breaker b;
    breaker_of(&lc, &b);
    fb_breaker_permit l1 = admitted(&b, 0), l2 = admitted(&b, 0), l3 = admitted(&b, 0);
    calls_at(&b, 2, FB_EFFECT_FAILURE, 1 * MS);
    state_is(&b, FB_BREAKER_OPEN);
    fb_breaker_permit trial = admitted(&b, 101 * MS);
    rejected(&b, 101 * MS); /* (cockatiel's caller would wait for the verdict) */
    result(&b, &l1, FB_EFFECT_SUCCESS, 0, 102 * MS);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    result(&b, &l2, FB_EFFECT_CANCELLED, 0, 103 * MS);
    state_is(&b, FB_BREAKER_HALF_OPEN);
    result(&b, &l3, FB_EFFECT_CANCELLED, 0, 104 * MS);
    state_is(&b, FB_BREAKER_OPEN);
    result(&b, &trial, FB_EFFECT_SUCCESS, 0, 105 * MS); /* its period is over: nothing */
    state_is(&b, FB_BREAKER_OPEN);
    scn_free(lc.sc);
}

/*
 * opossum: a call's result runs on its own timer, the bucket rotation on a setInterval last
 * set one bucket earlier; at a tie the older timer runs first. A timeout at 10 s from a call
 * at 0 fails before the rotation at 10 s: with the two fires at 0 still in the window it is
 * 1 failure in 3 fires (33 %, not over 60), so closed; the rotation then drops them, and the
 * next failure is 2 in 1. Rotating first would see 1 failure in 0 fires and open at 10 s.
 */
static void opossum_failure_at_a_rotation_counts_before_it(void **state) {
    (void)state;
    layer_case lc = preset_layer(
        "\"preset\": \"opossum\", \"errorThresholdPercentage\": 60, \"resetTimeout\": 100");
    fb_breaker b;
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_SUCCESS, 0);
    fb_breaker_permit slow = admitted(&b, 0);
    fb_breaker_poll(&b,
                    10 * S); /* a timer at 10 s may rotate first: the result still counts before */
    result(&b, &slow, FB_EFFECT_FAILURE, 10 * S, 10 * S);
    state_is(&b, FB_BREAKER_CLOSED);
    fb_breaker_permit p = admitted(&b, 10 * S + 19 * MS);
    result(&b, &p, FB_EFFECT_FAILURE, 0, 10 * S + 19 * MS);
    state_is(&b, FB_BREAKER_OPEN);
    /* a call made after the previous rotation: its result comes after this one */
    scn_free(lc.sc);
    lc = preset_layer(
        "\"preset\": \"opossum\", \"errorThresholdPercentage\": 60, \"resetTimeout\": 100");
    breaker_of(&lc, &b);
    calls_at(&b, 2, FB_EFFECT_SUCCESS, 0);
    fb_breaker_permit late = admitted(&b, 9 * S + 500 * MS);
    result(&b, &late, FB_EFFECT_FAILURE, 500 * MS, 10 * S);
    state_is(&b, FB_BREAKER_OPEN); /* rotated first: the fires at 0 gone, 1 failure in 1 fire */
    scn_free(lc.sc);
}

/* tenacity's waits take keyword arguments; a misspelt one is an error with a did-you-mean. */
static void tenacity_keyword_typo_gets_a_did_you_mean(void **state) {
    (void)state;
    preset_error("\"preset\": \"tenacity\", \"wait_exponential\": {\"mutliplier\": 2}",
                 "wait_exponential has no keyword argument 'mutliplier' (did you mean "
                 "'multiplier'?)");
    preset_error("\"preset\": \"tenacity\", \"wait_fixed\": 1, \"wait_exponential\": {}",
                 "give one wait");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(r4j_max_attempts_counts_the_first_call),
        cmocka_unit_test(r4j_wait_duration_is_constant_500ms),
        cmocka_unit_test(r4j_exponential_backoff_truncates_each_step),
        cmocka_unit_test(r4j_exponential_needs_wait_duration_in_spring),
        cmocka_unit_test(r4j_randomized_wait_in_whole_milliseconds),
        cmocka_unit_test(r4j_every_error_answer_is_recorded_and_retried),
        cmocka_unit_test(r4j_trips_at_half_of_100_calls),
        cmocka_unit_test(r4j_half_open_admits_10_calls_then_judges_the_rate),
        cmocka_unit_test(r4j_automatic_transition_at_the_deadline),
        cmocka_unit_test(r4j_max_wait_in_half_open),
        cmocka_unit_test(r4j_time_based_window_and_slow_calls),
        cmocka_unit_test(r4j_rejected_calls_are_attempts_of_the_retry),
        cmocka_unit_test(r4j_breaker_semantics_as_recorded),
        cmocka_unit_test(r4j_retry_keys_read_as_spring_reads_them),
        cmocka_unit_test(r4j_exception_lists_as_failures),
        cmocka_unit_test(polly_max_retry_attempts_counts_retries),
        cmocka_unit_test(polly_backoff_types_and_max_delay),
        cmocka_unit_test(polly_jitter_on_constant_is_a_quarter_either_way),
        cmocka_unit_test(polly_opens_at_a_tenth_of_100_after_a_failure),
        cmocka_unit_test(polly_half_open_at_break_duration_one_trial),
        cmocka_unit_test(polly_retry_handles_broken_circuit_exceptions),
        cmocka_unit_test(polly_sampling_windows_start_at_the_first_call),
        cmocka_unit_test(polly_trial_failure_opens_for_another_break),
        cmocka_unit_test(polly_late_results_act_on_the_state_they_arrive_in),
        cmocka_unit_test(polly_exponential_jitter_is_decorrelated_v2),
        cmocka_unit_test(polly_every_error_is_handled_retry_after_is_not_read),
        cmocka_unit_test(polly_zero_delay_and_option_ranges),
        cmocka_unit_test(gobreaker_trips_on_the_6th_consecutive_failure),
        cmocka_unit_test(gobreaker_timeout_passes_the_deadline),
        cmocka_unit_test(gobreaker_max_requests_in_half_open),
        cmocka_unit_test(gobreaker_ready_to_trip_takes_the_counts_field),
        cmocka_unit_test(gobreaker_late_result_after_timeout_enters_half_open),
        cmocka_unit_test(gobreaker_drops_results_of_another_generation),
        cmocka_unit_test(gobreaker_interval_clears_the_consecutive_failures),
        cmocka_unit_test(pybreaker_trips_on_the_5th_failure),
        cmocka_unit_test(pybreaker_reset_timeout_and_success_threshold),
        cmocka_unit_test(pybreaker_calling_mode_judges_by_admission),
        cmocka_unit_test(cockatiel_late_results_and_cancellation),
        cmocka_unit_test(opossum_failure_at_a_rotation_counts_before_it),
        cmocka_unit_test(tenacity_keyword_typo_gets_a_did_you_mean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
