/* buf.c - see buf.h. */
#include "mockserver/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mockserver/wire.h"

void mock_buf_free(mock_buf *b) {
    size_t limit = b->limit;
    free(b->p);
    memset(b, 0, sizeof *b);
    b->limit = limit;
}

static bool reserve(mock_buf *b, size_t extra) {
    if (b->oom) return false;
    if (b->limit > 0 && b->len + extra > b->limit) {
        b->oom = true;
        return false;
    }
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void mock_buf_append_grow(mock_buf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void mock_buf_printf(mock_buf *b, const char *fmt, ...) {
    if (b->oom) return;
    /* Format into the room there is; only a text that does not fit is formatted twice. */
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= room) {
        if (!reserve(b, (size_t)n)) return;
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (b->limit > 0 && b->len + (size_t)n > b->limit) {
        b->oom = true;
        return;
    }
    b->len += (size_t)n;
}

void mock_buf_int(mock_buf *b, int64_t v) {
    char d[24];
    size_t n = v < 0 ? 1 : 0;
    d[0] = '-';
    n += mock_wire_decimal(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, d + n);
    mock_buf_append(b, d, n);
}

bool mock_buf_reserve(mock_buf *b, size_t extra) {
    return reserve(b, extra);
}

/* Whether any of the eight bytes is '"', '\\' or below 0x20: the has-zero-byte and has-less
 * tests of Sean Anderson's Bit Twiddling Hacks (graphics.stanford.edu/~seander/bithacks.html,
 * "Determine if a word has a byte less than n"), exact for "any"; bytes from 0x80 up never
 * match. */
static bool needs_escape8(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs;
}

void mock_buf_json_escape(mock_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* bytes that need no escape, appended together */
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
        mock_buf_append(b, s + i - run, run);
        run = 0;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            mock_buf_append(b, e, 2);
        } else {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            mock_buf_append(b, e, 6);
        }
    }
    mock_buf_append(b, s + n - run, run);
}

void mock_buf_json_string(mock_buf *b, const char *s) {
    if (s == NULL) s = "";
    mock_buf_append(b, "\"", 1);
    mock_buf_json_escape(b, s, strlen(s));
    mock_buf_append(b, "\"", 1);
}

void mock_buf_base64(mock_buf *b, const unsigned char *s, size_t n) {
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!reserve(b, (n + 2) / 3 * 4)) return;
    char *o = b->p + b->len;
    for (size_t i = 0; i < n; i += 3) {
        size_t left = n - i;
        uint32_t w = (uint32_t)s[i] << 16;
        if (left > 1) w |= (uint32_t)s[i + 1] << 8;
        if (left > 2) w |= s[i + 2];
        *o++ = alphabet[(w >> 18) & 63];
        *o++ = alphabet[(w >> 12) & 63];
        *o++ = left > 1 ? alphabet[(w >> 6) & 63] : '=';
        *o++ = left > 2 ? alphabet[w & 63] : '=';
    }
    b->len = (size_t)(o - b->p);
    b->p[b->len] = '\0';
}

char *mock_buf_take(mock_buf *b, size_t *len) {
    if (b->oom || !reserve(b, 0)) {
        mock_buf_free(b);
        return NULL;
    }
    char *p = b->p;
    *len = b->len;
    size_t limit = b->limit;
    memset(b, 0, sizeof *b);
    b->limit = limit;
    return p;
}
