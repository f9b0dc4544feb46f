/* preset.c - the catalog of library presets; see preset.h and docs/presets.md. */
#include "sim/preset.h"

#include <string.h>

#include "sim/presetint.h"

static const sim_preset *const catalog[] = {
    &sim_preset_openai_python, &sim_preset_litellm, &sim_preset_portkey, &sim_preset_envoy, NULL,
};

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
