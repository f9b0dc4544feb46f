/*
 * cmd_tune.c - 'fusebox tune': one setting of a variant's knobs for several
 * scenarios, searched within a budget of runs (sweep/tune.h); each batch of
 * runs, which spans the scenarios, goes to worker processes (util/pool.h);
 * the signals are cli/sweep_pool.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/sweep_pool.h"
#include "sweep/tune.h"
#include "util/pool.h"

#define JOBS_MAX CLI_SWEEP_JOBS_MAX

static void usage(FILE *f) {
    cli_help_puts(
        "usage: fusebox tune SCENARIO|DIR... --knob KEY=VALUES [--knob ...]\n"
        "                    --minimize|--maximize METRIC [--subject-to LIST] [options]\n"
        "\n"
        "Find one setting of the variant's knobs that satisfies every constraint in\n"
        "every scenario and optimises the objective across them, within a budget of\n"
        "runs; every candidate runs on the same seeds (common random numbers). Prints\n"
        "the recommendation, its figures next to the current settings', the binding\n"
        "constraints and each knob's sensitivity; writes DIR/tune.json, DIR/charts/\n"
        "and tune.html. See docs/tune.md.\n"
        "\n"
        "  SCENARIO|DIR           scenario files, or folders of them (*.json)\n"
        "  --knob KEY=v1,v2,...   a knob and its values (KEY as sweep's --grid: relative\n"
        "                         to the variant's policy, or layers.NAME.KEY, ...)\n"
        "  --knob KEY=LO..HI      a range, cut into --levels evenly spaced values\n"
        "                         (numbers, integers or durations; KEY=log:LO..HI)\n"
        "      --levels N         values per range knob (default 5)\n"
        "      --minimize METRIC  the objective (metric names: docs/metrics.md)\n"
        "      --maximize METRIC  ... or the other way; a second --minimize or\n"
        "                         --maximize is traded off against the first: the\n"
        "                         answer lists their Pareto front, charts/ draws it\n"
        "      --subject-to LIST  constraints every scenario must meet on the seeds' mean:\n"
        "                         \"success_rate>=0.999,latency_p99<=10s\"\n"
        "      --across worst|mean  the objective across scenarios (default worst)\n"
        "      --weight NAME=W    scenario NAME (its file, or its name without .json)\n"
        "                         weighs W in the mean across scenarios (the others 1;\n"
        "                         0: its constraints only); implies --across mean\n"
        "      --budget RUNS      the search's cap on runs (default 10% of the full grid,\n"
        "                         rounded down: points x seeds x scenarios)\n"
        "      --search nlopt|halving|direct  the budgeted search: a Latin hypercube\n"
        "                         sample on one seed, the best third on more seeds, one\n"
        "                         knob at a time around the best, then NLopt's COBYLA on\n"
        "                         the budget left (nlopt, the default); the same without\n"
        "                         COBYLA (halving); or NLopt's DIRECT-L instead of the\n"
        "                         sample, then COBYLA (direct)\n"
        "      --exhaustive       run the full grid (the budget is all of it)\n"
        "      --screen DURATION  a cheaper first fidelity: screen the sample on one seed\n"
        "                         with every scenario cut to DURATION (such a run counts\n"
        "                         as DURATION / the scenario's duration of a run)\n"
        "      --variant NAME     the variant to tune, in every scenario (default: each\n"
        "                         scenario's last variant)\n"
        "      --seeds K          seeds S..S+K-1 for every candidate (default 3)\n"
        "      --seed S           the first seed (default: each scenario's seed)\n"
        "      --set KEY=VALUE    change every scenario for every run (as fusebox run)\n"
        "  -j, --jobs N           worker processes (default: the online CPUs)\n"
        "  -o, --out DIR          output folder for tune.json, charts/ and tune.html\n"
        "                         (default out/tune)\n"
        "      --no-charts        no gnuplot charts (tune.html without them)\n"
        "      --shard K/N        with --exhaustive: only shard K of N of the full grid\n"
        "                         (runs whose number % N == K-1) to DIR/tune.part-K-of-N/;\n"
        "                         without: shard K of N of the round DIR/tune.round.json\n"
        "                         plans, to DIR/tune.round-R/part-K-of-N/\n"
        "      --merge N          with --exhaustive and the same options: the answer from\n"
        "                         the N shards' files in DIR, nothing run again; without:\n"
        "                         the rounds so far, then the next round planned in\n"
        "                         DIR/tune.round.json (exit 3) or the answer\n"
        "  -q, --quiet            no answer on stdout\n"
        "  -h, --help             this text\n"
        "\n"
        "SIGINT or SIGTERM stops the runs; nothing is written (exit 130 or 143).\n"
        "\n"
        "Exit codes: 0 ok, 1 no evaluated setting satisfies every constraint in every\n"
        "scenario, 2 bad input, a file that could not be written, or a run stopped by\n"
        "a cap, 3 --merge planned another round (run its shards, then merge again).\n",
        f);
}

typedef struct tune_opts {
    sweep_tune_args a;
    char *files[SWEEP_TUNE_SCENARIOS_MAX];
    size_t nfiles;
    const char *sets[SWEEP_SETS_MAX];
    const char *knobs[SWEEP_DIMS_MAX];
    const char *weights[SWEEP_TUNE_SCENARIOS_MAX];
    bool across_given;
    uint64_t seed, jobs;
    const char *out;
    bool quiet, no_charts;
    uint32_t shard_k, shard_n, merge_n; /* --shard K/N, --merge N (0: none) */
    uint64_t command;                   /* the command's fingerprint (rounds) */
} tune_opts;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static int add_file(tune_opts *o, const char *path) {
    for (size_t i = 0; i < o->nfiles; i++)
        if (strcmp(o->files[i], path) == 0) return cli_bad("tune", "%s is given twice", path);
    if (o->nfiles == SWEEP_TUNE_SCENARIOS_MAX)
        return cli_bad("tune", "at most %d scenarios", SWEEP_TUNE_SCENARIOS_MAX);
    o->files[o->nfiles] = strdup(path);
    if (o->files[o->nfiles] == NULL) return cli_bad("tune", "out of memory");
    o->nfiles++;
    return CLI_OK;
}

