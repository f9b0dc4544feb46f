/*
 * preset_resilience_js.c - the Node resilience libraries: opossum and
 * cockatiel. Like every library in preset_resilience.c they wrap a call that
 * rejects on an error answer, so by default every error answer is a failure
 * and is retried.
 */
#include "scenario/presetint.h"

#include "scenario/loadint.h" /* scn__suggest, for did-you-mean in keyword arguments */

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- opossum ---- */

static const sim_param opossum_params[] = {
    PRESET_PARAM(
        "timeout", SIM_PK_JSON, .def_doc = "10000",
        .doc = "milliseconds a call may take before it is a failure (false or 0: no timeout)"),
    PRESET_PARAM(
        "errorThresholdPercentage", SIM_PK_PERCENT, .hi = 100, .def_doc = "50",
        .doc =
            "open when, after a failure, more than this percentage of the window's calls failed"),
    PRESET_PARAM("resetTimeout", SIM_PK_MILLIS, .lo = 1, .hi = 1e12, .def_doc = "30000",
                 .doc = "milliseconds it stays open"),
    PRESET_PARAM("rollingCountTimeout", SIM_PK_MILLIS, .lo = 1, .hi = 1e12, .def_doc = "10000",
                 .doc = "milliseconds of the statistical window"),
    PRESET_PARAM("rollingCountBuckets", SIM_PK_COUNT, .lo = 1, .hi = FB_BREAKER_BUCKETS_MAX,
                 .def_doc = "10", .doc = "buckets of the window, rotated by a timer"),
    PRESET_PARAM("volumeThreshold", SIM_PK_COUNT, .hi = 100000000, .def_doc = "0",
                 .doc = "calls in the window before it can open"),
    {0},
};

static const char *const opossum_rules[] = {
    "timeout (10000 ms): a call that takes longer is rejected with ETIMEDOUT and counted as a "
    "failure",
    "every rejected promise is a failure (errorFilter returns false): in HTTP terms every error "
    "answer",
    "after each failure: open when fires >= volumeThreshold and failures / fires * 100 > "
    "errorThresholdPercentage (strictly more); fires are every call made or rejected, counted "
    "when fired (so a rejected call and one still in flight count), failures when they fail, "
    "in whatever state",
    "the window is rollingCountBuckets buckets of Math.floor(rollingCountTimeout / "
    "rollingCountBuckets) ms rotated by a timer from the breaker's creation (time 0); it is "
    "never cleared, not even when the breaker opens or closes; a failure exactly at a "
    "rotation from a call made before the previous one comes first (its timer is the older): "
    "it counts in the bucket that ends, judged with the one that leaves (a result settled from "
    "outside opossum's timers, as a caller's abort, comes after the rotation)",
    "resetTimeout: half-open by a timer at the deadline; the first call then is the trial, the "
    "rest are rejected; any success closes it, any failure opens it, whichever call it comes "
    "from",
    "cancellation: the caller aborts the signal it gave the action (fire(signal)) and the "
    "action rejects: a failure like any other, in whatever state",
    "no retries (pair it with an SDK layer or a retry layer)",
    NULL,
};

static const char *const opossum_not_modelled[] = {
    "allowWarmUp, capacity (the semaphore), errorFilter, fallbacks, caches, coalescing",
    "a timed-out call's action keeps running in opossum (it is not cancelled unless an "
    "AbortController is given)",
    NULL,
};

/* opossum's timeout: a number of milliseconds, or false (or 0) for none. */
static int opossum_timeout(const sim_param_value *t, fb_time_us *out, char *msg, size_t msglen) {
    const cJSON *j = t ? t->json : NULL;
    *out = 10 * FB_US_PER_S;
    if (j == NULL) return FB_OK;
    if (cJSON_IsFalse(j)) {
        *out = 0;
        return FB_OK;
    }
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= 0) || j->valuedouble > 1e12) {
        snprintf(msg, msglen, "timeout is a number of milliseconds or false");
        return FB_EINVAL;
    }
    *out = (fb_time_us)llround(j->valuedouble * 1e3);
    return FB_OK;
}

