/*
 * simint.h - the simulator's internals, shared by its files.
 *
 *   engine.c    pools, the event loop (model and port clocks), caps, errors
 *   request.c   a user request: arrival, worker, policy decision, attempt, reply, end
 *   provider.c  a provider: admission, capacity, queue, service, replies, billing, the port
 *   store.c     breakers: per pod or shared through a store with a propagation delay
 *   series.c    the time series, the baseline and spillover
 *   stats.c     the summary counters, their final sums and the invariants
 *   setup.c     building a run from a scenario variant, and tearing it down
 *   sim.c       the public entry points
 *
 * Entities live in pools indexed by small integers (requests, attempts) with
 * generation counters; events carry (kind, index, generation) and an event
 * whose generation no longer matches is stale and skipped. docs/engine.md
 * lists the event kinds, docs/models.md the models, docs/architecture.md the
 * path of one request through these files.
 */
#ifndef SIM_SIMINT_H
#define SIM_SIMINT_H

#include "core/rng.h"
#include "sim/dist.h"
#include "sim/fault.h"
#include "sim/fifo.h"
#include "sim/queue.h"
#include "sim/sim.h"
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
    uint32_t gen; /* first field: survives reuse (pool_release) */
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
    uint32_t gen; /* first field: survives reuse */
    uint8_t state;
    uint8_t provider;
    bool abandoned;
    bool stream; /* the request streams its answer */
    uint32_t req, req_gen;
    uint32_t tokens_in, tokens_out; /* billed when served */
    fb_time_us start_us;
    fb_time_us timeout_at_us; /* the client gives up then; FB_TIME_MAX = never */
    bool timer_armed;
    fb_reply reply;
    fb_time_us hint_us;
} attempt;

/* An entry of a queue of requests or attempts: stale when the generation moved on. */
typedef struct ref {
    uint32_t id, gen;
} ref;

/* Fixed-size entries with generations, reused through a free list, growing up to a cap. */
typedef struct pool {
    void *items;
    size_t size, used, cap, cap_max;
    uint32_t *free_list;
    size_t free_len;
} pool;

/* Who a breaker's events belong to. */
typedef struct bctx {
    struct sim *s;
    int pod; /* -1 = the shared store */
    uint8_t provider;
} bctx;

/* A pod's view of a shared breaker: the store's state as last synced. */
typedef struct view {
    fb_breaker_state state;
    fb_time_us open_until_us;
    uint64_t generation;
    struct sim *s;
    uint8_t provider;
} view;

/* A result on its way to the store. */
typedef struct store_record {
    uint8_t provider;
    fb_breaker_permit permit;
    fb_effect effect;
    fb_time_us duration_us, hint_us;
} store_record;

/* The store's state on its way to the pods. */
typedef struct store_sync {
    uint8_t provider;
    fb_breaker_state state;
    fb_time_us open_until_us;
    uint64_t generation;
} store_sync;

typedef struct pod {
    uint32_t busy;
    bool pulling;   /* pod_pull() is running */
    sim_fifo queue; /* of ref */
    uint32_t qlive;
    fb_fallback fb;
    fb_budget budget;
    fb_rng rng;
} pod;

typedef struct prov {
    uint32_t busy;
    sim_fifo queue; /* of ref */
    uint32_t qlive;
    bool has_rpm, has_tpm;
    fb_bucket rpm, tpm;
    double capacity_factor;
    fb_breaker store;
    bool exposed_fault; /* has scripted faults */
    struct {
        uint64_t attempts, errors, rate_limited, timeouts;
    } tick;
} prov;

typedef struct window {
    fb_time_us start_us, end_us;
} window;

#define WINDOWS_MAX (SIM_PROVIDERS_MAX * SIM_FAULTS_MAX + SIM_CLASSES_MAX * SIM_SCHEDULE_MAX)

