/* cmd_live.c - 'fusebox live': a scenario over real HTTP, and simulated vs live. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/live_mocks.h"
#include "cli/live_out.h"
#include "live/compare.h"
#include "live/live.h"
#include "live/otlp.h"
#include "reports/report.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

#define HEADERS_MAX 32

static void usage(FILE *f) {
    cli_help_puts(
        "usage: fusebox live SCENARIO [options]\n"
        "       fusebox live --compare SCENARIO [options]\n"
        "\n"
        "Run SCENARIO's traffic in real time through the same policies as 'fusebox run',\n"
        "each attempt an HTTP request to an in-process mock provider (the default) or to\n"
        "a target, and write report.json, timeseries.csv, events.jsonl, charts and\n"
        "report.html. With --compare, also simulate the scenario on the same seed and\n"
        "write compare.md and compare.json: exit 1 when a metric is outside its tolerance.\n"
        "\n"
        "options:\n"
        "  --target URL            every provider at this base URL (a gateway, a fusebox mock)\n"
        "  --target NAME=URL       provider NAME at URL (repeatable); the others get a mock\n"
        "  --dialect NAME=D        wire format of provider NAME: openai or anthropic (default:\n"
        "                          anthropic when the name says anthropic or claude)\n"
        "  --model NAME=MODEL      model sent to provider NAME (default: the provider's name)\n"
        "  --header 'NAME: VALUE'  extra request header for targets (repeatable); targets\n"
        "                          also get $OPENAI_API_KEY / $ANTHROPIC_API_KEY if set\n"
        "  --time-scale X          simulated time = real time x X (default 1)\n"
        "  --max-transfers N       concurrent HTTP transfers (default 4096)\n"
        "  --otlp FILE             write every request and attempt as OpenTelemetry spans\n"
        "                          (OTLP/JSON, GenAI and HTTP conventions) to FILE\n"
        "  --otlp-max-spans N      stop the run when FILE holds N spans (default 1000000)\n"
        "  --compare               simulate too and compare (DIR/sim holds the simulated run)\n"
        "  --tolerance KEY=VALUE   a compare tolerance: success_rate, success_rate_se, counts,\n"
        "                          counts_min, breaker_opens, breaker_transitions, latency,\n"
        "                          latency_min_ms, latency_se\n"
        "  -o, --out DIR           output folder (default out/<scenario name>-live)\n"
        "      --seed N            override the scenario's seed\n"
        "      --set KEY=VALUE     override a scenario value (repeatable)\n"
        "      --variant NAME      run only this variant (repeatable)\n"
        "      --strict            the scenario's warnings are errors (exit 2)\n"
        "      --policy [NAME=]KIND:FILE[#INSTANCE]\n"
        "                          add a variant made of a library's configuration\n"
        "                          (as fusebox run --policy)\n"
        "      --map-provider NAME=PROVIDER\n"
        "                          map a --policy litellm deployment (as fusebox run)\n"
        "      --no-charts         skip the gnuplot charts and report.html\n"
        "  -q, --quiet             no summary on stdout, no diagnostics on stderr\n"
        "  -h, --help              this text\n"
        "\n"
        "Real providers cost money: every attempt against a real API is billed.\n"
        "The files are written into DIR/.fusebox-new (and DIR/sim/.fusebox-new) and\n"
        "replace an earlier run's files only when all of them are written (other files\n"
        "in DIR are kept); the OTLP file is written beside FILE and renamed.\n"
        "SIGINT or SIGTERM stops the run and writes what was measured, without charts\n"
        "or comparison (report.json: \"complete\": false, \"interrupted\": true).\n"
        "A run that cannot keep the scenario's timing (the driver or the machine too slow\n"
        "for the time scale) is inconclusive: it names the cause and a time scale that\n"
        "would work, and is neither a pass nor a failure.\n"
        "\n"
        "Exit codes: 0 ok, 1 a compared metric outside its tolerance, 2 bad input, a target\n"
        "that refuses connections or does not answer, a file that could not be written (DIR\n"
        "is left as it was) or a run stopped by a cap, 3 inconclusive, 130/143 after\n"
        "SIGINT/SIGTERM. See docs/live.md.\n",
        f);
}

typedef struct pair {
    const char *name, *value;
} pair;

typedef struct args {
    cli_run_args run;
    bool charts, quiet, compare;
    double time_scale;
    uint64_t transfers_max;
    const char *otlp;
    uint64_t otlp_max;
    const char *target_all;
    pair targets[SIM_PROVIDERS_MAX * 2], dialects[SIM_PROVIDERS_MAX * 2],
        models[SIM_PROVIDERS_MAX * 2];
    size_t ntargets, ndialects, nmodels;
    const char *headers[HEADERS_MAX];
    size_t nheaders;
    live_tolerances tol;
} args;

static volatile sig_atomic_t stop_flag; /* the first SIGINT or SIGTERM */

