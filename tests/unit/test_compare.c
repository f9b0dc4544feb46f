/* test_compare.c - two reports side by side: the noise rule, tolerances, parsing, matching. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fb.h"
#include "reports/compare.h"
#include "tests/unit/helpers.h"

static rep_cmp_value val(double v) {
    rep_cmp_value x = {true, v, false, NAN, NAN};
    return x;
}

static rep_cmp_value ci(double v, double lo, double hi) {
    rep_cmp_value x = {true, v, true, lo, hi};
    return x;
}

static rep_cmp_fig judge(const char *metric, rep_cmp_value a, rep_cmp_value b,
                         const char *tolerance) {
    rep_cmp_fig f;
    memset(&f, 0, sizeof f);
    rep_cmp_tol t;
    char msg[300];
    if (tolerance) assert_int_equal(rep_cmp_tol_parse(tolerance, &t, msg, sizeof msg), FB_OK);
    const rep_cmp_headline *h = rep_cmp_headline_find(metric);
    assert_non_null(h);
    rep_cmp_judge(h, &a, &b, tolerance ? &t : NULL, &f);
    return f;
}

/* success_rate: +-0.001 absolute by default; a drop beyond it is worse, a rise better. */
static void compare_success_rate_default_tolerance_is_absolute(void **state) {
    (void)state;
    rep_cmp_fig f = judge("success_rate", val(0.9990), val(0.9985), NULL);
    assert_int_equal(f.rule, REP_CMP_RULE_TOL);
    assert_int_equal(f.verdict, REP_CMP_SAME);
    assert_non_null(strstr(f.rule_text, "0.001"));
    assert_non_null(strstr(f.rule_text, "default"));
    f = judge("success_rate", val(0.9990), val(0.9975), NULL);
    assert_int_equal(f.verdict, REP_CMP_WORSE);
    f = judge("success_rate", val(0.9975), val(0.9990), NULL);
    assert_int_equal(f.verdict, REP_CMP_BETTER);
}

/* latencies: +-5% of A by default; lower is better. */
static void compare_latency_default_tolerance_is_relative(void **state) {
    (void)state;
    rep_cmp_fig f = judge("latency_p99", val(2.0), val(2.09), NULL);
    assert_int_equal(f.verdict, REP_CMP_SAME);
    assert_true(fabs(f.tol - 0.1) < 1e-12);
    f = judge("latency_p99", val(2.0), val(2.11), NULL);
    assert_int_equal(f.verdict, REP_CMP_WORSE);
    assert_true(fabs(f.change_rel - 0.055) < 1e-9);
    f = judge("latency_p99", val(2.0), val(1.8), NULL);
    assert_int_equal(f.verdict, REP_CMP_BETTER);
}

/* counts: 2% with a floor of 1, so 2 -> 3 blast radius is noise and 2 -> 4 is not. */
static void compare_count_tolerance_has_a_floor(void **state) {
    (void)state;
    assert_int_equal(judge("blast_radius", val(2), val(3), NULL).verdict, REP_CMP_SAME);
    assert_int_equal(judge("blast_radius", val(2), val(4), NULL).verdict, REP_CMP_WORSE);
    assert_int_equal(judge("fallbacks", val(1000), val(1021), NULL).verdict, REP_CMP_WORSE);
    assert_int_equal(judge("fallbacks", val(1000), val(1019), NULL).verdict, REP_CMP_SAME);
}

/* The same value is the same, whatever the rule; the exact boundary is within noise. */
static void compare_identical_and_boundary_are_same(void **state) {
    (void)state;
    assert_int_equal(judge("cost_usd", val(9.15), val(9.15), NULL).verdict, REP_CMP_SAME);
    assert_int_equal(judge("latency_p50", val(0.2), val(0.21), NULL).verdict, REP_CMP_SAME);
    assert_int_equal(judge("success_rate", val(0.999), val(0.998), NULL).verdict, REP_CMP_SAME);
}

/* Two means with CIs: beyond noise only when the intervals do not overlap. */
static void compare_confidence_intervals_judge_sweeps(void **state) {
    (void)state;
    rep_cmp_fig f = judge("latency_p99", ci(2.0, 1.8, 2.2), ci(2.5, 2.1, 2.9), NULL);
    assert_int_equal(f.rule, REP_CMP_RULE_CI);
    assert_int_equal(f.verdict, REP_CMP_SAME); /* +25%, but the CIs overlap */
    assert_non_null(strstr(f.rule_text, "overlap"));
    f = judge("latency_p99", ci(2.0, 1.9, 2.1), ci(2.3, 2.2, 2.4), NULL);
    assert_int_equal(f.verdict, REP_CMP_WORSE); /* +15%, apart */
    f = judge("success_rate", ci(0.99, 0.985, 0.995), ci(0.97, 0.96, 0.98), NULL);
    assert_int_equal(f.verdict, REP_CMP_WORSE);
}

