/*
 * retry.h - retry decisions: backoff, jitter, Retry-After policy, deadlines.
 *
 * Attempts are counted from 1, and `attempts` includes the first call:
 * attempts = 3 means one call and at most two retries (resilience4j
 * maxAttempts, tenacity stop_after_attempt); `retries` counts the retries
 * instead (Polly MaxRetryAttempts, the SDKs' max_retries). fb_retry_next()
 * counts the attempt that just failed: it is the only place that counts. The n-th retry
 * (n = 1, 2, ...) has the un-jittered delay
 *   CONSTANT     base
 *   LINEAR       base * n
 *   EXPONENTIAL  base * multiplier^(n-1), grown iteratively and stopped at the
 *                cap, so it never overflows (attempt 10,000 is fine).
 * Cap and jitter: with FB_CAP_BEFORE_JITTER (default) the backoff is capped
 * first and jitter then draws inside [0, cap] (the result never exceeds
 * delay_us_max); with FB_CAP_AFTER_JITTER jitter is applied to the uncapped
 * value and the result is then clamped to the cap.
 * Jitter (u uniform in [0, 1)): NONE d (default); FULL u d; EQUAL d/2 + u d/2;
 * DECORRELATED min(cap, U(base, 3 * prev)) with prev starting at base;
 * PROPORTIONAL d * U(1 - f, 1 + f); RANDOMIZED d - f d + u (2 f d + unit), at
 * least one unit (resilience4j, unit = resolution_us); DOWN d (1 - f u)
 * (Stainless SDKs); UP d (1 + f u) (p-retry); ADDITIVE d + u jitter_us
 * (tenacity); DECORRELATED_V2 Polly's formula, its own schedule like DECORRELATED.
 * Zero rule (fb.h): zero is the default beside each field; no jitter, no
 * deadline and no Retry-After jitter unless asked for.
 *
 * The functions return decisions; nothing here sleeps. The retry budgets
 * live in budget.h and the Retry-After parsers in retry_after.h. See
 * docs/retry.md.
 */
#ifndef FB_RETRY_H
#define FB_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "budget.h"
#include "classify.h"
#include "fb.h"
#include "rng.h"

#define FB_RETRY_ATTEMPTS_MAX 1000000

typedef enum fb_backoff {
    FB_BACKOFF_EXPONENTIAL = 0, /* default */
    FB_BACKOFF_CONSTANT,
    FB_BACKOFF_LINEAR,
    FB_BACKOFF_NONE /* retry immediately */
} fb_backoff;

typedef enum fb_jitter {
    FB_JITTER_NONE = 0, /* default: a zeroed config draws nothing */
    FB_JITTER_FULL,
    FB_JITTER_EQUAL,
    FB_JITTER_DECORRELATED,
    FB_JITTER_PROPORTIONAL,
    FB_JITTER_RANDOMIZED,     /* resilience4j IntervalFunction.ofRandomized */
    FB_JITTER_DOWN,           /* openai/anthropic SDKs: d * (1 - f u) */
    FB_JITTER_UP,             /* p-retry randomize (LangChain JS): d * (1 + f u) */
    FB_JITTER_ADDITIVE,       /* tenacity wait_exponential_jitter: d + u * jitter_us */
    FB_JITTER_DECORRELATED_V2 /* Polly v8 exponential + UseJitter, cockatiel ExponentialBackoff */
} fb_jitter;

/* How a delay is rounded to resolution_us. */
typedef enum fb_rounding {
    FB_ROUND_DOWN = 0, /* default: truncation (resilience4j's (long) casts) */
    FB_ROUND_NEAREST   /* half up (p-retry's Math.round) */
} fb_rounding;

/* A Retry-After above retry_after_us_max. */
typedef enum fb_above_max {
    FB_ABOVE_MAX_CLAMP = 0, /* default: the header is clamped to the maximum */
    FB_ABOVE_MAX_GIVEUP,    /* no retry (openai-python >= 2.52: above 120 s) */
    FB_ABOVE_MAX_BACKOFF    /* the header is disregarded unless shorter than the backoff
                               (Stainless SDKs, Vercel AI SDK) */
} fb_above_max;

typedef enum fb_cap_order {
    FB_CAP_BEFORE_JITTER = 0, /* default: the result never exceeds the cap */
    FB_CAP_AFTER_JITTER,
    FB_CAP_BACKOFF_ONLY, /* the backoff is capped, the jitter then added on top may pass the cap
                           (LiteLLM: min(0.5 * 2^k, 8) + U(0, 0.75) s) */
    FB_CAP_BEFORE_JITTER_EXACT /* as BEFORE_JITTER, but the capped backoff the jitter scales keeps
                                  its fraction of a microsecond (tenacity's uniform(0, min(0.5 *
                                  1.5^7, max)) s: 8542968.75 us, not 8542968) */
} fb_cap_order;

typedef enum fb_retry_after_policy {
    FB_RETRY_AFTER_MAX = 0, /* default: max(header, backoff) */
    FB_RETRY_AFTER_IGNORE,  /* backoff only */
    FB_RETRY_AFTER_AS_IS    /* the header's value when present, else backoff */
} fb_retry_after_policy;

