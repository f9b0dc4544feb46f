/*
 * test_client.c - the client-side models of a run at exact times: the
 * concurrency limit (a full limit rejects at once, or falls back; the
 * limit over time), hedged requests (a hedge that wins, a handled failure
 * that hedges at once, a fatal one that does not, losers cancelled or left
 * running, against keeps_working), the network's latency each way (the
 * attempt timeout runs from the send) and the connection pool (FIFO waits,
 * setups, reuse, a reset or timeout closing a connection, keepalive, a
 * pool shared by providers). Requests arrive at explicit instants and
 * latencies are constants; the tests assert when each request ended and
 * what was counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

/*
 * `count` requests, one each 250 ms from 0 (a constant arrival at 0 and
 * bursts of one), rows of 250 ms over 10 s; `providers` is the providers'
 * array, `policy` the policy object.
 */
static sim_scenario *requests_every(int count, int gap_ms, const char *providers,
                                    const char *policy) {
    char json[4096], bursts[1024] = "";
    size_t o = 0;
    for (int i = 1; i < count; i++)
        o += (size_t)snprintf(bursts + o, sizeof bursts - o, "%s{\"at\":\"%dms\",\"count\":1}",
                              i > 1 ? "," : "", gap_ms * i);
    snprintf(json, sizeof json,
             "{\"name\":\"c\",\"duration\":\"10s\",\"tick\":\"250ms\","
             "\"pods\":{\"request_timeout\":\"9s\"},"
             "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/h\"},"
             "\"bursts\":[%s]}],\"providers\":%s,\"policy\":%s}",
             bursts, providers, policy);
    return th_load(json);
}

static sim_scenario *requests(int count, const char *providers, const char *policy) {
    return requests_every(count, 250, providers, policy);
}

#define API_1S "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"}}]"

/* ---- the concurrency limit ---- */

/*
 * A fixed limit of 2 (one pod) with four requests 250 ms apart, 1 s each:
 * the third and fourth find it full and end at once (rate_limited, a
 * client-side limiter), without reaching the provider.
 */
static void conclimit_full_rejects_at_once(void **state) {
    (void)state;
    sim_scenario *sc = requests(
        4, API_1S, "{\"concurrency_limit\":{\"api\":{\"algorithm\":\"fixed\",\"limit\":2}}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "500:1 750:1 1000:1 1250:1");
    assert_int_equal(s->ended[SIM_END_RATE_LIMITED], 2);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 2);
    assert_int_equal(s->providers[0].attempts, 2);
    assert_int_equal(s->providers[0].limit_rejections, 2);
    assert_true(th_metric(sc, s, "limit_rejections[api]") == 2);
    assert_true(c.r[0].p[0].limit == 2.0); /* the limit over time */
    free(s);
    scn_free(sc);
}

/* A full limit skips its provider: the rejected requests fall back to the next one. */
static void conclimit_full_falls_back(void **state) {
    (void)state;
    sim_scenario *sc =
        requests(4,
                 "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"}},"
                 "{\"name\":\"alt\",\"latency\":{\"ttft\":\"2s\"}}]",
                 "{\"concurrency_limit\":{\"api\":{\"algorithm\":\"fixed\",\"limit\":2}}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1 1250:1 2500:1 2750:1");
    assert_int_equal(s->success_fallback, 2);
    assert_int_equal(s->providers[1].attempts, 2);
    assert_true(isnan(c.r[0].p[1].limit)); /* alt has no limit */
    free(s);
    scn_free(sc);
}

/*
 * AIMD (min 1) with a provider that answers 503 from 0 to 600 ms: the
 * first three attempts are drops, 20 -> 18 -> 16 -> 14 ((int)(limit x
 * 0.9)), and the row after them shows 14; the fourth, a success with one
 * in flight (1 x 2 < 14), leaves it there.
 */
