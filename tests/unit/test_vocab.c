/*
 * test_vocab.c - the library's vocabulary in the reports (scenario/preset.h, sim_vocab;
 * reports/settings.c): a preset layer's settings in effect name the library's parameters
 * with the values the scenario gave, and a breaker transition in events.jsonl carries the
 * library's state names. Each preset is given values other than its defaults, so that a
 * value read from the wrong field, or a default printed instead of the setting, fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reports/report.h"
#include "reports/settings.h"
#include "scenario/preset.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

/* A one-provider scenario whose variant "v" is the one layer `keys`. */
static sim_scenario *preset_scenario(const char *keys) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"name\":\"r\",\"duration\":\"1s\",\"providers\":[{\"name\":\"p\",\"latency\":"
             "{\"ttft\":\"5ms\"}}],\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":"
             "\"1/s\"},\"prompt_tokens\":1,\"completion_tokens\":1}],\"variants\":{\"v\":"
             "{\"layers\":[{\"name\":\"lib\",%s}]}}}",
             keys);
    return th_load(json);
}

static void has(const char *text, const char *want) {
    if (strstr(text, want) == NULL) fail_msg("'%s' not in '%s'", want, text);
}

static void lacks(const char *text, const char *unwanted) {
    if (strstr(text, unwanted) != NULL) fail_msg("'%s' in '%s'", unwanted, text);
}

/* The layer's settings in the library's words: the breaker's (of provider 0) or the retry's. */
static void settings_of(const char *keys, bool breaker, char *buf, size_t len) {
    sim_scenario *sc = preset_scenario(keys);
    const sim_layer *l = &sc->variants[0].layers[0];
    assert_non_null(l->preset);
    size_t n = rep_library_settings(buf, len, l, breaker ? 0 : SIM_PROVIDERS_MAX, breaker);
    assert_int_equal(n, strlen(buf));
    scn_free(sc);
}

/* Every name a vocabulary says is one of its preset's parameters, or a keyword their docs name;
   every state name given is for a preset with a breaker of its own. */
static void vocab_names_are_the_presets_own(void **state) {
    (void)state;
    int with_vocab = 0;
    for (const sim_preset *const *pp = scn_presets(); *pp; pp++) {
        const sim_preset *p = *pp;
        if (p->vocab == NULL) continue;
        with_vocab++;
        for (const sim_vocab_param *vp = p->vocab->params; vp->name; vp++) {
            bool found = scn_preset_param(p, vp->name) >= 0;
            for (const sim_param *pa = p->params; pa->name && !found; pa++)
                found = pa->doc && strstr(pa->doc, vp->name) != NULL;
            if (!found) fail_msg("%s: '%s' is not one of its parameters", p->name, vp->name);
        }
        if (p->vocab->states[1] != NULL && p->vocab->breaker == NULL)
            fail_msg("%s names states but no breaker", p->name);
    }
    assert_true(with_vocab >= 17); /* every preset but LangChain's two fallback wrappers */
}

static void resilience4j_settings_say_its_parameters(void **state) {
    (void)state;
    char b[1024], r[1024];
    const char *keys = "\"preset\":\"resilience4j\",\"failureRateThreshold\":40,"
                       "\"slidingWindowType\":\"TIME_BASED\",\"slidingWindowSize\":20,"
                       "\"minimumNumberOfCalls\":7,\"waitDurationInOpenState\":\"20s\","
                       "\"permittedNumberOfCallsInHalfOpenState\":4,\"maxAttempts\":5,"
                       "\"waitDuration\":\"250ms\"";
    settings_of(keys, true, b, sizeof b);
    settings_of(keys, false, r, sizeof r);
    has(b, "resilience4j CircuitBreaker: failureRateThreshold 40%");
    has(b, "slidingWindowType TIME_BASED, slidingWindowSize 20, minimumNumberOfCalls 7");
    has(b, "waitDurationInOpenState 20s");
    has(b, "permittedNumberOfCallsInHalfOpenState 4");
    lacks(b, "half-open probe");
    has(r, "resilience4j Retry: maxAttempts 5, waitDuration 250ms");
    has(r, "enableRandomizedWait false");
    lacks(r, "randomizedWaitFactor"); /* no randomized wait: no factor */
    settings_of("\"preset\":\"resilience4j\",\"waitDuration\":\"1s\",\"enableRandomizedWait\":true,"
                "\"randomizedWaitFactor\":0.2",
                false, r, sizeof r);
    has(r, "enableRandomizedWait true, randomizedWaitFactor 0.2");
}

