/*
 * preset_litellm.c - the LiteLLM Router: deployments of model groups, its
 * RetryPolicy and AllowedFailsPolicy per exception class, cooldowns, and the
 * fallbacks to other groups. The rules were read from the files cited, at the
 * commits named (docs/presets.md).
 */
#include "scenario/presetint.h"

#include <math.h>
#include <string.h>

#include "scenario/loadint.h"

/*
 * LiteLLM's exception classes (litellm/exceptions.py), and the fields of
 * RetryPolicy and AllowedFailsPolicy that name them.
 */
enum lclass {
    LC_BAD_REQUEST,
    LC_AUTH,
    LC_TIMEOUT,
    LC_RATE_LIMIT,
    LC_CONTENT_POLICY,
    LC_ISE,
    LC_N,
    LC_NONE = LC_N /* a class no policy field names */
};

static const char *const retry_fields[LC_N] = {
    "BadRequestErrorRetries", "AuthenticationErrorRetries",         "TimeoutErrorRetries",
    "RateLimitErrorRetries",  "ContentPolicyViolationErrorRetries", "InternalServerErrorRetries"};
static const char *const fails_fields[LC_N] = {"BadRequestErrorAllowedFails",
                                               "AuthenticationErrorAllowedFails",
                                               "TimeoutErrorAllowedFails",
                                               "RateLimitErrorAllowedFails",
                                               "ContentPolicyViolationErrorAllowedFails",
                                               "InternalServerErrorAllowedFails"};

static const char *const litellm_strategies[] = {"simple-shuffle",
                                                 "least-busy",
                                                 "usage-based-routing",
                                                 "latency-based-routing",
                                                 "cost-based-routing",
                                                 "usage-based-routing-v2",
                                                 NULL};

static const sim_param litellm_params[] = {
    PRESET_PARAM(
        "model_list", SIM_PK_JSON, .def_doc = "every LLM provider, one model group 'default'",
        .doc =
            "deployments: [{\"model_name\": GROUP, \"provider\": PROVIDER, \"litellm_params\": "
            "{\"model\", \"weight\", \"rpm\", \"tpm\", \"cooldown_time\"}, \"model_info\": "
            "{\"id\"}}]; "
            "the deployment is the scenario provider \"provider\" names, else the first of "
            "model_info.id, litellm_params.model and LiteLLM's provider of that model (its prefix: "
            "\"azure/x\" azure; gpt-*, o1*, o3*, o4*, chatgpt-*, dall-e-*, text-embedding-*, "
            "whisper-*, tts-*: openai; claude-*: anthropic) that names one; one provider per "
            "deployment"),
    PRESET_PARAM(
        "map_provider", SIM_PK_JSON, .def_doc = "none",
        .doc =
            "{NAME: PROVIDER}: a deployment whose model_info.id, litellm_params.model or LiteLLM's "
            "provider of that model is NAME deploys the scenario provider PROVIDER (\"azure\": "
            "\"openai\" runs a config's Azure deployments as the scenario's openai without editing "
            "the config; fusebox run --map-provider azure=openai with --policy litellm:FILE)"),
    PRESET_PARAM("model", SIM_PK_JSON, .def_doc = "the first model_name",
                 .doc = "the model group the requests ask for (the request's model)"),
    PRESET_PARAM(
        "num_retries", SIM_PK_COUNT, .hi = 100, .def_doc = "2",
        .doc =
            "retries of a model group after its first failure (openai.DEFAULT_MAX_RETRIES); a set "
            "litellm.num_retries (litellm_settings) is the one that counts: it rides on every "
            "exception "
            "and async_function_with_retries prefers it"),
    PRESET_PARAM("retry_after", SIM_PK_SECONDS, .hi = 3600, .def_doc = "0",
                 .doc = "the least a retry backoff waits (capped at 8 s like the backoff)"),
    PRESET_PARAM("timeout", SIM_PK_SECONDS, .lo = 0.001, .hi = 1e6, .def_doc = "6000",
                 .doc = "seconds an attempt may take (litellm.request_timeout)"),
    PRESET_PARAM(
        "allowed_fails", SIM_PK_COUNT, .hi = 1000000, .def_doc = "3 (litellm.allowed_fails)",
        .doc =
            "cooldown after more failures than this within cooldown_time of each other; only when "
            "set to another value than 3 (else the percentage rule)"),
    PRESET_PARAM("allowed_fails_policy", SIM_PK_OBJECT, .def_doc = "none",
                 .doc = "allowed_fails per exception class (turns the allowed-fails rule on)"),
    PRESET_PARAM("allowed_fails_policy.BadRequestErrorAllowedFails", SIM_PK_COUNT, .hi = 1000000,
                 .def_doc = "none", .doc = "400s"),
    PRESET_PARAM("allowed_fails_policy.AuthenticationErrorAllowedFails", SIM_PK_COUNT,
                 .hi = 1000000, .def_doc = "none", .doc = "401s"),
    PRESET_PARAM("allowed_fails_policy.TimeoutErrorAllowedFails", SIM_PK_COUNT, .hi = 1000000,
                 .def_doc = "none", .doc = "timeouts and 408s"),
    PRESET_PARAM("allowed_fails_policy.RateLimitErrorAllowedFails", SIM_PK_COUNT, .hi = 1000000,
                 .def_doc = "none", .doc = "429s"),
    PRESET_PARAM("allowed_fails_policy.ContentPolicyViolationErrorAllowedFails", SIM_PK_COUNT,
                 .hi = 1000000, .def_doc = "none", .doc = "content-policy 400s"),
    PRESET_PARAM("allowed_fails_policy.InternalServerErrorAllowedFails", SIM_PK_COUNT,
                 .hi = 1000000, .def_doc = "none",
                 .doc = "no effect: get_allowed_fails_from_policy has no InternalServerError "
                        "branch (BerriAI/litellm"
                        "#29283, #37805); 500s take allowed_fails"),
    PRESET_PARAM("retry_policy", SIM_PK_OBJECT, .def_doc = "none",
                 .doc = "num_retries per exception class of a group's first failure"),
    PRESET_PARAM("retry_policy.BadRequestErrorRetries", SIM_PK_COUNT, .hi = 100,
                 .def_doc = "num_retries",
                 .doc = "400s (context-length and content-policy ones too: checked first)"),
    PRESET_PARAM("retry_policy.AuthenticationErrorRetries", SIM_PK_COUNT, .hi = 100,
                 .def_doc = "num_retries", .doc = "401s"),
    PRESET_PARAM("retry_policy.TimeoutErrorRetries", SIM_PK_COUNT, .hi = 100,
                 .def_doc = "num_retries", .doc = "timeouts, 408s"),
    PRESET_PARAM("retry_policy.RateLimitErrorRetries", SIM_PK_COUNT, .hi = 100,
                 .def_doc = "num_retries", .doc = "429s"),
    PRESET_PARAM("retry_policy.ContentPolicyViolationErrorRetries", SIM_PK_COUNT, .hi = 100,
                 .def_doc = "num_retries",
                 .doc = "content-policy 400s when BadRequestErrorRetries is not set"),
    PRESET_PARAM(
        "retry_policy.InternalServerErrorRetries", SIM_PK_COUNT, .hi = 100,
        .def_doc = "num_retries",
        .doc = "no effect: get_num_retries_from_retry_policy has no InternalServerError branch "
               "(BerriAI/litellm#29283, #37805); 500s take num_retries"),
    PRESET_PARAM(
        "cooldown_time", SIM_PK_SECONDS, .hi = 86400, .def_doc = "5",
        .doc = "seconds a deployment cools down (0 means the default 5: `cooldown_time or 5`)"),
    PRESET_PARAM("disable_cooldowns", SIM_PK_BOOL, .def_doc = "false",
                 .doc = "no deployment is ever cooled down"),
    PRESET_PARAM("fallbacks", SIM_PK_JSON, .def_doc = "none",
                 .doc = "[{GROUP: [GROUP, ...]}]: the groups tried after the requested one, in "
                        "order; \"*\" for "
                        "any group"),
    PRESET_PARAM("default_fallbacks", SIM_PK_JSON, .def_doc = "none",
                 .doc = "[GROUP, ...]: fallbacks for \"*\""),
    PRESET_PARAM("context_window_fallbacks", SIM_PK_JSON, .def_doc = "none",
                 .doc = "[{GROUP: [GROUP, ...]}] after a context-window error (then not retried)"),
    PRESET_PARAM("content_policy_fallbacks", SIM_PK_JSON, .def_doc = "none",
                 .doc = "[{GROUP: [GROUP, ...]}] after a content-policy error (then not retried)"),
    PRESET_PARAM("routing_strategy", SIM_PK_WORD, .names = litellm_strategies,
                 .def_doc = "simple-shuffle",
                 .doc = "how a deployment is picked (simple-shuffle only is modelled)"),
    PRESET_PARAM("redis_host", SIM_PK_JSON, .def_doc = "none",
                 .doc = "with it (or redis_url) the cooldowns are shared through Redis"),
    PRESET_PARAM("redis_url", SIM_PK_JSON, .def_doc = "none", .doc = "as redis_host"),
    PRESET_PARAM("redis_port", SIM_PK_COUNT, .lo = 1, .hi = 65535, .def_doc = "none",
                 .doc = "accepted with redis_host"),
    PRESET_PARAM("redis_password", SIM_PK_JSON, .def_doc = "none",
                 .doc = "accepted with redis_host"),
    {0},
};

