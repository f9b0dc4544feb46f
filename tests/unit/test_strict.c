/*
 * test_strict.c - strict input (issue 14): what a JSON reader would read
 * differently is an error with its place. Duplicate keys, text after the
 * document, invalid UTF-8 and \u0000, the nesting limit, the scenario name's
 * rule, the documented forms of durations and rates, empty --set steps, and
 * limits named in the messages that enforce them. Then the hints for habits
 * from other tools (issue 15): percents, bare seconds, retries for attempts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mockserver/fault.h"
#include "scenario/scenario.h"
#include "tests/unit/helpers.h"
#include "util/utf8.h"

#define TRAFFIC "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"10/s\"}}]"
#define PROVIDERS "\"providers\":[{\"name\":\"openai\"},{\"name\":\"anthropic\"}]"
/* A whole scenario but its name; BODY goes before the closing brace. */
#define DOC(BODY) "\"duration\":\"1m\"," TRAFFIC "," PROVIDERS BODY "}"
#define NAMED(NAME, BODY) "{\"name\":\"" NAME "\"," DOC(BODY)

/* Parse text (len bytes) with --set overrides; the error when it fails (NULL when it loads). */
static int parse_sets(const char *text, size_t len, const char *const *sets, size_t n,
                      sim_error *err) {
    sim_scenario *sc = NULL;
    int rc = scn_parse(text, len, "bad.json", sets, n, NULL, &sc, err);
    if (rc == FB_OK) scn_free(sc);
    return rc;
}

