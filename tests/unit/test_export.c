/*
 * test_export.c - export-policy's round trip (import/export.h): for every kind
 * and every parameter of its preset (each key of an object parameter alone
 * too), a layer giving that key a value other than the library's default is
 * written as the library's YAML, read back by import-policy (import/policy.h)
 * and compared with the layer. A parameter added to a preset later fails here
 * until export.c's table has its row.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
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
#include "import/export.h"
#include "import/policy.h"
#include "scenario/preset.h"

/* A number in [min, max] that is not the default (the first of a few that fit). */
static double number_for(const sim_param *p) {
    double d = p->def_doc ? atof(p->def_doc) : NAN;
    const double tries[] = {7.25, p->lo + 2, p->lo + 1, p->hi};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        double v = tries[i];
        if (p->notation == SIM_PK_COUNT && v != floor(v)) continue;
        if (v >= p->lo && (p->hi <= p->lo || v <= p->hi) && v != d) return v;
    }
    return p->lo;
}

/* A value of parameter p (its library's form) other than the default. */
static cJSON *value_for(const sim_preset *pre, const sim_param *p) {
    const char *n = p->name;
    switch (p->notation) {
    case SIM_PK_COUNT:
    case SIM_PK_NUMBER:
    case SIM_PK_PERCENT:
    case SIM_PK_FRACTION:
    case SIM_PK_SECONDS:
    case SIM_PK_MILLIS:
        return cJSON_CreateNumber(number_for(p));
    case SIM_PK_DURATION:
        return cJSON_CreateString("7s");
    case SIM_PK_BOOL:
        return cJSON_CreateBool(!(p->def_doc && strcmp(p->def_doc, "true") == 0));
    case SIM_PK_WORD:
        return cJSON_CreateString(p->names[1]);
    case SIM_PK_CSV: {
        char csv[128];
        snprintf(csv, sizeof csv, "%s,%s", p->names[0], p->names[2]);
        return cJSON_CreateString(csv);
    }
    case SIM_PK_STATUSES:
        return cJSON_Parse("[503, 429]");
    case SIM_PK_WORDS: /* resilience4j's exception lists name Java classes */
        return strstr(n, "Exceptions")
                   ? cJSON_Parse("[\"org.springframework.web.client.HttpServerErrorException\"]")
                   : cJSON_Parse("[\"openai\"]");
    case SIM_PK_PROTO_DURATION:
        return cJSON_CreateString("0.25s");
    case SIM_PK_PROTO_PERCENT:
        return cJSON_Parse("{\"value\": 25}");
    case SIM_PK_OBJECT:
        return cJSON_CreateObject();
    default:
        break;
    }
    /* JSON: the preset reads it itself; a value of the shape the docs give */
    if (strcmp(n, "model_list") == 0)
        return cJSON_Parse(
            "[{\"model_name\": \"g\", \"litellm_params\": {\"model\": "
            "\"openai/gpt-4o\", \"rpm\": 60, \"cooldown_time\": 9}, "
            "\"model_info\": {\"id\": \"openai\"}}, {\"model_name\": \"h\", "
            "\"litellm_params\": {\"model\": \"claude-sonnet-4-5\", \"weight\": 2}}]");
    if (strcmp(n, "default_fallbacks") == 0) return cJSON_Parse("[\"h\"]");
    if (strstr(n, "fallbacks")) return cJSON_Parse("[{\"g\": [\"h\", \"i\"]}]");
    if (strcmp(n, "redis_url") == 0 || strcmp(n, "redis_password") == 0)
        return cJSON_CreateString("<secret: not copied>");
    (void)pre;
    return cJSON_CreateString("yes"); /* a string PyYAML would read as a boolean if plain */
}

/* The preset of the kind's layers and the kind's layer name. */
static const char *layer_name(const char *kind) {
    return strcmp(kind, "litellm") == 0 ? "litellm" : "backend_1";
}

