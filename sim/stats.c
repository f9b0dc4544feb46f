/*
 * stats.c - the summary counters: every one is moved here, and only here.
 *
 * The model calls one helper per thing that happened (a request arrived, an
 * attempt left, an outcome came back, a request ended, tokens were billed,
 * a breaker changed state); each helper updates the run's summary and the
 * current time-series row together, so the two always agree. What the
 * counters mean is defined once, in sim/metrics.c (docs/metrics.md).
 * sim__stat_finalize() adds what the core's primitives counted themselves,
 * and the totals of the requests' ends (each end is counted once, in the
 * finest count it belongs to: nothing reads the summary before the end).
 */
#include <math.h>
#include <stdlib.h>

#include "sim/fleetint.h"

/* A calling request arrived when the clock had left the span sim__in_window_now knew. */
void sim__stat_arrival_in_window(sim *s) {
    if (sim__in_window_at(s, s->now)) s->sum->requests_in_fault++;
}

/* ---- the fleet's dynamics (fleet.c and its files) ---- */

/* A request ended in an error and its user will submit it again. */
void sim__stat_resubmitted(sim *s) {
    s->sum->fleet.resubmitted++;
}

/* A serial client's call started `lag` after its scheduled time. */
void sim__stat_serial_lag(sim *s, fb_time_us lag) {
    if (lag > s->sum->fleet.serial_lag_us) s->sum->fleet.serial_lag_us = lag;
}

/* A serial client's calls scheduled before the end of traffic that will never start. */
void sim__stat_serial_backlog(sim *s, uint64_t calls) {
    s->sum->fleet.serial_backlog += calls;
}

/* The autoscaler changed its pods from `from` to `to`. */
void sim__stat_scale(sim *s, uint32_t from, uint32_t to) {
    sim_fleet_summary *fs = &s->sum->fleet;
    fs->scale_decisions++;
    if (to > from)
        fs->pods_added += to - from;
    else
        fs->pods_removed += from - to;
}

void sim__stat_store(sim *s, store_tally what) {
    if (what == STORE_UNREACHABLE)
        s->sum->fleet.store_unreachable++;
    else
        s->sum->fleet.store_records_lost++;
}

/* The breakdown's windows: the providers' fault windows, up to SIM_WINDOWS_MAX. */
static int windows_setup(sim *s) {
    sim_breakdown *b = &s->sum->breakdown;
    for (uint32_t i = 0; i < s->sum->fault_count; i++) {
        const sim_fault_summary *f = &s->sum->faults[i];
        if (f->spike || f->store) continue;
        if (b->window_count == SIM_WINDOWS_MAX) {
            b->windows_beyond++;
            continue;
        }
        sim_window_summary *w = &b->windows[b->window_count++];
        w->provider = f->provider;
        w->fault = f->fault;
        w->start_us = f->start_us;
        w->end_us = f->end_us;
        if (b->window_count == 1 || w->start_us < s->bd_from) s->bd_from = w->start_us;
        if (b->window_count == 1 || w->end_us > s->bd_to) s->bd_to = w->end_us;
    }
    if (b->window_count == 0) return FB_OK;
    s->bd_hist = malloc(b->window_count * sizeof *s->bd_hist);
    if (s->bd_hist == NULL) return FB_ENOMEM;
    for (uint32_t k = 0; k < b->window_count; k++) fb_hist_init(&s->bd_hist[k]);
    return FB_OK;
}

/* The first provider of class c's chain (its routing layer's; its requests' stack is the
   class's). */
static uint8_t primary_of(const sim *s, uint32_t c) {
    const sim_class *k = &s->sc->classes[c];
    if (k->target == SIM_TARGET_PROVIDER) return (uint8_t)k->provider;
    const sim_stack *st = s->class_stack[c];
    const sim_layer *router = &s->pol->layers[st->layer[st->router]];
    return (uint8_t)(k->order_len ? k->order[0] : router->order[0]);
}