/* text fails with exit-code class FB_EPARSE/FB_EINVAL at `path`, its message holding `fragment`. */
static void bad_len(const char *text, size_t len, const char *path, const char *fragment) {
    sim_error err;
    if (parse_sets(text, len, NULL, 0, &err) == FB_OK) fail_msg("accepted: %s", text);
    assert_string_equal(err.file, "bad.json");
    if (strcmp(err.path, path) != 0)
        fail_msg("path '%s', expected '%s' (%s)", err.path, path, err.msg);
    if (strstr(err.msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, fragment);
}

static void bad(const char *text, const char *path, const char *fragment) {
    bad_len(text, strlen(text), path, fragment);
}

static void loads(const char *text) {
    sim_error err;
    if (parse_sets(text, strlen(text), NULL, 0, &err) != FB_OK)
        fail_msg("rejected: %s: %s: %s", text, err.path, err.msg);
}

/* A --set that fails, with a fragment of its message (--set errors carry no path). */
static void bad_set(const char *set, const char *fragment) {
    static const char text[] = NAMED("m", "");
    sim_error err;
    const char *sets[] = {set};
    if (parse_sets(text, strlen(text), sets, 1, &err) == FB_OK) fail_msg("accepted --set %s", set);
    if (strstr(err.msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, fragment);
}

static void good_set(const char *set) {
    static const char text[] = NAMED("m", "");
    sim_error err;
    const char *sets[] = {set};
    if (parse_sets(text, strlen(text), sets, 1, &err) != FB_OK)
        fail_msg("rejected --set %s: %s: %s", set, err.path, err.msg);
}

/* ---- duplicate keys ---- */

/* Found by tests/fuzz/fuzz_scenario.c: an empty first key, then no ':' (the path was built from
   a NULL arena: undefined behaviour under UBSan). */
static void strict_empty_first_key_without_colon_is_invalid_json(void **state) {
    (void)state;
    bad("{\"\",\"a\":1}", "", "invalid JSON at line 1, column 4");
}

static void utf8_fix_replaces_invalid_bytes_only(void **state) {
    (void)state;
    char s[] = "ok \xc3\xa9 \xff\xfe cut \xe2\x82";
    util_utf8_fix(s);
    assert_string_equal(s, "ok \xc3\xa9 ?? cut ??");
}

static void strict_duplicate_key_names_both_places(void **state) {
    (void)state;
    /* cJSON reads the first duration (10s), Python's json the last (1000d) */
    bad("{\"name\":\"m\",\"duration\":\"10s\"," TRAFFIC "," PROVIDERS
        ",\n  \"duration\":\"1000d\"}",
        "duration", "duplicate key 'duration' at line 2, column 3 (first at line 1, column 13)");
}

static void strict_duplicate_key_deep_inside_names_its_path(void **state) {
    (void)state;
    bad(NAMED("m", ",\"pods\":{\"count\":2,\"count\":3}"), "pods.count", "duplicate key 'count'");
    bad("{\"name\":\"m\",\"duration\":\"1m\"," TRAFFIC
        ",\"providers\":[{\"name\":\"a\"},{\"name\":\"b\",\"name\":\"c\"}]}",
        "providers[1].name", "duplicate key 'name'");
}

static void strict_duplicate_key_written_with_an_escape_is_found(void **state) {
    (void)state;
    bad(NAMED("m", ",\"pods\":{\"count\":2,\"\\u0063ount\":3}"), "pods.count",
        "duplicate key 'count'");
}

static void strict_same_key_in_two_objects_loads(void **state) {
    (void)state;
    /* every provider has a "name": one per object is no duplicate */
    loads(NAMED("m", ",\"pods\":{\"count\":2},\"slo\":{\"latency\":\"2s\"}"));
}

static void strict_many_keys_in_one_object_are_checked(void **state) {
    (void)state;
    /* the table grows past its first sizes; the duplicate is the last key */
    size_t cap = 64 * 1024, n = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    n += (size_t)snprintf(t + n, cap - n, "{\"description\":{");
    for (int i = 0; i < 2000; i++) n += (size_t)snprintf(t + n, cap - n, "\"k%d\":%d,", i, i);
    n += (size_t)snprintf(t + n, cap - n, "\"k1999\":0}}");
    bad_len(t, n, "description.k1999", "duplicate key 'k1999'");
    free(t);
}

/* ---- after the document ---- */

static void strict_text_after_the_document_is_rejected(void **state) {
    (void)state;
    static const char doc[] = NAMED("m", "");
    char t[2 * sizeof doc + 16];
    snprintf(t, sizeof t, "%s xyz", doc);
    bad(t, "", "unexpected text after the JSON document at line 1, column");
    snprintf(t, sizeof t, "%s\n%s", doc, doc);
    bad(t, "", "unexpected text after the JSON document at line 2, column 1");
    snprintf(t, sizeof t, "%s\n\t \r\n", doc);
    loads(t); /* blanks are fine */
}

static void strict_nul_byte_after_the_document_is_rejected(void **state) {
    (void)state;
    static const char doc[] = NAMED("m", "") "\n";
    char t[sizeof doc + 1];
    memcpy(t, doc, sizeof doc); /* with its terminating NUL, counted in the length */
    bad_len(t, sizeof doc, "", "unexpected text after the JSON document at line 2, column 1");
}

/* ---- text: UTF-8, NUL, control characters ---- */

static void strict_invalid_utf8_names_its_byte_offset(void **state) {
    (void)state;
    /* {"name":"m","description":"a\xff... : the 0xff is byte 28 */
    bad(NAMED("m\",\"description\":\"a\xff", ""), "description", "invalid UTF-8 at byte 28");
    bad(NAMED("m\",\"description\":\"\xc0\xaf", ""), "description", "invalid UTF-8 at byte 27");
    bad(NAMED("m\",\"description\":\"\xed\xa0\x80", ""), "description", "invalid UTF-8");
    bad(NAMED("m\",\"description\":\"\xf4\x90\x80\x80", ""), "description", "invalid UTF-8");
    bad(NAMED("m\",\"description\":\"\xe2\x82", ""), "description", "invalid UTF-8");
}

static void strict_valid_utf8_and_escapes_load(void **state) {
    (void)state;
    loads(NAMED("m\",\"description\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \\ud83d\\ude00 "
                "\\u00e9\\t\\n\\\"\\\\\\/",
                ""));
}

static void strict_escaped_nul_is_rejected(void **state) {
    (void)state;
    /* cJSON would cut the string at it */
    bad(NAMED("m\",\"description\":\"ab\\u0000cd", ""), "description", "\\u0000 at byte 29");
}

static void strict_lone_surrogates_are_rejected(void **state) {
    (void)state;
    bad(NAMED("m\",\"description\":\"\\ud800x", ""), "description", "a high surrogate without");
    bad(NAMED("m\",\"description\":\"\\udc00", ""), "description", "a low surrogate without");
}

static void strict_raw_control_character_is_rejected(void **state) {
    (void)state;
    bad(NAMED("m\",\"description\":\"a\tb", ""), "description",
        "control character 0x09 at byte 28");
}

/* ---- depth ---- */

/* A description nested `levels` deep in arrays. */
static char *nested(int levels) {
    char *t = malloc((size_t)levels * 2 + 64);
    assert_non_null(t);
    int n = sprintf(t, "{\"name\":\"m\",\"description\":");
    for (int i = 0; i < levels - 1; i++) t[n++] = '[';
    for (int i = 0; i < levels - 1; i++) t[n++] = ']';
    strcpy(t + n, "}");
    return t;
}

static void strict_nesting_limit_is_named(void **state) {
    (void)state;
    char *t = nested(1001); /* the object and 1000 arrays */
    bad(t, "description[0][0][0][0][0][0][0][0][0][0...",
        "nested deeper than 1000 levels (the limit)");
    free(t);
    t = nested(1000); /* at the limit: read, then rejected for what it is */
    bad(t, "description", "expected a string, got an array");
    free(t);
}

/* ---- numbers cJSON reads and JSON does not have ---- */

static void strict_leading_zero_is_invalid_json(void **state) {
    (void)state;
    bad(NAMED("m", ",\"pods\":{\"count\":02}"), "pods.count", "invalid JSON at line 1, column");
}

/* ---- the scenario name ---- */

static void strict_name_that_would_be_a_path_is_rejected(void **state) {
    (void)state;
    static const char *const names[] = {"..", ".",       "",     "a/b", "../x",
                                        "-x", ".hidden", "a..b", "_x"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char t[512];
        snprintf(t, sizeof t, NAMED("%s", ""), names[i]);
        bad(t, "name", "a scenario name starts with a letter or digit");
    }
}

static void strict_names_of_the_library_load(void **state) {
    (void)state;
    loads(NAMED("retry-storm", ""));
    loads(NAMED("openai-2024-12-11", ""));
    loads(NAMED("v1.2_b", ""));
    loads(NAMED("9lives", ""));
}

/* ---- durations and rates: the documented forms only (the schema's grammar) ---- */

static void strict_durations_are_decimal_with_a_unit(void **state) {
    (void)state;
    fb_time_us d;
    static const char *const wrong[] = {"0x10s", "0X1p4s", "infs", "nans", "+5s", ".s",    "e3s",
                                        "1e",    "1e+s",   "5",    " 5s",  "5s ", "1.5.2s"};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++)
        if (scn_parse_duration(wrong[i], &d) != FB_EPARSE) fail_msg("accepted \"%s\"", wrong[i]);
    assert_int_equal(scn_parse_duration("0.25s", &d), FB_OK);
    assert_int_equal(d, 250 * MS);
    assert_int_equal(scn_parse_duration("007ms", &d), FB_OK);
    assert_int_equal(d, 7 * MS);
    /* the schema's forms: a bare point on either side, an exponent */
    assert_int_equal(scn_parse_duration(".5s", &d), FB_OK);
    assert_int_equal(d, 500 * MS);
    assert_int_equal(scn_parse_duration("5.s", &d), FB_OK);
    assert_int_equal(d, 5 * S);
    assert_int_equal(scn_parse_duration("1e4ms", &d), FB_OK);
    assert_int_equal(d, 10 * S);
    assert_int_equal(scn_parse_duration("2.5E-1s", &d), FB_OK);
    assert_int_equal(d, 250 * MS);
    assert_int_equal(scn_parse_duration("99999999999999999999h", &d), FB_ERANGE);
    bad(NAMED("m", ",\"slo\":{\"latency\":\"0x10s\"}"), "slo.latency",
        "cannot read duration \"0x10s\"");
}

static void strict_rates_are_decimal(void **state) {
    (void)state;
    double r;
    assert_int_equal(scn_parse_rate("0x10/s", &r), FB_EPARSE);
    assert_int_equal(scn_parse_rate("0x1p4/s", &r), FB_EPARSE);
    assert_int_equal(scn_parse_rate("nan/s", &r), FB_EPARSE);
    assert_int_equal(scn_parse_rate("inf", &r), FB_EPARSE);
    assert_int_equal(scn_parse_rate("1.5/s", &r), FB_OK);
    assert_true(r == 1.5);
}

/* ---- --set ---- */

static void strict_set_with_an_empty_step_is_rejected(void **state) {
    (void)state;
    bad_set("pods..count=3", "an empty step in the path 'pods..count'");
    bad_set(".pods.count=3", "an empty step");
    bad_set("pods.count.=3", "an empty step");
    bad_set("+variants..x={}", "an empty step");
    good_set("pods.count=3");
}

static void strict_set_values_are_read_as_strictly(void **state) {
    (void)state;
    bad_set("pods={\"count\":1,\"count\":2}", "the value: count: duplicate key 'count'");
    bad_set("pods={\"count\":1} x", "the value opens an object or an array but is not JSON");
    bad_set("pods={\"count\":1", "the value opens an object or an array but is not JSON");
    bad_set("description=\"a\\u0000b\"", "\\u0000 at byte 2");
    bad_set("description=a\xff", "invalid UTF-8 at byte 1 of the value");
    good_set("duration=10s"); /* not JSON: a string, as before */
    good_set("pods={\"count\":2}");
}

/* ---- the other readers of JSON text ---- */

static void strict_fault_scripts_and_distributions_are_strict(void **state) {
    (void)state;
    sim_fault f[4];
    uint32_t n;
    sim_error err;
    static const char script[] = "{\"faults\":[{\"at\":\"1s\",\"at\":\"2s\",\"outage\":{}}]}";
    assert_int_not_equal(scn_faults_parse(script, strlen(script), "f.json", f, 4, &n, &err), FB_OK);
    assert_string_equal(err.path, "faults[0].at");
    assert_non_null(strstr(err.msg, "duplicate key 'at'"));
    sim_dist d;
    static const char dist[] = "{\"constant\": 3} 4";
    assert_int_not_equal(scn_dist_parse(dist, strlen(dist), "tokens", false, &d, &err), FB_OK);
    assert_non_null(strstr(err.msg, "unexpected text after the JSON document"));
}

/* ---- limits named where they are enforced (the mock's specs) ---- */

static void strict_mock_spec_limits_are_named(void **state) {
    (void)state;
    mock_action a;
    mock_parse_error e;
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("tokens-100000000", &a, &e), FB_EPARSE);
    assert_non_null(strstr(e.msg, "[0, 1000000]"));
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("429-retry-after-0x10", &a, &e), FB_EPARSE);
    assert_non_null(strstr(e.msg, "[0, 1000000000]"));
    mock_action_init(&a);
    assert_int_equal(mock_spec_parse("tokens-1000000", &a, &e), FB_OK);
    assert_int_equal(a.tokens, 1000000);
}

