/*
 * infer.c - the policy as it was, read from what the attempts of each request did, and
 * the evidence for every setting; see incident.h and docs/import.md ("The policy as it
 * was").
 *
 *   attempts    the most consecutive attempts one request made on one provider
 *   backoff     the gaps between a failure's end and the next attempt on the same
 *               provider, by retry number: each level's range (the extremes widened by
 *               one spacing, the unbiased estimate for a uniform's ends) gives the delay
 *               and the jitter (a range from ~0: full; tight: none; else proportional)
 *   Retry-After gaps after an answer that carried one (recorded, or inferred from the
 *               gaps): waited as is, the larger of it and the backoff, or ignored -
 *               whichever predicts the gaps best
 *   timeout     attempts that timed out after the same time: the attempt timeout
 *   retry_on    each error kind retried or not, where attempts were left, against the
 *               default table (core/classify.h); written only where they differ
 *   fallback    which provider each request tried before which
 *   breaker     runs of requests that skipped the first provider (or made no call) while
 *               it was failing: the failures before each run, and the time to the probe
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/classify.h"
#include "import/fitint.h"

#define LEVELS 8

typedef struct gap {
    uint32_t n;    /* retry number: 1 for the first retry on the provider */
    uint8_t kind;  /* the failure's kind: index in scan.t */
    bool excluded; /* waited for a Retry-After, not for the backoff */
    fb_time_us gap, retry_after_us;
} gap;

typedef struct tally {
    uint8_t outcome;
    int16_t status;
    uint32_t retried, given_up;
} tally;

#define TALLIES 32

typedef struct scan {
    gap *g;
    size_t ng;
    tally t[TALLIES];
    fb_time_us ra[TALLIES]; /* a Retry-After inferred from the gaps after kind k; -1 none */
    uint32_t nt;
    uint32_t per_request[LEVELS + 2]; /* requests by attempts made (last: more) */
    uint32_t max_run;
} scan;

static fb_time_us ms(double us) {
    return (fb_time_us)llround(us / 1000) * FB_US_PER_MS;
}

static bool failed(const imp_attempt *a) {
    return a->outcome != IMP_OK && a->outcome != IMP_CANCELLED;
}

static const char *kind_name(const tally *t, char *buf, size_t len) {
    static const char *const names[] = {"ok", "", "timeout", "reset", "broken", "cancelled"};
    if (t->outcome == IMP_STATUS)
        snprintf(buf, len, "%d", t->status);
    else
        snprintf(buf, len, "%s", names[t->outcome]);
    return buf;
}

/* ---- the chain ---- */

static void chain_order(imp_incident *inc) {
    const imp_log *log = inc->log;
    uint32_t before[SIM_PROVIDERS_MAX][SIM_PROVIDERS_MAX] = {{0}}, first[SIM_PROVIDERS_MAX] = {0};
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &log->req[r];
        bool seen[SIM_PROVIDERS_MAX] = {false};
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            uint8_t p = log->att[i].provider;
            if (i == q->first) first[p]++;
            for (uint32_t o = 0; o < log->nprov && !seen[p]; o++) before[o][p] += seen[o];
            seen[p] = true;
        }
    }
    imp_inferred *P = &inc->pol;
    P->norder = log->nprov;
    for (uint32_t i = 0; i < log->nprov; i++) P->order[i] = (uint8_t)i;
    for (uint32_t i = 1; i < P->norder; i++)
        for (uint32_t k = i; k > 0; k--) {
            uint8_t a = P->order[k - 1], b = P->order[k];
            bool swap = before[b][a] > before[a][b] ||
                        (before[b][a] == before[a][b] &&
                         (first[b] > first[a] ||
                          (first[b] == first[a] && inc->prov[b].attempts > inc->prov[a].attempts)));
            if (!swap) break;
            P->order[k - 1] = b;
            P->order[k] = a;
        }
}

/* ---- what each request's attempts did ---- */

static tally *tally_of(scan *S, const imp_attempt *a) {
    for (uint32_t i = 0; i < S->nt; i++)
        if (S->t[i].outcome == a->outcome && S->t[i].status == a->status) return &S->t[i];
    if (S->nt == TALLIES) return NULL;
    S->t[S->nt] = (tally){a->outcome, a->status, 0, 0};
    return &S->t[S->nt++];
}

/* The longest run of attempts on one provider, and requests by attempts made. An attempt
   that says it is the k-th resend (http.request.resend_count) while the trace holds fewer than
   k attempts of its request before it ends a run of k + 1 at least: the ones missing were its
   own client's resends. Where the trace holds them all, the spans say the runs already (and a
   count that goes on across a fallback, as fusebox live's does, is not one provider's run). */
static void runs(const imp_incident *inc, scan *S) {
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        S->per_request[q->count <= LEVELS ? q->count : LEVELS + 1]++;
        uint32_t run = 0;
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            bool same = i > q->first && a->provider == inc->log->att[i - 1].provider;
            run = same ? run + 1 : 1;
            if (a->resend >= 0 && !inc->log->hidden_attempts &&
                (uint32_t)a->resend > i - q->first && (uint32_t)a->resend + 1 > run)
                run = (uint32_t)a->resend + 1;
            if (run > S->max_run) S->max_run = run;
        }
    }
}

