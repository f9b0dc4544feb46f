/*
 * fallback.c - the request path as one decision engine (see fallback.h and
 * docs/fallback.md).
 *
 * A request walks its order once, front to back: `pos` only grows, so every
 * provider is visited at most once and the number of attempts is bounded by
 * the retry policy's attempts per provider. All mutable state lives in the
 * request and in the caller-owned breakers, limiters, budget and rng; the
 * engine itself is read-only.
 */
#include "fallback.h"

#include <string.h>

/* The attempted-providers bit set is a uint8_t. */
_Static_assert(FB_FALLBACK_PROVIDERS_MAX <= 8, "fb_fallback_request.attempted is 8 bits");

/* What resume() (and result()) continue with. */
enum phase {
    PHASE_IDLE = 0,   /* between steps: nothing outstanding */
    PHASE_ATTEMPT,    /* an ATTEMPT is out; the permit is held */
    PHASE_WAIT_RETRY, /* WAIT before retrying the same provider: limiter, breaker, attempt */
    PHASE_WAIT_LIMIT, /* WAIT for the limiter; tokens reserved: breaker, attempt */
    PHASE_DONE
};

/* Why providers were skipped without an attempt. */
enum skip {
    SKIP_CONTEXT = 1u << 0,
    SKIP_RATE = 1u << 1,
    SKIP_BREAKER = 1u << 2,
};

_Static_assert(FB_OUT_COUNT <= UINT8_MAX, "fb_fallback_request: last_outcome in a byte");

static const char *const stop_names[FB_STOP_COUNT] = {
#define FB_STOP_TEXT(name, text) text,
    FB_STOP_MAP(FB_STOP_TEXT)
#undef FB_STOP_TEXT
};

const char *fb_stop_name(fb_stop s) {
    if ((unsigned)s >= FB_STOP_COUNT) return "unknown";
    return stop_names[s];
}

/*
 * A valid order, copied into `out` as it is checked (begin() takes the request's so, in one
 * pass): 1..MAX entries, each a configured provider, none twice.
 */
static bool copy_order(uint8_t *out, const uint8_t *order, uint32_t order_len,
                       uint32_t provider_count) {
    uint32_t seen = 0;
    if (order_len == 0 || order_len > FB_FALLBACK_PROVIDERS_MAX) return false;
    for (uint32_t i = 0; i < order_len; i++) {
        uint8_t p = order[i];
        if (p >= provider_count || (seen & (1u << p))) return false;
        seen |= 1u << p;
        out[i] = p;
    }
    return true;
}

static bool order_valid(const uint8_t *order, uint32_t order_len, uint32_t provider_count) {
    uint8_t scratch[FB_FALLBACK_PROVIDERS_MAX];
    return copy_order(scratch, order, order_len, provider_count);
}

int fb_fallback_init(fb_fallback *fb, const fb_fallback_config *cfg) {
    if (fb == NULL || cfg == NULL) return FB_EINVAL;
    if (cfg->provider_count == 0 || cfg->provider_count > FB_FALLBACK_PROVIDERS_MAX)
        return FB_EINVAL;
    for (uint32_t i = 0; i < cfg->provider_count; i++) {
        const fb_fallback_provider *p = &cfg->providers[i];
        if (p->port.allow != NULL && p->port.record == NULL) return FB_EINVAL;
        if (p->attempt_timeout_us < 0) return FB_EINVAL;
    }
    if (cfg->order_len != 0 && !order_valid(cfg->order, cfg->order_len, cfg->provider_count))
        return FB_EINVAL;
    if ((unsigned)cfg->stream > FB_STREAM_RETRY) return FB_EINVAL;
    if ((unsigned)cfg->pick > FB_PICK_ROUND_ROBIN || (unsigned)cfg->healthy_gate > FB_OFF ||
        (unsigned)cfg->zero_wait_if_healthy > FB_OFF || (unsigned)cfg->judge_first > FB_OFF)
        return FB_EINVAL;
    const fb_fallback_chain *alt[] = {&cfg->on_context_length, &cfg->on_policy};
    for (size_t i = 0; i < 2; i++)
        if (alt[i]->set && alt[i]->len > 0 &&
            !order_valid(alt[i]->order, alt[i]->len, cfg->provider_count))
            return FB_EINVAL;

    fb->cfg = *cfg;
    if (fb->cfg.order_len == 0) {
        for (uint32_t i = 0; i < cfg->provider_count; i++) fb->cfg.order[i] = (uint8_t)i;
        fb->cfg.order_len = cfg->provider_count;
    }
    fb->plain = cfg->budget == NULL && cfg->pick == FB_PICK_ORDER;
    for (uint32_t i = 0; i < cfg->provider_count; i++) {
        const fb_fallback_provider *p = &cfg->providers[i];
        if (p->breaker || p->port.allow || p->ratelimit || p->conclimit) fb->plain = false;
    }
    fb->lean = cfg->pick == FB_PICK_ORDER;
    for (uint32_t i = 0; i < cfg->provider_count; i++) {
        const fb_fallback_provider *p = &cfg->providers[i];
        if (p->port.allow || p->ratelimit || p->conclimit) fb->lean = false;
    }
    fb->lean = fb->lean && !fb->plain;
    fb->retry_plain = cfg->retry != NULL && cfg->retry->plain;
    /* a provider without a timeout of its own takes the policy's (attempt_timeout) */
    for (uint32_t i = 0; i < cfg->provider_count; i++)
        if (fb->cfg.providers[i].attempt_timeout_us == 0 && cfg->retry != NULL)
            fb->cfg.providers[i].attempt_timeout_us = cfg->retry->cfg.attempt_timeout_us;
    return FB_OK;
}

static const fb_fallback_provider *current(const fb_fallback *fb, const fb_fallback_request *req) {
    return &fb->cfg.providers[req->order[req->cur]];
}

static bool grouped(const fb_fallback *fb) {
    return fb->cfg.pick != FB_PICK_ORDER;
}

/* When a request started at start_us passes its overall deadline; FB_TIME_MAX when none. */
static fb_time_us deadline_after(const fb_fallback *fb, fb_time_us start_us) {
    if (fb->cfg.retry == NULL || fb->cfg.retry->cfg.deadline_us <= 0) return FB_TIME_MAX;
    return fb_time_add(start_us, fb->cfg.retry->cfg.deadline_us);
}

/*
 * The decisions below are written into the caller's *d, from the public
 * function's down to the step that decides: a retry that goes straight to
 * its next attempt passes through five of them, and a 48-byte decision
 * returned by value is copied at each.
 */
