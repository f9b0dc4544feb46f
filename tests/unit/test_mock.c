/*
 * test_mock.c - the mock provider on loopback, driven by libcurl.
 *
 * Every request has a timeout; nothing sleeps. Time passes either through
 * the network (a delayed answer, e.g. "ttft-3m" at a large time scale) or not
 * at all. Delays are asserted as lower bounds only, never as upper bounds.
 */
#define _XOPEN_SOURCE 700 /* strptime */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "mockserver/buf.h"
#include "mockserver/fault.h"
#include "mockserver/mock.h"
#include "mockserver/sched.h"
#include "mockserver/wire.h"
#include "tests/unit/mockhttp.h"

/* ---- pure parts ---------------------------------------------------------------------------- */

static void duration_parse_units(void **state) {
    (void)state;
    fb_time_us us;
    assert_int_equal(mock_duration_parse("250ms", &us), FB_OK);
    assert_int_equal(us, 250000);
    assert_int_equal(mock_duration_parse("1.5s", &us), FB_OK);
    assert_int_equal(us, 1500000);
    assert_int_equal(mock_duration_parse("5m", &us), FB_OK);
    assert_int_equal(us, 300000000);
    assert_int_equal(mock_duration_parse("2min", &us), FB_OK);
    assert_int_equal(us, 120000000);
    assert_int_equal(mock_duration_parse("1d", &us), FB_OK);
    assert_int_equal(us, 86400000000LL);
    assert_int_equal(mock_duration_parse("1h", &us), FB_OK);
    assert_int_equal(us, 3600000000LL);
    assert_int_equal(mock_duration_parse("0", &us), FB_OK);
    assert_int_equal(us, 0);
    assert_int_equal(mock_duration_parse("30", &us), FB_EPARSE);
    assert_int_equal(mock_duration_parse("s", &us), FB_EPARSE);
    assert_int_equal(mock_duration_parse("3 s", &us), FB_EPARSE);
}

static void go_duration_format_matches_openai_headers(void **state) {
    (void)state;
    char b[32];
    struct {
        fb_time_us us;
        const char *want;
    } cases[] = {
        {0, "0s"},           {12000, "12ms"},     {1500, "1.5ms"},       {1000000, "1s"},
        {1234000, "1.234s"}, {360000000, "6m0s"}, {90500000, "1m30.5s"}, {3723000000LL, "1h2m3s"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mock_wire_go_duration(cases[i].us, b, sizeof b);
        assert_string_equal(b, cases[i].want);
    }
    mock_wire_rfc3339(1755780059, b, sizeof b);
    assert_string_equal(b, "2025-08-21T12:40:59Z");
    mock_wire_http_date(784111777, b, sizeof b);
    assert_string_equal(b, "Sun, 06 Nov 1994 08:49:37 GMT");
}

static void spec_parses_terms_and_arguments(void **state) {
    (void)state;
    mock_action a;
    mock_parse_error e;
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("429-retry-after-2", &a, &e), FB_OK);
    assert_int_equal(a.status, 429);
    assert_int_equal(a.ra_kind, MOCK_RA_SECONDS);
    assert_true(a.retry_after_s == 2.0);

    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("503-retry-after-ms-250-should-retry-false-times-2", &a, &e),
                     FB_OK);
    assert_int_equal(a.status, 503);
    assert_true(a.retry_after_ms == 250.0);
    assert_int_equal(a.should_retry, 0);
    assert_int_equal(a.times, 2);
    assert_int_equal(a.ra_kind, MOCK_RA_NONE);

    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("stall-3-2s cut-5", &a, &e), FB_OK);
    assert_int_equal(a.stall_after, 3);
    assert_int_equal(a.stall_us, 2000000);
    assert_int_equal(a.end, MOCK_END_CUT);
    assert_int_equal(a.end_after, 5);

    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("truncate", &a, &e), FB_OK);
    assert_int_equal(a.end, MOCK_END_NOTERM);
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("retry-after-date-3,ttft-250ms,tokens-4", &a, &e), FB_OK);
    assert_int_equal(a.ra_kind, MOCK_RA_DATE);
    assert_int_equal(a.ttft_us, 250000);
    assert_int_equal(a.tokens, 4);

    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("429-bogus", &a, &e), FB_EPARSE);
    assert_string_equal(e.path, "bogus");
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("retry-after", &a, &e), FB_EPARSE);
    assert_string_equal(e.path, "retry-after");
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("302", &a, &e), FB_EPARSE);
    /* a negative number is refused, not folded into a positive one by the split */
    static const char *const neg[] = {"429-retry-after--1", "ttft--2s", "cut--1", "times--3"};
    for (size_t i = 0; i < sizeof neg / sizeof *neg; i++) {
        mock_action_init(&a);
        assert_int_equal(mock_spec_parse(neg[i], &a, &e), FB_EPARSE);
        assert_non_null(strstr(e.msg, "not negative"));
    }
}