/* --into's files: keys the presets do not model, with comments, which must stay. */
static const char *into_base(const char *kind) {
    if (strcmp(kind, "litellm") == 0)
        return "# the proxy\nrouter_settings:\n  enable_pre_call_checks: true  # kept\n"
               "general_settings:\n  master_key: os.environ/MASTER_KEY\n";
    return "resilience4j.circuitbreaker:\n  instances:\n    backend_1:\n"
           "      register-health-indicator: true  # kept\n";
}

/* Into mode: 0 the block, 1 --into the base file, 2 --into the result of 1 (values replaced). */
static int into_mode;

static char *export_for(const char *kind, const char *json, const char *key, char **notes) {
    char *yaml = NULL, msg[600] = "";
    int rc = FB_OK;
    if (into_mode == 0) {
        if (imp_export_policy(kind, layer_name(kind), json, &yaml, notes, msg, sizeof msg) != FB_OK)
            fail_msg("%s %s: export: %s", kind, key, msg);
        return yaml;
    }
    const char *base = into_base(kind);
    rc = imp_export_into(kind, layer_name(kind), json, "base.yaml", base, strlen(base), &yaml,
                         notes, msg, sizeof msg);
    if (rc != FB_OK) fail_msg("%s %s: --into: %s", kind, key, msg);
    if (strstr(yaml, "# kept\n") == NULL)
        fail_msg("%s %s: a comment was lost:\n%s", kind, key, yaml);
    if (into_mode == 2) {
        char *again = NULL;
        free(*notes);
        rc = imp_export_into(kind, layer_name(kind), json, "base.yaml", yaml, strlen(yaml), &again,
                             notes, msg, sizeof msg);
        if (rc != FB_OK) fail_msg("%s %s: --into twice: %s", kind, key, msg);
        if (strcmp(again, yaml) != 0 && strcmp(key, "model_list") != 0)
            fail_msg("%s %s: --into twice changed the file:\n%s\n---\n%s", kind, key, yaml, again);
        free(yaml);
        yaml = again;
    }
    return yaml;
}

/*
 * export(x), then import; the layer back. *noted: export reported the key
 * (not written).
 */
static cJSON *round_trip(const char *kind, const cJSON *x, const char *key, bool *noted) {
    char *json = cJSON_PrintUnformatted(x), *notes = NULL;
    char *yaml = export_for(kind, json, key, &notes);
    char want[200];
    snprintf(want, sizeof want, "%s: ", key);
    *noted = notes && strstr(notes, want) == notes;
    imp_node *root = NULL;
    imp_error err;
    imp_result r;
    memset(&r, 0, sizeof r);
    if (imp_yaml_parse(yaml, strlen(yaml), "out.yaml", &root, &err) != FB_OK)
        fail_msg("%s %s: %d:%d: %s\n%s", kind, key, err.line, err.col, err.msg, yaml);
    if (imp_policy(kind, root, "out.yaml", &r, &err) != FB_OK)
        fail_msg("%s %s: import: %s\n%s", kind, key, err.msg, yaml);
    cJSON *doc = cJSON_Parse(r.json);
    cJSON *back = cJSON_DetachItemFromObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "layers"), layer_name(kind));
    if (back == NULL) fail_msg("%s %s: no layer %s in\n%s", kind, key, layer_name(kind), r.json);
    cJSON_Delete(doc);
    imp_result_free(&r);
    imp_node_free(root);
    free(json);
    free(yaml);
    free(notes);
    return back;
}

