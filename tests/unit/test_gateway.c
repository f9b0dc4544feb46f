/*
 * test_gateway.c - a variant's gateway tier (sim/gateway.c, the "gateway" key of
 * scenario/load_variants.c): the balance rule, a replica's workers and queue, its own
 * state of the gateway's layers and the store between replicas, the loader's errors.
 * Scenarios are written with single quotes (q() turns them into JSON).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/helpers.h"

static char text[8192];

/* A scenario written with ' for " (C has no raw strings). */
static const char *q(const char *s) {
    size_t n = strlen(s);
    assert_true(n < sizeof text);
    for (size_t i = 0; i <= n; i++) text[i] = s[i] == '\'' ? '"' : s[i];
    return text;
}

typedef struct evlog {
    sim_log_event ev[256];
    size_t n;
    uint64_t hash;
} evlog;

static void keep_event(void *ctx, const sim_log_event *ev) {
    evlog *l = ctx;
    if (ev->type == SIM_EV_BREAKER && l->n < 256) l->ev[l->n++] = *ev;
    th_mix(&l->hash, &ev->t_us, sizeof ev->t_us);
    th_mix(&l->hash, &ev->pod, sizeof ev->pod);
}

static sim_summary *run_logged(const sim_scenario *sc, const char *variant, evlog *log) {
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    int v = scn_variant(sc, variant);
    assert_true(v >= 0);
    memset(log, 0, sizeof *log);
    sim_run_opts opts = {NULL, keep_event, NULL, log, 0, true, NULL};
    sim_error err;
    if (sim_run(sc, (uint32_t)v, &opts, s, &err) != FB_OK) fail_msg("run: %s", err.msg);
    assert_true(s->complete);
    return s;
}

#define PLAIN                                                                                      \
    "'providers':[{'name':'a','latency':{'ttft':'%s','error':'10ms'}}],"                           \
    "'traffic':[{'class':'c','arrivals':{'constant':'%s'}}],"

/* 2 replicas in turn: the calls alternate, each replica sends its own calls' attempts. */
static void gateway_round_robin_deals_calls_in_turn(void **state) {
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{'name':'g','duration':'10s','pods':{'count':3}," PLAIN
             "'variants':{'v':{'layers':[{'name':'app'}],"
             "'gateway':{'replicas':2,'layers':[{'name':'gw'}]}}}}",
             "100ms", "10/s");
    sim_scenario *sc = th_load(q(buf));
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    const sim_gateway_summary *g = &s->gateway;
    assert_int_equal(g->replicas, 2);
    uint64_t c0 = g->replica[0].calls, c1 = g->replica[1].calls;
    assert_true(c0 > 0 && c1 > 0);
    assert_true(c0 == c1 || c0 == c1 + 1); /* in turn, replica 0 first */
    assert_int_equal(c0 + c1, s->requests);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(g->replica[k].attempts, g->replica[k].calls);
        assert_int_equal(g->replica[k].queued, 0);
        assert_int_equal(g->replica[k].busy_peak, 1); /* 100 ms calls, 200 ms apart */
    }
    assert_int_equal(g->total.calls, s->requests);
    assert_true(th_metric(sc, s, "gateway_calls") == (double)s->requests);
    free(s);
    scn_free(sc);
}

/*
 * One replica, one worker, a queue of one; each call holds the worker for 1 s and they
 * come every 100 ms: one runs, one waits, the others are answered queue_full at once.
 */
