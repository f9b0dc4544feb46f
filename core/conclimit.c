/*
 * conclimit.c - an adaptive client-side concurrency limit (see conclimit.h
 * and docs/conclimit.md).
 *
 * The three algorithms are transcribed from Netflix concurrency-limits at
 * commit 78a74b98 (concurrency-limits-core/src/main/java/com/netflix/
 * concurrency/limits/limit/{FixedLimit,AIMDLimit,Gradient2Limit}.java and
 * measurement/ExpAvgMeasurement.java), the limiter from limiter/
 * AbstractLimiter.java and SimpleLimiter.java. Java's double arithmetic is
 * IEEE 754 binary64 like C's (the build has -ffp-contract=off), and its
 * (int) casts truncate toward zero and saturate; java_int() does the same,
 * so the limits are the library's to the bit. Java's Math.min/max return
 * NaN when an argument is NaN, C's fmin/fmax do not: jmin()/jmax() follow
 * Java.
 */
#include "conclimit.h"

#include <math.h>

#define DEFAULT_LIMIT 20
#define DEFAULT_MAX 200
#define DEFAULT_RATIO 0.9
#define DEFAULT_TIMEOUT_US (5 * FB_US_PER_S)
#define DEFAULT_SMOOTHING 0.2
#define DEFAULT_QUEUE 4
#define DEFAULT_LONG_WINDOW 600
#define DEFAULT_TOLERANCE 1.5

static const char *const algo_names[] = {"fixed", "aimd", "gradient2"};

const char *fb_conclimit_algo_name(fb_conclimit_algo a) {
    return (unsigned)a <= FB_CONCLIMIT_GRADIENT2 ? algo_names[a] : "unknown";
}

/* Java's (int) of a double: toward zero, NaN is 0, saturating at the int range. */
static int64_t java_int(double d) {
    if (d != d) return 0;
    if (d >= 2147483647.0) return 2147483647;
    if (d <= -2147483648.0) return -2147483647 - 1;
    return (int64_t)d;
}

static double jmin(double a, double b) {
    if (a != a || b != b) return NAN;
    return a < b ? a : b;
}

static double jmax(double a, double b) {
    if (a != a || b != b) return NAN;
    return a > b ? a : b;
}

/* A limit as the limiter holds it: an int, and never below 0 for the semaphore. */
static uint32_t as_limit(int64_t v) {
    if (v < 0) return 0;
    return v > FB_CONCLIMIT_LIMIT_MAX ? FB_CONCLIMIT_LIMIT_MAX : (uint32_t)v;
}

static void fill_defaults(fb_conclimit_config *c) {
    if (c->initial_limit == 0) c->initial_limit = DEFAULT_LIMIT;
    if (c->min_limit == 0) c->min_limit = DEFAULT_LIMIT;
    if (c->max_limit == 0) c->max_limit = DEFAULT_MAX;
    if (c->backoff_ratio == 0) c->backoff_ratio = DEFAULT_RATIO;
    if (c->timeout_us == 0) c->timeout_us = DEFAULT_TIMEOUT_US;
    if (c->smoothing == 0) c->smoothing = DEFAULT_SMOOTHING;
    if (c->queue_size == 0) c->queue_size = DEFAULT_QUEUE;
    if (c->long_window == 0) c->long_window = DEFAULT_LONG_WINDOW;
    if (c->rtt_tolerance == 0) c->rtt_tolerance = DEFAULT_TOLERANCE;
}

static int check(const fb_conclimit_config *c) {
    if ((unsigned)c->algo > FB_CONCLIMIT_GRADIENT2) return FB_EINVAL;
    if ((unsigned)c->timeout_drops > FB_OFF) return FB_EINVAL;
    if (c->initial_limit > FB_CONCLIMIT_LIMIT_MAX || c->max_limit > FB_CONCLIMIT_LIMIT_MAX)
        return FB_ERANGE;
    if (c->min_limit > c->max_limit) return FB_ERANGE;
    /* AIMDLimit.Builder.backoffRatio: "must be in the range [0.5, 1.0)" */
    if (!(c->backoff_ratio >= 0.5 && c->backoff_ratio < 1.0)) return FB_ERANGE;
    if (c->timeout_us < 0) return FB_ERANGE;
    if (!(c->smoothing > 0 && c->smoothing <= 1)) return FB_ERANGE;
    if (c->queue_size > FB_CONCLIMIT_LIMIT_MAX || c->long_window > 1000000) return FB_ERANGE;
    /* Gradient2Limit.Builder.rttTolerance: "Tolerance must be >= 1.0" */
    if (!(c->rtt_tolerance >= 1.0 && c->rtt_tolerance <= 1e6)) return FB_ERANGE;
    return FB_OK;
}

int fb_conclimit_init(fb_conclimit *cl, const fb_conclimit_config *cfg) {
    if (cl == NULL) return FB_EINVAL;
    fb_conclimit_config c = cfg ? *cfg : (fb_conclimit_config){0};
    fill_defaults(&c);
    int rc = check(&c);
    if (rc != FB_OK) return rc;
    *cl = (fb_conclimit){0};
    cl->cfg = c;
    /* AbstractLimit(initialLimit); Gradient2's estimatedLimit starts there too, unclamped */
    cl->limit = c.initial_limit;
    cl->estimated = (double)c.initial_limit;
    cl->stats.limit_min = cl->stats.limit_max = cl->limit;
    return FB_OK;
}

