/*
 * load_providers.c - the "providers" section: each provider's latency,
 * capacity, price and fault timeline; the fault timeline alone, for the mock
 * (scn_faults_parse); and references to providers by name, which traffic
 * and policies make once the providers are read. The keys are the tables
 * below (loadint.h: ld_section); what holds between keys is checked by code.
 */
#include "scenario/loadint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hooks ---- */

/* A hook's row that reads into the whole struct (the provider), not one member. */
#define WHOLE(T) .offset = 0, .size = sizeof(T)

/* An HTTP status that is an error (4xx, 5xx): anything else would answer as a success. */
static int parse_error_status(pctx *P, const cJSON *v, void *out) {
    uint64_t s = 0; /* stays 0 unless read: below LD_STATUS_MIN, and the error stands */
    scn__get_uint_value(P, v, &s, 100, LD_STATUS_MAX);
    if (s < LD_STATUS_MIN)
        return scn__fail(P, "%d is not an error status (use %d to %d)", (int)s, LD_STATUS_MIN,
                         LD_STATUS_MAX);
    *(int *)out = (int)s;
    return FB_OK;
}

/*
 * A fault's retry_fraction: a share in [0, 1] for every retry, or a list of 1 to
 * SIM_FAULT_RETRY_SHARES of them, one per retry (the request's second attempt, its third,
 * ...), the last for every later one (out: sim_fault_retry).
 */
static int parse_retry_fraction(pctx *P, const cJSON *v, void *out) {
    sim_fault_retry *r = out;
    if (!cJSON_IsArray(v)) {
        if (scn__get_number_value(P, v, &r->share[0], 0, 1) == FB_OK) r->n = 1;
        return P->rc;
    }
    int n = cJSON_GetArraySize(v);
    if (n < 1 || n > SIM_FAULT_RETRY_SHARES)
        return scn__fail(P,
                         "expected a number or a list of 1 to %d numbers (one per retry), "
                         "got a list of %d",
                         SIM_FAULT_RETRY_SHARES, n);
    uint8_t i = 0;
    for (const cJSON *x = v->child; x; x = x->next, i++) {
        size_t o = scn__push_index(P, i);
        scn__get_number_value(P, x, &r->share[i], 0, 1);
        scn__pop(P, o);
    }
    if (P->rc == FB_OK) r->n = i;
    return P->rc;
}

/* An even fault's recorded hits: 1 to 1 + SIM_FAULT_RETRY_SHARES strings of 0 and 1 (one per
   class even counts apart), read whole before the block is allocated. */
#define RECORDED_MAX 1000000
static int parse_recorded(pctx *P, const cJSON *v, void *out) {
    sim_fault *f = out;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n < 1 || n > 1 + SIM_FAULT_RETRY_SHARES)
        return scn__fail(P,
                         "expected a list of 1 to %d strings of 0 and 1 (the attempts' hits, "
                         "first attempts' then each retry share's)",
                         1 + SIM_FAULT_RETRY_SHARES);
    size_t total = 0;
    uint32_t i = 0;
    for (const cJSON *x = v->child; x; x = x->next, i++) {
        size_t o = scn__push_index(P, i), len = cJSON_IsString(x) ? strlen(x->valuestring) : 0;
        if (!cJSON_IsString(x) || strspn(x->valuestring, "01") != len)
            scn__fail(P, "expected a string of 0 and 1 (one per attempt: 1 a hit)");
        else if (len > RECORDED_MAX)
            scn__fail(P, "%zu attempts recorded: at most %d", len, RECORDED_MAX);
        scn__pop(P, o);
        if (P->rc != FB_OK) return P->rc;
        f->recorded_len[i] = (uint32_t)len;
        total += len;
    }
    f->recorded = malloc(total + 1);
    if (f->recorded == NULL) return scn__fail(P, "out of memory");
    size_t at = 0;
    for (const cJSON *x = v->child; x; x = x->next)
        for (const char *c = x->valuestring; *c; c++) f->recorded[at++] = *c == '1';
    return FB_OK;
}

/*
 * A slow fault's factor: a number in [1, 1000], or a distribution of numbers (count_dist)
 * whose median is (its draws are held to [1, 1000]: scenario/fault.h).
 */
static int parse_factor(pctx *P, const cJSON *v, void *out) {
    sim_dist *d = out;
    if (cJSON_IsNumber(v)) {
        double x = 0;
        if (scn__get_number_value(P, v, &x, 1, SIM_FAULT_FACTOR_MAX) == FB_OK)
            *d = scn__dist_const(x); /* explicit: a number read */
        return P->rc;
    }
    scn__get_dist_value(P, v, false, d);
    double median = d->a; /* constant, lognormal, empirical (its weighted median) */
    if (d->kind == SIM_DIST_UNIFORM) median = (d->a + d->b) / 2;
    if (d->kind == SIM_DIST_EXPONENTIAL) median = d->a * log(2.0);
    if (!(median >= 1 && median <= SIM_FAULT_FACTOR_MAX))
        scn__fail(P, "a factor's median must be in [1, 1000] (got %g)", median);
    return P->rc;
}

/* The keys of s, with every key of `required` (or NULL); then each read into base. */
static int required_fields(pctx *P, const cJSON *v, const ld_section *s,
                           const char *const *required, void *base) {
    scn__check_fields(P, v, s);
    for (size_t i = 0; required && required[i]; i++) scn__need_key(P, v, required[i]);
    scn__read_fields(P, v, s, base);
    return P->rc;
}