/* The histograms a request's end is counted in (sim__stat_end), and the breakdown's windows. */
int sim__stat_setup(sim *s) {
    uint32_t n = s->sc->class_count;
    for (uint32_t c = 0; c < n; c++)
        if (s->sc->classes[c].target != SIM_TARGET_NONE) s->class_primary[c] = primary_of(s, c);
    s->ok_hist = calloc(n ? n : 1, sizeof *s->ok_hist);
    if (s->ok_hist == NULL) return FB_ENOMEM;
    for (uint32_t c = 0; c < n; c++) fb_hist_clear(&s->ok_hist[c]); /* zero bytes: no memset */
    return windows_setup(s);
}

/* A calling request's end in the breakdown's windows it arrived in (sim__stat_end: one that
   arrived between the first's start and the last's end). */
void sim__stat_breakdown_end(sim *s, const req *r, sim_end end, fb_time_us lat) {
    sim_breakdown *b = &s->sum->breakdown;
    for (uint32_t k = 0; k < b->window_count; k++) {
        sim_window_summary *w = &b->windows[k];
        if (r->arrival_us < w->start_us || r->arrival_us >= w->end_us) continue;
        w->requests++;
        w->attempts += r->sent;
        w->success += end == SIM_END_SUCCESS;
        fb_hist_record(&s->bd_hist[k], lat);
    }
}

/* An answer failed after its first token reached the user. */
/* An answer broke after its first token; the innermost layer decides what happens next. */
void sim__stat_stream_failure(sim *s, const req *r, uint32_t tokens_out, bool resumed) {
    const sim_layer *inner = s->lays[r->stack->layer[r->stack->depth - 1]].cfg;
    s->sum->stream_failures++;
    if (inner->stream == FB_STREAM_RETRY) s->sum->tokens_duplicated += tokens_out;
    if (resumed) s->sum->stream_resumes++;
}

static double cost_of(const sim_provider *pv, uint64_t in, uint64_t out) {
    return (double)in * pv->price_in_per_mtok / 1e6 + (double)out * pv->price_out_per_mtok / 1e6 +
           pv->price_per_call;
}

/*
 * A success via fallback (the engine's sense: not the chain's primary,
 * failed or skipped): what the answer cost beyond the same tokens there.
 */
void sim__stat_fallback_cost(sim *s, const req *r, uint32_t provider, uint32_t tokens_out) {
    const sim_provider *pp = &s->sc->providers[s->class_primary[r->cls]];
    const sim_provider *pf = &s->sc->providers[provider];
    s->sum->fallback_extra_cost_usd +=
        cost_of(pf, r->prompt_tokens, tokens_out) - cost_of(pp, r->prompt_tokens, tokens_out);
}

void sim__stat_provider_tick(sim *s, uint32_t p) {
    prov *pr = &s->provs[p];
    sim_provider_summary *ps = &s->sum->providers[p];
    ps->attempts += pr->tick.attempts;
    for (int o = 0; o < FB_OUT_COUNT; o++) ps->outcomes[o] += pr->tick.outcomes[o];
    memset(&pr->tick, 0, sizeof pr->tick);
}

/* A provider worked on an attempt: bill its input and `tokens_out` output tokens. */
void sim__stat_bill(sim *s, const attempt *a, uint32_t tokens_out, bool wasted) {
    const sim_provider *pv = &s->sc->providers[a->provider];
    sim_provider_summary *ps = &s->sum->providers[a->provider];
    double c = cost_of(pv, a->tokens_in, tokens_out);
    ps->served++;
    ps->tokens_in += a->tokens_in;
    ps->tokens_out += tokens_out;
    ps->cost_usd += c;
    s->sum->cost_usd += c;
    if (s->att_x && a->x[0].hedge) s->sum->hedge_cost_usd += c;
    if (wasted) {
        ps->tokens_in_wasted += a->tokens_in;
        ps->tokens_out_wasted += tokens_out;
        ps->cost_wasted_usd += c;
        s->sum->cost_wasted_usd += c;
    }
}

