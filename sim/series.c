/*
 * series.c - the time series, the baseline and spillover.
 *
 * Every tick of simulated time becomes one row (sim_row): what happened in
 * the tick (arrivals, ends, attempts, errors per provider, latency
 * percentiles) and the state at its end (in flight, queues, breakers).
 * Rows are written before any event at or after their tick's end, and
 * writing them never changes the model, so results do not depend on the
 * tick. The baseline is measured on the requests that end before the first
 * disturbance (a fault or a spike); a disturbance's spillover ends at the
 * first sliding window of `hold` that is back to the baseline. A
 * disturbance after whose end no full window fits in the traffic window is
 * undetermined (sim__stat_finalize), not "not recovered"; one followed by another is
 * judged only on windows that end before the next starts, and when it was not back by
 * then its spillover is measured to the next one's start, and said so.
 */
#include <math.h>
#include <string.h>

#include "sim/simint.h"

/* When the next row is due: its tick's end, or the end of traffic for the last one. */
fb_time_us sim__tick_end(const sim *s) {
    return s->next_tick_us < s->sc->duration_us ? s->next_tick_us : s->sc->duration_us;
}

/* True while a row is left to write (rows cover the traffic window only). */
bool sim__rows_left(const sim *s) {
    return s->next_tick_us - s->sc->tick_us < s->sc->duration_us;
}

void sim__close_baseline(sim *s) {
    if (s->baseline_ready) return;
    s->baseline_ready = true;
    if (s->base_ended >= 100) {
        s->sum->baseline_error_rate = (double)s->base_bad / (double)s->base_ended;
        s->sum->baseline_p99_us = fb_hist_percentile(&s->base_hist, 99);
    } else {
        /* no usable quiet period before the first disturbance: judge by the SLO */
        s->sum->baseline_error_rate = 0;
        s->sum->baseline_p99_us = s->sc->slo_latency_us;
    }
}

/*
 * Add the tick's row to the sliding window (dropping the oldest); true once it
 * is full. The tick's histogram is the ring's newest slot already; the slot
 * after it (the oldest, or one not used yet) becomes the next tick's, emptied
 * as its counts leave the window's sum.
 */
static bool window_slide(sim *s, const sim_row *row) {
    uint32_t i = s->win_pos, next = i == s->win_k ? 0 : i + 1;
    if (s->win_fill == s->win_k) {
        fb_hist_subtract_clear(&s->win_sum, &s->win_hist[next]);
        s->win_ended_sum -= s->win_ended[next];
        s->win_bad_sum -= s->win_bad[next];
    } else {
        s->win_fill++;
        fb_hist_clear(&s->win_hist[next]); /* first use of the slot: zero bytes (setup.c) */
    }
    s->win_ended[i] = row->ended;
    s->win_bad[i] = row->errors + row->slo_missed;
    fb_hist_merge(&s->win_sum, &s->win_hist[i]);
    s->win_ended_sum += row->ended;
    s->win_bad_sum += row->errors + row->slo_missed;
    s->win_pos = next;
    s->tick_hist = &s->win_hist[next];
    return s->win_fill == s->win_k;
}

/*
 * Slide the window by one tick and judge it: the window [ws, ws + hold) is
 * healthy when requests ended in it, its error (+ SLO miss) rate is within
 * the margin of the baseline and its p99 within the factor. The first
 * healthy window starting at or after a fault's end gives its spillover.
 */
