/*
 * fuzz_mock.c - a libFuzzer target for the mock provider's readers: the per-request fault spec
 * (mockserver/spec.c, the x-fusebox-fault header and fb- models), fault timelines
 * (mock_faults_parse, through the scenario loader's scn_faults_parse), and each API's request
 * parser with the answer it then writes, whole and streamed (chat.c, messages.c, gemini.c, ...).
 *
 * Input: a first line, the fault spec; the rest, a request body. The body's first byte picks
 * the API and dialect, the rest is parsed as attempt.c parses a body (cJSON, an object) and
 * also read as a fault timeline. Whatever the bytes, a spec or a body is taken or refused
 * with a message; an answer is written to its end (at most 100 tokens per choice, as the
 * harness caps them) without a crash, a leak or undefined behaviour.
 *
 * An input that starts with a request line ("METHOD /target") is a request for the routing
 * first (mockserver/route.h): header lines ("name: value") follow up to an empty line, then the
 * spec line and body as above. The target is split and unescaped as libmicrohttpd does (the
 * path's %XX; the query's '+' and %XX), the routing decides it with the headers it reads
 * (anthropic-version; x-fuzz-too-large and x-fuzz-proxy stand for a body over the limit and
 * proxy mode), and the decision must hold its invariants: the same twice, an endpoint or an
 * error (404, 405 with another method's Allow, 413 for a body over the limit), the endpoint's
 * method the request's, the argument within its buffer, the error's body JSON; an API's
 * credentials and query refused only with the statuses their dialect has.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "mockserver/api.h"
#include "mockserver/buf.h"
#include "mockserver/fault.h"
#include "mockserver/route.h"
#include "scenario/scenario.h"

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
    util_buf b = {0};
    b.cap = 1 << 22;
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
    util_buf_free(&b);
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
    util_buf_free(&st.json);
}

/* ---- the routing ---- */