/* A hedged attempt left for `provider` (the group's first is an ordinary attempt). */
void sim__stat_hedge_sent(sim *s, uint32_t provider) {
    s->sum->hedges++;
    s->sum->providers[provider].hedges++;
}

/* A hedge group's answer came from a hedged attempt, not from its first. */
void sim__stat_hedge_won(sim *s) {
    s->sum->hedges_won++;
}

/* An attempt found no connection to `provider` and waits for one. */
void sim__stat_conn_wait(sim *s, uint32_t provider) {
    s->sum->providers[provider].conn_waits++;
}

/* ... and got one after `wait_us`. */
void sim__stat_conn_waited(sim *s, uint32_t provider, fb_time_us wait_us) {
    s->sum->providers[provider].conn_wait_s += (double)wait_us / 1e6;
}

/* A connection to `provider` was opened (and costs its setup). */
void sim__stat_conn_setup(sim *s, uint32_t provider) {
    s->sum->providers[provider].conn_setups++;
}

void sim__stat_tally(sim *s, uint32_t provider, tally what) {
    sim_provider_summary *ps = &s->sum->providers[provider];
    switch (what) {
    case T_CAPACITY_429:
        ps->capacity_429++;
        break;
    case T_OVERLOADED:
        ps->overloaded++;
        break;
    case T_SHED:
        ps->shed++;
        break;
    case T_ABANDONED:
        ps->abandoned++;
        break;
    }
}

/* Peaks: attempts in service at a provider (simint.h), its queue, the pods' queues. */
void sim__stat_provider_queued(sim *s, uint32_t provider) {
    sim_provider_summary *ps = &s->sum->providers[provider];
    if (s->provs[provider].qlive > ps->queue_peak) ps->queue_peak = s->provs[provider].qlive;
}

/* A traffic class calls a disturbed provider (exposed) or not (its failures are collateral). */
void sim__stat_class_exposure(sim *s, bool exposed) {
    if (exposed)
        s->sum->classes_exposed++;
    else
        s->sum->classes_unexposed++;
}

void sim__stat_pod_queued(sim *s) {
    if (s->pod_queue_total > s->sum->pod_queue_peak) s->sum->pod_queue_peak = s->pod_queue_total;
}

/* The slot of a breaker in open_since/open_end: pods' first, then the stores. */
static size_t breaker_slot(const sim *s, const bctx *bc) {
    return bc->pod < 0 ? store_slot(s, bc->layer, bc->provider)
                       : slot(s, bc->layer, (uint32_t)bc->pod, bc->provider);
}

/*
 * Does layer l's breaker (per pod, or the store) count in the summary? Its
 * scope says; a shared breaker's pods run breakers of their own only while
 * the store is unreachable and they fall back to local ones (store.c).
 */
static bool counts(const sim *s, uint32_t l, bool store) {
    const sim_layer *L = s->lays[l].cfg;
    if (store) return L->breaker_scope == SIM_SCOPE_SHARED;
    return L->breaker_scope != SIM_SCOPE_SHARED || L->store_outage == SIM_STORE_LOCAL;
}

/* Provider totals hold the breakers of the routing layer and inside it (an outer one's
 * breaker guards the layer inside, not a provider; its layer's totals show it). */
static bool per_provider(const sim *s, uint32_t l) {
    return s->lays[l].cfg->role != SIM_ROLE_OUTER;
}

/* An open period ended at `end`: its share of the provider's open time. */
static void add_open_time(sim *s, const bctx *bc, bool store, fb_time_us since, fb_time_us end) {
    double d = (double)(end - since) / 1e6;
    if (!per_provider(s, bc->layer)) return;
    if (!store && s->fleet && s->fleet->as)
        s->fleet->as->open_pod_s[bc->provider] += d; /* per pod: over the mean pods, at the end */
    else
        s->sum->providers[bc->provider].breaker_open_s +=
            store ? d : d / (seat_end(s, bc->layer) - seat_first(s, bc->layer));
}

