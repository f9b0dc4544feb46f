/*
 * sim.h - run one variant of a scenario under a virtual clock.
 *
 * The run composes the core policies exactly as an application would (see
 * core/fallback.h for the order) inside a model of pods (worker pools with
 * bounded queues and a request deadline), providers (latency, finite
 * capacity, RPM/TPM buckets, a fault timeline) and traffic. docs/engine.md
 * and docs/models.md describe the models; docs/metrics.md the metrics.
 *
 * Output flows through callbacks while the run goes (a time-series row per
 * tick, an event per breaker transition and fault edge) and a summary at the
 * end, so memory depends on requests in flight, not on requests simulated.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/breaker.h"
#include "core/classify.h"
#include "core/fallback.h"
#include "core/hist.h"
#include "scenario/scenario.h"

/* How a user request ended, beyond success. */
#define SIM_END_MAP(XX)                                                                            \
    XX(SUCCESS, "success")                                                                         \
    XX(DEGRADED, "degraded")             /* answered from the degraded/cached path */              \
    XX(PERMANENT, "permanent")           /* 4xx: the request itself was bad */                     \
    XX(POLICY, "policy")                 /* content-policy rejection */                            \
    XX(CONTEXT_LENGTH, "context_length") /* no provider could take the prompt */                   \
    XX(EXHAUSTED, "exhausted")           /* every provider failed */                               \
    XX(BREAKER_OPEN, "breaker_open")     /* every breaker rejected */                              \
    XX(RATE_LIMITED, "rate_limited")     /* the client-side limiter rejected */                    \
    XX(DEADLINE, "deadline")             /* the retry policy's deadline passed */                  \
    XX(STREAM_BROKEN, "stream_broken")   /* failed after output reached the user */                \
    XX(TIMEOUT, "timeout")               /* the pod's request timeout fired */                     \
    XX(QUEUE_FULL, "queue_full")         /* the pod's queue was full on arrival */

typedef enum sim_end {
#define SIM_END_ENUM(name, text) SIM_END_##name,
    SIM_END_MAP(SIM_END_ENUM)
#undef SIM_END_ENUM
        SIM_END_COUNT
} sim_end;

const char *sim_end_name(sim_end e);

typedef struct sim_provider_summary {
    uint64_t attempts;                            /* attempts sent to this provider */
    uint64_t outcomes[FB_OUT_COUNT];              /* as the client classified them */
    uint64_t served;                              /* attempts a model worked on (billed) */
    uint64_t abandoned;                           /* served, but the client had gone */
    uint64_t unfinished;                          /* still in the provider when the run ended */
    uint64_t tokens_in, tokens_out;               /* billed */
    uint64_t tokens_in_wasted, tokens_out_wasted; /* billed, not used for an answer */
    double cost_usd, cost_wasted_usd;
    uint64_t breaker_transitions, breaker_opens;
    double breaker_open_s; /* time spent open, averaged over pods (shared: the store) */
    uint64_t breaker_rejections;
    uint64_t limiter_waits, limiter_rejections;
    uint64_t capacity_429; /* 429s from the RPM/TPM buckets (not scripted) */
    uint64_t overloaded;   /* queue-full answers */
    uint64_t shed;         /* queued attempts dropped unserved (expired at the head, CoDel) */
    uint32_t in_service_peak, queue_peak;
    /* concurrency limits of the routing layer and inside it, every pod */
    uint64_t limit_rejections, limit_drops, limit_ignored;
    uint32_t limit_min, limit_max; /* the lowest and highest limit any pod had */
    uint64_t hedges;               /* hedged attempts sent to it (not the group's first) */
    uint64_t conn_waits;           /* attempts that waited for a connection */
    uint64_t conn_setups;          /* connections opened (new, or after one was closed) */
    double conn_wait_s;            /* time attempts waited for a connection, summed */
} sim_provider_summary;

