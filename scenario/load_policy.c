/*
 * load_policy.c - one layer's policy: retry (backoff, jitter, budget),
 * breaker, fallback chain, degraded answers, stream handling,
 * classification, client-side rate limits and per-provider overrides.
 * The variants and their layers are read in load_variants.c.
 */
#include "scenario/loadint.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- retry ---- */

static const char *const backoffs[] = {"exponential", "constant", "linear", "none", NULL};

/* The index of `name` in backoffs (an fb_backoff), or -1. */
static int backoff_kind(const char *name) {
    int k = -1;
    for (int i = 0; backoffs[i]; i++)
        if (strcmp(name, backoffs[i]) == 0) k = i;
    return k;
}

/* A backoff's parameters (base: fb_retry_config). */
const ld_section scn__backoff_section = {
    "backoff", "/$defs/retry/properties/backoff/oneOf/1/properties/exponential/oneOf/1",
    (const ld_field[]){{"base", LD_DURATION, LD_AT(fb_retry_config, base_us), .def = "\"500ms\"",
                        .doc = "the delay before the first retry"},
                       {"max", LD_DURATION, LD_AT(fb_retry_config, delay_us_max), .def = "\"60s\"",
                        .doc = "the longest delay"},
                       {"multiplier", LD_NUMBER, LD_AT(fb_retry_config, multiplier), .lo = 1,
                        .hi = 100, .def = "2",
                        .doc = "exponential only: each delay is the one before × this"},
                       {0}},
    NULL};

/* {"exponential": {"base", "max", "multiplier"}}, or {"constant": "1s"} for the base alone. */
static int backoff_params(pctx *P, const cJSON *b, fb_retry_config *r) {
    if (r->backoff == FB_BACKOFF_NONE)
        return scn__fail(P, "\"none\" takes no parameters; write \"backoff\": \"none\"");
    if (cJSON_IsString(b)) return scn__get_duration_value(P, b, &r->base_us, false);
    scn__fields(P, b, &scn__backoff_section, r);
    if (r->backoff != FB_BACKOFF_EXPONENTIAL && scn__field(b, "multiplier")) {
        size_t old = scn__push_key(P, "multiplier");
        scn__fail(P, "only exponential backoff has a multiplier");
        scn__pop(P, old);
    }
    return P->rc;
}

static int parse_backoff(pctx *P, const cJSON *v, void *out) {
    fb_retry_config *r = out;
    if (cJSON_IsString(v)) {
        int k = backoff_kind(v->valuestring);
        if (k < 0)
            return scn__fail(P,
                             "unknown backoff \"%s\"; one of: exponential, constant, "
                             "linear, none",
                             v->valuestring);
        r->backoff = (fb_backoff)k;
        return FB_OK;
    }
    if (!cJSON_IsObject(v) || !v->child || v->child->next)
        return scn__fail(P, "expected \"exponential\", \"constant\", \"linear\", \"none\" or an "
                            "object with one of them");
    /* explicit: the member must be one of backoffs, for backoff_kind */
    if (scn__check_keys(P, v, backoffs) != FB_OK) return P->rc;
    const cJSON *b = v->child;
    r->backoff = (fb_backoff)backoff_kind(b->string);
    size_t old = scn__push_key(P, b->string);
    backoff_params(P, b, r);
    scn__pop(P, old);
    return P->rc;
}

/* {"proportional": fraction} (base: fb_retry_config). */
const ld_section scn__jitter_section = {
    "jitter", "/$defs/retry/properties/jitter/oneOf/1",
    (const ld_field[]){{"proportional", LD_NUMBER, LD_AT(fb_retry_config, jitter_fraction),
                        .lo = 0.001, .hi = 1, .flags = LD_F_REQUIRED,
                        .doc = "each delay × U(1 − f, 1 + f)"},
                       {0}},
    NULL};

/* "full", "none", "equal", "decorrelated", or {"proportional": fraction}. */
static int parse_jitter(pctx *P, const cJSON *o, void *out) {
    static const char *const jitters[] = {"full",         "none",         "equal",
                                          "decorrelated", "proportional", NULL};
    static const fb_jitter kinds[] = {FB_JITTER_FULL, FB_JITTER_NONE, FB_JITTER_EQUAL,
                                      FB_JITTER_DECORRELATED, FB_JITTER_PROPORTIONAL};
    fb_retry_config *r = out;
    if (!cJSON_IsObject(o)) {
        int j = 0;
        int rc = scn__get_enum_value(P, o, jitters, &j);
        r->jitter = kinds[j];
        return rc;
    }
    scn__check_fields(P, o, &scn__jitter_section);
    r->jitter = FB_JITTER_PROPORTIONAL;
    scn__read_fields(P, o, &scn__jitter_section, r);
    return P->rc;
}

/* true: give up on a Retry-After above retry_after_max; false: clamp it. */
static int parse_giveup(pctx *P, const cJSON *v, void *out) {
    fb_retry_config *r = out;
    if (!cJSON_IsBool(v)) return scn__fail(P, "expected true or false, got %s", scn__type_name(v));
    r->above_max = cJSON_IsTrue(v) ? FB_ABOVE_MAX_GIVEUP : FB_ABOVE_MAX_CLAMP;
    return FB_OK;
}

/* {"token_bucket": {...}}: gRPC's retry throttling. */
const ld_section scn__token_bucket_section = {
    "budget.token_bucket", "/$defs/retry/properties/budget/properties/token_bucket",
    (const ld_field[]){{"max", LD_NUMBER, LD_AT(fb_budget_config, max_tokens), .lo = 1, .hi = 1000,
                        .def = "10", .doc = "tokens at the start and at most"},
                       {"ratio", LD_NUMBER, LD_AT(fb_budget_config, ratio), .lo = 0.001, .hi = 1000,
                        .def = "0.1", .doc = "tokens a success adds"},
                       {0}},
    NULL};

