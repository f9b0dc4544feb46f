/*
 * test_mock_verdict.c - the verdict on a client (mockserver/verdict.h) from attempt logs
 * written here with explicit times: each rule passes, fails and stays out of it on exactly
 * the logs that should do so, a bad client fails its own rule and no other, and a saved log
 * reads back (or is refused naming its JSON path).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "mockserver/verdict.h"
#include "tests/unit/helpers.h"
#include "tests/unit/mockhttp.h"

#define MAXLOG 64

typedef struct tlog {
    mock_attempt e[MAXLOG];
    size_t n;
} tlog;

/* An attempt of request `key` on `model` answered `status`: arrived at real_ms, answered
 * after_ms later. */
static mock_attempt *add(tlog *l, const char *key, const char *model, int status, double real_ms,
                         double after_ms) {
    assert_true(l->n < MAXLOG);
    mock_attempt *a = &l->e[l->n];
    memset(a, 0, sizeof *a);
    a->seq = l->n++;
    snprintf(a->key, sizeof a->key, "%s", key);
    snprintf(a->model, sizeof a->model, "%s", model);
    snprintf(a->path, sizeof a->path, "/v1/chat/completions");
    snprintf(a->method, sizeof a->method, "POST");
    a->inference = true;
    a->status = status;
    a->real_us = (fb_time_us)llround(real_ms * MS);
    a->t_us = a->real_us;
    a->sent_us = (fb_time_us)llround((real_ms + after_ms) * MS);
    a->latency_us = (fb_time_us)llround(after_ms * MS);
    a->retry_after_us = -1;
    a->retry_count = -1;
    a->should_retry = -1;
    a->tokens = -1;
    return a;
}

static mock_verdict judge_with(const tlog *l, const mock_verdict_config *c) {
    mock_verdict v;
    assert_int_equal(mock_verdict_judge(l->e, l->n, 0, c, &v), FB_OK);
    return v;
}

static mock_verdict judge(const tlog *l) {
    return judge_with(l, NULL);
}

/* Exactly `bad` fails; every other rule passes or was not exercised. */
static void only_fails(const mock_verdict *v, mock_rule bad) {
    for (int r = 0; r < MOCK_RULES; r++) {
        if (r == (int)bad) {
            if (v->rule[r] != MOCK_FAIL) fail_msg("%s did not fail", mock_rule_name(bad));
        } else if (v->rule[r] == MOCK_FAIL) {
            fail_msg("%s failed too: %s", mock_rule_name((mock_rule)r), v->req[0].why[r]);
        }
    }
    assert_string_equal(mock_verdict_result(v), "fail");
}

/* ---- requests ---- */

static void verdict_groups_attempts_by_key_then_by_sdk_retry_count(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "a", "m", 503, 0, 1);
    add(&l, "", "m", 503, 1, 1)->retry_count = 0;
    add(&l, "b", "m", 200, 2, 1);
    add(&l, "", "m", 200, 3, 1); /* no retry count: a request of its own */
    add(&l, "a", "m", 200, 500, 1);
    add(&l, "", "m", 200, 501, 1)->retry_count = 1; /* the retry of seq 1 */
    mock_verdict v = judge(&l);
    assert_int_equal(v.attempts, 6);
    assert_int_equal(v.nreq, 4);
    assert_string_equal(v.req[0].key, "a");
    assert_int_equal(v.req[0].attempts, 2);
    assert_string_equal(v.req[1].key, "b");
    assert_int_equal(v.req[2].first_seq, 1);
    assert_int_equal(v.req[2].attempts, 2);
    assert_int_equal(v.req[3].first_seq, 3);
    assert_int_equal(v.req[3].attempts, 1);
    assert_string_equal(mock_verdict_result(&v), "pass");
    mock_verdict_free(&v);
}

static void verdict_skips_what_is_not_an_attempt_and_is_inconclusive_without_any(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "a", "m", 200, 0, 1)->inference = false; /* GET /v1/models */
    mock_verdict v = judge(&l);
    assert_int_equal(v.attempts, 0);
    assert_string_equal(mock_verdict_result(&v), "inconclusive");
    assert_string_equal(mock_verdict_reason(&v), "no attempts in the log");
    mock_verdict_free(&v);
}

static void verdict_is_inconclusive_when_the_log_lost_entries(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "a", "m", 200, 0, 1);
    mock_verdict v;
    assert_int_equal(mock_verdict_judge(l.e, l.n, 7, NULL, &v), FB_OK);
    assert_string_equal(mock_verdict_result(&v), "inconclusive");
    assert_non_null(strstr(mock_verdict_reason(&v), "--log-capacity"));
    mock_verdict_free(&v);
}

/* ---- retry only what should be retried ---- */

static void verdict_fails_a_retried_400_and_nothing_else(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "k", "m", 400, 0, 1);
    add(&l, "k", "m", 400, 2, 1);
    mock_verdict v = judge(&l);
    only_fails(&v, MOCK_RULE_RETRYABLE);
    assert_non_null(strstr(v.req[0].why[MOCK_RULE_RETRYABLE], "seq 1 retried the 400 of seq 0"));
    assert_int_equal(v.rule[MOCK_RULE_BOUNDED], MOCK_PASS);
    mock_verdict_free(&v);
}

