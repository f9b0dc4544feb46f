/*
 * attempt.c - one request to a provider endpoint: its ids and log entry, the dialect's
 * credentials, the body (JSON, nothing after it, valid UTF-8) parsed by its API, the fault
 * decided (x-fusebox-fault header, else an "fb-" model, else the timeline), the answer's size
 * checked against the limits, then capacity (capacity.c) and the answer (answer.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mockserver/serverint.h"
#include "mockserver/wire.h"
#include "util/utf8.h"

/* The ids from r->id_seq: the prefix, then the deterministic characters. */
static void format_ids(req *r, mock_dialect d, const mock_api_ops *ops) {
    uint64_t seed = r->s->cfg.seed, seq = r->id_seq;
    const char *prefix = d == MOCK_GEMINI ? "" : "chatcmpl-";
    if (ops == &mock_api_responses)
        prefix = "resp_";
    else if (ops == &mock_api_completions)
        prefix = "cmpl-";
    if (d == MOCK_ANTHROPIC) {
        memcpy(r->request_id, "req_011C", 8);
        mock_wire_id(seed, seq * 4, true, r->request_id + 8, 20);
        memcpy(r->id, "msg_01", 6);
        mock_wire_id(seed, seq * 4 + 1, true, r->id + 6, 22);
        return;
    }
    memcpy(r->request_id, "req_", 4);
    mock_wire_id(seed, seq * 4, false, r->request_id + 4, 32);
    size_t n = strlen(prefix);
    memcpy(r->id, prefix, n);
    mock_wire_id(seed, seq * 4 + 1, true, r->id + n, 29);
}

void mock_new_ids(req *r, mock_dialect d, const mock_api_ops *ops) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    r->id_seq = s->id_seq++;
    pthread_mutex_unlock(&s->lock);
    format_ids(r, d, ops);
}

/* The ids only some answers carry: a tool call's, and a Responses output item's. */
static void item_ids(req *r) {
    const mock_reply *p = &r->rep;
    if (p->output != MOCK_OUT_TOOL && r->ep->ops != &mock_api_responses) return;
    uint64_t seed = r->s->cfg.seed, seq = r->id_seq;
    char x[40];
    bool an = p->dialect == MOCK_ANTHROPIC;
    mock_wire_id(seed, seq * 4 + 2, true, x, an ? 22 : 24);
    snprintf(r->call_id, sizeof r->call_id, "%s%s", an ? "toolu_01" : "call_", x);
    mock_wire_id(seed, seq * 4 + 3, false, x, 32);
    snprintf(r->item_id, sizeof r->item_id, "%s_%s", p->output == MOCK_OUT_TOOL ? "fc" : "msg", x);
}

/* Who sent it, as far as the request says: FNV-1a 64 over the User-Agent, a newline and the
 * body (an SDK's retry sends both again unchanged); never 0. */
static uint64_t client_print(const req *r) {
    const char *ua = mock_header(r->conn, "user-agent");
    uint64_t h = mock_fnv1a(mock_fnv1a(0xcbf29ce484222325ull, ua != NULL ? ua : ""), "\n");
    for (size_t i = 0; i < r->body.len; i++)
        h = (h ^ (unsigned char)r->body.p[i]) * 0x100000001b3ull;
    return h != 0 ? h : 1;
}

/* Counted, numbered (its ids) and logged (every endpoint), under one lock; an inference request
 * is also counted as an attempt and numbered among them. */
static void begin(req *r, const char *method, const char *url, const char *key, uint64_t *attempt,
                  fb_time_us *t_us) {
    mock_server *s = r->s;
    const char *rc = mock_header(r->conn, "x-stainless-retry-count");
    uint64_t client = client_print(r);
    fb_time_us now = mock_now_us();
    pthread_mutex_lock(&s->lock);
    s->stats.requests++;
    r->id_seq = s->id_seq++;
    mock_attempt *e = mock_attempts_add(&s->log);
    e->t_us = mock_timeline_locked(s, r->arrival_us < s->t0_us ? now : r->arrival_us);
    e->real_us = (r->arrival_us > s->t0_us ? r->arrival_us : now) - s->t0_us;
    mock_copy_text(e->method, sizeof e->method, method);
    mock_copy_text(e->path, sizeof e->path, url);
    mock_copy_text(e->key, sizeof e->key, key);
    if (rc != NULL) e->retry_count = atoi(rc);
    e->client = client;
    r->has_log = true;
    r->log_seq = e->seq;
    if (r->ep->ops->inference) {
        e->inference = true;
        s->stats.attempts++;
        s->stats.in_flight++;
        r->attempt = true;
        *attempt = s->attempt++;
    }
    *t_us = mock_timeline_locked(s, now);
    r->rep.created_s = s->wall0_s + *t_us / FB_US_PER_S;
    pthread_mutex_unlock(&s->lock);
    format_ids(r, r->rep.dialect, r->ep->ops);
}

