/*
 * load_set.c - the --set overlay. Each "path=value" is applied to the JSON
 * tree before anything reads it, so that an override is checked exactly as
 * if it stood in the file. A path is keys and indexes ("traffic[0].service",
 * "pods.count"); arrays of named things may be addressed by name too
 * ("providers.openai.capacity.rpm"). Missing objects along the way are
 * created, except under "variants", where that would hide a typo; a new
 * variant is added on purpose, with a leading '+' ("+variants.mine={...}").
 */
#include "scenario/loadint.h"
#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct set_walk {
    const char *set;       /* the whole argument, for messages */
    const cJSON *variants; /* the document's "variants" */
    sim_error *err;
} set_walk;

static int set_error(sim_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_error(sim_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return FB_EINVAL;
}

static int out_of_memory(sim_error *err) {
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return FB_ENOMEM;
}

/*
 * The value as JSON when it reads as JSON, else as a string ("10s", "openai").
 * JSON is read as strictly as a file; a value that opens an object or an
 * array and is not JSON is an error, not a string that would fail later.
 */
static int set_value(const char *set, const char *text, cJSON **val, sim_error *err) {
    sim_error strict = {{0}, {0}, {0}};
    size_t bad;
    *val = NULL;
    if (!util_utf8_valid(text, strlen(text), &bad))
        return set_error(err, "--set %s: invalid UTF-8 at byte %zu of the value", set, bad);
    int kind = scn__strict_json(text, strlen(text), &strict);
    bool opens = text[strspn(text, " \t")] == '{' || text[strspn(text, " \t")] == '[';
    if (kind == LD_STRICT_OK) *val = cJSON_ParseWithOpts(text, NULL, 1);
    if (kind == LD_STRICT_MEMORY) return out_of_memory(err);
    if ((kind == LD_STRICT_SYNTAX || kind == LD_STRICT_TRAILING) && opens)
        return set_error(err, "--set %s: the value opens an object or an array but is not JSON: %s",
                         set, strict.msg);
    if (kind == LD_STRICT_TEXT || kind == LD_STRICT_DUPLICATE || kind == LD_STRICT_DEPTH)
        return set_error(err, "--set %s: the value: %s%s%s", set, strict.path,
                         strict.path[0] ? ": " : "", strict.msg);
    if (*val == NULL) *val = cJSON_CreateString(text);
    return *val ? FB_OK : out_of_memory(err);
}

/* "a..b", ".a", "a.": a step left out is an error, not skipped (strtok would skip it). */
static int empty_segment(const char *set, const char *key, sim_error *err) {
    size_t n = strlen(key);
    if (n > 0 && key[0] != '.' && key[n - 1] != '.' && strstr(key, "..") == NULL) return FB_OK;
    return set_error(err,
                     "--set %s: an empty step in the path '%s' (steps are keys or names joined "
                     "by single dots, as in pods.count)",
                     set, key);
}

/* Cut a trailing "[N]" off tok into *index (-1 when there is none). */
static int split_index(char *tok, long *index) {
    char *br = strchr(tok, '[');
    char *end;
    *index = -1;
    if (br == NULL) return FB_OK;
    *br = '\0';
    *index = strtol(br + 1, &end, 10);
    if (end == br + 1 || *end != ']' || end[1] != '\0' || *index < 0) return FB_EINVAL;
    return FB_OK;
}

/* The element of an array whose "name" (or "class") is tok; the last, if several are. */
static cJSON *named_element(cJSON *arr, const char *tok) {
    cJSON *found = NULL;
    for (cJSON *e = arr->child; e; e = e->next) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "class");
        if ((cJSON_IsString(n) && strcmp(n->valuestring, tok) == 0) ||
            (cJSON_IsString(c) && strcmp(c->valuestring, tok) == 0))
            found = e;
    }
    return found;
}

/*
 * No element of arr is named tok: the names there, and, for a variant's "layers", the gateway
 * tier's layer of that name (gateway.layers.NAME), since --set and --grid name them so.
 */