static const char *const litellm_rules[] = {
    "deployments are the scenario's providers; a model group's deployments form one group: every "
    "attempt, retries too, picks one of its deployments not in cooldown at random (simple-shuffle; "
    "weighted by weight, else rpm, else tpm, when the deployments set it)",
    "a group is tried 1 + num_retries times; a RetryPolicy field for the class of the group's "
    "first failure replaces num_retries, asked in get_retry_from_policy.py's order at the cited "
    "commit: BadRequestErrorRetries first (a content-policy or context-window error is a "
    "BadRequestError), then Authentication, Timeout, RateLimit, ContentPolicyViolation "
    "(BerriAI/litellm#19878 later moved BadRequest last); no InternalServerError field is read "
    "(#29283, #37805): a 500 takes num_retries",
    "then the fallback groups of fallbacks[model], else of the last fallbacks[\"*\"] entry "
    "(get_fallback_model_group keeps the last \"*\"; Router.__init__ appends default_fallbacks "
    "as one, so default_fallbacks beat a \"*\" of fallbacks), in order, each with its own "
    "retries",
    "not retried (should_retry_this_error, at a group's first failure): a 404; a 401 in a group of "
    "one deployment; a context-window or content-policy error when context_window_fallbacks or "
    "content_policy_fallbacks is set; any error once no deployment of the group is out of "
    "cooldown. Every other error is retried, 400s included",
    "the wait before a retry is 0 when the group has more than one deployment and one of them is "
    "out of cooldown (the one that failed too); else a Retry-After of 0 < d <= 60 s waits d + "
    "U(0, 0.75) s, and otherwise min(max(0.5 * 2^k, retry_after), 8) + U(0, 0.75) s with k = "
    "max_retries - remaining_retries: 0 before the first and the second retry, n - 2 before "
    "the n-th (router.py f292d1ae async_function_with_retries: remaining_retries is num_retries "
    "at the first sleep and num_retries - j after the loop's j-th failed retry, j from 0)",
    "a retry that finds every deployment of the group cooling down counts as an attempt "
    "(RouterRateLimitError) and waits its backoff",
    "only a group's first failure is judged (async_function_with_retries, router.py f292d1ae): "
    "it decides whether the group is retried and how often; the loop then retries whatever "
    "fails (a 404 or a content-policy error too), every sleep reads the first failure's "
    "Retry-After (_time_to_sleep_before_retry(e=original_exception); BerriAI/litellm#20725 later "
    "made it the latest), and `raise original_exception` sends the first failure to the "
    "fallbacks (its class picks context_window_fallbacks or content_policy_fallbacks)",
    "the error a request ends with is the requested group's first failure: when the fallbacks "
    "fail too, async_function_with_fallbacks_common_utils catches the fallback's exception and "
    "raises original_exception (router.py f292d1ae); a client in front of the proxy sees that "
    "status and its Retry-After, and a 4xx first ends the request as a 4xx",
    "errors fall back (to the groups above), except: a context-window error goes to "
    "context_window_fallbacks[model] when context_window_fallbacks is set (none for the group: "
    "the request ends); a content-policy error likewise to content_policy_fallbacks",
    "cooldown (no allowed_fails or allowed_fails = 3, no allowed_fails_policy): every error and "
    "every success is counted per deployment and instance, each count expiring 60 s after its "
    "first increment (InMemoryCache.set_cache keeps an unexpired TTL: allow_ttl_override), then "
    "starting again at 0; on an error with status 429, 401, 408, 404 or >= 500 (not a 4xx "
    "otherwise, "
    "not a connection error: APIConnectionError), the deployment cools down when: it is a 429 "
    "and the group has more deployments; or failures / (failures + successes) > 0.5 with at "
    "least 5 requests in a group of several (DEFAULT_FAILURE_THRESHOLD_MINIMUM_REQUESTS, PR "
    "#17464); or it is 100% of at least 1000 requests (any group); or the status is not "
    "retryable (401, 404)",
    "cooldown with allowed_fails set (to another value than 3) or allowed_fails_policy: a "
    "deployment cools down at the failure that makes more than allowed_fails (the policy's field "
    "for its class when set and not 0: `... or allowed_fails`; no InternalServerError field is "
    "read) failures counted since the counter started, which is cooldown_time after its first "
    "failure (the TTL is set once, not renewed); the failure that cools is not counted",
    "a cooldown lasts the deployment's litellm_params.cooldown_time, else the response's "
    "Retry-After (seconds; 0 cools nothing), else cooldown_time (5 s); a Retry-After that is not "
    "a whole number of seconds (\"2.5\") is no Retry-After, for the cooldown and the retry's "
    "wait alike: LiteLLM reads it with int(), which raises (utils.py _calculate_retry_after, "
    "_get_retry_after_from_exception_header); it ends by itself "
    "(strictly after, a cache TTL): no probes, no half-open; an error while cooling down does not "
    "restart it (add_deployment_to_cooldown's set_cache keeps the unexpired TTL)",
    "with redis_host or redis_url the other instances (pods) learn a cooldown at their next read "
    "of Redis, every 10 s (DualCache redis_batch_cache_expiry, BerriAI/litellm PR #34836; PR "
    "#40025 later made it 1 s): pod k reads at k * 10 s / pods + m * 10 s; the counts stay "
    "per instance",
    "while Redis is unreachable (breaker_store.outages) an instance keeps its own cooldowns "
    "(DualCache.set_cache writes memory before Redis) and learns none of the others': a cooldown "
    "written then never reaches Redis (RedisCache.set_cache logs the error), a read then finds "
    "nothing new (RedisCache.async_batch_get_cache returns {}, DualCache keeps what memory had), "
    "so a cooldown written before the outage is learnt at the first read after it, if it still "
    "lasts (cooldown_cache.py 565caa59 add_deployment_to_cooldown, async_get_active_cooldowns; "
    "caching/dual_cache.py 015b9454; caching/redis_cache.py 0226cd83)",
    "timeout bounds each attempt; a stream that breaks after its first chunk is raised",
    NULL,
};

