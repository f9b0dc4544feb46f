/*
 * test_sim.c - the simulator: each model, the invariants, determinism and
 * the metastable regime. Scenarios are small JSON documents run to the end;
 * assertions are on properties that a broken model would violate.
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

#define ROWS_MAX 4000

typedef struct collect {
    sim_row rows[ROWS_MAX];
    size_t n;
    uint64_t breaker_events, fault_events;
    uint64_t hash; /* of every row and event, to compare runs */
} collect;

static void on_row(void *ctx, const sim_row *row) {
    collect *c = ctx;
    if (c->n < ROWS_MAX) c->rows[c->n++] = *row;
    th_mix(&c->hash, row, sizeof *row);
}

static void on_event(void *ctx, const sim_log_event *ev) {
    collect *c = ctx;
    if (ev->type == SIM_EV_BREAKER)
        c->breaker_events++;
    else
        c->fault_events++;
    th_mix(&c->hash, &ev->t_us, sizeof ev->t_us);
    th_mix(&c->hash, &ev->type, sizeof ev->type);
}

/* Run variant v (by name) with invariant checks on; the caller frees the result. */
static sim_summary *run(const sim_scenario *sc, const char *variant, collect *c) {
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    int v = variant ? scn_variant(sc, variant) : 0;
    assert_true(v >= 0);
    if (c) memset(c, 0, sizeof *c);
    sim_run_opts opts = {on_row, on_event, NULL, c, 0, true, NULL};
    sim_error err;
    int rc = sim_run(sc, (uint32_t)v, c ? &opts : NULL, s, &err);
    if (rc != FB_OK) fail_msg("run %s: %s", variant ? variant : "-", err.msg);
    assert_true(s->complete);
    return s;
}

static double metric(const sim_scenario *sc, const sim_summary *s, const char *name) {
    double v = 0;
    char msg[200];
    if (sim_metric_value(sc, s, name, &v, NULL, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    return v;
}

static uint64_t ended(const sim_summary *s) {
    uint64_t n = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) n += s->ended[e];
    return n;
}

/* Sum of a row field over ticks starting in [from_s, to_s). */
#define ROW_SUM(c, field, from_s, to_s)                                                            \
    ({                                                                                             \
        uint64_t sum_ = 0;                                                                         \
        for (size_t i_ = 0; i_ < (c)->n; i_++)                                                     \
            if ((c)->rows[i_].t_us >= (fb_time_us)(from_s)*FB_US_PER_S &&                          \
                (c)->rows[i_].t_us < (fb_time_us)(to_s)*FB_US_PER_S)                               \
                sum_ += (c)->rows[i_].field;                                                       \
        sum_;                                                                                      \
    })

#define PROVIDER(name, extra) "{\"name\":\"" name "\",\"latency\":{\"ttft\":\"200ms\"}" extra "}"

static collect *new_collect(void) {
    collect *c = calloc(1, sizeof *c);
    assert_non_null(c);
    return c;
}

/* ---- traffic ---- */

static void sim_poisson_arrivals_follow_the_rate(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"p\",\"duration\":\"10m\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"poisson\":\"50/s\"},\"target\":\"none\"}],"
                               "\"providers\":[" PROVIDER("a", "") "]}");
    sim_summary *s = run(sc, NULL, NULL);
    /* 30,000 expected; a Poisson count's sd is ~173: 3% is more than 8 sd */
    assert_in_range(s->requests, 29100, 30900);
    assert_int_equal(ended(s), s->requests);
    assert_int_equal(s->ended[SIM_END_SUCCESS], s->requests);
    free(s);
    scn_free(sc);
}

static void sim_constant_arrivals_are_exact(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"k\",\"duration\":\"60s\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"constant\":\"10/s\"},\"target\":\"none\"}],"
                               "\"providers\":[" PROVIDER("a", "") "]}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_int_equal(s->requests, 600);
    assert_int_equal(c->n, 60);
    for (size_t i = 0; i < c->n; i++) assert_int_equal(c->rows[i].arrivals, 10);
    free(s);
    free(c);
    scn_free(sc);
}

static void sim_replayed_arrivals_come_at_their_recorded_times(void **state) {
    (void)state;
    /* two at 0 (the same instant), one inside the first tick, then ticks 2 and 9 */
    sim_scenario *sc = th_load("{\"name\":\"r\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"replay\":{\"at_ms\":[0,0,999.999,2500,9999]}},"
                               "\"target\":\"none\"}],\"providers\":[" PROVIDER("a", "") "]}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_int_equal(s->requests, 5);
    assert_int_equal(c->n, 10);
    static const uint64_t want[10] = {3, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    for (size_t i = 0; i < c->n; i++) assert_int_equal(c->rows[i].arrivals, want[i]);
    free(s);
    free(c);
    scn_free(sc);
}

/* Sessions: each recorded time starts turns[i] requests, each a think time after the one before
   ended (local work of 0 s: at once); a turn at or after the end of traffic is not made. */
static void sim_replayed_sessions_wait_their_think_time(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"r\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"replay\":{\"at_ms\":[0,1000,8000],"
                               "\"turns\":[3,2,3],\"think\":\"1.5s\"}},"
                               "\"target\":\"none\"}],\"providers\":[" PROVIDER("a", "") "]}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    /* 0, 1.5, 3; 1, 2.5; 8, 9.5 and not 11 s (past the end) */
    assert_int_equal(s->requests, 7);
    assert_int_equal(c->n, 10);
    static const uint64_t want[10] = {1, 2, 1, 1, 0, 0, 0, 0, 1, 1};
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].arrivals != want[i])
            fail_msg("tick %zu: %llu arrivals, expected %llu", i,
                     (unsigned long long)c->rows[i].arrivals, (unsigned long long)want[i]);
    free(s);
    free(c);
    scn_free(sc);
}

static void sim_replayed_arrivals_ignore_the_seed(void **state) {
    (void)state;
    const char *json = "{\"name\":\"r\",\"duration\":\"5s\",\"traffic\":[{\"class\":\"c\","
                       "\"arrivals\":{\"replay\":{\"at_ms\":[10,20,30,4000]}}}],"
                       "\"providers\":[" PROVIDER("a", "") "]}";
    uint64_t seeds[2] = {1, 99};
    uint64_t requests[2];
    for (int k = 0; k < 2; k++) {
        sim_scenario *sc = th_load_with(json, NULL, 0, &seeds[k]);
        sim_summary *s = run(sc, NULL, NULL);
        requests[k] = s->requests;
        free(s);
        scn_free(sc);
    }
    assert_int_equal(requests[0], 4);
    assert_int_equal(requests[1], 4);
}

static void sim_spikes_and_bursts_add_arrivals(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"s\",\"duration\":\"2m\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"constant\":\"10/s\"},\"target\":\"none\","
                               "\"spikes\":[{\"at\":\"30s\",\"for\":\"30s\",\"rate\":\"200/s\"}],"
                               "\"bursts\":[{\"at\":\"90s\",\"count\":500}]}],"
                               "\"providers\":[" PROVIDER("a", "") "]}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_int_equal(ROW_SUM(c, arrivals, 0, 30), 300);
    assert_int_equal(ROW_SUM(c, arrivals, 30, 60), 6000);
    assert_int_equal(c->rows[90].arrivals, 510); /* the herd arrives in one tick */
    assert_int_equal(s->requests, 300 + 6000 + 600 + 500);
    free(s);
    free(c);
    scn_free(sc);
}

