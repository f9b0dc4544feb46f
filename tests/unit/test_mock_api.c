/*
 * test_mock_api.c - the mock's endpoints beyond chat and messages, and their dialects: the
 * Responses API, embeddings, legacy completions, models, count_tokens, Azure OpenAI, Gemini;
 * tools and structured output (the schema's minimal instance); every dialect's 429; the filler
 * and JSON escaping against the plain way of writing them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "mockserver/tools.h"
#include "tests/unit/mockhttp.h"

#define RESP "/v1/responses"
#define RESP_BODY "{\"model\":\"gpt-4o\",\"input\":\"hello there!\""
#define AZ_CHAT "/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
#define GEM "/v1beta/models/gemini-2.5-flash:generateContent"
#define GEM_STREAM "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
#define GEM_BODY "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hello there!\"}]}]"
#define WEATHER                                                                                    \
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":2},"         \
    "\"days\":{\"type\":\"integer\",\"minimum\":1}},\"required\":[\"city\",\"days\"]}"

static const char *const azure_key[] = {"api-key: k", NULL};
static const char *const gemini_key[] = {"x-goog-api-key: k", NULL};

/* ---- the text builders, against the plain way of writing them ------------------------------ */

/* The filler of T tokens is its words in turn, space-separated, whatever T is against the
 * 32-word cycle the builder copies whole. */
static void filler_text_is_its_words_in_turn(void **state) {
    (void)state;
    for (int64_t t = 0; t <= 100; t++) {
        mock_reply r = {.output = MOCK_OUT_TEXT, .tokens = t};
        util_buf got = {0}, want = {0};
        mock_text_json(&got, &r);
        for (int64_t k = 0; k < t; k++) {
            bool sp;
            const char *w = mock_wire_word(k, &sp);
            if (sp) util_buf_puts(&want, " ");
            util_buf_puts(&want, w);
        }
        assert_int_equal(got.len, want.len);
        if (t > 0) assert_memory_equal(got.p, want.p, want.len);
        util_buf_free(&got);
        util_buf_free(&want);
    }
    mock_reply r = {.output = MOCK_OUT_TEXT, .tokens = 40};
    util_buf small = {.cap = 100}; /* 40 words are 200-odd bytes: over the cap */
    mock_text_json(&small, &r);
    assert_int_equal(small.err, UTIL_BUF_FULL);
    util_buf_free(&small);
}

/* JSON escaping, eight plain bytes at a time, is the same as byte by byte: every byte value at
 * every place of texts of 1 to 19 bytes. */
static void json_escape_matches_the_byte_by_byte_rule(void **state) {
    (void)state;
    char text[19], e[8];
    for (size_t n = 1; n <= sizeof text; n++) {
        for (size_t at = 0; at < n; at++) {
            for (int c = 0; c < 256; c++) {
                memset(text, 'a', n);
                text[at] = (char)c;
                util_buf got = {0}, want = {0};
                mock_buf_json_escape(&got, text, n);
                for (size_t i = 0; i < n; i++) {
                    unsigned char x = (unsigned char)text[i];
                    if (x == '"' || x == '\\')
                        snprintf(e, sizeof e, "\\%c", x);
                    else if (x < 0x20)
                        snprintf(e, sizeof e, "\\u%04x", x);
                    else
                        snprintf(e, sizeof e, "%c", x);
                    util_buf_puts(&want, e);
                }
                assert_int_equal(got.len, want.len);
                assert_memory_equal(got.p, want.p, want.len);
                util_buf_free(&got);
                util_buf_free(&want);
            }
        }
    }
}

/* ---- the schema's minimal instance ---------------------------------------------------------- */

/* The minimal instance of a schema given as text, compared with the expected text. */
static void minimal_is(const char *schema, const char *want) {
    cJSON *s = cJSON_Parse(schema);
    assert_non_null(s);
    util_buf out = {0};
    char msg[256] = "";
    bool ok = mock_schema_minimal(s, s, &out, msg, sizeof msg);
    if (!ok) fail_msg("schema %s: %s", schema, msg);
    assert_string_equal(out.p, want);
    util_buf_free(&out);
    cJSON_Delete(s);
}

/* A schema that has no minimal instance within the limits: the message names why. */
static void minimal_fails(const char *schema, const char *why) {
    cJSON *s = cJSON_Parse(schema);
    assert_non_null(s);
    util_buf out = {0};
    char msg[256] = "";
    assert_false(mock_schema_minimal(s, s, &out, msg, sizeof msg));
    if (strstr(msg, why) == NULL) fail_msg("'%s' does not say '%s'", msg, why);
    util_buf_free(&out);
    cJSON_Delete(s);
}

