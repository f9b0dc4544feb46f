/* yaml.c - YAML to a located tree, with libyaml's event parser; see yaml.h. */
#include "import/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/fb.h"
#include "util/file.h"

#define ANCHORS_MAX 1024

typedef struct anchor {
    char *name;
    imp_node *node;
} anchor;

typedef struct builder {
    imp_node *stack[IMP_YAML_DEPTH_MAX + 1];
    int depth;
    imp_node *root;
    size_t nodes;
    size_t text, text_max; /* scalar bytes so far (aliases' copies too), and their cap */
    anchor anchors[ANCHORS_MAX];
    size_t anchor_count;
    imp_error *err;
} builder;

static int fail(builder *b, int rc, int line, int col, const char *msg) {
    b->err->line = line;
    b->err->col = col;
    snprintf(b->err->msg, sizeof b->err->msg, "%s", msg);
    return rc;
}

void imp_node_free(imp_node *n) {
    if (n == NULL) return;
    for (size_t i = 0; i < n->n; i++) imp_node_free(n->items[i]);
    free(n->items);
    free(n->value);
    free(n);
}

static imp_node *new_node(builder *b, imp_kind kind, const yaml_mark_t *m) {
    if (b->nodes >= IMP_YAML_NODES_MAX) return NULL;
    imp_node *n = calloc(1, sizeof *n);
    if (n == NULL) return NULL;
    b->nodes++;
    n->kind = kind;
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    n->start = m->index;
    n->end = m->index;
    return n;
}

/* A copy of an anchored node for an alias, counted against the cap. */
static imp_node *copy(builder *b, const imp_node *src) {
    yaml_mark_t m = {0, (size_t)(src->line - 1), (size_t)(src->col - 1)};
    imp_node *n = new_node(b, src->kind, &m);
    if (n == NULL) return NULL;
    n->quoted = src->quoted;
    n->start = n->end = IMP_YAML_NOWHERE;
    if (src->value) {
        size_t len = strlen(src->value);
        if (b->text > b->text_max || len > b->text_max - b->text) {
            b->text = b->text_max + 1; /* on_alias says which cap */
            goto fail;
        }
        b->text += len;
        if ((n->value = strdup(src->value)) == NULL) goto fail;
    }
    if (src->n > 0 && (n->items = calloc(src->n, sizeof *n->items)) == NULL) goto fail;
    for (size_t i = 0; i < src->n; i++) {
        if ((n->items[i] = copy(b, src->items[i])) == NULL) goto fail;
        n->n++;
    }
    return n;
fail:
    imp_node_free(n);
    return NULL;
}

static int append(builder *b, imp_node *parent, imp_node *child) {
    imp_node **items = realloc(parent->items, (parent->n + 1) * sizeof *items);
    if (items == NULL) {
        imp_node_free(child);
        return fail(b, FB_ENOMEM, 0, 0, "out of memory");
    }
    parent->items = items;
    parent->items[parent->n++] = child;
    return FB_OK;
}

/* A map's keys must be scalars: "? [a]\n: b" (a complex key) is refused where it stands. */
static bool complex_key(const builder *b, imp_kind kind) {
    const imp_node *p = b->depth > 0 ? b->stack[b->depth - 1] : NULL;
    return kind != IMP_SCALAR && p && p->kind == IMP_MAP && p->n % 2 == 0;
}

static int complex_key_fail(builder *b, int line, int col) {
    return fail(b, FB_EPARSE, line, col,
                "a key must be a scalar: a map or a sequence as a key (YAML's \"? \" complex "
                "key) is not supported");
}

/* A finished node goes into the open container, or becomes the document. */
static int place(builder *b, imp_node *n, const yaml_char_t *anchor_name) {
    if (complex_key(b, n->kind)) {
        int rc = complex_key_fail(b, n->line, n->col);
        imp_node_free(n);
        return rc;
    }
    if (anchor_name && b->anchor_count < ANCHORS_MAX) {
        b->anchors[b->anchor_count].name = strdup((const char *)anchor_name);
        b->anchors[b->anchor_count++].node = n;
    }
    if (b->depth == 0) {
        if (b->root) {
            imp_node_free(n);
            return fail(b, FB_EPARSE, 0, 0, "more than one document");
        }
        b->root = n;
        return FB_OK;
    }
    return append(b, b->stack[b->depth - 1], n);
}