static void conclimit_aimd_backs_off_on_drops(void **state) {
    (void)state;
    sim_scenario *sc =
        requests(4,
                 "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\",\"error\":\"10ms\"},"
                 "\"faults\":[{\"at\":\"0s\",\"for\":\"600ms\",\"outage\":{\"status\":503}}]}]",
                 "{\"concurrency_limit\":{\"api\":{\"algorithm\":\"aimd\",\"min\":1}}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "0:1 250:1 500:1 1750:1");
    assert_int_equal(s->providers[0].limit_drops, 3);
    assert_true(c.r[2].p[0].limit == 14.0); /* the row [500, 750) */
    assert_true(c.r[8].p[0].limit == 14.0);
    assert_int_equal(s->providers[0].limit_min, 14);
    assert_int_equal(s->providers[0].limit_max, 20);
    free(s);
    scn_free(sc);
}

/* ---- hedging ---- */

/*
 * The first attempt arrives during a slow fault (x5: 5 s); the hedge after
 * 300 ms is not slowed and answers at 1.3 s: it wins, the first is
 * cancelled (keeps_working false: its slot is freed, not billed in full).
 */
static void hedge_wins_against_a_slow_first_attempt(void **state) {
    (void)state;
    sim_scenario *sc =
        requests(1,
                 "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},\"keeps_working\":false,"
                 "\"faults\":[{\"at\":\"0s\",\"for\":\"100ms\",\"slow\":{\"factor\":5}}]}]",
                 "{\"hedging\":{\"delay\":\"300ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1250:1");
    assert_int_equal(fb_hist_max(&s->latency), 1300 * MS);
    assert_int_equal(s->hedges, 1);
    assert_int_equal(s->hedges_won, 1);
    assert_int_equal(s->providers[0].attempts, 2);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_SUCCESS], 1);
    assert_int_equal(s->providers[0].served, 2); /* the loser's slot was worked on until 1.3 s */
    assert_int_equal(s->providers[0].unfinished, 0);
    assert_true(th_metric(sc, s, "hedges[api]") == 1);
    free(s);
    scn_free(sc);
}

/*
 * The same, left running (cancel false) on a provider that keeps working:
 * the loser runs its 5 s and is billed, wasted; the request still ends at 1.3 s.
 */
static void hedge_loser_left_running_is_billed(void **state) {
    (void)state;
    sim_scenario *sc =
        requests(1,
                 "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                 "\"price\":{\"input_per_mtok\":1000},"
                 "\"faults\":[{\"at\":\"0s\",\"for\":\"100ms\",\"slow\":{\"factor\":5}}]}]",
                 "{\"hedging\":{\"delay\":\"300ms\",\"cancel\":false}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1250:1");
    assert_int_equal(s->providers[0].served, 2);
    assert_int_equal(s->providers[0].abandoned, 1); /* served to its end (5 s), for nobody */
    /* 1000 prompt tokens at $1000 per million: $1 each; the loser's is wasted */
    assert_true(fabs(s->cost_usd - 2.0) < 1e-9);
    assert_true(fabs(s->cost_wasted_usd - 1.0) < 1e-9);
    assert_true(fabs(s->hedge_cost_usd - 1.0) < 1e-9);
    free(s);
    scn_free(sc);
}

/*
 * A 503 at 50 ms is a handled failure: the hedge goes at once, not after
 * the 2 s delay, and answers at 1.05 s. The first attempt's failure was
 * answered, so the group's answer is the hedge's: hedges_won.
 */
static void hedge_handled_failure_hedges_at_once(void **state) {
    (void)state;
    sim_scenario *sc = requests(1,
                                "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                                "\"faults\":[{\"at\":\"0s\",\"for\":\"10ms\",\"outage\":{}}]}]",
                                "{\"hedging\":{}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1");
    assert_int_equal(fb_hist_max(&s->latency), 1050 * MS);
    assert_int_equal(s->hedges_won, 1);
    assert_int_equal(s->retries, 0); /* not a retry of the engine's */
    free(s);
    scn_free(sc);
}

/* A 400 is fatal: no hedge, the request ends permanent at 50 ms. */
static void hedge_fatal_failure_ends_the_group(void **state) {
    (void)state;
    sim_scenario *sc =
        requests(1,
                 "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                 "\"faults\":[{\"at\":\"0s\",\"for\":\"10ms\",\"outage\":{\"status\":400}}]}]",
                 "{\"hedging\":{\"delay\":\"100ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "0:1");
    assert_int_equal(s->ended[SIM_END_PERMANENT], 1);
    assert_int_equal(s->hedges, 0);
    free(s);
    scn_free(sc);
}

/*
 * Hedge to the next provider of the chain: api takes 1 s, alt 200 ms; the
 * hedge after 300 ms wins at 500 ms and the answer counts as a fallback.
 */
static void hedge_to_the_next_provider(void **state) {
    (void)state;
    sim_scenario *sc = requests(1,
                                "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"}},"
                                "{\"name\":\"alt\",\"latency\":{\"ttft\":\"200ms\"}}]",
                                "{\"hedging\":{\"delay\":\"300ms\",\"target\":\"next\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "500:1");
    assert_int_equal(fb_hist_max(&s->latency), 500 * MS);
    assert_int_equal(s->success_fallback, 1);
    assert_int_equal(s->providers[1].hedges, 1);
    assert_int_equal(s->providers[0].served, 1); /* keeps_working: the loser runs to 1 s */
    free(s);
    scn_free(sc);
}

