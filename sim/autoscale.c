/*
 * autoscale.c - an autoscaled fleet: its pods' lives and the HPA that sizes it.
 *
 * A variant with "autoscale" runs on pod slots, twice autoscale.max of them
 * (pods that drain after a scale down still hold theirs). A pod is off,
 * pending (decided: scheduling and pulling its image, `delay`), starting
 * (its process runs: cold start, `cold_start`), ready (it takes traffic:
 * arrivals are dealt round-robin to the ready pods), or draining (removed:
 * it takes no new request and finishes those it holds, then is off). A pod
 * that starts gets fresh policy state: its breakers closed with empty
 * windows, full limiters and budgets, its round robin over hosts back at
 * the first (sim__setup_pod_policy), no connections (sim__conns_pod_reset), so every
 * new pod pays its own way into an outage. The arrivals' own round robin
 * (sim__autoscale_route) keeps its counter over the changing ready set, as
 * Envoy's keeps its index over a changing host set (docs/models.md).
 *
 * Every second the autoscaler samples its metric over the ready pods (the
 * requests a pod holds, running or queued, or the share of its workers that
 * are busy); every period (whole seconds), right after that second's sample,
 * it averages the window's samples and decides as
 * the HPA does (hpa.c): the replica calculation with the tolerance, pods not
 * yet ready counted as missing metrics, the stabilization window, the
 * scaling policies, [min, max]. A scale down removes the pods not yet ready
 * first, newest first, then the ready pods that became ready last.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/fleetint.h"

#define SAMPLE_US FB_US_PER_S

static uint32_t slots_for(const sim_autoscale *a) {
    return 2 * a->max;
}

static int alloc_state(autoscaler *as, uint32_t n, const sim_autoscale *a) {
    as->phase = calloc(n, sizeof *as->phase);
    as->gen = calloc(n, sizeof *as->gen);
    as->used = calloc(n, sizeof *as->used);
    as->ready = calloc(n, sizeof *as->ready);
    as->waiting = calloc(n, sizeof *as->waiting);
    as->nsamples = (uint32_t)((a->window_us + SAMPLE_US - 1) / SAMPLE_US);
    as->samples = calloc(as->nsamples, sizeof *as->samples);
    fb_time_us stab = a->up.stabilization_us > a->down.stabilization_us ? a->up.stabilization_us
                                                                        : a->down.stabilization_us;
    fb_time_us per = a->up.period_us > a->down.period_us ? a->up.period_us : a->down.period_us;
    /* one entry per decision, and the initial recommendation */
    as->recs.cap = (uint32_t)(stab / a->period_us) + 2;
    as->events.cap = (uint32_t)(per / a->period_us) + 2;
    as->recs.e = calloc(as->recs.cap, sizeof *as->recs.e);
    as->events.e = calloc(as->events.cap, sizeof *as->events.e);
    if (!as->phase || !as->gen || !as->used || !as->ready || !as->waiting || !as->samples ||
        !as->recs.e || !as->events.e)
        return FB_ENOMEM;
    return FB_OK;
}

int sim__autoscale_setup(sim *s) {
    const sim_autoscale *a = &s->pol->autoscale;
    if (!a->on) return FB_OK;
    autoscaler *as = calloc(1, sizeof *as);
    if (as == NULL) return FB_ENOMEM;
    s->fleet->as = as;
    as->cfg = a;
    int rc = alloc_state(as, s->npods, a);
    if (rc != FB_OK) return rc;
    for (uint32_t k = 0; k < s->sc->pods.count; k++) {
        as->phase[k] = POD_READY;
        as->used[k] = true;
        as->ready[as->nready++] = k;
    }
    s->sum->fleet.pods_peak = as->nready;
    sim__push(s, SAMPLE_US, EV_SCALE_SAMPLE, 0, 0, 0);
    return FB_OK;
}

void sim__autoscale_free(sim *s) {
    autoscaler *as = s->fleet->as;
    if (as == NULL) return;
    free(as->phase);
    free(as->gen);
    free(as->used);
    free(as->ready);
    free(as->waiting);
    free(as->samples);
    free(as->recs.e);
    free(as->events.e);
    free(as);
}

/* Slots: twice max, so that pods draining after a scale down never block a scale up. */
uint32_t sim__autoscale_slots(const sim_policy *pol, uint32_t count) {
    return pol->autoscale.on ? slots_for(&pol->autoscale) : count;
}

uint32_t sim__autoscale_route(sim *s) {
    const autoscaler *as = s->fleet->as;
    return as->ready[s->rr++ % as->nready];
}

bool sim__autoscale_pod_live(const autoscaler *as, uint32_t podi) {
    return as->phase[podi] == POD_STARTING || as->phase[podi] == POD_READY ||
           as->phase[podi] == POD_DRAINING;
}

/* ---- the metric ---- */

/* The metric now, averaged over the ready pods. */
static double metric_now(const sim *s, const autoscaler *as) {
    double sum = 0;
    for (uint32_t i = 0; i < as->nready; i++) {
        const pod *pd = &s->pods[as->ready[i]];
        sum += as->cfg->metric == SIM_SCALE_UTILIZATION
                   ? (double)pd->busy / (double)s->sc->pods.workers
                   : (double)(pd->busy + pd->qlive);
    }
    return as->nready ? sum / (double)as->nready : 0;
}

static void decide(sim *s, autoscaler *as);

/* Every second a sample; every period (whole seconds), a decision on the window just ended. */
void sim__on_scale_sample(sim *s) {
    autoscaler *as = s->fleet->as;
    as->samples[as->sample_pos] = metric_now(s, as);
    as->sample_pos = (as->sample_pos + 1) % as->nsamples;
    if (as->sample_fill < as->nsamples) as->sample_fill++;
    sim__push(s, s->now + SAMPLE_US, EV_SCALE_SAMPLE, 0, 0, 0);
    if (s->now % as->cfg->period_us == 0) decide(s, as);
}

