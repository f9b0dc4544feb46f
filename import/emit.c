/*
 * emit.c - the fitted incident as a scenario (docs/scenario-format.md), with cJSON, as
 * the loader and the reports use it. Durations are written in whole microseconds or
 * milliseconds, so the loader reads back exactly what was fitted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "import/fitint.h"
#include "util/utf8.h"

static void add_duration(cJSON *o, const char *key, fb_time_us us) {
    char b[32];
    imp_duration(b, sizeof b, us);
    cJSON_AddStringToObject(o, key, b);
}

static cJSON *duration_value(double us) {
    char b[32];
    imp_duration(b, sizeof b, (fb_time_us)llround(us));
    return cJSON_CreateString(b);
}

static cJSON *scalar(double v, bool duration) {
    return duration ? duration_value(v) : cJSON_CreateNumber(round(v));
}

/* A distribution: a constant, {"lognormal": {"median", "p99"}}, {"uniform": {"min", "max"}} or
   {"empirical": {"values", "weights"}}. */
static cJSON *dist(const imp_dist *d, bool duration) {
    if (d->kind == IMP_EMPIRICAL && d->npts > 0) {
        cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "empirical");
        cJSON *v = cJSON_AddArrayToObject(e, "values"), *w = cJSON_AddArrayToObject(e, "weights");
        for (uint32_t i = 0; i < d->npts; i++) {
            cJSON_AddItemToArray(v, scalar(d->v[i], duration));
            cJSON_AddItemToArray(w, cJSON_CreateNumber(round(d->w[i] * 1e4) / 1e4));
        }
        return o;
    }
    if (d->kind == IMP_EXPONENTIAL) {
        cJSON *o = cJSON_CreateObject(), *x = cJSON_AddObjectToObject(o, "exponential");
        cJSON_AddItemToObject(x, "mean", scalar(d->mean, duration));
        return o;
    }
    double med = duration ? d->median : round(d->median), p99 = duration ? d->p99 : round(d->p99);
    if (d->kind == IMP_UNIFORM && d->max > d->min) {
        cJSON *o = cJSON_CreateObject(), *u = cJSON_AddObjectToObject(o, "uniform");
        cJSON_AddItemToObject(u, "min", scalar(d->min, duration));
        cJSON_AddItemToObject(u, "max", scalar(d->max, duration));
        return o;
    }
    if (d->kind != IMP_LOGNORMAL || med <= 0 || p99 <= med) return scalar(med, duration);
    cJSON *o = cJSON_CreateObject(), *l = cJSON_AddObjectToObject(o, "lognormal");
    cJSON_AddItemToObject(l, "median", scalar(med, duration));
    cJSON_AddItemToObject(l, "p99", scalar(p99, duration));
    return o;
}

/* ---- traffic ---- */

/* When the log's request r's attempts after its first started, from its start (before it: 0),
   into arr when not NULL; how many (at most SIM_RETRY_AT_MAX). */
static uint32_t request_retries(const imp_incident *inc, uint32_t r, cJSON *arr) {
    const imp_request *q = &inc->log->req[r];
    uint32_t n = 0;
    for (uint32_t k = 1; k < q->count && n < SIM_RETRY_AT_MAX; k++, n++) {
        int64_t t = inc->log->att[q->first + k].start_us - q->start_us;
        if (arr) cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)(t > 0 ? t : 0) / 1000.0));
    }
    return n;
}

/* Does class cf's replay carry its requests' recorded retries (some request made two attempts)? */
static bool class_retries(const imp_incident *inc, const imp_cfit *cf) {
    for (uint32_t k = 0; cf->order && k < cf->requests; k++)
        if (request_retries(inc, cf->order[k], NULL) > 0) return true;
    return false;
}

/* What the as-was replay sends at the log's times ("waits": "recorded"): RECORDED_RETRIES when a
   class's requests retried, RECORDED_TURNS when a class replays sessions' recorded turns. */
