/*
 * retry.c - when to try again, and how long to wait first.
 *
 * fb_retry_next() is a pure decision over (policy, per-request state, the
 * failure's class, the server's hint, budget, rng, now). Every check that can
 * refuse a retry runs before anything is charged, except the budget's own
 * failure accounting, which gRPC defines per failure, not per retry.
 */
#include "retry.h"

#include <math.h>

/* Growth beyond cap * 2^54 cannot change a jittered-then-capped result (see raw_backoff). */
#define JITTER_CEILING 18014398509481984.0 /* 2^54 */

static bool valid_double(double x) {
    return x == x && x < 1e300 && x > -1e300;
}

static bool enums_valid(const fb_retry_config *c) {
    return (unsigned)c->backoff <= FB_BACKOFF_NONE &&
           (unsigned)c->jitter <= FB_JITTER_DECORRELATED_V2 &&
           (unsigned)c->cap_order <= FB_CAP_BEFORE_JITTER_EXACT &&
           (unsigned)c->retry_after <= FB_RETRY_AFTER_AS_IS &&
           (unsigned)c->above_max <= FB_ABOVE_MAX_BACKOFF &&
           (unsigned)c->rounding <= FB_ROUND_NEAREST && (unsigned)c->ignore_zero_hint <= FB_OFF &&
           (unsigned)c->hint_whole_seconds <= FB_OFF && (unsigned)c->hint_jitter <= FB_OFF &&
           (unsigned)c->hint_rate_limited_only <= FB_OFF &&
           (unsigned)c->hint_zeroes_backoff <= FB_OFF &&
           (unsigned)c->rate_limit_needs_hint <= FB_OFF && (unsigned)c->retry_rejected <= FB_OFF &&
           (unsigned)c->resolution_delay_only <= FB_OFF;
}

/* A value in microseconds rounded to the configured resolution (none: unchanged). */
static double quantise(const fb_retry_config *c, double v) {
    if (c->resolution_us <= 0) return v;
    double r = (double)c->resolution_us;
    return (c->rounding == FB_ROUND_NEAREST ? floor(v / r + 0.5) : floor(v / r)) * r;
}

/* One growth step of the exponential: exact, or rounded each time (resilience4j). */
static double grow_step(const fb_retry_config *c, double d) {
    return c->resolution_us > 0 && c->resolution_delay_only != FB_ON
               ? quantise(c, d * c->multiplier)
               : d * c->multiplier;
}

/* Zero -> default, then range checks (the zero rule, fb.h). */
static int normalise(fb_retry_config *c) {
    if (c->attempts > 0 && c->retries > 0) return FB_EINVAL; /* one count, not two */
    if (c->retries >= FB_RETRY_ATTEMPTS_MAX) return FB_ERANGE;
    if (c->retries > 0) c->attempts = c->retries + 1;
    if (c->attempts == 0) c->attempts = 3;
    if (c->attempts > FB_RETRY_ATTEMPTS_MAX) return FB_ERANGE;
    if (!enums_valid(c)) return FB_EINVAL;
    if (c->base_us < 0 || c->delay_us_max < 0 || c->retry_after_us_max < 0 ||
        c->attempt_timeout_us < 0 || c->deadline_us < 0 ||
        (c->jitter_us < 0 && c->jitter_us != FB_TIME_NONE) || c->resolution_us < 0 ||
        c->delay_us_min < 0 || c->retry_after_total_us_max < 0)
        return FB_EINVAL;
    if (!valid_double(c->multiplier) || !valid_double(c->jitter_fraction) ||
        !valid_double(c->retry_after_jitter))
        return FB_EINVAL;
    if (c->retry_after_jitter < 0.0 || c->retry_after_jitter > 10.0) return FB_ERANGE;
    if (c->base_us == 0) c->base_us = 500 * FB_US_PER_MS;
    if (c->multiplier == 0.0) c->multiplier = 2.0;
    if (c->multiplier < 1.0) return FB_ERANGE; /* a shrinking backoff is not a backoff */
    if (c->delay_us_max == 0) c->delay_us_max = 60 * FB_US_PER_S;
    if (c->jitter_fraction == 0.0) c->jitter_fraction = 0.25;
    if (c->jitter_fraction < 0.0 || c->jitter_fraction > 1.0) return FB_ERANGE;
    if (c->jitter_us == 0) c->jitter_us = FB_US_PER_S;
    if (c->retry_after_us_max == 0) c->retry_after_us_max = 60 * FB_US_PER_S;
    if (c->ignore_zero_hint == FB_DEFAULT) c->ignore_zero_hint = FB_OFF;
    if (c->hint_whole_seconds == FB_DEFAULT) c->hint_whole_seconds = FB_OFF;
    if (c->hint_jitter == FB_DEFAULT) c->hint_jitter = FB_OFF;
    if (c->hint_rate_limited_only == FB_DEFAULT) c->hint_rate_limited_only = FB_OFF;
    if (c->hint_zeroes_backoff == FB_DEFAULT) c->hint_zeroes_backoff = FB_OFF;
    if (c->rate_limit_needs_hint == FB_DEFAULT) c->rate_limit_needs_hint = FB_OFF;
    if (c->backoff_hold >= FB_RETRY_ATTEMPTS_MAX) return FB_ERANGE;
    return FB_OK;
}

