/* otlp.c - requests and attempts as OTLP/JSON spans, written as the run goes; see otlp.h. */
#include "live/otlp.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"
#include "util/json.h"

#define KIND_CLIENT 3  /* opentelemetry.proto.trace.v1.Span.SpanKind.SPAN_KIND_CLIENT */
#define STATUS_ERROR 2 /* opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR */

/* A request with attempts written and no end yet: what its span will say. */
typedef struct open_req {
    bool used;
    uint64_t id;
    fb_time_us arrival_us, end_us; /* end: of its last attempt */
    uint8_t provider;              /* of its last attempt */
    bool answered;                 /* an attempt got a whole answer: its meta and usage */
    bool has_usage;
    uint32_t tokens_out;
    live_meta meta;
} open_req;

struct live_otlp {
    FILE *f;
    util_json w; /* onto f; each span a line */
    uint64_t spans, spans_max;
    bool in_variant;
    const sim_scenario *sc;
    uint32_t variant;
    live_otlp_provider prov[SIM_PROVIDERS_MAX]; /* pointing into the copies below */
    char models[SIM_PROVIDERS_MAX][256], urls[SIM_PROVIDERS_MAX][2048];
    int64_t t0_ns;
    uint64_t salt;
    open_req *reqs; /* by request slot (id >> 32) */
    size_t cap;
};

/* ---- ids ---- */

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x ? x : 1; /* an all-zero id is invalid */
}

typedef struct ids {
    uint64_t trace_hi, trace_lo, root;
} ids;

static ids ids_of(const live_otlp *o, uint64_t request) {
    ids d;
    d.trace_hi = mix(o->salt ^ mix(request));
    d.trace_lo = mix(d.trace_hi ^ request);
    d.root = mix(d.trace_lo ^ 1);
    return d;
}

/* ---- attributes: {"key":K,"value":{"stringValue":V}}, ... ---- */

static void a_open(util_json *w, const char *key) {
    util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_str(w, "key", key);
    util_json_open(w, "value", '{', UTIL_JSON_COMPACT);
}

static void a_close(util_json *w) {
    util_json_close(w);
    util_json_close(w);
}

static void a_str(util_json *w, const char *key, const char *v) {
    a_open(w, key);
    util_json_str(w, "stringValue", v);
    a_close(w);
}

/* OTLP/JSON writes a 64-bit integer as a string (the protobuf JSON mapping). */
static void int_string(util_json *w, const char *key, int64_t v) {
    char s[24];
    snprintf(s, sizeof s, "%" PRId64, v);
    util_json_str(w, key, s);
}

static void a_int(util_json *w, const char *key, int64_t v) {
    a_open(w, key);
    int_string(w, "intValue", v);
    a_close(w);
}

static void a_double(util_json *w, const char *key, double v) {
    a_open(w, key);
    util_json_exact(w, "doubleValue", v);
    a_close(w);
}

static void a_bool(util_json *w, const char *key, bool v) {
    a_open(w, key);
    util_json_bool(w, "boolValue", v);
    a_close(w);
}

/* A string array of one element (gen_ai.response.finish_reasons: one choice). */
static void a_strs1(util_json *w, const char *key, const char *v) {
    a_open(w, key);
    util_json_open(w, "arrayValue", '{', UTIL_JSON_COMPACT);
    util_json_open(w, "values", '[', UTIL_JSON_COMPACT);
    util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_str(w, "stringValue", v);
    util_json_close(w);
    util_json_close(w);
    util_json_close(w);
    a_close(w);
}

/* ---- URLs: server.address, server.port, the path ---- */

typedef struct where {
    char host[256];
    int64_t port;
    const char *path;
} where;

