/* log.c - the model of a log: requests, attempts, providers, classes; see log.h. */
#include "import/log.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

imp_log *imp_log_new(const char *file, imp_format format, size_t max_records) {
    imp_log *log = calloc(1, sizeof *log);
    if (log == NULL) return NULL;
    snprintf(log->file, sizeof log->file, "%s", file);
    log->format = format;
    log->max_records = max_records ? max_records : IMP_RECORDS_MAX;
    return log;
}

void imp_log_free(imp_log *log) {
    if (log == NULL) return;
    free(log->req);
    free(log->att);
    free(log);
}

int imp_fail(imp_error *err, int rc, int line, const char *fmt, ...) {
    err->line = line;
    err->col = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return rc;
}

/* Room for one more element of `size` bytes in *items (doubling), under the records cap. */
static bool grow(imp_log *log, void **items, size_t *cap, size_t n, size_t size, imp_error *err) {
    if (log->nreq + log->natt >= log->max_records) {
        imp_fail(err, FB_ECAP, 0,
                 "more than %zu records (requests and attempts): the cap on records; raise it "
                 "with --max-records, or import a slice with --start and --duration",
                 log->max_records);
        return false;
    }
    if (n < *cap) return true;
    size_t want = *cap ? *cap * 2 : 1024;
    void *p = realloc(*items, want * size);
    if (p == NULL) {
        imp_fail(err, FB_ENOMEM, 0, "out of memory after %zu records", log->nreq + log->natt);
        return false;
    }
    *items = p;
    *cap = want;
    return true;
}

imp_request *imp_log_request(imp_log *log, imp_error *err) {
    if (!grow(log, (void **)&log->req, &log->req_cap, log->nreq, sizeof *log->req, err))
        return NULL;
    imp_request *r = &log->req[log->nreq];
    memset(r, 0, sizeof *r);
    r->seq = (uint32_t)log->nreq++;
    r->tokens_in = r->tokens_out = -1;
    return r;
}

imp_attempt *imp_log_attempt(imp_log *log, imp_error *err) {
    if (!grow(log, (void **)&log->att, &log->att_cap, log->natt, sizeof *log->att, err))
        return NULL;
    imp_attempt *a = &log->att[log->natt];
    memset(a, 0, sizeof *a);
    a->seq = (uint32_t)log->natt++;
    a->ttft_us = a->retry_after_us = -1;
    a->resend = -1;
    a->tokens_in = a->tokens_out = -1;
    a->cost = -1;
    return a;
}

void imp_name(const char *in, char *out, size_t len) {
    size_t j = 0;
    for (size_t i = 0; in && in[i] && j + 1 < len; i++) {
        unsigned char c = (unsigned char)in[i];
        bool keep = isalnum(c) || c == '-' || c == '_' || c == '.';
        if (!keep && j > 0 && out[j - 1] == '-') continue; /* one '-' for a run of others */
        out[j++] = keep ? (char)tolower(c) : '-';
    }
    while (j > 0 && out[j - 1] == '-') j--;
    out[j] = '\0';
}

static bool provider_named(const imp_log *log, const char *name) {
    for (uint32_t i = 0; i < log->nprov; i++)
        if (strcmp(log->prov[i].name, name) == 0) return true;
    return false;
}

int imp_log_provider(imp_log *log, const char *key, const char *name, imp_error *err) {
    for (uint32_t i = 0; i < log->nprov; i++)
        if (strcmp(log->prov[i].key, key) == 0) return (int)i;
    if (log->nprov == SIM_PROVIDERS_MAX)
        return imp_fail(err, FB_ECAP, 0,
                        "more than %d providers (a scenario has at most %d): the last one is %s",
                        SIM_PROVIDERS_MAX, SIM_PROVIDERS_MAX, key),
               -1;
    char base[SIM_NAME_MAX - 4];
    imp_name(name, base, sizeof base);
    if (base[0] == '\0' || strcmp(base, "llm") == 0 || strcmp(base, "none") == 0)
        snprintf(base, sizeof base, "%s", "provider");
    imp_provider *p = &log->prov[log->nprov];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", base);
    for (unsigned k = 2; provider_named(log, p->name) && k < 10; k++)
        snprintf(p->name, sizeof p->name, "%.56s-%u", base, k);
    snprintf(p->key, sizeof p->key, "%s", key);
    p->price_in = p->price_out = -1;
    return (int)log->nprov++;
}