/* One layer of the variant's stacks (the variant's layer of the same index). */
typedef struct sim_layer_summary {
    uint64_t calls;    /* requests it received: from users (outermost) or the layer outside */
    uint64_t attempts; /* attempts it made: whole requests to the layer inside, or provider calls */
    uint64_t retries, fallbacks;
    uint64_t attempts_to[SIM_PROVIDERS_MAX]; /* by provider (the routing layer and inside) */
    uint64_t breaker_opens, breaker_transitions, breaker_rejections;
} sim_layer_summary;

/* Why a disturbance's recovery could not be judged. */
typedef enum sim_undetermined {
    SIM_DETERMINED = 0,
    SIM_UNDETERMINED_ACTIVE,    /* it was still active when traffic ended */
    SIM_UNDETERMINED_NO_WINDOW, /* no full spillover.hold window fits between its end and
                                   traffic's */
    SIM_UNDETERMINED_NEXT       /* not back before the next disturbance began (next_us): its
                                   spillover is measured to there, a lower bound */
} sim_undetermined;

/* A disturbance window: a provider's scripted fault, or a traffic spike. */
typedef struct sim_fault_summary {
    bool spike;       /* a traffic class's spike (class `cls`), not a provider fault */
    bool store;       /* the shared breakers' store was unreachable (outage `fault`) */
    uint8_t cls;      /* spike: the class */
    uint8_t provider; /* fault: the provider */
    uint8_t fault;    /* index in the provider's faults (or the class's spikes) */
    fb_time_us start_us, end_us;
    fb_time_us spillover_us;       /* from end_us until back to baseline */
    fb_time_us next_us;            /* the next disturbance's start at or after end_us; or NONE */
    bool recovered;                /* false: not back to baseline when the run ended */
    sim_undetermined undetermined; /* not DETERMINED: nobody can tell (recovered is false) */
} sim_fault_summary;

/* One replica of a variant's gateway tier (report.json's "gateway"; docs/metrics.md). */
typedef struct sim_replica_summary {
    uint64_t calls;      /* calls from the pods' layers that reached it */
    uint64_t queued;     /* ... that waited for a worker */
    uint64_t queue_full; /* ... refused at once: its queue was full */
    uint64_t abandoned;  /* ... given up while they waited (a timeout or deadline outside) */
    uint64_t attempts;   /* provider attempts its layers sent */
    uint64_t cooldowns;  /* its own breakers' openings (cooldowns), every layer and provider */
    uint64_t learned;    /* openings it read from the store (another replica's, synced) */
    uint32_t busy_peak, queue_peak;
    fb_time_us wait_us_total, wait_us_max; /* of the calls that waited, once they got a worker */
} sim_replica_summary;

typedef struct sim_gateway_summary {
    uint32_t replicas;         /* 0: the variant has no gateway tier */
    sim_replica_summary total; /* every replica's: sums, and the peaks' and wait's maximum */
    sim_replica_summary replica[SIM_GATEWAY_MAX];
} sim_gateway_summary;

/* The fleet's dynamics (docs/metrics.md): zero unless the scenario uses them. */
typedef struct sim_fleet_summary {
    uint64_t resubmissions;         /* requests that were a user's re-submission */
    uint64_t resubmissions_calling; /* ... of classes that call a provider */
    uint64_t resubmitted;           /* requests that failed and were submitted again */
    fb_time_us serial_lag_us;       /* the longest a serial call started after its schedule */
    uint64_t serial_backlog; /* serial calls scheduled in the traffic window, never started */
    uint64_t pod_requests_min, pod_requests_max; /* requests a pod received (of pods.count) */
    uint32_t pods_peak;                          /* most pods taking traffic at once */
    double pod_seconds;                          /* pods taking traffic, integrated over the run */
    uint64_t pods_added, pods_removed, scale_decisions;
    uint64_t store_unreachable;  /* breaker checks made while the store was unreachable */
    uint64_t store_records_lost; /* results that never reached the store */
} sim_fleet_summary;

/* One traffic class's requests (the per-class rows of sim/metrics.c): collateral damage shows
 * here, on a class that never calls the faulted provider. */
typedef struct sim_class_summary {
    uint64_t requests, ended;
    uint64_t success, success_fallback, degraded, errors;
    uint64_t slo_missed; /* answered (or degraded) later than the SLO */
    fb_hist latency;     /* every request of the class that ended */
} sim_class_summary;

