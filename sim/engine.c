/*
 * engine.c - the discrete-event engine: pools, scheduling, the loop.
 *
 * Two clocks drive a run. The model's clock jumps from event to event
 * (sim__run_model). A port's clock follows real providers (sim__run_port): it waits
 * for real time to reach the next event or tick, takes the answers that
 * arrived, and runs what was due, in time order (sim__catch_up). Either way an
 * event is handled by step(), which hands it to the model's files.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simint.h"
#include "util/mem.h"

/* ---- pools ---- */

void sim__pool_init(pool *p, size_t size, size_t cap_max) {
    memset(p, 0, sizeof *p);
    p->size = size;
    p->cap_max = cap_max;
}

void sim__pool_free(pool *p) {
    free(p->base);
    free(p->free_list);
}

/* Allocate an entry; its generation (first field) survives reuse. */
int sim__pool_alloc(pool *p, uint32_t *out) {
    if (p->free_len > 0) {
        *out = p->free_list[--p->free_len];
        return FB_OK;
    }
    if (p->used == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 1024;
        if (ncap > p->cap_max) ncap = p->cap_max;
        if (ncap <= p->cap) return FB_ECAP;
        uint32_t *fl = realloc(p->free_list, ncap * sizeof *fl);
        if (fl == NULL) return FB_ENOMEM;
        p->free_list = fl;
        /* on cache lines: an entry whose size is whole lines starts on one (setup.c rounds
           them: the layouts in simint.h count on it). realloc, not a fresh aligned block: a
           large one grows in place (mremap), without the old and the new both resident; the
           entries move only when the block's offset to a line does. */
        size_t was = p->items ? (size_t)((char *)p->items - (char *)p->base) : 0;
        char *base = realloc(p->base, ncap * p->size + POOL_ALIGN);
        if (base == NULL) return FB_ENOMEM;
        util_mem_huge(base, ncap * p->size + POOL_ALIGN); /* before the new part is touched */
        size_t at = (POOL_ALIGN - (uintptr_t)base % POOL_ALIGN) % POOL_ALIGN;
        if (at != was) memmove(base + at, base + was, p->cap * p->size);
        memset(base + at + p->cap * p->size, 0, (ncap - p->cap) * p->size);
        p->base = base;
        p->items = base + at;
        p->cap = ncap;
    }
    *out = (uint32_t)p->used++;
    return FB_OK;
}

/* A zeroed entry whose generation is kept, so that events of its last use are stale. */
int sim__pool_take(pool *p, uint32_t *out) {
    int rc = sim__pool_alloc(p, out);
    if (rc != FB_OK) return rc;
    char *e = pool_at(p, *out);
    memset(e + sizeof(uint32_t), 0, p->size - sizeof(uint32_t));
    return FB_OK;
}

/* ---- errors, scheduling, the event log ---- */

void sim__stop(sim *s, int rc, const char *fmt, ...) {
    if (s->rc != FB_OK) return;
    s->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err->msg, sizeof s->err->msg, fmt, ap);
    va_end(ap);
    snprintf(s->sum->stop_reason, sizeof s->sum->stop_reason, "%s", s->err->msg);
}

static bool in_past(sim *s, fb_time_us t) {
    if (t >= s->now) return false;
    sim__stop(s, FB_ESTATE, "internal error: an event scheduled in the past (%lld < %lld)",
              (long long)t, (long long)s->now);
    return true;
}

static void queue_full(sim *s) {
    sim__stop(s, FB_ECAP, "event queue cap reached (limits.events = %zu) at t=%.3fs", s->q.cap_max,
              (double)s->now / 1e6);
}

/* sim__push could not schedule at t: it is in the past, or the queue is full. */
void sim__push_failed(sim *s, fb_time_us t) {
    if (!in_past(s, t)) queue_full(s);
}

/*
 * Request deadlines. Every request has one, its arrival plus the pods'
 * request timeout: in arrival order, the live requests are in deadline
 * order. They are kept as a list of the live requests through their
 * dl_prev / dl_next (s->dl_first, the oldest, to s->dl_last), and the event
 * queue holds only the first one's, as its outside lane. A request that ends
 * leaves the list, so nothing of it stays queued, and a deadline is popped
 * only when it fires. Each deadline still takes its sequence number and is
 * counted as scheduled when its request arrives, as a pushed event would be.
 */
