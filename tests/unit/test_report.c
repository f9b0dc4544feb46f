/*
 * test_report.c - report.json and the text summary (reports/report.c) for
 * what has no value: an n/a metric is null in report.json and "n/a" in the
 * summary, and a disturbance whose recovery nobody can judge says why; the
 * verdict (reports/verdict.c) for a run with a winner and for a tie.
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
#include "reports/settings.h"
#include "reports/verdict.h"
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
    f->sum->faults[0] = (sim_fault_summary){.start_us = 50 * S,
                                            .end_us = 55 * S,
                                            .next_us = FB_TIME_NONE,
                                            .undetermined = SIM_UNDETERMINED_NO_WINDOW};
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    free(f->sum);
    scn_free(f->sc);
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
    /* the run is too short to judge any disturbance: one line says so, none per fault */
    assert_non_null(strstr(t, "recovery not measured: no disturbance is followed by a full "
                              "spillover.hold window (30.0s) before the next one or the end of "
                              "traffic (1m 00s)\n"));
    assert_null(strstr(t, "recovery from"));
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

/* Followed by another disturbance: measured to its start, and the line says so. */
static void reason_for_a_fault_followed_by_another(void **state) {
    fixture *f = *state;
    f->sum->faults[0].undetermined = SIM_UNDETERMINED_NEXT;
    f->sum->faults[0].start_us = 5 * S;
    f->sum->faults[0].end_us = 10 * S; /* a full 30 s window fits before the next at 45 s */
    f->sum->faults[0].next_us = 45 * S;
    f->sum->faults[0].spillover_us = 35 * S;
    char why[256];
    rep_undetermined_reason(why, sizeof why, f->sc, &f->sum->faults[0]);
    assert_string_equal(why, "not back to baseline before the next disturbance began (at 45.0s): "
                             "its spillover is measured to there, at least 35.0s");
    char *t = text_of(f);
    assert_non_null(strstr(t, "variant default: recovery from api fault 0 (outage) undetermined: "
                              "not back to baseline before the next"));
    free(t);
}

/* Running into the next without a gap (an escalating outage scripted as steps): no "at least
 * 0ms", one line for the run of them, judged with the last. */
static void reason_for_faults_that_run_into_each_other(void **state) {
    fixture *f = *state;
    f->sum->faults[0].undetermined = SIM_UNDETERMINED_NEXT;
    f->sum->faults[0].start_us = 5 * S;
    f->sum->faults[0].end_us = 10 * S;
    f->sum->faults[0].next_us = 10 * S;
    f->sum->faults[0].spillover_us = 0;
    char why[256];
    rep_undetermined_reason(why, sizeof why, f->sc, &f->sum->faults[0]);
    assert_string_equal(why, "followed without a gap by the next disturbance (at 10.0s): judged "
                             "with it, the system is back from both when it is back from the "
                             "later");
    char *t = text_of(f);
    assert_non_null(strstr(t, "api fault 0 (outage) runs into the next disturbance (at 10.0s) "
                              "without a gap: its recovery is judged with it"));
    assert_null(strstr(t, "at least 0ms"));
    free(t);
}

/* ---- the verdict ---- */

#define VERDICT_SCENARIO                                                                           \
    "{\"name\":\"v\",\"duration\":\"2m\",\"traffic\":["                                            \
    "{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"10/s\"}},"                                    \
    "{\"class\":\"account\",\"arrivals\":{\"poisson\":\"10/s\"},\"target\":\"none\","              \
    "\"service\":\"20ms\"}],"                                                                      \
    "\"providers\":[{\"name\":\"api\",\"faults\":[{\"at\":\"30s\",\"for\":\"40s\","                \
    "\"outage\":{\"status\":503}}]},{\"name\":\"backup\"}],"                                       \
    "\"variants\":{\"naive\":{\"retry\":{\"attempts\":5}},"                                        \
    "\"tuned\":{\"fallback\":[\"api\",\"backup\"]}}}"

