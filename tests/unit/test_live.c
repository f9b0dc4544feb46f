/*
 * test_live.c - the live driver's pieces that need no clock: the SSE reader,
 * request bodies, answer reading in both dialects, the compare table; and
 * the mock's error latency, which the live driver relies on, over loopback.
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
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "live/compare.h"
#include "live/fidelity.h"
#include "live/live.h"
#include "live/otlp.h"
#include "live/sse.h"
#include "live/wire.h"
#include "mockserver/mock.h"
#include "tests/unit/helpers.h"

/* ---- SSE ---- */

typedef struct events {
    char event[8][64];
    char data[8][256];
    bool truncated[8];
    int n;
} events;

static void on_event(void *ctx, const char *event, const char *data, size_t len, bool truncated) {
    events *e = ctx;
    assert_true(e->n < 8);
    assert_int_equal(strlen(data), len);
    snprintf(e->event[e->n], sizeof e->event[0], "%s", event);
    snprintf(e->data[e->n], sizeof e->data[0], "%s", data);
    e->truncated[e->n] = truncated;
    e->n++;
}

static void sse_events_survive_any_split(void **state) {
    (void)state;
    const char *text = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
                       ": a comment\n"
                       "data:first\ndata: second\n\n"
                       "id: 7\nretry: 10\nevent:ping\ndata: {}\r\r";
    size_t len = strlen(text);
    for (size_t piece = 1; piece <= len; piece++) {
        static live_sse p;
        events e = {0};
        live_sse_init(&p, on_event, &e);
        for (size_t off = 0; off < len; off += piece)
            live_sse_feed(&p, text + off, off + piece <= len ? piece : len - off);
        assert_int_equal(e.n, 3);
        assert_string_equal(e.event[0], "message_start");
        assert_string_equal(e.data[0], "{\"a\":1}");
        assert_string_equal(e.event[1], "");
        assert_string_equal(e.data[1], "first\nsecond");
        assert_string_equal(e.event[2], "ping");
        assert_string_equal(e.data[2], "{}");
        assert_false(e.truncated[0] || e.truncated[1] || e.truncated[2]);
    }
}

static void sse_event_without_data_is_not_dispatched(void **state) {
    (void)state;
    static live_sse p;
    events e = {0};
    live_sse_init(&p, on_event, &e);
    live_sse_feed(&p, "event: x\n\ndata: y\n\n", 19);
    assert_int_equal(e.n, 1);
    assert_string_equal(e.event[0], "");
    assert_string_equal(e.data[0], "y");
}

static void sse_overlong_line_is_cut_and_flagged(void **state) {
    (void)state;
    static live_sse p;
    static char big[LIVE_SSE_LINE_MAX * 2];
    events e = {0};
    live_sse_init(&p, on_event, &e);
    memset(big, 'x', sizeof big);
    live_sse_feed(&p, "data: ", 6);
    live_sse_feed(&p, big, sizeof big);
    live_sse_feed(&p, "\n\ndata: ok\n\n", 12);
    assert_int_equal(e.n, 2);
    assert_true(e.truncated[0]);
    assert_false(e.truncated[1]);
    assert_string_equal(e.data[1], "ok");
}

/* ---- requests ---- */

static void request_bodies_carry_the_scenario_tokens(void **state) {
    (void)state;
    for (int d = LIVE_OPENAI; d <= LIVE_ANTHROPIC; d++) {
        util_buf b = {0};
        live_wire_request(&b, (live_dialect)d, "m\"odel", 1234, 56, true);
        cJSON *root = cJSON_Parse(b.p);
        assert_non_null(root);
        assert_string_equal(cJSON_GetObjectItem(root, "model")->valuestring, "m\"odel");
        const char *limit = d == LIVE_ANTHROPIC ? "max_tokens" : "max_completion_tokens";
        assert_int_equal(cJSON_GetObjectItem(root, limit)->valueint, 56);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(root, "stream")));
        assert_int_equal(cJSON_GetObjectItem(root, "stream_options") != NULL, d == LIVE_OPENAI);
        const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "messages"), 0);
        const char *content = cJSON_GetObjectItem(m, "content")->valuestring;
        /* the mock (and a chars/4 estimate) counts exactly the prompt tokens */
        assert_int_equal((strlen(content) + 3) / 4, 1234);
        cJSON_Delete(root);
        util_buf_free(&b);
    }
}

static void request_asks_for_at_least_one_token(void **state) {
    (void)state;
    util_buf b = {0};
    live_wire_request(&b, LIVE_ANTHROPIC, "m", 0, 0, false);
    assert_non_null(strstr(b.p, "\"max_tokens\":1,"));
    assert_null(strstr(b.p, "stream"));
    util_buf_free(&b);
}

static void dialects_parse_and_guess(void **state) {
    (void)state;
    live_dialect d;
    assert_int_equal(live_dialect_parse("anthropic", &d), FB_OK);
    assert_int_equal(d, LIVE_ANTHROPIC);
    assert_int_equal(live_dialect_parse("openai", &d), FB_OK);
    assert_int_equal(d, LIVE_OPENAI);
    assert_int_equal(live_dialect_parse("gemini", &d), FB_EINVAL);
    assert_int_equal(live_dialect_guess("Anthropic-eu"), LIVE_ANTHROPIC);
    assert_int_equal(live_dialect_guess("claude-backup"), LIVE_ANTHROPIC);
    assert_int_equal(live_dialect_guess("azure-openai"), LIVE_OPENAI);
    assert_string_equal(live_dialect_path(LIVE_ANTHROPIC), "/v1/messages");
    assert_string_equal(live_dialect_path(LIVE_OPENAI), "/v1/chat/completions");
}

/* ---- answers ---- */

