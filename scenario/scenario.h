/*
 * scenario.h - a scenario file, parsed and validated.
 *
 * A scenario (JSON, documented key by key in docs/scenario-format.md) names
 * the traffic, the pods, the providers with their capacity and fault
 * timeline, and one or more policy variants compared on the same seed. The
 * loader rejects unknown keys (with a did-you-mean suggestion), wrong types
 * and impossible values, reporting the file, the JSON path and the reason in
 * a caller-provided sim_error. Everything it produces has fixed caps.
 */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/breaker.h"
#include "core/classify.h"
#include "core/conclimit.h"
#include "core/fallback.h"
#include "core/fb.h"
#include "core/hedge.h"
#include "core/ratelimit.h"
#include "core/retry.h"
#include "scenario/fault.h"

#define SIM_NAME_MAX 64
#define SIM_CLASSES_MAX 16
#define SIM_PROVIDERS_MAX FB_FALLBACK_PROVIDERS_MAX
#define SIM_FAULTS_MAX 32
#define SIM_VARIANTS_MAX 16
#define SIM_SCHEDULE_MAX 32 /* ramp points, spikes, bursts per class */
#define SIM_EXPECT_MAX 64
#define SIM_EXPECT_LEN 256
#define SIM_PODS_MAX 10000
#define SIM_NOTES_MAX 64
#define SIM_NOTE_LEN 640

typedef struct sim_error {
    char file[256];
    char path[256]; /* JSON path, e.g. providers[0].faults[1].at */
    char msg[512];
} sim_error;

typedef enum sim_arrivals {
    SIM_ARR_POISSON = 0,
    SIM_ARR_CONSTANT,
    SIM_ARR_CLOSED,
    SIM_ARR_REPLAY /* recorded arrival times, as given (fusebox import) */
} sim_arrivals;

#define SIM_REPLAY_MAX 1000000   /* replayed arrivals per class */
#define SIM_TURNS_MAX 1000000    /* requests in one replayed session */
#define SIM_RETRY_AT_MAX 255     /* recorded retries of one replayed request */
#define SIM_RECORDED_MS_MAX 1e12 /* a recorded retry's or turn's time, ms (about 31 years) */

typedef enum sim_target {
    SIM_TARGET_LLM = 0, /* the variant's fallback chain */
    SIM_TARGET_NONE,    /* local work only */
    SIM_TARGET_PROVIDER /* one named dependency (a tool API), no fallback */
} sim_target;

typedef struct sim_rate_point {
    fb_time_us at_us;
    double rate; /* per second */
} sim_rate_point;

typedef struct sim_spike {
    fb_time_us at_us, for_us;
    double rate; /* per second, replaces the base rate during the spike */
} sim_spike;

typedef struct sim_burst {
    fb_time_us at_us, over_us;
    uint32_t count;
} sim_burst;

/* traffic[].source: one arrival process dealt round-robin to pods, or one per pod. */
typedef enum sim_source { SIM_SOURCE_SHARED = 0, SIM_SOURCE_PER_POD } sim_source;

/* traffic[].resubmit: a user submits a failed request again (docs/models.md, "Users"). */
typedef struct sim_resubmit {
    double probability; /* per failed submission; 0 = off */
    sim_dist think_us;  /* from the failure to the re-submission */
    uint32_t max;       /* re-submissions per user request */
} sim_resubmit;