static void timeline_parse_errors_name_the_json_path(void **state) {
    (void)state;
    sim_fault f[8];
    size_t n;
    mock_parse_error e;
    const char *bad =
        "[{\"at\":\"2m\",\"for\":\"18m\",\"outage\":{\"status\":503}},"
        "{\"hang\":{}},"
        "{\"at\":\"30m\",\"for\":\"5m\",\"rate_limit\":{\"status\":429,\"fraction\":1.5}}]";
    assert_int_equal(mock_faults_parse(bad, strlen(bad), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[2].rate_limit.fraction");
    assert_string_equal(
        e.msg, "1.5 is out of range [0, 1] (rates and shares are fractions: 1.5% is 0.015)");

    const char *unknown = "[{\"outage\":{\"stauts\":503}}]";
    assert_int_equal(mock_faults_parse(unknown, strlen(unknown), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[0].outage.stauts");
    const char *dur = "[{\"at\":\"2 minutes\",\"hang\":{}}]";
    assert_int_equal(mock_faults_parse(dur, strlen(dur), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[0].at");
    const char *two = "[{\"hang\":{},\"reset\":{}}]";
    assert_int_equal(mock_faults_parse(two, strlen(two), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[0].reset");
    const char *slow = "[{\"slow\":{\"factor\":0.5}}]";
    assert_int_equal(mock_faults_parse(slow, strlen(slow), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[0].slow.factor");
    const char *kind = "[{\"outage\":{\"error\":\"meltdown\"}}]";
    assert_int_equal(mock_faults_parse(kind, strlen(kind), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[0].outage.error");
    const char *mode = "[{\"midstream\":{\"after_tokens\":5,\"mode\":\"explode\"}}]";
    assert_int_equal(mock_faults_parse(mode, strlen(mode), f, 8, &n, &e), FB_EPARSE);
    assert_string_equal(e.path, "faults[0].midstream.mode");

    const char *good =
        "[{\"at\":\"2m\",\"for\":\"18m\",\"outage\":{\"status\":503,\"fraction\":1.0,"
        "\"retry_after\":\"20s\"}},{\"slow\":{\"factor\":3}},{\"brownout\":{\"capacity\":0.3}},"
        "{\"midstream\":{\"after_tokens\":50,\"fraction\":1.0,\"mode\":\"cut\"}},"
        "{\"reset\":{\"fraction\":0.2}},{\"policy\":{\"fraction\":0.6}},"
        "{\"flap\":{\"period\":\"30s\",\"status\":503}},{\"rate_limit\":{}}]";
    assert_int_equal(mock_faults_parse(good, strlen(good), f, 8, &n, &e), FB_OK);
    assert_int_equal(n, 8);
    assert_int_equal(f[0].kind, SIM_FAULT_OUTAGE);
    assert_int_equal(f[0].at_us, 120 * FB_US_PER_S);
    assert_int_equal(f[0].for_us, 18 * FB_US_PER_MIN);
    assert_int_equal(f[0].retry_after_us, 20 * FB_US_PER_S);
    assert_true(f[1].factor.a == 3.0);
    assert_int_equal(f[1].for_us, FB_TIME_MAX);
    assert_true(f[2].capacity == 0.3);
    assert_int_equal(f[3].mode, SIM_MIDSTREAM_CUT);
    assert_int_equal(f[6].period_us, 30 * FB_US_PER_S);
    assert_int_equal(f[7].status, 429);
    assert_int_equal(f[7].retry_after_us, FB_TIME_NONE);
}

static void timeline_flap_is_down_for_the_first_half_of_each_period(void **state) {
    (void)state;
    sim_fault f = {.kind = SIM_FAULT_FLAP,
                   .for_us = FB_TIME_MAX,
                   .fraction = 1,
                   .status = 503,
                   .retry_after_us = FB_TIME_NONE,
                   .period_us = 30 * FB_US_PER_S};
    mock_action a;
    double cap;
    fb_time_us probes[] = {0, 14999999, 15000000, 29999999, 30000000, 45000000};
    int want[] = {503, 503, 0, 0, 503, 0};
    for (size_t i = 0; i < 6; i++) {
        mock_action_init(&a);
        mock_timeline_decide(&f, 1, probes[i], 1, i, false, NULL, &a, &cap);
        assert_int_equal(a.status, want[i]);
    }
}

static void timeline_fractions_are_reproducible_per_attempt(void **state) {
    (void)state;
    sim_fault f = {.kind = SIM_FAULT_RATE_LIMIT,
                   .for_us = FB_TIME_MAX,
                   .fraction = 0.5,
                   .status = 429,
                   .retry_after_us = FB_TIME_NONE};
    int hits = 0, same = 0;
    for (uint64_t i = 0; i < 2000; i++) {
        mock_action a, b;
        double cap;
        mock_action_init(&a);
        mock_action_init(&b);
        mock_timeline_decide(&f, 1, 0, 42, i, false, NULL, &a, &cap);
        mock_timeline_decide(&f, 1, 0, 42, i, false, NULL, &b, &cap);
        hits += a.status == 429;
        same += a.status == b.status;
    }
    assert_int_equal(same, 2000);
    assert_in_range(hits, 900, 1100);
}

/* ---- success paths ------------------------------------------------------------------------- */

/* openai-processing-ms is the answer's planned time, not the time the mock took to read and
 * parse the request: an error due at once says 0 after a 3 MiB body (reading it takes
 * milliseconds), and an error latency of 40 ms says 40. */
static void processing_ms_is_the_planned_time(void **state) {
    (void)state;
    mock_config cfg = {.error_latency_us = 40 * FB_US_PER_MS};
    fixture *slow = th_start(&cfg), *f = th_start(NULL);
    size_t n = 3u << 20;
    char *body = malloc(n + 64);
    assert_non_null(body);
    int k = snprintf(body, n + 64,
                     "{\"model\":\"fb-503\",\"messages\":[{\"role\":\"user\","
                     "\"content\":\"");
    memset(body + k, 'x', n - (size_t)k);
    strcpy(body + n, "\"}]}");
    resp r;
    th_post(&r, f->base, CHAT, body, NULL);
    assert_int_equal(r.status, 503);
    th_assert_hdr(&r, "openai-processing-ms", "0");
    th_resp_free(&r);
    th_post(&r, slow->base, CHAT, "{\"model\":\"fb-503\",\"messages\":[]}", NULL);
    assert_int_equal(r.status, 503);
    th_assert_hdr(&r, "openai-processing-ms", "40");
    th_resp_free(&r);
    free(body);
    th_stop(f);
    th_stop(slow);
}

static void openai_success_has_headers_and_consistent_usage(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY ",\"max_tokens\":5}", NULL);
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.status, 200);
    th_assert_hdr(&r, "content-type", "application/json");
    th_assert_hdr(&r, "openai-version", "2020-10-01");
    char v[128];
    assert_true(th_hdr(&r, "x-request-id", v, sizeof v));
    assert_int_equal(strlen(v), 36);
    assert_memory_equal(v, "req_", 4);
    assert_true(th_has_hdr(&r, "openai-processing-ms"));
    assert_true(th_has_hdr(&r, "openai-organization"));
    const char *rl[] = {"x-ratelimit-limit-requests",     "x-ratelimit-limit-tokens",
                        "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens",
                        "x-ratelimit-reset-requests",     "x-ratelimit-reset-tokens"};
    for (size_t i = 0; i < 6; i++) assert_true(th_has_hdr(&r, rl[i]));
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "object", NULL), "chat.completion");
    assert_memory_equal(th_jstr(j, "id", NULL), "chatcmpl-", 9);
    assert_string_equal(th_jstr(j, "model", NULL), "gpt-4o-mini");
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    assert_string_equal(th_jstr(ch, "finish_reason", NULL), "length");
    assert_string_equal(th_jstr(ch, "message", "role"), "assistant");
    assert_string_equal(th_jstr(ch, "message", "content"), "The mock provider answers with");
    /* "hello there!" is 12 characters: 3 tokens. */
    assert_int_equal((int)th_jnum(j, "usage", "prompt_tokens"), 3);
    assert_int_equal((int)th_jnum(j, "usage", "completion_tokens"), 5);
    assert_int_equal((int)th_jnum(j, "usage", "total_tokens"), 8);
    cJSON_Delete(j);
    th_resp_free(&r);

    /* Without max_tokens the default cap (16) applies and the finish reason is "stop". */
    th_post(&r, f->base, CHAT, OA_BODY ",\"n\":2}", NULL);
    j = th_json_body(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "choices")), 2);
    ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 1);
    assert_string_equal(th_jstr(ch, "finish_reason", NULL), "stop");
    assert_int_equal((int)th_jnum(j, "usage", "completion_tokens"), 32);
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void anthropic_success_shape_and_headers(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"anthropic-version: 2023-06-01", "x-api-key: k", NULL};
    th_post(&r, f->base, MSGS, AN_BODY ",\"system\":\"abcd\"}", h);
    assert_int_equal(r.status, 200);
    char v[128];
    assert_true(th_hdr(&r, "request-id", v, sizeof v));
    assert_memory_equal(v, "req_011C", 8);
    assert_true(th_has_hdr(&r, "anthropic-organization-id"));
    const char *kinds[] = {"requests", "tokens", "input-tokens", "output-tokens"};
    for (size_t i = 0; i < 4; i++) {
        char name[96];
        snprintf(name, sizeof name, "anthropic-ratelimit-%s-reset", kinds[i]);
        assert_true(th_hdr(&r, name, v, sizeof v));
        assert_int_equal(strlen(v), 20); /* YYYY-MM-DDTHH:MM:SSZ */
        assert_int_equal(v[19], 'Z');
        snprintf(name, sizeof name, "anthropic-ratelimit-%s-limit", kinds[i]);
        assert_true(th_has_hdr(&r, name));
        snprintf(name, sizeof name, "anthropic-ratelimit-%s-remaining", kinds[i]);
        assert_true(th_has_hdr(&r, name));
    }
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "type", NULL), "message");
    assert_string_equal(th_jstr(j, "role", NULL), "assistant");
    assert_memory_equal(th_jstr(j, "id", NULL), "msg_", 4);
    assert_string_equal(th_jstr(j, "stop_reason", NULL), "end_turn");
    assert_string_equal(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "content"), 0), "type", NULL), "text");
    assert_int_equal((int)th_jnum(j, "usage", "input_tokens"), 4); /* 12 + 4 chars */
    assert_int_equal((int)th_jnum(j, "usage", "output_tokens"), 16);
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void openai_stream_frames_role_content_finish_usage_done(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT,
            OA_BODY
            ",\"max_tokens\":3,\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
            NULL);
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.status, 200);
    th_assert_hdr(&r, "content-type", "text/event-stream; charset=utf-8");
    sse s;
    th_sse_parse(&s, &r);
    assert_false(s.tail);
    assert_int_equal(s.n, 7); /* role, 3 content, finish, usage, [DONE] */
    char id[64] = "";
    for (int i = 0; i < 6; i++) {
        assert_string_equal(s.ev[i].name, "");
        cJSON *j = cJSON_Parse(s.ev[i].data);
        assert_non_null(j);
        assert_string_equal(th_jstr(j, "object", NULL), "chat.completion.chunk");
        if (i == 0) snprintf(id, sizeof id, "%s", th_jstr(j, "id", NULL));
        assert_string_equal(th_jstr(j, "id", NULL), id);
        const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
        if (i == 0) assert_string_equal(th_jstr(ch, "delta", "role"), "assistant");
        if (i >= 1 && i <= 3) assert_non_null(th_jstr(ch, "delta", "content"));
        if (i == 4) assert_string_equal(th_jstr(ch, "finish_reason", NULL), "length");
        if (i == 5) {
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "choices")), 0);
            assert_int_equal((int)th_jnum(j, "usage", "completion_tokens"), 3);
            assert_int_equal((int)th_jnum(j, "usage", "prompt_tokens"), 3);
        }
        cJSON_Delete(j);
    }
    assert_string_equal(s.ev[6].data, "[DONE]");
    th_sse_free(&s);
    th_resp_free(&r);
}

