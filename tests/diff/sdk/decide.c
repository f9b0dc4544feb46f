/*
 * decide.c - fusebox's side of the SDK differential tests: what a preset
 * layer decides on a scripted sequence of replies, computed by fusebox's own
 * code (the scenario loader and the preset's apply(), scn_layer_classify,
 * the core's fb_fallback and fb_retry, fb_retry_after_hint for the headers).
 *
 *   decide LAYER REPLY...
 *
 * LAYER is a preset layer's keys without braces, e.g. '"preset":"openai-node","maxRetries":2'.
 * Each REPLY is what one attempt gets back, as the mock sends it:
 *   STATUS[,retry-after-ms=M][,retry-after=V][,should-retry=true|false]   (STATUS 0: a reset)
 * The last reply repeats while the layer keeps retrying. Prints one JSON line:
 *   {"attempts":N,"end":"success|...","statuses":[...],"gaps_us":[[lo,hi],...],"samples":K}
 * gaps_us[i] is the range of the wait between attempts i+1 and i+2 over K seeds (the
 * jitter's range as fusebox draws it); the decisions themselves must not depend on the seed.
 * Built and run by tests/e2e/diff_sdk.sh; exit 2 on bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fallback.h"
#include "core/retry_after.h"
#include "scenario/scenario.h"

#define REPLIES_MAX 64
#define SAMPLES 4000

typedef struct scripted {
    fb_reply rep;
    char ms[32], ra[32];
} scripted;

static int parse_reply(const char *arg, scripted *out) {
    memset(out, 0, sizeof *out);
    out->rep.should_retry = -1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    char *tok = strtok_r(buf, ",", &save);
    if (tok == NULL) return -1;
    out->rep.status = atoi(tok);
    if (out->rep.status == 0) out->rep.transport = FB_TRANSPORT_RESET;
    while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
        if (strncmp(tok, "retry-after-ms=", 15) == 0)
            snprintf(out->ms, sizeof out->ms, "%s", tok + 15);
        else if (strncmp(tok, "retry-after=", 12) == 0)
            snprintf(out->ra, sizeof out->ra, "%s", tok + 12);
        else if (strcmp(tok, "should-retry=true") == 0)
            out->rep.should_retry = 1;
        else if (strcmp(tok, "should-retry=false") == 0)
            out->rep.should_retry = 0;
        else
            return -1;
    }
    return 0;
}

typedef struct run {
    uint32_t attempts;
    int statuses[REPLIES_MAX];
    fb_time_us gaps[REPLIES_MAX];
    fb_stop stop;
} run;

/* One request through the layer with one seed: the core decides, the script answers. */
static int one_run(const sim_layer *L, const scripted *sc, int n, uint64_t seed, run *out) {
    fb_retry_policy pol;
    fb_classifier cl;
    if (fb_retry_policy_init(&pol, &L->retry) != FB_OK || fb_classify_init(&cl, &L->classify))
        return -1;
    fb_rng rng;
    fb_rng_seed(&rng, seed, 7);
    fb_fallback fb;
    fb_fallback_config cfg = {.provider_count = 1, .retry = &pol, .rng = &rng, .stream = L->stream};
    if (fb_fallback_init(&fb, &cfg) != FB_OK) return -1;
    fb_fallback_request req;
    static const uint8_t order[1] = {0};
    fb_time_us now = 0;
    fb_fallback_decision d = fb_fallback_begin(&fb, &req, 0, order, 1, now);
    memset(out, 0, sizeof *out);
    while (d.action != FB_ACT_DONE && out->attempts < REPLIES_MAX) {
        if (d.action == FB_ACT_WAIT) {
            out->gaps[out->attempts - 1] = d.delay_us;
            now += d.delay_us;
            d = fb_fallback_resume(&fb, &req, now);
            continue;
        }
        const scripted *s = &sc[out->attempts < (uint32_t)n ? out->attempts : (uint32_t)n - 1];
        out->statuses[out->attempts++] = s->rep.status;
        fb_class c = scn_layer_classify(L, &cl, &s->rep, d.provider);
        /* dates are not used by the tests: the wall clock is the epoch */
        fb_time_us hint = fb_retry_after_hint(s->ms[0] ? s->ms : NULL, s->ra[0] ? s->ra : NULL, 0);
        d = fb_fallback_result(&fb, &req, &c, hint, now);
    }
    out->stop = d.stop;
    return 0;
}

static int load_layer(const char *keys, sim_scenario **sc) {
    char text[4096];
    snprintf(text, sizeof text,
             "{\"name\":\"d\",\"duration\":\"1s\",\"traffic\":[{\"class\":\"c\",\"arrivals\":"
             "{\"constant\":\"1/s\"},\"prompt_tokens\":1,\"completion_tokens\":1}],"
             "\"providers\":[{\"name\":\"p\",\"latency\":{\"ttft\":\"1ms\"}}],"
             "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\",%s}]}}}",
             keys);
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
        fprintf(stderr, "usage: decide LAYER REPLY...\n");
        return 2;
    }
    scripted script[REPLIES_MAX];
    int n = argc - 2;
    if (n > REPLIES_MAX) n = REPLIES_MAX;
    for (int i = 0; i < n; i++)
        if (parse_reply(argv[i + 2], &script[i]) != 0) {
            fprintf(stderr, "decide: bad reply '%s'\n", argv[i + 2]);
            return 2;
        }
    sim_scenario *sc = NULL;
    if (load_layer(argv[1], &sc) != 0) return 2;
    const sim_layer *L = &sc->variants[0].layers[0];
    run first, r;
    fb_time_us lo[REPLIES_MAX], hi[REPLIES_MAX];
    for (uint64_t seed = 1; seed <= SAMPLES; seed++) {
        if (one_run(L, script, n, seed, seed == 1 ? &first : &r) != 0) return 2;
        const run *x = seed == 1 ? &first : &r;
        if (x->attempts != first.attempts || x->stop != first.stop) {
            fprintf(stderr, "decide: the decisions depend on the seed\n");
            return 2;
        }
        for (uint32_t i = 0; i + 1 < x->attempts; i++) {
            if (seed == 1 || x->gaps[i] < lo[i]) lo[i] = x->gaps[i];
            if (seed == 1 || x->gaps[i] > hi[i]) hi[i] = x->gaps[i];
        }
    }
    printf("{\"attempts\":%u,\"end\":\"%s\",\"statuses\":[", first.attempts,
           fb_stop_name(first.stop));
    for (uint32_t i = 0; i < first.attempts; i++) printf("%s%d", i ? "," : "", first.statuses[i]);
    printf("],\"gaps_us\":[");
    for (uint32_t i = 0; i + 1 < first.attempts; i++)
        printf("%s[%lld,%lld]", i ? "," : "", (long long)lo[i], (long long)hi[i]);
    printf("],\"samples\":%d}\n", SAMPLES);
    scn_free(sc);
    return 0;
}
