/*
 * capacity.c - the provider's own limits, in the simulator's order (sim/provider.c): the
 * context window, then the RPM/TPM token buckets (429 with the bucket's wait), then the
 * concurrency limit: a free slot serves the attempt; else it waits in the FIFO queue (when
 * queueing is on and the queue has room), else the overload answer (or, without queueing,
 * a 429). A slot is held until the answer ends; when its client leaves first, it stays busy
 * until the answer would have ended (keeps_working), unless cancel_on_disconnect.
 */
#include <math.h>
#include <string.h>

#include "mockserver/serverint.h"

/* Slots now: the concurrency limit scaled by the active brownouts (at least one). */
static int64_t slots_locked(const mock_server *s, double scale) {
    int64_t limit = (int64_t)floor((double)s->cfg.capacity.concurrency * scale);
    return limit > 0 ? limit : 1;
}

/* The buckets' answer: true and taken, or false with the limit that was hit. */
static bool take_buckets(mock_server *s, int64_t tokens, double scale, fb_time_us t_us,
                         mock_limit_hit *hit) {
    const mock_capacity *c = &s->cfg.capacity;
    /* A brownout makes every request cost 1/scale of a full one. */
    int64_t req_cost = (int64_t)ceil(1.0 / scale), tok_cost = (int64_t)ceil((double)tokens / scale);
    fb_time_us wr = 0, wt = 0;
    if (c->requests_per_min > 0) {
        if (req_cost > fb_bucket_capacity(&s->rpm)) req_cost = fb_bucket_capacity(&s->rpm);
        wr = fb_bucket_wait(&s->rpm, req_cost, t_us);
    }
    if (c->tokens_per_min > 0) {
        if (tok_cost > fb_bucket_capacity(&s->tpm)) tok_cost = fb_bucket_capacity(&s->tpm);
        wt = fb_bucket_wait(&s->tpm, tok_cost, t_us);
    }
    if (wr > 0 || wt > 0) {
        bool by_tokens = wt > wr;
        fb_bucket *b = by_tokens ? &s->tpm : &s->rpm;
        hit->kind = by_tokens ? MOCK_LIMIT_TOKENS : MOCK_LIMIT_REQUESTS;
        hit->limit = by_tokens ? c->tokens_per_min : c->requests_per_min;
        hit->used = fb_bucket_capacity(b) - fb_bucket_available(b, t_us);
        hit->requested = by_tokens ? tok_cost : req_cost;
        hit->wait_us = by_tokens ? wt : wr;
        return false;
    }
    if (c->requests_per_min > 0) fb_bucket_take(&s->rpm, req_cost, t_us);
    if (c->tokens_per_min > 0) fb_bucket_take(&s->tpm, tok_cost, t_us);
    return true;
}

static void enqueue_locked(mock_server *s, req *r) {
    r->queue_next = NULL;
    if (s->queue_tail != NULL)
        s->queue_tail->queue_next = r;
    else
        s->queue_head = r;
    s->queue_tail = r;
    s->stats.waiting++;
    s->stats.queued++;
}

/* Give free slots to the queue's oldest attempts and wake them. */
static void serve_queue_locked(mock_server *s) {
    double scale = scn_fault_capacity(s->faults, (uint32_t)s->n_faults,
                                      mock_timeline_locked(s, mock_now_us()));
    while (s->queue_head != NULL && s->stats.busy < slots_locked(s, scale > 0 ? scale : 0)) {
        req *r = s->queue_head;
        s->queue_head = r->queue_next;
        if (s->queue_head == NULL) s->queue_tail = NULL;
        s->stats.waiting--;
        s->stats.busy++;
        r->holds_slot = true;
        mock_sched_wake(s->sched, r->conn); /* else it sees the slot at its next look */
    }
}

void mock_unqueue(req *r) {
    mock_server *s = r->s;
    if (r->phase != PH_QUEUE) return;
    pthread_mutex_lock(&s->lock);
    for (req **p = &s->queue_head, *prev = NULL; *p != NULL; prev = *p, p = &(*p)->queue_next) {
        if (*p != r) continue;
        *p = r->queue_next;
        if (s->queue_tail == r) s->queue_tail = prev;
        s->stats.waiting--;
        break;
    }
    pthread_mutex_unlock(&s->lock);
    r->phase = PH_BODY;
}

/* A slot whose client left comes free when its work would have ended. */
static void slot_done(void *arg) {
    mock_server *s = arg;
    pthread_mutex_lock(&s->lock);
    s->stats.busy--;
    serve_queue_locked(s);
    pthread_mutex_unlock(&s->lock);
}

void mock_release_slot(req *r, bool client_left) {
    mock_server *s = r->s;
    if (s->cfg.capacity.concurrency <= 0) return; /* no slots: none was taken */
    pthread_mutex_lock(&s->lock); /* a slot may be given on another connection's thread */
    bool held = r->holds_slot;
    r->holds_slot = false;
    pthread_mutex_unlock(&s->lock);
    if (!held) return;
    if (client_left && !s->cfg.capacity.cancel_on_disconnect && r->done_us > mock_now_us() &&
        mock_sched_call(s->sched, r->done_us, slot_done, s))
        return;
    slot_done(s);
}

