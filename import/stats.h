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

typedef enum imp_dist_kind { IMP_CONSTANT = 0, IMP_LOGNORMAL, IMP_UNIFORM } imp_dist_kind;

/* A distribution as the scenario writes it: a constant, a lognormal or a uniform. */
typedef struct imp_dist {
    bool known;
    imp_dist_kind kind;
    double median, p99; /* CONSTANT: median; LOGNORMAL: its median and p99 */
    double min, max;    /* UNIFORM */
    size_t n;           /* values it was fitted to */
} imp_dist;

/*
 * Fit sorted v: a constant (its median) when there are fewer than 5 values or they
 * hardly vary (p1 to p99 within 4% of the median); else whichever of a lognormal (the
 * median, and the spread that best matches the p5 ... p99 quantiles on a log scale) and
 * a uniform (the extremes widened by one spacing) misses the quantiles p5, p10, p25, p50,
 * p75, p90, p95 and p99 by less.
 */
imp_dist imp_fit_dist(const int64_t *v, size_t n);

/* Least squares y = a + b x over n points; false when x does not vary. */
bool imp_line(const double *x, const double *y, size_t n, double *a, double *b);

/* A growing text; every append is cut at `cap` bytes in total (then `cut` is set). */
typedef struct imp_text {
    char *s;
    size_t len, size, cap;
    bool cut, oom;
} imp_text;

void imp_text_init(imp_text *t, size_t cap);
void imp_text_add(imp_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void imp_text_free(imp_text *t);

/* A duration for people: "250ms", "1.5s", "2m 05s", "1h 02m". */
void imp_human(char *buf, size_t len, int64_t us);
/* A duration for the scenario: "250ms" when whole milliseconds, else "1234us". */
void imp_duration(char *buf, size_t len, int64_t us);

#endif /* IMP_STATS_H */