static void decision(const fb_fallback_request *req, fb_action action, uint8_t provider,
                     fb_fallback_decision *d) {
    /* field by field: a compound literal's zeroing is a `rep stos` here, per attempt */
    d->action = action;
    d->provider = provider;
    d->delay_us = 0;
    d->timeout_us = 0;
    d->resume = false;
    d->retry = false;
    d->stop = FB_STOP_SUCCESS;
    d->degraded = false;
    /* via fallback = not the chain's first provider, whether that one failed
     * or was skipped (open breaker, limiter, context window) */
    d->via_fallback = action != FB_ACT_WAIT && req->stats.attempts > 0 && req->order_len > 0 &&
                      provider != req->order[0];
    d->last_outcome = req->last_outcome;
}

/* Groups: via fallback = outside the group the request started in. */
__attribute__((always_inline)) static inline void
decision_inline(const fb_fallback *fb, const fb_fallback_request *req, fb_action action,
                uint8_t provider, fb_fallback_decision *d) {
    decision(req, action, provider, d);
    if (grouped(fb))
        d->via_fallback = action != FB_ACT_WAIT && req->stats.attempts > 0 &&
                          fb->cfg.group[provider] != req->first_group;
}

/* decision_inline where gcc chooses (out of line in most steps: inline, naive's retry at once
 * grows around it). */
static void decision_at(const fb_fallback *fb, const fb_fallback_request *req, fb_action action,
                        uint8_t provider, fb_fallback_decision *d) {
    decision_inline(fb, req, action, provider, d);
}

/* The request ends: its DONE decision, returned (a caller that returns it passes its own return
 * slot: no copy). */
__attribute__((always_inline)) static inline fb_fallback_decision
finished_inline(const fb_fallback *fb, fb_fallback_request *req, fb_stop stop, bool degraded) {
    fb_fallback_decision d;
    uint8_t provider = 0;
    if (req->stats.attempts > 0)
        provider = req->last_provider;
    else if (req->order_len > 0)
        provider = req->order[req->pos < req->order_len ? req->pos : req->order_len - 1];
    req->phase = PHASE_DONE;
    decision_inline(fb, req, FB_ACT_DONE, provider, &d); /* a call: 25 instructions a request */
    d.stop = stop;
    d.degraded = degraded;
    return d;
}

/* finished_inline where gcc chooses (out of line in most steps). */
static fb_fallback_decision finished(const fb_fallback *fb, fb_fallback_request *req, fb_stop stop,
                                     bool degraded) {
    return finished_inline(fb, req, stop, degraded);
}

/* finished() into *d, for the steps that decide into their caller's. Out of line: gcc inlines
 * it otherwise, and the plain engine's retry at once grows around it (naive: 6 instructions an
 * attempt more). */
static __attribute__((noinline)) void finish(const fb_fallback *fb, fb_fallback_request *req,
                                             fb_stop stop, bool degraded, fb_fallback_decision *d) {
    *d = finished(fb, req, stop, degraded);
}

/*
 * The chain ran out. An attempt that failed says the providers were tried;
 * otherwise the skips say why none was: an open breaker first (providers
 * that could serve were down), then the client's own limiter, and a context
 * window only when it alone ruled every provider out.
 */
static void exhausted(const fb_fallback *fb, fb_fallback_request *req, fb_fallback_decision *d) {
    fb_stop stop = FB_STOP_EXHAUSTED;
    if (req->stats.attempts == 0) {
        if (req->skipped & SKIP_BREAKER)
            stop = FB_STOP_BREAKER_OPEN;
        else if (req->skipped & SKIP_RATE)
            stop = FB_STOP_RATE_LIMITED;
        else if (req->skipped & SKIP_CONTEXT)
            stop = FB_STOP_CONTEXT_LENGTH;
    }
    finish(fb, req, stop, fb->cfg.degraded, d);
}

/* A failure that may not go on ends the request with what it was. */
static void stop_on(const fb_fallback *fb, fb_fallback_request *req, fb_outcome o,
                    fb_fallback_decision *d) {
    switch (o) {
    case FB_OUT_PERMANENT:
        finish(fb, req, FB_STOP_PERMANENT, false, d);
        return;
    case FB_OUT_POLICY:
        finish(fb, req, FB_STOP_POLICY, false, d);
        return;
    case FB_OUT_CANCELLED:
        finish(fb, req, FB_STOP_CANCELLED, false, d);
        return;
    case FB_OUT_CONTEXT_LENGTH:
        finish(fb, req, FB_STOP_CONTEXT_LENGTH, fb->cfg.degraded, d);
        return;
    default:
        finish(fb, req, FB_STOP_EXHAUSTED, fb->cfg.degraded, d);
        return;
    }
}

/* A permit no breaker tracks, field by field (a compound literal's zeroing is a `rep stos`). */
static inline void untracked(fb_breaker_permit *permit, fb_time_us now_us) {
    permit->generation = 0;
    permit->id = 0;
    permit->admitted_us = now_us;
    permit->kind = FB_PERMIT_UNTRACKED;
    permit->slot = 0;
}

/* Asked per attempt (inline: most of a storm's providers have no breaker to ask). */
static inline bool breaker_allow(const fb_fallback_provider *p, fb_time_us now_us,
                                 fb_breaker_permit *permit) {
    if (p->breaker != NULL && p->port.allow == NULL) /* it writes the whole permit */
        return fb_breaker_allow(p->breaker, now_us, permit);
    if (p->port.allow == NULL) {
        untracked(permit, now_us);
        return true;
    }
    *permit = (fb_breaker_permit){.admitted_us = now_us, .kind = FB_PERMIT_CALL};
    return p->port.allow(p->port.ctx, now_us, permit);
}

/* breaker_record's report, to a provider that has a breaker (inline in it: the result is built
 * in the caller's frame). */
static inline void breaker_tell(const fb_fallback_provider *p, const fb_breaker_permit *permit,
                                fb_effect effect, const fb_class *c, fb_time_us hint_us,
                                fb_time_us now_us) {
    fb_time_us duration_us = now_us - permit->admitted_us;
    fb_breaker_result r = {.effect = effect,
                           .duration_us = duration_us < 0 ? 0 : duration_us,
                           .hint_us = hint_us,
                           .trip = c ? c->trip : FB_TRIP_RULES,
                           .failure_limit = c ? c->failure_limit : 0};
    if (p->port.allow != NULL)
        p->port.record(p->port.ctx, permit, &r, now_us);
    else if (p->breaker != NULL)
        fb_breaker_record(p->breaker, permit, &r, now_us);
}

