/*
 * verdict.c - judging the client under test from the attempt log (verdict.h): the attempts
 * grouped into logical requests, each pair of consecutive attempts read as a retry (same model
 * and path) or a fallback (another one), the retries without a Retry-After collected by fault
 * and position to measure the spread between clients, then every rule summed up.
 */
#include "mockserver/verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

#define OPEN_CHAINS 64 /* keyless requests an SDK retry may still join */

static const char *const names[MOCK_RULES] = {"retry_only_retryable", "honours_retry_after",
                                              "backoff_jitter",       "bounded_attempts",
                                              "no_stream_restart",    "falls_back"};
static const char *const texts[MOCK_RULES] = {
    "no retry of a 400, 401, 403, 404 or 422 (context-length and content-policy errors are "
    "400s) or of an answer with x-should-retry: false",
    "a retry waits at least the Retry-After (retry-after-ms, retry-after, Gemini's RetryInfo) "
    "it was told",
    "clients retrying the same fault at the same retry do not all wait the same time",
    "at most max_attempts attempts per request",
    "no new attempt once a streamed answer that had sent tokens broke",
    "a request that failed on its model moved to another (only when a fallback is expected)"};

const char *mock_rule_name(mock_rule r) {
    return r < MOCK_RULES ? names[r] : "?";
}

const char *mock_rule_text(mock_rule r) {
    return r < MOCK_RULES ? texts[r] : "?";
}

static void copy(char *dst, size_t cap, const char *src) {
    snprintf(dst, cap, "%s", src);
    util_utf8_fix(dst);
}

/* ---- logical requests ---- */

typedef struct item {
    const mock_attempt *a;
    size_t gid;
    bool shared; /* a keyless retry more than one request could have made, each alike */
} item;

static int by_key_seq(const void *x, const void *y) {
    const item *a = x, *b = y;
    int c = strcmp(a->a->key, b->a->key);
    if (c != 0) return c;
    return a->a->seq < b->a->seq ? -1 : a->a->seq > b->a->seq;
}

static int by_gid_seq(const void *x, const void *y) {
    const item *a = x, *b = y;
    if (a->gid != b->gid) return a->gid < b->gid ? -1 : 1;
    return a->a->seq < b->a->seq ? -1 : a->a->seq > b->a->seq;
}

typedef struct chain {
    size_t gid;
    const mock_attempt *last;
} chain;

static fb_time_us answered_at(const mock_attempt *a) {
    return a->sent_us >= 0 ? a->sent_us : a->real_us;
}

static bool failed(const mock_attempt *a) {
    return a->status == 0 || a->status >= 400 || a->broken;
}

static bool non_retryable(const mock_attempt *a) {
    if (a->should_retry >= 0) return a->should_retry == 0;
    return a->status == 400 || a->status == 401 || a->status == 403 || a->status == 404 ||
           a->status == 422;
}

/* Retry a's wait after prev, and the least wait prev's answer told (-1: none). */
static fb_time_us waited(const mock_attempt *prev, const mock_attempt *a) {
    return a->real_us - answered_at(prev);
}

static fb_time_us told(const mock_attempt *prev, const mock_verdict_config *c) {
    return prev->retry_after_us < 0 ? -1
                                    : (fb_time_us)((double)prev->retry_after_us / c->time_scale);
}

/* Chain c's last attempt could be the one keyless attempt a retries: the same path and model,
 * the retry count one less, answered before a came. */
static bool may_take(const chain *c, const mock_attempt *a) {
    return a->retry_count > 0 && c->last->retry_count == a->retry_count - 1 &&
           strcmp(c->last->path, a->path) == 0 && strcmp(c->last->model, a->model) == 0 &&
           answered_at(c->last) <= a->real_us;
}

/* How every rule would judge a as the retry of prev, as bits: candidates that differ here
 * make the attribution matter. */
