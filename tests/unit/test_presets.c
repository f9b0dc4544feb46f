/*
 * test_presets.c - each preset follows its library's rules: the decisions a
 * preset layer makes (how many calls, the wait before each retry, what a
 * Retry-After does) against the rule as the library's source states it.
 * The differential tests against the libraries themselves are in tests/diff/.
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
#include "scenario/preset.h"
#include "scenario/scenario.h"
#include "tests/unit/helpers.h"

/* A scenario whose only variant is one layer: {"name": "x", "preset": ..., PARAMS}. */
static sim_scenario *preset_scenario(const char *preset_and_params) {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\":\"p\",\"duration\":\"5s\",\"traffic\":[{\"class\":\"chat\","
             "\"arrivals\":{\"constant\":\"2/s\"},\"prompt_tokens\":10,\"completion_tokens\":5}],"
             "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"10ms\"}}],"
             "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",%s}]}}}",
             preset_and_params);
    return th_load(text);
}

static const sim_layer *layer0(const sim_scenario *sc) {
    return &sc->variants[0].layers[0];
}

/* The decision after `failed` failed attempts with the reply class of `status`. */
static fb_retry_decision decide(const sim_layer *L, uint32_t failed, int status, fb_time_us hint,
                                uint64_t seed) {
    fb_retry_policy pol;
    assert_int_equal(fb_retry_policy_init(&pol, &L->retry), FB_OK);
    fb_classifier cl;
    assert_int_equal(fb_classify_init(&cl, &L->classify), FB_OK);
    fb_reply rep = {.status = status, .should_retry = -1};
    fb_class c = fb_classify(&cl, &rep);
    fb_rng rng;
    fb_rng_seed(&rng, seed, 1);
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_retry_decision d = {0};
    for (uint32_t k = 0; k < failed; k++) d = fb_retry_next(&pol, &st, &c, hint, NULL, &rng, 0);
    return d;
}

/* ---- openai-python ---- */

static void openai_python_makes_max_retries_plus_one_calls(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"openai-python\"");
    const sim_layer *L = layer0(sc);
    assert_true(decide(L, 2, 503, FB_TIME_NONE, 1).retry);  /* the default 2 retries */
    assert_false(decide(L, 3, 503, FB_TIME_NONE, 1).retry); /* ... so 3 calls */
    assert_int_equal(L->retry.attempt_timeout_us, 600 * S);
    assert_int_equal(L->stream, FB_STREAM_FAIL);
    scn_free(sc);
    sc = preset_scenario("\"preset\":\"openai-python\",\"max_retries\":0,\"timeout\":2.5");
    assert_false(decide(layer0(sc), 1, 503, FB_TIME_NONE, 1).retry);
    assert_int_equal(layer0(sc)->retry.attempt_timeout_us, 2500 * MS);
    scn_free(sc);
}

/* min(0.5 * 2^k, 8) * (1 - 0.25 u): retry 1 in (375, 500] ms, 2 in (750, 1000], ... (6, 8] s. */
static void openai_python_backoff_is_the_stainless_formula(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"openai-python\",\"max_retries\":8");
    const fb_time_us hi[] = {500 * MS, 1 * S, 2 * S, 4 * S, 8 * S, 8 * S};
    for (uint32_t k = 0; k < 6; k++) {
        fb_time_us lo = hi[k] * 3 / 4, top = 0, bottom = FB_TIME_MAX;
        for (uint64_t seed = 1; seed <= 300; seed++) {
            fb_retry_decision d = decide(layer0(sc), k + 1, 503, FB_TIME_NONE, seed);
            assert_true(d.retry);
            if (d.delay_us > top) top = d.delay_us;
            if (d.delay_us < bottom) bottom = d.delay_us;
        }
        if (bottom < lo || top > hi[k])
            fail_msg("retry %u: [%lld, %lld]", k + 1, (long long)bottom, (long long)top);
        /* the spread covers most of the quarter */
        assert_true(top - bottom > (hi[k] - lo) * 8 / 10);
    }
    scn_free(sc);
}

