/*
 * presetint.h - the presets' files share this: the catalog's entries, one
 * per library (preset_sdk.c: the provider SDKs; others by family), and the
 * helpers their apply() functions use to set a layer in fusebox's terms
 * (all in preset.c, so that a library's file holds only its rules).
 * Each preset's rules follow the library's source at the version it names;
 * docs/presets.md is `fusebox presets --markdown`.
 */
#ifndef SIM_PRESETINT_H
#define SIM_PRESETINT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "scenario/preset.h"
#include "scenario/scenario.h"

/*
 * One row of a preset's parameter table (an ld_field, scenario/table.h): the library's key and
 * how the library writes its value, then the columns it needs: .lo, .hi (the accepted range, in
 * the library's unit), .names (WORD, WORDS, CSV: the accepted names), .def_doc (the library's
 * default, as it writes it) and .doc. The table ends with {0}.
 */
#define PRESET_PARAM(NAME, PK, ...)                                                                \
    { .name = NAME, .kind = LD_KIND_OF(PK), .notation = PK, __VA_ARGS__ }

/* preset_sdk.c */
extern const sim_preset scn_preset_openai_python;
extern const sim_preset scn_preset_openai_node;
extern const sim_preset scn_preset_anthropic_python;
extern const sim_preset scn_preset_anthropic_node;
extern const sim_preset scn_preset_vercel_ai;
extern const sim_preset scn_preset_langchain_python_retry;
extern const sim_preset scn_preset_langchain_python_fallbacks;
extern const sim_preset scn_preset_langchain_js;
extern const sim_preset scn_preset_langchain_js_fallbacks;
/* preset_resilience.c, preset_resilience_py.c, preset_resilience_js.c */
extern const sim_preset scn_preset_resilience4j;
extern const sim_preset scn_preset_polly;
extern const sim_preset scn_preset_gobreaker;
extern const sim_preset scn_preset_pybreaker;
extern const sim_preset scn_preset_opossum;
extern const sim_preset scn_preset_cockatiel;
extern const sim_preset scn_preset_tenacity;
/* preset_litellm.c, preset_portkey.c, preset_envoy.c */
extern const sim_preset scn_preset_litellm, scn_preset_portkey, scn_preset_envoy;
/* preset_litellm.c: scn_preset_inert for a LiteLLM layer. */
int scn__litellm_inert(const sim_layer *L, const sim_scenario *sc, const char *param, char *why,
                       size_t len);

/* preset.c: what the gateway presets share. */

/* A rule that matches everything and changes nothing, appended to L's (the last one when full). */
sim_status_rule *scn__preset_rule(sim_layer *L);
/* A rule for answers of `status`; retry and fallback are 1, 0 or -1 (unchanged). */
sim_status_rule *scn__preset_status_rule(sim_layer *L, int status, int retry, int fallback);
/* A rule for outcome o (any status). */
sim_status_rule *scn__preset_outcome_rule(sim_layer *L, fb_outcome o, int retry, int fallback);
/* A rule for transport failure t (no answer). */
sim_status_rule *scn__preset_transport_rule(sim_layer *L, fb_transport t, int retry, int fallback);
/* The scenario's provider named `name`, or -1 with a message (and a did-you-mean). */
int scn__preset_provider_index(const sim_scenario *sc, const char *name, const char *where,
                               char *msg, size_t msglen);
/* The JSON of an object- or list-valued parameter, or NULL when not given. */
const cJSON *scn__preset_json_of(const sim_param_value *v);
/* A string member of o, or NULL. */
const char *scn__preset_string_at(const cJSON *o, const char *key);
/* Every key of object o is one of keys (NULL-terminated); else FB_EINVAL and a message naming
   the first that is not. */
int scn__preset_known_keys(const cJSON *o, const char *const *keys, const char *where, char *msg,
                           size_t msglen);
/* The gateways' retries: `retries` after the first call, base * 2^(n-1) capped at `cap`; a
   stream that breaks after its first chunk is raised. */
fb_retry_config *scn__preset_gateway_retry(sim_layer *L, uint32_t retries, fb_time_us base_us,
                                           fb_time_us cap_us);

/* The value of parameter `name` if it was given, else NULL. */
const sim_param_value *scn__preset_given(const sim_preset *p, const sim_param_value *v,
                                         const char *name);

/* preset.c: what the resilience presets share. */

/* The outcomes an error answer can have: everything but success and cancellation. */
#define PRESET_EVERY_FAILURE                                                                       \
    ((1u << FB_OUT_TRANSIENT) | (1u << FB_OUT_RATE_LIMITED) | (1u << FB_OUT_TIMEOUT) |             \
     (1u << FB_OUT_PERMANENT) | (1u << FB_OUT_POLICY) | (1u << FB_OUT_CONTEXT_LENGTH) |            \
     (1u << FB_OUT_REJECTED))

/* The open period and the half-open rule the breakers share: open for open_us, then `permits`
   trial calls (per half-open period, or at once), any failure re-opens, no lease, Retry-After
   not read. */
void scn__preset_trial_calls(fb_breaker_config *b, fb_time_us open_us, fb_compare deadline,
                             uint32_t permits, fb_probe_limit limit);
/* The layer: breaker b on every provider; every error answer trips it (and is retried). */
void scn__preset_breaker_layer(sim_layer *L, const fb_breaker_config *b, bool retried);
/* A library that does not read Retry-After, and waits as its backoff says. */
void scn__preset_no_retry_after(fb_retry_config *r);
/* Parameter `name`'s number (or duration) if given, else d. */
double scn__preset_num_or(const sim_preset *p, const sim_param_value *v, const char *name,
                          double d);
fb_time_us scn__preset_us_or(const sim_preset *p, const sim_param_value *v, const char *name,
                             fb_time_us d);
/* A boolean parameter: given and not 0. */
bool scn__preset_flag(const sim_preset *p, const sim_param_value *v, const char *name);
/* A threshold given in percent as the breaker's rate in (0, 1]; 0 % trips on any failure. */
double scn__preset_rate_of_percent(double pct);

#endif /* SIM_PRESETINT_H */
