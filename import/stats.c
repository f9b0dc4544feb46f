/* stats.c - order statistics, fitted distributions, a line, a growing text; see stats.h. */
#include "import/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

imp_dist imp_fit_dist(const int64_t *v, size_t n) {
    imp_dist d = {0};
    if (n == 0) return d;
    d.known = true;
    d.n = n;
    d.median = imp_quantile(v, n, 0.5);
    d.p99 = imp_quantile(v, n, 0.99);
    d.lognormal = n >= 5 && d.median > 0 && d.p99 > d.median * 1.02;
    if (!d.lognormal) d.p99 = d.median;
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

void imp_text_init(imp_text *t, size_t cap) {
    memset(t, 0, sizeof *t);
    t->cap = cap;
}

void imp_text_add(imp_text *t, const char *fmt, ...) {
    if (t->cut || t->oom) return;
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t add = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (t->len + add > t->cap) {
        t->cut = true;
        return;
    }
    if (t->len + add + 1 > t->size) {
        size_t want = (t->len + add + 1) * 2;
        char *p = realloc(t->s, want);
        if (p == NULL) {
            t->oom = true;
            return;
        }
        t->s = p;
        t->size = want;
    }
    memcpy(t->s + t->len, line, add);
    t->len += add;
    t->s[t->len] = '\0';
}

void imp_text_free(imp_text *t) {
    free(t->s);
    memset(t, 0, sizeof *t);
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
