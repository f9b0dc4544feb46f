/*
 * test_mock_proxy.c - proxy mode: a mock forwarding to a second mock (the upstream) on
 * loopback, or to a raw socket server the test writes (to see the request the upstream gets,
 * and to hang). Without a fault the answer is the upstream's, byte for byte; each fault kind
 * applies on top of a real upstream answer, streamed and not, OpenAI and Anthropic. Delays are
 * asserted as lower bounds only.
 */
#define _GNU_SOURCE /* strcasestr */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "mockserver/mock.h"
#include "mockserver/sched.h"
#include "mockserver/sse.h"
#include "tests/unit/mockhttp.h"

#define OA_STREAM OA_BODY ",\"max_tokens\":6,\"stream\":true}"
#define OA_PLAIN OA_BODY ",\"max_tokens\":6}"
#define AN_STREAM AN_MSGS ",\"max_tokens\":6,\"stream\":true}"
#define AN_PLAIN AN_MSGS ",\"max_tokens\":6}"

/* ---- the pure part: events ----------------------------------------------------------------- */

static void sse_events_are_split_and_classified(void **state) {
    (void)state;
    assert_int_equal(mock_sse_next("data: a\n\ndata: b", 16), 9);
    assert_int_equal(mock_sse_next("data: a\r\n\r\nx", 12), 11);
    assert_int_equal(mock_sse_next("data: a\n", 8), 0);
    struct {
        const char *ev;
        mock_sse_kind want;
    } cases[] = {
        {"data: {\"choices\":[{\"delta\":{\"content\":\" mock\"}}]}\n\n", MOCK_SSE_CONTENT},
        {"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
         MOCK_SSE_OTHER},
        {"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", MOCK_SSE_OTHER},
        {"data: [DONE]\n\n", MOCK_SSE_TERMINATOR},
        {"event: content_block_delta\ndata: {\"delta\":{\"text\":\"x\"}}\n\n", MOCK_SSE_CONTENT},
        {"event: content_block_start\ndata: {\"content_block\":{\"text\":\"\"}}\n\n",
         MOCK_SSE_OTHER},
        {"event: message_delta\ndata: {\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n",
         MOCK_SSE_OTHER},
        {"event: message_stop\ndata: {}\n\n", MOCK_SSE_TERMINATOR},
        {"event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\n", MOCK_SSE_CONTENT},
        {"event: response.output_text.done\ndata: {\"text\":\"all of it\"}\n\n", MOCK_SSE_OTHER},
        {"event: response.completed\ndata: {}\n\n", MOCK_SSE_TERMINATOR},
        {"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"hi\"}]}}]}\r\n\r\n",
         MOCK_SSE_CONTENT},
        {"data: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n", MOCK_SSE_TERMINATOR},
        {": a comment\n\n", MOCK_SSE_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mock_sse_kind k = mock_sse_classify(cases[i].ev, strlen(cases[i].ev));
        if (k != cases[i].want) fail_msg("case %zu: %d, wanted %d", i, k, cases[i].want);
    }
}

/* ---- fixtures: an upstream mock and a proxy in front of it ----------------------------------- */

typedef struct pair {
    fixture *up, *px;
} pair;

static pair *start_pair(const mock_config *upcfg, const mock_config *pxcfg) {
    pair *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->up = th_start(upcfg);
    mock_config c;
    if (pxcfg != NULL)
        c = *pxcfg;
    else
        memset(&c, 0, sizeof c);
    if (c.upstream_url == NULL) c.upstream_url = p->up->base;
    p->px = th_start(&c);
    return p;
}

static void stop_pair(pair *p) {
    th_stop(p->px);
    th_stop(p->up);
    free(p);
}

static int pair_setup(void **state) {
    *state = start_pair(NULL, NULL);
    return 0;
}

static int pair_teardown(void **state) {
    stop_pair(*state);
    return 0;
}

static uint64_t upstream_attempts(const pair *p) {
    mock_stats st;
    mock_server_stats(p->up->srv, &st);
    return st.attempts;
}

/* Content events of a stream body, and whether it ended with its terminator. */
static int content_events(const resp *r, bool *terminated, char *last_name, size_t cap) {
    int n = 0;
    *terminated = false;
    const char *p = r->body.p ? r->body.p : "";
    size_t left = r->body.len;
    for (size_t len; (len = mock_sse_next(p, left)) > 0; p += len, left -= len) {
        mock_sse_kind k = mock_sse_classify(p, len);
        n += k == MOCK_SSE_CONTENT;
        *terminated = k == MOCK_SSE_TERMINATOR;
        if (last_name != NULL) snprintf(last_name, cap, "%.*s", (int)(len < 200 ? len : 200), p);
    }
    return n;
}

/* The headers of an answer without Date (which moves with the clock), one per line. */
/* The headers but Date and the mock's own plan (x-fusebox-plan-us: the upstream's, which the
 * proxy drops, since its answer takes longer than the upstream planned). */
static void headers_without_date(const resp *r, util_buf *out) {
    const char *p = r->hdrs.p ? r->hdrs.p : "";
    while (*p != '\0') {
        const char *eol = strstr(p, "\r\n");
        size_t n = eol != NULL ? (size_t)(eol - p) : strlen(p);
        if (strncasecmp(p, "date:", 5) != 0 && strncasecmp(p, "x-fusebox-plan-us:", 18) != 0) {
            util_buf_append(out, p, n);
            util_buf_puts(out, "\n");
        }
        p += n + (eol != NULL ? 2 : 0);
    }
}

/* The same request straight to the upstream and through the proxy, each after a reset of the
 * upstream (so that its ids and times start the same): the same bytes back. The answers carry
 * the wall clock's second (a body's "created", Anthropic's RFC 3339 resets), so a pair that
 * straddles a second is asked again; one within a second must match byte for byte. */
static int same_answer(pair *p, const char *path, const char *body, const char *const *hdrs) {
    resp direct, proxied;
    int tries = 0;
    for (;; tries++) {
        time_t t0 = time(NULL);
        mock_server_reset(p->up->srv);
        th_post(&direct, p->up->base, path, body, hdrs);
        mock_server_reset(p->up->srv);
        th_post(&proxied, p->px->base, path, body, hdrs);
        if (time(NULL) == t0 || tries == 10) break;
        th_resp_free(&direct);
        th_resp_free(&proxied);
    }
    assert_int_equal(direct.rc, CURLE_OK);
    assert_int_equal(proxied.rc, CURLE_OK);
    assert_int_equal(proxied.status, direct.status);
    assert_int_equal(proxied.body.len, direct.body.len);
    assert_memory_equal(proxied.body.p, direct.body.p, direct.body.len);
    util_buf a = {0}, b = {0};
    headers_without_date(&direct, &a);
    headers_without_date(&proxied, &b);
    assert_string_equal(b.p, a.p);
    assert_non_null(strcasestr(direct.hdrs.p, "\r\nx-fusebox-plan-us: "));
    assert_null(strcasestr(proxied.hdrs.p, "x-fusebox-plan-us"));
    util_buf_free(&a);
    util_buf_free(&b);
    th_resp_free(&direct);
    th_resp_free(&proxied);
    return tries + 1; /* requests through the proxy */
}

static void an_answer_without_a_fault_is_the_upstreams_byte_for_byte(void **state) {
    pair *p = *state;
    static const char *const an[] = {"anthropic-version: 2023-06-01", NULL};
    static const char *const az[] = {"api-key: k", NULL};
    int sent = 0;
    sent += same_answer(p, CHAT, OA_PLAIN, NULL);
    sent += same_answer(p, CHAT, OA_STREAM, NULL);
    sent += same_answer(p, MSGS, AN_PLAIN, an);
    sent += same_answer(p, MSGS, AN_STREAM, an);
    sent +=
        same_answer(p, "/v1/responses", "{\"model\":\"m\",\"input\":\"hi\",\"stream\":true}", NULL);
    sent += same_answer(p, "/openai/deployments/d/chat/completions?api-version=2024-10-21",
                        OA_PLAIN, az);
    /* the upstream's errors pass through as they are */
    sent += same_answer(p, CHAT, "{\"model\":\"fb-503\",\"messages\":[]}", NULL);
    sent += same_answer(p, MSGS, "{\"model\":\"fb-529\",\"messages\":[]}", an);
    sent +=
        same_answer(p, CHAT, "{\"model\":\"m\"", NULL); /* the upstream's 400, not the proxy's */
    mock_stats st;
    mock_server_stats(p->px->srv, &st);
    assert_int_equal(st.proxied, (uint64_t)sent); /* 9, and any pair asked again */
    assert_true(sent >= 9);
    assert_int_equal(st.upstream_errors, 0);
}

static void credentials_reach_the_upstream(void **state) {
    pair *p = *state;
    resp r;
    static const char *const key[] = {"api-key: k", NULL};
    static const char *const bearer[] = {"Authorization: Bearer x", NULL};
    th_post(&r, p->px->base, "/openai/deployments/d/chat/completions?api-version=1", OA_PLAIN,
            NULL);
    assert_int_equal(r.status, 401); /* the upstream's refusal: no key went */
    th_resp_free(&r);
    th_post(&r, p->px->base, "/openai/deployments/d/chat/completions?api-version=1", OA_PLAIN, key);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_post(&r, p->px->base, "/v1beta/models/g:generateContent", "{\"contents\":[]}", bearer);
    assert_int_equal(r.status, 200);
    th_resp_free(&r);
    th_post(&r, p->px->base, "/v1beta/models/g:streamGenerateContent?alt=sse", "{\"contents\":[]}",
            bearer);
    assert_int_equal(r.status, 200); /* the query went too */
    th_resp_free(&r);
}

static void the_fault_header_stays_with_the_proxy(void **state) {
    pair *p = *state;
    static const char *const h[] = {"x-fusebox-fault: 500-times-1", "x-fusebox-key: k1", NULL};
    resp r;
    th_post(&r, p->px->base, CHAT, OA_PLAIN, h);
    assert_int_equal(r.status, 500);
    th_resp_free(&r);
    assert_int_equal(upstream_attempts(p), 0); /* the error came from the proxy alone */
    th_post(&r, p->px->base, CHAT, OA_PLAIN, h);
    assert_int_equal(r.status, 200); /* the upstream never saw 500-times-1 */
    th_resp_free(&r);
    assert_int_equal(upstream_attempts(p), 1);
}

/* ---- faults on top --------------------------------------------------------------------------- */

static void post_fault(resp *r, const pair *p, const char *path, const char *body, const char *spec,
                       long timeout_ms) {
    char h[128];
    snprintf(h, sizeof h, "x-fusebox-fault: %s", spec);
    const char *const hdrs[] = {h, "anthropic-version: 2023-06-01", NULL};
    th_req_full(r, p->px->base, "POST", path, body, timeout_ms, hdrs);
}

static void error_faults_answer_in_the_dialect_without_the_upstream(void **state) {
    pair *p = *state;
    resp r;
    post_fault(&r, p, CHAT, OA_PLAIN, "429-retry-after-3", TIMEOUT_MS);
    assert_int_equal(r.status, 429);
    th_assert_hdr(&r, "retry-after", "3");
    assert_non_null(strstr(r.body.p, "rate_limit_exceeded"));
    th_resp_free(&r);
    post_fault(&r, p, MSGS, AN_STREAM, "529", TIMEOUT_MS);
    assert_int_equal(r.status, 529);
    assert_non_null(strstr(r.body.p, "overloaded_error"));
    assert_true(th_has_hdr(&r, "request-id"));
    th_resp_free(&r);
    post_fault(&r, p, CHAT, OA_PLAIN, "context-length", TIMEOUT_MS);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body.p, "context_length_exceeded"));
    th_resp_free(&r);
    post_fault(&r, p, CHAT, OA_PLAIN, "tokens-5", TIMEOUT_MS);
    assert_int_equal(r.status, 400); /* the upstream writes the answer: said so */
    assert_non_null(strstr(r.body.p, "proxy mode"));
    th_resp_free(&r);
    assert_int_equal(upstream_attempts(p), 0);
}