static void schema_object_has_its_required_properties_in_order(void **state) {
    (void)state;
    minimal_is("{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"integer\",\"minimum\":3},"
               "\"a\":{\"type\":\"string\",\"minLength\":2},\"c\":{\"type\":\"boolean\"}},"
               "\"required\":[\"b\",\"a\"]}",
               "{\"b\":3,\"a\":\"aa\"}");
    minimal_is("{\"type\":\"object\",\"properties\":{\"x\":{}}}", "{}");
    minimal_is("{\"type\":\"OBJECT\",\"properties\":{\"x\":{\"type\":\"STRING\"}},"
               "\"required\":[\"x\"]}",
               "{\"x\":\"\"}"); /* Gemini's upper-case OpenAPI types */
}

static void schema_refs_enums_alternatives_and_merges(void **state) {
    (void)state;
    minimal_is("{\"type\":\"object\",\"properties\":{\"i\":{\"$ref\":\"#/$defs/item\"}},"
               "\"required\":[\"i\"],\"$defs\":{\"item\":{\"enum\":[\"red\",\"blue\"]}}}",
               "{\"i\":\"red\"}");
    minimal_is("{\"const\":{\"k\":[1,2]}}", "{\"k\":[1,2]}");
    minimal_is("{\"anyOf\":[{\"type\":\"number\",\"minimum\":7},{\"type\":\"string\"}]}", "7");
    minimal_is("{\"allOf\":[{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"null\"}},"
               "\"required\":[\"a\"]},{\"properties\":{\"b\":{\"type\":\"boolean\"}},"
               "\"required\":[\"b\"]}]}",
               "{\"a\":null,\"b\":false}");
    minimal_is("{\"type\":[\"null\",\"string\"],\"format\":\"date-time\"}",
               "\"1970-01-01T00:00:00Z\"");
    minimal_is("{\"type\":\"array\",\"minItems\":3,\"prefixItems\":[{\"type\":\"integer\"}],"
               "\"items\":{\"type\":\"string\",\"format\":\"email\"}}",
               "[0,\"a@example.com\",\"a@example.com\"]");
}

static void schema_numbers_move_into_their_range(void **state) {
    (void)state;
    minimal_is("{\"type\":\"integer\",\"exclusiveMinimum\":5}", "6");
    minimal_is("{\"type\":\"number\",\"maximum\":-2.5}", "-2.5");
    minimal_is("{\"type\":\"number\",\"exclusiveMinimum\":0.25}", "0.75");
    minimal_is("{\"type\":\"integer\",\"minimum\":1.5}", "2");
    /* Bounds a client moved into the description count (@ai-sdk/anthropic does so). */
    minimal_is("{\"type\":\"integer\",\"description\":\"minimum: 3; maximum: 9.\"}", "3");
    minimal_is("{\"type\":\"string\",\"description\":\"A name; min length: 2.\"}", "\"aa\"");
    minimal_is("{\"type\":\"number\",\"description\":\"no minimum: here\"}", "0");
}

static void schema_without_a_finite_instance_is_refused(void **state) {
    (void)state;
    minimal_fails("{\"type\":\"object\",\"properties\":{\"n\":{\"$ref\":\"#\"}},"
                  "\"required\":[\"n\"]}",
                  "deeper than");
    minimal_fails("{\"$ref\":\"#/$defs/missing\"}", "does not resolve");
    minimal_fails("{\"type\":\"string\",\"minLength\":2000000}", "too long");
    minimal_fails("{\"type\":\"array\",\"minItems\":90000,\"items\":{\"type\":\"string\","
                  "\"minLength\":100}}",
                  "over");
    minimal_fails("false", "allows no value");
}

/* ---- the Responses API ---------------------------------------------------------------------- */

static void responses_body_is_a_response_object(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, RESP, RESP_BODY ",\"max_output_tokens\":3}", NULL);
    assert_int_equal(r.status, 200);
    assert_true(th_has_hdr(&r, "x-request-id"));
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "object", NULL), "response");
    assert_memory_equal(th_jstr(j, "id", NULL), "resp_", 5);
    /* Stopped by max_output_tokens: incomplete, with the reason. */
    assert_string_equal(th_jstr(j, "status", NULL), "incomplete");
    assert_string_equal(th_jstr(j, "incomplete_details", "reason"), "max_output_tokens");
    const cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "output"), 0);
    assert_string_equal(th_jstr(item, "type", NULL), "message");
    assert_memory_equal(th_jstr(item, "id", NULL), "msg_", 4);
    const cJSON *part = cJSON_GetArrayItem(cJSON_GetObjectItem(item, "content"), 0);
    assert_string_equal(th_jstr(part, "type", NULL), "output_text");
    assert_string_equal(th_jstr(part, "text", NULL), "The mock provider");
    assert_int_equal((int)th_jnum(j, "usage", "input_tokens"), 3);
    assert_int_equal((int)th_jnum(j, "usage", "output_tokens"), 3);
    assert_int_equal((int)th_jnum(j, "usage", "total_tokens"), 6);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, RESP, RESP_BODY "}", NULL);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "status", NULL), "completed");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "incomplete_details")));
    cJSON_Delete(j);
    th_resp_free(&r);
}