static void deadline_head(sim *s) {
    if (s->dl_first == NONE32) {
        sim_queue_outside_head(&s->q, OUT_DEADLINES, NULL);
        return;
    }
    const req *r = R(s, s->dl_first);
    sim_event ev = {r->arrival_us + s->sc->pods.request_timeout_us,
                    r->dl_seq,
                    s->dl_first,
                    r->gen,
                    EV_DEADLINE,
                    0};
    sim_queue_outside_head(&s->q, OUT_DEADLINES, &ev);
}

/* The list was empty: r, just added, is its first. */
void sim__deadline_first(sim *s) {
    deadline_head(s);
}

/* Take r off the list (its deadline fired, or it ended: sim__deadline_drop). */
void sim__deadline_unlink(sim *s, req *r) {
    uint32_t prev = r->dl_prev, next = r->dl_next;
    r->dl_linked = false;
    if (next != NONE32)
        R(s, next)->dl_prev = prev;
    else
        s->dl_last = prev;
    if (prev != NONE32) {
        R(s, prev)->dl_next = next;
        return;
    }
    s->dl_first = next;
    deadline_head(s);
}

void sim__push_lane(sim *s, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen) {
    if (in_past(s, t)) return;
    if (sim_queue_push_lane(&s->q, lane, t, kind, id, gen, 0) != FB_OK) queue_full(s);
}

/* Deliver a log event, up to the log cap; past it, count what was dropped. */
void sim__log_event(sim *s, const sim_log_event *ev) {
    uint64_t cap = s->opts->events_log_max ? s->opts->events_log_max : 1000000;
    if (s->opts->on_event == NULL) return;
    if (s->events_logged >= cap) {
        s->sum->events_dropped++;
        return;
    }
    s->events_logged++;
    s->opts->on_event(s->opts->ctx, ev);
}

/* ---- one event ---- */

static bool req_is(sim *s, const sim_event *ev, int state) {
    const req *r = R(s, ev->id);
    return r->gen == ev->gen && (state < 0 || r->state == state);
}

static bool att_is(sim *s, const sim_event *ev, int state) {
    const attempt *a = A(s, ev->id);
    return a->gen == ev->gen && (state < 0 ? a->state != A_FREE : a->state == state);
}

/*
 * A class's arrivals (a shared source's) have one pending at a time: it is the
 * head of the class's outside lane, numbered when it is drawn as a push would
 * be, and compared at the pop with the other heads instead of going through
 * the calendar (half of the events of a run like the flagship's).
 */
_Static_assert(OUT_ARRIVALS + SIM_CLASSES_MAX <= SIM_OUTSIDE_MAX, "an outside lane per class");

/* Always inlined: with step() inlined into the loops GCC kept it a call (5 instructions an event
   on tuned, callgrind). */
__attribute__((always_inline)) static inline void next_arrival(sim *s, uint32_t cls) {
    fb_time_us t = sim_traffic_next(&s->traffic[cls], s->now);
    if (t != FB_TIME_MAX) sim__push_arrival(s, t, cls);
}

/* A replayed arrival that starts a session: its user, with one request of its turns sent
   (the arrival before next_arrival moves the cursor on); else NONE32. */
static uint32_t session_user(sim *s, uint32_t cls) {
    if (s->sc->classes[cls].turns == NULL) return NONE32;
    uint32_t u = s->session_base[cls] + s->traffic[cls].replay_i - 1;
    s->user_left[u]--;
    return u;
}

/* The recorded request an arrival of class cls (from `user`, or NONE32) is: its index in the
   class's recorded retries, when the variant waits as recorded; else NONE32 (a burst's, a
   closed-loop user's). A replayed arrival's before its class's traffic moves on (next_arrival,
   a serial client's end). */
uint32_t sim__recorded_index(sim *s, uint32_t cls, uint32_t user) {
    const sim_class *c = &s->sc->classes[cls];
    if (!s->pol->recorded_waits || c->retry_at_first == NULL) return NONE32;
    if (user == NONE32) return c->turns ? NONE32 : s->traffic[cls].replay_i - 1;
    return s->user_rec && s->user_left[user] != UINT32_MAX ? s->user_rec[user]++ : NONE32;
}

static void next_burst(sim *s, uint32_t cls) {
    fb_time_us t = sim_traffic_next_burst(&s->traffic[cls]);
    if (t != FB_TIME_MAX) sim__push(s, t > s->now ? t : s->now, EV_BURST, cls, 0, 0);
}

/* Hand one event to the model; false when it is stale (its entity moved on) and skipped.
   Inlined into the loops: a call and its frame cost 4 instructions an event (callgrind). */
