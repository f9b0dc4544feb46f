/*
 * sweep.c - a sweep's definition, its tasks, their results, the analysis
 * (best point, Pareto front), the answer and the files sweep.csv,
 * sweep-points.csv and sweep.json. See sweep.h and docs/sweeps.md.
 */
#include "reports/sweep_impl.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"
#include "reports/json.h"
#include "reports/report.h"
#include "sim/sim.h"

#define SCENARIO_TEXT_MAX (16u * 1024 * 1024)

/* The Pareto front is over these three, all minimised. */
static const char *const pareto_metrics[3] = {"blast_radius", "cost_usd", "latency_p99"};

/* First path segments that make a --grid key absolute (the scenario's top level). */
static const char *const top_keys[] = {
    "$schema",   "name",   "description", "incident", "duration",  "tick",   "traffic", "pods",
    "providers", "policy", "variants",    "slo",      "spillover", "limits", "expect",  NULL};

int sweep_fail(char *msg, size_t msglen, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return rc;
}

int sweep_read_file(const char *path, size_t max, char **out, size_t *len, char *msg,
                    size_t msglen) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return sweep_fail(msg, msglen, FB_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    int rc = FB_OK;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f)) {
            rc = sweep_fail(msg, msglen, FB_EIO, "%s: read error", path);
            break;
        }
        if (n < cap) break;
        if (cap >= max) {
            rc = sweep_fail(msg, msglen, FB_ECAP, "%s: larger than %zu MiB", path, max >> 20);
            break;
        }
        char *bigger = realloc(buf, 2 * cap + 1);
        if (bigger == NULL) free(buf);
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    if (rc != FB_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return FB_OK;
}

/* ---- points and tasks ---- */

void sweep_point_value(const rep_sweep *sw, uint64_t p, uint32_t d, char *buf, size_t len) {
    if (sw->sample > 0) {
        rep_sweep_dim_value(&sw->dims[d], sw->u[p * sw->dim_count + d], buf, len);
        return;
    }
    /* full factorial, the first --grid varying slowest */
    uint64_t stride = 1;
    for (uint32_t e = sw->dim_count; e-- > d + 1;) stride *= sw->dims[e].value_count;
    snprintf(buf, len, "%s", sw->dims[d].values[(p / stride) % sw->dims[d].value_count]);
}

void sweep_point_label(const rep_sweep *sw, uint64_t p, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < sw->dim_count && used < len; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        int w = snprintf(buf + used, len - used, "%s%s=%s", d ? " " : "", sw->dims[d].key, v);
        if (w < 0) break;
        used += (size_t)w;
    }
}

typedef struct point_sets {
    const char *v[REP_SWEEP_SETS_MAX + REP_SWEEP_DIMS_MAX];
    char *owned[REP_SWEEP_DIMS_MAX];
    size_t n;
} point_sets;

static void point_sets_free(point_sets *ps) {
    for (size_t i = 0; i < REP_SWEEP_DIMS_MAX; i++) free(ps->owned[i]);
}

/* The sweep's own --set values, then one "path=value" per dimension. */
static int point_sets_build(const rep_sweep *sw, uint64_t p, point_sets *ps) {
    memset(ps, 0, sizeof *ps);
    for (size_t i = 0; i < sw->set_count; i++) ps->v[ps->n++] = sw->sets[i];
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        size_t len = strlen(sw->paths[d]) + strlen(v) + 2;
        ps->owned[d] = malloc(len);
        if (ps->owned[d] == NULL) {
            point_sets_free(ps);
            return FB_ENOMEM;
        }
        snprintf(ps->owned[d], len, "%s=%s", sw->paths[d], v);
        ps->v[ps->n++] = ps->owned[d];
    }
    return FB_OK;
}

static int load_point(const rep_sweep *sw, uint64_t p, const uint64_t *seed, sim_scenario **sc,
                      sim_error *err) {
    point_sets ps;
    if (point_sets_build(sw, p, &ps) != FB_OK) {
        memset(err, 0, sizeof *err);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    int rc = sim_scenario_parse(sw->text, sw->text_len, sw->file, ps.v, ps.n, seed, sc, err);
    point_sets_free(&ps);
    if (rc == FB_OK && sim_scenario_variant(*sc, sw->variant) < 0) {
        snprintf(err->path, sizeof err->path, "variants");
        snprintf(err->msg, sizeof err->msg, "no variant named '%s' any more", sw->variant);
        sim_scenario_free(*sc);
        *sc = NULL;
        rc = FB_EINVAL;
    }
    return rc;
}

/* The dimension an error is about: its path is the error's path or a prefix of it. */
static int blame_dim(const rep_sweep *sw, const sim_error *err) {
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        size_t n = strlen(sw->paths[d]);
        if (err->path[0] && strncmp(err->path, sw->paths[d], n) == 0 &&
            (err->path[n] == '\0' || err->path[n] == '.' || err->path[n] == '['))
            return (int)d;
        if (!err->path[0] && strstr(err->msg, sw->paths[d])) return (int)d;
    }
    return -1;
}

static int validate_points(rep_sweep *sw, char *msg, size_t msglen) {
    for (uint64_t p = 0; p < sw->points; p++) {
        sim_scenario *sc = NULL;
        sim_error err;
        int rc = load_point(sw, p, NULL, &sc, &err);
        sim_scenario_free(sc);
        if (rc == FB_OK) continue;
        char where[1100], label[1024];
        sim_error_format(&err, where, sizeof where);
        sweep_point_label(sw, p, label, sizeof label);
        int d = blame_dim(sw, &err);
        if (d >= 0) {
            char v[SWEEP_VALUE_MAX];
            sweep_point_value(sw, p, (uint32_t)d, v, sizeof v);
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "--grid %s: value '%s' (point %" PRIu64 "): %s", sw->dims[d].key, v,
                              p, where);
        }
        return sweep_fail(msg, msglen, FB_EINVAL, "point %" PRIu64 " (%s): %s", p, label, where);
    }
    return FB_OK;
}

static bool is_top_key(const char *key) {
    size_t n = strcspn(key, ".[");
    for (const char *const *k = top_keys; *k; k++)
        if (strlen(*k) == n && strncmp(*k, key, n) == 0) return true;
    return false;
}