static unsigned judged_as(const mock_attempt *prev, const mock_attempt *a,
                          const mock_verdict_config *c) {
    fb_time_us need = told(prev, c);
    return (unsigned)failed(prev) | (unsigned)non_retryable(prev) << 1 |
           (unsigned)(need >= 0) << 2 |
           (unsigned)(need >= 0 && waited(prev, a) + c->retry_after_slack_us >= need) << 3 |
           (unsigned)(prev->stream && prev->broken && prev->tokens > 0) << 4;
}

/*
 * A keyless attempt's request: an SDK's numbered retry joins a chain that may take it
 * (may_take), else it starts its own. Of those, the chains whose last attempt has its
 * fingerprint (User-Agent and body: a retry sends both again) when any has, else all. One:
 * it is that chain's. Several (concurrent clients sending the same request): it joins the one
 * answered first (clients that wait alike retry in the order they were answered) and *shared
 * says its wait is not known for sure; when the rules would judge it differently as the retry
 * of each, every chain that could have taken it is marked ambiguous (amb[gid]): a failure
 * there is not proven.
 */
static size_t keyless_gid(chain *open, size_t *nopen, const mock_attempt *a, size_t *next_gid,
                          bool *amb, bool *shared, uint64_t *unsure,
                          const mock_verdict_config *cfg) {
    size_t n = *nopen < OPEN_CHAINS ? *nopen : OPEN_CHAINS;
    bool same = false;
    for (size_t i = 0; i < n; i++) {
        const chain *c = &open[(*nopen - 1 - i) % OPEN_CHAINS];
        if (may_take(c, a) && a->client != 0 && c->last->client == a->client) same = true;
    }
    chain *pick = NULL;
    size_t candidates = 0;
    unsigned sig = 0;
    bool alike = true;
    for (size_t i = 0; i < n; i++) {
        chain *c = &open[(*nopen - 1 - i) % OPEN_CHAINS];
        if (!may_take(c, a) || (same && c->last->client != a->client)) continue;
        unsigned j = judged_as(c->last, a, cfg);
        if (candidates++ == 0)
            sig = j;
        else if (j != sig)
            alike = false;
        if (pick == NULL || answered_at(c->last) < answered_at(pick->last) ||
            (answered_at(c->last) == answered_at(pick->last) && c->last->seq < pick->last->seq))
            pick = c;
    }
    *shared = candidates > 1;
    *unsure += !alike;
    if (!alike)
        for (size_t i = 0; i < n; i++) {
            const chain *c = &open[(*nopen - 1 - i) % OPEN_CHAINS];
            if (may_take(c, a) && (!same || c->last->client == a->client)) amb[c->gid] = true;
        }
    if (pick != NULL) {
        pick->last = a;
        return pick->gid;
    }
    chain *c = &open[*nopen % OPEN_CHAINS];
    (*nopen)++;
    c->gid = (*next_gid)++;
    c->last = a;
    return c->gid;
}

/* The attempts as items sorted by (request, seq); *ngroups requests; *amb (calloc'd, one per
 * request): its attempts could belong to another keyless request too. */
static int group(const mock_attempt *log, size_t n, const mock_verdict_config *cfg, item **out,
                 size_t *nitems, size_t *ngroups, bool **amb, uint64_t *unsure) {
    item *it = calloc(n ? n : 1, sizeof *it);
    chain *open = calloc(OPEN_CHAINS, sizeof *open);
    *amb = calloc(n ? n : 1, sizeof **amb);
    if (it == NULL || open == NULL || *amb == NULL) {
        free(it);
        free(open);
        free(*amb);
        return FB_ENOMEM;
    }
    size_t k = 0, next_gid = 0, nopen = 0;
    for (size_t i = 0; i < n; i++)
        if (log[i].inference && log[i].key[0] != '\0') it[k++].a = &log[i];
    qsort(it, k, sizeof *it, by_key_seq);
    for (size_t i = 0; i < k; i++)
        it[i].gid =
            i > 0 && strcmp(it[i].a->key, it[i - 1].a->key) == 0 ? it[i - 1].gid : next_gid++;
    for (size_t i = 0; i < n; i++) {
        if (!log[i].inference || log[i].key[0] != '\0') continue;
        it[k].a = &log[i];
        it[k].gid = keyless_gid(open, &nopen, &log[i], &next_gid, *amb, &it[k].shared, unsure, cfg);
        k++;
    }
    free(open);
    qsort(it, k, sizeof *it, by_gid_seq);
    *out = it;
    *nitems = k;
    *ngroups = next_gid;
    return FB_OK;
}

