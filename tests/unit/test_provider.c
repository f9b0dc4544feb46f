/*
 * test_provider.c - the provider model's load-dependent latency, efficiency
 * loss and queue disciplines (sim/provider.c), with exact times: requests
 * arrive at explicit instants, service times are constants, and the tests
 * assert when each one ended and what the provider did with each attempt.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

/* Run the only variant, its rows into *c; the caller frees the summary. */
static sim_summary *run(const sim_scenario *sc, th_rows *c) {
    memset(c, 0, sizeof *c);
    return th_run(sc, 0, th_keep_row, c);
}

/*
 * Four requests, one each at 0, 250, 500 and 750 ms (one constant arrival
 * at 0 and three bursts of one), 10 s of rows of 250 ms; `capacity` and
 * `latency` are the provider's objects and `retry` the policy's retry.
 */
static sim_scenario *four_requests(const char *capacity, const char *latency, const char *retry) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"name\":\"p\",\"duration\":\"10s\",\"tick\":\"250ms\","
             "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/h\"},"
             "\"bursts\":[{\"at\":\"250ms\",\"count\":1},{\"at\":\"500ms\",\"count\":1},"
             "{\"at\":\"750ms\",\"count\":1}]}],"
             "\"providers\":[{\"name\":\"api\",\"latency\":%s,\"capacity\":%s}],"
             "\"policy\":{\"retry\":%s}}",
             latency, capacity, retry);
    return th_load(json);
}

/* Run sc and check the rows in which requests ended ("1000:1 1750:1"); the caller frees it. */
static sim_summary *run_ends(const sim_scenario *sc, const char *want) {
    th_rows c;
    return th_run_ends(sc, &c, want);
}

#define ONE_ATTEMPT "{\"attempts\":1}"

/* ---- latency.load ---- */

/*
 * 1 s alone, +50% per other attempt in service when it starts: the four
 * start with 0, 1, 2 and 3 others in service and take 1, 1.5, 2 and 2.5 s.
 */
static void load_in_service_lengthens_each_attempt_by_the_others_in_service(void **state) {
    (void)state;
    sim_scenario *sc =
        four_requests("{}", "{\"ttft\":\"1s\",\"load\":{\"in_service\":0.5}}", ONE_ATTEMPT);
    sim_summary *s = run_ends(sc, "1000:1 1750:1 2500:1 3250:1");
    assert_int_equal(fb_hist_min(&s->latency), 1 * S);
    assert_int_equal(fb_hist_max(&s->latency), 2500 * MS);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 4);
    free(s);
    scn_free(sc);
}

/* Without load the same four take 1 s each: the control for the test above. */
static void load_absent_keeps_the_base_latency(void **state) {
    (void)state;
    sim_scenario *sc = four_requests("{}", "{\"ttft\":\"1s\"}", ONE_ATTEMPT);
    sim_summary *s = run_ends(sc, "1000:1 1250:1 1500:1 1750:1");
    assert_int_equal(fb_hist_max(&s->latency), 1 * S);
    free(s);
    scn_free(sc);
}

/*
 * One slot, +50% per attempt still waiting when one starts: the first
 * starts alone (1 s, ends at 1 s); then the 250 ms one starts with two
 * behind it (2 s, to 3 s), the 500 ms one with one (1.5 s, to 4.5 s), the
 * last alone (1 s, to 5.5 s).
 */
static void load_queued_lengthens_by_the_attempts_waiting(void **state) {
    (void)state;
    sim_scenario *sc = four_requests("{\"concurrency\":1,\"queue\":10}",
                                     "{\"ttft\":\"1s\",\"load\":{\"queued\":0.5}}", ONE_ATTEMPT);
    sim_summary *s = run_ends(sc, "1000:1 3000:1 4500:1 5500:1");
    assert_int_equal(fb_hist_max(&s->latency), 4750 * MS); /* 750 ms -> 5.5 s */
    assert_int_equal(s->providers[0].queue_peak, 3);
    free(s);
    scn_free(sc);
}

/* ---- capacity.efficiency ---- */

static sim_scenario *herd(int count, const char *capacity) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\":\"h\",\"duration\":\"10s\","
             "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/h\"},"
             "\"bursts\":[{\"at\":\"0s\",\"count\":%d}]}],"
             "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},\"capacity\":%s}]}",
             count - 1, capacity);
    return th_load(json);
}