static where where_of(const char *url) {
    where w = {"", strncmp(url, "https://", 8) == 0 ? 443 : 80, "/"};
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *end = p + strcspn(p, "/?#");
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at != NULL) p = at + 1;
    const char *host = p, *host_end = end, *port = NULL;
    if (*p == '[') { /* an IPv6 literal */
        const char *rb = memchr(p, ']', (size_t)(end - p));
        host = p + 1;
        host_end = rb ? rb : end;
        if (rb != NULL && rb + 1 < end && rb[1] == ':') port = rb + 2;
    } else {
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (colon != NULL) {
            host_end = colon;
            port = colon + 1;
        }
    }
    if (port != NULL) w.port = strtoll(port, NULL, 10);
    size_t n = (size_t)(host_end - host);
    if (n >= sizeof w.host) n = sizeof w.host - 1;
    memcpy(w.host, host, n);
    w.host[n] = '\0';
    if (*end == '/') w.path = end;
    return w;
}

/* ---- spans ---- */

static void hex_ids(char *s, size_t cap, uint64_t hi, uint64_t lo, bool two) {
    if (two)
        snprintf(s, cap, "%016" PRIx64 "%016" PRIx64, hi, lo);
    else
        snprintf(s, cap, "%016" PRIx64, lo);
}

/* A span a line, up to its attributes (open for the caller's). */
static void span_open(live_otlp *o, const ids *d, uint64_t span, bool child, const char *name,
                      fb_time_us start_us, fb_time_us end_us) {
    util_json *w = &o->w;
    char id[40];
    util_json_wrap(w, 0);
    util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
    hex_ids(id, sizeof id, d->trace_hi, d->trace_lo, true);
    util_json_str(w, "traceId", id);
    hex_ids(id, sizeof id, 0, span, false);
    util_json_str(w, "spanId", id);
    if (child) {
        hex_ids(id, sizeof id, 0, d->root, false);
        util_json_str(w, "parentSpanId", id);
    }
    util_json_str(w, "name", name);
    util_json_i64(w, "kind", KIND_CLIENT);
    int_string(w, "startTimeUnixNano", o->t0_ns + start_us * 1000);
    int_string(w, "endTimeUnixNano", o->t0_ns + end_us * 1000);
    util_json_open(w, "attributes", '[', UTIL_JSON_COMPACT);
    o->spans++;
}

static void span_close(live_otlp *o, bool error) {
    util_json *w = &o->w;
    util_json_close(w); /* the attributes */
    if (error) {
        util_json_open(w, "status", '{', UTIL_JSON_COMPACT);
        util_json_i64(w, "code", STATUS_ERROR);
        util_json_close(w);
    }
    util_json_close(w);
}

/* The GenAI attributes every span has: the operation, the provider, the model asked. */
static void genai_attrs(live_otlp *o, util_json *a, uint8_t provider) {
    const live_otlp_provider *p = &o->prov[provider];
    where w = where_of(p->url);
    a_str(a, "gen_ai.operation.name", "chat");
    a_str(a, "gen_ai.provider.name", live_dialect_name(p->dialect));
    a_str(a, "gen_ai.request.model", p->model);
    a_str(a, "server.address", w.host);
    a_int(a, "server.port", w.port);
}

static void answer_attrs(util_json *a, const live_meta *m, bool has_usage, uint32_t tokens_out) {
    if (m->model[0]) a_str(a, "gen_ai.response.model", m->model);
    if (m->finish[0]) a_strs1(a, "gen_ai.response.finish_reasons", m->finish);
    if (m->tokens_in > 0) a_int(a, "gen_ai.usage.input_tokens", m->tokens_in);
    if (has_usage) a_int(a, "gen_ai.usage.output_tokens", tokens_out);
}

static int slot_for(live_otlp *o, uint64_t id, open_req **out) {
    size_t i = (size_t)(id >> 32);
    if (i >= o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        while (cap <= i) cap *= 2;
        open_req *v = realloc(o->reqs, cap * sizeof *v);
        if (v == NULL) return FB_ENOMEM;
        memset(v + o->cap, 0, (cap - o->cap) * sizeof *v);
        o->reqs = v;
        o->cap = cap;
    }
    *out = &o->reqs[i];
    return FB_OK;
}