static void on_signal(int sig) {
    if (stop_flag == 0) stop_flag = sig;
}

/* "NAME=VALUE" into a pair list. */
static int add_pair(pair *list, size_t *n, size_t cap, const char *opt, const char *v) {
    const char *eq = strchr(v, '=');
    if (eq == NULL || eq == v) return cli_bad("live", "%s needs NAME=VALUE, got '%s'", opt, v);
    if (*n == cap) return cli_bad("live", "too many %s options", opt);
    static char names[SIM_PROVIDERS_MAX * 6][SIM_NAME_MAX];
    static size_t used;
    if (used == sizeof names / sizeof names[0] || (size_t)(eq - v) >= SIM_NAME_MAX)
        return cli_bad("live", "%s: name too long or too many options", opt);
    memcpy(names[used], v, (size_t)(eq - v));
    names[used][eq - v] = '\0';
    list[*n].name = names[used++];
    list[(*n)++].value = eq + 1;
    return CLI_OK;
}

/* The options that shape the wire: targets, dialects, models, headers, time, tolerances. */
static int parse_wire_option(int argc, char **argv, int *i, args *a) {
    const char *o = argv[*i], *v = NULL;
    char msg[300];
    if (cli_opt(argc, argv, i, NULL, "--target", &v)) {
        if (v == NULL) return cli_missing("live", o);
        const char *eq = strchr(v, '='), *colon = strstr(v, "://");
        if (eq != NULL && (colon == NULL || eq < colon))
            return add_pair(a->targets, &a->ntargets, SIM_PROVIDERS_MAX * 2, "--target", v);
        a->target_all = v;
    } else if (cli_opt(argc, argv, i, NULL, "--dialect", &v)) {
        if (v == NULL) return cli_missing("live", o);
        return add_pair(a->dialects, &a->ndialects, SIM_PROVIDERS_MAX * 2, "--dialect", v);
    } else if (cli_opt(argc, argv, i, NULL, "--model", &v)) {
        if (v == NULL) return cli_missing("live", o);
        return add_pair(a->models, &a->nmodels, SIM_PROVIDERS_MAX * 2, "--model", v);
    } else if (cli_opt(argc, argv, i, NULL, "--header", &v)) {
        if (v == NULL) return cli_missing("live", o);
        if (strchr(v, ':') == NULL || v[0] == ':')
            return cli_bad("live", "--header needs 'NAME: VALUE', got '%s'", v);
        if (a->nheaders == HEADERS_MAX) return cli_bad("live", "too many --header options");
        a->headers[a->nheaders++] = v;
    } else if (cli_opt(argc, argv, i, NULL, "--time-scale", &v)) {
        if (v == NULL) return cli_missing("live", o);
        char *end;
        a->time_scale = strtod(v, &end);
        if (end == v || *end != '\0' || !(a->time_scale > 0) || a->time_scale > 1e6)
            return cli_bad("live", "--time-scale needs a number in (0, 1e6], got '%s'", v);
    } else if (cli_opt(argc, argv, i, NULL, "--max-transfers", &v)) {
        if (v == NULL) return cli_missing("live", o);
        if (cli_parse_u64(v, &a->transfers_max) != 0 || a->transfers_max == 0 ||
            a->transfers_max > 1000000)
            return cli_bad("live", "--max-transfers needs a count in 1..1000000, got '%s'", v);
    } else if (cli_opt(argc, argv, i, NULL, "--otlp", &v)) {
        if (v == NULL) return cli_missing("live", o);
        a->otlp = v;
    } else if (cli_opt(argc, argv, i, NULL, "--otlp-max-spans", &v)) {
        if (v == NULL) return cli_missing("live", o);
        if (cli_parse_u64(v, &a->otlp_max) != 0 || a->otlp_max == 0 || a->otlp_max > 1000000000)
            return cli_bad("live", "--otlp-max-spans needs a count in 1..1000000000, got '%s'", v);
    } else if (cli_opt(argc, argv, i, NULL, "--tolerance", &v)) {
        if (v == NULL) return cli_missing("live", o);
        if (live_tolerance_set(&a->tol, v, msg, sizeof msg) != FB_OK)
            return cli_bad("live", "%s", msg);
    } else {
        return cli_bad("live", "unknown option '%s' (see fusebox live --help)", o);
    }
    return CLI_OK;
}

