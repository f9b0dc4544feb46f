/*
 * sweepint.h - the sweep's internals, shared by its files; other modules use
 * sweep.h. In the order a sweep goes:
 *   define.c      the arguments, resolved and validated (grid.c: --grid syntax)
 *   design.c      where the points are (listed values, ranges, Latin hypercube)
 *   run.c         running a task, recording its result
 *   part.c        a shard's partial file, and the merge of all of them
 *   analyse.c     statistics, feasibility, the best point, the Pareto front
 *                 (constraint.c: --subject-to)
 *   answer.c      the answer for people
 *   output.c      sweep.csv, sweep-points.csv, sweep.json
 *   charts.c      the gnuplot charts; html.c: sweep.html
 *   save.c        the files staged, checked and renamed into place
 */
#ifndef SWEEP_SWEEPINT_H
#define SWEEP_SWEEPINT_H

#include "sweep/sweep.h"

#define SWEEP_PATH_MAX (SWEEP_KEY_MAX + SIM_NAME_MAX + 16)
#define SWEEP_VALUE_MAX 512

struct sweep {
    /* the definition: decides the tasks and their results */
    char file[256];
    char *text;
    size_t text_len;
    uint64_t hash;
    sim_scenario *base;       /* the scenario with the sweep's own --set applied */
    const sim_import *import; /* for layers that name a policy file */
    char variant[SIM_NAME_MAX];
    bool has_variants; /* relative keys go to variants.NAME (else policy) */
    char **sets;
    size_t set_count;
    char **grid_args;
    sweep_dim dims[SWEEP_DIMS_MAX];
    char paths[SWEEP_DIMS_MAX][SWEEP_PATH_MAX]; /* absolute --set paths */
    bool absolute[SWEEP_DIMS_MAX];              /* key names a top-level key */
    uint32_t dim_count;
    uint32_t sample;
    uint64_t seed;
    uint32_t seeds;
    uint64_t points, tasks;
    double *u; /* sample: points x dim_count positions */
    char (*metrics)[SWEEP_METRIC_MAX];
    sim_unit *units;
    size_t metric_count;

    /* the analysis */
    char objective[SWEEP_METRIC_MAX];
    int sense;
    char subject_to[512];
    bool strict;
    sweep_constraint cons[SWEEP_CONSTRAINTS_MAX];
    size_t con_count;
    char heatmap[SWEEP_METRIC_MAX];
    bool heatmap_given; /* else it follows the objective */
    char heatmap_dims[2 * SWEEP_KEY_MAX + 2];
    int heat_x, heat_y; /* dimension indices; -1 when absent */

    /* results: tasks x metric_count values */
    double *values;
    int8_t *state; /* 0 no result yet, 1 ok, -1 failed */
    char **errors;

    /* evaluation (sweep_analyse) */
    bool analysed;
    uint32_t *runs_ok; /* per point */
    bool *feasible, *pareto;
    int64_t best, runner_up, closest; /* -1 when none */
    uint64_t feasible_count, pareto_count, failed;

    /* a merged sweep: merge.json, its parts' digests (NULL otherwise) */
    char *manifest;
};

/* ---- define.c ---- */

/* Fill msg (printf-style) and return rc. */
int sweep_fail(char *msg, size_t msglen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A whole file into a malloc'd, NUL-terminated buffer; FB_ECAP above max bytes. */
int sweep_read_file(const char *path, size_t max, char **out, size_t *len, char *msg,
                    size_t msglen);
/* The scenario at point p (seed: NULL for the sweep's), with the sweep's variant checked. */
int sweep_load_point(const sweep *sw, uint64_t p, const uint64_t *seed, sim_scenario **sc,
                     sim_error *err);

/* ---- grid.c ---- */

/* Blanks and tabs off both ends, in place. */
const char *sweep_trim(char *s);
/* A whole string as a finite number. */
int sweep_parse_number(const char *s, double *out);

/* ---- design.c ---- */

/* The text of dimension d at point p (what --set receives). */
void sweep_point_value(const sweep *sw, uint64_t p, uint32_t d, char *buf, size_t len);
/* "key=value key=value" for point p. */
void sweep_point_label(const sweep *sw, uint64_t p, char *buf, size_t len);

/* ---- analyse.c ---- */

/* The Pareto front is over these three, all minimised. */
extern const char *const sweep_pareto_metrics[3];

/* Index of a metric column, or -1. */
int sweep_metric_index(const sweep *sw, const char *name);
/* Statistics of metric column m over point p's completed seeds. */
void sweep_point_stat(const sweep *sw, uint64_t p, int m, sweep_stat *st);
/*
 * Does dimension d change nothing? True when the sweep is a full grid, d has
 * two values or more, and every point gave the same value of every metric as
 * the point that differs from it only in d, seed for seed (the runs compared
 * are those that ended well on both sides; at least one pair). A sample
 * (Latin hypercube) never pairs its points this way: false.
 */
/* Metric m at point q less at point p, seed by seed (common random numbers): their mean and
 * 95% CI in *out; how many seeds both ran. */
uint32_t sweep_paired_diff(const sweep *sw, uint64_t p, uint64_t q, int m, sweep_stat *out);
bool sweep_dim_no_effect(const sweep *sw, uint32_t d);
/* Every change of d moved the objective within the seeds' noise (paired 95% CI holds 0). */
bool sweep_dim_within_noise(const sweep *sw, uint32_t d, uint64_t *pairs);
/* answer.c: the library's rule that makes dimension d's key (a preset layer's parameter) change
   nothing in this scenario, into why (scn_preset_inert); false when no rule says so. */
bool sweep_dim_rule(const sweep *sw, uint32_t d, char *why, size_t len);
/* The mean of a metric (by name) over point p's completed seeds. */
double sweep_point_mean(const sweep *sw, uint64_t p, const char *metric);
/* What a constraint is judged on: the mean, or with --strict the CI's far end. */
double sweep_judged_value(const sweep *sw, const sweep_stat *st, const sweep_constraint *k);
/* True when larger values of the metric are better (success_rate...). */
bool sweep_higher_is_better(const sweep *sw, const char *metric);

/* ---- answer.c ---- */

/* A metric value for people: "8.2s", "$2222.19", "0.999021", "781". */
void sweep_format_human(char *buf, size_t len, double v, sim_unit unit);
/* The variant's policy block at point p and the `fusebox run` command that runs it. */
void sweep_answer_policy(FILE *f, const sweep *sw, uint64_t p);

/* ---- save.c ---- */

/* fflush, ferror and fclose of path's stream: FB_EIO with "cannot write PATH: REASON". */
int sweep_close_checked(FILE *f, const char *path, char *msg, size_t msglen);

/* ---- part.c ---- */

/* A partial file (sweep_write_part), marked interrupted when it is. */
int sweep_part_write(FILE *f, const sweep *sw, uint32_t k, uint32_t n, bool interrupted);

/* ---- charts.c, html.c ---- */

/* The charts in dir/charts; FB_ENOTFOUND (msg says why) without gnuplot. */
int sweep_write_charts(const sweep *sw, const char *dir, char *msg, size_t msglen);
/* sweep.html; `note` (may be NULL) says why charts are missing. */
int sweep_write_html(const sweep *sw, const char *dir, const char *answer, const char *note,
                     char *msg, size_t msglen);

#endif /* SWEEP_SWEEPINT_H */
