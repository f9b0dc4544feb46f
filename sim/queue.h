/*
 * queue.h - the simulator's event queue.
 *
 * Events are ordered by (time, sequence number): ties resolve in the order
 * the events were scheduled, so every run with the same inputs pops the same
 * sequence. Storage grows geometrically up to a cap fixed at init, so the
 * steady state allocates nothing; pushing past the cap fails with FB_ECAP.
 *
 * Four structures share the sequence counter:
 *   a calendar: a ring of SIM_CAL_BUCKETS buckets of 2^SIM_CAL_SHIFT us
 *   each (fewer, wider ones for sparse arrivals), covering the near
 *   future. A push appends to its bucket's list in
 *   O(1); when the clock reaches a bucket, its events are sorted into the
 *   "run" that pops in O(1). A push into the bucket being popped is placed
 *   in the run at its (time, sequence) position.
 *   a 4-ary min-heap for the events beyond the calendar's horizon, moved
 *   into the calendar as the clock approaches them,
 *   FIFO lanes for timers whose delay is the same for every event of the
 *   lane (shared-store propagation): pushes arrive in time order, so a
 *   ring buffer keeps them sorted for O(1) push and pop. A lane
 *   whose entries went stale can be compacted (sim_queue_compact_lane), and
 *   outside lanes: events in (time, sequence) order that the caller keeps
 *   itself, of which the queue holds only the heads (sim_queue_outside_*,
 *   sim_queue_push_outside): the simulator's request deadlines, its live
 *   requests in arrival order, so that a request that ends leaves nothing
 *   queued behind; and each traffic class's next arrival.
 * sim_queue_pop() returns the earliest of the run's head and the lanes'
 * heads (the outside lanes' too; the queue keeps which is the earliest):
 * exactly the (time, sequence) order of a single heap.
 * Events carry small integers (kind, entity id, generation), never pointers;
 * a stale event is recognised by its generation and skipped by the caller.
 */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "sim/fifo.h"

#define SIM_LANES_MAX 4
#define SIM_OUTSIDE_MAX 32 /* outside lanes (bits of a uint32_t) */
/* Buckets of 256 us and a horizon of 16.8 s: within 2% of the best width for both the
 * flagship's tuned variant (~2 events per ms) and its retry storm (~60 per ms), measured. A
 * sparser scenario's buckets are wider, over the same horizon (sim_queue_init_rate). */
#define SIM_CAL_SHIFT 8
#define SIM_CAL_BUCKETS 65536 /* a power of two */

typedef struct sim_event {
    fb_time_us t;
    uint64_t seq;
    uint32_t id;   /* entity index */
    uint32_t gen;  /* entity generation when scheduled */
    uint32_t kind; /* what happens */
    uint32_t arg;  /* a small payload */
} sim_event;

typedef struct sim_queue {
    /* the calendar */
    unsigned shift; /* buckets of 2^shift us */
    size_t mask;    /* the ring's buckets, a power of two (64 or more), less one */
    int64_t cur;    /* the bucket the run holds; later buckets are in the ring */
    fb_time_us ring_from_t, ring_to_t; /* the times the ring's buckets cover */
    sim_event *run;                    /* run[rpos..rlen): sorted */
    size_t rpos, rlen, rcap;
    sim_event *nodes; /* the ring's events, linked per bucket through next[] */
    uint32_t *next;
    uint32_t free_node; /* a list of free nodes through next[] */
    uint32_t ahead;     /* the next node of the next bucket to fetch (sim_queue_fetch_ahead) */
    size_t nodes_used, nodes_cap;
    uint32_t *bucket;   /* per slot: its last node pushed, or none */
    uint64_t *nonempty; /* one bit per slot */
    size_t ring_len;    /* events in the ring */
    int64_t span;       /* buckets a refill may take at most (queue.c: refill) */
    /* beyond the horizon */
    sim_event *heap;
    size_t len, cap;
    size_t cap_max; /* events in the queue at once, all structures together */
    size_t total_len;
    size_t peak;
    union { /* every event pushed takes the next sequence number: one counter for both */
        uint64_t seq;
        uint64_t pushed;
    };
    uint64_t
        cancelled; /* removed by sim_queue_compact_lane or sim_queue_outside_cancel, unpopped */
    sim_fifo lanes[SIM_LANES_MAX]; /* of sim_event */
    unsigned lanes_used;           /* lanes [0, lanes_used) have been pushed to */
    fb_time_us lanes_t;            /* the earliest time at a lane's head; FB_TIME_MAX: none */
    int lanes_first; /* ...that head's lane: < SIM_LANES_MAX, or SIM_LANES_MAX + an outside lane;
                        -1: none */
    sim_event outside[SIM_OUTSIDE_MAX]; /* outside lane k's head, when bit k of has_outside */
    uint32_t has_outside;
} sim_queue;

