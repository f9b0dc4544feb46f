/*
 * tune.c - one setting for several scenarios: the search over the knobs'
 * grid, its budget, and the answer (recommendation, per-scenario figures next
 * to the current settings', binding constraints, sensitivity). See tune.h and
 * docs/tune.md.
 */
#include "sweep/tune.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/rng.h"
#include "reports/gnuplot.h"
#include "sweep/sweepint.h"
#include "util/base64.h"
#include "util/json.h"
#include "util/xml.h"

/* fb_rng purpose of the sample's filler draws ("TUNE" in ASCII). */
#define TUNE_PURPOSE UINT64_C(0x54554E45)
#define KNOB_TEXT_MAX (SWEEP_KEY_MAX + SWEEP_TUNE_LEVELS_MAX * 40 + 8)

struct sweep_tune {
    size_t n;                              /* scenarios */
    sweep *grid[SWEEP_TUNE_SCENARIOS_MAX]; /* the knobs' full grid, per scenario */
    sweep *base[SWEEP_TUNE_SCENARIOS_MAX]; /* the current settings, per scenario */
    uint32_t dims;
    uint32_t nval[SWEEP_DIMS_MAX];
    uint64_t stride[SWEEP_DIMS_MAX];
    uint64_t points;
    uint32_t seeds;
    uint64_t seed;
    bool across_mean, exhaustive;
    bool weighted;                           /* a --weight was given */
    double weight[SWEEP_TUNE_SCENARIOS_MAX]; /* in the mean across scenarios */
    double wsum;
    char second[SWEEP_METRIC_MAX]; /* traded off against the objective; "" none */
    int second_sense;
    sweep *screen[SWEEP_TUNE_SCENARIOS_MAX]; /* the grid at the screen's duration; NULL none */
    char screen_text[32];
    double screen_frac;              /* sum over the scenarios of screen / duration */
    uint64_t screened, screen_count; /* candidates screened; the runs counted for them */
    char charts[1100];               /* where sweep_tune_write_charts wrote them; "" none */
    char charts_note[1024];          /* why there are none (no gnuplot...) */
    uint64_t budget, used, extra;
    bool budget_reached;
    uint32_t *have; /* per point: seeds 0..have-1 run in every scenario */
    uint32_t base_have;
    /* what the search did */
    uint32_t rungs;
    uint32_t f[SWEEP_TUNE_RUNGS_MAX];
    uint64_t keep[SWEEP_TUNE_RUNGS_MAX];
    uint64_t sampled, moves;
    int64_t rec; /* -1 before the search */
    /* --search nlopt and direct: what each phase did (calls of the objective, points run,
     * NLopt's code) */
    sweep_tune_method method;
    uint64_t global_calls, local_calls, local_points, local_starts;
    int global_result, local_result;
    bool local_better; /* NLopt's local phase found a better point */
};

/* ---- the plan ---- */

static uint32_t fidelities(uint32_t seeds, uint32_t f[SWEEP_TUNE_RUNGS_MAX]) {
    uint32_t tmp[SWEEP_TUNE_RUNGS_MAX], r = 0, s = seeds ? seeds : 1;
    tmp[r++] = s;
    while (s > 1 && r < SWEEP_TUNE_RUNGS_MAX) {
        s = (s + 2) / 3;
        tmp[r++] = s;
    }
    for (uint32_t i = 0; i < r; i++) f[i] = tmp[r - 1 - i];
    return r;
}

uint64_t sweep_tune_plan_cost(uint64_t n0, uint32_t seeds, size_t scenarios) {
    uint32_t f[SWEEP_TUNE_RUNGS_MAX];
    uint32_t r = fidelities(seeds, f);
    uint64_t cost = 0, keep = n0, prev = 0;
    for (uint32_t i = 0; i < r; i++) {
        cost += keep * (f[i] - prev);
        prev = f[i];
        keep = (keep + 2) / 3;
    }
    return cost * scenarios;
}

uint32_t sweep_tune_plan(uint64_t points, uint32_t seeds, size_t scenarios, uint64_t runs,
                         uint32_t f[SWEEP_TUNE_RUNGS_MAX], uint64_t keep[SWEEP_TUNE_RUNGS_MAX]) {
    if (points < 1 || scenarios < 1) return 0;
    uint64_t lo = points < 3 ? points : 3;
    if (sweep_tune_plan_cost(lo, seeds, scenarios) > runs) return 0;
    uint64_t hi = points; /* the cost grows with n0: the largest n0 that fits */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (sweep_tune_plan_cost(mid, seeds, scenarios) <= runs)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint32_t r = fidelities(seeds, f);
    keep[0] = lo;
    for (uint32_t i = 1; i < r; i++) keep[i] = (keep[i - 1] + 2) / 3;
    return r;
}

/* ---- knobs ---- */

int sweep_tune_knob_values(const char *arg, uint32_t levels, char *out, size_t outlen, char *msg,
                           size_t msglen) {
    sweep_dim dim;
    memset(&dim, 0, sizeof dim);
    int rc = sweep_parse_grid(arg, &dim, msg, msglen);
    if (rc != FB_OK) {
        /* sweep's messages say --grid; this is --knob */
        char m[512];
        snprintf(m, sizeof m, "%s", msg);
        char *g = strstr(m, "--grid");
        if (g == m)
            snprintf(msg, msglen, "--knob%s", m + 6);
        else
            snprintf(msg, msglen, "--knob %s: %s", arg, m);
        return rc;
    }
    if (levels < 2) levels = 2;
    size_t used = (size_t)snprintf(out, outlen, "%s=", dim.key);
    uint32_t count = dim.kind == SWEEP_LIST ? dim.value_count : levels;
    char prev[SWEEP_TUNE_LEVELS_MAX][40];
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count && used < outlen; i++) {
        if (dim.kind == SWEEP_LIST) {
            used +=
                (size_t)snprintf(out + used, outlen - used, "%s%s", i ? "," : "", dim.values[i]);
            continue;
        }
        double u = (double)i / (double)(levels - 1);
        if (u >= 1) u = nextafter(1.0, 0);
        char v[40];
        if (dim.type == SWEEP_INTEGER && !dim.log) /* evenly spaced, rounded */
            snprintf(v, sizeof v, "%.0f",
                     round(dim.lo + (dim.hi - dim.lo) * (double)i / (double)(levels - 1)));
        else if (dim.type == SWEEP_INTEGER && i == levels - 1)
            snprintf(v, sizeof v, "%.0f", dim.hi);
        else if (!dim.log && dim.type == SWEEP_NUMBER && i == levels - 1)
            snprintf(v, sizeof v, "%.6g", dim.hi);
        else
            sweep_dim_value(&dim, u, v, sizeof v);
        bool dup = false;
        for (uint32_t k = 0; k < kept; k++) dup = dup || strcmp(prev[k], v) == 0;
        if (dup) continue;
        snprintf(prev[kept++], sizeof prev[0], "%s", v);
        used += (size_t)snprintf(out + used, outlen - used, "%s%s", kept > 1 ? "," : "", v);
    }
    sweep_dim_free(&dim);
    if (used >= outlen) return sweep_fail(msg, msglen, FB_ECAP, "--knob %s: too many values", arg);
    if (kept == 1)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "--knob %s: the range holds a single value (%s): nothing to tune", arg,
                          prev[0]);
    return FB_OK;
}

/* ---- building ---- */

/* The current settings as a one-point sweep: its one "dimension" sets duration to itself. */
static int make_base(sweep_tune *t, size_t i, const sweep_args *ga, char *msg, size_t msglen) {
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(t->grid[i]->base->json, "duration");
    char *text = dur ? cJSON_PrintUnformatted(dur) : NULL;
    if (text == NULL)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: the scenario has no duration",
                          ga->scenario_file);
    char grid[128];
    snprintf(grid, sizeof grid, "duration=%s", text);
    cJSON_free(text);
    const char *grids[1] = {grid};
    sweep_args b = *ga;
    b.grids = grids;
    b.grid_count = 1;
    return sweep_create(&b, &t->base[i], msg, msglen);
}

static int check_args(const sweep_tune_args *a, char *msg, size_t msglen) {
    if (a->scenario_count == 0)
        return sweep_fail(msg, msglen, FB_EINVAL, "give at least one scenario");
    if (a->scenario_count > SWEEP_TUNE_SCENARIOS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "at most %d scenarios", SWEEP_TUNE_SCENARIOS_MAX);
    if (a->knob_count == 0)
        return sweep_fail(msg, msglen, FB_EINVAL, "give at least one --knob KEY=LO..HI|v1,v2,...");
    if (a->knob_count > SWEEP_DIMS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "at most %d --knob", SWEEP_DIMS_MAX);
    if (a->objective == NULL)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "give the objective: --minimize or --maximize METRIC");
    uint32_t levels = a->levels ? a->levels : 5;
    if (levels < 2 || levels > SWEEP_TUNE_LEVELS_MAX)
        return sweep_fail(msg, msglen, FB_EINVAL, "--levels: from 2 to %d", SWEEP_TUNE_LEVELS_MAX);
    return FB_OK;
}

/* Scenario i's sweep over the knobs (grids: their listed values) and its current settings. */
/* The sweep of scenario i over the knobs' grid, with these --set overrides. */
static sweep_args grid_args(const sweep_tune_args *a, size_t i, const char *const *sets,
                            size_t set_count, const char *const *grids) {
    sweep_args ga;
    memset(&ga, 0, sizeof ga);
    ga.scenario_file = a->scenario_files[i];
    ga.variant = a->variant;
    ga.sets = sets;
    ga.set_count = set_count;
    ga.grids = grids;
    ga.grid_count = a->knob_count;
    ga.seed = a->seed;
    ga.seeds = a->seeds;
    ga.objective = a->objective;
    ga.sense = a->sense;
    ga.subject_to = a->subject_to;
    ga.import = a->import;
    return ga;
}

static int create_scenario(sweep_tune *t, const sweep_tune_args *a, size_t i,
                           const char *const *grids, char *msg, size_t msglen) {
    sweep_args ga = grid_args(a, i, a->sets, a->set_count, grids);
    char m[1800];
    int rc = sweep_create(&ga, &t->grid[i], m, sizeof m);
    if (rc == FB_OK) {
        t->n = i + 1;
        rc = make_base(t, i, &ga, m, sizeof m);
    }
    if (rc == FB_OK) return FB_OK;
    char *g = strstr(m, "--grid"); /* the sweep's word for a knob */
    if (g) memcpy(g, "--knob", 6);
    if (strstr(m, a->scenario_files[i]))
        snprintf(msg, msglen, "%s", m);
    else
        snprintf(msg, msglen, "%s: %s", a->scenario_files[i], m);
    return rc;
}

/* Scenario i's grid at the screen's duration (--screen): its --set plus duration=D. */
static int create_screen(sweep_tune *t, const sweep_tune_args *a, size_t i,
                         const char *const *grids, char *msg, size_t msglen) {
    fb_time_us d;
    const sim_scenario *sc = t->grid[i]->base;
    if (scn_parse_duration(a->screen, &d) != FB_OK || d <= 0)
        return sweep_fail(msg, msglen, FB_EINVAL, "--screen needs a duration (e.g. 20s), got '%s'",
                          a->screen);
    if (d >= sc->duration_us)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "--screen %s: not shorter than %s's duration (%.0f s): a screen runs "
                          "each scenario for less time than it lasts",
                          a->screen, a->scenario_files[i], (double)sc->duration_us / 1e6);
    if (a->set_count >= SWEEP_SETS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "--screen: too many --set");
    const char *sets[SWEEP_SETS_MAX + 1];
    for (size_t k = 0; k < a->set_count; k++) sets[k] = a->sets[k];
    char dur[64];
    snprintf(dur, sizeof dur, "duration=%s", a->screen);
    sets[a->set_count] = dur;
    sweep_args ga = grid_args(a, i, sets, a->set_count + 1, grids);
    char m[1800];
    int rc = sweep_create(&ga, &t->screen[i], m, sizeof m);
    if (rc != FB_OK) return sweep_fail(msg, msglen, rc, "--screen %s: %s", a->screen, m);
    snprintf(t->screen_text, sizeof t->screen_text, "%s", a->screen);
    t->screen_frac += (double)d / (double)sc->duration_us;
    return FB_OK;
}

static int create_sweeps(sweep_tune *t, const sweep_tune_args *a, char *msg, size_t msglen) {
    char(*knobs)[KNOB_TEXT_MAX] = calloc(a->knob_count, sizeof *knobs);
    if (knobs == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    const char *grids[SWEEP_DIMS_MAX];
    int rc = FB_OK;
    for (size_t k = 0; k < a->knob_count && rc == FB_OK; k++) {
        rc = sweep_tune_knob_values(a->knobs[k], a->levels ? a->levels : 5, knobs[k],
                                    sizeof knobs[k], msg, msglen);
        grids[k] = knobs[k];
    }
    for (size_t i = 0; i < a->scenario_count && rc == FB_OK; i++) {
        rc = create_scenario(t, a, i, grids, msg, msglen);
        if (rc == FB_OK && a->screen) rc = create_screen(t, a, i, grids, msg, msglen);
    }
    free(knobs);
    return rc;
}

/* Scenario i answers to NAME: the file as given, its base name, or that without .json. */
static bool scenario_named(const char *file, const char *name, size_t len) {
    const char *slash = strrchr(file, '/'), *base = slash ? slash + 1 : file;
    size_t bl = strlen(base);
    if (strlen(file) == len && strncmp(file, name, len) == 0) return true;
    if (bl == len && strncmp(base, name, len) == 0) return true;
    return bl > 5 && strcmp(base + bl - 5, ".json") == 0 && bl - 5 == len &&
           strncmp(base, name, len) == 0;
}

/* "NAME=W" for every --weight: each names one scenario, once; W >= 0; not all 0. */
static int set_weights(sweep_tune *t, const sweep_tune_args *a, char *msg, size_t msglen) {
    bool given[SWEEP_TUNE_SCENARIOS_MAX] = {false};
    for (size_t i = 0; i < t->n; i++) t->weight[i] = 1;
    if (a->weight_count > 0 && !a->across_mean)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "--weight needs --across mean (the worst case has no weights)");
    for (size_t w = 0; w < a->weight_count; w++) {
        const char *arg = a->weights[w], *eq = strrchr(arg, '=');
        double v;
        if (eq == NULL || eq == arg || sweep_parse_number(eq + 1, &v) != FB_OK || v < 0)
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "--weight %s: give SCENARIO=W, W a number >= 0 (e.g. outage=3)", arg);
        size_t len = (size_t)(eq - arg), hit = SIZE_MAX;
        for (size_t i = 0; i < t->n; i++) {
            if (!scenario_named(t->grid[i]->file, arg, len)) continue;
            if (hit != SIZE_MAX)
                return sweep_fail(msg, msglen, FB_EINVAL,
                                  "--weight %s: '%.*s' names both %s and %s: give the path", arg,
                                  (int)len, arg, t->grid[hit]->file, t->grid[i]->file);
            hit = i;
        }
        if (hit == SIZE_MAX)
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "--weight %s: no scenario named '%.*s' (give a scenario's file or "
                              "its name without .json, e.g. %s)",
                              arg, (int)len, arg, t->grid[0]->file);
        if (given[hit])
            return sweep_fail(msg, msglen, FB_EINVAL, "--weight: %s is weighted twice",
                              t->grid[hit]->file);
        given[hit] = true;
        t->weight[hit] = v;
    }
    t->weighted = a->weight_count > 0;
    t->wsum = 0;
    for (size_t i = 0; i < t->n; i++) t->wsum += t->weight[i];
    if (!(t->wsum > 0)) return sweep_fail(msg, msglen, FB_EINVAL, "--weight: every weight is 0");
    return FB_OK;
}

