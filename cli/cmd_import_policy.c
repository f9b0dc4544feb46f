/* cmd_import_policy.c - 'fusebox import-policy KIND FILE': a library's config as fusebox layers. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "import/policy.h"
#include "util/json.h"

static void usage(FILE *f) {
    cli_help_puts("usage: fusebox import-policy KIND FILE [-o OUT] [--as-variant NAME]\n"
                  "\n"
                  "Read a library's configuration file and print the equivalent scenario\n"
                  "layers (JSON): each a library preset (docs/presets.md) with the file's own\n"
                  "keys as its parameters, one per instance, named after it. The output is\n"
                  "what a variant takes: {\"layers\": [{\"name\": ..., \"preset\": ...}]}, so\n"
                  "its inside pastes into a variant's object (--as-variant NAME prints a whole\n"
                  "variant, {\"NAME\": {\"layers\": [...]}}, to paste into \"variants\"),\n"
                  "or let the scenario name the file:\n"
                  "  {\"name\": \"cb\", \"import\": KIND, \"file\": FILE, \"instance\": NAME}\n"
                  "A key the presets do not model is listed on stderr with its line and\n"
                  "column (never its value). KIND is one of:\n",
                  f);
    for (const char *const *k = imp_policy_kinds(); *k; k++)
        fprintf(f, "  %-13s %s\n", *k, imp_policy_kind_summary(*k));
    cli_help_puts("\n"
                  "docs/import-policy.md says what each kind reads and how.\n"
                  "\n"
                  "  -o, --out FILE  write the JSON there instead of stdout\n"
                  "      --as-variant NAME\n"
                  "                  print a variant named NAME made of the layers\n"
                  "  -h, --help      this text\n"
                  "\n"
                  "Exit codes: 0 ok (keys not modelled are listed, not errors), 2 bad YAML\n"
                  "(with line and column), an unreadable file, or usage.\n",
                  f);
}

/*
 * The importer's {"layers": {"NAME": {...}}} as a variant takes them,
 * {"layers": [{"name": "NAME", ...}]}, or as a whole variant when `variant`
 * is set. Malloc'd text, or NULL when out of memory.
 */
static char *as_pasted(const char *json, const char *variant) {
    cJSON *in = cJSON_Parse(json), *out = cJSON_CreateObject();
    cJSON *body = variant ? cJSON_AddObjectToObject(out, variant) : out;
    cJSON *list = body ? cJSON_AddArrayToObject(body, "layers") : NULL;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(in, "layers");
    for (const cJSON *l = layers ? layers->child : NULL; list && l; l = l->next) {
        cJSON *e = cJSON_CreateObject();
        if (e == NULL || !cJSON_AddStringToObject(e, "name", l->string)) {
            cJSON_Delete(e);
            list = NULL;
            break;
        }
        for (const cJSON *k = l->child; k; k = k->next)
            cJSON_AddItemToObject(e, k->string, cJSON_Duplicate(k, true));
        cJSON_AddItemToArray(list, e);
    }
    char *text = in && list ? cJSON_Print(out) : NULL;
    cJSON_Delete(in);
    cJSON_Delete(out);
    return text;
}

static int write_json(const char *out, const char *json, const char *variant) {
    char *text = as_pasted(json, variant);
    if (text == NULL) {
        fprintf(stderr, "fusebox import-policy: out of memory\n");
        return CLI_BAD_INPUT;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (f == NULL) {
        fprintf(stderr, "fusebox import-policy: cannot write %s\n", out);
        free(text);
        return CLI_BAD_INPUT;
    }
    util_out o = util_out_file(f);
    util_json_spaced(&o, text);
    fputc('\n', f);
    free(text);
    int bad = ferror(f);
    if (out) bad |= fclose(f);
    return bad ? CLI_BAD_INPUT : CLI_OK;
}

static void print_notes(const imp_result *r, const char *file) {
    for (size_t i = 0; i < r->note_count; i++)
        fprintf(stderr, "%s:%d:%d: %s: %s\n", file, r->notes[i].line, r->notes[i].col,
                r->notes[i].path, r->notes[i].why);
    if (r->notes_dropped)
        fprintf(stderr, "%s: and %zu more keys not modelled\n", file, r->notes_dropped);
}

int cli_cmd_import_policy(int argc, char **argv) {
    const char *pos[2] = {NULL, NULL}, *out = NULL, *variant = NULL;
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0) {
            if (++i == argc) return cli_missing("import-policy", argv[i - 1]);
            out = argv[i];
        } else if (strcmp(argv[i], "--as-variant") == 0) {
            if (++i == argc) return cli_missing("import-policy", argv[i - 1]);
            variant = argv[i];
        } else if (argv[i][0] == '-' || npos == 2) {
            fprintf(stderr, "fusebox import-policy: unexpected argument '%s'\n", argv[i]);
            return CLI_BAD_INPUT;
        } else {
            pos[npos++] = argv[i];
        }
    }
    if (npos != 2) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    imp_node *root = NULL;
    imp_error err;
    imp_result r;
    memset(&r, 0, sizeof r);
    int rc = imp_yaml_load(pos[1], &root, &err);
    if (rc == FB_OK) rc = imp_policy(pos[0], root, pos[1], &r, &err);
    if (rc != FB_OK) {
        char msg[1400];
        imp_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "fusebox import-policy: %s\n", msg);
        imp_node_free(root);
        return CLI_BAD_INPUT;
    }
    print_notes(&r, pos[1]);
    int code = write_json(out, r.json, variant);
    imp_result_free(&r);
    imp_node_free(root);
    return code;
}
