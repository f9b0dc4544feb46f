/*
 * request.c - one user request, from arrival to its end.
 *
 * A request arrives at a pod (new_request), waits in the pod's queue for a
 * worker or takes one (start_request), does its local work, then asks the
 * variant's policy what to do (begin_call: the fallback chain composes the
 * breaker, retry, budget and limiter; see core/fallback.h). The policy
 * answers with an attempt at a provider (send_attempt, then provider.c), a
 * wait (a retry delay: on_resume asks again), or the end. An attempt's reply
 * comes back through deliver(), is classified and fed to the policy, which
 * decides again. The request ends in finish(), which frees its worker and
 * pulls the next queued request. A request's deadline or an attempt's
 * timeout can cut this short (on_deadline, on_attempt_timeout).
 */
#include <string.h>

#include "sim/simint.h"

static void start_request(sim *s, uint32_t ri);
static void begin_call(sim *s, uint32_t ri);
static void handle_decision(sim *s, uint32_t ri, fb_fallback_decision d);
static void finish(sim *s, uint32_t ri, sim_end end, bool via_fallback);

/* ---- arrival and the worker ---- */

static void queue_request(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    pod *pd = &s->pods[r->pod];
    ref e = {ri, r->gen};
    if (sim_fifo_push(&pd->queue, &e) != FB_OK) {
        stop(s, FB_ECAP, "pod queue cannot grow at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    r->state = R_QUEUED;
    pd->qlive++;
    s->pod_queue_total++;
    stat_pod_queued(s);
}

static bool under_caps(sim *s) {
    if (s->sum->requests >= s->sc->limits.requests_max) {
        stop(s, FB_ECAP, "request cap reached (limits.requests = %llu) at t=%.3fs",
             (unsigned long long)s->sc->limits.requests_max, (double)s->now / 1e6);
        return false;
    }
    if (s->live >= s->sc->limits.in_flight_max) {
        stop(s, FB_ECAP, "in-flight cap reached (limits.in_flight = %llu) at t=%.3fs",
             (unsigned long long)s->sc->limits.in_flight_max, (double)s->now / 1e6);
        return false;
    }
    return true;
}

/* A request of class `cls` arrives (from closed-loop user `user`, or NONE32). */
void new_request(sim *s, uint32_t cls, uint32_t user) {
    if (!under_caps(s)) return;
    uint32_t ri;
    int rc = pool_take(&s->reqs, &ri);
    if (rc != FB_OK) {
        stop(s, rc, "cannot hold more requests in flight at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    req *r = R(s, ri);
    const sim_class *c = &s->sc->classes[cls];
    r->cls = (uint8_t)cls;
    r->user = user;
    r->exposed = s->class_exposed[cls];
    r->arrival_us = s->now;
    fb_rng_derive(&r->rng, s->sc->seed, s->serial++, PURPOSE_REQUEST);
    r->prompt_tokens = sim_dist_draw_tokens(&r->rng, &c->prompt_tokens);
    r->completion_tokens = sim_dist_draw_tokens(&r->rng, &c->completion_tokens);
    r->tokens_left = r->completion_tokens;
    r->pod = s->rr++ % s->npods;
    s->live++;
    stat_arrival(s, r);
    push_lane(s, LANE_DEADLINE, s->now + s->sc->pods.request_timeout_us, EV_DEADLINE, ri, r->gen);
    pod *pd = &s->pods[r->pod];
    if (pd->busy < s->sc->pods.workers) {
        start_request(s, ri);
    } else if (pd->qlive < s->sc->pods.queue) {
        queue_request(s, ri);
    } else {
        r->state = R_LOCAL; /* never queued, holds no worker */
        finish(s, ri, SIM_END_QUEUE_FULL, false);
    }
}

static void start_request(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    r->state = R_LOCAL; /* out of the queue, on a worker */
    r->holds_worker = true;
    s->pods[r->pod].busy++;
    s->busy_total++;
    const sim_class *c = &s->sc->classes[r->cls];
    fb_time_us work = sim_dist_draw_us(&r->rng, &c->service_us);
    if (work > 0) {
        push(s, s->now + work, EV_WORK_DONE, ri, r->gen, 0);
        return;
    }
    begin_call(s, ri);
}

/*
 * Start queued requests while workers are free. A started request may end at
 * once (no call, an open breaker) and free its worker, which would pull again
 * from inside this loop: the flag keeps that flat, so a long queue of quick
 * requests cannot grow the stack.
 */
static void pod_pull(sim *s, uint32_t podi) {
    pod *pd = &s->pods[podi];
    if (pd->pulling) return;
    pd->pulling = true;
    ref e;
    while (pd->busy < s->sc->pods.workers && sim_fifo_pop(&pd->queue, &e)) {
        req *r = R(s, e.id);
        if (r->gen != e.gen || r->state != R_QUEUED) continue;
        pd->qlive--;
        s->pod_queue_total--;
        start_request(s, e.id);
    }
    pd->pulling = false;
}

void on_work_done(sim *s, uint32_t ri) {
    begin_call(s, ri);
}

/* ---- the policy decides ---- */

static void begin_call(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    const sim_class *c = &s->sc->classes[r->cls];
    if (c->target == SIM_TARGET_NONE) {
        finish(s, ri, SIM_END_SUCCESS, false);
        return;
    }
    uint8_t one = c->provider;
    const uint8_t *order = NULL;
    uint32_t order_len = 0;
    if (c->target == SIM_TARGET_PROVIDER) {
        order = &one;
        order_len = 1;
    } else if (c->order_len > 0) {
        order = c->order;
        order_len = c->order_len;
    }
    r->state = R_CALLING;
    fb_fallback_decision d =
        fb_fallback_begin(&s->pods[r->pod].fb, &r->fr, r->prompt_tokens + r->completion_tokens,
                          order, order_len, s->now);
    handle_decision(s, ri, d);
}

void on_resume(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    r->state = R_CALLING;
    handle_decision(s, ri, fb_fallback_resume(&s->pods[r->pod].fb, &r->fr, s->now));
}

static void send_attempt(sim *s, uint32_t ri, const fb_fallback_decision *d) {
    req *r = R(s, ri);
    uint32_t ai;
    int rc = pool_take(&s->atts, &ai);
    if (rc != FB_OK) {
        stop(s, rc, "attempt cap reached at t=%.3fs", (double)s->now / 1e6);
        return;
    }
    attempt *a = A(s, ai);
    a->provider = d->provider;
    a->req = ri;
    a->req_gen = r->gen;
    a->tokens_in = r->prompt_tokens;
    a->tokens_out = d->resume ? r->tokens_left : r->completion_tokens;
    a->hint_us = FB_TIME_NONE;
    a->stream = s->sc->classes[r->cls].stream;
    a->timeout_at_us = d->timeout_us > 0 ? s->now + d->timeout_us : FB_TIME_MAX;
    r->attempt = ai + 1;
    r->state = R_CALLING;
    stat_attempt(s, a);
    if (s->port)
        port_send(s, ai);
    else
        provider_arrive(s, ai);
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

/* Carry out the policy's decision: an attempt, a wait, or the end. */
static void handle_decision(sim *s, uint32_t ri, fb_fallback_decision d) {
    req *r = R(s, ri);
    switch (d.action) {
    case FB_ACT_ATTEMPT:
        send_attempt(s, ri, &d);
        return;
    case FB_ACT_WAIT:
        r->state = R_WAITING;
        push(s, s->now + d.delay_us, EV_RESUME, ri, r->gen, 0);
        return;
    case FB_ACT_DONE:
        break;
    }
    sim_end end = end_of(d.stop);
    stat_policy(s, r);
    if (d.degraded) {
        fb_time_us lat = sim_dist_draw_us(&r->rng, &s->pol->degraded_latency_us);
        if (lat > 0) {
            r->state = R_FINISHING;
            push(s, s->now + lat, EV_FINISH, ri, r->gen, 0);
            return;
        }
        finish(s, ri, SIM_END_DEGRADED, false);
        return;
    }
    finish(s, ri, end, d.via_fallback && end == SIM_END_SUCCESS);
}

/* ---- a reply comes back ---- */

/* Feed the classified result of the request's current attempt to the policy. */
static void policy_result(sim *s, req *r, const fb_class *c, fb_time_us hint) {
    fb_fallback_decision d = fb_fallback_result(&s->pods[r->pod].fb, &r->fr, c, hint, s->now);
    handle_decision(s, (uint32_t)(r - R(s, 0)), d);
}

/* The reply of attempt ai reaches its client (if the client still waits). */
void deliver(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    uint32_t pi = a->provider;
    req *r = R(s, a->req);
    bool waiting = !a->abandoned && r->gen == a->req_gen && r->attempt == ai + 1;
    fb_reply reply = a->reply;
    fb_time_us hint = a->hint_us;
    uint32_t out = a->tokens_out;
    a->state = A_FREE;
    pool_release(&s->atts, ai);
    if (!waiting) return;
    r->attempt = 0;
    fb_class c = fb_classify(&s->classifier, &reply);
    stat_outcome(s, pi, c.outcome);
    if (reply.after_first_token) {
        bool resumed = s->pol->stream == FB_STREAM_RESUME && out < r->tokens_left;
        stat_stream_failure(s, r, out, resumed);
        if (resumed) r->tokens_left -= out;
    }
    fb_fallback_decision d = fb_fallback_result(&s->pods[r->pod].fb, &r->fr, &c, hint, s->now);
    if (d.action == FB_ACT_DONE && d.stop == FB_STOP_SUCCESS && d.via_fallback)
        stat_fallback_cost(s, r, pi, out);
    handle_decision(s, a->req, d);
}

/* The client stops waiting for its current attempt; the provider may keep working on it. */
static void abandon_attempt(sim *s, req *r) {
    if (r->attempt == 0) return;
    uint32_t ai = r->attempt - 1;
    r->attempt = 0;
    A(s, ai)->abandoned = true;
    provider_cancel(s, ai);
}

void on_attempt_timeout(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    req *r = R(s, a->req);
    if (a->abandoned || r->gen != a->req_gen || r->attempt != ai + 1) return;
    /* the client gives up: a timeout outcome, the provider may keep working */
    uint32_t pi = a->provider;
    abandon_attempt(s, r);
    fb_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.transport = FB_TRANSPORT_TIMEOUT;
    rep.should_retry = -1;
    fb_class c = fb_classify(&s->classifier, &rep);
    stat_outcome(s, pi, c.outcome);
    policy_result(s, r, &c, FB_TIME_NONE);
}

/* ---- the end ---- */

static void release_worker(sim *s, req *r) {
    if (!r->holds_worker) return;
    r->holds_worker = false;
    s->pods[r->pod].busy--;
    s->busy_total--;
}

static void finish(sim *s, uint32_t ri, sim_end end, bool via_fallback) {
    req *r = R(s, ri);
    uint32_t podi = r->pod;
    stat_end(s, r, end, via_fallback);
    if (s->port) port_request_end(s, ri, end, via_fallback);
    if (r->state == R_QUEUED) {
        s->pods[podi].qlive--;
        s->pod_queue_total--;
    }
    release_worker(s, r);
    uint32_t user = r->user;
    r->state = R_FREE;
    pool_release(&s->reqs, ri);
    s->live--;
    if (user != NONE32) {
        /* a closed-loop user thinks, then asks again */
        const sim_class *c = &s->sc->classes[s->user_class[user]];
        fb_time_us think = sim_dist_draw_us(&s->user_rng[user], &c->think_us);
        if (s->now + think < s->sc->duration_us) push(s, s->now + think, EV_USER, user, 0, 0);
    }
    pod_pull(s, podi);
}

void on_deadline(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    if (r->state == R_FREE) return;
    if (r->state == R_CALLING || r->state == R_WAITING) {
        fb_fallback_cancel(&s->pods[r->pod].fb, &r->fr, s->now);
        stat_policy(s, r);
        abandon_attempt(s, r);
    }
    finish(s, ri, SIM_END_TIMEOUT, false);
}

void on_finish(sim *s, uint32_t ri) {
    finish(s, ri, SIM_END_DEGRADED, false);
}
