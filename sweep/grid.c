/*
 * grid.c - the --grid syntax: "KEY=v1,v2,v3" (values split on commas outside
 * quotes and brackets) and "KEY=[log:]LO..HI". See sweep.h.
 */
#include "sweep/sweepint.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *sweep_trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

static bool is_integer_text(const char *s) {
    if (*s == '-') s++;
    if (*s == '\0') return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

int sweep_parse_number(const char *s, double *out) {
    char *end;
    if (*s == '\0') return FB_EPARSE;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v)) return FB_EPARSE;
    *out = v;
    return FB_OK;
}

static int parse_range(const char *arg, char *spec, sweep_dim *dim, char *msg, size_t msglen) {
    dim->kind = SWEEP_RANGE;
    if (strncmp(spec, "log:", 4) == 0) {
        dim->log = true;
        spec += 4;
    }
    char *dots = strstr(spec, "..");
    if (dots == NULL) {
        snprintf(msg, msglen, "--grid %s: 'log:' needs a range LO..HI", arg);
        return FB_EINVAL;
    }
    *dots = '\0';
    const char *lo = sweep_trim(spec), *hi = sweep_trim(dots + 2);
    fb_time_us dlo, dhi;
    if (scn_parse_duration(lo, &dlo) == FB_OK && scn_parse_duration(hi, &dhi) == FB_OK) {
        dim->type = SWEEP_DURATION;
        dim->lo = (double)dlo;
        dim->hi = (double)dhi;
    } else if (sweep_parse_number(lo, &dim->lo) == FB_OK &&
               sweep_parse_number(hi, &dim->hi) == FB_OK) {
        dim->type = is_integer_text(lo) && is_integer_text(hi) ? SWEEP_INTEGER : SWEEP_NUMBER;
    } else {
        snprintf(msg, msglen,
                 "--grid %s: cannot read the range '%s..%s' (both ends numbers, or both "
                 "durations such as 100ms..2s)",
                 arg, lo, hi);
        return FB_EINVAL;
    }
    if (!(dim->lo < dim->hi)) {
        snprintf(msg, msglen, "--grid %s: the range's low end must be below its high end", arg);
        return FB_EINVAL;
    }
    if (dim->log && dim->lo <= 0) {
        snprintf(msg, msglen, "--grid %s: a log: range needs a low end above zero", arg);
        return FB_EINVAL;
    }
    return FB_OK;
}

/* Split on commas outside "strings", [arrays] and {objects}. */
static int parse_list(const char *arg, char *spec, sweep_dim *dim, char *msg, size_t msglen) {
    dim->kind = SWEEP_LIST;
    size_t cap = 8;
    dim->values = calloc(cap, sizeof *dim->values);
    if (dim->values == NULL) goto oom;
    char *start = spec;
    int depth = 0;
    bool quoted = false;
    for (char *p = spec;; p++) {
        if (quoted) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                quoted = false;
            else if (*p == '\0')
                break;
            continue;
        }
        if (*p == '"')
            quoted = true;
        else if (*p == '[' || *p == '{')
            depth++;
        else if ((*p == ']' || *p == '}') && depth > 0)
            depth--;
        if (*p != '\0' && (*p != ',' || depth > 0)) continue;
        bool last = *p == '\0';
        *p = '\0';
        const char *v = sweep_trim(start);
        if (*v == '\0') {
            snprintf(msg, msglen, "--grid %s: empty value", arg);
            return FB_EINVAL;
        }
        for (uint32_t i = 0; i < dim->value_count; i++)
            if (strcmp(dim->values[i], v) == 0) {
                snprintf(msg, msglen, "--grid %s: value '%s' is listed twice", arg, v);
                return FB_EINVAL;
            }
        if (dim->value_count == SWEEP_VALUES_MAX) {
            snprintf(msg, msglen, "--grid %s: more than %d values", arg, SWEEP_VALUES_MAX);
            return FB_ECAP;
        }
        if (dim->value_count == cap) {
            char **bigger = realloc(dim->values, 2 * cap * sizeof *bigger);
            if (bigger == NULL) goto oom;
            dim->values = bigger;
            cap *= 2;
        }
        dim->values[dim->value_count] = strdup(v);
        if (dim->values[dim->value_count] == NULL) goto oom;
        dim->value_count++;
        if (last) break;
        start = p + 1;
    }
    if (quoted || depth > 0) {
        snprintf(msg, msglen, "--grid %s: unbalanced quotes or brackets", arg);
        return FB_EINVAL;
    }
    return FB_OK;
oom:
    snprintf(msg, msglen, "out of memory");
    return FB_ENOMEM;
}

int sweep_parse_grid(const char *arg, sweep_dim *dim, char *msg, size_t msglen) {
    memset(dim, 0, sizeof *dim);
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg) {
        snprintf(msg, msglen, "--grid %s: expected KEY=v1,v2,... or KEY=LO..HI", arg);
        return FB_EINVAL;
    }
    size_t klen = (size_t)(eq - arg);
    if (klen >= sizeof dim->key) {
        snprintf(msg, msglen, "--grid %.40s...: key too long", arg);
        return FB_EINVAL;
    }
    memcpy(dim->key, arg, klen);
    dim->key[klen] = '\0';
    for (const char *k = dim->key; *k; k++)
        if (!isalnum((unsigned char)*k) && strchr("._-[]$", *k) == NULL) {
            snprintf(msg, msglen,
                     "--grid %s: key '%s' has a '%c' (keys are paths like "
                     "breaker.open or providers.openai.capacity.rpm)",
                     arg, dim->key, *k);
            return FB_EINVAL;
        }
    if (dim->key[0] == '.' || dim->key[klen - 1] == '.' || strstr(dim->key, "..")) {
        snprintf(msg, msglen, "--grid %s: key '%s' has an empty path segment", arg, dim->key);
        return FB_EINVAL;
    }
    char *spec = strdup(eq + 1);
    if (spec == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    int rc;
    const char *t = sweep_trim(spec);
    if (*t == '\0') {
        snprintf(msg, msglen, "--grid %s: no values", arg);
        rc = FB_EINVAL;
    } else if (strncmp(t, "log:", 4) == 0 ||
               (strstr(t, "..") && !strchr(t, ',') && !strchr(t, '"') && !strchr(t, '{'))) {
        rc = parse_range(arg, (char *)t, dim, msg, msglen);
    } else {
        rc = parse_list(arg, (char *)t, dim, msg, msglen);
    }
    free(spec);
    if (rc != FB_OK) sweep_dim_free(dim);
    return rc;
}

void sweep_dim_free(sweep_dim *dim) {
    for (uint32_t i = 0; i < dim->value_count; i++) free(dim->values[i]);
    free(dim->values);
    dim->values = NULL;
    dim->value_count = 0;
}
