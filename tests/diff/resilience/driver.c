/*
 * driver.c - fusebox's side of the recorded conformance suite against the
 * resilience libraries (tests/e2e/conformance.sh, tests/conformance/README.md).
 *
 *   driver 'PRESET_KEYS' [--timers] < script
 *   driver --replay FILE.jsonl
 *
 * PRESET_KEYS is the inside of a preset layer ("preset": "opossum",
 * "resetTimeout": 5000). The driver loads it as a scenario layer through
 * the loader (scenario/load_preset.c and the preset's apply()), then feeds the
 * layer's own breaker and retry configuration to core/, one line of the
 * script at a time, and prints each decision as a JSON line. A time T is in
 * milliseconds, with up to three decimals (T = 59999.999 is 1 us before a
 * minute); it prints as an integer when whole, else with three decimals.
 *
 *   call T OUTCOME [DUR]   a call at T ms: {"t": T, "call": "admitted"|"rejected"}; an admitted
 *                          call ends at T + DUR ms (OUTCOME ok, fail: a 503, ratelimit: a
 *                          429, timeout: after the layer's attempt timeout)
 *   admit T ID             call ID (0..63) asks at T and holds its permit while in flight:
 *                          {"t": T, "call": "admitted"|"rejected"}
 *   result T ID OUTCOME    call ID's result arrives at T (OUTCOME ok, fail, ratelimit, timeout,
 *                          cancel: the caller gave up); its duration is T minus its admission.
 *                          It is settled from outside the library's timers, after those due at
 *                          T (fb_breaker_result's after_timers; a "call"'s result is a timer
 *                          set at the call). Prints only the transitions it causes; nothing at
 *                          all for a call that was rejected or has reported already
 *   state T                the breaker's state at T, after its lazy transitions:
 *                          {"t": T, "state": S}
 *   retry OUTCOME K        one request whose first K attempts end with OUTCOME (K = -1: all):
 *                          {"retry": n, "delay_us": d, "u": [draws]} per retry, then
 *                          {"attempts": n, "end": "success"|GIVEUP}
 *   retryrange OUTCOME K   as retry, for a jittered retry: {"retry": n, "delay_us_min": lo,
 *                          "delay_us_max": hi} per retry, its delay at the smallest and the
 *                          largest draw (fb_retry_delay_at), then the end
 *   request T OUTCOME K    one request at T ms through the layer's retry and breaker together
 *                          (core/fallback.c): its first K calls made end with OUTCOME, at once;
 *                          each try prints {"t": ms, "call": "admitted"|"rejected"}, the end
 *                          {"t": ms, "end": STOP}
 *
 * Every breaker transition prints {"t": ms, "from": S, "to": S} (S: closed, open, half_open,
 * ...). With --timers the breaker is polled every millisecond between calls, for libraries
 * whose transitions run on timers (opossum), so that a transition is stamped when fusebox's
 * own breaker makes it. Whatever the flag, the breaker is polled at each timed
 * transition it reports (fb_breaker_next_timer: resilience4j's scheduled ones)
 * that falls due by the next line's time, as a simulator with a clock does.
 *
 * --replay reads one case per line: {"name": N, "fusebox": {PRESET_KEYS}, "lib": {...},
 * "script": [LINE...], "expect": [OBJECT...]} with optional "timers": true and "skip": WHY.
 * Each case runs as above in this one process, its objects compared with "expect" as JSON
 * values (key order and number spelling aside). One line per case: "ok N", "not ok N: step K:
 * expected {...}, got {...}", or "skip N # WHY". Exit 0 when every case ran, 2 on bad input
 * (FILE:LINE and what is wrong).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/breaker.h"
#include "core/classify.h"
#include "core/fallback.h"
#include "core/retry.h"
#include "core/rng.h"
#include "scenario/scenario.h"

#define CALLS_MAX 64           /* call ids of admit/result */
#define OUT_MAX (1u << 20)     /* one case's output in --replay */
#define LINE_MAX_LEN (1 << 16) /* one line of a --replay file */

