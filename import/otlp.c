/*
 * otlp.c - reading spans out of OTLP/JSON; see otlp.h. Each span is reduced to an ospan
 * (otlpint.h) as it is read, so memory holds the spans, not the JSON; otlp_tree.c then
 * turns them into requests and attempts.
 *
 * OTLP/JSON encodes 64-bit integers (times, intValue) as decimal strings, and decoders
 * must accept numbers too (docs/specification.md, "JSON Protobuf Encoding"): the
 * @opentelemetry/otlp-transformer JSON serializer writes intValue as a number. Ids are
 * hex strings.
 */
#include "import/otlpint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/retry_after.h"

imp_otlp *imp_otlp_begin(imp_log *log) {
    imp_otlp *o = calloc(1, sizeof *o);
    if (o == NULL) return NULL;
    o->log = log;
    o->str = calloc(OT_STRINGS_MAX, sizeof *o->str);
    o->slot = calloc(2 * OT_STRINGS_MAX, sizeof *o->slot);
    o->nstr = 1;
    if (o->str == NULL || o->slot == NULL) {
        imp_otlp_free(o);
        return NULL;
    }
    return o;
}

void imp_otlp_free(imp_otlp *o) {
    if (o == NULL) return;
    free(o->sp);
    free(o->str);
    free(o->slot);
    free(o);
}

int imp_otlp_looks(const cJSON *doc) {
    return cJSON_IsObject(doc) &&
           cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "resourceSpans"));
}

int imp__ot_intern(imp_otlp *o, const char *s) {
    if (s == NULL || s[0] == '\0') return 0;
    uint32_t h = 2166136261u;
    for (const char *p = s; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    for (uint32_t k = 0; k < 2 * OT_STRINGS_MAX; k++) {
        uint16_t *slot = &o->slot[(h + k) % (2 * OT_STRINGS_MAX)];
        if (*slot == 0) {
            if (o->nstr == OT_STRINGS_MAX) return -1;
            snprintf(o->str[o->nstr], OT_STR_LEN, "%s", s);
            *slot = (uint16_t)o->nstr;
            return (int)o->nstr++;
        }
        if (strncmp(o->str[*slot], s, OT_STR_LEN - 1) == 0) return *slot;
    }
    return -1;
}

void imp__ot_where(const imp_otlp *o, const ospan *s, char *buf, size_t len) {
    char id[17];
    snprintf(id, sizeof id, "%016llx", (unsigned long long)s->id);
    const char *name = o->str[s->name];
    if (s->line > 0)
        snprintf(buf, len, "span %s (%s)", id, name);
    else
        snprintf(buf, len, "resourceSpans[%u].scopeSpans[%u].spans[%u] (span %s, %s)", s->rs, s->ss,
                 s->sp, id, name);
}

/* ---- values ---- */

/* Hex digits into up to two 64-bit halves; false when not hex of the expected length. */
static bool hex_id(const cJSON *v, size_t digits, uint64_t *hi, uint64_t *lo) {
    if (!cJSON_IsString(v) || strlen(v->valuestring) != digits) return false;
    *hi = *lo = 0;
    for (size_t i = 0; i < digits; i++) {
        char c = v->valuestring[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return false;
        uint64_t *half = digits == 32 && i < 16 ? hi : lo;
        *half = (*half << 4) | (uint64_t)d;
    }
    return true;
}

/* A 64-bit integer written as a decimal string or a number; false when neither. */
static bool int64_value(const cJSON *v, int64_t *out) {
    if (cJSON_IsNumber(v)) {
        /* within int64's range (2^63 is a double exactly), not NaN */
        if (!(v->valuedouble > -9223372036854775808.0 && v->valuedouble < 9223372036854775808.0))
            return false;
        *out = (int64_t)v->valuedouble;
        return true;
    }
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0') return false;
    int64_t n = 0;
    for (const char *p = v->valuestring; *p; p++) {
        if (*p < '0' || *p > '9' || n > (INT64_MAX - 9) / 10) return false;
        n = n * 10 + (*p - '0');
    }
    *out = n;
    return true;
}

/* An AnyValue's string: stringValue, or the first string of an arrayValue (headers). */
static const char *any_string(const cJSON *v) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "stringValue");
    if (cJSON_IsString(s)) return s->valuestring;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(v, "arrayValue");
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(arr, "values");
    return cJSON_IsArray(vals) && vals->child ? any_string(vals->child) : NULL;
}