/* long: one case per event kind, each a guard and a call */
__attribute__((always_inline)) static inline bool handle(sim *s, const sim_event *ev) {
    switch (ev->kind) {
    case EV_ARRIVAL: {
        uint32_t u = session_user(s, ev->id);
        /* without a call when the variant does not wait as recorded (most do not) */
        uint32_t rec = s->pol->recorded_waits ? sim__recorded_index(s, ev->id, u) : NONE32;
        sim__new_request(s, ev->id, u, rec);
        next_arrival(s, ev->id);
        return true;
    }
    case EV_BURST:
        sim__new_request(s, ev->id, NONE32, NONE32);
        next_burst(s, ev->id);
        return true;
    case EV_USER:
        if (s->user_left && s->user_left[ev->id] != UINT32_MAX) s->user_left[ev->id]--;
        sim__new_request(s, s->user_class[ev->id], ev->id,
                         sim__recorded_index(s, s->user_class[ev->id], ev->id));
        return true;
    case EV_WORK_DONE:
        if (!req_is(s, ev, R_LOCAL)) return false;
        sim__on_work_done(s, ev->id);
        return true;
    case EV_RESUME:
        if (!req_is(s, ev, R_WAITING)) return false;
        sim__on_resume(s, ev->id, ev->arg);
        return true;
    case EV_REPLY:
        if (!att_is(s, ev, A_REPLYING)) return false;
        sim__on_reply(s, ev->id);
        return true;
    case EV_SERVICE_DONE:
        if (!att_is(s, ev, A_SERVICE)) return false;
        sim__on_service_done(s, ev->id);
        return true;
    case EV_ATTEMPT_TIMEOUT:
        if (!att_is(s, ev, -1)) return false;
        sim__on_attempt_timeout(s, ev->id);
        return true;
    case EV_DEADLINE:
        /* the list's first: the next one's deadline is the queue's next head */
        if (R(s, ev->id)->gen == ev->gen && R(s, ev->id)->dl_linked)
            sim__deadline_unlink(s, R(s, ev->id));
        if (!req_is(s, ev, -1)) return false;
        sim__on_deadline(s, ev->id);
        return true;
    case EV_FINISH:
        if (!req_is(s, ev, R_FINISHING)) return false;
        sim__on_finish(s, ev->id);
        return true;
    case EV_FAULT_EDGE:
        sim__on_fault_edge(s, ev->id, ev->arg >> 1, ev->arg & 1);
        return true;
    case EV_STORE_RECORD:
        sim__on_store_record(s);
        return true;
    case EV_STORE_SYNC:
        sim__on_store_sync(s);
        return true;
    case EV_LAYER_TIMEOUT:
        if (!req_is(s, ev, -1)) return false;
        sim__on_layer_timeout(s, ev->id, ev->arg);
        return true;
    case EV_PUBLISH:
        sim__on_publish(s, ev->id);
        return true;
    case EV_BREAKER_TIMER:
        sim__on_breaker_timer(s, ev->id);
        return true;
    case EV_HEDGE:
        if (!req_is(s, ev, -1)) return false;
        sim__on_hedge(s, ev->id, ev->arg);
        return true;
    case EV_AT_PROVIDER:
        if (!att_is(s, ev, A_TRAVEL)) return false;
        sim__on_at_provider(s, ev->id);
        return true;
    case EV_AT_CLIENT:
        if (!att_is(s, ev, A_RETURNING)) return false;
        sim__on_at_client(s, ev->id);
        return true;
    default: {
        int fleet = sim__fleet_step(s, ev); /* the fleet's events: fleet.c */
        if (fleet >= 0) return fleet == 1;
        sim__stop(s, FB_ESTATE, "internal error: unknown event kind %u", ev->kind);
        return false;
    }
    }
}

/* One popped event: handled, or counted stale (docs/engine.md says what an event is). Inlined
   into the loops: its call and frame cost tuned 7 instructions an event, naive 11 (callgrind). */
__attribute__((always_inline)) static inline void step(sim *s, const sim_event *ev) {
    if (handle(s, ev))
        s->events_handled++;
    else
        s->events_stale++;
}

/* ---- the loops ---- */

#define PROGRESS_EVERY_US (60 * FB_US_PER_S)

static void progress(sim *s) {
    if (s->now < s->next_progress_us || s->opts->on_progress == NULL) return;
    s->opts->on_progress(s->opts->ctx, s->now, s->sc->duration_us);
    s->next_progress_us = s->now + PROGRESS_EVERY_US;
}

