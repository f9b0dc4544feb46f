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

/*
 * A FILE behind a buffer of the caller's (on its stack): the puts gather in b and go to f in
 * one fwrite when b is full and at util_out_flush. A writer that makes dozens of small puts
 * (a line of events.jsonl) then costs one fwrite instead of one per put; the bytes, and their
 * order against the caller's own writes to f once it has flushed, are the same.
 */
typedef struct util_out_buffer {
    FILE *f;
    size_t len; /* bytes in b not yet written */
    char b[1024];
} util_out_buffer;

/* A util_out onto ob, which writes to f; ob needs no other setup. */
util_out util_out_buffered(util_out_buffer *ob, FILE *f);
/* Write the bytes gathered in ob to its FILE (fwrite); ob is empty again. */
void util_out_flush(util_out_buffer *ob);

static inline void util_put(const util_out *o, const char *s, size_t n) {
    if (n > 0) o->put(o->sink, s, n);
}

/* printf onto o; a text over 1 KiB is formatted into a block of its size (or cut there). */
void util_printf(const util_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* UTIL_OUT_H */