/* x = {"preset": P, key: v}: import(export(x)) is x, or (a key with no place) {"preset": P}. */
static void check_key(const char *kind, const sim_preset *p, const char *key, cJSON *v) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "preset", p->name);
    cJSON_AddItemToObject(x, key, v);
    bool noted = false;
    cJSON *back = round_trip(kind, x, key, &noted);
    cJSON *want = cJSON_Duplicate(x, true);
    const char *k = strchr(key, '.') ? NULL : key;
    if (into_mode == 2 && strcmp(key, "model_list") == 0)
        noted = false; /* written the first time */
    if (noted && k && !(strcmp(k, "redis_url") == 0 || strcmp(k, "redis_password") == 0))
        cJSON_DeleteItemFromObjectCaseSensitive(want, k); /* no place in the file: noted */
    /*
     * LiteLLM: with an allowed_fails_policy the Router runs the allowed-fails rule
     * with allowed_fails = litellm.allowed_fails, 3 (cooldown_handlers.py,
     * _is_allowed_fails_set_on_router): the importer says so, the preset's
     * default made explicit.
     */
    if (strcmp(key, "allowed_fails_policy") == 0) cJSON_AddNumberToObject(want, "allowed_fails", 3);
    /*
     * LiteLLM's InternalServerError* policy keys have no branch in the Router (a 500 takes
     * num_retries / allowed_fails, BerriAI/litellm#29283, #37805): the importer notes them
     * and leaves them out, so they do not come back.
     */
    for (cJSON *o = want->child; o; o = o->next)
        if (cJSON_IsObject(o)) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, "InternalServerErrorAllowedFails");
            cJSON_DeleteItemFromObjectCaseSensitive(o, "InternalServerErrorRetries");
        }
    if (!cJSON_Compare(back, want, true)) {
        char *a = cJSON_PrintUnformatted(want), *b = cJSON_PrintUnformatted(back);
        fail_msg("%s %s: import(export(x)) differs:\n  x:    %s\n  back: %s", kind, key, a, b);
    }
    cJSON_Delete(x);
    cJSON_Delete(back);
    cJSON_Delete(want);
}

/* Every parameter of the kind's preset, an object parameter's keys one by one too. */
static size_t check_kind(const char *kind) {
    const sim_preset *p = scn_preset_find(imp_export_preset(kind));
    assert_non_null(p);
    size_t n = 0;
    for (const sim_param *q = p->params; q->name; q++, n++) {
        const char *dot = strchr(q->name, '.');
        if (dot == NULL) {
            check_key(kind, p, q->name, value_for(p, q));
            continue;
        }
        char parent[128];
        snprintf(parent, sizeof parent, "%.*s", (int)(dot - q->name), q->name);
        cJSON *obj = cJSON_CreateObject();
        cJSON *v = value_for(p, q);
        cJSON_AddItemToObject(obj, dot + 1, v);
        check_key(kind, p, parent, obj);
    }
    return n;
}

static void export_resilience4j_round_trips_every_parameter(void **state) {
    (void)state;
    assert_true(check_kind("resilience4j") >= 17);
}

static void export_litellm_round_trips_every_parameter(void **state) {
    (void)state;
    assert_true(check_kind("litellm") >= 30);
}

/* --into a file of the library's (and into its result again): the same round trip. */
static void export_into_round_trips_every_parameter(void **state) {
    (void)state;
    for (into_mode = 1; into_mode <= 2; into_mode++) {
        assert_true(check_kind("resilience4j") >= 17);
        assert_true(check_kind("litellm") >= 30);
    }
    into_mode = 0;
}

/* In place: the file's comments, order, spelling and other keys kept; new keys at their map. */
static void export_into_changes_only_the_layers_keys(void **state) {
    (void)state;
    const char *file = "# app\n"
                       "resilience4j.circuitbreaker:\n"
                       "    instances:\n"
                       "        backendA:\n"
                       "            failure-rate-threshold: 50 # percent\n"
                       "            recordExceptions:\n"
                       "                - java.io.IOException\n"
                       "        backendB:\n"
                       "            slidingWindowSize: 10\n"
                       "spring:\n"
                       "    application:\n"
                       "        name: x\n";
    char *out = NULL, *notes = NULL, msg[600];
    assert_int_equal(imp_export_into("resilience4j", "backendA",
                                     "{\"preset\": \"resilience4j\", \"failureRateThreshold\": 25, "
                                     "\"waitDurationInOpenState\": \"20s\", \"maxAttempts\": 4}",
                                     "app.yml", file, strlen(file), &out, &notes, msg, sizeof msg),
                     FB_OK);
    assert_string_equal(out, "# app\n"
                             "resilience4j.circuitbreaker:\n"
                             "    instances:\n"
                             "        backendA:\n"
                             "            failure-rate-threshold: 25 # percent\n"
                             "            recordExceptions:\n"
                             "                - java.io.IOException\n"
                             "            waitDurationInOpenState: 20s\n"
                             "        backendB:\n"
                             "            slidingWindowSize: 10\n"
                             "spring:\n"
                             "    application:\n"
                             "        name: x\n"
                             "resilience4j:\n"
                             "  retry:\n"
                             "    instances:\n"
                             "      backendA:\n"
                             "        maxAttempts: 4\n");
    free(out);
}

