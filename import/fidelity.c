/*
 * fidelity.c - what the logs measured, and the band the as-was simulation must fall in;
 * see incident.h and docs/import.md ("Fidelity").
 *
 * The simulation draws its own attempts from the fitted shares, so even a perfect model
 * differs from the log by sampling noise; each band is that noise (three standard
 * deviations) plus a model margin:
 *   success_rate       3 sd of a proportion over the requests, + 1/n (at p = 1, sd = 1/n)
 *   amplification      3 sd of the mean attempts per request, + 5%
 *   attempts[P]        3 sd of the sum of attempts per request on P, + 5%, at least 3
 *   latency_p50, _p99  the order statistics 3 sd of the rank (sqrt(n q (1-q))) + 1 on
 *                      either side (a distribution-free interval), widened by 5% and
 *                      at least 5 ms
 *   cost_usd           3 sd of the sum of the cost per request, + 5%; only when every
 *                      attempt that used tokens carries its cost (LiteLLM's
 *                      response_cost) and the scenario has prices: the bill the
 *                      replay must reproduce
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/fitint.h"

static imp_check *add(imp_incident *inc, const char *metric, bool duration, double logs) {
    if (inc->nchecks == IMP_CHECKS_MAX) return NULL;
    imp_check *c = &inc->checks[inc->nchecks++];
    memset(c, 0, sizeof *c);
    snprintf(c->metric, sizeof c->metric, "%s", metric);
    c->duration = duration;
    c->logs = logs;
    return c;
}

static void success_rate(imp_incident *inc) {
    double n = (double)(inc->r1 - inc->r0), ok = 0;
    for (FOR_SLICE(inc, r)) ok += inc->log->req[r].ok;
    double p = ok / n, sd = sqrt(fmax(p * (1 - p), 1 / n) / n);
    imp_check *c = add(inc, "success_rate", false, p);
    if (c == NULL) return;
    c->lo = fmax(0, p - 3 * sd - 1 / n);
    c->hi = fmin(1, p + 3 * sd + 1 / n);
    snprintf(c->why, sizeof c->why, "3 sd of a proportion over %.0f requests, + 1/n", n);
}

/* Mean and sd of the attempts per request on provider p (all providers: p < 0). */
static void per_request(const imp_incident *inc, int p, double *sum, double *sd) {
    double n = (double)(inc->r1 - inc->r0), s = 0, ss = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        double x = 0;
        for (uint32_t i = q->first; i < q->first + q->count; i++)
            x += p < 0 || inc->log->att[i].provider == p;
        s += x;
        ss += x * x;
    }
    *sum = s;
    *sd = n > 1 ? sqrt(fmax(0, (ss - s * s / n) / (n - 1))) : 0;
}

static void amplification(imp_incident *inc) {
    double n = (double)(inc->r1 - inc->r0), sum = 0, sd = 0;
    per_request(inc, -1, &sum, &sd);
    double a = sum / n, tol = 3 * sd / sqrt(n) + 0.05 * a;
    imp_check *c = add(inc, "amplification", false, a);
    if (c == NULL) return;
    c->lo = fmax(0, a - tol);
    c->hi = a + tol;
    snprintf(c->why, sizeof c->why, "3 sd of the mean attempts per request, + 5%%");
    for (uint32_t p = 0; p < inc->log->nprov; p++) {
        per_request(inc, (int)p, &sum, &sd);
        char m[80];
        snprintf(m, sizeof m, "attempts[%s]", inc->log->prov[p].name);
        double t = fmax(3, 3 * sd * sqrt(n) + 0.05 * sum);
        if ((c = add(inc, m, false, sum)) == NULL) return;
        c->lo = fmax(0, floor(sum - t));
        c->hi = ceil(sum + t);
        snprintf(c->why, sizeof c->why, "3 sd of the sum of attempts per request, + 5%%, >= 3");
    }
}

static void latency(imp_incident *inc, const char *metric, double q, const int64_t *v, size_t n) {
    double k = q * (double)(n - 1), sd = sqrt((double)n * q * (1 - q)) + 1;
    double lo_rank = fmax(0, k - 3 * sd), hi_rank = fmin((double)(n - 1), k + 3 * sd);
    double value = imp_rank_quantile(v, n, q); /* as the run reports it */
    imp_check *c = add(inc, metric, true, value);
    if (c == NULL) return;
    c->lo = fmax(0, fmin((double)v[(size_t)floor(lo_rank)] * 0.95, value - 5000));
    c->hi = fmax((double)v[(size_t)ceil(hi_rank)] * 1.05, value + 5000);
    snprintf(c->why, sizeof c->why,
             "order statistics 3 sd of the rank away, + 5%%, >= 5 ms (%zu requests)", n);
}

/*
 * The log's bill: the sum of the attempts' recorded costs. Checked only when it is whole
 * (no attempt with tokens lacks its cost) and the providers have prices (else the
 * simulation bills nothing and the check would only say so).
 */
