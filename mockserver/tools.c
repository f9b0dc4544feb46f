/*
 * tools.c - the minimal instance of a JSON schema, and each dialect's way of asking for a tool
 * call or a JSON answer.
 *
 * The minimal instance: $ref (a JSON pointer into the root schema) is followed; const, then the
 * first enum value, then the first anyOf / oneOf alternative; allOf merges the objects'
 * properties and required lists; an object has exactly its required properties (in order); an
 * array minItems items; a string minLength 'a's, or a sample of its format; a number 0 moved
 * into [minimum, maximum]; a boolean false. `pattern`, `multipleOf` and `uniqueItems` are not
 * honoured (docs/mock.md). A bound a client moved into the description, as @ai-sdk/anthropic
 * 3.0.140 does for Anthropic's structured outputs (src/sanitize-json-schema.ts: "minimum: 1;
 * maximum: 10."), counts as the keyword, since the model reads it there.
 */
#include "mockserver/tools.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEPTH_MAX 32
#define ALL_OF_MAX 16

typedef struct gen {
    const cJSON *root;
    util_buf *out;
    char *msg;
    size_t msglen;
} gen;

static const cJSON *get(const cJSON *o, const char *k) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *get_str(const cJSON *o, const char *k) {
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool fail(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(gen *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->msg, g->msglen, fmt, ap);
    va_end(ap);
    return false;
}

/* "#/$defs/Item" (JSON pointer, ~0 and ~1 escapes) within the root schema; NULL if absent. */
static const cJSON *resolve(const cJSON *root, const char *ref) {
    if (ref[0] != '#') return NULL;
    const cJSON *at = root;
    const char *p = ref + 1;
    while (*p == '/' && at != NULL) {
        char tok[128];
        size_t n = 0;
        for (p++; *p != '\0' && *p != '/' && n + 1 < sizeof tok; p++) {
            if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) {
                tok[n++] = p[1] == '0' ? '~' : '/';
                p++;
            } else {
                tok[n++] = *p;
            }
        }
        tok[n] = '\0';
        at = cJSON_IsArray(at) ? cJSON_GetArrayItem(at, atoi(tok)) : get(at, tok);
    }
    return *p == '\0' ? at : NULL;
}

/* The schema's type: the first that is not "null" of a list, or inferred from its keywords. */
static const char *type_of(const cJSON *s) {
    const cJSON *t = get(s, "type");
    if (cJSON_IsString(t)) return t->valuestring;
    if (cJSON_IsArray(t)) {
        const cJSON *x;
        const char *only = NULL;
        cJSON_ArrayForEach(x, t) {
            if (!cJSON_IsString(x)) continue;
            if (strcasecmp(x->valuestring, "null") != 0) return x->valuestring;
            only = x->valuestring;
        }
        return only;
    }
    if (get(s, "properties") != NULL || get(s, "required") != NULL) return "object";
    if (get(s, "items") != NULL || get(s, "prefixItems") != NULL) return "array";
    return NULL;
}

static bool value(gen *g, const cJSON *s, int depth);

/*
 * A numeric keyword: the schema's own, else "<words>: N" in its description (the keyword in
 * lower-case words: "exclusive minimum", "min length"). False when neither has it.
 */
static bool bound(const cJSON *s, const char *keyword, const char *words, double *out) {
    const cJSON *v = get(s, keyword);
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return true;
    }
    const char *d = get_str(s, "description");
    size_t n = strlen(words);
    for (const char *p = d; p != NULL && (p = strstr(p, words)) != NULL; p += n) {
        bool start = p == d || p[-1] == ' ' || p[-1] == ';';
        if (!start || strncmp(p + n, ": ", 2) != 0) continue;
        char *end;
        double x = strtod(p + n + 2, &end);
        if (end == p + n + 2) continue;
        *out = x;
        return true;
    }
    return false;
}

/* A member's value: its schema's minimal instance, null when it has no schema. */
static bool member(gen *g, const cJSON *s, int depth) {
    if (s != NULL) return value(g, s, depth + 1);
    util_buf_puts(g->out, "null");
    return true;
}

/* One property of the merged objects `subs`: the first schema that declares it. */
static const cJSON *property(const cJSON *const *subs, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) {
        const cJSON *p = get(get(subs[i], "properties"), name);
        if (p != NULL) return p;
    }
    return NULL;
}

/* An object with the required properties of every schema in subs (allOf merges them). */
static bool object(gen *g, const cJSON *const *subs, size_t n, int depth) {
    util_buf_puts(g->out, "{");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        const cJSON *name;
        cJSON_ArrayForEach(name, get(subs[i], "required")) {
            if (!cJSON_IsString(name)) continue;
            util_buf_puts(g->out, first ? "" : ",");
            first = false;
            mock_buf_json_string(g->out, name->valuestring);
            util_buf_puts(g->out, ":");
            if (!member(g, property(subs, n, name->valuestring), depth)) return false;
        }
    }
    util_buf_puts(g->out, "}");
    return true;
}

