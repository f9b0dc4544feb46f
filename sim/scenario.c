/*
 * scenario.c - load, override and validate a scenario file.
 *
 * The document is parsed with cJSON, `--set` overrides are applied to the
 * tree, the `policy` block is merged under every variant, and then every
 * object is walked with a list of the keys it may hold. Every error carries
 * the JSON path being read; unknown keys get a did-you-mean suggestion.
 */
#include "sim/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define SCENARIO_FILE_MAX (16 * 1024 * 1024)
/* Token buckets keep capacity x one minute in microseconds in an int64. */
#define RATE_PER_MIN_MAX 100000000000ULL

typedef struct pctx {
    sim_error *err;
    char path[256];
    size_t len;
    bool timing_optional; /* faults without at/for: from the start, for ever */
} pctx;

/* ---- errors and paths ---- */

static int fail(pctx *P, const char *fmt, ...) {
    va_list ap;
    if (P->err->msg[0] != '\0') return FB_EINVAL; /* keep the first error */
    snprintf(P->err->path, sizeof P->err->path, "%s", P->path);
    va_start(ap, fmt);
    vsnprintf(P->err->msg, sizeof P->err->msg, fmt, ap);
    va_end(ap);
    return FB_EINVAL;
}

static size_t push_key(pctx *P, const char *key) {
    size_t old = P->len;
    int n = snprintf(P->path + P->len, sizeof P->path - P->len, "%s%s", P->len ? "." : "", key);
    if (n > 0) P->len = P->len + (size_t)n < sizeof P->path ? P->len + (size_t)n : P->len;
    return old;
}

static size_t push_index(pctx *P, size_t i) {
    size_t old = P->len;
    int n = snprintf(P->path + P->len, sizeof P->path - P->len, "[%zu]", i);
    if (n > 0) P->len = P->len + (size_t)n < sizeof P->path ? P->len + (size_t)n : P->len;
    return old;
}

static void pop(pctx *P, size_t old) {
    P->len = old;
    P->path[old] = '\0';
}

static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    size_t row[64];
    if (la >= 63 || lb >= 63) return 99;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The closest of `names` to `word`, or NULL when nothing is close. */
static const char *suggest(const char *word, const char *const *names) {
    const char *best = NULL;
    size_t best_d = 99;
    for (size_t i = 0; names[i]; i++) {
        size_t d = edit_distance(word, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    size_t limit = strlen(word) <= 4 ? 1 : strlen(word) <= 8 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}

static int check_description(pctx *P, const cJSON *obj);

static int check_keys(pctx *P, const cJSON *obj, const char *const *allowed) {
    for (const cJSON *it = obj->child; it; it = it->next) {
        bool known = false;
        for (size_t i = 0; allowed[i]; i++)
            if (strcmp(it->string, allowed[i]) == 0) known = true;
        if (known) continue;
        size_t old = push_key(P, it->string);
        const char *s = suggest(it->string, allowed);
        int rc = s ? fail(P, "unknown key '%s' (did you mean '%s'?)", it->string, s)
                   : fail(P, "unknown key '%s'", it->string);
        pop(P, old);
        return rc;
    }
    return check_description(P, obj);
}

static const char *type_name(const cJSON *v) {
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "invalid";
}

/* A "description" (allowed on most objects) is always a string. */
static int check_description(pctx *P, const cJSON *obj) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(obj, "description");
    if (d == NULL || cJSON_IsString(d)) return FB_OK;
    size_t old = push_key(P, "description");
    int rc = fail(P, "expected a string, got %s", type_name(d));
    pop(P, old);
    return rc;
}

/*
 * Names end up in file names, CSV headers, metric names (attempts[NAME]) and
 * charts: letters, digits, '-', '_' and '.' only.
 */
static int check_name(pctx *P, const char *key, const char *name) {
    if (name[0] != '\0' && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_.") == strlen(name))
        return FB_OK;
    size_t old = push_key(P, key);
    int rc = fail(P,
                  "\"%s\": use letters, digits, '-', '_' and '.' only (names appear in file "
                  "names, CSV headers and metric names)",
                  name);
    pop(P, old);
    return rc;
}

/* ---- units ---- */

int sim_parse_duration(const char *s, fb_time_us *out) {
    char *end;
    if (s == NULL || *s == '\0') return FB_EPARSE;
    if (*s == '-' || *s == '+' || *s == ' ') return FB_EPARSE;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !isfinite(v)) return FB_EPARSE;
    double mul;
    if (strcmp(end, "us") == 0)
        mul = 1;
    else if (strcmp(end, "ms") == 0)
        mul = 1e3;
    else if (strcmp(end, "s") == 0)
        mul = 1e6;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        mul = 60e6;
    else if (strcmp(end, "h") == 0)
        mul = 3600e6;
    else if (strcmp(end, "d") == 0)
        mul = 86400e6;
    else
        return FB_EPARSE;
    double us = v * mul;
    /* at most ~31 years: sums of times stay far from int64 overflow */
    if (us < 0 || us > 1e15) return FB_ERANGE;
    *out = (fb_time_us)llround(us);
    return FB_OK;
}

int sim_parse_rate(const char *s, double *per_s) {
    char *end;
    if (s == NULL || *s == '\0' || *s == '-' || *s == ' ') return FB_EPARSE;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !isfinite(v) || v < 0) return FB_EPARSE;
    double div;
    if (*end == '\0' || strcmp(end, "/s") == 0)
        div = 1;
    else if (strcmp(end, "/m") == 0 || strcmp(end, "/min") == 0)
        div = 60;
    else if (strcmp(end, "/h") == 0)
        div = 3600;
    else if (strcmp(end, "/d") == 0)
        div = 86400;
    else
        return FB_EPARSE;
    *per_s = v / div;
    return FB_OK;
}

/* ---- typed getters: each looks up `key` in obj; absent keeps *out ---- */

static const cJSON *field(const cJSON *obj, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int get_duration_value(pctx *P, const cJSON *v, fb_time_us *out, bool allow_zero) {
    if (!cJSON_IsString(v))
        return fail(P, "expected a duration string such as \"250ms\", \"30s\", \"5m\", got %s",
                    type_name(v));
    fb_time_us d;
    int rc = sim_parse_duration(v->valuestring, &d);
    if (rc == FB_ERANGE) return fail(P, "duration \"%s\" is out of range", v->valuestring);
    if (rc != FB_OK) {
        if (v->valuestring[0] == '-') return fail(P, "duration \"%s\" is negative", v->valuestring);
        return fail(P, "cannot read duration \"%s\" (use a number and a unit: us, ms, s, m, h, d)",
                    v->valuestring);
    }
    if (!allow_zero && d == 0) return fail(P, "duration must be greater than zero");
    *out = d;
    return FB_OK;
}

static int get_duration(pctx *P, const cJSON *obj, const char *key, fb_time_us *out,
                        bool allow_zero) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = get_duration_value(P, v, out, allow_zero);
    pop(P, old);
    return rc;
}

static int get_number(pctx *P, const cJSON *obj, const char *key, double *out, double lo,
                      double hi) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = FB_OK;
    if (!cJSON_IsNumber(v))
        rc = fail(P, "expected a number, got %s", type_name(v));
    else if (!(v->valuedouble >= lo && v->valuedouble <= hi))
        rc = fail(P, "%g is out of range [%g, %g]", v->valuedouble, lo, hi);
    else
        *out = v->valuedouble;
    pop(P, old);
    return rc;
}

static int get_uint(pctx *P, const cJSON *obj, const char *key, uint64_t *out, uint64_t lo,
                    uint64_t hi) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = FB_OK;
    if (!cJSON_IsNumber(v))
        rc = fail(P, "expected an integer, got %s", type_name(v));
    else if (v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo ||
             v->valuedouble > (double)hi)
        rc = fail(P, "expected an integer in [%llu, %llu], got %g", (unsigned long long)lo,
                  (unsigned long long)hi, v->valuedouble);
    else
        *out = (uint64_t)v->valuedouble;
    pop(P, old);
    return rc;
}

static int get_u32(pctx *P, const cJSON *obj, const char *key, uint32_t *out, uint32_t lo,
                   uint32_t hi) {
    uint64_t v = *out;
    int rc = get_uint(P, obj, key, &v, lo, hi);
    if (rc == FB_OK) *out = (uint32_t)v;
    return rc;
}

static int get_bool(pctx *P, const cJSON *obj, const char *key, bool *out) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = FB_OK;
    if (!cJSON_IsBool(v))
        rc = fail(P, "expected true or false, got %s", type_name(v));
    else
        *out = cJSON_IsTrue(v);
    pop(P, old);
    return rc;
}

static int get_switch(pctx *P, const cJSON *obj, const char *key, fb_switch *out) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    bool b = false;
    int rc = get_bool(P, obj, key, &b);
    if (rc == FB_OK) *out = b ? FB_ON : FB_OFF;
    return rc;
}

static int get_string(pctx *P, const cJSON *obj, const char *key, char *out, size_t cap) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = FB_OK;
    if (!cJSON_IsString(v))
        rc = fail(P, "expected a string, got %s", type_name(v));
    else if (strlen(v->valuestring) >= cap)
        rc = fail(P, "longer than %zu characters", cap - 1);
    else
        snprintf(out, cap, "%s", v->valuestring);
    pop(P, old);
    return rc;
}

/* One of `names` (NULL-terminated); *out is the index. */
static int get_enum(pctx *P, const cJSON *obj, const char *key, const char *const *names,
                    int *out) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = FB_OK;
    if (!cJSON_IsString(v)) {
        rc = fail(P, "expected a string, got %s", type_name(v));
    } else {
        int found = -1;
        for (int i = 0; names[i]; i++)
            if (strcmp(v->valuestring, names[i]) == 0) found = i;
        if (found >= 0) {
            *out = found;
        } else {
            char list[256] = "";
            for (int i = 0; names[i]; i++) {
                strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, names[i], sizeof list - strlen(list) - 1);
            }
            const char *s = suggest(v->valuestring, names);
            rc = s ? fail(P, "unknown value \"%s\" (did you mean \"%s\"?); one of: %s",
                          v->valuestring, s, list)
                   : fail(P, "unknown value \"%s\"; one of: %s", v->valuestring, list);
        }
    }
    pop(P, old);
    return rc;
}

