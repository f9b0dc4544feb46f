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
/* preset_gateway.c */
extern const sim_preset sim_preset_litellm, sim_preset_portkey, sim_preset_envoy;

/* The value of parameter `name` if it was given, else NULL. */
const sim_param_value *preset_given(const sim_preset *p, const sim_param_value *v,
                                    const char *name);

#endif /* SIM_PRESETINT_H */
