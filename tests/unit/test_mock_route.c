/*
 * test_mock_route.c - the mock's routing (mockserver/route.h) without a server: every endpoint
 * of the table from its method and path (its API, dialect, stream flag and path argument), the
 * control endpoints, 404 / 405 / 413 with their dialect, Allow and message, proxy mode's
 * passthrough, and the refusals of credentials and query. The HTTP answers these decisions
 * make are the mock suites' (test_mock, test_mock_api, mock_curl).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "mockserver/route.h"

static mock_route decide(const char *method, const char *path, const char *anthropic_version,
                         bool too_large, bool proxy) {
    mock_route_in in = {method, path, anthropic_version, too_large, proxy};
    mock_route rt;
    mock_route_decide(&in, &rt);
    return rt;
}

static const struct {
    const char *method, *path;
    route id;
    const mock_api_ops *ops;
    mock_dialect dialect;
    bool stream;
    const char *arg, *operation;
} table[] = {
    {"POST", "/v1/chat/completions", RT_API, &mock_api_chat, MOCK_OPENAI, false, "", NULL},
    {"POST", "/v1/completions", RT_API, &mock_api_completions, MOCK_OPENAI, false, "", NULL},
    {"POST", "/v1/responses", RT_API, &mock_api_responses, MOCK_OPENAI, false, "", NULL},
    {"POST", "/v1/embeddings", RT_API, &mock_api_embeddings, MOCK_OPENAI, false, "", NULL},
    {"POST", "/v1/messages", RT_API, &mock_api_messages, MOCK_ANTHROPIC, false, "", NULL},
    {"POST", "/v1/messages/count_tokens", RT_API, &mock_api_count_tokens, MOCK_ANTHROPIC, false, "",
     NULL},
    {"GET", "/v1/models", RT_API, &mock_api_models, MOCK_OPENAI, false, "", NULL},
    {"GET", "/v1/models/gpt-4o", RT_API, &mock_api_model, MOCK_OPENAI, false, "gpt-4o", NULL},
    {"POST", "/openai/deployments/gpt4o/chat/completions", RT_API, &mock_api_chat, MOCK_AZURE,
     false, "gpt4o", "ChatCompletions_Create"},
    {"POST", "/openai/deployments/d-1/completions", RT_API, &mock_api_completions, MOCK_AZURE,
     false, "d-1", "Completions_Create"},
    {"POST", "/openai/deployments/e/embeddings", RT_API, &mock_api_embeddings, MOCK_AZURE, false,
     "e", "Embeddings_Create"},
    {"POST", "/openai/responses", RT_API, &mock_api_responses, MOCK_AZURE, false, "",
     "Responses_Create"},
    {"POST", "/v1beta/models/gemini-2.5-flash:generateContent", RT_API, &mock_api_gemini,
     MOCK_GEMINI, false, "gemini-2.5-flash", NULL},
    {"POST", "/v1beta/models/g:streamGenerateContent", RT_API, &mock_api_gemini, MOCK_GEMINI, true,
     "g", NULL},
    {"POST", "/v1beta/models/g:countTokens", RT_API, &mock_api_gemini_count, MOCK_GEMINI, false,
     "g", NULL},
    {"POST", "/v1beta/models/text-embedding-004:embedContent", RT_API, &mock_api_gemini_embed,
     MOCK_GEMINI, false, "text-embedding-004", NULL},
    {"POST", "/v1beta/models/e:batchEmbedContents", RT_API, &mock_api_gemini_batch_embed,
     MOCK_GEMINI, false, "e", NULL},
    {"POST", "/v1/models/e:embedContent", RT_API, &mock_api_gemini_embed, MOCK_GEMINI, false, "e",
     NULL},
    {"POST", "/v1/models/e:batchEmbedContents", RT_API, &mock_api_gemini_batch_embed, MOCK_GEMINI,
     false, "e", NULL},
    {"GET", "/v1beta/models", RT_API, &mock_api_models, MOCK_GEMINI, false, "", NULL},
    {"GET", "/v1beta/models/gemini-pro", RT_API, &mock_api_model, MOCK_GEMINI, false, "gemini-pro",
     NULL},
    {"POST", "/__fusebox/faults", RT_C_FAULTS, NULL, MOCK_OPENAI, false, "", NULL},
    {"POST", "/__fusebox/reset", RT_C_RESET, NULL, MOCK_OPENAI, false, "", NULL},
    {"GET", "/__fusebox/log", RT_C_LOG, NULL, MOCK_OPENAI, false, "", NULL},
    {"GET", "/__fusebox/stats", RT_C_STATS, NULL, MOCK_OPENAI, false, "", NULL},
    {"GET", "/__fusebox/verdict", RT_C_VERDICT, NULL, MOCK_OPENAI, false, "", NULL},
};

static void every_endpoint_from_its_method_and_path(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        for (int proxy = 0; proxy < 2; proxy++) { /* proxy mode routes the known paths alike */
            mock_route rt = decide(table[i].method, table[i].path, NULL, false, proxy);
            if (rt.ep == NULL) fail_msg("%s %s: %d", table[i].method, table[i].path, rt.status);
            assert_int_equal(rt.ep->id, table[i].id);
            assert_ptr_equal(rt.ep->ops, table[i].ops);
            assert_int_equal(rt.ep->dialect, table[i].dialect);
            assert_int_equal(rt.ep->stream, table[i].stream);
            assert_string_equal(rt.arg, table[i].arg);
            if (table[i].operation == NULL)
                assert_null(rt.ep->operation);
            else
                assert_string_equal(rt.ep->operation, table[i].operation);
            assert_int_equal(rt.status, 0);
            assert_int_equal(rt.control, table[i].id != RT_API);
        }
    }
}

