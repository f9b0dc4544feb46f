/*
 * test_report.c - report.json and the text summary (reports/report.c) for
 * what has no value: an n/a metric is null in report.json and "n/a" in the
 * summary, and a disturbance whose recovery nobody can judge says why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "tests/unit/helpers.h"

typedef struct fixture {
    sim_scenario *sc;
    sim_summary *sum;
} fixture;

/* One variant; its one fault (an outage to 55 s of a 60 s run) could not be judged. */
static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->sc = th_load("{\"name\":\"r\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\","
                    "\"arrivals\":{\"poisson\":\"1/s\"}}],\"providers\":[{\"name\":\"api\","
                    "\"faults\":[{\"at\":\"50s\",\"for\":\"5s\",\"outage\":{}}]}]}");
    f->sum = th_summary("default");
    f->sum->complete = true;
    f->sum->requests = 60;
    f->sum->ended[SIM_END_SUCCESS] = 60;
    f->sum->classes_exposed = 1;
    f->sum->fault_count = 1;
    f->sum->faults[0] = (sim_fault_summary){
        .start_us = 50 * S, .end_us = 55 * S, .undetermined = SIM_UNDETERMINED_NO_WINDOW};
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    free(f->sum);
    sim_scenario_free(f->sc);
    free(f);
    return 0;
}

static char *json_of(fixture *f) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    assert_int_equal(rep_write_json(m, f->sc, &f->sum, 1), FB_OK);
    fclose(m);
    return buf;
}

static char *text_of(fixture *f) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    rep_text_summary(m, f->sc, &f->sum, 1);
    fclose(m);
    return buf;
}

static void report_json_writes_na_metrics_as_null(void **state) {
    fixture *f = *state;
    char *j = json_of(f);
    assert_non_null(strstr(j, "\"collateral\": null,"));
    assert_non_null(strstr(j, "\"collateral_share\": null,"));
    assert_non_null(strstr(j, "\"spillover\": null,"));
    assert_non_null(strstr(j, "\"recovered\": null,"));
    free(j);
}

static void report_json_says_why_a_recovery_is_undetermined(void **state) {
    fixture *f = *state;
    char *j = json_of(f);
    assert_non_null(strstr(j, "\"end_s\": 55.000000,\n"
                              "          \"spillover_s\": null,\n"
                              "          \"recovered\": null,\n"
                              "          \"undetermined\": \"no full spillover.hold window (30.0s) "
                              "fits between its end (55.0s) and the end of traffic (1m 00s)\"\n"));
    free(j);
}

static void report_json_keeps_judged_faults_as_they_were(void **state) {
    fixture *f = *state;
    f->sum->faults[0].undetermined = SIM_DETERMINED;
    f->sum->faults[0].spillover_us = 5 * S;
    char *j = json_of(f);
    assert_non_null(strstr(j, "\"spillover_s\": 5.000000,\n          \"recovered\": false\n"));
    assert_null(strstr(j, "undetermined"));
    assert_non_null(strstr(j, "\"recovered\": 0,"));
    free(j);
}

/* Regression (tests/fuzz/fuzz_sim.c): NaN and huge durations reached (int) casts. */
static void format_duration_of_na_and_huge_values(void **state) {
    (void)state;
    char buf[32];
    rep_format_duration(buf, sizeof buf, NAN);
    assert_string_equal(buf, "n/a");
    rep_format_duration(buf, sizeof buf, (double)INT64_MAX);
    assert_string_equal(buf, "2.56e+09h");
    rep_format_duration(buf, sizeof buf, INFINITY);
    assert_string_equal(buf, "infh");
    rep_format_duration(buf, sizeof buf, 7500e6);
    assert_string_equal(buf, "2h 05m");
}

static void text_summary_prints_na_and_the_reason(void **state) {
    fixture *f = *state;
    char *t = text_of(f);
    assert_non_null(strstr(t, "  collateral share                   n/a\n"));
    assert_non_null(strstr(t, "spillover                            n/a\n"));
    assert_non_null(strstr(t, "variant default: recovery from api fault 0 (outage) undetermined: "
                              "no full spillover.hold window (30.0s) fits between its end "
                              "(55.0s) and the end of traffic (1m 00s)\n"));
    free(t);
}

static void text_summary_marks_an_unrecovered_spillover_with_a_plus(void **state) {
    fixture *f = *state;
    f->sum->faults[0].undetermined = SIM_DETERMINED;
    f->sum->faults[0].spillover_us = 5 * S;
    char *t = text_of(f);
    assert_non_null(strstr(t, "spillover                          5.0s+\n"));
    assert_null(strstr(t, "undetermined"));
    free(t);
}

static void reason_for_a_fault_active_at_the_end(void **state) {
    fixture *f = *state;
    f->sum->faults[0].undetermined = SIM_UNDETERMINED_ACTIVE;
    char why[256];
    rep_undetermined_reason(why, sizeof why, f->sc, &f->sum->faults[0]);
    assert_string_equal(why, "still active when traffic ended (at 1m 00s)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(report_json_writes_na_metrics_as_null, setup, teardown),
        cmocka_unit_test_setup_teardown(report_json_says_why_a_recovery_is_undetermined, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(report_json_keeps_judged_faults_as_they_were, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(text_summary_prints_na_and_the_reason, setup, teardown),
        cmocka_unit_test(format_duration_of_na_and_huge_values),
        cmocka_unit_test_setup_teardown(text_summary_marks_an_unrecovered_spillover_with_a_plus,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(reason_for_a_fault_active_at_the_end, setup, teardown),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