void sim__stat_gateway_attempt(sim *s, uint32_t seat) {
    s->sum->gateway.replica[seat - s->npods].attempts++;
}

void sim__stat_gateway(sim *s, uint32_t seat, int what, uint64_t v) {
    sim_replica_summary *x = &s->sum->gateway.replica[seat - s->npods];
    switch (what) {
    case GW_STAT_CALL:
        x->calls++;
        break;
    case GW_STAT_WORKER: /* v: its workers busy now */
        if (v > x->busy_peak) x->busy_peak = (uint32_t)v;
        break;
    case GW_STAT_QUEUED: /* v: the calls waiting now */
        x->queued++;
        if (v > x->queue_peak) x->queue_peak = (uint32_t)v;
        break;
    case GW_STAT_WAITED: /* v: how long it waited */
        x->wait_us_total += (fb_time_us)v;
        if ((fb_time_us)v > x->wait_us_max) x->wait_us_max = (fb_time_us)v;
        break;
    case GW_STAT_QUEUE_FULL:
        x->queue_full++;
        break;
    case GW_STAT_ABANDONED:
        x->abandoned++;
        break;
    default:
        break;
    }
}

void sim__stat_breaker_rejection(sim *s, uint32_t layer, uint32_t provider) {
    s->sum->layers[layer].breaker_rejections++;
    if (per_provider(s, layer)) s->sum->providers[provider].breaker_rejections++;
}

/*
 * A breaker changed state. Transitions count for the breakers of the
 * layer's scope (per pod, or the store); open time is averaged over pods.
 */
void sim__stat_breaker_transition(sim *s, const bctx *bc, const fb_breaker_event *ev) {
    size_t at = breaker_slot(s, bc);
    if (!counts(s, bc->layer, bc->pod < 0) || ev->from == ev->to) return;
    bool opens = sim__is_open(ev->to) && !sim__is_open(ev->from);
    sim_layer_summary *ls = &s->sum->layers[bc->layer];
    ls->breaker_transitions++;
    ls->breaker_opens += opens;
    if (per_provider(s, bc->layer)) {
        s->sum->providers[bc->provider].breaker_transitions++;
        s->sum->providers[bc->provider].breaker_opens += opens;
    }
    if (opens && bc->pod >= (int)s->npods) { /* a gateway replica's: its own, or learned */
        sim_replica_summary *x = &s->sum->gateway.replica[(uint32_t)bc->pod - s->npods];
        if (ev->cause == FB_CAUSE_SYNC)
            x->learned++;
        else
            x->cooldowns++;
    }
    if (opens) s->open_since[at] = ev->at_us;
    if (ev->to == FB_BREAKER_OPEN) s->open_end[at] = ev->open_until_us;
    if (ev->to == FB_BREAKER_FORCED_OPEN) s->open_end[at] = FB_TIME_MAX;
    if (!sim__is_open(ev->to) && sim__is_open(ev->from) && s->open_since[at] != FB_TIME_NONE) {
        /* the breaker stopped rejecting at its deadline, even if nobody asked then */
        fb_time_us end = ev->at_us < s->open_end[at] ? ev->at_us : s->open_end[at];
        add_open_time(s, bc, bc->pod < 0, s->open_since[at], end);
        s->open_since[at] = FB_TIME_NONE;
    }
}

/* Open periods still running when the run ended, cut at their deadline or the end. */
static void close_open_periods(sim *s) {
    size_t n = (size_t)s->NL * s->nseats * s->P;
    for (size_t i = 0; i < n + (size_t)s->NL * s->P; i++) {
        if (s->open_since[i] == FB_TIME_NONE) continue;
        bool store = i >= n;
        size_t j = store ? i - n : i;
        bctx bc = {s, store ? -1 : (int)(j / s->P % s->nseats),
                   (uint8_t)(store ? j / s->P : j / s->P / s->nseats), (uint8_t)(j % s->P)};
        if (!counts(s, bc.layer, store)) continue;
        fb_time_us end = s->now < s->open_end[i] ? s->now : s->open_end[i];
        add_open_time(s, &bc, store, s->open_since[i], end);
    }
}

