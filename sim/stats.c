/*
 * stats.c - the summary counters: every one is moved here, and only here.
 *
 * The model calls one helper per thing that happened (a request arrived, an
 * attempt left, an outcome came back, a request ended, tokens were billed,
 * a breaker changed state); each helper updates the run's summary and the
 * current time-series row together, so the two always agree. What the
 * counters mean is defined once, in sim/metrics.c (docs/metrics.md).
 * stat_finalize() adds what the core's primitives counted themselves.
 */
#include <math.h>

#include "sim/simint.h"

void stat_arrival(sim *s, const req *r) {
    sim_summary *sum = s->sum;
    sum->requests++;
    s->row.arrivals++;
    if (s->sc->classes[r->cls].target != SIM_TARGET_NONE) {
        sum->requests_calling++;
        if (in_window(s, s->now)) sum->requests_in_fault++;
    }
    if (s->live > sum->in_flight_peak) sum->in_flight_peak = s->live;
}

void stat_attempt(sim *s, const attempt *a) {
    s->sum->attempts++;
    s->sum->providers[a->provider].attempts++;
    s->provs[a->provider].tick.attempts++;
    if (in_window(s, s->now)) s->sum->attempts_in_fault++;
}

/* An attempt's outcome, as the client classified it. */
void stat_outcome(sim *s, uint32_t provider, fb_outcome outcome) {
    prov *p = &s->provs[provider];
    s->sum->providers[provider].outcomes[outcome]++;
    if (outcome != FB_OUT_SUCCESS) p->tick.errors++;
    if (outcome == FB_OUT_RATE_LIMITED) p->tick.rate_limited++;
    if (outcome == FB_OUT_TIMEOUT) p->tick.timeouts++;
}

/* A request ended: outcome, latency, the SLO, blast radius, and the baseline before faults. */
void stat_end(sim *s, const req *r, sim_end end, bool via_fallback) {
    sim_summary *sum = s->sum;
    fb_time_us lat = s->now - r->arrival_us;
    sum->ended[end]++;
    s->row.ended++;
    fb_hist_record(&sum->latency, lat);
    fb_hist_record(&s->tick_hist, lat);
    bool ok = end == SIM_END_SUCCESS || end == SIM_END_DEGRADED;
    bool bad = !ok;
    if (end == SIM_END_SUCCESS) {
        fb_hist_record(&sum->latency_ok, lat);
        s->row.success++;
        if (via_fallback) {
            sum->success_fallback++;
            s->row.fallback_success++;
        } else {
            sum->success_primary++;
        }
    } else if (end == SIM_END_DEGRADED) {
        s->row.degraded++;
    } else {
        sum->errors++;
        s->row.errors++;
    }
    if (ok && lat > s->sc->slo_latency_us) {
        sum->slo_missed++;
        s->row.slo_missed++;
        bad = true;
    }
    if (bad) {
        sum->bad++;
        if (!r->exposed) sum->bad_collateral++;
    }
    if (!s->baseline_ready && s->now < s->first_window_us) {
        s->base_ended++;
        if (bad) s->base_bad++;
        fb_hist_record(&s->base_hist, lat);
    }
}

/* The request's policy is done with it: its retries and fallbacks. */
void stat_policy(sim *s, const req *r) {
    const fb_fallback_request_stats *st = fb_fallback_request_stats_get(&r->fr);
    s->sum->retries += st->retries;
    s->sum->fallbacks += st->fallbacks;
}

/* An answer failed after its first token reached the user. */
void stat_stream_failure(sim *s, const req *r, uint32_t tokens_out, bool resumed) {
    s->sum->stream_failures++;
    if (s->pol->stream == FB_STREAM_RETRY) s->sum->tokens_duplicated += tokens_out;
    if (resumed) s->sum->stream_resumes++;
    (void)r;
}

static double cost_of(const sim_provider *pv, uint64_t in, uint64_t out) {
    return (double)in * pv->price_in_per_mtok / 1e6 + (double)out * pv->price_out_per_mtok / 1e6 +
           pv->price_per_call;
}

/* The first provider of a request's chain. */
static uint32_t primary_of(const sim *s, const req *r) {
    const sim_class *c = &s->sc->classes[r->cls];
    if (c->target == SIM_TARGET_PROVIDER) return c->provider;
    return c->order_len ? c->order[0] : s->pol->order[0];
}

/*
 * A success via fallback (the engine's sense: not the chain's primary,
 * failed or skipped): what the answer cost beyond the same tokens there.
 */
void stat_fallback_cost(sim *s, const req *r, uint32_t provider, uint32_t tokens_out) {
    const sim_provider *pp = &s->sc->providers[primary_of(s, r)];
    const sim_provider *pf = &s->sc->providers[provider];
    s->sum->fallback_extra_cost_usd +=
        cost_of(pf, r->prompt_tokens, tokens_out) - cost_of(pp, r->prompt_tokens, tokens_out);
}

