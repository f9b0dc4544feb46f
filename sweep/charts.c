/*
 * charts.c - a sweep's charts, drawn by gnuplot (run as a program).
 *
 * Every chart is a data file plus a script in DIR/charts/, so it can be
 * restyled and redrawn by hand (cd DIR/charts && gnuplot heatmap.gp):
 *   heatmap   the --heatmap metric over two dimensions (full factorial: a
 *             grid, the other dimensions held at the best point's values;
 *             Latin hypercube: every point, coloured; a point that violates
 *             the constraints is grey, never a colour of the scale); one
 *             dimension gives a profile with confidence intervals instead
 *   pareto    cost against blast radius, coloured by p99 latency, with the
 *             Pareto front and the best point marked
 */
#include "sweep/sweepint.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/gnuplot.h"

#define LABELS_MAX_CELLS 150 /* beyond this the heatmap cells carry no numbers */

static int fail(char *msg, size_t msglen, const char *what, const char *path) {
    snprintf(msg, msglen, "%s %s: %s", what, path, strerror(errno));
    return FB_EIO;
}

/* The metric in the unit the chart shows: durations in seconds. */
static double chart_value(double v, sim_unit unit) {
    return unit == SIM_UNIT_US ? v / 1e6 : v;
}

static const char *chart_unit(sim_unit unit) {
    return unit == SIM_UNIT_US ? " (s)" : unit == SIM_UNIT_USD ? " (USD)" : "";
}

/*
 * A short cell label: "$2222", "8.2s", "0.9990", "781", with enough decimals
 * (at least `decimals`) to tell the cells apart.
 */
static void cell_label(char *buf, size_t len, double v, sim_unit unit, int decimals) {
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (unit == SIM_UNIT_US)
        sweep_format_human(buf, len, v, unit);
    else if (unit == SIM_UNIT_USD)
        snprintf(buf, len, v < 0 ? "-$%.*f" : "$%.*f", decimals, fabs(v));
    else
        snprintf(buf, len, "%.*f", decimals, v);
}

/* Decimals that separate values spread over `range`. */
static int label_decimals(double range, double top, sim_unit unit) {
    int d = unit == SIM_UNIT_RATIO ? 4 : unit == SIM_UNIT_USD && fabs(top) < 100 ? 2 : 0;
    if (range > 0 && isfinite(range)) {
        int need = (int)ceil(-log10(range / 10));
        if (need > d) d = need;
    }
    return d > 6 ? 6 : d;
}

static void gp_header(FILE *f, const char *png, int width, int height) {
    fprintf(f, "set terminal pngcairo size %d,%d font 'sans,10' noenhanced\nset output ", width,
            height);
    rep_gnuplot_quote(f, png);
    fputs("\nset border lc rgb '#555555'\n", f);
}

/* Green for good values, red for bad ones. */
static void gp_palette(FILE *f, bool higher_better) {
    if (higher_better)
        fputs("set palette defined (0 '#d73027', 0.5 '#fee08b', 1 '#1a9850')\n", f);
    else
        fputs("set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\n", f);
}

/*
 * The colour scale spans at least SPREAD_CI_WIDTHS half-widths of the cells' mean 95%
 * interval, centred on the data: differences the seeds cannot tell apart then get nearby
 * colours instead of the palette's two ends (issue 15: a $4 spread inside a $20 interval was
 * red against green).
 */
#define SPREAD_CI_WIDTHS 4

/* The values of the cells a chart colours, and their intervals. */
typedef struct spread {
    double lo, hi;   /* the means */
    double half_sum; /* summed CI half-widths, over `halves` cells that have one */
    size_t halves;
} spread;

static void spread_add(spread *sp, const sweep_stat *st) {
    if (isnan(st->mean)) return;
    sp->lo = fmin(sp->lo, st->mean);
    sp->hi = fmax(sp->hi, st->mean);
    if (!isnan(st->ci_low) && !isnan(st->ci_high)) {
        sp->half_sum += (st->ci_high - st->ci_low) / 2;
        sp->halves++;
    }
}

