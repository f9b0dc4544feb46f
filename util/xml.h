/*
 * xml.h - text escaped for XML (and HTML) content and attribute values: the
 * JUnit files and the pages.
 */
#ifndef UTIL_XML_H
#define UTIL_XML_H

#include "util/out.h"

/* '\'' as "&#39;" too (the pages, `fusebox check`'s JUnit); without it the quote stays. */
#define UTIL_XML_APOS 1u

/*
 * s onto o with '&', '<', '>', '"' as entities, and each control byte other
 * than '\n' and '\t' as a space (XML 1.0 has no way to write them).
 */
void util_xml_escape(const util_out *o, const char *s, unsigned flags);

#endif /* UTIL_XML_H */