typedef enum fb_giveup {
    FB_GIVEUP_NONE = 0,       /* not giving up: retry */
    FB_GIVEUP_NOT_RETRYABLE,  /* the outcome is not retryable */
    FB_GIVEUP_ATTEMPTS,       /* attempts exhausted */
    FB_GIVEUP_DEADLINE,       /* the retry would start at or after the deadline */
    FB_GIVEUP_BUDGET,         /* the retry budget refused */
    FB_GIVEUP_RETRY_AFTER_CAP /* the server asked for more than the cap */
} fb_giveup;

typedef struct fb_retry_config {
    uint32_t attempts;        /* including the first call; default 3; 1 = no retries */
    uint32_t retries;         /* or: retries after the first call (Polly MaxRetryAttempts); 0 = not
                                 given; giving both is FB_EINVAL. max_retries = 0 is attempts = 1 */
    fb_backoff backoff;       /* default EXPONENTIAL */
    fb_time_us base_us;       /* default 500 ms */
    double multiplier;        /* EXPONENTIAL growth; default 2.0 */
    fb_time_us delay_us_max;  /* cap; default 60 s */
    fb_jitter jitter;         /* default NONE */
    double jitter_fraction;   /* f of PROPORTIONAL, RANDOMIZED, DOWN, UP in (0, 1]; default 0.25 */
    fb_time_us jitter_us;     /* ADDITIVE: the most it adds; default 1 s (tenacity); FB_TIME_NONE:
                                 nothing, but the draw is made (tenacity's jitter=0 adds
                                 uniform(0, 0), so the draws after it stay in step) */
    fb_cap_order cap_order;   /* default CAP_BEFORE_JITTER */
    fb_time_us resolution_us; /* 0: whole microseconds, exponential grown exactly (default);
                                 > 0: each growth step and the delay rounded to a multiple
                                 (resilience4j: 1 ms) */
    fb_rounding rounding;     /* to resolution_us: DOWN (default) or NEAREST */
    fb_retry_after_policy retry_after; /* default MAX */
    fb_time_us retry_after_us_max;     /* cap on a header's delay; default 60 s */
    fb_above_max above_max;            /* a header above the cap; default CLAMP */
    fb_switch ignore_zero_hint;       /* a header of 0 counts as none (openai-python 0 < d); default
                                         OFF: 0 means retry now */
    fb_switch hint_whole_seconds;     /* a header that is not a whole number of seconds counts as
                                         none (LiteLLM reads it with int(), which raises on "2.5");
                                         default OFF */
    double retry_after_jitter;        /* when the header decides: header * U(1, 1 + f); default 0 */
    fb_switch hint_rate_limited_only; /* a hint counts only on a RATE_LIMITED failure (LangChain JS
                                         and Portkey read Retry-After on 429s alone); default OFF:
                                         on any */
    fb_switch rate_limit_needs_hint;  /* a RATE_LIMITED failure without a hint is not retried
                                         (LangChain JS AsyncCaller); default OFF: it is */
    fb_switch retry_rejected;         /* a call the caller's own breaker rejects is a failed attempt
                                         to retry (resilience4j, Polly, cockatiel retry every
                                         exception, the breaker's too); default OFF: skipped */
    fb_switch resolution_delay_only;  /* resolution_us rounds the jittered delay only, the backoff
                                         grows unrounded (cockatiel: Math.floor(U * min(maxDelay,
                                         initialDelay * 2^attempt)) ms with initialDelay 0.5);
                                         default OFF: each growth step is rounded too */
    fb_time_us attempt_timeout_us; /* per-attempt timeout; 0 = none (informational for callers) */
    fb_time_us deadline_us;        /* overall, from the first attempt's start; 0 = none */
    /* Gateway forms (docs/retry.md, "Library semantics"); zero keeps the behaviour above. */
    fb_time_us delay_us_min; /* the backoff is at least this, before the cap (LiteLLM
                                retry_after: min(max(d, min), cap)); 0 = no floor */
    uint32_t backoff_hold;   /* retries 1..hold+1 all wait the base; retry n > hold uses
                                n - hold in the formulas (LiteLLM's loop: 0.5, 0.5, 1, 2 s) */
    fb_switch hint_jitter;   /* ADDITIVE: a header-decided delay gets the same u * jitter_us
                                added (LiteLLM: retry_after + U(0, 0.75)); default OFF */
    fb_time_us retry_after_total_us_max; /* the headers honoured in one request may add up to
                                            this; a header that would pass it gives up
                                            (Portkey: 60 s); 0 = no limit */
    fb_switch hint_zeroes_backoff;       /* once a header decided a delay, later retries of the
                                            request wait 0 unless a header says otherwise (Portkey
                                            resets async-retry's timeouts); default OFF */
} fb_retry_config;

typedef struct fb_retry_policy {
    /* private: the validated config */
    fb_retry_config cfg;
    uint32_t cap_retry; /* EXPONENTIAL: first retry number whose backoff reaches the cap */
    bool plain;         /* nothing to decide but the count: no backoff, no Retry-After, no deadline
                           (fb_retry_next's short way when there is no budget either) */
} fb_retry_policy;