/* Every attempt failed: max_attempts 3, each a 503 at 50 ms; the group ends exhausted. */
static void hedge_all_failed_ends_exhausted(void **state) {
    (void)state;
    sim_scenario *sc = requests(1,
                                "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                                "\"faults\":[{\"at\":\"0s\",\"for\":\"1s\",\"outage\":{}}]}]",
                                "{\"hedging\":{\"max_attempts\":3}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "0:1");
    assert_int_equal(fb_hist_max(&s->latency), 150 * MS); /* 50 + 50 + 50 ms */
    assert_int_equal(s->ended[SIM_END_EXHAUSTED], 1);
    assert_int_equal(s->hedges, 2);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TRANSIENT], 3);
    free(s);
    scn_free(sc);
}

/* A hedge the concurrency limit does not admit is not sent: the first answers at 1 s. */
static void hedge_refused_by_a_full_limit(void **state) {
    (void)state;
    sim_scenario *sc = requests(1, API_1S,
                                "{\"hedging\":{\"delay\":\"300ms\"},"
                                "\"concurrency_limit\":{\"api\":{\"algorithm\":\"fixed\","
                                "\"limit\":1}}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1");
    assert_int_equal(s->hedges, 0);
    assert_int_equal(s->providers[0].limit_rejections, 1);
    free(s);
    scn_free(sc);
}

/*
 * The request's timeout (1.5 s) ends a group whose calls both hang: both are
 * abandoned and their concurrency permits come back: the limit of 2 admits
 * the next request at 2 s and its hedge at 2.3 s, and it is answered at 3 s.
 */
static void hedge_group_ends_with_its_request(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"c\",\"duration\":\"10s\",\"tick\":\"250ms\","
                "\"pods\":{\"request_timeout\":\"1500ms\"},"
                "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/h\"},"
                "\"bursts\":[{\"at\":\"2s\",\"count\":1}]}],"
                "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                "\"faults\":[{\"at\":\"0s\",\"for\":\"1500ms\",\"hang\":{}}]}],"
                "\"policy\":{\"hedging\":{\"delay\":\"300ms\"},\"concurrency_limit\":"
                "{\"api\":{\"algorithm\":\"fixed\",\"limit\":2}}}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1500:1 3000:1");
    assert_int_equal(s->ended[SIM_END_TIMEOUT], 1);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 1);
    assert_int_equal(s->hedges, 2); /* one per request (the second's loses at 3 s) */
    assert_int_equal(s->providers[0].limit_rejections, 0);
    /* the first request's two calls and the second's losing hedge end without a sample */
    assert_int_equal(s->providers[0].limit_ignored, 3);
    free(s);
    scn_free(sc);
}

/* ---- network ---- */

/* 100 ms each way around a 1 s answer: 1.2 s. */
static void network_latency_each_way(void **state) {
    (void)state;
    sim_scenario *sc = requests(
        1, "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},\"network\":{\"latency\":\"100ms\"}}]",
        "{}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1");
    assert_int_equal(fb_hist_max(&s->latency), 1200 * MS);
    free(s);
    scn_free(sc);
}

/*
 * The attempt timeout runs from the send: 1.15 s is after the provider's
 * answer (1.1 s) but before it reaches the client (1.2 s): a timeout.
 */
static void network_return_trip_counts_against_the_timeout(void **state) {
    (void)state;
    sim_scenario *sc = requests(
        1, "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},\"network\":{\"latency\":\"100ms\"}}]",
        "{\"retry\":{\"attempts\":1,\"attempt_timeout\":\"1150ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1");
    assert_int_equal(fb_hist_max(&s->latency), 1150 * MS);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TIMEOUT], 1);
    assert_int_equal(s->providers[0].served, 1); /* the provider did the work */
    free(s);
    scn_free(sc);
}

/* ---- connections ---- */

/*
 * One connection, 100 ms to open, four requests 250 ms apart of 1 s: the
 * first opens it (ends at 1.1 s); the others wait in turn and reuse it
 * warm: 2.1, 3.1, 4.1 s.
 */
