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

#define COUNT_MAX LD_COUNT_MAX

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
    if (P->rc != FB_OK) return P->rc;
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
    if (scn__need_object(P, v) != FB_OK) return P->rc; /* explicit: members have keys */
    for (const cJSON *it = v->child; it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        long k = decimal_key(it->string, 0, SIM_OBS_BUCKETS - 1);
        if (k < 0)
            scn__fail(P, "a bucket is a number of attempts, 0 to %d (more: attempts_beyond)",
                      SIM_OBS_BUCKETS - 1);
        else
            count_value(P, it, &o->per_request[k]);
        scn__pop(P, old);
    }
    return P->rc;
}

static int parse_status(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    if (scn__need_object(P, v) != FB_OK) return P->rc; /* explicit: members have keys */
    for (const cJSON *it = v->child; it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        long k = decimal_key(it->string, 100, SIM_OBS_STATUS_MAX - 1);
        int w = -1;
        for (int i = 0; word_names[i]; i++)
            if (strcmp(it->string, word_names[i]) == 0) w = i;
        if (k >= 0)
            count_value(P, it, &o->status[k]);
        else if (w >= 0)
            count_value(P, it, &o->words[w]);
        else
            scn__fail(P, "an answer is an HTTP status (100 to 599), timeout, reset or broken");
        scn__pop(P, old);
    }
    return P->rc;
}

static int parse_end(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    /* explicit: end_n counts known keys only, at most SIM_OBS_ENDS_MAX */
    if (scn__check_object(P, v, end_names, NULL) != FB_OK) return P->rc;
    for (const cJSON *it = v->child; it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        snprintf(o->end_name[o->end_n], sizeof o->end_name[0], "%s", it->string);
        count_value(P, it, &o->end_count[o->end_n]);
        o->end_n++;
        scn__pop(P, old);
    }
    return P->rc;
}

/* Seconds, as report.json writes latencies, into microseconds. */
static int seconds_value(pctx *P, const cJSON *v, void *out) {
    double s = -1; /* stays so unless read */
    scn__get_number_value(P, v, &s, 0, 1e9);
    if (s >= 0) *(fb_time_us *)out = (fb_time_us)llround(s * 1e6);
    return P->rc;
}

/* ---- a quantile's rank band (scenario.h, sim_obs_rank) ---- */

double scn_obs_rank_tolerance(double q, size_t n) {
    if (n == 0) return 0;
    return fmin(SIM_OBS_SHARE_TOLERANCE, 2 * sqrt(q * (1 - q) / (double)n));
}

int64_t scn_obs_order_statistic(const int64_t *v, size_t n, double q) {
    if (n == 0) return 0;
    /* q in millionths first, as fb_hist_percentile: 0.99 of 100 is 99, not 99.00001 */
    double rank = ceil(round(q * 1e6) * (double)n / 1e6);
    size_t k = rank < 1 ? 1 : rank > (double)n ? n : (size_t)rank;
    return v[k - 1];
}

sim_obs_rank scn_obs_rank_band(const int64_t *v, size_t n, double q) {
    sim_obs_rank r = {0};
    if (n == 0) return r;
    double d = scn_obs_rank_tolerance(q, n);
    r.present = true;
    r.from = round(fmax(0, q - d) * 1e6) / 1e6;
    r.to = round(fmin(1, q + d) * 1e6) / 1e6;
    r.lo_us = scn_obs_order_statistic(v, n, r.from);
    r.hi_us = scn_obs_order_statistic(v, n, r.to);
    return r;
}

/* observed.latency_ranks: {"latency_p90": {"from", "to", "lo", "hi"}, ...}. */
static int parse_ranks(pctx *P, const cJSON *v, void *out) {
    static const char *const figures[] = {"latency_p50", "latency_p90", "latency_p99", NULL};
    static const char *const keys[] = {"from", "to", "lo", "hi", NULL};
    sim_observed *o = out;
    scn__check_object(P, v, figures, NULL);
    /* explicit: the members are walked only once checked to be figures */
    for (const cJSON *it = v ? v->child : NULL; P->rc == FB_OK && it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        int k = 0;
        while (strcmp(figures[k], it->string) != 0) k++; /* checked above */
        sim_obs_rank *r = &o->latency_rank[k];
        double x[4] = {0};
        scn__check_object(P, it, keys, keys);
        for (int i = 0; i < 4; i++) {
            size_t o2 = scn__push_key(P, keys[i]);
            scn__get_number_value(P, cJSON_GetObjectItemCaseSensitive(it, keys[i]), &x[i], 0,
                                  i < 2 ? 1 : 1e9);
            scn__pop(P, o2);
        }
        if (x[0] > x[1] || x[2] > x[3])
            scn__fail(P, "expected from <= to and lo <= hi, got from %g, to %g, lo %g, hi %g", x[0],
                      x[1], x[2], x[3]);
        if (P->rc == FB_OK) {
            r->present = true;
            r->from = x[0];
            r->to = x[1];
            r->lo_us = (fb_time_us)llround(x[2] * 1e6);
            r->hi_us = (fb_time_us)llround(x[3] * 1e6);
        }
        scn__pop(P, old);
    }
    return P->rc;
}