/*
 * 12 at once on 4 slots of 1 s: 8 wait. While more than 2 wait only half
 * the slots serve, so after the first four (at 1 s) two start at a time
 * until the queue is down to 2, when all four slots serve again.
 */
static void efficiency_halves_the_slots_while_the_queue_is_long(void **state) {
    (void)state;
    sim_scenario *sc = herd(12, "{\"concurrency\":4,\"queue\":100,"
                                "\"efficiency\":{\"queue_above\":2,\"share\":0.5}}");
    sim_summary *s = run_ends(sc, "1000:4 2000:2 3000:2 4000:4");
    assert_int_equal(s->ended[SIM_END_SUCCESS], 12);
    free(s);
    scn_free(sc);
}

static void efficiency_absent_serves_four_at_a_time(void **state) {
    (void)state;
    sim_scenario *sc = herd(12, "{\"concurrency\":4,\"queue\":100}");
    sim_summary *s = run_ends(sc, "1000:4 2000:4 3000:4");
    free(s);
    scn_free(sc);
}

/* ---- disciplines ---- */

/* One slot of 1 s: LIFO serves 750 ms, 500 ms, 250 ms after the first; FIFO the other way. */
static void lifo_serves_the_newest_first(void **state) {
    (void)state;
    sim_scenario *sc = four_requests("{\"concurrency\":1,\"queue\":10,\"discipline\":\"lifo\"}",
                                     "{\"ttft\":\"1s\"}", ONE_ATTEMPT);
    sim_summary *s = run_ends(sc, "1000:1 2000:1 3000:1 4000:1");
    /* the 750 ms request waits 1.25 s, the 250 ms one 3.75 s (FIFO: 1.75 s and 3.25 s) */
    assert_int_equal(fb_hist_max(&s->latency), 3750 * MS);
    free(s);
    scn_free(sc);
}

static void fifo_serves_the_oldest_first(void **state) {
    (void)state;
    sim_scenario *sc =
        four_requests("{\"concurrency\":1,\"queue\":10}", "{\"ttft\":\"1s\"}", ONE_ATTEMPT);
    th_rows c;
    sim_summary *s = run(sc, &c);
    assert_int_equal(fb_hist_max(&s->latency), 3250 * MS);
    assert_int_equal(fb_hist_min(&s->latency), 1 * S);
    free(s);
    scn_free(sc);
}

/*
 * LIFO serves from the tail, so attempts cancelled at the bottom of a queue
 * that never empties (keeps_working false, 2 s timeout, ten times more
 * arrivals than service) leave stale entries there. They must not pile up:
 * the queue's ring is capped at limits.in_flight + 1 entries, and a pile
 * would stop the run at that cap within seconds.
 */
static void lifo_does_not_pile_up_cancelled_attempts(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"l\",\"duration\":\"60s\",\"limits\":{\"in_flight\":100},"
        "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"10/s\"}}],"
        "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},\"keeps_working\":false,"
        "\"capacity\":{\"concurrency\":1,\"queue\":50,\"discipline\":\"lifo\"}}],"
        "\"policy\":{\"retry\":{\"attempts\":1,\"attempt_timeout\":\"2s\"}}}");
    th_rows c;
    sim_summary *s = run(sc, &c); /* fails unless the run completes */
    assert_int_equal(s->requests, 600);
    assert_true(s->providers[0].outcomes[FB_OUT_TIMEOUT] > 400);
    free(s);
    scn_free(sc);
}

#define TIMEOUT_1200MS "{\"attempts\":1,\"attempt_timeout\":\"1.2s\"}"

/*
 * One slot of 1 s; each client gives up 1.2 s after it sent. The 250 ms
 * attempt starts at 1 s and runs to its end at 2 s (in service: kept,
 * although its client left at 1.45 s). The 500 ms and 750 ms ones were
 * given up at 1.7 s and 1.95 s while waiting: at 2 s drop_expired skips
 * both, where FIFO serves both (2 s to 4 s) for nobody.
 */
