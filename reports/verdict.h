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

#endif /* REP_VERDICT_H */
