/*
 * incident.h - a log of a bad hour, fitted into a scenario that replays it.
 *
 * imp_incident_build() takes a log (log.h) and fits, over a slice of its time:
 *   - arrivals per class: the recorded times (a `replay` source), or a rate curve;
 *   - per provider: a fault timeline from what the attempts saw (error shares by status,
 *     timeouts as hangs, resets; segments of windows merged while they do not differ,
 *     edges placed between attempts), Retry-After where recorded, latency (time to first
 *     token and per output token, slow periods as `slow` faults), error latency, context
 *     window and prices where the log has them;
 *   - token distributions per class;
 *   - the policy as it was, with its evidence (attempts, gaps, fallback order, statuses
 *     retried, timeouts, a breaker), as the variant `as-was`, and its copy `yours`;
 *   - the fidelity checks: what the logs measured (success rate, amplification, attempts
 *     per provider, p50 and p99 latency) with tolerances, as `expect` lines.
 * imp_incident_json() writes the scenario. Nothing here prints or reads a clock;
 * docs/import.md explains every step.
 */
#ifndef IMP_INCIDENT_H
#define IMP_INCIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/retry.h"
#include "import/log.h"
#include "import/stats.h"
#include "scenario/fault.h"
#include "scenario/scenario.h"
#include "util/buf.h"

#define IMP_KINDS_MAX 8          /* distinct error kinds per provider */
#define IMP_SLOW_MAX 8           /* slow periods per provider */
#define IMP_FACTOR_POINTS 16     /* a slow factor's values (the format's empirical points) */
#define IMP_SLOW_FACTOR_MAX 1000 /* a slow fault's factor: the scenario format's limit */
#define IMP_CHECKS_MAX 40
#define IMP_RAMP_MAX SIM_SCHEDULE_MAX
#define IMP_TEXT_MAX 60000 /* bytes of description and evidence */
#define IMP_DURATION_MAX ((fb_time_us)7 * 24 * 3600 * 1000000) /* a scenario's limits.duration */

typedef struct imp_build_opts {
    fb_time_us start_us;    /* from the first request; 0 */
    fb_time_us duration_us; /* 0: to the last request */
    fb_time_us window_us;   /* fitting window; 0: chosen per provider */
    bool rate;              /* arrivals as a rate curve instead of replayed times */
    uint64_t seed;          /* 0: 1 */
    const char *name;       /* scenario name; NULL: "imported" */
} imp_build_opts;

/* One error kind of a provider: an outcome (IMP_STATUS with its status, or another). */
typedef struct imp_errkind {
    uint8_t outcome;
    int16_t status;
    uint32_t count;
} imp_errkind;

/* One fault to write. */
typedef struct imp_fault {
    sim_fault_kind kind;
    fb_time_us at_us, for_us;
    double fraction;
    int status;
    fb_time_us retry_after_us;   /* FB_TIME_NONE: none */
    double factor;               /* SLOW */
    double factor_lo, factor_hi; /* SLOW over every answer: the factor's 95% interval */
    /* SLOW over a share (a burst, hidden retries): factor_n > 0 when their spread makes the
       factor a distribution, factor_v[i] with weight factor_w[i] (mean: factor) */
    uint32_t factor_n;
    double factor_v[IMP_FACTOR_POINTS], factor_w[IMP_FACTOR_POINTS];
    /* SLOW over a share (hidden retries, a burst's stall): the time they took, added
       (delay_us > 0; factor 1), a number
       (delay_n 0) or delay_v[i] us with weight delay_w[i] (mean: delay_us) */
    double delay_us;
    uint32_t delay_n;
    double delay_v[IMP_FACTOR_POINTS], delay_w[IMP_FACTOR_POINTS];
    uint32_t hits, attempts; /* the evidence: attempts it applied to, of those in its span */
    /* first attempts and retries apart (split: a retry_fraction, each class's count as the
       log had it): `fraction` is then the first attempts' share; the evidence, each class's
       hits of what the kinds before it left, and the G statistic of "the two shares are one"
       with its critical value (p = 0.001) */
    bool split;
    double retry_fraction, split_g, split_critical;
    uint32_t first_hits, first_left, retry_hits, retry_left;
    /* split: the retries by number, retry_n > 1 where each of the first retry_n - 1 and the
       rest pooled had SPLIT_MIN attempts left (written as retry_fraction's list): retry_by[k]
       the share of a request's (k + 1)-th retry, the last one of every later retry, with its
       evidence; retry_n 1: retry_fraction alone */
    uint32_t retry_n;
    double retry_by[SIM_FAULT_RETRY_SHARES];
    uint32_t retry_by_hits[SIM_FAULT_RETRY_SHARES], retry_by_left[SIM_FAULT_RETRY_SHARES];
    /* OUTAGE, RATE_LIMIT: how long the provider's answers with its status took (known only
       where its faults answer more than one status: else latency.error is the same) */
    imp_dist latency;
    /* the log's own hits, attempt by attempt in time order, for each class the replay counts
       apart (rec_n classes: [0] first attempts, or every attempt when not split; then each
       retry share's): rec_len[c] bytes '0' or '1' from rec_at in the incident's `recorded`
       (written as the fault's "recorded"; rec_n 0: none) */
    uint32_t rec_n, rec_len[1 + SIM_FAULT_RETRY_SHARES];
    size_t rec_at;
} imp_fault;

