/*
 * budget.c - retry budgets shared by many requests.
 *
 * The token bucket counts in thousandths of a token, as gRPC does, so that
 * ten successes of 0.1 are exactly one token and the strict "more than half"
 * test never flickers on rounding. The quota counts whole units.
 */
#include "budget.h"

#include "retry.h"

static bool valid_double(double x) {
    return x == x && x < 1e300 && x > -1e300;
}

/* Token counts are kept to 3 decimals (gRPC): exact integer arithmetic in milli-tokens. */
static int64_t milli(double x) {
    return (int64_t)(x * 1000.0 + 0.5);
}

static int deposit_defaults(fb_budget_config *c) {
    if (!valid_double(c->deposit) || !valid_double(c->cost) || !valid_double(c->threshold))
        return FB_EINVAL;
    if (c->deposit == 0.0) c->deposit = 0.1;
    if (c->cost == 0.0) c->cost = 1.0;
    if (c->threshold == 0.0) c->threshold = c->cost;
    if (c->max_tokens < 0.0 || c->max_tokens > 1e6 || milli(c->max_tokens) == 0) return FB_ERANGE;
    if (c->deposit < 0.0 || c->deposit > 1e6 || milli(c->deposit) == 0) return FB_ERANGE;
    if (c->cost < 0.0 || c->cost > 1e6 || c->threshold < 0.0 || c->threshold > 1e6)
        return FB_ERANGE;
    return FB_OK;
}

static int breaker_defaults(fb_budget_config *c) {
    if (!valid_double(c->failure_ratio)) return FB_EINVAL;
    if (c->window_us == 0) c->window_us = 10 * FB_US_PER_S;
    if (c->buckets == 0) c->buckets = 10;
    if (c->failure_ratio == 0.0) c->failure_ratio = 0.1;
    if (c->min_requests == 0) c->min_requests = 20;
    if (c->window_us < 0 || c->buckets > FB_BUDGET_BUCKETS_MAX || c->window_us % c->buckets != 0 ||
        c->window_us / c->buckets == 0)
        return FB_ERANGE;
    if (c->failure_ratio < 0.0 || c->failure_ratio > 1e6) return FB_ERANGE;
    return FB_OK;
}

int fb_budget_init(fb_budget *b, const fb_budget_config *cfg) {
    static const fb_budget_config defaults = {0};
    if (b == NULL) return FB_EINVAL;
    if (cfg == NULL) cfg = &defaults;
    fb_budget_config c = *cfg;
    if ((unsigned)c.kind > FB_BUDGET_CONCURRENCY) return FB_EINVAL;
    if (!valid_double(c.max_tokens) || !valid_double(c.ratio) || !valid_double(c.budget_percent))
        return FB_EINVAL;
    if (c.budget_percent < 0.0 || c.budget_percent > 100.0) return FB_ERANGE;
    if (c.budget_percent == 0.0) c.budget_percent = 20.0;
    if (c.min_retry_concurrency == 0) c.min_retry_concurrency = 3;
    if (c.max_tokens == 0.0) c.max_tokens = 10.0;
    if (c.ratio == 0.0) c.ratio = 0.1;
    if (c.kind == FB_BUDGET_TOKEN_BUCKET) {
        /* gRPC A6: 0 < maxTokens <= 1000, tokenRatio > 0 with 3 decimals. */
        if (c.max_tokens < 0.0 || c.max_tokens > 1000.0 || milli(c.max_tokens) == 0)
            return FB_ERANGE;
        if (c.ratio < 0.0 || c.ratio > 1000.0 || milli(c.ratio) == 0) return FB_ERANGE;
    }
    if (c.capacity == 0) c.capacity = 500;
    if (c.retry_cost == 0) c.retry_cost = 5;
    if (c.timeout_cost == 0) c.timeout_cost = 10;
    int rc = c.kind == FB_BUDGET_DEPOSIT         ? deposit_defaults(&c)
             : c.kind == FB_BUDGET_RETRY_BREAKER ? breaker_defaults(&c)
                                                 : FB_OK;
    if (rc != FB_OK) return rc;

    *b = (fb_budget){.cfg = c};
    b->mtokens = b->mmax = milli(c.max_tokens);
    b->mratio = milli(c.ratio);
    b->available = c.capacity;
    b->head_start_us = FB_TIME_NONE;
    return FB_OK;
}

int fb_budget_config_effective(fb_budget_config *cfg) {
    fb_budget b;
    int rc = cfg ? fb_budget_init(&b, cfg) : FB_EINVAL;
    if (rc == FB_OK) *cfg = b.cfg;
    return rc;
}

static uint32_t quota_cost(const fb_budget *b, fb_outcome o) {
    return o == FB_OUT_TIMEOUT ? b->cfg.timeout_cost : b->cfg.retry_cost;
}

/* ---- RETRY_BREAKER's window: a ring of slices, the newest at head ---- */

static fb_time_us slice_us(const fb_budget *b) {
    return b->cfg.window_us / b->cfg.buckets;
}

/* How many slices have passed since the head slice began (0: t is in it). */
static uint64_t slices_since(const fb_budget *b, fb_time_us t) {
    if (b->head_start_us == FB_TIME_NONE || t < b->head_start_us) return 0;
    return (uint64_t)((t - b->head_start_us) / slice_us(b));
}

