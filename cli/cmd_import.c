/*
 * cmd_import.c - 'fusebox import FILE': the logs of a bad hour as a scenario that replays
 * it, with the policy as it was (as-was) and a copy to edit (yours); the import simulates
 * as-was and prints it side by side with the logs. docs/import.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "import/incident.h"
#include "import/source.h"
#include "reports/breakdown.h"
#include "reports/report.h"
#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "util/utf8.h"

static const char usage_text[] =
    "usage: fusebox import FILE [-o SCENARIO] [options]\n"
    "\n"
    "Read the logs of a bad hour and write a scenario that replays it: the logical\n"
    "requests as arrivals (the old policy's retries and fallbacks are not re-sent),\n"
    "each provider's fault timeline, latency and tokens fitted from what the attempts\n"
    "saw, the policy as it was (variant as-was, with its evidence) and a copy to edit\n"
    "(yours). The import prints what each fit chose and why (fits: a slow window's\n"
    "factor and interval, each distribution's form and test, the Retry-After mode),\n"
    "simulates as-was and prints it beside the logs, figure by figure (requests,\n"
    "attempts, retries, p50/p90/p99, attempts per request, calls per status, ends)\n"
    "against a tolerance (counts +-2% or 2, latencies +-10% or, on a cliff, within\n"
    "10% of the log's own quantiles a rank tolerance away, buckets +-2 points) and\n"
    "the noise of the log against the replay (both are draws: 3 sd of the\n"
    "difference); the scenario carries the log's figures (observed) and expect\n"
    "lines, so 'fusebox run' prints the log beside as-was and 'fusebox check' fails\n"
    "when the reproduction drifts. As-was sends each retry (and each session's\n"
    "request) when the log's did (\"waits\": \"recorded\"); yours draws them from the\n"
    "fitted policy, and one run of it is printed beside the logs too, not judged.\n"
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
    "  --arrivals A          replay (the recorded times, default; sessions with their think\n"
    "                        time where the requests name one) or rate (a rate curve)\n"
    "  --name NAME           the scenario's name (default: from FILE)\n"
    "  --seed N              the scenario's seed (default 1)\n"
    "  --max-records N       cap on requests + attempts (spans) read (default 1000000)\n"
    "  --max-bytes N         cap on the file's size (default 268435456)\n"
    "  -q, --quiet           no table\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit codes: 0 written, and as-was reproduces the logs (every figure within its\n"
    "tolerance or noise, every band met); 1 written, but it does not: each figure missed\n"
    "is named with the miss and its most likely cause (fusebox check will fail); 2 bad\n"
    "input: a file that does not parse (with its line), a span or record without times\n"
    "or provider, no GenAI span, a slice the log does not hold, a cap reached.\n";

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
        cli_help_puts(usage_text, stderr);
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

/*
 * The noise of each figure of the log against the replay's (reports/breakdown.h): the
 * figures of each calibration run, summed by name; a figure a run lacks counts 0 there.
 * The runs with the even faults drawn per attempt (the log's own noise: import/calibrate.c)
 * are summed apart, in dsum and dsq.
 * A latency quantile's also sums each run's spread toward the log's (rep_quantile_spread):
 * a p99 made of the 3rd and 4th longest of 290 requests sits on a cliff when a handful of
 * them met two hangs, and ten runs that all drew four or more of those (a chance of about
 * 0.92^10, 43%) show no spread at all where the log drew three (p99 2.6 s against 4.6 s).
 */
typedef struct noise {
    char name[REP_FIGURES_MAX][48];
    double sum[REP_FIGURES_MAX], sq[REP_FIGURES_MAX], spread[REP_FIGURES_MAX];
    double dsum[REP_FIGURES_MAX], dsq[REP_FIGURES_MAX];
    uint32_t n, seeds, dseeds;
} noise;

static int noise_slot(const noise *nz, const char *name) {
    for (uint32_t i = 0; i < nz->n; i++)
        if (strcmp(nz->name[i], name) == 0) return (int)i;
    return -1;
}

