/*
 * out.h - where the writers of util/ put their bytes: a FILE, or a caller's
 * buffer through its append function (a util_buf through util_buf_out,
 * util/buf.h). One writer then serves every module, whatever it writes into.
 */
#ifndef UTIL_OUT_H
#define UTIL_OUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct util_out {
    void (*put)(void *sink, const char *s, size_t n); /* append n bytes; errors are the sink's */
    void *sink;
} util_out;

/* A FILE as a util_out (fwrite; the caller checks ferror and fclose as it always does). */
util_out util_out_file(FILE *f);

static inline void util_put(const util_out *o, const char *s, size_t n) {
    if (n > 0) o->put(o->sink, s, n);
}

/* printf onto o; a text over 1 KiB is formatted into a block of its size (or cut there). */
void util_printf(const util_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* UTIL_OUT_H */
