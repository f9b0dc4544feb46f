/*
 * breaker.h - circuit breaker driven by caller-supplied time.
 *
 * States: CLOSED -> OPEN -> HALF_OPEN -> CLOSED | OPEN, plus the manual
 * states FORCED_OPEN, FORCED_CLOSED, DISABLED and METRICS_ONLY.
 *
 * Trip rules (mode):
 *   CONSECUTIVE   open after `consecutive_failures` FAILURE results in a row;
 *                 a SUCCESS (slow or not) resets the run. No window is kept:
 *                 the event counts calls/failures/slow are 0 in this mode.
 *   COUNT_WINDOW  the last `window_calls` outcomes.
 *   TIME_WINDOW   the outcomes of the last `window_us`, kept in
 *                 `window_buckets` buckets aligned to multiples of
 *                 bucket_us = window_us / window_buckets since time 0; a result
 *                 is attributed to the bucket of the time it is recorded (a
 *                 time exactly on a boundary opens the newer bucket). The
 *                 window is the bucket holding now plus the previous
 *                 buckets - 1, so it spans between window_us - bucket_us and
 *                 window_us of history. Time never moves the window backwards.
 * In the window modes the breaker opens when at least the minimum number of
 * calls is in the window (COUNT_WINDOW: min(minimum_calls, window_calls)) and
 * failures/calls >= failure_rate, or slow/calls >= slow_rate (a call is slow
 * when slow_us > 0 and duration > slow_us; slow failures count in both). Below
 * the minimum the rate is unknown (-1) and nothing trips. Failure rate is
 * checked first, so it names the cause when both rules break.
 * Rules are evaluated after every recorded SUCCESS or FAILURE, and in
 * allow()/poll() whenever the time window drops buckets (expiring successes
 * can raise the rate; not with evaluate RECORD_ONLY). record() drops expired
 * buckets, adds its outcome, then evaluates once. The window (and the consecutive run) is cleared
 * on every state change. IGNORE results and rejected calls are counted nowhere (window_scope FIRES,
 * opossum's rule: every allow() is a call, and the window is never cleared).
 *
 * OPEN becomes HALF_OPEN lazily, on the first allow()/poll() (and record(),
 * with open_elapses_on_result ON) with now >= open_until (open_timer,
 * half_open_timer: timed transitions, stamped at their due time however late
 * noticed; fb_breaker_next_timer() tells a caller with a clock when to poll).
 * HALF_OPEN admits `half_open_permits` concurrent probes, each leased until
 * admitted + `probe_lease_us`; every other call is rejected.
 * Any probe FAILURE re-opens (PROBE_FAILED), and so does a slow probe when
 * slow_us > 0; `half_open_permits` probe SUCCESSes close (PROBES_SUCCEEDED).
 * A probe's result frees its slot for another probe; an IGNORE result frees it
 * and counts nothing. A lease is expired when now >= its end; the next
 * allow()/record()/poll() then re-opens (PROBE_LEASE_EXPIRED), before looking
 * at the result being recorded, so a probe reporting at or after its lease end
 * is stale. Lazy transitions are stamped with the now_us of the call that
 * performs them. With late_results AS_ADMITTED (pybreaker's calling()) or RUN
 * (cockatiel) the rules above give way to those of fb_late_result's comment,
 * and probe_limit NONE admits every call in HALF_OPEN.
 *
 * Open duration on the n-th consecutive entry to OPEN (`trips`; reset to 0
 * when CLOSED is entered): open_us grown by open_growth (n, 2^(n-1)), capped at
 * open_us_max; then times U(1 - open_jitter, 1 + open_jitter) truncated to a
 * microsecond and capped at open_us_max again; then, when honor_hint is ON and
 * the record that trips carries hint_us >= 0, max(that, min(hint_us,
 * open_us_max)). open_until = now + duration, saturating at FB_TIME_MAX.
 *
 * Generations start at 1 and every state change increments `generation`
 * (manual changes too, even to the same state). A result whose permit
 * carries another generation is stale: it is counted in stats.stale and
 * otherwise ignored (it can neither trip nor close the breaker); so is a second
 * report for the same probe. REJECTED and UNTRACKED permits are no-ops.
 *
 * Manual states: FORCED_OPEN rejects everything (retry_in and open_until are
 * FB_TIME_MAX). FORCED_CLOSED admits and records (the rate is visible) but
 * never trips. DISABLED admits UNTRACKED permits and records nothing.
 * METRICS_ONLY admits, records and emits one THRESHOLD_EXCEEDED event
 * (from == to == METRICS_ONLY, not a transition: no new generation) each time a
 * rule starts to be broken; it re-arms once no rule is broken. set_state() is
 * always a transition (cause MANUAL), to OPEN counts as a trip. sync() to the
 * current state is not a transition (an OPEN deadline is still copied).
 *
 * Events: every transition calls on_event after the breaker has changed; the
 * counts are the window's just before it was cleared. The callback must not
 * call back into the same breaker.
 *
 * No allocation, no clock: all state lives in the struct. See docs/breaker.md.
 */
