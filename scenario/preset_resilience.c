/*
 * preset_resilience.c - the resilience libraries of the JVM, .NET and Go:
 * resilience4j (Java), Polly (.NET) and gobreaker (Go) (the Python ones are
 * in preset_resilience_py.c, the Node ones in preset_resilience_js.c; what
 * they share is in preset.c).
 *
 * Each preset follows its library's source at the version it names; the
 * differences between them are core options (docs/breaker.md and
 * docs/retry.md, "Library semantics"). In HTTP terms, every library here
 * wraps a call that raises on an error answer (RestTemplate, WebClient's
 * retrieve(), EnsureSuccessStatusCode, raise_for_status, a rejected fetch),
 * so by default every error answer, 4xx and 429 included, is a failure to
 * the breaker and retried by the retry; a timeout is a failure too.
 */
#include "scenario/presetint.h"

#include "scenario/loadint.h" /* scn__suggest, for did-you-mean in keyword arguments */

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- resilience4j ---- */

static const char *const r4j_window_types[] = {"COUNT_BASED", "TIME_BASED", NULL};

static const sim_param r4j_params[] = {
    PRESET_PARAM("failureRateThreshold", SIM_PK_PERCENT, .lo = 0.000001, .hi = 100, .def_doc = "50",
                 .doc =
                     "CircuitBreaker: open when this percentage of the calls in the window failed"),
    PRESET_PARAM(
        "slowCallRateThreshold", SIM_PK_PERCENT, .lo = 0.000001, .hi = 100, .def_doc = "100",
        .doc = "CircuitBreaker: open when this percentage of the calls in the window were slow"),
    PRESET_PARAM("slowCallDurationThreshold", SIM_PK_DURATION, .lo = 0.000001, .hi = 1e9,
                 .def_doc = "60s", .doc = "CircuitBreaker: a call longer than this is slow"),
    PRESET_PARAM("permittedNumberOfCallsInHalfOpenState", SIM_PK_COUNT, .lo = 1,
                 .hi = FB_BREAKER_PROBES_MAX, .def_doc = "10",
                 .doc =
                     "CircuitBreaker: calls admitted in one half-open period, then judged by rate"),
    PRESET_PARAM(
        "maxWaitDurationInHalfOpenState", SIM_PK_DURATION, .hi = 1e9, .def_doc = "0",
        .doc = "CircuitBreaker: longest stay in half-open before opening again (0: no limit)"),
    PRESET_PARAM("slidingWindowType", SIM_PK_WORD, .names = r4j_window_types,
                 .def_doc = "COUNT_BASED",
                 .doc = "CircuitBreaker: the last slidingWindowSize calls, or the last "
                        "slidingWindowSize seconds"),
    PRESET_PARAM("slidingWindowSize", SIM_PK_COUNT, .lo = 1, .hi = FB_BREAKER_CALLS_MAX,
                 .def_doc = "100",
                 .doc = "CircuitBreaker: calls (COUNT_BASED) or seconds (TIME_BASED, at most 128) "
                        "in the window"),
    PRESET_PARAM("minimumNumberOfCalls", SIM_PK_COUNT, .lo = 1, .hi = 100000000, .def_doc = "100",
                 .doc = "CircuitBreaker: calls in the window before a rate is judged"),
    PRESET_PARAM("waitDurationInOpenState", SIM_PK_DURATION, .lo = 0.001, .hi = 1e9,
                 .def_doc = "60s", .doc = "CircuitBreaker: how long it stays open"),
    PRESET_PARAM("automaticTransitionFromOpenToHalfOpenEnabled", SIM_PK_BOOL, .def_doc = "false",
                 .doc = "CircuitBreaker: half-open at the deadline by a timer instead of at the "
                        "first call after it"),
    PRESET_PARAM("maxAttempts", SIM_PK_COUNT, .lo = 1, .hi = FB_RETRY_ATTEMPTS_MAX, .def_doc = "3",
                 .doc = "Retry: calls including the first"),
    PRESET_PARAM("waitDuration", SIM_PK_DURATION, .hi = 1e9, .def_doc = "500ms",
                 .doc = "Retry: the wait before a retry (the base of the exponential)"),
    PRESET_PARAM("enableExponentialBackoff", SIM_PK_BOOL, .def_doc = "false",
                 .doc = "Retry: waitDuration * exponentialBackoffMultiplier^(n-1) (only with "
                        "waitDuration set)"),
    PRESET_PARAM("exponentialBackoffMultiplier", SIM_PK_NUMBER, .lo = 1, .hi = 100,
                 .def_doc = "1.5", .doc = "Retry: the exponential's growth"),
    PRESET_PARAM("exponentialMaxWaitDuration", SIM_PK_DURATION, .lo = 0.001, .hi = 1e9,
                 .def_doc = "none", .doc = "Retry: cap on the exponential wait"),
    PRESET_PARAM("recordExceptions", SIM_PK_WORDS, .def_doc = "every exception",
                 .doc = "CircuitBreaker: only these (and their subclasses) are failures, any other "
                        "is a success"),
    PRESET_PARAM("ignoreExceptions", SIM_PK_WORDS, .def_doc = "none",
                 .doc = "CircuitBreaker: these count as neither (the call's permit is released)"),
    PRESET_PARAM("retryExceptions", SIM_PK_WORDS, .def_doc = "every exception",
                 .doc = "Retry: only these are retried"),
    PRESET_PARAM("retryIgnoreExceptions", SIM_PK_WORDS, .def_doc = "none",
                 .doc = "Retry: these are not retried (the Retry's ignoreExceptions)"),
    PRESET_PARAM("enableRandomizedWait", SIM_PK_BOOL, .def_doc = "false",
                 .doc =
                     "Retry: each wait drawn from [d - f d, d + f d] (only with waitDuration set)"),
    PRESET_PARAM("randomizedWaitFactor", SIM_PK_NUMBER, .hi = 0.999999, .def_doc = "0.5",
                 .doc = "Retry: f of the randomized wait"),
    {0},
};

