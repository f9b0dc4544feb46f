/* common.c - helpers shared by the subcommands. */
#include "cli/common.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "import/policy.h"
#include "reports/charts.h"
#include "reports/report.h"
#include "util/file.h"
#include "util/utf8.h"

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

/*
 * n bytes of an error message onto f as the terminal should see them: its text often quotes
 * the input (a key, a version string of a file), so a control character other than a newline
 * or a tab, DEL, a C1 control (U+0080-U+009F: CSI is one) and a byte that is no UTF-8 go as
 * \xNN (C1 as \u00NN), never as the terminal escape they would be.
 */
static void put_clean(FILE *f, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = util_utf8_char(u + i, n - i);
        if (k == 0 || (u[i] < 0x20 && u[i] != '\n' && u[i] != '\t') || u[i] == 0x7f) {
            fprintf(f, "\\x%02x", u[i]);
            i++;
        } else if (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) {
            fprintf(f, "\\u%04x", u[i + 1]);
            i += 2;
        } else {
            fwrite(s + i, 1, k, f);
            i += k;
        }
    }
}

void cli_put_error(const char *msg) {
    size_t n = strlen(msg);
    put_clean(stderr, msg, n < CLI_ERROR_MAX ? n : CLI_ERROR_MAX);
    if (n > CLI_ERROR_MAX) fprintf(stderr, "... (%zu bytes more)", n - CLI_ERROR_MAX);
}

int cli_bad(const char *cmd, const char *fmt, ...) {
    va_list ap;
    /* What stdout holds goes out first: piped (buffered), the error would land inside a line. */
    fflush(stdout);
    char msg[CLI_ERROR_MAX + 1];
    va_start(ap, fmt);
    int len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "fusebox %s: ", cmd);
    cli_put_error(msg);
    if (len > CLI_ERROR_MAX) fprintf(stderr, "... (%d bytes more)", len - CLI_ERROR_MAX);
    fputc('\n', stderr);
    return CLI_BAD_INPUT;
}

int cli_missing(const char *cmd, const char *opt) {
    return cli_bad(cmd, "option %s needs a value", opt);
}

int cli_scenario_error(const sim_error *err) {
    char msg[1100];
    scn_error_format(err, msg, sizeof msg);
    fputs("fusebox: ", stderr);
    cli_put_error(msg);
    fputc('\n', stderr);
    return CLI_BAD_INPUT;
}

/* The docs' folder for the help texts: "docs/", or the installed copy beside this binary. */
static const char *docs_dir(void) {
    static char dir[4096];
    if (dir[0] != '\0') return dir;
    snprintf(dir, sizeof dir, "docs/");
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return dir;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) return dir;
    *slash = '\0'; /* PREFIX/bin */
    slash = strrchr(exe, '/');
    if (slash == NULL || strcmp(slash, "/bin") != 0) return dir;
    *slash = '\0'; /* PREFIX */
    char cand[4096 + 32];
    struct stat st;
    snprintf(cand, sizeof cand, "%s/share/doc/fusebox/docs/", exe);
    size_t len = strlen(cand);
    if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode) && len < sizeof dir) memcpy(dir, cand, len + 1);
    return dir;
}

int cli_help_puts(const char *text, FILE *f) {
    const char *dir = docs_dir();
    for (const char *p; (p = strstr(text, "docs/")) != NULL; text = p + strlen("docs/")) {
        fwrite(text, 1, (size_t)(p - text), f);
        fputs(dir, f);
    }
    return fputs(text, f);
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

char *cli_read_file(const char *path, size_t max, size_t *len) {
    if (strcmp(path, "-") == 0) return util_read_stream(stdin, max, len);
    return util_read_file(path, max, len);
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
    sim_run_opts o = {writer_row, writer_event, writer_progress, w, 0, false, w->stop};
    return o;
}

/* Open the staged NAME for writing; the error names dir/NAME, the file the user will look for. */
static FILE *open_staged(cli_writer *w, const char *cmd, const char *name) {
    char path[1300];
    cli_outdir_path(&w->out, name, path, sizeof path);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        int err = errno;
        snprintf(path, sizeof path, "%s/%s", w->out.dir, name);
        cli_write_error(cmd, path, err);
    }
    return f;
}

static int close_staged(cli_writer *w, const char *cmd, FILE *f, const char *name) {
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", w->out.dir, name);
    int saved = f == w->csv ? w->csv_errno : f == w->events ? w->events_errno : 0;
    int err = util_fclose_checked(f);
    if (err == EIO && saved != 0) err = saved;
    return err == 0 ? 0 : cli_write_error(cmd, path, err);
}