/*
 * The entities of the events about to be handled are fetched into the cache
 * while this one is handled, the lines their events touch: an attempt
 * PREFETCH_ATT events ahead, and the request of the attempt PREFETCH_REQ
 * events ahead (its attempt fetched rounds before, so reading its `req`
 * seldom waits). With tens of thousands of requests in flight (a retry
 * storm), their first touch would otherwise wait for memory. An attempt's
 * hot fields are its first line; a request's, its first line and the two
 * that end at its first hop's `first_outcome` (simint.h's layout, entries
 * on line boundaries): three fixed offsets, not the entry's six lines,
 * which cost the naive storm 32 instructions an event more and 9% more CPU
 * time (its 30 minutes: 14.8 s against 16.3, medians of 3). Measured against
 * one attempt line two events ahead and one request line one ahead: the
 * naive storm's 30 minutes 11% less CPU time, its 15 minutes 27% (4 and 2
 * beat 6 and 3, 8 and 4, 3 and 1: the runs hold about 16 events). Hints
 * only: nothing here changes what happens. Always inlined: GCC takes a
 * function that only prefetches for a pure one, and drops its calls. Only
 * once the requests' pool has outgrown a core's L2 (PREFETCH_FROM): below,
 * the entities are in the cache already, and the hints cost the flagship's
 * tuned variant 33 instructions an event for no time saved (farm-bench).
 */
#define PREFETCH_FROM 4096 /* requests: 480 KiB, with their attempts past a 512 KiB L2 */
#define PREFETCH_ATT 4     /* events ahead: an attempt's line (one: the layout, docs/engine.md) */
#define PREFETCH_REQ 2     /* events ahead: the request's lines, its attempt's arrived by then */
/* The end of what an attempt touches of its request: its first hop's per-attempt part. */
#define REQ_HOT_END (offsetof(req, hops) + offsetof(hop, first_outcome) + 1)
static inline bool on_attempt(uint32_t kind) {
    return kind >= EV_REPLY && kind <= EV_ATTEMPT_TIMEOUT;
}
__attribute__((always_inline)) static inline void prefetch_upcoming(const sim *s) {
    const sim_event *e = sim_queue_upcoming(&s->q, PREFETCH_ATT - 1);
    if (e != NULL && on_attempt(e->kind) && e->id < s->atts.used)
        __builtin_prefetch(A((sim *)s, e->id));
    e = sim_queue_upcoming(&s->q, PREFETCH_REQ - 1);
    if (e == NULL) return;
    uint32_t ri = e->id;
    if (on_attempt(e->kind)) {
        const attempt *a = e->id < s->atts.used ? A((sim *)s, e->id) : NULL;
        ri = a != NULL && a->gen == e->gen ? a->req : NONE32; /* stale: its request untouched */
    } else if (e->kind < EV_WORK_DONE || e->kind > EV_FINISH) {
        return;
    }
    if (ri >= s->reqs.used) return;
    /* addresses, not pointers: a request of no layer ends before REQ_HOT_END (a hint to an
       address past it is harmless) */
    uintptr_t r = (uintptr_t)R((sim *)s, ri);
    __builtin_prefetch((const void *)r);
    __builtin_prefetch((const void *)(r + REQ_HOT_END - 65));
    __builtin_prefetch((const void *)(r + REQ_HOT_END - 1));
}

/*
 * The loop's checks that fall due now and then: the next tick's row and the
 * next progress report. The earlier of their times, never before now.
 */
static fb_time_us next_due(const sim *s) {
    fb_time_us due = s->tick_due_us;
    if (s->opts->on_progress != NULL && s->next_progress_us < due) due = s->next_progress_us;
    return due < s->now ? s->now : due;
}

/* Those checks, before ev (its time reached the due time, or went back); false: stop. */
static bool due_checks(sim *s, const sim_event *ev) {
    if (ev->t < s->now) {
        sim__stop(s, FB_ESTATE, "invariant: time went back from %lld to %lld", (long long)s->now,
                  (long long)ev->t);
        return false;
    }
    if (ev->t >= s->tick_due_us) sim__emit_ticks(s, ev->t);
    s->now = ev->t;
    if (s->now >= s->next_progress_us) progress(s);
    return true;
}

/*
 * The answers handled ahead of their turn (request.c: sim__answer_ahead), one after the other,
 * each at its own time; then the clock goes back to t, the time of the event just handled.
 * Each is an event handled (it is counted as scheduled too: sim__stat_finalize).
 */
