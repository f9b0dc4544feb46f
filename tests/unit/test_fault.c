/* test_fault.c - the fault model (scenario/fault.h): one rule for the simulator and the mock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mockserver/fault.h"
#include "scenario/fault.h"

/* Scripted draws: hands out values in order and records which fault asked. */
typedef struct script {
    double values[16];
    uint32_t asked[16];
    uint32_t n;
} script;

static double scripted(void *ctx, uint32_t fault) {
    script *sc = ctx;
    sc->asked[sc->n] = fault;
    return sc->values[sc->n++];
}

static sim_fault fault(sim_fault_kind kind, double fraction) {
    sim_fault f = {.kind = kind,
                   .at_us = 0,
                   .for_us = FB_TIME_MAX,
                   .fraction = fraction,
                   .retry_after_us = FB_TIME_NONE,
                   .factor = {.kind = SIM_DIST_CONSTANT, .a = 1},
                   .capacity = 1};
    return f;
}

static void fault_first_answering_fault_wins_and_later_ones_are_not_asked(void **state) {
    (void)state;
    sim_fault f[3] = {fault(SIM_FAULT_OUTAGE, 0.5), fault(SIM_FAULT_RATE_LIMIT, 1),
                      fault(SIM_FAULT_RESET, 1)};
    f[0].status = 503;
    f[1].status = 429;
    f[1].retry_after_us = 20 * FB_US_PER_S;
    script sc = {.values = {0.7, 0.1, 0.1}};
    sim_fault_effect e;
    scn_fault_decide(f, 3, 0, SIM_FAULT_ANSWER, scripted, &sc, &e);
    /* 0.7 misses the outage's 50%, the rate limit hits, the reset is never asked */
    assert_int_equal(sc.n, 2);
    assert_int_equal(sc.asked[0], 0);
    assert_int_equal(sc.asked[1], 1);
    assert_int_equal(e.answer, 1);
    assert_int_equal(e.kind, SIM_FAULT_RATE_LIMIT);
    assert_int_equal(e.status, 429);
    assert_int_equal(e.retry_after_us, 20 * FB_US_PER_S);
    assert_int_equal(e.hit_count, 1);
    assert_int_equal(e.hits[0], 1);
}

static void fault_only_active_faults_are_asked(void **state) {
    (void)state;
    sim_fault f[2] = {fault(SIM_FAULT_OUTAGE, 1), fault(SIM_FAULT_HANG, 1)};
    f[0].at_us = 10 * FB_US_PER_S;
    f[0].for_us = 5 * FB_US_PER_S;
    f[0].status = 503;
    script sc = {.values = {0.0, 0.0, 0.0}};
    sim_fault_effect e;
    /* [10 s, 15 s): 15 s itself is after the window */
    scn_fault_decide(f, 2, 15 * FB_US_PER_S, SIM_FAULT_ANSWER, scripted, &sc, &e);
    assert_int_equal(sc.n, 1);
    assert_int_equal(e.answer, 1);
    assert_int_equal(e.kind, SIM_FAULT_HANG);
    assert_int_equal(e.status, 0);
    sc.n = 0;
    scn_fault_decide(f, 2, 10 * FB_US_PER_S, SIM_FAULT_ANSWER, scripted, &sc, &e);
    assert_int_equal(e.answer, 0);
    assert_int_equal(e.status, 503);
    assert_false(scn_fault_active(&f[0], 10 * FB_US_PER_S - 1));
    assert_true(scn_fault_active(&f[0], 15 * FB_US_PER_S - 1));
}

static void fault_flap_is_down_in_the_first_half_without_a_draw(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_FLAP, 1);
    f.at_us = 5 * FB_US_PER_S;
    f.status = 502;
    f.period_us = 30 * FB_US_PER_S;
    fb_time_us probes[] = {5000000, 19999999, 20000000, 34999999, 35000000};
    int want[] = {0, 0, -1, -1, 0};
    for (size_t i = 0; i < 5; i++) {
        script sc = {.values = {0.99}};
        sim_fault_effect e;
        scn_fault_decide(&f, 1, probes[i], SIM_FAULT_ANSWER, scripted, &sc, &e);
        assert_int_equal(sc.n, 0);
        assert_int_equal(e.answer, want[i]);
        if (want[i] == 0) assert_int_equal(e.status, 502);
    }
}

static void fault_policy_answers_400_content_policy(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_POLICY, 1);
    script sc = {.values = {0.5}};
    sim_fault_effect e;
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER, scripted, &sc, &e);
    assert_int_equal(e.status, 400);
    assert_int_equal(e.error_kind, FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(e.retry_after_us, FB_TIME_NONE);
}

