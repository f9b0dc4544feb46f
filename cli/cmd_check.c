/*
 * cmd_check.c - 'fusebox check': run scenarios and evaluate their `expect`
 * lines; 'fusebox validate': check scenario files without running them.
 *
 * With --jobs N the scenarios are spread over N worker processes (util/pool.h);
 * each sends its scenario's lines and JUnit fragment back, and the parent
 * prints them in input order, so the output does not depend on N.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "reports/compare.h"
#include "reports/breakdown.h"
#include "reports/expect.h"
#include "reports/report.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "util/file.h"
#include "util/junit.h"
#include "util/pool.h"
#include "util/xml.h"

#define CHECK_FILES_MAX 4096
#define CHECK_JOBS_MAX 64
#define CHECK_TOLS_MAX 16

typedef struct counts {
    unsigned passed, failed, errors, scenarios;
    unsigned unwritten; /* -o report.json files not written, among the errors */
} counts;

static void usage(FILE *f) {
    cli_help_puts("usage: fusebox check FILE|DIR... [options]\n"
                  "\n"
                  "Run each scenario (every .json file of a DIR, sorted) and evaluate its\n"
                  "`expect` lines; print one line per expectation with the measured value.\n"
                  "\n"
                  "options:\n"
                  "      --junit FILE     also write JUnit XML (for CI systems)\n"
                  "  -j, --jobs N         run scenarios in N processes (same output as 1)\n"
                  "  -o, --out DIR        also write DIR/<scenario>/report.json\n"
                  "      --seed N         override every scenario's seed\n"
                  "      --set KEY=VALUE  override a value in every scenario (repeatable)\n"
                  "      --baseline DIR   also compare each scenario's headline figures with\n"
                  "                       DIR/<scenario>/report.json (as check -o DIR wrote\n"
                  "                       them): a figure worse beyond noise fails\n"
                  "      --tolerance M=X  the noise of metric M for --baseline, as in fusebox\n"
                  "                       compare (success_rate=0.002, latency_p99=10%)\n"
                  "  -h, --help           this text\n"
                  "\n"
                  "The JUnit file is written beside FILE and renamed over it at the end.\n"
                  "SIGINT or SIGTERM stops the check: the scenarios checked are printed and\n"
                  "written, with an \"interrupted\" error case in the JUnit file.\n"
                  "\n"
                  "Exit codes: 0 every expectation holds, 1 some failed, 2 bad input\n"
                  "(a scenario or an expectation that cannot be read, a file that cannot be\n"
                  "written, a --baseline report of a run that stopped early), 130/143 after\n"
                  "SIGINT/SIGTERM.\n",
                  f);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* Expand FILE|DIR arguments into a list of files (directories: *.json, sorted). */
static int collect_files(const char *cmd, int argc, char **argv, const int *is_arg, char **files,
                         size_t *n) {
    for (int i = 1; i < argc; i++) {
        if (!is_arg[i]) continue;
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fusebox: %s: %s\n", argv[i], strerror(errno));
            return CLI_BAD_INPUT;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (*n == CHECK_FILES_MAX) return cli_bad(cmd, "more than %d files", CHECK_FILES_MAX);
            files[(*n)++] = strdup(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (d == NULL) {
            fprintf(stderr, "fusebox: %s: %s\n", argv[i], strerror(errno));
            return CLI_BAD_INPUT;
        }
        size_t first = *n;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json")) continue;
            if (*n == CHECK_FILES_MAX) {
                closedir(d);
                return cli_bad(cmd, "more than %d files", CHECK_FILES_MAX);
            }
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            char *path = malloc(len);
            if (path == NULL) {
                closedir(d);
                return cli_bad(cmd, "out of memory");
            }
            snprintf(path, len, "%s%s%s", argv[i], ends_with(argv[i], "/") ? "" : "/", e->d_name);
            files[(*n)++] = path;
        }
        closedir(d);
        qsort(files + first, *n - first, sizeof *files, cmp_str);
        if (*n == first) return cli_bad(cmd, "%s holds no .json scenario", argv[i]);
    }
    return CLI_OK;
}

typedef struct check_opts {
    const char *const *sets;
    size_t nsets;
    const uint64_t *seed;
    const char *outdir;
    const char *baseline;
    const rep_cmp_tol *tols;
    size_t ntols;
} check_opts;

/* Wall seconds since an arbitrary start, for the JUnit time attributes (never for results). */
static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * One <testcase>; kind NULL: it passed. `measured` goes to <system-out> of every case, so a
 * CI system shows the value behind a pass too.
 */
static void junit_case(FILE *x, const char *suite, const char *name, const char *kind,
                       const char *message, const char *measured, double time_s) {
    util_out o = util_out_file(x);
    util_junit_testcase(&o,
                        &(util_junit_case){.classname = suite,
                                           .name = name,
                                           .time_s = time_s,
                                           .kind = kind,
                                           .message = message,
                                           .text = message,
                                           .output = measured},
                        UTIL_XML_APOS);
}

/* A scenario that does not load: one error line, one errored <testsuite>. */
static void load_error(const char *file, const sim_error *err, FILE *out, FILE *x, counts *c,
                       double time_s) {
    char msg[1200];
    scn_error_format(err, msg, sizeof msg);
    fprintf(out, "ERROR %s\n", msg);
    util_out o = util_out_file(x);
    util_junit_suite_open(
        &o,
        &(util_junit_suite){.name = file, .tests = 1, .errors = 1, .skipped = -1, .time_s = time_s},
        UTIL_XML_APOS);
    junit_case(x, file, "load", "error", msg, NULL, time_s);
    util_junit_suite_close(&o);
    c->errors++;
}

/* Every expectation must be readable before anything runs; each error on `out` (may be NULL). */
static bool expectations_readable(const char *file, const sim_scenario *sc, FILE *out) {
    bool ok = true;
    for (uint32_t i = 0; i < sc->expect_count; i++) {
        char m[300];
        if (rep_expect_validate(sc, sc->expect[i], m, sizeof m) != FB_OK) {
            if (out) fprintf(out, "ERROR %s: expect[%u]: %s: %s\n", file, i, sc->expect[i], m);
            ok = false;
        }
    }
    return ok;
}

/*
 * Simulate every variant into sums[*n]; the first failure goes to run_error.
 * SIGINT/SIGTERM stop a run at its next event (the scenario is then not checked).
 */
static void run_variants(const sim_scenario *sc, sim_summary **sums, size_t *n, char *run_error,
                         size_t len) {
    sim_run_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.stop = &cli_stop_signal;
    for (uint32_t v = 0; v < sc->variant_count && cli_stop_signal == 0; v++) {
        sim_summary *s = malloc(sizeof *s);
        if (s == NULL) {
            snprintf(run_error, len, "out of memory");
            return;
        }
        sums[(*n)++] = s;
        sim_error err;
        if (sim_run(sc, v, &opts, s, &err) != FB_OK) {
            char msg[1200];
            scn_error_format(&err, msg, sizeof msg);
            snprintf(run_error, len, "variant %s: %s", sc->variants[v].name, msg);
            return;
        }
    }
}

/* --out: DIR/<scenario>/report.json; false with the reason in msg when it cannot be written. */
static bool write_report(const char *outdir, const sim_scenario *sc, sim_summary *const *sums,
                         size_t n, char *msg, size_t len) {
    char dir[1100], path[1200];
    snprintf(dir, sizeof dir, "%s/%s", outdir, sc->name);
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *j = cli_mkdirs(dir) == 0 ? fopen(path, "w") : NULL;
    if (j == NULL) {
        snprintf(msg, len, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    rep_write_json(j, sc, sums, n);
    int err = util_fclose_checked(j);
    if (err != 0) snprintf(msg, len, "cannot write %s: %s", path, strerror(err));
    return err == 0;
}

/* One line and one <testcase> per expectation; `why`: the reason none can be evaluated. */
static void evaluate(const sim_scenario *sc, sim_summary *const *sums, size_t n, const char *why,
                     bool print_why, FILE *out, FILE *x, counts *c) {
    for (uint32_t i = 0; i < sc->expect_count; i++) {
        const char *e = sc->expect[i];
        char m[300], measured[320];
        rep_expect_result r;
        double t0 = now_s();
        if (why != NULL) {
            if (print_why) fprintf(out, "ERROR %s: %s: %s\n", sc->name, e, why);
            junit_case(x, sc->name, e, "error", why, NULL, now_s() - t0);
            c->errors++;
        } else if (rep_expect_eval(sc, sums, n, e, &r, m, sizeof m) != FB_OK) {
            fprintf(out, "ERROR %s: %s: %s\n", sc->name, e, m);
            junit_case(x, sc->name, e, "error", m, NULL, now_s() - t0);
            c->errors++;
        } else if (r.passed) {
            fprintf(out, "PASS  %s: %s  [%s]\n", sc->name, e, r.detail);
            snprintf(measured, sizeof measured, "measured: %s", r.detail);
            junit_case(x, sc->name, e, NULL, NULL, measured, now_s() - t0);
            c->passed++;
        } else {
            /* r.detail says "measured ..." itself, except for an n/a side */
            snprintf(measured, sizeof measured, "%s%s", r.na ? "measured: " : "", r.detail);
            fprintf(out, "FAIL  %s: %s  [%s]\n", sc->name, e, measured);
            junit_case(x, sc->name, e, "failure", measured, measured, now_s() - t0);
            c->failed++;
        }
    }
}

/*
 * A scenario with the log's figures ("observed", an imported incident): one result, PASS
 * when every figure is within its tolerance or the replay's noise, else FAIL and a line
 * per figure that is not (docs/import.md, "Fidelity").
 */
static void observed_check(const sim_scenario *sc, sim_summary *const *sums, size_t n, FILE *out,
                           FILE *x, counts *c) {
    const sim_summary *s = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(sums[i]->variant, sc->observed.variant) == 0) s = sums[i];
    if (s == NULL) return; /* not run (a signal, an error: said elsewhere) */
    rep_figure g[REP_FIGURES_MAX];
    size_t k = rep_observed_figures(sc, s, g, REP_FIGURES_MAX), misses = 0;
    char name[96], detail[320] = "";
    for (size_t i = 0; i < k; i++) misses += !g[i].within;
    snprintf(name, sizeof name, "%s beside the log (observed)", sc->observed.variant);
    if (misses == 0) {
        snprintf(detail, sizeof detail, "%zu figures within their tolerance or noise", k);
        fprintf(out, "PASS  %s: %s  [%s]\n", sc->name, name, detail);
        junit_case(x, sc->name, name, NULL, NULL, detail, 0);
        c->passed++;
        return;
    }
    snprintf(detail, sizeof detail, "%zu of %zu figures outside their tolerance and noise", misses,
             k);
    fprintf(out, "FAIL  %s: %s  [%s]\n", sc->name, name, detail);
    for (size_t i = 0; i < k; i++) {
        if (g[i].within) continue;
        char l[48], v[48], t[32], z[40];
        rep_figure_cell(l, sizeof l, &g[i], true);
        rep_figure_cell(v, sizeof v, &g[i], false);
        rep_figure_tolerance(t, sizeof t, &g[i]);
        rep_figure_noise(z, sizeof z, &g[i]);
        fprintf(out, "      %s: %s against the log's %s (tolerance %s, noise %s)\n", g[i].name, v,
                l, t, z);
    }
    junit_case(x, sc->name, name, "failure", detail, detail, 0);
    c->failed++;
}

/* A figure's values and change for a check line: "2.1s -> 2.7s, +573ms (+27.1%)". */
static void baseline_detail(char *buf, size_t len, const rep_cmp_fig *f) {
    size_t nh;
    const rep_cmp_headline *h = &rep_cmp_headlines(&nh)[f->headline];
    char a[64], b[64], change[96];
    rep_cmp_format(a, sizeof a, h, f->a.present ? f->a.v : NAN);
    rep_cmp_format(b, sizeof b, h, f->b.present ? f->b.v : NAN);
    rep_cmp_format_change(change, sizeof change, h, f);
    const char *v = f->verdict == REP_CMP_WORSE    ? "worse beyond noise"
                    : f->verdict == REP_CMP_BETTER ? "better beyond noise"
                    : f->verdict == REP_CMP_NA     ? "n/a"
                                                   : "within noise";
    snprintf(buf, len, "baseline %s -> %s, %s, %s: %s", a, b, change, v, f->rule_text);
}

/* An error of the --baseline comparison: one line, one errored <testcase>. */
static void baseline_error(const sim_scenario *sc, const char *why, FILE *out, FILE *x, counts *c) {
    fprintf(out, "ERROR %s: baseline: %s\n", sc->name, why);
    junit_case(x, sc->name, "baseline", "error", why, NULL, 0);
    c->errors++;
}

/*
 * With no figure worse, why the comparison is no verdict, in msg (true): the baseline is a run
 * that stopped early, or figures moved beyond their default tolerance between runs of other
 * draws (another seed, another random-stream version), which is not their noise. False: a PASS.
 */
static bool no_verdict(const char *path, const rep_cmp_side *base, const rep_cmp *cmp, char *msg,
                       size_t len) {
    if (cmp->unjudged > cmp->unjudged_seeds) {
        /* part of a run is no baseline: its rates and sums are of its first minutes */
        char names[600] = "";
        size_t at = 0;
        for (size_t i = 0; i < base->count && at < sizeof names; i++)
            if (base->entries[i].stopped[0])
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s (%s)", at ? ", " : "",
                                       base->entries[i].name, base->entries[i].stopped);
        snprintf(msg, len,
                 "%zu of %zu figures not judged: %.900s is a run that stopped early: %s; not a "
                 "baseline",
                 cmp->unjudged, cmp->count, path, names);
    } else if (cmp->unjudged_seeds > 0 && cmp->apart == REP_CMP_TWO_VERSIONS) {
        snprintf(msg, len,
                 "%zu of %zu figures not judged: %.900s is of random streams %.40s, this run of "
                 "%s: the same seed draws other numbers (docs/rng.md), and they moved beyond "
                 "their default tolerance, which is not that noise (save a baseline with this "
                 "version, or give --tolerance)",
                 cmp->unjudged_seeds, cmp->count, path,
                 base->rng[0] ? base->rng : "unnamed (before fusebox-2)", FB_RNG_VERSION);
    } else if (cmp->unjudged_seeds > 0) {
        snprintf(msg, len,
                 "%zu of %zu figures not judged: %.900s is of seed %.100s, this run of another: "
                 "they "
                 "moved beyond their default tolerance, which is not the seeds' noise (check "
                 "with the baseline's seed, or give --tolerance)",
                 cmp->unjudged_seeds, cmp->count, path, base->seeds);
    } else {
        return false;
    }
    return true;
}

/*
 * The comparison's one result: PASS when no figure is worse beyond noise, else FAIL and then a
 * line per worse figure; one <testcase> "baseline" with every figure in its <system-out>.
 */
static void baseline_result(const sim_scenario *sc, const char *path, const rep_cmp_side *base,
                            const rep_cmp *cmp, FILE *out, FILE *x, counts *c, double time_s) {
    size_t nh;
    const rep_cmp_headline *heads = rep_cmp_headlines(&nh);
    char *all = NULL, *bad = NULL;
    size_t alen = 0, blen = 0;
    FILE *fa = open_memstream(&all, &alen), *fb = open_memstream(&bad, &blen);
    if (fa == NULL || fb == NULL) {
        if (fa) fclose(fa);
        if (fb) fclose(fb);
        baseline_error(sc, "out of memory", out, x, c);
        return;
    }
    for (size_t i = 0; i < cmp->count; i++) {
        const rep_cmp_fig *f = &cmp->figs[i];
        char detail[400];
        baseline_detail(detail, sizeof detail, f);
        const char *name = base->entries[f->entry_a].name, *metric = heads[f->headline].metric;
        fprintf(fa, "%s.%s: %s\n", name, metric, detail);
        if (f->verdict == REP_CMP_WORSE) {
            fprintf(fb, "%s%s.%s", ftell(fb) > 0 ? ", " : "", name, metric);
        }
    }
    fclose(fa);
    fclose(fb);
    char msg[2048];
    if (cmp->worse == 0 && no_verdict(path, base, cmp, msg, sizeof msg)) {
        baseline_error(sc, msg, out, x, c);
    } else if (cmp->worse == 0) {
        fprintf(out, "PASS  %s: baseline  [%zu figures, none worse beyond noise than %s]\n",
                sc->name, cmp->count, path);
        junit_case(x, sc->name, "baseline", NULL, NULL, all, time_s);
        c->passed++;
    } else {
        snprintf(msg, sizeof msg, "%zu of %zu figures worse beyond noise than %s: %s", cmp->worse,
                 cmp->count, path, bad);
        fprintf(out, "FAIL  %s: baseline  [%s]\n", sc->name, msg);
        for (size_t i = 0; i < cmp->count; i++) {
            const rep_cmp_fig *f = &cmp->figs[i];
            if (f->verdict != REP_CMP_WORSE) continue;
            char detail[400];
            baseline_detail(detail, sizeof detail, f);
            fprintf(out, "      %s.%s: %s\n", base->entries[f->entry_a].name,
                    heads[f->headline].metric, detail);
        }
        junit_case(x, sc->name, "baseline", "failure", msg, all, time_s);
        c->failed++;
    }
    free(all);
    free(bad);
}

/*
 * --baseline: the run's headline figures against DIR/<scenario>/report.json (baseline_result);
 * a figure worse beyond noise fails. No baseline for the scenario: a
 * NOTE (a new scenario has none yet), nothing counted.
 */
static void baseline_check(const check_opts *o, const sim_scenario *sc, sim_summary *const *sums,
                           size_t n, FILE *out, FILE *x, counts *c) {
    char path[1300], msg[1600];
    snprintf(path, sizeof path, "%s/%s/report.json", o->baseline, sc->name);
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(out, "NOTE  %s: no baseline (%s: %s), not compared\n", sc->name, path,
                strerror(errno));
        return;
    }
    double t0 = now_s();
    size_t len = 0, clen = 0;
    char *text = cli_read_file(path, 256u << 20, &len), *cur = NULL;
    rep_cmp_side base, mine;
    memset(&mine, 0, sizeof mine);
    if (text == NULL) {
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        baseline_error(sc, msg, out, x, c);
        return;
    }
    int rc = rep_cmp_parse(text, len, path, &base, msg, sizeof msg);
    free(text);
    if (rc != FB_OK) {
        baseline_error(sc, msg, out, x, c);
        return;
    }
    FILE *m = open_memstream(&cur, &clen);
    if (m != NULL) {
        rep_write_json(m, sc, sums, n);
        fclose(m);
    }
    rep_cmp cmp;
    memset(&cmp, 0, sizeof cmp);
    if (m == NULL || rep_cmp_parse(cur, clen, "this run", &mine, msg, sizeof msg) != FB_OK) {
        if (m == NULL) snprintf(msg, sizeof msg, "out of memory");
        baseline_error(sc, msg, out, x, c);
    } else if (rep_compare(&base, &mine, o->tols, o->ntols, &cmp, msg, sizeof msg) != FB_OK) {
        char why[3000];
        snprintf(why, sizeof why, "%s: %s", path, msg);
        baseline_error(sc, why, out, x, c);
    } else {
        baseline_result(sc, path, &base, &cmp, out, x, c, now_s() - t0);
        if (cmp.only_a || cmp.only_b)
            fprintf(out,
                    "NOTE  %s: baseline: %zu variant(s) only in the baseline, %zu only in "
                    "this run (not compared)\n",
                    sc->name, cmp.only_a, cmp.only_b);
    }
    rep_cmp_free(&cmp);
    rep_cmp_side_free(&base);
    rep_cmp_side_free(&mine);
    free(cur);
}

