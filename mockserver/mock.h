/*
 * mock.h - an OpenAI- and Anthropic-compatible mock LLM provider with scripted faults.
 *
 * mock_server_create() starts libmicrohttpd on its own threads (one epoll
 * polling thread plus a timer thread) and returns once it is listening.
 * Delays, stalls and hangs suspend connections and are resumed by the timer
 * thread, so no thread ever waits on a slow request. Faults come from a
 * per-request spec (x-fusebox-fault header or "fb-<spec>" model) or from the
 * timeline (sim_fault array, see fault.h). Everything else (endpoints, the
 * control plane under /__fusebox/, limits) is described in docs/mock.md.
 */
#ifndef MOCK_H
#define MOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "mockserver/fault.h"

typedef enum mock_log_level { MOCK_LOG_INFO = 0, MOCK_LOG_WARN, MOCK_LOG_ERROR } mock_log_level;

/* Diagnostics go here, never to stdout. Called from server threads. */
typedef void (*mock_log_fn)(void *user, mock_log_level level, const char *msg);

/* Finite capacity; zero fields are unlimited. Timeline units (x time_scale). */
typedef struct mock_capacity {
    int64_t concurrency;      /* requests in flight at once */
    int64_t requests_per_min; /* RPM bucket */
    int64_t tokens_per_min;   /* TPM bucket: prompt + completion tokens */
} mock_capacity;

typedef struct mock_config {
    const char *bind_addr;         /* NULL = "127.0.0.1"; IPv4 or IPv6 literal */
    uint16_t port;                 /* 0 = any free port (see mock_server_port) */
    unsigned max_connections;      /* 0 = 1024 */
    size_t max_body_bytes;         /* 0 = 4 MiB; larger bodies get 413 */
    unsigned threads;              /* MHD polling threads; 0 = 1 */
    double time_scale;             /* timeline time = real time x time_scale; 0 = 1 */
    uint64_t seed;                 /* fraction draws and ids */
    fb_time_us ttft_us;            /* baseline time to first token (timeline time) */
    fb_time_us per_token_us;       /* baseline time per output token */
    fb_time_us error_latency_us;   /* how long an error answer takes (timeline time); 0 = at once */
    int64_t completion_tokens_max; /* cap on completion tokens; 0 = 16 */
    int64_t context_window;        /* prompt tokens above this get the context error; 0 = off */
    mock_capacity capacity;
    size_t log_capacity;     /* attempt log ring entries; 0 = 10000 */
    fb_time_us hang_max_us;  /* a hung request is dropped after this real time; 0 = 10 min */
    const sim_fault *faults; /* initial timeline, copied; may be NULL */
    size_t n_faults;
    mock_log_fn log; /* may be NULL */
    void *log_user;
} mock_config;

typedef struct mock_server mock_server;

typedef struct mock_stats {
    uint64_t requests; /* every HTTP request outside /__fusebox/ */
    uint64_t attempts; /* completion requests (chat/completions, messages) */
    uint64_t faults;   /* attempts that got a fault */
    uint64_t status_2xx, status_4xx, status_5xx;
    uint64_t status_429;
    uint64_t hangs, resets, cut_streams;
    uint64_t capacity_rejects;
    uint64_t log_dropped;
    int64_t in_flight; /* completion requests not finished */
    int64_t suspended; /* connections waiting on the timer */
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