/* The grid's shape from the first scenario's sweep, the budget, the plan checked. */
static int size_tune(sweep_tune *t, const sweep_tune_args *a, char *msg, size_t msglen) {
    const sweep *g0 = t->grid[0];
    t->dims = g0->dim_count;
    t->points = g0->points;
    t->seeds = g0->seeds;
    t->seed = g0->seed;
    for (uint32_t d = t->dims; d-- > 0;) {
        t->nval[d] = g0->dims[d].value_count;
        t->stride[d] = d + 1 == t->dims ? 1 : t->stride[d + 1] * t->nval[d + 1];
    }
    uint64_t full = sweep_tune_full_runs(t);
    /* the default: 10% of the full grid (rounded down: at most 10%), or the smallest search when
       that is more */
    uint64_t least = sweep_tune_plan_cost(t->points < 3 ? t->points : 3, t->seeds, t->n);
    uint64_t dflt = full / 10 > least ? full / 10 : least;
    t->budget = a->exhaustive ? full : a->budget ? a->budget : dflt;
    if (t->budget > full) t->budget = full;
    t->have = calloc(t->points, sizeof *t->have);
    if (t->have == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    uint32_t f[SWEEP_TUNE_RUNGS_MAX];
    uint64_t keep[SWEEP_TUNE_RUNGS_MAX];
    if (t->budget < full && sweep_tune_plan(t->points, t->seeds, t->n, t->budget, f, keep) == 0)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "--budget %" PRIu64 " runs is too small: the search needs at least "
                          "%" PRIu64 " (3 candidates, %u seeds at the end, %zu scenarios)",
                          t->budget, least, t->seeds, t->n);
    return FB_OK;
}

int sweep_tune_create(const sweep_tune_args *a, sweep_tune **out, char *msg, size_t msglen) {
    *out = NULL;
    int rc = check_args(a, msg, msglen);
    if (rc != FB_OK) return rc;
    sweep_tune *t = calloc(1, sizeof *t);
    if (t == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    t->rec = -1;
    t->across_mean = a->across_mean;
    t->exhaustive = a->exhaustive;
    t->method = a->search;
    rc = create_sweeps(t, a, msg, msglen);
    if (rc == FB_OK) rc = set_weights(t, a, msg, msglen);
    if (rc == FB_OK && a->second) {
        char m[512];
        if (sweep_check_metric(t->grid[0]->base, a->second, NULL, m, sizeof m) != FB_OK)
            rc = sweep_fail(msg, msglen, FB_EINVAL, "--%s %s: %s",
                            a->second_sense < 0 ? "maximize" : "minimize", a->second, m);
        else if (strcmp(a->second, a->objective) == 0)
            rc = sweep_fail(msg, msglen, FB_EINVAL,
                            "the second objective is the first (%s): give another metric",
                            a->second);
        snprintf(t->second, sizeof t->second, "%s", a->second);
        t->second_sense = a->second_sense < 0 ? -1 : 1;
    }
    if (rc == FB_OK) rc = size_tune(t, a, msg, msglen);
    if (rc != FB_OK) {
        sweep_tune_destroy(t);
        return rc;
    }
    *out = t;
    return FB_OK;
}

void sweep_tune_destroy(sweep_tune *t) {
    if (t == NULL) return;
    for (size_t i = 0; i < SWEEP_TUNE_SCENARIOS_MAX; i++) {
        sweep_destroy(t->grid[i]);
        sweep_destroy(t->base[i]);
        sweep_destroy(t->screen[i]);
    }
    free(t->have);
    free(t);
}

uint64_t sweep_tune_full_runs(const sweep_tune *t) {
    return t->points * t->seeds * t->n;
}
uint64_t sweep_tune_search_runs(const sweep_tune *t) {
    return t->used;
}

/* ---- evaluation ---- */

typedef struct eval {
    bool feasible;
    double violation; /* relative shortfalls, summed over scenarios and constraints */
    double across;    /* the objective across scenarios, minimised (sense applied) */
} eval;

/* Point p of sweep sw (its completed seeds). */
static void eval_one(const sweep *sw, uint64_t p, double *obj, double *viol) {
    sweep_stat st;
    sweep_point_stat(sw, p, sweep_metric_index(sw, sw->objective), &st);
    *obj = sw->sense * st.mean;
    *viol = 0;
    for (size_t c = 0; c < sw->con_count; c++) {
        const sweep_constraint *k = &sw->cons[c];
        sweep_point_stat(sw, p, sweep_metric_index(sw, k->metric), &st);
        if (isnan(st.mean)) {
            *viol = INFINITY;
            continue;
        }
        if (sweep_constraint_holds(k, st.mean)) continue;
        double scale = fabs(k->value) > 0 ? fabs(k->value) : 1;
        *viol += fabs(st.mean - k->value) / scale + 1e-12;
    }
}

static eval evaluate(const sweep_tune *t, sweep *const *sws, uint64_t p) {
    eval e = {true, 0, 0};
    double worst = -INFINITY, sum = 0;
    for (size_t i = 0; i < t->n; i++) {
        double o, v;
        eval_one(sws[i], p, &o, &v);
        e.violation += v;
        if (isnan(o)) o = INFINITY;
        if (t->weight[i] > 0) sum += t->weight[i] * o; /* a 0 weight: constraints only */
        if (o > worst) worst = o;
    }
    e.feasible = e.violation == 0;
    e.across = t->across_mean ? sum / t->wsum : worst;
    return e;
}

/* a before b? Feasible first, then the smaller violation, the smaller objective, the index. */
static bool better(eval a, uint64_t pa, eval b, uint64_t pb) {
    if (a.feasible != b.feasible) return a.feasible;
    if (!a.feasible && a.violation != b.violation) return a.violation < b.violation;
    if (a.across != b.across) return a.across < b.across;
    return pa < pb;
}

/* ---- running ---- */

static int check_failed(const sweep_tune *t, size_t i, const sweep *sw, char *msg, size_t msglen) {
    const char *first = NULL;
    uint64_t failed = sweep_failed(sw, &first);
    if (failed == 0) return FB_OK;
    (void)t;
    return sweep_fail(msg, msglen, FB_ECAP, "%s: %" PRIu64 " run%s failed; the first: %s", sw->file,
                      failed, failed == 1 ? "" : "s", first ? first : "?");
    (void)i;
}

/*
 * Runs, in one batch, those of tasks[0..n) of each of sws[0..nsw) that have
 * no result yet: all of them, unless a merge loaded the shards' results
 * (sweep_tune_load_shards).
 */
static int run_missing(sweep *const *sws, size_t nsw, const uint64_t *tasks, size_t n,
                       sweep_tune_runner run, void *ctx) {
    size_t cap = n * nsw > 0 ? n * nsw : 1;
    sweep_tune_run *todo = malloc(cap * sizeof *todo);
    if (todo == NULL) return FB_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < nsw; i++)
        for (size_t j = 0; j < n; j++)
            if (!sweep_has_result(sws[i], tasks[j])) todo[m++] = (sweep_tune_run){sws[i], tasks[j]};
    int rc = m ? run(ctx, todo, m) : FB_OK;
    free(todo);
    return rc;
}

/* After a batch: the first scenario (in order) whose runs failed, as an FB_ECAP message. */
static int check_batch(const sweep_tune *t, sweep *const *sws, char *msg, size_t msglen) {
    int rc = FB_OK;
    for (size_t i = 0; i < t->n && rc == FB_OK; i++) rc = check_failed(t, i, sws[i], msg, msglen);
    return rc;
}

/*
 * Seeds have[p]..f-1 of points pts[0..np) in every scenario. counted: against
 * the budget (FB_ECAP-free refusal: *refused set, nothing run, when it would
 * go over); else the report's runs.
 */
static int run_points(sweep_tune *t, const uint64_t *pts, size_t np, uint32_t f, bool counted,
                      bool *refused, sweep_tune_runner run, void *ctx, char *msg, size_t msglen) {
    uint64_t per = 0;
    for (size_t j = 0; j < np; j++)
        if (t->have[pts[j]] < f) per += f - t->have[pts[j]];
    if (refused) *refused = false;
    if (per == 0) return FB_OK;
    uint64_t cost = per * t->n;
    if (counted && t->used + cost > t->budget) {
        t->budget_reached = true;
        if (refused) *refused = true;
        return FB_OK;
    }
    uint64_t *tasks = malloc(per * sizeof *tasks);
    if (tasks == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    size_t nt = 0;
    for (size_t j = 0; j < np; j++)
        for (uint32_t s = t->have[pts[j]]; s < f; s++) tasks[nt++] = pts[j] * t->seeds + s;
    int rc = run_missing(t->grid, t->n, tasks, nt, run, ctx);
    if (rc == FB_OK)
        rc = check_batch(t, t->grid, msg, msglen);
    else if (msg[0] == '\0')
        sweep_fail(msg, msglen, rc, "the runs stopped");
    free(tasks);
    if (rc != FB_OK) return rc;
    for (size_t j = 0; j < np; j++)
        if (t->have[pts[j]] < f) t->have[pts[j]] = f;
    if (counted)
        t->used += cost;
    else
        t->extra += cost;
    return FB_OK;
}

static uint32_t value_index(const sweep_tune *t, uint64_t p, uint32_t d) {
    return (uint32_t)((p / t->stride[d]) % t->nval[d]);
}

static uint64_t with_value(const sweep_tune *t, uint64_t p, uint32_t d, uint32_t v) {
    return p - (uint64_t)value_index(t, p, d) * t->stride[d] + (uint64_t)v * t->stride[d];
}

/* The best point among those run on every seed; -1 when none. */
static int64_t best_full(const sweep_tune *t) {
    int64_t best = -1;
    eval be = {false, 0, 0};
    for (uint64_t p = 0; p < t->points; p++) {
        if (t->have[p] < t->seeds) continue;
        eval e = evaluate(t, t->grid, p);
        if (best < 0 || better(e, p, be, (uint64_t)best)) {
            best = (int64_t)p;
            be = e;
        }
    }
    return best;
}

typedef struct ranked {
    uint64_t p;
    eval e;
} ranked;

static void sort_ranked(ranked *r, size_t n) {
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable, n small */
        ranked x = r[i];
        size_t j = i;
        while (j > 0 && better(x.e, x.p, r[j - 1].e, r[j - 1].p)) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = x;
    }
}

/* The starting candidates: a Latin hypercube over the value indices, duplicates redrawn. */
static int sample(sweep_tune *t, uint64_t n0, uint64_t *pts) {
    double *u = malloc(n0 * t->dims * sizeof *u);
    bool *taken = calloc(t->points, sizeof *taken);
    if (u == NULL || taken == NULL) {
        free(u);
        free(taken);
        return FB_ENOMEM;
    }
    sweep_lhs((uint32_t)n0, t->dims, t->seed, u);
    fb_rng r;
    fb_rng_derive(&r, t->seed, 0, TUNE_PURPOSE);
    for (uint64_t i = 0; i < n0; i++) {
        uint64_t p = 0;
        for (uint32_t d = 0; d < t->dims; d++) {
            uint32_t v = (uint32_t)(u[i * t->dims + d] * t->nval[d]);
            if (v >= t->nval[d]) v = t->nval[d] - 1;
            p += v * t->stride[d];
        }
        if (taken[p]) { /* the next free point after a random one */
            p = fb_rng_below(&r, t->points);
            while (taken[p]) p = (p + 1) % t->points;
        }
        taken[p] = true;
        pts[i] = p;
    }
    free(u);
    free(taken);
    return FB_OK;
}

/* The runs counted for screening n0 candidates: n0 times the screen's fraction of a run, summed. */
static uint64_t screen_cost(const sweep_tune *t, uint64_t n0) {
    return (uint64_t)ceil((double)n0 * t->screen_frac - 1e-9);
}

/* The cost of screening n0 candidates, then successive halving on the best third. */
static uint64_t screened_cost(const sweep_tune *t, uint64_t n0) {
    return screen_cost(t, n0) + sweep_tune_plan_cost((n0 + 2) / 3, t->seeds, t->n);
}

/*
 * --screen: the largest sample (at least 3) whose screen and halving fit the
 * share; screen it on the first seed at the short duration, keep the best
 * third in pts[0..). Returns the candidates kept (0: no screen fits, nothing run).
 */
