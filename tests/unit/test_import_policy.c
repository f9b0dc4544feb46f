/*
 * test_import_policy.c - the importers' rules on small files (import/policy.h):
 * how LiteLLM's Router combines router_settings with litellm_settings
 * (router.py f292d1ae, Router.__init__), PyYAML's scalars, the allowed-fails
 * rule (cooldown_handlers.py _is_allowed_fails_set_on_router), and Envoy's
 * route and virtual-host retry policies (route_components.proto).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "core/fb.h"
#include "import/policy.h"

typedef struct imported {
    cJSON *doc;
    imp_result r;
} imported;

/* Import `text` as `kind`; the test fails when it does not import. */
static imported import(const char *kind, const char *text) {
    imp_node *root = NULL;
    imp_error err;
    imported out;
    memset(&out, 0, sizeof out);
    if (imp_yaml_parse(text, strlen(text), "t.yaml", &root, &err) != FB_OK)
        fail_msg("%d:%d: %s", err.line, err.col, err.msg);
    if (imp_policy(kind, root, "t.yaml", &out.r, &err) != FB_OK)
        fail_msg("%d:%d: %s", err.line, err.col, err.msg);
    out.doc = cJSON_Parse(out.r.json);
    imp_node_free(root);
    return out;
}

static void done(imported *im) {
    cJSON_Delete(im->doc);
    imp_result_free(&im->r);
}

/* The layer's parameter `key` as compact JSON ("" when absent), in a static buffer. */
static const char *param(const imported *im, const char *layer, const char *key) {
    static char buf[512];
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(im->doc, "layers"), layer);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(l, key);
    char *s = v ? cJSON_PrintUnformatted(v) : NULL;
    snprintf(buf, sizeof buf, "%s", s ? s : "");
    free(s);
    return buf;
}

/* The note at path, or NULL. */
static const imp_note *note_at(const imported *im, const char *path) {
    for (size_t i = 0; i < im->r.note_count; i++)
        if (strcmp(im->r.notes[i].path, path) == 0) return &im->r.notes[i];
    return NULL;
}

/*
 * resilience4j: CommonCircuitBreakerConfigurationProperties and CommonRetryConfigurationProperties
 * each read their own keys; the Retry's ignoreExceptions is the preset's retryIgnoreExceptions;
 * the breaker's exponential open-period keys are noted, not read as the Retry's.
 */
static void r4j_sections_keep_their_keys(void **state) {
    (void)state;
    imported im =
        import("resilience4j", "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n"
                               "        exponentialBackoffMultiplier: 4\n"
                               "        exponential-max-wait-duration-in-open-state: 5m\n"
                               "        ignoreExceptions: [HttpClientErrorException]\n"
                               "        maxAttempts: 9\n"
                               "  retry:\n    instances:\n      a:\n        maxAttempts: 2\n"
                               "        ignoreExceptions: java.net.ConnectException, IOException\n"
                               "        slidingWindowSize: 3\n");
    assert_string_equal(param(&im, "a", "exponentialBackoffMultiplier"), "");
    assert_string_equal(param(&im, "a", "maxAttempts"), "2");
    assert_string_equal(param(&im, "a", "slidingWindowSize"), "");
    assert_string_equal(param(&im, "a", "ignoreExceptions"), "[\"HttpClientErrorException\"]");
    assert_string_equal(param(&im, "a", "retryIgnoreExceptions"),
                        "[\"java.net.ConnectException\",\"IOException\"]");
    const imp_note *n = note_at(
        &im, "resilience4j.circuitbreaker.instances.a.exponential-max-wait-duration-in-open-state");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "growing open period"));
    assert_non_null(strstr(note_at(&im, "resilience4j.circuitbreaker.instances.a.maxAttempts")->why,
                           "not a CircuitBreaker key"));
    assert_non_null(strstr(note_at(&im, "resilience4j.retry.instances.a.slidingWindowSize")->why,
                           "not a Retry key"));
    done(&im);
}

