/*
 * sweep.h - run one variant of a scenario over a grid (or a Latin hypercube
 * sample) of settings and several seeds, and answer "which setting is best?".
 *
 * A sweep is a list of tasks, task = point * seeds + seed index. Each task is
 * the scenario with the point's values applied through the `--set` machinery
 * (so they are validated exactly like the file), run under one seed; its
 * result is the value of every metric of sim/metrics.h. The tasks are
 * independent: the CLI runs them in worker processes or shards and hands the
 * results back in any order; every output is a function of (sweep, results)
 * only, so it is byte-identical however the tasks were run. docs/sweeps.md
 * describes the command, the files and the statistics.
 *
 * The pure parts (grid syntax, Latin hypercube, confidence intervals, Pareto
 * front, constraints) are public for the tests.
 */
#ifndef SWEEP_SWEEP_H
#define SWEEP_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"

#define SWEEP_DIMS_MAX 16
#define SWEEP_VALUES_MAX 1000 /* listed values per dimension */
#define SWEEP_TASKS_MAX 100000
#define SWEEP_SEEDS_MAX 1000
#define SWEEP_SETS_MAX 64
#define SWEEP_CONSTRAINTS_MAX 16
#define SWEEP_KEY_MAX 200
/* a metric's name: a base name of sim/metrics.h (under 64) and a provider's or layer's name */
#define SWEEP_METRIC_MAX (64 + SIM_NAME_MAX)
#define SWEEP_MSG_MAX 240 /* a failed task's message, as sent by a worker */

/* ---- dimensions: one --grid KEY=SPEC ---- */

typedef enum sweep_dim_kind {
    SWEEP_LIST = 0, /* KEY=v1,v2,v3 */
    SWEEP_RANGE     /* KEY=lo..hi or KEY=log:lo..hi (with --sample) */
} sweep_dim_kind;

typedef enum sweep_value_type {
    SWEEP_NUMBER = 0,
    SWEEP_INTEGER, /* both ends written as integers: draws are integers */
    SWEEP_DURATION /* both ends durations: draws in microseconds */
} sweep_value_type;

typedef struct sweep_dim {
    char key[SWEEP_KEY_MAX]; /* as written: "breaker.open" */
    sweep_dim_kind kind;
    char **values; /* LIST: the value texts, owned */
    uint32_t value_count;
    sweep_value_type type; /* RANGE */
    bool log;              /* RANGE: log-uniform */
    double lo, hi;         /* RANGE: lo < hi; durations in microseconds */
} sweep_dim;

/*
 * Parse "KEY=v1,v2" (values split on commas outside quotes and brackets, so
 * JSON values work) or "KEY=[log:]LO..HI". FB_EINVAL with a message naming
 * the argument on bad syntax. Free with sweep_dim_free.
 */
int sweep_parse_grid(const char *arg, sweep_dim *dim, char *msg, size_t msglen);
void sweep_dim_free(sweep_dim *dim);
/*
 * The text handed to --set for position u in [0, 1): a listed value
 * (values[floor(u * n)]), or a range value: numbers linear or log-uniform
 * ("%.6g"), integers uniform over lo..hi inclusive, durations rounded to the
 * millisecond (to the microsecond when lo < 1ms) and written "250ms".
 */
void sweep_dim_value(const sweep_dim *dim, double u, char *buf, size_t len);

/*
 * Latin hypercube: n points in [0, 1)^d, row-major into u[n * d]. In every
 * dimension each of the n strata [k/n, (k+1)/n) holds exactly one point.
 * Deterministic in seed (fb_rng streams derived from (seed, dimension)).
 */
void sweep_lhs(uint32_t n, uint32_t d, uint64_t seed, double *u);

/* ---- statistics ---- */

/* Two-sided 95% quantile of Student's t with df degrees of freedom (df >= 1). */
double sweep_t975(uint32_t df);

typedef struct sweep_stat {
    uint32_t n;
    double mean, sd;        /* sd: sample standard deviation (n - 1) */
    double ci_low, ci_high; /* mean -/+ t975(n - 1) * sd / sqrt(n); NAN when n < 2 */
} sweep_stat;