static uint64_t screen(sweep_tune *t, uint64_t share, uint64_t **pts, sweep_tune_runner run,
                       void *ctx, char *msg, size_t msglen, int *rc) {
    uint64_t lo = t->points < 3 ? t->points : 3, hi = t->points;
    if (screened_cost(t, lo) > share) return 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (screened_cost(t, mid) <= share)
            lo = mid;
        else
            hi = mid - 1;
    }
    *pts = malloc(lo * sizeof **pts);
    ranked *r = malloc(lo * sizeof *r);
    uint64_t *tasks = malloc(lo * sizeof *tasks);
    *rc = *pts && r && tasks ? sample(t, lo, *pts) : FB_ENOMEM;
    for (uint64_t j = 0; j < lo && *rc == FB_OK; j++) tasks[j] = (*pts)[j] * t->seeds;
    if (*rc == FB_OK) *rc = run_missing(t->screen, t->n, tasks, lo, run, ctx);
    if (*rc == FB_OK) *rc = check_batch(t, t->screen, msg, msglen);
    if (*rc == FB_OK) {
        for (uint64_t j = 0; j < lo; j++)
            r[j] = (ranked){(*pts)[j], evaluate(t, t->screen, (*pts)[j])};
        sort_ranked(r, lo);
        for (uint64_t j = 0; j < lo; j++) (*pts)[j] = r[j].p;
        t->screened = t->sampled = lo;
        t->screen_count = screen_cost(t, lo);
        t->used += t->screen_count;
    }
    free(r);
    free(tasks);
    return *rc == FB_OK ? (lo + 2) / 3 : 0;
}

/* The rungs of the plan (t->f, t->keep) from candidates pts[0..keep[0]), best first after each. */
static int run_rungs(sweep_tune *t, uint64_t *pts, sweep_tune_runner run, void *ctx, char *msg,
                     size_t msglen) {
    ranked *r = malloc(t->keep[0] * sizeof *r);
    int rc = r ? FB_OK : FB_ENOMEM;
    for (uint32_t k = 0; k < t->rungs && rc == FB_OK; k++) {
        uint64_t n = t->keep[k];
        bool refused = false;
        rc = run_points(t, pts, n, t->f[k], true, &refused, run, ctx, msg, msglen);
        if (rc != FB_OK || refused) break;
        for (uint64_t j = 0; j < n; j++) r[j] = (ranked){pts[j], evaluate(t, t->grid, pts[j])};
        sort_ranked(r, n);
        for (uint64_t j = 0; j < n; j++) pts[j] = r[j].p;
    }
    free(r);
    return rc;
}

static int search_halving(sweep_tune *t, sweep_tune_runner run, void *ctx, char *msg,
                          size_t msglen) {
    uint64_t share = t->budget * 2 / 3;
    if (t->screen[0]) {
        uint64_t *pts = NULL;
        int rc = FB_OK;
        uint64_t n1 = screen(t, share, &pts, run, ctx, msg, msglen, &rc);
        if (rc == FB_OK && n1 > 0) {
            t->rungs = fidelities(t->seeds, t->f);
            t->keep[0] = n1;
            for (uint32_t k = 1; k < t->rungs; k++) t->keep[k] = (t->keep[k - 1] + 2) / 3;
            rc = run_rungs(t, pts, run, ctx, msg, msglen);
        }
        free(pts);
        if (rc != FB_OK || n1 > 0) {
            if (rc == FB_ENOMEM) sweep_fail(msg, msglen, rc, "out of memory");
            return rc;
        }
    }
    t->rungs = sweep_tune_plan(t->points, t->seeds, t->n, share, t->f, t->keep);
    if (t->rungs == 0)
        t->rungs = sweep_tune_plan(t->points, t->seeds, t->n, t->budget, t->f, t->keep);
    if (t->rungs == 0) return sweep_fail(msg, msglen, FB_EINVAL, "the budget is too small");
    uint64_t n = t->keep[0];
    t->sampled = n;
    uint64_t *pts = malloc(n * sizeof *pts);
    int rc = pts ? sample(t, n, pts) : FB_ENOMEM;
    if (rc == FB_OK) rc = run_rungs(t, pts, run, ctx, msg, msglen);
    if (rc == FB_ENOMEM) sweep_fail(msg, msglen, rc, "out of memory");
    free(pts);
    return rc;
}

/* One knob at a time around the best, on every seed, while it improves and the budget lasts. */
static int search_local(sweep_tune *t, sweep_tune_runner run, void *ctx, char *msg, size_t msglen) {
    int64_t inc = best_full(t);
    if (inc < 0) return FB_OK;
    bool moved = true;
    while (moved) {
        moved = false;
        for (uint32_t d = 0; d < t->dims; d++) {
            uint64_t pts[SWEEP_VALUES_MAX];
            size_t np = 0;
            for (uint32_t v = 0; v < t->nval[d]; v++)
                pts[np++] = with_value(t, (uint64_t)inc, d, v);
            bool refused = false;
            int rc = run_points(t, pts, np, t->seeds, true, &refused, run, ctx, msg, msglen);
            if (rc != FB_OK) return rc;
            if (refused) return FB_OK;
            int64_t best = inc;
            eval be = evaluate(t, t->grid, (uint64_t)inc);
            for (size_t j = 0; j < np; j++) {
                eval e = evaluate(t, t->grid, pts[j]);
                if (better(e, pts[j], be, (uint64_t)best)) {
                    best = (int64_t)pts[j];
                    be = e;
                }
            }
            if (best != inc) {
                inc = best;
                moved = true;
                t->moves++;
            }
        }
    }
    return FB_OK;
}

/* ---- the search through NLopt (--search nlopt) ---- */

/*
 * NLopt minimises over the box of the knobs' value indices, each coordinate
 * from -0.5 to levels - 0.5, and a point x stands for the grid point nearest
 * it (each coordinate rounded): every decision is still about points of the
 * grid, run on the same seeds (common random numbers), and a point NLopt
 * proposes twice runs once. Infeasible points score above every feasible
 * one, by their total violation (a penalty: the global algorithm takes
 * bounds only).
 */
#define NL_PENALTY 1e12
/* The local phase's starts, at most (each a COBYLA run from a point on every seed). */
#define NL_STARTS_MAX 32

static uint64_t nearest_point(const sweep_tune *t, const double *x) {
    uint64_t p = 0;
    for (uint32_t d = 0; d < t->dims; d++) {
        double v = floor(x[d] + 0.5);
        if (!(v >= 0)) v = 0; /* NaN too */
        if (v > (double)(t->nval[d] - 1)) v = (double)(t->nval[d] - 1);
        p += (uint64_t)v * t->stride[d];
    }
    return p;
}

static double penalised(eval e) {
    if (e.feasible && isfinite(e.across) && fabs(e.across) < NL_PENALTY) return e.across;
    double v = isfinite(e.violation) && e.violation < 1e6 ? e.violation : 1e6;
    return NL_PENALTY * (1 + v);
}

typedef struct nl_phase {
    sweep_tune *t;
    nlopt_opt opt;
    bool screen;   /* candidates run on t->screen (seed 0), else on t->grid */
    uint32_t f;    /* the grid's seeds a candidate runs on */
    uint64_t want; /* distinct candidates to run (0: until the budget) */
    uint64_t *pts; /* the distinct candidates run, in order */
    uint64_t np, calls, max_calls;
    int rc; /* the first error of a run */
    sweep_tune_runner run;
    void *ctx;
    char *msg;
    size_t msglen;
} nl_phase;

static double nl_stop(nl_phase *ph) {
    nlopt_force_stop(ph->opt);
    return 2 * NL_PENALTY * 1e6;
}

/* NLopt's objective: the candidate nearest x, run first when it has not been. */
static double nl_objective(unsigned n, const double *x, double *grad, void *data) {
    (void)n;
    (void)grad;
    nl_phase *ph = data;
    sweep_tune *t = ph->t;
    if (ph->rc != FB_OK || ph->calls >= ph->max_calls) return nl_stop(ph);
    ph->calls++;
    uint64_t p = nearest_point(t, x);
    bool fresh = ph->screen ? !sweep_has_result(t->screen[0], p * t->seeds) : t->have[p] < ph->f;
    if (fresh && ph->want && ph->np >= ph->want) return nl_stop(ph);
    if (fresh && ph->screen) {
        uint64_t task = p * t->seeds;
        ph->rc = run_missing(t->screen, t->n, &task, 1, ph->run, ph->ctx);
        if (ph->rc == FB_OK) ph->rc = check_batch(t, t->screen, ph->msg, ph->msglen);
    } else if (fresh) {
        bool refused = false;
        ph->rc = run_points(t, &p, 1, ph->f, true, &refused, ph->run, ph->ctx, ph->msg, ph->msglen);
        if (ph->rc == FB_OK && refused) return nl_stop(ph);
    }
    if (ph->rc != FB_OK) return nl_stop(ph);
    if (fresh) ph->pts[ph->np++] = p;
    if (ph->want && ph->np >= ph->want) nlopt_force_stop(ph->opt); /* the phase has them all */
    return penalised(evaluate(t, ph->screen ? t->screen : t->grid, p));
}

/* One NLopt run from x0 (NULL: the box's centre); the code NLopt returned, or the run's error. */
static int nl_run(nl_phase *ph, nlopt_algorithm alg, const double *x0, int *result) {
    sweep_tune *t = ph->t;
    double lb[SWEEP_DIMS_MAX], ub[SWEEP_DIMS_MAX], x[SWEEP_DIMS_MAX], fx = 0;
    for (uint32_t d = 0; d < t->dims; d++) {
        lb[d] = -0.5;
        ub[d] = (double)t->nval[d] - 0.5;
        x[d] = x0 ? x0[d] : (lb[d] + ub[d]) / 2;
    }
    nlopt_srand(t->seed); /* DIRECT-L and COBYLA draw nothing; so that any algorithm repeats */
    ph->opt = nlopt_create(alg, t->dims);
    if (ph->opt == NULL) return FB_ENOMEM;
    nlopt_result r = nlopt_set_lower_bounds(ph->opt, lb);
    if (r > 0) r = nlopt_set_upper_bounds(ph->opt, ub);
    if (r > 0) r = nlopt_set_min_objective(ph->opt, nl_objective, ph);
    /* the local phase: first steps of one level; done when a step is below half a level */
    if (r > 0 && x0) r = nlopt_set_initial_step1(ph->opt, 1.0);
    if (r > 0 && x0) r = nlopt_set_xtol_abs1(ph->opt, 0.25);
    uint64_t left = ph->max_calls - ph->calls + 1; /* this run's calls (max_calls counts all) */
    if (r > 0) r = nlopt_set_maxeval(ph->opt, left < INT32_MAX ? (int)left : INT32_MAX);
    if (r > 0) r = nlopt_optimize(ph->opt, x, &fx);
    nlopt_destroy(ph->opt);
    ph->opt = NULL;
    *result = (int)r;
    if (ph->rc != FB_OK) return ph->rc;
    if (r == NLOPT_OUT_OF_MEMORY) return FB_ENOMEM;
    if (r == NLOPT_INVALID_ARGS)
        return sweep_fail(ph->msg, ph->msglen, FB_EINVAL, "NLopt (%s): invalid arguments",
                          nlopt_algorithm_name(alg));
    return FB_OK; /* a forced stop (the budget), round-off or a tolerance: the phase is over */
}

/*
 * The global phase: NLopt's GN_DIRECT_L over the whole box on the first
 * fidelity (one seed, or the screen's short runs), as many distinct
 * candidates as successive halving would sample; the rungs then promote the
 * best third to more seeds, as they do a sample.
 */
static int nl_global(sweep_tune *t, sweep_tune_runner run, void *ctx, char *msg, size_t msglen) {
    uint64_t share = t->budget * 2 / 3, want = 0;
    bool scr = t->screen[0] != NULL;
    if (scr) { /* the largest screen whose halving from its best third fits */
        uint64_t lo = t->points < 3 ? t->points : 3, hi = t->points;
        if (screened_cost(t, lo) > share) scr = false;
        while (scr && lo < hi) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            if (screened_cost(t, mid) <= share)
                lo = mid;
            else
                hi = mid - 1;
        }
        want = lo;
    }
    if (!scr) {
        t->rungs = sweep_tune_plan(t->points, t->seeds, t->n, share, t->f, t->keep);
        if (t->rungs == 0)
            t->rungs = sweep_tune_plan(t->points, t->seeds, t->n, t->budget, t->f, t->keep);
        if (t->rungs == 0) return sweep_fail(msg, msglen, FB_EINVAL, "the budget is too small");
        want = t->keep[0];
    }
    nl_phase ph = {t, NULL, scr, 1, want, NULL, 0, 0, 0, FB_OK, run, ctx, msg, msglen};
    /* DIRECT-L proposes the same grid point again once its boxes are smaller than a level */
    ph.max_calls = 50 * want + 1000;
    ph.pts = malloc(want * sizeof *ph.pts);
    ranked *r = malloc(want * sizeof *r);
    int rc = ph.pts && r ? nl_run(&ph, NLOPT_GN_DIRECT_L, NULL, &t->global_result) : FB_ENOMEM;
    t->global_calls = ph.calls;
    t->sampled = ph.np;
    if (rc == FB_OK && scr) {
        t->screened = ph.np;
        t->screen_count = screen_cost(t, ph.np);
        t->used += t->screen_count;
    }
    if (rc == FB_OK && ph.np > 0) { /* best first, on what they ran */
        for (uint64_t j = 0; j < ph.np; j++)
            r[j] = (ranked){ph.pts[j], evaluate(t, scr ? t->screen : t->grid, ph.pts[j])};
        sort_ranked(r, ph.np);
        for (uint64_t j = 0; j < ph.np; j++) ph.pts[j] = r[j].p;
        t->rungs = fidelities(t->seeds, t->f);
        t->keep[0] = scr ? (ph.np + 2) / 3 : ph.np;
        for (uint32_t k = 1; k < t->rungs; k++) t->keep[k] = (t->keep[k - 1] + 2) / 3;
        rc = run_rungs(t, ph.pts, run, ctx, msg, msglen);
    }
    free(r);
    free(ph.pts);
    if (rc == FB_ENOMEM) sweep_fail(msg, msglen, rc, "out of memory");
    return rc;
}

/*
 * The local phase: NLopt's LN_COBYLA from the best point on every seed, its
 * first steps one level along each knob, each candidate on every seed; when
 * it converges with budget left, again from the next best point on every
 * seed not yet a start (a multi-start), until the budget or the starts run
 * out (at most NL_STARTS_MAX).
 */