static void a_retry_after_storm_from_the_timeline(void **state) {
    pair *p = *state;
    sim_fault f;
    mock_parse_error err;
    size_t n = 0;
    const char *js = "[{\"rate_limit\":{\"retry_after\":\"2s\",\"fraction\":1}}]";
    assert_int_equal(mock_faults_parse(js, strlen(js), &f, 1, &n, &err), FB_OK);
    assert_int_equal(mock_server_set_faults(p->px->srv, &f, n), FB_OK);
    for (int i = 0; i < 3; i++) {
        resp r;
        th_post(&r, p->px->base, i == 1 ? MSGS : CHAT, i == 1 ? AN_PLAIN : OA_STREAM, NULL);
        assert_int_equal(r.status, 429);
        th_assert_hdr(&r, "retry-after", "2");
        th_assert_hdr(&r, "retry-after-ms", "2000");
        th_resp_free(&r);
    }
    assert_int_equal(upstream_attempts(p), 0);
}

static void hang_and_reset_never_reach_the_upstream(void **state) {
    pair *p = *state;
    resp r;
    post_fault(&r, p, CHAT, OA_PLAIN, "hang", 300);
    assert_int_equal(r.rc, CURLE_OPERATION_TIMEDOUT);
    th_resp_free(&r);
    post_fault(&r, p, MSGS, AN_STREAM, "reset", TIMEOUT_MS);
    assert_true(r.rc == CURLE_RECV_ERROR || r.rc == CURLE_GOT_NOTHING);
    th_resp_free(&r);
    assert_int_equal(upstream_attempts(p), 0);
}

