/* test_classify.c - replies to outcomes, outcomes to decisions, error bodies to kinds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/classify.h"

static fb_classifier defaults(void) {
    fb_classifier c;
    assert_int_equal(fb_classify_init(&c, NULL), FB_OK);
    return c;
}

static fb_reply status(int s) {
    return (fb_reply){.status = s, .should_retry = -1};
}

static fb_reply transport(fb_transport t) {
    return (fb_reply){.transport = t, .should_retry = -1};
}

static fb_reply with_kind(int s, fb_error_kind k) {
    return (fb_reply){.status = s, .error_kind = k, .should_retry = -1};
}

static void assert_class(fb_class k, fb_outcome o, bool retryable, fb_effect effect,
                         bool fallback) {
    assert_string_equal(fb_outcome_name(k.outcome), fb_outcome_name(o));
    assert_int_equal(k.retryable, retryable);
    assert_int_equal(k.effect, effect);
    assert_int_equal(k.may_fallback, fallback);
}

static void classify_2xx_is_success(void **state) {
    (void)state;
    fb_classifier c = defaults();
    int codes[] = {200, 201, 204, 299};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fb_reply r = status(codes[i]);
        assert_class(fb_classify(&c, &r), FB_OUT_SUCCESS, false, FB_EFFECT_SUCCESS, false);
    }
}

static void classify_408_and_409_are_transient_and_retryable(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r408 = status(408), r409 = status(409);
    assert_class(fb_classify(&c, &r408), FB_OUT_TRANSIENT, true, FB_EFFECT_FAILURE, true);
    assert_class(fb_classify(&c, &r409), FB_OUT_TRANSIENT, true, FB_EFFECT_FAILURE, true);
}

static void classify_429_is_rate_limited_and_ignored_by_breaker(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = status(429);
    assert_class(fb_classify(&c, &r), FB_OUT_RATE_LIMITED, true, FB_EFFECT_IGNORE, true);
    /* OpenAI's insufficient_quota is a 429 too: the SDKs retry it, and so do we by default. */
    fb_reply quota = with_kind(429, FB_ERRKIND_OTHER);
    assert_int_equal(fb_classify(&c, &quota).outcome, FB_OUT_RATE_LIMITED);
}

static void classify_rate_limit_trips_switch_makes_429_a_failure(void **state) {
    (void)state;
    fb_classifier c;
    fb_classify_config cfg = {.rate_limit_trips = FB_ON};
    assert_int_equal(fb_classify_init(&c, &cfg), FB_OK);
    fb_reply r = status(429);
    assert_class(fb_classify(&c, &r), FB_OUT_RATE_LIMITED, true, FB_EFFECT_FAILURE, true);
}

static void classify_5xx_and_529_overloaded_are_transient(void **state) {
    (void)state;
    fb_classifier c = defaults();
    int codes[] = {500, 502, 503, 504, 529, 599};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fb_reply r = status(codes[i]);
        assert_class(fb_classify(&c, &r), FB_OUT_TRANSIENT, true, FB_EFFECT_FAILURE, true);
    }
    /* Anthropic's overloaded_error arrives as 529; the kind does not change the outcome. */
    fb_reply overloaded = with_kind(529, FB_ERRKIND_OVERLOADED);
    assert_int_equal(fb_classify(&c, &overloaded).outcome, FB_OUT_TRANSIENT);
}

static void classify_4xx_are_permanent_and_never_trip(void **state) {
    (void)state;
    fb_classifier c = defaults();
    int codes[] = {400, 401, 402, 403, 404, 413, 418, 422, 451, 499};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fb_reply r = status(codes[i]);
        assert_class(fb_classify(&c, &r), FB_OUT_PERMANENT, false, FB_EFFECT_SUCCESS, false);
    }
}

static void classify_unexpected_statuses_are_permanent(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r301 = status(301), r100 = status(100);
    assert_int_equal(fb_classify(&c, &r301).outcome, FB_OUT_PERMANENT);
    assert_int_equal(fb_classify(&c, &r100).outcome, FB_OUT_PERMANENT);
}

static void classify_400_context_length_falls_back_without_retry(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = with_kind(400, FB_ERRKIND_CONTEXT_LENGTH);
    assert_class(fb_classify(&c, &r), FB_OUT_CONTEXT_LENGTH, false, FB_EFFECT_SUCCESS, true);
}