/* Gaps before retries, and per error kind: retried, or not while attempts were left. */
static void retries(const imp_incident *inc, scan *S) {
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        uint32_t run = 0;
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            bool same = i > q->first && a->provider == inc->log->att[i - 1].provider;
            run = same ? run + 1 : 1;
            if (!failed(a)) continue;
            const imp_attempt *next = i + 1 < q->first + q->count ? a + 1 : NULL;
            tally *t = tally_of(S, a);
            if (next && next->provider == a->provider && t) {
                t->retried++;
                S->g[S->ng++] = (gap){run, (uint8_t)(t - S->t), false, next->start_us - a->end_us,
                                      a->retry_after_us};
            } else if (run < S->max_run && t) {
                t->given_up++;
            }
        }
    }
}

/* ---- backoff ---- */

typedef struct level {
    size_t k, late; /* gaps, and those left out as late */
    double lo, hi;
} level;

/*
 * The range of the gaps before retry n that waited for the backoff. A gap can only be
 * longer than the delay the client chose (its event loop ran late, a connection was slow
 * to open), never shorter: the gaps above the upper fence, the third quartile plus 1.5
 * times the interquartile range (at least a tenth of the median), are left out, with 20
 * gaps or more. A uniform jitter never reaches that fence (it lies half the range above
 * the top), so only late gaps do: three of 60 late by 400 ms made openai-node's 375-500 ms
 * a backoff of 615 ms with 40% jitter where it is 437 ms with 14% (test_import.c).
 */
static level level_of(const gap *g, size_t ng, uint32_t n, int64_t *tmp) {
    level L = {0, 0, 0, 0};
    for (size_t i = 0; i < ng; i++)
        if (g[i].n == n && !g[i].excluded) tmp[L.k++] = g[i].gap;
    if (L.k == 0) return L;
    imp_sort(tmp, L.k);
    if (L.k >= 20) {
        double q1 = (double)tmp[L.k / 4], q3 = (double)tmp[3 * L.k / 4];
        double fence = q3 + fmax(1.5 * (q3 - q1), 0.1 * (double)tmp[L.k / 2]);
        while (L.k > 0 && (double)tmp[L.k - 1] > fence) L.k--, L.late++;
    }
    double lo = (double)tmp[0], hi = (double)tmp[L.k - 1];
    double spacing = L.k > 1 ? (hi - lo) / (double)(L.k - 1) : 0;
    L.lo = lo - spacing > 0 ? lo - spacing : 0;
    L.hi = hi + spacing;
    return L;
}

static void describe_levels(imp_incident *inc, const level *L) {
    util_buf_printf(&inc->evidence, " Gaps from a failure to the retry on the same provider:");
    for (uint32_t n = 1; n <= LEVELS; n++) {
        if (L[n].k == 0) continue;
        char a[24], b[24];
        imp_human(a, sizeof a, (int64_t)L[n].lo);
        imp_human(b, sizeof b, (int64_t)L[n].hi);
        util_buf_printf(&inc->evidence,
                        " retry %u: %s to %s (%zu gaps, ends widened by one spacing", n, a, b,
                        L[n].k);
        if (L[n].late)
            util_buf_printf(&inc->evidence,
                            "; %zu later than the third quartile by 1.5 times the "
                            "interquartile range left out, a client that ran late",
                            L[n].late);
        util_buf_printf(&inc->evidence, ");");
    }
}

/* The delay before each retry and its jitter, from the gaps' ranges. */
static void backoff(imp_incident *inc, const scan *S, int64_t *tmp) {
    imp_inferred *P = &inc->pol;
    level L[LEVELS + 1];
    for (uint32_t n = 1; n <= LEVELS; n++) L[n] = level_of(S->g, S->ng, n, tmp);
    P->backoff = FB_BACKOFF_EXPONENTIAL;
    P->multiplier = 2;
    if (L[1].k == 0) {
        util_buf_printf(&inc->evidence, " No retry waited for a backoff of its own: the backoff is "
                                        "unknown (fusebox's default).");
        P->base_us = 500 * FB_US_PER_MS;
        return;
    }
    describe_levels(inc, L);
    double f = (L[1].hi - L[1].lo) / (L[1].hi + L[1].lo);
    bool full = L[1].k >= 5 && L[1].lo < 0.1 * L[1].hi;
    P->jitter = L[1].hi < 2000 ? FB_JITTER_NONE
                : full         ? FB_JITTER_FULL
                : f < 0.03     ? FB_JITTER_NONE
                               : FB_JITTER_PROPORTIONAL;
    P->jitter_f = round(f * 1000) / 1000;
    double d[LEVELS + 1];
    for (uint32_t n = 1; n <= LEVELS; n++) d[n] = full ? L[n].hi : (L[n].lo + L[n].hi) / 2;
    P->base_us = ms(d[1]);
    if (L[1].hi < 2000) {
        P->backoff = FB_BACKOFF_NONE;
        util_buf_printf(&inc->evidence, " The retries came at once: no backoff.");
    } else if (S->max_run <= 2 || (L[2].k >= 2 && d[2] / d[1] < 1.15)) {
        P->backoff = FB_BACKOFF_CONSTANT;
        util_buf_printf(&inc->evidence, " %s: a constant delay.",
                        S->max_run <= 2 ? "One retry at most"
                                        : "The second retry waited as the first");
    } else if (L[2].k >= 2) {
        P->multiplier = round(d[2] / d[1] * 100) / 100;
        if (L[3].k >= 2 && d[3] < 0.85 * d[2] * P->multiplier) P->max_us = ms(d[3]);
        util_buf_printf(&inc->evidence,
                        " Exponential: each retry waited %.2f times the one before%s.",
                        P->multiplier, P->max_us ? ", up to a cap" : "");
    } else {
        util_buf_printf(&inc->evidence,
                        " Only first retries waited for a backoff: exponential with "
                        "the multiplier 2 assumed.");
    }
}