/* AIMDLimit._update */
static int64_t aimd(const fb_conclimit *cl, fb_time_us rtt_us, uint32_t inflight, bool dropped) {
    int64_t current = cl->limit;
    if (dropped || rtt_us > cl->cfg.timeout_us)
        current = java_int((double)current * cl->cfg.backoff_ratio);
    else if ((int64_t)inflight * 2 >= current)
        current = current + 1;
    int64_t lo = cl->cfg.min_limit, hi = cl->cfg.max_limit;
    return current < lo ? lo : current > hi ? hi : current;
}

/* ExpAvgMeasurement.add: a plain average over the warm-up, then exponential (2 / (n + 1)). */
static double long_add(fb_conclimit *cl, double sample) {
    if (cl->long_count < FB_CONCLIMIT_WARMUP) {
        cl->long_count++;
        cl->long_sum += sample;
        cl->long_rtt = cl->long_sum / cl->long_count;
    } else {
        double factor = 2.0 / (cl->cfg.long_window + 1);
        cl->long_rtt = cl->long_rtt * (1 - factor) + sample * factor;
    }
    return cl->long_rtt;
}

/* Gradient2Limit._update (didDrop plays no part in it) */
static int64_t gradient2(fb_conclimit *cl, fb_time_us rtt_us, uint32_t inflight) {
    double estimated = cl->estimated;
    double queue = (double)cl->cfg.queue_size;
    double short_rtt = (double)rtt_us;
    double long_rtt = long_add(cl, (double)rtt_us);
    /* latency back to normal after a long overload: bring the long average down faster */
    if (long_rtt / short_rtt > 2) cl->long_rtt = cl->long_rtt * 0.95;
    /* app-limited: do not grow (or shrink) while less than half the limit is in use */
    if ((double)inflight < estimated / 2) return java_int(estimated);
    double gradient = jmax(0.5, jmin(1.0, cl->cfg.rtt_tolerance * long_rtt / short_rtt));
    double limit = estimated * gradient + queue;
    limit = estimated * (1 - cl->cfg.smoothing) + limit * cl->cfg.smoothing;
    limit = jmax((double)cl->cfg.min_limit, jmin((double)cl->cfg.max_limit, limit));
    cl->estimated = limit;
    return java_int(limit);
}

void fb_conclimit_sample(fb_conclimit *cl, fb_time_us rtt_us, uint32_t inflight, bool dropped) {
    int64_t next = cl->limit;
    switch (cl->cfg.algo) {
    case FB_CONCLIMIT_AIMD:
        next = aimd(cl, rtt_us, inflight, dropped);
        break;
    case FB_CONCLIMIT_GRADIENT2:
        next = gradient2(cl, rtt_us, inflight);
        break;
    default: /* FixedLimit._update returns getLimit() */
        break;
    }
    cl->limit = as_limit(next);
    if (cl->limit < cl->stats.limit_min) cl->stats.limit_min = cl->limit;
    if (cl->limit > cl->stats.limit_max) cl->stats.limit_max = cl->limit;
}

/* SimpleLimiter.acquire: the semaphore's permits are limit - inflight */
bool fb_conclimit_acquire(fb_conclimit *cl, fb_time_us now_us, fb_conclimit_permit *p) {
    if (cl->inflight >= cl->limit) {
        cl->stats.rejected++;
        *p = (fb_conclimit_permit){0};
        return false;
    }
    cl->inflight++;
    cl->stats.acquired++;
    *p = (fb_conclimit_permit){.start_us = now_us, .inflight = cl->inflight, .held = true};
    return true;
}

/* AbstractLimiter's listener: onSuccess / onDropped sample, onIgnore does not */
void fb_conclimit_release(fb_conclimit *cl, fb_conclimit_permit *p, fb_conclimit_result r,
                          fb_time_us now_us) {
    if (p == NULL || !p->held) return;
    p->held = false;
    if (cl->inflight > 0) cl->inflight--;
    fb_time_us rtt = now_us - p->start_us;
    if (rtt < 0) rtt = 0;
    switch (r) {
    case FB_CONCLIMIT_SUCCESS:
        cl->stats.successes++;
        fb_conclimit_sample(cl, rtt, p->inflight, false);
        break;
    case FB_CONCLIMIT_DROPPED:
        cl->stats.drops++;
        fb_conclimit_sample(cl, rtt, p->inflight, true);
        break;
    default:
        cl->stats.ignored++;
        break;
    }
}

/*
 * ConcurrencyLimitClientInterceptor.onClose: OK -> onSuccess, UNAVAILABLE ->
 * onDropped, any other status -> onIgnore; cancel() -> onIgnore.
 */
fb_conclimit_result fb_conclimit_result_of(const fb_conclimit *cl, fb_outcome o) {
    switch (o) {
    case FB_OUT_SUCCESS:
        return FB_CONCLIMIT_SUCCESS;
    case FB_OUT_TRANSIENT:
    case FB_OUT_RATE_LIMITED:
        return FB_CONCLIMIT_DROPPED;
    case FB_OUT_TIMEOUT:
        return cl->cfg.timeout_drops == FB_ON ? FB_CONCLIMIT_DROPPED : FB_CONCLIMIT_IGNORED;
    default:
        return FB_CONCLIMIT_IGNORED;
    }
}

uint32_t fb_conclimit_limit(const fb_conclimit *cl) {
    return cl->limit;
}

uint32_t fb_conclimit_inflight(const fb_conclimit *cl) {
    return cl->inflight;
}

double fb_conclimit_estimate(const fb_conclimit *cl) {
    return cl->estimated;
}

double fb_conclimit_long_rtt(const fb_conclimit *cl) {
    return cl->long_rtt;
}

const fb_conclimit_stats *fb_conclimit_stats_get(const fb_conclimit *cl) {
    return &cl->stats;
}