/* A stream fault after 2 of the upstream's content events, in both dialects. */
static void stream_fault(const pair *p, const char *spec, resp *oa, resp *an) {
    post_fault(oa, p, CHAT, OA_STREAM, spec, TIMEOUT_MS);
    post_fault(an, p, MSGS, AN_STREAM, spec, TIMEOUT_MS);
}

static void cut_k_cuts_the_real_stream_after_k_events(void **state) {
    pair *p = *state;
    resp oa, an;
    bool term;
    stream_fault(p, "cut-2", &oa, &an);
    assert_int_equal(oa.rc, CURLE_PARTIAL_FILE);
    assert_int_equal(content_events(&oa, &term, NULL, 0), 2);
    assert_true(an.rc == CURLE_PARTIAL_FILE || an.rc == CURLE_RECV_ERROR);
    assert_int_equal(content_events(&an, &term, NULL, 0), 2);
    assert_false(term);
    assert_int_equal(upstream_attempts(p), 2); /* on top of the real answers */
    mock_stats st;
    mock_server_stats(p->px->srv, &st);
    assert_int_equal(st.cut_streams, 2);
    th_resp_free(&oa);
    th_resp_free(&an);
}

static void truncate_malformed_and_error_end_the_real_stream(void **state) {
    pair *p = *state;
    resp oa, an;
    bool term;
    char last[256];
    stream_fault(p, "truncate-2", &oa, &an);
    assert_int_equal(oa.rc, CURLE_OK);
    assert_int_equal(content_events(&oa, &term, NULL, 0), 2);
    assert_false(term);
    assert_int_equal(content_events(&an, &term, NULL, 0), 2);
    assert_false(term);
    th_resp_free(&oa);
    th_resp_free(&an);
    stream_fault(p, "error-2", &oa, &an);
    assert_int_equal(content_events(&oa, &term, last, sizeof last), 2);
    assert_non_null(strstr(last, "data: {\"error\":"));
    assert_int_equal(content_events(&an, &term, last, sizeof last), 2);
    assert_non_null(strstr(last, "event: error"));
    th_resp_free(&oa);
    th_resp_free(&an);
    stream_fault(p, "malformed-1", &oa, &an);
    assert_int_equal(content_events(&oa, &term, last, sizeof last), 2); /* the broken one too */
    assert_null(strstr(oa.body.p, "[DONE]"));
    assert_null(strstr(an.body.p, "message_stop"));
    th_resp_free(&oa);
    th_resp_free(&an);
    stream_fault(p, "noterm", &oa, &an);
    assert_int_equal(content_events(&oa, &term, NULL, 0), 6); /* all of the answer */
    assert_false(term);
    assert_non_null(strstr(an.body.p, "message_delta"));
    assert_null(strstr(an.body.p, "message_stop"));
    th_resp_free(&oa);
    th_resp_free(&an);
}

