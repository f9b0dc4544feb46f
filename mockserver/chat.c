/*
 * chat.c - OpenAI chat completions (POST /v1/chat/completions, and Azure's
 * /openai/deployments/{d}/chat/completions): the body, the chunk stream, tool calls. Shapes:
 * openai-node 6.49.0 src/resources/chat/completions/completions.ts (ChatCompletion,
 * ChatCompletionChunk) and src/lib/ChatCompletionStream.ts; Azure's prompt_filter_results as
 * the Azure OpenAI API sends them (docs/mock.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mockserver/openai.h"
#include "mockserver/tools.h"

static const char *const cap_keys[] = {"max_completion_tokens", "max_tokens"};

bool mock_oa_model(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    return mock_parse_model(root, r, st, "you must provide a model parameter", msg, msglen);
}

bool mock_oa_common(const cJSON *root, mock_reply *r, const char *const *keys, size_t n_keys,
                    char *msg, size_t msglen) {
    if (!mock_parse_stream(root, r, msg, msglen)) return false;
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
    r->include_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(so, "include_usage"));
    if (!mock_parse_max_tokens(root, keys, n_keys, r, msg, msglen)) return false;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "n");
    r->n = 1;
    if (n != NULL && !cJSON_IsNull(n)) {
        if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > 128 ||
            n->valuedouble != floor(n->valuedouble))
            return mock_bad(msg, msglen, "n: must be an integer in [1, 128]");
        r->n = (int)n->valuedouble;
    }
    return true;
}

/* A JSON value's type as OpenAI's messages name it ("an object", "a string", ...). */
static const char *type_name(const cJSON *v) {
    return cJSON_IsObject(v)   ? "an object"
           : cJSON_IsArray(v)  ? "an array"
           : cJSON_IsString(v) ? "a string"
           : cJSON_IsNumber(v) ? "a number"
           : cJSON_IsBool(v)   ? "a boolean"
                               : "null";
}

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    if (!mock_oa_model(root, r, st, msg, msglen)) return false;
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    if (!cJSON_IsArray(msgs))
        return mock_bad(msg, msglen, "Missing required parameter: 'messages'.");
    int64_t chars = 0;
    const cJSON *m;
    int i = 0;
    cJSON_ArrayForEach(m, msgs) {
        /* OpenAI's words for a message or a content of the wrong type (a 400 there too) */
        if (!cJSON_IsObject(m))
            return mock_bad(msg, msglen,
                            "Invalid type for 'messages[%d]': expected an object, but got %s "
                            "instead.",
                            i, type_name(m));
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (c != NULL && !cJSON_IsString(c) && !cJSON_IsArray(c) && !cJSON_IsNull(c))
            return mock_bad(msg, msglen,
                            "Invalid type for 'messages[%d].content': expected one of a string "
                            "or array of objects, but got %s instead.",
                            i, type_name(c));
        chars += mock_content_chars(c);
        i++;
    }
    r->prompt_tokens = (chars + 3) / 4;
    if (!mock_oa_common(root, r, cap_keys, 2, msg, msglen)) return false;
    return mock_tools_chat(root, r, st, msg, msglen);
}

const char *mock_oa_finish(const mock_reply *r) {
    if (r->refusal) return "content_filter";
    if (r->output == MOCK_OUT_TOOL) return "tool_calls";
    return mock_reply_hit_max(r) ? "length" : "stop";
}

void mock_oa_usage(util_buf *b, const mock_reply *r) {
    int64_t completion = (r->refusal ? 0 : r->tokens) * (r->n > 0 ? r->n : 1);
    util_buf_puts(b, "\"usage\":{\"prompt_tokens\":");
    mock_buf_int(b, r->prompt_tokens);
    util_buf_puts(b, ",\"completion_tokens\":");
    mock_buf_int(b, completion);
    util_buf_puts(b, ",\"total_tokens\":");
    mock_buf_int(b, r->prompt_tokens + completion);
    util_buf_puts(b, "}");
}

/* Azure's content-filter annotations (empty: nothing was filtered). */
static void azure_prompt_filter(util_buf *b, const mock_reply *r) {
    if (r->dialect == MOCK_AZURE)
        util_buf_puts(b, "\"prompt_filter_results\":[{\"prompt_index\":0,"
                         "\"content_filter_results\":{}}],");
}

static void tool_call(util_buf *b, const mock_reply *r, bool whole) {
    /* Only a stream's deltas carry the call's index. */
    util_buf_printf(b,
                    "\"tool_calls\":[{%s\"id\":\"%s\",\"type\":\"function\","
                    "\"function\":{\"name\":",
                    whole ? "" : "\"index\":0,", r->call_id);
    mock_buf_json_string(b, r->tool_name);
    util_buf_puts(b, ",\"arguments\":\"");
    if (whole) mock_text_json(b, r);
    util_buf_puts(b, "\"}}]");
}

