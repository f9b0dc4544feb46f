/*
 * fallback.h - the request path as one decision engine.
 *
 * fb_fallback composes the other core policies in the order an application
 * applies them to one user request:
 *
 *   for each provider P in the request's order:
 *     context check   skip P if tokens_needed > P's window (context_check on)
 *     rate limit      P's client-side limiter: wait (WAIT) or skip P (rejected)
 *     concurrency     P's concurrency limit is full: skip P (rejected, no wait)
 *     breaker         P's breaker rejects: skip P (no wait)
 *     attempt         ATTEMPT P (the breaker permit is held by the request)
 *     classify        the caller classifies the reply and calls _result()
 *     retry           retryable and fb_retry_next() says so: WAIT, then P again
 *     fall back       otherwise, if the outcome may fall back: next provider
 *                     (context-length errors skip to a provider with a larger
 *                     window), else DONE with the error
 *   chain exhausted:  DONE with a degraded answer when configured, else error
 *
 * The engine performs no I/O and reads no clock: each call takes `now_us` and
 * returns one decision, ATTEMPT (provider, attempt timeout), WAIT (delay; call
 * fb_fallback_resume() after it) or DONE (how the request ended). The retry
 * state restarts for each provider; the overall deadline and the budget span
 * the whole request. See docs/fallback.md.
 */
#ifndef FB_FALLBACK_H
#define FB_FALLBACK_H

#include <stdbool.h>
#include <stdint.h>

#include "breaker.h"
#include "classify.h"
#include "conclimit.h"
#include "fb.h"
#include "ratelimit.h"
#include "retry.h"
#include "rng.h"

#define FB_FALLBACK_PROVIDERS_MAX 8

/* What to do with a failure after the first streamed token. */
typedef enum fb_stream_policy {
    FB_STREAM_BUFFER = 0, /* default: output was buffered, retry as any failure (tokens wasted) */
    FB_STREAM_FAIL,       /* the user already saw output: end the request with an error */
    FB_STREAM_RESUME,     /* retry asking only for the rest (decision.resume is set) */
    FB_STREAM_RETRY       /* naive: retry and stream again; the user sees output twice */
} fb_stream_policy;

#define FB_STOP_MAP(XX)                                                                            \
    XX(SUCCESS, "success")                                                                         \
    XX(PERMANENT, "permanent")           /* a permanent error; no fallback */                      \
    XX(POLICY, "policy")                 /* a content-policy rejection; no fallback */             \
    XX(CONTEXT_LENGTH, "context_length") /* no provider's window is large enough */                \
    XX(EXHAUSTED, "exhausted")           /* every provider was tried and failed */                 \
    XX(BREAKER_OPEN, "breaker_open")     /* every remaining provider's breaker rejected */         \
    XX(RATE_LIMITED, "rate_limited")     /* a client-side limiter rejected every remaining one */  \
    XX(DEADLINE, "deadline")             /* the overall deadline passed */                         \
    XX(STREAM_BROKEN, "stream_broken")   /* failed after the first token under FB_STREAM_FAIL */   \
    XX(CANCELLED, "cancelled")           /* the caller abandoned the request */

typedef enum fb_stop {
#define FB_STOP_ENUM(name, text) FB_STOP_##name,
    FB_STOP_MAP(FB_STOP_ENUM)
#undef FB_STOP_ENUM
        FB_STOP_COUNT
} fb_stop;

typedef enum fb_action { FB_ACT_ATTEMPT = 0, FB_ACT_WAIT, FB_ACT_DONE } fb_action;

/*
 * A breaker behind callbacks, for breakers whose state lives elsewhere (a
 * store shared by a fleet, modelled by the simulator). When `allow` is set
 * the engine calls these instead of fb_breaker_allow()/fb_breaker_record().
 */
typedef struct fb_breaker_port {
    bool (*allow)(void *ctx, fb_time_us now_us, fb_breaker_permit *permit);
    void (*record)(void *ctx, const fb_breaker_permit *permit, const fb_breaker_result *result,
                   fb_time_us now_us);
    void *ctx;
    bool (*admits)(void *ctx, fb_time_us now_us); /* would allow() admit? NULL: yes */
} fb_breaker_port;