static bool any_int(const cJSON *v, int64_t *out) {
    if (int64_value(cJSON_GetObjectItemCaseSensitive(v, "intValue"), out)) return true;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(v, "doubleValue");
    if (cJSON_IsNumber(d)) *out = (int64_t)d->valuedouble;
    return cJSON_IsNumber(d);
}

static bool any_bool(const cJSON *v) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "boolValue"));
}

/* ---- attributes ---- */

/* What the attributes say, before the span's times are known (Retry-After needs its end). */
typedef struct attrs {
    const char *system_new, *system_old, *address, *ra, *ra_ms;
    int64_t port;
    bool conversation; /* gen_ai.conversation.id seen: it names the session, not session.id */
} attrs;

static void set_str(imp_otlp *o, uint16_t *slot, const char *s, bool *full) {
    int id = imp__ot_intern(o, s);
    if (id < 0)
        *full = true;
    else if (id > 0)
        *slot = (uint16_t)id;
}

static void int_attr(const char *k, const cJSON *v, ospan *s, attrs *a) {
    int64_t n = 0;
    if (!any_int(v, &n)) return;
    if (!strcmp(k, "gen_ai.usage.input_tokens") || !strcmp(k, "gen_ai.usage.prompt_tokens"))
        s->tokens_in = n >= 0 && n < INT32_MAX ? (int32_t)n : -1;
    else if (!strcmp(k, "gen_ai.usage.output_tokens") ||
             !strcmp(k, "gen_ai.usage.completion_tokens"))
        s->tokens_out = n >= 0 && n < INT32_MAX ? (int32_t)n : -1;
    else if (!strcmp(k, "http.response.status_code"))
        s->status = n >= 100 && n <= 599 ? (int16_t)n : 0;
    else if (!strcmp(k, "server.port"))
        a->port = n;
    else if (!strcmp(k, "http.request.resend_count"))
        s->resend = n >= 0 && n <= IMP_RESEND_MAX ? (int16_t)n : -1;
}

/* One attribute {key, value}: the conventions' names this import reads. */
static void attribute(imp_otlp *o, const cJSON *kv, ospan *s, attrs *a, bool *full) {
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(kv, "key");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(kv, "value");
    if (!cJSON_IsString(key) || !cJSON_IsObject(v)) return;
    const char *k = key->valuestring, *str = any_string(v);
    if (!strncmp(k, "gen_ai.", 7)) s->genai |= !strcmp(k, "gen_ai.operation.name");
    if (!strcmp(k, "gen_ai.provider.name"))
        a->system_new = str;
    else if (!strcmp(k, "gen_ai.system"))
        a->system_old = str;
    else if (!strcmp(k, "gen_ai.request.model"))
        set_str(o, &s->model, str, full);
    else if (!strcmp(k, "gen_ai.request.stream"))
        s->stream = any_bool(v);
    else if (!strcmp(k, "server.address"))
        a->address = str;
    else if (!strcmp(k, "error.type") && str)
        snprintf(s->error_type, sizeof s->error_type, "%s", str);
    else if (!strcmp(k, "http.request.method") || !strcmp(k, "url.full"))
        s->http = true;
    else if (!strcmp(k, "http.response.header.retry-after"))
        a->ra = str;
    else if (!strcmp(k, "http.response.header.retry-after-ms"))
        a->ra_ms = str;
    else if (!strcmp(k, "fusebox.provider"))
        set_str(o, &s->fprov, str, full);
    else if (!strcmp(k, "fusebox.class"))
        set_str(o, &s->cls, str, full);
    else if (!strcmp(k, "gen_ai.conversation.id") && imp_session_id(str))
        s->session = imp_session_id(str);
    else if (!strcmp(k, "session.id") && imp_session_id(str) && !a->conversation)
        s->session = imp_session_id(str);
    else if (!strcmp(k, "fusebox.cancelled") || !strcmp(k, "fusebox.unfinished"))
        s->cancelled |= any_bool(v);
    else
        int_attr(k, v, s, a);
    if (!strcmp(k, "http.response.status_code")) s->http = true;
    a->conversation |= !strcmp(k, "gen_ai.conversation.id") && imp_session_id(str);
}

