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
 *
 * The store can be unreachable (breaker_store.outages). Then results sent to
 * it, or on their way, are lost, its state changes do not reach the pods,
 * and each pod does what the layer's store_outage says: fail_open admits
 * every call (pybreaker's CircuitRedisStorage with fallback_circuit_state
 * "closed": a RedisError reads as the fallback state, and counter writes are
 * logged and lost), fail_closed rejects every call (fallback "open"), local
 * keeps the pod's last view while it says open and otherwise asks a breaker
 * of the pod's own, fresh at the outage's start and dropped at its end. When
 * the store is back, the pods read its state again (after the sync delay).
 *
 * Published openings (LiteLLM's cooldowns, a DualCache of memory and Redis)
 * are each pod's own breakers: an outage keeps a pod's own cooldowns (its
 * memory has them) and hides the others'. A cooldown written during the
 * outage never reaches Redis (RedisCache.set_cache logs the error); a read
 * during it finds nothing new (async_batch_get_cache returns {}, and
 * DualCache keeps what memory had), so the pod learns a cooldown written
 * before the outage at its first read after it, if the cooldown lasts.
 */
#include <string.h>

#include "sim/fleetint.h"

/* A permit of a pod's local breaker (store outage, "local"): its generation carries this bit. */
#define LOCAL_PERMIT (1ull << 63)

/* ---- the pods' side of a shared breaker ---- */

/* Does the pod's last view of the store say open? */
static bool view_says_open(const view *v, fb_time_us now) {
    return v->state == FB_BREAKER_FORCED_OPEN ||
           (v->state == FB_BREAKER_OPEN && now < v->open_until_us);
}

/* The store cannot be reached: the layer's store_outage decides. */
static bool allow_unreachable(view *v, fb_time_us now, fb_breaker_permit *permit) {
    sim *s = v->s;
    sim__stat_store(s, STORE_UNREACHABLE);
    sim_store_outage mode = s->lays[v->layer].cfg->store_outage;
    bool view_open = view_says_open(v, now);
    if (mode == SIM_STORE_FAIL_OPEN) {
        permit->admitted_us = now;
        permit->kind = FB_PERMIT_UNTRACKED; /* its result has nowhere to go */
        return true;
    }
    if (mode == SIM_STORE_LOCAL && !view_open) {
        fb_breaker *local = &s->breakers[(size_t)(v - s->views)];
        if (fb_breaker_allow(local, now, permit)) {
            permit->generation |= LOCAL_PERMIT;
            return true;
        }
    }
    permit->kind = FB_PERMIT_REJECTED;
    sim__stat_breaker_rejection(s, v->layer, v->provider);
    return false;
}

static bool view_allow(void *ctx, fb_time_us now, fb_breaker_permit *permit) {
    view *v = ctx;
    sim *s = v->s;
    if (sim__fleet_store_down(s)) return allow_unreachable(v, now, permit);
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
        sim__stat_breaker_rejection(s, v->layer, v->provider);
        return false;
    case FB_BREAKER_OPEN:
        if (now < v->open_until_us) {
            /* rejected by the pod's own view: the store never hears of it */
            permit->kind = FB_PERMIT_REJECTED;
            sim__stat_breaker_rejection(s, v->layer, v->provider);
            return false;
        }
        break;
    default:
        break;
    }
    /* the open period is over in this pod's view: probes are granted by the store */
    return fb_breaker_allow(&s->stores[(size_t)v->layer * s->P + v->provider], now, permit);
}

/* Would allow_unreachable() admit now? (Nothing is counted: a peek.) */
static bool admits_unreachable(const view *v, fb_time_us now) {
    const sim *s = v->s;
    sim_store_outage mode = s->lays[v->layer].cfg->store_outage;
    if (mode == SIM_STORE_FAIL_OPEN) return true;
    if (mode == SIM_STORE_FAIL_CLOSED || view_says_open(v, now)) return false;
    return fb_breaker_admits(&s->breakers[(size_t)(v - s->views)], now);
}

