/*
 * provider.c - a provider: admission, capacity, queueing, service, replies, billing.
 *
 * An attempt arrives (sim__provider_arrive) and is admitted or answered at once:
 * the fault timeline may answer it (scn_fault_decide, phase ANSWER), then
 * the context window, the RPM/TPM buckets (429) and the concurrency limit
 * with its queue (or the overload answer when the queue is full). A served
 * attempt takes a slot (start_service), where the timeline may slow or
 * break it (phase SERVICE) and the load may lengthen it (latency.load), and
 * is billed when it ends (sim__on_service_done) whether or not its client still
 * waits. A freed slot takes the next queued attempt in the queue's
 * discipline (dispatch): FIFO, LIFO, dropping expired attempts at the head,
 * or CoDel (RFC 8289). With a port (the live driver) the attempt goes to a
 * real provider instead (port_send, sim_port_deliver).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/simint.h"

static void start_service(sim *s, uint32_t ai, attempt *a, fb_rng *rng);

/*
 * The slots at a capacity factor, computed when the factor changes
 * (sim__provider_set_capacity), not per admission: most providers never thrash.
 */
static uint32_t slots_at(const sim_provider *pv, double factor) {
    if (pv->concurrency == 0) return UINT32_MAX;
    return (uint32_t)floor((double)pv->concurrency * factor);
}

void sim__provider_set_capacity(sim *s, uint32_t p, double factor) {
    const sim_provider *pv = &s->sc->providers[p];
    prov *pr = &s->provs[p];
    pr->capacity_factor = factor;
    pr->slots = slots_at(pv, factor);
    pr->thrashes = pv->concurrency > 0 && pv->efficiency_share < 1;
}

/* The slots serving now: concurrency x the brownout share, x the efficiency share when overloaded.
 */
static inline __attribute__((always_inline)) uint32_t effective_concurrency(const sim *s,
                                                                            uint32_t p) {
    const prov *pr = &s->provs[p];
    const sim_provider *pv = &s->sc->providers[p];
    if (pr->thrashes && pr->qlive > pv->efficiency_queue_above) {
        double c = (double)pv->concurrency * pr->capacity_factor;
        double e = floor(c * pv->efficiency_share);
        return e < 1 && c >= 1 ? 1 : (uint32_t)e; /* a thrashing provider still serves */
    }
    return pr->slots;
}

/* Did a served attempt's output go to the user (else its tokens were wasted)? */
static bool output_used(const attempt *a) {
    const fb_reply *r = &a->reply;
    bool ok = r->status == 200 && r->transport == FB_TRANSPORT_NONE &&
              r->error_kind == FB_ERRKIND_NONE && !r->after_first_token;
    /* a broken stream that the client resumes keeps what it received */
    bool kept = r->after_first_token && a->keeps_partial;
    return ok || kept;
}

/*
 * Schedule the client's attempt timeout only when the attempt would not be
 * over by then: most attempts end earlier, and their timers would only fill
 * the heap. A reply due exactly at the timeout is accepted.
 */
static void arm_timer(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    a->timer_armed = true;
    sim__push(s, a->timeout_at_us, EV_ATTEMPT_TIMEOUT, ai, a->gen, 0);
}

/* Its test inline (the common answer, done in time, first), the push (rare: most attempts end
   earlier) out of line. */
static inline __attribute__((always_inline)) void arm_timeout(sim *s, uint32_t ai, attempt *a,
                                                              fb_time_us done_at) {
    if (done_at <= a->timeout_at_us || a->timer_armed || a->timeout_at_us == FB_TIME_MAX) return;
    arm_timer(s, ai);
}

static fb_error_kind kind_for_status(int status) {
    if (status == 429) return FB_ERRKIND_RATE_LIMIT;
    if (status == 529) return FB_ERRKIND_OVERLOADED;
    return FB_ERRKIND_NONE;
}

/* What an answering fault's effect e makes of the attempt's answer. */
static void fault_reply_of(const sim_provider *pv, const sim_fault_effect *e, fault_reply *out) {
    out->kind = e->kind;
    out->status = e->status;
    out->error_kind = e->error_kind ? e->error_kind : kind_for_status(e->status);
    out->retry_after_us = e->retry_after_us;
    /* a fault with a latency of its own draws it instead of the provider's error latency */
    out->latency = scn_fault_latency(&pv->faults[e->answer]);
}

