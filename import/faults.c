/*
 * faults.c - a provider's fault timeline, fitted from what its attempts saw; see
 * incident.h and docs/import.md ("Fitting").
 *
 * Attempts are counted per cell (a fifth of the fitting window) by what they got: an
 * answer, or one of the provider's error kinds (a status, a timeout, a reset). Adjacent
 * cells are merged bottom-up, the
 * most alike first, while the merge is not rejected by a likelihood-ratio test (G-test,
 * p < 0.001 for "these differ") or while there are more faults than a provider may have.
 * Each boundary left is then moved to the split, between two attempts inside the cells
 * on either side, that the two segments' shares explain best. Each segment's share of
 * each error kind becomes a fault; as the fault model lets the first matching fault
 * answer (scenario/fault.h), the k-th fault's fraction is its share over what the earlier
 * ones left. A segment that merging joined but that differs inside is split again at
 * its best cell boundary (split_one); a kind's few hits at a segment's edge join the
 * neighbour where that kind is common, unless the two differ (join_edge).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/fitint.h"

#define CATS (IMP_KINDS_MAX + 1) /* the error kinds, then the answers */

typedef struct seg {
    fb_time_us start, end;
    uint32_t n, c[CATS];
} seg;

typedef struct obs {
    fb_time_us t;
    int8_t cat; /* error kind, or nkinds for an answer */
    fb_time_us retry_after_us;
    uint8_t retry; /* its request's attempts before it, at most 255 (a fault's retry_fraction) */
} obs;

typedef struct fitter {
    imp_incident *inc;
    imp_pfit *pf;
    obs *o;
    size_t n;
    seg *s;
    size_t ns;
    uint32_t cats;
    fb_time_us cell_us;
} fitter;

#define CELLS_PER_WINDOW 5

static int by_time(const void *a, const void *b) {
    const obs *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static size_t observations(fitter *F, uint32_t p) {
    const imp_incident *inc = F->inc;
    size_t n = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            if (a->provider != p) continue;
            int k = imp__fit_kind(inc->log, F->pf, a);
            if (k == IMP_FIT_LEFT_OUT) continue;
            /* a first attempt when the replay sends it: at its request's arrival (the SDK's
               span starts a few ms before its first HTTP span: a window placed from that
               attempt's start would leave its replay just outside) */
            fb_time_us t = fit_t(inc, a), at = q->start_us - inc->origin_us;
            if (i == q->first && at >= 0 && at < t) t = at;
            F->o[n++] = (obs){t, (int8_t)(k < 0 ? (int)F->pf->nkinds : k), a->retry_after_us,
                              (uint8_t)(i - q->first < 255 ? i - q->first : 255)};
        }
    }
    qsort(F->o, n, sizeof *F->o, by_time);
    return n;
}

/* ---- merging ---- */

/* Chi-square at p = 0.001 for 1..8 degrees of freedom. */
static double critical(int df) {
    static const double chi2[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12};
    return df <= 0 ? INFINITY : chi2[df < 8 ? df : 8];
}

/* The G statistic of "a and b have the same shares", and its degrees of freedom. */
static double g_test(const seg *a, const seg *b, uint32_t cats, int *df) {
    double g = 0, n = (double)a->n + (double)b->n;
    *df = -1;
    for (uint32_t j = 0; j < cats && n > 0; j++) {
        double x = a->c[j], y = b->c[j], p = (x + y) / n;
        if (x + y == 0) continue;
        ++*df;
        if (x > 0) g += x * log(x / ((double)a->n * p));
        if (y > 0) g += y * log(y / ((double)b->n * p));
    }
    return 2 * g;
}

static uint32_t faults_of(const seg *s, uint32_t kinds) {
    uint32_t f = 0;
    for (uint32_t j = 0; j < kinds; j++) f += s->c[j] > 0;
    return f;
}