/* Mean CI half-width, or NaN with fewer than two seeds. */
static double spread_half(const spread *sp) {
    return sp->halves ? sp->half_sum / (double)sp->halves : NAN;
}

/*
 * "set cbrange [...]" when the means spread less than the intervals allow; else autoscale.
 * The range keeps to what the metric can be: not below 0 when no mean is, not above 1 for
 * a share whose means are all at most 1.
 */
static void gp_cbrange(FILE *f, const spread *sp, sim_unit unit) {
    double need = SPREAD_CI_WIDTHS * spread_half(sp);
    if (!(sp->hi >= sp->lo) || isnan(need) || sp->hi - sp->lo >= need) return;
    double lo = (sp->lo + sp->hi) / 2 - need / 2, hi = lo + need;
    if (unit == SIM_UNIT_RATIO && sp->hi <= 1 && hi > 1) {
        lo -= hi - 1;
        hi = 1;
    }
    if (sp->lo >= 0 && lo < 0) {
        hi = fmin(hi - lo, unit == SIM_UNIT_RATIO && sp->hi <= 1 ? 1 : INFINITY);
        lo = 0;
    }
    fprintf(f, "set cbrange [%.9g:%.9g]\n", chart_value(lo, unit), chart_value(hi, unit));
}

/* Do two cells' 95% intervals overlap (neither can be told apart from the other)? */
static bool overlaps(const sweep_stat *a, const sweep_stat *b) {
    if (isnan(a->ci_low) || isnan(b->ci_low)) return false;
    return a->ci_low <= b->ci_high && b->ci_low <= a->ci_high;
}

/* xtics/ytics naming each listed value at its index. */
static void gp_list_tics(FILE *f, const char *axis, const sweep_dim *dim) {
    fprintf(f, "set %stics (", axis);
    for (uint32_t v = 0; v < dim->value_count; v++) {
        fputs(v ? ", " : "", f);
        rep_gnuplot_quote(f, dim->values[v]);
        fprintf(f, " %u", v);
    }
    fputs(")\n", f);
    if (dim->value_count > 10 && axis[0] == 'x') fputs("set xtics rotate by 45 right\n", f);
}

/* A point's position along a dimension: list index, or the range value (s for durations). */
static double axis_pos(const sweep *sw, uint64_t p, uint32_t d) {
    const sweep_dim *dim = &sw->dims[d];
    char v[SWEEP_VALUE_MAX];
    sweep_point_value(sw, p, d, v, sizeof v);
    if (dim->kind == SWEEP_LIST) {
        for (uint32_t i = 0; i < dim->value_count; i++)
            if (strcmp(dim->values[i], v) == 0) return i;
        return NAN;
    }
    fb_time_us us;
    if (dim->type == SWEEP_DURATION && scn_parse_duration(v, &us) == FB_OK) return (double)us / 1e6;
    return strtod(v, NULL);
}

static void gp_axis(FILE *f, const sweep *sw, uint32_t d, const char *axis) {
    const sweep_dim *dim = &sw->dims[d];
    fprintf(f, "set %slabel ", axis);
    char label[SWEEP_KEY_MAX + 8];
    snprintf(label, sizeof label, "%s%s", dim->key,
             dim->kind == SWEEP_RANGE && dim->type == SWEEP_DURATION ? " (s)" : "");
    rep_gnuplot_quote(f, label);
    fputc('\n', f);
    if (dim->kind == SWEEP_LIST) {
        gp_list_tics(f, axis, dim);
        fprintf(f, "set %srange [-0.5:%u.5]\n", axis, dim->value_count - 1);
    } else if (dim->log) {
        fprintf(f, "set logscale %s\n", axis);
    }
}

/* The point that differs from `ref` only in dimensions x and y (full factorial). */
static uint64_t grid_point(const sweep *sw, uint64_t ref, int x, uint32_t i, int y, uint32_t j) {
    uint64_t p = 0, stride = 1;
    for (uint32_t d = sw->dim_count; d-- > 0;) {
        uint32_t n = sw->dims[d].value_count;
        uint64_t idx = (ref / stride) % n;
        if ((int)d == x) idx = i;
        if ((int)d == y) idx = j;
        p += idx * stride;
        stride *= n;
    }
    return p;
}