static void verdict_passes_each_client_error_left_alone_or_taken_elsewhere(void **state) {
    (void)state;
    tlog l = {.n = 0};
    const int statuses[] = {400, 401, 403, 404, 422};
    for (int i = 0; i < 5; i++) {
        char key[8] = {(char)('a' + i), 0};
        add(&l, key, "m", statuses[i], i * 10.0, 1);
    }
    add(&l, "a", "bigger-model", 200, 100, 1); /* a context-length 400 taken to another model */
    mock_verdict v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_RETRYABLE], MOCK_PASS);
    assert_int_equal(v.passed[MOCK_RULE_RETRYABLE], 5);
    assert_string_equal(mock_verdict_result(&v), "pass");
    mock_verdict_free(&v);
}

static void verdict_reads_x_should_retry_both_ways(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "no", "m", 503, 0, 1)->should_retry = 0;
    add(&l, "no", "m", 200, 600, 1);
    add(&l, "yes", "m", 400, 0, 1)->should_retry = 1;
    add(&l, "yes", "m", 200, 600, 1);
    mock_verdict v = judge(&l);
    assert_int_equal(v.req[0].rule[MOCK_RULE_RETRYABLE], MOCK_FAIL);
    assert_non_null(strstr(v.req[0].why[MOCK_RULE_RETRYABLE], "x-should-retry: false"));
    assert_int_equal(v.req[1].rule[MOCK_RULE_RETRYABLE], MOCK_NA);
    mock_verdict_free(&v);
}

/* ---- Retry-After ---- */

static void verdict_fails_a_retry_before_its_retry_after_and_nothing_else(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "k", "m", 429, 0, 5)->retry_after_us = 1 * S;
    add(&l, "k", "m", 429, 105, 5)->retry_after_us = 1 * S; /* 100 ms after the answer */
    add(&l, "k", "m", 200, 210, 5);
    mock_verdict v = judge(&l);
    only_fails(&v, MOCK_RULE_RETRY_AFTER);
    assert_string_equal(v.req[0].why[MOCK_RULE_RETRY_AFTER],
                        "seq 1 came 100.0 ms after the 429 of seq 0, which said to wait 1000.0 ms");
    mock_verdict_free(&v);
}

/* Two keyless clients (no x-fusebox-key) each told to wait 1 s, each waiting 1.05 s: the first
 * retry could be either's (issue 25: it was attached to the latest, "came 150 ms after"). Not
 * a failure: inconclusive, saying why. One keyless client alone that retries early still fails. */
static void verdict_is_inconclusive_when_keyless_retries_could_be_anothers(void **state) {
    (void)state;
    tlog l = {.n = 0};
    mock_attempt *a = add(&l, "", "m", 429, 0, 5);
    a->retry_count = 0;
    a->retry_after_us = 1 * S;
    a = add(&l, "", "m", 429, 900, 5);
    a->retry_count = 0;
    a->retry_after_us = 1 * S;
    add(&l, "", "m", 200, 1055, 5)->retry_count = 1;
    add(&l, "", "m", 200, 1955, 5)->retry_count = 1;
    mock_verdict v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_RETRY_AFTER] == MOCK_FAIL, 0);
    assert_string_equal(mock_verdict_result(&v), "inconclusive");
    assert_non_null(strstr(mock_verdict_reason(&v), "x-fusebox-key"));
    mock_verdict_free(&v);
    l.n = 0;
    a = add(&l, "", "m", 429, 0, 5);
    a->retry_count = 0;
    a->retry_after_us = 1 * S;
    add(&l, "", "m", 200, 105, 5)->retry_count = 1;
    v = judge(&l);
    only_fails(&v, MOCK_RULE_RETRY_AFTER);
    mock_verdict_free(&v);
}

/* A 429 storm (issue 25): n keyless clients each told to wait 1 s, answered spread_ms apart,
 * each retrying 1000.5 ms after its own 429, the retries arriving in the clients' order. The
 * fingerprint of client i is prints[i] (0: not known). */
static void storm(tlog *l, int n, double spread_ms, const uint64_t *prints) {
    l->n = 0;
    for (int i = 0; i < n; i++) {
        mock_attempt *a = add(l, "", "m", 429, i * spread_ms, 2);
        a->retry_count = 0;
        a->retry_after_us = 1 * S;
        a->client = prints != NULL ? prints[i] : 0;
    }
    for (int i = 0; i < n; i++) {
        mock_attempt *a = add(l, "", "m", 200, i * spread_ms + 2 + 1000.5, 2);
        a->retry_count = 1;
        a->client = prints != NULL ? prints[i] : 0;
    }
}

/* 8 official clients without x-fusebox-key, each sending its own request, in a 429 storm with
 * Retry-After 1 s: every retry waited for its own 429, and the fingerprint (User-Agent and
 * body) says which was whose: pass, not "came 10 ms after the 429 of seq 7". */