/* The backoff fitted before retry n (its middle; half the top with full jitter). */
static double backoff_at(const imp_inferred *P, uint32_t n) {
    if (P->backoff == FB_BACKOFF_NONE) return 0;
    double d = (double)P->base_us;
    for (uint32_t k = 1; P->backoff == FB_BACKOFF_EXPONENTIAL && k < n; k++) d *= P->multiplier;
    if (P->max_us > 0 && d > (double)P->max_us) d = (double)P->max_us;
    return P->jitter == FB_JITTER_FULL ? d / 2 : d;
}

/* The Retry-After a gap waited for, recorded or inferred (-1 none). */
static fb_time_us gap_hint(const scan *S, const gap *g) {
    return g->retry_after_us >= 0 ? g->retry_after_us : S->ra[g->kind];
}

/*
 * What the retries did with a Retry-After, from the gaps after the answers that carried
 * one (recorded, or inferred from the gaps): each mode predicts every gap - the header as
 * is, the larger of the header and the fitted backoff (`max`), the backoff alone
 * (`ignore`) - and the one whose predictions miss the gaps by the least (the mean of
 * |gap - predicted| / predicted: where two modes predict the same gap they miss it alike,
 * so the gaps where they differ decide, however few; a median would not see them) is the
 * mode. Where as is and max predict the same (the header never below the backoff), as is:
 * what openai-node (6.49.0) and @anthropic-ai/sdk (0.137.0) do with the
 * header (client.js retryRequest: retry-after-ms, else retry-after, waited as given).
 * NULL when no gap followed a Retry-After.
 */
static const char *retry_after_mode(imp_incident *inc, const scan *S, int64_t *tmp) {
    static const char *const modes[] = {"as_is", "max", "ignore"};
    size_t n = 0, recorded = 0;
    double *miss = fit_malloc(&inc->oom, (S->ng + 1) * 3 * sizeof *miss);
    if (miss == NULL) return NULL;
    for (size_t i = 0; i < S->ng; i++) {
        const gap *g = &S->g[i];
        fb_time_us h = gap_hint(S, g);
        if (h < 0) continue;
        recorded += g->retry_after_us >= 0;
        double b = backoff_at(&inc->pol, g->n), pred[3] = {(double)h, fmax((double)h, b), b};
        for (int m = 0; m < 3; m++)
            miss[(size_t)m * S->ng + n] = fabs((double)g->gap - pred[m]) / fmax(pred[m], 1000);
        tmp[n++] = g->gap;
    }
    if (n == 0) {
        free(miss);
        return NULL;
    }
    imp_sort(tmp, n);
    double gap_med = imp_quantile(tmp, n, 0.5), score[3];
    for (int m = 0; m < 3; m++) {
        score[m] = 0;
        for (size_t k = 0; k < n; k++) score[m] += miss[(size_t)m * S->ng + k] / (double)n;
    }
    size_t k = 0;
    for (size_t i = 0; i < S->ng; i++)
        if (gap_hint(S, &S->g[i]) >= 0) tmp[k++] = gap_hint(S, &S->g[i]);
    imp_sort(tmp, k);
    double hint_med = imp_quantile(tmp, k, 0.5);
    int best = 0;
    for (int m = 1; m < 3; m++)
        if (score[m] < score[best] - 1e-9) best = m;
    inc->pol.ra_gaps = (uint32_t)n;
    inc->pol.ra_gap_us = llround(gap_med);
    inc->pol.ra_hint_us = llround(hint_med);
    for (int m = 0; m < 3; m++) inc->pol.ra_miss[m] = score[m];
    char a[24], b[24];
    imp_human(a, sizeof a, (int64_t)gap_med);
    imp_human(b, sizeof b, (int64_t)hint_med);
    util_buf_printf(&inc->evidence,
                    " Retry-After: %zu retries followed an answer with one (%zu recorded, %zu "
                    "inferred); their median gap %s against a median header of %s. The gaps miss "
                    "(mean of |gap - predicted| / predicted) by %.0f%% as the header as is, %.0f%% "
                    "as the larger of header and backoff, %.0f%% as the backoff alone: retry_after "
                    "%s%s.",
                    n, recorded, n - recorded, a, b, score[0] * 100, score[1] * 100, score[2] * 100,
                    modes[best],
                    best == 0 && score[1] <= score[0] + 1e-9
                        ? " (as is and max predict the same here: as is, what openai-node and the "
                          "Anthropic SDK do)"
                        : "");
    free(miss);
    return modes[best];
}

