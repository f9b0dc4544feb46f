/*
 * policy.c - configuration files to preset layers; see policy.h.
 *
 * Each kind walks its file's structure to the objects that hold the
 * library's settings and copies their keys, verbatim, as the parameters of
 * the library's preset: what the preset knows is copied, what it does not is
 * reported. The keys that give the structure (instance names, inheritance)
 * are consumed here.
 */
#include "import/policy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/fb.h"
#include "sim/preset.h"

static const char *const kinds[] = {"resilience4j", NULL};

const char *const *imp_policy_kinds(void) {
    return kinds;
}

void imp_result_free(imp_result *r) {
    free(r->json);
    r->json = NULL;
}

static int fail_at(imp_error *err, const imp_node *n, int rc, const char *fmt, const char *arg) {
    err->line = n ? n->line : 0;
    err->col = n ? n->col : 0;
    snprintf(err->msg, sizeof err->msg, fmt, arg);
    return rc;
}

static void note(imp_result *r, const char *path, const imp_node *at, const char *why) {
    /* a config several instances inherit is one place in the file: noted once */
    for (size_t i = 0; at && i < r->note_count; i++)
        if (r->notes[i].line == at->line && r->notes[i].col == at->col) return;
    if (r->note_count == IMP_NOTES_MAX) {
        r->notes_dropped++;
        return;
    }
    imp_note *n = &r->notes[r->note_count++];
    snprintf(n->path, sizeof n->path, "%s", path);
    n->line = at ? at->line : 0;
    n->col = at ? at->col : 0;
    snprintf(n->why, sizeof n->why, "%s", why);
}

/* A scalar as JSON: plain numbers and booleans as such, everything else a string. */
static cJSON *scalar_json(const imp_node *n) {
    const char *v = n->value;
    if (!n->quoted) {
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
            return cJSON_CreateBool(strcmp(v, "true") == 0);
        if (strcmp(v, "null") == 0 || strcmp(v, "~") == 0 || v[0] == '\0')
            return cJSON_CreateNull();
        char *end;
        double d = strtod(v, &end);
        if (end != v && *end == '\0' && isfinite(d)) return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(v);
}

static cJSON *to_json(const imp_node *n) {
    if (n->kind == IMP_SCALAR) return scalar_json(n);
    cJSON *out = n->kind == IMP_SEQ ? cJSON_CreateArray() : cJSON_CreateObject();
    for (size_t i = 0; out && i < n->n; i += n->kind == IMP_SEQ ? 1 : 2) {
        if (n->kind == IMP_SEQ) {
            cJSON_AddItemToArray(out, to_json(n->items[i]));
        } else if (i + 1 < n->n) {
            cJSON_AddItemToObject(out, n->items[i]->value, to_json(n->items[i + 1]));
        }
    }
    return out;
}

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

/*
 * The keys of `map` that are parameters of preset p go into `layer`
 * (replacing an inherited value); the others are reported under `path`.
 * `skip` lists the structural keys, which are neither.
 */
static void copy_params(const imp_node *map, const sim_preset *p, cJSON *layer, const char *path,
                        const char *const *skip, imp_result *r) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        const imp_node *k = map->items[i];
        bool structural = false;
        for (size_t s = 0; skip && skip[s] && !structural; s++)
            structural = !strcmp(k->value, skip[s]);
        if (structural) continue;
        char name[128];
        camel(k->value, name, sizeof name);
        char where[256];
        snprintf(where, sizeof where, "%s.%s", path, k->value);
        if (sim_preset_param(p, name) < 0) {
            note(r, where, k, "not modelled by the preset");
            continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(layer, name);
        cJSON_AddItemToObject(layer, name, to_json(map->items[i + 1]));
    }
}

/* ---- resilience4j (Spring Boot: resilience4j.circuitbreaker / .retry, configs and instances) */

static const char *const r4j_structural[] = {"baseConfig", "base-config", NULL};

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
    copy_params(cfg, p, layer, path, r4j_structural, r);
    snprintf(path, sizeof path, "resilience4j.%s.instances.%s", secname, inst);
    copy_params(own, p, layer, path, r4j_structural, r);
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
            note(r, path, m->items[i], "not modelled (fusebox reads circuitbreaker and retry)");
        }
    }
}