static int opossum_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                         sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    fb_time_us timeout_us;
    int rc = opossum_timeout(scn__preset_given(p, v, "timeout"), &timeout_us, msg, msglen);
    if (rc != FB_OK) return rc;
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_TIME_WINDOW;
    /* Status rotates a bucket every Math.floor(rollingCountTimeout / rollingCountBuckets) ms. */
    b.window_buckets = (uint32_t)scn__preset_num_or(p, v, "rollingCountBuckets", 10);
    fb_time_us bucket_ms = scn__preset_us_or(p, v, "rollingCountTimeout", 10 * FB_US_PER_S) /
                           FB_US_PER_MS / b.window_buckets;
    if (bucket_ms < 1) {
        snprintf(msg, msglen, "rollingCountTimeout / rollingCountBuckets is under 1 ms");
        return FB_EINVAL;
    }
    b.window_us = bucket_ms * FB_US_PER_MS * b.window_buckets;
    b.bucket_anchor = FB_BUCKETS_EPOCH;
    b.window_scope = FB_WINDOW_FIRES; /* fires, rejections included; never cleared */
    b.failure_rate =
        scn__preset_rate_of_percent(scn__preset_num_or(p, v, "errorThresholdPercentage", 50));
    b.trip_compare = FB_CMP_PASS;
    b.minimum_calls = (uint32_t)scn__preset_num_or(p, v, "volumeThreshold", 0);
    b.evaluate = FB_EVAL_ON_FAILURE;
    scn__preset_trial_calls(&b, scn__preset_us_or(p, v, "resetTimeout", 30 * FB_US_PER_S),
                            FB_CMP_REACH, 1, FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_COUNT;
    b.cancelled_as = FB_EFFECT_FAILURE;
    scn__preset_breaker_layer(L, &b, false);
    L->retry.attempt_timeout_us = timeout_us;
    return FB_OK;
}