static void error_bodies_reduce_to_their_kind(void **state) {
    (void)state;
    const struct {
        const char *body;
        fb_error_kind kind;
    } cases[] = {
        {"{\"error\":{\"message\":\"This model's maximum context length is 16385 tokens.\","
         "\"type\":\"invalid_request_error\",\"param\":\"messages\",\"code\":"
         "\"context_length_exceeded\"}}",
         FB_ERRKIND_CONTEXT_LENGTH},
        {"{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"param\":null,"
         "\"code\":\"rate_limit_exceeded\"}}",
         FB_ERRKIND_RATE_LIMIT},
        {"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
         "\"request_id\":\"req_011C\"}",
         FB_ERRKIND_OVERLOADED},
        {"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt "
         "is "
         "too long: 205351 tokens > 200000 maximum\"}}",
         FB_ERRKIND_CONTEXT_LENGTH},
        {"{\"error\":{\"message\":\"flagged\",\"type\":\"invalid_request_error\",\"code\":"
         "\"content_filter\"}}",
         FB_ERRKIND_CONTENT_POLICY},
        {"{\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}",
         FB_ERRKIND_OTHER},
        {"<html>502 Bad Gateway</html>", FB_ERRKIND_NONE},
        {"{\"detail\":\"nope\"}", FB_ERRKIND_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(live_wire_error_kind(cases[i].body, strlen(cases[i].body)), cases[i].kind);
}

static void success_bodies_give_usage_and_refusals(void **state) {
    (void)state;
    uint32_t tokens;
    bool refused;
    const char *oa = "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
                     "\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":"
                     "{\"prompt_tokens\":13,\"completion_tokens\":5,\"total_tokens\":18}}";
    assert_int_equal(live_wire_success(LIVE_OPENAI, oa, strlen(oa), &tokens, &refused, NULL),
                     FB_OK);
    assert_int_equal(tokens, 5);
    assert_false(refused);
    const char *an = "{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[],\"stop_reason\":"
                     "\"refusal\",\"usage\":{\"input_tokens\":11,\"output_tokens\":6}}";
    assert_int_equal(live_wire_success(LIVE_ANTHROPIC, an, strlen(an), &tokens, &refused, NULL),
                     FB_OK);
    assert_int_equal(tokens, 6);
    assert_true(refused);
    const char *filtered = "{\"choices\":[{\"finish_reason\":\"content_filter\"}]}";
    assert_int_equal(
        live_wire_success(LIVE_OPENAI, filtered, strlen(filtered), &tokens, &refused, NULL), FB_OK);
    assert_true(refused);
    /* half a body, or the other dialect's body, is not an answer */
    assert_int_equal(live_wire_success(LIVE_OPENAI, oa, strlen(oa) / 2, &tokens, &refused, NULL),
                     FB_EPARSE);
    assert_int_equal(live_wire_success(LIVE_ANTHROPIC, oa, strlen(oa), &tokens, &refused, NULL),
                     FB_EPARSE);
    assert_int_equal(live_wire_success(LIVE_OPENAI, an, strlen(an), &tokens, &refused, NULL),
                     FB_EPARSE);
}

static void feed(live_stream *st, const char *event, const char *data) {
    live_stream_event(st, event, data, strlen(data));
}

static void answers_say_their_model_stop_reason_and_prompt_tokens(void **state) {
    (void)state;
    uint32_t tokens;
    bool refused;
    live_meta m;
    const char *oa = "{\"id\":\"c\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,"
                     "\"message\":{\"content\":\"hi\"},\"finish_reason\":\"length\"}],\"usage\":"
                     "{\"prompt_tokens\":13,\"completion_tokens\":5}}";
    assert_int_equal(live_wire_success(LIVE_OPENAI, oa, strlen(oa), &tokens, &refused, &m), FB_OK);
    assert_string_equal(m.model, "gpt-4o-mini-2024-07-18");
    assert_string_equal(m.finish, "length");
    assert_int_equal(m.tokens_in, 13);
    /* what the target sends goes into JSON: no quote, backslash or control character survives */
    const char *an = "{\"model\":\"claude\\\"x\",\"content\":[],\"stop_reason\":\"end_turn\","
                     "\"usage\":{\"input_tokens\":11,\"output_tokens\":6}}";
    assert_int_equal(live_wire_success(LIVE_ANTHROPIC, an, strlen(an), &tokens, &refused, &m),
                     FB_OK);
    assert_string_equal(m.model, "claude");
    assert_string_equal(m.finish, "end_turn");
    assert_int_equal(m.tokens_in, 11);
    live_stream st;
    live_stream_init(&st, LIVE_ANTHROPIC);
    feed(&st, "message_start",
         "{\"type\":\"message_start\",\"message\":{\"model\":\"claude-3-5\","
         "\"stop_reason\":null,\"usage\":{\"input_tokens\":21,\"output_tokens\":1}}}");
    feed(&st, "message_delta",
         "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},"
         "\"usage\":{\"output_tokens\":6}}");
    assert_string_equal(st.meta.model, "claude-3-5");
    assert_string_equal(st.meta.finish, "max_tokens");
    assert_int_equal(st.meta.tokens_in, 21);
    live_stream_init(&st, LIVE_OPENAI);
    const char *c1 = "{\"model\":\"m1\",\"choices\":[{\"delta\":{\"content\":\"a\"},"
                     "\"finish_reason\":null}]}";
    const char *c2 = "{\"model\":\"m2\",\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}";
    const char *c3 = "{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1}}";
    feed(&st, "", c1);
    feed(&st, "", c2);
    feed(&st, "", c3);
    assert_string_equal(st.meta.model, "m1");
    assert_string_equal(st.meta.finish, "stop");
    assert_int_equal(st.meta.tokens_in, 7);
}

static void openai_stream_counts_tokens_until_done(void **state) {
    (void)state;
    live_stream st;
    live_stream_init(&st, LIVE_OPENAI);
    feed(&st, "",
         "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}");
    assert_int_equal(st.chunks, 0);
    feed(&st, "", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"I'm\"}}]}");
    feed(&st, "", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" here\"}}]}");
    feed(&st, "", "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}");
    assert_int_equal(live_stream_tokens(&st), 2);
    feed(&st, "", "{\"choices\":[],\"usage\":{\"prompt_tokens\":14,\"completion_tokens\":30}}");
    assert_false(st.done);
    feed(&st, "", "[DONE]");
    assert_true(st.done);
    assert_int_equal(st.chunks, 2);
    assert_int_equal(live_stream_tokens(&st), 30);
    assert_false(st.error || st.malformed || st.refused);
    /* after the terminator, nothing counts (the SDKs stop reading) */
    feed(&st, "", "{\"error\":{\"type\":\"server_error\"}}");
    assert_false(st.error);
}

static void openai_stream_in_band_error_and_malformed(void **state) {
    (void)state;
    live_stream st;
    live_stream_init(&st, LIVE_OPENAI);
    feed(&st, "", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}");
    feed(&st, "",
         "{\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\","
         "\"param\":null,\"code\":null}}");
    assert_true(st.error);
    assert_int_equal(st.error_kind, FB_ERRKIND_OTHER);
    assert_int_equal(st.chunks, 1);
    live_stream_init(&st, LIVE_OPENAI);
    feed(&st, "", "{\"index\":0,\"delta\":{\"content\":\"broken");
    assert_true(st.malformed);
    live_stream_init(&st, LIVE_OPENAI);
    feed(&st, "", "{\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}]}");
    assert_true(st.refused);
}

static void anthropic_stream_events(void **state) {
    (void)state;
    live_stream st;
    live_stream_init(&st, LIVE_ANTHROPIC);
    feed(&st, "message_start",
         "{\"type\":\"message_start\",\"message\":{\"usage\":"
         "{\"input_tokens\":11,\"output_tokens\":1}}}");
    feed(&st, "ping", "{\"type\": \"ping\"}");
    feed(&st, "content_block_delta",
         "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
         "{\"type\":\"text_delta\",\"text\":\"Hello\"}}");
    feed(&st, "unknown_future_event", "{\"type\":\"unknown_future_event\"}");
    feed(&st, "message_delta",
         "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
         "\"end_turn\"},\"usage\":{\"output_tokens\":6}}");
    assert_false(st.done);
    feed(&st, "message_stop", "{\"type\":\"message_stop\"}");
    assert_true(st.done);
    assert_int_equal(st.chunks, 1);
    assert_int_equal(live_stream_tokens(&st), 6);
    live_stream_init(&st, LIVE_ANTHROPIC);
    feed(&st, "content_block_delta", "{\"type\":\"content_block_delta\"}");
    feed(&st, "error",
         "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
         "\"Overloaded\"}}");
    assert_true(st.error);
    assert_int_equal(st.error_kind, FB_ERRKIND_OVERLOADED);
    live_stream_init(&st, LIVE_ANTHROPIC);
    feed(&st, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{");
    assert_true(st.malformed);
    live_stream_init(&st, LIVE_ANTHROPIC);
    feed(&st, "message_delta",
         "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
         "\"refusal\"}}");
    assert_true(st.refused);
}

/* ---- compare ---- */

static const live_cmp_row *row(const live_cmp *c, const char *metric) {
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->rows[i].metric, metric) == 0) return &c->rows[i];
    fail_msg("no row %s", metric);
    return NULL;
}

/* compare.md of c, in memory (free it). */
static char *compare_md(const sim_scenario *sc, const live_cmp *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    live_compare_markdown(f, sc, c);
    fclose(f);
    return buf;
}

/* compare.json of c, parsed (cJSON_Delete it). */
static cJSON *compare_doc(const sim_scenario *sc, const live_cmp *c, const live_tolerances *t) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(live_compare_json(f, sc, c, t), FB_OK);
    fclose(f);
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    assert_non_null(root);
    return root;
}

static void compare_rows_hold_their_tolerances(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"c\",\"duration\":\"10s\",\"pods\":{\"count\":3},"
                               "\"traffic\":[{\"class\":\"x\",\"arrivals\":{\"poisson\":\"1/s\"}}],"
                               "\"providers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
                               "\"policy\":{\"breaker\":{\"consecutive_failures\":3}}}");
    sim_summary *s = th_summary("default"), *l = th_summary("default");
    s->requests = l->requests = 1000;
    s->ended[SIM_END_SUCCESS] = 990;
    s->ended[SIM_END_EXHAUSTED] = 10;
    l->ended[SIM_END_SUCCESS] = 975; /* 97.5% vs 99%: 1.5 points, within 2 */
    l->ended[SIM_END_EXHAUSTED] = 25;
    s->success_fallback = 100;
    l->success_fallback = 116; /* +16%: outside 15% */
    s->providers[0].attempts = 20;
    l->providers[0].attempts = 24; /* +4: within the floor of 5 */
    s->providers[0].breaker_opens = 5;
    l->providers[0].breaker_opens = 8; /* +3: within 1 per pod x 3 pods */
    s->providers[0].breaker_transitions = 12;
    l->providers[0].breaker_transitions = 2; /* -10: outside 3 per pod */
    fb_hist_record_n(&s->latency, 1000000, 1000);
    fb_hist_record_n(&l->latency, 1040000, 1000); /* +40 ms: within 15% of 1 s */
    live_tolerances t;
    live_tolerances_default(&t);
    live_cmp c = {0};
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 10), FB_OK);
    assert_true(row(&c, "success_rate")->ok);
    assert_true(fabs(row(&c, "success_rate")->diff + 0.015) < 1e-9);
    assert_false(row(&c, "success_fallback")->ok);
    assert_true(row(&c, "attempts[a]")->ok);
    assert_true(row(&c, "attempts[b]")->ok);
    assert_true(isnan(row(&c, "attempts[a]")->rel) == false);
    assert_true(row(&c, "breaker_opens[a]")->ok);
    assert_int_equal((int)row(&c, "breaker_opens[a]")->tolerance, 3);
    assert_false(row(&c, "breaker_transitions[a]")->ok);
    assert_true(row(&c, "latency_p50")->ok);
    assert_false(c.ok);
    /* the latency floor is real time: 5 ms x 10 = 50 ms */
    assert_true(fabs(row(&c, "latency_p99")->tolerance - 150000) < 1e-6);
    char *buf = compare_md(sc, &c);
    assert_non_null(strstr(buf, "| default | success_fallback | 100 | 116 | +16 | +16.0% | ±15"));
    assert_non_null(strstr(buf, "**NO**"));
    free(buf);
    cJSON *root = compare_doc(sc, &c, &t);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(root, "ok")));
    assert_string_equal(cJSON_GetObjectItem(root, "verdict")->valuestring, "fail");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "rows")), (int)c.n);
    cJSON_Delete(root);
    live_compare_free(&c);
    free(s);
    free(l);
    scn_free(sc);
}

