/*
 * preset_resilience.c - the resilience libraries: resilience4j (Java), Polly
 * (.NET), gobreaker (Go), pybreaker and tenacity (Python), opossum and
 * cockatiel (Node).
 *
 * Each preset follows its library's source at the version it names; the
 * differences between them are core options (docs/breaker.md and
 * docs/retry.md, "Library semantics"). In HTTP terms, every library here
 * wraps a call that raises on an error answer (RestTemplate, WebClient's
 * retrieve(), EnsureSuccessStatusCode, raise_for_status, a rejected fetch),
 * so by default every error answer, 4xx and 429 included, is a failure to
 * the breaker and retried by the retry; a timeout is a failure too.
 */
#include "sim/presetint.h"

#include "sim/loadint.h" /* ld_suggest, for did-you-mean in keyword arguments */

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- shared by the presets below ---- */

/* The outcomes an error answer can have: everything but success and cancellation. */
#define EVERY_FAILURE                                                                              \
    ((1u << FB_OUT_TRANSIENT) | (1u << FB_OUT_RATE_LIMITED) | (1u << FB_OUT_TIMEOUT) |             \
     (1u << FB_OUT_PERMANENT) | (1u << FB_OUT_POLICY) | (1u << FB_OUT_CONTEXT_LENGTH) |            \
     (1u << FB_OUT_REJECTED))

/* Every error answer is a breaker failure (the call raised). */
static void every_error_trips(sim_layer *L) {
    L->classify.rate_limit_trips = FB_ON;
    L->classify.permanent_trips = FB_ON;
    L->classify.timeout_trips = FB_ON;
}

/* The retry retries what raised: every error answer. */
static void retry_every_error(sim_layer *L) {
    L->has_retry_on = true;
    L->retry_on_outcomes = EVERY_FAILURE;
    L->retry_on_count = 0;
}

/* The same breaker for every provider the layer calls. */
static void breaker_everywhere(sim_layer *L, const fb_breaker_config *bc) {
    for (uint32_t i = 0; i < SIM_PROVIDERS_MAX; i++) {
        L->per_provider[i].has_breaker = true;
        L->per_provider[i].breaker = *bc;
    }
}

/*
 * The open period and the half-open rule the breakers below share: open for open_us, then
 * `permits` trial calls (per half-open period, or at once), any failure re-opens, no lease
 * (a trial that never reports holds half-open), Retry-After not read.
 */
static void trial_calls(fb_breaker_config *b, fb_time_us open_us, fb_compare deadline,
                        uint32_t permits, fb_probe_limit limit) {
    b->open_us = open_us;
    b->open_us_max = open_us;
    b->open_deadline = deadline;
    b->half_open_permits = permits;
    b->probe_limit = limit;
    b->probe_verdict = FB_VERDICT_FIRST_FAILURE;
    b->probe_lease_us = FB_TIME_MAX;
    b->honor_hint = FB_OFF;
}

/* The layer: breaker b on every provider; every error answer trips it (and is retried). */
static void breaker_layer(sim_layer *L, const fb_breaker_config *b, bool retried) {
    breaker_everywhere(L, b);
    every_error_trips(L);
    if (retried)
        retry_every_error(L);
    else
        L->retry.attempts = 1;
}

/* A library that does not read Retry-After, and waits as its backoff says. */
static void no_retry_after(fb_retry_config *r) {
    r->retry_after = FB_RETRY_AFTER_IGNORE;
}

static double num_or(const sim_preset *p, const sim_param_value *v, const char *name, double d) {
    const sim_param_value *g = preset_given(p, v, name);
    return g ? g->num : d;
}

static fb_time_us us_or(const sim_preset *p, const sim_param_value *v, const char *name,
                        fb_time_us d) {
    const sim_param_value *g = preset_given(p, v, name);
    return g ? g->us : d;
}

static bool flag(const sim_preset *p, const sim_param_value *v, const char *name) {
    return num_or(p, v, name, 0) != 0;
}

/* A threshold given in percent as the breaker's rate in (0, 1]; 0 % trips on any failure. */
static double rate_of_percent(double pct) {
    return pct <= 0 ? 1e-12 : pct / 100.0;
}

/* ---- resilience4j ---- */

static const char *const r4j_window_types[] = {"COUNT_BASED", "TIME_BASED", NULL};

