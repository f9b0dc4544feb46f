/* test_rng.c - PCG32 reference output, golden draws, streams, bounds, statistics. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/rng_zig.h"

/* Bit pattern of a double, so golden values compare exactly and print in hex. */
static uint64_t bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

#define assert_double_exact(got, want) assert_int_equal(bits(got), bits(want))

static void rng_u32_matches_pcg32_reference_seed_42_stream_54(void **state) {
    (void)state;
    /* pcg32-demo from pcg-c-basic: pcg32_srandom_r(&rng, 42u, 54u). */
    static const uint32_t want[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                    0x83d2f293, 0xbfa4784b, 0xcbed606e};
    fb_rng r;
    fb_rng_seed(&r, 42, 54);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(fb_rng_u32(&r), want[i]);
    }
}

static void rng_derive_golden_u32_and_u64(void **state) {
    (void)state;
    static const uint32_t want32[] = {0x20f7c09a, 0x038ad280, 0x25f06241,
                                      0x6b7bf6ca, 0x75e74166, 0xca8e763f};
    fb_rng r;
    fb_rng_derive(&r, 42, 1, 1);
    for (size_t i = 0; i < sizeof want32 / sizeof want32[0]; i++) {
        assert_int_equal(fb_rng_u32(&r), want32[i]);
    }
    /* u64 is two u32 draws, high half first. */
    fb_rng_derive(&r, 42, 1, 1);
    assert_int_equal(fb_rng_u64(&r), UINT64_C(0x20f7c09a038ad280));
    assert_int_equal(fb_rng_u64(&r), UINT64_C(0x25f062416b7bf6ca));
    assert_int_equal(fb_rng_u64(&r), UINT64_C(0x75e74166ca8e763f));
}

static void rng_golden_doubles_catch_any_algorithm_change(void **state) {
    (void)state;
    fb_rng r;

    fb_rng_derive(&r, 7, 0, 0);
    assert_double_exact(fb_rng_uniform(&r), 0x1.0489a00ad5548p-1);
    assert_double_exact(fb_rng_uniform(&r), 0x1.22d4a225bbc5p-5);
    assert_double_exact(fb_rng_uniform(&r), 0x1.aa98806e42cbcp-2);
    assert_double_exact(fb_rng_uniform(&r), 0x1.8390eb1676a54p-3);

    fb_rng_derive(&r, 7, 0, 0);
    assert_double_exact(fb_rng_exponential(&r, 2.5), 0x1.0df5b26b2bb48p+1);
    assert_double_exact(fb_rng_exponential(&r, 2.5), 0x1.b9d36ec5ddcefp-3);
    assert_double_exact(fb_rng_exponential(&r, 2.5), 0x1.38178baee9b6cp+1);
    assert_double_exact(fb_rng_exponential(&r, 2.5), 0x1.41e95912b6665p-1);

    fb_rng_derive(&r, 7, 0, 0);
    assert_double_exact(fb_rng_normal(&r), 0x1.bbe7dafeaf196p-6);
    assert_double_exact(fb_rng_normal(&r), -0x1.c684e0f1b45cap+0);
    assert_double_exact(fb_rng_normal(&r), -0x1.3f6cac1da0acdp-2);
    assert_double_exact(fb_rng_normal(&r), -0x1.aaabf98223408p-1);

    fb_rng_derive(&r, 7, 0, 0);
    assert_double_exact(fb_rng_lognormal(&r, 3000, 20000), 0x1.7f60b60e09636p+11);
    assert_double_exact(fb_rng_lognormal(&r, 3000, 20000), 0x1.609a3dc5dffddp+9);
    assert_double_exact(fb_rng_lognormal(&r, 3000, 20000), 0x1.22c5e237310e5p+11);
    assert_double_exact(fb_rng_lognormal(&r, 3000, 20000), 0x1.7c1eca715edacp+10);

    /* the inverse-CDF table (random streams fusebox-3): built with rng.c's own exp only */
    static fb_lntab tab;
    fb_lntab_init(&tab, log(3000.0), log(20000.0 / 3000.0) / 2.3263478740408408);
    fb_rng_derive(&r, 7, 0, 0);
    assert_double_exact(fb_rng_lognormal_tab(&r, &tab), 0x1.442e4e9c7a163p+14);
    assert_double_exact(fb_rng_lognormal_tab(&r, &tab), 0x1.58142d272a6eep+9);
    assert_double_exact(fb_rng_lognormal_tab(&r, &tab), 0x1.3bd4290013125p+11);
    assert_double_exact(fb_rng_lognormal_tab(&r, &tab), 0x1.6db89419358b9p+10);

    fb_rng_derive(&r, 7, 0, 0);
    static const uint64_t want_below[] = {5, 4, 0, 1, 4, 5};
    for (size_t i = 0; i < sizeof want_below / sizeof want_below[0]; i++) {
        assert_int_equal(fb_rng_below(&r, 10), want_below[i]);
    }
}

