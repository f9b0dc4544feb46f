/*
 * load_dist.c - the scenario format's distributions (scenario/dist.h): a
 * constant, or an object with one key naming the kind. Each kind's keys are a
 * table (scenario/table.h), one set for distributions of durations and one for
 * distributions of counts; the loader reads them through the walker, `--set`
 * checks paths below a distribution against them, and `make schema` writes
 * docs/scenario.schema.json's duration_dist and count_dist from them.
 */
#include "scenario/loadint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenario/dist.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- scalars and lists (base: double; dist_list) ---- */

/* A scalar of a distribution of durations: a duration string, zero allowed (microseconds). */
static int duration_scalar(pctx *P, const cJSON *v, void *out) {
    fb_time_us d = 0;
    int rc = scn__get_duration_value(P, v, &d, true);
    *(double *)out = (double)d;
    return rc;
}

/* A scalar of a distribution of counts (tokens, a factor): a non-negative number. */
static int count_scalar(pctx *P, const cJSON *v, void *out) {
    if (!cJSON_IsNumber(v)) return scn__fail(P, "expected a number, got %s", scn__type_name(v));
    if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble))
        return scn__fail(P, "must be a non-negative number");
    *(double *)out = v->valuedouble;
    return FB_OK;
}

/* An empirical distribution's values or weights. */
typedef struct dist_list {
    uint32_t n;
    double x[SIM_DIST_POINTS_MAX];
} dist_list;

typedef struct dist_points {
    dist_list values, weights;
} dist_points;

/* An array of 1 to SIM_DIST_POINTS_MAX scalars (out: dist_list). */
static int scalar_list(pctx *P, const cJSON *arr, bool duration, dist_list *out) {
    out->n = 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 ||
        cJSON_GetArraySize(arr) > SIM_DIST_POINTS_MAX) /* explicit: the items fill out->x */
        return scn__fail(P, "expected an array of 1 to %d %s", SIM_DIST_POINTS_MAX,
                         duration ? "durations" : "numbers");
    uint32_t i = 0;
    for (const cJSON *x = arr->child; x; x = x->next, i++) {
        size_t o = scn__push_index(P, i);
        if (duration)
            duration_scalar(P, x, &out->x[i]);
        else
            count_scalar(P, x, &out->x[i]);
        scn__pop(P, o);
    }
    out->n = i;
    return P->rc;
}

static int duration_list(pctx *P, const cJSON *v, void *out) {
    return scalar_list(P, v, true, out);
}

static int count_list(pctx *P, const cJSON *v, void *out) {
    return scalar_list(P, v, false, out);
}

/* ---- the kinds' keys ---- */

// clang-format off
#define DURATION "{\"$ref\": \"#/$defs/duration\"}"
#define COUNT "{\"type\": \"number\", \"minimum\": 0}"
#define POSITIVE_COUNT "{\"type\": \"number\", \"exclusiveMinimum\": 0}"
#define LIST_OF(item) \
    "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": " STR(SIM_DIST_POINTS_MAX) \
    ", \"items\": " item "}"
/* An object the kind's own table fills. */
#define KEYS_OBJECT \
    "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [], \"properties\": {}}"

/* A kind's key: a scalar (or a list) of the distribution's values, which must be there. */
#define KEY(name_, T, m, hook_, schema_, unit_, doc_) \
    {name_, LD_HOOK, LD_AT(T, m), .hook = hook_, .schema = schema_, \
     .flags = LD_F_REQUIRED | LD_F_PURE, .unit = unit_, .doc = doc_}

#define UNIFORM_ROWS(scalar, scalar_schema, what) \
    KEY("min", sim_dist, a, scalar, scalar_schema, what, "the smallest value"), \
    KEY("max", sim_dist, b, scalar, scalar_schema, what, "the largest value (at least `min`)")
#define EXPONENTIAL_ROWS(scalar, scalar_schema, what) \
    KEY("mean", sim_dist, a, scalar, scalar_schema, what, "the mean")
