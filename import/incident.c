/*
 * incident.c - from a log to a fitted incident: the slice of time, each provider's error
 * kinds and fitting window, the steps in order, and what the scenario must say it does
 * not know; see incident.h.
 */
#include "import/incident.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "import/fitint.h"
#include "import/source.h"

/* ---- the slice ---- */

static void iso(char *buf, size_t len, int64_t unix_us) {
    time_t t = (time_t)(unix_us / 1000000);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, len, "%lld us", (long long)unix_us);
}

static int too_long(const imp_incident *inc, const char *what, fb_time_us asked, imp_error *err) {
    char a[32], b[32], c[40], d[40];
    imp_human(a, sizeof a, asked);
    imp_human(b, sizeof b, inc->span_us);
    iso(c, sizeof c, inc->log->req[0].start_us);
    iso(d, sizeof d, inc->log->req[inc->log->nreq - 1].start_us);
    return imp_fail(err, FB_EINVAL, 0,
                    "%s %s asks for more than the log holds: its requests arrive over %s (from %s "
                    "to %s)",
                    what, a, b, c, d);
}

static int slice(imp_incident *inc, imp_error *err) {
    const imp_log *log = inc->log;
    const imp_build_opts *o = &inc->opts;
    int64_t first = log->req[0].start_us;
    inc->span_us = log->req[log->nreq - 1].start_us - first;
    if (o->start_us > inc->span_us) return too_long(inc, "--start", o->start_us, err);
    if (o->duration_us > 0 && o->start_us + o->duration_us > inc->span_us + FB_US_PER_S)
        return too_long(inc, o->start_us ? "--start + --duration" : "--duration",
                        o->start_us + o->duration_us, err);
    inc->origin_us = first + o->start_us;
    fb_time_us d = o->duration_us;
    if (d == 0) { /* to the last arrival, in whole seconds */
        d = inc->span_us - o->start_us + FB_US_PER_MS;
        d = (d + FB_US_PER_S - 1) / FB_US_PER_S * FB_US_PER_S;
    }
    if (d > IMP_DURATION_MAX)
        return imp_fail(err, FB_EINVAL, 0,
                        "the slice spans %.1f days, more than the 7 a scenario simulates "
                        "(limits.duration): import a part of it with --start and --duration",
                        (double)d / 86400e6);
    inc->duration_us = d;
    while (inc->r0 < log->nreq && log->req[inc->r0].start_us < inc->origin_us) inc->r0++;
    inc->r1 = inc->r0;
    while (inc->r1 < log->nreq && log->req[inc->r1].start_us < inc->origin_us + d) inc->r1++;
    if (inc->r1 - inc->r0 < 2)
        return imp_fail(err, FB_EINVAL, 0,
                        "%zu request(s) in the slice: at least 2 are needed to fit anything",
                        inc->r1 - inc->r0);
    if (o->window_us > d) return too_long(inc, "--window", o->window_us, err);
    return FB_OK;
}

/* ---- error kinds ---- */

/*
 * A cancelled attempt (its request ended first: a request timeout, a deadline, a hedge that
 * won) was not answered while it was waited for: the log cannot say whether it would have been.
 * One whose request ended unanswered, that waited longer than any answer its provider gave in
 * the slice (it gave one at least), with no first token nor output tokens recorded, is counted
 * as a hang: a hang fault cut by a request timeout left nothing else in the log (a 50% hang
 * under a 1.5 s request timeout was fitted as no fault at all). A shorter one may have been a
 * slow answer, and one of an answered request lost a race (a hedge) the replay does not run:
 * left out. The log cannot tell a hang from an answer slower than every one it holds; the
 * scenario's description says how many were read so.
 */
bool imp__fit_hang(const imp_log *log, const imp_pfit *pf, const imp_attempt *a) {
    return a->outcome == IMP_CANCELLED && !log->req[a->request].ok && a->ttft_us < 0 &&
           a->tokens_out <= 0 && pf->longest_answer_us > 0 &&
           a->end_us - a->start_us > pf->longest_answer_us;
}