enum { RECORDED_RETRIES = 1, RECORDED_TURNS = 2 };
static unsigned recorded_times(const imp_incident *inc) {
    unsigned what = 0;
    for (uint32_t c = 0; !inc->opts.rate && c < inc->log->ncls; c++) {
        const imp_cfit *cf = &inc->cls[c];
        if (cf->requests == 0) continue;
        if (cf->turns && cf->nthink_rec > 0) what |= RECORDED_TURNS;
        if (class_retries(inc, cf)) what |= RECORDED_RETRIES;
    }
    return what;
}

static cJSON *arrivals(const imp_incident *inc, const imp_cfit *cf, cJSON *cls) {
    cJSON *a = cJSON_CreateObject();
    if (inc->opts.rate) {
        cJSON_AddNumberToObject(a, "poisson",
                                (double)cf->requests / ((double)inc->duration_us / 1e6));
        cJSON *ramp = cJSON_AddArrayToObject(cls, "ramp");
        for (uint32_t k = 0; k < cf->nramp; k++) {
            cJSON *pt = cJSON_CreateObject();
            add_duration(pt, "at", cf->ramp[k].at_us);
            cJSON_AddNumberToObject(pt, "rate", round(cf->ramp[k].rate * 1e6) / 1e6);
            cJSON_AddItemToArray(ramp, pt);
        }
        return a;
    }
    cJSON *replay = cJSON_AddObjectToObject(a, "replay");
    cJSON *at = cJSON_AddArrayToObject(replay, "at_ms");
    uint32_t n = cf->turns ? cf->nsess : cf->requests;
    for (uint32_t k = 0; k < n; k++)
        cJSON_AddItemToArray(at, cJSON_CreateNumber((double)cf->at_us[k] / 1000.0));
    if (cf->turns) { /* sessions: each start, its requests, the think time between them */
        cJSON *turns = cJSON_AddArrayToObject(replay, "turns");
        for (uint32_t k = 0; k < n; k++)
            cJSON_AddItemToArray(turns, cJSON_CreateNumber(cf->turns[k]));
        cJSON_AddItemToObject(replay, "think", dist(&cf->think, true));
        cJSON *rec = cJSON_AddArrayToObject(replay, "think_ms"); /* the log's own, in order */
        for (uint32_t k = 0; k < cf->nthink_rec; k++)
            cJSON_AddItemToArray(rec, cJSON_CreateNumber((double)cf->think_rec[k] / 1000.0));
        cJSON *when = cJSON_AddArrayToObject(replay, "turn_at_ms"); /* as-was sends them then */
        for (uint32_t k = 0; k < cf->nthink_rec; k++)
            cJSON_AddItemToArray(when, cJSON_CreateNumber((double)cf->turn_at[k] / 1000.0));
    }
    if (class_retries(inc, cf)) { /* each request's, in the replay's order: as-was retries then */
        cJSON *w = cJSON_AddArrayToObject(replay, "retry_at_ms");
        for (uint32_t k = 0; k < cf->requests; k++) {
            cJSON *one = cJSON_CreateArray();
            request_retries(inc, cf->order[k], one);
            cJSON_AddItemToArray(w, one);
        }
    }
    return a;
}

static cJSON *traffic(const imp_incident *inc) {
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t c = 0; c < inc->log->ncls; c++) {
        const imp_cfit *cf = &inc->cls[c];
        if (cf->requests == 0) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "class", inc->log->cls[c]);
        char d[200];
        snprintf(d, sizeof d, "%u requests in the log, %u answered", cf->requests, cf->ok);
        cJSON_AddStringToObject(o, "description", d);
        cJSON_AddItemToObject(o, "arrivals", arrivals(inc, cf, o));
        if (cf->prompt.known) cJSON_AddItemToObject(o, "prompt_tokens", dist(&cf->prompt, false));
        if (cf->completion.known)
            cJSON_AddItemToObject(o, "completion_tokens", dist(&cf->completion, false));
        if (cf->stream) cJSON_AddBoolToObject(o, "stream", true);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* ---- providers ---- */

