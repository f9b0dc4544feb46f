/*
 * preset_portkey.c - the Portkey AI Gateway (open source): its targets in
 * order (fallback) or a single target, each with the retries it inherits, and
 * the status lists that retry or move on. The rules were read from the files
 * cited, at the commits named (docs/presets.md).
 */
#include "scenario/presetint.h"

#include <math.h>
#include <string.h>

#include "scenario/loadint.h"

static const char *const portkey_modes[] = {"single", "fallback", "loadbalance", "conditional",
                                            NULL};

static const sim_param portkey_params[] = {
    PRESET_PARAM("retry", SIM_PK_OBJECT, .def_doc = "none",
                 .doc = "the retry settings every target inherits"),
    PRESET_PARAM("retry.attempts", SIM_PK_COUNT, .hi = 1000, .def_doc = "0",
                 .doc = "retries after the first call"),
    PRESET_PARAM("retry.on_status_codes", SIM_PK_STATUSES, .def_doc = "[429, 500, 502, 503, 504]",
                 .doc = "the statuses retried (RETRY_STATUS_CODES)"),
    PRESET_PARAM("retry.use_retry_after_header", SIM_PK_BOOL, .def_doc = "false",
                 .doc =
                     "wait what a 429's retry-after-ms, x-ms-retry-after-ms or retry-after says"),
    PRESET_PARAM("request_timeout", SIM_PK_MILLIS, .lo = 1, .hi = 1e9, .def_doc = "none",
                 .doc = "milliseconds an attempt may take; then a 408"),
    PRESET_PARAM("strategy", SIM_PK_OBJECT, .def_doc = "none (single)",
                 .doc = "how the targets are used"),
    PRESET_PARAM("strategy.mode", SIM_PK_WORD, .names = portkey_modes, .def_doc = "single",
                 .doc = "single or fallback (modelled)"),
    PRESET_PARAM("strategy.on_status_codes", SIM_PK_STATUSES, .def_doc = "any status but 2xx",
                 .doc = "fallback: the statuses that move on to the next target"),
    PRESET_PARAM(
        "targets", SIM_PK_JSON, .def_doc = "none",
        .doc = "[{\"provider\" or \"virtual_key\": PROVIDER, \"request_timeout\", \"retry\"}]: the "
               "scenario providers, in order"),
    PRESET_PARAM("provider", SIM_PK_JSON, .def_doc = "the first LLM provider",
                 .doc = "a single target's scenario provider (without targets)"),
    PRESET_PARAM("virtual_key", SIM_PK_JSON, .def_doc = "none", .doc = "as provider"),
    {0},
};

static const char *const portkey_rules[] = {
    "retry.attempts retries after the first call (async-retry's retries): attempts 3 makes 4 "
    "calls; attempts 0 (or no retry) makes 1",
    "retried: a status in retry.on_status_codes (default 429, 500, 502, 503, 504), and a call that "
    "got no response (reset, refused: fetch threw); any other status is returned at once (bail)",
    "the wait before retry n is 1 s * 2^(n-1): async-retry's minTimeout 1000, factor 2, "
    "randomize false, no cap",
    "use_retry_after_header: a 429's retry-after-ms, else x-ms-retry-after-ms, else retry-after "
    "(seconds), read as an integer, is waited as is, and every later backoff of that target "
    "becomes 0; a header of 60 s or more, or more than what is left of 60 s for the target's "
    "headers together (MAX_RETRY_LIMIT_MS), ends the retries; 0 or none: the backoff",
    "request_timeout (ms, header x-portkey-request-timeout or config) bounds each attempt; a "
    "timeout answers 408, retried only when 408 is listed",
    "strategy fallback: the targets in order, each with its own retries; after a target's last "
    "response the next one is tried when the status is in strategy.on_status_codes, or, without "
    "that list, whenever it is not 2xx; a call without a response counts as its 500",
    "no circuit breaker: tryTargetsRecursively filters targets by isOpen and calls "
    "handleCircuitBreakerResponse, but nothing in the open-source gateway sets either, so every "
    "target is always tried",
    NULL,
};

static const char *const portkey_not_modelled[] = {
    "strategy modes loadbalance and conditional; nested targets; a target's own retry (give it "
    "on the config)",
    "hooks and guardrails (an after-request hook's status can restart the retries: "
    "recursiveAfterRequestHookHandler), caching",
    "the npm package @portkey-ai/gateway 1.15.2: its tarball leaves out patches/, so its "
    "async-retry lacks the patch that passes the retry operation; with use_retry_after_header a "
    "429 header then throws a TypeError: the header is ignored (the backoff applies) and a 429 "
    "with a header on the last attempt answers 500 (tests/diff/gateway shows it); the preset "
    "follows the source as the repository builds it (its Dockerfile applies the patch)",
    "HTTP-date Retry-After headers (parseInt gives NaN: the backoff), which fusebox reads as "
    "durations",
    NULL,
};