static int window_name(pctx *P, const cJSON *v, void *out) {
    return scn__get_string_value(P, v, out, sizeof((sim_obs_window *)0)->name);
}

/* An item of observed.windows (base: sim_obs_window). */
const ld_section scn__observed_window_section = {
    "observed.windows", "/properties/observed/properties/windows/items",
    (const ld_field[]){{"name", LD_HOOK, LD_AT(sim_obs_window, name),
                        .schema = "{\"type\": \"string\", \"maxLength\": 95}", .hook = window_name,
                        .flags = LD_F_REQUIRED | LD_F_PURE, .unit = "string",
                        .doc = "the fault window, as report.json's `breakdown.windows` names it"},
                       {"start_s", LD_HOOK, LD_AT(sim_obs_window, start_us),
                        .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000}",
                        .hook = seconds_value, .flags = LD_F_REQUIRED | LD_F_PURE,
                        .unit = "number (seconds)", .doc = "its start"},
                       {"end_s", LD_HOOK, LD_AT(sim_obs_window, end_us),
                        .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000}",
                        .hook = seconds_value, .flags = LD_F_REQUIRED | LD_F_PURE,
                        .unit = "number (seconds)", .doc = "its end"},
                       {"requests", LD_INTEGER, LD_AT(sim_obs_window, requests), .lo = 0,
                        .hi = COUNT_MAX, .doc = "requests that arrived in it"},
                       {"attempts", LD_INTEGER, LD_AT(sim_obs_window, attempts), .lo = 0,
                        .hi = COUNT_MAX, .doc = "their calls"},
                       {"success_rate", LD_NUMBER, LD_AT(sim_obs_window, success_rate), .lo = 0,
                        .hi = 1, .doc = "of those requests, answered"},
                       {"latency_p50", LD_HOOK, LD_AT(sim_obs_window, latency_p50_us),
                        .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000}",
                        .hook = seconds_value, .flags = LD_F_PURE, .unit = "number (seconds)",
                        .doc = "of those requests, arrival to end"},
                       {"latency_p90", LD_HOOK, LD_AT(sim_obs_window, latency_p90_us),
                        .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000}",
                        .hook = seconds_value, .flags = LD_F_PURE, .unit = "number (seconds)",
                        .doc = "of those requests"},
                       {"latency_p99", LD_HOOK, LD_AT(sim_obs_window, latency_p99_us),
                        .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000}",
                        .hook = seconds_value, .flags = LD_F_PURE, .unit = "number (seconds)",
                        .doc = "of those requests"},
                       {0}},
    NULL};

static int window(pctx *P, const cJSON *v, uint32_t i, void *out) {
    sim_obs_window *w = &((sim_observed *)out)->windows[i];
    return scn__fields(P, v, &scn__observed_window_section, w);
}

static int parse_windows(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    return scn__array(P, v, SIM_OBS_WINDOWS_MAX, "windows", window, o, &o->window_n);
}

/* "noise": {"figure": half-width}; latencies in seconds, buckets as shares. */
static int parse_noise(pctx *P, const cJSON *v, void *out) {
    sim_observed *o = out;
    if (scn__need_object(P, v) != FB_OK) return P->rc; /* explicit: members have keys */
    for (const cJSON *it = v->child; it; it = it->next) {
        size_t old = scn__push_key(P, it->string);
        if (o->noise_n == SIM_OBS_NOISE_MAX) {
            scn__fail(P, "more than %d figures", SIM_OBS_NOISE_MAX);
        } else if (strlen(it->string) >= sizeof o->noise_name[0] || it->string[0] == '\0') {
            scn__fail(P, "a figure's name is 1 to %zu characters", sizeof o->noise_name[0] - 1);
        } else if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 1e12)) {
            scn__fail(P, "expected a number >= 0 (the half-width of the figure's noise)");
        } else {
            bool seconds = strncmp(it->string, "latency_", 8) == 0;
            snprintf(o->noise_name[o->noise_n], sizeof o->noise_name[0], "%s", it->string);
            o->noise[o->noise_n++] = seconds ? it->valuedouble * 1e6 : it->valuedouble;
        }
        scn__pop(P, old);
    }
    return P->rc;
}