/* ---- one request ---- */

typedef struct sample {
    const char *fault;
    int status;
    unsigned retry;
    fb_time_us wait_us;
    size_t req;
} sample;

typedef struct judge {
    mock_verdict *v;
    sample *samples;
    size_t nsamples;
    bool ambiguous; /* the request being judged: its keyless attempts may be another's */
} judge;

static bool same_target(const mock_attempt *a, const mock_attempt *b) {
    return strcmp(a->model, b->model) == 0 && strcmp(a->path, b->path) == 0;
}

/* A judgement on a rule: a failure stays (with the first reason), a pass fills an empty one. */
static void mark(mock_verdict_request *q, mock_rule r, mock_judgement j, const char *fmt, ...) {
    if (q->rule[r] == MOCK_FAIL || (j == MOCK_PASS && q->rule[r] == MOCK_PASS)) return;
    q->rule[r] = j;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->why[r], sizeof q->why[r], fmt, ap);
    va_end(ap);
    util_utf8_fix(q->why[r]); /* the cap may cut a model's or a key's character in two */
}

static double ms(fb_time_us us) {
    return (double)us / 1e3;
}

/* A retry of prev: the rules on retries, or a sample of its backoff. */
static void judge_retry(judge *J, size_t qi, const mock_attempt *prev, const item *next_item,
                        unsigned retry) {
    mock_verdict_request *q = &J->v->req[qi];
    const mock_verdict_config *c = &J->v->cfg;
    const mock_attempt *next = next_item->a;
    fb_time_us wait = waited(prev, next);
    unsigned long long ps = (unsigned long long)prev->seq, ns = (unsigned long long)next->seq;
    if (non_retryable(prev)) {
        mark(q, MOCK_RULE_RETRYABLE, MOCK_FAIL, "seq %llu retried the %d of seq %llu%s", ns,
             prev->status, ps, prev->should_retry == 0 ? " (x-should-retry: false)" : "");
        return;
    }
    if (prev->retry_after_us >= 0) {
        fb_time_us need = told(prev, c);
        /* a wait within the slack (Retry-After: 0; 1 s at --time-scale 60, 16.7 ms) is met by
           any retry, honoured or not: nothing to judge, not a pass */
        if (need <= c->retry_after_slack_us) return;
        if (wait + c->retry_after_slack_us < need)
            mark(q, MOCK_RULE_RETRY_AFTER, MOCK_FAIL,
                 "seq %llu came %.1f ms after the %d of seq %llu, which said to wait %.1f ms", ns,
                 ms(wait), prev->status, ps, ms(need));
        else
            mark(q, MOCK_RULE_RETRY_AFTER, MOCK_PASS, "seq %llu waited %.1f ms of %.1f ms", ns,
                 ms(wait), ms(need));
        return;
    }
    if (J->ambiguous || next_item->shared) return; /* its wait may be another client's */
    sample *s = &J->samples[J->nsamples++];
    *s = (sample){prev->fault, prev->status, retry, wait, qi};
}