/* The success rate's tolerance widens to 3 standard errors of the difference over few requests
   (two runs of a fractional fault hit different attempts), and stays 2 points over many. */
static void compare_success_rate_allows_for_sampling(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"c\",\"duration\":\"10s\","
                               "\"traffic\":[{\"class\":\"x\",\"arrivals\":{\"poisson\":\"1/s\"}}],"
                               "\"providers\":[{\"name\":\"a\"}]}");
    sim_summary *s = th_summary("default"), *l = th_summary("default");
    live_tolerances t;
    live_tolerances_default(&t);
    /* 600 requests each, 94.5% and 91.0%: 3.5 points apart; pooled 92.75%, one standard error
       sqrt(0.9275 x 0.0725 x 2/600) = 1.50 points, the tolerance 4.5 */
    s->requests = l->requests = 600;
    s->ended[SIM_END_SUCCESS] = 567;
    s->ended[SIM_END_EXHAUSTED] = 33;
    l->ended[SIM_END_SUCCESS] = 546;
    l->ended[SIM_END_EXHAUSTED] = 54;
    live_cmp c = {0};
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 10), FB_OK);
    const live_cmp_row *r = row(&c, "success_rate");
    assert_true(r->ok);
    assert_true(fabs(r->tolerance - 3 * sqrt(0.9275 * 0.0725 * 2 / 600.0)) < 1e-9);
    assert_string_equal(r->rule, "2 points or 3 s.e.");
    live_compare_free(&c);
    /* without the sampling term: the fixed 2 points, and the same runs fail */
    char msg[200];
    assert_int_equal(live_tolerance_set(&t, "success_rate_se=0", msg, sizeof msg), FB_OK);
    memset(&c, 0, sizeof c);
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 10), FB_OK);
    assert_false(row(&c, "success_rate")->ok);
    assert_true(row(&c, "success_rate")->tolerance == 0.02);
    assert_string_equal(row(&c, "success_rate")->rule, "2 points");
    live_compare_free(&c);
    /* 3,000 requests each, 99% and 96.5%: 3 s.e. is 1.15 points, so 2 points hold, and fail */
    live_tolerances_default(&t);
    s->requests = l->requests = 3000;
    s->ended[SIM_END_SUCCESS] = 2970;
    s->ended[SIM_END_EXHAUSTED] = 30;
    l->ended[SIM_END_SUCCESS] = 2895;
    l->ended[SIM_END_EXHAUSTED] = 105;
    memset(&c, 0, sizeof c);
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 10), FB_OK);
    assert_true(row(&c, "success_rate")->tolerance == 0.02);
    assert_false(row(&c, "success_rate")->ok);
    live_compare_free(&c);
    /* every request succeeded in both: no sampling error, 2 points */
    s->ended[SIM_END_SUCCESS] = l->ended[SIM_END_SUCCESS] = 3000;
    s->ended[SIM_END_EXHAUSTED] = l->ended[SIM_END_EXHAUSTED] = 0;
    memset(&c, 0, sizeof c);
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 10), FB_OK);
    assert_true(row(&c, "success_rate")->tolerance == 0.02);
    assert_true(row(&c, "success_rate")->ok);
    live_compare_free(&c);
    free(s);
    free(l);
    scn_free(sc);
}

