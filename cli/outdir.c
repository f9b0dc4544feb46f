/* outdir.c - an output folder replaced whole, through a staging folder; checked closes. */
#include "cli/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/common.h"
#include "reports/charts.h"
#include "reports/report.h"
#include "util/file.h"

/* The files of a run in its folder, besides charts/ (live.json and compare.*: `fusebox live`). */
static const char *const top_files[] = {"report.json", "timeseries.csv", "events.jsonl",
                                        "report.html", "live.json",      "compare.md",
                                        "compare.json"};

static void join(char *buf, size_t len, const char *dir, const char *name) {
    snprintf(buf, len, "%s/%s", dir, name);
}

/* A name in charts/ that fusebox writes: a chart's NAME.gp/.png/.svg and its NAME.dat (compare.dat,
   classes.dat), data_*.dat. */
static bool own_chart_file(const char *name) {
    size_t len = strlen(name);
    if (strcmp(name, "compare.dat") == 0) return true;
    if (strncmp(name, "data_", 5) == 0 && len > 9 && strcmp(name + len - 4, ".dat") == 0)
        return true;
    size_t count;
    const rep_chart_info *infos = rep_chart_list(&count);
    for (size_t k = 0; k < count; k++) {
        size_t n = strlen(infos[k].name);
        if (strncmp(name, infos[k].name, n) != 0) continue;
        const char *ext = name + n;
        if (strcmp(ext, ".gp") == 0 || strcmp(ext, ".png") == 0 || strcmp(ext, ".svg") == 0 ||
            strcmp(ext, ".dat") == 0)
            return true;
    }
    return false;
}

/*
 * Remove fusebox's own files from dir/charts (then the folder, when that
 * leaves it empty) and, when `data`, its top-level files; with `stage` every
 * file there is fusebox's. Returns 0, or -1 with errno set by the first failure.
 */
static int remove_own(const char *dir, bool data, bool stage) {
    char path[1300], cdir[1200];
    int rc = 0;
    join(cdir, sizeof cdir, dir, "charts");
    DIR *d = opendir(cdir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || !(stage || own_chart_file(e->d_name))) continue;
            join(path, sizeof path, cdir, e->d_name);
            if (unlink(path) != 0 && errno != ENOENT) rc = -1;
        }
        closedir(d);
        if (rmdir(cdir) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST) rc = -1;
    }
    for (size_t i = 0; i < sizeof top_files / sizeof top_files[0]; i++) {
        if (!data && strcmp(top_files[i], "report.html") != 0) continue;
        join(path, sizeof path, dir, top_files[i]);
        if (unlink(path) != 0 && errno != ENOENT) rc = -1;
    }
    return rc;
}

/* What dir holds of an earlier run, in words ("" when none of fusebox's files). */
static void describe_earlier(const char *dir, char *buf, size_t len) {
    char path[1200], head[4096];
    buf[0] = '\0';
    bool any = false;
    for (size_t i = 0; i < sizeof top_files / sizeof top_files[0] && !any; i++) {
        struct stat st;
        join(path, sizeof path, dir, top_files[i]);
        any = stat(path, &st) == 0;
    }
    if (!any) return;
    snprintf(buf, len, "an earlier run's files");
    /* "scenario" is among report.json's first members (reports/report.c) */
    join(path, sizeof path, dir, "report.json");
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    const char *key = "\"scenario\": \"", *p = strstr(head, key);
    if (p == NULL) return;
    p += strlen(key);
    const char *q = strchr(p, '"');
    if (q != NULL && q - p < 100) snprintf(buf, len, "an earlier run of %.*s", (int)(q - p), p);
}

int cli_outdir_begin(cli_outdir *o, const char *cmd, const char *dir) {
    memset(o, 0, sizeof *o);
    snprintf(o->dir, sizeof o->dir, "%s", dir);
    join(o->stage, sizeof o->stage, dir, CLI_STAGE_NAME);
    if (cli_mkdirs(dir) != 0) {
        fprintf(stderr, "fusebox %s: cannot create %s: %s\n", cmd, dir, strerror(errno));
        return -1;
    }
    /* a run killed before its commit leaves its staging folder: none of it is a result */
    remove_own(o->stage, true, true);
    rmdir(o->stage);
    if (mkdir(o->stage, 0777) != 0) {
        fprintf(stderr, "fusebox %s: cannot create %s: %s\n", cmd, o->stage, strerror(errno));
        return -1;
    }
    return 0;
}

