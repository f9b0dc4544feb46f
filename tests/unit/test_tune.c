/*
 * test_tune.c - fusebox tune's search pieces: the successive-halving plan and
 * its cost, range knobs cut into levels, and a search over two scenarios that
 * keeps to its budget, finds the grid's best on a grid small enough to check
 * exhaustively, and decides the same whatever order the runs come back in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/tune.h"
#include "tests/unit/helpers.h"
#include "util/mem.h"

static void plan_fidelities_are_thirds_up_to_the_seeds(void **state) {
    (void)state;
    static const struct {
        uint32_t seeds, rungs, f[4];
    } cases[] = {
        {1, 1, {1}}, {3, 2, {1, 3}}, {5, 3, {1, 2, 5}}, {9, 3, {1, 3, 9}}, {10, 4, {1, 2, 4, 10}}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint32_t f[SWEEP_TUNE_RUNGS_MAX];
        uint64_t keep[SWEEP_TUNE_RUNGS_MAX];
        uint32_t r = sweep_tune_plan(1000, cases[c].seeds, 1, 1000000, f, keep);
        assert_int_equal(r, cases[c].rungs);
        for (uint32_t i = 0; i < r; i++) assert_int_equal(f[i], cases[c].f[i]);
    }
}

static void plan_cost_counts_each_seed_once(void **state) {
    (void)state;
    /* 28 candidates on seed 0, the best 10 on seeds 1 and 2, in 5 scenarios */
    assert_int_equal(sweep_tune_plan_cost(28, 3, 5), 5 * (28 * 1 + 10 * 2));
    /* 9 seeds: 1, 3, 9 -> 30 on 1 seed, 10 on 2 more, 4 on 6 more */
    assert_int_equal(sweep_tune_plan_cost(30, 9, 1), 30 + 10 * 2 + 4 * 6);
    assert_int_equal(sweep_tune_plan_cost(7, 1, 2), 14);
}

static void plan_takes_the_most_candidates_that_fit(void **state) {
    (void)state;
    uint32_t f[SWEEP_TUNE_RUNGS_MAX];
    uint64_t keep[SWEEP_TUNE_RUNGS_MAX];
    for (uint64_t runs = 20; runs < 2000; runs += 37) {
        uint32_t r = sweep_tune_plan(243, 3, 5, runs, f, keep);
        if (sweep_tune_plan_cost(3, 3, 5) > runs) {
            assert_int_equal(r, 0);
            continue;
        }
        assert_int_equal(r, 2);
        assert_true(keep[0] <= 243);
        assert_true(sweep_tune_plan_cost(keep[0], 3, 5) <= runs);
        if (keep[0] < 243) assert_true(sweep_tune_plan_cost(keep[0] + 1, 3, 5) > runs);
        assert_int_equal(keep[1], (keep[0] + 2) / 3);
    }
    /* more budget than the grid: every point */
    assert_int_equal(sweep_tune_plan(10, 3, 1, 1000, f, keep), 2);
    assert_int_equal(keep[0], 10);
    assert_int_equal(sweep_tune_plan(0, 3, 1, 1000, f, keep), 0);
}

static void knob_ok(const char *arg, uint32_t levels, const char *want) {
    char out[512], msg[512];
    if (sweep_tune_knob_values(arg, levels, out, sizeof out, msg, sizeof msg) != FB_OK)
        fail_msg("'%s' rejected: %s", arg, msg);
    if (strcmp(out, want) != 0) fail_msg("'%s' -> '%s', expected '%s'", arg, out, want);
}

static void knob_bad(const char *arg, const char *fragment) {
    char out[512], msg[512] = "";
    if (sweep_tune_knob_values(arg, 5, out, sizeof out, msg, sizeof msg) == FB_OK)
        fail_msg("accepted: %s -> %s", arg, out);
    if (strstr(msg, fragment) == NULL)
        fail_msg("'%s': message '%s' lacks '%s'", arg, msg, fragment);
    if (strstr(msg, "--knob") == NULL) fail_msg("'%s': message '%s' names no --knob", arg, msg);
}