static void anthropic_stream_event_sequence(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, MSGS, AN_MSGS ",\"max_tokens\":2,\"stream\":true}", NULL);
    assert_int_equal(r.rc, CURLE_OK);
    sse s;
    th_sse_parse(&s, &r);
    const char *want[] = {"message_start",       "content_block_start", "ping",
                          "content_block_delta", "content_block_delta", "content_block_stop",
                          "message_delta",       "message_stop"};
    assert_int_equal(s.n, 8);
    for (int i = 0; i < 8; i++) {
        assert_string_equal(s.ev[i].name, want[i]);
        cJSON *j = cJSON_Parse(s.ev[i].data);
        assert_non_null(j);
        assert_string_equal(th_jstr(j, "type", NULL), want[i]); /* data repeats the type */
        if (i == 0)
            assert_int_equal(
                (int)th_jnum(cJSON_GetObjectItem(j, "message"), "usage", "input_tokens"), 3);
        if (i == 6) {
            assert_string_equal(th_jstr(j, "delta", "stop_reason"), "max_tokens");
            assert_int_equal((int)th_jnum(j, "usage", "output_tokens"), 2);
        }
        cJSON_Delete(j);
    }
    th_sse_free(&s);
    th_resp_free(&r);
}

static void models_and_count_tokens_endpoints(void **state) {
    fixture *f = *state;
    resp r;
    th_req_full(&r, f->base, "GET", "/v1/models", NULL, TIMEOUT_MS, NULL);
    assert_int_equal(r.status, 200);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "object", NULL), "list");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1/messages/count_tokens",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"12345678\"}]}", NULL);
    assert_int_equal(r.status, 200);
    j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "input_tokens", NULL), 2);
    cJSON_Delete(j);
    th_resp_free(&r);
}

/* ---- error faults -------------------------------------------------------------------------- */

static void status_faults_use_each_providers_error_body(void **state) {
    fixture *f = *state;
    static const struct {
        int status;
        const char *oa_type, *an_type;
    } cases[] = {{400, "invalid_request_error", "invalid_request_error"},
                 {401, "invalid_request_error", "authentication_error"},
                 {403, "request_forbidden", "permission_error"},
                 {404, "invalid_request_error", "not_found_error"},
                 {408, "timeout", "timeout_error"},
                 {409, "invalid_request_error", "invalid_request_error"},
                 {413, "invalid_request_error", "request_too_large"},
                 {422, "invalid_request_error", "invalid_request_error"},
                 {429, "requests", "rate_limit_error"},
                 {500, "server_error", "api_error"},
                 {502, "server_error", "api_error"},
                 {503, "server_error", "api_error"},
                 {504, "server_error", "timeout_error"},
                 {529, "server_error", "overloaded_error"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char h[64];
        snprintf(h, sizeof h, "x-fusebox-fault: %d", cases[i].status);
        const char *hs[] = {h, NULL};
        resp r;
        th_post(&r, f->base, CHAT, OA_BODY "}", hs);
        assert_int_equal(r.status, cases[i].status);
        th_assert_hdr(&r, "content-type", "application/json");
        assert_true(th_has_hdr(&r, "x-request-id"));
        /* Every 429 carries the dialect's retry-after; other statuses none unless asked. */
        if (cases[i].status == 429)
            th_assert_hdr(&r, "retry-after", "1");
        else
            assert_false(th_has_hdr(&r, "retry-after"));
        cJSON *j = th_json_body(&r);
        const cJSON *e = cJSON_GetObjectItem(j, "error");
        assert_non_null(th_jstr(e, "message", NULL));
        assert_string_equal(th_jstr(e, "type", NULL), cases[i].oa_type);
        assert_non_null(cJSON_GetObjectItem(e, "param"));
        assert_non_null(cJSON_GetObjectItem(e, "code"));
        cJSON_Delete(j);
        th_resp_free(&r);

        th_post(&r, f->base, MSGS, AN_BODY "}", hs);
        assert_int_equal(r.status, cases[i].status);
        j = th_json_body(&r);
        assert_string_equal(th_jstr(j, "type", NULL), "error");
        assert_string_equal(th_jstr(j, "error", "type"), cases[i].an_type);
        assert_non_null(th_jstr(j, "error", "message"));
        char rid[128];
        assert_true(th_hdr(&r, "request-id", rid, sizeof rid));
        assert_string_equal(th_jstr(j, "request_id", NULL), rid);
        cJSON_Delete(j);
        th_resp_free(&r);
    }
}

static void retry_after_flavours_and_should_retry(void **state) {
    fixture *f = *state;
    resp r;
    const char *h1[] = {"x-fusebox-fault: 429-retry-after-2", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h1);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "retry-after", "2");
    assert_false(th_has_hdr(&r, "retry-after-ms"));
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "rate_limit_exceeded");
    cJSON_Delete(j);
    th_resp_free(&r);

    const char *h2[] = {"x-fusebox-fault: 429-retry-after-1.5", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h2);
    th_assert_hdr(&r, "retry-after", "1.5");
    th_resp_free(&r);

    const char *h3[] = {"x-fusebox-fault: 503-retry-after-ms-250", NULL};
    th_post(&r, f->base, MSGS, AN_BODY "}", h3);
    assert_int_equal(r.status, 503);
    th_assert_hdr(&r, "retry-after-ms", "250");
    assert_false(th_has_hdr(&r, "retry-after"));
    th_resp_free(&r);

    const char *h4[] = {"x-fusebox-fault: 429-retry-after-date-3", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h4);
    char v[128], d[128];
    assert_true(th_hdr(&r, "retry-after", v, sizeof v));
    assert_true(th_hdr(&r, "date", d, sizeof d));
    struct tm tv, td;
    memset(&tv, 0, sizeof tv);
    memset(&td, 0, sizeof td);
    assert_non_null(strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tv));
    assert_non_null(strptime(d, "%a, %d %b %Y %H:%M:%S GMT", &td));
    double delta = difftime(timegm(&tv), timegm(&td));
    assert_true(delta >= 3 && delta <= 4);
    th_resp_free(&r);

    /* A bare 429: OpenAI's retry-after (whole seconds, no -ms), the requests limit at zero. */
    const char *h5[] = {"x-fusebox-fault: 429", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h5);
    th_assert_hdr(&r, "retry-after", "1");
    assert_false(th_has_hdr(&r, "retry-after-ms"));
    assert_false(th_has_hdr(&r, "x-should-retry"));
    th_assert_hdr(&r, "x-ratelimit-remaining-requests", "0");
    th_assert_hdr(&r, "x-ratelimit-reset-requests", "1s");
    th_resp_free(&r);
    /* ... unless the spec says otherwise. */
    const char *hn[] = {"x-fusebox-fault: 429-no-retry-after", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", hn);
    assert_int_equal(r.status, 429);
    assert_false(th_has_hdr(&r, "retry-after"));
    th_resp_free(&r);

    const char *h6[] = {"x-fusebox-fault: 500-should-retry-false", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h6);
    assert_int_equal(r.status, 500);
    th_assert_hdr(&r, "x-should-retry", "false");
    th_resp_free(&r);
    const char *h7[] = {"x-fusebox-fault: 400-should-retry-true", NULL};
    th_post(&r, f->base, MSGS, AN_BODY "}", h7);
    assert_int_equal(r.status, 400);
    th_assert_hdr(&r, "x-should-retry", "true");
    th_resp_free(&r);

    const char *h8[] = {"x-fusebox-fault: quota", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h8);
    assert_int_equal(r.status, 429);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "insufficient_quota");
    assert_string_equal(th_jstr(j, "error", "code"), "insufficient_quota");
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void context_length_and_content_filter_bodies(void **state) {
    fixture *f = *state;
    resp r;
    const char *h1[] = {"x-fusebox-fault: context-length", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h1);
    assert_int_equal(r.status, 400);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "invalid_request_error");
    assert_string_equal(th_jstr(j, "error", "code"), "context_length_exceeded");
    assert_string_equal(th_jstr(j, "error", "param"), "messages");
    assert_non_null(strstr(th_jstr(j, "error", "message"), "maximum context length is"));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY "}", h1);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "invalid_request_error");
    assert_memory_equal(th_jstr(j, "error", "message"), "prompt is too long: ", 20);
    cJSON_Delete(j);
    th_resp_free(&r);

    const char *h2[] = {"x-fusebox-fault: content-filter", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h2);
    assert_int_equal(r.status, 400);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "invalid_prompt");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY "}", h2);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "message"),
                        "Output blocked by content filtering policy");
    cJSON_Delete(j);
    th_resp_free(&r);

    const char *h3[] = {"x-fusebox-fault: refusal", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h3);
    assert_int_equal(r.status, 200);
    j = th_json_body(&r);
    assert_string_equal(
        th_jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0), "finish_reason", NULL),
        "content_filter");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY "}", h3);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "stop_reason", NULL), "refusal");
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void context_window_config_rejects_long_prompts(void **state) {
    (void)state;
    mock_config cfg = {.context_window = 2};
    fixture *f = th_start(&cfg);
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL); /* 3 prompt tokens > 2 */
    assert_int_equal(r.status, 400);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "context_length_exceeded");
    assert_non_null(strstr(th_jstr(j, "error", "message"), "maximum context length is 2 tokens"));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT,
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_stop(f);
}

