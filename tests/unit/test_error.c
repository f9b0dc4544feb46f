/* test_error.c - the error table: every code has a name and a text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/fb.h"

static void error_every_code_has_its_own_name_and_text(void **state) {
    (void)state;
    static const int codes[] = {
#define CODE(name, code, text) FB_E##name,
        FB_ERRNO_MAP(CODE)
#undef CODE
    };
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        assert_true(codes[i] < 0);
        assert_string_not_equal(fb_strerror(codes[i]), "unknown error");
        assert_string_not_equal(fb_err_name(codes[i]), "FB_E?");
        for (size_t k = 0; k < i; k++) {
            assert_int_not_equal(codes[i], codes[k]);
            assert_string_not_equal(fb_strerror(codes[i]), fb_strerror(codes[k]));
        }
    }
    assert_string_equal(fb_err_name(FB_EINVAL), "FB_EINVAL");
    assert_string_equal(fb_strerror(FB_ECAP), "capacity limit reached");
    assert_string_equal(fb_strerror(FB_OK), "ok");
    assert_string_equal(fb_strerror(-999), "unknown error");
    assert_string_equal(fb_err_name(12), "FB_E?");
}

static void error_time_add_saturates(void **state) {
    (void)state;
    assert_int_equal(fb_time_add(1, 2), 3);
    assert_int_equal(fb_time_add(FB_TIME_MAX - 1, 5), FB_TIME_MAX);
    assert_int_equal(fb_time_add(FB_TIME_MAX, FB_TIME_MAX), FB_TIME_MAX);
    assert_int_equal(fb_time_add(10, -3), 7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_every_code_has_its_own_name_and_text),
        cmocka_unit_test(error_time_add_saturates),
    };
    return cmocka_run_group_tests_name("error", tests, NULL, NULL);
}
