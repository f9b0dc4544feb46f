/*
 * latency.c - a provider's latency from its answers: time to first token, time per
 * output token, error latency, and the periods it was slow; see incident.h.
 *
 * Where the log records first tokens (LiteLLM's completionStartTime of a stream) they
 * are the time to first token, and the rest of each answer over its output tokens is the
 * time per token. Otherwise an answer's duration is a line in its output tokens,
 * duration = ttft + per_token x tokens, through the medians of groups of answers by
 * tokens (tokens_line; a slope below zero, or tokens that never vary, leave per_token at
 * 0 and everything in the first token). A
 * window whose lower quartile of first-token times is at least 1.5 times the whole log's
 * (with 5 answers or more) is slow; runs of slow windows become `slow` faults with the
 * factor they show (their quartile over the other windows'), and the first-token
 * distribution is fitted to the other windows.
 *
 * The quartile, not the median: a slow provider slows every answer, so the whole window's
 * distribution moves, its fast end too. Retries that a request's span hides (one span per
 * request, the SDK's retries inside) lengthen only the requests that met a fault, by the
 * backoff, a Retry-After or a timeout: a window where half of them did has its median among
 * the long ones, or not, by the luck of a few requests, while its answers at the first
 * attempt keep the fast end where it was. With 3 attempts those are at least a third of
 * the answers whatever the fault's share (1 - p over 1 - p^3), so the quartile stays
 * among them. Those hidden retries are placed as slow faults over the share of the answers
 * they lengthened (mixed_faults, below).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/fitint.h"

typedef struct answer {
    fb_time_us t, d, ttft;
    int32_t tokens;
    int16_t resend; /* http.request.resend_count; -1 none */
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
            out[n++] = (answer){fit_t(inc, a), a->end_us - a->start_us, a->ttft_us, a->tokens_out,
                                a->resend};
        }
    }
    qsort(out, n, sizeof *out, by_t);
    return n;
}

typedef struct point {
    int64_t tokens, d;
} point;

static int by_tokens(const void *a, const void *b) {
    const point *x = a, *y = b;
    if (x->tokens != y->tokens) return x->tokens < y->tokens ? -1 : 1;
    return x->d < y->d ? -1 : x->d > y->d;
}

#define LINE_GROUPS 10 /* groups of answers by tokens, for the line through their quartiles */
#define LINE_Q 0.25    /* a group's point: its lower quartile (see tokens_line) */

/*
 * duration = c + b x tokens through the answers' (tokens, duration): least squares over
 * the lower quartiles of at most LINE_GROUPS groups of at least 5 answers by tokens, no token
 * count split between two (fewer answers: each its own). Not over the answers themselves: with
 * retries hidden in a request's span, a fifth of the answers can be seconds long for reasons that
 * have nothing to do with their tokens, and they tilted the line (12 to 20 ms per token where the
 * provider took 10 ms). Not over the groups' medians either: a slow window (40% of the corpus's
 * slowdown trace) and a client's start-up stall made about half of each group long, and the
 * median of a group fell among the long answers or not by its luck (26 ms a token on that trace,
 * the provider's 10). Whatever lengthens an answer (a slow period, hidden retries, a late client)
 * leaves its group's lower quartile among the answers it did not touch while it touches fewer
 * than three in four. False when tokens do not vary.
 */
static bool tokens_line(point *pt, size_t m, double *c, double *b, bool *oom) {
    size_t groups = m >= 2 * 5 ? m / 5 : m; /* below 10 answers, fewer than 10 groups */
    if (groups > LINE_GROUPS) groups = LINE_GROUPS;
    double x[LINE_GROUPS], y[LINE_GROUPS];
    size_t from[LINE_GROUPS + 1];
    int64_t *v = fit_malloc(oom, (m + 1) * sizeof *v);
    bool ok = false;
    if (v) {
        qsort(pt, m, sizeof *pt, by_tokens);
        size_t g = 0;
        from[0] = 0;
        for (size_t lo = 0, hi; lo < m && g < LINE_GROUPS; lo = hi) {
            /* at least a group's share, and never a token count split between two groups:
               answers of one count sorted by duration put a slow period's in a group of
               their own, and tilted the line (15 ms a token where the provider took 10) */
            hi = lo + m / groups > lo + 1 ? lo + m / groups : lo + 1;
            if (hi > m || g + 1 == LINE_GROUPS) hi = m;
            while (hi < m && pt[hi].tokens == pt[hi - 1].tokens) hi++;
            x[g] = (double)pt[(lo + hi) / 2].tokens;
            from[++g] = hi;
        }
        /* first through the medians; then through the lower quartiles of the durations
           moved to their group's tokens along the line before (a group spans several token
           counts, and its quartile would be its fewest tokens'), twice */
        double slope = 0;
        ok = true;
        for (int pass = 0; ok && pass < 3; pass++) {
            for (size_t j = 0; j < g; j++) {
                size_t k = 0;
                for (size_t i = from[j]; i < from[j + 1]; i++)
                    v[k++] = pt[i].d - llround(slope * ((double)pt[i].tokens - x[j]));
                imp_sort(v, k);
                y[j] = imp_quantile(v, k, pass == 0 ? 0.5 : LINE_Q);
            }
            ok = imp_line(x, y, g, c, b);
            slope = *b;
        }
    }
    free(v);
    return ok;
}

