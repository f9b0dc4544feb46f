/* test_yaml.c - policy files read into a located tree (import/yaml.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fb.h"
#include "import/yaml.h"

static imp_node *parse(const char *text) {
    imp_node *n = NULL;
    imp_error err;
    int rc = imp_yaml_parse(text, strlen(text), "t.yml", &n, &err);
    if (rc != FB_OK) fail_msg("%d:%d: %s", err.line, err.col, err.msg);
    return n;
}

static void yaml_nodes_know_their_line_and_column(void **state) {
    (void)state;
    imp_node *root = parse("router_settings:\n"
                           "  num_retries: 3\n"
                           "  fallbacks:\n"
                           "    - gpt-4: [\"claude\", 'gpt-3.5']\n");
    assert_int_equal(root->kind, IMP_MAP);
    const imp_node *rs = imp_get(root, "router_settings");
    assert_non_null(rs);
    const imp_node *n = imp_get(rs, "num_retries");
    assert_int_equal(n->kind, IMP_SCALAR);
    assert_string_equal(n->value, "3");
    assert_false(n->quoted);
    assert_int_equal(n->line, 2);
    assert_int_equal(n->col, 16);
    const imp_node *fb = imp_get(rs, "fallbacks");
    assert_int_equal(fb->kind, IMP_SEQ);
    const imp_node *list = imp_get(fb->items[0], "gpt-4");
    assert_int_equal(list->n, 2);
    assert_true(list->items[0]->quoted);
    assert_string_equal(list->items[1]->value, "gpt-3.5");
    assert_int_equal(list->items[1]->line, 4);
    assert_null(imp_get(rs, "nope"));
    assert_null(imp_get(n, "x"));
    imp_node_free(root);
}

static void yaml_aliases_are_expanded(void **state) {
    (void)state;
    imp_node *root = parse("base: &b\n  a: 1\n  b: 2\nx: *b\ny: *b\n");
    const imp_node *x = imp_get(root, "x"), *y = imp_get(root, "y");
    assert_string_equal(imp_get(x, "b")->value, "2");
    assert_string_equal(imp_get(y, "a")->value, "1");
    assert_ptr_not_equal(x, y);
    imp_node_free(root);
}

static void yaml_errors_name_line_and_column(void **state) {
    (void)state;
    imp_node *n = NULL;
    imp_error err;
    const char *bad = "a:\n  - b\n c: [\n";
    assert_int_equal(imp_yaml_parse(bad, strlen(bad), "bad.yml", &n, &err), FB_EPARSE);
    assert_null(n);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 2);
    char line[600];
    imp_error_format(&err, line, sizeof line);
    assert_non_null(strstr(line, "bad.yml:3:2: "));
    const char *alias = "a: *nowhere\n";
    assert_int_equal(imp_yaml_parse(alias, strlen(alias), "a.yml", &n, &err), FB_EPARSE);
    assert_int_equal(imp_yaml_parse("", 0, "e.yml", &n, &err), FB_EPARSE);
    assert_non_null(strstr(err.msg, "no YAML document"));
}

/* An alias bomb (each level doubling) stops at the node cap instead of eating memory. */
static void yaml_alias_bombs_hit_the_node_cap(void **state) {
    (void)state;
    char text[4096] = "a0: &a0 [x, x]\n";
    for (int i = 1; i < 24; i++) {
        char line[128];
        snprintf(line, sizeof line, "a%d: &a%d [*a%d, *a%d]\n", i, i, i - 1, i - 1);
        strcat(text, line);
    }
    imp_node *n = NULL;
    imp_error err;
    assert_int_equal(imp_yaml_parse(text, strlen(text), "bomb.yml", &n, &err), FB_ECAP);
    assert_null(n);
    assert_non_null(strstr(err.msg, "200000"));
    char *deep = malloc(1000);
    memset(deep, '[', 999);
    deep[999] = '\0';
    assert_int_equal(imp_yaml_parse(deep, 999, "deep.yml", &n, &err), FB_ECAP);
    assert_non_null(strstr(err.msg, "deeper than 64"));
    free(deep);
}