int cli_writer_open(cli_writer *w, const char *cmd, const char *dir, const sim_scenario *sc,
                    bool progress) {
    memset(w, 0, sizeof *w);
    w->sc = sc;
    w->progress = progress;
    if (cli_outdir_begin(&w->out, cmd, dir) != 0) return CLI_BAD_INPUT;
    w->csv = open_staged(w, cmd, "timeseries.csv");
    w->events = open_staged(w, cmd, "events.jsonl");
    if (w->csv == NULL || w->events == NULL) return CLI_BAD_INPUT;
    rep_csv_header(w->csv, sc);
    return CLI_OK;
}

int cli_writer_close(cli_writer *w, const char *cmd, const char *dir, sim_summary *const *sums,
                     size_t n, bool charts, int status) {
    return cli_writer_close_extra(w, cmd, dir, sums, n, charts, status, NULL, 0);
}

static bool stopped(const cli_writer *w) {
    return w->stop != NULL && *w->stop != 0;
}

/* The staged charts and report.html: false when a file could not be written. */
static bool write_charts(cli_writer *w, const char *cmd, sim_summary *const *sums, size_t n,
                         int *status) {
    char msg[512];
    int rc = rep_charts(w->out.stage, w->sc, sums, n, w->warning, w->jobs, msg, sizeof msg);
    if (rc == FB_OK || stopped(w)) return true; /* interrupted: the charts are dropped */
    /* the messages name the files where they will be, not where they are staged */
    char *st = strstr(msg, "/" CLI_STAGE_NAME);
    if (st != NULL) {
        const char *rest = st + strlen("/" CLI_STAGE_NAME);
        memmove(st, rest, strlen(rest) + 1);
    }
    fprintf(stderr, "fusebox %s: charts: %s\n", cmd, msg);
    *status = CLI_BAD_INPUT;
    /* without gnuplot the page still stands (it says why it has no charts) */
    return rc == FB_ENOTFOUND;
}

static bool write_report(cli_writer *w, const char *cmd, sim_summary *const *sums, size_t n,
                         bool interrupted, const rep_extra *extra, size_t nextra) {
    FILE *json = open_staged(w, cmd, "report.json");
    if (json == NULL) return false;
    rep_write_json_run(json, w->sc, sums, n, interrupted, extra, nextra);
    return close_staged(w, cmd, json, "report.json") == 0;
}

int cli_writer_close_extra(cli_writer *w, const char *cmd, const char *dir,
                           sim_summary *const *sums, size_t n, bool charts, int status,
                           const rep_extra *extra, size_t nextra) {
    bool ok = w->csv != NULL && w->events != NULL;
    /* one message: after a first failure (a full disk) the others are closed unchecked */
    if (w->csv) ok = close_staged(w, cmd, w->csv, "timeseries.csv") == 0 && ok;
    if (w->events && ok)
        ok = close_staged(w, cmd, w->events, "events.jsonl") == 0;
    else if (w->events)
        fclose(w->events);
    w->csv = w->events = NULL;
    if (ok && n > 0 && charts && !stopped(w)) ok = write_charts(w, cmd, sums, n, &status);
    /* the last moment a signal counts: from here on the run is written whole */
    bool interrupted = w->interrupted = stopped(w);
    if (ok && interrupted) cli_outdir_drop_charts(&w->out);
    if (ok) ok = write_report(w, cmd, sums, n, interrupted, extra, nextra);
    (void)dir;
    if (ok && w->hold) return status;
    return cli_writer_commit(w, cmd, ok) == CLI_OK ? status : CLI_BAD_INPUT;
}

int cli_writer_commit(cli_writer *w, const char *cmd, bool ok) {
    w->hold = false;
    if (ok) ok = cli_outdir_commit(&w->out, cmd) == 0;
    if (!ok) {
        cli_outdir_discard(&w->out);
        return CLI_BAD_INPUT;
    }
    w->committed = true;
    return CLI_OK;
}

/*
 * --policy [NAME=]KIND:FILE[#INSTANCE]: a variant NAME (default KIND) whose one
 * layer is the library configuration FILE, imported; it runs next to the
 * scenario's own variants and takes nothing from the scenario's "policy".
 * FILE is named from the working directory, so it goes into the scenario as
 * an absolute path.
 */