/* Time per output token: from first tokens where recorded, else the line's slope. */
static fb_time_us per_token(imp_pfit *pf, const answer *a, size_t n) {
    size_t with_ttft = 0, m = 0;
    for (size_t i = 0; i < n; i++) with_ttft += a[i].ttft >= 0;
    pf->ttft_measured = with_ttft >= 5 && with_ttft * 2 >= n;
    point *pt = fit_malloc(&pf->oom, (n + 1) * sizeof *pt);
    fb_time_us out = 0;
    for (size_t i = 0; pt && i < n; i++) {
        if (a[i].tokens <= 0 || (pf->ttft_measured && a[i].ttft < 0)) continue;
        pt[m++] = (point){a[i].tokens, pf->ttft_measured ? a[i].d - a[i].ttft : a[i].d};
    }
    if (pf->ttft_measured && m > 0) {
        int64_t *v = fit_malloc(&pf->oom, m * sizeof *v);
        for (size_t i = 0; v && i < m; i++) v[i] = llround((double)pt[i].d / (double)pt[i].tokens);
        if (v) imp_sort(v, m);
        out = v ? llround(imp_quantile(v, m, 0.5)) : 0;
        free(v);
    } else {
        double c = 0, b = 0;
        if (m >= 5 && tokens_line(pt, m, &c, &b, &pf->oom) && b > 0 && c >= 0) out = llround(b);
    }
    free(pt);
    return out;
}

/* An answer's first-token time: recorded, or its duration less the tokens' share. */
static int64_t first_token(const imp_pfit *pf, const answer *a) {
    if (pf->ttft_measured && a->ttft >= 0) return a->ttft;
    int64_t v = a->d - (a->tokens > 0 ? pf->per_token_us * a->tokens : 0);
    return v > 0 ? v : 0;
}

#define SLOW_Q 0.25 /* the quantile that tells a slow window (above) */

static double median_of(int64_t *v, size_t n) {
    imp_sort(v, n);
    return imp_quantile(v, n, 0.5);
}

static double quartile_of(int64_t *v, size_t n) {
    imp_sort(v, n);
    return imp_quantile(v, n, SLOW_Q);
}

/*
 * An answer's latency over what the latency model gives it outside any slow period (the
 * log's first-token quartile, q, plus its tokens at the fitted time per token). A slow
 * fault multiplies the whole latency, first token and tokens alike (sim/provider.c), so
 * inside one this ratio is the factor times what it is outside, whatever the tokens: a
 * first-token time alone (the duration less the tokens) grew by the factor plus the
 * tokens' share of it, and a window of long answers read 6.94x slow where it was 2.5x.
 */
static double ratio(const imp_pfit *pf, const answer *a, double q) {
    double model = q + (a->tokens > 0 ? (double)pf->per_token_us * a->tokens : 0);
    return model > 0 ? (double)a->d / model : 0;
}

/* Ratios scaled to integers, for the order statistics (1e6: a millionth). */
#define RATIO_SCALE 1e6

static int64_t ratio_i(const imp_pfit *pf, const answer *a, double q) {
    return llround(ratio(pf, a, q) * RATIO_SCALE);
}