static int read_attributes(imp_otlp *o, const cJSON *span, ospan *s, attrs *a) {
    bool full = false;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(span, "attributes");
    for (const cJSON *kv = cJSON_IsArray(list) ? list->child : NULL; kv; kv = kv->next)
        attribute(o, kv, s, a, &full);
    const char *system = a->system_new ? a->system_new : a->system_old;
    s->genai |= system != NULL;
    set_str(o, &s->system, system, &full);
    if (a->address) {
        char addr[OT_STR_LEN];
        if (a->port > 0)
            snprintf(addr, sizeof addr, "%s:%lld", a->address, (long long)a->port);
        else
            snprintf(addr, sizeof addr, "%s", a->address);
        set_str(o, &s->address, addr, &full);
    }
    return full ? FB_ECAP : FB_OK;
}

/* ---- spans ---- */

static int span_fail(imp_otlp *o, const ospan *s, imp_error *err, int rc, const char *what) {
    char where[200];
    imp__ot_where(o, s, where, sizeof where);
    return imp_fail(err, rc, (int)s->line, "%s: %s", where, what);
}

static int span_times(imp_otlp *o, const cJSON *span, ospan *s, imp_error *err) {
    int64_t a = 0, b = 0;
    if (!int64_value(cJSON_GetObjectItemCaseSensitive(span, "startTimeUnixNano"), &a) || a <= 0)
        return span_fail(o, s, err, FB_EINVAL,
                         "no startTimeUnixNano (unix nanoseconds as a decimal string): a span "
                         "without times cannot be placed in time");
    if (!int64_value(cJSON_GetObjectItemCaseSensitive(span, "endTimeUnixNano"), &b) || b <= 0)
        return span_fail(o, s, err, FB_EINVAL, "no endTimeUnixNano: the span never ended?");
    if (b < a)
        return span_fail(o, s, err, FB_EINVAL, "endTimeUnixNano is before startTimeUnixNano");
    s->start_us = a / 1000;
    s->end_us = b / 1000;
    return FB_OK;
}

static int new_span(imp_otlp *o, ospan **out, imp_error *err) {
    if (o->n >= o->log->max_records)
        return imp_fail(err, FB_ECAP, 0,
                        "more than %zu spans: the cap on records; raise it with --max-records, "
                        "or export a shorter stretch of time",
                        o->log->max_records);
    if (o->n == o->cap) {
        size_t want = o->cap ? o->cap * 2 : 4096;
        ospan *p = realloc(o->sp, want * sizeof *p);
        if (p == NULL) return imp_fail(err, FB_ENOMEM, 0, "out of memory after %zu spans", o->n);
        o->sp = p;
        o->cap = want;
    }
    ospan *s = &o->sp[o->n];
    memset(s, 0, sizeof *s);
    s->seq = (uint32_t)o->n++;
    s->tokens_in = s->tokens_out = -1;
    s->retry_after_us = -1;
    s->resend = -1;
    *out = s;
    return FB_OK;
}