/* Breaker rejections the core counted, into layer l's and provider p's totals. */
static void add_rejections(sim *s, uint32_t l, uint32_t p, uint64_t rejected) {
    s->sum->layers[l].breaker_rejections += rejected;
    if (per_provider(s, l)) s->sum->providers[p].breaker_rejections += rejected;
}

/* What pod k's concurrency limit in layer l for provider p counted. */
static void add_conclimit_counts(sim *s, uint32_t l, uint32_t p, uint32_t k) {
    sim_provider_summary *ps = &s->sum->providers[p];
    const fb_conclimit_stats *st = fb_conclimit_stats_get(&s->climits[slot(s, l, k, p)]);
    ps->limit_rejections += st->rejected;
    ps->limit_drops += st->drops;
    ps->limit_ignored += st->ignored;
    if (ps->limit_max == 0 || st->limit_min < ps->limit_min) ps->limit_min = st->limit_min;
    if (st->limit_max > ps->limit_max) ps->limit_max = st->limit_max;
}

/* What pod k's primitives counted in layer l for provider p: limits, limiter, breaker. */
static void add_pod_counts(sim *s, uint32_t l, uint32_t p, uint32_t k) {
    sim_provider_summary *ps = &s->sum->providers[p];
    const sim_layer *L = s->lays[l].cfg;
    const sim_provider_policy *pp = &L->per_provider[p];
    size_t i = slot(s, l, k, p);
    if (pp->has_conclimit && L->role != SIM_ROLE_OUTER) add_conclimit_counts(s, l, p, k);
    if (pp->has_ratelimit) {
        const fb_ratelimit_stats *st = fb_ratelimit_stats_get(&s->limiters[i]);
        ps->limiter_waits += st->delayed;
        ps->limiter_rejections += st->rejected;
    }
    if (!pp->has_breaker || (L->role == SIM_ROLE_OUTER && p > 0)) return;
    if (L->breaker_scope != SIM_SCOPE_SHARED) /* per pod, or published (LiteLLM's cooldowns) */
        add_rejections(s, l, p, fb_breaker_stats_get(&s->breakers[i])->rejected);
}

/* What the core's primitives counted in layer l for provider p: limiters, rejections. */
static void add_core_counts(sim *s, uint32_t l, uint32_t p) {
    const sim_layer *L = s->lays[l].cfg;
    for (uint32_t k = seat_first(s, l); k < seat_end(s, l); k++) add_pod_counts(s, l, p, k);
    if (!L->per_provider[p].has_breaker || (L->role == SIM_ROLE_OUTER && p > 0)) return;
    if (L->breaker_scope == SIM_SCOPE_SHARED)
        add_rejections(s, l, p, fb_breaker_stats_get(&s->stores[(size_t)l * s->P + p])->rejected);
}

/* A breaker goes away (a pod started anew, a local breaker after a store outage). */
void sim__stat_breaker_dropped(sim *s, const bctx *bc) {
    size_t at = breaker_slot(s, bc);
    if (s->open_since[at] == FB_TIME_NONE) return;
    fb_time_us end = s->now < s->open_end[at] ? s->now : s->open_end[at];
    if (counts(s, bc->layer, bc->pod < 0))
        add_open_time(s, bc, bc->pod < 0, s->open_since[at], end);
    s->open_since[at] = FB_TIME_NONE;
}

/*
 * The autoscaler starts pod k again: what its last life counted (limiters,
 * breaker rejections, budget refusals, open periods) joins the summary
 * before its state is made anew.
 */
void sim__stat_pod_retired(sim *s, uint32_t k) {
    for (uint32_t l = 0; l < s->NL; l++) {
        for (uint32_t p = 0; p < s->P; p++) {
            add_pod_counts(s, l, p, k);
            bctx bc = {s, (int)k, (uint8_t)l, (uint8_t)p};
            sim__stat_breaker_dropped(s, &bc);
        }
        if (s->lays[l].cfg->budget.kind != FB_BUDGET_NONE)
            s->sum->budget_refusals +=
                fb_budget_stats_get(&s->budgets[(size_t)k * s->NL + l])->refused;
    }
}

