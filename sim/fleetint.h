/*
 * fleetint.h - the fleet's dynamics, shared by their files (private to sim/).
 *
 *   fleet.c      the state, its setup, the events' dispatch and the hooks the
 *                request path calls (fleet_arrive, fleet_end, fleet_pod_freed)
 *   sources.c    per-pod sources (one Poisson process per pod) and serial clients
 *   users.c      users who submit a failed request again
 *   autoscale.c  the pods of an autoscaled fleet and the HPA that sizes it (hpa.c)
 *   store.c      the shared breakers' store, reachable or not (sim__fleet_store_down)
 *
 * struct sim has one pointer to this state, NULL when the scenario uses none
 * of it, so that every hook is skipped and a run is what it always was.
 */
#ifndef SIM_FLEETINT_H
#define SIM_FLEETINT_H

#include "sim/hpa.h"
#include "sim/simint.h"

#define PURPOSE_POD_SOURCE 5u  /* a per-pod source's arrivals: entity = class x pods + pod */
#define PURPOSE_POD_RESTART 6u /* a pod started by the autoscaler: + incarnation << 8 */
#define ENTITY_POD_SOURCE 0x80000000u

/* A pod's place in an autoscaled fleet. */
enum { POD_OFF = 0, POD_PENDING, POD_STARTING, POD_READY, POD_DRAINING };

/* A user's failed request waiting to be submitted again. */
typedef struct resub {
    uint32_t gen; /* first field: survives reuse (sim__pool_release) */
    uint8_t cls;
    uint16_t count; /* the re-submission it will be: 1, 2, ... */
    uint32_t user;  /* a closed-loop user, or NONE32 */
    uint32_t prompt_tokens, completion_tokens;
    uint64_t parent; /* the failed request's stream's increment: names the new one's stream */
} resub;

typedef struct serial_client {
    fb_time_us sched_us; /* the scheduled time of the call running or about to start */
    uint64_t calls;      /* calls made: names the next one's stream */
} serial_client;

typedef struct autoscaler {
    const sim_autoscale *cfg;
    uint8_t *phase;  /* per pod slot: POD_* */
    uint32_t *gen;   /* per pod slot: its incarnation (names its start and ready events) */
    bool *used;      /* per pod slot: has run before (its counters are banked when reused) */
    uint32_t *ready; /* pods taking traffic, in the order they became ready */
    uint32_t nready;
    uint32_t *waiting; /* pods decided but not ready (pending, then starting), oldest first */
    uint32_t nwaiting;
    double *samples; /* one per second over the window (a ring) */
    uint32_t nsamples, sample_pos, sample_fill;
    double sample_sum;
    sim_hpa_history recs, events;
    bool synced;              /* the first decision recorded the initial recommendation */
    fb_time_us pods_since_us; /* when nready last changed (pod_seconds) */
    double open_pod_s[SIM_PROVIDERS_MAX]; /* per-pod breakers' open time, summed over pods */
} autoscaler;

typedef struct fleet {
    /* per-pod sources: one sim_traffic per (class, pod) of the classes that have them */
    sim_traffic *sources;
    int32_t source_base[SIM_CLASSES_MAX]; /* class -> its first source, -1: none */
    uint64_t *pod_requests;               /* per pod (per-pod sources): requests received */
    uint32_t arriving_pod;                /* set by a per-pod source for new_request; else NONE32 */
    const resub *arriving;                /* the re-submission new_request is making */
    serial_client serial[SIM_CLASSES_MAX];
    pool resubs;
    autoscaler *as; /* NULL: a fixed fleet */
    bool store_down;
} fleet;

/* sources.c */
int sim__sources_setup(sim *s);
void sim__sources_free(sim *s);
void sim__on_pod_arrival(sim *s, uint32_t podi, uint32_t cls);
void sim__on_serial(sim *s, uint32_t cls);
void sim__serial_end(sim *s, uint32_t cls);

/* users.c */
bool sim__users_resubmit(sim *s, req *r, sim_end end);
void sim__on_resubmit(sim *s, uint32_t id);

/* autoscale.c */
int sim__autoscale_setup(sim *s);
void sim__autoscale_free(sim *s);
uint32_t sim__autoscale_route(sim *s);
void sim__on_scale_sample(sim *s);
void sim__on_pod_start(sim *s, uint32_t podi);
void sim__on_pod_ready(sim *s, uint32_t podi);
void sim__autoscale_pod_freed(sim *s, uint32_t podi);
bool sim__autoscale_pod_live(const autoscaler *as, uint32_t podi);
void sim__autoscale_finish(sim *s);

/* store.c */
int sim__store_outages_setup(sim *s);
void sim__on_store_edge(sim *s, uint32_t outage, bool end);

#endif /* SIM_FLEETINT_H */
