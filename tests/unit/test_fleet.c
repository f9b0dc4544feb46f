/*
 * test_fleet.c - the fleet's dynamics in whole runs: per-pod sources, serial
 * clients, user re-submissions, the autoscaler and its pods, the breaker
 * store's outages. Where the model is deterministic (constant arrivals and
 * latencies) the counts and times are exact; each is worked out in a comment.
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

#define ROWS_MAX 2000
#define EVENTS_MAX 4000

typedef struct collect {
    sim_row rows[ROWS_MAX];
    size_t n;
    sim_log_event events[EVENTS_MAX];
    size_t nev;
    uint64_t hash;
} collect;

static void on_row(void *ctx, const sim_row *row) {
    collect *c = ctx;
    if (c->n < ROWS_MAX) c->rows[c->n++] = *row;
    th_mix(&c->hash, row, sizeof *row);
}

static void on_event(void *ctx, const sim_log_event *ev) {
    collect *c = ctx;
    if (c->nev < EVENTS_MAX) c->events[c->nev++] = *ev;
    th_mix(&c->hash, ev, sizeof *ev);
}

/* Run variant `variant` with invariant checks, rows and events into c (may be NULL). */
static sim_summary *run(const sim_scenario *sc, const char *variant, collect *c) {
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    int v = variant ? scn_variant(sc, variant) : 0;
    assert_true(v >= 0);
    if (c) memset(c, 0, sizeof *c);
    sim_run_opts opts = {on_row, on_event, NULL, c, 0, true, NULL};
    sim_error err;
    if (sim_run(sc, (uint32_t)v, c ? &opts : NULL, s, &err) != FB_OK) fail_msg("run: %s", err.msg);
    assert_true(s->complete);
    return s;
}

static collect *new_collect(void) {
    collect *c = calloc(1, sizeof *c);
    assert_non_null(c);
    return c;
}

/* The first event of `type` at or after `from`, or NULL. */
static const sim_log_event *find_event(const collect *c, sim_event_type type, fb_time_us from) {
    for (size_t i = 0; i < c->nev; i++)
        if (c->events[i].type == type && c->events[i].t_us >= from) return &c->events[i];
    return NULL;
}

/* ---- per-pod sources ---- */

#define PER_POD                                                                                    \
    "{\"name\":\"pp\",\"duration\":\"10m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"            \
    "{\"poisson\":\"40/s\"},\"target\":\"none\",\"source\":\"%s\"}],\"pods\":{\"count\":4},"       \
    "\"providers\":[{\"name\":\"a\"}]}"

static sim_scenario *per_pod_scenario(const char *source) {
    char json[512];
    snprintf(json, sizeof json, PER_POD, source);
    return th_load(json);
}

static void fleet_per_pod_sources_give_pods_different_counts(void **state) {
    (void)state;
    sim_scenario *sc = per_pod_scenario("per_pod");
    sim_summary *s = run(sc, NULL, NULL);
    /* 24,000 expected in all (sd 155), 6,000 a pod (sd 77) */
    assert_in_range(s->requests, 23300, 24700);
    assert_in_range(s->fleet.pod_requests_min, 5600, 6400);
    assert_in_range(s->fleet.pod_requests_max, 5600, 6400);
    /* four independent Poisson counts are all equal with a negligible probability */
    assert_true(s->fleet.pod_requests_max > s->fleet.pod_requests_min);
    assert_true(sim_metric_shown(sc, sim_metric_find("pod_requests_max")));
    free(s);
    scn_free(sc);
}

static void fleet_shared_source_deals_pods_the_same_count(void **state) {
    (void)state;
    sim_scenario *sc = per_pod_scenario("shared");
    sim_summary *s = run(sc, NULL, NULL);
    /* round-robin: no pod-level counters, and the metric is not reported */
    assert_false(sim_metric_shown(sc, sim_metric_find("pod_requests_max")));
    assert_int_equal(s->fleet.pod_requests_max, 0);
    free(s);
    scn_free(sc);
}