#ifndef FB_BREAKER_H
#define FB_BREAKER_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "fb.h"
#include "rng.h"

#define FB_BREAKER_CALLS_MAX 1024  /* largest count window */
#define FB_BREAKER_BUCKETS_MAX 128 /* most buckets in a time window */
#define FB_BREAKER_PROBES_MAX 16   /* most half-open permits */

#define FB_BREAKER_STATE_MAP(XX)                                                                   \
    XX(CLOSED, "closed")                                                                           \
    XX(OPEN, "open")                                                                               \
    XX(HALF_OPEN, "half_open")                                                                     \
    XX(FORCED_OPEN, "forced_open")                                                                 \
    XX(FORCED_CLOSED, "forced_closed")                                                             \
    XX(DISABLED, "disabled")                                                                       \
    XX(METRICS_ONLY, "metrics_only")

typedef enum fb_breaker_state {
#define FB_BS_ENUM(name, text) FB_BREAKER_##name,
    FB_BREAKER_STATE_MAP(FB_BS_ENUM)
#undef FB_BS_ENUM
        FB_BREAKER_STATE_COUNT
} fb_breaker_state;

#define FB_BREAKER_CAUSE_MAP(XX)                                                                   \
    XX(CONSECUTIVE_FAILURES, "consecutive_failures")                                               \
    XX(FAILURE_RATE, "failure_rate")                                                               \
    XX(SLOW_CALL_RATE, "slow_call_rate")                                                           \
    XX(OPEN_ELAPSED, "open_elapsed")                                                               \
    XX(PROBE_FAILED, "probe_failed")                                                               \
    XX(PROBES_SUCCEEDED, "probes_succeeded")                                                       \
    XX(PROBE_LEASE_EXPIRED, "probe_lease_expired")                                                 \
    XX(MANUAL, "manual")                                                                           \
    XX(THRESHOLD_EXCEEDED, "threshold_exceeded") /* METRICS_ONLY: would have opened */             \
    XX(SYNC, "sync")                             /* state copied from a shared store */            \
    XX(HALF_OPEN_MAX_WAIT, "half_open_max_wait") /* half_open_max_us ran out */                    \
    XX(IMMEDIATE, "immediate")                   /* a failure that opens at once (trip NOW) */     \
    XX(FAILURE_COUNT, "failure_count")           /* COOLDOWN mode: the failure count rule */

typedef enum fb_breaker_cause {
#define FB_BC_ENUM(name, text) FB_CAUSE_##name,
    FB_BREAKER_CAUSE_MAP(FB_BC_ENUM)
#undef FB_BC_ENUM
        FB_CAUSE_COUNT
} fb_breaker_cause;

typedef enum fb_breaker_mode {
    FB_BREAKER_MODE_CONSECUTIVE = 0,
    FB_BREAKER_MODE_COUNT_WINDOW,
    FB_BREAKER_MODE_TIME_WINDOW,
    FB_BREAKER_MODE_COOLDOWN /* LiteLLM's cooldown counters: see fb_cooldown_rule */
} fb_breaker_mode;

