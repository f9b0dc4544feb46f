/*
 * sim.c - pods, providers and traffic under a virtual clock.
 *
 * One run = one variant. Entities live in pools indexed by small integers
 * (requests, attempts) with generation counters; events carry (kind, index,
 * generation) and an event whose generation no longer matches is stale and
 * skipped. See docs/engine.md for the event kinds and docs/models.md for the
 * models.
 */
#include "sim/sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "sim/queue.h"
#include "sim/traffic.h"

enum {
    EV_ARRIVAL = 1,     /* id = class */
    EV_BURST,           /* id = class */
    EV_USER,            /* id = closed-loop user */
    EV_WORK_DONE,       /* id = request */
    EV_RESUME,          /* id = request */
    EV_REPLY,           /* id = attempt: an answer that took no capacity */
    EV_SERVICE_DONE,    /* id = attempt: a served attempt finished */
    EV_ATTEMPT_TIMEOUT, /* id = attempt */
    EV_DEADLINE,        /* id = request */
    EV_FINISH,          /* id = request: degraded answer ready */
    EV_FAULT_EDGE,      /* id = provider, arg = fault << 1 | is_end */
    EV_STORE_RECORD,    /* lane: a result reaches the shared store */
    EV_STORE_SYNC,      /* lane: the store's state reaches the pods */
};

enum { LANE_DEADLINE = 0, LANE_STORE_RECORD = 1, LANE_STORE_SYNC = 2 };

enum { R_FREE = 0, R_QUEUED, R_LOCAL, R_CALLING, R_WAITING, R_FINISHING };
enum { A_FREE = 0, A_QUEUED, A_SERVICE, A_REPLYING, A_HANG, A_PORT /* at a real provider */ };

#define PURPOSE_REQUEST 2u
#define PURPOSE_POD 3u
#define PURPOSE_USER 4u
#define ENTITY_POD 0x20000u
#define ENTITY_USER 0x40000000u
#define NONE32 UINT32_MAX

typedef struct req {
    uint32_t gen;
    uint8_t state;
    uint8_t cls;
    bool holds_worker;
    bool exposed; /* its class may call a faulted provider */
    uint32_t pod;
    uint32_t user;
    uint32_t attempt; /* current attempt index + 1, 0 = none */
    uint32_t prompt_tokens, completion_tokens, tokens_left;
    fb_time_us arrival_us;
    fb_rng rng;
    fb_fallback_request fr;
} req;

typedef struct attempt {
    uint32_t gen;
    uint8_t state;
    uint8_t provider;
    bool abandoned;
    bool counted_service; /* took a slot */
    bool stream;          /* the request streams its answer */
    uint32_t req, req_gen;
    uint32_t tokens_in, tokens_out; /* billed when served */
    fb_time_us start_us;
    fb_time_us timeout_at_us; /* the client gives up then; FB_TIME_MAX = never */
    bool timer_armed;
    fb_reply reply;
    fb_time_us hint_us;
} attempt;

/* A FIFO of (index, generation) pairs, growable up to a cap. */
typedef struct ring {
    uint64_t *v;
    size_t head, len, cap;
} ring;

typedef struct pool {
    void *items;
    size_t size, used, cap, cap_max;
    uint32_t *free_list;
    size_t free_len;
} pool;

typedef struct bctx {
    struct sim *s;
    int pod; /* -1 = store */
    uint8_t provider;
} bctx;

typedef struct view {
    fb_breaker_state state;
    fb_time_us open_until_us;
    uint64_t generation;
    struct sim *s;
    uint8_t provider;
} view;

typedef struct store_record {
    uint8_t provider;
    fb_breaker_permit permit;
    fb_effect effect;
    fb_time_us duration_us, hint_us;
} store_record;

typedef struct store_sync {
    uint8_t provider;
    fb_breaker_state state;
    fb_time_us open_until_us;
    uint64_t generation;
} store_sync;

typedef struct pod {
    uint32_t busy;
    bool pulling; /* pod_pull() is running */
    ring queue;
    uint32_t qlive;
    fb_fallback fb;
    fb_budget budget;
    fb_rng rng;
} pod;

typedef struct prov {
    uint32_t busy;
    ring queue;
    uint32_t qlive;
    bool has_rpm, has_tpm;
    fb_bucket rpm, tpm;
    double capacity_factor;
    fb_breaker store;
    bctx store_ctx;
    bool exposed_fault; /* has scripted faults */
    struct {
        uint64_t attempts, errors, rate_limited, timeouts;
    } tick;
} prov;

typedef struct sim {
    const sim_scenario *sc;
    const sim_policy *pol;
    const sim_run_opts *opts;
    const sim_port *port; /* NULL: the provider model */
    sim_summary *sum;
    sim_error *err;
    uint32_t P, npods;
    sim_queue q;
    fb_time_us now;
    fb_retry_policy retry;
    fb_classifier classifier;
    pool reqs, atts;
    pod *pods;
    prov provs[SIM_PROVIDERS_MAX];
    fb_breaker *breakers; /* npods * P, per-pod scope */
    bctx *bctxs;
    fb_time_us *open_since; /* npods * P (+ P for stores) */
    fb_time_us *open_end;   /* when each open period ends at the latest */
    view *views;            /* npods * P, shared scope */
    fb_ratelimit *limiters; /* npods * P */
    sim_traffic traffic[SIM_CLASSES_MAX];
    uint32_t users_total;
    uint32_t *user_class; /* closed loop: user -> class */
    fb_rng *user_rng;
    uint64_t serial;
    uint32_t rr;
    uint64_t live;
    uint64_t events_logged;
    uint64_t pod_queue_total;
    uint64_t busy_total;
    bool class_exposed[SIM_CLASSES_MAX];
    /* shared-store lanes' payloads, FIFO in the same order as the lanes */
    store_record *recs;
    size_t recs_head, recs_len, recs_cap;
    store_sync *syncs;
    size_t syncs_head, syncs_len, syncs_cap;
    /* time series */
    sim_row row;
    fb_hist tick_hist;
    fb_time_us next_tick_us;
    fb_time_us next_progress_us;
    /* baseline and spillover */
    fb_time_us first_window_us;
    uint64_t base_ended, base_bad;
    fb_hist base_hist;
    bool baseline_ready;
    /* a sliding window over the last win_k ticks, for "back to baseline" */
    fb_hist *win_hist; /* ring of per-tick histograms */
    uint64_t *win_ended, *win_bad;
    uint32_t win_k, win_pos, win_fill;
    fb_hist win_sum;
    uint64_t win_ended_sum, win_bad_sum;
    /* disturbance windows: faults and spikes */
    struct {
        fb_time_us start_us, end_us;
    } windows[SIM_PROVIDERS_MAX * SIM_FAULTS_MAX + SIM_CLASSES_MAX * SIM_SCHEDULE_MAX];
    uint32_t window_count;
    int rc; /* first fatal error */
} sim;

const char *sim_end_name(sim_end e) {
    static const char *const names[] = {
#define SIM_END_NAME(name, text) text,
        SIM_END_MAP(SIM_END_NAME)
#undef SIM_END_NAME
    };
    return (unsigned)e < SIM_END_COUNT ? names[e] : "unknown";
}

/* ---- small containers ---- */

static int ring_push(ring *r, uint32_t id, uint32_t gen, size_t cap_max) {
    if (r->len == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 64;
        if (ncap > cap_max) ncap = cap_max;
        if (ncap <= r->cap) return FB_ECAP;
        uint64_t *v = realloc(r->v, ncap * sizeof *v);
        if (v == NULL) return FB_ENOMEM;
        if (r->head + r->len > r->cap)
            memcpy(v + r->cap, v, (r->head + r->len - r->cap) * sizeof *v);
        r->v = v;
        r->cap = ncap;
    }
    r->v[(r->head + r->len) % r->cap] = (uint64_t)id << 32 | gen;
    r->len++;
    return FB_OK;
}

static bool ring_pop(ring *r, uint32_t *id, uint32_t *gen) {
    if (r->len == 0) return false;
    uint64_t x = r->v[r->head];
    r->head = (r->head + 1) % r->cap;
    r->len--;
    *id = (uint32_t)(x >> 32);
    *gen = (uint32_t)x;
    return true;
}

static int pool_init(pool *p, size_t size, size_t cap_max) {
    memset(p, 0, sizeof *p);
    p->size = size;
    p->cap_max = cap_max;
    return FB_OK;
}

static void pool_free(pool *p) {
    free(p->items);
    free(p->free_list);
}

static void *pool_at(const pool *p, uint32_t i) {
    return (char *)p->items + (size_t)i * p->size;
}

/* Allocate an entry; its generation (first field) survives reuse. */
static int pool_alloc(pool *p, uint32_t *out) {
    if (p->free_len > 0) {
        *out = p->free_list[--p->free_len];
        return FB_OK;
    }
    if (p->used == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 1024;
        if (ncap > p->cap_max) ncap = p->cap_max;
        if (ncap <= p->cap) return FB_ECAP;
        void *items = realloc(p->items, ncap * p->size);
        if (items == NULL) return FB_ENOMEM;
        uint32_t *fl = realloc(p->free_list, ncap * sizeof *fl);
        if (fl == NULL) {
            p->items = items;
            return FB_ENOMEM;
        }
        memset((char *)items + p->cap * p->size, 0, (ncap - p->cap) * p->size);
        p->items = items;
        p->free_list = fl;
        p->cap = ncap;
    }
    *out = (uint32_t)p->used++;
    return FB_OK;
}

static void pool_release(pool *p, uint32_t i) {
    uint32_t *gen = pool_at(p, i);
    (*gen)++;
    p->free_list[p->free_len++] = i;
}

static req *R(sim *s, uint32_t i) {
    return pool_at(&s->reqs, i);
}

static attempt *A(sim *s, uint32_t i) {
    return pool_at(&s->atts, i);
}

