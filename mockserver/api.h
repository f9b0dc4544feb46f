/*
 * api.h - the provider APIs the mock answers, and what one answer holds.
 *
 * Each API (chat completions, legacy completions, the Responses API,
 * embeddings, Anthropic messages, Gemini generateContent, and the small
 * metadata endpoints) is one table of functions, in its own file: parse the
 * request into a mock_reply, write the whole body, or write the stream one
 * step at a time (mock_stream). Pure formatting: no sockets and no clocks;
 * the server (attempt.c, answer.c) decides what to send and when. The wire
 * formats follow the official clients named in docs/mock.md.
 */
#ifndef MOCK_API_H
#define MOCK_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/fb.h"
#include "mockserver/buf.h"
#include "mockserver/fault.h"

/* The error envelope and header family of an endpoint. */
typedef enum mock_dialect { MOCK_OPENAI = 0, MOCK_ANTHROPIC, MOCK_AZURE, MOCK_GEMINI } mock_dialect;

typedef enum mock_output {
    MOCK_OUT_TEXT = 0, /* the filler: one word per token */
    MOCK_OUT_JSON,     /* a JSON text satisfying the requested schema (structured output) */
    MOCK_OUT_TOOL      /* one call of the required tool; arguments satisfy its schema */
} mock_output;

/* The limit a capacity 429 hit, for the headers and the message that names it. */
typedef enum mock_limit_kind {
    MOCK_LIMIT_NONE = 0,
    MOCK_LIMIT_REQUESTS,   /* the RPM bucket (or a scripted 429: the nominal RPM) */
    MOCK_LIMIT_TOKENS,     /* the TPM bucket */
    MOCK_LIMIT_CONCURRENCY /* requests in flight */
} mock_limit_kind;

typedef struct mock_limit_hit {
    mock_limit_kind kind;
    int64_t limit;      /* the configured limit */
    int64_t used;       /* what the bucket had given out */
    int64_t requested;  /* what this attempt asked for */
    fb_time_us wait_us; /* timeline time until it would fit */
} mock_limit_hit;

/* Everything a body or an event needs to know about the request being answered. */
typedef struct mock_reply {
    mock_dialect dialect;
    const char *model;      /* as requested (or the path's deployment / model) */
    const char *id;         /* chatcmpl-..., msg_..., resp_..., cmpl-... */
    const char *request_id; /* req_... */
    const char *item_id;    /* Responses: the output item's id */
    const char *call_id;    /* a tool call's id: call_..., toolu_... */
    int64_t created_s;      /* epoch seconds */
    int64_t prompt_tokens;
    int64_t tokens;     /* completion tokens (pieces) per choice */
    int64_t max_tokens; /* requested cap (-1: none), decides the finish reason */
    int n;              /* choices (chat, completions) */
    bool stream;
    bool include_usage; /* OpenAI stream_options.include_usage */
    bool refusal;
    int64_t context_window; /* for the context-length message */
    mock_output output;
    const char *json; /* MOCK_OUT_JSON / _TOOL: the text */
    size_t json_len;
    const char *tool_name;
    const uint64_t *inputs; /* embeddings: one hash per input text */
    int64_t n_inputs;
    int64_t dimensions;
    bool base64;             /* embeddings: encoding_format base64 */
    double retry_hint_s;     /* "try again in Xs" in 429 messages (0: 1 s) */
    mock_limit_hit limit;    /* what a capacity 429 hit */
    const char *api_version; /* Azure: the api-version query parameter */
    const char *operation;   /* Azure: ChatCompletions_Create, ... (its 429 message) */
} mock_reply;

/* Where a stream is. */
typedef enum mock_step_kind {
    MOCK_STEP_PRE = 0, /* the opening events (role chunk, message_start, response.created...) */
    MOCK_STEP_CONTENT, /* content piece number `k` */
    MOCK_STEP_FAULT,   /* the stream fault at position end_at */
    MOCK_STEP_POST,    /* finish events and the terminator */
    MOCK_STEP_END      /* nothing more: the stream ends (cleanly unless `cut`) */
} mock_step_kind;

typedef struct mock_api_ops mock_api_ops;

/* What a request's answer refers to, owned by the request: mock_reply's strings point here. */
typedef struct mock_store {
    util_buf json;       /* r->json (or the embeddings' input hashes) */
    char model[256];     /* r->model; preset from the path for Gemini and Azure */
    char tool_name[128]; /* r->tool_name */
} mock_store;

