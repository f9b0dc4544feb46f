/* test_scenario.c - the scenario loader: values, defaults, and every kind of bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"
#include "tests/unit/helpers.h"

#define MINIMAL_PROVIDERS "\"providers\":[{\"name\":\"openai\"},{\"name\":\"anthropic\"}]"
#define MINIMAL_TRAFFIC "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"10/s\"}}]"

/* Parse text expected to fail; check the reported path and a fragment of the message. */
static void parse_bad(const char *text, const char *path, const char *fragment) {
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = scn_parse(text, strlen(text), "bad.json", NULL, 0, NULL, &sc, &err);
    if (rc == FB_OK) fail_msg("accepted: %s", text);
    assert_null(sc);
    assert_string_equal(err.file, "bad.json");
    if (strcmp(err.path, path) != 0)
        fail_msg("path '%s', expected '%s' (%s)", err.path, path, err.msg);
    if (strstr(err.msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, fragment);
}

/* Regression (tests/e2e/stress.sh): the durations were printed in whole hours, "0h ... (0h)". */
static void scenario_duration_limit_names_both_durations(void **state) {
    (void)state;
    parse_bad(
        "{\"name\":\"m\",\"duration\":\"1m\",\"limits\":{\"duration\":\"30s\"}," MINIMAL_TRAFFIC
        "," MINIMAL_PROVIDERS "}",
        "duration", "1m of simulated traffic exceeds limits.duration (30s)");
    parse_bad(
        "{\"name\":\"m\",\"duration\":\"2h\",\"limits\":{\"duration\":\"90m\"}," MINIMAL_TRAFFIC
        "," MINIMAL_PROVIDERS "}",
        "duration", "2h of simulated traffic exceeds limits.duration (90m)");
}

static void scenario_durations_parse_with_units(void **state) {
    (void)state;
    fb_time_us d;
    assert_int_equal(scn_parse_duration("250ms", &d), FB_OK);
    assert_int_equal(d, 250000);
    assert_int_equal(scn_parse_duration("1.5s", &d), FB_OK);
    assert_int_equal(d, 1500000);
    assert_int_equal(scn_parse_duration("5m", &d), FB_OK);
    assert_int_equal(d, 300000000);
    assert_int_equal(scn_parse_duration("2h", &d), FB_OK);
    assert_int_equal(d, 7200000000LL);
    assert_int_equal(scn_parse_duration("100us", &d), FB_OK);
    assert_int_equal(d, 100);
    assert_int_equal(scn_parse_duration("0s", &d), FB_OK);
    assert_int_equal(d, 0);
    assert_int_equal(scn_parse_duration("30", &d), FB_EPARSE);
    assert_int_equal(scn_parse_duration("-5s", &d), FB_EPARSE);
    assert_int_equal(scn_parse_duration("5 s", &d), FB_EPARSE);
    assert_int_equal(scn_parse_duration("s", &d), FB_EPARSE);
    assert_int_equal(scn_parse_duration("", &d), FB_EPARSE);
    assert_int_equal(scn_parse_duration("99999999999999999999h", &d), FB_ERANGE);
}

/* Go's form: several number-unit pairs, largest unit first, each unit once. */
static void scenario_durations_compound(void **state) {
    (void)state;
    fb_time_us d;
    assert_int_equal(scn_parse_duration("20m15s", &d), FB_OK);
    assert_int_equal(d, 1215000000LL);
    assert_int_equal(scn_parse_duration("1h30m", &d), FB_OK);
    assert_int_equal(d, 5400000000LL);
    assert_int_equal(scn_parse_duration("1m0.5s", &d), FB_OK);
    assert_int_equal(d, 60500000);
    assert_int_equal(scn_parse_duration("1d2h3min4s5ms6us", &d), FB_OK);
    assert_int_equal(d, 93784005006LL);
    assert_int_equal(scn_parse_duration("5ms", &d), FB_OK); /* "ms", not "m" then "s" */
    assert_int_equal(d, 5000);
    assert_int_equal(scn_parse_duration("15s20m", &d), FB_EPARSE); /* smaller unit first */
    assert_int_equal(scn_parse_duration("1h1h", &d), FB_EPARSE);   /* a unit twice */
    assert_int_equal(scn_parse_duration("1m5", &d), FB_EPARSE);    /* the last needs a unit */
    assert_int_equal(scn_parse_duration("1m-5s", &d), FB_EPARSE);
    assert_int_equal(scn_parse_duration("1m 5s", &d), FB_EPARSE);
}

static void scenario_rates_parse_per_unit(void **state) {
    (void)state;
    double r;
    assert_int_equal(scn_parse_rate("40/s", &r), FB_OK);
    assert_true(r == 40.0);
    assert_int_equal(scn_parse_rate("2400/m", &r), FB_OK);
    assert_true(r == 40.0);
    assert_int_equal(scn_parse_rate("7200/h", &r), FB_OK);
    assert_true(r == 2.0);
    assert_int_equal(scn_parse_rate("3", &r), FB_OK);
    assert_true(r == 3.0);
    assert_int_equal(scn_parse_rate("-3/s", &r), FB_EPARSE);
    assert_int_equal(scn_parse_rate("3/week", &r), FB_EPARSE);
}

static void scenario_minimal_gets_documented_defaults(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS "}");
    assert_string_equal(sc->name, "m");
    assert_int_equal(sc->seed, 1);
    assert_int_equal(sc->duration_us, 60 * FB_US_PER_S);
    assert_int_equal(sc->tick_us, FB_US_PER_S);
    assert_int_equal(sc->pods.count, 1);
    assert_int_equal(sc->pods.workers, 64);
    assert_int_equal(sc->pods.queue, 100);
    assert_int_equal(sc->pods.request_timeout_us, 60 * FB_US_PER_S);
    assert_int_equal(sc->variant_count, 1);
    assert_string_equal(sc->variants[0].name, "default");
    /* default chain: every LLM provider in the order listed, one attempt */
    assert_int_equal(sc->variants[0].layers[0].order_len, 2);
    assert_int_equal(sc->variants[0].layers[0].retry.attempts, 1);
    assert_false(sc->variants[0].layers[0].per_provider[0].has_breaker);
    assert_true(sc->classes[0].rate == 10.0);
    assert_int_equal(sc->classes[0].target, SIM_TARGET_LLM);
    assert_int_equal(sc->providers[0].queue, 1000);
    assert_true(sc->providers[0].keeps_working);
    assert_int_equal(sc->slo_latency_us, 10 * FB_US_PER_S);
    scn_free(sc);
}

static void scenario_flagship_file_loads(void **state) {
    (void)state;
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = scn_load("scenarios/retry-storm.json", NULL, 0, NULL, &sc, &err);
    if (rc != FB_OK) fail_msg("%s: %s: %s", err.file, err.path, err.msg);
    assert_int_equal(sc->variant_count, 2);
    assert_string_equal(sc->variants[0].name, "naive");
    assert_string_equal(sc->variants[1].name, "tuned");
    /* the tuned variant merged the base policy's fallback chain */
    assert_int_equal(sc->variants[1].layers[0].order_len, 2);
    assert_true(sc->variants[1].layers[0].per_provider[0].has_breaker);
    assert_int_equal(sc->variants[1].layers[0].per_provider[0].breaker.mode,
                     FB_BREAKER_MODE_TIME_WINDOW);
    assert_int_equal(sc->variants[1].layers[0].per_provider[0].breaker.window_us, 30 * FB_US_PER_S);
    assert_int_equal(sc->variants[1].layers[0].budget.kind, FB_BUDGET_TOKEN_BUCKET);
    assert_int_equal(sc->variants[0].layers[0].retry.backoff, FB_BACKOFF_NONE);
    assert_int_equal(sc->providers[0].faults[0].kind, SIM_FAULT_OUTAGE);
    assert_int_equal(sc->providers[0].faults[0].at_us, 5 * FB_US_PER_MIN);
    assert_int_equal(sc->providers[0].faults[0].for_us, 18 * FB_US_PER_MIN);
    assert_int_equal(sc->providers[0].faults[0].status, 503);
    scn_free(sc);
}

static void scenario_unknown_key_suggests_the_closest(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duraton\":\"1m\"}", "duraton", "did you mean 'duration'");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"capacity\":{\"concurency\":3}}]}",
              "providers[0].capacity.concurency", "did you mean 'concurrency'");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"variants\":{\"v\":{\"breaker\":{\"failure_rat\":0.5,\"window\":\"10s\"}}}}",
              "variants.v.breaker.failure_rat", "did you mean 'failure_rate'");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"zzzzzz\":1}", "zzzzzz", "unknown key");
}

static void scenario_negative_duration_is_rejected_with_its_path(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"-1m\"}", "duration", "negative");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"-5s\",\"for\":\"1m\","
              "\"hang\":{}}]}]}",
              "providers[0].faults[0].at", "negative");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"5s\",\"for\":\"0s\","
              "\"hang\":{}}]}]}",
              "providers[0].faults[0].for", "greater than zero");
}

static void scenario_wrong_types_name_what_was_expected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":60}", "duration", "expected a duration string");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"seed\":\"x\"}", "seed", "expected an integer");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"seed\":1.5}", "seed", "expected an integer");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":{}," MINIMAL_PROVIDERS "}",
              "traffic", "expected an array");
}

/* Impossible values, one test each. */

static void scenario_fault_fraction_above_one_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"5s\",\"for\":\"1m\","
              "\"outage\":{\"fraction\":1.5}}]}]}",
              "providers[0].faults[0].outage.fraction", "out of range");
}

static void scenario_provider_listed_twice_in_the_fallback_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"policy\":{\"fallback\":[\"openai\",\"openai\"]}}",
              "policy.fallback[1]", "listed twice");
}

static void scenario_misspelt_fallback_provider_gets_a_suggestion(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"policy\":{\"fallback\":[\"opneai\"]}}",
              "policy.fallback[0]", "did you mean \"openai\"");
}

static void scenario_breaker_window_that_does_not_divide_into_buckets_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"policy\":{\"breaker\":{\"window\":\"10s\",\"buckets\":3}}}",
              "policy.breaker", "divide into 3 equal buckets");
}

static void scenario_misspelt_jitter_gets_a_suggestion(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"policy\":{\"retry\":{\"jitter\":\"fulll\"}}}",
              "policy.retry.jitter", "did you mean \"full\"");
}

#define REPLAY(at) "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"replay\":" at "}}]"
#define REPLAY_DOC(at) "{\"name\":\"m\",\"duration\":\"10s\"," REPLAY(at) "," MINIMAL_PROVIDERS "}"

