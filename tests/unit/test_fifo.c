/* test_fifo.c - the simulator's one FIFO (sim/fifo.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/fifo.h"

static void fifo_keeps_order_across_growth_while_wrapped(void **state) {
    (void)state;
    sim_fifo f;
    sim_fifo_init(&f, sizeof(uint32_t), 1000);
    uint32_t next_in = 0, next_out = 0, v;
    /* keep the ring wrapped whenever it grows: pop a few after every few pushes */
    for (int round = 0; round < 300; round++) {
        for (int k = 0; k < 5; k++)
            assert_int_equal(sim_fifo_push(&f, &(uint32_t){next_in++}), FB_OK);
        for (int k = 0; k < 2; k++) {
            assert_true(sim_fifo_pop(&f, &v));
            assert_int_equal(v, next_out++);
        }
    }
    assert_int_equal(f.len, next_in - next_out);
    assert_int_equal(*(uint32_t *)sim_fifo_head(&f), next_out);
    assert_int_equal(*(uint32_t *)sim_fifo_tail(&f), next_in - 1);
    while (sim_fifo_pop(&f, &v)) assert_int_equal(v, next_out++);
    assert_int_equal(next_out, next_in);
    assert_null(sim_fifo_head(&f));
    sim_fifo_free(&f);
}

/* A cap that is not a doubling: the last growth is smaller than the wrapped part. */
static void fifo_grows_to_an_odd_cap_while_wrapped(void **state) {
    (void)state;
    sim_fifo f;
    sim_fifo_init(&f, sizeof(uint64_t), 70);
    uint64_t v, in = 0, out = 0;
    for (int k = 0; k < 64; k++) assert_int_equal(sim_fifo_push(&f, &(uint64_t){in++}), FB_OK);
    for (int k = 0; k < 40; k++) assert_true(sim_fifo_pop(&f, &v));
    out = 40;
    /* head at 40 of 64: refill to 64 (wrapped), then grow to 70 */
    for (int k = 0; k < 46; k++) assert_int_equal(sim_fifo_push(&f, &(uint64_t){in++}), FB_OK);
    assert_int_equal(f.cap, 70);
    assert_int_equal(f.len, 70);
    assert_int_equal(sim_fifo_push(&f, &(uint64_t){in}), FB_ECAP);
    while (sim_fifo_pop(&f, &v)) assert_int_equal(v, out++);
    assert_int_equal(out, in);
    sim_fifo_free(&f);
}

/* Pushes and tail pops in any mix hand back the newest item, across growth and wrap-around. */
static void fifo_pop_tail_takes_the_newest(void **state) {
    (void)state;
    sim_fifo f;
    sim_fifo_init(&f, sizeof(uint32_t), 1000);
    uint32_t v;
    for (uint32_t k = 0; k < 50; k++) assert_int_equal(sim_fifo_push(&f, &k), FB_OK);
    for (uint32_t k = 0; k < 40; k++) assert_true(sim_fifo_pop(&f, &v)); /* head at 40 */
    for (uint32_t k = 50; k < 130; k++) assert_int_equal(sim_fifo_push(&f, &k), FB_OK);
    assert_int_equal(f.cap, 128); /* grew while wrapped */
    assert_true(sim_fifo_pop_tail(&f, &v));
    assert_int_equal(v, 129);
    assert_true(sim_fifo_pop_tail(&f, &v));
    assert_int_equal(v, 128);
    assert_true(sim_fifo_pop(&f, &v));
    assert_int_equal(v, 40); /* the head is untouched */
    assert_int_equal(f.len, 87);
    uint32_t want = 127;
    while (sim_fifo_pop_tail(&f, &v)) assert_int_equal(v, want--);
    assert_int_equal(want, 40);
    assert_false(sim_fifo_pop_tail(&f, &v));
    sim_fifo_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_keeps_order_across_growth_while_wrapped),
        cmocka_unit_test(fifo_grows_to_an_odd_cap_while_wrapped),
        cmocka_unit_test(fifo_pop_tail_takes_the_newest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
