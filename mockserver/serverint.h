/*
 * serverint.h - the mock server's state and the functions its files share. Private to
 * mockserver/.
 *
 * A request's life (the files in call order):
 *   conn.c     libmicrohttpd's callbacks: a context per request, the body (within the size
 *              and memory limits), suspension and resumption, the stream reader;
 *   route.c    the path and method to an endpoint, or a 404 / 405 / 413 (pure, route.h);
 *   dispatch.c its answer: the endpoint's handler, or the error; the 431 of a long URI;
 *   attempt.c  an endpoint's request: ids, the attempt log, the body parsed by its API, the
 *              fault decided (header > model > timeline), the answer's size checked;
 *   capacity.c the provider's limits: context window, RPM/TPM buckets, concurrency with its
 *              queue, brownouts; slots released when an answer ends;
 *   answer.c   the decided action carried out: an error, a body, a stream, a hang, a reset,
 *              each at its time (latency.c draws the times);
 *   headers.c  each dialect's headers (ids, rate limits, Retry-After);
 *   control.c  /__fusebox/ (faults, reset, log, stats);
 *   server.c   creation, configuration and shutdown.
 * Shared state sits behind one mutex; handlers hold it briefly.
 */
#ifndef MOCK_SERVERINT_H
#define MOCK_SERVERINT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "core/ratelimit.h"
#include "mockserver/api.h"
#include "mockserver/attempts.h"
#include "mockserver/mock.h"
#include "mockserver/route.h"
#include "mockserver/sched.h"
#include "mockserver/watch.h"

#define HANG_POLL_US (500 * FB_US_PER_MS) /* how often a waiting connection checks its client */
#define CONNECTION_TIMEOUT_S 60u
/*
 * A longer request URI gets 431. libmicrohttpd keeps a request's line, its headers and the
 * answer's headers in one 32 KiB pool per connection (zeroed for every request, so a larger one
 * costs every answer) and answers 414 itself when the line does not fit.
 */
#define URL_MAX 8192
/* Query parameters a URL may have (libmicrohttpd keeps a record of each in the connection's
 * 32 KiB pool; about 500 fill it); more get 414 at once. */
#define URL_ARGS_MAX 100
#define TIMES_CAP 4096
#define REQ_SPARE 64

/* Nominal rate-limit figures reported when no capacity is configured. */
#define NOMINAL_RPM 10000
#define NOMINAL_TPM 30000000

typedef struct times_slot {
    uint64_t hash;
    int64_t count;
} times_slot;

typedef struct req req;
typedef struct mock_proxy mock_proxy;
typedef struct mock_xfer mock_xfer;

struct mock_server {
    mock_config cfg;
    char bind_addr[64];
    struct MHD_Daemon *daemon;
    mock_sched *sched;
    mock_watch *watch;
    mock_proxy *proxy; /* proxy mode; NULL otherwise */
    char upstream[1024];
    char control_token[MOCK_CONTROL_TOKEN_MAX + 1]; /* empty: the Host/Origin check */
    uint16_t port;

    pthread_mutex_t lock; /* everything below */
    bool stopping;
    sim_fault faults[MOCK_FAULTS_MAX];
    size_t n_faults;
    /* the even faults' counts, from 0 at the timeline's zero */
    sim_fault_even fault_even[MOCK_FAULTS_MAX];
    fb_time_us t0_us; /* real monotonic time of the timeline's zero */
    int64_t wall0_s;  /* wall clock at t0, for "created" */
    uint64_t attempt; /* attempts since reset: keys the fraction draws */
    uint64_t id_seq;  /* ids */
    mock_attempts log;
    times_slot *times; /* per-key counters: times-N, latency draws */
    size_t times_used;
    mock_stats stats;
    fb_bucket rpm, tpm;
    req *queue_head, *queue_tail; /* attempts waiting for a slot */
    size_t memory_used;           /* bytes of bodies held (max_memory_bytes) */

    pthread_mutex_t snap_lock; /* one snapshot of the log at a time (control.c) */

    /* Finished requests kept for the next ones (a request is 1.7 KiB: past malloc's small-size
     * caches, every allocation would sort its free lists); own lock, held for a push or pop. */
    pthread_mutex_t spare_lock;
    req *spare[REQ_SPARE];
    size_t n_spare;
};

typedef enum phase {
    PH_BODY = 0, /* collecting the request body */
    PH_QUEUE,    /* waiting for a capacity slot */
    PH_WAIT,     /* response prepared, suspended until due_us */
    PH_HANG,     /* never answering */
    PH_PROXY,    /* waiting for the upstream's status and headers (proxy mode) */
    PH_QUEUED    /* response queued (maybe a stream) */
} phase;

