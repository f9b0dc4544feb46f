/*
 * preset_envoy.c - Envoy: the route's retry policy (retry_on, num_retries,
 * the jittered exponential back-off, the route timeout) and its cluster's
 * retry circuit breaker and outlier detection. The rules were read from the
 * files cited, at the commits named (docs/presets.md).
 */
#include "scenario/presetint.h"

#include <math.h>
#include <string.h>

#include "scenario/loadint.h"

enum {
    ON_5XX,
    ON_GATEWAY,
    ON_RESET,
    ON_CONNECT,
    ON_RATELIMITED,
    ON_4XX,
    ON_REFUSED,
    ON_CODES,
    ON_HEADERS,
    ON_H3,
    ON_N
};

static const char *const envoy_retry_on[] = {"5xx",
                                             "gateway-error",
                                             "reset",
                                             "connect-failure",
                                             "envoy-ratelimited",
                                             "retriable-4xx",
                                             "refused-stream",
                                             "retriable-status-codes",
                                             "retriable-headers",
                                             "http3-post-connect-failure",
                                             NULL};
static const char *const envoy_lb[] = {"ROUND_ROBIN", "RANDOM", "LEAST_REQUEST",
                                       "RING_HASH",   "MAGLEV", NULL};

static const sim_param envoy_params[] = {
    PRESET_PARAM("retry_on", SIM_PK_CSV, .names = envoy_retry_on, .def_doc = "none (no retries)",
                 .doc = "the retry conditions (RetryPolicy.retry_on, comma-separated)"),
    PRESET_PARAM("num_retries", SIM_PK_COUNT, .hi = 1000, .def_doc = "1",
                 .doc = "retries after the first attempt"),
    PRESET_PARAM("per_try_timeout", SIM_PK_PROTO_DURATION, .lo = 0.001, .hi = 1e6,
                 .def_doc = "none (the route timeout)", .doc = "each attempt's timeout"),
    PRESET_PARAM(
        "timeout", SIM_PK_PROTO_DURATION, .hi = 1e6, .def_doc = "15s",
        .doc = "the route timeout: the whole request, retries and back-off included; 0s: none"),
    PRESET_PARAM("retry_back_off", SIM_PK_OBJECT, .def_doc = "{base_interval: 0.025s}",
                 .doc = "the back-off"),
    PRESET_PARAM("retry_back_off.base_interval", SIM_PK_PROTO_DURATION, .lo = 0.001, .hi = 1e6,
                 .def_doc = "0.025s", .doc = "B: retry n waits U[0, B * 2^(n-1)) ms"),
    PRESET_PARAM("retry_back_off.max_interval", SIM_PK_PROTO_DURATION, .lo = 0.001, .hi = 1e6,
                 .def_doc = "10 * base_interval", .doc = "the cap of the interval"),
    PRESET_PARAM("retriable_status_codes", SIM_PK_STATUSES, .def_doc = "none",
                 .doc = "retried with retriable-status-codes"),
    PRESET_PARAM(
        "max_retries", SIM_PK_COUNT, .hi = 1000000, .def_doc = "3",
        .doc =
            "circuit_breakers.thresholds[].max_retries: retries in progress at once per instance, "
            "when there is no retry_budget"),
    PRESET_PARAM("retry_budget", SIM_PK_OBJECT, .def_doc = "none",
                 .doc = "circuit_breakers.thresholds[].retry_budget: replaces max_retries"),
    PRESET_PARAM("retry_budget.budget_percent", SIM_PK_PROTO_PERCENT, .hi = 100, .def_doc = "20",
                 .doc = "retries in progress may be this % of the requests in progress"),
    PRESET_PARAM("retry_budget.min_retry_concurrency", SIM_PK_COUNT, .lo = 1, .hi = 1000000,
                 .def_doc = "3", .doc = "... but always at least this many"),
    PRESET_PARAM("outlier_detection", SIM_PK_OBJECT, .def_doc = "none (no ejection)",
                 .doc = "the cluster's outlier detection (consecutive 5xx)"),
    PRESET_PARAM("outlier_detection.consecutive_5xx", SIM_PK_COUNT, .lo = 1, .hi = 1000000,
                 .def_doc = "5", .doc = "5xx (and local errors) in a row that eject a host"),
    PRESET_PARAM("outlier_detection.interval", SIM_PK_PROTO_DURATION, .lo = 0.001, .hi = 1e6,
                 .def_doc = "10s",
                 .doc = "the sweep period: hosts come back, and the multiplier decays, at sweeps"),
    PRESET_PARAM("outlier_detection.base_ejection_time", SIM_PK_PROTO_DURATION, .lo = 0.001,
                 .hi = 1e6, .def_doc = "30s", .doc = "ejection time = base * multiplier"),
    PRESET_PARAM("outlier_detection.max_ejection_time", SIM_PK_PROTO_DURATION, .lo = 0.001,
                 .hi = 1e7, .def_doc = "max(300s, base_ejection_time)",
                 .doc = "the ejection time's cap"),
    PRESET_PARAM("outlier_detection.max_ejection_percent", SIM_PK_COUNT, .hi = 100, .def_doc = "10",
                 .doc = "hosts ejected at once stay under this % of the cluster's"),
    PRESET_PARAM("outlier_detection.enforcing_consecutive_5xx", SIM_PK_COUNT, .hi = 100,
                 .def_doc = "100", .doc = "% of detections enforced (0 and 100 modelled)"),
    PRESET_PARAM("lb_policy", SIM_PK_WORD, .names = envoy_lb, .def_doc = "ROUND_ROBIN",
                 .doc = "how each attempt picks a host"),
    PRESET_PARAM("hosts", SIM_PK_WORDS, .def_doc = "every LLM provider",
                 .doc = "the cluster's hosts: scenario providers"),
    {0},
};