/*
 * COOLDOWN mode (LiteLLM Router). Its counts live beside the state machine,
 * as LiteLLM's cache keys do: every SUCCESS and FAILURE is counted whatever
 * the state or generation, no transition clears them, and each count
 * expires (back to 0) when it was last raised more than window_us ago
 * (an in-memory TTL refreshed on every increment: now > last + window), or,
 * with ttl_from_first, when it was first raised more than window_us ago.
 * A FAILURE is then judged (unless its trip is NEVER) and, breaking the
 * rule, opens the breaker, or restarts the open period when already open
 * (unless keep_open).
 * The mode needs recovery = FB_RECOVER_CLOSE: there is no half-open.
 */
typedef enum fb_cooldown_rule {
    FB_COOLDOWN_RATE = 0, /* default (LiteLLM v2): successes and failures counted apart; opens
                             when failures + successes >= minimum_calls and failures / (failures
                             + successes) breaks failure_rate (trip_compare) */
    FB_COOLDOWN_COUNT     /* LiteLLM v1 (allowed_fails): failures only; a failure that would
                             bring the count to the limit (failure_limit, else
                             consecutive_failures) opens and is not counted */
} fb_cooldown_rule;

typedef enum fb_open_growth {
    FB_OPEN_GROWTH_NONE = 0,    /* always open_us */
    FB_OPEN_GROWTH_LINEAR,      /* open_us * n for the n-th consecutive trip */
    FB_OPEN_GROWTH_EXPONENTIAL, /* open_us * 2^(n-1) */
    FB_OPEN_GROWTH_LINEAR_DECAY /* Envoy outlier ejection: a multiplier k, +1 per open (while
                                   k * open_us < open_us_max + open_us), -1 per multiple of
                                   decay_us passed while closed; open_us * k, capped */
} fb_open_growth;

/* How the open period ends. */
typedef enum fb_recovery {
    FB_RECOVER_HALF_OPEN = 0, /* default: probes decide */
    FB_RECOVER_CLOSE          /* no half-open: the period's end closes the breaker (LiteLLM
                                 cooldown expiry, Envoy un-ejection) */
} fb_recovery;

/* What honor_hint does with a hint. */
typedef enum fb_hint_mode {
    FB_HINT_AT_LEAST = 0, /* default: open at least until now + hint */
    FB_HINT_REPLACES      /* the hint is the open duration (capped at open_us_max); a hint of 0
                             keeps the failure from opening (LiteLLM: Retry-After as
                             cooldown time) */
} fb_hint_mode;

/*
 * Breakers that may not all open (Envoy max_ejection_percent across a
 * cluster's hosts): a member may open while open * 100 / members <
 * max_percent; a refused trip changes no state but clears the run. The
 * caller owns it and points each member's config at it.
 */
typedef struct fb_eject_group {
    uint32_t members;
    double max_percent;
    uint32_t open;    /* members open now; kept by the members */
    uint64_t refused; /* trips refused */
} fb_eject_group;

/* A result admitted before the last transition (another generation). */
typedef enum fb_late_result {
    FB_LATE_DROP = 0, /* default: counted only in stats.stale (gobreaker) */
    FB_LATE_COUNT,    /* counted by the current state, which may transition (resilience4j, Polly) */
    FB_LATE_AS_ADMITTED, /* every result is judged by the rules of the state its call was admitted
                           in, whatever the state now, on two counts: failures in a row (cleared
                           by any success and on entering CLOSED) and half-open successes
                           (cleared on entering any state). A CLOSED call's failure opens when
                           the run reaches consecutive_failures (trip_compare), a probe's failure
                           opens; either re-opens an OPEN breaker from now. half_open_permits
                           probe successes close, from any state. CONSECUTIVE mode only
                           (pybreaker's calling(): the block runs outside the lock) */
    FB_LATE_RUN /* a CALL's result counts in one failures-in-a-row run whatever the state now
                   (any CALL success clears it, entering CLOSED clears it, opening does not): a
                   failure that brings it to consecutive_failures (trip_compare) opens CLOSED or
                   HALF_OPEN from now and leaves OPEN as it is; a success never closes. A probe's
                   result counts only in its own half-open period (else it is stale): its failure
                   raises the run and opens, its successes close. In the manual states the rules
                   of COUNT apply. CONSECUTIVE mode only (cockatiel's ConsecutiveBreaker) */
} fb_late_result;

