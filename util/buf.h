/*
 * buf.h - a growable byte buffer with a cap: the mock's bodies and events, the
 * live driver's requests and the answers it reads, an import's texts, the
 * policy files `export-policy` writes.
 *
 * A buffer starts as {0}, or with .cap set (the most bytes it may hold; 0 is
 * UTIL_BUF_CAP_DEFAULT). Its bytes are NUL-terminated once anything is
 * appended (len does not count the NUL). Appends never fail loudly: one that
 * memory or the cap refuses appends nothing and sets err, and every later
 * append does nothing either, so a caller checks err once at the end.
 */
#ifndef UTIL_BUF_H
#define UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "util/out.h"

#define UTIL_BUF_CAP_DEFAULT ((size_t)1 << 30) /* 1 GiB: the cap of a buffer whose cap is 0 */

typedef enum util_buf_err {
    UTIL_BUF_OK = 0,
    UTIL_BUF_NOMEM, /* an allocation failed */
    UTIL_BUF_FULL,  /* an append would have taken len past the cap */
} util_buf_err;

typedef struct util_buf {
    char *p;
    size_t len;        /* bytes held, the NUL not counted */
    size_t size;       /* bytes allocated */
    size_t cap;        /* the most len may reach; 0 = UTIL_BUF_CAP_DEFAULT */
    unsigned char err; /* a util_buf_err: UTIL_BUF_OK, or why appends stopped (a byte: the
                          inline append tests it with one instruction) */
} util_buf;

/* util_buf_append when the bytes do not fit the room there is: growth, the cap and err. */
void util_buf_append_grow(util_buf *b, const char *s, size_t n);

/* Inline when the bytes fit (the mock's answers make dozens of appends each, and a literal's
 * strlen then folds away); the same result as util_buf_append_grow. */
static inline void util_buf_append(util_buf *b, const char *s, size_t n) {
    if (!b->err && b->len + n + 1 <= b->size && (b->cap == 0 || b->len + n <= b->cap)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
        return;
    }
    util_buf_append_grow(b, s, n);
}

static inline void util_buf_puts(util_buf *b, const char *s) {
    util_buf_append(b, s, strlen(s));
}

void util_buf_printf(util_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Room for `extra` more bytes and their NUL now (fewer reallocations); false when err is set. */
bool util_buf_reserve(util_buf *b, size_t extra);
/* util_buf_append as a util_out's put (the sink is the util_buf). */
void util_buf_put(void *b, const char *s, size_t n);

/* The buffer as a util_out (util/out.h), for util/'s writers. */
static inline util_out util_buf_out(util_buf *b) {
    return (util_out){.put = util_buf_put, .sink = b};
}

/* Detach the bytes (NUL-terminated, "" when none); the buffer is left empty with its cap.
   NULL when err is set (the bytes are freed). */
char *util_buf_take(util_buf *b, size_t *len);
/* Free the bytes; the buffer is left empty with its cap. */
void util_buf_free(util_buf *b);

#endif /* UTIL_BUF_H */