static const char *const litellm_not_modelled[] = {
    "routing strategies other than simple-shuffle; rpm/tpm limits (only their weights); "
    "enable_pre_call_checks",
    "the error a request ends with when the requested group made no call (every deployment "
    "cooling down): LiteLLM raises its RouterRateLimitError, fusebox the first failure a "
    "fallback group answered",
    "the sleep after the last retry before raising (router.py f292d1ae "
    "async_function_with_retries)",
    "fallbacks of fallback groups (one level: the requested group's), max_fallbacks",
    "deployment-level allowed_fails / allowed_fails_policy in model_info (PR #34416)",
    "the in-memory copy of a Redis cooldown expiring before the next read (PR #34836's gap on "
    "one instance)",
    "model_group_retry_policy, per-request num_retries, mock_testing_* keys",
    NULL,
};

/* The deployments of the model groups, read from model_list. */
typedef struct lgroups {
    char name[SIM_PROVIDERS_MAX][SIM_NAME_MAX];
    uint32_t count;
    int group_of[SIM_PROVIDERS_MAX]; /* by provider: -1 not a deployment */
    int entry_of[SIM_PROVIDERS_MAX]; /* by provider: its model_list index */
    uint32_t size[SIM_PROVIDERS_MAX];
    double weight[3][SIM_PROVIDERS_MAX];  /* weight, rpm, tpm; -1 unset */
    double cooldown_s[SIM_PROVIDERS_MAX]; /* litellm_params.cooldown_time; -1 unset */
    const cJSON *map;                     /* map_provider, or NULL */
} lgroups;

static int group_index(const lgroups *g, const char *name) {
    for (uint32_t i = 0; i < g->count; i++)
        if (strcmp(g->name[i], name) == 0) return (int)i;
    return -1;
}

/*
 * LiteLLM's provider of a model string (get_llm_provider,
 * litellm/litellm_core_utils/get_llm_provider_logic.py at b71180ca): the
 * prefix before the first "/" ("azure/gpt-4o" is azure's, "openai/gpt-4"
 * openai's); a bare name is looked up in LiteLLM's model lists, which come
 * from its cost map: here their OpenAI and Anthropic families by name
 * (gpt-, o1, o3, o4, chatgpt-, ft:gpt-, dall-e-, text-embedding-, whisper-,
 * tts-: openai; claude-: anthropic). NULL when none applies.
 */
static const char *litellm_provider_of(const char *model, char *buf, size_t len) {
    static const char *const openai[] = {"gpt-",     "o1",      "o3",      "o4",
                                         "chatgpt-", "ft:gpt-", "dall-e-", "text-embedding-",
                                         "whisper-", "tts-",    NULL};
    const char *slash = strchr(model, '/');
    if (slash && slash != model) {
        snprintf(buf, len, "%.*s", (int)(slash - model), model);
        return buf;
    }
    for (size_t i = 0; openai[i]; i++)
        if (strncmp(model, openai[i], strlen(openai[i])) == 0) return "openai";
    return strncmp(model, "claude-", 7) == 0 ? "anthropic" : NULL;
}