static int need_object(pctx *P, const cJSON *v) {
    return cJSON_IsObject(v) ? FB_OK : fail(P, "expected an object, got %s", type_name(v));
}

static int need_array(pctx *P, const cJSON *v) {
    return cJSON_IsArray(v) ? FB_OK : fail(P, "expected an array, got %s", type_name(v));
}

static int need_key(pctx *P, const cJSON *obj, const char *key) {
    if (field(obj, key)) return FB_OK;
    return fail(P, "missing required key '%s'", key);
}

/* ---- distributions ---- */

/* A scalar of a distribution: a duration string (durations) or a number (counts). */
static int dist_scalar(pctx *P, const cJSON *v, bool duration, double *out) {
    if (duration) {
        fb_time_us d = 0;
        int rc = get_duration_value(P, v, &d, true);
        *out = (double)d;
        return rc;
    }
    if (!cJSON_IsNumber(v)) return fail(P, "expected a number, got %s", type_name(v));
    if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble))
        return fail(P, "must be a non-negative number");
    *out = v->valuedouble;
    return FB_OK;
}

static int dist_pair(pctx *P, const cJSON *obj, const char *k1, const char *k2, bool duration,
                     double *a, double *b) {
    const char *keys[] = {k1, k2, NULL};
    int rc = need_object(P, obj);
    if (rc == FB_OK) rc = check_keys(P, obj, keys);
    if (rc == FB_OK) rc = need_key(P, obj, k1);
    if (rc == FB_OK) rc = need_key(P, obj, k2);
    if (rc != FB_OK) return rc;
    size_t old = push_key(P, k1);
    rc = dist_scalar(P, field(obj, k1), duration, a);
    pop(P, old);
    if (rc != FB_OK) return rc;
    old = push_key(P, k2);
    rc = dist_scalar(P, field(obj, k2), duration, b);
    pop(P, old);
    return rc;
}

static int parse_dist(pctx *P, const cJSON *v, bool duration, sim_dist *out) {
    static const char *const kinds[] = {"constant", "uniform", "exponential", "lognormal", NULL};
    if (cJSON_IsNumber(v) || cJSON_IsString(v)) {
        out->kind = SIM_DIST_CONSTANT;
        out->b = 0;
        return dist_scalar(P, v, duration, &out->a);
    }
    if (!cJSON_IsObject(v) || v->child == NULL || v->child->next != NULL)
        return fail(P,
                    "expected %s or an object with one of: constant, uniform, exponential, "
                    "lognormal",
                    duration ? "a duration" : "a number");
    int rc = check_keys(P, v, kinds);
    if (rc != FB_OK) return rc;
    const cJSON *d = v->child;
    size_t old = push_key(P, d->string);
    if (strcmp(d->string, "constant") == 0) {
        out->kind = SIM_DIST_CONSTANT;
        rc = dist_scalar(P, d, duration, &out->a);
    } else if (strcmp(d->string, "uniform") == 0) {
        out->kind = SIM_DIST_UNIFORM;
        rc = dist_pair(P, d, "min", "max", duration, &out->a, &out->b);
        if (rc == FB_OK && out->b < out->a) rc = fail(P, "max must be >= min");
    } else if (strcmp(d->string, "exponential") == 0) {
        out->kind = SIM_DIST_EXPONENTIAL;
        if (cJSON_IsObject(d)) {
            static const char *const keys[] = {"mean", NULL};
            rc = check_keys(P, d, keys);
            if (rc == FB_OK) rc = need_key(P, d, "mean");
            if (rc == FB_OK) {
                size_t o2 = push_key(P, "mean");
                rc = dist_scalar(P, field(d, "mean"), duration, &out->a);
                pop(P, o2);
            }
        } else {
            rc = dist_scalar(P, d, duration, &out->a);
        }
    } else {
        out->kind = SIM_DIST_LOGNORMAL;
        rc = dist_pair(P, d, "median", "p99", duration, &out->a, &out->b);
        if (rc == FB_OK && out->a <= 0) rc = fail(P, "median must be greater than zero");
        if (rc == FB_OK && out->b < out->a) rc = fail(P, "p99 must be >= median");
    }
    pop(P, old);
    return rc;
}

static int get_dist(pctx *P, const cJSON *obj, const char *key, bool duration, sim_dist *out) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = parse_dist(P, v, duration, out);
    pop(P, old);
    return rc;
}

static sim_dist dist_const(double a) {
    sim_dist d = {SIM_DIST_CONSTANT, a, 0};
    return d;
}

/* ---- traffic ---- */

static int get_rate_value(pctx *P, const cJSON *v, double *out) {
    if (cJSON_IsNumber(v)) {
        if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble))
            return fail(P, "rate must be a non-negative number");
        *out = v->valuedouble;
        return FB_OK;
    }
    if (!cJSON_IsString(v) || sim_parse_rate(v->valuestring, out) != FB_OK)
        return fail(P, "expected a rate such as \"40/s\", \"2400/m\" or \"5/h\"");
    return FB_OK;
}

static int get_rate(pctx *P, const cJSON *obj, const char *key, double *out) {
    const cJSON *v = field(obj, key);
    if (!v) return FB_OK;
    size_t old = push_key(P, key);
    int rc = get_rate_value(P, v, out);
    pop(P, old);
    return rc;
}

static int parse_arrivals(pctx *P, const cJSON *v, sim_class *c) {
    static const char *const kinds[] = {"poisson", "constant", "closed", NULL};
    int rc = need_object(P, v);
    if (rc != FB_OK) return rc;
    if (v->child == NULL || v->child->next != NULL)
        return fail(P, "expected exactly one of: poisson, constant, closed");
    rc = check_keys(P, v, kinds);
    if (rc != FB_OK) return rc;
    const cJSON *a = v->child;
    size_t old = push_key(P, a->string);
    if (strcmp(a->string, "closed") == 0) {
        static const char *const keys[] = {"users", "think", NULL};
        c->arrivals = SIM_ARR_CLOSED;
        c->think_us = dist_const(1e6);
        rc = need_object(P, a);
        if (rc == FB_OK) rc = check_keys(P, a, keys);
        if (rc == FB_OK) rc = need_key(P, a, "users");
        if (rc == FB_OK) rc = get_u32(P, a, "users", &c->users, 1, 10000000);
        if (rc == FB_OK) rc = get_dist(P, a, "think", true, &c->think_us);
    } else {
        c->arrivals = strcmp(a->string, "poisson") == 0 ? SIM_ARR_POISSON : SIM_ARR_CONSTANT;
        rc = get_rate_value(P, a, &c->rate);
    }
    pop(P, old);
    return rc;
}

/* An object whose keys are among `keys` and which has every key of `required`. */
static int entry(pctx *P, const cJSON *e, const char *const *keys, const char *const *required) {
    int rc = need_object(P, e);
    if (rc == FB_OK) rc = check_keys(P, e, keys);
    for (size_t i = 0; rc == FB_OK && required[i]; i++) rc = need_key(P, e, required[i]);
    return rc;
}

static int parse_schedule(pctx *P, const cJSON *obj, sim_class *c) {
    int rc = FB_OK;
    const cJSON *v;
    size_t old;
    if ((v = field(obj, "ramp")) != NULL) {
        static const char *const keys[] = {"at", "rate", NULL};
        old = push_key(P, "ramp");
        rc = need_array(P, v);
        size_t i = 0;
        for (const cJSON *e = v->child; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_SCHEDULE_MAX) rc = fail(P, "at most %d ramp points", SIM_SCHEDULE_MAX);
            if (rc == FB_OK) rc = entry(P, e, keys, keys);
            if (rc == FB_OK) rc = get_duration(P, e, "at", &c->ramp[i].at_us, true);
            if (rc == FB_OK) rc = get_rate(P, e, "rate", &c->ramp[i].rate);
            if (rc == FB_OK && i > 0 && c->ramp[i].at_us <= c->ramp[i - 1].at_us)
                rc = fail(P, "ramp points must be in increasing time order");
            if (rc == FB_OK) c->ramp_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        pop(P, old);
        if (rc != FB_OK) return rc;
    }
    if ((v = field(obj, "spikes")) != NULL) {
        static const char *const keys[] = {"at", "for", "rate", NULL};
        old = push_key(P, "spikes");
        rc = need_array(P, v);
        size_t i = 0;
        for (const cJSON *e = v->child; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_SCHEDULE_MAX) rc = fail(P, "at most %d spikes", SIM_SCHEDULE_MAX);
            sim_spike *s = &c->spikes[i < SIM_SCHEDULE_MAX ? i : 0];
            if (rc == FB_OK) rc = entry(P, e, keys, keys);
            if (rc == FB_OK) rc = get_duration(P, e, "at", &s->at_us, true);
            if (rc == FB_OK) rc = get_duration(P, e, "for", &s->for_us, false);
            if (rc == FB_OK) rc = get_rate(P, e, "rate", &s->rate);
            if (rc == FB_OK) c->spike_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        pop(P, old);
        if (rc != FB_OK) return rc;
    }
    if ((v = field(obj, "bursts")) != NULL) {
        static const char *const keys[] = {"at", "count", "over", NULL};
        static const char *const required[] = {"at", "count", NULL};
        old = push_key(P, "bursts");
        rc = need_array(P, v);
        size_t i = 0;
        for (const cJSON *e = v->child; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_SCHEDULE_MAX) rc = fail(P, "at most %d bursts", SIM_SCHEDULE_MAX);
            sim_burst *b = &c->bursts[i < SIM_SCHEDULE_MAX ? i : 0];
            if (rc == FB_OK) rc = entry(P, e, keys, required);
            if (rc == FB_OK) rc = get_duration(P, e, "at", &b->at_us, true);
            if (rc == FB_OK) rc = get_u32(P, e, "count", &b->count, 1, 10000000);
            if (rc == FB_OK) rc = get_duration(P, e, "over", &b->over_us, true);
            if (rc == FB_OK && i > 0 &&
                b->at_us < c->bursts[i - 1].at_us + c->bursts[i - 1].over_us)
                rc = fail(P, "bursts must be in time order and must not overlap");
            if (rc == FB_OK) c->burst_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        pop(P, old);
        if (rc != FB_OK) return rc;
    }
    if ((v = field(obj, "diurnal")) != NULL) {
        static const char *const keys[] = {"amplitude", "period", "peak", NULL};
        old = push_key(P, "diurnal");
        c->diurnal_period_us = 86400 * FB_US_PER_S;
        c->diurnal_peak_us = 14 * 3600 * FB_US_PER_S;
        rc = need_object(P, v);
        if (rc == FB_OK) rc = check_keys(P, v, keys);
        if (rc == FB_OK) rc = need_key(P, v, "amplitude");
        if (rc == FB_OK) rc = get_number(P, v, "amplitude", &c->diurnal_amplitude, 0, 1);
        if (rc == FB_OK) rc = get_duration(P, v, "period", &c->diurnal_period_us, false);
        if (rc == FB_OK) rc = get_duration(P, v, "peak", &c->diurnal_peak_us, true);
        pop(P, old);
    }
    return rc;
}

