/*
 * design.c - where the points are: a listed value or a position in a range,
 * the full factorial of the listed values or a Latin hypercube sample. See
 * sweep.h.
 */
#include "sweep/sweepint.h"

#include <math.h>
#include <stdio.h>

#include "core/rng.h"

/* fb_rng purpose of the Latin hypercube streams ("SWEEP" in ASCII). */
#define LHS_PURPOSE UINT64_C(0x5357454550)

static void format_duration(char *buf, size_t len, long long us) {
    if (us % 1000000 == 0)
        snprintf(buf, len, "%llds", us / 1000000);
    else if (us % 1000 == 0)
        snprintf(buf, len, "%lldms", us / 1000);
    else
        snprintf(buf, len, "%lldus", us);
}

void sweep_dim_value(const sweep_dim *dim, double u, char *buf, size_t len) {
    if (u < 0) u = 0;
    if (dim->kind == SWEEP_LIST) {
        uint32_t i = (uint32_t)(u * dim->value_count);
        if (i >= dim->value_count) i = dim->value_count - 1;
        snprintf(buf, len, "%s", dim->values[i]);
        return;
    }
    /* integers: uniform over the hi - lo + 1 values, i.e. over [lo, hi + 1) */
    double lo = dim->lo, hi = dim->type == SWEEP_INTEGER ? dim->hi + 1 : dim->hi;
    double x = dim->log ? exp(log(lo) + u * (log(hi) - log(lo))) : lo + u * (hi - lo);
    switch (dim->type) {
    case SWEEP_INTEGER:
        x = floor(x);
        if (x > dim->hi) x = dim->hi;
        if (x < dim->lo) x = dim->lo;
        snprintf(buf, len, "%.0f", x);
        break;
    case SWEEP_DURATION: {
        double res = dim->lo >= 1000 ? 1000 : 1;
        format_duration(buf, len, llround(x / res) * (long long)res);
        break;
    }
    default:
        snprintf(buf, len, "%.6g", x);
        break;
    }
}

void sweep_lhs(uint32_t n, uint32_t d, uint64_t seed, double *u) {
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

void sweep_point_value(const sweep *sw, uint64_t p, uint32_t d, char *buf, size_t len) {
    if (sw->sample > 0) {
        sweep_dim_value(&sw->dims[d], sw->u[p * sw->dim_count + d], buf, len);
        return;
    }
    /* full factorial, the first --grid varying slowest */
    uint64_t stride = 1;
    for (uint32_t e = sw->dim_count; e-- > d + 1;) stride *= sw->dims[e].value_count;
    snprintf(buf, len, "%s", sw->dims[d].values[(p / stride) % sw->dims[d].value_count]);
}

void sweep_point_label(const sweep *sw, uint64_t p, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < sw->dim_count && used < len; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        int w = snprintf(buf + used, len - used, "%s%s=%s", d ? " " : "", sw->dims[d].key, v);
        if (w < 0) break;
        used += (size_t)w;
    }
}
