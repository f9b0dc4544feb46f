/*
 * completions.c - OpenAI's legacy completions (POST /v1/completions, and Azure's deployment
 * path): "text_completion" bodies and chunks. Shapes: openai-node 6.49.0
 * src/resources/completions.ts (Completion, CompletionChoice).
 */
#include "mockserver/openai.h"

static const char *const cap_keys[] = {"max_tokens"};

static int64_t prompt_chars(const cJSON *prompt) {
    if (cJSON_IsString(prompt)) return mock_wire_chars(prompt->valuestring);
    int64_t n = 0;
    const cJSON *p;
    const cJSON *list = cJSON_IsArray(prompt) ? prompt : NULL;
    cJSON_ArrayForEach(p, list) {
        n += cJSON_IsString(p) ? mock_wire_chars(p->valuestring) : 4 * cJSON_GetArraySize(p);
    }
    return n;
}

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    if (!mock_oa_model(root, r, st, msg, msglen)) return false;
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(root, "prompt");
    if (prompt == NULL) return mock_bad(msg, msglen, "Missing required parameter: 'prompt'.");
    if (!cJSON_IsString(prompt) && !cJSON_IsArray(prompt))
        return mock_bad(msg, msglen, "prompt: must be a string or an array");
    r->prompt_tokens = (prompt_chars(prompt) + 3) / 4;
    return mock_oa_common(root, r, cap_keys, 1, msg, msglen);
}

static void body(util_buf *b, const mock_reply *r) {
    util_buf_printf(b, "{\"id\":\"%s\",\"object\":\"text_completion\",\"created\":%lld,\"model\":",
                    r->id, (long long)r->created_s);
    mock_buf_json_string(b, r->model);
    util_buf_puts(b, ",\"system_fingerprint\":\"fp_fusebox\",\"choices\":[");
    for (int i = 0; i < (r->n > 0 ? r->n : 1); i++) {
        util_buf_printf(b, "%s{\"text\":\"", i ? "," : "");
        mock_text_json(b, r);
        util_buf_printf(b, "\",\"index\":%d,\"logprobs\":null,\"finish_reason\":\"%s\"}", i,
                        mock_oa_finish(r));
    }
    util_buf_puts(b, "],");
    mock_oa_usage(b, r);
    util_buf_puts(b, "}");
}

static bool pre(mock_stream *s, util_buf *b) {
    (void)s;
    (void)b; /* the legacy stream has no opening chunk */
    return false;
}

static void choice(mock_stream *s, util_buf *b, int i, bool text, const char *finish) {
    mock_oa_chunk_head(b, s, "text_completion");
    util_buf_puts(b, "{\"text\":\"");
    if (text) mock_piece_json(b, &s->r, s->k);
    util_buf_printf(b, "\",\"index\":%d,\"logprobs\":null,\"finish_reason\":", i);
    if (finish != NULL)
        util_buf_printf(b, "\"%s\"}", finish);
    else
        util_buf_puts(b, "null}");
    mock_oa_chunk_tail(b, s);
}

static void piece(mock_stream *s, util_buf *b) {
    for (int i = 0; i < s->r.n; i++) choice(s, b, i, true, NULL);
}

static void fault(mock_stream *s, util_buf *b) {
    mock_oa_fault(b, s, "text_completion", "{\"text\":\"broken");
}

static void post(mock_stream *s, util_buf *b) {
    for (int i = 0; i < s->r.n; i++) choice(s, b, i, false, mock_oa_finish(&s->r));
    mock_oa_stream_end(b, s, "text_completion");
}

const mock_api_ops mock_api_completions = {"completions", true,  parse, body,
                                           pre,           piece, fault, post};
