/*
 * define.c - a sweep's definition: the arguments checked, the grid's keys
 * resolved to --set paths, every point validated, the tasks counted and the
 * metric columns named. See sweep.h and docs/sweeps.md.
 */
#include "sweep/sweepint.h"
#include "util/file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SCENARIO_TEXT_MAX (16u * 1024 * 1024)

int sweep_fail(char *msg, size_t msglen, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return rc;
}

int sweep_read_file(const char *path, size_t max, char **out, size_t *len, char *msg,
                    size_t msglen) {
    *out = util_read_file(path, max, len);
    if (*out != NULL) return FB_OK;
    int e = errno;
    if (e == ENOMEM) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    if (e == EFBIG)
        return sweep_fail(msg, msglen, FB_ECAP, "%s: larger than %zu MiB", path, max >> 20);
    if (e == EIO) return sweep_fail(msg, msglen, FB_EIO, "%s: read error", path);
    return sweep_fail(msg, msglen, FB_EIO, "%s: cannot open: %s", path, strerror(e));
}

typedef struct point_sets {
    const char *v[SWEEP_SETS_MAX + SWEEP_DIMS_MAX];
    char *owned[SWEEP_DIMS_MAX];
    size_t n;
} point_sets;

static void point_sets_free(point_sets *ps) {
    for (size_t i = 0; i < SWEEP_DIMS_MAX; i++) free(ps->owned[i]);
}