static const char *const envoy_rules[] = {
    "the cluster's hosts are the scenario's providers (hosts): every attempt, retries too, is "
    "sent to the host the load balancer picks among those not ejected: ROUND_ROBIN rotates per "
    "instance (pod), from the first host (a pod the autoscaler starts again starts over), "
    "RANDOM draws; a retry may land on the same host",
    "no retry_on, no retries; else up to num_retries retries of: 5xx any 5xx; gateway-error 502, "
    "503, 504; reset, 5xx and gateway-error a reset or refused connection; connect-failure a "
    "refused connection; retriable-4xx 409; retriable-status-codes the listed statuses; a "
    "per_try_timeout with 5xx, gateway-error or reset (a local reset: router.cc onPerTryTimeout; "
    "retry_state_impl.cc wouldRetryFromHeaders, wouldRetryFromReset)",
    "retry n waits a whole number of ms uniform in [0, min(B * 2^(n-1), max_interval)) "
    "(JitteredExponentialBackOffStrategy: a uniform 64-bit draw % interval), B = base_interval (25 "
    "ms), "
    "max_interval 10 B by default",
    "timeout (15 s) bounds the whole request from its start, back-offs included; "
    "per_try_timeout each attempt; Retry-After is not read",
    "a retry is made only while the instance's retries in progress are fewer than max_retries "
    "(3), or with a retry_budget than max(min_retry_concurrency, budget_percent % of the "
    "attempts in progress, truncated); a retry is in progress from its grant until its "
    "attempt ends (RetryBudgetImpl::max, RetryStateImpl::resetRetry)",
    "outlier detection, per instance: consecutive_5xx 5xx responses, resets, refused "
    "connections or timeouts in a row (any other response resets the run, 4xx included) eject "
    "the host, unless the hosts ejected are already max_ejection_percent % or more of the "
    "cluster's (then the run restarts); an ejected host is not picked and comes back, healthy, "
    "at the first interval sweep at least base_ejection_time * k after its ejection, capped at "
    "max_ejection_time; k grows by one per ejection and shrinks by one per sweep the host spends "
    "healthy (outlier_detection_impl.cc ejectHost, checkHostForUneject)",
    NULL,
};

static const char *const envoy_not_modelled[] = {
    "the panic threshold (healthy_panic_threshold: with too few healthy hosts Envoy routes to "
    "ejected ones); fusebox ends such a request unanswered",
    "success-rate and failure-percentage ejection, consecutive_gateway_failure, local-origin "
    "splitting, max_ejection_time_jitter, enforcing percentages other than 0 and 100",
    "retry_host_predicate (previous_hosts), host weights, priorities, lb_policy other than "
    "ROUND_ROBIN and RANDOM, hedging",
    "ROUND_ROBIN's first pick at a random index (EdfLoadBalancerBase's seed_, "
    "load_balancing_policies/common/load_balancer_impl.cc e01a970a, taken by "
    "round_robin/round_robin_lb.h 964dd462): every instance starts at the first host",
    "rate_limited_retry_back_off (reset headers); envoy-ratelimited, retriable-headers and "
    "refused-stream conditions (fusebox has no such replies)",
    "max_ejection_percent as Envoy counts it since envoyproxy/envoy#27624 (the host about to be "
    "ejected included: 100 * (ejected + 1) / hosts <= the limit): fusebox ejects while the "
    "hosts already out are under it, so with 3 hosts, 2 failing and 50% it ejects 2 where "
    "Envoy ejects 1 (docs/presets-envoy.md; the test that shows it is skipped)",
    NULL,
};

