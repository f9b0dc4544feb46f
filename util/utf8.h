/*
 * utf8.h - strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF): the scenario loader's strict JSON and --set values, the
 * mock's request bodies, an import's texts.
 */
#ifndef UTIL_UTF8_H
#define UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length of the character at s (n > 0 bytes left), or 0 when it is not valid there. */
size_t util_utf8_char(const unsigned char *s, size_t n);
/* Whether n bytes of s are valid; when not, *bad is the offset of the first bad character. */
bool util_utf8_valid(const char *s, size_t n, size_t *bad);
/* Each byte of s that does not start a valid character becomes '?'. */
void util_utf8_fix(char *s);

#endif /* UTIL_UTF8_H */
