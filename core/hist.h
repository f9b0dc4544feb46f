/*
 * hist.h - log-linear latency histogram (HDR-style).
 *
 * Values are non-negative integers (microseconds in practice). Values below
 * FB_HIST_SUB_BUCKETS are counted exactly; above, each power of two is split
 * into FB_HIST_SUB_BUCKETS / 2 linear sub-buckets, so a percentile is
 * reported with a relative error below 2 / FB_HIST_SUB_BUCKETS (< 0.8%).
 * Values above FB_HIST_VALUE_MAX are clamped to it (and counted in
 * `clamped`). Memory is fixed; no allocation; histograms merge by addition.
 * See docs/hist.md.
 */
#ifndef FB_HIST_H
#define FB_HIST_H

#include <stdint.h>

#include "fb.h"

#define FB_HIST_SUB_BITS 8 /* 256 exact values, then 128 sub-buckets per octave */
#define FB_HIST_SUB_BUCKETS (1 << FB_HIST_SUB_BITS)
#define FB_HIST_OCTAVES 35 /* 42 - FB_HIST_SUB_BITS + 1: values up to 2^42 - 1 us (50 days) */
#define FB_HIST_VALUE_MAX ((int64_t)((UINT64_C(1) << 42) - 1))
#define FB_HIST_BUCKETS ((FB_HIST_OCTAVES + 1) * (FB_HIST_SUB_BUCKETS / 2))

typedef struct fb_hist {
    /* private */
    uint64_t counts[FB_HIST_BUCKETS];
    uint64_t total;
    uint64_t clamped;
    int64_t min;
    int64_t max;
    /* the sum of the values, exact at any count and in any order: sum + 2^64 * sum_high */
    uint64_t sum, sum_high;
} fb_hist;

void fb_hist_init(fb_hist *h);
/* Record one value; negative values are recorded as 0. */
void fb_hist_record(fb_hist *h, int64_t value);
void fb_hist_record_n(fb_hist *h, int64_t value, uint64_t n);
/* Record one value in two histograms, its bucket found once: as two fb_hist_record calls (a
   request's end). */
void fb_hist_record_two(fb_hist *a, fb_hist *b, int64_t value);
/* The same in three (a request's end before the first disturbance: its baseline's too). */
void fb_hist_record_three(fb_hist *a, fb_hist *b, fb_hist *c, int64_t value);
/*
 * Empty h as fb_hist_init does, touching only the buckets it used: h must
 * have been initialized (by fb_hist_init or a copy), or be all zero bytes
 * (calloc): that one it initializes without writing its buckets.
 */
void fb_hist_clear(fb_hist *h);
/* dst becomes a copy of src; dst must have been initialized. */
void fb_hist_copy(fb_hist *dst, const fb_hist *src);
/* Add every count of src into dst. */
void fb_hist_merge(fb_hist *dst, const fb_hist *src);

/*
 * Remove src's counts from dst, where src was merged into dst earlier (a
 * sliding window of histograms). min and max stay exact while their values
 * remain; otherwise they narrow to the edges of the remaining buckets.
 */
void fb_hist_subtract(fb_hist *dst, const fb_hist *src);
/* fb_hist_subtract, then fb_hist_clear(src), in one pass over the buckets (the window's oldest). */
void fb_hist_subtract_clear(fb_hist *dst, fb_hist *src);

uint64_t fb_hist_count(const fb_hist *h);
/* Exact minimum and maximum recorded (0 when empty). */
int64_t fb_hist_min(const fb_hist *h);
int64_t fb_hist_max(const fb_hist *h);
double fb_hist_mean(const fb_hist *h);
/*
 * Value at percentile p in [0, 100]: the smallest recorded-bucket value v such
 * that at least p% of the values are <= v, reported as the bucket's highest
 * equivalent value clamped to [min, max]. 0 when empty.
 */
int64_t fb_hist_percentile(const fb_hist *h, double p);
/*
 * out[k] = fb_hist_percentile(h, ps[k]) for k < n, the buckets scanned once
 * for percentiles given in ascending order (any order gives the same answers,
 * a percentile below the one before it at the cost of its own scan).
 */
void fb_hist_percentiles(const fb_hist *h, const double *ps, size_t n, int64_t *out);

#endif /* FB_HIST_H */