/* One option at argv[*i] (it starts with '-'): the run's, then the wire's. */
static int parse_option(int argc, char **argv, int *i, args *a) {
    const char *o = argv[*i];
    int rc = CLI_OK;
    if (cli_run_opt(argc, argv, i, "live", &a->run, &rc)) return rc;
    if (strcmp(o, "--compare") == 0) {
        a->compare = true;
    } else if (strcmp(o, "--no-charts") == 0) {
        a->charts = false;
    } else if (strcmp(o, "-q") == 0 || strcmp(o, "--quiet") == 0) {
        a->quiet = true;
    } else {
        return parse_wire_option(argc, argv, i, a);
    }
    return CLI_OK;
}

/* Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, args *a) {
    memset(a, 0, sizeof *a);
    a->charts = true;
    a->time_scale = 1.0;
    live_tolerances_default(&a->tol);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int rc = CLI_OK;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (o[0] == '-' && o[1] != '\0') {
            rc = parse_option(argc, argv, &i, a);
        } else if (a->run.file == NULL) {
            a->run.file = o;
        } else {
            return cli_bad("live", "one scenario at a time (got '%s' and '%s')", a->run.file, o);
        }
        if (rc != CLI_OK) return rc;
    }
    if (a->run.file == NULL) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* Resolve the per-provider options against the scenario into cfg. */
static int resolve_targets(const args *a, const sim_scenario *sc, live_config *cfg,
                           const char **headers_of[2], size_t nheaders_of[2]) {
    const pair *lists[] = {a->targets, a->dialects, a->models};
    const size_t counts[] = {a->ntargets, a->ndialects, a->nmodels};
    const char *opts[] = {"--target", "--dialect", "--model"};
    for (size_t l = 0; l < 3; l++)
        for (size_t k = 0; k < counts[l]; k++)
            if (scn_provider(sc, lists[l][k].name) < 0)
                return cli_bad("live", "%s: %s has no provider named '%s'", opts[l], sc->file,
                               lists[l][k].name);
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        live_target *t = &cfg->targets[p];
        const char *name = sc->providers[p].name;
        t->url = a->target_all;
        t->dialect = live_dialect_guess(name);
        for (size_t k = 0; k < a->ntargets; k++)
            if (strcmp(a->targets[k].name, name) == 0) t->url = a->targets[k].value;
        for (size_t k = 0; k < a->nmodels; k++)
            if (strcmp(a->models[k].name, name) == 0) t->model = a->models[k].value;
        for (size_t k = 0; k < a->ndialects; k++) {
            if (strcmp(a->dialects[k].name, name) != 0) continue;
            if (live_dialect_parse(a->dialects[k].value, &t->dialect) != FB_OK)
                return cli_bad("live", "--dialect %s: '%s' is not openai or anthropic", name,
                               a->dialects[k].value);
        }
        t->headers = headers_of[t->dialect];
        t->header_count = nheaders_of[t->dialect];
    }
    return CLI_OK;
}

/* Run the selected variants (live or simulated) into rs, their rows and events through w. */
static int run_variants(cli_writer *w, const args *a, const sim_scenario *sc, const bool *selected,
                        const live_config *cfg, bool live, cli_live_runs *rs) {
    int status = CLI_OK;
    for (uint32_t v = 0; v < sc->variant_count && !stop_flag; v++) {
        if (a->run.nonly > 0 && !selected[v]) continue;
        sim_summary *s = malloc(sizeof *s);
        if (s == NULL) {
            fprintf(stderr, "fusebox live: out of memory\n");
            return CLI_BAD_INPUT;
        }
        rs->sums[rs->n] = s;
        w->variant = sc->variants[v].name;
        sim_run_opts opts = cli_writer_opts(w);
        sim_error err;
        cli_mock_log *log = &rs->mocks[rs->n];
        int rc = live ? cli_live_run(sc, v, cfg, log, &opts, s, &rs->stats[rs->n], &err)
                      : sim_run(sc, v, &opts, s, &err);
        if (w->progress) fputs("\r\033[K", stderr);
        if (!a->quiet) cli_live_print_mocks(stderr, sc, sc->variants[v].name, log);
        /* nothing ran when the setup failed */
        bool ran = rc == FB_OK || s->complete || s->variant[0] != '\0';
        if (ran)
            rs->n++;
        else
            free(s);
        if (rc != FB_OK && !(ran && stop_flag)) { /* an interruption is said once, at the end */
            char msg[1100];
            scn_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "fusebox live: variant %s: %s\n", sc->variants[v].name, msg);
            status = CLI_BAD_INPUT;
            if (!ran) break;
        }
    }
    return status;
}

