/*
 * scenario.c - load, override and validate a scenario file.
 *
 * The document is parsed with cJSON, `--set` overrides are applied to the
 * tree (load_set.c), and then every object is walked with a list of the
 * keys it may hold, one section at a time: providers first, because
 * traffic and policies refer to them by name, then traffic, the small
 * sections read here, and the variants, each merged over the `policy`
 * block. Every error carries the JSON path being read; unknown keys get a
 * did-you-mean suggestion (load_json.c). scn_check_all runs the
 * same passes again after each unknown key, without it, to list them all.
 */
#include "scenario/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/loadint.h"
#include "util/file.h"

#define SCENARIO_FILE_MAX (16 * 1024 * 1024)

/* ---- the top level ---- */

/* "pods" (base: sim_pods). */
const ld_section scn__pods_section = {
    "pods", "/properties/pods",
    (const ld_field[]){
        {"count", LD_INTEGER, LD_AT(sim_pods, count), .lo = 1, .hi = SIM_PODS_MAX, .def = "1",
         .flags = LD_F_SET,
         .doc = "pods (the pods at the start when a variant autoscales); arrivals are spread "
                "round-robin (over the pods that are ready, with `autoscale`)"},
        {"workers", LD_INTEGER, LD_AT(sim_pods, workers), .lo = 1, .hi = 1000000, .def = "64",
         .flags = LD_F_SET, .doc = "concurrent requests per pod (a thread pool)"},
        {"queue", LD_INTEGER, LD_AT(sim_pods, queue), .lo = 0, .hi = 10000000, .def = "100",
         .flags = LD_F_SET,
         .doc = "requests waiting for a worker per pod; beyond it a request fails at once "
                "(`queue_full`)"},
        {"request_timeout", LD_DURATION, LD_AT(sim_pods, request_timeout_us), .def = "\"60s\"",
         .flags = LD_F_SET,
         .doc = "a request still running (or queued) this long after it arrived ends with "
                "`timeout`; its outstanding attempt is abandoned"},
        {0}},
    NULL};

/* "slo" (base: sim_scenario). */
const ld_section scn__slo_section = {
    "slo_spillover_limits", "/properties/slo",
    (const ld_field[]){{"latency", LD_DURATION, LD_AT(sim_scenario, slo_latency_us),
                        .def = "\"10s\"", .flags = LD_F_SET,
                        .doc = "answered later than this = SLO miss (in the blast radius)"},
                       {0}},
    "slo."};

/* "spillover" (base: sim_spillover). */
const ld_section scn__spillover_section = {
    "slo_spillover_limits", "/properties/spillover",
    (const ld_field[]){
        {"hold", LD_DURATION, LD_AT(sim_spillover, hold_us), .def = "\"30s\"", .flags = LD_F_SET,
         .doc = "back to baseline means: healthy for this long"},
        {"error_margin", LD_NUMBER, LD_AT(sim_spillover, error_margin), .lo = 0, .hi = 1,
         .def = "0.01", .flags = LD_F_SET,
         .doc = "healthy: the error (+ SLO miss) rate over a sliding `hold` window ≤ baseline + "
                "margin"},
        {"latency_factor", LD_NUMBER, LD_AT(sim_spillover, latency_factor), .lo = 1, .hi = 1000,
         .def = "1.5", .flags = LD_F_SET,
         .doc = "healthy: the p99 over that window ≤ baseline p99 × factor; `hold` may span at "
                "most 120 ticks"},
        {0}},
    "spillover."};

/* "limits" (base: sim_limits). */
const ld_section scn__limits_section = {
    "slo_spillover_limits", "/properties/limits",
    (const ld_field[]){
        {"in_flight", LD_INTEGER, LD_AT(sim_limits, in_flight_max), .lo = 1, .hi = 100000000,
         .def = "1000000", .flags = LD_F_SET, .doc = "requests in the system at once"},
        {"events", LD_INTEGER, LD_AT(sim_limits, events_max), .lo = 16, .hi = 1000000000,
         .def = "4000000", .flags = LD_F_SET, .doc = "events in the simulator's queue at once"},
        {"requests", LD_INTEGER, LD_AT(sim_limits, requests_max), .lo = 1, .hi = 100000000000.0,
         .def = "1000000000", .flags = LD_F_SET, .doc = "requests generated in the whole run"},
        {"duration", LD_DURATION, LD_AT(sim_limits, duration_max_us), .def = "\"7d\"",
         .flags = LD_F_SET,
         .doc = "the longest `duration` accepted; after the traffic window a run only drains (at "
                "most `pods.request_timeout` more)"},
        {0}},
    "limits."};

