/*
 * cmd_sweep.c - 'fusebox sweep': parse the options, run the sweep's tasks in
 * worker processes, write the outputs (or a shard's partial file).
 *
 * The runs go to worker processes (cli/sweep_pool.c); SIGINT and SIGTERM
 * stop them and keep the finished runs in a partial file that --resume
 * continues from; the outputs are staged and renamed (sweep/save.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/sweep_opts.h"
#include "cli/sweep_pool.h"
#include "reports/report.h"
#include "sweep/sweep.h"

#define JOBS_MAX CLI_SWEEP_JOBS_MAX

static void usage(FILE *f) {
    cli_help_puts(
        "usage: fusebox sweep SCENARIO --grid KEY=VALUES [--grid ...] [options]\n"
        "\n"
        "Run one variant of SCENARIO over every combination of the --grid values\n"
        "(or a Latin hypercube sample of ranges), each on several seeds, and write\n"
        "sweep.csv, sweep-points.csv, sweep.json, charts and sweep.html. With an\n"
        "objective, print the best setting as a ready-to-paste policy. See\n"
        "docs/sweeps.md.\n"
        "\n"
        "  --grid KEY=v1,v2,...   a dimension with listed values; the points are every\n"
        "                         combination of the --grid dimensions (full factorial)\n"
        "  --grid KEY=LO..HI      a range (with --sample): numbers, integers or durations\n"
        "                         (100ms..2s); KEY=log:LO..HI samples log-uniformly\n"
        "                         KEY is relative to the variant's policy (breaker.open\n"
        "                         means variants.NAME.breaker.open) unless it starts\n"
        "                         with a top-level key (providers., traffic, pods., ...)\n"
        "      --sample N         N points from a Latin hypercube over the dimensions\n"
        "      --variant NAME     the variant to tune (default: the scenario's last\n"
        "                         variant, usually the tuned one)\n"
        "      --seeds K          run each point on seeds S, S+1, ..., S+K-1 (default 3)\n"
        "      --seed S           the first seed (default: the scenario's seed)\n"
        "      --set KEY=VALUE    change the scenario for every run (as fusebox run)\n",
        f);
    cli_help_puts(cli_sweep_analysis_help, f);
    cli_help_puts(
        "  -j, --jobs N           worker processes (default: the online CPUs)\n"
        "      --shard K/N        run only shard K of N (runs whose number % N == K-1)\n"
        "                         and write DIR/sweep.part-K-of-N.json for fusebox merge\n"
        "  -o, --out DIR          output folder (default out/<scenario name>-sweep)\n"
        "      --resume           continue the interrupted sweep in DIR (its partial file\n"
        "                         DIR/sweep.partial.json, or sweep.part-K-of-N.partial.json)\n"
        "      --no-charts        skip the gnuplot charts and sweep.html\n"
        "  -q, --quiet            no answer on stdout, no progress on stderr\n"
        "  -h, --help             this text\n"
        "\n"
        "SIGINT or SIGTERM stops the sweep: the finished runs go to the partial file,\n"
        "the outputs already in DIR stay as they were (exit 130 or 143).\n"
        "\n"
        "Exit codes: 0 ok, 1 no point satisfies --subject-to, 2 bad input, a file that\n"
        "could not be written, or a run stopped by a cap.\n",
        f);
}

/* ---- progress ---- */

typedef struct progress {
    bool on;
    uint64_t total, done;
    double start_s, last_s;
} progress;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_show(progress *pg, bool force) {
    if (!pg->on) return;
    double t = now_s();
    if (!force && t - pg->last_s < 0.1) return;
    pg->last_s = t;
    double elapsed = t - pg->start_s, frac = pg->total ? (double)pg->done / (double)pg->total : 1;
    char bar[31], took[32], eta[32] = "";
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    rep_format_duration(took, sizeof took, elapsed * 1e6);
    if (pg->done > 0 && pg->done < pg->total) {
        strcpy(eta, "  ETA ");
        rep_format_duration(eta + 6, sizeof eta - 6, (elapsed / frac - elapsed) * 1e6);
    }
    fprintf(stderr, "\r  [%s] %llu/%llu runs %3.0f%%  %s%s\033[K", bar,
            (unsigned long long)pg->done, (unsigned long long)pg->total, 100 * frac, took, eta);
    fflush(stderr);
}

