/*
 * spec.c - the per-request fault spec language.
 *
 * A spec is a list of terms separated by '-' (',' ';' and spaces also work in
 * the header), so that the same text fits a model name: "fb-429-retry-after-2"
 * and "x-fusebox-fault: 429-retry-after-2" mean the same. Terms, some of
 * them several words long, are matched longest first; see docs/mock.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mockserver/fault.h"

#define MAX_TOKENS 32

typedef enum term_id {
    T_NO_RA,
    T_RA_DATE,
    T_RA_MS,
    T_RA,
    T_SHOULD_RETRY,
    T_CONTEXT,
    T_FILTER,
    T_HANG,
    T_RESET,
    T_TTFT,
    T_STALL,
    T_CUT,
    T_TRUNCATE,
    T_NOTERM,
    T_MALFORMED,
    T_ERROR,
    T_REFUSAL,
    T_QUOTA,
    T_TOKENS,
    T_TIMES,
    T_SLOW,
    T_OK
} term_id;

static const struct term {
    const char *words; /* '-'-separated */
    term_id id;
} terms[] = {
    /* Longest first where one term is a prefix of another. */
    {"no-retry-after", T_NO_RA},
    {"retry-after-date", T_RA_DATE},
    {"retry-after-ms", T_RA_MS},
    {"retry-after", T_RA},
    {"should-retry", T_SHOULD_RETRY},
    {"context-length", T_CONTEXT},
    {"content-filter", T_FILTER},
    {"hang", T_HANG},
    {"reset", T_RESET},
    {"ttft", T_TTFT},
    {"stall", T_STALL},
    {"cut", T_CUT},
    {"truncate", T_TRUNCATE},
    {"noterm", T_NOTERM},
    {"malformed", T_MALFORMED},
    {"error", T_ERROR},
    {"refusal", T_REFUSAL},
    {"quota", T_QUOTA},
    {"tokens", T_TOKENS},
    {"times", T_TIMES},
    {"slow", T_SLOW},
    {"ok", T_OK},
};

static int fail(mock_parse_error *err, const char *term, const char *msg) {
    if (err != NULL) {
        snprintf(err->path, sizeof err->path, "%s", term);
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return FB_EPARSE;
}

/* Does terms[t] match the tokens starting at tok[i]? Returns the words used, 0 if not. */
static int match(const struct term *t, char **tok, int ntok, int i) {
    const char *w = t->words;
    int used = 0;
    while (*w != '\0') {
        if (i + used >= ntok) return 0;
        size_t len = strcspn(w, "-");
        if (strlen(tok[i + used]) != len || strncmp(tok[i + used], w, len) != 0) return 0;
        used++;
        w += len;
        if (*w == '-') w++;
    }
    return used;
}

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (s == NULL || *s == '\0') return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) return false;
    *out = (int64_t)v;
    return true;
}