/* ---- hints for habits from other tools (issue 15) ---- */

static void hint_percent_where_a_fraction_is_expected(void **state) {
    (void)state;
    bad(NAMED("m", ",\"policy\":{\"breaker\":{\"failure_rate\":50,\"window\":\"10s\"}}"),
        "policy.breaker.failure_rate",
        "50 is out of range [1e-06, 1] (rates and shares are fractions: 50% is 0.5)");
    bad(NAMED("m", ",\"spillover\":{\"error_margin\":1.5}"), "spillover.error_margin",
        "1.5% is 0.015");
    /* beyond 100 it cannot be a percent: the range alone */
    bad(NAMED("m", ",\"spillover\":{\"error_margin\":150}"), "spillover.error_margin",
        "150 is out of range [0, 1]");
}

/* The notes of a scenario that loads: how many, which are warnings (bit i: notes[i]). */
static void notes_of(const char *text, uint32_t *count, uint64_t *warnings, char *first,
                     size_t len) {
    sim_scenario *sc = NULL;
    sim_error err;
    if (scn_parse(text, strlen(text), "w.json", NULL, 0, NULL, &sc, &err) != FB_OK)
        fail_msg("rejected: %s: %s", err.path, err.msg);
    *count = sc->note_count;
    *warnings = sc->warning_notes;
    snprintf(first, len, "%s", sc->note_count ? sc->notes[0] : "");
    scn_free(sc);
}

