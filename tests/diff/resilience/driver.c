/*
 * driver.c - fusebox's side of the differential tests against the
 * resilience libraries (tests/e2e/diff_resilience.sh).
 *
 *   driver 'PRESET_KEYS' [--timers] < script
 *
 * PRESET_KEYS is the inside of a preset layer ("preset": "opossum",
 * "resetTimeout": 5000). The driver loads it as a scenario layer through
 * the loader (sim/load_preset.c and the preset's apply()), then feeds the
 * layer's own breaker and retry configuration to core/, one line of the
 * script at a time, and prints each decision as a JSON line:
 *
 *   call T OUTCOME [DUR]   a call at T ms: {"t": T, "call": "admitted"|"rejected"}; an admitted
 *                          call ends at T + DUR ms (OUTCOME ok, fail: a 503, ratelimit: a
 *                          429, timeout: after the layer's attempt timeout)
 *   retry OUTCOME K        one request whose first K attempts end with OUTCOME (K = -1: all):
 *                          {"retry": n, "delay_us": d, "u": [draws]} per retry, then
 *                          {"attempts": n, "end": "success"|GIVEUP}
 *   request T OUTCOME K    one request at T ms through the layer's retry and breaker together
 *                          (core/fallback.c): its first K calls made end with OUTCOME, at once;
 *                          each try prints {"t": ms, "call": "admitted"|"rejected"}, the end
 *                          {"t": ms, "end": STOP}
 *
 * Every breaker transition prints {"t": ms, "from": S, "to": S}. With
 * --timers the breaker is polled every millisecond between calls, for
 * libraries whose transitions run on timers (opossum), so that a transition
 * is stamped when fusebox's own breaker makes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/breaker.h"
#include "core/classify.h"
#include "core/fallback.h"
#include "core/retry.h"
#include "core/rng.h"
#include "sim/scenario.h"

static void on_event(void *ctx, const fb_breaker_event *ev) {
    (void)ctx;
    if (ev->from == ev->to) return;
    printf("{\"t\": %lld, \"from\": \"%s\", \"to\": \"%s\"}\n", (long long)(ev->at_us / 1000),
           fb_breaker_state_name(ev->from), fb_breaker_state_name(ev->to));
}

static fb_reply reply_of(const char *outcome) {
    fb_reply r = {.status = 200, .should_retry = -1};
    if (strcmp(outcome, "fail") == 0) r.status = 503;
    if (strcmp(outcome, "ratelimit") == 0) r.status = 429;
    if (strcmp(outcome, "timeout") == 0)
        r = (fb_reply){.transport = FB_TRANSPORT_TIMEOUT, .should_retry = -1};
    return r;
}

/* The class of a reply as the layer sees it (one provider: index 0). */
static fb_class classify_at(const sim_layer *L, const fb_classifier *cl, const fb_reply *rep) {
    return sim_layer_classify(L, cl, rep, 0);
}

typedef struct run {
    const sim_layer *L;
    fb_classifier cl;
    fb_breaker b;
    bool has_breaker, timers;
    fb_time_us last_us;
    fb_retry_policy pol;
    fb_rng rng;
} run;

/* Poll every millisecond from the last call to t (timer-driven libraries). */
static void advance_to(run *R, fb_time_us t_us) {
    if (R->timers)
        for (fb_time_us t = R->last_us + 1000; t <= t_us; t += 1000) fb_breaker_poll(&R->b, t);
    R->last_us = t_us;
}

static void do_call(run *R, long long t_ms, const char *outcome, long long dur_ms) {
    fb_time_us t = (fb_time_us)t_ms * 1000;
    advance_to(R, t);
    fb_breaker_permit permit;
    bool ok = fb_breaker_allow(&R->b, t, &permit);
    printf("{\"t\": %lld, \"call\": \"%s\"}\n", t_ms, ok ? "admitted" : "rejected");
    if (!ok) return;
    fb_reply rep = reply_of(outcome);
    fb_time_us dur = (fb_time_us)dur_ms * 1000;
    if (rep.transport == FB_TRANSPORT_TIMEOUT) dur = R->L->retry.attempt_timeout_us;
    advance_to(R, t + dur);
    fb_class c = classify_at(R->L, &R->cl, &rep);
    fb_breaker_record(
        &R->b, &permit,
        &(fb_breaker_result){.effect = c.effect, .duration_us = dur, .hint_us = FB_TIME_NONE},
        t + dur);
}

static void do_retry(run *R, const char *outcome, long k) {
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_reply rep = reply_of(outcome);
    fb_class c = classify_at(R->L, &R->cl, &rep);
    fb_time_us now = 0;
    for (long n = 1;; n++) {
        if (k >= 0 && n > k) {
            printf("{\"attempts\": %ld, \"end\": \"success\"}\n", n);
            return;
        }
        fb_rng before = R->rng;
        fb_retry_decision d = fb_retry_next(&R->pol, &st, &c, FB_TIME_NONE, NULL, &R->rng, now);
        if (!d.retry) {
            printf("{\"attempts\": %ld, \"end\": \"%s\"}\n", n, fb_giveup_name(d.reason));
            return;
        }
        printf("{\"retry\": %ld, \"delay_us\": %lld, \"u\": [", n, (long long)d.delay_us);
        for (int i = 0; memcmp(&before, &R->rng, sizeof before) != 0 && i < 4; i++)
            printf("%s%.17g", i ? ", " : "", fb_rng_uniform(&before));
        printf("]}\n");
        now += d.delay_us;
        if (n >= 100000) return;
    }
}

