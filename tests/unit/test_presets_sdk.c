/*
 * test_presets_sdk.c - the SDK and framework presets (scenario/preset_sdk.c)
 * against their libraries' rules as the sources state them: calls per
 * request, the wait before each retry, what a Retry-After does, what is
 * retried and what falls back; and the core and layer options they added
 * (hint_rate_limited_only, rate_limit_needs_hint, no-retry statuses,
 * fallback_on, raise_first), at exact times. The differential tests against
 * the libraries themselves are tests/diff/sdk/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/classify.h"
#include "core/retry.h"
#include "core/rng.h"
#include "sim/metrics.h"
#include "scenario/preset.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

#define HEAD                                                                                       \
    "{\"name\":\"p\",\"duration\":\"5s\",\"traffic\":[{\"class\":\"chat\","                        \
    "\"arrivals\":{\"constant\":\"2/s\"},\"prompt_tokens\":10,\"completion_tokens\":5}],"          \
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"10ms\"}},"                             \
    "{\"name\":\"b\",\"latency\":{\"ttft\":\"10ms\"}}],"

/* A scenario whose only variant is one layer: {"name": "x", PRESET_AND_PARAMS}. */
static sim_scenario *preset_scenario(const char *preset_and_params) {
    char text[4096];
    snprintf(text, sizeof text, HEAD "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",%s}]}}}",
             preset_and_params);
    return th_load(text);
}

/* The load error of such a scenario; fails the test when it loads. */
static void expect_error(const char *preset_and_params, const char *path, const char *fragment) {
    char text[4096];
    snprintf(text, sizeof text, HEAD "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",%s}]}}}",
             preset_and_params);
    sim_scenario *sc = NULL;
    sim_error err;
    if (scn_parse(text, strlen(text), "t.json", NULL, 0, NULL, &sc, &err) == FB_OK)
        fail_msg("accepted: %s", preset_and_params);
    if (strcmp(err.path, path) != 0)
        fail_msg("path '%s', wanted '%s' (%s)", err.path, path, err.msg);
    if (strstr(err.msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, fragment);
}

static const sim_layer *layer0(const sim_scenario *sc) {
    return &sc->variants[0].layers[0];
}

/* A reply with this status (0: a connection reset), as the layer classifies it. */
static fb_class class_of(const sim_layer *L, int status, int8_t should_retry) {
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &L->classify), FB_OK);
    fb_reply rep = {.status = status, .should_retry = should_retry};
    if (status == 0) rep.transport = FB_TRANSPORT_RESET;
    return scn_layer_classify(L, &cl, &rep, 0);
}

/* The decision after `failed` failed attempts, each a `status` with `hint`. */
static fb_retry_decision decide_sr(const sim_layer *L, uint32_t failed, int status, int8_t sr,
                                   fb_time_us hint, uint64_t seed) {
    fb_retry_policy pol;
    assert_int_equal(fb_retry_policy_init(&pol, &L->retry), FB_OK);
    fb_class c = class_of(L, status, sr);
    fb_rng rng;
    fb_rng_seed(&rng, seed, 1);
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_retry_decision d = {0};
    for (uint32_t k = 0; k < failed; k++) d = fb_retry_next(&pol, &st, &c, hint, NULL, &rng, 0);
    return d;
}

static fb_retry_decision decide(const sim_layer *L, uint32_t failed, int status, fb_time_us hint,
                                uint64_t seed) {
    return decide_sr(L, failed, status, -1, hint, seed);
}

/* After `failed` failures with each status of yes[], a retry; with each of no[], none. */
static void retries_only(const sim_layer *L, uint32_t failed, const int *yes, size_t ny,
                         const int *no, size_t nn) {
    for (size_t i = 0; i < ny; i++)
        if (!decide(L, failed, yes[i], FB_TIME_NONE, 1).retry) fail_msg("%d not retried", yes[i]);
    for (size_t i = 0; i < nn; i++)
        if (decide(L, failed, no[i], FB_TIME_NONE, 1).retry) fail_msg("%d retried", no[i]);
}
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The range of the wait before retry `failed` over 300 seeds. */
static void delay_range(const sim_layer *L, uint32_t failed, int status, fb_time_us hint,
                        fb_time_us *lo, fb_time_us *hi) {
    *lo = FB_TIME_MAX;
    *hi = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        fb_retry_decision d = decide(L, failed, status, hint, seed);
        assert_true(d.retry);
        if (d.delay_us < *lo) *lo = d.delay_us;
        if (d.delay_us > *hi) *hi = d.delay_us;
    }
}

