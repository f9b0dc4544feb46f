/*
 * fleet.c - the fleet's dynamics: their state, their events, and the hooks
 * the request path calls.
 *
 * A run gets this state only when its scenario uses one of the mechanisms
 * (per-pod sources, serial clients, re-submissions, autoscaling, store
 * outages); otherwise s->fleet stays NULL and nothing here runs. The hooks,
 * in a request's order: sim__fleet_arrive() picks its pod (the per-pod source that
 * made it, or round-robin over the pods taking traffic) and gives a
 * re-submission its user's tokens; sim__fleet_end() lets its user submit it again
 * and a serial client start its next call; sim__fleet_pod_freed() lets a draining
 * pod go once it is empty. sim__fleet_step() hands the fleet's events to
 * sources.c, users.c, autoscale.c and store.c.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/fleetint.h"

int sim__fleet_setup(sim *s) {
    const sim_scenario *sc = s->sc;
    bool used = false;
    for (int f = SIM_FEATURE_AUTOSCALE; f <= SIM_FEATURE_STORE_OUTAGE; f++)
        used |= scn_uses(sc, (sim_feature)f);
    if (!used) return FB_OK;
    fleet *f = calloc(1, sizeof *f);
    if (f == NULL) return FB_ENOMEM;
    s->fleet = f;
    f->arriving_pod = NONE32;
    sim__pool_init(&f->resubs, sizeof(resub), (size_t)sc->limits.in_flight_max);
    int rc = sim__sources_setup(s);
    if (rc == FB_OK) rc = sim__autoscale_setup(s);
    if (rc == FB_OK) rc = sim__store_outages_setup(s);
    return rc;
}

void sim__fleet_teardown(sim *s) {
    fleet *f = s->fleet;
    if (f == NULL) return;
    sim__sources_free(s);
    sim__autoscale_free(s);
    sim__pool_free(&f->resubs);
    free(f);
    s->fleet = NULL;
}

/* 1: handled; 0: stale (a pod's start or readiness after it was dropped); -1: not the fleet's. */
int sim__fleet_step(sim *s, const sim_event *ev) {
    if (s->fleet == NULL) return -1;
    const autoscaler *as = s->fleet->as;
    switch (ev->kind) {
    case EV_POD_ARRIVAL:
        sim__on_pod_arrival(s, ev->id, ev->arg);
        return 1;
    case EV_SERIAL:
        sim__on_serial(s, ev->id);
        return 1;
    case EV_RESUBMIT:
        sim__on_resubmit(s, ev->id);
        return 1;
    case EV_SCALE_SAMPLE:
        sim__on_scale_sample(s);
        return 1;
    case EV_POD_START:
        if (as == NULL || as->gen[ev->id] != ev->gen) return 0;
        sim__on_pod_start(s, ev->id);
        return 1;
    case EV_POD_READY:
        if (as == NULL || as->gen[ev->id] != ev->gen) return 0;
        sim__on_pod_ready(s, ev->id);
        return 1;
    case EV_STORE_EDGE:
        sim__on_store_edge(s, ev->id, ev->arg != 0);
        return 1;
    default:
        return -1;
    }
}

/* A re-submission is named by the stream of the request it repeats (each request is repeated at
   most once: a chain of them is named link by link), a serial client's call by its class and
   its count (below 2^40: limits.requests is at most 1e11). */
const fb_rng_family *sim__fleet_stream(sim *s, uint32_t cls, uint64_t *entity) {
    fleet *f = s->fleet;
    if (f->arriving != NULL) {
        *entity = f->arriving->parent;
        return &s->resub_family;
    }
    if (!s->sc->classes[cls].serial) return NULL;
    *entity = (uint64_t)cls << 40 | f->serial[cls].calls++;
    return &s->serial_req_family;
}

/* A new request: its pod, and what a re-submission carries over from the failed one. */
void sim__fleet_arrive(sim *s, req *r) {
    fleet *f = s->fleet;
    if (f->arriving_pod != NONE32)
        r->pod = f->arriving_pod;
    else if (f->as)
        r->pod = sim__autoscale_route(s);
    else
        r->pod = s->rr++ % s->npods;
    if (f->pod_requests) f->pod_requests[r->pod]++;
    const resub *e = f->arriving;
    if (e == NULL) return;
    f->arriving = NULL;
    r->prompt_tokens = e->prompt_tokens;
    r->completion_tokens = e->completion_tokens;
    r->tokens_left = e->completion_tokens;
    r->resubmits = e->count;
}

bool sim__fleet_end(sim *s, req *r, sim_end end) {
    if (s->sc->classes[r->cls].serial) sim__serial_end(s, r->cls);
    return sim__users_resubmit(s, r, end);
}

void sim__fleet_pod_freed(sim *s, uint32_t podi) {
    if (s->fleet->as) sim__autoscale_pod_freed(s, podi);
}

bool sim__fleet_pod_live(const sim *s, uint32_t podi) {
    return s->fleet == NULL || s->fleet->as == NULL || sim__autoscale_pod_live(s->fleet->as, podi);
}

bool sim__fleet_store_down(const sim *s) {
    return s->fleet != NULL && s->fleet->store_down;
}

/* The fleet's columns of a row: pods at the end of its tick, the store during it. */
void sim__fleet_row(sim *s, sim_row *row) {
    const autoscaler *as = s->fleet->as;
    row->pods_ready = as ? as->nready : s->npods;
    row->pods_starting = as ? as->nwaiting : 0;
    for (uint32_t i = 0; i < s->sc->store_outage_count; i++) {
        const sim_store_window *w = &s->sc->store_outages[i];
        if (w->at_us < row->t_us + s->sc->tick_us && fb_time_add(w->at_us, w->for_us) > row->t_us)
            row->store_down = true;
    }
}

/* The summary's share: pods over the run, and how evenly per-pod sources loaded them. */
void sim__fleet_finalize(sim *s) {
    fleet *f = s->fleet;
    sim_fleet_summary *fs = &s->sum->fleet;
    if (f->as) {
        sim__autoscale_finish(s);
    } else {
        fs->pods_peak = s->npods;
        fs->pod_seconds = (double)s->npods * (double)s->now / 1e6;
    }
    if (f->pod_requests == NULL) return;
    fs->pod_requests_min = UINT64_MAX;
    for (uint32_t k = 0; k < s->npods; k++) {
        if (f->pod_requests[k] < fs->pod_requests_min) fs->pod_requests_min = f->pod_requests[k];
        if (f->pod_requests[k] > fs->pod_requests_max) fs->pod_requests_max = f->pod_requests[k];
    }
}
