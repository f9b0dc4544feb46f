/*
 * preset_gateway.c - the gateways: the LiteLLM Router, the Portkey AI
 * Gateway (open source) and Envoy's route retry policy with its cluster's
 * outlier detection.
 *
 * A gateway is a routing layer: it chooses the provider of every attempt.
 * LiteLLM picks a deployment of the requested model group for each attempt,
 * retries included, and falls back to other model groups; Envoy picks a
 * host of the cluster for each attempt through its load balancer; Portkey
 * walks its fallback targets in order, each with its own retries. The
 * scenario's providers are the deployments, hosts and targets, named in
 * each preset's own keys (docs/presets.md says how). Each preset's rules
 * were read from the files it cites, at the commits named.
 */
#include "sim/presetint.h"

#include <math.h>
#include <string.h>

#include "sim/loadint.h"

/* ---- shared ---- */

/* A rule that matches everything and changes nothing, appended to the layer's (sim_status_rule). */
static sim_status_rule *rule(sim_layer *L) {
    if (L->rule_count == SIM_STATUS_RULES_MAX) return &L->rules[SIM_STATUS_RULES_MAX - 1];
    sim_status_rule *r = &L->rules[L->rule_count++];
    *r = (sim_status_rule){
        .outcome = -1, .transport = -1, .retry = -1, .fallback = -1, .effect = -1};
    return r;
}

static sim_status_rule *status_rule(sim_layer *L, int status, int retry, int fallback) {
    sim_status_rule *r = rule(L);
    r->status = status;
    r->retry = (int8_t)retry;
    r->fallback = (int8_t)fallback;
    return r;
}

static sim_status_rule *outcome_rule(sim_layer *L, fb_outcome o, int retry, int fallback) {
    sim_status_rule *r = status_rule(L, 0, retry, fallback);
    r->outcome = (int8_t)o;
    return r;
}

static sim_status_rule *transport_rule(sim_layer *L, fb_transport t, int retry, int fallback) {
    sim_status_rule *r = status_rule(L, 0, retry, fallback);
    r->transport = (int8_t)t;
    return r;
}