static void drop_expired_skips_abandoned_attempts_at_the_head(void **state) {
    (void)state;
    sim_scenario *sc =
        four_requests("{\"concurrency\":1,\"queue\":10,\"discipline\":\"drop_expired\"}",
                      "{\"ttft\":\"1s\"}", TIMEOUT_1200MS);
    th_rows c;
    sim_summary *s = run(sc, &c);
    const sim_provider_summary *p = &s->providers[0];
    assert_int_equal(p->served, 2);
    assert_int_equal(p->shed, 2);
    assert_int_equal(p->abandoned, 1); /* the one in service when its client left */
    assert_int_equal(p->unfinished, 0);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 1);
    free(s);
    scn_free(sc);
}

static void fifo_serves_abandoned_attempts_to_the_end(void **state) {
    (void)state;
    sim_scenario *sc =
        four_requests("{\"concurrency\":1,\"queue\":10}", "{\"ttft\":\"1s\"}", TIMEOUT_1200MS);
    th_rows c;
    sim_summary *s = run(sc, &c);
    const sim_provider_summary *p = &s->providers[0];
    assert_int_equal(p->served, 4);
    assert_int_equal(p->shed, 0);
    assert_int_equal(p->abandoned, 3);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 1);
    free(s);
    scn_free(sc);
}

/*
 * CoDel, target 500 ms, interval 2 s, on one slot of 1 s fed every 500 ms
 * for 10 s: the queue grows by one a second. The sojourn is above target
 * with more than one waiting from the dequeue at 3 s, so the first drop is
 * at 5 s (3 s + interval); then drops follow the control law, 2 s /
 * sqrt(count) apart: 7 s, 8.414214 s (served at 9 s), 9.568914 s (at 10 s),
 * 10.568914 s (at 11 s), 11.463341 s (at 12 s), where the drop leaves one
 * attempt waiting and CoDel stops: six dropped, each answered 503 after
 * the 50 ms error latency.
 */
static void codel_drops_on_its_control_law(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"q\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\","
                "\"arrivals\":{\"constant\":\"2/s\"}}],"
                "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                "\"capacity\":{\"concurrency\":1,\"queue\":100,\"discipline\":\"codel\","
                "\"codel\":{\"target\":\"500ms\",\"interval\":\"2s\"}}}]}");
    th_rows c;
    sim_summary *s = run(sc, &c);
    const sim_provider_summary *p = &s->providers[0];
    assert_int_equal(s->requests, 20);
    assert_int_equal(p->shed, 6);
    assert_int_equal(p->served, 14);
    assert_int_equal(s->errors, 6);
    assert_int_equal(p->outcomes[FB_OUT_TRANSIENT], 6);
    /* the drops inside the rows: at 5, 7 and 9 s (answered 50 ms later) */
    uint64_t errors = 0;
    for (size_t i = 0; i < c.n; i++) {
        uint64_t want = c.r[i].t_us == 5 * S || c.r[i].t_us == 7 * S || c.r[i].t_us == 9 * S;
        assert_int_equal(c.r[i].errors, want);
        errors += c.r[i].errors;
    }
    assert_int_equal(errors, 3);
    assert_int_equal(c.n, 10);
    assert_int_equal(s->end_us, 14 * S); /* 14 served back to back */
    free(s);
    scn_free(sc);
}

/* The same feed with a target the sojourn never reaches: nothing is dropped. */
static void codel_below_target_never_drops(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"q\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\","
                "\"arrivals\":{\"constant\":\"2/s\"}}],"
                "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"1s\"},"
                "\"capacity\":{\"concurrency\":1,\"queue\":100,\"discipline\":\"codel\","
                "\"codel\":{\"target\":\"20s\",\"interval\":\"2s\"}}}]}");
    th_rows c;
    sim_summary *s = run(sc, &c);
    assert_int_equal(s->providers[0].shed, 0);
    assert_int_equal(s->providers[0].served, 20);
    assert_int_equal(s->end_us, 20 * S);
    free(s);
    scn_free(sc);
}

/* ---- the bounded queue's answer ---- */

/* One slot, one place in the queue: the third of three at once gets the overload status. */
static void full_queue_answers_the_overload_status(const char *status, fb_outcome want) {
    char cap[256];
    snprintf(cap, sizeof cap, "{\"concurrency\":1,\"queue\":1,\"overload_status\":%s}", status);
    sim_scenario *sc = herd(3, cap);
    th_rows c;
    sim_summary *s = run(sc, &c);
    const sim_provider_summary *p = &s->providers[0];
    assert_int_equal(p->overloaded, 1);
    assert_int_equal(p->outcomes[want], 1);
    assert_int_equal(p->served, 2);
    assert_int_equal(s->errors, 1);
    free(s);
    scn_free(sc);
}