static const char *const r4j_rules[] = {
    "how it was recorded: resilience4j 2.4.0's own code run here with a fake clock and a "
    "hand-run scheduler (CircuitBreaker 29 edge cases and 2000 random sequences of overlapping "
    "calls, a fifth of their results cancels, Retry 14 and 2000, each randomized wait as the "
    "range it draws from, the exception lists with Spring's exception classes)",
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
    "every recorded call and only then: a call is never refused in the closed state, even when "
    "buckets that expired since would raise the rate (ClosedState.tryAcquirePermission)",
    "waitDurationInOpenState: half-open at the first call after the deadline (isAfter: > ); "
    "with automaticTransitionFromOpenToHalfOpenEnabled a scheduled task makes it at the "
    "deadline itself, calls or not",
    "half-open admits permittedNumberOfCallsInHalfOpenState calls in all (default 10), then "
    "judges their rate once min(minimumNumberOfCalls, permitted) results are in, "
    "minimumNumberOfCalls as given even above slidingWindowSize "
    "(CircuitBreakerMetrics.forHalfOpen): closes or opens; the rest are rejected",
    "maxWaitDurationInHalfOpenState >= 1 ms: a scheduled task opens the breaker that long after "
    "it entered half-open, and waitDurationInOpenState counts from then",
    "a result that arrives after a transition is counted by the state it arrives in (in the "
    "open state it is lost); a cancelled call (releasePermission()) counts nothing and, in "
    "half-open, gives a permit back, whichever state admitted it",
    "recordExceptions / ignoreExceptions (CircuitBreaker) and retryExceptions / ignoreExceptions "
    "(Retry, here retryIgnoreExceptions), Java class names as RestTemplate throws them: "
    "HttpClientErrorException every 4xx answer (429, 408, 409 included; TooManyRequests only "
    "429), HttpServerErrorException every 5xx, ResourceAccessException (and IOException, "
    "SocketTimeoutException, TimeoutException, ConnectException) a timeout or connection error, "
    "CallNotPermittedException a call the breaker refused; a class covers its subclasses. The "
    "breaker ignores what ignoreExceptions names, records as a failure what recordExceptions "
    "names (all, when not given), and counts anything else as a success; the Retry retries what "
    "retryExceptions names (all, when not given) unless its ignoreExceptions names it",
    "waitDuration 500 ms constant; enableExponentialBackoff: waitDuration * m^(n-1) in whole "
    "milliseconds, each step truncated ((long)(x * m)), capped at exponentialMaxWaitDuration; "
    "enableRandomizedWait: (d - f d) + random * (2 f d + 1) ms, truncated, at least 1 ms; both: "
    "the exponential randomized, then capped",
    "Spring Boot applies enableExponentialBackoff and enableRandomizedWait only when "
    "waitDuration is given (CommonRetryConfigurationProperties.configureRetryIntervalFunction); "
    "without it the wait is 500 ms constant. With enableExponentialBackoff it reads "
    "exponentialMaxWaitDuration only with exponentialBackoffMultiplier given (and, randomized, "
    "randomizedWaitFactor too), and randomizedWaitFactor only with the multiplier given; the "
    "others take IntervalFunction's defaults (1.5, 0.5, no cap). A waitDuration under 1 ms "
    "with either is an error (IntervalFunction refuses it)",
    "Retry-After is not read",
    "a call the breaker rejects (CallNotPermittedException) is an exception like any other: "
    "Retry counts it as an attempt and retries it after the wait, so a request can wait "
    "through an open breaker into half-open",
    NULL,
};

