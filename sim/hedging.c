/*
 * hedging.c - hedged requests: the innermost layer's attempt as a group of
 * provider calls, the first success wins (core/hedge.h decides).
 *
 * When the innermost layer of a request's stack hedges, its engine's
 * ATTEMPT becomes the group's first call (sim__hedge_begin): the engine's
 * permits are detached into that call, and every later call of the group
 * takes its own (fb_fallback_hedge: the same provider or the next of the
 * chain, through its limiter, concurrency limit and breaker). A timer sends
 * the next call after the delay (sim__on_hedge); a call that answers, or times
 * out, ends its own permits with its outcome and tells the group
 * (member_done): a success wins, a failure that may be retried sends the
 * next call at once, any other failure ends the group, and when every call
 * has failed the group ends with the first one's failure. The group's end
 * is one result for the engine (sim__inner_result), which retries, falls back
 * or ends as usual. The losers are cancelled (provider_cancel: the provider
 * drops them only if it does not keep working) or left running
 * (hedging.cancel false: they hold their permits and connection until they
 * answer, and are billed).
 */
#include "sim/simint.h"

/* What a member of a group was, read before its attempt is freed or reused. */
typedef struct member {
    uint32_t ai, ri, pi, slot, out, pod, layer;
    fb_time_us start_us;
    fb_fallback_permits perm;
    bool alive; /* its group still waits for it */
} member;

static const lay *layer_of(const sim *s, const member *m) {
    return &s->lays[m->layer];
}

static fb_hedge_window *window_of(sim *s, uint32_t layer, uint32_t podi, uint32_t provider) {
    return s->hwins ? &s->hwins[slot(s, layer, podi, provider)] : NULL;
}

static member snapshot(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    attx *x = X(a);
    member m = {ai,     a->req,   a->provider, x->slot, a->tokens_out,
                x->pod, x->layer, x->start_us, x->perm, false};
    x->perm.held = false; /* ended once, by member_done */
    req *r = R(s, a->req);
    m.alive = !a->abandoned && r->gen == a->req_gen && HG(s, r)->active &&
              HG(s, r)->att[x->slot] == ai + 1;
    return m;
}

/* The next call is due at the group's next_at: name the timer after the group's serial. */
static void arm(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    hgroup *g = HG(s, r);
    g->serial++;
    if (g->g.next_at_us == FB_TIME_MAX) return;
    fb_time_us t = g->g.next_at_us > s->now ? g->g.next_at_us : s->now;
    sim__push(s, t, EV_HEDGE, ri, r->gen, g->serial);
}

void sim__hedge_begin(sim *s, uint32_t ri, uint32_t ai) {
    req *r = R(s, ri);
    hgroup *g = HG(s, r);
    attempt *a = A(s, ai);
    attx *x = X(a);
    uint32_t inner = r->stack->depth - 1;
    const lay *L = &s->lays[r->stack->layer[inner]];
    fb_fallback_detach(&r->hops[inner].fr, &x->perm);
    x->grouped = true;
    x->slot = 0;
    g->active = true;
    g->provider = a->provider;
    for (uint32_t k = 0; k < FB_HEDGE_ATTEMPTS_MAX; k++) g->att[k] = 0;
    g->att[0] = ai + 1;
    r->attempt = 0; /* the group holds its calls */
    fb_time_us delay =
        fb_hedge_delay(&L->hedge, window_of(s, x->layer, seat_inner(r), a->provider));
    fb_hedge_begin(&L->hedge, &g->g, delay, s->now);
    arm(s, ri);
}

/* A loser: cancelled (its permits end as cancelled, the provider is told), or left running. */
static void lose(sim *s, uint32_t ai, bool cancel) {
    attempt *a = A(s, ai);
    attx *x = X(a);
    a->abandoned = true;
    /* one that has not left yet is never sent, whatever the policy */
    if (!cancel && a->state != A_CONNWAIT) {
        x->left_running = true;
        return;
    }
    fb_fallback_end(pod_fb(s, x->pod, x->layer), &x->perm, NULL, FB_TIME_NONE, s->now);
    sim__provider_cancel(s, ai);
}

/* The group is over: every call still out loses. */
static void close_group(sim *s, req *r, const lay *L) {
    hgroup *g = HG(s, r);
    bool cancel = fb_hedge_policy_config(&L->hedge)->cancel != FB_OFF;
    g->active = false;
    g->serial++; /* its timer is moot */
    for (uint32_t k = 0; k < FB_HEDGE_ATTEMPTS_MAX; k++) {
        if (g->att[k] == 0) continue;
        uint32_t aj = g->att[k] - 1;
        g->att[k] = 0;
        lose(s, aj, cancel);
    }
}

void sim__hedge_abandon(sim *s, req *r) {
    if (!HG(s, r)->active) return;
    close_group(s, r, &s->lays[r->stack->layer[r->stack->depth - 1]]);
}

/* The group ends with `rep` from provider pi: the losers lose, the engine decides. */
static void end_group(sim *s, uint32_t ri, uint32_t pi, const fb_reply *rep, fb_time_us hint,
                      uint32_t out) {
    req *r = R(s, ri);
    close_group(s, r, &s->lays[r->stack->layer[r->stack->depth - 1]]);
    sim__inner_result(s, ri, pi, rep, hint, out);
}