/* A free slot, the queue, or the answer at the limit (the overload status, or a 429). */
static bool admit_locked(req *r, double scale) {
    mock_server *s = r->s;
    const mock_capacity *c = &s->cfg.capacity;
    if (c->concurrency <= 0 || s->stats.busy < slots_locked(s, scale)) {
        if (c->concurrency > 0) s->stats.busy++;
        r->holds_slot = c->concurrency > 0;
        return true;
    }
    if (c->queue_at_limit && s->stats.waiting < c->queue) {
        enqueue_locked(s, r);
        r->phase = PH_QUEUE;
        return false;
    }
    s->stats.capacity_rejects++;
    if (c->queue_at_limit) {
        r->act.status = c->overload_status                 ? c->overload_status
                        : r->rep.dialect == MOCK_ANTHROPIC ? 529
                                                           : 503;
        r->act.flavor = MOCK_FLAVOR_OVERLOADED;
        mock_copy_str(r->act.label, sizeof r->act.label, "capacity_queue_full");
        return true;
    }
    r->act.status = 429;
    r->act.flavor = MOCK_FLAVOR_RATE_LIMIT;
    r->rep.limit =
        (mock_limit_hit){MOCK_LIMIT_CONCURRENCY, c->concurrency, s->stats.busy, 1, FB_US_PER_S};
    mock_copy_str(r->act.label, sizeof r->act.label, "capacity");
    return true;
}

static bool served(const mock_action *a) {
    return a->status == 0 && !a->hang && !a->reset;
}

bool mock_apply_limits(req *r, uint64_t attempt, fb_time_us t_us, double scale) {
    mock_server *s = r->s;
    mock_action *a = &r->act;
    const mock_capacity *c = &s->cfg.capacity;
    if (served(a) && s->cfg.context_window > 0 && r->rep.prompt_tokens > s->cfg.context_window) {
        a->status = 400;
        a->flavor = MOCK_FLAVOR_CONTEXT;
        mock_copy_str(a->label, sizeof a->label, "context_window");
    }
    if (!served(a)) return true;
    bool limited = c->concurrency > 0 || c->requests_per_min > 0 || c->tokens_per_min > 0;
    bool go = true;
    if (!limited) { /* nothing shared to look at: a brownout's share alone */
        if (scale < 1.0 && mock_draw(s->cfg.seed, attempt, 0xB0) >= scale) {
            a->status = r->rep.dialect == MOCK_ANTHROPIC ? 529 : 503;
            a->flavor = MOCK_FLAVOR_OVERLOADED;
        }
        return true;
    }
    pthread_mutex_lock(&s->lock);
    if (scale <= 0) /* a total brownout: nothing fits */
        r->rep.limit = (mock_limit_hit){MOCK_LIMIT_CONCURRENCY, c->concurrency, 0, 1, FB_US_PER_S};
    if (scale <= 0 || !take_buckets(s, r->billed, scale, t_us, &r->rep.limit)) {
        s->stats.capacity_rejects++;
        a->status = 429;
        a->flavor = MOCK_FLAVOR_RATE_LIMIT;
        mock_copy_str(a->label, sizeof a->label, "capacity");
    } else {
        go = admit_locked(r, scale);
    }
    if (a->status == 429 && c->no_retry_after) a->no_retry_after = true;
    pthread_mutex_unlock(&s->lock);
    if (!go) {
        r->hang_until_us = mock_now_us() + s->cfg.hang_max_us;
        if (!mock_suspend_until(r, r->hang_until_us)) mock_unqueue(r);
    }
    return go;
}

/* Time until a bucket is full again: (capacity - available) / rate. */
static fb_time_us bucket_full_in(fb_bucket *b, fb_time_us now_us) {
    int64_t avail = fb_bucket_available(b, now_us), capacity = fb_bucket_capacity(b);
    if (avail >= capacity) return 0;
    return fb_bucket_wait(b, capacity, now_us);
}

rl_view mock_rate_view(mock_server *s, int64_t tokens, const mock_limit_hit *hit) {
    rl_view v = {NOMINAL_RPM, NOMINAL_RPM - 1, NOMINAL_TPM, NOMINAL_TPM - tokens, 6000, 0};
    bool buckets = s->cfg.capacity.requests_per_min > 0 || s->cfg.capacity.tokens_per_min > 0;
    if (buckets) pthread_mutex_lock(&s->lock);
    fb_time_us t = buckets ? mock_timeline_locked(s, mock_now_us()) : 0;
    if (s->cfg.capacity.requests_per_min > 0) {
        v.limit_req = s->cfg.capacity.requests_per_min;
        v.remaining_req = fb_bucket_available(&s->rpm, t);
        v.reset_req_us = bucket_full_in(&s->rpm, t);
    }
    if (s->cfg.capacity.tokens_per_min > 0) {
        v.limit_tok = s->cfg.capacity.tokens_per_min;
        v.remaining_tok = fb_bucket_available(&s->tpm, t);
        v.reset_tok_us = bucket_full_in(&s->tpm, t);
    }
    if (buckets) pthread_mutex_unlock(&s->lock);
    if (hit != NULL && hit->kind == MOCK_LIMIT_TOKENS) {
        v.remaining_tok = 0; /* the limit that was hit shows empty, reset when it fits */
        if (v.reset_tok_us < hit->wait_us) v.reset_tok_us = hit->wait_us;
    } else if (hit != NULL && hit->kind != MOCK_LIMIT_NONE) {
        v.remaining_req = 0;
        if (v.reset_req_us < hit->wait_us) v.reset_req_us = hit->wait_us;
    }
    if (v.remaining_req < 0) v.remaining_req = 0;
    if (v.remaining_tok < 0) v.remaining_tok = 0;
    return v;
}