/* The <testsuite> of a scenario that loaded: its counts and time, then its cases. */
static void junit_suite(FILE *x, const sim_scenario *sc, const char *file, const counts *c,
                        double time_s, const char *cases, size_t len) {
    util_out o = util_out_file(x);
    util_junit_suite_open(&o,
                          &(util_junit_suite){.name = sc->name,
                                              .file = file,
                                              .tests = c->passed + c->failed + c->errors,
                                              .failures = c->failed,
                                              .errors = (int)c->errors,
                                              .skipped = -1,
                                              .time_s = time_s},
                          UTIL_XML_APOS);
    fwrite(cases, 1, len, x);
    util_junit_suite_close(&o);
}

/*
 * Check one scenario: lines on `out`, a <testsuite> on `x`, counts in *c.
 * Returns false, with nothing written or counted, when a signal stopped it.
 */
static bool check_one(const char *file, const check_opts *o, FILE *out, FILE *x, counts *c) {
    sim_scenario *sc = NULL;
    sim_error err;
    double t0 = now_s();
    if (scn_load_import(file, o->sets, o->nsets, o->seed, &cli_importer, &sc, &err) != FB_OK) {
        c->scenarios++;
        load_error(file, &err, out, x, c, now_s() - t0);
        return true;
    }
    sim_summary *sums[SIM_VARIANTS_MAX] = {NULL};
    size_t n = 0;
    char run_error[1400] = "";
    /* the errors are printed once the scenario is known to be checked (a signal may come first) */
    bool readable = expectations_readable(file, sc, NULL);
    if (readable && (sc->expect_count > 0 || o->baseline || sc->observed.present))
        run_variants(sc, sums, &n, run_error, sizeof run_error);
    if (cli_stop_signal != 0) {
        for (size_t i = 0; i < n; i++) free(sums[i]);
        scn_free(sc);
        return false;
    }
    c->scenarios++;
    expectations_readable(file, sc, out);
    char report_error[1300] = "";
    if (o->outdir && n > 0) write_report(o->outdir, sc, sums, n, report_error, sizeof report_error);
    if (sc->expect_count == 0 && !o->baseline && !sc->observed.present)
        fprintf(out, "NOTE  %s: no expectations\n", sc->name);
    const char *why = run_error[0] ? run_error
                      : !readable  ? "the scenario has unreadable expectations"
                                   : NULL;
    /* The cases go to memory first: the suite's tag, written before them, carries their counts
     * and the time they took. */
    char *cases = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&cases, &len);
    counts mine = {0, 0, 0, 0, 0};
    if (mem != NULL) {
        evaluate(sc, sums, n, why, run_error[0] != '\0', out, mem, &mine);
        if (sc->observed.present && why == NULL) observed_check(sc, sums, n, out, mem, &mine);
        if (o->baseline && why == NULL && n == sc->variant_count)
            baseline_check(o, sc, sums, n, out, mem, &mine);
        else if (o->baseline && run_error[0] && sc->expect_count == 0)
            baseline_error(sc, run_error, out, mem, &mine);
        if (report_error[0]) {
            fprintf(out, "ERROR %s: %s\n", sc->name, report_error);
            junit_case(mem, sc->name, "report.json", "error", report_error, NULL, 0);
            mine.errors++;
            c->unwritten++;
        }
        fclose(mem);
        junit_suite(x, sc, file, &mine, now_s() - t0, cases, len);
    } else {
        fprintf(out, "ERROR %s: out of memory\n", file);
        mine.errors++;
    }
    free(cases);
    c->passed += mine.passed;
    c->failed += mine.failed;
    c->errors += mine.errors;
    for (size_t i = 0; i < n; i++) free(sums[i]);
    scn_free(sc);
    return true;
}