/*
 * A variant's run: `ok` of 10,000 requests succeeded (5,000 of each class), the rest failed
 * in the chat class; latencies, cost, attempts and the recovery are given.
 */
static sim_summary *verdict_run(const char *variant, uint64_t ok, fb_time_us p99_us, double cost,
                                uint64_t attempts, fb_time_us spill_us, bool recovered) {
    sim_summary *s = th_summary(variant);
    s->complete = true;
    s->requests = s->requests_calling = 10000;
    s->ended[SIM_END_SUCCESS] = ok;
    s->ended[SIM_END_EXHAUSTED] = s->errors = s->bad = 10000 - ok;
    s->requests_in_fault = 1000;
    s->attempts_in_fault = attempts;
    s->cost_usd = cost;
    fb_hist_record_n(&s->latency, 500 * MS, 9800);
    fb_hist_record_n(&s->latency, p99_us, 200);
    for (uint32_t c = 0; c < 2; c++) {
        sim_class_summary *k = &s->classes[c];
        k->requests = k->ended = 5000;
        k->success = c == 0 ? ok - 5000 : 5000;
        k->errors = 5000 - k->success;
        fb_hist_record_n(&k->latency, c == 0 ? 500 * MS : 20 * MS, 5000);
    }
    s->fault_count = 1;
    s->faults[0] = (sim_fault_summary){
        .start_us = 30 * S, .end_us = 70 * S, .spillover_us = spill_us, .recovered = recovered};
    return s;
}

static void verdict_names_the_winner_and_the_incident(void **state) {
    (void)state;
    sim_scenario *sc = th_load(VERDICT_SCENARIO);
    sim_summary *sums[2] = {verdict_run("naive", 6000, 30 * S, 9.25, 40000, 50 * S, false),
                            verdict_run("tuned", 9990, 2 * S, 3.5, 1100, 0, true)};
    sums[1]->success_fallback = 390;
    char v[REP_VERDICT_MAX];
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    assert_string_equal(
        v, "tuned does best against naive on success rate (99.90% against 60.00%), requests "
           "failed or late (0.10% against 40.00%), p99 latency (2.0s against 30.0s), spillover "
           "(0ms against 50.0s+) and cost ($3.50 against $9.25). "
           "The disturbance: api outage 503 from 30.0s to 1m 10s. naive sent 40.0 attempts per "
           "request inside it and was still not back to its baseline 50.0s after it ended, when "
           "the run did. tuned sent 1.10 attempts per request inside it and was back to its "
           "baseline as soon as it ended; its fallback served 3.90% of requests. account never "
           "calls an LLM; the share of its requests that failed or missed the SLO was 0.00% under "
           "naive (p99 20ms) and 0.00% under tuned (p99 20ms).");
    rep_verdict(v, sizeof v, sc, sums, 2, 40); /* wrapped for a terminal: no line beyond 40 */
    for (char *line = v, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1)
        assert_true(nl - line <= 40 || memchr(line, ' ', (size_t)(nl - line)) == NULL);
    free(sums[0]);
    free(sums[1]);
    scn_free(sc);
}

/* The mechanism in the library's words: a p99 at opossum's timeout is said to be that cap, and
 * the breaker's openings are said with its name and its open state's name; a p99 off the
 * timeout, or a layer of fusebox's own keys, says neither (issue 22). */