struct req {
    mock_server *s;
    struct MHD_Connection *conn;
    const endpoint *ep;
    phase phase;
    bool suspended;
    bool early;     /* resumed before due_us to look at the client */
    bool too_large; /* body over max_body_bytes */
    bool over_memory;
    bool attempt;    /* an inference request: counted in in_flight */
    bool holds_slot; /* counted in busy */
    bool has_log;
    bool cork; /* corked when queued: everything goes at once, then the cut's FIN */
    /* decided before the answer goes, logged with its status (one lock): a fault to count,
     * the latency, the retry hints */
    bool pend_fault, pend_latency, pend_hints;
    fb_time_us pend_latency_us, pend_ra_us;
    int pend_should_retry;
    uint64_t log_seq;
    uint64_t id_seq;       /* its ids derive from it */
    fb_time_us arrival_us; /* real monotonic */
    fb_time_us due_us;
    fb_time_us hang_until_us;
    fb_time_us done_us; /* when the answer would have ended (a slot stays busy until then) */
    size_t memory_held;
    util_buf body;
    size_t body_bytes;
    req *queue_next;
    mock_xfer *px;            /* its upstream transfer (proxy mode) */
    const char *method, *url; /* libmicrohttpd's, valid until the request ends */
    /* the decided answer */
    mock_reply rep;
    mock_action act;
    mock_store store;
    int64_t billed;                     /* prompt + completion tokens, for the rate-limit headers */
    fb_time_us ttft_tl_us, error_tl_us; /* drawn latencies, timeline time */
    struct MHD_Response *pending;
    unsigned pending_status;
    /* streaming */
    mock_stream st;
    util_buf out;
    size_t out_off;
    size_t emitted;   /* a stream's bytes written so far (--max-response) */
    size_t err_bytes; /* the dialect's in-band error event's size + 1; 0 = not measured */
    fb_time_us t0_us, ttft_us, per_token_us, stall_us;
    int64_t stall_after;
    char id[64];
    char request_id[64];
    char item_id[64];
    char call_id[64];
    char api_version[64];
};

/* ---- server.c ---- */
void mock_logf(mock_server *s, mock_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int64_t mock_wall_now_s(void);
void mock_copy_str(char *dst, size_t cap, const char *src);
/* As mock_copy_str, then valid UTF-8 (util_utf8_fix): text for the attempt log and the
 * verdict, which are JSON (a header's raw bytes, a character cut in two by the cap). */
void mock_copy_text(char *dst, size_t cap, const char *src);
/* Timeline time now (caller holds the lock). */
fb_time_us mock_timeline_locked(const mock_server *s, fb_time_us now_us);
/* A timeline duration as real time, with the latency factor. */
fb_time_us mock_to_real(const mock_server *s, fb_time_us d_us, double slow);
const char *mock_header(struct MHD_Connection *c, const char *name);
bool mock_stopping(mock_server *s);
/* Bump and return the counter of a hash (times-N, latency draws per key). Caller holds the lock. */
int64_t mock_count_locked(mock_server *s, uint64_t hash);
uint64_t mock_fnv1a(uint64_t h, const char *s);
/* A zeroed request context, and its return when the request ends. */
req *mock_req_new(mock_server *s);
void mock_req_free(mock_server *s, req *r);
/* Reserve n bytes of the memory budget (false: over max_memory_bytes); give them back. */
bool mock_memory_take(mock_server *s, size_t n);
void mock_memory_give(mock_server *s, size_t n);

/* ---- conn.c ---- */
/* Suspend until due_us, waking every HANG_POLL_US to see whether the client left. */
bool mock_suspend_until(req *r, fb_time_us due_us);
/* Resumed: the suspension is over (counted once). */
void mock_note_resumed(req *r);
/* Woken before its time to look at the client: has it left? Counts one that did. */
bool mock_client_left(req *r);
/* Has the client closed its side? */
bool mock_peer_closed(struct MHD_Connection *c);
/* A body that ends midway (a cut): counted, the FIN sent; returns END_WITH_ERROR for MHD. */
ssize_t mock_cut_end(req *r);
/* A body that cannot go on (a cut, an upstream that failed midway): the FIN sent at once, as
 * MHD_USE_TURBO closes the socket only on its next pass, which an idle daemon may not make for
 * a minute; returns END_WITH_ERROR for MHD. */
ssize_t mock_abort_end(req *r);
enum MHD_Result mock_on_access(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **req_cls);
void mock_on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                       enum MHD_RequestTerminationCode toe);
ssize_t mock_body_reader(void *cls, uint64_t pos, char *buf, size_t max);

/* ---- dispatch.c (what route.c decided) ---- */
enum MHD_Result mock_dispatch(req *r, const char *url, const char *method);
/* The 431 of an over-long URI, or the 414 of one with too many query parameters, written on
 * the raw socket (mock_watch_long_uri_fn; user: server). */