static int lookup_provider(pctx *P, const sim_scenario *sc, const cJSON *v, uint8_t *out) {
    if (!cJSON_IsString(v)) return fail(P, "expected a provider name, got %s", type_name(v));
    int i = sim_scenario_provider(sc, v->valuestring);
    if (i < 0) {
        const char *names[SIM_PROVIDERS_MAX + 1];
        for (uint32_t k = 0; k < sc->provider_count; k++) names[k] = sc->providers[k].name;
        names[sc->provider_count] = NULL;
        const char *s = suggest(v->valuestring, names);
        return s ? fail(P, "no provider named \"%s\" (did you mean \"%s\"?)", v->valuestring, s)
                 : fail(P, "no provider named \"%s\"", v->valuestring);
    }
    *out = (uint8_t)i;
    return FB_OK;
}

static int parse_order(pctx *P, const sim_scenario *sc, const cJSON *v, uint8_t *order,
                       uint32_t *len) {
    int rc = need_array(P, v);
    size_t i = 0;
    for (const cJSON *e = v ? v->child : NULL; rc == FB_OK && e; e = e->next, i++) {
        size_t old = push_index(P, i);
        if (i >= SIM_PROVIDERS_MAX) rc = fail(P, "at most %d providers", SIM_PROVIDERS_MAX);
        if (rc == FB_OK) rc = lookup_provider(P, sc, e, &order[i]);
        for (size_t k = 0; rc == FB_OK && k < i; k++)
            if (order[k] == order[i])
                rc = fail(P, "provider \"%s\" is listed twice", e->valuestring);
        if (rc == FB_OK && sc->providers[order[i]].kind != SIM_PROVIDER_LLM)
            rc = fail(P, "\"%s\" is a tool, not an LLM provider", e->valuestring);
        pop(P, old);
    }
    if (rc == FB_OK && i == 0) rc = fail(P, "must name at least one provider");
    if (rc == FB_OK) *len = (uint32_t)i;
    return rc;
}

static int parse_class(pctx *P, sim_scenario *sc, const cJSON *v, sim_class *c) {
    static const char *const keys[] = {
        "class",       "arrivals", "ramp",          "spikes",
        "bursts",      "diurnal",  "prompt_tokens", "completion_tokens",
        "service",     "target",   "stream",        "order",
        "description", NULL};
    int rc = need_object(P, v);
    if (rc == FB_OK) rc = check_keys(P, v, keys);
    if (rc == FB_OK) rc = need_key(P, v, "class");
    if (rc == FB_OK) rc = get_string(P, v, "class", c->name, sizeof c->name);
    if (rc == FB_OK) rc = check_name(P, "class", c->name);
    if (rc != FB_OK) return rc;
    c->prompt_tokens = dist_const(1000);
    c->completion_tokens = dist_const(200);
    c->service_us = dist_const(0);
    c->target = SIM_TARGET_LLM;
    const cJSON *t = field(v, "target");
    if (t) {
        size_t old = push_key(P, "target");
        if (!cJSON_IsString(t))
            rc = fail(P, "expected \"llm\", \"none\" or a provider name");
        else if (strcmp(t->valuestring, "llm") == 0)
            c->target = SIM_TARGET_LLM;
        else if (strcmp(t->valuestring, "none") == 0)
            c->target = SIM_TARGET_NONE;
        else {
            c->target = SIM_TARGET_PROVIDER;
            rc = lookup_provider(P, sc, t, &c->provider);
        }
        pop(P, old);
    }
    if (rc == FB_OK && field(v, "arrivals") == NULL)
        rc = fail(P, "missing required key 'arrivals'");
    if (rc == FB_OK) {
        size_t old = push_key(P, "arrivals");
        rc = parse_arrivals(P, field(v, "arrivals"), c);
        pop(P, old);
    }
    if (rc == FB_OK) rc = parse_schedule(P, v, c);
    if (rc == FB_OK) rc = get_dist(P, v, "prompt_tokens", false, &c->prompt_tokens);
    if (rc == FB_OK) rc = get_dist(P, v, "completion_tokens", false, &c->completion_tokens);
    if (rc == FB_OK) rc = get_dist(P, v, "service", true, &c->service_us);
    if (rc == FB_OK) rc = get_bool(P, v, "stream", &c->stream);
    if (rc == FB_OK && field(v, "order")) {
        size_t old = push_key(P, "order");
        if (c->target != SIM_TARGET_LLM)
            rc = fail(P, "only classes with target \"llm\" have an order");
        if (rc == FB_OK) rc = parse_order(P, sc, field(v, "order"), c->order, &c->order_len);
        pop(P, old);
    }
    if (rc == FB_OK && c->arrivals == SIM_ARR_CLOSED &&
        (c->ramp_count || c->spike_count || c->burst_count || c->diurnal_amplitude > 0))
        rc = fail(P, "ramp, spikes, bursts and diurnal apply to open-loop arrivals only");
    return rc;
}

/* ---- providers and faults ---- */

static const char *const fault_names[] = {
#define SIM_FK_NAME(name, text) text,
    SIM_FAULT_MAP(SIM_FK_NAME)
#undef SIM_FK_NAME
        NULL};

static int get_status(pctx *P, const cJSON *obj, const char *key, int *out) {
    uint64_t s = (uint64_t)*out;
    int rc = get_uint(P, obj, key, &s, 100, 599);
    if (rc == FB_OK) *out = (int)s;
    return rc;
}

static int parse_fault_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const outage_keys[] = {"status", "fraction", "retry_after", "error", NULL};
    static const char *const rl_keys[] = {"status", "fraction", "retry_after", NULL};
    static const char *const frac_keys[] = {"fraction", NULL};
    static const char *const slow_keys[] = {"factor", "fraction", NULL};
    static const char *const brown_keys[] = {"capacity", NULL};
    static const char *const mid_keys[] = {"after_tokens", "fraction", "mode", NULL};
    static const char *const flap_keys[] = {"period", "status", "retry_after", NULL};
    static const char *const modes[] = {"error", "cut", "truncate", NULL};
    static const char *const errors[] = {
        "none", "context_length", "content_policy", "rate_limit", "overloaded", "other", NULL};
    int rc = need_object(P, b);
    if (rc != FB_OK) return rc;
    f->fraction = 1.0;
    f->retry_after_us = FB_TIME_NONE;
    f->factor = 1.0;
    f->capacity = 1.0;
    switch (f->kind) {
    case SIM_FAULT_OUTAGE:
        f->status = 503;
        rc = check_keys(P, b, outage_keys);
        if (rc == FB_OK) rc = get_status(P, b, "status", &f->status);
        if (rc == FB_OK) {
            int e = 0;
            rc = get_enum(P, b, "error", errors, &e);
            f->error_kind = (fb_error_kind)e;
        }
        break;
    case SIM_FAULT_RATE_LIMIT:
        f->status = 429;
        rc = check_keys(P, b, rl_keys);
        if (rc == FB_OK) rc = get_status(P, b, "status", &f->status);
        break;
    case SIM_FAULT_HANG:
    case SIM_FAULT_RESET:
    case SIM_FAULT_POLICY:
        rc = check_keys(P, b, frac_keys);
        break;
    case SIM_FAULT_SLOW:
        rc = check_keys(P, b, slow_keys);
        if (rc == FB_OK) rc = need_key(P, b, "factor");
        if (rc == FB_OK) rc = get_number(P, b, "factor", &f->factor, 1, 1000);
        break;
    case SIM_FAULT_BROWNOUT:
        rc = check_keys(P, b, brown_keys);
        if (rc == FB_OK) rc = need_key(P, b, "capacity");
        if (rc == FB_OK) rc = get_number(P, b, "capacity", &f->capacity, 0, 1);
        break;
    case SIM_FAULT_MIDSTREAM: {
        int m = 0;
        rc = check_keys(P, b, mid_keys);
        if (rc == FB_OK) rc = need_key(P, b, "after_tokens");
        if (rc == FB_OK) rc = get_u32(P, b, "after_tokens", &f->after_tokens, 1, 10000000);
        if (rc == FB_OK) rc = get_enum(P, b, "mode", modes, &m);
        f->mode = (sim_midstream_mode)m;
        break;
    }
    case SIM_FAULT_FLAP:
        f->status = 503;
        rc = check_keys(P, b, flap_keys);
        if (rc == FB_OK) rc = need_key(P, b, "period");
        if (rc == FB_OK) rc = get_duration(P, b, "period", &f->period_us, false);
        if (rc == FB_OK) rc = get_status(P, b, "status", &f->status);
        break;
    default:
        break;
    }
    if (rc == FB_OK) rc = get_number(P, b, "fraction", &f->fraction, 0, 1);
    if (rc == FB_OK) rc = get_duration(P, b, "retry_after", &f->retry_after_us, true);
    return rc;
}

