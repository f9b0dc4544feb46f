/*
 * test_breakdown.c - the breakdown a run counts (requests by their calls, calls by their
 * answer, fault windows), the scenario's "observed" figures, and the log beside a
 * variant against the tolerances (reports/breakdown.h). The scenarios are built so that
 * every count is known in advance: constant arrivals, faults with fraction 1.
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

#include "reports/breakdown.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

/* 10 requests/s for 60 s; an outage answers 503 to every call in [10s, 20s); each request
 * retries once, 20 s later: a request that arrives in the window fails its first call and
 * succeeds on the second (after the window), every other one succeeds at once. */
#define FIRST_FAILS                                                                                \
    "{\"name\":\"f\",\"duration\":\"1m\",\"pods\":{\"workers\":1000},"                             \
    "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"10/s\"}}],"                        \
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"100ms\",\"error\":\"10ms\"},"          \
    "\"faults\":[{\"at\":\"10s\",\"for\":\"10s\",\"outage\":{\"status\":503}}]}],"                 \
    "\"policy\":{\"retry\":{\"attempts\":2,\"backoff\":{\"constant\":\"20s\"},"                    \
    "\"jitter\":\"none\"}}"

static void breakdown_first_attempt_fails_in_the_window(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FIRST_FAILS "}");
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    const sim_breakdown *b = &s->breakdown;
    assert_int_equal(b->per_request[0], 0);
    assert_int_equal(b->per_request[1], 500);
    assert_int_equal(b->per_request[2], 100);
    for (int k = 3; k < SIM_ATTEMPT_BUCKETS; k++) assert_int_equal(b->per_request[k], 0);
    assert_int_equal(b->per_request_beyond, 0);
    assert_int_equal(b->status[200], 600);
    assert_int_equal(b->status[503], 100);
    uint64_t statuses = 0;
    for (int k = 0; k < SIM_STATUS_MAX; k++) statuses += b->status[k];
    for (int k = 0; k < SIM_ANSWER_WORDS; k++) statuses += b->words[k];
    assert_int_equal(statuses, s->attempts); /* every call answered once */
    assert_int_equal(b->window_count, 1);
    const sim_window_summary *w = &b->windows[0];
    assert_int_equal(w->start_us, 10 * S);
    assert_int_equal(w->end_us, 20 * S);
    assert_int_equal(w->requests, 100);
    assert_int_equal(w->attempts, 200);
    assert_int_equal(w->success, 100);
    /* 10 ms error, 20 s wait, 100 ms answer */
    assert_int_equal(w->latency_p50_us, w->latency_p99_us);
    assert_true(w->latency_p50_us >= 20 * S + 100 * MS && w->latency_p50_us < 20 * S + 200 * MS);
    free(s);
    scn_free(sc);
}

static void breakdown_counts_timeouts_and_resets(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"h\",\"duration\":\"1m\","
                "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"5/s\"}}],"
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"100ms\"},"
                "\"faults\":[{\"at\":\"20s\",\"for\":\"10s\",\"hang\":{}},"
                "{\"at\":\"40s\",\"for\":\"2s\",\"reset\":{}}]}],"
                "\"policy\":{\"retry\":{\"attempts\":1,\"attempt_timeout\":\"2s\"}}}");
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    const sim_breakdown *b = &s->breakdown;
    assert_int_equal(b->words[SIM_ANSWER_TIMEOUT], 50);
    assert_int_equal(b->words[SIM_ANSWER_RESET], 10);
    assert_int_equal(b->words[SIM_ANSWER_BROKEN], 0);
    assert_int_equal(b->status[200], 300 - 60);
    assert_int_equal(b->per_request[1], 300);
    assert_int_equal(b->window_count, 2);
    assert_int_equal(b->windows[0].requests, 50);
    assert_int_equal(b->windows[0].success, 0);
    assert_int_equal(b->windows[1].requests, 10);
    assert_string_equal(sim_answer_word_name(SIM_ANSWER_RESET), "reset");
    free(s);
    scn_free(sc);
}

