/*
 * buf.h - a growable byte buffer, the mock's one way to build bodies and events.
 *
 * The answers' bodies are templates appended here, not util_json's (util/json.h, which writes the
 * control answers): the writer costs over a tenth more instructions per answer
 * (docs/architecture.md, "Where JSON is written").
 *
 * Appends never fail loudly: on allocation failure (or past the buffer's
 * limit) `oom` is set and further appends do nothing, so a caller checks
 * once at the end. A limit of 0 means none.
 */
#ifndef MOCK_BUF_H
#define MOCK_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/out.h"

typedef struct mock_buf {
    char *p;
    size_t len;
    size_t cap;
    size_t limit; /* 0 = no limit; a larger length sets oom */
    bool oom;
} mock_buf;

void mock_buf_free(mock_buf *b);
/* mock_buf_append when the bytes do not fit the room there is: growth, limit and oom. */
void mock_buf_append_grow(mock_buf *b, const char *s, size_t n);

/* Inline when the bytes fit (every answer makes dozens of appends, and a literal's strlen
 * then folds away); the same result as mock_buf_append_grow. */
static inline void mock_buf_append(mock_buf *b, const char *s, size_t n) {
    if (!b->oom && b->len + n + 1 <= b->cap && (b->limit == 0 || b->len + n <= b->limit)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
        return;
    }
    mock_buf_append_grow(b, s, n);
}

static inline void mock_buf_puts(mock_buf *b, const char *s) {
    mock_buf_append(b, s, strlen(s));
}

void mock_buf_printf(mock_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append v in decimal (as printf's %lld; every body has a few, formatted without stdio). */
void mock_buf_int(mock_buf *b, int64_t v);
/* Room for `extra` more bytes now (fewer reallocations); false on oom or past the limit. */
bool mock_buf_reserve(mock_buf *b, size_t extra);
/* Append s as a JSON string literal, quotes included. */
void mock_buf_json_string(mock_buf *b, const char *s);
/* The same for n bytes that need not be NUL-terminated, without the quotes. */
void mock_buf_json_escape(mock_buf *b, const char *s, size_t n);
/* Append n bytes as base64 (RFC 4648, padded, no line breaks). */
void mock_buf_base64(mock_buf *b, const unsigned char *s, size_t n);
/* The buffer as a util_out (util/out.h), for util/'s writers. */
util_out mock_buf_out(mock_buf *b);
/* Detach the bytes (NUL-terminated); the buffer is left empty. NULL on oom. */
char *mock_buf_take(mock_buf *b, size_t *len);

#endif /* MOCK_BUF_H */
