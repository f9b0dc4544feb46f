/*
 * buf.h - what the mock appends to a util_buf (util/buf.h), its one way to build bodies and
 * events, besides the buffer's own appends: decimals, JSON strings, base64.
 *
 * The answers' bodies are templates appended here, not util_json's (util/json.h, which writes the
 * control answers): the writer costs over a tenth more instructions per answer
 * (docs/architecture.md, "Where JSON is written").
 */
#ifndef MOCK_BUF_H
#define MOCK_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Append v in decimal (as printf's %lld; every body has a few, formatted without stdio). */
void mock_buf_int(util_buf *b, int64_t v);
/* Append s as a JSON string literal, quotes included. */
void mock_buf_json_string(util_buf *b, const char *s);
/* The same for n bytes that need not be NUL-terminated, without the quotes. */
void mock_buf_json_escape(util_buf *b, const char *s, size_t n);
/* Append n bytes as base64 (RFC 4648, padded, no line breaks). */
void mock_buf_base64(util_buf *b, const unsigned char *s, size_t n);

#endif /* MOCK_BUF_H */