/*
 * No fault of provider p's timeline in phase k (0: SIM_FAULT_ANSWER, 1:
 * SIM_FAULT_SERVICE) is active now: scn_fault_decide would draw nothing and
 * leave its effect clear. Asked per attempt, answered from the span over which
 * the answer holds; the timeline is looked at again when the clock leaves it.
 */
_Static_assert(SIM_FAULTS_MAX <= INT8_MAX, "prov.lone_answer: a fault's index in an int8_t");
static inline bool faults_quiet(sim *s, uint32_t p, unsigned k) {
    prov *pr = &s->provs[p];
    if (s->now < pr->quiet_from[k] || s->now >= pr->quiet_to[k]) {
        const sim_provider *pv = &s->sc->providers[p];
        unsigned phase = k ? SIM_FAULT_SERVICE : SIM_FAULT_ANSWER;
        pr->quiet[k] = scn_fault_quiet(pv->faults, pv->fault_count, s->now, phase,
                                       &pr->quiet_from[k], &pr->quiet_to[k]);
        if (!k) {
            pr->lone_answer = (int8_t)scn_fault_lone(pv->faults, pv->fault_count, s->now, phase);
            if (pr->lone_answer >= 0) {
                sim_fault_effect e;
                scn_fault_answer(&pv->faults[pr->lone_answer], (uint32_t)pr->lone_answer, &e);
                fault_reply_of(pv, &e, &pr->lone_reply);
                pr->lone_fraction = pv->faults[pr->lone_answer].fraction;
                pr->lone_all = scn_fault_hits_all(&pv->faults[pr->lone_answer]);
            }
        }
    }
    return pr->quiet[k];
}

/* The fault model's draws come from the request's stream, in the order it asks. */
static double draw_uniform(void *ctx, uint32_t fault) {
    (void)fault;
    return fb_rng_uniform(ctx);
}

/* ---- admission ---- */

/* ... `ahead`: answered by a fault that answers every attempt of the provider until span_to
   (the lone one): the answer may be handled ahead (sim__answer_ahead) instead of queued */
static inline __attribute__((always_inline)) void
reply_at(sim *s, uint32_t ai, attempt *a, int status, fb_error_kind kind, fb_transport tr,
         fb_time_us hint, fb_time_us delay, bool ahead, fb_time_us span_to) {
    /* one assignment, not a memset and four stores: every refused attempt comes here */
    a->reply =
        (fb_reply){.status = status, .transport = tr, .error_kind = kind, .should_retry = -1};
    a->hint_us = hint;
    a->state = A_REPLYING;
    fb_time_us at = s->now + delay;
    if (ahead && s->ahead_on && sim__answer_ahead(s, ai, a, at, span_to)) return;
    sim__push(s, at, EV_REPLY, ai, a->gen, 0);
    arm_timeout(s, ai, a, at);
}

static inline __attribute__((always_inline)) void reply_now(sim *s, uint32_t ai, attempt *a,
                                                            int status, fb_error_kind kind,
                                                            fb_transport tr, fb_time_us hint,
                                                            fb_time_us delay) {
    reply_at(s, ai, a, status, kind, tr, hint, delay, false, 0);
}

/* The error latency of an attempt answered with an error: drawn only then, from its stream. */
static inline __attribute__((always_inline)) fb_time_us error_latency(sim *s, const attempt *a,
                                                                      fb_rng *rng) {
    uint32_t pi = a->provider;
    return scn_dist_draw_us_tab(rng, &s->sc->providers[pi].error_latency_us, s->provs[pi].elat_tab);
}

/*
 * What the answering faults make of the attempt's answer: from scn_fault_decide's effect
 * (in *out), or, when one plain fault alone is active (a storm's outage), from its one
 * draw without the walk over the timeline: its answer, kept with the span (lone_reply).
 * NULL: none answers.
 */
