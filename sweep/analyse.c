/*
 * analyse.c - what the results say: per-point statistics (mean, standard
 * deviation, Student's t 95% interval), feasibility, the best point and its
 * runner-up, and the Pareto front. See sweep.h and docs/sweeps.md.
 */
#include "sweep/sweepint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sweep_t975(uint32_t df) {
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

void sweep_stat_of(const double *x, uint32_t n, sweep_stat *out) {
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
    double half = sweep_t975(n - 1) * out->sd / sqrt((double)n);
    out->ci_low = out->mean - half;
    out->ci_high = out->mean + half;
}

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

void sweep_pareto(const double *obj, size_t n, size_t m, bool *front) {
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

int sweep_metric_index(const sweep *sw, const char *name) {
    for (size_t m = 0; m < sw->metric_count; m++)
        if (strcmp(sw->metrics[m], name) == 0) return (int)m;
    return -1;
}

void sweep_point_stat(const sweep *sw, uint64_t p, int m, sweep_stat *st) {
    double x[SWEEP_SEEDS_MAX];
    uint32_t n = 0;
    for (uint32_t s = 0; m >= 0 && s < sw->seeds; s++) {
        uint64_t t = p * sw->seeds + s;
        if (sw->state[t] == 1) x[n++] = sw->values[t * sw->metric_count + (size_t)m];
    }
    sweep_stat_of(x, n, st);
}

double sweep_point_mean(const sweep *sw, uint64_t p, const char *metric) {
    sweep_stat st;
    sweep_point_stat(sw, p, sweep_metric_index(sw, metric), &st);
    return st.mean;
}

/*
 * The value a constraint is judged on: the mean, or with strict the end of
 * the 95% CI nearest to failing (the mean when there is no CI).
 */
double sweep_judged_value(const sweep *sw, const sweep_stat *st, const sweep_constraint *k) {
    if (!sw->strict || st->n < 2) return st->mean;
    return k->op == SWEEP_GE || k->op == SWEEP_GT ? st->ci_low : st->ci_high;
}

/* How far a point is from satisfying the constraints: relative shortfalls, summed. */
static double violation(const sweep *sw, uint64_t p) {
    double total = 0;
    for (size_t c = 0; c < sw->con_count; c++) {
        const sweep_constraint *k = &sw->cons[c];
        sweep_stat st;
        sweep_point_stat(sw, p, sweep_metric_index(sw, k->metric), &st);
        double v = sweep_judged_value(sw, &st, k);
        if (isnan(v)) return INFINITY;
        if (sweep_constraint_holds(k, v)) continue;
        double scale = fabs(k->value) > 0 ? fabs(k->value) : 1;
        total += fabs(v - k->value) / scale + 1e-12;
    }
    return total;
}

const char *const sweep_pareto_metrics[3] = {"blast_radius", "cost_usd", "latency_p99"};

int sweep_analyse(sweep *sw) {
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
        for (int k = 0; k < 3; k++)
            obj[p * 3 + (uint64_t)k] = sweep_point_mean(sw, p, sweep_pareto_metrics[k]);
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
        double v = sw->sense * sweep_point_mean(sw, p, sw->objective);
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
    sweep_pareto(obj, sw->points, 3, sw->pareto);
    sw->pareto_count = 0;
    for (uint64_t p = 0; p < sw->points; p++) sw->pareto_count += sw->pareto[p];
    free(obj);
    sw->analysed = true;
    return FB_OK;
}

bool sweep_infeasible(const sweep *sw) {
    return sw->objective[0] && sw->best < 0;
}

bool sweep_higher_is_better(const sweep *sw, const char *metric) {
    if (sw->objective[0] && strcmp(metric, sw->objective) == 0) return sw->sense < 0;
    static const char *const higher[] = {
        "success_rate",     "availability", "successes",     "success_primary",
        "success_fallback", "recovered",    "fallback_rate", NULL};
    for (const char *const *h = higher; *h; h++)
        if (strcmp(*h, metric) == 0) return true;
    return false;
}

/* The values of tasks a and b are the same, metric for metric (NaN equal to NaN). */
static bool same_values(const sweep *sw, uint64_t a, uint64_t b) {
    const double *x = &sw->values[a * sw->metric_count], *y = &sw->values[b * sw->metric_count];
    for (size_t m = 0; m < sw->metric_count; m++)
        if (!(x[m] == y[m] || (isnan(x[m]) && isnan(y[m])))) return false;
    return true;
}

uint32_t sweep_paired_diff(const sweep *sw, uint64_t p, uint64_t q, int m, sweep_stat *out) {
    double x[SWEEP_SEEDS_MAX];
    uint32_t n = 0;
    for (uint32_t s = 0; s < sw->seeds; s++) {
        uint64_t a = p * sw->seeds + s, b = q * sw->seeds + s;
        if (sw->state[a] == 1 && sw->state[b] == 1)
            x[n++] = sw->values[b * sw->metric_count + (size_t)m] -
                     sw->values[a * sw->metric_count + (size_t)m];
    }
    sweep_stat_of(x, n, out);
    return n;
}

/*
 * Every change of dimension d, the others held, moved the objective by less than the seeds'
 * noise: the paired (same-seed) differences' 95% CI holds 0 at every point, over at least two
 * seeds each. *pairs: how many such changes were compared.
 */
bool sweep_dim_within_noise(const sweep *sw, uint32_t d, uint64_t *pairs) {
    uint32_t n = sw->dims[d].value_count;
    int m = sw->objective[0] ? sweep_metric_index(sw, sw->objective) : -1;
    *pairs = 0;
    if (sw->sample > 0 || n < 2 || m < 0 || sw->seeds < 2) return false;
    uint64_t stride = 1;
    for (uint32_t e = sw->dim_count; e-- > d + 1;) stride *= sw->dims[e].value_count;
    for (uint64_t p = 0; p < sw->points; p++) {
        if ((p / stride) % n != 0) continue; /* p: d at its first value */
        for (uint32_t k = 0; k < n; k++) {
            for (uint32_t j = k + 1; j < n; j++) {
                sweep_stat st;
                uint32_t c = sweep_paired_diff(sw, p + k * stride, p + j * stride, m, &st);
                if (c < 2 || isnan(st.ci_low) || st.ci_low > 0 || st.ci_high < 0) return false;
                (*pairs)++;
            }
        }
    }
    return *pairs > 0;
}

bool sweep_dim_no_effect(const sweep *sw, uint32_t d) {
    uint32_t n = sw->dims[d].value_count;
    if (sw->sample > 0 || n < 2) return false;
    uint64_t stride = 1, pairs = 0;
    for (uint32_t e = sw->dim_count; e-- > d + 1;) stride *= sw->dims[e].value_count;
    for (uint64_t p = 0; p < sw->points; p++) {
        if ((p / stride) % n != 0) continue; /* p: d at its first value */
        for (uint32_t k = 1; k < n; k++) {
            uint64_t q = p + k * stride;
            for (uint32_t s = 0; s < sw->seeds; s++) {
                uint64_t a = p * sw->seeds + s, b = q * sw->seeds + s;
                if (sw->state[a] != 1 || sw->state[b] != 1) continue;
                if (!same_values(sw, a, b)) return false;
                pairs++;
            }
        }
    }
    return pairs > 0;
}