static int no_element(const set_walk *W, const cJSON *arr, const char *tok) {
    char names[160] = "";
    size_t n = 0;
    for (const cJSON *e = arr->child; e && n < sizeof names; e = e->next) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(nm)) nm = cJSON_GetObjectItemCaseSensitive(e, "class");
        if (cJSON_IsString(nm))
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                  nm->valuestring);
    }
    bool tier = false;
    bool layers = arr->string && strcmp(arr->string, "layers") == 0;
    /* arr's siblings: prev links are circular (the first's is the last) */
    for (const cJSON *sib = arr->prev; layers && sib && sib != arr && !tier; sib = sib->prev) {
        cJSON *gl = sib->string && strcmp(sib->string, "gateway") == 0
                        ? cJSON_GetObjectItemCaseSensitive(sib, "layers")
                        : NULL;
        tier = cJSON_IsArray(gl) && named_element(gl, tok) != NULL;
    }
    return set_error(W->err, "--set %s: no element named '%s' (the names there: %s)%s%s%s", W->set,
                     tok, names[0] ? names : "none",
                     tier ? "; the variant's gateway tier has a layer of that name: gateway.layers."
                          : "",
                     tier ? tok : "", tier ? ".KEY" : "");
}

/*
 * What tok names in cur: an element of an array by name, or a member of an
 * object (NULL when absent) which, with an index, must be an array that long.
 */
static int find(const set_walk *W, cJSON *cur, const char *tok, long index, cJSON **child) {
    if (cJSON_IsArray(cur) && index < 0) {
        *child = named_element(cur, tok);
        if (*child == NULL) return no_element(W, cur, tok);
        return FB_OK;
    }
    if (!cJSON_IsObject(cur))
        return set_error(W->err, "--set %s: '%s' is not inside an object", W->set, tok);
    *child = cJSON_GetObjectItemCaseSensitive(cur, tok);
    /* a misspelled variant must not quietly become a new one */
    if (*child == NULL && cur == W->variants)
        return set_error(W->err, "--set %s: no variant named '%s'", W->set, tok);
    if (index >= 0 && (!cJSON_IsArray(*child) || index >= cJSON_GetArraySize(*child)))
        return set_error(W->err, "--set %s: '%s[%ld]' does not exist", W->set, tok, index);
    return FB_OK;
}

/* The last step: val takes the place find() found (the tree owns it from here). */
static void put(cJSON *cur, cJSON *child, const char *tok, long index, cJSON *val) {
    if (cJSON_IsArray(cur)) /* a named element, replaced as a whole */
        cJSON_ReplaceItemViaPointer(cur, child, val);
    else if (index >= 0)
        cJSON_ReplaceItemInArray(child, (int)index, val);
    else if (child)
        cJSON_ReplaceItemInObjectCaseSensitive(cur, tok, val);
    else
        cJSON_AddItemToObject(cur, tok, val);
}

/* Any other step: into the place find() found, creating an object there if need be. */
static cJSON *descend(cJSON *cur, cJSON *child, const char *tok, long index) {
    if (cJSON_IsArray(cur)) return child;
    if (index >= 0) return cJSON_GetArrayItem(child, (int)index);
    return child ? child : cJSON_AddObjectToObject(cur, tok); /* NULL: out of memory */
}

static int walk(const set_walk *W, cJSON *root, char *key, cJSON *val) {
    cJSON *cur = root;
    char *save = NULL;
    for (char *tok = strtok_r(key, ".", &save); tok;) {
        char *next = strtok_r(NULL, ".", &save);
        long index;
        cJSON *child = NULL;
        if (split_index(tok, &index) != FB_OK)
            return set_error(W->err, "--set %s: bad index in '%s'", W->set, tok);
        int rc = find(W, cur, tok, index, &child);
        if (rc != FB_OK) return rc;
        if (next == NULL) {
            put(cur, child, tok, index, val);
            return FB_OK;
        }
        cur = descend(cur, child, tok, index);
        if (cur == NULL) return out_of_memory(W->err);
        tok = next;
    }
    return set_error(W->err, "--set %s: empty key", W->set);
}