/* {"quota": {...}}: the AWS SDKs' retry quota. */
const ld_section scn__quota_section = {
    "budget.quota", "/$defs/retry/properties/budget/properties/quota",
    (const ld_field[]){{"capacity", LD_INTEGER, LD_AT(fb_budget_config, capacity), .lo = 1,
                        .hi = 1000000000, .def = "500",
                        .doc = "the quota at the start and at most"},
                       {"retry_cost", LD_INTEGER, LD_AT(fb_budget_config, retry_cost), .lo = 1,
                        .hi = 1000000, .def = "5", .doc = "what a retry takes"},
                       {"timeout_cost", LD_INTEGER, LD_AT(fb_budget_config, timeout_cost), .lo = 1,
                        .hi = 1000000, .def = "10", .doc = "what a retry after a timeout takes"},
                       /* the scenario format's documented default (botocore's) */
                       {"refund", LD_INTEGER, LD_AT(fb_budget_config, no_retry_refund), .lo = 0,
                        .hi = 1000000, .def = "1", .flags = LD_F_SET,
                        .doc = "what a success without a retry gives back (0: nothing)"},
                       {0}},
    NULL};

/* {"deposit": {...}}: a bucket every request fills. */
const ld_section scn__deposit_section = {
    "budget.deposit", "/$defs/retry/properties/budget/properties/deposit",
    (const ld_field[]){{"max", LD_NUMBER, LD_AT(fb_budget_config, max_tokens), .lo = 0.001,
                        .hi = 1e6, .def = "10", .doc = "tokens at the start and at most"},
                       {"deposit", LD_NUMBER, LD_AT(fb_budget_config, deposit), .lo = 0.001,
                        .hi = 1e6, .def = "0.1", .doc = "tokens each request adds"},
                       {"cost", LD_NUMBER, LD_AT(fb_budget_config, cost), .lo = 0.001, .hi = 1e6,
                        .def = "1", .doc = "tokens a retry takes"},
                       {"threshold", LD_NUMBER, LD_AT(fb_budget_config, threshold), .lo = 0.001,
                        .hi = 1e6, .def_doc = "`cost`",
                        .doc = "a retry is allowed while there are at least this many"},
                       {0}},
    NULL};

/* {"retry_breaker": {...}}: a breaker that only gates retries. */
const ld_section scn__retry_breaker_section = {
    "budget.retry_breaker", "/$defs/retry/properties/budget/properties/retry_breaker",
    (const ld_field[]){
        {"window", LD_DURATION, LD_AT(fb_budget_config, window_us), .def = "\"10s\"",
         .doc = "the sliding window"},
        {"buckets", LD_INTEGER, LD_AT(fb_budget_config, buckets), .lo = 1,
         .hi = FB_BUDGET_BUCKETS_MAX, .def = "10", .doc = "slices of the window; they divide it"},
        {"failure_ratio", LD_NUMBER, LD_AT(fb_budget_config, failure_ratio), .lo = 0.001, .hi = 1e6,
         .def = "0.1", .doc = "retries are refused while failures exceed this x requests"},
        {"minimum_requests", LD_INTEGER, LD_AT(fb_budget_config, min_requests), .lo = 1,
         .hi = 1000000000, .def = "20", .doc = "no retry is refused below this many requests"},
        {0}},
    NULL};

static int token_bucket_budget(pctx *P, const cJSON *o, void *out) {
    fb_budget_config *b = out;
    b->kind = FB_BUDGET_TOKEN_BUCKET;
    return scn__fields(P, o, &scn__token_bucket_section, b);
}

static int quota_budget(pctx *P, const cJSON *o, void *out) {
    fb_budget_config *b = out;
    b->kind = FB_BUDGET_QUOTA;
    return scn__fields(P, o, &scn__quota_section, b);
}

static int deposit_budget(pctx *P, const cJSON *o, void *out) {
    fb_budget_config *b = out;
    b->kind = FB_BUDGET_DEPOSIT;
    return scn__fields(P, o, &scn__deposit_section, b);
}

/* {"retry_breaker": {"window", "buckets", "failure_ratio", "minimum_requests"}}. */
static int retry_breaker_budget(pctx *P, const cJSON *o, void *out) {
    fb_budget_config *b = out;
    b->kind = FB_BUDGET_RETRY_BREAKER;
    scn__fields(P, o, &scn__retry_breaker_section, b);
    fb_time_us w = b->window_us ? b->window_us : 10 * FB_US_PER_S;
    uint32_t k = b->buckets ? b->buckets : 10;
    if (w % k != 0) scn__fail(P, "the window must divide into its %u buckets", k);
    return P->rc;
}

#define BUDGET_KIND(K, HOOK, SEC)                                                                  \
    { K, LD_HOOK, .offset = 0, .size = sizeof(fb_budget_config), .hook = HOOK, LD_SUB(SEC) }

/*
 * "budget": one member, its kind (base: fb_budget_config). The kinds share key
 * names with different ranges (token_bucket's max, deposit's max), so a --set
 * path goes through the kind to its own section. Not one of the docs' tables:
 * the retry table's `budget` row describes all four.
 */
static const ld_section budget_section = {
    "budget", "/$defs/retry/properties/budget",
    (const ld_field[]){
        BUDGET_KIND("token_bucket", token_bucket_budget, &scn__token_bucket_section),
        BUDGET_KIND("quota", quota_budget, &scn__quota_section),
        BUDGET_KIND("deposit", deposit_budget, &scn__deposit_section),
        BUDGET_KIND("retry_breaker", retry_breaker_budget, &scn__retry_breaker_section),
        {0}},
    NULL};