int imp__fit_kind(const imp_log *log, const imp_pfit *pf, const imp_attempt *a) {
    if (a->outcome == IMP_OK) return IMP_FIT_ANSWER;
    uint8_t outcome = a->outcome;
    int16_t status = a->status;
    if (outcome == IMP_CANCELLED) {
        if (!imp__fit_hang(log, pf, a)) return IMP_FIT_LEFT_OUT;
        outcome = IMP_TIMEOUT;
        status = 0;
    }
    int near = -1;
    for (uint32_t k = 0; k < pf->nkinds; k++) {
        const imp_errkind *x = &pf->kinds[k];
        if (x->outcome != outcome) continue;
        if (x->status == status) return (int)k;
        if (near < 0 && x->status / 100 == status / 100) near = (int)k;
    }
    return near >= 0 ? near : 0; /* a rare kind, folded into the closest (else the first) */
}

static int by_count(const void *a, const void *b) {
    const imp_errkind *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    if (x->outcome != y->outcome) return x->outcome < y->outcome ? -1 : 1;
    return x->status < y->status ? -1 : x->status > y->status;
}

/* The longest an attempt of provider p waited for what its provider sent (an answer, an error
   status, a reset, a broken answer): not a timeout (the client's timer) nor a cancel. */
static fb_time_us longest_answer(const imp_incident *inc, uint32_t p) {
    fb_time_us longest = 0;
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            if (a->provider != p || a->outcome == IMP_TIMEOUT || a->outcome == IMP_CANCELLED)
                continue;
            if (a->end_us - a->start_us > longest) longest = a->end_us - a->start_us;
        }
    }
    return longest;
}

/* The provider's error kinds, the most common first (at most IMP_KINDS_MAX kept). */
static void collect_kinds(imp_incident *inc, uint32_t p) {
    imp_errkind all[64];
    uint32_t n = 0, other = 0;
    imp_pfit *pf = &inc->prov[p];
    pf->longest_answer_us = longest_answer(inc, p);
    for (FOR_SLICE(inc, r)) {
        const imp_request *q = &inc->log->req[r];
        for (uint32_t i = q->first; i < q->first + q->count; i++) {
            const imp_attempt *a = &inc->log->att[i];
            if (a->provider != p) continue;
            pf->attempts++;
            bool hang = imp__fit_hang(inc->log, pf, a);
            pf->cancelled_hangs += hang;
            pf->cancelled_left_out += a->outcome == IMP_CANCELLED && !hang;
            if (a->outcome == IMP_OK || (a->outcome == IMP_CANCELLED && !hang)) continue;
            pf->errors++;
            uint8_t outcome = hang ? (uint8_t)IMP_TIMEOUT : a->outcome;
            int16_t status = hang ? 0 : a->status;
            uint32_t k = 0;
            while (k < n && (all[k].outcome != outcome || all[k].status != status)) k++;
            if (k == n && n == 64) {
                other++;
                continue;
            }
            if (k == n) all[n++] = (imp_errkind){outcome, status, 0};
            all[k].count++;
        }
    }
    qsort(all, n, sizeof *all, by_count);
    pf->nkinds = n < IMP_KINDS_MAX ? n : IMP_KINDS_MAX;
    memcpy(pf->kinds, all, pf->nkinds * sizeof *all);
    pf->folded = other;
    for (uint32_t k = pf->nkinds; k < n; k++) pf->folded += all[k].count;
}

/* The smallest window of the ladder that holds 30 attempts on average (at most 4,000). */
static fb_time_us choose_window(const imp_incident *inc, const imp_pfit *pf) {
    static const int64_t ladder_s[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600};
    if (inc->opts.window_us > 0) return inc->opts.window_us;
    double per_s = (double)pf->attempts / ((double)inc->duration_us / 1e6);
    for (size_t i = 0; i < sizeof ladder_s / sizeof ladder_s[0]; i++) {
        fb_time_us w = ladder_s[i] * FB_US_PER_S;
        if (w > inc->duration_us) break;
        if (per_s * (double)ladder_s[i] >= 30 && inc->duration_us / w <= 4000) return w;
    }
    return inc->duration_us;
}

/* ---- what the scenario must say ---- */

