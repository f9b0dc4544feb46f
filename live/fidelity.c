/* fidelity.c - whether a live run kept the scenario's timing; see fidelity.h. */
#include "live/fidelity.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *live_cause_name(live_cause c) {
    static const char *const names[] = {"none", "saturated",    "machine_busy",
                                        "lag",  "answers_late", "stalled"};
    return c <= LIVE_CAUSE_STALLED ? names[c] : "lag";
}

/* ---- the shortest time that matters ---- */

typedef struct shortest {
    fb_time_us us;
    char *what;
    size_t len;
} shortest;

static fb_time_us median_us(const sim_dist *d) {
    double v = d->a;
    if (d->kind == SIM_DIST_UNIFORM) v = (d->a + d->b) / 2;
    if (d->kind == SIM_DIST_EXPONENTIAL) v = d->a * log(2.0);
    return v > 0 ? (fb_time_us)llround(v) : 0;
}

__attribute__((format(printf, 3, 4))) static void consider(shortest *s, fb_time_us us,
                                                           const char *fmt, ...) {
    if (us <= 0 || us == FB_TIME_MAX || us == FB_TIME_NONE || (s->us > 0 && us >= s->us)) return;
    s->us = us;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->what, s->len, fmt, ap);
    va_end(ap);
}

/* What the providers and the traffic take. */
static void scenario_times(shortest *s, const sim_scenario *sc) {
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        const sim_provider *pv = &sc->providers[p];
        consider(s, median_us(&pv->ttft_us), "providers.%s.latency.ttft (median)", pv->name);
        consider(s, median_us(&pv->error_latency_us), "providers.%s.latency.error (median)",
                 pv->name);
        for (uint32_t f = 0; f < pv->fault_count; f++)
            consider(s, pv->faults[f].retry_after_us, "providers.%s.faults[%u].retry_after",
                     pv->name, f);
    }
    for (uint32_t k = 0; k < sc->class_count; k++) {
        const sim_class *c = &sc->classes[k];
        consider(s, median_us(&c->service_us), "traffic.%s.service (median)", c->name);
        if (c->arrivals == SIM_ARR_CLOSED || c->turns)
            consider(s, median_us(&c->think_us), "traffic.%s.think (median)", c->name);
    }
    consider(s, sc->pods.request_timeout_us, "pods.request_timeout");
}

/* What one provider's entry of a layer waits for; at = the layer's JSON path. */
static void provider_times(shortest *s, const sim_provider_policy *pp, const char *at,
                           const char *pname) {
    consider(s, pp->timeout_us, "%s.providers.%s.timeout", at, pname);
    if (!pp->has_breaker) return;
    consider(s, pp->breaker.open_us, "%s.breaker.open (%s)", at, pname);
    if (pp->breaker.mode == FB_BREAKER_MODE_TIME_WINDOW)
        consider(s, pp->breaker.window_us, "%s.breaker.window (%s)", at, pname);
}

/* What one layer waits for; an outer layer's one target is entry 0. */
static void layer_times(shortest *s, const sim_scenario *sc, const sim_layer *l, const char *at) {
    const fb_retry_config *r = &l->retry;
    if (r->attempts > 1 && r->backoff != FB_BACKOFF_NONE)
        consider(s, r->base_us, "%s.retry.backoff (base)", at);
    consider(s, r->attempt_timeout_us, "%s.retry.attempt_timeout", at);
    consider(s, r->deadline_us, "%s.retry.deadline", at);
    if (l->role == SIM_ROLE_OUTER)
        provider_times(s, &l->per_provider[0], at, "(inner)");
    else
        for (uint32_t p = 0; p < sc->provider_count; p++)
            provider_times(s, &l->per_provider[p], at, sc->providers[p].name);
    if (l->breaker_scope == SIM_SCOPE_SHARED)
        consider(s, l->sync_delay_us, "%s.breaker.sync_delay", at);
    if (l->degraded)
        consider(s, median_us(&l->degraded_latency_us), "%s.degraded.latency (median)", at);
}

/* What the variant's policies wait for. */
static void policy_times(shortest *s, const sim_scenario *sc, const sim_policy *pol) {
    char at[SIM_NAME_MAX * 2 + 32];
    for (uint32_t i = 0; i < pol->layer_count; i++) {
        if (pol->layered)
            snprintf(at, sizeof at, "variants.%s.layers[%u]", pol->name, i);
        else
            snprintf(at, sizeof at, "variants.%s", pol->name);
        layer_times(s, sc, &pol->layers[i], at);
    }
}