static int hex(int c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* %XX decoded in place (and '+' as a space in a query), as libmicrohttpd's MHD_http_unescape. */
static void unescape(char *s, bool query) {
    char *w = s;
    for (char *p = s; *p != '\0'; p++) {
        if (*p == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
            *w++ = (char)(hex(p[1]) * 16 + hex(p[2]));
            p += 2;
        } else {
            *w++ = query && *p == '+' ? ' ' : *p;
        }
    }
    *w = '\0';
}

typedef struct headers {
    const char *anthropic_version;
    bool too_large, proxy;
    mock_route_creds creds;
} headers;

/* The query's parameters the refusals read, each unescaped in place; the first of a name
 * counts, one without '=' has no value (NULL), as libmicrohttpd looks them up. */
static void read_query(char *q, headers *h) {
    while (q != NULL) {
        char *amp = strchr(q, '&');
        if (amp != NULL) *amp = '\0';
        char *eq = strchr(q, '=');
        if (eq != NULL) *eq++ = '\0';
        unescape(q, true);
        if (eq != NULL) unescape(eq, true);
        const char **slot = strcmp(q, "api-version") == 0 ? &h->creds.api_version
                            : strcmp(q, "key") == 0       ? &h->creds.key
                            : strcmp(q, "alt") == 0       ? &h->creds.alt
                                                          : NULL;
        if (slot != NULL && *slot == NULL) *slot = eq;
        q = amp != NULL ? amp + 1 : NULL;
    }
}

/* "name: value" lines up to an empty one (or the end); returns what follows. */
static char *read_headers(char *p, headers *h) {
    while (*p != '\0' && *p != '\n') {
        char *nl = strchr(p, '\n');
        if (nl != NULL) *nl = '\0';
        char *colon = strchr(p, ':');
        if (colon != NULL) {
            *colon = '\0';
            const char *v = colon + 1 + (colon[1] == ' ');
            if (strcasecmp(p, "anthropic-version") == 0) h->anthropic_version = v;
            h->too_large |= strcasecmp(p, "x-fuzz-too-large") == 0;
            h->proxy |= strcasecmp(p, "x-fuzz-proxy") == 0;
            h->creds.api_key |= strcasecmp(p, "api-key") == 0;
            h->creds.authorization |= strcasecmp(p, "authorization") == 0;
            h->creds.x_goog_api_key |= strcasecmp(p, "x-goog-api-key") == 0;
        }
        if (nl == NULL) return p + strlen(p);
        p = nl + 1;
    }
    return *p == '\n' ? p + 1 : p;
}

static bool same(const mock_route *a, const mock_route *b) {
    return a->ep == b->ep && a->status == b->status && a->control == b->control &&
           a->allow == b->allow && a->dialect == b->dialect && strcmp(a->arg, b->arg) == 0 &&
           strcmp(a->msg, b->msg) == 0;
}

/* The invariants of one decision (abort on a broken one). */
static void check_route(const mock_route_in *in, const mock_route *rt, const headers *h) {
    if ((rt->ep == NULL) != (rt->status != 0)) abort();
    if (rt->status != 0 && rt->status != 404 && rt->status != 405 && rt->status != 413) abort();
    if (in->too_large != (rt->status == 413)) abort();
    if (rt->dialect != mock_route_dialect(in->path, in->anthropic_version)) abort();
    if (memchr(rt->arg, '\0', sizeof rt->arg) == NULL ||
        memchr(rt->msg, '\0', sizeof rt->msg) == NULL)
        abort();
    if (rt->ep != NULL && rt->ep->ops == &mock_api_passthrough) {
        if (!in->proxy || rt->control) abort();
    } else if (rt->ep != NULL && strcmp(rt->ep->method, in->method) != 0) {
        abort();
    }
    bool allow = rt->status == 405 && !rt->control;
    if (allow != (rt->allow != NULL) || (allow && strcmp(rt->allow, in->method) == 0)) abort();
    if (rt->status != 0 && !rt->control) { /* the provider-format error, as dispatch.c writes it */
        mock_reply rep = {.dialect = rt->dialect, .model = "", .request_id = "req_fuzz"};
        util_buf b = {0};
        mock_wire_error(&b, &rep, rt->status, MOCK_FLAVOR_ROUTING, rt->msg[0] ? rt->msg : NULL);
        cJSON *j = cJSON_ParseWithLength(b.p, b.len);
        if (j == NULL) abort();
        cJSON_Delete(j);
        util_buf_free(&b);
    }
    if (rt->ep != NULL && rt->ep->id == RT_API) {
        int refused = mock_route_refusal(rt->ep->dialect, rt->ep->stream, &h->creds);
        bool ok = refused == 0 ||
                  (rt->ep->dialect == MOCK_AZURE && (refused == 404 || refused == 401)) ||
                  (rt->ep->dialect == MOCK_GEMINI &&
                   (refused == 403 || (refused == 400 && rt->ep->stream)));
        if (!ok) abort();
    }
}

/* A request line, its headers, the routing's decision checked; returns what follows them. */
static char *route_request(char *text) {
    char *sp = strchr(text, ' ');
    char *nl = strchr(text, '\n');
    if (nl != NULL) *nl = '\0';
    *sp = '\0';
    char *target = sp + 1;
    target[strcspn(target, " ")] = '\0'; /* " HTTP/1.1" */
    headers h = {0};
    char *rest = nl != NULL ? read_headers(nl + 1, &h) : text + strlen(text);
    char *q = strchr(target, '?');
    if (q != NULL) *q++ = '\0';
    unescape(target, false);
    read_query(q, &h);
    mock_route_in in = {text, target, h.anthropic_version, h.too_large, h.proxy};
    mock_route a, b;
    mock_route_decide(&in, &a);
    mock_route_decide(&in, &b);
    if (!same(&a, &b)) abort();
    check_route(&in, &a, &h);
    return rest;
}

/* Does the text start with "METHOD /"? (A spec line never has a space before a '/'.) */
static bool request_line(const char *text) {
    size_t n = 0;
    while (text[n] >= 'A' && text[n] <= 'Z') n++;
    return n > 0 && n <= 16 && text[n] == ' ' && text[n + 1] == '/';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *spec = request_line(text) ? route_request(text) : text;
    char *nl = strchr(spec, '\n');
    const char *body = nl ? nl + 1 : "";
    if (nl) *nl = '\0';
    size_t body_len = nl ? size - (size_t)(body - text) : 0;
    mock_action act;
    mock_action_init(&act);
    mock_parse_error perr;
    if (mock_spec_parse(spec, &act, &perr) != FB_OK) {
        if (perr.msg[0] == '\0') abort();
        mock_action_init(&act);
    }
    static sim_fault faults[SIM_FAULTS_MAX];
    size_t nf = 0;
    if (mock_faults_parse(body, body_len, faults, SIM_FAULTS_MAX, &nf, &perr) == FB_OK) {
        mock_action a;
        double scale;
        static sim_fault_even even[SIM_FAULTS_MAX];
        scn_fault_even_init(even, (uint32_t)nf, 1, 0);
        for (fb_time_us t = 0; t < 3600 * FB_US_PER_S; t += 60 * FB_US_PER_S) {
            mock_action_init(&a);
            mock_timeline_decide(faults, nf, t, 1, (uint64_t)t, false, even, &a, &scale);
        }
    }
    request(body, body_len, &act);
    free(text);
    return 0;
}
