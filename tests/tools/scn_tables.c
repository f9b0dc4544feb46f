/*
 * scn_tables - print the scenario format's tables (scenario/loadint.h) as JSON.
 *
 * `make schema` runs it and hands the JSON to tests/tools/gen_schema.py, which
 * writes the tables' parts of docs/scenario.schema.json and the key tables of
 * docs/scenario-format.md; tests/e2e/schema_fresh.sh checks that they are current.
 *
 *   {"sections": [{"name", "schema_at", "doc_prefix", "kinds_doc", "fields": [{"name", "kind",
 *     "lo", "hi", "names", "default", "set", "required", "needed", "variant_only", "pure", "unit",
 *     "default_doc", "doc", "schema", "sub"}, ...]}, ...],
 *    "presets": [{"name", "library", "version", "params": [{...the same, "notation"}, ...]}, ...],
 *    "types": {"digits", "exponent", "duration_units": [[NAME, ...], ...], "rate_units",
 *      "name_chars", "name_max", "status": [MIN, MAX], "count_max"}}
 *
 * "types" is what the loader's parsers accept for the format's basic values (a duration, a
 * rate, a name, an error status, a count; scenario/loadint.h), from which gen_schema.py writes
 * their $defs: a duration's units grouped by size, largest first, each group's spellings as
 * the table lists them.
 *
 * A preset's parameters (scenario/preset.h) are rows of the same shape; "notation" says how
 * the library writes the value (sim_param_kind: "percent", "timespan", ...).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "scenario/loadint.h"
#include "scenario/preset.h"

static const char *const kinds[] = {
    [LD_DURATION] = "duration", [LD_DURATION0] = "duration0", [LD_NUMBER] = "number",
    [LD_INTEGER] = "integer",   [LD_BOOL] = "bool",           [LD_SWITCH] = "switch",
    [LD_ENUM] = "enum",         [LD_HOOK] = "hook",           [LD_CODE] = "code",
};

static const char *const notations[] = {
    [SIM_PK_COUNT] = "count",
    [SIM_PK_NUMBER] = "number",
    [SIM_PK_PERCENT] = "percent",
    [SIM_PK_FRACTION] = "fraction",
    [SIM_PK_SECONDS] = "seconds",
    [SIM_PK_MILLIS] = "millis",
    [SIM_PK_DURATION] = "duration",
    [SIM_PK_BOOL] = "bool",
    [SIM_PK_WORD] = "word",
    [SIM_PK_STATUSES] = "statuses",
    [SIM_PK_WORDS] = "words",
    [SIM_PK_JSON] = "json",
    [SIM_PK_TIMESPAN] = "timespan",
    [SIM_PK_GO_DURATION] = "go_duration",
    [SIM_PK_OBJECT] = "object",
    [SIM_PK_CSV] = "csv",
    [SIM_PK_PROTO_DURATION] = "proto_duration",
    [SIM_PK_PROTO_PERCENT] = "proto_percent",
};

static void add_string(cJSON *o, const char *key, const char *s) {
    if (s) cJSON_AddStringToObject(o, key, s);
}

/* One field; NULL when its default is not JSON (a table's mistake). */
static cJSON *field_json(const ld_field *f, bool param) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", f->name);
    cJSON_AddStringToObject(o, "kind", kinds[f->kind]);
    if (param) cJSON_AddStringToObject(o, "notation", notations[f->notation]);
    if (f->kind == LD_NUMBER || f->kind == LD_INTEGER || (param && (f->lo != 0 || f->hi != 0))) {
        /* every digit: cJSON's own printing may drop the last of a large integer */
        char lo[40], hi[40];
        snprintf(lo, sizeof lo, "%.17g", f->lo);
        snprintf(hi, sizeof hi, "%.17g", f->hi);
        cJSON_AddRawToObject(o, "lo", lo);
        cJSON_AddRawToObject(o, "hi", hi);
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
    cJSON_AddBoolToObject(o, "required", (f->flags & LD_F_REQUIRED) != 0);
    cJSON_AddBoolToObject(o, "needed", (f->flags & LD_F_NEEDED) != 0);
    cJSON_AddBoolToObject(o, "variant_only", (f->flags & LD_F_VARIANT) != 0);
    cJSON_AddBoolToObject(o, "pure", (f->flags & LD_F_PURE) != 0);
    if (f->schema) {
        cJSON *sch = cJSON_Parse(f->schema);
        if (sch == NULL) {
            fprintf(stderr, "scn_tables: the schema of '%s' is not JSON: %s\n", f->name, f->schema);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, "schema", sch);
    }
    add_string(o, "unit", f->unit);
    add_string(o, "default_doc", f->def_doc);
    add_string(o, "doc", f->doc);
    if (f->sub) {
        cJSON *a = cJSON_AddArrayToObject(o, "sub");
        for (size_t i = 0; f->sub[i]; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(f->sub[i]->name));
    }
    return o;
}