static int parse_budget(pctx *P, const cJSON *v, void *out) {
    if (!cJSON_IsObject(v) || !v->child || v->child->next)
        return scn__fail(P, "expected an object with one of: token_bucket, quota, deposit, "
                            "retry_breaker");
    scn__check_fields(P, v, &budget_section);
    scn__read_fields(P, v, &budget_section, out);
    return P->rc;
}

/* One entry of retry_on: an HTTP status or an outcome's name. */
static int retry_on_item(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_layer *L = out;
    if (cJSON_IsNumber(e)) {
        double d = e->valuedouble;
        if (d != (int)d || d < 100 || d > 599)
            return scn__fail(P, "an HTTP status is an integer in 100..599");
        L->retry_on_statuses[L->retry_on_count++] = (int)d;
        return FB_OK;
    }
    fb_outcome o;
    if (!cJSON_IsString(e) || fb_outcome_parse(e->valuestring, &o) != FB_OK || o == FB_OUT_SUCCESS)
        return scn__fail(P, "expected an HTTP status or an outcome: transient, rate_limited, "
                            "timeout, permanent, policy, context_length, cancelled, rejected");
    (void)i;
    L->retry_on_outcomes |= 1u << o;
    return FB_OK;
}

static int parse_retry_on(pctx *P, const cJSON *v, void *out) {
    sim_layer *L = out;
    uint32_t n = 0;
    L->has_retry_on = true;
    return scn__array(P, v, SIM_RETRY_ON_MAX, "entries", retry_on_item, L, &n);
}

static const char *const caps[] = {"before_jitter", "after_jitter", NULL};
static const char *const retry_afters[] = {"max", "ignore", "as_is", NULL};

/* "retry" (base: the layer, sim_layer). */
const ld_section scn__retry_section = {
    "retry", "/$defs/retry",
    (const ld_field[]){
        {"attempts", LD_INTEGER, LD_AT(sim_layer, retry.attempts), .lo = 1, .hi = 1000, .def = "3",
         .flags = LD_F_SET, .def_doc = "`3` (1 when `retry` is absent)",
         .doc = "attempts per provider **including the first call**"},
        {"backoff", LD_HOOK, LD_AT(sim_layer, retry),
         .schema = "{\"oneOf\": [{\"enum\": [\"exponential\", \"constant\", \"linear\", "
                   "\"none\"]}, {\"type\": \"object\", \"minProperties\": 1, \"maxProperties\": 1, "
                   "\"additionalProperties\": false, \"properties\": {\"exponential\": {\"oneOf\": "
                   "[{\"$ref\": \"#/$defs/duration_positive\"}, {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"properties\": {}}]}, \"linear\": {\"$ref\": "
                   "\"#/$defs/backoff_params\"}, \"constant\": {\"$ref\": "
                   "\"#/$defs/backoff_params\"}}}]}",
         .hook = parse_backoff,
         /* {"exponential": {...}}: the kind, then its parameters */
         .flags = LD_F_NAMED | LD_F_PURE,
         .sub = (const ld_section *const[]){&scn__backoff_section, NULL},
         .unit = "`\"exponential\"`, `\"constant\"`, `\"linear\"`, `\"none\"`, or "
                 "`{\"exponential\": {\"base\": D, \"max\": D, \"multiplier\": X}}`, "
                 "`{\"linear\": {...}}`, `{\"constant\": D}`",
         .def_doc = "exponential, base 500 ms, max 60 s, ×2",
         .doc = "delay before the n-th retry: base·multiplier^(n−1), base·n, base, or 0"},
        {"jitter", LD_HOOK, LD_AT(sim_layer, retry),
         .schema = "{\"oneOf\": [{\"enum\": [\"full\", \"none\", \"equal\", \"decorrelated\", "
                   "\"proportional\"]}, {\"type\": \"object\", \"additionalProperties\": false, "
                   "\"required\": [], \"properties\": {}}]}",
         .hook = parse_jitter, .def = "\"full\"",
         .flags = LD_F_SET | LD_F_PURE, /* the scenario's default, not core's */
         .sub = (const ld_section *const[]){&scn__jitter_section, NULL},
         .unit = "`\"full\"`, `\"none\"`, `\"equal\"`, `\"decorrelated\"`, or "
                 "`{\"proportional\": F}`",
         .def_doc = "`full`", .doc = "see `docs/retry.md`"},
        {"cap", LD_ENUM, LD_AT(sim_layer, retry.cap_order), .names = caps,
         .def = "\"before_jitter\"", .def_doc = "`before_jitter`",
         .doc = "whether the cap bounds the jittered value"},
        {"retry_after", LD_ENUM, LD_AT(sim_layer, retry.retry_after), .names = retry_afters,
         .def = "\"max\"", .def_doc = "`max`",
         .doc = "how a server's Retry-After combines with the backoff"},
        {"retry_after_max", LD_DURATION, LD_AT(sim_layer, retry.retry_after_us_max),
         .def = "\"60s\"",
         .doc = "a header above it is clamped, or gives up with `giveup_above_max`"},
        {"giveup_above_max", LD_HOOK, LD_AT(sim_layer, retry),
         .schema = "{\"type\": \"boolean\", \"default\": false}", .hook = parse_giveup,
         .def = "false", .flags = LD_F_SET | LD_F_PURE, .unit = "boolean",
         .doc = "a Retry-After above `retry_after_max` gives up instead of being clamped"},
        {"retry_after_jitter", LD_NUMBER, LD_AT(sim_layer, retry.retry_after_jitter), .lo = 0,
         .hi = 10, .def = "0",
         .doc = "when the header decides the delay, wait header × U(1, 1 + f) instead: upward "
                "only, as Envoy does, so clients told the same Retry-After do not all come back "
                "at the same instant"},
        {"attempt_timeout", LD_DURATION, LD_AT(sim_layer, retry.attempt_timeout_us),
         .def_doc = "none",
         .doc = "the client gives up on one attempt after this long (a `timeout` outcome)"},
        {"deadline", LD_DURATION, LD_AT(sim_layer, retry.deadline_us), .def_doc = "none",
         .doc = "no attempt starts at or after request start + deadline"},
        {"budget", LD_HOOK, LD_AT(sim_layer, budget),
         .schema = "{\"type\": \"object\", \"minProperties\": 1, \"maxProperties\": 1, "
                   "\"additionalProperties\": false, \"properties\": {\"token_bucket\": {\"type\": "
                   "\"object\", \"additionalProperties\": false, \"properties\": {}}, \"quota\": "
                   "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}, "
                   "\"deposit\": {\"type\": \"object\", \"additionalProperties\": false, "
                   "\"properties\": {}}, \"retry_breaker\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"properties\": {}}}}",
         .hook = parse_budget, LD_SUB(&budget_section),
         .unit = "`{\"token_bucket\": {\"max\": 10, \"ratio\": 0.1}}`, `{\"quota\": "
                 "{\"capacity\": 500, \"retry_cost\": 5, \"timeout_cost\": 10, \"refund\": "
                 "1}}`, `{\"deposit\": {\"max\": 10, \"deposit\": 0.1, \"cost\": 1, "
                 "\"threshold\": 1}}` or `{\"retry_breaker\": {\"window\": \"10s\", "
                 "\"buckets\": 10, \"failure_ratio\": 0.1, \"minimum_requests\": 20}}`",
         .def_doc = "none",
         .doc = "a retry budget per pod and layer: gRPC-style token bucket, AWS-style quota, a "
                "bucket every request fills, or a breaker that only gates retries; see "
                "`docs/budget.md`"},
        {"retry_on", LD_HOOK,
         .schema =
             "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 16, \"description\": \"only "
             "these retry: HTTP statuses and outcome names (replaces the table's retry decision, "
             "x-should-retry too)\", \"items\": {\"oneOf\": [{\"type\": \"integer\", \"minimum\": "
             "100, \"maximum\": 599}, {\"enum\": [\"transient\", \"rate_limited\", \"timeout\", "
             "\"permanent\", \"policy\", \"context_length\", \"cancelled\", \"rejected\"]}]}}",
         .offset = 0, .size = sizeof(sim_layer), .hook = parse_retry_on, .flags = LD_F_PURE,
         .unit = "array of HTTP statuses and outcome names", .def_doc = "the classification table",
         .doc = "only these retry, nothing else (x-should-retry included): `[429, 500, 502, 503, "
                "504]` as Portkey's `on_status_codes`, or outcomes `transient`, `rate_limited`, "
                "`timeout`, `permanent`, `policy`, `context_length`, `cancelled`, `rejected`; at "
                "most 16 entries"},
        {0}},
    NULL};