static const fault_reply *fault_decide_answer(sim *s, const attempt *a, fb_rng *rng,
                                              fault_reply *out) {
    uint32_t pi = a->provider;
    const prov *pr = &s->provs[pi];
    if (pr->lone_answer >= 0) /* one that hits every attempt draws nothing (fusebox-4) */
        return pr->lone_all || draw_uniform(rng, (uint32_t)pr->lone_answer) < pr->lone_fraction
                   ? &pr->lone_reply
                   : NULL;
    const sim_provider *pv = &s->sc->providers[pi];
    uint8_t retry = a->retry;
    sim_fault_effect e;
    scn_fault_decide(pv->faults, pv->fault_count, s->now,
                     SIM_FAULT_ANSWER | (retry ? SIM_FAULT_RETRY_NTH(retry) : 0u),
                     s->fault_even[pi], draw_uniform, rng, &e);
    if (e.answer < 0) return NULL;
    fault_reply_of(pv, &e, out);
    return out;
}

/* The scripted faults answer the attempt (true) or let it through. */
static bool fault_answers(sim *s, uint32_t ai, attempt *a, fb_rng *rng) {
    if (faults_quiet(s, a->provider, 0)) return false;
    fault_reply decided;
    const fault_reply *fr = fault_decide_answer(s, a, rng, &decided);
    if (!fr) return false;
    switch (fr->kind) {
    case SIM_FAULT_HANG:
        a->state = A_HANG; /* no answer; the client's timeout ends it */
        arm_timeout(s, ai, a, FB_TIME_MAX);
        break;
    case SIM_FAULT_RESET:
        reply_now(s, ai, a, 0, FB_ERRKIND_NONE, FB_TRANSPORT_RESET, FB_TIME_NONE,
                  error_latency(s, a, rng));
        break;
    default: {
        fb_time_us elat =
            fr->latency ? scn_dist_draw_us(rng, fr->latency) : error_latency(s, a, rng);
        const prov *pr = &s->provs[a->provider];
        reply_at(s, ai, a, fr->status, fr->error_kind, FB_TRANSPORT_NONE, fr->retry_after_us, elat,
                 fr == &pr->lone_reply && pr->lone_all, pr->quiet_to[0]);
        break;
    }
    }
    return true;
}

/* The RPM/TPM buckets: a 429 when either is empty (true), else take from both. */
static bool buckets_refuse(sim *s, uint32_t ai, attempt *a, fb_rng *rng) {
    uint32_t pi = a->provider;
    prov *p = &s->provs[pi];
    int64_t tokens = (int64_t)a->tokens_in + a->tokens_out;
    if (!p->has_rpm && !p->has_tpm) return false;
    fb_time_us w1 = p->has_rpm ? fb_bucket_wait(&p->rpm, 1, s->now) : 0;
    fb_time_us w2 = p->has_tpm ? fb_bucket_wait(&p->tpm, tokens, s->now) : 0;
    fb_time_us w = w1 > w2 ? w1 : w2;
    if (w > 0) {
        fb_time_us hint = FB_TIME_NONE;
        if (s->sc->providers[pi].limit_retry_after && w != FB_TIME_MAX)
            hint = (w + FB_US_PER_S - 1) / FB_US_PER_S * FB_US_PER_S; /* whole seconds */
        sim__stat_tally(s, pi, T_CAPACITY_429);
        reply_now(s, ai, a, 429, FB_ERRKIND_RATE_LIMIT, FB_TRANSPORT_NONE, hint,
                  error_latency(s, a, rng));
        return true;
    }
    if (p->has_rpm) fb_bucket_take(&p->rpm, 1, s->now);
    if (p->has_tpm) fb_bucket_take(&p->tpm, tokens, s->now);
    return false;
}

/* A free slot serves it; else it waits in the queue; else the overload answer. */
static void admit(sim *s, uint32_t ai, attempt *a, fb_rng *rng) {
    uint32_t pi = a->provider;
    const sim_provider *pv = &s->sc->providers[pi];
    prov *p = &s->provs[pi];
    if (p->busy < effective_concurrency(s, pi)) {
        start_service(s, ai, a, rng);
    } else if (p->qlive < pv->queue) {
        ref e = {ai, a->gen};
        if (sim_fifo_push(&p->queue, &e) != FB_OK) {
            sim__stop(s, FB_ECAP, "provider queue cannot grow at t=%.3fs", (double)s->now / 1e6);
            return;
        }
        a->state = A_QUEUED;
        a->queued_us = s->now;
        sim__req_queued(s, a, 1);
        arm_timeout(s, ai, a, FB_TIME_MAX);
        p->qlive++;
        sim__stat_provider_queued(s, pi);
    } else {
        sim__stat_tally(s, pi, T_OVERLOADED);
        reply_now(s, ai, a, pv->overload_status, kind_for_status(pv->overload_status),
                  FB_TRANSPORT_NONE, FB_TIME_NONE, error_latency(s, a, rng));
    }
}

