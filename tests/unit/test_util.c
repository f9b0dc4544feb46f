/* test_util.c - util/: the growable buffer's cap, the JSON writer's layouts and its one-put items,
 * "%.Nf" without printf against printf, the buffered FILE, the escapes, the JUnit
 * writer, base64 (RFC 4648's vectors), strict UTF-8 (RFC 3629), the checked close, the whole-file
 * reader's cap, the worker pool (results by task, whatever the workers) and the huge-page hint
 * (the whole huge pages inside a block, as the kernel records them). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "util/base64.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/json.h"
#include "util/junit.h"
#include "util/mem.h"
#include "util/out.h"
#include "util/pool.h"
#include "util/utf8.h"
#include "util/xml.h"

/* A util_out into memory: the text written, NUL-terminated. */
typedef struct text {
    char s[4096];
    size_t n;
} text;

static void put(void *sink, const char *s, size_t n) {
    text *t = sink;
    assert_true(t->n + n < sizeof t->s);
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

static void util_json_escapes_quotes_backslashes_and_controls(void **state) {
    (void)state;
    text t = {.n = 0};
    util_out o = {put, &t};
    /* long enough that the eight-bytes-at-a-time path runs before and after the escapes */
    util_json_string(&o, "plain text here \"q\" back\\slash\nline\x01 end of the text, é", 0);
    assert_string_equal(t.s, "\"plain text here \\\"q\\\" back\\\\slash\\u000aline\\u0001 end of "
                             "the text, é\"");
    t.n = 0;
    util_json_string(&o, "a\nb", UTIL_JSON_SHORT_NEWLINE);
    assert_string_equal(t.s, "\"a\\nb\"");
    t.n = 0;
    util_json_escape(&o, "ab\0c", 4, 0); /* a length, not a NUL, ends it */
    assert_string_equal(t.s, "ab\\u0000c");
}

static void util_json_writer_lays_out_each_container_as_opened(void **state) {
    (void)state;
    text t = {.n = 0};
    util_json w;
    util_json_init(&w, (util_out){put, &t}, UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_u64(&w, "u", UINT64_MAX);
    util_json_i64(&w, "i", INT64_MIN);
    util_json_open(&w, "inline", '[', UTIL_JSON_INLINE);
    util_json_fixed(&w, NULL, 1.0 / 3, 3);
    util_json_digits(&w, NULL, 1.0 / 3, 15);
    util_json_exact(&w, NULL, 0.1);
    util_json_fixed(&w, NULL, 1.0 / 0.0, 2); /* not finite: null */
    util_json_close(&w);
    util_json_open(&w, "empty", '{', UTIL_JSON_LINES);
    util_json_close(&w);
    util_json_open(&w, "open", '[', UTIL_JSON_LINES_OPEN);
    util_json_close(&w);
    util_json_open(&w, "compact", '{', UTIL_JSON_COMPACT);
    util_json_str(&w, "s", "a\nb");
    util_json_str(&w, "none", NULL);
    util_json_bool(&w, "b", false);
    util_json_wrap(&w, 3); /* whatever the layout, the next item starts a line at column 3 */
    util_json_raw(&w, "raw", "[1]");
    util_json_close(&w);
    util_json_close(&w);
    assert_string_equal(t.s,
                        "{\n"
                        "  \"u\": 18446744073709551615,\n"
                        "  \"i\": -9223372036854775808,\n"
                        "  \"inline\": [0.333, 0.333333333333333, 0.10000000000000001, null],\n"
                        "  \"empty\": {},\n"
                        "  \"open\": [\n"
                        "  ],\n"
                        "  \"compact\": {\"s\":\"a\\nb\",\"none\":null,\"b\":false,\n"
                        "   \"raw\":[1]}\n"
                        "}");
    /* escapes chosen per writer; a wrap deeper than the writer's row of spaces */
    t.n = 0;
    util_json_init(&w, (util_out){put, &t}, 0);
    util_json_open(&w, NULL, '[', UTIL_JSON_COMPACT);
    util_json_str(&w, NULL, "a\nb");
    util_json_wrap(&w, 70);
    util_json_null(&w, NULL);
    util_json_text(&w, "\n");
    util_json_close(&w);
    assert_int_equal(t.n, strlen("[\"a\\u000ab\",\n") + 70 + strlen("null\n]"));
    assert_string_equal(t.s + t.n - 7, " null\n]");
}

/* A value of splitmix64 (Steele, Lea, Flood 2014): the test's own numbers, fixed by the seed. */
static uint64_t mix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* v with `decimals` decimals through the writer, against printf's own "%.*f". */
static void expect_fixed_as_printf(double v, int decimals) {
    text t = {.n = 0};
    util_json w;
    char want[512];
    util_json_init(&w, (util_out){put, &t}, 0);
    util_json_open(&w, NULL, '[', UTIL_JSON_COMPACT);
    util_json_fixed(&w, NULL, v, decimals);
    util_json_close(&w);
    snprintf(want, sizeof want, "[%.*f]", decimals, v);
    if (strcmp(t.s, want) != 0)
        fail_msg("%a with %d decimals: %s, printf %s", v, decimals, t.s, want);
}

static void util_json_fixed_writes_what_printf_writes(void **state) {
    (void)state;
    /* ties (round half to even), carries into the integer part, the signs of zero, the edges
       of what the writer formats itself (2^-8, 2^64) and what it leaves to printf */
    static const double edges[] = {0.0,
                                   -0.0,
                                   0.5,
                                   1.5,
                                   2.5,
                                   -2.5,
                                   0.125,
                                   0.375,
                                   -0.001,
                                   9.9999996,
                                   999999.9999995,
                                   0.00390625,
                                   0.0039062,
                                   0x1p-8 * 0.75,
                                   0x1p52,
                                   0x1p53 + 2,
                                   0x1p63,
                                   0x1p64 - 2048,
                                   0x1p64,
                                   1e300,
                                   -1e300,
                                   4.9e-324,
                                   2.2250738585072014e-308,
                                   1.0 / 3,
                                   123.456789,
                                   1e15 + 0.5};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        for (int d = 0; d <= 19; d++) expect_fixed_as_printf(edges[i], d);
    /* seconds as events.jsonl writes them (microseconds / 1e6), halves of a fixed decimal
       grid, and any double of the range the writer formats itself */
    uint64_t x = 24;
    for (int i = 0; i < 20000; i++) {
        int d = (int)(mix(&x) % 12);
        int64_t us = (int64_t)(mix(&x) >> (mix(&x) % 64)) - (int64_t)(mix(&x) >> 20);
        expect_fixed_as_printf((double)us / 1e6, 6);
        expect_fixed_as_printf(((double)(mix(&x) % 2000000) + 0.5) / 1000, d);
        uint64_t bits = (mix(&x) & 0x800fffffffffffffull) | ((1023 - 12 + mix(&x) % 80) << 52);
        double v;
        memcpy(&v, &bits, sizeof v);
        expect_fixed_as_printf(v, d);
    }
}

/* The short keys and strings (one put) against the long way, at the edge of what is short. */
static void util_json_short_and_long_items_agree(void **state) {
    (void)state;
    static char want[4 * sizeof(text) + 64];
    char key[200];
    text t = {.n = 0}, lit = {.n = 0};
    util_out lo = {put, &lit};
    for (size_t n = 118; n <= 122; n++) {
        memset(key, 'k', n);
        key[n] = '\0';
        for (int layout = 0; layout < 2; layout++) {
            util_json w;
            const char *colon = layout ? ": " : ":", *comma = layout ? ", " : ",";
            t.n = lit.n = 0;
            util_json_init(&w, (util_out){put, &t}, UTIL_JSON_SHORT_NEWLINE);
            util_json_open(&w, NULL, '{', layout ? UTIL_JSON_INLINE : UTIL_JSON_COMPACT);
            util_json_str(&w, key, key);
            util_json_str(&w, "q\"", "a\nb");
            util_json_u64(&w, key, 7);
            util_json_fixed(&w, "f", -0.25, 1);
            util_json_close(&w);
            util_json_string(&lo, key, 0);
            snprintf(want, sizeof want, "{%s%s%s%s\"q\\\"\"%s\"a\\nb\"%s%s%s7%s\"f\"%s-0.2}", lit.s,
                     colon, lit.s, comma, colon, comma, lit.s, colon, comma, colon);
            assert_string_equal(t.s, want);
        }
    }
}

/* Puts through a buffer reach the FILE whole and in order, a put larger than the buffer too. */
static void util_out_buffered_writes_every_byte_in_order(void **state) {
    (void)state;
    static char big[5000], back[sizeof big * 3];
    FILE *f = tmpfile();
    assert_non_null(f);
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
    util_out_buffer ob;
    util_out o = util_out_buffered(&ob, f);
    size_t written = 0;
    for (size_t n = 1; written + n <= 2 * sizeof big; written += n, n = n * 3 % 997 + 1)
        util_put(&o, big + written % 2000, n);
    util_put(&o, big, sizeof big); /* more than the buffer: flushed first, then straight */
    util_out_flush(&ob);
    util_out_flush(&ob); /* nothing left: nothing written */
    rewind(f);
    size_t got = fread(back, 1, sizeof back, f);
    assert_int_equal(got, written + sizeof big);
    size_t at = 0;
    for (size_t n = 1; at + n <= 2 * sizeof big; at += n, n = n * 3 % 997 + 1)
        assert_memory_equal(back + at, big + at % 2000, n);
    assert_memory_equal(back + at, big, sizeof big);
    fclose(f);
}

static void util_xml_escapes_markup_and_blanks_controls(void **state) {
    (void)state;
    text t = {.n = 0};
    util_out o = {put, &t};
    util_xml_escape(&o, "a<b>&\"c\" it's\x02\n\t", 0);
    assert_string_equal(t.s, "a&lt;b&gt;&amp;&quot;c&quot; it's \n\t");
    t.n = 0;
    util_xml_escape(&o, "it's", UTIL_XML_APOS);
    assert_string_equal(t.s, "it&#39;s");
}

static void util_junit_case_puts_output_where_asked(void **state) {
    (void)state;
    text t = {.n = 0};
    util_out o = {put, &t};
    util_junit_testcase(&o,
                        &(util_junit_case){.classname = "c",
                                           .name = "a<b",
                                           .time_s = 1.5,
                                           .kind = "failure",
                                           .message = "m",
                                           .text = "x",
                                           .output = "out"},
                        0);
    assert_string_equal(t.s, "    <testcase classname=\"c\" name=\"a&lt;b\" time=\"1.500\">\n"
                             "      <failure message=\"m\">x</failure>\n"
                             "      <system-out>out</system-out>\n"
                             "    </testcase>\n");
    t.n = 0;
    util_junit_testcase(&o,
                        &(util_junit_case){.classname = "c",
                                           .name = "n",
                                           .time_s = -1,
                                           .kind = "skipped",
                                           .message = "none",
                                           .output = "out",
                                           .output_first = true},
                        0);
    assert_string_equal(t.s, "    <testcase classname=\"c\" name=\"n\">\n"
                             "      <system-out>out</system-out>\n"
                             "      <skipped message=\"none\"/>\n"
                             "    </testcase>\n");
}

static void util_base64_matches_rfc4648_vectors(void **state) {
    (void)state;
    /* RFC 4648, section 10 */
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const want[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                       "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        char out[16];
        size_t n = util_base64(out, (const unsigned char *)in[i], strlen(in[i]));
        assert_int_equal(n, UTIL_BASE64_LEN(strlen(in[i])));
        out[n] = '\0';
        assert_string_equal(out, want[i]);
    }
}

static void util_utf8_rejects_overlongs_surrogates_and_truncation(void **state) {
    (void)state;
    size_t bad = 99;
    assert_true(util_utf8_valid("plain ascii text, é, 😀", strlen("plain ascii text, é, 😀"), &bad));
    const char *cases[] = {"12345678\xC0\xAF", "12345678\xED\xA0\x80", "12345678\xF4\x90\x80\x80",
                           "12345678\xE2\x82"};
    for (size_t i = 0; i < 4; i++) {
        bad = 99;
        assert_false(util_utf8_valid(cases[i], strlen(cases[i]), &bad));
        assert_int_equal(bad, 8);
    }
    char s[] = "ok\xFFok";
    util_utf8_fix(s);
    assert_string_equal(s, "ok?ok");
}

static void util_fclose_checked_reports_a_full_disk(void **state) {
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (f == NULL) skip();
    fputs("x", f);
    assert_int_equal(util_fclose_checked(f), ENOSPC);
}

/* A whole file: every byte (the buffer grows past its first 64 KiB), NUL-terminated; max bytes
 * exactly is read, one more is EFBIG; a missing file is fopen's errno, a folder a read error. */
static void util_read_file_reads_up_to_its_cap(void **state) {
    (void)state;
    char path[] = "/tmp/fusebox-test-util-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    size_t size = 200000;
    for (size_t i = 0; i < size; i++) fputc('a' + (int)(i % 26), f);
    assert_int_equal(util_fclose_checked(f), 0);
    size_t len = 0;
    char *got = util_read_file(path, size, &len);
    assert_non_null(got);
    assert_int_equal(len, size);
    assert_int_equal(got[size - 1], 'a' + (int)((size - 1) % 26));
    assert_int_equal(got[size], '\0');
    free(got);
    errno = 0;
    assert_null(util_read_file(path, size - 1, &len));
    assert_int_equal(errno, EFBIG);
    f = fopen(path, "rb");
    assert_non_null(f);
    got = util_read_stream(f, size, &len);
    assert_non_null(got);
    assert_int_equal(len, size);
    free(got);
    fclose(f);
    remove(path);
    assert_null(util_read_file(path, size, &len));
    assert_int_equal(errno, ENOENT);
    assert_null(util_read_file("/tmp", size, &len));
    assert_int_equal(errno, EIO);
}

/* The pool: each task's result is its square, as text; the parent files it by task. */
static bool square(void *ctx, uint64_t task, char **data, size_t *len) {
    (void)ctx;
    char *s = malloc(32);
    if (s == NULL) return false;
    *len = (size_t)snprintf(s, 32, "%llu", (unsigned long long)(task * task));
    *data = s;
    return true;
}

static void file_result(void *ctx, uint64_t task, const char *data, size_t len) {
    uint64_t *got = ctx;
    assert_int_equal(strlen(data), len);
    got[task] = strtoull(data, NULL, 10) + 1; /* + 1: 0 is "none" */
}

static void util_pool_files_every_result_under_its_task(void **state) {
    (void)state;
    uint64_t tasks[50], got[50] = {0};
    for (uint64_t i = 0; i < 50; i++) tasks[i] = i;
    util_pool_job job = {NULL, square, file_result, got, NULL};
    char msg[200];
    for (size_t jobs = 1; jobs <= 4; jobs += 3) {
        memset(got, 0, sizeof got);
        assert_int_equal(util_pool_run(&job, tasks, 50, jobs, msg, sizeof msg), 0);
        for (uint64_t i = 0; i < 50; i++) assert_int_equal(got[i], i * i + 1);
    }
}

static bool die_on_seven(void *ctx, uint64_t task, char **data, size_t *len) {
    if (task == 7) _Exit(5);
    return square(ctx, task, data, len);
}

static void util_pool_names_a_worker_that_died(void **state) {
    (void)state;
    uint64_t tasks[10], got[10] = {0};
    for (uint64_t i = 0; i < 10; i++) tasks[i] = i;
    util_pool_job job = {NULL, die_on_seven, file_result, got, NULL};
    char msg[200];
    assert_int_equal(util_pool_run(&job, tasks, 10, 2, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "exited with status 5"));
    assert_int_equal(got[7], 0);
}

/* Appends across many growths keep every byte; take hands them over and leaves the cap. */
static void util_buf_grows_and_hands_over_its_bytes(void **state) {
    (void)state;
    util_buf b = {.cap = 100000};
    for (int i = 0; i < 10000; i++) util_buf_printf(&b, "%d,", i % 10);
    util_buf_puts(&b, "end");
    assert_int_equal(b.err, UTIL_BUF_OK);
    assert_int_equal(b.len, 20003);
    assert_memory_equal(b.p + 19996, "8,9,end", 8);
    size_t len = 0;
    char *p = util_buf_take(&b, &len);
    assert_int_equal(len, 20003);
    assert_null(b.p);
    assert_int_equal(b.cap, 100000);
    free(p);
    p = util_buf_take(&b, &len); /* nothing appended: "" */
    assert_string_equal(p, "");
    assert_int_equal(len, 0);
    free(p);
}

/* An append past the cap appends nothing and stops every later one: the cap is reported in err,
 * and the bytes held stay NUL-terminated. */
static void util_buf_stops_at_its_cap(void **state) {
    (void)state;
    util_buf b = {.cap = 10};
    util_buf_puts(&b, "0123456789");
    assert_int_equal(b.err, UTIL_BUF_OK);
    util_buf_append(&b, "x", 1);
    assert_int_equal(b.err, UTIL_BUF_FULL);
    assert_string_equal(b.p, "0123456789");
    b.len = 2; /* room again, but the buffer has stopped */
    util_buf_puts(&b, "x");
    assert_int_equal(b.len, 2);
    size_t len;
    assert_null(util_buf_take(&b, &len));
    assert_null(b.p);
    assert_int_equal(b.err, UTIL_BUF_OK);

    util_buf_puts(&b, "0123");
    util_buf_printf(&b, "%s", "4567890"); /* formatted into the room there is, then refused */
    assert_int_equal(b.err, UTIL_BUF_FULL);
    assert_string_equal(b.p, "0123");
    util_buf_free(&b);
    assert_int_equal(b.cap, 10);

    util_buf d = {0}; /* a cap of 0 is UTIL_BUF_CAP_DEFAULT */
    assert_false(util_buf_reserve(&d, UTIL_BUF_CAP_DEFAULT + 1));
    assert_int_equal(d.err, UTIL_BUF_FULL);
    util_buf_free(&d);
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/* Whether the kernel holds [a, b) as advised for huge pages (smaps' VmFlags "hg"), in every
   mapping that overlaps it: 1 all, 0 none, -1 a mix or no smaps. */
static int advised(uintptr_t a, uintptr_t b) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL) return -1;
    char line[512];
    uintptr_t lo = 0, hi = 0;
    int all = 1, none = 1, seen = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long x, y;
        if (sscanf(line, "%lx-%lx ", &x, &y) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            lo = x, hi = y;
        } else if (strncmp(line, "VmFlags:", 8) == 0 && lo < b && hi > a) {
            bool hg = strstr(line, " hg") != NULL;
            all &= hg;
            none &= !hg;
            seen = 1;
        }
    }
    fclose(f);
    return !seen ? -1 : all ? 1 : none ? 0 : -1;
}
#endif

