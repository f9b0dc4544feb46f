/* cmd_run.c - 'fusebox run': simulate a scenario's variants and write the report. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "reports/expect.h"
#include "reports/report.h"
#include "reports/verdict.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

static void usage(FILE *f) {
    fputs("usage: fusebox run SCENARIO [options]\n"
          "\n"
          "Simulate every variant of SCENARIO under a virtual clock and write\n"
          "report.json, timeseries.csv, events.jsonl, charts and report.html.\n"
          "\n"
          "options:\n"
          "  -o, --out DIR        output folder (default out/<scenario name>)\n"
          "      --seed N         override the scenario's seed\n"
          "      --set KEY=VALUE  override a scenario value, e.g.\n"
          "                       --set variants.tuned.breaker.open=10s\n"
          "                       --set providers.openai.capacity.rpm=600 (repeatable)\n"
          "      --variant NAME   run only this variant (repeatable)\n"
          "      --policy [NAME=]KIND:FILE[#INSTANCE]\n"
          "                       add a variant NAME (default KIND) made of a library's\n"
          "                       configuration, imported as fusebox import-policy does\n"
          "                       (KIND: resilience4j, ...), e.g. --policy\n"
          "                       resilience4j:application.yml#backendA (at most 4)\n"
          "      --map-provider NAME=PROVIDER\n"
          "                       in the --policy litellm layers, the config's deployments\n"
          "                       of NAME (LiteLLM's provider, model or model_info.id) are\n"
          "                       the scenario's PROVIDER, e.g. azure=openai (repeatable)\n"
          "  -j, --jobs N         simulate up to N variants at once, in threads, then draw\n"
          "                       up to N charts at once (default: the CPUs; the files are\n"
          "                       the same bytes for any N)\n"
          "      --strict         the scenario's warnings (a likely mistake the loader\n"
          "                       accepts, e.g. opossum's errorThresholdPercentage: 0.5)\n"
          "                       are errors (exit 2)\n"
          "      --no-charts      skip the gnuplot charts and report.html\n"
          "      --stats          print simulator speed and memory on stderr\n"
          "  -q, --quiet          no summary on stdout, no progress on stderr\n"
          "  -h, --help           this text\n"
          "\n"
          "The files are written into DIR/.fusebox-new and replace an earlier run's\n"
          "files in DIR only when all of them are written (other files in DIR are\n"
          "kept). SIGINT or SIGTERM stops the run at its next event and writes what\n"
          "was simulated (report.json: \"complete\": false, \"interrupted\": true).\n"
          "\n"
          "Exit codes: 0 ok, 2 bad input, a file that could not be written (DIR is\n"
          "left as it was) or a run stopped by a cap (the files hold what was\n"
          "simulated up to then), 130/143 after SIGINT/SIGTERM.\n",
          f);
}

#define RUN_JOBS_MAX 64

typedef struct args {
    cli_run_args run;
    bool charts, quiet, stats;
    unsigned jobs; /* 0: the CPUs */
} args;

/* Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, args *o) {
    memset(o, 0, sizeof *o);
    o->charts = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val;
        int rc = CLI_OK;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (cli_run_opt(argc, argv, &i, "run", &o->run, &rc)) {
            if (rc != CLI_OK) return rc;
        } else if (cli_opt(argc, argv, &i, "-j", "--jobs", &val)) {
            uint64_t j;
            if (val == NULL) return cli_missing("run", a);
            if (cli_parse_u64(val, &j) != 0 || j < 1 || j > RUN_JOBS_MAX)
                return cli_bad("run", "--jobs needs a number from 1 to %d, got '%s'", RUN_JOBS_MAX,
                               val);
            o->jobs = (unsigned)j;
        } else if (strcmp(a, "--no-charts") == 0) {
            o->charts = false;
        } else if (strcmp(a, "--stats") == 0) {
            o->stats = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_bad("run", "unknown option '%s' (see fusebox run --help)", a);
        } else if (o->run.file == NULL) {
            o->run.file = a;
        } else {
            return cli_bad("run", "one scenario at a time (got '%s' and '%s')", o->run.file, a);
        }
    }
    if (o->run.file == NULL) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* The variants that run: every one, or those named by --variant. */
typedef struct runs {
    bool selected[SIM_VARIANTS_MAX];
    sim_summary *sums[SIM_VARIANTS_MAX];
    size_t n;
} runs;