static int on_scalar(builder *b, const yaml_event_t *ev) {
    imp_node *n = new_node(b, IMP_SCALAR, &ev->start_mark);
    if (n == NULL) return fail(b, FB_ECAP, 0, 0, "more than 200000 YAML nodes");
    b->text += ev->data.scalar.length; /* at most the file's size: only aliases can pass the cap */
    n->end = ev->end_mark.index;
    n->value = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
    n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    if (n->value == NULL) {
        imp_node_free(n);
        return fail(b, FB_ENOMEM, 0, 0, "out of memory");
    }
    return place(b, n, ev->data.scalar.anchor);
}

static int on_open(builder *b, const yaml_event_t *ev, imp_kind kind) {
    if (b->depth == IMP_YAML_DEPTH_MAX)
        return fail(b, FB_ECAP, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                    "nested deeper than 64 levels");
    if (complex_key(b, kind))
        return complex_key_fail(b, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
    imp_node *n = new_node(b, kind, &ev->start_mark);
    if (n == NULL) return fail(b, FB_ECAP, 0, 0, "more than 200000 YAML nodes");
    const yaml_char_t *a =
        kind == IMP_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (a && b->anchor_count < ANCHORS_MAX) {
        b->anchors[b->anchor_count].name = strdup((const char *)a);
        b->anchors[b->anchor_count++].node = n;
    }
    b->stack[b->depth++] = n;
    return FB_OK;
}

/* Keys of a map sorted by text, then by position (qsort's comparator). */
static int key_order(const void *x, const void *y) {
    const imp_node *a = *(imp_node *const *)x, *c = *(imp_node *const *)y;
    int d = strcmp(a->value, c->value);
    if (d != 0) return d;
    return a->line != c->line ? (a->line > c->line) - (a->line < c->line)
                              : (a->col > c->col) - (a->col < c->col);
}

/* A key twice in one map is an error naming both lines: YAML forbids it, and the tools
 * disagree on which one wins (LiteLLM's PyYAML keeps the last, fusebox's importers read
 * the first), so neither guess is made. Sorting keeps a 100,000-key map O(n log n). */
static int duplicate_keys(builder *b, const imp_node *map) {
    size_t nk = map->n / 2;
    if (nk < 2) return FB_OK;
    const imp_node **keys = malloc(nk * sizeof *keys);
    if (keys == NULL) return fail(b, FB_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < nk; i++) keys[i] = map->items[2 * i];
    qsort(keys, nk, sizeof *keys, key_order);
    const imp_node *first = NULL, *again = NULL;
    for (size_t i = 1; i < nk; i++) {
        if (strcmp(keys[i - 1]->value, keys[i]->value) != 0) continue;
        if (again == NULL || keys[i]->line < again->line ||
            (keys[i]->line == again->line && keys[i]->col < again->col)) {
            first = keys[i - 1];
            again = keys[i];
        }
    }
    int rc = FB_OK;
    if (again) {
        char msg[sizeof b->err->msg];
        snprintf(msg, sizeof msg,
                 "duplicate key \"%.200s\" at lines %d and %d (LiteLLM itself keeps the last "
                 "one, other readers the first: keep one)",
                 again->value, first->line, again->line);
        rc = fail(b, FB_EPARSE, again->line, again->col, msg);
    }
    free(keys);
    return rc;
}

static int on_close(builder *b, const yaml_event_t *ev) {
    imp_node *n = b->stack[--b->depth];
    n->end = ev->end_mark.index;
    if (n->kind == IMP_MAP) {
        int rc = duplicate_keys(b, n);
        if (rc != FB_OK) {
            imp_node_free(n);
            return rc;
        }
    }
    return place(b, n, NULL);
}

static int on_alias(builder *b, const yaml_event_t *ev) {
    for (size_t i = b->anchor_count; i-- > 0;) {
        if (strcmp(b->anchors[i].name, (const char *)ev->data.alias.anchor) != 0) continue;
        imp_node *n = copy(b, b->anchors[i].node);
        if (n == NULL && b->text > b->text_max) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "aliases expand past %zu bytes of text (16 times the file's size, at "
                     "least 1 MiB)",
                     b->text_max);
            return fail(b, FB_ECAP, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                        msg);
        }
        if (n == NULL) return fail(b, FB_ECAP, 0, 0, "aliases expand past 200000 YAML nodes");
        return place(b, n, NULL);
    }
    return fail(b, FB_EPARSE, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                "an alias to an unknown anchor");
}

