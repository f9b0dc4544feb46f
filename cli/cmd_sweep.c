/*
 * cmd_sweep.c - 'fusebox sweep': parse the options, run the sweep's tasks in
 * worker processes, write the outputs (or a shard's partial file).
 *
 * Worker w of N runs tasks w, w + N, w + 2N, ... of the list and writes one
 * fixed-size record per task to its pipe; the parent files each result under
 * its task number, so the outputs do not depend on N or on timing.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/sweep_opts.h"
#include "reports/report.h"
#include "sweep/sweep.h"

#define JOBS_MAX 256

static void usage(FILE *f) {
    fputs("usage: fusebox sweep SCENARIO --grid KEY=VALUES [--grid ...] [options]\n"
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
    fputs(cli_sweep_analysis_help, f);
    fputs("  -j, --jobs N           worker processes (default: the online CPUs)\n"
          "      --shard K/N        run only shard K of N (runs whose number % N == K-1)\n"
          "                         and write DIR/sweep.part-K-of-N.json for fusebox merge\n"
          "  -o, --out DIR          output folder (default out/<scenario name>-sweep)\n"
          "      --no-charts        skip the gnuplot charts and sweep.html\n"
          "  -q, --quiet            no answer on stdout, no progress on stderr\n"
          "  -h, --help             this text\n"
          "\n"
          "Exit codes: 0 ok, 1 no point satisfies --subject-to, 2 bad input or a run\n"
          "stopped by a cap.\n",
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

/* ---- workers ---- */

typedef struct record {
    uint64_t task;
    int32_t status;
    char msg[SWEEP_MSG_MAX];
} record;

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

_Noreturn static void worker(const sweep *sw, const uint64_t *tasks, size_t ntasks, size_t w,
                             size_t jobs, int fd) {
    size_t m = sweep_metric_count(sw), size = sizeof(record) + m * sizeof(double);
    char *buf = malloc(size);
    if (buf == NULL) _exit(3);
    for (size_t i = w; i < ntasks; i += jobs) {
        record rec;
        memset(&rec, 0, sizeof rec);
        rec.task = tasks[i];
        rec.status =
            sweep_run_task(sw, tasks[i], (double *)(buf + sizeof rec), rec.msg, sizeof rec.msg);
        memcpy(buf, &rec, sizeof rec);
        if (write_full(fd, buf, size) != 0) _exit(3);
    }
    free(buf);
    /* exit, not _exit: stdio was flushed before the fork, and LeakSanitizer checks workers too */
    exit(0);
}

static int collect(sweep *sw, struct pollfd *pfd, size_t jobs, progress *pg) {
    size_t m = sweep_metric_count(sw), size = sizeof(record) + m * sizeof(double);
    char *buf = malloc(size);
    if (buf == NULL) return cli_bad("sweep", "out of memory");
    size_t open = jobs;
    int status = CLI_OK;
    while (open > 0) {
        if (poll(pfd, (nfds_t)jobs, -1) < 0) {
            if (errno == EINTR) continue;
            status = cli_bad("sweep", "poll: %s", strerror(errno));
            break;
        }
        for (size_t w = 0; w < jobs; w++) {
            if (pfd[w].fd < 0 || pfd[w].revents == 0) continue;
            int r = read_full(pfd[w].fd, buf, size);
            if (r <= 0) {
                close(pfd[w].fd);
                pfd[w].fd = -1;
                open--;
                continue;
            }
            record rec;
            memcpy(&rec, buf, sizeof rec);
            rec.msg[sizeof rec.msg - 1] = '\0';
            sweep_set_result(sw, rec.task, rec.status, (const double *)(buf + sizeof rec), rec.msg);
            pg->done++;
            progress_show(pg, false);
        }
    }
    free(buf);
    return status;
}