/* Where decisions go: stdout, or (--replay) a buffer of lines. */
typedef struct out {
    char *buf;
    size_t len;
    bool to_buf, overflow;
} out;

static out g_out;

static void emit(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (!g_out.to_buf) {
        fputs(line, stdout);
        return;
    }
    size_t k = strlen(line);
    if (g_out.len + k + 1 > OUT_MAX) {
        g_out.overflow = true;
        return;
    }
    memcpy(g_out.buf + g_out.len, line, k + 1);
    g_out.len += k;
}

/* A time in ms as the output writes it: whole ms as an integer, else three decimals. */
static const char *ms_of(fb_time_us t, char buf[32]) {
    if (t % 1000 == 0)
        snprintf(buf, 32, "%lld", (long long)(t / 1000));
    else
        snprintf(buf, 32, "%s%lld.%03lld", t < 0 ? "-" : "", llabs((long long)t) / 1000,
                 llabs((long long)t) % 1000);
    return buf;
}

static void on_event(void *ctx, const fb_breaker_event *ev) {
    (void)ctx;
    if (ev->from == ev->to) return;
    char b[32];
    emit("{\"t\": %s, \"from\": \"%s\", \"to\": \"%s\"}\n", ms_of(ev->at_us, b),
         fb_breaker_state_name(ev->from), fb_breaker_state_name(ev->to));
}

static bool reply_of(const char *outcome, fb_reply *r) {
    *r = (fb_reply){.status = 200, .should_retry = -1};
    if (strcmp(outcome, "ok") == 0) return true;
    if (strcmp(outcome, "fail") == 0)
        r->status = 503;
    else if (strcmp(outcome, "ratelimit") == 0)
        r->status = 429;
    else if (strcmp(outcome, "timeout") == 0)
        *r = (fb_reply){.transport = FB_TRANSPORT_TIMEOUT, .should_retry = -1};
    else
        return false;
    return true;
}

/* The class of a reply as the layer sees it (one provider: index 0). */
static fb_class classify_at(const sim_layer *L, const fb_classifier *cl, const fb_reply *rep) {
    return scn_layer_classify(L, cl, rep, 0);
}

typedef struct call_slot {
    fb_breaker_permit permit;
    bool held;
} call_slot;

typedef struct run {
    const sim_layer *L;
    fb_classifier cl;
    fb_breaker b;
    bool has_breaker, timers;
    fb_time_us last_us;
    fb_retry_policy pol;
    fb_rng rng;
    call_slot calls[CALLS_MAX];
} run;

/* Poll every millisecond from the last call to t (timer-driven libraries). */
static void advance_to(run *R, fb_time_us t_us) {
    if (R->has_breaker)
        for (fb_time_us due = fb_breaker_next_timer(&R->b); due >= 0 && due <= t_us;
             due = fb_breaker_next_timer(&R->b))
            fb_breaker_poll(&R->b, due);
    if (R->timers)
        for (fb_time_us t = R->last_us + 1000; t <= t_us; t += 1000) fb_breaker_poll(&R->b, t);
    R->last_us = t_us;
}

static void do_call(run *R, fb_time_us t, const char *outcome, fb_time_us dur) {
    advance_to(R, t);
    fb_breaker_permit permit;
    bool ok = fb_breaker_allow(&R->b, t, &permit);
    char b[32];
    emit("{\"t\": %s, \"call\": \"%s\"}\n", ms_of(t, b), ok ? "admitted" : "rejected");
    if (!ok) return;
    fb_reply rep;
    reply_of(outcome, &rep);
    if (rep.transport == FB_TRANSPORT_TIMEOUT) dur = R->L->retry.attempt_timeout_us;
    advance_to(R, t + dur);
    fb_class c = classify_at(R->L, &R->cl, &rep);
    fb_breaker_record(
        &R->b, &permit,
        &(fb_breaker_result){.effect = c.effect, .duration_us = dur, .hint_us = FB_TIME_NONE},
        t + dur);
}