/* A scenario's results as a worker sends them: its counts, then its lines and its <testsuite>. */
typedef struct result_head {
    counts c;
    size_t out_len; /* the lines' bytes; the <testsuite>'s follow */
} result_head;

typedef struct parallel {
    char **files;
    const check_opts *o;
    char **got; /* by scenario: its result (NULL: none came) */
    size_t *got_len;
} parallel;

/* In a worker: scenario `task` checked into memory. false when a signal stopped it (no result). */
static bool work(void *ctx, uint64_t task, char **data, size_t *len) {
    const parallel *P = ctx;
    char *lines = NULL, *xml = NULL;
    size_t nlines = 0, nxml = 0;
    FILE *out = open_memstream(&lines, &nlines), *x = open_memstream(&xml, &nxml);
    if (!out || !x) exit(3);
    result_head h = {{0, 0, 0, 0, 0}, 0};
    bool done = check_one(P->files[task], P->o, out, x, &h.c);
    if (fclose(out) || fclose(x)) exit(3);
    char *buf = done ? malloc(sizeof h + nlines + nxml) : NULL;
    if (done && buf == NULL) exit(3);
    if (done) {
        h.out_len = nlines;
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, lines, nlines);
        memcpy(buf + sizeof h + nlines, xml, nxml);
        *data = buf;
        *len = sizeof h + nlines + nxml;
    }
    free(lines);
    free(xml);
    return done;
}