/* The events' names in order; every data is JSON with the same type and the next number. */
static void check_response_events(const sse *s, const char *const *want, int n) {
    assert_int_equal(s->n, n);
    for (int i = 0; i < n; i++) {
        assert_string_equal(s->ev[i].name, want[i]);
        cJSON *j = cJSON_Parse(s->ev[i].data);
        if (j == NULL) fail_msg("event %d is not JSON: %.200s", i, s->ev[i].data);
        assert_string_equal(th_jstr(j, "type", NULL), want[i]);
        assert_int_equal((int)th_jnum(j, "sequence_number", NULL), i);
        cJSON_Delete(j);
    }
}

static void responses_stream_sends_the_event_sequence(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, RESP, RESP_BODY ",\"stream\":true,\"max_output_tokens\":2}", NULL);
    assert_int_equal(r.rc, CURLE_OK);
    th_assert_hdr(&r, "content-type", "text/event-stream; charset=utf-8");
    sse s;
    th_sse_parse(&s, &r);
    const char *want[] = {"response.created",           "response.in_progress",
                          "response.output_item.added", "response.content_part.added",
                          "response.output_text.delta", "response.output_text.delta",
                          "response.output_text.done",  "response.content_part.done",
                          "response.output_item.done",  "response.incomplete"};
    check_response_events(&s, want, 10);
    cJSON *d1 = cJSON_Parse(s.ev[5].data), *done = cJSON_Parse(s.ev[6].data);
    cJSON *fin = cJSON_Parse(s.ev[9].data);
    assert_string_equal(th_jstr(d1, "delta", NULL), " mock");
    assert_string_equal(th_jstr(done, "text", NULL), "The mock");
    assert_string_equal(th_jstr(fin, "response", "status"), "incomplete");
    assert_string_equal(th_jstr(d1, "item_id", NULL), th_jstr(done, "item_id", NULL));
    cJSON_Delete(d1);
    cJSON_Delete(done);
    cJSON_Delete(fin);
    th_sse_free(&s);
    th_resp_free(&r);
    /* Without the cap it completes; noterm leaves out only the terminal event. */
    const char *h[] = {"x-fusebox-fault: noterm", NULL};
    th_post(&r, f->base, RESP, RESP_BODY ",\"stream\":true}", h);
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 4 + 16 + 3);
    assert_string_equal(s.ev[s.n - 1].name, "response.output_item.done");
    th_sse_free(&s);
    th_resp_free(&r);
}

static void responses_in_band_error_then_failed(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: error-1", NULL};
    th_post(&r, f->base, RESP, RESP_BODY ",\"stream\":true}", h);
    sse s;
    th_sse_parse(&s, &r);
    const char *want[] = {"response.created",
                          "response.in_progress",
                          "response.output_item.added",
                          "response.content_part.added",
                          "response.output_text.delta",
                          "error",
                          "response.failed"};
    check_response_events(&s, want, 7);
    cJSON *e = cJSON_Parse(s.ev[5].data), *failed = cJSON_Parse(s.ev[6].data);
    assert_string_equal(th_jstr(e, "code", NULL), "server_error");
    assert_string_equal(th_jstr(failed, "response", "status"), "failed");
    assert_string_equal(th_jstr(cJSON_GetObjectItem(failed, "response"), "error", "code"),
                        "server_error");
    cJSON_Delete(e);
    cJSON_Delete(failed);
    th_sse_free(&s);
    th_resp_free(&r);
}

/* Arguments as the answer sent them satisfy WEATHER minimally. */
static void check_weather_args(const char *args) {
    cJSON *a = cJSON_Parse(args);
    if (a == NULL) fail_msg("arguments are not JSON: %s", args);
    assert_string_equal(th_jstr(a, "city", NULL), "aa");
    assert_int_equal((int)th_jnum(a, "days", NULL), 1);
    assert_int_equal(cJSON_GetArraySize(a), 2);
    cJSON_Delete(a);
}

