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

#include <stdio.h>

#include "sim/scenario.h"
#include "sim/sim.h"

/* report.json for `n` variants' summaries (in the scenario's variant order). */
int rep_write_json(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n);
/* timeseries.csv: the header line, then one line per row. */
void rep_csv_header(FILE *f, const sim_scenario *sc);
void rep_csv_row(FILE *f, const sim_scenario *sc, const char *variant, const sim_row *row);
/* events.jsonl: one JSON object per line. */
void rep_event_line(FILE *f, const sim_scenario *sc, const char *variant, const sim_log_event *ev);
/* The text summary (a table, one column per variant). */
void rep_text_summary(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n);

/* Write text escaped for HTML or XML content and attribute values. */
void rep_escape_markup(FILE *f, const char *s);

/* Format a duration for people: "850ms", "12.5s", "41m 10s", "2h 05m". */
void rep_format_duration(char *buf, size_t len, double us);

#endif /* REP_REPORT_H */
