/*
 * save.c - the sweep's files put in place so that a folder never mixes the
 * files of two runs: the outputs are written into DIR/.sweep-staging, every
 * write checked, and renamed into DIR only when all of them are complete; a
 * partial file is written to NAME.tmp and renamed. An interrupted or failed
 * save leaves DIR as it was. See docs/sweeps.md ("Interruption").
 */
#include "sweep/sweepint.h"

#include "reports/report.h"
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAGING ".sweep-staging"
#define DIR_LEN 1100  /* DIR/.sweep-staging */
#define PATH_LEN 1300 /* a file in it: charts/heatmap.png */

/* Every file a sweep writes in its folder (the staged ones are renamed, the others removed). */
static const char *const outputs[] = {
    "sweep.csv",        "sweep-points.csv",  "sweep.json",         "sweep.html",
    "merge.json",       "charts/heatmap.gp", "charts/heatmap.dat", "charts/heatmap.png",
    "charts/pareto.gp", "charts/pareto.dat", "charts/pareto.png",
};
#define OUTPUT_COUNT (sizeof outputs / sizeof outputs[0])

int sweep_close_checked(FILE *f, const char *path, char *msg, size_t msglen) {
    int err = util_fclose_checked(f);
    if (err != 0)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(err));
    return FB_OK;
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* The regular files of dir, then dir itself (one level: the staging folder and its charts/). */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[PATH_LEN + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(dir);
}

static void remove_staging(const char *stage) {
    char charts[PATH_LEN];
    snprintf(charts, sizeof charts, "%s/charts", stage);
    remove_dir(charts);
    remove_dir(stage);
}

/* Messages name the file the user asked for, not its staged copy. */
static void unstage(char *msg) {
    char *s = strstr(msg, "/" STAGING);
    if (s) memmove(s, s + strlen("/" STAGING), strlen(s + strlen("/" STAGING)) + 1);
}

static int write_manifest(const sweep *sw, const char *stage, char *msg, size_t msglen) {
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/merge.json", stage);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    fputs(sw->manifest, f);
    return sweep_close_checked(f, path, msg, msglen);
}

/* The staged files into dir; the earlier sweep's files this one did not write out of it. */
static int commit(const char *dir, const char *stage, char *msg, size_t msglen) {
    char from[PATH_LEN], to[PATH_LEN];
    snprintf(from, sizeof from, "%s/charts", stage);
    snprintf(to, sizeof to, "%s/charts", dir);
    if (exists(from) && mkdir(to, 0777) != 0 && errno != EEXIST)
        return sweep_fail(msg, msglen, FB_EIO, "cannot create %s: %s", to, strerror(errno));
    bool staged[OUTPUT_COUNT];
    for (size_t i = 0; i < OUTPUT_COUNT; i++) {
        snprintf(from, sizeof from, "%s/%s", stage, outputs[i]);
        staged[i] = exists(from);
    }
    for (size_t i = 0; i < OUTPUT_COUNT; i++) {
        snprintf(from, sizeof from, "%s/%s", stage, outputs[i]);
        snprintf(to, sizeof to, "%s/%s", dir, outputs[i]);
        if (staged[i] && rename(from, to) != 0)
            return sweep_fail(msg, msglen, FB_EIO, "cannot rename %s to %s: %s", from, to,
                              strerror(errno));
    }
    for (size_t i = 0; i < OUTPUT_COUNT; i++) {
        snprintf(to, sizeof to, "%s/%s", dir, outputs[i]);
        if (!staged[i]) remove(to);
    }
    snprintf(to, sizeof to, "%s/charts", dir);
    rmdir(to); /* only when empty: it may hold files of the user's */
    return FB_OK;
}

int sweep_save_outputs(sweep *sw, const char *dir, bool charts, bool *replaced, char *msg,
                       size_t msglen) {
    char stage[DIR_LEN], json[PATH_LEN];
    snprintf(stage, sizeof stage, "%s/" STAGING, dir);
    snprintf(json, sizeof json, "%s/sweep.json", dir);
    *replaced = exists(json);
    remove_staging(stage); /* left by a run that was killed (SIGKILL) while it wrote */
    if (mkdir(stage, 0777) != 0)
        return sweep_fail(msg, msglen, FB_EIO, "cannot create %s: %s", stage, strerror(errno));
    int rc = sweep_write_outputs(sw, stage, charts, msg, msglen);
    if ((rc == FB_OK || rc == FB_ENOTFOUND) && sw->manifest) {
        char note[512];
        snprintf(note, sizeof note, "%s", rc == FB_ENOTFOUND ? msg : "");
        int mrc = write_manifest(sw, stage, msg, msglen);
        if (mrc != FB_OK)
            rc = mrc;
        else if (note[0])
            snprintf(msg, msglen, "%s", note);
    }
    if (rc == FB_OK || rc == FB_ENOTFOUND) {
        int crc = commit(dir, stage, msg, msglen);
        if (crc != FB_OK) rc = crc;
    }
    remove_staging(stage);
    unstage(msg);
    return rc;
}

int sweep_save_part(const sweep *sw, const char *dir, const char *name, uint32_t k, uint32_t n,
                    bool interrupted, char *msg, size_t msglen) {
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    sweep_part_write(f, sw, k, n, interrupted);
    int rc = sweep_close_checked(f, path, msg, msglen);
    if (rc == FB_OK && rename(tmp, path) != 0)
        rc = sweep_fail(msg, msglen, FB_EIO, "cannot rename %s to %s: %s", tmp, path,
                        strerror(errno));
    if (rc != FB_OK) remove(tmp);
    return rc;
}
