/*
 * otlp_tree.c - spans into logical requests and their attempts; see otlp.h.
 *
 * Spans are sorted by (trace, span id) so that a parent is found by binary search; each
 * span's outermost GenAI ancestor (itself included) is computed once, walking up at most
 * OT_DEPTH_MAX parents (a cycle in a hand-made file stops there). That ancestor is the
 * logical request; HTTP spans below it are its attempts, in start order.
 */
#include "import/otlpint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_id(const void *a, const void *b) {
    const ospan *x = a, *y = b;
    if (x->tr_hi != y->tr_hi) return x->tr_hi < y->tr_hi ? -1 : 1;
    if (x->tr_lo != y->tr_lo) return x->tr_lo < y->tr_lo ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The parent of span i in the same trace, or -1 (a root, or a parent not in the file). */
static long parent_of(const imp_otlp *o, size_t i) {
    const ospan *s = &o->sp[i];
    if (s->parent == 0) return -1;
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const ospan *m = &o->sp[mid];
        int c = m->tr_hi != s->tr_hi   ? (m->tr_hi < s->tr_hi ? -1 : 1)
                : m->tr_lo != s->tr_lo ? (m->tr_lo < s->tr_lo ? -1 : 1)
                : m->id != s->parent   ? (m->id < s->parent ? -1 : 1)
                                       : 0;
        if (c == 0) return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

#define TOP_UNKNOWN (-2)

/* top[i]: the outermost GenAI span at or above span i, or -1; walks up from i once. */
static int compute_top(imp_otlp *o, long *top, size_t i, imp_error *err) {
    long chain[OT_DEPTH_MAX];
    size_t depth = 0;
    long j = (long)i, base = -1;
    while (j >= 0 && top[j] == TOP_UNKNOWN) {
        if (depth == OT_DEPTH_MAX) {
            char where[200];
            imp__ot_where(o, &o->sp[i], where, sizeof where);
            return imp_fail(err, FB_EINVAL, (int)o->sp[i].line,
                            "%s: more than %d ancestors (a cycle of parentSpanId?)", where,
                            OT_DEPTH_MAX);
        }
        chain[depth++] = j;
        long p = parent_of(o, (size_t)j);
        if (p < 0 && o->sp[j].parent != 0) o->log->orphans++;
        j = p;
    }
    if (j >= 0) base = top[j];
    while (depth-- > 0) {
        long k = chain[depth];
        top[k] = base >= 0 ? base : o->sp[k].genai ? k : -1;
        base = top[k];
    }
    return FB_OK;
}

/* ---- what a span says about an attempt ---- */

/* openai-node's error classes (src/core/error.ts), for a GenAI span that is its own attempt. */
static const struct {
    const char *name;
    int status;
    imp_outcome outcome;
} error_classes[] = {
    {"BadRequestError", 400, IMP_STATUS},
    {"AuthenticationError", 401, IMP_STATUS},
    {"PermissionDeniedError", 403, IMP_STATUS},
    {"NotFoundError", 404, IMP_STATUS},
    {"ConflictError", 409, IMP_STATUS},
    {"UnprocessableEntityError", 422, IMP_STATUS},
    {"RateLimitError", 429, IMP_STATUS},
    {"InternalServerError", 500, IMP_STATUS},
    {"APIConnectionTimeoutError", 0, IMP_TIMEOUT},
    {"APIConnectionError", 0, IMP_RESET},
    {"APIUserAbortError", 0, IMP_CANCELLED},
    {"timeout", 0, IMP_TIMEOUT},
};

static bool is_transport(const char *e) {
    static const char *const names[] = {
        "connect_error", "connection_reset", "transport_error", "ECONNRESET",   "ECONNREFUSED",
        "EPIPE",         "UND_ERR_SOCKET",   "ENOTFOUND",       "EHOSTUNREACH", NULL};
    for (size_t i = 0; names[i]; i++)
        if (strcmp(e, names[i]) == 0) return true;
    return false;
}

static bool is_broken(const char *e) {
    return !strcmp(e, "broken_reply") || !strcmp(e, "broken_stream") ||
           !strcmp(e, "stream_error") || !strcmp(e, "response_too_large");
}

/* The outcome of an error.type without a status code. */
static imp_outcome from_error_type(imp_log *log, const char *e, int16_t *status) {
    char *end;
    long n = strtol(e, &end, 10);
    if (end != e && *end == '\0' && n >= 400 && n <= 599) {
        *status = (int16_t)n;
        return IMP_STATUS;
    }
    for (size_t i = 0; i < sizeof error_classes / sizeof error_classes[0]; i++)
        if (strcmp(e, error_classes[i].name) == 0) {
            *status = (int16_t)error_classes[i].status;
            if (error_classes[i].status >= 500) log->assumed_status++;
            return error_classes[i].outcome;
        }
    if (is_transport(e)) return IMP_RESET;
    if (strstr(e, "imeout") || strstr(e, "TIMEDOUT")) return IMP_TIMEOUT;
    log->assumed_status++; /* an error the log does not classify: a server error, assumed */
    *status = 500;
    return IMP_STATUS;
}

static imp_outcome outcome_of(imp_log *log, const ospan *s, int16_t *status, bool *aborted) {
    *status = s->status;
    if (s->cancelled) return IMP_CANCELLED;
    if (s->status >= 400) return IMP_STATUS;
    if (s->status > 0) return s->error_type[0] && is_broken(s->error_type) ? IMP_BROKEN : IMP_OK;
    if (s->error_type[0]) return from_error_type(log, s->error_type, status);
    if (s->http || s->failed) {
        /* no status, no error: the client aborted it (instrumentation-undici leaves an
           aborted request without error.type), i.e. it gave up waiting */
        if (s->failed) return from_error_type(log, "", status);
        log->aborted++;
        *aborted = true;
        return IMP_TIMEOUT;
    }
    return IMP_OK;
}

/* ---- requests and attempts ---- */

static const char *str(const imp_otlp *o, uint16_t a, uint16_t b) {
    return o->str[a ? a : b];
}

static int attempt_provider(imp_otlp *o, const ospan *s, const ospan *r, imp_error *err) {
    const char *fprov = str(o, s->fprov, r->fprov), *system = str(o, s->system, r->system);
    const char *address = str(o, s->address, r->address);
    char key[192];
    if (fprov[0])
        snprintf(key, sizeof key, "fusebox.provider=%s", fprov);
    else
        snprintf(key, sizeof key, "%s|%s", system, address);
    const char *name = fprov[0] ? fprov : system[0] ? system : address;
    if (name[0] == '\0') {
        char where[200];
        imp__ot_where(o, s, where, sizeof where);
        return imp_fail(err, FB_EINVAL, (int)s->line,
                        "%s: unknown provider: neither it nor its GenAI span has "
                        "gen_ai.provider.name, gen_ai.system or server.address",
                        where);
    }
    int p = imp_log_provider(o->log, key, name, err);
    if (p >= 0) {
        imp_provider *pv = &o->log->prov[p];
        snprintf(pv->system, sizeof pv->system, "%s", system);
        snprintf(pv->address, sizeof pv->address, "%s", address);
        if (!pv->model[0]) snprintf(pv->model, sizeof pv->model, "%s", str(o, r->model, s->model));
    }
    return p < 0 ? (err->msg[0] ? FB_ECAP : FB_EINVAL) : p;
}

/* A request or attempt that lasts more than a day: times that cannot be right. */
static int too_long(const imp_otlp *o, const ospan *s, imp_error *err) {
    if (s->end_us - s->start_us <= IMP_CALL_MAX_US) return FB_OK;
    char where[200];
    imp__ot_where(o, s, where, sizeof where);
    return imp_fail(err, FB_EINVAL, (int)s->line,
                    "%s: lasts %.1f days, more than a day: its times cannot be right", where,
                    (double)(s->end_us - s->start_us) / 86400e6);
}

static int add_attempt(imp_otlp *o, const ospan *s, const ospan *r, uint32_t req, imp_error *err) {
    if (too_long(o, s, err) != FB_OK) return FB_EINVAL;
    int p = attempt_provider(o, s, r, err);
    if (p < 0) return p;
    imp_attempt *a = imp_log_attempt(o->log, err);
    if (a == NULL) return FB_ECAP;
    int16_t status = 0;
    a->request = req;
    a->provider = (uint8_t)p;
    a->outcome = (uint8_t)outcome_of(o->log, s, &status, &a->aborted);
    a->status = status;
    a->start_us = s->start_us;
    a->end_us = s->end_us;
    a->retry_after_us = s->retry_after_us;
    a->resend = s->resend;
    a->tokens_in = s->tokens_in;
    a->tokens_out = s->tokens_out;
    if (a->outcome == IMP_OK && a->tokens_out < 0 && s != r) {
        a->tokens_in = r->tokens_in;
        a->tokens_out = r->tokens_out;
    }
    if (a->retry_after_us >= 0) o->log->retry_after_seen++;
    return FB_OK;
}

/* The session of span i's request: its own span's, else the nearest ancestor's (an
   application's span around the call may carry it); compute_top has ruled out cycles. */
static uint64_t session_of(const imp_otlp *o, size_t i) {
    for (long j = (long)i; j >= 0; j = parent_of(o, (size_t)j))
        if (o->sp[j].session) return o->sp[j].session;
    return 0;
}

static int add_request(imp_otlp *o, const ospan *r, imp_error *err) {
    if (too_long(o, r, err) != FB_OK) return FB_EINVAL;
    const char *cls = o->str[r->cls ? r->cls : r->model];
    int c = imp_log_class(o->log, cls, err);
    if (c < 0) return FB_ECAP;
    imp_request *q = imp_log_request(o->log, err);
    if (q == NULL) return FB_ECAP;
    q->cls = (uint8_t)c;
    q->start_us = r->start_us;
    q->end_us = r->end_us;
    q->ok = !r->failed && !r->error_type[0];
    q->user_abort = r->user_abort;
    q->stream = r->stream;
    q->tokens_in = r->tokens_in;
    q->tokens_out = r->tokens_out;
    return FB_OK;
}

/* Requests for the outermost GenAI spans; req[i] is span i's request index. */
static int add_requests(imp_otlp *o, const long *top, long *req, imp_error *err) {
    for (size_t i = 0; i < o->n; i++) {
        req[i] = -1;
        if (top[i] != (long)i) continue;
        req[i] = (long)o->log->nreq;
        int rc = add_request(o, &o->sp[i], err);
        if (rc != FB_OK) return rc;
        o->log->req[req[i]].session = session_of(o, i);
        o->log->sessioned += o->log->req[req[i]].session != 0;
    }
    return FB_OK;
}

/* above[i]: span i has an HTTP span below it inside its request. Each HTTP span marks its
   ancestors up to its request's span, stopping at one already marked (so each span is
   marked once); compute_top has ruled out cycles. */
static void mark_above_http(const imp_otlp *o, const long *top, bool *above) {
    for (size_t i = 0; i < o->n; i++) {
        if (!o->sp[i].http || top[i] < 0 || top[i] == (long)i) continue;
        for (long p = parent_of(o, i); p >= 0 && !above[p]; p = parent_of(o, (size_t)p)) {
            above[p] = true;
            if (p == top[i]) break;
        }
    }
}

/*
 * The attempts in flight when the application aborted their call (an AbortSignal: the SDK's
 * APIUserAbortError on the call's span; the HTTP span below it, aborted, has neither status nor
 * error, as one the SDK's own timeout aborted has): the call's last attempt to end is cancelled
 * (its request ended first), not timed out. Read as timeouts, a 1.5 s deadline around the
 * openai client (its own timeout 10 minutes) became a 1.5 s attempt timeout, and a policy with
 * more retries then retried where the application had given up. `last` is scratch space of
 * nreq + 1 entries.
 */
static void user_aborts(imp_log *log, size_t before, int64_t *last) {
    for (size_t r = 0; r < log->nreq; r++) last[r] = INT64_MIN;
    for (size_t k = before; k < log->natt; k++)
        if (log->att[k].end_us > last[log->att[k].request])
            last[log->att[k].request] = log->att[k].end_us;
    for (size_t k = before; k < log->natt; k++) {
        imp_attempt *a = &log->att[k];
        if (!a->aborted || !log->req[a->request].user_abort || a->end_us != last[a->request])
            continue;
        a->outcome = IMP_CANCELLED;
        last[a->request] = INT64_MIN; /* one a call, if two ended at that instant */
        log->aborted--;
        log->user_aborted++;
    }
}

/* HTTP spans below a request are its attempts; a request with none is its own attempt. */
static int add_attempts(imp_otlp *o, const long *top, const long *req, imp_error *err) {
    size_t before = o->log->natt;
    bool *above = calloc(o->n + 1, sizeof *above);
    if (above == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    mark_above_http(o, top, above);
    for (size_t i = 0; i < o->n; i++) {
        const ospan *s = &o->sp[i];
        /* an HTTP span below the request (it may carry GenAI attributes of its own, as
           fusebox live's attempts do); the request's own span is never its attempt here */
        if (!s->http || top[i] == (long)i) continue;
        if (top[i] < 0) {
            o->log->ignored++;
            continue;
        }
        /* a GenAI span with HTTP spans below it is the request again, not an attempt: an
           SDK's own call span (@anthropic-ai/sdk's tracing: http.request.method, url.full and
           the last status on the span of the whole call, retries included) inside another
           instrumentation's GenAI span, with the HTTP instrumentation's attempts below it */
        if (s->genai && above[i]) {
            o->log->call_spans++;
            continue;
        }
        int rc = add_attempt(o, s, &o->sp[top[i]], (uint32_t)req[top[i]], err);
        if (rc != FB_OK) {
            free(above);
            return rc;
        }
    }
    free(above);
    int64_t *last = malloc((o->log->nreq + 1) * sizeof *last);
    if (last == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    user_aborts(o->log, before, last);
    free(last);
    uint32_t *seen = calloc(o->log->nreq + 1, sizeof *seen);
    if (seen == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    for (size_t k = before; k < o->log->natt; k++) seen[o->log->att[k].request]++;
    /* when the trace has HTTP spans, a request without any made no call (refused before
       one left: a breaker, a full queue); without any HTTP span, each request stands for
       its attempts, which the trace does not show */
    bool visible = o->log->natt > before;
    int rc = FB_OK;
    for (size_t i = 0; rc == FB_OK && i < o->n; i++) {
        if (req[i] < 0 || seen[req[i]]) continue;
        if (visible) {
            o->log->no_call++;
            continue;
        }
        o->log->hidden_attempts++;
        rc = add_attempt(o, &o->sp[i], &o->sp[i], (uint32_t)req[i], err);
    }
    free(seen);
    return rc;
}

int imp_otlp_end(imp_otlp *o, imp_error *err) {
    if (o->n > 1) qsort(o->sp, o->n, sizeof *o->sp, by_id);
    long *top = malloc((o->n + 1) * sizeof *top), *req = malloc((o->n + 1) * sizeof *req);
    int rc = top && req ? FB_OK : imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    for (size_t i = 0; rc == FB_OK && i < o->n; i++) top[i] = TOP_UNKNOWN;
    for (size_t i = 0; rc == FB_OK && i < o->n; i++) rc = compute_top(o, top, i, err);
    if (rc == FB_OK) rc = add_requests(o, top, req, err);
    if (rc == FB_OK) rc = add_attempts(o, top, req, err);
    free(top);
    free(req);
    return rc;
}