/* Mark the slow windows (slow[w]); returns the whole log's first-token quartile. */
static double mark_slow(const imp_pfit *pf, const answer *a, size_t n, size_t nw, bool *slow,
                        int64_t *tmp) {
    for (size_t i = 0; i < n; i++) tmp[i] = first_token(pf, &a[i]);
    double q = quartile_of(tmp, n);
    for (size_t i = 0; i < n; i++) tmp[i] = ratio_i(pf, &a[i], q);
    double base = quartile_of(tmp, n);
    for (size_t w = 0, i = 0; w < nw; w++) {
        size_t k = 0;
        for (; i < n && a[i].t / pf->window_us == (fb_time_us)w; i++)
            tmp[k++] = ratio_i(pf, &a[i], q);
        slow[w] = k >= 5 && quartile_of(tmp, k) >= 1.5 * base && base > 0 && q > 0;
    }
    return q;
}

/* A slow fault's factor to two decimals, within the format's limit (a cut is counted). */
static double slow_factor(imp_pfit *pf, double factor) {
    if (factor <= IMP_SLOW_FACTOR_MAX) return round(factor * 100) / 100;
    pf->slow_capped++;
    return IMP_SLOW_FACTOR_MAX;
}

/*
 * The quartile of sorted v and its 95% distribution-free interval: the order statistics
 * 1.96 standard deviations of the rank (sqrt(n q (1 - q))) on either side of it.
 */
static void quartile_ci(const int64_t *v, size_t n, double *lo, double *mid, double *hi) {
    double sd = sqrt((double)n * SLOW_Q * (1 - SLOW_Q)), r = SLOW_Q * (double)(n - 1);
    double a = floor(r - 1.96 * sd), b = ceil(r + 1.96 * sd);
    *mid = imp_quantile(v, n, SLOW_Q);
    *lo = (double)v[a < 0 ? 0 : (size_t)a];
    *hi = (double)v[b > (double)(n - 1) ? n - 1 : (size_t)b];
}

/* The first answer at or after t (a[] in time order). */
static size_t answer_at(const answer *a, size_t n, fb_time_us t) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].t < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Where a run of slow windows [t0, t1) really starts and ends: within a window on either
 * side of each edge, the answer that splits those around it best into fast ones before and
 * slow ones after (at the end, the other way): each answer counts +1 on the side it looks
 * like (its ratio at or above thr, the geometric middle of fast and slow) and -1 on the
 * other, and the split with the largest sum wins. The fault starts at the first slow
 * answer's start and ends at the first fast one's after it, not at window boundaries.
 */
static void slow_edges(const answer *a, size_t n, const imp_pfit *pf, double q, double thr,
                       fb_time_us floor_t, size_t *first, size_t *past) {
    for (int edge = 0; edge < 2; edge++) {
        fb_time_us at = edge == 0 ? a[*first].t / pf->window_us * pf->window_us
                                  : (a[*past - 1].t / pf->window_us + 1) * pf->window_us;
        size_t i0 = answer_at(a, n, at - pf->window_us > floor_t ? at - pf->window_us : floor_t),
               i1 = answer_at(a, n, at + pf->window_us);
        if (edge == 1 && i0 < *first + 1) i0 = *first + 1;
        if (i1 <= i0) continue;
        double sum = 0, best = -INFINITY;
        size_t k_best = edge == 0 ? *first : *past;
        /* score(k): the answers before k on the first side, those from k on the other */
        double total = 0;
        for (size_t i = i0; i < i1; i++) total += ratio(pf, &a[i], q) >= thr ? 1 : -1;
        for (size_t k = i0; k <= i1; k++) {
            double score = edge == 0 ? total - 2 * sum : 2 * sum - total;
            if (score > best) best = score, k_best = k;
            if (k < i1) sum += ratio(pf, &a[k], q) >= thr ? 1 : -1;
        }
        if (edge == 0 && k_best < i1)
            *first = k_best;
        else if (edge == 1 && k_best > *first)
            *past = k_best;
    }
}

/*
 * Runs of slow windows into slow faults, their edges moved to the answers (slow_edges;
 * inslow[i] marks the answers inside). The factor is the quartile of the latency ratios
 * (ratio, above) of the answers inside over that of the answers outside every slow fault;
 * its interval, the ends of the two quartiles' intervals crossed (the lowest inside over
 * the highest outside, and the other way).
 */