static void do_admit(run *R, fb_time_us t, int id) {
    advance_to(R, t);
    call_slot *cs = &R->calls[id];
    cs->held = fb_breaker_allow(&R->b, t, &cs->permit);
    char b[32];
    emit("{\"t\": %s, \"call\": \"%s\"}\n", ms_of(t, b), cs->held ? "admitted" : "rejected");
}

static void do_result(run *R, fb_time_us t, int id, const char *outcome) {
    advance_to(R, t);
    call_slot *cs = &R->calls[id];
    if (!cs->held) return;
    cs->held = false;
    fb_effect e = FB_EFFECT_CANCELLED;
    if (strcmp(outcome, "cancel") != 0) {
        fb_reply rep;
        reply_of(outcome, &rep);
        e = classify_at(R->L, &R->cl, &rep).effect;
    }
    /* the result is settled (or the call aborted) from outside the library's timers: after
     * those due at t (a "call"'s result is a timer set at the call) */
    fb_breaker_record(&R->b, &cs->permit,
                      &(fb_breaker_result){.effect = e,
                                           .duration_us = t - cs->permit.admitted_us,
                                           .hint_us = FB_TIME_NONE,
                                           .after_timers = FB_ON},
                      t);
}

static void do_state(run *R, fb_time_us t) {
    advance_to(R, t);
    fb_breaker_poll(&R->b, t);
    char b[32];
    emit("{\"t\": %s, \"state\": \"%s\"}\n", ms_of(t, b),
         fb_breaker_state_name(fb_breaker_state_get(&R->b)));
}