/*
 * The stream an attempt's draws come from: its request's, so that the same request sees the
 * same answers and latencies under every variant as long as it makes the same attempts. A
 * hedge left running may arrive after its request ended (conn.c: the network).
 */
static fb_rng *attempt_rng(sim *s, const attempt *a) {
    req *r = R(s, a->req);
    return r->gen == a->req_gen ? &r->rng : &s->pods[0].rng;
}

/* An attempt reaches its provider. */
void sim__provider_arrive(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    const sim_provider *pv = &s->sc->providers[a->provider];
    fb_rng *rng = attempt_rng(s, a);
    /* the error latency is drawn by the answer that uses it (error_latency), after the
       fault's draws: a served attempt draws none (random streams fusebox-3, docs/rng.md) */
    if (fault_answers(s, ai, a, rng)) return;
    if (pv->context_window > 0 && (uint64_t)a->tokens_in + a->tokens_out > pv->context_window) {
        reply_now(s, ai, a, 400, FB_ERRKIND_CONTEXT_LENGTH, FB_TRANSPORT_NONE, FB_TIME_NONE,
                  error_latency(s, a, rng));
        return;
    }
    if (buckets_refuse(s, ai, a, rng)) return;
    admit(s, ai, a, rng);
}

/* ---- service ---- */

/* A service time from doubles, bounded so that no time sum can overflow. */
static fb_time_us service_us(double us) {
    return scn__bound_us(us); /* llround's value, without the call */
}

/* A served attempt broken by a midstream fault after `after` tokens. */
static void break_answer(attempt *a, const sim_fault_effect *e) {
    /* a streamed answer fails after the user saw tokens; a plain one just fails */
    a->reply.after_first_token = a->stream;
    a->tokens_out = e->after_tokens; /* generated before the failure */
    if (e->mode == SIM_MIDSTREAM_ERROR) {
        a->reply.status = 529;
        a->reply.error_kind = FB_ERRKIND_OVERLOADED;
    } else {
        a->reply.status = 0;
        a->reply.transport = e->mode == SIM_MIDSTREAM_CUT ? FB_TRANSPORT_RESET : FB_TRANSPORT_OTHER;
    }
}

/*
 * latency.load: 1 + in_service x the other attempts in service + queued x the
 * attempts waiting, counted as this one starts (it is in service already).
 * With both at 0 it is exactly 1, and multiplying by it changes no bit.
 */
static double load_factor(const sim *s, uint32_t pi) {
    const sim_provider *pv = &s->sc->providers[pi];
    const prov *p = &s->provs[pi];
    return 1.0 + pv->load_in_service * (double)(p->busy - 1) + pv->load_queued * (double)p->qlive;
}

/* Attempt ai (a = A(s, ai)) takes a slot; its latencies drawn from rng (attempt_rng). */
static void start_service(sim *s, uint32_t ai, attempt *a, fb_rng *rng) {
    const sim_provider *pv = &s->sc->providers[a->provider];
    s->provs[a->provider].busy++;
    sim__stat_provider_busy(s, a->provider);
    a->state = A_SERVICE;
    const prov *pr = &s->provs[a->provider];
    sim_fault_effect e; /* read only when faulted: else it would be scn_fault_clear's */
    bool faulted = !faults_quiet(s, a->provider, 1);
    if (faulted)
        scn_fault_decide(pv->faults, pv->fault_count, s->now,
                         SIM_FAULT_SERVICE | (a->retry ? SIM_FAULT_RETRY_NTH(a->retry) : 0u),
                         s->fault_even[a->provider], draw_uniform, rng, &e);
    /*
     * (ttft x slow x load + delay) + per x slow x load x tokens: without a
     * fault in the service phase the factor is 1, the delay 0 and no stream
     * breaks, without latency.load the load is 1, and skipping them changes
     * no bit.
     */
    double ttft = (double)scn_dist_draw_us_tab(rng, &pv->ttft_us, pr->ttft_tab);
    double per = (double)pv->per_token_us;
    if (faulted) {
        ttft *= e.slow;
        per *= e.slow;
    }
    if (pr->loaded) {
        double load = load_factor(s, a->provider);
        ttft *= load;
        per *= load;
    }
    if (faulted) ttft += (double)e.delay_us;
    fb_time_us dur = service_us(ttft + per * (double)a->tokens_out);
    memset(&a->reply, 0, sizeof a->reply);
    a->reply.should_retry = -1;
    a->reply.status = 200;
    a->hint_us = FB_TIME_NONE;
    if (faulted && e.midstream >= 0 && e.after_tokens < a->tokens_out) {
        dur = service_us(ttft + per * (double)e.after_tokens);
        break_answer(a, &e);
    }
    sim__push(s, s->now + dur, EV_SERVICE_DONE, ai, a->gen, 0);
    arm_timeout(s, ai, a, s->now + dur);
}

