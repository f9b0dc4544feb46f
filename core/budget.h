/*
 * budget.h - retry budgets: how many retries a client may make across requests.
 *
 * A budget is shared by many requests (per client or per provider) so that
 * an outage does not multiply the load. TOKEN_BUCKET is gRPC A6 retry
 * throttling, QUOTA the AWS SDKs' standard-mode retry quota; DEPOSIT and
 * RETRY_BREAKER are the two retry controls of Marc Brooker's simulations
 * ("Fixing retries with token buckets and circuit breakers", 2022): a bucket
 * that every request fills a little and every retry drains, and a breaker
 * that stops retries (never first tries) while failures are too many of the
 * requests. NONE always allows. The caller reports each new request with
 * fb_budget_on_request(); fb_retry_next() reports failures and withdraws;
 * the caller reports successes with fb_budget_on_success(). See docs/budget.md.
 */
#ifndef FB_BUDGET_H
#define FB_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "fb.h"

struct fb_retry_state; /* retry.h: a request's retry state, read on success */

typedef enum fb_budget_kind {
    FB_BUDGET_NONE = 0,
    FB_BUDGET_TOKEN_BUCKET,  /* gRPC A6 retry throttling */
    FB_BUDGET_QUOTA,         /* AWS SDK standard-mode retry quota */
    FB_BUDGET_DEPOSIT,       /* every request deposits, every retry costs */
    FB_BUDGET_RETRY_BREAKER, /* no retries while failures / requests is above a ratio */
    FB_BUDGET_CONCURRENCY    /* Envoy's retry budget: retries in progress at once */
} fb_budget_kind;

#define FB_BUDGET_BUCKETS_MAX 60

typedef struct fb_budget_config {
    fb_budget_kind kind;
    /* TOKEN_BUCKET: starts at max_tokens; a retryable failure costs 1 (floor
     * 0), a success adds `ratio` (3 decimals, as gRPC; never above max); a
     * retry is allowed only while tokens > max / 2 and costs nothing more. */
    double max_tokens; /* default 10 */
    double ratio;      /* default 0.1 */
    /* QUOTA: starts at capacity; a retry takes retry_cost (timeout_cost after
     * a timeout) and is refused when fewer are left; a success refunds what
     * its request's last retry took, or no_retry_refund when it took none;
     * never above capacity. Zero rule (fb.h): the counts default to their
     * values; the refund is optional, so 0 is no refund. */
    uint32_t capacity;        /* default 500 */
    uint32_t retry_cost;      /* default 5 */
    uint32_t timeout_cost;    /* default 10 */
    uint32_t no_retry_refund; /* default 0: no refund (botocore refunds 1: set it) */
    /* DEPOSIT: starts at max_tokens; each request adds `deposit` (never above max); a retry
     * is allowed while tokens >= threshold and takes `cost`. 3 decimals, as TOKEN_BUCKET. */
    double deposit;   /* default 0.1 */
    double cost;      /* default 1 */
    double threshold; /* default: cost */
    /* RETRY_BREAKER: over the last window_us (in `buckets` slices), a retry is refused
     * while requests >= min_requests and failures > failure_ratio * requests; first
     * tries are never refused. Failures count every retryable failed attempt. */
    fb_time_us window_us;  /* default 10 s */
    uint32_t buckets;      /* default 10, at most FB_BUDGET_BUCKETS_MAX; must divide the window */
    double failure_ratio;  /* default 0.1 */
    uint32_t min_requests; /* default 20 */
    /* CONCURRENCY (Envoy RetryBudget): a retry is allowed while the retries in
     * progress are fewer than max(min_retry_concurrency, budget_percent% of the
     * attempts in progress, truncated); a granted retry is in progress from its
     * grant (through its wait) until its attempt's result, fb_budget_release(). */
    double budget_percent;          /* default 20 */
    uint32_t min_retry_concurrency; /* default 3 */
} fb_budget_config;

typedef struct fb_budget_stats {
    uint64_t allowed; /* retries granted */
    uint64_t refused; /* retries refused */
} fb_budget_stats;