typedef struct sim_class {
    char name[SIM_NAME_MAX];
    sim_arrivals arrivals;
    double rate; /* per second (open loop) */
    uint32_t users;
    sim_dist think_us;
    fb_time_us *replay_us; /* SIM_ARR_REPLAY: the arrival times, in order (malloc) */
    uint32_t replay_count;
    /* SIM_ARR_REPLAY in sessions: replay_us[i] starts a session of turns[i] requests, each
       sent think_us after the one before ended (malloc; NULL: one request each) */
    uint32_t *turns;
    uint32_t turns_count;
    /* sessions with their recorded think times (think_ms): the gaps after each session's
       requests but its last, session by session, used in order in place of think_us's draws
       (malloc; NULL: drawn) */
    fb_time_us *think_rec_us;
    uint32_t think_rec_count;
    /* with think_rec_us (turn_at_ms): when each of those requests started in the log, from the
       start, in the same order; read by a variant whose "waits" is "recorded" (malloc; NULL:
       none) */
    fb_time_us *turn_at_us;
    uint32_t turn_at_count;
    /* replayed requests' recorded retries (retry_at_ms): when request i's 2nd, 3rd, ... attempts
       started, from its arrival, are retry_at_us[retry_at_first[i] .. retry_at_first[i + 1]),
       the requests in at_ms's order (sessions: session by session, each one's in order); read
       by a variant whose "waits" is "recorded" (malloc; NULL: none) */
    fb_time_us *retry_at_us;
    uint32_t *retry_at_first; /* retry_at_count + 1 */
    uint32_t retry_at_count;
    sim_rate_point ramp[SIM_SCHEDULE_MAX];
    uint32_t ramp_count;
    sim_spike spikes[SIM_SCHEDULE_MAX];
    uint32_t spike_count;
    sim_burst bursts[SIM_SCHEDULE_MAX];
    uint32_t burst_count;
    double diurnal_amplitude; /* 0 = off */
    fb_time_us diurnal_period_us, diurnal_peak_us;
    sim_dist prompt_tokens, completion_tokens;
    sim_dist service_us; /* local work on the worker */
    sim_target target;
    uint8_t provider; /* SIM_TARGET_PROVIDER */
    bool stream;
    uint8_t order[SIM_PROVIDERS_MAX]; /* per-class chain order override */
    uint32_t order_len;
    sim_source source;
    bool serial; /* one call in flight: the next at max(its scheduled time, the last one's end) */
    sim_resubmit resubmit;
} sim_class;

typedef enum sim_provider_kind { SIM_PROVIDER_LLM = 0, SIM_PROVIDER_TOOL } sim_provider_kind;

/* How a provider picks the next queued attempt when a slot frees (docs/models.md). */
typedef enum sim_discipline {
    SIM_QUEUE_FIFO = 0,     /* oldest first */
    SIM_QUEUE_LIFO,         /* newest first */
    SIM_QUEUE_DROP_EXPIRED, /* oldest first, skipping attempts whose client gave up */
    SIM_QUEUE_CODEL         /* oldest first, dropping while the sojourn stays above target */
} sim_discipline;

typedef struct sim_provider {
    char name[SIM_NAME_MAX];
    sim_provider_kind kind;
    uint32_t context_window;   /* 0 = unlimited */
    sim_dist ttft_us;          /* time to first token (whole latency of a tool) */
    fb_time_us per_token_us;   /* per output token */
    sim_dist error_latency_us; /* how long an error answer takes */
    uint32_t concurrency;      /* 0 = unlimited */
    uint32_t queue;            /* attempts waiting when all slots are busy */
    int64_t rpm, tpm;          /* 0 = unlimited */
    int overload_status;       /* queue full: 503 (529 for Anthropic-style) */
    bool limit_retry_after;    /* capacity 429s carry Retry-After from the bucket */
    bool keeps_working;        /* abandoned attempts keep their slot until done */
    /* latency.load: the base latency x (1 + in_service x others in service + queued x
     * attempts waiting), both counted when the attempt starts */
    double load_in_service, load_queued;
    /* capacity.efficiency: while more than queue_above attempts wait, share x the slots serve */
    uint32_t efficiency_queue_above;
    double efficiency_share; /* 1 = no loss */
    sim_discipline discipline;
    fb_time_us codel_target_us, codel_interval_us; /* SIM_QUEUE_CODEL */
    double price_in_per_mtok, price_out_per_mtok, price_per_call;
    sim_dist net_latency_us; /* network.latency: each way between a pod and it; 0 = none */
    bool has_network;
    sim_fault faults[SIM_FAULTS_MAX];
    uint32_t fault_count;
} sim_provider;