/* Azure wants its api-version and a key; Gemini a key (route.c decides). 0, or the refusal. */
static int credentials(req *r) {
    struct MHD_Connection *c = r->conn;
    mock_route_creds q = {.api_version =
                              MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "api-version"),
                          .key = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key"),
                          .alt = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "alt"),
                          .api_key = mock_header(c, "api-key") != NULL,
                          .authorization = mock_header(c, "authorization") != NULL,
                          .x_goog_api_key = mock_header(c, "x-goog-api-key") != NULL};
    if (r->rep.dialect == MOCK_AZURE && q.api_version != NULL)
        mock_copy_str(r->api_version, sizeof r->api_version, q.api_version);
    return mock_route_refusal(r->rep.dialect, r->ep->stream, &q);
}

/* The dialect's words for a body it cannot read, with what was wrong. */
static void unreadable(const req *r, const char *what, char *msg, size_t msglen) {
    switch (r->rep.dialect) {
    case MOCK_ANTHROPIC:
        snprintf(msg, msglen, "There was an issue with your request body: %s.", what);
        break;
    case MOCK_GEMINI:
        snprintf(msg, msglen, "Invalid JSON payload received. %s.", what);
        break;
    default:
        snprintf(msg, msglen,
                 "We could not parse the JSON body of your request. (HINT: This likely means "
                 "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
                 "payload, but what was sent was not valid JSON: %s.)",
                 what);
        break;
    }
}