static int read_span(imp_otlp *o, const cJSON *span, ospan *s, imp_error *err) {
    uint64_t hi = 0;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(span, "name");
    if (cJSON_IsString(name) && imp__ot_intern(o, name->valuestring) > 0)
        s->name = (uint16_t)imp__ot_intern(o, name->valuestring);
    if (!hex_id(cJSON_GetObjectItemCaseSensitive(span, "spanId"), 16, &hi, &s->id) || s->id == 0)
        return span_fail(o, s, err, FB_EINVAL, "no spanId (16 hex digits)");
    if (!hex_id(cJSON_GetObjectItemCaseSensitive(span, "traceId"), 32, &s->tr_hi, &s->tr_lo))
        return span_fail(o, s, err, FB_EINVAL, "no traceId (32 hex digits)");
    const cJSON *parent = cJSON_GetObjectItemCaseSensitive(span, "parentSpanId");
    if (cJSON_IsString(parent) && parent->valuestring[0] && !hex_id(parent, 16, &hi, &s->parent))
        return span_fail(o, s, err, FB_EINVAL, "parentSpanId is not 16 hex digits");
    int rc = span_times(o, span, s, err);
    attrs a = {0};
    if (rc == FB_OK && read_attributes(o, span, s, &a) != FB_OK)
        rc = span_fail(o, s, err, FB_ECAP,
                       "more than 2048 distinct provider, model and class names");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(span, "status");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(status, "code");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(status, "message");
    s->failed = cJSON_IsNumber(st) && st->valueint == 2;
    /* openai-node's and @anthropic-ai/sdk's APIUserAbortError, by its error.type, or by its
       message alone ("Request was aborted.", both SDKs' src/core/error.ts): Traceloop's anthropic
       span records the error as the status message and an exception of type Error */
    s->user_abort =
        strcmp(s->error_type, "APIUserAbortError") == 0 ||
        (s->failed && cJSON_IsString(msg) && strcmp(msg->valuestring, "Request was aborted.") == 0);
    if (rc == FB_OK && (a.ra || a.ra_ms)) {
        fb_time_us hint = fb_retry_after_hint(a.ra_ms, a.ra, s->end_us);
        if (hint != FB_TIME_NONE) s->retry_after_us = hint;
    }
    return rc;
}

static const cJSON *array_of(const cJSON *obj, const char *key, const char *old) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsArray(a) ? a : cJSON_GetObjectItemCaseSensitive(obj, old);
}

int imp_otlp_add(imp_otlp *o, const cJSON *doc, int line, imp_error *err) {
    if (!imp_otlp_looks(doc))
        return imp_fail(err, FB_EINVAL, line, "%s",
                        "expected an OTLP/JSON ExportTraceServiceRequest ({\"resourceSpans\": "
                        "[...]})");
    uint16_t rs = 0;
    for (const cJSON *r = cJSON_GetObjectItemCaseSensitive(doc, "resourceSpans")->child; r;
         r = r->next, rs++) {
        uint16_t ss = 0;
        const cJSON *scopes = array_of(r, "scopeSpans", "instrumentationLibrarySpans");
        for (const cJSON *sc = cJSON_IsArray(scopes) ? scopes->child : NULL; sc;
             sc = sc->next, ss++) {
            uint32_t k = 0;
            const cJSON *spans = cJSON_GetObjectItemCaseSensitive(sc, "spans");
            for (const cJSON *sp = cJSON_IsArray(spans) ? spans->child : NULL; sp;
                 sp = sp->next, k++) {
                ospan *s = NULL;
                int rc = new_span(o, &s, err);
                if (rc != FB_OK) return rc;
                s->line = (uint32_t)(line > 0 ? line : 0);
                s->rs = rs;
                s->ss = ss;
                s->sp = k;
                rc = read_span(o, sp, s, err);
                if (rc != FB_OK) return rc;
            }
        }
    }
    return FB_OK;
}