/* 40 attempts per request with no wait into a permanent outage: past the buckets. */
static void breakdown_counts_requests_past_the_last_bucket(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"m\",\"duration\":\"10s\","
                "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/s\"}}],"
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"error\":\"1ms\"},"
                "\"faults\":[{\"at\":\"0s\",\"for\":\"1h\",\"outage\":{\"status\":500}}]}],"
                "\"policy\":{\"retry\":{\"attempts\":40,\"backoff\":\"none\"}}}");
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    assert_int_equal(s->breakdown.per_request_beyond, 10);
    for (int k = 0; k < SIM_ATTEMPT_BUCKETS; k++) assert_int_equal(s->breakdown.per_request[k], 0);
    assert_int_equal(s->breakdown.status[500], 400);
    free(s);
    scn_free(sc);
}

static void breakdown_is_the_same_for_the_same_seed(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"d\",\"duration\":\"1m\","
                "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"poisson\":\"20/s\"}}],"
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"10s\",\"for\":\"20s\","
                "\"outage\":{\"status\":529,\"fraction\":0.4}}]}]}");
    sim_summary *a = th_run(sc, 0, NULL, NULL);
    sim_summary *b = th_run(sc, 0, NULL, NULL);
    assert_memory_equal(&a->breakdown, &b->breakdown, sizeof a->breakdown);
    assert_true(a->breakdown.status[529] > 0);
    free(a);
    free(b);
    scn_free(sc);
}

/* ---- "observed": the log's figures, and the log beside a variant ---- */

#define OBSERVED(extra)                                                                            \
    FIRST_FAILS ",\"observed\":{\"variant\":\"default\",\"requests\":600,\"attempts\":700,"        \
                "\"retries\":100,\"latency_p50\":0.1,\"latency_p90\":20.1,\"latency_p99\":20.1,"   \
                "\"attempts_per_request\":{\"1\":500,\"2\":100},"                                  \
                "\"status\":{\"200\":600,\"503\":100}," extra "\"end\":{\"success\":600}}}"

static const rep_figure *figure(const rep_figure *g, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(g[i].name, name) == 0) return &g[i];
    fail_msg("no figure %s", name);
    return NULL;
}

static void observed_matches_the_run_it_describes(void **state) {
    (void)state;
    sim_scenario *sc = th_load(OBSERVED(""));
    assert_true(sc->observed.present);
    assert_int_equal(sc->observed.per_request[2], 100);
    assert_int_equal(sc->observed.latency_p90_us, 20100 * MS);
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    rep_figure g[REP_FIGURES_MAX];
    size_t n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    for (size_t i = 0; i < n; i++)
        if (!g[i].within) fail_msg("%s: log %g, run %g", g[i].name, g[i].log, g[i].sim);
    assert_int_equal(figure(g, n, "attempts/request 2")->sim, 100);
    assert_int_equal(figure(g, n, "status 503")->log, 100);
    assert_true(figure(g, n, "retries")->within_tolerance);
    free(s);
    scn_free(sc);
}

/* The same log beside a run with one attempt: every retry figure misses. */
static void observed_misses_name_the_figure(void **state) {
    (void)state;
    const char *sets[] = {"policy.retry.attempts=1"};
    sim_scenario *sc = th_load_with(OBSERVED(""), sets, 1, NULL);
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    rep_figure g[REP_FIGURES_MAX];
    size_t n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_false(figure(g, n, "attempts")->within);           /* 600 against 700 */
    assert_false(figure(g, n, "retries")->within);            /* 0 against 100 */
    assert_false(figure(g, n, "attempts/request 2")->within); /* 0% against 16.7% */
    assert_false(figure(g, n, "end exhausted")->within);      /* 100 against 0 */
    assert_true(figure(g, n, "requests")->within);
    assert_true(figure(g, n, "status 503")->within); /* the first calls fail either way */
    free(s);
    scn_free(sc);
}