/* ---- the core options ---- */

/* hint_rate_limited_only: a 503's Retry-After is not read, a 429's is. */
static void core_hint_counts_on_rate_limits_only(void **state) {
    (void)state;
    fb_retry_policy p;
    fb_retry_config cfg = {.attempts = 3,
                           .backoff = FB_BACKOFF_CONSTANT,
                           .base_us = 1 * S,
                           .retry_after = FB_RETRY_AFTER_AS_IS,
                           .hint_rate_limited_only = FB_ON};
    assert_int_equal(fb_retry_policy_init(&p, &cfg), FB_OK);
    fb_class c503 = {.outcome = FB_OUT_TRANSIENT, .retryable = true};
    fb_class c429 = {.outcome = FB_OUT_RATE_LIMITED, .retryable = true};
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    assert_int_equal(fb_retry_next(&p, &st, &c503, 7 * S, NULL, NULL, 0).delay_us, 1 * S);
    fb_retry_begin(&st, 0);
    assert_int_equal(fb_retry_next(&p, &st, &c429, 7 * S, NULL, NULL, 0).delay_us, 7 * S);
    cfg.hint_rate_limited_only = FB_DEFAULT; /* off: any failure's hint counts */
    assert_int_equal(fb_retry_policy_init(&p, &cfg), FB_OK);
    fb_retry_begin(&st, 0);
    assert_int_equal(fb_retry_next(&p, &st, &c503, 7 * S, NULL, NULL, 0).delay_us, 7 * S);
}

/* rate_limit_needs_hint: a 429 without a hint is not retried; with one (0 included) it is. */
static void core_rate_limit_without_hint_is_not_retried(void **state) {
    (void)state;
    fb_retry_policy p;
    fb_retry_config cfg = {.attempts = 3,
                           .backoff = FB_BACKOFF_CONSTANT,
                           .base_us = 1 * S,
                           .rate_limit_needs_hint = FB_ON};
    assert_int_equal(fb_retry_policy_init(&p, &cfg), FB_OK);
    fb_class c429 = {.outcome = FB_OUT_RATE_LIMITED, .retryable = true};
    fb_class c503 = {.outcome = FB_OUT_TRANSIENT, .retryable = true};
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_retry_decision d = fb_retry_next(&p, &st, &c429, FB_TIME_NONE, NULL, NULL, 0);
    assert_false(d.retry);
    assert_int_equal(d.reason, FB_GIVEUP_NOT_RETRYABLE);
    assert_int_equal(st.attempt, 1); /* counted all the same */
    fb_retry_begin(&st, 0);
    d = fb_retry_next(&p, &st, &c429, 0, NULL, NULL, 0);
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 1 * S); /* MAX: max(0, 1 s) */
    fb_retry_begin(&st, 0);
    assert_true(fb_retry_next(&p, &st, &c503, FB_TIME_NONE, NULL, NULL, 0).retry);
    cfg.ignore_zero_hint = FB_ON; /* a 0 that counts as none is none here too */
    assert_int_equal(fb_retry_policy_init(&p, &cfg), FB_OK);
    fb_retry_begin(&st, 0);
    assert_false(fb_retry_next(&p, &st, &c429, 0, NULL, NULL, 0).retry);
    cfg.rate_limit_needs_hint = 7;
    assert_int_equal(fb_retry_policy_init(&p, &cfg), FB_EINVAL);
}

/* ---- the Stainless SDKs ---- */