/* A figure's value as its tolerance reads it: a bucket's share, else the figure. */
static double figure_value(const rep_figure *g) {
    return g->kind == REP_FIGURE_BUCKET ? g->sim_share : g->sim;
}

static void noise_add(noise *nz, const sim_scenario *sc, const sim_summary *s, bool drawn) {
    rep_figure g[REP_FIGURES_MAX];
    size_t k = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    for (size_t i = 0; i < k; i++) {
        int j = noise_slot(nz, g[i].name);
        if (j < 0 && nz->n == REP_FIGURES_MAX) continue;
        if (j < 0) {
            j = (int)nz->n++;
            memcpy(nz->name[j], g[i].name, sizeof nz->name[j]); /* both rep_figure.name */
        }
        double x = figure_value(&g[i]);
        if (drawn) {
            nz->dsum[j] += x;
            nz->dsq[j] += x * x;
            continue;
        }
        nz->sum[j] += x;
        nz->sq[j] += x * x;
        if (g[i].kind == REP_FIGURE_LATENCY) /* "latency_p99": the 0.99 quantile */
            nz->spread[j] += rep_quantile_spread(&s->latency, atof(g[i].name + 9) / 100, g[i].log);
    }
    if (drawn)
        nz->dseeds++;
    else
        nz->seeds++;
}

/* The variance of a figure over n runs from its sum and sum of squares. */
static double variance(double sum, double sq, double n) {
    double mean = sum / n;
    return fmax(0, (sq - n * mean * mean) / (n - 1));
}

/* 3 x the standard deviation of the log's figure less the replay's over the runs: the
   replay's variance plus the log's, measured with the even faults drawn (the log is one
   draw of what its provider did), or twice the replay's when no fault is even (the log is
   one more draw of the same noise); or a latency quantile's mean spread toward the log's
   if wider: the half-width of its noise band, 0 when it did not vary. */
static double noise_of(const noise *nz, const char *name) {
    int j = noise_slot(nz, name);
    if (j < 0 || nz->seeds < 2) return 0;
    double n = nz->seeds, v = variance(nz->sum[j], nz->sq[j], n);
    double h = nz->dseeds >= 2 ? 3 * sqrt(v + variance(nz->dsum[j], nz->dsq[j], nz->dseeds))
                               : 3 * sqrt(2.0) * sqrt(v);
    return fmax(h, nz->spread[j] / n);
}

typedef struct measure_ctx {
    sim_summary *s;
    noise *nz;
} measure_ctx;

/* imp_measure_fn: one as-was run, its metrics by name, its figures into the noise. */
static int measure(void *ctx, sim_scenario *sc, bool drawn, const char *const *metrics, uint32_t n,
                   double *out, char *msg, size_t msg_len) {
    measure_ctx *m = ctx;
    sim_summary *s = m->s;
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
    noise_add(m->nz, sc, s, drawn);
    return FB_OK;
}

/*
 * The scenario text with observed.noise: each figure's noise band over the calibration's
 * runs (latencies in seconds, buckets as shares), where it is not 0. Frees text; NULL when
 * out of memory.
 */
static char *with_noise(char *text, const noise *nz) {
    cJSON *doc = cJSON_Parse(text);
    cJSON *o = doc ? cJSON_GetObjectItemCaseSensitive(doc, "observed") : NULL;
    free(text);
    if (o == NULL) {
        cJSON_Delete(doc);
        return NULL;
    }
    cJSON *z = cJSON_AddObjectToObject(o, "noise");
    for (uint32_t i = 0; z && i < nz->n; i++) {
        double h = noise_of(nz, nz->name[i]);
        if (strncmp(nz->name[i], "latency_", 8) == 0) h /= 1e6;
        if (h > 0) cJSON_AddNumberToObject(z, nz->name[i], round(h * 1e6) / 1e6);
    }
    char *out = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (out) util_utf8_fix(out);
    return out;
}

