/* cmd_run.c - 'fusebox run': simulate a scenario's variants and write the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "reports/charts.h"
#include "reports/expect.h"
#include "reports/report.h"
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
          "      --no-charts      skip the gnuplot charts and report.html\n"
          "      --stats          print simulator speed and memory on stderr\n"
          "  -q, --quiet          no summary on stdout, no progress on stderr\n"
          "  -h, --help           this text\n"
          "\n"
          "Exit codes: 0 ok, 2 bad input or a run stopped by a cap (the files\n"
          "hold what was simulated up to then).\n",
          f);
}

int cmd_run(int argc, char **argv) {
    const char *file = NULL, *out = NULL;
    const char *sets[256];
    size_t nsets = 0;
    const char *only[SIM_VARIANTS_MAX];
    size_t nonly = 0;
    uint64_t seed = 0;
    bool has_seed = false, charts = true, quiet = false, stats = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        } else if (cli_opt(argc, argv, &i, "-o", "--out", &val)) {
            if (val == NULL) return cli_missing("run", a);
            out = val;
        } else if (cli_opt(argc, argv, &i, NULL, "--seed", &val)) {
            if (val == NULL) return cli_missing("run", a);
            if (cli_parse_u64(val, &seed) != 0)
                return cli_bad("run", "--seed needs a non-negative integer, got '%s'", val);
            has_seed = true;
        } else if (cli_opt(argc, argv, &i, NULL, "--set", &val)) {
            if (val == NULL) return cli_missing("run", a);
            if (nsets == sizeof sets / sizeof sets[0])
                return cli_bad("run", "too many --set options");
            sets[nsets++] = val;
        } else if (cli_opt(argc, argv, &i, NULL, "--variant", &val)) {
            if (val == NULL) return cli_missing("run", a);
            if (nonly == SIM_VARIANTS_MAX) return cli_bad("run", "too many --variant options");
            only[nonly++] = val;
        } else if (strcmp(a, "--no-charts") == 0) {
            charts = false;
        } else if (strcmp(a, "--stats") == 0) {
            stats = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_bad("run", "unknown option '%s' (see fusebox run --help)", a);
        } else if (file == NULL) {
            file = a;
        } else {
            return cli_bad("run", "one scenario at a time (got '%s' and '%s')", file, a);
        }
    }
    if (file == NULL) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = sim_scenario_load(file, sets, nsets, has_seed ? &seed : NULL, &sc, &err);
    if (rc != FB_OK) return cli_scenario_error(&err);
    bool selected[SIM_VARIANTS_MAX] = {false};
    for (size_t k = 0; k < nonly; k++) {
        int v = sim_scenario_variant(sc, only[k]);
        if (v < 0) {
            sim_scenario_free(sc);
            return cli_bad("run", "%s has no variant named '%s'", file, only[k]);
        }
        selected[v] = true;
    }
    char dir[1024];
    if (out)
        snprintf(dir, sizeof dir, "%s", out);
    else
        snprintf(dir, sizeof dir, "out/%s", sc->name);
    if (cli_mkdirs(dir) != 0) {
        fprintf(stderr, "fusebox run: cannot create %s: %s\n", dir, strerror(errno));
        sim_scenario_free(sc);
        return CLI_BAD_INPUT;
    }
    int status = CLI_OK;
    FILE *csv = cli_fopen(dir, "timeseries.csv");
    FILE *events = cli_fopen(dir, "events.jsonl");
    sim_summary *sums[SIM_VARIANTS_MAX] = {NULL};
    size_t n = 0;
    if (csv == NULL || events == NULL) {
        status = CLI_BAD_INPUT;
        goto close_files;
    }
    rep_csv_header(csv, sc);
    cli_writer ctx = {sc, NULL, csv, events, !quiet && isatty(STDERR_FILENO)};
    for (uint32_t v = 0; v < sc->variant_count; v++) {
        if (nonly > 0 && !selected[v]) continue;
        sim_summary *s = malloc(sizeof *s);
        if (s == NULL) {
            fprintf(stderr, "fusebox run: out of memory\n");
            status = CLI_BAD_INPUT;
            break;
        }
        sums[n++] = s;
        ctx.variant = sc->variants[v].name;
        sim_run_opts opts = cli_writer_opts(&ctx);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = sim_run(sc, v, &opts, s, &err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (stats) {
            double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            fprintf(stderr,
                    "stats: variant %s: %llu requests, %llu events in %.3f s wall "
                    "(%.2f M events/s), peak RSS %ld MiB\n",
                    sc->variants[v].name, (unsigned long long)s->requests,
                    (unsigned long long)s->events, wall, (double)s->events / wall / 1e6,
                    ru.ru_maxrss / 1024);
        }
        if (ctx.progress) fputs("\r\033[K", stderr);
        if (rc != FB_OK) {
            char msg[1024];
            sim_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "fusebox run: variant %s: %s\n", sc->variants[v].name, msg);
            status = CLI_BAD_INPUT;
        }
    }
    FILE *json = cli_fopen(dir, "report.json");
    if (json == NULL) {
        status = CLI_BAD_INPUT;
    } else {
        rep_write_json(json, sc, sums, n);
        if (fclose(json) != 0) status = CLI_BAD_INPUT;
    }
close_files:
    if (csv && fclose(csv) != 0) status = CLI_BAD_INPUT;
    if (events && fclose(events) != 0) status = CLI_BAD_INPUT;
    if (n > 0 && charts) {
        char msg[512];
        if (rep_charts(dir, sc, sums, n, msg, sizeof msg) != FB_OK) {
            fprintf(stderr, "fusebox run: charts: %s\n", msg);
            status = CLI_BAD_INPUT;
        }
    }
    if (!quiet && n > 0) {
        rep_text_summary(stdout, sc, sums, n);
        if (sc->expect_count > 0)
            fputs("\nexpectations (fusebox check exits 1 when one fails):\n", stdout);
        for (uint32_t i = 0; i < sc->expect_count; i++) {
            rep_expect_result r;
            char m[300];
            if (rep_expect_eval(sc, sums, n, sc->expect[i], &r, m, sizeof m) != FB_OK)
                printf("  ?     %s  (%s)\n", sc->expect[i], m);
            else
                printf("  %s  %s  [%s]\n", r.passed ? "pass" : "FAIL", sc->expect[i], r.detail);
        }
        printf("\nwrote %s/report.json, timeseries.csv, events.jsonl%s\n", dir,
               charts ? ", charts, report.html" : "");
        if (charts) printf("open %s/report.html\n", dir);
    }
    for (size_t i = 0; i < n; i++) free(sums[i]);
    sim_scenario_free(sc);
    return status;
}
