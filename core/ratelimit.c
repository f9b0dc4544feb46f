/*
 * ratelimit.c - exact-integer token buckets and the requests/tokens limiter.
 *
 * A bucket's level is counted in units of 1/period_us of a token: one token
 * is period_us units, a full bucket is capacity * period_us units, and every
 * microsecond adds exactly `capacity` units. No division happens on refill,
 * so a bucket refilled in many small steps holds exactly what one big step
 * would give. docs/ratelimit.md explains the choices.
 */
#include "ratelimit.h"

#define WAIT_US_MAX_DEFAULT (60 * FB_US_PER_S)

static int64_t full_units(const fb_bucket *b) {
    return b->capacity * b->period_us;
}

/* n tokens in units; every caller has checked 0 <= n <= capacity, so it fits. */
static int64_t units(const fb_bucket *b, int64_t n) {
    return n * b->period_us;
}

/*
 * Add k * n units, up to a full bucket. Every step is overflow-checked: a
 * product or sum past int64 is more than a bucketful, so the bucket is full.
 */
static void credit(fb_bucket *b, int64_t k, int64_t n) {
    int64_t full = full_units(b), add, level;
    if (__builtin_mul_overflow(k, n, &add) || __builtin_add_overflow(b->level, add, &level) ||
        level > full) {
        level = full;
    }
    b->level = level;
}

/*
 * Add the units earned since last_us: `capacity` per microsecond. Time that
 * goes backwards counts as no time, and last_us keeps the latest time seen,
 * so no interval is ever earned twice. A huge gap cannot overflow (see
 * credit); clamping the gap to period_us instead would under-fill a bucket
 * that reservations have put in debt by more than one bucketful.
 */
static void refill(fb_bucket *b, fb_time_us now_us) {
    if (now_us <= b->last_us) return;
    int64_t elapsed;
    if (__builtin_sub_overflow(now_us, b->last_us, &elapsed)) elapsed = INT64_MAX;
    credit(b, elapsed, b->capacity);
    b->last_us = now_us;
}

int fb_bucket_init(fb_bucket *b, int64_t capacity, fb_time_us period_us, fb_time_us now_us) {
    if (capacity <= 0 || period_us <= 0) return FB_EINVAL;
    if (capacity > INT64_MAX / period_us) return FB_ERANGE;
    b->capacity = capacity;
    b->period_us = period_us;
    b->level = capacity * period_us;
    b->last_us = now_us;
    return FB_OK;
}

int64_t fb_bucket_available(fb_bucket *b, fb_time_us now_us) {
    refill(b, now_us);
    /* Floor division: -0.5 tokens is -1 whole token, not 0. */
    int64_t q = b->level / b->period_us;
    if (b->level % b->period_us < 0) q--;
    return q;
}

fb_time_us fb_bucket_wait(fb_bucket *b, int64_t n, fb_time_us now_us) {
    if (n > b->capacity) return FB_TIME_MAX;
    refill(b, now_us);
    if (n <= 0) return 0;
    int64_t need = units(b, n);
    if (b->level >= need) return 0;
    /* Units still missing, earned at `capacity` per microsecond, rounded up. */
    uint64_t missing = (uint64_t)need - (uint64_t)b->level;
    uint64_t cap = (uint64_t)b->capacity;
    uint64_t wait = missing / cap + (missing % cap != 0);
    return wait > (uint64_t)FB_TIME_MAX ? FB_TIME_MAX : (fb_time_us)wait;
}

bool fb_bucket_take(fb_bucket *b, int64_t n, fb_time_us now_us) {
    if (n < 0 || n > b->capacity) return false;
    refill(b, now_us);
    int64_t need = units(b, n);
    if (b->level < need) return false;
    b->level -= need;
    return true;
}