/* The scenario's provider named `name`, or -1 with a message (and a did-you-mean). */
static int provider_index(const sim_scenario *sc, const char *name, const char *where, char *msg,
                          size_t msglen) {
    int i = sim_scenario_provider(sc, name);
    if (i >= 0) return i;
    const char *names[SIM_PROVIDERS_MAX + 1];
    for (uint32_t k = 0; k < sc->provider_count; k++) names[k] = sc->providers[k].name;
    names[sc->provider_count] = NULL;
    const char *s = ld_suggest(name, names);
    snprintf(msg, msglen, "%s: no provider named '%s' in the scenario%s%s%s", where, name,
             s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
    return -1;
}

static const cJSON *json_of(const sim_param_value *v) {
    return v ? (const cJSON *)v->json : NULL;
}

/* A string member, or NULL. */
static const char *string_at(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Every key of object o is one of keys; else a message naming the first that is not. */
static int known_keys(const cJSON *o, const char *const *keys, const char *where, char *msg,
                      size_t msglen) {
    for (const cJSON *it = o->child; it; it = it->next) {
        bool ok = false;
        for (size_t i = 0; keys[i] && !ok; i++) ok = strcmp(it->string, keys[i]) == 0;
        if (ok) continue;
        const char *s = ld_suggest(it->string, keys);
        snprintf(msg, msglen, "%s.%s: not modelled by this preset%s%s%s", where, it->string,
                 s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
        return FB_EINVAL;
    }
    return FB_OK;
}

/* ====================================================================== */
/* LiteLLM Router                                                          */
/* ====================================================================== */

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
    {"model_list", SIM_PK_JSON, 0, 0, "every LLM provider, one model group 'default'",
     "deployments: [{\"model_name\": GROUP, \"provider\": PROVIDER, \"litellm_params\": "
     "{\"model\", \"weight\", \"rpm\", \"tpm\", \"cooldown_time\"}, \"model_info\": {\"id\"}}]; "
     "the deployment is the scenario provider \"provider\" names, else the first of "
     "model_info.id, litellm_params.model and LiteLLM's provider of that model (its prefix: "
     "\"azure/x\" azure; gpt-*, o1*, o3*, o4*, chatgpt-*, dall-e-*, text-embedding-*, "
     "whisper-*, tts-*: openai; claude-*: anthropic) that names one; one provider per deployment",
     NULL},
    {"model", SIM_PK_JSON, 0, 0, "the first model_name",
     "the model group the requests ask for (the request's model)", NULL},
    {"num_retries", SIM_PK_COUNT, 0, 100, "2",
     "retries of a model group after its first failure (openai.DEFAULT_MAX_RETRIES)", NULL},
    {"retry_after", SIM_PK_SECONDS, 0, 3600, "0",
     "the least a retry backoff waits (capped at 8 s like the backoff)", NULL},
    {"timeout", SIM_PK_SECONDS, 0.001, 1e6, "6000",
     "seconds an attempt may take (litellm.request_timeout)", NULL},
    {"allowed_fails", SIM_PK_COUNT, 0, 1000000, "3 (litellm.allowed_fails)",
     "cooldown after more failures than this within cooldown_time of each other; only when "
     "set to another value than 3 (else the percentage rule)",
     NULL},
    {"allowed_fails_policy", SIM_PK_OBJECT, 0, 0, "none",
     "allowed_fails per exception class (turns the allowed-fails rule on)", NULL},
    {"allowed_fails_policy.BadRequestErrorAllowedFails", SIM_PK_COUNT, 0, 1000000, "none", "400s",
     NULL},
    {"allowed_fails_policy.AuthenticationErrorAllowedFails", SIM_PK_COUNT, 0, 1000000, "none",
     "401s", NULL},
    {"allowed_fails_policy.TimeoutErrorAllowedFails", SIM_PK_COUNT, 0, 1000000, "none",
     "timeouts and 408s", NULL},
    {"allowed_fails_policy.RateLimitErrorAllowedFails", SIM_PK_COUNT, 0, 1000000, "none", "429s",
     NULL},
    {"allowed_fails_policy.ContentPolicyViolationErrorAllowedFails", SIM_PK_COUNT, 0, 1000000,
     "none", "content-policy 400s", NULL},
    {"allowed_fails_policy.InternalServerErrorAllowedFails", SIM_PK_COUNT, 0, 1000000, "none",
     "500s", NULL},
    {"retry_policy", SIM_PK_OBJECT, 0, 0, "none",
     "num_retries per exception class of a group's first failure", NULL},
    {"retry_policy.BadRequestErrorRetries", SIM_PK_COUNT, 0, 100, "num_retries",
     "400s (context-length ones too)", NULL},
    {"retry_policy.AuthenticationErrorRetries", SIM_PK_COUNT, 0, 100, "num_retries", "401s", NULL},
    {"retry_policy.TimeoutErrorRetries", SIM_PK_COUNT, 0, 100, "num_retries", "timeouts, 408s",
     NULL},
    {"retry_policy.RateLimitErrorRetries", SIM_PK_COUNT, 0, 100, "num_retries", "429s", NULL},
    {"retry_policy.ContentPolicyViolationErrorRetries", SIM_PK_COUNT, 0, 100, "num_retries",
     "content-policy 400s", NULL},
    {"retry_policy.InternalServerErrorRetries", SIM_PK_COUNT, 0, 100, "num_retries", "500s", NULL},
    {"cooldown_time", SIM_PK_SECONDS, 0, 86400, "5",
     "seconds a deployment cools down (0 means the default 5: `cooldown_time or 5`)", NULL},
    {"disable_cooldowns", SIM_PK_BOOL, 0, 0, "false", "no deployment is ever cooled down", NULL},
    {"fallbacks", SIM_PK_JSON, 0, 0, "none",
     "[{GROUP: [GROUP, ...]}]: the groups tried after the requested one, in order; \"*\" for "
     "any group",
     NULL},
    {"default_fallbacks", SIM_PK_JSON, 0, 0, "none", "[GROUP, ...]: fallbacks for \"*\"", NULL},
    {"context_window_fallbacks", SIM_PK_JSON, 0, 0, "none",
     "[{GROUP: [GROUP, ...]}] after a context-window error (then not retried)", NULL},
    {"content_policy_fallbacks", SIM_PK_JSON, 0, 0, "none",
     "[{GROUP: [GROUP, ...]}] after a content-policy error (then not retried)", NULL},
    {"routing_strategy", SIM_PK_WORD, 0, 0, "simple-shuffle",
     "how a deployment is picked (simple-shuffle only is modelled)", litellm_strategies},
    {"redis_host", SIM_PK_JSON, 0, 0, "none",
     "with it (or redis_url) the cooldowns are shared through Redis", NULL},
    {"redis_url", SIM_PK_JSON, 0, 0, "none", "as redis_host", NULL},
    {"redis_port", SIM_PK_COUNT, 1, 65535, "none", "accepted with redis_host", NULL},
    {"redis_password", SIM_PK_JSON, 0, 0, "none", "accepted with redis_host", NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const litellm_rules[] = {
    "deployments are the scenario's providers; a model group's deployments form one group: every "
    "attempt, retries too, picks one of its deployments not in cooldown at random (simple-shuffle; "
    "weighted by weight, else rpm, else tpm, when the deployments set it)",
    "a group is tried 1 + num_retries times; a RetryPolicy field for the class of the group's "
    "first failure replaces num_retries; then the fallback groups of fallbacks[model] "
    "(else fallbacks[\"*\"], default_fallbacks) in order, each with its own retries",
    "not retried (should_retry_this_error, at a group's first failure): a 404; a 401 in a group of "
    "one deployment; a context-window or content-policy error when context_window_fallbacks or "
    "content_policy_fallbacks is set; any error once no deployment of the group is out of "
    "cooldown. Every other error is retried, 400s included",
    "the wait before a retry is 0 when the group has more than one deployment and one of them is "
    "out of cooldown (the one that failed too); else a Retry-After of 0 < d <= 60 s waits d + "
    "U(0, 0.75) s, and otherwise min(max(0.5 * 2^k, retry_after), 8) + U(0, 0.75) s with k = 0 "
    "for the first two retries and k = n - 1 from the n-th on (router.py f292d1ae: exponent "
    "max_retries - remaining_retries)",
    "a retry that finds every deployment of the group cooling down counts as an attempt "
    "(RouterRateLimitError) and waits its backoff",
    "errors fall back (to the groups above), except: a context-window error goes to "
    "context_window_fallbacks[model] when context_window_fallbacks is set (none for the group: "
    "the request ends); a content-policy error likewise to content_policy_fallbacks",
    "cooldown (no allowed_fails or allowed_fails = 3, no allowed_fails_policy): every error and "
    "every success is counted per deployment and instance, each count expiring 60 s after its "
    "last increment; on an error with status 429, 401, 408, 404 or >= 500 (not a 4xx otherwise, "
    "not a connection error: APIConnectionError), the deployment cools down when: it is a 429 "
    "and the group has more deployments; or failures / (failures + successes) > 0.5 with at "
    "least 5 requests in a group of several (DEFAULT_FAILURE_THRESHOLD_MINIMUM_REQUESTS, PR "
    "#17464); or it is 100% of at least 1000 requests (any group); or the status is not "
    "retryable (401, 404)",
    "cooldown with allowed_fails set (to another value than 3) or allowed_fails_policy: a "
    "deployment cools down at the failure that makes more than allowed_fails (the policy's field "
    "for its class, else allowed_fails) failures in a row less than cooldown_time apart "
    "(the counter's TTL, renewed by each failure it counts); the failure that cools is not "
    "counted, so the counter expires cooldown_time after the failure before it",
    "a cooldown lasts the deployment's litellm_params.cooldown_time, else the response's "
    "Retry-After (seconds; 0 cools nothing), else cooldown_time (5 s); it ends by itself "
    "(strictly after, a cache TTL): no probes, no half-open; an error while cooling down that "
    "breaks the rule starts it again",
    "with redis_host or redis_url the other instances (pods) learn a cooldown at their next read "
    "of Redis, every 10 s (DualCache redis_batch_cache_expiry, BerriAI/litellm PR #34836; PR "
    "#40025 later made it 1 s): pod k reads at k * 10 s / pods + m * 10 s; the counts stay "
    "per instance",
    "timeout bounds each attempt; a stream that breaks after its first chunk is raised",
    NULL,
};

static const char *const litellm_not_modelled[] = {
    "routing strategies other than simple-shuffle; rpm/tpm limits (only their weights); "
    "enable_pre_call_checks",
    "the loop's sleeps reading the first failure's Retry-After instead of the latest; the sleep "
    "after the last retry before raising (router.py f292d1ae)",
    "fallbacks of fallback groups (one level: the requested group's), max_fallbacks",
    "Retry-After read in whole seconds (int()): fusebox uses the hint as the provider sent it",
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
    const char *s = ld_suggest(prov ? prov : model ? model : id, names);
    char list[SIM_PROVIDERS_MAX * (SIM_NAME_MAX + 2)];
    provider_names(sc, list, sizeof list);
    snprintf(
        msg, msglen,
        "%s (model_name '%s'): no scenario provider for this deployment (model_info.id %s%s%s, "
        "litellm_params.model %s%s%s, LiteLLM's provider %s%s%s); the scenario's providers: "
        "%s%s%s%s (name one with the entry's model_info.id or \"provider\")",
        where, group, id ? "'" : "", id ? id : "none", id ? "'" : "", model ? "'" : "",
        model ? model : "none", model ? "'" : "", prov ? "'" : "", prov ? prov : "none",
        prov ? "'" : "", list, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
    return -1;
}

/*
 * The provider a model_list entry deploys: "provider" (that name, or an
 * error); else the first of model_info.id, litellm_params.model and
 * LiteLLM's provider of that model (litellm_provider_of) that names a
 * scenario provider, so a config written for LiteLLM maps onto a scenario
 * whose providers are named after the vendors.
 */
static int deployment_provider(const cJSON *e, const sim_scenario *sc, const char *where,
                               const char *group, char *msg, size_t msglen) {
    const char *name = string_at(e, "provider");
    if (name) return provider_index(sc, name, where, msg, msglen);
    const char *id = string_at(cJSON_GetObjectItemCaseSensitive(e, "model_info"), "id");
    const char *model = string_at(cJSON_GetObjectItemCaseSensitive(e, "litellm_params"), "model");
    if (!id && !model) {
        snprintf(msg, msglen, "%s: name its provider (\"provider\": NAME)", where);
        return -1;
    }
    char buf[SIM_NAME_MAX];
    const char *prov = model ? litellm_provider_of(model, buf, sizeof buf) : NULL;
    const char *tries[] = {id, model, prov};
    for (size_t t = 0; t < 3; t++) {
        int i = tries[t] ? sim_scenario_provider(sc, tries[t]) : -1;
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
    if (!cJSON_IsObject(lp) || known_keys(lp, keys, where, msg, msglen) != FB_OK) {
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
    const char *group = string_at(e, "model_name");
    if (!cJSON_IsObject(e) || group == NULL || strlen(group) >= SIM_NAME_MAX) {
        snprintf(msg, msglen, "%s: an object with a model_name", where);
        return FB_EINVAL;
    }
    if (known_keys(e, keys, where, msg, msglen) != FB_OK) return FB_EINVAL;
    int p = deployment_provider(e, sc, where, group, msg, msglen);
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
static int litellm_groups(const cJSON *list, const sim_scenario *sc, lgroups *g, char *msg,
                          size_t msglen) {
    memset(g, 0, sizeof *g);
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

/* The fallback groups of `group` in a [{GROUP: [GROUP...]}] list (NULL when none). */
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
    const cJSON *model = json_of(preset_given(p, v, "model"));
    const cJSON *fb = json_of(preset_given(p, v, "fallbacks"));
    const cJSON *dflt = json_of(preset_given(p, v, "default_fallbacks"));
    const cJSON *cw = json_of(preset_given(p, v, "context_window_fallbacks"));
    const cJSON *cp = json_of(preset_given(p, v, "content_policy_fallbacks"));
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
    if (list == NULL && cJSON_IsArray(dflt)) list = dflt; /* Router: {"*": default_fallbacks} */
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
    return FB_OK;
}

/* The gateways' retries: `retries` after the first call, base * 2^(n-1) capped at `cap`; a
   stream that breaks after its first chunk is raised. */
static fb_retry_config *gateway_retry(sim_layer *L, uint32_t retries, fb_time_us base_us,
                                      fb_time_us cap_us) {
    fb_retry_config *r = &L->retry;
    *r = (fb_retry_config){0};
    r->retries = retries;
    if (retries == 0) r->attempts = 1;
    r->backoff = FB_BACKOFF_EXPONENTIAL;
    r->base_us = base_us;
    r->multiplier = 2;
    r->delay_us_max = cap_us;
    L->stream = FB_STREAM_FAIL;
    return r;
}

/*
 * _time_to_sleep_before_retry and utils._calculate_retry_after: INITIAL_RETRY_DELAY 0.5 s,
 * MAX_RETRY_DELAY 8 s, JITTER 0.75 s added after the cap, retry_after as a floor.
 */
static void litellm_retry(const sim_preset *p, const sim_param_value *v, sim_layer *L) {
    const sim_param_value *n = preset_given(p, v, "num_retries");
    const sim_param_value *floor_s = preset_given(p, v, "retry_after");
    const sim_param_value *t = preset_given(p, v, "timeout");
    fb_retry_config *r =
        gateway_retry(L, n ? (uint32_t)n->num : 2, 500 * FB_US_PER_MS, 8 * FB_US_PER_S);
    r->backoff_hold = 1;
    r->delay_us_min = floor_s ? floor_s->us : 0;
    r->jitter = FB_JITTER_ADDITIVE;
    r->jitter_us = 750 * FB_US_PER_MS;
    r->cap_order = FB_CAP_BACKOFF_ONLY;
    r->retry_after = FB_RETRY_AFTER_AS_IS;
    r->retry_after_us_max = 60 * FB_US_PER_S;
    r->above_max = FB_ABOVE_MAX_BACKOFF;
    r->ignore_zero_hint = FB_ON;
    r->hint_jitter = FB_ON;
    r->attempt_timeout_us = t ? t->us : 6000 * FB_US_PER_S;
}

/* What a RetryPolicy field (or an allowed-fails field) says for class c: count + 1, 0 unset. */
static uint32_t policy_count(const sim_preset *p, const sim_param_value *v, const char *obj,
                             const char *const *fields, enum lclass c) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", obj, fields[c]);
    const sim_param_value *x = preset_given(p, v, key);
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

/* litellm exceptions and their cooldown: _is_cooldown_required, _should_cooldown_deployment. */
static void litellm_rules_for(sim_layer *L, const lmode *m, uint8_t multi) {
    /* 429: at once in a group of several (v2), the rate rule in a group of one */
    class_rule(L, status_rule(L, 429, 1, 1), m, LC_RATE_LIMIT, FB_TRIP_NOW)->providers = multi;
    class_rule(L, status_rule(L, 429, 1, 1), m, LC_RATE_LIMIT, FB_TRIP_RULES);
    /* 401: not retried in a group of one (should_retry_this_error); not retryable: at once */
    class_rule(L, status_rule(L, 401, 0, 1), m, LC_AUTH, FB_TRIP_NOW)->providers = m->single;
    class_rule(L, status_rule(L, 401, 1, 1), m, LC_AUTH, FB_TRIP_NOW);
    class_rule(L, status_rule(L, 404, 0, 1), m, LC_NONE, FB_TRIP_NOW);
    class_rule(L, status_rule(L, 408, 1, 1), m, LC_TIMEOUT, FB_TRIP_RULES);
    class_rule(L, outcome_rule(L, FB_OUT_TIMEOUT, 1, 1), m, LC_TIMEOUT, FB_TRIP_RULES);
    /* 400s are retried and fall back; counted, never cooled */
    class_rule(L, outcome_rule(L, FB_OUT_CONTEXT_LENGTH, !m->cw_set, 1), m, LC_BAD_REQUEST,
               FB_TRIP_NEVER);
    sim_status_rule *r = class_rule(L, outcome_rule(L, FB_OUT_POLICY, !m->cp_set, 1), m,
                                    LC_CONTENT_POLICY, FB_TRIP_NEVER);
    if (r->attempts == 0) r->attempts = m->attempts[LC_BAD_REQUEST]; /* a BadRequestError too */
    class_rule(L, status_rule(L, 400, 1, 1), m, LC_BAD_REQUEST, FB_TRIP_NEVER);
    class_rule(L, status_rule(L, 409, 1, 1), m, LC_NONE, FB_TRIP_NEVER);
    class_rule(L, status_rule(L, 500, 1, 1), m, LC_ISE, FB_TRIP_RULES);
    /* APIConnectionError: counted, never cooled */
    class_rule(L, transport_rule(L, FB_TRANSPORT_CONNECT, 1, 1), m, LC_NONE, FB_TRIP_NEVER);
    class_rule(L, transport_rule(L, FB_TRANSPORT_RESET, 1, 1), m, LC_NONE, FB_TRIP_NEVER);
    /* every other 5xx (502, 503, 529...): the rules; other 4xx: retried, never cooled */
    class_rule(L, outcome_rule(L, FB_OUT_TRANSIENT, 1, 1), m, LC_NONE, FB_TRIP_RULES);
    class_rule(L, outcome_rule(L, FB_OUT_PERMANENT, 1, 1), m, LC_NONE, FB_TRIP_NEVER);
    class_rule(L, outcome_rule(L, FB_OUT_REJECTED, 1, 1), m, LC_NONE, FB_TRIP_NEVER)->effect =
        FB_EFFECT_IGNORE;
}

/* v2 (the percentage rule) or v1 (allowed fails), and the policies' counts per class. */
static void litellm_mode(const sim_preset *p, const sim_param_value *v, const lgroups *g,
                         lmode *m) {
    memset(m, 0, sizeof *m);
    const sim_param_value *af = preset_given(p, v, "allowed_fails");
    bool policy = preset_given(p, v, "allowed_fails_policy") != NULL;
    /* _is_allowed_fails_set_on_router: set and not litellm.allowed_fails (3) */
    m->v1 = policy || (af && (uint32_t)af->num != 3);
    for (int c = 0; c < LC_N; c++) {
        m->attempts[c] = policy_count(p, v, "retry_policy", retry_fields, (enum lclass)c);
        m->limit[c] = policy_count(p, v, "allowed_fails_policy", fails_fields, (enum lclass)c);
    }
    for (uint32_t q = 0; q < SIM_PROVIDERS_MAX; q++)
        if (g->group_of[q] >= 0 && g->size[g->group_of[q]] == 1) m->single |= (uint8_t)(1u << q);
    m->cw_set = cJSON_GetArraySize(json_of(preset_given(p, v, "context_window_fallbacks"))) > 0;
    m->cp_set = cJSON_GetArraySize(json_of(preset_given(p, v, "content_policy_fallbacks"))) > 0;
}

/* A deployment's cooldown as an fb_breaker (COOLDOWN mode, no half-open). */
static fb_breaker_config litellm_breaker(const sim_preset *p, const sim_param_value *v,
                                         const lgroups *g, const lmode *m, uint32_t q) {
    const sim_param_value *ct = preset_given(p, v, "cooldown_time");
    const sim_param_value *af = preset_given(p, v, "allowed_fails");
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
    const sim_param_value *rs = preset_given(p, v, "routing_strategy");
    if (rs && rs->word != 0) {
        snprintf(msg, msglen, "routing_strategy %s is not modelled (simple-shuffle only)",
                 litellm_strategies[rs->word]);
        return FB_EINVAL;
    }
    if (litellm_groups(json_of(preset_given(p, v, "model_list")), sc, &g, msg, msglen) != FB_OK ||
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
    const sim_param_value *off = preset_given(p, v, "disable_cooldowns");
    for (uint32_t q = 0; q < sc->provider_count; q++) {
        sim_provider_policy *pp = &L->per_provider[q];
        pp->has_breaker = g.group_of[q] >= 0 && !(off && off->num) && g.cooldown_s[q] != 0;
        if (pp->has_breaker) pp->breaker = litellm_breaker(p, v, &g, &m, q);
    }
    if (preset_given(p, v, "redis_host") || preset_given(p, v, "redis_url")) {
        L->breaker_scope = SIM_SCOPE_PUBLISHED;
        L->sync_delay_us = 10 * FB_US_PER_S;
    }
    return FB_OK;
}

const sim_preset sim_preset_litellm = {
    "litellm",
    "litellm (PyPI), the Router",
    "main, 2025-12 to 2026-07 (router.py f292d1ae, cooldown_handlers.py after PR #17464)",
    "litellm/router.py (async_function_with_retries, should_retry_this_error, "
    "_time_to_sleep_before_retry, deployment_callback_on_failure) at blob f292d1ae; "
    "litellm/router_utils/cooldown_handlers.py (_is_cooldown_required, "
    "_should_cooldown_deployment, should_cooldown_based_on_allowed_fails_policy) after PR "
    "#17464; router_utils/cooldown_cache.py 565caa59; "
    "router_utils/router_callbacks/track_deployment_metrics.py; caching/in_memory_cache.py "
    "f5c6c4a9 (a TTL refreshed on every increment); utils.py 2be93d92 (_calculate_retry_after, "
    "_should_retry); constants.py; router_utils/get_retry_from_policy.py",
    "the LiteLLM Router: model groups, retries, cooldowns and fallbacks",
    litellm_params,
    litellm_rules,
    litellm_not_modelled,
    litellm_apply,
};

/* ====================================================================== */
/* Portkey AI Gateway (open source)                                       */
/* ====================================================================== */

static const char *const portkey_modes[] = {"single", "fallback", "loadbalance", "conditional",
                                            NULL};

static const sim_param portkey_params[] = {
    {"retry", SIM_PK_OBJECT, 0, 0, "none", "the retry settings every target inherits", NULL},
    {"retry.attempts", SIM_PK_COUNT, 0, 1000, "0", "retries after the first call", NULL},
    {"retry.on_status_codes", SIM_PK_STATUSES, 0, 0, "[429, 500, 502, 503, 504]",
     "the statuses retried (RETRY_STATUS_CODES)", NULL},
    {"retry.use_retry_after_header", SIM_PK_BOOL, 0, 0, "false",
     "wait what a 429's retry-after-ms, x-ms-retry-after-ms or retry-after says", NULL},
    {"request_timeout", SIM_PK_MILLIS, 1, 1e9, "none",
     "milliseconds an attempt may take; then a 408", NULL},
    {"strategy", SIM_PK_OBJECT, 0, 0, "none (single)", "how the targets are used", NULL},
    {"strategy.mode", SIM_PK_WORD, 0, 0, "single", "single or fallback (modelled)", portkey_modes},
    {"strategy.on_status_codes", SIM_PK_STATUSES, 0, 0, "any status but 2xx",
     "fallback: the statuses that move on to the next target", NULL},
    {"targets", SIM_PK_JSON, 0, 0, "none",
     "[{\"provider\" or \"virtual_key\": PROVIDER, \"request_timeout\", \"retry\"}]: the "
     "scenario providers, in order",
     NULL},
    {"provider", SIM_PK_JSON, 0, 0, "the first LLM provider",
     "a single target's scenario provider (without targets)", NULL},
    {"virtual_key", SIM_PK_JSON, 0, 0, "none", "as provider", NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
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
    if (!cJSON_IsObject(t) || known_keys(t, keys, where, msg, msglen) != FB_OK) {
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
    const char *name = string_at(t, "virtual_key");
    if (!name) name = string_at(t, "provider");
    if (!name) {
        snprintf(msg, msglen, "%s: name its provider (\"provider\": NAME)", where);
        return -1;
    }
    int q = provider_index(sc, name, where, msg, msglen);
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
    const sim_param_value *mode = preset_given(p, v, "strategy.mode");
    const cJSON *targets = json_of(preset_given(p, v, "targets"));
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
    const cJSON *name = json_of(preset_given(p, v, "virtual_key"));
    if (!name) name = json_of(preset_given(p, v, "provider"));
    if (!name) {
        L->order_len = L->order_len > 0 ? 1 : 0;
        return FB_OK;
    }
    int q =
        cJSON_IsString(name) ? provider_index(sc, name->valuestring, "provider", msg, msglen) : -1;
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
    const sim_param_value *n = preset_given(p, v, "retry.attempts");
    const sim_param_value *hdr = preset_given(p, v, "retry.use_retry_after_header");
    const sim_param_value *t = preset_given(p, v, "request_timeout");
    fb_retry_config *r = gateway_retry(L, n ? (uint32_t)n->num : 0, FB_US_PER_S, FB_TIME_MAX);
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
    const sim_param_value *n = preset_given(p, v, "retry.attempts");
    const sim_param_value *rl = preset_given(p, v, "retry.on_status_codes");
    const sim_param_value *fl = preset_given(p, v, "strategy.on_status_codes");
    const sim_param_value *mode = preset_given(p, v, "strategy.mode");
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
            status_rule(L, st, listed(rl, st), fallback && (!fl || listed(fl, st)));
        }
    }
    /* a timeout answers 408; a call without a response ends as 500 */
    outcome_rule(L, FB_OUT_TIMEOUT, listed(rl, 408), fallback && (!fl || listed(fl, 408)));
    transport_rule(L, FB_TRANSPORT_CONNECT, 1, fallback && (!fl || listed(fl, 500)));
    transport_rule(L, FB_TRANSPORT_RESET, 1, fallback && (!fl || listed(fl, 500)));
    transport_rule(L, FB_TRANSPORT_OTHER, 1, fallback && (!fl || listed(fl, 500)));
    /* every other failure: returned at once; moves on unless a list says otherwise */
    rule(L)->retry = 0;
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

const sim_preset sim_preset_portkey = {
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
};

/* ====================================================================== */
/* Envoy: the route's retry policy, the cluster's outlier detection       */
/* ====================================================================== */

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
    {"retry_on", SIM_PK_CSV, 0, 0, "none (no retries)",
     "the retry conditions (RetryPolicy.retry_on, comma-separated)", envoy_retry_on},
    {"num_retries", SIM_PK_COUNT, 0, 1000, "1", "retries after the first attempt", NULL},
    {"per_try_timeout", SIM_PK_PROTO_DURATION, 0.001, 1e6, "none (the route timeout)",
     "each attempt's timeout", NULL},
    {"timeout", SIM_PK_PROTO_DURATION, 0, 1e6, "15s",
     "the route timeout: the whole request, retries and back-off included; 0s: none", NULL},
    {"retry_back_off", SIM_PK_OBJECT, 0, 0, "{base_interval: 0.025s}", "the back-off", NULL},
    {"retry_back_off.base_interval", SIM_PK_PROTO_DURATION, 0.001, 1e6, "0.025s",
     "B: retry n waits U[0, B * 2^(n-1)) ms", NULL},
    {"retry_back_off.max_interval", SIM_PK_PROTO_DURATION, 0.001, 1e6, "10 * base_interval",
     "the cap of the interval", NULL},
    {"retriable_status_codes", SIM_PK_STATUSES, 0, 0, "none", "retried with retriable-status-codes",
     NULL},
    {"max_retries", SIM_PK_COUNT, 0, 1000000, "3",
     "circuit_breakers.thresholds[].max_retries: retries in progress at once per instance, "
     "when there is no retry_budget",
     NULL},
    {"retry_budget", SIM_PK_OBJECT, 0, 0, "none",
     "circuit_breakers.thresholds[].retry_budget: replaces max_retries", NULL},
    {"retry_budget.budget_percent", SIM_PK_PROTO_PERCENT, 0, 100, "20",
     "retries in progress may be this % of the requests in progress", NULL},
    {"retry_budget.min_retry_concurrency", SIM_PK_COUNT, 1, 1000000, "3",
     "... but always at least this many", NULL},
    {"outlier_detection", SIM_PK_OBJECT, 0, 0, "none (no ejection)",
     "the cluster's outlier detection (consecutive 5xx)", NULL},
    {"outlier_detection.consecutive_5xx", SIM_PK_COUNT, 1, 1000000, "5",
     "5xx (and local errors) in a row that eject a host", NULL},
    {"outlier_detection.interval", SIM_PK_PROTO_DURATION, 0.001, 1e6, "10s",
     "the sweep period: hosts come back, and the multiplier decays, at sweeps", NULL},
    {"outlier_detection.base_ejection_time", SIM_PK_PROTO_DURATION, 0.001, 1e6, "30s",
     "ejection time = base * multiplier", NULL},
    {"outlier_detection.max_ejection_time", SIM_PK_PROTO_DURATION, 0.001, 1e7,
     "max(300s, base_ejection_time)", "the ejection time's cap", NULL},
    {"outlier_detection.max_ejection_percent", SIM_PK_COUNT, 0, 100, "10",
     "hosts ejected at once stay under this % of the cluster's", NULL},
    {"outlier_detection.enforcing_consecutive_5xx", SIM_PK_COUNT, 0, 100, "100",
     "% of detections enforced (0 and 100 modelled)", NULL},
    {"lb_policy", SIM_PK_WORD, 0, 0, "ROUND_ROBIN", "how each attempt picks a host", envoy_lb},
    {"hosts", SIM_PK_WORDS, 0, 0, "every LLM provider", "the cluster's hosts: scenario providers",
     NULL},
    {NULL, SIM_PK_COUNT, 0, 0, NULL, NULL, NULL},
};

static const char *const envoy_rules[] = {
    "the cluster's hosts are the scenario's providers (hosts): every attempt, retries too, is "
    "sent to the host the load balancer picks among those not ejected: ROUND_ROBIN rotates per "
    "instance (pod), RANDOM draws; a retry may land on the same host",
    "no retry_on, no retries; else up to num_retries retries of: 5xx any 5xx; gateway-error 502, "
    "503, 504; reset, 5xx and gateway-error a reset or refused connection; connect-failure a "
    "refused connection; retriable-4xx 409; retriable-status-codes the listed statuses; a "
    "per_try_timeout with 5xx or gateway-error (retry_state_impl.cc wouldRetryFromHeaders, "
    "wouldRetryFromReset)",
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
    "rate_limited_retry_back_off (reset headers); envoy-ratelimited, retriable-headers and "
    "refused-stream conditions (fusebox has no such replies)",
    NULL,
};

/* The hosts: the listed providers, else every LLM provider; one group. */
static int envoy_hosts(const sim_preset *p, const sim_param_value *v, const sim_scenario *sc,
                       sim_layer *L, char *msg, size_t msglen) {
    const cJSON *hosts = json_of(preset_given(p, v, "hosts"));
    if (hosts) {
        L->order_len = 0;
        size_t i = 0;
        for (const cJSON *h = hosts->child; h; h = h->next, i++) {
            char where[32];
            snprintf(where, sizeof where, "hosts[%zu]", i);
            int q = provider_index(sc, h->valuestring, where, msg, msglen);
            if (q < 0) return FB_EINVAL;
            for (uint32_t k = 0; k < L->order_len; k++)
                if (L->order[k] == q) {
                    snprintf(msg, msglen, "%s: '%s' is listed twice", where, h->valuestring);
                    return FB_EINVAL;
                }
            L->order[L->order_len++] = (uint8_t)q;
        }
    }
    const sim_param_value *lb = preset_given(p, v, "lb_policy");
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
        envoy_rule(status_rule(L, codes->list[i], 1, 0), codes->list[i] >= 500);
    envoy_rule(status_rule(L, 409, c[ON_4XX], 0), false);
    envoy_rule(status_rule(L, 408, 0, 0), false);
    for (int st = 502; st <= 504; st++) envoy_rule(status_rule(L, st, any5 || gw, 0), true);
    envoy_rule(transport_rule(L, FB_TRANSPORT_CONNECT, reset || c[ON_CONNECT], 0), true);
    envoy_rule(transport_rule(L, FB_TRANSPORT_RESET, reset, 0), true);
    envoy_rule(transport_rule(L, FB_TRANSPORT_OTHER, reset, 0), true);
    envoy_rule(outcome_rule(L, FB_OUT_TIMEOUT, any5 || gw, 0), true); /* a per-try timeout */
    envoy_rule(outcome_rule(L, FB_OUT_TRANSIENT, any5, 0), true);     /* the other 5xx */
    outcome_rule(L, FB_OUT_REJECTED, 0, 0)->effect = FB_EFFECT_IGNORE;
    envoy_rule(rule(L), false); /* 4xx and the rest: returned, and they end a 5xx run */
    L->rules[L->rule_count - 1].retry = 0;
    L->rules[L->rule_count - 1].fallback = 0;
}

/* RetryStateImpl: num_retries, JitteredExponentialBackOffStrategy, the route timeout. */
static int envoy_retry(const sim_preset *p, const sim_param_value *v, sim_layer *L, char *msg,
                       size_t msglen) {
    const sim_param_value *on = preset_given(p, v, "retry_on");
    const sim_param_value *n = preset_given(p, v, "num_retries");
    const sim_param_value *base = preset_given(p, v, "retry_back_off.base_interval");
    const sim_param_value *max = preset_given(p, v, "retry_back_off.max_interval");
    const sim_param_value *per_try = preset_given(p, v, "per_try_timeout");
    const sim_param_value *timeout = preset_given(p, v, "timeout");
    uint32_t retries = on && on->list_count > 0 ? (n ? (uint32_t)n->num : 1) : 0;
    /* a base below 1 ms is rounded up to 1 ms (route_components.proto) */
    fb_time_us base_us = base ? base->us : 25 * FB_US_PER_MS;
    if (base_us < FB_US_PER_MS) base_us = FB_US_PER_MS;
    fb_retry_config *r = gateway_retry(L, retries, base_us, max ? max->us : base_us * 10);
    if (r->delay_us_max < r->base_us) {
        snprintf(msg, msglen, "retry_back_off.max_interval must be >= base_interval");
        return FB_EINVAL;
    }
    r->jitter = FB_JITTER_FULL; /* a uniform draw % interval: whole ms in [0, interval) */
    r->resolution_us = FB_US_PER_MS;
    r->retry_after = FB_RETRY_AFTER_IGNORE;
    r->attempt_timeout_us = per_try ? per_try->us : 0;
    r->deadline_us = timeout ? timeout->us : 15 * FB_US_PER_S;
    envoy_rules_for(on, preset_given(p, v, "retriable_status_codes"), L);
    return FB_OK;
}

/* The cluster's retry circuit breaker: max_retries, or the retry budget. */
static void envoy_budget(const sim_preset *p, const sim_param_value *v, sim_layer *L) {
    const sim_param_value *mr = preset_given(p, v, "max_retries");
    const sim_param_value *pct = preset_given(p, v, "retry_budget.budget_percent");
    const sim_param_value *min = preset_given(p, v, "retry_budget.min_retry_concurrency");
    L->budget = (fb_budget_config){.kind = FB_BUDGET_CONCURRENCY};
    if (preset_given(p, v, "retry_budget")) {
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
    if (!preset_given(p, v, "outlier_detection")) return FB_OK;
    const sim_param_value *c5 = preset_given(p, v, "outlier_detection.consecutive_5xx");
    const sim_param_value *iv = preset_given(p, v, "outlier_detection.interval");
    const sim_param_value *base = preset_given(p, v, "outlier_detection.base_ejection_time");
    const sim_param_value *max = preset_given(p, v, "outlier_detection.max_ejection_time");
    const sim_param_value *pct = preset_given(p, v, "outlier_detection.max_ejection_percent");
    const sim_param_value *enf = preset_given(p, v, "outlier_detection.enforcing_consecutive_5xx");
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
    const sim_param_value *mr = preset_given(p, v, "max_retries");
    if (mr && mr->num == 0 && !preset_given(p, v, "retry_budget")) {
        /* no retry may ever be in progress: no retries */
        L->budget = (fb_budget_config){0};
        L->retry.retries = 0;
        L->retry.attempts = 1;
    }
    return FB_OK;
}

const sim_preset sim_preset_envoy = {
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
};