static void a_path_argument_is_one_segment_cut_to_its_buffer(void **state) {
    (void)state;
    /* an empty argument, or one with a '/', matches nothing */
    assert_int_equal(decide("GET", "/v1/models/", NULL, false, false).status, 404);
    assert_int_equal(decide("GET", "/v1/models/a/b", NULL, false, false).status, 404);
    assert_int_equal(
        decide("POST", "/openai/deployments//chat/completions", NULL, false, false).status, 404);
    /* "{m}:" needs a model before its ':'; without one the path is a model's own (GET) */
    mock_route rt = decide("POST", "/v1beta/models/:generateContent", NULL, false, false);
    assert_int_equal(rt.status, 405);
    assert_string_equal(rt.allow, "GET");
    rt = decide("GET", "/v1beta/models/:generateContent", NULL, false, false);
    assert_ptr_equal(rt.ep->ops, &mock_api_model);
    assert_string_equal(rt.arg, ":generateContent");
    /* the first pattern whose path matches wins: a GET of a generate path is a model's GET */
    rt = decide("GET", "/v1beta/models/a:generateContent", NULL, false, false);
    assert_ptr_equal(rt.ep->ops, &mock_api_model);
    assert_string_equal(rt.arg, "a:generateContent");
    /* an argument longer than its buffer is cut, never overrun */
    char path[600] = "/v1/models/";
    memset(path + 11, 'm', 500);
    rt = decide("GET", path, NULL, false, false);
    assert_non_null(rt.ep);
    assert_int_equal(strlen(rt.arg), MOCK_ROUTE_ARG_MAX - 1);
    assert_int_equal(rt.arg[0], 'm');
}