/* Every default of the top level, before any key is read. */
static int defaults(pctx *P, sim_scenario *sc) {
    scn__keep(P, scn__set_defaults(&scn__top_section, sc, P->err));
    scn__keep(P, scn__set_defaults(&scn__pods_section, &sc->pods, P->err));
    scn__keep(P, scn__set_defaults(&scn__slo_section, sc, P->err));
    scn__keep(P, scn__set_defaults(&scn__spillover_section, &sc->spillover, P->err));
    scn__keep(P, scn__set_defaults(&scn__limits_section, &sc->limits, P->err));
    return P->rc;
}

/* A failure at root.key. */
static int fail_at(pctx *P, const char *key, const char *msg) {
    size_t old = scn__push_key(P, key);
    int rc = scn__fail(P, "%s", msg);
    scn__pop(P, old);
    return rc;
}

/*
 * [A-Za-z0-9][A-Za-z0-9._-]* without "..": never empty, ".", "..", a path
 * with '/', or a hidden folder, whatever folder the output goes to.
 */
static bool safe_name(const char *name) {
    unsigned char c = (unsigned char)name[0];
    bool first = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return first && strspn(name, LD_NAME_CHARS) == strlen(name) && strstr(name, "..") == NULL;
}

/* "name": a string that is a safe folder name. */
static int parse_name(pctx *P, const cJSON *v, void *out) {
    char *name = out;
    size_t cap = sizeof((sim_scenario *)0)->name;
    if (!cJSON_IsString(v)) return scn__fail(P, "expected a string, got %s", scn__type_name(v));
    if (strlen(v->valuestring) >= cap) return scn__fail(P, "longer than %zu characters", cap - 1);
    snprintf(name, cap, "%s", v->valuestring);
    if (safe_name(name)) return FB_OK;
    return scn__fail(P,
                     "\"%s\": a scenario name starts with a letter or digit, continues with "
                     "letters, digits, '-', '_' and '.', and has no \"..\" (it names the output "
                     "folder out/<name>/, which must never be '.', '..' or another place)",
                     name);
}

static int parse_incident(pctx *P, const cJSON *v, void *out) {
    (void)out;
    return cJSON_IsString(v) ? FB_OK : scn__fail(P, "expected a string");
}

/* The run's resolution against its length. */
static int check_tick(pctx *P, const cJSON *root, sim_scenario *sc) {
    (void)root;
    if (sc->tick_us > sc->duration_us)
        return fail_at(P, "tick", "longer than the duration: the run would have no time series");
    if (sc->duration_us / sc->tick_us > 10000000)
        return fail_at(P, "tick", "more than 10,000,000 time-series rows; use a longer tick");
    return FB_OK;
}

static int parse_pods(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__pods_section, out);
}

static int parse_slo(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__slo_section, out);
}

static int parse_spillover(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__spillover_section, out);
}

/* Spillover is only measured after faults and spikes, tick by tick over the hold. */
static int check_spillover_hold(pctx *P, const cJSON *root, sim_scenario *sc) {
    bool windows = false;
    for (uint32_t i = 0; i < sc->provider_count; i++) windows |= sc->providers[i].fault_count > 0;
    for (uint32_t i = 0; i < sc->class_count; i++) windows |= sc->classes[i].spike_count > 0;
    if (!windows || sc->spillover.hold_us <= 120 * sc->tick_us) return FB_OK;
    size_t o1 = scn__push_key(P, "spillover");
    size_t o2 = scn__push_key(P, "hold");
    int rc = scn__fail(P,
                       "%s is more than 120 ticks (the window is kept tick by tick): shorten it or "
                       "lengthen the tick",
                       scn__field(root, "spillover") ? "the hold" : "the default hold (30s)");
    scn__pop(P, o2);
    scn__pop(P, o1);
    return rc;
}

static int parse_limits(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__limits_section, out);
}

/* In the largest unit that divides it: in whole hours, a 1m duration over a 30s limit read
   "0h exceeds 0h" (found by tests/e2e/stress.sh). */
static void whole_units(char *buf, size_t len, fb_time_us us) {
    if (us % (3600 * FB_US_PER_S) == 0)
        snprintf(buf, len, "%lldh", (long long)(us / (3600 * FB_US_PER_S)));
    else if (us % (60 * FB_US_PER_S) == 0)
        snprintf(buf, len, "%lldm", (long long)(us / (60 * FB_US_PER_S)));
    else
        snprintf(buf, len, "%gs", (double)us / 1e6);
}