static void stream_faults_on_a_whole_body(void **state) {
    pair *p = *state;
    resp whole, r;
    th_post(&whole, p->up->base, CHAT, OA_PLAIN, NULL);
    post_fault(&r, p, CHAT, OA_PLAIN, "cut", TIMEOUT_MS);
    assert_int_equal(r.rc, CURLE_PARTIAL_FILE);
    assert_int_equal(r.body.len, whole.body.len / 2);
    th_resp_free(&r);
    post_fault(&r, p, CHAT, OA_PLAIN, "truncate-2", TIMEOUT_MS);
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.body.len, whole.body.len / 2);
    th_resp_free(&r);
    post_fault(&r, p, MSGS, AN_PLAIN, "error-2", TIMEOUT_MS);
    assert_int_equal(r.status, 529); /* no stream to carry it: the overload */
    th_resp_free(&r);
    th_resp_free(&whole);
}

/*
 * A gap measured at the client is shorter than the 300 ms the mock put in it (the delay from
 * the request's start was checked already). The arrival that opens it came on time: the delay
 * is short. The next event came right after it: the delay was before it, not after. Otherwise
 * the opening arrival came late (a busy machine delivered it after its time) and the gap says
 * nothing of the mock.
 */
/*
 * The delay is timed from when the mock sent (or read) what came before it, which reached the
 * client a little after: a gap within GAP_SLACK_MS of the delay is the delay. A shorter one is
 * a failure unless what came before was itself late (a busy machine: inconclusive).
 */
#define GAP_SLACK_MS 20

static void late_gap(resp *r, sse *s, fb_time_us opened, fb_time_us gap, const char *what) {
    long long late_ms = (long long)((opened - r->start_us) / FB_US_PER_MS);
    long long gap_ms = (long long)(gap / FB_US_PER_MS);
    if (gap_ms < 50)
        fail_msg("the delay was not after %s: the next came %lld ms later", what, gap_ms);
    if (late_ms <= GAP_SLACK_MS) fail_msg("the delay after %s is %lld ms, not 300", what, gap_ms);
    print_message("inconclusive: the machine is busy (%s came %lld ms after the request, the "
                  "delay after it measured %lld ms)\n",
                  what, late_ms, gap_ms);
    th_sse_free(s);
    th_resp_free(r);
    skip();
}

static void added_latency_delays_the_real_answer(void **state) {
    pair *p = *state;
    resp r;
    post_fault(&r, p, CHAT, OA_PLAIN, "ttft-300ms", TIMEOUT_MS);
    assert_int_equal(r.status, 200);
    assert_true(r.headers_us - r.start_us >= 300 * FB_US_PER_MS);
    th_resp_free(&r);
    post_fault(&r, p, CHAT, OA_STREAM, "ttft-300ms", TIMEOUT_MS);
    sse s;
    th_sse_parse(&s, &r);
    assert_true(s.n >= 3);
    /* headers and the role chunk now, the first content event 300 ms later */
    fb_time_us content = th_arrival_of(&r, s.ev[1].end - 1);
    assert_true(content - r.start_us >= 300 * FB_US_PER_MS);
    if (content - r.headers_us < (300 - GAP_SLACK_MS) * FB_US_PER_MS)
        late_gap(&r, &s, r.headers_us, content - r.headers_us, "the headers");
    th_sse_free(&s);
    th_resp_free(&r);
    post_fault(&r, p, MSGS, AN_STREAM, "stall-2-300ms", TIMEOUT_MS);
    th_sse_parse(&s, &r);
    int seen = 0;
    fb_time_us before = 0, after = 0;
    for (int i = 0; i < s.n; i++) {
        if (strcmp(s.ev[i].name, "content_block_delta") != 0) continue;
        if (++seen == 2) before = th_arrival_of(&r, s.ev[i].end - 1);
        if (seen == 3) after = th_arrival_of(&r, s.ev[i].end - 1);
    }
    assert_int_equal(seen, 6);
    assert_true(after - r.start_us >= 300 * FB_US_PER_MS);
    if (after - before < (300 - GAP_SLACK_MS) * FB_US_PER_MS)
        late_gap(&r, &s, before, after - before, "the second delta");
    th_sse_free(&s);
    th_resp_free(&r);
}

