/*
 * tune.h - one setting for several scenarios: search a grid of knobs for the
 * point that satisfies every constraint in every scenario and optimises the
 * objective across them (the worst case or the mean), within a budget of runs.
 *
 * Built on the sweep: each scenario is a sweep over the full factorial of the
 * knobs' values (ranges cut into --levels values), so keys, values, seeds,
 * metrics and constraints are checked and run exactly as `fusebox sweep`
 * does, and every candidate runs on the same seeds in every scenario (common
 * random numbers). The search (successive halving over a Latin hypercube
 * sample, few seeds first, then a coordinate search around the best at every
 * seed, then, with SWEEP_TUNE_NLOPT, NLopt's COBYLA on the budget left; or,
 * with SWEEP_TUNE_DIRECT, NLopt's DIRECT-L on the first seed, the same rungs,
 * then COBYLA from the best; NLopt over the box of the knobs' value indices
 * rounded to the grid) only decides which tasks run;
 * the runs go through a callback, in batches that span the scenarios, so the
 * CLI can hand them to its worker processes. Every decision is a function of
 * the results, so the outputs are byte-identical however the runs were made.
 * docs/tune.md describes the command.
 */
#ifndef SWEEP_TUNE_H
#define SWEEP_TUNE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sweep/sweep.h"

#define SWEEP_TUNE_SCENARIOS_MAX 64
#define SWEEP_TUNE_LEVELS_MAX 50
#define SWEEP_TUNE_RUNGS_MAX 16

typedef struct sweep_tune sweep_tune; /* opaque (tune.c) */

/* The budgeted search (docs/tune.md, "The search"). */
typedef enum sweep_tune_method {
    SWEEP_TUNE_HALVING = 0, /* a Latin hypercube sample, successive halving, one knob at a time */
    SWEEP_TUNE_NLOPT,       /* the same, then NLopt's LN_COBYLA on the budget left (the CLI's
                               default) */
    SWEEP_TUNE_DIRECT,      /* NLopt's GN_DIRECT_L on one seed, the rungs, then LN_COBYLA */
} sweep_tune_method;

typedef struct sweep_tune_args {
    const char *const *scenario_files;
    size_t scenario_count;
    const char *variant; /* NULL: each scenario's last variant */
    const char *const *sets;
    size_t set_count;
    const char *const *knobs; /* "KEY=v1,v2" or "KEY=[log:]LO..HI" */
    size_t knob_count;
    uint32_t levels;      /* values per range knob (0: 5) */
    const uint64_t *seed; /* NULL: each scenario's seed */
    uint32_t seeds;       /* 0: 3 */
    const char *objective;
    int sense;        /* +1 minimise, -1 maximise */
    bool across_mean; /* the objective across scenarios: mean (else the worst) */
    /* "NAME=W": scenario NAME's weight in the mean (NAME: the file as given, its base name,
     * or that without .json); the others weigh 1. Needs across_mean. */
    const char *const *weights;
    size_t weight_count;
    /* a second figure, traded off against the objective (NULL: none): the answer
     * lists the Pareto front of the two and the chart draws it; the search
     * optimises the objective */
    const char *second;
    int second_sense; /* +1 minimise, -1 maximise */
    /* a cheaper fidelity (NULL: none): successive halving first screens its
     * sample on one seed with every scenario's duration set to this (shorter)
     * duration, each such run counted as that fraction of a run */
    const char *screen;
    const char *subject_to;
    uint64_t budget; /* search runs; 0: 10% of the full grid's runs */
    bool exhaustive; /* every point on every seed (the budget is the full grid) */
    sweep_tune_method search;
    const sim_import *import;
} sweep_tune_args;

/*
 * Successive halving's plan, pure (for the tests): fidelities (seeds) f[0] <
 * ... < f[r-1] == seeds, each a third of the next rounded up, from 1; keep[i]
 * candidates at rung i, each a third of the one before rounded up. The cost
 * of n0 starting candidates is scenarios * sum keep[i] * (f[i] - f[i - 1]).
 * sweep_tune_plan picks the largest n0 <= points whose cost is <= runs;
 * returns the number of rungs, 0 when not even 3 candidates fit (or points
 * < 1).
 */
uint32_t sweep_tune_plan(uint64_t points, uint32_t seeds, size_t scenarios, uint64_t runs,
                         uint32_t f[SWEEP_TUNE_RUNGS_MAX], uint64_t keep[SWEEP_TUNE_RUNGS_MAX]);
uint64_t sweep_tune_plan_cost(uint64_t n0, uint32_t seeds, size_t scenarios);

/*
 * Range knobs as listed values: "KEY=LO..HI" becomes "KEY=v1,...,vL", L
 * evenly spaced values from LO to HI (log-spaced with log:, integers and
 * durations rounded as sweep_dim_value does, duplicates dropped); a listed
 * knob is copied. FB_EINVAL with a message on bad syntax (an empty range).
 */
int sweep_tune_knob_values(const char *arg, uint32_t levels, char *out, size_t outlen, char *msg,
                           size_t msglen);

/* Build: one sweep per scenario (validating every point), the analysis options. */
int sweep_tune_create(const sweep_tune_args *a, sweep_tune **out, char *msg, size_t msglen);
void sweep_tune_destroy(sweep_tune *t);

/* One run: task `task` of sweep `sw` (a scenario's grid, its current settings or its screen). */
typedef struct sweep_tune_run {
    sweep *sw;
    uint64_t task;
} sweep_tune_run;

