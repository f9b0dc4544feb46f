/*
 * sched.h - resume suspended libmicrohttpd connections when their time comes.
 *
 * Delays never block a thread: a handler suspends its connection and asks
 * the scheduler to resume it at a monotonic deadline. One thread sleeps on a
 * condition variable until the earliest deadline, then resumes every due
 * connection (or makes a timed call). The heap is sized at creation.
 */
#ifndef MOCK_SCHED_H
#define MOCK_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "core/fb.h"

typedef struct mock_sched mock_sched;

/* Real monotonic time in microseconds. */
fb_time_us mock_now_us(void);

int mock_sched_create(size_t capacity, mock_sched **out);
/*
 * Suspend `conn` (the caller is inside its access handler or content
 * reader) and resume it at due_us. Returns false, without suspending, when
 * the scheduler is stopping or full; the caller then ends the connection.
 */
bool mock_sched_suspend(mock_sched *s, struct MHD_Connection *conn, fb_time_us due_us);
/*
 * Call fn(arg) on the timer thread at due_us, outside the scheduler's lock (fn may take other
 * locks and suspend or resume connections). False when stopping or full. Calls still pending
 * at shutdown are dropped, so arg must not own memory.
 */
bool mock_sched_call(mock_sched *s, fb_time_us due_us, void (*fn)(void *), void *arg);
/* Resume a suspended connection now instead of at its time; false if it is not waiting. */
bool mock_sched_wake(mock_sched *s, struct MHD_Connection *conn);
/* Resume everything now and refuse further suspensions (for shutdown). */
void mock_sched_stop(mock_sched *s);
/* Connections currently waiting in the heap. */
size_t mock_sched_pending(mock_sched *s);
void mock_sched_destroy(mock_sched *s);

#endif /* MOCK_SCHED_H */