/* A latency percentile's tolerance reaches as far as the simulated run's own latencies lie 3
   standard errors of the rank away: over 600 requests a p99 is the sixth slowest. */
static void compare_latency_allows_for_the_ranks_sampling(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"c\",\"duration\":\"10s\","
                               "\"traffic\":[{\"class\":\"x\",\"arrivals\":{\"poisson\":\"1/s\"}}],"
                               "\"providers\":[{\"name\":\"a\"}]}");
    sim_summary *s = th_summary("default"), *l = th_summary("default");
    s->requests = l->requests = 600;
    s->ended[SIM_END_SUCCESS] = l->ended[SIM_END_SUCCESS] = 600;
    /* the simulated run: 590 at 1 s, a tail of ten from 1.1 s to 1.55 s; the live run: the same
       body, a tail of ten from 1.3 s to 1.75 s (its p99 about 20% above) */
    fb_hist_record_n(&s->latency, 1000000, 590);
    fb_hist_record_n(&l->latency, 1000000, 590);
    for (int k = 0; k < 10; k++) {
        fb_hist_record(&s->latency, 1100000 + 50000 * k);
        fb_hist_record(&l->latency, 1300000 + 50000 * k);
    }
    double sp = (double)fb_hist_percentile(&s->latency, 99);
    double lp = (double)fb_hist_percentile(&l->latency, 99);
    assert_true(lp > sp * 1.15); /* outside 15% */
    live_tolerances t;
    live_tolerances_default(&t);
    live_cmp c = {0};
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 1), FB_OK);
    const live_cmp_row *r = row(&c, "latency_p99");
    /* q + 3 x sqrt(0.99 x 0.01 x 2/600) is past 1: the simulated run's slowest */
    assert_true(fabs(r->tolerance - ((double)fb_hist_max(&s->latency) - sp)) < 1e-6);
    assert_true(r->ok);
    assert_string_equal(r->rule, "15% or 5ms or 3 s.e. of rank");
    /* the p50 sits in the body: its band is flat, 15% applies */
    assert_true(row(&c, "latency_p50")->tolerance == 0.15 * 1e6 ||
                fabs(row(&c, "latency_p50")->tolerance -
                     0.15 * (double)fb_hist_percentile(&s->latency, 50)) < 1e-6);
    live_compare_free(&c);
    char msg[200];
    assert_int_equal(live_tolerance_set(&t, "latency_se=0", msg, sizeof msg), FB_OK);
    memset(&c, 0, sizeof c);
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 1), FB_OK);
    assert_false(row(&c, "latency_p99")->ok);
    assert_string_equal(row(&c, "latency_p99")->rule, "15% or 5ms");
    live_compare_free(&c);
    /* a live run faster than the simulated one: the band's lower side, here the body's 1 s */
    live_tolerances_default(&t);
    memset(&c, 0, sizeof c);
    assert_int_equal(live_compare_variant(&c, sc, l, s, &t, 1), FB_OK);
    assert_true(
        fabs(row(&c, "latency_p99")->tolerance -
             fmax(0.15 * lp,
                  lp - (double)fb_hist_percentile(
                           &l->latency, 100 * (0.99 - 3 * sqrt(0.99 * 0.01 * 2 / 600.0))))) < 1e-6);
    live_compare_free(&c);
    free(s);
    free(l);
    scn_free(sc);
}

static void compare_inconclusive_is_neither_pass_nor_fail(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"c\",\"duration\":\"10s\","
                               "\"traffic\":[{\"class\":\"x\",\"arrivals\":{\"poisson\":\"1/s\"}}],"
                               "\"providers\":[{\"name\":\"a\"}]}");
    sim_summary *s = th_summary("default"), *l = th_summary("default");
    s->requests = 100;
    l->requests = 300; /* far outside its tolerance */
    live_tolerances t;
    live_tolerances_default(&t);
    live_cmp c = {0};
    assert_int_equal(live_compare_variant(&c, sc, s, l, &t, 10), FB_OK);
    assert_int_equal(live_compare_verdict(&c), LIVE_FAIL);
    live_compare_inconclusive(&c, "default", "the machine is busy", 2.5);
    assert_int_equal(live_compare_verdict(&c), LIVE_INCONCLUSIVE);
    char *buf = compare_md(sc, &c);
    assert_non_null(strstr(buf, "**Inconclusive**"));
    assert_non_null(strstr(buf, "- default: the machine is busy"));
    assert_null(strstr(buf, "Some metrics are outside"));
    free(buf);
    cJSON *root = compare_doc(sc, &c, &t);
    assert_string_equal(cJSON_GetObjectItem(root, "verdict")->valuestring, "inconclusive");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "ok")));
    const cJSON *n = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "inconclusive"), 0);
    assert_true(cJSON_GetObjectItem(n, "time_scale_ok")->valuedouble == 2.5);
    cJSON_Delete(root);
    live_compare_free(&c);
    free(s);
    free(l);
    scn_free(sc);
}

/* ---- fidelity: was the run driven faithfully? ---- */