/* What half_open_permits limits. */
typedef enum fb_probe_limit {
    FB_PROBES_CONCURRENT = 0, /* default: probes in flight; a report frees its slot */
    FB_PROBES_PER_PERIOD,     /* probes admitted per half-open period; only IGNORE gives one back */
    FB_PROBES_NONE /* HALF_OPEN admits every call, no lease (pybreaker's calling()); needs
                      late_results AS_ADMITTED, which judges them */
} fb_probe_limit;

/* How half-open decides. */
typedef enum fb_probe_verdict {
    FB_VERDICT_FIRST_FAILURE = 0, /* default: any failure (or slow probe) re-opens; permits
                                     successes close (gobreaker, Polly, pybreaker, opossum) */
    FB_VERDICT_RATE /* once min(minimum_calls, permits) probes reported: the rate rules decide,
                       broken re-opens, else closes (resilience4j) */
} fb_probe_verdict;

/* A comparison at a threshold or deadline: reaching it, or passing it. */
typedef enum fb_compare {
    FB_CMP_REACH = 0, /* default: >= (the value equal to the threshold counts) */
    FB_CMP_PASS       /* > */
} fb_compare;

/* When the trip rules are looked at in CLOSED and METRICS_ONLY. */
typedef enum fb_evaluate {
    FB_EVAL_EVERY_RECORD = 0, /* default: after every SUCCESS/FAILURE, and when buckets expire */
    FB_EVAL_ON_FAILURE,       /* only after a FAILURE is recorded (gobreaker, Polly, opossum) */
    FB_EVAL_AT_ADMISSION,     /* only in allow(), before admitting: a broken rule trips and the
                                 call is rejected */
    FB_EVAL_RECORD_ONLY       /* after every SUCCESS/FAILURE only: buckets that expire change
                                 nothing until the next result (resilience4j) */
} fb_evaluate;

/* TIME_WINDOW: where buckets start and which bucket a result lands in. */
typedef enum fb_bucket_anchor {
    FB_BUCKETS_EPOCH = 0,   /* default: multiples of bucket_us since time 0; a result lands in the
                               bucket of the time it is recorded (resilience4j, 1 s buckets) */
    FB_BUCKETS_FIRST_EVENT, /* a bucket starts at the first result that finds the newest one
                               bucket_us old; a bucket leaves whole once window_us old (Polly) */
    FB_BUCKETS_STATE_START  /* multiples of bucket_us since the state began; a result lands in
                               the bucket of its admission, or nowhere if that one has left
                               (gobreaker v2 BucketPeriod) */
} fb_bucket_anchor;

/* Where HALF_OPEN goes when half_open_max_us runs out. */
typedef enum fb_half_open_expiry {
    FB_EXPIRE_TO_OPEN = 0, /* default (resilience4j transitionToStateAfterWaitDuration OPEN) */
    FB_EXPIRE_TO_CLOSED
} fb_half_open_expiry;

/* What the window counts, and whether a transition clears it (TIME_WINDOW). */
typedef enum fb_window_scope {
    FB_WINDOW_PER_STATE = 0, /* default: results are the calls; every state change starts a
                                fresh window */
    FB_WINDOW_FIRES /* opossum: every allow(), admitted or rejected, is a call in the bucket of its
                       time; failures are added when reported, in any state; the window is never
                       cleared. EPOCH buckets only; no slow calls; probe_verdict FIRST_FAILURE */
} fb_window_scope;

typedef struct fb_breaker_event {
    fb_time_us at_us;
    fb_breaker_state from;
    fb_breaker_state to;
    fb_breaker_cause cause;
    uint32_t calls; /* outcomes in the window when the event fired */
    uint32_t failures;
    uint32_t slow;
    uint32_t consecutive_failures;
    uint32_t trips;           /* consecutive trips without a close (>= 1 when opening) */
    fb_time_us open_until_us; /* `to` OPEN: deadline; FORCED_OPEN: FB_TIME_MAX; else FB_TIME_NONE */
    uint64_t generation;      /* generation after the change */
} fb_breaker_event;

typedef void (*fb_breaker_event_fn)(void *ctx, const fb_breaker_event *ev);