/* docs/rng.md's derivation, written out: h = mix(mix(mix(seed) ^ purpose) ^ entity) is the
 * state, (mix(h ^ 0x5851f42d4c957f2d) << 1) | 1 the increment; the family's halves agree. */
static uint64_t doc_mix(uint64_t x) {
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static void rng_derive_is_the_documented_hash_and_the_family_agrees(void **state) {
    (void)state;
    static const uint64_t in[][3] = {{0, 0, 0}, {42, 1, 1}, {7, 12345, 2}, {UINT64_MAX, 3, 99}};
    for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
        uint64_t h = doc_mix(doc_mix(doc_mix(in[k][0]) ^ in[k][2]) ^ in[k][1]);
        fb_rng a, b;
        fb_rng_derive(&a, in[k][0], in[k][1], in[k][2]);
        assert_int_equal(a.state, h);
        assert_int_equal(a.inc, (doc_mix(h ^ UINT64_C(0x5851f42d4c957f2d)) << 1) | 1u);
        fb_rng_family f;
        fb_rng_family_init(&f, in[k][0], in[k][2]);
        fb_rng_family_derive(&f, &b, in[k][1]);
        for (int i = 0; i < 100; i++) assert_int_equal(fb_rng_u32(&a), fb_rng_u32(&b));
    }
}

static void rng_derive_is_a_pure_function_of_its_inputs(void **state) {
    (void)state;
    fb_rng a, b;
    fb_rng_derive(&a, 99, 12345, 3);
    fb_rng_derive(&b, 99, 12345, 3);
    for (int i = 0; i < 1000; i++) assert_int_equal(fb_rng_u32(&a), fb_rng_u32(&b));
}

/* Hamming distance between the first u64 of two derived streams. */
static int first_draw_distance(uint64_t s1, uint64_t e1, uint64_t p1, uint64_t s2, uint64_t e2,
                               uint64_t p2) {
    fb_rng a, b;
    fb_rng_derive(&a, s1, e1, p1);
    fb_rng_derive(&b, s2, e2, p2);
    return __builtin_popcountll(fb_rng_u64(&a) ^ fb_rng_u64(&b));
}

static void rng_derive_nearby_ids_give_unrelated_streams(void **state) {
    (void)state;
    /*
     * Neighbouring seeds, entities and purposes: the first draws differ in
     * about half their bits (32 of 64) on average, as for independent draws.
     */
    long sum_seed = 0, sum_entity = 0, sum_purpose = 0, sum_swap = 0;
    const int n = 2000;
    for (int i = 0; i < n; i++) {
        uint64_t k = (uint64_t)i;
        sum_seed += first_draw_distance(k, 5, 1, k + 1, 5, 1);
        sum_entity += first_draw_distance(42, k, 1, 42, k + 1, 1);
        sum_purpose += first_draw_distance(42, 5, k, 42, 5, k + 1);
        sum_swap += first_draw_distance(42, k, k + 1, 42, k + 1, k);
    }
    /* Mean of n binomial(64, 1/2): standard error 4/sqrt(n) ~ 0.09 bits. */
    assert_true(labs(sum_seed - 32L * n) < n / 2);
    assert_true(labs(sum_entity - 32L * n) < n / 2);
    assert_true(labs(sum_purpose - 32L * n) < n / 2);
    assert_true(labs(sum_swap - 32L * n) < n / 2);
}