static void scenario_replayed_arrivals_load_in_microseconds(void **state) {
    (void)state;
    sim_scenario *sc = th_load(REPLAY_DOC("{\"at_ms\":[0,1.5,1.5,9999.999]}"));
    const sim_class *c = &sc->classes[0];
    assert_int_equal(c->arrivals, SIM_ARR_REPLAY);
    assert_int_equal(c->replay_count, 4);
    assert_int_equal(c->replay_us[0], 0);
    assert_int_equal(c->replay_us[1], 1500);
    assert_int_equal(c->replay_us[2], 1500);
    assert_int_equal(c->replay_us[3], 9999999);
    scn_free(sc);
}

static void scenario_replayed_arrivals_out_of_order_are_rejected(void **state) {
    (void)state;
    parse_bad(REPLAY_DOC("{\"at_ms\":[5,4]}"), "traffic[0].arrivals.replay.at_ms[1]",
              "in time order");
}

static void scenario_replayed_arrival_past_the_end_is_rejected(void **state) {
    (void)state;
    parse_bad(REPLAY_DOC("{\"at_ms\":[10000]}"), "traffic[0].arrivals.replay.at_ms[0]",
              "at or after the end of traffic");
}

static void scenario_replayed_arrival_before_the_start_is_rejected(void **state) {
    (void)state;
    parse_bad(REPLAY_DOC("{\"at_ms\":[-1]}"), "traffic[0].arrivals.replay.at_ms[0]",
              "before the start");
}

static void scenario_replayed_arrival_that_is_no_number_is_rejected(void **state) {
    (void)state;
    parse_bad(REPLAY_DOC("{\"at_ms\":[\"1s\"]}"), "traffic[0].arrivals.replay.at_ms[0]",
              "expected a number of milliseconds");
}

static void scenario_replay_without_times_is_rejected(void **state) {
    (void)state;
    parse_bad(REPLAY_DOC("{}"), "traffic[0].arrivals.replay", "missing required key 'at_ms'");
    parse_bad(REPLAY_DOC("{\"at_ms\":5}"), "traffic[0].arrivals.replay.at_ms", "expected an array");
}

static void scenario_replayed_sessions_load_and_need_their_keys(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        REPLAY_DOC("{\"at_ms\":[0,10],\"turns\":[3,1],\"think\":{\"exponential\":\"5s\"}}"));
    const sim_class *c = &sc->classes[0];
    assert_int_equal(c->turns_count, 2);
    assert_int_equal(c->turns[0], 3);
    assert_int_equal(c->turns[1], 1);
    assert_true(c->rate > 0.4 - 1e-9 && c->rate < 0.4 + 1e-9); /* 4 requests over 10 s */
    scn_free(sc);
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2]}"), "traffic[0].arrivals.replay",
              "think is missing");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"think\":\"1s\"}"), "traffic[0].arrivals.replay",
              "turns is missing");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0,1],\"turns\":[2],\"think\":\"1s\"}"),
              "traffic[0].arrivals.replay", "\"turns\" has 1 sessions and \"at_ms\" 2 starts");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[0],\"think\":\"1s\"}"),
              "traffic[0].arrivals.replay.turns[0]", "an integer from 1");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[1.5],\"think\":\"1s\"}"),
              "traffic[0].arrivals.replay.turns[0]", "an integer from 1");
}

/* Recorded think times (think_ms) are used in order, session by session, in place of draws:
   session 0's second gap of 20 s pushes its third request past the end of traffic, which the
   1 ms think drawn would not; they need sessions and one per gap. */
static void scenario_sessions_use_their_recorded_think_times(void **state) {
    (void)state;
    sim_scenario *sc = th_load(REPLAY_DOC("{\"at_ms\":[0,10],\"turns\":[3,2],\"think\":\"1ms\","
                                          "\"think_ms\":[100,20000,0.5]}"));
    const sim_class *c = &sc->classes[0];
    assert_int_equal(c->think_rec_count, 3);
    assert_int_equal(c->think_rec_us[1], 20000000);
    assert_int_equal(c->think_rec_us[2], 500);
    sim_summary *sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->requests, 4); /* 2 of session 0's 3, both of session 1's */
    free(sum);
    scn_free(sc);
    sc = th_load(REPLAY_DOC("{\"at_ms\":[0,10],\"turns\":[3,2],\"think\":\"1ms\"}"));
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->requests, 5); /* drawn: every turn in time */
    free(sum);
    scn_free(sc);
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"think_ms\":[1]}"), "traffic[0].arrivals.replay",
              "\"think_ms\" (recorded think times) needs sessions");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0,1],\"turns\":[2,2],\"think\":\"1s\",\"think_ms\":[1]}"),
              "traffic[0].arrivals.replay",
              "\"think_ms\" has 1 think times and the sessions 2 gaps");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"think_ms\":[-1]}"),
              "traffic[0].arrivals.replay.think_ms[0]", "from 0, got a negative number");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"think_ms\":[1e30]}"),
              "traffic[0].arrivals.replay.think_ms[0]", "1e+30 ms: at most 1e12 ms");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"think_ms\":5}"),
              "traffic[0].arrivals.replay.think_ms", "expected an array of think times");
}

/* A replay whose provider is down for the first second, and a retry policy whose waits (100 ms,
   then 200 ms) keep every retry inside it. */
#define RETRY_DOC(replay, variant)                                                                 \
    "{\"name\":\"m\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\",\"arrivals\":"          \
    "{\"replay\":" replay "}}],\"providers\":[{\"name\":\"openai\",\"faults\":[{\"at\":\"0s\","    \
    "\"for\":\"1s\",\"outage\":{\"status\":503}}]}],\"policy\":{\"retry\":{\"attempts\":3,"        \
    "\"backoff\":{\"exponential\":{\"base\":\"100ms\",\"multiplier\":2}},\"jitter\":\"none\"}},"   \
    "\"variants\":{\"v\":" variant "}}"

/* "waits": "recorded": a replayed request's retries start when the log's did, from its own
   arrival (each request its own list, sessions' requests in turn); the policy's waits where the
   log has none; "policy" (the default) ignores the record. */
static void scenario_replayed_retries_start_when_the_logs_did(void **state) {
    (void)state;
    /* request 1's second attempt at 10 + 1500 ms: after the outage, answered */
    sim_scenario *sc = th_load(
        RETRY_DOC("{\"at_ms\":[0,10],\"retry_at_ms\":[[],[1500]]}", "{\"waits\":\"recorded\"}"));
    const sim_class *c = &sc->classes[0];
    assert_int_equal(c->retry_at_count, 2);
    assert_int_equal(c->retry_at_first[1], 0);
    assert_int_equal(c->retry_at_first[2], 1);
    assert_int_equal(c->retry_at_us[0], 1500000);
    assert_true(sc->variants[0].recorded_waits);
    sim_summary *sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->requests, 2);
    assert_int_equal(sum->success_primary, 1); /* request 0: 3 attempts within the outage */
    assert_int_equal(sum->attempts, 5);
    free(sum);
    scn_free(sc);
    sc = th_load(RETRY_DOC("{\"at_ms\":[0,10],\"retry_at_ms\":[[],[1500]]}", "{}"));
    assert_false(sc->variants[0].recorded_waits);
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->success_primary, 0); /* the policy's waits: both within it */
    assert_int_equal(sum->attempts, 6);
    free(sum);
    scn_free(sc);
    /* a session's second request (index 1) retries at its own arrival + 1500 ms */
    sc = th_load(RETRY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1ms\","
                           "\"retry_at_ms\":[[],[1500]]}",
                           "{\"waits\":\"recorded\"}"));
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->requests, 2);
    assert_int_equal(sum->success_primary, 1);
    free(sum);
    scn_free(sc);
    /* a session's second request when the log's started (turn_at_ms), not a think time after
       the first ended (think_ms: 10 ms, inside the outage, as "policy" sends it) */
    const char *turn = "{\"at_ms\":[0],\"turns\":[2],\"think\":\"1ms\",\"think_ms\":[10],"
                       "\"turn_at_ms\":[2000]}";
    char doc[1024];
    snprintf(doc, sizeof doc, RETRY_DOC("%s", "{\"waits\":\"recorded\"}"), turn);
    sc = th_load(doc);
    assert_int_equal(sc->classes[0].turn_at_us[0], 2000000);
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->success_primary, 1);
    free(sum);
    scn_free(sc);
    snprintf(doc, sizeof doc, RETRY_DOC("%s", "{}"), turn);
    sc = th_load(doc);
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->success_primary, 0);
    free(sum);
    scn_free(sc);
    /* a policy that retries at once ("backoff": "none", as the import writes for retries sent
       within 2 ms) still waits until the recorded time */
    sc = th_load("{\"name\":\"m\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","
                 "\"arrivals\":{\"replay\":{\"at_ms\":[0],\"retry_at_ms\":[[1500]]}}}],"
                 "\"providers\":[{\"name\":\"openai\",\"faults\":[{\"at\":\"0s\","
                 "\"for\":\"1s\",\"outage\":{\"status\":503}}]}],\"policy\":{\"retry\":"
                 "{\"attempts\":3,\"backoff\":\"none\"}},\"variants\":{\"v\":{\"waits\":"
                 "\"recorded\"},\"p\":{}}}");
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->success_primary, 1);
    assert_int_equal(sum->attempts, 2);
    free(sum);
    sum = th_run(sc, 1, NULL, NULL); /* the policy's: three attempts at once, in the outage */
    assert_int_equal(sum->success_primary, 0);
    assert_int_equal(sum->attempts, 3);
    free(sum);
    scn_free(sc);
    /* a serial client's calls are the replay's requests in order too */
    sc = th_load("{\"name\":\"m\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","
                 "\"serial\":true,\"arrivals\":{\"replay\":{\"at_ms\":[0,10],"
                 "\"retry_at_ms\":[[],[1500]]}}}],\"providers\":[{\"name\":\"openai\","
                 "\"faults\":[{\"at\":\"0s\",\"for\":\"1s\",\"outage\":{\"status\":503}}]}],"
                 "\"policy\":{\"retry\":{\"attempts\":3,\"backoff\":{\"exponential\":{"
                 "\"base\":\"100ms\",\"multiplier\":2}},\"jitter\":\"none\"}},"
                 "\"variants\":{\"v\":{\"waits\":\"recorded\"}}}");
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->requests, 2);
    assert_int_equal(sum->success_primary, 1); /* the second, at its arrival + 1500 ms */
    free(sum);
    scn_free(sc);
    /* a retry recorded before the attempt ended goes at once: 0 ms is the first's end */
    sc = th_load(RETRY_DOC("{\"at_ms\":[0],\"retry_at_ms\":[[0,0]]}", "{\"waits\":\"recorded\"}"));
    sum = th_run(sc, 0, NULL, NULL);
    assert_int_equal(sum->attempts, 3);
    assert_int_equal(sum->success_primary, 0);
    free(sum);
    scn_free(sc);
}