static bool array(gen *g, const cJSON *s, int depth) {
    const cJSON *prefix = get(s, "prefixItems");
    double want = 0;
    bound(s, "minItems", "min items", &want);
    if (want > 100000) return fail(g, "minItems %.0f is over the mock's 100000", want);
    util_buf_puts(g->out, "[");
    for (int i = 0; i < (int)want; i++) {
        const cJSON *item = cJSON_GetArrayItem(prefix, i);
        if (item == NULL) item = get(s, "items");
        util_buf_puts(g->out, i ? "," : "");
        if (!member(g, item, depth)) return false;
    }
    util_buf_puts(g->out, "]");
    return true;
}

static const struct {
    const char *format, *sample;
} formats[] = {
    {"date-time", "1970-01-01T00:00:00Z"},
    {"date", "1970-01-01"},
    {"time", "00:00:00"},
    {"email", "a@example.com"},
    {"uri", "https://example.com"},
    {"url", "https://example.com"},
    {"uuid", "00000000-0000-4000-8000-000000000000"},
    {"ipv4", "127.0.0.1"},
    {"ipv6", "::1"},
    {"hostname", "example.com"},
};

static bool string(gen *g, const cJSON *s) {
    const char *fmt = get_str(s, "format");
    for (size_t i = 0; fmt != NULL && i < sizeof formats / sizeof formats[0]; i++) {
        if (strcmp(fmt, formats[i].format) != 0) continue;
        mock_buf_json_string(g->out, formats[i].sample);
        return true;
    }
    double n = 0;
    bound(s, "minLength", "min length", &n);
    if (n > (double)MOCK_SCHEMA_OUT_MAX) return fail(g, "minLength %.0f is too long", n);
    util_buf_puts(g->out, "\"");
    for (int i = 0; i < (int)n; i++) util_buf_puts(g->out, "a");
    util_buf_puts(g->out, "\"");
    return true;
}

/* 0 moved into the schema's range (exclusive bounds step inside it). */
static void number(gen *g, const cJSON *s, bool integer) {
    double v = 0, step = integer ? 1 : 0.5, b;
    if (bound(s, "minimum", "minimum", &b) && v < b) v = b;
    if (bound(s, "exclusiveMinimum", "exclusive minimum", &b) && v <= b) v = b + step;
    if (bound(s, "maximum", "maximum", &b) && v > b) v = b;
    if (bound(s, "exclusiveMaximum", "exclusive maximum", &b) && v >= b) v = b - step;
    if (integer) v = ceil(v);
    if (integer || v == floor(v))
        util_buf_printf(g->out, "%.0f", v);
    else
        util_buf_printf(g->out, "%.17g", v);
}

static bool all_of(gen *g, const cJSON *s, int depth) {
    const cJSON *subs[ALL_OF_MAX + 1];
    size_t n = 0;
    subs[n++] = s; /* the schema's own properties join the merge */
    const cJSON *x;
    cJSON_ArrayForEach(x, get(s, "allOf")) {
        const cJSON *ref = get(x, "$ref");
        if (cJSON_IsString(ref)) x = resolve(g->root, ref->valuestring);
        if (n == ALL_OF_MAX + 1) return fail(g, "allOf has over %d schemas", ALL_OF_MAX);
        if (x != NULL) subs[n++] = x;
    }
    for (size_t i = 0; i < n; i++) {
        const char *t = type_of(subs[i]);
        if (t != NULL && strcasecmp(t, "object") == 0) return object(g, subs, n, depth);
    }
    return value(g, n > 1 ? subs[1] : NULL, depth + 1);
}

/* The first alternative of a keyword that lists schemas, or NULL. */
static const cJSON *first_of(const cJSON *s, const char *key) {
    const cJSON *list = get(s, key);
    return cJSON_IsArray(list) ? cJSON_GetArrayItem(list, 0) : NULL;
}

static void json_value(gen *g, const cJSON *v) {
    char *text = cJSON_PrintUnformatted(v);
    if (text == NULL) {
        g->out->err = UTIL_BUF_NOMEM;
        return;
    }
    util_buf_puts(g->out, text);
    cJSON_free(text);
}

