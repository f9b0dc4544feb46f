/*
 * hist.c - log-linear histogram: exact below FB_HIST_SUB_BUCKETS, then
 * FB_HIST_SUB_BUCKETS / 2 linear sub-buckets per power of two.
 *
 * With B = FB_HIST_SUB_BITS and H = 2^(B-1), a value v has
 * shift = max(0, msb(v) - (B-1)) and lives in bucket (shift << (B-1)) + (v >> shift):
 * v >> shift keeps the top B significant bits, and shift says which octave
 * they came from. For v < 2^B the shift is 0 and the bucket is v itself.
 * Buckets [shift*H + H, shift*H + 2H) then cover octave [2^(B-1+shift), 2^(B+shift))
 * in steps of 2^shift, so the relative width of every bucket is below 1/H.
 */
#include "hist.h"

#include <math.h>
#include <string.h>

#define HALF (FB_HIST_SUB_BUCKETS / 2)

_Static_assert(FB_HIST_BUCKETS == FB_HIST_SUB_BUCKETS + (42 - FB_HIST_SUB_BITS) * HALF,
               "FB_HIST_BUCKETS must cover every value up to FB_HIST_VALUE_MAX");

/* One clz, one shift, no branch: values below 2^B take shift 0 via the OR. */
static size_t bucket_of(uint64_t v) {
    unsigned msb = 63u - (unsigned)__builtin_clzll(v | (FB_HIST_SUB_BUCKETS - 1));
    unsigned shift = msb - (FB_HIST_SUB_BITS - 1);
    return ((size_t)shift << (FB_HIST_SUB_BITS - 1)) + (size_t)(v >> shift);
}

/* The largest value that falls in bucket i ("highest equivalent value"). */
static int64_t bucket_high(size_t i) {
    if (i < FB_HIST_SUB_BUCKETS) return (int64_t)i;
    unsigned shift = (unsigned)(i >> (FB_HIST_SUB_BITS - 1)) - 1u;
    uint64_t sub = i - ((size_t)shift << (FB_HIST_SUB_BITS - 1));
    return (int64_t)(((sub + 1) << shift) - 1);
}

void fb_hist_init(fb_hist *h) {
    memset(h, 0, sizeof *h);
    h->min = INT64_MAX; /* empty: any first value is smaller */
}

/* Add the 128-bit number lo + 2^64 * hi to h's sum. */
static inline void sum_add(fb_hist *h, uint64_t lo, uint64_t hi) {
    h->sum += lo;
    h->sum_high += hi + (h->sum < lo); /* the carry */
}

/* v * n, both below 2^64, into h's sum: the schoolbook product of 32-bit halves. */
static void sum_add_product(fb_hist *h, uint64_t v, uint64_t n) {
    const uint64_t m = UINT64_C(0xffffffff);
    uint64_t v0 = v & m, v1 = v >> 32, n0 = n & m, n1 = n >> 32;
    uint64_t p00 = v0 * n0, p01 = v0 * n1, p10 = v1 * n0;
    uint64_t mid = (p00 >> 32) + (p01 & m) + (p10 & m);
    sum_add(h, (p00 & m) | (mid << 32), v1 * n1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32));
}

/* Record n copies of a value; inlined with n = 1 into the hot fb_hist_record. */
static inline void record(fb_hist *h, int64_t value, uint64_t n) {
    uint64_t v = (uint64_t)value;
    if (value < 0) v = 0;
    if (value > FB_HIST_VALUE_MAX) {
        v = (uint64_t)FB_HIST_VALUE_MAX;
        h->clamped += n;
    }
    h->counts[bucket_of(v)] += n;
    h->total += n;
    if ((int64_t)v < h->min) h->min = (int64_t)v;
    if ((int64_t)v > h->max) h->max = (int64_t)v;
    if (n == 1)
        sum_add(h, v, 0);
    else
        sum_add_product(h, v, n);
}

void fb_hist_record(fb_hist *h, int64_t value) {
    record(h, value, 1);
}

/* The value as recorded (clamped to [0, FB_HIST_VALUE_MAX]); *clamped: 1 if it was above. */
static inline uint64_t recorded(int64_t value, uint64_t *clamped) {
    *clamped = value > FB_HIST_VALUE_MAX;
    if (*clamped) return (uint64_t)FB_HIST_VALUE_MAX;
    return value < 0 ? 0 : (uint64_t)value;
}

/* One recorded value v, in bucket b, into h. */
static inline void add_one(fb_hist *h, size_t b, uint64_t v, uint64_t clamped) {
    h->clamped += clamped;
    h->counts[b]++;
    h->total++;
    if ((int64_t)v < h->min) h->min = (int64_t)v;
    if ((int64_t)v > h->max) h->max = (int64_t)v;
    sum_add(h, v, 0);
}