static void verdict_names_the_mechanism_in_the_library_words(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"m\",\"duration\":\"2m\",\"traffic\":[{\"class\":\"chat\",\"arrivals\":"
        "{\"poisson\":\"10/s\"}}],\"providers\":[{\"name\":\"api\",\"faults\":[{\"at\":\"30s\","
        "\"for\":\"40s\",\"outage\":{\"status\":503}}]}],\"variants\":{"
        "\"sdk\":{\"layers\":[{\"name\":\"sdk\",\"preset\":\"openai-python\"}]},"
        "\"own\":{\"breaker\":{\"consecutive_failures\":5},\"retry\":{\"attempt_timeout\":\"10s\"}}"
        ","
        "\"cb\":{\"layers\":[{\"name\":\"cb\",\"preset\":\"opossum\"},"
        "{\"name\":\"sdk\",\"preset\":\"openai-python\"}]}}}");
    sim_summary *sums[2] = {verdict_run("sdk", 6000, 30 * S, 9.25, 3000, 0, true),
                            verdict_run("cb", 6000, 10 * S, 3.5, 70, 0, true)};
    sums[1]->providers[0].breaker_opens = 162;
    char v[REP_VERDICT_MAX];
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    if (!strstr(v, "cb sent 0.07 attempts per request inside it and was back to its baseline as "
                   "soon as it ended; its p99 latency (10.0s) is opossum's timeout 10000 ms: its "
                   "slowest requests were cut there; its opossum CircuitBreaker went to 'open' "
                   "162 times."))
        fail_msg("%s", v);
    assert_null(strstr(v, "sdk sent 3.00 attempts per request inside it and was back to its "
                          "baseline as soon as it ended;"));
    free(sums[1]);
    sums[1] = verdict_run("own", 6000, 10 * S, 3.5, 70, 0, true);
    sums[1]->providers[0].breaker_opens = 162;
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    if (!strstr(
            v,
            "its p99 latency (10.0s) is the attempt_timeout (10.0s): its slowest requests were cut "
            "there."))
        fail_msg("%s", v);
    assert_null(strstr(v, "went to")); /* fusebox's own breaker: no library words */
    free(sums[0]);
    free(sums[1]);
    scn_free(sc);
}

/* Three variants: the comparison is a table, the best of each column marked, not sentences. */
static void verdict_of_three_variants_is_a_table(void **state) {
    (void)state;
    sim_scenario *sc = th_load(VERDICT_SCENARIO);
    sim_summary *sums[3] = {verdict_run("naive", 6000, 30 * S, 9.25, 40000, 50 * S, false),
                            verdict_run("mid", 9000, 3 * S, 12.0, 2000, 0, true),
                            verdict_run("tuned", 9990, 2 * S, 3.5, 1100, 0, true)};
    char v[REP_VERDICT_MAX];
    rep_verdict(v, sizeof v, sc, sums, 3, 0);
    assert_null(strstr(v, "does best")); /* the table says it */
    assert_non_null(strstr(v, "The disturbance"));
    rep_verdict_table(v, sizeof v, sc, sums, 3);
    assert_non_null(strstr(v, "success rate"));
    const char *row = strstr(v, "\ntuned ");
    assert_non_null(row);
    assert_non_null(strstr(row, "99.90%*"));             /* apart from mid's 90.00% */
    assert_non_null(strstr(row, "$3.50*"));              /* cost: the best */
    assert_null(strstr(strstr(v, "\nmid "), "90.00%*")); /* the next best is not marked */
    assert_non_null(strstr(v, "* the best; = level with the best"));
    for (const char *p = v; *p; p++) assert_false(*p == ' ' && (p[1] == '\n' || p[1] == '\0'));
    sums[0]->cost_usd = 3.51; /* within 2% of tuned's cost: both level */
    rep_verdict_table(v, sizeof v, sc, sums, 3);
    assert_non_null(strstr(strstr(v, "\nnaive "), "$3.51="));
    assert_non_null(strstr(strstr(v, "\ntuned "), "$3.50="));
    assert_int_equal(strlen(rep_verdict_table(v, sizeof v, sc, sums, 2)), 0); /* two: sentences */
    for (int i = 0; i < 3; i++) free(sums[i]);
    scn_free(sc);
}

