/*
 * ratelimit.h - token buckets for requests and tokens per period.
 *
 * A bucket holds up to `capacity` units and refills continuously at
 * capacity per `period_us`. Arithmetic is exact integers: the level is kept
 * in units of 1/period_us of a token, so refills never drift. A bucket starts
 * full. Functions return how long to wait; nothing here sleeps.
 *
 * fb_ratelimit combines a requests bucket and a tokens bucket (either may be
 * off) with a policy: WAIT (reserve now, return the wait, up to wait_us_max)
 * or REJECT (admit only when both are available now). See docs/ratelimit.md.
 */
#ifndef FB_RATELIMIT_H
#define FB_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "fb.h"

typedef struct fb_bucket {
    /* private */
    int64_t capacity; /* tokens */
    fb_time_us period_us;
    int64_t level; /* tokens * period_us; may go negative after reservations */
    fb_time_us last_us;
} fb_bucket;

/* capacity > 0 tokens per period_us > 0; capacity * period_us must fit in int64. */
int fb_bucket_init(fb_bucket *b, int64_t capacity, fb_time_us period_us, fb_time_us now_us);
/* Whole tokens available now (after refill), possibly negative. */
int64_t fb_bucket_available(fb_bucket *b, fb_time_us now_us);
/* Time until n tokens are available (0 if now); FB_TIME_MAX if n > capacity. */
fb_time_us fb_bucket_wait(fb_bucket *b, int64_t n, fb_time_us now_us);
/* Take n tokens if available now; false (and nothing taken) otherwise. */
bool fb_bucket_take(fb_bucket *b, int64_t n, fb_time_us now_us);
/* Take n tokens unconditionally (the level may go negative): a reservation. */
void fb_bucket_reserve(fb_bucket *b, int64_t n, fb_time_us now_us);
/* Give back n tokens (never above capacity). */
void fb_bucket_refund(fb_bucket *b, int64_t n, fb_time_us now_us);
/* Tokens per period, as given to fb_bucket_init(); 0 for a limiter's bucket that is off. */
int64_t fb_bucket_capacity(const fb_bucket *b);

typedef enum fb_ratelimit_mode {
    FB_RATELIMIT_WAIT = 0, /* default */
    FB_RATELIMIT_REJECT
} fb_ratelimit_mode;

typedef struct fb_ratelimit_config {
    int64_t requests_per_min; /* 0 = no request limit */
    int64_t tokens_per_min;   /* 0 = no token limit */
    fb_ratelimit_mode mode;
    fb_time_us wait_us_max; /* WAIT: reject when the wait would exceed this; default 60 s */
} fb_ratelimit_config;

typedef struct fb_ratelimit_stats {
    uint64_t admitted; /* acquire() admitted, now or after a wait */
    uint64_t delayed;  /* of those, admitted with a wait > 0 */
    uint64_t rejected; /* acquire() rejected */
    uint64_t released; /* release() calls */
} fb_ratelimit_stats;

typedef struct fb_ratelimit {
    /* private: use the functions below */
    fb_ratelimit_config cfg;
    fb_bucket requests;
    fb_bucket tokens;
    fb_ratelimit_stats stats;
} fb_ratelimit;

typedef struct fb_ratelimit_decision {
    bool admitted;      /* false: rejected, nothing taken */
    fb_time_us wait_us; /* when admitted: wait this long before sending (0 = now) */
} fb_ratelimit_decision;

int fb_ratelimit_init(fb_ratelimit *rl, const fb_ratelimit_config *cfg, fb_time_us now_us);
/* One request of `tokens` tokens wants to go now. */
fb_ratelimit_decision fb_ratelimit_acquire(fb_ratelimit *rl, int64_t tokens, fb_time_us now_us);
/*
 * Give back what an admitted acquire() of `tokens` took, when the request
 * was not sent after all (its breaker rejected it, its deadline passed).
 */
void fb_ratelimit_release(fb_ratelimit *rl, int64_t tokens, fb_time_us now_us);
/* What acquire() and release() decided since init. */
const fb_ratelimit_stats *fb_ratelimit_stats_get(const fb_ratelimit *rl);

#endif /* FB_RATELIMIT_H */