static void polly_settings_say_its_parameters(void **state) {
    (void)state;
    char b[1024], r[1024];
    const char *keys = "\"preset\":\"polly\",\"FailureRatio\":0.25,\"MinimumThroughput\":8,"
                       "\"SamplingDuration\":\"00:01:00\",\"BreakDuration\":\"00:00:15\","
                       "\"MaxRetryAttempts\":2,\"Delay\":\"00:00:00.500\"";
    settings_of(keys, true, b, sizeof b);
    settings_of(keys, false, r, sizeof r);
    has(b, "FailureRatio 0.25, MinimumThroughput 8, SamplingDuration 00:01:00, BreakDuration "
           "00:00:15");
    has(r, "MaxRetryAttempts 2");
    has(r, "UseJitter false");
    has(r, "Delay 00:00:00.500");
}

static void gobreaker_settings_say_its_parameters(void **state) {
    (void)state;
    char b[1024];
    settings_of("\"preset\":\"gobreaker\",\"ReadyToTrip\":{\"ConsecutiveFailures\":3},"
                "\"Timeout\":\"90s\",\"MaxRequests\":2",
                true, b, sizeof b);
    has(b, "gobreaker CircuitBreaker: ReadyToTrip.ConsecutiveFailures > 3");
    has(b, "Timeout 1m30s, MaxRequests 2");
}

static void pybreaker_settings_say_its_mode(void **state) {
    (void)state;
    char b[1024];
    settings_of("\"preset\":\"pybreaker\",\"fail_max\":4,\"reset_timeout\":45,\"mode\":\"calling\"",
                true, b, sizeof b);
    has(b, "pybreaker CircuitBreaker: fail_max 4, reset_timeout 45 s, success_threshold 1, "
           "mode calling");
}

static void opossum_and_cockatiel_settings_say_their_parameters(void **state) {
    (void)state;
    char b[1024], c[1024], r[1024];
    settings_of("\"preset\":\"opossum\",\"errorThresholdPercentage\":30,\"resetTimeout\":5000,"
                "\"volumeThreshold\":4",
                true, b, sizeof b);
    has(b, "errorThresholdPercentage 30%");
    has(b, "volumeThreshold 4, resetTimeout 5000 ms");
    const char *ck = "\"preset\":\"cockatiel\",\"consecutive\":3,\"halfOpenAfter\":2000,"
                     "\"maxAttempts\":2,\"backoff\":\"ConstantBackoff\",\"interval\":100";
    settings_of(ck, true, c, sizeof c);
    settings_of(ck, false, r, sizeof r);
    has(c, "consecutive 3, halfOpenAfter 2000 ms");
    has(r, "cockatiel retry: maxAttempts 2, backoff ConstantBackoff, interval 100 ms");
    settings_of("\"preset\":\"cockatiel\",\"backoff\":\"ExponentialBackoff\",\"generator\":"
                "\"fullJitterGenerator\",\"initialDelay\":50",
                false, r, sizeof r);
    has(r, "backoff ExponentialBackoff, initialDelay 50 ms, maxDelay 30000 ms, generator "
           "fullJitterGenerator");
}

static void retry_libraries_say_their_parameters(void **state) {
    (void)state;
    char r[1024];
    settings_of("\"preset\":\"tenacity\",\"stop_after_attempt\":4,\"wait_fixed\":2", false, r,
                sizeof r);
    has(r, "tenacity @retry: stop_after_attempt 4, wait_fixed 2 s");
    /* no limit: the library's word, not fusebox's cap on attempts */
    settings_of("\"preset\":\"tenacity\"", false, r, sizeof r);
    has(r, "stop_after_attempt none (stop_never)");
    settings_of("\"preset\":\"cockatiel\"", false, r, sizeof r);
    has(r, "cockatiel retry: maxAttempts Infinity");
    settings_of("\"preset\":\"openai-node\",\"maxRetries\":5,\"timeout\":20000", false, r,
                sizeof r);
    has(r, "maxRetries 5, timeout 20000 ms");
    settings_of("\"preset\":\"anthropic-python\",\"max_retries\":1,\"timeout\":30", false, r,
                sizeof r);
    has(r, "max_retries 1, timeout 30 s");
    settings_of("\"preset\":\"envoy\",\"retry_on\":\"5xx\",\"num_retries\":3,"
                "\"per_try_timeout\":\"2s\"",
                false, r, sizeof r);
    has(r, "Envoy retry_policy: num_retries 3, per_try_timeout 2s");
}

