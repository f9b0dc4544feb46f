/*
 * gateway.c - a variant's gateway tier: replicas between the pods and the providers.
 *
 * The gateway's layers are the innermost of every stack (scenario "gateway";
 * docs/scenario-format.md, "Gateway tier"). When a pod's last layer makes an
 * attempt, the call reaches a replica chosen by the balance rule
 * (sim__gateway_enter): a free worker of the replica runs the gateway's layers
 * against the providers with that replica's own state (its seat: s->npods +
 * replica, whose engines, breakers, budgets and connections are its own);
 * else the call waits in the replica's queue; a full queue answers at once
 * with the tier's queue_full status, which the pod's layer classifies as any
 * answer. When the gateway's first layer is done, or the call is given up
 * (a timeout or deadline outside it), the call leaves (sim__gateway_leave):
 * its worker goes to the next call that waits.
 */
#include "sim/simint.h"

#define PURPOSE_GATEWAY 9u

int sim__gateway_setup(sim *s) {
    fb_rng_derive(&s->gw_rng, s->sc->seed, 0, PURPOSE_GATEWAY);
    s->sum->gateway.replicas = s->pol->gateway.replicas;
    return FB_OK;
}

/* The replica a call goes to, by the tier's balance rule: its seat. */
static uint32_t pick(sim *s) {
    const sim_gateway *g = &s->pol->gateway;
    uint32_t n = g->replicas, k = 0;
    switch (g->balance) {
    case SIM_BALANCE_RANDOM:
        k = (uint32_t)fb_rng_below(&s->gw_rng, n);
        break;
    case SIM_BALANCE_LEAST_BUSY: {
        /* the fewest calls held (busy + queued); ties: the round-robin's next */
        uint32_t best = UINT32_MAX;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t c = (s->gw_rr + j) % n;
            const pod *pd = &s->pods[s->npods + c];
            if (pd->busy + pd->qlive < best) {
                best = pd->busy + pd->qlive;
                k = c;
            }
        }
        s->gw_rr = (k + 1) % n;
        break;
    }
    default:
        k = s->gw_rr;
        s->gw_rr = (s->gw_rr + 1) % n;
        break;
    }
    return s->npods + k;
}

static void take_worker(sim *s, req *r) {
    pod *pd = &s->pods[r->seat];
    pd->busy++;
    r->gw = GW_HELD;
    sim__stat_gateway(s, r->seat, GW_STAT_WORKER, pd->busy);
}

void sim__gateway_enter(sim *s, uint32_t ri, uint32_t depth, uint8_t chosen) {
    req *r = R(s, ri);
    const sim_gateway *g = &s->pol->gateway;
    uint32_t seat = pick(s);
    pod *pd = &s->pods[seat];
    sim__stat_gateway(s, seat, GW_STAT_CALL, 0);
    r->seat = seat;
    r->gw_chosen = chosen;
    if (pd->busy < g->workers && pd->qlive == 0) {
        take_worker(s, r);
        sim__gateway_begin(s, ri, depth, chosen);
        return;
    }
    if (pd->qlive >= g->queue) {
        sim__stat_gateway(s, seat, GW_STAT_QUEUE_FULL, 0);
        sim__gateway_refused(s, ri, depth, (int)g->queue_full_status);
        return;
    }
    gw_ref e = {ri, r->gen, ++r->gw_ticket};
    if (sim_fifo_push(&pd->queue, &e) != FB_OK) {
        sim__stop(s, FB_ECAP, "gateway queue cannot grow at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    r->gw = GW_QUEUED;
    r->gw_since_us = s->now;
    pd->qlive++;
    sim__stat_gateway(s, seat, GW_STAT_QUEUED, pd->qlive);
}

/* Start the calls that wait at replica `seat` while it has free workers (flat, as pod_pull). */
static void pull(sim *s, uint32_t seat) {
    pod *pd = &s->pods[seat];
    if (pd->pulling) return;
    pd->pulling = true;
    gw_ref e;
    while (pd->busy < s->pol->gateway.workers && sim_fifo_pop(&pd->queue, &e)) {
        req *r = R(s, e.id);
        if (r->gen != e.gen || r->gw != GW_QUEUED || r->gw_ticket != e.ticket) continue;
        pd->qlive--;
        take_worker(s, r);
        sim__stat_gateway(s, seat, GW_STAT_WAITED, (uint64_t)(s->now - r->gw_since_us));
        sim__gateway_begin(s, e.id, r->stack->gateway, r->gw_chosen);
        if (s->rc != FB_OK) break;
    }
    pd->pulling = false;
}

void sim__gateway_leave(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    uint32_t seat = r->seat;
    pod *pd = &s->pods[seat];
    if (r->gw == GW_QUEUED) {
        pd->qlive--; /* its entry stays in the queue, stale by its ticket */
        sim__stat_gateway(s, seat, GW_STAT_ABANDONED, 0);
    } else if (r->gw == GW_HELD) {
        pd->busy--;
    }
    bool held = r->gw == GW_HELD;
    r->gw = GW_NONE;
    if (held) pull(s, seat);
}