#define FID_SCENARIO                                                                               \
    "{\"name\":\"f\",\"duration\":\"60s\",\"pods\":{\"request_timeout\":\"30s\"},"                 \
    "\"traffic\":[{\"class\":\"x\",\"arrivals\":{\"poisson\":\"10/s\"}}],"                         \
    "\"providers\":[{\"name\":\"openai\",\"latency\":{\"ttft\":\"300ms\","                         \
    "\"per_output_token\":\"2ms\",\"error\":{\"lognormal\":{\"median\":\"40ms\","                  \
    "\"p99\":\"1s\"}}}}],\"policy\":{\"retry\":{\"attempts\":3,\"backoff\":"                       \
    "{\"exponential\":{\"base\":\"100ms\"}}}}}"

static void shortest_time_is_the_smallest_median_delay_or_timeout(void **state) {
    (void)state;
    char what[128];
    sim_scenario *sc = th_load(FID_SCENARIO);
    /* the error latency's median, not the per-token time (it counts only through an answer) */
    assert_int_equal(live_shortest_time(sc, 0, what, sizeof what), 40 * MS);
    assert_string_equal(what, "providers.openai.latency.error (median)");
    scn_free(sc);
    const char *sets[] = {"variants.default.retry.backoff.exponential.base=10ms"};
    sc = th_load_with(FID_SCENARIO, sets, 1, NULL);
    assert_int_equal(live_shortest_time(sc, 0, what, sizeof what), 10 * MS);
    assert_string_equal(what, "variants.default.retry.backoff (base)");
    scn_free(sc);
    const char *local[] = {"traffic[0].service=5ms"};
    sc = th_load_with(FID_SCENARIO, local, 1, NULL);
    assert_int_equal(live_shortest_time(sc, 0, what, sizeof what), 5 * MS);
    assert_string_equal(what, "traffic.x.service (median)");
    scn_free(sc);
}

/* Stats of a run of 10 s wall with a given lag p99 (real us), driver CPU and process waits. */
static live_stats fid_stats(int64_t lag_p99_us, double cpu_s, double wait_s) {
    live_stats st;
    memset(&st, 0, sizeof st);
    st.wall_s = 10;
    st.wire.transfers = 1000;
    st.wire.cancelled = 250;
    st.wire.lag_p99_us = lag_p99_us;
    st.wire.gap_p99_us = lag_p99_us / 2;
    st.wire.cpu_s = cpu_s;
    st.wire.sched.known = true;
    st.wire.sched.run_ns = (uint64_t)(cpu_s * 1e9);
    st.wire.sched.busiest_run_ns = (uint64_t)(cpu_s * 1e9);
    st.wire.sched.wait_ns = (uint64_t)(wait_s * 1e9);
    return st;
}

/* The verdict on a run of FID_SCENARIO at x`scale` with these stats (no simulation at hand). */
static live_fidelity judged(live_stats st, double scale) {
    sim_scenario *sc = th_load(FID_SCENARIO);
    sim_summary *l = th_summary("default");
    live_fidelity f;
    live_fidelity_judge(sc, 0, scale, &st, l, NULL, &f);
    free(l);
    scn_free(sc);
    return f;
}

static void fidelity_allows_half_the_shortest_time(void **state) {
    (void)state;
    /* 0.5 ms real at x40 = 20 ms simulated: exactly half of the 40 ms error latency */
    live_fidelity f = judged(fid_stats(500, 1, 0), 40);
    assert_true(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_NONE);
    assert_true(f.budget_us == 20000 && f.lag_us == 20000);
    assert_non_null(strstr(f.reason, "kept the timing"));
    /* one microsecond more is inconclusive: the lag alone (the machine idle, the driver too) */
    f = judged(fid_stats(501, 1, 0), 40);
    assert_false(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_LAG);
    /* x(0.5 x 20 ms / 0.501 ms) = x19.96, rounded down to two digits */
    assert_true(fabs(f.time_scale_ok - 19) < 1e-9);
    assert_non_null(strstr(f.reason, "Try --time-scale 19 or lower"));
    assert_non_null(strstr(f.reason, "providers.openai.latency.error (median) = 40 ms"));
    assert_non_null(strstr(f.reason, "25% of 1000 transfers were cancelled"));
}

static void fidelity_names_a_busy_machine(void **state) {
    (void)state;
    /* the process waited 2 s for a CPU while running 1 s */
    live_fidelity f = judged(fid_stats(4000, 1, 2), 20);
    assert_false(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_BUSY);
    assert_true(fabs(f.wait_ratio - 2) < 1e-9);
    assert_true(fabs(f.time_scale_ok - 2.5) < 1e-9); /* 0.5 x 20 ms / 4 ms */
    assert_non_null(strstr(f.reason, "the machine is busy"));
    assert_non_null(strstr(f.reason, "(or a quieter machine)"));
}

static void fidelity_saturated_scale_follows_the_simulated_work(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FID_SCENARIO);
    sim_summary *l = th_summary("default"), *sim = th_summary("default");
    live_fidelity f;
    /* the driver busy 9.5 s of 10: saturated; 1000 transfers cost 9.5 ms each */
    live_stats st = fid_stats(50000, 9.5, 0.1);
    l->attempts = 1000;
    live_fidelity_judge(sc, 0, 60, &st, l, NULL, &f);
    assert_int_equal(f.cause, LIVE_CAUSE_SATURATED);
    /* without a simulation: the CPU alone, x60 x 0.5 / 0.95 = x31.6 */
    assert_true(fabs(f.time_scale_ok - 31) < 1e-9);
    /* the simulation asks 100,000 attempts over 60 s: 0.5 x 60 / (100000 x 9.5 ms) = x0.0315 */
    sim->attempts = 100000;
    sim->end_us = 60 * S;
    live_fidelity_judge(sc, 0, 60, &st, l, sim, &f);
    assert_true(fabs(f.time_scale_ok - 0.031) < 1e-9);
    assert_non_null(strstr(f.reason, "its thread was busy 95% of the run"));
    assert_non_null(
        strstr(f.reason, "The simulation makes 100000 attempts where the live run made 1000"));
    free(l);
    free(sim);
    scn_free(sc);
}

