/*
 * classes.c - per traffic class: the arrivals (the recorded times, or a rate curve) and
 * the token distributions; see incident.h.
 *
 * The arrivals are the logical requests only: a retry or a fallback of the old policy is
 * an attempt of its request, never an arrival, so a replay does not send the old
 * amplification again. A rate curve is a ramp through the rate of each of at most 32
 * equal windows (a scenario's ramp has at most 32 points), at the windows' middles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/fitint.h"

static void rate_curve(imp_incident *inc, uint32_t c) {
    imp_cfit *cf = &inc->cls[c];
    fb_time_us d = inc->duration_us, w = (d / IMP_RAMP_MAX + FB_US_PER_S - 1) / FB_US_PER_S;
    w = (w > 0 ? w : 1) * FB_US_PER_S;
    uint32_t counts[IMP_RAMP_MAX] = {0};
    cf->nramp = (uint32_t)((d + w - 1) / w);
    if (cf->nramp > IMP_RAMP_MAX) cf->nramp = IMP_RAMP_MAX;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        fb_time_us k = (q->start_us - inc->origin_us) / w;
        if (q->cls == c && k < (fb_time_us)cf->nramp) counts[k]++;
    }
    for (uint32_t k = 0; k < cf->nramp; k++) {
        fb_time_us from = (fb_time_us)k * w, to = from + w < d ? from + w : d;
        cf->ramp[k].at_us = (from + to) / 2 / FB_US_PER_MS * FB_US_PER_MS;
        cf->ramp[k].rate = (double)counts[k] / ((double)(to - from) / 1e6);
    }
}

static void tokens(imp_incident *inc, uint32_t c, int64_t *tmp) {
    imp_cfit *cf = &inc->cls[c];
    size_t n = 0, streams = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        if (q->cls != c) continue;
        streams += q->stream;
        if (q->tokens_in >= 0) tmp[n++] = q->tokens_in;
    }
    imp_sort(tmp, n);
    cf->prompt = imp_fit_dist(tmp, n);
    n = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        if (q->cls == c && q->ok && q->tokens_out >= 0) tmp[n++] = q->tokens_out;
    }
    imp_sort(tmp, n);
    cf->completion = imp_fit_dist(tmp, n);
    cf->stream = streams * 2 > cf->requests;
}

/* ---- sessions ---- */

#define OVERLAP_SHARE 0.05 /* gaps below 0 (a session's requests at once), at most, to model */

typedef struct turn {
    uint64_t id;
    int64_t start, end;
    uint32_t r; /* the request's index in the log */
} turn;

static int by_session(const void *x, const void *y) {
    const turn *a = x, *b = y;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->start != b->start ? (a->start < b->start ? -1 : 1)
                                : (a->end > b->end) - (a->end < b->end);
}

static int by_start(const void *x, const void *y) {
    const turn *a = x, *b = y;
    if (a->start != b->start) return (a->start > b->start) - (a->start < b->start);
    return (a->end > b->end) - (a->end < b->end);
}

/* Sessions by their first request's start; at one instant, the fewer requests first, then the
   earlier in the log's order (id: where the session starts in the requests by session). */
static int by_start_then_id(const void *x, const void *y) {
    const turn *a = x, *b = y;
    int d = by_start(a, b);
    return d != 0 ? d : (a->id > b->id) - (a->id < b->id);
}

/* The sessions of class c into its at_us, turns and think_rec: from t (its n requests with a
   session, by session), each session's first request and its count, and each request without
   a session alone, in time order; each session's gaps from a request's end to its next start
   (below 0: 0), session by session in that order: the think times the replay's sessions use. */
static int write_sessions(imp_incident *inc, uint32_t c, const turn *t, size_t n, imp_error *err) {
    imp_cfit *cf = &inc->cls[c];
    turn *s = malloc((cf->requests + 1) * sizeof *s); /* id: where it starts in t; end: count */
    cf->think_rec = malloc((n + 1) * sizeof *cf->think_rec);
    cf->turn_at = malloc((n + 1) * sizeof *cf->turn_at);
    if (s == NULL || cf->think_rec == NULL || cf->turn_at == NULL) {
        free(s);
        return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    }
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && t[i].id == t[i - 1].id)
            s[ns - 1].end++;
        else
            s[ns++] = (turn){i, t[i].start, 1, 0};
    }
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        if (q->cls == c && q->session == 0)
            s[ns++] = (turn){UINT64_MAX, q->start_us - inc->origin_us, 1, (uint32_t)r};
    }
    qsort(s, ns, sizeof *s, by_start_then_id);
    cf->turns = malloc(ns * sizeof *cf->turns);
    if (cf->turns == NULL) {
        free(s);
        return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    }
    uint32_t g = 0, o = 0; /* the replay's order: each session's requests in turn */
    for (size_t i = 0; i < ns; i++) {
        cf->at_us[i] = s[i].start;
        cf->turns[i] = (uint32_t)s[i].end;
        cf->order[o++] = s[i].id == UINT64_MAX ? s[i].r : t[s[i].id].r;
        for (int64_t k = 1; k < s[i].end; k++) {
            const turn *a = &t[s[i].id + (uint64_t)k - 1], *b = a + 1;
            cf->turn_at[g] = b->start;
            cf->think_rec[g++] = b->start > a->end ? b->start - a->end : 0;
            cf->order[o++] = b->r;
        }
    }
    cf->nthink_rec = g;
    cf->nsess = (uint32_t)ns;
    free(s);
    return FB_OK;
}

