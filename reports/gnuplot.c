/* gnuplot.c - running gnuplot and quoting for it; see gnuplot.h. */
#include "reports/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fb.h"

int rep_gnuplot_find(char *buf, size_t len) {
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0') path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t dlen = end ? (size_t)(end - path) : strlen(path);
        if (dlen > 0) {
            int w = snprintf(buf, len, "%.*s/gnuplot", (int)dlen, path);
            if (w > 0 && (size_t)w < len && access(buf, X_OK) == 0) return FB_OK;
        }
        path += dlen + (end ? 1 : 0);
    }
    snprintf(buf, len,
             "gnuplot is not installed (not found on PATH); install the Debian package "
             "gnuplot-nox (`make deps` does), or run with --no-charts");
    return FB_ENOTFOUND;
}

/* One gnuplot at work: its stderr, read as it comes (a full pipe would stall it). */
typedef struct gp_child {
    pid_t pid;
    int fd;        /* the read end of its stderr; -1 once read to its end */
    size_t script; /* its place in the list */
    size_t used;
    char err[512];
} gp_child;

/* Start `gnuplot -d SCRIPT` in DIR, its stderr into a pipe. FB_OK, or FB_EIO with the reason. */
static int gp_start(gp_child *c, const char *gnuplot, const char *dir, const char *script,
                    char *msg, size_t msglen) {
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(msg, msglen, "pipe: %s", strerror(errno));
        return FB_EIO;
    }
    /* closed at exec: a later gnuplot does not hold the earlier ones' pipes (its stderr is a
       dup2, which does not inherit the flag) */
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        snprintf(msg, msglen, "fork: %s", strerror(errno));
        return FB_EIO;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || chdir(dir) != 0) _exit(126);
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        /* -d: no ~/.gnuplot or system init file, so the output depends on the script only */
        char *const argv[] = {"gnuplot", "-d", (char *)script, NULL};
        execv(gnuplot, argv);
        _exit(127);
    }
    close(fds[1]);
    c->pid = pid;
    c->fd = fds[0];
    c->used = 0;
    return FB_OK;
}

/* Read what child c wrote; at its end, close the pipe. */
static void gp_read(gp_child *c) {
    char buf[512];
    ssize_t r = read(c->fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) return;
    if (r <= 0) {
        close(c->fd);
        c->fd = -1;
        return;
    }
    size_t room = sizeof c->err - 1 - c->used;
    size_t take = (size_t)r < room ? (size_t)r : room;
    memcpy(c->err + c->used, buf, take);
    c->used += take;
}

