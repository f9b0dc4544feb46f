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
 *   Retry-After gaps after an answer that recorded one: waited as is, or ignored
 *   timeout     attempts that timed out after the same time: the attempt timeout
 *   retry_on    each error kind retried or not, where attempts were left, against the
 *               default table (core/classify.h); written only where they differ
 *   fallback    which provider each request tried before which
 *   breaker     runs of requests that skipped the first provider (or made no call) while
 *               it was failing: the failures before each run, and the time to the probe
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/classify.h"
#include "import/fitint.h"

#define LEVELS 8

typedef struct gap {
    uint32_t n; /* retry number: 1 for the first retry on the provider */
    fb_time_us gap, retry_after_us;
} gap;

typedef struct tally {
    uint8_t outcome;
    int16_t status;
    uint32_t retried, given_up;
} tally;

typedef struct scan {
    gap *g;
    size_t ng;
    tally t[32];
    uint32_t nt;
    uint32_t per_request[LEVELS + 2]; /* requests by attempts made (last: more) */
    uint32_t max_run;
} scan;

static bool failed(const imp_attempt *a) {
    return a->outcome != IMP_OK && a->outcome != IMP_CANCELLED;
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
    if (S->nt == 32) return NULL;
    S->t[S->nt] = (tally){a->outcome, a->status, 0, 0};
    return &S->t[S->nt++];
}

/* The longest run of attempts on one provider, and requests by attempts made. */
static void runs(const imp_incident *inc, scan *S) {
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        S->per_request[q->count <= LEVELS ? q->count : LEVELS + 1]++;
        uint32_t run = 0;
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            bool same = i > q->first && inc->log->att[i].provider == inc->log->att[i - 1].provider;
            run = same ? run + 1 : 1;
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
            if (next && next->provider == a->provider) {
                if (t) t->retried++;
                S->g[S->ng++] = (gap){run, next->start_us - a->end_us, a->retry_after_us};
            } else if (run < S->max_run && t) {
                t->given_up++;
            }
        }
    }
}

/* ---- backoff ---- */

typedef struct level {
    size_t k;
    double lo, hi;
} level;

static level level_of(const gap *g, size_t ng, uint32_t n, bool skip_ra, int64_t *tmp) {
    level L = {0, 0, 0};
    for (size_t i = 0; i < ng; i++)
        if (g[i].n == n && !(skip_ra && g[i].retry_after_us >= 0)) tmp[L.k++] = g[i].gap;
    if (L.k == 0) return L;
    imp_sort(tmp, L.k);
    double lo = (double)tmp[0], hi = (double)tmp[L.k - 1];
    double spacing = L.k > 1 ? (hi - lo) / (double)(L.k - 1) : 0;
    L.lo = lo - spacing > 0 ? lo - spacing : 0;
    L.hi = hi + spacing;
    return L;
}

static fb_time_us ms(double us) {
    return (fb_time_us)llround(us / 1000) * FB_US_PER_MS;
}

static void describe_levels(imp_incident *inc, const level *L) {
    imp_text_add(&inc->evidence, " Gaps from a failure to the retry on the same provider:");
    for (uint32_t n = 1; n <= LEVELS; n++) {
        if (L[n].k == 0) continue;
        char a[24], b[24];
        imp_human(a, sizeof a, (int64_t)L[n].lo);
        imp_human(b, sizeof b, (int64_t)L[n].hi);
        imp_text_add(&inc->evidence, " retry %u: %s to %s (%zu gaps, ends widened by one spacing);",
                     n, a, b, L[n].k);
    }
}