static int import_r4j(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err) {
    const sim_preset *p = sim_preset_find("resilience4j");
    if (p == NULL) return fail_at(err, NULL, FB_ENOTFOUND, "%s", "no resilience4j preset");
    const imp_node *cb = r4j_sec(root, "circuitbreaker"), *retry = r4j_sec(root, "retry");
    if (cb == NULL && retry == NULL)
        return fail_at(err, root, FB_EINVAL, "%s",
                       "no resilience4j.circuitbreaker or resilience4j.retry section");
    const char *names[64];
    size_t n = r4j_instances(root, names, 64);
    if (n == 0)
        return fail_at(err, cb ? cb : retry, FB_EINVAL, "%s",
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

int imp_policy(const char *kind, const imp_node *root, const char *file, imp_result *out,
               imp_error *err) {
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    cJSON *doc = cJSON_CreateObject();
    cJSON *layers = cJSON_AddObjectToObject(doc, "layers");
    int rc;
    if (strcmp(kind, "resilience4j") == 0)
        rc = import_r4j(root, layers, out, err);
    else
        rc = fail_at(err, NULL, FB_EINVAL, "unknown kind '%s' (one of: resilience4j)", kind);
    if (rc == FB_OK) {
        out->json = cJSON_Print(doc);
        if (out->json == NULL) rc = fail_at(err, NULL, FB_ENOMEM, "%s", "out of memory");
    }
    cJSON_Delete(doc);
    return rc;
}

/* The instance `select` names, or the only one: its layer as text. */
static int pick_layer(const cJSON *layers, const char *select, char **json, char *msg,
                      size_t msglen) {
    const cJSON *pick = NULL;
    size_t n = 0;
    for (const cJSON *l = layers ? layers->child : NULL; l; l = l->next, n++)
        if ((select && strcmp(l->string, select) == 0) || (!select && n == 0)) pick = l;
    if (select == NULL && n > 1) {
        snprintf(msg, msglen, "the file has %zu instances: name one with \"instance\"", n);
        return FB_EINVAL;
    }
    if (pick == NULL) {
        snprintf(msg, msglen, "no instance named '%s' in the file", select ? select : "");
        return FB_ENOTFOUND;
    }
    *json = cJSON_PrintUnformatted(pick);
    return *json ? FB_OK : FB_ENOMEM;
}

/* The notes as lines "file:line:col: path: why". */
static char *notes_text(const imp_result *r, const char *file) {
    if (r->note_count == 0) return NULL;
    size_t cap = (r->note_count + 1) * (sizeof r->notes[0].path + 600), n = 0;
    char *out = malloc(cap);
    for (size_t i = 0; out && i < r->note_count; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s:%d:%d: %s: %s\n", file, r->notes[i].line,
                              r->notes[i].col, r->notes[i].path, r->notes[i].why);
    if (out && r->notes_dropped)
        snprintf(out + n, cap - n, "%s: and %zu more keys not modelled\n", file, r->notes_dropped);
    return out;
}

int imp_policy_layer(void *ctx, const char *kind, const char *file, const char *select, char **json,
                     char **notes, char *msg, size_t msglen) {
    (void)ctx;
    *notes = NULL;
    imp_node *root = NULL;
    imp_error err;
    int rc = imp_yaml_load(file, &root, &err);
    imp_result r;
    memset(&r, 0, sizeof r);
    if (rc == FB_OK) rc = imp_policy(kind, root, file, &r, &err);
    if (rc != FB_OK) {
        imp_error_format(&err, msg, msglen);
    } else {
        cJSON *doc = cJSON_Parse(r.json);
        rc = doc ? pick_layer(cJSON_GetObjectItemCaseSensitive(doc, "layers"), select, json, msg,
                              msglen)
                 : FB_ENOMEM;
        cJSON_Delete(doc);
        if (rc == FB_OK) *notes = notes_text(&r, file);
    }
    imp_result_free(&r);
    imp_node_free(root);
    return rc;
}