static void sim_closed_loop_never_exceeds_its_users(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"u\",\"duration\":\"5m\",\"traffic\":[{\"class\":\"c\","
                "\"arrivals\":{\"closed\":{\"users\":50,\"think\":{\"exponential\":\"1s\"}}}}],"
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1s\"}}]}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_true(s->in_flight_peak <= 50);
    /* each user loops over ~1 s of think and 1 s of call: ~25 requests/s */
    assert_in_range(s->requests, 6500, 8500);
    free(s);
    scn_free(sc);
}

/* ---- invariants and determinism ---- */

#define FLEET_SCENARIO                                                                             \
    "{\"name\":\"f\",\"seed\":11,\"duration\":\"4m\",\"traffic\":["                                \
    "{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"30/s\"},"                                     \
    "\"prompt_tokens\":{\"lognormal\":{\"median\":2000,\"p99\":9000}},"                            \
    "\"completion_tokens\":{\"uniform\":{\"min\":50,\"max\":300}}},"                               \
    "{\"class\":\"web\",\"arrivals\":{\"poisson\":\"20/s\"},\"target\":\"none\","                  \
    "\"service\":\"30ms\"}],"                                                                      \
    "\"pods\":{\"count\":5,\"workers\":40,\"queue\":50,\"request_timeout\":\"30s\"},"              \
    "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":{\"lognormal\":{\"median\":\"400ms\","   \
    "\"p99\":\"2s\"}},\"per_output_token\":\"5ms\"},\"capacity\":{\"concurrency\":80,"             \
    "\"queue\":100,\"rpm\":3000},\"price\":{\"input_per_mtok\":1,\"output_per_mtok\":4},"          \
    "\"faults\":[{\"at\":\"1m\",\"for\":\"1m\",\"outage\":{\"status\":503,\"fraction\":0.8}}]},"   \
    "{\"name\":\"b\",\"latency\":{\"ttft\":\"700ms\"},\"price\":{\"input_per_mtok\":3}}],"         \
    "\"variants\":{\"naive\":{\"retry\":{\"attempts\":5,\"backoff\":\"none\","                     \
    "\"attempt_timeout\":\"5s\"}},"                                                                \
    "\"tuned\":{\"retry\":{\"attempts\":3,\"attempt_timeout\":\"5s\","                             \
    "\"budget\":{\"token_bucket\":{\"max\":10,\"ratio\":0.1}}},"                                   \
    "\"breaker\":{\"failure_rate\":0.5,\"window\":\"10s\",\"minimum_calls\":10,\"open\":\"5s\"}}}" \
    "}"

static void sim_every_request_ends_exactly_once(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FLEET_SCENARIO);
    for (uint32_t v = 0; v < sc->variant_count; v++) {
        /* run() enables the invariant checks: a violation fails the run */
        sim_summary *s = run(sc, sc->variants[v].name, NULL);
        assert_int_equal(ended(s), s->requests);
        assert_true(s->attempts >= s->requests_calling - s->ended[SIM_END_QUEUE_FULL]);
        uint64_t tokens = 0;
        double cost = 0;
        for (uint32_t p = 0; p < sc->provider_count; p++) {
            tokens += s->providers[p].tokens_in;
            cost += s->providers[p].cost_usd;
            assert_true(s->providers[p].served <= s->providers[p].attempts);
        }
        assert_true(tokens > 0);
        assert_true(cost > 0.999 * s->cost_usd && cost < 1.001 * s->cost_usd);
        free(s);
    }
    scn_free(sc);
}

/*
 * A request's end is counted once, in its class's and its tick's counts, and
 * an attempt's outcome once, in its provider's tick: the summary's totals
 * and the rows' are sums of those, and must agree with each other.
 */
static void sim_summary_totals_are_the_sums_of_their_parts(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FLEET_SCENARIO);
    collect *c = new_collect();
    for (uint32_t v = 0; v < sc->variant_count; v++) {
        sim_summary *s = run(sc, sc->variants[v].name, c);
        uint64_t n = ended(s), by_class = 0, in_hists = 0, retries = 0, attempts = 0;
        int64_t max = 0;
        for (uint32_t k = 0; k < sc->class_count; k++) {
            const sim_class_summary *cl = &s->classes[k];
            assert_int_equal(cl->success + cl->degraded + cl->errors, cl->ended);
            assert_int_equal(fb_hist_count(&cl->latency), cl->ended);
            by_class += cl->ended;
            in_hists += fb_hist_count(&cl->latency);
            if (fb_hist_max(&cl->latency) > max) max = fb_hist_max(&cl->latency);
        }
        assert_int_equal(by_class, n);
        assert_int_equal(in_hists, n);
        assert_int_equal(fb_hist_count(&s->latency), n);
        assert_int_equal(fb_hist_max(&s->latency), max);
        assert_int_equal(fb_hist_count(&s->latency_ok), s->ended[SIM_END_SUCCESS]);
        assert_int_equal(s->errors, n - s->ended[SIM_END_SUCCESS] - s->ended[SIM_END_DEGRADED]);
        assert_int_equal(s->success_primary + s->success_fallback, s->ended[SIM_END_SUCCESS]);
        assert_int_equal(s->bad, s->errors + s->slo_missed);
        for (uint32_t l = 0; l < s->layer_count; l++) retries += s->layers[l].retries;
        assert_int_equal(retries, s->retries);
        uint64_t row_ended = 0, row_attempts = 0;
        for (size_t i = 0; i < c->n; i++) {
            const sim_row *row = &c->rows[i];
            assert_int_equal(row->success + row->degraded + row->errors, row->ended);
            assert_true(row->fallback_success <= row->success);
            row_ended += row->ended;
            for (uint32_t p = 0; p < sc->provider_count; p++) row_attempts += row->p[p].attempts;
        }
        for (uint32_t p = 0; p < sc->provider_count; p++) attempts += s->providers[p].attempts;
        assert_int_equal(attempts, s->attempts);
        assert_true(row_ended > 0 && row_ended <= n); /* rows cover the traffic window */
        assert_true(row_attempts > 0 && row_attempts <= attempts);
        free(s);
    }
    free(c);
    scn_free(sc);
}

static void sim_same_seed_gives_identical_runs(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FLEET_SCENARIO);
    collect *c1 = new_collect(), *c2 = new_collect();
    sim_summary *a = run(sc, "tuned", c1);
    sim_summary *b = run(sc, "tuned", c2);
    assert_memory_equal(a, b, sizeof *a);
    assert_true(c1->hash == c2->hash);
    assert_int_equal(c1->n, c2->n);
    free(b);
    scn_free(sc);
    /* another seed changes the run */
    uint64_t seed = 12;
    sim_scenario *sc2 = th_load_with(FLEET_SCENARIO, NULL, 0, &seed);
    sim_summary *d = run(sc2, "tuned", c2);
    assert_true(d->requests != a->requests || c1->hash != c2->hash);
    free(a);
    free(d);
    free(c1);
    free(c2);
    scn_free(sc2);
}

static void sim_variants_share_arrivals(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FLEET_SCENARIO);
    collect *c1 = new_collect(), *c2 = new_collect();
    sim_summary *a = run(sc, "naive", c1);
    sim_summary *b = run(sc, "tuned", c2);
    /* common random numbers: the same requests arrive at the same seconds */
    assert_int_equal(a->requests, b->requests);
    assert_int_equal(c1->n, 240);
    assert_int_equal(c2->n, 240);
    for (size_t i = 0; i < c1->n; i++) assert_int_equal(c1->rows[i].arrivals, c2->rows[i].arrivals);
    free(a);
    free(b);
    free(c1);
    free(c2);
    scn_free(sc);
}