static void scenario_replayed_retries_need_their_shape(void **state) {
    (void)state;
    parse_bad(REPLAY_DOC("{\"at_ms\":[0,1],\"retry_at_ms\":[[]]}"), "traffic[0].arrivals.replay",
              "\"retry_at_ms\" has 1 requests' retry times and the replay 2 requests");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"retry_at_ms\":[[-1]]}"),
              "traffic[0].arrivals.replay.retry_at_ms[0][0]", "got a negative number");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"retry_at_ms\":[[1e30]]}"),
              "traffic[0].arrivals.replay.retry_at_ms[0][0]", "1e+30 ms: at most 1e12 ms");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"think_ms\":[1],"
                         "\"turn_at_ms\":[1e400]}"),
              "traffic[0].arrivals.replay.turn_at_ms[0]", "inf ms: at most 1e12 ms");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"retry_at_ms\":[[5,4]]}"),
              "traffic[0].arrivals.replay.retry_at_ms[0][1]", "before the retry before it");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"retry_at_ms\":[5]}"),
              "traffic[0].arrivals.replay.retry_at_ms[0]", "expected when the request's retries");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"retry_at_ms\":5}"),
              "traffic[0].arrivals.replay.retry_at_ms", "expected an array of each request's");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"turn_at_ms\":[1]}"),
              "traffic[0].arrivals.replay",
              "\"turn_at_ms\" (when the sessions' requests started) "
              "needs \"think_ms\"");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"think_ms\":[1],"
                         "\"turn_at_ms\":[1,2]}"),
              "traffic[0].arrivals.replay", "(2 for 1)");
    parse_bad(REPLAY_DOC("{\"at_ms\":[0],\"turns\":[2],\"think\":\"1s\",\"think_ms\":[1],"
                         "\"turn_at_ms\":[-1]}"),
              "traffic[0].arrivals.replay.turn_at_ms[0]", "got a negative number");
    parse_bad(RETRY_DOC("{\"at_ms\":[0]}", "{\"waits\":\"recorded\"}"), "variants.v.waits",
              "\"recorded\" needs times recorded in a log");
    parse_bad(RETRY_DOC("{\"at_ms\":[0],\"retry_at_ms\":[[1]]}", "{\"waits\":\"log\"}"),
              "variants.v.waits", "expected \"policy\" or \"recorded\", got log");
    char many[3200] = "{\"at_ms\":[0],\"retry_at_ms\":[[";
    for (int k = 0; k < 256; k++) strcat(many, k ? ",1" : "1");
    strcat(many, "]]}");
    char doc[3600];
    snprintf(doc, sizeof doc, "{\"name\":\"m\",\"duration\":\"10s\",%s%s%s," MINIMAL_PROVIDERS "}",
             "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"replay\":", many, "}}]");
    parse_bad(doc, "traffic[0].arrivals.replay.retry_at_ms[0][255]", "at most 255 retries");
}

static void scenario_replay_with_a_ramp_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"chat\","
              "\"arrivals\":{\"replay\":{\"at_ms\":[1]}},\"ramp\":[{\"at\":\"1s\",\"rate\":1}]}]"
              "," MINIMAL_PROVIDERS "}",
              "traffic[0]", "do not apply to replayed arrivals");
}

static void scenario_replay_over_its_cap_is_rejected(void **state) {
    (void)state;
    /* SIM_REPLAY_MAX + 1 arrivals at 0 ms: the cap is an error, not a silent cut */
    size_t n = SIM_REPLAY_MAX + 1, len = 0;
    char *doc = malloc(2 * n + 256);
    assert_non_null(doc);
    len +=
        (size_t)sprintf(doc, "{\"name\":\"m\",\"duration\":\"10s\",%s",
                        "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"replay\":{\"at_ms\":[");
    for (size_t i = 0; i < n; i++) {
        doc[len++] = '0';
        doc[len++] = i + 1 < n ? ',' : ']';
    }
    len += (size_t)sprintf(doc + len, "}}}],%s}", MINIMAL_PROVIDERS);
    sim_scenario *sc = NULL;
    sim_error err;
    assert_int_not_equal(scn_parse(doc, len, "big.json", NULL, 0, NULL, &sc, &err), FB_OK);
    assert_string_equal(err.path, "traffic[0].arrivals.replay.at_ms[1000000]");
    assert_non_null(strstr(err.msg, "at most 1000000 replayed arrivals"));
    free(doc);
}

static void scenario_name_with_a_space_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"bad name\",\"duration\":\"1m\"}", "name", "letters, digits");
}

static void scenario_two_providers_with_one_name_are_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\"},{\"name\":\"a\"}]}",
              "providers[1]", "two providers are named");
}

static void scenario_missing_required_keys_are_named(void **state) {
    (void)state;
    parse_bad("{\"duration\":\"1m\"}", "", "missing required key 'name'");
    parse_bad("{\"name\":\"m\"}", "", "missing required key 'duration'");
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_PROVIDERS
              ",\"traffic\":[{\"class\":\"c\"}]}",
              "traffic[0]", "missing required key 'arrivals'");
}

static void scenario_invalid_json_reports_line_and_column(void **state) {
    (void)state;
    parse_bad("{\n  \"name\": \"m\",\n  \"duration\": }", "", "line 3");
    parse_bad("", "", "invalid JSON");
}

static void scenario_set_overrides_by_path_and_by_name(void **state) {
    (void)state;
    const char *text = "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
                       ",\"variants\":{\"a\":{},\"b\":{}}}";
    const char *sets[] = {"providers.anthropic.capacity.rpm=600", "variants.b.breaker.open=10s",
                          "traffic[0].arrivals.poisson=5/s", "duration=2m"};
    sim_scenario *sc = th_load_with(text, sets, 4, NULL);
    assert_int_equal(sc->providers[1].rpm, 600);
    assert_int_equal(sc->providers[0].rpm, 0);
    assert_false(sc->variants[0].layers[0].per_provider[0].has_breaker);
    assert_true(sc->variants[1].layers[0].per_provider[0].has_breaker);
    assert_int_equal(sc->variants[1].layers[0].per_provider[0].breaker.open_us, 10 * FB_US_PER_S);
    assert_true(sc->classes[0].rate == 5.0);
    assert_int_equal(sc->duration_us, 2 * FB_US_PER_MIN);
    scn_free(sc);
    /* overrides are validated like the file: an unknown key is still an error, named by --set */
    const char *bad[] = {"providers.openai.capacity.rmp=600"};
    sim_error err;
    int rc = scn_parse(text, strlen(text), "t.json", bad, 1, NULL, &sc, &err);
    assert_int_equal(rc, FB_EINVAL);
    assert_string_equal(err.path, "");
    assert_string_equal(err.msg, "--set providers.openai.capacity.rmp=600: "
                                 "providers.openai.capacity.rmp: unknown key 'rmp'");
    const char *noelem[] = {"providers.nope.capacity.rpm=1"};
    rc = scn_parse(text, strlen(text), "t.json", noelem, 1, NULL, &sc, &err);
    assert_int_equal(rc, FB_EINVAL);
    assert_non_null(strstr(err.msg, "no element named 'nope' (the names there: openai, "));
}

/* A --set path through a variant's layers that names a layer of its gateway tier says where it
 * is (issue 22: --grid layers.proxy.KEY on a tier's layer). */
static void scenario_set_names_the_gateway_tier_layer(void **state) {
    (void)state;
    const char *text =
        "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
        ",\"variants\":{\"t\":{\"layers\":[{\"name\":\"app\"}],\"gateway\":{\"replicas\":2,"
        "\"layers\":[{\"name\":\"proxy\",\"fallback\":[\"openai\",\"anthropic\"]}]}}}}";
    sim_scenario *sc = NULL;
    sim_error err;
    const char *set[] = {"variants.t.layers.proxy.retry.attempts=2"};
    assert_int_equal(scn_parse(text, strlen(text), "t.json", set, 1, NULL, &sc, &err), FB_EINVAL);
    if (!strstr(err.msg, "no element named 'proxy' (the names there: app); the variant's gateway "
                         "tier has a layer of that name: gateway.layers.proxy.KEY"))
        fail_msg("%s", err.msg);
    const char *other[] = {"variants.t.layers.nope.retry.attempts=2"};
    assert_int_equal(scn_parse(text, strlen(text), "t.json", other, 1, NULL, &sc, &err), FB_EINVAL);
    assert_null(strstr(err.msg, "gateway tier"));
    const char *good[] = {"variants.t.gateway.layers.proxy.retry.attempts=2"};
    assert_int_equal(scn_parse(text, strlen(text), "t.json", good, 1, NULL, &sc, &err), FB_OK);
    scn_free(sc);
}

static void scenario_seed_override_replaces_the_file_seed(void **state) {
    (void)state;
    const char *text =
        "{\"name\":\"m\",\"seed\":7,\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS "}";
    uint64_t seed = 99;
    sim_scenario *sc = th_load_with(text, NULL, 0, &seed);
    assert_int_equal(sc->seed, 99);
    scn_free(sc);
}

static void scenario_caps_are_enforced(void **state) {
    (void)state;
    char buf[8192];
    int n = snprintf(buf, sizeof buf,
                     "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC ",\"providers\":[");
    for (int i = 0; i < SIM_PROVIDERS_MAX + 1; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s{\"name\":\"p%d\"}", i ? "," : "", i);
    snprintf(buf + n, sizeof buf - (size_t)n, "]}");
    parse_bad(buf, "providers[8]", "at most 8 providers");
}

static void scenario_missing_file_is_an_io_error(void **state) {
    (void)state;
    sim_scenario *sc = NULL;
    sim_error err;
    assert_int_equal(scn_load("/nonexistent/x.json", NULL, 0, NULL, &sc, &err), FB_EIO);
    assert_string_equal(err.file, "/nonexistent/x.json");
    assert_non_null(strstr(err.msg, "cannot open"));
}

/* Review findings, one test each so that one failure does not hide the others. */

static void scenario_token_bucket_capacity_that_overflows_is_rejected(void **state) {
    (void)state;
    /* a token bucket must hold capacity x one minute in microseconds */
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"capacity\":{\"tpm\":200000000000}}]}",
              "providers[0].capacity.tpm", "expected an integer in [0, 100000000000]");
}

static void scenario_tick_longer_than_the_duration_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"10s\",\"tick\":\"1m\"," MINIMAL_TRAFFIC
              "," MINIMAL_PROVIDERS "}",
              "tick", "longer than the duration");
}

static void scenario_provider_name_with_punctuation_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"open,ai[x]\"}]}",
              "providers[0].name", "use letters, digits");
}

static void scenario_class_name_with_a_space_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"a b\","
              "\"arrivals\":{\"poisson\":\"1/s\"}}]," MINIMAL_PROVIDERS "}",
              "traffic[0].class", "use letters, digits");
}

