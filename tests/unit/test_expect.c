/* test_expect.c - the expectation language: values, units, variants, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "reports/expect.h"
#include "tests/unit/helpers.h"

typedef struct fixture {
    sim_scenario *sc;
    sim_summary *sums[2];
} fixture;

static int setup(void **state) {
    const char *text = "{\"name\":\"x\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\","
                       "\"arrivals\":{\"poisson\":\"1/s\"}}],\"providers\":[{\"name\":\"openai\"}],"
                       "\"variants\":{\"naive\":{},\"tuned\":{}}}";
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->sc = th_load(text);
    f->sums[0] = th_summary("naive");
    f->sums[1] = th_summary("tuned");
    /* naive: 1000 requests, 600 ok; tuned: 1000 requests, 995 ok */
    f->sums[0]->requests = f->sums[0]->requests_calling = 1000;
    f->sums[0]->ended[SIM_END_SUCCESS] = 600;
    f->sums[0]->ended[SIM_END_TIMEOUT] = 400;
    f->sums[0]->errors = 400;
    f->sums[0]->attempts = 9000;
    f->sums[0]->providers[0].attempts = 9000;
    f->sums[1]->requests = f->sums[1]->requests_calling = 1000;
    f->sums[1]->ended[SIM_END_SUCCESS] = 995;
    f->sums[1]->ended[SIM_END_EXHAUSTED] = 5;
    f->sums[1]->errors = 5;
    f->sums[1]->attempts = 1100;
    for (int i = 0; i < 1000; i++) fb_hist_record(&f->sums[1]->latency, 1000 * (i + 1));
    f->sums[0]->fault_count = 1;
    f->sums[0]->faults[0].spillover_us = 40 * FB_US_PER_MIN;
    f->sums[1]->fault_count = 1;
    f->sums[1]->faults[0].spillover_us = 5 * FB_US_PER_S;
    f->sums[1]->faults[0].recovered = true;
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    free(f->sums[0]);
    free(f->sums[1]);
    scn_free(f->sc);
    free(f);
    return 0;
}

static bool holds(fixture *f, const char *e) {
    rep_expect_result r;
    char msg[300];
    int rc = rep_expect_eval(f->sc, f->sums, 2, e, &r, msg, sizeof msg);
    if (rc != FB_OK) fail_msg("%s: %s", e, msg);
    return r.passed;
}

static void expect_error(fixture *f, const char *e, const char *fragment) {
    rep_expect_result r;
    char msg[300] = "";
    if (rep_expect_eval(f->sc, f->sums, 2, e, &r, msg, sizeof msg) == FB_OK)
        fail_msg("accepted: %s", e);
    if (strstr(msg, fragment) == NULL) fail_msg("'%s': message '%s' lacks '%s'", e, msg, fragment);
    /* validation without a run reports the same problem */
    char msg2[300] = "";
    assert_int_not_equal(rep_expect_validate(f->sc, e, msg2, sizeof msg2), FB_OK);
}

static void expect_compares_a_metric_with_a_number(void **state) {
    fixture *f = *state;
    assert_true(holds(f, "tuned.success_rate >= 0.99"));
    assert_false(holds(f, "naive.success_rate >= 0.99"));
    assert_true(holds(f, "tuned.success_rate > 99%"));
    assert_true(holds(f, "tuned.errors == 5"));
    assert_true(holds(f, "tuned.errors != 4"));
    assert_true(holds(f, "naive.amplification < 9.5"));
    assert_false(holds(f, "naive.amplification < 9"));
}

static void expect_compares_variants_with_arithmetic(void **state) {
    fixture *f = *state;
    assert_true(holds(f, "naive.amplification > tuned.amplification * 5"));
    assert_false(holds(f, "naive.amplification > tuned.amplification * 9"));
    assert_true(holds(f, "naive.spillover > tuned.spillover * 5"));
    assert_true(holds(f, "(naive.attempts - tuned.attempts) / naive.requests >= 7.9"));
    assert_true(holds(f, "tuned.spillover + 10s < 1m"));
}

