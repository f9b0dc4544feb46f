/*
 * yaml.h - a YAML document as a small tree that remembers where each node was.
 *
 * Policy files (LiteLLM's config.yaml, Spring Boot's application.yml,
 * Envoy's cluster and route YAML) are read with libyaml into maps,
 * sequences and scalars, each with its line and column, so an importer can
 * say where a key it does not model stands. Aliases are expanded (within
 * the node cap and the text cap); tags are ignored. Every growing thing is
 * capped: the file size, the nodes, the depth, the expanded text; reaching a
 * cap is an error like a syntax error. A map's keys are scalars (a complex
 * key is an error) and appear once (a duplicate key is an error naming both
 * lines), so every importer may take items[2i]->value as a string.
 */
#ifndef IMP_YAML_H
#define IMP_YAML_H

#include <stdbool.h>
#include <stddef.h>

#define IMP_YAML_BYTES_MAX ((size_t)4 << 20)
#define IMP_YAML_NODES_MAX 200000
#define IMP_YAML_DEPTH_MAX 64
/* The scalar text of a document, aliases expanded: 16 times the file's size, at least 1 MiB.
 * With the node cap this bounds the tree's memory; reaching it is an FB_ECAP error. */
#define IMP_YAML_TEXT_MAX(len) ((len) < ((size_t)1 << 16) ? ((size_t)1 << 20) : 16 * (len))
#define IMP_YAML_NOWHERE ((size_t)-1)

typedef enum imp_kind { IMP_SCALAR = 0, IMP_MAP, IMP_SEQ } imp_kind;

typedef struct imp_node {
    imp_kind kind;
    char *value;   /* SCALAR: the text */
    bool quoted;   /* SCALAR: written in quotes (a string, whatever it looks like) */
    int line, col; /* 1-based, where the node starts */
    /* characters from the text's start (libyaml's mark.index) to the node's first character and
     * just past its last (a collection: past its closing event); IMP_YAML_NOWHERE in an alias's
     * copy, which stands for text elsewhere */
    size_t start, end;
    /* MAP: keys and values interleaved (items[2i] a key scalar, items[2i+1] its value);
     * SEQ: the items */
    struct imp_node **items;
    size_t n;
} imp_node;

/* Where reading or importing failed: the file, a position (0 = unknown) and why. */
typedef struct imp_error {
    char file[256];
    int line, col;
    char msg[1024];
} imp_error;

/* Parse YAML text (one document); FB_OK, or FB_EPARSE / FB_ECAP with err filled. */
int imp_yaml_parse(const char *text, size_t len, const char *file, imp_node **out, imp_error *err);
/* Read and parse a file (at most IMP_YAML_BYTES_MAX); FB_EIO when it cannot be read. */
int imp_yaml_load(const char *file, imp_node **out, imp_error *err);
void imp_node_free(imp_node *n);

/* The value of `key` in a map, or NULL (also when n is not a map). */
const imp_node *imp_get(const imp_node *n, const char *key);
/* Format "file:line:col: msg" (or "file:line: msg" without a column, "file: msg") into buf. */
void imp_error_format(const imp_error *err, char *buf, size_t len);

#endif /* IMP_YAML_H */