static void scenario_breaker_open_max_below_open_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"policy\":{\"breaker\":{\"open_max\":\"10s\"}}}",
              "policy.breaker.open_max", "must be >= open (60s by default)");
}

static void scenario_brownout_without_a_concurrency_cap_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\","
              "\"brownout\":{\"capacity\":0.5}}]}]}",
              "providers[0].faults[0]", "a brownout cuts capacity.concurrency");
}

static void scenario_spillover_hold_over_120_ticks_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"tick\":\"10ms\"," MINIMAL_TRAFFIC
              ",\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\","
              "\"hang\":{}}]}]}",
              "spillover.hold", "more than 120 ticks");
}

static void scenario_duration_in_an_unknown_unit_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"pods\":{\"request_timeout\":\"40y\"}}",
              "pods.request_timeout", "cannot read duration");
}

static void scenario_duration_out_of_range_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"pods\":{\"request_timeout\":\"20000d\"}}",
              "pods.request_timeout", "out of range");
}

static void scenario_set_of_a_misspelt_variant_is_rejected(void **state) {
    (void)state;
    /* --set may not invent a variant through a typo */
    const char *text = "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
                       ",\"variants\":{\"tuned\":{}}}";
    const char *sets[] = {"variants.tunde.retry.attempts=5"};
    sim_scenario *sc = NULL;
    sim_error err;
    assert_int_equal(scn_parse(text, strlen(text), "t", sets, 1, NULL, &sc, &err), FB_EINVAL);
    assert_null(sc);
    assert_non_null(strstr(err.msg, "no variant named 'tunde'"));
}

/* Each step of a --set path is a key of the format's tables, its value read as its row says. */
static void scenario_set_paths_and_values_come_from_the_tables(void **state) {
    (void)state;
    const char *text = "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
                       ",\"variants\":{\"v\":{\"layers\":[{\"name\":\"app\"},"
                       "{\"name\":\"sdk\",\"preset\":\"openai-python\"}]}}}";
    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"policy.retyr.attempts=3", "--set policy.retyr.attempts=3: policy.retyr: unknown key "
                                    "'retyr' (did you mean 'retry'?)"},
        {"pods.count=many", "--set pods.count=many: expected an integer, got a string"},
        {"variants.v.layers.app.stream=bogus", "--set variants.v.layers.app.stream=bogus: unknown "
                                               "value \"bogus\"; one of: buffer, fail, resume, "
                                               "retry"},
        {"variants.v.layers.app.retry.atempts=2", "variants.v.layers.app.retry.atempts: unknown "
                                                  "key 'atempts' (did you mean 'attempts'?)"},
        {"variants.v.gateway.replicas=0", "expected an integer in [1, 64], got 0"},
        {"duratoin=2m", "--set duratoin=2m: duratoin: unknown key 'duratoin' (did you mean "
                        "'duration'?)"},
        {"policy.retry.max_retries=3", "unknown key 'max_retries' (fusebox counts attempts, the "
                                       "first call included: \"attempts\": 4)"},
        /* below a preset's layer: the preset's table, as the loader reads the layer */
        {"variants.v.layers.sdk.max_retrie=1",
         "--set variants.v.layers.sdk.max_retrie=1: variants.v.layers.sdk.max_retrie: "
         "openai-python (openai (PyPI) 3.3.1 (commit e43b4224)) has no parameter 'max_retrie' "
         "(did you mean 'max_retries'?)"},
        {"variants.v.layers[1].max_retries=-1", "--set variants.v.layers[1].max_retries=-1: "
                                                "variants.v.layers[1].max_retries: openai-python: "
                                                "max_retries is an integer in [0, 1000], got -1"},
        {"variants.v.layers.sdk.timeout=10s", "openai-python: timeout is a number of seconds (a "
                                              "number, not a string), got \"10s\" (did you mean "
                                              "10?)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sim_scenario *sc = NULL;
        sim_error err;
        assert_int_equal(scn_parse(text, strlen(text), "t", &bad[i].set, 1, NULL, &sc, &err),
                         FB_EINVAL);
        assert_null(sc);
        assert_string_equal(err.path, "");
        if (strstr(err.msg, bad[i].msg) == NULL) fail_msg("%s: got '%s'", bad[i].set, err.msg);
    }
    /* a preset layer's keys are the library's: its table checks them, and the loader reads them */
    const char *good[] = {"variants.v.layers.sdk.max_retries=1",
                          "variants.v.layers[0].retry.attempts=2"};
    sim_scenario *sc = th_load_with(text, good, 2, NULL);
    assert_int_equal(sc->variants[0].layers[0].retry.attempts, 2);
    assert_int_equal(sc->variants[0].layers[1].retry.retries, 1);
    scn_free(sc);
}

/* A --set of each row below: the set's own message, and it takes effect when it is good. */
static void set_fails(const char *text, const char *set, const char *msg) {
    sim_scenario *sc = NULL;
    sim_error err;
    assert_int_equal(scn_parse(text, strlen(text), "t", &set, 1, NULL, &sc, &err), FB_EINVAL);
    assert_null(sc);
    assert_string_equal(err.path, "");
    if (strncmp(err.msg, "--set ", 6) != 0 || strstr(err.msg, msg) == NULL)
        fail_msg("%s: got '%s'", set, err.msg);
}

/*
 * Below traffic, providers (their objects and faults), a retry budget of each kind (their keys
 * share names with different ranges), a layer's client keys, a variant's classes and autoscale,
 * breaker_store and observed, a --set path's steps are the tables' keys: a wrong key gets the
 * loader's did-you-mean with the --set named, a wrong value the row's range.
 */
static void scenario_set_paths_below_every_section_are_checked(void **state) {
    (void)state;
    const char *text =
        "{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"chat\",\"arrivals\":"
        "{\"closed\":{\"users\":4}}},{\"class\":\"batch\",\"arrivals\":{\"poisson\":1},"
        "\"spikes\":[{\"at\":\"1s\",\"for\":\"2s\",\"rate\":5}]}],\"providers\":[{\"name\":"
        "\"openai\",\"capacity\":{\"concurrency\":4},\"faults\":[{\"at\":\"1s\",\"for\":\"5s\","
        "\"outage\":{}}]},{\"name\":\"anthropic\"}],\"breaker_store\":{\"outages\":[{\"at\":\"1s\","
        "\"for\":\"1s\"}]},\"policy\":{\"breaker\":{\"scope\":\"shared\"}},"
        "\"variants\":{\"q\":{\"retry\":{\"budget\":{\"quota\":{}}}},"
        "\"t\":{\"retry\":{\"budget\":{\"token_bucket\":{}}}},\"d\":{\"retry\":{\"budget\":"
        "{\"deposit\":{}}}},\"a\":{\"autoscale\":{\"metric\":\"in_flight\",\"target\":4,\"max\":3},"
        "\"classes\":{\"chat\":{\"retry\":{\"attempts\":2}}},\"concurrency_limit\":"
        "{\"openai\":{\"algorithm\":\"aimd\"}},\"hedging\":{},\"connections\":{\"max\":4}}}}";
    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"traffic.chat.arrivals.closed.usres=3",
         "traffic.chat.arrivals.closed.usres: unknown key 'usres' (did you mean 'users'?)"},
        {"traffic.chat.arrivals.closed.users=0", "expected an integer in [1, 10000000], got 0"},
        {"traffic[1].spikes[0].forr=1s", "traffic[1].spikes[0].forr: unknown key 'forr' (did "
                                         "you mean 'for'?)"},
        {"traffic.batch.stream=7", "expected true or false, got a number"},
        {"traffic.batch.resubmit.max=101", "expected an integer in [1, 100], got 101"},
        {"providers.openai.capacity.concurency=3",
         "providers.openai.capacity.concurency: unknown key 'concurency' (did you mean "
         "'concurrency'?)"},
        {"providers.openai.latency.load.queued=200", "200 is out of range [0, 100]"},
        {"providers.openai.faults[0].outage.fracton=0.5",
         "providers.openai.faults[0].outage.fracton: unknown key 'fracton' (did you mean "
         "'fraction'?)"},
        {"providers.openai.faults[0].outage.fraction=2", "2 is out of range [0, 1]"},
        {"variants.q.retry.budget.quota.capacty=9",
         "variants.q.retry.budget.quota.capacty: unknown key 'capacty' (did you mean "
         "'capacity'?)"},
        {"variants.q.retry.budget.qouta.capacity=9",
         "variants.q.retry.budget.qouta: unknown key 'qouta' (did you mean 'quota'?)"},
        {"variants.q.retry.budget.quota.capacity=0", "expected an integer in [1, 1000000000]"},
        /* max: at most 1000 tokens in a token bucket, 1e6 in a deposit bucket */
        {"variants.t.retry.budget.token_bucket.max=5000", "5000 is out of range [1, 1000]"},
        {"variants.d.retry.budget.deposit.max=2e6", "2e+06 is out of range [0.001, 1e+06]"},
        {"variants.a.autoscale.mx=4",
         "variants.a.autoscale.mx: unknown key 'mx' (did you mean 'max'?)"},
        {"variants.a.autoscale.scale_down.percent=-1", "expected an integer in [0, 100000]"},
        {"variants.a.classes.chat.retry.atempts=3",
         "variants.a.classes.chat.retry.atempts: unknown key 'atempts' (did you mean "
         "'attempts'?)"},
        {"variants.a.concurrency_limit.openai.max=0", "expected an integer in [1, "},
        {"variants.a.hedging.max_attempts=1", "expected an integer in [2, "},
        {"variants.a.connections.keepalve=1",
         "variants.a.connections.keepalve: unknown key 'keepalve' (did you mean 'keepalive'?)"},
        {"breaker_store.outages[0].forr=2s",
         "breaker_store.outages[0].forr: unknown key 'forr' (did you mean 'for'?)"},
        {"observed.requets=5", "observed.requets: unknown key 'requets' (did you mean "
                               "'requests'?)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) set_fails(text, bad[i].set, bad[i].msg);
    const char *good[] = {"traffic.chat.arrivals.closed.users=9",
                          "providers.openai.faults[0].outage.fraction=0.5",
                          "variants.t.retry.budget.token_bucket.max=500",
                          "variants.d.retry.budget.deposit.max=5000",
                          "variants.q.retry.budget.quota.capacity=9",
                          "variants.a.autoscale.scale_down.percent=50",
                          "variants.a.classes.chat.retry.attempts=3",
                          "variants.a.concurrency_limit.openai.max=300",
                          "breaker_store.outages[0].for=2s"};
    sim_scenario *sc = th_load_with(text, good, sizeof good / sizeof good[0], NULL);
    assert_int_equal(sc->classes[0].users, 9);
    assert_true(sc->providers[0].faults[0].fraction == 0.5);
    assert_true(sc->variants[1].layers[0].budget.max_tokens == 500);
    assert_true(sc->variants[2].layers[0].budget.max_tokens == 5000);
    assert_int_equal(sc->variants[0].layers[0].budget.capacity, 9);
    assert_int_equal(sc->variants[3].autoscale.down.percent, 50);
    assert_int_equal(sc->variants[3].layers[1].retry.attempts, 3);
    assert_int_equal(sc->variants[3].layers[0].per_provider[0].conclimit.max_limit, 300);
    assert_int_equal(sc->store_outages[0].for_us, 2 * FB_US_PER_S);
    scn_free(sc);
}