/* ---- faults: the body of each kind (base: sim_fault) ---- */

static const char *const error_kinds[] = {
    "none", "context_length", "content_policy", "rate_limit", "overloaded", "other", NULL};
static const char *const midstream_modes[] = {"error", "cut", "truncate", NULL};
static const char *const samplings[] = {"draw", "even", NULL};

_Static_assert(SIM_FAULT_RETRY_SHARES == 8, "retry_fraction's schema says maxItems 8");

/* The rows several kinds share. */
// clang-format off
#define FAULT_FRACTION                                                                             \
    {"fraction", LD_NUMBER, LD_AT(sim_fault, fraction), .lo = 0, .hi = 1, .def = "1",              \
     .doc = "the share of arriving attempts it applies to"}
#define FAULT_RETRY_FRACTION                                                                       \
    {"retry_fraction", LD_HOOK, LD_AT(sim_fault, retry_fraction), .hook = parse_retry_fraction,   \
     .schema = "{\"oneOf\": [{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1}, "            \
               "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 8, \"items\": "             \
               "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1}}]}",                      \
     .flags = LD_F_PURE, .unit = "number in [0, 1], or a list of 1 to 8",                          \
     .def_doc = "`fraction`",                                                                      \
     .doc = "the share of retries (attempts after their request's first) it applies to, when "   \
            "retries meet it apart from first attempts; a list: the second attempt's, the "       \
            "third's, ..., the last for every later one; `even` counts each apart"}
#define FAULT_SAMPLING                                                                             \
    {"sampling", LD_ENUM, LD_AT(sim_fault, sampling), .names = samplings, .def = "\"draw\"",       \
     .doc = "how `fraction` is realised: `draw` = each attempt hits by a draw of its own; "       \
            "`even` = the window's n attempts get floor(n × fraction) or ceil(n × fraction) "     \
            "hits, spread evenly (a seeded offset)"}
#define FAULT_RECORDED                                                                             \
    {"recorded", LD_HOOK, .offset = 0, .size = sizeof(sim_fault), .hook = parse_recorded,         \
     .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 9, \"items\": "            \
               "{\"type\": \"string\", \"pattern\": \"^[01]*$\", \"maxLength\": 1000000}}",    \
     .unit = "list of strings of 0 and 1", .def_doc = "none",                                      \
     .doc = "`even` only: a log's own hits, attempt by attempt (1 a hit), per class `even` "      \
            "counts apart (first attempts, or every attempt without `retry_fraction`; then "      \
            "each retry share's); the k-th attempt of a class goes as recorded, those after the " \
            "record evenly (fusebox import writes them)"}
#define FAULT_RETRY_AFTER                                                                          \
    {"retry_after", LD_DURATION0, LD_AT(sim_fault, retry_after_us), .def_doc = "none",            \
     .doc = "the Retry-After its answers carry"}
#define FAULT_LATENCY                                                                              \
    {"latency", LD_HOOK, LD_AT(sim_fault, latency),                                                \
     .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"description\": \"how long its answers "   \
               "take (default: the provider's latency.error)\"}",                                  \
     .hook = scn__duration_dist, .unit = "distribution (duration)", .flags = LD_F_PURE,          \
     LD_SUB(&scn__duration_dist_section), .def_doc = "`latency.error`",                          \
     .doc = "how long its answers take"}
#define FAULT_STATUS(S)                                                                            \
    {"status", LD_HOOK, LD_AT(sim_fault, status), .hook = parse_error_status, .def = #S,          \
     .schema = "{\"$ref\": \"#/$defs/status\", \"default\": " #S "}",                         \
     .flags = LD_F_SET | LD_F_PURE,                                                                \
     .unit = LD_STATUS_UNIT, .doc = "the answer's status"}
// clang-format on

const ld_section scn__fault_outage_section = {
    "faults", "/$defs/fault/properties/outage",
    (const ld_field[]){FAULT_STATUS(503),
                       {"error", LD_ENUM, LD_AT(sim_fault, error_kind), .names = error_kinds,
                        .def = "\"none\"",
                        .doc = "the provider's error type in the answer (`none`: the status's "
                               "own)"},
                       FAULT_FRACTION,
                       FAULT_RETRY_FRACTION,
                       FAULT_SAMPLING,
                       FAULT_RECORDED,
                       FAULT_RETRY_AFTER,
                       FAULT_LATENCY,
                       {0}},
    "outage."};

const ld_section scn__fault_rate_limit_section = {"faults", "/$defs/fault/properties/rate_limit",
                                                  (const ld_field[]){FAULT_STATUS(429),
                                                                     FAULT_FRACTION,
                                                                     FAULT_RETRY_FRACTION,
                                                                     FAULT_SAMPLING,
                                                                     FAULT_RECORDED,
                                                                     FAULT_RETRY_AFTER,
                                                                     FAULT_LATENCY,
                                                                     {0}},
                                                  "rate_limit."};

/* hang, reset and policy: the same keys, at one place of the schema. */
static const ld_field fraction_only[] = {
    FAULT_FRACTION, FAULT_RETRY_FRACTION, FAULT_SAMPLING, FAULT_RECORDED, {0}};
const ld_section scn__fault_hang_section = {"faults", "/$defs/fault_fraction_only", fraction_only,
                                            "hang."};
const ld_section scn__fault_reset_section = {"faults", "/$defs/fault_fraction_only", fraction_only,
                                             "reset."};