static int nl_local(sweep_tune *t, sweep_tune_runner run, void *ctx, char *msg, size_t msglen) {
    int64_t inc = best_full(t);
    if (inc < 0) return FB_OK;
    uint64_t cap = t->points; /* each point runs once: more calls only repeat */
    bool *started = calloc(t->points, sizeof *started);
    nl_phase ph = {t, NULL, false, t->seeds, 0, NULL, 0, 0, 0, FB_OK, run, ctx, msg, msglen};
    ph.pts = malloc(cap * sizeof *ph.pts);
    int rc = ph.pts && started ? FB_OK : FB_ENOMEM;
    while (rc == FB_OK && !t->budget_reached && t->local_starts < NL_STARTS_MAX) {
        int64_t from = -1; /* the best point on every seed not yet a start */
        eval fe = {false, 0, 0};
        for (uint64_t p = 0; p < t->points; p++) {
            if (t->have[p] < t->seeds || started[p]) continue;
            eval e = evaluate(t, t->grid, p);
            if (from < 0 || better(e, p, fe, (uint64_t)from)) {
                from = (int64_t)p;
                fe = e;
            }
        }
        if (from < 0) break;
        started[from] = true;
        double x0[SWEEP_DIMS_MAX];
        for (uint32_t d = 0; d < t->dims; d++) x0[d] = (double)value_index(t, (uint64_t)from, d);
        ph.max_calls = ph.calls + 20 * cap + 1000;
        rc = nl_run(&ph, NLOPT_LN_COBYLA, x0, &t->local_result);
        t->local_starts++;
    }
    t->local_calls = ph.calls;
    t->local_points = ph.np;
    t->local_better = best_full(t) != inc;
    if (t->method == SWEEP_TUNE_DIRECT) t->moves = t->local_better;
    free(ph.pts);
    free(started);
    if (rc == FB_ENOMEM) sweep_fail(msg, msglen, rc, "out of memory");
    return rc;
}

int sweep_tune_search(sweep_tune *t, sweep_tune_runner run, void *ctx, char *msg, size_t msglen) {
    msg[0] = '\0';
    int rc = FB_OK;
    if (t->budget >= sweep_tune_full_runs(t)) {
        uint64_t *pts = malloc(t->points * sizeof *pts);
        if (pts == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        for (uint64_t p = 0; p < t->points; p++) pts[p] = p;
        t->sampled = t->points;
        t->rungs = 1;
        t->f[0] = t->seeds;
        t->keep[0] = t->points;
        rc = run_points(t, pts, t->points, t->seeds, true, NULL, run, ctx, msg, msglen);
        free(pts);
    } else if (t->method == SWEEP_TUNE_DIRECT) {
        rc = nl_global(t, run, ctx, msg, msglen);
        if (rc == FB_OK) rc = nl_local(t, run, ctx, msg, msglen);
    } else if (t->method == SWEEP_TUNE_NLOPT) {
        rc = search_halving(t, run, ctx, msg, msglen);
        if (rc == FB_OK) rc = search_local(t, run, ctx, msg, msglen);
        if (rc == FB_OK) { /* the rest of the budget, also when a knob's batch no longer fits */
            bool reached = t->budget_reached;
            t->budget_reached = false;
            rc = nl_local(t, run, ctx, msg, msglen);
            t->budget_reached = t->budget_reached || reached;
        }
    } else {
        rc = search_halving(t, run, ctx, msg, msglen);
        if (rc == FB_OK) rc = search_local(t, run, ctx, msg, msglen);
    }
    if (rc != FB_OK) return rc;
    t->rec = best_full(t);
    if (t->rec < 0) return sweep_fail(msg, msglen, FB_EINVAL, "no candidate ran on every seed");
    /* the report's runs: the current settings, every one-knob neighbour of the recommendation */
    uint64_t base_tasks[SWEEP_SEEDS_MAX];
    for (uint32_t s = 0; s < t->seeds; s++) base_tasks[s] = s;
    rc = run_missing(t->base, t->n, base_tasks, t->seeds, run, ctx);
    if (rc == FB_OK) rc = check_batch(t, t->base, msg, msglen);
    if (rc != FB_OK) return rc;
    t->extra += (uint64_t)t->seeds * t->n;
    for (uint32_t d = 0; d < t->dims && rc == FB_OK; d++) {
        uint64_t pts[SWEEP_VALUES_MAX];
        for (uint32_t v = 0; v < t->nval[d]; v++) pts[v] = with_value(t, (uint64_t)t->rec, d, v);
        rc = run_points(t, pts, t->nval[d], t->seeds, false, NULL, run, ctx, msg, msglen);
    }
    return rc;
}

/* ---- shards ---- */

/* DIR/tune.part-K-of-N: shard K's results, one sweep part file per scenario and kind. */
static void shard_dir(char *buf, size_t len, const char *dir, uint32_t k, uint32_t n) {
    snprintf(buf, len, "%s/tune.part-%u-of-%u", dir, k, n);
}

static void shard_file(char *buf, size_t len, size_t i, bool base) {
    snprintf(buf, len, "%02zu.%s.json", i, base ? "base" : "grid");
}

int sweep_tune_run_shard(sweep_tune *t, uint32_t k, uint32_t n, sweep_tune_runner run, void *ctx,
                         char *msg, size_t msglen) {
    msg[0] = '\0';
    if (!t->exhaustive || k < 1 || k > n)
        return sweep_fail(msg, msglen, FB_EINVAL, "--shard K/N needs --exhaustive and 1 <= K <= N");
    uint64_t per = t->points * t->seeds;
    uint64_t *tasks = malloc((size_t)(per / n + 1) * sizeof *tasks);
    if (tasks == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    size_t nt = 0, nb = 0;
    for (uint64_t task = (uint64_t)(k - 1); task < per; task += n) tasks[nt++] = task;
    uint64_t base[SWEEP_SEEDS_MAX];
    for (uint32_t s = k - 1; s < t->seeds; s += n) base[nb++] = s;
    int rc = run_missing(t->grid, t->n, tasks, nt, run, ctx);
    if (rc == FB_OK) rc = check_batch(t, t->grid, msg, msglen);
    if (rc == FB_OK) rc = run_missing(t->base, t->n, base, nb, run, ctx);
    if (rc == FB_OK) rc = check_batch(t, t->base, msg, msglen);
    if (rc != FB_OK && msg[0] == '\0') sweep_fail(msg, msglen, rc, "the runs stopped");
    free(tasks);
    t->used = (uint64_t)(nt + nb) * t->n;
    return rc;
}

int sweep_tune_save_shard(const sweep_tune *t, const char *dir, uint32_t k, uint32_t n, char *msg,
                          size_t msglen) {
    char pdir[1100], name[32];
    shard_dir(pdir, sizeof pdir, dir, k, n);
    if (mkdir(pdir, 0777) != 0 && errno != EEXIST)
        return sweep_fail(msg, msglen, FB_EIO, "cannot create %s: %s", pdir, strerror(errno));
    int rc = FB_OK;
    for (size_t i = 0; i < t->n && rc == FB_OK; i++) {
        /* written as interrupted sweeps: sweep_resume loads them back into the same sweeps */
        shard_file(name, sizeof name, i, false);
        rc = sweep_save_part(t->grid[i], pdir, name, k, n, true, msg, msglen);
        shard_file(name, sizeof name, i, true);
        if (rc == FB_OK) rc = sweep_save_part(t->base[i], pdir, name, k, n, true, msg, msglen);
    }
    return rc;
}

/* sweep_resume's advice is a sweep's: a shard of a tune is run again, not resumed. */
static void shard_advice(char *msg, size_t msglen) {
    static const char *const from[2] = {"; run it without --resume to start again",
                                        ": run the sweep without --resume"};
    for (int j = 0; j < 2; j++) {
        char *at = strstr(msg, from[j]);
        if (at == NULL) continue;
        size_t used = (size_t)(at - msg);
        snprintf(at, msglen - used, "%s",
                 j == 0 ? ": run the shards again with the same options"
                        : ": run the shards again with this fusebox");
    }
}

int sweep_tune_load_shards(sweep_tune *t, const char *dir, uint32_t n, char *msg, size_t msglen) {
    if (!t->exhaustive || n < 1)
        return sweep_fail(msg, msglen, FB_EINVAL, "--merge N needs --exhaustive and N >= 1");
    int rc = FB_OK;
    for (uint32_t k = 1; k <= n && rc == FB_OK; k++) {
        char pdir[1100], name[32], path[1200];
        shard_dir(pdir, sizeof pdir, dir, k, n);
        for (size_t i = 0; i < t->n * 2 && rc == FB_OK; i++) {
            shard_file(name, sizeof name, i / 2, i % 2 == 1);
            snprintf(path, sizeof path, "%s/%s", pdir, name);
            uint64_t loaded;
            rc = sweep_resume(i % 2 ? t->base[i / 2] : t->grid[i / 2], path, k, n, &loaded, msg,
                              msglen);
        }
    }
    if (rc != FB_OK) shard_advice(msg, msglen);
    char *sw = rc != FB_OK ? strstr(msg, "from a different sweep") : NULL;
    if (sw) { /* "sweep" becomes "tune" */
        char *w = sw + strlen("from a different ");
        memcpy(w, "tune", 4);
        memmove(w + 4, w + 5, strlen(w + 5) + 1);
    }
    return rc;
}

/* ---- rounds: the budgeted search through a batch engine ---- */

#define ROUND_FORMAT 1
#define ROUND_TEXT_MAX ((size_t)1 << 30)

static const char *const kind_names[3] = {"grid", "base", "screen"};

static sweep *kind_sweep(const sweep_tune *t, size_t i, int kind) {
    return kind == 0 ? t->grid[i] : kind == 1 ? t->base[i] : t->screen[i];
}

/* Which scenario and kind sw is in t: FB_OK, or FB_EINVAL when it is none of t's. */
static int locate(const sweep_tune *t, const sweep *sw, size_t *i, int *kind) {
    for (size_t s = 0; s < t->n; s++)
        for (int k = 0; k < 3; k++)
            if (sw != NULL && kind_sweep(t, s, k) == sw) {
                *i = s;
                *kind = k;
                return FB_OK;
            }
    return FB_EINVAL;
}

static void round_file(char *buf, size_t len, const char *dir) {
    snprintf(buf, len, "%s/tune.round.json", dir);
}

/* DIR/tune.round-R/part-K-of-N: shard K's results of round R, a sweep part file per sweep. */
static void round_part_dir(char *buf, size_t len, const char *dir, uint32_t r, uint32_t k,
                           uint32_t n) {
    snprintf(buf, len, "%s/tune.round-%u/part-%u-of-%u", dir, r, k, n);
}

static void round_part_file(char *buf, size_t len, size_t i, int kind) {
    snprintf(buf, len, "%02zu.%s.json", i, kind_names[kind]);
}

int sweep_tune_write_round(const sweep_tune *t, const char *dir, const sweep_tune_round *r,
                           char *msg, size_t msglen) {
    char path[1100], tmp[1110];
    round_file(path, sizeof path, dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", tmp, strerror(errno));
    fprintf(f,
            "{\n  \"fusebox_tune_round\": %d,\n  \"command_fnv1a64\": \"%016" PRIx64 "\",\n"
            "  \"round\": %u,\n  \"shards\": %u,\n  \"runs\": [",
            ROUND_FORMAT, r->command, r->round, r->shards);
    int rc = FB_OK;
    for (size_t j = 0; j < r->n && rc == FB_OK; j++) {
        size_t i = 0;
        int kind = 0;
        rc = locate(t, r->runs[j].sw, &i, &kind);
        fprintf(f, "%s\n    [%zu, \"%s\", %" PRIu64 "]", j ? "," : "", i, kind_names[kind],
                r->runs[j].task);
    }
    fprintf(f, "\n  ]\n}\n");
    bool bad = ferror(f) != 0;
    bad = fclose(f) != 0 || bad;
    if (rc != FB_OK) {
        remove(tmp);
        return sweep_fail(msg, msglen, rc, "a run of the round is of no sweep of this tune");
    }
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    return FB_OK;
}

void sweep_tune_round_free(sweep_tune_round *r) {
    free(r->runs);
    r->runs = NULL;
    r->n = 0;
}

/* One [SCENARIO, KIND, TASK] of runs[j]: FB_OK, or FB_EINVAL naming it. */
static int read_run(const sweep_tune *t, const cJSON *e, size_t j, const char *path,
                    sweep_tune_run *out, char *msg, size_t msglen) {
    const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1),
                *c = cJSON_GetArrayItem(e, 2);
    int kind = -1;
    for (int k = 0; k < 3 && cJSON_IsString(b); k++)
        if (strcmp(b->valuestring, kind_names[k]) == 0) kind = k;
    sweep *sw = NULL;
    if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 3 && cJSON_IsNumber(a) && kind >= 0 &&
        a->valuedouble >= 0 && a->valuedouble < (double)t->n &&
        a->valuedouble == floor(a->valuedouble))
        sw = kind_sweep(t, (size_t)a->valuedouble, kind);
    if (sw == NULL || !cJSON_IsNumber(c) || c->valuedouble < 0 ||
        c->valuedouble != floor(c->valuedouble) || c->valuedouble >= (double)sw->tasks)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "%s: runs[%zu]: not a run of this tune ([scenario, \"grid\"|\"base\"|"
                          "\"screen\", task], each in range)",
                          path, j);
    *out = (sweep_tune_run){sw, (uint64_t)c->valuedouble};
    return FB_OK;
}

int sweep_tune_read_round(const sweep_tune *t, const char *dir, sweep_tune_round *r, char *msg,
                          size_t msglen) {
    memset(r, 0, sizeof *r);
    char path[1100];
    round_file(path, sizeof path, dir);
    FILE *probe = fopen(path, "rb");
    if (probe == NULL && errno == ENOENT)
        return sweep_fail(msg, msglen, FB_ENOTFOUND, "%s: no round planned", path);
    if (probe) fclose(probe);
    char *text = NULL;
    size_t len = 0;
    int rc = sweep_read_file(path, ROUND_TEXT_MAX, &text, &len, msg, msglen);
    if (rc != FB_OK) return rc;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "fusebox_tune_round");
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(root, "command_fnv1a64");
    const cJSON *rn = cJSON_GetObjectItemCaseSensitive(root, "round");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, "shards");
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
    char *end = NULL;
    if (!cJSON_IsNumber(fmt) || fmt->valueint != ROUND_FORMAT || !cJSON_IsString(cmd) ||
        !cJSON_IsNumber(rn) || rn->valuedouble < 1 || rn->valuedouble > 1e6 ||
        !cJSON_IsNumber(sh) || sh->valuedouble < 1 || sh->valuedouble > 100000 ||
        !cJSON_IsArray(runs)) {
        cJSON_Delete(root);
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: not a tune round file (format %d)", path,
                          ROUND_FORMAT);
    }
    r->command = strtoull(cmd->valuestring, &end, 16);
    r->round = (uint32_t)rn->valuedouble;
    r->shards = (uint32_t)sh->valuedouble;
    size_t n = (size_t)cJSON_GetArraySize(runs);
    r->runs = malloc((n ? n : 1) * sizeof *r->runs);
    if (r->runs == NULL) rc = sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    size_t j = 0;
    for (const cJSON *e = runs->child; e && rc == FB_OK; e = e->next, j++)
        rc = read_run(t, e, j, path, &r->runs[j], msg, msglen);
    r->n = j;
    cJSON_Delete(root);
    if (rc != FB_OK) sweep_tune_round_free(r);
    return rc;
}

