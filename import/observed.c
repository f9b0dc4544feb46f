/*
 * observed.c - the log's own figures, written into the scenario as "observed" (see
 * incident.h and docs/import.md, "Fidelity"): requests, attempts, retries, success rate,
 * p50/p90/p99 (and the log's latency at ranks q -+ d around each), requests by their
 * attempts, attempts by their answer, requests by how they ended, and per fault window of
 * the scenario written. `fusebox run` prints them beside as-was's; the import compares the
 * two with the tolerances of reports/breakdown.h.
 *
 * How a log's attempt reads as an answer: an answer is its status (200 when the log
 * records none); an error status is that status; a timeout, and an attempt given up when
 * its request ended (IMP_CANCELLED, as the simulation counts the attempt its client stops
 * waiting for), "timeout"; a transport error "reset"; a broken body or stream "broken".
 * How a request ended: "success" when answered; else "timeout" when it lasted the
 * request timeout fitted, "permanent" when its last attempt got a 4xx the client does not
 * retry (not 408, 409, 429), else "exhausted". A retry is an attempt after the first to
 * the provider of the attempt before it (a change of provider is a fallback).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "import/fitint.h"

typedef struct tally {
    double requests, attempts, retries, ok;
    uint64_t per_request[SIM_OBS_BUCKETS + 1];
    uint64_t status[SIM_OBS_STATUS_MAX], words[SIM_OBS_WORDS];
    uint64_t success, permanent, exhausted, timeout;
} tally;

static void answer(tally *t, const imp_attempt *a) {
    bool status = a->status >= 100 && a->status < SIM_OBS_STATUS_MAX;
    switch (a->outcome) {
    case IMP_OK:
        t->status[status ? a->status : 200]++;
        break;
    case IMP_STATUS:
        if (status)
            t->status[a->status]++;
        else
            t->words[2]++;
        break;
    case IMP_TIMEOUT:
    case IMP_CANCELLED:
        t->words[0]++;
        break;
    case IMP_RESET:
        t->words[1]++;
        break;
    default:
        t->words[2]++;
        break;
    }
}

static bool permanent(int status) {
    return status >= 400 && status < 500 && status != 408 && status != 409 && status != 429;
}

static void request(tally *t, const imp_incident *inc, const imp_request *q) {
    const imp_attempt *att = inc->log->att;
    t->requests++;
    t->attempts += q->count;
    t->per_request[q->count < SIM_OBS_BUCKETS ? q->count : SIM_OBS_BUCKETS]++;
    for (uint32_t i = q->first; i < q->first + q->count; i++) {
        answer(t, &att[i]);
        if (i > q->first && att[i].provider == att[i - 1].provider) t->retries++;
    }
    const imp_attempt *last = q->count ? &att[q->first + q->count - 1] : NULL;
    fb_time_us timeout = inc->pol.request_timeout_us;
    if (q->ok)
        t->success++;
    else if (timeout > 0 && q->end_us - q->start_us >= timeout)
        t->timeout++;
    else if (last && last->outcome == IMP_STATUS && permanent(last->status))
        t->permanent++;
    else
        t->exhausted++;
    t->ok += q->ok;
}

/* p50, p90, p99 of the latencies v[0..n) (sorted here), as seconds: the order statistics a
   run reports (rank ceil(q n)), not a value between two that no request took. */
static void latencies(cJSON *o, int64_t *v, size_t n) {
    imp_sort(v, n);
    cJSON_AddNumberToObject(o, "latency_p50", imp_rank_quantile(v, n, 0.5) / 1e6);
    cJSON_AddNumberToObject(o, "latency_p90", imp_rank_quantile(v, n, 0.9) / 1e6);
    cJSON_AddNumberToObject(o, "latency_p99", imp_rank_quantile(v, n, 0.99) / 1e6);
}

/* Around each of p50, p90, p99 of the sorted latencies v[0..n): the log's own latency at ranks
   q - d and q + d (scn_obs_rank_band), for the verdict on a quantile that sits on a cliff. */
static void ranks(cJSON *o, const int64_t *v, size_t n) {
    static const char *const names[] = {"latency_p50", "latency_p90", "latency_p99"};
    static const double q[] = {0.5, 0.9, 0.99};
    if (n == 0) return;
    cJSON *r = cJSON_AddObjectToObject(o, "latency_ranks");
    for (int i = 0; r && i < 3; i++) {
        sim_obs_rank b = scn_obs_rank_band(v, n, q[i]);
        cJSON *x = cJSON_AddObjectToObject(r, names[i]);
        cJSON_AddNumberToObject(x, "from", b.from);
        cJSON_AddNumberToObject(x, "to", b.to);
        cJSON_AddNumberToObject(x, "lo", (double)b.lo_us / 1e6);
        cJSON_AddNumberToObject(x, "hi", (double)b.hi_us / 1e6);
    }
}

static void add_count(cJSON *o, const char *key, uint64_t v) {
    if (v) cJSON_AddNumberToObject(o, key, (double)v);
}

