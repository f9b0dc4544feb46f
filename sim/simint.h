/*
 * simint.h - the simulator's internals, shared by its files.
 *
 *   engine.c    pools, the event loop (model and port clocks), caps, errors
 *   request.c   a user request: arrival, worker, policy decision, attempt, reply, end
 *   provider.c  a provider: admission, capacity, queue, service, replies, billing, the port
 *   conn.c      an attempt's way to its provider and back: connections, network latency
 *   hedging.c   hedged requests: a group of attempts, the first success wins
 *   store.c     breakers: per pod or shared through a store with a propagation delay
 *   gateway.c   a gateway tier: its replicas, their workers and queues (the pods' calls)
 *   series.c    the time series, the baseline and spillover
 *   stats.c     the summary counters, their final sums and the invariants
 *   setup.c     building a run from a scenario variant, and tearing it down
 *   fleet.c     the fleet's dynamics: sources.c (per-pod, serial), users.c (re-submissions),
 *               autoscale.c (pods), and the store's outages (store.c); fleetint.h
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
#include "scenario/dist.h"
#include "scenario/fault.h"
#include "sim/fifo.h"
#include "sim/queue.h"
#include "sim/sim.h"
#include "sim/traffic.h"

enum {
    EV_ARRIVAL = 1,     /* id = class */
    EV_BURST,           /* id = class */
    EV_USER,            /* id = closed-loop user, or a replayed session's */
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
    EV_LAYER_TIMEOUT,   /* id = request, arg = depth | serial << 3: an outer layer gives up */
    EV_PUBLISH,         /* id = breaker slot: a pod reads an opening another pod published */
    EV_HEDGE,           /* id = request, arg = the group's serial: the next hedge is due */
    EV_AT_PROVIDER,     /* id = attempt: it reaches its provider (connection setup, network) */
    EV_AT_CLIENT,       /* id = attempt: its reply reaches the client (network) */
    /* the fleet's dynamics (fleet.c): handled by sim__fleet_step() */
    EV_POD_ARRIVAL,  /* id = pod, arg = class: a per-pod source's arrival */
    EV_SERIAL,       /* id = class: a serial client's next call */
    EV_RESUBMIT,     /* id = pending re-submission: a user submits a failed request again */
    EV_SCALE_SAMPLE, /* the autoscaler samples its metric (every second), decides every period */
    EV_POD_START,    /* id = pod, gen = its incarnation: a new pod's process starts */
    EV_POD_READY,    /* id = pod, gen = its incarnation: it takes traffic */
    EV_STORE_EDGE,   /* id = store outage, arg = is_end */
    /* a breaker's timed transition (fb_breaker_next_timer): handled by sim__on_breaker_timer() */
    EV_BREAKER_TIMER, /* id = breaker slot (pods' first, then the stores) */
};

/* A layer's pending timeout or resume: its depth and serial in one event argument. */
#define HOP_ARG(depth, serial) ((uint32_t)(depth) | (uint32_t)(serial) << 3)
#define HOP_DEPTH(arg) ((arg)&7u)
#define HOP_SERIAL(arg) ((arg) >> 3)

enum { LANE_STORE_RECORD = 0, LANE_STORE_SYNC = 1 };

enum { R_FREE = 0, R_QUEUED, R_LOCAL, R_CALLING, R_WAITING, R_FINISHING };
enum {
    A_FREE = 0,
    A_QUEUED,
    A_SERVICE,
    A_REPLYING,
    A_HANG,
    A_PORT,      /* at a real provider */
    A_CONNWAIT,  /* waiting for a connection of its pod's pool */
    A_TRAVEL,    /* on its way to the provider: a connection's setup, the network */
    A_RETURNING, /* its reply on its way back to the client */
};

/* A request's place in the gateway tier (gateway.c). */
enum { GW_NONE = 0, GW_QUEUED, GW_HELD };

/* An entry of a replica's queue: stale when the request moved on (gen or ticket). */
typedef struct gw_ref {
    uint32_t id, gen, ticket;
} gw_ref;

/* An attempt's connection (conn.c). */
enum { CONN_NONE = 0, CONN_WAIT, CONN_HELD };

#define PURPOSE_REQUEST 2u
#define PURPOSE_POD 3u
#define PURPOSE_USER 4u
/* A request's stream, named by what it is (random streams fusebox-5, docs/rng.md): an open-loop
   arrival's by its order among those (PURPOSE_REQUEST), a user's by (user, its count), a serial
   client's call by (class, its count), a re-submission by the stream of the request it repeats.
   (5, 6: fleetint.h; 9: gateway.c) */
#define PURPOSE_USER_REQUEST 10u
#define PURPOSE_SERIAL_REQUEST 11u
#define PURPOSE_RESUBMIT 12u
#define ENTITY_POD 0x20000u
#define ENTITY_USER 0x40000000u
#define NONE32 UINT32_MAX

/* A request's state in one layer of its stack. */
typedef struct hop {
    fb_fallback_request fr; /* what an attempt touches of it last: next to the fields below */
    uint32_t serial;        /* names its pending timeout or resume; moves on when either is moot */
    bool has_last;
    bool active;    /* between its begin and its end */
    uint8_t target; /* its current attempt's provider (an outer layer's: 0, the layer inside) */
    uint8_t cause;  /* sim_end: how the layer inside ended, when it raised `last`; SIM_END_COUNT:
                       none */
    uint8_t first_cause;   /* sim_end */
    uint8_t first_outcome; /* fb_outcome: its class here (a provider's answer has no cause) */
    fb_reply last;         /* the last result it received: what it raises when it gives up */
    fb_reply first;        /* the first result it received (raised instead under raise_first) */
    fb_time_us last_hint_us;
    fb_time_us first_hint_us;
} hop;

