/*
 * metrics.h - the summary metrics, defined once.
 *
 * Every number that report.json prints per variant, that an `expect` line
 * can assert, that a sweep can optimise and that `live --compare` checks is
 * a row of one table (sim/metrics.c): its name, unit, definition and the
 * field of the run's summary it reads (its offset) or the function that
 * computes it from the summary. Names are documented in
 * docs/metrics.md.
 *
 *   success_rate        successes / requests ended
 *   latency_p99         (a duration) ...
 *   attempts[openai]    per-provider metrics take the provider in brackets
 *   layer_attempts[sdk] per-layer metrics take the layer in brackets
 *   class_success_rate[chat]  per-class metrics take the traffic class in brackets
 */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario/scenario.h"
#include "sim/sim.h"

typedef enum sim_unit {
    SIM_UNIT_COUNT = 0, /* an integer count */
    SIM_UNIT_RATIO,     /* a fraction in [0, 1] (or a multiplier, e.g. amplification) */
    SIM_UNIT_US,        /* a duration in microseconds; printed in seconds or ms */
    SIM_UNIT_USD,       /* money */
    SIM_UNIT_BOOL
} sim_unit;

/*
 * A row's value; `index` is the provider's index for per-provider rows, the
 * layer's (in the variant) for per-layer rows, the class's for per-class rows, else 0.
 */
typedef double (*sim_metric_fn)(const sim_scenario *sc, const sim_summary *sum, uint32_t index);

/* The type of the one field a row reads (SIM_FIELD_NONE: the row computes, `value`). */
typedef enum sim_field {
    SIM_FIELD_NONE = 0,
    SIM_FIELD_U64,
    SIM_FIELD_U32,
    SIM_FIELD_I64,
    SIM_FIELD_F64
} sim_field;

typedef struct sim_metric {
    const char *name; /* per-provider and per-layer rows end in "[]": "attempts[]" */
    sim_unit unit;
    bool per_provider;
    const char *definition; /* one line, as docs/metrics.md has it */
    sim_metric_fn value;    /* NULL for a row that reads one field: */
    sim_field field;        /* its type, */
    size_t offset;  /* its offset in sim_summary (in the provider's, layer's or class's summary for
                       the rows per provider, layer or class) */
    const char *na; /* when the value is n/a ("no class ..."); NULL: never */
    bool per_layer; /* the brackets name a layer of the summary's variant */
    /* what the scenario must use for the row to be shown (report.json, sweeps); expectations
       may read it anyway (it is then 0) */
    sim_feature feature;
    bool per_class; /* the brackets name a traffic class (index: the class's) */
} sim_metric;

/*
 * A metric that has no meaning for a run (a collateral share where no class
 * could be collateral, the spillover of a disturbance nobody can judge) is
 * n/a: its value is NaN, report.json writes null, the summaries "n/a", and an
 * expectation that reads it fails saying so.
 */
static inline bool sim_metric_is_na(double v) {
    return v != v; /* NaN */
}

/* Row m's value (its field, or its function); index as for sim_metric_fn. */
double sim_metric_row(const sim_metric *m, const sim_scenario *sc, const sim_summary *sum,
                      uint32_t index);

/* The table, in report.json's order, terminated by a NULL name. */
const sim_metric *sim_metrics(void);
/* Is the row shown for this scenario (its feature is used; most rows always are)? */
bool sim_metric_shown(const sim_scenario *sc, const sim_metric *m);
/* The row named exactly `name` ("latency_p99", "attempts[]"), or NULL. */
const sim_metric *sim_metric_find(const char *name);

/*
 * Value of metric `name` ("success_rate", "attempts[openai]") for one
 * variant's summary, and its unit (either pointer may be NULL). Returns
 * FB_OK, or FB_ENOTFOUND for an unknown metric or provider (msg explains,
 * with a did-you-mean when possible).
 */
int sim_metric_value(const sim_scenario *sc, const sim_summary *sum, const char *name,
                     double *value, sim_unit *unit, char *msg, size_t msglen);

/* The value of a metric known to exist (0 for an unknown name; NaN when n/a). */
double sim_metric_get(const sim_scenario *sc, const sim_summary *sum, const char *name);

#endif /* SIM_METRICS_H */