/* The hosts: the listed providers, else every LLM provider; one group. */
static int envoy_hosts(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                       sim_layer *L, char *msg, size_t msglen) {
    const cJSON *hosts = scn__preset_json_of(scn__preset_given(p, v, "hosts"));
    if (hosts) {
        L->order_len = 0;
        size_t i = 0;
        for (const cJSON *h = hosts->child; h; h = h->next, i++) {
            char where[32];
            snprintf(where, sizeof where, "hosts[%zu]", i);
            int q = scn__preset_provider_index(sc, h->valuestring, where, msg, msglen);
            if (q < 0) return FB_EINVAL;
            for (uint32_t k = 0; k < L->order_len; k++)
                if (L->order[k] == q) {
                    snprintf(msg, msglen, "%s: '%s' is listed twice", where, h->valuestring);
                    return FB_EINVAL;
                }
            L->order[L->order_len++] = (uint8_t)q;
        }
    }
    const sim_param_value *lb = scn__preset_given(p, v, "lb_policy");
    if (lb && lb->word >= 2) {
        snprintf(msg, msglen, "lb_policy %s is not modelled (ROUND_ROBIN or RANDOM)",
                 envoy_lb[lb->word]);
        return FB_EINVAL;
    }
    L->pick = lb && lb->word == 1 ? FB_PICK_RANDOM : FB_PICK_ROUND_ROBIN;
    memset(L->group, 0, sizeof L->group);
    L->routes = true;
    return FB_OK;
}

/* A rule and what the outlier detector makes of it (5xx and local errors: failures). */
static void envoy_rule(sim_status_rule *r, bool failure) {
    r->effect = (int8_t)(failure ? FB_EFFECT_FAILURE : FB_EFFECT_SUCCESS);
}

/* retry_on as rules: which failures are retried; nothing falls back (one cluster). */
static void envoy_rules_for(const sim_param_value *on, const sim_param_value *codes, sim_layer *L) {
    bool c[ON_N] = {false};
    for (uint32_t i = 0; on && i < on->list_count; i++) c[on->list[i]] = true;
    bool any5 = c[ON_5XX], gw = c[ON_GATEWAY], reset = any5 || gw || c[ON_RESET];
    for (uint32_t i = 0; c[ON_CODES] && codes && i < codes->list_count; i++)
        envoy_rule(scn__preset_status_rule(L, codes->list[i], 1, 0), codes->list[i] >= 500);
    envoy_rule(scn__preset_status_rule(L, 409, c[ON_4XX], 0), false);
    envoy_rule(scn__preset_status_rule(L, 408, 0, 0), false);
    for (int st = 502; st <= 504; st++)
        envoy_rule(scn__preset_status_rule(L, st, any5 || gw, 0), true);
    envoy_rule(scn__preset_transport_rule(L, FB_TRANSPORT_CONNECT, reset || c[ON_CONNECT], 0),
               true);
    envoy_rule(scn__preset_transport_rule(L, FB_TRANSPORT_RESET, reset, 0), true);
    envoy_rule(scn__preset_transport_rule(L, FB_TRANSPORT_OTHER, reset, 0), true);
    /* a per-try timeout resets the stream (router.cc onPerTryTimeout: maybeRetryReset(LocalReset))
     */
    envoy_rule(scn__preset_outcome_rule(L, FB_OUT_TIMEOUT, reset, 0), true);
    envoy_rule(scn__preset_outcome_rule(L, FB_OUT_TRANSIENT, any5, 0), true); /* the other 5xx */
    scn__preset_outcome_rule(L, FB_OUT_REJECTED, 0, 0)->effect = FB_EFFECT_IGNORE;
    envoy_rule(scn__preset_rule(L), false); /* 4xx and the rest: returned, and they end a 5xx run */
    L->rules[L->rule_count - 1].retry = 0;
    L->rules[L->rule_count - 1].fallback = 0;
}