static int run_tasks(sweep *sw, const uint64_t *tasks, size_t ntasks, size_t jobs, progress *pg) {
    if (ntasks == 0) return CLI_OK;
    if (jobs > ntasks) jobs = ntasks;
    struct pollfd pfd[JOBS_MAX];
    pid_t pid[JOBS_MAX];
    size_t started = 0;
    int status = CLI_OK;
    fflush(stdout);
    fflush(stderr);
    for (size_t w = 0; w < jobs; w++) {
        int fd[2];
        if (pipe(fd) != 0) {
            status = cli_bad("sweep", "pipe: %s", strerror(errno));
            break;
        }
        pid[w] = fork();
        if (pid[w] < 0) {
            status = cli_bad("sweep", "fork: %s", strerror(errno));
            close(fd[0]);
            close(fd[1]);
            break;
        }
        if (pid[w] == 0) {
            for (size_t k = 0; k < w; k++) close(pfd[k].fd);
            close(fd[0]);
            worker(sw, tasks, ntasks, w, jobs, fd[1]);
        }
        close(fd[1]);
        pfd[w].fd = fd[0];
        pfd[w].events = POLLIN;
        started++;
    }
    if (status != CLI_OK) {
        for (size_t w = 0; w < started; w++) kill(pid[w], SIGTERM);
        started = started > 0 ? started : 0;
    }
    int cs = collect(sw, pfd, started, pg);
    if (status == CLI_OK) status = cs;
    for (size_t w = 0; w < started; w++) {
        int ws = 0;
        while (waitpid(pid[w], &ws, 0) < 0 && errno == EINTR) continue;
        if (status == CLI_OK && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) {
            if (WIFSIGNALED(ws))
                status = cli_bad("sweep", "worker %zu was killed by signal %d", w, WTERMSIG(ws));
            else
                status = cli_bad("sweep", "worker %zu exited with status %d", w, WEXITSTATUS(ws));
        }
    }
    return status;
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
    bool charts, quiet;
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

static int write_part(const sweep *sw, const char *dir, uint32_t k, uint32_t n, bool quiet,
                      uint64_t runs) {
    if (cli_mkdirs(dir) != 0) return cli_bad("sweep", "cannot create %s: %s", dir, strerror(errno));
    char name[64];
    snprintf(name, sizeof name, "sweep.part-%u-of-%u.json", k, n);
    FILE *f = cli_fopen(dir, name);
    if (f == NULL) return CLI_BAD_INPUT;
    int rc = sweep_write_part(f, sw, k, n);
    if (fclose(f) != 0 || rc != FB_OK) return cli_bad("sweep", "cannot write %s/%s", dir, name);
    if (!quiet)
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

int cmd_sweep(int argc, char **argv) {
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
    sweep *sw = NULL;
    char msg[2048];
    if (sweep_create(&o.a, &sw, msg, sizeof msg) != FB_OK) return cli_bad("sweep", "%s", msg);
    char dir[1024];
    if (o.out)
        snprintf(dir, sizeof dir, "%s", o.out);
    else
        snprintf(dir, sizeof dir, "out/%s-sweep", sweep_scenario_name(sw));
    uint64_t total = sweep_task_count(sw), n = 0;
    uint64_t *tasks = malloc(total * sizeof *tasks);
    if (tasks == NULL) {
        sweep_destroy(sw);
        return cli_bad("sweep", "out of memory");
    }
    for (uint64_t t = 0; t < total; t++)
        if (o.shard_n == 0 || sweep_in_shard(t, o.shard_k, o.shard_n)) tasks[n++] = t;
    progress pg = {!o.quiet && isatty(STDERR_FILENO), n, 0, now_s(), 0};
    progress_show(&pg, true);
    int status = run_tasks(sw, tasks, n, o.jobs, &pg);
    progress_end(&pg);
    free(tasks);
    if (status == CLI_OK) {
        if (o.shard_n > 0)
            status = write_part(sw, dir, o.shard_k, o.shard_n, o.quiet, n);
        else
            status = cli_sweep_finish("sweep", sw, dir, o.charts, o.quiet);
    }
    sweep_destroy(sw);
    return status;
}