/* A --tolerance wins over the CIs and the default, absolute or relative. */
static void compare_user_tolerance_overrides(void **state) {
    (void)state;
    rep_cmp_fig f = judge("latency_p99", ci(2.0, 1.9, 2.1), ci(2.3, 2.2, 2.4), "latency_p99=20%");
    assert_int_equal(f.rule, REP_CMP_RULE_TOL);
    assert_true(f.tol_user);
    assert_int_equal(f.verdict, REP_CMP_SAME);
    assert_non_null(strstr(f.rule_text, "--tolerance"));
    f = judge("success_rate", val(0.999), val(0.9985), "success_rate=0.0001");
    assert_int_equal(f.verdict, REP_CMP_WORSE);
    f = judge("blast_radius", val(2), val(3), "blast_radius=0");
    assert_int_equal(f.verdict, REP_CMP_WORSE);
}

static void compare_tolerance_parse_rejects_bad_specs(void **state) {
    (void)state;
    rep_cmp_tol t;
    char msg[300];
    assert_int_equal(rep_cmp_tol_parse("latency_p99=5%", &t, msg, sizeof msg), FB_OK);
    assert_true(fabs(t.rel - 0.05) < 1e-12);
    assert_int_equal(rep_cmp_tol_parse("errors=1", &t, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "success_rate")); /* the list of headline figures */
    assert_int_equal(rep_cmp_tol_parse("latency_p99", &t, msg, sizeof msg), FB_EINVAL);
    assert_int_equal(rep_cmp_tol_parse("latency_p99=-1", &t, msg, sizeof msg), FB_EINVAL);
    assert_int_equal(rep_cmp_tol_parse("latency_p99=5%x", &t, msg, sizeof msg), FB_EINVAL);
}

/* A figure missing (null: n/a) on either side is n/a, never a regression. */
static void compare_missing_value_is_na(void **state) {
    (void)state;
    rep_cmp_value none = {false, NAN, false, NAN, NAN};
    assert_int_equal(judge("cost_usd", val(1), none, NULL).verdict, REP_CMP_NA);
    assert_int_equal(judge("cost_usd", none, val(1), NULL).verdict, REP_CMP_NA);
}

static const char REPORT_A[] =
    "{\"scenario\": \"s\", \"seed\": 7, \"complete\": true, \"variants\": {"
    "\"naive\": {\"summary\": {\"success_rate\": 0.9, \"latency_p99\": 2.0, \"cost_usd\": null}},"
    "\"tuned\": {\"summary\": {\"success_rate\": 0.999, \"latency_p99\": 1.0}}}}";
static const char REPORT_B[] =
    "{\"scenario\": \"s\", \"seed\": 7, \"complete\": true, \"variants\": {"
    "\"tuned\": {\"summary\": {\"success_rate\": 0.99, \"latency_p99\": 1.0}},"
    "\"new\": {\"summary\": {\"success_rate\": 1}}}}";

/* Variants are matched by name; those of one side only are counted, not compared. */
static void compare_reports_match_variants_by_name(void **state) {
    (void)state;
    rep_cmp_side a, b;
    char msg[300];
    assert_int_equal(rep_cmp_parse(REPORT_A, strlen(REPORT_A), "a", &a, msg, sizeof msg), FB_OK);
    assert_int_equal(rep_cmp_parse(REPORT_B, strlen(REPORT_B), "b", &b, msg, sizeof msg), FB_OK);
    assert_int_equal(a.kind, REP_CMP_REPORT);
    assert_string_equal(a.seeds, "7");
    rep_cmp c;
    assert_int_equal(rep_compare(&a, &b, NULL, 0, &c, msg, sizeof msg), FB_OK);
    size_t nh;
    rep_cmp_headlines(&nh);
    assert_int_equal(c.count, nh); /* tuned only */
    assert_int_equal(c.only_a, 1);
    assert_int_equal(c.only_b, 1);
    assert_int_equal(c.worse, 1); /* success_rate 0.999 -> 0.99 */
    assert_string_equal(a.entries[c.figs[0].entry_a].name, "tuned");
    assert_string_equal(rep_cmp_headlines(&nh)[c.figs[0].headline].metric, "success_rate");
    assert_int_equal(c.figs[0].verdict, REP_CMP_WORSE);
    rep_cmp_free(&c);
    rep_cmp_side_free(&a);
    rep_cmp_side_free(&b);
}

