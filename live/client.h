/*
 * client.h - the live driver's HTTP side, as a simulator port (sim/sim.h).
 *
 * One thread drives every transfer through libcurl's multi interface in
 * its socket form: curl tells which sockets to watch (an epoll set) and
 * when to call it back (a timer), so thousands of concurrent transfers cost
 * one epoll_wait, not a poll over all of them. A timerfd in the same set
 * wakes the thread at the simulator's next event with sub-millisecond
 * precision.
 *
 * Time: simulated time = real time since live_client_start() x time_scale.
 * The port converts the simulator's deadlines to real ones and measures in
 * simulated time, so every wait is divided by the scale and every latency
 * multiplied back. The attempt timeout and the request deadline are the
 * simulator's timers, which cancel transfers through the port.
 *
 * An answer is read as the official SDKs read it: status, the Retry-After
 * family (retry-after-ms, retry-after in seconds or as an HTTP date),
 * x-should-retry, the error body's type/code/message, and for a streamed
 * 200 the events (wire.h): a failure after the first content event is
 * after_first_token; a stream that ends without its terminator, or with a
 * malformed event, is a broken reply (FB_TRANSPORT_OTHER).
 *
 * Nothing a target sends can stop the clock: an answer longer than
 * LIVE_RESPONSE_MAX + LIVE_RESPONSE_PER_TOKEN x the completion tokens asked
 * for is cut there (a broken reply, counted as `oversized`), and the loop
 * returns to the simulator whenever one of its timers is due, however many
 * sockets are ready, so attempt timeouts and request deadlines fire on time
 * and a stop (SIGINT) is seen at once.
 *
 * The loop measures how well it keeps time (live_client_stats): how late it
 * got to each due time (lag), the longest it left the sockets unread (gap),
 * its thread's CPU time, and how long the process's threads waited for a
 * CPU (the kernel's schedstat, where it has one). live/fidelity.h judges
 * from these whether a run was driven faithfully.
 */
#ifndef LIVE_CLIENT_H
#define LIVE_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "live/otlp.h"
#include "live/wire.h"
#include "sim/sim.h"

typedef struct live_client live_client;

typedef struct live_client_config {
    double time_scale;                 /* 0 = 1 */
    uint32_t transfers_max;            /* concurrent transfers; 0 = 4096 */
    const volatile sig_atomic_t *stop; /* non-zero: the run stops ("interrupted"); may be NULL */
    const sigset_t *wait_sigmask;      /* signal mask while waiting (epoll_pwait); NULL = as is */
    live_otlp *otlp; /* traces of every attempt and request; NULL = none (begun by the caller) */
} live_client_config;

#define LIVE_RESPONSE_MAX ((uint64_t)1 << 20) /* bytes of any answer, plus ... */
#define LIVE_RESPONSE_PER_TOKEN 1024u         /* ... this many per completion token asked */
#define LIVE_PROBE_TIMEOUT_MS 5000L           /* a target must answer the probe by then */

/* The process's threads, from /proc/self/task/<tid>/schedstat (summed over threads). */
typedef struct live_sched {
    bool known;              /* false: the kernel does not report it */
    uint64_t run_ns;         /* on a CPU */
    uint64_t wait_ns;        /* runnable but waiting for a CPU */
    uint64_t slices;         /* times a thread was given a CPU */
    uint64_t busiest_run_ns; /* on a CPU, the busiest thread (the driver's, or a mock's) */
} live_sched;

typedef struct live_client_stats {
    uint64_t transfers; /* started */
    uint64_t cancelled; /* given up by the simulator */
    uint64_t transport_errors;
    uint64_t oversized;      /* answers cut at the response cap */
    uint32_t in_flight_peak; /* concurrent transfers */
    uint64_t bytes_sent;     /* request bodies of finished transfers */
    uint64_t bytes_received; /* answer bodies, cut or not */
    /* timekeeping since live_client_start(), in real microseconds */
    uint64_t lag_samples; /* due times reached */
    int64_t lag_p50_us, lag_p99_us, lag_p999_us,
        lag_max_us;                              /* how late the loop got to a due time */
    int64_t gap_p99_us, gap_p999_us, gap_max_us; /* how long the sockets went unread */
    /* answers that said when they were planned to end (x-fusebox-plan-us, fusebox's mock):
     * how much later than that the last byte was read, wire and queues included */
    uint64_t late_samples;
    int64_t late_p50_us, late_p99_us, late_p999_us, late_max_us;
    double cpu_s;     /* CPU time of the driver's thread */
    live_sched sched; /* the process's threads */
} live_client_stats;

int live_client_create(const live_client_config *cfg, live_client **out, char *err, size_t errlen);
/*
 * Where provider `provider` is: a base URL ("http://host:port", with or
 * without a trailing "/v1"), the dialect, the model name to send and extra
 * request headers ("Name: value"; copied).
 */
int live_client_endpoint(live_client *c, uint8_t provider, const char *base_url, live_dialect d,
                         const char *model, const char *const *headers, size_t header_count,
                         char *err, size_t errlen);
/*
 * Ask provider `provider`'s target for GET <base>/v1/models and wait up to
 * timeout_ms for the first line of an answer (any status will do: the
 * target is there). FB_EIO with a message saying what happened (refused,
 * nothing within the time, closed) otherwise.
 */
int live_client_probe(live_client *c, uint8_t provider, long timeout_ms, char *err, size_t errlen);
/* Time zero of the simulated clock: now (the timekeeping counts from here). */
void live_client_start(live_client *c);
/* The wall clock at time zero (unix ns), and the simulated time now. */
int64_t live_client_t0_unix_ns(const live_client *c);
fb_time_us live_client_now(const live_client *c);
/* Provider `provider`'s request URL (after live_client_endpoint). */
const char *live_client_url(const live_client *c, uint8_t provider);
const sim_port *live_client_port(live_client *c);
/* What happened so far (reads the clocks and the kernel's counters). */
void live_client_stats_get(live_client *c, live_client_stats *out);
/* Abort what is still in flight (traced as unfinished) and free everything. NULL is fine. */
void live_client_destroy(live_client *c);

#endif /* LIVE_CLIENT_H */