int sweep_tune_save_round_part(const sweep_tune *t, const char *dir, uint32_t round, uint32_t k,
                               uint32_t n, char *msg, size_t msglen) {
    char rdir[1100], pdir[1200], name[32];
    snprintf(rdir, sizeof rdir, "%s/tune.round-%u", dir, round);
    round_part_dir(pdir, sizeof pdir, dir, round, k, n);
    if ((mkdir(rdir, 0777) != 0 && errno != EEXIST) || (mkdir(pdir, 0777) != 0 && errno != EEXIST))
        return sweep_fail(msg, msglen, FB_EIO, "cannot create %s: %s", pdir, strerror(errno));
    int rc = FB_OK;
    for (size_t i = 0; i < t->n && rc == FB_OK; i++)
        for (int kind = 0; kind < 3 && rc == FB_OK; kind++) {
            if (kind_sweep(t, i, kind) == NULL) continue;
            round_part_file(name, sizeof name, i, kind);
            /* as an interrupted unsharded sweep's: sweep_resume loads it into the merge's */
            rc = sweep_save_part(kind_sweep(t, i, kind), pdir, name, 1, 1, true, msg, msglen);
        }
    return rc;
}

int sweep_tune_load_rounds(sweep_tune *t, const char *dir, const sweep_tune_round *r, char *msg,
                           size_t msglen) {
    int rc = FB_OK;
    for (uint32_t round = 1; round <= r->round && rc == FB_OK; round++)
        for (uint32_t k = 1; k <= r->shards && rc == FB_OK; k++) {
            char pdir[1200], name[32], path[1300];
            round_part_dir(pdir, sizeof pdir, dir, round, k, r->shards);
            for (size_t i = 0; i < t->n && rc == FB_OK; i++)
                for (int kind = 0; kind < 3 && rc == FB_OK; kind++) {
                    if (kind_sweep(t, i, kind) == NULL) continue;
                    round_part_file(name, sizeof name, i, kind);
                    snprintf(path, sizeof path, "%s/%s", pdir, name);
                    uint64_t loaded;
                    rc = sweep_resume(kind_sweep(t, i, kind), path, 1, 1, &loaded, msg, msglen);
                }
        }
    if (rc != FB_OK) {
        shard_advice(msg, msglen);
        char *sw = strstr(msg, "from a different sweep");
        if (sw) { /* "sweep" becomes "tune" */
            char *w = sw + strlen("from a different ");
            memcpy(w, "tune", 4);
            memmove(w + 4, w + 5, strlen(w + 5) + 1);
        }
        return rc;
    }
    for (size_t j = 0; j < r->n; j++)
        if (!sweep_has_result(r->runs[j].sw, r->runs[j].task))
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "round %u: run %zu of %zu (%s, task %" PRIu64
                              ") has no result: shard %zu of %u did not finish; run it again",
                              r->round, j + 1, r->n, r->runs[j].sw->file, r->runs[j].task,
                              j % r->shards + 1, r->shards);
    return FB_OK;
}

size_t sweep_tune_copy_results(const sweep_tune *from, const sweep_tune *to, sweep_tune_run *runs,
                               size_t n) {
    size_t left = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = 0;
        int kind = 0;
        const sweep *src = NULL;
        if (locate(to, runs[j].sw, &i, &kind) == FB_OK) src = kind_sweep(from, i, kind);
        uint64_t task = runs[j].task;
        if (src == NULL || !sweep_has_result(src, task)) {
            runs[left++] = runs[j];
            continue;
        }
        sweep_set_result(runs[j].sw, task, src->state[task] == 1 ? FB_OK : FB_ESTATE,
                         &src->values[task * src->metric_count], src->errors[task]);
    }
    return left;
}

bool sweep_tune_infeasible(const sweep_tune *t) {
    return t->rec < 0 || !evaluate(t, t->grid, (uint64_t)t->rec).feasible;
}

/* ---- the answer ---- */

/*
 * Scenario i's part of the noise of the (weighted) mean across scenarios:
 * (w_i / W * h_i)^2, h_i its 95% CI half-width. The scenarios' runs are
 * independent and every scenario has the same seeds, so the half-width of
 * the mean is the root of the sum of these (the same t factor throughout).
 */
static double noise_term(const sweep_tune *t, size_t i, double h) {
    double f = t->weight[i] / t->wsum * h;
    return f * f;
}

/*
 * The seeds' noise of the objective across scenarios at point p: the 95% CI
 * half-width of the scenarios' means, the largest over the scenarios for the
 * worst case; that of the (weighted) mean for the mean (noise_term).
 */
static double noise(const sweep_tune *t, sweep *const *sws, uint64_t p) {
    double hw = 0, sq = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->across_mean && t->weight[i] == 0) continue; /* not in the mean */
        sweep_stat st;
        sweep_point_stat(sws[i], p, sweep_metric_index(sws[i], sws[i]->objective), &st);
        if (isnan(st.ci_high)) return NAN; /* one seed: no interval, the noise is unknown */
        double h = (st.ci_high - st.ci_low) / 2;
        if (h > hw) hw = h;
        sq += noise_term(t, i, h);
    }
    return t->across_mean ? sqrt(sq) : hw;
}

/*
 * The seeds' noise of the difference between points q and p: per scenario,
 * the 95% CI half-width of the per-seed differences of the objective (the
 * same seeds: common random numbers); the largest over the scenarios for
 * the worst case, combined as in noise() for the mean.
 */
static double paired_noise(const sweep_tune *t, uint64_t p, uint64_t q) {
    double hw = 0, sq = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->across_mean && t->weight[i] == 0) continue; /* not in the mean */
        const sweep *sw = t->grid[i];
        int m = sweep_metric_index(sw, sw->objective);
        sweep_stat st;
        sweep_paired_diff(sw, p, q, m, &st);
        if (isnan(st.ci_high)) return NAN; /* fewer than two seeds in common: unknown */
        double h = (st.ci_high - st.ci_low) / 2;
        if (h > hw) hw = h;
        sq += noise_term(t, i, h);
    }
    return t->across_mean ? sqrt(sq) : hw;
}

/*
 * Knob d around point p: the objective's range over its values (the others
 * at p), whether every move stays within the paired seeds' noise, and the
 * feasible run of values around p's.
 */
typedef struct knob_sens {
    double range;
    bool no_effect;
    uint32_t feasible, flo, fhi;
    bool unmeasured; /* a move's paired noise is unknown (one seed): no_effect means no change */
    double noise;    /* the largest paired noise of its moves (no_effect: all are within theirs) */
    uint32_t clear;  /* with an effect: the value whose move stands out most from its noise, */
    double clear_move, clear_noise; /* that move (its value's objective less p's), its noise */
} knob_sens;

static knob_sens sensitivity(const sweep_tune *t, uint64_t p, uint32_t d) {
    knob_sens k = {0, true, 0, value_index(t, p, d), value_index(t, p, d), false, 0, 0, 0, 0};
    double lo = INFINITY, hi = -INFINITY, at = evaluate(t, t->grid, p).across, ratio = -1;
    for (uint32_t v = 0; v < t->nval[d]; v++) {
        uint64_t q = with_value(t, p, d, v);
        eval e = evaluate(t, t->grid, q);
        if (e.across < lo) lo = e.across;
        if (e.across > hi) hi = e.across;
        k.feasible += e.feasible;
        double pn = q == p ? 0 : paired_noise(t, p, q);
        k.unmeasured |= isnan(pn);
        if (q != p && pn > k.noise) k.noise = pn;
        if (isnan(pn) ? e.across != at : fabs(e.across - at) > pn) {
            k.no_effect = false;
            double r = pn > 0 ? fabs(e.across - at) / pn : INFINITY;
            if (!isnan(pn) && r > ratio) {
                ratio = r;
                k.clear = v;
                k.clear_move = e.across - at;
                k.clear_noise = pn;
            }
        }
    }
    k.range = hi - lo;
    while (k.flo > 0 && evaluate(t, t->grid, with_value(t, p, d, k.flo - 1)).feasible) k.flo--;
    while (k.fhi + 1 < t->nval[d] && evaluate(t, t->grid, with_value(t, p, d, k.fhi + 1)).feasible)
        k.fhi++;
    return k;
}

/*
 * The value of knob d (others at p) that beats p beyond the seeds' noise: feasible where
 * p is not, or both feasible and the objective lower by more than the paired noise; the
 * best such, -1 when none.
 */
static int64_t better_value(const sweep_tune *t, uint64_t p, uint32_t d) {
    int64_t best = -1;
    uint64_t bp = p;
    eval pe = evaluate(t, t->grid, p), be = pe;
    for (uint32_t v = 0; v < t->nval[d]; v++) {
        uint64_t q = with_value(t, p, d, v);
        if (q == p || t->have[q] < t->seeds) continue;
        eval e = evaluate(t, t->grid, q);
        bool beats = e.feasible && (!pe.feasible || e.across < pe.across - paired_noise(t, p, q));
        if (beats && (best < 0 || better(e, q, be, bp))) {
            best = v;
            bp = q;
            be = e;
        }
    }
    return best;
}

/* The constraint with the smallest relative slack at point p of sw; -1 without constraints. */
static int binding(const sweep *sw, uint64_t p, double *slack) {
    int best = -1;
    *slack = INFINITY;
    for (size_t c = 0; c < sw->con_count; c++) {
        const sweep_constraint *k = &sw->cons[c];
        double v = sweep_point_mean(sw, p, k->metric);
        double scale = fabs(k->value) > 0 ? fabs(k->value) : 1;
        double s = (k->op == SWEEP_GE || k->op == SWEEP_GT ? v - k->value : k->value - v) / scale;
        if (best < 0 || s < *slack) {
            best = (int)c;
            *slack = s;
        }
    }
    return best;
}

/* The first constraint that fails at point p of sws, as "TEXT in FILE"; false when none. */
static bool breaks(const sweep_tune *t, sweep *const *sws, uint64_t p, char *buf, size_t len) {
    for (size_t i = 0; i < t->n; i++) {
        const sweep *sw = sws[i];
        for (size_t c = 0; c < sw->con_count; c++) {
            double v = sweep_point_mean(sw, p, sw->cons[c].metric);
            if (!isnan(v) && sweep_constraint_holds(&sw->cons[c], v)) continue;
            snprintf(buf, len, "%s in %s", sw->cons[c].text, sw->file);
            return true;
        }
    }
    return false;
}

static void human(char *buf, size_t len, const sweep *sw, const char *metric, double v) {
    int m = sweep_metric_index(sw, metric);
    sweep_format_human(buf, len, v, m >= 0 ? sw->units[m] : SIM_UNIT_RATIO);
}

static void knob_value(const sweep_tune *t, uint64_t p, uint32_t d, char *buf, size_t len) {
    sweep_point_value(t->grid[0], p, d, buf, len);
}

static const char *across_word(const sweep_tune *t) {
    return t->weighted ? "weighted mean" : t->across_mean ? "mean" : "worst case";
}

/* A scenario's name in the answer: its file's base name without .json. */
static void short_name(const char *file, char *buf, size_t len) {
    const char *slash = strrchr(file, '/'), *base = slash ? slash + 1 : file;
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".json") == 0) bl -= 5;
    snprintf(buf, len, "%.*s", (int)bl, base);
}

/* The weights, when given: "  weights: a 3, b 1 (a scenario counts for its weight / 4)". */
static void answer_weights(FILE *f, const sweep_tune *t) {
    if (!t->weighted) return;
    fputs("  weights:", f);
    for (size_t i = 0; i < t->n; i++) {
        char name[256];
        short_name(t->grid[i]->file, name, sizeof name);
        fprintf(f, "%s %s %g", i ? "," : "", name, t->weight[i]);
    }
    fprintf(f, " (each scenario counts for its weight / %g; a weight of 0: constraints only)\n",
            t->wsum);
}

/* What the search did. */
static void answer_search(FILE *f, const sweep_tune *t) {
    const sweep *g0 = t->grid[0];
    uint64_t full = sweep_tune_full_runs(t);
    fprintf(f, "objective: %s %s across %zu scenarios (%s)%s%s\n",
            g0->sense < 0 ? "maximise" : "minimise", g0->objective, t->n, across_word(t),
            g0->con_count ? " subject to " : "", g0->con_count ? g0->subject_to : "");
    answer_weights(f, t);
    fprintf(f,
            "search: %" PRIu64 " of the full grid's %" PRIu64 " runs (%" PRIu64
            " points x %u seeds x %zu scenarios), budget %" PRIu64 "%s\n",
            t->used, full, t->points, t->seeds, t->n, t->budget,
            t->budget_reached ? " (reached: the search stopped there)" : "");
    if (t->budget < full) {
        if (t->method == SWEEP_TUNE_DIRECT)
            fprintf(f, "  NLopt GN_DIRECT_L: %" PRIu64 " points (%" PRIu64 " calls)", t->sampled,
                    t->global_calls);
        else
            fprintf(f, "  successive halving: %" PRIu64 " sampled points", t->sampled);
        if (t->screened)
            fprintf(f, " screened at %s on 1 seed (%" PRIu64 " short runs, counted as %" PRIu64 ")",
                    t->screen_text, t->screened * t->n, t->screen_count);
        for (uint32_t k = 0; k < t->rungs; k++)
            fprintf(f, ", %" PRIu64 " on %u seed%s", t->keep[k], t->f[k], t->f[k] == 1 ? "" : "s");
        if (t->method != SWEEP_TUNE_DIRECT)
            fprintf(f, "; then %" PRIu64 " move%s one knob at a time", t->moves,
                    t->moves == 1 ? "" : "s");
        if (t->method == SWEEP_TUNE_HALVING)
            fprintf(f, "\n");
        else if (t->local_starts == 0)
            fprintf(f, "; then NLopt LN_COBYLA: no budget left\n");
        else
            fprintf(f,
                    "; then NLopt LN_COBYLA from the best on every seed (%" PRIu64
                    " start%s): %" PRIu64 " more point%s (%" PRIu64 " calls), %s\n",
                    t->local_starts, t->local_starts == 1 ? "" : "s", t->local_points,
                    t->local_points == 1 ? "" : "s", t->local_calls,
                    t->local_better ? "a better one found" : "none better");
    }
    fprintf(f, "  plus %" PRIu64 " runs for this report (current settings, sensitivity)\n",
            t->extra);
}