/* A scenario file, or a folder's *.json (sorted). */
static int add_scenarios(tune_opts *o, const char *arg) {
    struct stat st;
    if (stat(arg, &st) != 0) return cli_bad("tune", "%s: %s", arg, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return add_file(o, arg);
    DIR *d = opendir(arg);
    if (d == NULL) return cli_bad("tune", "%s: %s", arg, strerror(errno));
    size_t first = o->nfiles;
    struct dirent *e;
    int rc = CLI_OK;
    while (rc == CLI_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s%s%s", arg, ends_with(arg, "/") ? "" : "/", e->d_name);
        rc = add_file(o, path);
    }
    closedir(d);
    if (rc != CLI_OK) return rc;
    qsort(o->files + first, o->nfiles - first, sizeof *o->files, cmp_str);
    if (o->nfiles == first) return cli_bad("tune", "%s holds no .json scenario", arg);
    return CLI_OK;
}

static int parse_count(const char *opt, const char *val, uint64_t lo, uint64_t max, uint64_t *out) {
    uint64_t v;
    if (cli_parse_u64(val, &v) != 0 || v < lo || v > max)
        return cli_bad("tune", "%s needs an integer from %llu to %llu, got '%s'", opt,
                       (unsigned long long)lo, (unsigned long long)max, val);
    *out = v;
    return CLI_OK;
}

/* --shard K/N. */
static int parse_shard(const char *val, tune_opts *o) {
    const char *slash = strchr(val, '/');
    uint64_t k = 0, n = 0;
    char kt[32];
    if (slash && (size_t)(slash - val) < sizeof kt) {
        memcpy(kt, val, (size_t)(slash - val));
        kt[slash - val] = '\0';
    }
    if (slash == NULL || (size_t)(slash - val) >= sizeof kt || cli_parse_u64(kt, &k) != 0 ||
        cli_parse_u64(slash + 1, &n) != 0 || k < 1 || k > n || n > 100000)
        return cli_bad("tune",
                       "--shard needs K/N with 1 <= K <= N <= 100000 (e.g. 2/8), got "
                       "'%s'",
                       val);
    o->shard_k = (uint32_t)k;
    o->shard_n = (uint32_t)n;
    return CLI_OK;
}

/* --search's value: CLI_OK, or CLI_BAD_INPUT (printed). */
static int search_method(const char *val, sweep_tune_method *m) {
    if (strcmp(val, "nlopt") == 0)
        *m = SWEEP_TUNE_NLOPT;
    else if (strcmp(val, "halving") == 0)
        *m = SWEEP_TUNE_HALVING;
    else if (strcmp(val, "direct") == 0)
        *m = SWEEP_TUNE_DIRECT;
    else
        return cli_bad("tune", "--search needs nlopt, halving or direct, got '%s'", val);
    return CLI_OK;
}

/* The search's options: 1 on a match, 0 otherwise, CLI_BAD_INPUT (printed). */
static int search_opt(int argc, char **argv, int *i, tune_opts *o) {
    const char *a = argv[*i], *val = NULL;
    uint64_t v = 0;
    if (cli_opt(argc, argv, i, NULL, "--minimize", &val) ||
        cli_opt(argc, argv, i, NULL, "--maximize", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        int sense = strncmp(a, "--maximize", 10) == 0 ? -1 : 1;
        if (o->a.second)
            return cli_bad("tune", "at most two objectives (--minimize or --maximize, twice)");
        if (o->a.objective) { /* the second: traded off against the first */
            o->a.second = val;
            o->a.second_sense = sense;
        } else {
            o->a.objective = val;
            o->a.sense = sense;
        }
    } else if (cli_opt(argc, argv, i, NULL, "--subject-to", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        o->a.subject_to = val;
    } else if (cli_opt(argc, argv, i, NULL, "--knob", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (o->a.knob_count == SWEEP_DIMS_MAX)
            return cli_bad("tune", "at most %d --knob", SWEEP_DIMS_MAX);
        o->knobs[o->a.knob_count++] = val;
    } else if (cli_opt(argc, argv, i, NULL, "--set", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (o->a.set_count == SWEEP_SETS_MAX) return cli_bad("tune", "too many --set");
        o->sets[o->a.set_count++] = val;
    } else if (cli_opt(argc, argv, i, NULL, "--across", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (strcmp(val, "worst") != 0 && strcmp(val, "mean") != 0)
            return cli_bad("tune", "--across needs worst or mean, got '%s'", val);
        o->a.across_mean = strcmp(val, "mean") == 0;
        o->across_given = true;
    } else if (cli_opt(argc, argv, i, NULL, "--weight", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (o->a.weight_count == SWEEP_TUNE_SCENARIOS_MAX)
            return cli_bad("tune", "at most %d --weight", SWEEP_TUNE_SCENARIOS_MAX);
        o->weights[o->a.weight_count++] = val;
    } else if (cli_opt(argc, argv, i, NULL, "--levels", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (parse_count(a, val, 2, SWEEP_TUNE_LEVELS_MAX, &v) != CLI_OK) return CLI_BAD_INPUT;
        o->a.levels = (uint32_t)v;
    } else if (cli_opt(argc, argv, i, NULL, "--budget", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (parse_count(a, val, 1, UINT64_MAX / 2, &o->a.budget) != CLI_OK) return CLI_BAD_INPUT;
    } else if (cli_opt(argc, argv, i, NULL, "--search", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (search_method(val, &o->a.search) != CLI_OK) return CLI_BAD_INPUT;
    } else if (strcmp(a, "--exhaustive") == 0) {
        o->a.exhaustive = true;
    } else if (cli_opt(argc, argv, i, NULL, "--screen", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        o->a.screen = val;
    } else if (strcmp(a, "--no-charts") == 0) {
        o->no_charts = true;
    } else if (cli_opt(argc, argv, i, NULL, "--shard", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (parse_shard(val, o) != CLI_OK) return CLI_BAD_INPUT;
    } else if (cli_opt(argc, argv, i, NULL, "--merge", &val)) {
        if (val == NULL) return cli_missing("tune", a);
        if (parse_count(a, val, 1, 100000, &v) != CLI_OK) return CLI_BAD_INPUT;
        o->merge_n = (uint32_t)v;
    } else {
        return 0;
    }
    return 1;
}

/* Returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, tune_opts *o) {
    o->a.import = &cli_importer;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        uint64_t v = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        }
        int r = search_opt(argc, argv, &i, o);
        if (r == CLI_BAD_INPUT) return r;
        if (r == 1) continue;
        if (cli_opt(argc, argv, &i, NULL, "--seeds", &val)) {
            if (val == NULL) return cli_missing("tune", a);
            if (parse_count(a, val, 1, SWEEP_SEEDS_MAX, &v) != CLI_OK) return CLI_BAD_INPUT;
            o->a.seeds = (uint32_t)v;
        } else if (cli_opt(argc, argv, &i, NULL, "--seed", &val)) {
            if (val == NULL) return cli_missing("tune", a);
            if (cli_parse_u64(val, &o->seed) != 0)
                return cli_bad("tune", "--seed needs a non-negative integer, got '%s'", val);
            o->a.seed = &o->seed;
        } else if (cli_opt(argc, argv, &i, NULL, "--variant", &val)) {
            if (val == NULL) return cli_missing("tune", a);
            o->a.variant = val;
        } else if (cli_opt(argc, argv, &i, "-j", "--jobs", &val)) {
            if (val == NULL) return cli_missing("tune", a);
            if (parse_count(a, val, 1, JOBS_MAX, &o->jobs) != CLI_OK) return CLI_BAD_INPUT;
        } else if (cli_opt(argc, argv, &i, "-o", "--out", &val)) {
            if (val == NULL) return cli_missing("tune", a);
            o->out = val;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_bad("tune", "unknown option '%s' (see fusebox tune --help)", a);
        } else if (add_scenarios(o, a) != CLI_OK) {
            return CLI_BAD_INPUT;
        }
    }
    if (o->nfiles == 0) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    if (o->a.weight_count > 0 && !o->across_given) o->a.across_mean = true; /* weights: a mean */
    if (o->shard_n && o->merge_n) return cli_bad("tune", "--shard or --merge, not both");
    if (o->a.screen && o->a.exhaustive)
        return cli_bad("tune", "--screen or --exhaustive, not both (the full grid runs anyway)");
    return -1;
}

/*
 * A batch of runs (several scenarios' sweeps) in the worker processes: pool
 * task k is runs[k]; each result is its status, its message and its metric
 * values, filed in its sweep under its task number (so nothing depends on
 * the number of workers or on timing).
 */
typedef struct batch {
    const sweep_tune_run *runs;
} batch;

typedef struct batch_record {
    uint64_t task; /* makes the values after it aligned */
    int32_t status;
    char msg[SWEEP_MSG_MAX];
} batch_record;

static size_t record_size(const sweep *sw) {
    return sizeof(batch_record) + sweep_metric_count(sw) * sizeof(double);
}

/* A worker dies of SIGINT and SIGTERM (the parent sends SIGTERM to stop the runs). */
static void worker_start(void *ctx) {
    (void)ctx;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
}

static bool batch_work(void *ctx, uint64_t k, char **data, size_t *len) {
    const sweep_tune_run *r = &((const batch *)ctx)->runs[k];
    size_t size = record_size(r->sw);
    char *buf = calloc(1, size);
    if (buf == NULL) exit(3);
    batch_record rec;
    memset(&rec, 0, sizeof rec);
    rec.task = r->task;
    rec.status =
        sweep_run_task(r->sw, r->task, (double *)(buf + sizeof rec), rec.msg, sizeof rec.msg);
    memcpy(buf, &rec, sizeof rec);
    *data = buf;
    *len = size;
    return true;
}

static void batch_result(void *ctx, uint64_t k, const char *data, size_t len) {
    const sweep_tune_run *r = &((const batch *)ctx)->runs[k];
    if (len != record_size(r->sw)) return; /* not a worker's record: no result */
    batch_record rec;
    memcpy(&rec, data, sizeof rec);
    rec.msg[sizeof rec.msg - 1] = '\0';
    sweep_set_result(r->sw, r->task, rec.status, (const double *)(data + sizeof rec), rec.msg);
}

static int pool_runner(void *ctx, const sweep_tune_run *runs, size_t n) {
    const tune_opts *o = ctx;
    uint64_t *tasks = malloc(n * sizeof *tasks);
    if (tasks == NULL) return FB_ENOMEM;
    for (size_t k = 0; k < n; k++) tasks[k] = k;
    batch b = {runs};
    util_pool_job job = {worker_start, batch_work, batch_result, &b, &cli_stop_signal};
    char msg[200];
    int rc = util_pool_run(&job, tasks, n, (size_t)o->jobs, msg, sizeof msg);
    free(tasks);
    if (rc != 0) {
        cli_bad("tune", "%s", msg);
        return FB_EIO;
    }
    return cli_stop_signal ? FB_EIO : FB_OK;
}

/* A merge runs nothing: a run the shards' files lack is an error. */
static int merged_runner(void *ctx, const sweep_tune_run *runs, size_t n) {
    (void)ctx;
    (void)runs;
    (void)n;
    return FB_ENOTFOUND;
}

/*
 * The budgeted search round by round (--shard/--merge without --exhaustive):
 * a merge replays the search, handing it the rounds' results (from `store`,
 * where the rounds' parts are loaded) as it asks for them; the first batch
 * with runs no round ran stops the search and becomes the next round.
 */
typedef struct replay {
    const sweep_tune *store;
    const sweep_tune *t;
    sweep_tune_run *next; /* the next round's runs; NULL: none yet */
    size_t n;
} replay;

static int replay_runner(void *ctx, const sweep_tune_run *runs, size_t n) {
    replay *r = ctx;
    if (r->next) return FB_ESTATE; /* the next round is planned: the search is to stop */
    sweep_tune_run *copy = malloc((n ? n : 1) * sizeof *copy);
    if (copy == NULL) return FB_ENOMEM;
    memcpy(copy, runs, n * sizeof *copy);
    size_t left = sweep_tune_copy_results(r->store, r->t, copy, n);
    if (left == 0) {
        free(copy);
        return FB_OK;
    }
    r->next = copy;
    r->n = left;
    return FB_ESTATE; /* stops the search: this round's runs are to be run */
}

/* FNV-1a 64 of the arguments that decide the search (all but --shard, --merge, -j, -o, -q). */
static uint64_t fingerprint(int argc, char **argv) {
    static const char *const skip[] = {"--shard", "--merge", "--jobs", "-j", "--out", "-o"};
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool drop =
            strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0 || strcmp(a, "--no-charts") == 0;
        for (size_t k = 0; k < sizeof skip / sizeof *skip && !drop; k++) {
            size_t l = strlen(skip[k]);
            if (strcmp(a, skip[k]) == 0) {
                drop = true;
                i++;
            } else if (strncmp(a, skip[k], l) == 0 && a[l] == '=') {
                drop = true;
            }
        }
        if (drop) continue;
        for (const char *c = a;; c++) { /* the terminating NUL too: "ab" "c" != "a" "bc" */
            h = (h ^ (unsigned char)*c) * UINT64_C(0x100000001b3);
            if (*c == '\0') break;
        }
    }
    return h;
}

/* The round file of DIR, checked against this command; FB_ENOTFOUND (quiet) when none. */
static int read_round(const tune_opts *o, const sweep_tune *t, const char *dir,
                      sweep_tune_round *r) {
    char msg[2048];
    int rc = sweep_tune_read_round(t, dir, r, msg, sizeof msg);
    if (rc == FB_ENOTFOUND) return rc;
    if (rc != FB_OK) return cli_bad("tune", "%s", msg);
    uint32_t n = o->shard_n ? o->shard_n : o->merge_n;
    if (r->command != o->command)
        rc = cli_bad("tune",
                     "%s/tune.round.json was planned by another command (its options differ): "
                     "give every round's --shard and --merge the same options",
                     dir);
    else if (r->shards != n)
        rc = cli_bad("tune", "%s/tune.round.json: round %u is planned for %u shards, not %u", dir,
                     r->round, r->shards, n);
    if (rc != FB_OK) sweep_tune_round_free(r);
    return rc == FB_OK ? FB_OK : CLI_BAD_INPUT;
}

/* --shard K/N of a budgeted search: the current round's share of runs, to DIR. */
static int round_shard(tune_opts *o, sweep_tune *t, const char *dir) {
    sweep_tune_round r;
    int rc = read_round(o, t, dir, &r);
    if (rc == FB_ENOTFOUND)
        return cli_bad("tune",
                       "%s/tune.round.json: no round planned: the same command with --merge %u "
                       "instead of --shard plans the first",
                       dir, o->shard_n);
    if (rc != FB_OK) return rc;
    size_t m = 0;
    for (size_t j = 0; j < r.n; j++)
        if (j % r.shards == o->shard_k - 1) r.runs[m++] = r.runs[j];
    char msg[2048];
    rc = m ? pool_runner(o, r.runs, m) : FB_OK;
    if (rc != FB_OK && cli_stop_signal) {
        fprintf(stderr, "fusebox tune: interrupted by %s: nothing written\n",
                cli_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        rc = 128 + cli_stop_signal;
    } else if (rc != FB_OK) {
        rc = CLI_BAD_INPUT; /* pool_runner said why */
    } else if (sweep_tune_save_round_part(t, dir, r.round, o->shard_k, o->shard_n, msg,
                                          sizeof msg) != FB_OK) {
        rc = cli_bad("tune", "%s", msg);
    } else if (!o->quiet) {
        printf("wrote %s/tune.round-%u/part-%u-of-%u/ (%zu of the round's %zu runs); when all %u "
               "shards are there, the same command with --merge %u instead of --shard goes on\n",
               dir, r.round, o->shard_k, o->shard_n, m, r.n, o->shard_n, o->shard_n);
    }
    sweep_tune_round_free(&r);
    return rc;
}

/*
 * --merge N of a budgeted search: the rounds' parts loaded, the search
 * replayed; *next: the next round planned (its runs in rp), else the search
 * is over and t holds every result it used. The exit code (CLI_OK to go on).
 */
static int round_merge(tune_opts *o, sweep_tune *t, const char *dir, bool *next, int *src) {
    *next = false;
    *src = FB_OK;
    sweep_tune *store = NULL;
    char msg[2048];
    if (sweep_tune_create(&o->a, &store, msg, sizeof msg) != FB_OK)
        return cli_bad("tune", "%s", msg);
    sweep_tune_round r;
    int rc = read_round(o, store, dir, &r);
    uint32_t round = 0;
    if (rc == FB_OK) {
        round = r.round;
        if (sweep_tune_load_rounds(store, dir, &r, msg, sizeof msg) != FB_OK)
            rc = cli_bad("tune", "%s", msg);
        sweep_tune_round_free(&r);
    } else if (rc == FB_ENOTFOUND) {
        rc = CLI_OK; /* the first merge: nothing to load, the first round to plan */
    }
    replay rp = {store, t, NULL, 0};
    if (rc == CLI_OK) *src = sweep_tune_search(t, replay_runner, &rp, msg, sizeof msg);
    if (rc == CLI_OK && rp.next) {
        sweep_tune_round nr = {round + 1, o->merge_n, o->command, rp.next, rp.n};
        if (cli_mkdirs(dir) != 0)
            rc = cli_bad("tune", "cannot create %s: %s", dir, strerror(errno));
        else if (sweep_tune_write_round(t, dir, &nr, msg, sizeof msg) != FB_OK)
            rc = cli_bad("tune", "%s", msg);
        else if (!o->quiet)
            printf("round %u: %zu runs for %u shards in %s/tune.round.json; run them with "
                   "--shard K/%u instead of --merge, then --merge %u again\n",
                   round + 1, rp.n, o->merge_n, dir, o->merge_n, o->merge_n);
        *next = true;
        *src = FB_OK;
    } else if (rc == CLI_OK && *src != FB_OK) {
        rc = msg[0] ? cli_bad("tune", "%s", msg) : CLI_BAD_INPUT;
    }
    free(rp.next);
    sweep_tune_destroy(store);
    return rc;
}

/* --shard K/N: run the shard, write its files; the exit code. */
static int run_shard(tune_opts *o, sweep_tune *t, const char *dir) {
    char msg[2048];
    if (sweep_tune_run_shard(t, o->shard_k, o->shard_n, pool_runner, o, msg, sizeof msg) != FB_OK) {
        if (cli_stop_signal) {
            fprintf(stderr, "fusebox tune: interrupted by %s: nothing written\n",
                    cli_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
            return 128 + cli_stop_signal;
        }
        return cli_bad("tune", "%s", msg[0] ? msg : "the runs stopped");
    }
    if (cli_mkdirs(dir) != 0) return cli_bad("tune", "cannot create %s: %s", dir, strerror(errno));
    if (sweep_tune_save_shard(t, dir, o->shard_k, o->shard_n, msg, sizeof msg) != FB_OK)
        return cli_bad("tune", "%s", msg);
    if (!o->quiet)
        printf("wrote %s/tune.part-%u-of-%u/ (%llu runs); when all %u shards are there, the same "
               "command with --merge %u instead of --shard writes the answer\n",
               dir, o->shard_k, o->shard_n, (unsigned long long)sweep_tune_search_runs(t),
               o->shard_n, o->shard_n);
    return CLI_OK;
}

/* DIR/NAME written to NAME.tmp, checked, renamed. */
static int write_file(const sweep_tune *t, const char *dir, const char *name,
                      void (*write)(FILE *, const sweep_tune *)) {
    if (cli_mkdirs(dir) != 0) return cli_bad("tune", "cannot create %s: %s", dir, strerror(errno));
    char path[1100], tmp[1110];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) return cli_bad("tune", "cannot write %s: %s", tmp, strerror(errno));
    write(f, t);
    bool bad = ferror(f) != 0;
    bad = fclose(f) != 0 || bad;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return cli_bad("tune", "cannot write %s: %s", path, strerror(errno));
    }
    return CLI_OK;
}

/* tune.json, charts/, tune.html and the answer on stdout; the exit code. */
static int write_outputs(const tune_opts *o, sweep_tune *t) {
    char msg[2048];
    const char *dir = o->out ? o->out : "out/tune";
    int rc = write_file(t, dir, "tune.json", sweep_tune_write_json);
    /* FB_ENOTFOUND: no gnuplot; the scripts are written and the page says why */
    int crc =
        rc != CLI_OK || o->no_charts ? FB_OK : sweep_tune_write_charts(t, dir, msg, sizeof msg);
    if (crc != FB_OK && crc != FB_ENOTFOUND) rc = cli_bad("tune", "%s", msg);
    if (rc == CLI_OK) rc = write_file(t, dir, "tune.html", sweep_tune_write_html);
    if (rc == CLI_OK && !o->quiet) {
        sweep_tune_write_answer(stdout, t);
        printf("\nwrote %s/tune.json, %stune.html\n", dir, o->no_charts ? "" : "charts/, ");
    }
    if (rc == CLI_OK && crc == FB_ENOTFOUND) rc = cli_bad("tune", "%s", msg);
    if (rc == CLI_OK && sweep_tune_infeasible(t)) rc = CLI_EXPECT_FAILED;
    return rc;
}

int cli_cmd_tune(int argc, char **argv) {
    tune_opts o;
    memset(&o, 0, sizeof o);
    o.a.search = SWEEP_TUNE_NLOPT;
    o.a.sets = o.sets;
    o.a.knobs = o.knobs;
    o.a.weights = o.weights;
    int rc = parse_args(argc, argv, &o);
    o.command = fingerprint(argc, argv);
    if (rc < 0) {
        if (o.jobs == 0) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            o.jobs = n < 1 ? 1 : n > JOBS_MAX ? JOBS_MAX : (uint64_t)n;
        }
        o.a.scenario_files = (const char *const *)o.files;
        o.a.scenario_count = o.nfiles;
        cli_sweep_catch_signals();
        sweep_tune *t = NULL;
        char msg[2048];
        if (sweep_tune_create(&o.a, &t, msg, sizeof msg) != FB_OK) {
            rc = cli_bad("tune", "%s", msg);
        } else if (o.shard_n && !o.a.exhaustive) {
            rc = round_shard(&o, t, o.out ? o.out : "out/tune");
        } else if (o.shard_n) {
            rc = run_shard(&o, t, o.out ? o.out : "out/tune");
        } else if (o.merge_n && !o.a.exhaustive) {
            bool next = false;
            int src = FB_OK;
            rc = round_merge(&o, t, o.out ? o.out : "out/tune", &next, &src);
            if (rc == CLI_OK && next) rc = CLI_INCONCLUSIVE;
            if (rc == CLI_OK) rc = write_outputs(&o, t);
        } else if (o.merge_n && sweep_tune_load_shards(t, o.out ? o.out : "out/tune", o.merge_n,
                                                       msg, sizeof msg) != FB_OK) {
            rc = cli_bad("tune", "%s", msg);
        } else if (sweep_tune_search(t, o.merge_n ? merged_runner : pool_runner, &o, msg,
                                     sizeof msg) != FB_OK) {
            if (cli_stop_signal) {
                fprintf(stderr, "fusebox tune: interrupted by %s: nothing written (no --resume)\n",
                        cli_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
                rc = 128 + cli_stop_signal;
            } else if (o.merge_n) {
                rc = cli_bad("tune",
                             "%s: the shards' files lack runs (a shard that did not finish?)",
                             msg[0] ? msg : "the merge");
            } else
                rc = msg[0] ? cli_bad("tune", "%s", msg) : CLI_BAD_INPUT;
        } else {
            rc = write_outputs(&o, t);
        }
        sweep_tune_destroy(t);
    }
    for (size_t i = 0; i < o.nfiles; i++) free(o.files[i]);
    return rc;
}