static void slow_multiplies_the_upstreams_own_latency(void **state) {
    (void)state;
    mock_config up = {.ttft_us = 100 * FB_US_PER_MS};
    pair *p = start_pair(&up, NULL);
    resp r;
    post_fault(&r, p, CHAT, OA_PLAIN, "slow-3", TIMEOUT_MS);
    assert_int_equal(r.status, 200);
    assert_true(r.headers_us - r.start_us >= 300 * FB_US_PER_MS);
    th_resp_free(&r);
    stop_pair(p);
}

static void a_stream_goes_through_as_it_comes(void **state) {
    (void)state;
    mock_config up = {.per_token_us = 60 * FB_US_PER_MS};
    pair *p = start_pair(&up, NULL);
    resp r;
    th_post(&r, p->px->base, CHAT, OA_STREAM, NULL);
    sse s;
    th_sse_parse(&s, &r);
    assert_true(s.n >= 8);
    /* the first token reached the client long before the upstream had sent the last */
    assert_true(th_arrival_of(&r, s.ev[s.n - 1].end - 1) - th_arrival_of(&r, s.ev[1].end - 1) >=
                250 * FB_US_PER_MS);
    th_sse_free(&s);
    th_resp_free(&r);
    stop_pair(p);
}

/* ---- a raw upstream: what it was sent, what it answers --------------------------------------- */

typedef struct raw {
    int fd;
    uint16_t port;
    pthread_t thread;
    const char *answer; /* NULL: accept, read, never answer (until the peer leaves) */
    char got[8192];
    size_t got_len;
} raw;

static void *raw_run(void *arg) {
    raw *u = arg;
    int c = accept(u->fd, NULL, NULL);
    if (c < 0) return NULL;
    for (;;) {
        struct pollfd pf = {.fd = c, .events = POLLIN};
        if (poll(&pf, 1, 3000) <= 0) break;
        ssize_t n = recv(c, u->got + u->got_len, sizeof u->got - 1 - u->got_len, 0);
        if (n <= 0) break;
        u->got_len += (size_t)n;
        u->got[u->got_len] = '\0';
        char *end = strstr(u->got, "\r\n\r\n");
        const char *cl = strcasestr(u->got, "content-length: ");
        if (end != NULL &&
            (cl == NULL || u->got_len >= (size_t)(end + 4 - u->got) + strtoul(cl + 16, NULL, 10))) {
            if (u->answer == NULL) continue; /* hang: wait for the proxy to give up */
            send(c, u->answer, strlen(u->answer), MSG_NOSIGNAL);
            break;
        }
    }
    close(c);
    return NULL;
}

static void raw_start(raw *u, const char *answer) {
    memset(u, 0, sizeof *u);
    u->answer = answer;
    u->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(bind(u->fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(u->fd, (struct sockaddr *)&a, &len);
    u->port = ntohs(a.sin_port);
    assert_int_equal(listen(u->fd, 4), 0);
    assert_int_equal(pthread_create(&u->thread, NULL, raw_run, u), 0);
}

static void raw_stop(raw *u) {
    pthread_join(u->thread, NULL);
    close(u->fd);
}

static fixture *proxy_to(uint16_t port, fb_time_us idle_us) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/base/", (unsigned)port);
    mock_config c = {.upstream_url = url,
                     .upstream_idle_timeout_us = idle_us,
                     .upstream_connect_timeout_us = 2 * FB_US_PER_S};
    return th_start(&c);
}

static void hop_by_hop_headers_stay_on_their_hop(void **state) {
    (void)state;
    raw u;
    raw_start(&u, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: x-hop\r\n"
                  "X-Hop: 1\r\nKeep-Alive: timeout=5\r\nX-Kept: yes\r\nContent-Length: 2\r\n\r\n"
                  "{}");
    fixture *f = proxy_to(u.port, 0);
    static const char *const h[] = {"Authorization: Bearer sk-secret",
                                    "Connection: x-drop",
                                    "X-Drop: 1",
                                    "TE: trailers",
                                    "x-fusebox-key: k",
                                    "X-Client: kept",
                                    NULL};
    resp r;
    th_post(&r, f->base, "/v1/chat/completions?a=1&b=%2F", OA_PLAIN, h);
    raw_stop(&u);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.p, "{}");
    th_assert_hdr(&r, "x-kept", "yes");
    assert_false(th_has_hdr(&r, "x-hop"));
    assert_false(th_has_hdr(&r, "keep-alive"));
    /* the request as the upstream got it: the path under its base, the query as sent */
    assert_true(strncmp(u.got, "POST /base/v1/chat/completions?a=1&b=%2F HTTP/1.1\r\n", 50) == 0);
    assert_non_null(strstr(u.got, "Authorization: Bearer sk-secret\r\n"));
    assert_non_null(strstr(u.got, "X-Client: kept\r\n"));
    assert_non_null(strstr(u.got, "Content-Type: application/json\r\n"));
    assert_null(strcasestr(u.got, "x-drop"));
    assert_null(strcasestr(u.got, "\nte:"));
    assert_null(strcasestr(u.got, "x-fusebox"));
    assert_null(strcasestr(u.got, "\nexpect:"));
    assert_non_null(strstr(u.got, "\r\n\r\n" OA_PLAIN));
    th_resp_free(&r);
    th_stop(f);
}