/* 408, 409, 429 and >= 500 retry; other statuses do not. */
static void openai_python_retries_what_the_sdk_retries(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"openai-python\"");
    const int yes[] = {408, 409, 429, 500, 502, 503, 529};
    const int no[] = {400, 401, 403, 404, 422};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(decide(layer0(sc), 1, yes[i], FB_TIME_NONE, 1).retry);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(decide(layer0(sc), 1, no[i], FB_TIME_NONE, 1).retry);
    scn_free(sc);
}

/* Retry-After: as is when 0 < d <= 120 s; above 120 s, no retry; 0: the backoff. */
static void openai_python_retry_after_up_to_120_seconds(void **state) {
    (void)state;
    sim_scenario *sc = preset_scenario("\"preset\":\"openai-python\"");
    fb_retry_decision d = decide(layer0(sc), 1, 429, 90 * S, 1);
    assert_true(d.retry);
    assert_int_equal(d.delay_us, 90 * S);
    assert_int_equal(decide(layer0(sc), 1, 429, 120 * S, 1).delay_us, 120 * S);
    d = decide(layer0(sc), 1, 429, 120 * S + 1, 1);
    assert_false(d.retry);
    d = decide(layer0(sc), 1, 429, 0, 1);
    assert_true(d.retry);
    assert_true(d.delay_us > 375 * MS && d.delay_us <= 500 * MS);
    scn_free(sc);
}

/* Every preset: documented parameters, defaults and limits; loads with no parameters. */
static void every_preset_is_documented_and_loads(void **state) {
    (void)state;
    size_t n = 0;
    for (const sim_preset *const *p = scn_presets(); *p; p++, n++) {
        assert_non_null((*p)->version);
        assert_non_null((*p)->source);
        assert_non_null((*p)->rules[0]);
        assert_non_null((*p)->not_modelled);
        /* how far to trust it: recorded (tests/e2e/conformance.sh checks the folder), or read */
        const char *v = (*p)->verified;
        assert_non_null(v);
        if (strncmp(v, "recorded from ", 14) != 0 && strncmp(v, "rules read from ", 16) != 0)
            fail_msg("%s: verified line '%s'", (*p)->name, v);
        for (const sim_param *pa = (*p)->params; pa->name; pa++) {
            assert_non_null(pa->def_doc);
            assert_non_null(pa->doc);
            assert_int_equal(scn_preset_param(*p, pa->name), (int)(pa - (*p)->params));
            /* a row of the format's tables (scenario/table.h): its kind follows its notation,
               a number has a range, a name a list of names */
            assert_int_equal(pa->kind, LD_KIND_OF(pa->notation));
            if (pa->notation <= SIM_PK_MILLIS || pa->notation == SIM_PK_PROTO_PERCENT)
                if (!(pa->lo <= pa->hi && pa->hi > 0))
                    fail_msg("%s: %s's range", (*p)->name, pa->name);
            if (pa->notation == SIM_PK_WORD || pa->notation == SIM_PK_CSV)
                assert_non_null(pa->names);
        }
        char spec[128];
        snprintf(spec, sizeof spec, "\"preset\":\"%s\"", (*p)->name);
        scn_free(preset_scenario(spec));
        assert_ptr_equal(scn_preset_find((*p)->name), *p);
    }
    assert_true(n >= 1);
    assert_null(scn_preset_find("nope"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openai_python_makes_max_retries_plus_one_calls),
        cmocka_unit_test(openai_python_backoff_is_the_stainless_formula),
        cmocka_unit_test(openai_python_retries_what_the_sdk_retries),
        cmocka_unit_test(openai_python_retry_after_up_to_120_seconds),
        cmocka_unit_test(every_preset_is_documented_and_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