/* The median is not zero: the kind's code says so, after both keys (the p99 is at least it). */
#define LOGNORMAL_ROWS(scalar, median_schema, p99_schema, what) \
    KEY("median", sim_dist, a, scalar, median_schema, what, "the median, greater than zero"), \
    KEY("p99", sim_dist, b, scalar, p99_schema, what, "the 99th percentile (at least the median)")
#define EMPIRICAL_ROWS(list, item, what) \
    KEY("values", dist_points, values, list, LIST_OF(item), "array of " what, \
        "the values (1 to " STR(SIM_DIST_POINTS_MAX) ")"), \
    {"weights", LD_HOOK, LD_AT(dist_points, weights), .hook = count_list, \
     .schema = LIST_OF(COUNT), .flags = LD_F_PURE, .unit = "array of numbers ≥ 0", \
     .doc = "each value's weight, one each, not all zero (absent: equal)"}
// clang-format on

/* Each value kind's tables share a name: the docs' key table of duration_dist holds them all. */
const ld_section scn__duration_uniform_section = {
    "duration_dist", "/$defs/duration_dist/oneOf/1/properties/uniform",
    (const ld_field[]){UNIFORM_ROWS(duration_scalar, DURATION, "duration"), {0}}, "uniform."};
const ld_section scn__count_uniform_section = {
    "count_dist", "/$defs/count_dist/oneOf/1/properties/uniform",
    (const ld_field[]){UNIFORM_ROWS(count_scalar, COUNT, "number ≥ 0"), {0}}, "uniform."};
const ld_section scn__duration_exponential_section = {
    "duration_dist", "/$defs/duration_dist/oneOf/1/properties/exponential/oneOf/1",
    (const ld_field[]){EXPONENTIAL_ROWS(duration_scalar, DURATION, "duration"), {0}},
    "exponential."};
const ld_section scn__count_exponential_section = {
    "count_dist", "/$defs/count_dist/oneOf/1/properties/exponential/oneOf/1",
    (const ld_field[]){EXPONENTIAL_ROWS(count_scalar, COUNT, "number ≥ 0"), {0}}, "exponential."};
const ld_section scn__duration_lognormal_section = {
    "duration_dist", "/$defs/duration_dist/oneOf/1/properties/lognormal",
    (const ld_field[]){LOGNORMAL_ROWS(duration_scalar, "{\"$ref\": \"#/$defs/duration_positive\"}",
                                      DURATION, "duration"),
                       {0}},
    "lognormal."};
const ld_section scn__count_lognormal_section = {
    "count_dist", "/$defs/count_dist/oneOf/1/properties/lognormal",
    (const ld_field[]){LOGNORMAL_ROWS(count_scalar, POSITIVE_COUNT, POSITIVE_COUNT, "number > 0"),
                       {0}},
    "lognormal."};
const ld_section scn__duration_empirical_section = {
    "duration_dist", "/$defs/duration_dist/oneOf/1/properties/empirical",
    (const ld_field[]){EMPIRICAL_ROWS(duration_list, DURATION, "durations"), {0}}, "empirical."};
const ld_section scn__count_empirical_section = {
    "count_dist", "/$defs/count_dist/oneOf/1/properties/empirical",
    (const ld_field[]){EMPIRICAL_ROWS(count_list, COUNT, "numbers ≥ 0"), {0}}, "empirical."};

/* ---- the kinds (base: sim_dist) ---- */

/* What differs between the distributions of durations and of counts. */
typedef struct dist_tables {
    ld_parse_fn scalar;
    const ld_section *exponential, *uniform, *lognormal, *empirical;
} dist_tables;

static const dist_tables durations = {
    duration_scalar, &scn__duration_exponential_section, &scn__duration_uniform_section,
    &scn__duration_lognormal_section, &scn__duration_empirical_section};
static const dist_tables counts = {count_scalar, &scn__count_exponential_section,
                                   &scn__count_uniform_section, &scn__count_lognormal_section,
                                   &scn__count_empirical_section};