/*
 * Report a result to the breaker; c (NULL for a cancelled call) carries its
 * trip rules. Inline: asked per attempt, and most of a storm's providers have
 * no breaker to tell.
 */
static inline void breaker_record(const fb_fallback_provider *p, const fb_breaker_permit *permit,
                                  fb_effect effect, const fb_class *c, fb_time_us hint_us,
                                  fb_time_us now_us) {
    if (p->port.allow == NULL && p->breaker == NULL) return; /* nobody to tell */
    breaker_tell(p, permit, effect, c, hint_us, now_us);
}

/* Give a concurrency permit back with what its attempt was to the limit. */
static void climit_end(const fb_fallback_provider *p, fb_conclimit_permit *permit,
                       fb_conclimit_result r, fb_time_us now_us) {
    if (p->conclimit != NULL) fb_conclimit_release(p->conclimit, permit, r, now_us);
}

/* An ATTEMPT's timeout: the provider's, else the policy's (init put it in the provider's copy),
 * bounded by the time left. */
static fb_time_us attempt_timeout(const fb_fallback_provider *p, fb_time_us deadline_us,
                                  fb_time_us now_us) {
    fb_time_us timeout_us = p->attempt_timeout_us;
    if (deadline_us != FB_TIME_MAX && (timeout_us == 0 || timeout_us > deadline_us - now_us))
        timeout_us = deadline_us - now_us;
    return timeout_us;
}

/*
 * The client's concurrency limit has room; else what the rate limiter
 * reserved goes back. Only asked when the provider has a limit (most have
 * none, and send asks per attempt).
 */
static bool climit_admits(const fb_fallback_provider *p, uint32_t tokens, fb_time_us now_us,
                          fb_conclimit_permit *climit) {
    if (fb_conclimit_acquire(p->conclimit, now_us, climit)) return true;
    if (p->ratelimit != NULL) fb_ratelimit_release(p->ratelimit, tokens, now_us);
    return false;
}

/* The breaker refused the call, not sent: what the limiters reserved for it goes back. */
static void breaker_refused(const fb_fallback_provider *p, uint32_t tokens, fb_time_us now_us,
                            fb_conclimit_permit *climit) {
    if (p->ratelimit != NULL) fb_ratelimit_release(p->ratelimit, tokens, now_us);
    climit_end(p, climit, FB_CONCLIMIT_IGNORED, now_us);
}

/*
 * The concurrency limit, then the breaker, for an attempt whose limiter
 * tokens are taken: false (and the tokens and the concurrency permit given
 * back) when either refuses, with the reason in *skip. Inline: asked per
 * attempt, and the common one has no concurrency limit to ask.
 */
static inline bool admit(const fb_fallback_provider *p, uint32_t tokens, fb_time_us now_us,
                         fb_conclimit_permit *climit, fb_breaker_permit *permit, uint8_t *skip) {
    if (p->conclimit != NULL && !climit_admits(p, tokens, now_us, climit)) {
        *skip |= SKIP_RATE; /* a client-side limiter, as far as the chain's end is concerned */
        return false;
    }
    if (!breaker_allow(p, now_us, permit)) {
        breaker_refused(p, tokens, now_us, climit);
        *skip |= SKIP_BREAKER;
        return false;
    }
    return true;
}

/*
 * The current provider's breaker refused the call. With the retry policy's
 * retry_rejected ON the refusal is a failed attempt the retry may repeat
 * (counted as one, waited for as one, a WAIT even when the delay is 0, so
 * that a zero backoff cannot recurse); false: the provider is skipped.
 */
static __attribute__((noinline)) bool retry_rejected(const fb_fallback *fb,
                                                     fb_fallback_request *req, fb_time_us now_us,
                                                     fb_fallback_decision *d) {
    const fb_retry_policy *pol = fb->cfg.retry;
    fb_class c = {.outcome = FB_OUT_REJECTED,
                  .retryable = true,
                  .effect = FB_EFFECT_IGNORE,
                  .may_fallback = true};
    fb_retry_decision r =
        fb_retry_next(pol, &req->retry, &c, FB_TIME_NONE, fb->cfg.budget, fb->cfg.rng, now_us);
    if (!r.retry) return false;
    req->retried = true;
    req->phase = PHASE_WAIT_RETRY;
    decision(req, FB_ACT_WAIT, req->order[req->pos], d);
    d->delay_us = r.delay_us; /* not d->retry: nothing was sent */
    return true;
}

/* retry_rejected() when the policy says so; the test inline, as most policies do not (a call of
 * 14 instructions per refusal). */
static inline bool retry_rejection(const fb_fallback *fb, fb_fallback_request *req,
                                   fb_time_us now_us, fb_fallback_decision *d) {
    const fb_retry_policy *pol = fb->cfg.retry;
    return pol != NULL && pol->cfg.retry_rejected == FB_ON && retry_rejected(fb, req, now_us, d);
}

/*
 * One attempt at the current provider: limiter (unless its tokens are
 * already reserved), concurrency limit, breaker, then ATTEMPT. Returns false
 * when the provider is skipped; otherwise *d is the decision (ATTEMPT, WAIT
 * or DONE). `lean` (a constant: fb->lean known) leaves out the limiters and the port, which
 * such an engine has none of; always inline, so that it folds.
 */