/* Within noise no variant wins: 99.90% and 99.85% of 10,000, costs 1% apart. */
static void verdict_calls_a_difference_inside_the_noise_level(void **state) {
    (void)state;
    sim_scenario *sc = th_load(VERDICT_SCENARIO);
    sim_summary *sums[2] = {verdict_run("naive", 9985, 2 * S, 3.535, 1200, 0, true),
                            verdict_run("tuned", 9990, 2 * S, 3.5, 1100, 0, true)};
    sums[0]->classes[1].errors = 5; /* collateral damage under naive */
    sums[0]->classes[1].success = 4995;
    char v[REP_VERDICT_MAX];
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    assert_null(strstr(v, "does best"));
    assert_non_null(strstr(v, "Within the 95% binomial interval, success rate (tuned 99.90%, "
                              "naive 99.85%) and requests failed or late (tuned 0.10%, naive "
                              "0.15%) do not tell the best variants apart. Within 2%, the "
                              "variants are level on p99 latency (naive 2.0s, tuned 2.0s), "
                              "spillover (naive 0ms, tuned 0ms) and cost (tuned $3.50, naive "
                              "$3.54). The disturbance"));
    assert_non_null(strstr(v, "was 0.10% under naive (p99 20ms) and 0.00% under tuned"));
    sums[0]->complete = false;
    snprintf(sums[0]->stop_reason, sizeof sums[0]->stop_reason, "in-flight cap reached at 50s");
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    assert_true(strncmp(v,
                        "naive stopped early (in-flight cap reached at 50s): its figures "
                        "cover the simulated time up to then. ",
                        strlen("naive stopped early")) == 0);
    char small[200];
    rep_verdict(small, sizeof small, sc, sums, 2, 0); /* the cap: cut, and said so */
    assert_non_null(strstr(small, "(The verdict is cut here: see the tables.)"));
    assert_true(strlen(small) < sizeof small);
    free(sums[0]);
    free(sums[1]);
    scn_free(sc);
}

/* A variant stopped early has figures of part of the run: set against a whole run it would "do
 * best on cost" for having run less; it is named, and compared with nothing. A p99 of no
 * request (0) is not compared either, the rest is. */
static void verdict_sets_no_stopped_variant_or_empty_p99_against_the_others(void **state) {
    (void)state;
    sim_scenario *sc = th_load(VERDICT_SCENARIO);
    sim_summary *sums[2] = {verdict_run("naive", 9990, 2 * S, 0.5, 1100, 0, true),
                            verdict_run("tuned", 6000, 30 * S, 3.5, 1100, 0, true)};
    sums[0]->complete = false;
    snprintf(sums[0]->stop_reason, sizeof sums[0]->stop_reason, "in-flight cap reached at 5s");
    char v[REP_VERDICT_MAX];
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    assert_non_null(strstr(v, "naive stopped early (in-flight cap reached at 5s): its figures "
                              "cover the simulated time up to then, and are not set against the "
                              "other variants'. "));
    assert_null(strstr(v, "does best"));
    assert_null(strstr(v, "level"));
    assert_null(strstr(v, "do not tell"));
    sums[0]->complete = true;
    fb_hist_clear(&sums[1]->latency); /* tuned: no latency recorded, its p99 reads 0 */
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    assert_non_null(strstr(v, "naive does best against tuned on success rate"));
    assert_null(strstr(v, "p99 latency (0ms"));
    assert_null(strstr(v, "p99 latency (naive"));
    /* 100% of 300 against 98.67% (4 failures against none) is within the noise (Fisher's exact
       test: p = 0.12); the plain binomial interval, no wider than 0 at 100%, called it apart */
    for (int i = 0; i < 2; i++) {
        memset(sums[i]->ended, 0, sizeof sums[i]->ended);
        sums[i]->ended[SIM_END_SUCCESS] = i == 0 ? 300 : 296;
        sums[i]->ended[SIM_END_EXHAUSTED] = sums[i]->errors = sums[i]->bad = i == 0 ? 0 : 4;
    }
    rep_verdict(v, sizeof v, sc, sums, 2, 0);
    assert_null(strstr(v, "on success rate"));
    assert_non_null(strstr(v, "Within the 95% binomial interval, success rate (naive 100.00%, "
                              "tuned 98.67%)"));
    free(sums[0]);
    free(sums[1]);
    scn_free(sc);
}

/* ---- the settings in effect ---- */

/* A variant that names only its attempts and a breaker: the other numbers shown are defaults,
 * filled in by core/ (a variant without "retry" makes one attempt and full jitter is the scenario
 * format's default: the loader's, docs/scenario-format.md). */
