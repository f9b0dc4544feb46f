/*
 * charts.c - time-series charts with gnuplot; see charts.h and docs/reports.md.
 *
 * The run's timeseries.csv is folded into at most POINTS_MAX points per
 * variant (a point covers a whole number of ticks), written as one small data
 * file per variant, and each chart is a gnuplot script that draws itself as
 * PNG and SVG. Every axis range is computed here, so gnuplot never autoscales
 * and the same inputs always give the same bytes.
 */
#include "reports/charts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "reports/gnuplot.h"
#include "reports/report.h"
#include "sim/metrics.h"
#include "util/file.h"

#define POINTS_MAX 600 /* about two pixels per point on a 1100-pixel chart */
#define WIDTH_PX 1100
#define PATH_LEN 1100
#define LABELS_MAX 10 /* more windows than this are shaded without labels */
/* Window labels sit in rows above the plot, never over the data: a label takes the lowest row
 * whose labels end before it starts, judged in pixels with a character as wide as the widest
 * small print (PNG 9 pt, SVG 11 px); one that finds no row among LABEL_ROWS is left out (its
 * window stays shaded, and the report's fault table names it). The row next to the plot is the
 * first panel's title's. */
#define LABEL_ROWS 4
#define LABEL_CHAR_PX 7.0
#define LABEL_ROW_PX 14
#define PLOT_LEFT 0.07 /* the multiplot's margins, as fractions of WIDTH_PX */
#define PLOT_RIGHT 0.79

static const rep_chart_info chart_infos[] = {
    {"compare", "Variants side by side",
     "One panel per headline metric, one bar per variant. Spillover marked + had not returned to "
     "baseline when the run ended, so the bar is a lower bound."},
    {"classes", "Traffic classes",
     "Per traffic class, one bar per variant: the share of the class's requests that failed or "
     "answered later than the SLO, and its p99 latency. A class that calls no LLM has bars "
     "only when the variant lets the LLM's trouble reach it: collateral damage."},
    {"outcomes", "What users got, per second",
     "Stacked: how requests ended each second (success, success via a fallback provider, "
     "degraded answer, error); the black line is arrivals. Shaded bands are scripted faults "
     "(red) and traffic spikes (grey). A gap between the line and the stack is a backlog."},
    {"attempts", "Provider attempts per second",
     "Attempts sent to each provider (lines) and the failed ones (shaded), against user "
     "arrivals of every class (dashed), on a log scale: the height of the attempts above the "
     "arrivals is the amplification. Attempts far above arrivals are retries: a retry storm."},
    {"breakers", "Circuit breakers",
     "Share of pods whose breaker for each provider is open (filled) or half-open (dashed). "
     "With a shared breaker every pod sees the same state. Variants without a breaker have no "
     "panel (and a run where no variant has one, no chart)."},
    {"load", "Requests in flight and queued",
     "Requests inside the pods (working or waiting) and the part of them waiting in pod "
     "queues, one line per variant. A queue that keeps growing after a fault has ended is "
     "the signature of a metastable failure."},
    {"limits", "Concurrency limits",
     "The concurrency limit of each variant's pods at each provider it limits, the mean over "
     "the pods: a fixed limit is a flat line, an adaptive one (AIMD, Vegas, Gradient) falls when "
     "it sees drops or slow calls and climbs back after them. A variant without a limit has no "
     "line."},
    {"connections", "Waiting for a connection",
     "Attempts waiting for a connection from the pods' pools, all pods together, per variant "
     "with a pool and provider. Waits that climb while a provider is slow are the pool holding "
     "calls back; the calls to the other providers that share the pool wait with them."},
    {"pods", "Pods (autoscaler)",
     "Pods taking traffic (solid) and pods started but not yet ready (dashed), per variant; a "
     "variant without an autoscaler keeps its fixed pods. The lag between the load rising and "
     "the solid line following it is the autoscaler's delay plus the cold start; pods added "
     "during a fault send more calls into it."},
    {"resubmissions", "Users re-submitting",
     "Requests per second that were users re-submitting a request that failed, per variant "
     "(the other charts count them among the arrivals). A rise that outlasts the fault is the "
     "users' own retry storm."},
    {"latency", "Latency",
     "End-to-end latency of requests that ended in each interval, p99 (solid) and p50 "
     "(dashed), log scale; the grey line is the latency SLO."},
};

const rep_chart_info *rep_chart_list(size_t *count) {
    *count = sizeof chart_infos / sizeof chart_infos[0];
    return chart_infos;
}

/* The breakers chart of a scenario whose breaker store goes down also shades the outages. */
static const char breakers_store_caption[] =
    "Share of pods whose breaker for each provider is open (filled) or half-open (dashed). "
    "With a shared breaker every pod sees the same state. Variants without a breaker have no "
    "panel. Hatched bands are the times the breaker store was unreachable (breaker_store.outages): "
    "what the pods' breakers do then is the variant's store_outage.";

const char *rep_chart_caption(const sim_scenario *sc, const rep_chart_info *info) {
    if (strcmp(info->name, "breakers") == 0 && scn_uses(sc, SIM_FEATURE_STORE_OUTAGE))
        return breakers_store_caption;
    return info->caption;
}

/* Okabe-Ito, for variants; Paul Tol's muted set, for providers. */
static const char *const variant_colors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                             "#E69F00", "#56B4E9", "#000000", "#999999"};
static const char *const provider_colors[] = {"#332288", "#117733", "#AA4499", "#44AA99",
                                              "#882255", "#999933", "#88CCEE", "#DDCC77"};
#define NCOLORS 8

const char *rep_chart_variant_color(const sim_scenario *sc, const char *variant) {
    int v = scn_variant(sc, variant);
    return variant_colors[(v < 0 ? 0 : (size_t)v) % NCOLORS];
}

/* Columns of timeseries.csv after the variant name (see rep_csv_header). */
enum {
    C_T,
    C_ARRIVALS,
    C_ENDED,
    C_SUCCESS,
    C_FALLBACK,
    C_DEGRADED,
    C_ERRORS,
    C_SLO_MISSED,
    C_ERROR_RATE,
    C_IN_FLIGHT,
    C_POD_QUEUE,
    C_BUSY,
    C_P50,
    C_P99,
    C_FAULT,
    C_COUNT
};
enum {
    CP_ATTEMPTS,
    CP_ERRORS,
    CP_RATE_LIMITED,
    CP_TIMEOUTS,
    CP_IN_SERVICE,
    CP_QUEUE,
    CP_OPEN,
    CP_HALF_OPEN,
    CP_COUNT
};
/* then per provider its limit and connection waits, then the fleet's four (rep_csv_header) */
#define CSV_VALUES_MAX (C_COUNT + (CP_COUNT + 2) * SIM_PROVIDERS_MAX + 4)

/* Where the columns of the features a scenario uses are among a row's numbers; -1: absent. */
typedef struct feature_cols {
    int limit[SIM_PROVIDERS_MAX], conn_wait[SIM_PROVIDERS_MAX];
    int pods, pods_starting, resubmissions, store_down;
    size_t count;                  /* numbers per row, these included */
    bool empty_ok[CSV_VALUES_MAX]; /* a variant without a limit leaves its limit cell empty */
} feature_cols;

/* Some ticks folded together: counts and gauges summed, latency as noted. */
typedef struct point {
    uint32_t ticks;
    double arrivals, success, fallback, degraded, errors, slo_missed;
    double in_flight, pod_queue;
    /* latency: the ticks' percentiles weighted by requests ended (a histogram per point is
       not in the CSV); a lone slow second is smoothed, a sustained one is not */
    double p50_weighted, p99_weighted, ended;
    struct {
        double attempts, errors, open, half_open;
        double limit, conn_wait;
        uint32_t limit_ticks; /* ticks that had a limit (a variant without one has none) */
    } p[SIM_PROVIDERS_MAX];
    double pods, pods_starting, resubmissions, store_down; /* the fleet's, when used */
} point;

typedef struct series {
    const sim_summary *sum;
    int variant; /* index in sc->variants */
    char file[SIM_NAME_MAX + 16];
    point *pts;
    size_t npts, cap;
} series;

typedef struct window {
    fb_time_us from_us, to_us;
    bool spike; /* traffic spike or burst, not a fault */
    char label[SIM_NAME_MAX + 48];
} window;

typedef struct charts {
    const char *dir;
    char cdir[PATH_LEN - 100]; /* DIR/charts, short enough for any file name in it */
    const sim_scenario *sc;
    sim_summary *const *sums;
    size_t n;
    series *ser;
    fb_time_us bucket_us;
    double tdiv;       /* seconds per time-axis unit */
    const char *tunit; /* its name */
    double xmax;
    window *win;
    size_t nwin;
    feature_cols cols;
    char *msg;
    size_t msglen;
} charts;

static int fail(charts *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(charts *c, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, c->msglen, fmt, ap);
    va_end(ap);
    return rc;
}

/* Names end up in file names and gnuplot column headers: keep [A-Za-z0-9_.-]. */
static void safe_name(char *out, size_t len, const char *name) {
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++) {
        char ch = name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
        out[i] = ok ? ch : '_';
    }
    out[i] = '\0';
}

