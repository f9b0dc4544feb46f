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
            continue;
        }
        cf->at_us = malloc((cf->requests + 1) * sizeof *cf->at_us);
        if (cf->at_us == NULL) rc = imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
        uint32_t k = 0;
        for (FOR_SLICE(inc, r))
            if (cf->at_us && inc->log->req[r].cls == c)
                cf->at_us[k++] = inc->log->req[r].start_us - inc->origin_us;
    }
    free(tmp);
    return rc;
}