/* In the parent: a scenario's result, kept until the ones before it are printed. */
static void result(void *ctx, uint64_t task, const char *data, size_t len) {
    parallel *P = ctx;
    char *copy = malloc(len);
    if (copy == NULL || P->got[task] != NULL || len < sizeof(result_head)) {
        free(copy);
        return;
    }
    memcpy(copy, data, len);
    P->got[task] = copy;
    P->got_len[task] = len;
}

/* Scenario i's result into stdout, junit_body and *total; false when it has none. */
static bool collect(const parallel *P, size_t i, FILE *junit_body, counts *total) {
    if (P->got[i] == NULL && cli_stop_signal != 0) return false; /* stopped: not checked */
    if (P->got[i] == NULL) {
        printf("ERROR %s: the worker checking it stopped unexpectedly\n", P->files[i]);
        total->errors++;
        total->scenarios++;
        return true;
    }
    result_head h;
    memcpy(&h, P->got[i], sizeof h);
    const char *lines = P->got[i] + sizeof h;
    size_t nxml = P->got_len[i] - sizeof h - h.out_len;
    fwrite(lines, 1, h.out_len, stdout);
    fwrite(lines + h.out_len, 1, nxml, junit_body);
    total->passed += h.c.passed;
    total->failed += h.c.failed;
    total->errors += h.c.errors;
    total->scenarios += h.c.scenarios;
    total->unwritten += h.c.unwritten;
    return true;
}