static void cost(imp_incident *inc) {
    bool prices = false;
    for (uint32_t p = 0; p < inc->log->nprov; p++)
        prices |= inc->log->prov[p].price_in > 0 || inc->log->prov[p].price_out > 0;
    double n = (double)(inc->r1 - inc->r0), s = 0, ss = 0;
    bool any = false;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        double x = 0;
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            if (a->cost < 0 && (a->tokens_in > 0 || a->tokens_out > 0)) return;
            any |= a->cost >= 0;
            x += fmax(0, a->cost);
        }
        s += x;
        ss += x * x;
    }
    if (!any || !prices || s <= 0) return;
    double sd = n > 1 ? sqrt(fmax(0, (ss - s * s / n) / (n - 1))) : 0;
    double t = 3 * sd * sqrt(n) + 0.05 * s;
    imp_check *c = add(inc, "cost_usd", false, s);
    if (c == NULL) return;
    c->lo = fmax(0, s - t);
    c->hi = s + t;
    snprintf(c->why, sizeof c->why, "3 sd of the sum of the cost per request, + 5%%");
}

void imp__fit_checks(imp_incident *inc) {
    size_t n = inc->r1 - inc->r0, k = 0;
    int64_t *v = fit_malloc(&inc->oom, n * sizeof *v);
    if (v == NULL) return;
    for (FOR_SLICE(inc, r)) v[k++] = inc->log->req[r].end_us - inc->log->req[r].start_us;
    imp_sort(v, n);
    success_rate(inc);
    amplification(inc);
    latency(inc, "latency_p50", 0.5, v, n);
    latency(inc, "latency_p99", 0.99, v, n);
    cost(inc);
    free(v);
}

/* ---- the most likely cause of a miss (docs/import.md, "Fidelity") ---- */

/* The largest slowdown factor fitted, and its provider's index; 0 when none. */
static double slowest(const imp_incident *inc, uint32_t *prov) {
    double f = 0;
    for (uint32_t p = 0; p < inc->log->nprov; p++)
        for (uint32_t i = 0; i < inc->prov[p].nslow; i++)
            if (inc->prov[p].slow[i].factor > f) {
                f = inc->prov[p].slow[i].factor;
                *prov = p;
            }
    return f;
}

/* Attempts whose error kind was counted as the closest one (a provider's kinds capped). */
static uint32_t folded(const imp_incident *inc) {
    uint32_t n = 0;
    for (uint32_t p = 0; p < inc->log->nprov; p++) n += inc->prov[p].folded;
    return n;
}

static void retry_cause(const imp_incident *inc, char *buf, size_t len) {
    const char *mode = inc->pol.retry_after ? inc->pol.retry_after : "max (the default)";
    snprintf(buf, len,
             "the retry's Retry-After mode (%s) / attempts (%u): the inferred policy, or the "
             "fault fractions that decide how often it retries",
             mode, inc->pol.attempts);
}

static void latency_cause(const imp_incident *inc, const char *figure, bool high, char *buf,
                          size_t len) {
    uint32_t p = 0;
    double factor = slowest(inc, &p);
    bool tail = strcmp(figure, "latency_p50") != 0;
    if (tail && high && factor > 1)
        snprintf(buf, len, "the slowdown factor (fitted %.2f on %s)", factor,
                 inc->log->prov[p].name);
    else if (tail && high)
        snprintf(buf, len,
                 "the retry's waits (Retry-After mode %s, backoff) or the hang windows and "
                 "the attempt timeout",
                 inc->pol.retry_after ? inc->pol.retry_after : "max (the default)");
    else if (tail)
        snprintf(buf, len,
                 "the latency distribution's tail (time to first token, per token) or a "
                 "slowdown or hang window the fit missed");
    else
        snprintf(buf, len, "the token distribution (completion tokens) or the time to first token");
}

void imp_incident_cause(const imp_incident *inc, const char *figure, bool high, char *buf,
                        size_t len) {
    if (strncmp(figure, "latency_", 8) == 0)
        latency_cause(inc, figure, high, buf, len);
    else if (strncmp(figure, "attempts", 8) == 0 || strcmp(figure, "retries") == 0)
        retry_cause(inc, buf, len);
    else if (strcmp(figure, "status timeout") == 0 && inc->pol.request_timeout_cut)
        snprintf(buf, len,
                 "the hang windows (cancelled attempts read as hangs) and the request timeout "
                 "(%.3fs fitted) that cut them, or the attempt timeout (%.1fs fitted)",
                 (double)inc->pol.request_timeout_us / 1e6,
                 (double)inc->pol.attempt_timeout_us / 1e6);
    else if (strcmp(figure, "status timeout") == 0)
        snprintf(buf, len, "the hang windows and the attempt timeout (%.1fs fitted)",
                 (double)inc->pol.attempt_timeout_us / 1e6);
    else if (strncmp(figure, "status ", 7) == 0 && folded(inc) > 0)
        snprintf(buf, len,
                 "the error kinds fitted per provider (at most %d; %u attempts of rarer kinds "
                 "were counted as the closest kind)",
                 IMP_KINDS_MAX, folded(inc));
    else if (strncmp(figure, "status ", 7) == 0)
        snprintf(buf, len,
                 "the fault timeline: the windows and fractions fitted for %s, or the retry "
                 "that repeats them",
                 figure + 7);
    else if (strcmp(figure, "requests") == 0)
        snprintf(buf, len, "the arrivals (the slice of the log replayed)");
    else if (strncmp(figure, "end ", 4) == 0)
        snprintf(buf, len,
                 "the retry's attempts (%u) and the request timeout, or the fault fractions",
                 inc->pol.attempts);
    else
        snprintf(buf, len, "the fits (see the scenario's description)");
}