static void model_name_selects_the_fault(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT, "{\"model\":\"fb-429-retry-after-2\",\"messages\":[]}", NULL);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "retry-after", "2");
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, "{\"model\":\"fb-529\",\"max_tokens\":5,\"messages\":[]}", NULL);
    assert_int_equal(r.status, 529);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "overloaded_error");
    assert_string_equal(th_jstr(j, "error", "message"), "Overloaded");
    cJSON_Delete(j);
    th_resp_free(&r);
    /* A bad spec is the provider's 400, naming the term. */
    th_post(&r, f->base, CHAT, "{\"model\":\"fb-429-nonsense\",\"messages\":[]}", NULL);
    assert_int_equal(r.status, 400);
    j = th_json_body(&r);
    assert_non_null(strstr(th_jstr(j, "error", "message"), "nonsense"));
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void times_fails_the_first_n_attempts_per_key(void **state) {
    fixture *f = *state;
    const char *ka[] = {"x-fusebox-fault: 500-times-2", "x-fusebox-key: a", NULL};
    const char *kb[] = {"x-fusebox-fault: 500-times-2", "x-fusebox-key: b", NULL};
    int want[] = {500, 500, 200, 200};
    for (int i = 0; i < 4; i++) {
        resp r;
        th_post(&r, f->base, CHAT, OA_BODY "}", ka);
        assert_int_equal(r.status, want[i]);
        th_resp_free(&r);
    }
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", kb); /* another key starts afresh */
    assert_int_equal(r.status, 500);
    th_resp_free(&r);
}

/* ---- transport faults ---------------------------------------------------------------------- */

static void reset_closes_the_connection_without_a_response(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: reset", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h);
    assert_true(r.rc == CURLE_GOT_NOTHING || r.rc == CURLE_RECV_ERROR);
    assert_int_equal(r.hdrs.len, 0);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
}

static void hang_does_not_block_a_concurrent_request(void **state) {
    fixture *f = *state;
    char url[128];
    snprintf(url, sizeof url, "%s%s", f->base, CHAT);
    struct curl_slist *hh = curl_slist_append(NULL, "x-fusebox-fault: hang");
    resp rh, rn;
    CURLM *m = curl_multi_init();
    CURL *ch = th_make_easy(&rh, url, "POST", OA_BODY "}", hh, 1500);
    curl_multi_add_handle(m, ch);
    int running = 1;
    /* Let the hung request reach the server first. */
    for (int i = 0; i < 20; i++) {
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 10, NULL);
    }
    CURL *cn = th_make_easy(&rn, url, "POST", OA_BODY "}", NULL, TIMEOUT_MS);
    curl_multi_add_handle(m, cn);
    fb_time_us normal_done = 0;
    do {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE) continue;
            if (msg->easy_handle == cn) {
                rn.rc = msg->data.result;
                normal_done = mock_now_us();
            } else {
                rh.rc = msg->data.result;
            }
        }
        if (running) curl_multi_poll(m, NULL, 0, 50, NULL);
    } while (running);
    curl_easy_getinfo(cn, CURLINFO_RESPONSE_CODE, &rn.status);
    assert_int_equal(rn.rc, CURLE_OK);
    assert_int_equal(rn.status, 200);
    assert_int_equal(rh.rc, CURLE_OPERATION_TIMEDOUT);
    assert_int_equal(rh.hdrs.len, 0);
    /* The normal request finished while the hung one was still waiting. */
    assert_true(normal_done > 0 && normal_done < rh.start_us + 1500 * FB_US_PER_MS);
    curl_multi_remove_handle(m, ch);
    curl_multi_remove_handle(m, cn);
    curl_easy_cleanup(ch);
    curl_easy_cleanup(cn);
    curl_multi_cleanup(m);
    curl_slist_free_all(hh);
    th_resp_free(&rh);
    th_resp_free(&rn);
    mock_stats st;
    mock_server_stats(f->srv, &st);
    assert_int_equal(st.hangs, 1);
}