/* A count within 2% or 2, and a count within its stated noise though outside the 2%. */
static void observed_tolerance_and_noise(void **state) {
    (void)state;
    sim_scenario *sc = th_load(OBSERVED(""));
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    rep_figure g[REP_FIGURES_MAX];
    sc->observed.attempts = 714; /* 700 run: 2% of 714 is 14.28 */
    size_t n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_true(figure(g, n, "attempts")->within);
    sc->observed.attempts = 715; /* 2% of 715 is 14.3: 15 is out */
    n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_false(figure(g, n, "attempts")->within);
    snprintf(sc->observed.noise_name[0], sizeof sc->observed.noise_name[0], "attempts");
    sc->observed.noise[0] = 15;
    sc->observed.noise_n = 1;
    n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_true(figure(g, n, "attempts")->within);
    assert_false(figure(g, n, "attempts")->within_tolerance);
    sc->observed.noise_n = 0;
    sc->observed.status[503] = 102; /* at least 2 for small counts */
    n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_true(figure(g, n, "status 503")->within);
    sc->observed.latency_p90_us = 18 * S; /* 20.1 s run: 11.7% over */
    n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_false(figure(g, n, "latency_p90")->within);
    sc->observed.present = false;
    assert_int_equal(rep_observed_figures(sc, s, g, REP_FIGURES_MAX), 0);
    free(s);
    scn_free(sc);
}

static void observed_bad_input_names_the_path(void **state) {
    (void)state;
    static const struct {
        const char *extra, *path;
    } cases[] = {
        {"\"attempts_beyond\":-1,", "observed.attempts_beyond"},
        {"\"noise\":{\"attempts\":-1},", "observed.noise.attempts"},
        {"\"windows\":[{\"name\":\"w\",\"start_s\":1}],", "observed.windows[0]"},
        {"\"latency_ranks\":{\"latency_p95\":{}},", "observed.latency_ranks.latency_p95"},
        {"\"latency_ranks\":{\"latency_p90\":{\"from\":0.88,\"to\":0.92,\"lo\":1}},",
         "observed.latency_ranks.latency_p90"}, /* missing required key 'hi' */
        {"\"latency_ranks\":{\"latency_p90\":{\"from\":0.92,\"to\":0.88,\"lo\":1,\"hi\":2}},",
         "observed.latency_ranks.latency_p90"},
        {"\"latency_ranks\":{\"latency_p90\":{\"from\":0.88,\"to\":1.5,\"lo\":1,\"hi\":2}},",
         "observed.latency_ranks.latency_p90.to"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[4096];
        snprintf(json, sizeof json, "%s", OBSERVED("%s"));
        char doc[4096];
        snprintf(doc, sizeof doc, json, cases[i].extra);
        sim_scenario *sc = NULL;
        sim_error err;
        assert_int_not_equal(scn_parse(doc, strlen(doc), "t.json", NULL, 0, NULL, &sc, &err),
                             FB_OK);
        if (strcmp(err.path, cases[i].path) != 0)
            fail_msg("case %zu: path %s, want %s (%s)", i, err.path, cases[i].path, err.msg);
    }
    static const struct {
        const char *doc, *path;
    } maps[] = {
        {FIRST_FAILS ",\"observed\":{\"variant\":\"default\",\"requests\":1,\"attempts\":1,"
                     "\"status\":{\"99\":1}}}",
         "observed.status.99"},
        {FIRST_FAILS ",\"observed\":{\"variant\":\"default\",\"requests\":1,\"attempts\":1,"
                     "\"attempts_per_request\":{\"32\":1}}}",
         "observed.attempts_per_request.32"},
        {FIRST_FAILS ",\"observed\":{\"variant\":\"default\",\"requests\":1,\"attempts\":1,"
                     "\"end\":{\"ok\":1}}}",
         "observed.end.ok"},
    };
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        sim_scenario *sc = NULL;
        sim_error err;
        assert_int_not_equal(
            scn_parse(maps[i].doc, strlen(maps[i].doc), "t.json", NULL, 0, NULL, &sc, &err), FB_OK);
        if (strcmp(err.path, maps[i].path) != 0)
            fail_msg("map %zu: path %s, want %s (%s)", i, err.path, maps[i].path, err.msg);
    }
    const char *bad_variant =
        FIRST_FAILS ",\"observed\":{\"variant\":\"nope\",\"requests\":1,\"attempts\":1}}";
    sim_scenario *sc = NULL;
    sim_error err;
    assert_int_not_equal(
        scn_parse(bad_variant, strlen(bad_variant), "t.json", NULL, 0, NULL, &sc, &err), FB_OK);
    assert_string_equal(err.path, "observed.variant");
}