/*
 * A distribution's kinds and each kind's keys are tables too (load_dist.c): below a latency, a
 * token count, a think or setup time, a --set path's steps are their keys (did-you-mean with
 * the --set named), and a value is read as the loader reads it, with where inside it went wrong.
 */
static void scenario_set_checks_distributions_by_their_tables(void **state) {
    (void)state;
    const char *text =
        "{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"chat\",\"arrivals\":"
        "{\"closed\":{\"users\":4}}}],\"providers\":[{\"name\":\"openai\",\"latency\":{\"ttft\":"
        "{\"lognormal\":{\"median\":\"1s\",\"p99\":\"3s\"}}},\"faults\":[{\"at\":\"1s\","
        "\"for\":\"5s\",\"slow\":{\"factor\":2}}]}"
        "],\"variants\":{\"a\":{\"connections\":{\"max\":4}}}}";
    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"providers.openai.latency.ttft.lognormall.p99=1s",
         "providers.openai.latency.ttft.lognormall: unknown key 'lognormall' (did you mean "
         "'lognormal'?)"},
        {"providers.openai.latency.ttft.lognormal.p9=1s",
         "providers.openai.latency.ttft.lognormal.p9: unknown key 'p9' (did you mean 'p99'?)"},
        {"providers.openai.latency.ttft.lognormal.p99=3", "durations are strings with a unit"},
        {"providers.openai.latency.ttft=fast", "cannot read duration \"fast\""},
        {"providers.openai.latency.error={\"uniform\":{\"min\":\"2s\",\"max\":\"1s\"}}",
         "error={\"uniform\":{\"min\":\"2s\",\"max\":\"1s\"}}: uniform: max must be >= min"},
        {"providers.openai.latency.error={\"uniform\":{\"min\":\"2s\"}}",
         "uniform: missing required key 'max'"},
        {"providers.openai.faults[0].slow.factor={\"uniform\":{\"min\":1,\"max\":-1}}",
         "uniform.max: must be a non-negative number"},
        {"providers.openai.faults[0].slow.factor=0.5", "0.5 is out of range [1, 1000]"},
        {"traffic.chat.prompt_tokens=-3", "must be a non-negative number"},
        {"traffic.chat.completion_tokens={\"empirical\":{\"values\":[1],\"weights\":[1,2]}}",
         "empirical.weights: 2 weights for 1 values: one each"},
        {"traffic.chat.arrivals.closed.think.exponential.meen=1s",
         "traffic.chat.arrivals.closed.think.exponential.meen: unknown key 'meen' (did you mean "
         "'mean'?)"},
        {"variants.a.connections.setup.constant=-1s", "duration \"-1s\" is negative"},
        {"policy.degraded.latency.lognormal.median=x", "cannot read duration \"x\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) set_fails(text, bad[i].set, bad[i].msg);
    /* the whole message: the --set, then where inside the value */
    sim_scenario *sc = NULL;
    sim_error err;
    const char *idx = "traffic.chat.completion_tokens={\"empirical\":{\"values\":[-1]}}";
    assert_int_equal(scn_parse(text, strlen(text), "t", &idx, 1, NULL, &sc, &err), FB_EINVAL);
    assert_string_equal(err.msg, "--set traffic.chat.completion_tokens={\"empirical\":{\"values\":"
                                 "[-1]}}: empirical.values[0]: must be a non-negative number");
    const char *good[] = {"providers.openai.latency.ttft.lognormal.p99=5s",
                          "traffic.chat.completion_tokens={\"empirical\":{\"values\":[10,30],"
                          "\"weights\":[3,1]}}",
                          "variants.a.connections.setup={\"uniform\":{\"min\":\"1ms\",\"max\":"
                          "\"3ms\"}}"};
    sc = th_load_with(text, good, sizeof good / sizeof good[0], NULL);
    assert_int_equal(sc->providers[0].ttft_us.kind, SIM_DIST_LOGNORMAL);
    assert_true(sc->providers[0].ttft_us.b == 5e6);
    assert_int_equal(sc->classes[0].completion_tokens.n, 2);
    assert_true(sc->classes[0].completion_tokens.a == 10);
    assert_true(sc->classes[0].completion_tokens.cw[0] == 0.75);
    assert_int_equal(sc->variants[0].layers[0].pool.setup_us.kind, SIM_DIST_UNIFORM);
    assert_true(sc->variants[0].layers[0].pool.setup_us.b == 3e3);
    scn_free(sc);
}

/*
 * A value read by a hook that reads it alone (LD_F_PURE: a rate, an autoscaler's durations and
 * rules, a backoff, retry_on) is checked by --set on a scratch copy; a key read by code
 * (autoscale.target, inherit_policy, a gateway's queue_full) by its row's check, autoscale.target
 * in its metric's range (the row's `check`, in the object that holds it).
 */
static void scenario_set_checks_values_read_by_hooks(void **state) {
    (void)state;
    const char *text =
        "{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"chat\",\"arrivals\":"
        "{\"poisson\":2},\"spikes\":[{\"at\":\"1s\",\"for\":\"2s\",\"rate\":5}]}],"
        "\"providers\":[{\"name\":\"openai\"}],\"variants\":{\"a\":{\"autoscale\":{\"metric\":"
        "\"utilization\",\"target\":0.5,\"max\":3}},\"g\":{\"gateway\":{\"replicas\":1,"
        "\"layers\":[{\"name\":\"gw\"}]}}}}";
    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"traffic.chat.arrivals.poisson=fast", "expected a rate such as \"40/s\""},
        {"traffic.chat.spikes[0].rate=-1", "rate must be a non-negative number"},
        {"variants.a.autoscale.target=0", "0 is out of range [1e-06, 1e+06]"},
        {"variants.a.autoscale.period=2h", "at most 1h"},
        {"variants.a.autoscale.scale_up={\"pods\":0}", "give \"pods\", \"percent\" or both"},
        {"variants.a.autoscale.scale_down.stabilization=2h", "at most 1h (as Kubernetes allows)"},
        {"variants.a.inherit_policy=no", "expected true or false, got a string"},
        {"policy.retry.retry_on=[99]", "[0]: an HTTP status is an integer in 100..599"},
        {"policy.retry.jitter=fulll", "unknown value \"fulll\" (did you mean \"full\"?)"},
        {"name=a/b", "a scenario name starts with a letter or digit"},
        {"variants.g.gateway.queue_full=302",
         "the status a full gateway queue answers is an error"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) set_fails(text, bad[i].set, bad[i].msg);
    /* utilization's target is at most 1: the --set says so, as the loader would */
    sim_scenario *sc = NULL;
    sim_error err;
    const char *over = "variants.a.autoscale.target=2";
    assert_int_equal(scn_parse(text, strlen(text), "t", &over, 1, NULL, &sc, &err), FB_EINVAL);
    assert_string_equal(err.path, "");
    assert_string_equal(err.msg, "--set variants.a.autoscale.target=2: 2 is out of range [1e-06, "
                                 "1] (rates and shares are fractions: 2% is 0.02)");
    /* the metric as the --sets leave it: in_flight's target may be 2 */
    const char *metric[] = {"variants.a.autoscale.target=2",
                            "variants.a.autoscale.metric=in_flight"};
    sc = th_load_with(text, metric, 2, NULL);
    assert_true(sc->variants[0].autoscale.target == 2);
    scn_free(sc);
    const char *good[] = {"traffic.chat.arrivals.poisson=5/s", "variants.a.autoscale.target=0.8",
                          "variants.a.inherit_policy=false"};
    sc = th_load_with(text, good, sizeof good / sizeof good[0], NULL);
    assert_true(sc->classes[0].rate == 5);
    assert_true(sc->variants[0].autoscale.target == 0.8);
    scn_free(sc);
}

/*
 * A whole element set at once (traffic[0]={...}, providers.NAME={...}, variants.NAME={...}) is
 * checked by its section's table as each key would be: the message names the --set and the key
 * inside it; a key's check (a class's target) runs on the element once every --set is applied.
 */
static void scenario_set_of_a_whole_element_is_checked(void **state) {
    (void)state;
    const char *text = "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
                       ",\"variants\":{\"v\":{}}}";
    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"traffic[0]={\"clas\":\"chat\",\"arrivals\":{\"poisson\":1}}",
         "--set traffic[0]={\"clas\":\"chat\",\"arrivals\":{\"poisson\":1}}: traffic[0].clas: "
         "unknown key 'clas' (did you mean 'class'?)"},
        {"traffic[0]={\"arrivals\":{\"poisson\":1}}", "traffic[0]: missing required key 'class'"},
        {"traffic[0]={\"class\":\"c\",\"arrivals\":{\"poisson\":1},\"prompt_tokens\":-1}",
         "traffic[0].prompt_tokens: must be a non-negative number"},
        {"traffic[0]={\"class\":\"c\",\"arrivals\":{\"poisson\":1},\"target\":\"nope\"}",
         "traffic[0].target: no provider named"},
        {"variants.v={\"retyr\":{}}", "--set variants.v={\"retyr\":{}}: variants.v.retyr: unknown "
                                      "key 'retyr' (did you mean 'retry'?)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) set_fails(text, bad[i].set, bad[i].msg);
    const char *good[] = {"traffic[0]={\"class\":\"c\",\"arrivals\":{\"poisson\":7}}",
                          "variants.v={\"retry\":{\"attempts\":2}}"};
    sim_scenario *sc = th_load_with(text, good, sizeof good / sizeof good[0], NULL);
    assert_string_equal(sc->classes[0].name, "c");
    assert_true(sc->classes[0].rate == 7);
    assert_int_equal(sc->variants[0].layers[0].retry.attempts, 2);
    scn_free(sc);
}

/*
 * Keys whose reading needs more than their value are checked by --set in the document as the
 * --sets leave it (a row's `check`): a class's target names one of its providers, replayed
 * arrivals fall inside its duration (read into scratch storage, freed), observed.variant is one
 * of its variants; the error statuses and observed's figures are read alone (LD_F_PURE). Each
 * bad value is named by its --set, before the loader reads the document.
 */