/*
 * The breaker's refusals during one step of the request, one line each: a zero
 * retry delay asks the breaker again inside fb_fallback_result(), so a refusal
 * shows in the breaker's count, not always as a decision of its own.
 */
static void print_refusals(const run *R, uint64_t *seen, fb_time_us now) {
    uint64_t n = fb_breaker_stats_get(&R->b)->rejected;
    for (; *seen < n; (*seen)++)
        printf("{\"t\": %lld, \"call\": \"rejected\"}\n", (long long)(now / 1000));
}

static void do_request(run *R, long long t_ms, const char *outcome, long k) {
    fb_fallback fb;
    fb_fallback_config fc = {.provider_count = 1, .retry = &R->pol, .rng = &R->rng};
    fc.providers[0].breaker = &R->b;
    if (fb_fallback_init(&fb, &fc) != FB_OK) return;
    fb_fallback_request req;
    fb_time_us now = (fb_time_us)t_ms * 1000;
    advance_to(R, now);
    uint64_t refused = fb_breaker_stats_get(&R->b)->rejected;
    fb_fallback_decision d = fb_fallback_begin(&fb, &req, 1, NULL, 0, now);
    long sent = 0;
    for (;;) {
        print_refusals(R, &refused, now);
        if (d.action == FB_ACT_ATTEMPT) {
            printf("{\"t\": %lld, \"call\": \"admitted\"}\n", (long long)(now / 1000));
            sent++;
            fb_reply rep = reply_of(k >= 0 && sent > k ? "ok" : outcome);
            fb_class c = classify_at(R->L, &R->cl, &rep);
            d = fb_fallback_result(&fb, &req, &c, FB_TIME_NONE, now);
            continue;
        }
        if (d.action == FB_ACT_DONE) break;
        now += d.delay_us;
        advance_to(R, now);
        d = fb_fallback_resume(&fb, &req, now);
    }
    printf("{\"t\": %lld, \"end\": \"%s\"}\n", (long long)(now / 1000), fb_stop_name(d.stop));
}

static int load(const char *keys, sim_scenario **sc) {
    char text[4096];
    snprintf(text, sizeof text,
             "{\"name\":\"diff\",\"duration\":\"1s\",\"traffic\":[{\"class\":\"c\","
             "\"arrivals\":{\"constant\":\"1/s\"},\"prompt_tokens\":1,\"completion_tokens\":1}],"
             "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1ms\"}}],"
             "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",%s}]}}}",
             keys);
    sim_error err;
    int rc = sim_scenario_parse(text, strlen(text), "driver", NULL, 0, NULL, sc, &err);
    if (rc != FB_OK) {
        char buf[1200];
        sim_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "driver: %s\n", buf);
    }
    return rc;
}

static int setup(run *R, const sim_layer *L, bool timers) {
    memset(R, 0, sizeof *R);
    R->L = L;
    R->timers = timers;
    fb_rng_seed(&R->rng, 42, 7);
    if (fb_classify_init(&R->cl, &L->classify) != FB_OK) return 1;
    if (fb_retry_policy_init(&R->pol, &L->retry) != FB_OK) return 1;
    R->has_breaker = L->per_provider[0].has_breaker;
    if (!R->has_breaker) return 0;
    fb_breaker_config bc = L->per_provider[0].breaker;
    bc.on_event = on_event;
    return fb_breaker_init(&R->b, &bc, 0) == FB_OK ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: driver 'PRESET_KEYS' [--timers] < script\n");
        return 2;
    }
    sim_scenario *sc = NULL;
    if (load(argv[1], &sc) != FB_OK) return 2;
    run R;
    if (setup(&R, &sc->variants[0].layers[0], argc > 2 && strcmp(argv[2], "--timers") == 0)) {
        fprintf(stderr, "driver: the layer's configuration does not initialise\n");
        return 2;
    }
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        char what[16] = "", outcome[16] = "";
        long long a = 0, b = 0;
        int n = sscanf(line, "%15s %lld %15s %lld", what, &a, outcome, &b);
        if (n >= 3 && strcmp(what, "call") == 0 && R.has_breaker) {
            do_call(&R, a, outcome, n == 4 ? b : 0);
        } else if (n == 4 && strcmp(what, "request") == 0 && R.has_breaker) {
            do_request(&R, a, outcome, (long)b);
        } else if (sscanf(line, "%15s %15s %lld", what, outcome, &a) == 3 &&
                   strcmp(what, "retry") == 0) {
            do_retry(&R, outcome, (long)a);
        } else if (line[0] != '#' && line[0] != '\n') {
            fprintf(stderr, "driver: bad line: %s", line);
            sim_scenario_free(sc);
            return 2;
        }
    }
    sim_scenario_free(sc);
    return 0;
}