/* What the request's attempts say once all pairs are read. */
static void judge_end(judge *J, size_t qi, const item *it, size_t n, bool any_failed) {
    mock_verdict_request *q = &J->v->req[qi];
    const mock_verdict_config *c = &J->v->cfg;
    const mock_attempt *last = it[n - 1].a, *first = it[0].a;
    for (size_t j = 0; j < n; j++)
        if (failed(it[j].a) && non_retryable(it[j].a))
            mark(q, MOCK_RULE_RETRYABLE, MOCK_PASS, "the %d of seq %llu was not retried",
                 it[j].a->status, (unsigned long long)it[j].a->seq);
    if (last->stream && last->broken && last->tokens > 0)
        mark(q, MOCK_RULE_STREAM, MOCK_PASS,
             "the stream of seq %llu broke after %lld tokens; "
             "not started again",
             (unsigned long long)last->seq, (long long)last->tokens);
    if (any_failed || failed(last)) {
        if (n > c->max_attempts)
            mark(q, MOCK_RULE_BOUNDED, MOCK_FAIL, "%zu attempts, more than %u", n, c->max_attempts);
        else
            mark(q, MOCK_RULE_BOUNDED, MOCK_PASS, "%zu attempts", n);
    }
    if (!c->expect_fallback) return;
    for (size_t j = 1; j < n; j++)
        if (!same_target(first, it[j].a)) {
            mark(q, MOCK_RULE_FALLBACK, MOCK_PASS, "seq %llu moved to %s",
                 (unsigned long long)it[j].a->seq, it[j].a->model);
            return;
        }
    if (failed(last))
        mark(q, MOCK_RULE_FALLBACK, MOCK_FAIL,
             "failed on %s (%s) in %zu attempts and tried nothing else", first->model, first->path,
             n);
}

static bool q_fail_to_unknown(mock_verdict_request *q, mock_rule r) {
    if (q->rule[r] != MOCK_FAIL) return false;
    q->rule[r] = MOCK_NA;
    char why[MOCK_VERDICT_WHY];
    /* a long reason is cut to fit, a character the cut split mended (the result is looked at:
     * gcc at -O0 calls the cut an error otherwise) */
    if (snprintf(why, sizeof why, "not judged: keyless retries of concurrent clients (%s)",
                 q->why[r]) < 0)
        why[0] = '\0';
    util_utf8_fix(why);
    copy(q->why[r], sizeof q->why[r], why);
    return true;
}

static void judge_request(judge *J, size_t qi, const item *it, size_t n) {
    mock_verdict_request *q = &J->v->req[qi];
    copy(q->key, sizeof q->key, it[0].a->key);
    copy(q->model, sizeof q->model, it[0].a->model);
    q->first_seq = it[0].a->seq;
    q->attempts = n;
    bool any_failed = false;
    unsigned retry = 0;
    for (size_t j = 1; j < n; j++) {
        const mock_attempt *prev = it[j - 1].a, *next = it[j].a;
        if (!failed(prev)) continue; /* a whole answer: the next attempt is a new call */
        any_failed = true;
        if (prev->stream && prev->broken && prev->tokens > 0)
            mark(q, MOCK_RULE_STREAM, MOCK_FAIL,
                 "the stream of seq %llu broke after %lld tokens; seq %llu started it again",
                 (unsigned long long)prev->seq, (long long)prev->tokens,
                 (unsigned long long)next->seq);
        if (same_target(prev, next)) judge_retry(J, qi, prev, &it[j], ++retry);
    }
    judge_end(J, qi, it, n, any_failed);
    if (!J->ambiguous) return;
    /* which attempt was whose is not known: a failure is not proven, the verdict says so */
    for (int r = 0; r < MOCK_RULES; r++) q_fail_to_unknown(&J->v->req[qi], (mock_rule)r);
}

/* ---- the spread between clients ---- */

static int by_fault(const void *x, const void *y) {
    const sample *a = x, *b = y;
    int c = strcmp(a->fault, b->fault);
    if (c != 0) return c;
    if (a->status != b->status) return a->status < b->status ? -1 : 1;
    if (a->retry != b->retry) return a->retry < b->retry ? -1 : 1;
    return a->wait_us < b->wait_us ? -1 : a->wait_us > b->wait_us;
}