/* A fault's recorded hits, each class's a string of 0 and 1 (imp_fault's rec_at). */
static void add_recorded(cJSON *k, const imp_incident *inc, const imp_fault *f) {
    cJSON *rec = cJSON_AddArrayToObject(k, "recorded");
    for (uint32_t c = 0, at = 0; rec && c < f->rec_n; at += f->rec_len[c++]) {
        char *bits = malloc((size_t)f->rec_len[c] + 1);
        if (bits == NULL) break; /* cJSON's own allocations fail the same way */
        memcpy(bits, inc->recorded.p + f->rec_at + at, f->rec_len[c]);
        bits[f->rec_len[c]] = '\0';
        cJSON_AddItemToArray(rec, cJSON_CreateString(bits));
        free(bits);
    }
}

static cJSON *fault(const imp_incident *inc, const imp_fault *f) {
    static const char *const names[] = {"outage",    "rate_limit", "hang",   "slow", "brownout",
                                        "midstream", "reset",      "policy", "flap"};
    cJSON *o = cJSON_CreateObject();
    add_duration(o, "at", f->at_us);
    add_duration(o, "for", f->for_us);
    cJSON *k = cJSON_AddObjectToObject(o, names[f->kind]);
    if (f->kind == SIM_FAULT_SLOW) {
        if (f->factor_n == 0) {
            cJSON_AddNumberToObject(k, "factor", f->factor);
        } else {
            cJSON *e = cJSON_AddObjectToObject(cJSON_AddObjectToObject(k, "factor"), "empirical");
            cJSON_AddItemToObject(e, "values",
                                  cJSON_CreateDoubleArray(f->factor_v, (int)f->factor_n));
            cJSON_AddItemToObject(e, "weights",
                                  cJSON_CreateDoubleArray(f->factor_w, (int)f->factor_n));
        }
        if (f->delay_n > 0) {
            cJSON *e = cJSON_AddObjectToObject(cJSON_AddObjectToObject(k, "delay"), "empirical");
            cJSON *v = cJSON_AddArrayToObject(e, "values");
            for (uint32_t i = 0; i < f->delay_n; i++)
                cJSON_AddItemToArray(v, duration_value(f->delay_v[i]));
            cJSON_AddItemToObject(e, "weights",
                                  cJSON_CreateDoubleArray(f->delay_w, (int)f->delay_n));
        } else if (f->delay_us > 0) {
            cJSON_AddItemToObject(k, "delay", duration_value(f->delay_us));
        }
        if (f->fraction < 1) {
            cJSON_AddNumberToObject(k, "fraction", f->fraction);
            cJSON_AddStringToObject(k, "sampling", "even");
        }
        return o;
    }
    if (f->kind == SIM_FAULT_OUTAGE) cJSON_AddNumberToObject(k, "status", f->status);
    if (f->kind == SIM_FAULT_MIDSTREAM) {
        cJSON_AddNumberToObject(k, "after_tokens", 1);
        cJSON_AddStringToObject(k, "mode", "cut");
    }
    cJSON_AddNumberToObject(k, "fraction", f->fraction);
    /* first attempts and retries each at the log's count, the retries by number where each
       had enough (docs/import.md, "Fitting") */
    bool retry_partial = f->split && f->retry_fraction < 1;
    if (f->split && f->retry_n > 1) {
        cJSON *list = cJSON_AddArrayToObject(k, "retry_fraction");
        for (uint32_t i = 0; list && i < f->retry_n; i++) {
            cJSON_AddItemToArray(list, cJSON_CreateNumber(f->retry_by[i]));
            retry_partial |= f->retry_by[i] < 1;
        }
    } else if (f->split) {
        cJSON_AddNumberToObject(k, "retry_fraction", f->retry_fraction);
    }
    /* the window's share as the log had it, not a new draw per attempt, and its hits where
       the log had them (docs/import.md) */
    if (f->fraction < 1 || retry_partial) {
        cJSON_AddStringToObject(k, "sampling", "even");
        if (f->rec_n > 0) add_recorded(k, inc, f);
    }
    if (f->retry_after_us != FB_TIME_NONE &&
        (f->kind == SIM_FAULT_OUTAGE || f->kind == SIM_FAULT_RATE_LIMIT))
        add_duration(k, "retry_after", f->retry_after_us);
    if (f->latency.known) cJSON_AddItemToObject(k, "latency", dist(&f->latency, true));
    return o;
}

