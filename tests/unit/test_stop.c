/* test_stop.c - sim_run_opts.stop: a run stopped between two events (a signal's flag). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

static const char scenario[] = "{\"name\":\"s\",\"duration\":\"60s\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"constant\":\"10/s\"},\"target\":\"none\"}],"
                               "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"200ms\"}}]}";

/* The rows of a run, and the flag its row callback raises once `stop_after` rows are in. */
typedef struct stopper {
    th_rows rows;
    size_t stop_after; /* 0: never */
    volatile sig_atomic_t flag;
} stopper;

static void on_row(void *ctx, const sim_row *row) {
    stopper *st = ctx;
    th_keep_row(&st->rows, row);
    if (st->stop_after > 0 && st->rows.n == st->stop_after) st->flag = 1;
}

static int run(const sim_scenario *sc, stopper *st, sim_summary *s, sim_error *err) {
    sim_run_opts opts = {on_row, NULL, NULL, st, 0, true, &st->flag};
    return sim_run(sc, 0, &opts, s, err);
}

static void a_raised_flag_stops_the_run_where_it_was(void **state) {
    (void)state;
    sim_scenario *sc = th_load(scenario);
    static stopper whole, cut;
    static sim_summary sw, sc_;
    sim_error err;
    assert_int_equal(run(sc, &whole, &sw, &err), FB_OK);
    assert_true(sw.complete);
    assert_int_equal(whole.rows.n, 60);
    cut.stop_after = 10; /* the row of 10 s is out: the run stops before its next event */
    assert_int_equal(run(sc, &cut, &sc_, &err), FB_EINTR);
    assert_false(sc_.complete);
    assert_int_equal(cut.rows.n, 10);
    assert_string_equal(sc_.stop_reason, "interrupted by a signal at t=10.000s");
    assert_string_equal(err.msg, sc_.stop_reason);
    /* what was simulated is what the whole run simulated up to then */
    assert_memory_equal(cut.rows.r, whole.rows.r, 10 * sizeof cut.rows.r[0]);
    assert_in_range(sc_.requests, 100, 101);
    scn_free(sc);
}

static void a_flag_raised_before_the_run_stops_it_at_once(void **state) {
    (void)state;
    sim_scenario *sc = th_load(scenario);
    static stopper st;
    static sim_summary s;
    sim_error err;
    st.flag = 1;
    assert_int_equal(run(sc, &st, &s, &err), FB_EINTR);
    assert_false(s.complete);
    assert_int_equal(st.rows.n, 0);
    assert_int_equal(s.requests, 0);
    assert_string_equal(s.stop_reason, "interrupted by a signal at t=0.000s");
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_raised_flag_stops_the_run_where_it_was),
        cmocka_unit_test(a_flag_raised_before_the_run_stops_it_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
