/* queue.c - 4-ary heap plus FIFO lanes; see queue.h. */
#include "sim/queue.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_CAP 1024

static inline bool before(const sim_event *a, const sim_event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int sim_queue_init(sim_queue *q, size_t cap_max) {
    memset(q, 0, sizeof *q);
    if (cap_max < 16) return FB_EINVAL;
    q->cap_max = cap_max;
    q->cap = INITIAL_CAP < cap_max ? INITIAL_CAP : cap_max;
    q->heap = malloc(q->cap * sizeof *q->heap);
    for (unsigned i = 0; i < SIM_LANES_MAX; i++)
        sim_fifo_init(&q->lanes[i], sizeof(sim_event), cap_max);
    return q->heap ? FB_OK : FB_ENOMEM;
}

void sim_queue_free(sim_queue *q) {
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
    *buf = p;
    *cap = ncap;
    return FB_OK;
}

int sim_queue_push(sim_queue *q, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen,
                   uint32_t arg) {
    if (q->total_len >= q->cap_max) return FB_ECAP;
    if (q->len == q->cap) {
        int rc = grow((void **)&q->heap, &q->cap, sizeof *q->heap, q->cap_max);
        if (rc != FB_OK) return rc;
    }
    sim_event ev = {t, q->seq++, id, gen, kind, arg};
    size_t i = q->len++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&ev, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = ev;
    q->pushed++;
    if (++q->total_len > q->peak) q->peak = q->total_len;
    return FB_OK;
}

int sim_queue_push_lane(sim_queue *q, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id,
                        uint32_t gen, uint32_t arg) {
    if (lane >= SIM_LANES_MAX) return FB_EINVAL;
    if (q->total_len >= q->cap_max) return FB_ECAP;
    sim_fifo *l = &q->lanes[lane];
    const sim_event *last = sim_fifo_tail(l);
    if (last != NULL && t < last->t) return FB_EINVAL;
    sim_event ev = {t, q->seq, id, gen, kind, arg};
    int rc = sim_fifo_push(l, &ev);
    if (rc != FB_OK) return rc;
    q->seq++;
    q->pushed++;
    if (++q->total_len > q->peak) q->peak = q->total_len;
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

/* The earliest event and where it is: -1 = the heap, else a lane; NULL when empty. */
static const sim_event *earliest(const sim_queue *q, int *from) {
    const sim_event *best = q->len ? &q->heap[0] : NULL;
    *from = -1;
    for (unsigned i = 0; i < SIM_LANES_MAX; i++) {
        const sim_event *head = sim_fifo_head(&q->lanes[i]);
        if (head == NULL) continue;
        if (best == NULL || before(head, best)) {
            best = head;
            *from = (int)i;
        }
    }
    return best;
}

bool sim_queue_peek(const sim_queue *q, sim_event *out) {
    int from;
    const sim_event *best = earliest(q, &from);
    if (best == NULL) return false;
    *out = *best;
    return true;
}

bool sim_queue_pop(sim_queue *q, sim_event *out) {
    int from;
    if (earliest(q, &from) == NULL) return false;
    if (from < 0) {
        heap_pop(q, out);
    } else {
        sim_fifo_pop(&q->lanes[from], out);
    }
    q->total_len--;
    return true;
}

size_t sim_queue_len(const sim_queue *q) {
    return q->total_len;
}
