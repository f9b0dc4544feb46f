/* test_fault.c - the fault model (scenario/fault.h): one rule for the simulator and the mock. */
#include <math.h>
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
    sim_fault f[3] = {fault(SIM_FAULT_OUTAGE, 0.5), fault(SIM_FAULT_RATE_LIMIT, 0.9),
                      fault(SIM_FAULT_RESET, 1)};
    f[0].status = 503;
    f[1].status = 429;
    f[1].retry_after_us = 20 * FB_US_PER_S;
    script sc = {.values = {0.7, 0.1, 0.1}};
    sim_fault_effect e;
    scn_fault_decide(f, 3, 0, SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
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
    sim_fault f[2] = {fault(SIM_FAULT_OUTAGE, 1), fault(SIM_FAULT_HANG, 0.5)};
    f[0].at_us = 10 * FB_US_PER_S;
    f[0].for_us = 5 * FB_US_PER_S;
    f[0].status = 503;
    script sc = {.values = {0.0, 0.0, 0.0}};
    sim_fault_effect e;
    /* [10 s, 15 s): 15 s itself is after the window */
    scn_fault_decide(f, 2, 15 * FB_US_PER_S, SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
    assert_int_equal(sc.n, 1);
    assert_int_equal(e.answer, 1);
    assert_int_equal(e.kind, SIM_FAULT_HANG);
    assert_int_equal(e.status, 0);
    sc.n = 0;
    scn_fault_decide(f, 2, 10 * FB_US_PER_S, SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
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
        scn_fault_decide(&f, 1, probes[i], SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
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
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
    assert_int_equal(e.status, 400);
    assert_int_equal(e.error_kind, FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(e.retry_after_us, FB_TIME_NONE);
}

static void fault_slows_multiply_and_the_first_midstream_breaks(void **state) {
    (void)state;
    sim_fault f[5] = {fault(SIM_FAULT_SLOW, 0.9), fault(SIM_FAULT_MIDSTREAM, 0.5),
                      fault(SIM_FAULT_SLOW, 0.5), fault(SIM_FAULT_MIDSTREAM, 0.9),
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
    scn_fault_decide(f, 5, 0, SIM_FAULT_SERVICE, NULL, scripted, &sc, &e);
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
    sim_fault f[2] = {fault(SIM_FAULT_SLOW, 0.9), fault(SIM_FAULT_SLOW, 0.5)};
    f[0].factor =
        (sim_dist){.kind = SIM_DIST_EMPIRICAL, .a = 2, .n = 2, .v = {2, 5}, .cw = {0.5, 1}};
    f[1].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 3};
    static const double u[] = {0.2, 0.7};
    for (int k = 0; k < 2; k++) {
        script sc = {.values = {0.0, u[k], 0.1}};
        sim_fault_effect e;
        scn_fault_decide(f, 2, 0, SIM_FAULT_SERVICE, NULL, scripted, &sc, &e);
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
        scn_fault_decide(f, 2, 0, SIM_FAULT_SERVICE, NULL, scripted, &sc, &e);
        assert_true(e.slow == (k == 0 ? 1.0 : SIM_FAULT_FACTOR_MAX));
    }
}

static void fault_phases_ask_only_their_own_faults(void **state) {
    (void)state;
    sim_fault f[3] = {fault(SIM_FAULT_SLOW, 0.5), fault(SIM_FAULT_OUTAGE, 0.5),
                      fault(SIM_FAULT_BROWNOUT, 1)};
    f[0].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 4};
    f[1].status = 500;
    script a = {.values = {0.0, 0.0}}, b = {.values = {0.0, 0.0}}, both = {.values = {0, 0}};
    sim_fault_effect ea, eb, e2;
    scn_fault_decide(f, 3, 0, SIM_FAULT_ANSWER, NULL, scripted, &a, &ea);
    scn_fault_decide(f, 3, 0, SIM_FAULT_SERVICE, NULL, scripted, &b, &eb);
    scn_fault_decide(f, 3, 0, SIM_FAULT_ANSWER | SIM_FAULT_SERVICE, NULL, scripted, &both, &e2);
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
        mock_timeline_decide(f, 3, 0, 9, attempt, false, NULL, &act, &cap);
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
        mock_timeline_decide(&f, 1, 0, 9, attempt, false, NULL, &a, &cap);
        mock_timeline_decide(&f, 1, 0, 9, attempt, false, NULL, &b, &cap);
        bool five = mock_draw(9, attempt, SIM_FAULT_FACTOR_DRAW) >= 0.75;
        assert_true(a.slow == (five ? 5.0 : 2.0));
        assert_true(a.slow == b.slow);
        fives += five;
    }
    assert_in_range(fives, 400, 600); /* 25% of 2000 */
}

/* A slow fault's delay: a duration asks no draw and adds itself; a distribution takes one more
   draw (SIM_FAULT_DELAY_DRAW + its index) after the factor's, as the quantile it adds. */
static void fault_a_slow_delay_adds_before_the_first_token(void **state) {
    (void)state;
    sim_fault f[2] = {fault(SIM_FAULT_SLOW, 1), fault(SIM_FAULT_SLOW, 0.5)};
    f[0].factor = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 2};
    f[0].delay = (sim_dist){.kind = SIM_DIST_CONSTANT, .a = 300000};
    f[1].delay =
        (sim_dist){.kind = SIM_DIST_EMPIRICAL, .a = 1e6, .n = 2, .v = {1e6, 3e6}, .cw = {0.75, 1}};
    script sc = {.values = {0.9}};
    sim_fault_effect e;
    scn_fault_decide(f, 2, 0, SIM_FAULT_SERVICE, NULL, scripted, &sc, &e);
    /* f[0] hits (a fraction of 1: no draw) and draws nothing more; 0.9 misses f[1]'s 50% */
    assert_int_equal(sc.n, 1);
    assert_int_equal(sc.asked[0], 1);
    assert_true(e.slow == 2.0);
    assert_int_equal(e.delay_us, 300000);
    script sc2 = {.values = {0.2, 0.8}};
    scn_fault_decide(f, 2, 0, SIM_FAULT_SERVICE, NULL, scripted, &sc2, &e);
    assert_int_equal(sc2.n, 2);
    assert_int_equal(sc2.asked[1], SIM_FAULT_DELAY_DRAW + 1);
    assert_int_equal(e.delay_us, 300000 + 3000000); /* the 0.8 quantile: 3 s */
    /* the mock adds it too, in timeline time */
    mock_action act;
    mock_action_init(&act);
    double cap;
    mock_timeline_decide(f, 1, 0, 9, 0, false, NULL, &act, &cap);
    assert_int_equal(act.delay_us, 300000);
    assert_true(act.slow == 2.0);
    assert_true(mock_action_is_fault(&act));
}

/* An even fault asks no draw: this one fails the test when asked. */
static double no_draw(void *ctx, uint32_t fault) {
    (void)fault;
    (*(uint32_t *)ctx)++;
    return 0.0;
}

/* N attempts in an even fault's window get floor(N f) or ceil(N f) hits, for every seed; where
   they fall depends on the seed (its offset), and no draw is asked. */
static void fault_even_gives_floor_or_ceil_of_n_f_hits_for_every_seed(void **state) {
    (void)state;
    static const double fractions[] = {0.5, 0.3, 0.504298, 0.07, 1.0 / 3, 0.999, 0.0, 1.0};
    static const uint32_t ns[] = {1, 2, 7, 100, 698, 1001};
    for (size_t fi = 0; fi < sizeof fractions / sizeof fractions[0]; fi++) {
        sim_fault f = fault(SIM_FAULT_RATE_LIMIT, fractions[fi]);
        f.status = 429;
        f.sampling = SIM_SAMPLING_EVEN;
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            uint32_t first_hit_seeds = 0;
            for (uint64_t seed = 1; seed <= 20; seed++) {
                sim_fault_even even;
                scn_fault_even_init(&even, 1, seed, 3);
                assert_true(even.offset >= 0 && even.offset < 1);
                uint32_t hits = 0, asked = 0;
                for (uint32_t k = 0; k < ns[ni]; k++) {
                    sim_fault_effect e;
                    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER, &even, no_draw, &asked, &e);
                    hits += e.answer == 0;
                    if (k == 0) first_hit_seeds += e.answer == 0;
                }
                double nf = (double)ns[ni] * fractions[fi];
                assert_int_equal(asked, 0);
                assert_int_equal(even.asked, ns[ni]);
                assert_in_range(hits, (uint32_t)floor(nf), (uint32_t)ceil(nf));
            }
            /* a half: the first attempt hits for about half of the seeds, not all or none */
            if (fractions[fi] == 0.5 && ns[ni] == 1) assert_in_range(first_hit_seeds, 3, 17);
        }
    }
}

