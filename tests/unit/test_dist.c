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
        sim_dist d = {.kind = SIM_DIST_LOGNORMAL, .a = params[k][0], .b = params[k][1]};
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
    sim_dist d = {.kind = SIM_DIST_LOGNORMAL, .a = 200, .b = 800};
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
        sim_dist d = {.kind = SIM_DIST_CONSTANT, .a = values[i], .b = 0};
        fb_rng r;
        fb_rng_seed(&r, 1, 1);
        assert_int_equal(scn_dist_draw_us(&r, &d), llround(values[i]));
        if (values[i] <= 1e8) assert_int_equal(scn_dist_draw_tokens(&r, &d), llround(values[i]));
    }
    /* and on many draws of a lognormal */
    sim_dist d = {.kind = SIM_DIST_LOGNORMAL, .a = 300, .b = 900};
    scn_dist_prepare(&d);
    fb_rng a, b;
    fb_rng_seed(&a, 3, 3);
    fb_rng_seed(&b, 3, 3);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(scn_dist_draw_tokens(&a, &d), llround(scn_dist_draw(&b, &d)));
}

static sim_dist parsed(const char *text, bool duration) {
    sim_dist d;
    sim_error err;
    memset(&d, 0, sizeof d);
    if (scn_dist_parse(text, strlen(text), "t", duration, &d, &err) != FB_OK)
        fail_msg("%s: %s: %s", text, err.path, err.msg);
    return d;
}

/* A mix of two token counts is drawn as that mix: each value by its weight, nothing else;
 * its median is the value half the weight reaches. */
static void dist_empirical_draws_each_value_by_its_weight(void **state) {
    (void)state;
    sim_dist d = parsed("{\"empirical\": {\"values\": [5, 48], \"weights\": [3, 1]}}", false);
    assert_int_equal(d.kind, SIM_DIST_EMPIRICAL);
    assert_int_equal(d.n, 2);
    assert_true(d.a == 5);
    fb_rng r;
    fb_rng_seed(&r, 7, 1);
    int five = 0, n = 40000;
    for (int i = 0; i < n; i++) {
        uint32_t t = scn_dist_draw_tokens(&r, &d);
        if (t != 5 && t != 48) fail_msg("drew %u", t);
        five += t == 5;
    }
    assert_in_range(five, (int)(0.74 * n), (int)(0.76 * n)); /* 3 sd: 0.0065 n */
    /* equal weights when none are given; durations read as durations */
    d = parsed("{\"empirical\": {\"values\": [\"100ms\", \"300ms\", \"2s\"]}}", true);
    assert_int_equal(d.n, 3);
    assert_true(d.v[2] == 2e6 && d.a == 300e3);
    assert_true(fabs(d.cw[0] - 1.0 / 3) < 1e-12 && d.cw[2] == 1);
}

static void dist_empirical_bad(const char *text, const char *path, const char *fragment) {
    sim_dist d;
    sim_error err;
    if (scn_dist_parse(text, strlen(text), "t", false, &d, &err) == FB_OK)
        fail_msg("accepted %s", text);
    if (strcmp(err.path, path) != 0 || strstr(err.msg, fragment) == NULL)
        fail_msg("%s: '%s: %s', expected '%s: ...%s'", text, err.path, err.msg, path, fragment);
}

static void dist_empirical_bad_input_names_its_path(void **state) {
    (void)state;
    dist_empirical_bad("{\"empirical\": {\"values\": [1, 2], \"weights\": [1]}}",
                       "empirical.weights", "1 weights for 2 values");
    dist_empirical_bad("{\"empirical\": {\"values\": []}}", "empirical.values", "1 to 16");
    dist_empirical_bad("{\"empirical\": {\"values\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}}",
                       "empirical.values", "1 to 16");
    dist_empirical_bad("{\"empirical\": {\"values\": [1, -2]}}", "empirical.values[1]",
                       "non-negative");
    dist_empirical_bad("{\"empirical\": {\"values\": [1], \"weights\": [0]}}", "empirical.weights",
                       "not all be zero");
    dist_empirical_bad("{\"empirical\": {\"weights\": [1]}}", "empirical", "values");
}

/* A quantile is a draw made of one uniform: the median and p99 of a lognormal at 0.5 and
   0.99, an empirical's values by their cumulative weights, an exponential's median. */
static void dist_quantile_inverts_each_kind(void **state) {
    (void)state;
    sim_dist ln = {.kind = SIM_DIST_LOGNORMAL, .a = 2, .b = 9};
    assert_true(fabs(scn_dist_quantile(&ln, 0.5) - 2) < 1e-6);
    assert_true(fabs(scn_dist_quantile(&ln, 0.99) - 9) < 1e-6);
    assert_true(scn_dist_quantile(&ln, 0.01) < 2 && scn_dist_quantile(&ln, 0.01) > 0);
    assert_true(scn_dist_quantile(&ln, 0.0) > 0); /* the ends are held finite */
    assert_true(isfinite(scn_dist_quantile(&ln, 1.0)));
    sim_dist em = {.kind = SIM_DIST_EMPIRICAL, .a = 3, .n = 3, .v = {1, 3, 8}, .cw = {0.2, 0.9, 1}};
    assert_true(scn_dist_quantile(&em, 0.1) == 1);
    assert_true(scn_dist_quantile(&em, 0.2) == 3);
    assert_true(scn_dist_quantile(&em, 0.95) == 8);
    sim_dist ex = {.kind = SIM_DIST_EXPONENTIAL, .a = 4};
    assert_true(fabs(scn_dist_quantile(&ex, 0.5) - 4 * log(2.0)) < 1e-12);
    sim_dist un = {.kind = SIM_DIST_UNIFORM, .a = 2, .b = 6};
    assert_true(scn_dist_quantile(&un, 0.25) == 3);
    /* the draws of a lognormal's quantiles at uniform draws have its median and p99 */
    fb_rng r;
    fb_rng_seed(&r, 3, 1);
    enum { N = 20000 };
    static double x[N];
    for (int i = 0; i < N; i++) x[i] = scn_dist_quantile(&ln, fb_rng_uniform(&r));
    int below_median = 0, below_p99 = 0;
    for (int i = 0; i < N; i++) below_median += x[i] < 2, below_p99 += x[i] < 9;
    assert_in_range(below_median, N / 2 - 300, N / 2 + 300);
    assert_in_range(below_p99, N * 99 / 100 - 60, N * 99 / 100 + 60);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dist_prepared_lognormal_is_fb_rng_lognormal),
        cmocka_unit_test(dist_unprepared_lognormal_still_draws),
        cmocka_unit_test(dist_rounding_is_llround),
        cmocka_unit_test(dist_empirical_draws_each_value_by_its_weight),
        cmocka_unit_test(dist_empirical_bad_input_names_its_path),
        cmocka_unit_test(dist_quantile_inverts_each_kind),
    };
    return cmocka_run_group_tests_name("dist", tests, NULL, NULL);
}