typedef enum sim_breaker_scope {
    SIM_SCOPE_POD = 0,
    SIM_SCOPE_SHARED,
    SIM_SCOPE_PUBLISHED /* each pod its own breakers; an opening reaches the other pods at
                           their next read of the store, every sync_delay_us (LiteLLM's
                           cooldowns in Redis); set by presets */
} sim_breaker_scope;

/* What a shared breaker's pods do while its store is unreachable (breaker.store_outage). */
typedef enum sim_store_outage {
    SIM_STORE_FAIL_OPEN = 0, /* allow every call, results lost (pybreaker's fallback "closed") */
    SIM_STORE_FAIL_CLOSED,   /* reject every call (pybreaker's fallback "open") */
    SIM_STORE_LOCAL          /* the pod's last view, then a local breaker of its own */
} sim_store_outage;

typedef struct sim_provider_policy {
    bool has_breaker;
    fb_breaker_config breaker;
    fb_time_us timeout_us; /* attempt timeout override; 0 = the retry policy's */
    bool has_ratelimit;
    fb_ratelimit_config ratelimit; /* per pod */
    bool has_conclimit;
    fb_conclimit_config conclimit; /* per pod: concurrency_limit */
} sim_provider_policy;

/* A layer's HTTP connections per pod (docs/models.md, "Connections"): "connections". */
typedef struct sim_pool {
    uint32_t max;          /* open connections, all providers; 0 = no limit */
    uint32_t per_provider; /* open connections to one provider; 0 = no limit */
    uint32_t keepalive;    /* idle connections kept open; UINT32_MAX = every one */
    sim_dist setup_us;     /* opening a connection */
} sim_pool;

/*
 * One layer of the stack a request passes through: an application's retry
 * loop, a gateway, an SDK client. Each has its own retry, budget,
 * classification, breakers, rate limits and timeouts. An attempt of a layer
 * is a whole request to the layer inside it; the innermost layer's attempts
 * are HTTP calls to providers. docs/scenario-format.md, "Layers".
 */
typedef enum sim_role {
    SIM_ROLE_ROUTER = 0, /* chooses the provider: the fallback chain */
    SIM_ROLE_OUTER,      /* outside the router: one target, the layer inside */
    SIM_ROLE_INNER       /* inside the router: the provider it chose, passed through */
} sim_role;

#define SIM_RETRY_ON_MAX 16
/* In retry_on_outcomes and fallback_on_outcomes: a connection failure (refused, reset, other
   transport errors; not timeouts or refusals by a layer inside). Presets only. */
#define SIM_ON_CONNECTION (1u << 31)
#define SIM_STATUS_RULES_MAX 48

/*
 * A library's own reading of a reply, over fusebox's classification: the
 * first rule that matches a reply (every field it sets) replaces what it
 * names. Presets write them (LiteLLM's exception classes, Portkey's and
 * Envoy's status lists); scenarios have no key for them.
 */
typedef struct sim_status_rule {
    int status;        /* 0: any */
    int8_t outcome;    /* -1: any, else an fb_outcome */
    int8_t transport;  /* -1: any, else an fb_transport */
    uint8_t providers; /* bit set of provider indices; 0: every provider (a rule for
                          an empty set is not added) */
    int8_t retry;      /* -1 keep, 0 no, 1 yes */
    int8_t fallback;   /* -1 keep, 0 no, 1 yes */
    int8_t effect;     /* -1 keep, else an fb_effect */
    uint8_t trip;      /* fb_trip */
    uint32_t failure_limit;
    uint32_t attempts; /* fb_class.attempts */
} sim_status_rule;

struct sim_preset;