static cJSON *latency(const imp_pfit *pf) {
    cJSON *l = cJSON_CreateObject();
    if (pf->ttft.known) cJSON_AddItemToObject(l, "ttft", dist(&pf->ttft, true));
    if (pf->per_token_us > 0) add_duration(l, "per_output_token", pf->per_token_us);
    if (pf->error.known) cJSON_AddItemToObject(l, "error", dist(&pf->error, true));
    return l;
}

static void provider_description(const imp_incident *inc, uint32_t p, char *buf, size_t len) {
    const imp_provider *pv = &inc->log->prov[p];
    const imp_pfit *pf = &inc->prov[p];
    char w[24];
    imp_human(w, sizeof w, pf->window_us);
    int n = snprintf(buf, len,
                     "%s in the log (%s%s%s): %u attempts, %u errors, %u answers; faults fitted "
                     "in windows of %s",
                     pv->system[0] ? pv->system : "a provider", pv->address,
                     pv->model[0] ? ", model " : "", pv->model, pf->attempts, pf->errors,
                     pf->successes, w);
    if (n > 0 && (size_t)n < len && pf->cancelled_hangs > 0) {
        char lo[24];
        imp_human(lo, sizeof lo, pf->longest_answer_us);
        n += snprintf(buf + n, len - (size_t)n,
                      "; %u attempt%s given up (cancelled: %s request ended first, unanswered) "
                      "after waiting longer than any of its answers (%s) %s counted as hangs",
                      pf->cancelled_hangs, pf->cancelled_hangs == 1 ? "" : "s",
                      pf->cancelled_hangs == 1 ? "its" : "their", lo,
                      pf->cancelled_hangs == 1 ? "is" : "are");
    }
    if (n > 0 && (size_t)n < len && pf->cancelled_left_out > 0)
        n += snprintf(buf + n, len - (size_t)n,
                      "; %s %u cancelled attempt%s %s left out (sooner than its slowest answer, "
                      "in a request another attempt answered, or with output: a slow answer, a "
                      "race lost or a hang, the log cannot tell)",
                      pf->cancelled_hangs > 0 ? "the other" : "its", pf->cancelled_left_out,
                      pf->cancelled_left_out == 1 ? "" : "s",
                      pf->cancelled_left_out == 1 ? "is" : "are");
    if (n > 0 && (size_t)n < len && !pf->ttft.known)
        snprintf(buf + n, len - (size_t)n, "; no answer: its latency is fusebox's default");
    else if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; time to first token %s",
                 pf->ttft_measured ? "as recorded" : "from a line through duration and tokens");
}