static const char *const r4j_not_modelled[] = {
    "exception classes other than those listed under recordExceptions (an error names the ones "
    "fusebox knows); the classes are matched as a RestTemplate call throws them: a 4xx answer "
    "HttpClientErrorException (TooManyRequests for 429), a 5xx HttpServerErrorException, a "
    "timeout or a connection error ResourceAccessException; IOException and its subclasses, "
    "and TimeoutException, as a client that throws them itself (java.net.http.HttpClient, "
    "OkHttp; RestTemplate wraps them, so there they match nothing)",
    "recordFailurePredicate, ignoreExceptionPredicate, retryExceptionPredicate, "
    "resultPredicate, recordResultPredicate: code, not configuration",
    "the CircuitBreaker's own exponential and randomized open period "
    "(enableExponentialBackoff, exponentialBackoffMultiplier, "
    "exponentialMaxWaitDurationInOpenState, enableRandomizedWait, randomizedWaitFactor under "
    "resilience4j.circuitbreaker): waitDurationInOpenState stays constant",
    "getState() makes no lazy transition in resilience4j; fusebox's state read (the driver's "
    "state line) makes OPEN -> HALF_OPEN at the first read after the deadline",
    "a cancelled call is decorateFuture's: releasePermission(), counted nowhere; through "
    "decorateCompletionStage a cancelled stage completes with CancellationException, which "
    "onError records as a failure unless ignoreExceptions names it",
    "releasePermission() from more than 16 calls at once in half-open (fusebox's most "
    "half-open slots)",
    "TIME_BASED windows longer than 128 s (fusebox's most buckets), COUNT_BASED windows above "
    "1024 calls and more than 16 half-open calls",
    "TimeLimiter, Bulkhead and RateLimiter; the aspect orders (circuitBreakerAspectOrder, "
    "retryAspectOrder): the preset is Retry outside CircuitBreaker",
    "an instance with only one of Retry and CircuitBreaker: the preset has both (maxAttempts: 1 "
    "leaves the breaker alone)",
    "the float arithmetic of the failure rate (failedCalls * 100.0f / totalCalls): the same "
    "decisions for whole-number thresholds, maybe not for fractional ones",
    "the randomized wait's draws themselves (Math.random()): fusebox draws its own, from the "
    "same range",
    "transitionToStateAfterWaitDuration CLOSED, initialState, the slow-call and failure rates "
    "of the metrics-only and disabled states, slidingWindowSynchronizationStrategy LOCK_FREE "
    "(its TIME_BASED window reads the system clock)",
    NULL,
};

/*
 * The exceptions fusebox can place, as a call through RestTemplate (or a client that throws
 * them itself) raises them for each kind of failure. A class matches its subclasses too
 * (resilience4j's isAssignableFrom), so a class is the kinds of all of its subclasses.
 */
enum {
    R4J_4XX = 1,      /* a 4xx answer other than 429 (408 and 409 included) */
    R4J_429 = 2,      /* 429 */
    R4J_5XX = 4,      /* a 5xx answer */
    R4J_TIMEOUT = 8,  /* the attempt timed out */
    R4J_CONNECT = 16, /* connection refused, reset, or another transport error */
    R4J_REJECTED = 32 /* the breaker refused the call (CallNotPermittedException) */
};
#define R4J_HTTP (R4J_4XX | R4J_429 | R4J_5XX)
#define R4J_TRANSPORT (R4J_TIMEOUT | R4J_CONNECT)

static const struct {
    const char *name;
    int kinds;
} r4j_exceptions[] = {
    {"java.lang.Throwable", R4J_HTTP | R4J_TRANSPORT | R4J_REJECTED},
    {"java.lang.Exception", R4J_HTTP | R4J_TRANSPORT | R4J_REJECTED},
    {"java.lang.RuntimeException", R4J_HTTP | R4J_TRANSPORT | R4J_REJECTED},
    {"org.springframework.web.client.RestClientException", R4J_HTTP | R4J_TRANSPORT},
    {"org.springframework.web.client.RestClientResponseException", R4J_HTTP},
    {"org.springframework.web.client.HttpStatusCodeException", R4J_HTTP},
    {"org.springframework.web.client.HttpClientErrorException", R4J_4XX | R4J_429},
    {"org.springframework.web.client.HttpClientErrorException$TooManyRequests", R4J_429},
    {"org.springframework.web.client.HttpServerErrorException", R4J_5XX},
    {"org.springframework.web.client.ResourceAccessException", R4J_TRANSPORT},
    {"org.springframework.web.reactive.function.client.WebClientResponseException", R4J_HTTP},
    {"org.springframework.web.reactive.function.client.WebClientRequestException", R4J_TRANSPORT},
    {"java.io.IOException", R4J_TRANSPORT},
    {"java.net.SocketTimeoutException", R4J_TIMEOUT},
    {"java.net.http.HttpTimeoutException", R4J_TIMEOUT},
    {"java.util.concurrent.TimeoutException", R4J_TIMEOUT},
    {"java.net.ConnectException", R4J_CONNECT},
    {"io.github.resilience4j.circuitbreaker.CallNotPermittedException", R4J_REJECTED},
};
#define R4J_EXCEPTIONS (sizeof r4j_exceptions / sizeof r4j_exceptions[0])

/*
 * name is the class: its binary name (A$B), its canonical name (a.b.A.B), or the end of that
 * after a dot (A.B, B).
 */
static bool names_class(const char *name, const char *full) {
    char canon[160];
    snprintf(canon, sizeof canon, "%s", full);
    for (char *c = canon; *c; c++)
        if (*c == '$') *c = '.';
    if (strcmp(name, full) == 0 || strcmp(name, canon) == 0) return true;
    size_t n = strlen(name), m = strlen(canon);
    return n > 0 && n < m && canon[m - n - 1] == '.' && strcmp(canon + m - n, name) == 0;
}

int scn_r4j_exception_kinds(const char *name) {
    for (size_t i = 0; i < R4J_EXCEPTIONS; i++)
        if (names_class(name, r4j_exceptions[i].name)) return r4j_exceptions[i].kinds;
    return -1;
}

size_t scn_r4j_exception_names(char *buf, size_t len) {
    size_t n = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; i < R4J_EXCEPTIONS && n < len; i++) {
        /* the class's own name, a nested one after its outer class's (A.B) */
        const char *full = r4j_exceptions[i].name, *s = full, *dollar = strchr(full, '$');
        for (const char *c = full; *c && c != dollar; c++)
            if (*c == '.') s = c + 1;
        char name[96];
        snprintf(name, sizeof name, "%s", s);
        char *d = strchr(name, '$');
        if (d) *d = '.';
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", name);
    }
    return n;
}