static void responses_function_call_plain_and_streamed(void **state) {
    fixture *f = *state;
    const char *body = RESP_BODY ",\"tools\":[{\"type\":\"function\",\"name\":\"weather\","
                                 "\"parameters\":" WEATHER "}],\"tool_choice\":\"required\"";
    char text[1024];
    snprintf(text, sizeof text, "%s}", body);
    resp r;
    th_post(&r, f->base, RESP, text, NULL);
    cJSON *j = th_json_body(&r);
    const cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "output"), 0);
    assert_string_equal(th_jstr(item, "type", NULL), "function_call");
    assert_string_equal(th_jstr(item, "name", NULL), "weather");
    assert_memory_equal(th_jstr(item, "id", NULL), "fc_", 3);
    assert_memory_equal(th_jstr(item, "call_id", NULL), "call_", 5);
    check_weather_args(th_jstr(item, "arguments", NULL));
    cJSON_Delete(j);
    th_resp_free(&r);
    snprintf(text, sizeof text, "%s,\"stream\":true}", body);
    th_post(&r, f->base, RESP, text, NULL);
    sse s;
    th_sse_parse(&s, &r);
    util_buf args = {0};
    int deltas = 0;
    for (int i = 0; i < s.n; i++) {
        if (strcmp(s.ev[i].name, "response.function_call_arguments.delta") != 0) continue;
        cJSON *d = cJSON_Parse(s.ev[i].data);
        util_buf_puts(&args, th_jstr(d, "delta", NULL));
        cJSON_Delete(d);
        deltas++;
    }
    assert_true(deltas > 1); /* the arguments arrive in pieces */
    check_weather_args(args.p);
    assert_string_equal(s.ev[s.n - 1].name, "response.completed");
    util_buf_free(&args);
    th_sse_free(&s);
    th_resp_free(&r);
}

/* ---- tools and JSON on chat and messages ------------------------------------------------------
 */

static void chat_required_and_named_tools_are_called(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT,
            OA_BODY
            ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"other\"}},"
            "{\"type\":\"function\",\"function\":{\"name\":\"weather\",\"parameters\":" WEATHER
            "}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"weather\"}}}",
            NULL);
    cJSON *j = th_json_body(&r);
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    assert_string_equal(th_jstr(ch, "finish_reason", NULL), "tool_calls");
    const cJSON *msg = cJSON_GetObjectItem(ch, "message");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(msg, "content")));
    const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItem(msg, "tool_calls"), 0);
    assert_memory_equal(th_jstr(call, "id", NULL), "call_", 5);
    assert_string_equal(th_jstr(call, "function", "name"), "weather");
    check_weather_args(th_jstr(call, "function", "arguments"));
    cJSON_Delete(j);
    th_resp_free(&r);
    /* "required" without tools, or a name no tool has: the 400 says which. */
    th_post(&r, f->base, CHAT, OA_BODY ",\"tool_choice\":\"required\"}", NULL);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.p, "tool_choice"));
    th_resp_free(&r);
    th_post(&r, f->base, CHAT,
            OA_BODY ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
                    "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}}",
            NULL);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.p, "no tool named 'b'"));
    th_resp_free(&r);
}

static void chat_tool_call_streams_its_arguments(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT,
            OA_BODY ",\"stream\":true,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":"
                    "\"weather\",\"parameters\":" WEATHER "}}],\"tool_choice\":\"required\"}",
            NULL);
    sse s;
    th_sse_parse(&s, &r);
    util_buf args = {0};
    for (int i = 0; i < s.n - 1; i++) {
        cJSON *c = cJSON_Parse(s.ev[i].data);
        const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "choices"), 0);
        const cJSON *call = cJSON_GetArrayItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "delta"), "tool_calls"), 0);
        if (i == 0) assert_string_equal(th_jstr(call, "function", "name"), "weather");
        const char *piece = th_jstr(call, "function", "arguments");
        if (piece != NULL) util_buf_puts(&args, piece);
        if (i == s.n - 2) assert_string_equal(th_jstr(ch, "finish_reason", NULL), "tool_calls");
        cJSON_Delete(c);
    }
    check_weather_args(args.p);
    assert_string_equal(s.ev[s.n - 1].data, "[DONE]");
    util_buf_free(&args);
    th_sse_free(&s);
    th_resp_free(&r);
}