/* The shape of tests/e2e/import.sh's traced run whose p99 was judged a miss (2.6 s in the log,
   4.6 s replayed, noise +-312 ms over ten seeds): of 290 requests, 286 within 2.4 s and 4 that
   met two hangs at about 4.5 s. The replay's p99 is one of those 4; three of them in the
   log (its p99 2.6 s) is a draw of the same noise, and the spread toward it reaches over the
   cliff. Above, and on a tail without a cliff, the spread is a few of its neighbours' gaps. */
static void quantile_spread_reaches_over_a_cliff(void **state) {
    (void)state;
    fb_hist h, even;
    fb_hist_init(&h);
    fb_hist_init(&even);
    for (int64_t i = 0; i < 286; i++) fb_hist_record(&h, 150000 + i * 8000);
    for (int64_t i = 0; i < 4; i++) fb_hist_record(&h, 4500000 + i * 50000);
    for (int64_t i = 0; i < 290; i++) fb_hist_record(&even, 150000 + i * 8000);
    double p99 = (double)fb_hist_percentile(&h, 99);
    assert_true(p99 > 4.4e6);
    double down = rep_quantile_spread(&h, 0.99, 2.6e6), up = rep_quantile_spread(&h, 0.99, 5e6);
    if (down < p99 - 2.6e6 || up > 0.3e6 || up <= 0)
        fail_msg("p99 %.0f us: spread %.0f us down, %.0f us up", p99, down, up);
    double smooth = rep_quantile_spread(&even, 0.99, 0), mid = rep_quantile_spread(&even, 0.5, 0);
    if (smooth <= 0 || smooth > 0.1e6 || mid < 0.15e6 || mid > 0.3e6)
        fail_msg("even: p99 spread %.0f us, p50 %.0f us", smooth, mid);
    fb_hist_init(&h);
    assert_true(rep_quantile_spread(&h, 0.99, 0) == 0);
}

/* ---- a quantile on a cliff (observed.latency_ranks; docs/import.md, "Fidelity") ---- */

/* n latencies (microseconds): fast of them from 150 ms up, mid from 700 ms, the rest from 1.2 s
   (corpus trace ratelimit's shape: requests of one, two and three attempts), sorted. */
static int64_t *clusters(size_t n, size_t fast, size_t mid) {
    int64_t *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = i < fast         ? 150000 + (int64_t)i * 150
               : i < fast + mid ? 700000 + (int64_t)(i - fast) * 1500
                                : 1200000 + (int64_t)(i - fast - mid) * 2000;
    return v;
}

/* The log: 812 of 1,000 requests fast, 87 of two attempts, 101 of three, so its p90 (rank 900)
   is the fastest of three attempts, 1.2 s, on the cliff down to the two-attempt ones (830 ms
   and below). A replay one point richer in two-attempt requests has its p90 among those:
   33% short, and within 10% of the log's own p88.1 (rank 882; the rank band: 2 binomial sd at n =
   1,000, 1.9 points). A replay whose distribution is off (its p90 among the fast requests; every
   latency 30% longer on a log without a cliff) still misses. */