void fb_bucket_reserve(fb_bucket *b, int64_t n, fb_time_us now_us) {
    refill(b, now_us);
    if (n <= 0) return;
    /* A debt deeper than int64 can count saturates; it is repaid by refills like any other. */
    int64_t need;
    if (__builtin_mul_overflow(n, b->period_us, &need) ||
        __builtin_sub_overflow(b->level, need, &b->level)) {
        b->level = INT64_MIN;
    }
}

void fb_bucket_refund(fb_bucket *b, int64_t n, fb_time_us now_us) {
    refill(b, now_us);
    if (n > 0) credit(b, n, b->period_us);
}

int64_t fb_bucket_capacity(const fb_bucket *b) {
    return b->capacity;
}

int fb_ratelimit_init(fb_ratelimit *rl, const fb_ratelimit_config *cfg, fb_time_us now_us) {
    fb_ratelimit_config c = {0};
    if (cfg) c = *cfg;
    if (c.requests_per_min < 0 || c.tokens_per_min < 0 || c.wait_us_max < 0) return FB_EINVAL;
    if (c.mode != FB_RATELIMIT_WAIT && c.mode != FB_RATELIMIT_REJECT) return FB_EINVAL;
    if (c.wait_us_max == 0) c.wait_us_max = WAIT_US_MAX_DEFAULT;

    *rl = (fb_ratelimit){.cfg = c};
    int rc;
    if (c.requests_per_min > 0) {
        rc = fb_bucket_init(&rl->requests, c.requests_per_min, FB_US_PER_MIN, now_us);
        if (rc < 0) return rc;
    }
    if (c.tokens_per_min > 0) {
        rc = fb_bucket_init(&rl->tokens, c.tokens_per_min, FB_US_PER_MIN, now_us);
        if (rc < 0) return rc;
    }
    return FB_OK;
}

/* A bucket left zeroed by init is off: it never limits. */
static bool bucket_on(const fb_bucket *b) {
    return b->capacity > 0;
}

static fb_time_us wait_for(fb_bucket *b, int64_t n, fb_time_us now_us) {
    return bucket_on(b) ? fb_bucket_wait(b, n, now_us) : 0;
}

static void reserve_on(fb_bucket *b, int64_t n, fb_time_us now_us) {
    if (bucket_on(b)) fb_bucket_reserve(b, n, now_us);
}

fb_ratelimit_decision fb_ratelimit_acquire(fb_ratelimit *rl, int64_t tokens, fb_time_us now_us) {
    fb_ratelimit_decision d = {.admitted = false, .wait_us = 0};
    if (tokens < 0) tokens = 0;

    /* Both waits are computed before anything is taken: reject means untouched. */
    fb_time_us w_req = wait_for(&rl->requests, 1, now_us);
    fb_time_us w_tok = wait_for(&rl->tokens, tokens, now_us);
    fb_time_us wait = w_req > w_tok ? w_req : w_tok;

    /* wait is FB_TIME_MAX when tokens exceed the per-minute capacity: never admissible. */
    bool ok = rl->cfg.mode == FB_RATELIMIT_REJECT ? wait == 0 : wait <= rl->cfg.wait_us_max;
    if (!ok) {
        rl->stats.rejected++;
        return d;
    }
    reserve_on(&rl->requests, 1, now_us);
    reserve_on(&rl->tokens, tokens, now_us);
    rl->stats.admitted++;
    if (wait > 0) rl->stats.delayed++;
    d.admitted = true;
    d.wait_us = wait;
    return d;
}

void fb_ratelimit_release(fb_ratelimit *rl, int64_t tokens, fb_time_us now_us) {
    if (tokens < 0) tokens = 0;
    if (bucket_on(&rl->requests)) fb_bucket_refund(&rl->requests, 1, now_us);
    if (bucket_on(&rl->tokens)) fb_bucket_refund(&rl->tokens, tokens, now_us);
    rl->stats.released++;
}

const fb_ratelimit_stats *fb_ratelimit_stats_get(const fb_ratelimit *rl) {
    return &rl->stats;
}
