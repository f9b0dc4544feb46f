/*
 * charts.h - gnuplot charts and the self-contained report.html.
 *
 * rep_charts() reads DIR/timeseries.csv (written by the run) and the
 * summaries, writes gnuplot scripts, runs gnuplot (a program, found on PATH)
 * to make PNG and SVG charts in DIR/charts/, and writes DIR/report.html with
 * the charts inline and the summary table. See docs/reports.md.
 */
#ifndef REP_CHARTS_H
#define REP_CHARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario/scenario.h"
#include "sim/sim.h"

/*
 * Returns FB_OK, or an error with a message (gnuplot missing or failing, I/O). `warning`,
 * when not NULL, heads report.html (rep_html). Up to `jobs` gnuplots draw at once (0: the
 * CPUs online); the files are the same for any `jobs`.
 */
int rep_charts(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n,
               const char *warning, unsigned jobs, char *msg, size_t msglen);

/* The charts a report has, in the order the page shows them. */
typedef struct rep_chart_info {
    const char *name;    /* file stem in DIR/charts: NAME.gp, NAME.png, NAME.svg */
    const char *title;   /* a heading */
    const char *caption; /* how to read it, one or two sentences */
} rep_chart_info;

const rep_chart_info *rep_chart_list(size_t *count);
/* The caption of a chart as the run draws it (the breakers chart of a scenario whose breaker
 * store goes down also shades the outages). */
const char *rep_chart_caption(const sim_scenario *sc, const rep_chart_info *info);
/* Does the run draw chart `name`? The breakers chart needs a variant with a breaker; limits,
 * connections and pods a variant with a concurrency limit, a pool, an autoscaler; re-submissions
 * a class whose users re-submit. */
bool rep_chart_applies(const sim_scenario *sc, sim_summary *const *sums, size_t n,
                       const char *name);
/* A variant's colour in every chart and table, "#RRGGBB" (by its place in the scenario). */
const char *rep_chart_variant_color(const sim_scenario *sc, const char *variant);
/* A variant's chart data file in DIR/charts: "data_NAME.dat". */
void rep_chart_data_file(char *buf, size_t len, const char *variant);

/*
 * DIR/report.html alone, with whatever charts DIR/charts/ holds as SVG (a
 * chart that is missing is named as such). `warning`, when not NULL, is shown
 * under the title, before the verdict (a live run that could not keep the
 * scenario's timing: its lines are "Title" then one item per line). `note`,
 * when not NULL, is shown above the charts (e.g. why they are missing).
 * rep_charts() calls this.
 */
int rep_html(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n,
             const char *warning, const char *note, char *msg, size_t msglen);

#endif /* REP_CHARTS_H */