/*
 * A class whose requests name their session (a conversation: gen_ai.conversation.id,
 * session.id, LiteLLM's metadata.session_id) is replayed as sessions when some session
 * holds two requests or more and they follow each other (at most OVERLAP_SHARE of the gaps
 * below 0, counted as 0): each session starts at its first request's recorded time, and
 * each next request comes a think time after the one before ends: the log's own gaps from a
 * request's end to its session's next start, in order (think_ms), with their fit
 * (imp_fit_think) written beside them. A request without a session is a session of one. So a
 * policy that makes the answers slower delays a session's next requests, as it delayed the
 * users; and the as-was replay's turns come when the log's did, where drawn think times put
 * each seed's turns elsewhere (the corpus' `sessions` trace: 299 first attempts in its 500
 * window, 290 on average with the thinks drawn again, sd 6.5).
 */
static int sessions(imp_incident *inc, uint32_t c, imp_error *err) {
    imp_cfit *cf = &inc->cls[c];
    size_t n = 0, all = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        all += q->cls == c;
        n += q->cls == c && q->session != 0;
    }
    cf->sess_requests = (uint32_t)n;
    if (n < 2) return FB_OK;
    turn *t = malloc(all * sizeof *t);
    int64_t *gaps = malloc(n * sizeof *gaps);
    if (!t || !gaps) {
        free(t);
        free(gaps);
        return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    }
    size_t k = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        if (q->cls == c && q->session != 0)
            t[k++] = (turn){q->session, q->start_us - inc->origin_us, q->end_us - inc->origin_us,
                            (uint32_t)r};
    }
    qsort(t, n, sizeof *t, by_session);
    size_t ng = 0;
    for (size_t i = 1; i < n; i++) {
        if (t[i].id != t[i - 1].id) continue;
        int64_t g = t[i].start - t[i - 1].end;
        cf->sess_overlaps += g < 0;
        gaps[ng++] = g > 0 ? g : 0;
        cf->sess_multi += i == 1 || t[i - 2].id != t[i].id;
    }
    cf->sess_gaps = (uint32_t)ng;
    int rc = FB_OK;
    if (ng > 0) {
        imp_sort(gaps, ng);
        cf->think = imp_fit_think(gaps, ng); /* written, or said only */
        if (cf->at_us && (double)cf->sess_overlaps <= OVERLAP_SHARE * (double)ng)
            rc = write_sessions(inc, c, t, n, err);
    }
    free(t);
    free(gaps);
    return rc;
}

int imp__fit_classes(imp_incident *inc, imp_error *err) {
    size_t total = inc->r1 - inc->r0;
    if (!inc->opts.rate && total > SIM_REPLAY_MAX)
        return imp_fail(err, FB_ECAP, 0,
                        "%zu arrivals: more than the %d a scenario replays; use --arrivals rate "
                        "(a rate curve), or a shorter --duration",
                        total, SIM_REPLAY_MAX);
    int64_t *tmp = malloc((total + 1) * sizeof *tmp);
    if (tmp == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        inc->cls[q->cls].requests++;
        inc->cls[q->cls].ok += q->ok;
    }
    int rc = FB_OK;
    for (uint32_t c = 0; rc == FB_OK && c < inc->log->ncls; c++) {
        imp_cfit *cf = &inc->cls[c];
        tokens(inc, c, tmp);
        if (inc->opts.rate) {
            rate_curve(inc, c);
            rc = sessions(inc, c, err); /* said, not written: a rate curve has no sessions */
            continue;
        }
        cf->at_us = malloc((cf->requests + 1) * sizeof *cf->at_us);
        cf->order = malloc((cf->requests + 1) * sizeof *cf->order);
        if (cf->at_us == NULL || cf->order == NULL)
            rc = imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
        uint32_t k = 0;
        for (FOR_SLICE(inc, r))
            if (rc == FB_OK && inc->log->req[r].cls == c) {
                cf->order[k] = (uint32_t)r;
                cf->at_us[k++] = inc->log->req[r].start_us - inc->origin_us;
            }
        if (rc == FB_OK) rc = sessions(inc, c, err);
    }
    free(tmp);
    return rc;
}
