/*
 * headers.c - each dialect's response headers: ids, the rate-limit headers (from the
 * buckets; on a 429, the limit that was hit at zero with its reset), Retry-After forms and
 * x-should-retry. OpenAI: x-request-id, openai-*, x-ratelimit-{limit,remaining,reset}-*
 * (Go durations). Anthropic: request-id, anthropic-ratelimit-* (RFC 3339 resets). Azure:
 * apim-request-id, x-ms-region, x-ratelimit-remaining-* (and x-ratelimit-reset-tokens on a
 * token 429). Gemini: none beyond the content type. Sources in docs/mock.md.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mockserver/serverint.h"
#include "mockserver/wire.h"

/* A header with a decimal value (formatted by hand: every answer sends several). */
static void add_num(struct MHD_Response *resp, const char *name, int64_t v) {
    char buf[24];
    size_t n = v < 0 ? 1 : 0;
    buf[0] = '-';
    n += mock_wire_decimal(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, buf + n);
    buf[n] = '\0';
    MHD_add_response_header(resp, name, buf);
}

static void add_go(struct MHD_Response *resp, const char *name, fb_time_us d_us) {
    char buf[64];
    mock_wire_go_duration(d_us, buf, sizeof buf);
    MHD_add_response_header(resp, name, buf);
}

static void openai_headers(req *r, struct MHD_Response *resp, const rl_view *v,
                           fb_time_us processing_us) {
    MHD_add_response_header(resp, "x-request-id", r->request_id);
    add_num(resp, "openai-processing-ms", processing_us / 1000);
    MHD_add_response_header(resp, "openai-version", "2020-10-01");
    MHD_add_response_header(resp, "openai-organization", "fusebox-mock");
    add_num(resp, "x-ratelimit-limit-requests", v->limit_req);
    add_num(resp, "x-ratelimit-limit-tokens", v->limit_tok);
    add_num(resp, "x-ratelimit-remaining-requests", v->remaining_req);
    add_num(resp, "x-ratelimit-remaining-tokens", v->remaining_tok);
    add_go(resp, "x-ratelimit-reset-requests", v->reset_req_us);
    add_go(resp, "x-ratelimit-reset-tokens", v->reset_tok_us);
}

static void anthropic_headers(req *r, struct MHD_Response *resp, const rl_view *v) {
    static const char *const kinds[] = {"tokens", "input-tokens", "output-tokens"};
    char name[64], buf[64];
    int64_t now_s = mock_wall_now_s();
    MHD_add_response_header(resp, "request-id", r->request_id);
    MHD_add_response_header(resp, "anthropic-organization-id",
                            "00000000-0000-4000-8000-f05eb0c5f00d");
    add_num(resp, "anthropic-ratelimit-requests-limit", v->limit_req);
    add_num(resp, "anthropic-ratelimit-requests-remaining", v->remaining_req);
    mock_wire_rfc3339(now_s + (v->reset_req_us + FB_US_PER_S - 1) / FB_US_PER_S, buf, sizeof buf);
    MHD_add_response_header(resp, "anthropic-ratelimit-requests-reset", buf);
    /* Token remaining is rounded to the nearest thousand, as the real API does. */
    int64_t rem = (v->remaining_tok + 500) / 1000 * 1000;
    mock_wire_rfc3339(now_s + (v->reset_tok_us + FB_US_PER_S - 1) / FB_US_PER_S, buf, sizeof buf);
    for (size_t i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "anthropic-ratelimit-%s-limit", kinds[i]);
        add_num(resp, name, v->limit_tok);
        snprintf(name, sizeof name, "anthropic-ratelimit-%s-remaining", kinds[i]);
        add_num(resp, name, rem);
        snprintf(name, sizeof name, "anthropic-ratelimit-%s-reset", kinds[i]);
        MHD_add_response_header(resp, name, buf);
    }
}

static void azure_headers(req *r, struct MHD_Response *resp, const rl_view *v) {
    char uuid[37];
    mock_wire_uuid(r->s->cfg.seed, (uint64_t)r->log_seq * 2 + 1, uuid);
    MHD_add_response_header(resp, "apim-request-id", uuid);
    const char *client = mock_header(r->conn, "x-ms-client-request-id");
    MHD_add_response_header(resp, "x-ms-client-request-id", client ? client : uuid);
    MHD_add_response_header(resp, "x-request-id", r->request_id);
    MHD_add_response_header(resp, "x-ms-region", "East US");
    add_num(resp, "x-ratelimit-remaining-requests", v->remaining_req);
    add_num(resp, "x-ratelimit-remaining-tokens", v->remaining_tok);
    if (r->rep.limit.kind == MOCK_LIMIT_TOKENS)
        add_num(resp, "x-ratelimit-reset-tokens",
                (v->reset_tok_us + FB_US_PER_S - 1) / FB_US_PER_S);
}

void mock_add_common(req *r, struct MHD_Response *resp, const char *ctype, int64_t tokens,
                     fb_time_us processing_us) {
    MHD_add_response_header(resp, "content-type", ctype);
    if (r->rep.dialect == MOCK_GEMINI) return;
    const mock_limit_hit *hit = r->rep.limit.kind != MOCK_LIMIT_NONE ? &r->rep.limit : NULL;
    rl_view v = mock_rate_view(r->s, tokens, hit);
    if (r->rep.dialect == MOCK_ANTHROPIC)
        anthropic_headers(r, resp, &v);
    else if (r->rep.dialect == MOCK_AZURE)
        azure_headers(r, resp, &v);
    else
        openai_headers(r, resp, &v, processing_us);
}

/* A number as "%.15g" writes it; whole numbers (the usual Retry-After) by hand. */
static void add_g(struct MHD_Response *resp, const char *name, double v) {
    if (v >= 0 && v < 1e15 && v == floor(v)) {
        add_num(resp, name, (int64_t)v);
        return;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.15g", v);
    MHD_add_response_header(resp, name, buf);
}

void mock_add_plan(const req *r, struct MHD_Response *resp, fb_time_us end_us) {
    add_num(resp, "x-fusebox-plan-us", end_us > r->arrival_us ? end_us - r->arrival_us : 0);
}

void mock_add_fault_headers(struct MHD_Response *resp, const mock_action *a) {
    char buf[64];
    if (a->ra_kind == MOCK_RA_SECONDS) {
        add_g(resp, "retry-after", a->retry_after_s);
    } else if (a->ra_kind == MOCK_RA_DATE) {
        mock_wire_http_date(mock_wall_now_s() + (int64_t)ceil(a->retry_after_s), buf, sizeof buf);
        MHD_add_response_header(resp, "retry-after", buf);
    }
    if (a->retry_after_ms >= 0) add_g(resp, "retry-after-ms", a->retry_after_ms);
    if (a->should_retry >= 0)
        MHD_add_response_header(resp, "x-should-retry", a->should_retry ? "true" : "false");
}
