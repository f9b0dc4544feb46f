/* pool.c - see pool.h. */
#include "util/pool.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL_DEPTH 2 /* tasks handed to a worker ahead of its results */

typedef struct header {
    uint64_t task;
    uint64_t len; /* the bytes that follow */
} header;

typedef struct pool {
    const util_pool_job *job;
    const uint64_t *tasks;
    size_t ntasks, next; /* tasks[next] is the next one to hand out */
    size_t started, open;
    bool stopping;
    pid_t *pid;
    int *to;             /* task numbers to worker w; -1 once closed */
    struct pollfd *from; /* its results; fd -1 once at its end */
    char *msg;
    size_t msglen;
} pool;

/* send, not write: a dead reader is an error here (EPIPE), not a SIGPIPE for the process */
static int write_full(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 1: all len bytes; 0: end of file before any byte; -1: error or a torn record. */
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

_Noreturn static void worker(const util_pool_job *job, int in, int out) {
    if (job->start) job->start(job->ctx);
    if (job->stop && *job->stop) _exit(3); /* the signal came between fork and here */
    uint64_t task;
    int r;
    while ((r = read_full(in, &task, sizeof task)) == 1) {
        char *data = NULL;
        size_t len = 0;
        if (!job->work(job->ctx, task, &data, &len)) {
            free(data);
            break;
        }
        header h = {task, len};
        int w = write_full(out, &h, sizeof h) == 0 && write_full(out, data, len) == 0 ? 0 : -1;
        free(data);
        if (w != 0) _exit(3);
    }
    /* exit, not _exit: stdio was flushed before the fork, and LeakSanitizer checks workers too */
    exit(r >= 0 ? 0 : 3);
}

/* Worker w's next task, or the end of its input when there is none (or the pool stops). */
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

static int fail(pool *p, int rc, const char *what, int err) {
    snprintf(p->msg, p->msglen, "%s: %s", what, strerror(err));
    return rc;
}

static int start(pool *p, size_t jobs) {
    for (size_t w = 0; w < jobs; w++) {
        int in[2], out[2]; /* [0] is read, [1] written, as pipes (sockets for MSG_NOSIGNAL) */
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, in) != 0) return fail(p, -1, "socketpair", errno);
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, out) != 0) {
            int e = errno;
            close(in[0]);
            close(in[1]);
            return fail(p, -1, "socketpair", e);
        }
        p->pid[w] = fork();
        if (p->pid[w] < 0) {
            int e = errno;
            close(in[0]), close(in[1]), close(out[0]), close(out[1]);
            return fail(p, -1, "fork", e);
        }
        if (p->pid[w] == 0) {
            /* the earlier workers' pipes: a copy here would keep their input open */
            for (size_t k = 0; k < w; k++) {
                if (p->to[k] >= 0) close(p->to[k]);
                if (p->from[k].fd >= 0) close(p->from[k].fd);
            }
            close(in[1]);
            close(out[0]);
            worker(p->job, in[0], out[1]);
        }
        close(in[0]);
        close(out[1]);
        p->to[w] = in[1];
        p->from[w].fd = out[0];
        p->from[w].events = POLLIN;
        p->started++;
        p->open++;
    }
    return 0;
}

static void stop(pool *p) {
    p->stopping = true;
    for (size_t w = 0; w < p->started; w++) {
        kill(p->pid[w], SIGTERM);
        hand_out(p, w);
    }
}

static void end_of(pool *p, size_t w) {
    close(p->from[w].fd);
    p->from[w].fd = -1;
    p->open--;
    if (p->to[w] >= 0) close(p->to[w]);
    p->to[w] = -1;
}

/* One result from worker w: to the caller, and the worker gets its next task. */
static int receive(pool *p, size_t w) {
    header h;
    if (read_full(p->from[w].fd, &h, sizeof h) <= 0 || h.len > UTIL_POOL_RESULT_MAX) {
        end_of(p, w);
        return 0;
    }
    char *data = malloc(h.len + 1);
    if (data == NULL) return fail(p, -1, "result", ENOMEM);
    if (h.len > 0 && read_full(p->from[w].fd, data, h.len) != 1) {
        free(data);
        end_of(p, w);
        return 0;
    }
    data[h.len] = '\0';
    p->job->result(p->job->ctx, h.task, data, h.len);
    free(data);
    hand_out(p, w);
    return 0;
}

static int collect(pool *p) {
    while (p->open > 0) {
        if (p->job->stop && *p->job->stop && !p->stopping) stop(p);
        /* the timeout bounds how late a signal that came just before poll is seen */
        int n = poll(p->from, (nfds_t)p->started, 200);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int rc = fail(p, -1, "poll", errno);
            stop(p);
            return rc;
        }
        for (size_t w = 0; w < p->started; w++)
            if (p->from[w].fd >= 0 && p->from[w].revents != 0 && receive(p, w) != 0) {
                stop(p);
                return -1;
            }
    }
    return 0;
}

static int reap(pool *p, int status) {
    for (size_t w = 0; w < p->started; w++) {
        if (p->to[w] >= 0) close(p->to[w]);
        if (p->from[w].fd >= 0) close(p->from[w].fd);
        int ws = 0;
        while (waitpid(p->pid[w], &ws, 0) < 0 && errno == EINTR) continue;
        if (status != 0 || p->stopping || (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) continue;
        status = 1;
        if (WIFSIGNALED(ws))
            snprintf(p->msg, p->msglen, "worker %zu was killed by signal %d", w, WTERMSIG(ws));
        else
            snprintf(p->msg, p->msglen, "worker %zu exited with status %d", w, WEXITSTATUS(ws));
    }
    return status;
}

int util_pool_run(const util_pool_job *job, const uint64_t *tasks, size_t ntasks, size_t jobs,
                  char *msg, size_t msglen) {
    if (msglen > 0) msg[0] = '\0';
    if (ntasks == 0 || (job->stop && *job->stop)) return 0;
    if (jobs > ntasks) jobs = ntasks;
    if (jobs > UTIL_POOL_JOBS_MAX) jobs = UTIL_POOL_JOBS_MAX;
    pool p = {.job = job, .tasks = tasks, .ntasks = ntasks, .msg = msg, .msglen = msglen};
    p.pid = calloc(jobs, sizeof *p.pid);
    p.to = calloc(jobs, sizeof *p.to);
    p.from = calloc(jobs, sizeof *p.from);
    int status = 0;
    if (p.pid == NULL || p.to == NULL || p.from == NULL) {
        status = fail(&p, -1, "pool", ENOMEM);
        jobs = 0;
    }
    for (size_t w = 0; w < jobs; w++) p.to[w] = p.from[w].fd = -1;
    fflush(NULL); /* what stdio holds is written once, not by every worker too */
    if (status == 0) status = start(&p, jobs);
    if (status != 0) stop(&p);
    for (int k = 0; k < POOL_DEPTH; k++)
        for (size_t w = 0; w < p.started && !p.stopping; w++) hand_out(&p, w);
    int cs = collect(&p);
    status = reap(&p, status != 0 ? status : cs);
    free(p.pid);
    free(p.to);
    free(p.from);
    return status;
}