/* ---- the path against the format's tables ---- */

/* The field `name` of the sections `secs`, or NULL. */
static const ld_field *table_field(const ld_section *const *secs, const char *name) {
    for (size_t i = 0; secs[i]; i++)
        for (const ld_field *f = secs[i]->fields; f->name; f++)
            if (strcmp(f->name, name) == 0) return f;
    return NULL;
}

/*
 * The key tok at `at` is none of the sections': the loader's own message for
 * {tok: val} there (did-you-mean, a retry library's habit), named by its path.
 */
static int table_unknown(const set_walk *W, const ld_section *const *secs, const char *tok,
                         const char *at, const cJSON *val) {
    cJSON *obj = cJSON_CreateObject();
    cJSON *copy = val ? cJSON_Duplicate(val, 1) : cJSON_CreateObject();
    if (obj == NULL || copy == NULL) {
        cJSON_Delete(obj);
        cJSON_Delete(copy);
        return out_of_memory(W->err);
    }
    cJSON_AddItemToObject(obj, tok, copy);
    sim_error e = {{0}, {0}, {0}};
    pctx P = {&e, "", 0, false, NULL, NULL, FB_OK};
    P.len = strlen(at) < sizeof P.path ? strlen(at) : 0;
    memcpy(P.path, at, P.len);
    int rc = scn__check_fields_in(&P, obj, secs);
    cJSON_Delete(obj);
    if (rc == FB_OK) return FB_OK; /* not reached: tok is in none of them */
    return set_error(W->err, "--set %s: %s: %s", W->set, e.path, e.msg);
}

/* The message of an error in the value of the row f, named by its --set. */
static int value_error(const set_walk *W, const ld_field *f, const sim_error *e) {
    /* an error inside the value (a distribution's key) names where, below the key */
    const char *in = e->path + strlen(f->name);
    if (strncmp(e->path, f->name, strlen(f->name)) == 0 && *in != '\0')
        return set_error(W->err, "--set %s: %s: %s", W->set, in + (*in == '.'), e->msg);
    return set_error(W->err, "--set %s: %s", W->set, e->msg);
}

/* The last step's value, read as the field's table row reads it. */
static int table_value(const set_walk *W, const ld_field *f, const cJSON *val) {
    cJSON *obj = cJSON_CreateObject();
    cJSON *copy = cJSON_Duplicate(val, 1);
    if (obj == NULL || copy == NULL) {
        cJSON_Delete(obj);
        cJSON_Delete(copy);
        return out_of_memory(W->err);
    }
    cJSON_AddItemToObject(obj, f->name, copy);
    sim_error e = {{0}, {0}, {0}};
    pctx P = {&e, "", 0, false, NULL, NULL, FB_OK};
    int rc = scn__check_field(&P, obj, f);
    cJSON_Delete(obj);
    return rc == FB_OK ? FB_OK : value_error(W, f, &e);
}

/*
 * The last step's key read in the object that holds it (`holder`, in the document `root`,
 * after every --set), by the row's `check`: what its reading needs besides the value.
 */
static int table_context(const set_walk *W, const ld_field *f, const cJSON *holder,
                         const cJSON *root) {
    if (f->check == NULL || !cJSON_IsObject(holder) || !scn__field(holder, f->name)) return FB_OK;
    sim_error e = {{0}, {0}, {0}};
    pctx P = {&e, "", 0, false, NULL, NULL, FB_OK};
    return f->check(&P, holder, root) == FB_OK ? FB_OK : value_error(W, f, &e);
}

/*
 * A whole element set at once (traffic[0]={...}, providers.openai={...}): its keys against the
 * element's sections (unknown, did-you-mean, required), then each key's value as its row reads
 * it; with `context`, after every --set, each key's `check` on the element in the tree (`el`).
 */