static uint64_t reference_point(const sweep *sw) {
    return sw->best >= 0 ? (uint64_t)sw->best : sw->closest >= 0 ? (uint64_t)sw->closest : 0;
}

static void title_line(FILE *f, const sweep *sw, const char *metric, sim_unit unit) {
    char t[512];
    snprintf(t, sizeof t, "%s%s, mean of %u seed%s - variant %s of %s", metric, chart_unit(unit),
             sw->seeds, sw->seeds == 1 ? "" : "s", sw->variant, sw->base->name);
    fputs("set title ", f);
    rep_gnuplot_quote(f, t);
}

/* "set cblabel 'latency_p99 (s)'" (no newline): metric column m and its unit on an axis. */
static void gp_metric_label(FILE *f, const char *axis, const sweep *sw, int m) {
    char label[SWEEP_METRIC_MAX + 16];
    snprintf(label, sizeof label, "%s%s", sw->metrics[m], chart_unit(sw->units[m]));
    fprintf(f, "set %slabel ", axis);
    rep_gnuplot_quote(f, label);
}

/* What the grid's cells were: some violate the constraints; some match the best's interval. */
typedef struct grid_marks {
    bool infeasible, level;
} grid_marks;

/* The best feasible cell of the slice around `ref`, by the metric's direction. */
static void grid_best(const sweep *sw, int m, uint64_t ref, sweep_stat *best, spread *sp) {
    int x = sw->heat_x, y = sw->heat_y;
    bool higher = sweep_higher_is_better(sw, sw->metrics[m]);
    *best = (sweep_stat){.mean = NAN, .ci_low = NAN, .ci_high = NAN};
    for (uint32_t i = 0; i < sw->dims[x].value_count; i++)
        for (uint32_t j = 0; j < sw->dims[y].value_count; j++) {
            uint64_t p = grid_point(sw, ref, x, i, y, j);
            sweep_stat st;
            sweep_point_stat(sw, p, m, &st);
            spread_add(sp, &st);
            if (isnan(st.mean) || (sw->con_count > 0 && !sw->feasible[p])) continue;
            if (isnan(best->mean) || (higher ? st.mean > best->mean : st.mean < best->mean))
                *best = st;
        }
}

/* The cells around `ref`: x, y, value and its label ("*" infeasible, "~" level with the best). */
static grid_marks write_grid_data(FILE *dat, const sweep *sw, int m, uint64_t ref, spread *sp) {
    int x = sw->heat_x, y = sw->heat_y;
    const sweep_dim *dx = &sw->dims[x], *dy = &sw->dims[y];
    grid_marks marks = {false, false};
    sweep_stat best;
    grid_best(sw, m, ref, &best, sp);
    double lo = sp->lo, hi = sp->hi;
    int decimals = label_decimals(hi - lo, fabs(hi) > fabs(lo) ? hi : lo, sw->units[m]);
    for (uint32_t i = 0; i < dx->value_count; i++) {
        for (uint32_t j = 0; j < dy->value_count; j++) {
            uint64_t p = grid_point(sw, ref, x, i, y, j);
            sweep_stat st;
            sweep_point_stat(sw, p, m, &st);
            char label[64];
            cell_label(label, sizeof label, st.mean, sw->units[m], decimals);
            if (!isnan(st.mean) && overlaps(&st, &best)) {
                strcat(label, " ~");
                marks.level = true;
            }
            if (sw->con_count > 0 && !sw->feasible[p]) {
                strcat(label, "*");
                marks.infeasible = true;
            }
            fprintf(dat, "%u %u %.9g %d ", i, j, chart_value(st.mean, sw->units[m]),
                    sw->con_count == 0 || sw->feasible[p]);
            rep_gnuplot_datum(dat, label);
            fputc('\n', dat);
        }
        fputc('\n', dat);
    }
    return marks;
}