typedef struct req {
    uint32_t gen; /* first field: survives reuse (sim__pool_release) */
    /* what its attempts touch, in its first cache line (the pool aligns its entries) */
    uint8_t state;
    uint8_t cls;
    uint8_t gw; /* GW_NONE, GW_QUEUED, GW_HELD: its place in the gateway tier (gateway.c) */
    bool holds_worker;
    bool exposed;      /* its class may call a faulted provider */
    bool via_fallback; /* the routing layer answered from a later provider */
    bool degraded;     /* the answer is the outermost layer's degraded one */
    bool dl_linked;    /* in the list of live requests (its deadline: dl_* below) */
    uint32_t attempt;  /* current provider attempt index + 1, 0 = none */
    uint32_t sent;     /* provider attempts so far, every layer's (the port's resend count) */
    uint32_t prompt_tokens, completion_tokens, tokens_left;
    uint32_t pod;
    /* its index in its class's recorded retries (retry_at_first), when the variant waits as
       recorded; NONE32: none */
    uint32_t rec;
    const sim_stack *stack; /* the layers it passes through */
    fb_rng rng;
    /* the rest: what a request touches once */
    uint16_t resubmits; /* re-submissions of its user request before it (fleet.c) */
    /* its attempts waiting in a provider's queue (a client's abandoned one too, where the
       provider keeps working): each draws from its stream when it starts service. 255 sticks
       (no longer counted: a request that reaches it never has its answers handled ahead) */
    uint8_t queued;
    /* the gateway tier: the provider the layer outside chose (layer_begin's `chosen`), its
       replica's seat, and what it waits with in the replica's queue */
    uint8_t gw_chosen;
    uint32_t user;
    uint32_t seat; /* s->npods + replica, while gw != GW_NONE */
    uint32_t gw_ticket;
    /* its deadline (engine.c): its place in the list of live requests, and its sequence number */
    uint32_t dl_prev, dl_next;
    fb_time_us gw_since_us;
    fb_time_us arrival_us;
    uint64_t dl_seq;
    /* one per layer of the stack, outermost first; the pool rounds an entry to whole cache
       lines, so that an attempt's part of the first hop (its fr's end) takes two of them */
    hop hops[];
} req;

/*
 * What an attempt carries when the variant hedges or pools connections, or
 * a provider has network latency (s->att_x): sized into the attempts' pool
 * only then, so that other runs keep their memory and speed.
 */
typedef struct attx {
    fb_fallback_permits perm; /* a hedge group's attempt holds its own permits */
    bool grouped;             /* in its request's hedge group, at `slot` */
    bool hedge;               /* not the group's first attempt */
    bool left_running;        /* a loser the client lets finish (hedging.cancel: false) */
    uint8_t slot;
    uint8_t conn;  /* CONN_NONE, CONN_WAIT, CONN_HELD */
    uint8_t layer; /* the innermost layer that sent it */
    uint32_t pod;
    fb_time_us wait_since_us; /* when it started waiting for a connection */
    fb_time_us start_us;      /* when it was sent (a hedge group's member: hedging.c) */
} attx;

typedef struct attempt {
    uint32_t gen; /* first field: survives reuse */
    /* what its events touch, in one cache line (the pool's entries are whole lines: setup.c) */
    uint8_t state;
    uint8_t provider;
    bool abandoned;
    bool stream;        /* the request streams its answer */
    bool keeps_partial; /* a broken stream's tokens are kept (the client resumes) */
    uint8_t retry; /* its request's attempts before it, at most 255 (a fault's retry_fraction) */
    bool timer_armed;
    uint32_t req, req_gen;
    uint32_t tokens_in, tokens_out; /* billed when served */
    fb_reply reply;
    fb_time_us hint_us;
    fb_time_us timeout_at_us; /* the client gives up then; FB_TIME_MAX = never */
    /* when it entered its provider's queue (CoDel's sojourn): set there, read only after */
    fb_time_us queued_us;
    struct attx x[]; /* present when the run has hedging, connections or network latency */
} attempt;

/* A request's hedged call in progress (hedging.c): after its hops, when the variant hedges. */
typedef struct hgroup {
    fb_hedge_group g;
    bool active;
    uint8_t provider;                    /* the first attempt's */
    uint32_t serial;                     /* names the pending hedge timer */
    uint32_t att[FB_HEDGE_ATTEMPTS_MAX]; /* slot k's attempt index + 1; 0: answered or gone */
    fb_reply first;                      /* the first attempt's failure (EXHAUSTED ends with it) */
    fb_time_us first_hint_us;
} hgroup;

/* A layer's connections in one pod (conn.c). */
typedef struct connpool {
    uint32_t open; /* connections open, busy or idle, every provider */
    uint32_t idle_total;
    uint32_t busy[SIM_PROVIDERS_MAX], idle[SIM_PROVIDERS_MAX];
    sim_fifo wait[SIM_PROVIDERS_MAX]; /* of waiter, per provider */
    uint32_t wlive[SIM_PROVIDERS_MAX];
    uint64_t seq; /* arrival order of waiters across providers: FIFO over the pool */
} connpool;

/* An entry of a queue of requests or attempts: stale when the generation moved on. */
typedef struct ref {
    uint32_t id, gen;
} ref;

/* The pools' storage alignment: a cache line. */
#define POOL_ALIGN 64u

/* Fixed-size entries with generations, reused through a free list, growing up to a cap. */
typedef struct pool {
    void *items; /* at a multiple of POOL_ALIGN in base's block */
    void *base;
    size_t size, used, cap, cap_max;
    uint32_t *free_list;
    size_t free_len;
} pool;