/* openai-node: 0 <= d <= 60 s as is (0: at once); above: the backoff; timeout in ms. */
static void openai_node_retry_after_up_to_60_seconds(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"openai-node\",\"timeout\":2500");
    const sim_layer *L = layer0(sc);
    assert_int_equal(L->retry.attempt_timeout_us, 2500 * MS);
    assert_int_equal(L->stream, FB_STREAM_FAIL);
    assert_true(decide(L, 2, 503, FB_TIME_NONE, 1).retry);
    assert_false(decide(L, 3, 503, FB_TIME_NONE, 1).retry);
    assert_int_equal(decide(L, 1, 429, 0, 1).delay_us, 0);
    assert_int_equal(decide(L, 1, 429, 60 * S, 1).delay_us, 60 * S);
    fb_time_us lo, hi;
    delay_range(L, 1, 429, 60 * S + 1, &lo, &hi); /* disregarded: the backoff */
    assert_true(lo >= 375 * MS && hi <= 500 * MS);
    delay_range(L, 2, 503, FB_TIME_NONE, &lo, &hi);
    assert_true(lo >= 750 * MS && hi <= 1 * S && hi - lo > 200 * MS);
    assert_false(decide_sr(L, 1, 503, 0, FB_TIME_NONE, 1).retry); /* x-should-retry: false */
    assert_true(decide_sr(L, 1, 400, 1, FB_TIME_NONE, 1).retry);  /* x-should-retry: true */
    assert_false(decide(L, 1, 400, FB_TIME_NONE, 1).retry);
    assert_true(decide(L, 1, 409, FB_TIME_NONE, 1).retry);
    assert_true(decide(L, 1, 0, FB_TIME_NONE, 1).retry); /* a reset */
    scn_free(sc);
    expect_error("\"preset\":\"openai-node\",\"max_retries\":1", "variants.v.layers[0].max_retries",
                 "did you mean 'maxRetries'?");
}

/* anthropic-python: 0 < d <= 60 s as is; 0 and above 60 s: the backoff; timeout in s. */
static void anthropic_python_retry_after_up_to_60_seconds(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"anthropic-python\",\"max_retries\":1");
    const sim_layer *L = layer0(sc);
    assert_int_equal(L->retry.attempt_timeout_us, 600 * S);
    assert_true(decide(L, 1, 529, FB_TIME_NONE, 1).retry);
    assert_false(decide(L, 2, 529, FB_TIME_NONE, 1).retry);
    assert_int_equal(decide(L, 1, 429, 60 * S, 1).delay_us, 60 * S);
    fb_time_us lo, hi;
    delay_range(L, 1, 429, 61 * S, &lo, &hi);
    assert_true(lo >= 375 * MS && hi <= 500 * MS);
    delay_range(L, 1, 429, 0, &lo, &hi);
    assert_true(lo >= 375 * MS && hi <= 500 * MS);
    scn_free(sc);
}

/* anthropic-node: any Retry-After, however long; 0 is at once. */
static void anthropic_node_retry_after_has_no_cap(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"anthropic-node\"");
    const sim_layer *L = layer0(sc);
    assert_int_equal(decide(L, 1, 429, 3600 * S, 1).delay_us, 3600 * S);
    assert_int_equal(decide(L, 1, 529, 0, 1).delay_us, 0);
    assert_int_equal(L->retry.attempt_timeout_us, 600 * S);
    scn_free(sc);
}

/* ---- the Vercel AI SDK ---- */

/* 2 s, 4 s, 8 s exactly; Retry-After when < 60 s or < the backoff; no x-should-retry. */
static void vercel_ai_backoff_and_retry_after(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"vercel-ai\",\"maxRetries\":7");
    const sim_layer *L = layer0(sc);
    const fb_time_us want[] = {2 * S, 4 * S, 8 * S, 16 * S, 32 * S, 64 * S, 128 * S};
    for (uint32_t n = 1; n <= 7; n++)
        assert_int_equal(decide(L, n, 503, FB_TIME_NONE, n).delay_us, want[n - 1]);
    assert_false(decide(L, 8, 503, FB_TIME_NONE, 1).retry);
    assert_int_equal(decide(L, 1, 429, 59999 * MS, 1).delay_us, 59999 * MS);
    assert_int_equal(decide(L, 1, 429, 60 * S, 1).delay_us, 2 * S);  /* not < 60 s: the backoff */
    assert_int_equal(decide(L, 6, 429, 61 * S, 1).delay_us, 61 * S); /* < the 64 s backoff */
    assert_int_equal(decide(L, 6, 429, 90 * S, 1).delay_us, 64 * S);
    assert_int_equal(decide(L, 1, 503, 0, 1).delay_us, 0);
    assert_true(decide_sr(L, 1, 503, 0, FB_TIME_NONE, 1).retry); /* x-should-retry not read */
    assert_false(decide_sr(L, 1, 400, 1, FB_TIME_NONE, 1).retry);
    assert_true(decide(L, 1, 409, FB_TIME_NONE, 1).retry);
    assert_int_equal(L->retry.deadline_us, 0);
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"vercel-ai\",\"timeout\":5000");
    assert_int_equal(layer0(sc)->retry.deadline_us, 5 * S);
    scn_free(sc);
}

