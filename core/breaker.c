/*
 * breaker.c - circuit breaker driven by caller-supplied time.
 *
 * The contract is the comment at the top of breaker.h; docs/breaker.md says
 * why each rule was chosen. The hot path is allow() in CLOSED and record() of
 * a current CALL permit: a few compares, one ring or bucket update and a rate
 * check that divides only when the rate is within a hair of the threshold.
 */
#include "breaker.h"

#include <float.h>
#include <string.h>

#define DEFAULT_CONSECUTIVE 5u
#define DEFAULT_WINDOW_CALLS 100u
#define DEFAULT_WINDOW_US (60 * FB_US_PER_S)
#define DEFAULT_WINDOW_BUCKETS 10u
#define DEFAULT_MINIMUM_CALLS 100u
#define DEFAULT_FAILURE_RATE 0.5
#define DEFAULT_SLOW_RATE 1.0
#define DEFAULT_PERMITS 1u
#define DEFAULT_OPEN_US (60 * FB_US_PER_S)
#define DEFAULT_OPEN_MAX_FACTOR 10

/*
 * rate_reached() rejects without dividing when count < calls * rate * this:
 * the margin (4 ulps) covers the rounding of the two products, so the fast
 * answer never disagrees with the exact test count / calls >= rate.
 */
#define RATE_FILTER (1.0 - 4.0 * DBL_EPSILON)

#define NO_CAUSE (-1)

/* Each enum field within its members. */
static bool enums_valid(const fb_breaker_config *c) {
    return (unsigned)c->mode <= FB_BREAKER_MODE_COOLDOWN &&
           (unsigned)c->open_growth <= FB_OPEN_GROWTH_LINEAR_DECAY &&
           (unsigned)c->recovery <= FB_RECOVER_CLOSE &&
           (unsigned)c->cooldown_rule <= FB_COOLDOWN_COUNT &&
           (unsigned)c->ttl_from_first <= FB_OFF && (unsigned)c->keep_open <= FB_OFF &&
           (unsigned)c->hint_whole_seconds <= FB_OFF &&
           (unsigned)c->hint_mode <= FB_HINT_REPLACES &&
           (unsigned)c->initial < FB_BREAKER_STATE_COUNT && (unsigned)c->honor_hint <= FB_OFF &&
           (unsigned)c->open_elapses_on_result <= FB_OFF &&
           (unsigned)c->late_results <= FB_LATE_RUN && (unsigned)c->probe_limit <= FB_PROBES_NONE &&
           (unsigned)c->probe_verdict <= FB_VERDICT_RATE &&
           (unsigned)c->open_deadline <= FB_CMP_PASS && (unsigned)c->trip_compare <= FB_CMP_PASS &&
           (unsigned)c->evaluate <= FB_EVAL_RECORD_ONLY && (unsigned)c->open_timer <= FB_OFF &&
           (unsigned)c->half_open_timer <= FB_OFF && (unsigned)c->release_any <= FB_OFF &&
           (unsigned)c->bucket_anchor <= FB_BUCKETS_STATE_START &&
           (unsigned)c->cancelled_as <= FB_EFFECT_FAILURE &&
           (unsigned)c->half_open_expiry <= FB_EXPIRE_TO_CLOSED &&
           (unsigned)c->window_scope <= FB_WINDOW_FIRES;
}

/* Zero -> default, then range checks. Validates a copy: *b is untouched on error. */
static int normalise(fb_breaker_config *c) {
    if (!enums_valid(c)) return FB_EINVAL;
    /* Written so that NaN fails too. */
    if (!(c->failure_rate == 0.0 || (c->failure_rate > 0.0 && c->failure_rate <= 1.0)) ||
        !(c->slow_rate == 0.0 || (c->slow_rate > 0.0 && c->slow_rate <= 1.0)))
        return FB_ERANGE;
    if (c->window_calls > FB_BREAKER_CALLS_MAX || c->window_buckets > FB_BREAKER_BUCKETS_MAX ||
        c->half_open_permits > FB_BREAKER_PROBES_MAX)
        return FB_ERANGE;
    if (c->window_us < 0 || c->slow_us < 0 || c->probe_lease_us < 0 || c->open_us < 0 ||
        c->open_us_max < 0 || c->half_open_max_us < 0 || c->closed_interval_us < 0 ||
        c->decay_us < 0 || c->open_align_us < 0)
        return FB_ERANGE;
    /* pybreaker calling(), cockatiel: their own counts, and probes judged only by them */
    if (((c->late_results == FB_LATE_AS_ADMITTED || c->late_results == FB_LATE_RUN) &&
         c->mode != FB_BREAKER_MODE_CONSECUTIVE) ||
        (c->probe_limit == FB_PROBES_NONE && c->late_results != FB_LATE_AS_ADMITTED))
        return FB_EINVAL;
    /* LiteLLM's cooldown has no half-open */
    if (c->mode == FB_BREAKER_MODE_COOLDOWN && c->recovery != FB_RECOVER_CLOSE) return FB_EINVAL;
    if (!(c->open_jitter >= 0.0 && c->open_jitter < 1.0)) return FB_ERANGE;
    if (c->open_jitter > 0.0 && !c->rng) return FB_EINVAL;

    if (!c->consecutive_failures) c->consecutive_failures = DEFAULT_CONSECUTIVE;
    if (!c->window_calls) c->window_calls = DEFAULT_WINDOW_CALLS;
    if (!c->window_us) c->window_us = DEFAULT_WINDOW_US;
    if (!c->window_buckets) c->window_buckets = DEFAULT_WINDOW_BUCKETS;
    if (!c->minimum_calls && c->window_scope != FB_WINDOW_FIRES)
        c->minimum_calls = DEFAULT_MINIMUM_CALLS;
    if (c->failure_rate == 0.0) c->failure_rate = DEFAULT_FAILURE_RATE;
    if (c->slow_rate == 0.0) c->slow_rate = DEFAULT_SLOW_RATE;
    if (!c->half_open_permits) c->half_open_permits = DEFAULT_PERMITS;
    if (!c->open_us) c->open_us = DEFAULT_OPEN_US;
    if (!c->probe_lease_us) c->probe_lease_us = c->open_us;
    if (!c->decay_us) c->decay_us = c->open_us;
    if (!c->open_us_max)
        c->open_us_max = c->open_us > FB_TIME_MAX / DEFAULT_OPEN_MAX_FACTOR
                             ? FB_TIME_MAX
                             : c->open_us * DEFAULT_OPEN_MAX_FACTOR;
    if (c->honor_hint == FB_DEFAULT) c->honor_hint = FB_OFF;
    if (c->open_elapses_on_result == FB_DEFAULT) c->open_elapses_on_result = FB_OFF;

    if (c->window_us % (fb_time_us)c->window_buckets != 0) return FB_EINVAL;
    if (c->window_scope == FB_WINDOW_FIRES &&
        (c->mode != FB_BREAKER_MODE_TIME_WINDOW || c->bucket_anchor != FB_BUCKETS_EPOCH ||
         c->slow_us > 0 || c->probe_verdict != FB_VERDICT_FIRST_FAILURE))
        return FB_EINVAL;
    if (c->open_us_max < c->open_us) return FB_ERANGE;
    if (c->release_any == FB_ON && c->probe_limit != FB_PROBES_PER_PERIOD) return FB_EINVAL;
    if (c->mode == FB_BREAKER_MODE_COUNT_WINDOW && c->minimum_calls > c->window_calls)
        c->minimum_calls = c->window_calls;
    return FB_OK;
}