static void json_answers_satisfy_the_requested_schema(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT,
            OA_BODY
            ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"w\","
            "\"strict\":true,\"schema\":" WEATHER "}}}",
            NULL);
    cJSON *j = th_json_body(&r);
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    check_weather_args(th_jstr(ch, "message", "content"));
    assert_string_equal(th_jstr(ch, "finish_reason", NULL), "stop");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, RESP,
            RESP_BODY ",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":"
                      "\"w\",\"schema\":" WEATHER "}}}",
            NULL);
    j = th_json_body(&r);
    const cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "output"), 0);
    check_weather_args(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(item, "content"), 0), "text", NULL));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS,
            AN_BODY ",\"output_config\":{\"format\":{\"type\":\"json_schema\",\"schema\":" WEATHER
                    "}}}",
            NULL);
    j = th_json_body(&r);
    check_weather_args(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "content"), 0), "text", NULL));
    cJSON_Delete(j);
    th_resp_free(&r);
    /* json_object without a schema: the least JSON object. */
    th_post(&r, f->base, CHAT, OA_BODY ",\"response_format\":{\"type\":\"json_object\"}}", NULL);
    j = th_json_body(&r);
    assert_string_equal(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0), "message", "content"),
        "{}");
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void anthropic_tool_use_plain_and_streamed(void **state) {
    fixture *f = *state;
    const char *tools = AN_BODY ",\"tools\":[{\"name\":\"weather\",\"input_schema\":" WEATHER
                                "}],\"tool_choice\":{\"type\":\"any\"}";
    char text[1024];
    snprintf(text, sizeof text, "%s}", tools);
    resp r;
    th_post(&r, f->base, MSGS, text, NULL);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "stop_reason", NULL), "tool_use");
    const cJSON *block = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "content"), 0);
    assert_string_equal(th_jstr(block, "type", NULL), "tool_use");
    assert_memory_equal(th_jstr(block, "id", NULL), "toolu_01", 8);
    char *input = cJSON_PrintUnformatted(cJSON_GetObjectItem(block, "input"));
    check_weather_args(input);
    free(input);
    cJSON_Delete(j);
    th_resp_free(&r);
    snprintf(text, sizeof text, "%s,\"stream\":true}", tools);
    th_post(&r, f->base, MSGS, text, NULL);
    sse s;
    th_sse_parse(&s, &r);
    util_buf args = {0};
    for (int i = 0; i < s.n; i++) {
        cJSON *e = cJSON_Parse(s.ev[i].data);
        if (strcmp(s.ev[i].name, "content_block_start") == 0)
            assert_string_equal(th_jstr(e, "content_block", "type"), "tool_use");
        if (strcmp(s.ev[i].name, "content_block_delta") == 0) {
            assert_string_equal(th_jstr(e, "delta", "type"), "input_json_delta");
            util_buf_puts(&args, th_jstr(e, "delta", "partial_json"));
        }
        if (strcmp(s.ev[i].name, "message_delta") == 0)
            assert_string_equal(th_jstr(e, "delta", "stop_reason"), "tool_use");
        cJSON_Delete(e);
    }
    check_weather_args(args.p);
    util_buf_free(&args);
    th_sse_free(&s);
    th_resp_free(&r);
}

static void anthropic_error_zero_comes_right_after_message_start(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: error-0", NULL};
    th_post(&r, f->base, MSGS, AN_BODY ",\"stream\":true}", h);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.ev[0].name, "message_start");
    assert_string_equal(s.ev[1].name, "error");
    assert_non_null(strstr(s.ev[1].data, "overloaded_error"));
    th_sse_free(&s);
    th_resp_free(&r);
}

/* ---- embeddings, completions, models, count_tokens ------------------------------------------- */

/* The float32 little-endian vector in a base64 string; its length in floats. */
static int decode_vector(const char *b64, float *out, int cap) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char bytes[4 * 64];
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (const char *p = b64; *p != '\0' && *p != '='; p++) {
        const char *d = strchr(digits, *p);
        assert_non_null(d);
        acc = acc << 6 | (uint32_t)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            assert_true(n < sizeof bytes);
            bytes[n++] = (unsigned char)(acc >> bits);
        }
    }
    int floats = (int)(n / 4);
    assert_true(floats <= cap);
    for (int i = 0; i < floats; i++) {
        uint32_t w = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 |
                     (uint32_t)bytes[4 * i + 2] << 16 | (uint32_t)bytes[4 * i + 3] << 24;
        memcpy(&out[i], &w, 4);
    }
    return floats;
}

