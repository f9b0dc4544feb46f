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

/* {"exponential": {"base", "max", "multiplier"}}, or {"constant": "1s"} for the base alone. */
static int backoff_params(pctx *P, const cJSON *b, fb_retry_config *r) {
    static const char *const keys[] = {"base", "max", "multiplier", NULL};
    if (r->backoff == FB_BACKOFF_NONE)
        return scn__fail(P, "\"none\" takes no parameters; write \"backoff\": \"none\"");
    if (cJSON_IsString(b)) return scn__get_duration_value(P, b, &r->base_us, false);
    int rc = scn__check_object(P, b, keys, NULL);
    if (rc == FB_OK) rc = scn__get_duration(P, b, "base", &r->base_us, false);
    if (rc == FB_OK) rc = scn__get_duration(P, b, "max", &r->delay_us_max, false);
    if (rc == FB_OK) rc = scn__get_number(P, b, "multiplier", &r->multiplier, 1, 100);
    if (rc == FB_OK && r->backoff != FB_BACKOFF_EXPONENTIAL && scn__field(b, "multiplier")) {
        size_t old = scn__push_key(P, "multiplier");
        rc = scn__fail(P, "only exponential backoff has a multiplier");
        scn__pop(P, old);
    }
    return rc;
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
    int rc = scn__check_keys(P, v, backoffs);
    if (rc != FB_OK) return rc;
    const cJSON *b = v->child;
    r->backoff = (fb_backoff)backoff_kind(b->string);
    size_t old = scn__push_key(P, b->string);
    rc = backoff_params(P, b, r);
    scn__pop(P, old);
    return rc;
}

/* "full", "none", "equal", "decorrelated", or {"proportional": fraction}. */
static int parse_jitter(pctx *P, const cJSON *retry, fb_retry_config *r) {
    static const char *const jitters[] = {"full",         "none",         "equal",
                                          "decorrelated", "proportional", NULL};
    static const char *const keys[] = {"proportional", NULL};
    const cJSON *o = scn__field(retry, "jitter");
    if (o == NULL) return FB_OK;
    static const fb_jitter kinds[] = {FB_JITTER_FULL, FB_JITTER_NONE, FB_JITTER_EQUAL,
                                      FB_JITTER_DECORRELATED, FB_JITTER_PROPORTIONAL};
    if (!cJSON_IsObject(o)) {
        int j = 0;
        int rc = scn__get_enum(P, retry, "jitter", jitters, &j);
        r->jitter = kinds[j];
        return rc;
    }
    size_t old = scn__push_key(P, "jitter");
    int rc = scn__check_object(P, o, keys, keys);
    r->jitter = FB_JITTER_PROPORTIONAL;
    if (rc == FB_OK) rc = scn__get_number(P, o, "proportional", &r->jitter_fraction, 0.001, 1);
    scn__pop(P, old);
    return rc;
}

/* {"deposit": {"max", "deposit", "cost", "threshold"}}: a bucket requests fill. */
static int deposit_budget(pctx *P, const cJSON *o, fb_budget_config *b) {
    static const char *const keys[] = {"max", "deposit", "cost", "threshold", NULL};
    b->kind = FB_BUDGET_DEPOSIT;
    int rc = scn__check_keys(P, o, keys);
    if (rc == FB_OK) rc = scn__get_number(P, o, "max", &b->max_tokens, 0.001, 1e6);
    if (rc == FB_OK) rc = scn__get_number(P, o, "deposit", &b->deposit, 0.001, 1e6);
    if (rc == FB_OK) rc = scn__get_number(P, o, "cost", &b->cost, 0.001, 1e6);
    if (rc == FB_OK) rc = scn__get_number(P, o, "threshold", &b->threshold, 0.001, 1e6);
    return rc;
}