/*
 * The zero rule (fb.h): zero in a field means the default written beside it;
 * numbers the breaker cannot work without default to a value, everything
 * optional (slow threshold, jitter, hints, half-open deadline) to off, and
 * every enum's zero member is today's behaviour. fb_breaker_init() returns
 * FB_EINVAL for an unknown enum value, open_jitter > 0 without rng, or
 * window_us not a multiple of window_buckets; FB_ERANGE for a rate outside
 * (0, 1], a size above its _MAX, a negative duration, open_jitter outside
 * [0, 1), or open_us_max < open_us. Every field is checked whatever the mode.
 * docs/breaker.md "Library semantics" maps each library's settings onto these.
 */
typedef struct fb_breaker_config {
    fb_breaker_mode mode;          /* default CONSECUTIVE */
    uint32_t consecutive_failures; /* default 5 */
    uint32_t window_calls;         /* COUNT_WINDOW size; default 100, max FB_BREAKER_CALLS_MAX */
    fb_time_us window_us;          /* TIME_WINDOW length; default 60 s */
    uint32_t window_buckets;       /* TIME_WINDOW buckets; default 10; window_us % buckets == 0 */
    uint32_t minimum_calls;        /* default 100 (FB_WINDOW_FIRES: 0, no minimum);
                                      COUNT_WINDOW uses min(this, window_calls) */
    double failure_rate;           /* threshold in (0, 1]; default 0.5 */
    fb_time_us slow_us;            /* a call is slow when duration > slow_us; 0 = off */
    double slow_rate;              /* threshold in (0, 1]; default 1.0 */
    uint32_t half_open_permits;    /* default 1, max FB_BREAKER_PROBES_MAX */
    fb_time_us probe_lease_us;  /* a probe not reported by then counts as failed; default open_us */
    fb_time_us open_us;         /* default 60 s */
    fb_open_growth open_growth; /* default NONE */
    fb_time_us open_us_max; /* cap on the grown open duration and on hints; default open_us * 10 */
    double open_jitter;     /* open duration * U(1 - f, 1 + f); default 0; needs rng */
    fb_switch honor_hint;   /* open at least until now + hint (Retry-After); default OFF */
    fb_switch hint_whole_seconds;   /* a hint that is not a whole number of seconds is none
                                       (LiteLLM's int() of the header); default OFF */
    fb_breaker_state initial;       /* default CLOSED */
    fb_late_result late_results;    /* default DROP */
    fb_probe_limit probe_limit;     /* default CONCURRENT */
    fb_probe_verdict probe_verdict; /* default FIRST_FAILURE */
    fb_compare open_deadline;       /* OPEN -> HALF_OPEN at now >= open_until (default) or > */
    fb_compare trip_compare;        /* rate and run vs threshold: >= (default) or > */
    fb_evaluate evaluate;           /* default EVERY_RECORD */
    fb_bucket_anchor bucket_anchor; /* default EPOCH */
    fb_effect cancelled_as;      /* what an FB_EFFECT_CANCELLED result counts as; default IGNORE */
    fb_time_us half_open_max_us; /* longest stay in HALF_OPEN; 0 = no limit */
    fb_half_open_expiry half_open_expiry; /* where it then goes; default OPEN */
    fb_window_scope window_scope;         /* default PER_STATE */
    /* FB_VERDICT_RATE: HALF_OPEN decides after min(this, half_open_permits) results; 0 =
     * minimum_calls (after its cap at window_calls). resilience4j: minimumNumberOfCalls as given */
    uint32_t half_open_minimum;
    /* ON: OPEN -> HALF_OPEN is a timer due at open_until (open_deadline REACH; + 1 us with PASS):
     * the transition is stamped at its due time however late it is noticed (resilience4j
     * automaticTransitionFromOpenToHalfOpenEnabled); default OFF */
    fb_switch open_timer;
    /* ON: half_open_max_us is a timer from entering HALF_OPEN: the transition is stamped at
     * entry + max and an OPEN it enters counts from then (resilience4j
     * maxWaitDurationInHalfOpenState); default OFF: at the call that finds it expired */
    fb_switch half_open_timer;
    /* ON: in HALF_OPEN an IGNORE (or ignored CANCELLED) result gives a permit back whatever state
     * its call was admitted in (resilience4j releasePermission()); half-open then has
     * FB_BREAKER_PROBES_MAX slots; needs probe_limit PER_PERIOD; default OFF */
    fb_switch release_any;
    fb_time_us closed_interval_us; /* CLOSED: the first call more than this after the state (or
                                      the last interval) began starts a new generation with
                                      fresh counts, without a transition; 0 = never (gobreaker
                                      Interval) */

    fb_switch open_elapses_on_result; /* ON: a result reported once the open period is over
                                         first moves OPEN to HALF_OPEN, stamped at its time (and
                                         is then another generation's); default OFF: only
                                         allow()/poll() do (gobreaker's afterRequest reads
                                         currentState, which makes the move) */
    /* Gateway forms (docs/breaker.md, "Library semantics"); zero keeps the behaviour above. */
    fb_recovery recovery;           /* default HALF_OPEN */
    fb_cooldown_rule cooldown_rule; /* COOLDOWN mode; default RATE */
    fb_switch ttl_from_first;       /* COOLDOWN mode: a count expires window_us after its first
                                       increment, not its last (a TTL set once, as LiteLLM's
                                       InMemoryCache.set_cache keeps an unexpired one); default
                                       OFF */
    fb_switch keep_open;            /* COOLDOWN mode: a failure that breaks the rule while open
                                       leaves the open deadline as it is (the cooldown's TTL is
                                       kept); default OFF: the open period restarts */
    fb_hint_mode hint_mode;         /* default AT_LEAST */
    fb_time_us decay_us;            /* LINEAR_DECAY: the multiplier's decay period; default
                                       open_us */
    fb_time_us open_align_us;       /* open deadlines rounded up to a multiple of this (Envoy's
                                       interval sweeps); 0 = not rounded */
    fb_eject_group *eject_group;    /* caller-owned; NULL = none */
    fb_rng *rng;                    /* caller-owned; only used when open_jitter > 0 */
    fb_breaker_event_fn on_event;   /* may be NULL */
    void *event_ctx;
} fb_breaker_config;