typedef struct sim {
    const sim_scenario *sc;
    const sim_policy *pol;
    const sim_run_opts *opts;
    const sim_port *port; /* NULL: the provider model */
    sim_summary *sum;
    sim_error *err;
    int rc; /* first fatal error */
    uint32_t P, npods;
    sim_queue q;
    fb_time_us now;
    fb_retry_policy retry;
    fb_classifier classifier;
    pool reqs, atts;
    pod *pods;
    prov provs[SIM_PROVIDERS_MAX];
    /* breakers (store.c) */
    fb_breaker *breakers; /* npods * P, per-pod scope */
    bctx *bctxs;
    fb_time_us *open_since; /* npods * P (+ P for stores) */
    fb_time_us *open_end;   /* when each open period ends at the latest */
    view *views;            /* npods * P, shared scope */
    sim_fifo recs;          /* store_record: in the same order as their lane */
    sim_fifo syncs;         /* store_sync: in the same order as their lane */
    fb_ratelimit *limiters; /* npods * P */
    /* traffic */
    sim_traffic traffic[SIM_CLASSES_MAX];
    uint32_t users_total;
    uint32_t *user_class; /* closed loop: user -> class */
    fb_rng *user_rng;
    uint64_t serial; /* requests created: names each request's random stream */
    uint32_t rr;     /* the next pod to get a request */
    /* what is in the system now */
    uint64_t live;
    uint64_t pod_queue_total;
    uint64_t busy_total;
    uint64_t events_logged;
    uint64_t events_handled, events_stale; /* popped: handled, or skipped as stale */
    bool class_exposed[SIM_CLASSES_MAX];
    /* time series (series.c) */
    sim_row row;
    fb_hist tick_hist;
    fb_time_us next_tick_us;
    fb_time_us next_progress_us;
    /* baseline and spillover (series.c) */
    fb_time_us first_window_us;
    uint64_t base_ended, base_bad;
    fb_hist base_hist;
    bool baseline_ready;
    fb_hist *win_hist; /* a ring of per-tick histograms over the last win_k ticks */
    uint64_t *win_ended, *win_bad;
    uint32_t win_k, win_pos, win_fill;
    fb_hist win_sum;
    uint64_t win_ended_sum, win_bad_sum;
    /* disturbance windows: faults and spikes */
    window windows[WINDOWS_MAX];
    uint32_t window_count;
} sim;

static inline void *pool_at(const pool *p, uint32_t i) {
    return (char *)p->items + (size_t)i * p->size;
}

static inline req *R(sim *s, uint32_t i) {
    return (req *)pool_at(&s->reqs, i);
}

static inline attempt *A(sim *s, uint32_t i) {
    return (attempt *)pool_at(&s->atts, i);
}

/* engine.c */
void pool_init(pool *p, size_t size, size_t cap_max);
void pool_free(pool *p);
int pool_take(pool *p, uint32_t *out);
void pool_release(pool *p, uint32_t i);
void stop(sim *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void push(sim *s, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen, uint32_t arg);
void push_lane(sim *s, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen);
void log_event(sim *s, const sim_log_event *ev);
void catch_up(sim *s, fb_time_us t);
void run_model(sim *s);
void run_port(sim *s);

/* request.c */
void new_request(sim *s, uint32_t cls, uint32_t user);
void on_work_done(sim *s, uint32_t ri);
void on_resume(sim *s, uint32_t ri);
void deliver(sim *s, uint32_t ai);
void on_attempt_timeout(sim *s, uint32_t ai);
void on_deadline(sim *s, uint32_t ri);
void on_finish(sim *s, uint32_t ri);

/* provider.c */
void provider_arrive(sim *s, uint32_t ai);
void port_send(sim *s, uint32_t ai);
void on_reply(sim *s, uint32_t ai);
void on_service_done(sim *s, uint32_t ai);
void on_fault_edge(sim *s, uint32_t provider, uint32_t fault, bool end);
void provider_cancel(sim *s, uint32_t ai);

/* store.c */
int setup_stores(sim *s);
int pod_breaker(sim *s, uint32_t k, uint32_t p, fb_fallback_provider *fp);
void on_breaker_event(void *ctx, const fb_breaker_event *ev);
void on_store_record(sim *s);
void on_store_sync(sim *s);
bool is_open(fb_breaker_state st);
fb_breaker_state seen_state(const fb_breaker *b, fb_time_us now);

/* series.c */
bool in_window(const sim *s, fb_time_us t);
bool rows_left(const sim *s);
fb_time_us tick_end(const sim *s);
void emit_ticks(sim *s, fb_time_us t);
void close_baseline(sim *s);

/* stats.c: every summary and time-series counter moves here */
void stat_arrival(sim *s, const req *r);
void stat_attempt(sim *s, const attempt *a);
void stat_outcome(sim *s, uint32_t provider, fb_outcome outcome);
void stat_end(sim *s, const req *r, sim_end end, bool via_fallback);
void stat_policy(sim *s, const req *r);
void stat_stream_failure(sim *s, const req *r, uint32_t tokens_out, bool resumed);
void stat_fallback_cost(sim *s, const req *r, uint32_t provider, uint32_t tokens_out);
void stat_bill(sim *s, const attempt *a, uint32_t tokens_out, bool wasted);
typedef enum tally { T_CAPACITY_429, T_OVERLOADED, T_ABANDONED, T_BREAKER_REJECTION } tally;
void stat_tally(sim *s, uint32_t provider, tally what);
void stat_provider_busy(sim *s, uint32_t provider);
void stat_provider_queued(sim *s, uint32_t provider);
void stat_pod_queued(sim *s);
void stat_breaker_transition(sim *s, const bctx *bc, const fb_breaker_event *ev);
void stat_finalize(sim *s);
int stat_check_invariants(sim *s);

/* setup.c */
int setup(sim *s);
void teardown(sim *s);

#endif /* SIM_SIMINT_H */