__attribute__((always_inline)) static inline bool send_at(const fb_fallback *fb,
                                                          fb_fallback_request *req, bool reserved,
                                                          fb_time_us now_us,
                                                          fb_fallback_decision *d, bool lean) {
    const fb_fallback_provider *p = current(fb, req);
    uint8_t provider = req->order[req->cur];
    fb_time_us deadline_us = req->deadline_us;

    if (now_us >= deadline_us) {
        if (reserved) fb_ratelimit_release(p->ratelimit, req->tokens_needed, now_us);
        finish(fb, req, FB_STOP_DEADLINE, false, d);
        return true;
    }
    if (!lean && !reserved && p->ratelimit != NULL) {
        fb_ratelimit_decision rl = fb_ratelimit_acquire(p->ratelimit, req->tokens_needed, now_us);
        /* A wait that ends at or after the deadline cannot lead to an answer. */
        if (rl.admitted && fb_time_add(now_us, rl.wait_us) >= deadline_us) {
            fb_ratelimit_release(p->ratelimit, req->tokens_needed, now_us);
            rl.admitted = false;
        }
        if (!rl.admitted) {
            req->skipped |= SKIP_RATE;
            return false;
        }
        if (rl.wait_us > 0) {
            req->phase = PHASE_WAIT_LIMIT;
            decision_at(fb, req, FB_ACT_WAIT, provider, d);
            d->delay_us = rl.wait_us;
            return true;
        }
    }
    uint8_t why = 0;
    if (lean) { /* admit() with no limit to ask or give back */
        if (p->breaker == NULL) {
            untracked(&req->permit, now_us);
        } else if (!fb_breaker_allow_inline(p->breaker, now_us, &req->permit)) {
            req->skipped |= SKIP_BREAKER;
            return retry_rejection(fb, req, now_us, d);
        }
    } else if (!admit(p, req->tokens_needed, now_us, &req->climit, &req->permit, &why)) {
        req->skipped |= why;
        /* a breaker's refusal may be a retried attempt (retry_rejected); a full limit is not */
        return why == SKIP_BREAKER && retry_rejection(fb, req, now_us, d);
    }

    fb_time_us timeout_us = attempt_timeout(p, deadline_us, now_us);
    if (req->stats.attempts == 0)
        req->first_provider = provider;
    else if (grouped(fb) ? !req->fresh_group : (req->attempted & (1u << provider)) != 0)
        req->stats.retries++;
    else
        req->stats.fallbacks++;
    req->fresh_group = false;
    if (fb->cfg.budget != NULL) fb_budget_attempt(fb->cfg.budget, true);
    req->attempted = (uint8_t)(req->attempted | (1u << provider));
    req->stats.attempts++;
    req->last_provider = provider;
    /* The retry state is per provider, the deadline per request; fb_retry_next() counts. */
    req->retry.start_us = req->start_us;
    req->phase = PHASE_ATTEMPT;
    req->detached = false;

    decision_at(fb, req, FB_ACT_ATTEMPT, provider, d);
    d->timeout_us = timeout_us;
    d->resume = req->resume;
    return true;
}

static bool send(const fb_fallback *fb, fb_fallback_request *req, bool reserved, fb_time_us now_us,
                 fb_fallback_decision *d) {
    return send_at(fb, req, reserved, now_us, d, false);
}

/*
 * send() for an engine with nothing to ask before an attempt (fb->plain) and no limiter tokens
 * reserved: its steps with the limiters, the breaker, the groups and the budget left out, as
 * they come to nothing there. Inline in again() and advance(): a storm's retry at once and a
 * request's first attempt come this way.
 */
static inline void send_plain(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                              fb_fallback_decision *d) {
    const fb_fallback_provider *p = current(fb, req);
    uint8_t provider = req->order[req->cur];
    fb_time_us deadline_us = req->deadline_us;

    if (now_us >= deadline_us) {
        finish(fb, req, FB_STOP_DEADLINE, false, d);
        return;
    }
    untracked(&req->permit, now_us);
    fb_time_us timeout_us = attempt_timeout(p, deadline_us, now_us);
    if (req->stats.attempts == 0)
        req->first_provider = provider;
    else if ((req->attempted & (1u << provider)) != 0)
        req->stats.retries++;
    else
        req->stats.fallbacks++;
    req->fresh_group = false;
    req->attempted = (uint8_t)(req->attempted | (1u << provider));
    req->stats.attempts++;
    req->last_provider = provider;
    req->retry.start_us = req->start_us;
    req->phase = PHASE_ATTEMPT;
    req->detached = false;

    decision(req, FB_ACT_ATTEMPT, provider, d);
    d->via_fallback = provider != req->order[0]; /* decision()'s, with an attempt counted */
    d->timeout_us = timeout_us;
    d->resume = req->resume;
}

/* Fresh retries; the budget's refund still covers the request's last retry, a held slot stays. */
static void fresh_retries(fb_fallback_request *req, fb_time_us now_us) {
    uint32_t withdrawn = req->retry.budget_withdrawn;
    bool held = req->retry.budget_held;
    fb_retry_begin(&req->retry, now_us);
    req->retry.budget_withdrawn = withdrawn;
    req->retry.budget_held = held;
}

/* Provider order[i]'s window rules it out for this request (too small, or below the floor). */
static bool window_skips(const fb_fallback *fb, const fb_fallback_request *req, uint32_t i) {
    uint32_t window = fb->cfg.providers[req->order[i]].context_window;
    return window != 0 &&
           (window <= req->window_floor || (fb->cfg.context_check && req->tokens_needed > window));
}

/*
 * Try the provider at pos and those after it, each one fresh, until a decision. `lean` (a
 * constant) when fb->lean: send_at's lean way, inline (begin_lean: a request's first attempt;
 * its retries and fallbacks take advance(), the same steps with the limiters asked for).
 */
__attribute__((always_inline)) static inline void advance_at(const fb_fallback *fb,
                                                             fb_fallback_request *req,
                                                             fb_time_us now_us,
                                                             fb_fallback_decision *d, bool lean) {
    for (; req->pos < req->order_len; req->pos++) {
        req->cur = req->pos;
        if (window_skips(fb, req, req->pos)) {
            req->skipped |= SKIP_CONTEXT;
            continue;
        }
        fresh_retries(req, now_us);
        if (lean) {
            if (send_at(fb, req, false, now_us, d, true)) return;
            continue;
        }
        if (fb->plain) { /* nothing to ask: a request's first attempt, as again()'s retry */
            send_plain(fb, req, now_us, d);
            return;
        }
        if (send(fb, req, false, now_us, d)) return;
    }
    exhausted(fb, req, d);
}

static void advance(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                    fb_fallback_decision *d) {
    advance_at(fb, req, now_us, d, false);
}

/* again() in a plain engine with nothing reserved: the current provider, sent at once. */
static inline void again_plain(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                               fb_fallback_decision *d) {
    req->phase = PHASE_IDLE;
    req->cur = req->pos;
    send_plain(fb, req, now_us, d);
}

/*
 * Continue with the current provider (a retry); skipped, go on down the chain.
 * Always inlined, as wait_retry() is: a retry at once (a storm's every attempt)
 * goes fb_fallback_result -> wait_retry -> again, two calls of five arguments.
 */
__attribute__((always_inline)) static inline void again(const fb_fallback *fb,
                                                        fb_fallback_request *req, bool reserved,
                                                        fb_time_us now_us,
                                                        fb_fallback_decision *d) {
    if (fb->plain && !reserved) {
        again_plain(fb, req, now_us, d);
        return;
    }
    req->phase = PHASE_IDLE;
    req->cur = req->pos;
    if (send(fb, req, reserved, now_us, d)) return;
    req->pos++;
    advance(fb, req, now_us, d);
}