/* A late run that made far fewer attempts than the simulation fell short of the work. */
static void fidelity_short_of_the_simulated_work_is_saturated(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FID_SCENARIO);
    sim_summary *l = th_summary("default"), *sim = th_summary("default");
    live_fidelity f;
    /* no thread busy (the driver 50% of 10 s), the machine waiting a lot, 250 ms late */
    live_stats st = fid_stats(250000, 5, 20);
    l->attempts = 4000;
    sim->attempts = 100000; /* the live run made 4% of them */
    sim->end_us = 3600 * S;
    live_fidelity_judge(sc, 0, 60, &st, l, sim, &f);
    assert_int_equal(f.cause, LIVE_CAUSE_SATURATED);
    assert_true(fabs(f.work_share - 0.04) < 1e-9);
    /* 5 ms of CPU per transfer: 0.5 x 3600 s / (100000 x 5 ms) = x3.6, not 0.5 x 20 / 250 */
    assert_true(fabs(f.time_scale_ok - 3.6) < 1e-9);
    assert_non_null(strstr(f.reason, "could not keep up with the scenario's work (4% of the"));
    /* the same run doing the simulation's work: the machine's lag, the budget over it */
    l->attempts = 100000;
    st.wire.transfers = 100000;
    live_fidelity_judge(sc, 0, 60, &st, l, sim, &f);
    assert_int_equal(f.cause, LIVE_CAUSE_BUSY);
    assert_true(fabs(f.time_scale_ok - 0.04) < 1e-9); /* 0.5 x 20 ms / 250 ms */
    free(l);
    free(sim);
    scn_free(sc);
}

/* The driver kept time but the target's answers came later than it planned (queued). */
static void fidelity_names_late_answers(void **state) {
    (void)state;
    /* at x40 the budget is 20 ms simulated (half the 40 ms error latency); the driver 0.1 ms late
     */
    live_stats st = fid_stats(100, 1, 0);
    st.wire.late_samples = 900;
    /* 5.5 ms late: 0.5 ms beyond the wire's 5 ms, 20 ms simulated at x40, exactly the budget */
    st.wire.late_p99_us = LIVE_ANSWER_ALLOW_US + 500;
    live_fidelity f = judged(st, 40);
    assert_true(f.ok);
    assert_true(fabs(f.answer_excess_us - 20000) < 1e-6);
    assert_non_null(strstr(f.reason, "the answers ended 5.5 ms later than planned (p99 of 900"));
    /* a microsecond more is inconclusive, and the cause is the answers, not the driver */
    st.wire.late_p99_us = LIVE_ANSWER_ALLOW_US + 501;
    f = judged(st, 40);
    assert_false(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_ANSWERS);
    assert_string_equal(live_cause_name(f.cause), "answers_late");
    assert_true(fabs(f.time_scale_ok - 20) < 1e-9); /* half the scale */
    assert_non_null(strstr(f.reason, "the target answered later than it planned"));
    assert_non_null(strstr(f.reason, "Try --time-scale 20 or lower"));
    /* 150 ms late, as a queued in-process mock under a sanitizer: still the answers */
    st.wire.late_p99_us = 150000;
    f = judged(st, 20);
    assert_false(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_ANSWERS);
    assert_non_null(strstr(f.reason, "ended 150 ms later than the target planned"));
    /* the driver late as well: its cause, and the answers in a sentence of their own */
    st = fid_stats(4000, 1, 2);
    st.wire.late_samples = 900;
    st.wire.late_p99_us = 150000;
    f = judged(st, 20);
    assert_int_equal(f.cause, LIVE_CAUSE_BUSY);
    assert_non_null(
        strstr(f.reason, "The answers also ended 150 ms later than the target planned"));
    /* without a plan (a target that is not fusebox's mock) the lateness is not judged */
    st = fid_stats(100, 1, 0);
    st.wire.late_p99_us = 150000;
    f = judged(st, 40);
    assert_true(f.ok);
    assert_null(strstr(f.reason, "answers"));
}

/* A stall: the 99th percentiles kept the budget, the slowest 0.1% did not (a process held
 * 40 ms at x20 moved a live run's latency p99 by 25% with its p99 lag at 0.14 ms). */
static void fidelity_judges_the_slowest_tenth_of_a_percent(void **state) {
    (void)state;
    /* x40: the tail may be late by the larger of the 40 ms error latency and 2.5 ms x 40 */
    live_stats st = fid_stats(100, 1, 0);
    st.wire.lag_p999_us = LIVE_TAIL_ALLOW_US;
    st.wire.gap_p999_us = 200;
    live_fidelity f = judged(st, 40);
    assert_true(f.ok);
    assert_true(fabs(f.tail_us - 100000) < 1e-6 && fabs(f.tail_budget_us - 100000) < 1e-6);
    assert_non_null(strstr(f.reason, "the slowest 0.1% 100 ms late within 100 ms"));
    /* a microsecond more: inconclusive, a stall, though the p99 kept the timing */
    st.wire.lag_p999_us = LIVE_TAIL_ALLOW_US + 1;
    f = judged(st, 40);
    assert_false(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_STALLED);
    assert_string_equal(live_cause_name(f.cause), "stalled");
    assert_non_null(strstr(f.reason, "the run stalled"));
    assert_non_null(strstr(f.reason, "the slowest 0.1% did not: the driver was 2.5 ms late"));
    assert_non_null(strstr(f.reason, "or run again (a stall is brief)"));
    /* 0.5 x 40 ms / 2.501 ms = x7.997, rounded down to two digits */
    assert_true(fabs(f.time_scale_ok - 7.9) < 1e-9);
    /* the gaps count as the lag does */
    st.wire.lag_p999_us = 200;
    st.wire.gap_p999_us = 40000;
    f = judged(st, 20);
    assert_int_equal(f.cause, LIVE_CAUSE_STALLED);
    assert_true(fabs(f.tail_us - 800000) < 1e-6);
    /* at x1 the scenario's shortest time is the larger allowance: 40 ms of a 40 ms stall */
    f = judged(st, 1);
    assert_true(f.ok);
    /* the answers' tail, beyond the wire's 5 ms, counts the same way */
    st = fid_stats(100, 1, 0);
    st.wire.late_samples = 3000;
    st.wire.late_p99_us = LIVE_ANSWER_ALLOW_US;
    st.wire.late_p999_us = LIVE_ANSWER_ALLOW_US + LIVE_TAIL_ALLOW_US;
    f = judged(st, 40);
    assert_true(f.ok);
    st.wire.late_p999_us = 40000;
    f = judged(st, 20);
    assert_false(f.ok);
    assert_int_equal(f.cause, LIVE_CAUSE_STALLED);
    assert_true(fabs(f.tail_us - 700000) < 1e-6); /* (40 - 5) ms x 20 */
    assert_non_null(strstr(f.reason, "the answers ended 40 ms later than planned (p99.9"));
    /* a driver late at the 99th percentile is its own cause, whatever the tail */
    st = fid_stats(4000, 1, 2);
    st.wire.lag_p999_us = 50000;
    f = judged(st, 20);
    assert_int_equal(f.cause, LIVE_CAUSE_BUSY);
}