static void describe_source(imp_incident *inc) {
    const imp_log *log = inc->log;
    char a[40], b[40], d[32];
    iso(a, sizeof a, inc->origin_us);
    iso(b, sizeof b, log->req[inc->r1 - 1].start_us);
    imp_human(d, sizeof d, inc->duration_us);
    util_buf_printf(&inc->notes,
                    "Imported by fusebox import from %s (%s): %zu requests and %u attempts "
                    "arriving from %s to %s, a traffic window of %s",
                    log->file, imp_format_name(log->format), inc->r1 - inc->r0, inc->attempts, a, b,
                    d);
    if (inc->r0 > 0 || inc->r1 < log->nreq)
        util_buf_printf(&inc->notes, " (a slice: the log holds %zu requests)", log->nreq);
    util_buf_printf(&inc->notes, ". Arrivals are the log's logical requests; the old policy's "
                                 "retries and fallbacks are not re-sent, the variants make their "
                                 "own.");
}

static void describe_reading(imp_incident *inc) {
    const imp_log *log = inc->log;
    util_buf *t = &inc->notes;
    if (log->hidden_attempts)
        util_buf_printf(t,
                        " %zu requests have no HTTP span of their own (the trace has one span per "
                        "logical request): the client's retries, if it made any, are invisible, "
                        "so their faults are fitted per request, after the retries, and as-was "
                        "makes one attempt for them. The time the retries took is in the answers: "
                        "where some were long (a first token at least twice the median), a slow "
                        "fault over that share of them.",
                        log->hidden_attempts);
    if (log->hidden_attempts && log->hidden_resent)
        util_buf_printf(t,
                        " Their spans count their resends (http.request.resend_count): %zu "
                        "requests were resent, %zu resends in all, at most %u for one; the "
                        "answers of those requests are the long ones (the slow faults' share).",
                        log->hidden_resent, log->hidden_resends, log->hidden_resend_max);
    if (!log->hidden_attempts && log->resend_seen)
        util_buf_printf(t,
                        " %zu attempts carry http.request.resend_count (their ordinal on the "
                        "provider less one)%s",
                        log->resend_seen,
                        log->resend_missing ? "" : ", each after as many attempts as it counts.");
    if (!log->hidden_attempts && log->resend_missing)
        util_buf_printf(t,
                        "; %zu attempts it counts have no span in the file (spans dropped or "
                        "sampled out?): the counts and the fits see fewer retries than were "
                        "made, and retry.attempts is read from the counts.",
                        log->resend_missing);
    if (log->no_call)
        util_buf_printf(t,
                        " %zu requests made no call (no HTTP span below their GenAI span, where "
                        "the others have them): refused before any attempt left.",
                        log->no_call);
    if (log->call_spans)
        util_buf_printf(t,
                        " %zu GenAI spans with HTTP spans below them (an SDK's own span of the "
                        "whole call, inside another GenAI span) were read as their request, not "
                        "as attempts.",
                        log->call_spans);
    if (log->aborted)
        util_buf_printf(t,
                        " %zu attempts ended with no status and no error (aborted by the "
                        "client): counted as timeouts.",
                        log->aborted);
    if (log->user_aborted)
        util_buf_printf(t,
                        " %zu attempts were in flight when the application aborted their call "
                        "(APIUserAbortError on the call's span): cancelled, their request ended "
                        "first, not timed out.",
                        log->user_aborted);
    if (log->assumed_status)
        util_buf_printf(t,
                        " %zu errors had no status, only a class name (e.g. "
                        "InternalServerError): a status was assumed (500 for server errors).",
                        log->assumed_status);
    if (log->ignored)
        util_buf_printf(t, " %zu HTTP spans outside any GenAI span were ignored.", log->ignored);
    if (log->orphans)
        util_buf_printf(t, " %zu spans name a parent that is not in the file: read as roots.",
                        log->orphans);
    if (log->ungrouped)
        util_buf_printf(t, " %zu records have no trace_id: each is counted as its own request.",
                        log->ungrouped);
}

