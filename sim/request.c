/*
 * request.c - one user request, from arrival to its end.
 *
 * A request arrives at a pod (sim__new_request), waits in the pod's queue for a
 * worker or takes one (start_request), does its local work, then asks the
 * variant's policy what to do (begin_call: the fallback chain composes the
 * breaker, retry, budget and limiter; see core/fallback.h). The policy
 * answers with an attempt at a provider (send_attempt, then provider.c), a
 * wait (a retry delay: on_resume asks again), or the end. An attempt's reply
 * comes back through sim__deliver(), is classified and fed to the policy, which
 * decides again. The request ends in finish(), which frees its worker and
 * pulls the next queued request. A request's deadline or an attempt's
 * timeout can cut this short (on_deadline, on_attempt_timeout).
 */
#include <stddef.h>
#include <string.h>

#include "sim/simint.h"

/* A hop's fallback state comes first; the fields after it are zeroed per request. */
#define HOP_KEPT offsetof(hop, serial)
_Static_assert(offsetof(hop, fr) == 0 && HOP_KEPT >= sizeof(fb_fallback_request),
               "hop: fr first, the fields zeroed per request after it");
_Static_assert(SIM_END_COUNT <= UINT8_MAX && FB_OUT_COUNT <= UINT8_MAX,
               "hop: a cause and an outcome in a byte");
_Static_assert(offsetof(req, gen) == 0 && offsetof(attempt, gen) == 0,
               "req, attempt: the generation first");
/* sim__new_attempt and sim__new_request set each field: a new one needs its line there */
_Static_assert(offsetof(attempt, x) == 72, "attempt: a field sim__new_attempt does not set");
_Static_assert(offsetof(req, hops) == 112, "req: a field sim__new_request does not set");

/* Request ri's steps take its pointer too, r = R(s, ri): gcc would look the pool up again
   after each byte store. */
/* Always inlined (defined below): a new request that finds a free worker (most) starts there. */
__attribute__((always_inline)) static inline void start_request(sim *s, uint32_t ri, req *r);
static void begin_call(sim *s, uint32_t ri, req *r);
static void handle_decision(sim *s, uint32_t ri, req *r, uint32_t depth,
                            const fb_fallback_decision *d);
static void finish(sim *s, uint32_t ri, req *r, sim_end end, bool via_fallback);

/* ---- arrival and the worker ---- */