static void rng_derived_streams_are_uncorrelated(void **state) {
    (void)state;
    /* Pearson correlation of uniforms drawn in lockstep from entity 0 and 1. */
    fb_rng a, b;
    fb_rng_derive(&a, 1, 0, 0);
    fb_rng_derive(&b, 1, 1, 0);
    const int n = 100000;
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    int equal = 0;
    for (int i = 0; i < n; i++) {
        uint32_t xa = fb_rng_u32(&a), xb = fb_rng_u32(&b);
        equal += xa == xb;
        double ua = xa / 4294967296.0, ub = xb / 4294967296.0;
        sa += ua;
        sb += ub;
        saa += ua * ua;
        sbb += ub * ub;
        sab += ua * ub;
    }
    double cov = sab / n - (sa / n) * (sb / n);
    double corr = cov / sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
    /* Standard error of corr is 1/sqrt(n) ~ 0.003. */
    assert_true(fabs(corr) < 0.015);
    assert_true(equal < 3);
}

static void rng_seed_streams_differ_for_the_same_seed(void **state) {
    (void)state;
    fb_rng a, b;
    fb_rng_seed(&a, 42, 54);
    fb_rng_seed(&b, 42, 55);
    int equal = 0;
    for (int i = 0; i < 1000; i++) equal += fb_rng_u32(&a) == fb_rng_u32(&b);
    assert_true(equal < 3);
}

static void rng_below_zero_and_one_return_zero(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 3, 0, 0);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(fb_rng_below(&r, 0), 0);
        assert_int_equal(fb_rng_below(&r, 1), 0);
    }
}

static void rng_below_stays_in_bounds(void **state) {
    (void)state;
    static const uint64_t ns[] = {2,
                                  3,
                                  7,
                                  10,
                                  1000,
                                  UINT32_MAX - 1,
                                  UINT32_MAX,
                                  UINT64_C(1) << 32,
                                  (UINT64_C(1) << 32) + 1,
                                  UINT64_C(1) << 63,
                                  (UINT64_C(1) << 63) + 1,
                                  UINT64_MAX};
    fb_rng r;
    fb_rng_derive(&r, 4, 0, 0);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        uint64_t top = 0;
        for (int i = 0; i < 20000; i++) {
            uint64_t x = fb_rng_below(&r, ns[k]);
            assert_true(x < ns[k]);
            if (x > top) top = x;
        }
        /* The range is used, not just its bottom: the largest draw is near n. */
        assert_true(top >= ns[k] - ns[k] / 100 - 1);
    }
}

static void rng_below_every_value_is_equally_likely(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 5, 0, 0);
    uint32_t counts[10] = {0};
    const int n = 100000;
    for (int i = 0; i < n; i++) counts[fb_rng_below(&r, 10)]++;
    double chi2 = 0;
    for (int k = 0; k < 10; k++) {
        double d = counts[k] - n / 10.0;
        chi2 += d * d / (n / 10.0);
    }
    /* 9 degrees of freedom: P(chi2 > 27.9) = 0.001. */
    assert_true(chi2 < 27.9);
}

static void rng_below_is_unbiased_where_naive_reduction_is_not(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 6, 0, 0);
    const int n = 60000;
    /*
     * n = 3 * 2^30: a bare multiply-shift maps four u32 values onto three
     * results, giving residue 0 (mod 3) probability 1/2 instead of 1/3.
     */
    int zero = 0;
    for (int i = 0; i < n; i++) zero += fb_rng_below(&r, UINT64_C(3) << 30) % 3 == 0;
    assert_true(fabs((double)zero / n - 1.0 / 3) < 0.01);
    /* n = 3 * 2^62: a bare u64 % n lands below 2^62 half the time instead of a third. */
    int low = 0;
    for (int i = 0; i < n; i++) low += fb_rng_below(&r, UINT64_C(3) << 62) < (UINT64_C(1) << 62);
    assert_true(fabs((double)low / n - 1.0 / 3) < 0.01);
}

static void rng_uniform_is_in_unit_interval_with_mean_one_half(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 8, 0, 0);
    const int n = 200000;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double u = fb_rng_uniform(&r);
        assert_true(u >= 0.0 && u < 1.0);
        /* 53 bits: every draw is a multiple of 2^-53. */
        assert_true(u * 0x1.0p53 == floor(u * 0x1.0p53));
        sum += u;
    }
    assert_true(fabs(sum / n - 0.5) < 0.003);
}

static void rng_exponential_has_the_requested_mean(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 9, 0, 0);
    const int n = 200000;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double x = fb_rng_exponential(&r, 250.0);
        assert_true(x >= 0.0);
        assert_false(signbit(x));
        sum += x;
    }
    /* Standard error 250/sqrt(n) ~ 0.56. */
    assert_true(fabs(sum / n - 250.0) < 3.0);
}