/* Decimal only, as documented: strtod alone would also read "0x10", "1e3" and "inf". */
static bool parse_num(const char *s, double lo, double hi, double *out) {
    if (s == NULL || *s < '0' || *s > '9' || strspn(s, "0123456789.") != strlen(s)) return false;
    char *end;
    double v = strtod(s, &end);
    if (*end != '\0' || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

/* A duration term argument: "2s", "250ms", or a bare number of seconds. */
static bool parse_dur(const char *s, fb_time_us *out) {
    double sec;
    if (parse_num(s, 0, 1e9, &sec)) {
        *out = (fb_time_us)(sec * 1e6 + 0.5);
        return true;
    }
    return s != NULL && mock_duration_parse(s, out) == FB_OK;
}

/* Terms that need no argument; a stream end takes an optional chunk count (*used: 1). */
static void apply_flag(const struct term *t, const char *a1, mock_action *act, int *used) {
    int64_t iv;
    *used = 0;
    switch (t->id) {
    case T_CONTEXT:
        act->status = 400;
        act->flavor = MOCK_FLAVOR_CONTEXT;
        break;
    case T_FILTER:
        act->status = 400;
        act->flavor = MOCK_FLAVOR_FILTER;
        break;
    case T_QUOTA:
        act->status = 429;
        act->flavor = MOCK_FLAVOR_QUOTA;
        break;
    case T_HANG:
        act->hang = true;
        break;
    case T_RESET:
        act->reset = true;
        break;
    case T_REFUSAL:
        act->refusal = true;
        break;
    case T_NO_RA:
        act->no_retry_after = true;
        break;
    case T_CUT:
    case T_MALFORMED:
    case T_ERROR:
    case T_TRUNCATE:
    case T_NOTERM:
        act->end = t->id == T_CUT         ? MOCK_END_CUT
                   : t->id == T_MALFORMED ? MOCK_END_MALFORMED
                   : t->id == T_ERROR     ? MOCK_END_ERROR
                   : t->id == T_TRUNCATE  ? MOCK_END_TRUNCATE
                                          : MOCK_END_NOTERM;
        act->end_after = -1;
        /* The chunk count is optional: without it the fault hits after all content. */
        if (t->id != T_NOTERM && parse_int(a1, 0, INT64_MAX, &iv)) {
            act->end_after = iv;
            *used = 1;
        } else if (t->id == T_TRUNCATE) {
            act->end = MOCK_END_NOTERM;
        }
        break;
    default: /* T_OK */
        break;
    }
}

/* Terms with arguments: *used gets how many of a1, a2 they took. */
static int apply_valued(const struct term *t, const char *a1, const char *a2, mock_action *act,
                        mock_parse_error *err, int *used) {
    double dv;
    int64_t iv;
    fb_time_us us;
    *used = 1;
    switch (t->id) {
    case T_RA:
    case T_RA_DATE:
        if (!parse_num(a1, 0, 1e9, &dv))
            return fail(err, t->words,
                        "needs a number of seconds in [0, 1000000000], e.g. retry-after-2");
        act->ra_kind = t->id == T_RA ? MOCK_RA_SECONDS : MOCK_RA_DATE;
        act->retry_after_s = dv;
        return FB_OK;
    case T_RA_MS:
        if (!parse_num(a1, 0, 1e12, &dv))
            return fail(err, t->words, "needs a number of milliseconds in [0, 1000000000000]");
        act->retry_after_ms = dv;
        return FB_OK;
    case T_SHOULD_RETRY:
        if (a1 == NULL || (strcmp(a1, "true") != 0 && strcmp(a1, "false") != 0))
            return fail(err, t->words, "needs true or false");
        act->should_retry = strcmp(a1, "true") == 0;
        return FB_OK;
    case T_TTFT:
        if (!parse_dur(a1, &us)) return fail(err, t->words, "needs a duration, e.g. ttft-2s");
        act->ttft_us = us;
        return FB_OK;
    case T_STALL:
        if (!parse_int(a1, 0, INT64_MAX, &iv) || !parse_dur(a2, &us))
            return fail(err, t->words, "needs chunks and a duration, e.g. stall-3-2s");
        act->stall_after = iv;
        act->stall_us = us;
        *used = 2;
        return FB_OK;
    case T_TOKENS:
        if (!parse_int(a1, 0, 1000000, &iv))
            return fail(err, t->words, "needs a token count in [0, 1000000], e.g. tokens-50");
        act->tokens = iv;
        return FB_OK;
    case T_TIMES:
        if (!parse_int(a1, 1, INT64_MAX, &iv))
            return fail(err, t->words, "needs a count >= 1, e.g. times-2");
        act->times = iv;
        return FB_OK;
    case T_SLOW:
        if (!parse_num(a1, 1e-6, 1e6, &dv))
            return fail(err, t->words, "needs a factor in [0.000001, 1000000]");
        act->slow = dv;
        return FB_OK;
    default:
        apply_flag(t, a1, act, used);
        return FB_OK;
    }
}

/* Split the spec on - , ; and blanks into tok[]; FB_OK or FB_EPARSE. */
static int split(const char *spec, char *buf, size_t buflen, char **tok, int *ntok,
                 mock_parse_error *err) {
    *ntok = 0;
    if (strlen(spec) >= buflen) return fail(err, "", "spec too long");
    /* strtok would fold "retry-after--1" into retry-after-1: a negative number is no term */
    if (strstr(spec, "--") != NULL)
        return fail(err, "",
                    "'--' in the spec: numbers in a fault spec are not negative (e.g. "
                    "retry-after-1, not retry-after--1)");
    strcpy(buf, spec);
    for (char *save = NULL, *t = strtok_r(buf, "-,; \t", &save); t != NULL;
         t = strtok_r(NULL, "-,; \t", &save)) {
        if (*ntok == MAX_TOKENS) return fail(err, t, "too many terms");
        tok[(*ntok)++] = t;
    }
    if (*ntok == 0) return fail(err, "", "empty fault spec");
    return FB_OK;
}

int mock_spec_parse(const char *spec, mock_action *act, mock_parse_error *err) {
    char buf[256];
    char *tok[MAX_TOKENS];
    int ntok;
    int rc = split(spec, buf, sizeof buf, tok, &ntok, err);
    if (rc != FB_OK) return rc;
    snprintf(act->label, sizeof act->label, "%s", spec);
    for (int i = 0; i < ntok;) {
        int64_t iv;
        if (parse_int(tok[i], 100, 599, &iv)) {
            act->status = iv == 200 ? 0 : (int)iv;
            i++;
            continue;
        }
        const struct term *t = NULL;
        int used = 0;
        for (size_t k = 0; k < sizeof terms / sizeof terms[0] && used == 0; k++)
            if ((used = match(&terms[k], tok, ntok, i)) > 0) t = &terms[k];
        if (t == NULL) return fail(err, tok[i], "unknown term");
        i += used;
        rc = apply_valued(t, i < ntok ? tok[i] : NULL, i + 1 < ntok ? tok[i + 1] : NULL, act, err,
                          &used);
        if (rc != FB_OK) return rc;
        i += used;
    }
    if (act->status != 0 && act->status < 400)
        return fail(err, spec, "status must be in 400..599 (200 is the default)");
    return FB_OK;
}