/* "openai, anthropic": the scenario's providers, for a message. */
static void provider_names(const sim_scenario *sc, char *out, size_t len) {
    size_t n = 0;
    out[0] = '\0';
    for (uint32_t k = 0; k < sc->provider_count && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", k ? ", " : "", sc->providers[k].name);
}

/* No candidate names a scenario provider: what was tried, and what there is. */
static int no_deployment_provider(const sim_scenario *sc, const char *where, const char *group,
                                  const char *id, const char *model, const char *prov, char *msg,
                                  size_t msglen) {
    const char *names[SIM_PROVIDERS_MAX + 1];
    for (uint32_t k = 0; k < sc->provider_count; k++) names[k] = sc->providers[k].name;
    names[sc->provider_count] = NULL;
    const char *s = scn__suggest(prov ? prov : model ? model : id, names);
    char list[SIM_PROVIDERS_MAX * (SIM_NAME_MAX + 2)];
    provider_names(sc, list, sizeof list);
    /* the map entry to suggest: LiteLLM's provider (else the model, the id) to the provider
     * the name suggests, else the first */
    const char *key = prov ? prov : model ? model : id;
    const char *to = s ? s : sc->provider_count ? sc->providers[0].name : "PROVIDER";
    snprintf(
        msg, msglen,
        "%s (model_name '%s'): no scenario provider for this deployment (model_info.id %s%s%s, "
        "litellm_params.model %s%s%s, LiteLLM's provider %s%s%s); the scenario's providers: "
        "%s%s%s%s (name one with the entry's model_info.id or \"provider\", or map it without "
        "editing the file: \"map_provider\": {\"%s\": \"%s\"} on the layer, or "
        "--map-provider %s=%s with --policy)",
        where, group, id ? "'" : "", id ? id : "none", id ? "'" : "", model ? "'" : "",
        model ? model : "none", model ? "'" : "", prov ? "'" : "", prov ? prov : "none",
        prov ? "'" : "", list, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "", key, to,
        key, to);
    return -1;
}

/*
 * The provider a model_list entry deploys: "provider" (that name, or an
 * error); else the first of model_info.id, litellm_params.model and
 * LiteLLM's provider of that model (litellm_provider_of) that names a
 * scenario provider, so a config written for LiteLLM maps onto a scenario
 * whose providers are named after the vendors.
 */
static int deployment_provider(const cJSON *e, const sim_scenario *sc, const cJSON *map,
                               const char *where, const char *group, char *msg, size_t msglen) {
    const char *name = scn__preset_string_at(e, "provider");
    if (name) return scn__preset_provider_index(sc, name, where, msg, msglen);
    const char *id = scn__preset_string_at(cJSON_GetObjectItemCaseSensitive(e, "model_info"), "id");
    const char *model =
        scn__preset_string_at(cJSON_GetObjectItemCaseSensitive(e, "litellm_params"), "model");
    if (!id && !model) {
        snprintf(msg, msglen, "%s: name its provider (\"provider\": NAME)", where);
        return -1;
    }
    char buf[SIM_NAME_MAX];
    const char *prov = model ? litellm_provider_of(model, buf, sizeof buf) : NULL;
    const char *tries[] = {id, model, prov};
    for (size_t t = 0; t < 3 && map; t++) { /* map_provider first: it says what is meant */
        const char *to = tries[t] ? scn__preset_string_at(map, tries[t]) : NULL;
        if (to) return scn_provider(sc, to); /* checked in litellm_groups */
    }
    for (size_t t = 0; t < 3; t++) {
        int i = tries[t] ? scn_provider(sc, tries[t]) : -1;
        if (i >= 0) return i;
    }
    return no_deployment_provider(sc, where, group, id, model, prov, msg, msglen);
}

/* litellm_params: weight, rpm, tpm, cooldown_time (model is read above). */
static int deployment_params(const cJSON *lp, lgroups *g, int p, const char *where, char *msg,
                             size_t msglen) {
    static const char *const keys[] = {"model", "weight", "rpm", "tpm", "cooldown_time", NULL};
    static const char *const weights[] = {"weight", "rpm", "tpm"};
    if (lp == NULL) return FB_OK;
    if (!cJSON_IsObject(lp) || scn__preset_known_keys(lp, keys, where, msg, msglen) != FB_OK) {
        if (!msg[0]) snprintf(msg, msglen, "%s: litellm_params is an object", where);
        return FB_EINVAL;
    }
    for (int k = 0; k < 3; k++) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(lp, weights[k]);
        if (w == NULL) continue;
        if (!cJSON_IsNumber(w) || !(w->valuedouble > 0) || w->valuedouble > 1e9) {
            snprintf(msg, msglen, "%s.%s: a number above 0", where, weights[k]);
            return FB_EINVAL;
        }
        g->weight[k][p] = w->valuedouble;
    }
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(lp, "cooldown_time");
    if (c == NULL) return FB_OK;
    if (!cJSON_IsNumber(c) || !(c->valuedouble >= 0) || c->valuedouble > 86400) {
        snprintf(msg, msglen, "%s.cooldown_time: seconds in [0, 86400]", where);
        return FB_EINVAL;
    }
    g->cooldown_s[p] = c->valuedouble;
    return FB_OK;
}

static int model_entry(const cJSON *e, size_t i, const sim_scenario *sc, lgroups *g, char *msg,
                       size_t msglen) {
    static const char *const keys[] = {"model_name", "provider", "litellm_params", "model_info",
                                       NULL};
    char where[96];
    snprintf(where, sizeof where, "model_list[%zu]", i);
    const char *group = scn__preset_string_at(e, "model_name");
    if (!cJSON_IsObject(e) || group == NULL || strlen(group) >= SIM_NAME_MAX) {
        snprintf(msg, msglen, "%s: an object with a model_name", where);
        return FB_EINVAL;
    }
    if (scn__preset_known_keys(e, keys, where, msg, msglen) != FB_OK) return FB_EINVAL;
    int p = deployment_provider(e, sc, g->map, where, group, msg, msglen);
    if (p < 0) return FB_EINVAL;
    if (g->group_of[p] >= 0) {
        char list[SIM_PROVIDERS_MAX * (SIM_NAME_MAX + 2)];
        provider_names(sc, list, sizeof list);
        snprintf(
            msg, msglen,
            "%s (model_name '%s'): deploys provider '%s' like model_list[%d]: each deployment "
            "is its own scenario provider (name another with model_info.id or \"provider\": one of "
            "%s)",
            where, group, sc->providers[p].name, g->entry_of[p], list);
        return FB_EINVAL;
    }
    int k = group_index(g, group);
    if (k < 0) {
        k = (int)g->count++;
        snprintf(g->name[k], SIM_NAME_MAX, "%s", group);
    }
    g->group_of[p] = k;
    g->entry_of[p] = (int)i;
    g->size[k]++;
    snprintf(where + strlen(where), sizeof where - strlen(where), ".litellm_params");
    return deployment_params(cJSON_GetObjectItemCaseSensitive(e, "litellm_params"), g, p, where,
                             msg, msglen);
}

/* model_list, or by default every LLM provider in one group "default". */
/* map_provider: an object whose values are scenario providers. */
static int provider_map(const cJSON *map, const sim_scenario *sc, char *msg, size_t msglen) {
    if (map == NULL) return FB_OK;
    if (!cJSON_IsObject(map)) {
        snprintf(msg, msglen, "map_provider: an object, {NAME: PROVIDER}");
        return FB_EINVAL;
    }
    for (const cJSON *m = map->child; m; m = m->next) {
        if (cJSON_IsString(m) && scn_provider(sc, m->valuestring) >= 0) continue;
        char list[SIM_PROVIDERS_MAX * (SIM_NAME_MAX + 2)];
        provider_names(sc, list, sizeof list);
        snprintf(msg, msglen, "map_provider.%s: %s%s%s is not a scenario provider (they are: %s)",
                 m->string, cJSON_IsString(m) ? "'" : "",
                 cJSON_IsString(m) ? m->valuestring : "a non-string", cJSON_IsString(m) ? "'" : "",
                 list);
        return FB_EINVAL;
    }
    return FB_OK;
}

static int litellm_groups(const cJSON *list, const cJSON *map, const sim_scenario *sc, lgroups *g,
                          char *msg, size_t msglen) {
    memset(g, 0, sizeof *g);
    if (provider_map(map, sc, msg, msglen) != FB_OK) return FB_EINVAL;
    g->map = map;
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) {
        g->group_of[p] = -1;
        g->cooldown_s[p] = -1;
        for (int k = 0; k < 3; k++) g->weight[k][p] = -1;
    }
    if (list == NULL) {
        snprintf(g->name[0], SIM_NAME_MAX, "default");
        g->count = 1;
        for (uint32_t p = 0; p < sc->provider_count; p++) {
            if (sc->providers[p].kind != SIM_PROVIDER_LLM) continue;
            g->group_of[p] = 0;
            g->size[0]++;
        }
        return FB_OK;
    }
    if (!cJSON_IsArray(list) || list->child == NULL) {
        snprintf(msg, msglen, "model_list: a list of deployments");
        return FB_EINVAL;
    }
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++)
        if (model_entry(e, i, sc, g, msg, msglen) != FB_OK) return FB_EINVAL;
    return FB_OK;
}

