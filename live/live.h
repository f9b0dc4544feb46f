/*
 * live.h - a scenario's traffic over real HTTP, on the real clock.
 *
 * live_run() runs one variant of a scenario with the simulator's client
 * side (traffic, pods with worker pools and queues, request deadlines, the
 * variant's retry, breaker, fallback and rate-limit policies, every metric)
 * and real providers in place of the provider model: each attempt is an
 * HTTP request issued through libcurl (client.h), and time is the monotonic
 * clock scaled by time_scale. Every provider has a target URL: a gateway, a
 * real API, or a mock the caller started (`fusebox live` starts mockserver/
 * mocks for the providers without --target; live/ knows nothing of them).
 * A server with a timeline of its own, like a mock's faults, must start its
 * clock with the run's: live_config.on_start is called once the endpoints
 * are set up, immediately before the simulated clock starts, on the calling
 * thread, so that a mock reset there and the run share their time zero.
 * The summary, rows and events are the simulator's structs, so the report
 * writers apply unchanged. docs/live.md describes where live and simulated
 * runs differ.
 */
#ifndef LIVE_LIVE_H
#define LIVE_LIVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "live/client.h"
#include "live/wire.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

typedef struct live_target {
    const char *url;   /* base URL, required: "http://host:port", optionally ending in /v1 */
    const char *model; /* model name sent; NULL = the provider's name */
    live_dialect dialect;
    const char *const *headers; /* extra request headers ("Name: value") */
    size_t header_count;
} live_target;

/* Called just before the simulated clock starts (see above). */
typedef void (*live_start_fn)(void *user);

typedef struct live_config {
    double time_scale;                      /* simulated time = real time x scale; 0 = 1 */
    live_target targets[SIM_PROVIDERS_MAX]; /* by provider index */
    uint32_t transfers_max;                 /* concurrent HTTP transfers; 0 = 4096 */
    const volatile sig_atomic_t *stop;      /* non-zero: stop cleanly, keep what was measured */
    const sigset_t *wait_sigmask;           /* signal mask while waiting; NULL = as is */
    live_start_fn on_start;                 /* may be NULL */
    void *on_start_user;
    live_otlp *otlp; /* may be NULL: the run's spans go there (one resourceSpans entry) */
} live_config;

/* What happened on the wire during a run, and how well the driver kept time. */
typedef struct live_stats {
    live_client_stats wire;
    double wall_s;
    char urls[SIM_PROVIDERS_MAX][128]; /* where each provider was reached */
} live_stats;

/*
 * Run variant `variant` of `sc` live. Before the clock starts, every
 * provider's target is probed (live_client_probe): a target that refuses
 * connections or answers nothing is a setup failure naming the provider and
 * its URL. Returns FB_OK, or an error with err filled: a setup failure (a
 * missing, bad or unreachable target; *out is then empty), or a run stopped
 * early (a cap, the stop flag: *out holds what was measured, out->complete
 * == false). `stats` may be NULL.
 */
int live_run(const sim_scenario *sc, uint32_t variant, const live_config *cfg,
             const sim_run_opts *opts, sim_summary *out, live_stats *stats, sim_error *err);

#endif /* LIVE_LIVE_H */
