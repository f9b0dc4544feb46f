/*
 * rng.c - PCG32 (XSH-RR) and the real-valued draws built on it.
 *
 * The generator is O'Neill's reference pcg32: a 64-bit LCG whose output is
 * the top bits xorshifted and rotated. Everything above it uses only IEEE-754
 * double operations (+ - * / sqrt, correctly rounded everywhere) and libm's
 * log and exp, so a seed reproduces the same doubles on every compiler and -O
 * level of one platform. docs/rng.md gives the argument in full.
 */
#include "rng.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "rng_zig.h"

/* x87 extended precision would round differently from SSE2/AArch64 doubles. */
_Static_assert(FLT_EVAL_METHOD == 0, "fb_rng needs plain double evaluation (FLT_EVAL_METHOD 0)");

#define PCG_MULT UINT64_C(6364136223846793005)

/* z = 2.3263478740408408 is the standard normal quantile at 0.99. */
#define Z_P99 2.3263478740408408

void fb_rng_seed(fb_rng *r, uint64_t seed, uint64_t stream) {
    r->state = 0;
    r->inc = (stream << 1) | 1u;
    (void)fb_rng_u32(r);
    r->state += seed;
    (void)fb_rng_u32(r);
}

void fb_rng_family_init(fb_rng_family *f, uint64_t seed, uint64_t purpose) {
    f->h = fb_rng__mix64(fb_rng__mix64(seed) ^ purpose);
}

void fb_rng_derive(fb_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose) {
    fb_rng_family f;
    fb_rng_family_init(&f, seed, purpose);
    fb_rng_family_derive(&f, r, entity);
}