static void rng_normal_has_mean_zero_and_variance_one(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 10, 0, 0);
    const int n = 200000;
    double sum = 0, sum2 = 0;
    int beyond = 0;
    for (int i = 0; i < n; i++) {
        double z = fb_rng_normal(&r);
        sum += z;
        sum2 += z * z;
        beyond += z > 2.3263478740408408;
    }
    double mean = sum / n;
    assert_true(fabs(mean) < 0.01);
    assert_true(fabs(sum2 / n - mean * mean - 1.0) < 0.02);
    /* One draw in a hundred lies above the 99th-percentile quantile. */
    assert_true(fabs((double)beyond / n - 0.01) < 0.001);
}

/* The ziggurat's layers (core/rng_zig.h) all have the base layer's area V, and F is f(X). */
static void rng_zig_layers_have_equal_areas(void **state) {
    (void)state;
    double vn = ZIG_NORM_X[0] * ZIG_NORM_F[1], ve = ZIG_EXP_X[0] * ZIG_EXP_F[1];
    assert_true(fabs(vn / 0.0049286732339746553 - 1) < 1e-15);
    assert_true(fabs(ve / 0.0039496598225815572 - 1) < 1e-15);
    assert_double_exact(ZIG_NORM_X[1], ZIG_NORM_R);
    assert_double_exact(ZIG_EXP_X[1], ZIG_EXP_R);
    assert_double_exact(ZIG_NORM_X[256], 0.0);
    assert_double_exact(ZIG_NORM_F[256], 1.0);
    for (int i = 1; i < 256; i++) {
        assert_true(ZIG_NORM_X[i + 1] < ZIG_NORM_X[i]);
        assert_true(fabs(ZIG_NORM_X[i] * (ZIG_NORM_F[i + 1] - ZIG_NORM_F[i]) / vn - 1) < 1e-12);
        assert_true(fabs(ZIG_EXP_X[i] * (ZIG_EXP_F[i + 1] - ZIG_EXP_F[i]) / ve - 1) < 1e-12);
        assert_true(fabs(ZIG_NORM_F[i] / exp(-0.5 * ZIG_NORM_X[i] * ZIG_NORM_X[i]) - 1) < 1e-14);
        assert_true(fabs(ZIG_EXP_F[i] / exp(-ZIG_EXP_X[i]) - 1) < 1e-14);
    }
}

static double big[1000000];

/* Kolmogorov-Smirnov distance between the sorted sample and the CDF. */
static double ks_distance(const double *x, size_t n, double (*cdf)(double)) {
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double f = cdf(x[i]);
        double lo = f - (double)i / (double)n, hi = (double)(i + 1) / (double)n - f;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    return d;
}

static double normal_cdf(double x) {
    return 0.5 * erfc(-x / sqrt(2.0));
}
static double exponential_cdf(double x) {
    return x <= 0 ? 0 : -expm1(-x);
}

static int cmp_double(const void *a, const void *b);

/*
 * 10^6 normal draws (fixed seed) against the exact distribution: the Kolmogorov-Smirnov
 * distance under its 0.1% critical value (1.95 / sqrt(n)), quantiles from the 0.1% to the
 * 99.9% within the sampling error, and the tail beyond R (drawn apart, 2.58e-4 of the mass)
 * as often as it should be.
 */