/* A raw GET of `target` to the fixture (what curl would not send); the answer's status, 0 for
 * none. */
static int raw_status(const fixture *f, const char *target) {
    int fd = th_connect_raw(f);
    char rq[1024];
    snprintf(rq, sizeof rq,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-secret\r\n"
             "Cookie: session=s\r\nProxy-Authorization: Basic cHJveHk6cw==\r\n"
             "Origin: http://page.example\r\nConnection: close\r\n\r\n",
             target);
    send(fd, rq, strlen(rq), MSG_NOSIGNAL);
    char buf[4096];
    ssize_t n = th_read_some(fd, buf, sizeof buf - 1, 5000);
    close(fd);
    int status = 0;
    if (n > 0) {
        buf[n] = '\0';
        sscanf(buf, "HTTP/1.1 %d", &status);
    }
    return status;
}

/* A listening socket on loopback that nobody should connect to. */
static int bystander(uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    assert_int_equal(listen(fd, 4), 0);
    return fd;
}

static bool nobody_came(int fd) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    return poll(&pf, 1, 200) == 0;
}

/* The upstream URL is the upstream's scheme, host, port and prefix plus the request's
 * normalised path and query: "@host:port/..." cannot reach another server (with the client's
 * Authorization), ":PORT/x" cannot pick a port, "/../" cannot leave the prefix. */
static void a_request_target_cannot_leave_the_upstream(void **state) {
    (void)state;
    uint16_t sport;
    int secret = bystander(&sport);
    raw u;
    raw_start(&u, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n"
                  "{}");
    fixture *f = proxy_to(u.port, 0); /* http://127.0.0.1:PORT/base/ */
    char t[128];
    snprintf(t, sizeof t, "@127.0.0.1:%u/secret", (unsigned)sport);
    assert_int_equal(raw_status(f, t), 400);
    snprintf(t, sizeof t, "@localhost:%u/secret", (unsigned)sport);
    assert_int_equal(raw_status(f, t), 400);
    assert_int_equal(raw_status(f, "/../secret"), 400);
    assert_int_equal(raw_status(f, "/v1/../../secret"), 400);
    assert_int_equal(raw_status(f, "/v1/%2e%2E/%2e./secret"), 400);
    assert_int_equal(raw_status(f, "/.."), 400);
    /* dot segments inside the path are resolved; the query goes as sent, the fragment not */
    assert_int_equal(raw_status(f, "/v1/./x/../models?a=/../b#frag"), 200);
    raw_stop(&u);
    assert_true(strncmp(u.got, "GET /base/v1/models?a=/../b HTTP/1.1\r\n", 38) == 0);
    assert_non_null(strstr(u.got, "Authorization: Bearer sk-secret\r\n")); /* to the upstream */
    assert_null(strcasestr(u.got, "cookie"));              /* not a provider's credential */
    assert_null(strcasestr(u.got, "proxy-authorization")); /* the client's proxy's, not ours */
    assert_null(strcasestr(u.got, "\norigin:"));           /* a browser's, not the upstream's */
    th_stop(f);
    /* an upstream without a port: ":PORT/x" does not choose one */
    mock_config c = {.upstream_url = "http://127.0.0.1",
                     .upstream_connect_timeout_us = FB_US_PER_S};
    f = th_start(&c);
    snprintf(t, sizeof t, ":%u/x", (unsigned)sport);
    assert_int_equal(raw_status(f, t), 400);
    th_stop(f);
    assert_true(nobody_came(secret));
    close(secret);
}

/* A streamed answer whose chunked framing breaks before any byte of the body, under a stream
 * fault: the answer is cut (no memcpy from the empty buffer: UBSan found one). */
static void a_broken_chunked_upstream_under_a_stream_fault(void **state) {
    (void)state;
    raw u;
    raw_start(&u, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                  "Transfer-Encoding: chunked\r\n\r\nzz\r\n");
    fixture *f = proxy_to(u.port, 0);
    static const char *const h[] = {"x-fusebox-fault: truncate-2", NULL};
    resp r;
    th_post(&r, f->base, "/v1/chat/completions", OA_STREAM, h);
    raw_stop(&u);
    assert_true(r.status == 200 || r.status == 502);
    assert_int_equal(r.body.len == 0 || strstr(r.body.p, "[DONE]") == NULL, 1);
    th_resp_free(&r);
    mock_stats st;
    mock_server_stats(f->srv, &st);
    assert_int_equal(st.upstream_errors, 1);
    th_stop(f);
}