static int parse_retry(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__retry_section, out);
}

/* ---- breaker ---- */

/* The mode given, or the one the keys imply: a window or a rate means a windowed breaker. */
static const char *const breaker_modes[] = {"consecutive", "count", "time", NULL};
static const char *const open_growths[] = {"none", "linear", "exponential", NULL};
static const char *const breaker_states[] = {
    "closed",        "open",     "half_open",    "forced_open",
    "forced_closed", "disabled", "metrics_only", NULL};

static int breaker_mode(pctx *P, const cJSON *v, fb_breaker_config *b) {
    const cJSON *w = scn__field(v, "window");
    int mode =
        scn__field(v, "failure_rate") || scn__field(v, "slow_call") || w
            ? (cJSON_IsNumber(w) ? FB_BREAKER_MODE_COUNT_WINDOW : FB_BREAKER_MODE_TIME_WINDOW)
            : FB_BREAKER_MODE_CONSECUTIVE;
    int rc = scn__get_enum(P, v, "mode", breaker_modes, &mode);
    b->mode = (fb_breaker_mode)mode;
    return rc;
}

/* "window": a number of calls (count mode) or a duration (time mode). */
static int breaker_window(pctx *P, const cJSON *v, fb_breaker_config *b) {
    const cJSON *w = scn__field(v, "window");
    if (w == NULL && b->mode == FB_BREAKER_MODE_TIME_WINDOW)
        return scn__fail(P, "a time-window breaker needs \"window\" (a duration)");
    if (w == NULL && b->mode == FB_BREAKER_MODE_COUNT_WINDOW)
        return scn__fail(P, "a count-window breaker needs \"window\" (a number of calls)");
    if (w == NULL) return FB_OK;
    int rc = FB_OK;
    size_t old = scn__push_key(P, "window");
    if (b->mode == FB_BREAKER_MODE_COUNT_WINDOW) {
        if (!cJSON_IsNumber(w) || w->valuedouble < 1 || w->valuedouble > FB_BREAKER_CALLS_MAX ||
            w->valuedouble != floor(w->valuedouble))
            rc = scn__fail(P, "a count window is a number of calls in [1, %d]",
                           FB_BREAKER_CALLS_MAX);
        else
            b->window_calls = (uint32_t)w->valuedouble;
    } else if (b->mode == FB_BREAKER_MODE_TIME_WINDOW) {
        rc = scn__get_duration_value(P, w, &b->window_us, false);
    } else {
        rc = scn__fail(P, "a consecutive-failures breaker has no window");
    }
    scn__pop(P, old);
    return rc;
}

