/*
 * html.c - sweep.html: one self-contained page (the answer, the charts as
 * data URIs, the points ranked and the Pareto front), every string escaped.
 */
#include "sweep/sweepint.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"
#include "reports/report.h"
#include "util/base64.h"

static int html_png(FILE *f, const char *path, const char *alt) {
    FILE *in = fopen(path, "rb");
    if (in == NULL) return FB_EIO;
    fputs("<img alt=\"", f);
    rep_escape_markup(f, alt);
    fputs("\" src=\"", f);
    int rc = util_data_uri(f, in, "image/png") == 0 ? FB_OK : FB_EIO;
    fclose(in);
    fputs("\">\n", f);
    return rc;
}

typedef struct rank {
    uint64_t point;
    int group; /* 0 feasible with a value, 1 infeasible, 2 no value */
    double key;
} rank;

static int rank_cmp(const void *a, const void *b) {
    const rank *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->point < y->point ? -1 : x->point > y->point;
}

/* The metrics the tables show: objective, constraints, then the usual four. */
static size_t table_metrics(const sweep *sw, int *cols, size_t max) {
    const char *names[SWEEP_CONSTRAINTS_MAX + 8];
    size_t n = 0, out = 0;
    if (sw->objective[0]) names[n++] = sw->objective;
    for (size_t c = 0; c < sw->con_count; c++) names[n++] = sw->cons[c].metric;
    names[n++] = "success_rate";
    names[n++] = "blast_radius";
    names[n++] = "cost_usd";
    names[n++] = "latency_p99";
    for (size_t i = 0; i < n && out < max; i++) {
        int m = sweep_metric_index(sw, names[i]);
        bool dup = m < 0;
        for (size_t j = 0; j < out; j++) dup = dup || cols[j] == m;
        if (!dup) cols[out++] = m;
    }
    return out;
}

static void html_table(FILE *f, const sweep *sw, const rank *rows, size_t n) {
    int cols[SWEEP_CONSTRAINTS_MAX + 8];
    size_t nc = table_metrics(sw, cols, sizeof cols / sizeof cols[0]);
    fputs("<table>\n<tr><th>point</th>", f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        fputs("<th>", f);
        rep_escape_markup(f, sw->dims[d].key);
        fputs("</th>", f);
    }
    for (size_t c = 0; c < nc; c++) {
        fputs("<th>", f);
        rep_escape_markup(f, sw->metrics[cols[c]]);
        fputs(" <small>mean [95% CI]</small></th>", f);
    }
    fputs("<th>feasible</th><th>Pareto</th></tr>\n", f);
    for (size_t r = 0; r < n; r++) {
        uint64_t p = rows[r].point;
        fprintf(f, "<tr%s><td>%" PRIu64 "</td>", (int64_t)p == sw->best ? " class=\"best\"" : "",
                p);
        for (uint32_t d = 0; d < sw->dim_count; d++) {
            char v[SWEEP_VALUE_MAX];
            sweep_point_value(sw, p, d, v, sizeof v);
            fputs("<td>", f);
            rep_escape_markup(f, v);
            fputs("</td>", f);
        }
        for (size_t c = 0; c < nc; c++) {
            sweep_stat st;
            sweep_point_stat(sw, p, cols[c], &st);
            char a[64], lo[64], hi[64];
            sweep_format_human(a, sizeof a, st.mean, sw->units[cols[c]]);
            fputs("<td>", f);
            rep_escape_markup(f, a);
            if (st.n >= 2) {
                sweep_format_human(lo, sizeof lo, st.ci_low, sw->units[cols[c]]);
                sweep_format_human(hi, sizeof hi, st.ci_high, sw->units[cols[c]]);
                fputs(" <small>[", f);
                rep_escape_markup(f, lo);
                fputs(", ", f);
                rep_escape_markup(f, hi);
                fputs("]</small>", f);
            }
            fputs("</td>", f);
        }
        fprintf(f, "<td>%s</td><td>%s</td></tr>\n", sw->feasible[p] ? "yes" : "no",
                sw->pareto[p] ? "&#9733;" : "");
    }
    fputs("</table>\n", f);
}