static void fault_slows_multiply_and_the_first_midstream_breaks(void **state) {
    (void)state;
    sim_fault f[5] = {fault(SIM_FAULT_SLOW, 1), fault(SIM_FAULT_MIDSTREAM, 0.5),
                      fault(SIM_FAULT_SLOW, 0.5), fault(SIM_FAULT_MIDSTREAM, 1),
                      fault(SIM_FAULT_MIDSTREAM, 1)};
    f[0].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 2};
    f[2].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 3};
    f[1].after_tokens = 10;
    f[3].after_tokens = 20;
    f[3].mode = SIM_MIDSTREAM_CUT;
    f[4].after_tokens = 30;
    /* slow 0 hits, midstream 1 misses (0.6), slow 2 hits (0.2), midstream 3 hits, 4 not asked */
    script sc = {.values = {0.0, 0.6, 0.2, 0.0, 0.0}};
    sim_fault_effect e;
    scn_fault_decide(f, 5, 0, SIM_FAULT_SERVICE, scripted, &sc, &e);
    assert_int_equal(sc.n, 4);
    assert_true(e.slow == 6.0);
    assert_int_equal(e.midstream, 3);
    assert_int_equal(e.after_tokens, 20);
    assert_int_equal(e.mode, SIM_MIDSTREAM_CUT);
    assert_int_equal(e.answer, -1);
    assert_int_equal(e.hit_count, 3);
}

/* A factor that is a distribution: one more draw, right after the hit, keyed
   SIM_FAULT_FACTOR_DRAW + the fault's index, taken as the factor's quantile. */
static void fault_a_slow_factor_distribution_takes_one_more_draw(void **state) {
    (void)state;
    sim_fault f[2] = {fault(SIM_FAULT_SLOW, 1), fault(SIM_FAULT_SLOW, 0.5)};
    f[0].factor =
        (sim_dist){.kind = SIM_DIST_EMPIRICAL, .a = 2, .n = 2, .v = {2, 5}, .cw = {0.5, 1}};
    f[1].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 3};
    static const double u[] = {0.2, 0.7};
    for (int k = 0; k < 2; k++) {
        script sc = {.values = {0.0, u[k], 0.1}};
        sim_fault_effect e;
        scn_fault_decide(f, 2, 0, SIM_FAULT_SERVICE, scripted, &sc, &e);
        assert_int_equal(sc.n, 3); /* hit, factor, the second fault's hit (no factor draw) */
        assert_int_equal(sc.asked[0], 0);
        assert_int_equal(sc.asked[1], SIM_FAULT_FACTOR_DRAW + 0);
        assert_int_equal(sc.asked[2], 1);
        assert_true(e.slow == (k == 0 ? 2.0 : 5.0) * 3.0);
    }
    /* a draw below 1 counts as 1 (a slow fault never speeds up), above the cap as the cap */
    f[0].factor.v[0] = 0.5;
    f[0].factor.v[1] = 5000;
    for (int k = 0; k < 2; k++) {
        script sc = {.values = {0.0, u[k], 0.9}};
        sim_fault_effect e;
        scn_fault_decide(f, 2, 0, SIM_FAULT_SERVICE, scripted, &sc, &e);
        assert_true(e.slow == (k == 0 ? 1.0 : SIM_FAULT_FACTOR_MAX));
    }
}

static void fault_phases_ask_only_their_own_faults(void **state) {
    (void)state;
    sim_fault f[3] = {fault(SIM_FAULT_SLOW, 1), fault(SIM_FAULT_OUTAGE, 1),
                      fault(SIM_FAULT_BROWNOUT, 1)};
    f[0].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 4};
    f[1].status = 500;
    script a = {.values = {0.0, 0.0}}, b = {.values = {0.0, 0.0}}, both = {.values = {0, 0}};
    sim_fault_effect ea, eb, e2;
    scn_fault_decide(f, 3, 0, SIM_FAULT_ANSWER, scripted, &a, &ea);
    scn_fault_decide(f, 3, 0, SIM_FAULT_SERVICE, scripted, &b, &eb);
    scn_fault_decide(f, 3, 0, SIM_FAULT_ANSWER | SIM_FAULT_SERVICE, scripted, &both, &e2);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.asked[0], 1);
    assert_true(ea.slow == 1.0);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.asked[0], 0);
    assert_int_equal(eb.answer, -1);
    /* both at once: the union, in index order; brownouts are never asked */
    assert_int_equal(both.n, 2);
    assert_int_equal(e2.answer, 1);
    assert_true(e2.slow == 4.0);
    assert_int_equal(e2.hit_count, 2);
    assert_int_equal(e2.hits[0], 0);
    assert_int_equal(e2.hits[1], 1);
}