static int parse_fault(pctx *P, const cJSON *v, sim_fault *f) {
    int rc = need_object(P, v);
    if (rc != FB_OK) return rc;
    const cJSON *kind = NULL;
    for (const cJSON *it = v->child; it; it = it->next) {
        if (strcmp(it->string, "at") == 0 || strcmp(it->string, "for") == 0 ||
            strcmp(it->string, "description") == 0)
            continue;
        int k = -1;
        for (int i = 0; fault_names[i]; i++)
            if (strcmp(it->string, fault_names[i]) == 0) k = i;
        if (k < 0) {
            static const char *const all[] = {
                "at",       "for",       "description", "outage", "rate_limit", "hang", "slow",
                "brownout", "midstream", "reset",       "policy", "flap",       NULL};
            return check_keys(P, v, all);
        }
        if (kind) {
            size_t o2 = push_key(P, it->string);
            rc = fail(P, "a fault has exactly one kind; found '%s' and '%s'", kind->string,
                      it->string);
            pop(P, o2);
            return rc;
        }
        kind = it;
        f->kind = (sim_fault_kind)k;
    }
    if (!kind)
        return fail(P, "a fault needs one of: outage, rate_limit, hang, slow, brownout, midstream, "
                       "reset, policy, flap");
    if (P->timing_optional) {
        f->at_us = 0;
        f->for_us = FB_TIME_MAX;
    } else {
        rc = need_key(P, v, "at");
        if (rc == FB_OK) rc = need_key(P, v, "for");
    }
    if (rc == FB_OK) rc = get_duration(P, v, "at", &f->at_us, true);
    if (rc == FB_OK) rc = get_duration(P, v, "for", &f->for_us, false);
    if (rc != FB_OK) return rc;
    size_t old = push_key(P, kind->string);
    rc = parse_fault_body(P, kind, f);
    pop(P, old);
    return rc;
}

static int parse_provider(pctx *P, const cJSON *v, sim_provider *p) {
    static const char *const keys[] = {"name",        "kind",  "context_window", "latency",
                                       "capacity",    "price", "faults",         "keeps_working",
                                       "description", NULL};
    static const char *const lat_keys[] = {"ttft", "per_output_token", "error", NULL};
    static const char *const cap_keys[] = {"concurrency",     "queue",       "rpm", "tpm",
                                           "overload_status", "retry_after", NULL};
    static const char *const price_keys[] = {"input_per_mtok", "output_per_mtok", "per_call", NULL};
    static const char *const kinds[] = {"llm", "tool", NULL};
    int rc = need_object(P, v);
    if (rc == FB_OK) rc = check_keys(P, v, keys);
    if (rc == FB_OK) rc = need_key(P, v, "name");
    if (rc == FB_OK) rc = get_string(P, v, "name", p->name, sizeof p->name);
    if (rc == FB_OK) rc = check_name(P, "name", p->name);
    if (rc != FB_OK) return rc;
    if (strcmp(p->name, "llm") == 0 || strcmp(p->name, "none") == 0 || p->name[0] == '\0') {
        size_t old = push_key(P, "name");
        rc = fail(P, "\"%s\" is reserved", p->name);
        pop(P, old);
        return rc;
    }
    int kind = 0;
    p->ttft_us = dist_const(500e3);
    p->error_latency_us = dist_const(50e3);
    p->queue = 1000;
    p->overload_status = 503;
    p->limit_retry_after = true;
    p->keeps_working = true;
    rc = get_enum(P, v, "kind", kinds, &kind);
    p->kind = (sim_provider_kind)kind;
    if (rc == FB_OK) rc = get_u32(P, v, "context_window", &p->context_window, 0, 100000000);
    if (rc == FB_OK) rc = get_bool(P, v, "keeps_working", &p->keeps_working);
    const cJSON *o;
    if (rc == FB_OK && (o = field(v, "latency")) != NULL) {
        size_t old = push_key(P, "latency");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, lat_keys);
        if (rc == FB_OK) rc = get_dist(P, o, "ttft", true, &p->ttft_us);
        if (rc == FB_OK) rc = get_duration(P, o, "per_output_token", &p->per_token_us, true);
        if (rc == FB_OK) rc = get_dist(P, o, "error", true, &p->error_latency_us);
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(v, "capacity")) != NULL) {
        uint64_t rpm = 0, tpm = 0;
        size_t old = push_key(P, "capacity");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, cap_keys);
        if (rc == FB_OK) rc = get_u32(P, o, "concurrency", &p->concurrency, 0, 10000000);
        if (rc == FB_OK) rc = get_u32(P, o, "queue", &p->queue, 0, 100000000);
        if (rc == FB_OK) rc = get_uint(P, o, "rpm", &rpm, 0, 1000000000);
        if (rc == FB_OK) rc = get_uint(P, o, "tpm", &tpm, 0, RATE_PER_MIN_MAX);
        if (rc == FB_OK) rc = get_status(P, o, "overload_status", &p->overload_status);
        if (rc == FB_OK) rc = get_bool(P, o, "retry_after", &p->limit_retry_after);
        p->rpm = (int64_t)rpm;
        p->tpm = (int64_t)tpm;
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(v, "price")) != NULL) {
        size_t old = push_key(P, "price");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, price_keys);
        if (rc == FB_OK) rc = get_number(P, o, "input_per_mtok", &p->price_in_per_mtok, 0, 1e6);
        if (rc == FB_OK) rc = get_number(P, o, "output_per_mtok", &p->price_out_per_mtok, 0, 1e6);
        if (rc == FB_OK) rc = get_number(P, o, "per_call", &p->price_per_call, 0, 1e6);
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(v, "faults")) != NULL) {
        size_t old = push_key(P, "faults");
        rc = need_array(P, o);
        size_t i = 0;
        for (const cJSON *e = o->child; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_FAULTS_MAX) rc = fail(P, "at most %d faults per provider", SIM_FAULTS_MAX);
            if (rc == FB_OK) rc = parse_fault(P, e, &p->faults[i]);
            if (rc == FB_OK) p->fault_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        pop(P, old);
    }
    return rc;
}

/* ---- policies ---- */

static int parse_backoff(pctx *P, const cJSON *v, fb_retry_config *r) {
    static const char *const names[] = {"exponential", "constant", "linear", "none", NULL};
    static const char *const exp_keys[] = {"base", "max", "multiplier", NULL};
    int k = 0;
    if (cJSON_IsString(v)) {
        const char *found = NULL;
        for (int i = 0; names[i]; i++)
            if (strcmp(v->valuestring, names[i]) == 0) {
                found = names[i];
                k = i;
            }
        if (!found)
            return fail(P,
                        "unknown backoff \"%s\"; one of: exponential, constant, "
                        "linear, none",
                        v->valuestring);
        r->backoff = (fb_backoff)k;
        return FB_OK;
    }
    if (!cJSON_IsObject(v) || !v->child || v->child->next)
        return fail(P, "expected \"exponential\", \"constant\", \"linear\", \"none\" or an object "
                       "with one of them");
    int rc = check_keys(P, v, names);
    if (rc != FB_OK) return rc;
    const cJSON *b = v->child;
    for (int i = 0; names[i]; i++)
        if (strcmp(b->string, names[i]) == 0) k = i;
    r->backoff = (fb_backoff)k;
    size_t old = push_key(P, b->string);
    if (r->backoff == FB_BACKOFF_NONE) {
        rc = fail(P, "\"none\" takes no parameters; write \"backoff\": \"none\"");
    } else if (cJSON_IsString(b)) {
        rc = get_duration_value(P, b, &r->base_us, false);
    } else {
        rc = need_object(P, b);
        if (rc == FB_OK) rc = check_keys(P, b, exp_keys);
        if (rc == FB_OK) rc = get_duration(P, b, "base", &r->base_us, false);
        if (rc == FB_OK) rc = get_duration(P, b, "max", &r->delay_us_max, false);
        if (rc == FB_OK) rc = get_number(P, b, "multiplier", &r->multiplier, 1, 100);
        if (rc == FB_OK && r->backoff != FB_BACKOFF_EXPONENTIAL && field(b, "multiplier")) {
            size_t o2 = push_key(P, "multiplier");
            rc = fail(P, "only exponential backoff has a multiplier");
            pop(P, o2);
        }
    }
    pop(P, old);
    return rc;
}

static int parse_budget(pctx *P, const cJSON *v, fb_budget_config *b) {
    static const char *const kinds[] = {"token_bucket", "quota", NULL};
    static const char *const tb_keys[] = {"max", "ratio", NULL};
    static const char *const q_keys[] = {"capacity", "retry_cost", "timeout_cost", "refund", NULL};
    if (!cJSON_IsObject(v) || !v->child || v->child->next)
        return fail(P, "expected an object with one of: token_bucket, quota");
    int rc = check_keys(P, v, kinds);
    if (rc != FB_OK) return rc;
    const cJSON *o = v->child;
    size_t old = push_key(P, o->string);
    rc = need_object(P, o);
    if (rc == FB_OK && strcmp(o->string, "token_bucket") == 0) {
        b->kind = FB_BUDGET_TOKEN_BUCKET;
        rc = check_keys(P, o, tb_keys);
        if (rc == FB_OK) rc = get_number(P, o, "max", &b->max_tokens, 1, 1000);
        if (rc == FB_OK) rc = get_number(P, o, "ratio", &b->ratio, 0.001, 1000);
    } else if (rc == FB_OK) {
        b->kind = FB_BUDGET_QUOTA;
        rc = check_keys(P, o, q_keys);
        if (rc == FB_OK) rc = get_u32(P, o, "capacity", &b->capacity, 1, 1000000000);
        if (rc == FB_OK) rc = get_u32(P, o, "retry_cost", &b->retry_cost, 1, 1000000);
        if (rc == FB_OK) rc = get_u32(P, o, "timeout_cost", &b->timeout_cost, 1, 1000000);
        if (rc == FB_OK) rc = get_u32(P, o, "refund", &b->no_retry_refund, 0, 1000000);
    }
    pop(P, old);
    return rc;
}

