/*
 * conclimit.h - an adaptive client-side concurrency limit.
 *
 * A client asks the limiter before each call: it admits the call when fewer
 * than `limit` calls of its own are in flight, and rejects it at once
 * otherwise (nothing waits). When an admitted call ends, the caller says
 * how: SUCCESS and DROPPED give the limit algorithm a sample (the round
 * trip from acquire to release, the in-flight count at acquire including
 * the call itself, and whether it was dropped); IGNORED releases the call
 * without a sample. The algorithm moves the limit from the samples:
 *
 *   FIXED      never moves (Netflix FixedLimit)
 *   AIMD       dropped or rtt > timeout: limit x backoff_ratio, truncated;
 *              else, when inflight x 2 >= limit: limit + 1 (AIMDLimit)
 *   GRADIENT2  limit x gradient + queue_size, smoothed, where the gradient
 *              is rtt_tolerance x the long-term average rtt / this rtt,
 *              clamped to [0.5, 1] (Gradient2Limit)
 *
 * The rules and defaults are those of Netflix concurrency-limits at commit
 * 78a74b98 (v0.5.4): docs/conclimit.md says which file and line each one
 * follows. Like the rest of the core it reads no clock and allocates nothing.
 */
#ifndef FB_CONCLIMIT_H
#define FB_CONCLIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "fb.h"

typedef enum fb_conclimit_algo {
    FB_CONCLIMIT_FIXED = 0, /* default */
    FB_CONCLIMIT_AIMD,
    FB_CONCLIMIT_GRADIENT2
} fb_conclimit_algo;

#define FB_CONCLIMIT_LIMIT_MAX 1000000
/* ExpAvgMeasurement(longWindow, 10): the first 10 samples are a plain average. */
#define FB_CONCLIMIT_WARMUP 10

/* Zero in a field means the default beside it (core/fb.h). */
typedef struct fb_conclimit_config {
    fb_conclimit_algo algo;
    uint32_t initial_limit; /* 20; FIXED: the limit */
    uint32_t min_limit;     /* AIMD, GRADIENT2: 20 */
    uint32_t max_limit;     /* AIMD, GRADIENT2: 200 (Gradient2's maxConcurrency) */
    double backoff_ratio;   /* AIMD: 0.9, in [0.5, 1) */
    fb_time_us timeout_us;  /* AIMD: 5 s; a sample slower than this counts as a drop */
    double smoothing;       /* GRADIENT2: 0.2, in (0, 1] */
    uint32_t queue_size;    /* GRADIENT2: 4, what the limit may grow by per sample */
    uint32_t long_window;   /* GRADIENT2: 600 samples of the long-term rtt average */
    double rtt_tolerance;   /* GRADIENT2: 1.5, >= 1 */
    fb_switch
        timeout_drops; /* a TIMEOUT outcome: DEFAULT/OFF ignored (gRPC interceptor), ON dropped */
} fb_conclimit_config;

/* How an admitted call ended, for the limit (Netflix Limiter.Listener). */
typedef enum fb_conclimit_result {
    FB_CONCLIMIT_SUCCESS = 0, /* onSuccess: a sample */
    FB_CONCLIMIT_DROPPED,     /* onDropped: a sample with didDrop */
    FB_CONCLIMIT_IGNORED      /* onIgnore: released, no sample */
} fb_conclimit_result;

typedef struct fb_conclimit_stats {
    uint64_t acquired, rejected;        /* acquire() answers */
    uint64_t successes, drops, ignored; /* release() results */
    uint32_t limit_min, limit_max;      /* the lowest and highest limit it has had */
} fb_conclimit_stats;

typedef struct fb_conclimit {
    /* private: use the functions below */
    fb_conclimit_config cfg; /* defaults filled in */
    uint32_t limit;          /* Limit.getLimit() */
    uint32_t inflight;
    double estimated;    /* GRADIENT2: estimatedLimit */
    double long_rtt;     /* GRADIENT2: the ExpAvgMeasurement's value, in microseconds */
    double long_sum;     /* its warm-up sum */
    uint32_t long_count; /* its warm-up count */
    fb_conclimit_stats stats;
} fb_conclimit;

/* What an admitted call holds until release(). */
typedef struct fb_conclimit_permit {
    fb_time_us start_us; /* acquire time: the rtt runs from here */
    uint32_t inflight;   /* in flight at acquire, this call included */
    bool held;
} fb_conclimit_permit;

/* FB_ERANGE for a value out of range, FB_EINVAL for an unknown algorithm. */
int fb_conclimit_init(fb_conclimit *cl, const fb_conclimit_config *cfg);
/* Admit a call now (inflight < limit) and fill *p; false: rejected, nothing held. */
bool fb_conclimit_acquire(fb_conclimit *cl, fb_time_us now_us, fb_conclimit_permit *p);
/* The call of *p ended with `r`; a permit not held changes nothing. */
void fb_conclimit_release(fb_conclimit *cl, fb_conclimit_permit *p, fb_conclimit_result r,
                          fb_time_us now_us);
/* Limit.onSample: the algorithm's step alone (the limiter calls it on release). */
void fb_conclimit_sample(fb_conclimit *cl, fb_time_us rtt_us, uint32_t inflight, bool dropped);
/*
 * What an attempt's outcome is to the limit, as Netflix's gRPC client
 * interceptor decides it (docs/conclimit.md): success, dropped (transient,
 * rate-limited: gRPC's UNAVAILABLE), or ignored (the rest; a timeout is
 * dropped when timeout_drops is ON).
 */
fb_conclimit_result fb_conclimit_result_of(const fb_conclimit *cl, fb_outcome o);

uint32_t fb_conclimit_limit(const fb_conclimit *cl);
uint32_t fb_conclimit_inflight(const fb_conclimit *cl);
/* GRADIENT2: the estimated limit before truncation, and the long-term rtt average (us). */
double fb_conclimit_estimate(const fb_conclimit *cl);
double fb_conclimit_long_rtt(const fb_conclimit *cl);
const fb_conclimit_stats *fb_conclimit_stats_get(const fb_conclimit *cl);
const char *fb_conclimit_algo_name(fb_conclimit_algo a);

#endif /* FB_CONCLIMIT_H */