/* An even fault counts the attempts it is asked about: those an earlier answering fault left. */
static void fault_even_counts_what_the_faults_before_it_leave(void **state) {
    (void)state;
    sim_fault f[2] = {fault(SIM_FAULT_OUTAGE, 0.5), fault(SIM_FAULT_HANG, 0.25)};
    f[0].status = 503;
    f[0].sampling = f[1].sampling = SIM_SAMPLING_EVEN;
    f[1].at_us = 10 * FB_US_PER_S; /* active from 10 s */
    f[1].for_us = 10 * FB_US_PER_S;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        sim_fault_even even[2];
        scn_fault_even_init(even, 2, seed, 0);
        uint32_t asked = 0, outages = 0, hangs = 0;
        for (uint32_t k = 0; k < 400; k++) {
            fb_time_us t = (fb_time_us)k * 50 * FB_US_PER_MS; /* 20 s: 200 inside the hang's */
            sim_fault_effect e;
            scn_fault_decide(f, 2, t, SIM_FAULT_ANSWER, even, no_draw, &asked, &e);
            outages += e.answer == 0;
            hangs += e.answer == 1;
        }
        assert_int_equal(outages, 200);
        assert_int_equal(even[1].asked, 100); /* the half of the 200 the outage left */
        assert_int_equal(hangs, 25);
        assert_int_equal(asked, 0);
    }
}