int fb_retry_config_effective(fb_retry_config *cfg) {
    return cfg ? normalise(cfg) : FB_EINVAL;
}

int fb_retry_policy_init(fb_retry_policy *p, const fb_retry_config *cfg) {
    static const fb_retry_config defaults = {0};
    if (p == NULL) return FB_EINVAL;
    if (cfg == NULL) cfg = &defaults;
    fb_retry_config c = *cfg;
    int rc = normalise(&c);
    if (rc != FB_OK) return rc;

    p->cfg = c;
    /*
     * The retry number from which the exponential backoff is the cap, found
     * with the same steps fb_retry_backoff() takes, so that calls past it
     * cost nothing and calls before it never loop past it.
     */
    double cap = (double)c.delay_us_max, d = quantise(&c, (double)c.base_us);
    uint32_t n = 1;
    if (c.multiplier > 1.0) {
        while (d < cap && n < FB_RETRY_ATTEMPTS_MAX) {
            d = grow_step(&c, d);
            n++;
        }
    }
    p->cap_retry = d >= cap ? n : UINT32_MAX;
    /* A retry is then at once or not at all: no delay to compute, no draw, no header to read
     * (ignored, and rate_limit_needs_hint does not ask for one), no deadline to check. */
    p->plain = c.backoff == FB_BACKOFF_NONE && c.retry_after == FB_RETRY_AFTER_IGNORE &&
               c.rate_limit_needs_hint != FB_ON && c.deadline_us == 0;
    return FB_OK;
}

/* base * multiplier^(n-1), one step at a time, stopping at `limit`. */
static double grow(const fb_retry_config *c, uint32_t n, double limit) {
    double d =
        c->resolution_delay_only == FB_ON ? (double)c->base_us : quantise(c, (double)c->base_us);
    for (uint32_t k = 1; k < n && d < limit; k++) d = grow_step(c, d);
    return d;
}

/* The retry number the formulas see: backoff_hold leading retries wait the base. */
static uint32_t held(const fb_retry_config *c, uint32_t n) {
    if (n == 0) n = 1;
    if (n > FB_RETRY_ATTEMPTS_MAX) n = FB_RETRY_ATTEMPTS_MAX;
    return n > c->backoff_hold ? n - c->backoff_hold : 1;
}

/* The formula's delay, uncapped below the cap: base, base * n, base * m^(n-1). */
static fb_time_us formula(const fb_retry_policy *p, uint32_t n) {
    const fb_retry_config *c = &p->cfg;
    fb_time_us cap = c->delay_us_max;
    switch (c->backoff) {
    case FB_BACKOFF_CONSTANT:
        return c->base_us < cap ? c->base_us : cap;
    case FB_BACKOFF_LINEAR:
        return c->base_us > cap / (fb_time_us)n ? cap : c->base_us * (fb_time_us)n;
    case FB_BACKOFF_EXPONENTIAL:
    default:
        if (n >= p->cap_retry) return cap;
        double d = grow(c, n, (double)cap);
        return d >= (double)cap ? cap : (fb_time_us)d;
    }
}

fb_time_us fb_retry_backoff(const fb_retry_policy *p, uint32_t n) {
    const fb_retry_config *c = &p->cfg;
    if (c->backoff == FB_BACKOFF_NONE) return 0;
    fb_time_us d = formula(p, held(c, n));
    /* the floor first, then the cap: LiteLLM's min(max(d, retry_after), 8 s) */
    if (d < c->delay_us_min) d = c->delay_us_min;
    return d < c->delay_us_max ? d : c->delay_us_max;
}