static void compare_tolerances_parse(void **state) {
    (void)state;
    live_tolerances t;
    live_tolerances_default(&t);
    char msg[300];
    assert_int_equal(live_tolerance_set(&t, "success_rate=0.05", msg, sizeof msg), FB_OK);
    assert_true(t.success_rate == 0.05);
    assert_int_equal(live_tolerance_set(&t, "latency_min_ms=20", msg, sizeof msg), FB_OK);
    assert_true(t.latency_min_real_ms == 20);
    assert_int_equal(live_tolerance_set(&t, "latency=-1", msg, sizeof msg), FB_EINVAL);
    assert_int_equal(live_tolerance_set(&t, "latencies=1", msg, sizeof msg), FB_EINVAL);
    assert_non_null(strstr(msg, "KEY one of"));
    assert_int_equal(live_tolerance_set(&t, "counts", msg, sizeof msg), FB_EINVAL);
}

/* ---- OTLP/JSON ---- */

static const cJSON *attr(const cJSON *span, const char *key) {
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(span, "attributes")) {
        if (strcmp(cJSON_GetObjectItem(a, "key")->valuestring, key) == 0)
            return cJSON_GetObjectItem(a, "value");
    }
    return NULL;
}

static const char *attr_str(const cJSON *span, const char *key, const char *kind) {
    const cJSON *v = attr(span, key);
    const cJSON *x = v ? cJSON_GetObjectItem(v, kind) : NULL;
    return x && cJSON_IsString(x) ? x->valuestring : NULL;
}

static void otlp_spans_nest_and_say_what_happened(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"o\",\"duration\":\"1s\","
                               "\"traffic\":[{\"class\":\"x\",\"arrivals\":{\"poisson\":\"1/s\"}}],"
                               "\"providers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    live_otlp *o = NULL;
    assert_int_equal(live_otlp_open(f, 0, &o), FB_OK);
    const live_otlp_provider prov[2] = {
        {LIVE_OPENAI, "gpt-x", "https://api.example.com/v1/chat/completions"},
        {LIVE_ANTHROPIC, "claude-y", "http://[::1]:8080/v1/messages"}};
    const int64_t t0 = 1700000000000000000;
    assert_int_equal(live_otlp_begin(o, sc, 0, 20, t0, prov), FB_OK);
    /* request 7: a 503 from a, then an answer from b; request 9: no attempt at all */
    live_span_attempt at;
    memset(&at, 0, sizeof at);
    at.request = (uint64_t)7 << 32 | 1;
    at.id = 1;
    at.provider = 0;
    at.arrival_us = 1000;
    at.start_us = 1500;
    at.end_us = 21500;
    at.status = 503;
    at.error_type = "503";
    at.max_tokens = 16;
    live_otlp_attempt(o, &at);
    at.id = 2;
    at.resend = 1;
    at.provider = 1;
    at.start_us = 30000;
    at.end_us = 330000;
    at.status = 200;
    at.error_type = NULL;
    at.has_usage = true;
    at.tokens_out = 16;
    snprintf(at.meta.model, sizeof at.meta.model, "claude-y-1");
    snprintf(at.meta.finish, sizeof at.meta.finish, "end_turn");
    at.meta.tokens_in = 50;
    live_otlp_attempt(o, &at);
    sim_port_request r = {(uint64_t)7 << 32 | 1, 0, 1000, 330000, SIM_END_SUCCESS, true, 2};
    live_otlp_request(o, &r);
    sim_port_request none = {(uint64_t)9 << 32 | 4, 0, 5000, 5000, SIM_END_BREAKER_OPEN, false, 0};
    live_otlp_request(o, &none);
    assert_int_equal(live_otlp_spans(o), 4);
    live_otlp_end(o, 400000);
    assert_int_equal(live_otlp_close(o), FB_OK);
    fclose(f);
    cJSON *root = cJSON_Parse(buf);
    assert_non_null(root);
    const cJSON *rs = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "resourceSpans"), 0);
    const cJSON *spans =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(rs, "scopeSpans"), 0), "spans");
    assert_int_equal(cJSON_GetArraySize(spans), 4);
    const cJSON *a503 = cJSON_GetArrayItem(spans, 0), *ok = cJSON_GetArrayItem(spans, 1);
    const cJSON *req = cJSON_GetArrayItem(spans, 2), *alone = cJSON_GetArrayItem(spans, 3);
    /* the tree: both attempts in request 7's trace, under its root */
    const char *trace = cJSON_GetObjectItem(req, "traceId")->valuestring;
    assert_int_equal(strlen(trace), 32);
    assert_string_equal(cJSON_GetObjectItem(a503, "traceId")->valuestring, trace);
    assert_string_equal(cJSON_GetObjectItem(ok, "parentSpanId")->valuestring,
                        cJSON_GetObjectItem(req, "spanId")->valuestring);
    assert_null(cJSON_GetObjectItem(req, "parentSpanId"));
    assert_string_not_equal(cJSON_GetObjectItem(alone, "traceId")->valuestring, trace);
    /* times: unix ns of simulated time, as decimal strings */
    assert_string_equal(cJSON_GetObjectItem(a503, "startTimeUnixNano")->valuestring,
                        "1700000000001500000");
    assert_string_equal(cJSON_GetObjectItem(req, "endTimeUnixNano")->valuestring,
                        "1700000000330000000");
    assert_int_equal(cJSON_GetObjectItem(a503, "kind")->valueint, 3);
    /* the HTTP span: status, error, resend count, where */
    assert_string_equal(attr_str(a503, "http.response.status_code", "intValue"), "503");
    assert_string_equal(attr_str(a503, "error.type", "stringValue"), "503");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(a503, "status"), "code")->valueint, 2);
    assert_null(attr(a503, "http.request.resend_count"));
    assert_string_equal(attr_str(a503, "server.address", "stringValue"), "api.example.com");
    assert_string_equal(attr_str(a503, "server.port", "intValue"), "443");
    assert_string_equal(cJSON_GetObjectItem(a503, "name")->valuestring,
                        "POST /v1/chat/completions");
    assert_string_equal(attr_str(ok, "http.request.resend_count", "intValue"), "1");
    assert_string_equal(attr_str(ok, "server.address", "stringValue"), "::1");
    assert_string_equal(attr_str(ok, "server.port", "intValue"), "8080");
    assert_null(cJSON_GetObjectItem(ok, "status"));
    /* the GenAI root: the provider that answered, its usage and finish reason */
    assert_string_equal(cJSON_GetObjectItem(req, "name")->valuestring, "chat claude-y");
    assert_string_equal(attr_str(req, "gen_ai.provider.name", "stringValue"), "anthropic");
    assert_string_equal(attr_str(req, "gen_ai.response.model", "stringValue"), "claude-y-1");
    assert_string_equal(attr_str(req, "gen_ai.usage.input_tokens", "intValue"), "50");
    assert_string_equal(attr_str(req, "gen_ai.usage.output_tokens", "intValue"), "16");
    const cJSON *fr = cJSON_GetObjectItem(
        cJSON_GetObjectItem(attr(req, "gen_ai.response.finish_reasons"), "arrayValue"), "values");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(fr, 0), "stringValue")->valuestring,
                        "end_turn");
    assert_null(attr(req, "error.type"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(attr(req, "fusebox.via_fallback"), "boolValue")));
    /* a request that made no attempt: its first provider, and why it failed */
    assert_string_equal(attr_str(alone, "gen_ai.provider.name", "stringValue"), "openai");
    assert_string_equal(attr_str(alone, "error.type", "stringValue"), "breaker_open");
    cJSON_Delete(root);
    free(buf);
    scn_free(sc);
}