/* An even slow fault realises its delay distribution evenly too: of its hits, each value gets
   about its weight's share (within 2 of it, for every seed), and no draw is asked. */
static void fault_even_slow_realises_its_delays_evenly(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_SLOW, 0.4);
    f.sampling = SIM_SAMPLING_EVEN;
    f.delay =
        (sim_dist){.kind = SIM_DIST_EMPIRICAL, .a = 1e6, .n = 2, .v = {1e6, 3e6}, .cw = {0.75, 1}};
    for (uint64_t seed = 1; seed <= 10; seed++) {
        sim_fault_even even;
        scn_fault_even_init(&even, 1, seed, 0);
        uint32_t asked = 0, hits = 0, long_ones = 0;
        for (uint32_t k = 0; k < 500; k++) {
            sim_fault_effect e;
            scn_fault_decide(&f, 1, 0, SIM_FAULT_SERVICE, &even, no_draw, &asked, &e);
            hits += e.delay_us > 0;
            long_ones += e.delay_us == 3000000;
        }
        assert_int_equal(asked, 0);
        assert_int_equal(hits, 200);        /* 500 x 0.4 */
        assert_in_range(long_ones, 48, 52); /* a quarter of 200 */
    }
}

/* Without the counts (NULL), an even fault draws like the others. */
static void fault_even_without_counts_draws(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_RESET, 0.5);
    f.sampling = SIM_SAMPLING_EVEN;
    script sc = {.values = {0.7, 0.2}};
    sim_fault_effect e;
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
    assert_int_equal(e.answer, -1);
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER, NULL, scripted, &sc, &e);
    assert_int_equal(e.answer, 0);
    assert_int_equal(sc.n, 2);
}

/* The mock honours an even fault when given the counts: N attempts, floor or ceil of N f. */
static void fault_the_mock_realises_an_even_fault_evenly(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_RATE_LIMIT, 0.35);
    f.status = 429;
    f.sampling = SIM_SAMPLING_EVEN;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        sim_fault_even even;
        scn_fault_even_init(&even, 1, seed, 0);
        int limited = 0;
        for (uint64_t attempt = 0; attempt < 333; attempt++) {
            mock_action act;
            mock_action_init(&act);
            double cap;
            mock_timeline_decide(&f, 1, 0, seed, attempt, false, &even, &act, &cap);
            limited += act.status == 429;
        }
        assert_in_range(limited, 116, 117); /* 333 x 0.35 = 116.55 */
    }
}