/* RetryStateImpl: num_retries, JitteredExponentialBackOffStrategy, the route timeout. */
static int envoy_retry(const sim_preset *p, const sim_param_value *v, sim_layer *L, char *msg,
                       size_t msglen) {
    const sim_param_value *on = scn__preset_given(p, v, "retry_on");
    const sim_param_value *n = scn__preset_given(p, v, "num_retries");
    const sim_param_value *base = scn__preset_given(p, v, "retry_back_off.base_interval");
    const sim_param_value *max = scn__preset_given(p, v, "retry_back_off.max_interval");
    const sim_param_value *per_try = scn__preset_given(p, v, "per_try_timeout");
    const sim_param_value *timeout = scn__preset_given(p, v, "timeout");
    uint32_t retries = on && on->list_count > 0 ? (n ? (uint32_t)n->num : 1) : 0;
    /* a base below 1 ms is rounded up to 1 ms (route_components.proto) */
    fb_time_us base_us = base ? base->us : 25 * FB_US_PER_MS;
    if (base_us < FB_US_PER_MS) base_us = FB_US_PER_MS;
    fb_retry_config *r =
        scn__preset_gateway_retry(L, retries, base_us, max ? max->us : base_us * 10);
    if (r->delay_us_max < r->base_us) {
        snprintf(msg, msglen, "retry_back_off.max_interval must be >= base_interval");
        return FB_EINVAL;
    }
    r->jitter = FB_JITTER_FULL; /* a uniform draw % interval: whole ms in [0, interval) */
    r->resolution_us = FB_US_PER_MS;
    r->retry_after = FB_RETRY_AFTER_IGNORE;
    r->attempt_timeout_us = per_try ? per_try->us : 0;
    r->deadline_us = timeout ? timeout->us : 15 * FB_US_PER_S;
    envoy_rules_for(on, scn__preset_given(p, v, "retriable_status_codes"), L);
    return FB_OK;
}

/* The cluster's retry circuit breaker: max_retries, or the retry budget. */
static void envoy_budget(const sim_preset *p, const sim_param_value *v, sim_layer *L) {
    const sim_param_value *mr = scn__preset_given(p, v, "max_retries");
    const sim_param_value *pct = scn__preset_given(p, v, "retry_budget.budget_percent");
    const sim_param_value *min = scn__preset_given(p, v, "retry_budget.min_retry_concurrency");
    L->budget = (fb_budget_config){.kind = FB_BUDGET_CONCURRENCY};
    if (scn__preset_given(p, v, "retry_budget")) {
        L->budget.budget_percent = pct ? pct->num : 20.0;
        L->budget.min_retry_concurrency = min ? (uint32_t)min->num : 3;
    } else {
        /* max_retries alone: a percentage that always truncates to 0 leaves the minimum */
        L->budget.budget_percent = 1e-12;
        L->budget.min_retry_concurrency = mr ? (uint32_t)mr->num : 3;
    }
}

/* DetectorImpl: consecutive 5xx, ejection time, sweeps, the ejection limit. */
static int envoy_outliers(const sim_preset *p, const sim_param_value *v, sim_layer *L, char *msg,
                          size_t msglen) {
    if (!scn__preset_given(p, v, "outlier_detection")) return FB_OK;
    const sim_param_value *c5 = scn__preset_given(p, v, "outlier_detection.consecutive_5xx");
    const sim_param_value *iv = scn__preset_given(p, v, "outlier_detection.interval");
    const sim_param_value *base = scn__preset_given(p, v, "outlier_detection.base_ejection_time");
    const sim_param_value *max = scn__preset_given(p, v, "outlier_detection.max_ejection_time");
    const sim_param_value *pct = scn__preset_given(p, v, "outlier_detection.max_ejection_percent");
    const sim_param_value *enf =
        scn__preset_given(p, v, "outlier_detection.enforcing_consecutive_5xx");
    if (enf && enf->num != 0 && enf->num != 100) {
        snprintf(msg, msglen,
                 "outlier_detection.enforcing_consecutive_5xx: 0 or 100 (a "
                 "probability in between is not modelled)");
        return FB_EINVAL;
    }
    if (enf && enf->num == 0) return FB_OK;
    fb_breaker_config b = {
        .mode = FB_BREAKER_MODE_CONSECUTIVE,
        .consecutive_failures = c5 ? (uint32_t)c5->num : 5, /* ++run == threshold */
        .open_us = base ? base->us : 30 * FB_US_PER_S,
        .open_growth = FB_OPEN_GROWTH_LINEAR_DECAY,
        .recovery = FB_RECOVER_CLOSE,
        .late_results = FB_LATE_COUNT, /* the monitor counts every response */
        .honor_hint = FB_OFF,
    };
    b.decay_us = b.open_align_us = iv ? iv->us : 10 * FB_US_PER_S;
    fb_time_us dflt_max = b.open_us > 300 * FB_US_PER_S ? b.open_us : 300 * FB_US_PER_S;
    b.open_us_max = max ? max->us : dflt_max;
    if (b.open_us_max < b.open_us) {
        snprintf(msg, msglen,
                 "outlier_detection: max_ejection_time cannot be smaller than "
                 "base_ejection_time");
        return FB_EINVAL;
    }
    for (uint32_t i = 0; i < L->order_len; i++) {
        L->per_provider[L->order[i]].has_breaker = true;
        L->per_provider[L->order[i]].breaker = b;
    }
    L->eject_limit = true;
    L->eject_max_percent = pct ? pct->num : 10.0;
    return FB_OK;
}