typedef struct sim_layer {
    char name[SIM_NAME_MAX];
    sim_role role;
    fb_retry_config retry;
    fb_budget_config budget; /* kind NONE = no budget; one budget per pod */
    fb_classify_config classify;
    sim_breaker_scope breaker_scope;
    fb_time_us sync_delay_us;
    sim_store_outage store_outage;
    /* by provider; an outer layer's one target is entry 0 */
    sim_provider_policy per_provider[SIM_PROVIDERS_MAX];
    uint8_t order[SIM_PROVIDERS_MAX]; /* the router's chain */
    uint32_t order_len;
    bool routes; /* declared "fallback" */
    /* retry.retry_on: these statuses and outcomes retry, nothing else does */
    bool has_retry_on;
    uint32_t retry_on_outcomes; /* 1 << fb_outcome */
    int retry_on_statuses[SIM_RETRY_ON_MAX];
    uint32_t retry_on_count;
    int retry_on_status_from; /* presets: every status >= this retries too; 0 = none */
    /* presets: statuses that never retry, whatever the lists above say (LangChain JS) */
    int no_retry_statuses[SIM_RETRY_ON_MAX];
    uint32_t no_retry_count;
    /* presets: only these outcomes and statuses may fall back (LangChain's exceptions_to_handle);
       fallback_on_status_from > 0 adds every status >= it */
    bool has_fallback_on;
    uint32_t fallback_on_outcomes; /* 1 << fb_outcome */
    int fallback_on_statuses[SIM_RETRY_ON_MAX];
    uint32_t fallback_on_count;
    int fallback_on_status_from;
    bool raise_first; /* a routing layer that gives up raises its first failure, not its last */
    bool context_check;
    bool degraded;
    sim_dist degraded_latency_us;
    fb_stream_policy stream;
    /* Set by presets (sim/preset_*.c); zero: fusebox's own behaviour. */
    sim_status_rule rules[SIM_STATUS_RULES_MAX];
    uint32_t rule_count;
    fb_pick pick;                       /* groups (core/fallback.h) */
    uint8_t group[SIM_PROVIDERS_MAX];   /* by provider */
    uint32_t weight[SIM_PROVIDERS_MAX]; /* by provider */
    fb_switch healthy_gate, zero_wait_if_healthy, judge_first;
    fb_fallback_chain on_context_length, on_policy;
    bool eject_limit;         /* the layer's breakers of a pod form an fb_eject_group */
    double eject_max_percent; /* ... of which under this % may be open */
    bool has_hedge;           /* hedging (innermost layer) */
    fb_hedge_config hedge;
    bool has_pool; /* connections (innermost layer) */
    sim_pool pool;
    /* the library preset the layer was given as (scenario/preset.h), for the reports' words;
       NULL: a layer of fusebox's own keys */
    const struct sim_preset *preset;
    bool gateway; /* runs on the variant's gateway replicas (its "gateway" tier), not the pods */
} sim_layer;

#define SIM_LAYERS_MAX 8 /* layers of one variant, all its stacks together */
#define SIM_DEPTH_MAX 4  /* layers one request passes through */

/* The layers a request passes through, outermost first (indices into the variant's). */
typedef struct sim_stack {
    uint8_t layer[SIM_DEPTH_MAX];
    uint32_t depth;   /* 0: none (a class stack that uses the variant's) */
    uint32_t router;  /* the position of the routing layer */
    uint32_t gateway; /* the position of the gateway tier's first layer; 0: no tier */
} sim_stack;

/* Which way and how fast an autoscaler may move: HPA's behavior.scaleUp / scaleDown. */
typedef enum sim_scale_select {
    SIM_SELECT_MAX = 0,
    SIM_SELECT_MIN,
    SIM_SELECT_DISABLED
} sim_scale_select;

typedef struct sim_scale_rules {
    fb_time_us
        stabilization_us; /* recommendations considered (scale up: the lowest; down: highest) */
    uint32_t pods;        /* Pods policy: at most this many per period; 0 = none */
    uint32_t percent;     /* Percent policy: at most this share per period; 0 = none */
    fb_time_us period_us; /* both policies' periodSeconds */
    sim_scale_select select;
} sim_scale_rules;

typedef enum sim_scale_metric { SIM_SCALE_IN_FLIGHT = 0, SIM_SCALE_UTILIZATION } sim_scale_metric;