int sim_queue_init(sim_queue *q, size_t cap_max);
/* The same, with buckets as wide as the expected arrivals a second make best (0: unknown). */
int sim_queue_init_rate(sim_queue *q, size_t cap_max, double arrivals_per_s);
void sim_queue_free(sim_queue *q);
/* Schedule at time t. FB_ECAP when the queue holds cap_max events. */
int sim_queue_push_any(sim_queue *q, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen,
                       uint32_t arg);

/*
 * sim_queue_push_any, with the common case inline: a bucket of the ring, a
 * free node for it, and room in the run to drain the ring (ring_push in
 * queue.c, the same steps).
 */
static inline int sim_queue_push(sim_queue *q, fb_time_us t, uint32_t kind, uint32_t id,
                                 uint32_t gen, uint32_t arg) {
    uint32_t n = q->free_node;
    if (t < q->ring_from_t || t >= q->ring_to_t || n == UINT32_MAX || q->total_len >= q->cap_max ||
        q->ring_len + (q->rlen - q->rpos) >= q->rcap)
        return sim_queue_push_any(q, t, kind, id, gen, arg);
    size_t slot = (size_t)(t >> q->shift) & q->mask;
    q->free_node = q->next[n];
    q->nodes[n] = (sim_event){t, q->seq, id, gen, kind, arg};
    q->next[n] = q->bucket[slot];
    q->bucket[slot] = n;
    q->nonempty[slot / 64] |= UINT64_C(1) << (slot % 64);
    q->ring_len++;
    q->seq++;
    if (++q->total_len > q->peak) q->peak = q->total_len;
    return FB_OK;
}
/* Schedule on a FIFO lane; t must not be earlier than the lane's last event. */
int sim_queue_push_lane_any(sim_queue *q, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id,
                            uint32_t gen, uint32_t arg);

/*
 * sim_queue_push_lane_any, with the common case inline: a lane already in
 * use, not empty, with room for one more event.
 */
static inline int sim_queue_push_lane(sim_queue *q, unsigned lane, fb_time_us t, uint32_t kind,
                                      uint32_t id, uint32_t gen, uint32_t arg) {
    if (lane < SIM_LANES_MAX && lane < q->lanes_used) {
        sim_fifo *l = &q->lanes[lane];
        sim_event *v = (sim_event *)(void *)l->v;
        if (l->len > 0 && l->len < l->cap && q->total_len < q->cap_max &&
            t >= v[sim_fifo_slot(l, l->len - 1)].t) {
            v[sim_fifo_slot(l, l->len)] = (sim_event){t, q->seq, id, gen, kind, arg};
            l->len++;
            if (t < q->lanes_t) { /* (a lane's head is at or before t) */
                q->lanes_t = t;
                q->lanes_first = (int)lane;
            }
            q->seq++;
            if (++q->total_len > q->peak) q->peak = q->total_len;
            return FB_OK;
        }
    }
    return sim_queue_push_lane_any(q, lane, t, kind, id, gen, arg);
}
/*
 * The outside lanes (up to SIM_OUTSIDE_MAX). An event of one is numbered when
 * the caller schedules it: sim_queue_outside_push gives its sequence number and
 * counts it as pushed and held (FB_ECAP when the queue holds cap_max events).
 * The caller tells the queue a lane's head whenever that changes (NULL: the
 * lane is empty); the head pops like any event, and the caller then names the
 * lane's next head. An event the caller drops unpopped is counted cancelled
 * (sim_queue_outside_cancel).
 */
static inline int sim_queue_outside_push(sim_queue *q, uint64_t *seq) {
    if (q->total_len >= q->cap_max) return FB_ECAP;
    *seq = q->seq++;
    if (++q->total_len > q->peak) q->peak = q->total_len;
    return FB_OK;
}
void sim_queue_outside_head(sim_queue *q, unsigned lane, const sim_event *head);
/*
 * An outside lane that holds one event at a time (a traffic class's next
 * arrival), empty now: the event numbered and made its head at once. FB_ECAP
 * when the queue holds cap_max events; FB_EINVAL when the lane has a head.
 */