/* ---- LangChain Python ---- */

/* with_retry's defaults: 3 attempts, every exception (400 too), 2^(k-1) + U(0, 1) s. */
static void langchain_python_retry_defaults(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"langchain-python-retry\"");
    const sim_layer *L = layer0(sc);
    const int all[] = {400, 401, 404, 422, 429, 503, 0};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_true(decide(L, 2, all[i], FB_TIME_NONE, 1).retry);
        assert_false(decide(L, 3, all[i], FB_TIME_NONE, 1).retry);
    }
    fb_time_us lo, hi;
    delay_range(L, 1, 503, 30 * S, &lo, &hi); /* Retry-After is not read */
    assert_true(lo >= 1 * S && hi < 2 * S && hi - lo > 900 * MS);
    delay_range(L, 2, 503, FB_TIME_NONE, &lo, &hi);
    assert_true(lo >= 2 * S && hi < 3 * S && hi - lo > 900 * MS);
    scn_free(sc);
}

/* exponential_jitter_params in seconds; max caps after the jitter; jitter 0 draws nothing. */
static void langchain_python_retry_params(void **state) {
    (void)state;
    sim_scenario *sc =
        preset_scenario("\"preset\":\"langchain-python-retry\",\"stop_after_attempt\":6,"
                        "\"exponential_jitter_params\":{\"initial\":0.5,\"max\":3,\"jitter\":0}");
    const fb_time_us want[] = {500 * MS, 1 * S, 2 * S, 3 * S, 3 * S};
    for (uint32_t n = 1; n <= 5; n++)
        assert_int_equal(decide(layer0(sc), n, 503, FB_TIME_NONE, n).delay_us, want[n - 1]);
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"langchain-python-retry\",\"wait_exponential_jitter\":false");
    assert_int_equal(decide(layer0(sc), 1, 503, FB_TIME_NONE, 1).delay_us, 0);
    scn_free(sc);
    expect_error(
        "\"preset\":\"langchain-python-retry\",\"exponential_jitter_params\":{\"intial\":1}",
        "variants.v.layers[0]", "did you mean 'initial'?");
    expect_error(
        "\"preset\":\"langchain-python-retry\",\"retry_if_exception_type\":[\"RateLimitErorr\"]",
        "variants.v.layers[0].retry_if_exception_type[0]", "did you mean 'RateLimitError'?");
}

/* retry_if_exception_type names the SDK's classes: what each catches. */
static void langchain_python_retry_exception_types(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"langchain-python-retry\","
                                       "\"retry_if_exception_type\":[\"RateLimitError\"]");
    assert_true(decide(layer0(sc), 1, 429, FB_TIME_NONE, 1).retry);
    assert_false(decide(layer0(sc), 1, 503, FB_TIME_NONE, 1).retry);
    scn_free(sc);
    sc = preset_scenario(
        "\"preset\":\"langchain-python-retry\","
        "\"retry_if_exception_type\":[\"InternalServerError\",\"APIConnectionError\"]");
    const int yes[] = {500, 503, 529, 599, 0}, no[] = {429, 400, 408, 409};
    retries_only(layer0(sc), 1, yes, N_OF(yes), no, N_OF(no));
    scn_free(sc);
}

/* with_fallbacks: routes runnable then fallbacks, once each, on exceptions_to_handle. */
static void langchain_python_fallbacks_route(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario(
        "\"preset\":\"langchain-python-fallbacks\",\"runnable\":\"b\",\"fallbacks\":[\"a\"]");
    const sim_layer *L = layer0(sc);
    assert_true(L->routes);
    assert_true(L->raise_first);
    assert_int_equal(L->order_len, 2);
    assert_int_equal(L->order[0], 1);
    assert_int_equal(L->order[1], 0);
    assert_false(decide(L, 1, 503, FB_TIME_NONE, 1).retry);
    assert_true(class_of(L, 400, -1).may_fallback); /* Exception: 4xx too */
    assert_true(class_of(L, 503, -1).may_fallback);
    assert_false(class_of(L, 200, -1).may_fallback);
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"langchain-python-fallbacks\",\"fallbacks\":[\"b\"],"
                         "\"exceptions_to_handle\":[\"RateLimitError\"]");
    L = layer0(sc);
    assert_int_equal(L->order[0], 0);
    assert_int_equal(L->order[1], 1);
    assert_true(class_of(L, 429, -1).may_fallback);
    assert_false(class_of(L, 503, -1).may_fallback);
    scn_free(sc);
    expect_error("\"preset\":\"langchain-python-fallbacks\",\"fallbacks\":[\"c\"]",
                 "variants.v.layers[0]", "fallbacks: no LLM provider named 'c'");
}