/* A variant's pod autoscaler, after Kubernetes' HPA (docs/models.md, "Autoscaling"). */
typedef struct sim_autoscale {
    bool on;
    sim_scale_metric metric;  /* requests in a pod (running + queued), or busy workers / workers */
    double target;            /* the metric's desired average over ready pods */
    uint32_t min, max;        /* pods */
    fb_time_us period_us;     /* how often it decides (the sync period) */
    fb_time_us window_us;     /* the metric is averaged over this, sampled every second */
    double tolerance;         /* no change while |ratio - 1| <= this */
    fb_time_us delay_us;      /* a decision to the pod's start (scheduling, image pull) */
    fb_time_us cold_start_us; /* its start to its first request (readiness) */
    sim_scale_rules up, down;
} sim_autoscale;

#define SIM_GATEWAY_MAX 64 /* replicas of a gateway tier */

/* How a call from a pod picks its gateway replica. */
typedef enum sim_balance {
    SIM_BALANCE_ROUND_ROBIN = 0,
    SIM_BALANCE_RANDOM,
    SIM_BALANCE_LEAST_BUSY
} sim_balance;

/*
 * A variant's gateway tier ("gateway"; docs/scenario-format.md, "Gateway tier"): a fleet
 * of replicas between the pods and the providers, each with its workers, its queue and its
 * own state of the gateway's layers (the innermost of every stack).
 */
typedef struct sim_gateway {
    uint32_t replicas; /* 0: no tier */
    uint32_t workers;  /* calls a replica serves at once */
    uint32_t queue;    /* calls waiting for a worker per replica; beyond: queue_full_status */
    sim_balance balance;
    uint32_t queue_full_status; /* the answer to a call that finds the queue full */
} sim_gateway;

/* A variant: its layers and the stacks that use them. */
typedef struct sim_policy {
    char name[SIM_NAME_MAX];
    bool layered; /* declared "layers" (reports then show each layer) */
    sim_layer layers[SIM_LAYERS_MAX];
    uint32_t layer_count;
    sim_stack stack;                        /* every class's, unless... */
    sim_stack class_stack[SIM_CLASSES_MAX]; /* ... the class has its own (depth > 0) */
    sim_autoscale autoscale;
    sim_gateway gateway;
    /* "waits": "recorded": a replayed request's retries and its sessions' requests start when
       the log's did (its class's retry_at_us, turn_at_us), after the retry policy's own wait
       where the log has none */
    bool recorded_waits;
} sim_policy;

/*
 * A reply from provider `provider` (an outer layer's: its target, 0) as
 * layer L reads it: the classifier `cl` built from L->classify, then the
 * preset's rules (L->rules), then its retry_on list (which decides alone),
 * its no-retry statuses and its fallback_on list.
 */
fb_class scn_layer_classify(const sim_layer *L, const fb_classifier *cl, const fb_reply *rep,
                            uint32_t provider);

/* Does scn_layer_classify read L's classifier alone (no rules, lists or no-retry statuses)? */
bool scn_layer_classifier_only(const sim_layer *L);

/* The stack requests of class `cls` pass through. */
const sim_stack *scn_policy_stack(const sim_policy *pol, uint32_t cls);
/* The routing layer of the variant's own stack (its chain). */
const sim_layer *scn_policy_router(const sim_policy *pol);
/*
 * The layer whose breaker for provider p the reports show: the outermost at
 * or inside the routing layer of the variant's stack that has one; NULL when
 * none has.
 */
const sim_layer *scn_policy_breaker(const sim_policy *pol, uint32_t provider);

typedef struct sim_pods {
    uint32_t count;
    uint32_t workers;
    uint32_t queue;
    fb_time_us request_timeout_us;
} sim_pods;

typedef struct sim_limits {
    uint64_t in_flight_max;     /* requests in the system at once */
    uint64_t events_max;        /* events in the queue at once */
    uint64_t requests_max;      /* requests generated in the whole run */
    fb_time_us duration_max_us; /* longest traffic window accepted */
} sim_limits;

typedef struct sim_spillover {
    fb_time_us hold_us;    /* back to baseline for this long */
    double error_margin;   /* error rate <= baseline + margin */
    double latency_factor; /* p99 <= baseline p99 * factor */
} sim_spillover;

/* A window in which the shared breakers' store cannot be reached (breaker_store.outages). */
typedef struct sim_store_window {
    fb_time_us at_us, for_us;
} sim_store_window;