static void write_grid_heatmap(FILE *gp, FILE *dat, const sweep *sw, int m) {
    int x = sw->heat_x, y = sw->heat_y;
    uint64_t ref = reference_point(sw);
    bool labels = (uint64_t)sw->dims[x].value_count * sw->dims[y].value_count <= LABELS_MAX_CELLS;
    spread sp = {INFINITY, -INFINITY, 0, 0};
    grid_marks marks = write_grid_data(dat, sw, m, ref, &sp);
    char others[1024] = "";
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        if ((int)d == x || (int)d == y) continue;
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, ref, d, v, sizeof v);
        snprintf(others + strlen(others), sizeof others - strlen(others), "%s%s=%s",
                 others[0] ? ", " : "", sw->dims[d].key, v);
    }
    title_line(gp, sw, sw->metrics[m], sw->units[m]);
    char sub[1400];
    snprintf(sub, sizeof sub, "%s%s%s%s%s%s", others[0] ? "held at the best point: " : "", others,
             others[0] && marks.infeasible ? "; " : "",
             marks.infeasible ? "* = violates the constraints" : "",
             (others[0] || marks.infeasible) && marks.level ? "; " : "",
             marks.level
                 ? "~ = not distinguishable from the best feasible cell (95% intervals overlap)"
                 : "");
    if (sub[0]) {
        fputs(" . \"\\n\" . ", gp);
        rep_gnuplot_quote(gp, sub);
    }
    fputc('\n', gp);
    gp_axis(gp, sw, (uint32_t)x, "x");
    gp_axis(gp, sw, (uint32_t)y, "y");
    gp_metric_label(gp, "cb", sw, m);
    fputc('\n', gp);
    gp_cbrange(gp, &sp, sw->units[m]);
    if (sw->best >= 0) {
        double bx = axis_pos(sw, ref, (uint32_t)x), by = axis_pos(sw, ref, (uint32_t)y);
        fprintf(gp,
                "set object 1 rect from %g,%g to %g,%g front fillstyle empty border lc rgb "
                "'#000000' lw 3\n",
                bx - 0.5, by - 0.5, bx + 0.5, by + 0.5);
    }
    /* an infeasible cell is grey, never a colour of the scale: a cheap point that breaks the
     * constraints must not look like the best */
    fputs("unset key\nplot 'heatmap.dat' using 1:2:($4==1?$3:NaN) with image", gp);
    if (marks.infeasible)
        fputs(", '' using 1:($4==0?$2:NaN):(0.5):(0.5) with boxxyerror fs solid 1.0 noborder "
              "fc rgb '#bbbbbb'",
              gp);
    if (labels) fputs(", '' using 1:2:5 with labels font ',9' textcolor rgb '#000000'", gp);
    fputc('\n', gp);
}

static void write_scatter_heatmap(FILE *gp, FILE *dat, const sweep *sw, int m) {
    int x = sw->heat_x, y = sw->heat_y;
    spread sp = {INFINITY, -INFINITY, 0, 0};
    for (uint64_t p = 0; p < sw->points; p++) {
        sweep_stat st;
        sweep_point_stat(sw, p, m, &st);
        spread_add(&sp, &st);
        fprintf(dat, "%.9g %.9g %.9g %d\n", axis_pos(sw, p, (uint32_t)x),
                axis_pos(sw, p, (uint32_t)y), chart_value(st.mean, sw->units[m]),
                sw->con_count == 0 || sw->feasible[p]);
    }
    title_line(gp, sw, sw->metrics[m], sw->units[m]);
    if (sw->dim_count > 2) fputs(" . \"\\nevery sampled point; other dimensions vary\"", gp);
    fputc('\n', gp);
    gp_axis(gp, sw, (uint32_t)x, "x");
    gp_axis(gp, sw, (uint32_t)y, "y");
    gp_metric_label(gp, "cb", sw, m);
    fputc('\n', gp);
    gp_cbrange(gp, &sp, sw->units[m]);
    /* key samples in grey: the palette colours belong to the colour box */
    if (sw->con_count == 0 && sw->best < 0) fputs("\nunset key", gp);
    fputs("\nset key below\nplot 'heatmap.dat' using 1:2:($4==1?$3:1/0) with points pt 7 ps 1.6 "
          "lc palette notitle, '' using 1:($4==0?$2:1/0) with points pt 6 ps 1.6 lw 2 "
          "lc rgb '#aaaaaa' notitle",
          gp);
    if (sw->con_count > 0)
        fputs(", NaN with points pt 7 ps 1.6 lc rgb '#888888' title 'feasible', NaN with "
              "points pt 6 ps 1.6 lw 2 lc rgb '#888888' title 'violates the constraints'",
              gp);
    if (sw->best >= 0)
        fprintf(gp,
                ", '-' using 1:2 with points pt 4 ps 3 lw 2 lc rgb '#000000' title 'best'\n"
                "%.9g %.9g\ne",
                axis_pos(sw, (uint64_t)sw->best, (uint32_t)x),
                axis_pos(sw, (uint64_t)sw->best, (uint32_t)y));
    fputc('\n', gp);
}

