/*
 * scn_tables - print the scenario format's tables (scenario/loadint.h) as JSON.
 *
 * `make schema` runs it and hands the JSON to tests/tools/gen_schema.py, which
 * writes the tables' parts of docs/scenario.schema.json and the key tables of
 * docs/scenario-format.md; tests/e2e/schema_fresh.sh checks that they are current.
 *
 *   {"sections": [{"name", "schema_at", "doc_prefix", "fields": [{"name", "kind", "lo", "hi",
 *     "names", "default", "set", "unit", "default_doc", "doc"}, ...]}, ...]}
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "scenario/loadint.h"

static const char *const kinds[] = {
    [LD_DURATION] = "duration", [LD_DURATION0] = "duration0", [LD_NUMBER] = "number",
    [LD_INTEGER] = "integer",   [LD_BOOL] = "bool",           [LD_SWITCH] = "switch",
    [LD_ENUM] = "enum",         [LD_HOOK] = "hook",           [LD_CODE] = "code",
};

static void add_string(cJSON *o, const char *key, const char *s) {
    if (s) cJSON_AddStringToObject(o, key, s);
}

/* One field; NULL when its default is not JSON (a table's mistake). */
static cJSON *field_json(const ld_field *f) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", f->name);
    cJSON_AddStringToObject(o, "kind", kinds[f->kind]);
    if (f->kind == LD_INTEGER) { /* every digit: 2^53 - 1 is not 9.00719925474099e+15 */
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%.0f", f->lo);
        snprintf(hi, sizeof hi, "%.0f", f->hi);
        cJSON_AddRawToObject(o, "lo", lo);
        cJSON_AddRawToObject(o, "hi", hi);
    } else if (f->kind == LD_NUMBER) {
        cJSON_AddNumberToObject(o, "lo", f->lo);
        cJSON_AddNumberToObject(o, "hi", f->hi);
    }
    if (f->names) {
        cJSON *a = cJSON_AddArrayToObject(o, "names");
        for (size_t i = 0; f->names[i]; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(f->names[i]));
    }
    if (f->def) {
        cJSON *d = cJSON_Parse(f->def);
        if (d == NULL) {
            fprintf(stderr, "scn_tables: the default of '%s' is not JSON: %s\n", f->name, f->def);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, "default", d);
    }
    cJSON_AddBoolToObject(o, "set", (f->flags & LD_F_SET) != 0);
    add_string(o, "unit", f->unit);
    add_string(o, "default_doc", f->def_doc);
    add_string(o, "doc", f->doc);
    return o;
}

int main(void) {
    cJSON *root = cJSON_CreateObject();
    cJSON *secs = cJSON_AddArrayToObject(root, "sections");
    int rc = 0;
    for (size_t i = 0; scn__sections[i]; i++) {
        const ld_section *s = scn__sections[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", s->name);
        cJSON_AddStringToObject(o, "schema_at", s->schema_at);
        add_string(o, "doc_prefix", s->doc_prefix);
        cJSON *fields = cJSON_AddArrayToObject(o, "fields");
        for (const ld_field *f = s->fields; f->name; f++) {
            cJSON *fj = field_json(f);
            if (fj == NULL)
                rc = 1;
            else
                cJSON_AddItemToArray(fields, fj);
        }
        cJSON_AddItemToArray(secs, o);
    }
    char *text = cJSON_Print(root);
    if (text == NULL) return 1;
    puts(text);
    free(text);
    cJSON_Delete(root);
    return rc;
}