/*
 * What the log of an imported incident measured ("observed", written by `fusebox import`;
 * docs/scenario-format.md): the figures `fusebox run` prints beside its variant's, and
 * that the import compares with the tolerances of docs/import.md ("Fidelity").
 */
#define SIM_OBS_BUCKETS 32     /* requests with 0..31 calls; more: attempts_beyond */
#define SIM_OBS_STATUS_MAX 600 /* HTTP statuses 100..599 */
#define SIM_OBS_WORDS 3        /* answers without a status: timeout, reset, broken */
#define SIM_OBS_ENDS_MAX 16    /* end causes */
#define SIM_OBS_WINDOWS_MAX 32 /* fault windows */
#define SIM_OBS_NOISE_MAX 160  /* figures with a noise band */

typedef struct sim_obs_window {
    char name[96]; /* as report.json names it: "openai fault 0 (outage)" */
    fb_time_us start_us, end_us;
    uint64_t requests, attempts;
    double success_rate;
    fb_time_us latency_p50_us, latency_p90_us, latency_p99_us;
} sim_obs_window;

/*
 * The log's own latency at ranks q - d and q + d around one of its quantiles q
 * (observed.latency_ranks; docs/import.md, "Fidelity"): a replay's q-quantile between the two
 * is within tolerance even when it is more than 10% from the log's, which it can be only
 * where the log's quantile sits on a cliff of its distribution (a 0.5-point shift of a share
 * of requests moving the quantile by half). d is the buckets' tolerance, 2 points, or two
 * binomial standard deviations of the log's rank, 2 sqrt(q (1 - q) / n), if fewer.
 */
#define SIM_OBS_SHARE_TOLERANCE 0.02 /* each attempts-per-request bucket, and a quantile's rank */

typedef struct sim_obs_rank {
    bool present;
    double from, to;         /* q - d and q + d, within [0, 1] */
    fb_time_us lo_us, hi_us; /* the log's latency at those ranks (order statistics) */
} sim_obs_rank;

/* The q-quantile of v[0..n) (sorted ascending) as a run reports it: the order statistic of
   rank ceil(q n), at least 1 (0 when n is 0). */
int64_t scn_obs_order_statistic(const int64_t *v, size_t n, double q);
/* The rank tolerance d of the q-quantile of n values (0 when n is 0). */
double scn_obs_rank_tolerance(double q, size_t n);
/* The band of the q-quantile of v[0..n) (sorted ascending; n > 0): its order statistics at
   ranks ceil((q -+ d) n), as a run reports a quantile. */
sim_obs_rank scn_obs_rank_band(const int64_t *v, size_t n, double q);

typedef struct sim_observed {
    bool present;
    char variant[SIM_NAME_MAX]; /* the variant it is the log of ("as-was") */
    uint64_t requests, attempts, retries;
    double success_rate;
    fb_time_us latency_p50_us, latency_p90_us, latency_p99_us;
    sim_obs_rank latency_rank[3]; /* around p50, p90, p99: latency_ranks */
    uint64_t per_request[SIM_OBS_BUCKETS];
    uint64_t per_request_beyond;
    uint64_t status[SIM_OBS_STATUS_MAX];
    uint64_t words[SIM_OBS_WORDS];
    char end_name[SIM_OBS_ENDS_MAX][24];
    uint64_t end_count[SIM_OBS_ENDS_MAX];
    uint32_t end_n;
    sim_obs_window windows[SIM_OBS_WINDOWS_MAX];
    uint32_t window_n;
    /* the noise of the log's figure against the replay's (the log is one draw too; its name
       in reports/breakdown.h): a half-width in counts, microseconds (latency_*) or a share
       (attempts/request N); a figure within it is not a miss even outside its tolerance */
    char noise_name[SIM_OBS_NOISE_MAX][48];
    double noise[SIM_OBS_NOISE_MAX];
    uint32_t noise_n;
} sim_observed;