const ld_section scn__fault_policy_section = {"faults", "/$defs/fault_fraction_only", fraction_only,
                                              "policy."};

const ld_section scn__fault_slow_section = {
    "faults", "/$defs/fault/properties/slow",
    (const ld_field[]){
        {"factor", LD_HOOK, LD_AT(sim_fault, factor),
         .schema =
             "{\"description\": \"the latency multiplier: a number, or a distribution drawn per "
             "attempt (its median in [1, 1000]; a draw below 1 counts as 1, above 1000 as 1000)\", "
             "\"oneOf\": [{\"type\": \"number\", \"minimum\": 1, \"maximum\": 1000}, {\"allOf\": "
             "[{\"$ref\": \"#/$defs/count_dist\"}, {\"type\": \"object\"}]}]}",
         .hook = parse_factor, .unit = "number in [1, 1000], or a distribution (of numbers)",
         .def_doc = "required",
         .doc = "the latency multiplier; a distribution is drawn per attempt "
                "(a draw below 1 counts as 1, above 1000 as 1000)",
         .flags = LD_F_NEEDED | LD_F_PURE, LD_SUB(&scn__count_dist_section)},
        {"delay", LD_HOOK, LD_AT(sim_fault, delay),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"0s\", \"description\": "
                   "\"added before the first token, after the factor (a wait the answer did not "
                   "spend at the provider); a distribution is drawn per attempt\"}",
         .hook = scn__duration_dist, .unit = "distribution (duration)", .def = "\"0s\"",
         .flags = LD_F_PURE, LD_SUB(&scn__duration_dist_section),
         .doc = "added before the first token, after the factor (a wait the answer did not spend "
                "at the provider); a distribution is drawn per attempt"},
        FAULT_FRACTION,
        FAULT_RETRY_FRACTION,
        FAULT_SAMPLING,
        {0}},
    "slow."};

const ld_section scn__fault_brownout_section = {
    "faults", "/$defs/fault/properties/brownout",
    (const ld_field[]){{"capacity", LD_NUMBER, LD_AT(sim_fault, capacity), .lo = 0, .hi = 1,
                        .def_doc = "required", .doc = "the share of the provider's slots left",
                        .flags = LD_F_NEEDED},
                       {0}},
    "brownout."};

const ld_section scn__fault_midstream_section = {
    "faults", "/$defs/fault/properties/midstream",
    (const ld_field[]){
        {"after_tokens", LD_INTEGER, LD_AT(sim_fault, after_tokens), .lo = 1, .hi = 10000000,
         .def_doc = "required", .doc = "the output tokens sent before the response fails",
         .flags = LD_F_NEEDED},
        {"mode", LD_ENUM, LD_AT(sim_fault, mode), .names = midstream_modes, .def = "\"error\"",
         .doc = "`error` = an in-band error event (like a 529), `cut` = a connection reset, "
                "`truncate` = a clean end without the terminator"},
        FAULT_FRACTION,
        FAULT_RETRY_FRACTION,
        FAULT_SAMPLING,
        {0}},
    "midstream."};

const ld_section scn__fault_flap_section = {
    "faults", "/$defs/fault/properties/flap",
    (const ld_field[]){{"period", LD_DURATION, LD_AT(sim_fault, period_us), .def_doc = "required",
                        .doc = "one down half and one up half", .flags = LD_F_NEEDED},
                       FAULT_STATUS(503),
                       FAULT_RETRY_AFTER,
                       {0}},
    "flap."};

/* Each kind's keys, and those it requires (sim_fault_kind order). */
static const struct {
    const ld_section *keys;
    const char *required[2];
} kind_keys[SIM_FAULT_KIND_COUNT] = {
    [SIM_FAULT_OUTAGE] = {&scn__fault_outage_section, {NULL}},
    [SIM_FAULT_RATE_LIMIT] = {&scn__fault_rate_limit_section, {NULL}},
    [SIM_FAULT_HANG] = {&scn__fault_hang_section, {NULL}},
    [SIM_FAULT_SLOW] = {&scn__fault_slow_section, {"factor", NULL}},
    [SIM_FAULT_BROWNOUT] = {&scn__fault_brownout_section, {"capacity", NULL}},
    [SIM_FAULT_MIDSTREAM] = {&scn__fault_midstream_section, {"after_tokens", NULL}},
    [SIM_FAULT_RESET] = {&scn__fault_reset_section, {NULL}},
    [SIM_FAULT_POLICY] = {&scn__fault_policy_section, {NULL}},
    [SIM_FAULT_FLAP] = {&scn__fault_flap_section, {"period", NULL}},
};

static int parse_fault_body(pctx *P, const cJSON *b, sim_fault *f) {
    int rc = scn__need_object(P, b);
    if (rc != FB_OK) return rc;
    /* what a kind without the key holds (the engine reads them for every kind) */
    f->fraction = 1.0;
    f->retry_fraction.n = 0; /* none: `fraction` for every attempt */
    f->retry_after_us = FB_TIME_NONE;
    f->factor = scn__dist_const(1.0);
    f->delay = scn__dist_const(0.0);
    f->latency = scn__dist_const(-1.0); /* none of its own (scn_fault_latency) */
    f->capacity = 1.0;
    required_fields(P, b, kind_keys[f->kind].keys, kind_keys[f->kind].required, f);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(b, "recorded");
    if (P->timing_optional && rec) { /* the caller's array: nothing of it is freed */
        free(f->recorded);
        f->recorded = NULL;
        return scn__fail(P, "\"recorded\" hits belong to a scenario's fault, not a fault script");
    }
    if (P->rc != FB_OK || rec == NULL) return P->rc;
    int n = cJSON_GetArraySize(rec), most = 1 + f->retry_fraction.n;
    if (f->sampling != SIM_SAMPLING_EVEN)
        return scn__fail(P, "\"recorded\" hits need \"sampling\": \"even\"");
    if (n > most)
        return scn__fail(P,
                         "\"recorded\" has %d lists of hits; the fault counts %d class%s apart "
                         "(first attempts, then one per retry_fraction share)",
                         n, most, most == 1 ? "" : "es");
    return FB_OK;
}