static void slow_first_token_sends_headers_first(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: ttft-300ms", NULL};
    th_post(&r, f->base, CHAT, OA_BODY ",\"max_tokens\":2,\"stream\":true}", h);
    assert_int_equal(r.rc, CURLE_OK);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 5);
    /* The role chunk comes with the headers; the first content chunk >= 300 ms later. */
    fb_time_us role = th_arrival_of(&r, 0);
    fb_time_us first = th_arrival_of(&r, s.ev[0].end);
    assert_true(r.headers_us > 0 && role > 0 && first > 0);
    assert_true(first - r.headers_us >= 290 * FB_US_PER_MS);
    assert_true(first - role >= 290 * FB_US_PER_MS);
    th_sse_free(&s);
    th_resp_free(&r);

    /* Non-streamed: the whole answer waits. */
    th_post(&r, f->base, CHAT, OA_BODY "}", h);
    assert_int_equal(r.status, 200);
    assert_true(r.headers_us - r.start_us >= 290 * FB_US_PER_MS);
    th_resp_free(&r);
}

static void stall_pauses_after_k_chunks(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: stall-2-300ms", NULL};
    th_post(&r, f->base, MSGS, AN_MSGS ",\"max_tokens\":4,\"stream\":true}", h);
    assert_int_equal(r.rc, CURLE_OK);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 10);
    /* Events 3 and 4 are the first two deltas; 5 comes after the stall. */
    assert_string_equal(s.ev[5].name, "content_block_delta");
    fb_time_us second = th_arrival_of(&r, s.ev[3].end);
    fb_time_us third = th_arrival_of(&r, s.ev[4].end);
    assert_true(third - second >= 290 * FB_US_PER_MS);
    assert_string_equal(s.ev[9].name, "message_stop");
    th_sse_free(&s);
    th_resp_free(&r);
}

static void cut_mid_stream_is_an_abortive_close(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: cut-2", NULL};
    th_post(&r, f->base, CHAT, OA_BODY ",\"stream\":true}", h);
    assert_int_equal(r.status, 200);
    assert_true(r.rc == CURLE_PARTIAL_FILE || r.rc == CURLE_RECV_ERROR);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 3); /* role + 2 content chunks, no finish, no [DONE] */
    assert_null(strstr(r.body.p, "[DONE]"));
    assert_null(strstr(r.body.p, "finish_reason\":\"stop"));
    th_sse_free(&s);
    th_resp_free(&r);
    /* Non-streamed: the body stops half way, abortively. */
    th_post(&r, f->base, CHAT, OA_BODY "}", h);
    assert_true(r.rc == CURLE_PARTIAL_FILE || r.rc == CURLE_RECV_ERROR);
    assert_true(r.body.len > 0);
    assert_null(cJSON_ParseWithLength(r.body.p, r.body.len));
    th_resp_free(&r);
}

static void truncated_stream_ends_cleanly_without_terminator(void **state) {
    fixture *f = *state;
    resp r;
    const char *h1[] = {"x-fusebox-fault: truncate", NULL};
    th_post(&r, f->base, CHAT, OA_BODY ",\"max_tokens\":2,\"stream\":true}", h1);
    assert_int_equal(r.rc, CURLE_OK);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 4); /* role, 2 content, finish; no [DONE] */
    assert_null(strstr(r.body.p, "[DONE]"));
    th_sse_free(&s);
    th_resp_free(&r);

    th_post(&r, f->base, MSGS, AN_MSGS ",\"max_tokens\":2,\"stream\":true}", h1);
    assert_int_equal(r.rc, CURLE_OK);
    th_sse_parse(&s, &r);
    assert_string_equal(s.ev[s.n - 1].name, "message_delta");
    assert_null(strstr(r.body.p, "message_stop"));
    th_sse_free(&s);
    th_resp_free(&r);

    const char *h2[] = {"x-fusebox-fault: truncate-1", NULL};
    th_post(&r, f->base, MSGS, AN_MSGS ",\"max_tokens\":5,\"stream\":true}", h2);
    assert_int_equal(r.rc, CURLE_OK);
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 4); /* start, block start, ping, one delta */
    assert_string_equal(s.ev[3].name, "content_block_delta");
    th_sse_free(&s);
    th_resp_free(&r);
}

static void malformed_chunk_is_not_json(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: malformed-1", NULL};
    th_post(&r, f->base, CHAT, OA_BODY ",\"stream\":true}", h);
    assert_int_equal(r.rc, CURLE_OK);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 3);
    cJSON *j = cJSON_Parse(s.ev[2].data);
    assert_null(j);
    th_sse_free(&s);
    th_resp_free(&r);
}

static void in_band_stream_errors_per_dialect(void **state) {
    fixture *f = *state;
    resp r;
    const char *h[] = {"x-fusebox-fault: error-1", NULL};
    th_post(&r, f->base, CHAT, OA_BODY ",\"stream\":true}", h);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.rc, CURLE_OK);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 3);
    cJSON *j = cJSON_Parse(s.ev[2].data);
    assert_non_null(j);
    assert_string_equal(th_jstr(j, "error", "type"), "server_error");
    cJSON_Delete(j);
    th_sse_free(&s);
    th_resp_free(&r);

    th_post(&r, f->base, MSGS, AN_BODY ",\"stream\":true}", h);
    assert_int_equal(r.rc, CURLE_OK);
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 5);
    assert_string_equal(s.ev[4].name, "error");
    j = cJSON_Parse(s.ev[4].data);
    assert_string_equal(th_jstr(j, "type", NULL), "error");
    assert_string_equal(th_jstr(j, "error", "type"), "overloaded_error");
    cJSON_Delete(j);
    th_sse_free(&s);
    th_resp_free(&r);
}

/* ---- limits -------------------------------------------------------------------------------- */

static void oversized_body_gets_413_in_provider_format(void **state) {
    (void)state;
    mock_config cfg = {.max_body_bytes = 1024};
    fixture *f = th_start(&cfg);
    char *big = malloc(4096);
    assert_non_null(big);
    memset(big, 'x', 4095);
    big[4095] = '\0';
    memcpy(big, "{\"model\":\"m\",\"messages\":[],\"pad\":\"", 34);
    big[4093] = '"';
    big[4094] = '}';
    resp r;
    th_post(&r, f->base, MSGS, big, NULL);
    assert_int_equal(r.status, 413);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "request_too_large");
    cJSON_Delete(j);
    th_resp_free(&r);
    /* Chunked upload (no Content-Length): read, discarded, then 413. */
    const char *h[] = {"Transfer-Encoding: chunked", NULL};
    th_post(&r, f->base, CHAT, big, h);
    assert_int_equal(r.status, 413);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "invalid_request_error");
    cJSON_Delete(j);
    th_resp_free(&r);
    free(big);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_stop(f);
}

static void malformed_requests_get_400_unknown_404_wrong_method_405(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, CHAT, "{\"model\": ", NULL);
    assert_int_equal(r.status, 400);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "type"), "invalid_request_error");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, "[1,2", NULL);
    assert_int_equal(r.status, 400);
    j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "type", NULL), "error");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, "{\"model\":\"m\",\"messages\":[]}", NULL); /* no max_tokens */
    assert_int_equal(r.status, 400);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, "{\"messages\":[]}", NULL);
    assert_int_equal(r.status, 400);
    th_resp_free(&r);
    th_post(&r, f->base, "/v1/nowhere", "{}", NULL);
    assert_int_equal(r.status, 404);
    j = th_json_body(&r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "code")));
    cJSON_Delete(j);
    th_resp_free(&r);
    th_req_full(&r, f->base, "GET", CHAT, NULL, TIMEOUT_MS, NULL);
    assert_int_equal(r.status, 405);
    th_assert_hdr(&r, "allow", "POST");
    th_resp_free(&r);
    th_req_full(&r, f->base, "DELETE", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    assert_int_equal(r.status, 405);
    th_resp_free(&r);
}

