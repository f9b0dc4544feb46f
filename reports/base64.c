/* base64.c - see base64.h. */
#include "reports/base64.h"

#include <stdint.h>
#include <string.h>

#include "core/fb.h"

static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* n (1 to 3) bytes as four digits, '=' for the bytes missing. */
static void quantum(FILE *out, const unsigned char *b, size_t n) {
    uint32_t v = (uint32_t)b[0] << 16 | (n > 1 ? (uint32_t)b[1] << 8 : 0) | (n > 2 ? b[2] : 0);
    fputc(digits[v >> 18 & 63], out);
    fputc(digits[v >> 12 & 63], out);
    fputc(n > 1 ? digits[v >> 6 & 63] : '=', out);
    fputc(n > 2 ? digits[v & 63] : '=', out);
}

int rep_data_uri(FILE *out, FILE *in, const char *mime) {
    fprintf(out, "data:%s;base64,", mime);
    unsigned char buf[3 * 1024];
    size_t held = 0, got;
    /* a short read need not be the end (a pipe): pad only what is left at EOF */
    while ((got = fread(buf + held, 1, sizeof buf - held, in)) > 0) {
        held += got;
        size_t whole = held - held % 3;
        for (size_t i = 0; i < whole; i += 3) quantum(out, buf + i, 3);
        memmove(buf, buf + whole, held - whole);
        held -= whole;
    }
    if (held > 0) quantum(out, buf, held);
    return ferror(in) ? FB_EIO : FB_OK;
}