static void an_upstream_that_refuses_is_a_502_naming_it(void **state) {
    (void)state;
    raw u;
    raw_start(&u, "x"); /* a port that was free, now closed again */
    uint16_t port = u.port;
    shutdown(u.fd, SHUT_RDWR);
    close(u.fd);
    pthread_join(u.thread, NULL); /* its accept fails */
    fixture *f = proxy_to(port, 0);
    resp r;
    static const char *const an[] = {"anthropic-version: 2023-06-01", NULL};
    th_post(&r, f->base, MSGS, AN_PLAIN, an);
    assert_int_equal(r.status, 502);
    assert_non_null(strstr(r.body.p, "\"type\":\"error\"")); /* Anthropic's envelope */
    assert_non_null(strstr(r.body.p, "did not answer"));
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%u", (unsigned)port);
    assert_non_null(strstr(r.body.p, want));
    th_resp_free(&r);
    mock_stats st;
    mock_server_stats(f->srv, &st);
    assert_int_equal(st.upstream_errors, 1);
    th_stop(f);
}

static void an_upstream_that_hangs_is_a_504_after_the_timeout(void **state) {
    (void)state;
    raw u;
    raw_start(&u, NULL);
    fixture *f = proxy_to(u.port, 1 * FB_US_PER_S);
    resp r;
    th_req_full(&r, f->base, "POST", CHAT, OA_PLAIN, 10000, NULL);
    if (r.status != 504) fail_msg("%ld %s", r.status, r.body.p);
    assert_non_null(strstr(r.body.p, "sent nothing for 1 s (--upstream-timeout)"));
    assert_true(mock_now_us() - r.start_us >= 900 * FB_US_PER_MS);
    th_resp_free(&r);
    th_stop(f);
    raw_stop(&u);
}

/* ---- idle means no byte either way: an upstream that reads the body slowly ---------------- */

#define SLOW_IDLE_US (300 * FB_US_PER_MS)
#define SLOW_BODY (512u << 10)
#define SLOW_PIECE 16384
#define SLOW_PAUSE_US (10 * FB_US_PER_MS)

typedef struct slow {
    raw u;
    size_t body;         /* body bytes read */
    fb_time_us first_us; /* its first and last piece */
    fb_time_us last_us;
    fb_time_us max_gap_us; /* the longest wait between two pieces (this thread's scheduling) */
} slow;

/* Read the request a piece at a time with a pause between pieces, then answer 200. */
static void *slow_run(void *arg) {
    slow *w = arg;
    int c = accept(w->u.fd, NULL, NULL);
    if (c < 0) return NULL;
    static char buf[SLOW_PIECE];
    size_t got = 0, want = 0;
    for (;;) {
        struct pollfd pf = {.fd = c, .events = POLLIN};
        if (poll(&pf, 1, 5000) <= 0) break;
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        fb_time_us now = mock_now_us();
        if (w->last_us != 0 && now - w->last_us > w->max_gap_us) w->max_gap_us = now - w->last_us;
        if (w->first_us == 0) w->first_us = now;
        w->last_us = now;
        if (want == 0) { /* the head comes first and whole: the body's length is in it */
            size_t k = (size_t)n < sizeof w->u.got - 1 ? (size_t)n : sizeof w->u.got - 1;
            memcpy(w->u.got, buf, k);
            w->u.got[k] = '\0';
            const char *end = strstr(w->u.got, "\r\n\r\n");
            const char *cl = strcasestr(w->u.got, "content-length: ");
            if (end == NULL || cl == NULL) break;
            want = strtoul(cl + 16, NULL, 10);
            got = (size_t)n - (size_t)(end + 4 - w->u.got);
        } else {
            got += (size_t)n;
        }
        w->body = got;
        if (got >= want) {
            send(c, w->u.answer, strlen(w->u.answer), MSG_NOSIGNAL);
            break;
        }
        struct timespec ts = {0, SLOW_PAUSE_US * 1000};
        nanosleep(&ts, NULL);
    }
    close(c);
    return NULL;
}

