/*
 * verdict_out.c - the verdict (verdict.h) as JSON and as JUnit XML: one test case per rule,
 * failing with the requests that broke it, skipped when nothing exercised it, and one for the
 * log itself (failing when it lost entries or holds no attempt).
 */
#include <stdio.h>
#include <string.h>

#include "mockserver/verdict.h"
#include "util/junit.h"

#define JUNIT_FAILURES_LISTED 20

static const char *judged(mock_judgement j) {
    return j == MOCK_PASS ? "pass" : j == MOCK_FAIL ? "fail" : "n/a";
}

static double ms(fb_time_us us) {
    return (double)us / 1e3;
}

static void config_json(const mock_verdict_config *c, mock_buf *out) {
    mock_buf_printf(out,
                    "\"config\":{\"time_scale\":%.15g,\"max_attempts\":%u,"
                    "\"retry_after_slack_ms\":%.3f,\"jitter_min_clients\":%u,"
                    "\"jitter_min_ms\":%.3f,\"jitter_min_fraction\":%.15g,\"expect_fallback\":%s}",
                    c->time_scale, c->max_attempts, ms(c->retry_after_slack_us),
                    c->jitter_min_clients, ms(c->jitter_min_us), c->jitter_min_fraction,
                    c->expect_fallback ? "true" : "false");
}

static void rules_json(const mock_verdict *v, mock_buf *out) {
    mock_buf_puts(out, "\"rules\":{");
    for (int r = 0; r < MOCK_RULES; r++) {
        mock_buf_printf(
            out, "%s\"%s\":{\"result\":\"%s\",\"passed\":%u,\"failed\":%u,\"rule\":", r ? "," : "",
            mock_rule_name((mock_rule)r), judged(v->rule[r]), v->passed[r], v->failed[r]);
        mock_buf_json_string(out, mock_rule_text((mock_rule)r));
        mock_buf_puts(out, "}");
    }
    mock_buf_puts(out, "}");
}

static void groups_json(const mock_verdict *v, mock_buf *out) {
    mock_buf_puts(out, "\"jitter_groups\":[");
    for (size_t i = 0; i < v->ngroups; i++) {
        const mock_verdict_group *g = &v->groups[i];
        mock_buf_printf(out, "%s{\"fault\":", i ? "," : "");
        mock_buf_json_string(out, g->fault);
        mock_buf_printf(out,
                        ",\"status\":%d,\"retry\":%u,\"clients\":%u,\"min_ms\":%.3f,"
                        "\"median_ms\":%.3f,\"max_ms\":%.3f,\"spread_ms\":%.3f,"
                        "\"needed_ms\":%.3f,\"result\":\"%s\"}",
                        g->status, g->retry, g->clients, ms(g->min_us), ms(g->median_us),
                        ms(g->max_us), ms(g->max_us - g->min_us), ms(g->needed_us),
                        judged(g->result));
    }
    mock_buf_puts(out, "]");
}

static mock_judgement request_result(const mock_verdict_request *q) {
    mock_judgement j = MOCK_NA;
    for (int r = 0; r < MOCK_RULES; r++)
        if (q->rule[r] > j) j = q->rule[r];
    return j;
}

static void request_json(const mock_verdict_request *q, mock_buf *out) {
    mock_buf_puts(out, "{\"key\":");
    if (q->key[0] == '\0')
        mock_buf_puts(out, "null");
    else
        mock_buf_json_string(out, q->key);
    mock_buf_puts(out, ",\"model\":");
    mock_buf_json_string(out, q->model);
    mock_buf_printf(out, ",\"first_seq\":%llu,\"attempts\":%zu,\"result\":\"%s\",\"rules\":{",
                    (unsigned long long)q->first_seq, q->attempts, judged(request_result(q)));
    for (int r = 0, n = 0; r < MOCK_RULES; r++) {
        if (q->rule[r] == MOCK_NA) continue;
        mock_buf_printf(out, "%s\"%s\":{\"result\":\"%s\",\"why\":", n++ ? "," : "",
                        mock_rule_name((mock_rule)r), judged(q->rule[r]));
        mock_buf_json_string(out, q->why[r]);
        mock_buf_puts(out, "}");
    }
    mock_buf_puts(out, "}}");
}

void mock_verdict_json(const mock_verdict *v, mock_buf *out) {
    mock_buf_printf(out, "{\"verdict\":\"%s\",\"reason\":", mock_verdict_result(v));
    mock_buf_json_string(out, mock_verdict_reason(v));
    mock_buf_printf(out, ",\"complete\":%s,\"attempts\":%llu,\"dropped\":%llu,\"requests\":%zu,",
                    v->dropped == 0 ? "true" : "false", (unsigned long long)v->attempts,
                    (unsigned long long)v->dropped, v->nreq);
    config_json(&v->cfg, out);
    mock_buf_puts(out, ",");
    rules_json(v, out);
    mock_buf_puts(out, ",");
    groups_json(v, out);
    mock_buf_puts(out, ",\"per_request\":[");
    for (size_t i = 0; i < v->nreq; i++) {
        if (i > 0) mock_buf_puts(out, ",");
        request_json(&v->req[i], out);
    }
    mock_buf_puts(out, "]}\n");
}

/* ---- JUnit ---- */

static void request_name(const mock_verdict_request *q, char *out, size_t cap) {
    if (q->key[0] != '\0')
        snprintf(out, cap, "key %s", q->key);
    else
        snprintf(out, cap, "seq %llu", (unsigned long long)q->first_seq);
}

static void rule_case(const mock_verdict *v, mock_rule r, mock_buf *out) {
    util_junit_case c = {.classname = "fusebox verdict", .name = mock_rule_name(r), .time_s = -1};
    mock_buf message = {0}, text = {0};
    if (v->rule[r] == MOCK_NA) {
        c.kind = "skipped";
        c.message = "no request exercised it";
    } else if (v->rule[r] == MOCK_FAIL) {
        mock_buf_printf(&message, "%u of %u requests broke it: %s", v->failed[r],
                        v->failed[r] + v->passed[r], mock_rule_text(r));
        c.kind = "failure";
        c.message = message.p != NULL ? message.p : "";
        char name[96];
        for (size_t i = 0, n = 0; i < v->nreq && n < JUNIT_FAILURES_LISTED; i++) {
            if (v->req[i].rule[r] != MOCK_FAIL) continue;
            n++;
            request_name(&v->req[i], name, sizeof name);
            mock_buf_printf(&text, "%s: %s\n", name, v->req[i].why[r]);
        }
        c.text = text.p != NULL ? text.p : "";
    }
    util_out o = mock_buf_out(out);
    util_junit_testcase(&o, &c, 0);
    mock_buf_free(&message);
    mock_buf_free(&text);
}

void mock_verdict_junit(const mock_verdict *v, mock_buf *out) {
    unsigned failures = 0, skipped = 0;
    for (int r = 0; r < MOCK_RULES; r++) {
        failures += v->rule[r] == MOCK_FAIL;
        skipped += v->rule[r] == MOCK_NA;
    }
    bool log_bad = v->attempts == 0 || v->dropped > 0;
    util_out o = mock_buf_out(out);
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
                                           .message = v->attempts == 0
                                                          ? "inconclusive: no attempts in the log"
                                                          : "inconclusive: the log lost its oldest "
                                                            "entries (--log-capacity)",
                                           .output = summary,
                                           .output_first = true},
                        0);
    for (int r = 0; r < MOCK_RULES; r++) rule_case(v, (mock_rule)r, out);
    util_junit_suite_close(&o);
    util_junit_close(&o);
}