/* clang-format off */
static const sim_vocab_param opossum_words[] = {
    {"errorThresholdPercentage", SIM_VF_FAILURE_RATE, SIM_PK_PERCENT, 0, NULL},
    {"rollingCountTimeout", SIM_VF_WINDOW_US, SIM_PK_MILLIS, 0, NULL},
    {"rollingCountBuckets", SIM_VF_WINDOW_BUCKETS, SIM_PK_COUNT, 0, NULL},
    {"volumeThreshold", SIM_VF_MINIMUM_CALLS, SIM_PK_COUNT, 0, NULL},
    {"resetTimeout", SIM_VF_OPEN_US, SIM_PK_MILLIS, 0, NULL},
    {"timeout", SIM_VF_ATTEMPT_TIMEOUT_US, SIM_PK_MILLIS, 0, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

/* breaker.closed, breaker.opened, breaker.halfOpen (and the events close, open, halfOpen) */
static const sim_vocab opossum_vocab = {
    "opossum CircuitBreaker", NULL, "opossum", {"closed", "open", "halfOpen"}, opossum_words,
};

const sim_preset scn_preset_opossum = {
    "opossum",
    "opossum (npm)",
    "10.0.0",
    "lib/circuit.js (constructor defaults, call, handleError, fail, _halfOpen), lib/status.js "
    "(buckets rotated by setInterval)",
    "opossum's CircuitBreaker, option names as in its constructor",
    opossum_params,
    opossum_rules,
    opossum_not_modelled,
    opossum_apply,
    "recorded from opossum 10.0.0: 3027 sequences, 0 differences "
    "(tests/conformance/opossum-10.0.0)",
    &opossum_vocab,
};

/* ---- cockatiel ---- */

static const char *const cockatiel_backoffs[] = {"ExponentialBackoff", "ConstantBackoff", NULL};
static const char *const cockatiel_generators[] = {"decorrelatedJitterGenerator",
                                                   "noJitterGenerator", "fullJitterGenerator",
                                                   "halfJitterGenerator", NULL};

static const sim_param cockatiel_params[] = {
    PRESET_PARAM("maxAttempts", SIM_PK_COUNT, .hi = FB_RETRY_ATTEMPTS_MAX - 1,
                 .def_doc = "Infinity", .doc = "retry: retries after the first call"),
    PRESET_PARAM("backoff", SIM_PK_WORD, .names = cockatiel_backoffs, .def_doc = "ConstantBackoff",
                 .doc = "retry: the backoff's class (retry's default is new ConstantBackoff(0))"),
    PRESET_PARAM("interval", SIM_PK_MILLIS, .hi = 1e12, .def_doc = "0",
                 .doc = "retry: ConstantBackoff(interval), milliseconds"),
    PRESET_PARAM("initialDelay", SIM_PK_MILLIS, .lo = 0.001, .hi = 1e12, .def_doc = "128",
                 .doc = "retry: ExponentialBackoff's first delay"),
    PRESET_PARAM("maxDelay", SIM_PK_MILLIS, .lo = 0.001, .hi = 1e12, .def_doc = "30000",
                 .doc = "retry: ExponentialBackoff's cap"),
    PRESET_PARAM("exponent", SIM_PK_NUMBER, .lo = 1, .hi = 100, .def_doc = "2",
                 .doc = "retry: ExponentialBackoff's growth"),
    PRESET_PARAM("generator", SIM_PK_WORD, .names = cockatiel_generators,
                 .def_doc = "decorrelatedJitterGenerator",
                 .doc = "retry: ExponentialBackoff's jitter"),
    PRESET_PARAM("halfOpenAfter", SIM_PK_MILLIS, .lo = 1, .hi = 1e12, .def_doc = "10000",
                 .doc = "circuitBreaker: milliseconds open before half-open (required by "
                        "cockatiel: the README's "
                        "10 * 1000 here)"),
    PRESET_PARAM("consecutive", SIM_PK_COUNT, .lo = 1, .hi = 1000000, .def_doc = "5",
                 .doc = "circuitBreaker: breaker new ConsecutiveBreaker(consecutive)"),
    {0},
};

static const char *const cockatiel_rules[] = {
    "wrap(retry(handleAll, {maxAttempts, backoff}), circuitBreaker(handleAll, {halfOpenAfter, "
    "breaker})): the retry outside, every attempt asks the breaker; keys of nested objects "
    "are flat: backoff: new ExponentialBackoff({initialDelay, maxDelay, exponent, generator}) is "
    "\"backoff\": \"ExponentialBackoff\" with those keys beside it, breaker: new "
    "ConsecutiveBreaker(n) is \"consecutive\": n",
    "maxAttempts counts retries (retries < maxAttempts), default Infinity",
    "handleAll: every error answer is retried and is a breaker failure, and a call the breaker "
    "rejects (BrokenCircuitError) is retried too",
    "ConstantBackoff(interval) waits interval ms (retry's default: 0); ExponentialBackoff's "
    "decorrelatedJitterGenerator: t = attempt + U (U uniform in [0, 1), Math.random), "
    "next = exponent^t * tanh(sqrt(4 t)), "
    "delay min(max(0, next - prev) / 1.4 * initialDelay, maxDelay); noJitterGenerator "
    "min(maxDelay, initialDelay * 2^attempt); fullJitterGenerator floor(U * that); "
    "halfJitterGenerator floor((that + U * that) / 2)",
    "ConsecutiveBreaker(n): open on the n-th failure in a row (++state >= threshold)",
    "halfOpenAfter: half-open at the first call with Date.now() - openedAt >= halfOpenAfter; "
    "one trial call (halfOpenSampling {calls: 1, threshold: 0}); its success closes, its "
    "failure opens",
    "calls in flight: a call admitted while closed counts in the consecutive run whatever the "
    "state at its result (a success resets the run, which only closing also resets; a failure "
    "that reaches the threshold opens a closed or half-open breaker, and leaves an open one as "
    "it is); a trial's result counts only in its own half-open period",
    "cancellation: the signal given to execute() goes to the call, which rejects when it is "
    "aborted; under handleAll that is a failure, in any state (an aborted trial opens again)",
    NULL,
};

static const char *const cockatiel_not_modelled[] = {
    "calls during the half-open trial wait for its verdict in cockatiel (and then run, or, "
    "aborted meanwhile, end uncounted with TaskCancelledError); fusebox rejects them",
    "SamplingBreaker and CountBreaker, halfOpenAfter as a backoff, halfOpenSampling, "
    "handleType/handleWhen filters, timeout and bulkhead policies",
    NULL,
};

static void cockatiel_backoff(const sim_preset *p, const sim_param_value *v, fb_retry_config *r) {
    const sim_param_value *b = scn__preset_given(p, v, "backoff");
    const sim_param_value *g = scn__preset_given(p, v, "generator");
    r->cap_order = FB_CAP_BEFORE_JITTER;
    if (b == NULL || b->word == 1) { /* ConstantBackoff(interval) */
        r->base_us = scn__preset_us_or(p, v, "interval", 0);
        r->backoff = r->base_us > 0 ? FB_BACKOFF_CONSTANT : FB_BACKOFF_NONE;
        r->delay_us_max = FB_TIME_MAX;
        return;
    }
    r->backoff = FB_BACKOFF_EXPONENTIAL;
    r->base_us = scn__preset_us_or(p, v, "initialDelay", 128 * FB_US_PER_MS);
    r->delay_us_max = scn__preset_us_or(p, v, "maxDelay", 30 * FB_US_PER_S);
    r->multiplier = 2; /* the generators other than the decorrelated one ignore exponent */
    int gen = g ? g->word : 0;
    if (gen == 0) {
        r->jitter = FB_JITTER_DECORRELATED_V2;
        r->multiplier = scn__preset_num_or(p, v, "exponent", 2);
    } else if (gen == 2 || gen == 3) {
        r->jitter = gen == 2 ? FB_JITTER_FULL : FB_JITTER_EQUAL;
        r->resolution_us = FB_US_PER_MS; /* Math.floor of milliseconds, of the delay alone */
        r->resolution_delay_only = FB_ON;
    }
}

static int cockatiel_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                           sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    (void)msg;
    (void)msglen;
    fb_retry_config *r = &L->retry;
    const sim_param_value *n = scn__preset_given(p, v, "maxAttempts");
    uint32_t retries = n ? (uint32_t)n->num : FB_RETRY_ATTEMPTS_MAX - 1;
    r->attempts = retries == 0 ? 1 : 0;
    r->retries = retries;
    cockatiel_backoff(p, v, r);
    scn__preset_no_retry_after(r);
    r->retry_rejected = FB_ON; /* handleAll handles BrokenCircuitError too */
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_CONSECUTIVE;
    b.consecutive_failures = (uint32_t)scn__preset_num_or(p, v, "consecutive", 5);
    b.trip_compare = FB_CMP_REACH;
    b.evaluate = FB_EVAL_ON_FAILURE;
    scn__preset_trial_calls(&b, scn__preset_us_or(p, v, "halfOpenAfter", 10 * FB_US_PER_S),
                            FB_CMP_REACH, 1, FB_PROBES_PER_PERIOD);
    /* a call admitted while closed is judged by breaker.success()/failure() whatever the state
     * at its result; a trial's result only in its own half-open period */
    b.late_results = FB_LATE_RUN;
    /* the signal given to execute() goes to the call, which rejects when it is aborted:
     * handleAll makes that a failure (cockatiel checks the signal only for a call that waited
     * for a half-open verdict) */
    b.cancelled_as = FB_EFFECT_FAILURE;
    scn__preset_breaker_layer(L, &b, true);
    return FB_OK;
}

static const char *const cockatiel_backoff_words[] = {"ExponentialBackoff", "ConstantBackoff", NULL,
                                                      "ConstantBackoff"};
#define COCKATIEL_EXP (1u << FB_BACKOFF_EXPONENTIAL)
/* ExponentialBackoff's generator by fb_jitter (cockatiel_backoff) */
static const char *const cockatiel_generator_words[] = {"noJitterGenerator",
                                                        "fullJitterGenerator",
                                                        "halfJitterGenerator",
                                                        NULL,
                                                        NULL,
                                                        NULL,
                                                        NULL,
                                                        NULL,
                                                        NULL,
                                                        "decorrelatedJitterGenerator"};
static const char *const cockatiel_unbounded[] = {"Infinity"};

/* clang-format off */
static const sim_vocab_param cockatiel_words[] = {
    {"consecutive", SIM_VF_CONSECUTIVE, SIM_PK_COUNT, 0, NULL},
    {"halfOpenAfter", SIM_VF_OPEN_US, SIM_PK_MILLIS, 0, NULL},
    {"maxAttempts", SIM_VF_RETRIES, SIM_PK_COUNT, 0, cockatiel_unbounded},
    {"backoff", SIM_VF_BACKOFF, SIM_PK_WORD, 0, cockatiel_backoff_words},
    {"interval", SIM_VF_BASE_US, SIM_PK_MILLIS, 1u << FB_BACKOFF_CONSTANT, NULL},
    {"initialDelay", SIM_VF_BASE_US, SIM_PK_MILLIS, COCKATIEL_EXP, NULL},
    {"maxDelay", SIM_VF_DELAY_MAX_US, SIM_PK_MILLIS, COCKATIEL_EXP, NULL},
    {"generator", SIM_VF_JITTER, SIM_PK_WORD, COCKATIEL_EXP, cockatiel_generator_words},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

static const sim_vocab cockatiel_vocab = {
    "cockatiel circuitBreaker (ConsecutiveBreaker)",
    "cockatiel retry",
    "cockatiel",
    {"CircuitState.Closed", "CircuitState.Open", "CircuitState.HalfOpen"},
    cockatiel_words,
};

const sim_preset scn_preset_cockatiel = {
    "cockatiel",
    "cockatiel (npm)",
    "4.0.0",
    "src/Policy.ts (retry, circuitBreaker, handleAll), src/RetryPolicy.ts, "
    "src/CircuitBreakerPolicy.ts, src/breaker/ConsecutiveBreaker.ts, "
    "src/backoff/ConstantBackoff.ts, ExponentialBackoff.ts, ExponentialBackoffGenerators.ts",
    "cockatiel's retry wrapped around its circuitBreaker, option names as in its calls",
    cockatiel_params,
    cockatiel_rules,
    cockatiel_not_modelled,
    cockatiel_apply,
    "recorded from cockatiel 4.0.0: 3033 sequences, 0 differences, 2 not modelled "
    "(tests/conformance/cockatiel-4.0.0)",
    &cockatiel_vocab,
};