static void queue_request(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    pod *pd = &s->pods[r->pod];
    ref e = {ri, r->gen};
    if (sim_fifo_push(&pd->queue, &e) != FB_OK) {
        sim__stop(s, FB_ECAP, "pod queue cannot grow at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    r->state = R_QUEUED;
    pd->qlive++;
    s->pod_queue_total++;
    sim__stat_pod_queued(s);
}

/* Room for a request (from `user`, or NONE32); else the run stops with the cap reached. */
static bool under_caps(sim *s, uint32_t user) {
    if (user != NONE32 && s->user_sent[user] == UINT32_MAX) { /* its count names its stream */
        sim__stop(s, FB_ECAP, "user %u sent 4294967295 requests, the most one user may, at t=%.3fs",
                  user, (double)s->now / 1e6);
        return false;
    }
    if (s->sum->requests >= s->sc->limits.requests_max) {
        sim__stop(s, FB_ECAP, "request cap reached (limits.requests = %llu) at t=%.3fs",
                  (unsigned long long)s->sc->limits.requests_max, (double)s->now / 1e6);
        return false;
    }
    if (s->live >= s->sc->limits.in_flight_max) {
        sim__stop(s, FB_ECAP, "in-flight cap reached (limits.in_flight = %llu) at t=%.3fs",
                  (unsigned long long)s->sc->limits.in_flight_max, (double)s->now / 1e6);
        return false;
    }
    return true;
}

/*
 * The stream of a new request of class cls (from `user`, or NONE32), named by what the request
 * is, not by when it comes (random streams fusebox-5, docs/rng.md): the open-loop arrivals'
 * order does not depend on the policy, but a user's next request, a serial client's next call
 * and a re-submission come after an answer, and a variant that answers at another time would
 * otherwise move the streams of every request after them. A user's count stays below 2^32
 * (sim__new_request stops the run there).
 */
static inline void request_stream(sim *s, req *r, uint32_t cls, uint32_t user) {
    uint64_t entity;
    const fb_rng_family *f = s->fleet ? sim__fleet_stream(s, cls, &entity) : NULL;
    if (f == NULL && user != NONE32) {
        f = &s->user_req_family;
        entity = (uint64_t)user << 32 ^ s->user_sent[user]++;
    } else if (f == NULL) {
        f = &s->req_family;
        entity = s->serial++;
    }
    fb_rng_family_derive(f, &r->rng, entity);
}

/* A request of class `cls` arrives (from closed-loop user `user`, or NONE32). */
void sim__new_request(sim *s, uint32_t cls, uint32_t user, uint32_t rec) {
    if (!under_caps(s, user)) return;
    uint32_t ri;
    int rc = sim__pool_take_dirty(&s->reqs, &ri);
    if (rc != FB_OK) {
        sim__stop(s, rc, "cannot hold more requests in flight at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    req *r = R(s, ri);
    /*
     * Every field but its generation set here: these zeroed, the others
     * written below (a memset of the whole is a `rep stos` per request).
     * Each hop's fallback state is left: nothing reads it before
     * layer_begin sets it whole (fb_fallback_begin), 200 bytes a layer not
     * written twice; the rest of each hop is zeroed when the request calls.
     */
    r->state = R_FREE;
    r->holds_worker = false;
    r->via_fallback = false;
    r->degraded = false;
    r->resubmits = 0;
    r->queued = 0;
    r->gw = GW_NONE;
    r->gw_chosen = 0;
    r->seat = 0;
    r->gw_ticket = 0;
    r->gw_since_us = 0;
    r->attempt = 0;
    r->sent = 0;
    r->dl_linked = false; /* the rest of the deadline's fields: sim__deadline_add */
    const sim_class *c = &s->sc->classes[cls];
    /* a request that calls nothing (target none) never enters its layers: no hop is read */
    if (s->class_calls[cls])
        for (uint32_t d = 0; d < s->depth_max; d++)
            memset((char *)&r->hops[d] + HOP_KEPT, 0, sizeof(hop) - HOP_KEPT);
    if (s->hg_offset) memset(HG(s, r), 0, sizeof(hgroup)); /* after the hops when it hedges */
    r->cls = (uint8_t)cls;
    r->stack = s->class_stack[cls];
    r->user = user;
    r->exposed = s->class_exposed[cls];
    r->arrival_us = s->now;
    request_stream(s, r, cls, user);
    if (s->class_tokens_fixed[cls]) {
        r->prompt_tokens = s->class_tokens[cls][0];
        r->completion_tokens = s->class_tokens[cls][1];
    } else {
        r->prompt_tokens =
            scn_dist_draw_tokens_tab(&r->rng, &c->prompt_tokens, s->class_tab[cls][0]);
        r->completion_tokens =
            scn_dist_draw_tokens_tab(&r->rng, &c->completion_tokens, s->class_tab[cls][1]);
    }
    r->tokens_left = r->completion_tokens;
    r->rec = rec;
    if (s->fleet)
        sim__fleet_arrive(s, r); /* a per-pod source's pod, the ready pods, a re-submission */
    else
        r->pod = s->rr++ % s->npods;
    s->live++;
    sim__stat_arrival(s, r);
    sim__deadline_add(s, ri, r);
    pod *pd = &s->pods[r->pod];
    if (pd->busy < s->sc->pods.workers) {
        start_request(s, ri, r);
    } else if (pd->qlive < s->sc->pods.queue) {
        queue_request(s, ri);
    } else {
        r->state = R_LOCAL; /* never queued, holds no worker */
        finish(s, ri, r, SIM_END_QUEUE_FULL, false);
    }
}

static inline void start_request(sim *s, uint32_t ri, req *r) {
    r->state = R_LOCAL; /* out of the queue, on a worker */
    r->holds_worker = true;
    s->pods[r->pod].busy++;
    s->busy_total++;
    const sim_class *c = &s->sc->classes[r->cls];
    fb_time_us work = s->class_service_fixed[r->cls]
                          ? s->class_service_us[r->cls]
                          : scn_dist_draw_us_tab(&r->rng, &c->service_us, s->class_tab[r->cls][2]);
    if (work > 0) {
        sim__push(s, s->now + work, EV_WORK_DONE, ri, r->gen, 0);
        return;
    }
    begin_call(s, ri, r);
}

/*
 * Start queued requests while workers are free. A started request may end at
 * once (no call, an open breaker) and free its worker, which would pull again
 * from inside this loop: the flag keeps that flat, so a long queue of quick
 * requests cannot grow the stack.
 */
static void pod_pull(sim *s, uint32_t podi) {
    pod *pd = &s->pods[podi];
    if (pd->queue.len == 0 || pd->pulling) return; /* most requests end with nobody queued */
    pd->pulling = true;
    ref e;
    while (pd->busy < s->sc->pods.workers && sim_fifo_pop(&pd->queue, &e)) {
        req *r = R(s, e.id);
        if (r->gen != e.gen || r->state != R_QUEUED) continue;
        pd->qlive--;
        s->pod_queue_total--;
        start_request(s, e.id, r);
    }
    pd->pulling = false;
}

void sim__on_work_done(sim *s, uint32_t ri) {
    begin_call(s, ri, R(s, ri));
}

/* ---- the layers decide ---- */

/*
 * A request passes through its stack of layers (simint.h: hop). Layer d's
 * attempt is a whole request to layer d + 1; the innermost layer's attempts
 * are provider calls. Each layer asks its own fallback engine (per pod and
 * layer: its breakers, limiters, budget, retry policy); the routing layer
 * chooses the provider, the layers inside it pass that choice through, and
 * the layers outside it have one target, the layer inside. A layer that
 * gives up raises to the layer outside it the last result it received.
 */

static void layer_begin(sim *s, uint32_t ri, req *r, uint32_t depth, uint8_t chosen);
static void layer_result(sim *s, uint32_t ri, uint32_t depth, const fb_reply *rep, fb_time_us hint,
                         sim_end cause);

static const lay *layer_at(const sim *s, const req *r, uint32_t depth) {
    return &s->lays[r->stack->layer[depth]];
}

/*
 * Layer `depth` received a result (class outcome o): the last, and the first if it is.
 * The replies themselves are raised to the layer outside (raise_outside): the outermost
 * layer (depth 0) has none, and keeps only how they ended.
 */
static void keep_result(hop *h, uint32_t depth, const fb_reply *rep, fb_time_us hint, sim_end cause,
                        fb_outcome o) {
    if (!h->has_last) {
        if (depth > 0) {
            h->first = *rep;
            h->first_hint_us = hint;
        }
        h->first_cause = (uint8_t)cause;
        h->first_outcome = (uint8_t)o;
    }
    if (depth > 0) {
        h->last = *rep;
        h->last_hint_us = hint;
    }
    h->has_last = true;
    h->cause = (uint8_t)cause;
}

/* A result from provider p (an outer layer's: its target) as layer L sees it. */
static fb_class classify_at(const lay *L, const fb_reply *rep, uint32_t p) {
    if (L->classifier_only) return fb_classify(&L->classifier, rep); /* what the rest would keep */
    return scn_layer_classify(L->cfg, &L->classifier, rep, p);
}

/* What a layer may choose from: its target, the provider chosen outside, or the chain. */
static const uint8_t *choices(const sim *s, const req *r, uint32_t depth, const uint8_t *chosen,
                              uint32_t *len) {
    const sim_class *c = &s->sc->classes[r->cls];
    static const uint8_t target0 = 0;
    *len = 1;
    switch (layer_at(s, r, depth)->cfg->role) {
    case SIM_ROLE_OUTER:
        return &target0;
    case SIM_ROLE_INNER:
        return chosen;
    default:
        break;
    }
    if (c->target == SIM_TARGET_PROVIDER) return &c->provider;
    *len = c->order_len;
    return c->order_len > 0 ? c->order : NULL;
}

static void begin_call(sim *s, uint32_t ri, req *r) {
    if (!s->class_calls[r->cls]) {
        finish(s, ri, r, SIM_END_SUCCESS, false);
        return;
    }
    r->state = R_CALLING;
    layer_begin(s, ri, r, 0, 0);
}

static void layer_begin(sim *s, uint32_t ri, req *r, uint32_t depth, uint8_t chosen) {
    hop *h = &r->hops[depth];
    uint32_t li = r->stack->layer[depth];
    h->active = true;
    h->has_last = false;
    h->serial++;
    sim__stat_layer_call(s, li);
    uint32_t len;
    const uint8_t *order = choices(s, r, depth, &chosen, &len);
    fb_fallback_decision d =
        fb_fallback_begin(pod_fb(s, seat_at(r, depth), li), &h->fr,
                          r->prompt_tokens + r->completion_tokens, order, order ? len : 0, s->now);
    handle_decision(s, ri, r, depth, &d);
}

void sim__on_resume(sim *s, uint32_t ri, uint32_t arg) {
    req *r = R(s, ri);
    uint32_t depth = HOP_DEPTH(arg);
    hop *h = &r->hops[depth];
    if (depth >= r->stack->depth || !h->active || h->serial != HOP_SERIAL(arg)) return;
    r->state = R_CALLING;
    uint32_t li = r->stack->layer[depth];
    fb_fallback_decision d = fb_fallback_resume(pod_fb(s, seat_at(r, depth), li), &h->fr, s->now);
    handle_decision(s, ri, r, depth, &d);
}

/*
 * A provider attempt of request ri (r), filled in but not sent: the attempt, its
 * index in *out (NULL: the cap is reached, the run stopped). Always inlined
 * into send_attempt (a call of six arguments per attempt); hedging.c's
 * attempts take sim__new_attempt.
 */
__attribute__((always_inline)) static inline attempt *new_attempt(sim *s, uint32_t ri, req *r,
                                                                  uint8_t provider,
                                                                  fb_time_us timeout_us,
                                                                  bool resume, uint32_t *out) {
    uint32_t ai;
    int rc = sim__pool_take_dirty(&s->atts, &ai);
    if (rc != FB_OK) {
        sim__stop(s, rc, "attempt cap reached at t=%.3fs", (double)s->now / 1e6);
        return NULL;
    }
    attempt *a = A(s, ai);
    /*
     * Every field but its generation, its reply, its hint and its queue time set here:
     * those below are written anyway, these zeroed (a memset of the whole
     * is a `rep stos` of 11 words, per attempt). The reply and its hint are
     * written by whatever answers the attempt (provider.c: reply_now,
     * start_service; the port) before anything reads them, the queue time
     * by its provider's queue (outside the line the rest share: simint.h).
     */
    a->state = A_FREE;
    a->abandoned = false;
    a->timer_armed = false;
    if (s->att_x) memset(a->x, 0, sizeof(attx));
    a->provider = provider;
    a->req = ri;
    a->req_gen = r->gen;
    a->tokens_in = r->prompt_tokens;
    a->tokens_out = resume ? r->tokens_left : r->completion_tokens;
    a->stream = s->class_att[r->cls].stream;
    a->keeps_partial = s->class_att[r->cls].keeps_partial;
    a->retry = (uint8_t)(r->sent < 255 ? r->sent : 255);
    a->timeout_at_us = timeout_us > 0 ? s->now + timeout_us : FB_TIME_MAX;
    if (s->att_x) {
        X(a)->layer = r->stack->layer[r->stack->depth - 1];
        X(a)->pod = seat_inner(r);
        X(a)->start_us = s->now;
    }
    r->sent++;
    r->state = R_CALLING;
    *out = ai;
    return a;
}

int sim__new_attempt(sim *s, uint32_t ri, uint8_t provider, fb_time_us timeout_us, bool resume,
                     uint32_t *out) {
    return new_attempt(s, ri, R(s, ri), provider, timeout_us, resume, out) ? FB_OK : s->rc;
}

static void send_attempt(sim *s, uint32_t ri, req *r, const fb_fallback_decision *d) {
    uint32_t ai;
    const attempt *a = new_attempt(s, ri, r, d->provider, d->timeout_us, d->resume, &ai);
    if (!a) return;
    r->attempt = ai + 1;
    sim__stat_attempt(s, a);
    if (r->gw == GW_HELD) sim__stat_gateway_attempt(s, r->seat);
    if (s->hg_offset && layer_at(s, r, r->stack->depth - 1)->cfg->has_hedge)
        sim__hedge_begin(s, ri, ai);
    attempt_depart(s, ai);
}

static sim_end end_of(fb_stop stop_reason) {
    switch (stop_reason) {
    case FB_STOP_SUCCESS:
        return SIM_END_SUCCESS;
    case FB_STOP_PERMANENT:
        return SIM_END_PERMANENT;
    case FB_STOP_POLICY:
        return SIM_END_POLICY;
    case FB_STOP_CONTEXT_LENGTH:
        return SIM_END_CONTEXT_LENGTH;
    case FB_STOP_BREAKER_OPEN:
        return SIM_END_BREAKER_OPEN;
    case FB_STOP_RATE_LIMITED:
        return SIM_END_RATE_LIMITED;
    case FB_STOP_DEADLINE:
        return SIM_END_DEADLINE;
    case FB_STOP_STREAM_BROKEN:
        return SIM_END_STREAM_BROKEN;
    default:
        return SIM_END_EXHAUSTED;
    }
}

/* How a request ends when a layer raises a provider's failure of class outcome o. */
static sim_end end_of_outcome(fb_outcome o) {
    switch (o) {
    case FB_OUT_PERMANENT:
        return SIM_END_PERMANENT;
    case FB_OUT_POLICY:
        return SIM_END_POLICY;
    case FB_OUT_CONTEXT_LENGTH:
        return SIM_END_CONTEXT_LENGTH;
    default:
        return SIM_END_EXHAUSTED;
    }
}

/* An attempt of a layer that is not the innermost: a whole request to the layer inside. */
static void inner_request(sim *s, uint32_t ri, req *r, uint32_t depth,
                          const fb_fallback_decision *d) {
    hop *h = &r->hops[depth];
    h->target = d->provider;
    h->serial++;
    if (d->timeout_us > 0)
        sim__push(s, s->now + d->timeout_us, EV_LAYER_TIMEOUT, ri, r->gen,
                  HOP_ARG(depth, h->serial));
    /* an outer layer's target is the layer inside, which makes its own choice */
    if (depth + 1 == r->stack->gateway)
        sim__gateway_enter(s, ri, depth + 1, d->provider); /* a replica's worker, or its queue */
    else
        layer_begin(s, ri, r, depth + 1, d->provider);
}

/* What layer `depth` raises when it gives up: its last result, or a refusal of its own. */
static void raise_outside(sim *s, uint32_t ri, uint32_t depth, const fb_fallback_decision *d,
                          sim_end end) {
    req *r = R(s, ri);
    hop *h = &r->hops[depth];
    fb_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.should_retry = -1;
    fb_time_us hint = FB_TIME_NONE;
    if (d->stop == FB_STOP_SUCCESS) {
        rep.status = 200;
    } else if (h->has_last && d->stop != FB_STOP_BREAKER_OPEN && d->stop != FB_STOP_RATE_LIMITED) {
        bool first = layer_at(s, r, depth)->cfg->raise_first;
        rep = first ? h->first : h->last;
        hint = first ? h->first_hint_us : h->last_hint_us;
    } else if (d->stop == FB_STOP_CONTEXT_LENGTH) {
        rep.status = 400;
        rep.error_kind = FB_ERRKIND_CONTEXT_LENGTH;
    } else {
        rep.transport = FB_TRANSPORT_REJECTED;
    }
    layer_result(s, ri, depth - 1, &rep, hint, end);
}

/* Layer `depth` is done with the request: it ends, or the layer outside gets the result. */
static void layer_done(sim *s, uint32_t ri, req *r, uint32_t depth, const fb_fallback_decision *d) {
    hop *h = &r->hops[depth];
    sim_end end = end_of(d->stop);
    /* a layer that ran out of tries on a failure from inside ends with that failure */
    bool first = layer_at(s, r, depth)->cfg->raise_first;
    sim_end cause = first ? h->first_cause : h->cause;
    if (end == SIM_END_EXHAUSTED && h->has_last && cause < SIM_END_COUNT) end = cause;
    /* ... and one that raises its first failure, a provider's answer, ends as that answer */
    else if (end == SIM_END_EXHAUSTED && h->has_last && first)
        end = end_of_outcome(h->first_outcome);
    h->active = false;
    h->serial++;
    sim__stat_policy(s, r, depth);
    if (depth == r->stack->router && d->stop == FB_STOP_SUCCESS) r->via_fallback = d->via_fallback;
    if (depth > 0) {
        if (depth == r->stack->gateway) sim__gateway_leave(s, ri); /* its worker is free */
        raise_outside(s, ri, depth, d, end);
        return;
    }
    if (d->degraded) {
        fb_time_us lat = scn_dist_draw_us(&r->rng, &layer_at(s, r, 0)->cfg->degraded_latency_us);
        if (lat > 0) {
            r->state = R_FINISHING;
            sim__push(s, s->now + lat, EV_FINISH, ri, r->gen, 0);
            return;
        }
        finish(s, ri, r, SIM_END_DEGRADED, false);
        return;
    }
    finish(s, ri, r, end, r->via_fallback && end == SIM_END_SUCCESS);
}

/* A replayed request's wait until its next attempt (`sent` + 1) starts when the log's did (its
   class's retry_at_us, from its arrival; at once when the one before ended later), or
   `policy` where the log has none (a request that failed more often than in the log). */
static fb_time_us recorded_wait(const sim *s, const req *r, fb_time_us policy) {
    const sim_class *c = &s->sc->classes[r->cls];
    if (r->sent == 0) return policy;
    uint32_t k = c->retry_at_first[r->rec] + r->sent - 1;
    if (k >= c->retry_at_first[r->rec + 1]) return policy;
    fb_time_us at = fb_time_add(r->arrival_us, c->retry_at_us[k]);
    return at > s->now ? at - s->now : 0;
}

/* Carry out layer `depth`'s decision: an attempt, a wait, or the end of its part. */
static void handle_decision(sim *s, uint32_t ri, req *r, uint32_t depth,
                            const fb_fallback_decision *d) {
    hop *h = &r->hops[depth];
    switch (d->action) {
    case FB_ACT_ATTEMPT:
        sim__stat_layer_attempt(s, r->stack->layer[depth], d->provider);
        if (depth + 1 == r->stack->depth)
            send_attempt(s, ri, r, d);
        else
            inner_request(s, ri, r, depth, d);
        return;
    case FB_ACT_WAIT: {
        fb_time_us wait = d->delay_us;
        if (r->rec != NONE32 && d->retry && depth + 1 == r->stack->depth)
            wait = recorded_wait(s, r, wait);
        r->state = R_WAITING;
        h->serial++;
        sim__push(s, s->now + wait, EV_RESUME, ri, r->gen, HOP_ARG(depth, h->serial));
        return;
    }
    case FB_ACT_DONE:
        layer_done(s, ri, r, depth, d);
        return;
    }
}

/* The gateway's replica gives request ri a worker: its first layer (at depth) begins. */
void sim__gateway_begin(sim *s, uint32_t ri, uint32_t depth, uint8_t chosen) {
    req *r = R(s, ri);
    r->state = R_CALLING;
    layer_begin(s, ri, r, depth, chosen);
}

/* The replica's queue is full: layer depth - 1 gets the gateway's answer, `status`. */
void sim__gateway_refused(sim *s, uint32_t ri, uint32_t depth, int status) {
    fb_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.status = status;
    rep.should_retry = -1;
    layer_result(s, ri, depth - 1, &rep, FB_TIME_NONE, SIM_END_COUNT);
}

/* ---- a result comes back ---- */

/* Layer `depth` gets the result of its attempt: classified by its own rules, decided again. */
static void layer_result(sim *s, uint32_t ri, uint32_t depth, const fb_reply *rep, fb_time_us hint,
                         sim_end cause) {
    req *r = R(s, ri);
    hop *h = &r->hops[depth];
    const lay *L = layer_at(s, r, depth);
    h->serial++; /* its timeout, if any, is moot */
    fb_class c = classify_at(L, rep, h->target);
    keep_result(h, depth, rep, hint, cause, c.outcome);
    r->state = R_CALLING;
    fb_fallback_decision d = fb_fallback_result(
        pod_fb(s, seat_at(r, depth), r->stack->layer[depth]), &h->fr, &c, hint, s->now);
    handle_decision(s, ri, r, depth, &d);
}

/* How the innermost layer of r classifies provider pi's reply. */
fb_class sim__classify_inner(sim *s, req *r, const fb_reply *rep, uint32_t pi) {
    return classify_at(layer_at(s, r, r->stack->depth - 1), rep, pi);
}

/*
 * The innermost layer's attempt ended with `rep` (class c) from provider pi,
 * which generated `out` output tokens: its engine decides. A hedge group's
 * answer (`hedged`) may come from another provider than the engine's.
 * Always inlined: sim__deliver hands it every answer (a call of eight
 * arguments per attempt).
 */
__attribute__((always_inline)) static inline void inner_answer(sim *s, uint32_t ri, req *r,
                                                               uint32_t pi, const fb_reply *rep,
                                                               const fb_class *c, fb_time_us hint,
                                                               uint32_t out, bool hedged) {
    uint32_t inner = r->stack->depth - 1;
    hop *h = &r->hops[inner];
    keep_result(h, inner, rep, hint, SIM_END_COUNT, c->outcome); /* a provider's, not a layer's */
    fb_fallback_decision d;
    fb_fallback_result_into(pod_fb(s, seat_inner(r), r->stack->layer[inner]), &h->fr, c, hint,
                            s->now, &d);
    bool won = d.action == FB_ACT_DONE && d.stop == FB_STOP_SUCCESS;
    if (won && hedged && pi != d.provider) d.via_fallback = true;
    if (inner == r->stack->router && won && d.via_fallback) sim__stat_fallback_cost(s, r, pi, out);
    handle_decision(s, ri, r, inner, &d);
}

void sim__inner_result(sim *s, uint32_t ri, uint32_t pi, const fb_reply *rep, fb_time_us hint,
                       uint32_t out) {
    req *r = R(s, ri);
    fb_class c = sim__classify_inner(s, r, rep, pi);
    inner_answer(s, ri, r, pi, rep, &c, hint, out, true);
}

/* The reply of attempt ai reaches its client (if the client still waits). */
void sim__deliver(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    if (s->att_x) {
        sim__conn_end(s, ai,
                      a->reply.transport != FB_TRANSPORT_NONE); /* a broken answer closes it */
        if (X(a)->grouped) {
            sim__hedge_delivered(s, ai);
            return;
        }
    }
    uint32_t pi = a->provider;
    uint32_t ri = a->req;
    req *r = R(s, ri);
    bool waiting = !a->abandoned && r->gen == a->req_gen && r->attempt == ai + 1;
    fb_reply reply = a->reply;
    fb_time_us hint = a->hint_us;
    uint32_t out = a->tokens_out;
    a->state = A_FREE;
    sim__pool_release(&s->atts, ai);
    if (!waiting) return;
    r->attempt = 0;
    fb_class c = sim__classify_inner(s, r, &reply, pi);
    sim__stat_outcome(s, pi, c.outcome);
    sim__stat_answer(s, &reply);
    if (reply.after_first_token) {
        bool resumed = a->keeps_partial && out < r->tokens_left;
        sim__stat_stream_failure(s, r, out, resumed);
        if (resumed) r->tokens_left -= out;
    }
    inner_answer(s, ri, r, pi, &reply, &c, hint, out, false);
}

static fb_reply timeout_reply(void) {
    fb_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.transport = FB_TRANSPORT_TIMEOUT;
    rep.should_retry = -1;
    return rep;
}

/*
 * Attempt ai (a) of a request, answered by a fault that answers every attempt of its provider
 * until span_to (provider.c: the lone fault), gets its answer at `at`: may that answer be
 * handled now, ahead of the events due before it (true: the engine's loop does so once the
 * event being handled is done, sim__run_model)? Only when handling it early changes nothing:
 * it falls in the row being filled (before the loop's next due time), before the request's
 * deadline and its attempt's timeout, and what it does touches the request alone and counts
 * that add up in any order. That is the request's engine retrying at once at the same
 * provider, whose fault answers again, and so for the answer after it, which this one's
 * handling schedules early (its sequence number is earlier than if handled in turn: only
 * answers that also commute may be). So: its engine's next two results would each be a retry
 * at once (fb_fallback_retries_at_once), for this answer and for a timeout, and the answer
 * after this one comes (at most an attempt timeout, or the request's deadline, later) while
 * the fault still answers; and no attempt of the request waits in a provider's queue (req.queued).
 * docs/engine.md, "Answers handled ahead".
 */
bool sim__answer_ahead(sim *s, uint32_t ai, const attempt *a, fb_time_us at, fb_time_us span_to) {
    /* one at a time: a handler may send several requests' attempts (a pod's queue pulled) */
    if (s->ahead_ai != NONE32 || at >= s->ahead_due || at > a->timeout_at_us) return false;
    req *r = R(s, a->req);
    if (r->attempt != ai + 1 || r->gen != a->req_gen || r->stack->depth != 1 || r->gw != GW_NONE)
        return false;
    /* an attempt of its still queued at a provider would draw from its stream when served, at
       a time of the provider's: its draws would no longer be its own chain's alone */
    if (r->queued) return false;
    fb_time_us deadline = r->arrival_us + s->sc->pods.request_timeout_us;
    if (at >= deadline) return false;
    uint32_t li = r->stack->layer[0];
    const fb_reply *rep = &a->reply; /* a fault's: no transport failure, no token streamed */
    if (!s->ahead_memo.valid || s->ahead_memo.layer != li ||
        s->ahead_memo.provider != a->provider || s->ahead_memo.status != rep->status ||
        s->ahead_memo.kind != rep->error_kind || rep->transport != FB_TRANSPORT_NONE ||
        rep->should_retry != -1 || rep->after_first_token) {
        const lay *L = layer_at(s, r, 0);
        fb_reply gave_up = timeout_reply();
        fb_class t = classify_at(L, &gave_up, a->provider);
        s->ahead_memo.c = classify_at(L, rep, a->provider);
        s->ahead_memo.timeout_ok =
            t.retryable && !t.after_first_token && t.outcome != FB_OUT_SUCCESS;
        s->ahead_memo.layer = li;
        s->ahead_memo.provider = a->provider;
        s->ahead_memo.status = rep->status;
        s->ahead_memo.kind = rep->error_kind;
        s->ahead_memo.valid = rep->transport == FB_TRANSPORT_NONE && rep->should_retry == -1 &&
                              !rep->after_first_token;
    }
    fb_time_us until, per;
    uint32_t n = fb_fallback_retries_at_once(pod_fb(s, seat_inner(r), li), &r->hops[0].fr,
                                             &s->ahead_memo.c, &until, &per);
    /* the answer after this one: by the next attempt's timeout (a timeout, then: the layer
       must retry it as well), or the deadline's time */
    fb_time_us next = per > 0 && per < deadline - at ? at + per : deadline;
    if (n < 2 || next >= until || next >= span_to || (per > 0 && !s->ahead_memo.timeout_ok))
        return false;
    s->ahead_ai = ai;
    s->ahead_at = at;
    return true;
}

/* The client stops waiting for its current attempt(s); the provider may keep working on them. */
static void abandon_attempt(sim *s, req *r) {
    if (s->hg_offset) sim__hedge_abandon(s, r);
    if (r->attempt == 0) return;
    uint32_t ai = r->attempt - 1;
    r->attempt = 0;
    fb_reply gave_up = timeout_reply(); /* the client stopped waiting: a timeout, for the log */
    sim__stat_answer(s, &gave_up);
    A(s, ai)->abandoned = true;
    sim__provider_cancel(s, ai);
}

void sim__on_attempt_timeout(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    if (s->att_x && X(a)->grouped) {
        sim__hedge_timeout(s, ai);
        return;
    }
    req *r = R(s, a->req);
    if (a->abandoned || r->gen != a->req_gen || r->attempt != ai + 1) return;
    /* the client gives up: a timeout outcome, the provider may keep working */
    uint32_t pi = a->provider;
    uint32_t ri = a->req;
    abandon_attempt(s, r);
    fb_reply rep = timeout_reply();
    uint32_t inner = r->stack->depth - 1;
    sim__stat_outcome(s, pi, classify_at(layer_at(s, r, inner), &rep, pi).outcome);
    layer_result(s, ri, inner, &rep, FB_TIME_NONE, SIM_END_COUNT);
}

fb_reply sim_timeout_reply(void) {
    return timeout_reply();
}

/* Layers from `from` inwards give up on the request (a timeout outside them, a deadline). */
static void cancel_inside(sim *s, uint32_t ri, uint32_t from) {
    req *r = R(s, ri);
    for (uint32_t k = r->stack->depth; k-- > from;) {
        hop *h = &r->hops[k];
        if (!h->active) continue;
        fb_fallback_cancel(pod_fb(s, seat_at(r, k), r->stack->layer[k]), &h->fr, s->now);
        sim__stat_policy(s, r, k);
        h->active = false;
        h->serial++;
    }
    abandon_attempt(s, r);
    if (r->gw != GW_NONE && from <= r->stack->gateway) sim__gateway_leave(s, ri);
}

/* An outer layer's attempt timeout: the whole request inside it is given up. */
void sim__on_layer_timeout(sim *s, uint32_t ri, uint32_t arg) {
    req *r = R(s, ri);
    uint32_t depth = HOP_DEPTH(arg);
    if (r->state != R_CALLING && r->state != R_WAITING) return;
    if (depth + 1 >= r->stack->depth || r->hops[depth].serial != HOP_SERIAL(arg)) return;
    cancel_inside(s, ri, depth + 1);
    fb_reply rep = timeout_reply();
    layer_result(s, ri, depth, &rep, FB_TIME_NONE, SIM_END_COUNT);
}

/* ---- the end ---- */

static void release_worker(sim *s, req *r) {
    if (!r->holds_worker) return;
    r->holds_worker = false;
    s->pods[r->pod].busy--;
    s->busy_total--;
}

/* A replayed session's g-th recorded think time: as the log's (think_rec_us), or, when the
   variant waits as recorded, until the next request's recorded start (at once when this one
   ended later). */
static fb_time_us recorded_think(const sim *s, const sim_class *c, uint32_t g) {
    if (!s->pol->recorded_waits || c->turn_at_us == NULL) return c->think_rec_us[g];
    return c->turn_at_us[g] > s->now ? c->turn_at_us[g] - s->now : 0;
}

static void finish(sim *s, uint32_t ri, req *r, sim_end end, bool via_fallback) {
    uint32_t podi = r->pod;
    if (r->gw != GW_NONE) sim__gateway_leave(s, ri); /* (a layer inside it always leaves first) */
    sim__stat_end(s, r, end, via_fallback);
    bool again = s->fleet && sim__fleet_end(s, r, end); /* its user submits it again */
    if (s->port) sim__port_request_end(s, ri, end, via_fallback);
    if (r->state == R_QUEUED) {
        s->pods[podi].qlive--;
        s->pod_queue_total--;
    }
    release_worker(s, r);
    uint32_t user = r->user;
    r->state = R_FREE;
    sim__deadline_drop(s, r);
    sim__pool_release(&s->reqs, ri);
    s->live--;
    if (user != NONE32 && !again && (!s->user_left || s->user_left[user] > 0)) {
        /* a closed-loop user thinks, then asks again (a session's while it has turns left) */
        const sim_class *c = &s->sc->classes[s->user_class[user]];
        fb_time_us think = c->think_rec_us && s->user_gap[user] < c->think_rec_count
                               ? recorded_think(s, c, s->user_gap[user]++)
                               : scn_dist_draw_us(&s->user_rng[user], &c->think_us);
        if (s->now + think < s->sc->duration_us) sim__push(s, s->now + think, EV_USER, user, 0, 0);
    }
    pod_pull(s, podi);
    if (s->fleet) sim__fleet_pod_freed(s, podi);
}

void sim__on_deadline(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    if (r->state == R_FREE) return;
    if (r->state == R_CALLING || r->state == R_WAITING) cancel_inside(s, ri, 0);
    finish(s, ri, r, SIM_END_TIMEOUT, false);
}

void sim__on_finish(sim *s, uint32_t ri) {
    finish(s, ri, R(s, ri), SIM_END_DEGRADED, false);
}