/* A retry_fraction: the same one draw, against the retry's share for a retry (the flag) and
   against `fraction` for a first attempt; without one, the flag changes nothing. */
static void fault_a_retry_meets_its_retry_fraction(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_RATE_LIMIT, 0.2);
    f.status = 429;
    f.retry_fraction = (sim_fault_retry){{0.8}, 1};
    static const double draws[] = {0.1, 0.5, 0.9};
    static const bool first_hit[] = {true, false, false}, retry_hit[] = {true, true, false};
    for (size_t i = 0; i < 3; i++) {
        script a = {.values = {draws[i]}}, b = {.values = {draws[i]}};
        sim_fault_effect ea, eb;
        scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER, NULL, scripted, &a, &ea);
        scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | SIM_FAULT_RETRY, NULL, scripted, &b, &eb);
        assert_int_equal(a.n, 1); /* one draw either way: the draws after it do not move */
        assert_int_equal(b.n, 1);
        assert_int_equal(ea.answer == 0, first_hit[i]);
        assert_int_equal(eb.answer == 0, retry_hit[i]);
    }
    f.retry_fraction.n = 0; /* `fraction` for every attempt */
    script c = {.values = {0.5}};
    sim_fault_effect ec;
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | SIM_FAULT_RETRY, NULL, scripted, &c, &ec);
    assert_int_equal(ec.answer, -1);
}

/* Even, with a retry_fraction: first attempts and retries are counted apart, each class gets
   floor or ceil of its n x share, whatever their interleaving; the mock does the same. */
static void fault_even_splits_first_attempts_and_retries(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_OUTAGE, 0.25);
    f.status = 503;
    f.retry_fraction = (sim_fault_retry){{0.75}, 1};
    f.sampling = SIM_SAMPLING_EVEN;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        sim_fault_even even;
        scn_fault_even_init(&even, 1, seed, 1);
        uint32_t asked = 0, n[2] = {0, 0}, hit[2] = {0, 0};
        for (uint32_t k = 0; k < 500; k++) {
            bool retry = (k * 7 + seed) % 3 == 0; /* a third retries, interleaved */
            sim_fault_effect e;
            scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | (retry ? SIM_FAULT_RETRY : 0u), &even,
                             no_draw, &asked, &e);
            n[retry]++;
            hit[retry] += e.answer == 0;
        }
        assert_int_equal(asked, 0);
        assert_int_equal(even.asked, n[0]);
        assert_int_equal(even.retry_asked[0], n[1]);
        assert_in_range(hit[0], (uint32_t)floor(n[0] * 0.25), (uint32_t)ceil(n[0] * 0.25));
        assert_in_range(hit[1], (uint32_t)floor(n[1] * 0.75), (uint32_t)ceil(n[1] * 0.75));
        /* the mock's timeline: the same split, from its retry flag */
        scn_fault_even_init(&even, 1, seed, 0);
        uint32_t mhit[2] = {0, 0};
        for (uint32_t k = 0; k < 400; k++) {
            mock_action act;
            mock_action_init(&act);
            double cap;
            mock_timeline_decide(&f, 1, 0, seed, k, k % 2 == 1, &even, &act, &cap);
            mhit[k % 2] += act.status == 503;
        }
        assert_int_equal(mhit[0], 50);  /* 200 x 0.25 */
        assert_int_equal(mhit[1], 150); /* 200 x 0.75 */
    }
}

