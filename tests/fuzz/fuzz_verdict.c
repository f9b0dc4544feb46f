/*
 * fuzz_verdict.c - a libFuzzer target for the reader of a saved attempt log (`fusebox verdict
 * LOG`, mockserver/verdict_log.c) and the strict JSON check before it (scn_json_check: the
 * cap on values per byte, duplicate keys, text after the document, invalid UTF-8).
 *
 * Input: the log's JSON text. Whatever the bytes, the reader returns entries or an error
 * with a message, without a crash, a leak or undefined behaviour; a text with a duplicate
 * key or text after the document is never read as a log.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/fb.h"
#include "mockserver/verdict.h"
#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    mock_attempt *e = NULL;
    size_t n = 0;
    uint64_t dropped = 0;
    double scale = 1;
    mock_parse_error err;
    memset(&err, 0, sizeof err);
    int rc = mock_verdict_read_log(text, size, 1000, &e, &n, &dropped, &scale, &err);
    if (rc != FB_OK && (err.msg[0] == '\0' || e != NULL)) abort(); /* an error says why */
    if (rc == FB_OK) {
        sim_error se;
        memset(&se, 0, sizeof se);
        if (scn_json_check(text, size, &se) != FB_OK) abort(); /* the reader checked it */
        if (n > 1000 || !(scale > 0)) abort();
    }
    free(e);
    return 0;
}
