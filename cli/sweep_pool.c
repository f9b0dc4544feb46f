/*
 * sweep_pool.c - the worker processes of 'fusebox sweep'.
 *
 * Each worker has two pipes: task numbers in, fixed-size result records out.
 * The parent hands each worker two tasks, and one more whenever a result
 * arrives, so a worker slowed down by the machine takes fewer tasks instead
 * of holding up the end. Two, not one: the next task already waits in the
 * pipe when a worker finishes, so it never sleeps until the parent is
 * scheduled (on a loaded machine that wait cost about 7% of a sweep); the
 * price is at most one run of imbalance at the end. Results are filed under
 * their task number, so the outputs do not depend on the number of workers
 * or on timing.
 */
#include "cli/sweep_pool.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"

void cli_sweep_catch_signals(void) {
    cli_catch_stop_signals(false); /* poll returns at once with EINTR */
    /* a dead worker's task pipe gives EPIPE, not a dead parent */
    signal(SIGPIPE, SIG_IGN);
}

#define POOL_DEPTH 2 /* tasks handed to a worker ahead of its results */

typedef struct record {
    uint64_t task;
    int32_t status;
    char msg[SWEEP_MSG_MAX];
} record;

typedef struct pool {
    sweep *sw;
    const uint64_t *tasks;
    size_t ntasks, next; /* tasks[next] is the next one to hand out */
    size_t started, open;
    bool stopping;
    pid_t pid[CLI_SWEEP_JOBS_MAX];
    int to[CLI_SWEEP_JOBS_MAX];             /* task numbers to worker w; -1 once closed */
    struct pollfd from[CLI_SWEEP_JOBS_MAX]; /* its results; fd -1 once at its end */
    size_t size;                            /* a record and its metric values */
    void (*done)(void *ctx);
    void *ctx;
} pool;

static int write_full(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 1: a whole record; 0: end of file before any byte; -1: error or a torn record. */
static int read_full(int fd, void *buf, size_t len) {
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) return got == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

_Noreturn static void worker(const sweep *sw, int in, int out) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (cli_stop_signal) _exit(3); /* the signal came between fork and here */
    size_t size = sizeof(record) + sweep_metric_count(sw) * sizeof(double);
    char *buf = malloc(size);
    if (buf == NULL) _exit(3);
    uint64_t task;
    int r;
    while ((r = read_full(in, &task, sizeof task)) == 1) {
        record rec;
        memset(&rec, 0, sizeof rec);
        rec.task = task;
        rec.status =
            sweep_run_task(sw, task, (double *)(buf + sizeof rec), rec.msg, sizeof rec.msg);
        memcpy(buf, &rec, sizeof rec);
        if (write_full(out, buf, size) != 0) _exit(3);
    }
    free(buf);
    /* exit, not _exit: stdio was flushed before the fork, and LeakSanitizer checks workers too */
    exit(r == 0 ? 0 : 3);
}

/* Worker w's next task, or the end of its input when there is none (or the sweep stops). */
static void hand_out(pool *p, size_t w) {
    if (p->to[w] < 0) return;
    if (p->next < p->ntasks && !p->stopping &&
        write_full(p->to[w], &p->tasks[p->next], sizeof p->tasks[p->next]) == 0) {
        p->next++;
        return;
    }
    close(p->to[w]);
    p->to[w] = -1;
}

static int start(pool *p, size_t jobs) {
    for (size_t w = 0; w < jobs; w++) {
        int in[2], out[2];
        if (pipe(in) != 0) return cli_bad("sweep", "pipe: %s", strerror(errno));
        if (pipe(out) != 0) {
            close(in[0]);
            close(in[1]);
            return cli_bad("sweep", "pipe: %s", strerror(errno));
        }
        p->pid[w] = fork();
        if (p->pid[w] < 0) {
            int e = errno;
            close(in[0]), close(in[1]), close(out[0]), close(out[1]);
            return cli_bad("sweep", "fork: %s", strerror(e));
        }
        if (p->pid[w] == 0) {
            /* the earlier workers' pipes: a copy here would keep their input open */
            for (size_t k = 0; k < w; k++) {
                if (p->to[k] >= 0) close(p->to[k]);
                if (p->from[k].fd >= 0) close(p->from[k].fd);
            }
            close(in[1]);
            close(out[0]);
            worker(p->sw, in[0], out[1]);
        }
        close(in[0]);
        close(out[1]);
        p->to[w] = in[1];
        p->from[w].fd = out[0];
        p->from[w].events = POLLIN;
        p->started++;
        p->open++;
    }
    return CLI_OK;
}