static int constant(pctx *P, const cJSON *v, const dist_tables *T, sim_dist *d) {
    d->kind = SIM_DIST_CONSTANT;
    return T->scalar(P, v, &d->a);
}

static int uniform(pctx *P, const cJSON *v, const dist_tables *T, sim_dist *d) {
    d->kind = SIM_DIST_UNIFORM;
    scn__fields(P, v, T->uniform, d);
    if (d->b < d->a) scn__fail(P, "max must be >= min");
    return P->rc;
}

/* The mean alone, or {"mean": ...}. */
static int exponential(pctx *P, const cJSON *v, const dist_tables *T, sim_dist *d) {
    d->kind = SIM_DIST_EXPONENTIAL;
    if (!cJSON_IsObject(v)) return T->scalar(P, v, &d->a);
    return scn__fields(P, v, T->exponential, d);
}

static int lognormal(pctx *P, const cJSON *v, const dist_tables *T, sim_dist *d) {
    d->kind = SIM_DIST_LOGNORMAL;
    scn__fields(P, v, T->lognormal, d);
    if (d->a <= 0) scn__fail(P, "median must be greater than zero");
    if (d->b < d->a) scn__fail(P, "p99 must be >= median");
    return P->rc;
}

/* The weights: one each, not all zero. */
static int check_weights(pctx *P, const dist_points *pts) {
    uint32_t nw = pts->weights.n;
    double total = 0;
    for (uint32_t i = 0; i < pts->values.n; i++) total += nw ? pts->weights.x[i] : 1;
    if (nw > 0 && nw != pts->values.n)
        return scn__fail(P, "%u weights for %u values: one each", nw, pts->values.n);
    if (!(total > 0)) return scn__fail(P, "%s", "the weights must not all be zero");
    return FB_OK;
}

/*
 * {"values": [...], "weights": [...]}: each value drawn with its weight's share (weights
 * optional: equal). a becomes the weighted median (what a mock or a live run's check uses
 * where it takes one value).
 */
static int empirical(pctx *P, const cJSON *v, const dist_tables *T, sim_dist *d) {
    dist_points pts;
    memset(&pts, 0, sizeof pts);
    d->kind = SIM_DIST_EMPIRICAL;
    scn__fields(P, v, T->empirical, &pts);
    d->n = pts.values.n;
    memcpy(d->v, pts.values.x, sizeof d->v);
    size_t old = scn__push_key(P, "weights");
    check_weights(P, &pts);
    scn__pop(P, old);
    const double *w = pts.weights.x;
    bool weighted = pts.weights.n > 0;
    double total = 0, sum = 0;
    d->a = 0;
    if (P->rc != FB_OK) return P->rc; /* explicit: the median of checked weights only */
    for (uint32_t i = 0; i < d->n; i++) total += weighted ? w[i] : 1;
    for (uint32_t i = 0; i < d->n; i++) {
        sum += weighted ? w[i] : 1;
        d->cw[i] = i + 1 == d->n ? 1 : sum / total;
        if (d->cw[i] >= 0.5 && (i == 0 || d->cw[i - 1] < 0.5)) d->a = d->v[i];
    }
    return FB_OK;
}

#define KIND_HOOKS(kind)                                                                           \
    static int duration_##kind(pctx *P, const cJSON *v, void *out) {                               \
        return kind(P, v, &durations, out);                                                        \
    }                                                                                              \
    static int count_##kind(pctx *P, const cJSON *v, void *out) {                                  \
        return kind(P, v, &counts, out);                                                           \
    }
KIND_HOOKS(constant)
KIND_HOOKS(uniform)
KIND_HOOKS(exponential)
KIND_HOOKS(lognormal)
KIND_HOOKS(empirical)

/* A kind: its value read by the kind's hook, its keys (if an object) by the kind's table. */
// clang-format off
#define KIND_ROW(name_, hook_, schema_, unit_, doc_, ...) \
    {name_, LD_HOOK, .offset = 0, .size = sizeof(sim_dist), .hook = hook_, .schema = schema_, \
     .flags = LD_F_PURE, .unit = unit_, .doc = doc_, __VA_ARGS__}
