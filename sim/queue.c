/* queue.c - a calendar of buckets, a 4-ary heap beyond it, FIFO lanes; see queue.h. */
#include "sim/queue.h"

#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_CAP 1024
#define NIL UINT32_MAX
#define SLOTS (q->mask + 1)
#define MASK (q->mask)
#define WORDS (SLOTS / 64)
/* 16, measured (callgrind): fewer instructions than 8, 12, 20 or 32 for the flagship's tuned
 * variant and V6, and than 8 for its retry storm */
#define RUN_MIN 16      /* a refill takes buckets until the run holds this many events, */
#define SPAN_MIN 32     /* or until they span the queue's span of buckets: 8 ms... */
#define SPAN_MAX 1024   /* ...to 262 ms */
#define AHEAD_FROM 4096 /* nodes: 128 KiB, with their links */
#define FROM_RUN (-1)
#define FROM_HEAP (-2)

static inline bool before(const sim_event *a, const sim_event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static inline int64_t bucket_of(const sim_queue *q, fb_time_us t) {
    return t >> q->shift;
}

/* cur moved: the times of the ring's buckets, for sim_queue_push (none past the last bucket
 * that time can name: a push there takes sim_queue_push_any's way). */
static void ring_moved(sim_queue *q) {
    q->ring_from_t = q->cur < INT64_MAX >> q->shift ? (q->cur + 1) << q->shift : INT64_MAX;
    q->ring_to_t = q->cur < (INT64_MAX >> q->shift) - (int64_t)SLOTS
                       ? (q->cur + (int64_t)SLOTS) << q->shift
                       : INT64_MAX;
}

int sim_queue_init(sim_queue *q, size_t cap_max) {
    return sim_queue_init_rate(q, cap_max, 0);
}

/* SIM_CAL_SHIFT at 500 arrivals a second or more (or none known); one more for each halving of
 * the rate below, up to SIM_CAL_SHIFT + 4 (4 ms at V6's 50 a second: 5% less CPU time, 1.5%
 * fewer instructions than 256 us, farm-bench and callgrind). */
static unsigned shift_for(double arrivals_per_s) {
    unsigned shift = SIM_CAL_SHIFT;
    for (double r = 500; shift < SIM_CAL_SHIFT + 4 && arrivals_per_s > 0 && arrivals_per_s < r;
         r /= 2)
        shift++;
    return shift;
}

int sim_queue_init_rate(sim_queue *q, size_t cap_max, double arrivals_per_s) {
    memset(q, 0, sizeof *q);
    if (cap_max < 16) return FB_EINVAL;
    q->shift = shift_for(arrivals_per_s);
    q->mask = ((size_t)SIM_CAL_BUCKETS >> (q->shift - SIM_CAL_SHIFT)) - 1; /* the same horizon */
    ring_moved(q);
    q->cap_max = cap_max;
    q->free_node = NIL;
    q->ahead = NIL;
    q->lanes_t = FB_TIME_MAX;
    q->lanes_first = -1;
    q->span = SPAN_MIN;
    for (unsigned i = 0; i < SIM_LANES_MAX; i++)
        sim_fifo_init(&q->lanes[i], sizeof(sim_event), cap_max);
    q->bucket = malloc(SLOTS * sizeof *q->bucket);
    q->nonempty = calloc(WORDS, sizeof *q->nonempty);
    if (q->bucket == NULL || q->nonempty == NULL) return FB_ENOMEM;
    memset(q->bucket, 0xff, SLOTS * sizeof *q->bucket); /* every slot NIL */
    return FB_OK;
}

void sim_queue_free(sim_queue *q) {
    free(q->run);
    free(q->nodes);
    free(q->next);
    free(q->bucket);
    free(q->nonempty);
    free(q->heap);
    for (unsigned i = 0; i < SIM_LANES_MAX; i++) sim_fifo_free(&q->lanes[i]);
    memset(q, 0, sizeof *q);
}

static int grow(void **buf, size_t *cap, size_t elem, size_t cap_max) {
    size_t ncap = *cap ? *cap * 2 : INITIAL_CAP;
    if (ncap > cap_max) ncap = cap_max;
    if (ncap <= *cap) return FB_ECAP;
    void *p = realloc(*buf, ncap * elem);
    if (p == NULL) return FB_ENOMEM;
    util_mem_huge(p, ncap * elem); /* the nodes are read at random */
    *buf = p;
    *cap = ncap;
    return FB_OK;
}

/* ---- the heap beyond the horizon ---- */

static int heap_push(sim_queue *q, const sim_event *ev) {
    if (q->len == q->cap) {
        int rc = grow((void **)&q->heap, &q->cap, sizeof *q->heap, q->cap_max);
        if (rc != FB_OK) return rc;
    }
    size_t i = q->len++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(ev, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = *ev;
    return FB_OK;
}

static void heap_pop(sim_queue *q, sim_event *out) {
    *out = q->heap[0];
    sim_event last = q->heap[--q->len];
    size_t i = 0, n = q->len;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n) break;
        size_t best = c;
        size_t end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (before(&q->heap[k], &q->heap[best])) best = k;
        if (!before(&q->heap[best], &last)) break;
        q->heap[i] = q->heap[best];
        i = best;
    }
    if (n > 0) q->heap[i] = last;
}