/* The scenarios in `jobs` processes (util/pool.h); checked[i] says which ones a signal did not
 * stop. Printed in input order, so the output does not depend on `jobs`. */
static int run_parallel(char **files, size_t nfiles, unsigned jobs, const check_opts *o,
                        FILE *junit_body, counts *total, bool *checked) {
    parallel P = {files, o, calloc(nfiles, sizeof(char *)), calloc(nfiles, sizeof(size_t))};
    uint64_t *tasks = malloc(nfiles * sizeof *tasks);
    if (P.got == NULL || P.got_len == NULL || tasks == NULL) {
        free(P.got);
        free(P.got_len);
        free(tasks);
        return cli_bad("check", "out of memory");
    }
    for (size_t i = 0; i < nfiles; i++) tasks[i] = i;
    util_pool_job job = {NULL, work, result, &P, &cli_stop_signal};
    char msg[200];
    /* a worker that ended early (1) leaves its scenarios without results: each an error below */
    int rc = util_pool_run(&job, tasks, nfiles, jobs, msg, sizeof msg) < 0
                 ? cli_bad("check", "%s", msg)
                 : CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < nfiles; i++)
        checked[i] = collect(&P, i, junit_body, total);
    for (size_t i = 0; i < nfiles; i++) free(P.got[i]);
    free(P.got);
    free(P.got_len);
    free(tasks);
    return rc;
}