/* A provider worked on an attempt: bill its input and `tokens_out` output tokens. */
void stat_bill(sim *s, const attempt *a, uint32_t tokens_out, bool wasted) {
    const sim_provider *pv = &s->sc->providers[a->provider];
    sim_provider_summary *ps = &s->sum->providers[a->provider];
    double c = cost_of(pv, a->tokens_in, tokens_out);
    ps->served++;
    ps->tokens_in += a->tokens_in;
    ps->tokens_out += tokens_out;
    ps->cost_usd += c;
    s->sum->cost_usd += c;
    if (wasted) {
        ps->tokens_in_wasted += a->tokens_in;
        ps->tokens_out_wasted += tokens_out;
        ps->cost_wasted_usd += c;
        s->sum->cost_wasted_usd += c;
    }
}

void stat_tally(sim *s, uint32_t provider, tally what) {
    sim_provider_summary *ps = &s->sum->providers[provider];
    switch (what) {
    case T_CAPACITY_429:
        ps->capacity_429++;
        break;
    case T_OVERLOADED:
        ps->overloaded++;
        break;
    case T_ABANDONED:
        ps->abandoned++;
        break;
    case T_BREAKER_REJECTION:
        ps->breaker_rejections++;
        break;
    }
}

/* Peaks: attempts in service at a provider, its queue, the pods' queues. */
void stat_provider_busy(sim *s, uint32_t provider) {
    sim_provider_summary *ps = &s->sum->providers[provider];
    if (s->provs[provider].busy > ps->in_service_peak)
        ps->in_service_peak = s->provs[provider].busy;
}

void stat_provider_queued(sim *s, uint32_t provider) {
    sim_provider_summary *ps = &s->sum->providers[provider];
    if (s->provs[provider].qlive > ps->queue_peak) ps->queue_peak = s->provs[provider].qlive;
}

void stat_pod_queued(sim *s) {
    if (s->pod_queue_total > s->sum->pod_queue_peak) s->sum->pod_queue_peak = s->pod_queue_total;
}

/* The slot of a breaker in open_since/open_end: pods' first, then the stores. */
static size_t breaker_slot(const sim *s, const bctx *bc) {
    return bc->pod < 0 ? (size_t)s->npods * s->P + bc->provider
                       : (size_t)bc->pod * s->P + bc->provider;
}

/* An open period ended at `end`: its share of the provider's open time. */
static void add_open_time(sim *s, uint32_t provider, bool store, fb_time_us since, fb_time_us end) {
    double d = (double)(end - since) / 1e6;
    s->sum->providers[provider].breaker_open_s += store ? d : d / s->npods;
}

/*
 * A breaker changed state. Transitions count for the breakers of the
 * variant's scope (per pod, or the store); open time is averaged over pods.
 */
void stat_breaker_transition(sim *s, const bctx *bc, const fb_breaker_event *ev) {
    sim_provider_summary *ps = &s->sum->providers[bc->provider];
    size_t slot = breaker_slot(s, bc);
    bool counts = bc->pod >= 0 ? s->pol->breaker_scope == SIM_SCOPE_POD : true;
    if (!counts || ev->from == ev->to) return;
    ps->breaker_transitions++;
    if (is_open(ev->to) && !is_open(ev->from)) {
        ps->breaker_opens++;
        s->open_since[slot] = ev->at_us;
    }
    if (ev->to == FB_BREAKER_OPEN) s->open_end[slot] = ev->open_until_us;
    if (ev->to == FB_BREAKER_FORCED_OPEN) s->open_end[slot] = FB_TIME_MAX;
    if (!is_open(ev->to) && is_open(ev->from) && s->open_since[slot] != FB_TIME_NONE) {
        /* the breaker stopped rejecting at its deadline, even if nobody asked then */
        fb_time_us end = ev->at_us < s->open_end[slot] ? ev->at_us : s->open_end[slot];
        add_open_time(s, bc->provider, bc->pod < 0, s->open_since[slot], end);
        s->open_since[slot] = FB_TIME_NONE;
    }
}

/* Open periods still running when the run ended, cut at their deadline or the end. */
static void close_open_periods(sim *s) {
    size_t n = (size_t)s->npods * s->P;
    for (size_t i = 0; i < n + s->P; i++) {
        if (s->open_since[i] == FB_TIME_NONE) continue;
        bool store = i >= n;
        uint32_t p = store ? (uint32_t)(i - n) : (uint32_t)(i % s->P);
        bool counts = store ? s->pol->breaker_scope == SIM_SCOPE_SHARED
                            : s->pol->breaker_scope == SIM_SCOPE_POD;
        if (!counts) continue;
        fb_time_us end = s->now < s->open_end[i] ? s->now : s->open_end[i];
        add_open_time(s, p, store, s->open_since[i], end);
    }
}

