/* test_layers.c - requests through stacks of layers: application, gateway, SDK. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

static sim_summary *run(const sim_scenario *sc, const char *variant) {
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    int v = scn_variant(sc, variant);
    assert_true(v >= 0);
    sim_run_opts opts = {NULL, NULL, NULL, NULL, 0, true, NULL};
    sim_error err;
    if (sim_run(sc, (uint32_t)v, &opts, s, &err) != FB_OK) fail_msg("run %s: %s", variant, err.msg);
    assert_true(s->complete);
    return s;
}

static double metric(const sim_scenario *sc, const sim_summary *s, const char *name) {
    double v = 0;
    char msg[200];
    if (sim_metric_value(sc, s, name, &v, NULL, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    return v;
}

/* 100 requests (10/s for 10 s) against provider a, down with 503 the whole time. */
#define OUTAGE_HEAD                                                                                \
    "{\"name\":\"nest\",\"seed\":1,\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","         \
    "\"arrivals\":{\"constant\":\"10/s\"},\"prompt_tokens\":100,\"completion_tokens\":10}],"       \
    "\"pods\":{\"count\":1,\"workers\":1000,\"queue\":10,\"request_timeout\":\"600s\"},"           \
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"10ms\",\"error\":\"1ms\"},"            \
    "\"faults\":[{\"at\":\"0s\",\"for\":\"10s\",\"outage\":{\"status\":503}}]},"                   \
    "{\"name\":\"b\",\"latency\":{\"ttft\":\"10ms\"}}],"

#define R3 "\"retry\":{\"attempts\":3,\"backoff\":{\"constant\":\"1ms\"},\"jitter\":\"none\"}"

static const char nested[] =
    OUTAGE_HEAD "\"variants\":{"
                "\"one\":{" R3 ",\"fallback\":[\"a\"]},"
                "\"one_layered\":{\"layers\":[{\"name\":\"only\"," R3 ",\"fallback\":[\"a\"]}]},"
                "\"three\":{\"layers\":[{\"name\":\"app\"," R3 "},{\"name\":\"gateway\"," R3
                ",\"fallback\":[\"a\"]},{\"name\":\"sdk\"," R3 "}]}}}";

/* Three layers of three attempts on an outage: (1 + 2)^3 = 27 calls upstream per request. */
static void layers_multiply_attempts_on_an_outage(void **state) {
    (void)state;
    sim_scenario *sc = th_load(nested);
    sim_summary *one = run(sc, "one"), *three = run(sc, "three");
    assert_int_equal(one->requests, 100);
    assert_int_equal(one->attempts, 300);
    assert_int_equal(three->requests, 100);
    assert_int_equal(three->attempts, 2700);
    assert_true(metric(sc, three, "amplification") == 27.0);
    assert_true(metric(sc, one, "amplification") == 3.0);
    /* each layer: what it received and made */
    assert_true(metric(sc, three, "layer_calls[app]") == 100);
    assert_true(metric(sc, three, "layer_attempts[app]") == 300);
    assert_true(metric(sc, three, "layer_calls[gateway]") == 300);
    assert_true(metric(sc, three, "layer_attempts[gateway]") == 900);
    assert_true(metric(sc, three, "layer_calls[sdk]") == 900);
    assert_true(metric(sc, three, "layer_attempts[sdk]") == 2700);
    assert_true(metric(sc, three, "layer_amplification[sdk]") == 3.0);
    assert_true(metric(sc, three, "layer_retries[app]") == 200);
    assert_true(metric(sc, three, "layer_retries[sdk]") == 1800);
    assert_int_equal(three->ended[SIM_END_EXHAUSTED], 100);
    assert_int_equal(three->providers[0].attempts, 2700);
    free(one);
    free(three);
    scn_free(sc);
}

/* One layer written as a stack is the same run as the policy written plainly. */
static void a_stack_of_one_is_the_plain_policy(void **state) {
    (void)state;
    sim_scenario *sc = th_load(nested);
    sim_summary *a = run(sc, "one"), *b = run(sc, "one_layered");
    for (const sim_metric *m = sim_metrics(); m->name; m++) {
        if (m->per_provider || m->per_layer || m->per_class) continue;
        double x = sim_metric_row(m, sc, a, 0), y = sim_metric_row(m, sc, b, 0);
        if (x != y && !(sim_metric_is_na(x) && sim_metric_is_na(y)))
            fail_msg("%s differs", m->name);
    }
    assert_memory_equal(a->providers, b->providers, sizeof a->providers);
    assert_true(metric(sc, b, "layer_attempts[only]") == 300);
    assert_false(sc->variants[0].layered);
    assert_true(sc->variants[1].layered);
    free(a);
    free(b);
    scn_free(sc);
}