static int on_event(builder *b, const yaml_event_t *ev) {
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_open(b, ev, IMP_SEQ);
    case YAML_MAPPING_START_EVENT:
        return on_open(b, ev, IMP_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_close(b, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(b, ev);
    default:
        return FB_OK;
    }
}

static void builder_free(builder *b) {
    for (int i = b->depth; i-- > 0;) imp_node_free(b->stack[i]);
    for (size_t i = 0; i < b->anchor_count; i++) free(b->anchors[i].name);
}

int imp_yaml_parse(const char *text, size_t len, const char *file, imp_node **out, imp_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    *out = NULL;
    if (len > IMP_YAML_BYTES_MAX) {
        snprintf(err->msg, sizeof err->msg, "larger than %zu bytes", IMP_YAML_BYTES_MAX);
        return FB_ECAP;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    builder b = {.err = err, .text_max = IMP_YAML_TEXT_MAX(len)};
    int rc = FB_OK;
    for (bool done = false; !done && rc == FB_OK;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = fail(&b, FB_EPARSE, (int)parser.problem_mark.line + 1,
                      (int)parser.problem_mark.column + 1,
                      parser.problem ? parser.problem : "invalid YAML");
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&b, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    builder_free(&b);
    if (rc != FB_OK) {
        imp_node_free(b.root);
        return rc;
    }
    if (b.root == NULL) {
        snprintf(err->msg, sizeof err->msg, "the file holds no YAML document");
        return FB_EPARSE;
    }
    *out = b.root;
    return FB_OK;
}

int imp_yaml_load(const char *file, imp_node **out, imp_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    *out = NULL;
    size_t len = 0;
    char *text = util_read_file(file, IMP_YAML_BYTES_MAX, &len);
    int e = errno, rc = FB_EIO;
    if (text != NULL)
        rc = imp_yaml_parse(text, len, file, out, err);
    else if (e == EFBIG) { /* as imp_yaml_parse says it */
        snprintf(err->msg, sizeof err->msg, "larger than %zu bytes", IMP_YAML_BYTES_MAX);
        rc = FB_ECAP;
    } else if (e == ENOMEM || e == EIO)
        snprintf(err->msg, sizeof err->msg, "cannot read the file");
    else
        snprintf(err->msg, sizeof err->msg, "cannot read: %s", strerror(e));
    free(text);
    return rc;
}

const imp_node *imp_get(const imp_node *n, const char *key) {
    if (n == NULL || n->kind != IMP_MAP) return NULL;
    for (size_t i = 0; i + 1 < n->n; i += 2)
        if (n->items[i]->kind == IMP_SCALAR && strcmp(n->items[i]->value, key) == 0)
            return n->items[i + 1];
    return NULL;
}

void imp_error_format(const imp_error *err, char *buf, size_t len) {
    if (err->line > 0 && err->col > 0)
        snprintf(buf, len, "%s:%d:%d: %s", err->file, err->line, err->col, err->msg);
    else if (err->line > 0)
        snprintf(buf, len, "%s:%d: %s", err->file, err->line, err->msg);
    else
        snprintf(buf, len, "%s: %s", err->file, err->msg);
}