/* Mean, sd and 95% confidence interval of x[0..n) (summed in order). */
void sweep_stat_of(const double *x, uint32_t n, sweep_stat *out);

/*
 * Pareto front of n rows of m objectives (row-major, all minimised): front[i]
 * is true when no other row is <= in every objective and < in one. Rows with
 * a NAN are never on the front and dominate nothing.
 */
void sweep_pareto(const double *obj, size_t n, size_t m, bool *front);

/* ---- constraints: --subject-to "success_rate>=0.999,latency_p99<=10s" ---- */

typedef enum sweep_op { SWEEP_GE = 0, SWEEP_LE, SWEEP_GT, SWEEP_LT } sweep_op;

typedef struct sweep_constraint {
    char metric[SWEEP_METRIC_MAX];
    sweep_op op;
    double value;             /* in the metric's unit (durations in microseconds) */
    char text[SWEEP_KEY_MAX]; /* as written, trimmed */
} sweep_constraint;

/*
 * Parse a comma-separated list of METRIC OP VALUE (OP: >= <= > <). Metric
 * names are checked with sim_metric_value against `sc` (did-you-mean on a
 * typo); VALUE is a duration for duration metrics ("10s"), a number or a
 * percentage ("99.9%") for ratios, a number (optionally "$") for money.
 */
int sweep_parse_constraints(const char *text, const sim_scenario *sc, sweep_constraint *out,
                            size_t max, size_t *count, char *msg, size_t msglen);
bool sweep_constraint_holds(const sweep_constraint *c, double v);

/* Check a metric name against sim_metric_value (with its did-you-mean message). */
int sweep_check_metric(const sim_scenario *sc, const char *name, sim_unit *unit, char *msg,
                       size_t msglen);

/* ---- the sweep ---- */

typedef struct sweep sweep; /* opaque (sweepint.h) */

typedef struct sweep_args {
    const char *scenario_file;
    const char *scenario_text; /* NULL: read scenario_file */
    size_t scenario_len;
    const char *variant; /* NULL: the scenario's last variant */
    const char *const *sets;
    size_t set_count;
    const char *const *grids; /* "KEY=SPEC" */
    size_t grid_count;
    uint32_t sample;      /* 0: full factorial of the listed values */
    const uint64_t *seed; /* NULL: the scenario's seed */
    uint32_t seeds;       /* 0: 3 */
    /* analysis (may change without changing the tasks) */
    const char *objective; /* metric, or NULL */
    int sense;             /* +1 minimise, -1 maximise */
    const char *subject_to;
    bool strict;              /* constraints must hold at the pessimistic end of the 95% CI */
    const char *heatmap;      /* metric; NULL: the objective, else blast_radius */
    const char *heatmap_dims; /* "KEY1,KEY2"; NULL: the first two dimensions */
    const sim_import *import; /* reads policy files that layers name (NULL: none) */
} sweep_args;

/*
 * Build a sweep: parse the grid, resolve keys (relative to the variant's
 * policy unless they start with a top-level scenario key), load the scenario
 * once per point to validate every value, check the caps and the analysis
 * options. FB_EINVAL/FB_ECAP/FB_EIO with a message (exit code 2 material).
 */
int sweep_create(const sweep_args *args, sweep **out, char *msg, size_t msglen);
void sweep_destroy(sweep *sw);

uint64_t sweep_task_count(const sweep *sw);
uint64_t sweep_point_count(const sweep *sw);
size_t sweep_metric_count(const sweep *sw);
const char *sweep_scenario_name(const sweep *sw);

/*
 * Run task `task` and fill values[sweep_metric_count()]. Returns FB_OK,
 * or the simulator's error (a cap) with msg filled and values holding what
 * was measured.
 */
int sweep_run_task(const sweep *sw, uint64_t task, double *values, char *msg, size_t msglen);
/* Record a task's result (status FB_OK or an error with its message). */
int sweep_set_result(sweep *sw, uint64_t task, int status, const double *values, const char *msg);

/* Tasks of shard k (1-based) of n: task % n == k - 1. */
bool sweep_in_shard(uint64_t task, uint32_t k, uint32_t n);

