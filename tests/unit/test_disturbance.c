/*
 * test_disturbance.c - what a run says about its disturbances (faults and
 * spikes): which requests are collateral damage, and whether the system got
 * back to its baseline after each one (sim/setup.c, sim/series.c,
 * sim/stats.c, sim/metrics.c). Small scenarios with explicit times; a metric
 * that has no meaning for a run must be n/a, never a number that looks like
 * an answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

static sim_summary *run(const sim_scenario *sc) {
    return th_run(sc, 0, NULL, NULL);
}

#define metric th_metric

/* ---- collateral ---- */

/*
 * One slot and no queue: of three requests at t = 0 two are answered 503
 * (overloaded). The class has a spike (at 5 s), which disturbs the provider
 * it calls, so every failure is on the disturbed provider and none is
 * collateral: with no class that avoids it, collateral is n/a (it used to
 * be 100%).
 */
static const char *SPIKE_ONLY =
    "{\"name\":\"s\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","
    "\"arrivals\":{\"constant\":\"1/h\"},\"bursts\":[{\"at\":\"0s\",\"count\":2}],"
    "\"spikes\":[{\"at\":\"5s\",\"for\":\"1s\",\"rate\":\"1/h\"}]}],"
    "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
    "\"capacity\":{\"concurrency\":1,\"queue\":0}}]}";

static void collateral_is_na_when_every_class_calls_the_spiked_provider(void **state) {
    (void)state;
    sim_scenario *sc = th_load(SPIKE_ONLY);
    sim_summary *s = run(sc);
    assert_int_equal(s->providers[0].overloaded, 2);
    assert_int_equal(s->bad, 2);
    assert_int_equal(s->classes_exposed, 1);
    assert_int_equal(s->classes_unexposed, 0);
    assert_true(sim_metric_is_na(metric(sc, s, "collateral")));
    assert_true(sim_metric_is_na(metric(sc, s, "collateral_share")));
    free(s);
    scn_free(sc);
}

/*
 * One pod with one worker and no queue: the chat request at 0 holds the
 * worker for 1 s, so the two page loads (no LLM) at 0 and 500 ms find it
 * busy and fail at once: collateral damage of the disturbed provider.
 */
static const char *WORKER_HELD =
    "{\"name\":\"w\",\"duration\":\"10s\",\"pods\":{\"workers\":1,\"queue\":0},"
    "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"constant\":\"1/h\"}%s},"
    "{\"class\":\"page\",\"target\":\"none\",\"service\":\"10ms\","
    "\"arrivals\":{\"constant\":\"1/h\"},\"bursts\":[{\"at\":\"500ms\",\"count\":1}]}],"
    "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"}%s}]}";

static sim_scenario *worker_held(const char *chat_extra, const char *provider_extra) {
    char json[1024];
    snprintf(json, sizeof json, WORKER_HELD, chat_extra, provider_extra);
    return th_load(json);
}

static void collateral_counts_classes_that_avoid_the_spiked_provider(void **state) {
    (void)state;
    sim_scenario *sc =
        worker_held(",\"spikes\":[{\"at\":\"5s\",\"for\":\"1s\",\"rate\":\"1/h\"}]", "");
    sim_summary *s = run(sc);
    assert_int_equal(s->ended[SIM_END_QUEUE_FULL], 2);
    assert_int_equal(s->classes_exposed, 1);
    assert_int_equal(s->classes_unexposed, 1);
    assert_true(metric(sc, s, "collateral") == 2);
    assert_true(metric(sc, s, "collateral_share") == 1);
    free(s);
    scn_free(sc);
}

/* The same with a scripted fault instead of the spike: the faulted provider is disturbed. */
static void collateral_counts_classes_that_avoid_the_faulted_provider(void **state) {
    (void)state;
    sim_scenario *sc =
        worker_held("", ",\"faults\":[{\"at\":\"5s\",\"for\":\"1s\",\"outage\":{}}]");
    sim_summary *s = run(sc);
    assert_int_equal(s->classes_exposed, 1);
    assert_int_equal(s->classes_unexposed, 1);
    assert_true(metric(sc, s, "collateral") == 2);
    free(s);
    scn_free(sc);
}

/* Nothing disturbs anything: collateral of what? n/a, although two requests failed. */
static void collateral_is_na_without_a_disturbance(void **state) {
    (void)state;
    sim_scenario *sc = worker_held("", "");
    sim_summary *s = run(sc);
    assert_int_equal(s->bad, 2);
    assert_int_equal(s->classes_exposed, 0);
    assert_true(sim_metric_is_na(metric(sc, s, "collateral")));
    assert_true(sim_metric_is_na(metric(sc, s, "collateral_share")));
    free(s);
    scn_free(sc);
}

