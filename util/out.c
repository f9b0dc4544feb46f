/* out.c - see out.h. */
#include "util/out.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void put_file(void *sink, const char *s, size_t n) {
    fwrite(s, 1, n, sink);
}

util_out util_out_file(FILE *f) {
    return (util_out){.put = put_file, .sink = f};
}

static void put_buffered(void *sink, const char *s, size_t n) {
    util_out_buffer *ob = sink;
    if (n > sizeof ob->b - ob->len) {
        util_out_flush(ob);
        if (n > sizeof ob->b) { /* more than the buffer holds: straight through */
            fwrite(s, 1, n, ob->f);
            return;
        }
    }
    memcpy(ob->b + ob->len, s, n);
    ob->len += n;
}

util_out util_out_buffered(util_out_buffer *ob, FILE *f) {
    ob->f = f;
    ob->len = 0;
    return (util_out){.put = put_buffered, .sink = ob};
}

void util_out_flush(util_out_buffer *ob) {
    if (ob->len > 0) fwrite(ob->b, 1, ob->len, ob->f);
    ob->len = 0;
}

size_t util_decimal(char *t, uint64_t v, bool minus) {
    char s[24], *p = s + sizeof s;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    if (minus) *--p = '-';
    size_t n = (size_t)(s + sizeof s - p);
    memcpy(t, p, n);
    return n;
}

/* How util_fixed gets printf's bytes: v = m * 2^-sh exactly, so the integer part is m >> sh
 * and each decimal is the next multiple of ten of the fraction's bits, with no rounding on the
 * way; then the rest against one half, rounded half to even as printf does (in the default
 * rounding mode). */
size_t util_fixed(char *t, double v, int decimals) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const int e = (int)((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((1ull << 52) - 1), ip, frac = 0;
    int sh = 0;
    if (decimals < 0 || decimals > UTIL_FIXED_DECIMALS_MAX) return 0;
    if (e == 0) {
        if (m != 0) return 0; /* subnormal */
        ip = 0;               /* +-0 */
    } else {
        m |= 1ull << 52;
        sh = 1075 - e; /* v = m * 2^-sh */
        if (sh < -11 || sh > 60) return 0;
        if (sh <= 0) {
            ip = m << -sh;
            sh = 0;
        } else {
            ip = m >> sh;
            frac = m & ((1ull << sh) - 1);
        }
    }
    const uint64_t mask = sh > 0 ? (1ull << sh) - 1 : 0;
    char d[UTIL_FIXED_DECIMALS_MAX];
    for (int i = 0; i < decimals; i++) { /* frac < 2^60: ten times it fits */
        frac *= 10;
        d[i] = (char)('0' + (frac >> sh));
        frac &= mask;
    }
    if (sh > 0) { /* round half to even: the rest against one half */
        const uint64_t half = 1ull << (sh - 1);
        const int last = decimals > 0 ? d[decimals - 1] - '0' : (int)(ip & 1);
        if (frac > half || (frac == half && (last & 1))) {
            int i = decimals - 1;
            for (; i >= 0 && d[i] == '9'; i--) d[i] = '0';
            if (i >= 0)
                d[i]++;
            else
                ip++; /* ip < 2^53 here: no overflow */
        }
    }
    size_t k = util_decimal(t, ip, (bits >> 63) != 0);
    if (decimals > 0) {
        t[k++] = '.';
        memcpy(t + k, d, (size_t)decimals);
        k += (size_t)decimals;
    }
    return k;
}

void util_printf(const util_out *o, const char *fmt, ...) {
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        util_put(o, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        util_put(o, small, sizeof small - 1);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    util_put(o, big, (size_t)n);
    free(big);
}
