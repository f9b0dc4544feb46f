/*
 * models.c - the model lists and single models: OpenAI's GET /v1/models and /v1/models/{id},
 * Anthropic's (the same paths with an anthropic-version header), Gemini's GET /v1beta/models
 * and /v1beta/models/{m}. Every model name exists: the mock serves whatever it is asked for.
 * Shapes: openai-node 6.49.0 src/resources/models.ts, @anthropic-ai/sdk 1.14.0
 * src/resources/models.ts (ModelInfo), @google/genai 2.32.0 (Model).
 */
#include <string.h>

#include "mockserver/api.h"

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    (void)root;
    (void)msg;
    (void)msglen;
    r->model = st->model;
    return true;
}

static void one(util_buf *b, const mock_reply *r, const char *id) {
    switch (r->dialect) {
    case MOCK_ANTHROPIC:
        util_buf_puts(b, "{\"type\":\"model\",\"id\":");
        mock_buf_json_string(b, id);
        util_buf_puts(b, ",\"display_name\":");
        mock_buf_json_string(b, id);
        util_buf_puts(b, ",\"created_at\":\"2025-09-29T00:00:00Z\"}");
        break;
    case MOCK_GEMINI:
        util_buf_puts(b, "{\"name\":\"models/");
        mock_buf_json_escape(b, id, strlen(id));
        util_buf_puts(b, "\",\"version\":\"001\",\"displayName\":");
        mock_buf_json_string(b, id);
        util_buf_puts(b, ",\"inputTokenLimit\":1048576,\"outputTokenLimit\":65536,"
                         "\"supportedGenerationMethods\":[\"generateContent\",\"countTokens\"]}");
        break;
    default:
        util_buf_puts(b, "{\"id\":");
        mock_buf_json_string(b, id);
        util_buf_puts(b, ",\"object\":\"model\",\"created\":1715367049,\"owned_by\":\"fusebox\"}");
        break;
    }
}

static void body_list(util_buf *b, const mock_reply *r) {
    static const char *const ids[][2] = {{"gpt-4o-mini", "gpt-4o"},
                                         {"claude-sonnet-4-5", "claude-haiku-4-5"},
                                         {"gpt-4o-mini", "gpt-4o"},
                                         {"gemini-2.5-flash", "gemini-2.5-pro"}};
    const char *const *pair = ids[r->dialect];
    util_buf_puts(b, r->dialect == MOCK_GEMINI      ? "{\"models\":["
                     : r->dialect == MOCK_ANTHROPIC ? "{\"data\":["
                                                    : "{\"object\":\"list\",\"data\":[");
    one(b, r, pair[0]);
    util_buf_puts(b, ",");
    one(b, r, pair[1]);
    util_buf_puts(b, "]");
    if (r->dialect == MOCK_ANTHROPIC)
        util_buf_printf(b, ",\"has_more\":false,\"first_id\":\"%s\",\"last_id\":\"%s\"", pair[0],
                        pair[1]);
    util_buf_puts(b, "}");
}

static void body_one(util_buf *b, const mock_reply *r) {
    one(b, r, r->model);
}

const mock_api_ops mock_api_models = {"models.list", false, parse, body_list,
                                      NULL,          NULL,  NULL,  NULL};
const mock_api_ops mock_api_model = {
    "models.retrieve", false, parse, body_one, NULL, NULL, NULL, NULL};
