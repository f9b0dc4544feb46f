/*
 * fifo.h - the simulator's one first-in first-out container.
 *
 * A ring buffer of fixed-size items that grows geometrically up to a cap
 * fixed at init: pod queues, provider queues, the shared store's messages
 * in flight and the event queue's lanes all use it. Pushing past the cap
 * fails with FB_ECAP (or FB_ENOMEM), never silently. Items leave from the
 * head (sim_fifo_pop), or from the tail for a last-in first-out queue.
 */
#ifndef SIM_FIFO_H
#define SIM_FIFO_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "core/fb.h"

typedef struct sim_fifo {
    char *v;
    size_t elem;           /* bytes per item */
    size_t head, len, cap; /* cap: items allocated */
    size_t cap_max;        /* items at most */
} sim_fifo;

void sim_fifo_init(sim_fifo *f, size_t elem, size_t cap_max);
void sim_fifo_free(sim_fifo *f);
/* Make room for one more item: FB_OK, FB_ECAP at cap_max, or FB_ENOMEM. */
int sim_fifo_grow(sim_fifo *f);

static inline size_t sim_fifo_slot(const sim_fifo *f, size_t i) {
    size_t k = f->head + i;
    return k >= f->cap ? k - f->cap : k;
}

static inline int sim_fifo_push(sim_fifo *f, const void *item) {
    if (f->len == f->cap) {
        int rc = sim_fifo_grow(f);
        if (rc != FB_OK) return rc;
    }
    memcpy(f->v + sim_fifo_slot(f, f->len) * f->elem, item, f->elem);
    f->len++;
    return FB_OK;
}

/* The oldest item, or NULL when empty. */
static inline void *sim_fifo_head(const sim_fifo *f) {
    return f->len ? f->v + f->head * f->elem : NULL;
}

/* The newest item, or NULL when empty. */
static inline void *sim_fifo_tail(const sim_fifo *f) {
    return f->len ? f->v + sim_fifo_slot(f, f->len - 1) * f->elem : NULL;
}

static inline bool sim_fifo_pop(sim_fifo *f, void *out) {
    if (f->len == 0) return false;
    memcpy(out, f->v + f->head * f->elem, f->elem);
    f->head = sim_fifo_slot(f, 1);
    f->len--;
    return true;
}

/* The newest item out (last in, first out: a provider's LIFO queue); false when empty. */
static inline bool sim_fifo_pop_tail(sim_fifo *f, void *out) {
    if (f->len == 0) return false;
    memcpy(out, sim_fifo_tail(f), f->elem);
    f->len--;
    return true;
}

#endif /* SIM_FIFO_H */