/* "router_settings:" with nothing under it yet (a comment after it): the keys go below it. */
static void export_into_fills_an_empty_section(void **state) {
    (void)state;
    const char *file = "router_settings:   # none yet\n\nlitellm_settings:\n  x: 1";
    char *out = NULL, *notes = NULL, msg[600];
    assert_int_equal(imp_export_into("litellm", NULL,
                                     "{\"preset\": \"litellm\", \"cooldown_time\": 12, "
                                     "\"retry_policy\": {\"RateLimitErrorRetries\": 1}}",
                                     "c.yaml", file, strlen(file), &out, &notes, msg, sizeof msg),
                     FB_OK);
    assert_string_equal(out, "router_settings:   # none yet\n"
                             "  cooldown_time: 12\n"
                             "  retry_policy:\n"
                             "    RateLimitErrorRetries: 1\n"
                             "\n"
                             "litellm_settings:\n"
                             "  x: 1");
    free(out);
}

/* --into from several threads at once: each call its own edits (they were one static splice). */
typedef struct into_job {
    const char *kind, *name, *layer, *file;
    char *first; /* the call's answer alone */
    bool same;   /* every answer under the other thread's calls was first */
} into_job;

static char *into_once(const into_job *j) {
    char *out = NULL, *notes = NULL, msg[600];
    if (imp_export_into(j->kind, j->name, j->layer, "f.yaml", j->file, strlen(j->file), &out,
                        &notes, msg, sizeof msg) != FB_OK)
        out = NULL;
    free(notes);
    return out;
}

static void *into_many(void *arg) {
    into_job *j = arg;
    j->same = true;
    for (int i = 0; i < 2000 && j->same; i++) {
        char *out = into_once(j);
        j->same = out && strcmp(out, j->first) == 0;
        free(out);
    }
    return NULL;
}

static void export_into_is_reentrant(void **state) {
    (void)state;
    into_job jobs[2] = {
        {"resilience4j", "backendA", "{\"preset\": \"resilience4j\", \"maxAttempts\": 4}",
         "resilience4j.retry:\n  instances:\n    backendA:\n      maxAttempts: 2 # kept\n", NULL,
         false},
        {"litellm", NULL, "{\"preset\": \"litellm\", \"cooldown_time\": 12, \"allowed_fails\": 2}",
         "router_settings:\n  cooldown_time: 5\n  # kept\nlitellm_settings:\n  x: 1\n", NULL,
         false},
    };
    for (int k = 0; k < 2; k++) {
        jobs[k].first = into_once(&jobs[k]);
        assert_non_null(jobs[k].first);
        assert_non_null(strstr(jobs[k].first, "# kept"));
    }
    assert_non_null(strstr(jobs[0].first, "maxAttempts: 4"));
    assert_non_null(strstr(jobs[1].first, "cooldown_time: 12"));
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&t[k], NULL, into_many, &jobs[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < 2; k++) {
        assert_true(jobs[k].same);
        free(jobs[k].first);
    }
}

/* Where an edit in place would change more than the keys: refused, the block to paste said. */
static void export_into_refuses_what_it_cannot_edit_in_place(void **state) {
    (void)state;
    char *out = NULL, *notes = NULL, msg[600];
    const char *flowmap = "router_settings: {num_retries: 2}\n";
    assert_int_equal(imp_export_into("litellm", NULL,
                                     "{\"preset\": \"litellm\", \"cooldown_time\": 3}", "c.yaml",
                                     flowmap, strlen(flowmap), &out, &notes, msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "c.yaml:1:18: a flow map"));
    assert_non_null(strstr(msg, "paste"));
    /* a value in a flow map is replaced in place, though */
    assert_int_equal(imp_export_into("litellm", NULL,
                                     "{\"preset\": \"litellm\", \"num_retries\": 5}", "c.yaml",
                                     flowmap, strlen(flowmap), &out, &notes, msg, sizeof msg),
                     FB_OK);
    assert_string_equal(out, "router_settings: {num_retries: 5}\n");
    free(out);
    const char *alias = "base: &b 3\nrouter_settings:\n  num_retries: *b\n";
    assert_int_equal(imp_export_into("litellm", NULL,
                                     "{\"preset\": \"litellm\", \"num_retries\": 5}", "c.yaml",
                                     alias, strlen(alias), &out, &notes, msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "alias"));
    assert_int_equal(imp_export_into("envoy", "c", "{\"preset\": \"envoy\"}", "e.yaml", "a: 1\n", 5,
                                     &out, &notes, msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "paste"));
}