/* scn_fault_quiet: no active fault of the phase asked, over the span between the nearest edges. */
static void fault_quiet_spans_end_at_the_phase_own_edges(void **state) {
    (void)state;
    sim_fault f[3] = {fault(SIM_FAULT_OUTAGE, 1), fault(SIM_FAULT_SLOW, 1),
                      fault(SIM_FAULT_BROWNOUT, 1)};
    f[0].at_us = 10 * FB_US_PER_S; /* answers over [10 s, 15 s) */
    f[0].for_us = 5 * FB_US_PER_S;
    f[1].at_us = 12 * FB_US_PER_S; /* serves slowly from 12 s to the end */
    f[1].for_us = FB_TIME_MAX;
    f[2].at_us = 1 * FB_US_PER_S; /* acts on capacity only: no phase's edge */
    f[2].for_us = 1 * FB_US_PER_S;
    fb_time_us from, to;
    assert_true(scn_fault_quiet(f, 3, 3 * FB_US_PER_S, SIM_FAULT_ANSWER, &from, &to));
    assert_true(from == INT64_MIN && to == 10 * FB_US_PER_S);
    assert_false(scn_fault_quiet(f, 3, 10 * FB_US_PER_S, SIM_FAULT_ANSWER, &from, &to));
    assert_true(from == 10 * FB_US_PER_S && to == 15 * FB_US_PER_S);
    assert_true(scn_fault_quiet(f, 3, 15 * FB_US_PER_S, SIM_FAULT_ANSWER, &from, &to));
    assert_true(from == 15 * FB_US_PER_S && to == FB_TIME_MAX);
    /* the slow fault's own span: quiet before 12 s, active after it to the end */
    assert_true(scn_fault_quiet(f, 3, 11 * FB_US_PER_S, SIM_FAULT_SERVICE, &from, &to));
    assert_true(from == INT64_MIN && to == 12 * FB_US_PER_S);
    assert_false(scn_fault_quiet(f, 3, 20 * FB_US_PER_S, SIM_FAULT_SERVICE, &from, &to));
    assert_true(from == 12 * FB_US_PER_S && to == FB_TIME_MAX);
    /* what a quiet phase would decide: nothing drawn, the effect clear */
    script sc = {.values = {0.0}};
    sim_fault_effect e, clear;
    scn_fault_decide(f, 3, 3 * FB_US_PER_S, SIM_FAULT_ANSWER | SIM_FAULT_SERVICE, NULL, scripted,
                     &sc, &e);
    scn_fault_clear(&clear);
    assert_int_equal(sc.n, 0);
    assert_int_equal(e.answer, clear.answer);
    assert_int_equal(e.midstream, clear.midstream);
    assert_true(e.slow == clear.slow && e.delay_us == clear.delay_us);
    assert_int_equal(e.hit_count, 0);
}

/* scn_fault_lone names a plain answering fault alone in its phase, and then decides as
   scn_fault_decide does: its one draw against its fraction, the same answer. */