typedef struct fb_budget {
    /* private: use the functions below */
    fb_budget_config cfg;
    int64_t mtokens;      /* TOKEN_BUCKET, DEPOSIT: thousandths of a token (gRPC's 3 decimals) */
    int64_t mmax, mratio; /* ... and max_tokens and ratio in thousandths (set by init) */
    int64_t available;    /* QUOTA */
    uint64_t active_attempts, active_retries; /* CONCURRENCY */
    /* RETRY_BREAKER: a ring of slices of window_us / buckets, the newest at `head` */
    struct {
        uint32_t requests, failures;
    } slice[FB_BUDGET_BUCKETS_MAX];
    uint32_t head;
    fb_time_us head_start_us; /* FB_TIME_NONE before the first request */
    fb_budget_stats stats;
} fb_budget;

int fb_budget_init(fb_budget *b, const fb_budget_config *cfg);
/* cfg with the defaults fb_budget_init() applies filled in (reports show the settings in
 * effect). Returns FB_OK, or what fb_budget_init() would. */
int fb_budget_config_effective(fb_budget_config *cfg);
/* fb_budget_on_request's and fb_budget_on_success's steps for the kinds they ask for. */
void fb_budget__on_request(fb_budget *b, fb_time_us now_us);
void fb_budget__on_success(fb_budget *b, const struct fb_retry_state *s);
/* A request starts (its first try; DEPOSIT deposits, RETRY_BREAKER counts it). Inline: a client
 * starts every request with it, and the other kinds do nothing. */
static inline void fb_budget_on_request(fb_budget *b, fb_time_us now_us) {
    if (b->cfg.kind == FB_BUDGET_DEPOSIT || b->cfg.kind == FB_BUDGET_RETRY_BREAKER)
        fb_budget__on_request(b, now_us);
}
/* May a retry after an outcome `o` be made, at now_us? Charges the budget when yes. */
bool fb_budget_withdraw(fb_budget *b, fb_outcome o, fb_time_us now_us);
/* What a QUOTA withdrawal after outcome `o` takes; 0 for the other kinds. */
uint32_t fb_budget_cost(const fb_budget *b, fb_outcome o);
/* A request ended with a success; `s` is its retry state (NULL: it needed no retry). Inline:
 * TOKEN_BUCKET's refill, at a client's every success; QUOTA refunds, the others do nothing. */
static inline void fb_budget_on_success(fb_budget *b, const struct fb_retry_state *s) {
    if (b->cfg.kind == FB_BUDGET_TOKEN_BUCKET) {
        int64_t k = b->mtokens + b->mratio, max = b->mmax;
        b->mtokens = k < max ? k : max;
    } else if (b->cfg.kind == FB_BUDGET_QUOTA) {
        fb_budget__on_success(b, s);
    }
}
/* An attempt failed with a retryable outcome (TOKEN_BUCKET charges 1, RETRY_BREAKER counts it). */
void fb_budget_on_failure(fb_budget *b, fb_outcome o, fb_time_us now_us);
/* Does a granted retry hold the budget until released (CONCURRENCY)? */
bool fb_budget_holds(const fb_budget *b);
/* The retry granted for `s` is over (its attempt ended, or the request did). */
void fb_budget_release(fb_budget *b, struct fb_retry_state *s);
/* An attempt starts, or ends (CONCURRENCY counts them; the other kinds ignore it). Inline: the
 * fallback engine tells it twice per attempt, and most kinds have nothing to do. */
static inline void fb_budget_attempt(fb_budget *b, bool started) {
    if (b->cfg.kind != FB_BUDGET_CONCURRENCY) return;
    if (started)
        b->active_attempts++;
    else if (b->active_attempts > 0)
        b->active_attempts--;
}

/* Withdrawals granted and refused since init. */
const fb_budget_stats *fb_budget_stats_get(const fb_budget *b);
/* TOKEN_BUCKET, DEPOSIT: the tokens left, to 3 decimals. */
double fb_budget_tokens(const fb_budget *b);
/* QUOTA: the units left. */
int64_t fb_budget_available(const fb_budget *b);
/* RETRY_BREAKER: the requests and failures in the window ending at now_us. */
void fb_budget_window(const fb_budget *b, fb_time_us now_us, uint32_t *requests,
                      uint32_t *failures);

#endif /* FB_BUDGET_H */
