/*
 * verdict.h - a verdict on the client under test, from the mock's attempt log: per logical
 * request and overall, did it retry only what should be retried, honour Retry-After, back off
 * with jitter (the spread between clients retrying the same fault), bound its attempts, leave a
 * stream that had sent tokens alone, and fall back where that is expected.
 *
 * Pure: every time comes from the log's entries (real microseconds since the mock's last
 * reset; Retry-After in timeline microseconds, divided by the time scale), nothing reads a
 * clock or prints. A logical request is the attempts sharing an x-fusebox-key; an attempt
 * without one joins a keyless request on the same path and model whose last attempt has an
 * x-stainless-retry-count one less than its own (the official SDKs number their retries) and
 * the same client fingerprint when one has, or starts its own; where more than one could take
 * it and the rules would judge it differently, the verdict is inconclusive. docs/mock.md
 * ("The verdict") states each rule.
 */
#ifndef MOCK_VERDICT_H
#define MOCK_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "mockserver/attempts.h"
#include "mockserver/buf.h"
#include "mockserver/fault.h"

typedef enum mock_rule {
    MOCK_RULE_RETRYABLE,   /* no retry of 400/401/403/404/422 or x-should-retry: false */
    MOCK_RULE_RETRY_AFTER, /* a retry waits at least the Retry-After it was told */
    MOCK_RULE_JITTER,      /* clients retrying the same fault do not wait the same time */
    MOCK_RULE_BOUNDED,     /* at most max_attempts attempts per request */
    MOCK_RULE_STREAM,      /* no new attempt after a stream that sent tokens broke */
    MOCK_RULE_FALLBACK,    /* (when expected) a request that failed on its model moved on */
    MOCK_RULES
} mock_rule;

typedef enum mock_judgement { MOCK_NA = 0, MOCK_PASS, MOCK_FAIL } mock_judgement;

typedef struct mock_verdict_config {
    double time_scale;               /* the log's; 0 = 1 */
    unsigned max_attempts;           /* 0 = 10 */
    fb_time_us retry_after_slack_us; /* a retry this much early still honours it; 0 = 20 ms */
    unsigned jitter_min_clients;     /* a fault's retries judged from this many requests; 0 = 3 */
    fb_time_us jitter_min_us;        /* the spread (max - min) needed: at least this; 0 = 10 ms */
    double jitter_min_fraction;      /* ... and this fraction of the median wait; 0 = 0.05 */
    bool expect_fallback;
} mock_verdict_config;

#define MOCK_VERDICT_WHY 200

typedef struct mock_verdict_request {
    char key[64]; /* x-fusebox-key; "" = keyless */
    char model[64];
    uint64_t first_seq;
    size_t attempts;
    mock_judgement rule[MOCK_RULES];
    char why[MOCK_RULES][MOCK_VERDICT_WHY]; /* the first failure (or what passed) */
} mock_verdict_request;

/* The retries of one fault at one position, across requests. */
typedef struct mock_verdict_group {
    char fault[96]; /* the fault label, or "status N" */
    int status;
    unsigned retry; /* 1 = the first retry */
    unsigned clients;
    fb_time_us min_us, median_us, max_us, needed_us;
    mock_judgement result;
} mock_verdict_group;

typedef struct mock_verdict {
    mock_verdict_config cfg; /* with the defaults filled in */
    mock_verdict_request *req;
    size_t nreq;
    mock_verdict_group *groups;
    size_t ngroups;
    unsigned passed[MOCK_RULES], failed[MOCK_RULES];
    mock_judgement rule[MOCK_RULES];
    uint64_t attempts, dropped;
    /* keyless retries more than one request could have made, judged differently as whose: a
       failure of those requests is left unjudged, and the verdict can only be inconclusive */
    uint64_t ambiguous;
    /* jitter groups (result n/a) whose spread was short of the needed one, but whose clients
       were too few to tell a narrow jitter from none; the first one said in `unsure` */
    size_t jitter_unsure;
    char unsure[400];
} mock_verdict;

/* "retry_only_retryable", ...: the rule's name in JSON, JUnit and the text summary. */
const char *mock_rule_name(mock_rule r);
/* One line: what the rule asks. */
const char *mock_rule_text(mock_rule r);

/*
 * Judge the log's n entries (oldest first; those not attempts are skipped). dropped: entries
 * the log lost (the verdict is then incomplete). FB_ENOMEM, or FB_OK with *out filled (free it
 * with mock_verdict_free).
 */
int mock_verdict_judge(const mock_attempt *log, size_t n, uint64_t dropped,
                       const mock_verdict_config *cfg, mock_verdict *out);
void mock_verdict_free(mock_verdict *v);

/* "pass", "fail", or "inconclusive" (no attempt judged, no rule exercised, the log lost
 * entries, keyless retries could be another request's and would be judged differently as that
 * one's, or too few clients' waits to tell a narrow jitter from none). */
const char *mock_verdict_result(const mock_verdict *v);
/* Why it is inconclusive ("" otherwise). */
const char *mock_verdict_reason(const mock_verdict *v);

/* The verdict as JSON (docs/mock.md) and as JUnit XML (one test case per rule). */
void mock_verdict_json(const mock_verdict *v, util_buf *out);
void mock_verdict_junit(const mock_verdict *v, util_buf *out);

/*
 * A saved attempt log (GET /__fusebox/log) into entries: *out (malloc'd, free it), *n, the
 * entries it lost and its time scale. At most max_entries entries. FB_EINVAL with the JSON
 * path and what is wrong in err (a duplicate key and text after the document too: the text is
 * checked by scn_json_check first); FB_ECAP past SCN_JSON_VALUES_MAX values; FB_ENOMEM.
 */
int mock_verdict_read_log(const char *json, size_t len, size_t max_entries, mock_attempt **out,
                          size_t *n, uint64_t *dropped, double *time_scale, mock_parse_error *err);

#endif /* MOCK_VERDICT_H */
