/* base64.c - see base64.h. */
#include "util/base64.h"

#include <stdint.h>
#include <string.h>

static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t util_base64(char *dst, const unsigned char *s, size_t n) {
    char *o = dst;
    for (size_t i = 0; i < n; i += 3) {
        size_t left = n - i; /* 1 to 3 bytes as four digits, '=' for the bytes missing */
        uint32_t w = (uint32_t)s[i] << 16;
        if (left > 1) w |= (uint32_t)s[i + 1] << 8;
        if (left > 2) w |= s[i + 2];
        *o++ = digits[(w >> 18) & 63];
        *o++ = digits[(w >> 12) & 63];
        *o++ = left > 1 ? digits[(w >> 6) & 63] : '=';
        *o++ = left > 2 ? digits[w & 63] : '=';
    }
    return (size_t)(o - dst);
}

int util_data_uri(FILE *out, FILE *in, const char *mime) {
    fprintf(out, "data:%s;base64,", mime);
    unsigned char buf[3 * 1024];
    char text[UTIL_BASE64_LEN(sizeof buf)];
    size_t held = 0, got;
    /* a short read need not be the end (a pipe): pad only what is left at EOF */
    while ((got = fread(buf + held, 1, sizeof buf - held, in)) > 0) {
        held += got;
        size_t whole = held - held % 3;
        fwrite(text, 1, util_base64(text, buf, whole), out);
        memmove(buf, buf + whole, held - whole);
        held -= whole;
    }
    if (held > 0) fwrite(text, 1, util_base64(text, buf, held), out);
    return ferror(in) ? -1 : 0;
}
