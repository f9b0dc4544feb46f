/* json.c - the JSON writer; see json.h. */
#include "reports/json.h"

#include <inttypes.h>
#include <math.h>

#include "util/json.h"

void rep_json_init(rep_json *w, FILE *f) {
    w->f = f;
    w->depth = 0;
    w->wrap = -1;
}

static void newline(FILE *f, int column) {
    fputc('\n', f);
    for (int i = 0; i < column; i++) fputc(' ', f);
}

/* What goes before an item: a comma after the first, then the layout's space. */
static void separate(rep_json *w) {
    if (w->depth == 0) return; /* the document itself */
    bool first = w->level[w->depth - 1].first;
    w->level[w->depth - 1].first = false;
    if (!first) fputc(',', w->f);
    if (w->wrap >= 0) {
        newline(w->f, w->wrap);
        w->wrap = -1;
        return;
    }
    switch (w->level[w->depth - 1].layout) {
    case REP_JSON_LINES:
    case REP_JSON_LINES_OPEN:
        newline(w->f, 2 * w->depth);
        break;
    case REP_JSON_INLINE:
        if (!first) fputc(' ', w->f);
        break;
    case REP_JSON_COMPACT:
        break;
    }
}

void rep_json_key(rep_json *w, const char *key) {
    separate(w);
    if (key == NULL) return;
    rep_json_string(w->f, key);
    bool compact = w->depth > 0 && w->level[w->depth - 1].layout == REP_JSON_COMPACT;
    fputs(compact ? ":" : ": ", w->f);
}

void rep_json_open(rep_json *w, const char *key, char bracket, rep_json_layout layout) {
    rep_json_key(w, key);
    fputc(bracket, w->f);
    if (w->depth == REP_JSON_DEPTH_MAX) return; /* deeper than any file we write */
    w->level[w->depth].close = bracket == '[' ? ']' : '}';
    w->level[w->depth].layout = layout;
    w->level[w->depth].first = true;
    w->depth++;
}

void rep_json_close(rep_json *w) {
    if (w->depth == 0) return;
    w->depth--;
    rep_json_layout layout = w->level[w->depth].layout;
    if (layout == REP_JSON_LINES_OPEN || (layout == REP_JSON_LINES && !w->level[w->depth].first))
        newline(w->f, 2 * w->depth);
    fputc(w->level[w->depth].close, w->f);
}

void rep_json_wrap(rep_json *w, int column) {
    w->wrap = column;
}

void rep_json_u64(rep_json *w, const char *key, uint64_t v) {
    rep_json_key(w, key);
    fprintf(w->f, "%" PRIu64, v);
}

void rep_json_i64(rep_json *w, const char *key, int64_t v) {
    rep_json_key(w, key);
    fprintf(w->f, "%" PRId64, v);
}

void rep_json_fixed(rep_json *w, const char *key, double v, int decimals) {
    rep_json_key(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.*f", decimals, v);
    else
        fputs("null", w->f);
}

void rep_json_exact(rep_json *w, const char *key, double v) {
    rep_json_key(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.17g", v);
    else
        fputs("null", w->f);
}

void rep_json_bool(rep_json *w, const char *key, bool v) {
    rep_json_key(w, key);
    fputs(v ? "true" : "false", w->f);
}

void rep_json_str(rep_json *w, const char *key, const char *v) {
    rep_json_key(w, key);
    if (v)
        rep_json_string(w->f, v);
    else
        fputs("null", w->f);
}

void rep_json_null(rep_json *w, const char *key) {
    rep_json_raw(w, key, "null");
}

void rep_json_raw(rep_json *w, const char *key, const char *json) {
    rep_json_key(w, key);
    fputs(json, w->f);
}

void rep_json_string(FILE *f, const char *s) {
    util_out o = util_out_file(f);
    util_json_string(&o, s, UTIL_JSON_SHORT_NEWLINE);
}
