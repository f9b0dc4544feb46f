/* out.c - see out.h. */
#include "util/out.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void put_file(void *sink, const char *s, size_t n) {
    fwrite(s, 1, n, sink);
}

util_out util_out_file(FILE *f) {
    return (util_out){.put = put_file, .sink = f};
}

static void put_buffered(void *sink, const char *s, size_t n) {
    util_out_buffer *ob = sink;
    if (n > sizeof ob->b - ob->len) {
        util_out_flush(ob);
        if (n > sizeof ob->b) { /* more than the buffer holds: straight through */
            fwrite(s, 1, n, ob->f);
            return;
        }
    }
    memcpy(ob->b + ob->len, s, n);
    ob->len += n;
}

util_out util_out_buffered(util_out_buffer *ob, FILE *f) {
    ob->f = f;
    ob->len = 0;
    return (util_out){.put = put_buffered, .sink = ob};
}

void util_out_flush(util_out_buffer *ob) {
    if (ob->len > 0) fwrite(ob->b, 1, ob->len, ob->f);
    ob->len = 0;
}

void util_printf(const util_out *o, const char *fmt, ...) {
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        util_put(o, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        util_put(o, small, sizeof small - 1);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    util_put(o, big, (size_t)n);
    free(big);
}