static void stop(pool *p) {
    p->stopping = true;
    for (size_t w = 0; w < p->started; w++) {
        kill(p->pid[w], SIGTERM);
        hand_out(p, w);
    }
}

/* One record from worker w: filed, and the worker gets its next task. */
static void receive(pool *p, size_t w, char *buf) {
    if (read_full(p->from[w].fd, buf, p->size) <= 0) {
        close(p->from[w].fd);
        p->from[w].fd = -1;
        p->open--;
        if (p->to[w] >= 0) close(p->to[w]);
        p->to[w] = -1;
        return;
    }
    record rec;
    memcpy(&rec, buf, sizeof rec);
    rec.msg[sizeof rec.msg - 1] = '\0';
    sweep_set_result(p->sw, rec.task, rec.status, (const double *)(buf + sizeof rec), rec.msg);
    if (p->done) p->done(p->ctx);
    hand_out(p, w);
}

static int collect(pool *p) {
    char *buf = malloc(p->size);
    if (buf == NULL) return cli_bad("sweep", "out of memory");
    int status = CLI_OK;
    while (p->open > 0) {
        if (cli_stop_signal && !p->stopping) stop(p);
        /* the timeout bounds how late a signal that came just before poll is seen */
        int n = poll(p->from, (nfds_t)p->started, 200);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            status = cli_bad("sweep", "poll: %s", strerror(errno));
            stop(p);
            break;
        }
        for (size_t w = 0; w < p->started; w++)
            if (p->from[w].fd >= 0 && p->from[w].revents != 0) receive(p, w, buf);
    }
    free(buf);
    return status;
}

static int reap(pool *p, int status) {
    for (size_t w = 0; w < p->started; w++) {
        if (p->to[w] >= 0) close(p->to[w]);
        if (p->from[w].fd >= 0) close(p->from[w].fd);
        int ws = 0;
        while (waitpid(p->pid[w], &ws, 0) < 0 && errno == EINTR) continue;
        if (status != CLI_OK || p->stopping || (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) continue;
        if (WIFSIGNALED(ws))
            status = cli_bad("sweep", "worker %zu was killed by signal %d", w, WTERMSIG(ws));
        else
            status = cli_bad("sweep", "worker %zu exited with status %d", w, WEXITSTATUS(ws));
    }
    return status;
}

int cli_sweep_pool_run(sweep *sw, const uint64_t *tasks, size_t ntasks, size_t jobs,
                       void (*done)(void *ctx), void *ctx) {
    if (ntasks == 0 || cli_stop_signal) return CLI_OK;
    if (jobs > ntasks) jobs = ntasks;
    if (jobs > CLI_SWEEP_JOBS_MAX) jobs = CLI_SWEEP_JOBS_MAX;
    pool *p = calloc(1, sizeof *p);
    if (p == NULL) return cli_bad("sweep", "out of memory");
    p->sw = sw;
    p->tasks = tasks;
    p->ntasks = ntasks;
    p->size = sizeof(record) + sweep_metric_count(sw) * sizeof(double);
    p->done = done;
    p->ctx = ctx;
    for (size_t w = 0; w < jobs; w++) p->to[w] = p->from[w].fd = -1;
    fflush(stdout);
    fflush(stderr);
    int status = start(p, jobs);
    if (status != CLI_OK) stop(p);
    for (int k = 0; k < POOL_DEPTH; k++)
        for (size_t w = 0; w < p->started && !p->stopping; w++) hand_out(p, w);
    int cs = collect(p);
    status = reap(p, status != CLI_OK ? status : cs);
    free(p);
    return status;
}