/* An application retrying a gateway that falls back between SDK clients. */
static const char routed[] = OUTAGE_HEAD "\"variants\":{\"stack\":{\"layers\":["
                                         "{\"name\":\"app\",\"retry\":{\"attempts\":2}},"
                                         "{\"name\":\"gateway\",\"fallback\":[\"a\",\"b\"]},"
                                         "{\"name\":\"sdk\"," R3 "}]}}}";

static void the_router_chooses_and_the_layers_inside_pass_it_through(void **state) {
    (void)state;
    sim_scenario *sc = th_load(routed);
    const sim_policy *pol = &sc->variants[0];
    assert_int_equal(pol->stack.router, 1);
    assert_int_equal(pol->layers[0].role, SIM_ROLE_OUTER);
    assert_int_equal(pol->layers[1].role, SIM_ROLE_ROUTER);
    assert_int_equal(pol->layers[2].role, SIM_ROLE_INNER);
    sim_summary *s = run(sc, "stack");
    /* the SDK tries a three times, the gateway moves to b, which answers */
    assert_int_equal(s->providers[0].attempts, 300);
    assert_int_equal(s->providers[1].attempts, 100);
    assert_int_equal(s->success_fallback, 100);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 100);
    assert_true(metric(sc, s, "layer_attempts[app]") == 100);
    assert_int_equal(s->layers[1].attempts_to[0], 100);
    assert_int_equal(s->layers[1].attempts_to[1], 100);
    assert_int_equal(s->layers[2].attempts_to[0], 300);
    assert_int_equal(s->layers[2].attempts_to[1], 100);
    assert_true(metric(sc, s, "layer_fallbacks[gateway]") == 100);
    free(s);
    scn_free(sc);
}

/* The application gives up on each whole inner request after 50 ms: the SDK's attempts go with it.
 */
static const char timed[] =
    "{\"name\":\"t\",\"seed\":1,\"duration\":\"1s\",\"traffic\":[{\"class\":\"chat\","
    "\"arrivals\":{\"constant\":\"10/s\"},\"prompt_tokens\":100,\"completion_tokens\":10}],"
    "\"pods\":{\"count\":1,\"workers\":100,\"queue\":10,\"request_timeout\":\"60s\"},"
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"10ms\"},"
    "\"faults\":[{\"at\":\"0s\",\"for\":\"1s\",\"hang\":{}}]}],"
    "\"variants\":{\"v\":{\"layers\":["
    "{\"name\":\"app\",\"retry\":{\"attempts\":2,\"attempt_timeout\":\"50ms\","
    "\"backoff\":{\"constant\":\"10ms\"},\"jitter\":\"none\"}},"
    "{\"name\":\"sdk\",\"retry\":{\"attempts\":3,\"attempt_timeout\":\"1s\"}}]}}}";

static void an_outer_timeout_cancels_the_request_inside(void **state) {
    (void)state;
    sim_scenario *sc = th_load(timed);
    sim_summary *s = run(sc, "v");
    assert_int_equal(s->requests, 10);
    /* two app attempts, each one SDK call that hangs until the app gives up at 50 ms */
    assert_int_equal(s->providers[0].attempts, 20);
    assert_int_equal(s->ended[SIM_END_EXHAUSTED], 10);
    /* 50 ms, a 10 ms wait, 50 ms: every request ends at 110 ms */
    assert_int_equal(fb_hist_min(&s->latency), 110 * MS);
    assert_int_equal(fb_hist_max(&s->latency), 110 * MS);
    free(s);
    scn_free(sc);
}

/*
 * Two classes share the gateway (one breaker state); batch adds its own
 * application layer. The gateway's breaker opens on chat's failures and
 * then rejects batch too; the batch layer sees "rejected" and the request
 * ends as breaker_open.
 */
static const char shared[] =
    "{\"name\":\"s\",\"seed\":3,\"duration\":\"20s\",\"traffic\":["
    "{\"class\":\"chat\",\"arrivals\":{\"constant\":\"20/s\"},\"prompt_tokens\":10,"
    "\"completion_tokens\":5},"
    "{\"class\":\"batch\",\"arrivals\":{\"constant\":\"5/s\"},\"prompt_tokens\":10,"
    "\"completion_tokens\":5}],"
    "\"pods\":{\"count\":1,\"workers\":1000,\"queue\":10,\"request_timeout\":\"60s\"},"
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"5ms\",\"error\":\"1ms\"},"
    "\"faults\":[{\"at\":\"0s\",\"for\":\"20s\",\"outage\":{\"status\":500}}]}],"
    "\"variants\":{\"v\":{\"layers\":["
    "{\"name\":\"gateway\",\"fallback\":[\"a\"],"
    "\"breaker\":{\"consecutive_failures\":5,\"open\":\"1h\"}},"
    "{\"name\":\"sdk\",\"retry\":{\"attempts\":1}}],"
    "\"classes\":{\"batch\":{\"layers\":[{\"name\":\"batchapp\",\"retry\":{\"attempts\":2,"
    "\"backoff\":\"none\"}},\"gateway\",\"sdk\"]}}}}}";