/* A unit table's names, grouped by size in table order ([["d"], ["h"], ["min", "m"], ...]). */
static cJSON *unit_groups(const ld_unit *u) {
    cJSON *a = cJSON_CreateArray(), *group = NULL;
    for (size_t i = 0; u[i].name; i++) {
        if (i == 0 || u[i].scale != u[i - 1].scale) {
            group = cJSON_CreateArray();
            cJSON_AddItemToArray(a, group);
        }
        cJSON_AddItemToArray(group, cJSON_CreateString(u[i].name));
    }
    return a;
}

static cJSON *types_json(void) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "digits", LD_DIGITS_RE);
    cJSON_AddStringToObject(t, "exponent", LD_EXPONENT_RE);
    cJSON_AddItemToObject(t, "duration_units", unit_groups(scn__duration_units));
    cJSON_AddItemToObject(t, "rate_units", unit_groups(scn__rate_units));
    cJSON_AddStringToObject(t, "name_chars", LD_NAME_CHARS);
    cJSON_AddNumberToObject(t, "name_max", SIM_NAME_MAX - 1);
    cJSON *st = cJSON_AddArrayToObject(t, "status");
    cJSON_AddItemToArray(st, cJSON_CreateNumber(LD_STATUS_MIN));
    cJSON_AddItemToArray(st, cJSON_CreateNumber(LD_STATUS_MAX));
    char max[40];
    snprintf(max, sizeof max, "%llu", (unsigned long long)LD_COUNT_MAX);
    cJSON_AddRawToObject(t, "count_max", max);
    return t;
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
        for (const ld_kinds *k = scn__kinds; k->section; k++)
            if (k->section == s) add_string(o, "kinds_doc", k->doc);
        cJSON *fields = cJSON_AddArrayToObject(o, "fields");
        for (const ld_field *f = s->fields; f->name; f++) {
            cJSON *fj = field_json(f, false);
            if (fj == NULL)
                rc = 1;
            else
                cJSON_AddItemToArray(fields, fj);
        }
        cJSON_AddItemToArray(secs, o);
    }
    cJSON *presets = cJSON_AddArrayToObject(root, "presets");
    for (const sim_preset *const *p = scn_presets(); *p; p++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", (*p)->name);
        cJSON_AddStringToObject(o, "library", (*p)->library);
        cJSON_AddStringToObject(o, "version", (*p)->version);
        cJSON *params = cJSON_AddArrayToObject(o, "params");
        for (const sim_param *f = (*p)->params; f->name; f++) {
            cJSON *fj = field_json(f, true);
            if (fj == NULL)
                rc = 1;
            else
                cJSON_AddItemToArray(params, fj);
        }
        cJSON_AddItemToArray(presets, o);
    }
    cJSON_AddItemToObject(root, "types", types_json());
    char *text = cJSON_Print(root);
    if (text == NULL) return 1;
    puts(text);
    free(text);
    cJSON_Delete(root);
    return rc;
}