static void embeddings_are_unit_vectors_per_text(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/v1/embeddings",
            "{\"model\":\"e\",\"input\":[\"hello\",\"world\",\"hello\"],\"dimensions\":8,"
            "\"encoding_format\":\"float\"}",
            NULL);
    cJSON *j = th_json_body(&r);
    const cJSON *data = cJSON_GetObjectItem(j, "data");
    assert_int_equal(cJSON_GetArraySize(data), 3);
    double norm = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(cJSON_GetArrayItem(data, 0), "embedding")) {
        norm += x->valuedouble * x->valuedouble;
    }
    assert_true(fabs(norm - 1) < 1e-5);
    char *a = cJSON_PrintUnformatted(cJSON_GetArrayItem(data, 0));
    char *c = cJSON_PrintUnformatted(cJSON_GetArrayItem(data, 2));
    assert_string_not_equal(a, c); /* the index differs... */
    /* ... the vector does not: the same text embeds the same */
    assert_string_equal(strstr(a, "\"embedding\":["), strstr(c, "\"embedding\":["));
    free(a);
    free(c);
    assert_int_equal((int)th_jnum(j, "usage", "prompt_tokens"), 4); /* 15 characters */
    cJSON_Delete(j);
    th_resp_free(&r);
    /* openai-node asks for base64 by default: float32 little-endian, the same vector. */
    th_post(&r, f->base, "/v1/embeddings",
            "{\"model\":\"e\",\"input\":\"hello\",\"dimensions\":8,\"encoding_format\":\"base64\"}",
            NULL);
    j = th_json_body(&r);
    float v[64];
    int n = decode_vector(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "data"), 0), "embedding", NULL), v, 64);
    assert_int_equal(n, 8);
    norm = 0;
    for (int i = 0; i < n; i++) norm += (double)v[i] * v[i];
    assert_true(fabs(norm - 1) < 1e-5);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1/embeddings", "{\"model\":\"e\",\"input\":\"\"}", NULL);
    assert_int_equal(r.status, 400);
    th_resp_free(&r);
}

static void legacy_completions_plain_and_streamed(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/v1/completions", "{\"model\":\"i\",\"prompt\":\"Say\",\"max_tokens\":3}",
            NULL);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "object", NULL), "text_completion");
    assert_memory_equal(th_jstr(j, "id", NULL), "cmpl-", 5);
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    assert_string_equal(th_jstr(ch, "text", NULL), "The mock provider");
    assert_string_equal(th_jstr(ch, "finish_reason", NULL), "length");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1/completions",
            "{\"model\":\"i\",\"prompt\":[\"a\",\"b\"],\"max_tokens\":2,\"stream\":true}", NULL);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 4); /* two pieces, the finish, [DONE] */
    cJSON *last = cJSON_Parse(s.ev[2].data);
    assert_string_equal(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(last, "choices"), 0), "finish_reason", NULL),
        "length");
    cJSON_Delete(last);
    assert_string_equal(s.ev[3].data, "[DONE]");
    th_sse_free(&s);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1/completions", "{\"model\":\"i\"}", NULL);
    assert_int_equal(r.status, 400);
    th_resp_free(&r);
}

static void models_are_retrieved_in_each_dialect(void **state) {
    fixture *f = *state;
    resp r;
    th_req_full(&r, f->base, "GET", "/v1/models/gpt-4o", NULL, TIMEOUT_MS, NULL);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "id", NULL), "gpt-4o");
    assert_string_equal(th_jstr(j, "object", NULL), "model");
    cJSON_Delete(j);
    th_resp_free(&r);
    const char *an[] = {"anthropic-version: 2023-06-01", NULL};
    th_req_full(&r, f->base, "GET", "/v1/models/claude-x", NULL, TIMEOUT_MS, an);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "type", NULL), "model");
    assert_string_equal(th_jstr(j, "id", NULL), "claude-x");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_req_full(&r, f->base, "GET", "/v1beta/models/gemini-x", NULL, TIMEOUT_MS, gemini_key);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "name", NULL), "models/gemini-x");
    cJSON_Delete(j);
    th_resp_free(&r);
    /* The model's name scripts a fault here too. */
    th_req_full(&r, f->base, "GET", "/v1/models/fb-404", NULL, TIMEOUT_MS, NULL);
    assert_int_equal(r.status, 404);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "model_not_found");
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void count_tokens_needs_model_and_messages(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/v1/messages/count_tokens",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"12345678\"}]}", NULL);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.p, "model: Field required"));
    th_resp_free(&r);
    th_post(&r, f->base, "/v1/messages/count_tokens",
            "{\"model\":\"m\",\"system\":\"abcd\",\"messages\":[{\"role\":\"user\",\"content\":"
            "\"12345678\"}]}",
            NULL);
    cJSON *j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "input_tokens", NULL), 3);
    cJSON_Delete(j);
    th_resp_free(&r);
}

/* ---- Azure OpenAI ---------------------------------------------------------------------------- */

static void azure_deployment_path_needs_version_and_key(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, AZ_CHAT, "{\"messages\":[],\"max_tokens\":2}", azure_key);
    assert_int_equal(r.status, 200);
    assert_true(th_has_hdr(&r, "apim-request-id"));
    th_assert_hdr(&r, "x-ms-region", "East US");
    assert_true(th_has_hdr(&r, "x-ratelimit-remaining-requests"));
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "model", NULL), "gpt4o"); /* the deployment */
    assert_non_null(cJSON_GetObjectItem(j, "prompt_filter_results"));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/openai/deployments/gpt4o/chat/completions", "{\"messages\":[]}",
            azure_key);
    assert_int_equal(r.status, 404);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "404");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, AZ_CHAT, "{\"messages\":[]}", NULL);
    assert_int_equal(r.status, 401);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "401");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/openai/deployments/e/embeddings?api-version=2024-10-21",
            "{\"input\":\"x\",\"dimensions\":4,\"encoding_format\":\"float\"}", azure_key);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
}