static fb_time_us floor_div(fb_time_us a, fb_time_us b) {
    fb_time_us q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static bool records_window(fb_breaker_state s) {
    return s == FB_BREAKER_CLOSED || s == FB_BREAKER_FORCED_CLOSED || s == FB_BREAKER_METRICS_ONLY;
}

static bool first_event(const fb_breaker *b) {
    return b->first_event;
}

static void clear_window(fb_breaker *b, fb_time_us now_us) {
    b->calls = b->failures = b->slow = 0;
    b->consecutive_failures = 0;
    b->ring_head = 0;
    b->ring_len = 0;
    if (b->cfg.mode == FB_BREAKER_MODE_COUNT_WINDOW) {
        size_t words = (b->cfg.window_calls + 63u) / 64u;
        memset(b->fail_bits, 0, words * sizeof b->fail_bits[0]);
        memset(b->slow_bits, 0, words * sizeof b->slow_bits[0]);
    } else if (b->cfg.mode == FB_BREAKER_MODE_TIME_WINDOW) {
        memset(b->buckets, 0, b->cfg.window_buckets * sizeof b->buckets[0]);
        b->bucket_origin_us = b->cfg.bucket_anchor == FB_BUCKETS_STATE_START ? now_us : 0;
        b->bucket_index = floor_div(now_us - b->bucket_origin_us, b->bucket_us);
        b->newest_start_us = b->bucket_origin_us + b->bucket_index * b->bucket_us;
    }
}

/* EPOCH, STATE_START: the newest bucket still covers now (or time went backwards). */
static inline bool newest_covers(const fb_breaker *b, fb_time_us now_us) {
    fb_time_us start = b->newest_start_us;
    return now_us < start || now_us - start < b->bucket_us;
}

/*
 * The last time allow()'s short way applies (CLOSED, no evaluation at admission, no FIRES
 * count, before closed_until_us and, in a time window of EPOCH or STATE_START buckets, in the
 * newest bucket: newest_covers()); INT64_MIN when it does not. And the last time its
 * rejection applies (rejects_open(): OPEN without timers, the period running on; no FIRES
 * count). Kept by every step that changes one of these: enter(), closed_interval_due(),
 * advance(), fb_breaker_sync().
 */
static void allow_until(fb_breaker *b) {
    const fb_breaker_config *c = &b->cfg;
    fb_time_us until = INT64_MIN;
    b->reject_until_us = INT64_MIN;
    if (b->state == FB_BREAKER_OPEN && c->open_timer != FB_ON && c->half_open_timer != FB_ON &&
        c->window_scope != FB_WINDOW_FIRES)
        b->reject_until_us =
            c->open_deadline == FB_CMP_PASS ? b->open_until_us : b->open_until_us - 1;
    if (b->state == FB_BREAKER_CLOSED && c->evaluate != FB_EVAL_AT_ADMISSION &&
        c->window_scope != FB_WINDOW_FIRES && !first_event(b)) {
        until = b->closed_until_us;
        if (c->mode == FB_BREAKER_MODE_TIME_WINDOW &&
            b->newest_start_us + (b->bucket_us - 1) < until)
            until = b->newest_start_us + (b->bucket_us - 1);
    }
    b->allow_until_us = until;
}

/* The newest bucket still covers now (or time went backwards: stay in it). */
static bool in_newest_bucket(const fb_breaker *b, fb_time_us now_us) {
    if (first_event(b))
        return b->ring_len == 0 ||
               now_us -
                       b->bucket_start_us[(b->ring_head + 1 + b->cfg.window_buckets - b->ring_len) %
                                          b->cfg.window_buckets] <
                   b->cfg.window_us;
    return newest_covers(b, now_us);
}

static void drop_bucket(fb_breaker *b, uint32_t slot) {
    b->calls -= b->buckets[slot].calls;
    b->failures -= b->buckets[slot].failures;
    b->slow -= b->buckets[slot].slow;
    b->buckets[slot].calls = b->buckets[slot].failures = b->buckets[slot].slow = 0;
}

/* FIRST_EVENT (Polly): drop, oldest first, every bucket that is window_us old. */
static bool expire_first_event(fb_breaker *b, fb_time_us now_us) {
    uint32_t nb = b->cfg.window_buckets;
    uint32_t before = b->calls;
    while (b->ring_len > 0) {
        uint32_t oldest = (b->ring_head + 1 + nb - b->ring_len) % nb;
        if (now_us - b->bucket_start_us[oldest] < b->cfg.window_us) break;
        drop_bucket(b, oldest);
        b->ring_len--;
    }
    return b->calls != before;
}

/*
 * Move the time window so that its newest bucket holds now, dropping expired
 * buckets from the totals: O(buckets dropped), at most window_buckets.
 * Returns true when the totals changed (the rules need evaluating).
 */
static bool advance(fb_breaker *b, fb_time_us now_us) {
    if (b->cfg.mode != FB_BREAKER_MODE_TIME_WINDOW || in_newest_bucket(b, now_us)) return false;
    if (first_event(b)) return expire_first_event(b, now_us);
    fb_time_us into = now_us - b->newest_start_us;
    fb_time_us steps = into - b->bucket_us < b->bucket_us ? 1 : into / b->bucket_us;
    uint32_t nb = b->cfg.window_buckets;
    uint32_t before = b->calls;
    b->bucket_index += steps;
    b->newest_start_us = b->bucket_origin_us + b->bucket_index * b->bucket_us;
    allow_until(b);
    if (b->cfg.window_scope == FB_WINDOW_FIRES) {
        /* the bucket leaving as the newest becomes bucket_index: the old newest when
           steps == nb, one of the ring when fewer, none (empty) when more */
        uint32_t leaving = steps > (fb_time_us)nb ? nb : (b->ring_head + (uint32_t)steps) % nb;
        b->gone_calls = leaving < nb ? b->buckets[leaving].calls : 0;
        b->gone_failures = leaving < nb ? b->buckets[leaving].failures : 0;
    }
    if (steps >= (fb_time_us)nb) {
        memset(b->buckets, 0, nb * sizeof b->buckets[0]);
        b->calls = b->failures = b->slow = 0;
        return before != 0;
    }
    uint32_t head = b->ring_head;
    for (fb_time_us i = 0; i < steps; i++) {
        head = head + 1 == nb ? 0 : head + 1;
        drop_bucket(b, head);
    }
    b->ring_head = head;
    return b->calls != before;
}

/*
 * The bucket slot a time-window result lands in, or -1 for none. EPOCH: the
 * newest. FIRST_EVENT: the newest, a new one when it is bucket_us old.
 * STATE_START: the bucket of the admission, if still in the window.
 */
static int bucket_for(fb_breaker *b, fb_time_us admitted_us, fb_time_us now_us) {
    uint32_t nb = b->cfg.window_buckets;
    if (b->cfg.bucket_anchor == FB_BUCKETS_FIRST_EVENT) {
        if (b->ring_len == 0 || now_us - b->bucket_start_us[b->ring_head] >= b->bucket_us) {
            b->ring_head = b->ring_len == 0 ? 0 : (b->ring_head + 1) % nb;
            if (b->ring_len == nb)
                drop_bucket(b, b->ring_head); /* only if time went backwards */
            else
                b->ring_len++;
            b->bucket_start_us[b->ring_head] = now_us;
        }
        return (int)b->ring_head;
    }
    if (b->cfg.bucket_anchor == FB_BUCKETS_STATE_START) {
        if (admitted_us < b->bucket_origin_us) return -1;
        int64_t age = b->bucket_index - floor_div(admitted_us - b->bucket_origin_us, b->bucket_us);
        if (age < 0) age = 0;
        if (age >= (int64_t)nb) return -1;
        return (int)((b->ring_head + nb - (uint32_t)age) % nb);
    }
    return (int)b->ring_head;
}

static void count_ring(fb_breaker *b, bool failed, bool slow) {
    uint32_t pos = b->ring_head;
    uint32_t w = pos >> 6;
    uint64_t m = (uint64_t)1 << (pos & 63u);
    if (b->ring_len == b->cfg.window_calls) {
        b->failures -= (b->fail_bits[w] & m) != 0;
        b->slow -= (b->slow_bits[w] & m) != 0;
    } else {
        b->ring_len++;
        b->calls++;
    }
    b->fail_bits[w] = failed ? b->fail_bits[w] | m : b->fail_bits[w] & ~m;
    b->slow_bits[w] = slow ? b->slow_bits[w] | m : b->slow_bits[w] & ~m;
    b->failures += failed;
    b->slow += slow;
    b->ring_head = pos + 1 == b->cfg.window_calls ? 0 : pos + 1;
}

/* Add one counted outcome, admitted at admitted_us, to the window of the current mode. Always
 * inline: record_closed counts every answer from a provider with a breaker. */
__attribute__((always_inline)) static inline void
count_outcome(fb_breaker *b, bool failed, bool slow, fb_time_us admitted_us, fb_time_us now_us) {
    uint32_t run = b->consecutive_failures;
    b->consecutive_failures = failed ? run + (run != UINT32_MAX) : 0;
    if (b->cfg.mode == FB_BREAKER_MODE_COUNT_WINDOW) {
        count_ring(b, failed, slow);
    } else if (b->cfg.mode == FB_BREAKER_MODE_TIME_WINDOW) {
        int h = b->cfg.bucket_anchor == FB_BUCKETS_EPOCH ? (int)b->ring_head
                                                         : bucket_for(b, admitted_us, now_us);
        if (h < 0) return;
        b->buckets[h].calls++;
        b->buckets[h].failures += failed;
        b->buckets[h].slow += slow;
        b->calls++;
        b->failures += failed;
        b->slow += slow;
    }
}

/* count / calls >= rate (or > rate), as the user reads it, dividing only near the threshold. */
static bool rate_reached(uint32_t count, uint32_t calls, double rate, fb_compare cmp) {
    if (count == 0) return false;
    double n = (double)calls;
    if ((double)count < n * rate * RATE_FILTER) return false;
    return cmp == FB_CMP_PASS ? (double)count / n > rate : (double)count / n >= rate;
}

/* A broken rate rule over calls >= minimum (a cause), or NO_CAUSE. Always inline, as
 * broken_rule: record_closed asks after every answer. */
__attribute__((always_inline)) static inline int broken_rate(const fb_breaker *b,
                                                             uint32_t minimum) {
    const fb_breaker_config *c = &b->cfg;
    if (b->calls < minimum) return NO_CAUSE;
    if (rate_reached(b->failures, b->calls, c->failure_rate, c->trip_compare))
        return FB_CAUSE_FAILURE_RATE;
    if (c->slow_us > 0 && rate_reached(b->slow, b->calls, c->slow_rate, c->trip_compare))
        return FB_CAUSE_SLOW_CALL_RATE;
    return NO_CAUSE;
}

/* The rule the window breaks now (a cause), or NO_CAUSE; limit > 0 replaces the run's. */
__attribute__((always_inline)) static inline int broken_rule(const fb_breaker *b, uint32_t limit) {
    const fb_breaker_config *c = &b->cfg;
    if (c->mode == FB_BREAKER_MODE_CONSECUTIVE) {
        uint32_t run = b->consecutive_failures, n = limit > 0 ? limit : c->consecutive_failures;
        bool broken = c->trip_compare == FB_CMP_PASS ? run > n : run >= n;
        return broken ? FB_CAUSE_CONSECUTIVE_FAILURES : NO_CAUSE;
    }
    return broken_rate(b, c->minimum_calls);
}

/*
 * Envoy's ejection multiplier (outlier_detection_impl.cc): it lost one for
 * every multiple of decay_us passed since the breaker closed (the interval
 * sweeps that found the host healthy), and gains one per ejection while
 * k * base < max + base. The duration is min(base * k, max).
 */
static fb_time_us decayed_growth(fb_breaker *b, fb_time_us now_us) {
    const fb_breaker_config *c = &b->cfg;
    fb_time_us sweeps = floor_div(now_us, c->decay_us) - floor_div(b->closed_at_us, c->decay_us);
    if (sweeps < 0) sweeps = 0;
    b->growth_k = (fb_time_us)b->growth_k > sweeps ? b->growth_k - (uint32_t)sweeps : 0;
    fb_time_us max = c->open_us_max, base = c->open_us;
    /* k * base < max + base, without overflow: k < (max + base) / base as reals */
    fb_time_us limit = fb_time_add(max, base);
    if ((fb_time_us)b->growth_k < limit / base ||
        ((fb_time_us)b->growth_k == limit / base && limit % base != 0))
        b->growth_k++;
    return base > max / (fb_time_us)b->growth_k ? max : base * (fb_time_us)b->growth_k;
}

static fb_time_us open_duration(fb_breaker *b, fb_time_us hint_us, fb_time_us now_us) {
    const fb_breaker_config *c = &b->cfg;
    /* Growth saturates at the cap (open_us <= open_us_max), so nothing overflows. */
    fb_time_us max = c->open_us_max;
    fb_time_us d = c->open_us;
    uint32_t n = b->trips;
    if (c->open_growth == FB_OPEN_GROWTH_LINEAR && n > 1)
        d = c->open_us > max / (fb_time_us)n ? max : c->open_us * (fb_time_us)n;
    else if (c->open_growth == FB_OPEN_GROWTH_EXPONENTIAL)
        for (uint32_t i = 1; i < n && d < max; i++) d = d > max / 2 ? max : d * 2;
    else if (c->open_growth == FB_OPEN_GROWTH_LINEAR_DECAY)
        d = decayed_growth(b, now_us);
    if (c->open_jitter > 0.0) {
        double f = c->open_jitter;
        double x = (double)d * (1.0 - f + 2.0 * f * fb_rng_uniform(c->rng));
        d = x >= (double)max ? max : (fb_time_us)x;
    }
    if (hint_us >= 0 && c->honor_hint == FB_ON) {
        fb_time_us h = hint_us < max ? hint_us : max;
        if (h > d || c->hint_mode == FB_HINT_REPLACES) d = h;
    }
    return d;
}

/* now + d, rounded up to a multiple of open_align_us (Envoy un-ejects only at its sweeps). */
static fb_time_us deadline_after(const fb_breaker *b, fb_time_us now_us, fb_time_us d) {
    fb_time_us t = fb_time_add(now_us, d);
    fb_time_us a = b->cfg.open_align_us;
    if (a <= 0 || t == FB_TIME_MAX) return t;
    fb_time_us r = t % a;
    return r == 0 ? t : fb_time_add(t, a - r);
}

/* The eject group counts this breaker open (or no longer). */
static void group_count(fb_breaker *b, bool open) {
    fb_eject_group *g = b->cfg.eject_group;
    if (g == NULL || b->in_group == open) return;
    b->in_group = open;
    if (open)
        g->open++;
    else if (g->open > 0)
        g->open--;
}

/*
 * Set up state `to` at now: trips, deadline, a fresh window and no probes.
 * until_us >= 0 is an OPEN deadline decided elsewhere (sync).
 */
static void enter(fb_breaker *b, fb_breaker_state to, fb_time_us now_us, fb_time_us hint_us,
                  fb_time_us until_us) {
    fb_breaker_state from = b->state;
    fb_time_us was_until = b->open_until_us;
    b->state = to;
    b->state_since_us = now_us;
    b->open_until_us = FB_TIME_NONE;
    group_count(b, to == FB_BREAKER_OPEN);
    if (to == FB_BREAKER_OPEN) {
        b->trips += b->trips != UINT32_MAX;
        b->open_until_us =
            until_us >= 0 ? until_us : deadline_after(b, now_us, open_duration(b, hint_us, now_us));
    } else if (to == FB_BREAKER_CLOSED) {
        b->trips = 0;
        /* an open period that ran out closed the breaker at its deadline, however late noticed */
        b->closed_at_us =
            from == FB_BREAKER_OPEN && was_until >= 0 && was_until <= now_us ? was_until : now_us;
    } else if (to == FB_BREAKER_FORCED_OPEN) {
        b->open_until_us = FB_TIME_MAX;
    }
    b->closed_until_us = to == FB_BREAKER_CLOSED && b->cfg.closed_interval_us > 0
                             ? fb_time_add(now_us, b->cfg.closed_interval_us)
                             : FB_TIME_MAX;
    if (b->cfg.window_scope != FB_WINDOW_FIRES) clear_window(b, now_us);
    b->probes_in_use = 0;
    b->probe_successes = 0;
    b->probes_admitted = 0;
    b->probes_released = 0;
    b->threshold_signalled = false;
    /* pybreaker: reset_success_counter() on entering every state, reset_counter() on CLOSED */
    b->adm_successes = 0;
    if (to == FB_BREAKER_CLOSED) b->adm_failures = 0;
    allow_until(b);
}

static fb_breaker_event snapshot(const fb_breaker *b, fb_breaker_cause cause, fb_time_us now_us) {
    fb_breaker_event ev = {
        .at_us = now_us,
        .from = b->state,
        .to = b->state,
        .cause = cause,
        .calls = b->calls,
        .failures = b->failures,
        .slow = b->slow,
        .consecutive_failures = b->consecutive_failures,
        .trips = b->trips,
        .open_until_us = b->open_until_us,
        .generation = b->generation,
    };
    return ev;
}

/* The one way the state changes: new generation, fresh window, then the event. */
static void transition(fb_breaker *b, fb_breaker_state to, fb_breaker_cause cause,
                       fb_time_us now_us, fb_time_us hint_us, fb_time_us until_us) {
    fb_breaker_event ev = snapshot(b, cause, now_us);
    enter(b, to, now_us, hint_us, until_us);
    b->generation++;
    b->stats.transitions++;
    if (to == FB_BREAKER_OPEN) b->stats.opens++;
    if (!b->cfg.on_event) return;
    ev.to = to;
    ev.trips = b->trips;
    ev.open_until_us = b->open_until_us;
    ev.generation = b->generation;
    b->cfg.on_event(b->cfg.event_ctx, &ev);
}

/* May this breaker open now (its eject group's limit)? A refused trip only clears the run. */
static bool group_admits(fb_breaker *b) {
    fb_eject_group *g = b->cfg.eject_group;
    if (g == NULL || b->in_group || g->members == 0) return true;
    /* Envoy ejectHost(): 100.0 * ejections_active / hosts < max_ejection_percent */
    if (100.0 * (double)g->open / (double)g->members < g->max_percent) return true;
    g->refused++;
    b->stats.refused_opens++;
    b->consecutive_failures = 0;
    return false;
}

static void open_now(fb_breaker *b, fb_breaker_cause cause, fb_time_us now_us, fb_time_us hint_us) {
    if (!group_admits(b)) return;
    transition(b, FB_BREAKER_OPEN, cause, now_us, hint_us, FB_TIME_NONE);
}

/* Act on the rules after the window changed: trip (CLOSED) or signal (METRICS_ONLY). */
static void evaluate(fb_breaker *b, fb_time_us now_us, fb_time_us hint_us, uint32_t limit) {
    if (b->state == FB_BREAKER_CLOSED) {
        int cause = broken_rule(b, limit);
        if (cause != NO_CAUSE) open_now(b, (fb_breaker_cause)cause, now_us, hint_us);
    } else if (b->state == FB_BREAKER_METRICS_ONLY) {
        bool exceeded = broken_rule(b, limit) != NO_CAUSE;
        if (exceeded && !b->threshold_signalled && b->cfg.on_event) {
            fb_breaker_event ev = snapshot(b, FB_CAUSE_THRESHOLD_EXCEEDED, now_us);
            b->cfg.on_event(b->cfg.event_ctx, &ev);
        }
        b->threshold_signalled = exceeded;
    }
}

/*
 * HALF_OPEN: past half_open_max_us the period ends (resilience4j
 * maxWaitDurationInHalfOpenState); a probe whose lease ran out (now >= lease
 * end) re-opens the breaker.
 */
static void half_open_due(fb_breaker *b, fb_time_us now_us) {
    const fb_breaker_config *c = &b->cfg;
    if (c->half_open_max_us > 0 && now_us >= fb_time_add(b->state_since_us, c->half_open_max_us)) {
        fb_breaker_state to =
            c->half_open_expiry == FB_EXPIRE_TO_CLOSED ? FB_BREAKER_CLOSED : FB_BREAKER_OPEN;
        transition(b, to, FB_CAUSE_HALF_OPEN_MAX_WAIT, now_us, FB_TIME_NONE, FB_TIME_NONE);
        return;
    }
    uint32_t used = b->probes_in_use;
    for (uint32_t s = 0; used; s++, used >>= 1) {
        if ((used & 1u) && now_us >= b->lease_until_us[s]) {
            open_now(b, FB_CAUSE_PROBE_LEASE_EXPIRED, now_us, FB_TIME_NONE);
            return;
        }
    }
}

/* The open period is over: now >= open_until (FB_CMP_REACH) or now > open_until. */
static bool open_elapsed(const fb_breaker *b, fb_time_us now_us) {
    if (b->cfg.open_deadline == FB_CMP_PASS) return now_us > b->open_until_us;
    return now_us >= b->open_until_us;
}

/*
 * closed_interval_us (gobreaker's Interval, currentState: `cb.expiry.Before(now)` then
 * toNewGeneration): past the interval, fresh counts and a new generation, so that results of
 * calls admitted before it are stale; not a transition (no event).
 */
static void closed_interval_due(fb_breaker *b, fb_time_us now_us) {
    if (b->state != FB_BREAKER_CLOSED || now_us <= b->closed_until_us) return;
    clear_window(b, now_us);
    b->generation++;
    b->closed_until_us = fb_time_add(now_us, b->cfg.closed_interval_us);
    allow_until(b);
}

fb_time_us fb_breaker_next_timer(const fb_breaker *b) {
    const fb_breaker_config *c = &b->cfg;
    if (b->state == FB_BREAKER_OPEN && c->open_timer == FB_ON)
        return fb_time_add(b->open_until_us, c->open_deadline == FB_CMP_PASS);
    if (b->state == FB_BREAKER_HALF_OPEN && c->half_open_timer == FB_ON && c->half_open_max_us > 0)
        return fb_time_add(b->state_since_us, c->half_open_max_us);
    return FB_TIME_NONE;
}

/* The most timed transitions one call performs; past it the rest are stamped at now. */
#define TIMERS_MAX 100000

/* Run every timed transition due at or before now, each at its due time. */
static void run_timers(fb_breaker *b, fb_time_us now_us) {
    for (uint32_t n = 0; n < TIMERS_MAX; n++) {
        fb_time_us t = fb_breaker_next_timer(b);
        if (t < 0 || t > now_us) return;
        if (b->state == FB_BREAKER_OPEN)
            transition(b, FB_BREAKER_HALF_OPEN, FB_CAUSE_OPEN_ELAPSED, t, FB_TIME_NONE,
                       FB_TIME_NONE);
        else
            transition(b,
                       b->cfg.half_open_expiry == FB_EXPIRE_TO_CLOSED ? FB_BREAKER_CLOSED
                                                                      : FB_BREAKER_OPEN,
                       FB_CAUSE_HALF_OPEN_MAX_WAIT, t, FB_TIME_NONE, FB_TIME_NONE);
    }
}

void fb_breaker_poll(fb_breaker *b, fb_time_us now_us) {
    if (b->cfg.open_timer == FB_ON || b->cfg.half_open_timer == FB_ON) run_timers(b, now_us);
    switch (b->state) {
    case FB_BREAKER_OPEN:
        if (open_elapsed(b, now_us))
            transition(
                b, b->cfg.recovery == FB_RECOVER_CLOSE ? FB_BREAKER_CLOSED : FB_BREAKER_HALF_OPEN,
                FB_CAUSE_OPEN_ELAPSED, now_us, FB_TIME_NONE, FB_TIME_NONE);
        break;
    case FB_BREAKER_HALF_OPEN:
        half_open_due(b, now_us);
        break;
    case FB_BREAKER_CLOSED:
    case FB_BREAKER_FORCED_CLOSED:
    case FB_BREAKER_METRICS_ONLY:
        closed_interval_due(b, now_us);
        /* Expiring successes can raise the rate; only EVERY_RECORD looks at it then. */
        if (advance(b, now_us) && b->cfg.evaluate == FB_EVAL_EVERY_RECORD)
            evaluate(b, now_us, FB_TIME_NONE, 0);
        break;
    default:
        break;
    }
}

/* Lease slots in HALF_OPEN: one per permit; release_any: as many as can be given back. */
static uint32_t probe_slots(const fb_breaker *b) {
    return b->cfg.release_any == FB_ON ? FB_BREAKER_PROBES_MAX : b->cfg.half_open_permits;
}

/* PER_PERIOD: this half-open period's permits are all taken (and none was given back). */
static bool period_exhausted(const fb_breaker *b) {
    const fb_breaker_config *c = &b->cfg;
    return c->probe_limit == FB_PROBES_PER_PERIOD &&
           b->probes_admitted >= c->half_open_permits + b->probes_released;
}

static void admit(fb_breaker *b, fb_breaker_permit *p, fb_permit_kind kind, uint32_t slot,
                  fb_time_us now_us) {
    fb_breaker__admit(b, p, kind, slot, now_us);
}

/* HALF_OPEN: a free slot within the limit, leased to a new probe; false when none. */
static bool admit_probe(fb_breaker *b, fb_time_us now_us, fb_breaker_permit *permit) {
    const fb_breaker_config *c = &b->cfg;
    if (c->probe_limit == FB_PROBES_NONE) {
        admit(b, permit, FB_PERMIT_PROBE, FB_BREAKER_PROBES_MAX, now_us); /* holds no slot */
        b->probes_admitted++;
        return true;
    }
    if (period_exhausted(b)) return false;
    for (uint32_t s = 0; s < probe_slots(b); s++) {
        if (b->probes_in_use & (1u << s)) continue;
        b->probes_in_use |= 1u << s;
        b->lease_until_us[s] = fb_time_add(now_us, c->probe_lease_us);
        admit(b, permit, FB_PERMIT_PROBE, s, now_us);
        b->probe_id[s] = permit->id;
        b->probes_admitted++;
        return true;
    }
    return false;
}

static void reject(fb_breaker *b, fb_breaker_permit *p, fb_time_us now_us) {
    fb_breaker__reject(b, p, now_us);
}

static bool allow_slow(fb_breaker *b, fb_time_us now_us, fb_breaker_permit *permit) {
    fb_breaker_poll(b, now_us);
    if (b->cfg.evaluate == FB_EVAL_AT_ADMISSION) evaluate(b, now_us, FB_TIME_NONE, 0);
    switch (b->state) {
    case FB_BREAKER_CLOSED:
    case FB_BREAKER_FORCED_CLOSED:
    case FB_BREAKER_METRICS_ONLY:
        admit(b, permit, FB_PERMIT_CALL, 0, now_us);
        return true;
    case FB_BREAKER_DISABLED:
        admit(b, permit, FB_PERMIT_UNTRACKED, 0, now_us);
        return true;
    case FB_BREAKER_HALF_OPEN:
        if (admit_probe(b, now_us, permit)) return true;
        break;
    default:
        break;
    }
    reject(b, permit, now_us);
    return false;
}

/* FB_WINDOW_FIRES: a call made or refused is counted in the bucket of now (opossum's fires). */
static void count_fire(fb_breaker *b, fb_time_us now_us) {
    advance(b, now_us);
    b->buckets[b->ring_head].calls++;
    b->calls++;
}

/* FB_WINDOW_FIRES: a failure reported in any state, in the bucket of now. */
static void count_fired_failure(fb_breaker *b, fb_time_us now_us) {
    advance(b, now_us);
    b->buckets[b->ring_head].failures++;
    b->failures++;
}

/* An OPEN breaker whose period runs on: what allow_slow comes to without timers (poll changes
 * nothing, an evaluation at admission looks only at CLOSED): a rejection. */
static bool rejects_open(const fb_breaker *b, fb_time_us now_us) {
    return b->state == FB_BREAKER_OPEN && b->cfg.open_timer != FB_ON &&
           b->cfg.half_open_timer != FB_ON && !open_elapsed(b, now_us);
}

bool fb_breaker_allow(fb_breaker *b, fb_time_us now_us, fb_breaker_permit *permit) {
    if (b->cfg.window_scope == FB_WINDOW_FIRES) count_fire(b, now_us);
    if (b->state == FB_BREAKER_CLOSED && b->cfg.evaluate != FB_EVAL_AT_ADMISSION &&
        now_us <= b->closed_until_us &&
        (b->cfg.mode != FB_BREAKER_MODE_TIME_WINDOW ||
         (first_event(b) ? in_newest_bucket(b, now_us) : newest_covers(b, now_us)))) {
        admit(b, permit, FB_PERMIT_CALL, 0, now_us);
        return true;
    }
    if (rejects_open(b, now_us)) {
        reject(b, permit, now_us);
        return false;
    }
    return allow_slow(b, now_us, permit);
}

static bool is_slow(const fb_breaker *b, fb_time_us duration_us) {
    return b->cfg.slow_us > 0 && duration_us > b->cfg.slow_us;
}

/* HALF_OPEN: judge the probes' results so far (failed: this one failed or was slow). */
static void judge_probes(fb_breaker *b, bool failed, fb_time_us hint_us, fb_time_us now_us) {
    const fb_breaker_config *c = &b->cfg;
    if (c->probe_verdict == FB_VERDICT_RATE) {
        uint32_t min = c->half_open_minimum > 0 ? c->half_open_minimum : c->minimum_calls;
        uint32_t need = min < c->half_open_permits ? min : c->half_open_permits;
        if (b->calls < need) return;
        int cause = broken_rate(b, need);
        if (cause != NO_CAUSE)
            open_now(b, (fb_breaker_cause)cause, now_us, hint_us);
        else
            transition(b, FB_BREAKER_CLOSED, FB_CAUSE_PROBES_SUCCEEDED, now_us, FB_TIME_NONE,
                       FB_TIME_NONE);
    } else if (failed) {
        open_now(b, FB_CAUSE_PROBE_FAILED, now_us, hint_us);
    } else if (++b->probe_successes >= c->half_open_permits) {
        transition(b, FB_BREAKER_CLOSED, FB_CAUSE_PROBES_SUCCEEDED, now_us, FB_TIME_NONE,
                   FB_TIME_NONE);
    }
}

/* A result counted in HALF_OPEN; `own` when it is this period's probe (frees its slot). */
static void record_half_open(fb_breaker *b, const fb_breaker_permit *p, bool own,
                             const fb_breaker_result *r, fb_time_us now_us) {
    if (own) {
        uint32_t bit = 1u << (p->slot & 31u);
        /* The slot must still be held by this very admission (not a double report). */
        if (p->slot >= probe_slots(b) || !(b->probes_in_use & bit) ||
            b->probe_id[p->slot] != p->id) {
            b->stats.stale++;
            return;
        }
        b->probes_in_use &= ~bit;
        if (r->effect == FB_EFFECT_IGNORE && b->cfg.probe_limit == FB_PROBES_PER_PERIOD)
            b->probes_admitted--; /* an ignored probe gives its permit back */
    } else if (r->effect == FB_EFFECT_IGNORE && b->cfg.release_any == FB_ON &&
               b->probes_released < FB_BREAKER_PROBES_MAX) {
        b->probes_released++; /* resilience4j: releasePermission() adds one, whoever calls it */
    }
    if (r->effect != FB_EFFECT_SUCCESS && r->effect != FB_EFFECT_FAILURE) return;
    bool failed = r->effect == FB_EFFECT_FAILURE;
    bool slow = is_slow(b, r->duration_us);
    if (b->cfg.window_scope != FB_WINDOW_FIRES) { /* FIRES: the window counted it already */
        b->calls++;
        b->failures += failed;
        b->slow += slow;
        b->consecutive_failures = failed || slow ? b->consecutive_failures + 1 : 0;
    }
    judge_probes(b, failed || slow, r->hint_us, now_us);
}

/* Are the rules looked at after a recorded SUCCESS (or, failed, FAILURE)? */
static bool evaluates_after(const fb_breaker *b, bool failed) {
    fb_evaluate when = b->cfg.evaluate;
    return when == FB_EVAL_EVERY_RECORD || when == FB_EVAL_RECORD_ONLY ||
           (when == FB_EVAL_ON_FAILURE && failed);
}

/* A result in a state that keeps a window: drop what expired, add it, then maybe evaluate. */
static void record_window(fb_breaker *b, const fb_breaker_permit *p, const fb_breaker_result *r,
                          fb_time_us now_us) {
    if (r->effect != FB_EFFECT_SUCCESS && r->effect != FB_EFFECT_FAILURE) return;
    bool failed = r->effect == FB_EFFECT_FAILURE;
    advance(b, now_us);
    if (b->cfg.window_scope != FB_WINDOW_FIRES) /* FIRES: the window counted it already */
        count_outcome(b, failed, is_slow(b, r->duration_us), p->admitted_us, now_us);
    if (failed && r->trip == FB_TRIP_NOW && b->state == FB_BREAKER_CLOSED) {
        open_now(b, FB_CAUSE_IMMEDIATE, now_us, r->hint_us);
        return;
    }
    if (failed && r->trip == FB_TRIP_NEVER) return;
    if (evaluates_after(b, failed)) evaluate(b, now_us, r->hint_us, failed ? r->failure_limit : 0);
}

/*
 * record()'s short way (b->plain_record): a SUCCESS or FAILURE under the rules, of a call
 * admitted in this CLOSED generation, while the newest bucket still covers now (no bucket to
 * drop). What record()'s steps come to there: count it, then look at the rules. False, having
 * changed nothing, for anything else. Inline: every answer from a provider with a breaker.
 */
static inline bool record_closed(fb_breaker *b, const fb_breaker_permit *p,
                                 const fb_breaker_result *r, fb_time_us now_us) {
    bool failed = r->effect == FB_EFFECT_FAILURE;
    if (!b->plain_record || p->kind != FB_PERMIT_CALL || p->generation != b->generation ||
        (!failed && r->effect != FB_EFFECT_SUCCESS) || r->trip != FB_TRIP_RULES)
        return false;
    /* allow()'s short way applies (allow_until): CLOSED, before closed_until, in the newest
     * bucket; else the same, asked one by one */
    if (now_us > b->allow_until_us &&
        (b->state != FB_BREAKER_CLOSED || now_us > b->closed_until_us ||
         (b->cfg.mode == FB_BREAKER_MODE_TIME_WINDOW && !newest_covers(b, now_us))))
        return false;
    count_outcome(b, failed, is_slow(b, r->duration_us), p->admitted_us, now_us);
    if (!evaluates_after(b, failed)) return true;
    int cause = broken_rule(b, failed ? r->failure_limit : 0); /* evaluate() in CLOSED */
    if (cause != NO_CAUSE) open_now(b, (fb_breaker_cause)cause, now_us, r->hint_us);
    return true;
}

/* COOLDOWN: (re)start the cooldown, from CLOSED, or again while OPEN. */
static void cooldown_open(fb_breaker *b, fb_breaker_cause cause, fb_time_us now_us,
                          fb_time_us hint_us) {
    if (b->state == FB_BREAKER_CLOSED)
        open_now(b, cause, now_us, hint_us);
    else if (b->state == FB_BREAKER_OPEN && b->cfg.keep_open != FB_ON)
        transition(b, FB_BREAKER_OPEN, cause, now_us, hint_us, FB_TIME_NONE);
}

/* A count raised now: restarted when it expired (now > its until), then + 1. */
static uint32_t raised(uint32_t count, fb_time_us until_us, fb_time_us now_us) {
    uint32_t n = now_us > until_us ? 0 : count;
    return n + (n != UINT32_MAX);
}

/* The expiry of a count raised now: renewed, or (ttl_from_first) kept while it lasts. */
static fb_time_us raised_until(const fb_breaker_config *c, uint32_t count, fb_time_us until_us,
                               fb_time_us now_us) {
    bool fresh = count == 0 || now_us > until_us;
    return c->ttl_from_first == FB_ON && !fresh ? until_us : fb_time_add(now_us, c->window_us);
}

/* COOLDOWN mode: LiteLLM's counters, whatever the state; then judge a failure. */
static void record_cooldown(fb_breaker *b, const fb_breaker_result *r, fb_time_us now_us) {
    const fb_breaker_config *c = &b->cfg;
    if (r->effect == FB_EFFECT_SUCCESS) {
        if (c->cooldown_rule == FB_COOLDOWN_COUNT) return; /* v1 counts failures only */
        fb_time_us su = raised_until(c, b->cd_successes, b->cd_successes_until, now_us);
        b->cd_successes = raised(b->cd_successes, b->cd_successes_until, now_us);
        b->cd_successes_until = su;
        return;
    }
    fb_time_us until = raised_until(c, b->cd_failures, b->cd_failures_until, now_us);
    if (r->effect != FB_EFFECT_FAILURE) return;
    uint32_t fails = now_us > b->cd_failures_until ? 0 : b->cd_failures;
    if (c->cooldown_rule == FB_COOLDOWN_COUNT) {
        /* should_cooldown_based_on_allowed_fails_policy: updated = current + 1 > allowed */
        if (r->trip == FB_TRIP_NEVER) return;
        uint32_t limit = r->failure_limit > 0 ? r->failure_limit : c->consecutive_failures;
        if (r->trip == FB_TRIP_NOW || fails + 1 >= limit) {
            b->cd_failures = fails; /* the failure that opens is not counted */
            cooldown_open(b, r->trip == FB_TRIP_NOW ? FB_CAUSE_IMMEDIATE : FB_CAUSE_FAILURE_COUNT,
                          now_us, r->hint_us);
            return;
        }
        b->cd_failures = fails + 1;
        b->cd_failures_until = until;
        return;
    }
    b->cd_failures = raised(b->cd_failures, b->cd_failures_until, now_us);
    b->cd_failures_until = until;
    if (r->trip == FB_TRIP_NEVER) return;
    if (r->trip == FB_TRIP_NOW) {
        cooldown_open(b, FB_CAUSE_IMMEDIATE, now_us, r->hint_us);
        return;
    }
    uint32_t succ = now_us > b->cd_successes_until ? 0 : b->cd_successes;
    uint32_t total = b->cd_failures + succ;
    if (total >= c->minimum_calls &&
        rate_reached(b->cd_failures, total, c->failure_rate, c->trip_compare))
        cooldown_open(b, FB_CAUSE_FAILURE_RATE, now_us, r->hint_us);
}

/*
 * late_results AS_ADMITTED (pybreaker calling(): generator_call judges the result with the
 * state object of its admission): CircuitClosedState.on_failure opens at counter >= fail_max,
 * CircuitHalfOpenState.on_failure opens, on_success closes at success_threshold; every success
 * resets the counter (_handle_success), every failure raises it (_handle_error).
 */
static void record_as_admitted(fb_breaker *b, const fb_breaker_permit *permit,
                               const fb_breaker_result *r, fb_time_us now_us) {
    if (r->effect == FB_EFFECT_IGNORE || b->state > FB_BREAKER_HALF_OPEN) return;
    if (permit->generation != b->generation) b->stats.late++;
    bool probe = permit->kind == FB_PERMIT_PROBE;
    if (r->effect == FB_EFFECT_FAILURE) {
        b->adm_failures += b->adm_failures != UINT32_MAX;
        b->consecutive_failures = b->adm_failures;
        uint32_t n = b->cfg.consecutive_failures;
        bool broken =
            b->cfg.trip_compare == FB_CMP_PASS ? b->adm_failures > n : b->adm_failures >= n;
        if (probe || broken)
            open_now(b, probe ? FB_CAUSE_PROBE_FAILED : FB_CAUSE_CONSECUTIVE_FAILURES, now_us,
                     r->hint_us);
        return;
    }
    b->adm_failures = 0;
    b->consecutive_failures = 0;
    if (!probe) return;
    b->adm_successes++;
    if (b->adm_successes >= b->cfg.half_open_permits)
        transition(b, FB_BREAKER_CLOSED, FB_CAUSE_PROBES_SUCCEEDED, now_us, FB_TIME_NONE,
                   FB_TIME_NONE);
}

/*
 * late_results RUN (cockatiel 4.0.0 src/CircuitBreakerPolicy.ts with a ConsecutiveBreaker):
 * execute() judges a call admitted in Closed by breaker.success() / breaker.failure() and
 * open() whatever the state now (open() returns at once when Open); a half-open trial's
 * result counts only while its own HalfOpen state object is current (recordHalfOpenSuccess,
 * recordHalfOpenFailure); the count is reset by success() alone, which close() calls too.
 * In CLOSED, OPEN and HALF_OPEN only.
 */
static void record_run(fb_breaker *b, const fb_breaker_permit *permit, const fb_breaker_result *r,
                       fb_time_us now_us) {
    bool late = permit->generation != b->generation;
    bool failed = r->effect == FB_EFFECT_FAILURE;
    if (permit->kind == FB_PERMIT_PROBE) {
        if (late || b->state != FB_BREAKER_HALF_OPEN) {
            b->stats.stale++;
            return;
        }
        if (failed) b->adm_failures += b->adm_failures != UINT32_MAX;
        record_half_open(b, permit, true, r, now_us); /* its failure opens, successes close */
        return;
    }
    if (r->effect != FB_EFFECT_SUCCESS && !failed) return;
    if (late) b->stats.late++;
    if (!failed) {
        b->adm_failures = 0;
        b->consecutive_failures = 0;
        return;
    }
    b->adm_failures += b->adm_failures != UINT32_MAX;
    b->consecutive_failures = b->adm_failures;
    if (b->state == FB_BREAKER_OPEN || r->trip == FB_TRIP_NEVER) return;
    uint32_t n = b->cfg.consecutive_failures;
    bool broken = b->cfg.trip_compare == FB_CMP_PASS ? b->adm_failures > n : b->adm_failures >= n;
    if (r->trip == FB_TRIP_NOW)
        open_now(b, FB_CAUSE_IMMEDIATE, now_us, r->hint_us);
    else if (broken)
        open_now(b, FB_CAUSE_CONSECUTIVE_FAILURES, now_us, r->hint_us);
}

/*
 * FB_WINDOW_FIRES (opossum): a result at a bucket boundary T from a call made before the
 * previous boundary. opossum rotates its buckets on a setInterval and a call's result comes on
 * that call's own timer; at equal times the older timer runs first, and the interval was last
 * set at T - bucket, so this result comes before the rotation at T.
 */
static bool fires_before_rotation(const fb_breaker *b, const fb_breaker_permit *p,
                                  fb_time_us now_us) {
    fb_time_us since = now_us - b->bucket_origin_us;
    return b->cfg.mode == FB_BREAKER_MODE_TIME_WINDOW && since > 0 && b->bucket_us > 0 &&
           since % b->bucket_us == 0 && p->admitted_us < now_us - b->bucket_us;
}

/*
 * That failure: counted in the bucket that ends at T, judged on the window before the
 * rotation (the bucket that leaves at T in, the one that starts out), as opossum's fail()
 * sees it; then the window is the rotated one again.
 */
static void fired_failure_before_rotation(fb_breaker *b, const fb_breaker_permit *p, bool own,
                                          const fb_breaker_result *r, fb_time_us now_us) {
    advance(b, now_us);
    uint32_t nb = b->cfg.window_buckets, head = b->ring_head;
    uint32_t calls = b->calls, failures = b->failures;
    if (nb > 1) { /* with one bucket the bucket that ends at T is the one that left */
        uint32_t prev = (head + nb - 1) % nb;
        b->buckets[prev].failures++;
        b->failures++;
        failures++;
    }
    if (b->state == FB_BREAKER_HALF_OPEN) {
        record_half_open(b, p, own, r, now_us);
        return;
    }
    if (!records_window(b->state) || r->trip == FB_TRIP_NEVER) return;
    /* the window as it was before T's rotation, this failure in it */
    b->calls = calls - b->buckets[head].calls + b->gone_calls;
    b->failures = failures - b->buckets[head].failures + b->gone_failures + (nb > 1 ? 0 : 1);
    evaluate(b, now_us, r->hint_us, r->failure_limit);
    b->calls = calls;
    b->failures = failures;
}

/* fb_breaker_record's steps (breaker.h); out of line, so that record_closed's answer is made
 * without the register saves of these. */
static __attribute__((noinline)) void record_full(fb_breaker *b, const fb_breaker_permit *permit,
                                                  const fb_breaker_result *given,
                                                  fb_time_us now_us) {
    if (permit->kind != FB_PERMIT_CALL && permit->kind != FB_PERMIT_PROBE) return;
    fb_breaker_result result = *given;
    if (result.effect == FB_EFFECT_CANCELLED) result.effect = b->cfg.cancelled_as;
    if (b->cfg.hint_whole_seconds == FB_ON && result.hint_us > 0 &&
        result.hint_us % FB_US_PER_S != 0)
        result.hint_us = FB_TIME_NONE; /* LiteLLM: int("2.5") raises, the header is ignored */
    /* a hint of 0 as the open duration means the failure does not open (LiteLLM) */
    if (b->cfg.honor_hint == FB_ON && b->cfg.hint_mode == FB_HINT_REPLACES && result.hint_us == 0)
        result.trip = FB_TRIP_NEVER;
    if (b->cfg.mode == FB_BREAKER_MODE_COOLDOWN) {
        /* its counts are keyed by deployment, not by state or generation */
        if (b->state != FB_BREAKER_DISABLED) {
            fb_breaker_poll(b, now_us);
            record_cooldown(b, &result, now_us);
        }
        return;
    }
    if (b->cfg.open_timer == FB_ON || b->cfg.half_open_timer == FB_ON) run_timers(b, now_us);
    if (b->cfg.late_results == FB_LATE_AS_ADMITTED) {
        record_as_admitted(b, permit, &result, now_us);
        return;
    }
    if (b->cfg.late_results == FB_LATE_RUN && b->state <= FB_BREAKER_HALF_OPEN) {
        record_run(b, permit, &result, now_us);
        return;
    }
    if (b->state == FB_BREAKER_OPEN && b->cfg.open_elapses_on_result == FB_ON)
        fb_breaker_poll(b, now_us);
    if (b->state == FB_BREAKER_HALF_OPEN) half_open_due(b, now_us);
    closed_interval_due(b, now_us);
    bool late = permit->generation != b->generation;
    if (late) {
        if (b->cfg.late_results == FB_LATE_DROP) {
            b->stats.stale++;
            return;
        }
        b->stats.late++;
    }
    if (b->cfg.window_scope == FB_WINDOW_FIRES && result.effect == FB_EFFECT_FAILURE &&
        result.after_timers != FB_ON && fires_before_rotation(b, permit, now_us)) {
        fired_failure_before_rotation(b, permit, !late, &result, now_us);
        return;
    }
    if (b->cfg.window_scope == FB_WINDOW_FIRES && result.effect == FB_EFFECT_FAILURE)
        count_fired_failure(b, now_us);
    if (b->state == FB_BREAKER_HALF_OPEN)
        record_half_open(b, permit, !late, &result, now_us);
    else if (records_window(b->state))
        record_window(b, permit, &result, now_us);
}

void fb_breaker_record(fb_breaker *b, const fb_breaker_permit *permit,
                       const fb_breaker_result *given, fb_time_us now_us) {
    if (!record_closed(b, permit, given, now_us)) record_full(b, permit, given, now_us);
}

int fb_breaker_config_effective(fb_breaker_config *cfg) {
    return cfg ? normalise(cfg) : FB_EINVAL;
}

int fb_breaker_init(fb_breaker *b, const fb_breaker_config *cfg, fb_time_us now_us) {
    fb_breaker_config c = {0};
    if (!b) return FB_EINVAL;
    if (cfg) c = *cfg;
    int rc = normalise(&c);
    if (rc != FB_OK) return rc;
    memset(b, 0, sizeof *b);
    b->cfg = c;
    b->bucket_us = c.window_us / (fb_time_us)c.window_buckets;
    b->first_event =
        c.mode == FB_BREAKER_MODE_TIME_WINDOW && c.bucket_anchor == FB_BUCKETS_FIRST_EVENT;
    /* record_closed's conditions that the config decides: none of record()'s steps before
     * record_window applies, and a result lands in the newest bucket */
    b->plain_record =
        c.mode != FB_BREAKER_MODE_COOLDOWN && c.open_timer != FB_ON && c.half_open_timer != FB_ON &&
        (c.late_results == FB_LATE_DROP || c.late_results == FB_LATE_COUNT) &&
        c.hint_whole_seconds != FB_ON &&
        !(c.honor_hint == FB_ON && c.hint_mode == FB_HINT_REPLACES) &&
        c.window_scope == FB_WINDOW_PER_STATE &&
        (c.mode != FB_BREAKER_MODE_TIME_WINDOW || c.bucket_anchor == FB_BUCKETS_EPOCH);
    b->generation = 1;
    clear_window(b, now_us); /* enter() leaves a FIRES window alone */
    enter(b, c.initial, now_us, FB_TIME_NONE, FB_TIME_NONE);
    return FB_OK;
}

int fb_breaker_set_state(fb_breaker *b, fb_breaker_state to, fb_time_us now_us) {
    if (!b || (unsigned)to >= FB_BREAKER_STATE_COUNT) return FB_EINVAL;
    transition(b, to, FB_CAUSE_MANUAL, now_us, FB_TIME_NONE, FB_TIME_NONE);
    return FB_OK;
}

int fb_breaker_sync(fb_breaker *b, fb_breaker_state to, fb_time_us open_until_us,
                    fb_time_us now_us) {
    if (!b || (unsigned)to >= FB_BREAKER_STATE_COUNT) return FB_EINVAL;
    if (to == FB_BREAKER_OPEN && open_until_us < 0) return FB_EINVAL;
    if (to == b->state) {
        /* Same state: not a transition; an OPEN deadline is still copied. */
        if (to == FB_BREAKER_OPEN) b->open_until_us = open_until_us;
        allow_until(b);
        return FB_OK;
    }
    transition(b, to, FB_CAUSE_SYNC, now_us, FB_TIME_NONE,
               to == FB_BREAKER_OPEN ? open_until_us : FB_TIME_NONE);
    return FB_OK;
}

fb_breaker_state fb_breaker_state_get(const fb_breaker *b) {
    return b->state;
}

bool fb_breaker_admits(const fb_breaker *b, fb_time_us now_us) {
    switch (b->state) {
    case FB_BREAKER_FORCED_OPEN:
        return false;
    case FB_BREAKER_OPEN:
        return open_elapsed(b, now_us);
    case FB_BREAKER_HALF_OPEN:
        if (b->cfg.probe_limit == FB_PROBES_NONE) return true;
        if (period_exhausted(b)) return false;
        return b->probes_in_use != (1u << probe_slots(b)) - 1u;
    default:
        return true;
    }
}

void fb_eject_group_init(fb_eject_group *g, uint32_t members, double max_percent) {
    *g = (fb_eject_group){.members = members, .max_percent = max_percent};
}

/* HALF_OPEN, every permit taken: until a lease ends or the period's limit, whichever is first. */
static fb_time_us half_open_retry_in(const fb_breaker *b, fb_time_us now_us) {
    const fb_breaker_config *c = &b->cfg;
    fb_time_us first = FB_TIME_MAX;
    if (c->half_open_max_us > 0) first = fb_time_add(b->state_since_us, c->half_open_max_us);
    bool exhausted = period_exhausted(b);
    for (uint32_t s = 0; s < probe_slots(b); s++) {
        if (!(b->probes_in_use & (1u << s))) {
            if (!exhausted) return 0;
            continue;
        }
        if (b->lease_until_us[s] < first) first = b->lease_until_us[s];
    }
    return now_us >= first ? 0 : first - now_us;
}

fb_time_us fb_breaker_retry_in(const fb_breaker *b, fb_time_us now_us) {
    switch (b->state) {
    case FB_BREAKER_OPEN:
        if (open_elapsed(b, now_us)) return 0;
        /* PASS admits one microsecond after the deadline; saturating at FB_TIME_MAX */
        return fb_time_add(b->open_until_us - now_us, b->cfg.open_deadline == FB_CMP_PASS);
    case FB_BREAKER_FORCED_OPEN:
        return FB_TIME_MAX;
    case FB_BREAKER_HALF_OPEN:
        return half_open_retry_in(b, now_us);
    default:
        return 0;
    }
}

fb_time_us fb_breaker_open_until(const fb_breaker *b) {
    return b->open_until_us;
}

uint64_t fb_breaker_generation(const fb_breaker *b) {
    return b->generation;
}

const fb_breaker_stats *fb_breaker_stats_get(const fb_breaker *b) {
    return &b->stats;
}

double fb_breaker_failure_rate(const fb_breaker *b) {
    if (b->cfg.mode == FB_BREAKER_MODE_COOLDOWN) {
        uint32_t total = b->cd_failures + b->cd_successes;
        return total < b->cfg.minimum_calls || total == 0 ? -1.0
                                                          : (double)b->cd_failures / (double)total;
    }
    if (b->cfg.mode == FB_BREAKER_MODE_CONSECUTIVE || !records_window(b->state) ||
        b->calls < b->cfg.minimum_calls)
        return -1.0;
    return (double)b->failures / (double)b->calls;
}

const char *fb_breaker_state_name(fb_breaker_state s) {
    static const char *const names[] = {
#define FB_BS_NAME(name, text) text,
        FB_BREAKER_STATE_MAP(FB_BS_NAME)
#undef FB_BS_NAME
    };
    return (unsigned)s < FB_BREAKER_STATE_COUNT ? names[s] : "unknown";
}

const char *fb_breaker_cause_name(fb_breaker_cause c) {
    static const char *const names[] = {
#define FB_BC_NAME(name, text) text,
        FB_BREAKER_CAUSE_MAP(FB_BC_NAME)
#undef FB_BC_NAME
    };
    return (unsigned)c < FB_CAUSE_COUNT ? names[c] : "unknown";
}