/* ---- the queue's discipline ---- */

/*
 * The next queued attempt still waiting there, from the head (or the tail
 * for LIFO); entries of attempts cancelled meanwhile are stale and skipped.
 */
static bool pop_live(sim *s, uint32_t pi, uint32_t *ai) {
    prov *p = &s->provs[pi];
    bool lifo = s->sc->providers[pi].discipline == SIM_QUEUE_LIFO;
    ref e;
    while (lifo ? sim_fifo_pop_tail(&p->queue, &e) : sim_fifo_pop(&p->queue, &e)) {
        attempt *a = A(s, e.id);
        if (a->gen != e.gen || a->state != A_QUEUED) continue;
        p->qlive--;
        sim__req_queued(s, a, -1);
        *ai = e.id;
        return true;
    }
    return false;
}

/* The provider drops a queued attempt unserved: its overload answer, if the client still waits. */
static void shed(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    const sim_provider *pv = &s->sc->providers[a->provider];
    sim__stat_tally(s, a->provider, T_SHED);
    if (a->abandoned) {
        a->state = A_FREE; /* nobody waits for an answer, and nothing was served */
        sim__pool_release(&s->atts, ai);
        return;
    }
    fb_time_us elat = error_latency(s, a, &R(s, a->req)->rng);
    reply_now(s, ai, a, pv->overload_status, kind_for_status(pv->overload_status),
              FB_TRANSPORT_NONE, FB_TIME_NONE, elat);
}

/* drop_expired: an attempt whose client gave up is dropped when it reaches the head. */
static bool pop_unexpired(sim *s, uint32_t pi, uint32_t *ai) {
    while (pop_live(s, pi, ai)) {
        if (!A(s, *ai)->abandoned) return true;
        shed(s, *ai);
    }
    return false;
}

static fb_time_us control_law(fb_time_us t, uint32_t count, fb_time_us interval_us) {
    return t + (fb_time_us)llround((double)interval_us / sqrt((double)count));
}

/*
 * RFC 8289's dodequeue(): the head, and whether its sojourn time has stayed
 * at or above the target for an interval. "At most one MTU left in the
 * queue" becomes "at most one attempt left waiting".
 */
static bool codel_pop(sim *s, uint32_t pi, uint32_t *ai, bool *ok_to_drop) {
    codel *c = &s->provs[pi].codel;
    const sim_provider *pv = &s->sc->providers[pi];
    *ok_to_drop = false;
    if (!pop_live(s, pi, ai)) {
        c->first_above_us = FB_TIME_NONE;
        return false;
    }
    fb_time_us sojourn = s->now - A(s, *ai)->queued_us;
    if (sojourn < pv->codel_target_us || s->provs[pi].qlive <= 1)
        c->first_above_us = FB_TIME_NONE;
    else if (c->first_above_us == FB_TIME_NONE)
        c->first_above_us = s->now + pv->codel_interval_us;
    else if (s->now >= c->first_above_us)
        *ok_to_drop = true;
    return true;
}

/*
 * RFC 8289's dequeue() (section 5.5, the Linux variant of the count
 * reset): once the sojourn has stayed above target for an interval, drop
 * the head, then keep dropping at interval / sqrt(count) until it falls
 * below target. A dropped attempt gets the overload answer.
 */