static void scenario_set_checks_keys_read_against_the_document(void **state) {
    (void)state;
    const char *text =
        "{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"chat\",\"arrivals\":"
        "{\"poisson\":2}},{\"class\":\"rep\",\"arrivals\":{\"replay\":{\"at_ms\":[1,2,3]}}}],"
        "\"providers\":[{\"name\":\"openai\",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\","
        "\"outage\":{}}]},{\"name\":\"search\",\"kind\":\"tool\"}],\"variants\":{\"a\":{},"
        "\"b\":{}},\"observed\":{\"variant\":\"a\",\"requests\":10,\"attempts\":12}}";
    static const struct {
        const char *set, *msg;
    } bad[] = {
        {"providers.openai.faults[0].outage.status=200",
         "outage.status=200: 200 is not an error status (use 400 to 599)"},
        {"providers.openai.faults[0].outage.status=4xx", "expected an integer, got a string"},
        {"providers.openai.capacity.overload_status=302", "302 is not an error status"},
        {"traffic.chat.target=opena", "target=opena: no provider named \"opena\" (did you mean "
                                      "\"openai\"?)"},
        {"traffic.chat.target=5", "target=5: expected \"llm\", \"none\" or a provider name"},
        {"traffic.rep.arrivals.replay.at_ms=[5,3]",
         "at_ms=[5,3]: [1]: replayed arrivals must be in time order (3 ms comes after 5 ms)"},
        {"traffic.rep.arrivals.replay.at_ms=[5,70000]",
         "[1]: an arrival at 70s is at or after the end of traffic (duration 60s)"},
        {"traffic.rep.arrivals.replay.at_ms=later",
         "expected an array of times in milliseconds, got a string"},
        {"observed.variant=c", "observed.variant=c: no variant \"c\" in the scenario"},
        {"observed.variant=7", "expected a string, got a number"},
        {"observed.latency_p99=-1", "-1 is out of range [0, 1e+09]"},
        {"observed.status={\"99\":1}", "99: an answer is an HTTP status (100 to 599)"},
        {"observed.end={\"sucess\":1}", "sucess: unknown key 'sucess' (did you mean 'success'?)"},
        {"observed.noise={\"x\":-1}", "x: expected a number >= 0"},
        {"observed.attempts_per_request={\"40\":1}", "40: a bucket is a number of attempts"},
        {"observed.windows=[{\"name\":\"w\"}]", "[0]: missing required key 'start_s'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) set_fails(text, bad[i].set, bad[i].msg);
    /* what the checks read is the document as every --set leaves it */
    const char *good[] = {"traffic.rep.arrivals.replay.at_ms=[5,70000]",
                          "duration=2m",
                          "traffic.chat.target=search",
                          "observed.variant=b",
                          "providers.openai.faults[0].outage.status=429",
                          "observed.status={\"429\":3,\"timeout\":1}"};
    sim_scenario *sc = th_load_with(text, good, sizeof good / sizeof good[0], NULL);
    assert_int_equal(sc->classes[1].replay_count, 2);
    assert_int_equal(sc->classes[0].target, SIM_TARGET_PROVIDER);
    assert_int_equal(sc->classes[0].provider, 1);
    assert_string_equal(sc->observed.variant, "b");
    assert_int_equal(sc->providers[0].faults[0].status, 429);
    assert_int_equal(sc->observed.status[429], 3);
    scn_free(sc);
}

/* A --grid key is absolute when its first step is a key of the top table, relative otherwise. */
static void scenario_top_keys_are_the_top_tables(void **state) {
    (void)state;
    const char *top[] = {"traffic[0].arrivals.poisson",
                         "providers.openai.capacity.rpm",
                         "breaker_store.outages[0].for",
                         "observed.requests",
                         "duration",
                         "variants.v.retry.attempts",
                         "policy.retry"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        if (!scn_top_key(top[i])) fail_msg("%s: not a top-level key", top[i]);
    const char *layer[] = {"retry.attempts", "layers.app.retry.attempts",
                           "breaker.open",   "trafic.x",
                           "hedging.delay",  ""};
    for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++)
        if (scn_top_key(layer[i])) fail_msg("%s: taken for a top-level key", layer[i]);
}

/* A breaker's keys of the variant (scope, sync_delay, store_outage) are among its did-you-means. */
static void scenario_breaker_scope_typo_gets_a_did_you_mean(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC "," MINIMAL_PROVIDERS
              ",\"policy\":{\"breaker\":{\"scop\":\"shared\"}}}",
              "policy.breaker.scop", "unknown key 'scop' (did you mean 'scope'?)");
}

/* ---- settings that could never take effect ---- */

#define ONE_PROVIDER(body) ",\"providers\":[{\"name\":\"a\"" body "}]}"
#define M1 "{\"name\":\"m\",\"duration\":\"1m\"," MINIMAL_TRAFFIC

static void scenario_fault_starting_at_the_end_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"1m\",\"for\":\"5s\",\"hang\":{}}]"),
              "providers[0].faults[0].at", "at or after the end of traffic (duration 60s)");
}

static void scenario_fault_starting_after_the_end_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\",\"hang\":{}},"
                              "{\"at\":\"90s\",\"for\":\"5s\",\"outage\":{}}]"),
              "providers[0].faults[1].at", "the fault starts at 90s");
}

static void scenario_fault_starting_just_before_the_end_loads(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load(M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"59.999s\",\"for\":\"5s\",\"hang\":{}}]"));
    assert_int_equal(sc->providers[0].faults[0].at_us, 59999 * MS);
    scn_free(sc);
}

static void scenario_outage_with_a_success_status_is_rejected(void **state) {
    (void)state;
    parse_bad(
        M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\",\"outage\":{\"status\":200}}]"),
        "providers[0].faults[0].outage.status", "200 is not an error status");
}

static void scenario_outage_with_an_informational_status_is_rejected(void **state) {
    (void)state;
    parse_bad(
        M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\",\"outage\":{\"status\":101}}]"),
        "providers[0].faults[0].outage.status", "101 is not an error status");
}

static void scenario_flap_with_a_success_status_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\","
                              "\"flap\":{\"period\":\"2s\",\"status\":204}}]"),
              "providers[0].faults[0].flap.status", "204 is not an error status");
}

static void scenario_rate_limit_with_a_redirect_status_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\","
                              "\"rate_limit\":{\"status\":302}}]"),
              "providers[0].faults[0].rate_limit.status", "302 is not an error status");
}

static void scenario_overload_status_must_be_an_error(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"overload_status\":200}"),
              "providers[0].capacity.overload_status", "200 is not an error status");
}

static void scenario_fault_script_with_a_success_status_is_rejected(void **state) {
    (void)state;
    const char *text = "[{\"outage\":{\"status\":200}}]";
    sim_fault f[4];
    uint32_t n = 9;
    sim_error err;
    assert_int_equal(scn_faults_parse(text, strlen(text), "s.json", f, 4, &n, &err), FB_EINVAL);
    assert_string_equal(err.path, "faults[0].outage.status");
    assert_int_equal(n, 0);
}

