/*
 * compare.h - two runs side by side: the headline figures of two report.json
 * files (or two sweep.json files), their change, and whether the change is
 * beyond noise.
 *
 * Pure: the caller reads the files (rep_cmp_parse takes their text), prints
 * and writes; this module only parses and judges. See docs/compare.md.
 *
 * The noise rule, per figure:
 *   - both sides are means over several seeds with a 95% confidence interval
 *     (a sweep's points, runs >= 2) and no --tolerance names the figure: the
 *     change is beyond noise when the two intervals do not overlap;
 *   - otherwise a tolerance: the figure's --tolerance (absolute "0.002" or
 *     relative "5%"), else its default (rep_cmp_headlines()): the change is
 *     beyond noise when |B - A| exceeds it.
 * A change beyond noise in the figure's bad direction is a regression.
 */
#ifndef REP_COMPARE_H
#define REP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/metrics.h"

/* Caps: entries of one side (variants, or a sweep's points), figures of a comparison. */
#define REP_CMP_ENTRIES_MAX 4096
#define REP_CMP_NAME_MAX 256

/* A headline figure: what `compare` and `check --baseline` judge. */
typedef struct rep_cmp_headline {
    const char *metric; /* sim/metrics.h name */
    sim_unit unit;
    bool higher_is_better;
    double tol_abs; /* default tolerance: absolute (in report.json's unit), or 0 */
    double tol_rel; /* ... or relative (0.05 = 5%), or 0 */
    double tol_min; /* the relative tolerance is never below this absolute amount */
} rep_cmp_headline;

/* The headline figures in order; *count gets their number. */
const rep_cmp_headline *rep_cmp_headlines(size_t *count);
const rep_cmp_headline *rep_cmp_headline_find(const char *metric);

typedef enum rep_cmp_kind { REP_CMP_REPORT = 0, REP_CMP_SWEEP } rep_cmp_kind;

/* One figure of one entry: a value, or a mean with its 95% CI (report.json's units). */
typedef struct rep_cmp_value {
    bool present; /* the file has the figure (false: absent or null) */
    double v;
    bool has_ci; /* a mean over runs >= 2 seeds */
    double lo, hi;
} rep_cmp_value;

/* A variant of a report, or a point of a sweep (named by its settings: "breaker.open=5s"). */
typedef struct rep_cmp_entry {
    char name[REP_CMP_NAME_MAX];
    rep_cmp_value value[16]; /* by headline index */
    char stopped[96]; /* "": its run went to the end; else why not (report.json's "stopped") */
    double ended;     /* requests ended (report.json's summary), NaN when unknown (sweeps) */
} rep_cmp_entry;

typedef struct rep_cmp_side {
    rep_cmp_kind kind;
    char scenario[128];
    char seeds[128]; /* "7", "7, 8, 9" */
    char rng[32];    /* the random streams' version ("fusebox-5"); "": the file names none */
    bool complete;   /* report.json's "complete" (sweeps: true) */
    size_t count;
    rep_cmp_entry *entries; /* malloc'ed; rep_cmp_side_free */
} rep_cmp_side;

/*
 * Parse report.json or sweep.json text (`file` names it in messages). FB_OK, or an error
 * with msg naming the file and the JSON path ("FILE: $.variants.naive.summary: ...").
 */
int rep_cmp_parse(const char *text, size_t len, const char *file, rep_cmp_side *side, char *msg,
                  size_t msglen);
void rep_cmp_side_free(rep_cmp_side *side);

/* A --tolerance: METRIC=X (absolute) or METRIC=X% (relative). */
typedef struct rep_cmp_tol {
    const char *metric;
    double abs, rel;
} rep_cmp_tol;

/* Parse "latency_p99=10%" or "success_rate=0.002" into *t (metric points into spec). */
int rep_cmp_tol_parse(const char *spec, rep_cmp_tol *t, char *msg, size_t msglen);

typedef enum rep_cmp_verdict {
    REP_CMP_SAME = 0, /* within noise */
    REP_CMP_BETTER,   /* beyond noise, the good way */
    REP_CMP_WORSE,    /* beyond noise, the bad way: a regression */
    REP_CMP_NA        /* a side has no value */
} rep_cmp_verdict;

