/*
 * decide.c - fusebox's side of the gateway differential tests: what a
 * gateway preset's routing layer decides on scripted replies from its
 * targets, computed by fusebox's own code (the scenario loader and the
 * preset's apply(), scn_layer_classify with the preset's status rules, the
 * core's fb_fallback and fb_retry, fb_retry_after_hint for the headers).
 *
 *   decide LAYER REPLY... [@N REPLY...]...
 *
 * LAYER is a preset layer's keys without braces, naming the scenario's
 * providers p0, p1, p2, p3, e.g.
 *   '"preset":"portkey","retry":{"attempts":2},"targets":[{"provider":"p0"}]'.
 * The replies after "@N" are provider pN's (before any "@": p0's); each is
 * what one attempt there gets back, as the mock sends it:
 *   STATUS[,retry-after-ms=M][,retry-after=V] | timeout | reset
 * (timeout: no answer before the attempt's timeout; the attempt lasts it).
 * A provider's last reply repeats. Prints one JSON line:
 *   {"attempts":N,"providers":[...],"statuses":[...],"end":"...","gaps_us":[[lo,hi],...],
 *    "samples":K}
 * statuses: the reply of each attempt (408 for a timeout: Portkey's own answer, 0 a reset);
 * gaps_us[i]: the time from the start of attempt i+1 to the start of attempt i+2 (the
 * attempt itself, 0 but for a timeout, then the wait), its range over K seeds.
 * Built and run by tests/e2e/diff_gateway.sh; exit 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fallback.h"
#include "core/retry_after.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

#define PROVIDERS 4
#define REPLIES_MAX 32
#define ATTEMPTS_MAX 64
#define SAMPLES 200

typedef struct scripted {
    fb_reply rep;
    bool timeout;
    char ms[32], ra[32];
} scripted;

typedef struct script {
    scripted r[REPLIES_MAX];
    int n;
} script;

static int parse_reply(const char *arg, scripted *out) {
    memset(out, 0, sizeof *out);
    out->rep.should_retry = -1;
    if (strcmp(arg, "timeout") == 0) {
        out->timeout = true;
        out->rep.transport = FB_TRANSPORT_TIMEOUT;
        return 0;
    }
    if (strcmp(arg, "reset") == 0) {
        out->rep.transport = FB_TRANSPORT_RESET;
        return 0;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    char *tok = strtok_r(buf, ",", &save);
    if (tok == NULL) return -1;
    out->rep.status = atoi(tok);
    if (out->rep.status < 100 || out->rep.status > 599) return -1;
    while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
        if (strncmp(tok, "retry-after-ms=", 15) == 0)
            snprintf(out->ms, sizeof out->ms, "%s", tok + 15);
        else if (strncmp(tok, "retry-after=", 12) == 0)
            snprintf(out->ra, sizeof out->ra, "%s", tok + 12);
        else
            return -1;
    }
    return 0;
}

typedef struct run {
    uint32_t attempts;
    int providers[ATTEMPTS_MAX];
    int statuses[ATTEMPTS_MAX];
    fb_time_us gaps[ATTEMPTS_MAX];
    fb_stop stop;
} run;

/* The routing layer's engine as sim/setup.c builds it for a preset without breakers. */
static int engine(const sim_layer *L, const fb_retry_policy *pol, fb_rng *rng, fb_fallback *fb) {
    fb_fallback_config cfg;
    memset(&cfg, 0, sizeof cfg);
    static uint32_t cursor;
    cfg.provider_count = PROVIDERS;
    for (uint32_t p = 0; p < PROVIDERS; p++)
        cfg.providers[p].attempt_timeout_us = L->per_provider[p].timeout_us;
    cfg.order_len = L->order_len;
    memcpy(cfg.order, L->order, L->order_len);
    cfg.pick = L->pick;
    memcpy(cfg.group, L->group, sizeof cfg.group);
    memcpy(cfg.weight, L->weight, sizeof cfg.weight);
    cfg.rr_cursor = &cursor;
    cfg.healthy_gate = L->healthy_gate;
    cfg.zero_wait_if_healthy = L->zero_wait_if_healthy;
    cfg.on_context_length = L->on_context_length;
    cfg.on_policy = L->on_policy;
    cfg.retry = pol;
    cfg.rng = rng;
    cfg.stream = L->stream;
    return fb_fallback_init(fb, &cfg);
}

