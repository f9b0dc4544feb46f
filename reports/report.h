/*
 * report.h - a run's results as files: report.json, timeseries.csv,
 * events.jsonl, and the one-screen text summary.
 *
 * Formats are fixed (integers as integers, ratios with 6 decimals, money
 * with 4, durations in seconds with 6): the same summaries always print the
 * same bytes. Charts and the HTML page are in charts.h.
 */
#ifndef REP_REPORT_H
#define REP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "scenario/scenario.h"
#include "sim/sim.h"

/* report.json for `n` variants' summaries (in the scenario's variant order). */
int rep_write_json(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n);
/*
 * A top-level member of report.json that the summaries do not hold, written
 * after "complete": its key and its value as JSON text (a live run's
 * "interrupted" and "live" verdict).
 */
typedef struct rep_extra {
    const char *key;
    const char *json;
} rep_extra;
int rep_write_json_extra(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                         const rep_extra *extra, size_t nextra);
/*
 * The same for a run a signal stopped when `interrupted`: "complete": false
 * and "interrupted": true after it (the variants not run are absent).
 */
int rep_write_json_run(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                       bool interrupted, const rep_extra *extra, size_t nextra);
/* timeseries.csv: the header line, then one line per row. */
void rep_csv_header(FILE *f, const sim_scenario *sc);
void rep_csv_row(FILE *f, const sim_scenario *sc, const char *variant, const sim_row *row);
/* events.jsonl: one JSON object per line. */
void rep_event_line(FILE *f, const sim_scenario *sc, const char *variant, const sim_log_event *ev);
/* The text summary (a table, one column per variant). */
void rep_text_summary(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n);

/* How a summary row shows its metric. */
typedef enum rep_show {
    REP_SHOW_COUNT = 0,
    REP_SHOW_PERCENT,
    REP_SHOW_DURATION,
    REP_SHOW_USD,
    REP_SHOW_MULTIPLIER,
    REP_SHOW_DECIMAL /* a mean of counts: "12.4" */
} rep_show;

/* A row of the text summary and of report.html's summary table (the same rows, in order). */
typedef struct rep_summary_row {
    const char *label;  /* "success rate" */
    const char *metric; /* "success_rate" (sim/metrics.h) */
    rep_show show;
    bool sub; /* a detail of the row above: indented */
    /* shown only when the scenario uses it (the fleet's, the client's limits); 0: always */
    sim_feature feature;
} rep_summary_row;

const rep_summary_row *rep_summary_rows(size_t *count);
/* Does the run's summary show the row (its feature is used, or it is always shown)? */
bool rep_summary_row_shown(const sim_scenario *sc, const rep_summary_row *row);
/* A value as the summaries show it ("n/a" for NaN); `grouped`: counts with thousands
 * separators (13,265,045). */
void rep_format_show(char *buf, size_t len, rep_show show, double v, bool grouped);
/* Why a disturbance's recovery is undetermined (f->undetermined is not SIM_DETERMINED). */
void rep_undetermined_reason(char *buf, size_t len, const sim_scenario *sc,
                             const sim_fault_summary *f);

/* A summary row's cell for one variant ("n/a" when the metric has no meaning for the run);
 * a spillover still running at the end gets a "+". */
void rep_summary_cell(char *buf, size_t len, const sim_scenario *sc, const sim_summary *s,
                      const rep_summary_row *row, bool grouped);

/* Write text escaped for HTML or XML content and attribute values. */
void rep_escape_markup(FILE *f, const char *s);

/* Format a duration for people: "850ms", "12.5s", "41m 10s", "2h 05m"; "n/a" for NaN; past a
 * billion hours in hours, e.g. "2.56e+09h" (FB_TIME_MAX), "infh". */
void rep_format_duration(char *buf, size_t len, double us);

#endif /* REP_REPORT_H */