static void body(util_buf *b, const mock_reply *r) {
    util_buf_puts(b, "{\"id\":\"");
    util_buf_puts(b, r->id);
    util_buf_puts(b, "\",\"object\":\"chat.completion\",\"created\":");
    mock_buf_int(b, r->created_s);
    util_buf_puts(b, ",\"model\":");
    mock_buf_json_string(b, r->model);
    util_buf_puts(b, ",\"system_fingerprint\":\"fp_fusebox\",");
    azure_prompt_filter(b, r);
    util_buf_puts(b, "\"choices\":[");
    for (int i = 0; i < (r->n > 0 ? r->n : 1); i++) {
        util_buf_puts(b, i ? ",{\"index\":" : "{\"index\":");
        mock_buf_int(b, i);
        util_buf_puts(b, ",\"message\":{\"role\":\"assistant\",");
        if (r->output == MOCK_OUT_TOOL) {
            util_buf_puts(b, "\"content\":null,");
            tool_call(b, r, true);
        } else {
            util_buf_puts(b, "\"content\":\"");
            mock_text_json(b, r);
            util_buf_puts(b, "\"");
        }
        util_buf_puts(b, ",\"refusal\":null},\"logprobs\":null,\"finish_reason\":\"");
        util_buf_puts(b, mock_oa_finish(r));
        util_buf_puts(b, r->dialect == MOCK_AZURE ? "\",\"content_filter_results\":{}}" : "\"}");
    }
    util_buf_puts(b, "],");
    mock_oa_usage(b, r);
    util_buf_puts(b, "}");
}

void mock_oa_chunk_head(util_buf *b, const mock_stream *s, const char *object) {
    util_buf_puts(b, "data: {\"id\":\"");
    util_buf_puts(b, s->r.id);
    util_buf_puts(b, "\",\"object\":\"");
    util_buf_puts(b, object);
    util_buf_puts(b, "\",\"created\":");
    mock_buf_int(b, s->r.created_s);
    util_buf_puts(b, ",\"model\":");
    mock_buf_json_string(b, s->r.model);
    util_buf_puts(b, ",\"system_fingerprint\":\"fp_fusebox\",\"choices\":[");
}

void mock_oa_chunk_tail(util_buf *b, const mock_stream *s) {
    util_buf_puts(b, s->r.include_usage ? "],\"usage\":null}\n\n" : "]}\n\n");
}

static bool pre(mock_stream *s, util_buf *b) {
    if (s->r.dialect == MOCK_AZURE) { /* Azure opens with the prompt's filter results */
        util_buf_puts(b, "data: {\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\","
                         "\"object\":\"\",");
        azure_prompt_filter(b, &s->r);
        b->len--; /* the trailing comma */
        util_buf_puts(b, "}\n\n");
    }
    for (int i = 0; i < s->r.n; i++) {
        mock_oa_chunk_head(b, s, "chat.completion.chunk");
        util_buf_printf(b, "{\"index\":%d,\"delta\":{\"role\":\"assistant\",", i);
        if (s->r.output == MOCK_OUT_TOOL) {
            util_buf_puts(b, "\"content\":null,");
            tool_call(b, &s->r, false);
        } else {
            util_buf_puts(b, "\"content\":\"\"");
        }
        util_buf_puts(b, ",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}");
        mock_oa_chunk_tail(b, s);
    }
    return false;
}

static void piece(mock_stream *s, util_buf *b) {
    for (int i = 0; i < s->r.n; i++) {
        mock_oa_chunk_head(b, s, "chat.completion.chunk");
        util_buf_puts(b, "{\"index\":");
        mock_buf_int(b, i);
        util_buf_puts(b, ",\"delta\":{");
        util_buf_puts(b, s->r.output == MOCK_OUT_TOOL
                             ? "\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\""
                             : "\"content\":\"");
        mock_piece_json(b, &s->r, s->k);
        util_buf_puts(b, s->r.output == MOCK_OUT_TOOL ? "\"}}]" : "\"");
        util_buf_puts(b, "},\"logprobs\":null,\"finish_reason\":null}");
        mock_oa_chunk_tail(b, s);
    }
}

void mock_oa_fault(util_buf *b, const mock_stream *s, const char *object, const char *broken) {
    if (s->end == MOCK_END_MALFORMED) { /* a chunk cut inside a string: not JSON */
        mock_oa_chunk_head(b, s, object);
        util_buf_puts(b, broken);
        util_buf_puts(b, "\n\n");
        return;
    }
    util_buf_puts(b, "data: ");
    mock_wire_stream_error(b, &s->r);
    util_buf_puts(b, "\n\n");
}

static void fault(mock_stream *s, util_buf *b) {
    mock_oa_fault(b, s, "chat.completion.chunk", "{\"index\":0,\"delta\":{\"content\":\"broken");
}

void mock_oa_stream_end(util_buf *b, const mock_stream *s, const char *object) {
    if (s->r.include_usage) {
        mock_oa_chunk_head(b, s, object);
        util_buf_puts(b, "],");
        mock_oa_usage(b, &s->r);
        util_buf_puts(b, "}\n\n");
    }
    if (s->end != MOCK_END_NOTERM) util_buf_puts(b, "data: [DONE]\n\n");
}

static void post(mock_stream *s, util_buf *b) {
    for (int i = 0; i < s->r.n; i++) {
        mock_oa_chunk_head(b, s, "chat.completion.chunk");
        util_buf_printf(b, "{\"index\":%d,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"%s\"}",
                        i, mock_oa_finish(&s->r));
        mock_oa_chunk_tail(b, s);
    }
    mock_oa_stream_end(b, s, "chat.completion.chunk");
}

const mock_api_ops mock_api_chat = {"chat.completions", true, parse, body, pre, piece, fault, post};
