/*
 * cmd_export_policy.c - 'fusebox export-policy KIND FILE': a layer written back
 * as the library's own configuration (import/export.h).
 *
 * FILE is a scenario (the layer named by --layer VARIANT.LAYER, after the
 * --set overrides, as `run` would load it) or layers as `fusebox
 * import-policy` prints them ({"layers": [{"name": NAME, ...}]}), or one layer
 * ({"preset": ...}).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "import/export.h"
#include "import/policy.h"

#define CMD "export-policy"

static void usage(FILE *f) {
    cli_help_puts(
        "usage: fusebox export-policy KIND FILE [--layer VARIANT.LAYER] [--set KEY=VALUE]...\n"
        "                             [--into FILE] [--name NAME] [-o OUT]\n"
        "\n"
        "Write a layer back as the library's own configuration, in its keys and\n"
        "units: only the keys the layer gives, the rest left to the library's\n"
        "defaults. FILE is a scenario (--layer VARIANT.LAYER picks the layer; --set\n"
        "overrides are applied first, as `fusebox run` applies them), the JSON\n"
        "`fusebox import-policy` prints (--layer NAME when it has several), or one\n"
        "layer ({\"preset\": ...}). `fusebox import-policy KIND OUT` reads the output\n"
        "back to the same layer. KIND is one of:\n"
        "  resilience4j  resilience4j.circuitbreaker / .retry instances (Spring Boot YAML)\n"
        "  litellm       a LiteLLM proxy config.yaml: model_list and router_settings\n"
        "  envoy         an Envoy route's retry_policy and timeout, its cluster's\n"
        "                circuit_breakers and outlier_detection (xDS resources)\n"
        "\n"
        "  --layer ADDR    VARIANT.LAYER in a scenario (a variant without \"variants\" is\n"
        "                  \"default\"); NAME in import-policy's output\n"
        "  --set KEY=VALUE override a value of the scenario first (repeatable)\n"
        "  --into FILE     write the values into FILE, your application.yml or\n"
        "                  config.yaml, in place (with -o: into OUT, FILE unchanged):\n"
        "                  the keys the layer gives, nothing else (resilience4j, litellm)\n"
        "  --name NAME     the resilience4j instance or Envoy cluster the block\n"
        "                  configures (default: the layer's \"instance\", else its name)\n"
        "  -o, --out FILE  write the YAML there instead of stdout\n"
        "  -h, --help      this text\n"
        "\n"
        "Keys with no place in the library's file are listed on stderr as notes.\n"
        "docs/export-policy.md says where each key goes.\n"
        "\n"
        "Exit codes: 0 ok, 2 bad input (a scenario or layer that does not load, no\n"
        "such layer, a layer of another preset) or usage.\n",
        f);
}

/* Put src's members into dst: an object into an object member-wise, anything else replaces. */
static void merge_into(cJSON *dst, const cJSON *src) {
    for (const cJSON *it = src->child; it; it = it->next) {
        cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, it->string);
        if (cJSON_IsObject(have) && cJSON_IsObject(it)) {
            merge_into(have, it);
            continue;
        }
        cJSON *copy = cJSON_Duplicate(it, true);
        if (have)
            cJSON_ReplaceItemInObjectCaseSensitive(dst, it->string, copy);
        else
            cJSON_AddItemToObject(dst, it->string, copy);
    }
}

/* The layer named `name` in an array of layers, or NULL. */
static const cJSON *in_stack(const cJSON *layers, const char *name) {
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, layers) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return e;
    }
    return NULL;
}

/* The layers of a variant's gateway tier (its "gateway", or the policy's), or NULL. */
static const cJSON *gateway_layers(const cJSON *v, const cJSON *base) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(v, "gateway");
    if (g == NULL && base) g = cJSON_GetObjectItemCaseSensitive(base, "gateway");
    return g ? cJSON_GetObjectItemCaseSensitive(g, "layers") : NULL;
}

