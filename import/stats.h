/*
 * stats.h - the few statistics the fitting needs: order statistics, fitted distributions,
 * a least-squares line, and a text that grows (the scenario's description).
 */
#ifndef IMP_STATS_H
#define IMP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sort n values ascending. */
void imp_sort(int64_t *v, size_t n);
/* The q-quantile of sorted v (linear between order statistics); 0 when n == 0. */
double imp_quantile(const int64_t *v, size_t n, double q);
/*
 * The q-quantile of sorted v as a run reports it (fb_hist_percentile): the order statistic of
 * rank ceil(q n), no interpolation; 0 when n == 0. A log's figure beside a replay's.
 */
double imp_rank_quantile(const int64_t *v, size_t n, double q);

typedef enum imp_dist_kind {
    IMP_CONSTANT = 0,
    IMP_LOGNORMAL,
    IMP_UNIFORM,
    IMP_EMPIRICAL,
    IMP_EXPONENTIAL /* imp_fit_think's only */
} imp_dist_kind;

#define IMP_EMPIRICAL_MAX 16 /* the scenario format's SIM_DIST_POINTS_MAX */

/* A distribution as the scenario writes it: a constant, a lognormal, a uniform, or the
   values themselves (empirical). */
typedef struct imp_dist {
    bool known;
    imp_dist_kind kind;
    double median, p99; /* CONSTANT: median; LOGNORMAL: its median and p99 */
    double min, max;    /* UNIFORM */
    double mean;        /* EXPONENTIAL */
    size_t n;           /* values it was fitted to */
    /* the goodness of fit of the parametric form (LOGNORMAL, UNIFORM; or the one rejected
       for EMPIRICAL): the Kolmogorov-Smirnov distance and its critical value at 1% */
    imp_dist_kind tested;
    double ks, ks_crit;
    uint32_t npts; /* EMPIRICAL: values and their weights (shares) */
    double v[IMP_EMPIRICAL_MAX], w[IMP_EMPIRICAL_MAX];
} imp_dist;

/*
 * Fit sorted v: a constant (its median) when there are fewer than 5 values or they
 * hardly vary (p1 to p99 within 4% of the median); else whichever of a lognormal (the
 * median, and the spread that best matches the p5 ... p99 quantiles on a log scale) and
 * a uniform (the extremes widened by one spacing) misses the quantiles p5, p10, p25, p50,
 * p75, p90, p95 and p99 by less - unless it fails a Kolmogorov-Smirnov test at the 1%
 * level (D > 1.628 / sqrt(n)): then the values themselves, an empirical distribution (each
 * distinct value with its share when there are at most IMP_EMPIRICAL_MAX, else the
 * quantiles at the middles of 14 bins that keep the tail: 10% wide to p90, then p95,
 * p97.5, p99, p99.5, p100).
 */
imp_dist imp_fit_dist(const int64_t *v, size_t n);
/*
 * Think times (sorted, n of them): imp_fit_dist's choice, or an exponential of their mean
 * where it passes the same test at 1% with a smaller distance (or where imp_fit_dist's form
 * failed it): the think time of a user who reads and types is often memoryless.
 */
imp_dist imp_fit_think(const int64_t *v, size_t n);
/* "lognormal", "uniform", "empirical", "constant" or "exponential". */
const char *imp_dist_name(imp_dist_kind k);
/* What was fitted and the test that chose it, for people: "empirical, 2 values (a uniform
   fails the Kolmogorov-Smirnov test at 1%: D 0.454 > 0.096)". */
void imp_dist_why(const imp_dist *d, char *buf, size_t len);

/* Least squares y = a + b x over n points; false when x does not vary. */
bool imp_line(const double *x, const double *y, size_t n, double *a, double *b);

/* A duration for people: "250ms", "1.5s", "2m 05s", "1h 02m". */
void imp_human(char *buf, size_t len, int64_t us);
/* A duration for the scenario: "250ms" when whole milliseconds, else "1234us". */
void imp_duration(char *buf, size_t len, int64_t us);

#endif /* IMP_STATS_H */