static void rng_normal_matches_the_exact_distribution(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 20, 0, 0);
    const size_t n = sizeof big / sizeof big[0];
    size_t tail = 0;
    for (size_t i = 0; i < n; i++) {
        big[i] = fb_rng_normal(&r);
        tail += fabs(big[i]) >= ZIG_NORM_R;
    }
    qsort(big, n, sizeof big[0], cmp_double);
    double d = ks_distance(big, n, normal_cdf);
    assert_true(d < 1.95 / sqrt((double)n));
    static const struct {
        double p, z;
    } q[] = {{0.001, -3.090232306167814}, {0.01, -2.3263478740408408},
             {0.1, -1.2815515655446004},  {0.5, 0.0},
             {0.9, 1.2815515655446004},   {0.99, 2.3263478740408408},
             {0.999, 3.090232306167814}};
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
        /* the quantile's standard error is sqrt(p(1-p)/n) / pdf(z): 0.0032 at p = 0.001 */
        double pdf = exp(-0.5 * q[k].z * q[k].z) / sqrt(2 * M_PI);
        double se = sqrt(q[k].p * (1 - q[k].p) / (double)n) / pdf;
        assert_true(fabs(big[(size_t)(q[k].p * (double)n)] - q[k].z) < 4 * se);
    }
    /* 2 * (1 - Phi(R)) = 2.5802e-4: 258 expected, standard deviation 16 */
    assert_true(tail > 258 - 5 * 16 && tail < 258 + 5 * 16);
    assert_true(big[n - 1] > ZIG_NORM_R && big[0] < -ZIG_NORM_R);
    /* The tail's shape: 4e6 more draws, ~1,030 beyond R, their mean excess over R against
     * pdf(R) / (1 - Phi(R)) - R = 0.2437 (standard deviation of one excess about 0.24). */
    double excess = 0;
    size_t m = 0, pos = 0;
    for (size_t i = 0; i < 4 * n; i++) {
        double z = fb_rng_normal(&r);
        if (fabs(z) < ZIG_NORM_R) continue;
        excess += fabs(z) - ZIG_NORM_R;
        pos += z > 0;
        m++;
    }
    double want = exp(-0.5 * ZIG_NORM_R * ZIG_NORM_R) / sqrt(2 * M_PI) /
                      (0.5 * erfc(ZIG_NORM_R / sqrt(2.0))) -
                  ZIG_NORM_R;
    assert_true(m > 900 && m < 1160);
    assert_true(fabs(excess / (double)m - want) < 4 * 0.25 / sqrt((double)m));
    assert_true(fabs((double)pos / (double)m - 0.5) < 4 * 0.5 / sqrt((double)m)); /* both sides */
}

/* The same for the exponential; its tail beyond R is exp(-R) = 4.54e-4 of the mass. */
static void rng_exponential_matches_the_exact_distribution(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 21, 0, 0);
    const size_t n = sizeof big / sizeof big[0];
    size_t tail = 0;
    for (size_t i = 0; i < n; i++) {
        big[i] = fb_rng_exponential(&r, 1.0);
        tail += big[i] >= ZIG_EXP_R;
    }
    qsort(big, n, sizeof big[0], cmp_double);
    assert_true(ks_distance(big, n, exponential_cdf) < 1.95 / sqrt((double)n));
    static const double p[] = {0.001, 0.1, 0.5, 0.9, 0.99, 0.999};
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) {
        double want = -log1p(-p[k]), se = sqrt(p[k] * (1 - p[k]) / (double)n) / (1 - p[k]);
        assert_true(fabs(big[(size_t)(p[k] * (double)n)] - want) < 4 * se);
    }
    assert_true(tail > 454 - 5 * 21 && tail < 454 + 5 * 21);
    /* Beyond R it is R plus a fresh exponential: 4e6 more draws, ~1,820 beyond, mean excess 1. */
    double excess = 0;
    size_t m = 0;
    for (size_t i = 0; i < 4 * n; i++) {
        double x = fb_rng_exponential(&r, 1.0);
        if (x < ZIG_EXP_R) continue;
        excess += x - ZIG_EXP_R;
        m++;
    }
    assert_true(m > 1600 && m < 2040);
    assert_true(fabs(excess / (double)m - 1.0) < 4.0 / sqrt((double)m));
}

/*
 * The lognormal's exp is rng.c's own (a table and a polynomial, no libm): each draw against
 * libm's exp of the same normal, 10^6 draws over exponents from -60 to 60 (within 1e-15,
 * 4.5 ulp), and libm's own bits beyond +-708.
 */
static void rng_lognormal_exp_agrees_with_libm(void **state) {
    (void)state;
    fb_rng r, z;
    fb_rng_derive(&r, 22, 0, 0);
    double worst = 0;
    for (int i = 0; i < 1000000; i++) {
        double ln_median = (double)(i % 101) * 0.5 - 25, sigma = (double)(i % 37) * 0.25;
        z = r;
        double got = fb_rng_lognormal_ln(&r, ln_median, sigma);
        double want = exp(ln_median + sigma * fb_rng_normal(&z));
        double rel = fabs(got / want - 1);
        if (rel > worst) worst = rel;
        assert_int_equal(r.state, z.state); /* one normal's draws, no more */
    }
    assert_true(worst < 1e-15);
    assert_true(worst > 0); /* not libm's exp itself */
    for (int i = 0; i < 1000; i++) {
        z = r;
        double got = fb_rng_lognormal_ln(&r, 705.0, 10.0);
        double y = 705.0 + 10.0 * fb_rng_normal(&z);
        if (y > 708.0 || y < -708.0) assert_double_exact(got, exp(y));
    }
}