typedef struct args {
    const char *junit, *outdir, *baseline;
    rep_cmp_tol tols[CHECK_TOLS_MAX];
    size_t ntols;
    const char *sets[256];
    size_t nsets;
    uint64_t seed;
    bool has_seed;
    unsigned jobs;
    int is_arg[1024]; /* argv[i] is a FILE|DIR */
    int nargs;
} args;

/* Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, args *o) {
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    if (argc > 1024) return cli_bad("check", "too many arguments");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (cli_opt(argc, argv, &i, NULL, "--junit", &val)) {
            if (val == NULL) return cli_missing("check", a);
            o->junit = val;
        } else if (cli_opt(argc, argv, &i, "-o", "--out", &val)) {
            if (val == NULL) return cli_missing("check", a);
            o->outdir = val;
        } else if (cli_opt(argc, argv, &i, "-j", "--jobs", &val)) {
            uint64_t j;
            if (val == NULL) return cli_missing("check", a);
            if (cli_parse_u64(val, &j) != 0 || j < 1 || j > CHECK_JOBS_MAX)
                return cli_bad("check", "--jobs needs a number from 1 to %d, got '%s'",
                               CHECK_JOBS_MAX, val);
            o->jobs = (unsigned)j;
        } else if (cli_opt(argc, argv, &i, NULL, "--seed", &val)) {
            if (val == NULL) return cli_missing("check", a);
            if (cli_parse_u64(val, &o->seed) != 0)
                return cli_bad("check", "--seed needs a non-negative integer, got '%s'", val);
            o->has_seed = true;
        } else if (cli_opt(argc, argv, &i, NULL, "--baseline", &val)) {
            struct stat st;
            if (val == NULL) return cli_missing("check", a);
            errno = 0;
            if (stat(val, &st) != 0 || !S_ISDIR(st.st_mode))
                return cli_bad("check", "--baseline %s: not a folder (%s)", val,
                               errno ? strerror(errno) : "a file");
            o->baseline = val;
        } else if (cli_opt(argc, argv, &i, NULL, "--tolerance", &val)) {
            char m[400];
            if (val == NULL) return cli_missing("check", a);
            if (o->ntols == CHECK_TOLS_MAX) return cli_bad("check", "too many --tolerance");
            if (rep_cmp_tol_parse(val, &o->tols[o->ntols++], m, sizeof m) != FB_OK)
                return cli_bad("check", "%s", m);
        } else if (cli_opt(argc, argv, &i, NULL, "--set", &val)) {
            if (val == NULL) return cli_missing("check", a);
            if (o->nsets == sizeof o->sets / sizeof o->sets[0])
                return cli_bad("check", "too many --set");
            o->sets[o->nsets++] = val;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_bad("check", "unknown option '%s' (see fusebox check --help)", a);
        } else {
            o->is_arg[i] = 1;
            o->nargs++;
        }
    }
    if (o->nargs == 0) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/*
 * The scenarios, one after the other or in `jobs` processes; their <testsuite>s go to body;
 * checked[i]: scenario i was checked (a signal stops the others).
 */
static int check_all(char **files, size_t nfiles, const args *a, FILE *body, counts *total,
                     bool *checked) {
    check_opts o = {a->sets, a->nsets, a->has_seed ? &a->seed : NULL, a->outdir, a->baseline,
                    a->tols, a->ntols};
    unsigned jobs = a->jobs;
    if (jobs > nfiles) jobs = (unsigned)nfiles;
    if (jobs > 1) return run_parallel(files, nfiles, jobs, &o, body, total, checked);
    for (size_t i = 0; i < nfiles && cli_stop_signal == 0; i++)
        checked[i] = check_one(files[i], &o, stdout, body, total);
    return CLI_OK;
}

static const char *signal_name(void) {
    return cli_stop_signal == SIGTERM ? "SIGTERM" : "SIGINT";
}

