/*
 * wire.h - what the live driver sends to a provider and how it reads the answer.
 *
 * Two dialects, read as the official SDKs read them (openai-node v6.49.0,
 * src/client.ts): OpenAI chat completions (POST /v1/chat/completions) and
 * Anthropic messages (POST /v1/messages). A request carries a prompt of filler words of four
 * characters each, so that a provider estimating tokens as characters / 4
 * (the mock does) bills exactly the scenario's prompt tokens, and asks for
 * the scenario's completion tokens as the output limit.
 *
 * Reading: an error body's error.type / error.code / error.message reduce
 * to an fb_error_kind; a complete body gives the output tokens (usage) and
 * whether the model refused; a stream is read event by event (sse.h) into a
 * live_stream: content tokens, the terminator ([DONE] / message_stop), an
 * in-band error, a malformed event, a refusal.
 */
#ifndef LIVE_WIRE_H
#define LIVE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/classify.h"
#include "util/buf.h"

typedef enum live_dialect { LIVE_OPENAI = 0, LIVE_ANTHROPIC } live_dialect;

#define LIVE_PROMPT_TOKENS_MAX 1000000u /* longer prompts are sent this long */

/* "openai" / "anthropic" -> dialect; FB_EINVAL otherwise. */
int live_dialect_parse(const char *s, live_dialect *out);
const char *live_dialect_name(live_dialect d);
/* The dialect a provider's name suggests: Anthropic when it says "anthropic" or "claude". */
live_dialect live_dialect_guess(const char *provider);
/* The request path: "/v1/chat/completions" or "/v1/messages". */
const char *live_dialect_path(live_dialect d);

/* Append the JSON body of one request to b (NUL-terminated; b->len excludes the NUL). */
void live_wire_request(util_buf *b, live_dialect d, const char *model, uint32_t tokens_in,
                       uint32_t tokens_out, bool stream);

/* The provider error in an error body (either dialect); FB_ERRKIND_NONE when there is none. */
fb_error_kind live_wire_error_kind(const char *body, size_t len);

/*
 * What an answer says about itself, for traces: the model that answered, the
 * reason it stopped (finish_reason / stop_reason) and the prompt tokens its
 * usage reports (0 = none). Strings keep printable ASCII only and stop at a
 * backslash: they come from the target, and go into JSON.
 */
typedef struct live_meta {
    char model[96];
    char finish[32];
    uint32_t tokens_in;
} live_meta;

/*
 * A complete success body: the output tokens from its usage and whether the
 * model refused (finish_reason content_filter / stop_reason refusal), and its
 * meta when `meta` is not NULL. FB_EPARSE when the body is not a whole
 * answer of the dialect.
 */
int live_wire_success(live_dialect d, const char *body, size_t len, uint32_t *tokens_out,
                      bool *refused, live_meta *meta);

typedef struct live_stream {
    live_dialect dialect;
    uint32_t chunks;          /* content events (the first one is the first token) */
    uint32_t usage_tokens;    /* output tokens the stream's usage reported; 0 = none */
    bool done;                /* the terminator arrived */
    bool error;               /* an in-band error event */
    fb_error_kind error_kind; /* of the in-band error (never NONE when error is set) */
    bool malformed;           /* an event whose data is not a JSON object */
    bool refused;
    live_meta meta; /* the first model named, the last stop reason, the prompt tokens */
} live_stream;

void live_stream_init(live_stream *st, live_dialect d);
/* One SSE event (an sse.h callback's arguments). */
void live_stream_event(live_stream *st, const char *event, const char *data, size_t len);
/* Output tokens the stream delivered: its usage when reported, else its content events. */
uint32_t live_stream_tokens(const live_stream *st);

#endif /* LIVE_WIRE_H */