/*
 * An open-loop class beside classes whose next request waits for an answer (closed-loop users
 * and a serial client who also re-submit, replayed sessions, re-submissions): two variants that
 * answer those at other times must still draw the same for every open-loop request (random streams
 * fusebox-5). Before, a request's stream was named by the order of all arrivals, and every request
 * after the first that came at another time drew other numbers.
 */
static void sim_variants_share_draws_beside_closed_loops(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"crn\",\"seed\":5,\"duration\":\"3m\",\"traffic\":["
        "{\"class\":\"open\",\"arrivals\":{\"poisson\":\"20/s\"},\"target\":\"a\","
        "\"prompt_tokens\":{\"lognormal\":{\"median\":1000,\"p99\":5000}},"
        "\"completion_tokens\":{\"uniform\":{\"min\":50,\"max\":300}}},"
        "{\"class\":\"users\",\"arrivals\":{\"closed\":{\"users\":30,"
        "\"think\":{\"exponential\":\"2s\"}}},\"target\":\"b\","
        "\"resubmit\":{\"probability\":0.3,\"think\":\"2s\",\"max\":1}},"
        "{\"class\":\"talk\",\"arrivals\":{\"replay\":{\"at_ms\":[0,5000,40000],"
        "\"turns\":[20,20,20],\"think\":\"1s\"}},\"target\":\"b\"},"
        "{\"class\":\"sched\",\"arrivals\":{\"constant\":\"1/s\"},\"serial\":true,"
        "\"target\":\"b\",\"resubmit\":{\"probability\":0.3,\"think\":\"2s\",\"max\":1}},"
        "{\"class\":\"again\",\"arrivals\":{\"poisson\":\"5/s\"},\"target\":\"b\","
        "\"resubmit\":{\"probability\":0.5,\"think\":\"3s\",\"max\":2}}],"
        "\"pods\":{\"count\":4,\"workers\":1000,\"queue\":100,\"request_timeout\":\"60s\"},"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":{\"lognormal\":{\"median\":\"300ms\","
        "\"p99\":\"2s\"}},\"per_output_token\":\"2ms\"}},"
        "{\"name\":\"b\",\"latency\":{\"ttft\":{\"lognormal\":{\"median\":\"300ms\",\"p99\":\"2s\"}"
        "}},"
        "\"faults\":[{\"at\":\"30s\",\"for\":\"1m\",\"outage\":{\"status\":503,\"fraction\":0.5}}]}"
        "],"
        "\"variants\":{\"once\":{\"retry\":{\"attempts\":1}},"
        "\"thrice\":{\"retry\":{\"attempts\":3,\"backoff\":\"none\"}}}}");
    sim_summary *a = run(sc, "once", NULL);
    sim_summary *b = run(sc, "thrice", NULL);
    /* the closed loops did move: their requests came at other times */
    for (uint32_t k = 1; k < 5; k++)
        if (a->classes[k].success == b->classes[k].success)
            fail_msg("class %u: %llu successes in both variants", k,
                     (unsigned long long)a->classes[k].success);
    /* the open-loop requests drew the same latencies, one by one into the same histogram */
    assert_int_equal(a->classes[0].requests, b->classes[0].requests);
    assert_int_equal(a->classes[0].success, b->classes[0].success);
    assert_true(a->classes[0].latency.total > 2000);
    assert_memory_equal(&a->classes[0].latency, &b->classes[0].latency, sizeof(fb_hist));
    free(a);
    free(b);
    scn_free(sc);
}

/* ---- providers and faults ---- */

#define ONE_CLASS(rate) "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"" rate "\"}}]"

static void sim_outage_without_fallback_fails_the_window(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"o\",\"duration\":\"3m\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"100ms\","
                "\"error\":\"10ms\"},\"faults\":[{\"at\":\"1m\",\"for\":\"1m\","
                "\"outage\":{\"status\":503}}]}]}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_int_equal(s->requests, 1800);
    assert_int_equal(s->ended[SIM_END_EXHAUSTED], 600);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TRANSIENT], 600);
    assert_int_equal(ROW_SUM(c, errors, 60, 120), 600);
    assert_int_equal(ROW_SUM(c, errors, 0, 60), 0);
    assert_int_equal(c->fault_events, 2);
    /* an outage answers fast: nobody is billed for it */
    assert_int_equal(s->providers[0].served, 1200);
    free(s);
    free(c);
    scn_free(sc);
}

/*
 * Random streams fusebox-3 draw a provider's error latency only for an attempt answered with
 * an error, after the fault's draws (served attempts draw none). Every error's latency must
 * still be one draw of latency.error: with every attempt failing, and with half of them
 * failing among served ones (which draw their TTFT from the same stream), the errors'
 * latencies (all requests' histogram less the successes'; no retries, no local work) have the
 * lognormal's quantiles and mean (median 150 ms, p99 1 s) within 4 standard errors of the
 * sample plus the histogram's bucket width (0.8% at most), and a TTFT drawn instead would fail
 * them.
 */
static void sim_errors_draw_their_latency_from_its_distribution(void **state) {
    (void)state;
    static const char *const fraction[] = {"1", "0.5"};
    const double sigma = log(1e6 / 150e3) / 2.3263478740408408;
    for (int k = 0; k < 2; k++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"name\":\"e\",\"duration\":\"10m\"," ONE_CLASS(
                     "100/s") ",\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":"
                              "{\"lognormal\":{\"median\":\"400ms\",\"p99\":\"2s\"}},"
                              "\"error\":{\"lognormal\":{\"median\":\"150ms\",\"p99\":\"1s\"}}},"
                              "\"faults\":[{\"at\":\"0s\",\"for\":\"10m\",\"outage\":{\"status\":"
                              "503,\"fraction\":%s}}]}]}",
                 fraction[k]);
        sim_scenario *sc = th_load(json);
        sim_summary *s = run(sc, NULL, NULL);
        fb_hist *err = malloc(sizeof *err);
        assert_non_null(err);
        fb_hist_copy(err, &s->latency);
        fb_hist_subtract(err, &s->latency_ok);
        double n = (double)fb_hist_count(err);
        assert_true(n == (double)s->ended[SIM_END_EXHAUSTED]);
        assert_true(k == 0 ? n == 60000 : fabs(n - 30000) < 4 * sqrt(60000 * 0.25));
        static const struct {
            double p, z;
        } q[] = {{0.1, -1.2815515655446004},
                 {0.5, 0.0},
                 {0.9, 1.2815515655446004},
                 {0.99, 2.3263478740408408}};
        for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
            double pdf = exp(-0.5 * q[i].z * q[i].z) / sqrt(2 * M_PI);
            double se = sigma * sqrt(q[i].p * (1 - q[i].p) / n) / pdf; /* of the log */
            double want = 150e3 * exp(sigma * q[i].z);
            double got = (double)fb_hist_percentile(err, q[i].p * 100);
            if (!(fabs(log(got / want)) < 4 * se + 0.008))
                fail_msg("fraction %s: p%g %.0f us, want %.0f", fraction[k], q[i].p * 100, got,
                         want);
        }
        double mean = 150e3 * exp(sigma * sigma / 2);
        double sd = mean * sqrt(exp(sigma * sigma) - 1);
        assert_true(fabs(fb_hist_mean(err) - mean) < 4 * sd / sqrt(n) + 0.008 * mean);
        free(err);
        free(s);
        scn_free(sc);
    }
}

