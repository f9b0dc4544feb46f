/* junit.c - see junit.h. */
#include "util/junit.h"

#include <string.h>

#include "util/xml.h"

static void puts_(const util_out *o, const char *s) {
    util_put(o, s, strlen(s));
}

/* ` key="value"`, the value escaped. */
static void attr(const util_out *o, const char *key, const char *v, unsigned xml_flags) {
    util_printf(o, " %s=\"", key);
    util_xml_escape(o, v, xml_flags);
    puts_(o, "\"");
}

static void suite(const util_out *o, const char *tag, const util_junit_suite *s,
                  unsigned xml_flags) {
    util_printf(o, "%s", tag);
    attr(o, "name", s->name, xml_flags);
    if (s->file != NULL) attr(o, "file", s->file, xml_flags);
    util_printf(o, " tests=\"%u\" failures=\"%u\"", s->tests, s->failures);
    if (s->errors >= 0) util_printf(o, " errors=\"%d\"", s->errors);
    if (s->skipped >= 0) util_printf(o, " skipped=\"%d\"", s->skipped);
    if (s->time_s >= 0) util_printf(o, " time=\"%.3f\"", s->time_s);
    puts_(o, ">\n");
}

void util_junit_open(const util_out *o, const util_junit_suite *all, unsigned xml_flags) {
    puts_(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    suite(o, "<testsuites", all, xml_flags);
}

void util_junit_close(const util_out *o) {
    puts_(o, "</testsuites>\n");
}

void util_junit_suite_open(const util_out *o, const util_junit_suite *s, unsigned xml_flags) {
    suite(o, "  <testsuite", s, xml_flags);
}

void util_junit_suite_close(const util_out *o) {
    puts_(o, "  </testsuite>\n");
}

static void output(const util_out *o, const char *text, unsigned xml_flags) {
    puts_(o, "      <system-out>");
    util_xml_escape(o, text, xml_flags);
    puts_(o, "</system-out>\n");
}

void util_junit_testcase(const util_out *o, const util_junit_case *c, unsigned xml_flags) {
    puts_(o, "    <testcase");
    attr(o, "classname", c->classname, xml_flags);
    attr(o, "name", c->name, xml_flags);
    if (c->time_s >= 0) util_printf(o, " time=\"%.3f\"", c->time_s);
    puts_(o, ">\n");
    if (c->output != NULL && c->output_first) output(o, c->output, xml_flags);
    if (c->kind != NULL) {
        util_printf(o, "      <%s", c->kind);
        attr(o, "message", c->message, xml_flags);
        if (c->text == NULL) {
            puts_(o, "/>\n");
        } else {
            puts_(o, ">");
            util_xml_escape(o, c->text, xml_flags);
            util_printf(o, "</%s>\n", c->kind);
        }
    }
    if (c->output != NULL && !c->output_first) output(o, c->output, xml_flags);
    puts_(o, "    </testcase>\n");
}