static void merge(fitter *F, size_t i) {
    seg *a = &F->s[i], *b = &F->s[i + 1];
    a->end = b->end;
    a->n += b->n;
    for (uint32_t j = 0; j < CATS; j++) a->c[j] += b->c[j];
    memmove(b, b + 1, (F->ns - i - 2) * sizeof *b);
    F->ns--;
}

/*
 * Merge the most alike neighbours while they do not differ, or while faults are too many.
 * "Alike" is how far the G statistic stays below its critical value; when faults must go,
 * the pair with the smallest G goes first, whatever the test says. `placed`: the segments'
 * edges were placed where their shares differ most (place_edges, join_edges), so the test
 * pays for that search as split_one does, 2 ln(cells) of the pair: a run of six hangs in a
 * row inside a 40% hang window (0.4^6 at each of some 300 attempts: about one a window) was
 * hugged by its edges into a 145 ms segment at 100% that the plain test (G 11.0 against
 * 10.8) kept apart, and the window was fitted as three faults.
 */
static void merge_segments(fitter *F, uint32_t cap, bool placed) {
    while (F->ns > 1) {
        uint32_t total = 0;
        for (size_t i = 0; i < F->ns; i++) total += faults_of(&F->s[i], F->pf->nkinds);
        size_t by_test = 0, by_g = 0;
        double low_excess = INFINITY, low_g = INFINITY;
        for (size_t i = 0; i + 1 < F->ns; i++) {
            int df = 0;
            double g = g_test(&F->s[i], &F->s[i + 1], F->cats, &df);
            double excess = g - critical(df); /* below 0: the two do not differ */
            if (placed) {
                double cells = (double)(F->s[i + 1].end - F->s[i].start) / (double)F->cell_us;
                excess -= 2 * log(cells > 1 ? cells : 1);
            }
            if (excess < low_excess) {
                low_excess = excess;
                by_test = i;
            }
            if (g < low_g) {
                low_g = g;
                by_g = i;
            }
        }
        if (low_excess < 0)
            merge(F, by_test);
        else if (total > cap)
            merge(F, by_g);
        else
            break;
    }
}

/* ---- splitting what merging joined ---- */

static void count_range(const fitter *F, fb_time_us a, fb_time_us b, seg *out);
static size_t first_at(const fitter *F, fb_time_us t);

/*
 * Merging cell by cell can chain: each small step is not significant, and a stretch that
 * differs is absorbed. Each segment is therefore tried at its best cell boundary, as in
 * binary segmentation, and split when the G statistic there passes the critical value
 * plus 2 ln(cells), the price of having looked at every boundary.
 */
static bool split_one(fitter *F, size_t i, size_t cap) {
    const seg *s = &F->s[i];
    size_t cells = (size_t)((s->end - s->start) / F->cell_us);
    if (cells < 2 || F->ns >= cap) return false;
    seg left = {s->start, s->start, 0, {0}}, right, best_l = left;
    double best = -INFINITY;
    size_t k = first_at(F, s->start);
    for (size_t c = 1; c < cells; c++) {
        fb_time_us at = s->start + (fb_time_us)c * F->cell_us;
        for (; k < F->n && F->o[k].t < at; k++) {
            left.n++;
            left.c[F->o[k].cat]++;
        }
        left.end = at;
        right = (seg){at, s->end, s->n - left.n, {0}};
        for (uint32_t j = 0; j < CATS; j++) right.c[j] = s->c[j] - left.c[j];
        int df = 0;
        double g = g_test(&left, &right, F->cats, &df),
               excess = g - critical(df) - 2 * log((double)cells);
        if (excess > best) {
            best = excess;
            best_l = left;
        }
    }
    if (best <= 0) return false;
    memmove(&F->s[i + 1], &F->s[i], (F->ns - i) * sizeof *F->s);
    F->ns++;
    F->s[i] = best_l;
    count_range(F, best_l.end, F->s[i + 1].end, &F->s[i + 1]);
    return true;
}