void rep_chart_data_file(char *buf, size_t len, const char *variant) {
    char name[SIM_NAME_MAX];
    safe_name(name, sizeof name, variant);
    snprintf(buf, len, "data_%s.dat", name);
}

/* A provider's column in the data files: NAME_what. */
static void gp_pcol(FILE *f, const charts *c, uint32_t p, const char *what) {
    char name[SIM_NAME_MAX], col[SIM_NAME_MAX + 24];
    safe_name(name, sizeof name, c->sc->providers[p].name);
    snprintf(col, sizeof col, "%s_%s", name, what);
    rep_gnuplot_quote(f, col);
}

/* DIR/charts/NAME.EXT; rep_charts checked that such paths fit. */
static void chart_path(const charts *c, char *buf, const char *name, const char *ext) {
    int w = snprintf(buf, PATH_LEN, "%s/%s%s", c->cdir, name, ext);
    (void)w;
}

/* A round axis top at or a little above x: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k. */
static double nice_ceil(double x) {
    static const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    if (!(x > 0)) return 1;
    x *= 1.05;
    double e = pow(10, floor(log10(x)));
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (x <= steps[i] * e * (1 + 1e-9)) return steps[i] * e;
    return 10 * e;
}

/* ---- reading timeseries.csv ---- */

static series *find_series(charts *c, const char *variant) {
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->ser[i].sum->variant, variant) == 0) return &c->ser[i];
    return NULL;
}

/* The columns of the features the scenario uses, in rep_csv_header's order. */
static void feature_layout(feature_cols *fc, const sim_scenario *sc) {
    memset(fc, 0, sizeof *fc);
    size_t k = C_COUNT + CP_COUNT * (size_t)sc->provider_count;
    bool limit = scn_uses(sc, SIM_FEATURE_CONCLIMIT);
    bool pool = scn_uses(sc, SIM_FEATURE_POOL);
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) {
        fc->limit[p] = limit && p < sc->provider_count ? (int)k++ : -1;
        if (fc->limit[p] >= 0) fc->empty_ok[fc->limit[p]] = true;
        fc->conn_wait[p] = pool && p < sc->provider_count ? (int)k++ : -1;
    }
    bool scale = scn_uses(sc, SIM_FEATURE_AUTOSCALE);
    fc->pods = scale ? (int)k++ : -1;
    fc->pods_starting = scale ? (int)k++ : -1;
    fc->resubmissions = scn_uses(sc, SIM_FEATURE_RESUBMIT) ? (int)k++ : -1;
    fc->store_down = scn_uses(sc, SIM_FEATURE_STORE_OUTAGE) ? (int)k++ : -1;
    fc->count = k;
}

static void fold_features(const feature_cols *fc, uint32_t providers, point *pt, const double *v) {
    for (uint32_t p = 0; p < providers; p++) {
        if (fc->limit[p] >= 0 && !isnan(v[fc->limit[p]])) {
            pt->p[p].limit += v[fc->limit[p]];
            pt->p[p].limit_ticks++;
        }
        if (fc->conn_wait[p] >= 0) pt->p[p].conn_wait += v[fc->conn_wait[p]];
    }
    if (fc->pods >= 0) pt->pods += v[fc->pods];
    if (fc->pods_starting >= 0) pt->pods_starting += v[fc->pods_starting];
    if (fc->resubmissions >= 0) pt->resubmissions += v[fc->resubmissions];
    if (fc->store_down >= 0) pt->store_down += v[fc->store_down];
}

static int fold_row(charts *c, series *s, const double *v) {
    if (!(v[C_T] >= 0) || v[C_T] > 1e12) return FB_ERANGE;
    fb_time_us t_us = (fb_time_us)llround(v[C_T] * 1e6);
    size_t b = (size_t)(t_us / c->bucket_us);
    if (b >= s->cap) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap <= b) cap *= 2;
        point *pts = realloc(s->pts, cap * sizeof *pts);
        if (pts == NULL) return FB_ENOMEM;
        memset(pts + s->cap, 0, (cap - s->cap) * sizeof *pts);
        s->pts = pts;
        s->cap = cap;
    }
    if (b >= s->npts) s->npts = b + 1;
    point *pt = &s->pts[b];
    pt->ticks++;
    pt->arrivals += v[C_ARRIVALS];
    pt->success += v[C_SUCCESS] - v[C_FALLBACK];
    pt->fallback += v[C_FALLBACK];
    pt->degraded += v[C_DEGRADED];
    pt->errors += v[C_ERRORS];
    pt->slo_missed += v[C_SLO_MISSED];
    pt->in_flight += v[C_IN_FLIGHT];
    pt->pod_queue += v[C_POD_QUEUE];
    if (v[C_ENDED] > 0) {
        pt->p50_weighted += v[C_P50] * v[C_ENDED];
        pt->ended += v[C_ENDED];
        pt->p99_weighted += v[C_P99] * v[C_ENDED];
    }
    for (uint32_t p = 0; p < c->sc->provider_count; p++) {
        const double *pv = v + C_COUNT + p * CP_COUNT;
        pt->p[p].attempts += pv[CP_ATTEMPTS];
        pt->p[p].errors += pv[CP_ERRORS];
        pt->p[p].open += pv[CP_OPEN];
        pt->p[p].half_open += pv[CP_HALF_OPEN];
    }
    fold_features(&c->cols, c->sc->provider_count, pt, v);
    return FB_OK;
}

/* Split one CSV line (without its newline) into the variant and the numbers (an empty cell,
 * where `fc` allows one, is NaN). */
static bool parse_line(char *line, const feature_cols *fc, double *v, char **variant) {
    char *comma = strchr(line, ',');
    if (comma == NULL) return false;
    *comma = '\0';
    *variant = line;
    char *p = comma + 1;
    for (size_t k = 0; k < fc->count; k++) {
        char *end = p;
        if (fc->empty_ok[k] && (*p == ',' || *p == '\0')) {
            v[k] = NAN;
        } else {
            v[k] = strtod(p, &end);
            if (end == p) return false;
        }
        if (*end != (k + 1 < fc->count ? ',' : '\0')) return false;
        p = end + 1;
    }
    return true;
}

static int read_timeseries(charts *c) {
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/timeseries.csv", c->dir);
    int rc = FB_OK;
    char *want = NULL, *line = NULL;
    size_t want_len = 0, line_cap = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL) return fail(c, FB_EIO, "cannot open %s: %s", path, strerror(errno));
    FILE *m = open_memstream(&want, &want_len);
    if (m == NULL) {
        rc = fail(c, FB_ENOMEM, "out of memory");
        goto close_file;
    }
    rep_csv_header(m, c->sc);
    if (fclose(m) != 0) {
        rc = fail(c, FB_ENOMEM, "out of memory");
        goto free_lines;
    }
    if (getline(&line, &line_cap, f) < 0 || strcmp(line, want) != 0) {
        rc = fail(c, FB_EPARSE, "%s: the header does not match scenario %s's providers", path,
                  c->sc->name);
        goto free_lines;
    }
    feature_layout(&c->cols, c->sc);
    double v[CSV_VALUES_MAX];
    unsigned long lineno = 1;
    ssize_t len;
    while ((len = getline(&line, &line_cap, f)) > 0) {
        lineno++;
        if (line[len - 1] == '\n') line[len - 1] = '\0';
        char *variant;
        if (!parse_line(line, &c->cols, v, &variant)) {
            rc = fail(c, FB_EPARSE, "%s:%lu: expected %zu numbers after the variant", path, lineno,
                      c->cols.count);
            goto free_lines;
        }
        series *s = find_series(c, variant);
        if (s == NULL) {
            rc = fail(c, FB_EPARSE, "%s:%lu: variant '%s' is not among the summaries", path, lineno,
                      variant);
            goto free_lines;
        }
        rc = fold_row(c, s, v);
        if (rc != FB_OK) {
            rc = fail(c, rc, "%s:%lu: %s", path, lineno,
                      rc == FB_ENOMEM ? "out of memory" : "time out of range");
            goto free_lines;
        }
    }
    if (ferror(f)) rc = fail(c, FB_EIO, "cannot read %s", path);
free_lines:
    free(line);
    free(want);
close_file:
    fclose(f);
    return rc;
}

/* ---- per-point values, per second or as a mean over the point's ticks ---- */

static double tick_s(const charts *c) {
    return (double)c->sc->tick_us / 1e6;
}

static double per_s(const charts *c, const point *pt, double count) {
    return count / ((double)pt->ticks * tick_s(c));
}

static double mean(const point *pt, double sum) {
    return sum / (double)pt->ticks;
}

/* Middle of the ticks a point covers, in time-axis units. */
static double point_t(const charts *c, size_t b, const point *pt) {
    double start = (double)b * (double)c->bucket_us / 1e6;
    return (start + (double)pt->ticks * tick_s(c) / 2) / c->tdiv;
}

