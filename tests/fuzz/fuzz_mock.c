/*
 * fuzz_mock.c - a libFuzzer target for the mock provider's readers: the per-request fault spec
 * (mockserver/spec.c, the x-fusebox-fault header and fb- models), fault timelines
 * (mock_faults_parse, through the scenario loader's sim_faults_parse), and each API's request
 * parser with the answer it then writes, whole and streamed (chat.c, messages.c, gemini.c, ...).
 *
 * Input: a first line, the fault spec; the rest, a request body. The body's first byte picks
 * the API and dialect, the rest is parsed as attempt.c parses a body (cJSON, an object) and
 * also read as a fault timeline. Whatever the bytes, a spec or a body is taken or refused
 * with a message; an answer is written to its end (at most 100 tokens per choice, as the
 * harness caps them) without a crash, a leak or undefined behaviour.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mockserver/api.h"
#include "mockserver/buf.h"
#include "mockserver/fault.h"
#include "sim/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const mock_api_ops *ops;
    mock_dialect dialect;
} apis[] = {
    {&mock_api_chat, MOCK_OPENAI},
    {&mock_api_chat, MOCK_AZURE},
    {&mock_api_completions, MOCK_OPENAI},
    {&mock_api_responses, MOCK_OPENAI},
    {&mock_api_embeddings, MOCK_OPENAI},
    {&mock_api_messages, MOCK_ANTHROPIC},
    {&mock_api_count_tokens, MOCK_ANTHROPIC},
    {&mock_api_gemini, MOCK_GEMINI},
    {&mock_api_gemini_count, MOCK_GEMINI},
    {&mock_api_models, MOCK_OPENAI},
    {&mock_api_model, MOCK_ANTHROPIC},
};

/* The answer as answer.c writes it: an error body, or the whole body, or every stream step. */
static void answer(const mock_api_ops *ops, mock_reply *r, const mock_action *act) {
    mock_buf b = {0};
    b.limit = 1 << 22;
    if (act->status != 0) {
        mock_wire_error(&b, r, act->status, act->flavor, NULL);
    } else if (!r->stream || ops->pre == NULL) {
        if (ops->body) ops->body(&b, r);
    } else {
        mock_stream st;
        mock_stream_init(&st, r, ops, act->end, act->end_after);
        for (int i = 0; i < 100000 && st.step != MOCK_STEP_END; i++) mock_stream_emit(&st, &b);
        if (st.step != MOCK_STEP_END) abort(); /* a stream of capped tokens must end */
        (void)mock_stream_faulty(&st);
        mock_wire_stream_error(&b, r);
    }
    mock_buf_free(&b);
}

static void request(const char *body, size_t len, const mock_action *act) {
    if (len == 0) return;
    size_t k = (unsigned char)body[0] % (sizeof apis / sizeof apis[0]);
    cJSON *root = cJSON_ParseWithLength(body + 1, len - 1);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return;
    }
    mock_store st;
    memset(&st, 0, sizeof st);
    mock_reply r = {.dialect = apis[k].dialect,
                    .model = "",
                    .n = 1,
                    .max_tokens = -1,
                    .context_window = 128000,
                    .id = "chatcmpl-fuzz",
                    .request_id = "req_fuzz",
                    .call_id = "call_fuzz",
                    .item_id = "msg_fuzz",
                    .api_version = "2024-10-21",
                    .operation = "ChatCompletions_Create"};
    char msg[900];
    if (apis[k].ops->parse == NULL || apis[k].ops->parse(root, &r, &st, msg, sizeof msg)) {
        if (r.model == NULL) r.model = st.model;
        int64_t t = r.output == MOCK_OUT_TOOL ? mock_json_tokens(r.json_len)
                                              : (act->tokens >= 0 ? act->tokens : 16);
        if (r.output != MOCK_OUT_TOOL && r.max_tokens >= 0 && t > r.max_tokens) t = r.max_tokens;
        r.tokens = t > 100 ? 100 : t;
        if (r.n > 4) r.n = 4;
        answer(apis[k].ops, &r, act);
    } else if (msg[0] == '\0') {
        abort(); /* a refusal says why */
    }
    cJSON_Delete(root);
    mock_buf_free(&st.json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *nl = strchr(text, '\n');
    const char *body = nl ? nl + 1 : "";
    if (nl) *nl = '\0';
    size_t body_len = nl ? size - (size_t)(body - text) : 0;
    mock_action act;
    mock_action_init(&act);
    mock_parse_error perr;
    if (mock_spec_parse(text, &act, &perr) != FB_OK) {
        if (perr.msg[0] == '\0') abort();
        mock_action_init(&act);
    }
    static sim_fault faults[SIM_FAULTS_MAX];
    size_t nf = 0;
    if (mock_faults_parse(body, body_len, faults, SIM_FAULTS_MAX, &nf, &perr) == FB_OK) {
        mock_action a;
        double scale;
        for (fb_time_us t = 0; t < 3600 * FB_US_PER_S; t += 60 * FB_US_PER_S) {
            mock_action_init(&a);
            mock_timeline_decide(faults, nf, t, 1, (uint64_t)t, &a, &scale);
        }
    }
    request(body, body_len, &act);
    free(text);
    return 0;
}