/* ---- a fault: {"at", "for", KIND: {...}} ---- */

#define FAULT_KIND(K, SEC, DOC)                                                                    \
    {                                                                                              \
        K, LD_CODE, LD_SUB(SEC),                                                                   \
            .schema = "{\"type\": \"object\", \"additionalProperties\": false, "                   \
                      "\"required\": [], \"properties\": {}}",                                     \
            .unit = "object", .doc = DOC                                                           \
    }
/* hang, reset and policy: a share of the attempts, nothing else */
#define FAULT_SHARE(K, SEC, DOC)                                                                   \
    {                                                                                              \
        K, LD_CODE, LD_SUB(SEC), .schema = "{\"$ref\": \"#/$defs/fault_fraction_only\"}",          \
                                 .unit = "object", .doc = DOC                                      \
    }

/* A fault (base: sim_fault): its kind is the one key besides at, for and description. */
const ld_section scn__fault_section = {
    "faults", "/$defs/fault",
    (const ld_field[]){
        {"at", LD_DURATION0, LD_AT(sim_fault, at_us),
         .def_doc = "required (a `--faults` file: `0`)",
         .doc = "the start; it must be before the end of traffic (`duration`)",
         .flags = LD_F_NEEDED},
        {"for", LD_DURATION, LD_AT(sim_fault, for_us),
         .def_doc = "required (a `--faults` file: to the end)",
         .doc = "how long it lasts: it applies to attempts that arrive at `at` <= t < `at` + `for`",
         .flags = LD_F_NEEDED},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—"},
        FAULT_KIND("outage", &scn__fault_outage_section, "answers `status` after `latency.error`"),
        FAULT_KIND("rate_limit", &scn__fault_rate_limit_section,
                   "a 429 storm, with or without Retry-After"),
        FAULT_SHARE("hang", &scn__fault_hang_section,
                    "no answer at all: only the client's attempt timeout or the pod's "
                    "request timeout ends it"),
        FAULT_KIND("slow", &scn__fault_slow_section, "latency (TTFT and per token) × `factor`"),
        FAULT_KIND("brownout", &scn__fault_brownout_section,
                   "concurrency cut to the share `capacity` (needs `capacity.concurrency`)"),
        FAULT_KIND("midstream", &scn__fault_midstream_section,
                   "the response fails after `after_tokens` output tokens, as `mode` says"),
        FAULT_SHARE("reset", &scn__fault_reset_section, "a connection reset before any response"),
        FAULT_SHARE("policy", &scn__fault_policy_section, "a 400 content-policy rejection"),
        FAULT_KIND(
            "flap", &scn__fault_flap_section,
            "down (answers `status`) for the first half of every `period`, up for the second"),
        {0}},
    NULL};

/* The one member of v that names a kind (into *kind and f->kind). */
static int fault_kind(pctx *P, const cJSON *v, const cJSON **kind, sim_fault *f) {
    for (const cJSON *it = v->child; it; it = it->next) {
        if (strcmp(it->string, "at") == 0 || strcmp(it->string, "for") == 0 ||
            strcmp(it->string, "description") == 0)
            continue;
        int k = -1;
        for (int i = 0; i < SIM_FAULT_KIND_COUNT; i++)
            if (strcmp(it->string, scn_fault_kind_name((sim_fault_kind)i)) == 0) k = i;
        if (k < 0) return scn__check_fields(P, v, &scn__fault_section);
        if (*kind) {
            size_t old = scn__push_key(P, it->string);
            int rc = scn__fail(P, "a fault has exactly one kind; found '%s' and '%s'",
                               (*kind)->string, it->string);
            scn__pop(P, old);
            return rc;
        }
        *kind = it;
        f->kind = (sim_fault_kind)k;
    }
    if (*kind == NULL)
        return scn__fail(P, "a fault needs one of: outage, rate_limit, hang, slow, brownout, "
                            "midstream, reset, policy, flap");
    return scn__check_fields(P, v, &scn__fault_section); /* its "description" a string */
}

static int parse_fault(pctx *P, const cJSON *v, sim_fault *f) {
    const cJSON *kind = NULL;
    /* explicit: fault_kind walks an object's members, and kind is read below */
    if (scn__need_object(P, v) != FB_OK || fault_kind(P, v, &kind, f) != FB_OK) return P->rc;
    if (P->timing_optional) {
        f->at_us = 0;
        f->for_us = FB_TIME_MAX;
    } else {
        scn__need_key(P, v, "at");
        scn__need_key(P, v, "for");
    }
    scn__read_fields(P, v, &scn__fault_section, f);
    if (P->sc && f->at_us >= P->sc->duration_us)
        scn__fail_past_end(P, "at", "the fault", f->at_us, P->sc->duration_us);
    size_t old = scn__push_key(P, kind->string);
    parse_fault_body(P, kind, f);
    scn__pop(P, old);
    return P->rc;
}

