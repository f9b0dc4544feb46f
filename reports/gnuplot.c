/* gnuplot.c - running gnuplot and quoting for it; see gnuplot.h. */
#include "reports/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

int rep_gnuplot_run(const char *gnuplot, const char *dir, const char *script, char *msg,
                    size_t msglen) {
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(msg, msglen, "pipe: %s", strerror(errno));
        return FB_EIO;
    }
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
    char err[512];
    size_t used = 0;
    for (;;) {
        char buf[512];
        ssize_t r = read(fds[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        size_t take = (size_t)r < sizeof err - 1 - used ? (size_t)r : sizeof err - 1 - used;
        memcpy(err + used, buf, take);
        used += take;
    }
    err[used] = '\0';
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(msg, msglen, "waitpid: %s", strerror(errno));
            return FB_EIO;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return FB_OK;
    /* gnuplot's message is short and mostly on its last lines; keep them on one line */
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
        snprintf(msg, msglen, "cannot run %s in %s", gnuplot, dir);
    else
        snprintf(msg, msglen, "gnuplot failed on %s/%s: %s", dir, script,
                 used ? err : "(no message)");
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