static void garbage_over_a_raw_socket_does_not_crash(void **state) {
    fixture *f = *state;
    static const char *const garbage[] = {
        "GARBAGE\r\n\r\n",
        "\x01\x02\x03\xff\xfe\r\n\r\n",
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "zz\r\n",
        "GET / HTTP/9.9\r\n\r\n",
    };
    char buf[4096];
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        int fd = th_connect_raw(f);
        assert_true(send(fd, garbage[i], strlen(garbage[i]), MSG_NOSIGNAL) > 0);
        shutdown(fd, SHUT_WR);
        th_read_some(fd, buf, sizeof buf, 2000);
        close(fd);
    }
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
}

static void connection_limit_refuses_extra_connections(void **state) {
    (void)state;
    mock_config cfg = {.max_connections = 3};
    fixture *f = th_start(&cfg);
    int fds[3];
    char buf[512];
    for (int i = 0; i < 3; i++) fds[i] = th_connect_raw(f);
    /* Make sure the three are accepted: each gets an answer on its own socket. */
    const char *get = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
    for (int i = 0; i < 3; i++) {
        assert_true(send(fds[i], get, strlen(get), MSG_NOSIGNAL) > 0);
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        assert_int_equal(poll(&p, 1, 3000), 1);
        assert_true(recv(fds[i], buf, sizeof buf, 0) > 0);
    }
    /* The kernel completes the handshake, but the server does not serve it: at the limit it
       stops accepting (the connection waits in the backlog) or closes what it accepts. */
    int extra = th_connect_raw(f);
    send(extra, get, strlen(get), MSG_NOSIGNAL);
    ssize_t n = th_read_some(extra, buf, sizeof buf, 500);
    if (n > 0) fail_msg("served beyond the connection limit: %.80s", buf);
    close(extra);
    close(fds[0]);
    /* A freed slot is usable again (the server notices the close shortly). */
    long status = 0;
    for (int tries = 0; tries < 50 && status != 200; tries++) {
        resp r;
        th_req_full(&r, f->base, "GET", "/v1/models", NULL, 200, NULL);
        status = r.status;
        th_resp_free(&r);
    }
    assert_int_equal(status, 200);
    close(fds[1]);
    close(fds[2]);
    th_stop(f);
}

/* ---- control plane ------------------------------------------------------------------------- */

static void control_faults_rejects_bad_scripts_with_the_path(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/__fusebox/faults", "[{\"outage\":{}},{\"rate_limit\":{\"fraction\":2}}]",
            NULL);
    assert_int_equal(r.status, 400);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", NULL),
                        "faults[1].rate_limit.fraction: 2 is out of range [0, 1] (rates and "
                        "shares are fractions: 2% is 0.02)");
    assert_string_equal(th_jstr(j, "path", NULL), "faults[1].rate_limit.fraction");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/__fusebox/faults", "not json", NULL);
    assert_int_equal(r.status, 400);
    th_resp_free(&r);

    th_post(&r, f->base, "/__fusebox/faults",
            "[{\"outage\":{\"status\":502,\"retry_after\":\"1500ms\"}}]", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 502);
    th_assert_hdr(&r, "retry-after", "2"); /* whole seconds, rounded up */
    th_assert_hdr(&r, "retry-after-ms", "1500");
    th_resp_free(&r);
    /* A header fault overrides the timeline. */
    const char *h[] = {"x-fusebox-fault: ok", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    /* The outage's "error" picks the provider error type whatever the status. */
    th_post(&r, f->base, "/__fusebox/faults",
            "[{\"outage\":{\"status\":503,\"error\":\"overloaded\"}}]", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY "}", NULL);
    assert_int_equal(r.status, 503);
    cJSON *j2 = th_json_body(&r);
    assert_string_equal(th_jstr(j2, "error", "type"), "overloaded_error");
    cJSON_Delete(j2);
    th_resp_free(&r);
    th_post(&r, f->base, "/__fusebox/faults", "[{\"brownout\":{\"capacity\":0}}]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 503);
    th_resp_free(&r);
    th_post(&r, f->base, "/__fusebox/faults", "[]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
}

static void control_log_records_attempts_and_reset_clears_it(void **state) {
    fixture *f = *state;
    resp r;
    const char *h0[] = {"x-stainless-retry-count: 0", "x-fusebox-key: k1",
                        "x-fusebox-fault: 429-retry-after-ms-250-times-1", NULL};
    const char *h1[] = {"x-stainless-retry-count: 1", "x-fusebox-key: k1",
                        "x-fusebox-fault: 429-retry-after-ms-250-times-1", NULL};
    th_post(&r, f->base, CHAT, OA_BODY "}", h0);
    assert_int_equal(r.status, 429);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY ",\"stream\":true}", h1);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_req_full(&r, f->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    assert_int_equal(r.status, 200);
    cJSON *j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "total", NULL), 2);
    assert_int_equal((int)th_jnum(j, "dropped", NULL), 0);
    const cJSON *e = cJSON_GetObjectItem(j, "entries");
    assert_int_equal(cJSON_GetArraySize(e), 2);
    const cJSON *e0 = cJSON_GetArrayItem(e, 0), *e1 = cJSON_GetArrayItem(e, 1);
    assert_string_equal(th_jstr(e0, "path", NULL), CHAT);
    assert_string_equal(th_jstr(e0, "model", NULL), "gpt-4o-mini");
    assert_int_equal((int)th_jnum(e0, "retry_count", NULL), 0);
    assert_int_equal((int)th_jnum(e0, "status", NULL), 429);
    assert_string_equal(th_jstr(e0, "fault", NULL), "429-retry-after-ms-250-times-1");
    assert_string_equal(th_jstr(e0, "key", NULL), "k1");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e0, "stream")));
    assert_int_equal((int)th_jnum(e1, "retry_count", NULL), 1);
    assert_int_equal((int)th_jnum(e1, "status", NULL), 200);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(e1, "fault")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e1, "stream")));
    assert_true(th_jnum(e1, "t_ms", NULL) >= th_jnum(e0, "t_ms", NULL));
    cJSON_Delete(j);
    th_resp_free(&r);

    th_req_full(&r, f->base, "GET", "/__fusebox/stats", NULL, TIMEOUT_MS, NULL);
    j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "attempts", NULL), 2);
    assert_int_equal((int)th_jnum(j, "status_429", NULL), 1);
    assert_int_equal((int)th_jnum(j, "faults", NULL), 1);
    cJSON_Delete(j);
    th_resp_free(&r);

    th_post(&r, f->base, "/__fusebox/reset", "", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_req_full(&r, f->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "total", NULL), 0);
    cJSON_Delete(j);
    th_resp_free(&r);
    /* Reset also forgets the times-1 count for key k1. */
    th_post(&r, f->base, CHAT, OA_BODY "}", h0);
    assert_int_equal(r.status, 429);
    th_resp_free(&r);
}

/* The entries' fields the verdict reads: what the answer told (Retry-After, x-should-retry),
 * when it went, and how far a stream got. */