/* ---- the calendar: the run and the ring ---- */

/* Place ev in the run at its position; it was pushed last, so it follows its equals in time. */
static int run_insert(sim_queue *q, const sim_event *ev) {
    if (q->rlen == q->rcap) {
        if (q->rpos > 0) {
            memmove(q->run, q->run + q->rpos, (q->rlen - q->rpos) * sizeof *q->run);
            q->rlen -= q->rpos;
            q->rpos = 0;
        } else {
            int rc = grow((void **)&q->run, &q->rcap, sizeof *q->run, q->cap_max);
            if (rc != FB_OK) return rc;
        }
    }
    size_t i = q->rlen;
    while (i > q->rpos && q->run[i - 1].t > ev->t) {
        q->run[i] = q->run[i - 1];
        i--;
    }
    q->run[i] = *ev;
    q->rlen++;
    return FB_OK;
}

static int node_alloc(sim_queue *q, uint32_t *out) {
    if (q->free_node != NIL) {
        *out = q->free_node;
        q->free_node = q->next[*out];
        return FB_OK;
    }
    if (q->nodes_used == q->nodes_cap) {
        size_t ncap = q->nodes_cap, xcap = q->nodes_cap;
        int rc = grow((void **)&q->nodes, &ncap, sizeof *q->nodes, q->cap_max);
        if (rc == FB_OK) rc = grow((void **)&q->next, &xcap, sizeof *q->next, q->cap_max);
        if (rc != FB_OK) return rc;
        q->nodes_cap = ncap;
    }
    *out = (uint32_t)q->nodes_used++;
    return FB_OK;
}

/* Add ev to bucket b of the ring (cur < b < cur + SLOTS). */
static int ring_push(sim_queue *q, int64_t b, const sim_event *ev) {
    /* the run can always take the whole ring: draining never fails (a refill drains only into
     * an emptied run, so the entries already popped, before rpos, do not count) */
    if (q->ring_len + (q->rlen - q->rpos) >= q->rcap) {
        int rc = grow((void **)&q->run, &q->rcap, sizeof *q->run, q->cap_max);
        if (rc != FB_OK) return rc;
    }
    uint32_t n;
    int rc = node_alloc(q, &n);
    if (rc != FB_OK) return rc;
    size_t slot = (size_t)b & MASK;
    q->nodes[n] = *ev;
    q->next[n] = q->bucket[slot];
    q->bucket[slot] = n;
    q->nonempty[slot / 64] |= UINT64_C(1) << (slot % 64);
    q->ring_len++;
    return FB_OK;
}

