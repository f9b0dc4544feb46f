/*
 * responses.c - OpenAI's Responses API (POST /v1/responses, Azure's /openai/responses): the
 * response object, and its typed event stream: response.created, response.in_progress,
 * response.output_item.added, response.content_part.added, one response.output_text.delta
 * (or response.function_call_arguments.delta) per token, the matching .done events,
 * response.output_item.done and response.completed (response.incomplete at max_output_tokens
 * or on a content filter). In-band faults send an error event, then response.failed.
 * Shapes: openai-node 6.49.0 src/resources/responses/responses.ts and
 * src/lib/responses/ResponseAccumulator.ts; @ai-sdk/openai 3.0.141 dist/index.mjs
 * (openaiResponsesChunkSchema), which validates every event.
 */
#include <stdio.h>
#include <string.h>

#include "mockserver/api.h"
#include "mockserver/tools.h"

static const char *const cap_keys[] = {"max_output_tokens"};

/* Characters of an input item: a message's content, or a tool result's output. */
static int64_t item_chars(const cJSON *item) {
    if (cJSON_IsString(item)) return mock_wire_chars(item->valuestring);
    int64_t n = mock_content_chars(cJSON_GetObjectItemCaseSensitive(item, "content"));
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(item, "output");
    return n + (cJSON_IsString(out) ? mock_wire_chars(out->valuestring) : 0);
}

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    if (!mock_parse_model(root, r, st, "Missing required parameter: 'model'.", msg, msglen))
        return false;
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!cJSON_IsString(input) && !cJSON_IsArray(input))
        return mock_bad(msg, msglen, "Missing required parameter: 'input'.");
    int64_t chars = cJSON_IsString(input) ? item_chars(input) : 0;
    const cJSON *item;
    const cJSON *list = cJSON_IsArray(input) ? input : NULL;
    cJSON_ArrayForEach(item, list) chars += item_chars(item);
    const cJSON *instructions = cJSON_GetObjectItemCaseSensitive(root, "instructions");
    if (cJSON_IsString(instructions)) chars += mock_wire_chars(instructions->valuestring);
    r->prompt_tokens = (chars + 3) / 4;
    r->n = 1;
    if (!mock_parse_stream(root, r, msg, msglen)) return false;
    if (!mock_parse_max_tokens(root, cap_keys, 1, r, msg, msglen)) return false;
    return mock_tools_responses(root, r, st, msg, msglen);
}

static const char *final_status(const mock_reply *r) {
    return r->refusal || mock_reply_hit_max(r) ? "incomplete" : "completed";
}

/* The output item: a message with one output_text part, or a function call. */
static void item(util_buf *b, const mock_reply *r, const char *status, bool whole) {
    if (r->output == MOCK_OUT_TOOL) {
        util_buf_printf(
            b, "{\"id\":\"%s\",\"type\":\"function_call\",\"status\":\"%s\",\"arguments\":\"",
            r->item_id, status);
        if (whole) mock_text_json(b, r);
        util_buf_printf(b, "\",\"call_id\":\"%s\",\"name\":", r->call_id);
        mock_buf_json_string(b, r->tool_name);
        util_buf_puts(b, "}");
        return;
    }
    util_buf_printf(b, "{\"id\":\"%s\",\"type\":\"message\",\"status\":\"%s\",\"content\":[",
                    r->item_id, status);
    if (whole) {
        util_buf_puts(b,
                      "{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"");
        mock_text_json(b, r);
        util_buf_puts(b, "\"}");
    }
    util_buf_puts(b, "],\"role\":\"assistant\"}");
}

static void usage(util_buf *b, const mock_reply *r) {
    int64_t out = r->refusal ? 0 : r->tokens;
    util_buf_printf(b,
                    "{\"input_tokens\":%lld,\"input_tokens_details\":{\"cached_tokens\":0},"
                    "\"output_tokens\":%lld,\"output_tokens_details\":{\"reasoning_tokens\":0},"
                    "\"total_tokens\":%lld}",
                    (long long)r->prompt_tokens, (long long)out,
                    (long long)(r->prompt_tokens + out));
}

/* The response object in one of its states; "in_progress" has no output and no usage yet. */
static void object(util_buf *b, const mock_reply *r, const char *status) {
    bool done = strcmp(status, "in_progress") != 0;
    util_buf_printf(b,
                    "{\"id\":\"%s\",\"object\":\"response\",\"created_at\":%lld,\"status\":\"%s\","
                    "\"background\":false,\"error\":",
                    r->id, (long long)r->created_s, status);
    util_buf_puts(b, strcmp(status, "failed") == 0
                         ? "{\"code\":\"server_error\",\"message\":\"The server had an error while "
                           "processing your request. Sorry about that!\"}"
                         : "null");
    util_buf_puts(b, ",\"incomplete_details\":");
    if (strcmp(status, "incomplete") == 0)
        util_buf_printf(b, "{\"reason\":\"%s\"}",
                        r->refusal ? "content_filter" : "max_output_tokens");
    else
        util_buf_puts(b, "null");
    util_buf_puts(b, ",\"instructions\":null,\"max_output_tokens\":");
    if (r->max_tokens >= 0)
        util_buf_printf(b, "%lld", (long long)r->max_tokens);
    else
        util_buf_puts(b, "null");
    util_buf_puts(b, ",\"model\":");
    mock_buf_json_string(b, r->model);
    util_buf_puts(b, ",\"output\":[");
    if (done && strcmp(status, "failed") != 0) item(b, r, "completed", true);
    util_buf_puts(b,
                  "],\"parallel_tool_calls\":true,\"previous_response_id\":null,"
                  "\"reasoning\":{\"effort\":null,\"summary\":null},\"service_tier\":\"default\","
                  "\"store\":true,\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"}},"
                  "\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,\"truncation\":\"disabled\","
                  "\"usage\":");
    if (done)
        usage(b, r);
    else
        util_buf_puts(b, "null");
    util_buf_puts(b, ",\"user\":null,\"metadata\":{}}");
}