static void write_profile(FILE *gp, FILE *dat, const sweep *sw, int m) {
    int x = sw->heat_x;
    for (uint64_t p = 0; p < sw->points; p++) {
        sweep_stat st;
        sweep_point_stat(sw, p, m, &st);
        double lo = isnan(st.ci_low) ? st.mean : st.ci_low;
        double hi = isnan(st.ci_high) ? st.mean : st.ci_high;
        fprintf(dat, "%.9g %.9g %.9g %.9g %d\n", axis_pos(sw, p, (uint32_t)x),
                chart_value(st.mean, sw->units[m]), chart_value(lo, sw->units[m]),
                chart_value(hi, sw->units[m]), sw->con_count == 0 || sw->feasible[p]);
    }
    title_line(gp, sw, sw->metrics[m], sw->units[m]);
    fputs(" . \"\\nbars: 95% confidence interval\"\n", gp);
    gp_axis(gp, sw, (uint32_t)x, "x");
    gp_metric_label(gp, "y", sw, m);
    fputs("\nset grid\nset key below\nplot 'heatmap.dat' using 1:($5==1?$2:1/0):3:4 with "
          "yerrorbars pt 7 ps 1.2 lc rgb '#1f77b4' ",
          gp);
    if (sw->con_count == 0) {
        fputs("notitle\n", gp);
        return;
    }
    fputs("title 'feasible', '' using 1:($5==0?$2:1/0):3:4 with yerrorbars pt 6 ps 1.2 "
          "lc rgb '#d62728' title 'violates the constraints'\n",
          gp);
}

static void write_pareto(FILE *gp, FILE *dat, const sweep *sw) {
    int mb = sweep_metric_index(sw, "blast_radius"), mc = sweep_metric_index(sw, "cost_usd");
    int ml = sweep_metric_index(sw, "latency_p99");
    double ymin = INFINITY, ymax = 0;
    spread sp = {INFINITY, -INFINITY, 0, 0}; /* the colour: p99 of the points on the front */
    for (uint64_t p = 0; p < sw->points; p++) {
        sweep_stat b, c, l;
        sweep_point_stat(sw, p, mb, &b);
        sweep_point_stat(sw, p, mc, &c);
        sweep_point_stat(sw, p, ml, &l);
        if (sw->pareto[p]) spread_add(&sp, &l);
        fprintf(dat, "%.9g %.9g %.9g %d %d\n", c.mean, b.mean, l.mean / 1e6, sw->pareto[p],
                (int64_t)p == sw->best);
        if (b.mean > 0 && b.mean < ymin) ymin = b.mean;
        if (b.mean > ymax) ymax = b.mean;
    }
    fprintf(gp,
            "set title 'Pareto front over blast radius, cost and p99 latency (all minimised)' . "
            "\"\\n%" PRIu64 " of %" PRIu64 " points are on the front; variant %s\"\n"
            "set xlabel 'cost_usd (mean)'\nset ylabel 'blast_radius (mean requests)'\n"
            "set cblabel 'latency_p99 (s)'\nset grid\nset key below\n"
            "set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\n",
            sw->pareto_count, sw->points, sw->variant);
    if (ymin < INFINITY && ymax / ymin > 100) fputs("set logscale y\n", gp);
    gp_cbrange(gp, &sp, SIM_UNIT_US);
    fputs("plot 'pareto.dat' using 1:($4==0?$2:1/0) with points pt 6 ps 1 lc rgb '#999999' "
          "title 'dominated', '' using 1:($4==1?$2:1/0):3 with points pt 7 ps 1.8 lc palette "
          "title 'Pareto front (colour: p99)'",
          gp);
    if (sw->best >= 0)
        fputs(", '' using 1:($5==1?$2:1/0) with points pt 4 ps 3.5 lw 2 lc rgb '#000000' "
              "title 'best'",
              gp);
    fputc('\n', gp);
}