/* The recommendation, its objective and noise, the current settings'. */
static void answer_recommended(FILE *f, const sweep_tune *t, uint64_t p) {
    const sweep *g0 = t->grid[0];
    eval e = evaluate(t, t->grid, p), c = evaluate(t, t->base, 0);
    double hw = noise(t, t->grid, p);
    char a[64], b[64], h[64];
    human(a, sizeof a, g0, g0->objective, g0->sense * e.across);
    human(b, sizeof b, g0, g0->objective, g0->sense * c.across);
    if (isnan(hw))
        snprintf(h, sizeof h, "not measured: %s", t->seeds < 2 ? "one seed" : "no interval");
    else
        human(h, sizeof h, g0, g0->objective, hw);
    fprintf(f, "\nrecommended:%s\n",
            e.feasible ? ""
                       : " (NO point satisfies every constraint "
                         "in every scenario: the closest)");
    for (uint32_t d = 0; d < t->dims; d++) {
        char v[SWEEP_VALUE_MAX];
        knob_value(t, p, d, v, sizeof v);
        fprintf(f, "  %s=%s\n", g0->dims[d].key, v);
    }
    char brk[SWEEP_KEY_MAX + 300], why[SWEEP_KEY_MAX + 320] = "";
    if (!c.feasible && breaks(t, t->base, 0, brk, sizeof brk))
        snprintf(why, sizeof why, " (fails %s)", brk);
    fprintf(f, "  %s %s: %s (seeds' noise %s%s); current settings: %s%s\n", across_word(t),
            g0->objective, a, isnan(hw) ? "" : "+/- ", h, b, why);
}

/* Scenario i's part of the weighted mean at point p: w_i m_i / sum_j w_j m_j (NaN when 0). */
static double weight_share(const sweep_tune *t, size_t i, uint64_t p) {
    double all = 0, mine = 0;
    for (size_t j = 0; j < t->n; j++) {
        if (t->weight[j] == 0) continue;
        const sweep *sw = t->grid[j];
        double v = t->weight[j] * sweep_point_mean(sw, p, sw->objective);
        all += v;
        if (j == i) mine = v;
    }
    return all != 0 ? mine / all : NAN;
}

/* Per scenario: recommended | current, the binding constraint. */
static void answer_scenarios(FILE *f, const sweep_tune *t, uint64_t p) {
    char a[64], b[64];
    fprintf(f, "\nper scenario (recommended | current):\n");
    for (size_t i = 0; i < t->n; i++) {
        const sweep *sw = t->grid[i], *bs = t->base[i];
        human(a, sizeof a, sw, sw->objective, sweep_point_mean(sw, p, sw->objective));
        human(b, sizeof b, sw, sw->objective, sweep_point_mean(bs, 0, sw->objective));
        fprintf(f, "  %s", sw->file);
        if (t->weighted && t->weight[i] == 0)
            fputs(" (weight 0: constraints only)", f);
        else if (t->weighted)
            fprintf(f, " (weight %g: %.0f%% of the weighted mean)", t->weight[i],
                    100 * weight_share(t, i, p));
        fprintf(f, ": %s %s | %s", sw->objective, a, b);
        for (size_t k = 0; k < sw->con_count; k++) {
            const sweep_constraint *q = &sw->cons[k];
            if (strcmp(q->metric, sw->objective) == 0) continue;
            human(a, sizeof a, sw, q->metric, sweep_point_mean(sw, p, q->metric));
            human(b, sizeof b, sw, q->metric, sweep_point_mean(bs, 0, q->metric));
            fprintf(f, "; %s %s | %s", q->metric, a, b);
        }
        double slack;
        int k = binding(sw, p, &slack);
        if (k >= 0)
            fprintf(f, "\n    binds: %s (slack %.2f%%%s)", sw->cons[k].text, 100 * slack,
                    slack < 0 ? ", VIOLATED" : "");
        fputc('\n', f);
    }
}

/* After a knob with no effect: the library's rule that says so, per scenario where one does. */
static void knob_rule(FILE *f, const sweep_tune *t, uint32_t d, bool no_effect) {
    char why[1024];
    for (size_t i = 0; no_effect && i < t->n; i++)
        if (sweep_dim_rule(t->grid[i], d, why, sizeof why))
            fprintf(f, "\n    why (%s): %s", t->grid[i]->file, why);
}

/* Knob d's line: its effect on the objective, where the constraints hold, what fails next. */
static void answer_knob(FILE *f, const sweep_tune *t, uint64_t p, uint32_t d, bool feasible) {
    const sweep *g0 = t->grid[0];
    char a[64], n[64];
    knob_sens k = sensitivity(t, p, d);
    uint32_t ok = k.feasible, flo = k.flo, fhi = k.fhi;
    human(a, sizeof a, g0, g0->objective, k.range);
    fprintf(f, "  %-28s ", g0->dims[d].key);
    const char *seeds = t->seeds < 2 ? " on one seed" : "";
    if (k.unmeasured && k.no_effect) /* one seed: a change is seen, not judged against noise */
        fprintf(f, "no change of the %s%s (range %s; the seeds' noise not measured)", g0->objective,
                seeds, a);
    else if (k.unmeasured)
        fprintf(f, "changes the %s by %s%s (the seeds' noise not measured)", across_word(t), a,
                seeds);
    else if (k.no_effect && k.range == 0)
        fprintf(f, "no effect on the %s (the same figure at every value)", g0->objective);
    else if (k.no_effect) {
        human(n, sizeof n, g0, g0->objective, k.noise);
        fprintf(f, "no effect on the %s (range %s, within the seeds' noise, up to +/- %s)",
                g0->objective, a, n);
    } else {
        char v[SWEEP_VALUE_MAX], m[64];
        knob_value(t, with_value(t, p, d, k.clear), d, v, sizeof v);
        human(m, sizeof m, g0, g0->objective, fabs(k.clear_move));
        human(n, sizeof n, g0, g0->objective, k.clear_noise);
        fprintf(f, "moves the %s by %s (at %s: %s%s, beyond the seeds' noise of +/- %s)",
                across_word(t), a, v, g0->sense * k.clear_move < 0 ? "-" : "+", m, n);
    }
    if (g0->con_count && feasible) {
        if (flo == 0 && fhi + 1 == t->nval[d]) {
            fprintf(f, "; the constraints hold over all its values");
        } else {
            char vlo[SWEEP_VALUE_MAX], vhi[SWEEP_VALUE_MAX];
            knob_value(t, with_value(t, p, d, flo), d, vlo, sizeof vlo);
            knob_value(t, with_value(t, p, d, fhi), d, vhi, sizeof vhi);
            fprintf(f, "; the constraints hold from %s to %s (%u of %u values)", vlo, vhi, ok,
                    t->nval[d]);
            uint32_t out = fhi + 1 < t->nval[d] ? fhi + 1 : flo - 1;
            char vout[SWEEP_VALUE_MAX], c2[SWEEP_KEY_MAX + 300];
            knob_value(t, with_value(t, p, d, out), d, vout, sizeof vout);
            if (breaks(t, t->grid, with_value(t, p, d, out), c2, sizeof c2))
                fprintf(f, "; at %s %s fails", vout, c2);
        }
    }
    int64_t bv = better_value(t, p, d);
    if (bv >= 0) /* only when the budget ran out before the search met this neighbour */
        fprintf(f,
                "; BETTER at %s (seen by this report's runs, after the budget ran out: a "
                "larger --budget searches on)",
                g0->dims[d].values[bv]);
    knob_rule(f, t, d, k.no_effect);
    fputc('\n', f);
}

/* ---- the trade-off: a second figure (or the constraints' slack), the Pareto front ---- */

/* A metric across the scenarios at point p, minimised (sense applied): the worst or the mean. */
static double across_metric(const sweep_tune *t, sweep *const *sws, uint64_t p, const char *metric,
                            int sense) {
    double worst = -INFINITY, sum = 0;
    for (size_t i = 0; i < t->n; i++) {
        double v = sense * sweep_point_mean(sws[i], p, metric);
        if (isnan(v)) v = INFINITY;
        if (t->weight[i] > 0) sum += t->weight[i] * v;
        if (v > worst) worst = v;
    }
    return t->across_mean ? sum / t->wsum : worst;
}

/* The tightest constraint's relative slack at p, the smallest over the scenarios. */
static double min_slack(const sweep_tune *t, sweep *const *sws, uint64_t p) {
    double lo = INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        double s;
        if (binding(sws[i], p, &s) >= 0 && !(s >= lo)) lo = s; /* a NaN slack wins */
    }
    return lo;
}

/* What the objective is traded against: a second figure, else the constraints' slack, else none. */
typedef enum tradeoff_kind { TRADE_NONE, TRADE_SLACK, TRADE_SECOND } tradeoff_kind;

static tradeoff_kind trade_kind(const sweep_tune *t) {
    return t->second[0] ? TRADE_SECOND : t->grid[0]->con_count ? TRADE_SLACK : TRADE_NONE;
}

/* The trade-off's second coordinate at p, minimised. */
static double trade_y(const sweep_tune *t, sweep *const *sws, uint64_t p) {
    if (trade_kind(t) == TRADE_SECOND) return across_metric(t, sws, p, t->second, t->second_sense);
    return -min_slack(t, sws, p);
}

/*
 * The points run on every seed (pts[0..n), ascending) and which are on the
 * Pareto front of (objective, trade_y), both minimised. With a second figure
 * only feasible points can be on the front; against the slack, every point
 * (the slack is what makes it feasible). Caller frees *pts and *front.
 */
static int trade_front(const sweep_tune *t, uint64_t **pts, bool **front, size_t *n,
                       size_t *nfront) {
    size_t cnt = 0;
    for (uint64_t p = 0; p < t->points; p++) cnt += t->have[p] == t->seeds;
    *pts = malloc((cnt ? cnt : 1) * sizeof **pts);
    *front = calloc(cnt ? cnt : 1, sizeof **front);
    double *xy = malloc((cnt ? cnt : 1) * 2 * sizeof *xy);
    if (*pts == NULL || *front == NULL || xy == NULL) {
        free(*pts);
        free(*front);
        free(xy);
        return FB_ENOMEM;
    }
    *n = 0;
    for (uint64_t p = 0; p < t->points; p++) {
        if (t->have[p] != t->seeds) continue;
        eval e = evaluate(t, t->grid, p);
        bool in = trade_kind(t) == TRADE_SLACK || e.feasible;
        xy[2 * *n] = in ? e.across : NAN;
        xy[2 * *n + 1] = in ? trade_y(t, t->grid, p) : NAN;
        if (!isfinite(xy[2 * *n]) || !isfinite(xy[2 * *n + 1])) xy[2 * *n] = NAN;
        (*pts)[(*n)++] = p;
    }
    sweep_pareto(xy, *n, 2, *front);
    free(xy);
    *nfront = 0;
    for (size_t j = 0; j < *n; j++) *nfront += (*front)[j];
    return FB_OK;
}

#define TRADE_LINES_MAX 12

/* The front, in the answer, when there is a second figure: one line a point, by the objective. */
static void answer_tradeoff(FILE *f, const sweep_tune *t, uint64_t rec) {
    if (trade_kind(t) != TRADE_SECOND) return;
    const sweep *g0 = t->grid[0];
    uint64_t *pts;
    bool *front;
    size_t n, nfront;
    if (trade_front(t, &pts, &front, &n, &nfront) != FB_OK) return;
    size_t feasible = 0;
    for (size_t j = 0; j < n; j++) feasible += evaluate(t, t->grid, pts[j]).feasible;
    fprintf(f,
            "\ntrade-off: %s against %s (%s of each), over the %zu %ssettings run on "
            "every seed: %zu on the Pareto front (the search optimised %s)\n",
            g0->objective, t->second, across_word(t), feasible, g0->con_count ? "feasible " : "",
            nfront, g0->objective);
    /* by the objective: the points are ascending, the front's x rises as its y falls */
    uint64_t order[TRADE_LINES_MAX];
    size_t shown = 0;
    for (size_t j = 0; j < n && shown < TRADE_LINES_MAX; j++)
        if (front[j]) order[shown++] = pts[j];
    for (size_t a = 1; a < shown; a++) { /* insertion sort by the objective, then the point */
        uint64_t x = order[a];
        double xv = evaluate(t, t->grid, x).across;
        size_t b = a;
        while (b > 0) {
            double pv = evaluate(t, t->grid, order[b - 1]).across;
            if (pv < xv || (pv == xv && order[b - 1] < x)) break;
            order[b] = order[b - 1];
            b--;
        }
        order[b] = x;
    }
    for (size_t j = 0; j < shown; j++) {
        char a[64], b[64], label[SWEEP_DIMS_MAX * (SWEEP_KEY_MAX + SWEEP_VALUE_MAX)];
        eval e = evaluate(t, t->grid, order[j]);
        human(a, sizeof a, g0, g0->objective, g0->sense * e.across);
        human(b, sizeof b, g0, t->second, t->second_sense * trade_y(t, t->grid, order[j]));
        sweep_point_label(g0, order[j], label, sizeof label);
        fprintf(f, "  %s %s, %s %s: %s%s\n", g0->objective, a, t->second, b, label,
                order[j] == rec ? "  <- recommended" : "");
    }
    if (nfront > shown) fprintf(f, "  ... (%zu more in tune.json)\n", nfront - shown);
    eval c = evaluate(t, t->base, 0);
    char a[64], b[64];
    human(a, sizeof a, g0, g0->objective, g0->sense * c.across);
    human(b, sizeof b, g0, t->second, t->second_sense * trade_y(t, t->base, 0));
    fprintf(f, "  current settings: %s %s, %s %s%s\n", g0->objective, a, t->second, b,
            c.feasible ? "" : " (infeasible)");
    free(pts);
    free(front);
}

