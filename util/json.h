/*
 * json.h - the one JSON writer of the project, and its string escapes.
 *
 * The writer (util_json_*) writes report.json, events.jsonl, sweep.json,
 * the sweep's partial files, tune.json, the live driver's OTLP spans and the mock's
 * control answers (its attempt log, counters, verdict) onto a util_out, with
 * fixed number formats, so the same values always give the same bytes. Each
 * object or array picks its layout when it is opened, and the formats our
 * files have grown are layouts of this one writer:
 *
 *   UTIL_JSON_LINES    {                      an item a line, two spaces a level;
 *                        "a": 1,              an empty container is {} or []
 *                        "b": [1, 2]
 *                      }
 *   UTIL_JSON_INLINE   {"a": 1, "b": [1, 2]}
 *   UTIL_JSON_COMPACT  {"a":1,"b":[1,2]}      (events.jsonl, OTLP, the mock)
 *
 * Every value function takes the member's key, or NULL inside an array.
 *
 * The escapes alone (util_json_escape, util_json_string) are also what the
 * mock's answer bodies and the live driver's requests use: those are templates
 * tuned per answer (docs/architecture.md, "Where JSON is written").
 */
#ifndef UTIL_JSON_H
#define UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/out.h"

/* '\n' as "\\n" (report.json, events.jsonl, sweep.json); without it "\\u000a". */
#define UTIL_JSON_SHORT_NEWLINE 1u

/*
 * n bytes of s as the inside of a JSON string literal onto o: '"' and '\\'
 * backslashed, the bytes below 0x20 as \u00XX (or "\\n", see above), every
 * other byte as it is (UTF-8 passes through).
 */
void util_json_escape(const util_out *o, const char *s, size_t n, unsigned flags);
/* s (NUL-terminated; NULL is "") as a JSON string literal, quotes included. */
void util_json_string(const util_out *o, const char *s, unsigned flags);
/*
 * s as a JSON string literal into t (max + 2 bytes at least) when it is at most max bytes and
 * needs no escape: its length; 0 otherwise (then nothing is said of t).
 */
size_t util_json_plain_string(char *t, const char *s, size_t max);

/*
 * cJSON_Print's text with two-space indents: a tab that follows a colon as one
 * space, every other tab as two (strings printed by cJSON hold no raw tab).
 */
void util_json_spaced(const util_out *o, const char *pretty);

/* ---- the writer ---- */

#define UTIL_JSON_DEPTH_MAX 32

typedef enum util_json_layout {
    UTIL_JSON_LINES = 0,
    UTIL_JSON_LINES_OPEN, /* as LINES, but the closing bracket always on its own line: [\n  ] */
    UTIL_JSON_INLINE,
    UTIL_JSON_COMPACT
} util_json_layout;

typedef struct util_json {
    util_out out;
    unsigned flags; /* the strings' escapes: UTIL_JSON_SHORT_NEWLINE or 0 */
    int depth;      /* containers open */
    int wrap;       /* >= 0: the next item starts a line at this column */
    struct {
        char close; /* '}' or ']' */
        util_json_layout layout;
        bool first; /* no item yet */
    } level[UTIL_JSON_DEPTH_MAX];
} util_json;

/* A writer onto out; flags are the strings' escapes (see util_json_escape). */
void util_json_init(util_json *w, util_out out, unsigned flags);

/* Open an object ('{') or array ('['); close the innermost one. */
void util_json_open(util_json *w, const char *key, char bracket, util_json_layout layout);
void util_json_close(util_json *w);
/*
 * The next item starts a new line indented to `column`, whatever the layout
 * ("..., \"pareto\": true,\n     \"metrics\": {"; OTLP's span a line: column 0).
 */
void util_json_wrap(util_json *w, int column);

/* The separator before an item and its key; what follows is the value. */
void util_json_key(util_json *w, const char *key);

void util_json_u64(util_json *w, const char *key, uint64_t v);
void util_json_i64(util_json *w, const char *key, int64_t v);
/* A number with fixed decimals ("%.6f"); null when not finite. */
void util_json_fixed(util_json *w, const char *key, double v, int decimals);
/* A number to `digits` significant digits ("%.15g"); null when not finite. */
void util_json_digits(util_json *w, const char *key, double v, int digits);
/* A number that reads back as the same double ("%.17g"); null when not finite. */
void util_json_exact(util_json *w, const char *key, double v);
void util_json_bool(util_json *w, const char *key, bool v);
/* A string; NULL writes null. */
void util_json_str(util_json *w, const char *key, const char *v);
void util_json_null(util_json *w, const char *key);
/* A value already written as JSON (e.g. by cJSON). */
void util_json_raw(util_json *w, const char *key, const char *json);
/* Bytes between items, no separator ("\n" before OTLP's closing brackets). */
void util_json_text(util_json *w, const char *s);

#endif /* UTIL_JSON_H */
