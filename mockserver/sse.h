/*
 * sse.h - reading a server-sent-events stream one event at a time, for the proxy: where the
 * next complete event ends, and what it is (a content event, the stream's terminator, or
 * anything else), so that scripted stream faults count the real answer's tokens. Pure: bytes
 * in, answers out.
 */
#ifndef MOCK_SSE_H
#define MOCK_SSE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum mock_sse_kind {
    MOCK_SSE_OTHER = 0, /* opening, bookkeeping and finishing events, pings, comments */
    MOCK_SSE_CONTENT,   /* one piece of the answer: a token, or a fragment of a tool call */
    MOCK_SSE_TERMINATOR /* data: [DONE], message_stop, response.completed / .incomplete */
} mock_sse_kind;

/*
 * The length of the first complete event in p[0..n), its blank line included ("\n\n",
 * "\r\n\r\n" or "\r\r"); 0 when the bytes hold no complete event yet.
 */
size_t mock_sse_next(const char *p, size_t n);

/*
 * What an event is. A named event (an "event:" line) is content when its name is
 * content_block_delta (Anthropic) or ends in ".delta" (the Responses API); a terminator when
 * it is message_stop, response.completed or response.incomplete. An unnamed event is a
 * terminator when its data is [DONE] or carries a "finishReason" (Gemini's last chunk, which
 * ends its stream), and content when its data has a "content", "text", "arguments" or
 * "partial_json" member whose value is a non-empty string (OpenAI's chat and completion
 * chunks, Gemini's parts).
 */
mock_sse_kind mock_sse_classify(const char *ev, size_t n);

#endif /* MOCK_SSE_H */
