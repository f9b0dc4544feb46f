/*
 * attempts.h - the attempt log: a fixed ring of what arrived and what was sent.
 *
 * The ring is sized once; when it wraps, the oldest entries are dropped and
 * counted. Entries are addressed by a sequence number so that an entry can
 * be completed (status, fault) after it was added, if it is still there.
 * Not thread-safe: the server holds its lock around every call.
 */
#ifndef MOCK_ATTEMPTS_H
#define MOCK_ATTEMPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "mockserver/buf.h"

typedef struct mock_attempt {
    uint64_t seq;
    fb_time_us t_us;    /* arrival, timeline time */
    fb_time_us real_us; /* arrival, real time since the last reset */
    char method[8];
    char path[64];
    char model[64];
    char key[64];    /* x-fusebox-key */
    char fault[96];  /* what was applied; "" = none */
    int retry_count; /* x-stainless-retry-count; -1 = absent */
    /* FNV-1a 64 of the User-Agent and the body: an SDK's retry resends both, byte for byte, so
       keyless attempts that differ here are different clients' (the verdict); 0 = not known */
    uint64_t client;
    int status; /* status sent; 0 = none (hang, reset) */
    /* timeline: the answer's first byte (ttft) or error latency; -1 = none */
    fb_time_us latency_us;
    fb_time_us sent_us;        /* real time since the last reset the answer went; -1 = none */
    fb_time_us retry_after_us; /* timeline: the least wait the answer told (headers, Gemini's
                                  RetryInfo); -1 = none */
    int should_retry;          /* x-should-retry sent: 1, 0; -1 = none */
    int64_t tokens;            /* content pieces a streamed answer sent; -1 = not known */
    bool stream;
    bool inference; /* an attempt (not models, token counting, a passthrough) */
    bool broken;    /* a 200 that ended short: cut, truncated, an in-band error, malformed, no
                       terminator, or the client left before its end */
} mock_attempt;

typedef struct mock_attempts_snap mock_attempts_snap;

typedef struct mock_attempts {
    mock_attempt *ring;
    size_t cap;
    uint64_t total;           /* added since the last clear */
    mock_attempts_snap *snap; /* the snapshot being taken, or NULL */
} mock_attempts;

/* The entries [first, first + n) as they were when the snapshot began, oldest first. */
struct mock_attempts_snap {
    mock_attempt *e;     /* room for the log's cap entries */
    unsigned char *done; /* per entry: copied already */
    uint64_t first, total;
    size_t n, next; /* next: the first entry the chunks have not reached */
};

int mock_attempts_init(mock_attempts *a, size_t cap);
void mock_attempts_free(mock_attempts *a);
void mock_attempts_clear(mock_attempts *a);
/* A zeroed slot with its seq set; overwrites the oldest when full. */
mock_attempt *mock_attempts_add(mock_attempts *a);
/* The entry with this seq, or NULL once overwritten. */
mock_attempt *mock_attempts_get(mock_attempts *a, uint64_t seq);
uint64_t mock_attempts_dropped(const mock_attempts *a);
/* {"total":N,"dropped":D,"time_scale":X,"entries":[...]} oldest first. */
void mock_attempts_json(const mock_attempts *a, double time_scale, util_buf *out);

/* Buffers for a snapshot of a (outside the lock: a's cap never changes); FB_ENOMEM. */
int mock_attempts_snap_alloc(const mock_attempts *a, mock_attempts_snap *s);
void mock_attempts_snap_free(mock_attempts_snap *s);
/* Under the lock: the snapshot is of now (one at a time: a->snap must be NULL). */
void mock_attempts_snap_begin(mock_attempts *a, mock_attempts_snap *s);
/* Under the lock: up to k more entries copied; true once all are (a->snap is then NULL). */
bool mock_attempts_snap_step(mock_attempts *a, size_t k);
/* The snapshot's JSON, as mock_attempts_json wrote the log then. */
void mock_attempts_snap_json(const mock_attempts_snap *s, double time_scale, util_buf *out);

#endif /* MOCK_ATTEMPTS_H */
