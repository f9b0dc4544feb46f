/*
 * sweep_impl.h - the sweep's internals, shared by sweep.c (definition,
 * results, analysis, files), sweep_part.c (partial files, merge) and
 * sweep_charts.c (gnuplot charts, sweep.html). Other modules use sweep.h.
 */
#ifndef REP_SWEEP_IMPL_H
#define REP_SWEEP_IMPL_H

#include "reports/sweep.h"

#define SWEEP_PATH_MAX (REP_SWEEP_KEY_MAX + SIM_NAME_MAX + 16)
#define SWEEP_VALUE_MAX 512

struct rep_sweep {
    /* the definition: decides the tasks and their results */
    char file[256];
    char *text;
    size_t text_len;
    uint64_t hash;
    sim_scenario *base; /* the scenario with the sweep's own --set applied */
    char variant[SIM_NAME_MAX];
    bool has_variants; /* relative keys go to variants.NAME (else policy) */
    char **sets;
    size_t set_count;
    char **grid_args;
    rep_sweep_dim dims[REP_SWEEP_DIMS_MAX];
    char paths[REP_SWEEP_DIMS_MAX][SWEEP_PATH_MAX]; /* absolute --set paths */
    bool absolute[REP_SWEEP_DIMS_MAX];              /* key names a top-level key */
    uint32_t dim_count;
    uint32_t sample;
    uint64_t seed;
    uint32_t seeds;
    uint64_t points, tasks;
    double *u; /* sample: points x dim_count positions */
    char (*metrics)[REP_SWEEP_METRIC_MAX];
    sim_unit *units;
    size_t metric_count;

    /* the analysis */
    char objective[REP_SWEEP_METRIC_MAX];
    int sense;
    char subject_to[512];
    bool strict;
    rep_sweep_constraint cons[REP_SWEEP_CONSTRAINTS_MAX];
    size_t con_count;
    char heatmap[REP_SWEEP_METRIC_MAX];
    bool heatmap_given; /* else it follows the objective */
    char heatmap_dims[2 * REP_SWEEP_KEY_MAX + 2];
    int heat_x, heat_y; /* dimension indices; -1 when absent */

    /* results: tasks x metric_count values */
    double *values;
    int8_t *state; /* 0 no result yet, 1 ok, -1 failed */
    char **errors;

    /* evaluation (rep_sweep_analyse) */
    bool analysed;
    uint32_t *runs_ok; /* per point */
    bool *feasible, *pareto;
    int64_t best, runner_up, closest; /* -1 when none */
    uint64_t feasible_count, pareto_count, failed;
};

/* The text of dimension d at point p (what --set receives). */
void sweep_point_value(const rep_sweep *sw, uint64_t p, uint32_t d, char *buf, size_t len);
/* Index of a metric column, or -1. */
int sweep_metric_index(const rep_sweep *sw, const char *name);
/* Statistics of metric column m over point p's completed seeds. */
void sweep_point_stat(const rep_sweep *sw, uint64_t p, int m, rep_sweep_stat *st);
/* A metric value for people: "8.2s", "$2222.19", "0.999021", "781". */
void sweep_format_human(char *buf, size_t len, double v, sim_unit unit);
/* "key=value key=value" for point p. */
void sweep_point_label(const rep_sweep *sw, uint64_t p, char *buf, size_t len);
/* True when larger values of the metric are better (success_rate...). */
bool sweep_higher_is_better(const rep_sweep *sw, const char *metric);

/* Fill msg (printf-style) and return rc. */
int sweep_fail(char *msg, size_t msglen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A whole file into a malloc'd, NUL-terminated buffer; FB_ECAP above max bytes. */
int sweep_read_file(const char *path, size_t max, char **out, size_t *len, char *msg,
                    size_t msglen);
/* A JSON string literal. */
void sweep_json_str(FILE *f, const char *s);

/* sweep_charts.c: charts in dir/charts and dir/sweep.html (answer: the answer text). */
int sweep_write_charts(const rep_sweep *sw, const char *dir, char *msg, size_t msglen);
/* sweep.html; `note` (may be NULL) says why charts are missing. */
int sweep_write_html(const rep_sweep *sw, const char *dir, const char *answer, const char *note,
                     char *msg, size_t msglen);

#endif /* REP_SWEEP_IMPL_H */