/* opossum accepts errorThresholdPercentage: 0.5 (half a percent): so does fusebox, with a
   warning that fusebox run --strict makes an error (issue 22). */
static void hint_fraction_where_a_percentage_is_expected_warns(void **state) {
    (void)state;
    uint32_t n;
    uint64_t w;
    char first[SIM_NOTE_LEN];
    notes_of(NAMED("m", ",\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",\"preset\":"
                        "\"opossum\",\"errorThresholdPercentage\":0.5}]}}"),
             &n, &w, first, sizeof first);
    assert_int_equal(n, 1);
    assert_true(w == 1);
    assert_string_equal(first, "variants.v.layers[0].errorThresholdPercentage: opossum's "
                               "errorThresholdPercentage is a percentage: 0.5 means half a "
                               "percent; did you mean 50?");
    notes_of(NAMED("m", ",\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",\"preset\":"
                        "\"opossum\",\"errorThresholdPercentage\":0.25}]}}"),
             &n, &w, first, sizeof first);
    assert_non_null(strstr(first, "0.25 means 0.25 of a percent; did you mean 25?"));
    /* 50, 1 and 0 are percentages as meant: no warning */
    notes_of(NAMED("m",
                   ",\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",\"preset\":"
                   "\"opossum\",\"errorThresholdPercentage\":50},{\"name\":\"y\","
                   "\"preset\":\"opossum\",\"errorThresholdPercentage\":1},"
                   "{\"name\":\"z\",\"preset\":\"opossum\",\"errorThresholdPercentage\":0}]}}"),
             &n, &w, first, sizeof first);
    assert_int_equal(n, 0);
    assert_true(w == 0);
}