/*
 * The breakdown that compares a run with a log (docs/reports.md, "breakdown"):
 * requests by the provider calls they made, calls by their answer, requests
 * by how they ended, and per fault window. Fixed arrays: counted per call
 * without allocation.
 */
#define SIM_ATTEMPT_BUCKETS SIM_OBS_BUCKETS /* requests with 0..31 calls; more: beyond */
#define SIM_STATUS_MAX SIM_OBS_STATUS_MAX   /* HTTP statuses 100..599; others: broken */
#define SIM_WINDOWS_MAX SIM_OBS_WINDOWS_MAX /* fault windows broken down; more: beyond */

typedef enum sim_answer_word {
    SIM_ANSWER_TIMEOUT = 0, /* the client gave up waiting (its timeout, a deadline) */
    SIM_ANSWER_RESET,       /* connection refused, reset or closed early */
    SIM_ANSWER_BROKEN,      /* a broken answer or stream, a status outside 100..599 */
    SIM_ANSWER_WORDS        /* SIM_OBS_WORDS */
} sim_answer_word;

typedef struct sim_window_summary {
    uint8_t provider, fault; /* the provider and its fault's index */
    fb_time_us start_us, end_us;
    uint64_t requests, attempts, success; /* requests that arrived inside, their calls */
    fb_time_us latency_p50_us, latency_p90_us, latency_p99_us; /* of those that ended */
} sim_window_summary;

typedef struct sim_breakdown {
    uint64_t per_request[SIM_ATTEMPT_BUCKETS]; /* ended requests by their provider calls */
    uint64_t per_request_beyond;               /* ended requests with more calls than that */
    uint64_t status[SIM_STATUS_MAX];           /* calls answered with this HTTP status */
    uint64_t words[SIM_ANSWER_WORDS];          /* calls answered otherwise */
    sim_window_summary windows[SIM_WINDOWS_MAX];
    uint32_t window_count;
    uint32_t windows_beyond; /* provider fault windows past the cap, not broken down */
} sim_breakdown;

const char *sim_answer_word_name(sim_answer_word w);

typedef struct sim_summary {
    char variant[SIM_NAME_MAX];
    bool complete; /* false: a cap stopped the run early */
    char stop_reason[512];
    fb_time_us end_us;         /* simulated time when the last request ended */
    uint64_t events;           /* scheduled (report.json: simulated_events) */
    uint64_t events_handled;   /* popped and handled: what docs/engine.md calls an event */
    uint64_t events_stale;     /* popped and skipped: the entity they were for had moved on */
    uint64_t events_ahead;     /* handled ahead of their turn, never queued (docs/engine.md) */
    uint64_t events_cancelled; /* dropped unpopped: deadlines of requests that had ended */
    uint64_t queue_peak;       /* events pending at once, at most */
    uint64_t requests;         /* arrived */
    uint64_t requests_calling; /* arrived, of classes that call a provider */
    uint64_t ended[SIM_END_COUNT];
    uint64_t success_primary, success_fallback;
    uint64_t errors;         /* everything but SUCCESS and DEGRADED */
    uint64_t slo_missed;     /* succeeded (or degraded) later than the SLO */
    uint64_t bad;            /* errors + slo_missed */
    uint64_t bad_collateral; /* bad requests of classes that call no disturbed provider */
    /* traffic classes that call a disturbed provider (a faulted one, or one that a class
     * with a spike calls), and those that do not: collateral means something with both */
    uint32_t classes_exposed, classes_unexposed;
    uint64_t attempts, retries, fallbacks;
    uint64_t requests_in_fault, attempts_in_fault; /* calling requests / attempts in windows */
    uint64_t budget_refusals;
    uint64_t stream_failures, tokens_duplicated, stream_resumes;
    uint64_t hedges, hedges_won; /* hedged attempts sent; hedge groups a hedged attempt won */
    double hedge_cost_usd;       /* billed for hedged attempts */
    uint64_t in_flight_peak, pod_queue_peak;
    double cost_usd, cost_wasted_usd, fallback_extra_cost_usd;
    double baseline_error_rate;
    fb_time_us baseline_p99_us;
    fb_hist latency;    /* every request that ended, as the user waited */
    fb_hist latency_ok; /* successes only */
    sim_provider_summary providers[SIM_PROVIDERS_MAX];
    sim_fault_summary faults[SIM_PROVIDERS_MAX * SIM_FAULTS_MAX +
                             SIM_CLASSES_MAX * SIM_SCHEDULE_MAX + SIM_SCHEDULE_MAX];
    uint32_t fault_count;
    uint64_t events_dropped; /* events not delivered because the log cap was reached */
    sim_layer_summary layers[SIM_LAYERS_MAX];
    uint32_t layer_count;
    sim_fleet_summary fleet;
    sim_gateway_summary gateway;
    sim_class_summary classes[SIM_CLASSES_MAX]; /* by the scenario's class index */
    sim_breakdown breakdown;
} sim_summary;

