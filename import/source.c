/* source.c - a log file to a log: size cap, format, documents one at a time; see source.h. */
#include "import/source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "import/litellm.h"
#include "import/otlp.h"
#include "scenario/scenario.h"
#include "util/file.h"

const char *imp_format_name(imp_format f) {
    return f == IMP_FORMAT_OTLP ? "otlp" : f == IMP_FORMAT_LITELLM ? "litellm" : "auto";
}

typedef struct reader {
    imp_log *log;
    imp_otlp *otlp;
    imp_litellm *ll;
    int records; /* LiteLLM records so far, for records without an id */
} reader;

static int detect(reader *r, const cJSON *doc, int line, imp_error *err) {
    const cJSON *probe = cJSON_IsArray(doc) ? doc->child : doc;
    if (r->log->format == IMP_FORMAT_AUTO) {
        if (imp_otlp_looks(probe))
            r->log->format = IMP_FORMAT_OTLP;
        else if (imp_litellm_looks(probe))
            r->log->format = IMP_FORMAT_LITELLM;
        else
            return imp_fail(err, FB_EINVAL, line, "%s",
                            "neither OTLP/JSON traces (no \"resourceSpans\") nor LiteLLM "
                            "StandardLoggingPayload records (no \"startTime\" with \"trace_id\"): "
                            "name the format with --format otlp|litellm");
    }
    if (r->log->format == IMP_FORMAT_OTLP)
        r->otlp = imp_otlp_begin(r->log);
    else
        r->ll = imp_litellm_begin(r->log);
    return r->otlp || r->ll ? FB_OK : imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
}

/* One parsed document. */
static int feed(reader *r, const cJSON *doc, int line, imp_error *err) {
    int rc = r->otlp || r->ll ? FB_OK : detect(r, doc, line, err);
    if (rc != FB_OK) return rc;
    if (r->otlp) return imp_otlp_add(r->otlp, doc, line, err);
    if (!cJSON_IsArray(doc)) return imp_litellm_add(r->ll, doc, line, r->records++, err);
    for (const cJSON *e = doc->child; e && rc == FB_OK; e = e->next)
        rc = imp_litellm_add(r->ll, e, line, r->records++, err);
    return rc;
}

/* Line and column of byte `at` of text, 1-based. */
static void position(const char *text, size_t at, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* Does text[from, to) open more objects and arrays than it closes (strings skipped)? */
static bool unclosed(const char *text, size_t from, size_t to) {
    long depth = 0;
    bool str = false;
    for (size_t i = from; i < to; i++) {
        char c = text[i];
        if (str && c == '\\')
            i++;
        else if (c == '"')
            str = !str;
        else if (!str && (c == '{' || c == '['))
            depth++;
        else if (!str && (c == '}' || c == ']'))
            depth--;
    }
    return depth > 0 || str;
}

/* Parse text[from, to): a document, or NULL with the error's position in err and *rc (FB_EPARSE;
 * FB_ECAP past the values' cap; FB_ENOMEM when the tree did not fit in memory). */
static cJSON *parse_at(const char *text, size_t from, size_t to, imp_error *err, int *rc) {
    const char *end = NULL;
    *rc = FB_EPARSE;
    size_t values = scn_json_values(text + from, to - from);
    if (values > SCN_JSON_VALUES_MAX(to - from)) {
        position(text, from, &err->line, &err->col);
        snprintf(err->msg, sizeof err->msg,
                 "about %zu JSON values in %zu bytes, more than the %zu a document this size "
                 "may hold (one per 4 bytes, plus 65536: the cap that bounds the import's memory)",
                 values, to - from, (size_t)SCN_JSON_VALUES_MAX(to - from));
        err->col = 0;
        *rc = FB_ECAP;
        return NULL;
    }
    errno = 0; /* malloc sets ENOMEM when it fails (cJSON then gives up where it was) */
    cJSON *doc = cJSON_ParseWithLengthOpts(text + from, to - from, &end, 0);
    if (doc == NULL && errno == ENOMEM) {
        position(text, from, &err->line, &err->col);
        err->col = 0;
        snprintf(err->msg, sizeof err->msg,
                 "out of memory building the JSON tree of a document of %zu bytes (about %zu "
                 "values, up to %zu MiB at %zu bytes a value): give the import more memory, or "
                 "cut the log (JSON lines are read a line at a time)",
                 to - from, values, values * IMP_JSON_VALUE_BYTES >> 20,
                 (size_t)IMP_JSON_VALUE_BYTES);
        *rc = FB_ENOMEM;
        return NULL;
    }
    size_t stop = end ? (size_t)(end - text) : to;
    if (doc) {
        while (stop < to && strchr(" \t\r\n", text[stop])) stop++;
        if (stop == to) return doc;
        cJSON_Delete(doc);
    } else { /* on failure, cJSON sets end to where it stopped (no global error state) */
        stop = end && end >= text + from && end <= text + to ? (size_t)(end - text) : to;
    }
    position(text, stop, &err->line, &err->col);
    snprintf(err->msg, sizeof err->msg, "%s",
             stop >= to || unclosed(text, from, to)
                 ? "invalid JSON: the document ends before it closes (a truncated file?)"
                 : "invalid JSON");
    return NULL;
}

static size_t skip_space(const char *text, size_t i, size_t len) {
    while (i < len && strchr(" \t\r\n", text[i])) i++;
    return i;
}

/* JSON lines from byte i, line `line` on: each non-empty line a document. One pass: the line number
 * is counted as the lines go (position() from byte 0 for every line made a 20,000-line file
 * quadratic), and only an error's column is looked for, from the start of its line. */
static int read_lines(reader *r, const char *text, size_t len, size_t i, int line, imp_error *err) {
    int rc = FB_OK;
    for (; rc == FB_OK && i < len; line++) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (skip_space(text, i, end) < end) {
            cJSON *doc = parse_at(text + i, 0, end - i, err, &rc);
            if (doc == NULL) err->line += line - 1; /* parse_at counted from this line */
            if (doc) rc = feed(r, doc, line, err);
            cJSON_Delete(doc);
        }
        i = end + 1;
    }
    return rc;
}