/*
 * How a layer picks the provider of each attempt. ORDER walks the order one
 * provider at a time, each with its own retries. The group modes read the
 * order as a sequence of groups (consecutive providers with the same
 * `group` id: a LiteLLM model group's deployments, an Envoy cluster's hosts):
 * every attempt of a group, its retries too, picks one member the breaker
 * admits, and the group's retries are counted together; when they run out
 * the request falls back to the next group. docs/fallback.md, "Groups".
 */
typedef enum fb_pick {
    FB_PICK_ORDER = 0,  /* default */
    FB_PICK_RANDOM,     /* weighted at random among the members that admit (LiteLLM
                           simple-shuffle, Envoy RANDOM): one draw per attempt */
    FB_PICK_ROUND_ROBIN /* the next member that admits in a rotation shared by the
                           engine's requests (Envoy ROUND_ROBIN) */
} fb_pick;

/* An alternative chain for one kind of failure (LiteLLM context_window_fallbacks). */
typedef struct fb_fallback_chain {
    bool set; /* a failure of this kind leaves its group for `order`, not the rest */
    uint8_t order[FB_FALLBACK_PROVIDERS_MAX];
    uint32_t len; /* 0 with set: such a failure ends the request */
} fb_fallback_chain;

typedef struct fb_fallback_provider {
    fb_breaker *breaker;           /* caller-owned; NULL = no breaker */
    fb_breaker_port port;          /* used instead of `breaker` when port.allow != NULL */
    fb_ratelimit *ratelimit;       /* caller-owned; NULL = no client-side limit */
    fb_conclimit *conclimit;       /* caller-owned; NULL = no concurrency limit */
    uint32_t context_window;       /* tokens; 0 = unknown, never skipped */
    fb_time_us attempt_timeout_us; /* overrides the retry policy's; 0 = use it */
} fb_fallback_provider;

typedef struct fb_fallback_config {
    fb_fallback_provider providers[FB_FALLBACK_PROVIDERS_MAX];
    uint32_t provider_count;
    uint8_t order[FB_FALLBACK_PROVIDERS_MAX]; /* default order; order_len 0 = 0..count-1 */
    uint32_t order_len;
    const fb_retry_policy *retry; /* NULL = a single attempt per provider; initialised before
                                     fb_fallback_init, which reads its plain mark */
    fb_budget *budget;            /* caller-owned retry budget; NULL = none */
    fb_rng *rng;                  /* jitter draws; NULL = no jitter */
    bool context_check;           /* skip providers whose window is too small */
    bool degraded;                /* exhausted chain ends in a degraded answer */
    bool wait_always;             /* a retry at once is a WAIT of 0: the caller times each retry
                                     itself (a replay's recorded retry times) */
    fb_stream_policy stream;
    /* Groups (all zero: ORDER, today's behaviour). */
    fb_pick pick;
    uint8_t group[FB_FALLBACK_PROVIDERS_MAX];   /* by provider: its group id */
    uint32_t weight[FB_FALLBACK_PROVIDERS_MAX]; /* RANDOM: relative weights; 0 = 1 */
    uint32_t *rr_cursor;    /* ROUND_ROBIN: caller-owned rotation; NULL: rotation off (first) */
    fb_switch healthy_gate; /* a group's first failure is retried only while a member
                               admits; a retry that finds none counts as an attempt and waits
                               its backoff (LiteLLM should_retry_this_error and its loop);
                               default OFF: such a group is left at once */
    fb_switch zero_wait_if_healthy;      /* a retry waits 0 when its group has several members and
                                            one admits (LiteLLM _time_to_sleep_before_retry);
                                            default OFF */
    fb_switch judge_first;               /* groups: a group's later failures are read as its first:
                                            retried while attempts remain, whatever their class,
                                            waiting by the first one's hint, and the first one
                                            picks the fallback (LiteLLM async_function_with_
                                            retries); default OFF: each failure is read */
    fb_fallback_chain on_context_length; /* groups: after a CONTEXT_LENGTH failure */
    fb_fallback_chain on_policy;         /* groups: after a POLICY failure */
} fb_fallback_config;