/* A map or a sequence as a key ("? [a]\n: b") is an error at the key, never a NULL key. */
static void yaml_complex_keys_are_refused(void **state) {
    (void)state;
    const char *cases[] = {"litellm_settings: {}\n? [a]\n: b\n", "x: 1\n? {a: 1}\n: b\n",
                           "{[a, b]: c}\n"};
    const int lines[] = {2, 2, 1};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        imp_node *n = NULL;
        imp_error err;
        assert_int_equal(imp_yaml_parse(cases[i], strlen(cases[i]), "k.yml", &n, &err), FB_EPARSE);
        assert_null(n);
        assert_int_equal(err.line, lines[i]);
        assert_non_null(strstr(err.msg, "a key must be a scalar"));
    }
}

/* A key twice in one map is an error that names both lines. */
static void yaml_duplicate_keys_are_refused(void **state) {
    (void)state;
    const char *dup = "router_settings:\n  num_retries: 3\n  timeout: 5\n  num_retries: 1\n";
    imp_node *n = NULL;
    imp_error err;
    assert_int_equal(imp_yaml_parse(dup, strlen(dup), "d.yml", &n, &err), FB_EPARSE);
    assert_null(n);
    assert_int_equal(err.line, 4);
    assert_non_null(strstr(err.msg, "\"num_retries\""));
    assert_non_null(strstr(err.msg, "lines 2 and 4"));
    assert_non_null(strstr(err.msg, "keeps the last"));
    /* the same key in two different maps is fine, and so is an alias's copy */
    imp_node *ok = parse("a: {x: 1}\nb: {x: 2}\nc: &c {k: 1}\nd: *c\n");
    assert_string_equal(imp_get(imp_get(ok, "b"), "x")->value, "2");
    imp_node_free(ok);
}

/* Aliases are capped by the bytes they expand to (16 times the file), not only by nodes:
 * one 64 KiB value referenced 1,000 times would be 64 MiB. */
static void yaml_aliases_are_capped_by_bytes(void **state) {
    (void)state;
    size_t big = 64 * 1024, refs = 1000;
    char *text = malloc(big + refs * 16 + 64);
    size_t len = (size_t)sprintf(text, "v: &v ");
    memset(text + len, 'x', big);
    len += big;
    len += (size_t)sprintf(text + len, "\nl:\n");
    for (size_t i = 0; i < refs; i++) len += (size_t)sprintf(text + len, "- *v\n");
    imp_node *n = NULL;
    imp_error err;
    assert_int_equal(imp_yaml_parse(text, len, "b.yml", &n, &err), FB_ECAP);
    assert_null(n);
    assert_non_null(strstr(err.msg, "aliases expand past"));
    assert_non_null(strstr(err.msg, "16 times"));
    /* a few references stay well within */
    len = (size_t)sprintf(text, "v: &v ");
    memset(text + len, 'x', big);
    len += big;
    len += (size_t)sprintf(text + len, "\nl: [*v, *v, *v]\n");
    assert_int_equal(imp_yaml_parse(text, len, "b.yml", &n, &err), FB_OK);
    assert_int_equal(imp_get(n, "l")->n, 3);
    imp_node_free(n);
    free(text);
}

static void yaml_files_are_read_and_capped(void **state) {
    (void)state;
    imp_node *n = NULL;
    imp_error err;
    assert_int_equal(imp_yaml_load("/nonexistent/x.yml", &n, &err), FB_EIO);
    assert_non_null(strstr(err.msg, "cannot read"));
    char *big = malloc(IMP_YAML_BYTES_MAX + 2);
    memset(big, '#', IMP_YAML_BYTES_MAX + 1);
    assert_int_equal(imp_yaml_parse(big, IMP_YAML_BYTES_MAX + 1, "big.yml", &n, &err), FB_ECAP);
    free(big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(yaml_nodes_know_their_line_and_column),
        cmocka_unit_test(yaml_aliases_are_expanded),
        cmocka_unit_test(yaml_errors_name_line_and_column),
        cmocka_unit_test(yaml_alias_bombs_hit_the_node_cap),
        cmocka_unit_test(yaml_files_are_read_and_capped),
        cmocka_unit_test(yaml_complex_keys_are_refused),
        cmocka_unit_test(yaml_duplicate_keys_are_refused),
        cmocka_unit_test(yaml_aliases_are_capped_by_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