/* Send the next call of the group, or stop hedging when nothing admits it. */
static fb_hedge_verdict send_next(sim *s, uint32_t ri) {
    req *r = R(s, ri);
    hgroup *g = HG(s, r);
    uint32_t inner = r->stack->depth - 1, li = r->stack->layer[inner];
    const lay *L = &s->lays[li];
    fb_fallback *fb = pod_fb(s, seat_inner(r), li);
    fb_fallback_permits perm;
    fb_time_us timeout_us = 0;
    bool next = fb_hedge_policy_config(&L->hedge)->target == FB_HEDGE_NEXT;
    if (!fb_fallback_hedge(fb, &r->hops[inner].fr, next, s->now, &perm, &timeout_us)) {
        fb_hedge_verdict v = fb_hedge_refused(&g->g);
        arm(s, ri);
        return v;
    }
    uint32_t ai;
    if (sim__new_attempt(s, ri, perm.provider, timeout_us, false, &ai) != FB_OK) {
        fb_fallback_end(fb, &perm, NULL, FB_TIME_NONE, s->now);
        return FB_HEDGE_WAIT;
    }
    attempt *a = A(s, ai);
    attx *x = X(a);
    x->perm = perm;
    x->grouped = true;
    x->hedge = true;
    x->slot = g->g.launched;
    g->att[x->slot] = ai + 1;
    sim__stat_attempt(s, a);
    sim__stat_layer_attempt(s, li, perm.provider);
    sim__stat_hedge_sent(s, perm.provider);
    fb_time_us delay = fb_hedge_delay(&L->hedge, window_of(s, li, seat_inner(r), g->provider));
    fb_hedge_sent(&L->hedge, &g->g, delay, s->now);
    arm(s, ri);
    attempt_depart(s, ai);
    return FB_HEDGE_WAIT;
}

void sim__on_hedge(sim *s, uint32_t ri, uint32_t arg) {
    req *r = R(s, ri);
    hgroup *g = HG(s, r);
    const lay *L = &s->lays[r->stack->layer[r->stack->depth - 1]];
    if (!g->active || g->serial != arg || !fb_hedge_due(&L->hedge, &g->g, s->now)) return;
    if (send_next(s, ri) == FB_HEDGE_EXHAUSTED)
        end_group(s, ri, g->provider, &g->first, g->first_hint_us, 0);
}

/*
 * A call of a group answered (or timed out): its own permits end with its
 * outcome, even a loser's; for a call its group still waits for, the
 * group decides.
 */
static void member_done(sim *s, const member *m, const fb_reply *rep, fb_time_us hint) {
    const lay *L = layer_of(s, m);
    fb_class c = scn_layer_classify(L->cfg, &L->classifier, rep, m->pi);
    fb_fallback_permits perm = m->perm;
    fb_fallback_end(pod_fb(s, m->pod, m->layer), &perm, &c, hint, s->now);
    if (!m->alive) return;
    req *r = R(s, m->ri);
    hgroup *g = HG(s, r);
    g->att[m->slot] = 0;
    sim__stat_outcome(s, m->pi, c.outcome);
    sim__stat_answer(s, rep);
    if (rep->after_first_token) sim__stat_stream_failure(s, r, m->out, false);
    bool ok = c.outcome == FB_OUT_SUCCESS;
    fb_hedge_window *w = window_of(s, m->layer, m->pod, m->pi);
    if (ok && w) fb_hedge_window_add(w, s->now - m->start_us);
    if (m->slot == 0 && !ok) {
        g->first = *rep;
        g->first_hint_us = hint;
    }
    fb_hedge_verdict v = fb_hedge_result(&L->hedge, &g->g, ok, c.retryable, s->now);
    if (v == FB_HEDGE_SEND_NOW) v = send_next(s, m->ri);
    if (v == FB_HEDGE_WON && m->slot > 0) sim__stat_hedge_won(s);
    if (v == FB_HEDGE_WON || v == FB_HEDGE_FAILED)
        end_group(s, m->ri, m->pi, rep, hint, m->out);
    else if (v == FB_HEDGE_EXHAUSTED)
        end_group(s, m->ri, g->provider, &g->first, g->first_hint_us, 0);
}

void sim__hedge_delivered(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    member m = snapshot(s, ai);
    fb_reply rep = a->reply;
    fb_time_us hint = a->hint_us;
    a->state = A_FREE;
    sim__pool_release(&s->atts, ai);
    member_done(s, &m, &rep, hint);
}

/* A call's own timeout: the client gives up on it (a loser left running too). */
void sim__hedge_timeout(sim *s, uint32_t ai) {
    attempt *a = A(s, ai);
    if (a->abandoned && !X(a)->left_running) return;
    member m = snapshot(s, ai);
    a->abandoned = true;
    X(a)->left_running = false;
    sim__provider_cancel(s, ai);
    fb_reply rep = sim_timeout_reply();
    member_done(s, &m, &rep, FB_TIME_NONE);
}