typedef struct sim_scenario {
    char name[SIM_NAME_MAX];
    char file[256];
    uint64_t seed;
    fb_time_us duration_us;
    fb_time_us tick_us; /* time-series resolution */
    sim_class classes[SIM_CLASSES_MAX];
    uint32_t class_count;
    sim_provider providers[SIM_PROVIDERS_MAX];
    uint32_t provider_count;
    sim_pods pods;
    sim_policy variants[SIM_VARIANTS_MAX];
    uint32_t variant_count;
    fb_time_us slo_latency_us;
    sim_spillover spillover;
    sim_limits limits;
    sim_store_window store_outages[SIM_SCHEDULE_MAX];
    uint32_t store_outage_count;
    char expect[SIM_EXPECT_MAX][SIM_EXPECT_LEN];
    uint32_t expect_count;
    /* what the loader noticed and accepted, e.g. keys of an imported policy file that are
       not modelled: "variants.v.layers[0]: application.yml:12:7: ...: not modelled" */
    char notes[SIM_NOTES_MAX][SIM_NOTE_LEN];
    uint32_t note_count, notes_dropped;
    /* bit i: notes[i] is a warning, a likely mistake the loader accepted (opossum's
       errorThresholdPercentage: 0.5); fusebox run --strict makes it an error */
    uint64_t warning_notes;
    sim_observed observed; /* the log's figures (an imported incident); present or not */
    void *json;            /* cJSON *: the document after --set overrides, for the report echo */
} sim_scenario;

/*
 * Load a scenario file, apply `sets` ("path=value" overrides, e.g.
 * "variants.tuned.breaker.open=10s" or "providers.openai.capacity.rpm=600")
 * and validate. On error returns FB_EPARSE/FB_EINVAL/FB_EIO and fills *err.
 * `seed_override` replaces the file's seed when non-NULL.
 */
int scn_load(const char *file, const char *const *sets, size_t set_count,
             const uint64_t *seed_override, sim_scenario **out, sim_error *err);
/* The same from text; `file` names the source in errors. */
int scn_parse(const char *text, size_t len, const char *file, const char *const *sets,
              size_t set_count, const uint64_t *seed_override, sim_scenario **out, sim_error *err);
/*
 * Whether the first step of a --set path (up to its first '.' or '[') is a key of the
 * scenario's top level ("traffic", "variants", "breaker_store", ...); a --grid or --knob key
 * that is not names a layer's key, under the variant.
 */
bool scn_top_key(const char *path);

/*
 * A layer may name a library's configuration file instead of spelling out
 * its keys: {"name": "cb", "import": "resilience4j", "file": "application.yml",
 * "instance": "backendA"}. The loader reads it through this hook (the CLI
 * gives import/'s, which turns the file into a preset layer as JSON text,
 * and the keys it does not model into notes, one per line; both malloc'ed).
 * A relative file is found beside the scenario. Without a hook such a layer
 * is an error.
 */
typedef struct sim_import {
    int (*layer)(void *ctx, const char *kind, const char *file, const char *select, char **json,
                 char **notes, char *msg, size_t msglen);
    void *ctx;
} sim_import;

int scn_load_import(const char *file, const char *const *sets, size_t set_count,
                    const uint64_t *seed_override, const sim_import *imp, sim_scenario **out,
                    sim_error *err);
int scn_parse_import(const char *text, size_t len, const char *file, const char *const *sets,
                     size_t set_count, const uint64_t *seed_override, const sim_import *imp,
                     sim_scenario **out, sim_error *err);
void scn_free(sim_scenario *sc);

/* The most JSON values (cJSON nodes) a text of len bytes may hold: one per 4 bytes, plus
 * 65,536. A cJSON node takes about 64 bytes, so a reader that checks it first holds at most
 * about 16 times the text plus its strings, whatever the text (64 MB of "[0,0,...]" would
 * have been 32 M nodes, 2.7 GB). */
#define SCN_JSON_VALUES_MAX(len) ((len) / 4 + 65536)
/* An upper bound on the JSON values in text (one per '{', '[' and ',' outside strings, plus
 * one); no allocation. */