static void sim_fallback_serves_during_an_outage(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"o\",\"duration\":\"3m\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"1m\","
                "\"for\":\"1m\",\"outage\":{\"status\":503}}]},{\"name\":\"b\"}],"
                "\"policy\":{\"fallback\":[\"a\",\"b\"]}}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->ended[SIM_END_SUCCESS], 1800);
    assert_int_equal(s->success_fallback, 600);
    assert_int_equal(s->providers[1].attempts, 600);
    assert_true(metric(sc, s, "amplification") > 1.3);
    free(s);
    scn_free(sc);
}

static void sim_breaker_stops_attempts_into_an_outage(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"b\",\"duration\":\"3m\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"1m\",\"for\":\"1m\","
                "\"outage\":{\"status\":503}}]},{\"name\":\"b\"}],"
                "\"policy\":{\"fallback\":[\"a\",\"b\"]},"
                "\"variants\":{\"plain\":{},\"breaker\":{\"breaker\":{\"consecutive_failures\":5,"
                "\"open\":\"10s\"}}}}");
    collect *c = new_collect();
    sim_summary *plain = run(sc, "plain", NULL);
    sim_summary *br = run(sc, "breaker", c);
    assert_int_equal(plain->providers[0].attempts, 1800);
    /* open for 10 s, one probe, re-open: ~6 cycles of (5 + 1) attempts in the outage */
    assert_true(br->providers[0].attempts < 1200 + 60);
    assert_true(br->providers[0].breaker_opens >= 5);
    assert_true(c->breaker_events >= 10);
    assert_int_equal(br->ended[SIM_END_SUCCESS], 1800);
    /* after the outage the breaker closes and the primary serves again */
    assert_int_equal(ROW_SUM(c, fallback_success, 150, 180), 0);
    free(plain);
    free(br);
    free(c);
    scn_free(sc);
}

static void sim_retry_after_decides_whether_the_retry_lands(void **state) {
    (void)state;
    /* 429 with Retry-After 3s during [10s, 12s): an immediate retry lands in
     * the storm again, a retry that waits as told lands after it */
    sim_scenario *sc = th_load("{\"name\":\"r\",\"duration\":\"30s\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"50ms\",\"error\":\"5ms\"},"
                "\"faults\":[{\"at\":\"10s\",\"for\":\"2s\",\"rate_limit\":{\"retry_after\":\"3s\"}"
                "}]}],"
                "\"variants\":{\"ignore\":{\"retry\":{\"attempts\":2,\"backoff\":\"none\","
                "\"retry_after\":\"ignore\"}},\"honour\":{\"retry\":{\"attempts\":2,\"backoff\":"
                "\"none\","
                "\"retry_after\":\"as_is\"}}}}");
    sim_summary *ig = run(sc, "ignore", NULL);
    sim_summary *ho = run(sc, "honour", NULL);
    assert_int_equal(ig->ended[SIM_END_EXHAUSTED], 20);
    assert_int_equal(ho->ended[SIM_END_EXHAUSTED], 0);
    assert_int_equal(ho->providers[0].outcomes[FB_OUT_RATE_LIMITED], 20);
    assert_true(fb_hist_max(&ho->latency) >= 3 * FB_US_PER_S);
    assert_true(fb_hist_max(&ig->latency) < FB_US_PER_S);
    free(ig);
    free(ho);
    scn_free(sc);
}

static void sim_hang_ends_at_the_attempt_timeout(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"h\",\"duration\":\"1m\"," ONE_CLASS(
        "5/s") ","
               "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"100ms\"},"
               "\"faults\":[{\"at\":\"20s\",\"for\":\"10s\",\"hang\":{}}]}],"
               "\"policy\":{\"retry\":{\"attempts\":1,\"attempt_timeout\":\"2s\"}}}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TIMEOUT], 50);
    assert_int_equal(s->ended[SIM_END_EXHAUSTED], 50);
    assert_int_equal(fb_hist_max(&s->latency), 2 * FB_US_PER_S);
    free(s);
    scn_free(sc);
}

static void sim_pod_timeout_frees_workers_from_a_hang(void **state) {
    (void)state;
    /* no attempt timeout: only the pod's request timeout ends a hung call;
     * requests that never call the provider wait behind them (collateral) */
    sim_scenario *sc =
        th_load("{\"name\":\"h\",\"duration\":\"2m\",\"traffic\":["
                "{\"class\":\"c\",\"arrivals\":{\"constant\":\"5/s\"}},"
                "{\"class\":\"web\",\"arrivals\":{\"constant\":\"5/s\"},\"target\":\"none\"}],"
                "\"pods\":{\"workers\":20,\"queue\":1000,\"request_timeout\":\"10s\"},"
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"30s\",\"for\":\"30s\","
                "\"hang\":{}}]}],\"slo\":{\"latency\":\"1s\"}}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    /* calls that reach the provider in [30s, 60s) hang until the 10 s timeout;
     * with 20 workers the last few seconds' calls wait in the queue past 60s */
    assert_in_range(s->ended[SIM_END_TIMEOUT], 100, 150);
    assert_int_equal(s->ended[SIM_END_TIMEOUT], s->errors);
    assert_true(s->bad_collateral > 0);
    assert_true(metric(sc, s, "collateral_share") > 0.05);
    /* once the hang is over the freed workers drain the queue */
    assert_int_equal(ROW_SUM(c, errors, 80, 120), 0);
    assert_int_equal(ROW_SUM(c, success, 80, 120), 400);
    free(c);
    free(s);
    scn_free(sc);
}

static void sim_context_window_check_skips_small_windows(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"w\",\"duration\":\"30s\",\"traffic\":[{\"class\":\"c\","
        "\"arrivals\":{\"constant\":\"2/s\"},\"prompt_tokens\":95000,\"completion_tokens\":1000}],"
        "\"providers\":[{\"name\":\"small\",\"context_window\":32000},"
        "{\"name\":\"mid\",\"context_window\":128000}],"
        "\"policy\":{\"fallback\":[\"small\",\"mid\"]},"
        "\"variants\":{\"blind\":{},\"checked\":{\"context_window_check\":true}}}");
    sim_summary *blind = run(sc, "blind", NULL);
    sim_summary *checked = run(sc, "checked", NULL);
    assert_int_equal(blind->providers[0].outcomes[FB_OUT_CONTEXT_LENGTH], 60);
    assert_int_equal(blind->ended[SIM_END_SUCCESS], 60);
    assert_int_equal(checked->providers[0].attempts, 0);
    assert_int_equal(checked->ended[SIM_END_SUCCESS], 60);
    assert_int_equal(checked->success_fallback, 60);
    free(blind);
    free(checked);
    scn_free(sc);
}

static void sim_policy_rejections_neither_trip_nor_fall_back(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"p\",\"duration\":\"2m\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"0s\",\"for\":\"2m\","
                "\"policy\":{\"fraction\":0.6}}]},{\"name\":\"b\"}],"
                "\"policy\":{\"fallback\":[\"a\",\"b\"],\"retry\":{\"attempts\":3},"
                "\"breaker\":{\"consecutive_failures\":3}}}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->providers[1].attempts, 0);
    assert_int_equal(s->providers[0].breaker_opens, 0);
    assert_int_equal(s->providers[0].attempts, 1200); /* never retried */
    assert_in_range(s->ended[SIM_END_POLICY], 650, 790);
    free(s);
    scn_free(sc);
}