static bool codel_next(sim *s, uint32_t pi, uint32_t *ai) {
    codel *c = &s->provs[pi].codel;
    fb_time_us interval = s->sc->providers[pi].codel_interval_us;
    bool ok = false;
    bool got = codel_pop(s, pi, ai, &ok);
    if (!got) {
        c->dropping = false;
    } else if (c->dropping) {
        if (!ok) c->dropping = false;
        while (got && c->dropping && s->now >= c->drop_next_us) {
            shed(s, *ai);
            c->count++;
            got = codel_pop(s, pi, ai, &ok);
            if (!ok)
                c->dropping = false;
            else
                c->drop_next_us = control_law(c->drop_next_us, c->count, interval);
        }
    } else if (ok) {
        shed(s, *ai);
        got = codel_pop(s, pi, ai, &ok);
        c->dropping = true;
        uint32_t delta = c->count - c->lastcount;
        c->count = delta > 1 && s->now - c->drop_next_us < 16 * interval ? delta : 1;
        c->drop_next_us = control_law(s->now, c->count, interval);
        c->lastcount = c->count;
    }
    return got;
}

/*
 * A LIFO queue serves from the tail, so the stale entries of cancelled
 * attempts below it could pile up for as long as it stays overloaded: once
 * they outnumber the live ones, rotate the ring once, keeping the live ones
 * in order.
 */
static void drop_stale(sim *s, uint32_t pi) {
    prov *p = &s->provs[pi];
    size_t n = p->queue.len;
    if (n < 64 || n < 2 * (size_t)p->qlive) return;
    ref e;
    for (size_t i = 0; i < n && sim_fifo_pop(&p->queue, &e); i++) {
        attempt *a = A(s, e.id);
        if (a->gen == e.gen && a->state == A_QUEUED) sim_fifo_push(&p->queue, &e); /* no growth */
    }
}

/* The attempt a freed slot serves next, in the queue's discipline. */
static bool next_queued(sim *s, uint32_t pi, uint32_t *ai) {
    switch (s->sc->providers[pi].discipline) {
    case SIM_QUEUE_DROP_EXPIRED:
        return pop_unexpired(s, pi, ai);
    case SIM_QUEUE_CODEL:
        return codel_next(s, pi, ai);
    default:
        return pop_live(s, pi, ai);
    }
}

/* Free slots serve the queue (the slots are counted again as it shrinks: efficiency). */
static void dispatch_queue(sim *s, uint32_t p_i) {
    prov *p = &s->provs[p_i];
    uint32_t ai;
    while (p->busy < effective_concurrency(s, p_i) && next_queued(s, p_i, &ai)) {
        attempt *a = A(s, ai);
        start_service(s, ai, a, attempt_rng(s, a));
    }
}
/* Its test inline: most slots free up with nobody waiting (only CoDel's dequeue acts on an
   empty queue). */
static inline void dispatch(sim *s, uint32_t p_i) {
    if (s->provs[p_i].queue.len > 0 || s->sc->providers[p_i].discipline == SIM_QUEUE_CODEL)
        dispatch_queue(s, p_i);
}

void sim__on_reply(sim *s, uint32_t ai) {
    if (!attempt_return(s, ai)) sim__deliver(s, ai);
}

void sim__on_service_done(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    uint32_t pi = a->provider;
    s->provs[pi].busy--;
    bool used = !a->abandoned && output_used(a);
    if (a->abandoned) sim__stat_tally(s, pi, T_ABANDONED);
    sim__stat_bill(s, a, a->tokens_out, !used);
    if (!attempt_return(s, ai)) sim__deliver(s, ai);
    dispatch(s, pi);
}