static void expect_durations_need_units(void **state) {
    fixture *f = *state;
    assert_true(holds(f, "tuned.latency_p99 <= 1s"));
    assert_true(holds(f, "tuned.latency_p99 <= \"1s\""));
    assert_false(holds(f, "tuned.latency_p99 <= 900ms"));
    assert_true(holds(f, "naive.spillover >= 40m"));
    expect_error(f, "tuned.latency_p99 <= 15", "compare durations with durations");
    expect_error(f, "tuned.success_rate <= 15s", "compare durations with durations");
    expect_error(f, "tuned.latency_p99 <= 15parsecs", "unknown unit");
    expect_error(f, "tuned.latency_p99 * tuned.spillover > 1s", "two durations");
}

static void expect_rejects_unknown_names(void **state) {
    fixture *f = *state;
    expect_error(f, "tunde.success_rate >= 0.9", "no variant named 'tunde'");
    expect_error(f, "tuned.sucess_rate >= 0.9", "did you mean 'success_rate'");
    expect_error(f, "tuned.attempts[gemini] >= 1", "no provider named 'gemini'");
    expect_error(f, "success_rate >= 0.9", "needs a variant");
    assert_true(holds(f, "naive.attempts[openai] == 9000"));
}

static void expect_rejects_bad_syntax(void **state) {
    fixture *f = *state;
    expect_error(f, "tuned.success_rate", "expected a comparison");
    expect_error(f, "tuned.success_rate >= ", "expected a number");
    expect_error(f, "tuned.success_rate >= 0.9 extra", "unexpected");
    expect_error(f, "(tuned.errors >= 1", "missing ')'");
    expect_error(f, "tuned.latency_p99 <= \"15s", "missing closing quote");
}

static void expect_detail_shows_both_sides(void **state) {
    fixture *f = *state;
    rep_expect_result r;
    char msg[300];
    assert_int_equal(rep_expect_eval(f->sc, f->sums, 2, "naive.spillover > tuned.spillover * 5", &r,
                                     msg, sizeof msg),
                     FB_OK);
    assert_string_equal(r.detail, "40m 00s > 25.0s");
    assert_true(r.duration);
}

static const char *detail_of(fixture *f, const char *e) {
    static rep_expect_result r;
    char msg[300];
    assert_int_equal(rep_expect_eval(f->sc, f->sums, 2, e, &r, msg, sizeof msg), FB_OK);
    return r.detail;
}

/* A failed line reads as a finding (the measured value, the limit, by how much), not as a claim:
 * "measured 40m 00s, limit < 25.0s" rather than "40m 00s < 25.0s". */
static void expect_failure_says_the_limit_and_the_margin(void **state) {
    fixture *f = *state;
    assert_string_equal(detail_of(f, "naive.spillover < tuned.spillover * 5"),
                        "measured 40m 00s, limit < 25.0s: over by 39m 35s");
    assert_string_equal(detail_of(f, "naive.spillover >= 1h"),
                        "measured 40m 00s, limit >= 1h 00m: short by 20m 00s");
    assert_string_equal(detail_of(f, "naive.spillover == 40m"),
                        "40m 00s == 40m 00s"); /* passed: as before */
    assert_string_equal(detail_of(f, "naive.spillover != 40m"),
                        "measured 40m 00s, limit != 40m 00s: equal");
    assert_string_equal(detail_of(f, "naive.spillover > 40m"),
                        "measured 40m 00s, limit > 40m 00s: at the limit, not beyond it");
}

/* Two values that round to the same text are shown with the digits that decide between them. */
static void expect_boundary_shows_the_deciding_digits(void **state) {
    fixture *f = *state;
    assert_string_equal(detail_of(f, "naive.spillover <= 2400.0004s"),
                        "2400.000000s <= 2400.000400s");
    /* texts that differ stay as they are; a margin that would show as 0 gets its digits */
    assert_string_equal(detail_of(f, "naive.spillover <= 2399.9996s"),
                        "measured 40m 00s, limit <= 39m 59s: over by 0.000400s");
}