/* raise_first: the outer layer sees the primary's 503 (retryable), not the fallback's 400. */
static void langchain_fallbacks_raise_the_first_error(void **state) {
    (void)state;
    static const char text[] =
        "{\"name\":\"f\",\"seed\":1,\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","
        "\"arrivals\":{\"constant\":\"10/s\"},\"prompt_tokens\":100,\"completion_tokens\":10}],"
        "\"pods\":{\"count\":1,\"workers\":1000,\"queue\":10,\"request_timeout\":\"600s\"},"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"10ms\",\"error\":\"1ms\"},"
        "\"faults\":[{\"at\":\"0s\",\"for\":\"20s\",\"outage\":{\"status\":503}}]},"
        "{\"name\":\"b\",\"latency\":{\"ttft\":\"10ms\",\"error\":\"1ms\"},"
        "\"faults\":[{\"at\":\"0s\",\"for\":\"20s\",\"outage\":{\"status\":400}}]}],"
        "\"variants\":{\"v\":{\"layers\":[{\"name\":\"app\",\"retry\":{\"attempts\":3,"
        "\"backoff\":{\"constant\":\"1ms\"},\"jitter\":\"none\"}},"
        "{\"name\":\"lc\",\"preset\":\"langchain-js-fallbacks\",\"fallbacks\":[\"b\"]},"
        "{\"name\":\"sdk\",\"preset\":\"openai-node\",\"maxRetries\":0}]}}}";
    sim_scenario *sc = th_load(text);
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    sim_run_opts opts = {NULL, NULL, NULL, NULL, 0, true, NULL};
    sim_error err;
    if (sim_run(sc, 0, &opts, s, &err) != FB_OK) fail_msg("run: %s", err.msg);
    /* 100 requests x 3 app attempts x (a, then b): the app retried the first error, a 503 */
    assert_int_equal(s->attempts, 600);
    free(s);
    scn_free(sc);
}

/* ---- LangChain JS ---- */

/* STATUS_NO_RETRY, a 429 only with a Retry-After <= 60 s, everything else retried. */
static void langchain_js_what_it_retries(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"langchain-js\"");
    const sim_layer *L = layer0(sc);
    const int no[] = {400, 401, 402, 403, 404, 405, 406, 407, 409};
    const int yes[] = {408, 410, 413, 422, 500, 503, 529, 0};
    retries_only(L, 1, NULL, 0, no, N_OF(no));
    retries_only(L, 6, yes, N_OF(yes), NULL, 0);
    assert_false(decide(L, 7, 503, FB_TIME_NONE, 1).retry); /* maxRetries 6: 7 calls */
    assert_false(decide(L, 1, 429, FB_TIME_NONE, 1).retry); /* headerless */
    assert_false(decide(L, 1, 429, 60 * S + 1, 1).retry);
    assert_true(decide(L, 1, 429, 60 * S, 1).retry);
    assert_true(decide_sr(L, 1, 503, 0, FB_TIME_NONE, 1).retry); /* x-should-retry not read */
    scn_free(sc);
}