static void azure_429_and_stream_in_its_own_shapes(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/openai/deployments/fb-429/chat/completions?api-version=2024-10-21",
            "{\"messages\":[]}", azure_key);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "retry-after", "1");
    th_assert_hdr(&r, "retry-after-ms", "1000");
    th_assert_hdr(&r, "x-ratelimit-remaining-requests", "0");
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "429");
    assert_non_null(strstr(th_jstr(j, "error", "message"),
                           "ChatCompletions_Create Operation under Azure OpenAI API version "
                           "2024-10-21"));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, AZ_CHAT, "{\"messages\":[],\"max_tokens\":1,\"stream\":true}", azure_key);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 5); /* filter results, role, one piece, finish, [DONE] */
    cJSON *first = cJSON_Parse(s.ev[0].data);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(first, "choices")), 0);
    assert_non_null(cJSON_GetObjectItem(first, "prompt_filter_results"));
    cJSON_Delete(first);
    th_sse_free(&s);
    th_resp_free(&r);
}

/* ---- Gemini ---------------------------------------------------------------------------------- */

static void gemini_generate_content_plain_and_streamed(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, GEM, GEM_BODY ",\"generationConfig\":{\"maxOutputTokens\":3}}",
            gemini_key);
    assert_int_equal(r.status, 200);
    cJSON *j = th_json_body(&r);
    const cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "candidates"), 0);
    assert_string_equal(th_jstr(cand, "finishReason", NULL), "MAX_TOKENS");
    assert_string_equal(th_jstr(cand, "content", "role"), "model");
    const cJSON *part =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cand, "content"), "parts"), 0);
    assert_string_equal(th_jstr(part, "text", NULL), "The mock provider");
    assert_int_equal((int)th_jnum(j, "usageMetadata", "promptTokenCount"), 3);
    assert_int_equal((int)th_jnum(j, "usageMetadata", "candidatesTokenCount"), 3);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, GEM_STREAM, GEM_BODY ",\"generationConfig\":{\"maxOutputTokens\":2}}",
            gemini_key);
    assert_non_null(strstr(r.body.p, "\r\n\r\n"));
    sse s;
    th_sse_parse(&s, &r);
    assert_false(s.tail);
    assert_int_equal(s.n, 3); /* two pieces, then the finishing chunk */
    cJSON *last = cJSON_Parse(s.ev[2].data);
    assert_string_equal(th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(last, "candidates"), 0),
                                "finishReason", NULL),
                        "MAX_TOKENS");
    cJSON_Delete(last);
    th_sse_free(&s);
    th_resp_free(&r);
}

static void gemini_errors_use_google_rpc_status(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, GEM, GEM_BODY "}", NULL);
    assert_int_equal(r.status, 403);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "status"), "PERMISSION_DENIED");
    assert_int_equal((int)th_jnum(j, "error", "code"), 403);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1beta/models/fb-429:generateContent", GEM_BODY "}", gemini_key);
    assert_int_equal(r.status, 429);
    assert_false(th_has_hdr(&r, "retry-after")); /* Google puts the wait in the body */
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "status"), "RESOURCE_EXHAUSTED");
    const cJSON *details = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "details");
    assert_string_equal(th_jstr(cJSON_GetArrayItem(details, 1), "retryDelay", NULL), "1s");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1beta/models/fb-503:generateContent", GEM_BODY "}", gemini_key);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "status"), "UNAVAILABLE");
    cJSON_Delete(j);
    th_resp_free(&r);
    const char *h[] = {"x-goog-api-key: k", "x-fusebox-fault: error-1", NULL};
    th_post(&r, f->base, GEM_STREAM, GEM_BODY "}", h);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 2);
    cJSON *e = cJSON_Parse(s.ev[1].data);
    assert_int_equal((int)th_jnum(e, "error", "code"), 503);
    cJSON_Delete(e);
    th_sse_free(&s);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1beta/models/m:streamGenerateContent", GEM_BODY "}", gemini_key);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.p, "alt=sse"));
    th_resp_free(&r);
}