typedef struct fb_fallback {
    /* private */
    fb_fallback_config cfg;
    bool plain;       /* nothing to ask before an attempt: no provider has a limiter, concurrency
                         limit or breaker, no budget, no groups (set by fb_fallback_init) */
    bool retry_plain; /* cfg.retry is a plain policy (fb_retry_policy.plain), read at init */
    bool lean;        /* not plain, but an attempt asks at most its provider's own breaker: no
                         limiter, concurrency limit or port, no groups (a budget may count) */
} fb_fallback;

typedef struct fb_fallback_request_stats {
    uint32_t attempts;  /* attempts made, all providers */
    uint32_t retries;   /* retries of a provider, all providers */
    uint32_t fallbacks; /* moves to another provider after an attempt failed */
} fb_fallback_request_stats;

/* Per-request state, owned by the caller; about 200 bytes. */
typedef struct fb_fallback_request {
    /* private: use the functions below. What a request touches once (groups, limits, windows)
       first, then what each attempt does (from retry's last fields on: two cache lines). */
    fb_conclimit_permit climit;
    fb_class group_first;        /* groups, judge_first: the current group's first failure */
    uint32_t window_floor;       /* after a context-length error: skip windows <= this */
    fb_time_us group_first_hint; /* ... and its hint */
    uint32_t tokens_needed;
    uint8_t skipped;     /* why providers were skipped (bit set) */
    uint8_t gend;        /* groups: the end of the current group in order */
    uint8_t first_group; /* groups: the group id the request started in */
    bool switched;       /* groups: now on an alternative chain */
    fb_retry_state retry;
    uint8_t order[FB_FALLBACK_PROVIDERS_MAX];
    uint8_t order_len;
    uint8_t pos;   /* index into order of the current provider */
    uint8_t phase; /* what resume() continues with */
    uint8_t first_provider;
    uint8_t last_provider; /* of the last attempt */
    uint8_t attempted;     /* providers attempted (bit set of provider indices) */
    uint8_t cur;           /* index into order of the provider being tried (groups: the member) */
    bool fresh_group;      /* groups: no attempt yet in the current group */
    bool retried;
    bool resume;
    bool detached;        /* the ATTEMPT's permits were handed to the caller (fb_fallback_detach) */
    uint8_t last_outcome; /* fb_outcome */
    fb_fallback_request_stats stats;
    fb_time_us start_us;
    fb_time_us deadline_us; /* the overall deadline: start_us + the policy's, or FB_TIME_MAX */
    fb_breaker_permit permit;
} fb_fallback_request;

typedef struct fb_fallback_decision {
    fb_action action;
    uint8_t provider;      /* ATTEMPT: index into providers; DONE: last provider tried */
    fb_time_us delay_us;   /* WAIT: call fb_fallback_resume() after this long */
    fb_time_us timeout_us; /* ATTEMPT: per-attempt timeout, bounded by the deadline; 0 = none */
    bool resume;           /* ATTEMPT: continue a broken stream (FB_STREAM_RESUME) */
    bool retry;    /* WAIT: the backoff before a retry of an attempt that was sent (not a limiter's
                      wait, nor a retry of a call the caller's breaker rejected) */
    fb_stop stop;  /* DONE: how the request ended */
    bool degraded; /* DONE: answered with the degraded answer */
    bool via_fallback;       /* DONE/ATTEMPT: provider is not the first of the order (it
                                failed or was skipped); false when no attempt was made */
    fb_outcome last_outcome; /* DONE: the last attempt's outcome (SUCCESS if none) */
} fb_fallback_decision;

int fb_fallback_init(fb_fallback *fb, const fb_fallback_config *cfg);