/* The layer VARIANT.LAYER of a scenario's document, as written there, or NULL. */
static const cJSON *scenario_layer(const cJSON *root, const char *variant, const char *layer) {
    const cJSON *policy = cJSON_GetObjectItemCaseSensitive(root, "policy");
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    const cJSON *v = vars ? cJSON_GetObjectItemCaseSensitive(vars, variant) : NULL;
    if (vars == NULL && strcmp(variant, "default") == 0) v = policy;
    if (!cJSON_IsObject(v)) return NULL;
    const cJSON *inherit = cJSON_GetObjectItemCaseSensitive(v, "inherit_policy");
    const cJSON *base = cJSON_IsFalse(inherit) || v == policy ? NULL : policy;
    const cJSON *stack = cJSON_GetObjectItemCaseSensitive(v, "layers");
    if (stack == NULL && base) stack = cJSON_GetObjectItemCaseSensitive(base, "layers");
    const cJSON *found = in_stack(stack, layer);
    if (found == NULL) found = in_stack(gateway_layers(v, base), layer);
    /* a traffic class's own stack, or its one layer named after it */
    for (int pass = 0; pass < 2 && found == NULL; pass++) {
        const cJSON *from = pass == 0 ? v : base;
        const cJSON *classes = from ? cJSON_GetObjectItemCaseSensitive(from, "classes") : NULL;
        const cJSON *c = NULL;
        cJSON_ArrayForEach(c, classes) {
            const cJSON *own = cJSON_GetObjectItemCaseSensitive(c, "layers");
            if (own && (found = in_stack(own, layer)) != NULL) break;
            if (!own && strcmp(c->string, layer) == 0) {
                found = c;
                break;
            }
        }
    }
    return found;
}

/* The variants' layers, "VARIANT.LAYER" each, for the error that names none of them. */
static void list_layers(const cJSON *root) {
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    const cJSON *policy = cJSON_GetObjectItemCaseSensitive(root, "policy");
    fprintf(stderr, "fusebox %s: the scenario's layers:", CMD);
    const cJSON *v = NULL;
    int n = 0;
    cJSON_ArrayForEach(v, vars) {
        const cJSON *stack = cJSON_GetObjectItemCaseSensitive(v, "layers");
        const cJSON *inherit = cJSON_GetObjectItemCaseSensitive(v, "inherit_policy");
        if (stack == NULL && policy && !cJSON_IsFalse(inherit))
            stack = cJSON_GetObjectItemCaseSensitive(policy, "layers");
        const cJSON *e = NULL;
        cJSON_ArrayForEach(e, stack) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            if (cJSON_IsString(nm) && n++ < 40)
                fprintf(stderr, " %s.%s", v->string, nm->valuestring);
        }
        const cJSON *tier = gateway_layers(v, cJSON_IsFalse(inherit) ? NULL : policy);
        cJSON_ArrayForEach(e, tier) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            if (cJSON_IsString(nm) && n++ < 40)
                fprintf(stderr, " %s.%s", v->string, nm->valuestring);
        }
    }
    if (vars == NULL) {
        const cJSON *e = NULL, *stack = cJSON_GetObjectItemCaseSensitive(policy, "layers");
        cJSON_ArrayForEach(e, stack) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            if (cJSON_IsString(nm) && n++ < 40) fprintf(stderr, " default.%s", nm->valuestring);
        }
    }
    fputs(n ? "\n" : " none (a variant without \"layers\" is fusebox's own, not a preset's)\n",
          stderr);
}

/* A relative "file" of an import layer is beside the scenario. */
static void beside(const char *scenario, const char *file, char *out, size_t len) {
    const char *slash = strrchr(scenario, '/');
    if (file[0] == '/' || slash == NULL)
        snprintf(out, len, "%s", file);
    else
        snprintf(out, len, "%.*s/%s", (int)(slash - scenario), scenario, file);
}

/*
 * The preset layer the scenario's layer stands for: a preset layer as it is,
 * an imported one as the file gives it with the layer's own keys on top (as
 * the loader reads it). NULL after printing why.
 */
static cJSON *resolve_layer(const cJSON *e, const char *scenario, const char **instance) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "import");
    const cJSON *inst = cJSON_GetObjectItemCaseSensitive(e, "instance");
    *instance = cJSON_IsString(inst) ? inst->valuestring : NULL;
    if (!cJSON_IsString(kind)) return cJSON_Duplicate(e, true);
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
    char path[1024], msg[600] = "";
    char *json = NULL, *notes = NULL;
    beside(scenario, cJSON_IsString(file) ? file->valuestring : "", path, sizeof path);
    int rc =
        imp_policy_layer(NULL, kind->valuestring, path, *instance, &json, &notes, msg, sizeof msg);
    free(notes); /* printed by the loader already */
    cJSON *out = rc == FB_OK ? cJSON_Parse(json) : NULL;
    free(json);
    if (out == NULL) {
        cli_bad(CMD, "%s", msg[0] ? msg : "the imported layer does not read");
        return NULL;
    }
    cJSON *over = cJSON_Duplicate(e, true);
    static const char *const own[] = {"import", "file", "instance", NULL};
    for (size_t i = 0; own[i]; i++) cJSON_DeleteItemFromObjectCaseSensitive(over, own[i]);
    merge_into(out, over);
    cJSON_Delete(over);
    return out;
}