int imp_log_class(imp_log *log, const char *name, imp_error *err) {
    char n[SIM_NAME_MAX];
    imp_name(name, n, sizeof n);
    if (n[0] == '\0') snprintf(n, sizeof n, "%s", "default");
    for (uint32_t i = 0; i < log->ncls; i++)
        if (strcmp(log->cls[i], n) == 0) return (int)i;
    if (log->ncls == SIM_CLASSES_MAX)
        return imp_fail(err, FB_ECAP, 0,
                        "more than %d traffic classes (a scenario has at most %d): the last one is "
                        "'%s'",
                        SIM_CLASSES_MAX, SIM_CLASSES_MAX, n),
               -1;
    snprintf(log->cls[log->ncls], SIM_NAME_MAX, "%s", n);
    return (int)log->ncls++;
}

/* ---- finishing: requests by arrival, attempts by request and start ---- */

static int by_arrival(const void *a, const void *b) {
    const imp_request *x = a, *y = b;
    if (x->start_us != y->start_us) return x->start_us < y->start_us ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_request(const void *a, const void *b) {
    const imp_attempt *x = a, *y = b;
    if (x->request != y->request) return x->request < y->request ? -1 : 1;
    if (x->start_us != y->start_us) return x->start_us < y->start_us ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * What http.request.resend_count says (the OpenTelemetry HTTP conventions: the ordinal of a
 * resend, on a client span that is one; @anthropic-ai/sdk's own call span carries its call's
 * resends). An attempt that is its request's k-th resend on its provider, after fewer than k
 * attempts there, counts the missing ones; a request that stands for its attempts (no HTTP
 * span in the trace) says how many resends its span hides.
 */
static void count_resends(imp_log *log) {
    for (size_t r = 0; r < log->nreq; r++) {
        const imp_request *q = &log->req[r];
        uint32_t missing = 0, most = 0;
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &log->att[i];
            if (a->resend < 0) continue;
            log->resend_seen++;
            uint32_t before = 0;
            for (uint32_t j = q->first; j < i; j++) before += log->att[j].provider == a->provider;
            if ((uint32_t)a->resend > before && (uint32_t)a->resend - before > missing)
                missing = (uint32_t)a->resend - before;
            if ((uint32_t)a->resend > most) most = (uint32_t)a->resend;
        }
        if (log->hidden_attempts == 0) {
            log->resend_missing += missing;
        } else if (most > 0) {
            log->hidden_resent++;
            log->hidden_resends += most;
            if (most > log->hidden_resend_max) log->hidden_resend_max = most;
        }
    }
}

int imp_log_finish(imp_log *log, imp_error *err) {
    if (log->nreq == 0)
        return imp_fail(err, FB_EINVAL, 0, "%s",
                        log->format == IMP_FORMAT_OTLP
                            ? "no GenAI span: no span has gen_ai.operation.name, "
                              "gen_ai.provider.name or gen_ai.system, so there is no LLM request "
                              "to import"
                            : "no record: nothing to import");
    /* seq is each request's index before sorting: the map from old to new indices */
    qsort(log->req, log->nreq, sizeof *log->req, by_arrival);
    uint32_t *to = malloc(log->nreq * sizeof *to);
    if (to == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    for (size_t i = 0; i < log->nreq; i++) to[log->req[i].seq] = (uint32_t)i;
    for (size_t i = 0; i < log->natt; i++) log->att[i].request = to[log->att[i].request];
    free(to);
    if (log->natt > 1) qsort(log->att, log->natt, sizeof *log->att, by_request);
    for (size_t i = 0; i < log->nreq; i++) log->req[i].first = log->req[i].count = 0;
    for (size_t i = log->natt; i-- > 0;) {
        imp_request *r = &log->req[log->att[i].request];
        r->first = (uint32_t)i;
        r->count++;
    }
    count_resends(log);
    return FB_OK;
}

uint64_t imp_session_id(const char *s) {
    if (s == NULL || *s == '\0') return 0;
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}