static void envoy_ejection_says_outlier_detection(void **state) {
    (void)state;
    char b[1024];
    settings_of("\"preset\":\"envoy\",\"outlier_detection\":{\"consecutive_5xx\":3,"
                "\"base_ejection_time\":\"20s\"}",
                true, b, sizeof b);
    has(b, "Envoy outlier_detection: outlier_detection.consecutive_5xx 3, "
           "outlier_detection.base_ejection_time 20s");
}

/* One breaker event of variant "v" as events.jsonl writes it. */
static void event_line(const sim_scenario *sc, fb_breaker_state from, fb_breaker_state to,
                       fb_breaker_cause cause, char *buf, size_t len) {
    sim_log_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = SIM_EV_BREAKER;
    ev.t_us = 100 * S;
    ev.breaker.from = from;
    ev.breaker.to = to;
    ev.breaker.cause = cause;
    ev.breaker.open_until_us = to == FB_BREAKER_OPEN ? 120 * S : FB_TIME_NONE;
    ev.breaker.failures = 4;
    ev.breaker.calls = 8;
    FILE *f = fmemopen(buf, len, "w");
    assert_non_null(f);
    rep_event_line(f, sc, "v", &ev);
    fclose(f);
}

static void events_carry_the_library_states(void **state) {
    (void)state;
    char line[2048];
    sim_scenario *sc = preset_scenario("\"preset\":\"resilience4j\",\"failureRateThreshold\":40,"
                                       "\"waitDurationInOpenState\":\"20s\"");
    event_line(sc, FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, line, sizeof line);
    has(line, "\"from\":\"open\",\"to\":\"half_open\""); /* fusebox's fields stay */
    has(line, "\"library_from\":\"OPEN\",\"library_to\":\"HALF_OPEN\"");
    has(line, "resilience4j: OPEN -> HALF_OPEN after waitDurationInOpenState 20s");
    event_line(sc, FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_FAILURE_RATE, line, sizeof line);
    has(line, "resilience4j: CLOSED -> OPEN at failureRateThreshold 40% (4 of 8 calls failed)");
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"gobreaker\",\"Timeout\":\"30s\"");
    event_line(sc, FB_BREAKER_HALF_OPEN, FB_BREAKER_CLOSED, FB_CAUSE_PROBES_SUCCEEDED, line,
               sizeof line);
    has(line, "\"library_from\":\"StateHalfOpen\",\"library_to\":\"StateClosed\"");
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"cockatiel\",\"halfOpenAfter\":3000");
    event_line(sc, FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, line, sizeof line);
    has(line, "cockatiel: CircuitState.Open -> CircuitState.HalfOpen after halfOpenAfter 3000 ms");
    scn_free(sc);
}

/* A layer of fusebox's own keys keeps fusebox's words: no library fields. */
static void fusebox_layers_have_no_library_fields(void **state) {
    (void)state;
    char line[2048];
    sim_scenario *sc = preset_scenario("\"breaker\":{\"consecutive_failures\":3}");
    assert_null(sc->variants[0].layers[0].preset);
    event_line(sc, FB_BREAKER_OPEN, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, line, sizeof line);
    has(line, "\"to\":\"half_open\"");
    lacks(line, "library");
    scn_free(sc);
}

/* Two layers with a breaker on one provider: an event does not say whose breaker moved, so it
   gets no library's words (a gobreaker sentence for fusebox's own breaker would be wrong). */
static void two_breaker_layers_give_no_library_words(void **state) {
    (void)state;
    char line[2048];
    sim_scenario *sc = preset_scenario(
        "\"preset\":\"gobreaker\"},{\"name\":\"own\",\"breaker\":{\"consecutive_failures\":3}");
    assert_int_equal(sc->variants[0].layer_count, 2);
    assert_null(rep_library_layer(&sc->variants[0], 0));
    event_line(sc, FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_CONSECUTIVE_FAILURES, line,
               sizeof line);
    has(line, "\"to\":\"open\"");
    lacks(line, "library");
    scn_free(sc);
    /* the control: the gobreaker layer alone gets them */
    sc = preset_scenario("\"preset\":\"gobreaker\"");
    assert_non_null(rep_library_layer(&sc->variants[0], 0));
    event_line(sc, FB_BREAKER_CLOSED, FB_BREAKER_OPEN, FB_CAUSE_CONSECUTIVE_FAILURES, line,
               sizeof line);
    has(line, "\"library_to\":\"StateOpen\"");
    scn_free(sc);
}