/* A Java exception class fusebox cannot place is an error naming it and the known ones. */
static void r4j_unknown_exception_is_an_error(void **state) {
    (void)state;
    const char *text = "resilience4j:\n  retry:\n    instances:\n      a:\n"
                       "        retryExceptions:\n          - java.io.IOException\n"
                       "          - com.acme.Boom\n";
    imp_node *root = NULL;
    imp_error err;
    imp_result r;
    assert_int_equal(imp_yaml_parse(text, strlen(text), "t.yaml", &root, &err), FB_OK);
    assert_int_equal(imp_policy("resilience4j", root, "t.yaml", &r, &err), FB_EINVAL);
    assert_int_equal(err.line, 7);
    assert_non_null(strstr(err.msg, "resilience4j.retry.instances.a.retryExceptions: fusebox "
                                    "cannot place 'com.acme.Boom'; it knows Throwable"));
    assert_non_null(strstr(err.msg, "CallNotPermittedException"));
    imp_result_free(&r);
    imp_node_free(root);
}

#define ML "model_list:\n  - model_name: g\n    litellm_params: {model: gpt-4o}\n"

/* Router.__init__: timeout or request_timeout; fallbacks or fallbacks (num_retries: below). */
static void litellm_router_settings_over_litellm_settings(void **state) {
    (void)state;
    imported im = import("litellm", ML "router_settings:\n  num_retries: 0\n  timeout: 0\n"
                                       "  fallbacks: []\nlitellm_settings:\n  num_retries: 5\n"
                                       "  request_timeout: 600\n  fallbacks: [{g: [h]}]\n");
    assert_string_equal(param(&im, "litellm", "num_retries"), "5"); /* litellm's, when set */
    assert_string_equal(param(&im, "litellm", "timeout"), "600");   /* 0 is falsy */
    assert_string_equal(param(&im, "litellm", "fallbacks"), "[{\"g\":[\"h\"]}]");
    const imp_note *n = note_at(&im, "router_settings.num_retries");
    assert_non_null(n);
    assert_int_equal(n->line, 5);
    assert_non_null(strstr(n->why, "superseded by litellm_settings.num_retries at line 9"));
    assert_non_null(strstr(note_at(&im, "router_settings.timeout")->why, "falsy"));
    done(&im);
    /* None in router_settings: litellm_settings' value */
    im = import("litellm", ML "router_settings:\n  num_retries: ~\nlitellm_settings:\n"
                              "  num_retries: 5\n");
    assert_string_equal(param(&im, "litellm", "num_retries"), "5");
    done(&im);
}

/*
 * num_retries: a set litellm.num_retries wins over the Router's (utils.py
 * puts it on the exception; async_function_with_retries takes an exception's
 * int num_retries): 4 and 1 are 5 calls. 0 is set too.
 */
static void litellm_settings_num_retries_wins(void **state) {
    (void)state;
    imported im = import("litellm", ML "router_settings:\n  num_retries: 1\n"
                                       "litellm_settings:\n  num_retries: 4\n");
    assert_string_equal(param(&im, "litellm", "num_retries"), "4");
    const imp_note *n = note_at(&im, "router_settings.num_retries");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "superseded by litellm_settings.num_retries at line 7"));
    assert_null(note_at(&im, "litellm_settings.num_retries"));
    done(&im);
    im = import("litellm", ML "router_settings:\n  num_retries: 3\nlitellm_settings:\n"
                              "  num_retries: 0\n");
    assert_string_equal(param(&im, "litellm", "num_retries"), "0");
    done(&im);
    im = import("litellm", ML "router_settings:\n  num_retries: 3\nlitellm_settings:\n"
                              "  num_retries: ~\n");
    assert_string_equal(param(&im, "litellm", "num_retries"), "3");
    done(&im);
}

/*
 * InternalServerErrorRetries / InternalServerErrorAllowedFails: no branch in
 * the Router at f292d1ae (BerriAI/litellm#29283, #37805): noted, not applied.
 */