static int table_element(const set_walk *W, const ld_section *const *secs, const char *at,
                         const cJSON *val, const cJSON *el, const cJSON *root, bool context) {
    const cJSON *obj = context ? el : val;
    if (!cJSON_IsObject(obj)) return FB_OK; /* the loader says what it should be */
    sim_error e = {{0}, {0}, {0}};
    pctx P = {&e, "", 0, false, NULL, NULL, FB_OK};
    P.len = strlen(at) < sizeof P.path ? strlen(at) : 0;
    memcpy(P.path, at, P.len);
    if (!context) scn__check_fields_in(&P, obj, secs);
    for (const cJSON *m = obj->child; m && P.rc == FB_OK; m = m->next) {
        const ld_field *f = table_field(secs, m->string);
        if (f == NULL) continue;
        if (!context)
            scn__check_field(&P, obj, f);
        else if (f->check)
            f->check(&P, obj, root);
    }
    if (P.rc == FB_OK) return FB_OK;
    return set_error(W->err, "--set %s: %s: %s", W->set, e.path, e.msg);
}

/* A layer given as a preset or a policy file: its keys are the library's, not the tables'. */
static bool library_layer(const cJSON *e) {
    return cJSON_IsObject(e) && (cJSON_GetObjectItemCaseSensitive(e, "preset") ||
                                 cJSON_GetObjectItemCaseSensitive(e, "import"));
}

/*
 * The rest of the path below a preset's layer: the preset's parameters (load_preset.c reads
 * them by its table); a policy file's layer is left to the loader.
 */
static int library_rest(const set_walk *W, const cJSON *layer, const char *at, const char *rest,
                        const cJSON *val) {
    if (cJSON_GetObjectItemCaseSensitive(layer, "import") || *rest == '\0') return FB_OK;
    sim_error e = {{0}, {0}, {0}};
    pctx P = {&e, "", 0, false, NULL, NULL, FB_OK};
    P.len = strlen(at) < sizeof P.path ? strlen(at) : 0;
    memcpy(P.path, at, P.len);
    if (scn__check_preset_set(&P, layer, rest, val) == FB_OK) return FB_OK;
    return set_error(W->err, "--set %s: %s: %s", W->set, e.path, e.msg);
}

/*
 * Each step of the path is a key of the sections the step before leads to
 * (scn__top_section's at first, then a field's `sub`); a field with
 * LD_F_NAMED is followed by a member's name or an index. The last step's
 * value is read as its row says; below a preset's layer, by the preset's table.
 * Where the tables say nothing more (a field without `sub`, a policy file's
 * layer), the loader checks the rest.
 */