/*
 * Run the selected variants (live or simulated) into rs and stage the report
 * files of dir through w (held: run_plan commits); live runs are judged
 * (with the simulated ones of `sim`, may be NULL) and report.json says
 * whether they were interrupted or inconclusive.
 */
static int run_into(cli_writer *w, const char *dir, const args *a, const sim_scenario *sc,
                    const bool *selected, const live_config *cfg, bool live, cli_live_runs *rs,
                    const cli_live_runs *sim) {
    int status = cli_writer_open(w, "live", dir, sc, !a->quiet && isatty(STDERR_FILENO));
    w->stop = &stop_flag;
    w->hold = true;
    if (status == CLI_OK) {
        status = run_variants(w, a, sc, selected, cfg, live, rs);
        rs->interrupted = stop_flag != 0;
    }
    if (!live) return cli_writer_close(w, "live", dir, rs->sums, rs->n, a->charts, status);
    cli_live_judge(sc, a->time_scale, rs, sim);
    rep_extra extra[2];
    char *text[2];
    size_t nextra = cli_live_extras(rs, extra, text);
    char *warning = cli_live_warning(rs);
    w->warning = warning;
    status =
        cli_writer_close_extra(w, "live", dir, rs->sums, rs->n, a->charts, status, extra, nextra);
    w->warning = NULL;
    free(warning);
    cli_live_extras_free(text);
    return status;
}

/* Stage DIR/NAME through w's folder with `put`; false when it could not be written (printed). */
static bool stage_file(const cli_writer *w, const char *name, int (*put)(FILE *, const void *),
                       const void *ctx) {
    char path[1300], shown[1300];
    cli_outdir_path(&w->out, name, path, sizeof path);
    snprintf(shown, sizeof shown, "%s/%s", w->out.dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) return cli_write_error("live", shown, errno) == 0;
    int rc = put(f, ctx);
    return cli_close_checked(f, "live", shown) == 0 && rc == FB_OK;
}

typedef struct cmp_out {
    const sim_scenario *sc;
    const live_cmp *c;
    const live_tolerances *tol;
} cmp_out;

static int put_markdown(FILE *f, const void *ctx) {
    const cmp_out *o = ctx;
    live_compare_markdown(f, o->sc, o->c);
    return FB_OK;
}

static int put_json(FILE *f, const void *ctx) {
    const cmp_out *o = ctx;
    return live_compare_json(f, o->sc, o->c, o->tol);
}

/* Compare the live runs with the simulated ones into c and stage compare.md and compare.json. */
static int compare(const cli_writer *w, const args *a, const sim_scenario *sc,
                   const cli_live_runs *sim, const cli_live_runs *live, live_cmp *c, bool *staged,
                   bool *write_failed) {
    int status = CLI_OK;
    for (size_t i = 0; i < live->n && i < sim->n; i++) {
        if (live_compare_variant(c, sc, sim->sums[i], live->sums[i], &a->tol, a->time_scale) !=
            FB_OK)
            status = CLI_BAD_INPUT;
        const live_fidelity *f = &live->fid[i];
        if (!f->ok)
            live_compare_inconclusive(c, live->sums[i]->variant, f->reason, f->time_scale_ok);
    }
    if (status != CLI_OK) return status;
    cmp_out o = {sc, c, &a->tol};
    *write_failed = !stage_file(w, "compare.md", put_markdown, &o) ||
                    !stage_file(w, "compare.json", put_json, &o);
    if (*write_failed) return CLI_BAD_INPUT;
    *staged = true;
    live_verdict v = live_compare_verdict(c);
    return v == LIVE_PASS ? CLI_OK : v == LIVE_INCONCLUSIVE ? CLI_INCONCLUSIVE : CLI_EXPECT_FAILED;
}