/* Who a breaker's events belong to. */
typedef struct bctx {
    struct sim *s;
    int pod; /* -1 = the shared store */
    uint8_t layer;
    uint8_t provider; /* an outer layer's: 0, its one target */
} bctx;

/* A pod's view of a shared breaker: the store's state as last synced. */
typedef struct view {
    fb_breaker_state state;
    fb_time_us open_until_us;
    uint64_t generation;
    struct sim *s;
    uint8_t layer;
    uint8_t provider;
} view;

/* A result on its way to the store. */
typedef struct store_record {
    uint8_t layer;
    uint8_t provider;
    fb_breaker_permit permit;
    fb_breaker_result result;
} store_record;

/* The store's state on its way to the pods. */
typedef struct store_sync {
    uint8_t layer;
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
    fb_rng rng;
} pod;

/* A layer of the variant at run time; each pod has its own engine and budget per layer. */
typedef struct lay {
    const sim_layer *cfg;
    fb_retry_policy retry;
    fb_classifier classifier;
    bool classifier_only;  /* scn_layer_classifier_only: fb_classify alone, per reply */
    fb_hedge_policy hedge; /* cfg->has_hedge */
} lay;

/* RFC 8289's state for one provider's queue (provider.c). */
typedef struct codel {
    bool dropping;
    uint32_t count, lastcount;
    fb_time_us first_above_us; /* FB_TIME_NONE: the sojourn is below target */
    fb_time_us drop_next_us;
} codel;

/* What an answering fault makes of an attempt's answer (provider.c). */
typedef struct fault_reply {
    sim_fault_kind kind;
    int status;
    fb_error_kind error_kind; /* the status's own when the fault names none */
    fb_time_us retry_after_us;
    const sim_dist *latency; /* its own (scn_fault_latency); NULL: the provider's error latency */
} fault_reply;

typedef struct prov {
    uint32_t busy;
    sim_fifo queue; /* of ref */
    uint32_t qlive;
    codel codel;
    bool has_rpm, has_tpm;
    fb_bucket rpm, tpm;
    double capacity_factor;
    uint32_t slots;        /* concurrency x capacity_factor (UINT32_MAX: none) */
    bool thrashes;         /* an efficiency share below 1: fewer slots when queued */
    bool disturbed;        /* has scripted faults, or a class with a spike calls it */
    bool loaded;           /* latency.load: its service lengthens with the load */
    int share_layer;       /* whose breaker the time series shows (-1: none) */
    int limit_layer;       /* whose concurrency limit the time series shows (-1: none) */
    uint32_t conn_waiting; /* attempts waiting for a connection to it, every pod */
    /* provider.c's faults_quiet: no fault of phase k (0 answer, 1 service) is active over
       [quiet_from[k], quiet_to[k]) when quiet[k] (an empty span at first) */
    bool quiet[2];
    int8_t lone_answer; /* scn_fault_lone of the answer phase over its quiet span; -1: none */
    bool lone_all;      /* ... it hits every attempt (scn_fault_hits_all) */
    fb_time_us quiet_from[2], quiet_to[2];
    double lone_fraction;   /* ... its fraction */
    fault_reply lone_reply; /* ... its answer */
    /* the lognormal tables of its TTFT and its error latency (NULL: not a lognormal) */
    const fb_lntab *ttft_tab, *elat_tab;
    struct { /* in the tick: its row's, then added to the summary (sim__stat_provider_tick) */
        uint64_t attempts, outcomes[FB_OUT_COUNT];
    } tick;
} prov;

typedef struct window {
    fb_time_us start_us, end_us;
} window;

#define WINDOWS_MAX                                                                                \
    (SIM_PROVIDERS_MAX * SIM_FAULTS_MAX + SIM_CLASSES_MAX * SIM_SCHEDULE_MAX + SIM_SCHEDULE_MAX)