/* ---- errors ---- */

static void stop(sim *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void stop(sim *s, int rc, const char *fmt, ...) {
    if (s->rc != FB_OK) return;
    s->rc = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err->msg, sizeof s->err->msg, fmt, ap);
    va_end(ap);
    snprintf(s->sum->stop_reason, sizeof s->sum->stop_reason, "%s", s->err->msg);
}

static void push(sim *s, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen, uint32_t arg) {
    if (t < s->now) {
        stop(s, FB_ESTATE, "internal error: an event scheduled in the past (%lld < %lld)",
             (long long)t, (long long)s->now);
        return;
    }
    int rc = sim_queue_push(&s->q, t, kind, id, gen, arg);
    if (rc != FB_OK)
        stop(s, FB_ECAP, "event queue cap reached (limits.events = %zu) at t=%.3fs", s->q.cap_max,
             (double)s->now / 1e6);
}

static void push_lane(sim *s, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id,
                      uint32_t gen) {
    if (t < s->now) {
        stop(s, FB_ESTATE, "internal error: an event scheduled in the past (%lld < %lld)",
             (long long)t, (long long)s->now);
        return;
    }
    int rc = sim_queue_push_lane(&s->q, lane, t, kind, id, gen, 0);
    if (rc != FB_OK)
        stop(s, FB_ECAP, "event queue cap reached (limits.events = %zu) at t=%.3fs", s->q.cap_max,
             (double)s->now / 1e6);
}

/* ---- sampling ---- */

static double draw(fb_rng *rng, const sim_dist *d) {
    switch (d->kind) {
    case SIM_DIST_CONSTANT:
        return d->a;
    case SIM_DIST_UNIFORM:
        return d->a + (d->b - d->a) * fb_rng_uniform(rng);
    case SIM_DIST_EXPONENTIAL:
        return d->a > 0 ? fb_rng_exponential(rng, d->a) : 0;
    case SIM_DIST_LOGNORMAL:
        return fb_rng_lognormal(rng, d->a, d->b);
    }
    return d->a;
}

static fb_time_us draw_us(fb_rng *rng, const sim_dist *d) {
    double v = draw(rng, d);
    if (!(v > 0)) return 0;
    if (v > 1e15) return (fb_time_us)1e15;
    return (fb_time_us)llround(v);
}

static uint32_t draw_tokens(fb_rng *rng, const sim_dist *d) {
    double v = draw(rng, d);
    if (!(v > 0)) return 0;
    if (v > 1e8) return 100000000u;
    return (uint32_t)llround(v);
}

/* ---- windows and faults ---- */

static bool in_window(const sim *s, fb_time_us t) {
    for (uint32_t i = 0; i < s->window_count; i++)
        if (t >= s->windows[i].start_us && t < s->windows[i].end_us) return true;
    return false;
}

static bool fault_active(const sim_fault *f, fb_time_us t) {
    return t >= f->at_us && t - f->at_us < f->for_us;
}

static uint32_t effective_concurrency(const sim *s, uint32_t p) {
    const sim_provider *pv = &s->sc->providers[p];
    if (pv->concurrency == 0) return UINT32_MAX;
    double c = (double)pv->concurrency * s->provs[p].capacity_factor;
    return (uint32_t)floor(c);
}

/* ---- billing ---- */

static double cost_of(const sim_provider *pv, uint64_t in, uint64_t out) {
    return (double)in * pv->price_in_per_mtok / 1e6 + (double)out * pv->price_out_per_mtok / 1e6 +
           pv->price_per_call;
}

static void bill(sim *s, const attempt *a, uint32_t out_tokens, bool wasted) {
    const sim_provider *pv = &s->sc->providers[a->provider];
    sim_provider_summary *ps = &s->sum->providers[a->provider];
    double c = cost_of(pv, a->tokens_in, out_tokens);
    ps->served++;
    ps->tokens_in += a->tokens_in;
    ps->tokens_out += out_tokens;
    ps->cost_usd += c;
    s->sum->cost_usd += c;
    if (wasted) {
        ps->tokens_in_wasted += a->tokens_in;
        ps->tokens_out_wasted += out_tokens;
        ps->cost_wasted_usd += c;
        s->sum->cost_wasted_usd += c;
    }
}

/* Did a served attempt's output go to the user (else its tokens were wasted)? */
static bool output_used(const sim *s, const fb_reply *r) {
    bool ok = r->status == 200 && r->transport == FB_TRANSPORT_NONE &&
              r->error_kind == FB_ERRKIND_NONE && !r->after_first_token;
    /* a broken stream that the client resumes keeps what it received */
    bool kept = r->after_first_token && s->pol->stream == FB_STREAM_RESUME;
    return ok || kept;
}

/* ---- requests ---- */

static void pod_pull(sim *s, uint32_t podi);
static void dispatch(sim *s, uint32_t p_i);
static void handle_decision(sim *s, uint32_t ri, fb_fallback_decision d);

static void release_worker(sim *s, req *r) {
    if (!r->holds_worker) return;
    r->holds_worker = false;
    s->pods[r->pod].busy--;
    s->busy_total--;
}

static void finish(sim *s, uint32_t ri, sim_end end, bool via_fallback) {
    req *r = R(s, ri);
    sim_summary *sum = s->sum;
    fb_time_us lat = s->now - r->arrival_us;
    uint32_t podi = r->pod;
    sum->ended[end]++;
    s->row.ended++;
    fb_hist_record(&sum->latency, lat);
    fb_hist_record(&s->tick_hist, lat);
    bool ok = end == SIM_END_SUCCESS || end == SIM_END_DEGRADED;
    bool bad = !ok;
    if (end == SIM_END_SUCCESS) {
        fb_hist_record(&sum->latency_ok, lat);
        s->row.success++;
        if (via_fallback) {
            sum->success_fallback++;
            s->row.fallback_success++;
        } else {
            sum->success_primary++;
        }
    } else if (end == SIM_END_DEGRADED) {
        s->row.degraded++;
    } else {
        sum->errors++;
        s->row.errors++;
    }
    if (ok && lat > s->sc->slo_latency_us) {
        sum->slo_missed++;
        s->row.slo_missed++;
        bad = true;
    }
    if (bad) {
        sum->bad++;
        if (!r->exposed) sum->bad_collateral++;
    }
    if (!s->baseline_ready && s->now < s->first_window_us) {
        s->base_ended++;
        if (bad) s->base_bad++;
        fb_hist_record(&s->base_hist, lat);
    }
    if (r->state == R_QUEUED) {
        s->pods[podi].qlive--;
        s->pod_queue_total--;
    }
    release_worker(s, r);
    uint32_t user = r->user;
    r->state = R_FREE;
    pool_release(&s->reqs, ri);
    s->live--;
    if (user != NONE32) {
        const sim_class *c = &s->sc->classes[s->user_class[user]];
        fb_time_us think = draw_us(&s->user_rng[user], &c->think_us);
        if (s->now + think < s->sc->duration_us) push(s, s->now + think, EV_USER, user, 0, 0);
    }
    pod_pull(s, podi);
}

static void abandon_attempt(sim *s, req *r) {
    if (r->attempt == 0) return;
    attempt *a = A(s, r->attempt - 1);
    r->attempt = 0;
    a->abandoned = true;
    const sim_provider *pv = &s->sc->providers[a->provider];
    prov *p = &s->provs[a->provider];
    switch (a->state) {
    case A_QUEUED:
        if (!pv->keeps_working) {
            /* cancelled: the provider drops it from its queue */
            p->qlive--;
            a->state = A_FREE;
            pool_release(&s->atts, (uint32_t)(a - A(s, 0)));
        }
        break;
    case A_SERVICE:
        if (!pv->keeps_working) {
            bill(s, a, 0, true);
            p->busy--;
            a->state = A_FREE;
            pool_release(&s->atts, (uint32_t)(a - A(s, 0)));
            dispatch(s, a->provider); /* the freed slot serves the next queued attempt */
        }
        break;
    case A_REPLYING:
    case A_HANG:
        a->state = A_FREE;
        pool_release(&s->atts, (uint32_t)(a - A(s, 0)));
        break;
    case A_PORT: {
        uint32_t ai = (uint32_t)(a - A(s, 0));
        s->port->cancel(s->port->ctx, (uint64_t)ai << 32 | a->gen);
        p->busy--;
        a->state = A_FREE;
        pool_release(&s->atts, ai);
        break;
    }
    default:
        break;
    }
}

static void start_request(sim *s, uint32_t ri);

/*
 * Start queued requests while workers are free. A started request may end at
 * once (no call, an open breaker) and free its worker, which would pull again
 * from inside this loop: the flag keeps that flat, so a long queue of quick
 * requests cannot grow the stack.
 */
static void pod_pull(sim *s, uint32_t podi) {
    pod *pd = &s->pods[podi];
    if (pd->pulling) return;
    pd->pulling = true;
    uint32_t id, gen;
    while (pd->busy < s->sc->pods.workers && ring_pop(&pd->queue, &id, &gen)) {
        req *r = R(s, id);
        if (r->gen != gen || r->state != R_QUEUED) continue;
        pd->qlive--;
        s->pod_queue_total--;
        start_request(s, id);
    }
    pd->pulling = false;
}

static void begin_call(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    const sim_class *c = &s->sc->classes[r->cls];
    if (c->target == SIM_TARGET_NONE) {
        finish(s, ri, SIM_END_SUCCESS, false);
        return;
    }
    uint8_t one = c->provider;
    const uint8_t *order = NULL;
    uint32_t order_len = 0;
    if (c->target == SIM_TARGET_PROVIDER) {
        order = &one;
        order_len = 1;
    } else if (c->order_len > 0) {
        order = c->order;
        order_len = c->order_len;
    }
    r->state = R_CALLING;
    fb_fallback_decision d =
        fb_fallback_begin(&s->pods[r->pod].fb, &r->fr, r->prompt_tokens + r->completion_tokens,
                          order, order_len, s->now);
    handle_decision(s, ri, d);
}