/* Close a file written, checking its error flag, the flush and the close: a full disk is named. */
static int close_checked(charts *c, FILE *f, const char *path) {
    int err = util_fclose_checked(f);
    return err == 0 ? FB_OK : fail(c, FB_EIO, "cannot write %s: %s", path, strerror(err));
}

static void put_num(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, " %.4f", v);
    else
        fputs(" NaN", f);
}

/* The data files' columns of the features the scenario uses (none for one that uses none). */
static void feature_heads(const charts *c, FILE *f) {
    const feature_cols *fc = &c->cols;
    for (uint32_t p = 0; p < c->sc->provider_count; p++) {
        char name[SIM_NAME_MAX];
        safe_name(name, sizeof name, c->sc->providers[p].name);
        if (fc->limit[p] >= 0) fprintf(f, " %s_limit", name);
        if (fc->conn_wait[p] >= 0) fprintf(f, " %s_conn_wait", name);
    }
    if (fc->pods >= 0) fputs(" pods pods_starting", f);
    if (fc->resubmissions >= 0) fputs(" resubmissions_ps", f);
    if (fc->store_down >= 0) fputs(" store_down_pct", f);
}

/* Limits and waits and pods as means over the point's ticks, re-submissions per second. */
static void feature_values(const charts *c, FILE *f, const point *pt) {
    const feature_cols *fc = &c->cols;
    for (uint32_t p = 0; p < c->sc->provider_count; p++) {
        if (fc->limit[p] >= 0)
            put_num(f, pt->p[p].limit_ticks ? pt->p[p].limit / pt->p[p].limit_ticks : NAN);
        if (fc->conn_wait[p] >= 0) put_num(f, mean(pt, pt->p[p].conn_wait));
    }
    if (fc->pods >= 0) {
        put_num(f, mean(pt, pt->pods));
        put_num(f, mean(pt, pt->pods_starting));
    }
    if (fc->resubmissions >= 0) put_num(f, per_s(c, pt, pt->resubmissions));
    if (fc->store_down >= 0) put_num(f, 100 * mean(pt, pt->store_down));
}

static int write_data(charts *c, const series *s) {
    char path[PATH_LEN];
    chart_path(c, path, s->file, "");
    FILE *f = fopen(path, "w");
    if (f == NULL) return fail(c, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "t ok_ps fallback_ps degraded_ps errors_ps slo_missed_ps arrivals_ps in_flight "
               "pod_queue p50_s p99_s");
    for (uint32_t p = 0; p < c->sc->provider_count; p++) {
        char name[SIM_NAME_MAX];
        safe_name(name, sizeof name, c->sc->providers[p].name);
        fprintf(f, " %s_attempts_ps %s_errors_ps %s_open_pct %s_half_open_pct", name, name, name,
                name);
    }
    feature_heads(c, f);
    fputc('\n', f);
    for (size_t b = 0; b < s->npts; b++) {
        const point *pt = &s->pts[b];
        if (pt->ticks == 0) continue;
        fprintf(f, "%.4f", point_t(c, b, pt));
        put_num(f, per_s(c, pt, pt->success));
        put_num(f, per_s(c, pt, pt->fallback));
        put_num(f, per_s(c, pt, pt->degraded));
        put_num(f, per_s(c, pt, pt->errors));
        put_num(f, per_s(c, pt, pt->slo_missed));
        put_num(f, per_s(c, pt, pt->arrivals));
        put_num(f, mean(pt, pt->in_flight));
        put_num(f, mean(pt, pt->pod_queue));
        /* no request ended: no latency (a gap in the line, not a zero on a log axis) */
        put_num(f, pt->ended > 0 ? pt->p50_weighted / pt->ended / 1e3 : NAN);
        put_num(f, pt->ended > 0 ? pt->p99_weighted / pt->ended / 1e3 : NAN);
        for (uint32_t p = 0; p < c->sc->provider_count; p++) {
            put_num(f, per_s(c, pt, pt->p[p].attempts));
            put_num(f, per_s(c, pt, pt->p[p].errors));
            put_num(f, 100 * mean(pt, pt->p[p].open));
            put_num(f, 100 * mean(pt, pt->p[p].half_open));
        }
        feature_values(c, f, pt);
        fputc('\n', f);
    }
    return close_checked(c, f, path);
}

/* ---- fault and spike windows ---- */

static int add_window(charts *c, fb_time_us from, fb_time_us len, bool spike, const char *label) {
    window *w = realloc(c->win, (c->nwin + 1) * sizeof *w);
    if (w == NULL) return fail(c, FB_ENOMEM, "out of memory");
    c->win = w;
    w += c->nwin++;
    w->from_us = from;
    w->to_us = fb_time_add(from, len);
    if (w->to_us > c->sc->duration_us) w->to_us = c->sc->duration_us;
    w->spike = spike;
    snprintf(w->label, sizeof w->label, "%s", label);
    return FB_OK;
}

static int collect_windows(charts *c) {
    const sim_scenario *sc = c->sc;
    char label[sizeof c->win->label];
    int rc = FB_OK;
    for (uint32_t p = 0; p < sc->provider_count && rc == FB_OK; p++) {
        for (uint32_t k = 0; k < sc->providers[p].fault_count && rc == FB_OK; k++) {
            const sim_fault *fa = &sc->providers[p].faults[k];
            int len = snprintf(label, sizeof label, "%s %s", sc->providers[p].name,
                               scn_fault_kind_name(fa->kind));
            if (fa->status > 0 && len > 0 && (size_t)len < sizeof label)
                len += snprintf(label + len, sizeof label - (size_t)len, " %d", fa->status);
            if (fa->fraction > 0 && fa->fraction < 1 && len > 0 && (size_t)len < sizeof label)
                snprintf(label + len, sizeof label - (size_t)len, " (%.0f%%)", fa->fraction * 100);
            rc = add_window(c, fa->at_us, fa->for_us, false, label);
        }
    }
    for (uint32_t k = 0; k < sc->class_count && rc == FB_OK; k++) {
        const sim_class *cl = &sc->classes[k];
        snprintf(label, sizeof label, "%s spike", cl->name);
        for (uint32_t i = 0; i < cl->spike_count && rc == FB_OK; i++)
            rc = add_window(c, cl->spikes[i].at_us, cl->spikes[i].for_us, true, label);
        snprintf(label, sizeof label, "%s burst", cl->name);
        for (uint32_t i = 0; i < cl->burst_count && rc == FB_OK; i++)
            rc = add_window(c, cl->bursts[i].at_us, cl->bursts[i].over_us, true, label);
    }
    return rc;
}

typedef struct label_place {
    int8_t row; /* 0 nearest the plot; -1: no room */
    bool right; /* right-aligned at the window's end (it would run off the chart) */
} label_place;

static double x_px(const charts *c, fb_time_us t) {
    double frac = c->xmax > 0 ? (double)t / 1e6 / c->tdiv / c->xmax : 0;
    return WIDTH_PX * (PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * frac);
}

/* Each window's label row (see LABEL_ROWS); returns the rows used. */
static int label_rows(const charts *c, label_place *place) {
    double end[LABEL_ROWS];
    int used = 0;
    for (int r = 0; r < LABEL_ROWS; r++) end[r] = -INFINITY;
    for (size_t i = 0; i < c->nwin && i < LABELS_MAX; i++) {
        const window *w = &c->win[i];
        double width = LABEL_CHAR_PX * ((double)strlen(w->label) + 1);
        double from = x_px(c, w->from_us), to = from + width;
        place[i].right = to > WIDTH_PX - 4;
        if (place[i].right) {
            to = x_px(c, w->to_us);
            from = to - width;
        }
        place[i].row = -1;
        for (int r = 0; r < LABEL_ROWS; r++) {
            if (end[r] > from) continue;
            end[r] = to;
            place[i].row = (int8_t)r;
            if (r + 1 > used) used = r + 1;
            break;
        }
    }
    return c->nwin <= LABELS_MAX ? used : 0;
}

/* Shade every window (red faults, grey spikes); label them, above the plot, when `labels` and
 * few. */
static void gp_windows(const charts *c, FILE *f, bool labels) {
    if (c->nwin == 0) return;
    label_place place[LABELS_MAX];
    bool with_labels = labels && c->nwin <= LABELS_MAX && label_rows(c, place) > 0;
    fputs("# scripted faults (red) and traffic spikes (grey), from the scenario\n", f);
    for (size_t i = 0; i < c->nwin; i++) {
        const window *w = &c->win[i];
        if (w->to_us <= w->from_us) continue;
        fprintf(f,
                "set object %zu rect from %.4f, graph 0 to %.4f, graph 1 fc rgb '%s' "
                "fillstyle transparent solid %s noborder front\n",
                i + 1, (double)w->from_us / 1e6 / c->tdiv, (double)w->to_us / 1e6 / c->tdiv,
                w->spike ? "#777777" : "#CC0000", w->spike ? "0.12" : "0.10");
        if (with_labels && place[i].row >= 0) {
            fprintf(f, "set label %zu ", i + 1);
            rep_gnuplot_quote(f, w->label);
            fprintf(f, " at %.4f, graph 1 %s offset %s,%.2f font sfont tc rgb '%s' front\n",
                    (double)(place[i].right ? w->to_us : w->from_us) / 1e6 / c->tdiv,
                    place[i].right ? "right" : "left", place[i].right ? "-0.4" : "0.4",
                    2.6 + 1.15 * place[i].row, w->spike ? "#444444" : "#990000");
        }
    }
}

