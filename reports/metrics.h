/*
 * metrics.h - the summary metrics, defined once.
 *
 * Every number that report.json prints per variant, that an `expect` line
 * can assert and that a sweep can optimise is looked up here by name, so
 * the three always agree. Names are documented in docs/metrics.md.
 *
 *   success_rate        successes / requests ended
 *   latency_p99         (a duration) ...
 *   attempts[openai]    per-provider metrics take the provider in brackets
 */
#ifndef REP_METRICS_H
#define REP_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/scenario.h"
#include "sim/sim.h"

typedef enum rep_unit {
    REP_UNIT_COUNT = 0, /* an integer count */
    REP_UNIT_RATIO,     /* a fraction in [0, 1] (or a multiplier, e.g. amplification) */
    REP_UNIT_US,        /* a duration in microseconds; printed in seconds or ms */
    REP_UNIT_USD,       /* money */
    REP_UNIT_BOOL
} rep_unit;

typedef struct rep_metric_def {
    const char *name;
    rep_unit unit;
    bool per_provider;
    const char *doc;
} rep_metric_def;

/* The table, terminated by a NULL name. */
const rep_metric_def *rep_metric_defs(void);
const rep_metric_def *rep_metric_find(const char *name);

/*
 * Value of metric `name` ("success_rate", "attempts[openai]") for one
 * variant's summary. Returns FB_OK, or FB_ENOTFOUND for an unknown metric or
 * provider (msg explains, with a did-you-mean when possible).
 */
int rep_metric_value(const sim_scenario *sc, const sim_summary *sum, const char *name,
                     double *value, rep_unit *unit, char *msg, size_t msglen);

/* The value of a metric known to exist (0 for an unknown name). */
double rep_metric(const sim_scenario *sc, const sim_summary *sum, const char *name);

#endif /* REP_METRICS_H */