/* Each pod's breaker learns the outage from its own calls: they open at different times. */
static void fleet_per_pod_sources_trip_per_pod_breakers_apart(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"pb\",\"duration\":\"2m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"poisson\":\"8/s\"},\"source\":\"per_pod\"}],\"pods\":{\"count\":4},"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"error\":\"10ms\"},\"faults\":[{\"at\":"
        "\"30s\",\"for\":\"1m\",\"outage\":{}}]}],\"policy\":{\"breaker\":"
        "{\"consecutive_failures\":5,\"open\":\"2m\"}}}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    fb_time_us opened[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < c->nev; i++) {
        const sim_log_event *e = &c->events[i];
        if (e->type == SIM_EV_BREAKER && e->breaker.to == FB_BREAKER_OPEN && e->pod >= 0 &&
            opened[e->pod] == 0)
            opened[e->pod] = e->t_us;
    }
    for (int k = 0; k < 4; k++) assert_true(opened[k] > 30 * S);
    assert_true(opened[0] != opened[1] || opened[1] != opened[2] || opened[2] != opened[3]);
    assert_int_equal(s->providers[0].breaker_opens, 4);
    free(s);
    free(c);
    scn_free(sc);
}

/* ---- a serial client ---- */

#define SERIAL                                                                                     \
    "{\"name\":\"sr\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"job\",\"arrivals\":"          \
    "{\"constant\":\"1/s\"},\"serial\":true,\"completion_tokens\":0}],"                            \
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"%s\"}}]}"

static sim_scenario *serial_scenario(const char *latency) {
    char json[512];
    snprintf(json, sizeof json, SERIAL, latency);
    return th_load(json);
}

static void fleet_serial_client_waits_for_a_slow_provider(void **state) {
    (void)state;
    sim_scenario *sc = serial_scenario("2.5s");
    sim_summary *s = run(sc, NULL, NULL);
    /* scheduled at 0, 1, ..., 9 s; each call takes 2.5 s: they start at 0, 2.5, 5 and 7.5 s
     * (the 4th 4.5 s late); the next would start at 10 s, the end of traffic, and the calls
     * scheduled at 4 to 9 s never start */
    assert_int_equal(s->requests, 4);
    assert_int_equal(s->fleet.serial_lag_us, 4500 * MS);
    assert_int_equal(s->fleet.serial_backlog, 6);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 4);
    free(s);
    scn_free(sc);
}

static void fleet_serial_client_keeps_its_schedule_when_fast(void **state) {
    (void)state;
    sim_scenario *sc = serial_scenario("500ms");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->requests, 10);
    assert_int_equal(s->fleet.serial_lag_us, 0);
    assert_int_equal(s->fleet.serial_backlog, 0);
    free(s);
    scn_free(sc);
}

