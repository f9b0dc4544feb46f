/*
 * retry_after.c - Retry-After and retry-after-ms, parsed by hand.
 *
 * The grammar is small enough to walk with a cursor; HTTP-dates are
 * converted with days-from-civil arithmetic: no timegm, no locale, no time
 * zone.
 */
#include "retry_after.h"

#include <stdbool.h>

typedef struct cursor {
    const char *p, *end;
} cursor;

static cursor trimmed(const char *value) {
    cursor c = {value, value};
    while (*c.end != '\0') c.end++;
    while (c.p < c.end && (*c.p == ' ' || *c.p == '\t')) c.p++;
    while (c.end > c.p && (c.end[-1] == ' ' || c.end[-1] == '\t')) c.end--;
    return c;
}

static bool is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

/*
 * A non-negative decimal "123" or "123.45" scaled to an integer count of
 * 1/scale units (digits past the unit are dropped). The whole cursor must be
 * the number; no sign, no exponent. Overflow of int64 is a parse error.
 */
static int parse_decimal(cursor c, int frac_digits, int64_t *out) {
    int64_t scale = 1;
    for (int i = 0; i < frac_digits; i++) scale *= 10;
    const int64_t ip_max = INT64_MAX / scale;
    int64_t ip = 0, frac = 0;
    const char *p = c.p;
    if (p == c.end || !is_digit(*p)) return FB_EPARSE;
    for (; p < c.end && is_digit(*p); p++) {
        ip = ip * 10 + (*p - '0');
        if (ip > ip_max) return FB_EPARSE;
    }
    if (p < c.end && *p == '.') {
        p++;
        if (p == c.end || !is_digit(*p)) return FB_EPARSE;
        int64_t unit = scale;
        for (; p < c.end && is_digit(*p); p++) {
            unit /= 10;
            frac += (*p - '0') * unit;
        }
    }
    if (p != c.end) return FB_EPARSE;
    if (ip > (INT64_MAX - frac) / scale) return FB_EPARSE;
    *out = ip * scale + frac;
    return FB_OK;
}

int fb_retry_after_parse_ms(const char *value, fb_time_us *delay_us) {
    if (value == NULL || delay_us == NULL) return FB_EINVAL;
    return parse_decimal(trimmed(value), 3, delay_us);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The Gregorian year containing day `z` since 1970-01-01 (civil_from_days). */
static int64_t year_of_day(int64_t z) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    return yoe + era * 400 + (mp >= 10);
}

