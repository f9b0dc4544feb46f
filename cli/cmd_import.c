/*
 * cmd_import.c - 'fusebox import FILE': the logs of a bad hour as a scenario that replays
 * it, with the policy as it was (as-was) and a copy to edit (yours); the import simulates
 * as-was and prints it side by side with the logs. docs/import.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "import/incident.h"
#include "import/source.h"
#include "reports/report.h"
#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

static const char usage_text[] =
    "usage: fusebox import FILE [-o SCENARIO] [options]\n"
    "\n"
    "Read the logs of a bad hour and write a scenario that replays it: the logical\n"
    "requests as arrivals (the old policy's retries and fallbacks are not re-sent),\n"
    "each provider's fault timeline, latency and tokens fitted from what the attempts\n"
    "saw, the policy as it was (variant as-was, with its evidence) and a copy to edit\n"
    "(yours). The import prints what each fit chose and why (fits: a slow window's\n"
    "factor and interval, each distribution's form and test, the Retry-After mode),\n"
    "simulates as-was and prints it beside the logs; the scenario's expect lines make\n"
    "'fusebox check' fail when the reproduction drifts.\n"
    "\n"
    "FILE is OTLP/JSON traces (an ExportTraceServiceRequest, or one per line: the GenAI\n"
    "and HTTP semantic conventions) or LiteLLM StandardLoggingPayload records (JSON lines).\n"
    "\n"
    "  -o, --out FILE        write the scenario there (default: stdout, the table on stderr)\n"
    "  --format F            otlp, litellm or auto (default: auto, from the first record)\n"
    "  --start D             skip the first D of the log (from its first request), e.g. 10m\n"
    "  --duration D          import D of it (default: to the last request); more than the\n"
    "                        log holds is an error\n"
    "  --window D            the fitting window (default: per provider, the smallest of 1s,\n"
    "                        2s, 5s, 10s, ... 1h that holds 30 attempts on average)\n"
    "  --arrivals A          replay (the recorded times, default) or rate (a rate curve)\n"
    "  --name NAME           the scenario's name (default: from FILE)\n"
    "  --seed N              the scenario's seed (default 1)\n"
    "  --max-records N       cap on requests + attempts (spans) read (default 1000000)\n"
    "  --max-bytes N         cap on the file's size (default 268435456)\n"
    "  -q, --quiet           no table\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit codes: 0 written, and as-was reproduces the logs within the bands; 1 written,\n"
    "but it does not (fusebox check will fail: see the table); 2 bad input: a file that\n"
    "does not parse (with its line), a span or record without times or provider, no\n"
    "GenAI span, a slice the log does not hold, a cap reached.\n";

typedef struct args {
    const char *file, *out, *name;
    imp_read_opts read;
    imp_build_opts build;
    bool quiet;
} args;

static int duration_opt(const char *opt, const char *v, fb_time_us *out) {
    if (v == NULL) return cli_missing("import", opt);
    if (scn_parse_duration(v, out) != FB_OK)
        return cli_bad("import", "%s needs a duration such as 90s or 10m, got '%s'", opt, v);
    return CLI_OK;
}

static int count_opt(const char *opt, const char *v, uint64_t hi, size_t *out) {
    uint64_t n = 0;
    if (v == NULL) return cli_missing("import", opt);
    if (cli_parse_u64(v, &n) != 0 || n == 0 || n > hi)
        return cli_bad("import", "%s needs an integer in [1, %llu], got '%s'", opt,
                       (unsigned long long)hi, v);
    *out = (size_t)n;
    return CLI_OK;
}

static int choice_opt(const char *opt, const char *v, args *a) {
    if (v == NULL) return cli_missing("import", opt);
    if (strcmp(opt, "--arrivals") == 0) {
        if (strcmp(v, "replay") && strcmp(v, "rate"))
            return cli_bad("import", "--arrivals is replay or rate, got '%s'", v);
        a->build.rate = strcmp(v, "rate") == 0;
        return CLI_OK;
    }
    if (!strcmp(v, "otlp"))
        a->read.format = IMP_FORMAT_OTLP;
    else if (!strcmp(v, "litellm"))
        a->read.format = IMP_FORMAT_LITELLM;
    else if (!strcmp(v, "auto"))
        a->read.format = IMP_FORMAT_AUTO;
    else
        return cli_bad("import", "--format is otlp, litellm or auto, got '%s'", v);
    return CLI_OK;
}

/* One option at argv[*i]: CLI_OK, CLI_BAD_INPUT, or -1 for --help. */
static int option(int argc, char **argv, int *i, args *a) {
    const char *v = NULL, *arg = argv[*i];
    uint64_t seed = 0;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) return -1;
    if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) return a->quiet = true, CLI_OK;
    if (cli_opt(argc, argv, i, "-o", "--out", &v))
        return v ? (a->out = v, CLI_OK) : cli_missing("import", arg);
    if (cli_opt(argc, argv, i, NULL, "--name", &v))
        return v ? (a->name = v, CLI_OK) : cli_missing("import", arg);
    if (cli_opt(argc, argv, i, NULL, "--format", &v)) return choice_opt("--format", v, a);
    if (cli_opt(argc, argv, i, NULL, "--arrivals", &v)) return choice_opt("--arrivals", v, a);
    if (cli_opt(argc, argv, i, NULL, "--start", &v))
        return duration_opt("--start", v, &a->build.start_us);
    if (cli_opt(argc, argv, i, NULL, "--duration", &v))
        return duration_opt("--duration", v, &a->build.duration_us);
    if (cli_opt(argc, argv, i, NULL, "--window", &v))
        return duration_opt("--window", v, &a->build.window_us);
    if (cli_opt(argc, argv, i, NULL, "--max-records", &v))
        return count_opt("--max-records", v, IMP_RECORDS_LIMIT, &a->read.max_records);
    if (cli_opt(argc, argv, i, NULL, "--max-bytes", &v))
        return count_opt("--max-bytes", v, IMP_BYTES_LIMIT, &a->read.max_bytes);
    if (cli_opt(argc, argv, i, NULL, "--seed", &v)) {
        if (v == NULL || cli_parse_u64(v, &seed) != 0 || seed == 0)
            return cli_bad("import", "--seed needs a positive integer, got '%s'", v ? v : "");
        a->build.seed = seed;
        return CLI_OK;
    }
    if (arg[0] == '-' || a->file) return cli_bad("import", "unexpected argument '%s'", arg);
    a->file = arg;
    return CLI_OK;
}