static void print_stats(const char *variant, const sim_summary *s, const struct timespec *t0,
                        const struct timespec *t1) {
    double wall = (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* an event is one popped and handled; stale and cancelled ones are counted apart */
    fprintf(stderr,
            "stats: variant %s: %llu requests, %llu events in %.3f s wall "
            "(%.2f M events/s; %llu ahead, %llu stale, %llu cancelled, %llu scheduled), "
            "peak queue %llu, peak RSS %ld MiB\n",
            variant, (unsigned long long)s->requests, (unsigned long long)s->events_handled, wall,
            (double)s->events_handled / wall / 1e6, (unsigned long long)s->events_ahead,
            (unsigned long long)s->events_stale, (unsigned long long)s->events_cancelled,
            (unsigned long long)s->events, (unsigned long long)s->queue_peak, ru.ru_maxrss / 1024);
}

/*
 * One variant's run. With several at once, each writes its rows and events to
 * its own temporary files, appended to the staged timeseries.csv and
 * events.jsonl in the variants' order when all have ended: the same bytes as
 * one after the other.
 */
typedef struct job {
    const sim_scenario *sc;
    uint32_t v;
    cli_writer w; /* a copy of the command's, on the job's files when run in a thread */
    sim_summary *s;
    int rc;
    sim_error err;
    struct timespec t0, t1;
    bool ran;
} job;

static void run_job(job *j) {
    sim_run_opts opts = cli_writer_opts(&j->w);
    clock_gettime(CLOCK_MONOTONIC, &j->t0);
    j->rc = sim_run_zeroed(j->sc, j->v, &opts, j->s, &j->err); /* run_variants callocs it */
    j->ran = true;
    clock_gettime(CLOCK_MONOTONIC, &j->t1);
}

/* Threads take the next job until none is left. */
typedef struct pool {
    job *jobs;
    size_t n, next;
    pthread_mutex_t lock;
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t k = p->next < p->n && cli_stop_signal == 0 ? p->next++ : p->n;
        pthread_mutex_unlock(&p->lock);
        if (k == p->n) return NULL;
        run_job(&p->jobs[k]);
    }
}

/*
 * Append f (a job's temporary file) to out, unless out failed before
 * (*out_errno set: the close of out reports that failure with its reason).
 * False when reading f failed.
 */
static bool append(FILE *out, int *out_errno, FILE *f) {
    char buf[65536];
    size_t got;
    bool ok = f != NULL && !ferror(f) && fflush(f) == 0 && fseek(f, 0, SEEK_SET) == 0;
    while (ok && *out_errno == 0 && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        errno = 0;
        if (fwrite(buf, 1, got, out) != got) *out_errno = errno ? errno : EIO;
    }
    ok = ok && !ferror(f);
    if (f) fclose(f);
    return ok;
}

/* Run jobs[0..n) on `threads` threads, their files appended to w's in order. */
static int run_threads(job *jobs, size_t n, unsigned threads, cli_writer *w) {
    pool p = {jobs, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t tid[RUN_JOBS_MAX];
    unsigned started = 0;
    for (size_t k = 0; k < n; k++) {
        jobs[k].w.csv = tmpfile();
        jobs[k].w.events = tmpfile();
        jobs[k].w.progress = false;
        if (jobs[k].w.csv == NULL || jobs[k].w.events == NULL) threads = 0; /* nothing runs */
    }
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, worker, &p) != 0) break;
    if (started == 0 && threads > 0) worker(&p); /* no thread could start: run them here */
    for (unsigned t = 0; t < started; t++) pthread_join(tid[t], NULL);
    bool ok = threads > 0;
    for (size_t k = 0; k < n; k++) {
        ok = append(w->csv, &w->csv_errno, jobs[k].w.csv) && ok;
        ok = append(w->events, &w->events_errno, jobs[k].w.events) && ok;
    }
    if (ok) return CLI_OK; /* a failed write to w's files is reported by their close */
    fprintf(stderr, "fusebox run: a temporary file for a variant's rows and events: %s\n",
            strerror(errno ? errno : EIO));
    return CLI_BAD_INPUT;
}

static unsigned jobs_of(const args *o, size_t n) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned j = o->jobs ? o->jobs : (cpus > 0 ? (unsigned)cpus : 1);
    if (j > RUN_JOBS_MAX) j = RUN_JOBS_MAX;
    return n < j ? (unsigned)n : j;
}

