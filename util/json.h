/*
 * json.h - JSON string escapes, the one escaper of every JSON the project
 * writes (reports/json.c's writer, the mock's bodies and events, the live
 * driver's requests and its OTLP spans).
 */
#ifndef UTIL_JSON_H
#define UTIL_JSON_H

#include <stddef.h>

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
 * cJSON_Print's text with two-space indents: a tab that follows a colon as one
 * space, every other tab as two (strings printed by cJSON hold no raw tab).
 */
void util_json_spaced(const util_out *o, const char *pretty);

#endif /* UTIL_JSON_H */