/* ---- gnuplot scripts ---- */

static int height_px(size_t panels) {
    int h = 100 + 230 * (int)panels;
    return h < 420 ? 420 : h;
}

/* The script's head: both terminals in a loop, so one run draws PNG and SVG. */
static void gp_begin(const charts *c, FILE *f, const char *name, int height) {
    char out[64];
    fprintf(f, "# %s.gp - written by fusebox (reports/charts.c) for scenario ", name);
    rep_gnuplot_quote(f, c->sc->name);
    fprintf(f,
            ".\n# Draw again with `gnuplot -d %s.gp` in this folder; docs/reports.md explains "
            "the chart.\n"
            "do for [fmt in 'png svg'] {\n"
            "sfont = fmt eq 'svg' ? ',11' : ',9'   # small print: window and capacity labels\n"
            "tfont = fmt eq 'svg' ? ',16' : ',12'  # the chart's title\n"
            "if (fmt eq 'svg') {\n"
            "    set terminal svg size %d,%d fixed font 'sans-serif,13' background rgb 'white' "
            "noenhanced\n"
            "    set output ",
            name, WIDTH_PX, height);
    snprintf(out, sizeof out, "%s.svg", name);
    rep_gnuplot_quote(f, out);
    fprintf(f,
            "\n} else {\n"
            "    set terminal pngcairo size %d,%d font 'sans-serif,10' background rgb 'white' "
            "noenhanced\n"
            "    set output ",
            WIDTH_PX, height);
    snprintf(out, sizeof out, "%s.png", name);
    rep_gnuplot_quote(f, out);
    fputs("\n}\n"
          "reset\n"
          "set border 3 lc rgb '#555555'\n"
          "set tics nomirror\n"
          "set grid ytics lc rgb '#DDDDDD' lt 1\n"
          "set key at graph 1.02, graph 1 left top Left reverse samplen 2 spacing 1.1\n"
          "set style fill solid 1.0 noborder\n",
          f);
}

static void gp_end(FILE *f) {
    fputs("unset multiplot\nset output\n}\n", f);
}

/* A multiplot of `panels` rows with the same margins in every chart. */
static void gp_multiplot(const charts *c, FILE *f, size_t panels, int height, const char *title) {
    double h = height;
    label_place place[LABELS_MAX];
    int rows = c->nwin > 0 ? label_rows(c, place) : 0;
    fprintf(f, "set multiplot layout %zu,1 margins %.2f,%.2f,%.4f,%.4f spacing 0,%.4f title ",
            panels, PLOT_LEFT, PLOT_RIGHT, 58 / h,
            1 - (76 + LABEL_ROW_PX * (rows > 0 ? rows + 2 : 0)) / h, 70 / h);
    char full[256];
    snprintf(full, sizeof full, "%s: %s", c->sc->name, title);
    rep_gnuplot_quote(f, full);
    fputs(" font tfont\n", f);
}

static void gp_xaxis(const charts *c, FILE *f, bool label) {
    fprintf(f, "set xrange [0:%.4f]\n", c->xmax);
    if (label)
        fprintf(f, "set xlabel 'simulated time (%s)'\n", c->tunit);
    else
        fputs("unset xlabel\n", f);
}

static void gp_panel_title(FILE *f, const char *a, const char *b) {
    char t[256];
    snprintf(t, sizeof t, "%s%s", a, b);
    fputs("set title ", f);
    rep_gnuplot_quote(f, t);
    fputc('\n', f);
}

static void gp_data(FILE *f, const series *s) {
    fputs("plot ", f);
    rep_gnuplot_quote(f, s->file);
}

/* Lower end of a log axis: the power of ten at or below the smallest value, within 10^5 of hi. */
static double log_floor(double lo, double hi) {
    if (!(lo < INFINITY) || lo <= 0) lo = hi / 10;
    if (lo < hi / 1e5) lo = hi / 1e5;
    return pow(10, floor(log10(lo)));
}

/* Ticks at 1, 2 and 5 of each decade read better than powers of ten alone, up to 3 decades. */
static void gp_log_ytics(FILE *f, double ylo, double yhi) {
    int marks = yhi / ylo > 1001 ? 1 : 3;
    fputs("set ytics (", f);
    bool first = true;
    for (double d = ylo; d < yhi * 1.01; d *= 10)
        for (int m = 0; m < marks; m++) {
            double v = d * (m == 0 ? 1 : m == 1 ? 2 : 5);
            if (v > yhi * 1.01) break;
            fprintf(f, "%s'%g' %g", first ? "" : ", ", v, v);
            first = false;
        }
    fputs(")\n", f);
}

static void chart_outcomes(const charts *c, FILE *f) {
    double ymax = 0;
    for (size_t i = 0; i < c->n; i++)
        for (size_t b = 0; b < c->ser[i].npts; b++) {
            const point *pt = &c->ser[i].pts[b];
            if (pt->ticks == 0) continue;
            double stack = pt->success + pt->fallback + pt->degraded + pt->errors;
            ymax = fmax(ymax, per_s(c, pt, fmax(stack, pt->arrivals)));
        }
    int h = height_px(c->n);
    gp_begin(c, f, "outcomes", h);
    gp_windows(c, f, true);
    gp_multiplot(c, f, c->n, h, "how requests ended, per second");
    fprintf(f, "set ylabel 'requests / s'\nset yrange [0:%g]\n", nice_ceil(ymax));
    for (size_t i = 0; i < c->n; i++) {
        const series *s = &c->ser[i];
        gp_xaxis(c, f, i + 1 == c->n);
        gp_panel_title(f, s->sum->variant, "");
        gp_data(f, s);
        fputs(" using 't':(column('ok_ps')+column('fallback_ps')+column('degraded_ps')+"
              "column('errors_ps')) with filledcurves x1 fc rgb '#D55E00' title 'error', \\\n"
              "  '' using 't':(column('ok_ps')+column('fallback_ps')+column('degraded_ps')) "
              "with filledcurves x1 fc rgb '#E69F00' title 'degraded answer', \\\n"
              "  '' using 't':(column('ok_ps')+column('fallback_ps')) with filledcurves x1 "
              "fc rgb '#56B4E9' title 'success via fallback', \\\n"
              "  '' using 't':'ok_ps' with filledcurves x1 fc rgb '#009E73' title 'success', \\\n"
              "  '' using 't':'slo_missed_ps' with lines lc rgb '#4B1D7A' lw 1.5 "
              "title 'answered after the SLO', \\\n"
              "  '' using 't':'arrivals_ps' with lines lc rgb 'black' lw 1 title 'arrivals'\n",
              f);
        if (i == 0) fputs("unset label\nunset key\n", f); /* the same key for every panel */
    }
}

/* A plot clause of provider p's column COL: "using 't':COL with STYLE title 'P SUFFIX'"
 * (notitle without a suffix), after ", '' " unless it is the plot's first. */
static void gp_pclause(FILE *f, const charts *c, uint32_t p, bool first, const char *col,
                       const char *style, const char *suffix) {
    fputs(first ? " using 't':" : ", \\\n  '' using 't':", f);
    gp_pcol(f, c, p, col);
    fprintf(f, " with %s", style);
    if (suffix == NULL) {
        fputs(" notitle", f);
        return;
    }
    char t[SIM_NAME_MAX + 32];
    snprintf(t, sizeof t, "%s %s", c->sc->providers[p].name, suffix);
    fputs(" title ", f);
    rep_gnuplot_quote(f, t);
}