/* {"retry_breaker": {"window", "buckets", "failure_ratio", "minimum_requests"}}. */
static int retry_breaker_budget(pctx *P, const cJSON *o, fb_budget_config *b) {
    static const char *const keys[] = {"window", "buckets", "failure_ratio", "minimum_requests",
                                       NULL};
    b->kind = FB_BUDGET_RETRY_BREAKER;
    int rc = scn__check_keys(P, o, keys);
    if (rc == FB_OK) rc = scn__get_duration(P, o, "window", &b->window_us, false);
    if (rc == FB_OK) rc = scn__get_u32(P, o, "buckets", &b->buckets, 1, FB_BUDGET_BUCKETS_MAX);
    if (rc == FB_OK) rc = scn__get_number(P, o, "failure_ratio", &b->failure_ratio, 0.001, 1e6);
    if (rc == FB_OK) rc = scn__get_u32(P, o, "minimum_requests", &b->min_requests, 1, 1000000000);
    fb_time_us w = b->window_us ? b->window_us : 10 * FB_US_PER_S;
    uint32_t k = b->buckets ? b->buckets : 10;
    if (rc == FB_OK && w % k != 0)
        rc = scn__fail(P, "the window must divide into its %u buckets", k);
    return rc;
}

static int parse_budget(pctx *P, const cJSON *v, void *out) {
    static const char *const kinds[] = {"token_bucket", "quota", "deposit", "retry_breaker", NULL};
    static const char *const tb_keys[] = {"max", "ratio", NULL};
    static const char *const q_keys[] = {"capacity", "retry_cost", "timeout_cost", "refund", NULL};
    fb_budget_config *b = out;
    if (!cJSON_IsObject(v) || !v->child || v->child->next)
        return scn__fail(P, "expected an object with one of: token_bucket, quota, deposit, "
                            "retry_breaker");
    int rc = scn__check_keys(P, v, kinds);
    if (rc != FB_OK) return rc;
    const cJSON *o = v->child;
    size_t old = scn__push_key(P, o->string);
    rc = scn__need_object(P, o);
    if (rc == FB_OK && strcmp(o->string, "token_bucket") == 0) {
        b->kind = FB_BUDGET_TOKEN_BUCKET;
        rc = scn__check_keys(P, o, tb_keys);
        if (rc == FB_OK) rc = scn__get_number(P, o, "max", &b->max_tokens, 1, 1000);
        if (rc == FB_OK) rc = scn__get_number(P, o, "ratio", &b->ratio, 0.001, 1000);
    } else if (rc == FB_OK && strcmp(o->string, "quota") == 0) {
        b->kind = FB_BUDGET_QUOTA;
        rc = scn__check_keys(P, o, q_keys);
        if (rc == FB_OK) rc = scn__get_u32(P, o, "capacity", &b->capacity, 1, 1000000000);
        if (rc == FB_OK) rc = scn__get_u32(P, o, "retry_cost", &b->retry_cost, 1, 1000000);
        if (rc == FB_OK) rc = scn__get_u32(P, o, "timeout_cost", &b->timeout_cost, 1, 1000000);
        b->no_retry_refund = 1; /* the scenario format's documented default */
        if (rc == FB_OK) rc = scn__get_u32(P, o, "refund", &b->no_retry_refund, 0, 1000000);
    } else if (rc == FB_OK && strcmp(o->string, "deposit") == 0) {
        rc = deposit_budget(P, o, b);
    } else if (rc == FB_OK) {
        rc = retry_breaker_budget(P, o, b);
    }
    scn__pop(P, old);
    return rc;
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

static int parse_retry(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"attempts",
                                       "backoff",
                                       "jitter",
                                       "cap",
                                       "retry_after",
                                       "retry_after_max",
                                       "giveup_above_max",
                                       "attempt_timeout",
                                       "deadline",
                                       "budget",
                                       "retry_after_jitter",
                                       "retry_on",
                                       NULL};
    static const char *const caps[] = {"before_jitter", "after_jitter", NULL};
    static const char *const ra[] = {"max", "ignore", "as_is", NULL};
    sim_layer *pol = out;
    fb_retry_config *r = &pol->retry;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc != FB_OK) return rc;
    r->attempts = 3;
    r->jitter = FB_JITTER_FULL; /* the scenario's default (docs/scenario-format.md) */
    rc = scn__get_u32(P, v, "attempts", &r->attempts, 1, 1000);
    if (rc == FB_OK) rc = scn__key(P, v, "backoff", parse_backoff, r);
    if (rc == FB_OK) rc = parse_jitter(P, v, r);
    int k = 0;
    if (rc == FB_OK && scn__field(v, "cap")) {
        rc = scn__get_enum(P, v, "cap", caps, &k);
        r->cap_order = (fb_cap_order)k;
    }
    if (rc == FB_OK && scn__field(v, "retry_after")) {
        k = 0;
        rc = scn__get_enum(P, v, "retry_after", ra, &k);
        r->retry_after = (fb_retry_after_policy)k;
    }
    if (rc == FB_OK) rc = scn__get_duration(P, v, "retry_after_max", &r->retry_after_us_max, false);
    fb_switch giveup = FB_DEFAULT;
    if (rc == FB_OK) rc = scn__get_switch(P, v, "giveup_above_max", &giveup);
    r->above_max = giveup == FB_ON ? FB_ABOVE_MAX_GIVEUP : FB_ABOVE_MAX_CLAMP;
    if (rc == FB_OK)
        rc = scn__get_number(P, v, "retry_after_jitter", &r->retry_after_jitter, 0, 10);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "attempt_timeout", &r->attempt_timeout_us, false);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "deadline", &r->deadline_us, false);
    if (rc == FB_OK) rc = scn__key(P, v, "budget", parse_budget, &pol->budget);
    if (rc == FB_OK) rc = scn__key(P, v, "retry_on", parse_retry_on, pol);
    return rc;
}