/* The kinds the classes of list `name` cover (-1: a class fusebox cannot place, named in msg). */
static int r4j_kinds_of(const sim_preset *p, const sim_param_value *v, const char *name, char *msg,
                        size_t msglen) {
    const sim_param_value *g = scn__preset_given(p, v, name);
    const cJSON *list = g ? g->json : NULL;
    int kinds = 0;
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next) {
        int k = cJSON_IsString(e) ? scn_r4j_exception_kinds(e->valuestring) : -1;
        if (k < 0) {
            char known[1024];
            scn_r4j_exception_names(known, sizeof known);
            snprintf(msg, msglen, "%s: fusebox cannot place '%s'; it knows %s", name,
                     cJSON_IsString(e) ? e->valuestring : "?", known);
            return -1;
        }
        kinds |= k;
    }
    return kinds;
}

/*
 * recordExceptions / ignoreExceptions and retryExceptions / retryIgnoreExceptions as the
 * layer's rules, one per kind of failure (CircuitBreakerStateMachine.handleThrowable: ignored
 * first, then recorded as a failure, else a success; RetryConfig: retried when listed (or
 * none listed) and not ignored).
 */
static int r4j_exception_rules(const sim_preset *p, const sim_param_value *v, sim_layer *L,
                               char *msg, size_t msglen) {
    bool rec_set = scn__preset_given(p, v, "recordExceptions") != NULL;
    bool ret_set = scn__preset_given(p, v, "retryExceptions") != NULL;
    bool ign_set = scn__preset_given(p, v, "ignoreExceptions") != NULL;
    bool rig_set = scn__preset_given(p, v, "retryIgnoreExceptions") != NULL;
    if (!rec_set && !ret_set && !ign_set && !rig_set) return FB_OK;
    int rec = r4j_kinds_of(p, v, "recordExceptions", msg, msglen);
    int ign = rec < 0 ? -1 : r4j_kinds_of(p, v, "ignoreExceptions", msg, msglen);
    int ret = ign < 0 ? -1 : r4j_kinds_of(p, v, "retryExceptions", msg, msglen);
    int rig = ret < 0 ? -1 : r4j_kinds_of(p, v, "retryIgnoreExceptions", msg, msglen);
    if (rig < 0) return FB_EINVAL;
    if (!rec_set) rec = ~0;
    if (!ret_set) ret = ~0;
    /* first match wins: transport errors, then the statuses Spring files apart, then outcomes */
    static const struct {
        int status, outcome, transport, kind;
    } plan[] = {
        {0, -1, FB_TRANSPORT_TIMEOUT, R4J_TIMEOUT},
        {0, -1, FB_TRANSPORT_CONNECT, R4J_CONNECT},
        {0, -1, FB_TRANSPORT_RESET, R4J_CONNECT},
        {0, -1, FB_TRANSPORT_OTHER, R4J_CONNECT},
        {0, FB_OUT_TIMEOUT, -1, R4J_TIMEOUT},
        {429, -1, -1, R4J_429},
        {408, -1, -1, R4J_4XX},
        {409, -1, -1, R4J_4XX},
        {0, FB_OUT_RATE_LIMITED, -1, R4J_429},
        {0, FB_OUT_TRANSIENT, -1, R4J_5XX},
        {0, FB_OUT_PERMANENT, -1, R4J_4XX},
        {0, FB_OUT_POLICY, -1, R4J_4XX},
        {0, FB_OUT_CONTEXT_LENGTH, -1, R4J_4XX},
    };
    bool breaker = rec_set || ign_set, retry = ret_set || rig_set;
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        if (L->rule_count == SIM_STATUS_RULES_MAX) {
            snprintf(msg, msglen, "the layer has no room for the exception rules");
            return FB_ERANGE;
        }
        int k = plan[i].kind;
        sim_status_rule *r = &L->rules[L->rule_count++];
        *r = (sim_status_rule){.status = plan[i].status,
                               .outcome = (int8_t)plan[i].outcome,
                               .transport = (int8_t)plan[i].transport,
                               .retry = -1,
                               .fallback = -1,
                               .effect = -1};
        if (breaker)
            r->effect = (int8_t)((ign & k)   ? FB_EFFECT_IGNORE
                                 : (rec & k) ? FB_EFFECT_FAILURE
                                             : FB_EFFECT_SUCCESS);
        if (retry) r->retry = (int8_t)((ret & k) && !(rig & k));
    }
    if (retry) {
        L->has_retry_on = false; /* the rules say what is retried */
        if (!(ret & R4J_REJECTED) || (rig & R4J_REJECTED)) L->retry.retry_rejected = FB_OFF;
    }
    return FB_OK;
}