static int add_dims(rep_sweep *sw, const rep_sweep_args *a, char *msg, size_t msglen) {
    if (a->grid_count == 0)
        return sweep_fail(msg, msglen, FB_EINVAL, "give at least one --grid KEY=v1,v2,...");
    if (a->grid_count > REP_SWEEP_DIMS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "at most %d --grid dimensions", REP_SWEEP_DIMS_MAX);
    sw->grid_args = calloc(a->grid_count, sizeof *sw->grid_args);
    if (sw->grid_args == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->grid_count; i++) {
        rep_sweep_dim *dim = &sw->dims[i];
        int rc = rep_sweep_parse_grid(a->grids[i], dim, msg, msglen);
        if (rc != FB_OK) return rc;
        sw->dim_count = (uint32_t)(i + 1);
        sw->grid_args[i] = strdup(a->grids[i]);
        if (sw->grid_args[i] == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        if (strcmp(dim->key, "seed") == 0)
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "--grid seed: seeds are not a setting; use --seeds K (and --seed N)");
        for (uint32_t v = 0; v < dim->value_count; v++)
            if (strlen(dim->values[v]) >= SWEEP_VALUE_MAX)
                return sweep_fail(msg, msglen, FB_EINVAL,
                                  "--grid %s: a value is longer than %d bytes", dim->key,
                                  SWEEP_VALUE_MAX - 1);
        sw->absolute[i] = is_top_key(dim->key);
        if (sw->absolute[i])
            snprintf(sw->paths[i], SWEEP_PATH_MAX, "%s", dim->key);
        else if (sw->has_variants)
            snprintf(sw->paths[i], SWEEP_PATH_MAX, "variants.%s.%s", sw->variant, dim->key);
        else
            snprintf(sw->paths[i], SWEEP_PATH_MAX, "policy.%s", dim->key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(sw->paths[j], sw->paths[i]) == 0)
                return sweep_fail(msg, msglen, FB_EINVAL, "--grid %s: the key is swept twice",
                                  dim->key);
        if (a->sample == 0 && dim->kind == REP_SWEEP_RANGE)
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "--grid %s: a range needs --sample N (or list the values: a,b,c)",
                              a->grids[i]);
    }
    return FB_OK;
}

static int size_sweep(rep_sweep *sw, const rep_sweep_args *a, char *msg, size_t msglen) {
    sw->seeds = a->seeds ? a->seeds : 3;
    if (sw->seeds > REP_SWEEP_SEEDS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "--seeds: at most %d", REP_SWEEP_SEEDS_MAX);
    sw->sample = a->sample;
    uint64_t points = 1;
    if (sw->sample > 0) {
        points = sw->sample;
    } else {
        for (uint32_t d = 0; d < sw->dim_count; d++) {
            points *= sw->dims[d].value_count;
            if (points > REP_SWEEP_TASKS_MAX) break;
        }
    }
    sw->points = points;
    if (points > REP_SWEEP_TASKS_MAX || points * sw->seeds > REP_SWEEP_TASKS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP,
                          "the sweep has %s%" PRIu64 " points x %u seeds; the cap is %d runs (use "
                          "fewer values, --sample N or fewer --seeds)",
                          points > REP_SWEEP_TASKS_MAX ? "over " : "", points, sw->seeds,
                          REP_SWEEP_TASKS_MAX);
    sw->tasks = points * sw->seeds;
    if (sw->sample > 0) {
        sw->u = malloc(points * sw->dim_count * sizeof *sw->u);
        if (sw->u == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        rep_sweep_lhs(sw->sample, sw->dim_count, sw->seed, sw->u);
    }
    return FB_OK;
}

/* Every metric of sim/metrics.h: the scalar ones, then per provider. */
static int add_metrics(rep_sweep *sw, char *msg, size_t msglen) {
    size_t n = 0, cap = 0;
    for (const sim_metric *d = sim_metrics(); d->name; d++)
        cap += d->per_provider ? sw->base->provider_count : 1;
    sw->metrics = calloc(cap, sizeof *sw->metrics);
    sw->units = calloc(cap, sizeof *sw->units);
    if (sw->metrics == NULL || sw->units == NULL)
        return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    for (const sim_metric *d = sim_metrics(); d->name; d++) {
        if (d->per_provider) continue;
        snprintf(sw->metrics[n], REP_SWEEP_METRIC_MAX, "%s", d->name);
        sw->units[n++] = d->unit;
    }
    for (const sim_metric *d = sim_metrics(); d->name; d++) {
        if (!d->per_provider) continue;
        int blen = (int)(strlen(d->name) - 2); /* without "[]" */
        for (uint32_t p = 0; p < sw->base->provider_count; p++) {
            snprintf(sw->metrics[n], REP_SWEEP_METRIC_MAX, "%.*s[%s]", blen, d->name,
                     sw->base->providers[p].name);
            sw->units[n++] = d->unit;
        }
    }
    sw->metric_count = n;
    return FB_OK;
}

static int set_analysis(rep_sweep *sw, const rep_sweep_args *a, char *msg, size_t msglen) {
    char m[512];
    if (a->objective) {
        if (rep_sweep_check_metric(sw->base, a->objective, NULL, m, sizeof m) != FB_OK)
            return sweep_fail(msg, msglen, FB_EINVAL, "--%s: %s",
                              a->sense < 0 ? "maximize" : "minimize", m);
        snprintf(sw->objective, sizeof sw->objective, "%s", a->objective);
        sw->sense = a->sense < 0 ? -1 : 1;
    }
    if (a->subject_to) {
        if (strlen(a->subject_to) >= sizeof sw->subject_to)
            return sweep_fail(msg, msglen, FB_EINVAL, "--subject-to: too long");
        snprintf(sw->subject_to, sizeof sw->subject_to, "%s", a->subject_to);
        sw->strict = a->strict;
        int rc =
            rep_sweep_parse_constraints(a->subject_to, sw->base, sw->cons,
                                        REP_SWEEP_CONSTRAINTS_MAX, &sw->con_count, msg, msglen);
        if (rc != FB_OK) return rc;
    }
    const char *heat = a->heatmap ? a->heatmap : sw->objective[0] ? sw->objective : NULL;
    if (heat && rep_sweep_check_metric(sw->base, heat, NULL, m, sizeof m) != FB_OK)
        return sweep_fail(msg, msglen, FB_EINVAL, "--heatmap: %s", m);
    snprintf(sw->heatmap, sizeof sw->heatmap, "%s", heat ? heat : "blast_radius");
    sw->heatmap_given = a->heatmap != NULL;
    sw->heat_x = sw->dim_count > 0 ? 0 : -1;
    sw->heat_y = sw->dim_count > 1 ? 1 : -1;
    if (a->heatmap_dims) {
        snprintf(sw->heatmap_dims, sizeof sw->heatmap_dims, "%s", a->heatmap_dims);
        char keys[sizeof sw->heatmap_dims];
        snprintf(keys, sizeof keys, "%s", a->heatmap_dims);
        char *comma = strchr(keys, ',');
        if (comma == NULL)
            return sweep_fail(msg, msglen, FB_EINVAL, "--heatmap-dims: expected KEY1,KEY2");
        *comma = '\0';
        const char *names[2] = {keys, comma + 1};
        int idx[2] = {-1, -1};
        for (int k = 0; k < 2; k++)
            for (uint32_t d = 0; d < sw->dim_count; d++)
                if (strcmp(sw->dims[d].key, names[k]) == 0) idx[k] = (int)d;
        for (int k = 0; k < 2; k++)
            if (idx[k] < 0)
                return sweep_fail(msg, msglen, FB_EINVAL,
                                  "--heatmap-dims: '%s' is not a --grid key", names[k]);
        if (idx[0] == idx[1])
            return sweep_fail(msg, msglen, FB_EINVAL, "--heatmap-dims: two different keys, please");
        sw->heat_x = idx[0];
        sw->heat_y = idx[1];
    }
    return FB_OK;
}

static int resolve_variant(rep_sweep *sw, const char *variant, char *msg, size_t msglen) {
    const sim_scenario *b = sw->base;
    int v = variant ? sim_scenario_variant(b, variant) : (int)b->variant_count - 1;
    if (v < 0) {
        char names[SIM_VARIANTS_MAX * (SIM_NAME_MAX + 2)] = "";
        for (uint32_t i = 0; i < b->variant_count; i++) {
            if (i) strcat(names, ", ");
            strcat(names, b->variants[i].name);
        }
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "--variant: %s has no variant named '%s' (it has: %s)", sw->file, variant,
                          names);
    }
    snprintf(sw->variant, sizeof sw->variant, "%s", b->variants[v].name);
    sw->has_variants = cJSON_GetObjectItemCaseSensitive((const cJSON *)b->json, "variants") != NULL;
    return FB_OK;
}