/*
 * Evaluate the recorded results: statistics, feasibility, best point, Pareto
 * front. FB_ESTATE when some task has no result; FB_OK otherwise (failed
 * tasks are left out of the statistics, and counted).
 */
int sweep_analyse(sweep *sw);
/* Tasks that failed (a cap stopped the run); the first one's message. */
uint64_t sweep_failed(const sweep *sw, const char **first_msg);
/* True when an objective was given but no point satisfies the constraints. */
bool sweep_infeasible(const sweep *sw);

/* The answer for the terminal: best point, its policy block, runner-up. */
void sweep_write_answer(FILE *f, const sweep *sw);
/*
 * DIR/sweep.csv, sweep-points.csv, sweep.json and (charts true) the gnuplot
 * charts in DIR/charts/ and DIR/sweep.html. Without gnuplot the page is
 * still written, saying why it has no charts, and FB_ENOTFOUND is returned.
 */
int sweep_write_outputs(sweep *sw, const char *dir, bool charts, char *msg, size_t msglen);

/* The partial file of shard k of n: the sweep's definition and its tasks' results. */
int sweep_write_part(FILE *f, const sweep *sw, uint32_t k, uint32_t n);
/*
 * Read partial files, check that they are the complete, non-overlapping
 * shards of one sweep and build it with every result recorded. `analysis`
 * (may be NULL) replaces the analysis options stored in the parts where its
 * fields are non-NULL / non-zero.
 */
int sweep_merge(const char *const *files, size_t n, const sweep_args *analysis, sweep **out,
                char *msg, size_t msglen);

/* ---- saving: a folder never mixes the files of two runs (save.c) ---- */

/*
 * The outputs of sweep_write_outputs, written into DIR/.sweep-staging (every
 * write checked, fflush and fclose included) and then renamed into DIR; the
 * files of an earlier sweep that this one does not write (sweep.html and
 * charts/ after --no-charts, merge.json) are removed. A merged sweep also
 * writes DIR/merge.json, the digests of its parts. *replaced: DIR held a
 * sweep.json before. On failure DIR is as it was and msg names the file and
 * the system's reason (FB_EIO). FB_ENOTFOUND as sweep_write_outputs.
 */
int sweep_save_outputs(sweep *sw, const char *dir, bool charts, bool *replaced, char *msg,
                       size_t msglen);
/*
 * The partial file of shard k of n written to DIR/NAME.tmp, checked, then
 * renamed to DIR/NAME. `interrupted`: an interrupted sweep's file (it says
 * so; merge refuses it, sweep --resume continues it).
 */
int sweep_save_part(const sweep *sw, const char *dir, const char *name, uint32_t k, uint32_t n,
                    bool interrupted, char *msg, size_t msglen);

/* Tasks of shard k of n (n 0: all) that have a result. */
uint64_t sweep_result_count(const sweep *sw, uint32_t k, uint32_t n);
bool sweep_has_result(const sweep *sw, uint64_t task);

/*
 * --resume: record the results of an interrupted sweep's partial file.
 * It must be shard k of n (1 of 1 unsharded) of this very sweep, written by
 * this fusebox version: else FB_EINVAL with the reason (the field that
 * differs). *loaded: the runs it held.
 */
int sweep_resume(sweep *sw, const char *file, uint32_t k, uint32_t n, uint64_t *loaded, char *msg,
                 size_t msglen);

typedef enum sweep_folder {
    SWEEP_FOLDER_EMPTY = 0, /* no sweep.json */
    SWEEP_FOLDER_SAME,      /* a sweep merged from the same parts as sw (merge.json agrees) */
    SWEEP_FOLDER_OTHER      /* any other sweep */
} sweep_folder;
/* What DIR holds, compared with sw (a merged sweep: its parts' digests). */
sweep_folder sweep_folder_kind(const sweep *sw, const char *dir);

/* FNV-1a 64 of a byte string: identifies the scenario text in partial files. */
uint64_t sweep_hash(const void *data, size_t len);

#endif /* SWEEP_SWEEP_H */