/* import-policy's output ({"layers": [{"name": ...}]}) or one layer: the layer --layer names. */
static cJSON *layers_file_layer(const cJSON *doc, const char *file, const char *addr,
                                const char **name) {
    if (cJSON_GetObjectItemCaseSensitive(doc, "preset")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(doc, "name");
        *name = cJSON_IsString(n) ? n->valuestring : NULL;
        return cJSON_Duplicate(doc, true);
    }
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(doc, "layers");
    const cJSON *pick = NULL;
    if (addr) { /* a list of named layers (import-policy's output), or an object by name */
        for (const cJSON *l = cJSON_IsArray(layers) ? layers->child : NULL; l && !pick;
             l = l->next) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(l, "name");
            if (cJSON_IsString(n) && strcmp(n->valuestring, addr) == 0) pick = l;
        }
        if (pick == NULL && cJSON_IsObject(layers))
            pick = cJSON_GetObjectItemCaseSensitive(layers, addr);
    } else if (cJSON_GetArraySize(layers) == 1) {
        pick = layers->child;
    } else {
        cli_bad(CMD, "%s has %d layers: name one with --layer", file, cJSON_GetArraySize(layers));
        return NULL;
    }
    if (!cJSON_IsObject(pick)) {
        cli_bad(CMD, "%s has no layer named '%s'", file, addr);
        return NULL;
    }
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(pick, "name");
    *name = cJSON_IsString(n) ? n->valuestring : pick->string;
    cJSON *copy = cJSON_Duplicate(pick, true);
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "name");
    return copy;
}

/* import-policy's output: an object whose only member is the object "layers". */
static bool is_layers_file(const cJSON *doc) {
    if (cJSON_GetObjectItemCaseSensitive(doc, "preset")) return true;
    return cJSON_GetArraySize(doc) == 1 &&
           (cJSON_IsObject(doc->child) || cJSON_IsArray(doc->child)) &&
           strcmp(doc->child->string, "layers") == 0;
}

static int write_out(const char *out, const char *yaml) {
    FILE *f = out ? fopen(out, "w") : stdout;
    if (f == NULL) return cli_bad(CMD, "cannot write %s", out);
    fputs(yaml, f);
    int bad = ferror(f);
    if (out) bad |= fclose(f);
    return bad ? cli_bad(CMD, "cannot write %s", out ? out : "stdout") : CLI_OK;
}

/* The layer of a scenario, --set applied and the scenario loaded (so checked) first. */
static cJSON *from_scenario(cli_run_args *a, const char *addr, const char **instance,
                            const char **layer_name, sim_scenario **sc) {
    if (cli_run_load(a, CMD, sc, (bool[SIM_VARIANTS_MAX]){false}) != CLI_OK) return NULL;
    const cJSON *root = (*sc)->json;
    if (addr == NULL || strchr(addr, '.') == NULL) {
        cli_bad(CMD, "%s is a scenario: --layer VARIANT.LAYER names the layer to export", a->file);
        list_layers(root);
        return NULL;
    }
    char variant[SIM_NAME_MAX];
    const char *dot = strchr(addr, '.');
    snprintf(variant, sizeof variant, "%.*s", (int)(dot - addr), addr);
    *layer_name = dot + 1;
    const cJSON *e = scenario_layer(root, variant, dot + 1);
    if (e == NULL) {
        cli_bad(CMD, "%s has no layer %s", a->file, addr);
        list_layers(root);
        return NULL;
    }
    return resolve_layer(e, a->file, instance);
}

typedef struct opts {
    cli_run_args a; /* the scenario, --set, -o */
    const char *kind, *addr, *name, *into;
} opts;