static void slow_faults(imp_incident *inc, imp_pfit *pf, const answer *a, size_t n,
                        const bool *slow, size_t nw, double q, bool *inslow, int64_t *tmp) {
    size_t runs[IMP_SLOW_MAX][2], nruns = 0, m = 0;
    for (size_t i = 0; i < n; i++)
        if (!slow[a[i].t / pf->window_us]) tmp[m++] = ratio_i(pf, &a[i], q);
    if (m == 0 || q <= 0) return;
    imp_sort(tmp, m);
    double fast = imp_quantile(tmp, m, SLOW_Q);
    fb_time_us floor_t = 0;
    for (size_t w = 0; w < nw && fast > 0 && nruns < IMP_SLOW_MAX;) {
        if (!slow[w]) {
            w++;
            continue;
        }
        size_t end = w;
        while (end < nw && slow[end]) end++;
        size_t first = answer_at(a, n, (fb_time_us)w * pf->window_us),
               past = answer_at(a, n, (fb_time_us)end * pf->window_us), k = 0;
        for (size_t i = first; i < past; i++) tmp[k++] = ratio_i(pf, &a[i], q);
        double thr = sqrt(quartile_of(tmp, k) * fast) / RATIO_SCALE;
        slow_edges(a, n, pf, q, thr, floor_t, &first, &past);
        for (size_t i = first; i < past; i++) inslow[i] = true;
        runs[nruns][0] = first;
        runs[nruns++][1] = past;
        floor_t = past < n ? a[past].t : a[n - 1].t + 1;
        w = end;
    }
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (!inslow[i]) tmp[m++] = ratio_i(pf, &a[i], q);
    if (m == 0) return;
    imp_sort(tmp, m);
    double out_lo, out, out_hi;
    quartile_ci(tmp, m, &out_lo, &out, &out_hi);
    int64_t *in = tmp + m;
    for (size_t r = 0; r < nruns && out > 0; r++) {
        size_t first = runs[r][0], past = runs[r][1], k = 0;
        for (size_t i = first; i < past; i++) in[k++] = ratio_i(pf, &a[i], q);
        if (k == 0) continue;
        imp_sort(in, k);
        double in_lo, mid, in_hi;
        quartile_ci(in, k, &in_lo, &mid, &in_hi);
        fb_time_us at = a[first].t / FB_US_PER_MS * FB_US_PER_MS;
        fb_time_us to = past < n ? a[past].t / FB_US_PER_MS * FB_US_PER_MS
                                 : (a[n - 1].t / FB_US_PER_MS + 1) * FB_US_PER_MS;
        double factor = mid / out;
        if (pf->nslow < IMP_SLOW_MAX && at < inc->duration_us && factor >= 1.2 && to > at)
            pf->slow[pf->nslow++] =
                (imp_fault){.kind = SIM_FAULT_SLOW,
                            .at_us = at,
                            .for_us = to - at,
                            .fraction = 1,
                            .factor = slow_factor(pf, factor),
                            .factor_lo = round(in_lo / (out_hi > 0 ? out_hi : out) * 100) / 100,
                            .factor_hi = round(in_hi / (out_lo > 0 ? out_lo : out) * 100) / 100,
                            .retry_after_us = FB_TIME_NONE,
                            .hits = (uint32_t)k,
                            .attempts = (uint32_t)k};
    }
}

/* ---- retries hidden in a request's span ---- */

/* Windows [w0, w1) where some answers waited for retries the log does not show. */
typedef struct mix {
    size_t w0, w1, k, nlong; /* answers in them, long ones */
    double long_us;          /* the long ones' durations, summed */
} mix;

/*
 * With one span per request the SDK's retries are inside the answers' durations: where a
 * fault hit, a share of the answers took a backoff, a Retry-After or a timeout longer.
 * An answer is long when its first-token time is at least twice the log's median; the
 * windows that have some (5 answers or more, not slow as a whole) become `slow` faults
 * over that share of the answers (`fraction`), by the factor that keeps the time they took
 * (their mean duration over the other answers' median: the time hidden retries add is
 * what the log's tail is made of). Over IMP_SLOW_MAX, the adjacent ones most alike in
 * share are merged. mark_long marks the long answers in lng[], before the first-token
 * distribution is fitted to the others.
 *
 * Where the requests' spans count their resends (http.request.resend_count: @anthropic-ai/sdk's
 * call span carries it when the call was resent, and never on a call of one attempt), that
 * count is the evidence instead: the answers it says were resent are the long ones, in every
 * window that is not slow as a whole, whatever their first token (a retry after a fast error
 * and a short backoff may not double it; a slow answer of one attempt may). `counted` says
 * that some answer of the provider carries a count, so that its absence means none.
 */
