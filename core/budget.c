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

    *b = (fb_budget){.cfg = c};
    b->tokens = (double)milli(c.max_tokens) / 1000.0;
    b->available = c.capacity;
    return FB_OK;
}

static uint32_t quota_cost(const fb_budget *b, fb_outcome o) {
    return o == FB_OUT_TIMEOUT ? b->cfg.timeout_cost : b->cfg.retry_cost;
}

bool fb_budget_withdraw(fb_budget *b, fb_outcome o) {
    bool ok = true;
    switch (b->cfg.kind) {
    case FB_BUDGET_TOKEN_BUCKET:
        /* Strictly more than half (gRPC): at exactly half, retries stop. */
        ok = 2 * milli(b->tokens) > milli(b->cfg.max_tokens);
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

void fb_budget_on_success(fb_budget *b, const fb_retry_state *s) {
    switch (b->cfg.kind) {
    case FB_BUDGET_TOKEN_BUCKET: {
        int64_t k = milli(b->tokens) + milli(b->cfg.ratio), max = milli(b->cfg.max_tokens);
        b->tokens = (double)(k < max ? k : max) / 1000.0;
        break;
    }
    case FB_BUDGET_QUOTA: {
        /* Refills with every success, so a drained quota always recovers (aws-sdk-go-v2#3550). */
        uint32_t refund =
            s != NULL && s->budget_withdrawn > 0 ? s->budget_withdrawn : b->cfg.no_retry_refund;
        int64_t a = b->available + refund;
        b->available = a < (int64_t)b->cfg.capacity ? a : (int64_t)b->cfg.capacity;
        break;
    }
    case FB_BUDGET_NONE:
    default:
        break;
    }
}

void fb_budget_on_failure(fb_budget *b, fb_outcome o) {
    if (b->cfg.kind != FB_BUDGET_TOKEN_BUCKET) return;
    if (o == FB_OUT_SUCCESS || o == FB_OUT_CANCELLED) return;
    int64_t k = milli(b->tokens) - 1000;
    b->tokens = (double)(k > 0 ? k : 0) / 1000.0;
}

bool fb_budget_holds(const fb_budget *b) {
    return b->cfg.kind == FB_BUDGET_CONCURRENCY;
}

void fb_budget_release(fb_budget *b, fb_retry_state *s) {
    if (s == NULL || !s->budget_held) return;
    s->budget_held = false;
    if (b->active_retries > 0) b->active_retries--;
}

void fb_budget_attempt(fb_budget *b, bool started) {
    if (b->cfg.kind != FB_BUDGET_CONCURRENCY) return;
    if (started)
        b->active_attempts++;
    else if (b->active_attempts > 0)
        b->active_attempts--;
}

const fb_budget_stats *fb_budget_stats_get(const fb_budget *b) {
    return &b->stats;
}

double fb_budget_tokens(const fb_budget *b) {
    return b->tokens;
}

int64_t fb_budget_available(const fb_budget *b) {
    return b->available;
}