static void spillover_step(sim *s, const sim_row *row) {
    const sim_spillover *sp = &s->sc->spillover;
    sim_summary *sum = s->sum;
    if (!window_slide(s, row)) return;
    fb_time_us ws = row->t_us + s->sc->tick_us - (fb_time_us)s->win_k * s->sc->tick_us;
    double rate = s->win_ended_sum ? (double)s->win_bad_sum / (double)s->win_ended_sum : 1.0;
    double p99 = (double)fb_hist_percentile(&s->win_sum, 99);
    bool healthy = s->win_ended_sum > 0 && rate <= sum->baseline_error_rate + sp->error_margin &&
                   p99 <= (double)sum->baseline_p99_us * sp->latency_factor;
    for (uint32_t k = 0; k < sum->fault_count; k++) {
        sim_fault_summary *f = &sum->faults[k];
        if (ws < f->end_us) continue;
        /* a window that reaches into the next disturbance judges that one, not this */
        if (f->next_us != FB_TIME_NONE && ws + sp->hold_us > f->next_us) continue;
        s->judged[k] = true; /* its recovery, or not, is known from here on */
        if (f->recovered || !healthy) continue;
        f->recovered = true;
        f->spillover_us = ws - f->end_us;
    }
}

/*
 * The share of pods whose breaker for provider p is open, and half-open, now:
 * the breaker of the outermost layer at or inside the routing layer that has
 * one for p (setup.c: share_layer).
 */
static void breaker_shares(const sim *s, uint32_t p, double *open_share, double *half_share) {
    uint32_t open = 0, half = 0, pods = s->npods;
    int l = s->provs[p].share_layer;
    if (l >= 0 && s->lays[l].cfg->breaker_scope == SIM_SCOPE_SHARED) {
        fb_breaker_state st = sim__seen_state(&s->stores[(size_t)l * s->P + p], s->now);
        open = sim__is_open(st) ? s->npods : 0;
        half = st == FB_BREAKER_HALF_OPEN ? s->npods : 0;
    } else if (l >= 0) {
        pods = 0; /* a gateway layer's: the share of its replicas */
        /* consecutive seats' breakers for p lie P apart; what the loop reads of s, read once (the
           calls into the breaker could change it, for all the compiler knows) */
        uint32_t first = seat_first(s, (uint32_t)l), end = seat_end(s, (uint32_t)l), P = s->P;
        const fb_breaker *b = &s->breakers[slot(s, (uint32_t)l, first, p)];
        const bool fleet = s->fleet != NULL;
        const fb_time_us now = s->now;
        for (uint32_t k = first; k < end; k++, b += P) {
            if (fleet && k < s->npods && !sim__fleet_pod_live(s, k)) continue; /* a slot */
            fb_breaker_state st = sim__seen_state(b, now);
            pods++;
            open += sim__is_open(st);
            half += st == FB_BREAKER_HALF_OPEN;
        }
    }
    *open_share = pods ? (double)open / pods : 0;
    *half_share = pods ? (double)half / pods : 0;
}

/* The concurrency limit for provider p now, mean over pods (setup.c: limit_layer); NaN: none. */
static double limit_mean(const sim *s, uint32_t p) {
    int l = s->provs[p].limit_layer;
    if (l < 0 || s->climits == NULL) return NAN;
    double sum = 0;
    uint32_t pods = 0;
    for (uint32_t k = seat_first(s, (uint32_t)l); k < seat_end(s, (uint32_t)l); k++) {
        if (s->fleet && k < s->npods && !sim__fleet_pod_live(s, k)) continue; /* a slot */
        sum += fb_conclimit_limit(&s->climits[slot(s, (uint32_t)l, k, p)]);
        pods++;
    }
    return pods ? sum / pods : NAN;
}

/*
 * t is inside a disturbance window; the span around t over which that holds
 * (from the last window edge at or before t to the next one after it) is
 * kept for sim__in_window_now.
 */
bool sim__in_window_at(sim *s, fb_time_us t) {
    bool in = false;
    fb_time_us from = INT64_MIN, to = FB_TIME_MAX;
    for (uint32_t i = 0; i < s->window_count; i++) {
        const window *w = &s->windows[i];
        if (t >= w->start_us && t < w->end_us) in = true;
        if (w->start_us <= t && w->start_us > from) from = w->start_us;
        if (w->end_us <= t && w->end_us > from) from = w->end_us;
        if (w->start_us > t && w->start_us < to) to = w->start_us;
        if (w->end_us > t && w->end_us < to) to = w->end_us;
    }
    s->in_window = in;
    s->in_window_from = from;
    s->in_window_to = to;
    return in;
}

