/*
 * gemini.c - Google's Gemini API: POST /v1beta/models/{m}:generateContent, its stream
 * (:streamGenerateContent?alt=sse: each event a whole GenerateContentResponse holding the new
 * text, "\r\n\r\n" between events, no terminator but the chunk with finishReason) and
 * :countTokens. A tool call is one functionCall part, sent whole in the first chunk. Shapes:
 * @google/genai 2.32.0 dist/node/index.mjs (GenerateContentResponse, processStreamResponse,
 * throwIfStreamErrorChunk).
 */
#include <stdio.h>
#include <string.h>

#include "mockserver/api.h"
#include "mockserver/tools.h"

static int64_t parts_chars(const cJSON *content) {
    return mock_content_chars(cJSON_GetObjectItemCaseSensitive(content, "parts"));
}

/* The model comes from the path (st->model); contents is required. */
static bool parse_prompt(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                         size_t msglen) {
    r->model = st->model;
    const cJSON *contents = cJSON_GetObjectItemCaseSensitive(root, "contents");
    if (!cJSON_IsArray(contents))
        return mock_bad(msg, msglen,
                        "* GenerateContentRequest.contents: contents is not specified");
    int64_t chars = parts_chars(cJSON_GetObjectItemCaseSensitive(root, "systemInstruction"));
    const cJSON *c;
    cJSON_ArrayForEach(c, contents) chars += parts_chars(c);
    r->prompt_tokens = (chars + 3) / 4;
    return true;
}

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    if (!parse_prompt(root, r, st, msg, msglen)) return false;
    r->n = 1;
    r->max_tokens = -1;
    const cJSON *gc = cJSON_GetObjectItemCaseSensitive(root, "generationConfig");
    static const char *const cap_keys[] = {"maxOutputTokens"};
    bool stream = r->stream; /* decided by the path, not the body */
    if (gc != NULL && !mock_parse_max_tokens(gc, cap_keys, 1, r, msg, msglen)) return false;
    r->stream = stream;
    return mock_tools_gemini(root, r, st, msg, msglen);
}

static const char *finish_reason(const mock_reply *r) {
    if (r->refusal) return "SAFETY";
    return mock_reply_hit_max(r) ? "MAX_TOKENS" : "STOP";
}

static void usage(util_buf *b, const mock_reply *r, int64_t out) {
    util_buf_printf(b,
                    "\"usageMetadata\":{\"promptTokenCount\":%lld,\"candidatesTokenCount\":%lld,"
                    "\"totalTokenCount\":%lld,\"promptTokensDetails\":[{\"modality\":\"TEXT\","
                    "\"tokenCount\":%lld}]},\"modelVersion\":",
                    (long long)r->prompt_tokens, (long long)out,
                    (long long)(r->prompt_tokens + out), (long long)r->prompt_tokens);
    mock_buf_json_string(b, r->model);
    util_buf_printf(b, ",\"responseId\":\"%s\"}", r->id);
}

/* One response: a candidate with the parts `write` appends, finishReason when `finish`. */
static void response(util_buf *b, const mock_reply *r, const mock_stream *s, bool finish,
                     int64_t out) {
    util_buf_puts(b, "{\"candidates\":[{\"content\":{\"parts\":[");
    if (r->output == MOCK_OUT_TOOL && (s == NULL || (s->k == 0 && !finish))) {
        util_buf_puts(b, "{\"functionCall\":{\"name\":");
        mock_buf_json_string(b, r->tool_name);
        util_buf_puts(b, ",\"args\":");
        util_buf_append(b, r->json, r->json_len);
        util_buf_puts(b, "}}");
    } else {
        util_buf_puts(b, "{\"text\":\"");
        if (s == NULL)
            mock_text_json(b, r);
        else if (!finish && r->output != MOCK_OUT_TOOL)
            mock_piece_json(b, r, s->k);
        util_buf_puts(b, "\"}");
    }
    util_buf_puts(b, "],\"role\":\"model\"}");
    if (finish) util_buf_printf(b, ",\"finishReason\":\"%s\"", finish_reason(r));
    util_buf_puts(b, ",\"index\":0}],");
    usage(b, r, out);
}

static void body(util_buf *b, const mock_reply *r) {
    response(b, r, NULL, true, r->refusal ? 0 : r->tokens);
}

static bool pre(mock_stream *s, util_buf *b) {
    (void)s;
    (void)b; /* the first chunk already carries text */
    return false;
}

static void piece(mock_stream *s, util_buf *b) {
    if (s->r.output == MOCK_OUT_TOOL && s->k > 0) return; /* the call went whole in chunk 0 */
    util_buf_puts(b, "data: ");
    response(b, &s->r, s, false, s->k + 1);
    util_buf_puts(b, "\r\n\r\n");
}

static void fault(mock_stream *s, util_buf *b) {
    if (s->end == MOCK_END_MALFORMED) {
        util_buf_puts(b,
                      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"broken\r\n\r\n");
        return;
    }
    util_buf_puts(b, "data: ");
    mock_wire_stream_error(b, &s->r);
    util_buf_puts(b, "\r\n\r\n");
}

static void post(mock_stream *s, util_buf *b) {
    if (s->end == MOCK_END_NOTERM) return; /* the finishing chunk is the stream's end */
    util_buf_puts(b, "data: ");
    response(b, &s->r, s, true, s->r.tokens);
    util_buf_puts(b, "\r\n\r\n");
}

const mock_api_ops mock_api_gemini = {
    "generateContent", true, parse, body, pre, piece, fault, post};

/* ---- countTokens ---- */

static void body_count(util_buf *b, const mock_reply *r) {
    util_buf_printf(b,
                    "{\"totalTokens\":%lld,\"promptTokensDetails\":[{\"modality\":\"TEXT\","
                    "\"tokenCount\":%lld}]}",
                    (long long)r->prompt_tokens, (long long)r->prompt_tokens);
}

const mock_api_ops mock_api_gemini_count = {"countTokens", false, parse_prompt, body_count,
                                            NULL,          NULL,  NULL,         NULL};
