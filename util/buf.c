/* buf.c - see buf.h. */
#include "util/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t cap_of(const util_buf *b) {
    return b->cap ? b->cap : UTIL_BUF_CAP_DEFAULT;
}

/* util_buf_reserve, inlined into the appends' slow paths. */
static inline bool reserve(util_buf *b, size_t extra) {
    if (b->err) return false;
    size_t cap = cap_of(b);
    if (b->len > cap || extra > cap - b->len) {
        b->err = UTIL_BUF_FULL;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->size) return true;
    size_t size = b->size ? b->size : 256;
    while (size < need) size = size > SIZE_MAX / 2 ? need : size * 2;
    if (size - 1 > cap) size = cap + 1; /* so that the inline append never passes the cap */
    char *p = realloc(b->p, size);
    if (p == NULL) {
        b->err = UTIL_BUF_NOMEM;
        return false;
    }
    b->p = p;
    b->size = size;
    return true;
}

bool util_buf_reserve(util_buf *b, size_t extra) {
    return reserve(b, extra);
}

/* Out of line, also in this file: util_buf_put's fast path then pushes no registers. */
__attribute__((noinline)) void util_buf_append_grow(util_buf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void util_buf_printf(util_buf *b, const char *fmt, ...) {
    if (b->err) return;
    /* Format into the room there is; only a text that does not fit is formatted twice. */
    size_t room = b->size > b->len ? b->size - b->len : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= room && reserve(b, (size_t)n)) {
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    } else if (!b->err && (size_t)n > cap_of(b) - b->len) {
        b->err = UTIL_BUF_FULL;
    }
    if (b->err) {
        if (room) b->p[b->len] = '\0'; /* what was formatted into the room is not appended */
        return;
    }
    b->len += (size_t)n;
}

void util_buf_put(void *b, const char *s, size_t n) {
    util_buf_append(b, s, n);
}

char *util_buf_take(util_buf *b, size_t *len) {
    if (!reserve(b, 0)) {
        util_buf_free(b);
        return NULL;
    }
    char *p = b->p;
    p[b->len] = '\0'; /* a buffer that never held a byte */
    *len = b->len;
    *b = (util_buf){.cap = b->cap};
    return p;
}

void util_buf_free(util_buf *b) {
    free(b->p);
    *b = (util_buf){.cap = b->cap};
}