static int policy_opt(const char *cmd, const char *v, cli_run_args *a) {
    char kind[64], name[SIM_NAME_MAX], file[1024], abs[PATH_MAX];
    const char *eq = strchr(v, '='), *colon = strchr(v, ':');
    if (eq != NULL && colon != NULL && eq > colon) eq = NULL;
    const char *k = eq ? eq + 1 : v, *hash = colon ? strrchr(colon, '#') : NULL;
    if (colon == NULL || colon == k || colon[1] == '\0' || hash == colon + 1 ||
        (size_t)(colon - k) >= sizeof kind || (eq && (size_t)(eq - v) >= sizeof name) ||
        strlen(colon + 1) >= sizeof file)
        return cli_bad(cmd, "--policy %s: expected [NAME=]KIND:FILE[#INSTANCE]", v);
    if (a->npolicies == CLI_POLICIES_MAX || a->nsets == sizeof a->sets / sizeof a->sets[0])
        return cli_bad(cmd, "too many --policy options (at most %d)", CLI_POLICIES_MAX);
    snprintf(kind, sizeof kind, "%.*s", (int)(colon - k), k);
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - v) : (int)strlen(kind), eq ? v : kind);
    snprintf(file, sizeof file, "%.*s", hash ? (int)(hash - colon - 1) : (int)strlen(colon + 1),
             colon + 1);
    if (realpath(file, abs) == NULL)
        return cli_bad(cmd, "--policy %s: cannot read %s: %s", v, file, strerror(errno));
    cJSON *layer = cJSON_CreateObject(), *variant = cJSON_CreateObject();
    cJSON_AddStringToObject(layer, "name", name);
    cJSON_AddStringToObject(layer, "import", kind);
    cJSON_AddStringToObject(layer, "file", abs);
    if (hash) cJSON_AddStringToObject(layer, "instance", hash + 1);
    cJSON_AddFalseToObject(variant, "inherit_policy");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(variant, "layers"), layer);
    char *json = cJSON_PrintUnformatted(variant);
    cJSON_Delete(variant);
    char *buf = a->policies[a->npolicies];
    int n = json ? snprintf(buf, sizeof a->policies[0], "+variants.%s=%s", name, json) : -1;
    free(json);
    if (n < 0 || (size_t)n >= sizeof a->policies[0])
        return cli_bad(cmd, "--policy %s: too long", v);
    snprintf(a->policy_name[a->npolicies], sizeof a->policy_name[0], "%s", name);
    a->policy_litellm[a->npolicies] = strcmp(kind, "litellm") == 0;
    a->sets[a->nsets++] = a->policies[a->npolicies++];
    return CLI_OK;
}

/* --map-provider FROM=TO: checked here, applied by cli_run_load to the --policy litellm layers. */
static int map_opt(const char *cmd, const char *v, cli_run_args *a) {
    const char *eq = strchr(v, '=');
    if (eq == NULL || eq == v || eq[1] == '\0' || strchr(eq + 1, '=') || strchr(v, '.'))
        return cli_bad(cmd,
                       "--map-provider %s: expected NAME=PROVIDER (azure=openai: the "
                       "config's azure deployments are the scenario's openai)",
                       v);
    if (a->nmaps == CLI_MAPS_MAX)
        return cli_bad(cmd, "too many --map-provider options (at most %d)", CLI_MAPS_MAX);
    a->maps[a->nmaps++] = v;
    return CLI_OK;
}

/* The --set lines of the --map-provider options: one per option and --policy litellm layer,
 * "variants.NAME.layers.NAME.map_provider.FROM=TO" (malloc'd into sets[from ...]). */
static int map_sets(const cli_run_args *a, const char *cmd, const char **sets, size_t *n,
                    char (*buf)[512], size_t cap) {
    size_t used = 0, litellm = 0;
    for (size_t p = 0; p < a->npolicies; p++) litellm += a->policy_litellm[p];
    if (a->nmaps > 0 && litellm == 0)
        return cli_bad(cmd, "--map-provider applies to the layers of --policy litellm:FILE; for a "
                            "layer of the scenario, set its \"map_provider\" (docs/presets.md, "
                            "litellm)");
    for (size_t m = 0; m < a->nmaps; m++)
        for (size_t p = 0; p < a->npolicies; p++) {
            if (!a->policy_litellm[p]) continue;
            const char *eq = strchr(a->maps[m], '=');
            if (used == cap || *n == 256)
                return cli_bad(cmd, "too many --map-provider options for the --policy layers");
            snprintf(buf[used], sizeof buf[0], "variants.%s.layers.%s.map_provider.%.*s=\"%s\"",
                     a->policy_name[p], a->policy_name[p], (int)(eq - a->maps[m]), a->maps[m],
                     eq + 1);
            sets[(*n)++] = buf[used++];
        }
    return CLI_OK;
}