/* Measure the bands against the simulation's noise, and write the scenario again. */
static int calibrate(const args *a, imp_incident *inc, char **text, noise *nz) {
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
    measure_ctx m = {s, nz};
    int rc = s ? imp_incident_calibrate(inc, sc, IMP_CALIBRATE_SEEDS, measure, &m, &ie)
               : imp_fail(&ie, FB_ENOMEM, 0, "%s", "out of memory");
    free(s);
    scn_free(sc);
    if (rc != FB_OK) return cli_bad("import", "%s", ie.msg);
    free(*text);
    *text = imp_incident_json(inc);
    if (*text) *text = with_noise(*text, nz);
    return *text ? CLI_OK : cli_bad("import", "%s", "out of memory");
}

/* A latency figure's rank band as a miss states it: " or within 10% of the log's p88.05..p91.95
   (758ms..1.4s)", "" when it has none. */
static const char *rank_band(char *buf, size_t len, const rep_figure *g) {
    char lo[32], hi[32];
    buf[0] = '\0';
    if (g->kind != REP_FIGURE_LATENCY || !g->rank.present) return buf;
    rep_format_duration(lo, sizeof lo, (double)g->rank.lo_us);
    rep_format_duration(hi, sizeof hi, (double)g->rank.hi_us);
    snprintf(buf, len, " or within 10%% of the log's p%.4g..p%.4g (%.31s..%.31s)",
             100 * g->rank.from, 100 * g->rank.to, lo, hi);
    return buf;
}

/*
 * The log beside as-was, figure by figure (f NULL: only count): a figure misses when it is
 * outside both its tolerance and its noise (the scenario's observed.noise).
 * The misses, each with its most likely cause, go to `why` (NULL: not written). Returns
 * the misses.
 */
static int figures(FILE *f, const imp_incident *inc, const sim_scenario *sc, const sim_summary *s,
                   FILE *why) {
    rep_figure g[REP_FIGURES_MAX];
    size_t k = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    int misses = 0;
    if (f)
        fprintf(f, "\n%-24s %14s %14s %10s %11s\n", "as-was beside the log", "log", "simulated",
                "tolerance", "noise");
    for (size_t i = 0; i < k; i++) {
        double d =
            g[i].kind == REP_FIGURE_BUCKET ? g[i].sim_share - g[i].log_share : g[i].sim - g[i].log;
        char l[48], x[48], t[32], n[40], m[64];
        rep_figure_cell(l, sizeof l, &g[i], true);
        rep_figure_cell(x, sizeof x, &g[i], false);
        rep_figure_tolerance(t, sizeof t, &g[i]);
        rep_figure_noise(n, sizeof n, &g[i]);
        rep_figure_mark(m, sizeof m, &g[i]);
        if (f) fprintf(f, "%-24s %14s %14s %10s %11s%s\n", g[i].name, l, x, t, n, m);
        if (g[i].within) continue;
        misses++;
        if (why == NULL) continue;
        char cause[300], band[160];
        imp_incident_cause(inc, g[i].name, d > 0, cause, sizeof cause);
        if (g[i].kind == REP_FIGURE_BUCKET)
            fprintf(why,
                    "  %s: %s against the log's %s (%+.1f points; tolerance %s, noise %s): "
                    "most likely %s\n",
                    g[i].name, x, l, 100 * d, t, n, cause);
        else
            fprintf(why,
                    "  %s: %s against the log's %s (%+.1f%%; tolerance %s%s, noise %s): "
                    "most likely %s\n",
                    g[i].name, x, l, g[i].log != 0 ? 100 * d / g[i].log : 100.0, t,
                    rank_band(band, sizeof band, &g[i]), n, cause);
    }
    return misses;
}

/*
 * When as-was sends the log's retries at the log's times ("waits": "recorded"), its match says
 * nothing of the fitted retry policy that `yours` starts from: one run of yours (the scenario's
 * seed), its figures outside their tolerance beside the log's, said, not judged (no noise band
 * is measured for it, and the exit code is as-was's).
 */
