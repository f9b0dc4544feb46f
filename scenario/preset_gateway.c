/*
 * preset_gateway.c - what the gateway presets share: the status rules they
 * append to a layer, the scenario's provider by name, and
 * the exponential retry the gateways use.
 *
 * A gateway is a routing layer: it chooses the provider of every attempt.
 * LiteLLM picks a deployment of the requested model group for each attempt,
 * retries included, and falls back to other model groups (preset_litellm.c);
 * Envoy picks a host of the cluster for each attempt through its load
 * balancer (preset_envoy.c); Portkey walks its fallback targets in order,
 * each with its own retries (preset_portkey.c). The scenario's providers are
 * the deployments, hosts and targets, named in each preset's own keys
 * (docs/presets.md says how).
 */
#include "scenario/presetint.h"

#include <string.h>

#include "scenario/loadint.h"

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