static int check_duration_limit(pctx *P, const cJSON *root, sim_scenario *sc) {
    (void)root;
    if (sc->duration_us <= sc->limits.duration_max_us) return FB_OK;
    size_t old = scn__push_key(P, "duration");
    char a[32], b[32];
    whole_units(a, sizeof a, sc->duration_us);
    whole_units(b, sizeof b, sc->limits.duration_max_us);
    int rc = scn__fail(P,
                       "%s of simulated traffic exceeds limits.duration (%s); raise the limit to "
                       "run longer",
                       a, b);
    scn__pop(P, old);
    return rc;
}

static int expectation(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_scenario *sc = out;
    if (!cJSON_IsString(e))
        return scn__fail(P, "expected a string such as "
                            "\"tuned.success_rate >= 0.99\"");
    if (strlen(e->valuestring) >= SIM_EXPECT_LEN)
        return scn__fail(P, "longer than %d characters", SIM_EXPECT_LEN - 1);
    snprintf(sc->expect[i], SIM_EXPECT_LEN, "%s", e->valuestring);
    return FB_OK;
}

static int parse_expect(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    return scn__array(P, v, SIM_EXPECT_MAX, "expectations", expectation, sc, &sc->expect_count);
}

/* A brownout cuts the concurrency limit: without one it would do nothing. */
static int check_brownouts(pctx *P, const cJSON *root, sim_scenario *sc) {
    (void)root;
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        const sim_provider *pv = &sc->providers[p];
        for (uint32_t f = 0; f < pv->fault_count; f++) {
            if (pv->faults[f].kind != SIM_FAULT_BROWNOUT || pv->concurrency > 0) continue;
            size_t old = scn__push_key(P, "providers");
            scn__push_index(P, p);
            scn__push_key(P, "faults");
            scn__push_index(P, f);
            int rc = scn__fail(P,
                               "a brownout cuts capacity.concurrency, which provider \"%s\" does "
                               "not set",
                               pv->name);
            scn__pop(P, old);
            return rc;
        }
    }
    return FB_OK;
}

static int check_fleet(pctx *P, const cJSON *root, sim_scenario *sc) {
    (void)root;
    return scn__check_fleet(P, sc);
}