/* ---- breaker ---- */

/* The mode given, or the one the keys imply: a window or a rate means a windowed breaker. */
static int breaker_mode(pctx *P, const cJSON *v, fb_breaker_config *b) {
    static const char *const modes[] = {"consecutive", "count", "time", NULL};
    const cJSON *w = scn__field(v, "window");
    int mode =
        scn__field(v, "failure_rate") || scn__field(v, "slow_call") || w
            ? (cJSON_IsNumber(w) ? FB_BREAKER_MODE_COUNT_WINDOW : FB_BREAKER_MODE_TIME_WINDOW)
            : FB_BREAKER_MODE_CONSECUTIVE;
    int rc = scn__get_enum(P, v, "mode", modes, &mode);
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

/* When it trips: failures in a row, or failure and slow-call rates over the window. */
static int breaker_trip(pctx *P, const cJSON *v, fb_breaker_config *b) {
    int rc = scn__get_u32(P, v, "consecutive_failures", &b->consecutive_failures, 1, 1000000);
    if (rc == FB_OK) rc = scn__get_number(P, v, "failure_rate", &b->failure_rate, 1e-6, 1);
    if (rc == FB_OK)
        rc = scn__get_u32(P, v, "buckets", &b->window_buckets, 1, FB_BREAKER_BUCKETS_MAX);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "minimum_calls", &b->minimum_calls, 1, 100000000);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "slow_call", &b->slow_us, false);
    if (rc == FB_OK) rc = scn__get_number(P, v, "slow_rate", &b->slow_rate, 1e-6, 1);
    return rc;
}

/* How it opens and probes, and the state it starts in. */
static int breaker_open(pctx *P, const cJSON *v, fb_breaker_config *b) {
    static const char *const growth[] = {"none", "linear", "exponential", NULL};
    static const char *const states[] = {"closed",        "open",     "half_open",    "forced_open",
                                         "forced_closed", "disabled", "metrics_only", NULL};
    int rc =
        scn__get_u32(P, v, "half_open_probes", &b->half_open_permits, 1, FB_BREAKER_PROBES_MAX);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "probe_lease", &b->probe_lease_us, false);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "open", &b->open_us, false);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "open_max", &b->open_us_max, false);
    int g = 0;
    if (rc == FB_OK) rc = scn__get_enum(P, v, "open_growth", growth, &g);
    b->open_growth = (fb_open_growth)g;
    if (rc == FB_OK) rc = scn__get_number(P, v, "open_jitter", &b->open_jitter, 0, 0.999);
    if (rc == FB_OK) rc = scn__get_switch(P, v, "honor_retry_after", &b->honor_hint);
    int st = 0;
    if (rc == FB_OK) rc = scn__get_enum(P, v, "state", states, &st);
    b->initial = (fb_breaker_state)st;
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