static void fault_capacity_is_the_smallest_active_brownout(void **state) {
    (void)state;
    sim_fault f[3] = {fault(SIM_FAULT_BROWNOUT, 1), fault(SIM_FAULT_BROWNOUT, 1),
                      fault(SIM_FAULT_SLOW, 1)};
    f[0].capacity = 0.5;
    f[1].capacity = 0.3;
    f[1].at_us = 60 * FB_US_PER_S;
    f[1].for_us = 60 * FB_US_PER_S;
    assert_true(scn_fault_capacity(f, 3, 0) == 0.5);
    assert_true(scn_fault_capacity(f, 3, 90 * FB_US_PER_S) == 0.3);
    assert_true(scn_fault_capacity(f, 3, 120 * FB_US_PER_S) == 0.5);
    assert_true(scn_fault_capacity(&f[2], 1, 0) == 1.0);
}

/* The mock's action is the fault model's effect, with its keyed draws. */
static void fault_the_mock_applies_the_model_with_keyed_draws(void **state) {
    (void)state;
    sim_fault f[3] = {fault(SIM_FAULT_OUTAGE, 0.3), fault(SIM_FAULT_SLOW, 0.5),
                      fault(SIM_FAULT_MIDSTREAM, 1)};
    f[0].status = 503;
    f[0].retry_after_us = 2500 * 1000;
    f[1].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 3};
    f[2].after_tokens = 7;
    f[2].mode = SIM_MIDSTREAM_TRUNCATE;
    int outages = 0;
    for (uint64_t attempt = 0; attempt < 500; attempt++) {
        mock_action act;
        mock_action_init(&act);
        double cap;
        mock_timeline_decide(f, 3, 0, 9, attempt, &act, &cap);
        bool out = mock_draw(9, attempt, 0) < 0.3;
        bool slow = mock_draw(9, attempt, 1) < 0.5;
        outages += out;
        assert_int_equal(act.status, out ? 503 : 0);
        if (out) {
            assert_int_equal(act.ra_kind, MOCK_RA_SECONDS);
            assert_true(act.retry_after_s == 3.0);
            assert_true(act.retry_after_ms == 2500.0);
        }
        assert_true(act.slow == (slow ? 3.0 : 1.0));
        assert_int_equal(act.end, MOCK_END_TRUNCATE);
        assert_int_equal(act.end_after, 7);
        assert_true(cap == 1.0);
    }
    assert_in_range(outages, 110, 190);
}

/* The mock draws a distribution's factor from the attempt's own keyed stream: the same
   seed and attempt give the same factor, and the factor's values come in their shares. */
static void fault_the_mock_draws_a_slow_factor_per_attempt(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_SLOW, 1);
    f.factor = (sim_dist){.kind = SIM_DIST_EMPIRICAL, .a = 2, .n = 2, .v = {2, 5}, .cw = {0.75, 1}};
    int fives = 0;
    for (uint64_t attempt = 0; attempt < 2000; attempt++) {
        mock_action a, b;
        mock_action_init(&a);
        mock_action_init(&b);
        double cap;
        mock_timeline_decide(&f, 1, 0, 9, attempt, &a, &cap);
        mock_timeline_decide(&f, 1, 0, 9, attempt, &b, &cap);
        bool five = mock_draw(9, attempt, SIM_FAULT_FACTOR_DRAW) >= 0.75;
        assert_true(a.slow == (five ? 5.0 : 2.0));
        assert_true(a.slow == b.slow);
        fives += five;
    }
    assert_in_range(fives, 400, 600); /* 25% of 2000 */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fault_first_answering_fault_wins_and_later_ones_are_not_asked),
        cmocka_unit_test(fault_only_active_faults_are_asked),
        cmocka_unit_test(fault_flap_is_down_in_the_first_half_without_a_draw),
        cmocka_unit_test(fault_policy_answers_400_content_policy),
        cmocka_unit_test(fault_slows_multiply_and_the_first_midstream_breaks),
        cmocka_unit_test(fault_a_slow_factor_distribution_takes_one_more_draw),
        cmocka_unit_test(fault_the_mock_draws_a_slow_factor_per_attempt),
        cmocka_unit_test(fault_phases_ask_only_their_own_faults),
        cmocka_unit_test(fault_capacity_is_the_smallest_active_brownout),
        cmocka_unit_test(fault_the_mock_applies_the_model_with_keyed_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