/* Single runs of two seeds: a share moves by chance by about sqrt(p(1-p)/n); within the 95%
 * binomial interval it is the same (0.19 and 0.182 of 200 were "WORSE"), beyond it worse; a
 * latency beyond its default tolerance is not judged (n/a), unless --tolerance states the noise. */
static rep_cmp compare_draws(int b_seed, const char *b_rng, const char *b_rate, double b_p99,
                             double ended, const rep_cmp_tol *t, size_t nt) {
    char ta[400], tb[400], msg[300];
    snprintf(ta, sizeof ta,
             "{\"scenario\": \"s\", \"seed\": 1, \"rng\": \"fusebox-5\", \"variants\": "
             "{\"v\": {\"summary\": {\"ended\": %g, \"success_rate\": 0.19, "
             "\"latency_p99\": 2.0, \"blast_radius\": 162}}}}",
             ended);
    snprintf(tb, sizeof tb,
             "{\"scenario\": \"s\", \"seed\": %d, \"rng\": \"%s\", \"variants\": "
             "{\"v\": {\"summary\": {\"ended\": %g, \"success_rate\": %s, "
             "\"latency_p99\": %g, \"blast_radius\": 171}}}}",
             b_seed, b_rng, ended, b_rate, b_p99);
    rep_cmp_side a, b;
    rep_cmp c;
    assert_int_equal(rep_cmp_parse(ta, strlen(ta), "a", &a, msg, sizeof msg), FB_OK);
    assert_int_equal(rep_cmp_parse(tb, strlen(tb), "b", &b, msg, sizeof msg), FB_OK);
    assert_int_equal(rep_compare(&a, &b, t, nt, &c, msg, sizeof msg), FB_OK);
    rep_cmp_side_free(&a);
    rep_cmp_side_free(&b);
    return c;
}

static rep_cmp compare_seeds(const char *b_rate, double b_p99, double ended, const rep_cmp_tol *t,
                             size_t nt) {
    return compare_draws(2, "fusebox-5", b_rate, b_p99, ended, t, nt);
}

static rep_cmp_verdict verdict_of(const rep_cmp *c, const char *metric) {
    size_t nh;
    const rep_cmp_headline *h = rep_cmp_headlines(&nh);
    for (size_t i = 0; i < c->count; i++)
        if (strcmp(h[c->figs[i].headline].metric, metric) == 0) return c->figs[i].verdict;
    fail_msg("no %s", metric);
    return REP_CMP_NA;
}

static void compare_two_seeds_judge_shares_binomially_and_the_rest_not_at_all(void **state) {
    (void)state;
    rep_cmp c = compare_seeds("0.182", 2.0, 200, NULL, 0);
    assert_int_equal(verdict_of(&c, "success_rate"), REP_CMP_SAME);
    assert_int_equal(verdict_of(&c, "blast_radius"), REP_CMP_SAME); /* 81.0% and 85.5% */
    assert_int_equal(c.worse, 0);
    assert_int_equal(c.unjudged, 0);
    rep_cmp_free(&c);
    c = compare_seeds("0.10", 2.0, 2000, NULL, 0); /* 19% -> 10% of 2,000: far outside */
    assert_int_equal(verdict_of(&c, "success_rate"), REP_CMP_WORSE);
    rep_cmp_free(&c);
    c = compare_seeds("0.19", 2.5, 200, NULL, 0); /* p99 +25% between two seeds */
    assert_int_equal(verdict_of(&c, "latency_p99"), REP_CMP_NA);
    assert_int_equal(c.unjudged, 1);
    assert_int_equal(c.unjudged_seeds, 1);
    assert_int_equal(c.worse, 0);
    rep_cmp_free(&c);
    rep_cmp_tol t;
    char msg[200];
    assert_int_equal(rep_cmp_tol_parse("latency_p99=10%", &t, msg, sizeof msg), FB_OK);
    c = compare_seeds("0.19", 2.5, 200, &t, 1); /* the user's tolerance: judged */
    assert_int_equal(verdict_of(&c, "latency_p99"), REP_CMP_WORSE);
    assert_int_equal(c.unjudged, 0);
    rep_cmp_free(&c);
}

/* One seed under two random-stream versions draws other numbers (docs/rng.md): judged as two
 * seeds, and said so; the same seed and version: the tolerance alone. */