/* The delay before each retry and its jitter, from the gaps' ranges. */
static void backoff(imp_incident *inc, const scan *S, bool skip_ra, int64_t *tmp) {
    imp_inferred *P = &inc->pol;
    level L[LEVELS + 1];
    for (uint32_t n = 1; n <= LEVELS; n++) L[n] = level_of(S->g, S->ng, n, skip_ra, tmp);
    P->backoff = FB_BACKOFF_EXPONENTIAL;
    P->multiplier = 2;
    if (L[1].k == 0) {
        imp_text_add(&inc->evidence, " No retry waited for a backoff of its own: the backoff is "
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
        imp_text_add(&inc->evidence, " The retries came at once: no backoff.");
    } else if (S->max_run <= 2 || (L[2].k >= 2 && d[2] / d[1] < 1.15)) {
        P->backoff = FB_BACKOFF_CONSTANT;
        imp_text_add(&inc->evidence, " %s: a constant delay.",
                     S->max_run <= 2 ? "One retry at most"
                                     : "The second retry waited as the first");
    } else if (L[2].k >= 2) {
        P->multiplier = round(d[2] / d[1] * 100) / 100;
        if (L[3].k >= 2 && d[3] < 0.85 * d[2] * P->multiplier) P->max_us = ms(d[3]);
        imp_text_add(&inc->evidence, " Exponential: each retry waited %.2f times the one before%s.",
                     P->multiplier, P->max_us ? ", up to a cap" : "");
    } else {
        imp_text_add(&inc->evidence, " Only first retries waited for a backoff: exponential with "
                                     "the multiplier 2 assumed.");
    }
}

/* Did the retries after a recorded Retry-After wait it? "as_is", "ignore" or NULL. */
static const char *retry_after(imp_incident *inc, const scan *S) {
    size_t n = 0, waited = 0;
    for (size_t i = 0; i < S->ng; i++) {
        const gap *g = &S->g[i];
        if (g->retry_after_us < 0) continue;
        n++;
        waited += llabs(g->gap - g->retry_after_us) <= g->retry_after_us / 10 + 50 * FB_US_PER_MS;
    }
    if (n == 0) return NULL;
    imp_text_add(&inc->evidence,
                 " Retry-After: recorded on %zu failed attempts that were retried; %zu retries "
                 "waited it (within 10%% + 50 ms)",
                 n, waited);
    bool as_is = waited * 10 >= n * 6;
    imp_text_add(&inc->evidence, as_is ? ": retry_after as_is." : ": not honoured, ignore.");
    return as_is ? "as_is" : "ignore";
}

/* ---- timeouts, statuses retried ---- */

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
    double med = imp_quantile(tmp, k, 0.5),
           spread = imp_quantile(tmp, k, 0.9) - imp_quantile(tmp, k, 0.1);
    char a[24];
    imp_human(a, sizeof a, (int64_t)med);
    if (k >= 2 && spread <= med / 10 + 20000) {
        inc->pol.attempt_timeout_us = ms(med);
        imp_text_add(&inc->evidence,
                     " %zu attempts timed out after %s (p10 to p90 within %.0f ms): "
                     "attempt_timeout.",
                     k, a, spread / 1000);
    } else {
        imp_text_add(&inc->evidence,
                     " %zu attempts timed out after varying times (median %s): no "
                     "fixed attempt timeout; the request timeout bounds them.",
                     k, a);
    }
}

static bool default_retries(const tally *t) {
    fb_classifier c;
    fb_classify_init(&c, NULL);
    fb_reply rep = {.status = t->status, .should_retry = -1};
    if (t->outcome == IMP_TIMEOUT) rep.transport = FB_TRANSPORT_TIMEOUT;
    if (t->outcome == IMP_RESET) rep.transport = FB_TRANSPORT_RESET;
    if (t->outcome == IMP_BROKEN) rep.status = 200, rep.transport = FB_TRANSPORT_RESET;
    return fb_classify(&c, &rep).retryable;
}

static const char *kind_name(const tally *t, char *buf, size_t len) {
    static const char *const names[] = {"ok", "", "timeout", "reset", "broken", "cancelled"};
    if (t->outcome == IMP_STATUS)
        snprintf(buf, len, "%d", t->status);
    else
        snprintf(buf, len, "%s", names[t->outcome]);
    return buf;
}

static void retry_on(imp_incident *inc, const scan *S) {
    imp_inferred *P = &inc->pol;
    char b[16];
    for (uint32_t i = 0; i < S->nt; i++) {
        const tally *t = &S->t[i];
        bool retried = t->retried > t->given_up;
        imp_text_add(&inc->evidence,
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
        imp_text_add(&inc->evidence, " retry_on lists what was retried (a status never seen is "
                                     "then not retried).");
}

/* ---- the breaker ---- */

typedef struct prim {
    fb_time_us start, end;
    bool failed;
} prim;

static int by_end(const void *a, const void *b) {
    const prim *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
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
            if (a->provider == primary) out[n++] = (prim){a->start_us, a->end_us, failed(a)};
        }
    }
    qsort(out, n, sizeof *out, by_end);
    return n;
}