/*
 * Runs runs[0..n) and records each result in its sweep (sweep_set_result);
 * FB_OK or an error. A batch holds the tasks of several sweeps (every
 * scenario's seeds of a candidate), so a runner can run them all in
 * parallel: nothing is decided before the whole batch is back.
 */
typedef int (*sweep_tune_runner)(void *ctx, const sweep_tune_run *runs, size_t n);

/*
 * The search, then the report's runs (the current settings; every one-knob
 * neighbour of the recommendation not yet run, for the sensitivity). FB_OK;
 * FB_ECAP when a run stopped on a cap (msg says which); the runner's error.
 */
int sweep_tune_search(sweep_tune *t, sweep_tune_runner run, void *ctx, char *msg, size_t msglen);

/*
 * Beyond one machine, exhaustive (the budgeted search goes by rounds:
 * sweep_tune_round below). sweep_tune_run_shard
 * runs shard K of N: the full grid's runs whose number % N == K - 1 and the
 * current settings' seeds likewise, in every scenario; sweep_tune_save_shard
 * writes them under DIR/tune.part-K-of-N/ (a sweep part file per scenario's
 * grid and current settings). sweep_tune_load_shards loads the N shards'
 * files back (each checked against this tune's definition); the search then
 * runs nothing that a shard ran, and writes what an unsharded run writes.
 */
int sweep_tune_run_shard(sweep_tune *t, uint32_t k, uint32_t n, sweep_tune_runner run, void *ctx,
                         char *msg, size_t msglen);
int sweep_tune_save_shard(const sweep_tune *t, const char *dir, uint32_t k, uint32_t n, char *msg,
                          size_t msglen);
int sweep_tune_load_shards(sweep_tune *t, const char *dir, uint32_t n, char *msg, size_t msglen);

/*
 * Rounds: the budgeted search on a batch engine (docs/tune.md, "Beyond one
 * machine"). The search is replayed from the start by every merge: a runner
 * hands it the results the earlier rounds' shards wrote (copied from a tune
 * of the same command holding them, sweep_tune_copy_results) exactly when
 * it asks for them, so it decides as one process does; the first batch it
 * asks for that no round ran is the next round. DIR/tune.round.json names
 * that round's runs; shard K of N runs those whose place in the list % N ==
 * K - 1 and saves them under DIR/tune.round-R/part-K-of-N/ (a sweep part
 * file per sweep).
 */
typedef struct sweep_tune_round {
    uint32_t round, shards;
    uint64_t command; /* a fingerprint of the command that planned it */
    sweep_tune_run *runs;
    size_t n;
} sweep_tune_round;

/* FB_OK; FB_ENOTFOUND when DIR has no round file; FB_EINVAL (msg says why) when it is damaged. */
int sweep_tune_read_round(const sweep_tune *t, const char *dir, sweep_tune_round *r, char *msg,
                          size_t msglen);
int sweep_tune_write_round(const sweep_tune *t, const char *dir, const sweep_tune_round *r,
                           char *msg, size_t msglen);
void sweep_tune_round_free(sweep_tune_round *r);
/* The results t holds (a shard's, of round `round`) to DIR/tune.round-R/part-K-of-N/. */
int sweep_tune_save_round_part(const sweep_tune *t, const char *dir, uint32_t round, uint32_t k,
                               uint32_t n, char *msg, size_t msglen);
/*
 * The parts of rounds 1..r->round (r->shards each) into t's sweeps, each
 * checked against t's definition; then every run of round r must have a
 * result (else FB_EINVAL naming the shard that lacks it).
 */
int sweep_tune_load_rounds(sweep_tune *t, const char *dir, const sweep_tune_round *r, char *msg,
                           size_t msglen);
/*
 * Of runs[0..n) (runs of `to`), those `from` (the same command's tune) has
 * a result for get it in `to`; the others are moved to the front, in order;
 * returns how many.
 */
size_t sweep_tune_copy_results(const sweep_tune *from, const sweep_tune *to, sweep_tune_run *runs,
                               size_t n);

/* The full grid's runs (points x seeds x scenarios), the search's and the report's. */
uint64_t sweep_tune_full_runs(const sweep_tune *t);
uint64_t sweep_tune_search_runs(const sweep_tune *t);
/* True when no evaluated point satisfies every constraint in every scenario. */
bool sweep_tune_infeasible(const sweep_tune *t);

/* The answer for people. */
void sweep_tune_write_answer(FILE *f, const sweep_tune *t);
/* tune.json. */
void sweep_tune_write_json(FILE *f, const sweep_tune *t);
/*
 * DIR/charts/: scenarios (the objective per scenario, recommended and
 * current) and, with a second figure or constraints, tradeoff (every setting
 * run on every seed, the objective against the second figure or the
 * tightest constraint's slack, the Pareto front joined): each a .gp script
 * and its .dat, drawn to .png by gnuplot. FB_OK; FB_ENOTFOUND when gnuplot
 * is missing (msg names the package; the scripts are written and tune.html
 * says so); FB_EIO. tune.html embeds what this wrote.
 */
int sweep_tune_write_charts(sweep_tune *t, const char *dir, char *msg, size_t msglen);
/* tune.html: each knob's values around the recommendation, the charts, and the answer. */
void sweep_tune_write_html(FILE *f, const sweep_tune *t);

#endif /* SWEEP_TUNE_H */
