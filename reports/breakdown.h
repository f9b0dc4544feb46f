/*
 * breakdown.h - a run's figures broken down the way a log states them, and the log's own
 * figures beside them (docs/reports.md, "breakdown"; docs/import.md, "Fidelity").
 *
 * report.json's "breakdown" per variant: requests by the provider calls they made, calls
 * by their answer (HTTP status, timeout, reset, broken), requests by how they ended, the
 * fault windows. A scenario that carries the log's figures ("observed", written by
 * `fusebox import`) gets them side by side with its variant's, each against its
 * tolerance: counts +-2% (at least 2), latencies +-10%, each attempts-per-request bucket
 * +-2 points of the share of requests.
 */
#ifndef REP_BREAKDOWN_H
#define REP_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/json.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

/* report.json: the variant's "breakdown" object. */
void rep_breakdown_json(util_json *w, const sim_scenario *sc, const sim_summary *s);
/* The text summary's lines: attempts per request and answers, one line per variant. */
void rep_breakdown_text(FILE *f, sim_summary *const *sums, size_t n);
/* report.html's table of the same lines. */
void rep_breakdown_html(FILE *f, sim_summary *const *sums, size_t n);

#define REP_COUNT_TOLERANCE 0.02   /* counts: +-2% of the log's */
#define REP_COUNT_TOLERANCE_MIN 2  /* ... and at least 2 */
#define REP_LATENCY_TOLERANCE 0.10 /* p50, p90, p99: +-10% */
#define REP_SHARE_TOLERANCE                                                                        \
    SIM_OBS_SHARE_TOLERANCE /* each attempts-per-request bucket: +-2 points */

typedef enum rep_figure_kind {
    REP_FIGURE_COUNT = 0, /* within max(2% of the log's, 2) */
    REP_FIGURE_LATENCY,   /* microseconds; within 10% of the log's */
    REP_FIGURE_BUCKET     /* a count of requests whose share is within 2 points */
} rep_figure_kind;

typedef enum rep_figure_group {
    REP_GROUP_TOTALS = 0, /* requests, attempts, retries */
    REP_GROUP_LATENCY,    /* latency_p50, _p90, _p99 */
    REP_GROUP_BUCKET,     /* attempts/request N */
    REP_GROUP_STATUS,     /* status S */
    REP_GROUP_END         /* end E */
} rep_figure_group;

/* One figure of the log beside the variant's. */
typedef struct rep_figure {
    char name[48]; /* "requests", "latency_p99", "attempts/request 2", "status 429", "end exhausted"
                    */
    rep_figure_kind kind;
    rep_figure_group group;
    int key;                     /* the bucket, the status (0 for the words), the end's index */
    double log, sim;             /* counts, or microseconds */
    double log_share, sim_share; /* REP_FIGURE_BUCKET: of the requests */
    double tolerance;            /* half-width: counts, microseconds, or a share */
    double noise;      /* the noise of the log against the replay (observed.noise), same unit; 0 */
    sim_obs_rank rank; /* REP_FIGURE_LATENCY: the log's band around its quantile, if stated */
    bool cliff;        /* within its tolerance only by that band (not within 10%) */
    bool within_tolerance;
    bool within; /* within its tolerance or its noise: not a miss */
} rep_figure;

#define REP_FIGURES_MAX 160

/*
 * The figures of sc->observed against summary s (the variant it names), in a fixed order:
 * requests, attempts, retries, p50, p90, p99, each bucket, each status, each end (a key in
 * either). Returns how many were written to out (at most cap).
 */
size_t rep_observed_figures(const sim_scenario *sc, const sim_summary *s, rep_figure *out,
                            size_t cap);
/*
 * A latency quantile's verdict (docs/import.md, "Fidelity"): within 10% of the log's
 * (microseconds), or between the log's own latency at ranks q - d and q + d (r: NULL or not
 * present, no such band). *cliff (may be NULL): within only by that band, which happens where the
 * log's quantile sits on a cliff of its distribution.
 */
bool rep_latency_within(double log_us, double sim_us, const sim_obs_rank *r, bool *cliff);
/* The table's mark after a figure: "  MISS", "  (noise)", "  (on a cliff: within the log's
   p88.05..p91.95)" or "". */
void rep_figure_mark(char *buf, size_t len, const rep_figure *g);
/* A figure's values as the table shows them ("1.2s", "237 (74.8%)"), and its tolerance. */
void rep_figure_cell(char *buf, size_t len, const rep_figure *g, bool log);
void rep_figure_tolerance(char *buf, size_t len, const rep_figure *g);
/* Its noise band ("+-135", "+-1.7s", "+-4.5 pts"; "-" when the scenario states none). */
void rep_figure_noise(char *buf, size_t len, const rep_figure *g);
/*
 * How far the q-quantile (0 < q < 1) of latencies h can fall by sampling alone, on the side
 * of toward (microseconds): the distance from it to the order statistic 3 standard deviations
 * of its rank (sqrt(n q (1 - q))) plus one away, the distribution-free interval of the expect
 * bands (docs/import.md). Where a few requests make the tail, a p99 sits on a cliff between
 * them and the rest, and this reaches over it. 0 when h is empty.
 */
double rep_quantile_spread(const fb_hist *h, double q, double toward);
/*
 * The table of the log beside sc->observed.variant: a row per figure, "MISS" where out of
 * tolerance. Nothing when the scenario carries no observed figures or the variant was not
 * run. Returns the misses.
 */
int rep_observed_text(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n);

#endif /* REP_BREAKDOWN_H */