/* An outer layer's breaker guards the layer inside: its settings say so, in the library's words. */
static void outer_preset_breaker_is_said_for_the_layer_inside(void **state) {
    (void)state;
    char html[8192] = "";
    sim_scenario *sc = preset_scenario("\"preset\":\"resilience4j\",\"waitDurationInOpenState\":"
                                       "\"7s\"},{\"name\":\"chain\",\"fallback\":[\"p\"]");
    const sim_layer *l = &sc->variants[0].layers[0];
    assert_int_equal(l->role, SIM_ROLE_OUTER);
    FILE *f = fmemopen(html, sizeof html, "w");
    assert_non_null(f);
    rep_settings_html(f, sc, &sc->variants[0]);
    fclose(f);
    has(html, "<li>a breaker on the layer inside: resilience4j CircuitBreaker: ");
    has(html, "waitDurationInOpenState 7s");
    scn_free(sc);
}

/* The text summary's settings in effect: a preset layer's in the library's words, none for a
   layer of fusebox's own keys. */
static void text_summary_says_the_settings_in_the_librarys_words(void **state) {
    (void)state;
    char text[8192];
    const char *const keys[] = {"\"preset\":\"pybreaker\",\"fail_max\":4,\"reset_timeout\":45",
                                "\"breaker\":{\"consecutive_failures\":4}"};
    for (int i = 0; i < 2; i++) {
        sim_scenario *sc = preset_scenario(keys[i]);
        sim_summary *s = th_summary("v");
        s->complete = true;
        memset(text, 0, sizeof text);
        FILE *f = fmemopen(text, sizeof text - 1, "w");
        assert_non_null(f);
        rep_text_summary(f, sc, &s, 1);
        fclose(f);
        if (i == 0) {
            has(text, "settings in effect, in the libraries' words:\n");
            has(text, "  v/lib, p: pybreaker CircuitBreaker: fail_max 4, reset_timeout 45 s");
        } else {
            has(text, "breaker opens"); /* the table is there */
            lacks(text, "libraries' words");
        }
        free(s);
        scn_free(sc);
    }
}

/* LiteLLM has no half-open: its cooldown ends by itself, and nothing says otherwise. */
static void litellm_says_no_half_open(void **state) {
    (void)state;
    char line[2048], html[8192] = "";
    sim_scenario *sc = preset_scenario("\"preset\":\"litellm\",\"cooldown_time\":30");
    event_line(sc, FB_BREAKER_OPEN, FB_BREAKER_CLOSED, FB_CAUSE_OPEN_ELAPSED, line, sizeof line);
    has(line, "\"library_from\":\"cooling down\",\"library_to\":\"healthy\"");
    has(line, "ends by itself (a TTL; no half-open)");
    FILE *f = fmemopen(html, sizeof html, "w");
    assert_non_null(f);
    rep_settings_html(f, sc, &sc->variants[0]);
    fclose(f);
    has(html, "LiteLLM Router: num_retries");
    has(html, "no half-open");
    lacks(html, "half-open probe");
    lacks(html, "breaker cooldown after");
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vocab_names_are_the_presets_own),
        cmocka_unit_test(resilience4j_settings_say_its_parameters),
        cmocka_unit_test(polly_settings_say_its_parameters),
        cmocka_unit_test(gobreaker_settings_say_its_parameters),
        cmocka_unit_test(pybreaker_settings_say_its_mode),
        cmocka_unit_test(opossum_and_cockatiel_settings_say_their_parameters),
        cmocka_unit_test(retry_libraries_say_their_parameters),
        cmocka_unit_test(envoy_ejection_says_outlier_detection),
        cmocka_unit_test(events_carry_the_library_states),
        cmocka_unit_test(fusebox_layers_have_no_library_fields),
        cmocka_unit_test(two_breaker_layers_give_no_library_words),
        cmocka_unit_test(outer_preset_breaker_is_said_for_the_layer_inside),
        cmocka_unit_test(text_summary_says_the_settings_in_the_librarys_words),
        cmocka_unit_test(litellm_says_no_half_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
