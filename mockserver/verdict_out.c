/*
 * verdict_out.c - the verdict (verdict.h) as JSON and as JUnit XML: one test case per rule,
 * failing with the requests that broke it, skipped when nothing exercised it, and one for the
 * log itself (failing when it lost entries or holds no attempt).
 */
#include <stdio.h>
#include <string.h>

#include "mockserver/verdict.h"
#include "util/json.h"
#include "util/junit.h"

#define JUNIT_FAILURES_LISTED 20

static const char *judged(mock_judgement j) {
    return j == MOCK_PASS ? "pass" : j == MOCK_FAIL ? "fail" : "n/a";
}

static double ms(fb_time_us us) {
    return (double)us / 1e3;
}

static void config_json(const mock_verdict_config *c, util_json *w) {
    util_json_open(w, "config", '{', UTIL_JSON_COMPACT);
    util_json_digits(w, "time_scale", c->time_scale, 15);
    util_json_u64(w, "max_attempts", c->max_attempts);
    util_json_fixed(w, "retry_after_slack_ms", ms(c->retry_after_slack_us), 3);
    util_json_u64(w, "jitter_min_clients", c->jitter_min_clients);
    util_json_fixed(w, "jitter_min_ms", ms(c->jitter_min_us), 3);
    util_json_digits(w, "jitter_min_fraction", c->jitter_min_fraction, 15);
    util_json_bool(w, "expect_fallback", c->expect_fallback);
    util_json_close(w);
}

static void rules_json(const mock_verdict *v, util_json *w) {
    util_json_open(w, "rules", '{', UTIL_JSON_COMPACT);
    for (int r = 0; r < MOCK_RULES; r++) {
        util_json_open(w, mock_rule_name((mock_rule)r), '{', UTIL_JSON_COMPACT);
        util_json_str(w, "result", judged(v->rule[r]));
        util_json_u64(w, "passed", v->passed[r]);
        util_json_u64(w, "failed", v->failed[r]);
        util_json_str(w, "rule", mock_rule_text((mock_rule)r));
        util_json_close(w);
    }
    util_json_close(w);
}

static void groups_json(const mock_verdict *v, util_json *w) {
    util_json_open(w, "jitter_groups", '[', UTIL_JSON_COMPACT);
    for (size_t i = 0; i < v->ngroups; i++) {
        const mock_verdict_group *g = &v->groups[i];
        util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
        util_json_str(w, "fault", g->fault);
        util_json_i64(w, "status", g->status);
        util_json_u64(w, "retry", g->retry);
        util_json_u64(w, "clients", g->clients);
        util_json_fixed(w, "min_ms", ms(g->min_us), 3);
        util_json_fixed(w, "median_ms", ms(g->median_us), 3);
        util_json_fixed(w, "max_ms", ms(g->max_us), 3);
        util_json_fixed(w, "spread_ms", ms(g->max_us - g->min_us), 3);
        util_json_fixed(w, "needed_ms", ms(g->needed_us), 3);
        util_json_str(w, "result", judged(g->result));
        util_json_close(w);
    }
    util_json_close(w);
}

static mock_judgement request_result(const mock_verdict_request *q) {
    mock_judgement j = MOCK_NA;
    for (int r = 0; r < MOCK_RULES; r++)
        if (q->rule[r] > j) j = q->rule[r];
    return j;
}

static void request_json(const mock_verdict_request *q, util_json *w) {
    util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_str(w, "key", q->key[0] == '\0' ? NULL : q->key);
    util_json_str(w, "model", q->model);
    util_json_u64(w, "first_seq", q->first_seq);
    util_json_u64(w, "attempts", q->attempts);
    util_json_str(w, "result", judged(request_result(q)));
    util_json_open(w, "rules", '{', UTIL_JSON_COMPACT);
    for (int r = 0; r < MOCK_RULES; r++) {
        if (q->rule[r] == MOCK_NA) continue;
        util_json_open(w, mock_rule_name((mock_rule)r), '{', UTIL_JSON_COMPACT);
        util_json_str(w, "result", judged(q->rule[r]));
        util_json_str(w, "why", q->why[r]);
        util_json_close(w);
    }
    util_json_close(w);
    util_json_close(w);
}