static const sim_param r4j_params[] = {
    {"failureRateThreshold", SIM_PK_PERCENT, 0.000001, 100, "50",
     "CircuitBreaker: open when this percentage of the calls in the window failed", NULL},
    {"slowCallRateThreshold", SIM_PK_PERCENT, 0.000001, 100, "100",
     "CircuitBreaker: open when this percentage of the calls in the window were slow", NULL},
    {"slowCallDurationThreshold", SIM_PK_DURATION, 0.000001, 1e9, "60s",
     "CircuitBreaker: a call longer than this is slow", NULL},
    {"permittedNumberOfCallsInHalfOpenState", SIM_PK_COUNT, 1, FB_BREAKER_PROBES_MAX, "10",
     "CircuitBreaker: calls admitted in one half-open period, then judged by rate", NULL},
    {"maxWaitDurationInHalfOpenState", SIM_PK_DURATION, 0, 1e9, "0",
     "CircuitBreaker: longest stay in half-open before opening again (0: no limit)", NULL},
    {"slidingWindowType", SIM_PK_WORD, 0, 0, "COUNT_BASED",
     "CircuitBreaker: the last slidingWindowSize calls, or the last slidingWindowSize seconds",
     r4j_window_types},
    {"slidingWindowSize", SIM_PK_COUNT, 1, FB_BREAKER_CALLS_MAX, "100",
     "CircuitBreaker: calls (COUNT_BASED) or seconds (TIME_BASED, at most 128) in the window",
     NULL},
    {"minimumNumberOfCalls", SIM_PK_COUNT, 1, 100000000, "100",
     "CircuitBreaker: calls in the window before a rate is judged", NULL},
    {"waitDurationInOpenState", SIM_PK_DURATION, 0.001, 1e9, "60s",
     "CircuitBreaker: how long it stays open", NULL},
    {"automaticTransitionFromOpenToHalfOpenEnabled", SIM_PK_BOOL, 0, 0, "false",
     "CircuitBreaker: half-open at the deadline by a timer instead of at the first call after it",
     NULL},
    {"maxAttempts", SIM_PK_COUNT, 1, FB_RETRY_ATTEMPTS_MAX, "3", "Retry: calls including the first",
     NULL},
    {"waitDuration", SIM_PK_DURATION, 0, 1e9, "500ms",
     "Retry: the wait before a retry (the base of the exponential)", NULL},
    {"enableExponentialBackoff", SIM_PK_BOOL, 0, 0, "false",
     "Retry: waitDuration * exponentialBackoffMultiplier^(n-1) (only with waitDuration set)", NULL},
    {"exponentialBackoffMultiplier", SIM_PK_NUMBER, 1, 100, "1.5",
     "Retry: the exponential's growth", NULL},
    {"exponentialMaxWaitDuration", SIM_PK_DURATION, 0.001, 1e9, "none",
     "Retry: cap on the exponential wait", NULL},
    {"enableRandomizedWait", SIM_PK_BOOL, 0, 0, "false",
     "Retry: each wait drawn from [d - f d, d + f d] (only with waitDuration set)", NULL},
    {"randomizedWaitFactor", SIM_PK_NUMBER, 0, 0.999999, "0.5", "Retry: f of the randomized wait",
     NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const r4j_rules[] = {
    "decorated Retry(CircuitBreaker(call)), Spring Boot's default aspect order: every attempt "
    "asks the breaker",
    "maxAttempts counts the first call: the default 3 makes 3 calls (RetryImpl: "
    "numOfAttempts >= maxAttempts gives up)",
    "every error answer (4xx and 429 included) is an exception: recorded as a failure and "
    "retried (recordExceptions and retryExceptions empty: every exception)",
    "COUNT_BASED: the last slidingWindowSize calls; TIME_BASED: the last slidingWindowSize "
    "seconds in 1 s buckets on epoch seconds; minimumNumberOfCalls calls in the window before "
    "a rate counts (COUNT_BASED: at most slidingWindowSize)",
    "opens when failures >= failureRateThreshold % or calls slower than "
    "slowCallDurationThreshold (duration > threshold) >= slowCallRateThreshold %, judged after "
    "every recorded call",
    "waitDurationInOpenState: half-open at the first call after the deadline (isAfter: > ), or "
    "at the deadline with automaticTransitionFromOpenToHalfOpenEnabled",
    "half-open admits permittedNumberOfCallsInHalfOpenState calls in all (default 10), then "
    "judges their rate with minimum min(minimumNumberOfCalls, permitted): closes or opens; the "
    "rest are rejected",
    "maxWaitDurationInHalfOpenState > 0: half-open that long at most, then open again",
    "a result that arrives after a transition is counted by the state it arrives in; a "
    "cancelled call releases its permit and counts nothing",
    "waitDuration 500 ms constant; enableExponentialBackoff: waitDuration * m^(n-1) in whole "
    "milliseconds, each step truncated ((long)(x * m)), capped at exponentialMaxWaitDuration; "
    "enableRandomizedWait: (d - f d) + random * (2 f d + 1) ms, truncated, at least 1 ms; both: "
    "the exponential randomized, then capped",
    "Spring Boot applies enableExponentialBackoff and enableRandomizedWait only when "
    "waitDuration is given (CommonRetryConfigurationProperties.configureRetryIntervalFunction); "
    "without it the wait is 500 ms constant",
    "Retry-After is not read",
    "a call the breaker rejects (CallNotPermittedException) is an exception like any other: "
    "Retry counts it as an attempt and retries it after the wait, so a request can wait "
    "through an open breaker into half-open",
    NULL,
};

static const char *const r4j_not_modelled[] = {
    "recordExceptions and ignoreExceptions (CircuitBreaker), retryExceptions and "
    "ignoreExceptions (Retry): every error answer counts and is retried",
    "with automaticTransitionFromOpenToHalfOpenEnabled, resilience4j's timer goes half-open at "
    "the deadline; fusebox goes half-open at the first call at or after it and stamps the "
    "transition then, so maxWaitDurationInHalfOpenState runs from that call",
    "TIME_BASED windows longer than 128 s (fusebox's most buckets), COUNT_BASED windows above "
    "1024 calls and more than 16 half-open calls",
    "TimeLimiter, Bulkhead and RateLimiter; the aspect orders (circuitBreakerAspectOrder, "
    "retryAspectOrder): the preset is Retry outside CircuitBreaker",
    "an instance with only one of Retry and CircuitBreaker: the preset has both (maxAttempts: 1 "
    "leaves the breaker alone)",
    "the float arithmetic of the failure rate (failedCalls * 100.0f / totalCalls)",
    NULL,
};

/* resilience4j's Spring Boot Retry: the interval function configureRetryIntervalFunction picks. */
static void r4j_retry(const sim_preset *p, const sim_param_value *v, fb_retry_config *r) {
    const sim_param_value *wait = preset_given(p, v, "waitDuration");
    fb_time_us base = wait ? wait->us : 500 * FB_US_PER_MS;
    bool expo = wait && flag(p, v, "enableExponentialBackoff");
    bool random = wait && flag(p, v, "enableRandomizedWait");
    double f = num_or(p, v, "randomizedWaitFactor", 0.5);
    r->attempts = (uint32_t)num_or(p, v, "maxAttempts", 3);
    r->retry_rejected = FB_ON;       /* CallNotPermittedException is an exception like any other */
    r->resolution_us = FB_US_PER_MS; /* IntervalFunction works in whole milliseconds */
    r->rounding = FB_ROUND_DOWN;
    r->delay_us_max = FB_TIME_MAX;
    r->base_us = base;
    r->backoff = base < FB_US_PER_MS ? FB_BACKOFF_NONE : FB_BACKOFF_CONSTANT;
    if (expo && base >= FB_US_PER_MS) {
        r->backoff = FB_BACKOFF_EXPONENTIAL;
        r->multiplier = num_or(p, v, "exponentialBackoffMultiplier", 1.5);
        r->delay_us_max = us_or(p, v, "exponentialMaxWaitDuration", FB_TIME_MAX);
        r->cap_order = FB_CAP_AFTER_JITTER; /* randomized first, then min(..., max) */
    }
    if (random && f > 0 && base >= FB_US_PER_MS) {
        r->jitter = FB_JITTER_RANDOMIZED;
        r->jitter_fraction = f;
    }
    no_retry_after(r);
}

static int r4j_breaker(const sim_preset *p, const sim_param_value *v, fb_breaker_config *b,
                       char *msg, size_t msglen) {
    const sim_param_value *type = preset_given(p, v, "slidingWindowType");
    uint32_t size = (uint32_t)num_or(p, v, "slidingWindowSize", 100);
    memset(b, 0, sizeof *b);
    if (type && type->word == 1) {
        if (size > FB_BREAKER_BUCKETS_MAX) {
            snprintf(msg, msglen,
                     "a TIME_BASED slidingWindowSize is at most %d seconds in fusebox (got %u)",
                     FB_BREAKER_BUCKETS_MAX, size);
            return FB_EINVAL;
        }
        b->mode = FB_BREAKER_MODE_TIME_WINDOW;
        b->window_us = (fb_time_us)size * FB_US_PER_S;
        b->window_buckets = size; /* one per epoch second (SlidingTimeWindowMetrics) */
        b->bucket_anchor = FB_BUCKETS_EPOCH;
    } else {
        b->mode = FB_BREAKER_MODE_COUNT_WINDOW;
        b->window_calls = size;
    }
    b->minimum_calls = (uint32_t)num_or(p, v, "minimumNumberOfCalls", 100);
    b->failure_rate = num_or(p, v, "failureRateThreshold", 50) / 100.0;
    b->slow_rate = num_or(p, v, "slowCallRateThreshold", 100) / 100.0;
    b->slow_us = us_or(p, v, "slowCallDurationThreshold", 60 * FB_US_PER_S);
    b->half_open_permits = (uint32_t)num_or(p, v, "permittedNumberOfCallsInHalfOpenState", 10);
    b->probe_limit = FB_PROBES_PER_PERIOD;
    b->probe_verdict = FB_VERDICT_RATE;
    b->probe_lease_us = FB_TIME_MAX; /* a probe that never reports holds its permit */
    b->half_open_max_us = us_or(p, v, "maxWaitDurationInHalfOpenState", 0);
    b->open_us = us_or(p, v, "waitDurationInOpenState", 60 * FB_US_PER_S);
    b->open_us_max = b->open_us;
    b->honor_hint = FB_OFF;
    b->open_deadline =
        flag(p, v, "automaticTransitionFromOpenToHalfOpenEnabled") ? FB_CMP_REACH : FB_CMP_PASS;
    b->trip_compare = FB_CMP_REACH;
    b->evaluate = FB_EVAL_EVERY_RECORD;
    b->late_results = FB_LATE_COUNT;
    b->cancelled_as = FB_EFFECT_IGNORE;
    return FB_OK;
}

static int r4j_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                     sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    fb_breaker_config b;
    int rc = r4j_breaker(p, v, &b, msg, msglen);
    if (rc != FB_OK) return rc;
    r4j_retry(p, v, &L->retry);
    breaker_layer(L, &b, true);
    return FB_OK;
}

const sim_preset sim_preset_resilience4j = {
    "resilience4j",
    "resilience4j (Maven)",
    "2.4.0 (commit f1c3be8e)",
    "resilience4j-circuitbreaker/.../CircuitBreakerConfig.java, "
    "internal/CircuitBreakerStateMachine.java, internal/CircuitBreakerMetrics.java; "
    "resilience4j-retry/.../internal/RetryImpl.java; resilience4j-core/.../IntervalFunction.java, "
    "core/metrics/SlidingTimeWindowMetrics.java; resilience4j-framework-common/.../"
    "CommonRetryConfigurationProperties.java",
    "resilience4j CircuitBreaker and Retry, keys as in a Spring Boot application.yml instance",
    r4j_params,
    r4j_rules,
    r4j_not_modelled,
    r4j_apply,
};

/* ---- Polly v8 ---- */

static const char *const polly_backoffs[] = {"Constant", "Linear", "Exponential", NULL};

static const sim_param polly_params[] = {
    {"MaxRetryAttempts", SIM_PK_COUNT, 1, FB_RETRY_ATTEMPTS_MAX - 1, "3",
     "Retry: retries after the first call", NULL},
    {"Delay", SIM_PK_TIMESPAN, 0, 86400, "00:00:02", "Retry: the base delay", NULL},
    {"BackoffType", SIM_PK_WORD, 0, 0, "Constant", "Retry: how the delay grows", polly_backoffs},
    {"UseJitter", SIM_PK_BOOL, 0, 0, "false", "Retry: randomize the delays", NULL},
    {"MaxDelay", SIM_PK_TIMESPAN, 0, 86400, "none", "Retry: cap on a delay", NULL},
    {"FailureRatio", SIM_PK_FRACTION, 0, 1, "0.1",
     "CircuitBreaker: open when this fraction of the sampled calls failed", NULL},
    {"MinimumThroughput", SIM_PK_COUNT, 2, 100000000, "100",
     "CircuitBreaker: calls in the sampling window before the ratio counts", NULL},
    {"SamplingDuration", SIM_PK_TIMESPAN, 0.5, 86400, "00:00:30",
     "CircuitBreaker: the window, sampled in 10 parts", NULL},
    {"BreakDuration", SIM_PK_TIMESPAN, 0.5, 86400, "00:00:05",
     "CircuitBreaker: how long it stays open", NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const polly_rules[] = {
    "a pipeline built AddRetry(...).AddCircuitBreaker(...): the retry outside, every attempt "
    "asks the breaker",
    "MaxRetryAttempts counts retries: the default 3 makes 4 calls",
    "ShouldHandle's default handles every exception but OperationCanceledException: with a "
    "call that throws on an error answer (EnsureSuccessStatusCode), every error answer is "
    "retried and is a breaker failure; a cancelled call is an unhandled outcome, a success to "
    "the breaker",
    "the delay before retry n (attempt k = n - 1): Constant Delay, Linear (k + 1) * Delay, "
    "Exponential 2^k * Delay; UseJitter: Constant and Linear d + U(-0.25 d, 0.25 d), "
    "Exponential DecorrelatedJitterBackoffV2; then capped at MaxDelay",
    "Retry-After is not read (that takes a DelayGenerator)",
    "a call the breaker rejects (BrokenCircuitException) is handled by the retry like any "
    "exception: it counts as an attempt and is retried after the delay",
    "the breaker samples SamplingDuration in 10 windows, each starting at the first call that "
    "finds the newest one SamplingDuration / 10 old; it opens when, after a failure, "
    "throughput >= MinimumThroughput and failures / throughput >= FailureRatio",
    "BreakDuration: half-open at the first call with now >= the deadline, which is that "
    "period's one trial call; its success closes, its failure opens again",
    "a result that arrives after a transition acts on the state it arrives in (a success in "
    "half-open closes, a failure opens)",
    NULL,
};

static const char *const polly_not_modelled[] = {
    "ShouldHandle predicates other than the default, DelayGenerator, BreakDurationGenerator, "
    "ManualControl, the timeout and rate-limiter strategies",
    "Polly's 100 ns ticks (fusebox counts microseconds); a SamplingDuration under 200 ms (one "
    "window) is below Polly's minimum of 500 ms anyway",
    NULL,
};

static fb_time_us polly_retry(const sim_preset *p, const sim_param_value *v, fb_retry_config *r) {
    const sim_param_value *kind = preset_given(p, v, "BackoffType");
    int k = kind ? kind->word : 0;
    r->attempts = 0;
    r->retries = (uint32_t)num_or(p, v, "MaxRetryAttempts", 3);
    r->retry_rejected = FB_ON; /* BrokenCircuitException is handled like any exception */
    r->base_us = us_or(p, v, "Delay", 2 * FB_US_PER_S);
    r->backoff = k == 0 ? FB_BACKOFF_CONSTANT : k == 1 ? FB_BACKOFF_LINEAR : FB_BACKOFF_EXPONENTIAL;
    if (r->base_us == 0) r->backoff = FB_BACKOFF_NONE;
    r->multiplier = 2;
    r->cap_order = FB_CAP_AFTER_JITTER;
    r->delay_us_max = us_or(p, v, "MaxDelay", FB_TIME_MAX);
    if (r->delay_us_max == 0) r->backoff = FB_BACKOFF_NONE; /* MaxDelay zero caps all at zero */
    if (flag(p, v, "UseJitter"))
        r->jitter = k == 2 ? FB_JITTER_DECORRELATED_V2 : FB_JITTER_PROPORTIONAL;
    r->jitter_fraction = 0.25;
    no_retry_after(r);
    return r->base_us;
}

static int polly_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                       sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    polly_retry(p, v, &L->retry);
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_TIME_WINDOW;
    b.window_us = us_or(p, v, "SamplingDuration", 30 * FB_US_PER_S);
    b.window_buckets = 10; /* RollingHealthMetrics: 10 windows */
    if (b.window_us % 10 != 0) {
        snprintf(msg, msglen, "SamplingDuration must be a whole number of 10 microseconds");
        return FB_EINVAL;
    }
    b.bucket_anchor = FB_BUCKETS_FIRST_EVENT;
    double ratio = num_or(p, v, "FailureRatio", 0.1);
    b.failure_rate = ratio <= 0 ? 1e-12 : ratio;
    b.minimum_calls = (uint32_t)num_or(p, v, "MinimumThroughput", 100);
    b.evaluate = FB_EVAL_ON_FAILURE;
    b.trip_compare = FB_CMP_REACH;
    trial_calls(&b, us_or(p, v, "BreakDuration", 5 * FB_US_PER_S), FB_CMP_REACH, 1,
                FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_COUNT;
    b.cancelled_as = FB_EFFECT_SUCCESS;
    breaker_layer(L, &b, true);
    return FB_OK;
}

const sim_preset sim_preset_polly = {
    "polly",
    "Polly.Core (NuGet)",
    "8.7.0 (commit a824c6b9)",
    "src/Polly.Core/Retry/RetryStrategyOptions.TResult.cs, RetryHelper.cs, RetryConstants.cs; "
    "src/Polly.Core/CircuitBreaker/CircuitBreakerStrategyOptions.TResult.cs, "
    "CircuitBreakerConstants.cs, Controller/CircuitStateController.cs, "
    "Controller/AdvancedCircuitBehavior.cs, Health/RollingHealthMetrics.cs",
    "a Polly v8 pipeline of Retry and CircuitBreaker, option names as in the options classes",
    polly_params,
    polly_rules,
    polly_not_modelled,
    polly_apply,
};

/* ---- gobreaker ---- */

static const sim_param gobreaker_params[] = {
    {"MaxRequests", SIM_PK_COUNT, 0, FB_BREAKER_PROBES_MAX, "0",
     "requests admitted in half-open, and successes in a row that close it (0 means 1)", NULL},
    {"Interval", SIM_PK_GO_DURATION, 0, 1e9, "0",
     "the cyclic period of the closed state that clears the counts (0: never)", NULL},
    {"BucketPeriod", SIM_PK_GO_DURATION, 0, 1e9, "0",
     "a rolling window of Interval in buckets of this length (0: a fixed window)", NULL},
    {"Timeout", SIM_PK_GO_DURATION, 0, 1e9, "60s", "the open period (0 means 60 s)", NULL},
    {"ConsecutiveFailures", SIM_PK_COUNT, 0, 1000000, "5",
     "the default ReadyToTrip: open when counts.ConsecutiveFailures > this", NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const gobreaker_rules[] = {
    "the default ReadyToTrip opens when counts.ConsecutiveFailures > 5: on the 6th failure in a "
    "row; it is asked only after a failure in the closed state",
    "every error the request function returns is a failure (IsSuccessful: err == nil): in HTTP "
    "terms every error answer, and a cancelled context",
    "Timeout: half-open at the first request after the deadline (expiry.Before(now): > )",
    "half-open admits MaxRequests requests in all (0 means 1); MaxRequests successes in a row "
    "close it, any failure opens it again",
    "every state change starts a new generation: a result of a request admitted before it is "
    "dropped",
    "Interval > 0: in the closed state, the first request more than Interval after the state "
    "(or the last interval) began clears the counts, the consecutive failures too, as a new "
    "generation",
    "no retries (pair it with an SDK layer or a retry layer)",
    NULL,
};

static const char *const gobreaker_not_modelled[] = {
    "BucketPeriod > 0 with Interval > 0 (the counts rolled in buckets): rejected rather than "
    "approximated (BucketPeriod without Interval changes nothing in gobreaker)",
    "ReadyToTrip, IsSuccessful and IsExcluded functions other than the defaults",
    "the two-step and distributed breakers",
    NULL,
};

static int gobreaker_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                           sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    if (us_or(p, v, "BucketPeriod", 0) > 0 && us_or(p, v, "Interval", 0) > 0) {
        snprintf(msg, msglen,
                 "BucketPeriod (a rolling window) is not modelled; Interval alone is (fusebox "
                 "presets gobreaker)");
        return FB_EINVAL;
    }
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_CONSECUTIVE;
    uint32_t n = (uint32_t)num_or(p, v, "ConsecutiveFailures", 5);
    b.consecutive_failures = n;
    b.trip_compare = FB_CMP_PASS; /* > n; n = 0 trips on the first failure */
    if (n == 0) {
        b.consecutive_failures = 1;
        b.trip_compare = FB_CMP_REACH;
    }
    b.evaluate = FB_EVAL_ON_FAILURE;
    b.closed_interval_us = us_or(p, v, "Interval", 0); /* a fixed window: cleared, new generation */
    fb_time_us t = us_or(p, v, "Timeout", 60 * FB_US_PER_S);
    uint32_t m = (uint32_t)num_or(p, v, "MaxRequests", 0);
    trial_calls(&b, t > 0 ? t : 60 * FB_US_PER_S, FB_CMP_PASS, m ? m : 1, FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_DROP;
    b.cancelled_as = FB_EFFECT_FAILURE;
    breaker_layer(L, &b, false);
    return FB_OK;
}

const sim_preset sim_preset_gobreaker = {
    "gobreaker",
    "sony/gobreaker v2 (Go)",
    "v2.4.0 (commit 0ae90251)",
    "v2/gobreaker.go (NewCircuitBreaker, defaultReadyToTrip, beforeRequest, afterRequest, "
    "currentState), v2/counter.go",
    "sony/gobreaker's CircuitBreaker, Settings field names",
    gobreaker_params,
    gobreaker_rules,
    gobreaker_not_modelled,
    gobreaker_apply,
};

/* ---- pybreaker ---- */

static const sim_param pybreaker_params[] = {
    {"fail_max", SIM_PK_COUNT, 1, 1000000, "5", "open when the failure counter reaches this", NULL},
    {"reset_timeout", SIM_PK_SECONDS, 0.000001, 1e9, "60", "seconds it stays open", NULL},
    {"success_threshold", SIM_PK_COUNT, 1, FB_BREAKER_PROBES_MAX, "1",
     "half-open successes that close it", NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const pybreaker_rules[] = {
    "counter >= fail_max opens: the default 5 opens on the 5th failure in a row (a success "
    "resets the counter)",
    "every exception is a failure (is_system_error, no exclude list): in HTTP terms every error "
    "answer, and a cancellation (a BaseException)",
    "reset_timeout: a call at now >= opened_at + reset_timeout goes half-open and is made",
    "half-open: any failure opens again; success_threshold successes close",
    "no retries (pair it with an SDK layer or a retry layer)",
    NULL,
};

static const char *const pybreaker_not_modelled[] = {
    "the lock that serialises every call through one breaker (fusebox lets success_threshold "
    "probes run at once in half-open, and any number of calls in closed)",
    "exclude (an excluded exception counts as a success), listeners, state storages (Redis)",
    NULL,
};

static int pybreaker_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                           sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    (void)msg;
    (void)msglen;
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_CONSECUTIVE;
    b.consecutive_failures = (uint32_t)num_or(p, v, "fail_max", 5);
    b.trip_compare = FB_CMP_REACH;
    b.evaluate = FB_EVAL_ON_FAILURE;
    trial_calls(&b, us_or(p, v, "reset_timeout", 60 * FB_US_PER_S), FB_CMP_REACH,
                (uint32_t)num_or(p, v, "success_threshold", 1), FB_PROBES_CONCURRENT);
    b.late_results = FB_LATE_COUNT;
    b.cancelled_as = FB_EFFECT_FAILURE;
    breaker_layer(L, &b, false);
    return FB_OK;
}

const sim_preset sim_preset_pybreaker = {
    "pybreaker",
    "pybreaker (PyPI)",
    "1.4.1 (commit faf54de6)",
    "src/pybreaker/__init__.py (CircuitBreaker.__init__, CircuitBreakerState._handle_error, "
    "CircuitClosedState.on_failure, CircuitOpenState.before_call, CircuitHalfOpenState)",
    "pybreaker's CircuitBreaker, keyword arguments as in its constructor",
    pybreaker_params,
    pybreaker_rules,
    pybreaker_not_modelled,
    pybreaker_apply,
};

/* ---- opossum ---- */

static const sim_param opossum_params[] = {
    {"timeout", SIM_PK_JSON, 0, 0, "10000",
     "milliseconds a call may take before it is a failure (false or 0: no timeout)", NULL},
    {"errorThresholdPercentage", SIM_PK_PERCENT, 0, 100, "50",
     "open when, after a failure, more than this percentage of the window's calls failed", NULL},
    {"resetTimeout", SIM_PK_MILLIS, 1, 1e12, "30000", "milliseconds it stays open", NULL},
    {"rollingCountTimeout", SIM_PK_MILLIS, 1, 1e12, "10000",
     "milliseconds of the statistical window", NULL},
    {"rollingCountBuckets", SIM_PK_COUNT, 1, FB_BREAKER_BUCKETS_MAX, "10",
     "buckets of the window, rotated by a timer", NULL},
    {"volumeThreshold", SIM_PK_COUNT, 0, 100000000, "0", "calls in the window before it can open",
     NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
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
    "never cleared, not even when the breaker opens or closes",
    "resetTimeout: half-open by a timer at the deadline; the first call then is the trial, the "
    "rest are rejected; any success closes it, any failure opens it, whichever call it comes "
    "from",
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
    int rc = opossum_timeout(preset_given(p, v, "timeout"), &timeout_us, msg, msglen);
    if (rc != FB_OK) return rc;
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_TIME_WINDOW;
    /* Status rotates a bucket every Math.floor(rollingCountTimeout / rollingCountBuckets) ms. */
    b.window_buckets = (uint32_t)num_or(p, v, "rollingCountBuckets", 10);
    fb_time_us bucket_ms =
        us_or(p, v, "rollingCountTimeout", 10 * FB_US_PER_S) / FB_US_PER_MS / b.window_buckets;
    if (bucket_ms < 1) {
        snprintf(msg, msglen, "rollingCountTimeout / rollingCountBuckets is under 1 ms");
        return FB_EINVAL;
    }
    b.window_us = bucket_ms * FB_US_PER_MS * b.window_buckets;
    b.bucket_anchor = FB_BUCKETS_EPOCH;
    b.window_scope = FB_WINDOW_FIRES; /* fires, rejections included; never cleared */
    b.failure_rate = rate_of_percent(num_or(p, v, "errorThresholdPercentage", 50));
    b.trip_compare = FB_CMP_PASS;
    b.minimum_calls = (uint32_t)num_or(p, v, "volumeThreshold", 0);
    b.evaluate = FB_EVAL_ON_FAILURE;
    trial_calls(&b, us_or(p, v, "resetTimeout", 30 * FB_US_PER_S), FB_CMP_REACH, 1,
                FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_COUNT;
    b.cancelled_as = FB_EFFECT_FAILURE;
    breaker_layer(L, &b, false);
    L->retry.attempt_timeout_us = timeout_us;
    return FB_OK;
}

const sim_preset sim_preset_opossum = {
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
};

/* ---- cockatiel ---- */

static const char *const cockatiel_backoffs[] = {"ExponentialBackoff", "ConstantBackoff", NULL};
static const char *const cockatiel_generators[] = {"decorrelatedJitterGenerator",
                                                   "noJitterGenerator", "fullJitterGenerator",
                                                   "halfJitterGenerator", NULL};

static const sim_param cockatiel_params[] = {
    {"maxAttempts", SIM_PK_COUNT, 0, FB_RETRY_ATTEMPTS_MAX - 1, "Infinity",
     "retry: retries after the first call", NULL},
    {"backoff", SIM_PK_WORD, 0, 0, "ConstantBackoff",
     "retry: the backoff's class (retry's default is new ConstantBackoff(0))", cockatiel_backoffs},
    {"interval", SIM_PK_MILLIS, 0, 1e12, "0", "retry: ConstantBackoff(interval), milliseconds",
     NULL},
    {"initialDelay", SIM_PK_MILLIS, 0.001, 1e12, "128", "retry: ExponentialBackoff's first delay",
     NULL},
    {"maxDelay", SIM_PK_MILLIS, 0.001, 1e12, "30000", "retry: ExponentialBackoff's cap", NULL},
    {"exponent", SIM_PK_NUMBER, 1, 100, "2", "retry: ExponentialBackoff's growth", NULL},
    {"generator", SIM_PK_WORD, 0, 0, "decorrelatedJitterGenerator",
     "retry: ExponentialBackoff's jitter", cockatiel_generators},
    {"halfOpenAfter", SIM_PK_MILLIS, 1, 1e12, "10000",
     "circuitBreaker: milliseconds open before half-open (required by cockatiel: the README's "
     "10 * 1000 here)",
     NULL},
    {"consecutive", SIM_PK_COUNT, 1, 1000000, "5",
     "circuitBreaker: breaker new ConsecutiveBreaker(consecutive)", NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
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
    NULL,
};

static const char *const cockatiel_not_modelled[] = {
    "calls during the half-open trial wait for its verdict in cockatiel; fusebox rejects them",
    "a late result: cockatiel counts it with the state it was admitted in (a late failure can "
    "re-open a half-open breaker, a late success never closes it); fusebox counts it with the "
    "state it arrives in",
    "SamplingBreaker and CountBreaker, halfOpenAfter as a backoff, halfOpenSampling, "
    "handleType/handleWhen filters, timeout and bulkhead policies",
    NULL,
};

static void cockatiel_backoff(const sim_preset *p, const sim_param_value *v, fb_retry_config *r) {
    const sim_param_value *b = preset_given(p, v, "backoff");
    const sim_param_value *g = preset_given(p, v, "generator");
    r->cap_order = FB_CAP_BEFORE_JITTER;
    if (b == NULL || b->word == 1) { /* ConstantBackoff(interval) */
        r->base_us = us_or(p, v, "interval", 0);
        r->backoff = r->base_us > 0 ? FB_BACKOFF_CONSTANT : FB_BACKOFF_NONE;
        r->delay_us_max = FB_TIME_MAX;
        return;
    }
    r->backoff = FB_BACKOFF_EXPONENTIAL;
    r->base_us = us_or(p, v, "initialDelay", 128 * FB_US_PER_MS);
    r->delay_us_max = us_or(p, v, "maxDelay", 30 * FB_US_PER_S);
    r->multiplier = 2; /* the generators other than the decorrelated one ignore exponent */
    int gen = g ? g->word : 0;
    if (gen == 0) {
        r->jitter = FB_JITTER_DECORRELATED_V2;
        r->multiplier = num_or(p, v, "exponent", 2);
    } else if (gen == 2 || gen == 3) {
        r->jitter = gen == 2 ? FB_JITTER_FULL : FB_JITTER_EQUAL;
        r->resolution_us = FB_US_PER_MS; /* Math.floor of milliseconds */
    }
}

static int cockatiel_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                           sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    (void)msg;
    (void)msglen;
    fb_retry_config *r = &L->retry;
    const sim_param_value *n = preset_given(p, v, "maxAttempts");
    uint32_t retries = n ? (uint32_t)n->num : FB_RETRY_ATTEMPTS_MAX - 1;
    r->attempts = retries == 0 ? 1 : 0;
    r->retries = retries;
    cockatiel_backoff(p, v, r);
    no_retry_after(r);
    r->retry_rejected = FB_ON; /* handleAll handles BrokenCircuitError too */
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_CONSECUTIVE;
    b.consecutive_failures = (uint32_t)num_or(p, v, "consecutive", 5);
    b.trip_compare = FB_CMP_REACH;
    b.evaluate = FB_EVAL_ON_FAILURE;
    trial_calls(&b, us_or(p, v, "halfOpenAfter", 10 * FB_US_PER_S), FB_CMP_REACH, 1,
                FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_COUNT;
    b.cancelled_as = FB_EFFECT_FAILURE;
    breaker_layer(L, &b, true);
    return FB_OK;
}

const sim_preset sim_preset_cockatiel = {
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
};

/* ---- tenacity ---- */

static const char *const tenacity_exceptions[] = {"Exception",
                                                  "openai.APIError",
                                                  "openai.RateLimitError",
                                                  "openai.APITimeoutError",
                                                  "openai.InternalServerError",
                                                  NULL};

static const sim_param tenacity_params[] = {
    {"stop_after_attempt", SIM_PK_COUNT, 1, FB_RETRY_ATTEMPTS_MAX, "none",
     "stop=stop_after_attempt(n): calls including the first (none: stop_never)", NULL},
    {"wait_fixed", SIM_PK_SECONDS, 0, 1e9, "none", "wait=wait_fixed(wait): seconds", NULL},
    {"wait_exponential", SIM_PK_JSON, 0, 0, "none",
     "wait=wait_exponential(...): {\"multiplier\": 1, \"max\": none, \"exp_base\": 2}", NULL},
    {"wait_exponential_jitter", SIM_PK_JSON, 0, 0, "none",
     "wait=wait_exponential_jitter(...): {\"initial\": 1, \"max\": none, \"exp_base\": 2, "
     "\"jitter\": 1}",
     NULL},
    {"wait_random_exponential", SIM_PK_JSON, 0, 0, "none",
     "wait=wait_random_exponential(...): {\"multiplier\": 1, \"max\": none, \"exp_base\": 2}",
     NULL},
    {"retry_if_exception_type", SIM_PK_WORDS, 0, 0, "[\"Exception\"]",
     "retry=retry_if_exception_type(...): the exception classes retried, in HTTP terms",
     tenacity_exceptions},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const tenacity_rules[] = {
    "@retry(stop=..., wait=..., retry=...) around a call that raises on an error answer; the "
    "wait is a key named after the wait function, whose value is its keyword arguments (seconds)",
    "stop_after_attempt(n) counts the first call: n calls at most; without it tenacity never "
    "stops (stop_never)",
    "wait_none (the default) retries at once; wait_fixed(w) waits w s",
    "wait_exponential: max(min, min(multiplier * exp_base^(n-1), max)) s before retry n",
    "wait_exponential_jitter: min(initial * exp_base^(n-1) + uniform(0, jitter), max) s",
    "wait_random_exponential: uniform(0, min(multiplier * exp_base^(n-1), max)) s",
    "retry_if_exception_type() retries every exception: every error answer; "
    "openai.APIError is every error, openai.RateLimitError a 429, openai.APITimeoutError a "
    "timeout, openai.InternalServerError a status >= 500",
    "Retry-After is not read",
    NULL,
};

static const char *const tenacity_not_modelled[] = {
    "wait_exponential's and wait_random_exponential's min; sums and chains of waits "
    "(wait_fixed(3) + wait_random(0, 2)), wait_random, wait_incrementing",
    "stop_after_delay and other stop conditions, retry_if_result and other retry conditions, "
    "before/after hooks",
    NULL,
};

/* tenacity's keyword arguments of one wait function: each a number, named as in wait.py. */
static int kwargs(const cJSON *o, const char *fn, const char *const *names, double *vals, char *msg,
                  size_t msglen) {
    if (!cJSON_IsObject(o)) {
        snprintf(msg, msglen, "%s takes an object of its keyword arguments", fn);
        return FB_EINVAL;
    }
    for (const cJSON *it = o->child; it; it = it->next) {
        int k = -1;
        for (int i = 0; names[i] && k < 0; i++)
            if (strcmp(names[i], it->string) == 0) k = i;
        if (k < 0 && strcmp(it->string, "min") == 0 && strcmp(fn, "wait_exponential_jitter")) {
            snprintf(msg, msglen, "%s(min=...) is not modelled (fusebox presets tenacity)", fn);
            return FB_EINVAL;
        }
        if (k < 0) {
            const char *near = ld_suggest(it->string, names);
            snprintf(msg, msglen, "%s has no keyword argument '%s'%s%s%s", fn, it->string,
                     near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            return FB_EINVAL;
        }
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || it->valuedouble > 1e9) {
            snprintf(msg, msglen, "%s(%s=...) is a number >= 0", fn, it->string);
            return FB_EINVAL;
        }
        vals[k] = it->valuedouble;
    }
    return FB_OK;
}

/* The wait= given (at most one) into r. */
static int tenacity_wait(const sim_preset *p, const sim_param_value *v, fb_retry_config *r,
                         char *msg, size_t msglen) {
    static const char *const expo[] = {"multiplier", "max", "exp_base", NULL};
    static const char *const jit[] = {"initial", "max", "exp_base", "jitter", NULL};
    const char *fns[] = {"wait_fixed", "wait_exponential", "wait_exponential_jitter",
                         "wait_random_exponential"};
    int which = -1;
    for (int i = 0; i < 4; i++) {
        if (!preset_given(p, v, fns[i])) continue;
        if (which >= 0) {
            snprintf(msg, msglen, "give one wait: %s or %s", fns[which], fns[i]);
            return FB_EINVAL;
        }
        which = i;
    }
    r->backoff = FB_BACKOFF_NONE;
    r->delay_us_max = FB_TIME_MAX;
    if (which == 0) {
        r->base_us = us_or(p, v, "wait_fixed", 0);
        r->backoff = r->base_us > 0 ? FB_BACKOFF_CONSTANT : FB_BACKOFF_NONE;
    }
    if (which <= 0) return FB_OK;
    double a[4] = {1, 1e9, 2, 1}; /* multiplier/initial, max (MAX_WAIT), exp_base, jitter */
    const cJSON *o = preset_given(p, v, fns[which])->json;
    int rc = kwargs(o, fns[which], which == 2 ? jit : expo, a, msg, msglen);
    if (rc != FB_OK) return rc;
    if (a[2] < 1) {
        snprintf(msg, msglen, "%s(exp_base=%g): fusebox models exp_base >= 1", fns[which], a[2]);
        return FB_EINVAL;
    }
    r->backoff = FB_BACKOFF_EXPONENTIAL;
    r->base_us = (fb_time_us)llround(a[0] * 1e6);
    r->multiplier = a[2];
    r->delay_us_max = a[1] >= 1e9 ? FB_TIME_MAX : (fb_time_us)llround(a[1] * 1e6);
    if (r->base_us == 0 || r->delay_us_max == 0) r->backoff = FB_BACKOFF_NONE;
    if (which == 2) {
        r->jitter = a[3] > 0 ? FB_JITTER_ADDITIVE : FB_JITTER_NONE;
        r->jitter_us = (fb_time_us)llround(a[3] * 1e6);
        r->cap_order = FB_CAP_AFTER_JITTER;
    } else if (which == 3) {
        r->jitter = FB_JITTER_FULL;
        r->cap_order = FB_CAP_BEFORE_JITTER;
    }
    return FB_OK;
}

/* retry_if_exception_type(...) in HTTP terms: the outcomes and statuses it retries. */
static void tenacity_retry_on(const sim_param_value *given, sim_layer *L) {
    L->has_retry_on = true;
    L->retry_on_outcomes = 0;
    L->retry_on_count = 0;
    if (given == NULL) {
        L->retry_on_outcomes = EVERY_FAILURE;
        return;
    }
    for (uint32_t i = 0; i < given->list_count; i++) {
        int w = given->list[i];
        if (w <= 1) L->retry_on_outcomes |= EVERY_FAILURE;
        if (w == 2) L->retry_on_outcomes |= 1u << FB_OUT_RATE_LIMITED;
        if (w == 3) L->retry_on_outcomes |= 1u << FB_OUT_TIMEOUT;
        if (w != 4) continue;
        static const int server[] = {500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511, 529};
        for (size_t k = 0; k < sizeof server / sizeof server[0]; k++) {
            bool seen = false;
            for (uint32_t j = 0; j < L->retry_on_count; j++)
                seen |= L->retry_on_statuses[j] == server[k];
            if (!seen && L->retry_on_count < SIM_RETRY_ON_MAX)
                L->retry_on_statuses[L->retry_on_count++] = server[k];
        }
    }
}

static int tenacity_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                          sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    fb_retry_config *r = &L->retry;
    r->attempts = (uint32_t)num_or(p, v, "stop_after_attempt", FB_RETRY_ATTEMPTS_MAX);
    int rc = tenacity_wait(p, v, r, msg, msglen);
    if (rc != FB_OK) return rc;
    no_retry_after(r);
    tenacity_retry_on(preset_given(p, v, "retry_if_exception_type"), L);
    return FB_OK;
}

const sim_preset sim_preset_tenacity = {
    "tenacity",
    "tenacity (PyPI, Debian)",
    "8.2.1",
    "tenacity/__init__.py (Retrying, BaseRetrying defaults), tenacity/stop.py, tenacity/wait.py, "
    "tenacity/retry.py",
    "tenacity's @retry, its stop, wait and retry arguments",
    tenacity_params,
    tenacity_rules,
    tenacity_not_modelled,
    tenacity_apply,
};