/* resilience4j's Spring Boot Retry: the interval function configureRetryIntervalFunction picks. */
static int r4j_retry(const sim_preset *p, const sim_param_value *v, fb_retry_config *r, char *msg,
                     size_t msglen) {
    const sim_param_value *wait = scn__preset_given(p, v, "waitDuration");
    fb_time_us base = wait ? wait->us : 500 * FB_US_PER_MS;
    bool expo = wait && scn__preset_flag(p, v, "enableExponentialBackoff");
    bool random = wait && scn__preset_flag(p, v, "enableRandomizedWait");
    /* configureExponentialBackoff*: a key is read only with the ones before it given
     * (multiplier, then factor, then the cap); the others take IntervalFunction's defaults */
    if ((expo || random) && base < FB_US_PER_MS) {
        /* IntervalFunction.checkInterval: at startup, or at the first retry with a cap */
        snprintf(msg, msglen,
                 "waitDuration under 1 ms with %s: resilience4j's IntervalFunction refuses it "
                 "(IllegalArgumentException at startup, or at the first retry with "
                 "exponentialMaxWaitDuration)",
                 expo ? "enableExponentialBackoff" : "enableRandomizedWait");
        return FB_EINVAL;
    }
    bool has_mult = scn__preset_given(p, v, "exponentialBackoffMultiplier") != NULL;
    bool has_factor = scn__preset_given(p, v, "randomizedWaitFactor") != NULL;
    bool has_max = scn__preset_given(p, v, "exponentialMaxWaitDuration") != NULL;
    bool use_factor = !expo || has_mult;
    bool use_max = has_mult && (!random || has_factor);
    double f = use_factor ? scn__preset_num_or(p, v, "randomizedWaitFactor", 0.5) : 0.5;
    r->attempts = (uint32_t)scn__preset_num_or(p, v, "maxAttempts", 3);
    r->retry_rejected = FB_ON;       /* CallNotPermittedException is an exception like any other */
    r->resolution_us = FB_US_PER_MS; /* IntervalFunction works in whole milliseconds */
    r->rounding = FB_ROUND_DOWN;
    r->delay_us_max = FB_TIME_MAX;
    r->base_us = base;
    r->backoff = base < FB_US_PER_MS ? FB_BACKOFF_NONE : FB_BACKOFF_CONSTANT;
    if (expo && base >= FB_US_PER_MS) {
        r->backoff = FB_BACKOFF_EXPONENTIAL;
        r->multiplier = scn__preset_num_or(p, v, "exponentialBackoffMultiplier", 1.5);
        r->delay_us_max = use_max && has_max
                              ? scn__preset_us_or(p, v, "exponentialMaxWaitDuration", 0)
                              : FB_TIME_MAX;
        r->cap_order = FB_CAP_AFTER_JITTER; /* randomized first, then min(..., max) */
    }
    if (random && f > 0 && base >= FB_US_PER_MS) {
        r->jitter = FB_JITTER_RANDOMIZED;
        r->jitter_fraction = f;
    }
    scn__preset_no_retry_after(r);
    return FB_OK;
}

static int r4j_breaker(const sim_preset *p, const sim_param_value *v, fb_breaker_config *b,
                       char *msg, size_t msglen) {
    const sim_param_value *type = scn__preset_given(p, v, "slidingWindowType");
    uint32_t size = (uint32_t)scn__preset_num_or(p, v, "slidingWindowSize", 100);
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
    b->minimum_calls = (uint32_t)scn__preset_num_or(p, v, "minimumNumberOfCalls", 100);
    b->failure_rate = scn__preset_num_or(p, v, "failureRateThreshold", 50) / 100.0;
    b->slow_rate = scn__preset_num_or(p, v, "slowCallRateThreshold", 100) / 100.0;
    b->slow_us = scn__preset_us_or(p, v, "slowCallDurationThreshold", 60 * FB_US_PER_S);
    b->half_open_permits =
        (uint32_t)scn__preset_num_or(p, v, "permittedNumberOfCallsInHalfOpenState", 10);
    b->probe_limit = FB_PROBES_PER_PERIOD;
    b->probe_verdict = FB_VERDICT_RATE;
    b->probe_lease_us = FB_TIME_MAX; /* a probe that never reports holds its permit */
    b->half_open_max_us = scn__preset_us_or(p, v, "maxWaitDurationInHalfOpenState", 0);
    b->open_us = scn__preset_us_or(p, v, "waitDurationInOpenState", 60 * FB_US_PER_S);
    b->open_us_max = b->open_us;
    b->honor_hint = FB_OFF;
    /* the half-open metrics' own minimum: min(minimumNumberOfCalls, permits), never capped at
     * slidingWindowSize (CircuitBreakerMetrics.forHalfOpen) */
    b->half_open_minimum = (uint32_t)scn__preset_num_or(p, v, "minimumNumberOfCalls", 100);
    /* maxWaitDurationInHalfOpenState is a scheduled task from entering HALF_OPEN */
    b->half_open_timer = FB_ON;
    /* automaticTransitionFromOpenToHalfOpenEnabled: a task at the deadline; else the first call
     * after it (clock.instant().isAfter(retryAfterWaitDuration)) */
    bool automatic = scn__preset_flag(p, v, "automaticTransitionFromOpenToHalfOpenEnabled");
    b->open_deadline = automatic ? FB_CMP_REACH : FB_CMP_PASS;
    b->open_timer = automatic ? FB_ON : FB_OFF;
    b->trip_compare = FB_CMP_REACH;
    b->evaluate = FB_EVAL_RECORD_ONLY; /* ClosedState.tryAcquirePermission looks at nothing */
    b->late_results = FB_LATE_COUNT;
    b->cancelled_as = FB_EFFECT_IGNORE;
    b->release_any = FB_ON; /* HalfOpenState.releasePermission: permits + 1, whoever calls */
    return FB_OK;
}

