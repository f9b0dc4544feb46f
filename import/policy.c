/*
 * policy.c - configuration files to preset layers; see policy.h.
 *
 * The common part: errors and notes, YAML to JSON, copying a map's keys as
 * a preset's parameters, the dispatcher over the kinds and the loader's
 * hook. Each kind walks its file's structure in its own file (policyint.h):
 * what the preset knows is copied, what it does not is reported. The keys
 * that give the structure (instance names, inheritance) are consumed there.
 */
#include "import/policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fb.h"
#include "import/policyint.h"

typedef int (*import_fn)(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err);

static const struct {
    const char *kind;
    import_fn fn;
    const char *summary;
} importers[] = {
    {"resilience4j", imp_import_r4j, "Spring Boot's application.yml (circuitbreaker, retry)"},
    {"litellm", imp_import_litellm, "a LiteLLM proxy config.yaml, or Router arguments"},
    {"envoy", imp_import_envoy, "an Envoy bootstrap, xDS resources, route config or cluster"},
};

#define NKINDS (sizeof importers / sizeof importers[0])

static const char *const kinds[NKINDS + 1] = {"resilience4j", "litellm", "envoy", NULL};

const char *const *imp_policy_kinds(void) {
    return kinds;
}

const char *imp_policy_kind_summary(const char *kind) {
    for (size_t i = 0; i < NKINDS; i++)
        if (strcmp(kind, importers[i].kind) == 0) return importers[i].summary;
    return NULL;
}

void imp_result_free(imp_result *r) {
    free(r->json);
    r->json = NULL;
}

int imp_fail_at(imp_error *err, const imp_node *n, int rc, const char *fmt, const char *arg) {
    err->line = n ? n->line : 0;
    err->col = n ? n->col : 0;
    snprintf(err->msg, sizeof err->msg, fmt, arg);
    return rc;
}

void imp_add_note(imp_result *r, const char *path, const imp_node *at, const char *why) {
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

bool imp_one_of(const char *v, const char *const *words) {
    for (size_t i = 0; words && words[i]; i++)
        if (strcmp(v, words[i]) == 0) return true;
    return false;
}

void imp_path_key(char *out, const char *path, const char *key) {
    snprintf(out, IMP_PATH_MAX, "%s%s%s", path, path[0] ? "." : "", key);
}

void imp_path_index(char *out, const char *path, size_t i) {
    snprintf(out, IMP_PATH_MAX, "%s[%zu]", path, i);
}

cJSON *imp_scalar_core(const char *v) {
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
        return cJSON_CreateBool(strcmp(v, "true") == 0);
    if (strcmp(v, "null") == 0 || strcmp(v, "~") == 0 || v[0] == '\0') return cJSON_CreateNull();
    char *end;
    double d = strtod(v, &end);
    if (end != v && *end == '\0' && isfinite(d)) return cJSON_CreateNumber(d);
    return NULL;
}

/* A scalar as JSON: plain ones read by `scalar`, everything else a string. */
static cJSON *scalar_json(const imp_node *n, imp_scalar_fn scalar) {
    cJSON *v = n->quoted ? NULL : scalar(n->value);
    return v ? v : cJSON_CreateString(n->value);
}

cJSON *imp_to_json(const imp_node *n, imp_scalar_fn scalar) {
    if (scalar == NULL) scalar = imp_scalar_core;
    if (n->kind == IMP_SCALAR) return scalar_json(n, scalar);
    cJSON *out = n->kind == IMP_SEQ ? cJSON_CreateArray() : cJSON_CreateObject();
    for (size_t i = 0; out && i < n->n; i += n->kind == IMP_SEQ ? 1 : 2) {
        if (n->kind == IMP_SEQ) {
            cJSON_AddItemToArray(out, imp_to_json(n->items[i], scalar));
        } else if (i + 1 < n->n) {
            cJSON_AddItemToObject(out, n->items[i]->value, imp_to_json(n->items[i + 1], scalar));
        }
    }
    return out;
}

void imp_copy_params(const imp_node *map, const sim_preset *p, cJSON *layer, const char *path,
                     const char *const *skip, imp_rename_fn rename, imp_scalar_fn scalar,
                     imp_result *r) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        const imp_node *k = map->items[i];
        bool structural = false;
        for (size_t s = 0; skip && skip[s] && !structural; s++)
            structural = !strcmp(k->value, skip[s]);
        if (structural) continue;
        char name[128];
        if (rename)
            rename(k->value, name, sizeof name);
        else
            snprintf(name, sizeof name, "%s", k->value);
        char where[IMP_PATH_MAX];
        imp_path_key(where, path, k->value);
        if (scn_preset_param(p, name) < 0) {
            imp_add_note(r, where, k, "not modelled by the preset");
            continue;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(layer, name);
        cJSON_AddItemToObject(layer, name, imp_to_json(map->items[i + 1], scalar));
    }
}

cJSON *imp_copy_object(const imp_node *map, const sim_preset *p, const char *name, const char *path,
                       imp_scalar_fn scalar, imp_result *r) {
    cJSON *out = cJSON_CreateObject();
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        const imp_node *k = map->items[i];
        char param[160], where[IMP_PATH_MAX];
        snprintf(param, sizeof param, "%s.%s", name, k->value);
        imp_path_key(where, path, k->value);
        if (scn_preset_param(p, param) < 0) {
            imp_add_note(r, where, k, "not modelled by the preset");
            continue;
        }
        cJSON_AddItemToObject(out, k->value, imp_to_json(map->items[i + 1], scalar));
    }
    return out;
}

int imp_policy(const char *kind, const imp_node *root, const char *file, imp_result *out,
               imp_error *err) {
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    import_fn fn = NULL;
    for (size_t i = 0; i < NKINDS && fn == NULL; i++)
        if (strcmp(kind, importers[i].kind) == 0) fn = importers[i].fn;
    if (fn == NULL)
        return imp_fail_at(err, NULL, FB_EINVAL,
                           "unknown kind '%s' (one of: resilience4j, litellm, envoy)", kind);
    cJSON *doc = cJSON_CreateObject();
    cJSON *layers = cJSON_AddObjectToObject(doc, "layers");
    int rc = fn(root, layers, out, err);
    if (rc == FB_OK) {
        out->json = cJSON_Print(doc);
        if (out->json == NULL) rc = imp_fail_at(err, NULL, FB_ENOMEM, "%s", "out of memory");
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