/* A target's provider: "provider" or "virtual_key" names a scenario provider. */
static int portkey_target(const cJSON *t, size_t i, const sim_scenario *sc, sim_layer *L, char *msg,
                          size_t msglen) {
    static const char *const keys[] = {"provider", "virtual_key", "request_timeout",
                                       "retry",    "api_key",     NULL};
    char where[64];
    snprintf(where, sizeof where, "targets[%zu]", i);
    if (!cJSON_IsObject(t) || scn__preset_known_keys(t, keys, where, msg, msglen) != FB_OK) {
        if (!msg[0]) snprintf(msg, msglen, "%s: an object", where);
        return -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(t, "retry")) {
        snprintf(msg, msglen,
                 "%s.retry: a target's own retry is not modelled (set retry on the "
                 "config)",
                 where);
        return -1;
    }
    const char *name = scn__preset_string_at(t, "virtual_key");
    if (!name) name = scn__preset_string_at(t, "provider");
    if (!name) {
        snprintf(msg, msglen, "%s: name its provider (\"provider\": NAME)", where);
        return -1;
    }
    int q = scn__preset_provider_index(sc, name, where, msg, msglen);
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(t, "request_timeout");
    if (q >= 0 && rt) {
        if (!cJSON_IsNumber(rt) || !(rt->valuedouble >= 1) || rt->valuedouble > 1e9) {
            snprintf(msg, msglen, "%s.request_timeout: milliseconds in [1, 1e9]", where);
            return -1;
        }
        L->per_provider[q].timeout_us = (fb_time_us)llround(rt->valuedouble * 1e3);
    }
    return q;
}

/* The chain: the targets in order (fallback), or the single target. */
static int portkey_chain(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                         sim_layer *L, char *msg, size_t msglen) {
    const sim_param_value *mode = scn__preset_given(p, v, "strategy.mode");
    const cJSON *targets = scn__preset_json_of(scn__preset_given(p, v, "targets"));
    if (mode && mode->word >= 2) {
        snprintf(msg, msglen, "strategy.mode %s is not modelled (single or fallback)",
                 portkey_modes[mode->word]);
        return FB_EINVAL;
    }
    L->routes = true;
    if (targets) {
        if (!cJSON_IsArray(targets) || !targets->child) {
            snprintf(msg, msglen, "targets: a list of targets");
            return FB_EINVAL;
        }
        bool fallback = mode && mode->word == 1;
        L->order_len = 0;
        size_t i = 0;
        for (const cJSON *t = targets->child; t && (fallback || i == 0); t = t->next, i++) {
            int q = portkey_target(t, i, sc, L, msg, msglen);
            if (q < 0) return FB_EINVAL;
            for (uint32_t k = 0; k < L->order_len; k++)
                if (L->order[k] == q) {
                    snprintf(msg, msglen, "targets[%zu]: '%s' is already a target", i,
                             sc->providers[q].name);
                    return FB_EINVAL;
                }
            L->order[L->order_len++] = (uint8_t)q;
        }
        return FB_OK;
    }
    const cJSON *name = scn__preset_json_of(scn__preset_given(p, v, "virtual_key"));
    if (!name) name = scn__preset_json_of(scn__preset_given(p, v, "provider"));
    if (!name) {
        L->order_len = L->order_len > 0 ? 1 : 0;
        return FB_OK;
    }
    int q = cJSON_IsString(name)
                ? scn__preset_provider_index(sc, name->valuestring, "provider", msg, msglen)
                : -1;
    if (q < 0) {
        if (!msg[0]) snprintf(msg, msglen, "provider: a provider's name");
        return FB_EINVAL;
    }
    L->order[0] = (uint8_t)q;
    L->order_len = 1;
    return FB_OK;
}

/* retryRequest with async-retry: retries, 1 s * 2^(n-1), the 429 header rules. */
static void portkey_retry(const sim_preset *p, const sim_param_value *v, sim_layer *L) {
    const sim_param_value *n = scn__preset_given(p, v, "retry.attempts");
    const sim_param_value *hdr = scn__preset_given(p, v, "retry.use_retry_after_header");
    const sim_param_value *t = scn__preset_given(p, v, "request_timeout");
    fb_retry_config *r =
        scn__preset_gateway_retry(L, n ? (uint32_t)n->num : 0, FB_US_PER_S, FB_TIME_MAX);
    r->retry_after = FB_RETRY_AFTER_IGNORE;
    if (hdr && hdr->num) {
        r->retry_after = FB_RETRY_AFTER_AS_IS;
        r->hint_rate_limited_only = FB_ON;
        r->ignore_zero_hint = FB_ON;                  /* `retryAfter && ...`: 0 is no header */
        r->retry_after_us_max = 60 * FB_US_PER_S - 1; /* retryAfter >= MAX_RETRY_LIMIT_MS */
        r->above_max = FB_ABOVE_MAX_GIVEUP;
        r->retry_after_total_us_max = 60 * FB_US_PER_S; /* retryAfter > remainingRetryTimeout */
        r->hint_zeroes_backoff = FB_ON;
    }
    r->attempt_timeout_us = t ? t->us : 0;
}

