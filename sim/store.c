/*
 * store.c - breakers: one per pod and provider, or shared through a store.
 *
 * With scope "per_pod" every pod owns a core breaker per provider. With
 * scope "shared" one core breaker per provider lives in a store (think
 * Redis) and each pod sees it through a view: the pod rejects on its own
 * while its view says open, asks the store once the open period is over,
 * and sends every result to the store. Results reach the store, and the
 * store's state changes reach the pods, after the policy's sync delay: two
 * FIFO lanes of the event queue, whose payloads wait in two FIFOs in the
 * same order.
 */
#include <string.h>

#include "sim/simint.h"

bool is_open(fb_breaker_state st) {
    return st == FB_BREAKER_OPEN || st == FB_BREAKER_FORCED_OPEN;
}

/*
 * A breaker's state as the next call would find it, without changing it: an
 * open breaker whose deadline has passed admits a probe, so it reads as
 * half-open. Writing rows must never move the model (rows would otherwise
 * depend on the tick).
 */
fb_breaker_state seen_state(const fb_breaker *b, fb_time_us now) {
    fb_breaker_state st = fb_breaker_state_get(b);
    if (st == FB_BREAKER_OPEN && now >= fb_breaker_open_until(b)) return FB_BREAKER_HALF_OPEN;
    return st;
}

/* ---- the pods' side of a shared breaker ---- */

static bool view_allow(void *ctx, fb_time_us now, fb_breaker_permit *permit) {
    view *v = ctx;
    sim *s = v->s;
    switch (v->state) {
    case FB_BREAKER_CLOSED:
    case FB_BREAKER_FORCED_CLOSED:
    case FB_BREAKER_METRICS_ONLY:
    case FB_BREAKER_DISABLED:
        permit->generation = v->generation;
        permit->admitted_us = now;
        permit->kind = v->state == FB_BREAKER_DISABLED ? FB_PERMIT_UNTRACKED : FB_PERMIT_CALL;
        permit->slot = 0;
        return true;
    case FB_BREAKER_FORCED_OPEN:
        permit->kind = FB_PERMIT_REJECTED;
        stat_breaker_rejection(s, v->layer, v->provider);
        return false;
    case FB_BREAKER_OPEN:
        if (now < v->open_until_us) {
            /* rejected by the pod's own view: the store never hears of it */
            permit->kind = FB_PERMIT_REJECTED;
            stat_breaker_rejection(s, v->layer, v->provider);
            return false;
        }
        break;
    default:
        break;
    }
    /* the open period is over in this pod's view: probes are granted by the store */
    return fb_breaker_allow(&s->stores[(size_t)v->layer * s->P + v->provider], now, permit);
}

/* Would view_allow() admit now? (The groups of the fallback engine peek.) */
static bool view_admits(void *ctx, fb_time_us now) {
    view *v = ctx;
    switch (v->state) {
    case FB_BREAKER_FORCED_OPEN:
        return false;
    case FB_BREAKER_OPEN:
        if (now < v->open_until_us) return false;
        break;
    case FB_BREAKER_HALF_OPEN:
        break;
    default:
        return true;
    }
    return fb_breaker_admits(&v->s->stores[(size_t)v->layer * v->s->P + v->provider], now);
}

static void view_record(void *ctx, const fb_breaker_permit *permit, const fb_breaker_result *result,
                        fb_time_us now) {
    view *v = ctx;
    sim *s = v->s;
    if (permit->kind == FB_PERMIT_UNTRACKED) return;
    store_record rec = {v->layer, v->provider, *permit, *result};
    if (sim_fifo_push(&s->recs, &rec) != FB_OK) {
        stop(s, FB_ECAP, "shared store messages cap reached (limits.events) at t=%.3fs",
             (double)s->now / 1e6);
        return;
    }
    push_lane(s, LANE_STORE_RECORD, now + s->lays[v->layer].cfg->sync_delay_us, EV_STORE_RECORD, 0,
              0);
}

/* ---- the store's side ---- */

void on_store_record(sim *s) {
    store_record rec;
    sim_fifo_pop(&s->recs, &rec);
    fb_breaker_record(&s->stores[(size_t)rec.layer * s->P + rec.provider], &rec.permit, &rec.result,
                      s->now);
}

static void store_sync_push(sim *s, const bctx *bc, const fb_breaker_event *ev) {
    store_sync sy = {bc->layer, bc->provider, ev->to, ev->open_until_us, ev->generation};
    if (sim_fifo_push(&s->syncs, &sy) != FB_OK) {
        stop(s, FB_ECAP, "shared store messages cap reached (limits.events) at t=%.3fs",
             (double)s->now / 1e6);
        return;
    }
    push_lane(s, LANE_STORE_SYNC, ev->at_us + s->lays[bc->layer].cfg->sync_delay_us, EV_STORE_SYNC,
              0, 0);
}

void on_store_sync(sim *s) {
    store_sync sy;
    sim_fifo_pop(&s->syncs, &sy);
    for (uint32_t k = 0; k < s->npods; k++) {
        view *v = &s->views[slot(s, sy.layer, k, sy.provider)];
        if (sy.generation < v->generation) continue;
        v->state = sy.state;
        v->open_until_us = sy.open_until_us;
        v->generation = sy.generation;
    }
}

/* ---- published openings (LiteLLM's cooldowns in Redis) ---- */

/*
 * Pod k reads the store every sync_delay_us, at k * delay / npods + m * delay:
 * the next read at or after t. An opening written at t is seen then, unless
 * it ended before (each pod reads on its own cycle, as LiteLLM's
 * DualCache throttles its Redis reads per key).
 */