static void mark_long(const imp_pfit *pf, const answer *a, size_t n, const bool *slow, size_t nw,
                      bool counted, bool *lng, int64_t *tmp) {
    if (counted) {
        for (size_t i = 0; i < n; i++) lng[i] = a[i].resend > 0 && !slow[a[i].t / pf->window_us];
        return;
    }
    for (size_t i = 0; i < n; i++) tmp[i] = first_token(pf, &a[i]);
    double cut = 2 * median_of(tmp, n);
    for (size_t w = 0, i = 0; w < nw && cut > 0; w++) {
        size_t lo = i;
        for (; i < n && a[i].t / pf->window_us == (fb_time_us)w; i++) continue;
        for (size_t j = lo; j < i && !slow[w] && i - lo >= 5; j++)
            lng[j] = first_token(pf, &a[j]) >= cut;
    }
}

#define BURST_MIN 5     /* long answers in a window, for a burst of them */
#define BURST_SHARE 0.2 /* and their share of its answers, at least (and 3x the log's) */

/*
 * With every attempt visible, long answers are the first-token distribution's tail, unless
 * they crowd into a window: a burst (a client that stalled, its answers read late; a slowdown
 * of some of the provider's answers) in a window that is not slow as a whole (its lower
 * quartile stays). Such a window keeps its long answers marked, for a `slow` fault over their
 * share that adds the time the stall held them (mixed_faults, hidden_delay: a delay, not a
 * factor), where they are at least BURST_MIN, BURST_SHARE of the window's answers
 * and three times the log's share; elsewhere they are unmarked and stay in the first token's
 * fit. The corpus's slowdown trace on a busy machine: the client's first 2 s read half of its
 * answers 30 to 800 ms late; in the first token's tail, the slow window multiplied them by 2.5
 * (p99 2.0 s where the log's was 0.8 s).
 */
static void keep_bursts(const imp_pfit *pf, const answer *a, size_t n, size_t nw,
                        const bool *inslow, bool *lng) {
    size_t nlong = 0;
    for (size_t i = 0; i < n; i++) {
        lng[i] = lng[i] && !inslow[i]; /* a slow fault's own, at its window's edge */
        nlong += lng[i];
    }
    double overall = n ? (double)nlong / (double)n : 0;
    for (size_t w = 0, i = 0; w < nw; w++) {
        size_t lo = i, k = 0;
        for (; i < n && a[i].t / pf->window_us == (fb_time_us)w; i++) k += lng[i];
        double share = i > lo ? (double)k / (double)(i - lo) : 0;
        if (k >= BURST_MIN && share >= BURST_SHARE && share >= 3 * overall) continue;
        for (size_t j = lo; j < i; j++) lng[j] = false;
    }
}

/*
 * The windows with long answers, merged down to the slow faults left (IMP_SLOW_MAX);
 * before[w] is the number of answers outside slow windows before window w.
 */
static size_t mixed_windows(const imp_pfit *pf, const answer *a, size_t n, const bool *slow,
                            size_t nw, const bool *lng, mix *m, size_t *before) {
    size_t nm = 0;
    before[0] = 0;
    for (size_t w = 0, i = 0; w < nw; w++) {
        size_t lo = i, nlong = 0;
        double sum = 0;
        for (; i < n && a[i].t / pf->window_us == (fb_time_us)w; i++)
            if (lng[i]) nlong++, sum += (double)a[i].d;
        before[w + 1] = before[w] + (slow[w] ? 0 : i - lo);
        if (nlong > 0) m[nm++] = (mix){w, w + 1, i - lo, nlong, sum};
    }
    size_t cap = IMP_SLOW_MAX - pf->nslow;
    while (nm > cap && nm > 1) {
        size_t best = 0;
        double d = INFINITY;
        for (size_t j = 0; j + 1 < nm; j++) {
            double x = fabs((double)m[j].nlong / (double)m[j].k -
                            (double)m[j + 1].nlong / (double)m[j + 1].k);
            if (x < d) d = x, best = j;
        }
        mix *x = &m[best], *y = &m[best + 1];
        size_t gap = before[y->w0] - before[x->w1]; /* the answers of the windows between */
        *x = (mix){x->w0, y->w1, x->k + gap + y->k, x->nlong + y->nlong, x->long_us + y->long_us};
        memmove(y, y + 1, (nm - best - 2) * sizeof *y);
        nm--;
    }
    return nm;
}