/*
 * The uncapped backoff, for FB_CAP_AFTER_JITTER. It stops growing at
 * cap * 2^54: a uniform draw with 53 bits is either 0 or at least 2^-53, so
 * past that point every jitter gives 0 or a value above twice the cap, the
 * same as with the true (possibly infinite) value once clamped.
 */
static double raw_backoff(const fb_retry_policy *p, uint32_t n) {
    const fb_retry_config *c = &p->cfg;
    n = held(c, n);
    double d;
    switch (c->backoff) {
    case FB_BACKOFF_NONE:
        return 0.0;
    case FB_BACKOFF_CONSTANT:
        d = (double)c->base_us;
        break;
    case FB_BACKOFF_LINEAR:
        d = (double)c->base_us * (double)n;
        break;
    case FB_BACKOFF_EXPONENTIAL:
    default:
        d = grow(c, n, (double)c->delay_us_max * JITTER_CEILING);
        break;
    }
    return d < (double)c->delay_us_min ? (double)c->delay_us_min : d;
}

static fb_time_us clamp_to(double v, fb_time_us cap) {
    if (v >= (double)cap) return cap;
    return v > 0.0 ? (fb_time_us)v : 0;
}

/*
 * Polly's DecorrelatedJitterBackoffV2 (also cockatiel's generator): for the
 * retry with 0-based index k, t = k + u and next = m^t * tanh(sqrt(4 t)); the
 * delay is (next - prev) / 1.4 * base, and next becomes prev.
 */
static double decorrelated_v2(const fb_retry_config *c, uint32_t n, double u, double *state) {
    double t = (double)(n - 1) + u;
    double next = pow(c->multiplier, t) * tanh(sqrt(4.0 * t));
    if (!isfinite(next)) {
        *state = next;
        return INFINITY;
    }
    double v = (next - *state) * (1.0 / 1.4) * (double)c->base_us;
    *state = next;
    return v > 0.0 ? v : 0.0;
}

/* The jitters that shape the backoff d with one draw u. */
static double shaped(const fb_retry_config *c, fb_jitter j, double d, double u, bool before) {
    double f = c->jitter_fraction, cap = (double)c->delay_us_max;
    switch (j) {
    case FB_JITTER_FULL:
        return u * d;
    case FB_JITTER_EQUAL:
        return d / 2.0 + u * (d / 2.0);
    case FB_JITTER_RANDOMIZED: {
        /* resilience4j: min + random * (max - min + 1), at least 1, in units (its whole ms, so
         * that the doubles round as its do) */
        double unit = c->resolution_us > 0 ? (double)c->resolution_us : 1.0;
        double x = d / unit;
        double v = (x - f * x) + u * ((x + f * x) - (x - f * x) + 1.0);
        return (v > 1.0 ? v : 1.0) * unit;
    }
    case FB_JITTER_DOWN:
        return d * (1.0 - f * u);
    case FB_JITTER_UP:
        return (1.0 + f * u) * d;
    case FB_JITTER_ADDITIVE:
        return c->jitter_us > 0 ? d + u * (double)c->jitter_us : d;
    case FB_JITTER_PROPORTIONAL:
    default: {
        double lo = d * (1.0 - f), hi = d * (1.0 + f);
        if (before && hi > cap) hi = cap; /* draw inside the cap, no pile-up */
        if (lo > hi) lo = hi;
        return lo + u * (hi - lo);
    }
    }
}

/*
 * Backoff and jitter for retry number n; draws at most one uniform number,
 * left in *u (-1 when none was drawn).
 */
static fb_time_us delay_with(const fb_retry_policy *p, const fb_retry_state *s, uint32_t n,
                             fb_jitter j, double u, double *v2_state);

static fb_time_us jittered_delay(const fb_retry_policy *p, const fb_retry_state *s, uint32_t n,
                                 fb_rng *rng, double *v2_state, double *u_out) {
    const fb_retry_config *c = &p->cfg;
    *u_out = -1.0;
    if (c->backoff == FB_BACKOFF_NONE) return 0;
    fb_jitter j = rng != NULL ? c->jitter : FB_JITTER_NONE;
    if (j == FB_JITTER_NONE) return fb_retry_backoff(p, n);
    double u = fb_rng_uniform(rng);
    *u_out = u;
    return delay_with(p, s, n, j, u, v2_state);
}

fb_time_us fb_retry_delay_at(const fb_retry_policy *p, const fb_retry_state *s, uint32_t n,
                             double u) {
    const fb_retry_config *c = &p->cfg;
    if (c->backoff == FB_BACKOFF_NONE) return 0;
    if (c->jitter == FB_JITTER_NONE) return fb_retry_backoff(p, n);
    double v2_state = s->jitter_state;
    return delay_with(p, s, n, c->jitter, u, &v2_state);
}

