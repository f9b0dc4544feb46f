/* json.c - see json.h. */
#include "util/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Whether any of the eight bytes is '"', '\\' or below 0x20: the has-zero-byte and has-less
 * tests of Sean Anderson's Bit Twiddling Hacks (graphics.stanford.edu/~seander/bithacks.html,
 * "Determine if a word has a byte less than n"), exact for "any"; bytes from 0x80 up never
 * match. */
static bool needs_escape8(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs;
}

void util_json_escape(const util_out *o, const char *s, size_t n, unsigned flags) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* bytes that need no escape, put together */
    for (size_t i = 0; i < n; i++) {
        uint64_t w; /* eight plain bytes at a time: most text has nothing to escape */
        while (i + 8 <= n && (memcpy(&w, s + i, 8), !needs_escape8(w))) {
            run += 8;
            i += 8;
        }
        if (i >= n) break;
        const unsigned char c = (unsigned char)s[i];
        if (c != '"' && c != '\\' && c >= 0x20) {
            run++;
            continue;
        }
        util_put(o, s + i - run, run);
        run = 0;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            util_put(o, e, 2);
        } else if (c == '\n' && (flags & UTIL_JSON_SHORT_NEWLINE)) {
            util_put(o, "\\n", 2);
        } else {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            util_put(o, e, 6);
        }
    }
    util_put(o, s + n - run, run);
}

void util_json_string(const util_out *o, const char *s, unsigned flags) {
    if (s == NULL) s = "";
    util_put(o, "\"", 1);
    util_json_escape(o, s, strlen(s), flags);
    util_put(o, "\"", 1);
}

void util_json_spaced(const util_out *o, const char *pretty) {
    for (const char *c = pretty; *c; c++) {
        if (*c == '\t')
            util_put(o, "  ", c > pretty && c[-1] == ':' ? 1 : 2);
        else
            util_put(o, c, 1);
    }
}