/* Leave the current provider after its failure `c`. */
static void fall_back(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                      fb_time_us now_us, fb_fallback_decision *d) {
    if (now_us >= req->deadline_us) {
        finish(fb, req, FB_STOP_DEADLINE, false, d);
        return;
    }
    uint32_t failed_window = current(fb, req)->context_window;
    req->pos++;
    if (c->outcome == FB_OUT_CONTEXT_LENGTH) {
        /* Only a larger (or unknown) window can take this prompt; P's unknown rules none out. */
        bool any = false;
        for (uint32_t i = req->pos; i < req->order_len && !any; i++) {
            uint32_t w = fb->cfg.providers[req->order[i]].context_window;
            any = w == 0 || w > failed_window;
        }
        if (!any) {
            finish(fb, req, FB_STOP_CONTEXT_LENGTH, fb->cfg.degraded, d);
            return;
        }
        if (failed_window > req->window_floor) req->window_floor = failed_window;
    }
    advance(fb, req, now_us, d);
}

/* ---- groups (FB_PICK_RANDOM, FB_PICK_ROUND_ROBIN) ---- */

static void advance_group(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                          fb_fallback_decision *d);

/* The end (exclusive) of the group that starts at position `from` of the order. */
static uint8_t group_end(const fb_fallback *fb, const fb_fallback_request *req, uint32_t from) {
    uint8_t g = fb->cfg.group[req->order[from]];
    uint32_t i = from + 1;
    while (i < req->order_len && fb->cfg.group[req->order[i]] == g) i++;
    return (uint8_t)i;
}

/* Would the provider's breaker admit now? Peeks: changes nothing. */
static bool admits(const fb_fallback_provider *p, fb_time_us now_us) {
    if (p->port.allow != NULL) return p->port.admits == NULL || p->port.admits(p->port.ctx, now_us);
    return p->breaker == NULL || fb_breaker_admits(p->breaker, now_us);
}

/* context_check: the provider's window takes the request. */
static bool fits(const fb_fallback *fb, const fb_fallback_request *req, uint8_t provider) {
    uint32_t w = fb->cfg.providers[provider].context_window;
    return !(fb->cfg.context_check && w != 0 && req->tokens_needed > w);
}

static bool member_ready(const fb_fallback *fb, const fb_fallback_request *req, uint32_t i,
                         fb_time_us now_us) {
    uint8_t p = req->order[i];
    return fits(fb, req, p) && admits(&fb->cfg.providers[p], now_us);
}

/* Does a member of the current group admit now (LiteLLM's healthy deployments)? */
static bool any_admits(const fb_fallback *fb, const fb_fallback_request *req, fb_time_us now_us) {
    for (uint32_t i = req->pos; i < req->gend; i++)
        if (member_ready(fb, req, i, now_us)) return true;
    return false;
}

static double weight_of(const fb_fallback *fb, uint8_t provider) {
    uint32_t w = fb->cfg.weight[provider];
    return w == 0 ? 1.0 : (double)w;
}

/* The position of the member to try, among those ready and not in `tried`; -1: none. */
static int pick(const fb_fallback *fb, const fb_fallback_request *req, uint32_t tried,
                fb_time_us now_us) {
    uint8_t cand[FB_FALLBACK_PROVIDERS_MAX];
    uint32_t n = 0;
    double total = 0.0;
    for (uint32_t i = req->pos; i < req->gend; i++) {
        if ((tried & (1u << i)) || !member_ready(fb, req, i, now_us)) continue;
        cand[n++] = (uint8_t)i;
        total += weight_of(fb, req->order[i]);
    }
    if (n == 0) return -1;
    if (fb->cfg.pick == FB_PICK_ROUND_ROBIN)
        return fb->cfg.rr_cursor == NULL ? cand[0] : cand[(*fb->cfg.rr_cursor)++ % n];
    if (n == 1 || fb->cfg.rng == NULL) return cand[0];
    /* one draw, weighted (LiteLLM simple_shuffle: random.choices by weight) */
    double x = fb_rng_uniform(fb->cfg.rng) * total;
    for (uint32_t k = 0; k + 1 < n; k++) {
        x -= weight_of(fb, req->order[cand[k]]);
        if (x < 0.0) return cand[k];
    }
    return cand[n - 1];
}

/* One attempt in the current group: members picked until one is sent; false when none is. */
static bool send_group(const fb_fallback *fb, fb_fallback_request *req, bool reserved,
                       fb_time_us now_us, fb_fallback_decision *d) {
    uint32_t tried = 0;
    if (reserved) { /* after a limiter wait: the member chosen then */
        if (send(fb, req, true, now_us, d)) return true;
        tried |= 1u << req->cur;
    }
    for (;;) {
        int i = pick(fb, req, tried, now_us);
        if (i < 0) {
            req->skipped |= SKIP_BREAKER;
            return false;
        }
        req->cur = (uint8_t)i;
        if (send(fb, req, false, now_us, d)) return true;
        tried |= 1u << (uint32_t)i;
    }
}

/* A retry after `delay_us` (0: at once) of the current provider, or of the current group. */
__attribute__((always_inline)) static inline void wait_retry(const fb_fallback *fb,
                                                             fb_fallback_request *req,
                                                             fb_time_us delay_us, fb_time_us now_us,
                                                             fb_fallback_decision *d);

static void fall_back_group(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                            fb_time_us now_us, fb_fallback_decision *d);

/*
 * LiteLLM's loop when no deployment of the group admits: the attempt raises
 * without a call, counts, and the loop sleeps its backoff (healthy_gate);
 * with judge_first the sleep reads the group's first failure, and so does the
 * fallback once the retries are spent.
 */
static void none_admit(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                       fb_fallback_decision *d) {
    bool first = fb->cfg.judge_first == FB_ON && req->retry.attempt > 0;
    if (fb->cfg.healthy_gate == FB_ON && fb->cfg.retry != NULL) {
        fb_class c = {.outcome = FB_OUT_REJECTED, .retryable = true, .may_fallback = true};
        fb_retry_decision r = fb_retry_next(fb->cfg.retry, &req->retry, &c,
                                            first ? req->group_first_hint : FB_TIME_NONE,
                                            fb->cfg.budget, fb->cfg.rng, now_us);
        if (r.retry) {
            wait_retry(fb, req, r.delay_us, now_us, d);
            d->retry = false; /* nothing was sent */
            return;
        }
        if (r.reason == FB_GIVEUP_DEADLINE) {
            finish(fb, req, FB_STOP_DEADLINE, false, d);
            return;
        }
    }
    if (first) {
        if (!req->group_first.may_fallback)
            stop_on(fb, req, req->group_first.outcome, d);
        else
            fall_back_group(fb, req, &req->group_first, now_us, d);
        return;
    }
    req->pos = req->gend;
    advance_group(fb, req, now_us, d);
}