static void sim_brownout_builds_a_queue(void **state) {
    (void)state;
    const char *fmt = "{\"name\":\"b\",\"duration\":\"2m\"," ONE_CLASS(
        "40/s") ","
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1s\"},"
                "\"capacity\":{\"concurrency\":60,\"queue\":10000}%s}],"
                "\"pods\":{\"workers\":1000}}";
    char text[1024];
    snprintf(text, sizeof text, fmt, "");
    sim_scenario *calm = th_load(text);
    snprintf(text, sizeof text, fmt,
             ",\"faults\":[{\"at\":\"30s\",\"for\":\"30s\",\"brownout\":{\"capacity\":0.5}}]");
    sim_scenario *brown = th_load(text);
    sim_summary *a = run(calm, NULL, NULL);
    sim_summary *b = run(brown, NULL, NULL);
    assert_int_equal(a->providers[0].queue_peak, 0);
    assert_true(a->providers[0].in_service_peak <= 60);
    assert_true(b->providers[0].queue_peak > 200);
    assert_true(b->providers[0].in_service_peak <= 60);
    free(a);
    free(b);
    scn_free(calm);
    scn_free(brown);
}

static void sim_midstream_failures_follow_the_stream_policy(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"m\",\"duration\":\"1m\",\"traffic\":[{\"class\":\"c\",\"stream\":true,"
        "\"arrivals\":{\"constant\":\"5/s\"},\"completion_tokens\":200}],"
        "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"100ms\",\"per_output_token\":"
        "\"1ms\"},"
        "\"faults\":[{\"at\":\"10s\",\"for\":\"20s\",\"midstream\":{\"after_tokens\":50,"
        "\"fraction\":0.5}}]}],"
        "\"policy\":{\"retry\":{\"attempts\":3,\"backoff\":\"none\"}},"
        "\"variants\":{\"fail\":{\"stream\":\"fail\"},\"retry\":{\"stream\":\"retry\"},"
        "\"buffer\":{\"stream\":\"buffer\"},\"resume\":{\"stream\":\"resume\"}}}");
    sim_summary *fail = run(sc, "fail", NULL);
    sim_summary *retry = run(sc, "retry", NULL);
    sim_summary *buffer = run(sc, "buffer", NULL);
    sim_summary *resume = run(sc, "resume", NULL);
    assert_true(fail->ended[SIM_END_STREAM_BROKEN] > 20);
    assert_int_equal(fail->tokens_duplicated, 0);
    assert_int_equal(retry->ended[SIM_END_STREAM_BROKEN], 0);
    assert_true(retry->tokens_duplicated >= 50 * 20);
    assert_int_equal(buffer->tokens_duplicated, 0);
    assert_true(buffer->ended[SIM_END_SUCCESS] > fail->ended[SIM_END_SUCCESS]);
    assert_true(resume->stream_resumes > 20);
    /* resuming asks only for the rest: fewer output tokens billed than buffering */
    assert_true(resume->providers[0].tokens_out < buffer->providers[0].tokens_out);
    free(fail);
    free(retry);
    free(buffer);
    free(resume);
    scn_free(sc);
}

static void sim_capacity_rate_limit_answers_429_with_retry_after(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"q\",\"duration\":\"2m\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"capacity\":{\"rpm\":300}}],"
                "\"policy\":{\"retry\":{\"attempts\":2,\"backoff\":\"none\"}}}");
    sim_summary *s = run(sc, NULL, NULL);
    /* 600/min offered against 300/min: the bucket starts with 300 and refills
     * 5/s, so at most 300 + 5 per second of the run get through; a retry waits
     * as long as the 429's Retry-After says and then fits */
    uint64_t admitted_max = 300 + 5 * (uint64_t)(s->end_us / FB_US_PER_S) + 1;
    assert_true(s->providers[0].capacity_429 > 250);
    assert_true(s->ended[SIM_END_SUCCESS] <= admitted_max);
    assert_true(s->ended[SIM_END_SUCCESS] >= 850);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_SUCCESS], s->ended[SIM_END_SUCCESS]);
    free(s);
    scn_free(sc);
}

static void sim_shared_breaker_protects_the_fleet_sooner(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"s\",\"duration\":\"3m\"," ONE_CLASS(
        "50/s") ","
                "\"pods\":{\"count\":10},"
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"1m\",\"for\":\"1m\","
                "\"outage\":{\"status\":503}}]},{\"name\":\"b\"}],"
                "\"policy\":{\"fallback\":[\"a\",\"b\"],\"breaker\":{\"failure_rate\":0.5,"
                "\"window\":\"10s\",\"minimum_calls\":20,\"open\":\"20s\"}},"
                "\"variants\":{\"pod\":{},\"shared\":{\"breaker\":{\"scope\":\"shared\","
                "\"sync_delay\":\"500ms\"}}}}");
    collect *c = new_collect();
    sim_summary *pod = run(sc, "pod", NULL);
    sim_summary *shared = run(sc, "shared", c);
    /* one store trips on the whole fleet's calls; ten pods each need 20 */
    assert_true(shared->providers[0].attempts < pod->providers[0].attempts);
    assert_true(shared->providers[0].breaker_opens >= 1);
    assert_true(shared->providers[0].breaker_opens < pod->providers[0].breaker_opens);
    assert_int_equal(shared->ended[SIM_END_SUCCESS], shared->requests);
    free(pod);
    free(shared);
    free(c);
    scn_free(sc);
}

/* ---- the metastable regime ---- */

/* A provider of 50 slots at ~1 s per call, a queue it keeps working through,
 * a client that times out after 2 s and retries at once, and a 20 s spike. */
static const char *metastable(const char *rate, const char *policy) {
    static char text[2048];
    snprintf(text, sizeof text,
             "{\"name\":\"ms\",\"duration\":\"6m\",\"traffic\":[{\"class\":\"c\","
             "\"arrivals\":{\"poisson\":\"%s\"},"
             "\"spikes\":[{\"at\":\"1m\",\"for\":\"20s\",\"rate\":\"90/s\"}]}],"
             "\"pods\":{\"count\":1,\"workers\":100000,\"queue\":0,\"request_timeout\":\"60s\"},"
             "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1s\"},"
             "\"capacity\":{\"concurrency\":50,\"queue\":2000}}],"
             "\"policy\":{\"retry\":{\"attempts\":3,\"backoff\":\"none\","
             "\"attempt_timeout\":\"2s\"%s}}}",
             rate, policy);
    return text;
}

static double success_rate(const collect *c, int from_s, int to_s) {
    uint64_t ok = ROW_SUM(c, success, from_s, to_s), all = ROW_SUM(c, ended, from_s, to_s);
    return all ? (double)ok / (double)all : 0;
}

/* The success rate of the last two minutes, long after the spike. */
static double late_success_rate(const collect *c) {
    return success_rate(c, 240, 360);
}

/* late_success_rate() of a scenario with one --set override (NULL: none). */
static double late_success_rate_with(const char *json, const char *set) {
    const char *sets[] = {set};
    sim_scenario *sc = th_load_with(json, sets, set ? 1 : 0, NULL);
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    double rate = late_success_rate(c);
    free(s);
    free(c);
    scn_free(sc);
    return rate;
}

