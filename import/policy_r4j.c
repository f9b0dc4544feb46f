/*
 * policy_r4j.c - resilience4j's Spring Boot properties as resilience4j
 * preset layers (policyint.h).
 *
 * resilience4j.circuitbreaker and resilience4j.retry, each with configs and
 * instances: one layer per instance, its base config's keys first and then
 * its own, in the preset's (camelCase) names. Each section reads its own
 * keys only (the preset's "CircuitBreaker:" and "Retry:" parameters): the
 * Retry's ignoreExceptions is the preset's retryIgnoreExceptions, and the
 * CircuitBreaker's exponential and randomized open-period keys are noted, not
 * read as the Retry's. An exception class the preset cannot place is an error
 * naming it and the classes it knows.
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

/* The CircuitBreaker's own open-period keys (CommonCircuitBreakerConfigurationProperties). */
static const char *const cb_open_backoff[] = {"enableExponentialBackoff",
                                              "exponentialBackoffMultiplier",
                                              "exponentialMaxWaitDurationInOpenState",
                                              "enableRandomizedWait",
                                              "randomizedWaitFactor",
                                              NULL};

/* The preset parameter a section's key is (NULL: none), by the section its help names. */
static const char *section_param(const sim_preset *p, bool retry, const char *key, char *buf,
                                 size_t len) {
    if (strcmp(key, "retryIgnoreExceptions") == 0) return NULL; /* fusebox's name, not theirs */
    if (retry && strcmp(key, "ignoreExceptions") == 0) key = "retryIgnoreExceptions";
    int i = scn_preset_param(p, key);
    if (i < 0) return NULL;
    const char *want = retry ? "Retry:" : "CircuitBreaker:";
    if (strncmp(p->params[i].doc, want, strlen(want)) != 0) return NULL;
    snprintf(buf, len, "%s", key);
    return buf;
}

/* An exception list (a sequence, or Spring's comma-separated string) as JSON, each class known. */
static int exception_list(const imp_node *v, const char *where, cJSON **out, imp_error *err) {
    *out = cJSON_CreateArray();
    const imp_node *one[1] = {v};
    const imp_node *const *items = v->kind == IMP_SEQ ? (const imp_node *const *)v->items : one;
    size_t n = v->kind == IMP_SEQ ? v->n : 1;
    for (size_t i = 0; i < n; i++) {
        const imp_node *e = items[i];
        if (e->kind != IMP_SCALAR) {
            cJSON_Delete(*out);
            return imp_fail_at(err, e, FB_EINVAL, "%s: an exception class name", where);
        }
        const char *c = e->value;
        while (*c) { /* "a, b": Spring binds a comma-separated string to a list */
            while (*c == ',' || *c == ' ') c++;
            size_t k = strcspn(c, ", ");
            if (k == 0) break;
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)k, c);
            c += k;
            if (scn_r4j_exception_kinds(name) < 0) {
                char known[600], msg[1400];
                scn_r4j_exception_names(known, sizeof known);
                snprintf(msg, sizeof msg, "%s: fusebox cannot place '%s'; it knows %s", where, name,
                         known);
                cJSON_Delete(*out);
                return imp_fail_at(err, e, FB_EINVAL, "%s", msg);
            }
            cJSON_AddItemToArray(*out, cJSON_CreateString(name));
        }
    }
    return FB_OK;
}

/* The keys of one map of a section into the layer (a later map replaces an earlier value). */
static int copy_keys(const imp_node *map, const sim_preset *p, bool retry, const char *path,
                     cJSON *layer, imp_result *r, imp_error *err) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        const imp_node *k = map->items[i], *v = map->items[i + 1];
        if (imp_one_of(k->value, r4j_structural)) continue;
        char key[128], pbuf[128], where[IMP_PATH_MAX];
        camel(k->value, key, sizeof key);
        imp_path_key(where, path, k->value);
        if (!retry && imp_one_of(key, cb_open_backoff)) {
            imp_add_note(r, where, k,
                         "not modelled: the CircuitBreaker's growing open period "
                         "(waitIntervalFunctionInOpenState); waitDurationInOpenState stays "
                         "constant");
            continue;
        }
        const char *name = section_param(p, retry, key, pbuf, sizeof pbuf);
        if (name == NULL) {
            char other[128];
            imp_add_note(r, where, k,
                         section_param(p, !retry, key, other, sizeof other)
                             ? (retry ? "not a Retry key (resilience4j reads it under "
                                        "resilience4j.circuitbreaker): not read here"
                                      : "not a CircuitBreaker key (resilience4j reads it under "
                                        "resilience4j.retry): not read here")
                             : "not modelled by the preset");
            continue;
        }
        cJSON *val = NULL;
        if (strstr(name, "Exceptions") != NULL) {
            if (v->kind == IMP_SCALAR && (v->value[0] == '\0' || strcmp(v->value, "~") == 0 ||
                                          strcmp(v->value, "null") == 0))
                continue; /* an empty list: none given */
            int rc = exception_list(v, where, &val, err);
            if (rc != FB_OK) return rc;
        } else {
            val = imp_to_json(v, NULL);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(layer, name);
        cJSON_AddItemToObject(layer, name, val);
    }
    return FB_OK;
}

/* An instance's settings: its base config (baseConfig, else "default") and then its own. */
static int r4j_section(const imp_node *sec, const char *secname, const char *inst,
                       const sim_preset *p, cJSON *layer, imp_result *r, imp_error *err) {
    bool retry = strcmp(secname, "retry") == 0;
    const imp_node *own = imp_get(imp_get(sec, "instances"), inst);
    const imp_node *basename = imp_get(own, "baseConfig");
    if (basename == NULL) basename = imp_get(own, "base-config");
    const char *base = basename && basename->kind == IMP_SCALAR ? basename->value : "default";
    const imp_node *cfg = imp_get(imp_get(sec, "configs"), base);
    char path[256];
    snprintf(path, sizeof path, "resilience4j.%s.configs.%s", secname, base);
    int rc = copy_keys(cfg, p, retry, path, layer, r, err);
    if (rc != FB_OK) return rc;
    snprintf(path, sizeof path, "resilience4j.%s.instances.%s", secname, inst);
    return copy_keys(own, p, retry, path, layer, r, err);
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
        cJSON_AddItemToObject(layers, names[i], layer);
        int rc = r4j_section(cb, "circuitbreaker", names[i], p, layer, r, err);
        if (rc == FB_OK) rc = r4j_section(retry, "retry", names[i], p, layer, r, err);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}