/*
 * A disturbance that never got back to baseline: not recovered when a full
 * window after its end was judged (its spillover runs to the end of the
 * run), undetermined when none was (it was active to the end of traffic, or
 * ended less than a window before it), or not back before the next disturbance began
 * (its spillover then runs to that start: a lower bound).
 */
static void finalize_spillover(sim *s, uint32_t i) {
    sim_fault_summary *f = &s->sum->faults[i];
    if (f->recovered) return;
    if (f->end_us >= s->sc->duration_us)
        f->undetermined = SIM_UNDETERMINED_ACTIVE;
    else if (f->next_us != FB_TIME_NONE && f->next_us < s->sc->duration_us)
        f->undetermined = SIM_UNDETERMINED_NEXT; /* not back before the next one began */
    else if (!s->judged[i])
        f->undetermined = SIM_UNDETERMINED_NO_WINDOW;
    if (f->undetermined == SIM_UNDETERMINED_NEXT) f->spillover_us = f->next_us - f->end_us;
    if (f->undetermined == SIM_DETERMINED)
        f->spillover_us = s->now > f->end_us ? s->now - f->end_us : 0;
}

/* The tier's figures: sums over its replicas; its peaks and longest wait, the largest. */
static void gateway_total(sim_gateway_summary *g) {
    sim_replica_summary *t = &g->total;
    memset(t, 0, sizeof *t);
    for (uint32_t k = 0; k < g->replicas; k++) {
        const sim_replica_summary *x = &g->replica[k];
        t->calls += x->calls;
        t->queued += x->queued;
        t->queue_full += x->queue_full;
        t->abandoned += x->abandoned;
        t->attempts += x->attempts;
        t->cooldowns += x->cooldowns;
        t->learned += x->learned;
        t->wait_us_total += x->wait_us_total;
        if (x->busy_peak > t->busy_peak) t->busy_peak = x->busy_peak;
        if (x->queue_peak > t->queue_peak) t->queue_peak = x->queue_peak;
        if (x->wait_us_max > t->wait_us_max) t->wait_us_max = x->wait_us_max;
    }
}

/*
 * Class c's ends and latencies into the summary (sim__stat_end counted each
 * request once): its counts by end, its latency with its successes', and the
 * run's totals. Histograms merge exactly, so the order does not matter.
 */
static void class_totals(sim *s, uint32_t c) {
    sim_summary *sum = s->sum;
    sim_class_summary *k = &sum->classes[c];
    const uint64_t *e = s->class_ends[c];
    for (int x = 0; x < SIM_END_COUNT; x++) {
        k->ended += e[x];
        sum->ended[x] += e[x];
    }
    k->success = e[SIM_END_SUCCESS];
    k->degraded = e[SIM_END_DEGRADED];
    k->errors = k->ended - k->success - k->degraded;
    sum->success_fallback += k->success_fallback;
    sum->slo_missed += k->slo_missed;
    sum->errors += k->errors;
    if (!s->class_exposed[c]) sum->bad_collateral += k->errors + k->slo_missed;
    fb_hist_merge(&sum->latency_ok, &s->ok_hist[c]);
    fb_hist_merge(&k->latency, &s->ok_hist[c]);
    fb_hist_merge(&sum->latency, &k->latency);
}

/* The summary's ends and latencies: sums over the classes (sim__stat_end). */
static void stats_ends(sim *s) {
    sim_summary *sum = s->sum;
    for (uint32_t c = 0; s->ok_hist && c < s->sc->class_count; c++) class_totals(s, c);
    sum->success_primary = sum->ended[SIM_END_SUCCESS] - sum->success_fallback;
    sum->bad = sum->errors + sum->slo_missed;
}