/* What holds only between keys: buckets that divide the window, open_max >= open. */
static int breaker_consistent(pctx *P, const fb_breaker_config *b) {
    if (b->mode == FB_BREAKER_MODE_TIME_WINDOW && b->window_us > 0) {
        uint32_t n = b->window_buckets ? b->window_buckets : 10;
        if (b->window_us % n != 0)
            return scn__fail(P, "window must divide into %u equal buckets", n);
    }
    if (b->open_us_max > 0 && b->open_us_max < (b->open_us > 0 ? b->open_us : 60 * FB_US_PER_S)) {
        size_t old = scn__push_key(P, "open_max");
        int rc =
            scn__fail(P, "must be >= open (%s)", b->open_us > 0 ? "as given" : "60s by default");
        scn__pop(P, old);
        return rc;
    }
    return FB_OK;
}

/* A breaker's keys (base: fb_breaker_config); mode and window are read first, by code. */
const ld_section scn__breaker_section = {
    "breaker", "/$defs/breaker_rules",
    (const ld_field[]){
        {"mode", LD_CODE,
         .schema = "{\"enum\": [\"consecutive\", \"count\", \"time\"], \"description\": \"inferred "
                   "when absent: window as a duration -> time, as a number -> count; no window and "
                   "no failure_rate/slow_call -> consecutive\"}",
         .names = breaker_modes, .unit = "`\"consecutive\"`, `\"count\"`, `\"time\"`",
         .def_doc = "inferred: `window` as a duration → `time`, as a number → `count`; no window "
                    "→ `consecutive`",
         .doc = "what trips it: failures in a row, or rates over the last calls or the last "
                "period"},
        {"consecutive_failures", LD_INTEGER, LD_AT(fb_breaker_config, consecutive_failures),
         .lo = 1, .hi = 1000000, .def = "5", .doc = "consecutive mode"},
        {"failure_rate", LD_NUMBER, LD_AT(fb_breaker_config, failure_rate), .lo = 1e-6, .hi = 1,
         .def = "0.5", .unit = "fraction",
         .doc = "window modes: open when failures / calls ≥ this"},
        {"window", LD_CODE,
         .schema = "{\"oneOf\": [{\"$ref\": \"#/$defs/duration_positive\"}, {\"type\": "
                   "\"integer\", \"minimum\": 1, \"maximum\": 1024}]}",
         .unit = "duration (time) or integer (count)", .def_doc = "—", .doc = "the sliding window"},
        {"buckets", LD_INTEGER, LD_AT(fb_breaker_config, window_buckets), .lo = 1,
         .hi = FB_BREAKER_BUCKETS_MAX, .def = "10",
         .doc = "time window buckets; the window must divide evenly"},
        {"minimum_calls", LD_INTEGER, LD_AT(fb_breaker_config, minimum_calls), .lo = 1,
         .hi = 100000000, .def = "100", .doc = "no decision below this many calls in the window"},
        {"slow_call", LD_DURATION, LD_AT(fb_breaker_config, slow_us), .def_doc = "off",
         .doc = "a call slower than this is slow"},
        {"slow_rate", LD_NUMBER, LD_AT(fb_breaker_config, slow_rate), .lo = 1e-6, .hi = 1,
         .def = "1", .unit = "fraction", .def_doc = "`1.0`",
         .doc = "open when slow calls / calls ≥ this"},
        {"half_open_probes", LD_INTEGER, LD_AT(fb_breaker_config, half_open_permits), .lo = 1,
         .hi = FB_BREAKER_PROBES_MAX, .def = "1",
         .doc = "probes admitted in half-open; every other call is rejected"},
        {"probe_lease", LD_DURATION, LD_AT(fb_breaker_config, probe_lease_us), .def_doc = "`open`",
         .doc = "a probe that has not reported by then counts as failed"},
        {"open", LD_DURATION, LD_AT(fb_breaker_config, open_us), .def = "\"60s\"",
         .doc = "how long the breaker stays open"},
        {"open_max", LD_DURATION, LD_AT(fb_breaker_config, open_us_max), .def_doc = "`open × 10`",
         .doc = "cap on the grown duration and on Retry-After hints"},
        {"open_growth", LD_ENUM, LD_AT(fb_breaker_config, open_growth), .names = open_growths,
         .def = "\"none\"", .def_doc = "`none`",
         .doc = "open × n or open × 2^(n−1) for the n-th consecutive trip"},
        {"open_jitter", LD_NUMBER, LD_AT(fb_breaker_config, open_jitter), .lo = 0, .hi = 0.999,
         .def = "0", .unit = "fraction < 1", .doc = "open × U(1 − f, 1 + f)"},
        /* the scenario's default (core's is off) */
        {"honor_retry_after", LD_SWITCH, LD_AT(fb_breaker_config, honor_hint), .def = "true",
         .flags = LD_F_SET,
         .doc = "a tripping 429/503 with Retry-After keeps the breaker open at least that long"},
        {"state", LD_ENUM, LD_AT(fb_breaker_config, initial), .names = breaker_states,
         .def = "\"closed\"",
         .unit = "`closed`, `forced_open`, `forced_closed`, `disabled`, `metrics_only`",
         .def_doc = "`closed`", .doc = "initial state"},
        {0}},
    NULL};

/* A breaker object, or false/null for none. */
static int parse_breaker(pctx *P, const cJSON *v, fb_breaker_config *b, bool *has) {
    if (cJSON_IsFalse(v) || cJSON_IsNull(v)) {
        *has = false;
        return FB_OK;
    }
    scn__check_fields(P, v, &scn__breaker_section);
    *has = true;
    memset(b, 0, sizeof *b);
    breaker_mode(P, v, b);
    breaker_window(P, v, b);
    scn__read_fields(P, v, &scn__breaker_section, b);
    breaker_consistent(P, b);
    return P->rc;
}