static void progress_end(progress *pg) {
    if (pg->on) fputs("\r\033[K", stderr);
}

/* ---- options ---- */

typedef struct sweep_opts {
    sweep_args a;
    const char *sets[SWEEP_SETS_MAX];
    const char *grids[SWEEP_DIMS_MAX];
    uint64_t seed;
    const char *out;
    uint64_t jobs;
    uint32_t shard_k, shard_n;
    bool charts, quiet, resume;
} sweep_opts;

static int parse_u32(const char *opt, const char *val, uint64_t max, uint32_t *out) {
    uint64_t v;
    if (cli_parse_u64(val, &v) != 0 || v == 0 || v > max)
        return cli_bad("sweep", "%s needs an integer from 1 to %llu, got '%s'", opt,
                       (unsigned long long)max, val);
    *out = (uint32_t)v;
    return CLI_OK;
}

static int parse_shard(const char *val, sweep_opts *o) {
    const char *slash = strchr(val, '/');
    char k[32];
    if (slash == NULL || (size_t)(slash - val) >= sizeof k) goto bad;
    memcpy(k, val, (size_t)(slash - val));
    k[slash - val] = '\0';
    uint64_t kk, nn;
    if (cli_parse_u64(k, &kk) != 0 || cli_parse_u64(slash + 1, &nn) != 0 || kk < 1 || kk > nn ||
        nn > SWEEP_TASKS_MAX)
        goto bad;
    o->shard_k = (uint32_t)kk;
    o->shard_n = (uint32_t)nn;
    return CLI_OK;
bad:
    return cli_bad("sweep", "--shard needs K/N with 1 <= K <= N (e.g. 2/8), got '%s'", val);
}

/* Returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, sweep_opts *o) {
    o->a.import = &cli_importer;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int r = cli_sweep_analysis_opt("sweep", argc, argv, &i, &o->a);
        if (r == CLI_BAD_INPUT) return r;
        if (r == 1) continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        } else if (cli_opt(argc, argv, &i, NULL, "--grid", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            if (o->a.grid_count == SWEEP_DIMS_MAX)
                return cli_bad("sweep", "at most %d --grid dimensions", SWEEP_DIMS_MAX);
            o->grids[o->a.grid_count++] = val;
        } else if (cli_opt(argc, argv, &i, NULL, "--set", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            if (o->a.set_count == SWEEP_SETS_MAX) return cli_bad("sweep", "too many --set");
            o->sets[o->a.set_count++] = val;
        } else if (cli_opt(argc, argv, &i, NULL, "--sample", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            if (parse_u32(a, val, SWEEP_TASKS_MAX, &o->a.sample) != CLI_OK) return CLI_BAD_INPUT;
        } else if (cli_opt(argc, argv, &i, NULL, "--seeds", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            if (parse_u32(a, val, SWEEP_SEEDS_MAX, &o->a.seeds) != CLI_OK) return CLI_BAD_INPUT;
        } else if (cli_opt(argc, argv, &i, NULL, "--seed", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            if (cli_parse_u64(val, &o->seed) != 0)
                return cli_bad("sweep", "--seed needs a non-negative integer, got '%s'", val);
            o->a.seed = &o->seed;
        } else if (cli_opt(argc, argv, &i, NULL, "--variant", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            o->a.variant = val;
        } else if (cli_opt(argc, argv, &i, "-j", "--jobs", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            uint32_t j = 0;
            if (parse_u32(a, val, JOBS_MAX, &j) != CLI_OK) return CLI_BAD_INPUT;
            o->jobs = j;
        } else if (cli_opt(argc, argv, &i, NULL, "--shard", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            if (parse_shard(val, o) != CLI_OK) return CLI_BAD_INPUT;
        } else if (cli_opt(argc, argv, &i, "-o", "--out", &val)) {
            if (val == NULL) return cli_missing("sweep", a);
            o->out = val;
        } else if (strcmp(a, "--no-charts") == 0) {
            o->charts = false;
        } else if (strcmp(a, "--resume") == 0) {
            o->resume = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_bad("sweep", "unknown option '%s' (see fusebox sweep --help)", a);
        } else if (o->a.scenario_file == NULL) {
            o->a.scenario_file = a;
        } else {
            return cli_bad("sweep", "one scenario at a time (got '%s' and '%s')",
                           o->a.scenario_file, a);
        }
    }
    if (o->a.scenario_file == NULL) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    return -1;
}

/* The partial file's name: DIR/sweep.part-K-of-N.json, or an interrupted sweep's. */
static void part_name(const sweep_opts *o, bool interrupted, char *buf, size_t len) {
    if (o->shard_n == 0)
        snprintf(buf, len, "sweep.partial.json");
    else
        snprintf(buf, len, "sweep.part-%u-of-%u%s.json", o->shard_k, o->shard_n,
                 interrupted ? ".partial" : "");
}