static bool leap(int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int64_t days_in_month(int64_t y, int64_t m) {
    static const int8_t days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

static bool take(cursor *c, const char *lit) {
    const char *p = c->p;
    for (; *lit != '\0'; lit++, p++)
        if (p == c->end || *p != *lit) return false;
    c->p = p;
    return true;
}

static bool take_digits(cursor *c, int count, int64_t *out) {
    int64_t v = 0;
    for (int i = 0; i < count; i++) {
        if (c->p == c->end || !is_digit(*c->p)) return false;
        v = v * 10 + (*c->p++ - '0');
    }
    *out = v;
    return true;
}

/* Index 0..6 of a day name, short ("Sun") or long ("Sunday"); -1 when neither. */
static int take_day(cursor *c, bool long_form) {
    static const char *const names[7][2] = {
        {"Mon", "Monday"}, {"Tue", "Tuesday"},  {"Wed", "Wednesday"}, {"Thu", "Thursday"},
        {"Fri", "Friday"}, {"Sat", "Saturday"}, {"Sun", "Sunday"},
    };
    for (int i = 0; i < 7; i++)
        if (take(c, names[i][long_form])) return i;
    return -1;
}

static bool take_month(cursor *c, int64_t *month) {
    static const char *const names[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; i++) {
        if (take(c, names[i])) {
            *month = i + 1;
            return true;
        }
    }
    return false;
}

static bool take_time(cursor *c, int64_t *h, int64_t *mi, int64_t *s) {
    return take_digits(c, 2, h) && take(c, ":") && take_digits(c, 2, mi) && take(c, ":") &&
           take_digits(c, 2, s);
}

/*
 * An HTTP-date (RFC 9110 section 5.6.7) as seconds since 1970. The three
 * forms are told apart by what follows the day name: ", dd " (IMF-fixdate),
 * ", dd-" (RFC 850) or " " (asctime). Names are case-sensitive, as the RFC says.
 */
static int parse_http_date(cursor c, int64_t now_unix_us, int64_t *unix_s) {
    int64_t y = 0, m = 0, d = 0, h = 0, mi = 0, s = 0;
    cursor imf = c, rfc850 = c, asc = c;
    if (take_day(&imf, false) >= 0 && take(&imf, ", ")) {
        /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
        c = imf;
        if (!(take_digits(&c, 2, &d) && take(&c, " ") && take_month(&c, &m) && take(&c, " ") &&
              take_digits(&c, 4, &y) && take(&c, " ") && take_time(&c, &h, &mi, &s) &&
              take(&c, " GMT")))
            return FB_EPARSE;
    } else if (take_day(&rfc850, true) >= 0 && take(&rfc850, ", ")) {
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
        c = rfc850;
        int64_t yy = 0;
        if (!(take_digits(&c, 2, &d) && take(&c, "-") && take_month(&c, &m) && take(&c, "-") &&
              take_digits(&c, 2, &yy) && take(&c, " ") && take_time(&c, &h, &mi, &s) &&
              take(&c, " GMT")))
            return FB_EPARSE;
        /* The latest year ending in yy that is not more than 50 years ahead (RFC 9110). */
        int64_t now_day = now_unix_us / (86400 * FB_US_PER_S);
        if (now_unix_us < 0 && now_unix_us % (86400 * FB_US_PER_S) != 0) now_day--;
        int64_t now_year = year_of_day(now_day);
        int64_t century = now_year - ((now_year % 100) + 100) % 100;
        y = century + 100 + yy;
        while (y > now_year + 50) y -= 100;
    } else if (take_day(&asc, false) >= 0 && take(&asc, " ")) {
        /* asctime: Sun Nov  6 08:49:37 1994 */
        c = asc;
        if (!(take_month(&c, &m) && take(&c, " "))) return FB_EPARSE;
        if (!(take(&c, " ") ? take_digits(&c, 1, &d) : take_digits(&c, 2, &d))) return FB_EPARSE;
        if (!(take(&c, " ") && take_time(&c, &h, &mi, &s) && take(&c, " ") &&
              take_digits(&c, 4, &y)))
            return FB_EPARSE;
    } else {
        return FB_EPARSE;
    }
    if (c.p != c.end) return FB_EPARSE;
    if (d < 1 || d > days_in_month(y, m) || h > 23 || mi > 59 || s > 60) return FB_EPARSE;
    *unix_s = days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + s;
    return FB_OK;
}

int fb_retry_after_parse(const char *value, int64_t now_unix_us, fb_time_us *delay_us) {
    if (value == NULL || delay_us == NULL) return FB_EINVAL;
    cursor c = trimmed(value);
    if (c.p < c.end && is_digit(*c.p)) return parse_decimal(c, 6, delay_us);

    int64_t unix_s = 0;
    int rc = parse_http_date(c, now_unix_us, &unix_s);
    if (rc != FB_OK) return rc;
    int64_t at_us = unix_s * FB_US_PER_S; /* years 0..9999: far from overflow */
    if (now_unix_us < 0 && at_us > INT64_MAX + now_unix_us) {
        *delay_us = FB_TIME_MAX;
        return FB_OK;
    }
    int64_t delay = at_us - now_unix_us;
    *delay_us = delay > 0 ? delay : 0; /* a date in the past: retry now */
    return FB_OK;
}

fb_time_us fb_retry_after_hint(const char *retry_after_ms, const char *retry_after,
                               int64_t now_unix_us) {
    fb_time_us d = 0;
    if (retry_after_ms != NULL && fb_retry_after_parse_ms(retry_after_ms, &d) == FB_OK) return d;
    if (retry_after != NULL && fb_retry_after_parse(retry_after, now_unix_us, &d) == FB_OK)
        return d;
    return FB_TIME_NONE;
}