static int table_path(const set_walk *W, const cJSON *root, char *key, const cJSON *val,
                      bool context) {
    static const ld_section *const top[] = {&scn__top_section, NULL};
    const ld_section *const *secs = top;
    const cJSON *cur = root;    /* the same place in the tree; NULL where the tree has none */
    const cJSON *holder = NULL; /* the object that holds cur */
    bool named = false;
    char path[512] = "";
    char *save = NULL;
    for (char *tok = strtok_r(key, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        long index;
        if (split_index(tok, &index) != FB_OK) return FB_OK; /* walk() says what is wrong */
        size_t n = strlen(path);
        snprintf(path + n, sizeof path - n, "%s%s", n ? "." : "", tok);
        if (index >= 0) snprintf(path + strlen(path), sizeof path - strlen(path), "[%ld]", index);
        if (named) { /* a member's name */
            named = false;
            cur = cJSON_IsArray(cur) ? named_element((cJSON *)cur, tok)
                                     : cJSON_GetObjectItemCaseSensitive(cur, tok);
            if (index >= 0) return FB_OK;
            if (library_layer(cur)) return context ? FB_OK : library_rest(W, cur, path, save, val);
            if (*save == '\0') return table_element(W, secs, path, val, cur, root, context);
            continue;
        }
        const ld_field *f = table_field(secs, tok);
        if (f == NULL) {
            path[n] = '\0';
            return table_unknown(W, secs, tok, path, *save == '\0' ? val : NULL);
        }
        holder = cur;
        cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        if (index >= 0 && (f->flags & LD_F_NAMED)) {
            cur = cJSON_GetArrayItem(cur, (int)index);
            if (library_layer(cur) && context) return FB_OK;
            if (library_layer(cur)) { /* the layer's path with its index, once */
                char at[sizeof path + 24];
                size_t m = strlen(path);
                if (m > 0 && path[m - 1] == ']')
                    snprintf(at, sizeof at, "%s", path);
                else
                    snprintf(at, sizeof at, "%s[%ld]", path, index);
                return library_rest(W, cur, at, save, val);
            }
            if (*save == '\0' && f->sub)
                return table_element(W, f->sub, path, val, cur, root, context);
        } else if (index >= 0) {
            return FB_OK;
        } else {
            named = (f->flags & LD_F_NAMED) != 0;
        }
        /* the last step (a member-named row's whole value too: its hook checks it if pure) */
        if (*save == '\0' && index < 0)
            return context ? table_context(W, f, holder, root) : table_value(W, f, val);
        if (f->sub == NULL) return FB_OK;
        secs = f->sub;
    }
    return FB_OK;
}

bool scn_top_key(const char *path) {
    size_t n = strcspn(path, ".[");
    for (const ld_field *f = scn__top_section.fields; f->name; f++)
        if (strlen(f->name) == n && strncmp(f->name, path, n) == 0) return true;
    return false;
}

/* "+variants.NAME=OBJECT": a variant the file does not have (fusebox run --policy). */
static int add_variant(cJSON *root, const char *set, const char *key, cJSON *val, sim_error *err) {
    const char *name = key + strlen("+variants.");
    if (strncmp(key, "+variants.", strlen("+variants.")) != 0 || *name == '\0' ||
        strpbrk(name, ".[") != NULL)
        return set_error(err, "--set %s: only a variant can be added (+variants.NAME=...)", set);
    if (!cJSON_IsObject(val)) return set_error(err, "--set %s: a new variant is an object", set);
    cJSON *variants = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (!cJSON_IsObject(variants))
        return set_error(err, "--set %s: the scenario's variants are not an object", set);
    if (cJSON_GetObjectItemCaseSensitive(variants, name) != NULL)
        return set_error(err, "--set %s: the scenario already has a variant named '%s'", set, name);
    return cJSON_AddItemToObject(variants, name, val) ? FB_OK : out_of_memory(err);
}

int scn__apply_set(cJSON *root, const char *set, sim_error *err) {
    char key[512];
    const char *eq = strchr(set, '=');
    if (eq == NULL || eq == set) return set_error(err, "--set %s: expected key=value", set);
    size_t klen = (size_t)(eq - set);
    if (klen >= sizeof key) return set_error(err, "--set: key too long");
    memcpy(key, set, klen);
    key[klen] = '\0';
    size_t bad;
    if (!util_utf8_valid(key, klen, &bad))
        return set_error(err, "--set %s: invalid UTF-8 at byte %zu of the key", set, bad);
    int rc = empty_segment(set, key[0] == '+' ? key + 1 : key, err);
    if (rc != FB_OK) return rc;
    cJSON *val = NULL;
    rc = set_value(set, eq + 1, &val, err);
    if (rc != FB_OK) return rc;
    set_walk W = {set, cJSON_GetObjectItemCaseSensitive(root, "variants"), err};
    char path[sizeof key];
    memcpy(path, key, sizeof key);
    rc = key[0] == '+' ? add_variant(root, set, key, val, err) : walk(&W, root, key, val);
    if (rc != FB_OK) {
        cJSON_Delete(val); /* else the tree has it */
        return rc;
    }
    return key[0] == '+' ? FB_OK : table_path(&W, root, path, val, false);
}

int scn__check_set_context(const cJSON *root, const char *set, sim_error *err) {
    char key[512];
    const char *eq = strchr(set, '=');
    size_t klen = eq ? (size_t)(eq - set) : 0;
    if (klen == 0 || klen >= sizeof key || set[0] == '+') return FB_OK;
    memcpy(key, set, klen);
    key[klen] = '\0';
    set_walk W = {set, cJSON_GetObjectItemCaseSensitive(root, "variants"), err};
    return table_path(&W, root, key, NULL, true);
}