void fb_hist_record_two(fb_hist *a, fb_hist *b, int64_t value) {
    uint64_t clamped, v = recorded(value, &clamped);
    size_t k = bucket_of(v);
    add_one(a, k, v, clamped);
    add_one(b, k, v, clamped);
}

void fb_hist_record_three(fb_hist *a, fb_hist *b, fb_hist *c, int64_t value) {
    uint64_t clamped, v = recorded(value, &clamped);
    size_t k = bucket_of(v);
    add_one(a, k, v, clamped);
    add_one(b, k, v, clamped);
    add_one(c, k, v, clamped);
}

void fb_hist_record_n(fb_hist *h, int64_t value, uint64_t n) {
    if (n > 0) record(h, value, n);
}

/*
 * Every nonzero count of a histogram lies between the buckets of its min and
 * max (record keeps them exact, merge widens them, subtract narrows them to the
 * buckets left): the loops below visit that range only. Empty: none.
 */
static size_t range_first(const fb_hist *h) {
    return h->total ? bucket_of((uint64_t)h->min) : 1;
}

static size_t range_end(const fb_hist *h) {
    return h->total ? bucket_of((uint64_t)h->max) + 1 : 0;
}

/* What is left for fb_hist_clear once h's counts are zero. */
static void empty_header(fb_hist *h) {
    h->total = 0;
    h->clamped = 0;
    h->min = INT64_MAX;
    h->max = 0;
    h->sum = 0;
    h->sum_high = 0;
}

/* Zero counts [first, end). One memset: glibc makes one of more than 2 KiB a `rep stosb`, which
 * callgrind counts byte by byte, but cutting it into pieces would only move that count, not the
 * machine's work (tried: V6's count fell 9 M, its CPU time did not). */
static void zero_counts(fb_hist *h, size_t first, size_t end) {
    if (first < end) memset(&h->counts[first], 0, (end - first) * sizeof h->counts[0]);
}

void fb_hist_clear(fb_hist *h) {
    zero_counts(h, range_first(h), range_end(h));
    empty_header(h);
}

void fb_hist_copy(fb_hist *dst, const fb_hist *src) {
    fb_hist_clear(dst);
    size_t first = range_first(src), end = range_end(src);
    if (first < end)
        memcpy(&dst->counts[first], &src->counts[first], (end - first) * sizeof src->counts[0]);
    dst->total = src->total;
    dst->clamped = src->clamped;
    dst->min = src->min;
    dst->max = src->max;
    dst->sum = src->sum;
    dst->sum_high = src->sum_high;
}