/* A slow fault's factor: a number in [1, 1000] as before, or a distribution whose median is. */
static void scenario_slow_factor_may_be_a_distribution(void **state) {
    (void)state;
    const char *text = "[{\"slow\":{\"factor\":2.5}},"
                       "{\"slow\":{\"factor\":{\"lognormal\":{\"median\":2,\"p99\":6}}}},"
                       "{\"slow\":{\"factor\":{\"empirical\":{\"values\":[2.2,4.6],"
                       "\"weights\":[3,1]}}}}]";
    sim_fault f[4];
    uint32_t n = 0;
    sim_error err;
    assert_int_equal(scn_faults_parse(text, strlen(text), "s.json", f, 4, &n, &err), FB_OK);
    assert_int_equal(n, 3);
    assert_int_equal(f[0].factor.kind, SIM_DIST_CONSTANT);
    assert_true(f[0].factor.a == 2.5);
    assert_int_equal(f[1].factor.kind, SIM_DIST_LOGNORMAL);
    assert_true(f[1].factor.a == 2 && f[1].factor.b == 6);
    assert_int_equal(f[2].factor.kind, SIM_DIST_EMPIRICAL);
    assert_int_equal(f[2].factor.n, 2);
    assert_true(f[2].factor.a == 2.2); /* the weighted median */
    assert_true(f[0].delay.kind == SIM_DIST_CONSTANT && f[0].delay.a == 0); /* none */
    /* a delay: a duration, or a distribution of durations */
    const char *d = "[{\"slow\":{\"factor\":1,\"delay\":\"1.5s\"}},"
                    "{\"slow\":{\"factor\":1,\"delay\":{\"empirical\":{\"values\":[\"1s\","
                    "\"3s\"],\"weights\":[3,1]}}}}]";
    assert_int_equal(scn_faults_parse(d, strlen(d), "s.json", f, 4, &n, &err), FB_OK);
    assert_true(f[0].delay.kind == SIM_DIST_CONSTANT && f[0].delay.a == 1.5e6);
    assert_int_equal(f[1].delay.kind, SIM_DIST_EMPIRICAL);
    const char *bad_delay = "[{\"slow\":{\"factor\":1,\"delay\":\"-1s\"}}]";
    assert_int_equal(scn_faults_parse(bad_delay, strlen(bad_delay), "s.json", f, 4, &n, &err),
                     FB_EINVAL);
    assert_string_equal(err.path, "faults[0].slow.delay");
    static const struct {
        const char *text, *path, *msg;
    } bad[] = {
        {"[{\"slow\":{\"factor\":0.5}}]", "faults[0].slow.factor", "0.5 is out of range [1, 1000]"},
        {"[{\"slow\":{\"factor\":{\"lognormal\":{\"median\":0.5,\"p99\":2}}}}]",
         "faults[0].slow.factor", "a factor's median must be in [1, 1000] (got 0.5)"},
        {"[{\"slow\":{\"factor\":{\"normal\":2}}}]", "faults[0].slow.factor.normal", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(
            scn_faults_parse(bad[i].text, strlen(bad[i].text), "s.json", f, 4, &n, &err),
            FB_EINVAL);
        assert_string_equal(err.path, bad[i].path);
        if (bad[i].msg) assert_string_equal(err.msg, bad[i].msg);
    }
}

/* A fraction's sampling: "draw" (the default) or "even", for the kinds with a fraction. */
static void scenario_fault_sampling_is_draw_or_even(void **state) {
    (void)state;
    const char *text = "[{\"rate_limit\":{\"fraction\":0.5,\"sampling\":\"even\"}},"
                       "{\"hang\":{\"fraction\":0.2}},"
                       "{\"slow\":{\"factor\":2,\"fraction\":0.3,\"sampling\":\"draw\"}}]";
    sim_fault f[4];
    uint32_t n = 0;
    sim_error err;
    assert_int_equal(scn_faults_parse(text, strlen(text), "s.json", f, 4, &n, &err), FB_OK);
    assert_int_equal(n, 3);
    assert_int_equal(f[0].sampling, SIM_SAMPLING_EVEN);
    assert_int_equal(f[1].sampling, SIM_SAMPLING_DRAW);
    assert_int_equal(f[2].sampling, SIM_SAMPLING_DRAW);
    static const struct {
        const char *text, *path;
    } bad[] = {
        {"[{\"outage\":{\"sampling\":\"evenly\"}}]", "faults[0].outage.sampling"},
        {"[{\"flap\":{\"period\":\"2s\",\"sampling\":\"even\"}}]", "faults[0].flap.sampling"},
        {"[{\"at\":\"1s\",\"for\":\"1s\",\"sampling\":\"even\",\"reset\":{}}]",
         "faults[0].sampling"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(
            scn_faults_parse(bad[i].text, strlen(bad[i].text), "s.json", f, 4, &n, &err),
            FB_EINVAL);
        assert_string_equal(err.path, bad[i].path);
    }
}

/* A retry_fraction: the retries' own share in [0, 1], or a list of 1 to 8 of them (one per
   retry), for the kinds with a fraction; without it every attempt meets `fraction`. A bad one
   names its path (an item's index) and the file. */
static void scenario_fault_retry_fraction_is_a_share_for_the_kinds_with_a_fraction(void **state) {
    (void)state;
    const char *text = "[{\"rate_limit\":{\"fraction\":0.3,\"retry_fraction\":0.9}},"
                       "{\"hang\":{\"retry_fraction\":0}},"
                       "{\"outage\":{\"fraction\":0.5}},"
                       "{\"slow\":{\"factor\":2,\"retry_fraction\":[0.25,0.5,1]}}]";
    sim_fault f[4];
    uint32_t n = 0;
    sim_error err;
    assert_int_equal(scn_faults_parse(text, strlen(text), "s.json", f, 4, &n, &err), FB_OK);
    assert_int_equal(n, 4);
    assert_true(f[0].retry_fraction.n == 1 && f[0].retry_fraction.share[0] == 0.9 &&
                f[0].fraction == 0.3);
    assert_true(f[1].retry_fraction.n == 1 && f[1].retry_fraction.share[0] == 0 &&
                f[1].fraction == 1);
    assert_int_equal(f[2].retry_fraction.n, 0);
    assert_int_equal(f[3].retry_fraction.n, 3);
    assert_true(f[3].retry_fraction.share[0] == 0.25 && f[3].retry_fraction.share[1] == 0.5 &&
                f[3].retry_fraction.share[2] == 1);
    static const struct {
        const char *text, *path, *msg;
    } bad[] = {
        {"[{\"outage\":{\"retry_fraction\":1.5}}]", "faults[0].outage.retry_fraction",
         "1.5 is out of range [0, 1] (rates and shares are fractions: 1.5% is 0.015)"},
        {"[{\"rate_limit\":{\"retry_fraction\":-0.1}}]", "faults[0].rate_limit.retry_fraction",
         NULL},
        {"[{\"hang\":{\"retry_fraction\":\"half\"}}]", "faults[0].hang.retry_fraction", NULL},
        {"[{\"flap\":{\"period\":\"2s\",\"retry_fraction\":0.5}}]", "faults[0].flap.retry_fraction",
         NULL},
        {"[{\"brownout\":{\"capacity\":0.5,\"retry_fraction\":0.5}}]",
         "faults[0].brownout.retry_fraction", NULL},
        {"[{\"outage\":{\"retry_fraction\":[0.5,1.5]}}]", "faults[0].outage.retry_fraction[1]",
         "1.5 is out of range [0, 1] (rates and shares are fractions: 1.5% is 0.015)"},
        {"[{\"outage\":{\"retry_fraction\":[0.5,\"x\"]}}]", "faults[0].outage.retry_fraction[1]",
         NULL},
        {"[{\"outage\":{\"retry_fraction\":[]}}]", "faults[0].outage.retry_fraction",
         "expected a number or a list of 1 to 8 numbers (one per retry), got a list of 0"},
        {"[{\"outage\":{\"retry_fraction\":[0,0,0,0,0,0,0,0,0]}}]",
         "faults[0].outage.retry_fraction",
         "expected a number or a list of 1 to 8 numbers (one per retry), got a list of 9"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(
            scn_faults_parse(bad[i].text, strlen(bad[i].text), "s.json", f, 4, &n, &err),
            FB_EINVAL);
        assert_string_equal(err.file, "s.json");
        assert_string_equal(err.path, bad[i].path);
        if (bad[i].msg) assert_string_equal(err.msg, bad[i].msg);
    }
}

/* An even fault's recorded hits: one string of 0 and 1 per class even counts apart (first
   attempts, then each retry share), read into one block; they need "even", at most one list
   more than the retry shares, only 0 and 1, and a scenario (not a fault script). */
#define RECORDED_DOC(body)                                                                         \
    "{\"name\":\"m\",\"duration\":\"10s\"," MINIMAL_TRAFFIC ",\"providers\":[{\"name\":"           \
    "\"openai\",\"faults\":[{\"at\":\"1s\",\"for\":\"5s\",\"outage\":" body "}]}]}"
static void scenario_fault_recorded_hits_load_and_need_even(void **state) {
    (void)state;
    sim_scenario *sc = th_load(RECORDED_DOC(
        "{\"fraction\":0.5,\"retry_fraction\":[0.5,0.2],\"sampling\":\"even\",\"recorded\":"
        "[\"0110\",\"\",\"10\"]}"));
    const sim_fault *f = &sc->providers[0].faults[0];
    assert_non_null(f->recorded);
    assert_int_equal(f->recorded_len[0], 4);
    assert_int_equal(f->recorded_len[1], 0);
    assert_int_equal(f->recorded_len[2], 2);
    assert_memory_equal(f->recorded, "\0\1\1\0\1\0", 6);
    scn_free(sc);
    parse_bad(RECORDED_DOC("{\"fraction\":0.5,\"recorded\":[\"01\"]}"),
              "providers[0].faults[0].outage", "\"recorded\" hits need \"sampling\": \"even\"");
    parse_bad(RECORDED_DOC("{\"fraction\":0.5,\"retry_fraction\":0.5,\"sampling\":\"even\","
                           "\"recorded\":[\"01\",\"1\",\"0\"]}"),
              "providers[0].faults[0].outage",
              "\"recorded\" has 3 lists of hits; the fault counts 2");
    parse_bad(RECORDED_DOC("{\"fraction\":0.5,\"sampling\":\"even\",\"recorded\":[\"0x1\"]}"),
              "providers[0].faults[0].outage.recorded[0]", "expected a string of 0 and 1");
    parse_bad(RECORDED_DOC("{\"fraction\":0.5,\"sampling\":\"even\",\"recorded\":[]}"),
              "providers[0].faults[0].outage.recorded", "expected a list of 1 to 9 strings");
    const char *text =
        "[{\"outage\":{\"fraction\":0.5,\"sampling\":\"even\",\"recorded\":[\"1\"]}}]";
    sim_fault fs[4];
    uint32_t n = 0;
    sim_error err;
    assert_int_equal(scn_faults_parse(text, strlen(text), "s.json", fs, 4, &n, &err), FB_EINVAL);
    assert_string_equal(err.path, "faults[0].outage");
    assert_non_null(strstr(err.msg, "not a fault script"));
    assert_null(fs[0].recorded); /* read, then freed when the check refused it */
}

static void scenario_spike_starting_at_the_end_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\","
              "\"arrivals\":{\"poisson\":\"10/s\"},\"spikes\":[{\"at\":\"10s\",\"for\":\"5s\","
              "\"rate\":20},{\"at\":\"1m\",\"for\":\"5s\",\"rate\":20}]}]," MINIMAL_PROVIDERS "}",
              "traffic[0].spikes[1].at", "the spike starts at 60s");
}

static void scenario_burst_after_the_end_is_rejected(void **state) {
    (void)state;
    parse_bad("{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\","
              "\"arrivals\":{\"poisson\":\"10/"
              "s\"},\"bursts\":[{\"at\":\"2m\",\"count\":5}]}]," MINIMAL_PROVIDERS "}",
              "traffic[0].bursts[0].at", "the burst starts at 120s");
}

/* ---- the provider's load and queue settings ---- */

static void scenario_provider_load_and_queue_settings_parse(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        M1 ONE_PROVIDER(",\"latency\":{\"ttft\":\"1s\",\"load\":{\"in_service\":0.02,"
                        "\"queued\":0.001}},\"capacity\":{\"concurrency\":10,\"queue\":50,"
                        "\"discipline\":\"codel\",\"codel\":{\"target\":\"100ms\","
                        "\"interval\":\"1s\"},\"efficiency\":{\"queue_above\":20,\"share\":0.6}}"));
    const sim_provider *p = &sc->providers[0];
    assert_true(p->load_in_service == 0.02);
    assert_true(p->load_queued == 0.001);
    assert_int_equal(p->discipline, SIM_QUEUE_CODEL);
    assert_int_equal(p->codel_target_us, 100 * MS);
    assert_int_equal(p->codel_interval_us, 1 * S);
    assert_int_equal(p->efficiency_queue_above, 20);
    assert_true(p->efficiency_share == 0.6);
    scn_free(sc);
}

static void scenario_provider_queue_defaults_to_fifo_without_loss(void **state) {
    (void)state;
    sim_scenario *sc = th_load(M1 ONE_PROVIDER(""));
    const sim_provider *p = &sc->providers[0];
    assert_int_equal(p->discipline, SIM_QUEUE_FIFO);
    assert_true(p->load_in_service == 0 && p->load_queued == 0);
    assert_true(p->efficiency_share == 1);
    scn_free(sc);
}

/* The defaults the providers' tables store (LD_F_SET), where no key says otherwise. */
static void scenario_provider_and_fault_defaults_are_the_documented_ones(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        M1 ONE_PROVIDER(",\"capacity\":{},\"latency\":{},\"faults\":[{\"at\":\"1s\",\"for\":\"1s\","
                        "\"outage\":{}},{\"at\":\"1s\",\"for\":\"1s\",\"rate_limit\":{}},"
                        "{\"at\":\"1s\",\"for\":\"1s\",\"flap\":{\"period\":\"2s\"}},"
                        "{\"at\":\"1s\",\"for\":\"1s\",\"hang\":{}}]"));
    const sim_provider *p = &sc->providers[0];
    assert_int_equal(p->kind, SIM_PROVIDER_LLM);
    assert_int_equal(p->ttft_us.kind, SIM_DIST_CONSTANT);
    assert_true(p->ttft_us.a == 500e3);
    assert_true(p->error_latency_us.a == 50e3);
    assert_int_equal(p->per_token_us, 0);
    assert_int_equal(p->queue, 1000);
    assert_int_equal(p->overload_status, 503);
    assert_true(p->limit_retry_after);
    assert_true(p->keeps_working);
    assert_true(p->efficiency_share == 1);
    assert_false(p->has_network);
    const int statuses[] = {503, 429, 503, 0};
    for (int i = 0; i < 4; i++) {
        const sim_fault *f = &p->faults[i];
        assert_int_equal(f->status, statuses[i]);
        assert_true(f->fraction == 1 && f->factor.a == 1 && f->capacity == 1);
        assert_int_equal(f->retry_after_us, FB_TIME_NONE);
        assert_int_equal(f->error_kind, FB_ERRKIND_NONE);
    }
    assert_int_equal(p->faults[2].period_us, 2 * S);
    scn_free(sc);
}

