/*
 * verdict.h - the run in a few sentences: which variant does best on what,
 * the incident (how long each variant took to get back to baseline after the
 * faults, how many attempts it sent per request inside them, what share its
 * fallback served), and the collateral damage on traffic that never calls an
 * LLM. Every sentence is computed from the summaries; report.html shows it at
 * the top and `fusebox run` prints it below its table. See docs/reports.md,
 * "The verdict".
 */
#ifndef REP_VERDICT_H
#define REP_VERDICT_H

#include <stddef.h>

#include "scenario/scenario.h"
#include "sim/sim.h"

/* What rep_verdict() writes at most; a longer verdict is cut and says so. */
#define REP_VERDICT_MAX 6144

/*
 * Latency, spillover and cost closer than this share of the larger value are
 * "level": one run has no confidence interval for them (a sweep with seeds
 * has). Success rates are compared with their binomial 95% interval instead.
 */
#define REP_VERDICT_LEVEL 0.02

/*
 * The verdict into buf (at most REP_VERDICT_MAX bytes are useful), as plain
 * text: sentences separated by one space, or, with `width` > 0, wrapped at
 * `width` columns with a newline after each line. Returns buf.
 */
char *rep_verdict(char *buf, size_t len, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                  int width);

/*
 * With more than two variants the comparison is a table, one row per variant
 * and one column per headline figure, the best of each column marked (a
 * paragraph of "does best against the next best" sentences does not read at
 * a glance); rep_verdict() then leaves the comparison out of its sentences.
 */
#define REP_VERDICT_TABLE_FROM 3

/* The table's columns: how many, and each one's label ("success rate"). */
size_t rep_verdict_columns(void);
const char *rep_verdict_column(size_t k);

/* How a cell stands in its column. */
typedef enum rep_verdict_mark {
    REP_MARK_NONE = 0,
    REP_MARK_BEST,  /* the best, apart from the next best beyond noise */
    REP_MARK_LEVEL, /* the best, or level with it within noise (shares: 95% binomial; others 2%) */
} rep_verdict_mark;

/* Variant i's value in column k as the summary shows it, and its mark. */
rep_verdict_mark rep_verdict_cell(char *buf, size_t len, const sim_scenario *sc,
                                  sim_summary *const *sums, size_t n, size_t i, size_t k);

/*
 * The table as plain text into buf (a header line, a line per variant, a
 * legend line), each line ended by a newline; "" when n < REP_VERDICT_TABLE_FROM.
 * Returns buf.
 */
char *rep_verdict_table(char *buf, size_t len, const sim_scenario *sc, sim_summary *const *sums,
                        size_t n);

#endif /* REP_VERDICT_H */
