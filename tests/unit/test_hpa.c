/*
 * test_hpa.c - the HPA's replica arithmetic (sim/hpa.h), rule by rule, with
 * exact values: the replica calculation and its tolerance, pods without
 * metrics, the stabilization window, the scaling policies and the bounds.
 * The numbers of the first test are the Kubernetes blog's ("Kubernetes
 * v1.33: HPA configurable tolerance": 50 replicas at 90% for a 75% target
 * become 60).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "sim/hpa.h"
#include "tests/unit/helpers.h"

/* HPA's defaults (scenario/load_fleet.c), between min and max pods. */
static sim_autoscale defaults(uint32_t min, uint32_t max) {
    sim_autoscale a;
    memset(&a, 0, sizeof a);
    a.on = true;
    a.min = min;
    a.max = max;
    a.period_us = 15 * S;
    a.tolerance = 0.1;
    a.up = (sim_scale_rules){0, 4, 100, 15 * S, SIM_SELECT_MAX};
    a.down = (sim_scale_rules){300 * S, 0, 100, 15 * S, SIM_SELECT_MAX};
    return a;
}

typedef struct ring {
    sim_hpa_entry e[8];
    sim_hpa_history h;
} ring;

static void ring_init(ring *r) {
    memset(r, 0, sizeof *r);
    r->h.e = r->e;
    r->h.cap = 8;
}

/* ---- the replica calculation ---- */

static void hpa_ratio_scales_the_ready_pods(void **state) {
    (void)state;
    assert_int_equal(sim_hpa_replicas(90, 75, 0.1, 50, 0), 60);
    assert_int_equal(sim_hpa_replicas(200, 100, 0.1, 4, 0), 8); /* doubled */
    assert_int_equal(sim_hpa_replicas(50, 100, 0.1, 4, 0), 2);  /* halved */
    assert_int_equal(sim_hpa_replicas(130, 100, 0.1, 3, 0), 4); /* ceil(3.9) */
    assert_int_equal(sim_hpa_replicas(0, 100, 0.1, 6, 0), 0);   /* the caller bounds it by min */
}

static void hpa_within_the_tolerance_nothing_changes(void **state) {
    (void)state;
    assert_int_equal(sim_hpa_replicas(105, 100, 0.1, 10, 0), 10);
    assert_int_equal(sim_hpa_replicas(91, 100, 0.1, 10, 0), 10);
    assert_int_equal(sim_hpa_replicas(115, 100, 0.1, 10, 0), 12);
    assert_int_equal(sim_hpa_replicas(85, 100, 0.1, 10, 0), 9);
    /* with no tolerance any change moves it */
    assert_int_equal(sim_hpa_replicas(105, 100, 0, 10, 0), 11);
}

static void hpa_pods_without_metrics_damp_a_scale_up(void **state) {
    (void)state;
    /* 4 ready at twice the target and 4 starting (counted at 0): an average of the target */
    assert_int_equal(sim_hpa_replicas(16, 8, 0.1, 4, 4), 8);
    /* 4 ready at 3x, 2 starting: (24 x 4) / 6 = 16, twice the target: 12 */
    assert_int_equal(sim_hpa_replicas(24, 8, 0.1, 4, 2), 12);
}

static void hpa_pods_without_metrics_count_at_the_target_on_a_scale_down(void **state) {
    (void)state;
    /* 4 ready at a quarter of the target, 4 starting counted at the target: 5/8 of 8 pods */
    assert_int_equal(sim_hpa_replicas(2, 8, 0.1, 4, 4), 5);
}

static void hpa_missing_pods_never_reverse_the_direction(void **state) {
    (void)state;
    /* 2 ready at 9/8 of the target would scale up; 2 missing at 0 make it a scale down: keep 4 */
    assert_int_equal(sim_hpa_replicas(9, 8, 0.1, 2, 2), 4);
}

static void hpa_without_a_ready_pod_keeps_the_count(void **state) {
    (void)state;
    assert_int_equal(sim_hpa_replicas(100, 1, 0.1, 0, 3), 3);
}

/* ---- the stabilization window ---- */

static void hpa_scale_down_takes_the_highest_recent_recommendation(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 20);
    ring r;
    ring_init(&r);
    sim_hpa_history_add(&r.h, 0, 10); /* the initial recommendation */
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 10, 8, 100 * S), 10);
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 10, 4, 200 * S), 10);
    /* at 300 s the entry at 0 is out (strictly after now - 300 s counts): 8, from 100 s */
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 10, 4, 300 * S), 8);
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 10, 4, 400 * S), 4);
}

static void hpa_scale_up_is_not_stabilized_by_default(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 20);
    ring r;
    ring_init(&r);
    sim_hpa_history_add(&r.h, 0, 2);
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 4, 9, 15 * S), 9);
}