static void do_retry(run *R, const char *outcome, long k, bool range) {
    fb_retry_state st;
    fb_retry_begin(&st, 0);
    fb_reply rep;
    reply_of(outcome, &rep);
    fb_class c = classify_at(R->L, &R->cl, &rep);
    fb_time_us now = 0;
    for (long n = 1;; n++) {
        if (k >= 0 && n > k) {
            emit("{\"attempts\": %ld, \"end\": \"success\"}\n", n);
            return;
        }
        fb_rng before = R->rng;
        fb_retry_decision d = fb_retry_next(&R->pol, &st, &c, FB_TIME_NONE, NULL, &R->rng, now);
        if (!d.retry) {
            emit("{\"attempts\": %ld, \"end\": \"%s\"}\n", n, fb_giveup_name(d.reason));
            return;
        }
        if (range) {
            emit("{\"retry\": %ld, \"delay_us_min\": %lld, \"delay_us_max\": %lld}\n", n,
                 (long long)fb_retry_delay_at(&R->pol, &st, (uint32_t)n, 0.0),
                 (long long)fb_retry_delay_at(&R->pol, &st, (uint32_t)n, 1.0 - 0x1.0p-53));
            now += d.delay_us;
            continue;
        }
        char u[256] = "";
        size_t ul = 0;
        for (int i = 0; memcmp(&before, &R->rng, sizeof before) != 0 && i < 4; i++)
            ul += (size_t)snprintf(u + ul, sizeof u - ul, "%s%.17g", i ? ", " : "",
                                   fb_rng_uniform(&before));
        emit("{\"retry\": %ld, \"delay_us\": %lld, \"u\": [%s]}\n", n, (long long)d.delay_us, u);
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
    char b[32];
    uint64_t n = fb_breaker_stats_get(&R->b)->rejected;
    for (; *seen < n; (*seen)++) emit("{\"t\": %s, \"call\": \"rejected\"}\n", ms_of(now, b));
}

static void do_request(run *R, fb_time_us now, const char *outcome, long k) {
    fb_fallback fb;
    fb_fallback_config fc = {.provider_count = 1, .retry = &R->pol, .rng = &R->rng};
    fc.providers[0].breaker = &R->b;
    if (fb_fallback_init(&fb, &fc) != FB_OK) return;
    fb_fallback_request req;
    advance_to(R, now);
    uint64_t refused = fb_breaker_stats_get(&R->b)->rejected;
    fb_fallback_decision d = fb_fallback_begin(&fb, &req, 1, NULL, 0, now);
    long sent = 0;
    char b[32];
    for (;;) {
        print_refusals(R, &refused, now);
        if (d.action == FB_ACT_ATTEMPT) {
            emit("{\"t\": %s, \"call\": \"admitted\"}\n", ms_of(now, b));
            sent++;
            fb_reply rep;
            reply_of(k >= 0 && sent > k ? "ok" : outcome, &rep);
            fb_class c = classify_at(R->L, &R->cl, &rep);
            d = fb_fallback_result(&fb, &req, &c, FB_TIME_NONE, now);
            continue;
        }
        if (d.action == FB_ACT_DONE) break;
        now += d.delay_us;
        advance_to(R, now);
        d = fb_fallback_resume(&fb, &req, now);
    }
    emit("{\"t\": %s, \"end\": \"%s\"}\n", ms_of(now, b), fb_stop_name(d.stop));
}

/* The layer PRESET_KEYS describes; on failure the loader's message in err. */
static int load(const char *keys, sim_scenario **sc, char *err, size_t errlen) {
    static char text[LINE_MAX_LEN + 512];
    snprintf(text, sizeof text,
             "{\"name\":\"diff\",\"duration\":\"1s\",\"traffic\":[{\"class\":\"c\","
             "\"arrivals\":{\"constant\":\"1/s\"},\"prompt_tokens\":1,\"completion_tokens\":1}],"
             "\"providers\":[{\"name\":\"a\",\"latency\":{\"ttft\":\"1ms\"}}],"
             "\"variants\":{\"v\":{\"layers\":[{\"name\":\"x\"%s%s}]}}}",
             keys[0] ? "," : "", keys);
    sim_error e;
    int rc = scn_parse(text, strlen(text), "driver", NULL, 0, NULL, sc, &e);
    if (rc != FB_OK) scn_error_format(&e, err, errlen);
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

/* A time token: ms with up to three decimals, as microseconds. */
static bool parse_ms(const char *s, fb_time_us *us) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || fabs(v) > 9e12) return false;
    *us = (fb_time_us)llround(v * 1000.0);
    return true;
}

static bool parse_long(const char *s, long *v) {
    char *end;
    *v = strtol(s, &end, 10);
    return end != s && !*end;
}

static bool is_outcome(const char *s, bool cancel_too) {
    fb_reply r;
    return reply_of(s, &r) || (cancel_too && strcmp(s, "cancel") == 0);
}

/* One script line. Returns 0, or -1 with a message in err. */
static int run_line(run *R, const char *line, char *err, size_t errlen) {
    char copy[512], *tok[6];
    int n = 0;
    snprintf(copy, sizeof copy, "%s", line);
    for (char *p = strtok(copy, " \t\r\n"); p && n < 6; p = strtok(NULL, " \t\r\n")) tok[n++] = p;
    if (n == 0 || tok[0][0] == '#') return 0;
    const char *w = tok[0];
    fb_time_us t = 0, d = 0;
    long id = 0, k = 0;
    bool breaker = R->has_breaker;
    if (strcmp(w, "call") == 0 && (n == 3 || n == 4) && breaker && parse_ms(tok[1], &t) &&
        is_outcome(tok[2], false) && (n == 3 || parse_ms(tok[3], &d))) {
        do_call(R, t, tok[2], d);
    } else if (strcmp(w, "admit") == 0 && n == 3 && breaker && parse_ms(tok[1], &t) &&
               parse_long(tok[2], &id) && id >= 0 && id < CALLS_MAX) {
        do_admit(R, t, (int)id);
    } else if (strcmp(w, "result") == 0 && n == 4 && breaker && parse_ms(tok[1], &t) &&
               parse_long(tok[2], &id) && id >= 0 && id < CALLS_MAX && is_outcome(tok[3], true)) {
        do_result(R, t, (int)id, tok[3]);
    } else if (strcmp(w, "state") == 0 && n == 2 && breaker && parse_ms(tok[1], &t)) {
        do_state(R, t);
    } else if (strcmp(w, "request") == 0 && n == 4 && breaker && parse_ms(tok[1], &t) &&
               is_outcome(tok[2], false) && parse_long(tok[3], &k)) {
        do_request(R, t, tok[2], k);
    } else if ((strcmp(w, "retry") == 0 || strcmp(w, "retryrange") == 0) && n == 3 &&
               is_outcome(tok[1], false) && parse_long(tok[2], &k)) {
        do_retry(R, tok[1], k, strcmp(w, "retryrange") == 0);
    } else {
        snprintf(err, errlen, "bad script line%s: %s",
                 breaker ? "" : " (or a breaker command for a layer without a breaker)", line);
        return -1;
    }
    return 0;
}