static void scenario_unknown_discipline_gets_a_suggestion(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"concurrency\":1,\"discipline\":\"drop-expired\"}"),
              "providers[0].capacity.discipline", "did you mean \"drop_expired\"");
}

static void scenario_codel_without_its_settings_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"concurrency\":1,\"discipline\":\"codel\"}"),
              "providers[0].capacity.discipline", "\"codel\" needs \"codel\"");
}

static void scenario_codel_settings_without_codel_are_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"concurrency\":1,\"codel\":{\"target\":\"1s\","
                              "\"interval\":\"5s\"}}"),
              "providers[0].capacity.codel", "needs \"discipline\": \"codel\"");
}

static void scenario_codel_needs_target_and_interval(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"concurrency\":1,\"discipline\":\"codel\","
                              "\"codel\":{\"target\":\"1s\"}}"),
              "providers[0].capacity.codel", "missing required key 'interval'");
}

static void scenario_discipline_without_a_concurrency_cap_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"discipline\":\"lifo\"}"),
              "providers[0].capacity.discipline", "only a provider with a capacity.concurrency");
}

static void scenario_efficiency_without_a_concurrency_cap_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"efficiency\":{\"queue_above\":1,\"share\":0.5}}"),
              "providers[0].capacity.efficiency", "only a provider with a capacity.concurrency");
}

static void scenario_queued_load_without_a_concurrency_cap_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"latency\":{\"load\":{\"queued\":0.1}}"),
              "providers[0].latency.load.queued", "only a provider with a capacity.concurrency");
}

static void scenario_efficiency_above_the_queue_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"concurrency\":4,\"queue\":10,"
                              "\"efficiency\":{\"queue_above\":10,\"share\":0.5}}"),
              "providers[0].capacity.efficiency", "queue_above must be below capacity.queue");
}

static void scenario_efficiency_share_of_zero_is_rejected(void **state) {
    (void)state;
    parse_bad(M1 ONE_PROVIDER(",\"capacity\":{\"concurrency\":4,\"queue\":10,"
                              "\"efficiency\":{\"queue_above\":2,\"share\":0}}"),
              "providers[0].capacity.efficiency.share", "out of range");
}

/* Each feature is answered by what asks for it; a scenario asking for one asks for no other. */
static void scenario_uses_answers_each_feature_from_its_owner(void **state) {
    (void)state;
    sim_scenario *plain = th_load("{\"name\":\"u\",\"duration\":\"10s\",\"traffic\":[{\"class\":"
                                  "\"c\",\"arrivals\":{\"constant\":\"1/s\"}}],"
                                  "\"providers\":[{\"name\":\"a\"}]}");
    sim_scenario *net = th_load(
        "{\"name\":\"u\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"constant\":\"1/s\"},\"serial\":true}],\"providers\":[{\"name\":\"a\",\"network\":"
        "{\"latency\":\"100ms\"}}],\"policy\":{\"connections\":{\"max\":1}}}");
    assert_true(scn_uses(plain, SIM_FEATURE_ALWAYS));
    for (int f = SIM_FEATURE_CONCLIMIT; f <= SIM_FEATURE_GATEWAY; f++) {
        assert_false(scn_uses(plain, (sim_feature)f));
        bool want = f == SIM_FEATURE_NETWORK || f == SIM_FEATURE_POOL || f == SIM_FEATURE_SERIAL;
        if (scn_uses(net, (sim_feature)f) != want) fail_msg("feature %d", f);
    }
    scn_free(plain);
    scn_free(net);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_uses_answers_each_feature_from_its_owner),
        cmocka_unit_test(scenario_durations_parse_with_units),
        cmocka_unit_test(scenario_durations_compound),
        cmocka_unit_test(scenario_duration_limit_names_both_durations),
        cmocka_unit_test(scenario_rates_parse_per_unit),
        cmocka_unit_test(scenario_minimal_gets_documented_defaults),
        cmocka_unit_test(scenario_flagship_file_loads),
        cmocka_unit_test(scenario_replayed_arrivals_load_in_microseconds),
        cmocka_unit_test(scenario_replayed_arrivals_out_of_order_are_rejected),
        cmocka_unit_test(scenario_replayed_arrival_past_the_end_is_rejected),
        cmocka_unit_test(scenario_replayed_arrival_before_the_start_is_rejected),
        cmocka_unit_test(scenario_replayed_arrival_that_is_no_number_is_rejected),
        cmocka_unit_test(scenario_replay_without_times_is_rejected),
        cmocka_unit_test(scenario_replayed_sessions_load_and_need_their_keys),
        cmocka_unit_test(scenario_sessions_use_their_recorded_think_times),
        cmocka_unit_test(scenario_fault_recorded_hits_load_and_need_even),
        cmocka_unit_test(scenario_replayed_retries_start_when_the_logs_did),
        cmocka_unit_test(scenario_replayed_retries_need_their_shape),
        cmocka_unit_test(scenario_replay_with_a_ramp_is_rejected),
        cmocka_unit_test(scenario_replay_over_its_cap_is_rejected),
        cmocka_unit_test(scenario_unknown_key_suggests_the_closest),
        cmocka_unit_test(scenario_negative_duration_is_rejected_with_its_path),
        cmocka_unit_test(scenario_wrong_types_name_what_was_expected),
        cmocka_unit_test(scenario_fault_fraction_above_one_is_rejected),
        cmocka_unit_test(scenario_provider_listed_twice_in_the_fallback_is_rejected),
        cmocka_unit_test(scenario_misspelt_fallback_provider_gets_a_suggestion),
        cmocka_unit_test(scenario_breaker_window_that_does_not_divide_into_buckets_is_rejected),
        cmocka_unit_test(scenario_misspelt_jitter_gets_a_suggestion),
        cmocka_unit_test(scenario_name_with_a_space_is_rejected),
        cmocka_unit_test(scenario_two_providers_with_one_name_are_rejected),
        cmocka_unit_test(scenario_missing_required_keys_are_named),
        cmocka_unit_test(scenario_invalid_json_reports_line_and_column),
        cmocka_unit_test(scenario_set_overrides_by_path_and_by_name),
        cmocka_unit_test(scenario_set_names_the_gateway_tier_layer),
        cmocka_unit_test(scenario_seed_override_replaces_the_file_seed),
        cmocka_unit_test(scenario_caps_are_enforced),
        cmocka_unit_test(scenario_missing_file_is_an_io_error),
        cmocka_unit_test(scenario_token_bucket_capacity_that_overflows_is_rejected),
        cmocka_unit_test(scenario_tick_longer_than_the_duration_is_rejected),
        cmocka_unit_test(scenario_provider_name_with_punctuation_is_rejected),
        cmocka_unit_test(scenario_class_name_with_a_space_is_rejected),
        cmocka_unit_test(scenario_breaker_open_max_below_open_is_rejected),
        cmocka_unit_test(scenario_brownout_without_a_concurrency_cap_is_rejected),
        cmocka_unit_test(scenario_spillover_hold_over_120_ticks_is_rejected),
        cmocka_unit_test(scenario_duration_in_an_unknown_unit_is_rejected),
        cmocka_unit_test(scenario_duration_out_of_range_is_rejected),
        cmocka_unit_test(scenario_set_of_a_misspelt_variant_is_rejected),
        cmocka_unit_test(scenario_set_paths_and_values_come_from_the_tables),
        cmocka_unit_test(scenario_set_paths_below_every_section_are_checked),
        cmocka_unit_test(scenario_set_checks_distributions_by_their_tables),
        cmocka_unit_test(scenario_set_checks_values_read_by_hooks),
        cmocka_unit_test(scenario_set_of_a_whole_element_is_checked),
        cmocka_unit_test(scenario_set_checks_keys_read_against_the_document),
        cmocka_unit_test(scenario_top_keys_are_the_top_tables),
        cmocka_unit_test(scenario_breaker_scope_typo_gets_a_did_you_mean),
        cmocka_unit_test(scenario_fault_starting_at_the_end_is_rejected),
        cmocka_unit_test(scenario_fault_starting_after_the_end_is_rejected),
        cmocka_unit_test(scenario_fault_starting_just_before_the_end_loads),
        cmocka_unit_test(scenario_outage_with_a_success_status_is_rejected),
        cmocka_unit_test(scenario_outage_with_an_informational_status_is_rejected),
        cmocka_unit_test(scenario_flap_with_a_success_status_is_rejected),
        cmocka_unit_test(scenario_rate_limit_with_a_redirect_status_is_rejected),
        cmocka_unit_test(scenario_overload_status_must_be_an_error),
        cmocka_unit_test(scenario_fault_script_with_a_success_status_is_rejected),
        cmocka_unit_test(scenario_slow_factor_may_be_a_distribution),
        cmocka_unit_test(scenario_fault_sampling_is_draw_or_even),
        cmocka_unit_test(scenario_fault_retry_fraction_is_a_share_for_the_kinds_with_a_fraction),
        cmocka_unit_test(scenario_spike_starting_at_the_end_is_rejected),
        cmocka_unit_test(scenario_burst_after_the_end_is_rejected),
        cmocka_unit_test(scenario_provider_load_and_queue_settings_parse),
        cmocka_unit_test(scenario_provider_queue_defaults_to_fifo_without_loss),
        cmocka_unit_test(scenario_unknown_discipline_gets_a_suggestion),
        cmocka_unit_test(scenario_codel_without_its_settings_is_rejected),
        cmocka_unit_test(scenario_codel_settings_without_codel_are_rejected),
        cmocka_unit_test(scenario_codel_needs_target_and_interval),
        cmocka_unit_test(scenario_discipline_without_a_concurrency_cap_is_rejected),
        cmocka_unit_test(scenario_efficiency_without_a_concurrency_cap_is_rejected),
        cmocka_unit_test(scenario_queued_load_without_a_concurrency_cap_is_rejected),
        cmocka_unit_test(scenario_efficiency_above_the_queue_is_rejected),
        cmocka_unit_test(scenario_efficiency_share_of_zero_is_rejected),
        cmocka_unit_test(scenario_provider_and_fault_defaults_are_the_documented_ones),
    };
    return cmocka_run_group_tests_name("scenario", tests, NULL, NULL);
}