static void knobs_cut_ranges_into_levels(void **state) {
    (void)state;
    knob_ok("breaker.open=5s,10s,20s", 5, "breaker.open=5s,10s,20s");
    knob_ok("breaker.open=5s..60s", 4, "breaker.open=5s,23333ms,41667ms,60s");
    knob_ok("breaker.failure_rate=0.2..0.8", 4, "breaker.failure_rate=0.2,0.4,0.6,0.8");
    knob_ok("retry.attempts=1..6", 4, "retry.attempts=1,3,4,6");
    knob_ok("retry.attempts=1..2", 5, "retry.attempts=1,2"); /* duplicates dropped */
    knob_ok("breaker.open=log:1s..100s", 3, "breaker.open=1s,10s,100s");
    knob_bad("breaker.open=5s..5s", "low end must be below");
    knob_bad("breaker.open=", "no values");
    knob_bad("breaker.open", "");
}

/* ---- a search over two scenarios, runs made in process ---- */

typedef struct runner {
    uint64_t runs;
    bool reverse; /* run each batch back to front */
} runner;

static int run_tasks(void *ctx, const sweep_tune_run *runs, size_t n) {
    runner *r = ctx;
    double values[256];
    for (size_t j = 0; j < n; j++) {
        sweep *sw = runs[r->reverse ? n - 1 - j : j].sw;
        uint64_t task = runs[r->reverse ? n - 1 - j : j].task;
        assert_true(sweep_metric_count(sw) <= 256);
        char msg[256] = "";
        int rc = sweep_run_task(sw, task, values, msg, sizeof msg);
        sweep_set_result(sw, task, rc, values, msg);
        r->runs++;
    }
    return FB_OK;
}

static const char *const files[] = {"tests/e2e/tune/outage.json", "tests/e2e/tune/rate-limit.json"};
static const char *const knobs[] = {"retry.attempts=1,2,3", "breaker.open=5s,10s,20s",
                                    "breaker.failure_rate=0.3,0.5,0.7"};

static sweep_tune *make_with(uint64_t budget, bool exhaustive, sweep_tune_method search) {
    sweep_tune_args a;
    memset(&a, 0, sizeof a);
    a.scenario_files = files;
    a.scenario_count = 2;
    a.knobs = knobs;
    a.knob_count = 3;
    a.seeds = 2;
    a.objective = "cost_usd";
    a.sense = 1;
    a.subject_to = "success_rate>=0.97";
    a.budget = budget;
    a.exhaustive = exhaustive;
    a.search = search;
    sweep_tune *t = NULL;
    char msg[1024];
    if (sweep_tune_create(&a, &t, msg, sizeof msg) != FB_OK) fail_msg("create: %s", msg);
    return t;
}

static sweep_tune *make(uint64_t budget, bool exhaustive) {
    return make_with(budget, exhaustive, SWEEP_TUNE_HALVING);
}

static char *answer_of(sweep_tune *t, char *(*json)) {
    char *buf = NULL, *jbuf = NULL;
    size_t len = 0, jlen = 0;
    FILE *f = open_memstream(&buf, &len);
    sweep_tune_write_answer(f, t);
    fclose(f);
    f = open_memstream(&jbuf, &jlen);
    sweep_tune_write_json(f, t);
    fclose(f);
    *json = jbuf;
    return buf;
}

static double json_number(const char *json, const char *after, const char *key) {
    const char *p = strstr(json, after);
    assert_non_null(p);
    p = strstr(p, key);
    assert_non_null(p);
    return strtod(p + strlen(key), NULL);
}