static void pool_of_one_serves_in_turn_and_reuses(void **state) {
    (void)state;
    sim_scenario *sc = requests(4, API_1S, "{\"connections\":{\"max\":1,\"setup\":\"100ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1 2000:1 3000:1 4000:1");
    assert_int_equal(fb_hist_max(&s->latency), 3350 * MS); /* 750 ms -> 4.1 s */
    assert_int_equal(s->providers[0].conn_setups, 1);
    assert_int_equal(s->providers[0].conn_waits, 3);
    /* waits: 250 -> 1100, 500 -> 2100, 750 -> 3100 ms */
    assert_true(fabs(s->providers[0].conn_wait_s - (0.85 + 1.6 + 2.35)) < 1e-9);
    assert_int_equal(c.r[1].p[0].conn_wait, 1); /* row [250, 500): one waiting */
    assert_int_equal(c.r[3].p[0].conn_wait, 3);
    free(s);
    scn_free(sc);
}

/* keepalive 0: no idle connection is kept, every attempt opens its own. */
static void pool_without_keepalive_opens_each_time(void **state) {
    (void)state;
    sim_scenario *sc =
        requests(4, API_1S, "{\"connections\":{\"max\":1,\"keepalive\":0,\"setup\":\"100ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1 2000:1 3250:1 4250:1");
    assert_int_equal(s->providers[0].conn_setups, 4);
    free(s);
    scn_free(sc);
}

/* A reset closes the connection: the next request opens a new one. */
static void pool_reset_closes_the_connection(void **state) {
    (void)state;
    sim_scenario *sc = requests(2,
                                "[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                                "\"faults\":[{\"at\":\"0s\",\"for\":\"200ms\",\"reset\":{}}]}]",
                                "{\"connections\":{\"max\":1,\"setup\":\"100ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "0:1 1250:1");
    assert_int_equal(s->providers[0].conn_setups, 2);
    assert_int_equal(fb_hist_max(&s->latency), 1100 * MS); /* 250 ms -> 1.35 s */
    free(s);
    scn_free(sc);
}

/*
 * The wait counts against the attempt timeout (1.5 s from the send): the
 * second request waits 250 -> 1100 ms for the connection and is in service
 * (1 s alone, within the timeout) when its timeout fires at 1.75 s.
 */
static void pool_wait_counts_against_the_timeout(void **state) {
    (void)state;
    sim_scenario *sc = requests(2, API_1S,
                                "{\"connections\":{\"max\":1,\"setup\":\"100ms\"},"
                                "\"retry\":{\"attempts\":1,\"attempt_timeout\":\"1500ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "1000:1 1750:1");
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TIMEOUT], 1);
    assert_int_equal(fb_hist_max(&s->latency), 1500 * MS);
    free(s);
    scn_free(sc);
}

/*
 * A timeout closes the connection: two requests 2 s apart that time out
 * at 500 ms each open one connection each (a kept one would be reused).
 */
static void pool_timeout_closes_the_connection(void **state) {
    (void)state;
    sim_scenario *sc = requests_every(2, 2000, API_1S,
                                      "{\"connections\":{\"max\":1,\"setup\":\"100ms\"},"
                                      "\"retry\":{\"attempts\":1,\"attempt_timeout\":\"500ms\"}}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "500:1 2500:1");
    assert_int_equal(s->providers[0].conn_setups, 2);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TIMEOUT], 2);
    free(s);
    scn_free(sc);
}

/*
 * A pool shared by a slow tool (5 s) and an LLM (100 ms), with a tool call
 * and an LLM call at 0, a tool call at 250 ms and an LLM call at 500 ms.
 */
static sim_scenario *shared_pool(const char *connections) {
    char policy[512];
    snprintf(policy, sizeof policy, "{\"connections\":%s}", connections);
    char json[4096];
    snprintf(json, sizeof json,
             "{\"name\":\"c\",\"duration\":\"10s\",\"tick\":\"250ms\","
             "\"pods\":{\"request_timeout\":\"9s\"},"
             "\"traffic\":[{\"class\":\"tool\",\"arrivals\":{\"constant\":\"1/h\"},"
             "\"target\":\"slow\",\"bursts\":[{\"at\":\"250ms\",\"count\":1}]},"
             "{\"class\":\"chat\",\"arrivals\":{\"constant\":\"1/h\"},"
             "\"bursts\":[{\"at\":\"500ms\",\"count\":1}]}],"
             "\"providers\":[{\"name\":\"llm1\",\"latency\":{\"ttft\":\"100ms\"}},"
             "{\"name\":\"slow\",\"kind\":\"tool\",\"latency\":{\"ttft\":\"5s\"}}],"
             "\"policy\":%s}",
             policy);
    return th_load(json);
}

/*
 * max 2: the tool calls hold both connections from 250 ms (the second
 * closes the LLM's idle one to open its own), so the LLM call at 500 ms
 * waits until the first tool call ends at 5 s (ends 5.1 s): collateral.
 * With per_provider 1 the tool keeps to one connection: the LLM call is
 * served at once on its idle one, and the second tool call waits instead
 * (from 5 s, 5 s more: its request times out at 9.25 s).
 */
