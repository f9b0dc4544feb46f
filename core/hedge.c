/*
 * hedge.c - hedged requests (see hedge.h and docs/hedge.md).
 *
 * The rules follow Polly v8 (8.7.0, src/Polly.Core/Hedging/
 * HedgingResilienceStrategy.cs, Controller/HedgingExecutionContext.cs) and
 * gRPC's hedging policy (grpc/proposal A6-client-retries.md, "Hedging
 * Policy"): the first attempt at once, another after each delay without a
 * success, a handled failure sends the next at once, the first success
 * wins, an unhandled failure ends the call.
 */
#include "hedge.h"

#include <string.h>

#define DEFAULT_ATTEMPTS 2
#define DEFAULT_DELAY_US (2 * FB_US_PER_S)
#define DEFAULT_WINDOW 100

int fb_hedge_policy_init(fb_hedge_policy *h, const fb_hedge_config *cfg) {
    if (h == NULL) return FB_EINVAL;
    fb_hedge_config c = cfg ? *cfg : (fb_hedge_config){0};
    if (c.max_attempts == 0) c.max_attempts = DEFAULT_ATTEMPTS;
    if (c.delay_us == 0) c.delay_us = DEFAULT_DELAY_US;
    if (c.window == 0) c.window = DEFAULT_WINDOW;
    if ((unsigned)c.target > FB_HEDGE_NEXT || (unsigned)c.cancel > FB_OFF) return FB_EINVAL;
    if (c.max_attempts < 2 || c.max_attempts > FB_HEDGE_ATTEMPTS_MAX) return FB_ERANGE;
    if (c.delay_us < 0 && c.delay_us != FB_HEDGE_AT_ONCE) return FB_ERANGE;
    if (!(c.percentile >= 0 && c.percentile <= 100)) return FB_ERANGE;
    if (c.window > FB_HEDGE_WINDOW_MAX) return FB_ERANGE;
    h->cfg = c;
    return FB_OK;
}

const fb_hedge_config *fb_hedge_policy_config(const fb_hedge_policy *h) {
    return &h->cfg;
}

void fb_hedge_window_init(fb_hedge_window *w, const fb_hedge_policy *h) {
    w->size = h->cfg.window;
    w->n = 0;
    w->pos = 0;
}

/* The first index of sorted[0..n) whose value is >= v. */
static uint32_t lower_bound(const fb_time_us *sorted, uint32_t n, fb_time_us v) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The ring keeps the order of arrival; the sorted copy loses the oldest and gains the new one. */
void fb_hedge_window_add(fb_hedge_window *w, fb_time_us latency_us) {
    uint32_t size = w->size;
    if (size == 0 || size > FB_HEDGE_WINDOW_MAX) return;
    if (w->n == size) {
        uint32_t k = lower_bound(w->sorted_us, w->n, w->lat_us[w->pos]);
        memmove(&w->sorted_us[k], &w->sorted_us[k + 1], (w->n - k - 1) * sizeof *w->sorted_us);
        w->n--;
    }
    uint32_t k = lower_bound(w->sorted_us, w->n, latency_us);
    memmove(&w->sorted_us[k + 1], &w->sorted_us[k], (w->n - k) * sizeof *w->sorted_us);
    w->sorted_us[k] = latency_us;
    w->n++;
    w->lat_us[w->pos] = latency_us;
    w->pos = (w->pos + 1) % size;
}

/* Nearest rank: the ceil(p / 100 x n)-th smallest latency of a full window. */
fb_time_us fb_hedge_delay(const fb_hedge_policy *h, const fb_hedge_window *w) {
    const fb_hedge_config *c = &h->cfg;
    if (c->percentile <= 0 || w == NULL || w->n < c->window) return c->delay_us;
    double r = c->percentile / 100.0 * (double)w->n;
    uint32_t rank = (uint32_t)r;
    if ((double)rank < r) rank++;
    if (rank < 1) rank = 1;
    fb_time_us d = w->sorted_us[rank - 1];
    return d > 0 ? d : 1;
}

/* When the attempt after one sent at now is due. */
static fb_time_us due_after(const fb_hedge_policy *h, const fb_hedge_group *g, fb_time_us delay_us,
                            fb_time_us now_us) {
    if (g->launched >= h->cfg.max_attempts || g->stopped) return FB_TIME_MAX;
    if (delay_us == FB_HEDGE_AT_ONCE) return now_us;
    return fb_time_add(now_us, delay_us);
}

void fb_hedge_begin(const fb_hedge_policy *h, fb_hedge_group *g, fb_time_us delay_us,
                    fb_time_us now_us) {
    *g = (fb_hedge_group){.launched = 1, .outstanding = 1};
    g->next_at_us = due_after(h, g, delay_us, now_us);
}

bool fb_hedge_due(const fb_hedge_policy *h, const fb_hedge_group *g, fb_time_us now_us) {
    return !g->done && !g->stopped && g->launched < h->cfg.max_attempts && now_us >= g->next_at_us;
}

void fb_hedge_sent(const fb_hedge_policy *h, fb_hedge_group *g, fb_time_us delay_us,
                   fb_time_us now_us) {
    g->launched++;
    g->outstanding++;
    g->next_at_us = due_after(h, g, delay_us, now_us);
}

fb_hedge_verdict fb_hedge_refused(fb_hedge_group *g) {
    g->stopped = true;
    g->next_at_us = FB_TIME_MAX;
    if (g->outstanding > 0) return FB_HEDGE_WAIT;
    g->done = true;
    return FB_HEDGE_EXHAUSTED;
}

fb_hedge_verdict fb_hedge_result(const fb_hedge_policy *h, fb_hedge_group *g, bool success,
                                 bool handled, fb_time_us now_us) {
    if (g->done) return FB_HEDGE_WAIT; /* a loser answering after the end: nothing to decide */
    if (g->outstanding > 0) g->outstanding--;
    if (success || !handled) {
        g->done = true;
        g->next_at_us = FB_TIME_MAX;
        return success ? FB_HEDGE_WON : FB_HEDGE_FAILED;
    }
    /* gRPC: "the next hedged request in line is sent immediately, shortcutting its delay" */
    if (!g->stopped && g->launched < h->cfg.max_attempts) {
        g->next_at_us = now_us;
        return FB_HEDGE_SEND_NOW;
    }
    if (g->outstanding > 0) return FB_HEDGE_WAIT;
    g->done = true;
    return FB_HEDGE_EXHAUSTED;
}
