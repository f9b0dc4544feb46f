/*
 * queue.h - the simulator's event queue.
 *
 * Events are ordered by (time, sequence number): ties resolve in the order
 * the events were scheduled, so every run with the same inputs pops the same
 * sequence. Storage is one array per structure, grown geometrically up to a
 * cap fixed at init, so the steady state allocates nothing; pushing past the
 * cap fails with FB_ECAP.
 *
 * Two structures share the sequence counter:
 *   a 4-ary min-heap for arbitrary times, and
 *   FIFO lanes for timers whose delay is the same for every event of the
 *   lane (request deadlines, shared-store propagation): pushes arrive in time
 *   order, so a ring buffer keeps them sorted for O(1) push and pop.
 * sim_queue_pop() returns the earliest of the heap top and the lane heads.
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

typedef struct sim_event {
    fb_time_us t;
    uint64_t seq;
    uint32_t id;   /* entity index */
    uint32_t gen;  /* entity generation when scheduled */
    uint32_t kind; /* what happens */
    uint32_t arg;  /* a small payload */
} sim_event;

typedef struct sim_queue {
    sim_event *heap;
    size_t len, cap;
    size_t cap_max; /* events in the queue at once, heap and lanes together */
    size_t total_len;
    size_t peak;
    uint64_t seq;
    uint64_t pushed;
    sim_fifo lanes[SIM_LANES_MAX]; /* of sim_event */
} sim_queue;

int sim_queue_init(sim_queue *q, size_t cap_max);
void sim_queue_free(sim_queue *q);
/* Schedule at time t. FB_ECAP when the queue holds cap_max events. */
int sim_queue_push(sim_queue *q, fb_time_us t, uint32_t kind, uint32_t id, uint32_t gen,
                   uint32_t arg);
/* Schedule on a FIFO lane; t must not be earlier than the lane's last event. */
int sim_queue_push_lane(sim_queue *q, unsigned lane, fb_time_us t, uint32_t kind, uint32_t id,
                        uint32_t gen, uint32_t arg);
/* Remove the earliest event; false when empty. */
bool sim_queue_pop(sim_queue *q, sim_event *out);
/* Copy the earliest event without removing it; false when empty. */
bool sim_queue_peek(const sim_queue *q, sim_event *out);
size_t sim_queue_len(const sim_queue *q);

#endif /* SIM_QUEUE_H */
