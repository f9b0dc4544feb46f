/*
 * wire.h - what the mock puts on the wire: bodies, SSE events, header values.
 *
 * Pure formatting: no sockets, no clocks (times are passed in). The shapes
 * follow shared/reference/gateways.md part B and "(ii) Mock provider wire
 * spec": OpenAI chat completions and Anthropic messages, success, errors and
 * streams. The server (server.c) decides what to send and when.
 */
#ifndef MOCK_WIRE_H
#define MOCK_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "mockserver/fault.h"

/* A growable byte buffer; on allocation failure `oom` is set and appends stop. */
typedef struct mock_buf {
    char *p;
    size_t len;
    size_t cap;
    bool oom;
} mock_buf;

void mock_buf_free(mock_buf *b);
void mock_buf_append(mock_buf *b, const char *s, size_t n);
void mock_buf_puts(mock_buf *b, const char *s);
void mock_buf_printf(mock_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. */
void mock_buf_json_string(mock_buf *b, const char *s);
/* Detach the bytes (NUL-terminated); the buffer is left empty. NULL on oom. */
char *mock_buf_take(mock_buf *b, size_t *len);

typedef enum mock_dialect { MOCK_OPENAI = 0, MOCK_ANTHROPIC } mock_dialect;

/* Everything a body needs to know about the request being answered. */
typedef struct mock_reply {
    mock_dialect dialect;
    const char *model;      /* as requested */
    const char *id;         /* chatcmpl-... / msg_... */
    const char *request_id; /* req_... */
    int64_t created_s;      /* epoch seconds */
    int64_t prompt_tokens;
    int64_t tokens;     /* completion tokens per choice */
    int64_t max_tokens; /* requested cap (-1: none), decides the finish reason */
    int n;              /* OpenAI choices */
    bool include_usage; /* OpenAI stream_options.include_usage */
    bool refusal;
    int64_t context_window; /* for the context-length message */
    double retry_hint_s;    /* "Please try again in Xs" in OpenAI 429 messages (0: 1 s) */
} mock_reply;

/* The filler's k-th word with its leading space (none for k == 0). */
const char *mock_wire_word(int64_t k, bool *leading_space);

void mock_wire_success(mock_buf *b, const mock_reply *r);
/* The provider's error body for an HTTP status and flavour. */
void mock_wire_error(mock_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                     const char *message);
/* OpenAI models list or Anthropic models list. */
void mock_wire_models(mock_buf *b, mock_dialect d);

/* Streams: a cursor over the SSE events of one response. */
typedef enum mock_step_kind {
    MOCK_STEP_PRE = 0, /* role chunk / message_start, content_block_start, ping */
    MOCK_STEP_CONTENT, /* content chunk number `k` */
    MOCK_STEP_FAULT,   /* the stream fault at position end_after */
    MOCK_STEP_POST,    /* finish events and the terminator */
    MOCK_STEP_END      /* nothing more: the stream ends (cleanly unless `cut`) */
} mock_step_kind;

typedef struct mock_stream {
    mock_reply r;
    mock_stream_end end;
    int64_t end_at; /* content chunks before the fault */
    mock_step_kind step;
    int64_t k;
    bool cut; /* the end is abortive */
} mock_stream;

void mock_stream_init(mock_stream *s, const mock_reply *r, mock_stream_end end, int64_t end_after);
/* Append the next step's events to b and advance. Does nothing at MOCK_STEP_END. */
void mock_stream_emit(mock_stream *s, mock_buf *b);

/* Go duration string ("0s", "12ms", "1.5s", "6m0s", "1h2m3s") for x-ratelimit-reset-*. */
void mock_wire_go_duration(fb_time_us d_us, char *out, size_t len);
/* RFC 3339 UTC "2025-08-21T12:40:59Z" for anthropic-ratelimit-*-reset. */
void mock_wire_rfc3339(int64_t epoch_s, char *out, size_t len);
/* IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" for retry-after dates. */
void mock_wire_http_date(int64_t epoch_s, char *out, size_t len);
/* Deterministic id characters from (seed, seq): hex or base62, nchars long. */
void mock_wire_id(uint64_t seed, uint64_t seq, bool base62, char *out, size_t nchars);
/* Prompt tokens: ceil(chars / 4) over the messages' (and system's) text, UTF-8 aware. */
int64_t mock_wire_chars(const char *utf8);

#endif /* MOCK_WIRE_H */