static void maps(cJSON *o, const tally *t) {
    static const char *const words[] = {"timeout", "reset", "broken"};
    char key[16];
    cJSON *b = cJSON_AddObjectToObject(o, "attempts_per_request");
    for (int k = 0; k < SIM_OBS_BUCKETS; k++) {
        snprintf(key, sizeof key, "%d", k);
        add_count(b, key, t->per_request[k]);
    }
    add_count(o, "attempts_beyond", t->per_request[SIM_OBS_BUCKETS]);
    cJSON *s = cJSON_AddObjectToObject(o, "status");
    for (int k = 0; k < SIM_OBS_STATUS_MAX; k++) {
        snprintf(key, sizeof key, "%d", k);
        add_count(s, key, t->status[k]);
    }
    for (int k = 0; k < SIM_OBS_WORDS; k++) add_count(s, words[k], t->words[k]);
    cJSON *e = cJSON_AddObjectToObject(o, "end");
    add_count(e, "success", t->success);
    add_count(e, "permanent", t->permanent);
    add_count(e, "exhausted", t->exhausted);
    add_count(e, "timeout", t->timeout);
}

/* A fault of the scenario written: its kind (its one object member) and its span. */
static bool fault_span(const cJSON *f, const char **kind, fb_time_us *at, fb_time_us *end) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(f, "at");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(f, "for");
    fb_time_us dur = 0;
    *kind = NULL;
    for (const cJSON *it = f->child; it; it = it->next)
        if (cJSON_IsObject(it)) *kind = it->string;
    if (!cJSON_IsString(a) || !cJSON_IsString(d) || *kind == NULL) return false;
    if (scn_parse_duration(a->valuestring, at) != FB_OK) return false;
    if (scn_parse_duration(d->valuestring, &dur) != FB_OK) return false;
    *end = fb_time_add(*at, dur);
    return true;
}

/* The requests that arrived in [at, end) from the origin: the window's figures. */
static cJSON *window(const imp_incident *inc, const char *name, fb_time_us at, fb_time_us end,
                     int64_t *v) {
    cJSON *w = cJSON_CreateObject();
    double requests = 0, attempts = 0, ok = 0;
    size_t n = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        fb_time_us t = q->start_us - inc->origin_us;
        if (t < at || t >= end) continue;
        requests++;
        attempts += q->count;
        ok += q->ok;
        v[n++] = q->end_us - q->start_us;
    }
    cJSON_AddStringToObject(w, "name", name);
    cJSON_AddNumberToObject(w, "start_s", (double)at / 1e6);
    cJSON_AddNumberToObject(w, "end_s", (double)end / 1e6);
    cJSON_AddNumberToObject(w, "requests", requests);
    cJSON_AddNumberToObject(w, "attempts", attempts);
    if (n) {
        cJSON_AddNumberToObject(w, "success_rate", ok / requests);
        latencies(w, v, n);
    }
    return w;
}

/* One window per fault of the providers written in doc, named as report.json names it. */
static void windows(cJSON *o, const imp_incident *inc, const cJSON *doc, int64_t *v) {
    cJSON *arr = cJSON_AddArrayToObject(o, "windows");
    const cJSON *provs = cJSON_GetObjectItemCaseSensitive(doc, "providers");
    int count = 0;
    for (const cJSON *p = provs ? provs->child : NULL; p; p = p->next) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *faults = cJSON_GetObjectItemCaseSensitive(p, "faults");
        int k = 0;
        for (const cJSON *f = faults ? faults->child : NULL; f; f = f->next, k++) {
            const char *kind;
            fb_time_us at, end;
            if (!cJSON_IsString(name) || !fault_span(f, &kind, &at, &end)) continue;
            if (count++ == SIM_OBS_WINDOWS_MAX) return;
            char wname[96];
            snprintf(wname, sizeof wname, "%s fault %d (%s)", name->valuestring, k, kind);
            cJSON_AddItemToArray(arr, window(inc, wname, at, end, v));
        }
    }
}

cJSON *imp__observed_json(const imp_incident *inc, const cJSON *doc) {
    size_t n = inc->r1 - inc->r0, k = 0;
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    tally *t = calloc(1, sizeof *t);
    if (v == NULL || t == NULL) {
        free(v);
        free(t);
        return NULL;
    }
    for (FOR_SLICE(inc, r)) {
        request(t, inc, &inc->log->req[r]);
        v[k++] = inc->log->req[r].end_us - inc->log->req[r].start_us;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "description",
                            "what the log measured, beside as-was in fusebox run; the import "
                            "compares the two (docs/import.md, \"Fidelity\")");
    cJSON_AddStringToObject(o, "variant", IMP_AS_WAS);
    cJSON_AddNumberToObject(o, "requests", t->requests);
    cJSON_AddNumberToObject(o, "attempts", t->attempts);
    cJSON_AddNumberToObject(o, "retries", t->retries);
    cJSON_AddNumberToObject(o, "success_rate", t->requests > 0 ? t->ok / t->requests : 0);
    latencies(o, v, n);
    ranks(o, v, n);
    maps(o, t);
    windows(o, inc, doc, v);
    free(v);
    free(t);
    return o;
}