static void util_mem_huge_advises_the_whole_huge_pages_inside(void **state) {
    (void)state;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t H = UTIL_MEM_HUGE;
    size_t len = 12 * H;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    if (madvise(m, 4096, MADV_NORMAL) != 0 || advised((uintptr_t)m, (uintptr_t)m + len) != 0) {
        munmap(m, len);
        skip(); /* no smaps, or a kernel that advises such a mapping already */
    }
    uintptr_t first = ((uintptr_t)m + 2 * H - 1) & ~(H - 1); /* a huge page's start, inside */
    /* a block of 3.5 huge pages from 4 KiB past a boundary: the 2 whole ones inside it */
    char *p = (char *)first + 4096;
    util_mem_huge(p, 3 * H + H / 2);
    assert_int_equal(advised(first + H, first + 3 * H), 1);
    assert_int_equal(advised(first, first + H), 0);             /* its first, partial page */
    assert_int_equal(advised(first + 3 * H, first + 4 * H), 0); /* its last, partial one */
    /* under two huge pages: nothing, even when one whole page lies inside */
    util_mem_huge((char *)first + 5 * H, 2 * H - 1);
    assert_int_equal(advised(first + 5 * H, first + 7 * H), 0);
    util_mem_huge(NULL, 8 * H); /* nothing to advise */
    munmap(m, len);
#else
    skip(); /* huge pages are Linux's */
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(util_buf_grows_and_hands_over_its_bytes),
        cmocka_unit_test(util_buf_stops_at_its_cap),
        cmocka_unit_test(util_json_escapes_quotes_backslashes_and_controls),
        cmocka_unit_test(util_json_writer_lays_out_each_container_as_opened),
        cmocka_unit_test(util_json_fixed_writes_what_printf_writes),
        cmocka_unit_test(util_json_short_and_long_items_agree),
        cmocka_unit_test(util_out_buffered_writes_every_byte_in_order),
        cmocka_unit_test(util_xml_escapes_markup_and_blanks_controls),
        cmocka_unit_test(util_junit_case_puts_output_where_asked),
        cmocka_unit_test(util_base64_matches_rfc4648_vectors),
        cmocka_unit_test(util_utf8_rejects_overlongs_surrogates_and_truncation),
        cmocka_unit_test(util_fclose_checked_reports_a_full_disk),
        cmocka_unit_test(util_read_file_reads_up_to_its_cap),
        cmocka_unit_test(util_pool_files_every_result_under_its_task),
        cmocka_unit_test(util_pool_names_a_worker_that_died),
        cmocka_unit_test(util_mem_huge_advises_the_whole_huge_pages_inside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