static void html_head(FILE *f, const sweep *sw) {
    fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>sweep: ", f);
    rep_escape_markup(f, sw->base->name);
    fputs("</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}\n"
          /* long lines wrap: a screenshot of the answer shows all of it */
          "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap;overflow-wrap:anywhere}\n"
          "table{border-collapse:collapse;font-size:0.9em}\n"
          "td,th{border:1px solid #ccc;padding:0.25em 0.5em;text-align:right}\n"
          "th{background:#eee}tr.best td{background:#e3f4e1;font-weight:bold}\n"
          "img{max-width:100%;display:block;margin:1em 0}small{color:#666}\n"
          "</style></head><body>\n<h1>Sweep of ",
          f);
    rep_escape_markup(f, sw->base->name);
    fputs(", variant ", f);
    rep_escape_markup(f, sw->variant);
    fputs("</h1>\n<p>", f);
    rep_escape_markup(f, sw->file);
    fprintf(f,
            " &middot; %s &middot; %" PRIu64 " points &times; %u seeds (%" PRIu64 "..%" PRIu64
            ") = %" PRIu64 " runs &middot; fusebox %s</p>\n",
            sw->sample ? "Latin hypercube" : "full factorial", sw->points, sw->seeds, sw->seed,
            sw->seed + sw->seeds - 1, sw->tasks, FB_VERSION);
}

int sweep_write_html(const sweep *sw, const char *dir, const char *answer, const char *note,
                     char *msg, size_t msglen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.html", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    html_head(f, sw);
    fputs("<h2>Answer</h2>\n<pre>", f);
    rep_escape_markup(f, answer);
    fputs("</pre>\n<h2>Charts</h2>\n", f);
    static const char *const charts[2] = {"heatmap", "pareto"};
    int rc = FB_OK;
    if (note) {
        fputs("<p><strong>No charts:</strong> ", f);
        rep_escape_markup(f, note);
        fputs("</p>\n", f);
    }
    for (int c = 0; c < 2; c++) {
        char png[1200];
        snprintf(png, sizeof png, "%s/charts/%s.png", dir, charts[c]);
        if (html_png(f, png, charts[c]) != FB_OK && !note)
            fprintf(f, "<p>(charts/%s.png is missing)</p>\n", charts[c]);
    }
    rank *rows = calloc(sw->points ? sw->points : 1, sizeof *rows);
    if (rows == NULL) rc = FB_ENOMEM;
    if (rc == FB_OK) {
        int m = sweep_metric_index(sw, sw->objective[0] ? sw->objective : "blast_radius");
        double sense = sw->objective[0] && sw->sense < 0 ? -1 : 1;
        size_t nfront = 0;
        for (uint64_t p = 0; p < sw->points; p++) {
            sweep_stat st;
            sweep_point_stat(sw, p, m, &st);
            rows[p].point = p;
            rows[p].key = isnan(st.mean) ? 0 : sense * st.mean;
            rows[p].group = isnan(st.mean) ? 2 : sw->feasible[p] ? 0 : 1;
        }
        qsort(rows, sw->points, sizeof *rows, rank_cmp);
        size_t shown = sw->points < 50 ? sw->points : 50;
        fprintf(f, "<h2>Points</h2>\n<p>%s, %s first%s.</p>\n",
                sw->objective[0] ? "by objective" : "by blast radius",
                sw->con_count ? "feasible points" : "best",
                shown < sw->points ? "; the first 50 (sweep-points.csv has them all)" : "");
        html_table(f, sw, rows, shown);
        for (uint64_t p = 0; p < sw->points; p++)
            if (sw->pareto[rows[p].point]) rows[nfront++] = rows[p];
        fprintf(f,
                "<h2>Pareto front</h2>\n<p>%zu points no other point beats on blast radius, "
                "cost and p99 latency at once.</p>\n",
                nfront);
        html_table(f, sw, rows, nfront < 200 ? nfront : 200);
    }
    free(rows);
    fputs("<p>Data: sweep.csv (one row per run), sweep-points.csv (per point), sweep.json."
          "</p>\n</body></html>\n",
          f);
    int crc = sweep_close_checked(f, path, msg, msglen);
    if (rc == FB_OK) rc = crc;
    if (rc == FB_ENOMEM) snprintf(msg, msglen, "out of memory");
    return rc;
}