static int write_part(const sweep *sw, const sweep_opts *o, const char *dir, uint64_t runs,
                      bool *written) {
    if (cli_mkdirs(dir) != 0) return cli_bad("sweep", "cannot create %s: %s", dir, strerror(errno));
    char name[64], msg[1400];
    part_name(o, false, name, sizeof name);
    if (sweep_save_part(sw, dir, name, o->shard_k, o->shard_n, false, msg, sizeof msg) != FB_OK)
        return cli_bad("sweep", "%s", msg);
    *written = true;
    if (!o->quiet)
        printf("wrote %s/%s (%llu of %llu runs); combine the shards with fusebox merge\n", dir,
               name, (unsigned long long)runs, (unsigned long long)sweep_task_count(sw));
    const char *first = NULL;
    uint64_t failed = sweep_failed(sw, &first);
    if (failed > 0) {
        fprintf(stderr, "fusebox sweep: %llu run%s failed; the first: %s\n",
                (unsigned long long)failed, failed == 1 ? "" : "s", first ? first : "?");
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* SIGINT/SIGTERM: the finished runs into the partial file, one line, exit 130/143. */
static int interrupted(const sweep *sw, const sweep_opts *o, const char *dir) {
    int sig = cli_stop_signal;
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    char file[64], msg[1400];
    part_name(o, true, file, sizeof file);
    uint64_t k = o->shard_n ? o->shard_k : 1, n = o->shard_n ? o->shard_n : 1;
    uint64_t done = sweep_result_count(sw, o->shard_k, o->shard_n), total = 0;
    for (uint64_t t = 0; t < sweep_task_count(sw); t++)
        total += o->shard_n == 0 || sweep_in_shard(t, o->shard_k, o->shard_n);
    int rc = FB_OK;
    if (cli_mkdirs(dir) != 0) {
        snprintf(msg, sizeof msg, "cannot create %s: %s", dir, strerror(errno));
        rc = FB_EIO;
    }
    if (rc == FB_OK)
        rc = sweep_save_part(sw, dir, file, (uint32_t)k, (uint32_t)n, true, msg, sizeof msg);
    if (rc != FB_OK) {
        fprintf(stderr, "fusebox sweep: interrupted by %s; its %llu finished runs are lost: %s\n",
                name, (unsigned long long)done, msg);
        return 128 + sig;
    }
    fprintf(stderr,
            "fusebox sweep: interrupted by %s: %llu of %llu runs kept in %s/%s (the outputs in %s "
            "are untouched); the same command with --resume continues\n",
            name, (unsigned long long)done, (unsigned long long)total, dir, file, dir);
    return 128 + sig;
}

/* --resume: the finished runs of the interrupted sweep's partial file in dir. */
static int resume(sweep *sw, const sweep_opts *o, const char *dir) {
    char file[64], path[1200], msg[2048];
    part_name(o, true, file, sizeof file);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    uint64_t loaded = 0;
    if (access(path, F_OK) != 0)
        return cli_bad("sweep", "--resume: no interrupted sweep to continue (%s: %s)", path,
                       strerror(errno));
    if (sweep_resume(sw, path, o->shard_n ? o->shard_k : 1, o->shard_n ? o->shard_n : 1, &loaded,
                     msg, sizeof msg) != FB_OK)
        return cli_bad("sweep", "--resume: %s", msg);
    if (!o->quiet)
        fprintf(stderr, "fusebox sweep: resuming from %s (%llu runs done)\n", path,
                (unsigned long long)loaded);
    return CLI_OK;
}

static void progress_tick(void *ctx) {
    progress *pg = ctx;
    pg->done++;
    progress_show(pg, false);
}

/* Run what has no result yet, then write the outputs or the shard's file; the exit code. */
static int run_and_write(sweep *sw, const sweep_opts *o, const char *dir) {
    uint64_t total = sweep_task_count(sw), n = 0;
    uint64_t *tasks = malloc((total ? total : 1) * sizeof *tasks);
    if (tasks == NULL) return cli_bad("sweep", "out of memory");
    uint64_t runs = 0;
    for (uint64_t t = 0; t < total; t++) {
        if (o->shard_n != 0 && !sweep_in_shard(t, o->shard_k, o->shard_n)) continue;
        runs++;
        if (!sweep_has_result(sw, t)) tasks[n++] = t;
    }
    progress pg = {!o->quiet && isatty(STDERR_FILENO), runs, runs - n, now_s(), 0};
    progress_show(&pg, true);
    int status = cli_sweep_pool_run(sw, tasks, n, o->jobs, progress_tick, &pg);
    progress_end(&pg);
    free(tasks);
    if (cli_stop_signal) return interrupted(sw, o, dir);
    if (status != CLI_OK) return status;
    bool written = false;
    if (o->shard_n > 0) {
        status = write_part(sw, o, dir, runs, &written);
    } else {
        status = cli_sweep_finish("sweep", sw, dir, o->charts, o->quiet, &written);
    }
    /* a signal while the outputs were written (gnuplot killed by Ctrl-C): they were not */
    if (!written && cli_stop_signal) return interrupted(sw, o, dir);
    if (written) {
        char file[64], path[1200];
        part_name(o, true, file, sizeof file);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        remove(path); /* finished: an earlier interrupted attempt's file is spent */
    }
    if (written && cli_stop_signal) {
        fprintf(stderr,
                "fusebox sweep: %s came while the outputs were written; they are complete\n",
                cli_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        return 128 + cli_stop_signal;
    }
    return status;
}

int cli_cmd_sweep(int argc, char **argv) {
    sweep_opts o;
    memset(&o, 0, sizeof o);
    o.charts = true;
    o.a.sets = o.sets;
    o.a.grids = o.grids;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    if (o.jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.jobs = n < 1 ? 1 : n > JOBS_MAX ? JOBS_MAX : (uint64_t)n;
    }
    cli_sweep_catch_signals();
    sweep *sw = NULL;
    char msg[2048];
    if (sweep_create(&o.a, &sw, msg, sizeof msg) != FB_OK) return cli_bad("sweep", "%s", msg);
    char dir[1024];
    if (o.out)
        snprintf(dir, sizeof dir, "%s", o.out);
    else
        snprintf(dir, sizeof dir, "out/%s-sweep", sweep_scenario_name(sw));
    int status = o.resume ? resume(sw, &o, dir) : CLI_OK;
    if (status == CLI_OK) status = run_and_write(sw, &o, dir);
    sweep_destroy(sw);
    return status;
}