/* ---- charts ---- */

/* A value in the chart's unit: durations in seconds. */
static double chart_value(const sweep *sw, const char *metric, double v) {
    int m = sweep_metric_index(sw, metric);
    return m >= 0 && sw->units[m] == SIM_UNIT_US ? v / 1e6 : v;
}

static const char *chart_unit(const sweep *sw, const char *metric) {
    int m = sweep_metric_index(sw, metric);
    sim_unit u = m >= 0 ? sw->units[m] : SIM_UNIT_RATIO;
    return u == SIM_UNIT_US ? " (s)" : u == SIM_UNIT_USD ? " (USD)" : "";
}

/* Chart coordinates of point p (or the current settings: sws = base, p = 0). */
static void trade_xy(const sweep_tune *t, sweep *const *sws, uint64_t p, double *x, double *y) {
    const sweep *g0 = t->grid[0];
    *x = chart_value(g0, g0->objective, g0->sense * evaluate(t, sws, p).across);
    if (trade_kind(t) == TRADE_SECOND)
        *y = chart_value(g0, t->second, t->second_sense * trade_y(t, sws, p));
    else
        *y = 100 * min_slack(t, sws, p);
}

static void gp_label(FILE *gp, const char *axis, const char *text) {
    fprintf(gp, "set %slabel ", axis);
    rep_gnuplot_quote(gp, text);
    fputc('\n', gp);
}

/*
 * tradeoff: every setting run on every seed, the objective across the
 * scenarios against the second figure (or the tightest constraint's slack),
 * the front joined, the recommendation and the current settings marked. The
 * data file's blocks: 0 the points, 1 the front by the objective, 2 the
 * recommendation, 3 the current settings.
 */
static void trade_data(const sweep_tune *t, FILE *dat, const uint64_t *pts, const bool *front,
                       size_t n, size_t nfront, size_t *nfeas, size_t *ninf) {
    *nfeas = *ninf = 0;
    for (size_t j = 0; j < n; j++) {
        double x, y;
        bool ok = evaluate(t, t->grid, pts[j]).feasible;
        *nfeas += ok;
        *ninf += !ok;
        trade_xy(t, t->grid, pts[j], &x, &y);
        fprintf(dat, "%.9g %.9g %d\n", x, y, ok);
    }
    fputs("\n\n", dat);
    /* the front by the objective: sorted by x (few points: selection) */
    bool *done = calloc(n ? n : 1, sizeof *done);
    for (size_t k = 0; done && k < nfront; k++) {
        size_t pick = SIZE_MAX;
        double px = 0, x, y;
        for (size_t j = 0; j < n; j++) {
            if (!front[j] || done[j]) continue;
            trade_xy(t, t->grid, pts[j], &x, &y);
            if (pick == SIZE_MAX || x < px) {
                pick = j;
                px = x;
            }
        }
        done[pick] = true;
        trade_xy(t, t->grid, pts[pick], &x, &y);
        fprintf(dat, "%.9g %.9g\n", x, y);
    }
    free(done);
    double rx, ry, cx, cy;
    trade_xy(t, t->grid, (uint64_t)t->rec, &rx, &ry);
    trade_xy(t, t->base, 0, &cx, &cy);
    fprintf(dat, "\n\n%.9g %.9g\n\n\n%.9g %.9g\n", rx, ry, cx, cy);
}

/* The script of the tradeoff chart (trade_data wrote its data). */
static int write_trade_chart(const sweep_tune *t, FILE *gp, FILE *dat) {
    const sweep *g0 = t->grid[0];
    uint64_t *pts;
    bool *front;
    size_t n, nfront, nfeas, ninf;
    if (trade_front(t, &pts, &front, &n, &nfront) != FB_OK) return FB_ENOMEM;
    trade_data(t, dat, pts, front, n, nfront, &nfeas, &ninf);
    char text[SWEEP_METRIC_MAX * 2 + 200];
    if (trade_kind(t) == TRADE_SECOND)
        snprintf(text, sizeof text, "%s against %s across %zu scenarios (%s of each)",
                 g0->objective, t->second, t->n, across_word(t));
    else
        snprintf(text, sizeof text,
                 "%s across %zu scenarios (%s) against the tightest constraint's slack",
                 g0->objective, t->n, across_word(t));
    fputs("set title ", gp);
    rep_gnuplot_quote(gp, text);
    fprintf(gp, " . \"\\n%zu settings run on every seed, %zu on the Pareto front%s\"\n", n, nfront,
            trade_kind(t) == TRADE_SECOND ? " (feasible ones only)" : "");
    snprintf(text, sizeof text, "%s, %s%s", g0->objective, across_word(t),
             chart_unit(g0, g0->objective));
    gp_label(gp, "x", text);
    if (trade_kind(t) == TRADE_SECOND)
        snprintf(text, sizeof text, "%s, %s%s", t->second, across_word(t),
                 chart_unit(g0, t->second));
    else
        snprintf(text, sizeof text,
                 "the tightest constraint's slack, smallest over the scenarios (%%)");
    gp_label(gp, "y", text);
    fputs("set grid\nset key below\n", gp);
    if (trade_kind(t) == TRADE_SLACK) /* feasible above the line */
        fputs("set arrow from graph 0, first 0 to graph 1, first 0 nohead dt 2 lc rgb "
              "'#d62728'\n",
              gp);
    const char *sep = "plot ";
    if (nfeas) {
        fprintf(gp,
                "%s'tradeoff.dat' index 0 using 1:($3==1?$2:1/0) with points pt 7 ps 1.2 lc "
                "rgb '#1f77b4' title 'feasible'",
                sep);
        sep = ", ";
    }
    if (ninf) {
        fprintf(gp,
                "%s'tradeoff.dat' index 0 using 1:($3==0?$2:1/0) with points pt 6 ps 1.2 "
                "lc rgb '#999999' title 'violates the constraints'",
                sep);
        sep = ", ";
    }
    if (nfront) {
        fprintf(gp,
                "%s'tradeoff.dat' index 1 using 1:2 with linespoints pt 7 ps 0.8 lw 2 lc "
                "rgb '#2ca02c' title 'Pareto front'",
                sep);
        sep = ", ";
    }
    fprintf(gp,
            "%s'tradeoff.dat' index 2 using 1:2 with points pt 4 ps 3 lw 2 lc rgb '#000000' "
            "title 'recommended', 'tradeoff.dat' index 3 using 1:2 with points pt 8 ps 2.5 lw 2 "
            "lc rgb '#d62728' title 'current settings'\n",
            sep);
    free(pts);
    free(front);
    return FB_OK;
}

/*
 * scenarios: per scenario, the objective at the recommendation beside the
 * current settings' (a clustered histogram).
 */
static void write_scenario_chart(const sweep_tune *t, FILE *gp, FILE *dat) {
    const sweep *g0 = t->grid[0];
    for (size_t i = 0; i < t->n; i++) {
        char name[256], label[300];
        short_name(t->grid[i]->file, name, sizeof name);
        bool fails = false; /* the current settings break a constraint here */
        for (size_t c = 0; c < t->base[i]->con_count; c++) {
            double v = sweep_point_mean(t->base[i], 0, t->base[i]->cons[c].metric);
            fails = fails || isnan(v) || !sweep_constraint_holds(&t->base[i]->cons[c], v);
        }
        snprintf(label, sizeof label, "%s%s", name, fails ? " (current: fails)" : "");
        rep_gnuplot_datum(dat, label);
        fprintf(dat, " %.9g %.9g\n",
                chart_value(g0, g0->objective,
                            sweep_point_mean(t->grid[i], (uint64_t)t->rec, g0->objective)),
                chart_value(g0, g0->objective, sweep_point_mean(t->base[i], 0, g0->objective)));
    }
    char text[SWEEP_METRIC_MAX + 200];
    snprintf(text, sizeof text, "%s per scenario: the recommendation and the current settings",
             g0->objective);
    fputs("set title ", gp);
    rep_gnuplot_quote(gp, text);
    fputc('\n', gp);
    snprintf(text, sizeof text, "%s, mean over the seeds%s", g0->objective,
             chart_unit(g0, g0->objective));
    gp_label(gp, "y", text);
    fputs("set style data histogram\nset style histogram clustered gap 1\nset style fill solid "
          "0.8 border -1\nset boxwidth 0.9\nset grid ytics\nset key below\nset yrange [0:*]\n"
          "set xtics rotate by -30 left\n"
          "plot 'scenarios.dat' using 2:xtic(1) lc rgb '#1f77b4' title 'recommended', '' using 3 "
          "lc rgb '#d62728' title 'current settings'\n",
          gp);
}

/* DIR/NAME.gp and .dat, then NAME.png when gnuplot is there. */
static int write_chart(const sweep_tune *t, const char *dir, const char *name, const char *gnuplot,
                       char *msg, size_t msglen) {
    char gpath[1200], dpath[1200], ppath[1200], script[64], png[64];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(png, sizeof png, "%s.png", name);
    snprintf(gpath, sizeof gpath, "%s/%s.gp", dir, name);
    snprintf(dpath, sizeof dpath, "%s/%s.dat", dir, name);
    snprintf(ppath, sizeof ppath, "%s/%s.png", dir, name);
    remove(ppath); /* an earlier tune's PNG must not pass for this one's */
    FILE *gp = fopen(gpath, "w"), *dat = gp ? fopen(dpath, "w") : NULL;
    if (dat == NULL) {
        if (gp) fclose(gp);
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", gp ? dpath : gpath,
                          strerror(errno));
    }
    fprintf(gp, "set terminal pngcairo size 960,680 font 'sans,10' noenhanced\nset output ");
    rep_gnuplot_quote(gp, png);
    fputs("\nset border lc rgb '#555555'\n", gp);
    int rc = FB_OK;
    if (strcmp(name, "tradeoff") == 0)
        rc = write_trade_chart(t, gp, dat);
    else
        write_scenario_chart(t, gp, dat);
    int grc = sweep_close_checked(gp, gpath, msg, msglen);
    int drc = sweep_close_checked(dat, dpath, grc == FB_OK ? msg : NULL, grc == FB_OK ? msglen : 0);
    if (rc != FB_OK) return sweep_fail(msg, msglen, rc, "out of memory");
    if (grc != FB_OK) return grc;
    if (drc != FB_OK) return drc;
    if (gnuplot == NULL) return FB_OK;
    int prc = rep_gnuplot_run(gnuplot, dir, script, msg, msglen);
    return prc == FB_OK ? rep_gnuplot_check_drawing(ppath, msg, msglen) : prc;
}

int sweep_tune_write_charts(sweep_tune *t, const char *dir, char *msg, size_t msglen) {
    t->charts[0] = t->charts_note[0] = '\0';
    if (t->rec < 0) return FB_OK;
    char charts[1100];
    snprintf(charts, sizeof charts, "%s/charts", dir);
    if (mkdir(charts, 0777) != 0 && errno != EEXIST)
        return sweep_fail(msg, msglen, FB_EIO, "cannot create %s: %s", charts, strerror(errno));
    char gnuplot[1024];
    bool have = rep_gnuplot_find(gnuplot, sizeof gnuplot) == FB_OK;
    int rc = write_chart(t, charts, "scenarios", have ? gnuplot : NULL, msg, msglen);
    if (rc == FB_OK && trade_kind(t) != TRADE_NONE) {
        rc = write_chart(t, charts, "tradeoff", have ? gnuplot : NULL, msg, msglen);
    } else if (rc == FB_OK) { /* nothing to trade off: no chart from an earlier tune */
        static const char *const ext[3] = {"gp", "dat", "png"};
        for (int k = 0; k < 3; k++) {
            char path[1200];
            snprintf(path, sizeof path, "%s/tradeoff.%s", charts, ext[k]);
            remove(path);
        }
    }
    if (rc != FB_OK) return rc;
    snprintf(t->charts, sizeof t->charts, "%s", charts);
    if (!have) {
        snprintf(t->charts_note, sizeof t->charts_note, "%s", gnuplot);
        snprintf(msg, msglen, "%s", gnuplot);
        return FB_ENOTFOUND;
    }
    return FB_OK;
}

void sweep_tune_write_answer(FILE *f, const sweep_tune *t) {
    answer_search(f, t);
    if (t->rec < 0) return;
    uint64_t p = (uint64_t)t->rec;
    answer_recommended(f, t, p);
    answer_scenarios(f, t, p);
    fprintf(f, "\nsensitivity (one knob moves, the others stay at the recommendation):\n");
    bool feasible = evaluate(t, t->grid, p).feasible;
    for (uint32_t d = 0; d < t->dims; d++) answer_knob(f, t, p, d, feasible);
    answer_tradeoff(f, t, p);
    sweep_answer_policy(f, t->grid[0], p);
}

/* ---- tune.json ---- */

/* A number to 9 digits, null when not finite. */
static void jnum(util_json *w, const char *key, double v) {
    util_json_digits(w, key, v, 9);
}

/* A string; NULL as "". */
static void jstr(util_json *w, const char *key, const char *s) {
    util_json_str(w, key, s ? s : "");
}

