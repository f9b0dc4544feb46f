/* json.c - see json.h. */
#include "util/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whether any of the eight bytes is '"', '\\' or below 0x20: the has-zero-byte and has-less
 * tests of Sean Anderson's Bit Twiddling Hacks (graphics.stanford.edu/~seander/bithacks.html,
 * "Determine if a word has a byte less than n"), exact for "any"; bytes from 0x80 up never
 * match. */
static bool needs_escape8(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs;
}

void util_json_escape(const util_out *o, const char *s, size_t n, unsigned flags) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* bytes that need no escape, put together */
    for (size_t i = 0; i < n; i++) {
        uint64_t w; /* eight plain bytes at a time: most text has nothing to escape */
        while (i + 8 <= n && (memcpy(&w, s + i, 8), !needs_escape8(w))) {
            run += 8;
            i += 8;
        }
        if (i >= n) break;
        const unsigned char c = (unsigned char)s[i];
        if (c != '"' && c != '\\' && c >= 0x20) {
            run++;
            continue;
        }
        util_put(o, s + i - run, run);
        run = 0;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            util_put(o, e, 2);
        } else if (c == '\n' && (flags & UTIL_JSON_SHORT_NEWLINE)) {
            util_put(o, "\\n", 2);
        } else {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            util_put(o, e, 6);
        }
    }
    util_put(o, s + n - run, run);
}

void util_json_string(const util_out *o, const char *s, unsigned flags) {
    if (s == NULL) s = "";
    util_put(o, "\"", 1);
    util_json_escape(o, s, strlen(s), flags);
    util_put(o, "\"", 1);
}

void util_json_spaced(const util_out *o, const char *pretty) {
    for (const char *c = pretty; *c; c++) {
        if (*c == '\t')
            util_put(o, "  ", c > pretty && c[-1] == ':' ? 1 : 2);
        else
            util_put(o, c, 1);
    }
}

/* ---- the writer ---- */

void util_json_init(util_json *w, util_out out, unsigned flags) {
    w->out = out;
    w->flags = flags;
    w->depth = 0;
    w->wrap = -1;
}

static void put(util_json *w, const char *s, size_t n) {
    util_put(&w->out, s, n);
}

static void newline(util_json *w, int column) {
    static const char line[] = "\n                                                                ";
    size_t n = 1 + (size_t)column, k = n < sizeof line - 1 ? n : sizeof line - 1;
    put(w, line, k);
    for (n -= k; n > 0; n -= k) { /* deeper than the spaces above: more of them */
        k = n < sizeof line - 2 ? n : sizeof line - 2;
        put(w, line + 1, k);
    }
}

/* What goes before an item: a comma after the first, then the layout's space. */
static void separate(util_json *w) {
    if (w->depth == 0) return; /* the document itself */
    bool first = w->level[w->depth - 1].first;
    w->level[w->depth - 1].first = false;
    if (!first) put(w, ",", 1);
    if (w->wrap >= 0) {
        newline(w, w->wrap);
        w->wrap = -1;
        return;
    }
    switch (w->level[w->depth - 1].layout) {
    case UTIL_JSON_LINES:
    case UTIL_JSON_LINES_OPEN:
        newline(w, 2 * w->depth);
        break;
    case UTIL_JSON_INLINE:
        if (!first) put(w, " ", 1);
        break;
    case UTIL_JSON_COMPACT:
        break;
    }
}

/* Whether none of n bytes needs an escape (util_json_escape would put them as they are). */
static bool plain(const char *s, size_t n) {
    uint64_t x;
    if (n < 8) { /* the short keys and values of every line: one test of eight bytes */
        const uint64_t fill = UINT64_C(0x6161616161616161); /* 'a': no escape */
        if (n >= 4) { /* the first four and the last four, overlapping */
            uint32_t lo, hi;
            memcpy(&lo, s, 4);
            memcpy(&hi, s + n - 4, 4);
            x = lo | (uint64_t)hi << 32;
        } else if (n > 0) {
            const unsigned char *u = (const unsigned char *)s;
            x = (fill << 24) | u[0] | (uint64_t)u[n / 2] << 8 | (uint64_t)u[n - 1] << 16;
        } else {
            return true;
        }
        return !needs_escape8(x);
    }
    for (size_t i = 0; i + 8 < n; i += 8)
        if (memcpy(&x, s + i, 8), needs_escape8(x)) return false;
    return memcpy(&x, s + n - 8, 8), !needs_escape8(x); /* the last eight, overlapping */
}

size_t util_json_plain_string(char *t, const char *s, size_t max) {
    size_t n = strlen(s);
    if (n > max || !plain(s, n)) return 0;
    t[0] = '"';
    memcpy(t + 1, s, n);
    t[n + 1] = '"';
    return n + 2;
}

/* The most bytes of a key, and of a string value, that the one-put path below takes. */
#define SHORT_MAX 120

/*
 * The common case in one put instead of five: the separator and key of the next item, in a
 * compact or inline container with no line to break and a key (or none, in an array) of at
 * most SHORT_MAX bytes that needs no escape, written into t (SHORT_MAX + 5 bytes at least).
 * Its length in *len; false when the item takes the general way (util_json_key), and then
 * nothing changed.
 */