static void settings_show_the_defaults_in_effect(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"s\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"poisson\":\"1/s\"}}],\"providers\":[{\"name\":\"api\"},{\"name\":\"backup\"}],"
        "\"variants\":{\"plain\":{\"fallback\":[\"api\",\"backup\"],\"retry\":{\"attempts\":3},"
        "\"breaker\":{}},"
        "\"once\":{\"retry\":{\"attempts\":1,\"budget\":{\"token_bucket\":{}}}}}}");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    rep_settings_html(m, sc, &sc->variants[scn_variant(sc, "plain")]);
    fclose(m);
    assert_non_null(strstr(buf, "<li>retry: 3 attempts (2 retries); backoff exponential from "
                                "500ms &times;2 up to 1m 00s, jitter full;"));
    assert_non_null(strstr(buf, "<li>api: breaker opens after 5 failures in a row, open 1m 00s, "
                                "1 half-open probe, one per pod</li>"));
    assert_non_null(strstr(buf, "<li>backup: breaker opens after 5 failures"));
    assert_non_null(strstr(buf, "<li>retry budget: none</li>"));
    free(buf);
    m = open_memstream(&buf, &len);
    rep_settings_html(m, sc, &sc->variants[scn_variant(sc, "once")]);
    fclose(m);
    assert_non_null(strstr(buf, "<li>retry: 1 attempt (no retries); attempt timeout"));
    assert_non_null(strstr(buf, "<li>retry budget: token bucket of 10 tokens, +0.1 per success"));
    assert_non_null(strstr(buf, "<li>api: no circuit breaker</li>"));
    free(buf);
    scn_free(sc);
}

/* pybreaker's calling() has no half-open limit: the settings say so instead of "N probes". */
static void settings_of_a_breaker_without_a_half_open_limit(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"s\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"poisson\":\"1/s\"}}],\"providers\":[{\"name\":\"api\"}],\"variants\":{"
        "\"calling\":{\"layers\":[{\"name\":\"b\",\"preset\":\"pybreaker\",\"mode\":\"calling\","
        "\"success_threshold\":2}]},"
        "\"call\":{\"layers\":[{\"name\":\"b\",\"preset\":\"pybreaker\"}]}}}");
    /* said in pybreaker's words (its preset's vocabulary): calling() admits every call in
       half-open, and success_threshold successes close */
    const char *want[] = {": pybreaker CircuitBreaker: fail_max 5, reset_timeout 60 s, "
                          "success_threshold 2, mode calling, ",
                          ": pybreaker CircuitBreaker: fail_max 5, reset_timeout 60 s, "
                          "success_threshold 1, mode call, "};
    const char *names[] = {"calling", "call"};
    for (int i = 0; i < 2; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        assert_non_null(m);
        rep_settings_html(m, sc, &sc->variants[scn_variant(sc, names[i])]);
        fclose(m);
        if (strstr(buf, want[i]) == NULL) fail_msg("'%s' not in '%s'", want[i], buf);
        free(buf);
    }
    scn_free(sc);
}

/* LiteLLM's deployment cooldown is said as LiteLLM does it: at the first 429 in a group of several,
 * for the Retry-After, ending by itself; never a breaker with half-open probes it does not have. */
