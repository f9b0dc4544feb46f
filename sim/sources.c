/*
 * sources.c - arrivals that are not one process dealt round-robin to pods.
 *
 * Per-pod sources: a class with "source": "per_pod" gives each pod its own
 * Poisson process at the class's rate / pods.count, on its own random
 * stream, so pods receive different counts (the fleet's total is the same
 * Poisson process). Serial clients: a class with "serial": true is one client
 * with one call in flight, whose calls follow the class's schedule; the next
 * starts at the later of its scheduled time and the end of the one before,
 * so a slow provider slows the arrivals (the lag is measured), and the calls
 * still due when traffic ends are the backlog.
 */
#include <stdlib.h>

#include "sim/fleetint.h"

static sim_traffic *pod_source(sim *s, uint32_t cls, uint32_t podi) {
    return &s->fleet->sources[(size_t)s->fleet->source_base[cls] + podi];
}

static int per_pod_setup(sim *s, uint32_t n) {
    fleet *f = s->fleet;
    const sim_scenario *sc = s->sc;
    f->sources = calloc((size_t)n * s->npods, sizeof *f->sources);
    f->pod_requests = calloc(s->npods, sizeof *f->pod_requests);
    if (f->sources == NULL || f->pod_requests == NULL) return FB_ENOMEM;
    for (uint32_t c = 0; c < sc->class_count; c++) {
        if (f->source_base[c] < 0) continue;
        for (uint32_t k = 0; k < s->npods; k++) {
            sim_traffic *tr = pod_source(s, c, k);
            sim_traffic_init(tr, &sc->classes[c], sc->seed, c, sc->duration_us);
            fb_rng_derive(&tr->rng, sc->seed, ENTITY_POD_SOURCE + (uint64_t)c * SIM_PODS_MAX + k,
                          PURPOSE_POD_SOURCE);
            tr->scale = 1.0 / (double)s->npods;
            fb_time_us t = sim_traffic_next(tr, 0);
            if (t != FB_TIME_MAX) sim__push(s, t, EV_POD_ARRIVAL, k, 0, c);
        }
    }
    return FB_OK;
}

int sim__sources_setup(sim *s) {
    fleet *f = s->fleet;
    const sim_scenario *sc = s->sc;
    uint32_t n = 0;
    for (uint32_t c = 0; c < sc->class_count; c++) {
        f->source_base[c] = -1;
        if (sc->classes[c].source != SIM_SOURCE_PER_POD) continue;
        f->source_base[c] = (int32_t)(n++ * s->npods);
    }
    int rc = n > 0 ? per_pod_setup(s, n) : FB_OK;
    for (uint32_t c = 0; rc == FB_OK && c < sc->class_count; c++) {
        if (!sc->classes[c].serial) continue;
        fb_time_us t = sim_traffic_next(&s->traffic[c], 0);
        f->serial[c].sched_us = t;
        if (t != FB_TIME_MAX) sim__push(s, t, EV_SERIAL, c, 0, 0);
    }
    return rc;
}

void sim__sources_free(sim *s) {
    free(s->fleet->sources);
    free(s->fleet->pod_requests);
}

void sim__on_pod_arrival(sim *s, uint32_t podi, uint32_t cls) {
    fleet *f = s->fleet;
    f->arriving_pod = podi;
    sim__new_request(s, cls, NONE32, NONE32);
    f->arriving_pod = NONE32;
    fb_time_us t = sim_traffic_next(pod_source(s, cls, podi), s->now);
    if (t != FB_TIME_MAX) sim__push(s, t, EV_POD_ARRIVAL, podi, 0, cls);
}

void sim__on_serial(sim *s, uint32_t cls) {
    sim__stat_serial_lag(s, s->now - s->fleet->serial[cls].sched_us);
    sim__new_request(s, cls, NONE32, sim__recorded_index(s, cls, NONE32));
}

/* The calls scheduled from `t` to the end of traffic, none of which will start. */
static void count_backlog(sim *s, sim_traffic *tr, fb_time_us t) {
    uint64_t n = 0, room = s->sc->limits.requests_max;
    for (; t != FB_TIME_MAX; t = sim_traffic_next(tr, t)) {
        if (++n > room) {
            sim__stop(s, FB_ECAP, "a serial client's backlog exceeds limits.requests (%llu)",
                      (unsigned long long)room);
            return;
        }
    }
    sim__stat_serial_backlog(s, n);
}

/* The serial client's call ended: the next at the later of its schedule and now. */
void sim__serial_end(sim *s, uint32_t cls) {
    serial_client *sc = &s->fleet->serial[cls];
    sim_traffic *tr = &s->traffic[cls];
    fb_time_us t = sim_traffic_next(tr, sc->sched_us);
    if (t == FB_TIME_MAX) return; /* its schedule ended with the traffic window */
    sc->sched_us = t;
    fb_time_us start = t > s->now ? t : s->now;
    if (start >= s->sc->duration_us) {
        count_backlog(s, tr, t);
        return;
    }
    sim__push(s, start, EV_SERIAL, cls, 0, 0);
}