/* simple_shuffle: the first of weight, rpm, tpm that the group's deployments all set. */
static int litellm_weights(const lgroups *g, sim_layer *L, char *msg, size_t msglen) {
    static const char *const names[] = {"weight", "rpm", "tpm"};
    for (uint32_t k = 0; k < g->count; k++) {
        for (int w = 0; w < 3; w++) {
            uint32_t set = 0;
            for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++)
                set += g->group_of[p] == (int)k && g->weight[w][p] >= 0;
            if (set == 0) continue;
            if (set != g->size[k]) {
                snprintf(msg, msglen,
                         "model group '%s': give every deployment a %s or none (simple-shuffle "
                         "reads the key of the first healthy one)",
                         g->name[k], names[w]);
                return FB_EINVAL;
            }
            for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++)
                if (g->group_of[p] == (int)k) L->weight[p] = (uint32_t)llround(g->weight[w][p]);
            break;
        }
    }
    return FB_OK;
}

/*
 * The fallback groups of `group` in a [{GROUP: [GROUP...]}] list (NULL when
 * none): its own entry, else the last "*" entry (get_fallback_model_group,
 * router_utils/fallback_event_handlers.py: generic_fallback_idx = idx keeps
 * the last one).
 */
static const cJSON *fallback_list(const cJSON *map, const char *group, bool wildcard) {
    if (!cJSON_IsArray(map)) return NULL;
    const cJSON *star = NULL;
    for (const cJSON *e = map->child; e; e = e->next) {
        if (!cJSON_IsObject(e) || !e->child) continue;
        if (strcmp(e->child->string, group) == 0) return e->child;
        if (wildcard && strcmp(e->child->string, "*") == 0) star = e->child;
    }
    return star;
}

/* A fallbacks-style map: a list of one-key objects whose values are lists of known groups. */
static int check_map(const cJSON *map, const char *key, const lgroups *g, char *msg,
                     size_t msglen) {
    if (map == NULL) return FB_OK;
    size_t i = 0;
    for (const cJSON *e = cJSON_IsArray(map) ? map->child : NULL; e; e = e->next, i++) {
        if (!cJSON_IsObject(e) || !e->child || e->child->next || !cJSON_IsArray(e->child)) {
            snprintf(msg, msglen, "%s[%zu]: {GROUP: [GROUP, ...]} (one key)", key, i);
            return FB_EINVAL;
        }
        for (const cJSON *t = e->child->child; t; t = t->next) {
            if (!cJSON_IsString(t) || group_index(g, t->valuestring) < 0) {
                snprintf(msg, msglen, "%s[%zu].%s: no model group named %s%s%s", key, i,
                         e->child->string, cJSON_IsString(t) ? "'" : "",
                         cJSON_IsString(t) ? t->valuestring : "(not a string)",
                         cJSON_IsString(t) ? "'" : "");
                return FB_EINVAL;
            }
        }
    }
    if (!cJSON_IsArray(map)) {
        snprintf(msg, msglen, "%s: a list of {GROUP: [GROUP, ...]}", key);
        return FB_EINVAL;
    }
    return FB_OK;
}

/* Append group k's deployments (in provider order) to an order; false when full or repeated. */
static bool append_group(const lgroups *g, int k, uint8_t *order, uint32_t *len) {
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) {
        if (g->group_of[p] != k) continue;
        for (uint32_t i = 0; i < *len; i++)
            if (order[i] == p) return false;
        if (*len == SIM_PROVIDERS_MAX) return false;
        order[(*len)++] = (uint8_t)p;
    }
    return true;
}

/* A chain: the groups listed in `list` (a cJSON array of names), after `first` if >= 0. */
static bool chain_of(const lgroups *g, int first, const cJSON *list, uint8_t *order,
                     uint32_t *len) {
    *len = 0;
    if (first >= 0 && !append_group(g, first, order, len)) return false;
    for (const cJSON *t = list ? list->child : NULL; t; t = t->next)
        if (!append_group(g, group_index(g, t->valuestring), order, len)) return false;
    return true;
}

/* context_window_fallbacks / content_policy_fallbacks as an alternative chain of the engine. */
static void alt_chain(const lgroups *g, const cJSON *map, const char *group,
                      fb_fallback_chain *out) {
    *out = (fb_fallback_chain){0};
    if (map == NULL) return; /* not set: such errors are retried and take the fallbacks */
    out->set = true;
    chain_of(g, -1, fallback_list(map, group, false), out->order, &out->len);
}

/* The requested group's chain, its fallbacks, and the alternative chains. */
static int litellm_chain(const sim_preset *p, const sim_param_value *v, const lgroups *g,
                         sim_layer *L, char *msg, size_t msglen) {
    const cJSON *model = scn__preset_json_of(scn__preset_given(p, v, "model"));
    const cJSON *fb = scn__preset_json_of(scn__preset_given(p, v, "fallbacks"));
    const cJSON *dflt = scn__preset_json_of(scn__preset_given(p, v, "default_fallbacks"));
    const cJSON *cw = scn__preset_json_of(scn__preset_given(p, v, "context_window_fallbacks"));
    const cJSON *cp = scn__preset_json_of(scn__preset_given(p, v, "content_policy_fallbacks"));
    if (check_map(fb, "fallbacks", g, msg, msglen) != FB_OK ||
        check_map(cw, "context_window_fallbacks", g, msg, msglen) != FB_OK ||
        check_map(cp, "content_policy_fallbacks", g, msg, msglen) != FB_OK)
        return FB_EINVAL;
    int first = 0;
    if (model != NULL) {
        first = cJSON_IsString(model) ? group_index(g, model->valuestring) : -1;
        if (first < 0) {
            snprintf(msg, msglen, "model: no model group named %s in model_list",
                     cJSON_IsString(model) ? model->valuestring : "(not a string)");
            return FB_EINVAL;
        }
    }
    const char *name = g->name[first];
    const cJSON *list = fallback_list(fb, name, true);
    /* Router.__init__ appends {"*": default_fallbacks} after fallbacks: the last "*" wins */
    if ((list == NULL || strcmp(list->string, "*") == 0) && cJSON_IsArray(dflt)) list = dflt;
    for (const cJSON *t = dflt && list == dflt ? dflt->child : NULL; t; t = t->next)
        if (!cJSON_IsString(t) || group_index(g, t->valuestring) < 0) {
            snprintf(msg, msglen, "default_fallbacks: %s is no model group",
                     cJSON_IsString(t) ? t->valuestring : "(not a string)");
            return FB_EINVAL;
        }
    if (!chain_of(g, first, list, L->order, &L->order_len)) {
        snprintf(msg, msglen, "fallbacks of '%s': a group appears twice in the chain", name);
        return FB_EINVAL;
    }
    /* `x or litellm.x`: an empty list is no list */
    alt_chain(g, cJSON_GetArraySize(cw) > 0 ? cw : NULL, name, &L->on_context_length);
    alt_chain(g, cJSON_GetArraySize(cp) > 0 ? cp : NULL, name, &L->on_policy);
    for (uint32_t q = 0; q < SIM_PROVIDERS_MAX; q++)
        L->group[q] = g->group_of[q] >= 0 ? (uint8_t)g->group_of[q] : 0;
    L->routes = true;
    L->pick = FB_PICK_RANDOM;
    L->healthy_gate = FB_ON;
    L->zero_wait_if_healthy = FB_ON;
    L->judge_first = FB_ON; /* async_function_with_retries: original_exception decides */
    /* ... and is raised: by async_function_with_retries, and by async_function_with_fallbacks
       when the fallbacks fail too (`raise original_exception`) */
    L->raise_first = true;
    return FB_OK;
}

