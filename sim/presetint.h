/*
 * presetint.h - the presets' files share this: the catalog's entries, one
 * per library (preset_sdk.c: the provider SDKs; others by family), and the
 * helpers their apply() functions use to set a layer in fusebox's terms.
 * Each preset's rules follow the library's source at the version it names;
 * docs/presets.md is `fusebox presets --markdown`.
 */
#ifndef SIM_PRESETINT_H
#define SIM_PRESETINT_H

#include <stdio.h>

#include "sim/preset.h"
#include "sim/scenario.h"

/* preset_sdk.c */
extern const sim_preset sim_preset_openai_python;
extern const sim_preset sim_preset_openai_node;
extern const sim_preset sim_preset_anthropic_python;
extern const sim_preset sim_preset_anthropic_node;
extern const sim_preset sim_preset_vercel_ai;
extern const sim_preset sim_preset_langchain_python_retry;
extern const sim_preset sim_preset_langchain_python_fallbacks;
extern const sim_preset sim_preset_langchain_js;
extern const sim_preset sim_preset_langchain_js_fallbacks;
/* preset_resilience.c */
extern const sim_preset sim_preset_resilience4j;
extern const sim_preset sim_preset_polly;
extern const sim_preset sim_preset_gobreaker;
extern const sim_preset sim_preset_pybreaker;
extern const sim_preset sim_preset_opossum;
extern const sim_preset sim_preset_cockatiel;
extern const sim_preset sim_preset_tenacity;
/* preset_gateway.c */
extern const sim_preset sim_preset_litellm, sim_preset_portkey, sim_preset_envoy;

/* The value of parameter `name` if it was given, else NULL. */
const sim_param_value *preset_given(const sim_preset *p, const sim_param_value *v,
                                    const char *name);

#endif /* SIM_PRESETINT_H */