static int r4j_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                     sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    fb_breaker_config b;
    int rc = r4j_breaker(p, v, &b, msg, msglen);
    if (rc != FB_OK) return rc;
    rc = r4j_retry(p, v, &L->retry, msg, msglen);
    if (rc != FB_OK) return rc;
    scn__preset_breaker_layer(L, &b, true);
    return r4j_exception_rules(p, v, L, msg, msglen);
}

static const char *const r4j_window_by_mode[] = {NULL, "COUNT_BASED", "TIME_BASED", NULL};
static const char *const r4j_exponential[] = {"true", "false", "false", "false"};
/* by fb_jitter: none, or RANDOMIZED (IntervalFunction.ofRandomized) */
static const char *const r4j_randomized[] = {"false", NULL, NULL, NULL, NULL,
                                             "true",  NULL, NULL, NULL, NULL};
#define R4J_COUNT (1u << FB_BREAKER_MODE_COUNT_WINDOW)
#define R4J_TIME (1u << FB_BREAKER_MODE_TIME_WINDOW)
#define R4J_EXP (1u << FB_BACKOFF_EXPONENTIAL)

/* clang-format off */
static const sim_vocab_param r4j_words[] = {
    {"failureRateThreshold", SIM_VF_FAILURE_RATE, SIM_PK_PERCENT, 0, NULL},
    {"slidingWindowType", SIM_VF_MODE, SIM_PK_WORD, 0, r4j_window_by_mode},
    {"slidingWindowSize", SIM_VF_WINDOW_CALLS, SIM_PK_COUNT, R4J_COUNT, NULL},
    {"slidingWindowSize", SIM_VF_WINDOW_SECONDS, SIM_PK_COUNT, R4J_TIME, NULL},
    {"minimumNumberOfCalls", SIM_VF_MINIMUM_CALLS, SIM_PK_COUNT, 0, NULL},
    {"slowCallRateThreshold", SIM_VF_SLOW_RATE, SIM_PK_PERCENT, 0, NULL},
    {"slowCallDurationThreshold", SIM_VF_SLOW_US, SIM_PK_DURATION, 0, NULL},
    {"waitDurationInOpenState", SIM_VF_OPEN_US, SIM_PK_DURATION, 0, NULL},
    {"automaticTransitionFromOpenToHalfOpenEnabled", SIM_VF_OPEN_TIMER, SIM_PK_BOOL, 0, NULL},
    {"permittedNumberOfCallsInHalfOpenState", SIM_VF_PERMITS, SIM_PK_COUNT, 0, NULL},
    {"maxWaitDurationInHalfOpenState", SIM_VF_HALF_OPEN_MAX_US, SIM_PK_DURATION, 0, NULL},
    {"maxAttempts", SIM_VF_ATTEMPTS, SIM_PK_COUNT, 0, NULL},
    {"waitDuration", SIM_VF_BASE_US, SIM_PK_DURATION, 0, NULL},
    {"enableExponentialBackoff", SIM_VF_BACKOFF, SIM_PK_WORD, 0, r4j_exponential},
    {"exponentialBackoffMultiplier", SIM_VF_MULTIPLIER, SIM_PK_NUMBER, R4J_EXP, NULL},
    {"exponentialMaxWaitDuration", SIM_VF_DELAY_MAX_US, SIM_PK_DURATION, R4J_EXP, NULL},
    {"enableRandomizedWait", SIM_VF_JITTER, SIM_PK_WORD, 0, r4j_randomized},
    {"randomizedWaitFactor", SIM_VF_JITTER_FRACTION, SIM_PK_NUMBER, 0, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

static const sim_vocab r4j_vocab = {
    "resilience4j CircuitBreaker",
    "resilience4j Retry",
    "resilience4j",
    {"CLOSED", "OPEN", "HALF_OPEN"},
    r4j_words,
};
const sim_preset scn_preset_resilience4j = {
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
    "recorded from resilience4j 2.4.0: 4042 sequences, 0 differences, 1 not modelled "
    "(tests/conformance/resilience4j-2.4.0-circuitbreaker, "
    "tests/conformance/resilience4j-2.4.0-retry)",
    &r4j_vocab,
};

/* ---- Polly v8 ---- */

static const char *const polly_backoffs[] = {"Constant", "Linear", "Exponential", NULL};

static const sim_param polly_params[] = {
    PRESET_PARAM("MaxRetryAttempts", SIM_PK_COUNT, .lo = 1, .hi = FB_RETRY_ATTEMPTS_MAX - 1,
                 .def_doc = "3", .doc = "Retry: retries after the first call"),
    PRESET_PARAM("Delay", SIM_PK_TIMESPAN, .hi = 86400, .def_doc = "00:00:02",
                 .doc = "Retry: the base delay"),
    PRESET_PARAM("BackoffType", SIM_PK_WORD, .names = polly_backoffs, .def_doc = "Constant",
                 .doc = "Retry: how the delay grows"),
    PRESET_PARAM("UseJitter", SIM_PK_BOOL, .def_doc = "false",
                 .doc = "Retry: randomize the delays"),
    PRESET_PARAM("MaxDelay", SIM_PK_TIMESPAN, .hi = 86400, .def_doc = "none",
                 .doc = "Retry: cap on a delay"),
    PRESET_PARAM("FailureRatio", SIM_PK_FRACTION, .hi = 1, .def_doc = "0.1",
                 .doc = "CircuitBreaker: open when this fraction of the sampled calls failed"),
    PRESET_PARAM("MinimumThroughput", SIM_PK_COUNT, .lo = 2, .hi = 100000000, .def_doc = "100",
                 .doc = "CircuitBreaker: calls in the sampling window before the ratio counts"),
    PRESET_PARAM("SamplingDuration", SIM_PK_TIMESPAN, .lo = 0.5, .hi = 86400, .def_doc = "00:00:30",
                 .doc = "CircuitBreaker: the window, sampled in 10 parts"),
    PRESET_PARAM("BreakDuration", SIM_PK_TIMESPAN, .lo = 0.5, .hi = 86400, .def_doc = "00:00:05",
                 .doc = "CircuitBreaker: how long it stays open"),
    {0},
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
    const sim_param_value *kind = scn__preset_given(p, v, "BackoffType");
    int k = kind ? kind->word : 0;
    r->attempts = 0;
    r->retries = (uint32_t)scn__preset_num_or(p, v, "MaxRetryAttempts", 3);
    r->retry_rejected = FB_ON; /* BrokenCircuitException is handled like any exception */
    r->base_us = scn__preset_us_or(p, v, "Delay", 2 * FB_US_PER_S);
    r->backoff = k == 0 ? FB_BACKOFF_CONSTANT : k == 1 ? FB_BACKOFF_LINEAR : FB_BACKOFF_EXPONENTIAL;
    if (r->base_us == 0) r->backoff = FB_BACKOFF_NONE;
    r->multiplier = 2;
    r->cap_order = FB_CAP_AFTER_JITTER;
    r->delay_us_max = scn__preset_us_or(p, v, "MaxDelay", FB_TIME_MAX);
    if (r->delay_us_max == 0) r->backoff = FB_BACKOFF_NONE; /* MaxDelay zero caps all at zero */
    if (scn__preset_flag(p, v, "UseJitter"))
        r->jitter = k == 2 ? FB_JITTER_DECORRELATED_V2 : FB_JITTER_PROPORTIONAL;
    r->jitter_fraction = 0.25;
    scn__preset_no_retry_after(r);
    return r->base_us;
}

static int polly_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                       sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    polly_retry(p, v, &L->retry);
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_TIME_WINDOW;
    b.window_us = scn__preset_us_or(p, v, "SamplingDuration", 30 * FB_US_PER_S);
    b.window_buckets = 10; /* RollingHealthMetrics: 10 windows */
    if (b.window_us % 10 != 0) {
        snprintf(msg, msglen, "SamplingDuration must be a whole number of 10 microseconds");
        return FB_EINVAL;
    }
    b.bucket_anchor = FB_BUCKETS_FIRST_EVENT;
    double ratio = scn__preset_num_or(p, v, "FailureRatio", 0.1);
    b.failure_rate = ratio <= 0 ? 1e-12 : ratio;
    b.minimum_calls = (uint32_t)scn__preset_num_or(p, v, "MinimumThroughput", 100);
    b.evaluate = FB_EVAL_ON_FAILURE;
    b.trip_compare = FB_CMP_REACH;
    scn__preset_trial_calls(&b, scn__preset_us_or(p, v, "BreakDuration", 5 * FB_US_PER_S),
                            FB_CMP_REACH, 1, FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_COUNT;
    b.cancelled_as = FB_EFFECT_SUCCESS;
    scn__preset_breaker_layer(L, &b, true);
    return FB_OK;
}

static const char *const polly_backoff_words[] = {"Exponential", "Constant", "Linear", "Constant"};
/* by fb_jitter: none, PROPORTIONAL (Constant, Linear) or DECORRELATED_V2 (Exponential) */
static const char *const polly_jitter_words[] = {"false", NULL, NULL, NULL, "true",
                                                 NULL,    NULL, NULL, NULL, "true"};

/* clang-format off */
static const sim_vocab_param polly_words[] = {
    {"FailureRatio", SIM_VF_FAILURE_RATE, SIM_PK_FRACTION, 0, NULL},
    {"MinimumThroughput", SIM_VF_MINIMUM_CALLS, SIM_PK_COUNT, 0, NULL},
    {"SamplingDuration", SIM_VF_WINDOW_US, SIM_PK_TIMESPAN, 0, NULL},
    {"BreakDuration", SIM_VF_OPEN_US, SIM_PK_TIMESPAN, 0, NULL},
    {"MaxRetryAttempts", SIM_VF_RETRIES, SIM_PK_COUNT, 0, NULL},
    {"BackoffType", SIM_VF_BACKOFF, SIM_PK_WORD, 0, polly_backoff_words},
    {"Delay", SIM_VF_BASE_US, SIM_PK_TIMESPAN, 0, NULL},
    {"MaxDelay", SIM_VF_DELAY_MAX_US, SIM_PK_TIMESPAN, 0, NULL},
    {"UseJitter", SIM_VF_JITTER, SIM_PK_WORD, 0, polly_jitter_words},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

/* CircuitState.Isolated is the manual open state, which scenarios do not use */
static const sim_vocab polly_vocab = {
    "Polly circuit breaker strategy",
    "Polly retry strategy",
    "Polly",
    {"Closed", "Open", "HalfOpen"},
    polly_words,
};
const sim_preset scn_preset_polly = {
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
    "rules read from Polly.Core 8.7.0 source (not run here); each decision with its source "
    "and its unit test in docs/presets-polly.md",
    &polly_vocab,
};

/* ---- gobreaker ---- */

static const sim_param gobreaker_params[] = {
    PRESET_PARAM(
        "MaxRequests", SIM_PK_COUNT, .hi = FB_BREAKER_PROBES_MAX, .def_doc = "0",
        .doc = "requests admitted in half-open, and successes in a row that close it (0 means 1)"),
    PRESET_PARAM("Interval", SIM_PK_GO_DURATION, .hi = 1e9, .def_doc = "0",
                 .doc = "the cyclic period of the closed state that clears the counts (0: never)"),
    PRESET_PARAM("BucketPeriod", SIM_PK_GO_DURATION, .hi = 1e9, .def_doc = "0",
                 .doc =
                     "a rolling window of Interval in buckets of this length (0: a fixed window)"),
    PRESET_PARAM("Timeout", SIM_PK_GO_DURATION, .hi = 1e9, .def_doc = "60s",
                 .doc = "the open period (0 means 60 s)"),
    PRESET_PARAM(
        "ReadyToTrip", SIM_PK_OBJECT, .def_doc = "defaultReadyToTrip",
        .doc =
            "the Settings function asked after a failure in the closed state; fusebox takes the "
            "default's form, func(counts Counts) bool { return counts.ConsecutiveFailures > N }, "
            "written {\"ConsecutiveFailures\": N}"),
    PRESET_PARAM("ReadyToTrip.ConsecutiveFailures", SIM_PK_COUNT, .hi = 1000000, .def_doc = "5",
                 .doc =
                     "N: open when the Counts field ConsecutiveFailures (failures in a row) > N"),
    {0},
};

static const char *const gobreaker_rules[] = {
    "the default ReadyToTrip opens when counts.ConsecutiveFailures > 5: on the 6th failure in a "
    "row; it is asked only after a failure in the closed state",
    "every error the request function returns is a failure (IsSuccessful: err == nil): in HTTP "
    "terms every error answer, and a cancelled context",
    "Timeout: half-open at the first request, State() or reported result after the deadline "
    "(currentState: expiry.Before(now), > ); a result that finds it so belongs to the open "
    "state's generation and is dropped",
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
    "ReadyToTrip functions other than the default's form (Counts.ConsecutiveFailures > N); "
    "IsSuccessful and IsExcluded functions other than the defaults",
    "the two-step and distributed breakers",
    NULL,
};

static int gobreaker_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                           sim_layer *L, char *msg, size_t msglen) {
    (void)sc;
    if (scn__preset_us_or(p, v, "BucketPeriod", 0) > 0 &&
        scn__preset_us_or(p, v, "Interval", 0) > 0) {
        snprintf(msg, msglen,
                 "BucketPeriod (a rolling window) is not modelled; Interval alone is (fusebox "
                 "presets gobreaker)");
        return FB_EINVAL;
    }
    fb_breaker_config b;
    memset(&b, 0, sizeof b);
    b.mode = FB_BREAKER_MODE_CONSECUTIVE;
    uint32_t n = (uint32_t)scn__preset_num_or(p, v, "ReadyToTrip.ConsecutiveFailures", 5);
    b.consecutive_failures = n;
    b.trip_compare = FB_CMP_PASS; /* > n; n = 0 trips on the first failure */
    if (n == 0) {
        b.consecutive_failures = 1;
        b.trip_compare = FB_CMP_REACH;
    }
    b.evaluate = FB_EVAL_ON_FAILURE;
    b.closed_interval_us =
        scn__preset_us_or(p, v, "Interval", 0); /* a fixed window: cleared, new generation */
    fb_time_us t = scn__preset_us_or(p, v, "Timeout", 60 * FB_US_PER_S);
    uint32_t m = (uint32_t)scn__preset_num_or(p, v, "MaxRequests", 0);
    scn__preset_trial_calls(&b, t > 0 ? t : 60 * FB_US_PER_S, FB_CMP_PASS, m ? m : 1,
                            FB_PROBES_PER_PERIOD);
    b.late_results = FB_LATE_DROP;
    b.open_elapses_on_result = FB_ON; /* afterRequest calls currentState first */
    b.cancelled_as = FB_EFFECT_FAILURE;
    scn__preset_breaker_layer(L, &b, false);
    return FB_OK;
}

/* clang-format off */
static const sim_vocab_param gobreaker_words[] = {
    {"ReadyToTrip.ConsecutiveFailures", SIM_VF_CONSECUTIVE_ABOVE, SIM_PK_COUNT, 0, NULL},
    {"Interval", SIM_VF_CLOSED_INTERVAL_US, SIM_PK_GO_DURATION, 0, NULL},
    {"Timeout", SIM_VF_OPEN_US, SIM_PK_GO_DURATION, 0, NULL},
    {"MaxRequests", SIM_VF_PERMITS, SIM_PK_COUNT, 0, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

static const sim_vocab gobreaker_vocab = {
    "gobreaker CircuitBreaker",
    NULL,
    "gobreaker",
    {"StateClosed", "StateOpen", "StateHalfOpen"},
    gobreaker_words,
};
const sim_preset scn_preset_gobreaker = {
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
    "recorded from gobreaker v2.4.0: 2029 sequences, 0 differences, 1 not modelled "
    "(tests/conformance/gobreaker-2.4.0)",
    &gobreaker_vocab,
};