static const char *const scopes[] = {"per_pod", "shared", NULL};
static const char *const outages[] = {"fail_open", "fail_closed", "local", NULL};

/* The variant's keys of a breaker (base: sim_layer), beside the breaker's own. */
const ld_section scn__variant_breaker_section = {
    "breaker", "/$defs/policy_keys/properties/breaker/oneOf/1",
    (const ld_field[]){
        {"scope", LD_ENUM, LD_AT(sim_layer, breaker_scope), .names = scopes, .def = "\"per_pod\"",
         .def_doc = "`per_pod`",
         .doc = "`shared` models one breaker in a store (Redis) seen by every pod"},
        {"sync_delay", LD_DURATION0, LD_AT(sim_layer, sync_delay_us), .def = "\"0s\"",
         .doc = "shared scope: results reach the store, and its state reaches the pods, this much "
                "later"},
        {"store_outage", LD_ENUM, LD_AT(sim_layer, store_outage), .names = outages,
         .def = "\"fail_open\"",
         .doc = "shared scope only: what a pod does while the store is unreachable (see "
                "`breaker_store`)"},
        {0}},
    NULL};

/* The variant's breaker, for every provider; scope and sync_delay belong to the variant. */
static int parse_variant_breaker(pctx *P, const cJSON *v, void *out) {
    sim_layer *pol = out;
    bool has = false;
    fb_breaker_config bc;
    memset(&bc, 0, sizeof bc);
    cJSON *copy = NULL;
    if (cJSON_IsObject(v)) {
        /* every key of both, so that a misspelt scope gets its did-you-mean too */
        static const ld_section *const secs[] = {&scn__breaker_section,
                                                 &scn__variant_breaker_section, NULL};
        pol->breaker_scope = SIM_SCOPE_POD;
        pol->store_outage = (sim_store_outage)0;
        scn__check_fields_in(P, v, secs);
        scn__read_fields(P, v, &scn__variant_breaker_section, pol);
        if (scn__field(v, "store_outage") && pol->breaker_scope != SIM_SCOPE_SHARED) {
            size_t old = scn__push_key(P, "store_outage");
            scn__fail(P, "only a shared breaker (\"scope\": \"shared\") has a store");
            scn__pop(P, old);
        }
        copy = cJSON_Duplicate(v, 1);
        if (copy == NULL) scn__fail(P, "out of memory");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "scope");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "sync_delay");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "store_outage");
    }
    parse_breaker(P, copy ? copy : v, &bc, &has);
    cJSON_Delete(copy);
    for (uint32_t i = 0; i < SIM_PROVIDERS_MAX; i++) {
        pol->per_provider[i].has_breaker = has;
        pol->per_provider[i].breaker = bc;
    }
    return P->rc;
}

/* ---- per provider ---- */

/* {PROVIDER: {...}, ...}: each member read into that provider's share of the policy. */
int scn__per_provider(pctx *P, const cJSON *v, ld_provider_part part, sim_layer *pol) {
    if (scn__need_object(P, v) != FB_OK) return P->rc; /* explicit: members have keys */
    for (const cJSON *e = v->child; e; e = e->next) {
        size_t old = scn__push_key(P, e->string);
        uint8_t idx = 0;
        if (scn__lookup_provider_name(P, e->string, &idx) == FB_OK) /* explicit: idx found */
            part(P, e, &pol->per_provider[idx]);
        scn__pop(P, old);
    }
    return P->rc;
}

static const char *const ratelimit_modes[] = {"wait", "reject", NULL};

/* One provider's client-side rate limit (base: fb_ratelimit_config). */
const ld_section scn__rate_limit_section = {
    "rate_limit", "/$defs/policy_keys/properties/rate_limit/additionalProperties",
    (const ld_field[]){
        {"rpm", LD_INTEGER, LD_AT(fb_ratelimit_config, requests_per_min), .lo = 1, .hi = 1000000000,
         .doc = "requests per minute"},
        {"tpm", LD_INTEGER, LD_AT(fb_ratelimit_config, tokens_per_min), .lo = 1,
         .hi = (double)LD_RATE_PER_MIN_MAX, .doc = "tokens per minute"},
        {"mode", LD_ENUM, LD_AT(fb_ratelimit_config, mode), .names = ratelimit_modes,
         .def = "\"wait\"",
         .doc = "`wait` delays the attempt (up to `max_wait`), `reject` skips the provider"},
        {"max_wait", LD_DURATION, LD_AT(fb_ratelimit_config, wait_us_max), .def = "\"60s\"",
         .doc = "the longest wait before the attempt is rejected"},
        {0}},
    NULL};

static int ratelimit_part(pctx *P, const cJSON *v, sim_provider_policy *pp) {
    fb_ratelimit_config *r = &pp->ratelimit;
    r->requests_per_min = 0;
    r->tokens_per_min = 0;
    r->mode = (fb_ratelimit_mode)0;
    scn__fields(P, v, &scn__rate_limit_section, r);
    if (r->requests_per_min == 0 && r->tokens_per_min == 0) scn__fail(P, "give rpm, tpm or both");
    pp->has_ratelimit = true;
    return P->rc;
}

static int override_breaker(pctx *P, const cJSON *v, void *out) {
    sim_provider_policy *pp = out;
    return parse_breaker(P, v, &pp->breaker, &pp->has_breaker);
}