/* What the core's primitives counted: limiter waits and rejections, breaker rejections. */
static void add_core_counts(sim *s, uint32_t p) {
    sim_provider_summary *ps = &s->sum->providers[p];
    const sim_provider_policy *pp = &s->pol->per_provider[p];
    if (pp->has_ratelimit) {
        for (uint32_t k = 0; k < s->npods; k++) {
            const fb_ratelimit_stats *st =
                fb_ratelimit_stats_get(&s->limiters[(size_t)k * s->P + p]);
            ps->limiter_waits += st->delayed;
            ps->limiter_rejections += st->rejected;
        }
    }
    if (pp->has_breaker && s->pol->breaker_scope == SIM_SCOPE_SHARED) {
        ps->breaker_rejections += fb_breaker_stats_get(&s->provs[p].store)->rejected;
    } else if (pp->has_breaker) {
        for (uint32_t k = 0; k < s->npods; k++)
            ps->breaker_rejections +=
                fb_breaker_stats_get(&s->breakers[(size_t)k * s->P + p])->rejected;
    }
}

void stat_finalize(sim *s) {
    sim_summary *sum = s->sum;
    sum->end_us = s->now;
    sum->events = s->q.pushed;
    sum->events_handled = s->events_handled;
    sum->events_stale = s->events_stale;
    sum->events_cancelled = s->q.cancelled;
    sum->queue_peak = s->q.peak;
    close_open_periods(s);
    for (uint32_t p = 0; p < s->P; p++) {
        sum->providers[p].unfinished = s->provs[p].busy + s->provs[p].qlive;
        add_core_counts(s, p);
    }
    if (s->pol->budget.kind != FB_BUDGET_NONE)
        for (uint32_t k = 0; k < s->npods; k++)
            sum->budget_refusals += fb_budget_stats_get(&s->pods[k].budget)->refused;
    for (uint32_t i = 0; i < sum->fault_count; i++) {
        sim_fault_summary *f = &sum->faults[i];
        if (!f->recovered) f->spillover_us = s->now > f->end_us ? s->now - f->end_us : 0;
    }
}

/* ---- invariants (tests: sim_run_opts.check_invariants) ---- */

static int broken(sim *s, const char *what) {
    stop(s, FB_ESTATE, "invariant: %s", what);
    return FB_ESTATE;
}

static int check_requests(sim *s) {
    sim_summary *sum = s->sum;
    uint64_t ended = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) ended += sum->ended[e];
    if (ended + s->live != sum->requests) {
        stop(s, FB_ESTATE, "invariant: %llu requests arrived but %llu ended and %llu are live",
             (unsigned long long)sum->requests, (unsigned long long)ended,
             (unsigned long long)s->live);
        return FB_ESTATE;
    }
    if (s->live == 0 && (s->pod_queue_total != 0 || s->busy_total != 0)) {
        stop(s, FB_ESTATE,
             "invariant: no request is live but %llu are queued and %llu workers busy",
             (unsigned long long)s->pod_queue_total, (unsigned long long)s->busy_total);
        return FB_ESTATE;
    }
    for (uint32_t k = 0; k < s->npods; k++) {
        if (s->live == 0 && (s->pods[k].qlive != 0 || s->pods[k].busy != 0)) {
            stop(s, FB_ESTATE, "invariant: pod %u still counts %u queued, %u busy", k,
                 s->pods[k].qlive, s->pods[k].busy);
            return FB_ESTATE;
        }
    }
    return FB_OK;
}

int stat_check_invariants(sim *s) {
    sim_summary *sum = s->sum;
    int rc = check_requests(s);
    if (rc != FB_OK) return rc;
    double cost = 0;
    uint64_t attempts = 0;
    for (uint32_t p = 0; p < s->P; p++) {
        cost += sum->providers[p].cost_usd;
        attempts += sum->providers[p].attempts;
        uint64_t outc = 0;
        for (int o = 0; o < FB_OUT_COUNT; o++) outc += sum->providers[p].outcomes[o];
        if (outc > sum->providers[p].attempts) {
            stop(s, FB_ESTATE, "invariant: provider %s has more outcomes than attempts",
                 s->sc->providers[p].name);
            return FB_ESTATE;
        }
    }
    if (attempts != sum->attempts || fabs(cost - sum->cost_usd) > 1e-6 * (1 + cost))
        return broken(s, "attempts or cost do not add up across providers");
    return FB_OK;
}