size_t scn_json_values(const char *text, size_t len);
/*
 * Check JSON text before building its tree: FB_ECAP when it holds more than
 * SCN_JSON_VALUES_MAX(len) values; FB_EPARSE for a key twice in one object, text after the
 * document, invalid UTF-8 or nesting past 1000 levels, with err->path (the JSON path) and
 * err->msg (with line and column); FB_OK otherwise, a plain syntax error included (left to
 * the parser's own message).
 */
int scn_json_check(const char *text, size_t len, sim_error *err);

/*
 * Every error of a scenario in one pass, for `validate`-like readers. The
 * first is exactly the error scn_parse gives. After an unknown key
 * the loader goes on as if the key were not there, so every unknown key is
 * listed with what follows from the file without them; any other error ends
 * the list, because what came after it would be read over a default standing
 * in for the bad value, and could be about values the file does not have.
 */
#define SIM_ERRORS_MAX 20
typedef struct sim_errors {
    uint32_t count;
    bool more; /* stopped at SIM_ERRORS_MAX with errors left */
    sim_error e[SIM_ERRORS_MAX];
} sim_errors;
/* FB_OK when the scenario loads; else the first error's code, with out->count >= 1. */
int scn_check_all(const char *text, size_t len, const char *file, const char *const *sets,
                  size_t set_count, sim_errors *out);

/*
 * Parse a fault timeline alone: a JSON array in the shape of a provider's
 * "faults" (or {"faults": [...]}), validated exactly as in a scenario, except
 * that "at" and "for" may be left out (from the start, for ever). The mock
 * provider loads its scripts with it. Errors name paths like faults[2].at.
 */
int scn_faults_parse(const char *text, size_t len, const char *file, sim_fault *out, uint32_t cap,
                     uint32_t *count, sim_error *err);

/* Format "file: path: msg" (or "file: msg") into buf. */
void scn_error_format(const sim_error *err, char *buf, size_t len);

/* Parsers shared with the CLI and the mock: durations ("250ms", "1.5s", "5m", "2h"). */
int scn_parse_duration(const char *s, fb_time_us *out);
/*
 * One distribution from JSON text, as a scenario writes it ("20ms", {"lognormal": {"median":
 * "600ms", "p99": "3s"}}, ...); `what` names the source in errors (the mock's --ttft).
 */
int scn_dist_parse(const char *text, size_t len, const char *what, bool duration, sim_dist *out,
                   sim_error *err);
/* Rates: "40/s", "2400/m", "2400/min", "5/h", or a bare number per second. */
int scn_parse_rate(const char *s, double *per_s);
/* The name in names (NULL-terminated) nearest to word, when near enough to suggest; NULL
 * otherwise. The loader's did-you-mean, for other readers of JSON. */
const char *scn_suggest(const char *word, const char *const *names);

/* What a scenario uses that its outputs then show (metrics, columns): off unless asked for. */
typedef enum sim_feature {
    SIM_FEATURE_ALWAYS = 0,
    SIM_FEATURE_CONCLIMIT, /* a layer of some variant has a concurrency_limit */
    SIM_FEATURE_HEDGING,   /* ... hedging */
    SIM_FEATURE_POOL,      /* ... connections */
    SIM_FEATURE_NETWORK,   /* a provider has network latency */
    /* the fleet's dynamics (docs/models.md) */
    SIM_FEATURE_AUTOSCALE,    /* some variant autoscales its pods */
    SIM_FEATURE_RESUBMIT,     /* some class's users re-submit failures */
    SIM_FEATURE_SERIAL,       /* some class is a serial client */
    SIM_FEATURE_PER_POD,      /* some class has per-pod sources */
    SIM_FEATURE_STORE_OUTAGE, /* the breaker store goes down (breaker_store.outages) */
    SIM_FEATURE_GATEWAY       /* some variant has a gateway tier ("gateway") */
} sim_feature;

bool scn_uses(const sim_scenario *sc, sim_feature f);

/* Index of a provider by name, or -1. */
int scn_provider(const sim_scenario *sc, const char *name);
/* Index of a variant by name, or -1. */
int scn_variant(const sim_scenario *sc, const char *name);

#endif /* SIM_SCENARIO_H */
