/*
 * load_json.c - the loader's footing: errors with their JSON path, the
 * did-you-mean, key checks, typed getters and units (distributions: load_dist.c).
 *
 * Every getter pushes its key onto the path before it complains, so that a
 * message always reads "file: providers[0].latency.ttft: ...".
 */
#include "scenario/loadint.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and paths ---- */

int scn__fail(pctx *P, const char *fmt, ...) {
    va_list ap;
    if (P->rc != FB_OK) return P->rc; /* keep the first error */
    P->rc = FB_EINVAL;
    if (P->err->msg[0] != '\0') return P->rc; /* recorded through another context */
    snprintf(P->err->path, sizeof P->err->path, "%s", P->path);
    va_start(ap, fmt);
    vsnprintf(P->err->msg, sizeof P->err->msg, fmt, ap);
    va_end(ap);
    return FB_EINVAL;
}

int scn__keep(pctx *P, int rc) {
    if (P->rc == FB_OK) P->rc = rc;
    return P->rc;
}

size_t scn__push_key(pctx *P, const char *key) {
    size_t old = P->len;
    int n = snprintf(P->path + P->len, sizeof P->path - P->len, "%s%s", P->len ? "." : "", key);
    if (n > 0) P->len = P->len + (size_t)n < sizeof P->path ? P->len + (size_t)n : P->len;
    return old;
}

size_t scn__push_index(pctx *P, size_t i) {
    size_t old = P->len;
    int n = snprintf(P->path + P->len, sizeof P->path - P->len, "[%zu]", i);
    if (n > 0) P->len = P->len + (size_t)n < sizeof P->path ? P->len + (size_t)n : P->len;
    return old;
}

