/*
 * load_strict.c - what cJSON lets through and the loader must not: the
 * strict reading of a JSON text, checked before cJSON builds its tree.
 *
 * cJSON keeps the first of two equal keys (a JSON reader such as Python's
 * keeps the last), accepts text after the document, copies invalid UTF-8
 * as it is, cuts a string at \u0000 and calls a document nested too deep
 * "invalid". One pass over the text finds each of these with its place:
 * the JSON path being read, and the line and column or the byte offset.
 * Keys are decoded into an arena and remembered in a hash table per
 * document (object id, key), so that a duplicate is found in linear time
 * whatever the size of an object. A plain syntax error is left to cJSON,
 * whose message the loader has always given.
 */
#include "scenario/loadint.h"
#include "util/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct frame {
    bool object;
    uint32_t id;     /* the object's number, for its keys */
    size_t index;    /* the array's next index */
    size_t path_len; /* the container's own path */
} frame;

typedef struct key_ent {
    uint32_t obj, off, len; /* object id; the decoded key in the arena */
    size_t at;              /* where the key starts in the text */
} key_ent;

typedef struct scan {
    const char *t;
    size_t n, i;
    sim_error *err;
    int kind; /* LD_STRICT_* of the error */
    frame st[LD_JSON_DEPTH_MAX];
    int depth;
    uint32_t objects;
    char path[256];
    size_t plen;
    char *arena; /* decoded keys */
    size_t arena_len, arena_cap;
    key_ent *keys;
    size_t nkeys, keys_cap;
    uint32_t *slots; /* 1 + index into keys; 0 is empty */
    size_t nslots;
} scan;

/* ---- places and errors ---- */