/* One request through the layer with one seed: the core decides, the scripts answer. */
static int one_run(const sim_layer *L, const script *sc, uint64_t seed, run *out) {
    fb_retry_policy pol;
    fb_classifier cl;
    if (fb_retry_policy_init(&pol, &L->retry) != FB_OK || fb_classify_init(&cl, &L->classify))
        return -1;
    fb_rng rng;
    fb_rng_seed(&rng, seed, 7);
    fb_fallback fb;
    if (engine(L, &pol, &rng, &fb) != FB_OK) return -1;
    fb_fallback_request req;
    int used[PROVIDERS] = {0};
    fb_time_us now = 0, started = 0;
    fb_fallback_decision d = fb_fallback_begin(&fb, &req, 0, L->order, L->order_len, now);
    memset(out, 0, sizeof *out);
    while (d.action != FB_ACT_DONE && out->attempts < ATTEMPTS_MAX) {
        if (d.action == FB_ACT_WAIT) {
            now += d.delay_us;
            d = fb_fallback_resume(&fb, &req, now);
            continue;
        }
        if (out->attempts > 0) out->gaps[out->attempts - 1] = now - started;
        started = now;
        const script *ps = &sc[d.provider];
        if (ps->n == 0) {
            fprintf(stderr, "decide: no reply scripted for p%u\n", (unsigned)d.provider);
            return -1;
        }
        const scripted *s = &ps->r[used[d.provider] < ps->n ? used[d.provider] : ps->n - 1];
        used[d.provider]++;
        out->providers[out->attempts] = d.provider;
        out->statuses[out->attempts++] = s->timeout                               ? 408
                                         : s->rep.transport == FB_TRANSPORT_RESET ? 0
                                                                                  : s->rep.status;
        if (s->timeout) {
            if (d.timeout_us <= 0) {
                fprintf(stderr, "decide: a timeout scripted where the layer sets none\n");
                return -1;
            }
            now += d.timeout_us;
        }
        fb_class c = scn_layer_classify(L, &cl, &s->rep, d.provider);
        fb_time_us hint = fb_retry_after_hint(s->ms[0] ? s->ms : NULL, s->ra[0] ? s->ra : NULL, 0);
        d = fb_fallback_result(&fb, &req, &c, hint, now);
    }
    out->stop = d.stop;
    return 0;
}

static int load_layer(const char *keys, sim_scenario **sc) {
    char text[8192];
    int n = snprintf(text, sizeof text,
                     "{\"name\":\"d\",\"duration\":\"1s\",\"traffic\":[{\"class\":\"c\","
                     "\"arrivals\":{\"constant\":\"1/s\"},\"prompt_tokens\":1,"
                     "\"completion_tokens\":1}],\"providers\":["
                     "{\"name\":\"p0\",\"latency\":{\"ttft\":\"1ms\"}},"
                     "{\"name\":\"p1\",\"latency\":{\"ttft\":\"1ms\"}},"
                     "{\"name\":\"p2\",\"latency\":{\"ttft\":\"1ms\"}},"
                     "{\"name\":\"p3\",\"latency\":{\"ttft\":\"1ms\"}}],"
                     "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",%s}]}}}",
                     keys);
    if (n < 0 || (size_t)n >= sizeof text) {
        fprintf(stderr, "decide: the layer is too long\n");
        return -1;
    }
    sim_error err;
    if (scn_parse(text, strlen(text), "layer", NULL, 0, NULL, sc, &err) != FB_OK) {
        char msg[1200];
        scn_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "decide: %s\n", msg);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: decide LAYER REPLY... [@N REPLY...]...\n");
        return 2;
    }
    static script scripts[PROVIDERS];
    int p = 0;
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '@') {
            p = atoi(argv[i] + 1);
            if (p < 0 || p >= PROVIDERS) {
                fprintf(stderr, "decide: no provider p%s\n", argv[i] + 1);
                return 2;
            }
            continue;
        }
        if (scripts[p].n == REPLIES_MAX || parse_reply(argv[i], &scripts[p].r[scripts[p].n++])) {
            fprintf(stderr, "decide: bad reply '%s'\n", argv[i]);
            return 2;
        }
    }
    sim_scenario *sc = NULL;
    if (load_layer(argv[1], &sc) != 0) return 2;
    const sim_layer *L = &sc->variants[0].layers[0];
    static run first, r;
    fb_time_us lo[ATTEMPTS_MAX], hi[ATTEMPTS_MAX];
    for (uint64_t seed = 1; seed <= SAMPLES; seed++) {
        run *x = seed == 1 ? &first : &r;
        if (one_run(L, scripts, seed, x) != 0) return 2;
        if (x->attempts != first.attempts || x->stop != first.stop ||
            memcmp(x->providers, first.providers, sizeof x->providers) != 0) {
            fprintf(stderr, "decide: the decisions depend on the seed\n");
            return 2;
        }
        for (uint32_t i = 0; i + 1 < x->attempts; i++) {
            if (seed == 1 || x->gaps[i] < lo[i]) lo[i] = x->gaps[i];
            if (seed == 1 || x->gaps[i] > hi[i]) hi[i] = x->gaps[i];
        }
    }
    printf("{\"attempts\":%u,\"providers\":[", first.attempts);
    for (uint32_t i = 0; i < first.attempts; i++) printf("%s%d", i ? "," : "", first.providers[i]);
    printf("],\"statuses\":[");
    for (uint32_t i = 0; i < first.attempts; i++) printf("%s%d", i ? "," : "", first.statuses[i]);
    printf("],\"end\":\"%s\",\"gaps_us\":[", fb_stop_name(first.stop));
    for (uint32_t i = 0; i + 1 < first.attempts; i++)
        printf("%s[%lld,%lld]", i ? "," : "", (long long)lo[i], (long long)hi[i]);
    printf("],\"samples\":%d}\n", SAMPLES);
    scn_free(sc);
    return 0;
}