static void classes_share_a_named_layer_and_its_breaker(void **state) {
    (void)state;
    sim_scenario *sc = th_load(shared);
    const sim_policy *pol = &sc->variants[0];
    assert_int_equal(pol->layer_count, 3);
    assert_int_equal(pol->class_stack[1].depth, 3);
    assert_int_equal(pol->class_stack[0].depth, 0);
    assert_int_equal(scn_policy_stack(pol, 0)->depth, 2);
    assert_int_equal(pol->layers[2].role, SIM_ROLE_OUTER);
    sim_summary *s = run(sc, "v");
    /*
     * Five failures open the one breaker: chat at 0 s, batch at 0 s and its
     * retry (a 500 is retryable), chat at 50 ms and 100 ms. Everything after
     * is rejected without a call, and "rejected" is not retryable by default,
     * so batchapp makes one attempt for each later request.
     */
    assert_int_equal(s->providers[0].attempts, 5);
    assert_int_equal(s->providers[0].breaker_opens, 1);
    assert_true(metric(sc, s, "layer_calls[batchapp]") == 100);
    assert_true(metric(sc, s, "layer_attempts[batchapp]") == 101);
    assert_true(metric(sc, s, "layer_calls[gateway]") == 501);
    assert_int_equal(s->ended[SIM_END_EXHAUSTED], 4);
    assert_int_equal(s->ended[SIM_END_BREAKER_OPEN], 496);
    free(s);
    scn_free(sc);
}

static void expect_error(const char *variants, const char *path, const char *fragment) {
    char text[4096];
    snprintf(text, sizeof text, "%s\"variants\":{%s}}", OUTAGE_HEAD, variants);
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = scn_parse(text, strlen(text), "t.json", NULL, 0, NULL, &sc, &err);
    if (rc == FB_OK) fail_msg("accepted: %s", variants);
    if (strcmp(err.path, path) != 0)
        fail_msg("path '%s', wanted '%s' (%s)", err.path, path, err.msg);
    if (strstr(err.msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, fragment);
}

/* retry_on decides alone: listed statuses and outcomes retry, nothing else does. */
static const char listed[] = OUTAGE_HEAD
    "\"variants\":{"
    "\"table\":{" R3 ",\"fallback\":[\"a\"]},"
    "\"only_429\":{\"retry\":{\"attempts\":3,\"retry_on\":[429,\"timeout\"]},"
    "\"fallback\":[\"a\"]},"
    "\"and_503\":{\"retry\":{\"attempts\":3,\"backoff\":\"none\",\"retry_on\":[429,503]},"
    "\"fallback\":[\"a\"]},"
    "\"permanent_too\":{\"retry\":{\"attempts\":3,\"backoff\":\"none\","
    "\"retry_on\":[\"transient\"]},\"fallback\":[\"a\"]}}}";

static void retry_on_lists_what_retries(void **state) {
    (void)state;
    sim_scenario *sc = th_load(listed);
    sim_summary *a = run(sc, "table"), *b = run(sc, "only_429"), *c = run(sc, "and_503"),
                *d = run(sc, "permanent_too");
    assert_int_equal(a->attempts, 300); /* a 503 retries by the default table */
    assert_int_equal(b->attempts, 100); /* ... not when only 429 and timeouts are listed */
    assert_int_equal(c->attempts, 300);
    assert_int_equal(d->attempts, 300); /* a 503 is a transient outcome */
    free(a);
    free(b);
    free(c);
    free(d);
    scn_free(sc);
    expect_error("\"v\":{\"retry\":{\"retry_on\":[429,\"sucess\"]}}",
                 "variants.v.retry.retry_on[1]", "an HTTP status or an outcome");
    expect_error("\"v\":{\"retry\":{\"retry_on\":[42]}}", "variants.v.retry.retry_on[0]",
                 "100..599");
}

/*
 * The retry controls of the published simulations on the same outage: a bucket
 * that every request fills by 0.1 and every retry drains by 1 lets about one
 * retry in ten requests through; a retry breaker, with failures far above 10%
 * of requests, lets none; neither ever refuses a first try.
 */
static const char controls[] = OUTAGE_HEAD
    "\"variants\":{"
    "\"plain\":{\"retry\":{\"attempts\":5,\"backoff\":\"none\"},\"fallback\":[\"a\"]},"
    "\"deposit\":{\"retry\":{\"attempts\":5,\"backoff\":\"none\",\"budget\":{\"deposit\":"
    "{\"max\":1,\"deposit\":0.1,\"cost\":1}}},\"fallback\":[\"a\"]},"
    "\"breaker\":{\"retry\":{\"attempts\":5,\"backoff\":\"none\",\"budget\":{\"retry_breaker\":"
    "{\"window\":\"10s\",\"failure_ratio\":0.1,\"minimum_requests\":5}}},\"fallback\":[\"a\"]}}}";

static void retry_controls_bound_amplification_in_an_outage(void **state) {
    (void)state;
    sim_scenario *sc = th_load(controls);
    sim_summary *p = run(sc, "plain"), *d = run(sc, "deposit"), *b = run(sc, "breaker");
    assert_int_equal(p->attempts, 500);
    /* the bucket starts with 1 token: 1 retry, then one per 10 requests (99 x 0.1 = 9.9) */
    assert_int_equal(d->attempts, 100 + 1 + 9);
    /* and every request ends on a refusal: at its first retry, or at the one after */
    assert_int_equal(d->budget_refusals, 100);
    /* every first try fails: after 5 requests the ratio is far above 0.1 */
    assert_true(b->attempts >= 100 && b->attempts <= 100 + 4 * 4);
    assert_int_equal(d->requests, 100);
    free(p);
    free(d);
    free(b);
    scn_free(sc);
}

/* ---- the loader's rules for stacks ---- */

static void stacks_have_one_routing_layer(void **state) {
    (void)state;
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\",\"fallback\":[\"a\"]},"
                 "{\"name\":\"y\",\"fallback\":[\"b\"]}]}",
                 "variants.v", "both declare a fallback chain");
}