/* A breaker object, or false/null for none. */
static int parse_breaker(pctx *P, const cJSON *v, fb_breaker_config *b, bool *has) {
    static const char *const keys[] = {"mode",
                                       "consecutive_failures",
                                       "failure_rate",
                                       "window",
                                       "buckets",
                                       "minimum_calls",
                                       "slow_call",
                                       "slow_rate",
                                       "half_open_probes",
                                       "probe_lease",
                                       "open",
                                       "open_max",
                                       "open_growth",
                                       "open_jitter",
                                       "honor_retry_after",
                                       "state",
                                       NULL};
    if (cJSON_IsFalse(v) || cJSON_IsNull(v)) {
        *has = false;
        return FB_OK;
    }
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc != FB_OK) return rc;
    *has = true;
    memset(b, 0, sizeof *b);
    b->honor_hint = FB_ON; /* the scenario's default (docs/scenario-format.md) */
    rc = breaker_mode(P, v, b);
    if (rc == FB_OK) rc = breaker_window(P, v, b);
    if (rc == FB_OK) rc = breaker_trip(P, v, b);
    if (rc == FB_OK) rc = breaker_open(P, v, b);
    if (rc == FB_OK) rc = breaker_consistent(P, b);
    return rc;
}

/* The variant's breaker, for every provider; scope and sync_delay belong to the variant. */
static int parse_variant_breaker(pctx *P, const cJSON *v, void *out) {
    static const char *const scopes[] = {"per_pod", "shared", NULL};
    static const char *const outages[] = {"fail_open", "fail_closed", "local", NULL};
    sim_layer *pol = out;
    bool has = false;
    fb_breaker_config bc;
    memset(&bc, 0, sizeof bc);
    cJSON *copy = NULL;
    int rc = FB_OK;
    if (cJSON_IsObject(v)) {
        int scope = 0, outage = 0;
        rc = scn__get_enum(P, v, "scope", scopes, &scope);
        pol->breaker_scope = (sim_breaker_scope)scope;
        if (rc == FB_OK) rc = scn__get_duration(P, v, "sync_delay", &pol->sync_delay_us, true);
        if (rc == FB_OK) rc = scn__get_enum(P, v, "store_outage", outages, &outage);
        pol->store_outage = (sim_store_outage)outage;
        if (rc == FB_OK && scn__field(v, "store_outage") && scope != SIM_SCOPE_SHARED) {
            size_t old = scn__push_key(P, "store_outage");
            rc = scn__fail(P, "only a shared breaker (\"scope\": \"shared\") has a store");
            scn__pop(P, old);
        }
        copy = cJSON_Duplicate(v, 1);
        if (copy == NULL) rc = scn__fail(P, "out of memory");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "scope");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "sync_delay");
        cJSON_DeleteItemFromObjectCaseSensitive(copy, "store_outage");
    }
    if (rc == FB_OK) rc = parse_breaker(P, copy ? copy : v, &bc, &has);
    cJSON_Delete(copy);
    for (uint32_t i = 0; i < SIM_PROVIDERS_MAX; i++) {
        pol->per_provider[i].has_breaker = has;
        pol->per_provider[i].breaker = bc;
    }
    return rc;
}

/* ---- per provider ---- */

/* {PROVIDER: {...}, ...}: each member read into that provider's share of the policy. */
int scn__per_provider(pctx *P, const cJSON *v, ld_provider_part part, sim_layer *pol) {
    int rc = scn__need_object(P, v);
    for (const cJSON *e = v->child; rc == FB_OK && e; e = e->next) {
        size_t old = scn__push_key(P, e->string);
        uint8_t idx = 0;
        rc = scn__lookup_provider_name(P, e->string, &idx);
        if (rc == FB_OK) rc = part(P, e, &pol->per_provider[idx]);
        scn__pop(P, old);
    }
    return rc;
}

