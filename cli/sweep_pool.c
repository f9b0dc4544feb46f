/*
 * sweep_pool.c - the worker processes of 'fusebox sweep': util/pool.h's pool,
 * each result a task's status, its message and its metric values, filed under
 * the task's number (so the outputs do not depend on the number of workers or
 * on timing).
 */
#include "cli/sweep_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "util/pool.h"

void cli_sweep_catch_signals(void) {
    cli_catch_stop_signals(false); /* poll returns at once with EINTR */
    /* a dead worker's task pipe gives EPIPE, not a dead parent */
    signal(SIGPIPE, SIG_IGN);
}

typedef struct record {
    uint64_t task; /* also in the pool's header; here it makes the values after it aligned */
    int32_t status;
    char msg[SWEEP_MSG_MAX];
} record;

typedef struct run {
    sweep *sw;
    size_t size; /* a record and its metric values */
    void (*done)(void *ctx);
    void *ctx;
} run;

/* A worker dies of SIGINT and SIGTERM (the parent sends SIGTERM to stop the sweep). */
static void worker_start(void *ctx) {
    (void)ctx;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
}

static bool work(void *ctx, uint64_t task, char **data, size_t *len) {
    const run *r = ctx;
    char *buf = calloc(1, r->size);
    if (buf == NULL) exit(3);
    record rec;
    memset(&rec, 0, sizeof rec);
    rec.task = task;
    rec.status = sweep_run_task(r->sw, task, (double *)(buf + sizeof rec), rec.msg, sizeof rec.msg);
    memcpy(buf, &rec, sizeof rec);
    *data = buf;
    *len = r->size;
    return true;
}

static void result(void *ctx, uint64_t task, const char *data, size_t len) {
    const run *r = ctx;
    if (len != r->size) return; /* not a worker's record: the task stays without a result */
    record rec;
    memcpy(&rec, data, sizeof rec);
    rec.msg[sizeof rec.msg - 1] = '\0';
    sweep_set_result(r->sw, task, rec.status, (const double *)(data + sizeof rec), rec.msg);
    if (r->done) r->done(r->ctx);
}

int cli_sweep_pool_run(sweep *sw, const uint64_t *tasks, size_t ntasks, size_t jobs,
                       void (*done)(void *ctx), void *ctx) {
    run r = {sw, sizeof(record) + sweep_metric_count(sw) * sizeof(double), done, ctx};
    util_pool_job job = {worker_start, work, result, &r, &cli_stop_signal};
    char msg[200];
    if (jobs > CLI_SWEEP_JOBS_MAX) jobs = CLI_SWEEP_JOBS_MAX;
    return util_pool_run(&job, tasks, ntasks, jobs, msg, sizeof msg) == 0
               ? CLI_OK
               : cli_bad("sweep", "%s", msg);
}