/* Would view_allow() admit now? (The groups of the fallback engine peek.) */
static bool view_admits(void *ctx, fb_time_us now) {
    view *v = ctx;
    if (sim__fleet_store_down(v->s)) return admits_unreachable(v, now);
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
    if (permit->generation & LOCAL_PERMIT) {
        fb_breaker_permit own = *permit;
        own.generation &= ~LOCAL_PERMIT;
        if (sim__fleet_store_down(s))
            fb_breaker_record(&s->breakers[(size_t)(v - s->views)], &own, result, now);
        else
            sim__stat_store(s, STORE_RECORD_LOST); /* the local breaker went with the outage */
        return;
    }
    if (sim__fleet_store_down(s)) {
        sim__stat_store(s, STORE_RECORD_LOST);
        return;
    }
    store_record rec = {v->layer, v->provider, *permit, *result};
    if (sim_fifo_push(&s->recs, &rec) != FB_OK) {
        sim__stop(s, FB_ECAP, "shared store messages cap reached (limits.events) at t=%.3fs",
                  (double)s->now / 1e6);
        return;
    }
    sim__push_lane(s, LANE_STORE_RECORD, now + s->lays[v->layer].cfg->sync_delay_us,
                   EV_STORE_RECORD, 0, 0);
}

/* ---- the store's side ---- */

void sim__on_store_record(sim *s) {
    store_record rec;
    sim_fifo_pop(&s->recs, &rec);
    if (sim__fleet_store_down(s)) {
        sim__stat_store(s, STORE_RECORD_LOST); /* it arrived while the store was unreachable */
        return;
    }
    fb_breaker_record(&s->stores[(size_t)rec.layer * s->P + rec.provider], &rec.permit, &rec.result,
                      s->now);
}

static void store_sync_push(sim *s, const bctx *bc, const fb_breaker_event *ev) {
    store_sync sy = {bc->layer, bc->provider, ev->to, ev->open_until_us, ev->generation};
    if (sim_fifo_push(&s->syncs, &sy) != FB_OK) {
        sim__stop(s, FB_ECAP, "shared store messages cap reached (limits.events) at t=%.3fs",
                  (double)s->now / 1e6);
        return;
    }
    sim__push_lane(s, LANE_STORE_SYNC, ev->at_us + s->lays[bc->layer].cfg->sync_delay_us,
                   EV_STORE_SYNC, 0, 0);
}

void sim__on_store_sync(sim *s) {
    store_sync sy;
    sim_fifo_pop(&s->syncs, &sy);
    if (sim__fleet_store_down(s)) return; /* the pods cannot hear the store */
    for (uint32_t k = seat_first(s, sy.layer); k < seat_end(s, sy.layer); k++) {
        view *v = &s->views[slot(s, sy.layer, k, sy.provider)];
        if (sy.generation < v->generation) continue;
        v->state = sy.state;
        v->open_until_us = sy.open_until_us;
        v->generation = sy.generation;
    }
}

/* ---- published openings (LiteLLM's cooldowns in Redis) ---- */

/*
 * Pod k reads the store every sync_delay_us, at k * delay / npods + m * delay (a gateway
 * layer's replica: its place among the replicas, over their count):
 * the next read at or after t. An opening written at t is seen then, unless
 * it ended before (each pod reads on its own cycle, as LiteLLM's
 * DualCache throttles its Redis reads per key).
 */
static fb_time_us next_read(const sim *s, uint32_t layer, uint32_t k, fb_time_us t) {
    fb_time_us every = s->lays[layer].cfg->sync_delay_us;
    if (every <= 0) return t;
    uint32_t first = seat_first(s, layer);
    fb_time_us phase = every * (fb_time_us)(k - first) / (fb_time_us)(seat_end(s, layer) - first);
    if (t <= phase) return phase;
    fb_time_us m = (t - phase + every - 1) / every;
    return fb_time_add(phase, m * every);
}

/* An opening of pod `from`'s breaker, written to the store for the other pods to read. */
static void publish(sim *s, const bctx *bc, const fb_breaker_event *ev) {
    if (sim__fleet_store_down(s)) {
        sim__stat_store(s, STORE_RECORD_LOST); /* the write fails: only this pod's memory has it */
        return;
    }
    for (uint32_t k = seat_first(s, bc->layer); k < seat_end(s, bc->layer); k++) {
        if ((int)k == bc->pod) continue;
        fb_time_us at = next_read(s, bc->layer, k, ev->at_us);
        if (at >= ev->open_until_us) continue; /* over before this pod reads it */
        size_t i = slot(s, bc->layer, k, bc->provider);
        if (ev->open_until_us > s->published[i]) s->published[i] = ev->open_until_us;
        sim__push(s, at, EV_PUBLISH, (uint32_t)i, 0, 0);
    }
}

/* The end of the store outage under way (the windows are in time order and do not overlap). */
static fb_time_us outage_end(const sim *s) {
    for (uint32_t i = 0; i < s->sc->store_outage_count; i++) {
        const sim_store_window *w = &s->sc->store_outages[i];
        fb_time_us end = fb_time_add(w->at_us, w->for_us);
        if (w->at_us <= s->now && s->now < end) return end;
    }
    return FB_TIME_MAX;
}