static bool value(gen *g, const cJSON *s, int depth) {
    if (depth > DEPTH_MAX)
        return fail(g, "nests deeper than %d levels (a recursive $ref?)", DEPTH_MAX);
    if (cJSON_IsFalse(s)) return fail(g, "a 'false' schema allows no value");
    const cJSON *ref = get(s, "$ref"), *alt;
    if (cJSON_IsString(ref)) {
        const cJSON *target = resolve(g->root, ref->valuestring);
        if (target == NULL) return fail(g, "$ref '%.200s' does not resolve", ref->valuestring);
        return value(g, target, depth + 1);
    }
    if (get(s, "const") != NULL) {
        json_value(g, get(s, "const"));
    } else if (cJSON_GetArraySize(get(s, "enum")) > 0) {
        json_value(g, cJSON_GetArrayItem(get(s, "enum"), 0));
    } else if ((alt = first_of(s, "anyOf")) != NULL || (alt = first_of(s, "oneOf")) != NULL) {
        return value(g, alt, depth + 1);
    } else if (get(s, "allOf") != NULL) {
        return all_of(g, s, depth);
    } else {
        const char *t = type_of(s);
        if (t == NULL || strcasecmp(t, "null") == 0)
            util_buf_puts(g->out, "null");
        else if (strcasecmp(t, "object") == 0)
            return object(g, &s, 1, depth);
        else if (strcasecmp(t, "array") == 0)
            return array(g, s, depth);
        else if (strcasecmp(t, "string") == 0)
            return string(g, s);
        else if (strcasecmp(t, "integer") == 0)
            number(g, s, true);
        else if (strcasecmp(t, "number") == 0)
            number(g, s, false);
        else if (strcasecmp(t, "boolean") == 0)
            util_buf_puts(g->out, "false");
        else
            return fail(g, "unknown type '%.64s'", t);
    }
    return true;
}

bool mock_schema_minimal(const cJSON *schema, const cJSON *root, util_buf *out, char *msg,
                         size_t msglen) {
    gen g = {root != NULL ? root : schema, out, msg, msglen};
    size_t cap = out->cap;
    out->cap = out->len + MOCK_SCHEMA_OUT_MAX;
    bool ok = schema == NULL ? (util_buf_puts(out, "{}"), true) : value(&g, schema, 0);
    out->cap = cap;
    if (ok && out->err)
        return fail(&g, "its minimal instance is over %zu bytes", MOCK_SCHEMA_OUT_MAX);
    return ok;
}

/* ---- the dialects ---- */

/* The answer is a JSON text: the schema's minimal instance ("{}" without a schema). */
static bool answer_json(mock_reply *r, mock_store *st, const cJSON *schema, const char *where,
                        char *msg, size_t msglen) {
    char why[400];
    util_buf_free(&st->json);
    if (!mock_schema_minimal(schema, schema, &st->json, why, sizeof why))
        return mock_bad(msg, msglen, "%s: %s", where, why);
    r->output = MOCK_OUT_JSON;
    r->json = st->json.p;
    r->json_len = st->json.len;
    return true;
}

/* The answer is one call of `name` with arguments satisfying `schema`. */
static bool answer_tool(mock_reply *r, mock_store *st, const char *name, const cJSON *schema,
                        const char *where, char *msg, size_t msglen) {
    if (!answer_json(r, st, schema, where, msg, msglen)) return false;
    snprintf(st->tool_name, sizeof st->tool_name, "%s", name);
    r->output = MOCK_OUT_TOOL;
    r->tool_name = st->tool_name;
    return true;
}

/*
 * From `tools`, the one named `want` (the first when want is NULL): its name and schema, found
 * through name_of and schema_of. False with the dialect's message when there is none.
 */
static bool pick(const cJSON *tools, const char *want, const char *(*name_of)(const cJSON *),
                 const cJSON *(*schema_of)(const cJSON *), const char **name,
                 const cJSON **schema) {
    const cJSON *t;
    cJSON_ArrayForEach(t, tools) {
        const char *n = name_of(t);
        if (n == NULL || (want != NULL && strcmp(n, want) != 0)) continue;
        *name = n;
        *schema = schema_of(t);
        return true;
    }
    return false;
}

static bool pick_or_fail(const cJSON *tools, const char *want,
                         const char *(*name_of)(const cJSON *),
                         const cJSON *(*schema_of)(const cJSON *), mock_reply *r, mock_store *st,
                         char *msg, size_t msglen) {
    const char *name;
    const cJSON *schema;
    if (cJSON_GetArraySize(tools) == 0)
        return mock_bad(msg, msglen, "tool_choice: a tool is required but no tools were given");
    if (!pick(tools, want, name_of, schema_of, &name, &schema))
        return mock_bad(msg, msglen, "tool_choice: no tool named '%.100s' in tools", want);
    return answer_tool(r, st, name, schema, "tools: the schema", msg, msglen);
}

/* OpenAI chat: {"type":"function","function":{"name","parameters"}}. */
static const char *chat_name(const cJSON *t) {
    return get_str(get(t, "function"), "name");
}
static const cJSON *chat_schema(const cJSON *t) {
    return get(get(t, "function"), "parameters");
}

