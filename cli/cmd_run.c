/* cmd_run.c - 'fusebox run': simulate a scenario's variants and write the report. */
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
#include "sim/scenario.h"
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

typedef struct args {
    cli_run_args run;
    bool charts, quiet, stats;
} args;

/* Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, args *o) {
    memset(o, 0, sizeof *o);
    o->charts = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = CLI_OK;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (cli_run_opt(argc, argv, &i, "run", &o->run, &rc)) {
            if (rc != CLI_OK) return rc;
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
            "(%.2f M events/s; %llu stale, %llu cancelled, %llu scheduled), "
            "peak queue %llu, peak RSS %ld MiB\n",
            variant, (unsigned long long)s->requests, (unsigned long long)s->events_handled, wall,
            (double)s->events_handled / wall / 1e6, (unsigned long long)s->events_stale,
            (unsigned long long)s->events_cancelled, (unsigned long long)s->events,
            (unsigned long long)s->queue_peak, ru.ru_maxrss / 1024);
}

/* Simulate the selected variants into r, their rows and events through w. */
static int run_variants(const args *o, const sim_scenario *sc, cli_writer *w, runs *r) {
    int status = CLI_OK;
    for (uint32_t v = 0; v < sc->variant_count && cli_stop_signal == 0; v++) {
        if (o->run.nonly > 0 && !r->selected[v]) continue;
        sim_summary *s = malloc(sizeof *s);
        if (s == NULL) {
            fprintf(stderr, "fusebox run: out of memory\n");
            return CLI_BAD_INPUT;
        }
        r->sums[r->n++] = s;
        w->variant = sc->variants[v].name;
        sim_run_opts opts = cli_writer_opts(w);
        sim_error err;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = sim_run(sc, v, &opts, s, &err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (o->stats) print_stats(sc->variants[v].name, s, &t0, &t1);
        if (w->progress) fputs("\r\033[K", stderr);
        if (rc != FB_OK && rc != FB_EINTR) { /* an interruption is said once, at the end */
            char msg[1024];
            sim_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "fusebox run: variant %s: %s\n", sc->variants[v].name, msg);
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

int cmd_run(int argc, char **argv) {
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
    sim_scenario_free(sc);
    return status;
}
