/* wire.c - header values and ids; see wire.h. */
#include "mockserver/wire.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mockserver/fault.h"

/* s (n bytes) into out, cut to len - 1 as snprintf cuts it. */
static void copy_cut(char *out, size_t len, const char *s, size_t n) {
    if (len == 0) return;
    if (n >= len) n = len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

/* ---- header values ------------------------------------------------------------------------- */

size_t mock_wire_decimal(uint64_t v, char out[20]) {
    char d[20], *p = d + sizeof d;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    size_t n = (size_t)(d + sizeof d - p);
    memcpy(out, p, n);
    return n;
}

/* n in decimal then the unit, when it fits (the common resets: "0s", "6ms", "12s"). */
static bool whole_unit(int64_t n, const char *unit, char *out, size_t len) {
    char d[20];
    size_t nd = mock_wire_decimal((uint64_t)n, d), nu = strlen(unit);
    if (nd + nu + 1 > len) return false;
    memcpy(out, d, nd);
    memcpy(out + nd, unit, nu + 1);
    return true;
}

void mock_wire_go_duration(fb_time_us d_us, char *out, size_t len) {
    if (d_us <= 0) { /* no rate limit configured: every answer sends two of these */
        copy_cut(out, len, "0s", 2);
        return;
    }
    /* Every answer carries two of these: whole milliseconds and whole seconds under a minute
     * without stdio, the same text as below. */
    if (d_us < FB_US_PER_S && d_us % 1000 == 0 && whole_unit(d_us / 1000, "ms", out, len)) return;
    if (d_us < FB_US_PER_MIN && d_us % FB_US_PER_S == 0 &&
        whole_unit(d_us / FB_US_PER_S, "s", out, len))
        return;
    if (d_us < FB_US_PER_S) {
        /* Sub-second: milliseconds, fractional when needed ("12ms", "1.5ms"). */
        if (d_us % 1000 == 0)
            snprintf(out, len, "%lldms", (long long)(d_us / 1000));
        else {
            snprintf(out, len, "%lld.%03lld", (long long)(d_us / 1000), (long long)(d_us % 1000));
            char *p = out + strlen(out);
            while (p[-1] == '0') *--p = '\0';
            snprintf(p, len - (size_t)(p - out), "ms");
        }
        return;
    }
    long long h = (long long)(d_us / (3600 * FB_US_PER_S));
    long long m = (long long)(d_us / FB_US_PER_MIN % 60);
    long long s = (long long)(d_us / FB_US_PER_S % 60);
    long long frac = (long long)(d_us % FB_US_PER_S);
    char secs[32];
    if (frac == 0)
        snprintf(secs, sizeof secs, "%llds", s);
    else {
        snprintf(secs, sizeof secs, "%lld.%06lld", s, frac);
        char *p = secs + strlen(secs);
        while (p[-1] == '0') *--p = '\0';
        snprintf(p, sizeof secs - (size_t)(p - secs), "s");
    }
    if (h > 0)
        snprintf(out, len, "%lldh%lldm%s", h, m, secs);
    else if (m > 0)
        snprintf(out, len, "%lldm%s", m, secs);
    else
        snprintf(out, len, "%s", secs);
}

void mock_wire_rfc3339(int64_t epoch_s, char *out, size_t len) {
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void mock_wire_http_date(int64_t epoch_s, char *out, size_t len) {
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, len, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
             months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Inlined with a constant radix, the division per character is a multiply. */
static inline __attribute__((always_inline)) void id_chars(uint64_t seed, uint64_t seq, char *out,
                                                           size_t nchars, uint64_t radix) {
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    uint64_t x = 0;
    for (size_t i = 0; i < nchars; i++) {
        if (i % 8 == 0) x = (uint64_t)(mock_draw(seed, seq, i) * 0x1.0p53);
        out[i] = alphabet[x % radix];
        x /= radix;
    }
    out[nchars] = '\0';
}

void mock_wire_id(uint64_t seed, uint64_t seq, bool base62, char *out, size_t nchars) {
    if (base62)
        id_chars(seed, seq, out, nchars, 62);
    else
        id_chars(seed, seq, out, nchars, 16);
}

void mock_wire_uuid(uint64_t seed, uint64_t seq, char out[37]) {
    char hex[33];
    mock_wire_id(seed, seq, false, hex, 32);
    hex[12] = '4'; /* version 4, RFC 4122 variant */
    hex[16] = "89ab"[hex[16] % 4];
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}
