/*
 * test_retry_after.c - retry-after-ms and Retry-After (seconds and the three
 * HTTP-date forms) parsed, and the hint an SDK would pick from them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/retry_after.h"

#define MS FB_US_PER_MS
#define S FB_US_PER_S
#define NOV_6_1994 784111777LL /* Sun, 06 Nov 1994 08:49:37 GMT */

static fb_time_us ms_ok(const char *v) {
    fb_time_us d = -99;
    assert_int_equal(fb_retry_after_parse_ms(v, &d), FB_OK);
    return d;
}

static fb_time_us ra_ok(const char *v, int64_t now_unix_us) {
    fb_time_us d = -99;
    assert_int_equal(fb_retry_after_parse(v, now_unix_us, &d), FB_OK);
    return d;
}

static void retry_after_ms_parses_integers_and_fractions(void **state) {
    (void)state;
    assert_int_equal(ms_ok("250"), 250 * MS);
    assert_int_equal(ms_ok("1500.5"), 1500500);
    assert_int_equal(ms_ok("0"), 0);
    assert_int_equal(ms_ok("0.0005"), 0); /* below a microsecond */
    assert_int_equal(ms_ok("1.23456"), 1234);
    assert_int_equal(ms_ok(" 20\t"), 20 * MS);
    assert_int_equal(ms_ok("007"), 7 * MS);
    assert_int_equal(ms_ok("9223372036854775.807"), INT64_MAX);
}

static void retry_after_ms_rejects_garbage_negative_and_overflow(void **state) {
    (void)state;
    const char *bad[] = {"",
                         " ",
                         "abc",
                         "-5",
                         "+5",
                         "1e3",
                         "1.",
                         ".5",
                         "12abc",
                         "inf",
                         "nan",
                         "1 2",
                         "0x10",
                         "9223372036854775.808",
                         "9223372036854776",
                         "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fb_time_us d = 42;
        assert_int_equal(fb_retry_after_parse_ms(bad[i], &d), FB_EPARSE);
        assert_int_equal(d, 42);
    }
}

static void retry_after_parses_delta_seconds(void **state) {
    (void)state;
    assert_int_equal(ra_ok("30", 0), 30 * S);
    assert_int_equal(ra_ok("1.5", 0), 1500 * MS);
    assert_int_equal(ra_ok("0", 0), 0);
    assert_int_equal(ra_ok(" 120 ", 0), 120 * S);
    assert_int_equal(ra_ok("0.0000019", 0), 1);
    assert_int_equal(ra_ok("9223372036854", 0), 9223372036854 * S);
}

static void retry_after_rejects_bad_delta_seconds(void **state) {
    (void)state;
    const char *bad[] = {"-1", "+1", "1e3", "1.", "30s", "9223372036855", "1,5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fb_time_us d = 42;
        assert_int_equal(fb_retry_after_parse(bad[i], 0, &d), FB_EPARSE);
        assert_int_equal(d, 42);
    }
}

static void retry_after_parses_imf_fixdate(void **state) {
    (void)state;
    int64_t now = (NOV_6_1994 - 10) * S;
    assert_int_equal(ra_ok("Sun, 06 Nov 1994 08:49:37 GMT", now), 10 * S);
    assert_int_equal(ra_ok("Sun, 06 Nov 1994 08:49:37 GMT", now + 250 * MS), 9750 * MS);
    assert_int_equal(ra_ok("Thu, 01 Jan 1970 00:00:00 GMT", -5 * S), 5 * S);
    assert_int_equal(ra_ok("Fri, 31 Dec 9999 23:59:59 GMT", 0), 253402300799LL * S);
    assert_int_equal(ra_ok("Thu, 29 Feb 2024 00:00:00 GMT", 1709164800LL * S - 1), 1);
    assert_int_equal(ra_ok("Tue, 29 Feb 2000 00:00:00 GMT", 0), 951782400LL * S);
}