static cJSON *providers(const imp_incident *inc) {
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t p = 0; p < inc->log->nprov; p++) {
        const imp_provider *pv = &inc->log->prov[p];
        const imp_pfit *pf = &inc->prov[p];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", pv->name);
        char d[1024];
        provider_description(inc, p, d, sizeof d);
        cJSON_AddStringToObject(o, "description", d);
        if (pv->context_window) cJSON_AddNumberToObject(o, "context_window", pv->context_window);
        cJSON_AddItemToObject(o, "latency", latency(pf));
        if (pv->price_in >= 0 || pv->price_out >= 0) {
            cJSON *pr = cJSON_AddObjectToObject(o, "price");
            cJSON_AddNumberToObject(pr, "input_per_mtok", fmax(0, pv->price_in));
            cJSON_AddNumberToObject(pr, "output_per_mtok", fmax(0, pv->price_out));
        }
        cJSON *f = cJSON_AddArrayToObject(o, "faults");
        for (uint32_t i = 0; i < pf->nfaults; i++)
            cJSON_AddItemToArray(f, fault(inc, &pf->faults[i]));
        for (uint32_t i = 0; i < pf->nslow; i++) cJSON_AddItemToArray(f, fault(inc, &pf->slow[i]));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* ---- the policy ---- */

static void backoff(const imp_inferred *P, cJSON *retry) {
    if (P->backoff == FB_BACKOFF_NONE) {
        cJSON_AddStringToObject(retry, "backoff", "none");
    } else if (P->backoff == FB_BACKOFF_CONSTANT) {
        add_duration(cJSON_AddObjectToObject(retry, "backoff"), "constant", P->base_us);
    } else {
        cJSON *e =
            cJSON_AddObjectToObject(cJSON_AddObjectToObject(retry, "backoff"), "exponential");
        add_duration(e, "base", P->base_us > 0 ? P->base_us : FB_US_PER_MS);
        if (P->max_us > P->base_us) add_duration(e, "max", P->max_us);
        cJSON_AddNumberToObject(e, "multiplier", P->multiplier >= 1 ? P->multiplier : 1);
    }
    if (P->jitter == FB_JITTER_PROPORTIONAL)
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(retry, "jitter"), "proportional",
                                fmin(1, fmax(0.001, P->jitter_f)));
    else
        cJSON_AddStringToObject(retry, "jitter", P->jitter == FB_JITTER_FULL ? "full" : "none");
}

static cJSON *retry(const imp_inferred *P) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "attempts", P->attempts);
    if (P->attempts > 1) backoff(P, r);
    if (P->attempts > 1 && P->retry_after)
        cJSON_AddStringToObject(r, "retry_after", P->retry_after);
    if (P->attempt_timeout_us > 0) add_duration(r, "attempt_timeout", P->attempt_timeout_us);
    if (P->attempts > 1 && P->retry_on) {
        cJSON *on = cJSON_AddArrayToObject(r, "retry_on");
        for (uint32_t i = 0; i < P->nretry_statuses; i++)
            cJSON_AddItemToArray(on, cJSON_CreateNumber(P->retry_statuses[i]));
        if (P->retry_timeout) cJSON_AddItemToArray(on, cJSON_CreateString("timeout"));
        if (P->retry_transient) cJSON_AddItemToArray(on, cJSON_CreateString("transient"));
    }
    return r;
}

static cJSON *policy(const imp_incident *inc, const char *description) {
    const imp_inferred *P = &inc->pol;
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "description", description);
    cJSON_AddItemToObject(v, "retry", retry(P));
    if (P->breaker) {
        cJSON *b = cJSON_AddObjectToObject(v, "breaker");
        cJSON_AddNumberToObject(b, "consecutive_failures", P->consecutive ? P->consecutive : 1);
        add_duration(b, "open", P->open_us > 0 ? P->open_us : 10 * FB_US_PER_MS);
    }
    cJSON *f = cJSON_AddArrayToObject(v, "fallback");
    for (uint32_t i = 0; i < P->norder; i++)
        cJSON_AddItemToArray(f, cJSON_CreateString(inc->log->prov[P->order[i]].name));
    return v;
}

/* ---- expectations ---- */

static void bound(cJSON *arr, const imp_check *c, const char *op, double v) {
    char line[SIM_EXPECT_LEN];
    if (c->duration)
        snprintf(line, sizeof line, "%s.%s %s %.3fms", IMP_AS_WAS, c->metric, op, v / 1000.0);
    else
        snprintf(line, sizeof line, "%s.%s %s %.6g", IMP_AS_WAS, c->metric, op, v);
    cJSON_AddItemToArray(arr, cJSON_CreateString(line));
}

static cJSON *expect(const imp_incident *inc) {
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t i = 0; i < inc->nchecks; i++) {
        const imp_check *c = &inc->checks[i];
        if (c->lo > 0) bound(arr, c, ">=", c->lo);
        if (!(strcmp(c->metric, "success_rate") == 0 && c->hi >= 1)) bound(arr, c, "<=", c->hi);
    }
    return arr;
}