/* One provider's overrides (base: sim_provider_policy). */
const ld_section scn__override_section = {
    "overrides", "/$defs/policy_keys/properties/overrides/additionalProperties",
    (const ld_field[]){
        {"timeout", LD_DURATION, LD_AT(sim_provider_policy, timeout_us), .def_doc = "none",
         .doc = "the client gives up on one attempt to this provider after this long"},
        {"breaker", LD_HOOK,
         .schema = "{\"oneOf\": [{\"enum\": [false, null]}, {\"type\": \"object\", \"allOf\": "
                   "[{\"$ref\": \"#/$defs/breaker_rules\"}], \"unevaluatedProperties\": false}]}",
         .hook = override_breaker, .sub = (const ld_section *const[]){&scn__breaker_section, NULL},
         .unit = "object or `false`", .def_doc = "the layer's",
         .doc = "this provider's breaker instead of the layer's; `false`: none"},
        {0}},
    NULL};

static int override_part(pctx *P, const cJSON *v, sim_provider_policy *pp) {
    return scn__fields(P, v, &scn__override_section, pp);
}

static int parse_ratelimits(pctx *P, const cJSON *v, void *out) {
    return scn__per_provider(P, v, ratelimit_part, out);
}

static int parse_overrides(pctx *P, const cJSON *v, void *out) {
    return scn__per_provider(P, v, override_part, out);
}

/* ---- the rest of a policy ---- */

static int parse_fallback(pctx *P, const cJSON *v, void *out) {
    sim_layer *pol = out;
    pol->routes = true;
    return scn__parse_order(P, v, pol->order, &pol->order_len);
}

/* {"latency": distribution} (base: sim_layer). */
const ld_section scn__degraded_section = {
    "degraded", "/$defs/policy_keys/properties/degraded/oneOf/1",
    (const ld_field[]){{"latency", LD_HOOK, LD_AT(sim_layer, degraded_latency_us),
                        .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"10ms\"}",
                        .hook = scn__duration_dist, .flags = LD_F_PURE,
                        LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
                        .def = "\"10ms\"", .doc = "how long a degraded answer takes"},
                       {0}},
    NULL};

/* true/false, or {"latency": distribution} (which turns it on). */
static int parse_degraded(pctx *P, const cJSON *v, void *out) {
    sim_layer *pol = out;
    if (cJSON_IsBool(v)) {
        pol->degraded = cJSON_IsTrue(v);
        return FB_OK;
    }
    int rc = scn__fields(P, v, &scn__degraded_section, pol);
    pol->degraded = true;
    return rc;
}

/* "classify" (base: fb_classify_config); absent keys keep core's defaults. */
const ld_section scn__classify_section = {
    "classify", "/$defs/policy_keys/properties/classify",
    (const ld_field[]){
        {"rate_limit_trips", LD_SWITCH, LD_AT(fb_classify_config, rate_limit_trips), .def = "false",
         .doc = "a 429 counts as a breaker failure"},
        {"timeout_trips", LD_SWITCH, LD_AT(fb_classify_config, timeout_trips), .def = "true",
         .doc = "a timeout counts as a breaker failure"},
        {"honor_should_retry", LD_SWITCH, LD_AT(fb_classify_config, honor_should_retry),
         .def = "true", .doc = "x-should-retry overrides the table's retry decision"},
        {"permanent_trips", LD_SWITCH, LD_AT(fb_classify_config, permanent_trips), .def = "false",
         .doc = "4xx, content-policy and context-length answers count as breaker failures (a "
                "breaker that counts every error)"},
        {0}},
    NULL};

static int parse_classify(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__classify_section, &((sim_layer *)out)->classify);
}

void scn__layer_defaults(const sim_scenario *sc, sim_layer *pol) {
    pol->retry.attempts = 1;
    pol->degraded_latency_us = scn__dist_const(10e3);
    /* Default chain: every LLM provider in the order listed. */
    pol->order_len = 0;
    for (uint32_t i = 0; i < sc->provider_count; i++)
        if (sc->providers[i].kind == SIM_PROVIDER_LLM) pol->order[pol->order_len++] = (uint8_t)i;
}

static const char *const streams[] = {"buffer", "fail", "resume", "retry", NULL};