typedef enum rep_cmp_rule { REP_CMP_RULE_CI = 0, REP_CMP_RULE_TOL } rep_cmp_rule;

/* One figure compared. */
typedef struct rep_cmp_fig {
    size_t entry_a, entry_b; /* indexes into the sides */
    size_t headline;         /* index into rep_cmp_headlines() */
    rep_cmp_value a, b;
    double change;     /* b - a */
    double change_rel; /* (b - a) / |a|; 0 when both are 0, NaN when only a is */
    rep_cmp_rule rule;
    double tol;    /* the tolerance applied, absolute (rule TOL) */
    bool tol_user; /* it came from a --tolerance */
    rep_cmp_verdict verdict;
    char rule_text[128]; /* "95% CIs overlap", "tolerance +-5% (default)" */
    bool unjudged_apart; /* n/a: single runs of other draws (rep_cmp.apart), beyond a default */
} rep_cmp_fig;

/*
 * Judge one figure (the noise rule above). `user`: the figure's --tolerance or NULL.
 * Pure and exposed for the unit tests.
 */
void rep_cmp_judge(const rep_cmp_headline *h, const rep_cmp_value *a, const rep_cmp_value *b,
                   const rep_cmp_tol *user, rep_cmp_fig *fig);

/* Why two single runs drew other numbers: two seeds, or one seed under two random-stream
 * versions (docs/rng.md); REP_CMP_SAME_DRAWS: they drew the same (and sweeps, whose intervals
 * measure the noise). */
typedef enum rep_cmp_apart {
    REP_CMP_SAME_DRAWS = 0,
    REP_CMP_TWO_SEEDS,
    REP_CMP_TWO_VERSIONS
} rep_cmp_apart;
/* "two seeds", "two stream versions"; "" for REP_CMP_SAME_DRAWS. */
const char *rep_cmp_apart_name(rep_cmp_apart apart);

typedef struct rep_cmp {
    rep_cmp_fig *figs; /* malloc'ed; rep_cmp_free */
    size_t count;
    size_t worse, better;
    size_t unjudged;       /* figures not judged (n/a): a run stopped early, or two seeds */
    size_t unjudged_seeds; /* of them: single runs of two seeds, beyond a default tolerance */
    rep_cmp_apart apart;   /* why the sides drew other numbers, if they did */
    size_t only_a, only_b; /* entries of one side only */
} rep_cmp;

/*
 * Compare every entry present in both sides (by name, in A's order). Two single runs of
 * different seeds (or of one seed under two random-stream versions, which draw other numbers
 * from it: judged the same way) differ by chance: success_rate, a share of the requests ended, is
 * beyond noise only outside the 95% binomial interval of the difference too (blast_radius as a
 * share of them); another figure that moved beyond its default tolerance between two seeds is not
 * judged (n/a, in `unjudged_seeds`): the tolerance is not the seeds' noise. A figure of an entry
 * that did not run to the end on either side (an interrupted run, a cap) is not judged: its verdict
 * is n/a, counted in `unjudged`, never same, better or worse (part of a run against a whole one).
 * FB_OK, or FB_EINVAL with msg when the sides cannot be compared (different kinds, scenarios, no
 * entry in common).
 */
int rep_compare(const rep_cmp_side *a, const rep_cmp_side *b, const rep_cmp_tol *tols, size_t ntols,
                rep_cmp *out, char *msg, size_t msglen);
void rep_cmp_free(rep_cmp *c);

/* A figure's value for people ("99.95%", "2.41s", "$9.1500", "2.65x", "785"). */
void rep_cmp_format(char *buf, size_t len, const rep_cmp_headline *h, double v);
/* A change for people: "+0.15 pp", "+12.0% (+290ms)", "-3 (-1.2%)". */
void rep_cmp_format_change(char *buf, size_t len, const rep_cmp_headline *h, const rep_cmp_fig *f);
const char *rep_cmp_verdict_name(rep_cmp_verdict v);

/* compare.json: the sides' paths as given, and every figure. */
void rep_cmp_write_json(FILE *f, const char *path_a, const char *path_b, const rep_cmp_side *a,
                        const rep_cmp_side *b, const rep_cmp *c);

#endif /* REP_COMPARE_H */