static void verdict_tells_keyless_clients_apart_by_what_they_send(void **state) {
    (void)state;
    uint64_t prints[8];
    for (int i = 0; i < 8; i++) prints[i] = 0x1000u + (uint64_t)i;
    tlog l;
    storm(&l, 8, 30, prints);
    mock_verdict v = judge(&l);
    assert_int_equal(v.nreq, 8);
    for (size_t i = 0; i < v.nreq; i++) assert_int_equal(v.req[i].attempts, 2);
    assert_int_equal(v.rule[MOCK_RULE_RETRY_AFTER], MOCK_PASS);
    assert_int_equal(v.passed[MOCK_RULE_RETRY_AFTER], 8);
    assert_string_equal(mock_verdict_result(&v), "pass");
    mock_verdict_free(&v);
    /* the same requests without a fingerprint (a log saved before it): not a fail */
    storm(&l, 8, 30, NULL);
    v = judge(&l);
    assert_string_equal(mock_verdict_result(&v), "inconclusive");
    mock_verdict_free(&v);
}

/* Clients sending the same request cannot be told apart; when every request that could have
 * made a retry would be judged alike (their 429s went within the slack of each other), the
 * attribution does not matter: pass. A retry early for every candidate is still a fail. */
static void verdict_judges_keyless_retries_every_candidate_judges_alike(void **state) {
    (void)state;
    tlog l;
    storm(&l, 8, 1, NULL);
    mock_verdict v = judge(&l);
    assert_int_equal(v.nreq, 8);
    assert_int_equal(v.passed[MOCK_RULE_RETRY_AFTER], 8);
    assert_string_equal(mock_verdict_result(&v), "pass");
    mock_verdict_free(&v);
    storm(&l, 8, 1, NULL);
    for (size_t i = 8; i < 16; i++) l.e[i].real_us -= 500 * MS; /* each retried after 0.5 s */
    v = judge(&l);
    only_fails(&v, MOCK_RULE_RETRY_AFTER);
    assert_int_equal(v.failed[MOCK_RULE_RETRY_AFTER], 8);
    mock_verdict_free(&v);
}

static void verdict_measures_retry_after_from_the_answer_with_its_slack(void **state) {
    (void)state;
    tlog l = {.n = 0};
    /* answered at 50 ms; 1 s later less 19 ms is within the 20 ms slack, 21 ms is not */
    add(&l, "ok", "m", 429, 0, 50)->retry_after_us = 1 * S;
    add(&l, "ok", "m", 200, 1031, 1);
    add(&l, "early", "m", 429, 0, 50)->retry_after_us = 1 * S;
    add(&l, "early", "m", 200, 1029, 1);
    mock_verdict v = judge(&l);
    assert_int_equal(v.req[0].rule[MOCK_RULE_RETRY_AFTER], MOCK_FAIL); /* "early" sorts first */
    assert_int_equal(v.req[1].rule[MOCK_RULE_RETRY_AFTER], MOCK_PASS);
    mock_verdict_free(&v);
}

/* A Retry-After whose wait fits in the slack (1 s at time scale 60: 16.7 ms of 20) is met by a
 * client that ignores it as well: honours_retry_after is not exercised (n/a), not a pass. */
static void verdict_does_not_pass_a_retry_after_within_the_slack(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "k", "m", 429, 0, 0)->retry_after_us = 1 * S;
    add(&l, "k", "m", 200, 1, 1); /* 1 ms later: it did not wait */
    mock_verdict_config c = {.time_scale = 60};
    mock_verdict v = judge_with(&l, &c);
    assert_int_equal(v.rule[MOCK_RULE_RETRY_AFTER], MOCK_NA);
    assert_int_equal(v.rule[MOCK_RULE_BOUNDED], MOCK_PASS);
    mock_verdict_free(&v);
    c.time_scale = 10; /* 100 ms: judged, and failed */
    v = judge_with(&l, &c);
    assert_int_equal(v.rule[MOCK_RULE_RETRY_AFTER], MOCK_FAIL);
    mock_verdict_free(&v);
}

static void verdict_scales_retry_after_by_the_time_scale(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "k", "m", 429, 0, 0)->retry_after_us = 60 * S; /* a timeline minute */
    add(&l, "k", "m", 200, 1000, 1);                       /* a real second */
    mock_verdict_config c = {.time_scale = 60};
    mock_verdict v = judge_with(&l, &c);
    assert_int_equal(v.rule[MOCK_RULE_RETRY_AFTER], MOCK_PASS);
    mock_verdict_free(&v);
    c.time_scale = 30;
    v = judge_with(&l, &c);
    assert_int_equal(v.rule[MOCK_RULE_RETRY_AFTER], MOCK_FAIL);
    mock_verdict_free(&v);
}

/* ---- jitter ---- */

/* n clients hit fault `f` (status 500) at 0 ms and retry after waits[i] ms. */
static void clients(tlog *l, const char *f, int n, const double *waits) {
    for (int i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof key, "c%d", i);
        snprintf(add(l, key, "m", 500, 0, 0)->fault, sizeof l->e[0].fault, "%s", f);
        add(l, key, "m", 200, waits[i], 1);
    }
}

static void verdict_fails_clients_that_all_wait_the_same_and_nothing_else(void **state) {
    (void)state;
    tlog l = {.n = 0};
    const double waits[] = {500, 500.4, 501, 500.2};
    clients(&l, "500-times-1", 4, waits);
    mock_verdict v = judge(&l);
    only_fails(&v, MOCK_RULE_JITTER);
    assert_int_equal(v.failed[MOCK_RULE_JITTER], 4);
    assert_int_equal(v.ngroups, 1);
    assert_int_equal(v.groups[0].clients, 4);
    assert_int_equal(v.groups[0].min_us, 500 * MS);
    assert_int_equal(v.groups[0].max_us, 501 * MS);
    assert_int_equal(v.groups[0].median_us, 500300);
    assert_int_equal(v.groups[0].needed_us, 25015); /* 5% of the median, over 10 ms */
    mock_verdict_free(&v);
}

