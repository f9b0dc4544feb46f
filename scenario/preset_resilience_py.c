/*
 * preset_resilience_py.c - the Python resilience libraries: pybreaker (a
 * breaker) and tenacity (a retry). Like every library in preset_resilience.c
 * they wrap a call that raises on an error answer (raise_for_status), so by
 * default every error answer is a failure and is retried.
 */
#include "scenario/presetint.h"

#include "scenario/loadint.h" /* scn__suggest, for did-you-mean in keyword arguments */

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- pybreaker ---- */

static const char *const pybreaker_modes[] = {"call", "calling", NULL};

static const sim_param pybreaker_params[] = {
    PRESET_PARAM("fail_max", SIM_PK_COUNT, .lo = 1, .hi = 1000000, .def_doc = "5",
                 .doc = "open when the failure counter reaches this"),
    PRESET_PARAM("reset_timeout", SIM_PK_SECONDS, .lo = 0.000001, .hi = 1e9, .def_doc = "60",
                 .doc = "seconds it stays open"),
    PRESET_PARAM("success_threshold", SIM_PK_COUNT, .lo = 1, .hi = FB_BREAKER_PROBES_MAX,
                 .def_doc = "1", .doc = "half-open successes that close it"),
    PRESET_PARAM(
        "mode", SIM_PK_WORD, .names = pybreaker_modes, .def_doc = "call",
        .doc =
            "how the code calls through the breaker: \"call\" (breaker.call(func) or the "
            "decorator: "
            "the call runs under the breaker's lock) or \"calling\" (with breaker.calling(): the "
            "block runs after the lock is released, so calls overlap)"),
    {0},
};

static const char *const pybreaker_rules[] = {
    "counter >= fail_max opens: the default 5 opens on the 5th failure in a row (a success "
    "resets the counter)",
    "every exception is a failure (is_system_error, no exclude list): in HTTP terms every error "
    "answer, and a cancellation (a BaseException)",
    "reset_timeout: a call at now >= opened_at + reset_timeout goes half-open and is made",
    "half-open: any failure opens again; success_threshold successes close",
    "mode \"call\": call() holds the breaker's lock for the whole call, so its calls never "
    "overlap and each result is judged in the state its call was made in",
    "mode \"calling\": the with block runs after calling() released the lock (generator_call), "
    "so calls overlap: half-open admits every caller, and each result is judged by the state "
    "its call was admitted in, whatever the state now: a failure of a call admitted closed "
    "raises the shared failure counter and opens (or re-opens from now) at fail_max, even "
    "in half-open or open; a failure of a half-open call opens (or re-opens); a success of a "
    "half-open call counts towards success_threshold and closes even from open; every success "
    "resets the failure counter",
    "no retries (pair it with an SDK layer or a retry layer)",
    NULL,
};

static const char *const pybreaker_not_modelled[] = {
    "mode \"call\": the lock itself; in a simulation calls through one breaker overlap, as in "
    "mode \"calling\", but are judged by the \"call\" rules (success_threshold probes at once "
    "in half-open, results of an earlier state counted by the current one); the recorded "
    "sequences (tests/conformance/pybreaker-1.4.1) have no overlapping call() calls, which the "
    "lock makes impossible",
    "exclude (an excluded exception counts as a success), listeners, state storages (Redis), "
    "throw_new_error_on_trip (which error the caller sees, not the breaker's state)",
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
    b.consecutive_failures = (uint32_t)scn__preset_num_or(p, v, "fail_max", 5);
    b.trip_compare = FB_CMP_REACH;
    b.evaluate = FB_EVAL_ON_FAILURE;
    scn__preset_trial_calls(
        &b, scn__preset_us_or(p, v, "reset_timeout", 60 * FB_US_PER_S), FB_CMP_REACH,
        (uint32_t)scn__preset_num_or(p, v, "success_threshold", 1), FB_PROBES_CONCURRENT);
    b.late_results = FB_LATE_COUNT;
    const sim_param_value *mode = scn__preset_given(p, v, "mode");
    if (mode && mode->word == 1) { /* calling(): outside the lock */
        b.late_results = FB_LATE_AS_ADMITTED;
        b.probe_limit = FB_PROBES_NONE;
    }
    b.cancelled_as = FB_EFFECT_FAILURE;
    scn__preset_breaker_layer(L, &b, false);
    return FB_OK;
}