typedef enum fb_permit_kind {
    FB_PERMIT_REJECTED = 0,
    FB_PERMIT_CALL,     /* admitted in CLOSED (or a state that records) */
    FB_PERMIT_PROBE,    /* admitted in HALF_OPEN, holds a lease slot */
    FB_PERMIT_UNTRACKED /* admitted in DISABLED: nothing will be recorded */
} fb_permit_kind;

typedef struct fb_breaker_permit {
    uint64_t generation;
    uint64_t id; /* admission counter: which admission this is (0 = not from a breaker) */
    fb_time_us admitted_us;
    uint8_t kind; /* fb_permit_kind */
    uint8_t slot; /* lease slot of a probe */
} fb_breaker_permit;

/*
 * What a call ended with, for fb_breaker_record(). Written with designated
 * initialisers, {.effect = ..., .duration_us = ..., .hint_us = FB_TIME_NONE},
 * so the two durations cannot be swapped silently. A hint of 0 changes nothing.
 */
typedef struct fb_breaker_result {
    fb_effect effect;
    fb_time_us duration_us; /* how long the call took: decides slowness */
    fb_time_us hint_us;     /* the server's Retry-After, or FB_TIME_NONE */
    fb_trip trip;           /* a FAILURE: the rules decide (default), opens at once, or never */
    uint32_t failure_limit; /* COOLDOWN count rule: this failure's limit; 0 = the config's */
    /* FB_WINDOW_FIRES: ON when the result comes from outside the library's timers (a caller's
     * settle or abort, I/O): at a bucket rotation due at its time it comes after the rotation.
     * Default (OFF): a result at a rotation from a call made before the previous one comes
     * before it, as a result on a timer set at the call does (opossum's timer order) */
    fb_switch after_timers;
} fb_breaker_result;

typedef struct fb_breaker_stats {
    uint64_t admitted;
    uint64_t rejected;
    uint64_t stale; /* results dropped: another generation (LATE_DROP) or a second report */
    uint64_t late;  /* results of another generation counted (LATE_COUNT) */
    uint64_t opens;
    uint64_t transitions;
    uint64_t refused_opens; /* trips the eject group refused */
} fb_breaker_stats;