/* Wait for child c (its pipe read to its end): FB_OK, or FB_EIO with its message in msg. */
static int gp_finish(gp_child *c, const char *gnuplot, const char *dir, const char *script,
                     char *msg, size_t msglen) {
    int status;
    while (waitpid(c->pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(msg, msglen, "waitpid: %s", strerror(errno));
            return FB_EIO;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return FB_OK;
    /* gnuplot's message is short and mostly on its last lines; keep them on one line */
    c->err[c->used] = '\0';
    for (char *p = c->err; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
        snprintf(msg, msglen, "cannot run %s in %s", gnuplot, dir);
    else
        snprintf(msg, msglen, "gnuplot failed on %s/%s: %s", dir, script,
                 c->used ? c->err : "(no message)");
    return FB_EIO;
}

int rep_gnuplot_run_all(const char *gnuplot, const char *dir, const char *const *scripts, size_t n,
                        unsigned jobs, char *msg, size_t msglen) {
    if (jobs == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (jobs > REP_GNUPLOT_JOBS_MAX) jobs = REP_GNUPLOT_JOBS_MAX;
    gp_child kids[REP_GNUPLOT_JOBS_MAX];
    struct pollfd pfd[REP_GNUPLOT_JOBS_MAX];
    size_t next = 0, running = 0;
    size_t failed = n; /* the first script (in the list's order) that failed, n: none */
    char failed_msg[1024] = "";
    while (running > 0 || (next < n && failed == n)) {
        /* no new one after a failure: every script before it has started, so the failure
           reported is the first in the list's order, however the children were timed */
        while (running < jobs && next < n && failed == n) {
            gp_child *c = &kids[running];
            char why[256];
            if (gp_start(c, gnuplot, dir, scripts[next], why, sizeof why) != FB_OK) {
                failed = next;
                snprintf(failed_msg, sizeof failed_msg, "%s", why);
                break;
            }
            c->script = next++;
            running++;
        }
        if (running == 0) break;
        for (size_t k = 0; k < running; k++) {
            pfd[k].fd = kids[k].fd;
            pfd[k].events = POLLIN;
            pfd[k].revents = 0;
        }
        if (poll(pfd, (nfds_t)running, -1) < 0 && errno != EINTR) {
            /* cannot wait on the pipes: read each to its end in turn */
            for (size_t k = 0; k < running; k++) pfd[k].revents = POLLIN;
        }
        for (size_t k = 0; k < running;) {
            gp_child *c = &kids[k];
            if (pfd[k].revents != 0) gp_read(c);
            if (c->fd >= 0) {
                k++;
                continue;
            }
            char why[1024];
            if (gp_finish(c, gnuplot, dir, scripts[c->script], why, sizeof why) != FB_OK &&
                c->script < failed) {
                failed = c->script;
                snprintf(failed_msg, sizeof failed_msg, "%s", why);
            }
            /* the last child takes its place (and its poll entry, already read or not) */
            kids[k] = kids[running - 1];
            pfd[k] = pfd[running - 1];
            running--;
        }
    }
    if (failed == n) return FB_OK;
    snprintf(msg, msglen, "%s", failed_msg);
    return FB_EIO;
}

int rep_gnuplot_run(const char *gnuplot, const char *dir, const char *script, char *msg,
                    size_t msglen) {
    return rep_gnuplot_run_all(gnuplot, dir, &script, 1, 1, msg, msglen);
}

/* Does the drawing at `path` end as a whole PNG (its IEND chunk) or SVG ("</svg>") does? */
static bool drawing_whole(const char *path, bool svg) {
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    unsigned char tail[16];
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    size_t got = 0;
    if (fseek(f, -(long)sizeof tail, SEEK_END) == 0) got = fread(tail, 1, sizeof tail, f);
    fclose(f);
    if (got < sizeof iend) return false;
    if (!svg) return memcmp(tail + got - sizeof iend, iend, sizeof iend) == 0;
    size_t end = got;
    while (end > 0 && (tail[end - 1] == '\n' || tail[end - 1] == ' ')) end--;
    return end >= 6 && memcmp(tail + end - 6, "</svg>", 6) == 0;
}

/* Why a drawing is incomplete, as the system would have said had gnuplot reported it: a disk
   with (almost) no room left, or a file at the size limit (ulimit -f); else unknown. */
static const char *why_incomplete(const char *path) {
    struct statvfs fs;
    if (statvfs(path, &fs) == 0 && (double)fs.f_bavail * (double)fs.f_frsize < 65536)
        return strerror(ENOSPC);
    struct rlimit lim;
    struct stat st;
    if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        stat(path, &st) == 0 && (rlim_t)st.st_size >= lim.rlim_cur)
        return strerror(EFBIG);
    return "the reason is not known (gnuplot does not report a failed write)";
}

int rep_gnuplot_check_drawing(const char *path, char *msg, size_t msglen) {
    size_t n = strlen(path);
    bool svg = n >= 4 && strcmp(path + n - 4, ".svg") == 0;
    if (drawing_whole(path, svg)) return FB_OK;
    snprintf(msg, msglen, "cannot write %s: %s (gnuplot left it incomplete)", path,
             why_incomplete(path));
    return FB_EIO;
}

void rep_gnuplot_quote(FILE *f, const char *s) {
    fputc('\'', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'')
            fputs("''", f);
        else
            fputc(*p < 0x20 ? ' ' : *p, f);
    }
    fputc('\'', f);
}

void rep_gnuplot_datum(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}