void mock_verdict_json(const mock_verdict *v, util_buf *out) {
    util_json w;
    util_json_init(&w, util_buf_out(out), 0);
    util_json_open(&w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_str(&w, "verdict", mock_verdict_result(v));
    util_json_str(&w, "reason", mock_verdict_reason(v));
    util_json_bool(&w, "complete", v->dropped == 0);
    util_json_u64(&w, "attempts", v->attempts);
    util_json_u64(&w, "dropped", v->dropped);
    util_json_u64(&w, "requests", v->nreq);
    config_json(&v->cfg, &w);
    rules_json(v, &w);
    groups_json(v, &w);
    util_json_open(&w, "per_request", '[', UTIL_JSON_COMPACT);
    for (size_t i = 0; i < v->nreq; i++) request_json(&v->req[i], &w);
    util_json_close(&w);
    util_json_close(&w);
    util_json_text(&w, "\n");
}

/* ---- JUnit ---- */

static void request_name(const mock_verdict_request *q, char *out, size_t cap) {
    if (q->key[0] != '\0')
        snprintf(out, cap, "key %s", q->key);
    else
        snprintf(out, cap, "seq %llu", (unsigned long long)q->first_seq);
}

static void rule_case(const mock_verdict *v, mock_rule r, util_buf *out) {
    util_junit_case c = {.classname = "fusebox verdict", .name = mock_rule_name(r), .time_s = -1};
    util_buf message = {0}, text = {0};
    if (v->rule[r] == MOCK_NA) {
        c.kind = "skipped";
        c.message = "no request exercised it";
    } else if (v->rule[r] == MOCK_FAIL) {
        util_buf_printf(&message, "%u of %u requests broke it: %s", v->failed[r],
                        v->failed[r] + v->passed[r], mock_rule_text(r));
        c.kind = "failure";
        c.message = message.p != NULL ? message.p : "";
        char name[96];
        for (size_t i = 0, n = 0; i < v->nreq && n < JUNIT_FAILURES_LISTED; i++) {
            if (v->req[i].rule[r] != MOCK_FAIL) continue;
            n++;
            request_name(&v->req[i], name, sizeof name);
            util_buf_printf(&text, "%s: %s\n", name, v->req[i].why[r]);
        }
        c.text = text.p != NULL ? text.p : "";
    }
    util_out o = util_buf_out(out);
    util_junit_testcase(&o, &c, 0);
    util_buf_free(&message);
    util_buf_free(&text);
}

void mock_verdict_junit(const mock_verdict *v, util_buf *out) {
    unsigned failures = 0, skipped = 0;
    for (int r = 0; r < MOCK_RULES; r++) {
        failures += v->rule[r] == MOCK_FAIL;
        skipped += v->rule[r] == MOCK_NA;
    }
    /* inconclusive (no rule exercised, ambiguous keyless retries) fails it too: a JUnit of
       skips and passes would read green in CI */
    bool log_bad =
        v->attempts == 0 || v->dropped > 0 || strcmp(mock_verdict_result(v), "inconclusive") == 0;
    char why[600];
    snprintf(why, sizeof why, "inconclusive: %s",
             v->attempts == 0 ? "no attempts in the log"
             : v->dropped > 0 ? "the log lost its oldest entries (--log-capacity)"
                              : mock_verdict_reason(v));
    util_out o = util_buf_out(out);
    util_junit_suite all = {.name = "fusebox verdict",
                            .tests = MOCK_RULES + 1,
                            .failures = failures + log_bad,
                            .errors = -1,
                            .skipped = -1,
                            .time_s = -1};
    util_junit_open(&o, &all, 0);
    all.skipped = (int)skipped;
    util_junit_suite_open(&o, &all, 0);
    char summary[160];
    snprintf(summary, sizeof summary, "%llu attempts, %zu requests, %llu entries lost",
             (unsigned long long)v->attempts, v->nreq, (unsigned long long)v->dropped);
    util_junit_testcase(&o,
                        &(util_junit_case){.classname = "fusebox verdict",
                                           .name = "attempt_log",
                                           .time_s = -1,
                                           .kind = log_bad ? "failure" : NULL,
                                           .message = why,
                                           .output = summary,
                                           .output_first = true},
                        0);
    for (int r = 0; r < MOCK_RULES; r++) rule_case(v, (mock_rule)r, out);
    util_junit_suite_close(&o);
    util_junit_close(&o);
}