void live_otlp_attempt(live_otlp *o, const live_span_attempt *at) {
    if (!o->in_variant) return;
    open_req *r;
    if (slot_for(o, at->request, &r) != FB_OK) return;
    if (!r->used || r->id != at->request) {
        memset(r, 0, sizeof *r);
        r->used = true;
        r->id = at->request;
        r->arrival_us = at->arrival_us;
    }
    r->provider = at->provider;
    if (at->end_us > r->end_us) r->end_us = at->end_us;
    if (at->status == 200 && at->error_type == NULL && !at->cancelled && !at->unfinished) {
        r->answered = true;
        r->meta = at->meta;
        r->has_usage = at->has_usage;
        r->tokens_out = at->tokens_out;
    }
    const live_otlp_provider *p = &o->prov[at->provider];
    where w = where_of(p->url);
    char name[300];
    snprintf(name, sizeof name, "POST %s", w.path);
    ids d = ids_of(o, at->request);
    span_open(o, &d, mix(o->salt ^ mix(at->id ^ 0x5bd1e995u)), true, name, at->start_us,
              at->end_us);
    util_json *a = &o->w;
    a_str(a, "http.request.method", "POST");
    a_str(a, "url.full", p->url);
    a_str(a, "url.template", w.path);
    if (at->resend > 0) a_int(a, "http.request.resend_count", at->resend);
    if (at->status > 0) a_int(a, "http.response.status_code", at->status);
    if (at->error_type) a_str(a, "error.type", at->error_type);
    genai_attrs(o, a, at->provider);
    a_int(a, "gen_ai.request.max_tokens", at->max_tokens);
    if (at->stream) a_bool(a, "gen_ai.request.stream", true);
    answer_attrs(a, &at->meta, at->has_usage, at->tokens_out);
    a_str(a, "fusebox.provider", o->sc->providers[at->provider].name);
    if (at->cancelled) a_bool(a, "fusebox.cancelled", true);
    if (at->unfinished) a_bool(a, "fusebox.unfinished", true);
    span_close(o, at->error_type != NULL);
}

/* The provider a request that made no attempt would have called first. */
static uint8_t first_provider(const live_otlp *o, uint8_t cls) {
    const sim_class *c = &o->sc->classes[cls];
    const sim_policy *pol = &o->sc->variants[o->variant];
    const sim_stack *st = scn_policy_stack(pol, cls);
    const sim_layer *router = &pol->layers[st->layer[st->router]];
    if (c->target == SIM_TARGET_PROVIDER) return c->provider;
    if (c->order_len > 0) return c->order[0];
    return router->order_len > 0 ? router->order[0] : 0;
}

/* The root span of a request: r NULL for one still open when the run stopped. */
static void root_span(live_otlp *o, const open_req *q, const sim_port_request *r,
                      fb_time_us now_us) {
    uint8_t provider = q != NULL ? q->provider : first_provider(o, r->cls);
    fb_time_us start = r ? r->arrival_us : q->arrival_us;
    fb_time_us end = r ? r->end_us : now_us;
    if (q != NULL && q->end_us > end) end = q->end_us;
    char name[300];
    snprintf(name, sizeof name, "chat %s", o->prov[provider].model);
    ids d = ids_of(o, r ? r->id : q->id);
    span_open(o, &d, d.root, false, name, start, end);
    util_json *a = &o->w;
    genai_attrs(o, a, provider);
    if (q != NULL && q->answered) answer_attrs(a, &q->meta, q->has_usage, q->tokens_out);
    bool error = r != NULL && r->end != SIM_END_SUCCESS && r->end != SIM_END_DEGRADED;
    if (error) a_str(a, "error.type", sim_end_name(r->end));
    if (r != NULL) {
        a_str(a, "fusebox.class", o->sc->classes[r->cls].name);
        a_str(a, "fusebox.outcome", sim_end_name(r->end));
        a_bool(a, "fusebox.via_fallback", r->via_fallback);
        a_int(a, "fusebox.attempts", r->attempts);
    } else {
        a_bool(a, "fusebox.unfinished", true);
    }
    span_close(o, error);
}

void live_otlp_request(live_otlp *o, const sim_port_request *r) {
    if (!o->in_variant) return;
    open_req *q = NULL;
    if (slot_for(o, r->id, &q) == FB_OK && !(q->used && q->id == r->id)) q = NULL;
    if (q != NULL) q->arrival_us = r->arrival_us;
    root_span(o, q, r, 0);
    if (q != NULL) q->used = false;
}

