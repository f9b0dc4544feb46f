/*
 * junit.h - JUnit XML, the one writer of `fusebox check --junit` and the
 * mock's verdict (`fusebox verdict --junit`, /__fusebox/verdict?format=junit):
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <testsuites name=".." tests=".." failures="..">        util_junit_open
 *     <testsuite name=".." tests=".." failures="..">       util_junit_suite_open
 *       <testcase classname=".." name="..">                util_junit_testcase
 *         <failure message="..">text</failure>
 *         <system-out>..</system-out>
 *       </testcase>
 *     </testsuite>                                         util_junit_suite_close
 *   </testsuites>                                          util_junit_close
 *
 * Every text is escaped with util_xml_escape and the writer's xml_flags.
 */
#ifndef UTIL_JUNIT_H
#define UTIL_JUNIT_H

#include <stdbool.h>

#include "util/out.h"

/* The attributes of <testsuites> and <testsuite>, in this order; the optional ones left out. */
typedef struct util_junit_suite {
    const char *name;
    const char *file; /* NULL: none */
    unsigned tests, failures;
    int errors, skipped; /* < 0: none */
    double time_s;       /* < 0: none; else "%.3f" */
} util_junit_suite;

typedef struct util_junit_case {
    const char *classname, *name;
    double time_s;       /* < 0: no time attribute; else "%.3f" */
    const char *kind;    /* "failure", "error", "skipped"; NULL: it passed */
    const char *message; /* the kind's message attribute */
    const char *text;    /* the kind's content; NULL: the element is empty (<skipped .../>) */
    const char *output;  /* <system-out>; NULL: none */
    bool output_first;   /* <system-out> before the kind's element */
} util_junit_case;

void util_junit_open(const util_out *o, const util_junit_suite *all, unsigned xml_flags);
void util_junit_close(const util_out *o);
void util_junit_suite_open(const util_out *o, const util_junit_suite *s, unsigned xml_flags);
void util_junit_suite_close(const util_out *o);
void util_junit_testcase(const util_out *o, const util_junit_case *c, unsigned xml_flags);

#endif /* UTIL_JUNIT_H */