/* What the search did: the sample, the rungs, the screen, the moves, NLopt's phases. */
static void json_search(util_json *w, const sweep_tune *t) {
    util_json_open(w, "search", '{', UTIL_JSON_INLINE);
    util_json_u64(w, "points", t->points);
    util_json_u64(w, "sampled", t->sampled);
    util_json_open(w, "rungs", '[', UTIL_JSON_INLINE);
    for (uint32_t k = 0; k < t->rungs; k++) {
        util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
        util_json_u64(w, "seeds", t->f[k]);
        util_json_u64(w, "candidates", t->keep[k]);
        util_json_close(w);
    }
    util_json_close(w);
    if (t->screen[0]) {
        util_json_open(w, "screen", '{', UTIL_JSON_INLINE);
        jstr(w, "duration", t->screen_text);
        util_json_u64(w, "candidates", t->screened);
        util_json_u64(w, "runs", t->screened * t->n);
        util_json_u64(w, "counted", t->screen_count);
        util_json_close(w);
    } else {
        util_json_null(w, "screen");
    }
    util_json_u64(w, "moves", t->moves);
    jstr(w, "method",
         t->budget >= sweep_tune_full_runs(t) ? "exhaustive"
         : t->method == SWEEP_TUNE_NLOPT      ? "nlopt"
         : t->method == SWEEP_TUNE_DIRECT     ? "direct"
                                              : "halving");
    if (t->method != SWEEP_TUNE_HALVING && t->budget < sweep_tune_full_runs(t)) {
        util_json_open(w, "nlopt", '{', UTIL_JSON_INLINE);
        if (t->method == SWEEP_TUNE_DIRECT) {
            jstr(w, "global", "GN_DIRECT_L");
            util_json_u64(w, "global_calls", t->global_calls);
            util_json_i64(w, "global_result", t->global_result);
        } else { /* the sample and its rungs chose the starts */
            util_json_null(w, "global");
            util_json_u64(w, "global_calls", 0);
            util_json_null(w, "global_result");
        }
        jstr(w, "local", "LN_COBYLA");
        util_json_u64(w, "local_calls", t->local_calls);
        util_json_u64(w, "local_starts", t->local_starts);
        util_json_u64(w, "local_points", t->local_points);
        if (t->local_starts)
            util_json_i64(w, "local_result", t->local_result);
        else
            util_json_null(w, "local_result");
        util_json_bool(w, "local_better", t->local_better);
        util_json_close(w);
    } else {
        util_json_null(w, "nlopt");
    }
    util_json_close(w);
}

/* The definition, the runs, what the search did. */
static void json_head(util_json *w, const sweep_tune *t) {
    const sweep *g0 = t->grid[0];
    util_json_open(w, "scenarios", '[', UTIL_JSON_INLINE);
    for (size_t i = 0; i < t->n; i++) jstr(w, NULL, t->grid[i]->file);
    util_json_close(w);
    jstr(w, "variant", g0->variant);
    util_json_open(w, "knobs", '[', UTIL_JSON_LINES_OPEN);
    for (uint32_t d = 0; d < t->dims; d++) {
        util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
        jstr(w, "key", g0->dims[d].key);
        util_json_open(w, "values", '[', UTIL_JSON_INLINE);
        for (uint32_t v = 0; v < t->nval[d]; v++) jstr(w, NULL, g0->dims[d].values[v]);
        util_json_close(w);
        util_json_close(w);
    }
    util_json_close(w);
    util_json_open(w, "objective", '{', UTIL_JSON_INLINE);
    jstr(w, "metric", g0->objective);
    jstr(w, "sense", g0->sense < 0 ? "maximize" : "minimize");
    jstr(w, "across", t->across_mean ? "mean" : "worst");
    if (t->across_mean) {
        util_json_open(w, "weights", '[', UTIL_JSON_INLINE);
        for (size_t i = 0; i < t->n; i++) jnum(w, NULL, t->weight[i]);
        util_json_close(w);
    } else {
        util_json_null(w, "weights");
    }
    if (t->second[0]) {
        util_json_open(w, "second", '{', UTIL_JSON_INLINE);
        jstr(w, "metric", t->second);
        jstr(w, "sense", t->second_sense < 0 ? "maximize" : "minimize");
        util_json_close(w);
    } else {
        util_json_null(w, "second");
    }
    util_json_close(w);
    jstr(w, "subject_to", g0->subject_to);
    util_json_u64(w, "seed", t->seed);
    util_json_u64(w, "seeds", t->seeds);
    util_json_open(w, "runs", '{', UTIL_JSON_INLINE);
    util_json_u64(w, "full_grid", sweep_tune_full_runs(t));
    util_json_u64(w, "budget", t->budget);
    util_json_u64(w, "search", t->used);
    util_json_bool(w, "budget_reached", t->budget_reached);
    util_json_u64(w, "report", t->extra);
    util_json_close(w);
    json_search(w, t);
}

/* Scenario i at point p: the metrics, recommended and current; the binding constraint. */
static void json_scenario(util_json *w, const sweep_tune *t, size_t i, uint64_t p) {
    const sweep *sw = t->grid[i], *bs = t->base[i];
    util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
    jstr(w, "file", sw->file);
    jstr(w, "variant", sw->variant);
    jnum(w, "weight", t->across_mean ? t->weight[i] : NAN);
    /* of the weighted mean, at the recommendation */
    jnum(w, "share", t->weighted ? weight_share(t, i, p) : NAN);
    util_json_open(w, "metrics", '{', UTIL_JSON_INLINE);
    for (size_t k = 0; k <= sw->con_count; k++) {
        const char *m = k == 0 ? sw->objective : sw->cons[k - 1].metric;
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup = dup || strcmp(m, j == 0 ? sw->objective : sw->cons[j - 1].metric) == 0;
        if (dup) continue;
        util_json_open(w, m ? m : "", '{', UTIL_JSON_INLINE);
        jnum(w, "recommended", sweep_point_mean(sw, p, m));
        jnum(w, "current", sweep_point_mean(bs, 0, m));
        util_json_close(w);
    }
    util_json_close(w);
    double slack;
    int k = binding(sw, p, &slack);
    if (k < 0) {
        util_json_null(w, "binding");
    } else {
        util_json_open(w, "binding", '{', UTIL_JSON_INLINE);
        jstr(w, "constraint", sw->cons[k].text);
        jnum(w, "slack", slack);
        util_json_close(w);
    }
    util_json_close(w);
}

static void json_recommendation(util_json *w, const sweep_tune *t, uint64_t p) {
    const sweep *g0 = t->grid[0];
    eval e = evaluate(t, t->grid, p), c = evaluate(t, t->base, 0);
    double hw = noise(t, t->grid, p);
    util_json_open(w, "recommendation", '{', UTIL_JSON_LINES);
    util_json_u64(w, "point", p);
    util_json_open(w, "settings", '{', UTIL_JSON_INLINE);
    for (uint32_t d = 0; d < t->dims; d++) {
        char v[SWEEP_VALUE_MAX];
        knob_value(t, p, d, v, sizeof v);
        jstr(w, g0->dims[d].key, v);
    }
    util_json_close(w);
    util_json_bool(w, "feasible", e.feasible);
    jnum(w, "objective", g0->sense * e.across);
    jnum(w, "noise", hw);
    util_json_open(w, "current", '{', UTIL_JSON_INLINE);
    util_json_bool(w, "feasible", c.feasible);
    jnum(w, "objective", g0->sense * c.across);
    util_json_close(w);
    util_json_open(w, "scenarios", '[', UTIL_JSON_LINES_OPEN);
    for (size_t i = 0; i < t->n; i++) json_scenario(w, t, i, p);
    util_json_close(w);
    util_json_close(w);
}

static void json_knob(util_json *w, const sweep_tune *t, uint64_t p, uint32_t d, bool feasible) {
    const sweep *g0 = t->grid[0];
    knob_sens k = sensitivity(t, p, d);
    util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
    jstr(w, "key", g0->dims[d].key);
    util_json_open(w, "values", '[', UTIL_JSON_INLINE);
    for (uint32_t v = 0; v < t->nval[d]; v++) {
        uint64_t q = with_value(t, p, d, v);
        eval qe = evaluate(t, t->grid, q);
        util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
        jstr(w, "value", g0->dims[d].values[v]);
        jnum(w, "objective", g0->sense * qe.across);
        util_json_bool(w, "feasible", qe.feasible);
        util_json_close(w);
    }
    util_json_close(w);
    jnum(w, "range", k.range);
    if (k.unmeasured) /* one seed: no noise to judge a move against */
        util_json_null(w, "noise");
    else
        jnum(w, "noise", k.noise);
    int64_t bv = better_value(t, p, d);
    util_json_bool(w, "no_effect", k.no_effect);
    if (bv >= 0)
        jstr(w, "better_at", g0->dims[d].values[bv]);
    else
        util_json_null(w, "better_at");
    if (feasible) { /* the values around the recommendation's where they all hold */
        util_json_open(w, "constraints_hold", '[', UTIL_JSON_INLINE);
        jstr(w, NULL, g0->dims[d].values[k.flo]);
        jstr(w, NULL, g0->dims[d].values[k.fhi]);
        util_json_close(w);
    } else {
        util_json_null(w, "constraints_hold");
    }
    util_json_close(w);
}

static void json_evaluated(util_json *w, const sweep_tune *t) {
    const sweep *g0 = t->grid[0];
    uint64_t *fp = NULL;
    bool *front = NULL;
    size_t nf = 0, nfront = 0, j = 0;
    if (trade_kind(t) != TRADE_NONE && trade_front(t, &fp, &front, &nf, &nfront) != FB_OK) nf = 0;
    util_json_open(w, "tradeoff", '{', UTIL_JSON_INLINE);
    if (trade_kind(t) == TRADE_SECOND)
        jstr(w, "against", t->second);
    else if (trade_kind(t) == TRADE_SLACK)
        jstr(w, "against", "slack");
    else
        util_json_null(w, "against");
    util_json_u64(w, "front", nfront);
    util_json_close(w);
    util_json_open(w, "evaluated", '[', UTIL_JSON_LINES_OPEN);
    for (uint64_t q = 0; q < t->points; q++) {
        if (t->have[q] == 0) continue;
        eval qe = evaluate(t, t->grid, q);
        while (j < nf && fp[j] < q) j++;
        bool on = j < nf && fp[j] == q && front[j];
        util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
        util_json_u64(w, "point", q);
        util_json_u64(w, "seeds", t->have[q]);
        jnum(w, "objective", g0->sense * qe.across);
        jnum(w, "noise", t->have[q] == t->seeds ? noise(t, t->grid, q) : NAN);
        if (t->second[0]) jnum(w, "second", t->second_sense * trade_y(t, t->grid, q));
        if (g0->con_count) jnum(w, "slack", min_slack(t, t->grid, q));
        util_json_bool(w, "feasible", qe.feasible);
        util_json_bool(w, "front", on);
        util_json_close(w);
    }
    util_json_close(w);
    free(fp);
    free(front);
}

void sweep_tune_write_json(FILE *f, const sweep_tune *t) {
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_str(&w, "rng", FB_RNG_VERSION); /* the random streams (docs/rng.md) */
    json_head(&w, t);
    if (t->rec < 0) {
        util_json_null(&w, "recommendation");
    } else {
        uint64_t p = (uint64_t)t->rec;
        json_recommendation(&w, t, p);
        bool feasible = evaluate(t, t->grid, p).feasible;
        util_json_open(&w, "sensitivity", '[', UTIL_JSON_LINES_OPEN);
        for (uint32_t d = 0; d < t->dims; d++) json_knob(&w, t, p, d, feasible);
        util_json_close(&w);
        json_evaluated(&w, t);
    }
    util_json_close(&w);
    util_json_text(&w, "\n");
}

/* ---- tune.html ---- */

static void html_text(FILE *f, const char *s) {
    util_out o = util_out_file(f);
    util_xml_escape(&o, s, UTIL_XML_APOS);
}

/* Knob d's values around point p: the objective across scenarios, feasible or not. */
static void html_knob_row(FILE *f, const sweep_tune *t, uint64_t p, uint32_t d) {
    const sweep *g0 = t->grid[0];
    fputs("<tr><th>", f);
    html_text(f, g0->dims[d].key);
    fputs("</th><td>", f);
    for (uint32_t v = 0; v < t->nval[d]; v++) {
        uint64_t q = with_value(t, p, d, v);
        eval e = evaluate(t, t->grid, q);
        char a[64];
        human(a, sizeof a, g0, g0->objective, g0->sense * e.across);
        fprintf(f, "%s<span class=\"%s%s\">", v ? " &middot; " : "", e.feasible ? "ok" : "bad",
                q == p ? " rec" : "");
        html_text(f, g0->dims[d].values[v]);
        fputs(": ", f);
        html_text(f, a);
        fputs(e.feasible ? "" : " (fails)", f);
        fputs("</span>", f);
    }
    fputs("</td></tr>\n", f);
}

/* The charts as data URIs, or why there are none. */
static void html_charts(FILE *f, const sweep_tune *t) {
    if (t->rec < 0) return;
    static const char *const name[2] = {"tradeoff", "scenarios"};
    static const char *const what[2] = {
        "The trade-off: every setting run on every seed, the Pareto front joined",
        "Per scenario: the recommendation and the current settings"};
    if (t->charts_note[0] || !t->charts[0]) {
        fputs("<p>No charts: ", f);
        html_text(f, t->charts_note[0] ? t->charts_note : "they were not asked for (--no-charts)");
        fputs("</p>\n", f);
        return;
    }
    for (int c = trade_kind(t) == TRADE_NONE; c < 2; c++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.png", t->charts, name[c]);
        fprintf(f, "<h2>%s</h2>\n", what[c]);
        FILE *in = fopen(path, "rb");
        if (in == NULL) {
            fprintf(f, "<p>(charts/%s.png is missing)</p>\n", name[c]);
            continue;
        }
        fprintf(f, "<img alt=\"%s\" style=\"max-width:100%%\" src=\"", name[c]);
        util_data_uri(f, in, "image/png");
        fclose(in);
        fputs("\">\n", f);
    }
}

void sweep_tune_write_html(FILE *f, const sweep_tune *t) {
    const sweep *g0 = t->grid[0];
    fputs(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>fusebox tune: ",
        f);
    html_text(f, g0->objective);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:80em}"
          "pre{background:#f6f6f6;padding:1em;overflow-x:auto}td,th{padding:.2em .6em;"
          "text-align:left;vertical-align:top}.bad{color:#a00}.rec{font-weight:bold}</style>\n"
          "</head><body>\n<h1>fusebox tune</h1>\n",
          f);
    if (t->rec >= 0) {
        fputs("<h2>Each knob around the recommendation</h2>\n<p>The objective across the "
              "scenarios at each value of one knob, the others at the recommendation (in bold); "
              "red: a constraint fails in some scenario.</p>\n<table>\n",
              f);
        for (uint32_t d = 0; d < t->dims; d++) html_knob_row(f, t, (uint64_t)t->rec, d);
        fputs("</table>\n", f);
    }
    html_charts(f, t);
    fputs("<h2>The answer</h2>\n<pre>", f);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        sweep_tune_write_answer(mem, t);
        fclose(mem);
        html_text(f, text ? text : "");
        free(text);
    }
    fputs("</pre>\n</body></html>\n", f);
}