/* ---- the document ---- */

int live_otlp_open(FILE *f, uint64_t spans_max, live_otlp **out) {
    live_otlp *o = calloc(1, sizeof *o);
    *out = o;
    if (o == NULL) return FB_ENOMEM;
    o->f = f;
    o->spans_max = spans_max ? spans_max : LIVE_OTLP_SPANS_MAX;
    util_json_init(&o->w, util_out_file(f), 0);
    util_json_open(&o->w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_open(&o->w, "resourceSpans", '[', UTIL_JSON_COMPACT);
    return FB_OK;
}

int live_otlp_begin(live_otlp *o, const sim_scenario *sc, uint32_t variant, double scale,
                    int64_t t0_unix_ns, const live_otlp_provider *prov) {
    o->sc = sc;
    o->variant = variant;
    /* copies: the client that owns the URLs may be gone when the last spans are written */
    for (uint32_t p = 0; p < sc->provider_count && p < SIM_PROVIDERS_MAX; p++) {
        snprintf(o->models[p], sizeof o->models[p], "%s", prov[p].model);
        snprintf(o->urls[p], sizeof o->urls[p], "%s", prov[p].url);
        o->prov[p] = (live_otlp_provider){prov[p].dialect, o->models[p], o->urls[p]};
    }
    o->t0_ns = t0_unix_ns;
    o->salt = mix((uint64_t)t0_unix_ns ^ mix(sc->seed) ^ mix(variant));
    o->in_variant = true;
    util_json *a = &o->w; /* a resource a line, its spans a line each */
    util_json_wrap(a, 0);
    util_json_open(a, NULL, '{', UTIL_JSON_COMPACT);
    util_json_open(a, "resource", '{', UTIL_JSON_COMPACT);
    util_json_open(a, "attributes", '[', UTIL_JSON_COMPACT);
    a_str(a, "service.name", "fusebox-live");
    a_str(a, "fusebox.scenario", sc->name);
    a_str(a, "fusebox.variant", sc->variants[variant].name);
    a_int(a, "fusebox.seed", (int64_t)sc->seed);
    a_double(a, "fusebox.time_scale", scale);
    util_json_close(a);
    util_json_close(a);
    util_json_open(a, "scopeSpans", '[', UTIL_JSON_COMPACT);
    util_json_open(a, NULL, '{', UTIL_JSON_COMPACT);
    util_json_open(a, "scope", '{', UTIL_JSON_COMPACT);
    util_json_str(a, "name", "fusebox");
    util_json_str(a, "version", FB_VERSION);
    util_json_close(a);
    util_json_open(a, "spans", '[', UTIL_JSON_COMPACT);
    return ferror(o->f) ? FB_EIO : FB_OK;
}

void live_otlp_end(live_otlp *o, fb_time_us now_us) {
    if (!o->in_variant) return;
    for (size_t i = 0; i < o->cap; i++) {
        if (!o->reqs[i].used) continue;
        root_span(o, &o->reqs[i], NULL, now_us);
        o->reqs[i].used = false;
    }
    util_json_text(&o->w, "\n");
    for (int i = 0; i < 4; i++)
        util_json_close(&o->w); /* spans, scopeSpans' item and it, the resource's item */
    o->in_variant = false;
}

bool live_otlp_full(const live_otlp *o) {
    return o->spans >= o->spans_max;
}

uint64_t live_otlp_spans(const live_otlp *o) {
    return o->spans;
}

int live_otlp_close(live_otlp *o) {
    if (o == NULL) return FB_OK;
    if (o->in_variant) live_otlp_end(o, 0);
    util_json_text(&o->w, "\n");
    util_json_close(&o->w); /* resourceSpans */
    util_json_close(&o->w);
    util_json_text(&o->w, "\n");
    int rc = ferror(o->f) ? FB_EIO : FB_OK;
    free(o->reqs);
    free(o);
    return rc;
}