/* A pod's read of slot i failed (the store is down): its first read after the outage. */
static void read_after_outage(sim *s, uint32_t i, fb_time_us until) {
    uint32_t k = (uint32_t)((i / s->P) % s->nseats);
    uint32_t layer = (uint32_t)(i / ((size_t)s->P * s->nseats));
    fb_time_us end = outage_end(s);
    if (end >= until) return; /* over before the store is back */
    fb_time_us at = next_read(s, layer, k, end);
    if (at < until) sim__push(s, at, EV_PUBLISH, i, 0, 0);
}

void sim__on_publish(sim *s, uint32_t slot_index) {
    fb_breaker *b = &s->breakers[slot_index];
    fb_time_us until = s->published[slot_index];
    if (until <= s->now) return;
    if (sim__fleet_store_down(s)) {
        read_after_outage(s, slot_index, until);
        return;
    }
    if (fb_breaker_state_get(b) == FB_BREAKER_OPEN && fb_breaker_open_until(b) >= until) return;
    fb_breaker_sync(b, FB_BREAKER_OPEN, until, s->now);
}

/* The breaker of a slot: a pod's (slot()), or a store's (store_slot()). */
static fb_breaker *breaker_at(sim *s, size_t i) {
    size_t pods = (size_t)s->NL * s->nseats * s->P;
    return i < pods ? &s->breakers[i] : &s->stores[i - pods];
}

/*
 * A breaker with timed transitions (resilience4j's scheduled ones: fb_breaker_next_timer) is
 * polled when the next one is due, so that it happens then, not at the next call.
 */
static void schedule_timer(sim *s, const bctx *bc) {
    size_t i = bc->pod < 0 ? store_slot(s, bc->layer, bc->provider)
                           : slot(s, bc->layer, (uint32_t)bc->pod, bc->provider);
    fb_time_us due = fb_breaker_next_timer(breaker_at(s, i));
    if (due >= s->now) sim__push(s, due, EV_BREAKER_TIMER, (uint32_t)i, 0, 0);
}

void sim__on_breaker_timer(sim *s, uint32_t slot_index) {
    fb_breaker *b = breaker_at(s, slot_index);
    fb_time_us due = fb_breaker_next_timer(b);
    if (due >= 0 && due <= s->now) fb_breaker_poll(b, s->now); /* else stale: a later state */
}

/* Every breaker's state changes come here: counted, logged, and the store's sent to the pods. */
void sim__on_breaker_event(void *ctx, const fb_breaker_event *ev) {
    bctx *bc = ctx;
    sim *s = bc->s;
    if (ev->from != ev->to) schedule_timer(s, bc);
    sim__stat_breaker_transition(s, bc, ev);
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
    sim__log_event(s, &le);
}

/* ---- setup ---- */

/* A breaker that starts open (forced open) is open from its start (time 0, or its pod's). */
static void note_initial_state(sim *s, size_t slot, const fb_breaker *b) {
    if (!sim__is_open(fb_breaker_state_get(b))) return;
    s->open_since[slot] = s->now;
    s->open_end[slot] = fb_breaker_open_until(b);
}

static int init_breaker(sim *s, fb_breaker *b, bctx *ctx, int podi, uint32_t l, uint32_t p,
                        fb_rng *rng) {
    fb_breaker_config bc = s->lays[l].cfg->per_provider[p].breaker;
    ctx->s = s;
    ctx->pod = podi;
    ctx->layer = (uint8_t)l;
    ctx->provider = (uint8_t)p;
    bc.on_event = sim__on_breaker_event;
    bc.event_ctx = ctx;
    bc.rng = rng;
    if (s->lays[l].cfg->eject_limit && podi >= 0)
        bc.eject_group = &s->eject_groups[(size_t)podi * s->NL + l];
    int rc = fb_breaker_init(b, &bc, s->now); /* 0 at setup; a pod that starts later: then */
    if (rc != FB_OK)
        sim__stop(s, FB_EINVAL, "invalid breaker for %s (%s)", s->sc->providers[p].name,
                  fb_strerror(rc));
    return rc;
}

/*
 * Layer l's breaker of pod k for provider p (an outer layer's: for its one
 * target, p = 0), or its view of the shared one, into its fallback config.
 */
