/*
 * compare.h - a simulated and a live run of the same scenario, side by side.
 *
 * For each variant: success rate, requests, attempts per provider, answers
 * via fallback, breaker opens and transitions per provider (providers with
 * a breaker), latency p50 and p99. Each row carries the simulated and the
 * live value, their difference (live - sim), the relative difference and
 * the tolerance it must stay within; docs/live.md says why each tolerance
 * is what it is.
 *
 * A variant whose live run could not be driven faithfully (fidelity.h) is
 * marked inconclusive (live_compare_inconclusive): its rows are still
 * written, for diagnosis, but the comparison is then neither a pass nor a
 * failure.
 */
#ifndef LIVE_COMPARE_H
#define LIVE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

typedef struct live_tolerances {
    double success_rate;        /* absolute, in [0, 1]; default 0.02 (2 points) */
    double success_rate_se;     /* ... but never tighter than this many standard errors of the
                                   difference of the two rates (0: off); default 3 */
    double counts;              /* relative; default 0.15 */
    double counts_min;          /* ... but never tighter than this many; default 5 */
    double breaker_opens;       /* per pod (1 for a shared breaker); default 1 */
    double breaker_transitions; /* per pod; default 3 */
    double latency;             /* relative; default 0.15 */
    double latency_min_real_ms; /* ... but never tighter than this x time scale; 5 */
    double latency_se;          /* ... nor than the simulated run's own latencies this many
                                   standard errors of the percentile's rank away (0: off); 3 */
} live_tolerances;

void live_tolerances_default(live_tolerances *t);
/* "success_rate=0.05", "counts=0.2", ...: FB_OK, or FB_EINVAL with a message. */
int live_tolerance_set(live_tolerances *t, const char *kv, char *msg, size_t msglen);

typedef struct live_cmp_row {
    char variant[SIM_NAME_MAX];
    char metric[96];
    sim_unit unit;
    double sim, live;
    double diff;      /* live - sim */
    double rel;       /* diff / sim; 0 when both are 0; NAN when only sim is 0 */
    double tolerance; /* |diff| allowed */
    char rule[64];    /* the tolerance as stated: "2 points", "15% or 5", "1 per pod" */
    bool ok;
} live_cmp_row;

typedef struct live_cmp_note {
    char variant[SIM_NAME_MAX];
    char reason[1024];
    double time_scale_ok; /* a time scale that would work; 0 = unknown */
} live_cmp_note;

typedef struct live_cmp {
    live_cmp_row *rows;
    size_t n, cap;
    double time_scale;
    bool ok;                               /* every row within its tolerance */
    live_cmp_note notes[SIM_VARIANTS_MAX]; /* the variants that are inconclusive */
    size_t nnotes;
} live_cmp;

typedef enum live_verdict { LIVE_PASS = 0, LIVE_FAIL, LIVE_INCONCLUSIVE } live_verdict;

/* Append the rows of one variant (same scenario, same seed). FB_ENOMEM on failure. */
int live_compare_variant(live_cmp *c, const sim_scenario *sc, const sim_summary *sim,
                         const sim_summary *live, const live_tolerances *t, double time_scale);
/* Variant `variant`'s live run was not driven faithfully: why, and what would work. */
void live_compare_inconclusive(live_cmp *c, const char *variant, const char *reason,
                               double time_scale_ok);
/* Inconclusive when any variant is, else pass when every row is within its tolerance. */
live_verdict live_compare_verdict(const live_cmp *c);
/* The table in Markdown (compare.md; also what the CLI prints). */
void live_compare_markdown(FILE *f, const sim_scenario *sc, const live_cmp *c);
int live_compare_json(FILE *f, const sim_scenario *sc, const live_cmp *c, const live_tolerances *t);
void live_compare_free(live_cmp *c);

#endif /* LIVE_COMPARE_H */