/* A blast radius of 0 has no shares: the share is n/a, the count 0. */
static void collateral_share_is_na_without_a_blast_radius(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"z\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","
                "\"arrivals\":{\"constant\":\"1/s\"},"
                "\"spikes\":[{\"at\":\"5s\",\"for\":\"1s\",\"rate\":\"2/s\"}]},"
                "{\"class\":\"page\",\"target\":\"none\",\"arrivals\":{\"constant\":\"1/s\"}}],"
                "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"100ms\"}}]}");
    sim_summary *s = run(sc);
    assert_int_equal(s->bad, 0);
    assert_true(metric(sc, s, "collateral") == 0);
    assert_true(sim_metric_is_na(metric(sc, s, "collateral_share")));
    free(s);
    scn_free(sc);
}

/* A spike disturbs only what its class calls: a class on another provider is not exposed. */
static void spike_disturbs_only_the_providers_its_class_calls(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"t\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"x\","
                "\"arrivals\":{\"constant\":\"1/s\"},\"order\":[\"a\"],"
                "\"spikes\":[{\"at\":\"5s\",\"for\":\"1s\",\"rate\":\"2/s\"}]},"
                "{\"class\":\"y\",\"arrivals\":{\"constant\":\"1/s\"},\"order\":[\"b\"]},"
                "{\"class\":\"z\",\"arrivals\":{\"constant\":\"1/s\"},\"order\":[\"b\",\"a\"]}],"
                "\"providers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}");
    sim_summary *s = run(sc);
    assert_int_equal(s->classes_exposed, 2); /* x, and z whose fallback is a */
    assert_int_equal(s->classes_unexposed, 1);
    free(s);
    scn_free(sc);
}

/* ---- spillover: recovered, not recovered, undetermined ---- */

/*
 * 10 requests/s of 100 ms for 60 s, hold 10 s; `faults` is the provider's
 * timeline. Windows are judged on 1 s ticks: the last full one is [50 s, 60 s).
 */
static sim_scenario *timeline(const char *faults) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\":\"r\",\"duration\":\"60s\",\"spillover\":{\"hold\":\"10s\"},"
             "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"10/s\"}}],"
             "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"100ms\"},"
             "\"capacity\":{\"concurrency\":100,\"queue\":0},\"faults\":[%s]}]}",
             faults);
    return th_load(json);
}

#define OUTAGE(at, len) "{\"at\":\"" at "\",\"for\":\"" len "\",\"outage\":{}}"

/* An outage that ends at 15 s: the window [15 s, 25 s) is healthy; spillover 0. */
static void spillover_is_judged_when_a_window_fits_after_the_end(void **state) {
    (void)state;
    sim_scenario *sc = timeline(OUTAGE("10s", "5s"));
    sim_summary *s = run(sc);
    assert_true(s->faults[0].recovered);
    assert_int_equal(s->faults[0].undetermined, SIM_DETERMINED);
    assert_int_equal(s->faults[0].spillover_us, 0);
    assert_true(metric(sc, s, "recovered") == 1);
    assert_true(metric(sc, s, "spillover") == 0);
    free(s);
    scn_free(sc);
}

/* Ending at 50 s, exactly one hold before the end: the last window [50 s, 60 s) judges it. */
static void spillover_is_judged_by_the_last_window(void **state) {
    (void)state;
    sim_scenario *sc = timeline(OUTAGE("45s", "5s"));
    sim_summary *s = run(sc);
    assert_true(s->faults[0].recovered);
    assert_int_equal(s->faults[0].spillover_us, 0);
    assert_true(metric(sc, s, "recovered") == 1);
    free(s);
    scn_free(sc);
}

/*
 * Ending at 50.5 s, less than a hold before the end: no window judges it.
 * It used to read "not recovered" with every request after it answered.
 */
static void spillover_is_undetermined_without_a_full_window(void **state) {
    (void)state;
    sim_scenario *sc = timeline(OUTAGE("45s", "5.5s"));
    sim_summary *s = run(sc);
    assert_false(s->faults[0].recovered);
    assert_int_equal(s->faults[0].undetermined, SIM_UNDETERMINED_NO_WINDOW);
    assert_true(sim_metric_is_na(metric(sc, s, "recovered")));
    assert_true(sim_metric_is_na(metric(sc, s, "spillover")));
    free(s);
    scn_free(sc);
}