int rep_sweep_create(const rep_sweep_args *a, rep_sweep **out, char *msg, size_t msglen) {
    *out = NULL;
    rep_sweep *sw = calloc(1, sizeof *sw);
    if (sw == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    sw->best = sw->runner_up = sw->closest = -1;
    sw->heat_x = sw->heat_y = -1;
    snprintf(sw->file, sizeof sw->file, "%s", a->scenario_file);
    int rc = FB_OK;
    if (a->scenario_text) {
        sw->text = malloc(a->scenario_len + 1);
        if (sw->text == NULL) {
            rc = sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
            goto destroy;
        }
        memcpy(sw->text, a->scenario_text, a->scenario_len);
        sw->text[a->scenario_len] = '\0';
        sw->text_len = a->scenario_len;
    } else {
        rc = sweep_read_file(a->scenario_file, SCENARIO_TEXT_MAX, &sw->text, &sw->text_len, msg,
                             msglen);
        if (rc != FB_OK) goto destroy;
    }
    sw->hash = rep_sweep_hash(sw->text, sw->text_len);
    if (a->set_count > REP_SWEEP_SETS_MAX) {
        rc = sweep_fail(msg, msglen, FB_ECAP, "at most %d --set options", REP_SWEEP_SETS_MAX);
        goto destroy;
    }
    sw->sets = calloc(a->set_count + 1, sizeof *sw->sets);
    if (sw->sets == NULL) {
        rc = sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        goto destroy;
    }
    for (size_t i = 0; i < a->set_count; i++) {
        sw->sets[i] = strdup(a->sets[i]);
        if (sw->sets[i] == NULL) {
            rc = sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
            goto destroy;
        }
        sw->set_count = i + 1;
    }
    sim_error err;
    rc = sim_scenario_parse(sw->text, sw->text_len, sw->file, (const char *const *)sw->sets,
                            sw->set_count, a->seed, &sw->base, &err);
    if (rc != FB_OK) {
        char where[1100];
        sim_error_format(&err, where, sizeof where);
        rc = sweep_fail(msg, msglen, rc, "%s", where);
        goto destroy;
    }
    sw->seed = sw->base->seed;
    rc = resolve_variant(sw, a->variant, msg, msglen);
    if (rc == FB_OK) rc = add_dims(sw, a, msg, msglen);
    if (rc == FB_OK) rc = size_sweep(sw, a, msg, msglen);
    if (rc == FB_OK) rc = add_metrics(sw, msg, msglen);
    if (rc == FB_OK) rc = set_analysis(sw, a, msg, msglen);
    if (rc == FB_OK) rc = validate_points(sw, msg, msglen);
    if (rc != FB_OK) goto destroy;
    sw->values = calloc(sw->tasks * sw->metric_count, sizeof *sw->values);
    sw->state = calloc(sw->tasks, sizeof *sw->state);
    sw->errors = calloc(sw->tasks, sizeof *sw->errors);
    if (sw->values == NULL || sw->state == NULL || sw->errors == NULL) {
        rc = sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        goto destroy;
    }
    *out = sw;
    return FB_OK;
destroy:
    rep_sweep_destroy(sw);
    return rc;
}

void rep_sweep_destroy(rep_sweep *sw) {
    if (sw == NULL) return;
    free(sw->text);
    sim_scenario_free(sw->base);
    for (size_t i = 0; i < sw->set_count; i++) free(sw->sets[i]);
    free(sw->sets);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        rep_sweep_dim_free(&sw->dims[d]);
        free(sw->grid_args[d]);
    }
    free(sw->grid_args);
    free(sw->u);
    free(sw->metrics);
    free(sw->units);
    free(sw->values);
    free(sw->state);
    if (sw->errors)
        for (uint64_t t = 0; t < sw->tasks; t++) free(sw->errors[t]);
    free(sw->errors);
    free(sw->runs_ok);
    free(sw->feasible);
    free(sw->pareto);
    free(sw);
}