static void describe_unknowns(imp_incident *inc) {
    util_buf *t = &inc->notes;
    if (inc->log->retry_after_seen == 0 && inc->pol.retry_after_inferred > 0)
        util_buf_printf(t,
                        " No answer recorded a Retry-After; the one on the faults is read from the "
                        "gaps before the retries (the as-was variant's description gives the "
                        "evidence, and retry_after %s).",
                        inc->pol.retry_after ? inc->pol.retry_after : "max");
    for (uint32_t p = 0; p < inc->log->nprov; p++)
        if (inc->prov[p].slow_capped)
            util_buf_printf(t,
                            " %s: %u slow period%s more than %dx slower than the rest: written "
                            "as %dx, the scenario format's limit.",
                            inc->log->prov[p].name, inc->prov[p].slow_capped,
                            inc->prov[p].slow_capped == 1 ? " was" : "s were", IMP_SLOW_FACTOR_MAX,
                            IMP_SLOW_FACTOR_MAX);
    bool partial = false, split = false;
    for (uint32_t p = 0; p < inc->log->nprov; p++) {
        for (uint32_t i = 0; i < inc->prov[p].nfaults; i++) {
            const imp_fault *f = &inc->prov[p].faults[i];
            partial |= f->fraction < 1 || (f->split && f->retry_fraction < 1);
            split |= f->split;
        }
        for (uint32_t i = 0; i < inc->prov[p].nslow; i++)
            partial |= inc->prov[p].slow[i].fraction < 1;
    }
    if (partial)
        util_buf_printf(t, " A fault with a fraction below 1 is realised evenly (\"sampling\": "
                           "\"even\"): the n attempts that meet it get floor(n x fraction) or "
                           "ceil(n x fraction) of its errors, the log's count when n is the log's, "
                           "not a new draw per attempt (\"draw\" for that).");
    if (split)
        util_buf_printf(t, " A fault with a retry_fraction counts its retries apart: their own "
                           "floor or ceil of n x retry_fraction; its first attempts, the log's "
                           "requests at their recorded times, fail where the log's did "
                           "(\"recorded\": the k-th in the window as the log's k-th), those "
                           "after the record evenly.");
    bool prices = false, windows = false;
    for (uint32_t p = 0; p < inc->log->nprov; p++) {
        prices |= inc->log->prov[p].price_in >= 0;
        windows |= inc->log->prov[p].context_window > 0;
    }
    util_buf_printf(t,
                    " Unknown from the log, and not invented: the providers' capacity "
                    "(concurrency, RPM, TPM) - the errors seen are scripted as faults, so a "
                    "policy that sends fewer retries does not relieve them here; what the "
                    "clients never sent (requests refused before any call left are missing); "
                    "the application's pods and workers (%u workers, twice the peak of requests "
                    "in flight, so that none waits for one)",
                    inc->pol.workers);
    if (!inc->pol.request_timeout_cut)
        util_buf_printf(t, " and its request timeout (%llds, twice the longest request)",
                        (long long)(inc->pol.request_timeout_us / FB_US_PER_S));
    if (!prices) util_buf_printf(t, "; prices (cost_usd is 0)");
    if (!windows) util_buf_printf(t, "; context windows (unlimited)");
    if (inc->log->retry_after_seen == 0 && inc->pol.retry_after_inferred == 0)
        util_buf_printf(t, "; Retry-After (no answer recorded one)");
    util_buf_printf(t, ". The as-was variant is the policy the attempts show (its description "
                       "gives the evidence); yours is a copy to edit. The expect lines check that "
                       "as-was reproduces the log within the stated bands: fusebox check fails if "
                       "the reproduction drifts.");
}

/* ---- what each fit chose ---- */