static int envoy_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                       sim_layer *L, char *msg, size_t msglen) {
    if (envoy_hosts(p, v, sc, L, msg, msglen) != FB_OK ||
        envoy_retry(p, v, L, msg, msglen) != FB_OK || envoy_outliers(p, v, L, msg, msglen) != FB_OK)
        return FB_EINVAL;
    envoy_budget(p, v, L);
    const sim_param_value *mr = scn__preset_given(p, v, "max_retries");
    if (mr && mr->num == 0 && !scn__preset_given(p, v, "retry_budget")) {
        /* no retry may ever be in progress: no retries */
        L->budget = (fb_budget_config){0};
        L->retry.retries = 0;
        L->retry.attempts = 1;
    }
    return FB_OK;
}

/* clang-format off */
static const sim_vocab_param envoy_words[] = {
    {"outlier_detection.consecutive_5xx", SIM_VF_CONSECUTIVE, SIM_PK_COUNT, 0, NULL},
    {"outlier_detection.base_ejection_time", SIM_VF_OPEN_US, SIM_PK_PROTO_DURATION, 0, NULL},
    {"outlier_detection.max_ejection_time", SIM_VF_OPEN_US_MAX, SIM_PK_PROTO_DURATION, 0, NULL},
    {"outlier_detection.interval", SIM_VF_OPEN_ALIGN_US, SIM_PK_PROTO_DURATION, 0, NULL},
    {"num_retries", SIM_VF_RETRIES, SIM_PK_COUNT, 0, NULL},
    {"per_try_timeout", SIM_VF_ATTEMPT_TIMEOUT_US, SIM_PK_PROTO_DURATION, 0, NULL},
    {"timeout", SIM_VF_DEADLINE_US, SIM_PK_PROTO_DURATION, 0, NULL},
    {"retry_back_off.base_interval", SIM_VF_BASE_US, SIM_PK_PROTO_DURATION, 0, NULL},
    {"retry_back_off.max_interval", SIM_VF_DELAY_MAX_US, SIM_PK_PROTO_DURATION, 0, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

/* outlier detection ejects a host and brings it back: no half-open */
static const sim_vocab envoy_vocab = {
    "Envoy outlier_detection",    "Envoy retry_policy", "Envoy",
    {"healthy", "ejected", NULL}, envoy_words,
};

const sim_preset scn_preset_envoy = {
    "envoy",
    "Envoy proxy: route retry_policy, cluster outlier_detection",
    "v1.30: keys and defaults from the v1.30.4 API docs; behaviour from the source files at "
    "the blobs named (read from envoyproxy/envoy's history, not at the v1.30 tag)",
    "source/common/router/retry_state_impl.cc (e78906c5: wouldRetryFromHeaders, "
    "wouldRetryFromReset, shouldRetry), source/common/common/backoff_strategy.cc "
    "(JitteredExponentialBackOffStrategy::nextBackOffMs), "
    "source/common/upstream/outlier_detection_impl.cc (ejectHost, checkHostForUneject, "
    "putHttpResponseCode), source/common/upstream/resource_manager_impl.h (RetryBudgetImpl::max); "
    "api/envoy/config/route/v3/route_components.proto, "
    "api/envoy/config/cluster/v3/outlier_detection.proto and circuit_breaker.proto (defaults)",
    "Envoy's retries, retry budget and outlier ejection across a cluster's hosts",
    envoy_params,
    envoy_rules,
    envoy_not_modelled,
    envoy_apply,
    "rules read from Envoy's source at the blobs named and the v1.30.4 API docs (not run "
    "here); each decision with its source and its unit test in docs/presets-envoy.md",
    &envoy_vocab,
};
