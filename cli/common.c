/* common.c - helpers shared by the subcommands. */
#include "cli/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "reports/report.h"

bool cli_opt(int argc, char **argv, int *i, const char *shortname, const char *longname,
             const char **value) {
    const char *a = argv[*i];
    size_t ll = longname ? strlen(longname) : 0;
    if (longname && strncmp(a, longname, ll) == 0 && a[ll] == '=') {
        *value = a + ll + 1;
        return true;
    }
    if ((shortname && strcmp(a, shortname) == 0) || (longname && strcmp(a, longname) == 0)) {
        *value = *i + 1 < argc ? argv[++*i] : NULL;
        return true;
    }
    return false;
}

int cli_bad(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "fusebox %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_BAD_INPUT;
}

int cli_missing(const char *cmd, const char *opt) {
    return cli_bad(cmd, "option %s needs a value", opt);
}

int cli_scenario_error(const sim_error *err) {
    char msg[1100];
    sim_error_format(err, msg, sizeof msg);
    fprintf(stderr, "fusebox: %s\n", msg);
    return CLI_BAD_INPUT;
}

int cli_parse_u64(const char *s, uint64_t *out) {
    char *end;
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') return -1;
    *out = v;
    return 0;
}

int cli_mkdirs(const char *dir) {
    char buf[1024];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, dir, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}

FILE *cli_fopen(const char *dir, const char *name) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "fusebox: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static void writer_row(void *ctx, const sim_row *row) {
    cli_writer *w = ctx;
    rep_csv_row(w->csv, w->sc, w->variant, row);
}

static void writer_event(void *ctx, const sim_log_event *ev) {
    cli_writer *w = ctx;
    rep_event_line(w->events, w->sc, w->variant, ev);
}

static void writer_progress(void *ctx, fb_time_us now, fb_time_us end) {
    cli_writer *w = ctx;
    if (!w->progress) return;
    double pct = end > 0 ? 100.0 * (double)now / (double)end : 100;
    if (pct > 100) pct = 100;
    fprintf(stderr, "\r  %s: %5.1f%% of %.0fs", w->variant, pct, (double)end / 1e6);
    fflush(stderr);
}

sim_run_opts cli_writer_opts(cli_writer *w) {
    sim_run_opts o = {writer_row, writer_event, writer_progress, w, 0, false};
    return o;
}