static int fault_item(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_fault *faults = out;
    return parse_fault(P, e, &faults[i]);
}

static int parse_faults(pctx *P, const cJSON *v, void *out) {
    sim_provider *p = out;
    return scn__array(P, v, SIM_FAULTS_MAX, "faults per provider", fault_item, p->faults,
                      &p->fault_count);
}

/* ---- a provider's objects (base: sim_provider) ---- */

/* "latency.load": the share of the base latency each attempt in service (or waiting) adds. */
const ld_section scn__latency_load_section = {
    "providers", "/$defs/provider/properties/latency/properties/load",
    (const ld_field[]){
        {"in_service", LD_NUMBER, LD_AT(sim_provider, load_in_service), .lo = 0, .hi = 100,
         .def = "0",
         .doc = "share of the latency added per other attempt in service when an attempt starts "
                "(`0.01`: 1% each)"},
        {"queued", LD_NUMBER, LD_AT(sim_provider, load_queued), .lo = 0, .hi = 100, .def = "0",
         .doc = "share of the latency added per attempt waiting in the queue when it starts; "
                "needs `capacity.concurrency`"},
        {0}},
    "latency.load."};

static int parse_load(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__latency_load_section, out);
}

const ld_section scn__latency_section = {
    "providers", "/$defs/provider/properties/latency",
    (const ld_field[]){
        {"ttft", LD_HOOK, LD_AT(sim_provider, ttft_us),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"500ms\"}",
         .hook = scn__duration_dist, .def = "\"500ms\"", .flags = LD_F_SET | LD_F_PURE,
         LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
         .doc = "time to first token (a tool's whole latency)"},
        {"per_output_token", LD_DURATION0, LD_AT(sim_provider, per_token_us), .def = "\"0s\"",
         .doc = "added per output token"},
        {"error", LD_HOOK, LD_AT(sim_provider, error_latency_us),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"50ms\"}",
         .hook = scn__duration_dist, .def = "\"50ms\"", .flags = LD_F_SET | LD_F_PURE,
         LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
         .doc = "how long an error answer (5xx, 429, 400, reset) takes"},
        {"load", LD_HOOK,
         .schema = "{\"description\": \"latency x (1 + in_service x other attempts in service + "
                   "queued x attempts waiting), counted when an attempt starts\", \"type\": "
                   "\"object\", \"additionalProperties\": false, \"properties\": {}}",
         WHOLE(sim_provider), .hook = parse_load, LD_SUB(&scn__latency_load_section),
         .unit = "`{\"in_service\": F, \"queued\": F}`", .def_doc = "off",
         .doc = "latency × (1 + `in_service` × other attempts in service + `queued` × attempts "
                "waiting), counted when an attempt starts (below)"},
        {0}},
    "latency."};

static int parse_latency(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__latency_section, out);
}

/* "capacity.efficiency": {"queue_above": N, "share": F}, the slots left while overloaded. */
const ld_section scn__efficiency_section = {
    "providers", "/$defs/provider/properties/capacity/properties/efficiency",
    (const ld_field[]){
        {"queue_above", LD_INTEGER, LD_AT(sim_provider, efficiency_queue_above), .lo = 0,
         .hi = 100000000, .def_doc = "required",
         .doc = "the queue length above which slots are lost; below `capacity.queue`",
         .flags = LD_F_NEEDED},
        /* 1: no slot lost, which is what a provider without "efficiency" has */
        {"share", LD_NUMBER, LD_AT(sim_provider, efficiency_share), .lo = 0.001, .hi = 1,
         .def = "1", .flags = LD_F_SET | LD_F_NEEDED, .def_doc = "required",
         .doc = "the share of the slots that serve while the queue is longer"},
        {0}},
    "capacity.efficiency."};

static int parse_efficiency(pctx *P, const cJSON *v, void *out) {
    static const char *const required[] = {"queue_above", "share", NULL};
    return required_fields(P, v, &scn__efficiency_section, required, out);
}

/* "capacity.codel": {"target": D, "interval": D}, RFC 8289's two parameters. */
const ld_section scn__codel_section = {
    "providers", "/$defs/provider/properties/capacity/properties/codel",
    (const ld_field[]){
        {"target", LD_DURATION, LD_AT(sim_provider, codel_target_us), .def_doc = "required",
         .doc = "the queueing delay CoDel aims at", .flags = LD_F_NEEDED},
        {"interval", LD_DURATION, LD_AT(sim_provider, codel_interval_us), .def_doc = "required",
         .doc = "how long the delay stays at or above `target` before the head "
                "is dropped",
         .flags = LD_F_NEEDED},
        {0}},
    "capacity.codel."};

static int parse_codel(pctx *P, const cJSON *v, void *out) {
    static const char *const required[] = {"target", "interval", NULL};
    return required_fields(P, v, &scn__codel_section, required, out);
}

static const char *const disciplines[] = {"fifo", "lifo", "drop_expired", "codel", NULL};

