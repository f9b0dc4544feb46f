/*
 * sse.h - an incremental server-sent-events reader.
 *
 * Bytes arrive in arbitrary pieces (curl's write callback); the reader
 * splits them into lines (LF, CRLF or CR), collects `event:` and `data:`
 * fields and dispatches one event per blank line, as the WHATWG EventSource
 * algorithm does: several data lines join with "\n", comments (":") and
 * other fields are ignored, a missing `event:` is "". A line longer than
 * the buffer is cut (the event is still dispatched, flagged `truncated`).
 * No allocation: the buffer is part of the struct.
 */
#ifndef LIVE_SSE_H
#define LIVE_SSE_H

#include <stdbool.h>
#include <stddef.h>

#define LIVE_SSE_LINE_MAX 8192
#define LIVE_SSE_EVENT_MAX 64

/* One event: `data` is NUL-terminated and valid only during the call. */
typedef void (*live_sse_fn)(void *ctx, const char *event, const char *data, size_t len,
                            bool truncated);

typedef struct live_sse {
    /* private */
    live_sse_fn fn;
    void *ctx;
    char event[LIVE_SSE_EVENT_MAX];
    char data[LIVE_SSE_LINE_MAX];
    size_t data_len;
    bool has_data;
    bool truncated;
    char line[LIVE_SSE_LINE_MAX];
    size_t line_len;
    bool line_cut;
    bool after_cr; /* the last byte was CR: a following LF ends nothing */
} live_sse;

void live_sse_init(live_sse *p, live_sse_fn fn, void *ctx);
void live_sse_feed(live_sse *p, const char *buf, size_t len);

#endif /* LIVE_SSE_H */