/* The body as one JSON object, or NULL with the 400's message. */
static cJSON *parse_body(const req *r, char *msg, size_t msglen) {
    const char *p = r->body.p ? r->body.p : "";
    size_t bad, n = r->body.len;
    char what[128];
    if (!util_utf8_valid(p, n, &bad)) {
        snprintf(what, sizeof what, "invalid UTF-8 at byte %zu", bad);
        unreadable(r, what, msg, msglen);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(p, n, &end, false);
    size_t at = root != NULL ? (size_t)(end - p) : n;
    while (root != NULL && at < n && strchr(" \t\r\n", p[at]) != NULL && p[at] != '\0') at++;
    if (root == NULL || at < n || !cJSON_IsObject(root)) {
        if (root == NULL)
            snprintf(what, sizeof what, "invalid JSON");
        else if (at < n)
            snprintf(what, sizeof what, "unexpected data after the JSON value at byte %zu", at);
        else
            snprintf(what, sizeof what, "the body must be a JSON object");
        unreadable(r, what, msg, msglen);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* The model and stream flag to the log entry (caller holds the lock). */
static void log_request_locked(req *r) {
    mock_attempt *e = mock_attempts_get(&r->s->log, r->log_seq);
    if (e != NULL) {
        mock_copy_text(e->model, sizeof e->model, r->store.model);
        e->stream = r->rep.stream;
    }
}

static void log_request(req *r) {
    pthread_mutex_lock(&r->s->lock);
    log_request_locked(r);
    pthread_mutex_unlock(&r->s->lock);
}

/* The body through the API's parser. *read: it was JSON, so the log gets its model (with the
 * fault, in decide(), or alone when the parser refused it). */
static bool read_request(req *r, char *msg, size_t msglen, bool *read) {
    bool get = strcmp(r->ep->method, "GET") == 0;
    /* cJSON's default allocator: the tree is freed here (the parser copied what it keeps) */
    cJSON *root = get ? NULL : parse_body(r, msg, msglen);
    *read = get || root != NULL;
    bool ok = *read && r->ep->ops->parse(root, &r->rep, &r->store, msg, msglen);
    cJSON_Delete(root);
    if (!*read) return false;
    if (r->rep.model == NULL) r->rep.model = r->store.model;
    return ok;
}

/*
 * The attempt's fate: a per-request spec (header, then an "fb-" model) or else, for an
 * inference request, the timeline. FB_EPARSE with msg filled for a bad spec.
 */
static int decide(req *r, const char *key, uint64_t attempt, fb_time_us t_us, double *scale,
                  char *msg, size_t msglen) {
    mock_server *s = r->s;
    mock_action *a = &r->act;
    mock_action_init(a);
    *scale = 1.0;
    const char *spec = mock_header(r->conn, "x-fusebox-fault");
    const char *origin = "x-fusebox-fault";
    /* Proxied, the model goes upstream as it is: a spec comes from the header alone. */
    if (spec == NULL && s->proxy == NULL && strncmp(r->store.model, "fb-", 3) == 0) {
        spec = r->store.model + 3;
        origin = "model";
    }
    mock_parse_error perr;
    if (spec != NULL && mock_spec_parse(spec, a, &perr) != FB_OK) {
        log_request(r);
        snprintf(msg, msglen, "%s: '%s': %s (fusebox fault spec)", origin, perr.path, perr.msg);
        return FB_EPARSE;
    }
    if (spec != NULL && s->proxy != NULL && (a->tokens >= 0 || a->refusal)) {
        log_request(r);
        snprintf(msg, msglen,
                 "%s: '%s': tokens-N and refusal shape the mock's own answer; in proxy mode the "
                 "upstream writes it (fusebox fault spec)",
                 origin, spec);
        return FB_EPARSE;
    }
    uint64_t pair = mock_fnv1a(mock_fnv1a(mock_fnv1a(0xcbf29ce484222325ull, key ? key : ""), "\n"),
                               spec ? spec : "");
    /* which retry, as the official SDKs number theirs (a fault's retry_fraction); 0: a first */
    const char *rc = mock_header(r->conn, "x-stainless-retry-count");
    int retry = rc != NULL ? atoi(rc) : 0;
    pthread_mutex_lock(&s->lock);
    log_request_locked(r);
    if (spec == NULL && r->ep->ops->inference)
        mock_timeline_decide(s->faults, s->n_faults, t_us, s->cfg.seed, attempt,
                             retry > 0 ? (uint32_t)retry : 0u, s->fault_even, a, scale);
    else if (spec != NULL && a->times > 0 && mock_count_locked(s, pair) > a->times)
        mock_action_init(a); /* the first N attempts failed: this one succeeds */
    pthread_mutex_unlock(&s->lock);
    return FB_OK;
}

/* Completion tokens: a tool call whole; JSON and filler within max_tokens. */
static void set_tokens(req *r) {
    mock_reply *p = &r->rep;
    const mock_api_ops *ops = r->ep->ops;
    int64_t t = p->output == MOCK_OUT_TEXT
                    ? (r->act.tokens >= 0 ? r->act.tokens : r->s->cfg.completion_tokens_max)
                    : mock_json_tokens(p->json_len);
    if (p->output != MOCK_OUT_TOOL && p->max_tokens >= 0 && t > p->max_tokens) t = p->max_tokens;
    if (!ops->inference || mock_api_is_embeddings(ops)) t = 0;
    p->tokens = t;
    p->refusal = r->act.refusal;
    r->billed = p->prompt_tokens + t * (p->n > 0 ? p->n : 1);
}

/* About how many bytes the answer takes (the body, or a stream's largest event batch). */
static size_t answer_bytes(const req *r) {
    const mock_reply *p = &r->rep;
    if (mock_api_is_embeddings(r->ep->ops))
        return (size_t)p->n_inputs * (size_t)p->dimensions * (p->base64 ? 6 : 16) + 1024;
    size_t text = (size_t)p->tokens * 16 + p->json_len * 6 + 512;
    size_t copies = r->ep->ops == &mock_api_responses ? 3 : 1; /* the text in the .done events */
    return (size_t)(p->n > 0 ? p->n : 1) * text * copies + 2048;
}

/* The answer within --max-response and the memory budget; else the refusal's message. */
static int size_check(req *r, char *msg, size_t msglen) {
    mock_server *s = r->s;
    size_t need = answer_bytes(r);
    /* a stream holds one step's events at a time, but sends them all */
    size_t sends = r->rep.stream ? mock_stream_estimate(&r->rep, r->ep->ops) : need;
    int status = 0;
    if (need > s->cfg.max_response_bytes || sends > s->cfg.max_response_bytes) {
        snprintf(msg, msglen,
                 "fusebox mock: this answer would take about %zu bytes, over the "
                 "mock's limit of %zu (--max-response); ask for fewer tokens, "
                 "choices or inputs",
                 need > sends ? need : sends, s->cfg.max_response_bytes);
        status = 400;
    } else if (!mock_memory_take(s, need)) {
        snprintf(msg, msglen,
                 "fusebox mock: the answers in progress hold the mock's memory "
                 "limit of %zu bytes (--max-memory); try again later",
                 s->cfg.max_memory_bytes);
        status = r->rep.dialect == MOCK_ANTHROPIC ? 529 : 503;
    } else {
        r->memory_held += need;
        return 0;
    }
    pthread_mutex_lock(&s->lock);
    s->stats.memory_rejects++;
    pthread_mutex_unlock(&s->lock);
    return status;
}

static void init_reply(req *r) {
    const endpoint *ep = r->ep;
    mock_dialect d = ep->dialect;
    if (ep->ops == &mock_api_models || ep->ops == &mock_api_model)
        if (d == MOCK_OPENAI && mock_header(r->conn, "anthropic-version")) d = MOCK_ANTHROPIC;
    r->rep = (mock_reply){.dialect = d,
                          .model = "",
                          .n = 1,
                          .max_tokens = -1,
                          .stream = ep->stream,
                          .context_window = r->s->cfg.context_window,
                          .api_version = r->api_version,
                          .operation = ep->operation};
    r->rep.id = r->id; /* begin() numbers and writes them */
    r->rep.request_id = r->request_id;
    r->rep.call_id = r->call_id;
    r->rep.item_id = r->item_id;
}

/* Proxy mode: the upstream checks credentials and the body and writes the answer; the fault,
 * the limits and the answer's delays are the mock's. */
static enum MHD_Result proxied(req *r, const char *key, uint64_t attempt, fb_time_us t_us) {
    char msg[900];
    double scale = 1.0;
    mock_proxy_read(r);
    r->rep.model = r->store.model;
    if (decide(r, key, attempt, t_us, &scale, msg, sizeof msg) != FB_OK)
        return mock_send_error(r, 400, MOCK_FLAVOR_ROUTING, msg, NULL, 0);
    mock_draw_latency(r, attempt, key);
    r->ttft_tl_us = 0; /* the upstream's own time to first token; only a scripted one adds */
    if (r->ep->ops->inference && !mock_apply_limits(r, attempt, t_us, scale)) return MHD_YES;
    return mock_answer(r);
}

/* An endpoint's request: read, decided, limited, answered. */
enum MHD_Result mock_handle_api(req *r, const char *method, const char *url) {
    const char *key = mock_header(r->conn, "x-fusebox-key");
    uint64_t attempt = 0;
    fb_time_us t_us = 0;
    double scale = 1.0;
    char msg[900];
    init_reply(r);
    begin(r, method, url, key, &attempt, &t_us);
    if (r->over_memory) {
        pthread_mutex_lock(&r->s->lock);
        r->s->stats.memory_rejects++;
        pthread_mutex_unlock(&r->s->lock);
        snprintf(msg, sizeof msg,
                 "fusebox mock: request bodies in progress hold the mock's "
                 "memory limit of %zu bytes (--max-memory)",
                 r->s->cfg.max_memory_bytes);
        return mock_send_error(r, r->rep.dialect == MOCK_ANTHROPIC ? 529 : 503,
                               MOCK_FLAVOR_OVERLOADED, msg, NULL, 0);
    }
    if (r->s->proxy != NULL) return proxied(r, key, attempt, t_us);
    int refused = credentials(r);
    if (refused == 400) {
        snprintf(msg, sizeof msg,
                 "fusebox mock: streamGenerateContent is served with alt=sse only");
        return mock_send_error(r, 400, MOCK_FLAVOR_ROUTING, msg, NULL, 0);
    }
    if (refused != 0) return mock_send_error(r, refused, MOCK_FLAVOR_ROUTING, NULL, NULL, 0);
    bool read;
    if (!read_request(r, msg, sizeof msg, &read)) {
        if (read) log_request(r);
        return mock_send_error(r, 400, MOCK_FLAVOR_ROUTING, msg, NULL, 0);
    }
    if (decide(r, key, attempt, t_us, &scale, msg, sizeof msg) != FB_OK)
        return mock_send_error(r, 400, MOCK_FLAVOR_ROUTING, msg, NULL, 0);
    item_ids(r);
    set_tokens(r);
    int status = size_check(r, msg, sizeof msg);
    if (status != 0)
        return mock_send_error(
            r, status, status == 400 ? MOCK_FLAVOR_ROUTING : MOCK_FLAVOR_OVERLOADED, msg, NULL, 0);
    mock_draw_latency(r, attempt, key);
    if (r->ep->ops->inference && !mock_apply_limits(r, attempt, t_us, scale)) return MHD_YES;
    return mock_answer(r);
}