static void chart_attempts(const charts *c, FILE *f) {
    double ymax = 0, ymin = INFINITY;
    for (size_t i = 0; i < c->n; i++)
        for (size_t b = 0; b < c->ser[i].npts; b++) {
            const point *pt = &c->ser[i].pts[b];
            if (pt->ticks == 0) continue;
            double v = per_s(c, pt, pt->arrivals);
            ymax = fmax(ymax, v);
            if (v > 0) ymin = fmin(ymin, v);
            for (uint32_t p = 0; p < c->sc->provider_count; p++) {
                v = per_s(c, pt, pt->p[p].attempts);
                ymax = fmax(ymax, v);
                if (v > 0) ymin = fmin(ymin, v);
            }
        }
    /* log scale: a storm is many times the arrivals, and the gap between the lines is the
       amplification whatever the traffic */
    double yhi = pow(10, ceil(log10(fmax(ymax, 1) * 1.2)));
    double ylo = log_floor(ymin, yhi);
    int h = height_px(c->n);
    gp_begin(c, f, "attempts", h);
    gp_windows(c, f, true);
    gp_multiplot(c, f, c->n, h, "provider attempts per second");
    fprintf(f, "set ylabel 'per second (log scale)'\nset logscale y\nset yrange [%g:%g]\n", ylo,
            yhi);
    gp_log_ytics(f, ylo, yhi);
    char amp[64];
    for (size_t i = 0; i < c->n; i++) {
        const series *s = &c->ser[i];
        double v = 0;
        char msg[128];
        sim_metric_value(c->sc, s->sum, "amplification", &v, NULL, msg, sizeof msg);
        snprintf(amp, sizeof amp, " (amplification %.2fx)", v);
        gp_xaxis(c, f, i + 1 == c->n);
        gp_panel_title(f, s->sum->variant, amp);
        gp_data(f, s);
        for (uint32_t p = 0; p < c->sc->provider_count; p++) {
            const char *color = provider_colors[p % NCOLORS];
            char st[96];
            snprintf(st, sizeof st, "filledcurves x1 fc rgb '%s' fs transparent solid 0.3", color);
            gp_pclause(f, c, p, p == 0, "errors_ps", st, "failed");
            snprintf(st, sizeof st, "lines lc rgb '%s' lw 2", color);
            gp_pclause(f, c, p, false, "attempts_ps", st, "attempts");
        }
        fputs(", \\\n  '' using 't':'arrivals_ps' with lines lc rgb 'black' dt 2 lw 1.2 "
              "title 'user arrivals (all classes)'\n",
              f);
        if (i == 0) fputs("unset label\n", f);
    }
}

/* A variant with no breaker has no panel: an empty panel says nothing the table does not. */
static bool variant_has_breaker(const sim_scenario *sc, int variant) {
    for (uint32_t p = 0; p < sc->provider_count; p++)
        if (scn_policy_breaker(&sc->variants[variant], p) != NULL) return true;
    return false;
}

/* The charts of the features a scenario may use: one panel of lines, per variant and "sub"
 * (a provider, or the pods ready and starting). */
typedef enum feature_chart { FC_LIMITS, FC_CONNECTIONS, FC_PODS, FC_RESUBMISSIONS, FC_NONE } fchart;

static fchart feature_chart(const char *name) {
    static const char *const names[] = {"limits", "connections", "pods", "resubmissions"};
    for (int k = 0; k < FC_NONE; k++)
        if (strcmp(name, names[k]) == 0) return (fchart)k;
    return FC_NONE;
}

/* Does variant v limit its calls to provider p (in some layer)? */
static bool variant_limits(const sim_scenario *sc, int v, uint32_t p) {
    for (uint32_t l = 0; l < sc->variants[v].layer_count; l++)
        if (sc->variants[v].layers[l].per_provider[p].has_conclimit) return true;
    return false;
}

static bool variant_pools(const sim_scenario *sc, int v) {
    for (uint32_t l = 0; l < sc->variants[v].layer_count; l++)
        if (sc->variants[v].layers[l].has_pool) return true;
    return false;
}

/* Lines per variant: one per provider, two for the pods (ready, starting), one otherwise. */
static uint32_t feature_subs(const sim_scenario *sc, fchart k) {
    return k == FC_PODS ? 2 : k == FC_RESUBMISSIONS ? 1 : sc->provider_count;
}

/* Does variant v draw line `sub` of chart k? (A variant without the feature has no line,
 * except a fixed fleet among autoscaled ones: its pods are the comparison.) */
static bool feature_draws(const sim_scenario *sc, fchart k, int v, uint32_t sub) {
    switch (k) {
    case FC_LIMITS:
        return variant_limits(sc, v, sub);
    case FC_CONNECTIONS:
        return variant_pools(sc, v);
    case FC_PODS: /* a fixed fleet starts no pods */
        return scn_uses(sc, SIM_FEATURE_AUTOSCALE) && (sub == 0 || sc->variants[v].autoscale.on);
    case FC_RESUBMISSIONS:
        return scn_uses(sc, SIM_FEATURE_RESUBMIT);
    default:
        return false;
    }
}

/* Chart k applies when some variant of the run uses its feature: no empty chart. */
static bool feature_applies(const sim_scenario *sc, sim_summary *const *sums, size_t n, fchart k) {
    for (size_t i = 0; i < n; i++) {
        int v = scn_variant(sc, sums[i]->variant);
        if (v < 0) continue;
        if (k == FC_PODS && sc->variants[v].autoscale.on) return true;
        for (uint32_t sub = 0; k != FC_PODS && sub < feature_subs(sc, k); sub++)
            if (feature_draws(sc, k, v, sub)) return true;
    }
    return false;
}

bool rep_chart_applies(const sim_scenario *sc, sim_summary *const *sums, size_t n,
                       const char *name) {
    fchart k = feature_chart(name);
    if (k != FC_NONE) return feature_applies(sc, sums, n, k);
    if (strcmp(name, "breakers") != 0) return true;
    for (size_t i = 0; i < n; i++) {
        int v = scn_variant(sc, sums[i]->variant);
        if (v >= 0 && variant_has_breaker(sc, v)) return true;
    }
    return false;
}

/* One variant's breaker lines, per provider that has one. */
static void breaker_lines(const charts *c, FILE *f, const series *s) {
    const sim_policy *pol = &c->sc->variants[s->variant];
    gp_data(f, s);
    bool first = true;
    for (uint32_t p = 0; p < c->sc->provider_count; p++) {
        if (scn_policy_breaker(pol, p) == NULL) continue;
        const char *color = provider_colors[p % NCOLORS];
        char st[96];
        snprintf(st, sizeof st, "filledcurves x1 fc rgb '%s' fs transparent solid 0.35", color);
        gp_pclause(f, c, p, first, "open_pct", st, NULL);
        first = false;
        snprintf(st, sizeof st, "lines lc rgb '%s' lw 1.5", color);
        gp_pclause(f, c, p, false, "open_pct", st, "open");
        snprintf(st, sizeof st, "lines lc rgb '%s' dt 2 lw 1.5", color);
        gp_pclause(f, c, p, false, "half_open_pct", st, "half-open");
    }
    if (c->cols.store_down >= 0)
        fputs(", \\\n  '' using 't':'store_down_pct' with filledcurves x1 fc rgb '#333333' "
              "fs transparent pattern 4 title 'breaker store unreachable'",
              f);
    fputc('\n', f);
}

static void chart_breakers(const charts *c, FILE *f) {
    size_t panels = 0, last = 0;
    for (size_t i = 0; i < c->n; i++)
        if (variant_has_breaker(c->sc, c->ser[i].variant)) {
            panels++;
            last = i;
        }
    int h = height_px(panels);
    gp_begin(c, f, "breakers", h);
    gp_windows(c, f, true);
    gp_multiplot(c, f, panels, h, "circuit breaker state, share of pods");
    fputs("set ylabel '% of pods'\nset yrange [0:105]\nset ytics 0,25,100\n", f);
    bool first_panel = true;
    for (size_t i = 0; i < c->n; i++) {
        const series *s = &c->ser[i];
        if (!variant_has_breaker(c->sc, s->variant)) continue;
        const sim_layer *first_layer = NULL;
        for (uint32_t p = 0; p < c->sc->provider_count && first_layer == NULL; p++)
            first_layer = scn_policy_breaker(&c->sc->variants[s->variant], p);
        gp_xaxis(c, f, i == last);
        char what[96];
        if (first_layer->breaker_scope == SIM_SCOPE_SHARED)
            snprintf(what, sizeof what, ": shared breakers (%u pods)", c->sc->pods.count);
        else
            snprintf(what, sizeof what, ": one breaker per pod (%u pods)", c->sc->pods.count);
        gp_panel_title(f, s->sum->variant, what);
        breaker_lines(c, f, s);
        if (first_panel) fputs("unset label\n", f);
        first_panel = false;
    }
}

/* Lines of one data column, one per variant, in the variants' colours. */
static void gp_variant_lines(const charts *c, FILE *f, const char *col, const char *suffix,
                             const char *style) {
    for (size_t i = 0; i < c->n; i++) {
        char t[SIM_NAME_MAX + 16];
        fputs(i == 0 ? "plot " : ", \\\n  ", f);
        rep_gnuplot_quote(f, c->ser[i].file);
        fputs(" using 't':", f);
        rep_gnuplot_quote(f, col);
        fprintf(f, " with lines lc rgb '%s' %s title ",
                rep_chart_variant_color(c->sc, c->ser[i].sum->variant), style);
        snprintf(t, sizeof t, "%s%s", c->ser[i].sum->variant, suffix);
        rep_gnuplot_quote(f, t);
    }
}

/* A dashed capacity line, drawn only when the data come near it. */
static double gp_capacity(FILE *f, double ymax, double cap, const char *what) {
    if (cap <= 0 || ymax < cap / 2) return ymax;
    fprintf(f,
            "set arrow from graph 0, first %g to graph 1, first %g nohead dt 2 lc rgb '#777777' "
            "front\n"
            "set label '%s %g' at graph 0.01, first %g offset 0,0.6 font sfont tc rgb '#555555'\n",
            cap, cap, what, cap, cap);
    return fmax(ymax, cap);
}