typedef struct imp_pfit {
    uint32_t attempts, errors;
    fb_time_us window_us;
    imp_errkind kinds[IMP_KINDS_MAX];
    uint32_t nkinds, folded; /* attempts of rarer kinds counted in the closest kind */
    /* the longest time one of its attempts took to be answered (an answer, an error status, a
       reset, a broken answer); the cancelled attempts read as hangs (counted as timeouts:
       imp__fit_hang) and the rest (left out of the fault fit) */
    fb_time_us longest_answer_us;
    uint32_t cancelled_hangs, cancelled_left_out;
    bool oom;                         /* a fit of this provider could not allocate (fit_malloc) */
    imp_fault faults[SIM_FAULTS_MAX]; /* answering faults (outage, rate_limit, hang, reset) */
    uint32_t nfaults;
    imp_fault slow[IMP_SLOW_MAX]; /* slow periods */
    uint32_t nslow, slow_capped;  /* slow_capped: factors cut to IMP_SLOW_FACTOR_MAX */
    imp_dist ttft, error;         /* microseconds */
    fb_time_us per_token_us;
    bool ttft_measured; /* from recorded first-token times, not a regression */
    uint32_t successes;
} imp_pfit;

typedef struct imp_cfit {
    uint32_t requests, ok;
    fb_time_us *at_us;                 /* arrivals from the origin (replay) */
    sim_rate_point ramp[IMP_RAMP_MAX]; /* rate curve (opts.rate) */
    uint32_t nramp;
    imp_dist prompt, completion; /* tokens */
    bool stream;
    /* sessions (classes.c): the requests that name one, the sessions with two or more, the
       gaps from a request's end to its session's next start (overlaps: those below 0); when
       written (turns != NULL), at_us holds the nsess sessions' starts and turns[k] their
       requests, a request without a session its own */
    uint32_t sess_requests, sess_multi, sess_gaps, sess_overlaps;
    uint32_t *turns, nsess;
    imp_dist think; /* microseconds */
    /* with turns: the recorded think times, session by session in at_us's order (below 0:
       0), the as-was replay's own (arrivals.replay.think_ms) */
    fb_time_us *think_rec;
    uint32_t nthink_rec;
    /* with think_rec: when each request after a think time started, from the origin, in the
       same order (arrivals.replay.turn_at_ms: the as-was replay sends them then) */
    fb_time_us *turn_at;
    /* the log's request (an index into log->req) of each request the replay sends, in its order
       (at_us's; sessions: session by session): whose retries' start times it replays
       (arrivals.replay.retry_at_ms) */
    uint32_t *order;
} imp_cfit;

/* The policy as it was. */
typedef struct imp_inferred {
    uint32_t attempts; /* per provider, the first included */
    fb_backoff backoff;
    fb_time_us base_us, max_us; /* max_us 0: the default cap */
    double multiplier;
    fb_jitter jitter; /* NONE, FULL or PROPORTIONAL */
    double jitter_f;
    const char *retry_after;          /* NULL (none seen), "as_is", "max", "ignore" */
    uint32_t retry_after_inferred;    /* error kinds given a Retry-After read from the gaps */
    uint32_t ra_gaps;                 /* the evidence for retry_after: gaps after a header, */
    fb_time_us ra_gap_us, ra_hint_us; /* their median and the headers' median, */
    double ra_miss[3];                /* the median miss as is, max, ignore */
    fb_time_us attempt_timeout_us;    /* 0: none seen */
    uint8_t order[SIM_PROVIDERS_MAX];
    uint32_t norder;
    bool retry_on; /* the statuses retried differ from the default table */
    int retry_statuses[SIM_RETRY_ON_MAX];
    uint32_t nretry_statuses;
    bool retry_timeout, retry_transient;
    bool breaker;
    uint32_t consecutive;
    fb_time_us open_us;
    fb_time_us request_timeout_us;
    bool request_timeout_cut; /* read from the requests given up (else twice the longest) */
    uint32_t workers;
} imp_inferred;