fb_time_us live_shortest_time(const sim_scenario *sc, uint32_t variant, char *what, size_t len) {
    shortest s = {0, what, len};
    if (len > 0) what[0] = '\0';
    scenario_times(&s, sc);
    if (variant < sc->variant_count) policy_times(&s, sc, &sc->variants[variant]);
    return s.us;
}

/* ---- the verdict ---- */

/* v rounded down to two significant digits: a time scale that errs on the safe side. */
static double round_down(double v) {
    if (!(v > 0)) return 0;
    double unit = pow(10, floor(log10(v)) - 1);
    return floor(v / unit) * unit;
}

/*
 * The time scale at which the busiest thread would be LIVE_TARGET_CPU busy
 * doing what the simulation does: its CPU per transfer times the attempts
 * the simulation makes (the live run, late, made fewer). 0 without one.
 */
static double by_demand(const live_fidelity *f, const live_stats *st,
                        const sim_summary *simulated) {
    if (simulated == NULL || simulated->attempts == 0 || st->wire.transfers == 0) return 0;
    double cpu_per_transfer = f->busiest_share * st->wall_s / (double)st->wire.transfers;
    double duration_s = (double)simulated->end_us / 1e6;
    if (!(cpu_per_transfer > 0) || !(duration_s > 0)) return 0;
    return LIVE_TARGET_CPU * duration_s / ((double)simulated->attempts * cpu_per_transfer);
}

/*
 * A time scale that would keep the run within the budget. A late run that
 * did the scenario's work was late for the machine's sake, a lag that does
 * not shrink with the scale: the budget over it, with a margin. A saturated
 * one was late under its own work, which does: fewer transfers per second.
 */
static double scale_that_works(const live_fidelity *f, double scale, const live_stats *st,
                               const sim_summary *simulated) {
    double demand = by_demand(f, st, simulated);
    if (f->cause == LIVE_CAUSE_ANSWERS) {
        /* Queues at the target grow with the load, so a lower scale shrinks them faster than
         * in proportion: half the scale, or what the work would allow. */
        double half = scale / 2;
        return round_down(demand > 0 ? fmin(demand, half) : half);
    }
    if (f->cause == LIVE_CAUSE_STALLED) {
        /* A stall of t real is t x scale simulated: the scale at which the tail fits within the
         * shortest time (LIVE_TAIL_ALLOW_US x scale grows with it and cannot help), with a margin
         */
        double by_tail = LIVE_SCALE_MARGIN * (double)f->shortest_us / fmax(f->tail_us / scale, 1);
        return round_down(demand > 0 ? fmin(demand, by_tail) : by_tail);
    }
    if (f->cause == LIVE_CAUSE_SATURATED) {
        double by_cpu = scale * LIVE_TARGET_CPU / fmax(f->busiest_share, 1e-9);
        return round_down(demand > 0 ? fmin(demand, by_cpu) : by_cpu);
    }
    double by_lag = LIVE_SCALE_MARGIN * f->budget_us / fmax(f->lag_real_us, 1);
    return round_down(demand > 0 ? fmin(demand, by_lag) : by_lag);
}

/* A duration for people: "0.293 ms", "17.6 ms", "2.3 s". */
static const char *dur(char *buf, size_t len, double us) {
    if (us >= 1e6)
        snprintf(buf, len, "%.3g s", us / 1e6);
    else
        snprintf(buf, len, "%.3g ms", us / 1e3);
    return buf;
}