/*
 * _time_to_sleep_before_retry and utils._calculate_retry_after: INITIAL_RETRY_DELAY 0.5 s,
 * MAX_RETRY_DELAY 8 s, JITTER 0.75 s added after the cap, retry_after as a floor.
 */
static void litellm_retry(const sim_preset *p, const sim_param_value *v, sim_layer *L) {
    const sim_param_value *n = scn__preset_given(p, v, "num_retries");
    const sim_param_value *floor_s = scn__preset_given(p, v, "retry_after");
    const sim_param_value *t = scn__preset_given(p, v, "timeout");
    fb_retry_config *r =
        scn__preset_gateway_retry(L, n ? (uint32_t)n->num : 2, 500 * FB_US_PER_MS, 8 * FB_US_PER_S);
    r->backoff_hold = 1;
    r->delay_us_min = floor_s ? floor_s->us : 0;
    r->jitter = FB_JITTER_ADDITIVE;
    r->jitter_us = 750 * FB_US_PER_MS;
    r->cap_order = FB_CAP_BACKOFF_ONLY;
    r->retry_after = FB_RETRY_AFTER_AS_IS;
    r->retry_after_us_max = 60 * FB_US_PER_S;
    r->above_max = FB_ABOVE_MAX_BACKOFF;
    r->ignore_zero_hint = FB_ON;
    r->hint_whole_seconds = FB_ON; /* int(retry_after): "2.5" raises, the header is ignored */
    r->hint_jitter = FB_ON;
    r->attempt_timeout_us = t ? t->us : 6000 * FB_US_PER_S;
}

/*
 * What a RetryPolicy field (or an allowed-fails field) says for class c:
 * count + 1, 0 unset. An AllowedFailsPolicy field of 0 is unset too:
 * should_cooldown_based_on_allowed_fails_policy reads
 * `get_allowed_fails_from_policy(...) or allowed_fails`.
 */
static uint32_t policy_count(const sim_preset *p, const sim_param_value *v, const char *obj,
                             const char *const *fields, enum lclass c) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", obj, fields[c]);
    const sim_param_value *x = scn__preset_given(p, v, key);
    if (x && x->num == 0 && fields == fails_fields) return 0;
    return x ? (uint32_t)x->num + 1 : 0;
}

/* The cooldown rules of the deployments; `v1`: the allowed-fails rule. */
typedef struct lmode {
    bool v1;
    uint8_t single;              /* providers in a group of one deployment */
    uint32_t attempts[LC_N + 1]; /* [LC_NONE] = 0 */
    uint32_t limit[LC_N + 1];
    bool cw_set, cp_set;
} lmode;

/* One exception class's rule: its retries, its allowed fails, and when it trips at once. */
static sim_status_rule *class_rule(sim_layer *L, sim_status_rule *r, const lmode *m, enum lclass c,
                                   fb_trip trip) {
    r->effect = FB_EFFECT_FAILURE;
    r->attempts = m->attempts[c];
    r->failure_limit = m->limit[c];
    r->trip = (uint8_t)(m->v1 && trip == FB_TRIP_NOW ? FB_TRIP_RULES : trip);
    (void)L;
    return r;
}

/*
 * A rule for the providers in `set` only. A rule's empty set means every
 * provider (sim_status_rule.providers), so an empty set adds no rule: the
 * rule after it, for every provider, decides.
 */
static void masked_rule(sim_layer *L, const lmode *m, int status, int retry, enum lclass c,
                        fb_trip trip, uint8_t set) {
    if (set == 0) return;
    class_rule(L, scn__preset_status_rule(L, status, retry, 1), m, c, trip)->providers = set;
}

/* litellm exceptions and their cooldown: _is_cooldown_required, _should_cooldown_deployment. */
static void litellm_rules_for(sim_layer *L, const lmode *m, uint8_t multi) {
    /* 429: at once in a group of several (v2), the rate rule in a group of one */
    masked_rule(L, m, 429, 1, LC_RATE_LIMIT, FB_TRIP_NOW, multi);
    class_rule(L, scn__preset_status_rule(L, 429, 1, 1), m, LC_RATE_LIMIT, FB_TRIP_RULES);
    /* 401: not retried in a group of one (should_retry_this_error); not retryable: at once */
    masked_rule(L, m, 401, 0, LC_AUTH, FB_TRIP_NOW, m->single);
    class_rule(L, scn__preset_status_rule(L, 401, 1, 1), m, LC_AUTH, FB_TRIP_NOW);
    class_rule(L, scn__preset_status_rule(L, 404, 0, 1), m, LC_NONE, FB_TRIP_NOW);
    class_rule(L, scn__preset_status_rule(L, 408, 1, 1), m, LC_TIMEOUT, FB_TRIP_RULES);
    class_rule(L, scn__preset_outcome_rule(L, FB_OUT_TIMEOUT, 1, 1), m, LC_TIMEOUT, FB_TRIP_RULES);
    /* 400s are retried and fall back; counted, never cooled */
    class_rule(L, scn__preset_outcome_rule(L, FB_OUT_CONTEXT_LENGTH, !m->cw_set, 1), m,
               LC_BAD_REQUEST, FB_TRIP_NEVER);
    sim_status_rule *r = class_rule(L, scn__preset_outcome_rule(L, FB_OUT_POLICY, !m->cp_set, 1), m,
                                    LC_CONTENT_POLICY, FB_TRIP_NEVER);
    /* a BadRequestError too, and get_retry_from_policy.py asks BadRequestErrorRetries first */
    if (m->attempts[LC_BAD_REQUEST] > 0) r->attempts = m->attempts[LC_BAD_REQUEST];
    class_rule(L, scn__preset_status_rule(L, 400, 1, 1), m, LC_BAD_REQUEST, FB_TRIP_NEVER);
    class_rule(L, scn__preset_status_rule(L, 409, 1, 1), m, LC_NONE, FB_TRIP_NEVER);
    class_rule(L, scn__preset_status_rule(L, 500, 1, 1), m, LC_ISE, FB_TRIP_RULES);
    /* APIConnectionError: counted, never cooled */
    class_rule(L, scn__preset_transport_rule(L, FB_TRANSPORT_CONNECT, 1, 1), m, LC_NONE,
               FB_TRIP_NEVER);
    class_rule(L, scn__preset_transport_rule(L, FB_TRANSPORT_RESET, 1, 1), m, LC_NONE,
               FB_TRIP_NEVER);
    /* every other 5xx (502, 503, 529...): the rules; other 4xx: retried, never cooled */
    class_rule(L, scn__preset_outcome_rule(L, FB_OUT_TRANSIENT, 1, 1), m, LC_NONE, FB_TRIP_RULES);
    class_rule(L, scn__preset_outcome_rule(L, FB_OUT_PERMANENT, 1, 1), m, LC_NONE, FB_TRIP_NEVER);
    class_rule(L, scn__preset_outcome_rule(L, FB_OUT_REJECTED, 1, 1), m, LC_NONE, FB_TRIP_NEVER)
        ->effect = FB_EFFECT_IGNORE;
}