/* The jittered delay of retry n for the draw u (jittered_delay's, or a caller's). */
static fb_time_us delay_with(const fb_retry_policy *p, const fb_retry_state *s, uint32_t n,
                             fb_jitter j, double u, double *v2_state) {
    const fb_retry_config *c = &p->cfg;
    fb_time_us cap = c->delay_us_max;
    if (j == FB_JITTER_DECORRELATED) {
        /* Its own schedule: grows from the last returned delay, not from n. */
        double lo = (double)c->base_us;
        double prev = s->prev_delay_us > 0 ? (double)s->prev_delay_us : lo;
        double hi = 3.0 * prev > lo ? 3.0 * prev : lo;
        return clamp_to(quantise(c, lo + u * (hi - lo)), cap);
    }
    if (j == FB_JITTER_DECORRELATED_V2)
        return clamp_to(quantise(c, decorrelated_v2(c, n, u, v2_state)), cap);

    bool before =
        c->cap_order == FB_CAP_BEFORE_JITTER || c->cap_order == FB_CAP_BEFORE_JITTER_EXACT;
    double d =
        c->cap_order == FB_CAP_AFTER_JITTER ? raw_backoff(p, n) : (double)fb_retry_backoff(p, n);
    if (c->cap_order == FB_CAP_BEFORE_JITTER_EXACT) {
        d = raw_backoff(p, n);
        if (d > (double)cap) d = (double)cap;
    }
    /* BACKOFF_ONLY: the jitter added to the capped backoff may pass the cap */
    fb_time_us top = c->cap_order == FB_CAP_BACKOFF_ONLY ? FB_TIME_MAX : cap;
    return clamp_to(quantise(c, shaped(c, j, d, u, before)), top);
}

static fb_retry_decision give_up(fb_giveup why) {
    return (fb_retry_decision){.retry = false, .delay_us = 0, .reason = why};
}

/*
 * The delay once the server's hint is applied to the backoff `delay`, or -1
 * to give up (a header above the cap under FB_ABOVE_MAX_GIVEUP). *decided is
 * set when the header, not the backoff, decided it; u is the backoff's draw
 * (-1: none), which hint_jitter adds again.
 */
static fb_time_us with_hint(const fb_retry_config *cfg, fb_time_us delay, fb_time_us hint_us,
                            double u, fb_rng *rng, bool *decided) {
    *decided = false;
    if (cfg->ignore_zero_hint == FB_ON && hint_us == 0) hint_us = FB_TIME_NONE;
    if (cfg->retry_after == FB_RETRY_AFTER_IGNORE || hint_us < 0) return delay;
    fb_time_us h = hint_us;
    if (h > cfg->retry_after_us_max) {
        if (cfg->above_max == FB_ABOVE_MAX_GIVEUP) return -1;
        if (cfg->above_max == FB_ABOVE_MAX_BACKOFF && h >= delay) return delay;
        if (cfg->above_max == FB_ABOVE_MAX_CLAMP) h = cfg->retry_after_us_max;
    }
    if (cfg->retry_after == FB_RETRY_AFTER_AS_IS || h > delay) {
        *decided = true;
        delay = h;
        if (cfg->hint_jitter == FB_ON && cfg->jitter == FB_JITTER_ADDITIVE && u >= 0.0)
            return cfg->jitter_us > 0 ? fb_time_add(h, (fb_time_us)(u * (double)cfg->jitter_us))
                                      : h;
        /* upward only (Envoy): nobody comes back before the server asked, and
         * clients told the same Retry-After no longer return together */
        if (cfg->retry_after_jitter > 0.0 && rng != NULL)
            delay = fb_time_add(
                h, (fb_time_us)((double)h * cfg->retry_after_jitter * fb_rng_uniform(rng)));
    }
    return delay;
}

/* The hint as this policy reads it after outcome o (FB_TIME_NONE: none). */
static fb_time_us hint_for(const fb_retry_config *cfg, fb_outcome o, fb_time_us hint_us) {
    if (cfg->hint_rate_limited_only == FB_ON && o != FB_OUT_RATE_LIMITED) return FB_TIME_NONE;
    return hint_us;
}

/* fb_retry_next's steps (retry.h); out of line, so that a plain policy's answer is made
 * without the register saves of these. */
