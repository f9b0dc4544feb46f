/* buf.c - see buf.h. */
#include "mockserver/buf.h"

#include <stdint.h>

#include "mockserver/wire.h"
#include "util/base64.h"
#include "util/json.h"

void mock_buf_int(util_buf *b, int64_t v) {
    char d[24];
    size_t n = v < 0 ? 1 : 0;
    d[0] = '-';
    n += mock_wire_decimal(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, d + n);
    util_buf_append(b, d, n);
}

void mock_buf_json_escape(util_buf *b, const char *s, size_t n) {
    util_out o = util_buf_out(b);
    util_json_escape(&o, s, n, 0);
}

void mock_buf_json_string(util_buf *b, const char *s) {
    util_out o = util_buf_out(b);
    util_json_string(&o, s, 0);
}

void mock_buf_base64(util_buf *b, const unsigned char *s, size_t n) {
    if (!util_buf_reserve(b, UTIL_BASE64_LEN(n))) return;
    b->len += util_base64(b->p + b->len, s, n);
    b->p[b->len] = '\0';
}
