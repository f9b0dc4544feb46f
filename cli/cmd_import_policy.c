/* cmd_import_policy.c - 'fusebox import-policy KIND FILE': a library's config as fusebox layers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "import/policy.h"

static void usage(FILE *f) {
    fputs("usage: fusebox import-policy KIND FILE [-o OUT]\n"
          "\n"
          "Read a library's configuration file and print the equivalent scenario\n"
          "layers (JSON): each a library preset (docs/presets.md) with the file's own\n"
          "keys as its parameters, one per instance. Paste a layer into a variant's\n"
          "\"layers\", or let the scenario name the file:\n"
          "  {\"name\": \"cb\", \"import\": KIND, \"file\": FILE, \"instance\": NAME}\n"
          "A key the presets do not model is listed on stderr with its line and\n"
          "column (never its value). KIND is one of:\n",
          f);
    for (const char *const *k = imp_policy_kinds(); *k; k++)
        fprintf(f, "  %-13s %s\n", *k, imp_policy_kind_summary(*k));
    fputs("\n"
          "docs/import-policy.md says what each kind reads and how.\n"
          "\n"
          "  -o, --out FILE  write the JSON there instead of stdout\n"
          "  -h, --help      this text\n"
          "\n"
          "Exit codes: 0 ok (keys not modelled are listed, not errors), 2 bad YAML\n"
          "(with line and column), an unreadable file, or usage.\n",
          f);
}

static int write_json(const char *out, const char *json) {
    FILE *f = out ? fopen(out, "w") : stdout;
    if (f == NULL) {
        fprintf(stderr, "fusebox import-policy: cannot write %s\n", out);
        return CLI_BAD_INPUT;
    }
    fprintf(f, "%s\n", json);
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

int cmd_import_policy(int argc, char **argv) {
    const char *pos[2] = {NULL, NULL}, *out = NULL;
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0) {
            if (++i == argc) return cli_missing("import-policy", argv[i - 1]);
            out = argv[i];
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
    int code = write_json(out, r.json);
    imp_result_free(&r);
    imp_node_free(root);
    return code;
}