/* The window's average (summed afresh: the same bits whatever came before). */
static double window_average(const sim *s, const autoscaler *as) {
    if (as->sample_fill == 0) return metric_now(s, as);
    double sum = 0;
    for (uint32_t i = 0; i < as->sample_fill; i++) sum += as->samples[i];
    return sum / (double)as->sample_fill;
}

/* ---- pods come and go ---- */

static void ready_changes(sim *s, autoscaler *as) {
    s->sum->fleet.pod_seconds += (double)as->nready * (double)(s->now - as->pods_since_us) / 1e6;
    as->pods_since_us = s->now;
}

static uint32_t free_slot(const sim *s, const autoscaler *as) {
    for (uint32_t k = 0; k < s->npods; k++)
        if (as->phase[k] == POD_OFF) return k;
    return NONE32;
}

static void add_pod(sim *s, autoscaler *as) {
    uint32_t k = free_slot(s, as);
    if (k == NONE32) {
        sim__stop(s, FB_ESTATE, "internal error: no pod slot free for a scale up");
        return;
    }
    as->gen[k]++;
    as->phase[k] = POD_PENDING;
    as->waiting[as->nwaiting++] = k;
    sim__push(s, s->now + as->cfg->delay_us, EV_POD_START, k, as->gen[k], 0);
}

/* The newest pod not yet ready is dropped; else the ready pod that became ready last drains. */
static void remove_pod(sim *s, autoscaler *as) {
    if (as->nwaiting > 0) {
        uint32_t k = as->waiting[--as->nwaiting];
        as->gen[k]++; /* its start and ready events are stale */
        as->phase[k] = POD_OFF;
        return;
    }
    ready_changes(s, as);
    uint32_t k = as->ready[--as->nready];
    as->phase[k] = POD_DRAINING;
    sim__autoscale_pod_freed(s, k);
}

void sim__on_pod_start(sim *s, uint32_t podi) {
    autoscaler *as = s->fleet->as;
    if (as->used[podi]) sim__stat_pod_retired(s, podi);
    as->used[podi] = true;
    as->phase[podi] = POD_STARTING;
    fb_rng_derive(&s->pods[podi].rng, s->sc->seed, ENTITY_POD + podi,
                  PURPOSE_POD_RESTART + ((uint64_t)as->gen[podi] << 8));
    sim__conns_pod_reset(s, podi);
    int rc = sim__setup_pod_policy(s, podi);
    if (rc != FB_OK) return; /* setup_pod_policy stopped the run */
    sim__push(s, s->now + as->cfg->cold_start_us, EV_POD_READY, podi, as->gen[podi], 0);
}

void sim__on_pod_ready(sim *s, uint32_t podi) {
    autoscaler *as = s->fleet->as;
    for (uint32_t i = 0; i < as->nwaiting; i++) {
        if (as->waiting[i] != podi) continue;
        memmove(&as->waiting[i], &as->waiting[i + 1], (as->nwaiting - i - 1) * sizeof(uint32_t));
        as->nwaiting--;
        break;
    }
    ready_changes(s, as);
    as->phase[podi] = POD_READY;
    as->ready[as->nready++] = podi;
    if (as->nready > s->sum->fleet.pods_peak) s->sum->fleet.pods_peak = as->nready;
}

void sim__autoscale_pod_freed(sim *s, uint32_t podi) {
    autoscaler *as = s->fleet->as;
    const pod *pd = &s->pods[podi];
    if (as->phase[podi] == POD_DRAINING && pd->busy == 0 && pd->qlive == 0)
        as->phase[podi] = POD_OFF;
}

/* ---- the decision ---- */

static void log_scale(sim *s, const autoscaler *as, uint32_t from, uint32_t to, double value) {
    sim_log_event le;
    memset(&le, 0, sizeof le);
    le.type = SIM_EV_SCALE;
    le.t_us = s->now;
    le.pod = -1;
    le.pods_from = from;
    le.pods_to = to;
    le.pods_ready = as->nready;
    le.metric = value;
    sim__log_event(s, &le);
}

static void decide(sim *s, autoscaler *as) {
    const sim_autoscale *a = as->cfg;
    uint32_t current = as->nready + as->nwaiting;
    double value = window_average(s, as);
    if (!as->synced) {
        sim_hpa_history_add(&as->recs, s->now, (int32_t)current); /* the initial recommendation */
        as->synced = true;
    }
    uint32_t want = sim_hpa_replicas(value, a->target, a->tolerance, as->nready, as->nwaiting);
    want = sim_hpa_stabilize(&as->recs, a, current, want, s->now);
    want = sim_hpa_bound(&as->events, a, current, want, s->now);
    if (want == current) return;
    sim_hpa_history_add(&as->events, s->now, (int32_t)want - (int32_t)current);
    sim__stat_scale(s, current, want);
    log_scale(s, as, current, want, value);
    for (uint32_t n = current; n < want && s->rc == FB_OK; n++) add_pod(s, as);
    for (uint32_t n = want; n < current; n++) remove_pod(s, as);
}

/* The last stretch of pod-seconds, and per-pod open time over the mean pods. */
void sim__autoscale_finish(sim *s) {
    autoscaler *as = s->fleet->as;
    ready_changes(s, as);
    double end_s = (double)s->now / 1e6;
    double mean = end_s > 0 ? s->sum->fleet.pod_seconds / end_s : (double)as->nready;
    for (uint32_t p = 0; p < s->P; p++)
        if (as->open_pod_s[p] > 0 && mean > 0)
            s->sum->providers[p].breaker_open_s += as->open_pod_s[p] / mean;
}