static void yours_beside(FILE *f, const sim_scenario *sc) {
    int v = scn_variant(sc, "yours"), w = scn_variant(sc, IMP_AS_WAS);
    if (f == NULL || v < 0 || w < 0 || !sc->variants[w].recorded_waits) return;
    sim_summary *s = malloc(sizeof *s);
    sim_run_opts opts;
    sim_error e;
    memset(&opts, 0, sizeof opts);
    if (s == NULL || sim_run(sc, (uint32_t)v, &opts, s, &e) != FB_OK) {
        fprintf(f, "\nyours could not be simulated beside the log: %s\n", s ? e.msg : "no memory");
        free(s);
        return;
    }
    rep_figure g[REP_FIGURES_MAX];
    size_t k = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    int out = 0;
    for (size_t i = 0; i < k; i++) {
        if (g[i].within_tolerance) continue;
        char l[48], x[48], t[32];
        rep_figure_cell(l, sizeof l, &g[i], true);
        rep_figure_cell(x, sizeof x, &g[i], false);
        rep_figure_tolerance(t, sizeof t, &g[i]);
        if (out++ == 0)
            fprintf(f, "\nyours beside the log (one run; its retries wait as its fitted retry "
                       "policy draws, where as-was's come at the log's times; said, not "
                       "judged):\n");
        fprintf(f, "  %s: %s against the log's %s (tolerance %s)\n", g[i].name, x, l, t);
    }
    if (out == 0)
        fprintf(f, "\nyours beside the log (one run, its retry policy's own draws): every figure "
                   "within its tolerance\n");
    free(s);
}

static int report(const args *a, const imp_incident *inc, const char *text) {
    sim_scenario *sc = NULL;
    sim_summary *s = malloc(sizeof *s);
    if (s == NULL) return cli_bad("import", "%s", "out of memory");
    int rc = simulate(text, a->out ? a->out : "<stdout>", &sc, s);
    FILE *f = a->quiet ? NULL : a->out ? stdout : stderr;
    if (f && rc == CLI_OK && inc->fits.p) fprintf(f, "\nfits:\n%s", inc->fits.p);
    int misses = rc == CLI_OK ? figures(f, inc, sc, s, NULL) : 0;
    if (rc == CLI_OK) yours_beside(f, sc);
    int outside = rc == CLI_OK ? table(f, inc, sc, s) : 0;
    if (rc == CLI_OK) rc = write_text(a->out, text);
    if (rc == CLI_OK && a->out && !a->quiet)
        printf(
            "\nwrote %s: %zu requests, %u attempts, %u providers; check it with fusebox check %s\n",
            a->out, inc->r1 - inc->r0, inc->attempts, inc->log->nprov, a->out);
    if (rc == CLI_OK && misses > 0) {
        fprintf(stderr,
                "fusebox import: as-was misses the log on %d figure%s, beyond the tolerance and "
                "the noise of the log against the replay (docs/import.md, \"Fidelity\"):\n",
                misses, misses == 1 ? "" : "s");
        figures(NULL, inc, sc, s, stderr);
        rc = CLI_EXPECT_FAILED;
    }
    if (rc == CLI_OK && outside > 0) {
        fprintf(stderr,
                "fusebox import: as-was is outside %d of the expect lines' bands: fusebox check "
                "will fail on it (docs/import.md, \"Fidelity\")\n",
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
    if (rc < 0) return cli_help_puts(usage_text, stdout), CLI_OK;
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
    noise *nz = calloc(1, sizeof *nz);
    rc = text && nz ? calibrate(&a, inc, &text, nz) : cli_bad("import", "%s", "out of memory");
    if (rc == CLI_OK) rc = report(&a, inc, text);
    free(nz);
    free(text);
    imp_incident_free(inc);
    imp_log_free(log);
    return rc;
}