static void unknown_paths_are_404_in_the_dialect_the_path_suggests(void **state) {
    (void)state;
    static const struct {
        const char *path, *anthropic_version;
        mock_dialect d;
        const char *msg;
    } cases[] = {
        {"/nope", NULL, MOCK_OPENAI, "Invalid URL (GET /nope)"},
        {"/v1/nope", "2023-06-01", MOCK_ANTHROPIC, "Invalid URL (GET /v1/nope)"},
        {"/v1/messages/nope", NULL, MOCK_ANTHROPIC, "Invalid URL (GET /v1/messages/nope)"},
        {"/openai/nope", "2023-06-01", MOCK_AZURE, ""},
        {"/v1beta/nope", NULL, MOCK_GEMINI, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mock_route rt = decide("GET", cases[i].path, cases[i].anthropic_version, false, false);
        assert_null(rt.ep);
        assert_int_equal(rt.status, 404);
        assert_false(rt.control);
        assert_null(rt.allow);
        assert_int_equal(rt.dialect, cases[i].d);
        assert_string_equal(rt.msg, cases[i].msg);
    }
}

static void a_known_path_with_another_method_is_405_with_allow(void **state) {
    (void)state;
    mock_route rt = decide("GET", "/v1/chat/completions", NULL, false, false);
    assert_null(rt.ep);
    assert_int_equal(rt.status, 405);
    assert_string_equal(rt.allow, "POST");
    assert_string_equal(rt.msg, "Method GET not allowed for /v1/chat/completions");
    rt = decide("DELETE", "/v1/models/x", NULL, false, false);
    assert_string_equal(rt.allow, "GET");
    assert_string_equal(rt.arg, ""); /* no endpoint, no argument */
    rt = decide("POST", "/v1beta/models", NULL, false, false);
    assert_int_equal(rt.dialect, MOCK_GEMINI);
    assert_string_equal(rt.allow, "GET");
    /* the message quotes at most 16 bytes of the method and 200 of the path */
    char path[400] = "/v1/chat/completions";
    rt = decide("PROPFINDPROPFINDPROPFIND", path, NULL, false, false);
    assert_string_equal(rt.msg, "Method PROPFINDPROPFIND not allowed for /v1/chat/completions");
    memset(path, 'a', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    rt = decide("GET", path, NULL, false, false);
    assert_int_equal(strlen(rt.msg), strlen("Invalid URL (GET )") + 200);
}

static void the_control_plane_has_its_own_404_and_405(void **state) {
    (void)state;
    mock_route rt = decide("POST", "/__fusebox/log", NULL, false, false);
    assert_null(rt.ep);
    assert_true(rt.control);
    assert_int_equal(rt.status, 405);
    assert_null(rt.allow);
    assert_string_equal(rt.msg, "method not allowed");
    rt = decide("GET", "/__fusebox/nope", NULL, false, true); /* never forwarded */
    assert_null(rt.ep);
    assert_int_equal(rt.status, 404);
    assert_string_equal(rt.msg, "unknown control endpoint");
}

static void a_body_over_the_limit_is_413_whatever_the_path(void **state) {
    (void)state;
    static const char *const paths[] = {"/v1/chat/completions", "/__fusebox/faults", "/nope",
                                        "/v1beta/models/g:generateContent"};
    for (size_t i = 0; i < 4; i++) {
        for (int proxy = 0; proxy < 2; proxy++) {
            mock_route rt = decide("POST", paths[i], NULL, true, proxy);
            assert_null(rt.ep);
            assert_int_equal(rt.status, 413);
            assert_null(rt.allow);
            assert_string_equal(rt.msg, ""); /* the dialect's own message */
        }
    }
    assert_int_equal(decide("POST", "/v1beta/x", NULL, true, false).dialect, MOCK_GEMINI);
    assert_true(decide("POST", "/__fusebox/faults", NULL, true, false).control);
}

static void proxy_mode_forwards_what_no_endpoint_takes_in_its_dialect(void **state) {
    (void)state;
    static const struct {
        const char *method, *path, *anthropic_version;
        mock_dialect d;
    } cases[] = {
        {"GET", "/v1/files", NULL, MOCK_OPENAI},
        {"GET", "/v1/chat/completions", NULL, MOCK_OPENAI}, /* another method: forwarded too */
        {"PUT", "/v1/x", "2023-06-01", MOCK_ANTHROPIC},
        {"POST", "/openai/deployments/d/images", NULL, MOCK_AZURE},
        {"POST", "/v1beta/files", NULL, MOCK_GEMINI},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mock_route rt =
            decide(cases[i].method, cases[i].path, cases[i].anthropic_version, false, true);
        assert_non_null(rt.ep);
        assert_ptr_equal(rt.ep->ops, &mock_api_passthrough);
        assert_int_equal(rt.ep->dialect, cases[i].d);
        assert_int_equal(rt.status, 0);
    }
}

static void credentials_and_query_are_refused_per_dialect(void **state) {
    (void)state;
    mock_route_creds none = {0};
    assert_int_equal(mock_route_refusal(MOCK_OPENAI, false, &none), 0);
    assert_int_equal(mock_route_refusal(MOCK_ANTHROPIC, true, &none), 0);
    /* Azure: api-version first (404, even with a key), then a key or a bearer token (401) */
    mock_route_creds az = {.api_key = true};
    assert_int_equal(mock_route_refusal(MOCK_AZURE, false, &az), 404);
    az.api_version = "";
    assert_int_equal(mock_route_refusal(MOCK_AZURE, false, &az), 404);
    az.api_version = "2024-10-21";
    assert_int_equal(mock_route_refusal(MOCK_AZURE, false, &az), 0);
    az.api_key = false;
    assert_int_equal(mock_route_refusal(MOCK_AZURE, false, &az), 401);
    az.authorization = true;
    assert_int_equal(mock_route_refusal(MOCK_AZURE, false, &az), 0);
    /* Gemini: a key (header, bearer or ?key=) else 403; a stream wants alt=sse else 400 */
    mock_route_creds g = {0};
    assert_int_equal(mock_route_refusal(MOCK_GEMINI, false, &g), 403);
    g.key = "";
    assert_int_equal(mock_route_refusal(MOCK_GEMINI, false, &g), 0);
    assert_int_equal(mock_route_refusal(MOCK_GEMINI, true, &g), 400);
    g.alt = "json";
    assert_int_equal(mock_route_refusal(MOCK_GEMINI, true, &g), 400);
    g.alt = "sse";
    assert_int_equal(mock_route_refusal(MOCK_GEMINI, true, &g), 0);
    g = (mock_route_creds){.x_goog_api_key = true};
    assert_int_equal(mock_route_refusal(MOCK_GEMINI, true, &g), 400); /* the key, then alt */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_endpoint_from_its_method_and_path),
        cmocka_unit_test(a_path_argument_is_one_segment_cut_to_its_buffer),
        cmocka_unit_test(unknown_paths_are_404_in_the_dialect_the_path_suggests),
        cmocka_unit_test(a_known_path_with_another_method_is_405_with_allow),
        cmocka_unit_test(the_control_plane_has_its_own_404_and_405),
        cmocka_unit_test(a_body_over_the_limit_is_413_whatever_the_path),
        cmocka_unit_test(proxy_mode_forwards_what_no_endpoint_takes_in_its_dialect),
        cmocka_unit_test(credentials_and_query_are_refused_per_dialect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