static void body(util_buf *b, const mock_reply *r) {
    object(b, r, final_status(r));
}

/* "event: TYPE\ndata: {"type":TYPE,"sequence_number":N," — the caller writes the rest. */
static void event(mock_stream *s, util_buf *b, const char *type) {
    util_buf_printf(b, "event: %s\ndata: {\"type\":\"%s\",\"sequence_number\":%lld,", type, type,
                    (long long)s->seq++);
}

static void lifecycle(mock_stream *s, util_buf *b, const char *type, const char *status) {
    event(s, b, type);
    util_buf_puts(b, "\"response\":");
    object(b, &s->r, status);
    util_buf_puts(b, "}\n\n");
}

static bool text_item(const mock_stream *s) {
    return s->r.output != MOCK_OUT_TOOL;
}

/* The part's position: item_id, output_index 0 and (for a message) content_index 0. */
static void where(mock_stream *s, util_buf *b) {
    util_buf_printf(b, "\"item_id\":\"%s\",\"output_index\":0,", s->r.item_id);
    if (text_item(s)) util_buf_puts(b, "\"content_index\":0,");
}

static bool pre(mock_stream *s, util_buf *b) {
    lifecycle(s, b, "response.created", "in_progress");
    lifecycle(s, b, "response.in_progress", "in_progress");
    event(s, b, "response.output_item.added");
    util_buf_puts(b, "\"output_index\":0,\"item\":");
    item(b, &s->r, "in_progress", false);
    util_buf_puts(b, "}\n\n");
    if (text_item(s)) {
        event(s, b, "response.content_part.added");
        where(s, b);
        util_buf_puts(b, "\"part\":{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],"
                         "\"text\":\"\"}}\n\n");
    }
    return false;
}

static void piece(mock_stream *s, util_buf *b) {
    event(s, b,
          text_item(s) ? "response.output_text.delta" : "response.function_call_arguments.delta");
    where(s, b);
    util_buf_puts(b, "\"delta\":\"");
    mock_piece_json(b, &s->r, s->k);
    util_buf_puts(b, text_item(s) ? "\",\"logprobs\":[]}\n\n" : "\"}\n\n");
}

static void fault(mock_stream *s, util_buf *b) {
    if (s->end == MOCK_END_MALFORMED) {
        event(s, b, "response.output_text.delta");
        util_buf_puts(b, "\"delta\":\"broken\n\n");
        return;
    }
    event(s, b, "error");
    util_buf_puts(b, "\"code\":\"server_error\",\"message\":\"The server had an error while "
                     "processing your request. Sorry about that!\",\"param\":null}\n\n");
    lifecycle(s, b, "response.failed", "failed");
}

static void post(mock_stream *s, util_buf *b) {
    event(s, b,
          text_item(s) ? "response.output_text.done" : "response.function_call_arguments.done");
    where(s, b);
    if (text_item(s)) {
        util_buf_puts(b, "\"text\":\"");
        mock_text_json(b, &s->r);
        util_buf_puts(b, "\",\"logprobs\":[]}\n\n");
        event(s, b, "response.content_part.done");
        where(s, b);
        util_buf_puts(b, "\"part\":{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],"
                         "\"text\":\"");
        mock_text_json(b, &s->r);
        util_buf_puts(b, "\"}}\n\n");
    } else {
        util_buf_puts(b, "\"name\":");
        mock_buf_json_string(b, s->r.tool_name);
        util_buf_puts(b, ",\"arguments\":\"");
        mock_text_json(b, &s->r);
        util_buf_puts(b, "\"}\n\n");
    }
    event(s, b, "response.output_item.done");
    util_buf_puts(b, "\"output_index\":0,\"item\":");
    item(b, &s->r, "completed", true);
    util_buf_puts(b, "}\n\n");
    if (s->end == MOCK_END_NOTERM) return; /* everything but the terminal event */
    const char *status = final_status(&s->r);
    lifecycle(s, b, strcmp(status, "completed") == 0 ? "response.completed" : "response.incomplete",
              status);
}

const mock_api_ops mock_api_responses = {"responses", true, parse, body, pre, piece, fault, post};