static int parse_args(int argc, char **argv, args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        int rc = option(argc, argv, &i, a);
        if (rc != CLI_OK) return rc;
    }
    if (a->file == NULL) {
        fputs(usage_text, stderr);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* The scenario's name: --name, else the file's name without folders and extension. */
static void scenario_name(const args *a, char *out, size_t len) {
    char base[256];
    const char *slash = strrchr(a->file, '/');
    snprintf(base, sizeof base, "%s", a->name ? a->name : slash ? slash + 1 : a->file);
    char *dot = a->name ? NULL : strchr(base, '.');
    if (dot) *dot = '\0';
    imp_name(base, out, len);
    if (out[0] == '\0') snprintf(out, len, "%s", "imported");
}

/* ---- the table ---- */

static void cell(char *buf, size_t len, const imp_check *c, double v) {
    if (sim_metric_is_na(v))
        snprintf(buf, len, "n/a");
    else if (c->duration)
        rep_format_duration(buf, len, v);
    else if (strncmp(c->metric, "attempts", 8) == 0)
        snprintf(buf, len, "%.0f", v);
    else if (strcmp(c->metric, "success_rate") == 0)
        snprintf(buf, len, "%.2f%%", v * 100);
    else if (strcmp(c->metric, "cost_usd") == 0)
        snprintf(buf, len, "$%.4f", v);
    else
        snprintf(buf, len, "%.3fx", v);
}

/* Print logs vs simulation (f NULL: only count); returns the rows outside their band. */
static int table(FILE *f, const imp_incident *inc, const sim_scenario *sc, const sim_summary *s) {
    int outside = 0;
    if (f)
        fprintf(f, "\n%-24s %12s %12s   %-27s\n", "as-was vs the logs", "logs", "simulated",
                "band (expect lines)");
    for (uint32_t i = 0; i < inc->nchecks; i++) {
        const imp_check *c = &inc->checks[i];
        double v = sim_metric_get(sc, s, c->metric);
        bool ok = !sim_metric_is_na(v) && v >= c->lo && v <= c->hi;
        outside += !ok;
        char l[32], m[32], lo[32], hi[32];
        cell(l, sizeof l, c, c->logs);
        cell(m, sizeof m, c, v);
        cell(lo, sizeof lo, c, c->lo);
        cell(hi, sizeof hi, c, c->hi);
        if (f)
            fprintf(f, "%-24s %12s %12s   [%s, %s]%s\n", c->metric, l, m, lo, hi,
                    ok ? "" : "  OUTSIDE");
    }
    return outside;
}

/* ---- the steps ---- */

static int write_text(const char *out, const char *text) {
    FILE *f = out ? fopen(out, "w") : stdout;
    if (f == NULL) return cli_bad("import", "cannot write %s", out);
    fprintf(f, "%s\n", text);
    int bad = ferror(f);
    if (out) bad |= fclose(f);
    return bad ? cli_bad("import", "cannot write %s", out ? out : "stdout") : CLI_OK;
}

/* Load the scenario written (the loader's own checks) and simulate as-was. */
static int simulate(const char *text, const char *file, sim_scenario **sc, sim_summary *s) {
    sim_error err;
    if (scn_parse(text, strlen(text), file, NULL, 0, NULL, sc, &err) != FB_OK) {
        char msg[1024];
        scn_error_format(&err, msg, sizeof msg);
        return cli_bad("import", "the scenario written does not load (a bug): %s", msg);
    }
    sim_run_opts opts;
    memset(&opts, 0, sizeof opts);
    int v = scn_variant(*sc, IMP_AS_WAS);
    if (v < 0 || sim_run(*sc, (uint32_t)v, &opts, s, &err) != FB_OK) {
        char msg[1024];
        scn_error_format(&err, msg, sizeof msg);
        return cli_bad("import", "simulating as-was: %s", v < 0 ? "no as-was variant" : msg);
    }
    return CLI_OK;
}

/* imp_measure_fn: one as-was run, its metrics by name. */
static int measure(void *ctx, sim_scenario *sc, const char *const *metrics, uint32_t n, double *out,
                   char *msg, size_t msg_len) {
    sim_summary *s = ctx;
    sim_run_opts opts;
    sim_error e;
    memset(&opts, 0, sizeof opts);
    if (sim_run(sc, (uint32_t)scn_variant(sc, IMP_AS_WAS), &opts, s, &e) != FB_OK) {
        snprintf(msg, msg_len, "%s: %s", e.path, e.msg);
        return FB_ESTATE;
    }
    for (uint32_t i = 0; i < n; i++) {
        double x = sim_metric_get(sc, s, metrics[i]);
        out[i] = sim_metric_is_na(x) ? 0 : x;
    }
    return FB_OK;
}

/* Measure the bands against the simulation's noise, and write the scenario again. */
static int calibrate(const args *a, imp_incident *inc, char **text) {
    sim_scenario *sc = NULL;
    sim_error err;
    if (scn_parse(*text, strlen(*text), a->out ? a->out : "<stdout>", NULL, 0, NULL, &sc, &err) !=
        FB_OK) {
        char msg[1024];
        scn_error_format(&err, msg, sizeof msg);
        return cli_bad("import", "the scenario written does not load (a bug): %s", msg);
    }
    imp_error ie;
    memset(&ie, 0, sizeof ie);
    sim_summary *s = malloc(sizeof *s);
    int rc = s ? imp_incident_calibrate(inc, sc, IMP_CALIBRATE_SEEDS, measure, s, &ie)
               : imp_fail(&ie, FB_ENOMEM, 0, "%s", "out of memory");
    free(s);
    scn_free(sc);
    if (rc != FB_OK) return cli_bad("import", "%s", ie.msg);
    free(*text);
    *text = imp_incident_json(inc);
    return *text ? CLI_OK : cli_bad("import", "%s", "out of memory");
}

static int report(const args *a, const imp_incident *inc, const char *text) {
    sim_scenario *sc = NULL;
    sim_summary *s = malloc(sizeof *s);
    if (s == NULL) return cli_bad("import", "%s", "out of memory");
    int rc = simulate(text, a->out ? a->out : "<stdout>", &sc, s);
    FILE *f = a->quiet ? NULL : a->out ? stdout : stderr;
    if (f && rc == CLI_OK && inc->fits.s) fprintf(f, "\nfits:\n%s", inc->fits.s);
    int outside = rc == CLI_OK ? table(f, inc, sc, s) : 0;
    if (rc == CLI_OK) rc = write_text(a->out, text);
    if (rc == CLI_OK && a->out && !a->quiet)
        printf(
            "\nwrote %s: %zu requests, %u attempts, %u providers; check it with fusebox check %s\n",
            a->out, inc->r1 - inc->r0, inc->attempts, inc->log->nprov, a->out);
    if (rc == CLI_OK && outside > 0) {
        fprintf(stderr,
                "fusebox import: as-was does not reproduce the logs within %d of its bands: "
                "fusebox check will fail on it (docs/import.md, \"Limits\")\n",
                outside);
        rc = CLI_EXPECT_FAILED;
    }
    scn_free(sc);
    free(s);
    return rc;
}

int cli_cmd_import(int argc, char **argv) {
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) return fputs(usage_text, stdout), CLI_OK;
    if (rc != CLI_OK) return rc;
    char name[SIM_NAME_MAX];
    scenario_name(&a, name, sizeof name);
    a.build.name = name;
    imp_log *log = NULL;
    imp_incident *inc = NULL;
    imp_error err;
    rc = imp_read_file(a.file, &a.read, &log, &err);
    if (rc == FB_OK) rc = imp_incident_build(log, &a.build, &inc, &err);
    if (rc != FB_OK) {
        char msg[1024];
        imp_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "fusebox import: %s\n", msg);
        imp_log_free(log);
        return CLI_BAD_INPUT;
    }
    char *text = imp_incident_json(inc);
    rc = text ? calibrate(&a, inc, &text) : cli_bad("import", "%s", "out of memory");
    if (rc == CLI_OK) rc = report(&a, inc, text);
    free(text);
    imp_incident_free(inc);
    imp_log_free(log);
    return rc;
}