/* v2 (the percentage rule) or v1 (allowed fails), and the policies' counts per class. */
static void litellm_mode(const sim_preset *p, const sim_param_value *v, const lgroups *g,
                         lmode *m) {
    memset(m, 0, sizeof *m);
    const sim_param_value *af = scn__preset_given(p, v, "allowed_fails");
    bool policy = scn__preset_given(p, v, "allowed_fails_policy") != NULL;
    /* _is_allowed_fails_set_on_router: set and not litellm.allowed_fails (3) */
    m->v1 = policy || (af && (uint32_t)af->num != 3);
    /* LC_ISE: no branch reads the InternalServerError fields at the cited commit */
    for (int c = 0; c < LC_ISE; c++) {
        m->attempts[c] = policy_count(p, v, "retry_policy", retry_fields, (enum lclass)c);
        m->limit[c] = policy_count(p, v, "allowed_fails_policy", fails_fields, (enum lclass)c);
    }
    for (uint32_t q = 0; q < SIM_PROVIDERS_MAX; q++)
        if (g->group_of[q] >= 0 && g->size[g->group_of[q]] == 1) m->single |= (uint8_t)(1u << q);
    m->cw_set = cJSON_GetArraySize(
                    scn__preset_json_of(scn__preset_given(p, v, "context_window_fallbacks"))) > 0;
    m->cp_set = cJSON_GetArraySize(
                    scn__preset_json_of(scn__preset_given(p, v, "content_policy_fallbacks"))) > 0;
}

/* A deployment's cooldown as an fb_breaker (COOLDOWN mode, no half-open). */
static fb_breaker_config litellm_breaker(const sim_preset *p, const sim_param_value *v,
                                         const lgroups *g, const lmode *m, uint32_t q) {
    const sim_param_value *ct = scn__preset_given(p, v, "cooldown_time");
    const sim_param_value *af = scn__preset_given(p, v, "allowed_fails");
    /* `cooldown_time or DEFAULT_COOLDOWN_TIME_SECONDS` */
    fb_time_us router_us = ct && ct->us > 0 ? ct->us : 5 * FB_US_PER_S;
    bool single = (m->single >> q) & 1u;
    fb_breaker_config b = {
        .mode = FB_BREAKER_MODE_COOLDOWN,
        .recovery = FB_RECOVER_CLOSE,
        .open_deadline = FB_CMP_PASS, /* a TTL: expired when now > set + ttl */
        .open_us = router_us,
        .open_us_max = 365 * 24 * 3600 * FB_US_PER_S,
        .honor_hint = FB_ON,
        .hint_mode = FB_HINT_REPLACES, /* Retry-After is the cooldown time */
        .hint_whole_seconds = FB_ON,   /* _get_retry_after_from_exception_header: int() */
        /* InMemoryCache.set_cache: an unexpired TTL is kept (allow_ttl_override), so a
           count expires after its first increment and a cooldown is not restarted */
        .ttl_from_first = FB_ON,
        .keep_open = FB_ON,
    };
    if (g->cooldown_s[q] >= 0) { /* litellm_params.cooldown_time beats the header */
        b.open_us = (fb_time_us)llround(g->cooldown_s[q] * 1e6);
        b.honor_hint = FB_OFF;
    }
    if (m->v1) {
        b.cooldown_rule = FB_COOLDOWN_COUNT;
        b.window_us = router_us; /* failed_calls' ttl: cooldown_time or 5 */
        b.consecutive_failures = (af ? (uint32_t)af->num : 3) + 1;
    } else {
        b.window_us = 60 * FB_US_PER_S; /* the "current minute" keys' ttl */
        b.failure_rate = single ? 1.0 : 0.5;
        b.trip_compare = single ? FB_CMP_REACH : FB_CMP_PASS;
        b.minimum_calls = single ? 1000 : 5; /* SINGLE_DEPLOYMENT_TRAFFIC_FAILURE_THRESHOLD */
    }
    return b;
}

static int litellm_apply(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                         sim_layer *L, char *msg, size_t msglen) {
    lgroups g;
    const sim_param_value *rs = scn__preset_given(p, v, "routing_strategy");
    if (rs && rs->word != 0) {
        snprintf(msg, msglen, "routing_strategy %s is not modelled (simple-shuffle only)",
                 litellm_strategies[rs->word]);
        return FB_EINVAL;
    }
    if (litellm_groups(scn__preset_json_of(scn__preset_given(p, v, "model_list")),
                       scn__preset_json_of(scn__preset_given(p, v, "map_provider")), sc, &g, msg,
                       msglen) != FB_OK ||
        litellm_weights(&g, L, msg, msglen) != FB_OK ||
        litellm_chain(p, v, &g, L, msg, msglen) != FB_OK)
        return FB_EINVAL;
    litellm_retry(p, v, L);
    lmode m;
    litellm_mode(p, v, &g, &m);
    uint8_t multi = 0;
    for (uint32_t q = 0; q < SIM_PROVIDERS_MAX; q++)
        if (g.group_of[q] >= 0 && !(((unsigned)m.single >> q) & 1u)) multi |= (uint8_t)(1u << q);
    litellm_rules_for(L, &m, multi);
    const sim_param_value *off = scn__preset_given(p, v, "disable_cooldowns");
    for (uint32_t q = 0; q < sc->provider_count; q++) {
        sim_provider_policy *pp = &L->per_provider[q];
        pp->has_breaker = g.group_of[q] >= 0 && !(off && off->num) && g.cooldown_s[q] != 0;
        if (pp->has_breaker) pp->breaker = litellm_breaker(p, v, &g, &m, q);
    }
    if (scn__preset_given(p, v, "redis_host") || scn__preset_given(p, v, "redis_url")) {
        L->breaker_scope = SIM_SCOPE_PUBLISHED;
        L->sync_delay_us = 10 * FB_US_PER_S;
    }
    return FB_OK;
}