bool mock_tools_chat(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    const cJSON *choice = get(root, "tool_choice");
    const char *mode = cJSON_IsString(choice) ? choice->valuestring : NULL;
    const char *want = chat_name(choice);
    if ((mode != NULL && strcmp(mode, "required") == 0) || want != NULL)
        return pick_or_fail(get(root, "tools"), want, chat_name, chat_schema, r, st, msg, msglen);
    const cJSON *rf = get(root, "response_format");
    const char *type = get_str(rf, "type");
    if (type != NULL && strcmp(type, "json_schema") == 0)
        return answer_json(r, st, get(get(rf, "json_schema"), "schema"),
                           "response_format.json_schema.schema", msg, msglen);
    if (type != NULL && strcmp(type, "json_object") == 0)
        return answer_json(r, st, NULL, "response_format", msg, msglen);
    return true;
}

/* Responses API: {"type":"function","name","parameters"}. */
static const char *flat_name(const cJSON *t) {
    return get_str(t, "name");
}
static const cJSON *flat_parameters(const cJSON *t) {
    return get(t, "parameters");
}

bool mock_tools_responses(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                          size_t msglen) {
    const cJSON *choice = get(root, "tool_choice");
    const char *mode = cJSON_IsString(choice) ? choice->valuestring : NULL;
    const char *want = get_str(choice, "name");
    if ((mode != NULL && strcmp(mode, "required") == 0) || want != NULL)
        return pick_or_fail(get(root, "tools"), want, flat_name, flat_parameters, r, st, msg,
                            msglen);
    const cJSON *format = get(get(root, "text"), "format");
    const char *type = get_str(format, "type");
    if (type != NULL && strcmp(type, "json_schema") == 0)
        return answer_json(r, st, get(format, "schema"), "text.format.schema", msg, msglen);
    if (type != NULL && strcmp(type, "json_object") == 0)
        return answer_json(r, st, NULL, "text.format", msg, msglen);
    return true;
}

/* Anthropic: {"name","input_schema"}; tool_choice {"type":"any"} or {"type":"tool","name"}. */
static const cJSON *input_schema(const cJSON *t) {
    return get(t, "input_schema");
}

bool mock_tools_messages(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                         size_t msglen) {
    const cJSON *choice = get(root, "tool_choice");
    const char *type = get_str(choice, "type");
    if (type != NULL && (strcmp(type, "any") == 0 || strcmp(type, "tool") == 0))
        return pick_or_fail(get(root, "tools"),
                            strcmp(type, "tool") == 0 ? get_str(choice, "name") : NULL, flat_name,
                            input_schema, r, st, msg, msglen);
    const cJSON *format = get(get(root, "output_config"), "format");
    if (format == NULL) format = get(root, "output_format"); /* the structured-outputs beta */
    const char *ftype = get_str(format, "type");
    if (ftype != NULL && strcmp(ftype, "json_schema") == 0)
        return answer_json(r, st, get(format, "schema"), "output_config.format.schema", msg,
                           msglen);
    return true;
}

/* Gemini: tools[].functionDeclarations[] {"name","parameters" or "parametersJsonSchema"}. */
static const cJSON *gemini_schema(const cJSON *t) {
    const cJSON *s = get(t, "parametersJsonSchema");
    return s != NULL ? s : get(t, "parameters");
}

bool mock_tools_gemini(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    const cJSON *fcc = get(get(root, "toolConfig"), "functionCallingConfig");
    const char *mode = get_str(fcc, "mode");
    if (mode != NULL && (strcmp(mode, "ANY") == 0 || strcmp(mode, "VALIDATED") == 0)) {
        const cJSON *allowed = cJSON_GetArrayItem(get(fcc, "allowedFunctionNames"), 0);
        const char *want = cJSON_IsString(allowed) ? allowed->valuestring : NULL;
        const cJSON *t;
        cJSON_ArrayForEach(t, get(root, "tools")) {
            const cJSON *decls = get(t, "functionDeclarations");
            const char *name;
            const cJSON *schema;
            if (pick(decls, want, flat_name, gemini_schema, &name, &schema))
                return answer_tool(r, st, name, schema, "tools: the schema", msg, msglen);
        }
        return mock_bad(msg, msglen, "toolConfig: mode %s needs a function declaration%s%.100s",
                        mode, want ? " named " : "", want ? want : "");
    }
    const cJSON *gc = get(root, "generationConfig");
    const char *mime = get_str(gc, "responseMimeType");
    if (mime == NULL || strcmp(mime, "application/json") != 0) return true;
    const cJSON *schema = get(gc, "responseJsonSchema");
    if (schema == NULL) schema = get(gc, "responseSchema");
    return answer_json(r, st, schema, "generationConfig.responseSchema", msg, msglen);
}