int sim__pod_breaker(sim *s, uint32_t l, uint32_t k, uint32_t p, fb_fallback_provider *fp) {
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
int sim__setup_stores(sim *s, uint32_t l) {
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

/* ---- the store's outages ---- */

int sim__store_outages_setup(sim *s) {
    for (uint32_t i = 0; i < s->sc->store_outage_count; i++) {
        const sim_store_window *w = &s->sc->store_outages[i];
        sim__push(s, w->at_us, EV_STORE_EDGE, i, 0, 0);
        sim__push(s, fb_time_add(w->at_us, w->for_us), EV_STORE_EDGE, i, 0, 1);
    }
    return FB_OK;
}

/* Each (layer, provider) of a shared breaker whose pods fall back to local breakers. */
static bool local_fallback(const sim *s, uint32_t l, uint32_t p) {
    const sim_layer *L = s->lays[l].cfg;
    return L->breaker_scope == SIM_SCOPE_SHARED && L->store_outage == SIM_STORE_LOCAL &&
           L->per_provider[p].has_breaker && (L->role != SIM_ROLE_OUTER || p == 0);
}

/* The outage starts: fresh local breakers; it ends: they go, and the pods read the store. */
static void local_breakers(sim *s, bool start) {
    for (uint32_t l = 0; l < s->NL; l++) {
        for (uint32_t p = 0; p < s->P; p++) {
            if (!local_fallback(s, l, p)) continue;
            for (uint32_t k = seat_first(s, l); k < seat_end(s, l) && s->rc == FB_OK; k++) {
                size_t i = slot(s, l, k, p);
                if (start)
                    init_breaker(s, &s->breakers[i], &s->bctxs[i], (int)k, l, p, &s->pods[k].rng);
                else
                    sim__stat_breaker_dropped(s, &s->bctxs[i]);
            }
        }
    }
}

/* Every shared store's state, sent to the pods as they reconnect. */
static void resync(sim *s) {
    for (uint32_t l = 0; l < s->NL; l++) {
        const sim_layer *L = s->lays[l].cfg;
        if (L->breaker_scope != SIM_SCOPE_SHARED) continue;
        for (uint32_t p = 0; p < s->P; p++) {
            if (!L->per_provider[p].has_breaker || (L->role == SIM_ROLE_OUTER && p > 0)) continue;
            const fb_breaker *b = &s->stores[(size_t)l * s->P + p];
            fb_breaker_event ev;
            memset(&ev, 0, sizeof ev);
            ev.to = fb_breaker_state_get(b);
            ev.open_until_us = fb_breaker_open_until(b);
            ev.generation = fb_breaker_generation(b);
            ev.at_us = s->now;
            store_sync_push(s, &s->bctxs[store_slot(s, l, p)], &ev);
        }
    }
}

/* Pod k's reads of layer l's published openings in [from, to): one every sync_delay_us. */
static uint64_t reads_in(const sim *s, uint32_t l, uint32_t k, fb_time_us from, fb_time_us to) {
    fb_time_us every = s->lays[l].cfg->sync_delay_us;
    if (every <= 0) return 0;
    uint32_t first = seat_first(s, l);
    fb_time_us phase = every * (fb_time_us)(k - first) / (fb_time_us)(seat_end(s, l) - first);
    fb_time_us a = from <= phase ? 0 : (from - phase + every - 1) / every;
    fb_time_us b = to <= phase ? 0 : (to - phase + every - 1) / every;
    return (uint64_t)(b - a);
}

/* The outage is over: each live pod's reads of published openings during it failed. */
static void count_failed_reads(sim *s, uint32_t outage) {
    const sim_store_window *w = &s->sc->store_outages[outage];
    for (uint32_t l = 0; l < s->NL; l++) {
        const sim_layer *L = s->lays[l].cfg;
        bool any = false;
        for (uint32_t p = 0; p < s->P; p++) any = any || L->per_provider[p].has_breaker;
        if (L->breaker_scope != SIM_SCOPE_PUBLISHED || !any) continue;
        for (uint32_t k = seat_first(s, l); k < seat_end(s, l); k++) {
            if (k < s->npods && !sim__fleet_pod_live(s, k)) continue;
            uint64_t n = reads_in(s, l, k, w->at_us, s->now);
            for (uint64_t i = 0; i < n; i++) sim__stat_store(s, STORE_UNREACHABLE);
        }
    }
}

void sim__on_store_edge(sim *s, uint32_t outage, bool end) {
    s->fleet->store_down = !end;
    local_breakers(s, !end);
    if (end) resync(s);
    if (end) count_failed_reads(s, outage);
    sim_log_event le;
    memset(&le, 0, sizeof le);
    le.type = end ? SIM_EV_STORE_UP : SIM_EV_STORE_DOWN;
    le.t_us = s->now;
    le.pod = -1;
    le.fault = (uint8_t)outage;
    sim__log_event(s, &le);
}