/* Leave the gaps after a recorded Retry-After out of the backoff (they waited for it, or
   for the larger of it and the backoff; retry_after_mode decides which, after the backoff). */
static void exclude_recorded(scan *S) {
    for (size_t i = 0; i < S->ng; i++) S->g[i].excluded |= S->g[i].retry_after_us >= 0;
}

/* The median gap before retry n after kind k (Retry-After not recorded); false when < 2. */
static bool kind_level(const scan *S, uint32_t k, uint32_t n, int64_t *tmp, double *med) {
    size_t c = 0;
    for (size_t i = 0; i < S->ng; i++)
        if (S->g[i].kind == k && S->g[i].n == n && S->g[i].retry_after_us < 0)
            tmp[c++] = S->g[i].gap;
    imp_sort(tmp, c);
    *med = imp_quantile(tmp, c, 0.5);
    return c >= 2;
}

/* How kind k's gaps change with the retry number: 1 grows, 0 flat, -1 cannot tell. */
static int kind_shape(const scan *S, uint32_t k, int64_t *tmp, double *flat) {
    double lo = INFINITY, hi = 0, m = 0, first = -1, second = -1;
    int levels = 0;
    for (uint32_t n = 1; n <= LEVELS; n++) {
        if (!kind_level(S, k, n, tmp, &m)) continue;
        levels++;
        lo = fmin(lo, m);
        hi = fmax(hi, m);
        if (first < 0)
            first = m;
        else if (second < 0)
            second = m;
    }
    *flat = (lo + hi) / 2;
    if (levels < 2) return -1;
    if (hi <= lo * 1.12) return 0;
    return second >= first * 1.15 ? 1 : -1;
}

/*
 * A Retry-After the log does not record, seen in the gaps: after one kind of failure the
 * retries waited the same whatever their number, while after another they grew (the
 * backoff), or the first retry waited another time. Those gaps then say nothing of the
 * backoff. With one kind alone a constant backoff and a Retry-After look alike: nothing
 * is inferred.
 */
static void inferred_retry_after(imp_incident *inc, scan *S, int64_t *tmp) {
    int shape[TALLIES];
    double flat[TALLIES], first[TALLIES];
    bool growing = false;
    for (uint32_t k = 0; k < S->nt; k++) {
        S->ra[k] = -1;
        shape[k] = kind_shape(S, k, tmp, &flat[k]);
        growing |= shape[k] == 1;
        if (!kind_level(S, k, 1, tmp, &first[k])) first[k] = -1;
    }
    for (uint32_t k = 0; k < S->nt; k++) {
        bool other = growing; /* or another kind's first retry waited another time */
        for (uint32_t j = 0; j < S->nt; j++)
            other |= j != k && first[j] > 0 && fabs(first[j] - flat[k]) > 0.25 * flat[k];
        if (shape[k] != 0 || !other) continue;
        S->ra[k] = ms(flat[k]);
        inc->pol.retry_after_inferred++;
        for (size_t i = 0; i < S->ng; i++) S->g[i].excluded |= S->g[i].kind == k;
        char a[24], b[16];
        imp_human(a, sizeof a, S->ra[k]);
        util_buf_printf(
            &inc->evidence,
            " After %s the retries waited %s whatever their number (within 12%%), "
            "while after others the wait grew or differed: a Retry-After of %s that the log does "
            "not record, inferred and written on those faults.",
            kind_name(&S->t[k], b, sizeof b), a, a);
    }
}

/* The inferred Retry-After onto the faults of that kind that have none recorded. */
static void patch_faults(imp_incident *inc, const scan *S) {
    for (uint32_t k = 0; k < S->nt; k++) {
        if (S->ra[k] < 0) continue;
        for (uint32_t p = 0; p < inc->log->nprov; p++)
            for (uint32_t f = 0; f < inc->prov[p].nfaults; f++) {
                imp_fault *x = &inc->prov[p].faults[f];
                bool status = x->kind == SIM_FAULT_OUTAGE || x->kind == SIM_FAULT_RATE_LIMIT;
                if (status && x->status == S->t[k].status && x->retry_after_us == FB_TIME_NONE)
                    x->retry_after_us = S->ra[k];
            }
    }
}

/* ---- timeouts, statuses retried ---- */

/* How a client's timer shows in the durations it cut (sorted, k of them): TIMER_TIGHT when p10
   to p90 are within a tenth of the median (+20 ms), set at the median; TIMER_LATE when 10 or
   more have their lower half that tight, set at p10 (a timer fires late, never early: a client
   whose event loop ran late, the corpus' `hangs` on a busy machine: 2,028 ms at p10, 2,157 at
   p50, 2,464 at p90 for its 2 s, times out at its lower edge, the later ones its lateness);
   else TIMER_NONE. */
typedef enum { TIMER_NONE, TIMER_TIGHT, TIMER_LATE } timer_fit;

typedef struct timer_shape {
    double med, p10, spread;
} timer_shape;