void mock_long_uri(void *user, int fd, const char *uri, size_t len, size_t args);

/* ---- attempt.c ---- */
enum MHD_Result mock_handle_api(req *r, const char *method, const char *url);
void mock_new_ids(req *r, mock_dialect d, const mock_api_ops *ops);

/* ---- capacity.c ---- */
/*
 * The provider's own limits on an attempt that would be served: the context window (400),
 * the buckets (429), the concurrency limit (429, or the queue, or the overload answer), or a
 * brownout's share rejected as overloaded. Returns false when the attempt now waits in the
 * queue (a freed slot wakes it; conn.c then answers).
 */
bool mock_apply_limits(req *r, uint64_t attempt, fb_time_us t_us, double scale);
/* A request ends: give back its slot (at once, or when its work would have ended). */
void mock_release_slot(req *r, bool client_left);
/* Take the request out of the queue (it is ending). */
void mock_unqueue(req *r);

typedef struct rl_view {
    int64_t limit_req, remaining_req, limit_tok, remaining_tok;
    fb_time_us reset_req_us, reset_tok_us;
} rl_view;
/* The rate-limit headers' figures now, with `tokens` billed; a 429's hit limit at zero. */
rl_view mock_rate_view(mock_server *s, int64_t tokens, const mock_limit_hit *hit);

/* ---- latency.c ---- */
/* This attempt's time to first token and error latency (timeline time) into r. */
void mock_draw_latency(req *r, uint64_t attempt, const char *key);

/* ---- answer.c ---- */
struct MHD_Response *mock_buf_response(util_buf *b);
enum MHD_Result mock_queue(req *r, unsigned status, struct MHD_Response *resp);
void mock_note_sent(req *r, int status, const char *fault);
enum MHD_Result mock_send_json(req *r, unsigned status, util_buf *b);
enum MHD_Result mock_send_control_error(req *r, unsigned status, const char *path, const char *msg);
/* A provider-format error now (due_us <= now) or later. */
enum MHD_Result mock_send_error(req *r, int status, mock_flavor flavor, const char *message,
                                const mock_action *a, fb_time_us due_us);
/* Carry out r->act for r->rep (after the limits): reset, hang, error, body or stream. */
enum MHD_Result mock_answer(req *r);

/* A prepared answer now, or suspended until due (0: now). */
enum MHD_Result mock_send_at(req *r, unsigned status, struct MHD_Response *resp, fb_time_us due);
/* The request ended (completed: libmicrohttpd sent all of it): a 200's content pieces and
 * whether it ended short into the log, its upstream transfer let go (proxy mode), the gauges
 * (in flight, suspended) down. */
void mock_request_end(req *r, bool completed);

/* ---- proxy.c ---- */
int mock_proxy_create(mock_server *s, mock_proxy **out, char *err, size_t errlen);
/* Shutdown: end every transfer and stop the transfer thread. */
void mock_proxy_stop(mock_proxy *p);
void mock_proxy_destroy(mock_proxy *p);
/* The request's model and stream flag for the log, read leniently (the upstream judges). */
void mock_proxy_read(req *r);
/* Forward the request (no fault answered it); the connection waits for the upstream. */
enum MHD_Result mock_proxy_start(req *r);
/* The request target as the proxy sends it after the upstream's prefix, appended to out: the
 * path with its dot segments resolved ("%2e" is a dot) and the query, the fragment dropped.
 * FB_EINVAL (err says why) for a target that does not start with '/', holds a byte a URL
 * cannot (controls, spaces, backslash, non-ASCII), or climbs above its root with "..". */
int mock_proxy_target(const char *target, util_buf *out, char *err, size_t errlen);
/* Resumed while waiting for the upstream's headers. */
enum MHD_Result mock_proxy_resume(req *r);
/* The request ended: the transfer is let go (the thread aborts and frees it). */
void mock_proxy_done(req *r);
/* A proxied answer's content events sent (-1 when not counted: no fault read the stream) and
 * whether a fault or the upstream ended it short (*broken may already be true). */
void mock_proxy_stream_end(const req *r, int64_t *tokens, bool *broken);

/* ---- headers.c ---- */
void mock_add_common(req *r, struct MHD_Response *resp, const char *ctype, int64_t tokens,
                     fb_time_us processing_us);
void mock_add_fault_headers(struct MHD_Response *resp, const mock_action *a);
/*
 * x-fusebox-plan-us: the real microseconds from the request's arrival (its headers read) to
 * the answer's last byte as planned (end_us, monotonic), so that a client can tell how much
 * later than planned it came (live's fidelity check, docs/live.md).
 */
void mock_add_plan(const req *r, struct MHD_Response *resp, fb_time_us end_us);

/* ---- control.c ---- */
enum MHD_Result mock_handle_control(req *r, route rt);

#endif /* MOCK_SERVERINT_H */