static int read_all(reader *r, const char *text, size_t len, imp_error *err) {
    size_t start = skip_space(text, 0, len);
    if (start == len) return imp_fail(err, FB_EINVAL, 0, "%s", "the file is empty");
    const char *nl = memchr(text + start, '\n', len - start);
    size_t first_end = nl ? (size_t)(nl - text) : len;
    /* the first line a whole document: JSON lines, that one read as it is (a file of one
       document on one line is parsed once); else one document over many lines */
    imp_error scratch = *err;
    int rc, line = 1, col = 1;
    cJSON *first = parse_at(text, start, first_end, &scratch, &rc);
    if (first) {
        position(text, start, &line, &col); /* after the blank lines before it */
        rc = feed(r, first, line, err);
        cJSON_Delete(first);
        return rc == FB_OK ? read_lines(r, text, len, first_end + 1, line + 1, err) : rc;
    }
    if (rc == FB_ENOMEM) { /* the first line did not fit: the document would not either */
        *err = scratch;
        return rc;
    }
    cJSON *doc = parse_at(text, start, len, err, &rc);
    if (doc == NULL) return rc;
    rc = feed(r, doc, 0, err);
    cJSON_Delete(doc);
    return rc;
}

int imp_read_text(const char *text, size_t len, const char *file, const imp_read_opts *o,
                  imp_log **out, imp_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    *out = NULL;
    reader r = {imp_log_new(file, o->format, o->max_records), NULL, NULL, 0};
    if (r.log == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    int rc = read_all(&r, text, len, err);
    if (rc == FB_OK && r.otlp) rc = imp_otlp_end(r.otlp, err);
    if (rc == FB_OK && r.ll) rc = imp_litellm_end(r.ll, err);
    if (rc == FB_OK) rc = imp_log_finish(r.log, err);
    imp_otlp_free(r.otlp);
    imp_litellm_free(r.ll);
    if (rc != FB_OK) {
        imp_log_free(r.log);
        return rc;
    }
    *out = r.log;
    return FB_OK;
}

int imp_read_file(const char *file, const imp_read_opts *o, imp_log **out, imp_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file);
    size_t cap = o->max_bytes ? o->max_bytes : IMP_BYTES_MAX;
    FILE *f = fopen(file, "rb");
    if (f == NULL) return imp_fail(err, FB_EIO, 0, "cannot open: %s", strerror(errno));
    /* a regular file's size is known: past the cap at once, and read no more than it (a file
       that grows meanwhile is an error); a pipe, a FIFO or a terminal (/dev/stdin) says 0:
       read it to the cap */
    struct stat st;
    bool sized = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (sized && (uint64_t)st.st_size > cap) {
        fclose(f);
        return imp_fail(err, FB_ECAP, 0,
                        "%.1f MiB, more than the cap on the file's size (%zu bytes): raise it "
                        "with --max-bytes, or cut the log",
                        (double)st.st_size / 1048576.0, cap);
    }
    size_t want = sized && (uint64_t)st.st_size < cap ? (size_t)st.st_size : cap;
    size_t n = 0;
    char *buf = util_read_stream(f, want, &n);
    int e = errno;
    fclose(f);
    if (buf == NULL && e == ENOMEM) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    if (buf == NULL && e != EFBIG) return imp_fail(err, FB_EIO, 0, "%s", "read error");
    if (buf == NULL)
        return want == cap ? imp_fail(err, FB_ECAP, 0, "more than %zu bytes (--max-bytes)", cap)
                           : imp_fail(err, FB_EIO, 0, "%s", "the file grew while it was read");
    int rc = imp_read_text(buf, n, file, o, out, err);
    free(buf);
    return rc;
}