void scn__pop(pctx *P, size_t old) {
    P->len = old;
    P->path[old] = '\0';
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

/* The strict reading first (load_strict.c); a plain syntax error keeps cJSON's words. */
cJSON *scn__parse_json(const char *text, size_t len, sim_error *err) {
    const char *end = NULL;
    sim_error strict = {{0}, {0}, {0}};
    int kind = scn__strict_json(text, len, &strict);
    cJSON *root = kind == LD_STRICT_OK || kind == LD_STRICT_SYNTAX
                      ? cJSON_ParseWithLengthOpts(text, len, &end, 0)
                      : NULL;
    if (root == NULL && (kind == LD_STRICT_OK || kind == LD_STRICT_SYNTAX)) {
        int line, col;
        line_col(text, end && end >= text ? (size_t)(end - text) : 0, &line, &col);
        snprintf(err->msg, sizeof err->msg, "invalid JSON at line %d, column %d", line, col);
    } else if (kind != LD_STRICT_OK) {
        cJSON_Delete(root); /* what cJSON accepted and the strict reading did not */
        root = NULL;
        snprintf(err->path, sizeof err->path, "%s", strict.path);
        snprintf(err->msg, sizeof err->msg, "%s", strict.msg);
    }
    return root;
}

/* ---- names and keys ---- */

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

const char *scn__suggest(const char *word, const char *const *names) {
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

const char *scn_suggest(const char *word, const char *const *names) {
    return scn__suggest(word, names);
}

const char *scn__type_name(const cJSON *v) {
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "invalid";
}

const cJSON *scn__field(const cJSON *obj, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A "description" (allowed on most objects) is always a string. */
static int check_description(pctx *P, const cJSON *obj) {
    const cJSON *d = scn__field(obj, "description");
    if (d == NULL || cJSON_IsString(d)) return FB_OK;
    size_t old = scn__push_key(P, "description");
    int rc = scn__fail(P, "expected a string, got %s", scn__type_name(d));
    scn__pop(P, old);
    return rc;
}

static bool allows(const char *const *allowed, const char *key) {
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(key, allowed[i]) == 0) return true;
    return false;
}

/*
 * A habit from other tools: retry libraries count retries after the first
 * call (max_retries: 3), fusebox counts attempts, the first included
 * (attempts: 4). Said where "attempts" (or "retry") is a key; NULL elsewhere.
 */
static const char *retry_habit(const cJSON *it, const char *const *allowed, char *buf, size_t len) {
    static const char *const retries[] = {"max_retries", "retries", "num_retries", "retry_count",
                                          NULL};
    bool count = cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble < 1000 &&
                 it->valuedouble == floor(it->valuedouble);
    char attempts[32];
    if (count)
        snprintf(attempts, sizeof attempts, "%g", it->valuedouble + 1);
    else
        snprintf(attempts, sizeof attempts, "%s + 1", it->string);
    if (allows(retries, it->string) && allows(allowed, "attempts"))
        snprintf(buf, len, "fusebox counts attempts, the first call included: \"attempts\": %s",
                 attempts);
    else if (allows(retries, it->string) && allows(allowed, "retry"))
        snprintf(buf, len,
                 "retries are set in \"retry\", as attempts with the first call included: "
                 "\"retry\": {\"attempts\": %s}",
                 attempts);
    else if (strcmp(it->string, "max_attempts") == 0 && allows(allowed, "attempts"))
        snprintf(buf, len, "the key is \"attempts\" here, the first call included");
    else
        return NULL;
    return buf;
}

int scn__check_keys(pctx *P, const cJSON *obj, const char *const *allowed) {
    if (P->rc != FB_OK) return P->rc;
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (allows(allowed, it->string)) continue;
        size_t old = scn__push_key(P, it->string);
        char buf[160];
        const char *habit = retry_habit(it, allowed, buf, sizeof buf);
        const char *s = scn__suggest(it->string, allowed);
        int rc = habit ? scn__fail(P, "unknown key '%s' (%s)", it->string, habit)
                 : s   ? scn__fail(P, "unknown key '%s' (did you mean '%s'?)", it->string, s)
                       : scn__fail(P, "unknown key '%s'", it->string);
        scn__pop(P, old);
        return rc;
    }
    return check_description(P, obj);
}

int scn__need_object(pctx *P, const cJSON *v) {
    if (P->rc != FB_OK) return P->rc;
    return cJSON_IsObject(v) ? FB_OK
                             : scn__fail(P, "expected an object, got %s", scn__type_name(v));
}

int scn__fail_past_end(pctx *P, const char *key, const char *what, fb_time_us at_us,
                       fb_time_us end_us) {
    size_t old = scn__push_key(P, key);
    int rc = scn__fail(P,
                       "%s starts at %gs, at or after the end of traffic (duration %gs): it would "
                       "never apply",
                       what, (double)at_us / 1e6, (double)end_us / 1e6);
    scn__pop(P, old);
    return rc;
}

int scn__need_key(pctx *P, const cJSON *obj, const char *key) {
    if (P->rc != FB_OK) return P->rc;
    if (scn__field(obj, key)) return FB_OK;
    return scn__fail(P, "missing required key '%s'", key);
}

int scn__check_object(pctx *P, const cJSON *v, const char *const *keys,
                      const char *const *required) {
    scn__need_object(P, v);
    scn__check_keys(P, v, keys);
    for (size_t i = 0; required && required[i]; i++) scn__need_key(P, v, required[i]);
    return P->rc;
}

int scn__check_name(pctx *P, const char *key, const char *name) {
    if (P->rc != FB_OK) return P->rc;
    if (name[0] != '\0' && strspn(name, LD_NAME_CHARS) == strlen(name)) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__fail(P,
                       "\"%s\": use letters, digits, '-', '_' and '.' only (names appear in file "
                       "names, CSV headers and metric names)",
                       name);
    scn__pop(P, old);
    return rc;
}

/* ---- walking ---- */

static int need_array(pctx *P, const cJSON *v) {
    return cJSON_IsArray(v) ? FB_OK : scn__fail(P, "expected an array, got %s", scn__type_name(v));
}

int scn__key(pctx *P, const cJSON *obj, const char *key, ld_parse_fn parse, void *out) {
    if (P->rc != FB_OK) return P->rc;
    const cJSON *v = scn__field(obj, key);
    if (v == NULL) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = parse(P, v, out);
    scn__pop(P, old);
    return scn__keep(P, rc);
}

int scn__array(pctx *P, const cJSON *v, uint32_t cap, const char *what, ld_item_fn item, void *out,
               uint32_t *count) {
    if (P->rc != FB_OK) return P->rc;
    if (need_array(P, v) != FB_OK) return P->rc; /* explicit: the items of an array */
    uint32_t i = 0;
    /* explicit: the walk stops at the first error (an item reads what the items before it set),
     * and *count counts the items read whole */
    for (const cJSON *e = v->child; P->rc == FB_OK && e; e = e->next, i++) {
        size_t old = scn__push_index(P, i);
        if (i >= cap)
            scn__fail(P, "at most %u %s", cap, what);
        else if (scn__keep(P, item(P, e, i, out)) == FB_OK)
            *count = i + 1;
        scn__pop(P, old);
    }
    return P->rc;
}

/* ---- units ---- */

/*
 * The number of a duration or a rate, in the documented grammar (the
 * schema's): digits with an optional point, at least one digit in all
 * ("250", "1.5", ".5", "5."), then an optional exponent ("1e4"). strtod alone
 * would also read hex ("0x10"), "inf", "nan" and a sign.
 */
static int decimal(const char *s, double *v, char **end) {
    const char *d = "0123456789";
    size_t k = strspn(s, d), digits = k;
    if (s[k] == '.') {
        size_t f = strspn(s + k + 1, d);
        digits += f;
        k += 1 + f;
    }
    if (digits == 0) return FB_EPARSE;
    if (s[k] == 'e' || s[k] == 'E') {
        size_t e = k + 1 + (s[k + 1] == '+' || s[k + 1] == '-');
        size_t x = strspn(s + e, d);
        if (x == 0) return FB_EPARSE;
        k = e + x;
    }
    errno = 0;
    *v = strtod(s, end);
    if (*end != s + k) return FB_EPARSE; /* strtod read more than the grammar */
    if (errno != 0 || !isfinite(*v)) return FB_ERANGE;
    return FB_OK;
}

/* A duration's units, largest first (a unit's other spellings beside it, as "min" and "m"). */
const ld_unit scn__duration_units[] = {{"d", 86400e6}, {"h", 3600e6}, {"min", 60e6}, {"m", 60e6},
                                       {"s", 1e6},     {"ms", 1e3},   {"us", 1},     {NULL, 0}};

/* The unit at the start of s (the longest that matches: "ms" before "m"), or -1. */
static int duration_unit(const char *s, size_t *len) {
    const ld_unit *units = scn__duration_units;
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; units[i].name; i++) {
        size_t n = strlen(units[i].name);
        if (n > best_len && strncmp(s, units[i].name, n) == 0) {
            best = i;
            best_len = n;
        }
    }
    *len = best_len;
    return best;
}