static void gateway_full_queue_answers_at_once(void **state) {
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{'name':'g','duration':'10s'," PLAIN "'variants':{'v':{'layers':[{'name':'app'}],"
             "'gateway':{'replicas':1,'workers':1,'queue':1,'queue_full':503,"
             "'layers':[{'name':'gw'}]}}}}",
             "1s", "10/s");
    sim_scenario *sc = th_load(q(buf));
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    const sim_replica_summary *x = &s->gateway.replica[0];
    assert_int_equal(x->busy_peak, 1);
    assert_int_equal(x->queue_peak, 1);
    assert_true(x->queued > 0 && x->queue_full > 0);
    assert_int_equal(x->calls, s->requests);
    /* the app layer makes one attempt: every refused call is a failed request */
    uint64_t failed = s->requests - s->ended[SIM_END_SUCCESS];
    assert_int_equal(failed, x->queue_full);
    /* a queued call waits for the call ahead of it, at most its 1 s */
    assert_true(x->wait_us_max > 0 && x->wait_us_max <= 1 * S);
    /* the tier answered the refusals itself: only served calls reached the provider */
    assert_int_equal(s->providers[0].attempts, x->attempts);
    assert_int_equal(x->attempts, x->calls - x->queue_full);
    free(s);
    scn_free(sc);
}

/*
 * Two replicas of one worker and no queue; a long call (1.5 s) every 2 s and a short one
 * every second: never more than two calls at once, so least_busy always finds the idle
 * replica, where taking turns sends a short call to the one busy with a long call.
 */
static void gateway_least_busy_finds_the_idle_replica(void **state) {
    (void)state;
    static const char *const balances[] = {"round_robin", "least_busy", "random"};
    uint64_t refused[3];
    for (int b = 0; b < 3; b++) {
        char buf[2048];
        snprintf(buf, sizeof buf,
                 "{'name':'g','duration':'20s','providers':[{'name':'L','latency':{'ttft':"
                 "'1500ms'}},{'name':'S','latency':{'ttft':'10ms'}}],'traffic':["
                 "{'class':'long','target':'L','arrivals':{'constant':'0.5/s'}},"
                 "{'class':'short','target':'S','arrivals':{'constant':'1/s'}}],"
                 "'variants':{'v':{'layers':[{'name':'app'}],'gateway':{'replicas':2,"
                 "'workers':1,'queue':0,'balance':'%s','layers':[{'name':'gw'}]}}}}",
                 balances[b]);
        sim_scenario *sc = th_load(q(buf));
        sim_summary *s = th_run(sc, 0, NULL, NULL);
        const sim_gateway_summary *g = &s->gateway;
        assert_int_equal(g->replica[0].calls + g->replica[1].calls, s->requests);
        assert_true(g->replica[0].calls > 0 && g->replica[1].calls > 0);
        refused[b] = g->total.queue_full;
        free(s);
        scn_free(sc);
    }
    assert_int_equal(refused[1], 0);
    assert_true(refused[0] > 0);
    assert_true(refused[2] > 0);
}

/*
 * A layer's attempt timeout outside the tier gives up a call that waits: it leaves the
 * queue. One worker; a slow class's calls hold it 2 s each (no timeout); a fast class
 * (its own stack, the tier appended) gives up after 300 ms, mostly still in the queue.
 */
static void gateway_call_given_up_leaves_the_queue(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load(q("{'name':'g','duration':'20s','providers':[{'name':'a','latency':{'ttft':'2s'}}],"
                  "'traffic':[{'class':'slow','arrivals':{'constant':'0.4/s'}},"
                  "{'class':'fast','arrivals':{'constant':'1/s'}}],"
                  "'variants':{'v':{'layers':[{'name':'app'}],'classes':{'fast':{'layers':[{'name':"
                  "'fast-app','retry':{'attempts':1,'attempt_timeout':'300ms'}}]}},"
                  "'gateway':{'replicas':1,'workers':1,'queue':100,'layers':[{'name':'gw'}]}}}}"));
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    const sim_replica_summary *x = &s->gateway.replica[0];
    assert_int_equal(x->calls, s->requests); /* both classes' stacks end in the tier */
    assert_true(x->queued > 0);
    assert_true(x->abandoned > 0);
    assert_int_equal(x->queue_full, 0);
    assert_int_equal(x->busy_peak, 1);
    /* a call given up while it waited never reached the provider */
    assert_int_equal(x->attempts, x->calls - x->abandoned);
    assert_int_equal(s->providers[0].attempts, x->attempts);
    free(s);
    scn_free(sc);
}

/* The replica seat k of the store's reads: every 10 s, the replicas spread over the cycle. */
static fb_time_us next_read(uint32_t k, uint32_t replicas, fb_time_us t) {
    fb_time_us every = 10 * S, phase = every * (fb_time_us)k / (fb_time_us)replicas;
    if (t <= phase) return phase;
    return phase + (t - phase + every - 1) / every * every;
}

/*
 * LiteLLM with Redis as a tier of 2 replicas: one 429 (one call in the fault's window)
 * cools deployment a on the replica that got it; the other replica still has it in
 * rotation until its next read of Redis, when it learns the cooldown.
 */
static void gateway_cooldown_stays_on_its_replica_until_the_store_syncs(void **state) {
    (void)state;
    sim_scenario *sc = th_load(q(
        "{'name':'g','duration':'60s','pods':{'count':3},"
        "'traffic':[{'class':'c','arrivals':{'constant':'2/s'}}],"
        "'providers':[{'name':'a','latency':{'ttft':'100ms','error':'10ms'},"
        "'faults':[{'at':'20s','for':'100ms','rate_limit':{'fraction':1,'retry_after':'30s'}}]},"
        "{'name':'b','latency':{'ttft':'100ms'}}],"
        "'variants':{'tier':{'layers':[{'name':'app'}],'gateway':{'replicas':2,'layers':["
        "{'name':'proxy','preset':'litellm','redis_host':'redis','model_list':["
        "{'model_name':'m','provider':'a','litellm_params':{'model':'openai/x','weight':1000000}},"
        "{'model_name':'m','provider':'b','litellm_params':{'model':'openai/y','weight':1}}]}"
        "]}}}}"));
    evlog log;
    sim_summary *s = run_logged(sc, "tier", &log);
    const sim_gateway_summary *g = &s->gateway;
    /* the first opening: a replica's own, for a, in the fault's window */
    const sim_log_event *first = NULL;
    for (size_t i = 0; i < log.n && !first; i++)
        if (log.ev[i].breaker.to == FB_BREAKER_OPEN) first = &log.ev[i];
    assert_non_null(first);
    assert_int_equal(first->provider, 0);
    assert_true(first->breaker.cause != FB_CAUSE_SYNC);
    assert_true(first->t_us >= 20 * S && first->t_us < 21 * S);
    uint32_t x = (uint32_t)first->pod - sc->pods.count, y = 1 - x;
    assert_true(x < 2);
    /* the other replica opens exactly at its next read of the store, by the store */
    const sim_log_event *learned = NULL;
    for (size_t i = 0; i < log.n && !learned; i++)
        if (log.ev[i].pod == (int)(sc->pods.count + y) && log.ev[i].breaker.to == FB_BREAKER_OPEN)
            learned = &log.ev[i];
    assert_non_null(learned);
    assert_int_equal(learned->breaker.cause, FB_CAUSE_SYNC);
    assert_true(learned->t_us > first->t_us);
    assert_int_equal(learned->t_us, next_read(y, 2, first->t_us));
    assert_int_equal(g->replica[x].cooldowns, 1);
    assert_int_equal(g->replica[x].learned, 0);
    assert_int_equal(g->replica[y].cooldowns, 0);
    assert_int_equal(g->replica[y].learned, 1);
    assert_int_equal(g->total.cooldowns, 1);
    /* the pods' own layer keeps no cooldown: its state is the pods', not the replicas' */
    for (size_t i = 0; i < log.n; i++) assert_true(log.ev[i].pod >= (int)sc->pods.count);
    /* the same seed: the same run, event for event */
    evlog again;
    sim_summary *s2 = run_logged(sc, "tier", &again);
    assert_int_equal(log.hash, again.hash);
    assert_memory_equal(&s->gateway, &s2->gateway, sizeof s->gateway);
    free(s2);
    free(s);
    scn_free(sc);
}

/* The same layer in each pod: every pod is an instance of its own (no tier, no replicas). */
static void gateway_absent_keeps_layers_in_the_pods(void **state) {
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{'name':'g','duration':'10s','pods':{'count':3}," PLAIN
             "'variants':{'v':{'layers':[{'name':'app'},{'name':'gw'}]}}}",
             "100ms", "10/s");
    sim_scenario *sc = th_load(q(buf));
    assert_false(scn_uses(sc, SIM_FEATURE_GATEWAY));
    sim_summary *s = th_run(sc, 0, NULL, NULL);
    assert_int_equal(s->gateway.replicas, 0);
    assert_int_equal(s->gateway.total.calls, 0);
    free(s);
    scn_free(sc);
}

static void bad(const char *json, const char *path, const char *fragment) {
    sim_scenario *sc = NULL;
    sim_error err;
    const char *t = q(json);
    if (scn_parse(t, strlen(t), "bad.json", NULL, 0, NULL, &sc, &err) == FB_OK)
        fail_msg("accepted: %s", t);
    if (strcmp(err.path, path) != 0) fail_msg("path '%s', want '%s' (%s)", err.path, path, err.msg);
    if (strstr(err.msg, fragment) == NULL) fail_msg("message '%s' lacks '%s'", err.msg, fragment);
}

#define HEAD                                                                                       \
    "{'name':'g','duration':'10s','providers':[{'name':'a'}],"                                     \
    "'traffic':[{'class':'c','arrivals':{'constant':'1/s'}}],"

static void gateway_key_errors_name_their_place(void **state) {
    (void)state;
    bad(HEAD "'variants':{'v':{'gateway':{'replicas':0,'layers':[{'name':'gw'}]}}}}",
        "variants.v.gateway.replicas", "");
    bad(HEAD "'variants':{'v':{'gateway':{'replicas':2}}}}", "variants.v.gateway", "layers");
    bad(HEAD "'variants':{'v':{'gateway':{'replicas':2,'balance':'fastest','layers':[{'name':"
             "'gw'}]}}}}",
        "variants.v.gateway.balance", "round_robin");
    bad(HEAD "'variants':{'v':{'gateway':{'replicas':2,'queue_full':200,'layers':[{'name':"
             "'gw'}]}}}}",
        "variants.v.gateway.queue_full", "400..599");
    bad(HEAD "'variants':{'v':{'gateway':{'replicas':2,'worker':8,'layers':[{'name':'gw'}]}}}}",
        "variants.v.gateway.worker", "workers");
    bad(HEAD "'variants':{'v':{'layers':[{'name':'a1'},{'name':'a2'},{'name':'a3'}],"
             "'gateway':{'replicas':2,'layers':[{'name':'g1'},{'name':'g2'}]}}}}",
        "variants.v.gateway", "at most 4");
    bad(HEAD "'variants':{'v':{'autoscale':{'metric':'in_flight','target':5,'max':4},"
             "'gateway':{'replicas':2,'layers':[{'name':'gw'}]}}}}",
        "variants.v.gateway", "not modelled");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gateway_round_robin_deals_calls_in_turn),
        cmocka_unit_test(gateway_full_queue_answers_at_once),
        cmocka_unit_test(gateway_call_given_up_leaves_the_queue),
        cmocka_unit_test(gateway_least_busy_finds_the_idle_replica),
        cmocka_unit_test(gateway_cooldown_stays_on_its_replica_until_the_store_syncs),
        cmocka_unit_test(gateway_absent_keeps_layers_in_the_pods),
        cmocka_unit_test(gateway_key_errors_name_their_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