static void export_envoy_round_trips_every_parameter(void **state) {
    (void)state;
    assert_true(check_kind("envoy") >= 20);
}

/* The layer's values in the library's units, verbatim: Spring durations, proto durations. */
static void export_writes_the_librarys_units(void **state) {
    (void)state;
    char *yaml = NULL, *notes = NULL, msg[600];
    assert_int_equal(
        imp_export_policy("resilience4j", "backendA",
                          "{\"preset\": \"resilience4j\", \"waitDurationInOpenState\": "
                          "\"10s\", \"failureRateThreshold\": 37.5, \"waitDuration\": "
                          "250, \"slidingWindowType\": \"TIME_BASED\"}",
                          &yaml, &notes, msg, sizeof msg),
        FB_OK);
    assert_non_null(strstr(yaml, "resilience4j:\n  circuitbreaker:\n    instances:\n"
                                 "      backendA:\n        waitDurationInOpenState: 10s\n"
                                 "        failureRateThreshold: 37.5\n"));
    assert_non_null(strstr(yaml, "  retry:\n    instances:\n      backendA:\n"
                                 "        waitDuration: 250\n"));
    assert_null(notes);
    free(yaml);
    assert_int_equal(imp_export_policy("envoy", "llm",
                                       "{\"preset\": \"envoy\", \"per_try_timeout\": \"0.25s\", "
                                       "\"retry_on\": \"5xx,reset\", \"max_retries\": 1}",
                                       &yaml, &notes, msg, sizeof msg),
                     FB_OK);
    assert_non_null(strstr(yaml, "              retry_policy:\n"
                                 "                per_try_timeout: 0.25s\n"
                                 "                retry_on: \"5xx,reset\"\n"));
    assert_non_null(strstr(yaml, "      thresholds:\n        - priority: DEFAULT\n"
                                 "          max_retries: 1\n"));
    free(yaml);
}

/* Only what the layer gives: no key of the library's defaults is written. */
static void export_writes_only_the_layers_keys(void **state) {
    (void)state;
    char *yaml = NULL, *notes = NULL, msg[600];
    assert_int_equal(imp_export_policy("litellm", NULL,
                                       "{\"name\": \"proxy\", \"preset\": \"litellm\", "
                                       "\"cooldown_time\": 30}",
                                       &yaml, &notes, msg, sizeof msg),
                     FB_OK);
    const char *body = strchr(yaml, '\n') + 1;
    assert_string_equal(body, "router_settings:\n  cooldown_time: 30\n");
    free(yaml);
}

/* A string a YAML reader would take for something else is quoted; numbers stay numbers. */
static void export_quotes_what_yaml_would_misread(void **state) {
    (void)state;
    char *yaml = NULL, *notes = NULL, msg[600];
    assert_int_equal(imp_export_policy("litellm", NULL,
                                       "{\"preset\": \"litellm\", \"redis_host\": \"on\", "
                                       "\"fallbacks\": [{\"1e3\": [\"0x1F\", \"null\", "
                                       "\"a: b\", \"2024-01-01\", \"gpt-4o\"]}], "
                                       "\"retry_after\": 0.1}",
                                       &yaml, &notes, msg, sizeof msg),
                     FB_OK);
    assert_non_null(strstr(yaml, "redis_host: \"on\"\n"));
    assert_non_null(strstr(yaml, "  fallbacks:\n    - \"1e3\":\n        - \"0x1F\"\n"
                                 "        - \"null\"\n        - \"a: b\"\n"
                                 "        - \"2024-01-01\"\n        - gpt-4o\n"));
    assert_non_null(strstr(yaml, "retry_after: 0.1\n"));
    free(yaml);
}