/* Let the process hold a socket per transfer and per mock connection. */
static void raise_fd_limit(uint64_t transfers) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    rlim_t want = (rlim_t)(2 * transfers + 256);
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* Of two exit codes, the one that says more is wrong: bad input, inconclusive, a failure, ok. */
static int worst(int a, int b) {
    static const int rank[] = {
        [CLI_OK] = 0, [CLI_EXPECT_FAILED] = 1, [CLI_INCONCLUSIVE] = 2, [CLI_BAD_INPUT] = 3};
    return rank[a] >= rank[b] ? a : b;
}

/*
 * What a run needs besides the options, resolved against the scenario; the
 * targets' headers point into hdr and auth.
 */
typedef struct plan {
    bool selected[SIM_VARIANTS_MAX];
    const char *hdr[2][HEADERS_MAX + 1]; /* by dialect */
    size_t nhdr[2];
    char auth[2][1024];
    live_config cfg;
    char dir[1024];
    sigset_t wait_mask;
} plan;

/* API keys go to explicit targets only, each to its dialect */
static void api_headers(const args *a, plan *p) {
    const char *keys[2] = {getenv("OPENAI_API_KEY"), getenv("ANTHROPIC_API_KEY")};
    for (int d = 0; d < 2; d++) {
        if (keys[d] != NULL && keys[d][0] != '\0') {
            snprintf(p->auth[d], sizeof p->auth[d],
                     d == 0 ? "authorization: Bearer %s" : "x-api-key: %s", keys[d]);
            p->hdr[d][p->nhdr[d]++] = p->auth[d];
        }
        for (size_t k = 0; k < a->nheaders; k++) p->hdr[d][p->nhdr[d]++] = a->headers[k];
    }
}

/* SIGINT/SIGTERM stay blocked (in the mocks' threads too) except while the driver waits */
static void take_signals(sigset_t *wait_mask) {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, wait_mask);
    sigdelset(wait_mask, SIGINT);
    sigdelset(wait_mask, SIGTERM);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* The rest of p (zeroed, the variants selected): headers, targets, folder, signals, config. */
static int make_plan(const args *a, const sim_scenario *sc, plan *p) {
    api_headers(a, p);
    const char **headers_of[2] = {p->hdr[0], p->hdr[1]};
    int status = resolve_targets(a, sc, &p->cfg, headers_of, p->nhdr);
    if (status != CLI_OK) return status;
    if (a->run.out)
        snprintf(p->dir, sizeof p->dir, "%s", a->run.out);
    else
        snprintf(p->dir, sizeof p->dir, "out/%s-live", sc->name);
    take_signals(&p->wait_mask);
    uint64_t transfers = a->transfers_max ? a->transfers_max : 4096;
    raise_fd_limit(transfers);
    p->cfg.time_scale = a->time_scale;
    p->cfg.transfers_max = (uint32_t)transfers;
    p->cfg.stop = &stop_flag;
    p->cfg.wait_sigmask = &p->wait_mask;
    return CLI_OK;
}

/* What a live command ran and staged, until it is committed and told. */
typedef struct outcome {
    cli_live_runs live, sim;
    cli_writer wlive, wsim;
    live_cmp cmp;
    bool compared;     /* compare.md and compare.json staged */
    bool write_failed; /* a file could not be written: nothing is committed */
} outcome;

/* The runs (simulated first with --compare) and their files, staged. */
static int run_staged(const args *a, const sim_scenario *sc, const plan *p, outcome *r) {
    int status = CLI_OK;
    if (a->compare) {
        char simdir[1100];
        snprintf(simdir, sizeof simdir, "%s/sim", p->dir);
        status = run_into(&r->wsim, simdir, a, sc, p->selected, &p->cfg, false, &r->sim, NULL);
        r->write_failed = !r->wsim.hold;
    }
    if (status != CLI_OK) return status;
    const cli_live_runs *sim = a->compare ? &r->sim : NULL;
    status = run_into(&r->wlive, p->dir, a, sc, p->selected, &p->cfg, true, &r->live, sim);
    if (!r->wlive.hold) r->write_failed = true;
    if (r->write_failed || r->live.n == 0) return status;
    if (cli_live_json(&r->wlive.out, sc, &r->live, &p->cfg) != CLI_OK) {
        r->write_failed = true;
        return CLI_BAD_INPUT;
    }
    /* an interrupted run is not compared: its rows would read as a failure */
    if (a->compare && !r->live.interrupted)
        status = worst(status, compare(&r->wlive, a, sc, &r->sim, &r->live, &r->cmp, &r->compared,
                                       &r->write_failed));
    else if (cli_live_inconclusive(&r->live))
        status = worst(status, CLI_INCONCLUSIVE);
    return status;
}