static timer_fit fixed_timer(const int64_t *v, size_t k, timer_shape *t) {
    t->med = imp_quantile(v, k, 0.5);
    t->p10 = imp_quantile(v, k, 0.1);
    t->spread = imp_quantile(v, k, 0.9) - t->p10;
    if (k >= 2 && t->spread <= t->med / 10 + 20000) return TIMER_TIGHT;
    if (k >= 10 && t->med - t->p10 <= t->p10 / 10 + 20000) return TIMER_LATE;
    return TIMER_NONE;
}

static void attempt_timeout(imp_incident *inc, int64_t *tmp) {
    size_t k = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        for (uint32_t i = q->first; i < q->first + q->count; i++)
            if (inc->log->att[i].outcome == IMP_TIMEOUT)
                tmp[k++] = inc->log->att[i].end_us - inc->log->att[i].start_us;
    }
    if (k == 0) return;
    imp_sort(tmp, k);
    timer_shape t;
    timer_fit fit = fixed_timer(tmp, k, &t);
    char a[24];
    imp_human(a, sizeof a, (int64_t)(fit == TIMER_LATE ? t.p10 : t.med));
    if (fit == TIMER_TIGHT) {
        inc->pol.attempt_timeout_us = ms(t.med);
        util_buf_printf(&inc->evidence,
                        " %zu attempts timed out after %s (p10 to p90 within %.0f ms): "
                        "attempt_timeout.",
                        k, a, t.spread / 1000);
    } else if (fit == TIMER_LATE) {
        inc->pol.attempt_timeout_us = ms(t.p10);
        util_buf_printf(&inc->evidence,
                        " %zu attempts timed out after %s at p10, the median %.0f ms later and "
                        "the rest later still (a timer fires late, never early: the client's "
                        "event loop ran late): attempt_timeout.",
                        k, a, (t.med - t.p10) / 1000);
    } else {
        util_buf_printf(&inc->evidence,
                        " %zu attempts timed out after varying times (median %s): no "
                        "fixed attempt timeout; the request timeout bounds them.",
                        k, a);
    }
}

/* An outcome as the default table (core/classify.h) reads it: what as-was's policies do. */
static fb_class classified(uint8_t outcome, int16_t status) {
    fb_classifier c;
    fb_classify_init(&c, NULL);
    fb_reply rep = {.status = outcome == IMP_OK ? 200 : status, .should_retry = -1};
    if (outcome == IMP_TIMEOUT) rep.transport = FB_TRANSPORT_TIMEOUT;
    if (outcome == IMP_RESET) rep.transport = FB_TRANSPORT_RESET;
    if (outcome == IMP_BROKEN) rep.status = 200, rep.transport = FB_TRANSPORT_RESET;
    return fb_classify(&c, &rep);
}

static bool default_retries(const tally *t) {
    return classified(t->outcome, t->status).retryable;
}

static void retry_on(imp_incident *inc, const scan *S) {
    imp_inferred *P = &inc->pol;
    char b[16];
    for (uint32_t i = 0; i < S->nt; i++) {
        const tally *t = &S->t[i];
        /* retried once is retryable: a failure not retried with attempts left is then the
           work of something else (a breaker that opened, a budget, a deadline) */
        bool retried = t->retried > 0;
        util_buf_printf(&inc->evidence,
                        " %s: retried %u times, not retried %u times with attempts left%s;",
                        kind_name(t, b, sizeof b), t->retried, t->given_up,
                        retried != default_retries(t) ? " (unlike the default table)" : "");
        P->retry_on |= retried != default_retries(t) && t->retried + t->given_up > 0;
        if (!retried) continue;
        if (t->outcome == IMP_STATUS && P->nretry_statuses < SIM_RETRY_ON_MAX)
            P->retry_statuses[P->nretry_statuses++] = t->status;
        P->retry_timeout |= t->outcome == IMP_TIMEOUT;
        P->retry_transient |= t->outcome == IMP_RESET || t->outcome == IMP_BROKEN;
    }
    if (P->retry_on)
        util_buf_printf(&inc->evidence, " retry_on lists what was retried (a status never seen is "
                                        "then not retried).");
}

/* ---- the breaker ---- */

/*
 * A result on the primary as as-was's breaker counts it (the default table, as the
 * scenario's breaker is written): a 429 and a cancelled attempt count nowhere (IGNORE), a
 * 4xx is a success, a 5xx, a timeout or a reset a failure.
 */
typedef struct prim {
    fb_time_us start, end;
    fb_effect effect;
} prim;

/* In end order; answers seen at the same instant (one poll) failures first. */
static int by_end(const void *a, const void *b) {
    const prim *x = a, *y = b;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    bool fx = x->effect == FB_EFFECT_FAILURE, fy = y->effect == FB_EFFECT_FAILURE;
    if (fx != fy) return fx ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static fb_effect effect_of(const imp_attempt *a) {
    if (a->outcome == IMP_CANCELLED) return FB_EFFECT_IGNORE; /* the breaker's cancelled_as */
    fb_effect e = classified(a->outcome, a->status).effect;
    return e == FB_EFFECT_CANCELLED ? FB_EFFECT_IGNORE : e;
}

/* Does request r skip the first provider (try another first, or make no call at all)? */
static bool skips(const imp_incident *inc, size_t r, uint8_t primary) {
    const imp_request *q = &inc->log->req[r];
    for (uint32_t i = q->first; i < q->first + q->count; i++)
        if (inc->log->att[i].provider == primary) return false;
    return true;
}

static size_t primary_attempts(const imp_incident *inc, uint8_t primary, prim *out) {
    size_t n = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            if (a->provider == primary) out[n++] = (prim){a->start_us, a->end_us, effect_of(a)};
        }
    }
    qsort(out, n, sizeof *out, by_end);
    return n;
}