static void pool_shared_slow_provider_makes_the_other_wait(void **state) {
    (void)state;
    sim_scenario *sc = shared_pool("{\"max\":2}");
    th_rows c;
    sim_summary *s = th_run_ends(sc, &c, "0:1 5000:2 5250:1");
    assert_int_equal(s->providers[0].conn_waits, 1);
    assert_int_equal(s->providers[1].conn_waits, 0);
    assert_int_equal(s->providers[1].conn_setups, 2);
    free(s);
    scn_free(sc);
    sc = shared_pool("{\"max\":2,\"per_provider\":1}");
    s = th_run_ends(sc, &c, "0:1 500:1 5000:1 9250:1");
    assert_int_equal(s->providers[0].conn_waits, 0);
    assert_int_equal(s->providers[1].conn_waits, 1);
    assert_int_equal(s->ended[SIM_END_TIMEOUT], 1);
    free(s);
    scn_free(sc);
}

/* The loader: misplaced keys and settings of another algorithm are errors. */
static void client_keys_are_checked(void **state) {
    (void)state;
    static const char *const bad[][2] = {
        {"{\"concurrency_limit\":{\"api\":{\"algorithm\":\"fixed\",\"limit\":2,"
         "\"backoff_ratio\":0.9}}}",
         "is a setting of the aimd algorithm"},
        {"{\"concurrency_limit\":{\"api\":{\"algorithm\":\"aimd\",\"initial\":300}}}",
         "outside [min, max]"},
        {"{\"concurrency_limit\":{\"api\":{\"algorithm\":\"fixed\"}}}", "limit"},
        {"{\"hedging\":{\"window\":10}}", "give \"percentile\" too"},
        {"{\"hedging\":{},\"stream\":\"resume\"}", "cannot be combined"},
        {"{\"connections\":{\"setup\":\"1s\"}}", "needs a maximum"},
        {"{\"connections\":{\"max\":2,\"per_provider\":3}}", "could never be reached"},
        {"{\"layers\":[{\"name\":\"app\",\"hedging\":{}},{\"name\":\"sdk\"}]}",
         "hedging belongs to the innermost layer"},
        {"{\"layers\":[{\"name\":\"app\",\"connections\":{\"max\":1}},{\"name\":\"sdk\"}]}",
         "connections belong to the innermost layer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"name\":\"c\",\"duration\":\"10s\","
                 "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/s\"}}],"
                 "\"providers\":" API_1S ",\"policy\":%s}",
                 bad[i][0]);
        sim_scenario *sc = NULL;
        sim_error err;
        memset(&err, 0, sizeof err);
        int rc = scn_parse(json, strlen(json), "x.json", NULL, 0, NULL, &sc, &err);
        if (rc == FB_OK) fail_msg("case %zu loaded: %s", i, bad[i][0]);
        if (strstr(err.msg, bad[i][1]) == NULL)
            fail_msg("case %zu: %s: %s (wanted \"%s\")", i, err.path, err.msg, bad[i][1]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conclimit_full_rejects_at_once),
        cmocka_unit_test(conclimit_full_falls_back),
        cmocka_unit_test(conclimit_aimd_backs_off_on_drops),
        cmocka_unit_test(hedge_wins_against_a_slow_first_attempt),
        cmocka_unit_test(hedge_loser_left_running_is_billed),
        cmocka_unit_test(hedge_handled_failure_hedges_at_once),
        cmocka_unit_test(hedge_fatal_failure_ends_the_group),
        cmocka_unit_test(hedge_to_the_next_provider),
        cmocka_unit_test(hedge_all_failed_ends_exhausted),
        cmocka_unit_test(hedge_refused_by_a_full_limit),
        cmocka_unit_test(hedge_group_ends_with_its_request),
        cmocka_unit_test(network_latency_each_way),
        cmocka_unit_test(network_return_trip_counts_against_the_timeout),
        cmocka_unit_test(pool_of_one_serves_in_turn_and_reuses),
        cmocka_unit_test(pool_without_keepalive_opens_each_time),
        cmocka_unit_test(pool_reset_closes_the_connection),
        cmocka_unit_test(pool_wait_counts_against_the_timeout),
        cmocka_unit_test(pool_timeout_closes_the_connection),
        cmocka_unit_test(pool_shared_slow_provider_makes_the_other_wait),
        cmocka_unit_test(client_keys_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