/* Commit the staged folders, DIR/sim first, all or none. Returns CLI_OK or CLI_BAD_INPUT. */
static int commit(const args *a, outcome *r) {
    bool ok = !r->write_failed;
    int rc = CLI_OK;
    if (a->compare && r->wsim.hold) rc = cli_writer_commit(&r->wsim, "live", ok);
    if (r->wlive.hold) rc = worst(rc, cli_writer_commit(&r->wlive, "live", ok && rc == CLI_OK));
    return rc;
}

/* The summary, the verdict, the comparison and what was written, once it is in place. */
static void tell(const args *a, const sim_scenario *sc, const plan *p, const outcome *r) {
    const cli_live_runs *live = &r->live;
    rep_text_summary(stdout, sc, live->sums, live->n);
    cli_live_print(stdout, live, a->time_scale);
    cli_live_print_verdict(stdout, sc, live);
    if (r->compared) {
        fputc('\n', stdout);
        live_compare_markdown(stdout, sc, &r->cmp);
    }
    putchar('\n');
    if (r->wlive.out.replaced[0]) printf("replaced %s/ (%s)\n", p->dir, r->wlive.out.replaced);
    printf("wrote %s/report.json, timeseries.csv, events.jsonl, live.json%s%s\n", p->dir,
           a->charts && !live->interrupted ? ", charts, report.html" : "",
           r->compared ? ", compare.md, compare.json" : "");
}

/* The runs, their files committed whole, the summary; the exit code. */
static int run_plan(const args *a, const sim_scenario *sc, const plan *p) {
    static outcome r;
    memset(&r, 0, sizeof r);
    int status = run_staged(a, sc, p, &r);
    status = worst(status, commit(a, &r));
    if (!a->quiet && r.wlive.committed && r.live.n > 0) tell(a, sc, p, &r);
    if (r.live.interrupted) {
        const char *name = stop_flag == SIGTERM ? "SIGTERM" : "SIGINT";
        if (r.wlive.committed) {
            fprintf(stderr,
                    "fusebox live: interrupted (%s); %s/ holds what was measured "
                    "(report.json: \"complete\": false, \"interrupted\": true)\n",
                    name, p->dir);
            status = status == CLI_BAD_INPUT ? status : 128 + (int)stop_flag;
        } else {
            fprintf(stderr, "fusebox live: interrupted (%s); nothing written\n", name);
            status = CLI_BAD_INPUT;
        }
    }
    live_compare_free(&r.cmp);
    for (size_t i = 0; i < r.live.n; i++) free(r.live.sums[i]);
    for (size_t i = 0; i < r.sim.n; i++) free(r.sim.sums[i]);
    return status;
}

int cli_cmd_live(int argc, char **argv) {
    static args a; /* large: the pair lists */
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK) return rc < 0 ? CLI_OK : rc;
    static plan p;
    memset(&p, 0, sizeof p);
    sim_scenario *sc = NULL;
    rc = cli_run_load(&a.run, "live", &sc, p.selected);
    if (rc != CLI_OK) return rc;
    int status = make_plan(&a, sc, &p);
    FILE *otlp = NULL;
    char otlp_tmp[1100];
    if (status == CLI_OK && a.otlp != NULL) {
        otlp = cli_file_begin("live: --otlp", a.otlp, false, otlp_tmp, sizeof otlp_tmp);
        if (otlp != NULL && live_otlp_open(otlp, a.otlp_max, &p.cfg.otlp) != FB_OK) {
            cli_file_discard(otlp, otlp_tmp);
            otlp = NULL;
            fprintf(stderr, "fusebox live: out of memory\n");
        }
        if (otlp == NULL) status = CLI_BAD_INPUT;
    }
    if (status == CLI_OK) status = run_plan(&a, sc, &p);
    if (otlp != NULL) {
        uint64_t spans = live_otlp_spans(p.cfg.otlp);
        /* a write error shows in the stream's error flag, which the checked close reports */
        live_otlp_close(p.cfg.otlp);
        if (cli_file_commit(otlp, "live: --otlp", a.otlp, otlp_tmp) != 0)
            status = CLI_BAD_INPUT;
        else if (!a.quiet)
            printf("wrote %s: %llu spans\n", a.otlp, (unsigned long long)spans);
    }
    scn_free(sc);
    return status;
}