/* round((u + 1) * 1000 * 2^(n-1)) ms, no cap; a 429's hint waits max(hint, backoff). */
static void langchain_js_backoff_and_hint(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"langchain-js\",\"maxRetries\":12");
    const sim_layer *L = layer0(sc);
    for (uint32_t n = 1; n <= 12; n++) {
        fb_time_us lo, hi, d = (fb_time_us)1000 << (n - 1);
        delay_range(L, n, 503, FB_TIME_NONE, &lo, &hi);
        if (lo < d * MS || hi > 2 * d * MS || hi - lo < d * MS / 2)
            fail_msg("retry %u: [%lld, %lld]", n, (long long)lo, (long long)hi);
        for (uint64_t seed = 1; seed <= 20; seed++) /* whole milliseconds */
            assert_int_equal(decide(L, n, 503, FB_TIME_NONE, seed).delay_us % MS, 0);
    }
    fb_time_us lo, hi;
    delay_range(L, 1, 429, 500 * MS, &lo, &hi); /* max(0.5 s, 1-2 s) */
    assert_true(lo >= 1 * S && hi <= 2 * S);
    assert_int_equal(decide(L, 1, 429, 3 * S, 1).delay_us, 3 * S);
    delay_range(L, 1, 503, 30 * S, &lo, &hi); /* a 503's Retry-After is not read */
    assert_true(lo >= 1 * S && hi <= 2 * S);
    assert_int_equal(L->retry.attempt_timeout_us, 600 * S);
    scn_free(sc);
}

/* withFallbacks: every error moves on, including 4xx. */
static void langchain_js_fallbacks_route(void **state) {
    (void)state;
    sim_scenario *sc =
        preset_scenario("\"preset\":\"langchain-js-fallbacks\",\"fallbacks\":[\"b\"]");
    const sim_layer *L = layer0(sc);
    assert_true(L->routes && L->raise_first);
    assert_int_equal(L->order_len, 2);
    assert_true(class_of(L, 400, -1).may_fallback);
    assert_true(class_of(L, 0, -1).may_fallback);
    scn_free(sc);
    expect_error("\"preset\":\"langchain-js-fallbacks\",\"exceptions_to_handle\":[]",
                 "variants.v.layers[0].exceptions_to_handle", "has no parameter");
}

/*
 * The simulator reads a layer that has no rules, retry_on/fallback_on lists
 * or no-retry statuses with fb_classify alone (scn_layer_classifier_only,
 * decided at setup): for such a layer the two agree on every reply, and a
 * preset with any of them is not such a layer.
 */
static void classifier_only_layers_read_the_classifier_alone(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"retry\":{\"attempts\":3}");
    const sim_layer *L = layer0(sc);
    assert_true(scn_layer_classifier_only(L));
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &L->classify), FB_OK);
    const int statuses[] = {200, 400, 401, 408, 409, 429, 500, 503, 529, 0};
    for (size_t i = 0; i < N_OF(statuses); i++) {
        for (int8_t sr = -1; sr <= 1; sr++) {
            fb_reply rep = {.status = statuses[i], .should_retry = sr};
            if (statuses[i] == 0) rep.transport = FB_TRANSPORT_RESET;
            fb_class a = fb_classify(&cl, &rep), b = scn_layer_classify(L, &cl, &rep, 1);
            assert_int_equal(a.outcome, b.outcome);
            assert_int_equal(a.retryable, b.retryable);
            assert_int_equal(a.may_fallback, b.may_fallback);
            assert_int_equal(a.effect, b.effect);
            assert_int_equal(a.trip, b.trip);
        }
    }
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"langchain-python-retry\","
                         "\"retry_if_exception_type\":[\"RateLimitError\"]");
    assert_false(scn_layer_classifier_only(layer0(sc))); /* its retry_on list decides */
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"langchain-js-fallbacks\",\"fallbacks\":[\"b\"]");
    assert_false(scn_layer_classifier_only(layer0(sc))); /* its fallback_on list */
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(core_hint_counts_on_rate_limits_only),
        cmocka_unit_test(core_rate_limit_without_hint_is_not_retried),
        cmocka_unit_test(openai_node_retry_after_up_to_60_seconds),
        cmocka_unit_test(anthropic_python_retry_after_up_to_60_seconds),
        cmocka_unit_test(anthropic_node_retry_after_has_no_cap),
        cmocka_unit_test(vercel_ai_backoff_and_retry_after),
        cmocka_unit_test(langchain_python_retry_defaults),
        cmocka_unit_test(langchain_python_retry_params),
        cmocka_unit_test(langchain_python_retry_exception_types),
        cmocka_unit_test(langchain_python_fallbacks_route),
        cmocka_unit_test(langchain_fallbacks_raise_the_first_error),
        cmocka_unit_test(langchain_js_what_it_retries),
        cmocka_unit_test(langchain_js_backoff_and_hint),
        cmocka_unit_test(langchain_js_fallbacks_route),
        cmocka_unit_test(classifier_only_layers_read_the_classifier_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