static void run_ahead(sim *s, fb_time_us t) {
    do {
        uint32_t ai = s->ahead_ai;
        s->ahead_ai = NONE32;
        s->now = s->ahead_at;
        sim__deliver(s, ai);
        s->events_handled++;
        s->events_ahead++;
    } while (s->ahead_ai != NONE32 && s->rc == FB_OK);
    s->now = t;
}

/*
 * Whether any answer may be handled ahead in this run (sim__answer_ahead asks the rest per
 * answer): a layer whose engine retries at once with nothing else to decide (every seat's is
 * built from the same settings), no hedging, connections, network latency or fleet. Not with
 * FUSEBOX_NO_AHEAD set: every answer in its turn, to compare (docs/engine.md).
 */
static bool may_go_ahead(sim *s) {
    if (s->att_x || s->hg_offset || s->fleet || getenv("FUSEBOX_NO_AHEAD") != NULL) return false;
    for (uint32_t l = 0; l < s->NL; l++) {
        const fb_fallback *fb = pod_fb(s, seat_first(s, l), l);
        if (fb->plain && fb->retry_plain && !fb->cfg.wait_always) return true;
    }
    return false;
}

/* The virtual clock: jump from event to event. */
void sim__run_model(sim *s) {
    static volatile sig_atomic_t never; /* without a stop flag: one load, never set */
    sim_event ev;
    volatile sig_atomic_t *halt = s->opts->stop != NULL ? s->opts->stop : &never;
    s->next_progress_us = PROGRESS_EVERY_US;
    fb_time_us due = next_due(s), end = s->sc->duration_us;
    s->ahead_ai = NONE32;
    s->ahead_due = due;
    s->ahead_on = may_go_ahead(s);
    while (s->rc == FB_OK && sim_queue_pop(&s->q, &ev)) {
        /* one load a event: a signal stops the run between two events, never inside one */
        if (*halt) {
            sim__stop(s, FB_EINTR, "interrupted by a signal at t=%.3fs", (double)s->now / 1e6);
            break;
        }
        /* after the traffic window, stop once every request has ended */
        if (ev.t > end && s->live == 0) break;
        /* one compare for both: ev.t at or after due, or before now (unsigned, it wraps) */
        if ((uint64_t)(ev.t - s->now) >= (uint64_t)(due - s->now)) {
            if (!due_checks(s, &ev)) break;
            due = next_due(s);
            s->ahead_due = due;
        }
        s->now = ev.t;
        if (s->reqs.used >= PREFETCH_FROM) {
            prefetch_upcoming(s);
            sim_queue_fetch_ahead(&s->q);
        }
        step(s, &ev);
        if (s->ahead_ai != NONE32) run_ahead(s, ev.t);
    }
}

/* Run the events due at or before t, each at its own time (or now, when now is later). */
void sim__catch_up(sim *s, fb_time_us t) {
    sim_event ev;
    while (s->rc == FB_OK && sim_queue_peek(&s->q, &ev) && ev.t <= t) {
        sim_queue_pop(&s->q, &ev);
        sim__emit_ticks(s, ev.t);
        if (ev.t > s->now) s->now = ev.t;
        step(s, &ev);
    }
    sim__emit_ticks(s, t);
}

/* The port's clock: wait for real time to reach the next event, take the answers, catch up. */
void sim__run_port(sim *s) {
    const sim_port *port = s->port;
    sim_event ev;
    s->next_progress_us = PROGRESS_EVERY_US;
    while (s->rc == FB_OK) {
        bool have = sim_queue_peek(&s->q, &ev);
        /* as in run_model: nothing in flight and nothing left before the end of traffic */
        if (s->live == 0 && (!have || ev.t > s->sc->duration_us)) break;
        fb_time_us until = have ? ev.t : FB_TIME_MAX;
        if (sim__rows_left(s) && sim__tick_end(s) < until) until = sim__tick_end(s);
        fb_time_us now = s->now;
        char msg[256] = "";
        int rc = port->wait(port->ctx, until, &now, msg, sizeof msg);
        if (rc != FB_OK) {
            sim__emit_ticks(s, now);
            if (now > s->now) s->now = now;
            sim__stop(s, rc, "%s at t=%.3fs", msg, (double)s->now / 1e6);
            break;
        }
        port->collect(port->ctx, s);
        sim__catch_up(s, now);
        if (now > s->now) s->now = now;
        progress(s);
    }
}