/* One line of the fits: in the fits text (a line) and in the scenario's description. */
static void fit_line(imp_incident *inc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fit_line(imp_incident *inc, const char *fmt, ...) {
    char line[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    util_buf_printf(&inc->fits, "%s\n", line);
    util_buf_printf(&inc->notes, " %s.", line);
}

/* A slow fault's line: over every answer (a factor), or over a share of them (a delay: a
   burst's stall, or hidden retries). */
static void describe_slow(imp_incident *inc, const char *name, const imp_fault *f) {
    char a[24], b[24];
    imp_human(a, sizeof a, f->at_us);
    imp_human(b, sizeof b, f->at_us + f->for_us);
    if (f->fraction < 1) {
        /* hidden retries, or a burst's stall: the time they took, added to the first token */
        char lo[24], hi[24], mean[24], dist[160];
        imp_human(mean, sizeof mean, (fb_time_us)f->delay_us);
        snprintf(dist, sizeof dist, "%s", mean);
        if (f->delay_n > 0) {
            imp_human(lo, sizeof lo, (fb_time_us)f->delay_v[0]);
            imp_human(hi, sizeof hi, (fb_time_us)f->delay_v[f->delay_n - 1]);
            snprintf(dist, sizeof dist, "%s to %s over %u values, mean %s", lo, hi, f->delay_n,
                     mean);
        }
        if (!inc->log->hidden_attempts)
            fit_line(inc,
                     "%s slow from %s to %s for %.0f%% of the answers: a delay of %s (a burst: "
                     "%u of its %u answers took twice the median first token or more, where the "
                     "window's lower quartile did not move; %s less the latency for their "
                     "tokens)",
                     name, a, b, f->fraction * 100, dist, f->hits, f->attempts,
                     f->delay_n > 0 ? "their durations" : "their mean duration");
        else if (f->delay_n > 0)
            fit_line(inc,
                     "%s hidden retries from %s to %s for %.0f%% of the answers: a delay of %s "
                     "(the durations of its %u long answers less the latency for their tokens: "
                     "one wait, or more)",
                     name, a, b, f->fraction * 100, dist, f->hits);
        else
            fit_line(inc,
                     "%s hidden retries from %s to %s for %.0f%% of the answers: a delay of %s "
                     "(the mean duration of its %u long answers less the latency for their "
                     "tokens)",
                     name, a, b, f->fraction * 100, dist, f->hits);
        return;
    }
    fit_line(inc,
             "%s slow from %s to %s: %.2fx (95%% interval %.2fx to %.2fx; the latency "
             "of its %u answers over the latency model's, against the answers outside)",
             name, a, b, f->factor, f->factor_lo, f->factor_hi, f->hits);
}

/* A class's sessions: replayed as sessions with their think time, or why not. */
static void describe_sessions(imp_incident *inc, uint32_t c) {
    const imp_cfit *cf = &inc->cls[c];
    if (cf->sess_requests == 0) return;
    char seen[200], w[300] = "", mean[24];
    snprintf(seen, sizeof seen,
             "%s sessions: %u of its %u requests name a session (gen_ai.conversation.id, "
             "session.id, or LiteLLM's metadata.session_id), %u sessions hold two or more",
             inc->log->cls[c], cf->sess_requests, cf->requests, cf->sess_multi);
    if (cf->sess_gaps == 0) {
        fit_line(inc, "%s: no think time to fit, the arrivals are the recorded times", seen);
        return;
    }
    imp_dist_why(&cf->think, w, sizeof w);
    if (cf->think.kind == IMP_EXPONENTIAL) {
        imp_human(mean, sizeof mean, (int64_t)cf->think.mean);
        size_t l = strlen(w);
        snprintf(w + l, sizeof w - l, ", mean %s", mean);
    } else if (cf->think.kind != IMP_EMPIRICAL) {
        imp_human(mean, sizeof mean, (int64_t)cf->think.median);
        size_t l = strlen(w);
        snprintf(w + l, sizeof w - l, ", median %s", mean);
    }
    if (cf->turns)
        fit_line(inc,
                 "%s; think time (from a request's end to its session's next start, %u gaps, "
                 "%u below 0 counted as 0): %s. Replayed as %u sessions: each starts at its "
                 "first request's recorded time, and its next request comes the log's own think "
                 "time after the one before ends (think_ms, in order: every variant's users "
                 "think as the log's did; without think_ms they are drawn from the fit; a "
                 "request without a session is a session of one)",
                 seen, cf->sess_gaps, cf->sess_overlaps, w, cf->nsess);
    else if (inc->opts.rate)
        fit_line(inc,
                 "%s; think time (%u gaps): %s. Not modelled: --arrivals rate writes a rate "
                 "curve, which has no sessions",
                 seen, cf->sess_gaps, w);
    else
        fit_line(inc,
                 "%s; think time (%u gaps): %s. Not modelled: %u of the gaps are below 0 (a "
                 "session's requests at once, more than %.0f%%), so the arrivals are the recorded "
                 "times",
                 seen, cf->sess_gaps, w, cf->sess_overlaps, 100 * 0.05);
}

/* A split fault's retries by number, as retry_fraction's list writes them. */
static void by_retry(imp_incident *inc, const char *name, const imp_fault *f) {
    char line[512];
    size_t n = 0;
    for (uint32_t k = 0; k < f->retry_n && n < sizeof line; k++) {
        bool last = k + 1 == f->retry_n;
        int w = snprintf(line + n, sizeof line - n, "%sattempt %u%s %.1f%% (%u of %u)",
                         k ? ", " : "", k + 2, last ? " and later" : "", f->retry_by[k] * 100,
                         f->retry_by_hits[k], f->retry_by_left[k]);
        if (w < 0) break;
        n += (size_t)w;
    }
    fit_line(inc,
             "%s %s retries by number (each with at least 20 attempts left, the later ones "
             "pooled), as retry_fraction's list: %s",
             name, scn_fault_kind_name(f->kind), line);
}

static void describe_fits(imp_incident *inc) {
    char a[24], b[24], w[300];
    for (uint32_t p = 0; p < inc->log->nprov; p++) {
        const imp_pfit *pf = &inc->prov[p];
        const char *name = inc->log->prov[p].name;
        for (uint32_t i = 0; i < pf->nslow; i++) describe_slow(inc, name, &pf->slow[i]);
        for (uint32_t i = 0; i < pf->nfaults; i++) {
            const imp_fault *f = &pf->faults[i];
            if (!f->split) continue;
            imp_human(a, sizeof a, f->at_us);
            imp_human(b, sizeof b, f->at_us + f->for_us);
            bool differ = f->split_g >= f->split_critical;
            fit_line(inc,
                     "%s %s from %s to %s: first attempts %.1f%% (%u of %u), retries %.1f%% (%u "
                     "of %u; a retry is an attempt after its request's first), the log's counts "
                     "as fraction and retry_fraction; %s: G-test %.1f %s %.2f (p = 0.001)",
                     name, scn_fault_kind_name(f->kind), a, b, f->fraction * 100, f->first_hits,
                     f->first_left, f->retry_fraction * 100, f->retry_hits, f->retry_left,
                     differ ? "they differ beyond chance" : "within chance, the log's own draw",
                     f->split_g, differ ? ">=" : "<", f->split_critical);
            if (f->retry_n > 1) by_retry(inc, name, f);
        }
        if (pf->ttft.known && pf->ttft.kind != IMP_CONSTANT) {
            imp_dist_why(&pf->ttft, w, sizeof w);
            fit_line(inc, "%s time to first token: %s", name, w);
        }
        if (pf->error.known && pf->error.kind != IMP_CONSTANT) {
            imp_dist_why(&pf->error, w, sizeof w);
            fit_line(inc, "%s error latency: %s", name, w);
        }
    }
    for (uint32_t c = 0; c < inc->log->ncls; c++) {
        const imp_cfit *cf = &inc->cls[c];
        if (cf->requests == 0) continue;
        if (cf->prompt.known && cf->prompt.kind != IMP_CONSTANT) {
            imp_dist_why(&cf->prompt, w, sizeof w);
            fit_line(inc, "%s prompt tokens: %s", inc->log->cls[c], w);
        }
        if (cf->completion.known && cf->completion.kind != IMP_CONSTANT) {
            imp_dist_why(&cf->completion, w, sizeof w);
            fit_line(inc, "%s completion tokens: %s", inc->log->cls[c], w);
        }
        describe_sessions(inc, c);
    }
    const imp_inferred *P = &inc->pol;
    if (P->retry_after && P->ra_gaps > 0) {
        imp_human(a, sizeof a, P->ra_gap_us);
        imp_human(b, sizeof b, P->ra_hint_us);
        fit_line(inc,
                 "retry_after %s: %u gaps after a Retry-After, median %s against a median header "
                 "of %s; they miss by (mean) %.0f%% as is, %.0f%% as max(header, backoff), %.0f%% "
                 "as the "
                 "backoff alone",
                 P->retry_after, P->ra_gaps, a, b, P->ra_miss[0] * 100, P->ra_miss[1] * 100,
                 P->ra_miss[2] * 100);
    }
}

/* ---- the steps ---- */

void imp_incident_free(imp_incident *inc) {
    if (inc == NULL) return;
    for (uint32_t c = 0; c < SIM_CLASSES_MAX; c++) {
        free(inc->cls[c].at_us);
        free(inc->cls[c].turns);
        free(inc->cls[c].think_rec);
        free(inc->cls[c].turn_at);
        free(inc->cls[c].order);
    }
    util_buf_free(&inc->notes);
    util_buf_free(&inc->evidence);
    util_buf_free(&inc->fits);
    util_buf_free(&inc->recorded);
    free(inc);
}

/*
 * A window fitted at or after the end of the traffic window (the retries of the last requests
 * can run on past their arrival; a client running late stretches them) cannot start a scenario's
 * fault: the loader refuses it. It is left out, and the notes say so.
 */
static void drop_past_end(imp_incident *inc, uint32_t p) {
    imp_pfit *pf = &inc->prov[p];
    uint32_t k = 0, dropped = 0;
    for (uint32_t i = 0; i < pf->nfaults; i++)
        if (pf->faults[i].at_us < inc->duration_us)
            pf->faults[k++] = pf->faults[i];
        else
            dropped++;
    pf->nfaults = k;
    k = 0;
    for (uint32_t i = 0; i < pf->nslow; i++)
        if (pf->slow[i].at_us < inc->duration_us)
            pf->slow[k++] = pf->slow[i];
        else
            dropped++;
    pf->nslow = k;
    if (dropped)
        util_buf_printf(&inc->notes,
                        " %s: %u fault window(s) fitted at or after the end of the traffic window "
                        "(%gs, the last arrival) left out: a scenario's fault starts within it, "
                        "so as-was's last retries meet no fault there.",
                        inc->log->prov[p].name, dropped, (double)inc->duration_us / 1e6);
}

int imp_incident_build(const imp_log *log, const imp_build_opts *o, imp_incident **out,
                       imp_error *err) {
    return imp_incident_build_texts(log, o, IMP_TEXT_MAX, out, err);
}

int imp_incident_build_texts(const imp_log *log, const imp_build_opts *o, size_t text_max,
                             imp_incident **out, imp_error *err) {
    *out = NULL;
    imp_incident *inc = calloc(1, sizeof *inc);
    if (inc == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    inc->log = log;
    inc->opts = *o;
    inc->notes.cap = inc->evidence.cap = inc->fits.cap = text_max;
    int rc = slice(inc, err);
    for (uint32_t p = 0; rc == FB_OK && p < log->nprov; p++) {
        collect_kinds(inc, p);
        inc->attempts += inc->prov[p].attempts;
        inc->prov[p].window_us = choose_window(inc, &inc->prov[p]);
        imp__fit_latency(inc, p);
        imp__fit_faults(inc, p);
        drop_past_end(inc, p);
    }
    if (rc == FB_OK) rc = imp__fit_classes(inc, err);
    if (rc == FB_OK) {
        imp__fit_policy(inc);
        imp__fit_checks(inc);
        describe_source(inc);
        describe_reading(inc);
        describe_fits(inc);
        describe_unknowns(inc);
    }
    bool oom = inc->oom;
    for (uint32_t p = 0; p < log->nprov; p++) oom |= inc->prov[p].oom;
    if (rc == FB_OK && (oom || inc->notes.err == UTIL_BUF_NOMEM ||
                        inc->evidence.err == UTIL_BUF_NOMEM || inc->fits.err == UTIL_BUF_NOMEM))
        rc = imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    /* a text cut at its cap would be a description that stops midway, said nowhere */
    const util_buf *full = inc->notes.err == UTIL_BUF_FULL      ? &inc->notes
                           : inc->evidence.err == UTIL_BUF_FULL ? &inc->evidence
                           : inc->fits.err == UTIL_BUF_FULL     ? &inc->fits
                                                                : NULL;
    if (rc == FB_OK && full != NULL)
        rc = imp_fail(err, FB_ECAP, 0,
                      "the scenario's %s would pass %zu bytes, the cap on an import's texts: "
                      "import fewer providers or classes, or a shorter stretch of the log",
                      full == &inc->notes      ? "description"
                      : full == &inc->evidence ? "as-was evidence"
                                               : "list of fits",
                      full->cap);
    if (rc != FB_OK) {
        imp_incident_free(inc);
        return rc;
    }
    *out = inc;
    return FB_OK;
}
