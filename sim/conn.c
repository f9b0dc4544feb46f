/*
 * conn.c - an attempt's way from its pod to its provider and back: the
 * pod's HTTP connections and the network (docs/models.md, "Network and
 * connections").
 *
 * An attempt leaves (attempt_depart) through its layer's pool of the pod,
 * when the layer has "connections": an idle connection to its provider is
 * reused; else a new one is opened if the pool may (its "max" over every
 * provider, its "per_provider"), closing an idle connection to another
 * provider when the pool is full; else the attempt waits, first come first
 * served over the pool, while its client's timeout runs. A new connection
 * costs its setup time. Then the network's latency to the provider, and on
 * the way back the same again (attempt_return). The connection goes back
 * to the pool when the answer reaches the client (idle, up to "keepalive"
 * idle ones), and is closed when the answer was a transport error or the
 * client gave up on the attempt (its timeout, a hedge that lost, the
 * request's end): conn_end. Without connections or network latency nothing
 * here runs and an attempt reaches its provider at once, as before.
 */
#include <stdlib.h>

#include "sim/simint.h"

/* A waiter: an attempt in a pool's queue (stale when the attempt moved on). */
typedef struct waiter {
    uint32_t id, gen;
    uint64_t seq;
} waiter;

static connpool *pool_for(sim *s, const attx *x) {
    if (s->pools == NULL || !s->lays[x->layer].cfg->has_pool) return NULL;
    return &s->pools[(size_t)x->pod * s->NL + x->layer];
}

static const sim_pool *cfg_of(const sim *s, const attx *x) {
    return &s->lays[x->layer].cfg->pool;
}

/* The client's timer runs from the send: arm it now, whatever comes after. */
static void arm_now(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    if (a->timer_armed || a->timeout_at_us == FB_TIME_MAX) return;
    a->timer_armed = true;
    sim__push(s, a->timeout_at_us, EV_ATTEMPT_TIMEOUT, ai, a->gen, 0);
}

static fb_rng *rng_of(sim *s, const attempt *a) {
    req *r = R(s, a->req);
    return r->gen == a->req_gen ? &r->rng : &s->pods[0].rng;
}

/* Can an attempt to provider p get a connection now (reused, new, or by closing an idle one)? */
static bool servable(const sim_pool *c, const connpool *cp, uint32_t p) {
    if (cp->idle[p] > 0) return true;
    if (c->per_provider > 0 && cp->busy[p] + cp->idle[p] >= c->per_provider) return false;
    return c->max == 0 || cp->open < c->max || cp->idle_total > 0;
}

/* Take a connection to p (servable() said one is there); true when it is a new one. */
static bool take(const sim_pool *c, connpool *cp, uint32_t p, uint32_t providers) {
    cp->busy[p]++;
    if (cp->idle[p] > 0) {
        cp->idle[p]--;
        cp->idle_total--;
        return false;
    }
    if (c->max == 0 || cp->open < c->max) {
        cp->open++;
        return true;
    }
    /* full: close an idle connection to another provider, the first in list order */
    for (uint32_t q = 0; q < providers; q++) {
        if (cp->idle[q] == 0) continue;
        cp->idle[q]--;
        cp->idle_total--;
        break;
    }
    return true;
}

/* On its way to the provider after `setup_us`, then the network's latency. */
static void travel(sim *s, uint32_t ai, fb_time_us setup_us) {
    attempt *a = A(s, ai);
    if (s->port) {
        sim__port_send(s, ai); /* a real network: its own setup and latency */
        return;
    }
    const sim_provider *pv = &s->sc->providers[a->provider];
    fb_time_us t = setup_us;
    if (pv->has_network) t += scn_dist_draw_us(rng_of(s, a), &pv->net_latency_us);
    if (t <= 0) {
        sim__provider_arrive(s, ai);
        return;
    }
    a->state = A_TRAVEL;
    sim__push(s, s->now + t, EV_AT_PROVIDER, ai, a->gen, 0);
}

/* Attempt ai gets a connection of its pool: reused, or new (its setup drawn). */
static void attach(sim *s, uint32_t ai, connpool *cp) {
    attempt *a = A(s, ai);
    attx *x = X(a);
    const sim_pool *c = cfg_of(s, x);
    x->conn = CONN_HELD;
    fb_time_us setup = 0;
    if (take(c, cp, a->provider, s->P)) {
        sim__stat_conn_setup(s, a->provider);
        setup = scn_dist_draw_us(rng_of(s, a), &c->setup_us);
    }
    travel(s, ai, setup);
}