static int parse_retry(pctx *P, const cJSON *v, sim_policy *pol) {
    static const char *const keys[] = {"attempts",
                                       "backoff",
                                       "jitter",
                                       "cap",
                                       "retry_after",
                                       "retry_after_max",
                                       "giveup_above_max",
                                       "attempt_timeout",
                                       "deadline",
                                       "budget",
                                       "retry_after_jitter",
                                       NULL};
    static const char *const jitters[] = {"full",         "none",         "equal",
                                          "decorrelated", "proportional", NULL};
    static const char *const caps[] = {"before_jitter", "after_jitter", NULL};
    static const char *const ra[] = {"max", "ignore", "as_is", NULL};
    fb_retry_config *r = &pol->retry;
    int rc = need_object(P, v);
    if (rc == FB_OK) rc = check_keys(P, v, keys);
    if (rc != FB_OK) return rc;
    r->attempts = 3;
    rc = get_u32(P, v, "attempts", &r->attempts, 1, 1000);
    const cJSON *o;
    if (rc == FB_OK && (o = field(v, "backoff")) != NULL) {
        size_t old = push_key(P, "backoff");
        rc = parse_backoff(P, o, r);
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(v, "jitter")) != NULL) {
        size_t old = push_key(P, "jitter");
        if (cJSON_IsObject(o)) {
            static const char *const pk[] = {"proportional", NULL};
            rc = check_keys(P, o, pk);
            if (rc == FB_OK) rc = need_key(P, o, "proportional");
            r->jitter = FB_JITTER_PROPORTIONAL;
            if (rc == FB_OK) rc = get_number(P, o, "proportional", &r->jitter_fraction, 0.001, 1);
        }
        pop(P, old);
        if (!cJSON_IsObject(o) && rc == FB_OK) {
            int j = 0;
            rc = get_enum(P, v, "jitter", jitters, &j);
            r->jitter = (fb_jitter)j;
        }
    }
    int k = 0;
    if (rc == FB_OK && field(v, "cap")) {
        rc = get_enum(P, v, "cap", caps, &k);
        r->cap_order = (fb_cap_order)k;
    }
    if (rc == FB_OK && field(v, "retry_after")) {
        k = 0;
        rc = get_enum(P, v, "retry_after", ra, &k);
        r->retry_after = (fb_retry_after_policy)k;
    }
    if (rc == FB_OK) rc = get_duration(P, v, "retry_after_max", &r->retry_after_us_max, false);
    if (rc == FB_OK) rc = get_switch(P, v, "giveup_above_max", &r->giveup_above_max);
    if (rc == FB_OK) rc = get_number(P, v, "retry_after_jitter", &r->retry_after_jitter, 0, 10);
    if (rc == FB_OK) rc = get_duration(P, v, "attempt_timeout", &r->attempt_timeout_us, false);
    if (rc == FB_OK) rc = get_duration(P, v, "deadline", &r->deadline_us, false);
    if (rc == FB_OK && (o = field(v, "budget")) != NULL) {
        size_t old = push_key(P, "budget");
        rc = parse_budget(P, o, &pol->budget);
        pop(P, old);
    }
    return rc;
}

static int parse_breaker(pctx *P, const cJSON *v, fb_breaker_config *b, bool *has) {
    static const char *const keys[] = {"mode",
                                       "consecutive_failures",
                                       "failure_rate",
                                       "window",
                                       "buckets",
                                       "minimum_calls",
                                       "slow_call",
                                       "slow_rate",
                                       "half_open_probes",
                                       "probe_lease",
                                       "open",
                                       "open_max",
                                       "open_growth",
                                       "open_jitter",
                                       "honor_retry_after",
                                       "state",
                                       NULL};
    static const char *const modes[] = {"consecutive", "count", "time", NULL};
    static const char *const growth[] = {"none", "linear", "exponential", NULL};
    static const char *const states[] = {"closed",        "open",     "half_open",    "forced_open",
                                         "forced_closed", "disabled", "metrics_only", NULL};
    if (cJSON_IsFalse(v) || cJSON_IsNull(v)) {
        *has = false;
        return FB_OK;
    }
    int rc = need_object(P, v);
    if (rc == FB_OK) rc = check_keys(P, v, keys);
    if (rc != FB_OK) return rc;
    *has = true;
    memset(b, 0, sizeof *b);
    const cJSON *w = field(v, "window");
    int mode =
        field(v, "failure_rate") || field(v, "slow_call") || w
            ? (cJSON_IsNumber(w) ? FB_BREAKER_MODE_COUNT_WINDOW : FB_BREAKER_MODE_TIME_WINDOW)
            : FB_BREAKER_MODE_CONSECUTIVE;
    rc = get_enum(P, v, "mode", modes, &mode);
    b->mode = (fb_breaker_mode)mode;
    if (rc == FB_OK && w) {
        size_t old = push_key(P, "window");
        if (b->mode == FB_BREAKER_MODE_COUNT_WINDOW) {
            if (!cJSON_IsNumber(w) || w->valuedouble < 1 || w->valuedouble > FB_BREAKER_CALLS_MAX ||
                w->valuedouble != floor(w->valuedouble))
                rc =
                    fail(P, "a count window is a number of calls in [1, %d]", FB_BREAKER_CALLS_MAX);
            else
                b->window_calls = (uint32_t)w->valuedouble;
        } else if (b->mode == FB_BREAKER_MODE_TIME_WINDOW) {
            rc = get_duration_value(P, w, &b->window_us, false);
        } else {
            rc = fail(P, "a consecutive-failures breaker has no window");
        }
        pop(P, old);
    }
    if (rc == FB_OK && b->mode == FB_BREAKER_MODE_TIME_WINDOW && !w)
        rc = fail(P, "a time-window breaker needs \"window\" (a duration)");
    if (rc == FB_OK && b->mode == FB_BREAKER_MODE_COUNT_WINDOW && !w)
        rc = fail(P, "a count-window breaker needs \"window\" (a number of calls)");
    if (rc == FB_OK)
        rc = get_u32(P, v, "consecutive_failures", &b->consecutive_failures, 1, 1000000);
    if (rc == FB_OK) rc = get_number(P, v, "failure_rate", &b->failure_rate, 1e-6, 1);
    if (rc == FB_OK) rc = get_u32(P, v, "buckets", &b->window_buckets, 1, FB_BREAKER_BUCKETS_MAX);
    if (rc == FB_OK) rc = get_u32(P, v, "minimum_calls", &b->minimum_calls, 1, 100000000);
    if (rc == FB_OK) rc = get_duration(P, v, "slow_call", &b->slow_us, false);
    if (rc == FB_OK) rc = get_number(P, v, "slow_rate", &b->slow_rate, 1e-6, 1);
    if (rc == FB_OK)
        rc = get_u32(P, v, "half_open_probes", &b->half_open_permits, 1, FB_BREAKER_PROBES_MAX);
    if (rc == FB_OK) rc = get_duration(P, v, "probe_lease", &b->probe_lease_us, false);
    if (rc == FB_OK) rc = get_duration(P, v, "open", &b->open_us, false);
    if (rc == FB_OK) rc = get_duration(P, v, "open_max", &b->open_us_max, false);
    int g = 0;
    if (rc == FB_OK) rc = get_enum(P, v, "open_growth", growth, &g);
    b->open_growth = (fb_open_growth)g;
    if (rc == FB_OK) rc = get_number(P, v, "open_jitter", &b->open_jitter, 0, 0.999);
    if (rc == FB_OK) rc = get_switch(P, v, "honor_retry_after", &b->honor_hint);
    int st = 0;
    if (rc == FB_OK) rc = get_enum(P, v, "state", states, &st);
    b->initial = (fb_breaker_state)st;
    if (rc == FB_OK && b->mode == FB_BREAKER_MODE_TIME_WINDOW && b->window_us > 0) {
        uint32_t n = b->window_buckets ? b->window_buckets : 10;
        if (b->window_us % n != 0) rc = fail(P, "window must divide into %u equal buckets", n);
    }
    if (rc == FB_OK && b->open_us_max > 0 &&
        b->open_us_max < (b->open_us > 0 ? b->open_us : 60 * FB_US_PER_S)) {
        size_t o2 = push_key(P, "open_max");
        rc = fail(P, "must be >= open (%s)", b->open_us > 0 ? "as given" : "60s by default");
        pop(P, o2);
    }
    return rc;
}