static void line_col(const char *text, size_t off, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int fail(scan *S, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(scan *S, int kind, const char *fmt, ...) {
    va_list ap;
    snprintf(S->err->path, sizeof S->err->path, "%s", S->path);
    va_start(ap, fmt);
    vsnprintf(S->err->msg, sizeof S->err->msg, fmt, ap);
    va_end(ap);
    S->kind = kind;
    return FB_EPARSE;
}

/* A syntax error: its message is cJSON's, unless cJSON accepted the text. */
static int syntax(scan *S) {
    int line, col;
    line_col(S->t, S->i, &line, &col);
    return fail(S, LD_STRICT_SYNTAX, "invalid JSON at line %d, column %d", line, col);
}

static int out_of_memory(scan *S) {
    return fail(S, LD_STRICT_MEMORY, "out of memory");
}

static void path_to(scan *S, size_t len) {
    S->plen = len;
    S->path[len] = '\0';
}

static void path_add(scan *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void path_add(scan *S, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(S->path + S->plen, sizeof S->path - S->plen, fmt, ap);
    va_end(ap);
    /* a path too long for the buffer stays at its last whole step */
    if (n > 0 && S->plen + (size_t)n < sizeof S->path)
        S->plen += (size_t)n;
    else
        S->path[S->plen] = '\0';
}

/* ---- strings ---- */

static int arena_put(scan *S, const char *p, size_t k) {
    if (S->arena_len + k > S->arena_cap) {
        size_t cap = S->arena_cap ? S->arena_cap * 2 : 1024;
        while (cap < S->arena_len + k) cap *= 2;
        char *a = realloc(S->arena, cap);
        if (a == NULL) return out_of_memory(S);
        S->arena = a;
        S->arena_cap = cap;
    }
    memcpy(S->arena + S->arena_len, p, k);
    S->arena_len += k;
    return FB_OK;
}

static int hex4(const char *p, unsigned *out) {
    *out = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16) return FB_EPARSE;
        *out = *out * 16 + d;
    }
    return FB_OK;
}

/* The arena from off; "" while it is unallocated (only empty keys so far): never NULL + 0. */
static const char *arena_at(const scan *S, size_t off) {
    return S->arena ? S->arena + off : "";
}

/* The code point as UTF-8 into the arena (keys only). */
static int put_code(scan *S, unsigned cp) {
    char b[4];
    size_t k;
    if (cp < 0x80) {
        b[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    return arena_put(S, b, k);
}

/* A \u escape at S->i (on the 'u'), with its low surrogate when it is a high one. */
static int unicode_escape(scan *S, bool key) {
    size_t at = S->i - 1;
    unsigned cp, lo;
    if (S->i + 5 > S->n || hex4(S->t + S->i + 1, &cp) != FB_OK) return syntax(S);
    S->i += 5;
    if (cp == 0)
        return fail(S, LD_STRICT_TEXT,
                    "\\u0000 at byte %zu: a string may not contain NUL (it would cut the string)",
                    at);
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(S, LD_STRICT_TEXT, "\\u%04X at byte %zu: a low surrogate without a high one",
                    cp, at);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (S->i + 6 > S->n || S->t[S->i] != '\\' || S->t[S->i + 1] != 'u' ||
            hex4(S->t + S->i + 2, &lo) != FB_OK || lo < 0xDC00 || lo > 0xDFFF)
            return fail(S, LD_STRICT_TEXT,
                        "\\u%04X at byte %zu: a high surrogate without a low one", cp, at);
        S->i += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    return key ? put_code(S, cp) : FB_OK;
}

static int escape(scan *S, bool key) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (S->i >= S->n) return syntax(S);
    char c = S->t[S->i];
    if (c == 'u') return unicode_escape(S, key);
    const char *p = strchr(from, c);
    if (c == '\0' || p == NULL) return syntax(S);
    S->i++;
    return key ? arena_put(S, &to[p - from], 1) : FB_OK;
}

/* A string at S->i (on its '"'); a key's decoded text goes to the arena. */
static int string(scan *S, bool key) {
    S->i++;
    while (S->i < S->n) {
        unsigned char c = (unsigned char)S->t[S->i];
        if (c == '"') {
            S->i++;
            return FB_OK;
        }
        int rc = FB_OK;
        if (c == '\\') {
            S->i++;
            rc = escape(S, key);
        } else if (c < 0x20) {
            return fail(S, LD_STRICT_TEXT,
                        "control character 0x%02X at byte %zu inside a string (write it as an "
                        "escape such as \\n)",
                        c, S->i);
        } else {
            size_t k = util_utf8_char((const unsigned char *)S->t + S->i, S->n - S->i);
            if (k == 0) return fail(S, LD_STRICT_TEXT, "invalid UTF-8 at byte %zu", S->i);
            if (key) rc = arena_put(S, S->t + S->i, k);
            S->i += k;
        }
        if (rc != FB_OK) return rc;
    }
    return syntax(S);
}

/* ---- keys: one table for the document, keyed by (object, key) ---- */

static uint32_t key_hash(uint32_t obj, const char *k, size_t len) {
    uint32_t h = 2166136261u ^ (obj * 16777619u);
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

static void slot_insert(scan *S, size_t e) {
    const key_ent *k = &S->keys[e];
    size_t m = S->nslots - 1;
    for (size_t s = key_hash(k->obj, arena_at(S, k->off), k->len) & m;; s = (s + 1) & m)
        if (S->slots[s] == 0) {
            S->slots[s] = (uint32_t)e + 1;
            return;
        }
}

/* Room for one more key: the entries, and the table kept at most half full. */
static int keys_room(scan *S) {
    if (S->nkeys == S->keys_cap) {
        size_t cap = S->keys_cap ? S->keys_cap * 2 : 64;
        key_ent *k = realloc(S->keys, cap * sizeof *k);
        if (k == NULL) return out_of_memory(S);
        S->keys = k;
        S->keys_cap = cap;
    }
    if (2 * (S->nkeys + 1) <= S->nslots) return FB_OK;
    size_t n = S->nslots ? S->nslots * 2 : 128;
    uint32_t *s = calloc(n, sizeof *s);
    if (s == NULL) return out_of_memory(S);
    free(S->slots);
    S->slots = s;
    S->nslots = n;
    for (size_t e = 0; e < S->nkeys; e++) slot_insert(S, e);
    return FB_OK;
}

/* The key just decoded (arena from `off`) is new in object obj; else the error names both. */
static int key_new(scan *S, uint32_t obj, size_t off, size_t at) {
    int rc = keys_room(S);
    if (rc != FB_OK) return rc;
    size_t len = S->arena_len - off, m = S->nslots - 1;
    const char *k = arena_at(S, off);
    for (size_t s = key_hash(obj, k, len) & m; S->slots[s]; s = (s + 1) & m) {
        const key_ent *e = &S->keys[S->slots[s] - 1];
        if (e->obj != obj || e->len != len || memcmp(arena_at(S, e->off), k, len) != 0) continue;
        int l1, c1, l2, c2;
        line_col(S->t, e->at, &l1, &c1);
        line_col(S->t, at, &l2, &c2);
        return fail(S, LD_STRICT_DUPLICATE,
                    "duplicate key '%.*s' at line %d, column %d (first at line %d, column %d); "
                    "JSON readers differ on which one counts, so each key may appear once",
                    (int)len, k, l2, c2, l1, c1);
    }
    if (len > UINT32_MAX || off > UINT32_MAX) return out_of_memory(S);
    S->keys[S->nkeys] = (key_ent){obj, (uint32_t)off, (uint32_t)len, at};
    slot_insert(S, S->nkeys++);
    return FB_OK;
}

/* ---- values ---- */

static void skip_ws(scan *S) {
    while (S->i < S->n &&
           (S->t[S->i] == ' ' || S->t[S->i] == '\t' || S->t[S->i] == '\n' || S->t[S->i] == '\r'))
        S->i++;
}

static bool digit(const scan *S) {
    return S->i < S->n && S->t[S->i] >= '0' && S->t[S->i] <= '9';
}

static void digits(scan *S) {
    while (digit(S)) S->i++;
}

/* RFC 8259's number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int number(scan *S) {
    if (S->t[S->i] == '-') S->i++;
    if (!digit(S)) return syntax(S);
    if (S->t[S->i++] != '0') digits(S);
    if (S->i < S->n && S->t[S->i] == '.') {
        S->i++;
        if (!digit(S)) return syntax(S);
        digits(S);
    }
    if (S->i < S->n && (S->t[S->i] == 'e' || S->t[S->i] == 'E')) {
        S->i++;
        if (S->i < S->n && (S->t[S->i] == '+' || S->t[S->i] == '-')) S->i++;
        if (!digit(S)) return syntax(S);
        digits(S);
    }
    return FB_OK;
}

static int literal(scan *S) {
    static const char *const words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(words[k]);
        if (S->n - S->i >= l && memcmp(S->t + S->i, words[k], l) == 0) {
            S->i += l;
            return FB_OK;
        }
    }
    return syntax(S);
}

/* An object's key at S->i, then its ':'; the path ends on it. */
static int member_key(scan *S, frame *f) {
    skip_ws(S);
    if (S->i >= S->n || S->t[S->i] != '"') return syntax(S);
    size_t at = S->i, off = S->arena_len;
    path_to(S, f->path_len);
    int rc = string(S, true);
    if (rc != FB_OK) return rc;
    path_add(S, "%s%.*s", f->path_len ? "." : "", (int)(S->arena_len - off), arena_at(S, off));
    rc = key_new(S, f->id, off, at);
    if (rc != FB_OK) return rc;
    skip_ws(S);
    if (S->i >= S->n || S->t[S->i] != ':') return syntax(S);
    S->i++;
    return FB_OK;
}

/* The start of the next member of the innermost container (its first when `first`). */
static int next_member(scan *S, bool first) {
    frame *f = &S->st[S->depth - 1];
    if (f->object) return member_key(S, f);
    path_to(S, f->path_len);
    path_add(S, "[%zu]", first ? 0 : ++f->index);
    return FB_OK;
}

/* '{' or '[' at S->i: one level deeper; *empty when it closes at once. */
static int open(scan *S, bool *empty) {
    bool object = S->t[S->i] == '{';
    if (S->depth == LD_JSON_DEPTH_MAX) {
        int line, col;
        line_col(S->t, S->i, &line, &col);
        if (S->plen > 40) { /* a thousand [0]s say less than where it starts */
            path_to(S, 40);
            path_add(S, "...");
        }
        return fail(S, LD_STRICT_DEPTH,
                    "nested deeper than %d levels (the limit) at line %d, column %d",
                    LD_JSON_DEPTH_MAX, line, col);
    }
    S->i++;
    S->st[S->depth++] = (frame){object, object ? S->objects++ : 0, 0, S->plen};
    skip_ws(S);
    *empty = S->i < S->n && S->t[S->i] == (object ? '}' : ']');
    if (*empty) {
        S->i++;
        path_to(S, S->st[--S->depth].path_len);
        return FB_OK;
    }
    return next_member(S, true);
}

/* After a value: ',' and the next member, or the closings; *done at the document's end. */
static int after_value(scan *S, bool *done) {
    for (;;) {
        if (S->depth == 0) {
            *done = true;
            return FB_OK;
        }
        skip_ws(S);
        frame *f = &S->st[S->depth - 1];
        if (S->i >= S->n) return syntax(S);
        char c = S->t[S->i];
        if (c == ',') {
            S->i++;
            return next_member(S, false);
        }
        if (c != (f->object ? '}' : ']')) return syntax(S);
        S->i++;
        path_to(S, f->path_len);
        S->depth--;
    }
}

static int value(scan *S) {
    for (bool done = false; !done;) {
        skip_ws(S);
        if (S->i >= S->n) return syntax(S);
        char c = S->t[S->i];
        bool empty = false;
        int rc;
        if (c == '{' || c == '[') {
            rc = open(S, &empty);
            if (rc != FB_OK) return rc;
            if (!empty) continue; /* its first member's value is next */
        } else if (c == '"') {
            rc = string(S, false);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            rc = number(S);
        } else {
            rc = literal(S);
        }
        if (rc != FB_OK) return rc;
        rc = after_value(S, &done);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

/* Nothing but blanks after the document. */
static int trailing(scan *S) {
    skip_ws(S);
    if (S->i >= S->n) return FB_OK;
    int line, col;
    line_col(S->t, S->i, &line, &col);
    path_to(S, 0);
    return fail(S, LD_STRICT_TRAILING,
                "unexpected text after the JSON document at line %d, column %d (one document "
                "only)",
                line, col);
}

size_t scn_json_values(const char *text, size_t len) {
    size_t n = 1;
    bool str = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                str = false;
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[' || c == ',') {
            n++;
        }
    }
    return n;
}

int scn_json_check(const char *text, size_t len, sim_error *err) {
    size_t n = scn_json_values(text, len), max = SCN_JSON_VALUES_MAX(len);
    if (n > max) {
        err->path[0] = '\0';
        snprintf(err->msg, sizeof err->msg,
                 "about %zu JSON values in %zu bytes, more than the %zu a text this size may hold "
                 "(one per 4 bytes, plus 65536: the cap that bounds the reader's memory)",
                 n, len, max);
        return FB_ECAP;
    }
    int kind = scn__strict_json(text, len, err);
    return kind == LD_STRICT_OK || kind == LD_STRICT_SYNTAX ? FB_OK
           : kind == LD_STRICT_MEMORY                       ? FB_ENOMEM
                                                            : FB_EPARSE;
}

int scn__strict_json(const char *text, size_t len, sim_error *err) {
    scan *S = calloc(1, sizeof *S);
    if (S == NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return LD_STRICT_MEMORY;
    }
    S->t = text;
    S->n = len;
    S->err = err;
    int kind = value(S) == FB_OK && trailing(S) == FB_OK ? LD_STRICT_OK : S->kind;
    free(S->arena);
    free(S->keys);
    free(S->slots);
    free(S);
    return kind;
}