static double lognormal_cdf_ln_median, lognormal_cdf_sigma;
static double lognormal_cdf(double x) {
    return x <= 0 ? 0 : normal_cdf((log(x) - lognormal_cdf_ln_median) / lognormal_cdf_sigma);
}

/* 10^6 lognormal draws (median 600 ms, p99 3 s; fixed seed) against the exact distribution:
 * Kolmogorov-Smirnov and quantiles, as for the normal. */
static void rng_lognormal_matches_the_exact_distribution(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 23, 0, 0);
    const size_t n = sizeof big / sizeof big[0];
    for (size_t i = 0; i < n; i++) big[i] = fb_rng_lognormal(&r, 600000.0, 3000000.0);
    qsort(big, n, sizeof big[0], cmp_double);
    lognormal_cdf_ln_median = log(600000.0);
    lognormal_cdf_sigma = log(5.0) / 2.3263478740408408;
    assert_true(ks_distance(big, n, lognormal_cdf) < 1.95 / sqrt((double)n));
    static const struct {
        double p, z;
    } q[] = {{0.001, -3.090232306167814}, {0.1, -1.2815515655446004}, {0.5, 0.0},
             {0.9, 1.2815515655446004},   {0.99, 2.3263478740408408}, {0.999, 3.090232306167814}};
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
        double pdf = exp(-0.5 * q[k].z * q[k].z) / sqrt(2 * M_PI);
        double se = sqrt(q[k].p * (1 - q[k].p) / (double)n) / pdf; /* of z */
        double got = log(big[(size_t)(q[k].p * (double)n)] / 600000.0) / lognormal_cdf_sigma;
        assert_true(fabs(got - q[k].z) < 4 * se);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double samples[200000];

static void rng_lognormal_hits_median_and_p99(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 11, 0, 0);
    const size_t n = sizeof samples / sizeof samples[0];
    for (size_t i = 0; i < n; i++) {
        samples[i] = fb_rng_lognormal(&r, 600000.0, 3000000.0);
        assert_true(samples[i] > 0.0);
    }
    qsort(samples, n, sizeof samples[0], cmp_double);
    double median = samples[n / 2], p99 = samples[n * 99 / 100];
    assert_true(fabs(median / 600000.0 - 1.0) < 0.01);
    assert_true(fabs(p99 / 3000000.0 - 1.0) < 0.03);
}

static void rng_lognormal_with_p99_equal_to_median_returns_the_median(void **state) {
    (void)state;
    fb_rng r;
    fb_rng_derive(&r, 12, 0, 0);
    for (int i = 0; i < 1000; i++) assert_double_exact(fb_rng_lognormal(&r, 0.3, 0.3), 0.3);
    for (int i = 0; i < 1000; i++) assert_double_exact(fb_rng_lognormal(&r, 1e6, 1e6), 1e6);
}

static void rng_lognormal_consumes_the_same_draws_whatever_its_parameters(void **state) {
    (void)state;
    /* A parameter change must not shift the rest of the stream. */
    fb_rng a, b;
    fb_rng_derive(&a, 13, 0, 0);
    fb_rng_derive(&b, 13, 0, 0);
    for (int i = 0; i < 100; i++) {
        (void)fb_rng_lognormal(&a, 5.0, 5.0);
        (void)fb_rng_lognormal(&b, 600.0, 3000.0);
    }
    assert_int_equal(fb_rng_u32(&a), fb_rng_u32(&b));
}

/* ---- the lognormal's inverse-CDF table (fb_lntab, random streams fusebox-3) ---- */

static fb_lntab lntab;

/* The three shapes the tests draw from: p99 / median = 1.5, 5 (the flagship's TTFT) and 100. */
static const double lntab_p99_over_median[] = {1.5, 5.0, 100.0};

/*
 * The table's nodes are the exact quantiles: exp(ln_median +- sigma * z) at the z of
 * LNTAB_Z (mpmath, 60 digits), within rng.c's exp (2 ulp; 1e-15 relative), increasing along
 * each row of the upper half (t falls: z grows) and decreasing along the lower's. And linear
 * interpolation between them, as the draw does, is within 3e-4 of the exact distribution
 * everywhere: at the middle of every cell of both halves (where linear interpolation is worst),
 * the exact tail probability of the interpolated value, against the cell's middle t, off by
 * less than 3e-4 of t (relative: the deepest octave's t is 3e-8), for the three shapes.
 */