static int single(const char *keys, bool timers) {
    sim_scenario *sc = NULL;
    char err[1200];
    if (load(keys, &sc, err, sizeof err) != FB_OK) {
        fprintf(stderr, "driver: %s\n", err);
        return 2;
    }
    static run R;
    if (setup(&R, &sc->variants[0].layers[0], timers)) {
        fprintf(stderr, "driver: the layer's configuration does not initialise\n");
        scn_free(sc);
        return 2;
    }
    char line[512];
    int rc = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (run_line(&R, line, err, sizeof err) != 0) {
            fprintf(stderr, "driver: %s\n", err);
            rc = 2;
            break;
        }
    }
    scn_free(sc);
    return rc;
}

/* ---- --replay ---- */

/* A JSON value on one line, shortened to fit buf. */
static const char *json_text(const cJSON *v, char *buf, size_t len) {
    if (!v) return "nothing";
    char *s = cJSON_PrintUnformatted(v);
    snprintf(buf, len, "%s", s ? s : "?");
    cJSON_free(s);
    return buf;
}

/* Compare the case's output (g_out) with expect; print the verdict line. */
static void verdict(const char *name, const cJSON *expect) {
    int k = 0;
    const cJSON *want = expect->child;
    char *p = g_out.buf, gotbuf[600], wantbuf[600];
    for (;;) {
        char *nl = p ? strchr(p, '\n') : NULL;
        cJSON *got = NULL;
        if (nl) {
            *nl = 0;
            got = cJSON_Parse(p);
            p = nl + 1;
        }
        k++;
        if (!nl && !want) break;
        if (!got || !want || !cJSON_Compare(want, got, true)) {
            printf("not ok %s: step %d: expected %s, got %s\n", name, k,
                   json_text(want, wantbuf, sizeof wantbuf), json_text(got, gotbuf, sizeof gotbuf));
            cJSON_Delete(got);
            return;
        }
        cJSON_Delete(got);
        want = want->next;
    }
    printf("ok %s\n", name);
}

/* The case's fields, checked; NULL and a message when one is missing or mistyped. */
static const char *case_fields(const cJSON *c, const cJSON **name, const cJSON **keys,
                               const cJSON **script, const cJSON **expect) {
    if (!cJSON_IsObject(c)) return "a case is a JSON object";
    *name = cJSON_GetObjectItemCaseSensitive(c, "name");
    *keys = cJSON_GetObjectItemCaseSensitive(c, "fusebox");
    *script = cJSON_GetObjectItemCaseSensitive(c, "script");
    *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    if (!cJSON_IsString(*name) || !(*name)->valuestring[0]) return "$.name: a non-empty string";
    if (!cJSON_IsObject(*keys)) return "$.fusebox: an object (the preset layer's keys)";
    if (!cJSON_IsArray(*script)) return "$.script: an array of script lines";
    for (const cJSON *l = (*script)->child; l; l = l->next)
        if (!cJSON_IsString(l)) return "$.script: every line is a string";
    if (!cJSON_IsArray(*expect)) return "$.expect: an array of objects";
    for (const cJSON *o = (*expect)->child; o; o = o->next)
        if (!cJSON_IsObject(o)) return "$.expect: every entry is an object";
    const cJSON *skip = cJSON_GetObjectItemCaseSensitive(c, "skip");
    if (skip && !cJSON_IsString(skip)) return "$.skip: a string (why the case is not replayed)";
    const cJSON *timers = cJSON_GetObjectItemCaseSensitive(c, "timers");
    if (timers && !cJSON_IsBool(timers)) return "$.timers: true or false";
    return NULL;
}