static void gemini_function_call_json_and_count(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, GEM,
            GEM_BODY ",\"tools\":[{\"functionDeclarations\":[{\"name\":\"weather\",\"parameters\":"
                     "" WEATHER
                     "}]}],\"toolConfig\":{\"functionCallingConfig\":{\"mode\":\"ANY\"}}}",
            gemini_key);
    cJSON *j = th_json_body(&r);
    const cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "candidates"), 0);
    const cJSON *call = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cand, "content"), "parts"), 0),
        "functionCall");
    assert_string_equal(th_jstr(call, "name", NULL), "weather");
    char *args = cJSON_PrintUnformatted(cJSON_GetObjectItem(call, "args"));
    check_weather_args(args);
    free(args);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, GEM,
            GEM_BODY ",\"generationConfig\":{\"responseMimeType\":\"application/json\","
                     "\"responseSchema\":" WEATHER "}}",
            gemini_key);
    j = th_json_body(&r);
    cand = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "candidates"), 0);
    check_weather_args(th_jstr(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cand, "content"), "parts"), 0),
        "text", NULL));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1beta/models/m:countTokens", GEM_BODY "}", gemini_key);
    j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "totalTokens", NULL), 3);
    cJSON_Delete(j);
    th_resp_free(&r);
}

/* ---- 429s everywhere ------------------------------------------------------------------------- */

static void anthropic_429_has_retry_after_and_empty_requests(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: 429", NULL};
    th_post(&r, f->base, MSGS, AN_BODY "}", h);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "retry-after", "1");
    assert_false(th_has_hdr(&r, "retry-after-ms"));
    th_assert_hdr(&r, "anthropic-ratelimit-requests-remaining", "0");
    assert_non_null(strstr(r.body.p, "rate limit for your organization"));
    th_resp_free(&r);
}

static void tpm_429_names_the_token_limit(void **state) {
    (void)state;
    mock_config cfg = {.capacity = {.tokens_per_min = 1000}};
    fixture *f = th_start(&cfg);
    resp r;
    /* 16 completion + 3 prompt tokens each: the 53rd does not fit. */
    for (int i = 0; i < 52; i++) {
        th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
        assert_int_equal(r.status, 200);
        th_resp_free(&r);
    }
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "x-ratelimit-remaining-tokens", "0");
    th_assert_hdr(&r, "x-ratelimit-limit-tokens", "1000");
    assert_true(th_has_hdr(&r, "retry-after"));
    assert_non_null(strstr(r.body.p, "tokens per min (TPM): Limit 1000"));
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY "}", NULL);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "anthropic-ratelimit-tokens-remaining", "0");
    assert_non_null(strstr(r.body.p, "of 1000 tokens per minute"));
    th_resp_free(&r);
    th_stop(f);
}

static void retry_after_is_left_out_where_the_script_says(void **state) {
    (void)state;
    mock_config cfg = {.capacity = {.requests_per_min = 1, .no_retry_after = true}};
    fixture *f = th_start(&cfg);
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 429);
    assert_false(th_has_hdr(&r, "retry-after"));
    th_resp_free(&r);
    /* A timeline rate_limit without retry_after sends none, as the simulation has it. */
    th_post(&r, f->base, "/__fusebox/faults", "[{\"rate_limit\":{}}]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY "}", NULL);
    assert_int_equal(r.status, 429);
    assert_false(th_has_hdr(&r, "retry-after"));
    th_resp_free(&r);
    th_stop(f);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filler_text_is_its_words_in_turn),
        cmocka_unit_test(json_escape_matches_the_byte_by_byte_rule),
        cmocka_unit_test(schema_object_has_its_required_properties_in_order),
        cmocka_unit_test(schema_refs_enums_alternatives_and_merges),
        cmocka_unit_test(schema_numbers_move_into_their_range),
        cmocka_unit_test(schema_without_a_finite_instance_is_refused),
        cmocka_unit_test_setup_teardown(responses_body_is_a_response_object, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(responses_stream_sends_the_event_sequence, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(responses_in_band_error_then_failed, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(responses_function_call_plain_and_streamed, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(chat_required_and_named_tools_are_called, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(chat_tool_call_streams_its_arguments, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(json_answers_satisfy_the_requested_schema, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(anthropic_tool_use_plain_and_streamed, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(anthropic_error_zero_comes_right_after_message_start,
                                        th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(embeddings_are_unit_vectors_per_text, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(legacy_completions_plain_and_streamed, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(models_are_retrieved_in_each_dialect, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(count_tokens_needs_model_and_messages, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(azure_deployment_path_needs_version_and_key, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(azure_429_and_stream_in_its_own_shapes, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(gemini_generate_content_plain_and_streamed, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(gemini_errors_use_google_rpc_status, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(gemini_function_call_json_and_count, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(anthropic_429_has_retry_after_and_empty_requests, th_setup,
                                        th_teardown),
        cmocka_unit_test(tpm_429_names_the_token_limit),
        cmocka_unit_test(retry_after_is_left_out_where_the_script_says),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