/* A retry in the current group. */
static void again_group(const fb_fallback *fb, fb_fallback_request *req, bool reserved,
                        fb_time_us now_us, fb_fallback_decision *d) {
    req->phase = PHASE_IDLE;
    if (send_group(fb, req, reserved, now_us, d)) return;
    none_admit(fb, req, now_us, d);
}

/* Each group from pos on, with fresh retries, until one sends an attempt. */
static void advance_group(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                          fb_fallback_decision *d) {
    while (req->pos < req->order_len) {
        req->gend = group_end(fb, req, req->pos);
        req->fresh_group = true;
        fresh_retries(req, now_us);
        if (send_group(fb, req, false, now_us, d)) return;
        req->pos = req->gend;
    }
    exhausted(fb, req, d);
}

/* Leave the current group after its failure `c`: the next group, or an alternative chain. */
static void fall_back_group(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                            fb_time_us now_us, fb_fallback_decision *d) {
    if (now_us >= req->deadline_us) {
        finish(fb, req, FB_STOP_DEADLINE, false, d);
        return;
    }
    const fb_fallback_chain *alt = c->outcome == FB_OUT_CONTEXT_LENGTH ? &fb->cfg.on_context_length
                                   : c->outcome == FB_OUT_POLICY       ? &fb->cfg.on_policy
                                                                       : NULL;
    if (alt != NULL && alt->set && !req->switched) {
        if (alt->len == 0) {
            stop_on(fb, req, c->outcome, d);
            return;
        }
        req->switched = true;
        for (uint32_t i = 0; i < alt->len; i++) req->order[i] = alt->order[i];
        req->order_len = (uint8_t)alt->len;
        req->pos = 0;
        advance_group(fb, req, now_us, d);
        return;
    }
    req->pos = req->gend;
    advance_group(fb, req, now_us, d);
}

__attribute__((always_inline)) static inline void wait_retry(const fb_fallback *fb,
                                                             fb_fallback_request *req,
                                                             fb_time_us delay_us, fb_time_us now_us,
                                                             fb_fallback_decision *d) {
    req->retried = true;
    if (delay_us <= 0 && !fb->cfg.wait_always) {
        if (grouped(fb))
            again_group(fb, req, false, now_us, d);
        else
            again(fb, req, false, now_us, d);
        return;
    }
    req->phase = PHASE_WAIT_RETRY;
    decision_at(fb, req, FB_ACT_WAIT, req->order[req->cur], d);
    d->delay_us = delay_us > 0 ? delay_us : 0;
    d->retry = true;
}

/* A request that ended gives back the retry slot it held (CONCURRENCY budgets). */
static void settle(const fb_fallback *fb, fb_fallback_request *req, const fb_fallback_decision *d) {
    if (d->action == FB_ACT_DONE && fb->cfg.budget != NULL)
        fb_budget_release(fb->cfg.budget, &req->retry);
}

/* result() or resume() out of turn: a programming error. End the request, keep no permit. */
static void misuse(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us,
                   fb_fallback_decision *d) {
    fb_fallback_cancel(fb, req, now_us);
    finish(fb, req, FB_STOP_EXHAUSTED, false, d);
}

/*
 * A request starts: its state fresh, its order copied (the engine's, or the caller's checked),
 * the budget told. False when the caller's order is bad (*d: the request's end).
 */
__attribute__((always_inline)) static inline bool
start(const fb_fallback *fb, fb_fallback_request *req, uint32_t tokens_needed, const uint8_t *order,
      uint32_t order_len, fb_time_us now_us, fb_fallback_decision *d) {
    *req = (fb_fallback_request){0};
    req->last_outcome = (uint8_t)FB_OUT_SUCCESS;
    req->tokens_needed = tokens_needed;
    req->start_us = now_us;
    req->deadline_us = deadline_after(fb, now_us);
    if (order == NULL) { /* the engine's own, checked at init */
        memcpy(req->order, fb->cfg.order, sizeof req->order);
        order_len = fb->cfg.order_len;
    } else if (!copy_order(req->order, order, order_len, fb->cfg.provider_count)) {
        /* A bad override is a programming error: end at once, no degraded answer (order_len
         * stays 0: what was copied of it is never read). */
        finish(fb, req, FB_STOP_EXHAUSTED, false, d);
        return false;
    }
    req->order_len = (uint8_t)order_len;
    if (fb->cfg.budget != NULL) fb_budget_on_request(fb->cfg.budget, now_us);
    return true;
}

/* fb_fallback_begin in a lean engine, with advance()'s steps and send_at's lean way inline. Out
 * of line: in the public function, gcc's registers cost a plain engine's begin 4 instructions. */
static __attribute__((noinline)) fb_fallback_decision
begin_lean(const fb_fallback *fb, fb_fallback_request *req, uint32_t tokens_needed,
           const uint8_t *order, uint32_t order_len, fb_time_us now_us) {
    fb_fallback_decision d;
    if (start(fb, req, tokens_needed, order, order_len, now_us, &d))
        advance_at(fb, req, now_us, &d, true);
    return d;
}

fb_fallback_decision fb_fallback_begin(const fb_fallback *fb, fb_fallback_request *req,
                                       uint32_t tokens_needed, const uint8_t *order,
                                       uint32_t order_len, fb_time_us now_us) {
    if (fb->lean) return begin_lean(fb, req, tokens_needed, order, order_len, now_us);
    fb_fallback_decision d;
    if (!start(fb, req, tokens_needed, order, order_len, now_us, &d)) return d;
    if (!grouped(fb)) {
        advance(fb, req, now_us, &d);
        return d;
    }
    req->first_group = fb->cfg.group[req->order[0]];
    advance_group(fb, req, now_us, &d);
    settle(fb, req, &d);
    return d;
}

/* Failure `c` is not retried (why: the retry policy's reason): the request ends, or falls back. */
static void no_retry(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                     fb_giveup why, fb_time_us now_us, fb_fallback_decision *d) {
    if (why == FB_GIVEUP_DEADLINE)
        finish(fb, req, FB_STOP_DEADLINE, false, d);
    else if (!c->may_fallback)
        stop_on(fb, req, c->outcome, d);
    else if (grouped(fb))
        fall_back_group(fb, req, c, now_us, d);
    else
        fall_back(fb, req, c, now_us, d);
}