#define SPREAD_MIN 4     /* long answers, for a delay that is a distribution */
#define SPREAD_RATIO 1.5 /* and their delays' p90 over their p10, at least */

static int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/*
 * Hidden retries, and a burst's stall, as a delay, not a factor: each long answer of mix m took
 * its retries' time (an error's latency, a backoff or a Retry-After, a timeout) plus an answer,
 * or the time a stalled client held it, so its duration less the latency for its own tokens
 * (the fast answers' median first token plus its tokens at the time per token) is what the
 * retries or the stall added, whatever the tokens. As a factor (its duration over that
 * latency) the replay multiplied it by another answer's latency, drawn apart: a short answer's
 * wait ratio on a long answer's tokens stretched the tail (the plain trace: p99 3.0 s to 6.8 s
 * over 30 seeds for the log's 4.5 s, two waits of about 2.2 s); a burst's one factor put
 * stalled copies of the corpus's slowdown trace up to 12.6% low at p99 (docs/import.md).
 * The delays in up to IMP_FACTOR_POINTS groups of equal count, each its mean, weighted by its
 * count, when they spread (SPREAD_MIN of them, p90 SPREAD_RATIO times p10 or more); else one
 * number, their mean.
 */
static void hidden_delay(imp_fault *f, const imp_pfit *pf, const answer *a, size_t n,
                         const bool *slow, const bool *lng, const mix *m, double fast_ttft,
                         double *r) {
    size_t k = 0;
    double mean = 0;
    for (size_t i = answer_at(a, n, (fb_time_us)m->w0 * pf->window_us);
         i < n && a[i].t < (fb_time_us)m->w1 * pf->window_us; i++) {
        if (!lng[i] || slow[a[i].t / pf->window_us]) continue;
        double base = fast_ttft + (a[i].tokens > 0 ? (double)pf->per_token_us * a[i].tokens : 0);
        r[k] = fmax(0, (double)a[i].d - base);
        mean += r[k++];
    }
    f->factor = 1;
    f->factor_n = f->delay_n = 0;
    f->delay_us = k ? round(mean / (double)k) : 0;
    if (k < SPREAD_MIN) return;
    qsort(r, k, sizeof *r, by_value);
    double p10 = r[(size_t)(0.1 * (double)(k - 1))], p90 = r[(size_t)ceil(0.9 * (double)(k - 1))];
    if (!(p10 > 0) || p90 < SPREAD_RATIO * p10) return;
    size_t groups = k < IMP_FACTOR_POINTS ? k : IMP_FACTOR_POINTS;
    for (size_t g = 0; g < groups; g++) {
        size_t lo = g * k / groups, hi = (g + 1) * k / groups;
        double sum = 0;
        for (size_t i = lo; i < hi; i++) sum += r[i];
        double v = round(sum / (double)(hi - lo) / 1000) * 1000; /* whole milliseconds */
        if (f->delay_n > 0 && f->delay_v[f->delay_n - 1] == v) {
            f->delay_w[f->delay_n - 1] += (double)(hi - lo);
        } else {
            f->delay_v[f->delay_n] = v;
            f->delay_w[f->delay_n++] = (double)(hi - lo);
        }
    }
    if (f->delay_n < 2) f->delay_n = 0; /* one value after all: the number */
}