static int ratelimit_part(pctx *P, const cJSON *v, sim_provider_policy *pp) {
    static const char *const keys[] = {"rpm", "tpm", "mode", "max_wait", NULL};
    static const char *const modes[] = {"wait", "reject", NULL};
    uint64_t rpm = 0, tpm = 0;
    int mode = 0;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "rpm", &rpm, 1, 1000000000);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "tpm", &tpm, 1, LD_RATE_PER_MIN_MAX);
    if (rc == FB_OK) rc = scn__get_enum(P, v, "mode", modes, &mode);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "max_wait", &pp->ratelimit.wait_us_max, false);
    if (rc == FB_OK && rpm == 0 && tpm == 0) rc = scn__fail(P, "give rpm, tpm or both");
    pp->has_ratelimit = true;
    pp->ratelimit.requests_per_min = (int64_t)rpm;
    pp->ratelimit.tokens_per_min = (int64_t)tpm;
    pp->ratelimit.mode = (fb_ratelimit_mode)mode;
    return rc;
}

static int override_part(pctx *P, const cJSON *v, sim_provider_policy *pp) {
    static const char *const keys[] = {"breaker", "timeout", NULL};
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "timeout", &pp->timeout_us, false);
    const cJSON *b = scn__field(v, "breaker");
    if (rc == FB_OK && b) {
        size_t old = scn__push_key(P, "breaker");
        rc = parse_breaker(P, b, &pp->breaker, &pp->has_breaker);
        scn__pop(P, old);
    }
    return rc;
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

/* true/false, or {"latency": distribution} (which turns it on). */
static int parse_degraded(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"latency", NULL};
    sim_layer *pol = out;
    if (cJSON_IsBool(v)) {
        pol->degraded = cJSON_IsTrue(v);
        return FB_OK;
    }
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "latency", true, &pol->degraded_latency_us);
    pol->degraded = true;
    return rc;
}

static int parse_classify(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"rate_limit_trips", "timeout_trips", "honor_should_retry",
                                       "permanent_trips", NULL};
    fb_classify_config *c = &((sim_layer *)out)->classify;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_switch(P, v, "rate_limit_trips", &c->rate_limit_trips);
    if (rc == FB_OK) rc = scn__get_switch(P, v, "timeout_trips", &c->timeout_trips);
    if (rc == FB_OK) rc = scn__get_switch(P, v, "honor_should_retry", &c->honor_should_retry);
    if (rc == FB_OK) rc = scn__get_switch(P, v, "permanent_trips", &c->permanent_trips);
    return rc;
}

void scn__layer_defaults(const sim_scenario *sc, sim_layer *pol) {
    pol->retry.attempts = 1;
    pol->degraded_latency_us = scn__dist_const(10e3);
    /* Default chain: every LLM provider in the order listed. */
    pol->order_len = 0;
    for (uint32_t i = 0; i < sc->provider_count; i++)
        if (sc->providers[i].kind == SIM_PROVIDER_LLM) pol->order[pol->order_len++] = (uint8_t)i;
}

const char *const scn__layer_keys[] = {LD_LAYER_KEYS, NULL};

int scn__parse_layer(pctx *P, const cJSON *v, sim_layer *pol, const char *const *keys) {
    static const char *const streams[] = {"buffer", "fail", "resume", "retry", NULL};
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc != FB_OK) return rc;
    scn__layer_defaults(P->sc, pol);
    rc = scn__key(P, v, "retry", parse_retry, pol);
    if (rc == FB_OK) rc = scn__key(P, v, "breaker", parse_variant_breaker, pol);
    if (rc == FB_OK) rc = scn__key(P, v, "fallback", parse_fallback, pol);
    if (rc == FB_OK) rc = scn__get_bool(P, v, "context_window_check", &pol->context_check);
    if (rc == FB_OK) rc = scn__key(P, v, "degraded", parse_degraded, pol);
    int s = 0;
    if (rc == FB_OK) rc = scn__get_enum(P, v, "stream", streams, &s);
    pol->stream = (fb_stream_policy)s;
    if (rc == FB_OK) rc = scn__key(P, v, "classify", parse_classify, pol);
    if (rc == FB_OK) rc = scn__key(P, v, "rate_limit", parse_ratelimits, pol);
    if (rc == FB_OK) rc = scn__key(P, v, "overrides", parse_overrides, pol);
    if (rc == FB_OK) rc = scn__parse_client(P, v, pol);
    if (rc == FB_OK && pol->order_len == 0)
        rc = scn__fail(
            P, "no LLM provider to call: add one to \"providers\" or name a \"fallback\" chain");
    return rc;
}