void fb_hist_merge(fb_hist *dst, const fb_hist *src) {
    for (size_t i = range_first(src), end = range_end(src); i < end; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->clamped += src->clamped;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
    sum_add(dst, src->sum, src->sum_high);
}

/* The first nonzero bucket in [from, end) going up (up) or down from end - 1; end if none. */
static size_t nonzero(const fb_hist *h, size_t from, size_t end, bool up) {
    for (size_t k = 0; k < end - from; k++) {
        size_t i = up ? from + k : end - 1 - k;
        if (h->counts[i] != 0) return i;
    }
    return end;
}

/*
 * dst -= src as fb_hist_subtract says, over src's buckets only: dst's
 * others keep their counts, and the buckets of dst's min and max hold
 * counts (record, merge and this keep them so), so its new extremes are
 * found from there. With `zero` (src's counts), src's are zeroed in the
 * same pass.
 */
static inline void subtract(fb_hist *dst, const fb_hist *src, uint64_t *zero) {
    size_t a = range_first(src), b = range_end(src);
    size_t lo = range_first(dst), hi = range_end(dst);
    for (size_t i = a; i < b; i++) {
        uint64_t x = src->counts[i];
        if (x == 0) continue; /* most of a tick's buckets: nothing to take, nothing to zero */
        dst->counts[i] -= x < dst->counts[i] ? x : dst->counts[i];
        if (zero) zero[i] = 0;
    }
    dst->total = src->total < dst->total ? dst->total - src->total : 0;
    dst->clamped = src->clamped < dst->clamped ? dst->clamped - src->clamped : 0;
    dst->sum_high -= src->sum_high + (dst->sum < src->sum); /* the borrow */
    dst->sum -= src->sum;
    if (dst->total == 0) { /* past here dst held counts before: lo < hi */
        fb_hist_init(dst);
        return;
    }
    /* dst's first and last nonzero buckets: unchanged where src did not reach them */
    size_t first = lo < a || lo >= b ? lo : nonzero(dst, lo, hi, true);
    size_t last = hi > b || hi <= a ? hi - 1 : nonzero(dst, lo, hi, false);
    if (first >= hi || last >= hi) { /* none left after all */
        fb_hist_init(dst);
        return;
    }
    /* the exact extremes may have been subtracted: narrow them to the buckets left */
    int64_t lo_v = first == 0 ? 0 : bucket_high(first - 1) + 1;
    int64_t hi_v = bucket_high(last);
    if (dst->min < lo_v) dst->min = lo_v;
    if (dst->max > hi_v) dst->max = hi_v;
}

void fb_hist_subtract(fb_hist *dst, const fb_hist *src) {
    subtract(dst, src, NULL);
}

void fb_hist_subtract_clear(fb_hist *dst, fb_hist *src) {
    subtract(dst, src, src->counts); /* every bucket src used */
    empty_header(src);
}

uint64_t fb_hist_count(const fb_hist *h) {
    return h->total;
}

int64_t fb_hist_min(const fb_hist *h) {
    return h->total ? h->min : 0;
}

int64_t fb_hist_max(const fb_hist *h) {
    return h->total ? h->max : 0;
}

double fb_hist_mean(const fb_hist *h) {
    /* below 2^53 the sum converts exactly: the same mean as any order of additions gives */
    double sum = (double)h->sum_high * 0x1p64 + (double)h->sum;
    return h->total ? sum / (double)h->total : 0.0;
}

/* The rank of percentile p in a non-empty h: ceil(p% of total), within [1, total]. */
static uint64_t rank_of(const fb_hist *h, double p) {
    /*
     * Multiplying before dividing keeps p = 99.9 of 100000 at exactly 99900,
     * where (p / 100) * total would round up to 99901.
     */
    double rank_d = ceil(p * (double)h->total / 100.0);
    uint64_t rank = rank_d < 1.0 ? 1 : (uint64_t)rank_d;
    return rank > h->total ? h->total : rank;
}

/*
 * The first bucket at or after *i, up to last, whose counts bring *seen (the
 * counts before *i) to rank or more; *seen then includes it. Eight buckets at
 * a time while their sum stays below rank (a tick's few values lie far apart
 * among a thousand buckets), then one by one.
 */
static size_t scan_to(const fb_hist *h, size_t *i, uint64_t *seen, uint64_t rank, size_t last) {
    size_t k = *i;
    uint64_t sum = *seen;
    while (k + 8 <= last) {
        const uint64_t *c = &h->counts[k];
        uint64_t block = c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7];
        if (sum + block >= rank) break;
        sum += block;
        k += 8;
    }
    for (; k <= last; k++) {
        sum += h->counts[k];
        if (sum >= rank) break;
    }
    *i = k;
    *seen = sum;
    return k;
}

/* The value reported for the bucket where a percentile's rank falls. */
static int64_t report(const fb_hist *h, size_t i, size_t last) {
    if (i > last) return h->max; /* not reached: the buckets add up to total */
    /* The scan starts at min's bucket, so only max can cut the report. */
    int64_t v = bucket_high(i);
    return v > h->max ? h->max : v;
}

int64_t fb_hist_percentile(const fb_hist *h, double p) {
    if (h->total == 0) return 0;
    if (!(p > 0.0)) return h->min; /* also NaN */
    if (p >= 100.0) return h->max;
    size_t i = bucket_of((uint64_t)h->min), last = bucket_of((uint64_t)h->max);
    uint64_t seen = 0;
    return report(h, scan_to(h, &i, &seen, rank_of(h, p), last), last);
}

void fb_hist_percentiles(const fb_hist *h, const double *ps, size_t n, int64_t *out) {
    size_t i = 0, last = 0;
    uint64_t seen = 0;
    double prev = 0; /* the last percentile scanned: i and seen hold its place */
    if (h->total) {
        i = bucket_of((uint64_t)h->min);
        last = bucket_of((uint64_t)h->max);
    }
    for (size_t k = 0; k < n; k++) {
        if (h->total == 0 || !(ps[k] > 0.0) || ps[k] >= 100.0 || ps[k] < prev) {
            out[k] = fb_hist_percentile(h, ps[k]);
            continue;
        }
        uint64_t rank = rank_of(h, ps[k]);
        bool scanned = prev > 0.0;
        prev = ps[k];
        /* the bucket the last scan stopped at holds every rank up to seen */
        if (scanned && seen >= rank && i <= last) {
            out[k] = report(h, i, last);
            continue;
        }
        if (scanned && i <= last) i++; /* seen already counts bucket i */
        out[k] = report(h, scan_to(h, &i, &seen, rank, last), last);
    }
}