static void compare_two_stream_versions_are_judged_as_two_seeds(void **state) {
    (void)state;
    rep_cmp c = compare_draws(1, "fusebox-4", "0.19", 2.5, 200, NULL, 0); /* p99 +25% */
    assert_int_equal(verdict_of(&c, "latency_p99"), REP_CMP_NA);
    assert_int_equal(c.unjudged_seeds, 1);
    assert_int_equal(c.apart, REP_CMP_TWO_VERSIONS);
    assert_non_null(
        strstr(c.figs[2].rule_text, "two stream versions, not judged: beyond")); /* p99 */
    rep_cmp_free(&c);
    c = compare_draws(1, "fusebox-4", "0.182", 2.0, 200, NULL, 0); /* 19.0% and 18.2% of 200 */
    assert_int_equal(verdict_of(&c, "success_rate"), REP_CMP_SAME);
    rep_cmp_free(&c);
    c = compare_draws(1, "fusebox-5", "0.19", 2.5, 200, NULL, 0); /* the same draws: judged */
    assert_int_equal(verdict_of(&c, "latency_p99"), REP_CMP_WORSE);
    assert_int_equal(c.unjudged, 0);
    assert_int_equal(c.apart, REP_CMP_SAME_DRAWS);
    rep_cmp_free(&c);
    c = compare_draws(1, "fusebox-5", "0.182", 2.0, 200, NULL, 0);
    assert_int_equal(verdict_of(&c, "success_rate"), REP_CMP_WORSE);
    rep_cmp_free(&c);
}

/* Not a report, a report against a sweep, another scenario: errors naming the file or both. */
static void compare_bad_inputs_are_errors(void **state) {
    (void)state;
    rep_cmp_side a, b;
    char msg[300];
    const char *notjson = "{\"scenario\": ";
    assert_int_equal(rep_cmp_parse(notjson, strlen(notjson), "x.json", &a, msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "x.json"));
    const char *other = "{\"scenario\": \"s\", \"rows\": []}";
    assert_int_equal(rep_cmp_parse(other, strlen(other), "y.json", &a, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "y.json: $"));
    const char *badrng =
        "{\"scenario\": \"s\", \"rng\": 5, \"variants\": {\"v\": {\"summary\": {}}}}";
    assert_int_equal(rep_cmp_parse(badrng, strlen(badrng), "z.json", &a, msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "z.json: $.rng"));
    const char *sweep = "{\"scenario\": \"s\", \"seeds\": [1, 2], \"results\": [{\"settings\": "
                        "{\"breaker.open\": \"5s\"}, \"runs\": 2, \"metrics\": {\"success_rate\":"
                        " {\"mean\": 0.99, \"ci95\": [0.98, 1.0]}}}]}";
    assert_int_equal(rep_cmp_parse(sweep, strlen(sweep), "s.json", &a, msg, sizeof msg), FB_OK);
    assert_int_equal(a.kind, REP_CMP_SWEEP);
    assert_string_equal(a.entries[0].name, "breaker.open=5s");
    assert_true(a.entries[0].value[0].has_ci);
    assert_string_equal(a.seeds, "1, 2");
    assert_int_equal(rep_cmp_parse(REPORT_A, strlen(REPORT_A), "r", &b, msg, sizeof msg), FB_OK);
    rep_cmp c;
    assert_int_equal(rep_compare(&a, &b, NULL, 0, &c, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "sweep"));
    rep_cmp_side_free(&a);
    const char *t = "{\"scenario\": \"t\", \"variants\": {\"tuned\": {\"summary\": {}}}}";
    assert_int_equal(rep_cmp_parse(t, strlen(t), "t", &a, msg, sizeof msg), FB_OK);
    assert_int_equal(rep_compare(&a, &b, NULL, 0, &c, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "different scenarios"));
    rep_cmp_side_free(&a);
    rep_cmp_side_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compare_success_rate_default_tolerance_is_absolute),
        cmocka_unit_test(compare_latency_default_tolerance_is_relative),
        cmocka_unit_test(compare_count_tolerance_has_a_floor),
        cmocka_unit_test(compare_identical_and_boundary_are_same),
        cmocka_unit_test(compare_confidence_intervals_judge_sweeps),
        cmocka_unit_test(compare_user_tolerance_overrides),
        cmocka_unit_test(compare_tolerance_parse_rejects_bad_specs),
        cmocka_unit_test(compare_missing_value_is_na),
        cmocka_unit_test(compare_reports_match_variants_by_name),
        cmocka_unit_test(compare_two_seeds_judge_shares_binomially_and_the_rest_not_at_all),
        cmocka_unit_test(compare_two_stream_versions_are_judged_as_two_seeds),
        cmocka_unit_test(compare_bad_inputs_are_errors),
    };
    return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
