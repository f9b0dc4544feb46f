/* xml.c - see xml.h. */
#include "util/xml.h"

#include <string.h>

void util_xml_escape(const util_out *o, const char *s, unsigned flags) {
    const char *run = s; /* bytes written as they are, put together */
    for (; *s != '\0'; s++) {
        const unsigned char c = (unsigned char)*s;
        const char *e = c == '&'                               ? "&amp;"
                        : c == '<'                             ? "&lt;"
                        : c == '>'                             ? "&gt;"
                        : c == '"'                             ? "&quot;"
                        : c == '\'' && (flags & UTIL_XML_APOS) ? "&#39;"
                        : c < 0x20 && c != '\n' && c != '\t'   ? " "
                                                               : NULL;
        if (e == NULL) continue;
        util_put(o, run, (size_t)(s - run));
        util_put(o, e, strlen(e));
        run = s + 1;
    }
    util_put(o, run, (size_t)(s - run));
}