/* An n/a metric read by an expectation: it fails, whatever it compares, and says why. */
static rep_expect_result eval_na(fixture *f, const char *e) {
    rep_expect_result r;
    char msg[300];
    /* naive's fault could not be judged; neither variant has classes for collateral */
    f->sums[0]->faults[0].undetermined = SIM_UNDETERMINED_NO_WINDOW;
    assert_int_equal(rep_expect_eval(f->sc, f->sums, 2, e, &r, msg, sizeof msg), FB_OK);
    return r;
}

static void expect_on_na_spillover_fails_saying_so(void **state) {
    fixture *f = *state;
    rep_expect_result r = eval_na(f, "naive.spillover > tuned.spillover * 5");
    assert_false(r.passed);
    assert_true(r.na);
    assert_non_null(strstr(r.detail, "naive.spillover is n/a (n/a when"));
}

static void expect_on_na_recovered_fails_for_any_operator(void **state) {
    fixture *f = *state;
    assert_false(eval_na(f, "naive.recovered == 0").passed);
    assert_false(eval_na(f, "naive.recovered != 0").passed);
    assert_false(eval_na(f, "naive.recovered >= 0").passed);
    assert_true(eval_na(f, "tuned.recovered == 1").passed); /* tuned's was judged */
}

static void expect_on_na_collateral_share_names_the_metric(void **state) {
    fixture *f = *state;
    rep_expect_result r = eval_na(f, "tuned.collateral_share <= 0.5");
    assert_false(r.passed);
    assert_true(r.na);
    assert_string_equal(r.detail, "tuned.collateral_share is n/a (n/a when collateral is, or "
                                  "when the blast radius is 0)");
}

/* A figure made of no request backs no verdict: a rate of none, a percentile of none read 0
 * ("latency_p99 <= 15s" passed as "0ms <= 15.0s"); they are n/a and fail saying why. One
 * request is a number (a percentile of few is their order statistic, as an import's bands
 * compare it). */
static void expect_on_no_request_fails_saying_so(void **state) {
    fixture *f = *state;
    rep_expect_result r;
    char msg[300];
    sim_summary *t = f->sums[1];
    fb_hist_clear(&t->latency);
    fb_hist_record(&t->latency, 1000);
    assert_true(holds(f, "tuned.latency_p99 <= 15s")); /* one request: its latency */
    memset(t->ended, 0, sizeof t->ended);
    t->errors = 0;
    t->requests_calling = 0;
    fb_hist_clear(&t->latency);
    assert_int_equal(
        rep_expect_eval(f->sc, f->sums, 2, "tuned.latency_p99 <= 15s", &r, msg, sizeof msg), FB_OK);
    assert_false(r.passed);
    assert_true(r.na);
    assert_string_equal(r.detail,
                        "tuned.latency_p99 is n/a (no request ended: a percentile of none)");
    assert_false(holds(f, "tuned.success_rate >= 0"));
    assert_false(holds(f, "tuned.error_rate <= 1"));
    assert_false(holds(f, "tuned.amplification <= 100"));
    assert_false(holds(f, "tuned.latency_max <= 15s"));
    assert_false(holds(f, "tuned.success_latency_p99 <= 15s"));
    assert_true(holds(f, "tuned.errors == 0")); /* a count of none is 0 */
    assert_int_equal(
        rep_expect_eval(f->sc, f->sums, 2, "tuned.success_rate >= 0.5", &r, msg, sizeof msg),
        FB_OK);
    assert_string_equal(r.detail, "tuned.success_rate is n/a (no request ended: a rate of none)");
    assert_false(holds(f, "naive.success_rate > tuned.success_rate"));
}

/* A ratio over 0 is no number: x / 0 used to be inf (and 0 / 0 was 0), so "errors / retries >= 1"
 * passed on a run without retries; now the expectation fails saying what was 0. */