static fb_time_us next_read(const sim *s, uint32_t layer, uint32_t k, fb_time_us t) {
    fb_time_us every = s->lays[layer].cfg->sync_delay_us;
    if (every <= 0) return t;
    fb_time_us phase = every * (fb_time_us)k / (fb_time_us)s->npods;
    if (t <= phase) return phase;
    fb_time_us m = (t - phase + every - 1) / every;
    return fb_time_add(phase, m * every);
}

/* An opening of pod `from`'s breaker, written to the store for the other pods to read. */
static void publish(sim *s, const bctx *bc, const fb_breaker_event *ev) {
    for (uint32_t k = 0; k < s->npods; k++) {
        if ((int)k == bc->pod) continue;
        fb_time_us at = next_read(s, bc->layer, k, ev->at_us);
        if (at >= ev->open_until_us) continue; /* over before this pod reads it */
        size_t i = slot(s, bc->layer, k, bc->provider);
        if (ev->open_until_us > s->published[i]) s->published[i] = ev->open_until_us;
        push(s, at, EV_PUBLISH, (uint32_t)i, 0, 0);
    }
}

void on_publish(sim *s, uint32_t slot_index) {
    fb_breaker *b = &s->breakers[slot_index];
    fb_time_us until = s->published[slot_index];
    if (until <= s->now) return;
    if (fb_breaker_state_get(b) == FB_BREAKER_OPEN && fb_breaker_open_until(b) >= until) return;
    fb_breaker_sync(b, FB_BREAKER_OPEN, until, s->now);
}

/* Every breaker's state changes come here: counted, logged, and the store's sent to the pods. */
void on_breaker_event(void *ctx, const fb_breaker_event *ev) {
    bctx *bc = ctx;
    sim *s = bc->s;
    stat_breaker_transition(s, bc, ev);
    if (bc->pod < 0) store_sync_push(s, bc, ev);
    if (bc->pod >= 0 && ev->to == FB_BREAKER_OPEN && ev->cause != FB_CAUSE_SYNC &&
        s->lays[bc->layer].cfg->breaker_scope == SIM_SCOPE_PUBLISHED)
        publish(s, bc, ev);
    sim_log_event le;
    memset(&le, 0, sizeof le);
    le.type = SIM_EV_BREAKER;
    le.t_us = ev->at_us;
    le.pod = bc->pod;
    le.provider = bc->provider;
    le.breaker = *ev;
    log_event(s, &le);
}

/* ---- setup ---- */

/* A breaker that starts open (forced open) is open from time 0. */
static void note_initial_state(sim *s, size_t slot, const fb_breaker *b) {
    if (!is_open(fb_breaker_state_get(b))) return;
    s->open_since[slot] = 0;
    s->open_end[slot] = fb_breaker_open_until(b);
}

static int init_breaker(sim *s, fb_breaker *b, bctx *ctx, int podi, uint32_t l, uint32_t p,
                        fb_rng *rng) {
    fb_breaker_config bc = s->lays[l].cfg->per_provider[p].breaker;
    ctx->s = s;
    ctx->pod = podi;
    ctx->layer = (uint8_t)l;
    ctx->provider = (uint8_t)p;
    bc.on_event = on_breaker_event;
    bc.event_ctx = ctx;
    bc.rng = rng;
    if (s->lays[l].cfg->eject_limit && podi >= 0)
        bc.eject_group = &s->eject_groups[(size_t)podi * s->NL + l];
    int rc = fb_breaker_init(b, &bc, 0);
    if (rc != FB_OK)
        stop(s, FB_EINVAL, "invalid breaker for %s (%s)", s->sc->providers[p].name,
             fb_strerror(rc));
    return rc;
}

/*
 * Layer l's breaker of pod k for provider p (an outer layer's: for its one
 * target, p = 0), or its view of the shared one, into its fallback config.
 */
int pod_breaker(sim *s, uint32_t l, uint32_t k, uint32_t p, fb_fallback_provider *fp) {
    size_t i = slot(s, l, k, p);
    if (s->lays[l].cfg->breaker_scope == SIM_SCOPE_SHARED) {
        const fb_breaker *store = &s->stores[(size_t)l * s->P + p];
        view *v = &s->views[i];
        v->s = s;
        v->layer = (uint8_t)l;
        v->provider = (uint8_t)p;
        v->state = fb_breaker_state_get(store);
        v->open_until_us = fb_breaker_open_until(store);
        v->generation = fb_breaker_generation(store);
        fp->port.allow = view_allow;
        fp->port.record = view_record;
        fp->port.admits = view_admits;
        fp->port.ctx = v;
        return FB_OK;
    }
    int rc = init_breaker(s, &s->breakers[i], &s->bctxs[i], (int)k, l, p, &s->pods[k].rng);
    if (rc != FB_OK) return rc;
    note_initial_state(s, i, &s->breakers[i]);
    fp->breaker = &s->breakers[i];
    return FB_OK;
}

/* Layer l's shared stores, one per provider with a breaker (its one target, when outer). */
int setup_stores(sim *s, uint32_t l) {
    const sim_layer *L = s->lays[l].cfg;
    if (L->breaker_scope != SIM_SCOPE_SHARED) return FB_OK;
    uint32_t targets = L->role == SIM_ROLE_OUTER ? 1 : s->P;
    for (uint32_t p = 0; p < targets; p++) {
        if (!L->per_provider[p].has_breaker) continue;
        size_t i = store_slot(s, l, p);
        fb_breaker *b = &s->stores[(size_t)l * s->P + p];
        /* the store's open jitter draws from pod 0's stream (as every run before it did) */
        int rc = init_breaker(s, b, &s->bctxs[i], -1, l, p, &s->pods[0].rng);
        if (rc != FB_OK) return rc;
        note_initial_state(s, i, b);
    }
    return FB_OK;
}