/* One fidelity check: the logs' value and the band the as-was simulation must fall in. */
typedef struct imp_check {
    char metric[80]; /* "success_rate", "attempts[openai]" */
    bool duration;   /* microseconds */
    double logs, lo, hi;
    char why[120]; /* how the band was set */
} imp_check;

typedef struct imp_incident {
    const imp_log *log;
    imp_build_opts opts;
    int64_t origin_us;      /* unix time of the slice's first arrival */
    fb_time_us duration_us; /* the traffic window */
    fb_time_us span_us;     /* first to last arrival of the whole log */
    size_t r0, r1;          /* the slice: requests [r0, r1) */
    uint32_t attempts;
    imp_pfit prov[SIM_PROVIDERS_MAX];
    imp_cfit cls[SIM_CLASSES_MAX];
    imp_inferred pol;
    bool oom; /* a fit could not allocate (fit_malloc): an error, not a fit left out */
    imp_check checks[IMP_CHECKS_MAX];
    uint32_t nchecks;
    util_buf notes;    /* the scenario's description: what was read, what is unknown */
    util_buf evidence; /* the as-was variant's description */
    util_buf fits;     /* what each fit chose and why, a line each (fusebox import prints it) */
    util_buf recorded; /* the faults' recorded hits (imp_fault's rec_at) */
} imp_incident;

/* Fit the log; FB_OK, or an error in err (a slice the log does not hold, too little data). */
int imp_incident_build(const imp_log *log, const imp_build_opts *o, imp_incident **out,
                       imp_error *err);
/* The same with each text (description, evidence, fits) capped at text_max bytes, not
 * IMP_TEXT_MAX: a text that would pass it is FB_ECAP naming it, never a text cut midway. */
int imp_incident_build_texts(const imp_log *log, const imp_build_opts *o, size_t text_max,
                             imp_incident **out, imp_error *err);
/* The scenario as JSON text (malloc), or NULL when out of memory. */
char *imp_incident_json(const imp_incident *inc);

/*
 * One simulated run of sc's as-was variant at sc->seed: the value of each of the n
 * metrics named (0 where a metric is not applicable) in out. `drawn`: a run of the log's
 * own noise (sc's even faults drawn per attempt for it, as a provider draws them), else
 * of the replay's. FB_OK, or an error with its message in msg.
 */
typedef int (*imp_measure_fn)(void *ctx, sim_scenario *sc, bool drawn, const char *const *metrics,
                              uint32_t n, double *out, char *msg, size_t msg_len);

/*
 * Widen each check's band to the noise of the log against one simulated run, measured:
 * sc (the scenario imp_incident_json wrote, loaded) is run by `measure` `seeds` times,
 * as-was at seeds sc->seed, sc->seed + 1, ... (the replay's noise), and, when it has
 * faults realised evenly ("sampling": "even"), `seeds` times more with those faults drawn
 * per attempt (the log's noise: the provider that wrote it drew each attempt); a band's
 * half-width becomes at least 3 x the standard deviation of the difference, sqrt(sd
 * replay^2 + sd log^2) (3 x sqrt(2) x sd without even faults: the log is one run of the
 * same noise). The seed and the faults' sampling are restored. FB_OK, or an error from a
 * run in err.
 */
int imp_incident_calibrate(imp_incident *inc, sim_scenario *sc, uint32_t seeds,
                           imp_measure_fn measure, void *ctx, imp_error *err);
#define IMP_CALIBRATE_SEEDS 10
/*
 * The most likely cause, among the fits, of a miss on `figure` (as reports/breakdown.h
 * names it: "latency_p99", "attempts/request 2", "status 429", ...), the replay `high`
 * (above the log) or below: "the slowdown factor (fitted 6.94 on openai)".
 */
void imp_incident_cause(const imp_incident *inc, const char *figure, bool high, char *buf,
                        size_t len);
void imp_incident_free(imp_incident *inc);

/* The variant the checks are about. */
#define IMP_AS_WAS "as-was"

#endif /* IMP_INCIDENT_H */
