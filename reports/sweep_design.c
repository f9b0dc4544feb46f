/*
 * sweep_design.c - the pure parts of a sweep: grid syntax, Latin hypercube,
 * confidence intervals, Pareto front, constraints. See sweep.h.
 */
#include "reports/sweep.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "sim/sim.h"

/* fb_rng purpose of the Latin hypercube streams ("SWEEP" in ASCII). */
#define LHS_PURPOSE UINT64_C(0x5357454550)

/* ---- grid syntax ---- */

static const char *trim(char *s) {
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

static int parse_number(const char *s, double *out) {
    char *end;
    if (*s == '\0') return FB_EPARSE;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v)) return FB_EPARSE;
    *out = v;
    return FB_OK;
}

static int parse_range(const char *arg, char *spec, rep_sweep_dim *dim, char *msg, size_t msglen) {
    dim->kind = REP_SWEEP_RANGE;
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
    const char *lo = trim(spec), *hi = trim(dots + 2);
    fb_time_us dlo, dhi;
    if (sim_parse_duration(lo, &dlo) == FB_OK && sim_parse_duration(hi, &dhi) == FB_OK) {
        dim->type = REP_SWEEP_DURATION;
        dim->lo = (double)dlo;
        dim->hi = (double)dhi;
    } else if (parse_number(lo, &dim->lo) == FB_OK && parse_number(hi, &dim->hi) == FB_OK) {
        dim->type =
            is_integer_text(lo) && is_integer_text(hi) ? REP_SWEEP_INTEGER : REP_SWEEP_NUMBER;
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
static int parse_list(const char *arg, char *spec, rep_sweep_dim *dim, char *msg, size_t msglen) {
    dim->kind = REP_SWEEP_LIST;
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
        const char *v = trim(start);
        if (*v == '\0') {
            snprintf(msg, msglen, "--grid %s: empty value", arg);
            return FB_EINVAL;
        }
        for (uint32_t i = 0; i < dim->value_count; i++)
            if (strcmp(dim->values[i], v) == 0) {
                snprintf(msg, msglen, "--grid %s: value '%s' is listed twice", arg, v);
                return FB_EINVAL;
            }
        if (dim->value_count == REP_SWEEP_VALUES_MAX) {
            snprintf(msg, msglen, "--grid %s: more than %d values", arg, REP_SWEEP_VALUES_MAX);
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

int rep_sweep_parse_grid(const char *arg, rep_sweep_dim *dim, char *msg, size_t msglen) {
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
    const char *t = trim(spec);
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
    if (rc != FB_OK) rep_sweep_dim_free(dim);
    return rc;
}

void rep_sweep_dim_free(rep_sweep_dim *dim) {
    for (uint32_t i = 0; i < dim->value_count; i++) free(dim->values[i]);
    free(dim->values);
    dim->values = NULL;
    dim->value_count = 0;
}

static void format_duration(char *buf, size_t len, long long us) {
    if (us % 1000000 == 0)
        snprintf(buf, len, "%llds", us / 1000000);
    else if (us % 1000 == 0)
        snprintf(buf, len, "%lldms", us / 1000);
    else
        snprintf(buf, len, "%lldus", us);
}

void rep_sweep_dim_value(const rep_sweep_dim *dim, double u, char *buf, size_t len) {
    if (u < 0) u = 0;
    if (dim->kind == REP_SWEEP_LIST) {
        uint32_t i = (uint32_t)(u * dim->value_count);
        if (i >= dim->value_count) i = dim->value_count - 1;
        snprintf(buf, len, "%s", dim->values[i]);
        return;
    }
    /* integers: uniform over the hi - lo + 1 values, i.e. over [lo, hi + 1) */
    double lo = dim->lo, hi = dim->type == REP_SWEEP_INTEGER ? dim->hi + 1 : dim->hi;
    double x = dim->log ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
    switch (dim->type) {
    case REP_SWEEP_INTEGER:
        x = floor(x);
        if (x > dim->hi) x = dim->hi;
        if (x < dim->lo) x = dim->lo;
        snprintf(buf, len, "%.0f", x);
        break;
    case REP_SWEEP_DURATION: {
        double res = dim->lo >= 1000 ? 1000 : 1;
        format_duration(buf, len, llround(x / res) * (long long)res);
        break;
    }
    default:
        snprintf(buf, len, "%.6g", x);
        break;
    }
}

/* ---- Latin hypercube ---- */

void rep_sweep_lhs(uint32_t n, uint32_t d, uint64_t seed, double *u) {
    for (uint32_t j = 0; j < d; j++) {
        fb_rng r;
        fb_rng_derive(&r, seed, j, LHS_PURPOSE);
        /* a random permutation of the strata, kept in the column itself */
        for (uint32_t i = 0; i < n; i++) u[(size_t)i * d + j] = i;
        for (uint32_t i = n; i > 1; i--) {
            uint32_t k = (uint32_t)fb_rng_below(&r, i);
            double tmp = u[(size_t)(i - 1) * d + j];
            u[(size_t)(i - 1) * d + j] = u[(size_t)k * d + j];
            u[(size_t)k * d + j] = tmp;
        }
        for (uint32_t i = 0; i < n; i++) {
            double s = u[(size_t)i * d + j];
            double x = (s + fb_rng_uniform(&r)) / n;
            double top = (s + 1) / n;
            if (x >= top) x = nextafter(top, 0); /* rounding must not leave the stratum */
            u[(size_t)i * d + j] = x;
        }
    }
}

/* ---- statistics ---- */

double rep_sweep_t975(uint32_t df) {
    static const double table[31] = {
        NAN,         12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
        2.364624252, 2.306004135,  2.262157163, 2.228138852, 2.200985160, 2.178812830, 2.160368656,
        2.144786688, 2.131449546,  2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
        2.079613845, 2.073873068,  2.068657610, 2.063898562, 2.059538553, 2.055529439, 2.051830516,
        2.048407142, 2.045229642,  2.042272456};
    if (df <= 30) return table[df];
    /* Cornish-Fisher expansion around the normal quantile: error < 1e-6 above 30 df */
    double z = 1.959963984540054, v = df, z2 = z * z;
    double g1 = (z2 * z + z) / 4;
    double g2 = (5 * z2 * z2 * z + 16 * z2 * z + 3 * z) / 96;
    double g3 = (3 * z2 * z2 * z2 * z + 19 * z2 * z2 * z + 17 * z2 * z - 15 * z) / 384;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v);
}

void rep_sweep_stat_of(const double *x, uint32_t n, rep_sweep_stat *out) {
    out->n = n;
    out->mean = out->sd = out->ci_low = out->ci_high = NAN;
    if (n == 0) return;
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += x[i];
    out->mean = sum / n;
    if (n < 2) return;
    double ss = 0;
    for (uint32_t i = 0; i < n; i++) ss += (x[i] - out->mean) * (x[i] - out->mean);
    out->sd = sqrt(ss / (n - 1));
    double half = rep_sweep_t975(n - 1) * out->sd / sqrt((double)n);
    out->ci_low = out->mean - half;
    out->ci_high = out->mean + half;
}

/* ---- Pareto front ---- */

static bool row_has_nan(const double *row, size_t m) {
    for (size_t j = 0; j < m; j++)
        if (isnan(row[j])) return true;
    return false;
}

/* Lexicographic order of rows, then index: a dominator always sorts first. */
static bool row_before(const double *obj, size_t m, size_t a, size_t b) {
    for (size_t j = 0; j < m; j++) {
        double x = obj[a * m + j], y = obj[b * m + j];
        if (x != y) return x < y;
    }
    return a < b;
}

static void merge_sort(size_t *idx, size_t *tmp, size_t n, const double *obj, size_t m) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(idx, tmp, h, obj, m);
    merge_sort(idx + h, tmp, n - h, obj, m);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = row_before(obj, m, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static bool dominates(const double *a, const double *b, size_t m) {
    bool strict = false;
    for (size_t j = 0; j < m; j++) {
        if (a[j] > b[j]) return false;
        if (a[j] < b[j]) strict = true;
    }
    return strict;
}

void rep_sweep_pareto(const double *obj, size_t n, size_t m, bool *front) {
    size_t *idx = malloc((2 * n + 1) * sizeof *idx);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        front[i] = false;
        if (!row_has_nan(obj + i * m, m) && idx) idx[count++] = i;
    }
    if (idx == NULL) return;
    /*
     * After sorting, a row can only be dominated by rows before it, and if
     * it is dominated at all it is dominated by a row of the front so far.
     */
    size_t *fr = idx + n, nfront = 0;
    merge_sort(idx, fr, count, obj, m);
    for (size_t a = 0; a < count; a++) {
        size_t i = idx[a];
        bool dominated = false;
        for (size_t f = 0; f < nfront && !dominated; f++)
            dominated = dominates(obj + fr[f] * m, obj + i * m, m);
        if (!dominated) {
            front[i] = true;
            fr[nfront++] = i; /* fr overlaps the sort scratch, which is no longer needed */
        }
    }
    free(idx);
}

/* ---- constraints ---- */

int rep_sweep_check_metric(const sim_scenario *sc, const char *name, sim_unit *unit, char *msg,
                           size_t msglen) {
    sim_summary *dummy = calloc(1, sizeof *dummy);
    if (dummy == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    double v;
    sim_unit u = SIM_UNIT_COUNT;
    int rc = sim_metric_value(sc, dummy, name, &v, &u, msg, msglen);
    free(dummy);
    if (rc == FB_OK && unit) *unit = u;
    return rc;
}

static int parse_bound(const char *item, const char *metric, sim_unit unit, const char *v,
                       double *out, char *msg, size_t msglen) {
    switch (unit) {
    case SIM_UNIT_US: {
        fb_time_us d;
        if (sim_parse_duration(v, &d) == FB_OK) {
            *out = (double)d;
            return FB_OK;
        }
        snprintf(msg, msglen,
                 "--subject-to '%s': %s is a duration: write it with a unit (10s, "
                 "250ms)",
                 item, metric);
        return FB_EINVAL;
    }
    case SIM_UNIT_RATIO: {
        size_t n = strlen(v);
        if (n > 1 && v[n - 1] == '%') {
            char num[64];
            snprintf(num, sizeof num, "%.*s", (int)(n - 1), v);
            if (parse_number(num, out) == FB_OK) {
                *out /= 100;
                return FB_OK;
            }
        } else if (parse_number(v, out) == FB_OK) {
            return FB_OK;
        }
        break;
    }
    case SIM_UNIT_USD:
        if (parse_number(v[0] == '$' ? v + 1 : v, out) == FB_OK) return FB_OK;
        break;
    default:
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
            *out = v[0] == 't';
            return unit == SIM_UNIT_BOOL ? FB_OK : FB_EINVAL;
        }
        if (parse_number(v, out) == FB_OK) return FB_OK;
        break;
    }
    snprintf(msg, msglen, "--subject-to '%s': cannot read the bound '%s' for %s", item, v, metric);
    return FB_EINVAL;
}

static int parse_constraint(char *item, const sim_scenario *sc, rep_sweep_constraint *c, char *msg,
                            size_t msglen) {
    memset(c, 0, sizeof *c);
    const char *t = trim(item);
    snprintf(c->text, sizeof c->text, "%s", t);
    char *op = strpbrk((char *)t, "<>=!");
    if (op == NULL || *op == '=' || *op == '!') {
        snprintf(msg, msglen, "--subject-to '%s': expected METRIC >= VALUE (or <=, >, <)", t);
        return FB_EINVAL;
    }
    char opc = *op;
    bool eq = op[1] == '=';
    c->op = opc == '>' ? (eq ? REP_SWEEP_GE : REP_SWEEP_GT) : (eq ? REP_SWEEP_LE : REP_SWEEP_LT);
    *op = '\0';
    const char *name = trim((char *)t);
    char *value = op + (eq ? 2 : 1);
    const char *v = trim(value);
    if (*name == '\0' || *v == '\0') {
        snprintf(msg, msglen, "--subject-to '%s': expected METRIC >= VALUE (or <=, >, <)", c->text);
        return FB_EINVAL;
    }
    if (strlen(name) >= sizeof c->metric) {
        snprintf(msg, msglen, "--subject-to '%s': metric name too long", c->text);
        return FB_EINVAL;
    }
    snprintf(c->metric, sizeof c->metric, "%s", name);
    sim_unit unit;
    char m[256];
    if (rep_sweep_check_metric(sc, name, &unit, m, sizeof m) != FB_OK) {
        snprintf(msg, msglen, "--subject-to '%s': %s", c->text, m);
        return FB_EINVAL;
    }
    return parse_bound(c->text, name, unit, v, &c->value, msg, msglen);
}

int rep_sweep_parse_constraints(const char *text, const sim_scenario *sc, rep_sweep_constraint *out,
                                size_t max, size_t *count, char *msg, size_t msglen) {
    *count = 0;
    char *copy = strdup(text);
    if (copy == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    int rc = FB_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == FB_OK;
         item = strtok_r(NULL, ",", &save)) {
        if (*trim(item) == '\0') continue;
        if (*count == max) {
            snprintf(msg, msglen, "--subject-to: at most %zu constraints", max);
            rc = FB_ECAP;
            break;
        }
        rc = parse_constraint(item, sc, &out[*count], msg, msglen);
        if (rc == FB_OK) (*count)++;
    }
    if (rc == FB_OK && *count == 0) {
        snprintf(msg, msglen, "--subject-to: no constraint given");
        rc = FB_EINVAL;
    }
    free(copy);
    return rc;
}

bool rep_sweep_constraint_holds(const rep_sweep_constraint *c, double v) {
    switch (c->op) {
    case REP_SWEEP_GE:
        return v >= c->value;
    case REP_SWEEP_LE:
        return v <= c->value;
    case REP_SWEEP_GT:
        return v > c->value;
    default:
        return v < c->value;
    }
}

uint64_t rep_sweep_hash(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
