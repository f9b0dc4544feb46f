/* cmd_verdict.c - 'fusebox verdict LOG': judge a client from a saved mock attempt log. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "mockserver/verdict.h"

static const char usage_text[] =
    "usage: fusebox verdict LOG [--json FILE] [--junit FILE] [--max-attempts N]\n"
    "                           [--expect-fallback] [--quiet]\n"
    "\n"
    "Judge the client under test from a `fusebox mock` attempt log: LOG is the answer of\n"
    "GET /__fusebox/log saved to a file ('-': standard input). Per logical request (the\n"
    "attempts sharing an x-fusebox-key, or an SDK's numbered retries) and overall:\n"
    "  retry_only_retryable  no retry of a 400/401/403/404/422 or of x-should-retry: false\n"
    "  honours_retry_after   a retry waits at least the Retry-After it was told\n"
    "  backoff_jitter        clients retrying the same fault do not all wait the same\n"
    "  bounded_attempts      at most --max-attempts attempts per request (default 10)\n"
    "  no_stream_restart     no new attempt once a stream that had sent tokens broke\n"
    "  falls_back            with --expect-fallback: a request that failed on its model\n"
    "                        moved to another\n"
    "A running mock serves the same at GET /__fusebox/verdict (?format=junit).\n"
    "\n"
    "  --json FILE      the verdict as JSON ('-': standard output)\n"
    "  --junit FILE     the verdict as JUnit XML, one test case per rule\n"
    "  --max-attempts N attempts a request may make (default 10)\n"
    "  --expect-fallback  a request that fails on its model should try another\n"
    "  --quiet          no summary on standard output\n"
    "\n"
    "Exit codes: 0 every rule held, 1 a rule was broken, 2 bad input or usage,\n"
    "3 inconclusive (no attempts in the log, no rule exercised: no request met a\n"
    "failure, keyless retries that could be several requests', too few clients'\n"
    "waits to tell a narrow jitter from none, or the log lost entries).\n"
    "See docs/mock.md (\"The verdict\").\n";

#define LOG_FILE_MAX ((size_t)1 << 30)
#define LOG_ENTRIES_MAX 10000000u /* --log-capacity's largest */
#define SUMMARY_FAILURES 5        /* requests listed per broken rule */

typedef struct opts {
    const char *log, *json, *junit;
    mock_verdict_config cfg;
    bool quiet;
} opts;

static int parse(int argc, char **argv, opts *o) {
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (cli_opt(argc, argv, &i, NULL, "--json", &v)) {
            if ((o->json = v) == NULL) return cli_missing("verdict", "--json");
        } else if (cli_opt(argc, argv, &i, NULL, "--junit", &v)) {
            if ((o->junit = v) == NULL) return cli_missing("verdict", "--junit");
        } else if (cli_opt(argc, argv, &i, NULL, "--max-attempts", &v)) {
            uint64_t n;
            if (v == NULL) return cli_missing("verdict", "--max-attempts");
            if (cli_parse_u64(v, &n) != 0 || n < 1 || n > 1000000)
                return cli_bad("verdict",
                               "--max-attempts: '%s' is not a whole number in "
                               "[1, 1000000]",
                               v);
            o->cfg.max_attempts = (unsigned)n;
        } else if (strcmp(argv[i], "--expect-fallback") == 0) {
            o->cfg.expect_fallback = true;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_bad("verdict", "unknown option '%s'", argv[i]);
        } else if (o->log != NULL) {
            return cli_bad("verdict", "one LOG only ('%s' and '%s')", o->log, argv[i]);
        } else {
            o->log = argv[i];
        }
    }
    return o->log == NULL ? cli_bad("verdict", "no LOG (see 'fusebox verdict --help')") : CLI_OK;
}