const ld_section scn__capacity_section = {
    "providers", "/$defs/provider/properties/capacity",
    (const ld_field[]){
        {"concurrency", LD_INTEGER, LD_AT(sim_provider, concurrency), .lo = 0, .hi = 10000000,
         .def = "0", .def_doc = "`0` (unlimited)", .doc = "attempts served at once"},
        {"queue", LD_INTEGER, LD_AT(sim_provider, queue), .lo = 0, .hi = 100000000, .def = "1000",
         .flags = LD_F_SET,
         .doc = "attempts waiting for a slot; beyond it the provider answers `overload_status`"},
        {"rpm", LD_INTEGER, LD_AT(sim_provider, rpm), .lo = 0, .hi = 1000000000, .def = "0",
         .def_doc = "`0` (unlimited)", .doc = "requests per minute (token bucket); over it: 429"},
        {"tpm", LD_INTEGER, LD_AT(sim_provider, tpm), .lo = 0, .hi = (double)LD_RATE_PER_MIN_MAX,
         .def = "0", .def_doc = "`0` (unlimited)",
         .doc = "tokens (prompt + completion) per minute; over it: 429"},
        {"overload_status", LD_HOOK, LD_AT(sim_provider, overload_status),
         .schema = "{\"$ref\": \"#/$defs/status\", \"default\": 503}", .hook = parse_error_status,
         .def = "503", .flags = LD_F_SET | LD_F_PURE, .unit = LD_STATUS_UNIT,
         .doc = "the answer when the queue is full, or to an attempt the queue drops: Anthropic "
                "`529` (`overloaded_error`), OpenAI `429` (`rate_limit`) or `503`"},
        {"retry_after", LD_BOOL, LD_AT(sim_provider, limit_retry_after), .def = "true",
         .flags = LD_F_SET,
         .doc = "capacity 429s carry a Retry-After equal to the bucket's wait, rounded up to "
                "whole seconds"},
        {"discipline", LD_ENUM, LD_AT(sim_provider, discipline), .names = disciplines,
         .def = "\"fifo\"",
         .doc = "which waiting attempt a freed slot serves (below); needs `capacity.concurrency`"},
        {"codel", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [], "
                   "\"properties\": {}}",
         WHOLE(sim_provider), .hook = parse_codel, LD_SUB(&scn__codel_section),
         .unit = "`{\"target\": D, \"interval\": D}`", .def_doc = "—",
         .doc = "CoDel's delay target and interval; required with `discipline: \"codel\"`, an "
                "error otherwise"},
        {"efficiency", LD_HOOK,
         .schema = "{\"description\": \"while more than queue_above attempts wait, only share of "
                   "the slots serve\", \"type\": \"object\", \"additionalProperties\": false, "
                   "\"required\": [], \"properties\": {}}",
         WHOLE(sim_provider), .hook = parse_efficiency, LD_SUB(&scn__efficiency_section),
         .unit = "`{\"queue_above\": N, \"share\": F}`", .def_doc = "off",
         .doc = "while more than `queue_above` attempts wait, only `share` of the slots serve; "
                "needs `capacity.concurrency`"},
        {0}},
    "capacity."};

static int parse_capacity(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__capacity_section, out);
}

/* Fail at SECTION.KEY of the provider being read. */
static int fail_at(pctx *P, const char *section, const char *key, const char *msg) {
    size_t old = scn__push_key(P, section);
    scn__push_key(P, key);
    int rc = scn__fail(P, "%s", msg);
    scn__pop(P, old);
    return rc;
}

/* A queue setting that could never take effect is an error, not a silent no-op. */
static int capacity_consistent(pctx *P, const cJSON *v, const sim_provider *p) {
    const cJSON *cap = scn__field(v, "capacity");
    bool codel = cap && scn__field(cap, "codel"), efficiency = cap && scn__field(cap, "efficiency");
    if (p->discipline == SIM_QUEUE_CODEL && !codel)
        return fail_at(P, "capacity", "discipline",
                       "\"codel\" needs \"codel\": {\"target\": D, \"interval\": D} beside it");
    if (p->discipline != SIM_QUEUE_CODEL && codel)
        return fail_at(P, "capacity", "codel", "needs \"discipline\": \"codel\"");
    const char *why = "acts on the queue, and only a provider with a capacity.concurrency "
                      "queues attempts";
    if (p->concurrency == 0 && p->discipline != SIM_QUEUE_FIFO)
        return fail_at(P, "capacity", "discipline", why);
    if (p->concurrency == 0 && efficiency) return fail_at(P, "capacity", "efficiency", why);
    if (p->concurrency == 0 && p->load_queued > 0) {
        size_t old = scn__push_key(P, "latency");
        int rc = fail_at(P, "load", "queued", why);
        scn__pop(P, old);
        return rc;
    }
    if (efficiency && p->efficiency_queue_above >= p->queue)
        return fail_at(P, "capacity", "efficiency",
                       "queue_above must be below capacity.queue, or the queue never holds that "
                       "many");
    return FB_OK;
}

const ld_section scn__price_section = {
    "providers", "/$defs/provider/properties/price",
    (const ld_field[]){{"input_per_mtok", LD_NUMBER, LD_AT(sim_provider, price_in_per_mtok),
                        .lo = 0, .hi = 1e6, .def = "0", .doc = "USD per million input tokens"},
                       {"output_per_mtok", LD_NUMBER, LD_AT(sim_provider, price_out_per_mtok),
                        .lo = 0, .hi = 1e6, .def = "0", .doc = "USD per million output tokens"},
                       {"per_call", LD_NUMBER, LD_AT(sim_provider, price_per_call), .lo = 0,
                        .hi = 1e6, .def = "0", .doc = "USD per served call (tools)"},
                       {0}},
    "price."};

static int parse_price(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__price_section, out);
}