static void an_upstream_reading_the_body_slowly_is_not_idle(void **state) {
    (void)state;
    static slow w;
    memset(&w, 0, sizeof w);
    w.u.answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    w.u.fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096; /* set before listen: the accepted socket has it, so the body trickles */
    setsockopt(w.u.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(bind(w.u.fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(w.u.fd, (struct sockaddr *)&a, &len);
    assert_int_equal(listen(w.u.fd, 4), 0);
    assert_int_equal(pthread_create(&w.u.thread, NULL, slow_run, &w), 0);
    fixture *f = proxy_to(ntohs(a.sin_port), SLOW_IDLE_US);
    util_buf body = {0};
    util_buf_puts(&body, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"");
    while (body.len < SLOW_BODY) util_buf_puts(&body, "abcdefghijklmnopqrstuvwxyz012345");
    util_buf_puts(&body, "\"}]}");
    resp r;
    th_req_full(&r, f->base, "POST", CHAT, body.p, 20000, NULL);
    raw_stop(&w.u);
    /* Starved past the timeout between two pieces, the upstream was idle in fact: no verdict. */
    if (w.max_gap_us > SLOW_IDLE_US / 2) {
        th_resp_free(&r);
        util_buf_free(&body);
        th_stop(f);
        print_message("inconclusive: the machine is busy (the upstream's thread waited %lld ms "
                      "between two reads, the timeout is %lld ms)\n",
                      (long long)(w.max_gap_us / FB_US_PER_MS),
                      (long long)(SLOW_IDLE_US / FB_US_PER_MS));
        skip();
    }
    /* the upload lasted several timeouts, so only its progress kept the transfer alive */
    assert_true(w.last_us - w.first_us > 2 * SLOW_IDLE_US);
    if (r.status != 200)
        fail_msg("%ld %s (read %zu in %lld ms)", r.status, r.body.p, w.body,
                 (long long)((w.last_us - w.first_us) / FB_US_PER_MS));
    assert_string_equal(r.body.p, "{}");
    assert_int_equal(w.body, body.len);
    th_resp_free(&r);
    util_buf_free(&body);
    th_stop(f);
}

static void an_upstream_answer_over_the_limit_is_refused(void **state) {
    (void)state;
    mock_config pc = {.max_response_bytes = 2048};
    pair *p = start_pair(NULL, &pc);
    resp r;
    th_post(&r, p->px->base, CHAT, "{\"model\":\"fb-tokens-2000\",\"messages\":[]}", NULL);
    assert_int_equal(r.status, 502);
    assert_non_null(strstr(r.body.p, "--max-response"));
    th_resp_free(&r);
    /* a fault that holds the whole body for its half: refused on the length, not buffered */
    post_fault(&r, p, CHAT, "{\"model\":\"fb-tokens-2000\",\"messages\":[]}", "cut", TIMEOUT_MS);
    assert_int_equal(r.status, 502);
    assert_non_null(strstr(r.body.p, "--max-response"));
    th_resp_free(&r);
    mock_stats st;
    mock_server_stats(p->px->srv, &st);
    assert_int_equal(st.upstream_errors, 2);
    stop_pair(p);
}

static void the_log_counts_proxied_attempts(void **state) {
    pair *p = *state;
    resp r;
    th_post(&r, p->px->base, CHAT, OA_PLAIN, NULL);
    th_resp_free(&r);
    post_fault(&r, p, CHAT, OA_PLAIN, "503", TIMEOUT_MS);
    th_resp_free(&r);
    th_req_full(&r, p->px->base, "GET", "/v1/files", NULL, TIMEOUT_MS, NULL);
    assert_int_equal(r.status, 404); /* a path the upstream does not know: its 404 */
    th_resp_free(&r);
    mock_stats st;
    mock_server_stats(p->px->srv, &st);
    assert_int_equal(st.requests, 3);
    assert_int_equal(st.attempts, 2);
    assert_int_equal(st.proxied, 2);
    th_req_full(&r, p->px->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    cJSON *j = th_json_body(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "entries")), 3);
    assert_non_null(strstr(r.body.p, "\"status\":503"));
    assert_null(strstr(r.body.p, "Bearer"));
    cJSON_Delete(j);
    th_resp_free(&r);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
#define PAIRED(t) cmocka_unit_test_setup_teardown(t, pair_setup, pair_teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sse_events_are_split_and_classified),
        PAIRED(an_answer_without_a_fault_is_the_upstreams_byte_for_byte),
        PAIRED(credentials_reach_the_upstream),
        PAIRED(the_fault_header_stays_with_the_proxy),
        PAIRED(error_faults_answer_in_the_dialect_without_the_upstream),
        PAIRED(a_retry_after_storm_from_the_timeline),
        PAIRED(hang_and_reset_never_reach_the_upstream),
        PAIRED(cut_k_cuts_the_real_stream_after_k_events),
        PAIRED(truncate_malformed_and_error_end_the_real_stream),
        PAIRED(stream_faults_on_a_whole_body),
        PAIRED(added_latency_delays_the_real_answer),
        cmocka_unit_test(slow_multiplies_the_upstreams_own_latency),
        cmocka_unit_test(a_stream_goes_through_as_it_comes),
        cmocka_unit_test(hop_by_hop_headers_stay_on_their_hop),
        cmocka_unit_test(a_request_target_cannot_leave_the_upstream),
        cmocka_unit_test(a_broken_chunked_upstream_under_a_stream_fault),
        cmocka_unit_test(an_upstream_that_refuses_is_a_502_naming_it),
        cmocka_unit_test(an_upstream_that_hangs_is_a_504_after_the_timeout),
        cmocka_unit_test(an_upstream_reading_the_body_slowly_is_not_idle),
        cmocka_unit_test(an_upstream_answer_over_the_limit_is_refused),
        PAIRED(the_log_counts_proxied_attempts),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
