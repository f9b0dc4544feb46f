/* fifo.c - growing the ring; see fifo.h. */
#include "sim/fifo.h"

#include <stdlib.h>

#define FIRST_CAP 64

void sim_fifo_init(sim_fifo *f, size_t elem, size_t cap_max) {
    memset(f, 0, sizeof *f);
    f->elem = elem;
    f->cap_max = cap_max;
}

void sim_fifo_free(sim_fifo *f) {
    free(f->v);
    f->v = NULL;
    f->head = f->len = f->cap = 0;
}

int sim_fifo_grow(sim_fifo *f) {
    size_t ncap = f->cap ? f->cap * 2 : FIRST_CAP;
    if (ncap > f->cap_max) ncap = f->cap_max;
    if (ncap <= f->cap) return FB_ECAP;
    char *v = realloc(f->v, ncap * f->elem);
    if (v == NULL) return FB_ENOMEM;
    if (f->head + f->len > f->cap) {
        /* wrapped: the items from the head to the old end move to the new end (the new room
         * may be smaller than the wrapped prefix when the cap is not a doubling) */
        size_t tail = f->cap - f->head;
        memmove(v + (ncap - tail) * f->elem, v + f->head * f->elem, tail * f->elem);
        f->head = ncap - tail;
    }
    f->v = v;
    f->cap = ncap;
    return FB_OK;
}