/* What a run of skipping requests says of the breaker. */
typedef struct opening {
    bool fresh;    /* it had closed since the previous run: this is a new opening */
    int64_t since; /* fresh: when it closed (INT64_MIN: never opened before) */
    int64_t probe; /* not fresh: the end of the last failed probe; -1 none */
    size_t len;    /* fresh: the longest run of failures in the look before the run */
    size_t first;  /* ... the index of its first result */
    size_t closed; /* fresh: the failures in a row when it last admitted an attempt */
} opening;

/*
 * The run of failures that tripped the breaker before a run of skipping requests that
 * starts at t, counted as the breaker counted them since it closed: results of attempts
 * admitted before that are another generation's, which it drops. o->len is the longest run
 * among the results that came in the `look` before t (results of attempts still in flight
 * when it tripped come in after it, so that run is at least its threshold); o->closed is
 * the run when the breaker last let an attempt through before t, shorter than the
 * threshold since it was still closed then. Answers seen at one instant (delivered in one
 * poll) came in an order the trace does not keep: o->closed reads their failures first
 * and an admission at that instant before them (each event due then ran before them), the
 * least the run can have been; o->len the most.
 */
static void tripping_run(const prim *pa, size_t n, int64_t t, int64_t look, opening *o) {
    int64_t admitted = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (pa[i].start >= o->since && pa[i].start < t && pa[i].start > admitted)
            admitted = pa[i].start;
    size_t least = 0, most = 0, from = 0;
    for (size_t i = 0, j; i < n && pa[i].end < t; i = j) {
        size_t nf = 0, ns = 0;
        for (j = i; j < n && pa[j].end == pa[i].end; j++) {
            if (pa[j].start < o->since) continue;
            nf += pa[j].effect == FB_EFFECT_FAILURE;
            ns += pa[j].effect == FB_EFFECT_SUCCESS;
        }
        least = ns ? 0 : least + nf;
        if (pa[i].end < admitted) o->closed = least;
        if (most == 0) from = i;
        if (most + nf > o->len && pa[i].end >= t - look) {
            o->len = most + nf;
            o->first = from;
        }
        most = ns ? nf : most + nf; /* the successes read first, the failures after them */
        if (ns) from = i;
    }
}

/* The end of the k-th failure counted from index first; -1 when there are fewer. */
static int64_t nth_failure(const prim *pa, size_t n, size_t first, int64_t since, size_t k) {
    for (size_t i = first; i < n && k > 0; i++)
        if (pa[i].start >= since && pa[i].effect == FB_EFFECT_FAILURE && --k == 0) return pa[i].end;
    return -1;
}

/* The first attempt on the primary that started at or after t; -1 when none. */
static int64_t probe_after(const prim *pa, size_t n, int64_t t) {
    int64_t first = -1;
    for (size_t i = 0; i < n; i++)
        if (pa[i].start >= t && (first < 0 || pa[i].start < first)) first = pa[i].start;
    return first;
}

/* The starts of the runs of requests that skipped the primary; their count in *skipped. */
static size_t skip_runs(const imp_incident *inc, uint8_t primary, int64_t *starts, size_t cap,
                        size_t *skipped) {
    size_t runs = 0;
    *skipped = 0;
    for (size_t r = inc->r0; r < inc->r1; r++) {
        if (!skips(inc, r, primary)) continue;
        ++*skipped;
        if ((r == inc->r0 || !skips(inc, r - 1, primary)) && runs < cap)
            starts[runs++] = inc->log->req[r].start_us;
    }
    return runs;
}

/*
 * Run k of skipping requests, *episode the start of the run that opened the breaker last.
 * The run is a fresh opening when an attempt admitted since then (a probe, or a call
 * after it) was answered before the run began: the breaker had closed. A probe still out
 * when requests skip (half-open admits one) is no close: its answer came later. Otherwise
 * it is the same opening going on (its probes failed); o->probe gets the last failed
 * probe's end, when it opened again.
 */
static opening read_run(const prim *pa, size_t n, const int64_t *starts, size_t k, int64_t look,
                        int64_t *episode) {
    opening o = {k == 0, INT64_MIN, -1, 0, 0, 0};
    for (size_t i = 0; k > 0 && i < n; i++) {
        if (pa[i].start >= *episode && pa[i].end < starts[k] && pa[i].effect == FB_EFFECT_SUCCESS &&
            (!o.fresh || pa[i].end < o.since)) {
            o.fresh = true;
            o.since = pa[i].end;
        }
        bool since_last = pa[i].start >= starts[k - 1] && pa[i].start < starts[k];
        if (since_last && pa[i].effect == FB_EFFECT_FAILURE && pa[i].end > o.probe)
            o.probe = pa[i].end;
    }
    if (!o.fresh) return o;
    *episode = starts[k];
    tripping_run(pa, n, starts[k], look, &o);
    return o;
}