static void litellm_internal_server_error_keys_have_no_effect(void **state) {
    (void)state;
    imported im =
        import("litellm", ML "router_settings:\n  retry_policy: {InternalServerErrorRetries: 4, "
                             "RateLimitErrorRetries: 1}\n  allowed_fails_policy: "
                             "{InternalServerErrorAllowedFails: 9}\n");
    assert_string_equal(param(&im, "litellm", "retry_policy"), "{\"RateLimitErrorRetries\":1}");
    assert_string_equal(param(&im, "litellm", "allowed_fails_policy"), "{}");
    const imp_note *n = note_at(&im, "router_settings.retry_policy.InternalServerErrorRetries");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "no effect"));
    assert_non_null(strstr(n->why, "a 500 takes num_retries"));
    n = note_at(&im, "router_settings.allowed_fails_policy.InternalServerErrorAllowedFails");
    assert_non_null(n);
    assert_non_null(strstr(n->why, "a 500 takes allowed_fails"));
    done(&im);
}

/* Router arguments only: litellm_settings.retry_after sets a global the Router never reads. */
static void litellm_router_only_settings(void **state) {
    (void)state;
    imported im = import("litellm", ML "router_settings:\n  cooldown_time: 30\n"
                                       "litellm_settings:\n  retry_after: 4\n  cooldown_time: 9\n");
    assert_string_equal(param(&im, "litellm", "cooldown_time"), "30");
    assert_string_equal(param(&im, "litellm", "retry_after"), "");
    assert_non_null(
        strstr(note_at(&im, "litellm_settings.retry_after")->why, "from router_settings only"));
    assert_non_null(note_at(&im, "litellm_settings.cooldown_time"));
    done(&im);
}

/*
 * _is_allowed_fails_set_on_router: the allowed-fails rule with a policy, or
 * a Router value other than litellm.allowed_fails (3 unless litellm_settings).
 */
static void litellm_allowed_fails_rule(void **state) {
    (void)state;
    imported im = import("litellm", ML "litellm_settings:\n  allowed_fails: 5\n");
    assert_string_equal(param(&im, "litellm", "allowed_fails"), ""); /* Router's 5 == litellm's */
    done(&im);
    im = import("litellm", ML "router_settings:\n  allowed_fails: 2\n");
    assert_string_equal(param(&im, "litellm", "allowed_fails"), "2");
    assert_string_equal(param(&im, "litellm", "allowed_fails_policy"), "");
    done(&im);
    im = import("litellm", ML "router_settings:\n  allowed_fails: 3\n");
    assert_string_equal(param(&im, "litellm", "allowed_fails"), ""); /* the default: percentage */
    done(&im);
    im = import("litellm",
                ML "router_settings:\n  allowed_fails_policy: {RateLimitErrorAllowedFails: "
                   "9}\nlitellm_settings:\n  allowed_fails: 5\n");
    assert_string_equal(param(&im, "litellm", "allowed_fails"), "5"); /* the policy's fallback */
    assert_string_equal(param(&im, "litellm", "allowed_fails_policy"),
                        "{\"RateLimitErrorAllowedFails\":9}");
    done(&im);
}

/* yaml.safe_load: YAML 1.1 booleans and integers; a float needs its dot. */
static void litellm_reads_pyyaml_scalars(void **state) {
    (void)state;
    imported im = import("litellm", "model_list:\n  - model_name: g\n    litellm_params:\n"
                                    "      model: gpt-4o\n      rpm: 0x10\n      tpm: 010\n"
                                    "      weight: 1_5\n      cooldown_time: 1.5e+1\n"
                                    "router_settings:\n  disable_cooldowns: on\n"
                                    "  retry_after: 1e3\n  routing_strategy: 'yes'\n");
    assert_string_equal(param(&im, "litellm", "model_list"),
                        "[{\"model_name\":\"g\",\"litellm_params\":{\"model\":\"gpt-4o\","
                        "\"rpm\":16,\"tpm\":8,\"weight\":15,\"cooldown_time\":15}}]");
    assert_string_equal(param(&im, "litellm", "disable_cooldowns"), "true");
    assert_string_equal(param(&im, "litellm", "retry_after"), "\"1e3\""); /* a string in PyYAML */
    assert_string_equal(param(&im, "litellm", "routing_strategy"), "\"yes\"");
    done(&im);
}