/* {"latency": DIST}: each way between a pod and the provider (docs/models.md, "Network"). */
const ld_section scn__network_section = {
    "providers", "/$defs/provider/properties/network",
    (const ld_field[]){
        {"latency", LD_HOOK, LD_AT(sim_provider, net_latency_us),
         .schema =
             "{\"$ref\": \"#/$defs/duration_dist\", \"description\": \"added each way, before the "
             "attempt reaches the provider and before its reply reaches the client\"}",
         .hook = scn__duration_dist, .unit = "distribution (duration)", .def_doc = "required",
         .doc = "added on each way between a pod and the provider: before an attempt reaches it "
                "and before its reply reaches the client "
                "([models.md](models.md#network-and-connections)); the attempt timeout covers "
                "both",
         .flags = LD_F_NEEDED | LD_F_PURE, LD_SUB(&scn__duration_dist_section)},
        {0}},
    "network."};

static int parse_network(pctx *P, const cJSON *v, void *out) {
    static const char *const required[] = {"latency", NULL};
    sim_provider *p = out;
    int rc = required_fields(P, v, &scn__network_section, required, p);
    p->has_network = true;
    return rc;
}

/* ---- a provider ---- */

static const char *const provider_kinds[] = {"llm", "tool", NULL};

/* A provider (base: sim_provider); its name is read first, by code. */
const ld_section scn__provider_section = {
    "providers", "/$defs/provider",
    (const ld_field[]){
        {"name", LD_CODE,
         .schema = "{\"allOf\": [{\"$ref\": \"#/$defs/name\"}, {\"not\": {\"enum\": [\"llm\", "
                   "\"none\"]}}]}",
         .unit = "string", .def_doc = "required",
         .doc = "unique; letters, digits, `-`, `_`, `.`; `llm` and `none` are reserved",
         .flags = LD_F_NEEDED},
        {"kind", LD_ENUM, LD_AT(sim_provider, kind), .names = provider_kinds, .def = "\"llm\"",
         .doc = "tools are called by classes with `target: NAME`; they are never in a fallback "
                "chain"},
        {"context_window", LD_INTEGER, LD_AT(sim_provider, context_window), .lo = 0,
         .hi = 100000000, .def = "0", .def_doc = "`0` (unlimited)",
         .doc = "prompt + completion tokens above this get a 400 `context_length` error"},
        {"keeps_working", LD_BOOL, LD_AT(sim_provider, keeps_working), .def = "true",
         .flags = LD_F_SET,
         .doc = "an attempt whose client timed out keeps its slot (and is billed) until it "
                "finishes, as real providers do; `false` cancels it"},
        {"latency", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         WHOLE(sim_provider), .hook = parse_latency, LD_SUB(&scn__latency_section),
         .unit = "object", .def_doc = "—", .doc = "how long answers take: `latency.*` below"},
        {"capacity", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}, "
                   "\"allOf\": [{\"if\": {\"required\": [\"discipline\"], \"properties\": "
                   "{\"discipline\": {\"const\": \"codel\"}}}, \"then\": {\"required\": "
                   "[\"codel\"]}, \"else\": {\"not\": {\"required\": [\"codel\"]}}}, {\"if\": "
                   "{\"anyOf\": [{\"required\": [\"efficiency\"]}, {\"required\": "
                   "[\"discipline\"], \"properties\": {\"discipline\": {\"enum\": [\"lifo\", "
                   "\"drop_expired\", \"codel\"]}}}]}, \"then\": {\"required\": [\"concurrency\"], "
                   "\"properties\": {\"concurrency\": {\"type\": \"integer\", \"minimum\": 1}}}}]}",
         WHOLE(sim_provider), .hook = parse_capacity, LD_SUB(&scn__capacity_section),
         .unit = "object", .def_doc = "unlimited",
         .doc = "slots, queue and rate limits: `capacity.*` below"},
        {"price", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         WHOLE(sim_provider), .hook = parse_price, LD_SUB(&scn__price_section), .unit = "object",
         .def_doc = "free", .doc = "what calls cost: `price.*` below"},
        {"network", LD_HOOK,
         .schema =
             "{\"type\": \"object\", \"description\": \"the network between the pods and this "
             "provider\", \"additionalProperties\": false, \"required\": [], \"properties\": {}}",
         WHOLE(sim_provider), .hook = parse_network, LD_SUB(&scn__network_section),
         .unit = "object", .def_doc = "none",
         .doc = "the network between the pods and this provider: `network.*`"},
        {"faults", LD_HOOK,
         .schema =
             "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"$ref\": \"#/$defs/fault\"}}",
         WHOLE(sim_provider), .hook = parse_faults, .flags = LD_F_NAMED,
         LD_SUB(&scn__fault_section), .unit = "array of faults", .def = "[]",
         .doc = "the fault timeline ([faults[]](#faults), at most 32)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—"},
        {0}},
    NULL};

/* "name": a valid name, and not one that "target" gives another meaning. */
static int provider_name(pctx *P, const cJSON *v, sim_provider *p) {
    scn__check_fields(P, v, &scn__provider_section);
    scn__need_key(P, v, "name");
    scn__get_string(P, v, "name", p->name, sizeof p->name); /* "" (calloc) unless read */
    scn__check_name(P, "name", p->name);
    if (strcmp(p->name, "llm") == 0 || strcmp(p->name, "none") == 0 || p->name[0] == '\0') {
        size_t old = scn__push_key(P, "name");
        scn__fail(P, "\"%s\" is reserved", p->name);
        scn__pop(P, old);
    }
    return P->rc;
}