uint64_t rep_sweep_task_count(const rep_sweep *sw) {
    return sw->tasks;
}

uint64_t rep_sweep_point_count(const rep_sweep *sw) {
    return sw->points;
}

size_t rep_sweep_metric_count(const rep_sweep *sw) {
    return sw->metric_count;
}

const char *rep_sweep_scenario_name(const rep_sweep *sw) {
    return sw->base->name;
}

bool rep_sweep_in_shard(uint64_t task, uint32_t k, uint32_t n) {
    return n > 0 && task % n == (uint64_t)(k - 1);
}

int rep_sweep_run_task(const rep_sweep *sw, uint64_t task, double *values, char *msg,
                       size_t msglen) {
    for (size_t m = 0; m < sw->metric_count; m++) values[m] = NAN;
    if (task >= sw->tasks) return sweep_fail(msg, msglen, FB_EINVAL, "no task %" PRIu64, task);
    uint64_t p = task / sw->seeds, seed = sw->seed + task % sw->seeds;
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = load_point(sw, p, &seed, &sc, &err);
    if (rc != FB_OK) {
        sim_error_format(&err, msg, msglen);
        return rc;
    }
    sim_summary *sum = calloc(1, sizeof *sum);
    if (sum == NULL) {
        sim_scenario_free(sc);
        return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    }
    sim_run_opts opts;
    memset(&opts, 0, sizeof opts);
    rc = sim_run(sc, (uint32_t)sim_scenario_variant(sc, sw->variant), &opts, sum, &err);
    if (rc != FB_OK) sim_error_format(&err, msg, msglen);
    for (size_t m = 0; m < sw->metric_count; m++) {
        char mm[256];
        if (sim_metric_value(sc, sum, sw->metrics[m], &values[m], NULL, mm, sizeof mm) != FB_OK)
            values[m] = NAN;
    }
    free(sum);
    sim_scenario_free(sc);
    return rc;
}

int rep_sweep_set_result(rep_sweep *sw, uint64_t task, int status, const double *values,
                         const char *msg) {
    if (task >= sw->tasks) return FB_EINVAL;
    memcpy(&sw->values[task * sw->metric_count], values, sw->metric_count * sizeof *values);
    sw->state[task] = status == FB_OK ? 1 : -1;
    free(sw->errors[task]);
    sw->errors[task] = status == FB_OK ? NULL : strdup(msg && *msg ? msg : fb_strerror(status));
    sw->analysed = false;
    return FB_OK;
}

/* ---- analysis ---- */

int sweep_metric_index(const rep_sweep *sw, const char *name) {
    for (size_t m = 0; m < sw->metric_count; m++)
        if (strcmp(sw->metrics[m], name) == 0) return (int)m;
    return -1;
}

void sweep_point_stat(const rep_sweep *sw, uint64_t p, int m, rep_sweep_stat *st) {
    double x[REP_SWEEP_SEEDS_MAX];
    uint32_t n = 0;
    for (uint32_t s = 0; m >= 0 && s < sw->seeds; s++) {
        uint64_t t = p * sw->seeds + s;
        if (sw->state[t] == 1) x[n++] = sw->values[t * sw->metric_count + (size_t)m];
    }
    rep_sweep_stat_of(x, n, st);
}

static double point_mean(const rep_sweep *sw, uint64_t p, const char *metric) {
    rep_sweep_stat st;
    sweep_point_stat(sw, p, sweep_metric_index(sw, metric), &st);
    return st.mean;
}

/*
 * The value a constraint is judged on: the mean, or with strict the end of
 * the 95% CI nearest to failing (the mean when there is no CI).
 */
static double judged_value(const rep_sweep *sw, const rep_sweep_stat *st,
                           const rep_sweep_constraint *k) {
    if (!sw->strict || st->n < 2) return st->mean;
    return k->op == REP_SWEEP_GE || k->op == REP_SWEEP_GT ? st->ci_low : st->ci_high;
}

/* How far a point is from satisfying the constraints: relative shortfalls, summed. */
static double violation(const rep_sweep *sw, uint64_t p) {
    double total = 0;
    for (size_t c = 0; c < sw->con_count; c++) {
        const rep_sweep_constraint *k = &sw->cons[c];
        rep_sweep_stat st;
        sweep_point_stat(sw, p, sweep_metric_index(sw, k->metric), &st);
        double v = judged_value(sw, &st, k);
        if (isnan(v)) return INFINITY;
        if (rep_sweep_constraint_holds(k, v)) continue;
        double scale = fabs(k->value) > 0 ? fabs(k->value) : 1;
        total += fabs(v - k->value) / scale + 1e-12;
    }
    return total;
}

int rep_sweep_analyse(rep_sweep *sw) {
    for (uint64_t t = 0; t < sw->tasks; t++)
        if (sw->state[t] == 0) return FB_ESTATE;
    free(sw->runs_ok);
    free(sw->feasible);
    free(sw->pareto);
    sw->runs_ok = calloc(sw->points, sizeof *sw->runs_ok);
    sw->feasible = calloc(sw->points, sizeof *sw->feasible);
    sw->pareto = calloc(sw->points, sizeof *sw->pareto);
    double *obj = malloc(sw->points * 3 * sizeof *obj);
    if (!sw->runs_ok || !sw->feasible || !sw->pareto || !obj) {
        free(obj);
        return FB_ENOMEM;
    }
    sw->failed = 0;
    for (uint64_t t = 0; t < sw->tasks; t++) {
        if (sw->state[t] == 1)
            sw->runs_ok[t / sw->seeds]++;
        else
            sw->failed++;
    }
    sw->best = sw->runner_up = sw->closest = -1;
    sw->feasible_count = 0;
    double best = INFINITY, second = INFINITY, closest = INFINITY;
    for (uint64_t p = 0; p < sw->points; p++) {
        for (int k = 0; k < 3; k++) obj[p * 3 + (uint64_t)k] = point_mean(sw, p, pareto_metrics[k]);
        if (sw->runs_ok[p] == 0) continue;
        double viol = violation(sw, p);
        sw->feasible[p] = viol == 0;
        if (!sw->feasible[p]) {
            if (viol < closest) {
                closest = viol;
                sw->closest = (int64_t)p;
            }
            continue;
        }
        sw->feasible_count++;
        if (!sw->objective[0]) continue;
        double v = sw->sense * point_mean(sw, p, sw->objective);
        if (isnan(v)) continue;
        if (v < best) {
            second = best;
            sw->runner_up = sw->best;
            best = v;
            sw->best = (int64_t)p;
        } else if (v < second) {
            second = v;
            sw->runner_up = (int64_t)p;
        }
    }
    rep_sweep_pareto(obj, sw->points, 3, sw->pareto);
    sw->pareto_count = 0;
    for (uint64_t p = 0; p < sw->points; p++) sw->pareto_count += sw->pareto[p];
    free(obj);
    sw->analysed = true;
    return FB_OK;
}