static void rng_lognormal_table_nodes_are_exact_and_cells_fine_enough(void **state) {
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        const double sigma = log(lntab_p99_over_median[k]) / 2.3263478740408408, mu = log(600.0);
        fb_lntab_init(&lntab, mu, sigma);
        double worst = 0;
        for (int oct = 0; oct < LNTAB_OCTAVES; oct++) {
            for (int c = 0; c <= LNTAB_CELLS; c++) {
                int j = oct * (LNTAB_CELLS + 1) + c;
                double z = LNTAB_Z[j];
                assert_true(fabs(lntab.hi[j] / exp(mu + sigma * z) - 1) < 1e-15);
                assert_true(fabs(lntab.lo[j] / exp(mu - sigma * z) - 1) < 1e-15);
                if (c == LNTAB_CELLS) continue;
                assert_true(lntab.hi[j + 1] < lntab.hi[j] && lntab.lo[j + 1] > lntab.lo[j]);
                /* the middle of the cell: t = 2^-(oct+2) * (1 + (c + 1/2) / 32) */
                double t = ldexp(1.0 + (c + 0.5) / LNTAB_CELLS, -(oct + 2));
                double hi = 0.5 * (lntab.hi[j] + lntab.hi[j + 1]);
                double lo = 0.5 * (lntab.lo[j] + lntab.lo[j + 1]);
                double t_hi = 0.5 * erfc((log(hi) - mu) / sigma / sqrt(2.0));  /* P(X > hi) */
                double t_lo = 0.5 * erfc(-(log(lo) - mu) / sigma / sqrt(2.0)); /* P(X < lo) */
                double e = fmax(fabs(t_hi / t - 1), fabs(t_lo / t - 1));
                if (e > worst) worst = e;
            }
        }
        if (!(worst < 3e-4)) fail_msg("p99/median %g: %g", lntab_p99_over_median[k], worst);
    }
    /* the table's last node is where the tail starts */
    assert_double_exact(LNTAB_Z[LNTAB_OCTAVES * (LNTAB_CELLS + 1) - (LNTAB_CELLS + 1)], LNTAB_ZMAX);
}

/*
 * 10^6 draws from the table (fixed seed) of each shape against the exact lognormal:
 * Kolmogorov-Smirnov under its 0.1% critical value, a chi-square over 1,000 cells of equal
 * probability under its 0.1% critical value (1,142.8 for 999 degrees of freedom), quantiles
 * from 0.1% to 99.9% within 4 standard errors, and the mean within 4 standard errors.
 */
static void rng_lognormal_table_matches_the_exact_distribution(void **state) {
    (void)state;
    const size_t n = sizeof big / sizeof big[0];
    for (size_t k = 0; k < 3; k++) {
        const double sigma = log(lntab_p99_over_median[k]) / 2.3263478740408408, mu = log(600.0);
        fb_lntab_init(&lntab, mu, sigma);
        fb_rng r;
        fb_rng_derive(&r, 29, k, 0);
        double sum = 0;
        static uint32_t cells[1000];
        memset(cells, 0, sizeof cells);
        for (size_t i = 0; i < n; i++) {
            big[i] = fb_rng_lognormal_tab(&r, &lntab);
            assert_true(big[i] > 0);
            sum += big[i];
        }
        lognormal_cdf_ln_median = mu;
        lognormal_cdf_sigma = sigma;
        for (size_t i = 0; i < n; i++) {
            size_t c = (size_t)(lognormal_cdf(big[i]) * 1000);
            cells[c < 1000 ? c : 999]++;
        }
        double chi2 = 0, expect = (double)n / 1000;
        for (size_t c = 0; c < 1000; c++)
            chi2 += (cells[c] - expect) * (cells[c] - expect) / expect;
        if (!(chi2 < 1142.8)) fail_msg("p99/median %g: chi2 %g", lntab_p99_over_median[k], chi2);
        double mean = exp(mu + sigma * sigma / 2), sd = mean * sqrt(expm1(sigma * sigma));
        if (!(fabs(sum / (double)n - mean) < 4 * sd / sqrt((double)n)))
            fail_msg("p99/median %g: mean %g, want %g", lntab_p99_over_median[k], sum / (double)n,
                     mean);
        qsort(big, n, sizeof big[0], cmp_double);
        double ks = ks_distance(big, n, lognormal_cdf);
        if (!(ks < 1.95 / sqrt((double)n)))
            fail_msg("p99/median %g: KS %g", lntab_p99_over_median[k], ks);
        static const struct {
            double p, z;
        } q[] = {
            {0.001, -3.090232306167814}, {0.1, -1.2815515655446004}, {0.5, 0.0},
            {0.9, 1.2815515655446004},   {0.99, 2.3263478740408408}, {0.999, 3.090232306167814}};
        for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
            double pdf = exp(-0.5 * q[i].z * q[i].z) / sqrt(2 * M_PI);
            double se = sqrt(q[i].p * (1 - q[i].p) / (double)n) / pdf; /* of z */
            double got = (log(big[(size_t)(q[i].p * (double)n)]) - mu) / sigma;
            assert_true(fabs(got - q[i].z) < 4 * se);
        }
    }
}