static void quantile_on_a_cliff_passes_and_one_off_it_fails(void **state) {
    (void)state;
    int64_t *log = clusters(1000, 812, 87), *close = clusters(1000, 812, 97);
    int64_t *fast = clusters(1000, 905, 20);
    double l = (double)scn_obs_order_statistic(log, 1000, 0.9);
    assert_true(l == 1200000);
    assert_true(fabs(scn_obs_rank_tolerance(0.9, 1000) - 0.018974) < 1e-6);
    assert_true(scn_obs_rank_tolerance(0.5, 100) == SIM_OBS_SHARE_TOLERANCE); /* 2 points */
    sim_obs_rank r = scn_obs_rank_band(log, 1000, 0.9);
    assert_true(r.present && fabs(r.from - 0.881026) < 1e-9 && fabs(r.to - 0.918974) < 1e-9);
    assert_true(r.lo_us == log[882 - 1] && r.hi_us == log[919 - 1]);
    bool cliff = false;
    double near = (double)scn_obs_order_statistic(close, 1000, 0.9);
    if (!rep_latency_within(l, near, &r, &cliff) || !cliff || fabs(near - l) <= 0.1 * l)
        fail_msg("replay p90 %.0f us against the log's %.0f (band %.0f..%.0f): cliff %d", near, l,
                 (double)r.lo_us, (double)r.hi_us, cliff);
    assert_false(rep_latency_within(l, near, NULL, NULL)); /* no band: a miss */
    double off = (double)scn_obs_order_statistic(fast, 1000, 0.9);
    assert_true(off < 400000);
    assert_false(rep_latency_within(l, off, &r, &cliff));
    assert_false(cliff);
    assert_true(rep_latency_within(l, 1.05 * l, &r, &cliff) && !cliff); /* within 10%: no cliff */
    /* no cliff: 1,000 latencies evenly from 100 ms to 1.1 s, and every one 30% longer */
    int64_t even[1000];
    for (int i = 0; i < 1000; i++) even[i] = 100000 + i * 1000;
    sim_obs_rank e = scn_obs_rank_band(even, 1000, 0.9);
    double le = (double)scn_obs_order_statistic(even, 1000, 0.9);
    assert_false(rep_latency_within(le, 1.3 * le, &e, &cliff));
    assert_false(rep_latency_within(le, 0.75 * le, &e, &cliff));
    free(log);
    free(close);
    free(fast);
}

/* The same rule through "observed": the run's p90 (20.1 s: 100 of its 600 requests waited for a
   retry) against a log whose p90 sat on the fast side of that cliff (0.1 s) misses, unless the
   log states its band reaching over the cliff; the table's mark says which. */
static void observed_latency_ranks_mark_a_cliff(void **state) {
    (void)state;
    sim_scenario *sc = th_load(OBSERVED(
        "\"latency_ranks\":{\"latency_p90\":{\"from\":0.88,\"to\":0.92,\"lo\":0.1,\"hi\":20.0}},"));
    assert_true(sc->observed.latency_rank[1].present && !sc->observed.latency_rank[0].present);
    assert_int_equal(sc->observed.latency_rank[1].hi_us, 20 * S);
    sc->observed.latency_p90_us = 100 * MS;
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    rep_figure g[REP_FIGURES_MAX];
    size_t n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    const rep_figure *p90 = figure(g, n, "latency_p90");
    assert_true(p90->within && p90->within_tolerance && p90->cliff);
    char mark[96];
    rep_figure_mark(mark, sizeof mark, p90);
    assert_string_equal(mark, "  (on a cliff: within 10% of the log's p88..p92)");
    sc->observed.latency_rank[1].hi_us = 18 * S; /* 20.1 s is more than 10% above */
    n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    p90 = figure(g, n, "latency_p90");
    assert_false(p90->within || p90->cliff);
    rep_figure_mark(mark, sizeof mark, p90);
    assert_string_equal(mark, "  MISS");
    sc->observed.latency_rank[1].present = false;
    sc->observed.latency_rank[1].hi_us = 20 * S;
    n = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    assert_false(figure(g, n, "latency_p90")->within);
    free(s);
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(breakdown_first_attempt_fails_in_the_window),
        cmocka_unit_test(breakdown_counts_timeouts_and_resets),
        cmocka_unit_test(breakdown_counts_requests_past_the_last_bucket),
        cmocka_unit_test(breakdown_is_the_same_for_the_same_seed),
        cmocka_unit_test(observed_matches_the_run_it_describes),
        cmocka_unit_test(observed_misses_name_the_figure),
        cmocka_unit_test(observed_tolerance_and_noise),
        cmocka_unit_test(observed_bad_input_names_the_path),
        cmocka_unit_test(quantile_spread_reaches_over_a_cliff),
        cmocka_unit_test(quantile_on_a_cliff_passes_and_one_off_it_fails),
        cmocka_unit_test(observed_latency_ranks_mark_a_cliff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