/* Three clients of a narrow jitter (the SDKs' quarter of the wait) spread under 5% of the median
 * 8% of the time: a short spread of 3 clients is no proof of no jitter unless chance would
 * rarely give it. 15 ms apart: inconclusive (the group n/a); 2 ms apart, or 5 clients 15 ms
 * apart: a fail. */
static void verdict_does_not_fail_jitter_that_few_clients_cannot_tell(void **state) {
    (void)state;
    tlog l = {.n = 0};
    const double close[] = {430, 440, 445};
    clients(&l, "500-times-1", 3, close);
    mock_verdict v = judge(&l);
    assert_int_equal(v.ngroups, 1);
    assert_int_equal(v.groups[0].result, MOCK_NA);
    assert_int_equal(v.failed[MOCK_RULE_JITTER], 0);
    assert_string_equal(mock_verdict_result(&v), "inconclusive");
    assert_non_null(strstr(mock_verdict_reason(&v),
                           "3 clients retried 500-times-1 (retry 1) 15.0 ms apart, under the "
                           "22.0 ms needed"));
    util_buf j = {0};
    mock_verdict_json(&v, &j);
    assert_non_null(strstr(j.p, "\"spread_ms\":15.000,\"needed_ms\":22.000,\"result\":\"n/a\""));
    util_buf_free(&j);
    mock_verdict_free(&v);
    tlog t = {.n = 0};
    const double tight[] = {440, 441, 442};
    clients(&t, "500-times-1", 3, tight);
    v = judge(&t);
    only_fails(&v, MOCK_RULE_JITTER);
    mock_verdict_free(&v);
    tlog f = {.n = 0};
    const double five[] = {430, 434, 440, 443, 445};
    clients(&f, "500-times-1", 5, five);
    v = judge(&f);
    only_fails(&v, MOCK_RULE_JITTER);
    mock_verdict_free(&v);
}

static void verdict_passes_a_spread_of_waits(void **state) {
    (void)state;
    tlog l = {.n = 0};
    const double waits[] = {390, 470, 440};
    clients(&l, "500-times-1", 3, waits);
    mock_verdict v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_JITTER], MOCK_PASS);
    assert_int_equal(v.passed[MOCK_RULE_JITTER], 3);
    mock_verdict_free(&v);
}

static void verdict_judges_no_jitter_from_too_few_clients_or_a_retry_after(void **state) {
    (void)state;
    tlog l = {.n = 0};
    const double same[] = {500, 500};
    clients(&l, "500-times-1", 2, same); /* two clients: below jitter_min_clients */
    for (int i = 0; i < 4; i++) {        /* told when to come back: waiting that is right */
        char key[16];
        snprintf(key, sizeof key, "r%d", i);
        add(&l, key, "m", 429, 0, 0)->retry_after_us = 1 * S;
        add(&l, key, "m", 200, 1000, 1);
    }
    mock_verdict v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_JITTER], MOCK_NA);
    assert_int_equal(v.ngroups, 0);
    assert_string_equal(mock_verdict_result(&v), "pass");
    mock_verdict_free(&v);
}

static void verdict_groups_waits_by_fault_and_retry_number(void **state) {
    (void)state;
    tlog l = {.n = 0};
    const double w1[] = {500, 500, 500};
    clients(&l, "503", 3, w1);
    const double w2[] = {400, 480, 450};
    clients(&l, "500", 3, w2); /* another fault: its own group */
    mock_verdict v = judge(&l);
    assert_int_equal(v.ngroups, 2);
    assert_string_equal(v.groups[0].fault, "500");
    assert_int_equal(v.groups[0].result, MOCK_PASS);
    assert_string_equal(v.groups[1].fault, "503");
    assert_int_equal(v.groups[1].result, MOCK_FAIL);
    mock_verdict_free(&v);
}

/* ---- bounded attempts ---- */

static void verdict_fails_a_client_that_keeps_retrying_and_nothing_else(void **state) {
    (void)state;
    tlog l = {.n = 0};
    for (int i = 0; i < 11; i++) add(&l, "k", "m", 503, i * 100.0, 1);
    mock_verdict v = judge(&l);
    only_fails(&v, MOCK_RULE_BOUNDED);
    assert_string_equal(v.req[0].why[MOCK_RULE_BOUNDED], "11 attempts, more than 10");
    mock_verdict_free(&v);
    l.n = 10;
    v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_BOUNDED], MOCK_PASS);
    mock_verdict_free(&v);
    mock_verdict_config c = {.max_attempts = 3};
    v = judge_with(&l, &c);
    assert_int_equal(v.rule[MOCK_RULE_BOUNDED], MOCK_FAIL);
    mock_verdict_free(&v);
    l.n = 1;
    l.e[0].status = 200;
    v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_BOUNDED], MOCK_NA); /* nothing failed: nothing to bound */
    mock_verdict_free(&v);
}

/* ---- streams ---- */

static mock_attempt *broken_stream(tlog *l, const char *key, int64_t tokens, double at) {
    mock_attempt *a = add(l, key, "m", 200, at, 1);
    a->stream = a->broken = true;
    a->tokens = tokens;
    return a;
}