static void expect_dividing_by_zero_fails_naming_the_divisor(void **state) {
    fixture *f = *state;
    rep_expect_result r;
    char msg[300];
    assert_int_equal(rep_expect_eval(f->sc, f->sums, 2, "naive.errors / tuned.retries >= 1", &r,
                                     msg, sizeof msg),
                     FB_OK);
    assert_false(r.passed);
    assert_true(r.na);
    assert_string_equal(r.detail, "divided by 0: tuned.retries is 0 in this run");
    assert_false(holds(f, "tuned.retries / tuned.retries <= 1")); /* 0 / 0 */
    assert_false(holds(f, "naive.errors / (naive.errors - 400) > 1"));
    assert_true(holds(f, "naive.errors / naive.attempts < 0.05")); /* 400 / 9000 */
    char m[300];
    assert_int_equal(rep_expect_validate(f->sc, "naive.errors / tuned.retries >= 1", m, sizeof m),
                     FB_OK); /* validation reads no run: nothing is 0 yet */
}

/* A preset layer's setting by its library's name, as it ran (issue 22): durations in the
 * library's unit compared with durations, rates as fractions, the breaker's per provider; a
 * name the vocabulary lacks, a layer of fusebox's keys and an unknown layer say what there is. */
static void expect_reads_a_library_setting_by_its_name(void **state) {
    (void)state;
    fixture g = {0}, *f = &g;
    f->sc =
        th_load("{\"name\":\"l\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
                "{\"poisson\":\"1/s\"}}],\"providers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
                "\"variants\":{\"naive\":{\"retry\":{\"attempts\":3}},\"tuned\":{\"layers\":["
                "{\"name\":\"cb\",\"preset\":\"resilience4j\",\"failureRateThreshold\":40},"
                "{\"name\":\"proxy\",\"preset\":\"litellm\",\"cooldown_time\":60,"
                "\"num_retries\":4,\"model_list\":[{\"model_name\":\"g\",\"provider\":\"a\"},"
                "{\"model_name\":\"g\",\"provider\":\"b\",\"litellm_params\":"
                "{\"cooldown_time\":5}}]}]}}}");
    f->sums[0] = th_summary("naive");
    f->sums[1] = th_summary("tuned");
    assert_true(holds(f, "tuned.proxy.cooldown_time == 60s"));
    assert_true(holds(f, "tuned.proxy.cooldown_time[b] == 5s")); /* the deployment's own */
    assert_true(holds(f, "tuned.proxy.num_retries == 4"));
    assert_false(holds(f, "tuned.proxy.num_retries > 4"));
    assert_true(holds(f, "tuned.cb.failureRateThreshold == 40%"));
    assert_true(holds(f, "tuned.proxy.cooldown_time > tuned.proxy.cooldown_time[b] * 10"));
    expect_error(f, "tuned.proxy.cooldown_time == 60", "compare durations with durations");
    expect_error(f, "tuned.proxy.cooldown == 60s",
                 "LiteLLM's layer 'proxy' has no setting 'cooldown' here (its names: "
                 "cooldown_time, num_retries, timeout)");
    expect_error(f, "tuned.gw.cooldown_time == 60s",
                 "variant 'tuned' has no metric or library layer 'gw' (its library layers: cb, "
                 "proxy)");
    expect_error(f, "naive.policy.maxAttempts == 3", "layer 'policy' has no library's names");
    expect_error(f, "naive.gw.maxAttempts == 3", "its library layers: none");
    expect_error(f, "tuned.proxy.cooldown_time[c] == 5s", "no provider named 'c'");
    free(f->sums[0]);
    free(f->sums[1]);
    scn_free(f->sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(expect_compares_a_metric_with_a_number, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_compares_variants_with_arithmetic, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_durations_need_units, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_rejects_unknown_names, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_rejects_bad_syntax, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_detail_shows_both_sides, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_failure_says_the_limit_and_the_margin, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(expect_boundary_shows_the_deciding_digits, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_on_na_spillover_fails_saying_so, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_on_na_recovered_fails_for_any_operator, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(expect_on_no_request_fails_saying_so, setup, teardown),
        cmocka_unit_test_setup_teardown(expect_dividing_by_zero_fails_naming_the_divisor, setup,
                                        teardown),
        cmocka_unit_test(expect_reads_a_library_setting_by_its_name),
        cmocka_unit_test_setup_teardown(expect_on_na_collateral_share_names_the_metric, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("expect", tests, NULL, NULL);
}