static void mixed_faults(imp_incident *inc, imp_pfit *pf, const answer *a, size_t n,
                         const bool *slow, size_t nw, const bool *lng, int64_t *tmp) {
    mix *m = fit_malloc(&inc->oom, (nw + 1) * sizeof *m);
    size_t *before = fit_malloc(&inc->oom, (nw + 1) * sizeof *before);
    double *r = fit_malloc(&inc->oom, (n + 1) * sizeof *r);
    size_t nm = m && before && r ? mixed_windows(pf, a, n, slow, nw, lng, m, before) : 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (!lng[i] && !slow[a[i].t / pf->window_us]) tmp[k++] = first_token(pf, &a[i]);
    double fast_ttft = k ? median_of(tmp, k) : 0;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (!lng[i] && !slow[a[i].t / pf->window_us]) tmp[k++] = a[i].d;
    double fast_us = k ? median_of(tmp, k) : 0;
    for (size_t j = 0; j < nm && fast_us > 0; j++) {
        double factor = m[j].long_us / (double)m[j].nlong / fast_us;
        fb_time_us at = (fb_time_us)m[j].w0 * pf->window_us;
        if (pf->nslow >= IMP_SLOW_MAX || at >= inc->duration_us || factor < 1.2) continue;
        imp_fault *f = &pf->slow[pf->nslow++];
        *f = (imp_fault){.kind = SIM_FAULT_SLOW,
                         .at_us = at,
                         .for_us = (fb_time_us)(m[j].w1 - m[j].w0) * pf->window_us,
                         .fraction = round((double)m[j].nlong / (double)m[j].k * 1e4) / 1e4,
                         .factor = 1,
                         .retry_after_us = FB_TIME_NONE,
                         .hits = (uint32_t)m[j].nlong,
                         .attempts = (uint32_t)m[j].k};
        /* hidden retries add their waits (one retry, or two), a stall the time it held the
           answers: a delay either way, not a factor (docs/import.md) */
        hidden_delay(f, pf, a, n, slow, lng, &m[j], fast_ttft, r);
    }
    free(m);
    free(before);
    free(r);
}

/* A burst's long answers that no slow fault took (slow_faults[from..]: under the 1.2x a
   fault needs, or over the cap) stay in the first token's fit. */
static void unmark_uncovered(const imp_pfit *pf, const answer *a, size_t n, uint32_t from,
                             bool *lng) {
    for (size_t i = 0; i < n; i++) {
        bool in = false;
        for (uint32_t j = from; j < pf->nslow && lng[i] && !in; j++)
            in = a[i].t >= pf->slow[j].at_us && a[i].t - pf->slow[j].at_us < pf->slow[j].for_us;
        lng[i] = in;
    }
}

/* The first-token distribution from the answers that neither a slow window nor hidden
   retries lengthened. */
static void fit_ttft(imp_pfit *pf, const answer *a, size_t n, const bool *inslow, const bool *lng,
                     int64_t *tmp) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!inslow[i] && !lng[i]) tmp[k++] = first_token(pf, &a[i]);
    imp_sort(tmp, k);
    pf->ttft = imp_fit_dist(tmp, k);
}

void imp__fit_latency(imp_incident *inc, uint32_t p) {
    imp_pfit *pf = &inc->prov[p];
    size_t cap = pf->attempts + 1, n = 0, nerr = 0;
    answer *a = fit_malloc(&inc->oom, cap * sizeof *a);
    int64_t *errs = fit_malloc(&inc->oom, cap * sizeof *errs),
            *tmp = fit_malloc(&inc->oom, 2 * cap * sizeof *tmp);
    if (a && errs && tmp) n = answers(inc, p, a, errs, &nerr);
    pf->successes = (uint32_t)n;
    imp_sort(errs ? errs : tmp, errs ? nerr : 0);
    if (errs) pf->error = imp_fit_dist(errs, nerr);
    size_t nw = n ? (size_t)(a[n - 1].t / pf->window_us) + 1 : 0;
    bool *slow = fit_calloc(&inc->oom, nw + 1, sizeof *slow),
         *lng = fit_calloc(&inc->oom, n + 1, sizeof *lng),
         *inslow = fit_calloc(&inc->oom, n + 1, sizeof *inslow);
    if (n > 0 && slow && lng && inslow && tmp) {
        pf->per_token_us = per_token(pf, a, n);
        double q = mark_slow(pf, a, n, nw, slow, tmp);
        bool hidden = inc->log->hidden_attempts > 0, counted = false;
        for (size_t i = 0; hidden && i < n; i++) counted |= a[i].resend > 0;
        mark_long(pf, a, n, slow, nw, counted, lng, tmp);
        slow_faults(inc, pf, a, n, slow, nw, q, inslow, tmp);
        if (!hidden) keep_bursts(pf, a, n, nw, inslow, lng);
        uint32_t before = pf->nslow;
        mixed_faults(inc, pf, a, n, slow, nw, lng, tmp);
        if (!hidden) unmark_uncovered(pf, a, n, before, lng);
        fit_ttft(pf, a, n, inslow, lng, tmp);
    }
    free(slow);
    free(lng);
    free(inslow);
    free(a);
    free(errs);
    free(tmp);
}