static bool listed(const sim_param_value *list, int status) {
    for (uint32_t i = 0; list && i < list->list_count; i++)
        if (list->list[i] == status) return true;
    return false;
}

/* Portkey's two status lists as rules: retried (retry), moved on (strategy). */
static void portkey_rules_for(const sim_preset *p, const sim_param_value *v, sim_layer *L) {
    static const sim_param_value dflt = {
        .set = true, .list = {429, 500, 502, 503, 504}, .list_count = 5};
    const sim_param_value *n = scn__preset_given(p, v, "retry.attempts");
    const sim_param_value *rl = scn__preset_given(p, v, "retry.on_status_codes");
    const sim_param_value *fl = scn__preset_given(p, v, "strategy.on_status_codes");
    const sim_param_value *mode = scn__preset_given(p, v, "strategy.mode");
    bool fallback = mode && mode->word == 1;
    if (!rl) rl = n && n->num > 0 ? &dflt : NULL; /* normalizeRetryConfig */
    int seen[2 * SIM_PRESET_LIST_MAX], k = 0;
    const sim_param_value *lists[] = {rl, fl};
    for (int j = 0; j < 2; j++) {
        for (uint32_t i = 0; lists[j] && i < lists[j]->list_count; i++) {
            int st = lists[j]->list[i];
            bool dup = false;
            for (int m = 0; m < k && !dup; m++) dup = seen[m] == st;
            if (dup) continue;
            seen[k++] = st;
            scn__preset_status_rule(L, st, listed(rl, st), fallback && (!fl || listed(fl, st)));
        }
    }
    /* a timeout answers 408; a call without a response ends as 500 */
    scn__preset_outcome_rule(L, FB_OUT_TIMEOUT, listed(rl, 408),
                             fallback && (!fl || listed(fl, 408)));
    scn__preset_transport_rule(L, FB_TRANSPORT_CONNECT, 1, fallback && (!fl || listed(fl, 500)));
    scn__preset_transport_rule(L, FB_TRANSPORT_RESET, 1, fallback && (!fl || listed(fl, 500)));
    scn__preset_transport_rule(L, FB_TRANSPORT_OTHER, 1, fallback && (!fl || listed(fl, 500)));
    /* every other failure: returned at once; moves on unless a list says otherwise */
    scn__preset_rule(L)->retry = 0;
    L->rules[L->rule_count - 1].fallback = (int8_t)(fallback && !fl);
}

static int portkey_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                         sim_layer *L, char *msg, size_t msglen) {
    if (portkey_chain(p, v, sc, L, msg, msglen) != FB_OK) return FB_EINVAL;
    if (L->order_len == 0) {
        snprintf(msg, msglen, "no target: name a provider or targets");
        return FB_EINVAL;
    }
    portkey_retry(p, v, L);
    portkey_rules_for(p, v, L);
    return FB_OK;
}

/* clang-format off */
static const sim_vocab_param portkey_words[] = {
    {"retry.attempts", SIM_VF_RETRIES, SIM_PK_COUNT, 0, NULL},
    {"request_timeout", SIM_VF_ATTEMPT_TIMEOUT_US, SIM_PK_MILLIS, 0, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

static const sim_vocab portkey_vocab = {
    NULL, "Portkey config", "Portkey", {NULL, NULL, NULL}, portkey_words};

const sim_preset scn_preset_portkey = {
    "portkey",
    "@portkey-ai/gateway (npm), open source",
    "1.15.2 (tag v1.15.2, commit ca771294)",
    "src/handlers/retryHandler.ts (retryRequest), src/handlers/handlerUtils.ts "
    "(tryTargetsRecursively, recursiveAfterRequestHookHandler), "
    "src/handlers/services/requestContext.ts (normalizeRetryConfig, requestTimeout), "
    "src/globals.ts (MAX_RETRY_LIMIT_MS, POSSIBLE_RETRY_STATUS_HEADERS, RETRY_STATUS_CODES), "
    "patches/async-retry+1.3.3.patch; async-retry 1.3.3 and retry 0.13 (their defaults)",
    "the Portkey AI Gateway's retries and fallback strategy",
    portkey_params,
    portkey_rules,
    portkey_not_modelled,
    portkey_apply,
    "rules read from @portkey-ai/gateway 1.15.2 source; compared with it run here through the "
    "mock in tests/e2e/diff_gateway.sh (not recorded); each decision with its source and its "
    "unit test in docs/presets-portkey.md",
    &portkey_vocab,
};