static inline int sim_queue_push_outside(sim_queue *q, unsigned lane, fb_time_us t, uint32_t kind,
                                         uint32_t id, uint32_t gen, uint32_t arg) {
    if (lane >= SIM_OUTSIDE_MAX || (q->has_outside >> lane & 1) != 0) return FB_EINVAL;
    if (q->total_len >= q->cap_max) return FB_ECAP;
    sim_event *head = &q->outside[lane];
    *head = (sim_event){t, q->seq, id, gen, kind, arg};
    q->has_outside |= UINT32_C(1) << lane;
    q->seq++;
    if (++q->total_len > q->peak) q->peak = q->total_len;
    if (t < q->lanes_t) { /* (a head at lanes_t was numbered before it) */
        q->lanes_t = t;
        q->lanes_first = SIM_LANES_MAX + (int)lane;
    }
    return FB_OK;
}
static inline void sim_queue_outside_cancel(sim_queue *q) {
    q->total_len--;
    q->cancelled++;
}
/* Remove the earliest event; false when empty. */
bool sim_queue_pop_any(sim_queue *q, sim_event *out);

/* Find the earliest of the lanes' heads again (lanes_t, lanes_first), after one left. */
void sim_queue_lanes_changed(sim_queue *q);

/*
 * sim_queue_pop_any, with the common cases inline: the run's head is strictly
 * the earliest, or an outside lane's head (a next arrival) is strictly before
 * the run's.
 */
static inline bool sim_queue_pop(sim_queue *q, sim_event *out) {
    if (q->rpos < q->rlen) {
        const sim_event *e = &q->run[q->rpos];
        if (e->t < q->lanes_t && (q->len == 0 || e->t < q->heap[0].t)) {
            *out = *e;
            if (++q->rpos == q->rlen) q->rpos = q->rlen = 0;
            q->total_len--;
            return true;
        }
        int k = q->lanes_first - SIM_LANES_MAX;
        if (k >= 0 && q->lanes_t < e->t && (q->len == 0 || q->lanes_t < q->heap[0].t)) {
            *out = q->outside[k];
            q->has_outside &= ~(UINT32_C(1) << k);
            q->total_len--;
            sim_queue_lanes_changed(q);
            return true;
        }
    }
    return sim_queue_pop_any(q, out);
}
/* Copy the earliest event without removing it; false when empty. */
bool sim_queue_peek(sim_queue *q, sim_event *out);
size_t sim_queue_len(const sim_queue *q);
/* The k-th event after the run's head (0: the head), or NULL: a hint of what comes soon (a
 * lane or the heap may come first). */
static inline const sim_event *sim_queue_upcoming(const sim_queue *q, size_t k) {
    return q->rpos + k < q->rlen ? &q->run[q->rpos + k] : NULL;
}
/*
 * One node further along the list of the bucket the next refill drains
 * first, fetched into the cache: a caller that handles the run's events one
 * by one walks that list as it goes, without waiting on its links (each
 * link's line was fetched the step before). A large calendar's nodes were
 * pushed long ago and are scattered: the refill would wait on each in turn.
 * A hint: once the bucket is drained, the walk may go on through free nodes.
 */
static inline void sim_queue_fetch_ahead(sim_queue *q) {
    uint32_t n = q->ahead;
    if (n == UINT32_MAX) return;
    __builtin_prefetch(&q->nodes[n]);
    n = q->next[n];
    if (n != UINT32_MAX) __builtin_prefetch(&q->next[n]);
    q->ahead = n;
}
/* Events on one lane. */
static inline size_t sim_queue_lane_len(const sim_queue *q, unsigned lane) {
    return lane < SIM_LANES_MAX ? q->lanes[lane].len : 0;
}
/* After a compaction removed `gone` events of a lane: the counts and the lanes' head time. */
void sim_queue_lane_compacted(sim_queue *q, size_t gone);
/*
 * Drop the events of a lane for which keep() says false, keeping the others
 * in their order; returns how many went (counted in `cancelled`). O(lane
 * length): call it when most of the lane is known to be stale. Inline, so
 * that a caller's keep() is inlined into the loop.
 */
static inline size_t sim_queue_compact_lane(sim_queue *q, unsigned lane,
                                            bool (*keep)(void *ctx, const sim_event *ev),
                                            void *ctx) {
    if (lane >= SIM_LANES_MAX) return 0;
    sim_fifo *f = &q->lanes[lane];
    sim_event *v = (sim_event *)(void *)f->v;
    size_t kept = 0;
    for (size_t i = 0; i < f->len; i++) {
        const sim_event *ev = &v[sim_fifo_slot(f, i)];
        /* kept <= i: an event moves towards the head, never over one not yet read */
        if (keep(ctx, ev)) v[sim_fifo_slot(f, kept++)] = *ev;
    }
    size_t gone = f->len - kept;
    f->len = kept;
    sim_queue_lane_compacted(q, gone);
    return gone;
}

#endif /* SIM_QUEUE_H */
