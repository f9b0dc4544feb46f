/*
 * policy_r4j.c - resilience4j's Spring Boot properties as resilience4j
 * preset layers (policyint.h).
 *
 * resilience4j.circuitbreaker and resilience4j.retry, each with configs and
 * instances: one layer per instance, its base config's keys first and then
 * its own, in the preset's (camelCase) names.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/fb.h"
#include "import/policyint.h"

static const char *const r4j_structural[] = {"baseConfig", "base-config", NULL};

/* Spring's relaxed binding: "failure-rate-threshold" is failureRateThreshold. */
static void camel(const char *key, char *out, size_t len) {
    size_t j = 0;
    for (size_t i = 0; key[i] && j + 1 < len; i++) {
        if ((key[i] == '-' || key[i] == '_') && key[i + 1]) {
            out[j++] = (char)toupper((unsigned char)key[++i]);
        } else {
            out[j++] = key[i];
        }
    }
    out[j] = '\0';
}

/* An instance's settings: its base config (baseConfig, else "default") and then its own. */
static void r4j_section(const imp_node *sec, const char *secname, const char *inst,
                        const sim_preset *p, cJSON *layer, imp_result *r) {
    const imp_node *own = imp_get(imp_get(sec, "instances"), inst);
    const imp_node *basename = imp_get(own, "baseConfig");
    if (basename == NULL) basename = imp_get(own, "base-config");
    const char *base = basename && basename->kind == IMP_SCALAR ? basename->value : "default";
    const imp_node *cfg = imp_get(imp_get(sec, "configs"), base);
    char path[256];
    snprintf(path, sizeof path, "resilience4j.%s.configs.%s", secname, base);
    imp_copy_params(cfg, p, layer, path, r4j_structural, camel, NULL, r);
    snprintf(path, sizeof path, "resilience4j.%s.instances.%s", secname, inst);
    imp_copy_params(own, p, layer, path, r4j_structural, camel, NULL, r);
}

/*
 * A section: resilience4j: {circuitbreaker: ...} or, as Spring Boot's own
 * examples write it, a top-level "resilience4j.circuitbreaker:" key.
 */
static const imp_node *r4j_sec(const imp_node *root, const char *name) {
    const imp_node *sec = imp_get(imp_get(root, "resilience4j"), name);
    char dotted[64];
    snprintf(dotted, sizeof dotted, "resilience4j.%s", name);
    return sec ? sec : imp_get(root, dotted);
}

/* Every instance named in circuitbreaker or retry, once. */
static size_t r4j_instances(const imp_node *root, const char **names, size_t cap) {
    static const char *const secs[] = {"circuitbreaker", "retry"};
    size_t n = 0;
    for (size_t s = 0; s < 2; s++) {
        const imp_node *inst = imp_get(r4j_sec(root, secs[s]), "instances");
        for (size_t i = 0; inst && inst->kind == IMP_MAP && i + 1 < inst->n; i += 2) {
            bool seen = false;
            for (size_t j = 0; j < n && !seen; j++) seen = !strcmp(names[j], inst->items[i]->value);
            if (!seen && n < cap) names[n++] = inst->items[i]->value;
        }
    }
    return n;
}

/* Sections other than circuitbreaker and retry, in either spelling: noted, not read. */
static void r4j_unknown_sections(const imp_node *root, imp_result *r) {
    const imp_node *nested = imp_get(root, "resilience4j");
    for (int pass = 0; pass < 2; pass++) {
        const imp_node *m = pass == 0 ? nested : root;
        for (size_t i = 0; m && m->kind == IMP_MAP && i + 1 < m->n; i += 2) {
            const char *k = m->items[i]->value;
            if (pass == 1 && strncmp(k, "resilience4j.", 13) != 0) continue;
            if (pass == 1) k += 13;
            if (strcmp(k, "circuitbreaker") == 0 || strcmp(k, "retry") == 0) continue;
            char path[256];
            snprintf(path, sizeof path, "resilience4j.%s", k);
            imp_add_note(r, path, m->items[i],
                         "not modelled (fusebox reads circuitbreaker and retry)");
        }
    }
}

int imp_import_r4j(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err) {
    const sim_preset *p = scn_preset_find("resilience4j");
    if (p == NULL) return imp_fail_at(err, NULL, FB_ENOTFOUND, "%s", "no resilience4j preset");
    const imp_node *cb = r4j_sec(root, "circuitbreaker"), *retry = r4j_sec(root, "retry");
    if (cb == NULL && retry == NULL)
        return imp_fail_at(err, root, FB_EINVAL, "%s",
                           "no resilience4j.circuitbreaker or resilience4j.retry section");
    const char *names[64];
    size_t n = r4j_instances(root, names, 64);
    if (n == 0)
        return imp_fail_at(err, cb ? cb : retry, FB_EINVAL, "%s",
                           "no instances under resilience4j.circuitbreaker or resilience4j.retry");
    r4j_unknown_sections(root, r);
    for (size_t i = 0; i < n; i++) {
        cJSON *layer = cJSON_CreateObject();
        cJSON_AddStringToObject(layer, "preset", "resilience4j");
        r4j_section(cb, "circuitbreaker", names[i], p, layer, r);
        r4j_section(retry, "retry", names[i], p, layer, r);
        cJSON_AddItemToObject(layers, names[i], layer);
    }
    return FB_OK;
}
