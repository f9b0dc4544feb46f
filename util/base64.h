/*
 * base64.h - base64 (RFC 4648, with padding, no line breaks): the mock's
 * embeddings and the pages' embedded charts (data URIs).
 */
#ifndef UTIL_BASE64_H
#define UTIL_BASE64_H

#include <stddef.h>
#include <stdio.h>

/* The length of n bytes in base64. */
#define UTIL_BASE64_LEN(n) (((n) + 2) / 3 * 4)

/* n bytes of s as UTIL_BASE64_LEN(n) digits at dst (no NUL); returns that length. */
size_t util_base64(char *dst, const unsigned char *s, size_t n);

/*
 * "data:MIME;base64,..." of everything `in` still holds, onto `out`. 0, or
 * -1 on a read error (the URI is then cut short).
 */
int util_data_uri(FILE *out, FILE *in, const char *mime);

#endif /* UTIL_BASE64_H */