uint64_t rep_sweep_failed(const rep_sweep *sw, const char **first_msg) {
    uint64_t n = 0;
    if (first_msg) *first_msg = NULL;
    for (uint64_t t = 0; t < sw->tasks; t++) {
        if (sw->state[t] != -1) continue;
        if (n++ == 0 && first_msg) *first_msg = sw->errors[t];
    }
    return n;
}

bool rep_sweep_infeasible(const rep_sweep *sw) {
    return sw->objective[0] && sw->best < 0;
}

bool sweep_higher_is_better(const rep_sweep *sw, const char *metric) {
    if (sw->objective[0] && strcmp(metric, sw->objective) == 0) return sw->sense < 0;
    static const char *const higher[] = {
        "success_rate",     "availability", "successes",     "success_primary",
        "success_fallback", "recovered",    "fallback_rate", NULL};
    for (const char *const *h = higher; *h; h++)
        if (strcmp(*h, metric) == 0) return true;
    return false;
}

/* ---- number formats ---- */

/* Fixed formats: counts as integers (means with 3 decimals), durations in seconds. */
static void format_value(char *buf, size_t len, double v, sim_unit unit, bool mean) {
    if (isnan(v) || isinf(v)) {
        buf[0] = '\0';
        return;
    }
    switch (unit) {
    case SIM_UNIT_COUNT:
    case SIM_UNIT_BOOL:
        snprintf(buf, len, mean ? "%.3f" : "%.0f", v);
        break;
    case SIM_UNIT_US:
        snprintf(buf, len, "%.6f", v / 1e6);
        break;
    case SIM_UNIT_USD:
        snprintf(buf, len, "%.4f", v);
        break;
    default:
        snprintf(buf, len, "%.6f", v);
        break;
    }
    if (strcmp(buf, "-0") == 0 || strncmp(buf, "-0.", 3) == 0) {
        /* -0.000000 and 0.000000 are the same number: print one of them */
        bool zero = true;
        for (const char *c = buf + 1; *c; c++) zero = zero && (*c == '0' || *c == '.');
        if (zero) memmove(buf, buf + 1, strlen(buf));
    }
}

void sweep_format_human(char *buf, size_t len, double v, sim_unit unit) {
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return;
    }
    switch (unit) {
    case SIM_UNIT_US:
        rep_format_duration(buf, len, v);
        break;
    case SIM_UNIT_USD:
        snprintf(buf, len, v < 0 ? "-$%.2f" : "$%.2f", fabs(v));
        break;
    case SIM_UNIT_RATIO:
        snprintf(buf, len, "%.6f", v);
        break;
    default:
        snprintf(buf, len, v == floor(v) ? "%.0f" : "%.1f", v);
        break;
    }
}

/* ---- CSV ---- */

static void csv_field(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_dim_values(FILE *f, const rep_sweep *sw, uint64_t p) {
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        fputc(',', f);
        csv_field(f, v);
    }
}

static void write_runs_csv(FILE *f, const rep_sweep *sw) {
    fputs("point,seed", f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        fputc(',', f);
        csv_field(f, sw->dims[d].key);
    }
    fputs(",complete", f);
    for (size_t m = 0; m < sw->metric_count; m++) fprintf(f, ",%s", sw->metrics[m]);
    fputc('\n', f);
    for (uint64_t t = 0; t < sw->tasks; t++) {
        uint64_t p = t / sw->seeds;
        fprintf(f, "%" PRIu64 ",%" PRIu64, p, sw->seed + t % sw->seeds);
        csv_dim_values(f, sw, p);
        fprintf(f, ",%d", sw->state[t] == 1);
        for (size_t m = 0; m < sw->metric_count; m++) {
            char v[64];
            format_value(v, sizeof v, sw->values[t * sw->metric_count + m], sw->units[m], false);
            fprintf(f, ",%s", v);
        }
        fputc('\n', f);
    }
}