/*
 * The threshold: at least one more than the failures in a row when the breaker last let an
 * attempt through before a fresh opening, at most the run of failures before it (the
 * lowest value both allow, over every fresh opening). The open period: the
 * shortest wait from an opening (the threshold-th failure, or a failed probe) to the next
 * attempt on the primary (which also waits for the next request after it).
 */
static void breaker_fit(const prim *pa, size_t n, const int64_t *starts, size_t runs,
                        uint32_t *threshold, size_t bounds[2], int64_t *open) {
    int64_t look = FB_US_PER_S, episode = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (pa[i].end - pa[i].start + FB_US_PER_S > look)
            look = pa[i].end - pa[i].start + FB_US_PER_S;
    *threshold = 0;
    *open = -1;
    size_t lower = 0, upper = SIZE_MAX;
    for (size_t k = 0; k < runs; k++) {
        opening o = read_run(pa, n, starts, k, look, &episode);
        if (!o.fresh || o.len == 0) continue;
        if (o.len < upper) upper = o.len;
        if (o.closed + 1 > lower) lower = o.closed + 1;
    }
    if (upper != SIZE_MAX) *threshold = (uint32_t)(lower <= upper ? lower : upper);
    bounds[0] = lower;
    bounds[1] = upper;
    episode = INT64_MIN;
    for (size_t k = 0; *threshold > 0 && k < runs; k++) {
        opening o = read_run(pa, n, starts, k, look, &episode);
        int64_t trip = o.probe;
        if (o.fresh)
            trip = o.len >= *threshold ? nth_failure(pa, n, o.first, o.since, *threshold) : -1;
        int64_t next = probe_after(pa, n, starts[k]);
        if (trip > 0 && next > trip && (*open < 0 || next - trip < *open)) *open = next - trip;
    }
}

static void breaker(imp_incident *inc, int64_t *tmp) {
    imp_inferred *P = &inc->pol;
    uint8_t primary = P->order[0];
    prim *pa = fit_malloc(&inc->oom, (inc->prov[primary].attempts + 1) * sizeof *pa);
    if (pa == NULL) return;
    size_t n = primary_attempts(inc, primary, pa), skipped = 0;
    size_t runs = skip_runs(inc, primary, tmp, inc->r1 - inc->r0, &skipped);
    uint32_t threshold = 0;
    size_t bounds[2] = {0, 0};
    int64_t open = -1;
    breaker_fit(pa, n, tmp, runs, &threshold, bounds, &open);
    free(pa);
    const char *name = inc->log->prov[primary].name;
    if (skipped < 3 || threshold == 0) {
        if (skipped)
            util_buf_printf(&inc->evidence,
                            " %zu requests skipped %s, none after a run of failures "
                            "there: no breaker.",
                            skipped, name);
        return;
    }
    P->breaker = true;
    P->consecutive = threshold;
    P->open_us = open > 0 ? (fb_time_us)llround((double)open / 10000) * 10000 : 60 * FB_US_PER_S;
    char o[48];
    imp_human(o, sizeof o, P->open_us);
    util_buf_printf(&inc->evidence,
                    " Breaker: %zu requests skipped %s (tried another first, or made no call) in "
                    "%zu runs. Its failures counted as the breaker counts them (a 429 or a "
                    "cancelled attempt nowhere, a 4xx as a success, the answer to an attempt "
                    "admitted before it last closed not at all), the log allows %zu to %zu "
                    "consecutive failures (at least one more than the failures in a row there when "
                    "it last let an attempt through before opening, at most the run before the "
                    "skips): %u (consecutive_failures), the least. The shortest time from the "
                    "failure that tripped it to the next attempt there is %s (open%s; one pod and "
                    "one probe assumed).",
                    skipped, name, runs, bounds[0], bounds[1], threshold, open > 0 ? o : "never",
                    open > 0 ? "" : ": 60s assumed");
}

/* ---- the rest of the application ---- */

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * The request timeout, where the log shows one: requests given up with an attempt in flight
 * (not answered, their last attempt cancelled) after durations a fixed timer explains
 * (fixed_timer), none of the other requests lasting longer. Returns 0 where it does not.
 * Without it the replay's request timeout was twice the longest request: attempts that hung
 * until the application gave up at 1.5 s hung there for 60 s.
 */