#define KIND_ROWS(p, scalar_schema, what) \
    KIND_ROW("constant", p##_constant, scalar_schema, what, "that value"), \
    KIND_ROW("uniform", p##_uniform, KEYS_OBJECT, "object", "uniform on [min, max]", \
             LD_SUB(&scn__##p##_uniform_section)), \
    KIND_ROW("exponential", p##_exponential, "{\"oneOf\": [" scalar_schema ", " KEYS_OBJECT "]}", \
             what ", or object", "exponential with that mean (the mean alone, or `{\"mean\": M}`)", \
             LD_SUB(&scn__##p##_exponential_section)), \
    KIND_ROW("lognormal", p##_lognormal, KEYS_OBJECT, "object", \
             "lognormal fitted to its median and 99th percentile", \
             LD_SUB(&scn__##p##_lognormal_section)), \
    KIND_ROW("empirical", p##_empirical, KEYS_OBJECT, "object", \
             "one of the values, each drawn with its weight's share", \
             LD_SUB(&scn__##p##_empirical_section))
// clang-format on

/* The kinds: an object with one of these keys. */
const ld_section scn__duration_dist_section = {
    "duration_dist", "/$defs/duration_dist/oneOf/1",
    (const ld_field[]){KIND_ROWS(duration, DURATION, "duration"), {0}}, NULL};
const ld_section scn__count_dist_section = {
    "count_dist", "/$defs/count_dist/oneOf/1",
    (const ld_field[]){KIND_ROWS(count, COUNT, "number ≥ 0"), {0}}, NULL};
/* The value of each (`make schema` writes its $defs). */
const ld_kinds scn__kinds[] = {
    {&scn__duration_dist_section,
     "a duration: a duration string, or one of %s with duration strings"},
    {&scn__count_dist_section, "a token count: a number, or one of %s"},
    {NULL, NULL}};

/* ---- a distribution ---- */

static int parse_dist(pctx *P, const cJSON *v, bool duration, sim_dist *out) {
    if (P->rc != FB_OK) return P->rc;
    const ld_section *s = duration ? &scn__duration_dist_section : &scn__count_dist_section;
    if (cJSON_IsNumber(v) || cJSON_IsString(v)) {
        out->kind = SIM_DIST_CONSTANT;
        out->b = 0;
        return duration ? duration_scalar(P, v, &out->a) : count_scalar(P, v, &out->a);
    }
    if (cJSON_IsObject(v) && v->child && v->child->next == NULL) scn__check_fields(P, v, s);
    /* the one key a kind ("description" alone is allowed by the key check, and not a kind) */
    if (!cJSON_IsObject(v) || v->child == NULL || v->child->next != NULL ||
        strcmp(v->child->string, "description") == 0)
        return scn__fail(P,
                         "expected %s or an object with one of: constant, uniform, exponential, "
                         "lognormal, empirical",
                         duration ? "a duration" : "a number");
    scn__read_fields(P, v, s, out);
    scn_dist_prepare(out);
    return P->rc;
}

int scn__duration_dist(pctx *P, const cJSON *v, void *out) {
    return parse_dist(P, v, true, out);
}

int scn__count_dist(pctx *P, const cJSON *v, void *out) {
    return parse_dist(P, v, false, out);
}

int scn__get_dist_value(pctx *P, const cJSON *v, bool duration, sim_dist *out) {
    return parse_dist(P, v, duration, out);
}

int scn_dist_parse(const char *text, size_t len, const char *what, bool duration, sim_dist *out,
                   sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", what);
    cJSON *v = scn__parse_json(text, len, err);
    if (v == NULL) return FB_EPARSE;
    pctx P = {err, "", 0, false, NULL, NULL, FB_OK};
    int rc = parse_dist(&P, v, duration, out);
    cJSON_Delete(v);
    return rc;
}

sim_dist scn__dist_const(double a) {
    sim_dist d = {.kind = SIM_DIST_CONSTANT, .a = a};
    return d;
}