/* Simulate the selected variants into r, their rows and events through w. */
static int run_variants(const args *o, const sim_scenario *sc, cli_writer *w, runs *r) {
    job jobs[SIM_VARIANTS_MAX];
    size_t n = 0;
    for (uint32_t v = 0; v < sc->variant_count; v++) {
        if (o->run.nonly > 0 && !r->selected[v]) continue;
        job *j = &jobs[n];
        memset(j, 0, sizeof *j);
        j->sc = sc;
        j->v = v;
        j->w = *w;
        j->w.variant = sc->variants[v].name;
        j->s = calloc(1, sizeof *j->s);
        if (j->s == NULL) {
            fprintf(stderr, "fusebox run: out of memory\n");
            while (n > 0) free(jobs[--n].s);
            return CLI_BAD_INPUT;
        }
        n++;
    }
    unsigned threads = jobs_of(o, n);
    int status = CLI_OK;
    if (threads > 1)
        status = run_threads(jobs, n, threads, w);
    else
        for (size_t k = 0; k < n && cli_stop_signal == 0; k++) {
            run_job(&jobs[k]);
            if (w->progress) fputs("\r\033[K", stderr);
        }
    for (size_t k = 0; k < n; k++) {
        job *j = &jobs[k];
        if (!j->ran) { /* a signal came first */
            free(j->s);
            continue;
        }
        r->sums[r->n++] = j->s;
        if (o->stats) print_stats(sc->variants[j->v].name, j->s, &j->t0, &j->t1);
        if (j->rc != FB_OK && j->rc != FB_EINTR) { /* an interruption is said once, at the end */
            char msg[1024];
            scn_error_format(&j->err, msg, sizeof msg);
            fprintf(stderr, "fusebox run: variant %s: %s\n", sc->variants[j->v].name, msg);
            status = CLI_BAD_INPUT;
        }
    }
    return status;
}

/* Run into dir: timeseries.csv and events.jsonl while running, then the charts and report.json. */
static int run_into(const char *dir, const args *o, const sim_scenario *sc, runs *r,
                    cli_writer *w) {
    int status = cli_writer_open(w, "run", dir, sc, !o->quiet && isatty(STDERR_FILENO));
    w->stop = &cli_stop_signal;
    w->jobs = o->jobs; /* the charts at once, as the variants */
    if (status == CLI_OK) status = run_variants(o, sc, w, r);
    return cli_writer_close(w, "run", dir, r->sums, r->n, o->charts, status);
}

/* The one line after a signal; the exit code 128 + the signal's number. */
static int say_interrupted(const char *dir, const cli_writer *w) {
    const char *name = cli_stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
    if (!w->committed)
        fprintf(stderr, "fusebox run: interrupted (%s); nothing written\n", name);
    else if (w->interrupted)
        fprintf(stderr,
                "fusebox run: interrupted (%s); %s/ holds what was simulated "
                "(report.json: \"complete\": false, \"interrupted\": true)\n",
                name, dir);
    else
        fprintf(stderr, "fusebox run: interrupted (%s) after %s/ was written whole\n", name, dir);
    return w->committed ? 128 + cli_stop_signal : CLI_BAD_INPUT;
}

/* The summary, the expectations and what was written, on stdout. */
static void print_summary(const char *dir, const args *o, const sim_scenario *sc, const runs *r,
                          const char *replaced) {
    rep_text_summary(stdout, sc, r->sums, r->n);
    char verdict[REP_VERDICT_MAX];
    printf("\n%s", rep_verdict_table(verdict, sizeof verdict, sc, r->sums, r->n));
    printf("\n%s", rep_verdict(verdict, sizeof verdict, sc, r->sums, r->n, 78));
    if (sc->expect_count > 0)
        fputs("\nexpectations (fusebox check exits 1 when one fails):\n", stdout);
    for (uint32_t i = 0; i < sc->expect_count; i++) {
        rep_expect_result res;
        char m[300];
        if (rep_expect_eval(sc, r->sums, r->n, sc->expect[i], &res, m, sizeof m) != FB_OK)
            printf("  ?     %s  (%s)\n", sc->expect[i], m);
        else
            printf("  %s  %s  [%s]\n", res.passed ? "pass" : "FAIL", sc->expect[i], res.detail);
    }
    putchar('\n');
    if (replaced[0]) printf("replaced %s/ (%s)\n", dir, replaced);
    printf("wrote %s/report.json, timeseries.csv, events.jsonl%s\n", dir,
           o->charts ? ", charts, report.html" : "");
    if (o->charts) printf("open %s/report.html\n", dir);
}

int cli_cmd_run(int argc, char **argv) {
    args o;
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK) return rc < 0 ? CLI_OK : rc;
    sim_scenario *sc = NULL;
    runs r;
    memset(&r, 0, sizeof r);
    rc = cli_run_load(&o.run, "run", &sc, r.selected);
    if (rc != CLI_OK) return rc;
    char dir[1024];
    if (o.run.out)
        snprintf(dir, sizeof dir, "%s", o.run.out);
    else
        snprintf(dir, sizeof dir, "out/%s", sc->name);
    cli_catch_stop_signals(true); /* a write in progress must not fail */
    cli_writer w;
    int status = run_into(dir, &o, sc, &r, &w);
    if (cli_stop_signal != 0)
        status = say_interrupted(dir, &w);
    else if (!o.quiet && w.committed && r.n > 0)
        print_summary(dir, &o, sc, &r, w.out.replaced);
    for (size_t i = 0; i < r.n; i++) free(r.sums[i]);
    scn_free(sc);
    return status;
}