/* How late the run was, in the terms of its cause. */
static void lateness(char *late, size_t len, const live_fidelity *f, double scale) {
    char d[7][32];
    if (f->cause == LIVE_CAUSE_ANSWERS)
        snprintf(
            late, len,
            "the driver kept time (%s late, p99, real time) but the answers ended %s later "
            "than the target planned (p99 of %.0f answers, real time), %s beyond the %s the "
            "wire may take, %s of simulated time at x%g, where the scenario's shortest "
            "time, %s = %s, allows %s",
            dur(d[0], sizeof d[0], f->lag_real_us), dur(d[1], sizeof d[1], f->answer_late_real_us),
            f->answers, dur(d[2], sizeof d[2], f->answer_excess_us / scale),
            dur(d[3], sizeof d[3], LIVE_ANSWER_ALLOW_US),
            dur(d[4], sizeof d[4], f->answer_excess_us), scale, f->shortest,
            dur(d[5], sizeof d[5], (double)f->shortest_us), dur(d[6], sizeof d[6], f->budget_us));
    else if (f->cause == LIVE_CAUSE_STALLED)
        snprintf(late, len,
                 "99%% of its due times and answers kept the timing (the driver %s late, p99, "
                 "real time) but the slowest 0.1%% did not: the driver was %s late%s%s%s (p99.9, "
                 "real time), %s of simulated time at x%g, beyond the %s the run's 99th "
                 "percentiles can carry (the larger of the scenario's shortest time, %s = %s, "
                 "and %s of real time at x%g)",
                 dur(d[0], sizeof d[0], f->lag_real_us),
                 dur(d[1], sizeof d[1], f->tail_lag_real_us),
                 f->answers > 0 ? " and the answers ended " : "",
                 f->answers > 0 ? dur(d[2], sizeof d[2], f->tail_answer_real_us) : "",
                 f->answers > 0 ? " later than planned" : "", dur(d[3], sizeof d[3], f->tail_us),
                 scale, dur(d[4], sizeof d[4], f->tail_budget_us), f->shortest,
                 dur(d[5], sizeof d[5], (double)f->shortest_us),
                 dur(d[6], sizeof d[6], LIVE_TAIL_ALLOW_US), scale);
    else
        snprintf(late, len,
                 "the driver was %s late (p99, real time), %s of simulated time at x%g, where "
                 "the scenario's shortest time, %s = %s, allows %s",
                 dur(d[0], sizeof d[0], f->lag_real_us), dur(d[1], sizeof d[1], f->lag_us), scale,
                 f->shortest, dur(d[2], sizeof d[2], (double)f->shortest_us),
                 dur(d[3], sizeof d[3], f->budget_us));
}

static void why(live_fidelity *f, double scale, const live_stats *st, const sim_summary *live) {
    char late[900], extra[400] = "", d[1][32];
    lateness(late, sizeof late, f, scale);
    size_t n = 0;
    if (f->attempts_simulated > 0)
        n = (size_t)snprintf(extra, sizeof extra,
                             " The simulation makes %.0f attempts where the live run made %llu.",
                             f->attempts_simulated, (unsigned long long)live->attempts);
    if (f->cause != LIVE_CAUSE_ANSWERS && f->answer_excess_us > f->budget_us && n < sizeof extra)
        snprintf(extra + n, sizeof extra - n,
                 " The answers also ended %s later than the target planned (p99, real time).",
                 dur(d[0], sizeof d[0], f->answer_late_real_us));
    char cause[200] = "";
    if (f->cause == LIVE_CAUSE_SATURATED && f->busiest_share >= LIVE_SATURATED_CPU)
        snprintf(cause, sizeof cause,
                 "the driver could not keep up: %s thread was busy %.0f%% of the run; ",
                 f->busiest_share > f->cpu_share * 1.05 ? "an in-process mock's" : "its",
                 f->busiest_share * 100);
    else if (f->cause == LIVE_CAUSE_SATURATED)
        snprintf(cause, sizeof cause,
                 "the driver could not keep up with the scenario's work (%.0f%% of the "
                 "simulation's attempts); ",
                 100 * f->work_share);
    else if (f->cause == LIVE_CAUSE_ANSWERS)
        snprintf(cause, sizeof cause,
                 "the target answered later than it planned (a queue: a mock's thread or the "
                 "machine could not keep up, or a slow hop on the way); ");
    else if (f->cause == LIVE_CAUSE_STALLED)
        snprintf(cause, sizeof cause,
                 "the run stalled (the process or the machine held for a moment): ");
    else if (f->cause == LIVE_CAUSE_BUSY)
        snprintf(cause, sizeof cause,
                 "the machine is busy: the process's threads waited %.2f s for a CPU per second on "
                 "one; ",
                 f->wait_ratio);
    snprintf(f->reason, sizeof f->reason,
             "%s%s; %.0f%% of %llu transfers were cancelled.%s Try --time-scale %g or lower%s.",
             cause, late, f->cancelled_share * 100, (unsigned long long)st->wire.transfers, extra,
             f->time_scale_ok,
             f->cause == LIVE_CAUSE_BUSY      ? " (or a quieter machine)"
             : f->cause == LIVE_CAUSE_STALLED ? ", or run again (a stall is brief)"
                                              : "");
}

