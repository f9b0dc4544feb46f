/*
 * json.h - the one JSON writer of report.json, events.jsonl, sweep.json and
 * the sweep's partial files.
 *
 * It writes straight to a FILE with fixed number formats, so the same values
 * always give the same bytes. Each object or array picks its layout when it
 * is opened, and the formats our files have grown are layouts of this one
 * writer:
 *
 *   REP_JSON_LINES    {                      an item a line, two spaces a level;
 *                       "a": 1,              an empty container is {} or []
 *                       "b": [1, 2]
 *                     }
 *   REP_JSON_INLINE   {"a": 1, "b": [1, 2]}
 *   REP_JSON_COMPACT  {"a":1,"b":[1,2]}      (events.jsonl)
 *
 * Every value function takes the member's key, or NULL inside an array.
 */
#ifndef REP_JSON_H
#define REP_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define REP_JSON_DEPTH_MAX 32

typedef enum rep_json_layout {
    REP_JSON_LINES = 0,
    REP_JSON_LINES_OPEN, /* as LINES, but the closing bracket always on its own line: [\n  ] */
    REP_JSON_INLINE,
    REP_JSON_COMPACT
} rep_json_layout;

typedef struct rep_json {
    FILE *f;
    int depth; /* containers open */
    int wrap;  /* >= 0: the next item starts a line at this column */
    struct {
        char close; /* '}' or ']' */
        rep_json_layout layout;
        bool first; /* no item yet */
    } level[REP_JSON_DEPTH_MAX];
} rep_json;

void rep_json_init(rep_json *w, FILE *f);

/* Open an object ('{') or array ('['); close the innermost one. */
void rep_json_open(rep_json *w, const char *key, char bracket, rep_json_layout layout);
void rep_json_close(rep_json *w);
/*
 * Inside an INLINE container: the next item starts a new line indented to
 * `column` ("..., \"pareto\": true,\n     \"metrics\": {").
 */
void rep_json_wrap(rep_json *w, int column);

/* The separator before an item and its key; what follows is the value. */
void rep_json_key(rep_json *w, const char *key);

void rep_json_u64(rep_json *w, const char *key, uint64_t v);
void rep_json_i64(rep_json *w, const char *key, int64_t v);
/* A number with fixed decimals ("%.6f"); null when not finite. */
void rep_json_fixed(rep_json *w, const char *key, double v, int decimals);
/* A number that reads back as the same double ("%.17g"); null when not finite. */
void rep_json_exact(rep_json *w, const char *key, double v);
void rep_json_bool(rep_json *w, const char *key, bool v);
/* A string; NULL writes null. */
void rep_json_str(rep_json *w, const char *key, const char *v);
void rep_json_null(rep_json *w, const char *key);
/* A value already written as JSON (e.g. by cJSON). */
void rep_json_raw(rep_json *w, const char *key, const char *json);

/* A JSON string literal, quotes included, on its own. */
void rep_json_string(FILE *f, const char *s);

#endif /* REP_JSON_H */