/* The retry or fallback after failure `c`. */
static void after_failure(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                          fb_time_us hint_us, fb_time_us now_us, fb_fallback_decision *d) {
    /* LiteLLM: a group's first failure decides; the loop retries whatever fails after it */
    fb_class first;
    if (grouped(fb) && fb->cfg.judge_first == FB_ON) {
        if (req->retry.attempt == 0) {
            req->group_first = *c;
            req->group_first_hint = hint_us;
        } else {
            first = req->group_first;
            first.retryable = true;
            hint_us = req->group_first_hint;
            c = &first;
        }
    }
    /* LiteLLM: a group's first failure is not retried when no deployment is healthy */
    bool gated = grouped(fb) && fb->cfg.healthy_gate == FB_ON && req->retry.attempt == 0 &&
                 !any_admits(fb, req, now_us);
    if (c->retryable && fb->cfg.retry != NULL && !gated) {
        fb_retry_decision r = fb_retry_next(fb->cfg.retry, &req->retry, c, hint_us, fb->cfg.budget,
                                            fb->cfg.rng, now_us);
        if (r.retry) {
            fb_time_us delay = r.delay_us;
            if (grouped(fb) && fb->cfg.zero_wait_if_healthy == FB_ON && req->gend - req->pos > 1 &&
                any_admits(fb, req, now_us))
                delay = 0;
            wait_retry(fb, req, delay, now_us, d);
            return;
        }
        no_retry(fb, req, c, r.reason, now_us, d);
        return;
    }
    no_retry(fb, req, c, FB_GIVEUP_NOT_RETRYABLE, now_us, d);
}

/*
 * result_full's steps for a success in a lean engine (fb->lean) whose attempt's permits the
 * request holds: the budget's, the breaker's report, the success. A tuned client's every
 * answer but a few comes this way. Inline in result_full, not in fb_fallback_result: there
 * gcc lays result_plain's way out worse (naive: 1 instruction an attempt).
 */
static inline fb_fallback_decision result_lean_success(const fb_fallback *fb,
                                                       fb_fallback_request *req, const fb_class *c,
                                                       fb_time_us hint_us, fb_time_us now_us) {
    fb_budget *budget = fb->cfg.budget;
    req->phase = PHASE_IDLE;
    req->last_outcome = (uint8_t)FB_OUT_SUCCESS;
    if (budget != NULL) {
        fb_budget_attempt(budget, false);
        if (req->retry.budget_held) fb_budget_release(budget, &req->retry);
    }
    const fb_fallback_provider *p = current(fb, req);
    if (p->breaker != NULL) breaker_tell(p, &req->permit, c->effect, c, hint_us, now_us);
    if (budget != NULL) fb_budget_on_success(budget, &req->retry);
    return finished_inline(fb, req, FB_STOP_SUCCESS, false); /* a call: 10 instructions */
}

/* fb_fallback_result's steps (fallback.h); out of line, so that result_plain, inline in the
 * public function, and result_lean_success make their answers without the register saves of
 * these. */
static __attribute__((noinline)) fb_fallback_decision
result_steps(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c, fb_time_us hint_us,
             fb_time_us now_us) {
    fb_fallback_decision d;
    if (req->phase != PHASE_ATTEMPT || c == NULL) {
        misuse(fb, req, now_us, &d);
        return d;
    }
    req->phase = PHASE_IDLE;
    req->last_outcome = (uint8_t)c->outcome;
    if (fb->cfg.budget != NULL) {
        /* Envoy resetRetry(): the retry that led here is over */
        fb_budget_attempt(fb->cfg.budget, false);
        if (req->retry.budget_held) fb_budget_release(fb->cfg.budget, &req->retry); /* else none */
    }
    if (!req->detached) {
        const fb_fallback_provider *p = current(fb, req);
        breaker_record(p, &req->permit, c->effect, c, hint_us, now_us);
        if (p->conclimit != NULL)
            climit_end(p, &req->climit, fb_conclimit_result_of(p->conclimit, c->outcome), now_us);
    }

    if (c->outcome == FB_OUT_SUCCESS) {
        if (fb->cfg.budget != NULL) fb_budget_on_success(fb->cfg.budget, &req->retry);
        return finished(fb, req, FB_STOP_SUCCESS, false);
    }
    if (c->after_first_token) {
        if (fb->cfg.stream == FB_STREAM_FAIL) {
            finish(fb, req, FB_STOP_STREAM_BROKEN, false, &d);
            return d;
        }
        /* The user has seen part of the answer: every later attempt continues it. */
        if (fb->cfg.stream == FB_STREAM_RESUME) req->resume = true;
    }
    after_failure(fb, req, c, hint_us, now_us, &d);
    settle(fb, req, &d);
    return d;
}

/* fb_fallback_result but for result_plain's answers: a lean engine's success, else the steps. */
static __attribute__((noinline)) fb_fallback_decision
result_full(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c, fb_time_us hint_us,
            fb_time_us now_us) {
    if (fb->lean && req->phase == PHASE_ATTEMPT && c != NULL && c->outcome == FB_OUT_SUCCESS &&
        !req->detached)
        return result_lean_success(fb, req, c, hint_us, now_us);
    return result_steps(fb, req, c, hint_us, now_us);
}

/*
 * fb_fallback_result's steps for an attempt that ended before its first token in an engine with
 * nothing to ask around an attempt (fb->plain): no budget to charge, breaker to tell or limit
 * to give back; with a plain retry policy (nothing to decide but the count) a failure's retry
 * is counted inline and sent at once. A storm's every attempt, and a healthy plain engine's
 * every success, come this way.
 */
static inline void result_plain(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                                fb_time_us hint_us, fb_time_us now_us, fb_fallback_decision *d) {
    req->phase = PHASE_IDLE;
    req->last_outcome = (uint8_t)c->outcome;
    if (c->outcome == FB_OUT_SUCCESS) {
        finish(fb, req, FB_STOP_SUCCESS, false, d);
        return;
    }
    if (fb->retry_plain) {
        fb_retry_decision r = {.reason = FB_GIVEUP_NOT_RETRYABLE};
        if (c->retryable) r = fb_retry_next_plain(fb->cfg.retry, &req->retry, c);
        if (r.retry && !fb->cfg.wait_always) {
            req->retried = true;
            again_plain(fb, req, now_us, d);
        } else if (r.retry) {
            wait_retry(fb, req, 0, now_us, d);
        } else {
            no_retry(fb, req, c, r.reason, now_us, d);
        }
    } else {
        after_failure(fb, req, c, hint_us, now_us, d);
    }
}

