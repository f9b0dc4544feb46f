/*
 * load_observed.c - "observed": what the log of an imported incident measured, written by
 * `fusebox import` and printed by `fusebox run` beside its variant's figures
 * (docs/scenario-format.md, "observed"; docs/import.md, "Fidelity"). The run never reads
 * it: it is data to compare with, not a setting.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/loadint.h"

#define COUNT_MAX 9007199254740991ULL /* integers a double holds exactly */

/* The end causes of sim/sim.h (SIM_END_MAP), which the scenario cannot include. */
static const char *const end_names[] = {"success",
                                        "degraded",
                                        "permanent",
                                        "policy",
                                        "context_length",
                                        "exhausted",
                                        "breaker_open",
                                        "rate_limited",
                                        "deadline",
                                        "stream_broken",
                                        "timeout",
                                        "queue_full",
                                        NULL};

static const char *const word_names[] = {"timeout", "reset", "broken", NULL};

/* A map's value at P's path: a count. */
static int count_value(pctx *P, const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > (double)COUNT_MAX)
        return scn__fail(P, "expected a count (an integer >= 0)");
    *out = (uint64_t)v->valuedouble;
    return FB_OK;
}

/* A decimal key in [lo, hi], or -1. */
static long decimal_key(const char *k, long lo, long hi) {
    char *end = NULL;
    if (k[0] < '0' || k[0] > '9') return -1;
    long v = strtol(k, &end, 10);
    return *end == '\0' && v >= lo && v <= hi ? v : -1;
}

static int parse_buckets(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    int rc = scn__need_object(P, v);
    for (const cJSON *it = v ? v->child : NULL; rc == FB_OK && it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        long k = decimal_key(it->string, 0, SIM_OBS_BUCKETS - 1);
        if (k < 0)
            rc = scn__fail(P, "a bucket is a number of attempts, 0 to %d (more: attempts_beyond)",
                           SIM_OBS_BUCKETS - 1);
        else
            rc = count_value(P, it, &o->per_request[k]);
        scn__pop(P, old);
    }
    return rc;
}

static int parse_status(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    int rc = scn__need_object(P, v);
    for (const cJSON *it = v ? v->child : NULL; rc == FB_OK && it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        long k = decimal_key(it->string, 100, SIM_OBS_STATUS_MAX - 1);
        int w = -1;
        for (int i = 0; word_names[i]; i++)
            if (strcmp(it->string, word_names[i]) == 0) w = i;
        if (k >= 0)
            rc = count_value(P, it, &o->status[k]);
        else if (w >= 0)
            rc = count_value(P, it, &o->words[w]);
        else
            rc = scn__fail(P, "an answer is an HTTP status (100 to 599), timeout, reset or broken");
        scn__pop(P, old);
    }
    return rc;
}

static int parse_end(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    int rc = scn__check_object(P, v, end_names, NULL);
    for (const cJSON *it = v ? v->child : NULL; rc == FB_OK && it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        snprintf(o->end_name[o->end_n], sizeof o->end_name[0], "%s", it->string);
        rc = count_value(P, it, &o->end_count[o->end_n]);
        o->end_n++;
        scn__pop(P, old);
    }
    return rc;
}

/* Seconds, as report.json writes latencies, into microseconds. */
static int get_seconds(pctx *P, const cJSON *obj, const char *key, fb_time_us *out) {
    double s = -1;
    int rc = scn__get_number(P, obj, key, &s, 0, 1e9);
    if (rc == FB_OK && s >= 0) *out = (fb_time_us)llround(s * 1e6);
    return rc;
}

static int window(pctx *P, const cJSON *v, uint32_t i, void *out) {
    static const char *const keys[] = {
        "name",         "start_s",     "end_s",       "requests",    "attempts",
        "success_rate", "latency_p50", "latency_p90", "latency_p99", NULL};
    static const char *const required[] = {"name", "start_s", "end_s", NULL};
    sim_obs_window *w = &((sim_observed *)out)->windows[i];
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_string(P, v, "name", w->name, sizeof w->name);
    if (rc == FB_OK) rc = get_seconds(P, v, "start_s", &w->start_us);
    if (rc == FB_OK) rc = get_seconds(P, v, "end_s", &w->end_us);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "requests", &w->requests, 0, COUNT_MAX);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "attempts", &w->attempts, 0, COUNT_MAX);
    if (rc == FB_OK) rc = scn__get_number(P, v, "success_rate", &w->success_rate, 0, 1);
    if (rc == FB_OK) rc = get_seconds(P, v, "latency_p50", &w->latency_p50_us);
    if (rc == FB_OK) rc = get_seconds(P, v, "latency_p90", &w->latency_p90_us);
    if (rc == FB_OK) rc = get_seconds(P, v, "latency_p99", &w->latency_p99_us);
    return rc;
}