typedef struct mock_stream {
    mock_reply r;
    const mock_api_ops *ops;
    mock_stream_end end;
    int64_t end_at; /* content pieces before the fault */
    mock_step_kind step;
    int64_t k;
    int64_t seq; /* Responses: the next event's sequence_number */
    bool cut;    /* the end is abortive */
} mock_stream;

struct mock_api_ops {
    const char *name;
    bool inference; /* an attempt: the timeline, capacity and latency apply */
    /* Fill r from the request body (strings into st); false with a message for the 400. */
    bool (*parse)(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen);
    void (*body)(util_buf *b, const mock_reply *r);
    /* The opening events; true when the stream fault was sent among them (Anthropic error-0). */
    bool (*pre)(mock_stream *s, util_buf *b);
    void (*piece)(mock_stream *s, util_buf *b);
    void (*fault)(mock_stream *s, util_buf *b); /* MOCK_END_MALFORMED and MOCK_END_ERROR */
    void (*post)(mock_stream *s, util_buf *b);
};

extern const mock_api_ops mock_api_chat, mock_api_completions, mock_api_responses,
    mock_api_embeddings, mock_api_messages, mock_api_count_tokens, mock_api_gemini,
    mock_api_gemini_count, mock_api_models, mock_api_model, mock_api_gemini_embed,
    mock_api_gemini_batch_embed;
/* OpenAI's (and Azure's) embeddings, or Gemini's: no completion tokens, a vector per input. */
bool mock_api_is_embeddings(const mock_api_ops *ops);

/* ---- content (content.c) ---- */

#define MOCK_PIECE_MAX 32
/* Bytes of JSON text per token of a structured answer. */
#define MOCK_JSON_PIECE 4

/* The raw bytes of piece k (a filler word with its leading space, or a slice of the JSON). */
size_t mock_piece(const mock_reply *r, int64_t k, char out[MOCK_PIECE_MAX]);
/* Piece k, JSON-escaped (no quotes). */
void mock_piece_json(util_buf *b, const mock_reply *r, int64_t k);
/* The whole answer text (all r->tokens pieces), JSON-escaped (no quotes). */
void mock_text_json(util_buf *b, const mock_reply *r);
/* Tokens a JSON answer takes whole: ceil(len / MOCK_JSON_PIECE). */
int64_t mock_json_tokens(size_t len);
/* Did the answer stop at max_tokens (not a refusal, not a tool call)? */
bool mock_reply_hit_max(const mock_reply *r);
/* The filler's k-th word with its leading space (none for k == 0). */
const char *mock_wire_word(int64_t k, bool *leading_space);
/* Characters of UTF-8 text (prompt tokens are ceil(chars / 4)). */
int64_t mock_wire_chars(const char *utf8);
/* Characters of a message content: a string, or the "text" of its parts. */
int64_t mock_content_chars(const cJSON *content);

/* ---- streams (stream.c) ---- */

void mock_stream_init(mock_stream *s, const mock_reply *r, const mock_api_ops *ops,
                      mock_stream_end end, int64_t end_after);
/* Append the next step's events to b and advance. Does nothing at MOCK_STEP_END. */
void mock_stream_emit(mock_stream *s, util_buf *b);
/* About how many bytes the whole stream of r sends (its events as written, without a fault):
 * the opening and finish events and the first MOCK_STREAM_SAMPLE content steps written, the
 * rest extrapolated from them. For the --max-response check before a byte goes. */
#define MOCK_STREAM_SAMPLE 64
size_t mock_stream_estimate(const mock_reply *r, const mock_api_ops *ops);
/* Is this stream's end a fault (not a normal end, not only a missing terminator)? */
bool mock_stream_faulty(const mock_stream *s);

/* ---- errors (errors.c) ---- */

/* The provider's error body for an HTTP status and flavour; message NULL: the usual one. */
void mock_wire_error(util_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                     const char *message);
/* The in-band error of a stream, in the dialect's own shape: the text of the event's data. */
void mock_wire_stream_error(util_buf *b, const mock_reply *r);

/* ---- shared request checks (request.c) ---- */

/* The model: the path's (Azure's deployment), else the body's, required with `missing`. */
bool mock_parse_model(const cJSON *root, mock_reply *r, mock_store *st, const char *missing,
                      char *msg, size_t msglen);
/* Common fields: "stream" (a boolean), the token cap under one of the given keys. */
bool mock_parse_stream(const cJSON *root, mock_reply *r, char *msg, size_t msglen);
bool mock_parse_max_tokens(const cJSON *root, const char *const *keys, size_t n_keys, mock_reply *r,
                           char *msg, size_t msglen);
/* Set the message and return false (for the parsers' early exits). */
bool mock_bad(char *msg, size_t msglen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* MOCK_API_H */