void fb_fallback_result_into(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                             fb_time_us hint_us, fb_time_us now_us, fb_fallback_decision *d) {
    if (fb->plain && req->phase == PHASE_ATTEMPT && c != NULL && !c->after_first_token)
        result_plain(fb, req, c, hint_us, now_us, d);
    else
        *d = result_full(fb, req, c, hint_us, now_us);
}

fb_fallback_decision fb_fallback_result(const fb_fallback *fb, fb_fallback_request *req,
                                        const fb_class *c, fb_time_us hint_us, fb_time_us now_us) {
    fb_fallback_decision d;
    fb_fallback_result_into(fb, req, c, hint_us, now_us, &d);
    return d;
}

/* result_plain's way, read (fallback.h): the retries at once it would make for failures of c. */
uint32_t fb_fallback_retries_at_once(const fb_fallback *fb, const fb_fallback_request *req,
                                     const fb_class *c, fb_time_us *until_us,
                                     fb_time_us *timeout_us) {
    *until_us = req->deadline_us;
    *timeout_us = current(fb, req)->attempt_timeout_us;
    if (!fb->plain || !fb->retry_plain || fb->cfg.wait_always || req->phase != PHASE_ATTEMPT)
        return 0;
    if (c == NULL || c->after_first_token || c->outcome == FB_OUT_SUCCESS || !c->retryable)
        return 0;
    if (req->cur != req->pos) return 0; /* again_plain's attempt goes to order[pos] */
    const fb_retry_state *st = &req->retry;
    uint32_t max = st->attempts_max;
    if (st->attempt == 0 && c->attempts > 0)
        max = c->attempts < FB_RETRY_ATTEMPTS_MAX ? c->attempts : FB_RETRY_ATTEMPTS_MAX;
    if (max == 0) max = fb->cfg.retry->cfg.attempts;
    /* fb_retry_next_plain counts the failure, then retries while the count is below max */
    return max > st->attempt + 1 ? max - st->attempt - 1 : 0;
}

fb_fallback_decision fb_fallback_resume(const fb_fallback *fb, fb_fallback_request *req,
                                        fb_time_us now_us) {
    fb_fallback_decision d;
    bool limit = req->phase == PHASE_WAIT_LIMIT;
    if (req->phase != PHASE_WAIT_RETRY && !limit) {
        misuse(fb, req, now_us, &d);
        return d;
    }
    if (grouped(fb))
        again_group(fb, req, limit, now_us, &d);
    else
        again(fb, req, limit, now_us, &d);
    settle(fb, req, &d);
    return d;
}

void fb_fallback_cancel(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us) {
    /* A cancelled attempt counts as its breaker's cancelled_as (default: nothing; frees a probe).
     */
    if (req->phase == PHASE_ATTEMPT && !req->detached) {
        breaker_record(current(fb, req), &req->permit, FB_EFFECT_CANCELLED, NULL, FB_TIME_NONE,
                       now_us);
        climit_end(current(fb, req), &req->climit, FB_CONCLIMIT_IGNORED, now_us);
    }
    if (req->phase == PHASE_WAIT_LIMIT && current(fb, req)->ratelimit != NULL)
        fb_ratelimit_release(current(fb, req)->ratelimit, req->tokens_needed, now_us);
    if (fb->cfg.budget != NULL) {
        if (req->phase == PHASE_ATTEMPT) fb_budget_attempt(fb->cfg.budget, false);
        fb_budget_release(fb->cfg.budget, &req->retry);
    }
    req->phase = PHASE_DONE;
}

/* ---- several attempts at once (hedging) ---- */

void fb_fallback_detach(fb_fallback_request *req, fb_fallback_permits *out) {
    *out = (fb_fallback_permits){0};
    if (req->phase != PHASE_ATTEMPT || req->detached) return;
    out->provider = req->last_provider;
    out->breaker = req->permit;
    out->climit = req->climit;
    out->held = true;
    req->detached = true;
    req->climit.held = false;
}

/* The limiter (a wait refuses), the concurrency limit and the breaker for one more attempt. */
static bool admit_extra(const fb_fallback_provider *p, uint32_t tokens, fb_time_us now_us,
                        fb_fallback_permits *out) {
    uint8_t skip = 0;
    if (p->ratelimit != NULL) {
        fb_ratelimit_decision rl = fb_ratelimit_acquire(p->ratelimit, tokens, now_us);
        if (rl.admitted && rl.wait_us > 0) fb_ratelimit_release(p->ratelimit, tokens, now_us);
        if (!rl.admitted || rl.wait_us > 0) return false;
    }
    *out = (fb_fallback_permits){0};
    return admit(p, tokens, now_us, &out->climit, &out->breaker, &skip);
}

bool fb_fallback_hedge(const fb_fallback *fb, const fb_fallback_request *req, bool next,
                       fb_time_us now_us, fb_fallback_permits *out, fb_time_us *timeout_us) {
    *out = (fb_fallback_permits){0};
    fb_time_us deadline_us = req->deadline_us;
    if (req->phase != PHASE_ATTEMPT || now_us >= deadline_us) return false;
    for (uint32_t i = req->pos + (next ? 1u : 0u); i < req->order_len; i++) {
        const fb_fallback_provider *p = &fb->cfg.providers[req->order[i]];
        if (next && window_skips(fb, req, i)) continue;
        if (admit_extra(p, req->tokens_needed, now_us, out)) {
            out->provider = req->order[i];
            out->held = true;
            *timeout_us = attempt_timeout(p, deadline_us, now_us);
            return true;
        }
        if (!next) break;
    }
    return false;
}

void fb_fallback_end(const fb_fallback *fb, fb_fallback_permits *p, const fb_class *c,
                     fb_time_us hint_us, fb_time_us now_us) {
    if (p == NULL || !p->held) return;
    const fb_fallback_provider *fp = &fb->cfg.providers[p->provider];
    p->held = false;
    breaker_record(fp, &p->breaker, c ? c->effect : FB_EFFECT_CANCELLED, c,
                   c ? hint_us : FB_TIME_NONE, now_us);
    if (fp->conclimit != NULL)
        climit_end(fp, &p->climit,
                   c ? fb_conclimit_result_of(fp->conclimit, c->outcome) : FB_CONCLIMIT_IGNORED,
                   now_us);
}

const fb_fallback_request_stats *fb_fallback_request_stats_get(const fb_fallback_request *req) {
    return &req->stats;
}