static void fault_lone_decides_as_the_walk_does(void **state) {
    (void)state;
    sim_fault f[4] = {fault(SIM_FAULT_OUTAGE, 0.5), fault(SIM_FAULT_SLOW, 1),
                      fault(SIM_FAULT_POLICY, 1), fault(SIM_FAULT_RATE_LIMIT, 1)};
    f[0].status = 503;
    f[0].retry_after_us = 7 * FB_US_PER_S;
    f[2].at_us = 10 * FB_US_PER_S; /* the policy fault over [10 s, 20 s) */
    f[2].for_us = 10 * FB_US_PER_S;
    f[3].at_us = 30 * FB_US_PER_S; /* the rate limit from 30 s on */
    /* before 10 s the outage is the answer phase's only fault (the slow one serves) */
    assert_int_equal(scn_fault_lone(f, 4, 1, SIM_FAULT_ANSWER), 0);
    assert_int_equal(scn_fault_lone(f, 4, 1, SIM_FAULT_SERVICE), -1);
    /* two answering faults active: none alone */
    assert_int_equal(scn_fault_lone(f, 4, 10 * FB_US_PER_S, SIM_FAULT_ANSWER), -1);
    assert_int_equal(scn_fault_lone(f, 4, 20 * FB_US_PER_S, SIM_FAULT_ANSWER), 0);
    for (int k = 0; k < 2; k++) {
        script sc = {.values = {k ? 0.49 : 0.5}};
        sim_fault_effect e, lone;
        scn_fault_decide(f, 4, 1, SIM_FAULT_ANSWER | SIM_FAULT_RETRY_NTH(3), NULL, scripted, &sc,
                         &e);
        assert_int_equal(sc.n, 1);
        assert_int_equal(sc.asked[0], 0);
        assert_int_equal(e.answer, k ? 0 : -1); /* 0.49 hits 50%, 0.5 misses */
        if (!k) continue;
        scn_fault_answer(&f[0], 0, &lone);
        assert_int_equal(lone.answer, e.answer);
        assert_int_equal(lone.kind, e.kind);
        assert_int_equal(lone.status, e.status);
        assert_int_equal(lone.error_kind, e.error_kind);
        assert_int_equal(lone.retry_after_us, e.retry_after_us);
    }
    /* the policy fault's answer: 400, content policy, no Retry-After */
    sim_fault_effect p;
    scn_fault_answer(&f[2], 2, &p);
    assert_int_equal(p.status, 400);
    assert_int_equal(p.error_kind, FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(p.retry_after_us, FB_TIME_NONE);
    /* a fraction of 1 hits without a draw (random streams fusebox-4); with a retry_fraction
       it still draws, for its first attempts as for its retries */
    sim_fault all[2] = {fault(SIM_FAULT_OUTAGE, 1), fault(SIM_FAULT_SLOW, 1)};
    all[0].status = 503;
    all[1].factor.a = 2;
    assert_true(scn_fault_hits_all(&all[0]));
    script none = {.values = {0.0}};
    sim_fault_effect ea;
    scn_fault_decide(all, 2, 0, SIM_FAULT_ANSWER | SIM_FAULT_SERVICE, NULL, scripted, &none, &ea);
    assert_int_equal(none.n, 0);
    assert_int_equal(ea.answer, 0);
    assert_true(ea.slow == 2);
    all[0].retry_fraction.n = 1;
    all[0].retry_fraction.share[0] = 1;
    assert_false(scn_fault_hits_all(&all[0]));
    scn_fault_decide(all, 1, 0, SIM_FAULT_ANSWER, NULL, scripted, &none, &ea);
    assert_int_equal(none.n, 1);
    assert_int_equal(scn_fault_lone(all, 1, 0, SIM_FAULT_ANSWER), -1);
    /* a fault that does not decide with one draw of its fraction is never alone */
    sim_fault g = fault(SIM_FAULT_OUTAGE, 1);
    g.sampling = SIM_SAMPLING_EVEN;
    assert_int_equal(scn_fault_lone(&g, 1, 0, SIM_FAULT_ANSWER), -1);
    g = fault(SIM_FAULT_OUTAGE, 1);
    g.retry_fraction.n = 1;
    assert_int_equal(scn_fault_lone(&g, 1, 0, SIM_FAULT_ANSWER), -1);
    g = fault(SIM_FAULT_FLAP, 1);
    g.period_us = FB_US_PER_S;
    assert_int_equal(scn_fault_lone(&g, 1, 0, SIM_FAULT_ANSWER), -1);
    assert_false(scn_fault_hits_all(&g));
}

/* Recorded hits: the first attempts go as the record says while it lasts, then evenly (the
   count going on from there); retries keep their even share; no draw is asked. */
static void fault_even_replays_its_recorded_hits(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_OUTAGE, 0.25);
    f.status = 503;
    f.retry_fraction = (sim_fault_retry){{0.75}, 1};
    f.sampling = SIM_SAMPLING_EVEN;
    uint8_t rec[10] = {1, 1, 0, 0, 1, 0, 0, 0, 0, 0};
    f.recorded = rec;
    f.recorded_len[0] = 10;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        sim_fault_even even;
        scn_fault_even_init(&even, 1, seed, 1);
        uint32_t asked = 0, k0 = 0, hit[2] = {0, 0}, n1 = 0;
        for (uint32_t k = 0; k < 600; k++) {
            bool retry = k % 3 == 2;
            sim_fault_effect e;
            scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | (retry ? SIM_FAULT_RETRY : 0u), &even,
                             no_draw, &asked, &e);
            if (!retry && k0 < 10) assert_int_equal(e.answer == 0, rec[k0]);
            k0 += !retry;
            n1 += retry;
            hit[retry] += e.answer == 0;
        }
        assert_int_equal(asked, 0);
        /* 3 recorded, then the 390 after them: 390 x 0.25 = 97.5, floor or ceil */
        assert_in_range(hit[0], 3 + 97, 3 + 98);
        assert_in_range(hit[1], (uint32_t)floor(n1 * 0.75), (uint32_t)ceil(n1 * 0.75));
    }
}

/* A retry_fraction per retry: the k-th retry draws against its own share (the last one for
   every later retry), SIM_FAULT_RETRY alone is the first; even counts each share's retries
   apart; the mock reads which retry from its count. */