static void search_keeps_its_budget_and_finds_the_grid_best(void **state) {
    (void)state;
    char msg[1024];
    /* the full grid: 27 points x 2 seeds x 2 scenarios = 108 runs */
    sweep_tune *full = make(0, true);
    runner rf = {0, false};
    if (sweep_tune_search(full, run_tasks, &rf, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    assert_int_equal(sweep_tune_full_runs(full), 108);
    assert_int_equal(sweep_tune_search_runs(full), 108);

    sweep_tune *t = make(40, false);
    runner r = {0, false};
    if (sweep_tune_search(t, run_tasks, &r, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    assert_true(sweep_tune_search_runs(t) <= 40);
    assert_true(r.runs > sweep_tune_search_runs(t)); /* plus the report's runs */

    char *fj = NULL, *tj = NULL;
    char *fa = answer_of(full, &fj), *ta = answer_of(t, &tj);
    double best = json_number(fj, "\"recommendation\"", "\"objective\": ");
    double noise = json_number(fj, "\"recommendation\"", "\"noise\": ");
    double got = json_number(tj, "\"recommendation\"", "\"objective\": ");
    if (!(got <= best + noise && got >= best))
        fail_msg("tune's worst case %.6g vs the grid's best %.6g +/- %.6g", got, best, noise);
    assert_non_null(strstr(ta, "recommended:"));
    assert_non_null(strstr(ta, "sensitivity"));
    assert_non_null(strstr(tj, "\"budget\": 40"));

    /* the same decisions when the runs come back in another order */
    sweep_tune *t2 = make(40, false);
    runner r2 = {0, true};
    if (sweep_tune_search(t2, run_tasks, &r2, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    char *t2j = NULL, *t2a = answer_of(t2, &t2j);
    assert_string_equal(t2j, tj);
    assert_string_equal(t2a, ta);
    free(fa);
    free(fj);
    free(ta);
    free(tj);
    free(t2a);
    free(t2j);
    sweep_tune_destroy(full);
    sweep_tune_destroy(t);
    sweep_tune_destroy(t2);
}

/* --search direct: the same budget and oracle, the same bytes whatever the order of the runs. */
static void direct_search_keeps_its_budget_and_repeats(void **state) {
    (void)state;
    char msg[1024];
    sweep_tune *full = make(0, true);
    runner rf = {0, false};
    if (sweep_tune_search(full, run_tasks, &rf, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    sweep_tune *t = make_with(40, false, SWEEP_TUNE_DIRECT),
               *t2 = make_with(40, false, SWEEP_TUNE_DIRECT);
    runner r = {0, false}, r2 = {0, true};
    if (sweep_tune_search(t, run_tasks, &r, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    if (sweep_tune_search(t2, run_tasks, &r2, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    assert_true(sweep_tune_search_runs(t) <= 40);
    char *fj = NULL, *tj = NULL, *t2j = NULL;
    char *fa = answer_of(full, &fj), *ta = answer_of(t, &tj), *t2a = answer_of(t2, &t2j);
    assert_non_null(strstr(tj, "\"method\": \"direct\""));
    assert_non_null(strstr(ta, "NLopt GN_DIRECT_L: "));
    double best = json_number(fj, "\"recommendation\"", "\"objective\": ");
    double noise = json_number(fj, "\"recommendation\"", "\"noise\": ");
    double got = json_number(tj, "\"recommendation\"", "\"objective\": ");
    if (!(got <= best + noise && got >= best))
        fail_msg("direct's worst case %.6g vs the grid's best %.6g +/- %.6g", got, best, noise);
    assert_string_equal(t2j, tj);
    assert_string_equal(t2a, ta);
    free(fa);
    free(fj);
    free(ta);
    free(tj);
    free(t2a);
    free(t2j);
    sweep_tune_destroy(full);
    sweep_tune_destroy(t);
    sweep_tune_destroy(t2);
}

/*
 * --search nlopt (the CLI's default): halving's search, then NLopt's COBYLA on
 * the budget left. At every budget it runs what halving runs first, so its
 * recommendation is never worse than halving's; with budget left it runs
 * COBYLA; the same bytes whatever the order of the runs.
 */
static void nlopt_search_is_halving_then_cobyla(void **state) {
    (void)state;
    char msg[1024];
    bool cobyla_ran = false;
    for (uint64_t budget = 20; budget <= 100; budget += 8) {
        sweep_tune *h = make_with(budget, false, SWEEP_TUNE_HALVING),
                   *n = make_with(budget, false, SWEEP_TUNE_NLOPT),
                   *n2 = make_with(budget, false, SWEEP_TUNE_NLOPT);
        runner rh = {0, false}, rn = {0, false}, rn2 = {0, true};
        if (sweep_tune_search(h, run_tasks, &rh, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
        if (sweep_tune_search(n, run_tasks, &rn, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
        if (sweep_tune_search(n2, run_tasks, &rn2, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
        assert_true(sweep_tune_search_runs(n) <= budget);
        assert_true(sweep_tune_search_runs(n) >= sweep_tune_search_runs(h));
        char *hj = NULL, *nj = NULL, *n2j = NULL;
        char *ha = answer_of(h, &hj), *na = answer_of(n, &nj), *n2a = answer_of(n2, &n2j);
        assert_non_null(strstr(nj, "\"method\": \"nlopt\""));
        assert_non_null(strstr(na, "; then NLopt LN_COBYLA"));
        /* a worst case (minimised) no higher than halving's; both feasible here */
        double hv = json_number(hj, "\"recommendation\"", "\"objective\": ");
        double nv = json_number(nj, "\"recommendation\"", "\"objective\": ");
        if (!(nv <= hv))
            fail_msg("budget %llu: nlopt %.6g, halving %.6g", (unsigned long long)budget, nv, hv);
        if (strstr(na, "from the best on every seed (")) cobyla_ran = true;
        assert_string_equal(n2j, nj);
        assert_string_equal(n2a, na);
        free(ha);
        free(hj);
        free(na);
        free(nj);
        free(n2a);
        free(n2j);
        sweep_tune_destroy(h);
        sweep_tune_destroy(n);
        sweep_tune_destroy(n2);
    }
    assert_true(cobyla_ran);
}

static void a_budget_below_the_smallest_search_is_refused(void **state) {
    (void)state;
    sweep_tune_args a;
    memset(&a, 0, sizeof a);
    a.scenario_files = files;
    a.scenario_count = 2;
    a.knobs = knobs;
    a.knob_count = 3;
    a.objective = "cost_usd";
    a.sense = 1;
    a.budget = 5; /* 3 candidates on 1 seed, the best on 2 more, 2 scenarios: 10 */
    sweep_tune *t = NULL;
    char msg[1024] = "";
    assert_int_equal(sweep_tune_create(&a, &t, msg, sizeof msg), FB_EINVAL);
    assert_null(t);
    assert_non_null(strstr(msg, "--budget 5 runs is too small"));
    assert_non_null(strstr(msg, "at least 10"));
}

int main(void) {
    util_mem_keep_freed(); /* as `fusebox tune` does: its runs at the allocator's settings */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_fidelities_are_thirds_up_to_the_seeds),
        cmocka_unit_test(plan_cost_counts_each_seed_once),
        cmocka_unit_test(plan_takes_the_most_candidates_that_fit),
        cmocka_unit_test(knobs_cut_ranges_into_levels),
        cmocka_unit_test(search_keeps_its_budget_and_finds_the_grid_best),
        cmocka_unit_test(direct_search_keeps_its_budget_and_repeats),
        cmocka_unit_test(nlopt_search_is_halving_then_cobyla),
        cmocka_unit_test(a_budget_below_the_smallest_search_is_refused),
    };
    return cmocka_run_group_tests_name("tune", tests, NULL, NULL);
}