static void classify_content_policy_is_policy_and_never_falls_back(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = with_kind(400, FB_ERRKIND_CONTENT_POLICY);
    assert_class(fb_classify(&c, &r), FB_OUT_POLICY, false, FB_EFFECT_SUCCESS, false);
}

static void classify_retryable_status_wins_over_error_kind(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = with_kind(503, FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(fb_classify(&c, &r).outcome, FB_OUT_TRANSIENT);
    fb_reply rl = with_kind(429, FB_ERRKIND_RATE_LIMIT);
    assert_int_equal(fb_classify(&c, &rl).outcome, FB_OUT_RATE_LIMITED);
}

static void classify_connect_reset_other_transport_errors_are_transient(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_transport ts[] = {FB_TRANSPORT_CONNECT, FB_TRANSPORT_RESET, FB_TRANSPORT_OTHER};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        fb_reply r = transport(ts[i]);
        assert_class(fb_classify(&c, &r), FB_OUT_TRANSIENT, true, FB_EFFECT_FAILURE, true);
    }
}

static void classify_transport_timeout_is_timeout_and_trips(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = transport(FB_TRANSPORT_TIMEOUT);
    assert_class(fb_classify(&c, &r), FB_OUT_TIMEOUT, true, FB_EFFECT_FAILURE, true);
}

static void classify_timeout_trips_off_ignores_timeouts(void **state) {
    (void)state;
    fb_classifier c;
    fb_classify_config cfg = {.timeout_trips = FB_OFF};
    assert_int_equal(fb_classify_init(&c, &cfg), FB_OK);
    fb_reply r = transport(FB_TRANSPORT_TIMEOUT);
    assert_class(fb_classify(&c, &r), FB_OUT_TIMEOUT, true, FB_EFFECT_IGNORE, true);
}

static void classify_transport_error_wins_over_status(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = {.status = 200, .transport = FB_TRANSPORT_RESET, .should_retry = -1};
    assert_int_equal(fb_classify(&c, &r).outcome, FB_OUT_TRANSIENT);
    fb_reply t = {.status = 200, .transport = FB_TRANSPORT_TIMEOUT, .should_retry = -1};
    assert_int_equal(fb_classify(&c, &t).outcome, FB_OUT_TIMEOUT);
}

static void classify_no_status_without_transport_error_is_transient(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = status(0);
    assert_int_equal(fb_classify(&c, &r).outcome, FB_OUT_TRANSIENT);
}

static void classify_should_retry_false_overrides_retryable_only(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = status(503);
    r.should_retry = 0;
    assert_class(fb_classify(&c, &r), FB_OUT_TRANSIENT, false, FB_EFFECT_FAILURE, true);
}

static void classify_should_retry_true_makes_a_400_retryable(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = status(400);
    r.should_retry = 1;
    assert_class(fb_classify(&c, &r), FB_OUT_PERMANENT, true, FB_EFFECT_SUCCESS, false);
}

static void classify_should_retry_ignored_when_switched_off(void **state) {
    (void)state;
    fb_classifier c;
    fb_classify_config cfg = {.honor_should_retry = FB_OFF};
    assert_int_equal(fb_classify_init(&c, &cfg), FB_OK);
    fb_reply r = status(503);
    r.should_retry = 0;
    assert_true(fb_classify(&c, &r).retryable);
    fb_reply p = status(400);
    p.should_retry = 1;
    assert_false(fb_classify(&c, &p).retryable);
}

static void classify_should_retry_never_makes_a_success_retryable(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = status(200);
    r.should_retry = 1;
    assert_false(fb_classify(&c, &r).retryable);
}

static void classify_failure_after_first_token_is_classified_as_before(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply replies[] = {status(503), status(429), transport(FB_TRANSPORT_RESET),
                          transport(FB_TRANSPORT_TIMEOUT), with_kind(200, FB_ERRKIND_OVERLOADED)};
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        fb_reply before = replies[i], after = replies[i];
        after.after_first_token = true;
        fb_class b = fb_classify(&c, &before), a = fb_classify(&c, &after);
        assert_false(b.after_first_token);
        assert_true(a.after_first_token);
        assert_class(a, b.outcome, b.retryable, b.effect, b.may_fallback);
    }
}