static void sim_metastable_retries_keep_the_provider_down(void **state) {
    (void)state;
    /* 30/s x 3 attempts = 90/s offered once every call times out, against 50/s */
    sim_scenario *sc = th_load(metastable("30/s", ""));
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_true(success_rate(c, 0, 60) > 0.99); /* healthy until the spike */
    assert_true(late_success_rate(c) < 0.2);    /* and down long after it */
    assert_true(metric(sc, s, "amplification") > 2.0);
    free(s);
    free(c);
    scn_free(sc);
    /* it takes both: without the spike, or without the retries, the provider is up at the end */
    assert_true(late_success_rate_with(metastable("30/s", ""), "traffic[0].spikes=[]") > 0.99);
    assert_true(late_success_rate_with(metastable("30/s", ""), "policy.retry.attempts=1") > 0.99);
}

static void sim_metastable_light_load_recovers(void **state) {
    (void)state;
    /* 10/s x 3 = 30/s even at worst: the queue drains after the spike */
    sim_scenario *sc = th_load(metastable("10/s", ""));
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_true(late_success_rate(c) > 0.99);
    free(s);
    free(c);
    scn_free(sc);
}

static void sim_metastable_retry_budget_recovers(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load(metastable("30/s", ",\"budget\":{\"token_bucket\":{\"max\":10,\"ratio\":0.1}}"));
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_true(late_success_rate(c) > 0.99);
    assert_true(s->budget_refusals > 0);
    free(s);
    free(c);
    scn_free(sc);
}

static void sim_caps_stop_the_run_with_a_reason(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"c\",\"duration\":\"1m\"," ONE_CLASS(
        "100/s") ","
                 "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"10s\"}}],"
                 "\"pods\":{\"workers\":100000},\"limits\":{\"in_flight\":500}}");
    sim_summary *s = malloc(sizeof *s);
    sim_error err;
    collect *c = new_collect();
    sim_run_opts opts = {on_row, on_event, NULL, c, 0, true, NULL};
    assert_int_equal(sim_run(sc, 0, &opts, s, &err), FB_ECAP);
    assert_false(s->complete);
    assert_non_null(strstr(err.msg, "in-flight cap"));
    assert_non_null(strstr(s->stop_reason, "limits.in_flight"));
    /* what was simulated up to the cap is kept */
    assert_int_equal(s->requests, 500);
    assert_true(c->n >= 4);
    free(s);
    free(c);
    scn_free(sc);
}

/* limits.events caps what is queued at once, not what the calendar's run has popped: with an
 * arrival's outside lane ahead of the calendar, pushes go into the run by insertion and it holds
 * its popped entries until it empties (a run of 1,409 requests stopped at t=48.6s with 14 events
 * queued of 40). */
static void sim_event_cap_counts_only_what_is_queued(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"q\",\"seed\":2,\"duration\":\"60s\",\"traffic\":["
                "{\"class\":\"page\",\"arrivals\":{\"poisson\":\"20/s\"},\"target\":\"none\","
                "\"service\":{\"lognormal\":{\"median\":\"80ms\",\"p99\":\"600ms\"}}},"
                "{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"3/s\"}}],"
                "\"pods\":{\"count\":1,\"workers\":100,\"queue\":100,\"request_timeout\":\"20s\"},"
                "\"providers\":[{\"name\":\"p\",\"latency\":{\"ttft\":{\"lognormal\":"
                "{\"median\":\"1300ms\",\"p99\":\"8600ms\"}}}}],"
                "\"policy\":{\"fallback\":[\"p\"]},\"variants\":{\"plain\":{}},\"limits\":{"
                "\"events\":40}}");
    sim_summary *s = malloc(sizeof *s);
    sim_error err;
    sim_run_opts opts = {NULL, NULL, NULL, NULL, 0, true, NULL};
    assert_int_equal(sim_run(sc, 0, &opts, s, &err), FB_OK);
    assert_true(s->complete);
    assert_true(s->requests > 1000);
    assert_true(s->queue_peak <= 40);
    free(s);
    scn_free(sc);
}

static void sim_event_log_cap_counts_what_it_drops(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"b\",\"duration\":\"3m\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"1m\","
                "\"for\":\"1m\",\"outage\":{\"status\":503}}]},{\"name\":\"b\"}],"
                "\"policy\":{\"breaker\":{\"consecutive_failures\":5,\"open\":\"10s\"}}}");
    collect *c = new_collect();
    sim_summary *s = malloc(sizeof *s);
    sim_error err;
    sim_run_opts opts = {on_row, on_event, NULL, c, 3, true, NULL};
    assert_int_equal(sim_run(sc, 0, &opts, s, &err), FB_OK);
    assert_int_equal(c->breaker_events + c->fault_events, 3);
    /* two fault edges and at least 10 transitions happened: the rest is counted */
    assert_true(s->events_dropped >= 9);
    free(s);
    free(c);
    scn_free(sc);
}

static void sim_full_pod_queue_fails_at_once(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"q\",\"duration\":\"10s\"," ONE_CLASS(
        "100/s") ","
                 "\"pods\":{\"workers\":10,\"queue\":20},"
                 "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1s\"}}]}");
    sim_summary *s = run(sc, NULL, NULL);
    /* 10 workers at 1 s per call serve ~10/s; 100/s arrive; 20 may wait */
    assert_true(s->ended[SIM_END_QUEUE_FULL] > 800);
    assert_true(s->pod_queue_peak == 20);
    assert_int_equal(fb_hist_min(&s->latency), 0); /* rejected at arrival */
    free(s);
    scn_free(sc);
}

/* Review finding: with a shared breaker and no sync delay, writing a row used
 * to move the store to half-open and schedule its sync in the past. */
static void sim_shared_breaker_without_sync_delay_runs(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"s\",\"duration\":\"60s\",\"traffic\":[{\"class\":\"c\","
                "\"arrivals\":{\"poisson\":\"2/s\"}}],\"providers\":[{\"name\":\"p\","
                "\"faults\":[{\"at\":\"0s\",\"for\":\"20s\",\"outage\":{}}]}],"
                "\"policy\":{\"breaker\":{\"consecutive_failures\":1,\"open\":\"1500ms\","
                "\"scope\":\"shared\"}}}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_true(s->providers[0].breaker_opens >= 5);
    free(s);
    scn_free(sc);
}

/* Results must not depend on how often rows are written. */
static void sim_tick_does_not_change_the_results(void **state) {
    (void)state;
    const char *ticks[] = {"250ms", "1s", "7s"};
    const fb_time_us tick_us[] = {250 * MS, 1 * S, 7 * S};
    sim_summary *first = NULL;
    for (int i = 0; i < 3; i++) {
        char set[32];
        snprintf(set, sizeof set, "tick=%s", ticks[i]);
        const char *sets[] = {set};
        sim_scenario *sc = th_load_with(FLEET_SCENARIO, sets, 1, NULL);
        assert_int_equal(sc->tick_us, tick_us[i]); /* the override took */
        sim_summary *s = run(sc, "tuned", NULL);
        if (first == NULL) {
            first = s;
        } else {
            assert_int_equal(s->requests, first->requests);
            assert_memory_equal(s->ended, first->ended, sizeof s->ended);
            assert_int_equal(s->attempts, first->attempts);
            assert_true(s->providers[0].breaker_open_s == first->providers[0].breaker_open_s);
            assert_int_equal(s->providers[0].breaker_transitions,
                             first->providers[0].breaker_transitions);
            assert_int_equal(fb_hist_percentile(&s->latency, 99),
                             fb_hist_percentile(&first->latency, 99));
            free(s);
        }
        scn_free(sc);
    }
    free(first);
}