typedef struct fb_breaker {
    /* private: use the functions below */
    fb_breaker_config cfg; /* defaults applied; minimum_calls is the effective minimum */
    fb_breaker_state state;
    uint64_t generation;
    fb_time_us open_until_us;
    fb_time_us state_since_us;
    fb_time_us closed_until_us; /* closed_interval_us: when the counts start afresh; else MAX */
    fb_time_us allow_until_us;  /* allow() admits at once while now <= this (see allow_until()) */
    fb_time_us reject_until_us; /* ... and rejects at once while now <= this (an OPEN period) */
    uint32_t trips;
    uint32_t consecutive_failures;
    /* count window: ring of bits */
    uint64_t fail_bits[FB_BREAKER_CALLS_MAX / 64];
    uint64_t slow_bits[FB_BREAKER_CALLS_MAX / 64];
    uint32_t ring_head; /* count window: next slot; time window: newest bucket's slot */
    uint32_t ring_len;
    /* time window: buckets */
    struct {
        uint32_t calls, failures, slow;
    } buckets[FB_BREAKER_BUCKETS_MAX];
    fb_time_us bucket_start_us[FB_BREAKER_BUCKETS_MAX]; /* FIRST_EVENT: when each began */
    int64_t bucket_index;       /* absolute index of the newest bucket (EPOCH, STATE_START) */
    fb_time_us newest_start_us; /* ... and when it began: origin + bucket_index * bucket_us */
    /* FB_WINDOW_FIRES: the bucket that left when bucket_index last moved, for a failure that
       belongs before that rotation (opossum's timer order) */
    uint32_t gone_calls, gone_failures;
    fb_time_us bucket_origin_us; /* 0 (EPOCH) or when the state began (STATE_START) */
    fb_time_us bucket_us;
    /* running totals over the window */
    uint32_t calls, failures, slow;
    bool threshold_signalled; /* METRICS_ONLY: event emitted for this excursion */
    bool first_event;         /* TIME_WINDOW with FB_BUCKETS_FIRST_EVENT */
    bool plain_record; /* record()'s short way may apply: no timers, cooldown counts, late-result
                          rules, hint rewriting or opossum window, EPOCH buckets (set by init) */
    /* half-open */
    fb_time_us lease_until_us[FB_BREAKER_PROBES_MAX];
    uint64_t probe_id[FB_BREAKER_PROBES_MAX]; /* the permit id holding each slot */
    uint32_t probes_in_use;                   /* bitmask of leased slots */
    uint32_t probe_successes;
    uint32_t probes_admitted; /* this half-open period (PER_PERIOD) */
    uint32_t probes_released; /* release_any: permits given back by calls of another state */
    uint64_t admissions;      /* permits handed out: the next permit's id - 1 */
    /* late_results AS_ADMITTED: pybreaker's counter and success_counter; RUN: the run */
    uint32_t adm_failures, adm_successes;
    /* COOLDOWN mode's counts and their expiry (now > until: expired) */
    uint32_t cd_failures, cd_successes;
    fb_time_us cd_failures_until, cd_successes_until;
    /* LINEAR_DECAY */
    uint32_t growth_k;
    fb_time_us closed_at_us;
    bool in_group; /* counted open in eject_group */
    fb_breaker_stats stats;
} fb_breaker;

/* An eject group of `members` breakers, of which under max_percent % may be open. */
void fb_eject_group_init(fb_eject_group *g, uint32_t members, double max_percent);

/* Validate cfg (NULL = all defaults), apply defaults, start in cfg->initial. */
int fb_breaker_init(fb_breaker *b, const fb_breaker_config *cfg, fb_time_us now_us);
/* cfg with the defaults fb_breaker_init() applies filled in (reports show the settings in
 * effect). Returns FB_OK, or what fb_breaker_init() would. */
int fb_breaker_config_effective(fb_breaker_config *cfg);

/*
 * Ask to make a call. Returns true and fills *permit when admitted; returns
 * false (permit->kind == FB_PERMIT_REJECTED) when rejected. Performs the lazy
 * transitions first (open elapsed, lease expiry, window advance).
 */
bool fb_breaker_allow(fb_breaker *b, fb_time_us now_us, fb_breaker_permit *permit);

/*
 * Report the result of an admitted call: fb_breaker_record(b, &permit,
 * &(fb_breaker_result){.effect = e, .duration_us = d, .hint_us = h}, now_us).
 * FB_EFFECT_IGNORE releases a probe's lease without counting anything;
 * FB_EFFECT_CANCELLED counts as cfg.cancelled_as.
 */
