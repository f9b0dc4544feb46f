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

#include <stddef.h>

#include "sim/scenario.h"
#include "sim/sim.h"

/* Returns FB_OK, or an error with a message (gnuplot missing or failing, I/O). */
int rep_charts(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n,
               char *msg, size_t msglen);

#endif /* REP_CHARTS_H */