void cli_outdir_path(const cli_outdir *o, const char *name, char *buf, size_t len) {
    join(buf, len, o->stage, name);
}

/* Rename stage/NAME to dir/NAME when it was staged. */
static int move_in(const cli_outdir *o, const char *name, const char *cmd) {
    char from[1300], to[1300];
    join(from, sizeof from, o->stage, name);
    join(to, sizeof to, o->dir, name);
    if (rename(from, to) == 0 || errno == ENOENT) return 0;
    fprintf(stderr, "fusebox %s: cannot move %s to %s: %s\n", cmd, from, to, strerror(errno));
    return -1;
}

static int move_charts(const cli_outdir *o, const char *cmd) {
    char from[1200], to[1200];
    join(from, sizeof from, o->stage, "charts");
    DIR *d = opendir(from);
    if (d == NULL) return 0;
    join(to, sizeof to, o->dir, "charts");
    int rc = 0;
    if (mkdir(to, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "fusebox %s: cannot create %s: %s\n", cmd, to, strerror(errno));
        rc = -1;
    }
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char name[300];
        snprintf(name, sizeof name, "charts/%s", e->d_name);
        rc = move_in(o, name, cmd);
    }
    closedir(d);
    rmdir(from);
    return rc;
}

int cli_outdir_commit(cli_outdir *o, const char *cmd) {
    describe_earlier(o->dir, o->replaced, sizeof o->replaced);
    if (remove_own(o->dir, true, false) != 0) {
        fprintf(stderr, "fusebox %s: cannot remove the earlier run's files in %s: %s\n", cmd,
                o->dir, strerror(errno));
        return -1;
    }
    /* report.json last: a folder with one is whole */
    int rc = move_charts(o, cmd);
    for (size_t i = 0; i < sizeof top_files / sizeof top_files[0] && rc == 0; i++)
        if (strcmp(top_files[i], "report.json") != 0) rc = move_in(o, top_files[i], cmd);
    if (rc == 0) rc = move_in(o, "report.json", cmd);
    if (rc == 0 && rmdir(o->stage) != 0) {
        fprintf(stderr, "fusebox %s: cannot remove %s: %s\n", cmd, o->stage, strerror(errno));
        rc = -1;
    }
    return rc;
}

void cli_outdir_discard(cli_outdir *o) {
    remove_own(o->stage, true, true);
    rmdir(o->stage);
}

void cli_outdir_drop_charts(cli_outdir *o) {
    remove_own(o->stage, false, true);
}

FILE *cli_file_begin(const char *cmd, const char *path, bool mkdirs, char *tmp, size_t len) {
    char dir[1024];
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    if (dlen >= sizeof dir || (size_t)snprintf(tmp, len, "%s" CLI_STAGE_NAME, path) >= len) {
        fprintf(stderr, "fusebox %s: cannot write %s: %s\n", cmd, path, strerror(ENAMETOOLONG));
        return NULL;
    }
    memcpy(dir, path, dlen);
    dir[dlen] = '\0';
    if (mkdirs && dlen > 0 && cli_mkdirs(dir) != 0) {
        fprintf(stderr, "fusebox %s: cannot create %s (for %s): %s\n", cmd, dir, path,
                strerror(errno));
        return NULL;
    }
    /* a device, a pipe, a symbolic link (/dev/full, /dev/stdout) is written as it is: renaming over
       it would replace it with a file */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) tmp[0] = '\0';
    FILE *f = fopen(tmp[0] ? tmp : path, "w");
    if (f == NULL) cli_write_error(cmd, path, errno);
    return f;
}

int cli_file_commit(FILE *f, const char *cmd, const char *path, const char *tmp) {
    if (cli_close_checked(f, cmd, path) != 0) {
        if (tmp[0]) unlink(tmp);
        return -1;
    }
    if (tmp[0] == '\0' || rename(tmp, path) == 0) return 0;
    fprintf(stderr, "fusebox %s: cannot move %s to %s: %s\n", cmd, tmp, path, strerror(errno));
    unlink(tmp);
    return -1;
}

void cli_file_discard(FILE *f, const char *tmp) {
    if (f != NULL) fclose(f);
    if (tmp[0]) unlink(tmp);
}

int cli_write_error(const char *cmd, const char *path, int err) {
    fprintf(stderr, "fusebox %s: cannot write %s: %s\n", cmd, path, strerror(err));
    return -1;
}

int cli_close_checked(FILE *f, const char *cmd, const char *path) {
    int err = util_fclose_checked(f);
    return err == 0 ? 0 : cli_write_error(cmd, path, err);
}