void live_fidelity_judge(const sim_scenario *sc, uint32_t variant, double scale,
                         const live_stats *st, const sim_summary *live,
                         const sim_summary *simulated, live_fidelity *out) {
    memset(out, 0, sizeof *out);
    if (!(scale > 0)) scale = 1;
    const live_client_stats *w = &st->wire;
    out->shortest_us = live_shortest_time(sc, variant, out->shortest, sizeof out->shortest);
    out->budget_us = LIVE_LAG_FRACTION * (double)out->shortest_us;
    out->lag_real_us = (double)(w->lag_p99_us > w->gap_p99_us ? w->lag_p99_us : w->gap_p99_us);
    out->lag_us = out->lag_real_us * scale;
    out->cpu_share = st->wall_s > 0 ? w->cpu_s / st->wall_s : 0;
    out->busiest_share = st->wall_s > 0 ? (double)w->sched.busiest_run_ns / 1e9 / st->wall_s : 0;
    if (out->busiest_share < out->cpu_share) out->busiest_share = out->cpu_share;
    out->wait_ratio = w->sched.known && w->sched.run_ns > 0
                          ? (double)w->sched.wait_ns / (double)w->sched.run_ns
                          : -1;
    out->cancelled_share = w->transfers ? (double)w->cancelled / (double)w->transfers : 0;
    out->attempts_simulated = simulated ? (double)simulated->attempts : 0;
    out->work_share = simulated && simulated->attempts > 0
                          ? (double)live->attempts / (double)simulated->attempts
                          : 1;
    out->answers = (double)w->late_samples;
    out->answer_late_real_us = w->late_samples > 0 ? (double)w->late_p99_us : 0;
    double excess = out->answer_late_real_us - LIVE_ANSWER_ALLOW_US;
    out->answer_excess_us = excess > 0 ? excess * scale : 0;
    out->tail_lag_real_us =
        (double)(w->lag_p999_us > w->gap_p999_us ? w->lag_p999_us : w->gap_p999_us);
    out->tail_answer_real_us = w->late_samples > 0 ? (double)w->late_p999_us : 0;
    out->tail_us =
        fmax(0, fmax(out->tail_lag_real_us, out->tail_answer_real_us - LIVE_ANSWER_ALLOW_US)) *
        scale;
    out->tail_budget_us = fmax((double)out->shortest_us, LIVE_TAIL_ALLOW_US * scale);
    bool driver_ok = out->shortest_us == 0 || out->lag_us <= out->budget_us;
    bool answers_ok = out->shortest_us == 0 || out->answer_excess_us <= out->budget_us;
    bool tail_ok = out->shortest_us == 0 || out->tail_us <= out->tail_budget_us;
    out->ok = driver_ok && answers_ok && tail_ok;
    if (out->ok) {
        char d[6][32];
        int n = snprintf(
            out->reason, sizeof out->reason,
            "kept the timing: %s late (p99, simulated time) within %s, %g of %s (%s); "
            "the slowest 0.1%% %s late within %s",
            dur(d[0], sizeof d[0], out->lag_us), dur(d[1], sizeof d[1], out->budget_us),
            LIVE_LAG_FRACTION, out->shortest, dur(d[2], sizeof d[2], (double)out->shortest_us),
            dur(d[4], sizeof d[4], out->tail_us), dur(d[5], sizeof d[5], out->tail_budget_us));
        if (out->answers > 0 && n > 0 && (size_t)n < sizeof out->reason)
            snprintf(out->reason + n, sizeof out->reason - (size_t)n,
                     "; the answers ended %s later than planned (p99 of %.0f, real time; the "
                     "wire may take %s, the rest counts against the same budget)",
                     dur(d[3], sizeof d[3], out->answer_late_real_us), out->answers,
                     dur(d[0], sizeof d[0], LIVE_ANSWER_ALLOW_US));
        return;
    }
    bool short_of_work = out->work_share < LIVE_WORK_SHARE_MIN;
    out->cause = driver_ok && answers_ok                                     ? LIVE_CAUSE_STALLED
                 : driver_ok                                                 ? LIVE_CAUSE_ANSWERS
                 : out->busiest_share >= LIVE_SATURATED_CPU || short_of_work ? LIVE_CAUSE_SATURATED
                 : out->wait_ratio >= LIVE_BUSY_WAIT                         ? LIVE_CAUSE_BUSY
                                                                             : LIVE_CAUSE_LAG;
    out->time_scale_ok = scale_that_works(out, scale, st, simulated);
    why(out, scale, st, live);
}