/*
 * How often n clients drawing their waits from the narrowest jitter of the official SDKs (a
 * quarter of the wait: 0.5 s x 2^k x (1 - 0.25 x random), so a width of median / 3.5) spread
 * no more than `spread`: the range of n uniforms, P(R <= x) = n x^(n-1) - (n-1) x^n. Three such
 * clients spread less than 5% of the median 8% of the time: a short spread of few clients is
 * not proof of no jitter, and fails only when chance would give it under JITTER_CHANCE.
 */
#define JITTER_CHANCE 0.01

static double narrow_jitter_chance(size_t n, fb_time_us spread, fb_time_us median) {
    if (median <= 0) return 0;
    double x = (double)spread / ((double)median / 3.5);
    if (x >= 1) return 1;
    double k = (double)n;
    return k * pow(x, k - 1) - (k - 1) * pow(x, k);
}

/* One run of samples (the same fault, status and retry; sorted by wait) as a group. */
static void judge_group(mock_verdict *v, const sample *s, size_t n) {
    const mock_verdict_config *c = &v->cfg;
    mock_verdict_group *g = &v->groups[v->ngroups++];
    memset(g, 0, sizeof *g);
    if (s->fault[0] != '\0')
        copy(g->fault, sizeof g->fault, s->fault);
    else
        snprintf(g->fault, sizeof g->fault, "status %d", s->status);
    g->status = s->status;
    g->retry = s->retry;
    g->clients = (unsigned)n;
    g->min_us = s[0].wait_us;
    g->max_us = s[n - 1].wait_us;
    g->median_us = n % 2 ? s[n / 2].wait_us : (s[n / 2 - 1].wait_us + s[n / 2].wait_us) / 2;
    fb_time_us frac = (fb_time_us)(c->jitter_min_fraction * (double)g->median_us);
    g->needed_us = frac > c->jitter_min_us ? frac : c->jitter_min_us;
    fb_time_us spread = g->max_us - g->min_us;
    g->result = spread >= g->needed_us ? MOCK_PASS : MOCK_FAIL;
    double chance = narrow_jitter_chance(n, spread, g->median_us);
    if (g->result == MOCK_FAIL && chance >= JITTER_CHANCE) {
        g->result = MOCK_NA;
        if (v->jitter_unsure++ == 0)
            snprintf(v->unsure, sizeof v->unsure,
                     "%u clients retried %.96s (retry %u) %.1f ms apart, under the %.1f ms needed, "
                     "but a jitter of a quarter of the wait (the official SDKs') spreads %u "
                     "clients so little %.0f%% of the time: more clients tell",
                     g->clients, g->fault, g->retry, ms(spread), ms(g->needed_us), g->clients,
                     100 * chance);
        return;
    }
    for (size_t i = 0; i < n; i++)
        mark(&v->req[s[i].req], MOCK_RULE_JITTER, g->result,
             "%u clients retried %s (retry %u) after %.1f to %.1f ms: a spread of %.1f ms, "
             "%s the %.1f ms needed",
             g->clients, g->fault, g->retry, ms(g->min_us), ms(g->max_us),
             ms(g->max_us - g->min_us), g->result == MOCK_PASS ? "at least" : "under",
             ms(g->needed_us));
}

static void judge_jitter(mock_verdict *v, sample *s, size_t n) {
    qsort(s, n, sizeof *s, by_fault);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && strcmp(s[j].fault, s[i].fault) == 0 &&
                        s[j].status == s[i].status && s[j].retry == s[i].retry;
             j++) {
        }
        if (j - i >= v->cfg.jitter_min_clients) judge_group(v, s + i, j - i);
    }
}

/* ---- the whole ---- */

static void defaults(mock_verdict_config *c) {
    if (!(c->time_scale > 0)) c->time_scale = 1.0;
    if (c->max_attempts == 0) c->max_attempts = 10;
    if (c->retry_after_slack_us == 0) c->retry_after_slack_us = 20 * FB_US_PER_MS;
    if (c->jitter_min_clients == 0) c->jitter_min_clients = 3;
    if (c->jitter_min_us == 0) c->jitter_min_us = 10 * FB_US_PER_MS;
    if (!(c->jitter_min_fraction > 0)) c->jitter_min_fraction = 0.05;
}