/* CLI_OK, CLI_BAD_INPUT (printed), or -1 after --help. */
static int parse_args(int argc, char **argv, opts *o) {
    const char *pos[2] = {NULL, NULL};
    int npos = 0, rc = CLI_OK;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (cli_opt(argc, argv, &i, NULL, "--layer", &v)) {
            if (v == NULL) return cli_missing(CMD, "--layer");
            o->addr = v;
        } else if (cli_opt(argc, argv, &i, NULL, "--into", &v)) {
            if (v == NULL) return cli_missing(CMD, "--into");
            o->into = v;
        } else if (cli_opt(argc, argv, &i, NULL, "--name", &v)) {
            if (v == NULL) return cli_missing(CMD, "--name");
            o->name = v;
        } else if (strncmp(argv[i], "--variant", 9) != 0 && strncmp(argv[i], "--seed", 6) != 0 &&
                   cli_run_opt(argc, argv, &i, CMD, &o->a, &rc)) {
            if (rc != CLI_OK) return rc;
        } else if (argv[i][0] == '-' || npos == 2) {
            return cli_bad(CMD, "unexpected argument '%s'", argv[i]);
        } else {
            pos[npos++] = argv[i];
        }
    }
    if (npos != 2) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    o->kind = pos[0];
    o->a.file = pos[1];
    if (imp_export_preset(o->kind) == NULL)
        return cli_bad(CMD, "unknown kind '%s' (one of: resilience4j, litellm, envoy)", o->kind);
    return CLI_OK;
}

/* --into FILE: FILE's text with the layer's values (NULL after printing why). */
static int export_into(const opts *o, const char *json, const char *name, char **yaml, char **notes,
                       char *msg, size_t msglen) {
    size_t len = 0;
    char *text = cli_read_file(o->into, IMP_YAML_BYTES_MAX, &len);
    if (text == NULL) {
        snprintf(msg, msglen, "--into %s: cannot read it", o->into);
        return FB_EIO;
    }
    int rc = imp_export_into(o->kind, name, json, o->into, text, len, yaml, notes, msg, msglen);
    free(text);
    return rc;
}

/* The file rewritten: a copy beside it renamed over it, so that it is never half written. */
static int write_in_place(const char *file, const char *text) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.fusebox-tmp", file);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) return cli_bad(CMD, "cannot write %s", tmp);
    fputs(text, f);
    int bad = ferror(f);
    bad |= fclose(f);
    if (bad || rename(tmp, file) != 0) {
        remove(tmp);
        return cli_bad(CMD, "cannot write %s", file);
    }
    return CLI_OK;
}

/* The layer as the library's YAML, the notes on stderr, written to -o or stdout. */
static int export_layer(const opts *o, const cJSON *layer, const char *name) {
    char *json = cJSON_PrintUnformatted(layer);
    char *yaml = NULL, *notes = NULL, msg[600];
    int rc = CLI_BAD_INPUT;
    int lib = json == NULL ? FB_ENOMEM
              : o->into    ? export_into(o, json, name, &yaml, &notes, msg, sizeof msg)
                           : imp_export_policy(o->kind, name, json, &yaml, &notes, msg, sizeof msg);
    if (json && lib != FB_OK) {
        const char *which = o->addr ? o->addr : name;
        cli_bad(CMD, "%s%s%s: %s", o->a.file, which ? ": layer " : "", which ? which : "", msg);
    } else if (json) {
        for (char *l = notes ? strtok(notes, "\n") : NULL; l; l = strtok(NULL, "\n"))
            fprintf(stderr, "fusebox %s: note: %s\n", CMD, l);
        rc = o->into && !o->a.out ? write_in_place(o->into, yaml) : write_out(o->a.out, yaml);
    }
    free(yaml);
    free(notes);
    free(json);
    return rc;
}

int cli_cmd_export_policy(int argc, char **argv) {
    static opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK) return rc < 0 ? CLI_OK : rc;
    size_t len = 0;
    char *text = cli_read_file(o.a.file, (size_t)64 << 20, &len);
    if (text == NULL) return cli_bad(CMD, "cannot read %s", o.a.file);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    sim_scenario *sc = NULL;
    cJSON *layer = NULL;
    const char *instance = NULL, *layer_name = NULL;
    if (doc && is_layers_file(doc)) {
        if (o.a.nsets > 0) {
            cJSON_Delete(doc);
            return cli_bad(CMD, "--set and --policy apply to a scenario; %s is layers", o.a.file);
        }
        layer = layers_file_layer(doc, o.a.file, o.addr, &layer_name);
    } else {
        layer = from_scenario(&o.a, o.addr, &instance, &layer_name, &sc);
    }
    rc = CLI_BAD_INPUT;
    if (layer) rc = export_layer(&o, layer, o.name ? o.name : instance ? instance : layer_name);
    cJSON_Delete(layer);
    cJSON_Delete(doc);
    if (sc) scn_free(sc);
    return rc;
}