static void chart_load(const charts *c, FILE *f) {
    double inflight = 0, queue = 0;
    for (size_t i = 0; i < c->n; i++)
        for (size_t b = 0; b < c->ser[i].npts; b++) {
            const point *pt = &c->ser[i].pts[b];
            if (pt->ticks == 0) continue;
            inflight = fmax(inflight, mean(pt, pt->in_flight));
            queue = fmax(queue, mean(pt, pt->pod_queue));
        }
    const sim_pods *pods = &c->sc->pods;
    double workers = (double)pods->count * pods->workers;
    double qcap = (double)pods->count * pods->queue;
    int h = height_px(2);
    gp_begin(c, f, "load", h);
    gp_windows(c, f, true);
    gp_multiplot(c, f, 2, h, "requests in flight and queued in pods");
    gp_xaxis(c, f, false);
    char t[96];
    snprintf(t, sizeof t, "in flight (working or queued; %.0f worker slots)", workers);
    gp_panel_title(f, t, "");
    fputs("set ylabel 'requests'\n", f);
    inflight = gp_capacity(f, inflight, workers, "worker slots");
    fprintf(f, "set yrange [0:%g]\n", nice_ceil(fmax(inflight, 4))); /* counts: no 0.2 ticks */
    gp_variant_lines(c, f, "in_flight", "", "lw 2");
    fputs("\nunset label\nunset arrow\n", f);
    gp_xaxis(c, f, true);
    snprintf(t, sizeof t, "waiting in pod queues (capacity %.0f)", qcap);
    gp_panel_title(f, t, "");
    queue = gp_capacity(f, queue, qcap, "queue capacity");
    fprintf(f, "set yrange [0:%g]\n", nice_ceil(fmax(queue, 4)));
    gp_variant_lines(c, f, "pod_queue", "", "lw 2");
    fputc('\n', f);
}

/* A point's value of line `sub` of chart k, as the data file has it. */
static double feature_value(const charts *c, fchart k, const point *pt, uint32_t sub) {
    switch (k) {
    case FC_LIMITS:
        return pt->p[sub].limit_ticks ? pt->p[sub].limit / pt->p[sub].limit_ticks : NAN;
    case FC_CONNECTIONS:
        return mean(pt, pt->p[sub].conn_wait);
    case FC_PODS:
        return mean(pt, sub ? pt->pods_starting : pt->pods);
    default:
        return per_s(c, pt, pt->resubmissions);
    }
}

/* Line `sub`'s column in the data files and its name in the key after the variant's. */
static void feature_line(const charts *c, fchart k, uint32_t sub, char *col, size_t len,
                         char *suffix, size_t slen) {
    char name[SIM_NAME_MAX];
    safe_name(name, sizeof name, c->sc->providers[k <= FC_CONNECTIONS ? sub : 0].name);
    suffix[0] = '\0';
    if (k <= FC_CONNECTIONS) {
        snprintf(col, len, "%s_%s", name, k == FC_LIMITS ? "limit" : "conn_wait");
        if (c->sc->provider_count > 1) snprintf(suffix, slen, " %s", c->sc->providers[sub].name);
    } else if (k == FC_PODS) {
        snprintf(col, len, "%s", sub ? "pods_starting" : "pods");
        if (sub) snprintf(suffix, slen, " starting");
    } else {
        snprintf(col, len, "resubmissions_ps");
    }
}

static void chart_feature(const charts *c, FILE *f, const char *name) {
    fchart k = feature_chart(name);
    static const char *const heads[] = {
        "concurrency limit per pod (mean over pods)", "attempts waiting for a connection",
        "pods taking traffic (solid) and starting (dashed)", "users' re-submissions per second"};
    static const char *const ylabels[] = {"calls in flight", "attempts", "pods", "requests / s"};
    double ymax = 0;
    for (size_t i = 0; i < c->n; i++)
        for (uint32_t sub = 0; sub < feature_subs(c->sc, k); sub++)
            for (size_t b = 0;
                 b < c->ser[i].npts && feature_draws(c->sc, k, c->ser[i].variant, sub); b++)
                if (c->ser[i].pts[b].ticks > 0)
                    ymax = fmax(ymax, feature_value(c, k, &c->ser[i].pts[b], sub));
    int h = height_px(1);
    gp_begin(c, f, name, h);
    gp_windows(c, f, true);
    gp_multiplot(c, f, 1, h, heads[k]);
    gp_xaxis(c, f, true);
    /* counts: no 0.2 ticks; re-submissions per second may be fractions */
    fprintf(f, "unset title\nset ylabel '%s'\nset yrange [0:%g]\n", ylabels[k],
            nice_ceil(fmax(ymax, k == FC_RESUBMISSIONS ? 1 : 4)));
    bool first = true;
    for (size_t i = 0; i < c->n; i++)
        for (uint32_t sub = 0; sub < feature_subs(c->sc, k); sub++) {
            if (!feature_draws(c->sc, k, c->ser[i].variant, sub)) continue;
            char col[SIM_NAME_MAX + 16], suffix[SIM_NAME_MAX + 16], t[2 * SIM_NAME_MAX + 32];
            feature_line(c, k, sub, col, sizeof col, suffix, sizeof suffix);
            fputs(first ? "plot " : ", \\\n  ", f);
            first = false;
            rep_gnuplot_quote(f, c->ser[i].file);
            fputs(" using 't':", f);
            rep_gnuplot_quote(f, col);
            fprintf(f, " with lines lc rgb '%s' dt %u lw %s title ",
                    rep_chart_variant_color(c->sc, c->ser[i].sum->variant), 1 + sub % 4,
                    sub ? "1.5" : "2");
            snprintf(t, sizeof t, "%s%s", c->ser[i].sum->variant, suffix);
            rep_gnuplot_quote(f, t);
        }
    fputc('\n', f);
}

static void chart_latency(const charts *c, FILE *f) {
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < c->n; i++)
        for (size_t b = 0; b < c->ser[i].npts; b++) {
            const point *pt = &c->ser[i].pts[b];
            if (pt->ticks == 0 || pt->ended <= 0) continue;
            double p50 = pt->p50_weighted / pt->ended / 1e3;
            double p99 = pt->p99_weighted / pt->ended / 1e3;
            if (p50 > 0) lo = fmin(lo, p50);
            if (p99 > 0) lo = fmin(lo, p99);
            hi = fmax(hi, p99);
        }
    double slo = (double)c->sc->slo_latency_us / 1e6;
    if (slo > 0) hi = fmax(hi, slo);
    if (!(hi > 0)) hi = 1;
    double ylo = log_floor(lo, hi), yhi = pow(10, ceil(log10(hi * 1.2)));
    int h = height_px(1);
    gp_begin(c, f, "latency", h);
    gp_windows(c, f, true);
    gp_multiplot(c, f, 1, h, "latency p99 (solid) and p50 (dashed)");
    gp_xaxis(c, f, true);
    fprintf(f,
            "unset title\nset logscale y\nset ylabel 'seconds (log scale)'\nset yrange [%g:%g]\n",
            ylo, yhi);
    gp_log_ytics(f, ylo, yhi);
    if (slo > 0)
        fprintf(f,
                "set arrow from graph 0, first %g to graph 1, first %g nohead dt 2 lw 1.5 "
                "lc rgb '#777777' front\n"
                "set label 'SLO %gs' at graph 0.99, first %g right offset 0,0.6 font sfont "
                "tc rgb '#555555' front\n",
                slo, slo, slo, slo);
    for (size_t i = 0; i < c->n; i++) {
        char t[SIM_NAME_MAX + 16];
        fputs(i == 0 ? "plot " : ", \\\n  ", f);
        rep_gnuplot_quote(f, c->ser[i].file);
        fprintf(f, " using 't':'p99_s' with lines lc rgb '%s' lw 2 title ",
                rep_chart_variant_color(c->sc, c->ser[i].sum->variant));
        snprintf(t, sizeof t, "%s p99", c->ser[i].sum->variant);
        rep_gnuplot_quote(f, t);
        fputs(", \\\n  '' using 't':'p50_s' with lines ", f);
        fprintf(f, "lc rgb '%s' dt 2 lw 1.2 title ",
                rep_chart_variant_color(c->sc, c->ser[i].sum->variant));
        snprintf(t, sizeof t, "%s p50", c->ser[i].sum->variant);
        rep_gnuplot_quote(f, t);
    }
    fputc('\n', f);
}

/* ---- the comparison chart: small multiples of bars ---- */

typedef struct bar_panel {
    const char *col, *title;
} bar_panel;

static const bar_panel bar_panels[] = {
    {"success_pct", "success rate (%)"},
    {"amplification", "amplification (x)"},
    {"p99", "latency p99"},
    {"spillover", "spillover"},
    {"cost", "cost ($)"},
};
#define NBARS (sizeof bar_panels / sizeof bar_panels[0])

/* Durations on a bar axis: seconds, or minutes when long. */
static double duration_div(double max_us) {
    return max_us >= 120e6 ? 60e6 : 1e6;
}