/* redis_password and redis_url: present, never copied; model_info keeps its id only. */
static void litellm_secrets_are_placeholders(void **state) {
    (void)state;
    imported im =
        import("litellm", "model_list:\n  - model_name: g\n    litellm_params: {model: x, "
                          "api_key: sk-live-123}\n    model_info: {id: a, mode: chat}\n"
                          "router_settings:\n  redis_url: redis://u:pw@h:1\n"
                          "  redis_password: hunter2\n");
    assert_null(strstr(im.r.json, "sk-live-123"));
    assert_null(strstr(im.r.json, "hunter2"));
    assert_null(strstr(im.r.json, "pw@h"));
    assert_string_equal(param(&im, "litellm", "redis_password"), "\"<secret: not copied>\"");
    assert_string_equal(param(&im, "litellm", "redis_url"), "\"<secret: not copied>\"");
    const imp_note *n = note_at(&im, "model_list[0].litellm_params.api_key");
    assert_non_null(n);
    assert_int_equal(n->line, 3);
    assert_int_equal(n->col, 32);
    assert_non_null(note_at(&im, "model_list[0].model_info.mode"));
    for (size_t i = 0; i < im.r.note_count; i++) assert_null(strstr(im.r.notes[i].why, "sk-live"));
    done(&im);
}

/* A route's retry_policy wins whole over the virtual host's; a route without one takes it. */
static void envoy_route_and_virtual_host_retry_policies(void **state) {
    (void)state;
    imported im = import("envoy", "virtual_hosts:\n- name: v\n  retry_policy: {retry_on: 5xx, "
                                  "num_retries: 4, per_try_timeout: 2s}\n  routes:\n"
                                  "  - route: {cluster: a}\n"
                                  "  - route: {cluster: b, retry_policy: {retry_on: reset}}\n"
                                  "  - route: {cluster: a, timeout: 1s}\n");
    assert_string_equal(param(&im, "a", "num_retries"), "4");
    assert_string_equal(param(&im, "a", "per_try_timeout"), "\"2s\"");
    assert_string_equal(param(&im, "a", "timeout"), ""); /* the second route to a: not read */
    assert_string_equal(param(&im, "b", "retry_on"), "\"reset\"");
    assert_string_equal(param(&im, "b", "num_retries"), ""); /* nothing inherited */
    assert_non_null(strstr(note_at(&im, "virtual_hosts[0].routes[2].route.cluster")->why,
                           "another route to a"));
    done(&im);
}

/* circuit_breakers: the DEFAULT priority's thresholds, flat; HIGH noted. */
static void envoy_thresholds_by_priority(void **state) {
    (void)state;
    imported im = import("envoy", "name: c\nconnect_timeout: 1s\ncircuit_breakers:\n  thresholds:\n"
                                  "  - {priority: HIGH, max_retries: 1}\n"
                                  "  - {max_retries: 7, max_requests: 9, retry_budget: "
                                  "{budget_percent: {value: 25}, min_retry_concurrency: 2}}\n");
    assert_string_equal(param(&im, "c", "max_retries"), "7");
    assert_string_equal(param(&im, "c", "retry_budget"),
                        "{\"budget_percent\":{\"value\":25},\"min_retry_concurrency\":2}");
    assert_non_null(note_at(&im, "circuit_breakers.thresholds[0]"));
    assert_non_null(note_at(&im, "circuit_breakers.thresholds[1].max_requests"));
    assert_non_null(note_at(&im, "connect_timeout"));
    done(&im);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(r4j_sections_keep_their_keys),
        cmocka_unit_test(r4j_unknown_exception_is_an_error),
        cmocka_unit_test(litellm_router_settings_over_litellm_settings),
        cmocka_unit_test(litellm_settings_num_retries_wins),
        cmocka_unit_test(litellm_internal_server_error_keys_have_no_effect),
        cmocka_unit_test(litellm_router_only_settings),
        cmocka_unit_test(litellm_allowed_fails_rule),
        cmocka_unit_test(litellm_reads_pyyaml_scalars),
        cmocka_unit_test(litellm_secrets_are_placeholders),
        cmocka_unit_test(envoy_route_and_virtual_host_retry_policies),
        cmocka_unit_test(envoy_thresholds_by_priority),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