/*
 * An interrupted check's last <testsuite>: one <testcase> "interrupted" in error, the
 * scenarios not checked in its <system-out>.
 */
static void junit_interrupted(FILE *x, char **files, size_t nfiles, const bool *checked,
                              unsigned missing) {
    char msg[200];
    snprintf(msg, sizeof msg, "interrupted by %s: %u of %zu scenarios not checked", signal_name(),
             missing, nfiles);
    char *list = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&list, &len);
    if (mem == NULL) return;
    fputs("not checked:", mem);
    for (size_t i = 0; i < nfiles; i++)
        if (!checked[i]) fprintf(mem, " %s", files[i]);
    fclose(mem);
    util_out o = util_out_file(x);
    util_junit_suite_open(
        &o, &(util_junit_suite){.name = "fusebox check", .tests = 1, .errors = 1, .skipped = -1},
        UTIL_XML_APOS);
    junit_case(x, "fusebox check", "interrupted", "error", msg, list, 0);
    util_junit_suite_close(&o);
    free(list);
}

/* The JUnit file, written beside PATH and renamed over it: a failed check leaves PATH as it was. */
static int write_junit(FILE *x, const char *path, const char *tmp, FILE *body, const counts *total,
                       unsigned missing) {
    unsigned errors = total->errors + (missing > 0);
    util_out o = util_out_file(x);
    util_junit_open(&o,
                    &(util_junit_suite){.name = "fusebox check",
                                        .tests = total->passed + total->failed + errors,
                                        .failures = total->failed,
                                        .errors = (int)errors,
                                        .skipped = -1,
                                        .time_s = -1},
                    UTIL_XML_APOS);
    rewind(body);
    char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, body)) > 0) fwrite(buf, 1, k, x);
    util_junit_close(&o);
    /* A full disk shows only here: the write error is what fflush/fclose report. */
    return cli_file_commit(x, "check", path, tmp) == 0 ? CLI_OK : CLI_BAD_INPUT;
}

/* The totals on stdout; an interrupted check says so first. */
static void print_totals(const counts *total, size_t nfiles, unsigned missing) {
    unsigned errors = total->errors - total->unwritten;
    unsigned expectations = total->passed + total->failed + errors;
    if (missing > 0)
        printf("check: interrupted (%s) with %u of %zu scenarios not checked; ", signal_name(),
               missing, nfiles);
    else
        fputs("check: ", stdout);
    printf("%u scenario%s, %u expectation%s: %u passed, %u failed, %u error%s", total->scenarios,
           total->scenarios == 1 ? "" : "s", expectations, expectations == 1 ? "" : "s",
           total->passed, total->failed, errors, errors == 1 ? "" : "s");
    if (total->unwritten > 0) printf(", %u report.json not written", total->unwritten);
    putchar('\n');
    /* Piped, stdout is buffered: flushed now, a write error below is a line of its own. */
    fflush(stdout);
}

/* The exit code of a check that ran: a signal (128 + its number) above the results. */
static int check_status(const counts *total) {
    if (cli_stop_signal != 0) return 128 + cli_stop_signal;
    return total->errors ? CLI_BAD_INPUT : total->failed ? CLI_EXPECT_FAILED : CLI_OK;
}

/* The one line on stderr after a signal. */
static void say_interrupted(const char *junit, unsigned missing) {
    if (missing == 0)
        fprintf(stderr, "fusebox check: interrupted (%s) after every scenario was checked\n",
                signal_name());
    else if (junit != NULL)
        fprintf(stderr,
                "fusebox check: interrupted (%s); %s holds the scenarios checked and an "
                "\"interrupted\" error\n",
                signal_name(), junit);
    else
        fprintf(stderr, "fusebox check: interrupted (%s)\n", signal_name());
}

/* Check the files, print the totals, write the JUnit file. */
static int check_files(char **files, size_t nfiles, const args *a, bool *checked) {
    if (a->outdir && cli_mkdirs(a->outdir) != 0)
        return cli_bad("check", "cannot create %s: %s", a->outdir, strerror(errno));
    /* opened before anything runs: a path that cannot be written stops the command at once */
    char tmp[1100];
    FILE *junit = a->junit ? cli_file_begin("check", a->junit, true, tmp, sizeof tmp) : NULL;
    if (a->junit && junit == NULL) return CLI_BAD_INPUT;
    FILE *body = tmpfile();
    if (body == NULL) {
        if (junit) cli_file_discard(junit, tmp);
        return cli_bad("check", "cannot create a temporary file: %s", strerror(errno));
    }
    counts total = {0, 0, 0, 0, 0};
    int status = check_all(files, nfiles, a, body, &total, checked);
    unsigned missing = 0;
    for (size_t i = 0; i < nfiles; i++) missing += !checked[i];
    if (status == CLI_OK) {
        print_totals(&total, nfiles, missing);
        if (junit && missing > 0) junit_interrupted(body, files, nfiles, checked, missing);
        if (junit) status = write_junit(junit, a->junit, tmp, body, &total, missing);
        if (status == CLI_OK) status = check_status(&total);
    } else if (junit) {
        cli_file_discard(junit, tmp);
    }
    if (cli_stop_signal != 0 && status != CLI_BAD_INPUT) say_interrupted(a->junit, missing);
    fclose(body);
    return status;
}