bool cli_run_opt(int argc, char **argv, int *i, const char *cmd, cli_run_args *a, int *rc) {
    const char *o = argv[*i], *v = NULL;
    *rc = CLI_OK;
    if (cli_opt(argc, argv, i, "-o", "--out", &v)) {
        if (v == NULL) *rc = cli_missing(cmd, o);
        a->out = v;
    } else if (cli_opt(argc, argv, i, NULL, "--seed", &v)) {
        if (v == NULL)
            *rc = cli_missing(cmd, o);
        else if (cli_parse_u64(v, &a->seed) != 0)
            *rc = cli_bad(cmd, "--seed needs a non-negative integer, got '%s'", v);
        a->has_seed = true;
    } else if (cli_opt(argc, argv, i, NULL, "--set", &v)) {
        if (v == NULL)
            *rc = cli_missing(cmd, o);
        else if (a->nsets == sizeof a->sets / sizeof a->sets[0])
            *rc = cli_bad(cmd, "too many --set options");
        else
            a->sets[a->nsets++] = v;
    } else if (cli_opt(argc, argv, i, NULL, "--policy", &v)) {
        *rc = v == NULL ? cli_missing(cmd, o) : policy_opt(cmd, v, a);
    } else if (cli_opt(argc, argv, i, NULL, "--map-provider", &v)) {
        *rc = v == NULL ? cli_missing(cmd, o) : map_opt(cmd, v, a);
    } else if (strcmp(o, "--strict") == 0) {
        a->strict = true;
    } else if (cli_opt(argc, argv, i, NULL, "--variant", &v)) {
        if (v == NULL)
            *rc = cli_missing(cmd, o);
        else if (a->nonly == SIM_VARIANTS_MAX)
            *rc = cli_bad(cmd, "too many --variant options");
        else
            a->only[a->nonly++] = v;
    } else {
        return false;
    }
    return true;
}

void cli_print_notes(const char *cmd, const sim_scenario *sc) {
    for (uint32_t i = 0; i < sc->note_count; i++)
        fprintf(stderr, "fusebox %s: %s: %s: %s\n", cmd, sc->file,
                (sc->warning_notes >> i) & 1 ? "warning" : "note", sc->notes[i]);
    if (sc->notes_dropped)
        fprintf(stderr, "fusebox %s: %s: note: %u more notes\n", cmd, sc->file, sc->notes_dropped);
}

int cli_run_load(const cli_run_args *a, const char *cmd, sim_scenario **out, bool *selected) {
    sim_error err;
    *out = NULL;
    const char *sets[256];
    static char mapbuf[CLI_MAPS_MAX * CLI_POLICIES_MAX][512];
    size_t nsets = a->nsets;
    memcpy(sets, a->sets, a->nsets * sizeof sets[0]);
    if (map_sets(a, cmd, sets, &nsets, mapbuf, sizeof mapbuf / sizeof mapbuf[0]) != CLI_OK)
        return CLI_BAD_INPUT;
    if (scn_load_import(a->file, sets, nsets, a->has_seed ? &a->seed : NULL, &cli_importer, out,
                        &err) != FB_OK)
        return cli_scenario_error(&err);
    if (a->strict && (*out)->warning_notes) {
        for (uint32_t i = 0; i < (*out)->note_count; i++)
            if (((*out)->warning_notes >> i) & 1)
                fprintf(stderr, "fusebox %s: %s: %s (an error with --strict)\n", cmd, (*out)->file,
                        (*out)->notes[i]);
        scn_free(*out);
        *out = NULL;
        return CLI_BAD_INPUT;
    }
    cli_print_notes(cmd, *out);
    for (size_t k = 0; k < a->nonly; k++) {
        int v = scn_variant(*out, a->only[k]);
        if (v < 0) {
            scn_free(*out);
            *out = NULL;
            return cli_bad(cmd, "%s has no variant named '%s'", a->file, a->only[k]);
        }
        selected[v] = true;
    }
    return CLI_OK;
}

const sim_import cli_importer = {imp_policy_layer, NULL};

volatile sig_atomic_t cli_stop_signal;

static void on_stop_signal(int sig) {
    if (cli_stop_signal == 0) cli_stop_signal = sig;
}

void cli_catch_stop_signals(bool restart) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