static void hpa_scale_up_stabilization_takes_the_lowest(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 20);
    a.up.stabilization_us = 60 * S;
    ring r;
    ring_init(&r);
    sim_hpa_history_add(&r.h, 0, 5);
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 4, 9, 30 * S), 5);
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 4, 12, 45 * S), 5);
    /* 5 (at 0) is out at 60 s; 9 (at 30 s) is the lowest left */
    assert_int_equal(sim_hpa_stabilize(&r.h, &a, 4, 12, 60 * S), 9);
}

static void hpa_history_overwrites_its_oldest_entry(void **state) {
    (void)state;
    ring r;
    ring_init(&r);
    for (int i = 0; i < 10; i++) sim_hpa_history_add(&r.h, i * S, i);
    assert_int_equal(r.h.len, 8);
    assert_int_equal(r.h.e[r.h.head].value, 2); /* 0 and 1 were overwritten */
}

/* ---- the scaling policies ---- */

static void hpa_default_scale_up_is_four_pods_or_double(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 100);
    ring r;
    ring_init(&r);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 1, 20, 15 * S), 5);   /* 1 + 4 beats 2 x 1 */
    assert_int_equal(sim_hpa_bound(&r.h, &a, 10, 50, 15 * S), 20); /* 2 x 10 beats 10 + 4 */
    assert_int_equal(sim_hpa_bound(&r.h, &a, 10, 12, 15 * S), 12); /* within the limit */
}

static void hpa_scale_up_counts_from_the_period_start(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 100);
    a.up = (sim_scale_rules){0, 1, 0, 60 * S, SIM_SELECT_MAX}; /* one pod a minute */
    ring r;
    ring_init(&r);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 4, 10, 15 * S), 5);
    sim_hpa_history_add(&r.h, 15 * S, +1);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 5, 10, 30 * S), 5);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 5, 10, 74 * S), 5);
    /* at 75 s the event at 15 s is no longer after now - 60 s */
    assert_int_equal(sim_hpa_bound(&r.h, &a, 5, 10, 75 * S), 6);
}

static void hpa_select_min_takes_the_smaller_policy(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 100);
    a.up.select = SIM_SELECT_MIN;
    ring r;
    ring_init(&r);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 10, 50, 15 * S), 14); /* 10 + 4 below 2 x 10 */
    a.up.select = SIM_SELECT_DISABLED;
    assert_int_equal(sim_hpa_bound(&r.h, &a, 10, 50, 15 * S), 10);
}

static void hpa_scale_down_policies_and_min(void **state) {
    (void)state;
    sim_autoscale a = defaults(3, 100);
    ring r;
    ring_init(&r);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 10, 1, 15 * S), 3); /* 100%: down to min */
    a.down = (sim_scale_rules){0, 2, 0, 60 * S, SIM_SELECT_MAX};
    assert_int_equal(sim_hpa_bound(&r.h, &a, 10, 1, 15 * S), 8);
    sim_hpa_history_add(&r.h, 15 * S, -2);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 8, 1, 30 * S), 8); /* 2 already removed */
    a.down = (sim_scale_rules){0, 0, 50, 60 * S, SIM_SELECT_MAX};
    assert_int_equal(sim_hpa_bound(&r.h, &a, 8, 1, 30 * S), 5); /* floor(10 x 0.5) */
}

static void hpa_max_bounds_a_scale_up(void **state) {
    (void)state;
    sim_autoscale a = defaults(1, 6);
    ring r;
    ring_init(&r);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 4, 30, 15 * S), 6);
    assert_int_equal(sim_hpa_bound(&r.h, &a, 6, 30, 15 * S), 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hpa_ratio_scales_the_ready_pods),
        cmocka_unit_test(hpa_within_the_tolerance_nothing_changes),
        cmocka_unit_test(hpa_pods_without_metrics_damp_a_scale_up),
        cmocka_unit_test(hpa_pods_without_metrics_count_at_the_target_on_a_scale_down),
        cmocka_unit_test(hpa_missing_pods_never_reverse_the_direction),
        cmocka_unit_test(hpa_without_a_ready_pod_keeps_the_count),
        cmocka_unit_test(hpa_scale_down_takes_the_highest_recent_recommendation),
        cmocka_unit_test(hpa_scale_up_is_not_stabilized_by_default),
        cmocka_unit_test(hpa_scale_up_stabilization_takes_the_lowest),
        cmocka_unit_test(hpa_history_overwrites_its_oldest_entry),
        cmocka_unit_test(hpa_default_scale_up_is_four_pods_or_double),
        cmocka_unit_test(hpa_scale_up_counts_from_the_period_start),
        cmocka_unit_test(hpa_select_min_takes_the_smaller_policy),
        cmocka_unit_test(hpa_scale_down_policies_and_min),
        cmocka_unit_test(hpa_max_bounds_a_scale_up),
    };
    return cmocka_run_group_tests_name("hpa", tests, NULL, NULL);
}