static void classify_anthropic_in_band_overloaded_event_is_transient(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_error_kind k = fb_classify_error_kind("overloaded_error", NULL, "Overloaded");
    fb_reply r = {.status = 200, .error_kind = k, .should_retry = -1, .after_first_token = true};
    fb_class got = fb_classify(&c, &r);
    assert_class(got, FB_OUT_TRANSIENT, true, FB_EFFECT_FAILURE, true);
    assert_true(got.after_first_token);
}

static void classify_in_band_errors_map_like_their_status(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply rl = with_kind(200, FB_ERRKIND_RATE_LIMIT);
    fb_reply other = with_kind(200, FB_ERRKIND_OTHER); /* OpenAI "server_error" event */
    fb_reply ctx = with_kind(200, FB_ERRKIND_CONTEXT_LENGTH);
    fb_reply pol = with_kind(0, FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(fb_classify(&c, &rl).outcome, FB_OUT_RATE_LIMITED);
    assert_int_equal(fb_classify(&c, &other).outcome, FB_OUT_TRANSIENT);
    assert_int_equal(fb_classify(&c, &ctx).outcome, FB_OUT_CONTEXT_LENGTH);
    assert_int_equal(fb_classify(&c, &pol).outcome, FB_OUT_POLICY);
}

static void classify_finish_reason_content_filter_is_a_success(void **state) {
    (void)state;
    /* A filtered completion is a 200 with finish_reason "content_filter": no error body. */
    fb_classifier c = defaults();
    fb_reply r = with_kind(200, fb_classify_error_kind(NULL, NULL, NULL));
    assert_int_equal(fb_classify(&c, &r).outcome, FB_OUT_SUCCESS);
}

static void classify_cancelled_is_never_produced_and_ignored(void **state) {
    (void)state;
    fb_classifier c = defaults();
    for (int s = 0; s < 1000; s++) {
        for (int t = FB_TRANSPORT_NONE; t <= FB_TRANSPORT_OTHER; t++) {
            for (int k = FB_ERRKIND_NONE; k <= FB_ERRKIND_OTHER; k++) {
                fb_reply r = {.status = s,
                              .transport = (fb_transport)t,
                              .error_kind = (fb_error_kind)k,
                              .should_retry = -1};
                assert_int_not_equal(fb_classify_outcome(&r), FB_OUT_CANCELLED);
            }
        }
    }
    fb_outcome_rule rule = c.rules[FB_OUT_CANCELLED];
    assert_false(rule.retry);
    assert_int_equal(rule.effect, FB_EFFECT_CANCELLED); /* the breaker's cancelled_as decides */
    assert_false(rule.fallback);
}

/* A layer that refused to call (its breaker open) raises "rejected" to the layer outside. */
static void classify_a_refusal_inside_is_rejected_and_may_fall_back(void **state) {
    (void)state;
    fb_classifier c = defaults();
    fb_reply r = {.transport = FB_TRANSPORT_REJECTED, .should_retry = -1};
    fb_class k = fb_classify(&c, &r);
    assert_int_equal(k.outcome, FB_OUT_REJECTED);
    assert_false(k.retryable);
    assert_int_equal(k.effect, FB_EFFECT_IGNORE);
    assert_true(k.may_fallback);
}

static void classify_may_fallback_defaults(void **state) {
    (void)state;
    fb_classifier c = defaults();
    bool want[FB_OUT_COUNT] = {[FB_OUT_TRANSIENT] = true,
                               [FB_OUT_RATE_LIMITED] = true,
                               [FB_OUT_TIMEOUT] = true,
                               [FB_OUT_CONTEXT_LENGTH] = true,
                               [FB_OUT_REJECTED] = true};
    for (int o = 0; o < FB_OUT_COUNT; o++) assert_int_equal(c.rules[o].fallback, want[o]);
}

static void classify_table_edited_after_init_changes_decisions(void **state) {
    (void)state;
    fb_classifier c = defaults();
    c.rules[FB_OUT_PERMANENT].effect = FB_EFFECT_FAILURE;
    c.rules[FB_OUT_TRANSIENT].retry = false;
    fb_reply r404 = status(404), r503 = status(503);
    assert_int_equal(fb_classify(&c, &r404).effect, FB_EFFECT_FAILURE);
    assert_false(fb_classify(&c, &r503).retryable);
}

static void classify_init_rejects_bad_switches(void **state) {
    (void)state;
    fb_classifier c;
    fb_classify_config cfg = {.timeout_trips = (fb_switch)7};
    assert_int_equal(fb_classify_init(&c, &cfg), FB_EINVAL);
    assert_int_equal(fb_classify_init(NULL, NULL), FB_EINVAL);
}

static void error_kind_openai_context_length_exceeded(void **state) {
    (void)state;
    assert_int_equal(fb_classify_error_kind("invalid_request_error", "context_length_exceeded",
                                            "This model's maximum context length is 16385 tokens."),
                     FB_ERRKIND_CONTEXT_LENGTH);
}

static void error_kind_anthropic_prompt_is_too_long(void **state) {
    (void)state;
    assert_int_equal(fb_classify_error_kind("invalid_request_error", NULL,
                                            "prompt is too long: 205351 tokens > 200000 maximum"),
                     FB_ERRKIND_CONTEXT_LENGTH);
    assert_int_equal(fb_classify_error_kind("invalid_request_error", NULL,
                                            "input length and `max_tokens` exceed context limit: "
                                            "188240 + 21333 > 200000, decrease input length or "
                                            "`max_tokens` and try again"),
                     FB_ERRKIND_CONTEXT_LENGTH);
    /* Only an invalid_request_error carries it, and only at the start of the message. */
    assert_int_equal(fb_classify_error_kind("api_error", NULL, "prompt is too long"),
                     FB_ERRKIND_OTHER);
    assert_int_equal(
        fb_classify_error_kind("invalid_request_error", NULL, "the prompt is too long"),
        FB_ERRKIND_OTHER);
}

static void error_kind_content_policy_codes(void **state) {
    (void)state;
    assert_int_equal(fb_classify_error_kind(NULL, "content_filter", NULL),
                     FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(
        fb_classify_error_kind("invalid_request_error", "content_policy_violation", NULL),
        FB_ERRKIND_CONTENT_POLICY);
    assert_int_equal(fb_classify_error_kind("invalid_request_error", "invalid_prompt", NULL),
                     FB_ERRKIND_CONTENT_POLICY);
    /* "content_filter" as a type is a finish reason passed by mistake, not an error code. */
    assert_int_equal(fb_classify_error_kind("content_filter", NULL, NULL), FB_ERRKIND_OTHER);
}

static void error_kind_rate_limit_spellings(void **state) {
    (void)state;
    assert_int_equal(fb_classify_error_kind("rate_limit_error", NULL, "Number of requests"),
                     FB_ERRKIND_RATE_LIMIT);
    assert_int_equal(fb_classify_error_kind("tokens", "rate_limit_exceeded", NULL),
                     FB_ERRKIND_RATE_LIMIT);
}

static void error_kind_overloaded_error(void **state) {
    (void)state;
    assert_int_equal(fb_classify_error_kind("overloaded_error", NULL, "Overloaded"),
                     FB_ERRKIND_OVERLOADED);
}

static void error_kind_none_when_empty_and_other_when_unknown(void **state) {
    (void)state;
    assert_int_equal(fb_classify_error_kind(NULL, NULL, NULL), FB_ERRKIND_NONE);
    assert_int_equal(fb_classify_error_kind("", "", ""), FB_ERRKIND_NONE);
    assert_int_equal(fb_classify_error_kind("server_error", NULL, NULL), FB_ERRKIND_OTHER);
    assert_int_equal(fb_classify_error_kind("invalid_request_error", "invalid_api_key", "x"),
                     FB_ERRKIND_OTHER);
    assert_int_equal(fb_classify_error_kind(NULL, NULL, "Slow Down"), FB_ERRKIND_OTHER);
}

static void outcome_names_round_trip(void **state) {
    (void)state;
    const char *names[] = {"success", "transient",      "rate_limited", "timeout", "permanent",
                           "policy",  "context_length", "cancelled",    "rejected"};
    assert_int_equal(sizeof names / sizeof names[0], FB_OUT_COUNT);
    for (int o = 0; o < FB_OUT_COUNT; o++) {
        assert_string_equal(fb_outcome_name((fb_outcome)o), names[o]);
        fb_outcome back = FB_OUT_COUNT;
        assert_int_equal(fb_outcome_parse(names[o], &back), FB_OK);
        assert_int_equal(back, o);
    }
}

static void outcome_parse_rejects_unknown_names(void **state) {
    (void)state;
    fb_outcome o = FB_OUT_SUCCESS;
    assert_int_equal(fb_outcome_parse("Success", &o), FB_ENOTFOUND);
    assert_int_equal(fb_outcome_parse("", &o), FB_ENOTFOUND);
    assert_int_equal(fb_outcome_parse(NULL, &o), FB_EINVAL);
    assert_string_equal(fb_outcome_name(FB_OUT_COUNT), "unknown");
}

static void classify_permanent_trips_counts_every_error(void **state) {
    (void)state;
    fb_classifier c;
    assert_int_equal(fb_classify_init(&c, &(fb_classify_config){.permanent_trips = FB_ON}), FB_OK);
    fb_reply r = {.status = 400, .should_retry = -1};
    assert_int_equal(fb_classify(&c, &r).effect, FB_EFFECT_FAILURE);
    r.error_kind = FB_ERRKIND_CONTENT_POLICY;
    assert_int_equal(fb_classify(&c, &r).effect, FB_EFFECT_FAILURE);
    /* still not retryable and policy still never falls back */
    assert_false(fb_classify(&c, &r).retryable);
    assert_false(fb_classify(&c, &r).may_fallback);
    assert_int_equal(fb_classify_init(&c, &(fb_classify_config){.permanent_trips = FB_OFF}), FB_OK);
    assert_int_equal(fb_classify(&c, &r).effect, FB_EFFECT_SUCCESS);
    assert_int_equal(fb_classify_init(&c, &(fb_classify_config){.permanent_trips = 7}), FB_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify_permanent_trips_counts_every_error),
        cmocka_unit_test(classify_2xx_is_success),
        cmocka_unit_test(classify_408_and_409_are_transient_and_retryable),
        cmocka_unit_test(classify_429_is_rate_limited_and_ignored_by_breaker),
        cmocka_unit_test(classify_rate_limit_trips_switch_makes_429_a_failure),
        cmocka_unit_test(classify_5xx_and_529_overloaded_are_transient),
        cmocka_unit_test(classify_4xx_are_permanent_and_never_trip),
        cmocka_unit_test(classify_unexpected_statuses_are_permanent),
        cmocka_unit_test(classify_400_context_length_falls_back_without_retry),
        cmocka_unit_test(classify_content_policy_is_policy_and_never_falls_back),
        cmocka_unit_test(classify_retryable_status_wins_over_error_kind),
        cmocka_unit_test(classify_connect_reset_other_transport_errors_are_transient),
        cmocka_unit_test(classify_transport_timeout_is_timeout_and_trips),
        cmocka_unit_test(classify_timeout_trips_off_ignores_timeouts),
        cmocka_unit_test(classify_transport_error_wins_over_status),
        cmocka_unit_test(classify_no_status_without_transport_error_is_transient),
        cmocka_unit_test(classify_should_retry_false_overrides_retryable_only),
        cmocka_unit_test(classify_should_retry_true_makes_a_400_retryable),
        cmocka_unit_test(classify_should_retry_ignored_when_switched_off),
        cmocka_unit_test(classify_should_retry_never_makes_a_success_retryable),
        cmocka_unit_test(classify_failure_after_first_token_is_classified_as_before),
        cmocka_unit_test(classify_anthropic_in_band_overloaded_event_is_transient),
        cmocka_unit_test(classify_in_band_errors_map_like_their_status),
        cmocka_unit_test(classify_finish_reason_content_filter_is_a_success),
        cmocka_unit_test(classify_cancelled_is_never_produced_and_ignored),
        cmocka_unit_test(classify_may_fallback_defaults),
        cmocka_unit_test(classify_a_refusal_inside_is_rejected_and_may_fall_back),
        cmocka_unit_test(classify_table_edited_after_init_changes_decisions),
        cmocka_unit_test(classify_init_rejects_bad_switches),
        cmocka_unit_test(error_kind_openai_context_length_exceeded),
        cmocka_unit_test(error_kind_anthropic_prompt_is_too_long),
        cmocka_unit_test(error_kind_content_policy_codes),
        cmocka_unit_test(error_kind_rate_limit_spellings),
        cmocka_unit_test(error_kind_overloaded_error),
        cmocka_unit_test(error_kind_none_when_empty_and_other_when_unknown),
        cmocka_unit_test(outcome_names_round_trip),
        cmocka_unit_test(outcome_parse_rejects_unknown_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