static void full_queue_answers_529_overloaded(void **state) {
    (void)state;
    full_queue_answers_the_overload_status("529", FB_OUT_TRANSIENT);
}

static void full_queue_answers_429_rate_limited(void **state) {
    (void)state;
    full_queue_answers_the_overload_status("429", FB_OUT_RATE_LIMITED);
}

/* ---- faults: retry_fraction ---- */

/*
 * A 429 window past the traffic's end on every first attempt's half (even) and a retry_fraction of
 * 1 or 0, three attempts: with 1, a request whose first attempt met it fails its two retries too (1
 * or 3 attempts, none of 2); with 0, its first retry gets through (1 or 2, none of 3). Without the
 * key (drawn: even, the regular arrivals would fall into a pattern), `fraction` for every
 * attempt: some of each. A share per retry, [1, 0]: the second attempt fails, the third gets
 * through (1 or 3 attempts, two 429s each), where a retry_fraction of 1 fails all three.
 */
static void retry_fraction_splits_first_attempts_and_retries(void **state) {
    (void)state;
    static const char *const retry_key[] = {"\"even\", \"retry_fraction\": 1",
                                            "\"even\", \"retry_fraction\": 0", "\"draw\"",
                                            "\"even\", \"retry_fraction\": [1, 0]"};
    for (int k = 0; k < 4; k++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"name\":\"r\",\"duration\":\"20s\","
                 "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"20/s\"}}],"
                 "\"providers\":[{\"name\":\"api\",\"latency\":{\"ttft\":\"100ms\"},"
                 "\"faults\":[{\"at\":\"0s\",\"for\":\"40s\",\"rate_limit\":{\"fraction\":0.5,"
                 "\"sampling\":%s}}]}],"
                 "\"policy\":{\"retry\":{\"attempts\":3,\"backoff\":{\"constant\":\"10ms\"},"
                 "\"jitter\":\"none\"}}}",
                 retry_key[k]);
        sim_scenario *sc = th_load(json);
        th_rows c;
        sim_summary *s = run(sc, &c);
        const uint64_t *b = s->breakdown.per_request;
        uint64_t n = b[1] + b[2] + b[3];
        assert_int_equal(n, s->requests);
        /* the first attempts' half (without the key the half is of every attempt) */
        uint64_t limited = s->providers[0].outcomes[FB_OUT_RATE_LIMITED];
        if (k != 2) assert_in_range(b[1], n / 2 - 1, n / 2 + 1);
        if (k == 0 || k == 3) assert_int_equal(b[2], 0);
        if (k == 0) assert_int_equal(limited, 3 * b[3]);
        if (k == 3) assert_int_equal(limited, 2 * b[3]);
        if (k == 1) assert_int_equal(b[3], 0);
        if (k == 2) assert_true(b[2] > n / 10 && b[3] > n / 10);
        free(s);
        scn_free(sc);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_in_service_lengthens_each_attempt_by_the_others_in_service),
        cmocka_unit_test(load_absent_keeps_the_base_latency),
        cmocka_unit_test(load_queued_lengthens_by_the_attempts_waiting),
        cmocka_unit_test(efficiency_halves_the_slots_while_the_queue_is_long),
        cmocka_unit_test(efficiency_absent_serves_four_at_a_time),
        cmocka_unit_test(lifo_serves_the_newest_first),
        cmocka_unit_test(fifo_serves_the_oldest_first),
        cmocka_unit_test(lifo_does_not_pile_up_cancelled_attempts),
        cmocka_unit_test(drop_expired_skips_abandoned_attempts_at_the_head),
        cmocka_unit_test(fifo_serves_abandoned_attempts_to_the_end),
        cmocka_unit_test(codel_drops_on_its_control_law),
        cmocka_unit_test(codel_below_target_never_drops),
        cmocka_unit_test(full_queue_answers_529_overloaded),
        cmocka_unit_test(full_queue_answers_429_rate_limited),
        cmocka_unit_test(retry_fraction_splits_first_attempts_and_retries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