static bool short_key(util_json *w, const char *key, char *t, size_t *len) {
    if (w->depth == 0 || w->wrap >= 0) return false;
    util_json_layout layout = w->level[w->depth - 1].layout;
    if (layout != UTIL_JSON_COMPACT && layout != UTIL_JSON_INLINE) return false;
    size_t n = key ? strlen(key) : 0, k = 0;
    if (n > SHORT_MAX || (key && !plain(key, n))) return false;
    bool compact = layout == UTIL_JSON_COMPACT;
    if (!w->level[w->depth - 1].first) {
        t[k++] = ',';
        if (!compact) t[k++] = ' ';
    }
    w->level[w->depth - 1].first = false;
    if (key) {
        t[k++] = '"';
        memcpy(t + k, key, n);
        k += n;
        t[k++] = '"';
        t[k++] = ':';
        if (!compact) t[k++] = ' ';
    }
    *len = k;
    return true;
}

/* The separator and key as util_json_key puts them, into t (SHORT_KEY_ROOM bytes) when
 * short_key takes them, else put at once: the bytes in t, which the caller puts. */
#define SHORT_KEY_ROOM (SHORT_MAX + 8)

static size_t key_into(util_json *w, const char *key, char *t) {
    size_t k;
    if (short_key(w, key, t, &k)) return k;
    util_json_key(w, key);
    return 0;
}

void util_json_key(util_json *w, const char *key) {
    char t[SHORT_KEY_ROOM];
    size_t k;
    if (short_key(w, key, t, &k)) {
        put(w, t, k);
        return;
    }
    separate(w);
    if (key == NULL) return;
    util_json_string(&w->out, key, w->flags);
    bool compact = w->depth > 0 && w->level[w->depth - 1].layout == UTIL_JSON_COMPACT;
    put(w, ": ", compact ? 1 : 2);
}

void util_json_open(util_json *w, const char *key, char bracket, util_json_layout layout) {
    util_json_key(w, key);
    put(w, &bracket, 1);
    if (w->depth == UTIL_JSON_DEPTH_MAX) return; /* deeper than any file we write */
    w->level[w->depth].close = bracket == '[' ? ']' : '}';
    w->level[w->depth].layout = layout;
    w->level[w->depth].first = true;
    w->depth++;
}

void util_json_close(util_json *w) {
    if (w->depth == 0) return;
    w->depth--;
    util_json_layout layout = w->level[w->depth].layout;
    if (layout == UTIL_JSON_LINES_OPEN || (layout == UTIL_JSON_LINES && !w->level[w->depth].first))
        newline(w, 2 * w->depth);
    put(w, &w->level[w->depth].close, 1);
}

void util_json_wrap(util_json *w, int column) {
    w->wrap = column;
}

void util_json_u64(util_json *w, const char *key, uint64_t v) {
    char t[SHORT_KEY_ROOM + 24];
    size_t k = key_into(w, key, t);
    put(w, t, k + util_decimal(t + k, v, false));
}

void util_json_i64(util_json *w, const char *key, int64_t v) {
    char t[SHORT_KEY_ROOM + 24];
    size_t k = key_into(w, key, t);
    put(w, t, k + util_decimal(t + k, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0));
}

/* v with `precision` decimals ("%.*f") or significant digits ("%.*g"); null when not finite. */
static void number(util_json *w, const char *key, double v, bool is_fixed, int precision) {
    char t[SHORT_KEY_ROOM + UTIL_FIXED_MAX];
    size_t k = key_into(w, key, t), n;
    if (!isfinite(v)) {
        memcpy(t + k, "null", 4);
        put(w, t, k + 4);
    } else if (is_fixed && (n = util_fixed(t + k, v, precision)) > 0) {
        put(w, t, k + n);
    } else {
        put(w, t, k);
        util_printf(&w->out, is_fixed ? "%.*f" : "%.*g", precision, v);
    }
}

void util_json_fixed(util_json *w, const char *key, double v, int decimals) {
    number(w, key, v, true, decimals);
}

void util_json_digits(util_json *w, const char *key, double v, int digits) {
    number(w, key, v, false, digits);
}

void util_json_exact(util_json *w, const char *key, double v) {
    util_json_digits(w, key, v, 17);
}

void util_json_bool(util_json *w, const char *key, bool v) {
    util_json_key(w, key);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void util_json_str(util_json *w, const char *key, const char *v) {
    char t[SHORT_KEY_ROOM + SHORT_MAX + 2];
    size_t k = key_into(w, key, t), n;
    if (v && (n = util_json_plain_string(t + k, v, SHORT_MAX)) > 0) { /* one put: key, value */
        put(w, t, k + n);
        return;
    }
    put(w, t, k);
    if (v)
        util_json_string(&w->out, v, w->flags);
    else
        put(w, "null", 4);
}

void util_json_null(util_json *w, const char *key) {
    util_json_raw(w, key, "null");
}

void util_json_raw(util_json *w, const char *key, const char *json) {
    util_json_key(w, key);
    util_json_text(w, json);
}

void util_json_text(util_json *w, const char *s) {
    put(w, s, strlen(s));
}