static void hint_bare_seconds_where_a_duration_is_expected(void **state) {
    (void)state;
    bad(NAMED("m", ",\"pods\":{\"request_timeout\":30}"), "pods.request_timeout",
        "got a number (durations are strings with a unit: \"30s\" for 30 seconds, \"30ms\" for "
        "30 milliseconds)");
    bad(NAMED("m", ",\"slo\":{\"latency\":\"5\"}"), "slo.latency",
        "cannot read duration \"5\": a duration needs a unit (\"5s\" for seconds");
}

static void hint_retries_are_attempts(void **state) {
    (void)state;
    bad(NAMED("m", ",\"policy\":{\"retry\":{\"max_retries\":3}}"), "policy.retry.max_retries",
        "unknown key 'max_retries' (fusebox counts attempts, the first call included: "
        "\"attempts\": 4)");
    bad(NAMED("m", ",\"policy\":{\"retry\":{\"max_attempts\":3}}"), "policy.retry.max_attempts",
        "the key is \"attempts\" here");
    bad(NAMED("m", ",\"policy\":{\"retries\":2}"), "policy.retries",
        "\"retry\": {\"attempts\": 3}");
    /* a hedge's max_attempts is its own key */
    sim_error err;
    static const char hedge[] = NAMED("m", ",\"policy\":{\"hedging\":{\"max_attempts\":2}}");
    if (parse_sets(hedge, strlen(hedge), NULL, 0, &err) != FB_OK)
        assert_null(strstr(err.msg, "the key is \"attempts\""));
}

