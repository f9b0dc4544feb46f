/* test_dist.c - drawing from the scenario's distributions (scenario/dist.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "scenario/dist.h"
#include "tests/unit/helpers.h"

/* A prepared lognormal draws fb_rng_lognormal's numbers bit for bit, and leaves the stream
 * where fb_rng_lognormal leaves it, for ordinary and degenerate parameters alike. */
static void dist_prepared_lognormal_is_fb_rng_lognormal(void **state) {
    (void)state;
    static const double params[][2] = {{600e3, 3e6},   {3000, 20000}, {1, 1.0000001},
                                       {150e3, 150e3}, {42, 41},      {1e-3, 1e9}};
    for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
        sim_dist d = {SIM_DIST_LOGNORMAL, params[k][0], params[k][1], false, 0, 0};
        scn_dist_prepare(&d);
        assert_int_equal(d.prepared, params[k][1] > params[k][0]);
        fb_rng a, b;
        fb_rng_seed(&a, 5, k);
        fb_rng_seed(&b, 5, k);
        for (int i = 0; i < 20000; i++) {
            double want = fb_rng_lognormal(&a, params[k][0], params[k][1]);
            double got = scn_dist_draw(&b, &d);
            assert_memory_equal(&got, &want, sizeof got);
        }
        assert_int_equal(fb_rng_u32(&a), fb_rng_u32(&b));
    }
}

/* Not prepared (built by hand): the same draws, through fb_rng_lognormal. */
static void dist_unprepared_lognormal_still_draws(void **state) {
    (void)state;
    sim_dist d = {SIM_DIST_LOGNORMAL, 200, 800, false, 0, 0};
    fb_rng a, b;
    fb_rng_seed(&a, 9, 1);
    fb_rng_seed(&b, 9, 1);
    for (int i = 0; i < 1000; i++) {
        double want = fb_rng_lognormal(&a, 200, 800);
        double got = scn_dist_draw(&b, &d);
        assert_memory_equal(&got, &want, sizeof got);
    }
}

/* Durations and token counts round as llround does, halves away from zero included. */
static void dist_rounding_is_llround(void **state) {
    (void)state;
    static const double values[] = {
        0.5,        1.5,    2.5,          0.49999999999999994, 1e15, 999999.5, 562949953421311.5,
        12345.4999, 3e-300, 1.0000000001, 7.5e14 + 0.5};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        sim_dist d = {SIM_DIST_CONSTANT, values[i], 0, false, 0, 0};
        fb_rng r;
        fb_rng_seed(&r, 1, 1);
        assert_int_equal(scn_dist_draw_us(&r, &d), llround(values[i]));
        if (values[i] <= 1e8) assert_int_equal(scn_dist_draw_tokens(&r, &d), llround(values[i]));
    }
    /* and on many draws of a lognormal */
    sim_dist d = {SIM_DIST_LOGNORMAL, 300, 900, false, 0, 0};
    scn_dist_prepare(&d);
    fb_rng a, b;
    fb_rng_seed(&a, 3, 3);
    fb_rng_seed(&b, 3, 3);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(scn_dist_draw_tokens(&a, &d), llround(scn_dist_draw(&b, &d)));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dist_prepared_lognormal_is_fb_rng_lognormal),
        cmocka_unit_test(dist_unprepared_lognormal_still_draws),
        cmocka_unit_test(dist_rounding_is_llround),
    };
    return cmocka_run_group_tests_name("dist", tests, NULL, NULL);
}