/* clang-format off */
static const sim_vocab_param litellm_words[] = {
    {"cooldown_time", SIM_VF_OPEN_US, SIM_PK_SECONDS, 0, NULL},
    {"num_retries", SIM_VF_RETRIES, SIM_PK_COUNT, 0, NULL},
    {"timeout", SIM_VF_ATTEMPT_TIMEOUT_US, SIM_PK_SECONDS, 0, NULL},
    {NULL, SIM_VF_NONE, SIM_PK_COUNT, 0, NULL},
};
/* clang-format on */

/* the cooldown (a COOLDOWN-mode breaker: no half-open) is said in LiteLLM's words by
   reports/settings.c and by the events' "litellm" sentence */
static const sim_vocab litellm_vocab = {
    "LiteLLM Router cooldown",         "LiteLLM Router", "LiteLLM",
    {"healthy", "cooling down", NULL}, litellm_words,
};

const sim_preset scn_preset_litellm = {
    "litellm",
    "litellm (PyPI), the Router",
    "main at router.py f292d1ae (cooldown_handlers.py after PR #17464): rules read from LiteLLM "
    "source (not run here)",
    "litellm/router.py (async_function_with_retries, should_retry_this_error, "
    "_time_to_sleep_before_retry, deployment_callback_on_failure) at blob f292d1ae; "
    "litellm/router_utils/cooldown_handlers.py (_is_cooldown_required, "
    "_should_cooldown_deployment, should_cooldown_based_on_allowed_fails_policy) after PR "
    "#17464; router_utils/cooldown_cache.py 565caa59; "
    "router_utils/router_callbacks/track_deployment_metrics.py; caching/in_memory_cache.py "
    "(set_cache keeps an unexpired TTL: allow_ttl_override, as stored at 0002b538); "
    "caching/dual_cache.py 015b9454 and "
    "caching/redis_cache.py 0226cd83 (Redis unreachable); utils.py 2be93d92 "
    "(_calculate_retry_after, "
    "_should_retry); constants.py; router_utils/get_retry_from_policy.py (BadRequestErrorRetries "
    "first, before #19878); router_utils/fallback_event_handlers.py (get_fallback_model_group)",
    "the LiteLLM Router: model groups, retries, cooldowns and fallbacks",
    litellm_params,
    litellm_rules,
    litellm_not_modelled,
    litellm_apply,
    "rules read from LiteLLM's Router source at the commits named (not run here); each "
    "decision with its source and its unit test in docs/presets-litellm.md",
    &litellm_vocab,
};

/* The first clause of the rule that starts with `start` (up to a "; " outside parentheses). */
static void rule_clause(const char *start, char *out, size_t len) {
    const char *r = NULL;
    for (size_t i = 0; litellm_rules[i] && r == NULL; i++)
        if (strncmp(litellm_rules[i], start, strlen(start)) == 0) r = litellm_rules[i];
    size_t n = 0;
    for (int depth = 0; r && r[n] && !(depth == 0 && r[n] == ';'); n++)
        depth += r[n] == '(' ? 1 : r[n] == ')' ? -1 : 0;
    snprintf(out, len, "%.*s", (int)n, r ? r : "");
}

/* Every error deployment q can answer carries a Retry-After the cooldown takes: its faults are
   all rate limits with one of whole seconds (int() reads it), and its capacity refuses none. */
static bool answers_carry_hint(const sim_provider *pr, bool *faults) {
    if (pr->concurrency || pr->rpm || pr->tpm) return false;
    for (uint32_t f = 0; f < pr->fault_count; f++) {
        const sim_fault *x = &pr->faults[f];
        if (x->kind != SIM_FAULT_RATE_LIMIT || x->retry_after_us == FB_TIME_NONE ||
            x->retry_after_us < FB_US_PER_S || x->retry_after_us % FB_US_PER_S != 0)
            return false;
        *faults = true;
    }
    return true;
}

/*
 * cooldown_time cannot change a run when no deployment's cooldown lasts it: cooldowns are off,
 * or each cooled deployment has its own litellm_params.cooldown_time or only ever fails with a
 * Retry-After (the cooldown is the header's), and the percentage rule counts per minute (the
 * allowed-fails rule counts over cooldown_time: not inert).
 */
int scn__litellm_inert(const sim_layer *L, const sim_scenario *sc, const char *param, char *why,
                       size_t len) {
    if (strcmp(param, "cooldown_time") != 0) return 0;
    bool cooled = false, faults = false, own = true;
    char hinted[256] = "";
    size_t n = 0;
    for (uint32_t q = 0; q < sc->provider_count; q++) {
        const sim_provider_policy *pp = &L->per_provider[q];
        if (!pp->has_breaker) continue;
        cooled = true;
        if (pp->breaker.cooldown_rule == FB_COOLDOWN_COUNT) return 0;
        if (pp->breaker.honor_hint != FB_ON) continue; /* its own litellm_params.cooldown_time */
        own = false;
        bool fails = false;
        if (!answers_carry_hint(&sc->providers[q], &fails)) return 0;
        if (fails && n < sizeof hinted)
            n += (size_t)snprintf(hinted + n, sizeof hinted - n, "%s%s", n ? ", " : "",
                                  sc->providers[q].name);
        faults = faults || fails;
    }
    char clause[512];
    rule_clause("a cooldown lasts", clause, sizeof clause);
    if (!cooled)
        snprintf(why, len,
                 "no deployment of layer %s is ever cooled down (disable_cooldowns, or "
                 "litellm_params.cooldown_time 0)",
                 L->name);
    else if (own)
        snprintf(why, len,
                 "every deployment of layer %s that cools sets its own "
                 "litellm_params.cooldown_time, which comes first; LiteLLM's rule (fusebox "
                 "presets litellm): \"%s\"",
                 L->name, clause);
    else if (!faults)
        return 0; /* nothing fails: no rule of the cooldown is the reason */
    else
        snprintf(why, len,
                 "every error of %s carries a Retry-After in whole seconds (the scenario's "
                 "rate_limit faults), so a cooldown lasts the Retry-After, never cooldown_time; "
                 "LiteLLM's rule (fusebox presets litellm): \"%s\"",
                 hinted, clause);
    return 1;
}
