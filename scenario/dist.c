/* dist.c - sampling the scenario's distributions; see dist.h. */
#include "scenario/dist.h"

#include <math.h>

/* The standard normal's 0.99 quantile, as fb_rng_lognormal (core/rng.c) uses it. */
#define Z_P99 2.3263478740408408

void scn_dist_prepare(sim_dist *d) {
    d->prepared = false;
    if (d->kind != SIM_DIST_LOGNORMAL || !(d->a > 0.0) || !(d->b > d->a)) return;
    d->ln_a = log(d->a);
    d->sigma = log(d->b / d->a) / Z_P99;
    d->prepared = true;
}

/* fb_rng_lognormal(rng, a, b) with its logarithms taken once: the same operations on the same
 * values, so the same bits (tests/unit/test_dist.c compares them). */
static double lognormal(fb_rng *rng, const sim_dist *d) {
    if (!d->prepared) return fb_rng_lognormal(rng, d->a, d->b);
    return fb_rng_lognormal_ln(rng, d->ln_a, d->sigma);
}

/* One of the values, each as likely as its weight. */
static double empirical(fb_rng *rng, const sim_dist *d) {
    if (d->n == 0) return d->a;
    double u = fb_rng_uniform(rng);
    for (uint32_t i = 0; i + 1 < d->n; i++)
        if (u < d->cw[i]) return d->v[i];
    return d->v[d->n - 1];
}

double scn_dist_draw(fb_rng *rng, const sim_dist *d) {
    switch (d->kind) {
    case SIM_DIST_CONSTANT:
        return d->a;
    case SIM_DIST_UNIFORM:
        return d->a + (d->b - d->a) * fb_rng_uniform(rng);
    case SIM_DIST_EXPONENTIAL:
        return d->a > 0 ? fb_rng_exponential(rng, d->a) : 0;
    case SIM_DIST_LOGNORMAL:
        return lognormal(rng, d);
    case SIM_DIST_EMPIRICAL:
        return empirical(rng, d);
    }
    return d->a;
}

fb_time_us scn_dist_draw_us(fb_rng *rng, const sim_dist *d) {
    return scn__bound_us(scn_dist_draw(rng, d));
}

uint32_t scn_dist_draw_tokens(fb_rng *rng, const sim_dist *d) {
    return scn__bound_tokens(scn_dist_draw(rng, d));
}

bool scn_dist_has_table(const sim_dist *d) {
    return d->kind == SIM_DIST_LOGNORMAL && d->prepared;
}

void scn_dist_table(const sim_dist *d, fb_lntab *t) {
    fb_lntab_init(t, d->ln_a, d->sigma);
}

/*
 * The standard normal's p-quantile, 0 < p < 1: P. J. Acklam's rational approximation
 * (relative error below 1.15e-9), https://web.archive.org/web/20151030215612/
 * http://home.online.no/~pjacklam/notes/invnorm/
 */
static double probit(double p) {
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double low = 0.02425;
    if (p < low || p > 1 - low) {
        double q = sqrt(-2 * log(p < low ? p : 1 - p));
        double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
                   ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        return p < low ? x : -x;
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double scn_dist_quantile(const sim_dist *d, double u) {
    if (!(u > 1e-12)) u = 1e-12; /* the ends of the normal and the exponential are infinite */
    if (u > 1 - 1e-12) u = 1 - 1e-12;
    switch (d->kind) {
    case SIM_DIST_CONSTANT:
        return d->a;
    case SIM_DIST_UNIFORM:
        return d->a + (d->b - d->a) * u;
    case SIM_DIST_EXPONENTIAL:
        return d->a > 0 ? -d->a * log(1 - u) : 0;
    case SIM_DIST_LOGNORMAL:
        if (!(d->a > 0)) return 0; /* as fb_rng_lognormal */
        if (!(d->b > d->a)) return d->a;
        return exp(log(d->a) + log(d->b / d->a) / Z_P99 * probit(u));
    case SIM_DIST_EMPIRICAL:
        if (d->n == 0) return d->a;
        for (uint32_t i = 0; i + 1 < d->n; i++)
            if (u < d->cw[i]) return d->v[i];
        return d->v[d->n - 1];
    }
    return d->a;
}
