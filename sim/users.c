/*
 * users.c - users who submit a failed request again.
 *
 * A class with "resubmit" models the person (or the calling service) behind
 * a request: when it ends in an error (not a success, not a degraded
 * answer), its user submits the same request again after a think time, with
 * probability q, at most `max` times per user request. A re-submission is a
 * new request (it arrives at a pod, takes a worker, passes the policy) with
 * the same prompt and completion tokens; no client policy sees it coming,
 * which is what makes it a loop that can keep a recovering provider down.
 * The decision and the think time are drawn from the failed request's own
 * stream; a re-submission that would come after the end of traffic is not
 * made (the user gives up).
 */
#include "sim/fleetint.h"

bool sim__users_resubmit(sim *s, req *r, sim_end end) {
    const sim_resubmit *rs = &s->sc->classes[r->cls].resubmit;
    if (rs->probability <= 0 || end == SIM_END_SUCCESS || end == SIM_END_DEGRADED) return false;
    if (r->resubmits >= rs->max) return false;
    if (fb_rng_uniform(&r->rng) >= rs->probability) return false;
    fb_time_us at = s->now + scn_dist_draw_us(&r->rng, &rs->think_us);
    if (at >= s->sc->duration_us) return false;
    uint32_t id;
    int rc = sim__pool_take(&s->fleet->resubs, &id);
    if (rc != FB_OK) {
        sim__stop(s, rc, "re-submissions waiting cap reached (limits.in_flight) at t=%.3fs",
                  (double)s->now / 1e6);
        return false;
    }
    resub *e = pool_at(&s->fleet->resubs, id);
    e->cls = r->cls;
    e->count = (uint16_t)(r->resubmits + 1);
    e->user = r->user;
    e->prompt_tokens = r->prompt_tokens;
    e->completion_tokens = r->completion_tokens;
    e->parent = fb_rng_stream_id(&r->rng);
    sim__push(s, at, EV_RESUBMIT, id, e->gen, 0);
    sim__stat_resubmitted(s);
    return true;
}

void sim__on_resubmit(sim *s, uint32_t id) {
    fleet *f = s->fleet;
    /* a copy: the request may fail at once and its own re-submission grow the pool */
    resub e = *(const resub *)pool_at(&f->resubs, id);
    sim__pool_release(&f->resubs, id);
    f->arriving = &e;
    sim__new_request(s, e.cls, e.user, NONE32); /* not the log's own */
    f->arriving = NULL;
}