static void fleet_serial_client_follows_a_replayed_schedule(void **state) {
    (void)state;
    /* recorded at 0, 0.1, 0.1 and 2.5 s; each call takes 1 s: they start at 0, 1, 2 and 3 s,
     * the third 1.9 s after its time; nothing is left when traffic ends at 10 s */
    sim_scenario *sc = th_load(
        "{\"name\":\"srr\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"job\",\"arrivals\":"
        "{\"replay\":{\"at_ms\":[0,100,100,2500]}},\"serial\":true,\"completion_tokens\":0}],"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1s\"}}]}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->requests, 4);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 4);
    assert_int_equal(s->fleet.serial_lag_us, 1900 * MS);
    assert_int_equal(s->fleet.serial_backlog, 0);
    free(s);
    scn_free(sc);
}

/* ---- users who re-submit ---- */

static void fleet_resubmissions_follow_the_think_time_and_the_cap(void **state) {
    (void)state;
    /* every call fails 100 ms after it is sent; every failure is submitted again 2 s later,
     * at most 3 times, while the re-submission comes before the end of traffic (20 s) */
    sim_scenario *sc = th_load(
        "{\"name\":\"rs\",\"duration\":\"20s\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"constant\":\"1/s\"},\"resubmit\":{\"probability\":1,\"think\":\"2s\",\"max\":3}}],"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"error\":\"100ms\"},\"faults\":[{\"at\":"
        "\"0s\",\"for\":\"1h\",\"outage\":{}}]}]}");
    sim_summary *s = run(sc, NULL, NULL);
    /* a request at t is submitted again at t + 2.1, t + 4.2, t + 6.3 (before 20 s):
     * t = 0..13: 3 each (42); t = 14, 15: 2 each; t = 16, 17: 1 each; t = 18, 19: none */
    assert_int_equal(th_metric(sc, s, "user_requests"), 20);
    assert_int_equal(th_metric(sc, s, "resubmissions"), 48);
    assert_int_equal(th_metric(sc, s, "requests"), 68);
    assert_int_equal(th_metric(sc, s, "users_gave_up"), 20);
    assert_true(th_metric(sc, s, "user_success_rate") == 0);
    assert_true(th_metric(sc, s, "user_amplification") == 68.0 / 20.0);
    assert_true(th_metric(sc, s, "amplification") == 1.0);
    free(s);
    scn_free(sc);
}

static void fleet_resubmission_carries_the_same_tokens(void **state) {
    (void)state;
    /* 50 requests at 0 s, half of whose prompts do not fit the window: a 400 (not retried),
     * and its user submits the very same prompt again: it fails again, every time */
    sim_scenario *sc =
        th_load("{\"name\":\"rt\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
                "{\"constant\":0},\"bursts\":[{\"at\":\"0s\",\"count\":50}],\"prompt_tokens\":"
                "{\"uniform\":{\"min\":500,\"max\":1500}},\"completion_tokens\":0,"
                "\"resubmit\":{\"probability\":1,\"think\":\"1s\",\"max\":3}}],"
                "\"providers\":[{\"name\":\"a\",\"context_window\":1000}]}");
    sim_summary *s = run(sc, NULL, NULL);
    double gave_up = th_metric(sc, s, "users_gave_up");
    assert_true(gave_up > 5 && gave_up < 45);
    assert_true(th_metric(sc, s, "resubmissions") == 3 * gave_up);
    assert_true(th_metric(sc, s, "successes") == 50 - gave_up);
    assert_true(th_metric(sc, s, "user_success_rate") == (50 - gave_up) / 50);
    free(s);
    scn_free(sc);
}

static void fleet_closed_loop_user_resubmits_instead_of_asking_anew(void **state) {
    (void)state;
    /* one user: thinks 1 s, asks; every answer fails after 100 ms and is submitted again 2 s
     * later, 3 times; then the user thinks 1 s and asks something new. Requests at 1, 3.1,
     * 5.2, 7.3 | 8.4, 10.5, 12.6, 14.7 | 15.8, 17.9 (its next re-submission, at 20 s, is past
     * the end) | 19.0 (a new one after the think time) */
    sim_scenario *sc = th_load(
        "{\"name\":\"cl\",\"duration\":\"20s\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"closed\":{\"users\":1,\"think\":\"1s\"}},\"resubmit\":{\"probability\":1,\"think\":"
        "\"2s\",\"max\":3}}],\"providers\":[{\"name\":\"a\",\"latency\":{\"error\":\"100ms\"},"
        "\"faults\":[{\"at\":\"0s\",\"for\":\"1h\",\"outage\":{}}]}]}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->requests, 11);
    assert_int_equal(s->fleet.resubmissions, 7);
    assert_int_equal(th_metric(sc, s, "user_requests"), 4);
    free(s);
    scn_free(sc);
}

static void fleet_degraded_answers_are_not_resubmitted(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"dg\",\"duration\":\"20s\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
                "{\"constant\":\"1/s\"},\"resubmit\":{\"probability\":1,\"think\":\"2s\"}}],"
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"0s\",\"for\":\"1h\","
                "\"outage\":{}}]}],\"policy\":{\"degraded\":true}}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->requests, 20);
    assert_int_equal(s->fleet.resubmissions, 0);
    assert_int_equal(s->ended[SIM_END_DEGRADED], 20);
    free(s);
    scn_free(sc);
}

/* ---- the autoscaler ---- */

/* 2 requests/s of 10 s of local work on one pod; an HPA on requests in flight, target 5. */
#define HPA_JSON                                                                                   \
    "{\"name\":\"as\",\"duration\":\"2m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"             \
    "{\"constant\":\"2/s\"},\"target\":\"none\",\"service\":\"10s\"}],"                            \
    "\"pods\":{\"count\":1,\"workers\":100},\"providers\":[{\"name\":\"a\"}],"                     \
    "\"policy\":{\"autoscale\":{\"metric\":\"in_flight\",\"target\":5,\"max\":10,"                 \
    "\"delay\":\"5s\",\"cold_start\":\"5s\"}}}"

static void fleet_autoscaler_first_decision_is_exact(void **state) {
    (void)state;
    sim_scenario *sc = th_load(HPA_JSON);
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    /* samples at 1..15 s see the arrivals of the last 10 s (a request that ends at the
     * sample's instant has left, one that arrives then is not in yet): 2t for t <= 9, then 19;
     * (2 + 4 + ... + 18 + 6 x 19) / 15 = 13.6, 2.72 x the target: ceil(2.72 x 1) = 3 pods,
     * within the scale-up limit of max(1 + 4, 2 x 1) */
    const sim_log_event *e = find_event(c, SIM_EV_SCALE, 0);
    assert_non_null(e);
    assert_int_equal(e->t_us, 15 * S);
    assert_int_equal(e->pods_from, 1);
    assert_int_equal(e->pods_to, 3);
    assert_int_equal(e->pods_ready, 1);
    assert_true(e->metric > 13.6 - 1e-9 && e->metric < 13.6 + 1e-9);
    /* decided at 15 s, started at 20 s, ready at 25 s; a row holds the state at its tick's
     * end, before the events of that instant: [14 s, 15 s) is before the decision */
    assert_true(c->n >= 30);
    assert_int_equal(c->rows[14].pods_starting, 0);
    assert_int_equal(c->rows[15].pods_starting, 2);
    assert_int_equal(c->rows[24].pods_ready, 1);
    assert_int_equal(c->rows[24].pods_starting, 2);
    assert_int_equal(c->rows[25].pods_ready, 3);
    assert_int_equal(c->rows[25].pods_starting, 0);
    assert_true(s->fleet.pods_peak >= 3);
    free(s);
    free(c);
    scn_free(sc);
}

/* The scale events of a run, "t from to" each, for exact comparisons. */
static void scale_events(const collect *c, char *buf, size_t len) {
    buf[0] = '\0';
    for (size_t i = 0; i < c->nev; i++) {
        const sim_log_event *e = &c->events[i];
        if (e->type != SIM_EV_SCALE) continue;
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%lld:%u>%u", n ? " " : "", (long long)(e->t_us / S),
                 e->pods_from, e->pods_to);
    }
}

static void fleet_autoscaler_scale_down_waits_for_the_stabilization_window(void **state) {
    (void)state;
    /* the load stops at 60.5 s; at 30 s the calculation wanted 9 pods (7 allowed by the
     * scale-up policy). With a 30 s window the highest recent recommendation decides each
     * scale down: 4 (60 s), then 2 (75 s), then 0 (down to min, 1); with the default 300 s,
     * the 9 of 30 s holds the fleet up (at 60 s even up, from 7) until 330 s */
    const char *sets[] = {"traffic[0].ramp=[{\"at\":\"60s\",\"rate\":2},{\"at\":\"60.5s\","
                          "\"rate\":0}]",
                          "policy.autoscale.scale_down={\"stabilization\":\"30s\"}", "duration=8m"};
    char got[512];
    sim_scenario *sc = th_load_with(HPA_JSON, sets, 3, NULL);
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    scale_events(c, got, sizeof got);
    assert_string_equal(got, "15:1>3 30:3>7 75:7>4 90:4>2 105:2>1");
    assert_int_equal(c->rows[c->n - 1].pods_ready, 1);
    assert_true(s->fleet.pods_removed == s->fleet.pods_added);
    free(s);
    scn_free(sc);
    const char *longer[] = {sets[0], sets[2]};
    sc = th_load_with(HPA_JSON, longer, 2, NULL);
    s = run(sc, NULL, c);
    scale_events(c, got, sizeof got);
    assert_string_equal(got, "15:1>3 30:3>7 60:7>9 330:9>7 345:7>4 360:4>2 375:2>1");
    free(s);
    free(c);
    scn_free(sc);
}

static void fleet_new_pods_bring_cold_breakers(void **state) {
    (void)state;
    /* an outage from the start: each pod's breaker opens after its own 3 failures, so pods
     * started by the autoscaler open theirs after they start, each once */
    sim_scenario *sc = th_load(
        "{\"name\":\"cb\",\"duration\":\"2m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"constant\":\"20/s\"},\"service\":\"5s\"}],\"pods\":{\"count\":1,\"workers\":500},"
        "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"0s\",\"for\":\"1h\","
        "\"outage\":{}}]}],\"policy\":{\"breaker\":{\"consecutive_failures\":3,\"open\":\"1h\"},"
        "\"autoscale\":{\"metric\":\"in_flight\",\"target\":10,\"max\":4}}}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    const sim_log_event *scale = find_event(c, SIM_EV_SCALE, 0);
    assert_non_null(scale);
    uint32_t opens[8] = {0};
    for (size_t i = 0; i < c->nev; i++) {
        const sim_log_event *e = &c->events[i];
        if (e->type != SIM_EV_BREAKER || e->breaker.to != FB_BREAKER_OPEN) continue;
        assert_true(e->pod >= 0 && e->pod < 8);
        opens[e->pod]++;
        if (e->pod > 0) assert_true(e->t_us > scale->t_us);
    }
    assert_int_equal(opens[0], 1);
    assert_true(s->fleet.pods_peak == 4);
    for (int k = 1; k < 4; k++) assert_int_equal(opens[k], 1);
    assert_int_equal(s->providers[0].breaker_opens, 4);
    free(s);
    free(c);
    scn_free(sc);
}

/*
 * A pod the autoscaler starts again is a new Envoy process: its round robin starts at the first
 * host, as every pod's did at time 0. Two pods, hosts a and b (1 s each), 100 ms ticks. Requests
 * at 0 s, then 2 at each of 0.5, 0.6, 0.7 s, dealt 0 1 0 1 0 1 0: pod 0 sends a b a b, pod 1
 * a b a (its rotation at 3). No load: at 2 s the fleet goes to 1 pod (pod 1 leaves). 4 at 10.5 s
 * on pod 0 (a b a b, its rotation at 8 again a multiple of 2); at 11 s the fleet wants 2: pod 1
 * starts again. At 11.2 s two requests, one per pod: both go to a. A rotation kept from pod 1's
 * first life (3) would have sent its request to b.
 */
static void fleet_restarted_pod_starts_its_round_robin_afresh(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"rr\",\"duration\":\"14s\",\"tick\":\"100ms\",\"traffic\":[{\"class\":\"c\","
        "\"arrivals\":{\"constant\":\"1/h\"},\"bursts\":[{\"at\":\"500ms\",\"count\":2},"
        "{\"at\":\"600ms\",\"count\":2},{\"at\":\"700ms\",\"count\":2},{\"at\":\"10.5s\","
        "\"count\":4},{\"at\":\"11.2s\",\"count\":2}]}],\"pods\":{\"count\":2,\"workers\":100},"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1s\"}},{\"name\":\"b\","
        "\"latency\":{\"ttft\":\"1s\"}}],\"variants\":{\"v\":{\"layers\":[{\"name\":\"gw\","
        "\"preset\":\"envoy\"}],\"autoscale\":{\"metric\":\"in_flight\",\"target\":1,\"min\":1,"
        "\"max\":2,\"period\":\"1s\",\"scale_down\":{\"stabilization\":\"0s\"}}}}}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    char got[256];
    scale_events(c, got, sizeof got);
    assert_string_equal(got, "2:2>1 11:1>2 13:2>1");
    const sim_row *r = &c->rows[112];
    assert_int_equal(r->t_us, 11200 * MS);
    assert_int_equal(r->arrivals, 2);
    assert_int_equal(r->p[0].attempts, 2);
    assert_int_equal(r->p[1].attempts, 0);
    free(s);
    free(c);
    scn_free(sc);
}

/* ---- the breaker store's outages ---- */

/* One pod, 1 request/s, one attempt, a shared breaker (3 failures, open 30 s, no sync delay);
 * the store is unreachable from 10 s to 20 s. */
#define STORE_JSON                                                                                 \
    "{\"name\":\"so\",\"duration\":\"30s\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"            \
    "{\"constant\":\"1/s\"}}],\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"100ms\","     \
    "\"error\":\"10ms\"}%s}],\"breaker_store\":{\"outages\":[{\"at\":\"10s\",\"for\":\"10s\"}]},"  \
    "\"policy\":{\"breaker\":{\"scope\":\"shared\",\"consecutive_failures\":3,\"open\":\"30s\"}}," \
    "\"variants\":{\"open\":{\"breaker\":{\"store_outage\":\"fail_open\"}},"                       \
    "\"closed\":{\"breaker\":{\"store_outage\":\"fail_closed\"}},"                                 \
    "\"local\":{\"breaker\":{\"store_outage\":\"local\"}}}}"

static sim_scenario *store_scenario(bool provider_down) {
    char json[2048];
    snprintf(json, sizeof json, STORE_JSON,
             provider_down ? ",\"faults\":[{\"at\":\"10s\",\"for\":\"10s\",\"outage\":{}}]" : "");
    return th_load(json);
}

static void fleet_store_outage_healthy_provider(void **state) {
    (void)state;
    sim_scenario *sc = store_scenario(false);
    /* requests at 10..19 s meet the unreachable store */
    sim_summary *open = run(sc, "open", NULL), *closed = run(sc, "closed", NULL);
    sim_summary *local = run(sc, "local", NULL);
    assert_int_equal(open->fleet.store_unreachable, 10);
    assert_int_equal(open->ended[SIM_END_BREAKER_OPEN], 0);
    assert_int_equal(closed->ended[SIM_END_BREAKER_OPEN], 10); /* an outage of our own */
    assert_int_equal(closed->providers[0].attempts, 20);
    assert_int_equal(local->ended[SIM_END_BREAKER_OPEN], 0);
    assert_int_equal(local->providers[0].attempts, 30);
    free(open);
    free(closed);
    free(local);
    scn_free(sc);
}

static void fleet_store_outage_during_a_provider_outage(void **state) {
    (void)state;
    sim_scenario *sc = store_scenario(true);
    sim_summary *open = run(sc, "open", NULL), *closed = run(sc, "closed", NULL);
    sim_summary *local = run(sc, "local", NULL);
    /* fail open: the 10 calls go to the failing provider, and their results are lost:
     * the store never opens */
    assert_int_equal(open->providers[0].attempts, 30);
    assert_int_equal(open->ended[SIM_END_EXHAUSTED], 10);
    assert_int_equal(open->providers[0].breaker_opens, 0);
    /* fail closed: none goes */
    assert_int_equal(closed->providers[0].attempts, 20);
    assert_int_equal(closed->ended[SIM_END_BREAKER_OPEN], 10);
    /* local: the pod's own breaker opens after 3 failures (10, 11, 12 s), 7 are refused */
    assert_int_equal(local->providers[0].attempts, 23);
    assert_int_equal(local->ended[SIM_END_EXHAUSTED], 3);
    assert_int_equal(local->ended[SIM_END_BREAKER_OPEN], 7);
    assert_int_equal(local->providers[0].breaker_opens, 1);
    free(open);
    free(closed);
    free(local);
    scn_free(sc);
}

/* ---- determinism, and what stays off ---- */

static void fleet_runs_are_deterministic(void **state) {
    (void)state;
    const char *json =
        "{\"name\":\"dt\",\"duration\":\"3m\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
        "{\"poisson\":\"30/s\"},\"resubmit\":{\"probability\":0.5,\"think\":{\"exponential\":"
        "\"3s\"}}},{\"class\":\"j\",\"arrivals\":{\"poisson\":\"1/s\"},\"serial\":true}],"
        "\"pods\":{\"count\":2,\"workers\":16},\"providers\":[{\"name\":\"a\",\"capacity\":"
        "{\"concurrency\":20},\"faults\":[{\"at\":\"30s\",\"for\":\"30s\",\"outage\":{}}]}],"
        "\"breaker_store\":{\"outages\":[{\"at\":\"40s\",\"for\":\"20s\"}]},"
        "\"policy\":{\"retry\":{\"attempts\":3},\"breaker\":{\"scope\":\"shared\","
        "\"store_outage\":\"local\"},\"autoscale\":{\"metric\":\"utilization\",\"target\":0.5,"
        "\"max\":8,\"cold_start\":\"10s\"}}}";
    sim_scenario *sc = th_load(json);
    collect *a = new_collect(), *b = new_collect();
    sim_summary *s1 = run(sc, NULL, a), *s2 = run(sc, NULL, b);
    assert_true(a->hash == b->hash);
    assert_int_equal(s1->attempts, s2->attempts);
    assert_int_equal(s1->fleet.resubmissions, s2->fleet.resubmissions);
    assert_true(s1->fleet.pods_added > 0);
    free(s1);
    free(s2);
    free(a);
    free(b);
    scn_free(sc);
}

static void fleet_metrics_are_reported_only_where_used(void **state) {
    (void)state;
    sim_scenario *sc = per_pod_scenario("shared");
    const char *rows[] = {"resubmissions", "pods_peak", "serial_lag", "store_unreachable",
                          "pod_requests_min"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const sim_metric *m = sim_metric_find(rows[i]);
        assert_non_null(m);
        assert_false(sim_metric_shown(sc, m));
    }
    assert_true(sim_metric_shown(sc, sim_metric_find("success_rate")));
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fleet_per_pod_sources_give_pods_different_counts),
        cmocka_unit_test(fleet_shared_source_deals_pods_the_same_count),
        cmocka_unit_test(fleet_per_pod_sources_trip_per_pod_breakers_apart),
        cmocka_unit_test(fleet_serial_client_waits_for_a_slow_provider),
        cmocka_unit_test(fleet_serial_client_keeps_its_schedule_when_fast),
        cmocka_unit_test(fleet_serial_client_follows_a_replayed_schedule),
        cmocka_unit_test(fleet_resubmissions_follow_the_think_time_and_the_cap),
        cmocka_unit_test(fleet_resubmission_carries_the_same_tokens),
        cmocka_unit_test(fleet_closed_loop_user_resubmits_instead_of_asking_anew),
        cmocka_unit_test(fleet_degraded_answers_are_not_resubmitted),
        cmocka_unit_test(fleet_autoscaler_first_decision_is_exact),
        cmocka_unit_test(fleet_restarted_pod_starts_its_round_robin_afresh),
        cmocka_unit_test(fleet_autoscaler_scale_down_waits_for_the_stabilization_window),
        cmocka_unit_test(fleet_new_pods_bring_cold_breakers),
        cmocka_unit_test(fleet_store_outage_healthy_provider),
        cmocka_unit_test(fleet_store_outage_during_a_provider_outage),
        cmocka_unit_test(fleet_runs_are_deterministic),
        cmocka_unit_test(fleet_metrics_are_reported_only_where_used),
    };
    return cmocka_run_group_tests_name("fleet", tests, NULL, NULL);
}