/* ---- the mock's error latency, over loopback ---- */

static size_t discard(char *p, size_t size, size_t n, void *user) {
    (void)p;
    (void)user;
    return size * n;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void mock_error_answers_take_the_error_latency(void **state) {
    (void)state;
    mock_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.error_latency_us = 2 * FB_US_PER_S; /* timeline time: 200 ms at x10 */
    cfg.time_scale = 10;
    mock_server *srv = NULL;
    char err[256];
    assert_int_equal(mock_server_create(&cfg, &srv, err, sizeof err), FB_OK);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/chat/completions",
             (unsigned)mock_server_port(srv));
    const char *faults[] = {"x-fusebox-fault: 503", NULL};
    for (size_t i = 0; i < 2; i++) {
        CURL *e = curl_easy_init();
        struct curl_slist *h = faults[i] ? curl_slist_append(NULL, faults[i]) : NULL;
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "{\"model\":\"m\",\"messages\":[]}");
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
        double t0 = seconds();
        assert_int_equal(curl_easy_perform(e), CURLE_OK);
        double took = seconds() - t0;
        long status = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        if (faults[i]) {
            assert_int_equal(status, 503);
            assert_true(took >= 0.2); /* an error waits for the error latency ... */
        } else {
            assert_int_equal(status, 200);
            assert_true(took < 0.2); /* ... a success (ttft 0) does not */
        }
        curl_slist_free_all(h);
        curl_easy_cleanup(e);
    }
    mock_server_destroy(srv);
}

static void count_start(void *user) {
    (*(int *)user)++;
}

/* live_run() wants a URL for every provider and calls on_start once, as its clock starts. */
static void live_run_needs_urls_and_calls_on_start(void **state) {
    (void)state;
    static const char text[] =
        "{\"name\": \"t\", \"seed\": 1, \"duration\": \"1s\", \"traffic\": [{\"class\": \"c\", "
        "\"arrivals\": {\"constant\": \"10/s\"}, \"completion_tokens\": 4}], \"providers\": "
        "[{\"name\": \"openai\", \"latency\": {\"ttft\": \"10ms\"}}]}";
    sim_scenario *sc = NULL;
    sim_error err;
    assert_int_equal(scn_parse(text, strlen(text), "t.json", NULL, 0, NULL, &sc, &err), FB_OK);
    int starts = 0;
    live_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.time_scale = 10;
    cfg.on_start = count_start;
    cfg.on_start_user = &starts;
    sim_summary *out = malloc(sizeof *out);
    assert_non_null(out);
    assert_int_equal(live_run(sc, 0, &cfg, NULL, out, NULL, &err), FB_EINVAL);
    assert_non_null(strstr(err.msg, "provider openai: no target URL"));
    assert_int_equal(starts, 0); /* a setup failure: no clock started */

    mock_config mc;
    memset(&mc, 0, sizeof mc);
    mc.time_scale = 10;
    mock_server *srv = NULL;
    char msg[256], url[64];
    assert_int_equal(mock_server_create(&mc, &srv, msg, sizeof msg), FB_OK);
    snprintf(url, sizeof url, "http://127.0.0.1:%u", (unsigned)mock_server_port(srv));
    /* a target that refuses connections: a setup failure naming it, no clock started */
    cfg.targets[0].url = "http://127.0.0.1:1";
    assert_int_equal(live_run(sc, 0, &cfg, NULL, out, NULL, &err), FB_EIO);
    assert_non_null(strstr(err.msg, "provider openai: http://127.0.0.1:1 refuses connections"));
    assert_int_equal(starts, 0);
    cfg.targets[0].url = url;
    live_stats st;
    assert_int_equal(live_run(sc, 0, &cfg, NULL, out, &st, &err), FB_OK);
    assert_int_equal(starts, 1);
    assert_true(out->complete);
    assert_true(st.wire.transfers > 0);
    assert_string_equal(st.urls[0], url);
    mock_server_destroy(srv);
    free(out);
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sse_events_survive_any_split),
        cmocka_unit_test(sse_event_without_data_is_not_dispatched),
        cmocka_unit_test(sse_overlong_line_is_cut_and_flagged),
        cmocka_unit_test(request_bodies_carry_the_scenario_tokens),
        cmocka_unit_test(request_asks_for_at_least_one_token),
        cmocka_unit_test(dialects_parse_and_guess),
        cmocka_unit_test(error_bodies_reduce_to_their_kind),
        cmocka_unit_test(success_bodies_give_usage_and_refusals),
        cmocka_unit_test(answers_say_their_model_stop_reason_and_prompt_tokens),
        cmocka_unit_test(openai_stream_counts_tokens_until_done),
        cmocka_unit_test(openai_stream_in_band_error_and_malformed),
        cmocka_unit_test(anthropic_stream_events),
        cmocka_unit_test(compare_rows_hold_their_tolerances),
        cmocka_unit_test(compare_tolerances_parse),
        cmocka_unit_test(compare_success_rate_allows_for_sampling),
        cmocka_unit_test(compare_latency_allows_for_the_ranks_sampling),
        cmocka_unit_test(compare_inconclusive_is_neither_pass_nor_fail),
        cmocka_unit_test(shortest_time_is_the_smallest_median_delay_or_timeout),
        cmocka_unit_test(fidelity_allows_half_the_shortest_time),
        cmocka_unit_test(fidelity_names_a_busy_machine),
        cmocka_unit_test(fidelity_saturated_scale_follows_the_simulated_work),
        cmocka_unit_test(fidelity_short_of_the_simulated_work_is_saturated),
        cmocka_unit_test(fidelity_names_late_answers),
        cmocka_unit_test(fidelity_judges_the_slowest_tenth_of_a_percent),
        cmocka_unit_test(otlp_spans_nest_and_say_what_happened),
        cmocka_unit_test(mock_error_answers_take_the_error_latency),
        cmocka_unit_test(live_run_needs_urls_and_calls_on_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