/* One time-series row (one tick of simulated time). */
typedef struct sim_row {
    fb_time_us t_us; /* start of the tick */
    uint64_t arrivals, ended, success, fallback_success, degraded, errors, slo_missed;
    uint64_t in_flight, pod_queue, busy_workers;
    double latency_p50_ms, latency_p99_ms; /* of requests that ended in the tick */
    struct {
        uint64_t attempts, errors, rate_limited, timeouts;
        uint32_t in_service, queue;
        double open_share;      /* pods whose breaker is open (or forced open) */
        double half_open_share; /* pods whose breaker is half-open */
        double limit;           /* the concurrency limit, mean over pods; NaN: none */
        uint32_t conn_wait;     /* attempts waiting for a connection */
    } p[SIM_PROVIDERS_MAX];
    bool fault_active; /* some scripted fault is active during the tick */
    /* the fleet (columns only when the scenario uses them) */
    uint32_t pods_ready, pods_starting; /* at the end of the tick (autoscaling) */
    uint64_t resubmissions;             /* arrivals in the tick that were re-submissions */
    bool store_down;                    /* the breaker store was unreachable during the tick */
} sim_row;

typedef enum sim_event_type {
    SIM_EV_BREAKER = 0,
    SIM_EV_FAULT_START,
    SIM_EV_FAULT_END,
    SIM_EV_SCALE,      /* the autoscaler changed the pods it wants: pods_from -> pods_to */
    SIM_EV_STORE_DOWN, /* the breaker store became unreachable (outage `fault`) */
    SIM_EV_STORE_UP
} sim_event_type;

typedef struct sim_log_event {
    sim_event_type type;
    fb_time_us t_us;
    int pod; /* -1: the shared store */
    uint8_t provider;
    uint8_t fault;                           /* fault events: index in the provider's faults */
    fb_breaker_event breaker;                /* SIM_EV_BREAKER */
    uint32_t pods_from, pods_to, pods_ready; /* SIM_EV_SCALE */
    double metric;                           /* SIM_EV_SCALE: the window's average */
} sim_log_event;

struct sim; /* a run in progress (opaque) */

/*
 * A port replaces the provider model with real providers (the live driver,
 * live/live.h). Attempts leave through send() and their answers come back
 * through sim_port_deliver(); the run's clock follows the port: the
 * simulator asks it to wait until the next event (or tick) is due, lets it
 * deliver the answers that are ready, then runs every event due by then.
 * Events and answers are merged in time order: an event runs at its own
 * time, an answer at the time it arrived, and every row covers its tick.
 * The client side (traffic, pods, queues, deadlines, attempt timeouts,
 * policies, breakers, metrics) is the simulator's own.
 */
typedef struct sim_port_attempt {
    uint64_t id; /* names the attempt in sim_port_deliver() and cancel() */
    uint8_t provider;
    uint8_t cls;                    /* the request's traffic class */
    uint32_t tokens_in, tokens_out; /* prompt tokens; completion tokens asked for */
    bool stream;
    uint64_t request;         /* names its request, as in sim_port_request */
    uint32_t resend;          /* attempts of the request before this one (retries, fallbacks) */
    fb_time_us arrival_us;    /* when its request arrived */
    fb_time_us timeout_at_us; /* when the client gives up on it; FB_TIME_MAX = never */
    fb_time_us sent_us;       /* when the policies sent it (the run's clock, not the wall's) */
} sim_port_attempt;

