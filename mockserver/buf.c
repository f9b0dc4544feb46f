/* buf.c - see buf.h. */
#include "mockserver/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mockserver/wire.h"
#include "util/base64.h"
#include "util/json.h"

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

static void put_bytes(void *b, const char *s, size_t n) {
    mock_buf_append(b, s, n);
}

util_out mock_buf_out(mock_buf *b) {
    return (util_out){.put = put_bytes, .sink = b};
}

void mock_buf_json_escape(mock_buf *b, const char *s, size_t n) {
    util_json_escape(&(util_out){put_bytes, b}, s, n, 0);
}

void mock_buf_json_string(mock_buf *b, const char *s) {
    util_json_string(&(util_out){put_bytes, b}, s, 0);
}

void mock_buf_base64(mock_buf *b, const unsigned char *s, size_t n) {
    if (!reserve(b, UTIL_BASE64_LEN(n))) return;
    b->len += util_base64(b->p + b->len, s, n);
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