void fb_breaker_record(fb_breaker *b, const fb_breaker_permit *permit,
                       const fb_breaker_result *result, fb_time_us now_us);

/* A permit of `kind` handed out now (breaker.c's admissions, and the inline one below). */
static inline void fb_breaker__admit(fb_breaker *b, fb_breaker_permit *p, fb_permit_kind kind,
                                     uint32_t slot, fb_time_us now_us) {
    p->generation = b->generation;
    p->id = ++b->admissions;
    p->admitted_us = now_us;
    p->kind = (uint8_t)kind;
    p->slot = (uint8_t)slot;
    b->stats.admitted++;
}

/* A rejection's permit, counted (breaker.c's, and the inline one below). */
static inline void fb_breaker__reject(fb_breaker *b, fb_breaker_permit *p, fb_time_us now_us) {
    p->generation = b->generation;
    p->id = 0;
    p->admitted_us = now_us;
    p->kind = FB_PERMIT_REJECTED;
    p->slot = 0;
    b->stats.rejected++;
}

/*
 * fb_breaker_allow(), its common cases inline: a CLOSED breaker with nothing to move or
 * evaluate first admits with one compare, an OPEN one whose period runs on rejects with two (a
 * client asks before every attempt).
 */
static inline bool fb_breaker_allow_inline(fb_breaker *b, fb_time_us now_us,
                                           fb_breaker_permit *permit) {
    if (now_us <= b->allow_until_us) {
        fb_breaker__admit(b, permit, FB_PERMIT_CALL, 0, now_us);
        return true;
    }
    if (now_us > b->reject_until_us) return fb_breaker_allow(b, now_us, permit);
    fb_breaker__reject(b, permit, now_us);
    return false;
}

/* Perform due lazy transitions without asking for a permit. */
void fb_breaker_poll(fb_breaker *b, fb_time_us now_us);
/*
 * When the next timed transition is due (open_timer, half_open_timer), or
 * FB_TIME_NONE: a caller with a clock polls the breaker then, so that the
 * transition happens (and its event fires) on time. Without the poll it still
 * happens, stamped at its due time, at the next allow()/record()/poll().
 */
fb_time_us fb_breaker_next_timer(const fb_breaker *b);

/* Manual transition to any state (cause MANUAL). CLOSED/HALF_OPEN start a fresh window. */
int fb_breaker_set_state(fb_breaker *b, fb_breaker_state to, fb_time_us now_us);

/*
 * Copy a state decided elsewhere (a shared store): go to `to` with the given
 * open deadline, cause SYNC. Used to model breakers shared across pods.
 */
int fb_breaker_sync(fb_breaker *b, fb_breaker_state to, fb_time_us open_until_us,
                    fb_time_us now_us);

/* State as of the last call (no lazy transition is performed). */
fb_breaker_state fb_breaker_state_get(const fb_breaker *b);
/* Would fb_breaker_allow() admit now? Changes nothing (an elapsed open period admits). */
bool fb_breaker_admits(const fb_breaker *b, fb_time_us now_us);
/*
 * When rejected now: how long until the breaker may admit again (0 if it would
 * now). OPEN: until open_until; FORCED_OPEN: FB_TIME_MAX; HALF_OPEN with every
 * slot leased: until the earliest lease ends (when that probe's fate is known).
 */
fb_time_us fb_breaker_retry_in(const fb_breaker *b, fb_time_us now_us);
/* OPEN: the deadline; FORCED_OPEN: FB_TIME_MAX; otherwise FB_TIME_NONE. */
fb_time_us fb_breaker_open_until(const fb_breaker *b);
uint64_t fb_breaker_generation(const fb_breaker *b);
const fb_breaker_stats *fb_breaker_stats_get(const fb_breaker *b);
/*
 * Failure rate over the current window as of the last call, or -1 when below
 * the minimum calls, in CONSECUTIVE mode, or in a state that keeps no window.
 */
double fb_breaker_failure_rate(const fb_breaker *b);

const char *fb_breaker_state_name(fb_breaker_state s);
const char *fb_breaker_cause_name(fb_breaker_cause c);

#endif /* FB_BREAKER_H */