/*
 * A decimal number and a unit, or several, each unit smaller than the one
 * before ("20m15s", "1h30m", "1m0.5s"; Go's time.ParseDuration form).
 */
int scn_parse_duration(const char *s, fb_time_us *out) {
    if (s == NULL) return FB_EPARSE;
    double us = 0, last = INFINITY;
    const char *p = s;
    do {
        char *end;
        double v;
        int rc = decimal(p, &v, &end);
        if (rc != FB_OK) return rc;
        size_t n;
        int u = duration_unit(end, &n);
        if (u < 0 || !(scn__duration_units[u].scale < last)) return FB_EPARSE;
        last = scn__duration_units[u].scale;
        us += v * scn__duration_units[u].scale;
        p = end + n;
    } while (*p != '\0');
    /* at most ~31 years: sums of times stay far from int64 overflow */
    if (us < 0 || us > 1e15) return FB_ERANGE;
    *out = (fb_time_us)llround(us);
    return FB_OK;
}

/* A rate's units (none: per second), in seconds. */
const ld_unit scn__rate_units[] = {{"/s", 1},    {"/m", 60},    {"/min", 60},
                                   {"/h", 3600}, {"/d", 86400}, {NULL, 0}};

int scn_parse_rate(const char *s, double *per_s) {
    char *end;
    double v;
    if (s == NULL || decimal(s, &v, &end) != FB_OK) return FB_EPARSE;
    double div = *end == '\0' ? 1 : 0;
    for (const ld_unit *u = scn__rate_units; div == 0 && u->name; u++)
        if (strcmp(end, u->name) == 0) div = u->scale;
    if (div == 0) return FB_EPARSE;
    *per_s = v / div;
    return FB_OK;
}