static int parse_ratelimits(pctx *P, const sim_scenario *sc, const cJSON *v, sim_policy *pol) {
    static const char *const keys[] = {"rpm", "tpm", "mode", "max_wait", NULL};
    static const char *const modes[] = {"wait", "reject", NULL};
    int rc = need_object(P, v);
    for (const cJSON *e = v->child; rc == FB_OK && e; e = e->next) {
        size_t old = push_key(P, e->string);
        uint8_t idx = 0;
        cJSON name = *e;
        name.type = cJSON_String;
        name.valuestring = e->string;
        rc = lookup_provider(P, sc, &name, &idx);
        sim_provider_policy *pp = &pol->per_provider[idx];
        uint64_t rpm = 0, tpm = 0;
        int mode = 0;
        if (rc == FB_OK) rc = need_object(P, e);
        if (rc == FB_OK) rc = check_keys(P, e, keys);
        if (rc == FB_OK) rc = get_uint(P, e, "rpm", &rpm, 1, 1000000000);
        if (rc == FB_OK) rc = get_uint(P, e, "tpm", &tpm, 1, RATE_PER_MIN_MAX);
        if (rc == FB_OK) rc = get_enum(P, e, "mode", modes, &mode);
        if (rc == FB_OK) rc = get_duration(P, e, "max_wait", &pp->ratelimit.wait_us_max, false);
        if (rc == FB_OK && rpm == 0 && tpm == 0) rc = fail(P, "give rpm, tpm or both");
        pp->has_ratelimit = true;
        pp->ratelimit.requests_per_min = (int64_t)rpm;
        pp->ratelimit.tokens_per_min = (int64_t)tpm;
        pp->ratelimit.mode = (fb_ratelimit_mode)mode;
        pop(P, old);
    }
    return rc;
}

static int parse_overrides(pctx *P, const sim_scenario *sc, const cJSON *v, sim_policy *pol) {
    static const char *const keys[] = {"breaker", "timeout", NULL};
    int rc = need_object(P, v);
    for (const cJSON *e = v->child; rc == FB_OK && e; e = e->next) {
        size_t old = push_key(P, e->string);
        uint8_t idx = 0;
        cJSON name = *e;
        name.type = cJSON_String;
        name.valuestring = e->string;
        rc = lookup_provider(P, sc, &name, &idx);
        sim_provider_policy *pp = &pol->per_provider[idx];
        if (rc == FB_OK) rc = need_object(P, e);
        if (rc == FB_OK) rc = check_keys(P, e, keys);
        if (rc == FB_OK) rc = get_duration(P, e, "timeout", &pp->timeout_us, false);
        const cJSON *b = field(e, "breaker");
        if (rc == FB_OK && b) {
            size_t o2 = push_key(P, "breaker");
            rc = parse_breaker(P, b, &pp->breaker, &pp->has_breaker);
            pop(P, o2);
        }
        pop(P, old);
    }
    return rc;
}

static int parse_policy(pctx *P, const sim_scenario *sc, const cJSON *v, sim_policy *pol) {
    static const char *const keys[] = {
        "retry",    "breaker",    "fallback",  "context_window_check", "degraded", "stream",
        "classify", "rate_limit", "overrides", "description",          NULL};
    static const char *const cls_keys[] = {"rate_limit_trips", "timeout_trips",
                                           "honor_should_retry", "permanent_trips", NULL};
    static const char *const streams[] = {"buffer", "fail", "resume", "retry", NULL};
    int rc = need_object(P, v);
    if (rc == FB_OK) rc = check_keys(P, v, keys);
    if (rc != FB_OK) return rc;
    pol->retry.attempts = 1;
    pol->degraded_latency_us = dist_const(10e3);
    /* Default chain: every LLM provider in the order listed. */
    pol->order_len = 0;
    for (uint32_t i = 0; i < sc->provider_count; i++)
        if (sc->providers[i].kind == SIM_PROVIDER_LLM) pol->order[pol->order_len++] = (uint8_t)i;
    const cJSON *o;
    if ((o = field(v, "retry")) != NULL) {
        size_t old = push_key(P, "retry");
        rc = parse_retry(P, o, pol);
        pop(P, old);
    }
    bool has_breaker = false;
    fb_breaker_config bc;
    memset(&bc, 0, sizeof bc);
    if (rc == FB_OK && (o = field(v, "breaker")) != NULL) {
        static const char *const scopes[] = {"per_pod", "shared", NULL};
        size_t old = push_key(P, "breaker");
        cJSON *copy = NULL;
        if (cJSON_IsObject(o)) {
            /* scope and sync_delay belong to the variant, not to each breaker */
            int scope = 0;
            rc = get_enum(P, o, "scope", scopes, &scope);
            pol->breaker_scope = (sim_breaker_scope)scope;
            if (rc == FB_OK) rc = get_duration(P, o, "sync_delay", &pol->sync_delay_us, true);
            copy = cJSON_Duplicate(o, 1);
            if (copy == NULL) rc = fail(P, "out of memory");
            cJSON_DeleteItemFromObjectCaseSensitive(copy, "scope");
            cJSON_DeleteItemFromObjectCaseSensitive(copy, "sync_delay");
        }
        if (rc == FB_OK) rc = parse_breaker(P, copy ? copy : o, &bc, &has_breaker);
        cJSON_Delete(copy);
        pop(P, old);
    }
    for (uint32_t i = 0; i < SIM_PROVIDERS_MAX; i++) {
        pol->per_provider[i].has_breaker = has_breaker;
        pol->per_provider[i].breaker = bc;
    }
    if (rc == FB_OK && (o = field(v, "fallback")) != NULL) {
        size_t old = push_key(P, "fallback");
        rc = parse_order(P, sc, o, pol->order, &pol->order_len);
        pop(P, old);
    }
    if (rc == FB_OK) rc = get_bool(P, v, "context_window_check", &pol->context_check);
    if (rc == FB_OK && (o = field(v, "degraded")) != NULL) {
        size_t old = push_key(P, "degraded");
        if (cJSON_IsBool(o)) {
            pol->degraded = cJSON_IsTrue(o);
        } else {
            static const char *const dk[] = {"latency", NULL};
            rc = need_object(P, o);
            if (rc == FB_OK) rc = check_keys(P, o, dk);
            if (rc == FB_OK) rc = get_dist(P, o, "latency", true, &pol->degraded_latency_us);
            pol->degraded = true;
        }
        pop(P, old);
    }
    int s = 0;
    if (rc == FB_OK) rc = get_enum(P, v, "stream", streams, &s);
    pol->stream = (fb_stream_policy)s;
    if (rc == FB_OK && (o = field(v, "classify")) != NULL) {
        size_t old = push_key(P, "classify");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, cls_keys);
        if (rc == FB_OK) rc = get_switch(P, o, "rate_limit_trips", &pol->classify.rate_limit_trips);
        if (rc == FB_OK) rc = get_switch(P, o, "timeout_trips", &pol->classify.timeout_trips);
        if (rc == FB_OK)
            rc = get_switch(P, o, "honor_should_retry", &pol->classify.honor_should_retry);
        if (rc == FB_OK) rc = get_switch(P, o, "permanent_trips", &pol->classify.permanent_trips);
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(v, "rate_limit")) != NULL) {
        size_t old = push_key(P, "rate_limit");
        rc = parse_ratelimits(P, sc, o, pol);
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(v, "overrides")) != NULL) {
        size_t old = push_key(P, "overrides");
        rc = parse_overrides(P, sc, o, pol);
        pop(P, old);
    }
    if (rc == FB_OK && pol->order_len == 0)
        rc = fail(P,
                  "no LLM provider to call: add one to \"providers\" or name a \"fallback\" chain");
    return rc;
}

/* Deep-merge `over` into a copy of `base` (objects merge, anything else replaces). */
static cJSON *merge(const cJSON *base, const cJSON *over) {
    cJSON *out = cJSON_Duplicate(base, 1);
    if (out == NULL) return NULL;
    for (const cJSON *it = over->child; it; it = it->next) {
        cJSON *cur = cJSON_GetObjectItemCaseSensitive(out, it->string);
        cJSON *repl = cur && cJSON_IsObject(cur) && cJSON_IsObject(it) ? merge(cur, it)
                                                                       : cJSON_Duplicate(it, 1);
        if (repl == NULL) {
            cJSON_Delete(out);
            return NULL;
        }
        if (cur)
            cJSON_ReplaceItemInObjectCaseSensitive(out, it->string, repl);
        else
            cJSON_AddItemToObject(out, it->string, repl);
    }
    return out;
}

/* ---- overrides (--set) ---- */

/* Walk `path` ("a.b[2].c", "providers.openai.capacity") creating objects as needed. */
static int apply_set(cJSON *root, const char *set, sim_error *err) {
    char buf[512];
    const char *eq = strchr(set, '=');
    if (eq == NULL || eq == set) {
        snprintf(err->msg, sizeof err->msg, "--set %s: expected key=value", set);
        return FB_EINVAL;
    }
    size_t klen = (size_t)(eq - set);
    if (klen >= sizeof buf) {
        snprintf(err->msg, sizeof err->msg, "--set: key too long");
        return FB_EINVAL;
    }
    memcpy(buf, set, klen);
    buf[klen] = '\0';
    const char *value = eq + 1;
    cJSON *val = cJSON_ParseWithOpts(value, NULL, 1);
    if (val == NULL || (!cJSON_IsObject(val) && !cJSON_IsArray(val) && !cJSON_IsNumber(val) &&
                        !cJSON_IsBool(val) && !cJSON_IsNull(val) && !cJSON_IsString(val))) {
        cJSON_Delete(val);
        val = cJSON_CreateString(value);
    }
    if (val == NULL) goto oom;
    cJSON *cur = root;
    const cJSON *variants = cJSON_GetObjectItemCaseSensitive(root, "variants");
    char *save = NULL;
    char *tok = strtok_r(buf, ".", &save);
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        char *br = strchr(tok, '[');
        long index = -1;
        if (br) {
            char *end;
            *br = '\0';
            index = strtol(br + 1, &end, 10);
            if (end == br + 1 || *end != ']' || end[1] != '\0' || index < 0) {
                snprintf(err->msg, sizeof err->msg, "--set %s: bad index in '%s'", set, tok);
                cJSON_Delete(val);
                return FB_EINVAL;
            }
        }
        cJSON *child = NULL;
        if (cJSON_IsArray(cur) && index < 0) {
            /* arrays of named things may be addressed by name */
            for (cJSON *e = cur->child; e; e = e->next) {
                const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "class");
                if ((cJSON_IsString(n) && strcmp(n->valuestring, tok) == 0) ||
                    (cJSON_IsString(c) && strcmp(c->valuestring, tok) == 0))
                    child = e;
            }
            if (child == NULL) {
                snprintf(err->msg, sizeof err->msg, "--set %s: no element named '%s'", set, tok);
                cJSON_Delete(val);
                return FB_EINVAL;
            }
        } else if (cJSON_IsObject(cur)) {
            child = cJSON_GetObjectItemCaseSensitive(cur, tok);
            if (child == NULL && cur == variants) {
                /* a misspelled variant must not quietly become a new one */
                snprintf(err->msg, sizeof err->msg, "--set %s: no variant named '%s'", set, tok);
                cJSON_Delete(val);
                return FB_EINVAL;
            }
            if (index >= 0) {
                if (!cJSON_IsArray(child) || index >= cJSON_GetArraySize(child)) {
                    snprintf(err->msg, sizeof err->msg, "--set %s: '%s[%ld]' does not exist", set,
                             tok, index);
                    cJSON_Delete(val);
                    return FB_EINVAL;
                }
                if (next == NULL) {
                    cJSON_ReplaceItemInArray(child, (int)index, val);
                    return FB_OK;
                }
                child = cJSON_GetArrayItem(child, (int)index);
            } else if (next == NULL) {
                if (child)
                    cJSON_ReplaceItemInObjectCaseSensitive(cur, tok, val);
                else
                    cJSON_AddItemToObject(cur, tok, val);
                return FB_OK;
            } else if (child == NULL) {
                child = cJSON_AddObjectToObject(cur, tok);
                if (child == NULL) goto oom;
            }
        } else {
            snprintf(err->msg, sizeof err->msg, "--set %s: '%s' is not inside an object", set, tok);
            cJSON_Delete(val);
            return FB_EINVAL;
        }
        if (next == NULL) {
            /* replacing a named array element as a whole */
            cJSON_ReplaceItemViaPointer(cur, child, val);
            return FB_OK;
        }
        cur = child;
        tok = next;
    }
    cJSON_Delete(val);
    snprintf(err->msg, sizeof err->msg, "--set %s: empty key", set);
    return FB_EINVAL;
