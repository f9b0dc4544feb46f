/*
 * messages.c - Anthropic's messages API (POST /v1/messages) and its token counter
 * (POST /v1/messages/count_tokens): the message body with a text or tool_use block, and the
 * event stream message_start, content_block_start, ping, content_block_delta (text_delta or
 * input_json_delta), content_block_stop, message_delta, message_stop. The in-band error of
 * error-0 comes directly after message_start, before any content block. Shapes:
 * @anthropic-ai/sdk 1.14.0 src/resources/messages/messages.ts (Message, RawMessageStreamEvent,
 * MessageTokensCount) and src/lib/MessageStream.ts.
 */
#include <stdio.h>
#include <string.h>

#include "mockserver/api.h"
#include "mockserver/tools.h"

static const char *const cap_keys[] = {"max_tokens"};

/* model and messages are required; the prompt is the messages' text and the system prompt. */
static bool parse_prompt(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                         size_t msglen) {
    if (!mock_parse_model(root, r, st, "model: Field required", msg, msglen)) return false;
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    if (!cJSON_IsArray(msgs)) return mock_bad(msg, msglen, "messages: Field required");
    int64_t chars = mock_content_chars(cJSON_GetObjectItemCaseSensitive(root, "system"));
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) {
        chars += mock_content_chars(cJSON_GetObjectItemCaseSensitive(m, "content"));
    }
    r->prompt_tokens = (chars + 3) / 4;
    return true;
}

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    if (!parse_prompt(root, r, st, msg, msglen)) return false;
    if (!mock_parse_stream(root, r, msg, msglen)) return false;
    if (!mock_parse_max_tokens(root, cap_keys, 1, r, msg, msglen)) return false;
    if (r->max_tokens < 0) return mock_bad(msg, msglen, "max_tokens: Field required");
    r->n = 1;
    return mock_tools_messages(root, r, st, msg, msglen);
}

static const char *stop_reason(const mock_reply *r) {
    if (r->refusal) return "refusal";
    if (r->output == MOCK_OUT_TOOL) return "tool_use";
    return mock_reply_hit_max(r) ? "max_tokens" : "end_turn";
}

/* The content block; `whole`: with its text or input, else as content_block_start has it. */
static void block(util_buf *b, const mock_reply *r, bool whole) {
    if (r->output == MOCK_OUT_TOOL) {
        util_buf_printf(b, "{\"type\":\"tool_use\",\"id\":\"%s\",\"name\":", r->call_id);
        mock_buf_json_string(b, r->tool_name);
        util_buf_puts(b, ",\"input\":");
        if (whole)
            util_buf_append(b, r->json, r->json_len);
        else
            util_buf_puts(b, "{}");
        util_buf_puts(b, "}");
        return;
    }
    util_buf_puts(b, "{\"type\":\"text\",\"text\":\"");
    if (whole) mock_text_json(b, r);
    util_buf_puts(b, "\"}");
}

static void body(util_buf *b, const mock_reply *r) {
    int64_t tokens = r->refusal ? 0 : r->tokens;
    util_buf_printf(b,
                    "{\"id\":\"%s\",\"type\":\"message\",\"role\":\"assistant\",\"model\":", r->id);
    mock_buf_json_string(b, r->model);
    util_buf_puts(b, ",\"content\":[");
    if (tokens > 0) block(b, r, true);
    util_buf_printf(b,
                    "],\"stop_reason\":\"%s\",\"stop_sequence\":null,\"usage\":{"
                    "\"input_tokens\":%lld,\"output_tokens\":%lld,"
                    "\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0}}",
                    stop_reason(r), (long long)r->prompt_tokens, (long long)tokens);
}

static void event(util_buf *b, const char *name) {
    util_buf_printf(b, "event: %s\ndata: ", name);
}

static void error_event(mock_stream *s, util_buf *b) {
    event(b, "error");
    mock_wire_stream_error(b, &s->r);
    util_buf_puts(b, "\n\n");
}

static bool pre(mock_stream *s, util_buf *b) {
    event(b, "message_start");
    util_buf_printf(b,
                    "{\"type\":\"message_start\",\"message\":{\"id\":\"%s\",\"type\":"
                    "\"message\",\"role\":\"assistant\",\"content\":[],\"model\":",
                    s->r.id);
    mock_buf_json_string(b, s->r.model);
    util_buf_printf(b,
                    ",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":"
                    "%lld,\"output_tokens\":1,\"cache_creation_input_tokens\":0,"
                    "\"cache_read_input_tokens\":0}}}\n\n",
                    (long long)s->r.prompt_tokens);
    if (s->end == MOCK_END_ERROR && s->end_at == 0) { /* overloaded before any content */
        error_event(s, b);
        return true;
    }
    event(b, "content_block_start");
    util_buf_puts(b, "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":");
    block(b, &s->r, false);
    util_buf_puts(b, "}\n\n");
    event(b, "ping");
    util_buf_puts(b, "{\"type\": \"ping\"}\n\n");
    return false;
}

static void piece(mock_stream *s, util_buf *b) {
    bool tool = s->r.output == MOCK_OUT_TOOL;
    event(b, "content_block_delta");
    util_buf_printf(
        b, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"%s\",\"%s\":\"",
        tool ? "input_json_delta" : "text_delta", tool ? "partial_json" : "text");
    mock_piece_json(b, &s->r, s->k);
    util_buf_puts(b, "\"}}\n\n");
}

static void fault(mock_stream *s, util_buf *b) {
    if (s->end == MOCK_END_MALFORMED) {
        event(b, "content_block_delta");
        util_buf_puts(b, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\n\n");
        return;
    }
    error_event(s, b);
}

static void post(mock_stream *s, util_buf *b) {
    event(b, "content_block_stop");
    util_buf_puts(b, "{\"type\":\"content_block_stop\",\"index\":0}\n\n");
    event(b, "message_delta");
    util_buf_printf(b,
                    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\","
                    "\"stop_sequence\":null},\"usage\":{\"output_tokens\":%lld}}\n\n",
                    stop_reason(&s->r), (long long)s->r.tokens);
    if (s->end == MOCK_END_NOTERM) return;
    event(b, "message_stop");
    util_buf_puts(b, "{\"type\":\"message_stop\"}\n\n");
}

const mock_api_ops mock_api_messages = {"messages", true, parse, body, pre, piece, fault, post};

/* ---- count_tokens ---- */

static bool parse_count(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                        size_t msglen) {
    return parse_prompt(root, r, st, msg, msglen);
}

static void body_count(util_buf *b, const mock_reply *r) {
    util_buf_printf(b, "{\"input_tokens\":%lld}", (long long)r->prompt_tokens);
}

const mock_api_ops mock_api_count_tokens = {
    "messages.count_tokens", false, parse_count, body_count, NULL, NULL, NULL, NULL};