/* ---- typed getters ---- */

int scn__get_duration_value(pctx *P, const cJSON *v, fb_time_us *out, bool allow_zero) {
    if (P->rc != FB_OK) return P->rc;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && isfinite(v->valuedouble))
        return scn__fail(
            P,
            "expected a duration string such as \"250ms\", \"30s\", \"5m\", got a "
            "number (durations are strings with a unit: \"%gs\" for %g seconds, \"%gms\" "
            "for %g milliseconds)",
            v->valuedouble, v->valuedouble, v->valuedouble, v->valuedouble);
    if (!cJSON_IsString(v))
        return scn__fail(P, "expected a duration string such as \"250ms\", \"30s\", \"5m\", got %s",
                         scn__type_name(v));
    fb_time_us d;
    int rc = scn_parse_duration(v->valuestring, &d);
    if (rc == FB_ERANGE) return scn__fail(P, "duration \"%s\" is out of range", v->valuestring);
    if (rc != FB_OK) {
        if (v->valuestring[0] == '-')
            return scn__fail(P, "duration \"%s\" is negative", v->valuestring);
        if (v->valuestring[strspn(v->valuestring, "0123456789.")] == '\0')
            return scn__fail(P,
                             "cannot read duration \"%s\": a duration needs a unit (\"%ss\" for "
                             "seconds, \"%sms\" for milliseconds)",
                             v->valuestring, v->valuestring, v->valuestring);
        return scn__fail(P,
                         "cannot read duration \"%s\" (use a decimal number and a unit: us, ms, s, "
                         "m, h, d, as in \"250ms\" or \"1.5s\"; or several, largest first, as in "
                         "\"20m15s\")",
                         v->valuestring);
    }
    if (!allow_zero && d == 0) return scn__fail(P, "duration must be greater than zero");
    *out = d;
    return FB_OK;
}

int scn__get_duration(pctx *P, const cJSON *obj, const char *key, fb_time_us *out,
                      bool allow_zero) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__get_duration_value(P, v, out, allow_zero);
    scn__pop(P, old);
    return rc;
}

int scn__get_number_value(pctx *P, const cJSON *v, double *out, double lo, double hi) {
    if (P->rc != FB_OK) return P->rc;
    if (!cJSON_IsNumber(v)) return scn__fail(P, "expected a number, got %s", scn__type_name(v));
    if (!(v->valuedouble >= lo && v->valuedouble <= hi) && hi == 1 && lo >= 0 &&
        v->valuedouble > 1 && v->valuedouble <= 100)
        return scn__fail(P,
                         "%g is out of range [%g, %g] (rates and shares are fractions: %g%% is %g)",
                         v->valuedouble, lo, hi, v->valuedouble, v->valuedouble / 100);
    if (!(v->valuedouble >= lo && v->valuedouble <= hi))
        return scn__fail(P, "%g is out of range [%g, %g]", v->valuedouble, lo, hi);
    *out = v->valuedouble;
    return FB_OK;
}

int scn__get_number(pctx *P, const cJSON *obj, const char *key, double *out, double lo, double hi) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__get_number_value(P, v, out, lo, hi);
    scn__pop(P, old);
    return rc;
}

int scn__get_uint_value(pctx *P, const cJSON *v, uint64_t *out, uint64_t lo, uint64_t hi) {
    if (P->rc != FB_OK) return P->rc;
    if (!cJSON_IsNumber(v)) return scn__fail(P, "expected an integer, got %s", scn__type_name(v));
    if (v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo ||
        v->valuedouble > (double)hi)
        return scn__fail(P, "expected an integer in [%llu, %llu], got %g", (unsigned long long)lo,
                         (unsigned long long)hi, v->valuedouble);
    *out = (uint64_t)v->valuedouble;
    return FB_OK;
}

