/*
 * mock.h - a mock LLM provider with scripted faults: OpenAI (chat, responses, completions,
 * embeddings, models), Anthropic (messages, count_tokens, models), Azure OpenAI and Gemini.
 *
 * mock_server_create() starts libmicrohttpd on its own threads (one epoll polling thread, a
 * timer thread and a header-timeout watch) and returns once it is listening. Delays, stalls,
 * hangs and the capacity queue suspend connections and are resumed by the timer thread, so no
 * thread ever waits on a slow request. Faults come from a per-request spec (x-fusebox-fault
 * header or "fb-<spec>" model) or from the timeline (sim_fault array, see fault.h). Everything
 * else (endpoints, the control plane under /__fusebox/, limits) is in docs/mock.md.
 */
#ifndef MOCK_H
#define MOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "mockserver/fault.h"
#include "scenario/scenario.h"

typedef enum mock_log_level { MOCK_LOG_INFO = 0, MOCK_LOG_WARN, MOCK_LOG_ERROR } mock_log_level;

/* Diagnostics go here, never to stdout. Called from server threads. */
typedef void (*mock_log_fn)(void *user, mock_log_level level, const char *msg);

/* Finite capacity; zero fields are unlimited. Timeline units (x time_scale). */
typedef struct mock_capacity {
    int64_t concurrency;      /* attempts served at once */
    int64_t requests_per_min; /* RPM bucket */
    int64_t tokens_per_min;   /* TPM bucket: prompt + completion tokens */
    bool queue_at_limit;      /* at the concurrency limit: queue (below), not 429 */
    int64_t queue;            /* attempts waiting for a slot; beyond: overload_status */
    int overload_status;      /* the queue-full answer; 0 = 503 (Anthropic 529) */
    bool no_retry_after;      /* capacity 429s carry no retry-after (scenario retry_after: false) */
    bool cancel_on_disconnect; /* a client that leaves frees its slot at once (keeps_working: false)
                                */
} mock_capacity;

#define MOCK_CONTROL_TOKEN_MAX 255

typedef struct mock_config {
    const char *bind_addr;           /* NULL = "127.0.0.1"; IPv4 or IPv6 literal */
    uint16_t port;                   /* 0 = any free port (see mock_server_port) */
    unsigned max_connections;        /* 0 = 1024 */
    unsigned max_connections_per_ip; /* 0 = no limit (on loopback every client is one IP) */
    size_t max_body_bytes;           /* 0 = 4 MiB; larger bodies get 413 */
    size_t max_response_bytes;       /* 0 = 64 MiB; a larger answer is a 400 */
    size_t max_memory_bytes;         /* 0 = 512 MiB: bodies held at once; beyond: 503 / 529 */
    fb_time_us header_timeout_us;    /* request line + headers must arrive within; 0 = 10 s */
    unsigned threads;                /* MHD polling threads; 0 = 1 */
    double time_scale;               /* timeline time = real time x time_scale; 0 = 1 */
    uint64_t seed;                   /* fraction draws and ids */
    fb_time_us ttft_us;              /* baseline time to first token (timeline time) */
    fb_time_us per_token_us;         /* baseline time per output token */
    fb_time_us error_latency_us; /* how long an error answer takes (timeline time); 0 = at once */
    /* Latency distributions (scenario/dist.h); each replaces its constant above when set: every
     * answer draws its own, from (seed, x-fusebox-key and its attempt count) or (seed, attempt). */
    bool has_ttft_dist, has_error_latency_dist;
    sim_dist ttft_dist, error_latency_dist;
    int64_t completion_tokens_max; /* cap on completion tokens; 0 = 16 */
    int64_t context_window;        /* prompt tokens above this get the context error; 0 = off */
    mock_capacity capacity;
    size_t log_capacity;    /* attempt log ring entries; 0 = 10000 */
    fb_time_us hang_max_us; /* a hung request is dropped after this real time; 0 = 10 min */
    /* Proxy mode: every request but /__fusebox/ goes to this base URL ("http://host:port" or
     * with a path prefix; NULL: the mock answers itself), the faults applied on top. */
    const char *upstream_url;
    fb_time_us upstream_connect_timeout_us; /* 0 = 10 s */
    fb_time_us upstream_idle_timeout_us;    /* no byte either way with the upstream; 0 = 600 s */
    unsigned upstream_max;                  /* upstream transfers at once; 0 = 256 */
    /* The control plane (/__fusebox/): NULL = only requests whose Host is the mock's own
     * address (127.0.0.1:PORT, localhost:PORT, [::1]:PORT, the bind address) and whose Origin,
     * if any, is one of those; set = only requests carrying it in x-fusebox-control-token
     * (for remote use). At most MOCK_CONTROL_TOKEN_MAX bytes. */
    const char *control_token;
    const sim_fault *faults; /* initial timeline, copied; may be NULL */
    size_t n_faults;
    mock_log_fn log; /* may be NULL */
    void *log_user;
} mock_config;

typedef struct mock_server mock_server;

typedef struct mock_stats {
    uint64_t requests; /* every HTTP request outside /__fusebox/ */
    uint64_t attempts; /* inference requests (chat, responses, completions, embeddings, ...) */
    uint64_t faults;   /* attempts that got a fault */
    uint64_t status_2xx, status_4xx, status_5xx;
    uint64_t status_429;
    uint64_t hangs, resets, cut_streams;
    uint64_t capacity_rejects;
    uint64_t queued;          /* attempts that waited for a slot */
    uint64_t left_early;      /* clients that left while their answer was delayed or queued */
    uint64_t header_timeouts; /* connections cut for slow headers */
    uint64_t memory_rejects;  /* answers refused for --max-memory or --max-response */
    uint64_t log_dropped;
    uint64_t proxied;         /* requests forwarded to the upstream (proxy mode) */
    uint64_t upstream_errors; /* of those: the upstream failed (refused, timed out, too large) */
    int64_t in_flight;        /* inference requests not finished */
    int64_t busy;             /* capacity slots held (served attempts, and those still working) */
    int64_t waiting;          /* attempts in the capacity queue */
    int64_t suspended;        /* connections waiting on the timer */
    fb_time_us timeline_us;
} mock_stats;

/* Start listening. On failure returns a negative fb_err and writes err. */
int mock_server_create(const mock_config *cfg, mock_server **out, char *err, size_t errlen);
/* The bound port (the real one when cfg->port was 0). */
uint16_t mock_server_port(const mock_server *s);
/* Replace the fault timeline (copied) and restart the timeline clock. */
int mock_server_set_faults(mock_server *s, const sim_fault *faults, size_t n);
/* Clear the attempt log, counters and "times" counts; restart the timeline clock. */
void mock_server_reset(mock_server *s);
void mock_server_stats(mock_server *s, mock_stats *out);
/* Resume every waiting connection, stop the threads, free everything. NULL is fine. */
void mock_server_destroy(mock_server *s);

#endif /* MOCK_H */