static void verdict_fails_a_stream_started_again_after_tokens_and_nothing_else(void **state) {
    (void)state;
    tlog l = {.n = 0};
    broken_stream(&l, "k", 3, 0);
    add(&l, "k", "m", 200, 100, 1)->stream = true;
    mock_verdict v = judge(&l);
    only_fails(&v, MOCK_RULE_STREAM);
    assert_string_equal(v.req[0].why[MOCK_RULE_STREAM],
                        "the stream of seq 0 broke after 3 tokens; seq 1 started it again");
    mock_verdict_free(&v);
}

static void verdict_lets_a_stream_without_tokens_be_retried(void **state) {
    (void)state;
    tlog l = {.n = 0};
    broken_stream(&l, "k", 0, 0); /* an in-band error before any content */
    add(&l, "k", "m", 200, 100, 1);
    broken_stream(&l, "left", 4, 0); /* broke after tokens, and left alone: a pass */
    mock_verdict v = judge(&l);
    assert_int_equal(v.req[0].rule[MOCK_RULE_STREAM], MOCK_NA);
    assert_int_equal(v.req[1].rule[MOCK_RULE_STREAM], MOCK_PASS);
    assert_string_equal(mock_verdict_result(&v), "pass");
    mock_verdict_free(&v);
}

/* ---- fallback ---- */

static void verdict_expects_a_fallback_only_when_told(void **state) {
    (void)state;
    tlog l = {.n = 0};
    for (int i = 0; i < 3; i++) add(&l, "stays", "m", 503, i * 600.0, 1);
    for (int i = 0; i < 3; i++) add(&l, "moves", "m", 503, i * 600.0, 1);
    add(&l, "moves", "backup", 200, 2000, 1);
    add(&l, "fine", "m", 200, 0, 1);
    mock_verdict v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_FALLBACK], MOCK_NA);
    mock_verdict_free(&v);
    mock_verdict_config c = {.expect_fallback = true};
    v = judge_with(&l, &c);
    assert_int_equal(v.req[0].rule[MOCK_RULE_FALLBACK], MOCK_NA); /* "fine" */
    assert_int_equal(v.req[1].rule[MOCK_RULE_FALLBACK], MOCK_PASS);
    assert_string_equal(v.req[1].why[MOCK_RULE_FALLBACK], "seq 6 moved to backup");
    assert_int_equal(v.req[2].rule[MOCK_RULE_FALLBACK], MOCK_FAIL);
    only_fails(&v, MOCK_RULE_FALLBACK);
    mock_verdict_free(&v);
}

/* ---- outputs ---- */

/* Requests that all succeeded exercise no rule: the log says nothing of how the client handles
 * a failure, so the verdict is inconclusive (exit 3), not a pass that would hold for any client. */
static void verdict_with_no_rule_exercised_is_inconclusive(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "a", "m", 200, 0, 1);
    add(&l, "b", "m", 200, 5, 1);
    mock_verdict v = judge(&l);
    for (int r = 0; r < MOCK_RULES; r++) assert_int_equal(v.rule[r], MOCK_NA);
    assert_string_equal(mock_verdict_result(&v), "inconclusive");
    assert_non_null(strstr(mock_verdict_reason(&v), "no rule was exercised"));
    util_buf j = {0};
    mock_verdict_junit(&v, &j);
    /* attempt_log fails: a JUnit of skips alone would read green in CI */
    assert_non_null(strstr(j.p, "tests=\"7\" failures=\"1\" skipped=\"6\""));
    assert_non_null(strstr(j.p, "<failure message=\"inconclusive: no rule was exercised"));
    util_buf_free(&j);
    mock_verdict_free(&v);
    /* one failure the client left alone exercises bounded_attempts: a pass */
    add(&l, "c", "m", 429, 10, 1);
    v = judge(&l);
    assert_int_equal(v.rule[MOCK_RULE_BOUNDED], MOCK_PASS);
    assert_string_equal(mock_verdict_result(&v), "pass");
    assert_string_equal(mock_verdict_reason(&v), "");
    mock_verdict_free(&v);
}

static void verdict_json_and_junit_name_the_failure(void **state) {
    (void)state;
    tlog l = {.n = 0};
    add(&l, "k<1>", "m", 400, 0, 1);
    add(&l, "k<1>", "m", 400, 2, 1);
    mock_verdict v = judge(&l);
    util_buf j = {0}, x = {0};
    mock_verdict_json(&v, &j);
    mock_verdict_junit(&v, &x);
    assert_non_null(strstr(j.p, "{\"verdict\":\"fail\",\"reason\":\"\",\"complete\":true,"));
    assert_non_null(strstr(j.p, "\"retry_only_retryable\":{\"result\":\"fail\",\"passed\":0,"
                                "\"failed\":1,"));
    assert_non_null(strstr(j.p, "\"backoff_jitter\":{\"result\":\"n/a\""));
    assert_non_null(strstr(j.p, "\"key\":\"k<1>\""));
    assert_non_null(strstr(x.p, "tests=\"7\" failures=\"1\" skipped=\"4\""));
    assert_non_null(strstr(x.p, "name=\"retry_only_retryable\">\n      <failure message=\"1 of 1"));
    assert_non_null(strstr(x.p, "key k&lt;1&gt;: seq 1 retried the 400 of seq 0"));
    assert_non_null(strstr(x.p, "name=\"honours_retry_after\">\n      <skipped"));
    util_buf_free(&j);
    util_buf_free(&x);
    mock_verdict_free(&v);
}