/* The client gave up on attempt ai (already marked abandoned). */
void sim__provider_cancel(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    const sim_provider *pv = &s->sc->providers[a->provider];
    prov *p = &s->provs[a->provider];
    switch (a->state) {
    case A_QUEUED:
        if (pv->keeps_working) break;
        /* cancelled: the provider drops it from its queue */
        p->qlive--;
        sim__req_queued(s, a, -1);
        a->state = A_FREE;
        sim__pool_release(&s->atts, ai);
        if (pv->discipline == SIM_QUEUE_LIFO) drop_stale(s, a->provider);
        if (pv->efficiency_share < 1) dispatch(s, a->provider); /* fewer waiting: more slots */
        break;
    case A_SERVICE:
        if (pv->keeps_working) break;
        sim__stat_bill(s, a, 0, true);
        p->busy--;
        a->state = A_FREE;
        sim__pool_release(&s->atts, ai);
        dispatch(s, a->provider); /* the freed slot serves the next queued attempt */
        break;
    case A_REPLYING:
    case A_HANG:
    case A_CONNWAIT:  /* never sent */
    case A_TRAVEL:    /* never arrives: docs/models.md, "Network and connections" */
    case A_RETURNING: /* the answer is dropped on the way */
        a->state = A_FREE;
        sim__pool_release(&s->atts, ai);
        break;
    case A_PORT:
        s->port->cancel(s->port->ctx, (uint64_t)ai << 32 | a->gen);
        p->busy--;
        a->state = A_FREE;
        sim__pool_release(&s->atts, ai);
        break;
    default:
        break;
    }
    /* the client closes its connection (the attempt's fields outlive its release) */
    if (s->att_x) sim__conn_end(s, ai, true);
}

/* A fault starts or ends: brownouts change the capacity, and a larger one serves the queue. */
void sim__on_fault_edge(sim *s, uint32_t p, uint32_t f, bool end) {
    const sim_provider *pv = &s->sc->providers[p];
    sim__provider_set_capacity(s, p, scn_fault_capacity(pv->faults, pv->fault_count, s->now));
    if (!end && !s->baseline_ready && s->now >= s->first_window_us) sim__close_baseline(s);
    dispatch(s, p);
    sim_log_event le;
    memset(&le, 0, sizeof le);
    le.type = end ? SIM_EV_FAULT_END : SIM_EV_FAULT_START;
    le.t_us = s->now;
    le.pod = -1;
    le.provider = (uint8_t)p;
    le.fault = (uint8_t)f;
    sim__log_event(s, &le);
}

/* ---- real providers through the port ---- */

/* The attempt leaves for a real provider; its timeout is the simulator's timer. */
void sim__port_send(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    const req *r = R(s, a->req);
    const sim_port *port = s->port;
    sim_port_attempt pa = {(uint64_t)ai << 32 | a->gen,
                           a->provider,
                           r->cls,
                           a->tokens_in,
                           a->tokens_out,
                           a->stream,
                           (uint64_t)a->req << 32 | r->gen,
                           r->sent - 1,
                           r->arrival_us,
                           a->timeout_at_us,
                           s->now};
    char msg[256] = "";
    int rc = port->send(port->ctx, &pa, msg, sizeof msg);
    if (rc != FB_OK) {
        sim__stop(s, rc, "%s at t=%.3fs", msg, (double)s->now / 1e6);
        return;
    }
    a->state = A_PORT;
    s->provs[a->provider].busy++;
    sim__stat_provider_busy(s, a->provider);
    arm_timeout(s, ai, a, FB_TIME_MAX);
}

/* Request ri ends with `end`: the port hears of it when it traces requests. */
void sim__port_request_end(sim *s, uint32_t ri, sim_end end, bool via_fallback) {
    const req *r = R(s, ri);
    if (s->port->request_end == NULL || s->sc->classes[r->cls].target == SIM_TARGET_NONE) return;
    sim_port_request pr = {
        (uint64_t)ri << 32 | r->gen, r->cls, r->arrival_us, s->now, end, via_fallback, r->sent};
    s->port->request_end(s->port->ctx, &pr);
}

fb_time_us sim_port_seen_at(const sim *s, fb_time_us at_us) {
    return at_us > s->now ? at_us : s->now;
}

void sim_port_deliver(sim *s, uint64_t id, const sim_port_answer *answer) {
    /* what was due before the answer came happens first (a timeout may make it stale) */
    sim__catch_up(s, answer->at_us);
    if (s->rc != FB_OK) return;
    if (answer->at_us > s->now) s->now = answer->at_us;
    uint32_t ai = (uint32_t)(id >> 32);
    if (ai >= s->atts.used) return;
    attempt *a = A(s, ai);
    if (a->gen != (uint32_t)id || a->state != A_PORT) return;
    s->provs[a->provider].busy--;
    a->reply = answer->reply;
    a->hint_us = answer->hint_us;
    a->tokens_out = answer->tokens_out;
    if (answer->served) sim__stat_bill(s, a, a->tokens_out, !output_used(a));
    sim__deliver(s, ai);
}