/* Review finding: finish -> pull -> start -> finish recursed once per queued request. */
static void sim_a_long_queue_of_quick_requests_does_not_recurse(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"d\",\"duration\":\"70s\",\"traffic\":["
                "{\"class\":\"slow\",\"arrivals\":{\"constant\":\"0/s\"},"
                "\"bursts\":[{\"at\":\"0s\",\"count\":1}]},"
                "{\"class\":\"quick\",\"arrivals\":{\"constant\":\"0/s\"},\"target\":\"none\","
                "\"bursts\":[{\"at\":\"1s\",\"count\":300000}]}],"
                "\"pods\":{\"workers\":1,\"queue\":1000000,\"request_timeout\":\"100s\"},"
                "\"providers\":[{\"name\":\"p\",\"latency\":{\"ttft\":\"60s\"}}]}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->ended[SIM_END_SUCCESS], s->requests);
    assert_true(s->pod_queue_peak >= 300000);
    free(s);
    scn_free(sc);
}

/* Review finding: a slot freed by a cancelled attempt waited for an unrelated event. */
static void sim_cancelled_attempt_hands_its_slot_to_the_queue(void **state) {
    (void)state;
    sim_scenario *sc = th_load(
        "{\"name\":\"c\",\"duration\":\"10s\",\"tick\":\"100ms\","
        "\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"constant\":\"1/s\"}}],"
        "\"providers\":[{\"name\":\"p\",\"keeps_working\":false,\"latency\":{\"ttft\":\"5s\"},"
        "\"capacity\":{\"concurrency\":1}}],"
        "\"policy\":{\"retry\":{\"attempts\":1,\"attempt_timeout\":\"2500ms\"}}}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    size_t queued = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->rows[i].p[0].queue == 0) continue;
        assert_int_equal(c->rows[i].p[0].in_service, 1);
        queued++;
    }
    assert_true(queued > 10); /* the check above ran: requests did queue for the one slot */
    free(s);
    free(c);
    scn_free(sc);
}

/* A midstream fault breaks a streamed answer after tokens were shown; a plain
 * answer simply fails. */
static void sim_midstream_on_a_class_that_does_not_stream_is_a_plain_failure(void **state) {
    (void)state;
    const char *fmt =
        "{\"name\":\"m\",\"duration\":\"30s\",\"traffic\":[{\"class\":\"c\","
        "\"stream\":%s,\"arrivals\":{\"constant\":\"5/s\"},\"completion_tokens\":100}],"
        "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"0s\",\"for\":\"30s\","
        "\"midstream\":{\"after_tokens\":10}}]}],\"policy\":{\"stream\":\"fail\"}}";
    char text[1024];
    snprintf(text, sizeof text, fmt, "true");
    sim_scenario *streamed = th_load(text);
    snprintf(text, sizeof text, fmt, "false");
    sim_scenario *plain = th_load(text);
    sim_summary *a = run(streamed, NULL, NULL);
    sim_summary *b = run(plain, NULL, NULL);
    assert_int_equal(a->ended[SIM_END_STREAM_BROKEN], 150);
    assert_int_equal(a->stream_failures, 150);
    assert_int_equal(b->ended[SIM_END_STREAM_BROKEN], 0);
    assert_int_equal(b->stream_failures, 0);
    assert_int_equal(b->ended[SIM_END_EXHAUSTED], 150);
    free(a);
    free(b);
    scn_free(streamed);
    scn_free(plain);
}

/* A fault that starts and ends inside one tick still marks that tick. */
static void sim_fault_active_marks_every_tick_a_fault_overlaps(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"f\",\"duration\":\"5s\"," ONE_CLASS(
        "10/s") ","
                "\"providers\":[{\"name\":\"a\",\"faults\":[{\"at\":\"2500ms\","
                "\"for\":\"300ms\",\"outage\":{}}]}]}");
    collect *c = new_collect();
    sim_summary *s = run(sc, NULL, c);
    assert_int_equal(c->n, 5);
    for (size_t i = 0; i < c->n; i++) assert_int_equal(c->rows[i].fault_active, i == 2);
    free(s);
    free(c);
    scn_free(sc);
}

/* Absurd service times are bounded, not overflowed (UBSan checks this under make asan). */
static void sim_huge_service_times_do_not_overflow(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"h\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\","
                "\"arrivals\":{\"constant\":\"1/s\"},\"completion_tokens\":100000000}],"
                "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1000d\","
                "\"per_output_token\":\"100d\"},\"faults\":[{\"at\":\"0s\",\"for\":\"10s\","
                "\"slow\":{\"factor\":1000}}]}]}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->ended[SIM_END_TIMEOUT], s->requests);
    free(s);
    scn_free(sc);
}

/* Every row of the metric table answers by name, per provider where it is per provider. */
static void sim_metric_table_rows_resolve_by_name(void **state) {
    (void)state;
    sim_scenario *sc = th_load(FLEET_SCENARIO);
    sim_summary *s = run(sc, "tuned", NULL);
    char name[SIM_NAME_MAX + 32], msg[200];
    size_t rows = 0;
    for (const sim_metric *m = sim_metrics(); m->name; m++, rows++) {
        assert_ptr_equal(sim_metric_find(m->name), m);
        assert_non_null(m->definition);
        assert_true((m->value != NULL) != (m->field != SIM_FIELD_NONE)); /* a function or a field */
        const sim_policy *pol = &sc->variants[scn_variant(sc, "tuned")];
        uint32_t n = m->per_provider ? sc->provider_count
                     : m->per_layer  ? pol->layer_count
                     : m->per_class  ? sc->class_count
                                     : 1;
        for (uint32_t p = 0; p < n; p++) {
            if (m->per_provider || m->per_layer || m->per_class)
                snprintf(name, sizeof name, "%.*s[%s]", (int)strlen(m->name) - 2, m->name,
                         m->per_layer   ? pol->layers[p].name
                         : m->per_class ? sc->classes[p].name
                                        : sc->providers[p].name);
            else
                snprintf(name, sizeof name, "%s", m->name);
            double v = -1;
            sim_unit unit = SIM_UNIT_BOOL;
            assert_int_equal(sim_metric_value(sc, s, name, &v, &unit, msg, sizeof msg), FB_OK);
            assert_int_equal(unit, m->unit);
            if (sim_metric_is_na(v)) { /* only a row that says when it is n/a may be */
                assert_non_null(m->na);
                assert_true(sim_metric_is_na(sim_metric_row(m, sc, s, p)));
                assert_true(sim_metric_is_na(sim_metric_get(sc, s, name)));
                continue;
            }
            assert_true(v == sim_metric_row(m, sc, s, p));
            assert_true(v == sim_metric_get(sc, s, name));
        }
    }
    assert_true(rows > 50);
    double opens = 0;
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        snprintf(name, sizeof name, "breaker_opens[%s]", sc->providers[p].name);
        opens += metric(sc, s, name);
    }
    assert_true(opens == metric(sc, s, "breaker_opens"));
    double v;
    assert_int_equal(sim_metric_value(sc, s, "succes_rate", &v, NULL, msg, sizeof msg),
                     FB_ENOTFOUND);
    assert_string_equal(msg, "unknown metric 'succes_rate' (did you mean 'success_rate'?)");
    assert_int_equal(sim_metric_value(sc, s, "attempts", &v, NULL, msg, sizeof msg), FB_OK);
    assert_int_equal(sim_metric_value(sc, s, "attempts[]", &v, NULL, msg, sizeof msg),
                     FB_ENOTFOUND);
    assert_int_equal(sim_metric_value(sc, s, "queue_peak[nobody]", &v, NULL, msg, sizeof msg),
                     FB_ENOTFOUND);
    assert_string_equal(msg, "metric 'queue_peak[nobody]': no provider named 'nobody'");
    /* the per-class counters partition the run's: collateral damage is read off them */
    double req = 0, err = 0, late = 0;
    for (uint32_t k = 0; k < sc->class_count; k++) {
        req += (double)s->classes[k].requests;
        err += (double)s->classes[k].errors;
        late += (double)s->classes[k].slo_missed;
    }
    assert_true(req == metric(sc, s, "requests") && req > 0);
    assert_true(err == metric(sc, s, "errors"));
    assert_true(late == metric(sc, s, "slo_missed"));
    assert_int_equal(sim_metric_value(sc, s, "class_errors[nobody]", &v, NULL, msg, sizeof msg),
                     FB_ENOTFOUND);
    assert_string_equal(msg, "metric 'class_errors[nobody]': no traffic class named 'nobody'");
    assert_int_equal(sim_metric_get(sc, s, "no_such_metric"), 0);
    free(s);
    scn_free(sc);
}