static void split_segments(fitter *F, size_t cap) {
    for (size_t i = 0; i < F->ns;)
        if (!split_one(F, i, cap)) i++;
}

/* ---- edges ---- */

static size_t first_at(const fitter *F, fb_time_us t) {
    size_t lo = 0, hi = F->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (F->o[mid].t < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double share_log(const seg *s, uint32_t cat, uint32_t cats) {
    return log((s->c[cat] + 0.5) / (s->n + 0.5 * cats));
}

static double errors_share(const seg *s, uint32_t kinds) {
    uint32_t e = 0;
    for (uint32_t j = 0; j < kinds; j++) e += s->c[j];
    return s->n ? (double)e / (double)s->n : 0;
}

/* The split of [lo, hi) between a (left) and b (right) that their shares explain best: at
   the first attempt of the side with more errors (to the millisecond, which holds it). */
static fb_time_us best_split(const fitter *F, const seg *a, const seg *b, fb_time_us lo,
                             fb_time_us hi) {
    size_t i0 = first_at(F, lo), i1 = first_at(F, hi), best = i0;
    double sum = 0, top = 0;
    for (size_t i = i0; i < i1; i++) {
        uint32_t c = (uint32_t)F->o[i].cat;
        sum += share_log(a, c, F->cats) - share_log(b, c, F->cats);
        if (sum > top) {
            top = sum;
            best = i + 1;
        }
    }
    if (best == i0) return i0 < i1 ? F->o[i0].t / FB_US_PER_MS * FB_US_PER_MS : lo;
    if (best == i1 || errors_share(a, F->pf->nkinds) > errors_share(b, F->pf->nkinds))
        /* a fault that ends: just after its last attempt */
        return (F->o[best - 1].t / FB_US_PER_MS + 1) * FB_US_PER_MS;
    /* a fault that starts, or grows: at its first attempt's start */
    return F->o[best].t / FB_US_PER_MS * FB_US_PER_MS;
}

static void count_range(const fitter *F, fb_time_us a, fb_time_us b, seg *out) {
    *out = (seg){a, b, 0, {0}};
    for (size_t k = first_at(F, a); k < F->n && F->o[k].t < b; k++) {
        out->n++;
        out->c[F->o[k].cat]++;
    }
}

static void recount(fitter *F) {
    for (size_t i = 0; i < F->ns; i++) count_range(F, F->s[i].start, F->s[i].end, &F->s[i]);
}

static void place_edges(fitter *F) {
    fb_time_us w = F->cell_us, floor_t = 0;
    for (size_t i = 0; i + 1 < F->ns; i++) {
        seg *a = &F->s[i], *b = &F->s[i + 1];
        fb_time_us lo = b->start - w > a->start ? b->start - w : a->start;
        fb_time_us hi = b->start + w < b->end ? b->start + w : b->end;
        if (lo <= floor_t) lo = floor_t + 1;
        fb_time_us t = lo < hi ? best_split(F, a, b, lo, hi) : b->start;
        t = t / FB_US_PER_MS * FB_US_PER_MS; /* to the millisecond */
        if (t <= floor_t) t = floor_t + FB_US_PER_MS;
        a->end = b->start = t;
        floor_t = t;
    }
    recount(F);
    /* a fault must start inside the traffic window: later segments join the one before */
    while (F->ns > 1 && F->s[F->ns - 1].start >= F->inc->duration_us) merge(F, F->ns - 2);
}

/*
 * The hits of a kind at a segment's edge, next to a segment where that kind is common: the
 * stretch from the first of them to the edge (the last of them, on the other side) joins
 * the neighbour when the G-test cannot tell the two apart, at the critical value plus
 * 2 ln(cells) (the stretch was chosen where the hits are, as split_one chooses its
 * boundary). A window of 60% 503s whose first 2 s drew 3 errors in 16 attempts (a run of
 * seven answers at its start) is closer in shares to the clean time before it, and merging
 * put them there; written where they were seen, they made a second window (6.0-6.7 s at
 * 37.5%) and the true one started 2 s late. Neither side can be told from the stretch:
 * one window, not two.
 */
static bool join_edge(fitter *F, size_t i, uint32_t k, bool tail) {
    seg *a = &F->s[i], *b = &F->s[i + 1];
    const seg *from = tail ? a : b, *to = tail ? b : a;
    if (from->c[k] == 0 || to->c[k] == 0 ||
        (double)to->c[k] / to->n <= (double)from->c[k] / from->n)
        return false;
    size_t i0 = first_at(F, from->start), i1 = first_at(F, from->end), j = i1;
    for (size_t m = i0; m < i1; m++)
        if (F->o[m].cat == (int8_t)k) {
            j = m;
            if (tail) break; /* the first of them; else the last */
        }
    if (j == i1) return false;
    fb_time_us t = tail ? F->o[j].t / FB_US_PER_MS * FB_US_PER_MS
                        : (F->o[j].t / FB_US_PER_MS + 1) * FB_US_PER_MS;
    if (t <= from->start || t >= from->end) return false;
    seg st;
    if (tail)
        count_range(F, t, a->end, &st);
    else
        count_range(F, b->start, t, &st);
    int df = 0;
    double cells = (double)(b->end - a->start) / (double)F->cell_us;
    double g = g_test(&st, to, F->cats, &df);
    if (g - critical(df) - 2 * log(cells > 1 ? cells : 1) >= 0) return false;
    a->end = b->start = t;
    count_range(F, a->start, a->end, a);
    count_range(F, b->start, b->end, b);
    return true;
}

static void join_edges(fitter *F) {
    for (size_t i = 0; i + 1 < F->ns; i++)
        for (uint32_t k = 0; k < F->pf->nkinds; k++) {
            join_edge(F, i, k, true);
            join_edge(F, i, k, false);
        }
}

/* ---- faults ---- */

static fb_time_us median_retry_after(const fitter *F, const seg *s, uint32_t cat) {
    int64_t v[256];
    size_t k = 0;
    for (size_t i = first_at(F, s->start); i < F->n && F->o[i].t < s->end && k < 256; i++)
        if (F->o[i].cat == (int8_t)cat && F->o[i].retry_after_us >= 0)
            v[k++] = F->o[i].retry_after_us;
    imp_sort(v, k);
    return k ? (fb_time_us)llround(imp_quantile(v, k, 0.5) / 1000) * FB_US_PER_MS : FB_TIME_NONE;
}

static sim_fault_kind kind_of(const imp_errkind *k) {
    switch (k->outcome) {
    case IMP_TIMEOUT:
        return SIM_FAULT_HANG;
    case IMP_RESET:
        return SIM_FAULT_RESET;
    case IMP_BROKEN:
        return SIM_FAULT_MIDSTREAM;
    default:
        return k->status == 429 ? SIM_FAULT_RATE_LIMIT : SIM_FAULT_OUTAGE;
    }
}

/* The segment's kinds, most attempts first (a broken answer last: it needs an answer). */
static void order_kinds(const fitter *F, const seg *s, uint32_t *order, uint32_t *n) {
    *n = 0;
    for (uint32_t j = 0; j < F->pf->nkinds; j++)
        if (s->c[j] > 0) order[(*n)++] = j;
    for (uint32_t i = 1; i < *n; i++)
        for (uint32_t k = i; k > 0; k--) {
            uint32_t x = order[k - 1], y = order[k];
            bool xb = F->pf->kinds[x].outcome == IMP_BROKEN,
                 yb = F->pf->kinds[y].outcome == IMP_BROKEN;
            if (xb > yb || (xb == yb && s->c[x] < s->c[y])) {
                order[k - 1] = y;
                order[k] = x;
            }
        }
}

/* Below this many attempts left in either class, first attempts and retries share one count;
   below this many of one retry's number (or of the ones after it), that retry shares the
   later ones' count. */
#define SPLIT_MIN 20
#define RETRY_N SIM_FAULT_RETRY_SHARES

/*
 * First attempts and retries apart (a fault's retry_fraction, issue 21): o[lo, hi) is the
 * fault's span, `kind` its kind and `before[]` the kinds before it. Each class's share is its
 * hits over what the earlier kinds leave of it, written as fraction and retry_fraction when
 * each class has SPLIT_MIN attempts left: with "even", the replay then gives each class the
 * log's count, where one count over both let the log's errors move between first attempts
 * and retries, and its requests between the 1-, 2- and 3-attempt buckets (a fault's
 * realised split is the log's draw even when both shares are one rate: the corpus' mock
 * draws each attempt alike). The G statistic (against chi-square at p = 0.001, the
 * merging's level) says whether the two differ beyond that draw; the description says which.
 * The retries by number likewise (retry_fraction's list): the second attempts, the third,
 * ..., each its own share while it and the ones after it pooled have SPLIT_MIN attempts
 * left, the rest pooled in the last (a live outage's second attempts failed 38% and its
 * third 71%, where one share of 50% over both replayed its two-attempt requests short).
 */
static void split_retries(const fitter *F, size_t lo, size_t hi, int8_t kind,
                          const uint32_t *before, uint32_t nbefore, imp_fault *out) {
    /* [0]: first attempts; [k]: k-th retries, the last slot every later one too */
    uint32_t by_left[RETRY_N + 1] = {0}, by_hits[RETRY_N + 1] = {0};
    for (size_t j = lo; j < hi; j++) {
        bool earlier = false;
        for (uint32_t e = 0; e < nbefore; e++) earlier |= F->o[j].cat == (int8_t)before[e];
        if (earlier) continue;
        uint32_t k = F->o[j].retry < RETRY_N ? F->o[j].retry : RETRY_N;
        by_left[k]++;
        by_hits[k] += F->o[j].cat == kind;
    }
    uint32_t left[2] = {by_left[0], 0}, hits[2] = {by_hits[0], 0};
    for (uint32_t k = 1; k <= RETRY_N; k++) {
        left[1] += by_left[k];
        hits[1] += by_hits[k];
    }
    if (left[0] < SPLIT_MIN || left[1] < SPLIT_MIN) return;
    /* m shares: retries 1..m-1 each their own, m and later pooled (their tail) */
    uint32_t m = 1, tail_left = left[1], tail_hits = hits[1];
    while (m < RETRY_N && by_left[m] >= SPLIT_MIN && tail_left - by_left[m] >= SPLIT_MIN) {
        out->retry_by[m - 1] = round((double)by_hits[m] / (double)by_left[m] * 1e6) / 1e6;
        out->retry_by_hits[m - 1] = by_hits[m];
        out->retry_by_left[m - 1] = by_left[m];
        tail_left -= by_left[m];
        tail_hits -= by_hits[m];
        m++;
    }
    out->retry_n = m;
    out->retry_by[m - 1] = round((double)tail_hits / (double)tail_left * 1e6) / 1e6;
    out->retry_by_hits[m - 1] = tail_hits;
    out->retry_by_left[m - 1] = tail_left;
    seg a = {0, 0, left[0], {hits[0], left[0] - hits[0]}},
        b = {0, 0, left[1], {hits[1], left[1] - hits[1]}};
    int df = 0;
    out->split = true;
    out->fraction = round((double)hits[0] / (double)left[0] * 1e6) / 1e6;
    out->retry_fraction = round((double)hits[1] / (double)left[1] * 1e6) / 1e6;
    out->split_g = g_test(&a, &b, 2, &df);
    out->split_critical = critical(df > 0 ? df : 1);
    out->first_hits = hits[0];
    out->first_left = left[0];
    out->retry_hits = hits[1];
    out->retry_left = left[1];
}

/*
 * The log's own hits of a fault (o[lo, hi), its kind `kind`, the kinds before it `before[]`),
 * attempt by attempt in time order: written as the fault's "recorded", the replay's k-th
 * attempt of a class in the window goes as the log's k-th did (the classes a split fault
 * counts apart: first attempts, then each retry share's; a fault not split: every attempt).
 * First attempts come at their recorded times (arrivals.replay) and the as-was replay's
 * retries at theirs (retry_at_ms), so the k-th is the same request's in the log and the
 * replay; a share spread evenly from a seeded offset failed others, and which requests fail
 * decides which retry, and when: the retries, the attempts-per-request buckets and the counts
 * of the corpus' traces missed by a few on every seed (docs/import.md, "The corpus").
 */
static void record_hits(fitter *F, size_t lo, size_t hi, int8_t kind, const uint32_t *before,
                        uint32_t nbefore, imp_fault *out) {
    util_buf *b = &F->inc->recorded;
    out->rec_at = b->len;
    /* split: class 0 the first attempts, class c the retries of share c (the c-th retries,
       the last share's every later one too), as scn_fault_decide counts them apart */
    uint32_t classes = out->split ? out->retry_n : 0;
    for (uint32_t c = 0; c <= classes; c++) {
        size_t from = b->len;
        for (size_t j = lo; j < hi; j++) {
            bool earlier = false;
            for (uint32_t e = 0; e < nbefore; e++) earlier |= F->o[j].cat == (int8_t)before[e];
            uint32_t r = F->o[j].retry < classes ? F->o[j].retry : classes;
            if (!earlier && r == c) util_buf_append(b, F->o[j].cat == kind ? "1" : "0", 1);
        }
        out->rec_len[c] = (uint32_t)(b->len - from);
    }
    out->rec_n = b->err == UTIL_BUF_OK ? classes + 1 : 0; /* none when out of memory */
}

/*
 * Each kind of the segment as a fault over the part of it where that kind was seen: from
 * its first attempt's start to just after its last (a fault where none of its kind came
 * would script errors the log never saw: a hang window to the end of traffic on the
 * strength of two timeouts near its start). The fraction is the kind's share of the
 * attempts there, over what the kinds before it leave there.
 */
static void emit_segment(fitter *F, const seg *s) {
    imp_pfit *pf = F->pf;
    uint32_t order[IMP_KINDS_MAX], n = 0;
    order_kinds(F, s, order, &n);
    size_t i0 = first_at(F, s->start), i1 = first_at(F, s->end);
    for (uint32_t i = 0; i < n && pf->nfaults + pf->nslow < SIM_FAULTS_MAX; i++) {
        const imp_errkind *k = &pf->kinds[order[i]];
        size_t a = i1, b = i0;
        for (size_t j = i0; j < i1; j++)
            if (F->o[j].cat == (int8_t)order[i]) {
                if (a == i1) a = j;
                b = j;
            }
        if (a == i1) continue;
        fb_time_us from = F->o[a].t / FB_US_PER_MS * FB_US_PER_MS;
        fb_time_us to = (F->o[b].t / FB_US_PER_MS + 1) * FB_US_PER_MS;
        if (a == i0 || from < s->start) from = s->start; /* from the segment's edge, placed */
        if (b + 1 == i1 || to > s->end) to = s->end;
        size_t lo = first_at(F, from), hi = first_at(F, to);
        uint32_t there = (uint32_t)(hi - lo), hits = 0, before = 0;
        for (size_t j = lo; j < hi; j++) {
            hits += F->o[j].cat == (int8_t)order[i];
            for (uint32_t e = 0; e < i; e++) before += F->o[j].cat == (int8_t)order[e];
        }
        double share = there ? (double)hits / (double)there : 0,
               left = there ? 1 - (double)before / (double)there : 1;
        double f = left > 1e-12 ? share / left : 1;
        seg part = {from, to, there, {0}};
        imp_fault *out = &pf->faults[pf->nfaults++];
        *out = (imp_fault){.kind = kind_of(k),
                           .at_us = from,
                           .for_us = to - from > 0 ? to - from : FB_US_PER_MS,
                           .fraction = f > 1 ? 1 : round(f * 1e6) / 1e6,
                           .status = k->status,
                           .retry_after_us = median_retry_after(F, &part, order[i]),
                           .hits = hits,
                           .attempts = there};
        split_retries(F, lo, hi, (int8_t)order[i], order, i, out);
        record_hits(F, lo, hi, (int8_t)order[i], order, i, out);
    }
}

/*
 * Each outage's and rate limit's latency, where the provider's faults answer more than one
 * status: the durations of its attempts answered with that status, over the slice. One
 * latency.error for all of them mixed a trace's 500s (1.3 to 1.6 s) and 429s (2.1 s), and
 * moved failures across the p90 (docs/import.md, "Latency").
 */
static void fault_latencies(imp_incident *inc, uint32_t p) {
    imp_pfit *pf = &inc->prov[p];
    int first = 0;
    bool several = false;
    for (uint32_t i = 0; i < pf->nfaults; i++) {
        const imp_fault *f = &pf->faults[i];
        if (f->kind != SIM_FAULT_OUTAGE && f->kind != SIM_FAULT_RATE_LIMIT) continue;
        if (first == 0) first = f->status;
        several |= f->status != first;
    }
    int64_t *v = several ? fit_malloc(&inc->oom, (pf->attempts + 1) * sizeof *v) : NULL;
    for (uint32_t i = 0; v && i < pf->nfaults; i++) {
        imp_fault *f = &pf->faults[i];
        if (f->kind != SIM_FAULT_OUTAGE && f->kind != SIM_FAULT_RATE_LIMIT) continue;
        size_t n = 0;
        for (FOR_SLICE(inc, r)) {
            const imp_request *q = &inc->log->req[r];
            for (uint32_t j = q->first; j < q->first + q->count && n <= pf->attempts; j++) {
                const imp_attempt *a = &inc->log->att[j];
                if (a->provider == p && a->outcome == IMP_STATUS && a->status == f->status)
                    v[n++] = a->end_us - a->start_us;
            }
        }
        imp_sort(v, n);
        if (n > 0) f->latency = imp_fit_dist(v, n);
    }
    free(v);
}

void imp__fit_faults(imp_incident *inc, uint32_t p) {
    imp_pfit *pf = &inc->prov[p];
    fb_time_us cell = pf->window_us / CELLS_PER_WINDOW;
    fitter F = {inc, pf, NULL, 0, NULL, 0, pf->nkinds + 1, cell > 0 ? cell : 1};
    if (pf->errors == 0) return;
    F.o = fit_malloc(&inc->oom, (pf->attempts + 1) * sizeof *F.o);
    if (F.o) F.n = observations(&F, p);
    size_t nw = F.n ? (size_t)(F.o[F.n - 1].t / F.cell_us) + 1 : 0;
    F.s = fit_calloc(&inc->oom, nw + 1, sizeof *F.s);
    for (size_t w = 0; F.s && w < nw; w++)
        F.s[w] = (seg){(fb_time_us)w * F.cell_us, (fb_time_us)(w + 1) * F.cell_us, 0, {0}};
    F.ns = F.s ? nw : 0;
    if (F.ns > 0) {
        recount(&F);
        merge_segments(&F, SIM_FAULTS_MAX - pf->nslow, false);
        split_segments(&F, nw);
        /* a split may leave too many faults */
        merge_segments(&F, SIM_FAULTS_MAX - pf->nslow, false);
        place_edges(&F);
        join_edges(&F);
        merge_segments(&F, SIM_FAULTS_MAX - pf->nslow, true); /* edges moved: alike again? */
    }
    for (size_t i = 0; i < F.ns; i++)
        if (F.s[i].n > 0) emit_segment(&F, &F.s[i]);
    free(F.o);
    free(F.s);
    fault_latencies(inc, p);
}