/* Still active when traffic ends (to 70 s): undetermined, for that reason. */
static void spillover_is_undetermined_for_a_fault_active_at_the_end(void **state) {
    (void)state;
    sim_scenario *sc = timeline(OUTAGE("50s", "20s"));
    sim_summary *s = run(sc);
    assert_int_equal(s->faults[0].undetermined, SIM_UNDETERMINED_ACTIVE);
    assert_true(sim_metric_is_na(metric(sc, s, "recovered")));
    free(s);
    scn_free(sc);
}

/*
 * An outage to 15 s, and no capacity at all from 12 s to 59 s (a brownout
 * to 0 that began before the outage ended: every attempt is answered 503):
 * every window after 15 s is judged unhealthy, so the outage did not
 * recover (its spillover runs to the end of the run, 60 s); the brownout is
 * undetermined. One known failure decides: recovered 0, spillover 45 s.
 */
static void not_recovered_wins_over_undetermined(void **state) {
    (void)state;
    sim_scenario *sc = timeline(OUTAGE("10s", "5s") ",{\"at\":\"12s\",\"for\":\"47s\","
                                                    "\"brownout\":{\"capacity\":0}}");
    sim_summary *s = run(sc);
    assert_false(s->faults[0].recovered);
    assert_int_equal(s->faults[0].undetermined, SIM_DETERMINED);
    assert_int_equal(s->faults[1].undetermined, SIM_UNDETERMINED_NO_WINDOW);
    assert_int_equal(s->end_us, 60 * S);
    assert_int_equal(s->faults[0].spillover_us, 45 * S);
    assert_true(metric(sc, s, "recovered") == 0);
    assert_true(metric(sc, s, "spillover") == 45e6);
    free(s);
    scn_free(sc);
}

/*
 * An outage to 15 s, then no capacity at all from 15 s to 59 s: the outage is followed by
 * the brownout, and every window after its end reaches into it. Its recovery is measured to
 * the brownout's start, and said so (undetermined, for that reason; spillover 0 s to there),
 * not "not recovered" for what the next fault did.
 */
static void spillover_of_a_fault_followed_by_another_is_measured_to_its_start(void **state) {
    (void)state;
    sim_scenario *sc = timeline(OUTAGE("10s", "5s") ",{\"at\":\"18s\",\"for\":\"41s\","
                                                    "\"brownout\":{\"capacity\":0}}");
    sim_summary *s = run(sc);
    assert_false(s->faults[0].recovered);
    assert_int_equal(s->faults[0].next_us, 18 * S);
    assert_int_equal(s->faults[0].undetermined, SIM_UNDETERMINED_NEXT);
    assert_int_equal(s->faults[0].spillover_us, 3 * S);
    assert_int_equal(s->faults[1].next_us, FB_TIME_NONE);
    assert_true(sim_metric_is_na(metric(sc, s, "recovered")));
    free(s);
    scn_free(sc);
    /* with a full window between the two, it is judged as before: recovered at once */
    sc = timeline(OUTAGE("10s", "5s") "," OUTAGE("30s", "5s"));
    s = run(sc);
    assert_true(s->faults[0].recovered);
    assert_int_equal(s->faults[0].undetermined, SIM_DETERMINED);
    assert_int_equal(s->faults[0].spillover_us, 0);
    assert_true(s->faults[1].recovered);
    free(s);
    scn_free(sc);
}

/* No disturbance at all: nothing to recover from, n/a rather than a vacuous 1. */
static void recovered_is_na_without_a_disturbance(void **state) {
    (void)state;
    sim_scenario *sc = timeline("");
    sim_summary *s = run(sc);
    assert_int_equal(s->fault_count, 0);
    assert_true(sim_metric_is_na(metric(sc, s, "recovered")));
    assert_true(sim_metric_is_na(metric(sc, s, "spillover")));
    free(s);
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collateral_is_na_when_every_class_calls_the_spiked_provider),
        cmocka_unit_test(collateral_counts_classes_that_avoid_the_spiked_provider),
        cmocka_unit_test(collateral_counts_classes_that_avoid_the_faulted_provider),
        cmocka_unit_test(collateral_is_na_without_a_disturbance),
        cmocka_unit_test(collateral_share_is_na_without_a_blast_radius),
        cmocka_unit_test(spike_disturbs_only_the_providers_its_class_calls),
        cmocka_unit_test(spillover_is_judged_when_a_window_fits_after_the_end),
        cmocka_unit_test(spillover_is_judged_by_the_last_window),
        cmocka_unit_test(spillover_is_undetermined_without_a_full_window),
        cmocka_unit_test(spillover_is_undetermined_for_a_fault_active_at_the_end),
        cmocka_unit_test(not_recovered_wins_over_undetermined),
        cmocka_unit_test(spillover_of_a_fault_followed_by_another_is_measured_to_its_start),
        cmocka_unit_test(recovered_is_na_without_a_disturbance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