/* A request that called providers has ended (for the port's traces). */
typedef struct sim_port_request {
    uint64_t id; /* as sim_port_attempt.request */
    uint8_t cls;
    fb_time_us arrival_us, end_us;
    sim_end end;
    bool via_fallback;
    uint32_t attempts;
} sim_port_request;

typedef struct sim_port_answer {
    fb_time_us at_us; /* simulated time it arrived; collect() hands answers over in this order */
    fb_reply reply;
    fb_time_us hint_us;  /* Retry-After family; FB_TIME_NONE = none */
    uint32_t tokens_out; /* output tokens generated (before a failure, for a broken stream) */
    bool served;         /* the provider worked on it: billed (tokens_in + tokens_out) */
} sim_port_answer;

typedef struct sim_port {
    /* Start an attempt; an error stops the run with msg as the reason. */
    int (*send)(void *ctx, const sim_port_attempt *a, char *msg, size_t msglen);
    /* The client gave up on attempt `id` (its timeout, or the request ended). */
    void (*cancel)(void *ctx, uint64_t id);
    /*
     * Wait until simulated time `until_us` (FB_TIME_MAX: until an answer is
     * ready), or less when answers are ready; set *now_us to the current
     * simulated time. An error stops the run (e.g. interrupted).
     */
    int (*wait)(void *ctx, fb_time_us until_us, fb_time_us *now_us, char *msg, size_t msglen);
    /* Hand the ready answers over with sim_port_deliver(). */
    void (*collect)(void *ctx, struct sim *s);
    void *ctx;
    /* May be NULL: every request of a class that calls a provider, as it ends. */
    void (*request_end)(void *ctx, const sim_port_request *r);
} sim_port;

/* The answer to attempt `id` (from collect()); stale ids are ignored. */
void sim_port_deliver(struct sim *s, uint64_t id, const sim_port_answer *answer);
/* When an answer at `at_us` reaches the policies: then, or the run's clock if it is past. */
fb_time_us sim_port_seen_at(const struct sim *s, fb_time_us at_us);

typedef void (*sim_row_fn)(void *ctx, const sim_row *row);
typedef void (*sim_event_fn)(void *ctx, const sim_log_event *ev);
/* Called about every simulated minute; returns nothing, must not fail. */
typedef void (*sim_progress_fn)(void *ctx, fb_time_us now_us, fb_time_us end_us);

typedef struct sim_run_opts {
    sim_row_fn on_row;
    sim_event_fn on_event;
    sim_progress_fn on_progress;
    void *ctx;
    uint64_t events_log_max; /* 0 = 1,000,000 */
    bool check_invariants;   /* verify model invariants while running (tests) */
    /* when not NULL and nonzero (a signal handler sets it), the run stops before its next event:
     * FB_EINTR, *out holds what was simulated (complete == false) */
    volatile sig_atomic_t *stop;
} sim_run_opts;

/*
 * Run variant `variant` of `sc`. On success returns FB_OK and fills *out
 * (a large struct: allocate it). When a cap stops the run, returns FB_ECAP
 * with err filled and *out holding everything measured up to then
 * (out->complete == false). Invariant violations return FB_ESTATE.
 */
int sim_run(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts, sim_summary *out,
            sim_error *err);
/*
 * sim_run into an *out that is all zero bytes already (calloc): not written again, so the
 * pages of its 700 KB that the run does not use are never touched (a short run's page faults).
 */
int sim_run_zeroed(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
                   sim_summary *out, sim_error *err);
/*
 * The same with real providers behind `port` instead of the provider model
 * (the scenario's providers still name them and its fault windows still mark
 * the time series). Stopped by the port: FB_OK is never returned then, and
 * *out holds what was measured (complete == false).
 */
int sim_run_port(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
                 const sim_port *port, sim_summary *out, sim_error *err);

#endif /* SIM_SIM_H */