/* The first waiter (over every provider) that a connection can serve now, popped; or false. */
static bool next_waiter(sim *s, connpool *cp, const sim_pool *c, uint32_t *ai) {
    int best = -1;
    uint64_t best_seq = UINT64_MAX;
    for (uint32_t p = 0; p < s->P; p++) {
        waiter *w;
        while ((w = sim_fifo_head(&cp->wait[p])) != NULL) {
            attempt *a = A(s, w->id);
            if (a->gen == w->gen && a->state == A_CONNWAIT) break;
            sim_fifo_pop(&cp->wait[p], &(waiter){0});
        }
        if (w != NULL && servable(c, cp, p) && w->seq < best_seq) {
            best = (int)p;
            best_seq = w->seq;
        }
    }
    if (best < 0) return false;
    waiter w;
    sim_fifo_pop(&cp->wait[best], &w);
    cp->wlive[best]--;
    s->provs[best].conn_waiting--;
    *ai = w.id;
    return true;
}

/* Connections came free: serve the waiters, first come first served. */
static void pump(sim *s, connpool *cp, const sim_pool *c) {
    uint32_t ai;
    while (s->rc == FB_OK && next_waiter(s, cp, c, &ai)) {
        attempt *a = A(s, ai);
        sim__stat_conn_waited(s, a->provider, s->now - X(a)->wait_since_us);
        attach(s, ai, cp);
    }
}

/* attempt_depart (simint.h), with connections or a network (s->att_x). */
void sim__conn_depart(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    attx *x = X(a);
    connpool *cp = pool_for(s, x);
    if (cp != NULL || s->sc->providers[a->provider].has_network) arm_now(s, ai);
    if (cp == NULL) {
        travel(s, ai, 0);
        return;
    }
    uint32_t p = a->provider;
    if (cp->wlive[p] == 0 && servable(cfg_of(s, x), cp, p)) {
        attach(s, ai, cp);
        return;
    }
    waiter w = {ai, a->gen, cp->seq++};
    if (sim_fifo_push(&cp->wait[p], &w) != FB_OK) {
        sim__stop(s, FB_ECAP, "connection queue cannot grow at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    cp->wlive[p]++;
    s->provs[p].conn_waiting++;
    x->conn = CONN_WAIT;
    x->wait_since_us = s->now;
    a->state = A_CONNWAIT;
    sim__stat_conn_wait(s, p);
}

void sim__on_at_provider(sim *s, uint32_t ai) {
    sim__provider_arrive(s, ai);
}

/* attempt_return (simint.h), with connections or a network and no port. */
bool sim__conn_return(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    const sim_provider *pv = &s->sc->providers[a->provider];
    if (!pv->has_network || (a->abandoned && !X(a)->left_running)) return false;
    fb_time_us t = scn_dist_draw_us(rng_of(s, a), &pv->net_latency_us);
    if (t <= 0) return false;
    a->state = A_RETURNING;
    sim__push(s, s->now + t, EV_AT_CLIENT, ai, a->gen, 0);
    return true;
}

void sim__on_at_client(sim *s, uint32_t ai) {
    sim__deliver(s, ai);
}

void sim__conn_end(sim *s, uint32_t ai, bool close) {
    attempt *a = A(s, ai);
    attx *x = X(a);
    connpool *cp = pool_for(s, x);
    uint32_t p = a->provider;
    if (cp == NULL || x->conn == CONN_NONE) return;
    if (x->conn == CONN_WAIT) {
        /* it leaves the queue: its entry is stale from now on */
        x->conn = CONN_NONE;
        cp->wlive[p]--;
        s->provs[p].conn_waiting--;
        return;
    }
    const sim_pool *c = cfg_of(s, x);
    x->conn = CONN_NONE;
    cp->busy[p]--;
    if (close || cp->idle_total >= c->keepalive) {
        cp->open--;
    } else {
        cp->idle[p]++;
        cp->idle_total++;
    }
    pump(s, cp, c);
}

int sim__setup_conns(sim *s) {
    bool any = false;
    for (uint32_t l = 0; l < s->NL; l++) any = any || s->lays[l].cfg->has_pool;
    if (!any) return FB_OK;
    s->pools = calloc((size_t)s->nseats * s->NL, sizeof *s->pools);
    if (s->pools == NULL) return FB_ENOMEM;
    size_t cap = (size_t)s->sc->limits.in_flight_max * 4 + 1;
    for (size_t i = 0; i < (size_t)s->nseats * s->NL; i++)
        for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++)
            sim_fifo_init(&s->pools[i].wait[p], sizeof(waiter), cap);
    return FB_OK;
}

/*
 * The autoscaler starts a pod in slot k again: the process before it held
 * only idle connections (a pod is off once it holds no request), and a new
 * process opens its own.
 */
void sim__conns_pod_reset(sim *s, uint32_t k) {
    if (s->pools == NULL) return;
    for (uint32_t l = 0; l < s->NL; l++) {
        connpool *cp = &s->pools[(size_t)k * s->NL + l];
        cp->open -= cp->idle_total;
        cp->idle_total = 0;
        for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) cp->idle[p] = 0;
    }
}

void sim__free_conns(sim *s) {
    if (s->pools == NULL) return;
    for (size_t i = 0; i < (size_t)s->nseats * s->NL; i++)
        for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) sim_fifo_free(&s->pools[i].wait[p]);
    free(s->pools);
    s->pools = NULL;
}