static void sum_up(mock_verdict *v) {
    for (size_t i = 0; i < v->nreq; i++)
        for (int r = 0; r < MOCK_RULES; r++) {
            v->passed[r] += v->req[i].rule[r] == MOCK_PASS;
            v->failed[r] += v->req[i].rule[r] == MOCK_FAIL;
        }
    for (int r = 0; r < MOCK_RULES; r++)
        v->rule[r] = v->failed[r] > 0 ? MOCK_FAIL : v->passed[r] > 0 ? MOCK_PASS : MOCK_NA;
}

int mock_verdict_judge(const mock_attempt *log, size_t n, uint64_t dropped,
                       const mock_verdict_config *cfg, mock_verdict *out) {
    memset(out, 0, sizeof *out);
    out->cfg = cfg != NULL ? *cfg : (mock_verdict_config){0};
    defaults(&out->cfg);
    out->dropped = dropped;
    item *it;
    size_t k, ng;
    bool *amb;
    if (group(log, n, &out->cfg, &it, &k, &ng, &amb, &out->ambiguous) != FB_OK) return FB_ENOMEM;
    out->attempts = k;
    judge J = {out, calloc(k ? k : 1, sizeof(sample)), 0, false};
    out->req = calloc(ng ? ng : 1, sizeof *out->req);
    out->groups = calloc(k ? k : 1, sizeof *out->groups);
    if (J.samples == NULL || out->req == NULL || out->groups == NULL) {
        free(it);
        free(amb);
        free(J.samples);
        mock_verdict_free(out);
        return FB_ENOMEM;
    }
    for (size_t i = 0, j; i < k; i = j) {
        for (j = i + 1; j < k && it[j].gid == it[i].gid; j++) {
        }
        J.ambiguous = amb[it[i].gid];
        judge_request(&J, out->nreq++, it + i, j - i);
    }
    judge_jitter(out, J.samples, J.nsamples);
    sum_up(out);
    free(J.samples);
    free(it);
    free(amb);
    return FB_OK;
}

void mock_verdict_free(mock_verdict *v) {
    free(v->req);
    free(v->groups);
    v->req = NULL;
    v->groups = NULL;
    v->nreq = v->ngroups = 0;
}

/* No rule judged a request: none met a failure, and a pass would hold whatever the client does. */
static bool none_exercised(const mock_verdict *v) {
    for (int r = 0; r < MOCK_RULES; r++)
        if (v->rule[r] != MOCK_NA) return false;
    return true;
}

const char *mock_verdict_result(const mock_verdict *v) {
    for (int r = 0; r < MOCK_RULES; r++)
        if (v->rule[r] == MOCK_FAIL) return "fail";
    return v->attempts == 0 || v->dropped > 0 || v->ambiguous > 0 || v->jitter_unsure > 0 ||
                   none_exercised(v)
               ? "inconclusive"
               : "pass";
}

const char *mock_verdict_reason(const mock_verdict *v) {
    if (strcmp(mock_verdict_result(v), "inconclusive") != 0) return "";
    if (v->attempts == 0) return "no attempts in the log";
    if (v->dropped == 0 && v->ambiguous == 0 && v->jitter_unsure > 0) return v->unsure;
    if (v->dropped == 0 && v->ambiguous == 0)
        return "no rule was exercised: no request met a failure (a status of 400 or more, a "
               "reset, a broken stream), so the log shows nothing of how the client handles "
               "one: give requests faults (x-fusebox-fault, a scenario) to judge it";
    if (v->ambiguous > 0)
        return "keyless retries of concurrent clients could belong to more than one request, "
               "and the rules judge them differently depending on whose they are: give each "
               "logical request its own x-fusebox-key to judge it";
    return "the log lost its oldest entries (--log-capacity): requests may be missing attempts";
}