/* Per-request retry state: fb_retry_begin() it when the request starts. */
typedef struct fb_retry_state {
    /* what a retry at once does not touch first (the fallback engine's attempts touch the rest) */
    double jitter_state;       /* DECORRELATED_V2: the formula's previous value */
    fb_time_us hint_total_us;  /* headers honoured so far (retry_after_total_us_max) */
    uint32_t budget_withdrawn; /* QUOTA: what this request's last retry took; 0 = none */
    bool hint_honoured;        /* a header decided a delay (hint_zeroes_backoff) */
    bool budget_held;          /* CONCURRENCY: a retry slot is held until fb_budget_release() */
    uint32_t attempt;          /* failed attempts fb_retry_next() has counted */
    uint32_t attempts_max;     /* 0: the policy's attempts; else this request's (set once, at its
                                  first failure, from fb_class.attempts) */
    fb_time_us start_us;       /* when the request started: the deadline runs from here */
    fb_time_us prev_delay_us;  /* for decorrelated jitter: the last delay returned */
} fb_retry_state;

typedef struct fb_retry_decision {
    bool retry;
    fb_time_us delay_us; /* when retry: wait this long before the next attempt */
    fb_giveup reason;    /* when !retry */
} fb_retry_decision;

int fb_retry_policy_init(fb_retry_policy *p, const fb_retry_config *cfg);
/* cfg with the zero rule's defaults filled in, as fb_retry_policy_init() runs it (reports show
 * the settings in effect). Returns FB_OK, or what fb_retry_policy_init() would. */
int fb_retry_config_effective(fb_retry_config *cfg);
/* A request starts now: no attempt counted yet, the deadline runs from now. Inline: the
 * fallback engine starts one for each provider a request tries. */
static inline void fb_retry_begin(fb_retry_state *s, fb_time_us now_us) {
    *s = (fb_retry_state){.start_us = now_us};
}

/*
 * An attempt failed with class `c`: counts it (s->attempt + 1), then retry or
 * give up? This is the only call that counts attempts.
 * `hint_us` is the server's delay (fb_retry_after_hint(), retry_after.h) or
 * FB_TIME_NONE (any negative value means none). `budget` and `rng` may be NULL (no budget;
 * jitter then behaves as NONE). Checks, in order: not retryable (including a
 * RATE_LIMITED failure without a hint under rate_limit_needs_hint); attempts
 * exhausted; the delay (backoff, jitter, Retry-After policy; a header above
 * retry_after_us_max is clamped, gives up or is disregarded, as above_max says); the deadline
 * (give up when now + delay >= start + deadline_us); the budget last.
 * Budget calls: for a retryable `c` this calls fb_budget_on_failure(), and
 * fb_budget_withdraw() just before it says retry (recording a QUOTA
 * withdrawal in s->budget_withdrawn). The caller calls fb_budget_on_success()
 * when the request succeeds.
 */
fb_retry_decision fb_retry_next(const fb_retry_policy *p, fb_retry_state *s, const fb_class *c,
                                fb_time_us hint_us, fb_budget *budget, fb_rng *rng,
                                fb_time_us now_us);
/*
 * fb_retry_next() for a plain policy (p->plain) without a budget: what its steps come to there,
 * count, then retry at once or give up. Inline, for a caller that retries at once per attempt
 * (the fallback engine's storm path); fb_retry_next() takes it too.
 */
static inline fb_retry_decision fb_retry_next_plain(const fb_retry_policy *p, fb_retry_state *s,
                                                    const fb_class *c) {
    if (s->attempt < UINT32_MAX) s->attempt++;
    if (s->attempt == 1 && c != NULL && c->attempts > 0)
        s->attempts_max = c->attempts < FB_RETRY_ATTEMPTS_MAX ? c->attempts : FB_RETRY_ATTEMPTS_MAX;
    if (c == NULL || !c->retryable)
        return (fb_retry_decision){.retry = false, .reason = FB_GIVEUP_NOT_RETRYABLE};
    if (s->attempt >= (s->attempts_max ? s->attempts_max : p->cfg.attempts))
        return (fb_retry_decision){.retry = false, .reason = FB_GIVEUP_ATTEMPTS};
    s->prev_delay_us = 0;
    return (fb_retry_decision){.retry = true, .delay_us = 0, .reason = FB_GIVEUP_NONE};
}
/* The un-jittered, capped backoff before retry number n (n >= 1). */
fb_time_us fb_retry_backoff(const fb_retry_policy *p, uint32_t n);

/*
 * The delay fb_retry_next() would give retry n (the attempt that just failed:
 * s->attempt after that call) when its jitter draws u in [0, 1), before any
 * Retry-After: with u = 0 and u just below 1, the range it draws from.
 */
fb_time_us fb_retry_delay_at(const fb_retry_policy *p, const fb_retry_state *s, uint32_t n,
                             double u);
const char *fb_giveup_name(fb_giveup g);

#endif /* FB_RETRY_H */