/* The first bucket after cur that holds events (the ring is not empty). */
static int64_t next_bucket(const sim_queue *q) {
    size_t from = ((size_t)q->cur + 1) & MASK;
    size_t w = from / 64;
    uint64_t word = q->nonempty[w] & (~UINT64_C(0) << (from % 64));
    /* WORDS + 1 words: the last look is the first word again, for the slots before `from` */
    for (size_t k = 0; k <= WORDS; k++) {
        if (word != 0) {
            size_t slot = w * 64 + (size_t)__builtin_ctzll(word);
            return q->cur + 1 + (int64_t)((slot - from) & MASK);
        }
        w = (w + 1) % WORDS;
        word = q->nonempty[w];
    }
    return q->cur + 1; /* not reached */
}

static void sort_run(sim_event *v, size_t n);

/* Move bucket cur from the ring to the end of the run, sorted: its events follow the run's. Its
 * bit in nonempty is the caller's to clear. */
static void drain(sim_queue *q) {
    size_t slot = (size_t)q->cur & MASK, first = q->rlen;
    uint32_t only = q->bucket[slot];
    q->bucket[slot] = NIL;
    if (q->next[only] == NIL) { /* one event: nothing to sort (a sparse calendar's common case) */
        q->run[q->rlen++] = q->nodes[only];
        q->next[only] = q->free_node;
        q->free_node = only;
        q->ring_len--;
        return;
    }
    for (uint32_t n = only; n != NIL;) {
        uint32_t after = q->next[n];
        q->run[q->rlen++] = q->nodes[n];
        q->next[n] = q->free_node;
        q->free_node = n;
        n = after;
    }
    q->ring_len -= q->rlen - first;
    sort_run(q->run + first, q->rlen - first);
}

/* Events of the heap that are now within the horizon go to the run or the ring. */
static void migrate(sim_queue *q) {
    while (q->len > 0 && bucket_of(q, q->heap[0].t) - q->cur < (int64_t)SLOTS) {
        sim_event ev;
        heap_pop(q, &ev);
        int64_t b = bucket_of(q, ev.t);
        int rc = b <= q->cur ? run_insert(q, &ev) : ring_push(q, b, &ev);
        if (rc != FB_OK) {
            /* no memory: it stays in the heap, which pop compares too */
            heap_push(q, &ev);
            return;
        }
    }
}