void sim__stat_finalize(sim *s) {
    sim_summary *sum = s->sum;
    stats_ends(s);
    for (uint32_t l = 0; l < s->NL; l++) { /* the layers' retries and fallbacks (simint.h) */
        sum->retries += sum->layers[l].retries;
        sum->fallbacks += sum->layers[l].fallbacks;
    }
    sum->end_us = s->now;
    sum->events = s->q.pushed + s->events_ahead; /* handled ahead: scheduled, never queued */
    sum->events_handled = s->events_handled;
    sum->events_stale = s->events_stale;
    sum->events_ahead = s->events_ahead;
    sum->events_cancelled = s->q.cancelled;
    sum->queue_peak = s->q.peak;
    close_open_periods(s);
    for (uint32_t p = 0; p < s->P; p++) {
        sim__stat_provider_tick(s, p); /* since the last row */
        sum->providers[p].unfinished = s->provs[p].busy + s->provs[p].qlive;
        for (uint32_t l = 0; l < s->NL; l++) add_core_counts(s, l, p);
    }
    for (uint32_t l = 0; l < s->NL; l++) {
        if (s->lays[l].cfg->budget.kind == FB_BUDGET_NONE) continue;
        for (uint32_t k = seat_first(s, l); k < seat_end(s, l); k++)
            sum->budget_refusals +=
                fb_budget_stats_get(&s->budgets[(size_t)k * s->NL + l])->refused;
    }
    for (uint32_t i = 0; i < sum->fault_count; i++) finalize_spillover(s, i);
    for (uint32_t k = 0; s->bd_hist && k < sum->breakdown.window_count; k++) {
        sim_window_summary *w = &sum->breakdown.windows[k];
        w->latency_p50_us = fb_hist_percentile(&s->bd_hist[k], 50);
        w->latency_p90_us = fb_hist_percentile(&s->bd_hist[k], 90);
        w->latency_p99_us = fb_hist_percentile(&s->bd_hist[k], 99);
    }
    if (s->fleet) sim__fleet_finalize(s);
    gateway_total(&sum->gateway);
}

/* ---- invariants (tests: sim_run_opts.check_invariants) ---- */

static int broken(sim *s, const char *what) {
    sim__stop(s, FB_ESTATE, "invariant: %s", what);
    return FB_ESTATE;
}

static int check_requests(sim *s) {
    sim_summary *sum = s->sum;
    uint64_t ended = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) ended += sum->ended[e];
    if (ended + s->live != sum->requests) {
        sim__stop(s, FB_ESTATE, "invariant: %llu requests arrived but %llu ended and %llu are live",
                  (unsigned long long)sum->requests, (unsigned long long)ended,
                  (unsigned long long)s->live);
        return FB_ESTATE;
    }
    if (s->live == 0 && (s->pod_queue_total != 0 || s->busy_total != 0)) {
        sim__stop(s, FB_ESTATE,
                  "invariant: no request is live but %llu are queued and %llu workers busy",
                  (unsigned long long)s->pod_queue_total, (unsigned long long)s->busy_total);
        return FB_ESTATE;
    }
    for (uint32_t k = 0; k < s->nseats; k++) { /* the pods, then the gateway's replicas */
        if (s->live == 0 && (s->pods[k].qlive != 0 || s->pods[k].busy != 0)) {
            sim__stop(s, FB_ESTATE, "invariant: %s %u still counts %u queued, %u busy",
                      k < s->npods ? "pod" : "gateway replica", k < s->npods ? k : k - s->npods,
                      s->pods[k].qlive, s->pods[k].busy);
            return FB_ESTATE;
        }
    }
    return FB_OK;
}

int sim__stat_check_invariants(sim *s) {
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
            sim__stop(s, FB_ESTATE, "invariant: provider %s has more outcomes than attempts",
                      s->sc->providers[p].name);
            return FB_ESTATE;
        }
    }
    if (attempts != sum->attempts || fabs(cost - sum->cost_usd) > 1e-6 * (1 + cost))
        return broken(s, "attempts or cost do not add up across providers");
    return FB_OK;
}