/*
 * Start a request needing `tokens_needed` tokens of context (prompt plus
 * expected completion). `order` overrides the configured order (NULL = use
 * it); its entries are provider indices.
 */
fb_fallback_decision fb_fallback_begin(const fb_fallback *fb, fb_fallback_request *req,
                                       uint32_t tokens_needed, const uint8_t *order,
                                       uint32_t order_len, fb_time_us now_us);
/* The attempt asked for by the last ATTEMPT ended with class `c`. */
fb_fallback_decision fb_fallback_result(const fb_fallback *fb, fb_fallback_request *req,
                                        const fb_class *c, fb_time_us hint_us, fb_time_us now_us);
/* fb_fallback_result into *d: a storm's retry at once is written where the caller reads it
 * (returned by value, it was built on the callee's stack and copied out in 16-byte loads that
 * wait for its byte stores: a store-forwarding stall per attempt). */
void fb_fallback_result_into(const fb_fallback *fb, fb_fallback_request *req, const fb_class *c,
                             fb_time_us hint_us, fb_time_us now_us, fb_fallback_decision *d);
/*
 * The retries at once that fb_fallback_result would decide next, without deciding them (nothing
 * changes): how many failures of class c in a row it would answer each with another attempt at
 * the same provider at once, with nothing else to decide (a plain engine: no breaker, limiter,
 * concurrency limit, groups or budget; a retry policy that retries at once, counting only).
 * 0 when the next result would be anything else. Those retries are sent while the clock is
 * before *until_us (the request's deadline; FB_TIME_MAX: none), each with an attempt timeout
 * of at most *timeout_us (0: none). The simulator handles a storm's answers ahead with it
 * (docs/engine.md, "Answers handled ahead").
 */
uint32_t fb_fallback_retries_at_once(const fb_fallback *fb, const fb_fallback_request *req,
                                     const fb_class *c, fb_time_us *until_us,
                                     fb_time_us *timeout_us);
/* A WAIT has elapsed. */
fb_fallback_decision fb_fallback_resume(const fb_fallback *fb, fb_fallback_request *req,
                                        fb_time_us now_us);
/* The caller abandons the request (its own deadline); releases a held permit. */
void fb_fallback_cancel(const fb_fallback *fb, fb_fallback_request *req, fb_time_us now_us);

/*
 * Several attempts at once (hedging, core/hedge.h): the caller holds each
 * attempt's permits (breaker, concurrency limit) itself and ends each one
 * with fb_fallback_end(); the request's result() then records nothing.
 */
typedef struct fb_fallback_permits {
    uint8_t provider;
    bool held;
    fb_breaker_permit breaker;
    fb_conclimit_permit climit;
} fb_fallback_permits;

/* Hand the outstanding ATTEMPT's permits to *out (nothing held: out->held is false). */
void fb_fallback_detach(fb_fallback_request *req, fb_fallback_permits *out);
/*
 * Admit another attempt of the request beside the outstanding ATTEMPT: at
 * its provider (next = false), or at the first later provider of the order
 * that admits it, through the same checks (context window, rate limit -- a
 * wait refuses it -- concurrency limit, breaker). Its permits go to *out and
 * its attempt timeout (as an ATTEMPT's, bounded by the deadline) to
 * *timeout_us. False when none admits it; nothing is counted in the stats.
 */
bool fb_fallback_hedge(const fb_fallback *fb, const fb_fallback_request *req, bool next,
                       fb_time_us now_us, fb_fallback_permits *out, fb_time_us *timeout_us);
/* An attempt whose permits the caller holds ended with class c (NULL: cancelled). */
void fb_fallback_end(const fb_fallback *fb, fb_fallback_permits *p, const fb_class *c,
                     fb_time_us hint_us, fb_time_us now_us);

/* What the request has done so far; final once a DONE decision was returned. */
const fb_fallback_request_stats *fb_fallback_request_stats_get(const fb_fallback_request *req);

const char *fb_stop_name(fb_stop s);

#endif /* FB_FALLBACK_H */