/* ---- every error in one pass (issue 15) ---- */

static void all_errors_lists_every_unknown_key_then_the_first_other(void **state) {
    (void)state;
    static const char text[] =
        "{\"name\":\"m\",\"durration\":\"1m\",\"duration\":\"1m\"," TRAFFIC
        ",\"providers\":[{\"name\":\"openai\",\"capacity\":{\"concurency\":5}}],"
        "\"pods\":{\"count\":2,\"wokers\":3,\"queue\":\"10\"},\"slo\":{\"latency\":5}}";
    sim_errors all;
    sim_error one;
    sim_scenario *sc = NULL;
    int rc = scn_check_all(text, strlen(text), "bad.json", NULL, 0, &all);
    assert_int_equal(rc, scn_parse(text, strlen(text), "bad.json", NULL, 0, NULL, &sc, &one));
    assert_null(sc);
    assert_int_equal(all.count, 4);
    assert_false(all.more);
    /* the first is the loader's error, word for word */
    assert_string_equal(all.e[0].file, one.file);
    assert_string_equal(all.e[0].path, one.path);
    assert_string_equal(all.e[0].msg, one.msg);
    assert_string_equal(all.e[0].path, "durration");
    assert_string_equal(all.e[1].path, "providers[0].capacity.concurency");
    assert_non_null(strstr(all.e[1].msg, "did you mean 'concurrency'?"));
    assert_string_equal(all.e[2].path, "pods.wokers");
    /* the first error of another kind ends the list: slo.latency is not read over a default */
    assert_string_equal(all.e[3].path, "pods.queue");
    assert_non_null(strstr(all.e[3].msg, "expected an integer"));
    assert_string_equal(all.e[3].file, "bad.json");
}

static void all_errors_of_a_good_file_are_none(void **state) {
    (void)state;
    static const char text[] = NAMED("m", "");
    sim_errors all;
    assert_int_equal(scn_check_all(text, strlen(text), "ok.json", NULL, 0, &all), FB_OK);
    assert_int_equal(all.count, 0);
}

static void all_errors_stop_at_their_cap(void **state) {
    (void)state;
    char text[4096];
    int n = snprintf(text, sizeof text, "{\"name\":\"m\",\"pods\":{");
    for (int i = 0; i < SIM_ERRORS_MAX + 5; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "\"x%d\":1,", i);
    snprintf(text + n, sizeof text - (size_t)n, "\"count\":1}," DOC(""));
    sim_errors all;
    assert_int_not_equal(scn_check_all(text, strlen(text), "bad.json", NULL, 0, &all), FB_OK);
    assert_int_equal(all.count, SIM_ERRORS_MAX);
    assert_true(all.more);
    assert_string_equal(all.e[SIM_ERRORS_MAX - 1].path, "pods.x19");
}

static void all_errors_of_unreadable_text_are_one(void **state) {
    (void)state;
    static const char text[] = "{\"name\":\"m\",\"name\":\"n\",\"x\":1}";
    sim_errors all;
    assert_int_equal(scn_check_all(text, strlen(text), "bad.json", NULL, 0, &all), FB_EPARSE);
    assert_int_equal(all.count, 1);
    assert_non_null(strstr(all.e[0].msg, "duplicate key 'name'"));
    /* a --set that fails is the one error too */
    static const char good[] = NAMED("m", "");
    const char *sets[] = {"pods..count=1"};
    assert_int_not_equal(scn_check_all(good, strlen(good), "ok.json", sets, 1, &all), FB_OK);
    assert_int_equal(all.count, 1);
    assert_non_null(strstr(all.e[0].msg, "an empty step"));
}

