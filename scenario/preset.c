/*
 * preset.c - the catalog of library presets, and the helpers every preset's apply() uses
 * (presetint.h); each library's rules are in its own preset_*.c. See preset.h and
 * docs/presets.md.
 */
#include "scenario/preset.h"

#include <stdio.h>
#include <string.h>

#include "scenario/loadint.h"
#include "scenario/presetint.h"

/* One line per preset (clang-format would pack them), so that adding one touches one line. */
/* clang-format off */
static const sim_preset *const catalog[] = {
    &scn_preset_openai_python,
    &scn_preset_openai_node,
    &scn_preset_anthropic_python,
    &scn_preset_anthropic_node,
    &scn_preset_vercel_ai,
    &scn_preset_langchain_python_retry,
    &scn_preset_langchain_python_fallbacks,
    &scn_preset_langchain_js,
    &scn_preset_langchain_js_fallbacks,
    &scn_preset_litellm,
    &scn_preset_portkey,
    &scn_preset_envoy,
    &scn_preset_resilience4j,
    &scn_preset_polly,
    &scn_preset_gobreaker,
    &scn_preset_pybreaker,
    &scn_preset_opossum,
    &scn_preset_cockatiel,
    &scn_preset_tenacity,
    NULL,
};
/* clang-format on */

const sim_preset *const *scn_presets(void) {
    return catalog;
}

const sim_preset *scn_preset_find(const char *name) {
    for (size_t i = 0; catalog[i]; i++)
        if (strcmp(catalog[i]->name, name) == 0) return catalog[i];
    return NULL;
}

int scn_preset_param(const sim_preset *p, const char *name) {
    for (int i = 0; p->params[i].name; i++)
        if (strcmp(p->params[i].name, name) == 0) return i;
    return -1;
}

int scn_preset_inert(const sim_layer *L, const sim_scenario *sc, const char *param, char *why,
                     size_t len) {
    if (len) why[0] = '\0';
    if (L->preset == &scn_preset_litellm) return scn__litellm_inert(L, sc, param, why, len);
    return 0;
}

/* ---- what every preset's apply() uses (presetint.h) ---- */

/* Parameter `name` of p as the layer gave it, or NULL when not given. */
const sim_param_value *scn__preset_given(const sim_preset *p, const sim_param_value *v,
                                         const char *name) {
    int i = scn_preset_param(p, name);
    return i >= 0 && v[i].set ? &v[i] : NULL;
}

const cJSON *scn__preset_json_of(const sim_param_value *v) {
    return v ? (const cJSON *)v->json : NULL;
}