static __attribute__((noinline)) fb_retry_decision next_full(const fb_retry_policy *p,
                                                             fb_retry_state *s, const fb_class *c,
                                                             fb_time_us hint_us, fb_budget *budget,
                                                             fb_rng *rng, fb_time_us now_us) {
    const fb_retry_config *cfg = &p->cfg;
    if (s->attempt < UINT32_MAX) s->attempt++; /* the attempt that just failed */
    /* the request's first failure may set its own attempts (LiteLLM RetryPolicy) */
    if (s->attempt == 1 && c != NULL && c->attempts > 0)
        s->attempts_max = c->attempts < FB_RETRY_ATTEMPTS_MAX ? c->attempts : FB_RETRY_ATTEMPTS_MAX;
    if (c == NULL || !c->retryable) return give_up(FB_GIVEUP_NOT_RETRYABLE);
    bool limited = c->outcome == FB_OUT_RATE_LIMITED;
    hint_us = hint_for(cfg, c->outcome, hint_us);
    if (cfg->hint_whole_seconds == FB_ON && hint_us > 0 && hint_us % FB_US_PER_S != 0)
        hint_us = FB_TIME_NONE;
    bool no_hint = hint_us < 0 || (hint_us == 0 && cfg->ignore_zero_hint == FB_ON);
    if (cfg->rate_limit_needs_hint == FB_ON && limited && no_hint)
        return give_up(FB_GIVEUP_NOT_RETRYABLE);
    if (budget != NULL) fb_budget_on_failure(budget, c->outcome, now_us);

    uint32_t n = s->attempt; /* the retry about to be decided */
    if (n >= (s->attempts_max ? s->attempts_max : cfg->attempts))
        return give_up(FB_GIVEUP_ATTEMPTS);

    double v2_state = s->jitter_state, u;
    fb_time_us backoff = jittered_delay(p, s, n, rng, &v2_state, &u);
    if (s->hint_honoured && cfg->hint_zeroes_backoff == FB_ON) backoff = 0;
    bool decided;
    fb_time_us delay = with_hint(cfg, backoff, hint_us, u, rng, &decided);
    if (delay < 0) return give_up(FB_GIVEUP_RETRY_AFTER_CAP);
    /* Portkey: the headers of one request may add up to retry_after_total_us_max */
    fb_time_us total = s->hint_total_us;
    if (decided) {
        total = fb_time_add(total, delay);
        if (cfg->retry_after_total_us_max > 0 && total > cfg->retry_after_total_us_max)
            return give_up(FB_GIVEUP_RETRY_AFTER_CAP);
    }

    /* An attempt starting exactly at the deadline could not finish before it. */
    if (cfg->deadline_us > 0 &&
        fb_time_add(now_us, delay) >= fb_time_add(s->start_us, cfg->deadline_us))
        return give_up(FB_GIVEUP_DEADLINE);

    /* Last, so that a retry refused for another reason is never charged. */
    if (budget != NULL) {
        if (!fb_budget_withdraw(budget, c->outcome, now_us)) return give_up(FB_GIVEUP_BUDGET);
        uint32_t cost = fb_budget_cost(budget, c->outcome);
        if (cost > 0) s->budget_withdrawn = cost; /* QUOTA: what a success refunds */
        if (fb_budget_holds(budget)) s->budget_held = true;
    }
    s->prev_delay_us = delay;
    s->jitter_state = v2_state;
    s->hint_total_us = total;
    s->hint_honoured = s->hint_honoured || decided;
    return (fb_retry_decision){.retry = true, .delay_us = delay, .reason = FB_GIVEUP_NONE};
}

fb_retry_decision fb_retry_next(const fb_retry_policy *p, fb_retry_state *s, const fb_class *c,
                                fb_time_us hint_us, fb_budget *budget, fb_rng *rng,
                                fb_time_us now_us) {
    if (p->plain && budget == NULL) return fb_retry_next_plain(p, s, c);
    return next_full(p, s, c, hint_us, budget, rng, now_us);
}

const char *fb_giveup_name(fb_giveup g) {
    switch (g) {
    case FB_GIVEUP_NONE:
        return "none";
    case FB_GIVEUP_NOT_RETRYABLE:
        return "not_retryable";
    case FB_GIVEUP_ATTEMPTS:
        return "attempts";
    case FB_GIVEUP_DEADLINE:
        return "deadline";
    case FB_GIVEUP_BUDGET:
        return "budget";
    case FB_GIVEUP_RETRY_AFTER_CAP:
        return "retry_after_cap";
    default:
        return "unknown";
    }
}