/* The variant it names must be one of the scenario's. */
static int parse_variant(pctx *P, const cJSON *v, void *out) {
    char *name = out; /* "" (parse_observed's memset) unless read */
    scn__get_string_value(P, v, name, SIM_NAME_MAX);
    if (scn_variant(P->sc, name) < 0) scn__fail(P, "no variant \"%s\" in the scenario", name);
    return P->rc;
}

/* An item of observed.latency_ranks. */
#define RANK_SCHEMA                                                                                \
    "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"from\", \"to\", "    \
    "\"lo\", \"hi\"], \"properties\": {\"from\": {\"type\": \"number\", \"minimum\": 0, "          \
    "\"maximum\": 1}, \"to\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 1}, \"lo\": "    \
    "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000}, \"hi\": {\"type\": "         \
    "\"number\", \"minimum\": 0, \"maximum\": 1000000000}}}"

/* --set's check of variant: one of the document's variants ("default" where it has none). */
static int check_variant(pctx *P, const cJSON *obj, const cJSON *root) {
    char name[SIM_NAME_MAX] = "";
    int rc = scn__get_string(P, obj, "variant", name, sizeof name);
    const cJSON *vars = scn__field(root, "variants");
    bool known = vars == NULL ? strcmp(name, "default") == 0
                              : !cJSON_IsObject(vars) || scn__field(vars, name) != NULL;
    if (rc != FB_OK || known) return rc; /* variants that are not an object: the loader's */
    size_t old = scn__push_key(P, "variant");
    rc = scn__fail(P, "no variant \"%s\" in the scenario", name);
    scn__pop(P, old);
    return rc;
}