/* A string member, or NULL. */
const char *scn__preset_string_at(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Every key of object o is one of keys; else a message naming the first that is not. */
int scn__preset_known_keys(const cJSON *o, const char *const *keys, const char *where, char *msg,
                           size_t msglen) {
    for (const cJSON *it = o->child; it; it = it->next) {
        bool ok = false;
        for (size_t i = 0; keys[i] && !ok; i++) ok = strcmp(it->string, keys[i]) == 0;
        if (ok) continue;
        const char *s = scn__suggest(it->string, keys);
        snprintf(msg, msglen, "%s.%s: not modelled by this preset%s%s%s", where, it->string,
                 s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
        return FB_EINVAL;
    }
    return FB_OK;
}

/*
 * ---- the gateway presets (LiteLLM, Portkey, Envoy) ----
 *
 * The status rules they append to a layer, the scenario's provider by name, and the
 * exponential retry the gateways use. A gateway is a routing layer: it chooses the provider of
 * every attempt. LiteLLM picks a deployment of the requested model group for each attempt,
 * retries included, and falls back to other model groups (preset_litellm.c); Envoy picks a host
 * of the cluster for each attempt through its load balancer (preset_envoy.c); Portkey walks its
 * fallback targets in order, each with its own retries (preset_portkey.c). The scenario's
 * providers are the deployments, hosts and targets, named in each preset's own keys
 * (docs/presets.md says how).
 */

/* A rule that matches everything and changes nothing, appended to the layer's (sim_status_rule). */
sim_status_rule *scn__preset_rule(sim_layer *L) {
    if (L->rule_count == SIM_STATUS_RULES_MAX) return &L->rules[SIM_STATUS_RULES_MAX - 1];
    sim_status_rule *r = &L->rules[L->rule_count++];
    *r = (sim_status_rule){
        .outcome = -1, .transport = -1, .retry = -1, .fallback = -1, .effect = -1};
    return r;
}

sim_status_rule *scn__preset_status_rule(sim_layer *L, int status, int retry, int fallback) {
    sim_status_rule *r = scn__preset_rule(L);
    r->status = status;
    r->retry = (int8_t)retry;
    r->fallback = (int8_t)fallback;
    return r;
}

sim_status_rule *scn__preset_outcome_rule(sim_layer *L, fb_outcome o, int retry, int fallback) {
    sim_status_rule *r = scn__preset_status_rule(L, 0, retry, fallback);
    r->outcome = (int8_t)o;
    return r;
}

sim_status_rule *scn__preset_transport_rule(sim_layer *L, fb_transport t, int retry, int fallback) {
    sim_status_rule *r = scn__preset_status_rule(L, 0, retry, fallback);
    r->transport = (int8_t)t;
    return r;
}

/* The scenario's provider named `name`, or -1 with a message (and a did-you-mean). */
int scn__preset_provider_index(const sim_scenario *sc, const char *name, const char *where,
                               char *msg, size_t msglen) {
    int i = scn_provider(sc, name);
    if (i >= 0) return i;
    const char *names[SIM_PROVIDERS_MAX + 1];
    for (uint32_t k = 0; k < sc->provider_count; k++) names[k] = sc->providers[k].name;
    names[sc->provider_count] = NULL;
    const char *s = scn__suggest(name, names);
    snprintf(msg, msglen, "%s: no provider named '%s' in the scenario%s%s%s", where, name,
             s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
    return -1;
}

/* The gateways' retries: `retries` after the first call, base * 2^(n-1) capped at `cap`; a
   stream that breaks after its first chunk is raised. */
fb_retry_config *scn__preset_gateway_retry(sim_layer *L, uint32_t retries, fb_time_us base_us,
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

/* ---- the resilience presets (resilience4j, Polly, gobreaker, pybreaker, tenacity, opossum,
 * cockatiel) ---- */

/* Every error answer is a breaker failure (the call raised). */
static void every_error_trips(sim_layer *L) {
    L->classify.rate_limit_trips = FB_ON;
    L->classify.permanent_trips = FB_ON;
    L->classify.timeout_trips = FB_ON;
}

/* The retry retries what raised: every error answer. */
static void retry_every_error(sim_layer *L) {
    L->has_retry_on = true;
    L->retry_on_outcomes = PRESET_EVERY_FAILURE;
    L->retry_on_count = 0;
}

/* The same breaker for every provider the layer calls. */
static void breaker_everywhere(sim_layer *L, const fb_breaker_config *bc) {
    for (uint32_t i = 0; i < SIM_PROVIDERS_MAX; i++) {
        L->per_provider[i].has_breaker = true;
        L->per_provider[i].breaker = *bc;
    }
}

/*
 * The open period and the half-open rule the breakers below share: open for open_us, then
 * `permits` trial calls (per half-open period, or at once), any failure re-opens, no lease
 * (a trial that never reports holds half-open), Retry-After not read.
 */
void scn__preset_trial_calls(fb_breaker_config *b, fb_time_us open_us, fb_compare deadline,
                             uint32_t permits, fb_probe_limit limit) {
    b->open_us = open_us;
    b->open_us_max = open_us;
    b->open_deadline = deadline;
    b->half_open_permits = permits;
    b->probe_limit = limit;
    b->probe_verdict = FB_VERDICT_FIRST_FAILURE;
    b->probe_lease_us = FB_TIME_MAX;
    b->honor_hint = FB_OFF;
}

/* The layer: breaker b on every provider; every error answer trips it (and is retried). */
void scn__preset_breaker_layer(sim_layer *L, const fb_breaker_config *b, bool retried) {
    breaker_everywhere(L, b);
    every_error_trips(L);
    if (retried)
        retry_every_error(L);
    else
        L->retry.attempts = 1;
}

/* A library that does not read Retry-After, and waits as its backoff says. */
void scn__preset_no_retry_after(fb_retry_config *r) {
    r->retry_after = FB_RETRY_AFTER_IGNORE;
}

double scn__preset_num_or(const sim_preset *p, const sim_param_value *v, const char *name,
                          double d) {
    const sim_param_value *g = scn__preset_given(p, v, name);
    return g ? g->num : d;
}

fb_time_us scn__preset_us_or(const sim_preset *p, const sim_param_value *v, const char *name,
                             fb_time_us d) {
    const sim_param_value *g = scn__preset_given(p, v, name);
    return g ? g->us : d;
}

bool scn__preset_flag(const sim_preset *p, const sim_param_value *v, const char *name) {
    return scn__preset_num_or(p, v, name, 0) != 0;
}

/* A threshold given in percent as the breaker's rate in (0, 1]; 0 % trips on any failure. */
double scn__preset_rate_of_percent(double pct) {
    return pct <= 0 ? 1e-12 : pct / 100.0;
}