static int write_compare_data(charts *c, double *maxes, double *divs) {
    char path[PATH_LEN];
    chart_path(c, path, "compare.dat", "");
    double vals[SIM_VARIANTS_MAX][NBARS];
    for (size_t k = 0; k < NBARS; k++) maxes[k] = 0;
    for (size_t i = 0; i < c->n; i++) {
        const sim_summary *s = c->ser[i].sum;
        vals[i][0] = 100 * sim_metric_get(c->sc, s, "success_rate");
        vals[i][1] = sim_metric_get(c->sc, s, "amplification");
        vals[i][2] = sim_metric_get(c->sc, s, "latency_p99");
        vals[i][3] = sim_metric_get(c->sc, s, "spillover");
        vals[i][4] = sim_metric_get(c->sc, s, "cost_usd");
        for (size_t k = 0; k < NBARS; k++) maxes[k] = fmax(maxes[k], vals[i][k]);
    }
    for (size_t k = 0; k < NBARS; k++) divs[k] = 1;
    divs[2] = duration_div(maxes[2]);
    divs[3] = duration_div(maxes[3]);
    FILE *f = fopen(path, "w");
    if (f == NULL) return fail(c, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    fputs("variant color", f);
    for (size_t k = 0; k < NBARS; k++)
        fprintf(f, " %s %s_label", bar_panels[k].col, bar_panels[k].col);
    fputc('\n', f);
    for (size_t i = 0; i < c->n; i++) {
        const sim_summary *s = c->ser[i].sum;
        char name[SIM_NAME_MAX], label[64];
        safe_name(name, sizeof name, s->variant);
        fprintf(f, "%s %ld", name,
                strtol(rep_chart_variant_color(c->sc, s->variant) + 1, NULL, 16));
        for (size_t k = 0; k < NBARS; k++) {
            double v = vals[i][k];
            if (sim_metric_is_na(v)) { /* a bar of 0, labelled n/a */
                fprintf(f, " %.6f ", 0.0);
                rep_gnuplot_datum(f, "n/a");
                continue;
            }
            if (k == 0)
                snprintf(label, sizeof label, "%.2f%%", v);
            else if (k == 1)
                snprintf(label, sizeof label, "%.2fx", v);
            else if (k == 4)
                snprintf(label, sizeof label, "$%.2f", v);
            else
                rep_format_duration(label, sizeof label, v);
            if (k == 3 && sim_metric_get(c->sc, s, "recovered") == 0)
                strncat(label, "+", sizeof label - strlen(label) - 1);
            fprintf(f, " %.6f ", k == 2 || k == 3 ? v / divs[k] : v);
            rep_gnuplot_datum(f, label);
        }
        fputc('\n', f);
    }
    return close_checked(c, f, path);
}

/* The compare chart's legend, one "[colour] name" entry per variant in rows centred below the
 * panels (the bars carry no names: at 1,100 px five panels of three or more variants have no
 * room for them); returns the rows. */
static int compare_legend(const charts *c, FILE *f, int height, bool draw) {
    double width[SIM_VARIANTS_MAX], row_w[SIM_VARIANTS_MAX] = {0};
    int row_of[SIM_VARIANTS_MAX], rows = 1;
    for (size_t i = 0; i < c->n; i++) {
        width[i] = 26 + LABEL_CHAR_PX * (double)strlen(c->ser[i].sum->variant);
        if (row_w[rows - 1] > 0 && row_w[rows - 1] + width[i] > WIDTH_PX - 40) rows++;
        row_of[i] = rows - 1;
        row_w[rows - 1] += width[i];
    }
    double x = 0;
    for (size_t i = 0; draw && i < c->n; i++) {
        if (i == 0 || row_of[i] != row_of[i - 1]) x = (WIDTH_PX - row_w[row_of[i]]) / 2;
        double y = (double)(16 + LABEL_ROW_PX * (rows - 1 - row_of[i])) / height;
        fprintf(f,
                "set object %zu rect from screen %.4f,%.4f to screen %.4f,%.4f fc rgb '%s' "
                "fillstyle solid noborder\n",
                100 + i, x / WIDTH_PX, y - 5.0 / height, (x + 14) / WIDTH_PX, y + 5.0 / height,
                rep_chart_variant_color(c->sc, c->ser[i].sum->variant));
        fprintf(f, "set label %zu ", 100 + i);
        rep_gnuplot_quote(f, c->ser[i].sum->variant);
        fprintf(f, " at screen %.4f,%.4f left front\n", (x + 19) / WIDTH_PX, y);
        x += width[i];
    }
    return rows;
}

static int chart_compare(charts *c, FILE *f) {
    double maxes[NBARS], divs[NBARS];
    int rc = write_compare_data(c, maxes, divs);
    if (rc != FB_OK) return rc;
    int h = height_px(1);
    gp_begin(c, f, "compare", h);
    /* the value labels ("100.00%", "$915.56", "2h 44m+": 8 characters at most, but for a bill
     * of $10,000 or more): every other one a row higher when neighbours would touch */
    double panel_px = (WIDTH_PX * (0.98 - 0.05) - (NBARS - 1) * 0.05 * WIDTH_PX) / NBARS;
    bool stagger = c->n > 1 && LABEL_CHAR_PX * 8 > panel_px / ((double)c->n + 0.2) - 4;
    int rows = compare_legend(c, f, h, false);
    fprintf(f, "set multiplot layout 1,%zu margins 0.05,0.98,%.4f,%.4f spacing 0.05,0 title ",
            NBARS, (double)(30 + LABEL_ROW_PX * rows) / h, 1 - 80.0 / h);
    char full[160];
    snprintf(full, sizeof full, "%s: variants compared", c->sc->name);
    rep_gnuplot_quote(f, full);
    fprintf(f,
            " font tfont\n"
            "unset key\nset grid noytics\nset boxwidth 0.6\nset xrange [-0.6:%.1f]\n"
            "unset xtics\nset format y '%%g'\n",
            (double)c->n - 0.4);
    for (size_t k = 0; k < NBARS; k++) {
        const bar_panel *bp = &bar_panels[k];
        char title[64];
        if (k == 2 || k == 3)
            snprintf(title, sizeof title, "%s (%s)", bp->title, divs[k] > 1e6 ? "min" : "s");
        else
            snprintf(title, sizeof title, "%s", bp->title);
        double top = k == 0 ? 100 : maxes[k] / divs[k];
        double ymax = k == 0 ? 112 : nice_ceil(fmax(top, k == 1 ? 1 : 0)) * 1.12;
        if (stagger) ymax *= 1.08;
        fputs(k == 1 ? "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 "
                       "lc rgb '#777777' front\n"
                     : "unset arrow\n",
              f);
        fputs("set title ", f);
        rep_gnuplot_quote(f, title);
        if (k + 1 == NBARS) { /* the legend, drawn once, with the last panel */
            fputc('\n', f);
            compare_legend(c, f, h, true);
        }
        fprintf(f,
                "\nset yrange [0:%g]\n"
                "plot 'compare.dat' using 0:'%s':(0.6):'color' with boxes lc rgb variable, \\\n"
                "  '' using 0:(column('%s') + %g * (int($0) %% 2)):'%s_label' with labels "
                "offset 0,0.7 font sfont\n",
                ymax, bp->col, bp->col, stagger ? ymax * 0.075 : 0.0, bp->col);
    }
    for (size_t i = 0; i < c->n; i++)
        fprintf(f, "unset object %zu\nunset label %zu\n", 100 + i, 100 + i);
    return FB_OK;
}

/* A per-class metric of one variant ("class_bad_rate", class c). */
static double class_metric(const charts *c, const sim_summary *s, const char *base, uint32_t k) {
    char name[SIM_NAME_MAX + 48];
    snprintf(name, sizeof name, "%s[%s]", base, c->sc->classes[k].name);
    return sim_metric_get(c->sc, s, name);
}

/* classes.dat: a row per class, then per variant its failed-or-late % and p99 (in `div`). */
static int write_classes_data(charts *c, double *bad_max, double *p99_max, double *div) {
    char path[PATH_LEN];
    chart_path(c, path, "classes.dat", "");
    *bad_max = *p99_max = 0;
    for (size_t i = 0; i < c->n; i++)
        for (uint32_t k = 0; k < c->sc->class_count; k++) {
            *bad_max = fmax(*bad_max, 100 * class_metric(c, c->ser[i].sum, "class_bad_rate", k));
            *p99_max = fmax(*p99_max, class_metric(c, c->ser[i].sum, "class_latency_p99", k));
        }
    *div = duration_div(*p99_max);
    FILE *f = fopen(path, "w");
    if (f == NULL) return fail(c, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    fputs("# class, then per variant (in the scenario's order): failed or late (%), p99\n", f);
    for (uint32_t k = 0; k < c->sc->class_count; k++) {
        rep_gnuplot_datum(f, c->sc->classes[k].name);
        for (size_t i = 0; i < c->n; i++)
            fprintf(f, " %.6f %.6f", 100 * class_metric(c, c->ser[i].sum, "class_bad_rate", k),
                    class_metric(c, c->ser[i].sum, "class_latency_p99", k) / *div);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? FB_OK : fail(c, FB_EIO, "cannot write %s", path);
}

/* One panel of clustered bars: column 2 + 2i + col of classes.dat for variant i. */
static void classes_panel(const charts *c, FILE *f, const char *title, double top, int col) {
    fputs("set title ", f);
    rep_gnuplot_quote(f, title);
    fprintf(f, "\nset yrange [0:%g]\nplot", nice_ceil(top) * 1.1);
    for (size_t i = 0; i < c->n; i++) {
        fprintf(f, "%s'classes.dat' using %d%s lc rgb '%s' title ", i ? ", \\\n  " : " ",
                2 + 2 * (int)i + col, i == 0 ? ":xtic(1)" : "",
                rep_chart_variant_color(c->sc, c->ser[i].sum->variant));
        rep_gnuplot_quote(f, c->ser[i].sum->variant);
    }
    fputc('\n', f);
}

static int chart_classes(charts *c, FILE *f) {
    double bad_max, p99_max, div;
    int rc = write_classes_data(c, &bad_max, &p99_max, &div);
    if (rc != FB_OK) return rc;
    int h = height_px(1);
    gp_begin(c, f, "classes", h);
    fprintf(f, "set multiplot layout 1,2 margins 0.07,0.98,%.4f,%.4f spacing 0.08,0 title ",
            110.0 / h, 1 - 80.0 / h);
    char full[160];
    snprintf(full, sizeof full, "%s: traffic classes", c->sc->name);
    rep_gnuplot_quote(f, full);
    fputs(" font tfont\nset style data histogram\nset style histogram cluster gap 1\n"
          "set style fill solid 0.9 border -1\nset boxwidth 0.9\nset xtics scale 0\n"
          "set grid ytics\nset key inside top right vertical\nset format y '%g'\n",
          f);
    classes_panel(c, f, "failed or later than the SLO (% of the class)", fmax(bad_max, 1), 0);
    fputs("unset key\n", f); /* one key for both panels */
    classes_panel(c, f, div > 1e6 ? "p99 latency (min)" : "p99 latency (s)",
                  fmax(p99_max / div, 0.001), 1);
    return FB_OK;
}

#define CHARTS_N (sizeof chart_infos / sizeof chart_infos[0])

/* The charts' scripts, each `gnuplot -d NAME.gp` in DIR/charts, up to `jobs` at once (0: the
   CPUs): a run's six to ten charts took 1.4 s of wall time one after the other, gnuplot's start
   most of each. The first failing script's message (in the charts' order) is the error. */
static int run_gnuplot(charts *c, const char *gnuplot, const char *const *scripts, size_t n,
                       unsigned jobs) {
    char msg[1024];
    int rc = rep_gnuplot_run_all(gnuplot, c->cdir, scripts, n, jobs, msg, sizeof msg);
    return rc == FB_OK ? FB_OK : fail(c, rc, "%s", msg);
}

/* After gnuplot: every chart drawn is whole as PNG and SVG, else the first that is not. */
static int check_drawings(charts *c, const char *const *scripts, size_t n) {
    for (size_t k = 0; k < n; k++)
        for (int e = 0; e < 2; e++) {
            char stem[32], path[PATH_LEN];
            snprintf(stem, sizeof stem, "%.*s", (int)(strlen(scripts[k]) - 3), scripts[k]);
            chart_path(c, path, stem, e ? ".svg" : ".png");
            if (rep_gnuplot_check_drawing(path, c->msg, c->msglen) != FB_OK) return FB_EIO;
        }
    return FB_OK;
}

/* Write chart k's script (and remove its old drawings); `script` gets its name when the run
   draws it, else "". */
static int write_chart(charts *c, size_t k, char *script, size_t len) {
    const char *name = chart_infos[k].name;
    char path[PATH_LEN];
    script[0] = '\0';
    chart_path(c, path, name, ".gp");
    if (!rep_chart_applies(c->sc, c->sums, c->n, name)) {
        /* not drawn: no stale chart from an earlier run may stand in for it */
        unlink(path);
        for (int e = 0; e < 2; e++) {
            chart_path(c, path, name, e ? ".svg" : ".png");
            unlink(path);
        }
        return FB_OK;
    }
    FILE *f = fopen(path, "w");
    if (f == NULL) return fail(c, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    int rc = FB_OK;
    if (strcmp(name, "compare") == 0)
        rc = chart_compare(c, f);
    else if (strcmp(name, "classes") == 0)
        rc = chart_classes(c, f);
    else if (strcmp(name, "outcomes") == 0)
        chart_outcomes(c, f);
    else if (strcmp(name, "attempts") == 0)
        chart_attempts(c, f);
    else if (strcmp(name, "breakers") == 0)
        chart_breakers(c, f);
    else if (strcmp(name, "load") == 0)
        chart_load(c, f);
    else if (feature_chart(name) != FC_NONE)
        chart_feature(c, f, name);
    else
        chart_latency(c, f);
    if (rc == FB_OK) gp_end(f);
    if (rc == FB_OK)
        rc = close_checked(c, f, path);
    else
        fclose(f);
    /* no stale chart from an earlier run may stand in for this one */
    for (int e = 0; e < 2; e++) {
        chart_path(c, path, name, e ? ".svg" : ".png");
        unlink(path);
    }
    if (rc == FB_OK) snprintf(script, len, "%s.gp", name);
    return rc;
}

static void time_axis(charts *c) {
    double d = (double)c->sc->duration_us / 1e6;
    if (d <= 180) {
        c->tdiv = 1;
        c->tunit = "s";
    } else if (d <= 3 * 3600) {
        c->tdiv = 60;
        c->tunit = "min";
    } else {
        c->tdiv = 3600;
        c->tunit = "h";
    }
    c->xmax = d / c->tdiv;
}

int rep_charts(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n,
               const char *warning, unsigned jobs, char *msg, size_t msglen) {
    charts c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.sc = sc;
    c.sums = sums;
    c.n = n;
    c.msg = msg;
    c.msglen = msglen;
    if (n == 0 || n > SIM_VARIANTS_MAX || sc->tick_us <= 0)
        return fail(&c, FB_EINVAL, "nothing to chart (%zu variants)", n);
    int w = snprintf(c.cdir, sizeof c.cdir, "%s/charts", dir);
    if (w < 0 || (size_t)w >= sizeof c.cdir)
        return fail(&c, FB_EINVAL, "output folder name too long: %s", dir);
    if (mkdir(c.cdir, 0777) != 0 && errno != EEXIST)
        return fail(&c, FB_EIO, "cannot create %s: %s", c.cdir, strerror(errno));
    char gnuplot[PATH_LEN], note[PATH_LEN + 16];
    bool have_gnuplot = rep_gnuplot_find(gnuplot, sizeof gnuplot) == FB_OK;
    if (!have_gnuplot) snprintf(note, sizeof note, "No charts: %s.", gnuplot);

    int rc = FB_OK;
    c.ser = calloc(n, sizeof *c.ser);
    if (c.ser == NULL) return fail(&c, FB_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        series *s = &c.ser[i];
        s->sum = sums[i];
        s->variant = scn_variant(sc, sums[i]->variant);
        if (s->variant < 0) {
            rc = fail(&c, FB_EINVAL, "summary for unknown variant '%s'", sums[i]->variant);
            goto free_series;
        }
        rep_chart_data_file(s->file, sizeof s->file, sums[i]->variant);
    }
    fb_time_us ticks = (sc->duration_us + sc->tick_us - 1) / sc->tick_us;
    c.bucket_us = sc->tick_us * ((ticks + POINTS_MAX - 1) / POINTS_MAX);
    if (c.bucket_us <= 0) c.bucket_us = sc->tick_us;
    time_axis(&c);
    rc = read_timeseries(&c);
    if (rc == FB_OK) rc = collect_windows(&c);
    for (size_t i = 0; i < n && rc == FB_OK; i++) rc = write_data(&c, &c.ser[i]);
    char names[CHARTS_N][32];
    const char *scripts[CHARTS_N];
    size_t drawn = 0;
    for (size_t k = 0; k < CHARTS_N && rc == FB_OK; k++) {
        rc = write_chart(&c, k, names[k], sizeof names[k]);
        if (rc == FB_OK && names[k][0] != '\0') scripts[drawn++] = names[k];
    }
    if (rc == FB_OK && have_gnuplot && drawn > 0) {
        rc = run_gnuplot(&c, gnuplot, scripts, drawn, jobs);
        if (rc == FB_OK) rc = check_drawings(&c, scripts, drawn);
    }
    if (rc == FB_OK) {
        /* the page is useful without charts: write it, then report what is missing */
        rc = rep_html(dir, sc, sums, n, warning, have_gnuplot ? NULL : note, msg, msglen);
        if (rc == FB_OK && !have_gnuplot) rc = fail(&c, FB_ENOTFOUND, "%s", gnuplot);
    }
free_series:
    for (size_t i = 0; i < n; i++) free(c.ser[i].pts);
    free(c.ser);
    free(c.win);
    return rc;
}