/* clang-format off */
static const sim_vocab_param pybreaker_words[] = {
    {"fail_max", SIM_VF_CONSECUTIVE, SIM_PK_COUNT, 0, NULL},
    {"reset_timeout", SIM_VF_OPEN_US, SIM_PK_SECONDS, 0, NULL},
    {"success_threshold", SIM_VF_PERMITS, SIM_PK_COUNT, 0, NULL},
    {"mode", SIM_VF_AS_ADMITTED, SIM_PK_WORD, 0, pybreaker_modes},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

/* CircuitBreaker.current_state: STATE_CLOSED, STATE_OPEN, STATE_HALF_OPEN */
static const sim_vocab pybreaker_vocab = {
    "pybreaker CircuitBreaker", NULL, "pybreaker", {"closed", "open", "half-open"}, pybreaker_words,
};

const sim_preset scn_preset_pybreaker = {
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
    "recorded from pybreaker 1.4.1: 4021 sequences, 0 differences "
    "(tests/conformance/pybreaker-1.4.1)",
    &pybreaker_vocab,
};

/* ---- tenacity ---- */

static const char *const tenacity_exceptions[] = {"Exception",
                                                  "openai.APIError",
                                                  "openai.RateLimitError",
                                                  "openai.APITimeoutError",
                                                  "openai.InternalServerError",
                                                  NULL};

static const sim_param tenacity_params[] = {
    PRESET_PARAM("stop_after_attempt", SIM_PK_COUNT, .lo = 1, .hi = FB_RETRY_ATTEMPTS_MAX,
                 .def_doc = "none",
                 .doc = "stop=stop_after_attempt(n): calls including the first (none: stop_never)"),
    PRESET_PARAM("wait_fixed", SIM_PK_SECONDS, .hi = 1e9, .def_doc = "none",
                 .doc = "wait=wait_fixed(wait): seconds"),
    PRESET_PARAM(
        "wait_exponential", SIM_PK_JSON, .def_doc = "none",
        .doc = "wait=wait_exponential(...): {\"multiplier\": 1, \"max\": none, \"exp_base\": 2}"),
    PRESET_PARAM(
        "wait_exponential_jitter", SIM_PK_JSON, .def_doc = "none",
        .doc =
            "wait=wait_exponential_jitter(...): {\"initial\": 1, \"max\": none, \"exp_base\": 2, "
            "\"jitter\": 1}"),
    PRESET_PARAM("wait_random_exponential", SIM_PK_JSON, .def_doc = "none",
                 .doc = "wait=wait_random_exponential(...): {\"multiplier\": 1, \"max\": none, "
                        "\"exp_base\": 2}"),
    PRESET_PARAM(
        "retry_if_exception_type", SIM_PK_WORDS, .names = tenacity_exceptions,
        .def_doc = "[\"Exception\"]",
        .doc = "retry=retry_if_exception_type(...): the exception classes retried, in HTTP terms"),
    {0},
};

static const char *const tenacity_rules[] = {
    "@retry(stop=..., wait=..., retry=...) around a call that raises on an error answer; the "
    "wait is a key named after the wait function, whose value is its keyword arguments (seconds)",
    "stop_after_attempt(n) counts the first call: n calls at most; without it tenacity never "
    "stops (stop_never)",
    "wait_none (the default) retries at once; wait_fixed(w) waits w s",
    "wait_exponential: max(min, min(multiplier * exp_base^(n-1), max)) s before retry n",
    "wait_exponential_jitter: min(initial * exp_base^(n-1) + uniform(0, jitter), max) s (with "
    "jitter=0 too the number is drawn)",
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
    "wait_exponential_jitter(initial=0) waits uniform(0, jitter) in tenacity; fusebox waits "
    "nothing (a backoff starting at 0 means none); wait_random_exponential(multiplier=0) and "
    "wait_exponential_jitter(max=0) wait 0 in both, but tenacity draws a random number for "
    "each wait and fusebox does not",
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
            const char *near = scn__suggest(it->string, names);
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
        if (!scn__preset_given(p, v, fns[i])) continue;
        if (which >= 0) {
            snprintf(msg, msglen, "give one wait: %s or %s", fns[which], fns[i]);
            return FB_EINVAL;
        }
        which = i;
    }
    r->backoff = FB_BACKOFF_NONE;
    r->delay_us_max = FB_TIME_MAX;
    if (which == 0) {
        r->base_us = scn__preset_us_or(p, v, "wait_fixed", 0);
        r->backoff = r->base_us > 0 ? FB_BACKOFF_CONSTANT : FB_BACKOFF_NONE;
    }
    if (which <= 0) return FB_OK;
    double a[4] = {1, 1e9, 2, 1}; /* multiplier/initial, max (MAX_WAIT), exp_base, jitter */
    const cJSON *o = scn__preset_given(p, v, fns[which])->json;
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
        /* jitter=0 still draws uniform(0, 0): FB_TIME_NONE draws and adds nothing */
        r->jitter = FB_JITTER_ADDITIVE;
        r->jitter_us = (fb_time_us)llround(a[3] * 1e6);
        if (r->jitter_us == 0) r->jitter_us = FB_TIME_NONE;
        r->cap_order = FB_CAP_AFTER_JITTER;
    } else if (which == 3) {
        r->jitter = FB_JITTER_FULL;
        r->cap_order = FB_CAP_BEFORE_JITTER_EXACT; /* uniform(0, min(...)) in float seconds */
    }
    return FB_OK;
}