/* ---- a saved log ---- */

static void verdict_reads_back_the_log_the_mock_writes(void **state) {
    (void)state;
    mock_attempts a;
    assert_int_equal(mock_attempts_init(&a, 4), FB_OK);
    mock_attempt *e = mock_attempts_add(&a);
    snprintf(e->key, sizeof e->key, "k");
    snprintf(e->model, sizeof e->model, "m");
    e->inference = e->stream = e->broken = true;
    e->status = 200;
    e->real_us = 1500;
    e->sent_us = 2500;
    e->tokens = 3;
    e = mock_attempts_add(&a);
    e->status = 429;
    e->retry_after_us = 2 * S;
    e->should_retry = 0;
    e->retry_count = 1;
    e->client = 0x00f0e1d2c3b4a596ull;
    util_buf b = {0};
    mock_attempts_json(&a, 60, &b);
    mock_attempt *got;
    size_t n;
    uint64_t dropped;
    double scale;
    mock_parse_error err;
    assert_int_equal(mock_verdict_read_log(b.p, b.len, 100, &got, &n, &dropped, &scale, &err),
                     FB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(dropped, 0);
    assert_true(scale == 60);
    assert_string_equal(got[0].key, "k");
    assert_true(got[0].inference && got[0].stream && got[0].broken);
    assert_int_equal(got[0].real_us, 1500);
    assert_int_equal(got[0].sent_us, 2500);
    assert_int_equal(got[0].tokens, 3);
    assert_int_equal(got[0].retry_after_us, -1);
    assert_int_equal(got[1].retry_after_us, 2 * S);
    assert_int_equal(got[1].should_retry, 0);
    assert_int_equal(got[1].retry_count, 1);
    assert_int_equal(got[1].tokens, -1);
    assert_int_equal(got[1].key[0], '\0');
    assert_true(got[0].client == 0 && got[1].client == 0x00f0e1d2c3b4a596ull);
    assert_non_null(strstr(b.p, "\"client\":\"00f0e1d2c3b4a596\""));
    free(got);
    util_buf_free(&b);
    mock_attempts_free(&a);
}

static void bad_log(const char *json, const char *path, const char *msg) {
    mock_attempt *got = NULL;
    size_t n;
    uint64_t dropped;
    double scale;
    mock_parse_error err;
    int rc = mock_verdict_read_log(json, strlen(json), 100, &got, &n, &dropped, &scale, &err);
    if (rc != FB_EINVAL) fail_msg("accepted: %s", json);
    assert_string_equal(err.path, path);
    assert_string_equal(err.msg, msg);
    assert_null(got);
}

#define ENTRY                                                                                      \
    "\"seq\":0,\"t_ms\":0,\"real_ms\":0,\"method\":\"POST\",\"path\":\"/v1/chat/completions\","    \
    "\"model\":\"m\",\"stream\":false,\"attempt\":true,\"retry_count\":null,\"key\":null,"         \
    "\"status\":200,\"latency_ms\":null,\"fault\":null,\"sent_ms\":1,\"retry_after_ms\":null,"     \
    "\"should_retry\":null,\"tokens\":null"
#define HEAD "{\"total\":1,\"dropped\":0,\"time_scale\":1,\"entries\":[{" ENTRY

static void verdict_refuses_a_bad_log_naming_the_place(void **state) {
    (void)state;
    bad_log("{\"total\":", "", "not valid JSON (at byte 8)");
    bad_log("[]", "", "expected an object (the answer of GET /__fusebox/log)");
    bad_log("{\"totl\":1}", "", "unknown key 'totl' (did you mean 'total'?)");
    bad_log("{\"total\":1,\"dropped\":0,\"time_scale\":0,\"entries\":[]}", "time_scale",
            "0 is out of range [1e-09, 1000000000]");
    bad_log(HEAD ",\"broken\":false,\"stauts\":1}]}", "entries[0]",
            "unknown key 'stauts' (did you mean 'status'?)");
    bad_log(HEAD "}]}", "entries[0].broken", "missing");
    bad_log(HEAD ",\"broken\":1}]}", "entries[0].broken", "expected a boolean");
    bad_log(HEAD ",\"broken\":false,\"client\":\"0f\"}]}", "entries[0].client",
            "expected 16 hex digits (0-9, a-f) or null");
    bad_log("{\"total\":1,\"dropped\":0,\"time_scale\":1,\"entries\":[{" ENTRY
            ",\"broken\":false},{" ENTRY ",\"broken\":false}]}",
            "entries[1]", "seq 0 after 0: entries are oldest first");
}

/* A saved log whose JSON tree does not fit in memory is FB_ENOMEM saying so, not "not valid
 * JSON" (T3-9). 2 MB of a padded log (4 bytes a value, within the values' cap) needs about
 * 40 MB of tree; a child process gets 16 MB of address space more than it holds. */
typedef struct big_log {
    const char *text;
    size_t len;
} big_log;

static void read_big_log(void *ctx, char *out, size_t outlen) {
    const big_log *b = ctx;
    mock_attempt *got = NULL;
    size_t k = 0;
    uint64_t dropped = 0;
    double scale = 1;
    mock_parse_error err = {{0}, {0}};
    int rc = mock_verdict_read_log(b->text, b->len, 100, &got, &k, &dropped, &scale, &err);
    snprintf(out, outlen, "%d %s", rc, err.msg);
}

static void verdict_log_out_of_memory_is_said(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* ASan reserves terabytes of address space: RLIMIT_AS cannot be set under it */
#endif
    size_t n = 500000, len = 0;
    char *text = malloc(4 * n + 100);
    assert_non_null(text);
    len =
        (size_t)sprintf(text, "{\"total\":0,\"dropped\":0,\"time_scale\":1,\"entries\":[],\"x\":[");
    for (size_t i = 0; i < n; i++, len += 4) memcpy(text + len, "0,  ", 4);
    memcpy(text + len, "0]}", 4);
    len += 3;
    big_log big = {text, len};
    char got[600] = "";
    th_in_small_memory(read_big_log, &big, got, sizeof got);
    char want[100];
    snprintf(want, sizeof want, "%d out of memory building the JSON tree of a log of %zu bytes",
             FB_ENOMEM, len);
    if (strncmp(got, want, strlen(want)) != 0) fail_msg("%s", got);
    /* with the memory, the same log is read and refused for its key */
    mock_attempt *e = NULL;
    size_t ne = 0;
    uint64_t dropped = 0;
    double scale = 1;
    mock_parse_error err = {{0}, {0}};
    assert_int_equal(mock_verdict_read_log(text, len, 100, &e, &ne, &dropped, &scale, &err),
                     FB_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'x'"));
    free(text);
}

/* ---- the log's snapshot (what the verdict and the log endpoints judge and write) ---- */

static void add_status(mock_attempts *a, int status) {
    mock_attempt *e = mock_attempts_add(a);
    e->status = status;
    e->real_us = (fb_time_us)e->seq * 1000;
    snprintf(e->key, sizeof e->key, "k%llu", (unsigned long long)e->seq);
}

static void a_snapshot_is_the_log_of_the_instant_it_began(void **state) {
    (void)state;
    mock_attempts a;
    assert_int_equal(mock_attempts_init(&a, 8), FB_OK);
    for (int i = 0; i < 10; i++) add_status(&a, 200 + i); /* wrapped: seqs 2..9 kept */
    util_buf then = {0};
    mock_attempts_json(&a, 1, &then);
    mock_attempts_snap snap;
    assert_int_equal(mock_attempts_snap_alloc(&a, &snap), FB_OK);
    mock_attempts_snap_begin(&a, &snap);
    assert_int_equal(snap.first, 2);
    assert_int_equal(snap.n, 8);
    assert_false(mock_attempts_snap_step(&a, 3)); /* seqs 2..4 copied */
    /* between the chunks: an entry copied and one not yet completed, the ring wrapping over
     * copied and uncopied ones, then a reset and a new log over the old slots */
    mock_attempts_get(&a, 3)->status = 500;
    mock_attempts_get(&a, 6)->status = 503;
    strcpy(mock_attempts_get(&a, 7)->fault, "faults[0].outage");
    for (int i = 0; i < 4; i++) add_status(&a, 429); /* overwrites seqs 2..5 */
    assert_false(mock_attempts_snap_step(&a, 1));
    mock_attempts_get(&a, 9)->status = 504;
    mock_attempts_clear(&a); /* the snapshot takes the rest first */
    assert_null(a.snap);
    for (int i = 0; i < 9; i++) add_status(&a, 418);
    assert_true(mock_attempts_snap_step(&a, 100));
    util_buf got = {0};
    mock_attempts_snap_json(&snap, 1, &got);
    assert_string_equal(got.p, then.p); /* byte for byte the log when it began */
    /* the next one sees the new log */
    mock_attempts_snap_begin(&a, &snap);
    assert_true(mock_attempts_snap_step(&a, 100));
    assert_int_equal(snap.first, 1);
    assert_int_equal(snap.n, 8);
    assert_int_equal(snap.e[0].status, 418);
    util_buf now = {0};
    mock_attempts_json(&a, 1, &now);
    util_buf_free(&got);
    mock_attempts_snap_json(&snap, 1, &got);
    assert_string_equal(got.p, now.p);
    /* an empty log: nothing to take, nothing held */
    mock_attempts_clear(&a);
    mock_attempts_snap_begin(&a, &snap);
    assert_null(a.snap);
    assert_true(mock_attempts_snap_step(&a, 1));
    assert_int_equal(snap.n, 0);
    util_buf_free(&then);
    util_buf_free(&got);
    util_buf_free(&now);
    mock_attempts_snap_free(&snap);
    mock_attempts_free(&a);
}

/* The verdict the endpoint gives against the one of the log it serves, judged whole. */
static void endpoint_verdict_as_the_saved_log_says(const fixture *f) {
    resp lg, vd;
    th_req_full(&lg, f->base, "GET", "/__fusebox/log", NULL, TIMEOUT_MS, NULL);
    th_req_full(&vd, f->base, "GET", "/__fusebox/verdict", NULL, TIMEOUT_MS, NULL);
    assert_int_equal(lg.status, 200);
    assert_int_equal(vd.status, 200);
    mock_attempt *e;
    size_t n;
    uint64_t dropped;
    double scale;
    mock_parse_error err;
    assert_int_equal(
        mock_verdict_read_log(lg.body.p, lg.body.len, 100000, &e, &n, &dropped, &scale, &err),
        FB_OK);
    mock_verdict_config c = {.time_scale = scale};
    mock_verdict v;
    assert_int_equal(mock_verdict_judge(e, n, dropped, &c, &v), FB_OK);
    util_buf want = {0};
    mock_verdict_json(&v, &want);
    assert_string_equal(vd.body.p, want.p);
    util_buf_free(&want);
    mock_verdict_free(&v);
    free(e);
    th_resp_free(&lg);
    th_resp_free(&vd);
}

static void the_verdict_endpoint_judges_a_scripted_run_as_before(void **state) {
    (void)state;
    /* 300 entries, more than one chunk of the snapshot: in a log of 10000, then of 200 */
    const size_t caps[] = {0, 200};
    for (size_t k = 0; k < 2; k++) {
        mock_config cfg = {.log_capacity = caps[k]};
        fixture *f = th_start(&cfg);
        for (int i = 0; i < 180; i++) {
            char key[64], fault[64];
            snprintf(key, sizeof key, "x-fusebox-key: k%d", i);
            snprintf(fault, sizeof fault, "x-fusebox-fault: %s",
                     i % 3 == 0   ? "429-retry-after-ms-1"
                     : i % 3 == 1 ? "503"
                                  : "400");
            const char *h1[] = {key, fault, NULL}, *h2[] = {key, NULL};
            resp r;
            th_post(&r, f->base, CHAT, OA_BODY "}", h1);
            th_resp_free(&r);
            if (i % 3 == 2) continue; /* a 400 left alone */
            th_post(&r, f->base, CHAT, OA_BODY "}", h2);
            assert_int_equal(r.status, 200);
            th_resp_free(&r);
        }
        endpoint_verdict_as_the_saved_log_says(f);
        resp vd;
        th_req_full(&vd, f->base, "GET", "/__fusebox/verdict", NULL, TIMEOUT_MS, NULL);
        /* 180 requests, 300 attempts: all of them, or the 200 the small log kept */
        const char *want = caps[k] == 0 ? "\"complete\":true,\"attempts\":300,\"dropped\":0,"
                                        : "\"complete\":false,\"attempts\":200,\"dropped\":100,";
        if (strstr(vd.body.p, want) == NULL) fail_msg("%s", vd.body.p);
        th_resp_free(&vd);
        th_stop(f);
    }
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        /* first: a process that has built and freed no big tree (its child's limit) */
        cmocka_unit_test(verdict_log_out_of_memory_is_said),
        cmocka_unit_test(a_snapshot_is_the_log_of_the_instant_it_began),
        cmocka_unit_test(the_verdict_endpoint_judges_a_scripted_run_as_before),
        cmocka_unit_test(verdict_groups_attempts_by_key_then_by_sdk_retry_count),
        cmocka_unit_test(verdict_skips_what_is_not_an_attempt_and_is_inconclusive_without_any),
        cmocka_unit_test(verdict_is_inconclusive_when_the_log_lost_entries),
        cmocka_unit_test(verdict_fails_a_retried_400_and_nothing_else),
        cmocka_unit_test(verdict_passes_each_client_error_left_alone_or_taken_elsewhere),
        cmocka_unit_test(verdict_reads_x_should_retry_both_ways),
        cmocka_unit_test(verdict_fails_a_retry_before_its_retry_after_and_nothing_else),
        cmocka_unit_test(verdict_is_inconclusive_when_keyless_retries_could_be_anothers),
        cmocka_unit_test(verdict_tells_keyless_clients_apart_by_what_they_send),
        cmocka_unit_test(verdict_judges_keyless_retries_every_candidate_judges_alike),
        cmocka_unit_test(verdict_measures_retry_after_from_the_answer_with_its_slack),
        cmocka_unit_test(verdict_scales_retry_after_by_the_time_scale),
        cmocka_unit_test(verdict_does_not_pass_a_retry_after_within_the_slack),
        cmocka_unit_test(verdict_fails_clients_that_all_wait_the_same_and_nothing_else),
        cmocka_unit_test(verdict_passes_a_spread_of_waits),
        cmocka_unit_test(verdict_judges_no_jitter_from_too_few_clients_or_a_retry_after),
        cmocka_unit_test(verdict_does_not_fail_jitter_that_few_clients_cannot_tell),
        cmocka_unit_test(verdict_groups_waits_by_fault_and_retry_number),
        cmocka_unit_test(verdict_fails_a_client_that_keeps_retrying_and_nothing_else),
        cmocka_unit_test(verdict_fails_a_stream_started_again_after_tokens_and_nothing_else),
        cmocka_unit_test(verdict_lets_a_stream_without_tokens_be_retried),
        cmocka_unit_test(verdict_expects_a_fallback_only_when_told),
        cmocka_unit_test(verdict_with_no_rule_exercised_is_inconclusive),
        cmocka_unit_test(verdict_json_and_junit_name_the_failure),
        cmocka_unit_test(verdict_reads_back_the_log_the_mock_writes),
        cmocka_unit_test(verdict_refuses_a_bad_log_naming_the_place),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
