/*
 * test_sweep.c - the pure parts of a sweep: grid syntax, LHS, CI math, Pareto, constraints;
 * an interrupted sweep's partial file read back by --resume.
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
#include <unistd.h>

#include "core/rng.h"
#include "sweep/sweep.h"
#include "tests/unit/helpers.h"

/* cmocka's assert_float_equal works in float; these checks need doubles. */
#define near(a, b, eps) near_at((a), (b), (eps), #a, __LINE__)
static void near_at(double a, double b, double eps, const char *what, int line) {
    if (!(fabs(a - b) <= eps)) fail_msg("line %d: %s = %.12g, expected %.12g", line, what, a, b);
}

static sweep_dim parse_ok(const char *arg) {
    sweep_dim dim;
    char msg[512];
    int rc = sweep_parse_grid(arg, &dim, msg, sizeof msg);
    if (rc != FB_OK) fail_msg("'%s' rejected: %s", arg, msg);
    return dim;
}

static void parse_bad(const char *arg, const char *fragment) {
    sweep_dim dim;
    char msg[512] = "";
    if (sweep_parse_grid(arg, &dim, msg, sizeof msg) == FB_OK) {
        sweep_dim_free(&dim);
        fail_msg("accepted: %s", arg);
    }
    if (strstr(msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", msg, fragment);
}

static void value_at(const sweep_dim *dim, double u, const char *expected) {
    char buf[128];
    sweep_dim_value(dim, u, buf, sizeof buf);
    if (strcmp(buf, expected) != 0) fail_msg("at u=%.17g: '%s', expected '%s'", u, buf, expected);
}

static void grid_lists_values_in_order_trimmed(void **state) {
    (void)state;
    sweep_dim d = parse_ok("breaker.failure_rate=0.3, 0.5 ,0.7");
    assert_string_equal(d.key, "breaker.failure_rate");
    assert_int_equal(d.kind, SWEEP_LIST);
    assert_int_equal(d.value_count, 3);
    assert_string_equal(d.values[0], "0.3");
    assert_string_equal(d.values[1], "0.5");
    assert_string_equal(d.values[2], "0.7");
    value_at(&d, 0, "0.3");
    value_at(&d, 0.34, "0.5");
    value_at(&d, 0.9999, "0.7");
    sweep_dim_free(&d);
}

static void grid_keeps_commas_inside_json_values(void **state) {
    (void)state;
    sweep_dim d = parse_ok("retry.backoff={\"constant\": \"1s\"},\"none\",[1,2]");
    assert_int_equal(d.value_count, 3);
    assert_string_equal(d.values[0], "{\"constant\": \"1s\"}");
    assert_string_equal(d.values[1], "\"none\"");
    assert_string_equal(d.values[2], "[1,2]");
    sweep_dim_free(&d);
}

static void grid_ranges_know_durations_integers_and_numbers(void **state) {
    (void)state;
    sweep_dim d = parse_ok("retry.base=100ms..2s");
    assert_int_equal(d.kind, SWEEP_RANGE);
    assert_int_equal(d.type, SWEEP_DURATION);
    assert_false(d.log);
    assert_true(d.lo == 100000 && d.hi == 2000000);
    value_at(&d, 0, "100ms");
    value_at(&d, 0.5, "1050ms"); /* linear in microseconds, rounded to the millisecond */
    value_at(&d, 0.25, "575ms");
    sweep_dim_free(&d);

    d = parse_ok("retry.attempts=1..4");
    assert_int_equal(d.type, SWEEP_INTEGER);
    value_at(&d, 0, "1");
    value_at(&d, 0.2499, "1");
    value_at(&d, 0.25, "2");
    value_at(&d, 0.9999, "4"); /* the high end is reachable */
    sweep_dim_free(&d);

    d = parse_ok("breaker.failure_rate=0.2..0.8");
    assert_int_equal(d.type, SWEEP_NUMBER);
    value_at(&d, 0.5, "0.5");
    sweep_dim_free(&d);

    d = parse_ok("breaker.open=log:1s..100s");
    assert_true(d.log);
    value_at(&d, 0, "1s");
    value_at(&d, 0.5, "10s"); /* log-uniform: the midpoint is the geometric mean */
    sweep_dim_free(&d);

    d = parse_ok("retry.base=log:10us..1ms");
    value_at(&d, 0.5, "100us"); /* below a millisecond: rounded to the microsecond */
    sweep_dim_free(&d);
}

static void grid_rejects_bad_syntax_with_the_argument(void **state) {
    (void)state;
    parse_bad("breaker.open", "expected KEY=");
    parse_bad("=1,2", "expected KEY=");
    parse_bad("breaker.open=", "no values");
    parse_bad("breaker.open=1s,,2s", "empty value");
    parse_bad("breaker.open=1s,2s,1s", "listed twice");
    parse_bad("breaker.open=2s..1s", "low end must be below");
    parse_bad("breaker.open=log:0s..1s", "above zero");
    parse_bad("breaker.open=1..2s", "both ends");
    parse_bad("breaker.open=log:1s", "needs a range");
    parse_bad("breaker open=1s", "has a ' '");
    parse_bad("breaker..open=1s", "empty path segment");
    parse_bad("retry.backoff={\"a\":1", "unbalanced");
}

static void lhs_puts_one_point_in_every_stratum(void **state) {
    (void)state;
    enum { N = 37, D = 4 };
    double u[N * D];
    sweep_lhs(N, D, 42, u);
    for (int j = 0; j < D; j++) {
        int seen[N] = {0};
        for (int i = 0; i < N; i++) {
            double x = u[i * D + j];
            assert_true(x >= 0 && x < 1);
            int stratum = (int)(x * N);
            assert_true(stratum >= 0 && stratum < N);
            seen[stratum]++;
        }
        for (int k = 0; k < N; k++) assert_int_equal(seen[k], 1);
    }
}

static void lhs_is_deterministic_in_its_seed(void **state) {
    (void)state;
    double a[20 * 3], b[20 * 3], c[20 * 3];
    sweep_lhs(20, 3, 7, a);
    sweep_lhs(20, 3, 7, b);
    sweep_lhs(20, 3, 8, c);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    /* the dimensions are not copies of each other */
    int same = 0;
    for (int i = 0; i < 20; i++) same += (int)(a[i * 3] * 20) == (int)(a[i * 3 + 1] * 20);
    assert_true(same < 20);
}

static void t975_matches_the_table_and_the_expansion(void **state) {
    (void)state;
    assert_true(isnan(sweep_t975(0)));
    near(sweep_t975(1), 12.706204736, 1e-9);
    near(sweep_t975(2), 4.302652730, 1e-9);
    near(sweep_t975(4), 2.776445105, 1e-9);
    near(sweep_t975(10), 2.228138852, 1e-9);
    near(sweep_t975(30), 2.042272456, 1e-9);
    /* above the table, Cornish-Fisher against exact quantiles */
    near(sweep_t975(40), 2.021075390, 1e-6);
    near(sweep_t975(60), 2.000297822, 1e-6);
    near(sweep_t975(120), 1.979930405, 1e-6);
    near(sweep_t975(1000), 1.962339081, 1e-6);
    near(sweep_t975(1000000), 1.959966357, 1e-8);
}

static void stat_gives_mean_sd_and_t_interval(void **state) {
    (void)state;
    const double x[5] = {1, 2, 3, 4, 5};
    sweep_stat st;
    sweep_stat_of(x, 5, &st);
    assert_int_equal(st.n, 5);
    near(st.mean, 3, 1e-12);
    near(st.sd, sqrt(2.5), 1e-12);
    /* 3 -/+ 2.776445105 * sqrt(2.5) / sqrt(5) */
    near(st.ci_low, 1.036756839, 1e-8);
    near(st.ci_high, 4.963243161, 1e-8);

    const double two[2] = {10, 12};
    sweep_stat_of(two, 2, &st);
    near(st.ci_low, 11 - 12.706204736 * sqrt(2) / sqrt(2), 1e-8);
    near(st.ci_high, 11 + 12.706204736, 1e-8);

    sweep_stat_of(x, 1, &st);
    near(st.mean, 1, 0);
    assert_true(isnan(st.sd) && isnan(st.ci_low) && isnan(st.ci_high));
    sweep_stat_of(x, 0, &st);
    assert_true(isnan(st.mean));
}

static void pareto_keeps_exactly_the_non_dominated(void **state) {
    (void)state;
    const double obj[] = {
        1,   5, /* 0: best on the first objective */
        2,   2, /* 1 */
        5,   1, /* 2: best on the second */
        3,   3, /* 3: dominated by 1 */
        2,   2, /* 4: equal to 1: neither dominates, both stay */
        2,   6, /* 5: dominated by 1 (equal first, worse second) */
        NAN, 0, /* 6: incomplete: never on the front */
        1,   5, /* 7: equal to 0 */
    };
    bool front[8];
    sweep_pareto(obj, 8, 2, front);
    const bool expected[8] = {true, true, true, false, true, false, false, true};
    for (int i = 0; i < 8; i++)
        if (front[i] != expected[i]) fail_msg("row %d: %d, expected %d", i, front[i], expected[i]);
}

static void pareto_matches_brute_force_on_random_rows(void **state) {
    (void)state;
    enum { N = 300, M = 3 };
    double obj[N * M];
    fb_rng r;
    fb_rng_seed(&r, 3, 1);
    for (int i = 0; i < N * M; i++) obj[i] = (double)fb_rng_below(&r, 20); /* many ties */
    bool front[N];
    sweep_pareto(obj, N, M, front);
    for (int i = 0; i < N; i++) {
        bool dominated = false;
        for (int k = 0; k < N && !dominated; k++) {
            bool le = true, lt = false;
            for (int j = 0; j < M; j++) {
                le = le && obj[k * M + j] <= obj[i * M + j];
                lt = lt || obj[k * M + j] < obj[i * M + j];
            }
            dominated = le && lt;
        }
        if (front[i] == dominated)
            fail_msg("row %d: front %d, dominated %d", i, front[i], dominated);
    }
}

static const char scenario_text[] =
    "{\"name\":\"t\",\"duration\":\"1m\","
    "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"1/s\"}}],"
    "\"providers\":[{\"name\":\"openai\"}]}";

static void constraints_read_units_and_percentages(void **state) {
    (void)state;
    sim_scenario *sc = th_load(scenario_text);
    sweep_constraint c[4];
    size_t n = 0;
    char msg[512];
    int rc = sweep_parse_constraints(
        " success_rate >= 0.999, latency_p99<=10s,availability>99.5%,cost_usd[openai]<$12.5", sc, c,
        4, &n, msg, sizeof msg);
    if (rc != FB_OK) fail_msg("%s", msg);
    assert_int_equal(n, 4);
    assert_string_equal(c[0].metric, "success_rate");
    assert_int_equal(c[0].op, SWEEP_GE);
    near(c[0].value, 0.999, 1e-15);
    assert_string_equal(c[0].text, "success_rate >= 0.999");
    assert_string_equal(c[1].metric, "latency_p99");
    assert_int_equal(c[1].op, SWEEP_LE);
    near(c[1].value, 10e6, 0);
    assert_int_equal(c[2].op, SWEEP_GT);
    near(c[2].value, 0.995, 1e-15);
    assert_string_equal(c[3].metric, "cost_usd[openai]");
    assert_int_equal(c[3].op, SWEEP_LT);
    near(c[3].value, 12.5, 0);

    assert_true(sweep_constraint_holds(&c[0], 0.999));
    assert_false(sweep_constraint_holds(&c[0], 0.9989));
    assert_true(sweep_constraint_holds(&c[1], 10e6));
    assert_false(sweep_constraint_holds(&c[2], 0.995));
    assert_false(sweep_constraint_holds(&c[3], 12.5));
    scn_free(sc);
}

static void constraint_error(const sim_scenario *sc, const char *text, const char *fragment) {
    sweep_constraint c[4];
    size_t n = 0;
    char msg[512] = "";
    if (sweep_parse_constraints(text, sc, c, 4, &n, msg, sizeof msg) == FB_OK)
        fail_msg("accepted: %s", text);
    if (strstr(msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", msg, fragment);
}

static void constraints_reject_typos_and_unitless_durations(void **state) {
    (void)state;
    sim_scenario *sc = th_load(scenario_text);
    constraint_error(sc, "succes_rate>=0.9", "did you mean 'success_rate'");
    constraint_error(sc, "latency_p99<=10", "is a duration");
    constraint_error(sc, "success_rate=0.9", "expected METRIC >= VALUE");
    constraint_error(sc, "success_rate>=", "expected METRIC >= VALUE");
    constraint_error(sc, "success_rate>=high", "cannot read the bound 'high'");
    constraint_error(sc, "attempts[gemini]>=1", "no provider named 'gemini'");
    constraint_error(sc, " , ", "no constraint");
    scn_free(sc);
}

static void shards_partition_the_tasks(void **state) {
    (void)state;
    for (uint64_t t = 0; t < 50; t++) {
        int owners = 0;
        for (uint32_t k = 1; k <= 4; k++) owners += sweep_in_shard(t, k, 4);
        assert_int_equal(owners, 1);
    }
    assert_true(sweep_in_shard(5, 2, 4));
    assert_false(sweep_in_shard(5, 1, 4));
}

static void hash_is_fnv1a_64(void **state) {
    (void)state;
    assert_true(sweep_hash("", 0) == UINT64_C(0xcbf29ce484222325));
    assert_true(sweep_hash("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(sweep_hash("foobar", 6) == UINT64_C(0x85944171f73967e8));
}

/* A sweep of tests/e2e/sweep-small.json: 2 points x `seeds` seeds. */
static sweep *small_sweep(uint32_t seeds) {
    static const char *const grids[1] = {"breaker.open=5s,20s"};
    sweep_args a;
    memset(&a, 0, sizeof a);
    a.scenario_file = "tests/e2e/sweep-small.json";
    a.grids = grids;
    a.grid_count = 1;
    a.seeds = seeds;
    sweep *sw = NULL;
    char msg[1024];
    if (sweep_create(&a, &sw, msg, sizeof msg) != FB_OK) fail_msg("sweep_create: %s", msg);
    return sw;
}

static void resume_reads_back_exactly_the_finished_runs(void **state) {
    (void)state;
    char dir[] = "/tmp/fusebox-test-sweep.XXXXXX", msg[2048], path[64];
    assert_non_null(mkdtemp(dir));
    sweep *a = small_sweep(2);
    double *v = calloc(sweep_metric_count(a), sizeof *v);
    assert_non_null(v);
    v[0] = 123.25;
    sweep_set_result(a, 0, FB_OK, v, NULL);
    sweep_set_result(a, 2, FB_ECAP, v, "in-flight cap reached");
    assert_int_equal(sweep_result_count(a, 0, 0), 2);
    assert_int_equal(sweep_save_part(a, dir, "p.json", 1, 1, true, msg, sizeof msg), FB_OK);
    assert_int_equal(sweep_save_part(a, dir, "done.json", 1, 1, false, msg, sizeof msg), FB_OK);
    snprintf(path, sizeof path, "%s/p.json", dir);

    sweep *b = small_sweep(2);
    uint64_t loaded = 0;
    assert_int_equal(sweep_resume(b, path, 1, 1, &loaded, msg, sizeof msg), FB_OK);
    assert_int_equal(loaded, 2);
    assert_true(sweep_has_result(b, 0) && sweep_has_result(b, 2));
    assert_false(sweep_has_result(b, 1) || sweep_has_result(b, 3));
    const char *first = NULL;
    assert_int_equal(sweep_failed(b, &first), 1);
    assert_string_equal(first, "in-flight cap reached");

    sweep *c = small_sweep(3); /* another definition */
    assert_int_equal(sweep_resume(c, path, 1, 1, &loaded, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "is from a different sweep ('seeds' differs)"));
    sweep *d = small_sweep(2);
    assert_int_equal(sweep_resume(d, path, 1, 2, &loaded, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "is shard 1 of 1, not 1 of 2"));
    snprintf(path, sizeof path, "%s/done.json", dir);
    assert_int_equal(sweep_resume(d, path, 1, 1, &loaded, msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "a finished shard"));

    /* a write that cannot be done names the file and the reason, and leaves no .tmp */
    assert_int_equal(sweep_save_part(a, "/dev/null", "p.json", 1, 1, true, msg, sizeof msg),
                     FB_EIO);
    assert_string_equal(msg, "cannot write /dev/null/p.json: Not a directory");
    free(v);
    sweep_destroy(a), sweep_destroy(b), sweep_destroy(c), sweep_destroy(d);
    snprintf(path, sizeof path, "%s/p.json", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/done.json", dir);
    remove(path);
    rmdir(dir);
}

/* A partial file whose JSON tree does not fit in memory is said to be that (issue 25, T3-9), not
 * "not a sweep partial file": valid JSON within the values' cap, read under a memory limit. */
static void merge_big(void *ctx, char *out, size_t outlen) {
    const char *files[] = {ctx};
    sweep *sw = NULL;
    char msg[512] = "";
    int rc = sweep_merge(files, 1, NULL, &sw, msg, sizeof msg);
    snprintf(out, outlen, "%d %s", rc, msg);
}

static void merge_out_of_memory_is_said(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* ASan reserves terabytes of address space: RLIMIT_AS cannot be set under it */
#endif
    char path[] = "/tmp/fusebox-test-part-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputc('[', f);
    for (int i = 0; i < 500000; i++) fputs("0,  ", f);
    fputs("0]", f);
    assert_int_equal(fclose(f), 0);
    char got[700] = "";
    th_in_small_memory(merge_big, path, got, sizeof got);
    unlink(path);
    char want[64];
    snprintf(want, sizeof want, "%d ", FB_ENOMEM);
    assert_true(strncmp(got, want, strlen(want)) == 0);
    if (strstr(got, "out of memory building the JSON tree of 2000003 bytes") == NULL)
        print_error("got: %s\n", got);
    assert_non_null(strstr(got, "out of memory building the JSON tree of 2000003 bytes"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grid_lists_values_in_order_trimmed),
        cmocka_unit_test(grid_keeps_commas_inside_json_values),
        cmocka_unit_test(grid_ranges_know_durations_integers_and_numbers),
        cmocka_unit_test(grid_rejects_bad_syntax_with_the_argument),
        cmocka_unit_test(lhs_puts_one_point_in_every_stratum),
        cmocka_unit_test(lhs_is_deterministic_in_its_seed),
        cmocka_unit_test(t975_matches_the_table_and_the_expansion),
        cmocka_unit_test(stat_gives_mean_sd_and_t_interval),
        cmocka_unit_test(pareto_keeps_exactly_the_non_dominated),
        cmocka_unit_test(pareto_matches_brute_force_on_random_rows),
        cmocka_unit_test(constraints_read_units_and_percentages),
        cmocka_unit_test(constraints_reject_typos_and_unitless_durations),
        cmocka_unit_test(shards_partition_the_tasks),
        cmocka_unit_test(hash_is_fnv1a_64),
        cmocka_unit_test(resume_reads_back_exactly_the_finished_runs),
        cmocka_unit_test(merge_out_of_memory_is_said),
    };
    return cmocka_run_group_tests_name("sweep", tests, NULL, NULL);
}