/* One case. Returns 0, or 2 with the reason in err (bad input). */
static int replay_case(const cJSON *c, char *err, size_t errlen) {
    const cJSON *name, *keys, *script, *expect;
    const char *bad = case_fields(c, &name, &keys, &script, &expect);
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        return 2;
    }
    const cJSON *skip = cJSON_GetObjectItemCaseSensitive(c, "skip");
    if (skip) {
        printf("skip %s # %s\n", name->valuestring, skip->valuestring);
        return 0;
    }
    char *k = cJSON_PrintUnformatted(keys);
    size_t kl = strlen(k);
    k[kl - 1] = 0; /* the inside of {...} */
    sim_scenario *sc = NULL;
    char lerr[1200];
    int rc = load(k + 1, &sc, lerr, sizeof lerr);
    cJSON_free(k);
    if (rc != FB_OK) {
        printf("not ok %s: fusebox does not load the layer: %s\n", name->valuestring, lerr);
        return 0;
    }
    static run R;
    if (setup(&R, &sc->variants[0].layers[0], cJSON_IsTrue(cJSON_GetObjectItem(c, "timers")))) {
        printf("not ok %s: the layer's configuration does not initialise\n", name->valuestring);
        scn_free(sc);
        return 0;
    }
    g_out.len = 0;
    g_out.buf[0] = 0;
    g_out.overflow = false;
    int i = 0;
    for (const cJSON *l = script->child; l; l = l->next, i++) {
        if (run_line(&R, l->valuestring, lerr, sizeof lerr) != 0) {
            snprintf(err, errlen, "$.script[%d]: %s", i, lerr);
            scn_free(sc);
            return 2;
        }
    }
    scn_free(sc);
    if (g_out.overflow)
        printf("not ok %s: the output passed %u bytes\n", name->valuestring, OUT_MAX);
    else
        verdict(name->valuestring, expect);
    return 0;
}

static int replay(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "driver: %s: cannot open\n", path);
        return 2;
    }
    static char line[LINE_MAX_LEN];
    g_out.buf = malloc(OUT_MAX);
    g_out.to_buf = true;
    int rc = 0;
    long lineno = 0, cases = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            fprintf(stderr, "driver: %s:%ld: a line longer than %d bytes\n", path, lineno,
                    LINE_MAX_LEN - 2);
            rc = 2;
            break;
        }
        if (strspn(line, " \t\r\n") == n) continue;
        cJSON *c = cJSON_Parse(line);
        char err[1400] = "not JSON";
        if (!c || replay_case(c, err, sizeof err) != 0) {
            fprintf(stderr, "driver: %s:%ld: %s\n", path, lineno, err);
            rc = 2;
        }
        cases++;
        cJSON_Delete(c);
        fflush(stdout);
    }
    fclose(f);
    free(g_out.buf);
    if (rc == 0 && cases == 0) {
        fprintf(stderr, "driver: %s: no cases\n", path);
        rc = 2;
    }
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--replay") == 0) return replay(argv[2]);
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: driver 'PRESET_KEYS' [--timers] < script\n"
                        "       driver --replay FILE.jsonl\n");
        return 2;
    }
    return single(argv[1], argc > 2 && strcmp(argv[2], "--timers") == 0);
}