static int write_out(const char *path, const util_buf *b) {
    bool out = strcmp(path, "-") == 0;
    FILE *f = out ? stdout : fopen(path, "w");
    if (f == NULL) return cli_bad("verdict", "%s: %s", path, strerror(errno));
    bool ok = fwrite(b->p, 1, b->len, f) == b->len;
    ok = (out ? fflush(f) : fclose(f)) == 0 && ok;
    return ok ? CLI_OK : cli_bad("verdict", "%s: cannot write", path);
}

static void summary(const mock_verdict *v) {
    printf("verdict: %s (%zu request%s, %llu attempt%s%s%s)\n", mock_verdict_result(v), v->nreq,
           v->nreq == 1 ? "" : "s", (unsigned long long)v->attempts, v->attempts == 1 ? "" : "s",
           mock_verdict_reason(v)[0] ? "; " : "", mock_verdict_reason(v));
    static const char *const word[] = {"n/a", "pass", "FAIL"};
    for (int r = 0; r < MOCK_RULES; r++) {
        printf("  %-21s %-4s  %u passed, %u failed\n", mock_rule_name((mock_rule)r),
               word[v->rule[r]], v->passed[r], v->failed[r]);
        for (size_t i = 0, n = 0; i < v->nreq && v->failed[r] > 0; i++) {
            const mock_verdict_request *q = &v->req[i];
            if (q->rule[r] != MOCK_FAIL) continue;
            if (n++ == SUMMARY_FAILURES) {
                printf("      ... and %u more\n", v->failed[r] - SUMMARY_FAILURES);
                break;
            }
            if (q->key[0] != '\0')
                printf("      key %s: %s\n", q->key, q->why[r]);
            else
                printf("      seq %llu: %s\n", (unsigned long long)q->first_seq, q->why[r]);
        }
    }
}

/* The log judged, written out; the exit code by the verdict. */
static int judge(const opts *o, const mock_attempt *e, size_t n, uint64_t dropped) {
    mock_verdict v;
    if (mock_verdict_judge(e, n, dropped, &o->cfg, &v) != FB_OK)
        return cli_bad("verdict", "out of memory");
    int rc = CLI_OK;
    util_buf b = {0};
    if (o->json != NULL) {
        mock_verdict_json(&v, &b);
        rc = b.err ? cli_bad("verdict", "out of memory") : write_out(o->json, &b);
        b.len = 0;
    }
    if (rc == CLI_OK && o->junit != NULL) {
        mock_verdict_junit(&v, &b);
        rc = b.err ? cli_bad("verdict", "out of memory") : write_out(o->junit, &b);
    }
    util_buf_free(&b);
    if (!o->quiet) summary(&v);
    const char *res = mock_verdict_result(&v);
    mock_verdict_free(&v);
    if (rc != CLI_OK) return rc;
    return strcmp(res, "pass") == 0   ? CLI_OK
           : strcmp(res, "fail") == 0 ? CLI_EXPECT_FAILED
                                      : CLI_INCONCLUSIVE;
}

int cli_cmd_verdict(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        cli_help_puts(usage_text, stdout);
        return CLI_OK;
    }
    opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc != CLI_OK) return rc;
    size_t len = 0;
    char *text = cli_read_file(o.log, LOG_FILE_MAX, &len);
    if (text == NULL)
        return cli_bad("verdict", "%s: %s", o.log,
                       errno == EFBIG ? "larger than 1 GiB" : strerror(errno));
    mock_attempt *e = NULL;
    size_t n = 0;
    uint64_t dropped = 0;
    mock_parse_error err = {{0}, {0}};
    rc = mock_verdict_read_log(text, len, LOG_ENTRIES_MAX, &e, &n, &dropped, &o.cfg.time_scale,
                               &err);
    free(text);
    if (rc == FB_ENOMEM && err.msg[0] == '\0') return cli_bad("verdict", "out of memory");
    if (rc != FB_OK)
        return cli_bad("verdict", "%s: %s%s%s", o.log, err.path, err.path[0] ? ": " : "", err.msg);
    rc = judge(&o, e, n, dropped);
    free(e);
    return rc;
}