/* The sweep's own --set values, then one "path=value" per dimension. */
static int point_sets_build(const sweep *sw, uint64_t p, point_sets *ps) {
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

int sweep_load_point(const sweep *sw, uint64_t p, const uint64_t *seed, sim_scenario **sc,
                     sim_error *err) {
    point_sets ps;
    if (point_sets_build(sw, p, &ps) != FB_OK) {
        memset(err, 0, sizeof *err);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    int rc =
        scn_parse_import(sw->text, sw->text_len, sw->file, ps.v, ps.n, seed, sw->import, sc, err);
    point_sets_free(&ps);
    if (rc == FB_OK && scn_variant(*sc, sw->variant) < 0) {
        snprintf(err->path, sizeof err->path, "variants");
        snprintf(err->msg, sizeof err->msg, "no variant named '%s' any more", sw->variant);
        scn_free(*sc);
        *sc = NULL;
        rc = FB_EINVAL;
    }
    return rc;
}

/* The dimension an error is about: its path is the error's path or a prefix of it. */
static int blame_dim(const sweep *sw, const sim_error *err) {
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        size_t n = strlen(sw->paths[d]);
        if (err->path[0] && strncmp(err->path, sw->paths[d], n) == 0 &&
            (err->path[n] == '\0' || err->path[n] == '.' || err->path[n] == '['))
            return (int)d;
        if (!err->path[0] && strstr(err->msg, sw->paths[d])) return (int)d;
    }
    return -1;
}

static int validate_points(sweep *sw, char *msg, size_t msglen) {
    for (uint64_t p = 0; p < sw->points; p++) {
        sim_scenario *sc = NULL;
        sim_error err;
        int rc = sweep_load_point(sw, p, NULL, &sc, &err);
        scn_free(sc);
        if (rc == FB_OK) continue;
        char where[1100], label[1024];
        scn_error_format(&err, where, sizeof where);
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

static int add_dims(sweep *sw, const sweep_args *a, char *msg, size_t msglen) {
    if (a->grid_count == 0)
        return sweep_fail(msg, msglen, FB_EINVAL, "give at least one --grid KEY=v1,v2,...");
    if (a->grid_count > SWEEP_DIMS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "at most %d --grid dimensions", SWEEP_DIMS_MAX);
    sw->grid_args = calloc(a->grid_count, sizeof *sw->grid_args);
    if (sw->grid_args == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->grid_count; i++) {
        sweep_dim *dim = &sw->dims[i];
        int rc = sweep_parse_grid(a->grids[i], dim, msg, msglen);
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
        sw->absolute[i] = scn_top_key(dim->key); /* the scenario's top level */
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
        if (a->sample == 0 && dim->kind == SWEEP_RANGE)
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "--grid %s: a range needs --sample N (or list the values: a,b,c)",
                              a->grids[i]);
    }
    return FB_OK;
}

static int size_sweep(sweep *sw, const sweep_args *a, char *msg, size_t msglen) {
    sw->seeds = a->seeds ? a->seeds : 3;
    if (sw->seeds > SWEEP_SEEDS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "--seeds: at most %d", SWEEP_SEEDS_MAX);
    sw->sample = a->sample;
    uint64_t points = 1;
    if (sw->sample > 0) {
        points = sw->sample;
    } else {
        for (uint32_t d = 0; d < sw->dim_count; d++) {
            points *= sw->dims[d].value_count;
            if (points > SWEEP_TASKS_MAX) break;
        }
    }
    sw->points = points;
    if (points > SWEEP_TASKS_MAX || points * sw->seeds > SWEEP_TASKS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP,
                          "the sweep has %s%" PRIu64 " points x %u seeds; the cap is %d runs (use "
                          "fewer values, --sample N or fewer --seeds)",
                          points > SWEEP_TASKS_MAX ? "over " : "", points, sw->seeds,
                          SWEEP_TASKS_MAX);
    sw->tasks = points * sw->seeds;
    if (sw->sample > 0) {
        sw->u = malloc(points * sw->dim_count * sizeof *sw->u);
        if (sw->u == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        sweep_lhs(sw->sample, sw->dim_count, sw->seed, sw->u);
    }
    return FB_OK;
}

/* The swept variant's layers, when it declares them (its metrics then have columns). */
static const sim_policy *layered_variant(const sweep *sw) {
    int v = scn_variant(sw->base, sw->variant);
    return v >= 0 && sw->base->variants[v].layered ? &sw->base->variants[v] : NULL;
}

/* "BASE[NAME]" into out (SWEEP_METRIC_MAX); false if it does not fit (never cut). */
static bool metric_name(char *out, const char *base, int blen, const char *name) {
    int w = snprintf(out, SWEEP_METRIC_MAX, "%.*s[%s]", blen, base, name);
    return w >= 0 && w < SWEEP_METRIC_MAX;
}

/* Every metric of sim/metrics.h: the scalar ones, then per provider, then per layer. */
static int add_metrics(sweep *sw, char *msg, size_t msglen) {
    size_t n = 0, cap = 0;
    const sim_policy *lv = layered_variant(sw);
    for (const sim_metric *d = sim_metrics(); d->name; d++)
        cap += !sim_metric_shown(sw->base, d) ? 0
               : d->per_provider              ? sw->base->provider_count
               : d->per_layer                 ? (lv ? lv->layer_count : 0)
                                              : 1;
    sw->metrics = calloc(cap, sizeof *sw->metrics);
    sw->units = calloc(cap, sizeof *sw->units);
    if (sw->metrics == NULL || sw->units == NULL)
        return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    for (const sim_metric *d = sim_metrics(); d->name; d++) {
        if (d->per_provider || d->per_layer || d->per_class || !sim_metric_shown(sw->base, d))
            continue;
        snprintf(sw->metrics[n], SWEEP_METRIC_MAX, "%s", d->name);
        sw->units[n++] = d->unit;
    }
    for (const sim_metric *d = sim_metrics(); lv && d->name; d++) {
        if (!d->per_layer || !sim_metric_shown(sw->base, d)) continue;
        int blen = (int)(strlen(d->name) - 2); /* without "[]" */
        for (uint32_t l = 0; l < lv->layer_count; l++) {
            if (!metric_name(sw->metrics[n], d->name, blen, lv->layers[l].name))
                return sweep_fail(msg, msglen, FB_ECAP, "metric %s: layer name too long", d->name);
            sw->units[n++] = d->unit;
        }
    }
    for (const sim_metric *d = sim_metrics(); d->name; d++) {
        if (!d->per_provider || !sim_metric_shown(sw->base, d)) continue;
        int blen = (int)(strlen(d->name) - 2); /* without "[]" */
        for (uint32_t p = 0; p < sw->base->provider_count; p++) {
            if (!metric_name(sw->metrics[n], d->name, blen, sw->base->providers[p].name))
                return sweep_fail(msg, msglen, FB_ECAP, "metric %s: provider name too long",
                                  d->name);
            sw->units[n++] = d->unit;
        }
    }
    sw->metric_count = n;
    return FB_OK;
}

static int set_analysis(sweep *sw, const sweep_args *a, char *msg, size_t msglen) {
    char m[512];
    if (a->objective) {
        if (sweep_check_metric(sw->base, a->objective, NULL, m, sizeof m) != FB_OK)
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
        int rc = sweep_parse_constraints(a->subject_to, sw->base, sw->cons, SWEEP_CONSTRAINTS_MAX,
                                         &sw->con_count, msg, msglen);
        if (rc != FB_OK) return rc;
    }
    const char *heat = a->heatmap ? a->heatmap : sw->objective[0] ? sw->objective : NULL;
    if (heat && sweep_check_metric(sw->base, heat, NULL, m, sizeof m) != FB_OK)
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

static int resolve_variant(sweep *sw, const char *variant, char *msg, size_t msglen) {
    const sim_scenario *b = sw->base;
    int v = variant ? scn_variant(b, variant) : (int)b->variant_count - 1;
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

/* The scenario text (read from the file unless given) and the sweep's own --set values. */
static int take_inputs(sweep *sw, const sweep_args *a, char *msg, size_t msglen) {
    snprintf(sw->file, sizeof sw->file, "%s", a->scenario_file);
    if (a->scenario_text) {
        sw->text = malloc(a->scenario_len + 1);
        if (sw->text == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        memcpy(sw->text, a->scenario_text, a->scenario_len);
        sw->text[a->scenario_len] = '\0';
        sw->text_len = a->scenario_len;
    } else {
        int rc = sweep_read_file(a->scenario_file, SCENARIO_TEXT_MAX, &sw->text, &sw->text_len, msg,
                                 msglen);
        if (rc != FB_OK) return rc;
    }
    sw->hash = sweep_hash(sw->text, sw->text_len);
    if (a->set_count > SWEEP_SETS_MAX)
        return sweep_fail(msg, msglen, FB_ECAP, "at most %d --set options", SWEEP_SETS_MAX);
    sw->import = a->import;
    sw->sets = calloc(a->set_count + 1, sizeof *sw->sets);
    if (sw->sets == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->set_count; i++) {
        sw->sets[i] = strdup(a->sets[i]);
        if (sw->sets[i] == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
        sw->set_count = i + 1;
    }
    return FB_OK;
}

/* The scenario with the sweep's --set applied: what the points start from. */
static int load_base(sweep *sw, const uint64_t *seed, char *msg, size_t msglen) {
    sim_error err;
    int rc = scn_parse_import(sw->text, sw->text_len, sw->file, (const char *const *)sw->sets,
                              sw->set_count, seed, sw->import, &sw->base, &err);
    if (rc != FB_OK) {
        char where[1100];
        scn_error_format(&err, where, sizeof where);
        return sweep_fail(msg, msglen, rc, "%s", where);
    }
    sw->seed = sw->base->seed;
    return FB_OK;
}

int sweep_create(const sweep_args *a, sweep **out, char *msg, size_t msglen) {
    *out = NULL;
    sweep *sw = calloc(1, sizeof *sw);
    if (sw == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    sw->best = sw->runner_up = sw->closest = -1;
    sw->heat_x = sw->heat_y = -1;
    int rc = take_inputs(sw, a, msg, msglen);
    if (rc == FB_OK) rc = load_base(sw, a->seed, msg, msglen);
    if (rc == FB_OK) rc = resolve_variant(sw, a->variant, msg, msglen);
    if (rc == FB_OK) rc = add_dims(sw, a, msg, msglen);
    if (rc == FB_OK) rc = size_sweep(sw, a, msg, msglen);
    if (rc == FB_OK) rc = add_metrics(sw, msg, msglen);
    if (rc == FB_OK) rc = set_analysis(sw, a, msg, msglen);
    if (rc == FB_OK) rc = validate_points(sw, msg, msglen);
    if (rc == FB_OK) {
        sw->values = calloc(sw->tasks * sw->metric_count, sizeof *sw->values);
        sw->state = calloc(sw->tasks, sizeof *sw->state);
        sw->errors = calloc(sw->tasks, sizeof *sw->errors);
        if (sw->values == NULL || sw->state == NULL || sw->errors == NULL)
            rc = sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    }
    if (rc != FB_OK) {
        sweep_destroy(sw);
        return rc;
    }
    *out = sw;
    return FB_OK;
}

void sweep_destroy(sweep *sw) {
    if (sw == NULL) return;
    free(sw->text);
    scn_free(sw->base);
    for (size_t i = 0; i < sw->set_count; i++) free(sw->sets[i]);
    free(sw->sets);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        sweep_dim_free(&sw->dims[d]);
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
    free(sw->manifest);
    free(sw);
}

uint64_t sweep_task_count(const sweep *sw) {
    return sw->tasks;
}

uint64_t sweep_point_count(const sweep *sw) {
    return sw->points;
}

size_t sweep_metric_count(const sweep *sw) {
    return sw->metric_count;
}

const char *sweep_scenario_name(const sweep *sw) {
    return sw->base->name;
}

uint64_t sweep_hash(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