/* One layer's policy (base: sim_layer), read in this order; the client's keys by load_client.c. */
const ld_section scn__layer_section = {
    "policy", "/$defs/policy_keys",
    (const ld_field[]){
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—"},
        {"retry", LD_HOOK, .schema = "{\"$ref\": \"#/$defs/retry\"}", .hook = parse_retry,
         .sub = (const ld_section *const[]){&scn__retry_section, NULL}, .unit = "object",
         .def_doc = "one attempt, no retries", .doc = "[retry](#retry)"},
        {"breaker", LD_HOOK,
         .schema = "{\"description\": \"false or null: no breaker; an object: one breaker per "
                   "provider (per pod, or shared)\", \"oneOf\": [{\"enum\": [false, null]}, "
                   "{\"type\": \"object\", \"allOf\": [{\"$ref\": \"#/$defs/breaker_rules\"}], "
                   "\"properties\": {}, \"unevaluatedProperties\": false}]}",
         .hook = parse_variant_breaker,
         .sub = (const ld_section *const[]){&scn__breaker_section, &scn__variant_breaker_section,
                                            NULL},
         .unit = "object or `false`", .def_doc = "none",
         .doc = "[breaker](#breaker), one per provider per pod (or shared)"},
        {"fallback", LD_HOOK,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 8, \"uniqueItems\": true, "
                   "\"items\": {\"type\": \"string\"}, \"description\": \"the chain order: LLM "
                   "provider names\"}",
         .hook = parse_fallback, .unit = "array of provider names",
         .def_doc = "every `llm` provider, in listed order", .doc = "the chain order"},
        {"context_window_check", LD_BOOL, LD_AT(sim_layer, context_check), .def = "false",
         .doc = "skip providers whose window is smaller than prompt + completion before trying "
                "them"},
        {"degraded", LD_HOOK,
         .schema = "{\"oneOf\": [{\"type\": \"boolean\"}, {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"properties\": {}}]}",
         .hook = parse_degraded, .sub = (const ld_section *const[]){&scn__degraded_section, NULL},
         .unit = "boolean or `{\"latency\": DIST}`", .def_doc = "`false`",
         .doc = "when the chain is exhausted, answer from a degraded/cached path (latency default "
                "10 ms) instead of failing"},
        {"stream", LD_ENUM, LD_AT(sim_layer, stream), .names = streams, .def = "\"buffer\"",
         .flags = LD_F_SET,
         .doc = "what a failure after the first token does: retry invisibly after buffering; end "
                "the request; retry asking only for the rest; retry and stream again (the user "
                "sees the first tokens twice)"},
        {"classify", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}",
         .hook = parse_classify, .sub = (const ld_section *const[]){&scn__classify_section, NULL},
         .unit = "object", .def_doc = "see below",
         .doc = "`rate_limit_trips` (false): a 429 counts as a breaker failure; `timeout_trips` "
                "(true); `honor_should_retry` (true); `permanent_trips` (false): 4xx, "
                "content-policy and context-length answers count as breaker failures (a breaker "
                "that counts every error)"},
        {"rate_limit", LD_HOOK,
         .schema = "{\"type\": \"object\", \"description\": \"client-side limiters per pod, keyed "
                   "by provider name\", \"additionalProperties\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"anyOf\": [{\"required\": [\"rpm\"]}, "
                   "{\"required\": [\"tpm\"]}], \"properties\": {}}}",
         .hook = parse_ratelimits, .flags = LD_F_NAMED,
         .sub = (const ld_section *const[]){&scn__rate_limit_section, NULL}, .unit = "object",
         .def_doc = "none",
         .doc =
             "client-side limiters per pod: `{\"openai\": {\"rpm\": 500, \"tpm\": 100000, "
             "\"mode\": \"wait\", \"max_wait\": \"30s\"}}`; `mode` `wait` delays the attempt (up "
             "to `max_wait`, default 60 s), `reject` skips the provider"},
        {"overrides", LD_HOOK,
         .schema = "{\"type\": \"object\", \"description\": \"per-provider changes, keyed by "
                   "provider name\", \"additionalProperties\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"properties\": {}}}",
         .hook = parse_overrides, .flags = LD_F_NAMED,
         .sub = (const ld_section *const[]){&scn__override_section, NULL}, .unit = "object",
         .def_doc = "none",
         .doc = "per-provider changes: `{\"finance-api\": {\"breaker\": {...} or false, "
                "\"timeout\": \"15s\"}}`"},
        {"concurrency_limit", LD_CODE,
         .schema =
             "{\"type\": \"object\", \"description\": \"adaptive client-side concurrency limits "
             "per pod, keyed by provider name (Netflix concurrency-limits; docs/conclimit.md)\", "
             "\"additionalProperties\": {\"type\": \"object\", \"additionalProperties\": false, "
             "\"required\": [], \"properties\": {}, \"allOf\": [{\"if\": {\"properties\": "
             "{\"algorithm\": {\"const\": \"fixed\"}}}, \"then\": {\"required\": [\"limit\"], "
             "\"properties\": {\"initial\": false, \"min\": false, \"max\": false, "
             "\"backoff_ratio\": false, \"timeout\": false, \"smoothing\": false, \"queue_size\": "
             "false, \"long_window\": false, \"rtt_tolerance\": false}}}, {\"if\": "
             "{\"properties\": {\"algorithm\": {\"const\": \"aimd\"}}}, \"then\": {\"properties\": "
             "{\"limit\": false, \"smoothing\": false, \"queue_size\": false, \"long_window\": "
             "false, \"rtt_tolerance\": false}}}, {\"if\": {\"properties\": {\"algorithm\": "
             "{\"const\": \"gradient2\"}}}, \"then\": {\"properties\": {\"limit\": false, "
             "\"backoff_ratio\": false, \"timeout\": false}}}]}}",
         .flags = LD_F_NAMED, LD_SUB(&scn__conclimit_section), .unit = "object", .def_doc = "none",
         .doc = "adaptive client-side concurrency limits per pod, keyed by provider: "
                "[concurrency_limit](#concurrency_limit)"},
        {"hedging", LD_CODE,
         .schema = "{\"type\": \"object\", \"description\": \"hedged requests (innermost layer): "
                   "more attempts before the first answers, the first success wins "
                   "(docs/hedge.md)\", \"additionalProperties\": false, \"properties\": {}, "
                   "\"dependentRequired\": {\"window\": [\"percentile\"]}}",
         LD_SUB(&scn__hedging_section), .unit = "object", .def_doc = "none",
         .doc = "hedged requests (innermost layer): [hedging](#hedging)"},
        {"connections", LD_CODE,
         .schema = "{\"type\": \"object\", \"description\": \"the layer's HTTP connections per pod "
                   "(innermost layer): a pool shared by its providers (docs/models.md)\", "
                   "\"additionalProperties\": false, \"anyOf\": [{\"required\": [\"max\"]}, "
                   "{\"required\": [\"per_provider\"]}], \"properties\": {}}",
         LD_SUB(&scn__connections_section), .unit = "object", .def_doc = "none",
         .doc = "the HTTP connections of each pod (innermost layer): [connections](#connections)"},
        {0}},
    NULL};

int scn__parse_layer(pctx *P, const cJSON *v, sim_layer *pol, const ld_section *const *secs) {
    scn__check_fields_in(P, v, secs);
    scn__layer_defaults(P->sc, pol);
    scn__read_fields(P, v, &scn__layer_section, pol);
    scn__parse_client(P, v, pol);
    if (pol->order_len == 0)
        scn__fail(P,
                  "no LLM provider to call: add one to \"providers\" or name a \"fallback\" chain");
    return P->rc;
}
