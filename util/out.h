/*
 * out.h - where the writers of util/ put their bytes: a FILE, or a caller's
 * buffer through its append function (a util_buf through util_buf_out,
 * util/buf.h). One writer then serves every module, whatever it writes into.
 */
#ifndef UTIL_OUT_H
#define UTIL_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* v in decimal, printf's "%llu" with a "-" before it when minus, into t: its length (at most
 * 21). Without stdio: events.jsonl and timeseries.csv have numbers in every line. */
size_t util_decimal(char *t, uint64_t v, bool minus);

/* The most decimals util_fixed writes itself, and the most bytes it writes. */
#define UTIL_FIXED_DECIMALS_MAX 17
#define UTIL_FIXED_MAX (1 + 20 + 1 + UTIL_FIXED_DECIMALS_MAX)

/*
 * v with `decimals` decimals into t, the bytes of printf's "%.*f" (the double's exact decimal
 * expansion, rounded half to even; "-" whenever the sign bit is set, "-0.00" included), without
 * stdio. Its length; 0 when v is not finite, outside what uint64_t arithmetic holds (|v| from
 * 2^64 up, below 2^-8 but not 0) or decimals is outside 0..UTIL_FIXED_DECIMALS_MAX: then
 * printf writes it (util_printf).
 */
size_t util_fixed(char *t, double v, int decimals);

/* printf onto o; a text over 1 KiB is formatted into a block of its size (or cut there). */
void util_printf(const util_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* UTIL_OUT_H */