static void fault_a_retry_meets_the_share_of_its_number(void **state) {
    (void)state;
    sim_fault f = fault(SIM_FAULT_RATE_LIMIT, 0.1);
    f.status = 429;
    f.retry_fraction = (sim_fault_retry){{0.3, 0.6, 0.9}, 3};
    static const double share[] = {0.1, 0.3, 0.6, 0.9, 0.9, 0.9}; /* first attempt, retries */
    for (unsigned k = 0; k < 6; k++) {
        unsigned flag = k == 0 ? 0u : SIM_FAULT_RETRY_NTH(k);
        script below = {.values = {share[k] - 0.01}}, above = {.values = {share[k] + 0.01}};
        sim_fault_effect eb, ea;
        scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | flag, NULL, scripted, &below, &eb);
        scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | flag, NULL, scripted, &above, &ea);
        assert_int_equal(eb.answer, 0);
        assert_int_equal(ea.answer, -1);
    }
    script one = {.values = {0.29}}, two = {.values = {0.31}};
    sim_fault_effect e1, e2;
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | SIM_FAULT_RETRY, NULL, scripted, &one, &e1);
    scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | SIM_FAULT_RETRY, NULL, scripted, &two, &e2);
    assert_true(e1.answer == 0 && e2.answer == -1); /* the flag alone: the first retry's */
    f.sampling = SIM_SAMPLING_EVEN;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        sim_fault_even even;
        scn_fault_even_init(&even, 1, seed, 1);
        uint32_t asked = 0, n[4] = {0}, hit[4] = {0};
        for (uint32_t i = 0; i < 800; i++) {
            unsigned k = (i * 7 + (unsigned)seed) % 5; /* 0 first, 1..4 retries, interleaved */
            unsigned c = k < 3 ? k : 3;                /* the share it meets */
            sim_fault_effect e;
            scn_fault_decide(&f, 1, 0, SIM_FAULT_ANSWER | (k ? SIM_FAULT_RETRY_NTH(k) : 0u), &even,
                             no_draw, &asked, &e);
            n[c]++;
            hit[c] += e.answer == 0;
        }
        assert_int_equal(asked, 0);
        assert_int_equal(even.asked, n[0]);
        for (unsigned c = 1; c < 4; c++) assert_int_equal(even.retry_asked[c - 1], n[c]);
        static const double fr[] = {0.1, 0.3, 0.6, 0.9};
        for (unsigned c = 0; c < 4; c++)
            assert_in_range(hit[c], (uint32_t)floor(n[c] * fr[c]), (uint32_t)ceil(n[c] * fr[c]));
        /* the mock: the same, from the retry's count */
        scn_fault_even_init(&even, 1, seed, 0);
        uint32_t mhit[4] = {0};
        for (uint32_t i = 0; i < 400; i++) {
            mock_action act;
            mock_action_init(&act);
            double cap;
            mock_timeline_decide(&f, 1, 0, seed, i, i % 4, &even, &act, &cap);
            mhit[i % 4] += act.status == 429;
        }
        assert_int_equal(mhit[0], 10); /* 100 x 0.1 */
        assert_int_equal(mhit[1], 30);
        assert_int_equal(mhit[2], 60);
        assert_int_equal(mhit[3], 90);
    }
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
        cmocka_unit_test(fault_a_slow_delay_adds_before_the_first_token),
        cmocka_unit_test(fault_even_gives_floor_or_ceil_of_n_f_hits_for_every_seed),
        cmocka_unit_test(fault_even_counts_what_the_faults_before_it_leave),
        cmocka_unit_test(fault_even_slow_realises_its_delays_evenly),
        cmocka_unit_test(fault_even_without_counts_draws),
        cmocka_unit_test(fault_the_mock_realises_an_even_fault_evenly),
        cmocka_unit_test(fault_a_retry_meets_its_retry_fraction),
        cmocka_unit_test(fault_even_splits_first_attempts_and_retries),
        cmocka_unit_test(fault_even_replays_its_recorded_hits),
        cmocka_unit_test(fault_quiet_spans_end_at_the_phase_own_edges),
        cmocka_unit_test(fault_lone_decides_as_the_walk_does),
        cmocka_unit_test(fault_a_retry_meets_the_share_of_its_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
