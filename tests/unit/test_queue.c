/* test_queue.c - the event queue: order, ties, lanes, caps. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/rng.h"
#include "sim/queue.h"

static void queue_pops_in_time_order(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100000), FB_OK);
    fb_rng rng;
    fb_rng_seed(&rng, 7, 1);
    for (uint32_t i = 0; i < 50000; i++)
        assert_int_equal(sim_queue_push(&q, (fb_time_us)fb_rng_below(&rng, 1000), 1, i, 0, 0),
                         FB_OK);
    sim_event ev, prev = {0};
    size_t n = 0;
    while (sim_queue_pop(&q, &ev)) {
        if (n > 0) {
            assert_true(ev.t >= prev.t);
            if (ev.t == prev.t) assert_true(ev.seq > prev.seq);
        }
        prev = ev;
        n++;
    }
    assert_int_equal(n, 50000);
    sim_queue_free(&q);
}

static void queue_ties_resolve_in_push_order(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 64), FB_OK);
    for (uint32_t i = 0; i < 20; i++) assert_int_equal(sim_queue_push(&q, 5, 1, i, 0, 0), FB_OK);
    sim_event ev;
    for (uint32_t i = 0; i < 20; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, i);
    }
    assert_false(sim_queue_pop(&q, &ev));
    sim_queue_free(&q);
}

static void queue_lanes_merge_with_the_heap(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 1000), FB_OK);
    assert_int_equal(sim_queue_push(&q, 10, 1, 100, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 5, 2, 200, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 10, 2, 201, 0, 0),
                     FB_OK); /* tie: pushed after 100 */
    assert_int_equal(sim_queue_push_lane(&q, 1, 7, 3, 300, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, 1, 1, 101, 0, 0), FB_OK);
    uint32_t want[] = {101, 200, 300, 100, 201};
    sim_event ev;
    for (size_t i = 0; i < 5; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, want[i]);
    }
    assert_int_equal(sim_queue_len(&q), 0);
    sim_queue_free(&q);
}

static void queue_lane_rejects_out_of_order_push(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 50, 1, 1, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 49, 1, 2, 0, 0), FB_EINVAL);
    assert_int_equal(sim_queue_push_lane(&q, SIM_LANES_MAX, 60, 1, 2, 0, 0), FB_EINVAL);
    sim_queue_free(&q);
}

static void queue_lane_ring_survives_wraparound_and_growth(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100000), FB_OK);
    fb_time_us t = 0;
    uint32_t next_out = 0, next_in = 0;
    sim_event ev;
    /* interleave pushes and pops so the ring wraps, then grows while wrapped */
    for (int round = 0; round < 200; round++) {
        for (int k = 0; k < round % 37 + 1; k++)
            assert_int_equal(sim_queue_push_lane(&q, 2, t++, 1, next_in++, 0, 0), FB_OK);
        for (int k = 0; k < round % 23; k++) {
            if (!sim_queue_pop(&q, &ev)) break;
            assert_int_equal(ev.id, next_out++);
        }
    }
    while (sim_queue_pop(&q, &ev)) assert_int_equal(ev.id, next_out++);
    assert_int_equal(next_out, next_in);
    sim_queue_free(&q);
}

static void queue_cap_is_a_reported_error(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 16), FB_OK);
    for (uint32_t i = 0; i < 10; i++) assert_int_equal(sim_queue_push(&q, i, 1, i, 0, 0), FB_OK);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(sim_queue_push_lane(&q, 0, 100 + i, 1, i, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, 1, 1, 1, 0, 0), FB_ECAP);
    assert_int_equal(sim_queue_push_lane(&q, 0, 200, 1, 1, 0, 0), FB_ECAP);
    sim_event ev;
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(sim_queue_push(&q, 1, 1, 1, 0, 0), FB_OK);
    sim_queue_free(&q);
    assert_int_equal(sim_queue_init(&q, 3), FB_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_pops_in_time_order),
        cmocka_unit_test(queue_ties_resolve_in_push_order),
        cmocka_unit_test(queue_lanes_merge_with_the_heap),
        cmocka_unit_test(queue_lane_rejects_out_of_order_push),
        cmocka_unit_test(queue_lane_ring_survives_wraparound_and_growth),
        cmocka_unit_test(queue_cap_is_a_reported_error),
    };
    return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
