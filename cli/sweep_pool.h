/*
 * sweep_pool.h - a sweep's worker processes: tasks handed out as the workers
 * free up (two ahead each), results filed under their task number; and
 * the SIGINT/SIGTERM flag that stops a sweep between tasks.
 */
#ifndef CLI_SWEEP_POOL_H
#define CLI_SWEEP_POOL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "sweep/sweep.h"

#define CLI_SWEEP_JOBS_MAX 256

/* From now on SIGINT and SIGTERM only set cli_stop_signal (cli/common.h); SIGPIPE is ignored. */
void cli_sweep_catch_signals(void);

/*
 * Run tasks[0..ntasks) in `jobs` worker processes and record each result in
 * sw. `done(ctx)` is called after each recorded result. When cli_stop_signal
 * is set the workers are stopped and the results they had sent are kept.
 * Returns CLI_OK, or CLI_BAD_INPUT after printing why (a worker failed).
 */
int cli_sweep_pool_run(sweep *sw, const uint64_t *tasks, size_t ntasks, size_t jobs,
                       void (*done)(void *ctx), void *ctx);

#endif