/* retry_if_exception_type(...) in HTTP terms: the outcomes and statuses it retries. */
static void tenacity_retry_on(const sim_param_value *given, sim_layer *L) {
    L->has_retry_on = true;
    L->retry_on_outcomes = 0;
    L->retry_on_count = 0;
    if (given == NULL) {
        L->retry_on_outcomes = PRESET_EVERY_FAILURE;
        return;
    }
    for (uint32_t i = 0; i < given->list_count; i++) {
        int w = given->list[i];
        if (w <= 1) L->retry_on_outcomes |= PRESET_EVERY_FAILURE;
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
    r->attempts = (uint32_t)scn__preset_num_or(p, v, "stop_after_attempt", FB_RETRY_ATTEMPTS_MAX);
    int rc = tenacity_wait(p, v, r, msg, msglen);
    if (rc != FB_OK) return rc;
    scn__preset_no_retry_after(r);
    tenacity_retry_on(scn__preset_given(p, v, "retry_if_exception_type"), L);
    return FB_OK;
}

/* the wait function by the jitter it draws (tenacity_wait) */
static const char *const tenacity_waits[] = {"wait_exponential",
                                             "wait_random_exponential",
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL,
                                             "wait_exponential_jitter",
                                             NULL};
#define TENACITY_EXP (1u << FB_BACKOFF_EXPONENTIAL)
static const char *const tenacity_unbounded[] = {"none (stop_never)"};

/* clang-format off */
static const sim_vocab_param tenacity_words[] = {
    {"stop_after_attempt", SIM_VF_ATTEMPTS, SIM_PK_COUNT, 0, tenacity_unbounded},
    {"wait_fixed", SIM_VF_BASE_US, SIM_PK_SECONDS, 1u << FB_BACKOFF_CONSTANT, NULL},
    {"wait", SIM_VF_JITTER, SIM_PK_WORD, TENACITY_EXP, tenacity_waits},
    {"max", SIM_VF_DELAY_MAX_US, SIM_PK_SECONDS, TENACITY_EXP, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

static const sim_vocab tenacity_vocab = {
    NULL, "tenacity @retry", "tenacity", {NULL, NULL, NULL}, tenacity_words,
};

const sim_preset scn_preset_tenacity = {
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
    "recorded from tenacity 8.2.1: 2020 sequences, 0 differences, 2 not modelled "
    "(tests/conformance/tenacity-8.2.1)",
    &tenacity_vocab,
};
