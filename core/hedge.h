/*
 * hedge.h - hedged requests: more attempts before the first has answered.
 *
 * A hedged call sends its first attempt at once and, while no attempt has
 * succeeded, another after each `delay`, up to `max_attempts` in all. The
 * first success wins; a failure that may be hedged (the caller says
 * `handled`, e.g. a retryable outcome: gRPC's non-fatal status codes, Polly's
 * ShouldHandle) sends the next attempt at once, skipping its delay; any
 * other failure ends the call with it. When every attempt has failed, the
 * call ends with the first attempt's failure (Polly v8 8.7.0,
 * HedgingExecutionContext.cs: the first finished task in launch order, all
 * of them being finished). The caller sends, cancels or abandons the
 * attempts; this module only decides (docs/hedge.md).
 *
 * The delay is fixed, or a percentile of the latencies of the last answers
 * (fb_hedge_window): deterministic, since the window holds what the caller
 * recorded in the order it recorded it. No clock, no allocation.
 */
#ifndef FB_HEDGE_H
#define FB_HEDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "fb.h"

#define FB_HEDGE_ATTEMPTS_MAX                                                                      \
    10 /* Polly's MaximumHedgedAttempts 10 hedges, with gRPC's cap of 5                            \
        */
#define FB_HEDGE_WINDOW_MAX 256
/* delay_us: send every attempt at once (Polly's Delay = TimeSpan.Zero) */
#define FB_HEDGE_AT_ONCE ((fb_time_us)-2)

typedef enum fb_hedge_target {
    FB_HEDGE_SAME = 0, /* default: the provider of the first attempt (Polly's default action) */
    FB_HEDGE_NEXT      /* the next provider of the chain that admits it */
} fb_hedge_target;

/* Zero in a field means the default beside it (core/fb.h). */
typedef struct fb_hedge_config {
    uint32_t max_attempts; /* 2: the first and one hedge (Polly MaxHedgedAttempts 1); <= 10 */
    fb_time_us delay_us;   /* 2 s (Polly's Delay); FB_HEDGE_AT_ONCE; FB_TIME_MAX: only on failure */
    double percentile;     /* 0: off; else the delay is this percentile (0, 100] of the window */
    uint32_t window;       /* with a percentile: the last 100 answers; <= FB_HEDGE_WINDOW_MAX */
    fb_hedge_target target;
    fb_switch cancel; /* DEFAULT/ON: the losers are cancelled (Polly, gRPC); OFF: left running */
} fb_hedge_config;

typedef struct fb_hedge_policy {
    /* private: defaults filled in */
    fb_hedge_config cfg;
} fb_hedge_policy;

/* The latencies of the last answers, for a percentile delay: a ring, and the same sorted. */
typedef struct fb_hedge_window {
    /* private */
    fb_time_us lat_us[FB_HEDGE_WINDOW_MAX];
    fb_time_us sorted_us[FB_HEDGE_WINDOW_MAX];
    uint32_t size, n, pos;
} fb_hedge_window;

/* One hedged call in progress. */
typedef struct fb_hedge_group {
    uint8_t launched;    /* attempts sent, the first included */
    uint8_t outstanding; /* sent, not answered (nor given up on) */
    bool stopped;        /* no more attempts will be sent */
    bool done;
    fb_time_us next_at_us; /* when the next attempt is due; FB_TIME_MAX: none */
} fb_hedge_group;

typedef enum fb_hedge_verdict {
    FB_HEDGE_WAIT = 0, /* other attempts are out, or one is due later: wait */
    FB_HEDGE_SEND_NOW, /* a handled failure: send the next attempt now */
    FB_HEDGE_WON,      /* this attempt succeeded: the call ends with it, the others lose */
    FB_HEDGE_FAILED,   /* a failure that may not be hedged: the call ends with it */
    FB_HEDGE_EXHAUSTED /* every attempt failed: the call ends with the first one's failure */
} fb_hedge_verdict;

/* FB_ERANGE for a value out of range, FB_EINVAL for an unknown enum. */
int fb_hedge_policy_init(fb_hedge_policy *h, const fb_hedge_config *cfg);
const fb_hedge_config *fb_hedge_policy_config(const fb_hedge_policy *h);

/* A window of the policy's size (its `window`). */
void fb_hedge_window_init(fb_hedge_window *w, const fb_hedge_policy *h);
/* An answer took `latency_us`: it replaces the oldest of a full window. */
void fb_hedge_window_add(fb_hedge_window *w, fb_time_us latency_us);
/* The delay before the next attempt: the percentile once the window is full, else the fixed one. */
fb_time_us fb_hedge_delay(const fb_hedge_policy *h, const fb_hedge_window *w);

/* The first attempt was sent at now_us; the next is due `delay_us` later. */
void fb_hedge_begin(const fb_hedge_policy *h, fb_hedge_group *g, fb_time_us delay_us,
                    fb_time_us now_us);
/* Is another attempt due now? */
bool fb_hedge_due(const fb_hedge_policy *h, const fb_hedge_group *g, fb_time_us now_us);
/* Another attempt was sent at now_us; the one after it is due `delay_us` later. */
void fb_hedge_sent(const fb_hedge_policy *h, fb_hedge_group *g, fb_time_us delay_us,
                   fb_time_us now_us);
/* The next attempt could not be sent (nothing admits it): send no more; WAIT or EXHAUSTED. */
fb_hedge_verdict fb_hedge_refused(fb_hedge_group *g);
/* An attempt answered (or timed out): what now. `handled`: a failure that may be hedged. */
fb_hedge_verdict fb_hedge_result(const fb_hedge_policy *h, fb_hedge_group *g, bool success,
                                 bool handled, fb_time_us now_us);

#endif /* FB_HEDGE_H */