static void settings_say_a_litellm_cooldown_in_its_words(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"s\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"poisson\":\"1/"
        "s\"}}],\"providers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}],"
        "\"variants\":{\"ll\":{\"layers\":[{\"name\":\"gw\",\"preset\":\"litellm\",\"model_list\":["
        "{\"model_name\":\"g\",\"provider\":\"a\"},{\"model_name\":\"g\",\"provider\":\"b\"},"
        "{\"model_name\":\"h\",\"provider\":\"c\"}],\"fallbacks\":[{\"g\":[\"h\"]}]}]},"
        "\"v1\":{\"layers\":[{\"name\":\"gw\",\"preset\":\"litellm\",\"allowed_fails\":2,"
        "\"cooldown_time\":30}]}}}");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    rep_settings_html(m, sc, &sc->variants[scn_variant(sc, "ll")]);
    fclose(m);
    if (!strstr(buf, "<li>a: LiteLLM cooldown at the first 429; otherwise when more than 50% of at "
                     "least 5 requests counted within 1m 00s failed; it lasts the error&#39;s "
                     "Retry-After, else cooldown_time 5 s and ends by itself (no half-open)"))
        fail_msg("%s", buf);
    assert_non_null(strstr(buf, "<li>c: LiteLLM cooldown when all of at least 1000 requests"));
    assert_null(strstr(buf, "c: LiteLLM cooldown at the first 429")); /* c is alone in h */
    assert_null(strstr(buf, "half-open probe"));
    free(buf);
    m = open_memstream(&buf, &len);
    rep_settings_html(m, sc, &sc->variants[scn_variant(sc, "v1")]);
    fclose(m);
    if (!strstr(
            buf,
            "<li>a: LiteLLM cooldown at more than 2 failures (allowed_fails, or its "
            "exception class&#39;s) counted within 30.0s of the first; it lasts the error&#39;s "
            "Retry-After, else cooldown_time 30 s"))
        fail_msg("%s", buf);
    free(buf);
    scn_free(sc);
}

/* The fleet's and the client limits' rows: absent from a run that uses none of them, and each
 * feature's rows (with their values) exactly when the scenario uses that feature. */
static void text_summary_shows_a_feature_rows_only_when_it_is_used(void **state) {
    fixture *f = *state;
    static const char *const labels[] = {"limit rejections", "hedges",           "connection waits",
                                         "pods peak",        "re-submissions",   "serial lag",
                                         "pod requests min", "store unreachable"};
    char *t = text_of(f);
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) assert_null(strstr(t, labels[i]));
    free(t);
    f->sc->variants[0].autoscale.on = true;
    f->sc->classes[0].resubmit.probability = 0.5;
    f->sc->store_outage_count = 1;
    f->sum->fleet.pods_peak = 12;
    f->sum->fleet.pod_seconds = 6.5 * 60; /* 6.5 pods over the 60 s run */
    f->sum->fleet.pods_added = 9;
    f->sum->fleet.resubmissions = 1234;
    f->sum->fleet.store_unreachable = 77;
    f->sum->end_us = 60 * S;
    t = text_of(f);
    assert_non_null(strstr(t, "\npods peak                             12\n"));
    assert_non_null(strstr(t, "\n  pods mean                          6.5\n"));
    assert_non_null(strstr(t, "\n  pods added                           9\n"));
    assert_non_null(strstr(t, "\nre-submissions                      1234\n"));
    assert_non_null(strstr(t, "\nstore unreachable                     77\n"));
    assert_non_null(strstr(t, "\n  store records lost                   0\n"));
    /* the features the scenario does not use stay out */
    assert_null(strstr(t, "limit rejections"));
    assert_null(strstr(t, "connection waits"));
    assert_null(strstr(t, "serial lag"));
    free(t);
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
        cmocka_unit_test_setup_teardown(reason_for_a_fault_followed_by_another, setup, teardown),
        cmocka_unit_test_setup_teardown(reason_for_faults_that_run_into_each_other, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reason_for_a_fault_active_at_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(text_summary_shows_a_feature_rows_only_when_it_is_used,
                                        setup, teardown),
        cmocka_unit_test(verdict_names_the_winner_and_the_incident),
        cmocka_unit_test(verdict_of_three_variants_is_a_table),
        cmocka_unit_test(verdict_calls_a_difference_inside_the_noise_level),
        cmocka_unit_test(verdict_sets_no_stopped_variant_or_empty_p99_against_the_others),
        cmocka_unit_test(verdict_names_the_mechanism_in_the_library_words),
        cmocka_unit_test(settings_show_the_defaults_in_effect),
        cmocka_unit_test(settings_of_a_breaker_without_a_half_open_limit),
        cmocka_unit_test(settings_say_a_litellm_cooldown_in_its_words),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
