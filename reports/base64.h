/*
 * base64.h - files embedded in a page as base64 (RFC 4648, with padding, no
 * line breaks): report.html's SVG charts and sweep.html's PNGs are data URIs,
 * so each page is one file.
 */
#ifndef REP_BASE64_H
#define REP_BASE64_H

#include <stdio.h>

/*
 * "data:MIME;base64,..." of everything `in` still holds, onto `out`. FB_OK,
 * or FB_EIO on a read error (the URI is then cut short).
 */
int rep_data_uri(FILE *out, FILE *in, const char *mime);

#endif /* REP_BASE64_H */
