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