/* One run of skipping requests starting at t: failures just before it, time to the probe. */
static void run_evidence(const prim *pa, size_t n, int64_t t, int64_t *fails, int64_t *open) {
    size_t i = 0;
    while (i < n && pa[i].end <= t) i++;
    size_t k = i;
    while (k > 0 && pa[k - 1].failed) k--;
    *fails = (int64_t)(i - k);
    *open = -1;
    if (i == 0 || !pa[i - 1].failed) return;
    for (size_t j = i; j < n; j++)
        if (pa[j].start >= t) {
            *open = pa[j].start - pa[i - 1].end;
            return;
        }
}

static void breaker(imp_incident *inc, int64_t *tmp) {
    imp_inferred *P = &inc->pol;
    uint8_t primary = P->order[0];
    prim *pa = malloc((inc->prov[primary].attempts + 1) * sizeof *pa);
    if (pa == NULL) return;
    size_t n = primary_attempts(inc, primary, pa), skipped = 0, nruns = 0, nopen = 0;
    int64_t open_min = INT64_MAX;
    for (size_t r = inc->r0; r < inc->r1; r++) {
        if (!skips(inc, r, primary)) continue;
        skipped++;
        if (r > inc->r0 && skips(inc, r - 1, primary)) continue;
        int64_t fails = 0, open = -1;
        run_evidence(pa, n, inc->log->req[r].start_us, &fails, &open);
        if (fails == 0) continue;
        tmp[nruns++] = fails;
        if (open > 0 && open < open_min) open_min = open;
        nopen += open > 0;
    }
    free(pa);
    if (skipped < 3 || nruns == 0) {
        if (skipped)
            imp_text_add(&inc->evidence, " %zu requests skipped %s: too few for a breaker.",
                         skipped, inc->log->prov[primary].name);
        return;
    }
    imp_sort(tmp, nruns);
    P->breaker = true;
    P->consecutive = (uint32_t)imp_quantile(tmp, nruns, 0.5);
    P->open_us = nopen ? (fb_time_us)llround((double)open_min / 10000) * 10000 : 60 * FB_US_PER_S;
    imp_text_add(&inc->evidence,
                 " Breaker: %zu requests skipped %s in %zu runs, each after a median of %u "
                 "consecutive failures there (consecutive_failures); the first attempt there "
                 "after a run came %s after the failure that tripped it (open, the shortest of "
                 "%zu; one pod and one probe assumed).",
                 skipped, inc->log->prov[primary].name, nruns, P->consecutive,
                 nopen ? "at least" : "never: 60s assumed", nopen);
}

/* ---- the rest of the application ---- */

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Workers: twice the peak of requests in flight; request timeout: twice the longest. */
static void application(imp_incident *inc, int64_t *ev) {
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
    fb_time_us t = (2 * longest + FB_US_PER_S - 1) / FB_US_PER_S * FB_US_PER_S;
    inc->pol.request_timeout_us = t > 60 * FB_US_PER_S ? t : 60 * FB_US_PER_S;
}

static void describe(imp_incident *inc, const scan *S) {
    imp_text_add(&inc->evidence,
                 "Inferred from %zu requests and %u attempts. Requests by attempts:",
                 inc->r1 - inc->r0, inc->attempts);
    for (uint32_t k = 0; k <= LEVELS + 1; k++)
        if (S->per_request[k])
            imp_text_add(&inc->evidence, " %s%u: %u,", k > LEVELS ? ">" : "",
                         k > LEVELS ? LEVELS : k, S->per_request[k]);
    imp_text_add(&inc->evidence,
                 " at most %u on one provider (retry.attempts). Fallback order:", S->max_run);
    for (uint32_t i = 0; i < inc->pol.norder; i++)
        imp_text_add(&inc->evidence, "%s %s", i ? "," : "", inc->log->prov[inc->pol.order[i]].name);
    imp_text_add(&inc->evidence, " (which provider the requests tried before which).");
}

void fit_policy(imp_incident *inc) {
    scan S = {0};
    size_t cap = inc->attempts + 2 * (inc->r1 - inc->r0) + 1;
    S.g = malloc(cap * sizeof *S.g);
    int64_t *tmp = malloc(cap * sizeof *tmp);
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
        inc->pol.retry_after = retry_after(inc, &S);
        bool skip = inc->pol.retry_after && strcmp(inc->pol.retry_after, "as_is") == 0;
        backoff(inc, &S, skip, tmp);
        retry_on(inc, &S);
    }
    attempt_timeout(inc, tmp);
    breaker(inc, tmp);
    application(inc, tmp);
    free(S.g);
    free(tmp);
}
