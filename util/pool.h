/*
 * pool.h - worker processes for independent tasks (`fusebox sweep`'s runs,
 * `fusebox check --jobs`'s scenarios).
 *
 * Each worker has two channels (Unix stream sockets, written with
 * MSG_NOSIGNAL: a worker that dies is an error, never a SIGPIPE): task
 * numbers in, results out (a task number, a length, the bytes). The parent hands each worker two
 * tasks, and one more whenever a result arrives, so a worker slowed down by the machine takes fewer
 * tasks instead of holding up the end. Two, not one: the next task already waits in the pipe when a
 * worker finishes, so it never sleeps until the parent is scheduled (on a loaded machine that wait
 * cost about 7% of a sweep); the price is at most one task of imbalance at the end. The caller
 * files each result under its task number, so what it writes does not depend on the number of
 * workers or on timing.
 */
#ifndef UTIL_POOL_H
#define UTIL_POOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTIL_POOL_JOBS_MAX 256
#define UTIL_POOL_RESULT_MAX (64u << 20) /* a larger result is a worker's failure */

typedef struct util_pool_job {
    /* In a worker, first (e.g. the signals' dispositions). May be NULL. */
    void (*start)(void *ctx);
    /* In a worker: task's result as *len bytes at *data (malloc'd; the pool frees it). false: no
     * result, and the worker ends (a stop signal came during the task). */
    bool (*work)(void *ctx, uint64_t task, char **data, size_t *len);
    /* In the parent: a task's result, as the worker sent it. */
    void (*result)(void *ctx, uint64_t task, const char *data, size_t len);
    void *ctx;
    /* Set (by a signal handler): no more tasks are handed out, the workers get SIGTERM, and the
     * results they had sent are kept. */
    volatile sig_atomic_t *stop;
} util_pool_job;

/*
 * tasks[0..ntasks) in `jobs` worker processes (at most ntasks and UTIL_POOL_JOBS_MAX); stdio is
 * flushed before the workers are forked. 0; -1 when the pool could not run (pipe, fork, poll,
 * memory); 1 when a worker ended otherwise than by a stop (its tasks then lack results). The
 * reason is in msg.
 */
int util_pool_run(const util_pool_job *job, const uint64_t *tasks, size_t ntasks, size_t jobs,
                  char *msg, size_t msglen);

#endif /* UTIL_POOL_H */