static fb_time_us cut_requests(imp_incident *inc, int64_t *tmp) {
    size_t k = 0;
    /* the longest answered request (the timer let it finish), and the longest other one that
       ended unanswered (exhausted, or given up while it waited to retry: the same timer may
       have ended it, a little late) */
    int64_t longest_other = 0, longest_failed = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        int64_t d = q->end_us - q->start_us;
        bool cut = !q->ok && q->count > 0 &&
                   inc->log->att[q->first + q->count - 1].outcome == IMP_CANCELLED;
        if (cut)
            tmp[k++] = d;
        else if (q->ok && d > longest_other)
            longest_other = d;
        else if (!q->ok && d > longest_failed)
            longest_failed = d;
    }
    if (k == 0) return 0;
    imp_sort(tmp, k);
    timer_shape t;
    timer_fit fit = fixed_timer(tmp, k, &t);
    /* the shortest of the cluster (those further below it were given up for another reason),
       and not below a request that another end let last longer: a timer never fires early, so
       it is at least as long as every request it did not cut */
    double tol = (fit == TIMER_LATE ? t.p10 : t.med) / 10 + 20000, edge = t.p10 - tol;
    size_t lo = 0;
    while (lo + 1 < k && (double)tmp[lo] < edge) lo++;
    size_t sooner = lo;
    while (lo < k && tmp[lo] < longest_other) lo++;
    char a[24];
    imp_human(a, sizeof a, (int64_t)t.med);
    if (fit == TIMER_NONE || 2 * (k - lo) < k ||
        (double)longest_failed > (double)tmp[k - 1] + tol) {
        util_buf_printf(&inc->evidence,
                        " %zu requests were given up with an attempt in flight after varying "
                        "times (median %s)%s: no fixed request timeout.",
                        k, a,
                        fit == TIMER_NONE ? "" : ", and other requests lasted longer than most");
        return 0;
    }
    /* to the millisecond below: each of the cluster then lasted the timeout, the log's `end
       timeout` (observed.c) as each replayed one is */
    fb_time_us at = tmp[lo] / FB_US_PER_MS * FB_US_PER_MS;
    imp_human(a, sizeof a, at);
    util_buf_printf(&inc->evidence,
                    " %zu requests were given up with an attempt in flight after %s or a little "
                    "more (%s %.0f ms%s)",
                    k - lo, a, fit == TIMER_LATE ? "the median" : "p10 to p90 within",
                    (fit == TIMER_LATE ? t.med - (double)at : t.spread) / 1000,
                    fit == TIMER_LATE ? " later: a timer fires late, never early" : "");
    if (lo > 0)
        util_buf_printf(&inc->evidence, " and %zu sooner%s", lo,
                        lo > sooner ? " (than a request that lasted longer)" : "");
    util_buf_printf(&inc->evidence, ", none of the others lasting longer: pods.request_timeout.");
    return at;
}

/* Workers: twice the peak of requests in flight; request timeout: the one the requests given up
   show (cut_requests), else twice the longest request. */
static void application(imp_incident *inc, int64_t *ev) {
    fb_time_us cut = cut_requests(inc, ev);
    size_t n = 0;
    int64_t longest = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        ev[n++] = q->start_us * 2 + 1; /* an end sorts before a start at the same time */
        ev[n++] = q->end_us * 2;
        if (q->end_us - q->start_us > longest) longest = q->end_us - q->start_us;
    }
    qsort(ev, n, sizeof *ev, by_value);
    int64_t now = 0, peak = 0;
    for (size_t i = 0; i < n; i++) {
        now += (ev[i] & 1) ? 1 : -1;
        if (now > peak) peak = now;
    }
    inc->pol.workers = (uint32_t)(peak * 2 > 64 ? peak * 2 : 64);
    inc->pol.request_timeout_cut = cut > 0;
    if (cut > 0) {
        inc->pol.request_timeout_us = cut;
        return;
    }
    fb_time_us t = (2 * longest + FB_US_PER_S - 1) / FB_US_PER_S * FB_US_PER_S;
    inc->pol.request_timeout_us = t > 60 * FB_US_PER_S ? t : 60 * FB_US_PER_S;
}

static void describe(imp_incident *inc, const scan *S) {
    util_buf_printf(&inc->evidence,
                    "Inferred from %zu requests and %u attempts. Requests by attempts:",
                    inc->r1 - inc->r0, inc->attempts);
    for (uint32_t k = 0; k <= LEVELS + 1; k++)
        if (S->per_request[k])
            util_buf_printf(&inc->evidence, " %s%u: %u,", k > LEVELS ? ">" : "",
                            k > LEVELS ? LEVELS : k, S->per_request[k]);
    util_buf_printf(&inc->evidence,
                    " at most %u on one provider (retry.attempts). Fallback order:", S->max_run);
    for (uint32_t i = 0; i < inc->pol.norder; i++)
        util_buf_printf(&inc->evidence, "%s %s", i ? "," : "",
                        inc->log->prov[inc->pol.order[i]].name);
    util_buf_printf(&inc->evidence, " (which provider the requests tried before which).");
}

void imp__fit_policy(imp_incident *inc) {
    scan S = {0};
    size_t cap = inc->attempts + 2 * (inc->r1 - inc->r0) + 1;
    S.g = fit_malloc(&inc->oom, cap * sizeof *S.g);
    int64_t *tmp = fit_malloc(&inc->oom, cap * sizeof *tmp);
    if (S.g == NULL || tmp == NULL) {
        free(S.g);
        free(tmp);
        return;
    }
    chain_order(inc);
    runs(inc, &S);
    inc->pol.attempts = S.max_run ? S.max_run : 1;
    retries(inc, &S);
    describe(inc, &S);
    if (inc->pol.attempts > 1) {
        exclude_recorded(&S);
        inferred_retry_after(inc, &S, tmp);
        backoff(inc, &S, tmp);
        inc->pol.retry_after = retry_after_mode(inc, &S, tmp);
        retry_on(inc, &S);
        patch_faults(inc, &S);
    }
    attempt_timeout(inc, tmp);
    breaker(inc, tmp);
    application(inc, tmp);
    free(S.g);
    free(tmp);
}
