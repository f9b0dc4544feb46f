/* preset.c - the catalog of library presets; see preset.h and docs/presets.md. */
#include "sim/preset.h"

#include <string.h>

#include "sim/presetint.h"

/* One line per preset (clang-format would pack them), so that adding one touches one line. */
/* clang-format off */
static const sim_preset *const catalog[] = {
    &sim_preset_openai_python,
    &sim_preset_openai_node,
    &sim_preset_anthropic_python,
    &sim_preset_anthropic_node,
    &sim_preset_vercel_ai,
    &sim_preset_langchain_python_retry,
    &sim_preset_langchain_python_fallbacks,
    &sim_preset_langchain_js,
    &sim_preset_langchain_js_fallbacks,
    &sim_preset_litellm,
    &sim_preset_portkey,
    &sim_preset_envoy,
    &sim_preset_resilience4j,
    &sim_preset_polly,
    &sim_preset_gobreaker,
    &sim_preset_pybreaker,
    &sim_preset_opossum,
    &sim_preset_cockatiel,
    &sim_preset_tenacity,
    NULL,
};
/* clang-format on */

const sim_preset *const *sim_presets(void) {
    return catalog;
}

const sim_preset *sim_preset_find(const char *name) {
    for (size_t i = 0; catalog[i]; i++)
        if (strcmp(catalog[i]->name, name) == 0) return catalog[i];
    return NULL;
}

int sim_preset_param(const sim_preset *p, const char *name) {
    for (int i = 0; p->params[i].name; i++)
        if (strcmp(p->params[i].name, name) == 0) return i;
    return -1;
}