static void retry_after_parses_rfc850_date(void **state) {
    (void)state;
    int64_t now = (NOV_6_1994 - 10) * S;
    assert_int_equal(ra_ok("Sunday, 06-Nov-94 08:49:37 GMT", now), 10 * S);
    /* Two-digit years: not more than 50 years ahead of now (RFC 9110 section 5.6.7). */
    int64_t now_2026 = 1795910400LL * S; /* 2026-11-29 */
    assert_int_equal(ra_ok("Wednesday, 01-Jan-76 00:00:00 GMT", now_2026),
                     (3345062400LL - 1795910400LL) * S);                      /* 2076 */
    assert_int_equal(ra_ok("Saturday, 01-Jan-77 00:00:00 GMT", now_2026), 0); /* 1977: past */
}

static void retry_after_parses_asctime_date(void **state) {
    (void)state;
    int64_t now = (NOV_6_1994 - 10) * S;
    assert_int_equal(ra_ok("Sun Nov  6 08:49:37 1994", now), 10 * S);
    assert_int_equal(ra_ok("Sun Nov 06 08:49:37 1994", now), 10 * S);
    assert_int_equal(ra_ok("Wed Nov 16 08:49:37 1994", now), (10 * 86400 + 10) * S);
}

static void retry_after_date_in_the_past_is_zero(void **state) {
    (void)state;
    int64_t now = (NOV_6_1994 + 3600) * S;
    assert_int_equal(ra_ok("Sun, 06 Nov 1994 08:49:37 GMT", now), 0);
    assert_int_equal(ra_ok("Sunday, 06-Nov-94 08:49:37 GMT", now), 0);
    assert_int_equal(ra_ok("Sun Nov  6 08:49:37 1994", now), 0);
}

static void retry_after_rejects_malformed_dates(void **state) {
    (void)state;
    const char *bad[] = {
        "Sun, 06 Nov 1994 08:49:37 UTC",    "Sun, 06 Nov 1994 08:49:37",
        "sun, 06 Nov 1994 08:49:37 GMT",    "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",     "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",    "Thu, 29 Feb 2023 00:00:00 GMT",
        "Mon, 29 Feb 1900 00:00:00 GMT",    "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",    "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",    "Sun, 06 Nov 1994 08:49:37 GMT x",
        "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",           "Sun Nov  6 08:49:37 1994 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",    "2026-11-29T12:00:00Z",
        "Sun,06 Nov 1994 08:49:37 GMT",     "Sun, 06 Nov 1994 8:49:37 GMT",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fb_time_us d = 42;
        if (fb_retry_after_parse(bad[i], 0, &d) != FB_EPARSE) fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(d, 42);
    }
    fb_time_us d = 0;
    assert_int_equal(fb_retry_after_parse("Sun, 06 Nov 1994 08:49:60 GMT", 0, &d), FB_OK);
    assert_int_equal(fb_retry_after_parse(NULL, 0, &d), FB_EINVAL);
    assert_int_equal(fb_retry_after_parse_ms(NULL, &d), FB_EINVAL);
}

static void retry_after_hint_prefers_retry_after_ms(void **state) {
    (void)state;
    assert_int_equal(fb_retry_after_hint("250", "30", 0), 250 * MS);
    assert_int_equal(fb_retry_after_hint("junk", "30", 0), 30 * S);
    assert_int_equal(fb_retry_after_hint(NULL, "1.5", 0), 1500 * MS);
    assert_int_equal(
        fb_retry_after_hint(NULL, "Sun, 06 Nov 1994 08:49:37 GMT", (NOV_6_1994 - 2) * S), 2 * S);
    assert_int_equal(fb_retry_after_hint(NULL, NULL, 0), FB_TIME_NONE);
    assert_int_equal(fb_retry_after_hint("-1", "soon", 0), FB_TIME_NONE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_after_ms_parses_integers_and_fractions),
        cmocka_unit_test(retry_after_ms_rejects_garbage_negative_and_overflow),
        cmocka_unit_test(retry_after_parses_delta_seconds),
        cmocka_unit_test(retry_after_rejects_bad_delta_seconds),
        cmocka_unit_test(retry_after_parses_imf_fixdate),
        cmocka_unit_test(retry_after_parses_rfc850_date),
        cmocka_unit_test(retry_after_parses_asctime_date),
        cmocka_unit_test(retry_after_date_in_the_past_is_zero),
        cmocka_unit_test(retry_after_rejects_malformed_dates),
        cmocka_unit_test(retry_after_hint_prefers_retry_after_ms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