/* Move the head to the slice holding t, clearing the slices it passes. */
static void roll(fb_budget *b, fb_time_us t) {
    if (b->head_start_us == FB_TIME_NONE) {
        b->head_start_us = t; /* slices start at the first request */
        return;
    }
    uint64_t k = slices_since(b, t);
    uint64_t clear = k < b->cfg.buckets ? k : b->cfg.buckets;
    for (uint64_t i = 0; i < clear; i++) {
        b->head = (b->head + 1) % b->cfg.buckets;
        b->slice[b->head].requests = b->slice[b->head].failures = 0;
    }
    b->head_start_us += (fb_time_us)k * slice_us(b);
}

void fb_budget_window(const fb_budget *b, fb_time_us now_us, uint32_t *requests,
                      uint32_t *failures) {
    *requests = *failures = 0;
    if (b->cfg.kind != FB_BUDGET_RETRY_BREAKER) return;
    uint64_t k = slices_since(b, now_us); /* the k oldest slices have expired by now */
    for (uint64_t age = 0; age + k < b->cfg.buckets; age++) {
        uint32_t i = (uint32_t)((b->head + b->cfg.buckets - age) % b->cfg.buckets);
        *requests += b->slice[i].requests;
        *failures += b->slice[i].failures;
    }
}

static bool breaker_allows(const fb_budget *b, fb_time_us now_us) {
    uint32_t req, fail;
    fb_budget_window(b, now_us, &req, &fail);
    return req < b->cfg.min_requests || (double)fail <= b->cfg.failure_ratio * (double)req;
}

void fb_budget__on_request(fb_budget *b, fb_time_us now_us) {
    if (b->cfg.kind == FB_BUDGET_DEPOSIT) {
        int64_t k = b->mtokens + milli(b->cfg.deposit), max = b->mmax;
        b->mtokens = k < max ? k : max;
    } else if (b->cfg.kind == FB_BUDGET_RETRY_BREAKER) {
        roll(b, now_us);
        b->slice[b->head].requests++;
    }
}

bool fb_budget_withdraw(fb_budget *b, fb_outcome o, fb_time_us now_us) {
    bool ok = true;
    switch (b->cfg.kind) {
    case FB_BUDGET_DEPOSIT:
        ok = b->mtokens >= milli(b->cfg.threshold);
        if (ok) {
            int64_t k = b->mtokens - milli(b->cfg.cost);
            b->mtokens = k > 0 ? k : 0;
        }
        break;
    case FB_BUDGET_RETRY_BREAKER:
        ok = breaker_allows(b, now_us);
        break;
    case FB_BUDGET_TOKEN_BUCKET:
        /* Strictly more than half (gRPC): at exactly half, retries stop. */
        ok = 2 * b->mtokens > b->mmax;
        break;
    case FB_BUDGET_QUOTA: {
        uint32_t cost = quota_cost(b, o);
        ok = b->available >= (int64_t)cost;
        if (ok) b->available -= cost;
        break;
    }
    case FB_BUDGET_CONCURRENCY: {
        /* Envoy RetryBudgetImpl::max(): std::max<uint64_t>(percent / 100 * active, min) */
        uint64_t by_load = (uint64_t)(b->cfg.budget_percent / 100.0 * (double)b->active_attempts);
        uint64_t max =
            by_load > b->cfg.min_retry_concurrency ? by_load : b->cfg.min_retry_concurrency;
        ok = b->active_retries < max;
        if (ok) b->active_retries++;
        break;
    }
    case FB_BUDGET_NONE:
    default:
        break;
    }
    if (ok)
        b->stats.allowed++;
    else
        b->stats.refused++;
    return ok;
}

uint32_t fb_budget_cost(const fb_budget *b, fb_outcome o) {
    return b->cfg.kind == FB_BUDGET_QUOTA ? quota_cost(b, o) : 0;
}

/* QUOTA (fb_budget_on_success asks for no other kind). */
void fb_budget__on_success(fb_budget *b, const fb_retry_state *s) {
    /* Refills with every success, so a drained quota always recovers (aws-sdk-go-v2#3550). */
    uint32_t refund =
        s != NULL && s->budget_withdrawn > 0 ? s->budget_withdrawn : b->cfg.no_retry_refund;
    int64_t a = b->available + refund;
    b->available = a < (int64_t)b->cfg.capacity ? a : (int64_t)b->cfg.capacity;
}

void fb_budget_on_failure(fb_budget *b, fb_outcome o, fb_time_us now_us) {
    if (o == FB_OUT_SUCCESS || o == FB_OUT_CANCELLED) return;
    if (b->cfg.kind == FB_BUDGET_RETRY_BREAKER) {
        roll(b, now_us);
        b->slice[b->head].failures++;
        return;
    }
    if (b->cfg.kind != FB_BUDGET_TOKEN_BUCKET) return;
    int64_t k = b->mtokens - 1000;
    b->mtokens = k > 0 ? k : 0;
}

bool fb_budget_holds(const fb_budget *b) {
    return b->cfg.kind == FB_BUDGET_CONCURRENCY;
}

void fb_budget_release(fb_budget *b, fb_retry_state *s) {
    if (s == NULL || !s->budget_held) return;
    s->budget_held = false;
    if (b->active_retries > 0) b->active_retries--;
}

const fb_budget_stats *fb_budget_stats_get(const fb_budget *b) {
    return &b->stats;
}

double fb_budget_tokens(const fb_budget *b) {
    return (double)b->mtokens / 1000.0;
}

int64_t fb_budget_available(const fb_budget *b) {
    return b->available;
}