static void control_log_records_what_the_verdict_reads(void **state) {
    fixture *f = *state;
    resp r;
    const char *const specs[] = {"x-fusebox-fault: 429-retry-after-2",
                                 "x-fusebox-fault: 503-retry-after-ms-1500-should-retry-false",
                                 "x-fusebox-fault: ttft-200ms-500", "x-fusebox-fault: cut-3",
                                 "x-fusebox-fault: 200"};
    for (int i = 0; i < 5; i++) {
        const char *h[] = {specs[i], NULL};
        th_post(&r, f->base, CHAT, i >= 3 ? OA_BODY ",\"stream\":true}" : OA_BODY "}", h);
        th_resp_free(&r);
    }
    th_req_full(&r, f->base, "GET", "/__fusebox/models", NULL, TIMEOUT_MS, NULL);
    th_resp_free(&r);
    th_req_full(&r, f->base, "GET", "/v1/models", NULL, TIMEOUT_MS, NULL);
    th_resp_free(&r);
    th_req_full(&r, f->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    cJSON *j = th_json_body(&r);
    assert_true(th_jnum(j, "time_scale", NULL) == 1);
    const cJSON *e = cJSON_GetObjectItem(j, "entries");
    assert_int_equal(cJSON_GetArraySize(e), 6);
    const cJSON *ra = cJSON_GetArrayItem(e, 0), *sr = cJSON_GetArrayItem(e, 1),
                *late = cJSON_GetArrayItem(e, 2), *cut = cJSON_GetArrayItem(e, 3),
                *whole = cJSON_GetArrayItem(e, 4), *models = cJSON_GetArrayItem(e, 5);
    assert_true(th_jnum(ra, "retry_after_ms", NULL) == 2000);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ra, "should_retry")));
    assert_true(th_jnum(sr, "retry_after_ms", NULL) == 1500); /* retry-after-ms wins */
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(sr, "should_retry")));
    /* an error delayed 200 ms went 200 ms after it arrived */
    assert_true(th_jnum(late, "sent_ms", NULL) - th_jnum(late, "real_ms", NULL) >= 199.9);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(late, "retry_after_ms")));
    assert_int_equal((int)th_jnum(cut, "tokens", NULL), 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cut, "broken")));
    assert_int_equal((int)th_jnum(whole, "tokens", NULL), 16);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(whole, "broken")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(whole, "attempt")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(models, "attempt")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(models, "tokens")));
    cJSON_Delete(j);
    th_resp_free(&r);
}

static void control_log_ring_reports_dropped_entries(void **state) {
    (void)state;
    mock_config cfg = {.log_capacity = 3};
    fixture *f = th_start(&cfg);
    for (int i = 0; i < 5; i++) {
        resp r;
        th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
        th_resp_free(&r);
    }
    resp r;
    th_req_full(&r, f->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    cJSON *j = th_json_body(&r);
    assert_int_equal((int)th_jnum(j, "total", NULL), 5);
    assert_int_equal((int)th_jnum(j, "dropped", NULL), 2);
    const cJSON *e = cJSON_GetObjectItem(j, "entries");
    assert_int_equal(cJSON_GetArraySize(e), 3);
    assert_int_equal((int)th_jnum(cJSON_GetArrayItem(e, 0), "seq", NULL), 2);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_stop(f);
}

/* ---- timeline in real time ----------------------------------------------------------------- */

/* Let timeline time pass by waiting on the network: a delayed answer. */
static void wait_timeline(const fixture *f, const char *dur) {
    char h[64];
    snprintf(h, sizeof h, "x-fusebox-fault: ttft-%s", dur);
    const char *hs[] = {h, NULL};
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", hs);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
}

static void timeline_runs_on_scaled_time(void **state) {
    (void)state;
    /* 600x: a timeline minute is 100 ms of real time. */
    mock_config cfg = {.time_scale = 600};
    fixture *f = th_start(&cfg);
    resp r;
    th_post(&r, f->base, "/__fusebox/faults",
            "[{\"at\":\"0s\",\"for\":\"2m\",\"outage\":{\"status\":503,\"retry_after\":\"20s\"}},"
            "{\"at\":\"2m\",\"for\":\"2m\",\"rate_limit\":{\"retry_after\":\"20s\"}}]",
            NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 503);
    th_assert_hdr(&r, "retry-after", "20");
    th_resp_free(&r);
    wait_timeline(f, "3m"); /* the header fault answers; the clock moves on */
    th_post(&r, f->base, MSGS, AN_BODY "}", NULL);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "retry-after", "20");
    th_assert_hdr(&r, "retry-after-ms", "20000");
    th_resp_free(&r);
    wait_timeline(f, "2m");
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);

    th_req_full(&r, f->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    cJSON *j = th_json_body(&r);
    const cJSON *e = cJSON_GetObjectItem(j, "entries");
    assert_string_equal(th_jstr(cJSON_GetArrayItem(e, 0), "fault", NULL), "faults[0].outage");
    assert_string_equal(th_jstr(cJSON_GetArrayItem(e, 2), "fault", NULL), "faults[1].rate_limit");
    assert_true(th_jnum(cJSON_GetArrayItem(e, 2), "t_ms", NULL) >= 180000);
    cJSON_Delete(j);
    th_resp_free(&r);
    th_stop(f);
}