int cli_cmd_check(int argc, char **argv) {
    args a;
    int status = parse_args(argc, argv, &a);
    if (status != CLI_OK) return status < 0 ? CLI_OK : status;
    char **files = calloc(CHECK_FILES_MAX, sizeof *files);
    if (files == NULL) return cli_bad("check", "out of memory");
    size_t nfiles = 0;
    status = collect_files("check", argc, argv, a.is_arg, files, &nfiles);
    bool *checked = calloc(nfiles ? nfiles : 1, sizeof *checked);
    if (status == CLI_OK && checked == NULL) status = cli_bad("check", "out of memory");
    cli_catch_stop_signals(true); /* a write in progress must not fail */
    if (status == CLI_OK) status = check_files(files, nfiles, &a, checked);
    free(checked);
    for (size_t i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    return status;
}

static void validate_usage(FILE *f) {
    cli_help_puts("usage: fusebox validate FILE|DIR... [--set KEY=VALUE]...\n\n"
                  "Check scenario files (keys, types, values, expectations) without\n"
                  "running them; a DIR means every .json file in it, sorted.\n"
                  "\n"
                  "options:\n"
                  "      --set KEY=VALUE  override a value in every scenario first, as\n"
                  "                       'fusebox run --set' does (repeatable)\n"
                  "  -h, --help           this text\n"
                  "\n"
                  "Exit codes: 0 all valid, 2 something is not.\n"
                  "docs/scenario.schema.json is the same format as a JSON Schema for editors.\n",
                  f);
}

/*
 * A file that does not load: its first error, then the others the loader finds in one pass
 * (scn_check_all: every unknown key, capped). The list is printed only when it
 * starts with the same error as the load, which read policy files too.
 */
static void every_error(const char *file, const char *const *sets, size_t nsets,
                        const sim_error *err) {
    cli_scenario_error(err);
    size_t len = 0;
    char *text = cli_read_file(file, 16u << 20, &len);
    sim_errors *all = text ? malloc(sizeof *all) : NULL;
    if (all && scn_check_all(text, len, file, sets, nsets, all) != FB_OK &&
        strcmp(all->e[0].path, err->path) == 0 && strcmp(all->e[0].msg, err->msg) == 0) {
        for (uint32_t k = 1; k < all->count; k++) cli_scenario_error(&all->e[k]);
        if (all->more)
            fprintf(stderr, "fusebox: %s: more errors after these %d (the cap)\n", file,
                    SIM_ERRORS_MAX);
    }
    free(all);
    free(text);
}

/* One scenario file: "ok FILE (...)" on stdout, or its errors on stderr and false. */
static bool validate_one(const char *file, const char *const *sets, size_t nsets) {
    sim_scenario *sc = NULL;
    sim_error err;
    if (scn_load_import(file, sets, nsets, NULL, &cli_importer, &sc, &err) != FB_OK) {
        fflush(stdout);
        every_error(file, sets, nsets, &err);
        return false;
    }
    fflush(stdout); /* the notes after the ok lines before them, also when piped */
    cli_print_notes("validate", sc);
    bool ok = true;
    for (uint32_t k = 0; k < sc->expect_count; k++) {
        char m[300];
        if (rep_expect_validate(sc, sc->expect[k], m, sizeof m) != FB_OK) {
            fflush(stdout);
            fprintf(stderr, "fusebox: %s: expect[%u]: %s\n", file, k, m);
            ok = false;
        }
    }
    if (ok)
        printf("ok %s (%u variant%s, %u expectation%s)\n", file, sc->variant_count,
               sc->variant_count == 1 ? "" : "s", sc->expect_count,
               sc->expect_count == 1 ? "" : "s");
    scn_free(sc);
    return ok;
}

int cli_cmd_validate(int argc, char **argv) {
    /* The same arguments as check's, of which validate takes FILE|DIR and --set. */
    args a;
    memset(&a, 0, sizeof a);
    if (argc > 1024) return cli_bad("validate", "too many arguments");
    for (int i = 1; i < argc; i++) {
        const char *val = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            validate_usage(stdout);
            return CLI_OK;
        } else if (cli_opt(argc, argv, &i, NULL, "--set", &val)) {
            if (val == NULL) return cli_missing("validate", "--set");
            if (a.nsets == sizeof a.sets / sizeof a.sets[0])
                return cli_bad("validate", "too many --set");
            a.sets[a.nsets++] = val;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_bad("validate", "unknown option '%s' (see fusebox validate --help)",
                           argv[i]);
        } else {
            a.is_arg[i] = 1;
            a.nargs++;
        }
    }
    if (a.nargs == 0) {
        validate_usage(stderr);
        return CLI_BAD_INPUT;
    }
    char **files = calloc(CHECK_FILES_MAX, sizeof *files);
    if (files == NULL) return cli_bad("validate", "out of memory");
    size_t nfiles = 0;
    int status = collect_files("validate", argc, argv, a.is_arg, files, &nfiles);
    /* Every file is validated, also after one that is not valid. */
    bool all_ok = true;
    for (size_t i = 0; status == CLI_OK && i < nfiles; i++)
        all_ok &= validate_one(files[i], a.sets, a.nsets);
    if (status == CLI_OK && !all_ok) status = CLI_BAD_INPUT;
    for (size_t i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    return status;
}