/* The top level (base: sim_scenario), in the order of the docs; top_steps reads it. */
const ld_section scn__top_section = {
    "top", "",
    (const ld_field[]){
        {"$schema", LD_CODE,
         .schema = "{\"type\": \"string\", \"description\": \"ignored by fusebox; lets editors "
                   "find this schema\"}",
         .unit = "string", .def_doc = "—",
         .doc = "ignored; lets editors find `docs/scenario.schema.json`"},
        {"name", LD_HOOK, LD_AT(sim_scenario, name),
         .schema = "{\"type\": \"string\", \"pattern\": "
                   "\"^(?!.*\\\\.\\\\.)[A-Za-z0-9][A-Za-z0-9._-]*$\", \"maxLength\": 63, "
                   "\"description\": \"a letter or digit, then letters, digits, '-', '_' and '.', "
                   "never \\\"..\\\" (so never '', '.', '..' or a path); names the output folder "
                   "out/<name>/\"}",
         .hook = parse_name, .flags = LD_F_REQUIRED | LD_F_PURE, .unit = "string (required)",
         .def_doc = "—",
         .doc = "a letter or digit, then letters, digits, `-`, `_`, `.`, never `..` (so never "
                "empty, `.`, `..`, hidden or a path); names the output folder `out/<name>/`"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—", .doc = "what the scenario shows (printed in the HTML report)"},
        {"incident", LD_HOOK,
         .schema = "{\"type\": \"string\", \"description\": \"the incident or pattern reproduced, "
                   "with its source\"}",
         .hook = parse_incident, .unit = "string", .def_doc = "—",
         .doc = "the incident or pattern it reproduces, with a source"},
        {"seed", LD_INTEGER, LD_AT(sim_scenario, seed), .lo = 0, .hi = 9007199254740991.0,
         .def = "1", .flags = LD_F_SET, .unit = "integer",
         .doc = "the run's seed; `--seed N` overrides it"},
        {"duration", LD_DURATION, LD_AT(sim_scenario, duration_us), .unit = "duration (required)",
         .def_doc = "—",
         .doc = "how long traffic arrives; the run then drains until every request has ended",
         .flags = LD_F_NEEDED},
        {"tick", LD_DURATION, LD_AT(sim_scenario, tick_us), .def = "\"1s\"", .flags = LD_F_SET,
         .doc = "time-series resolution; at most the `duration` (a last partial tick is cut at "
                "the end of traffic)"},
        {"traffic", LD_HOOK,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 16, \"items\": {\"$ref\": "
                   "\"#/$defs/class\"}}",
         .hook = scn__parse_traffic, .flags = LD_F_NAMED | LD_F_NEEDED, LD_SUB(&scn__class_section),
         .unit = "array (required)", .def_doc = "—", .doc = "traffic classes, below"},
        {"pods", LD_HOOK, LD_AT(sim_scenario, pods),
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         .hook = parse_pods, .unit = "object",
         .sub = (const ld_section *const[]){&scn__pods_section, NULL}, .def_doc = "see below",
         .doc = "the application serving the traffic"},
        {"providers", LD_HOOK,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 8, \"items\": {\"$ref\": "
                   "\"#/$defs/provider\"}}",
         .hook = scn__parse_providers, .flags = LD_F_NAMED | LD_F_NEEDED,
         LD_SUB(&scn__provider_section), .unit = "array (required)", .def_doc = "—",
         .doc = "LLM providers and tool APIs, at most 8"},
        {"policy", LD_CODE,
         .schema = "{\"oneOf\": [{\"$ref\": \"#/$defs/policy\"}, {\"$ref\": \"#/$defs/layered\"}]}",
         .sub = (const ld_section *const[]){&scn__layer_section, &scn__variant_section, NULL},
         .unit = "object", .def_doc = "`{}`",
         .doc = "the base policy; every variant is merged over it"},
        {"variants", LD_CODE,
         .schema = "{\"type\": \"object\", \"minProperties\": 1, \"maxProperties\": 16, "
                   "\"propertyNames\": {\"pattern\": \"^[A-Za-z_][A-Za-z0-9_-]{0,62}$\"}, "
                   "\"additionalProperties\": {\"oneOf\": [{\"$ref\": \"#/$defs/variant_policy\"}, "
                   "{\"$ref\": \"#/$defs/variant_layered\"}]}}",
         .flags = LD_F_NAMED,
         .sub = (const ld_section *const[]){&scn__layer_section, &scn__variant_section, NULL},
         .unit = "object", .def_doc = "one variant `default` = `policy`",
         .doc = "name → policy (merged over `policy`), at most 16"},
        {"slo", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         .hook = parse_slo, .sub = (const ld_section *const[]){&scn__slo_section, NULL},
         .unit = "object", .def_doc = "`{\"latency\": \"10s\"}`",
         .doc = "a request slower than this counts in the blast radius"},
        {"spillover", LD_HOOK, LD_AT(sim_scenario, spillover),
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         .hook = parse_spillover, .sub = (const ld_section *const[]){&scn__spillover_section, NULL},
         .unit = "object", .def_doc = "see [Spillover](#spillover)",
         .doc = "how \"back to baseline\" is judged"},
        {"limits", LD_HOOK, LD_AT(sim_scenario, limits),
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         .hook = parse_limits, .sub = (const ld_section *const[]){&scn__limits_section, NULL},
         .unit = "object", .def_doc = "see [Limits](#limits)",
         .doc = "caps that stop a run with an error"},
        {"expect", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 64, \"items\": {\"type\": \"string\", "
                   "\"maxLength\": 255, \"description\": \"an expectation for fusebox check, e.g. "
                   "\\\"tuned.success_rate >= 0.99\\\"\"}}",
         .hook = parse_expect, .unit = "array of strings", .def_doc = "`[]`",
         .doc = "assertions for `fusebox check` ([Expectations](#expectations))"},
        {"breaker_store", LD_HOOK,
         .schema =
             "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [], "
             "\"description\": \"the shared breakers' store (Redis): windows in which no pod can "
             "reach it; needs a variant with breaker.scope \\\"shared\\\"\", \"properties\": {}}",
         .hook = scn__parse_breaker_store, LD_SUB(&scn__breaker_store_section), .unit = "object",
         .def_doc = "store always reachable",
         .doc = "windows in which the shared breakers' store cannot be reached "
                "([breaker_store](#breaker_store))"},
        {"observed", LD_HOOK,
         .schema = "{\"type\": \"object\", \"description\": \"what the log of an imported incident "
                   "measured (fusebox import); fusebox run prints it beside the variant it names, "
                   "fusebox check compares the two (docs/scenario-format.md, observed)\", "
                   "\"additionalProperties\": false, \"required\": [], \"properties\": {}}",
         .hook = scn__parse_observed, LD_SUB(&scn__observed_section), .unit = "object",
         .def_doc = "—",
         .doc = "what the log of an imported incident measured, written by `fusebox import` "
                "([observed](#observed))"},
        {0}},
    NULL};

/*
 * The order the top level is read in: providers before what names them,
 * each check after what it needs. A step reads a key of scn__top_section
 * (`need`: it must be there) or runs a check; the first error stops it.
 */
typedef struct top_step {
    const char *key;
    bool need;
    int (*check)(pctx *P, const cJSON *root, sim_scenario *sc);
} top_step;

static const top_step top_steps[] = {
    {"name", false, NULL},
    {"incident", false, NULL},
    {"seed", false, NULL},
    {"duration", true, NULL},
    {"tick", false, NULL},
    {NULL, false, check_tick},
    {"providers", true, NULL},
    {"traffic", true, NULL},
    {"pods", false, NULL},
    {"slo", false, NULL},
    {"spillover", false, NULL},
    {NULL, false, check_spillover_hold},
    {"limits", false, NULL},
    {NULL, false, check_duration_limit},
    {"expect", false, NULL},
    {"breaker_store", false, NULL},
    {NULL, false, scn__parse_variants},
    {NULL, false, check_fleet},
    {NULL, false, check_brownouts},
    {"observed", false, NULL},
};

static int parse_top(pctx *P, const cJSON *root, sim_scenario *sc) {
    defaults(P, sc);
    scn__check_fields(P, root, &scn__top_section);
    /* explicit: a step reads what the steps before it set (the providers that later sections name,
     * the duration that ends them; the checks read whole sections), so none runs after an error */
    for (size_t i = 0; P->rc == FB_OK && i < sizeof top_steps / sizeof top_steps[0]; i++) {
        const top_step *s = &top_steps[i];
        if (s->check) {
            scn__keep(P, s->check(P, root, sc));
            continue;
        }
        if (s->need) scn__need_key(P, root, s->key);
        scn__read_field(P, root, &scn__top_section, s->key, sc);
    }
    return P->rc;
}

/* ---- loading ---- */

static int apply_sets(cJSON *root, const char *const *sets, size_t set_count, sim_error *err) {
    for (size_t i = 0; i < set_count; i++) {
        if (!cJSON_IsObject(root)) break; /* parse_top says what it is */
        int rc = scn__apply_set(root, sets[i], err);
        if (rc != FB_OK) return rc;
    }
    for (size_t i = 0; i < set_count && cJSON_IsObject(root); i++) {
        int rc = scn__check_set_context(root, sets[i], err);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

/* What the classes own (replayed arrival times, sessions' turns and think times) and the faults
   (recorded hits); also after a failed parse. */
static void free_classes(sim_scenario *sc) {
    for (uint32_t i = 0; i < SIM_CLASSES_MAX; i++) {
        free(sc->classes[i].replay_us);
        free(sc->classes[i].turns);
        free(sc->classes[i].think_rec_us);
        free(sc->classes[i].turn_at_us);
        free(sc->classes[i].retry_at_us);
        free(sc->classes[i].retry_at_first);
    }
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) /* and the faults' recorded hits */
        for (uint32_t f = 0; f < SIM_FAULTS_MAX; f++) free(sc->providers[p].faults[f].recorded);
}

int scn_parse(const char *text, size_t len, const char *file, const char *const *sets,
              size_t set_count, const uint64_t *seed_override, sim_scenario **out, sim_error *err) {
    return scn_parse_import(text, len, file, sets, set_count, seed_override, NULL, out, err);
}

int scn_parse_import(const char *text, size_t len, const char *file, const char *const *sets,
                     size_t set_count, const uint64_t *seed_override, const sim_import *imp,
                     sim_scenario **out, sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file ? file : "<scenario>");
    *out = NULL;
    cJSON *root = scn__parse_json(text, len, err);
    if (root == NULL) return FB_EPARSE;
    sim_scenario *sc = NULL;
    int rc = apply_sets(root, sets, set_count, err);
    if (rc != FB_OK) goto free_tree;
    sc = calloc(1, sizeof *sc);
    if (sc == NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        rc = FB_ENOMEM;
        goto free_tree;
    }
    snprintf(sc->file, sizeof sc->file, "%s", err->file);
    pctx P = {err, "", 0, false, sc, imp, FB_OK};
    rc = parse_top(&P, root, sc);
    if (rc != FB_OK) goto free_scenario;
    if (seed_override) {
        sc->seed = *seed_override;
        cJSON_DeleteItemFromObjectCaseSensitive(root, "seed");
        cJSON_AddNumberToObject(root, "seed", (double)*seed_override);
    }
    sc->json = root; /* echoed in the report, --set overrides included */
    *out = sc;
    return FB_OK;
free_scenario:
    free_classes(sc);
    free(sc);
free_tree:
    cJSON_Delete(root);
    return rc;
}

/* ---- every error in one pass ---- */

/*
 * The node a loader path names in the tree ("a.b[2].c"; keys may hold dots,
 * as variant names do), and in *parent the container holding it.
 */
static cJSON *at_path(cJSON *cur, const char *path, cJSON **parent) {
    if (*path == '\0') return cur;
    *parent = cur;
    if (*path == '[') {
        char *end;
        long i = strtol(path + 1, &end, 10);
        if (!cJSON_IsArray(cur) || end == path + 1 || *end != ']' || i < 0) return NULL;
        cJSON *e = cJSON_GetArrayItem(cur, (int)i);
        return e ? at_path(e, end + 1, parent) : NULL;
    }
    if (*path == '.') path++;
    if (!cJSON_IsObject(cur)) return NULL;
    for (cJSON *it = cur->child; it; it = it->next) {
        size_t k = strlen(it->string);
        if (strncmp(path, it->string, k) != 0 || (path[k] && path[k] != '.' && path[k] != '['))
            continue;
        *parent = cur;
        cJSON *found = at_path(it, path + k, parent);
        if (found) return found;
    }
    return NULL;
}

/* One pass of the loader over root; FB_OK, or the error in *err. */
static int check_once(const cJSON *root, const char *file, sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    sim_scenario *sc = calloc(1, sizeof *sc);
    if (sc == NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    pctx P = {err, "", 0, false, sc, NULL, FB_OK};
    int rc = parse_top(&P, root, sc);
    free_classes(sc);
    free(sc);
    return rc;
}

/* After an unknown key, take it out of the tree; false when the error is of another kind. */
static bool drop_unknown_key(cJSON *root, const sim_error *err) {
    if (strncmp(err->msg, "unknown key '", strlen("unknown key '")) != 0) return false;
    cJSON *parent = NULL;
    cJSON *node = at_path(root, err->path, &parent);
    /* variants.NAME.KEY that the variant does not have came from the policy merged under it */
    const char *rest = strncmp(err->path, "variants.", 9) == 0 ? strchr(err->path + 9, '.') : NULL;
    if (node == NULL && rest) {
        char policy[sizeof err->path];
        snprintf(policy, sizeof policy, "policy%s", rest);
        node = at_path(root, policy, &parent);
    }
    /* else the path names what is not in the document: stop there */
    if (node == NULL || node == root || !cJSON_IsObject(parent)) return false;
    cJSON_Delete(cJSON_DetachItemViaPointer(parent, node));
    return true;
}

int scn_check_all(const char *text, size_t len, const char *file, const char *const *sets,
                  size_t set_count, sim_errors *out) {
    memset(out, 0, sizeof *out);
    const char *name = file ? file : "<scenario>";
    sim_error *first = &out->e[0];
    snprintf(first->file, sizeof first->file, "%s", name);
    cJSON *root = scn__parse_json(text, len, first);
    int rc = root == NULL ? FB_EPARSE : apply_sets(root, sets, set_count, first);
    if (rc != FB_OK) {
        out->count = 1;
        cJSON_Delete(root);
        return rc;
    }
    int first_rc = FB_OK;
    for (;;) {
        sim_error err;
        int r = check_once(root, name, &err);
        if (r == FB_OK) break;
        if (out->count == SIM_ERRORS_MAX) {
            out->more = true;
            break;
        }
        if (out->count == 0) first_rc = r;
        out->e[out->count++] = err;
        if (!drop_unknown_key(root, &err)) break;
    }
    cJSON_Delete(root);
    return first_rc;
}

int scn_load(const char *file, const char *const *sets, size_t set_count,
             const uint64_t *seed_override, sim_scenario **out, sim_error *err) {
    return scn_load_import(file, sets, set_count, seed_override, NULL, out, err);
}

int scn_load_import(const char *file, const char *const *sets, size_t set_count,
                    const uint64_t *seed_override, const sim_import *imp, sim_scenario **out,
                    sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    *out = NULL;
    size_t n = 0;
    char *buf = util_read_file(file, SCENARIO_FILE_MAX, &n);
    if (buf == NULL) { /* the messages of the reader this replaced */
        int e = errno;
        if (e == ENOMEM)
            snprintf(err->msg, sizeof err->msg, "out of memory");
        else if (e == EFBIG)
            snprintf(err->msg, sizeof err->msg, "larger than %d MiB", SCENARIO_FILE_MAX >> 20);
        else if (e == EIO)
            snprintf(err->msg, sizeof err->msg, "read error");
        else
            snprintf(err->msg, sizeof err->msg, "cannot open: %s", strerror(e));
        return e == ENOMEM ? FB_ENOMEM : e == EFBIG ? FB_ECAP : FB_EIO;
    }
    int rc = scn_parse_import(buf, n, file, sets, set_count, seed_override, imp, out, err);
    free(buf);
    return rc;
}

void scn_free(sim_scenario *sc) {
    if (sc == NULL) return;
    cJSON_Delete((cJSON *)sc->json);
    free_classes(sc);
    free(sc);
}

void scn_error_format(const sim_error *err, char *buf, size_t len) {
    if (err->path[0])
        snprintf(buf, len, "%s: %s: %s", err->file, err->path, err->msg);
    else
        snprintf(buf, len, "%s: %s", err->file, err->msg);
}

/* ---- lookups ---- */

/* A layer with a concurrency_limit for some provider. */
static bool has_conclimit(const sim_layer *L) {
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++)
        if (L->per_provider[p].has_conclimit) return true;
    return false;
}

/* Does layer L ask for feature f? Every kind is named: a new one is a -Wswitch warning here. */
static bool layer_uses(const sim_layer *L, sim_feature f) {
    switch (f) {
    case SIM_FEATURE_CONCLIMIT:
        return has_conclimit(L);
    case SIM_FEATURE_HEDGING:
        return L->has_hedge;
    case SIM_FEATURE_POOL:
        return L->has_pool;
    case SIM_FEATURE_ALWAYS:
    case SIM_FEATURE_NETWORK:
    case SIM_FEATURE_AUTOSCALE:
    case SIM_FEATURE_RESUBMIT:
    case SIM_FEATURE_SERIAL:
    case SIM_FEATURE_PER_POD:
    case SIM_FEATURE_STORE_OUTAGE:
    case SIM_FEATURE_GATEWAY:
        return false; /* not a layer's: the providers, the classes or the fleet say */
    }
    return false; /* not a sim_feature */
}

/* Does traffic class c ask for fleet feature f (re-submissions, serial, per-pod sources)? */
static bool class_uses(const sim_class *c, sim_feature f) {
    switch (f) {
    case SIM_FEATURE_RESUBMIT:
        return c->resubmit.probability > 0;
    case SIM_FEATURE_SERIAL:
        return c->serial;
    case SIM_FEATURE_PER_POD:
        return c->source == SIM_SOURCE_PER_POD;
    case SIM_FEATURE_ALWAYS:
    case SIM_FEATURE_CONCLIMIT:
    case SIM_FEATURE_HEDGING:
    case SIM_FEATURE_POOL:
    case SIM_FEATURE_NETWORK:
    case SIM_FEATURE_AUTOSCALE:
    case SIM_FEATURE_STORE_OUTAGE:
    case SIM_FEATURE_GATEWAY:
        return false; /* not a class's: the layers, the providers or the fleet say */
    }
    return false; /* not a sim_feature */
}

static bool any_layer_uses(const sim_scenario *sc, sim_feature f) {
    for (uint32_t v = 0; v < sc->variant_count; v++)
        for (uint32_t l = 0; l < sc->variants[v].layer_count; l++)
            if (layer_uses(&sc->variants[v].layers[l], f)) return true;
    return false;
}

static bool any_class_uses(const sim_scenario *sc, sim_feature f) {
    for (uint32_t c = 0; c < sc->class_count; c++)
        if (class_uses(&sc->classes[c], f)) return true;
    return false;
}

bool scn_uses(const sim_scenario *sc, sim_feature f) {
    switch (f) {
    case SIM_FEATURE_ALWAYS:
        return true;
    case SIM_FEATURE_CONCLIMIT:
    case SIM_FEATURE_HEDGING:
    case SIM_FEATURE_POOL:
        return any_layer_uses(sc, f);
    case SIM_FEATURE_NETWORK:
        for (uint32_t p = 0; p < sc->provider_count; p++)
            if (sc->providers[p].has_network) return true;
        return false;
    case SIM_FEATURE_AUTOSCALE:
        for (uint32_t v = 0; v < sc->variant_count; v++)
            if (sc->variants[v].autoscale.on) return true;
        return false;
    case SIM_FEATURE_RESUBMIT:
    case SIM_FEATURE_SERIAL:
    case SIM_FEATURE_PER_POD:
        return any_class_uses(sc, f);
    case SIM_FEATURE_STORE_OUTAGE:
        return sc->store_outage_count > 0;
    case SIM_FEATURE_GATEWAY:
        for (uint32_t v = 0; v < sc->variant_count; v++)
            if (sc->variants[v].gateway.replicas > 0) return true;
        return false;
    }
    return false; /* not a sim_feature */
}

int scn_provider(const sim_scenario *sc, const char *name) {
    for (uint32_t i = 0; i < sc->provider_count; i++)
        if (strcmp(sc->providers[i].name, name) == 0) return (int)i;
    return -1;
}

int scn_variant(const sim_scenario *sc, const char *name) {
    for (uint32_t i = 0; i < sc->variant_count; i++)
        if (strcmp(sc->variants[i].name, name) == 0) return (int)i;
    return -1;
}

static bool status_in(const int *list, uint32_t n, int status) {
    for (uint32_t i = 0; i < n; i++)
        if (list[i] == status) return true;
    return false;
}

/* Is the reply in a list: its outcome's bit (or the connection bit), a status, or >= from? */
static bool listed(uint32_t outcomes, const int *statuses, uint32_t n, int from, fb_outcome o,
                   const fb_reply *rep) {
    bool conn = rep->transport == FB_TRANSPORT_CONNECT || rep->transport == FB_TRANSPORT_RESET ||
                rep->transport == FB_TRANSPORT_OTHER;
    return ((outcomes >> o) & 1u) || (conn && (outcomes & SIM_ON_CONNECTION)) ||
           status_in(statuses, n, rep->status) || (from > 0 && rep->status >= from);
}

/* Does a preset's rule match the reply from provider p? */
static bool rule_matches(const sim_status_rule *r, const fb_reply *rep, fb_outcome o, uint32_t p) {
    return (r->status == 0 || r->status == rep->status) &&
           (r->outcome < 0 || r->outcome == (int8_t)o) &&
           (r->transport < 0 || r->transport == (int8_t)rep->transport) &&
           (r->providers == 0 || (p < 8 && ((r->providers >> p) & 1u)));
}

/* The first of the layer's rules that matches replaces what it names (sim_status_rule). */
static void apply_rules(const sim_layer *cfg, const fb_reply *rep, uint32_t p, fb_class *c) {
    if (c->outcome == FB_OUT_SUCCESS) return; /* rules read failures */
    for (uint32_t i = 0; i < cfg->rule_count; i++) {
        const sim_status_rule *r = &cfg->rules[i];
        if (!rule_matches(r, rep, c->outcome, p)) continue;
        if (r->retry >= 0) c->retryable = r->retry > 0;
        if (r->fallback >= 0) c->may_fallback = r->fallback > 0;
        if (r->effect >= 0) c->effect = (fb_effect)r->effect;
        c->trip = (fb_trip)r->trip;
        c->failure_limit = r->failure_limit;
        c->attempts = r->attempts;
        return;
    }
}

fb_class scn_layer_classify(const sim_layer *L, const fb_classifier *cl, const fb_reply *rep,
                            uint32_t provider) {
    fb_class c = fb_classify(cl, rep);
    if (L->rule_count > 0) apply_rules(L, rep, provider, &c);
    bool failed = c.outcome != FB_OUT_SUCCESS;
    if (L->has_retry_on)
        c.retryable = failed && listed(L->retry_on_outcomes, L->retry_on_statuses,
                                       L->retry_on_count, L->retry_on_status_from, c.outcome, rep);
    if (status_in(L->no_retry_statuses, L->no_retry_count, rep->status)) c.retryable = false;
    if (L->has_fallback_on)
        c.may_fallback =
            failed && listed(L->fallback_on_outcomes, L->fallback_on_statuses, L->fallback_on_count,
                             L->fallback_on_status_from, c.outcome, rep);
    return c;
}

bool scn_layer_classifier_only(const sim_layer *L) {
    return L->rule_count == 0 && !L->has_retry_on && L->no_retry_count == 0 && !L->has_fallback_on;
}

const sim_stack *scn_policy_stack(const sim_policy *pol, uint32_t cls) {
    return cls < SIM_CLASSES_MAX && pol->class_stack[cls].depth > 0 ? &pol->class_stack[cls]
                                                                    : &pol->stack;
}

const sim_layer *scn_policy_router(const sim_policy *pol) {
    return &pol->layers[pol->stack.layer[pol->stack.router]];
}

const sim_layer *scn_policy_breaker(const sim_policy *pol, uint32_t provider) {
    const sim_stack *st = &pol->stack;
    for (uint32_t i = st->router; i < st->depth; i++) {
        const sim_layer *L = &pol->layers[st->layer[i]];
        if (provider < SIM_PROVIDERS_MAX && L->per_provider[provider].has_breaker) return L;
    }
    return NULL;
}