static void timeline_fraction_replays_after_reset(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/__fusebox/faults", "[{\"rate_limit\":{\"fraction\":0.5}}]", NULL);
    th_resp_free(&r);
    int first[40], second[40], hits = 0;
    for (int pass = 0; pass < 2; pass++) {
        th_post(&r, f->base, "/__fusebox/reset", "", NULL);
        th_resp_free(&r);
        for (int i = 0; i < 40; i++) {
            th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
            (pass ? second : first)[i] = (int)r.status;
            hits += pass == 0 && r.status == 429;
            th_resp_free(&r);
        }
    }
    assert_memory_equal(first, second, sizeof first);
    assert_in_range(hits, 8, 32);
}

static void timeline_transport_and_stream_faults(void **state) {
    fixture *f = *state;
    resp r;
    th_post(&r, f->base, "/__fusebox/faults",
            "[{\"midstream\":{\"after_tokens\":2,\"mode\":\"error\"}},{\"policy\":{}}]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL); /* policy wins for everybody */
    assert_int_equal(r.status, 400);
    cJSON *j = th_json_body(&r);
    assert_string_equal(th_jstr(j, "error", "code"), "invalid_prompt");
    cJSON_Delete(j);
    th_resp_free(&r);
    th_post(&r, f->base, "/__fusebox/faults",
            "[{\"midstream\":{\"after_tokens\":2,\"mode\":\"cut\"}}]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, MSGS, AN_BODY ",\"stream\":true}", NULL);
    assert_true(r.rc == CURLE_PARTIAL_FILE || r.rc == CURLE_RECV_ERROR);
    sse s;
    th_sse_parse(&s, &r);
    assert_int_equal(s.n, 5);
    th_sse_free(&s);
    th_resp_free(&r);
    th_post(&r, f->base, "/__fusebox/faults", "[{\"reset\":{}}]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_true(r.rc == CURLE_GOT_NOTHING || r.rc == CURLE_RECV_ERROR);
    th_resp_free(&r);
    th_post(&r, f->base, "/__fusebox/faults", "[{\"brownout\":{\"capacity\":0.5}}]", NULL);
    th_resp_free(&r);
    int ok = 0, over = 0;
    for (int i = 0; i < 40; i++) {
        th_post(&r, f->base, MSGS, AN_BODY "}", NULL);
        ok += r.status == 200;
        over += r.status == 529;
        th_resp_free(&r);
    }
    assert_int_equal(ok + over, 40);
    assert_in_range(over, 8, 32);
}

static void slow_factor_multiplies_configured_latency(void **state) {
    (void)state;
    mock_config cfg = {.ttft_us = 50 * FB_US_PER_MS};
    fixture *f = th_start(&cfg);
    resp r;
    th_post(&r, f->base, "/__fusebox/faults", "[{\"slow\":{\"factor\":6}}]", NULL);
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    assert_true(r.headers_us - r.start_us >= 290 * FB_US_PER_MS);
    /* the planned time, however late the answer went: 6 x 50 ms */
    th_assert_hdr(&r, "openai-processing-ms", "300");
    th_resp_free(&r);
    th_stop(f);
}

/* ---- capacity ------------------------------------------------------------------------------ */

static void capacity_rpm_answers_429_with_the_bucket_wait(void **state) {
    (void)state;
    mock_config cfg = {.capacity = {.requests_per_min = 2}};
    fixture *f = th_start(&cfg);
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_assert_hdr(&r, "x-ratelimit-limit-requests", "2");
    th_assert_hdr(&r, "x-ratelimit-remaining-requests", "1");
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_assert_hdr(&r, "x-ratelimit-remaining-requests", "0");
    th_resp_free(&r);
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 429);
    /* One request refills every 30 s: a little under 30 s remain, in whole seconds (OpenAI
     * sends no retry-after-ms); the message names the configured limit. */
    char v[64];
    assert_false(th_has_hdr(&r, "retry-after-ms"));
    assert_true(th_hdr(&r, "retry-after", v, sizeof v));
    assert_true(atoi(v) >= 26 && atoi(v) <= 30);
    th_assert_hdr(&r, "x-ratelimit-remaining-requests", "0");
    th_assert_hdr(&r, "x-ratelimit-limit-requests", "2");
    assert_true(th_hdr(&r, "x-ratelimit-reset-requests", v, sizeof v));
    assert_non_null(strchr(v, 's'));
    assert_non_null(strstr(r.body.p, "requests per min (RPM): Limit 2, Used 2, Requested 1"));
    th_resp_free(&r);
    th_stop(f);
}

static void capacity_concurrency_limits_requests_in_flight(void **state) {
    (void)state;
    mock_config cfg = {.capacity = {.concurrency = 1}};
    fixture *f = th_start(&cfg);
    char url[128];
    snprintf(url, sizeof url, "%s%s", f->base, CHAT);
    struct curl_slist *hh = curl_slist_append(NULL, "x-fusebox-fault: ttft-400ms");
    resp rs, rq;
    CURLM *m = curl_multi_init();
    CURL *cs = th_make_easy(&rs, url, "POST", OA_BODY "}", hh, TIMEOUT_MS);
    curl_multi_add_handle(m, cs);
    int running = 1;
    mock_stats st = {0};
    /* The second request goes once the first holds the slot (not after a guessed time). */
    for (int i = 0; i < 500 && st.busy == 0; i++) {
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 10, NULL);
        mock_server_stats(f->srv, &st);
    }
    assert_int_equal(st.busy, 1);
    CURL *cq = th_make_easy(&rq, url, "POST", OA_BODY "}", NULL, TIMEOUT_MS);
    curl_multi_add_handle(m, cq);
    do {
        curl_multi_perform(m, &running);
        if (running) curl_multi_poll(m, NULL, 0, 50, NULL);
    } while (running);
    curl_easy_getinfo(cs, CURLINFO_RESPONSE_CODE, &rs.status);
    curl_easy_getinfo(cq, CURLINFO_RESPONSE_CODE, &rq.status);
    assert_int_equal(rs.status, 200);
    assert_int_equal(rq.status, 429);
    curl_multi_remove_handle(m, cs);
    curl_multi_remove_handle(m, cq);
    curl_easy_cleanup(cs);
    curl_easy_cleanup(cq);
    curl_multi_cleanup(m);
    curl_slist_free_all(hh);
    th_resp_free(&rs);
    th_resp_free(&rq);
    resp r;
    th_post(&r, f->base, CHAT, OA_BODY "}", NULL);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_stop(f);
}

static void destroy_with_waiting_connections_is_clean(void **state) {
    (void)state;
    fixture *f = th_start(NULL);
    char url[128];
    snprintf(url, sizeof url, "%s%s", f->base, CHAT);
    struct curl_slist *hh = curl_slist_append(NULL, "x-fusebox-fault: hang");
    struct curl_slist *hs = curl_slist_append(NULL, "x-fusebox-fault: ttft-10s");
    resp r1, r2;
    CURLM *m = curl_multi_init();
    CURL *c1 = th_make_easy(&r1, url, "POST", OA_BODY "}", hh, TIMEOUT_MS);
    CURL *c2 = th_make_easy(&r2, url, "POST", OA_BODY ",\"stream\":true}", hs, TIMEOUT_MS);
    curl_multi_add_handle(m, c1);
    curl_multi_add_handle(m, c2);
    int running = 1;
    mock_stats st;
    for (int i = 0; i < 200; i++) {
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 10, NULL);
        mock_server_stats(f->srv, &st);
        if (st.suspended == 2) break;
    }
    assert_int_equal(st.suspended, 2);
    th_stop(f); /* must resume both and return */
    do {
        curl_multi_perform(m, &running);
        if (running) curl_multi_poll(m, NULL, 0, 50, NULL);
    } while (running);
    curl_multi_remove_handle(m, c1);
    curl_multi_remove_handle(m, c2);
    curl_easy_cleanup(c1);
    curl_easy_cleanup(c2);
    curl_multi_cleanup(m);
    curl_slist_free_all(hh);
    curl_slist_free_all(hs);
    th_resp_free(&r1);
    th_resp_free(&r2);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(duration_parse_units),
        cmocka_unit_test(go_duration_format_matches_openai_headers),
        cmocka_unit_test(spec_parses_terms_and_arguments),
        cmocka_unit_test(timeline_parse_errors_name_the_json_path),
        cmocka_unit_test(timeline_flap_is_down_for_the_first_half_of_each_period),
        cmocka_unit_test(timeline_fractions_are_reproducible_per_attempt),
        cmocka_unit_test(processing_ms_is_the_planned_time),
        cmocka_unit_test_setup_teardown(openai_success_has_headers_and_consistent_usage, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(anthropic_success_shape_and_headers, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(openai_stream_frames_role_content_finish_usage_done,
                                        th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(anthropic_stream_event_sequence, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(models_and_count_tokens_endpoints, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(status_faults_use_each_providers_error_body, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(retry_after_flavours_and_should_retry, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(context_length_and_content_filter_bodies, th_setup,
                                        th_teardown),
        cmocka_unit_test(context_window_config_rejects_long_prompts),
        cmocka_unit_test_setup_teardown(model_name_selects_the_fault, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(times_fails_the_first_n_attempts_per_key, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(reset_closes_the_connection_without_a_response, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(hang_does_not_block_a_concurrent_request, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(slow_first_token_sends_headers_first, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(stall_pauses_after_k_chunks, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(cut_mid_stream_is_an_abortive_close, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(truncated_stream_ends_cleanly_without_terminator, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(malformed_chunk_is_not_json, th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(in_band_stream_errors_per_dialect, th_setup, th_teardown),
        cmocka_unit_test(oversized_body_gets_413_in_provider_format),
        cmocka_unit_test_setup_teardown(malformed_requests_get_400_unknown_404_wrong_method_405,
                                        th_setup, th_teardown),
        cmocka_unit_test_setup_teardown(garbage_over_a_raw_socket_does_not_crash, th_setup,
                                        th_teardown),
        cmocka_unit_test(connection_limit_refuses_extra_connections),
        cmocka_unit_test_setup_teardown(control_faults_rejects_bad_scripts_with_the_path, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(control_log_records_attempts_and_reset_clears_it, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(control_log_records_what_the_verdict_reads, th_setup,
                                        th_teardown),
        cmocka_unit_test(control_log_ring_reports_dropped_entries),
        cmocka_unit_test(timeline_runs_on_scaled_time),
        cmocka_unit_test_setup_teardown(timeline_fraction_replays_after_reset, th_setup,
                                        th_teardown),
        cmocka_unit_test_setup_teardown(timeline_transport_and_stream_faults, th_setup,
                                        th_teardown),
        cmocka_unit_test(slow_factor_multiplies_configured_latency),
        cmocka_unit_test(capacity_rpm_answers_429_with_the_bucket_wait),
        cmocka_unit_test(capacity_concurrency_limits_requests_in_flight),
        cmocka_unit_test(destroy_with_waiting_connections_is_clean),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