static void all_errors_follow_keys_with_dots_in_provider_names(void **state) {
    (void)state;
    static const char text[] =
        "{\"name\":\"m\",\"duration\":\"1m\"," TRAFFIC
        ",\"providers\":[{\"name\":\"api.openai\"},{\"name\":\"openai\"}],\"variants\":{"
        "\"a\":{\"concurrency_limit\":{\"api.openai\":{\"algorithm\":\"fixed\",\"limit\":2,"
        "\"bogus\":1}}},\"b\":{\"retry\":{\"atempts\":2}}}}";
    sim_errors all;
    assert_int_not_equal(scn_check_all(text, strlen(text), "bad.json", NULL, 0, &all), FB_OK);
    assert_int_equal(all.count, 2);
    assert_string_equal(all.e[0].path, "variants.a.concurrency_limit.api.openai.bogus");
    assert_string_equal(all.e[1].path, "variants.b.retry.atempts");
}

static void all_errors_in_the_policy_are_its_own(void **state) {
    (void)state;
    /* the policy is merged into each variant: its unknown keys are named as the loader names
     * them (in the first variant), once each */
    static const char text[] = NAMED(
        "m",
        ",\"policy\":{\"retry\":{\"atempts\":2},\"breakr\":{}},\"variants\":{\"a\":{},\"b\":{}}");
    sim_errors all;
    assert_int_not_equal(scn_check_all(text, strlen(text), "bad.json", NULL, 0, &all), FB_OK);
    assert_int_equal(all.count, 2);
    assert_string_equal(all.e[0].path, "variants.a.breakr");
    assert_string_equal(all.e[1].path, "variants.a.retry.atempts");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strict_empty_first_key_without_colon_is_invalid_json),
        cmocka_unit_test(utf8_fix_replaces_invalid_bytes_only),
        cmocka_unit_test(strict_duplicate_key_names_both_places),
        cmocka_unit_test(strict_duplicate_key_deep_inside_names_its_path),
        cmocka_unit_test(strict_duplicate_key_written_with_an_escape_is_found),
        cmocka_unit_test(strict_same_key_in_two_objects_loads),
        cmocka_unit_test(strict_many_keys_in_one_object_are_checked),
        cmocka_unit_test(strict_text_after_the_document_is_rejected),
        cmocka_unit_test(strict_nul_byte_after_the_document_is_rejected),
        cmocka_unit_test(strict_invalid_utf8_names_its_byte_offset),
        cmocka_unit_test(strict_valid_utf8_and_escapes_load),
        cmocka_unit_test(strict_escaped_nul_is_rejected),
        cmocka_unit_test(strict_lone_surrogates_are_rejected),
        cmocka_unit_test(strict_raw_control_character_is_rejected),
        cmocka_unit_test(strict_nesting_limit_is_named),
        cmocka_unit_test(strict_leading_zero_is_invalid_json),
        cmocka_unit_test(strict_name_that_would_be_a_path_is_rejected),
        cmocka_unit_test(strict_names_of_the_library_load),
        cmocka_unit_test(strict_durations_are_decimal_with_a_unit),
        cmocka_unit_test(strict_rates_are_decimal),
        cmocka_unit_test(strict_set_with_an_empty_step_is_rejected),
        cmocka_unit_test(strict_set_values_are_read_as_strictly),
        cmocka_unit_test(strict_fault_scripts_and_distributions_are_strict),
        cmocka_unit_test(strict_mock_spec_limits_are_named),
        cmocka_unit_test(hint_percent_where_a_fraction_is_expected),
        cmocka_unit_test(hint_fraction_where_a_percentage_is_expected_warns),
        cmocka_unit_test(hint_bare_seconds_where_a_duration_is_expected),
        cmocka_unit_test(hint_retries_are_attempts),
        cmocka_unit_test(all_errors_lists_every_unknown_key_then_the_first_other),
        cmocka_unit_test(all_errors_of_a_good_file_are_none),
        cmocka_unit_test(all_errors_stop_at_their_cap),
        cmocka_unit_test(all_errors_of_unreadable_text_are_one),
        cmocka_unit_test(all_errors_follow_keys_with_dots_in_provider_names),
        cmocka_unit_test(all_errors_in_the_policy_are_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
