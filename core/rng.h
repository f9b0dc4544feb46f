/*
 * rng.h - seeded pseudo-random numbers (PCG32, XSH-RR variant).
 *
 * Every entity that needs randomness owns an fb_rng derived from
 * (scenario seed, entity id, purpose), so adding an entity or a policy does
 * not shift anybody else's draws (common random numbers across variants).
 *
 * Sequences are identical on every compiler and optimisation level: the
 * integer generator is exact, and the real-valued draws use only IEEE-754
 * double arithmetic with libm's log/exp/sqrt (the build disables FP
 * contraction). See docs/rng.md.
 */
#ifndef FB_RNG_H
#define FB_RNG_H

#include <stdint.h>

#include "fb.h"

typedef struct fb_rng {
    /* private */
    uint64_t state;
    uint64_t inc;
} fb_rng;

/* The random streams' version: outputs name it (report.json's "rng"); docs/rng.md. */
#define FB_RNG_VERSION "fusebox-5"

/* (seed, purpose) mixed once, for the streams of many entities of one purpose. */
typedef struct fb_rng_family {
    /* private */
    uint64_t h;
} fb_rng_family;

/* Seed a generator on one of 2^63 independent streams. */
void fb_rng_seed(fb_rng *r, uint64_t seed, uint64_t stream);
/* Seed from (seed, entity, purpose): stable, well-mixed, independent streams. */
void fb_rng_derive(fb_rng *r, uint64_t seed, uint64_t entity, uint64_t purpose);
/* fb_rng_derive in two halves: the same stream as fb_rng_derive(r, seed, entity, purpose),
 * with the (seed, purpose) half done once and two mixes per entity. */
void fb_rng_family_init(fb_rng_family *f, uint64_t seed, uint64_t purpose);

/* splitmix64's output function, a bijection with full avalanche (private: rng.c, the derive). */
static inline uint64_t fb_rng__mix64(uint64_t x) {
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}
/*
 * Inline: the simulator derives a stream per request (the call and its
 * spills cost about as much as the two mixes).
 *
 * A one-bit change of seed, purpose or entity flips about half the bits of both state and
 * increment. The increment gets its own mix: PCG streams whose increments differ by a few
 * bits are correlated, hashed increments are not. The hash is the state itself (PCG's
 * seeding steps would only mix it again): two mixes per stream.
 */
static inline void fb_rng_family_derive(const fb_rng_family *f, fb_rng *r, uint64_t entity) {
    uint64_t h = fb_rng__mix64(f->h ^ entity);
    r->state = h;
    r->inc = (fb_rng__mix64(h ^ UINT64_C(0x5851f42d4c957f2d)) << 1) | 1u;
}

/* What names r's stream for as long as it is drawn from (its increment, fixed at its seeding):
 * a value to derive another stream from (a re-submitted request's, docs/rng.md). */
static inline uint64_t fb_rng_stream_id(const fb_rng *r) {
    return r->inc;
}

uint32_t fb_rng_u32(fb_rng *r);
uint64_t fb_rng_u64(fb_rng *r);
/* Uniform integer in [0, n), unbiased; n == 0 returns 0. */
uint64_t fb_rng_below(fb_rng *r, uint64_t n);
/* Uniform double in [0, 1) with 53 random bits. */
double fb_rng_uniform(fb_rng *r);
/* Exponential with the given mean (> 0). */
double fb_rng_exponential(fb_rng *r, double mean);
/* Standard normal N(0, 1). */
double fb_rng_normal(fb_rng *r);
/*
 * Lognormal given its median and 99th percentile (p99 >= median > 0):
 * mu = ln(median), sigma = ln(p99 / median) / 2.3263478740408408.
 */
double fb_rng_lognormal(fb_rng *r, double median, double p99);
/* exp(ln_median + sigma * z) for one normal z: fb_rng_lognormal with its logarithms taken once
 * by the caller (ln(median), and sigma as above), for p99 > median > 0. */
double fb_rng_lognormal_ln(fb_rng *r, double ln_median, double sigma);

/*
 * A lognormal's quantile function as a table, for a distribution drawn often with fixed
 * parameters (random streams fusebox-3; docs/rng.md): exp(ln_median + sigma * z) at 24
 * octaves x 32 cells of each half of [0, 1), filled by fb_lntab_init (no allocation: the
 * caller owns the 12.7 KB). A draw takes one u64 and interpolates between two nodes; beyond
 * the last octave (2^-24 of the draws) it draws the normal's tail exactly.
 */
#define FB_LNTAB_NODES (24 * 33)
typedef struct fb_lntab {
    /* private */
    double ln_median, sigma;
    double hi[FB_LNTAB_NODES]; /* exp(ln_median + sigma * z) at the upper nodes */
    double lo[FB_LNTAB_NODES]; /* exp(ln_median - sigma * z) at the lower ones */
} fb_lntab;
/* Fill t for exp(ln_median + sigma * N(0, 1)), sigma > 0. */
void fb_lntab_init(fb_lntab *t, double ln_median, double sigma);
/* One draw from t's lognormal. */
double fb_rng_lognormal_tab(fb_rng *r, const fb_lntab *t);

#endif /* FB_RNG_H */
