/*
 * latency.c - a provider's latency from its answers: time to first token, time per
 * output token, error latency, and the periods it was slow; see incident.h.
 *
 * Where the log records first tokens (LiteLLM's completionStartTime of a stream) they
 * are the time to first token, and the rest of each answer over its output tokens is the
 * time per token. Otherwise an answer's duration is a line in its output tokens,
 * duration = ttft + per_token x tokens, fitted by least squares (a slope below zero, or
 * tokens that never vary, leave per_token at 0 and everything in the first token). A
 * window whose median first-token time is at least 1.5 times the whole log's (with 5
 * answers or more) is slow; runs of slow windows become `slow` faults with the factor
 * they show, and the first-token distribution is fitted to the other windows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/fitint.h"

typedef struct answer {
    fb_time_us t, d, ttft;
    int32_t tokens;
} answer;

static int by_t(const void *a, const void *b) {
    const answer *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The provider's answers (successes) in time order; *errors gets its error durations. */
static size_t answers(const imp_incident *inc, uint32_t p, answer *out, int64_t *errors,
                      size_t *nerr) {
    size_t n = 0;
    *nerr = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            if (a->provider != p) continue;
            if (a->outcome == IMP_STATUS) errors[(*nerr)++] = a->end_us - a->start_us;
            if (a->outcome != IMP_OK) continue;
            out[n++] = (answer){fit_t(inc, a), a->end_us - a->start_us, a->ttft_us, a->tokens_out};
        }
    }
    qsort(out, n, sizeof *out, by_t);
    return n;
}

/* Time per output token: from first tokens where recorded, else the least-squares slope. */
static fb_time_us per_token(imp_pfit *pf, const answer *a, size_t n) {
    size_t with_ttft = 0, m = 0;
    for (size_t i = 0; i < n; i++) with_ttft += a[i].ttft >= 0;
    pf->ttft_measured = with_ttft >= 5 && with_ttft * 2 >= n;
    double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    fb_time_us out = 0;
    for (size_t i = 0; x && y && i < n; i++) {
        if (a[i].tokens <= 0 || (pf->ttft_measured && a[i].ttft < 0)) continue;
        x[m] = (double)a[i].tokens;
        y[m++] =
            pf->ttft_measured ? (double)(a[i].d - a[i].ttft) / (double)a[i].tokens : (double)a[i].d;
    }
    if (pf->ttft_measured && m > 0) {
        int64_t *v = malloc(m * sizeof *v);
        for (size_t i = 0; v && i < m; i++) v[i] = llround(y[i]);
        if (v) imp_sort(v, m);
        out = v ? llround(imp_quantile(v, m, 0.5)) : 0;
        free(v);
    } else {
        double c = 0, b = 0;
        if (m >= 5 && imp_line(x, y, m, &c, &b) && b > 0 && c >= 0) out = llround(b);
    }
    free(x);
    free(y);
    return out;
}

/* An answer's first-token time: recorded, or its duration less the tokens' share. */
static int64_t first_token(const imp_pfit *pf, const answer *a) {
    if (pf->ttft_measured && a->ttft >= 0) return a->ttft;
    int64_t v = a->d - (a->tokens > 0 ? pf->per_token_us * a->tokens : 0);
    return v > 0 ? v : 0;
}

static double median_of(int64_t *v, size_t n) {
    imp_sort(v, n);
    return imp_quantile(v, n, 0.5);
}

/* Mark the slow windows (slow[w]); returns the whole log's median first-token time. */
static double mark_slow(const imp_pfit *pf, const answer *a, size_t n, size_t nw, bool *slow,
                        int64_t *tmp) {
    for (size_t i = 0; i < n; i++) tmp[i] = first_token(pf, &a[i]);
    double base = median_of(tmp, n);
    for (size_t w = 0, i = 0; w < nw; w++) {
        size_t k = 0;
        for (; i < n && a[i].t / pf->window_us == (fb_time_us)w; i++)
            tmp[k++] = first_token(pf, &a[i]);
        slow[w] = k >= 5 && median_of(tmp, k) >= 1.5 * base && base > 0;
    }
    return base;
}

/* Runs of slow windows into slow faults, the factor against the other windows' median. */
static void slow_faults(imp_incident *inc, imp_pfit *pf, const answer *a, size_t n,
                        const bool *slow, size_t nw, int64_t *tmp) {
    double base = pf->ttft.median;
    for (size_t w = 0; w < nw && base > 0;) {
        if (!slow[w]) {
            w++;
            continue;
        }
        size_t end = w;
        while (end < nw && slow[end]) end++;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (a[i].t / pf->window_us >= (fb_time_us)w && a[i].t / pf->window_us < (fb_time_us)end)
                tmp[k++] = first_token(pf, &a[i]);
        fb_time_us at = (fb_time_us)w * pf->window_us;
        double factor = median_of(tmp, k) / base;
        if (pf->nslow < IMP_SLOW_MAX && at < inc->duration_us && factor >= 1.2)
            pf->slow[pf->nslow++] = (imp_fault){.kind = SIM_FAULT_SLOW,
                                                .at_us = at,
                                                .for_us = (fb_time_us)(end - w) * pf->window_us,
                                                .fraction = 1,
                                                .factor = round(factor * 100) / 100,
                                                .retry_after_us = FB_TIME_NONE,
                                                .hits = (uint32_t)k,
                                                .attempts = (uint32_t)k};
        w = end;
    }
}

void fit_latency(imp_incident *inc, uint32_t p) {
    imp_pfit *pf = &inc->prov[p];
    size_t cap = pf->attempts + 1, n = 0, nerr = 0;
    answer *a = malloc(cap * sizeof *a);
    int64_t *errs = malloc(cap * sizeof *errs), *tmp = malloc(cap * sizeof *tmp);
    if (a && errs && tmp) n = answers(inc, p, a, errs, &nerr);
    pf->successes = (uint32_t)n;
    imp_sort(errs ? errs : tmp, errs ? nerr : 0);
    if (errs) pf->error = imp_fit_dist(errs, nerr);
    size_t nw = n ? (size_t)(a[n - 1].t / pf->window_us) + 1 : 0;
    bool *slow = calloc(nw + 1, sizeof *slow);
    if (n > 0 && slow && tmp) {
        pf->per_token_us = per_token(pf, a, n);
        mark_slow(pf, a, n, nw, slow, tmp);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!slow[a[i].t / pf->window_us]) tmp[k++] = first_token(pf, &a[i]);
        imp_sort(tmp, k);
        pf->ttft = imp_fit_dist(tmp, k);
        slow_faults(inc, pf, a, n, slow, nw, tmp);
    }
    free(slow);
    free(a);
    free(errs);
    free(tmp);
}
