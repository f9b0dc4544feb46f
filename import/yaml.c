/* yaml.c - YAML to a located tree, with libyaml's event parser; see yaml.h. */
#include "import/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/fb.h"

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
    if (src->value && (n->value = strdup(src->value)) == NULL) goto fail;
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

/* A finished node goes into the open container, or becomes the document. */
static int place(builder *b, imp_node *n, const yaml_char_t *anchor_name) {
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

static int on_close(builder *b, const yaml_event_t *ev) {
    imp_node *n = b->stack[--b->depth];
    n->end = ev->end_mark.index;
    return place(b, n, NULL);
}

static int on_alias(builder *b, const yaml_event_t *ev) {
    for (size_t i = b->anchor_count; i-- > 0;) {
        if (strcmp(b->anchors[i].name, (const char *)ev->data.alias.anchor) != 0) continue;
        imp_node *n = copy(b, b->anchors[i].node);
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
    builder b = {.err = err};
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
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        snprintf(err->msg, sizeof err->msg, "cannot read: %s", strerror(errno));
        return FB_EIO;
    }
    char *text = malloc(IMP_YAML_BYTES_MAX + 1);
    size_t len = text ? fread(text, 1, IMP_YAML_BYTES_MAX + 1, f) : 0;
    bool bad = text == NULL || ferror(f);
    fclose(f);
    int rc;
    if (bad) {
        snprintf(err->msg, sizeof err->msg, "cannot read the file");
        rc = FB_EIO;
    } else {
        rc = imp_yaml_parse(text, len, file, out, err);
    }
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