static void start_request(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    r->state = R_LOCAL; /* out of the queue, on a worker */
    r->holds_worker = true;
    s->pods[r->pod].busy++;
    s->busy_total++;
    const sim_class *c = &s->sc->classes[r->cls];
    fb_time_us work = draw_us(&r->rng, &c->service_us);
    if (work > 0) {
        r->state = R_LOCAL;
        push(s, s->now + work, EV_WORK_DONE, ri, r->gen, 0);
        return;
    }
    begin_call(s, ri);
}

static void new_request(sim *s, uint32_t cls, uint32_t user) {
    if (s->sum->requests >= s->sc->limits.requests_max) {
        stop(s, FB_ECAP, "request cap reached (limits.requests = %llu) at t=%.3fs",
             (unsigned long long)s->sc->limits.requests_max, (double)s->now / 1e6);
        return;
    }
    if (s->live >= s->sc->limits.in_flight_max) {
        stop(s, FB_ECAP, "in-flight cap reached (limits.in_flight = %llu) at t=%.3fs",
             (unsigned long long)s->sc->limits.in_flight_max, (double)s->now / 1e6);
        return;
    }
    uint32_t ri;
    int rc = pool_alloc(&s->reqs, &ri);
    if (rc != FB_OK) {
        stop(s, rc, "cannot hold more requests in flight at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    req *r = R(s, ri);
    uint32_t gen = r->gen;
    memset(r, 0, sizeof *r);
    r->gen = gen;
    const sim_class *c = &s->sc->classes[cls];
    r->cls = (uint8_t)cls;
    r->user = user;
    r->exposed = s->class_exposed[cls];
    r->arrival_us = s->now;
    fb_rng_derive(&r->rng, s->sc->seed, s->serial++, PURPOSE_REQUEST);
    r->prompt_tokens = draw_tokens(&r->rng, &c->prompt_tokens);
    r->completion_tokens = draw_tokens(&r->rng, &c->completion_tokens);
    r->tokens_left = r->completion_tokens;
    r->pod = s->rr++ % s->npods;
    s->live++;
    s->sum->requests++;
    s->row.arrivals++;
    if (c->target != SIM_TARGET_NONE) {
        s->sum->requests_calling++;
        if (in_window(s, s->now)) s->sum->requests_in_fault++;
    }
    if (s->live > s->sum->in_flight_peak) s->sum->in_flight_peak = s->live;
    push_lane(s, LANE_DEADLINE, s->now + s->sc->pods.request_timeout_us, EV_DEADLINE, ri, r->gen);
    pod *pd = &s->pods[r->pod];
    if (pd->busy < s->sc->pods.workers) {
        start_request(s, ri);
    } else if (pd->qlive < s->sc->pods.queue) {
        rc = ring_push(&pd->queue, ri, r->gen, (size_t)s->sc->limits.in_flight_max + 1);
        if (rc != FB_OK) {
            stop(s, FB_ECAP, "pod queue cannot grow at t=%.3fs", (double)s->now / 1e6);
            return;
        }
        r->state = R_QUEUED;
        pd->qlive++;
        s->pod_queue_total++;
        if (s->pod_queue_total > s->sum->pod_queue_peak)
            s->sum->pod_queue_peak = s->pod_queue_total;
    } else {
        r->state = R_LOCAL; /* never queued, holds no worker */
        finish(s, ri, SIM_END_QUEUE_FULL, false);
    }
}

/* ---- attempts at a provider ---- */

static void deliver(sim *s, uint32_t ai);

/*
 * Schedule the client's attempt timeout only when the attempt would not be
 * over by then: most attempts end earlier, and their timers would only fill
 * the heap. A reply due exactly at the timeout is accepted.
 */
static void arm_timeout(sim *s, uint32_t ai, fb_time_us done_at) {
    attempt *a = A(s, ai);
    if (a->timer_armed || a->timeout_at_us == FB_TIME_MAX || done_at <= a->timeout_at_us) return;
    a->timer_armed = true;
    push(s, a->timeout_at_us, EV_ATTEMPT_TIMEOUT, ai, a->gen, 0);
}

/* A service time from doubles, bounded so that no time sum can overflow. */
static fb_time_us service_us(double us) {
    if (!(us > 0)) return 0;
    return us > 1e15 ? (fb_time_us)1e15 : (fb_time_us)llround(us);
}

static void start_service(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    req *r = R(s, a->req);
    const sim_provider *pv = &s->sc->providers[a->provider];
    prov *p = &s->provs[a->provider];
    p->busy++;
    if (p->busy > s->sum->providers[a->provider].in_service_peak)
        s->sum->providers[a->provider].in_service_peak = p->busy;
    a->state = A_SERVICE;
    a->counted_service = true;
    /* latency draws come from the request's stream: the same request sees the
     * same latency under every variant as long as it makes the same attempts */
    fb_rng *rng = r->gen == a->req_gen ? &r->rng : &s->pods[0].rng;
    double factor = 1.0;
    const sim_fault *mid = NULL;
    for (uint32_t i = 0; i < pv->fault_count; i++) {
        const sim_fault *f = &pv->faults[i];
        if (!fault_active(f, s->now)) continue;
        if (f->kind == SIM_FAULT_SLOW && fb_rng_uniform(rng) < f->fraction) factor *= f->factor;
        if (f->kind == SIM_FAULT_MIDSTREAM && mid == NULL && fb_rng_uniform(rng) < f->fraction)
            mid = f;
    }
    double ttft = (double)draw_us(rng, &pv->ttft_us) * factor;
    double per = (double)pv->per_token_us * factor;
    fb_time_us dur = service_us(ttft + per * (double)a->tokens_out);
    memset(&a->reply, 0, sizeof a->reply);
    a->reply.should_retry = -1;
    a->reply.status = 200;
    if (mid && mid->after_tokens < a->tokens_out) {
        dur = service_us(ttft + per * (double)mid->after_tokens);
        /* a streamed answer fails after the user saw tokens; a plain one just fails */
        a->reply.after_first_token = a->stream;
        a->tokens_out = mid->after_tokens; /* generated before the failure */
        if (mid->mode == SIM_MIDSTREAM_ERROR) {
            a->reply.status = 529;
            a->reply.error_kind = FB_ERRKIND_OVERLOADED;
        } else {
            a->reply.status = 0;
            a->reply.transport =
                mid->mode == SIM_MIDSTREAM_CUT ? FB_TRANSPORT_RESET : FB_TRANSPORT_OTHER;
        }
    }
    push(s, s->now + dur, EV_SERVICE_DONE, ai, a->gen, 0);
    arm_timeout(s, ai, s->now + dur);
}

static void dispatch(sim *s, uint32_t p_i) {
    prov *p = &s->provs[p_i];
    uint32_t cap = effective_concurrency(s, p_i);
    uint32_t id, gen;
    while (p->busy < cap && ring_pop(&p->queue, &id, &gen)) {
        attempt *a = A(s, id);
        if (a->gen != gen || a->state != A_QUEUED) continue;
        p->qlive--;
        start_service(s, id);
    }
}

static void reply_now(sim *s, uint32_t ai, int status, fb_error_kind kind, fb_transport tr,
                      fb_time_us hint, fb_time_us delay) {
    attempt *a = A(s, ai);
    memset(&a->reply, 0, sizeof a->reply);
    a->reply.status = status;
    a->reply.error_kind = kind;
    a->reply.transport = tr;
    a->reply.should_retry = -1;
    a->hint_us = hint;
    a->state = A_REPLYING;
    push(s, s->now + delay, EV_REPLY, ai, a->gen, 0);
    arm_timeout(s, ai, s->now + delay);
}

static fb_error_kind kind_for_status(int status) {
    if (status == 429) return FB_ERRKIND_RATE_LIMIT;
    if (status == 529) return FB_ERRKIND_OVERLOADED;
    return FB_ERRKIND_NONE;
}

static void provider_arrive(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    req *r = R(s, a->req);
    uint32_t pi = a->provider;
    const sim_provider *pv = &s->sc->providers[pi];
    prov *p = &s->provs[pi];
    fb_time_us elat = draw_us(&r->rng, &pv->error_latency_us);
    /* the scripted fault timeline: the first answering fault that applies wins */
    for (uint32_t i = 0; i < pv->fault_count; i++) {
        const sim_fault *f = &pv->faults[i];
        if (!fault_active(f, s->now)) continue;
        switch (f->kind) {
        case SIM_FAULT_OUTAGE:
        case SIM_FAULT_RATE_LIMIT:
            if (fb_rng_uniform(&r->rng) < f->fraction) {
                fb_error_kind k = f->error_kind ? f->error_kind : kind_for_status(f->status);
                reply_now(s, ai, f->status, k, FB_TRANSPORT_NONE, f->retry_after_us, elat);
                return;
            }
            break;
        case SIM_FAULT_FLAP:
            if ((s->now - f->at_us) % f->period_us < f->period_us / 2) {
                reply_now(s, ai, f->status, kind_for_status(f->status), FB_TRANSPORT_NONE,
                          f->retry_after_us, elat);
                return;
            }
            break;
        case SIM_FAULT_RESET:
            if (fb_rng_uniform(&r->rng) < f->fraction) {
                reply_now(s, ai, 0, FB_ERRKIND_NONE, FB_TRANSPORT_RESET, FB_TIME_NONE, elat);
                return;
            }
            break;
        case SIM_FAULT_POLICY:
            if (fb_rng_uniform(&r->rng) < f->fraction) {
                reply_now(s, ai, 400, FB_ERRKIND_CONTENT_POLICY, FB_TRANSPORT_NONE, FB_TIME_NONE,
                          elat);
                return;
            }
            break;
        case SIM_FAULT_HANG:
            if (fb_rng_uniform(&r->rng) < f->fraction) {
                a->state = A_HANG; /* no answer; the client's timeout ends it */
                arm_timeout(s, ai, FB_TIME_MAX);
                return;
            }
            break;
        default:
            break;
        }
    }
    if (pv->context_window > 0 && (uint64_t)a->tokens_in + a->tokens_out > pv->context_window) {
        reply_now(s, ai, 400, FB_ERRKIND_CONTEXT_LENGTH, FB_TRANSPORT_NONE, FB_TIME_NONE, elat);
        return;
    }
    if (p->has_rpm || p->has_tpm) {
        fb_time_us w1 = p->has_rpm ? fb_bucket_wait(&p->rpm, 1, s->now) : 0;
        fb_time_us w2 =
            p->has_tpm ? fb_bucket_wait(&p->tpm, (int64_t)a->tokens_in + a->tokens_out, s->now) : 0;
        fb_time_us w = w1 > w2 ? w1 : w2;
        if (w > 0) {
            fb_time_us hint = FB_TIME_NONE;
            if (pv->limit_retry_after && w != FB_TIME_MAX)
                hint = (w + FB_US_PER_S - 1) / FB_US_PER_S * FB_US_PER_S; /* whole seconds */
            s->sum->providers[pi].capacity_429++;
            reply_now(s, ai, 429, FB_ERRKIND_RATE_LIMIT, FB_TRANSPORT_NONE, hint, elat);
            return;
        }
        if (p->has_rpm) fb_bucket_take(&p->rpm, 1, s->now);
        if (p->has_tpm) fb_bucket_take(&p->tpm, (int64_t)a->tokens_in + a->tokens_out, s->now);
    }
    if (p->busy < effective_concurrency(s, pi)) {
        start_service(s, ai);
    } else if (p->qlive < pv->queue) {
        int rc = ring_push(&p->queue, ai, a->gen, (size_t)s->sc->limits.in_flight_max + 1);
        if (rc != FB_OK) {
            stop(s, FB_ECAP, "provider queue cannot grow at t=%.3fs", (double)s->now / 1e6);
            return;
        }
        a->state = A_QUEUED;
        arm_timeout(s, ai, FB_TIME_MAX);
        p->qlive++;
        if (p->qlive > s->sum->providers[pi].queue_peak)
            s->sum->providers[pi].queue_peak = p->qlive;
    } else {
        s->sum->providers[pi].overloaded++;
        reply_now(s, ai, pv->overload_status, kind_for_status(pv->overload_status),
                  FB_TRANSPORT_NONE, FB_TIME_NONE, elat);
    }
}

/* The attempt leaves for a real provider; its timeout is the simulator's timer. */
static void port_send(sim *s, uint32_t ai, bool stream) {
    attempt *a = A(s, ai);
    const sim_port *port = s->port;
    sim_port_attempt pa = {(uint64_t)ai << 32 | a->gen,
                           a->provider,
                           R(s, a->req)->cls,
                           a->tokens_in,
                           a->tokens_out,
                           stream};
    char msg[256] = "";
    int rc = port->send(port->ctx, &pa, msg, sizeof msg);
    if (rc != FB_OK) {
        stop(s, rc, "%s at t=%.3fs", msg, (double)s->now / 1e6);
        return;
    }
    a->state = A_PORT;
    prov *p = &s->provs[a->provider];
    if (++p->busy > s->sum->providers[a->provider].in_service_peak)
        s->sum->providers[a->provider].in_service_peak = p->busy;
    arm_timeout(s, ai, FB_TIME_MAX);
}

static void catch_up(sim *s, fb_time_us t);

void sim_port_deliver(sim *s, uint64_t id, const sim_port_answer *answer) {
    /* what was due before the answer came happens first (a timeout may make it stale) */
    catch_up(s, answer->at_us);
    if (s->rc != FB_OK) return;
    if (answer->at_us > s->now) s->now = answer->at_us;
    uint32_t ai = (uint32_t)(id >> 32);
    if (ai >= s->atts.used) return;
    attempt *a = A(s, ai);
    if (a->gen != (uint32_t)id || a->state != A_PORT) return;
    s->provs[a->provider].busy--;
    a->reply = answer->reply;
    a->hint_us = answer->hint_us;
    a->tokens_out = answer->tokens_out;
    if (answer->served) bill(s, a, a->tokens_out, !output_used(s, &a->reply));
    deliver(s, ai);
}

static void send_attempt(sim *s, uint32_t ri, const fb_fallback_decision *d) {
    req *r = R(s, ri);
    uint32_t ai;
    int rc = pool_alloc(&s->atts, &ai);
    if (rc != FB_OK) {
        stop(s, rc, "attempt cap reached at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    attempt *a = A(s, ai);
    uint32_t gen = a->gen;
    memset(a, 0, sizeof *a);
    a->gen = gen;
    a->provider = d->provider;
    a->req = ri;
    a->req_gen = r->gen;
    a->tokens_in = r->prompt_tokens;
    a->tokens_out = d->resume ? r->tokens_left : r->completion_tokens;
    a->start_us = s->now;
    a->hint_us = FB_TIME_NONE;
    a->stream = s->sc->classes[r->cls].stream;
    r->attempt = ai + 1;
    r->state = R_CALLING;
    s->sum->attempts++;
    s->sum->providers[d->provider].attempts++;
    s->provs[d->provider].tick.attempts++;
    if (in_window(s, s->now)) s->sum->attempts_in_fault++;
    a->timeout_at_us = d->timeout_us > 0 ? s->now + d->timeout_us : FB_TIME_MAX;
    if (s->port)
        port_send(s, ai, s->sc->classes[r->cls].stream);
    else
        provider_arrive(s, ai);
}

static void handle_decision(sim *s, uint32_t ri, fb_fallback_decision d) {
    req *r = R(s, ri);
    switch (d.action) {
    case FB_ACT_ATTEMPT:
        send_attempt(s, ri, &d);
        return;
    case FB_ACT_WAIT:
        r->state = R_WAITING;
        push(s, s->now + d.delay_us, EV_RESUME, ri, r->gen, 0);
        return;
    case FB_ACT_DONE:
        break;
    }
    sim_end end;
    switch (d.stop) {
    case FB_STOP_SUCCESS:
        end = SIM_END_SUCCESS;
        break;
    case FB_STOP_PERMANENT:
        end = SIM_END_PERMANENT;
        break;
    case FB_STOP_POLICY:
        end = SIM_END_POLICY;
        break;
    case FB_STOP_CONTEXT_LENGTH:
        end = SIM_END_CONTEXT_LENGTH;
        break;
    case FB_STOP_BREAKER_OPEN:
        end = SIM_END_BREAKER_OPEN;
        break;
    case FB_STOP_RATE_LIMITED:
        end = SIM_END_RATE_LIMITED;
        break;
    case FB_STOP_DEADLINE:
        end = SIM_END_DEADLINE;
        break;
    case FB_STOP_STREAM_BROKEN:
        end = SIM_END_STREAM_BROKEN;
        break;
    default:
        end = SIM_END_EXHAUSTED;
        break;
    }
    s->sum->retries += r->fr.retries;
    s->sum->fallbacks += r->fr.fallbacks;
    if (d.degraded) {
        const sim_policy *pol = s->pol;
        fb_time_us lat = draw_us(&r->rng, &pol->degraded_latency_us);
        if (lat > 0) {
            r->state = R_FINISHING;
            push(s, s->now + lat, EV_FINISH, ri, r->gen, 0);
            return;
        }
        finish(s, ri, SIM_END_DEGRADED, false);
        return;
    }
    finish(s, ri, end, d.via_fallback && end == SIM_END_SUCCESS);
}

/* The first provider of a request's chain. */
static uint32_t primary_of(const sim *s, const req *r) {
    const sim_class *c = &s->sc->classes[r->cls];
    if (c->target == SIM_TARGET_PROVIDER) return c->provider;
    return c->order_len ? c->order[0] : s->pol->order[0];
}

/* The reply of attempt ai reaches its client (if the client still waits). */
static void deliver(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    uint32_t pi = a->provider;
    req *r = R(s, a->req);
    bool waiting = !a->abandoned && r->gen == a->req_gen && r->attempt == ai + 1;
    fb_reply reply = a->reply;
    fb_time_us hint = a->hint_us;
    uint32_t out = a->tokens_out;
    a->state = A_FREE;
    pool_release(&s->atts, ai);
    if (!waiting) return;
    r->attempt = 0;
    fb_class c = fb_classify(&s->classifier, &reply);
    s->sum->providers[pi].outcomes[c.outcome]++;
    prov *p = &s->provs[pi];
    if (c.outcome != FB_OUT_SUCCESS) p->tick.errors++;
    if (c.outcome == FB_OUT_RATE_LIMITED) p->tick.rate_limited++;
    if (c.outcome == FB_OUT_TIMEOUT) p->tick.timeouts++;
    if (reply.after_first_token) {
        s->sum->stream_failures++;
        if (s->pol->stream == FB_STREAM_RETRY) s->sum->tokens_duplicated += out;
        if (s->pol->stream == FB_STREAM_RESUME && out < r->tokens_left) {
            r->tokens_left -= out;
            s->sum->stream_resumes++;
        }
    }
    fb_fallback_decision d = fb_fallback_result(&s->pods[r->pod].fb, &r->fr, &c, hint, s->now);
    if (d.action == FB_ACT_DONE && d.stop == FB_STOP_SUCCESS && d.via_fallback) {
        /* the engine's "via fallback": not the chain's primary, failed or skipped;
         * what the answer would have cost there */
        const sim_provider *pp = &s->sc->providers[primary_of(s, r)];
        const sim_provider *pf = &s->sc->providers[pi];
        s->sum->fallback_extra_cost_usd +=
            cost_of(pf, r->prompt_tokens, out) - cost_of(pp, r->prompt_tokens, out);
    }
    handle_decision(s, a->req, d);
}

/* ---- shared breakers ---- */

static bool view_allow(void *ctx, fb_time_us now, fb_breaker_permit *permit) {
    view *v = ctx;
    sim *s = v->s;
    switch (v->state) {
    case FB_BREAKER_CLOSED:
    case FB_BREAKER_FORCED_CLOSED:
    case FB_BREAKER_METRICS_ONLY:
    case FB_BREAKER_DISABLED:
        permit->generation = v->generation;
        permit->admitted_us = now;
        permit->kind = v->state == FB_BREAKER_DISABLED ? FB_PERMIT_UNTRACKED : FB_PERMIT_CALL;
        permit->slot = 0;
        return true;
    case FB_BREAKER_FORCED_OPEN:
        permit->kind = FB_PERMIT_REJECTED;
        s->sum->providers[v->provider].breaker_rejections++;
        return false;
    case FB_BREAKER_OPEN:
        if (now < v->open_until_us) {
            /* rejected by the pod's own view: the store never hears of it */
            permit->kind = FB_PERMIT_REJECTED;
            s->sum->providers[v->provider].breaker_rejections++;
            return false;
        }
        break;
    default:
        break;
    }
    /* the open period is over in this pod's view: probes are granted by the store */
    return fb_breaker_allow(&s->provs[v->provider].store, now, permit);
}

static void view_record(void *ctx, const fb_breaker_permit *permit, fb_effect effect,
                        fb_time_us duration_us, fb_time_us hint_us, fb_time_us now) {
    view *v = ctx;
    sim *s = v->s;
    if (permit->kind == FB_PERMIT_UNTRACKED) return;
    if (s->recs_len == s->recs_cap) {
        size_t ncap = s->recs_cap ? s->recs_cap * 2 : 256;
        store_record *nr = malloc(ncap * sizeof *nr);
        if (nr == NULL) {
            stop(s, FB_ENOMEM, "out of memory");
            return;
        }
        for (size_t i = 0; i < s->recs_len; i++) nr[i] = s->recs[(s->recs_head + i) % s->recs_cap];
        free(s->recs);
        s->recs = nr;
        s->recs_head = 0;
        s->recs_cap = ncap;
    }
    store_record rec = {v->provider, *permit, effect, duration_us, hint_us};
    s->recs[(s->recs_head + s->recs_len) % s->recs_cap] = rec;
    s->recs_len++;
    push_lane(s, LANE_STORE_RECORD, now + s->pol->sync_delay_us, EV_STORE_RECORD, 0, 0);
}

static void store_sync_push(sim *s, uint8_t provider, const fb_breaker_event *ev) {
    if (s->syncs_len == s->syncs_cap) {
        size_t ncap = s->syncs_cap ? s->syncs_cap * 2 : 64;
        store_sync *ns = malloc(ncap * sizeof *ns);
        if (ns == NULL) {
            stop(s, FB_ENOMEM, "out of memory");
            return;
        }
        for (size_t i = 0; i < s->syncs_len; i++)
            ns[i] = s->syncs[(s->syncs_head + i) % s->syncs_cap];
        free(s->syncs);
        s->syncs = ns;
        s->syncs_head = 0;
        s->syncs_cap = ncap;
    }
    store_sync sy = {provider, ev->to, ev->open_until_us, ev->generation};
    s->syncs[(s->syncs_head + s->syncs_len) % s->syncs_cap] = sy;
    s->syncs_len++;
    push_lane(s, LANE_STORE_SYNC, ev->at_us + s->pol->sync_delay_us, EV_STORE_SYNC, 0, 0);
}

/* ---- breaker events ---- */

/* Deliver a log event, up to the log cap; past it, count what was dropped. */
static void log_event(sim *s, const sim_log_event *ev) {
    uint64_t cap = s->opts->events_log_max ? s->opts->events_log_max : 1000000;
    if (s->opts->on_event == NULL) return;
    if (s->events_logged >= cap) {
        s->sum->events_dropped++;
        return;
    }
    s->events_logged++;
    s->opts->on_event(s->opts->ctx, ev);
}

static bool is_open(fb_breaker_state st) {
    return st == FB_BREAKER_OPEN || st == FB_BREAKER_FORCED_OPEN;
}

static void on_breaker_event(void *ctx, const fb_breaker_event *ev) {
    bctx *bc = ctx;
    sim *s = bc->s;
    sim_provider_summary *ps = &s->sum->providers[bc->provider];
    size_t slot = bc->pod < 0 ? (size_t)s->npods * s->P + bc->provider
                              : (size_t)bc->pod * s->P + bc->provider;
    bool counts = bc->pod >= 0 ? s->pol->breaker_scope == SIM_SCOPE_POD : true;
    if (counts && ev->from != ev->to) {
        ps->breaker_transitions++;
        if (is_open(ev->to) && !is_open(ev->from)) ps->breaker_opens++;
        if (is_open(ev->to) && !is_open(ev->from)) s->open_since[slot] = ev->at_us;
        if (ev->to == FB_BREAKER_OPEN) s->open_end[slot] = ev->open_until_us;
        if (ev->to == FB_BREAKER_FORCED_OPEN) s->open_end[slot] = FB_TIME_MAX;
        if (!is_open(ev->to) && is_open(ev->from) && s->open_since[slot] != FB_TIME_NONE) {
            /* the breaker stopped rejecting at its deadline, even if nobody asked then */
            fb_time_us end = ev->at_us < s->open_end[slot] ? ev->at_us : s->open_end[slot];
            double d = (double)(end - s->open_since[slot]) / 1e6;
            ps->breaker_open_s += bc->pod < 0 ? d : d / s->npods;
            s->open_since[slot] = FB_TIME_NONE;
        }
    }
    if (bc->pod < 0) store_sync_push(s, bc->provider, ev);
    sim_log_event le;
    memset(&le, 0, sizeof le);
    le.type = SIM_EV_BREAKER;
    le.t_us = ev->at_us;
    le.pod = bc->pod;
    le.provider = bc->provider;
    le.breaker = *ev;
    log_event(s, &le);
}

/* ---- time series, baseline, spillover ---- */

/*
 * A breaker's state as the next call would find it, without changing it: an
 * open breaker whose deadline has passed admits a probe, so it reads as
 * half-open. Writing rows must never move the model (rows would otherwise
 * depend on the tick).
 */
static fb_breaker_state seen_state(const fb_breaker *b, fb_time_us now) {
    fb_breaker_state st = fb_breaker_state_get(b);
    if (st == FB_BREAKER_OPEN && now >= fb_breaker_open_until(b)) return FB_BREAKER_HALF_OPEN;
    return st;
}

static void close_baseline(sim *s) {
    if (s->baseline_ready) return;
    s->baseline_ready = true;
    if (s->base_ended >= 100) {
        s->sum->baseline_error_rate = (double)s->base_bad / (double)s->base_ended;
        s->sum->baseline_p99_us = fb_hist_percentile(&s->base_hist, 99);
    } else {
        /* no usable quiet period before the first disturbance: judge by the SLO */
        s->sum->baseline_error_rate = 0;
        s->sum->baseline_p99_us = s->sc->slo_latency_us;
    }
}

/*
 * Slide the window by one tick and judge it: the window [ws, ws + hold) is
 * healthy when requests ended in it, its error (+ SLO miss) rate is within
 * the margin of the baseline and its p99 within the factor. The first
 * healthy window starting at or after a fault's end gives its spillover.
 */
static void spillover_step(sim *s, const sim_row *row) {
    const sim_spillover *sp = &s->sc->spillover;
    sim_summary *sum = s->sum;
    if (s->win_k == 0) return;
    uint32_t i = s->win_pos;
    if (s->win_fill == s->win_k) {
        fb_hist_subtract(&s->win_sum, &s->win_hist[i]);
        s->win_ended_sum -= s->win_ended[i];
        s->win_bad_sum -= s->win_bad[i];
    } else {
        s->win_fill++;
    }
    s->win_hist[i] = s->tick_hist;
    s->win_ended[i] = row->ended;
    s->win_bad[i] = row->errors + row->slo_missed;
    fb_hist_merge(&s->win_sum, &s->tick_hist);
    s->win_ended_sum += row->ended;
    s->win_bad_sum += row->errors + row->slo_missed;
    s->win_pos = (i + 1) % s->win_k;
    if (s->win_fill < s->win_k) return;
    fb_time_us ws = row->t_us + s->sc->tick_us - (fb_time_us)s->win_k * s->sc->tick_us;
    double rate = s->win_ended_sum ? (double)s->win_bad_sum / (double)s->win_ended_sum : 1.0;
    double p99 = (double)fb_hist_percentile(&s->win_sum, 99);
    bool healthy = s->win_ended_sum > 0 && rate <= sum->baseline_error_rate + sp->error_margin &&
                   p99 <= (double)sum->baseline_p99_us * sp->latency_factor;
    if (!healthy) return;
    for (uint32_t k = 0; k < sum->fault_count; k++) {
        sim_fault_summary *f = &sum->faults[k];
        if (f->recovered || ws < f->end_us) continue;
        f->recovered = true;
        f->spillover_us = ws - f->end_us;
    }
}

static void emit_row(sim *s, fb_time_us t) {
    sim_row *row = &s->row;
    row->t_us = t;
    row->in_flight = s->live;
    row->pod_queue = s->pod_queue_total;
    row->busy_workers = s->busy_total;
    row->latency_p50_ms = (double)fb_hist_percentile(&s->tick_hist, 50) / 1e3;
    row->latency_p99_ms = (double)fb_hist_percentile(&s->tick_hist, 99) / 1e3;
    row->fault_active = false;
    for (uint32_t i = 0; i < s->window_count; i++)
        if (s->windows[i].start_us < t + s->sc->tick_us && s->windows[i].end_us > t)
            row->fault_active = true;
    for (uint32_t p = 0; p < s->P; p++) {
        prov *pr = &s->provs[p];
        row->p[p].attempts = pr->tick.attempts;
        row->p[p].errors = pr->tick.errors;
        row->p[p].rate_limited = pr->tick.rate_limited;
        row->p[p].timeouts = pr->tick.timeouts;
        row->p[p].in_service = pr->busy;
        row->p[p].queue = pr->qlive;
        uint32_t open = 0, half = 0;
        if (s->pol->breaker_scope == SIM_SCOPE_SHARED) {
            if (s->pol->per_provider[p].has_breaker) {
                fb_breaker_state st = seen_state(&pr->store, s->now);
                open = is_open(st) ? s->npods : 0;
                half = st == FB_BREAKER_HALF_OPEN ? s->npods : 0;
            }
        } else if (s->pol->per_provider[p].has_breaker) {
            for (uint32_t k = 0; k < s->npods; k++) {
                fb_breaker_state st = seen_state(&s->breakers[(size_t)k * s->P + p], s->now);
                open += is_open(st);
                half += st == FB_BREAKER_HALF_OPEN;
            }
        }
        row->p[p].open_share = (double)open / s->npods;
        row->p[p].half_open_share = (double)half / s->npods;
        memset(&pr->tick, 0, sizeof pr->tick);
    }
    if (s->opts->on_row) s->opts->on_row(s->opts->ctx, row);
    /* the baseline ends where the first fault or spike begins */
    if (!s->baseline_ready && t + s->sc->tick_us > s->first_window_us) close_baseline(s);
    if (s->baseline_ready) spillover_step(s, row);
    memset(row, 0, sizeof *row);
    fb_hist_init(&s->tick_hist);
}

/* ---- setup ---- */

static int setup_policy(sim *s) {
    const sim_policy *pol = s->pol;
    int rc = fb_retry_policy_init(&s->retry, &pol->retry);
    if (rc != FB_OK) {
        stop(s, FB_EINVAL, "invalid retry policy (%s)", fb_strerror(rc));
        return rc;
    }
    rc = fb_classify_init(&s->classifier, &pol->classify);
    if (rc != FB_OK) return rc;
    size_t n = (size_t)s->npods * s->P;
    s->breakers = calloc(n, sizeof *s->breakers);
    s->bctxs = calloc(n + s->P, sizeof *s->bctxs);
    s->open_since = malloc((n + s->P) * sizeof *s->open_since);
    s->open_end = malloc((n + s->P) * sizeof *s->open_end);
    s->views = calloc(n, sizeof *s->views);
    s->limiters = calloc(n, sizeof *s->limiters);
    s->pods = calloc(s->npods, sizeof *s->pods);
    if (!s->breakers || !s->bctxs || !s->open_since || !s->open_end || !s->views || !s->limiters ||
        !s->pods) {
        stop(s, FB_ENOMEM, "out of memory for %u pods", s->npods);
        return FB_ENOMEM;
    }
    for (size_t i = 0; i < n + s->P; i++) {
        s->open_since[i] = FB_TIME_NONE;
        s->open_end[i] = FB_TIME_MAX;
    }
    for (uint32_t p = 0; p < s->P; p++) {
        const sim_provider_policy *pp = &pol->per_provider[p];
        if (!pp->has_breaker || pol->breaker_scope != SIM_SCOPE_SHARED) continue;
        fb_breaker_config bc = pp->breaker;
        bctx *ctx = &s->bctxs[n + p];
        ctx->s = s;
        ctx->pod = -1;
        ctx->provider = (uint8_t)p;
        bc.on_event = on_breaker_event;
        bc.event_ctx = ctx;
        bc.rng = &s->pods[0].rng;
        rc = fb_breaker_init(&s->provs[p].store, &bc, 0);
        if (rc != FB_OK) {
            stop(s, FB_EINVAL, "invalid breaker for %s (%s)", s->sc->providers[p].name,
                 fb_strerror(rc));
            return rc;
        }
        if (is_open(fb_breaker_state_get(&s->provs[p].store))) {
            s->open_since[n + p] = 0;
            s->open_end[n + p] = fb_breaker_open_until(&s->provs[p].store);
        }
    }
    for (uint32_t k = 0; k < s->npods; k++) {
        pod *pd = &s->pods[k];
        fb_rng_derive(&pd->rng, s->sc->seed, ENTITY_POD + k, PURPOSE_POD);
        fb_fallback_config fc;
        memset(&fc, 0, sizeof fc);
        for (uint32_t p = 0; p < s->P; p++) {
            size_t i = (size_t)k * s->P + p;
            const sim_provider_policy *pp = &pol->per_provider[p];
            fb_fallback_provider *fp = &fc.providers[p];
            fp->context_window = s->sc->providers[p].context_window;
            fp->attempt_timeout_us = pp->timeout_us;
            if (pp->has_breaker && pol->breaker_scope == SIM_SCOPE_SHARED) {
                view *v = &s->views[i];
                v->s = s;
                v->provider = (uint8_t)p;
                v->state = fb_breaker_state_get(&s->provs[p].store);
                v->open_until_us = fb_breaker_open_until(&s->provs[p].store);
                v->generation = fb_breaker_generation(&s->provs[p].store);
                fp->port.allow = view_allow;
                fp->port.record = view_record;
                fp->port.ctx = v;
            } else if (pp->has_breaker) {
                fb_breaker_config bc = pp->breaker;
                bctx *ctx = &s->bctxs[i];
                ctx->s = s;
                ctx->pod = (int)k;
                ctx->provider = (uint8_t)p;
                bc.on_event = on_breaker_event;
                bc.event_ctx = ctx;
                bc.rng = &pd->rng;
                rc = fb_breaker_init(&s->breakers[i], &bc, 0);
                if (rc != FB_OK) {
                    stop(s, FB_EINVAL, "invalid breaker for %s (%s)", s->sc->providers[p].name,
                         fb_strerror(rc));
                    return rc;
                }
                if (is_open(fb_breaker_state_get(&s->breakers[i]))) {
                    s->open_since[i] = 0;
                    s->open_end[i] = fb_breaker_open_until(&s->breakers[i]);
                }
                fp->breaker = &s->breakers[i];
            }
            if (pp->has_ratelimit) {
                rc = fb_ratelimit_init(&s->limiters[i], &pp->ratelimit, 0);
                if (rc != FB_OK) {
                    stop(s, FB_EINVAL, "invalid rate limit for %s (%s)", s->sc->providers[p].name,
                         fb_strerror(rc));
                    return rc;
                }
                fp->ratelimit = &s->limiters[i];
            }
        }
        fc.provider_count = s->P;
        memcpy(fc.order, pol->order, pol->order_len);
        fc.order_len = pol->order_len;
        fc.retry = &s->retry;
        if (pol->budget.kind != FB_BUDGET_NONE) {
            rc = fb_budget_init(&pd->budget, &pol->budget);
            if (rc != FB_OK) {
                stop(s, FB_EINVAL, "invalid retry budget (%s)", fb_strerror(rc));
                return rc;
            }
            fc.budget = &pd->budget;
        }
        fc.rng = &pd->rng;
        fc.context_check = pol->context_check;
        fc.degraded = pol->degraded;
        fc.stream = pol->stream;
        rc = fb_fallback_init(&pd->fb, &fc);
        if (rc != FB_OK) {
            stop(s, FB_EINVAL, "invalid fallback chain (%s)", fb_strerror(rc));
            return rc;
        }
    }
    return FB_OK;
}

static int setup(sim *s) {
    const sim_scenario *sc = s->sc;
    s->P = sc->provider_count;
    s->npods = sc->pods.count;
    int rc = sim_queue_init(&s->q, (size_t)sc->limits.events_max);
    if (rc != FB_OK) return rc;
    pool_init(&s->reqs, sizeof(req), (size_t)sc->limits.in_flight_max);
    pool_init(&s->atts, sizeof(attempt), (size_t)sc->limits.in_flight_max * 4);
    fb_hist_init(&s->tick_hist);
    fb_hist_init(&s->base_hist);
    fb_hist_init(&s->sum->latency);
    fb_hist_init(&s->sum->latency_ok);
    s->first_window_us = FB_TIME_MAX;
    /* faults: windows, exposure, capacity buckets */
    for (uint32_t p = 0; p < s->P; p++) {
        const sim_provider *pv = &sc->providers[p];
        prov *pr = &s->provs[p];
        pr->capacity_factor = 1.0;
        if (pv->rpm > 0) {
            pr->has_rpm = true;
            if (fb_bucket_init(&pr->rpm, pv->rpm, FB_US_PER_MIN, 0) != FB_OK) return FB_ERANGE;
        }
        if (pv->tpm > 0) {
            pr->has_tpm = true;
            if (fb_bucket_init(&pr->tpm, pv->tpm, FB_US_PER_MIN, 0) != FB_OK) return FB_ERANGE;
        }
        pr->exposed_fault = pv->fault_count > 0;
        for (uint32_t f = 0; f < pv->fault_count; f++) {
            const sim_fault *fa = &pv->faults[f];
            fb_time_us end = fb_time_add(fa->at_us, fa->for_us);
            s->windows[s->window_count].start_us = fa->at_us;
            s->windows[s->window_count].end_us = end;
            s->window_count++;
            sim_fault_summary *fs = &s->sum->faults[s->sum->fault_count];
            fs->provider = (uint8_t)p;
            fs->fault = (uint8_t)f;
            fs->start_us = fa->at_us;
            fs->end_us = end;
            s->sum->fault_count++;
            if (fa->at_us < s->first_window_us) s->first_window_us = fa->at_us;
            push(s, fa->at_us, EV_FAULT_EDGE, p, 0, f << 1);
            push(s, end, EV_FAULT_EDGE, p, 0, f << 1 | 1);
        }
    }
    for (uint32_t c = 0; c < sc->class_count; c++) {
        const sim_class *cl = &sc->classes[c];
        for (uint32_t i = 0; i < cl->spike_count; i++) {
            s->windows[s->window_count].start_us = cl->spikes[i].at_us;
            s->windows[s->window_count].end_us =
                fb_time_add(cl->spikes[i].at_us, cl->spikes[i].for_us);
            if (cl->spikes[i].at_us < s->first_window_us) s->first_window_us = cl->spikes[i].at_us;
            /* a spike is a disturbance too: its spillover is measured like a fault's */
            sim_fault_summary *fs = &s->sum->faults[s->sum->fault_count++];
            fs->spike = true;
            fs->cls = (uint8_t)c;
            fs->fault = (uint8_t)i;
            fs->start_us = s->windows[s->window_count].start_us;
            fs->end_us = s->windows[s->window_count].end_us;
            s->window_count++;
        }
        bool exposed = false;
        if (cl->target == SIM_TARGET_PROVIDER) {
            exposed = s->provs[cl->provider].exposed_fault;
        } else if (cl->target == SIM_TARGET_LLM) {
            const uint8_t *order = cl->order_len ? cl->order : s->pol->order;
            uint32_t len = cl->order_len ? cl->order_len : s->pol->order_len;
            for (uint32_t i = 0; i < len; i++) exposed |= s->provs[order[i]].exposed_fault;
        }
        s->class_exposed[c] = exposed;
    }
    if (s->first_window_us == FB_TIME_MAX) s->baseline_ready = true;
    if (s->sum->fault_count > 0) {
        fb_time_us k = (sc->spillover.hold_us + sc->tick_us - 1) / sc->tick_us;
        s->win_k = (uint32_t)(k < 1 ? 1 : k);
        s->win_hist = malloc(s->win_k * sizeof *s->win_hist);
        s->win_ended = calloc(s->win_k, sizeof *s->win_ended);
        s->win_bad = calloc(s->win_k, sizeof *s->win_bad);
        if (!s->win_hist || !s->win_ended || !s->win_bad) return FB_ENOMEM;
        fb_hist_init(&s->win_sum);
    }
    rc = setup_policy(s);
    if (rc != FB_OK) return rc;
    /* traffic */
    for (uint32_t c = 0; c < sc->class_count; c++) {
        const sim_class *cl = &sc->classes[c];
        sim_traffic *tr = &s->traffic[c];
        sim_traffic_init(tr, cl, sc->seed, c, sc->duration_us);
        if (cl->arrivals == SIM_ARR_CLOSED) {
            s->users_total += cl->users;
        } else {
            fb_time_us t = sim_traffic_next(tr, 0);
            if (t != FB_TIME_MAX) push(s, t, EV_ARRIVAL, c, 0, 0);
        }
        fb_time_us b = sim_traffic_next_burst(tr);
        if (b != FB_TIME_MAX) push(s, b, EV_BURST, c, 0, 0);
    }
    if (s->users_total > 0) {
        s->user_class = malloc(s->users_total * sizeof *s->user_class);
        s->user_rng = malloc(s->users_total * sizeof *s->user_rng);
        if (!s->user_class || !s->user_rng) return FB_ENOMEM;
        uint32_t u = 0;
        for (uint32_t c = 0; c < sc->class_count; c++) {
            const sim_class *cl = &sc->classes[c];
            if (cl->arrivals != SIM_ARR_CLOSED) continue;
            for (uint32_t k = 0; k < cl->users; k++, u++) {
                s->user_class[u] = c;
                fb_rng_derive(&s->user_rng[u], sc->seed, ENTITY_USER + u, PURPOSE_USER);
                /* users start spread over one think time */
                fb_time_us t = draw_us(&s->user_rng[u], &cl->think_us);
                if (t < sc->duration_us) push(s, t, EV_USER, u, 0, 0);
            }
        }
    }
    s->next_tick_us = sc->tick_us;
    return s->rc;
}

static void teardown(sim *s) {
    sim_queue_free(&s->q);
    pool_free(&s->reqs);
    pool_free(&s->atts);
    if (s->pods)
        for (uint32_t k = 0; k < s->npods; k++) free(s->pods[k].queue.v);
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) free(s->provs[p].queue.v);
    free(s->pods);
    free(s->breakers);
    free(s->bctxs);
    free(s->open_since);
    free(s->open_end);
    free(s->views);
    free(s->limiters);
    free(s->user_class);
    free(s->user_rng);
    free(s->recs);
    free(s->syncs);
    free(s->win_hist);
    free(s->win_ended);
    free(s->win_bad);
}

/* ---- the event loop ---- */

static void on_fault_edge(sim *s, const sim_event *ev) {
    uint32_t p = ev->id, f = ev->arg >> 1;
    bool end = ev->arg & 1;
    const sim_provider *pv = &s->sc->providers[p];
    double factor = 1.0;
    for (uint32_t i = 0; i < pv->fault_count; i++)
        if (pv->faults[i].kind == SIM_FAULT_BROWNOUT && fault_active(&pv->faults[i], s->now))
            factor = factor < pv->faults[i].capacity ? factor : pv->faults[i].capacity;
    s->provs[p].capacity_factor = factor;
    if (!end && !s->baseline_ready && s->now >= s->first_window_us) close_baseline(s);
    dispatch(s, p);
    sim_log_event le;
    memset(&le, 0, sizeof le);
    le.type = end ? SIM_EV_FAULT_END : SIM_EV_FAULT_START;
    le.t_us = s->now;
    le.pod = -1;
    le.provider = (uint8_t)p;
    le.fault = (uint8_t)f;
    log_event(s, &le);
}

static void on_deadline(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    if (r->state == R_FREE) return;
    if (r->state == R_CALLING || r->state == R_WAITING) {
        fb_fallback_cancel(&s->pods[r->pod].fb, &r->fr, s->now);
        s->sum->retries += r->fr.retries;
        s->sum->fallbacks += r->fr.fallbacks;
        abandon_attempt(s, r);
    }
    finish(s, ri, SIM_END_TIMEOUT, false);
}

static void on_attempt_timeout(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    req *r = R(s, a->req);
    if (a->abandoned || r->gen != a->req_gen || r->attempt != ai + 1) return;
    /* the client gives up: a timeout outcome, the provider may keep working */
    abandon_attempt(s, r);
    fb_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.transport = FB_TRANSPORT_TIMEOUT;
    rep.should_retry = -1;
    fb_class c = fb_classify(&s->classifier, &rep);
    uint32_t pi = a->provider;
    s->sum->providers[pi].outcomes[c.outcome]++;
    s->provs[pi].tick.errors++;
    s->provs[pi].tick.timeouts++;
    fb_fallback_decision d =
        fb_fallback_result(&s->pods[r->pod].fb, &r->fr, &c, FB_TIME_NONE, s->now);
    handle_decision(s, (uint32_t)(r - R(s, 0)), d);
}

static void on_service_done(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    uint32_t pi = a->provider;
    prov *p = &s->provs[pi];
    p->busy--;
    bool used = !a->abandoned && output_used(s, &a->reply);
    if (a->abandoned) s->sum->providers[pi].abandoned++;
    bill(s, a, a->tokens_out, !used);
    deliver(s, ai);
    dispatch(s, pi);
}

static void step(sim *s, const sim_event *ev) {
    switch (ev->kind) {
    case EV_ARRIVAL: {
        new_request(s, ev->id, NONE32);
        fb_time_us t = sim_traffic_next(&s->traffic[ev->id], s->now);
        if (t != FB_TIME_MAX) push(s, t, EV_ARRIVAL, ev->id, 0, 0);
        break;
    }
    case EV_BURST: {
        new_request(s, ev->id, NONE32);
        fb_time_us t = sim_traffic_next_burst(&s->traffic[ev->id]);
        if (t != FB_TIME_MAX) push(s, t > s->now ? t : s->now, EV_BURST, ev->id, 0, 0);
        break;
    }
    case EV_USER:
        new_request(s, s->user_class[ev->id], ev->id);
        break;
    case EV_WORK_DONE:
        if (R(s, ev->id)->gen == ev->gen && R(s, ev->id)->state == R_LOCAL) begin_call(s, ev->id);
        break;
    case EV_RESUME:
        if (R(s, ev->id)->gen == ev->gen && R(s, ev->id)->state == R_WAITING) {
            req *r = R(s, ev->id);
            r->state = R_CALLING;
            handle_decision(s, ev->id, fb_fallback_resume(&s->pods[r->pod].fb, &r->fr, s->now));
        }
        break;
    case EV_REPLY:
        if (A(s, ev->id)->gen == ev->gen && A(s, ev->id)->state == A_REPLYING) deliver(s, ev->id);
        break;
    case EV_SERVICE_DONE:
        if (A(s, ev->id)->gen == ev->gen && A(s, ev->id)->state == A_SERVICE)
            on_service_done(s, ev->id);
        break;
    case EV_ATTEMPT_TIMEOUT:
        if (A(s, ev->id)->gen == ev->gen && A(s, ev->id)->state != A_FREE)
            on_attempt_timeout(s, ev->id);
        break;
    case EV_DEADLINE:
        if (R(s, ev->id)->gen == ev->gen) on_deadline(s, ev->id);
        break;
    case EV_FINISH:
        if (R(s, ev->id)->gen == ev->gen && R(s, ev->id)->state == R_FINISHING)
            finish(s, ev->id, SIM_END_DEGRADED, false);
        break;
    case EV_FAULT_EDGE:
        on_fault_edge(s, ev);
        break;
    case EV_STORE_RECORD: {
        store_record rec = s->recs[s->recs_head];
        s->recs_head = (s->recs_head + 1) % s->recs_cap;
        s->recs_len--;
        fb_breaker_record(&s->provs[rec.provider].store, &rec.permit, rec.effect, rec.duration_us,
                          rec.hint_us, s->now);
        break;
    }
    case EV_STORE_SYNC: {
        store_sync sy = s->syncs[s->syncs_head];
        s->syncs_head = (s->syncs_head + 1) % s->syncs_cap;
        s->syncs_len--;
        for (uint32_t k = 0; k < s->npods; k++) {
            view *v = &s->views[(size_t)k * s->P + sy.provider];
            if (sy.generation < v->generation) continue;
            v->state = sy.state;
            v->open_until_us = sy.open_until_us;
            v->generation = sy.generation;
        }
        break;
    }
    default:
        stop(s, FB_ESTATE, "internal error: unknown event kind %u", ev->kind);
        break;
    }
}

static void finalize(sim *s) {
    sim_summary *sum = s->sum;
    sum->end_us = s->now;
    sum->events = s->q.pushed;
    /* close open periods */
    size_t n = (size_t)s->npods * s->P;
    for (size_t i = 0; i < n + s->P; i++) {
        if (s->open_since[i] == FB_TIME_NONE) continue;
        bool store = i >= n;
        uint32_t p = store ? (uint32_t)(i - n) : (uint32_t)(i % s->P);
        bool counts = store ? s->pol->breaker_scope == SIM_SCOPE_SHARED
                            : s->pol->breaker_scope == SIM_SCOPE_POD;
        if (!counts) continue;
        fb_time_us end = s->now < s->open_end[i] ? s->now : s->open_end[i];
        double d = (double)(end - s->open_since[i]) / 1e6;
        sum->providers[p].breaker_open_s += store ? d : d / s->npods;
    }
    for (uint32_t p = 0; p < s->P; p++) {
        sum->providers[p].unfinished = s->provs[p].busy + s->provs[p].qlive;
        if (s->pol->per_provider[p].has_ratelimit) {
            for (uint32_t k = 0; k < s->npods; k++) {
                const fb_ratelimit *rl = &s->limiters[(size_t)k * s->P + p];
                sum->providers[p].limiter_waits += rl->delayed;
                sum->providers[p].limiter_rejections += rl->rejected;
            }
        }
        if (s->pol->breaker_scope == SIM_SCOPE_SHARED && s->pol->per_provider[p].has_breaker) {
            sum->providers[p].breaker_rejections +=
                fb_breaker_stats_get(&s->provs[p].store)->rejected;
        } else if (s->pol->per_provider[p].has_breaker) {
            for (uint32_t k = 0; k < s->npods; k++)
                sum->providers[p].breaker_rejections +=
                    fb_breaker_stats_get(&s->breakers[(size_t)k * s->P + p])->rejected;
        }
    }
    if (s->pol->budget.kind != FB_BUDGET_NONE)
        for (uint32_t k = 0; k < s->npods; k++) sum->budget_refusals += s->pods[k].budget.refused;
    for (uint32_t i = 0; i < sum->fault_count; i++) {
        sim_fault_summary *f = &sum->faults[i];
        if (!f->recovered) f->spillover_us = s->now > f->end_us ? s->now - f->end_us : 0;
    }
}

static int check_invariants(sim *s) {
    sim_summary *sum = s->sum;
    uint64_t ended = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) ended += sum->ended[e];
    if (ended + s->live != sum->requests) {
        stop(s, FB_ESTATE, "invariant: %llu requests arrived but %llu ended and %llu are live",
             (unsigned long long)sum->requests, (unsigned long long)ended,
             (unsigned long long)s->live);
        return FB_ESTATE;
    }
    if (s->live == 0 && (s->pod_queue_total != 0 || s->busy_total != 0)) {
        stop(s, FB_ESTATE,
             "invariant: no request is live but %llu are queued and %llu workers busy",
             (unsigned long long)s->pod_queue_total, (unsigned long long)s->busy_total);
        return FB_ESTATE;
    }
    for (uint32_t k = 0; k < s->npods; k++) {
        if (s->live == 0 && (s->pods[k].qlive != 0 || s->pods[k].busy != 0)) {
            stop(s, FB_ESTATE, "invariant: pod %u still counts %u queued, %u busy", k,
                 s->pods[k].qlive, s->pods[k].busy);
            return FB_ESTATE;
        }
    }
    double cost = 0;
    uint64_t attempts = 0;
    for (uint32_t p = 0; p < s->P; p++) {
        cost += sum->providers[p].cost_usd;
        attempts += sum->providers[p].attempts;
        uint64_t outc = 0;
        for (int o = 0; o < FB_OUT_COUNT; o++) outc += sum->providers[p].outcomes[o];
        if (outc > sum->providers[p].attempts) {
            stop(s, FB_ESTATE, "invariant: provider %s has more outcomes than attempts",
                 s->sc->providers[p].name);
            return FB_ESTATE;
        }
    }
    if (attempts != sum->attempts || fabs(cost - sum->cost_usd) > 1e-6 * (1 + cost)) {
        stop(s, FB_ESTATE, "invariant: attempts or cost do not add up across providers");
        return FB_ESTATE;
    }
    return FB_OK;
}

#define PROGRESS_EVERY_US (60 * FB_US_PER_S)

/* When the next row is due: its tick's end, or the end of traffic for the last one. */
static fb_time_us tick_end(const sim *s) {
    return s->next_tick_us < s->sc->duration_us ? s->next_tick_us : s->sc->duration_us;
}

/* True while a row is left to write (rows cover the traffic window only). */
static bool rows_left(const sim *s) {
    return s->next_tick_us - s->sc->tick_us < s->sc->duration_us;
}

/*
 * Emit the rows of the ticks that end at or before `t`. A row covers
 * [start, start + tick), the last one cut at the end of traffic, and is
 * written before any event at or after its end. The clock only moves forward
 * (the port's clock may already be later).
 */
static void emit_ticks(sim *s, fb_time_us t) {
    while (s->rc == FB_OK && rows_left(s) && tick_end(s) <= t) {
        if (s->now < tick_end(s)) s->now = tick_end(s);
        emit_row(s, s->next_tick_us - s->sc->tick_us);
        s->next_tick_us += s->sc->tick_us;
    }
}

static void progress(sim *s) {
    if (s->now < s->next_progress_us || s->opts->on_progress == NULL) return;
    s->opts->on_progress(s->opts->ctx, s->now, s->sc->duration_us);
    s->next_progress_us = s->now + PROGRESS_EVERY_US;
}

/* The virtual clock: jump from event to event. */
static void run_model(sim *s) {
    sim_event ev;
    while (s->rc == FB_OK && sim_queue_pop(&s->q, &ev)) {
        if (ev.t < s->now) {
            stop(s, FB_ESTATE, "invariant: time went back from %lld to %lld", (long long)s->now,
                 (long long)ev.t);
            break;
        }
        /* after the traffic window, stop once every request has ended */
        if (ev.t > s->sc->duration_us && s->live == 0) break;
        emit_ticks(s, ev.t);
        s->now = ev.t;
        step(s, &ev);
        progress(s);
    }
}

/* Run the events due at or before t, each at its own time (or now, when now is later). */
static void catch_up(sim *s, fb_time_us t) {
    sim_event ev;
    while (s->rc == FB_OK && sim_queue_peek(&s->q, &ev) && ev.t <= t) {
        sim_queue_pop(&s->q, &ev);
        emit_ticks(s, ev.t);
        if (ev.t > s->now) s->now = ev.t;
        step(s, &ev);
    }
    emit_ticks(s, t);
}

/* The port's clock: wait for real time to reach the next event, take the answers, catch up. */
static void run_port(sim *s) {
    const sim_port *port = s->port;
    sim_event ev;
    while (s->rc == FB_OK) {
        bool have = sim_queue_peek(&s->q, &ev);
        /* as in run_model: nothing in flight and nothing left before the end of traffic */
        if (s->live == 0 && (!have || ev.t > s->sc->duration_us)) break;
        fb_time_us until = have ? ev.t : FB_TIME_MAX;
        if (rows_left(s) && tick_end(s) < until) until = tick_end(s);
        fb_time_us now = s->now;
        char msg[256] = "";
        int rc = port->wait(port->ctx, until, &now, msg, sizeof msg);
        if (rc != FB_OK) {
            emit_ticks(s, now);
            if (now > s->now) s->now = now;
            stop(s, rc, "%s at t=%.3fs", msg, (double)s->now / 1e6);
            break;
        }
        port->collect(port->ctx, s);
        catch_up(s, now);
        if (now > s->now) s->now = now;
        progress(s);
    }
}

int sim_run(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts, sim_summary *out,
            sim_error *err) {
    return sim_run_port(sc, variant, opts, NULL, out, err);
}

int sim_run_port(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
                 const sim_port *port, sim_summary *out, sim_error *err) {
    static const sim_run_opts no_opts;
    sim *s = calloc(1, sizeof *s);
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", sc->file);
    memset(out, 0, sizeof *out);
    if (s == NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    if (variant >= sc->variant_count) {
        free(s);
        snprintf(err->msg, sizeof err->msg, "no variant %u", variant);
        return FB_EINVAL;
    }
    s->sc = sc;
    s->pol = &sc->variants[variant];
    s->opts = opts ? opts : &no_opts;
    s->port = port;
    s->sum = out;
    s->err = err;
    snprintf(out->variant, sizeof out->variant, "%s", s->pol->name);
    int rc = setup(s);
    if (rc != FB_OK && s->rc == FB_OK) stop(s, rc, "cannot set up the run: %s", fb_strerror(rc));
    s->next_progress_us = PROGRESS_EVERY_US;
    if (s->port)
        run_port(s);
    else
        run_model(s);
    /* quiet ticks at the end (no event left before the end of traffic) */
    if (s->rc == FB_OK) emit_ticks(s, s->sc->duration_us);
    if (!s->baseline_ready) close_baseline(s);
    finalize(s);
    out->complete = s->rc == FB_OK;
    if (s->rc == FB_OK && s->opts->check_invariants) check_invariants(s);
    rc = s->rc;
    teardown(s);
    free(s);
    return rc;
}
