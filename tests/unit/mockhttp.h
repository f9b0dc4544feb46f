/*
 * mockhttp.h - what the mock's unit tests share: a libcurl client for one request (status,
 * headers, body, when each byte arrived), header and JSON lookups, an SSE splitter, and a
 * fixture that starts a mock on a free loopback port. Include it after <cmocka.h>; the
 * helpers fail the current test instead of returning errors.
 */
#ifndef FUSEBOX_TESTS_MOCKHTTP_H
#define FUSEBOX_TESTS_MOCKHTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "mockserver/buf.h"
#include "mockserver/mock.h"

#define TIMEOUT_MS 5000L
#define MAX_WRITES 512

typedef struct resp {
    CURLcode rc;
    long status;
    util_buf hdrs;
    util_buf body;
    fb_time_us start_us;
    fb_time_us headers_us; /* when the status line arrived */
    int nwrites;
    size_t write_end[MAX_WRITES]; /* body length after each write */
    fb_time_us write_us[MAX_WRITES];
} resp;

void th_resp_free(resp *r);
/* An easy handle for one request into r (for multi-handle tests); the caller performs it. */
CURL *th_make_easy(resp *r, const char *url, const char *method, const char *body,
                   struct curl_slist *hl, long timeout_ms);
/* One request. Extra headers are "Name: value" strings, NULL-terminated. */
void th_req_full(resp *r, const char *base, const char *method, const char *path, const char *body,
                 long timeout_ms, const char *const *headers);
void th_post(resp *r, const char *base, const char *path, const char *body,
             const char *const *headers);
/* Header value (case-insensitive name) copied into out; false when absent. */
bool th_hdr(const resp *r, const char *name, char *out, size_t cap);
void th_assert_hdr(const resp *r, const char *name, const char *want);
bool th_has_hdr(const resp *r, const char *name);
/* The body as JSON (the test fails if it is not); cJSON_Delete it. */
cJSON *th_json_body(const resp *r);
const char *th_jstr(const cJSON *j, const char *a, const char *b);
double th_jnum(const cJSON *j, const char *a, const char *b);

typedef struct sse_event {
    char name[48]; /* "" when there is no event: line */
    char *data;    /* points into a copy of the body */
    size_t end;    /* body offset just past the event */
} sse_event;

typedef struct sse {
    char *copy;
    int n;
    sse_event ev[256];
    bool tail; /* bytes left after the last complete event */
} sse;

/* Split the body into events at blank lines ("\n\n" or "\r\n\r\n"). */
void th_sse_parse(sse *s, const resp *r);
void th_sse_free(sse *s);
/* When did the byte at body offset `off` arrive? */
fb_time_us th_arrival_of(const resp *r, size_t off);

typedef struct fixture {
    mock_server *srv;
    char base[64];
} fixture;

void th_quiet(void *user, mock_log_level level, const char *msg);
/* A mock with this configuration (NULL: defaults), seed 7 unless set, logging nowhere. */
fixture *th_start(const mock_config *in);
void th_stop(fixture *f);
/* A TCP connection to the fixture's port. */
int th_connect_raw(const fixture *f);
/* Read until EOF or timeout; returns bytes read, -1 on timeout with nothing, -2 on error. */
ssize_t th_read_some(int fd, char *buf, size_t cap, int timeout_ms);
/* Wait until cond holds on the server's counters (polled every 10 ms); false after timeout_ms. */
bool th_wait_for(const fixture *f, bool (*cond)(const mock_stats *st, void *arg), void *arg,
                 int timeout_ms);
/*
 * A real-time bound of a test (an answer within 2 s, a connection cut within 1 s): a miss on a
 * busy machine says nothing about the mock. th_clock_start() notes the time and the machine's
 * CPU pressure; th_late() is called once the bound is missed: when, since the start, some
 * task waited for a CPU at least TH_BUSY_SHARE of the time (/proc/pressure/cpu, "some"), or
 * other tasks keep every CPU busy now (/proc/stat procs_running), the test is inconclusive, a
 * skip with the reason; otherwise it fails with what was missed. Either way f (if not NULL) is
 * stopped first.
 */
#define TH_BUSY_SHARE 0.10
typedef struct th_clock {
    fb_time_us t0;
    long long psi_us; /* "some" total at t0; -1: no PSI */
} th_clock;
void th_clock_start(th_clock *c);
#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
void th_late(fixture *f, const th_clock *c, const char *fmt, ...);
/* th_wait_for with th_late as its failure (what: the condition, for the message). */
void th_wait_or_late(fixture *f, bool (*cond)(const mock_stats *st, void *arg), void *arg,
                     int timeout_ms, const char *what);
/* cmocka setup/teardown around th_start(NULL). */
int th_setup(void **state);
int th_teardown(void **state);

#define CHAT "/v1/chat/completions"
#define MSGS "/v1/messages"
#define OA_BODY                                                                                    \
    "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there!\"}]"
#define AN_MSGS                                                                                    \
    "{\"model\":\"claude-x\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there!\"}]"
#define AN_BODY AN_MSGS ",\"max_tokens\":100"

#endif