/* Secrets: never the value, LiteLLM's environment reference, and a note. */
static void export_litellm_secret_is_an_environment_reference(void **state) {
    (void)state;
    char *yaml = NULL, *notes = NULL, msg[600];
    assert_int_equal(imp_export_policy("litellm", NULL,
                                       "{\"preset\": \"litellm\", \"redis_host\": \"r\", "
                                       "\"redis_password\": \"hunter2\"}",
                                       &yaml, &notes, msg, sizeof msg),
                     FB_OK);
    assert_null(strstr(yaml, "hunter2"));
    assert_non_null(strstr(yaml, "redis_password: os.environ/REDIS_PASSWORD\n"));
    assert_non_null(strstr(notes, "redis_password: a secret"));
    free(yaml);
    free(notes);
}

/* fusebox's provider of a deployment becomes its model_info.id (which the importer maps back). */
static void export_litellm_provider_becomes_model_info_id(void **state) {
    (void)state;
    char *yaml = NULL, *notes = NULL, msg[600];
    assert_int_equal(
        imp_export_policy("litellm", NULL,
                          "{\"preset\": \"litellm\", \"model_list\": [{\"model_name\": "
                          "\"g\", \"provider\": \"azure-east\", \"litellm_params\": "
                          "{\"model\": \"azure/gpt-4o\"}}]}",
                          &yaml, &notes, msg, sizeof msg),
        FB_OK);
    assert_non_null(strstr(yaml, "    model_info:\n      id: azure-east\n"));
    assert_null(strstr(yaml, "provider"));
    assert_non_null(strstr(notes, "model_list[].provider: written as"));
    free(yaml);
    free(notes);
}

static void export_refuses_what_is_no_parameter(void **state) {
    (void)state;
    char *yaml = NULL, *notes = NULL, msg[600];
    assert_int_equal(imp_export_policy("resilience4j", "a",
                                       "{\"preset\": \"resilience4j\", \"maxAttempt\": 3}", &yaml,
                                       &notes, msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "maxAttempt: not a parameter of the preset resilience4j"));
    assert_int_equal(
        imp_export_policy("envoy", "a",
                          "{\"preset\": \"envoy\", \"retry_budget\": {\"percent\": 3}}", &yaml,
                          &notes, msg, sizeof msg),
        FB_EINVAL);
    assert_non_null(strstr(msg, "retry_budget.percent: not a parameter"));
    assert_int_equal(imp_export_policy("envoy", "a", "{\"preset\": \"litellm\"}", &yaml, &notes,
                                       msg, sizeof msg),
                     FB_EINVAL);
    assert_non_null(strstr(msg, "not of the preset envoy"));
    assert_int_equal(
        imp_export_policy("hystrix", "a", "{\"preset\": \"x\"}", &yaml, &notes, msg, sizeof msg),
        FB_EINVAL);
    assert_null(yaml);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(export_resilience4j_round_trips_every_parameter),
        cmocka_unit_test(export_litellm_round_trips_every_parameter),
        cmocka_unit_test(export_envoy_round_trips_every_parameter),
        cmocka_unit_test(export_into_round_trips_every_parameter),
        cmocka_unit_test(export_into_changes_only_the_layers_keys),
        cmocka_unit_test(export_into_fills_an_empty_section),
        cmocka_unit_test(export_into_refuses_what_it_cannot_edit_in_place),
        cmocka_unit_test(export_writes_the_librarys_units),
        cmocka_unit_test(export_writes_only_the_layers_keys),
        cmocka_unit_test(export_quotes_what_yaml_would_misread),
        cmocka_unit_test(export_litellm_secret_is_an_environment_reference),
        cmocka_unit_test(export_litellm_provider_becomes_model_info_id),
        cmocka_unit_test(export_refuses_what_is_no_parameter),
        cmocka_unit_test(export_into_is_reentrant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