static void policy_keys_belong_inside_layers(void **state) {
    (void)state;
    expect_error("\"v\":{\"retry\":{\"attempts\":2},\"layers\":[{\"name\":\"x\"}]}",
                 "variants.v.retry", "belongs inside a layer");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\",\"retires\":{}}]}",
                 "variants.v.layers[0].retires", "unknown key 'retires'");
}

static void layers_have_names_and_places(void **state) {
    (void)state;
    expect_error("\"v\":{\"layers\":[{\"retry\":{\"attempts\":2}}]}", "variants.v.layers[0]",
                 "name");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\"},{\"name\":\"x\"}]}", "variants.v.layers[1]",
                 "already has a layer named 'x'");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\"},{\"name\":\"y\",\"degraded\":true}]}",
                 "variants.v", "only the outermost layer");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\",\"stream\":\"resume\"},{\"name\":\"y\"}]}",
                 "variants.v", "only the innermost layer can resume");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\",\"overrides\":{\"a\":{\"timeout\":\"1s\"}}},"
                 "{\"name\":\"y\",\"fallback\":[\"a\"]}]}",
                 "variants.v", "outside the routing layer");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\"},{\"name\":\"y\"},{\"name\":\"z\"},"
                 "{\"name\":\"w\"},{\"name\":\"u\"}]}",
                 "variants.v.layers[4]", "at most 4 layers in a stack");
}

static void class_stacks_name_the_variants_layers(void **state) {
    (void)state;
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\"}],\"classes\":{\"chat\":{\"layers\":"
                 "[\"nope\"]}}}",
                 "variants.v.classes.chat.layers[0]", "no layer named 'nope'");
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\"}],\"classes\":{\"chatt\":{\"layers\":"
                 "[\"x\"]}}}",
                 "variants.v.classes.chatt", "no traffic class named 'chatt'");
    /* x routes in the variant's stack, and would sit inside y in chat's */
    expect_error("\"v\":{\"layers\":[{\"name\":\"x\"}],\"classes\":{\"chat\":{\"layers\":"
                 "[{\"name\":\"y\",\"fallback\":[\"a\"]},\"x\"]}}}",
                 "variants.v", "different place");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layers_multiply_attempts_on_an_outage),
        cmocka_unit_test(a_stack_of_one_is_the_plain_policy),
        cmocka_unit_test(the_router_chooses_and_the_layers_inside_pass_it_through),
        cmocka_unit_test(an_outer_timeout_cancels_the_request_inside),
        cmocka_unit_test(classes_share_a_named_layer_and_its_breaker),
        cmocka_unit_test(retry_on_lists_what_retries),
        cmocka_unit_test(retry_controls_bound_amplification_in_an_outage),
        cmocka_unit_test(stacks_have_one_routing_layer),
        cmocka_unit_test(policy_keys_belong_inside_layers),
        cmocka_unit_test(layers_have_names_and_places),
        cmocka_unit_test(class_stacks_name_the_variants_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