static int cmp_events(const void *a, const void *b) {
    return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* (time, sequence) keys are unique, so any correct sort gives the same order. Not inlined:
 * inlined into drain(), GCC's insertion sort cost the retry storm 60 M instructions more
 * (0.8%, callgrind). */
__attribute__((noinline)) static void sort_run(sim_event *v, size_t n) {
    if (n > 32) {
        qsort(v, n, sizeof *v, cmp_events);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        sim_event x = v[i];
        size_t j = i;
        while (j > 0 && before(&x, &v[j - 1])) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/*
 * The run is empty: bring the next events of the ring (or, when it is empty,
 * of the heap) into it, unless a lane's head `lane` comes first. Sparse
 * buckets are taken several at once, up to RUN_MIN events within `span`
 * buckets (a push before the last one taken goes into the run by insertion).
 * The span adapts: doubled when it ends a refill short of RUN_MIN events,
 * halved when a quarter of it held them. Not inlined: most pops need no
 * refill, and earliest() stays small without it.
 */
__attribute__((noinline)) static void refill(sim_queue *q, const sim_event *lane) {
    q->rpos = q->rlen = 0;
    if (q->ring_len > 0) {
        int64_t b = next_bucket(q), first = b, end = b + q->span;
        if (lane != NULL && (b << q->shift) > lane->t) {
            q->cur = b - 1; /* nothing before b: the lanes' heads before it pop without a refill */
            ring_moved(q);
            return;
        }
        /* word by word of nonempty: the buckets of a word drained, then its bits cleared at once */
        bool full = false;
        for (int64_t x = b; x < end && !full;) {
            uint64_t *word = &q->nonempty[((size_t)x & MASK) / 64];
            int64_t base = x - (x & 63); /* the bucket of the word's bit 0 */
            uint64_t bits = *word & (~UINT64_C(0) << (x & 63)), taken = 0;
            if (end - base < 64) bits &= (UINT64_C(1) << (end - base)) - 1;
            while (bits != 0) {
                int i = __builtin_ctzll(bits);
                q->cur = base + i;
                drain(q);
                taken |= UINT64_C(1) << i;
                bits &= bits - 1;
                if (q->rlen >= RUN_MIN || q->ring_len == 0) {
                    full = true;
                    break;
                }
            }
            *word &= ~taken;
            x = base + 64;
        }
        if (!full) {
            if (q->span < SPAN_MAX) q->span *= 2;
        } else if (q->rlen >= RUN_MIN && (q->cur - first) * 4 < q->span && q->span > SPAN_MIN) {
            q->span /= 2;
        }
        ring_moved(q);
        migrate(q);
        q->ahead = NIL; /* the bucket the next refill takes first: sim_queue_fetch_ahead's walk */
        if (q->nodes_used >= AHEAD_FROM && q->ring_len > 0) {
            uint32_t n = q->bucket[(size_t)next_bucket(q) & MASK];
            __builtin_prefetch(&q->next[n]);
            q->ahead = n;
        }
    } else if (q->len > 0) {
        if (lane != NULL && before(lane, &q->heap[0])) return;
        q->cur = bucket_of(q, q->heap[0].t);
        ring_moved(q);
        migrate(q);
    }
}

/* ---- push and pop ---- */

static void count_push(sim_queue *q) {
    q->seq++;
    if (++q->total_len > q->peak) q->peak = q->total_len;
}

int sim_queue_push_any(sim_queue *q, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen,
                       uint32_t arg) {
    if (q->total_len >= q->cap_max) return FB_ECAP;
    sim_event ev = {t, q->seq, id, gen, kind, arg};
    int64_t b = bucket_of(q, t);
    int rc;
    if (b <= q->cur)
        rc = run_insert(q, &ev);
    else if (b - q->cur < (int64_t)SLOTS)
        rc = ring_push(q, b, &ev);
    else
        rc = heap_push(q, &ev);
    if (rc != FB_OK) return rc;
    count_push(q);
    return FB_OK;
}

/* A lane's push, typed for sim_event: a struct copy, not a memcpy of a size held in a variable. */
static int lane_push(sim_fifo *l, const sim_event *ev) {
    if (l->len == l->cap) {
        int rc = sim_fifo_grow(l);
        if (rc != FB_OK) return rc;
    }
    ((sim_event *)(void *)l->v)[sim_fifo_slot(l, l->len)] = *ev;
    l->len++;
    return FB_OK;
}

int sim_queue_push_lane_any(sim_queue *q, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id,
                            uint32_t gen, uint32_t arg) {
    if (lane >= SIM_LANES_MAX) return FB_EINVAL;
    if (q->total_len >= q->cap_max) return FB_ECAP;
    sim_fifo *l = &q->lanes[lane];
    if (l->len > 0 && t < ((const sim_event *)(void *)l->v)[sim_fifo_slot(l, l->len - 1)].t)
        return FB_EINVAL; /* earlier than the lane's last event */
    sim_event ev = {t, q->seq, id, gen, kind, arg};
    int rc = lane_push(l, &ev);
    if (rc != FB_OK) return rc;
    if (lane >= q->lanes_used) q->lanes_used = lane + 1;
    if (t < q->lanes_t) { /* then it is the lane's head: the lane was empty */
        q->lanes_t = t;
        q->lanes_first = (int)lane;
    }
    count_push(q);
    return FB_OK;
}

/* Lane k's head: a FIFO lane's (k < SIM_LANES_MAX) or an outside lane's; NULL when empty. */
static const sim_event *lane_head(const sim_queue *q, int k) {
    if (k >= SIM_LANES_MAX) return &q->outside[k - SIM_LANES_MAX];
    return sim_fifo_head(&q->lanes[k]);
}

void sim_queue_lanes_changed(sim_queue *q) {
    const sim_event *best = NULL;
    int first = -1;
    uint32_t m = q->has_outside;
    if (m != 0) { /* the first head taken as the best before the loop: no test for none */
        first = SIM_LANES_MAX + __builtin_ctz(m);
        best = &q->outside[first - SIM_LANES_MAX];
        for (m &= m - 1; m != 0; m &= m - 1) {
            int k = __builtin_ctz(m);
            if (before(&q->outside[k], best)) {
                best = &q->outside[k];
                first = SIM_LANES_MAX + k;
            }
        }
    }
    for (unsigned i = 0; i < q->lanes_used; i++) {
        const sim_event *head = sim_fifo_head(&q->lanes[i]);
        if (head != NULL && (best == NULL || before(head, best))) {
            best = head;
            first = (int)i;
        }
    }
    q->lanes_first = first;
    q->lanes_t = best ? best->t : FB_TIME_MAX;
}

void sim_queue_outside_head(sim_queue *q, unsigned lane, const sim_event *head) {
    if (lane >= SIM_OUTSIDE_MAX) return;
    int k = SIM_LANES_MAX + (int)lane;
    bool was_first = q->lanes_first == k;
    if (head == NULL) {
        q->has_outside &= ~(UINT32_C(1) << lane);
    } else {
        q->has_outside |= UINT32_C(1) << lane;
        q->outside[lane] = *head;
    }
    if (was_first) {
        sim_queue_lanes_changed(q); /* the earliest moved: another lane's head may come first */
    } else if (head != NULL && (q->lanes_first < 0 || before(head, lane_head(q, q->lanes_first)))) {
        q->lanes_first = k;
        q->lanes_t = head->t;
    }
}

/*
 * The earliest event and where it is (a lane, FROM_RUN or FROM_HEAP); NULL
 * when empty. The run is refilled only when the ring may hold an event
 * before the lanes' first head.
 */
static const sim_event *earliest(sim_queue *q, int *from) {
    *from = q->lanes_first;
    const sim_event *best = q->lanes_first < 0 ? NULL : lane_head(q, q->lanes_first);
    if (q->rpos == q->rlen &&
        (best == NULL || best->t >= q->ring_from_t || (q->len > 0 && q->ring_len == 0)))
        refill(q, best);
    if (q->rpos < q->rlen && (best == NULL || before(&q->run[q->rpos], best))) {
        best = &q->run[q->rpos];
        *from = FROM_RUN;
    }
    if (q->len > 0 && (best == NULL || before(&q->heap[0], best))) {
        best = &q->heap[0];
        *from = FROM_HEAP;
    }
    return best;
}

bool sim_queue_peek(sim_queue *q, sim_event *out) {
    int from;
    const sim_event *best = earliest(q, &from);
    if (best == NULL) return false;
    *out = *best;
    return true;
}

/* Outside lane k's head out; the caller names the lane's next head. */
static void pop_outside(sim_queue *q, int k, sim_event *out) {
    *out = q->outside[k];
    q->has_outside &= ~(UINT32_C(1) << k);
    sim_queue_lanes_changed(q);
    q->total_len--;
}

bool sim_queue_pop_any(sim_queue *q, sim_event *out) {
    int from;
    if (earliest(q, &from) == NULL) return false;
    if (from >= SIM_LANES_MAX) {
        pop_outside(q, from - SIM_LANES_MAX, out);
        return true;
    }
    if (from == FROM_RUN) {
        *out = q->run[q->rpos++];
        if (q->rpos == q->rlen) q->rpos = q->rlen = 0;
    } else if (from == FROM_HEAP) {
        heap_pop(q, out);
    } else {
        sim_fifo *l = &q->lanes[from]; /* not empty: its head was the earliest */
        *out = ((const sim_event *)(void *)l->v)[l->head];
        l->head = sim_fifo_slot(l, 1);
        l->len--;
        sim_queue_lanes_changed(q);
    }
    q->total_len--;
    return true;
}

size_t sim_queue_len(const sim_queue *q) {
    return q->total_len;
}

void sim_queue_lane_compacted(sim_queue *q, size_t gone) {
    q->total_len -= gone;
    q->cancelled += gone;
    sim_queue_lanes_changed(q);
}