typedef enum chart_kind { CHART_HEATMAP, CHART_PARETO } chart_kind;

/* The data and the script; then the PNG when gnuplot is there (else NULL). */
static int write_chart(const sweep *sw, const char *charts, chart_kind kind, const char *gnuplot,
                       char *msg, size_t msglen) {
    const char *name = kind == CHART_HEATMAP ? "heatmap" : "pareto";
    char gpath[1200], dpath[1200], ppath[1200], script[64], png[64];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(png, sizeof png, "%s.png", name);
    snprintf(gpath, sizeof gpath, "%s/%s.gp", charts, name);
    snprintf(dpath, sizeof dpath, "%s/%s.dat", charts, name);
    snprintf(ppath, sizeof ppath, "%s/%s.png", charts, name);
    remove(ppath); /* a PNG from an earlier sweep must not pass for this one's */
    FILE *gp = fopen(gpath, "w");
    if (gp == NULL) return fail(msg, msglen, "cannot write", gpath);
    FILE *dat = fopen(dpath, "w");
    if (dat == NULL) {
        fclose(gp);
        return fail(msg, msglen, "cannot write", dpath);
    }
    gp_header(gp, png, 960, 680);
    if (kind == CHART_PARETO) {
        write_pareto(gp, dat, sw);
    } else {
        int m = sweep_metric_index(sw, sw->heatmap);
        gp_palette(gp, sweep_higher_is_better(sw, sw->heatmap));
        if (sw->heat_y < 0)
            write_profile(gp, dat, sw, m);
        else if (sw->sample == 0)
            write_grid_heatmap(gp, dat, sw, m);
        else
            write_scatter_heatmap(gp, dat, sw, m);
    }
    int rc = sweep_close_checked(gp, gpath, msg, msglen);
    int drc = sweep_close_checked(dat, dpath, rc == FB_OK ? msg : NULL, rc == FB_OK ? msglen : 0);
    if (rc == FB_OK) rc = drc;
    if (rc != FB_OK) return rc;
    if (gnuplot == NULL) return FB_OK;
    rc = rep_gnuplot_run(gnuplot, charts, script, msg, msglen);
    return rc == FB_OK ? rep_gnuplot_check_drawing(ppath, msg, msglen) : rc;
}

int sweep_write_charts(const sweep *sw, const char *dir, char *msg, size_t msglen) {
    char charts[1100];
    snprintf(charts, sizeof charts, "%s/charts", dir);
    if (mkdir(charts, 0777) != 0 && errno != EEXIST)
        return fail(msg, msglen, "cannot create", charts);
    char gnuplot[1024];
    bool have = rep_gnuplot_find(gnuplot, sizeof gnuplot) == FB_OK;
    int rc = write_chart(sw, charts, CHART_HEATMAP, have ? gnuplot : NULL, msg, msglen);
    if (rc == FB_OK) rc = write_chart(sw, charts, CHART_PARETO, have ? gnuplot : NULL, msg, msglen);
    if (rc == FB_OK && !have) {
        snprintf(msg, msglen, "%s", gnuplot);
        rc = FB_ENOTFOUND;
    }
    return rc;
}
