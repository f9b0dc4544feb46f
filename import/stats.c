/* stats.c - order statistics, fitted distributions, a line, a growing text; see stats.h. */
#include "import/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void imp_sort(int64_t *v, size_t n) {
    if (n > 1) qsort(v, n, sizeof *v, cmp_i64);
}

double imp_quantile(const int64_t *v, size_t n, double q) {
    if (n == 0) return 0;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return (double)v[n - 1];
    double f = pos - (double)i;
    return (double)v[i] + f * (double)(v[i + 1] - v[i]);
}

double imp_rank_quantile(const int64_t *v, size_t n, double q) {
    return (double)scn_obs_order_statistic(v, n, q);
}

static const double probs[] = {0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99};
static const double z[] = {-1.6448536, -1.2815516, -0.6744898, 0,
                           0.6744898,  1.2815516,  1.6448536,  2.3263479};
#define NQ (sizeof probs / sizeof probs[0])

/* How far a model's quantiles miss the data's, relative to the median. */
static double miss(const imp_dist *d, const double *q) {
    double e = 0;
    for (size_t i = 0; i < NQ; i++) {
        double m = d->kind == IMP_UNIFORM
                       ? d->min + probs[i] * (d->max - d->min)
                       : d->median * exp(log(d->p99 / d->median) / z[NQ - 1] * z[i]);
        e += fabs(m - q[i]);
    }
    return e / fmax(q[3], 1e-9);
}

const char *imp_dist_name(imp_dist_kind k) {
    static const char *const names[] = {"constant", "lognormal", "uniform", "empirical",
                                        "exponential"};
    return (unsigned)k < 5 ? names[k] : "?";
}

/* A fitted form's distribution function at x. */
static double cdf(const imp_dist *d, double x) {
    if (d->kind == IMP_UNIFORM)
        return x <= d->min ? 0 : x >= d->max ? 1 : (x - d->min) / (d->max - d->min);
    if (d->kind == IMP_EXPONENTIAL) return x <= 0 ? 0 : 1 - exp(-x / d->mean);
    double sigma = log(d->p99 / d->median) / z[NQ - 1];
    if (x <= 0) return 0;
    return 0.5 * erfc(-(log(x / d->median) / sigma) / sqrt(2.0));
}

/* The Kolmogorov-Smirnov distance of sorted v from d: the largest gap between v's
   distribution function, on either side of each step, and d's. */
static double ks_distance(const imp_dist *d, const int64_t *v, size_t n) {
    double D = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j] == v[i]) j++;
        double F = cdf(d, (double)v[i]);
        D = fmax(D, fmax(fabs(F - (double)i / (double)n), fabs(F - (double)j / (double)n)));
        i = j;
    }
    return D;
}

/* The values themselves: each distinct one with its share, or quantiles of 14 bins. */
static void empirical(imp_dist *d, const int64_t *v, size_t n) {
    static const double edges[] = {0,   0.1, 0.2,  0.3,   0.4,  0.5,   0.6, 0.7,
                                   0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 1};
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) distinct += i == 0 || v[i] != v[i - 1];
    d->kind = IMP_EMPIRICAL;
    d->npts = 0;
    if (distinct <= IMP_EMPIRICAL_MAX) {
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && v[j] == v[i]) j++;
            d->v[d->npts] = (double)v[i];
            d->w[d->npts++] = (double)(j - i) / (double)n;
            i = j;
        }
        return;
    }
    for (size_t b = 0; b + 1 < sizeof edges / sizeof edges[0]; b++) {
        d->v[d->npts] = imp_quantile(v, n, (edges[b] + edges[b + 1]) / 2);
        d->w[d->npts++] = edges[b + 1] - edges[b];
    }
}