int scn__get_uint(pctx *P, const cJSON *obj, const char *key, uint64_t *out, uint64_t lo,
                  uint64_t hi) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__get_uint_value(P, v, out, lo, hi);
    scn__pop(P, old);
    return rc;
}

int scn__get_u32(pctx *P, const cJSON *obj, const char *key, uint32_t *out, uint32_t lo,
                 uint32_t hi) {
    uint64_t v = *out;
    scn__get_uint(P, obj, key, &v, lo, hi);
    *out = (uint32_t)v; /* as it was unless read: v is at most hi */
    return P->rc;
}

int scn__get_bool(pctx *P, const cJSON *obj, const char *key, bool *out) {
    if (P->rc != FB_OK) return P->rc;
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = FB_OK;
    if (!cJSON_IsBool(v))
        rc = scn__fail(P, "expected true or false, got %s", scn__type_name(v));
    else
        *out = cJSON_IsTrue(v);
    scn__pop(P, old);
    return rc;
}

int scn__get_switch(pctx *P, const cJSON *obj, const char *key, fb_switch *out) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    bool b = false;
    if (scn__get_bool(P, obj, key, &b) != FB_OK) return P->rc;
    *out = b ? FB_ON : FB_OFF;
    return FB_OK;
}

int scn__get_string_value(pctx *P, const cJSON *v, char *out, size_t cap) {
    if (P->rc != FB_OK) return P->rc;
    if (!cJSON_IsString(v)) return scn__fail(P, "expected a string, got %s", scn__type_name(v));
    if (strlen(v->valuestring) >= cap) return scn__fail(P, "longer than %zu characters", cap - 1);
    snprintf(out, cap, "%s", v->valuestring);
    return FB_OK;
}

int scn__get_string(pctx *P, const cJSON *obj, const char *key, char *out, size_t cap) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__get_string_value(P, v, out, cap);
    scn__pop(P, old);
    return rc;
}

/* Not one of `names`: say which it might be, and list them all. */
static int unknown_value(pctx *P, const char *value, const char *const *names) {
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    const char *s = scn__suggest(value, names);
    return s ? scn__fail(P, "unknown value \"%s\" (did you mean \"%s\"?); one of: %s", value, s,
                         list)
             : scn__fail(P, "unknown value \"%s\"; one of: %s", value, list);
}

int scn__get_enum_value(pctx *P, const cJSON *v, const char *const *names, int *out) {
    if (P->rc != FB_OK) return P->rc;
    if (!cJSON_IsString(v)) return scn__fail(P, "expected a string, got %s", scn__type_name(v));
    int found = -1;
    for (int i = 0; names[i]; i++)
        if (strcmp(v->valuestring, names[i]) == 0) found = i;
    if (found < 0) return unknown_value(P, v->valuestring, names);
    *out = found;
    return FB_OK;
}

int scn__get_enum(pctx *P, const cJSON *obj, const char *key, const char *const *names, int *out) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__get_enum_value(P, v, names, out);
    scn__pop(P, old);
    return rc;
}

int scn__get_rate_value(pctx *P, const cJSON *v, double *out) {
    if (P->rc != FB_OK) return P->rc;
    if (cJSON_IsNumber(v)) {
        if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble))
            return scn__fail(P, "rate must be a non-negative number");
        *out = v->valuedouble;
        return FB_OK;
    }
    if (!cJSON_IsString(v) || scn_parse_rate(v->valuestring, out) != FB_OK)
        return scn__fail(P, "expected a rate such as \"40/s\", \"2400/m\" or \"5/h\"");
    return FB_OK;
}

int scn__get_rate(pctx *P, const cJSON *obj, const char *key, double *out) {
    const cJSON *v = scn__field(obj, key);
    if (!v) return FB_OK;
    size_t old = scn__push_key(P, key);
    int rc = scn__get_rate_value(P, v, out);
    scn__pop(P, old);
    return rc;
}