oom:
    cJSON_Delete(val);
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return FB_ENOMEM;
}

/* ---- the document ---- */

static int parse_top(pctx *P, const cJSON *root, sim_scenario *sc) {
    static const char *const keys[] = {
        "$schema", "name",      "description", "incident",  "seed",   "duration",
        "tick",    "traffic",   "pods",        "providers", "policy", "variants",
        "slo",     "spillover", "limits",      "expect",    NULL};
    static const char *const pod_keys[] = {"count", "workers", "queue", "request_timeout", NULL};
    static const char *const slo_keys[] = {"latency", NULL};
    static const char *const sp_keys[] = {"hold", "error_margin", "latency_factor", NULL};
    static const char *const lim_keys[] = {"in_flight", "events", "requests", "duration", NULL};
    int rc = need_object(P, root);
    if (rc == FB_OK) rc = check_keys(P, root, keys);
    if (rc == FB_OK) rc = need_key(P, root, "name");
    if (rc == FB_OK) rc = get_string(P, root, "name", sc->name, sizeof sc->name);
    if (rc == FB_OK) {
        for (const char *c = sc->name; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.')) {
                size_t old = push_key(P, "name");
                rc = fail(P, "use letters, digits, '-', '_' and '.' only (it names the output "
                             "folder)");
                pop(P, old);
                break;
            }
    }
    if (rc == FB_OK && field(root, "description") && !cJSON_IsString(field(root, "description"))) {
        size_t old = push_key(P, "description");
        rc = fail(P, "expected a string");
        pop(P, old);
    }
    if (rc == FB_OK && field(root, "incident") && !cJSON_IsString(field(root, "incident"))) {
        size_t old = push_key(P, "incident");
        rc = fail(P, "expected a string");
        pop(P, old);
    }
    sc->seed = 1;
    if (rc == FB_OK) rc = get_uint(P, root, "seed", &sc->seed, 0, 9007199254740991ULL);
    if (rc == FB_OK) rc = need_key(P, root, "duration");
    if (rc == FB_OK) rc = get_duration(P, root, "duration", &sc->duration_us, false);
    sc->tick_us = FB_US_PER_S;
    if (rc == FB_OK) rc = get_duration(P, root, "tick", &sc->tick_us, false);
    if (rc == FB_OK && sc->tick_us > sc->duration_us) {
        size_t old = push_key(P, "tick");
        rc = fail(P, "longer than the duration: the run would have no time series");
        pop(P, old);
    }
    if (rc == FB_OK && sc->duration_us / sc->tick_us > 10000000) {
        size_t old = push_key(P, "tick");
        rc = fail(P, "more than 10,000,000 time-series rows; use a longer tick");
        pop(P, old);
    }
    /* providers first: traffic and policies refer to them by name */
    const cJSON *o = field(root, "providers");
    if (rc == FB_OK) rc = need_key(P, root, "providers");
    if (rc == FB_OK) {
        size_t old = push_key(P, "providers");
        rc = need_array(P, o);
        size_t i = 0;
        for (const cJSON *e = o ? o->child : NULL; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_PROVIDERS_MAX) rc = fail(P, "at most %d providers", SIM_PROVIDERS_MAX);
            if (rc == FB_OK) rc = parse_provider(P, e, &sc->providers[i]);
            for (size_t k = 0; rc == FB_OK && k < i; k++)
                if (strcmp(sc->providers[k].name, sc->providers[i].name) == 0)
                    rc = fail(P, "two providers are named \"%s\"", sc->providers[i].name);
            if (rc == FB_OK) sc->provider_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        if (rc == FB_OK && i == 0) rc = fail(P, "at least one provider is needed");
        pop(P, old);
    }
    o = field(root, "traffic");
    if (rc == FB_OK) rc = need_key(P, root, "traffic");
    if (rc == FB_OK) {
        size_t old = push_key(P, "traffic");
        rc = need_array(P, o);
        size_t i = 0;
        for (const cJSON *e = o ? o->child : NULL; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_CLASSES_MAX) rc = fail(P, "at most %d traffic classes", SIM_CLASSES_MAX);
            if (rc == FB_OK) rc = parse_class(P, sc, e, &sc->classes[i]);
            for (size_t k = 0; rc == FB_OK && k < i; k++)
                if (strcmp(sc->classes[k].name, sc->classes[i].name) == 0)
                    rc = fail(P, "two classes are named \"%s\"", sc->classes[i].name);
            if (rc == FB_OK) sc->class_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        if (rc == FB_OK && i == 0) rc = fail(P, "at least one traffic class is needed");
        pop(P, old);
    }
    sc->pods.count = 1;
    sc->pods.workers = 64;
    sc->pods.queue = 100;
    sc->pods.request_timeout_us = 60 * FB_US_PER_S;
    if (rc == FB_OK && (o = field(root, "pods")) != NULL) {
        size_t old = push_key(P, "pods");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, pod_keys);
        if (rc == FB_OK) rc = get_u32(P, o, "count", &sc->pods.count, 1, SIM_PODS_MAX);
        if (rc == FB_OK) rc = get_u32(P, o, "workers", &sc->pods.workers, 1, 1000000);
        if (rc == FB_OK) rc = get_u32(P, o, "queue", &sc->pods.queue, 0, 10000000);
        if (rc == FB_OK)
            rc = get_duration(P, o, "request_timeout", &sc->pods.request_timeout_us, false);
        pop(P, old);
    }
    sc->slo_latency_us = 10 * FB_US_PER_S;
    if (rc == FB_OK && (o = field(root, "slo")) != NULL) {
        size_t old = push_key(P, "slo");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, slo_keys);
        if (rc == FB_OK) rc = get_duration(P, o, "latency", &sc->slo_latency_us, false);
        pop(P, old);
    }
    sc->spillover.hold_us = 30 * FB_US_PER_S;
    sc->spillover.error_margin = 0.01;
    sc->spillover.latency_factor = 1.5;
    if (rc == FB_OK && (o = field(root, "spillover")) != NULL) {
        size_t old = push_key(P, "spillover");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, sp_keys);
        if (rc == FB_OK) rc = get_duration(P, o, "hold", &sc->spillover.hold_us, false);
        if (rc == FB_OK) rc = get_number(P, o, "error_margin", &sc->spillover.error_margin, 0, 1);
        if (rc == FB_OK)
            rc = get_number(P, o, "latency_factor", &sc->spillover.latency_factor, 1, 1000);

        pop(P, old);
    }
    bool windows = false; /* spillover is only measured after faults and spikes */
    if (rc != FB_OK) return rc;
    for (uint32_t i = 0; i < sc->provider_count; i++) windows |= sc->providers[i].fault_count > 0;
    for (uint32_t i = 0; i < sc->class_count; i++) windows |= sc->classes[i].spike_count > 0;
    if (rc == FB_OK && windows && sc->spillover.hold_us > 120 * sc->tick_us) {
        size_t o1 = push_key(P, "spillover");
        size_t o2 = push_key(P, "hold");
        rc = fail(P,
                  "%s is more than 120 ticks (the window is kept tick by tick): shorten it or "
                  "lengthen the tick",
                  field(root, "spillover") ? "the hold" : "the default hold (30s)");
        pop(P, o2);
        pop(P, o1);
    }
    sc->limits.in_flight_max = 1000000;
    sc->limits.events_max = 4000000;
    sc->limits.requests_max = 1000000000;
    sc->limits.duration_max_us = 7 * 24 * 3600 * FB_US_PER_S;
    if (rc == FB_OK && (o = field(root, "limits")) != NULL) {
        size_t old = push_key(P, "limits");
        rc = need_object(P, o);
        if (rc == FB_OK) rc = check_keys(P, o, lim_keys);
        if (rc == FB_OK) rc = get_uint(P, o, "in_flight", &sc->limits.in_flight_max, 1, 100000000);
        if (rc == FB_OK) rc = get_uint(P, o, "events", &sc->limits.events_max, 16, 1000000000);
        if (rc == FB_OK)
            rc = get_uint(P, o, "requests", &sc->limits.requests_max, 1, 100000000000ULL);
        if (rc == FB_OK) rc = get_duration(P, o, "duration", &sc->limits.duration_max_us, false);
        pop(P, old);
    }
    if (rc == FB_OK && sc->duration_us > sc->limits.duration_max_us) {
        size_t old = push_key(P, "duration");
        char a[32], b[32];
        snprintf(a, sizeof a, "%.0fh", (double)sc->duration_us / 3600e6);
        snprintf(b, sizeof b, "%.0fh", (double)sc->limits.duration_max_us / 3600e6);
        rc = fail(P,
                  "%s of simulated traffic exceeds limits.duration (%s); raise the limit to "
                  "run longer",
                  a, b);
        pop(P, old);
    }
    if (rc == FB_OK && (o = field(root, "expect")) != NULL) {
        size_t old = push_key(P, "expect");
        rc = need_array(P, o);
        size_t i = 0;
        for (const cJSON *e = o ? o->child : NULL; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_index(P, i);
            if (i >= SIM_EXPECT_MAX)
                rc = fail(P, "at most %d expectations", SIM_EXPECT_MAX);
            else if (!cJSON_IsString(e))
                rc = fail(P, "expected a string such as "
                             "\"tuned.success_rate >= 0.99\"");
            else if (strlen(e->valuestring) >= SIM_EXPECT_LEN)
                rc = fail(P, "longer than %d characters", SIM_EXPECT_LEN - 1);
            else
                snprintf(sc->expect[i], SIM_EXPECT_LEN, "%s", e->valuestring);
            if (rc == FB_OK) sc->expect_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        pop(P, old);
    }
    /* policies: `policy` is the base every variant is merged over */
    const cJSON *base = field(root, "policy");
    cJSON *empty = NULL;
    if (rc == FB_OK && base && !cJSON_IsObject(base)) {
        size_t old = push_key(P, "policy");
        rc = fail(P, "expected an object, got %s", type_name(base));
        pop(P, old);
    }
    if (rc == FB_OK && base == NULL) base = empty = cJSON_CreateObject();
    const cJSON *vars = field(root, "variants");
    if (rc == FB_OK && vars == NULL) {
        size_t old = push_key(P, "policy");
        snprintf(sc->variants[0].name, SIM_NAME_MAX, "default");
        rc = parse_policy(P, sc, base, &sc->variants[0]);
        sc->variant_count = 1;
        pop(P, old);
    } else if (rc == FB_OK) {
        size_t old = push_key(P, "variants");
        rc = need_object(P, vars);
        size_t i = 0;
        for (const cJSON *e = vars->child; rc == FB_OK && e; e = e->next, i++) {
            size_t o2 = push_key(P, e->string);
            if (i >= SIM_VARIANTS_MAX) rc = fail(P, "at most %d variants", SIM_VARIANTS_MAX);
            if (rc == FB_OK &&
                (strlen(e->string) == 0 || strlen(e->string) >= SIM_NAME_MAX ||
                 !(isalpha((unsigned char)e->string[0]) || e->string[0] == '_') ||
                 strspn(e->string, "abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(e->string)))
                rc = fail(P, "variant names start with a letter and use letters, digits, '_' and "
                             "'-' (expectations refer to them)");
            if (rc == FB_OK) rc = need_object(P, e);
            if (rc == FB_OK) {
                cJSON *m = merge(base, e);
                if (m == NULL) rc = fail(P, "out of memory");
                snprintf(sc->variants[i].name, SIM_NAME_MAX, "%s", e->string);
                if (rc == FB_OK) rc = parse_policy(P, sc, m, &sc->variants[i]);
                cJSON_Delete(m);
            }
            if (rc == FB_OK) sc->variant_count = (uint32_t)(i + 1);
            pop(P, o2);
        }
        if (rc == FB_OK && i == 0) rc = fail(P, "at least one variant is needed");
        pop(P, old);
    }
    cJSON_Delete(empty);
    /* a brownout cuts the concurrency limit: without one it would do nothing */
    for (uint32_t p = 0; rc == FB_OK && p < sc->provider_count; p++) {
        const sim_provider *pv = &sc->providers[p];
        for (uint32_t f = 0; rc == FB_OK && f < pv->fault_count; f++) {
            if (pv->faults[f].kind != SIM_FAULT_BROWNOUT || pv->concurrency > 0) continue;
            size_t o1 = push_key(P, "providers");
            size_t o2 = push_index(P, p);
            size_t o3 = push_key(P, "faults");
            size_t o4 = push_index(P, f);
            rc = fail(P,
                      "a brownout cuts capacity.concurrency, which provider \"%s\" does not "
                      "set",
                      pv->name);
            pop(P, o4);
            pop(P, o3);
            pop(P, o2);
            pop(P, o1);
        }
    }
    return rc;
}

static void line_col(const char *text, size_t off, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int sim_scenario_parse(const char *text, size_t len, const char *file, const char *const *sets,
                       size_t set_count, const uint64_t *seed_override, sim_scenario **out,
                       sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file ? file : "<scenario>");
    *out = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root == NULL) {
        int line, col;
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        line_col(text, off, &line, &col);
        snprintf(err->msg, sizeof err->msg, "invalid JSON at line %d, column %d", line, col);
        return FB_EPARSE;
    }
    int rc = FB_OK;
    for (size_t i = 0; i < set_count && rc == FB_OK; i++) {
        if (!cJSON_IsObject(root)) break;
        rc = apply_set(root, sets[i], err);
    }
    if (rc != FB_OK) {
        cJSON_Delete(root);
        return rc;
    }
    sim_scenario *sc = calloc(1, sizeof *sc);
    if (sc == NULL) {
        cJSON_Delete(root);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    snprintf(sc->file, sizeof sc->file, "%s", err->file);
    pctx P = {err, "", 0, false};
    rc = parse_top(&P, root, sc);
    if (rc == FB_OK && seed_override) sc->seed = *seed_override;
    if (rc != FB_OK) {
        cJSON_Delete(root);
        free(sc);
        return rc;
    }
    if (seed_override) {
        cJSON_DeleteItemFromObjectCaseSensitive(root, "seed");
        cJSON_AddNumberToObject(root, "seed", (double)*seed_override);
    }
    sc->json = root;
    *out = sc;
    return FB_OK;
}

int sim_faults_parse(const char *text, size_t len, const char *file, sim_fault *out, uint32_t cap,
                     uint32_t *count, sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file ? file : "<faults>");
    *count = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root == NULL) {
        int line, col;
        line_col(text, end && end >= text ? (size_t)(end - text) : 0, &line, &col);
        snprintf(err->msg, sizeof err->msg, "invalid JSON at line %d, column %d", line, col);
        return FB_EPARSE;
    }
    pctx P = {err, "", 0, true};
    const cJSON *arr = root;
    int rc = FB_OK;
    if (cJSON_IsObject(root)) { /* {"faults": [...]} */
        static const char *const keys[] = {"faults", NULL};
        rc = check_keys(&P, root, keys);
        if (rc == FB_OK) rc = need_key(&P, root, "faults");
        arr = field(root, "faults");
    }
    size_t old = push_key(&P, "faults");
    if (rc == FB_OK) rc = need_array(&P, arr);
    uint32_t i = 0;
    for (const cJSON *e = rc == FB_OK ? arr->child : NULL; rc == FB_OK && e; e = e->next, i++) {
        size_t o2 = push_index(&P, i);
        if (i >= cap) rc = fail(&P, "at most %u faults", cap);
        if (rc == FB_OK) {
            memset(&out[i], 0, sizeof out[i]);
            rc = parse_fault(&P, e, &out[i]);
        }
        pop(&P, o2);
    }
    pop(&P, old);
    cJSON_Delete(root);
    if (rc == FB_OK) *count = i;
    return rc;
}

int sim_scenario_load(const char *file, const char *const *sets, size_t set_count,
                      const uint64_t *seed_override, sim_scenario **out, sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    *out = NULL;
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        snprintf(err->msg, sizeof err->msg, "cannot open: %s", strerror(errno));
        return FB_EIO;
    }
    char *buf = malloc(SCENARIO_FILE_MAX + 1);
    if (buf == NULL) {
        fclose(f);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    size_t n = fread(buf, 1, SCENARIO_FILE_MAX + 1, f);
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err) {
        free(buf);
        snprintf(err->msg, sizeof err->msg, "read error");
        return FB_EIO;
    }
    if (n > SCENARIO_FILE_MAX) {
        free(buf);
        snprintf(err->msg, sizeof err->msg, "larger than %d MiB", SCENARIO_FILE_MAX >> 20);
        return FB_ECAP;
    }
    buf[n] = '\0';
    int rc = sim_scenario_parse(buf, n, file, sets, set_count, seed_override, out, err);
    free(buf);
    return rc;
}

void sim_scenario_free(sim_scenario *sc) {
    if (sc == NULL) return;
    cJSON_Delete((cJSON *)sc->json);
    free(sc);
}

void sim_error_format(const sim_error *err, char *buf, size_t len) {
    if (err->path[0])
        snprintf(buf, len, "%s: %s: %s", err->file, err->path, err->msg);
    else
        snprintf(buf, len, "%s: %s", err->file, err->msg);
}

int sim_scenario_provider(const sim_scenario *sc, const char *name) {
    for (uint32_t i = 0; i < sc->provider_count; i++)
        if (strcmp(sc->providers[i].name, name) == 0) return (int)i;
    return -1;
}

int sim_scenario_variant(const sim_scenario *sc, const char *name) {
    for (uint32_t i = 0; i < sc->variant_count; i++)
        if (strcmp(sc->variants[i].name, name) == 0) return (int)i;
    return -1;
}