void imp_dist_why(const imp_dist *d, char *buf, size_t len) {
    if (!d->known)
        snprintf(buf, len, "unknown");
    else if (d->kind == IMP_EMPIRICAL)
        snprintf(buf, len,
                 "empirical, %u values (a %s fails the Kolmogorov-Smirnov test at 1%%: D %.3f > "
                 "%.3f, n %zu)",
                 d->npts, imp_dist_name(d->tested), d->ks, d->ks_crit, d->n);
    else if (d->kind == IMP_CONSTANT)
        snprintf(buf, len, "constant (%zu values that hardly vary, or fewer than 5)", d->n);
    else
        snprintf(buf, len, "%s (Kolmogorov-Smirnov at 1%%: D %.3f <= %.3f, n %zu)",
                 imp_dist_name(d->kind), d->ks, d->ks_crit, d->n);
}

imp_dist imp_fit_dist(const int64_t *v, size_t n) {
    imp_dist d = {0};
    if (n == 0) return d;
    d.known = true;
    d.n = n;
    double q[NQ];
    for (size_t i = 0; i < NQ; i++) q[i] = imp_quantile(v, n, probs[i]);
    d.median = d.p99 = q[3];
    double lo = imp_quantile(v, n, 0.01), hi = q[NQ - 1];
    if (n < 5 || d.median <= 0 || hi - lo <= 0.04 * d.median) return d;
    double num = 0, den = 0; /* least squares of ln(q / median) = sigma z */
    for (size_t i = 0; i < NQ; i++)
        if (q[i] > 0) {
            num += z[i] * log(q[i] / d.median);
            den += z[i] * z[i];
        }
    double sigma = den > 0 ? fmax(num / den, 0.005) : 0.005;
    imp_dist ln = d, un = d;
    ln.kind = IMP_LOGNORMAL;
    ln.p99 = d.median * exp(sigma * z[NQ - 1]);
    double spacing = ((double)v[n - 1] - (double)v[0]) / (double)(n - 1);
    un.kind = IMP_UNIFORM;
    un.min = fmax(0, (double)v[0] - spacing);
    un.max = (double)v[n - 1] + spacing;
    imp_dist best = miss(&un, q) < miss(&ln, q) ? un : ln;
    best.tested = best.kind;
    best.ks = ks_distance(&best, v, n);
    best.ks_crit = 1.628 / sqrt((double)n);
    if (best.ks > best.ks_crit) empirical(&best, v, n);
    return best;
}

imp_dist imp_fit_think(const int64_t *v, size_t n) {
    imp_dist d = imp_fit_dist(v, n);
    if (!d.known || d.kind == IMP_CONSTANT) return d;
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += (double)v[i];
    imp_dist e = d;
    e.kind = e.tested = IMP_EXPONENTIAL;
    e.mean = sum / (double)n;
    if (!(e.mean > 0)) return d;
    e.ks = ks_distance(&e, v, n);
    e.ks_crit = 1.628 / sqrt((double)n);
    if (e.ks <= e.ks_crit && (d.kind == IMP_EMPIRICAL || e.ks < d.ks)) return e;
    return d;
}

bool imp_line(const double *x, const double *y, size_t n, double *a, double *b) {
    double sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
    }
    if (n < 2) return false;
    double mx = sx / (double)n, my = sy / (double)n, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx < 1e-9 * (double)n) return false;
    *b = sxy / sxx;
    *a = my - *b * mx;
    return true;
}

void imp_human(char *buf, size_t len, int64_t us) {
    double s = (double)us / 1e6;
    if (us < 1000)
        snprintf(buf, len, "%lldus", (long long)us);
    else if (us < 1000000)
        snprintf(buf, len, "%.4gms", (double)us / 1e3);
    else if (s < 60)
        snprintf(buf, len, "%.4gs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm %02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%dh %02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void imp_duration(char *buf, size_t len, int64_t us) {
    if (us % 1000 == 0)
        snprintf(buf, len, "%lldms", (long long)(us / 1000));
    else
        snprintf(buf, len, "%lldus", (long long)us);
}