/* One PCG32 step; inline here, so that the draws below are leaves on their common path. */
static inline uint32_t pcg32(fb_rng *r) {
    uint64_t old = r->state;
    r->state = old * PCG_MULT + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

static inline uint64_t pcg64(fb_rng *r) {
    uint64_t hi = pcg32(r);
    return (hi << 32) | pcg32(r);
}

uint32_t fb_rng_u32(fb_rng *r) {
    return pcg32(r);
}

uint64_t fb_rng_u64(fb_rng *r) {
    return pcg64(r);
}

uint64_t fb_rng_below(fb_rng *r, uint64_t n) {
    if (n == 0) return 0;
    if (n <= UINT32_MAX) {
        /* Lemire's multiply-shift; reject the few low products that bias it. */
        uint32_t n32 = (uint32_t)n;
        uint64_t m = (uint64_t)fb_rng_u32(r) * n32;
        if ((uint32_t)m < n32) {
            uint32_t threshold = (uint32_t)(0u - n32) % n32;
            while ((uint32_t)m < threshold) m = (uint64_t)fb_rng_u32(r) * n32;
        }
        return m >> 32;
    }
    /* Wide range: reject the 2^64 mod n lowest draws, then reduce. */
    uint64_t threshold = (0u - n) % n;
    uint64_t x;
    do {
        x = fb_rng_u64(r);
    } while (x < threshold);
    return x % n;
}

double fb_rng_uniform(fb_rng *r) {
    return (double)(pcg64(r) >> 11) * 0x1.0p-53;
}

/*
 * The ziggurat (Marsaglia & Tsang 2000; tables in rng_zig.h, docs/rng.md): one u64 per try,
 * its low 8 bits the layer, its top 53 the position in it, so the two never share a bit. A
 * try lands inside the layer's rectangle under the curve 98.5% (normal) or 97.8%
 * (exponential) of the time: a multiply and a compare, inline. Otherwise (out of line) the
 * wedge is tested with one more uniform and libm's exp, or the base layer's tail is drawn,
 * and a rejected try starts again.
 */
static double zig_exponential(fb_rng *r);

/* A try of layer i that fell outside its rectangle at x, and what follows. */
static __attribute__((noinline)) double zig_exponential_slow(fb_rng *r, unsigned i, double x) {
    double base = 0.0; /* the tail beyond R is R plus a fresh draw (no memory) */
    for (;;) {
        if (i == 0) {
            base += ZIG_EXP_R;
        } else if (ZIG_EXP_F[i + 1] + (ZIG_EXP_F[i] - ZIG_EXP_F[i + 1]) * fb_rng_uniform(r) <
                   exp(-x)) {
            return base + x;
        }
        uint64_t b = pcg64(r);
        i = (unsigned)(b & 0xffu);
        x = (double)(b >> 11) * 0x1.0p-53 * ZIG_EXP_X[i];
        if (x < ZIG_EXP_X[i + 1]) return base + x;
    }
}

static inline double zig_exponential(fb_rng *r) {
    uint64_t b = pcg64(r);
    unsigned i = (unsigned)(b & 0xffu);
    double x = (double)(b >> 11) * 0x1.0p-53 * ZIG_EXP_X[i];
    if (x < ZIG_EXP_X[i + 1]) return x;
    return zig_exponential_slow(r, i, x);
}

/* No -0.0 (docs/rng.md): the ziggurat's draw is +0.0 or more, and so its product with a mean
   above 0 (the inversion of version 1 needed a test). */
double fb_rng_exponential(fb_rng *r, double mean) {
    return mean * zig_exponential(r);
}

/* A try of layer i at position u (x = u * X[i]) that fell outside its rectangle. */
static __attribute__((noinline)) double zig_normal_slow(fb_rng *r, unsigned i, double u, double x) {
    for (;;) {
        if (i == 0) {
            /* Beyond R (Marsaglia 1964): R + e1 / R, kept with probability exp(-e1^2 / 2R^2),
             * drawn as e2 > e1^2 / 2R^2 with e2 exponential; e1, e2 from the ziggurat. */
            double e1, e2;
            do {
                e1 = zig_exponential(r) / ZIG_NORM_R;
                e2 = zig_exponential(r);
            } while (e2 + e2 < e1 * e1);
            return u < 0.0 ? -(ZIG_NORM_R + e1) : ZIG_NORM_R + e1;
        }
        if (ZIG_NORM_F[i + 1] + (ZIG_NORM_F[i] - ZIG_NORM_F[i + 1]) * fb_rng_uniform(r) <
            exp(-0.5 * x * x))
            return x;
        uint64_t b = pcg64(r);
        i = (unsigned)(b & 0xffu);
        /* the top 53 bits as a signed position in [-1, 1), a multiple of 2^-52 */
        u = (double)((int64_t)(b >> 11) - INT64_C(0x10000000000000)) * 0x1.0p-52;
        x = u * ZIG_NORM_X[i];
        if (fabs(x) < ZIG_NORM_X[i + 1]) return x;
    }
}

static inline double zig_normal(fb_rng *r) {
    uint64_t b = pcg64(r);
    unsigned i = (unsigned)(b & 0xffu);
    double u = (double)((int64_t)(b >> 11) - INT64_C(0x10000000000000)) * 0x1.0p-52;
    double x = u * ZIG_NORM_X[i];
    if (fabs(x) < ZIG_NORM_X[i + 1]) return x;
    return zig_normal_slow(r, i, u, x);
}

double fb_rng_normal(fb_rng *r) {
    return zig_normal(r);
}

/*
 * exp(y) without libm, for the lognormal: y = n ln(2)/64 + r with |r| <= ln(2)/128, exp(y) =
 * 2^(n div 64) * 2^((n mod 64)/64) * exp(r), exp(r) by its Taylor polynomial to r^5 (the
 * next term is below 4e-17). Table, constants and polynomial give 2 ulp at worst, the same
 * bits on every platform (only + - * and exact conversions; docs/rng.md). Outside
 * (-708, 708), where the result nears the ends of the doubles, libm's exp takes over.
 */
static inline double lognormal_exp(double y) {
    if (!(fabs(y) < 708.0)) return exp(y); /* NaN too */
    /* y * 64/ln(2) rounded to the nearest integer (ties to even) by adding and taking away
     * 1.5 * 2^52, exact for |y * 64/ln(2)| < 2^51: |r| <= ln(2)/128 */
    double k = y * INV_LN2_64 + 0x1.8p52 - 0x1.8p52;
    int64_t n = (int64_t)k;
    double r = (y - k * LN2_64_HI) - k * LN2_64_LO;
    double p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120)))));
    uint64_t m = (uint64_t)(n + 64 * 1100); /* positive: n div 64 and n mod 64 without signs */
    uint64_t sb = ((m >> 6) - 1100 + 1023) << 52; /* 2^(n div 64), |n div 64| < 1022 */
    double scale;
    memcpy(&scale, &sb, sizeof scale);
    return EXP2_64[m & 63u] * p * scale;
}