/*
 * Beyond the last octave (t < 2^-25 on either side: 2^-24 of the draws) the table draws the
 * normal's tail beyond LNTAB_ZMAX exactly. Of 2^27 draws, about 8 (Poisson) land there: at
 * least 1 and at most 24 (each bound fails with probability under 4e-4): a tail that never
 * leaves the table's range, or leaves it too often, fails.
 */
static void rng_lognormal_table_draws_its_tails(void **state) {
    (void)state;
    fb_lntab_init(&lntab, log(600.0), log(5.0) / 2.3263478740408408);
    const double top = lntab.hi[(LNTAB_OCTAVES - 1) * (LNTAB_CELLS + 1)];
    const double bottom = lntab.lo[(LNTAB_OCTAVES - 1) * (LNTAB_CELLS + 1)];
    fb_rng r;
    fb_rng_derive(&r, 31, 0, 0);
    uint32_t above = 0, below = 0;
    for (uint32_t i = 0; i < (UINT32_C(1) << 27); i++) {
        double x = fb_rng_lognormal_tab(&r, &lntab);
        if (x > top) above++;
        if (x < bottom) below++;
    }
    assert_true(above + below >= 1 && above + below <= 24);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rng_u32_matches_pcg32_reference_seed_42_stream_54),
        cmocka_unit_test(rng_derive_golden_u32_and_u64),
        cmocka_unit_test(rng_golden_doubles_catch_any_algorithm_change),
        cmocka_unit_test(rng_derive_is_the_documented_hash_and_the_family_agrees),
        cmocka_unit_test(rng_derive_is_a_pure_function_of_its_inputs),
        cmocka_unit_test(rng_derive_nearby_ids_give_unrelated_streams),
        cmocka_unit_test(rng_derived_streams_are_uncorrelated),
        cmocka_unit_test(rng_seed_streams_differ_for_the_same_seed),
        cmocka_unit_test(rng_below_zero_and_one_return_zero),
        cmocka_unit_test(rng_below_stays_in_bounds),
        cmocka_unit_test(rng_below_every_value_is_equally_likely),
        cmocka_unit_test(rng_below_is_unbiased_where_naive_reduction_is_not),
        cmocka_unit_test(rng_uniform_is_in_unit_interval_with_mean_one_half),
        cmocka_unit_test(rng_exponential_has_the_requested_mean),
        cmocka_unit_test(rng_normal_has_mean_zero_and_variance_one),
        cmocka_unit_test(rng_zig_layers_have_equal_areas),
        cmocka_unit_test(rng_normal_matches_the_exact_distribution),
        cmocka_unit_test(rng_exponential_matches_the_exact_distribution),
        cmocka_unit_test(rng_lognormal_exp_agrees_with_libm),
        cmocka_unit_test(rng_lognormal_matches_the_exact_distribution),
        cmocka_unit_test(rng_lognormal_hits_median_and_p99),
        cmocka_unit_test(rng_lognormal_with_p99_equal_to_median_returns_the_median),
        cmocka_unit_test(rng_lognormal_consumes_the_same_draws_whatever_its_parameters),
        cmocka_unit_test(rng_lognormal_table_nodes_are_exact_and_cells_fine_enough),
        cmocka_unit_test(rng_lognormal_table_matches_the_exact_distribution),
        cmocka_unit_test(rng_lognormal_table_draws_its_tails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