/* The defaults of a provider whose objects are absent (the tables' LD_F_SET ones). */
static int provider_defaults(pctx *P, sim_provider *p) {
    static const ld_section *const parts[] = {&scn__provider_section, &scn__latency_section,
                                              &scn__capacity_section, &scn__efficiency_section};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        scn__keep(P, scn__set_defaults(parts[i], p, P->err)); /* its own context */
    return P->rc;
}

static int provider_item(pctx *P, const cJSON *v, uint32_t i, void *out) {
    sim_scenario *sc = out;
    sim_provider *p = &sc->providers[i];
    provider_name(P, v, p);
    provider_defaults(P, p);
    scn__read_fields(P, v, &scn__provider_section, p);
    capacity_consistent(P, v, p);
    for (uint32_t k = 0; k < i; k++)
        if (strcmp(sc->providers[k].name, p->name) == 0)
            scn__fail(P, "two providers are named \"%s\"", p->name);
    return P->rc;
}

int scn__parse_providers(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    scn__array(P, v, SIM_PROVIDERS_MAX, "providers", provider_item, sc, &sc->provider_count);
    if (sc->provider_count == 0) scn__fail(P, "at least one provider is needed");
    return P->rc;
}

/* ---- a fault timeline alone ---- */

static int script_item(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_fault *faults = out;
    memset(&faults[i], 0, sizeof faults[i]);
    return parse_fault(P, e, &faults[i]);
}

int scn_faults_parse(const char *text, size_t len, const char *file, sim_fault *out, uint32_t cap,
                     uint32_t *count, sim_error *err) {
    static const char *const keys[] = {"faults", NULL};
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file ? file : "<faults>");
    *count = 0;
    cJSON *root = scn__parse_json(text, len, err);
    if (root == NULL) return FB_EPARSE;
    pctx P = {err, "", 0, true, NULL, NULL, FB_OK};
    const cJSON *arr = root;
    if (cJSON_IsObject(root)) { /* {"faults": [...]} */
        scn__check_object(&P, root, keys, keys);
        arr = scn__field(root, "faults");
    }
    uint32_t n = 0;
    size_t old = scn__push_key(&P, "faults");
    scn__array(&P, arr, cap, "faults", script_item, out, &n);
    scn__pop(&P, old);
    cJSON_Delete(root);
    if (P.rc != FB_OK) return P.rc; /* explicit: *count only for a whole timeline */
    *count = n;
    return FB_OK;
}

/* ---- references by name, from traffic and policies ---- */

/* name is none of `names` (NULL-terminated): say which it might be. */
static int no_provider(pctx *P, const char *name, const char *const *names) {
    const char *s = scn__suggest(name, names);
    return s ? scn__fail(P, "no provider named \"%s\" (did you mean \"%s\"?)", name, s)
             : scn__fail(P, "no provider named \"%s\"", name);
}

int scn__lookup_provider_name(pctx *P, const char *name, uint8_t *out) {
    if (P->rc != FB_OK) return P->rc;
    const sim_scenario *sc = P->sc;
    int i = scn_provider(sc, name);
    if (i < 0) {
        const char *names[SIM_PROVIDERS_MAX + 1];
        for (uint32_t k = 0; k < sc->provider_count; k++) names[k] = sc->providers[k].name;
        names[sc->provider_count] = NULL;
        return no_provider(P, name, names);
    }
    *out = (uint8_t)i;
    return FB_OK;
}

int scn__check_provider_ref(pctx *P, const cJSON *v, const cJSON *root) {
    const cJSON *list = scn__field(root, "providers");
    const char *names[SIM_PROVIDERS_MAX + 1];
    size_t n = 0;
    if (!cJSON_IsString(v))
        return scn__fail(P, "expected a provider name, got %s", scn__type_name(v));
    for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e; e = e->next) {
        const cJSON *name = scn__field(e, "name");
        if (n == SIM_PROVIDERS_MAX || !cJSON_IsString(name)) return FB_OK; /* the loader's */
        if (strcmp(name->valuestring, v->valuestring) == 0) return FB_OK;
        names[n++] = name->valuestring;
    }
    names[n] = NULL;
    return n == 0 ? FB_OK : no_provider(P, v->valuestring, names);
}

int scn__lookup_provider(pctx *P, const cJSON *v, uint8_t *out) {
    if (!cJSON_IsString(v))
        return scn__fail(P, "expected a provider name, got %s", scn__type_name(v));
    return scn__lookup_provider_name(P, v->valuestring, out);
}

static int chain_link(pctx *P, const cJSON *e, uint32_t i, void *out) {
    uint8_t *order = out;
    /* explicit: order[i] is set only for a provider found */
    if (scn__lookup_provider(P, e, &order[i]) != FB_OK) return P->rc;
    for (uint32_t k = 0; k < i; k++)
        if (order[k] == order[i]) scn__fail(P, "provider \"%s\" is listed twice", e->valuestring);
    if (P->sc->providers[order[i]].kind != SIM_PROVIDER_LLM)
        scn__fail(P, "\"%s\" is a tool, not an LLM provider", e->valuestring);
    return P->rc;
}

int scn__parse_order(pctx *P, const cJSON *v, uint8_t *order, uint32_t *len) {
    uint32_t n = 0;
    scn__array(P, v, SIM_PROVIDERS_MAX, "providers", chain_link, order, &n);
    if (n == 0) scn__fail(P, "must name at least one provider");
    if (P->rc != FB_OK) return P->rc; /* explicit: *len only for a whole chain */
    *len = n;
    return FB_OK;
}