/* "observed" (base: sim_observed). */
const ld_section scn__observed_section = {
    "observed", "/properties/observed",
    (const ld_field[]){
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string"},
        {"variant", LD_HOOK, LD_AT(sim_observed, variant),
         .schema = "{\"type\": \"string\", \"description\": \"the variant the log is of; one of "
                   "the scenario's\"}",
         .hook = parse_variant, .check = check_variant, .flags = LD_F_REQUIRED, .unit = "string",
         .doc = "the variant the log is of (`as-was`); one of the scenario's"},
        {"requests", LD_INTEGER, LD_AT(sim_observed, requests), .lo = 0, .hi = COUNT_MAX,
         .flags = LD_F_REQUIRED, .doc = "requests in the log"},
        {"attempts", LD_INTEGER, LD_AT(sim_observed, attempts), .lo = 0, .hi = COUNT_MAX,
         .flags = LD_F_REQUIRED, .doc = "their calls (HTTP attempts)"},
        {"retries", LD_INTEGER, LD_AT(sim_observed, retries), .lo = 0, .hi = COUNT_MAX,
         .doc = "calls after the first to the provider of the call before (a change of provider "
                "is a fallback)"},
        {"success_rate", LD_NUMBER, LD_AT(sim_observed, success_rate), .lo = 0, .hi = 1,
         .doc = "requests answered"},
        {"latency_p50", LD_HOOK, LD_AT(sim_observed, latency_p50_us),
         .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000, "
                   "\"description\": \"seconds\"}",
         .hook = seconds_value, .flags = LD_F_PURE, .unit = "number (seconds)",
         .doc = "of the requests, arrival to end"},
        {"latency_p90", LD_HOOK, LD_AT(sim_observed, latency_p90_us),
         .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000, "
                   "\"description\": \"seconds\"}",
         .hook = seconds_value, .flags = LD_F_PURE, .unit = "number (seconds)",
         .doc = "of the requests, arrival to end"},
        {"latency_p99", LD_HOOK, LD_AT(sim_observed, latency_p99_us),
         .schema = "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000, "
                   "\"description\": \"seconds\"}",
         .hook = seconds_value, .flags = LD_F_PURE, .unit = "number (seconds)",
         .doc = "of the requests, arrival to end"},
        {"latency_ranks", LD_HOOK,
         .schema = "{\"type\": \"object\", \"description\": \"the log's own latency (seconds) at "
                   "ranks q - d and q + d of its quantiles\", \"additionalProperties\": false, "
                   "\"properties\": {\"latency_p50\": " RANK_SCHEMA
                   ", \"latency_p90\": " RANK_SCHEMA ", \"latency_p99\": " RANK_SCHEMA "}}",
         .offset = 0, .size = sizeof(sim_observed), .hook = parse_ranks, .flags = LD_F_PURE,
         .unit = "object: `latency_p50`/`_p90`/`_p99` → `{\"from\", \"to\", \"lo\", \"hi\"}`",
         .doc = "the log's own latency `lo` and `hi` (seconds) at the quantiles `from` = q − d "
                "and `to` = q + d around each quantile q (d: 2 points, or two binomial sd of the "
                "rank if fewer): a replay's quantile from 0.9 `lo` to 1.1 `hi` is within "
                "tolerance (on a cliff; docs/import.md, \"Fidelity\")"},
        {"attempts_per_request", LD_HOOK,
         .schema =
             "{\"type\": \"object\", \"description\": \"requests by their calls: \\\"N\\\" (0 to "
             "31) -> count\", \"propertyNames\": {\"pattern\": \"^([0-9]|[12][0-9]|3[01])$\"}, "
             "\"additionalProperties\": {\"$ref\": \"#/$defs/observed_count\"}}",
         .offset = 0, .size = sizeof(sim_observed), .hook = parse_buckets, .flags = LD_F_PURE,
         .unit = "object: `\"N\": count`, N in 0–31",
         .doc = "requests by their calls; `attempts_beyond`: those with 32 or more"},
        {"attempts_beyond", LD_INTEGER, LD_AT(sim_observed, per_request_beyond), .lo = 0,
         .hi = COUNT_MAX, .doc = "requests with 32 calls or more"},
        {"status", LD_HOOK,
         .schema = "{\"type\": \"object\", \"description\": \"calls by their answer: an HTTP "
                   "status (100 to 599), timeout, reset or broken -> count\", \"propertyNames\": "
                   "{\"pattern\": \"^([1-5][0-9][0-9]|timeout|reset|broken)$\"}, "
                   "\"additionalProperties\": {\"$ref\": \"#/$defs/observed_count\"}}",
         .offset = 0, .size = sizeof(sim_observed), .hook = parse_status, .flags = LD_F_PURE,
         .unit = "object: `\"STATUS\": count` (100–599) or `\"timeout\"`, `\"reset\"`, "
                 "`\"broken\"`",
         .doc = "calls by their answer, as report.json's `breakdown.status`"},
        {"end", LD_HOOK,
         .schema =
             "{\"type\": \"object\", \"description\": \"requests by how they ended\", "
             "\"propertyNames\": {\"enum\": [\"success\", \"degraded\", \"permanent\", \"policy\", "
             "\"context_length\", \"exhausted\", \"breaker_open\", \"rate_limited\", \"deadline\", "
             "\"stream_broken\", \"timeout\", \"queue_full\"]}, \"additionalProperties\": "
             "{\"$ref\": \"#/$defs/observed_count\"}}",
         .offset = 0, .size = sizeof(sim_observed), .hook = parse_end, .flags = LD_F_PURE,
         .unit = "object: end cause → count (`success`, `permanent`, `exhausted`, `timeout`, ... "
                 ": the names of report.json's `outcomes`)",
         .doc = "requests by how they ended"},
        {"windows", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"required\": [], \"properties\": {}}}",
         .offset = 0, .size = sizeof(sim_observed), .hook = parse_windows,
         .flags = LD_F_NAMED | LD_F_PURE, LD_SUB(&scn__observed_window_section),
         .unit = "array of at most 32 objects: `name`, `start_s`, `end_s` (required), "
                 "`requests`, `attempts`, `success_rate`, `latency_p50`/`_p90`/`_p99`",
         .doc = "per fault window, as report.json's `breakdown.windows` names them"},
        {"noise", LD_HOOK,
         .schema =
             "{\"type\": \"object\", \"description\": \"the noise of the log's figure against the "
             "replay's: counts, seconds (latency_*) or shares (attempts/request N)\", "
             "\"maxProperties\": 160, "
             "\"propertyNames\": {\"minLength\": 1, \"maxLength\": 47}, \"additionalProperties\": "
             "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1000000000000}}",
         .offset = 0, .size = sizeof(sim_observed), .hook = parse_noise, .flags = LD_F_PURE,
         .unit = "object: figure → number ≥ 0",
         .doc = "the noise of the log's figure against the replay's (its name in the table: "
                "`attempts`, `latency_p99` in seconds, `attempts/request 2` as a share, "
                "`status 429`): 3 sd of their difference, the replay's variance over the "
                "import's runs plus the log's own (runs with the even faults drawn per attempt; "
                "the replay's again when none is even), for a latency quantile at least its "
                "spread toward the log's; at most 160; a figure within it is not a miss"},
        {0}},
    NULL};

int scn__parse_observed(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    sim_observed *o = &sc->observed;
    memset(o, 0, sizeof *o);
    o->present = scn__fields(P, v, &scn__observed_section, o) == FB_OK;
    return P->rc;
}