typedef struct sim {
    const sim_scenario *sc;
    const sim_policy *pol;
    const sim_run_opts *opts;
    const sim_port *port; /* NULL: the provider model */
    sim_summary *sum;
    sim_error *err;
    int rc; /* first fatal error */
    uint32_t P, npods;
    /* the seats that keep a layer's state: the pods, then the gateway's replicas (0..nseats) */
    uint32_t nseats;
    uint32_t gw_rr; /* the next replica, round-robin */
    fb_rng gw_rng;  /* the replicas' random balance */
    sim_queue q;
    fb_time_us now;
    lay lays[SIM_LAYERS_MAX];
    uint32_t NL;        /* layers of the variant */
    uint32_t depth_max; /* the deepest stack */
    pool reqs, atts;
    pod *pods;
    fb_fallback *fbs;   /* npods * NL: each pod's engine per layer */
    fb_budget *budgets; /* npods * NL */
    prov provs[SIM_PROVIDERS_MAX];
    /* breakers (store.c), each slot (layer, pod, provider): see slot() */
    fb_breaker *breakers;         /* per-pod scope */
    fb_breaker *stores;           /* NL * P, shared scope */
    bctx *bctxs;                  /* slots, then stores */
    fb_time_us *open_since;       /* slots, then stores */
    fb_time_us *open_end;         /* when each open period ends at the latest */
    view *views;                  /* slots, shared scope */
    sim_fifo recs;                /* store_record: in the same order as their lane */
    sim_fifo syncs;               /* store_sync: in the same order as their lane */
    fb_ratelimit *limiters;       /* slots */
    fb_time_us *published;        /* slots, PUBLISHED scope: the latest deadline published to it */
    uint32_t *rr_cursors;         /* npods * NL: each pod's round-robin rotation per layer */
    fb_eject_group *eject_groups; /* npods * NL */
    fb_conclimit *climits;        /* slots; NULL when no layer has a concurrency limit */
    fb_hedge_window *hwins;       /* slots; NULL when no layer hedges after a percentile */
    connpool *pools;              /* npods * NL; NULL when no layer has connections */
    bool att_x;                   /* attempts carry an attx */
    size_t hg_offset;             /* where a request's hgroup is (0: the variant does not hedge) */
    /* traffic */
    sim_traffic traffic[SIM_CLASSES_MAX];
    uint32_t users_total;
    uint32_t *user_class; /* closed loop: user -> class */
    fb_rng *user_rng;
    /* requests a replayed session's user has left to send (UINT32_MAX: a closed-loop user, who
       goes on); NULL when no class replays sessions */
    uint32_t *user_left;
    /* a replayed session's next recorded think time (its class's think_rec_us); NULL when no
       class has them */
    uint32_t *user_gap;
    /* a replayed session's next request's index in its class's recorded retries; NULL unless the
       variant waits as recorded (pol->recorded_waits) and a sessions class has them */
    uint32_t *user_rec;
    uint32_t session_base[SIM_CLASSES_MAX]; /* a sessions class: its first session's user */
    /* a user's requests sent so far (names its next one's stream); NULL without users */
    uint32_t *user_sent;
    /* (seed, PURPOSE_REQUEST), mixed once at setup: a request's stream is two mixes more; the
       same for a user's request, a serial call and a re-submission (request.c: request_stream) */
    fb_rng_family req_family, user_req_family, serial_req_family, resub_family;
    uint64_t serial;            /* open-loop requests created: names each one's random stream */
    uint32_t dl_first, dl_last; /* the live requests in deadline order (engine.c); NONE32: none */
    uint32_t rr;                /* the next pod to get a request */
    /* what is in the system now */
    uint64_t live;
    uint64_t pod_queue_total;
    uint64_t busy_total;
    uint64_t events_logged;
    uint64_t events_handled, events_stale; /* popped: handled, or skipped as stale */
    /* answers handled ahead (request.c: sim__answer_ahead; docs/engine.md): on for the model's
       clock; the one to handle next (NONE32: none) and its time; the loop's next due time */
    bool ahead_on;
    uint32_t ahead_ai;
    fb_time_us ahead_at, ahead_due;
    uint64_t events_ahead; /* handled ahead: counted in events_handled too, never queued */
    /* the last classes sim__answer_ahead asked for (classifying is a pure function of the
       layer, the provider and the reply: a storm asks the same, per answer) */
    struct {
        bool valid, timeout_ok; /* timeout_ok: the layer retries a timeout from the provider */
        uint8_t provider;
        uint32_t layer;
        int status;
        fb_error_kind kind;
        fb_class c;
    } ahead_memo;
    bool class_exposed[SIM_CLASSES_MAX];
    bool class_calls[SIM_CLASSES_MAX]; /* its target is not none: its requests call (setup) */
    const sim_stack *class_stack[SIM_CLASSES_MAX]; /* scn_policy_stack, once per class */
    uint8_t class_primary[SIM_CLASSES_MAX];        /* a calling class's chain's first provider */
    /* what a class's attempts carry from it: its stream flag, and whether its stack's innermost
       layer resumes a broken stream (keeps its tokens) */
    struct {
        bool stream, keeps_partial;
    } class_att[SIM_CLASSES_MAX];
    /* a class's lognormal tables (NULL: not a lognormal): prompt and completion tokens,
       service; with the providers' (prov), in lntabs (malloc), one per set of parameters */
    const fb_lntab *class_tab[SIM_CLASSES_MAX][3];
    /* a class whose token counts are both constants (no draw): the counts, decided at setup;
       likewise its service time */
    bool class_tokens_fixed[SIM_CLASSES_MAX];
    uint32_t class_tokens[SIM_CLASSES_MAX][2];
    bool class_service_fixed[SIM_CLASSES_MAX];
    fb_time_us class_service_us[SIM_CLASSES_MAX];
    fb_lntab *lntabs;
    /* time series (series.c) */
    sim_row row;
    uint64_t tick_ends[SIM_END_COUNT]; /* the tick's requests by how they ended: the row's */
    fb_hist *tick_hist; /* the tick's latencies: tick_buf, or the window's newest slot */
    fb_hist tick_buf;
    fb_time_us next_tick_us;
    fb_time_us tick_due_us; /* sim__tick_end() while rows are left, else FB_TIME_MAX */
    fb_time_us next_progress_us;
    /* baseline and spillover (series.c) */
    fb_time_us first_window_us;
    uint64_t base_ended, base_bad;
    fb_hist base_hist;
    bool baseline_ready;
    /* a ring of win_k + 1 per-tick histograms: the last win_k ticks', and at win_pos the tick's */
    fb_hist *win_hist;
    uint64_t *win_ended, *win_bad;
    uint32_t win_k, win_pos, win_fill;
    fb_hist win_sum;
    uint64_t win_ended_sum, win_bad_sum;
    /* disturbance windows: faults and spikes */
    window windows[WINDOWS_MAX];
    uint32_t window_count;
    /* sim__in_window_now: the answer over [in_window_from, in_window_to) (empty at first) */
    bool in_window;
    fb_time_us in_window_from, in_window_to;
    bool judged[WINDOWS_MAX]; /* a full window starting after disturbance k's end was judged */
    /* a request's end, counted once (stats.c); the summary's sums of them at the end */
    uint64_t class_ends[SIM_CLASSES_MAX][SIM_END_COUNT];
    fb_hist *ok_hist; /* per class: its successes' latencies (the others' in its summary's) */
    /* the breakdown's fault windows (stats.c): one latency histogram each */
    fb_hist *bd_hist;          /* sum->breakdown.window_count of them; NULL when none */
    fb_time_us bd_from, bd_to; /* from the first's start to the last's end (empty: none) */
    /* the fleet's dynamics (fleetint.h): NULL unless the scenario uses one */
    struct fleet *fleet;
    /* the providers' even faults: each one's count and offset (scenario/fault.h) */
    sim_fault_even fault_even[SIM_PROVIDERS_MAX][SIM_FAULTS_MAX];
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

/* Attempt a's request has one more (+1) or one fewer (-1) attempt in a provider's queue
   (req.queued), while it is that request's. */
static inline void sim__req_queued(sim *s, const attempt *a, int by) {
    req *r = R(s, a->req);
    if (r->gen == a->req_gen && r->queued != UINT8_MAX) r->queued = (uint8_t)(r->queued + by);
}

/* An attempt's extension; only when s->att_x. */
static inline attx *X(attempt *a) {
    return &a->x[0];
}

/* A request's hedge group; only when s->hg_offset. */
static inline hgroup *HG(const sim *s, req *r) {
    return (hgroup *)((char *)r + s->hg_offset);
}

/* The breaker, view, limiter and open-period slot of (layer, seat, provider). */
static inline size_t slot(const sim *s, uint32_t layer, uint32_t podi, uint32_t provider) {
    return ((size_t)layer * s->nseats + podi) * s->P + provider;
}

/* The slots of the shared stores come after the seats': (layer, provider). */
static inline size_t store_slot(const sim *s, uint32_t layer, uint32_t provider) {
    return (size_t)s->NL * s->nseats * s->P + (size_t)layer * s->P + provider;
}

/* The seats that run layer l: the pods [0, npods), or a gateway layer's replicas. */
static inline uint32_t seat_first(const sim *s, uint32_t l) {
    return s->lays[l].cfg->gateway ? s->npods : 0;
}
static inline uint32_t seat_end(const sim *s, uint32_t l) {
    return s->lays[l].cfg->gateway ? s->nseats : s->npods;
}

/* The seat whose state layer `depth` of r's stack uses: its pod's, or its gateway replica's. */
static inline uint32_t seat_at(const req *r, uint32_t depth) {
    return r->stack->gateway > 0 && depth >= r->stack->gateway ? r->seat : r->pod;
}

static inline fb_fallback *pod_fb(sim *s, uint32_t podi, uint32_t layer) {
    return &s->fbs[(size_t)podi * s->NL + layer];
}

/* engine.c */
void sim__pool_init(pool *p, size_t size, size_t cap_max);
void sim__pool_free(pool *p);
int sim__pool_take(pool *p, uint32_t *out);
int sim__pool_alloc(pool *p, uint32_t *out);
/* An entry as its last use left it (its generation kept): the caller sets every field it reads. */
static inline int sim__pool_take_dirty(pool *p, uint32_t *out) {
    if (p->free_len > 0) {
        *out = p->free_list[--p->free_len];
        return FB_OK;
    }
    return sim__pool_alloc(p, out);
}
/* Give entry i back; its generation moves on, so that events of its last use are stale. Inline:
 * every attempt and request ends with it. */
static inline void sim__pool_release(pool *p, uint32_t i) {
    uint32_t *gen = pool_at(p, i);
    (*gen)++;
    p->free_list[p->free_len++] = i;
}
void sim__stop(sim *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sim__push_failed(sim *s, fb_time_us t);
void sim__deadline_first(sim *s);
void sim__deadline_unlink(sim *s, req *r);
/* A new request's deadline (r = R(s, ri)), its arrival plus the request timeout (engine.c: a
   list, not a push; inline, as a push is: once per request). */
static inline void sim__deadline_add(sim *s, uint32_t ri, req *r) {
    fb_time_us t = r->arrival_us + s->sc->pods.request_timeout_us;
    if (t < s->now || sim_queue_outside_push(&s->q, &r->dl_seq) != FB_OK) {
        sim__push_failed(s, t); /* in the past, or the queue is full */
        return;
    }
    r->dl_linked = true;
    r->dl_prev = s->dl_last;
    r->dl_next = NONE32;
    if (s->dl_last != NONE32) {
        R(s, s->dl_last)->dl_next = ri;
        s->dl_last = ri;
        return;
    }
    s->dl_first = s->dl_last = ri;
    sim__deadline_first(s);
}
/* Request r ends before its deadline: the deadline is dropped unpopped (counted cancelled).
   A request in the list's middle is unlinked here (most: about 7 instructions fewer); at
   an end, where the head or tail moves, by sim__deadline_unlink. */
static inline void sim__deadline_drop(sim *s, req *r) {
    if (!r->dl_linked) return;
    uint32_t prev = r->dl_prev, next = r->dl_next;
    if (prev != NONE32 && next != NONE32) {
        r->dl_linked = false;
        R(s, next)->dl_prev = prev;
        R(s, prev)->dl_next = next;
    } else {
        sim__deadline_unlink(s, r);
    }
    sim_queue_outside_cancel(&s->q);
}
/* Schedule an event at t (not before now); inline, as the queue's common case is. */
static inline void sim__push(sim *s, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen,
                             uint32_t arg) {
    if (t < s->now || sim_queue_push(&s->q, t, kind, id, gen, arg) != FB_OK) sim__push_failed(s, t);
}
void sim__push_lane(sim *s, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen);
/* The event queue's outside lanes (engine.c): the request deadlines, and a class's arrivals. */
enum { OUT_DEADLINES = 0, OUT_ARRIVALS = 1 };
/* Class cls's next arrival, at t (its outside lane is empty); inline, as sim__push is: one a
   request (engine.c says why arrivals are outside lanes). */
static inline void sim__push_arrival(sim *s, fb_time_us t, uint32_t cls) {
    if (t < s->now ||
        sim_queue_push_outside(&s->q, OUT_ARRIVALS + cls, t, EV_ARRIVAL, cls, 0, 0) != FB_OK)
        sim__push_failed(s, t);
}
void sim__log_event(sim *s, const sim_log_event *ev);
void sim__catch_up(sim *s, fb_time_us t);
void sim__run_model(sim *s);
void sim__run_port(sim *s);

/* gateway.c */
int sim__gateway_setup(sim *s);
/* A call of r's layer depth - 1 reaches the gateway: a replica, a worker, or its queue. */
void sim__gateway_enter(sim *s, uint32_t ri, uint32_t depth, uint8_t chosen);
/* r leaves the gateway (its first layer is done, or it is given up): the worker, the queue. */
void sim__gateway_leave(sim *s, uint32_t ri);
/* The seat of r's innermost layer (its attempts'): its pod's or its gateway replica's. */
static inline uint32_t seat_inner(const req *r) {
    return seat_at(r, r->stack->depth - 1);
}

/* request.c */
void sim__gateway_begin(sim *s, uint32_t ri, uint32_t depth, uint8_t chosen);
void sim__gateway_refused(sim *s, uint32_t ri, uint32_t depth, int status);
void sim__new_request(sim *s, uint32_t cls, uint32_t user, uint32_t rec);
/* The recorded request an arrival of class cls (from `user`, or NONE32) is (engine.c). */
uint32_t sim__recorded_index(sim *s, uint32_t cls, uint32_t user);
void sim__on_work_done(sim *s, uint32_t ri);
void sim__on_resume(sim *s, uint32_t ri, uint32_t arg);
void sim__on_layer_timeout(sim *s, uint32_t ri, uint32_t arg);
void sim__deliver(sim *s, uint32_t ai);
void sim__on_attempt_timeout(sim *s, uint32_t ai);
bool sim__answer_ahead(sim *s, uint32_t ai, const attempt *a, fb_time_us at, fb_time_us span_to);
void sim__on_deadline(sim *s, uint32_t ri);
void sim__on_finish(sim *s, uint32_t ri);

/* request.c: what hedging.c shares */
fb_class sim__classify_inner(sim *s, req *r, const fb_reply *rep, uint32_t pi);
/* A hedge group's answer (from provider pi, `out` tokens) to the innermost layer's engine. */
void sim__inner_result(sim *s, uint32_t ri, uint32_t pi, const fb_reply *rep, fb_time_us hint,
                       uint32_t out);
int sim__new_attempt(sim *s, uint32_t ri, uint8_t provider, fb_time_us timeout_us, bool resume,
                     uint32_t *out);
fb_reply sim_timeout_reply(void);

/* hedging.c */
void sim__hedge_begin(sim *s, uint32_t ri, uint32_t ai);
void sim__on_hedge(sim *s, uint32_t ri, uint32_t arg);
void sim__hedge_delivered(sim *s, uint32_t ai);
void sim__hedge_timeout(sim *s, uint32_t ai);
void sim__hedge_abandon(sim *s, req *r);

/* conn.c */
void sim__conn_depart(sim *s, uint32_t ai);
void sim__on_at_provider(sim *s, uint32_t ai);
bool sim__conn_return(sim *s, uint32_t ai);
void sim__on_at_client(sim *s, uint32_t ai);
void sim__conn_end(sim *s, uint32_t ai, bool close);
int sim__setup_conns(sim *s);
void sim__free_conns(sim *s);
void sim__conns_pod_reset(sim *s, uint32_t k);

/* stats.c, for these */
void sim__stat_hedge_sent(sim *s, uint32_t provider);
void sim__stat_hedge_won(sim *s);
void sim__stat_conn_wait(sim *s, uint32_t provider);
void sim__stat_conn_waited(sim *s, uint32_t provider, fb_time_us wait_us);
void sim__stat_conn_setup(sim *s, uint32_t provider);

/* provider.c */
void sim__provider_arrive(sim *s, uint32_t ai);
void sim__port_send(sim *s, uint32_t ai);
void sim__port_request_end(sim *s, uint32_t ri, sim_end end, bool via_fallback);
void sim__on_reply(sim *s, uint32_t ai);
void sim__on_service_done(sim *s, uint32_t ai);
void sim__on_fault_edge(sim *s, uint32_t provider, uint32_t fault, bool end);
void sim__provider_set_capacity(sim *s, uint32_t provider, double factor);
void sim__provider_cancel(sim *s, uint32_t ai);

/*
 * An attempt leaves for its provider: through its pool and the network
 * (conn.c) when the scenario has either (s->att_x), else straight there.
 * Decided here, inline, for the attempts of scenarios that have neither.
 */
static inline void attempt_depart(sim *s, uint32_t ai) {
    if (s->att_x)
        sim__conn_depart(s, ai);
    else if (s->port)
        sim__port_send(s, ai);
    else
        sim__provider_arrive(s, ai);
}

/* The answer travels back over the network (true: it arrives later, conn.c). */
static inline bool attempt_return(sim *s, uint32_t ai) {
    return s->att_x && !s->port && sim__conn_return(s, ai);
}

/* store.c */
int sim__setup_stores(sim *s, uint32_t layer);
int sim__pod_breaker(sim *s, uint32_t layer, uint32_t k, uint32_t p, fb_fallback_provider *fp);
void sim__on_breaker_event(void *ctx, const fb_breaker_event *ev);
void sim__on_store_record(sim *s);
void sim__on_store_sync(sim *s);
void sim__on_publish(sim *s, uint32_t slot_index);
void sim__on_breaker_timer(sim *s, uint32_t slot_index);
/* Inline, as the two below: every row asks them of every pod's breaker (series.c). */
static inline bool sim__is_open(fb_breaker_state st) {
    return st == FB_BREAKER_OPEN || st == FB_BREAKER_FORCED_OPEN;
}
/*
 * A breaker's state as the next call would find it, without changing it: an
 * open breaker whose deadline has passed admits a probe, so it reads as
 * half-open. Writing rows must never move the model (rows would otherwise
 * depend on the tick).
 */
static inline fb_breaker_state sim__seen_state(const fb_breaker *b, fb_time_us now) {
    fb_breaker_state st = fb_breaker_state_get(b);
    if (st == FB_BREAKER_OPEN && now >= fb_breaker_open_until(b)) return FB_BREAKER_HALF_OPEN;
    return st;
}

/* series.c */
bool sim__in_window_at(sim *s, fb_time_us t);
/*
 * The clock is inside a disturbance window. Asked for every request and
 * attempt, answered from the span of time over which the answer holds, so
 * that the windows are looked at only when the clock leaves it.
 */
static inline bool sim__in_window_now(sim *s) {
    if (s->now >= s->in_window_from && s->now < s->in_window_to) return s->in_window;
    return sim__in_window_at(s, s->now);
}
bool sim__rows_left(const sim *s);
fb_time_us sim__tick_end(const sim *s);
void sim__tick_due(sim *s);
void sim__emit_ticks(sim *s, fb_time_us t);
void sim__close_baseline(sim *s);

/* stats.c: every summary and time-series counter moves here */
void sim__stat_arrival_in_window(sim *s);
/* A request arrived (inline: every request does). */
static inline void sim__stat_arrival(sim *s, const req *r) {
    sim_summary *sum = s->sum;
    sum->requests++;
    sum->classes[r->cls].requests++;
    s->row.arrivals++;
    bool calls = s->class_calls[r->cls];
    if (s->live > sum->in_flight_peak) sum->in_flight_peak = s->live;
    if (r->resubmits > 0) {
        sum->fleet.resubmissions++;
        sum->fleet.resubmissions_calling += calls;
        s->row.resubmissions++;
    }
    if (!calls) return;
    sum->requests_calling++;
    /* sim__in_window_now, its look at the windows out of line */
    if (s->now >= s->in_window_from && s->now < s->in_window_to)
        sum->requests_in_fault += s->in_window;
    else
        sim__stat_arrival_in_window(s);
}
/* An attempt went out (inline, as are the outcome and the layer attempt below: per attempt). */
static inline void sim__stat_attempt(sim *s, const attempt *a) {
    s->sum->attempts++;
    s->provs[a->provider].tick.attempts++; /* the provider's summary: at the tick's end */
    if (sim__in_window_now(s)) s->sum->attempts_in_fault++;
}
void sim__stat_gateway_attempt(sim *s, uint32_t seat); /* a replica's layers sent an attempt */
/* What a gateway replica's call did (gateway.c); v: the workers busy, the calls queued, the
   wait (us), by kind. */
enum {
    GW_STAT_CALL,
    GW_STAT_WORKER,
    GW_STAT_QUEUED,
    GW_STAT_WAITED,
    GW_STAT_QUEUE_FULL,
    GW_STAT_ABANDONED
};
void sim__stat_gateway(sim *s, uint32_t seat, int what, uint64_t v);
/* An attempt's outcome, as the client classified it. */
static inline void sim__stat_outcome(sim *s, uint32_t provider, fb_outcome outcome) {
    s->provs[provider].tick.outcomes[outcome]++; /* the row's errors and the summary's: from it */
}
/* The tick's attempts and outcomes of provider p into the summary; its counts start again. */
void sim__stat_provider_tick(sim *s, uint32_t p);
/*
 * An attempt's answer as the client saw it, for the breakdown: the HTTP
 * status the provider sent, or what happened instead. One array slot per
 * call; no allocation. Inline: every attempt's answer comes here.
 */
static inline void sim__stat_answer(sim *s, const fb_reply *rep) {
    sim_breakdown *b = &s->sum->breakdown;
    if (rep->after_first_token) {
        b->words[SIM_ANSWER_BROKEN]++;
        return;
    }
    switch (rep->transport) {
    case FB_TRANSPORT_NONE:
        if (rep->status >= 100 && rep->status < SIM_STATUS_MAX)
            b->status[rep->status]++;
        else
            b->words[SIM_ANSWER_BROKEN]++;
        break;
    case FB_TRANSPORT_TIMEOUT:
        b->words[SIM_ANSWER_TIMEOUT]++;
        break;
    case FB_TRANSPORT_CONNECT:
    case FB_TRANSPORT_RESET:
        b->words[SIM_ANSWER_RESET]++;
        break;
    case FB_TRANSPORT_REJECTED: /* no call went out */
        break;
    default:
        b->words[SIM_ANSWER_BROKEN]++;
        break;
    }
}
int sim__stat_setup(sim *s);
void sim__stat_breakdown_end(sim *s, const req *r, sim_end end, fb_time_us lat);
/*
 * A request ended: outcome, latency, the SLO, and the baseline before faults.
 * Each is counted once, in the finest count it belongs to (by class and end,
 * by tick and end; its latency by class and success); the summary's totals
 * and the rows' are sums of those, made when they are read (stats.c: stats_ends,
 * series.c: fill_ends). Inline: every request ends here.
 */
static inline void sim__stat_end(sim *s, const req *r, sim_end end, bool via_fallback) {
    fb_time_us lat = s->now - r->arrival_us;
    bool success = end == SIM_END_SUCCESS, answered = success || end == SIM_END_DEGRADED;
    bool late = answered && lat > s->sc->slo_latency_us;
    bool fallback = success && via_fallback;
    sim_class_summary *c = &s->sum->classes[r->cls];
    s->class_ends[r->cls][end]++;
    c->success_fallback += fallback;
    c->slo_missed += late;
    s->tick_ends[end]++;
    s->row.fallback_success += fallback;
    s->row.slo_missed += late;
    if (s->class_calls[r->cls]) {
        sim_breakdown *b = &s->sum->breakdown; /* a calling request: by its calls */
        if (r->sent < SIM_ATTEMPT_BUCKETS)
            b->per_request[r->sent]++;
        else
            b->per_request_beyond++;
        if (r->arrival_us < s->bd_to && r->arrival_us >= s->bd_from) /* (none: bd_to 0) */
            sim__stat_breakdown_end(s, r, end, lat);
    }
    /* the latency histograms it counts in, recorded together (one bucket lookup) */
    fb_hist *cl = success ? &s->ok_hist[r->cls] : &c->latency;
    if (!s->baseline_ready && s->now < s->first_window_us) {
        s->base_ended++;
        s->base_bad += !answered || late;
        fb_hist_record_three(s->tick_hist, cl, &s->base_hist, lat);
    } else {
        fb_hist_record_two(s->tick_hist, cl, lat);
    }
}
/* A layer received a request (from users, or from the layer outside it). */
static inline void sim__stat_layer_call(sim *s, uint32_t layer) {
    s->sum->layers[layer].calls++;
}
/* A layer made an attempt: to `target`, a provider (or the layer inside, for an outer one). */
static inline void sim__stat_layer_attempt(sim *s, uint32_t layer, uint32_t target) {
    sim_layer_summary *ls = &s->sum->layers[layer];
    ls->attempts++;
    if (s->lays[layer].cfg->role != SIM_ROLE_OUTER) ls->attempts_to[target]++;
}
/* Layer `depth` of the request's stack is done with it: its retries and fallbacks (the run's:
   their sums, at the end). */
static inline void sim__stat_policy(sim *s, const req *r, uint32_t depth) {
    const fb_fallback_request_stats *st = fb_fallback_request_stats_get(&r->hops[depth].fr);
    sim_layer_summary *ls = &s->sum->layers[r->stack->layer[depth]];
    ls->retries += st->retries;
    ls->fallbacks += st->fallbacks;
}
void sim__stat_stream_failure(sim *s, const req *r, uint32_t tokens_out, bool resumed);
void sim__stat_fallback_cost(sim *s, const req *r, uint32_t provider, uint32_t tokens_out);
void sim__stat_bill(sim *s, const attempt *a, uint32_t tokens_out, bool wasted);
typedef enum tally { T_CAPACITY_429, T_OVERLOADED, T_SHED, T_ABANDONED } tally;
void sim__stat_tally(sim *s, uint32_t provider, tally what);
/* The peak of attempts in service at a provider (inline: every attempt served comes here). */
static inline void sim__stat_provider_busy(sim *s, uint32_t provider) {
    sim_provider_summary *ps = &s->sum->providers[provider];
    if (s->provs[provider].busy > ps->in_service_peak)
        ps->in_service_peak = s->provs[provider].busy;
}
void sim__stat_provider_queued(sim *s, uint32_t provider);
void sim__stat_pod_queued(sim *s);
void sim__stat_class_exposure(sim *s, bool exposed);
void sim__stat_breaker_transition(sim *s, const bctx *bc, const fb_breaker_event *ev);
void sim__stat_breaker_rejection(sim *s, uint32_t layer, uint32_t provider);
typedef enum store_tally { STORE_UNREACHABLE, STORE_RECORD_LOST } store_tally;
void sim__stat_resubmitted(sim *s);
void sim__stat_serial_lag(sim *s, fb_time_us lag);
void sim__stat_serial_backlog(sim *s, uint64_t calls);
void sim__stat_scale(sim *s, uint32_t from, uint32_t to);
void sim__stat_store(sim *s, store_tally what);
void sim__stat_pod_retired(sim *s, uint32_t k);
void sim__stat_breaker_dropped(sim *s, const bctx *bc);
void sim__stat_finalize(sim *s);
int sim__stat_check_invariants(sim *s);

/* setup.c */
int sim__setup(sim *s);
void sim__teardown(sim *s);
int sim__setup_pod_policy(sim *s, uint32_t k); /* pod k's engines, breakers, limiters, budgets */

/* fleet.c: per-pod sources, serial clients, re-submissions, autoscaling, store outages */
uint32_t sim__autoscale_slots(const sim_policy *pol, uint32_t count); /* pod slots of a variant */
int sim__fleet_setup(sim *s);
void sim__fleet_teardown(sim *s);
int sim__fleet_step(sim *s, const sim_event *ev); /* 1 handled, 0 stale, -1 not a fleet event */
void sim__fleet_arrive(sim *s, req *r);           /* its pod, and a re-submission's tokens */
bool sim__fleet_end(sim *s, req *r, sim_end end); /* true: its user submits it again */
void sim__fleet_pod_freed(sim *s, uint32_t podi); /* a draining pod may be gone */
bool sim__fleet_pod_live(const sim *s, uint32_t podi); /* started and not yet gone */
bool sim__fleet_store_down(const sim *s);  /* the shared breakers' store is unreachable */
void sim__fleet_row(sim *s, sim_row *row); /* the fleet's columns of a row */
void sim__fleet_finalize(sim *s);          /* its share of the summary */
/* A re-submission's or a serial call's stream family, its entity in *entity; else NULL. */
const fb_rng_family *sim__fleet_stream(sim *s, uint32_t cls, uint64_t *entity);

#endif /* SIM_SIMINT_H */