static int parse_windows(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    return scn__array(P, v, SIM_OBS_WINDOWS_MAX, "windows", window, o, &o->window_n);
}

/* "noise": {"figure": half-width}; latencies in seconds, buckets as shares. */
static int parse_noise(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    int rc = scn__need_object(P, v);
    for (const cJSON *it = v ? v->child : NULL; rc == FB_OK && it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        if (o->noise_n == SIM_OBS_NOISE_MAX)
            rc = scn__fail(P, "more than %d figures", SIM_OBS_NOISE_MAX);
        else if (strlen(it->string) >= sizeof o->noise_name[0] || it->string[0] == '\0')
            rc =
                scn__fail(P, "a figure's name is 1 to %zu characters", sizeof o->noise_name[0] - 1);
        else if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 1e12))
            rc = scn__fail(P, "expected a number >= 0 (the half-width of the figure's noise)");
        if (rc == FB_OK) {
            bool seconds = strncmp(it->string, "latency_", 8) == 0;
            snprintf(o->noise_name[o->noise_n], sizeof o->noise_name[0], "%s", it->string);
            o->noise[o->noise_n++] = seconds ? it->valuedouble * 1e6 : it->valuedouble;
        }
        scn__pop(P, old);
    }
    return rc;
}

/* The variant it names must be one of the scenario's. */
static int check_variant(pctx *P, const sim_scenario *sc) {
    if (scn_variant(sc, sc->observed.variant) >= 0) return FB_OK;
    size_t old = scn__push_key(P, "variant");
    int rc = scn__fail(P, "no variant \"%s\" in the scenario", sc->observed.variant);
    scn__pop(P, old);
    return rc;
}

int scn__parse_observed(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"description",
                                       "variant",
                                       "requests",
                                       "attempts",
                                       "retries",
                                       "success_rate",
                                       "latency_p50",
                                       "latency_p90",
                                       "latency_p99",
                                       "attempts_per_request",
                                       "attempts_beyond",
                                       "status",
                                       "end",
                                       "windows",
                                       "noise",
                                       NULL};
    static const char *const required[] = {"variant", "requests", "attempts", NULL};
    sim_scenario *sc = out;
    sim_observed *o = &sc->observed;
    memset(o, 0, sizeof *o);
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_string(P, v, "variant", o->variant, sizeof o->variant);
    if (rc == FB_OK) rc = check_variant(P, sc);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "requests", &o->requests, 0, COUNT_MAX);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "attempts", &o->attempts, 0, COUNT_MAX);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "retries", &o->retries, 0, COUNT_MAX);
    if (rc == FB_OK) rc = scn__get_number(P, v, "success_rate", &o->success_rate, 0, 1);
    if (rc == FB_OK) rc = get_seconds(P, v, "latency_p50", &o->latency_p50_us);
    if (rc == FB_OK) rc = get_seconds(P, v, "latency_p90", &o->latency_p90_us);
    if (rc == FB_OK) rc = get_seconds(P, v, "latency_p99", &o->latency_p99_us);
    if (rc == FB_OK) rc = scn__key(P, v, "attempts_per_request", parse_buckets, o);
    if (rc == FB_OK)
        rc = scn__get_uint(P, v, "attempts_beyond", &o->per_request_beyond, 0, COUNT_MAX);
    if (rc == FB_OK) rc = scn__key(P, v, "status", parse_status, o);
    if (rc == FB_OK) rc = scn__key(P, v, "end", parse_end, o);
    if (rc == FB_OK) rc = scn__key(P, v, "windows", parse_windows, o);
    if (rc == FB_OK) rc = scn__key(P, v, "noise", parse_noise, o);
    o->present = rc == FB_OK;
    return rc;
}