/* ---- the engine: what the queue holds, what an event is ---- */

/* Issue 11: deadlines of requests that had ended stayed queued until their time came. At
 * 100,000 requests/s with a 60 s timeout that is 6 million timers for one request in flight:
 * the run hit the event cap (here 1,000,000, reached at 10 s) and used 146 MiB. */
static void sim_ended_requests_leave_no_deadlines_behind(void **state) {
    (void)state;
    sim_scenario *sc = th_load("{\"name\":\"d\",\"duration\":\"12s\",\"traffic\":[{\"class\":\"c\","
                               "\"arrivals\":{\"poisson\":\"100000/s\"},\"target\":\"none\"}],"
                               "\"pods\":{\"request_timeout\":\"60s\"},"
                               "\"limits\":{\"events\":1000000,\"requests\":2000000},"
                               "\"providers\":[" PROVIDER("a", "") "]}");
    sim_summary *s = run(sc, NULL, NULL);
    /* 1.2 M requests (within 5 sd), more deadlines than the cap could hold */
    assert_in_range(s->requests, 1194500, 1205500);
    assert_int_equal(s->in_flight_peak, 1); /* each request ends as it arrives */
    /* an arrival and a deadline per request; every arrival handled, no deadline due */
    assert_int_equal(s->events, 2 * s->requests);
    assert_int_equal(s->events_handled, s->requests);
    assert_int_equal(s->events_stale, 0);
    /* each deadline was dropped as its request ended (engine.c): the queue held at most the
       next arrival and the live request's deadline */
    assert_int_equal(s->events_cancelled, s->requests);
    assert_in_range(s->queue_peak, 1, 2);
    free(s);
    scn_free(sc);
}

/* The queue holds what is in flight: a deadline per live request (none left behind by the
 * requests that ended), its next event, and the next arrival. */
static void sim_queue_peak_follows_what_is_in_flight(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"f\",\"duration\":\"10s\",\"traffic\":[{\"class\":\"c\","
                "\"arrivals\":{\"constant\":\"20000/s\"},\"target\":\"none\","
                "\"service\":\"500ms\"}],"
                "\"pods\":{\"count\":10,\"workers\":2000,\"request_timeout\":\"60s\"},"
                "\"providers\":[" PROVIDER("a", "") "]}");
    sim_summary *s = run(sc, NULL, NULL);
    assert_int_equal(s->requests, 200000);
    assert_int_equal(s->in_flight_peak, 10000); /* 20,000/s for 0.5 s each */
    assert_int_equal(s->ended[SIM_END_SUCCESS], 200000);
    assert_int_equal(s->events, 3 * s->requests); /* arrival, work done, deadline */
    assert_int_equal(s->events_handled, 2 * s->requests);
    assert_int_equal(s->events_stale, 0);
    assert_true(s->queue_peak <= 2 * s->in_flight_peak + 1);
    /* every request ended before its deadline: each one dropped, none popped */
    assert_int_equal(s->events_cancelled, s->requests);
    free(s);
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sim_poisson_arrivals_follow_the_rate),
        cmocka_unit_test(sim_constant_arrivals_are_exact),
        cmocka_unit_test(sim_replayed_arrivals_come_at_their_recorded_times),
        cmocka_unit_test(sim_replayed_arrivals_ignore_the_seed),
        cmocka_unit_test(sim_replayed_sessions_wait_their_think_time),
        cmocka_unit_test(sim_spikes_and_bursts_add_arrivals),
        cmocka_unit_test(sim_closed_loop_never_exceeds_its_users),
        cmocka_unit_test(sim_every_request_ends_exactly_once),
        cmocka_unit_test(sim_summary_totals_are_the_sums_of_their_parts),
        cmocka_unit_test(sim_same_seed_gives_identical_runs),
        cmocka_unit_test(sim_variants_share_arrivals),
        cmocka_unit_test(sim_variants_share_draws_beside_closed_loops),
        cmocka_unit_test(sim_outage_without_fallback_fails_the_window),
        cmocka_unit_test(sim_errors_draw_their_latency_from_its_distribution),
        cmocka_unit_test(sim_fallback_serves_during_an_outage),
        cmocka_unit_test(sim_breaker_stops_attempts_into_an_outage),
        cmocka_unit_test(sim_retry_after_decides_whether_the_retry_lands),
        cmocka_unit_test(sim_hang_ends_at_the_attempt_timeout),
        cmocka_unit_test(sim_pod_timeout_frees_workers_from_a_hang),
        cmocka_unit_test(sim_context_window_check_skips_small_windows),
        cmocka_unit_test(sim_policy_rejections_neither_trip_nor_fall_back),
        cmocka_unit_test(sim_brownout_builds_a_queue),
        cmocka_unit_test(sim_midstream_failures_follow_the_stream_policy),
        cmocka_unit_test(sim_capacity_rate_limit_answers_429_with_retry_after),
        cmocka_unit_test(sim_shared_breaker_protects_the_fleet_sooner),
        cmocka_unit_test(sim_metastable_retries_keep_the_provider_down),
        cmocka_unit_test(sim_metastable_light_load_recovers),
        cmocka_unit_test(sim_metastable_retry_budget_recovers),
        cmocka_unit_test(sim_caps_stop_the_run_with_a_reason),
        cmocka_unit_test(sim_event_log_cap_counts_what_it_drops),
        cmocka_unit_test(sim_full_pod_queue_fails_at_once),
        cmocka_unit_test(sim_shared_breaker_without_sync_delay_runs),
        cmocka_unit_test(sim_tick_does_not_change_the_results),
        cmocka_unit_test(sim_a_long_queue_of_quick_requests_does_not_recurse),
        cmocka_unit_test(sim_cancelled_attempt_hands_its_slot_to_the_queue),
        cmocka_unit_test(sim_midstream_on_a_class_that_does_not_stream_is_a_plain_failure),
        cmocka_unit_test(sim_fault_active_marks_every_tick_a_fault_overlaps),
        cmocka_unit_test(sim_huge_service_times_do_not_overflow),
        cmocka_unit_test(sim_metric_table_rows_resolve_by_name),
        cmocka_unit_test(sim_ended_requests_leave_no_deadlines_behind),
        cmocka_unit_test(sim_queue_peak_follows_what_is_in_flight),
        cmocka_unit_test(sim_event_cap_counts_only_what_is_queued),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