/* The row's ends, from the tick's count of each (sim__stat_end). */
static void fill_ends(sim *s, sim_row *row) {
    const uint64_t *e = s->tick_ends;
    for (int k = 0; k < SIM_END_COUNT; k++) row->ended += e[k];
    row->success = e[SIM_END_SUCCESS];
    row->degraded = e[SIM_END_DEGRADED];
    row->errors = row->ended - row->success - row->degraded;
    memset(s->tick_ends, 0, sizeof s->tick_ends);
}

static void fill_row(sim *s, sim_row *row, fb_time_us t) {
    row->t_us = t;
    fill_ends(s, row);
    row->in_flight = s->live;
    row->pod_queue = s->pod_queue_total;
    row->busy_workers = s->busy_total;
    static const double ps[2] = {50, 99};
    int64_t q[2];
    fb_hist_percentiles(s->tick_hist, ps, 2, q);
    row->latency_p50_ms = (double)q[0] / 1e3;
    row->latency_p99_ms = (double)q[1] / 1e3;
    row->fault_active = false;
    for (uint32_t i = 0; i < s->window_count; i++)
        if (s->windows[i].start_us < t + s->sc->tick_us && s->windows[i].end_us > t)
            row->fault_active = true;
    for (uint32_t p = 0; p < s->P; p++) {
        prov *pr = &s->provs[p];
        row->p[p].attempts = pr->tick.attempts;
        for (int o = 0; o < FB_OUT_COUNT; o++)
            if (o != FB_OUT_SUCCESS) row->p[p].errors += pr->tick.outcomes[o];
        row->p[p].rate_limited = pr->tick.outcomes[FB_OUT_RATE_LIMITED];
        row->p[p].timeouts = pr->tick.outcomes[FB_OUT_TIMEOUT];
        row->p[p].in_service = pr->busy;
        row->p[p].queue = pr->qlive;
        breaker_shares(s, p, &row->p[p].open_share, &row->p[p].half_open_share);
        row->p[p].limit = limit_mean(s, p);
        row->p[p].conn_wait = pr->conn_waiting;
        sim__stat_provider_tick(s, p);
    }
    if (s->fleet) sim__fleet_row(s, row);
}

static void emit_row(sim *s, fb_time_us t) {
    sim_row *row = &s->row;
    fill_row(s, row, t);
    if (s->opts->on_row) s->opts->on_row(s->opts->ctx, row);
    /* the baseline ends where the first fault or spike begins */
    if (!s->baseline_ready && t + s->sc->tick_us > s->first_window_us) sim__close_baseline(s);
    /* the window takes the tick's histogram and hands the next tick an empty one */
    if (s->baseline_ready && s->win_k > 0)
        spillover_step(s, row);
    else
        fb_hist_clear(s->tick_hist);
    memset(row, 0, sizeof *row);
}

/*
 * Emit the rows of the ticks that end at or before `t`. A row covers
 * [start, start + tick), the last one cut at the end of traffic, and is
 * written before any event at or after its end. The clock only moves forward
 * (the port's clock may already be later).
 */
void sim__emit_ticks(sim *s, fb_time_us t) {
    while (s->rc == FB_OK && sim__rows_left(s) && sim__tick_end(s) <= t) {
        if (s->now < sim__tick_end(s)) s->now = sim__tick_end(s);
        emit_row(s, s->next_tick_us - s->sc->tick_us);
        s->next_tick_us += s->sc->tick_us;
    }
    sim__tick_due(s);
}

/*
 * When sim__emit_ticks has a row to write: the model's loop asks before each
 * event, and after the end of traffic (a storm's requests still retrying)
 * there is none left to write.
 */
void sim__tick_due(sim *s) {
    s->tick_due_us = sim__rows_left(s) ? sim__tick_end(s) : FB_TIME_MAX;
}