char *imp_incident_json(const imp_incident *inc) {
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "name", inc->opts.name ? inc->opts.name : "imported");
    cJSON_AddStringToObject(doc, "description", inc->notes.p ? inc->notes.p : "");
    char src[400];
    snprintf(src, sizeof src, "the logs in %s", inc->log->file);
    cJSON_AddStringToObject(doc, "incident", src);
    cJSON_AddNumberToObject(doc, "seed", (double)(inc->opts.seed ? inc->opts.seed : 1));
    add_duration(doc, "duration", inc->duration_us);
    cJSON_AddItemToObject(doc, "traffic", traffic(inc));
    cJSON *pods = cJSON_AddObjectToObject(doc, "pods");
    cJSON_AddNumberToObject(pods, "workers", inc->pol.workers);
    add_duration(pods, "request_timeout", inc->pol.request_timeout_us);
    cJSON_AddItemToObject(doc, "providers", providers(inc));
    cJSON *variants = cJSON_AddObjectToObject(doc, "variants");
    /* as-was sends what the log recorded at the log's times; yours draws them (its
       description says so: the two differ by those draws before anything is edited) */
    static const char *const said[] = {
        "",
        ". Its retries start when the log's did (\"waits\": \"recorded\": "
        "arrivals.replay.retry_at_ms; a fallback to another provider goes at once).",
        ". Its sessions' requests start when the log's did (\"waits\": \"recorded\": "
        "arrivals.replay.turn_at_ms).",
        ". Its retries and its sessions' requests start when the log's did (\"waits\": "
        "\"recorded\": arrivals.replay.retry_at_ms, turn_at_ms; a fallback to another provider "
        "goes at once).",
    };
    static const char *const yours_said[] = {
        "",
        " Its retries wait as its retry policy draws, as-was's when the log's did, so the two "
        "differ by those draws before you change anything.",
        " Its sessions' users think as recorded from each answer, as-was's send each request "
        "when the log's did, so the two differ by the latencies drawn before you change "
        "anything.",
        " Its retries wait as its retry policy draws and its sessions' users think as recorded "
        "from each answer, where as-was sends both when the log's did, so the two differ by "
        "those draws before you change anything.",
    };
    unsigned what = recorded_times(inc);
    const char *ev = inc->evidence.p ? inc->evidence.p : "";
    size_t n = strlen(ev); /* the evidence's last item ends with "; " or "." */
    while (what && n > 0 && (ev[n - 1] == ' ' || ev[n - 1] == ';' || ev[n - 1] == '.')) n--;
    const char *tail = n > 0 ? said[what] : said[what] + (what ? 2 : 0); /* no evidence */
    char *d = malloc(n + strlen(tail) + 1);
    if (d) {
        memcpy(d, ev, n);
        memcpy(d + n, tail, strlen(tail) + 1);
    }
    cJSON *was = policy(inc, d ? d : ev);
    free(d);
    if (what) cJSON_AddStringToObject(was, "waits", "recorded");
    cJSON_AddItemToObject(variants, IMP_AS_WAS, was);
    static const char mine[] = "A copy of as-was for you to edit: change its retry, breaker or "
                               "fallback and compare the two with fusebox run.";
    char *y = malloc(sizeof mine + strlen(yours_said[what]));
    if (y) {
        memcpy(y, mine, sizeof mine - 1);
        memcpy(y + sizeof mine - 1, yours_said[what], strlen(yours_said[what]) + 1);
    }
    cJSON_AddItemToObject(variants, "yours", policy(inc, y ? y : mine));
    free(y);
    cJSON_AddItemToObject(doc, "expect", expect(inc));
    cJSON_AddItemToObject(doc, "observed", imp__observed_json(inc, doc));
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    /* names, models and addresses come from the log as they are, and a description cut to
       its buffer may end inside a character; the loader takes valid UTF-8 only */
    if (text) util_utf8_fix(text);
    return text;
}