double fb_rng_lognormal_ln(fb_rng *r, double ln_median, double sigma) {
    return lognormal_exp(ln_median + sigma * zig_normal(r));
}

/*
 * The inverse-CDF table. One u64 b: its top bit picks the half (upper or lower), its other 63
 * bits m the distance t = m / 2^64 of u from that half's end, t in [0, 1/2). The octave of t
 * (2^-(k+2) <= t < 2^-(k+1)) is the position of m's leading one, the next 5 bits the cell, the
 * bits below them the position f in the cell: the quantile, linear between the cell's two
 * nodes (the exact quantiles there). Beyond the last octave (m < 2^39, t < 2^-25) the normal's
 * tail beyond LNTAB_ZMAX is drawn exactly, Marsaglia's way (as zig_normal_slow's base layer).
 */
_Static_assert((LNTAB_CELLS + 1) * LNTAB_OCTAVES == FB_LNTAB_NODES, "fb_lntab's size");
_Static_assert(LNTAB_CELLS == 32 && LNTAB_OCTAVES == 24, "fb_rng_lognormal_tab's bit layout");

void fb_lntab_init(fb_lntab *t, double ln_median, double sigma) {
    t->ln_median = ln_median;
    t->sigma = sigma;
    for (int j = 0; j < FB_LNTAB_NODES; j++) {
        t->hi[j] = lognormal_exp(ln_median + sigma * LNTAB_Z[j]);
        t->lo[j] = lognormal_exp(ln_median - sigma * LNTAB_Z[j]);
    }
}

static __attribute__((noinline)) double lntab_tail(fb_rng *r, const fb_lntab *t, bool upper) {
    double e1, e2;
    do {
        e1 = zig_exponential(r) / LNTAB_ZMAX;
        e2 = zig_exponential(r);
    } while (e2 + e2 < e1 * e1);
    double z = LNTAB_ZMAX + e1;
    return lognormal_exp(t->ln_median + t->sigma * (upper ? z : -z));
}

double fb_rng_lognormal_tab(fb_rng *r, const fb_lntab *t) {
    uint64_t b = pcg64(r);
    uint64_t m = b & (UINT64_MAX >> 1);
    if (m < (UINT64_C(1) << 39)) return lntab_tail(r, t, b >> 63);
    unsigned lz = (unsigned)__builtin_clzll(m); /* 1..24: the octave is lz - 1 */
    uint64_t rest = m << (lz + 1);              /* the leading one gone: 5 bits of cell, then f */
    unsigned c = (unsigned)(rest >> 59);
    double f = (double)((rest << 5) >> 11) * 0x1.0p-53;
    /* an octave's row runs from t = 2^-(k+2) (c = 0) up to twice that (c = 32) */
    const double *n = (b >> 63 ? t->hi : t->lo) + (lz - 1) * (LNTAB_CELLS + 1) + c;
    return n[0] + (n[1] - n[0]) * f;
}

double fb_rng_lognormal(fb_rng *r, double median, double p99) {
    /*
     * Draw z first, whatever the parameters, so that changing a distribution
     * never changes how many numbers a stream consumes.
     */
    double z = fb_rng_normal(r);
    if (!(median > 0.0)) return 0.0;
    if (!(p99 > median)) return median;
    double sigma = log(p99 / median) / Z_P99;
    return lognormal_exp(log(median) + sigma * z);
}