static void write_points_csv(FILE *f, const rep_sweep *sw) {
    fputs("point", f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        fputc(',', f);
        csv_field(f, sw->dims[d].key);
    }
    fputs(",runs,feasible,pareto", f);
    for (size_t m = 0; m < sw->metric_count; m++)
        fprintf(f, ",%s,%s_ci_low,%s_ci_high", sw->metrics[m], sw->metrics[m], sw->metrics[m]);
    fputc('\n', f);
    for (uint64_t p = 0; p < sw->points; p++) {
        fprintf(f, "%" PRIu64, p);
        csv_dim_values(f, sw, p);
        fprintf(f, ",%u,%d,%d", sw->runs_ok[p], sw->feasible[p], sw->pareto[p]);
        for (size_t m = 0; m < sw->metric_count; m++) {
            rep_sweep_stat st;
            sweep_point_stat(sw, p, (int)m, &st);
            char a[64], b[64], c[64];
            format_value(a, sizeof a, st.mean, sw->units[m], true);
            format_value(b, sizeof b, st.ci_low, sw->units[m], true);
            format_value(c, sizeof c, st.ci_high, sw->units[m], true);
            fprintf(f, ",%s,%s,%s", a, b, c);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ---- */

void sweep_json_str(FILE *f, const char *s) {
    rep_json_string(f, s);
}

static void json_num(FILE *f, double v, sim_unit unit, bool mean) {
    char buf[64];
    format_value(buf, sizeof buf, v, unit, mean);
    fputs(buf[0] ? buf : "null", f);
}

/* A swept value as JSON: itself when it is JSON (0.5, true, {...}), else a string. */
static void json_setting(FILE *f, const char *v) {
    cJSON *j = cJSON_ParseWithOpts(v, NULL, 1);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    if (text)
        fputs(text, f);
    else
        sweep_json_str(f, v);
    cJSON_free(text);
    cJSON_Delete(j);
}

static void json_settings(FILE *f, const rep_sweep *sw, uint64_t p) {
    fputc('{', f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        fputs(d ? ", " : "", f);
        sweep_json_str(f, sw->dims[d].key);
        fputs(": ", f);
        json_setting(f, v);
    }
    fputc('}', f);
}

static void json_stat(FILE *f, const rep_sweep_stat *st, sim_unit unit) {
    fputs("{\"mean\": ", f);
    json_num(f, st->mean, unit, true);
    fputs(", \"sd\": ", f);
    json_num(f, st->sd, unit, true);
    fputs(", \"ci95\": [", f);
    json_num(f, st->ci_low, unit, true);
    fputs(", ", f);
    json_num(f, st->ci_high, unit, true);
    fputs("]}", f);
}

static void json_point_or_null(FILE *f, int64_t p) {
    if (p < 0)
        fputs("null", f);
    else
        fprintf(f, "%" PRId64, p);
}

static void write_dims_json(FILE *f, const rep_sweep *sw) {
    fputs("  \"dimensions\": [", f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        const rep_sweep_dim *dim = &sw->dims[d];
        fputs(d ? ",\n    {\"key\": " : "\n    {\"key\": ", f);
        sweep_json_str(f, dim->key);
        fputs(", \"path\": ", f);
        sweep_json_str(f, sw->paths[d]);
        if (dim->kind == REP_SWEEP_LIST) {
            fputs(", \"values\": [", f);
            for (uint32_t v = 0; v < dim->value_count; v++) {
                fputs(v ? ", " : "", f);
                json_setting(f, dim->values[v]);
            }
            fputs("]}", f);
        } else {
            fprintf(f,
                    ", \"range\": {\"low\": %.17g, \"high\": %.17g, \"type\": \"%s\", "
                    "\"scale\": \"%s\"}}",
                    dim->lo, dim->hi,
                    dim->type == REP_SWEEP_DURATION  ? "duration_us"
                    : dim->type == REP_SWEEP_INTEGER ? "integer"
                                                     : "number",
                    dim->log ? "log" : "linear");
        }
    }
    fputs("\n  ],\n", f);
}

static void write_objective_json(FILE *f, const rep_sweep *sw) {
    fputs("  \"objective\": ", f);
    if (!sw->objective[0]) {
        fputs("null,\n", f);
        return;
    }
    fputs("{\"metric\": ", f);
    sweep_json_str(f, sw->objective);
    fprintf(f, ", \"sense\": \"%s\", \"judged_on\": \"%s\", \"subject_to\": [",
            sw->sense < 0 ? "maximize" : "minimize", sw->strict ? "ci95" : "mean");
    for (size_t c = 0; c < sw->con_count; c++) {
        fputs(c ? ", " : "", f);
        sweep_json_str(f, sw->cons[c].text);
    }
    fprintf(f, "], \"feasible_points\": %" PRIu64 ", \"best\": ", sw->feasible_count);
    json_point_or_null(f, sw->best);
    fputs(", \"runner_up\": ", f);
    json_point_or_null(f, sw->runner_up);
    fputs(", \"closest_infeasible\": ", f);
    json_point_or_null(f, sw->best < 0 ? sw->closest : -1);
    fputs("},\n", f);
}

static void write_json(FILE *f, const rep_sweep *sw) {
    fputs("{\n  \"fusebox\": ", f);
    sweep_json_str(f, FB_VERSION);
    fputs(",\n  \"scenario\": ", f);
    sweep_json_str(f, sw->base->name);
    fputs(",\n  \"file\": ", f);
    sweep_json_str(f, sw->file);
    fprintf(f, ",\n  \"scenario_fnv1a64\": \"%016" PRIx64 "\",\n  \"variant\": ", sw->hash);
    sweep_json_str(f, sw->variant);
    fputs(",\n  \"sets\": [", f);
    for (size_t i = 0; i < sw->set_count; i++) {
        fputs(i ? ", " : "", f);
        sweep_json_str(f, sw->sets[i]);
    }
    fprintf(f, "],\n  \"design\": \"%s\",\n  \"points\": %" PRIu64 ",\n  \"seeds\": [",
            sw->sample ? "latin_hypercube" : "full_factorial", sw->points);
    for (uint32_t s = 0; s < sw->seeds; s++) fprintf(f, "%s%" PRIu64, s ? ", " : "", sw->seed + s);
    fprintf(f, "],\n  \"runs\": %" PRIu64 ",\n  \"failed_runs\": %" PRIu64 ",\n", sw->tasks,
            sw->failed);
    write_dims_json(f, sw);
    write_objective_json(f, sw);
    fputs("  \"pareto\": {\"minimised\": [\"blast_radius\", \"cost_usd\", \"latency_p99\"], "
          "\"points\": [",
          f);
    bool first = true;
    for (uint64_t p = 0; p < sw->points; p++)
        if (sw->pareto[p]) {
            fprintf(f, "%s%" PRIu64, first ? "" : ", ", p);
            first = false;
        }
    fputs("]},\n  \"results\": [", f);
    for (uint64_t p = 0; p < sw->points; p++) {
        fprintf(f, "%s\n    {\"point\": %" PRIu64 ", \"settings\": ", p ? "," : "", p);
        json_settings(f, sw, p);
        fprintf(f, ", \"runs\": %u, \"feasible\": %s, \"pareto\": %s,\n     \"metrics\": {",
                sw->runs_ok[p], sw->feasible[p] ? "true" : "false",
                sw->pareto[p] ? "true" : "false");
        for (size_t m = 0; m < sw->metric_count; m++) {
            rep_sweep_stat st;
            sweep_point_stat(sw, p, (int)m, &st);
            fputs(m ? ",\n       " : "\n       ", f);
            sweep_json_str(f, sw->metrics[m]);
            fputs(": ", f);
            json_stat(f, &st, sw->units[m]);
        }
        fputs("}}", f);
    }
    fputs("\n  ]\n}\n", f);
}

static FILE *open_in(const char *dir, const char *name, char *msg, size_t msglen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, char *msg, size_t msglen) {
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s/%s: %s", dir, name,
                          strerror(errno));
    return FB_OK;
}

int rep_sweep_write_outputs(rep_sweep *sw, const char *dir, bool charts, char *msg, size_t msglen) {
    if (!sw->analysed) {
        int rc = rep_sweep_analyse(sw);
        if (rc != FB_OK) return sweep_fail(msg, msglen, rc, "some runs have no result");
    }
    static const char *const names[3] = {"sweep.csv", "sweep-points.csv", "sweep.json"};
    for (int i = 0; i < 3; i++) {
        FILE *f = open_in(dir, names[i], msg, msglen);
        if (f == NULL) return FB_EIO;
        if (i == 0)
            write_runs_csv(f, sw);
        else if (i == 1)
            write_points_csv(f, sw);
        else
            write_json(f, sw);
        int rc = close_checked(f, dir, names[i], msg, msglen);
        if (rc != FB_OK) return rc;
    }
    if (!charts) return FB_OK;
    /* without gnuplot the page is still written, saying why it has no charts */
    int rc = sweep_write_charts(sw, dir, msg, msglen);
    if (rc != FB_OK && rc != FB_ENOTFOUND) return rc;
    char note[512];
    snprintf(note, sizeof note, "%s", rc == FB_ENOTFOUND ? msg : "");
    char *answer = NULL;
    size_t alen = 0;
    FILE *mem = open_memstream(&answer, &alen);
    if (mem == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    rep_sweep_write_answer(mem, sw);
    fclose(mem);
    int hrc = sweep_write_html(sw, dir, answer ? answer : "", note[0] ? note : NULL, msg, msglen);
    free(answer);
    if (hrc != FB_OK) return hrc;
    if (rc != FB_OK) snprintf(msg, msglen, "%s", note);
    return rc;
}

/* ---- the answer ---- */

static void answer_metric(FILE *f, const rep_sweep *sw, uint64_t p, const char *metric) {
    int m = sweep_metric_index(sw, metric);
    if (m < 0) return;
    rep_sweep_stat st;
    sweep_point_stat(sw, p, m, &st);
    char mean[64], lo[64], hi[64];
    sweep_format_human(mean, sizeof mean, st.mean, sw->units[m]);
    sweep_format_human(lo, sizeof lo, st.ci_low, sw->units[m]);
    sweep_format_human(hi, sizeof hi, st.ci_high, sw->units[m]);
    fprintf(f, "  %-22s %14s", metric, mean);
    if (st.n >= 2)
        fprintf(f, "   95%% CI [%s, %s]", lo, hi);
    else
        fputs("   (one run: no CI)", f);
    for (size_t c = 0; c < sw->con_count; c++) {
        const rep_sweep_constraint *k = &sw->cons[c];
        if (strcmp(k->metric, metric) != 0) continue;
        bool ok = rep_sweep_constraint_holds(k, judged_value(sw, &st, k));
        bool sure = st.n >= 2 && rep_sweep_constraint_holds(k, st.ci_low) &&
                    rep_sweep_constraint_holds(k, st.ci_high);
        fprintf(f, "   %s: %s", k->text,
                !ok                ? (sw->strict && rep_sweep_constraint_holds(k, st.mean)
                                          ? "VIOLATED by the CI (--strict)"
                                          : "VIOLATED")
                : sure || st.n < 2 ? "ok"
                                   : "ok on the mean; the CI crosses it");
    }
    fputc('\n', f);
}

static void answer_metrics(FILE *f, const rep_sweep *sw, uint64_t p) {
    const char *shown[REP_SWEEP_CONSTRAINTS_MAX + 8];
    size_t n = 0;
    if (sw->objective[0]) shown[n++] = sw->objective;
    for (size_t c = 0; c < sw->con_count; c++) shown[n++] = sw->cons[c].metric;
    static const char *const extra[] = {"success_rate", "blast_radius", "cost_usd", "latency_p99"};
    for (size_t e = 0; e < 4; e++) shown[n++] = extra[e];
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i; j++) dup = dup || strcmp(shown[i], shown[j]) == 0;
        if (!dup) answer_metric(f, sw, p, shown[i]);
    }
}

static void print_shell_quoted(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* The variant's policy (variants.NAME, or policy) at point p, with 2-space indents. */
static void answer_policy(FILE *f, const rep_sweep *sw, uint64_t p) {
    sim_scenario *sc = NULL;
    sim_error err;
    if (load_point(sw, p, NULL, &sc, &err) != FB_OK) return;
    const cJSON *root = sc->json;
    const cJSON *pol = sw->has_variants
                           ? cJSON_GetObjectItemCaseSensitive(
                                 cJSON_GetObjectItemCaseSensitive(root, "variants"), sw->variant)
                           : cJSON_GetObjectItemCaseSensitive(root, "policy");
    cJSON *empty = pol ? NULL : cJSON_CreateObject();
    char *pretty = cJSON_Print(pol ? pol : empty);
    char *line = cJSON_PrintUnformatted(pol ? pol : empty);
    char where[SIM_NAME_MAX + 16];
    if (sw->has_variants)
        snprintf(where, sizeof where, "variants.%s", sw->variant);
    else
        snprintf(where, sizeof where, "policy");
    fprintf(f, "\npolicy (the %s entry of %s, with the best point's values):\n", where, sw->file);
    /* cJSON indents with tabs and puts one after each colon; strings hold no raw tabs */
    for (const char *c = pretty ? pretty : "{}"; *c; c++) {
        if (*c == '\t')
            fputs(c > pretty && c[-1] == ':' ? " " : "  ", f);
        else
            fputc(*c, f);
    }
    fputs("\nor run it: fusebox run ", f);
    fputs(sw->file, f);
    for (size_t i = 0; i < sw->set_count; i++) {
        fputs(" --set ", f);
        print_shell_quoted(f, sw->sets[i]);
    }
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        if (!sw->absolute[d]) continue;
        char v[SWEEP_VALUE_MAX], set[SWEEP_PATH_MAX + SWEEP_VALUE_MAX + 2];
        sweep_point_value(sw, p, d, v, sizeof v);
        snprintf(set, sizeof set, "%s=%s", sw->paths[d], v);
        fputs(" --set ", f);
        print_shell_quoted(f, set);
    }
    fprintf(f, " --set %s='", where);
    for (const char *c = line ? line : "{}"; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", f);
        else
            fputc(*c, f);
    }
    fputs("'\n", f);
    cJSON_free(pretty);
    cJSON_free(line);
    cJSON_Delete(empty);
    sim_scenario_free(sc);
}

static void answer_runner_up(FILE *f, const rep_sweep *sw) {
    char label[1024], a[64], b[64], c[64], d[64];
    int m = sweep_metric_index(sw, sw->objective);
    uint64_t best = (uint64_t)sw->best, ru = (uint64_t)sw->runner_up;
    sweep_point_label(sw, ru, label, sizeof label);
    rep_sweep_stat sb, sr, diff;
    sweep_point_stat(sw, best, m, &sb);
    sweep_point_stat(sw, ru, m, &sr);
    /* common random numbers: both points saw the same seeds, so compare seed by seed */
    double x[REP_SWEEP_SEEDS_MAX];
    uint32_t n = 0;
    for (uint32_t s = 0; s < sw->seeds; s++) {
        uint64_t tb = best * sw->seeds + s, tr = ru * sw->seeds + s;
        if (sw->state[tb] == 1 && sw->state[tr] == 1)
            x[n++] = sw->values[tr * sw->metric_count + (size_t)m] -
                     sw->values[tb * sw->metric_count + (size_t)m];
    }
    rep_sweep_stat_of(x, n, &diff);
    sweep_format_human(a, sizeof a, sr.mean, sw->units[m]);
    sweep_format_human(b, sizeof b, fabs(diff.mean), sw->units[m]);
    fprintf(f, "\nrunner-up: point %" PRIu64 "  %s\n  %s %s, %s %s than the best", ru, label,
            sw->objective, a, b, (diff.mean > 0) == (sw->sense > 0) ? "worse" : "better");
    if (sb.mean != 0 && !isnan(sb.mean)) fprintf(f, " (%.2g%%)", 100 * fabs(diff.mean / sb.mean));
    if (n >= 2) {
        sweep_format_human(c, sizeof c, diff.ci_low, sw->units[m]);
        sweep_format_human(d, sizeof d, diff.ci_high, sw->units[m]);
        bool separated = diff.ci_low > 0 || diff.ci_high < 0;
        fprintf(f, ";\n  paired over %u seeds, runner-up minus best: 95%% CI [%s, %s]: %s\n", n, c,
                d,
                separated ? "the best is better at 95% confidence"
                          : "not distinguishable at this many seeds (try more --seeds)");
    } else {
        fputs("; one seed: no confidence interval (use --seeds)\n", f);
    }
}

void rep_sweep_write_answer(FILE *f, const rep_sweep *sw) {
    char label[1024];
    fprintf(f, "sweep: %s, variant %s, %" PRIu64 " points x %u seeds = %" PRIu64 " runs (%s)\n",
            sw->base->name, sw->variant, sw->points, sw->seeds, sw->tasks,
            sw->sample ? "Latin hypercube" : "full factorial");
    if (sw->failed > 0)
        fprintf(f, "%" PRIu64 " runs failed and are left out of the statistics\n", sw->failed);
    if (!sw->objective[0]) {
        fprintf(f,
                "Pareto front (blast_radius, cost_usd, latency_p99, all minimised): %" PRIu64
                " of %" PRIu64 " points\n",
                sw->pareto_count, sw->points);
        uint64_t shown = 0;
        for (uint64_t p = 0; p < sw->points && shown < 10; p++) {
            if (!sw->pareto[p]) continue;
            char br[64], cost[64], lat[64];
            sweep_format_human(br, sizeof br, point_mean(sw, p, "blast_radius"), SIM_UNIT_COUNT);
            sweep_format_human(cost, sizeof cost, point_mean(sw, p, "cost_usd"), SIM_UNIT_USD);
            sweep_format_human(lat, sizeof lat, point_mean(sw, p, "latency_p99"), SIM_UNIT_US);
            sweep_point_label(sw, p, label, sizeof label);
            fprintf(f, "  point %" PRIu64 "  blast_radius %s  cost %s  p99 %s  %s\n", p, br, cost,
                    lat, label);
            shown++;
        }
        if (sw->pareto_count > shown) fputs("  ... (sweep.json has them all)\n", f);
        fputs("add --minimize METRIC [--subject-to ...] for a recommendation\n", f);
        return;
    }
    fprintf(f, "objective: %s %s", sw->sense < 0 ? "maximise" : "minimise", sw->objective);
    for (size_t c = 0; c < sw->con_count; c++)
        fprintf(f, "%s%s", c ? ", " : " subject to ", sw->cons[c].text);
    if (sw->con_count) fputs(sw->strict ? " (judged on the 95% CI)" : " (judged on the mean)", f);
    fprintf(f, "\nfeasible: %" PRIu64 " of %" PRIu64 " points\n", sw->feasible_count, sw->points);
    if (sw->best < 0) {
        fprintf(f, "\nno point satisfies %s\n", sw->subject_to[0] ? sw->subject_to : "the run");
        if (sw->closest >= 0) {
            sweep_point_label(sw, (uint64_t)sw->closest, label, sizeof label);
            fprintf(f, "closest: point %" PRId64 "  %s\n", sw->closest, label);
            answer_metrics(f, sw, (uint64_t)sw->closest);
        }
        return;
    }
    sweep_point_label(sw, (uint64_t)sw->best, label, sizeof label);
    fprintf(f, "\nbest: point %" PRId64 "  %s\n", sw->best, label);
    answer_metrics(f, sw, (uint64_t)sw->best);
    answer_policy(f, sw, (uint64_t)sw->best);
    if (sw->runner_up >= 0)
        answer_runner_up(f, sw);
    else
        fputs("\nrunner-up: none (only one point is feasible)\n", f);
}
