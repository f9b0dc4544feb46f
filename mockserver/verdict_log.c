/*
 * verdict_log.c - a saved attempt log (the JSON of GET /__fusebox/log) read back into entries
 * for the verdict. Strict, as every input is: an unknown key (with a did-you-mean), a missing
 * field or a wrong type is an error naming its JSON path, never a silent default. The error
 * is sticky (R->rc): the first is kept, and the readers after it do nothing and return it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mockserver/verdict.h"
#include "scenario/scenario.h"

static const char *const top_keys[] = {"total", "dropped", "time_scale", "entries", NULL};
static const char *const entry_keys[] = {
    "seq",     "t_ms",           "real_ms",      "method", "path",   "model",      "stream",
    "attempt", "retry_count",    "key",          "client", "status", "latency_ms", "fault",
    "sent_ms", "retry_after_ms", "should_retry", "tokens", "broken", NULL};

typedef struct rd {
    mock_parse_error *err;
    char path[64];
    int rc; /* the sticky error: FB_OK until the first, then its code */
} rd;

static int fail(rd *R, const char *fmt, ...) {
    if (R->rc != FB_OK) return R->rc; /* keep the first error */
    R->rc = FB_EINVAL;
    mock_parse_error *e = R->err;
    snprintf(e->path, sizeof e->path, "%s", R->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return FB_EINVAL;
}

/* The field k onto the path; returns the length to cut it back to. */
static size_t push(rd *R, const char *k) {
    size_t n = strlen(R->path);
    snprintf(R->path + n, sizeof R->path - n, "%s%s", n > 0 ? "." : "", k);
    return n;
}

static int known_keys(rd *R, const cJSON *obj, const char *const *keys) {
    if (R->rc != FB_OK) return R->rc;
    for (const cJSON *it = obj->child; it != NULL; it = it->next) {
        size_t i = 0;
        while (keys[i] != NULL && strcmp(keys[i], it->string) != 0) i++;
        if (keys[i] != NULL) continue;
        const char *s = scn_suggest(it->string, keys);
        return s ? fail(R, "unknown key '%s' (did you mean '%s'?)", it->string, s)
                 : fail(R, "unknown key '%s'", it->string);
    }
    return FB_OK;
}

/* A number field, in [lo, hi]; null allowed (then *out = null_value) when nullable. */
static int number(rd *R, const cJSON *o, const char *k, bool nullable, double lo, double hi,
                  double null_value, double *out) {
    if (R->rc != FB_OK) return R->rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    size_t n = push(R, k);
    if (v == NULL) return fail(R, "missing");
    if (cJSON_IsNull(v) && nullable)
        *out = null_value;
    else if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return fail(R, "expected a number%s", nullable ? " or null" : "");
    else if (v->valuedouble < lo || v->valuedouble > hi)
        return fail(R, "%.15g is out of range [%.15g, %.15g]", v->valuedouble, lo, hi);
    else
        *out = v->valuedouble;
    R->path[n] = '\0';
    return FB_OK;
}

/* A string field into out (at most cap - 1 bytes); null as "" when nullable. */
static int string(rd *R, const cJSON *o, const char *k, bool nullable, char *out, size_t cap) {
    if (R->rc != FB_OK) return R->rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    size_t n = push(R, k);
    if (v == NULL) return fail(R, "missing");
    if (cJSON_IsNull(v) && nullable) {
        out[0] = '\0';
    } else if (!cJSON_IsString(v)) {
        return fail(R, "expected a string%s", nullable ? " or null" : "");
    } else if (strlen(v->valuestring) >= cap) {
        return fail(R, "longer than %zu bytes (the log never writes one)", cap - 1);
    } else {
        memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    }
    R->path[n] = '\0';
    return FB_OK;
}

/* A boolean field; -1 for null when nullable. */
static int boolean(rd *R, const cJSON *o, const char *k, bool nullable, int *out) {
    if (R->rc != FB_OK) return R->rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    size_t n = push(R, k);
    if (v == NULL) return fail(R, "missing");
    if (cJSON_IsNull(v) && nullable)
        *out = -1;
    else if (cJSON_IsBool(v))
        *out = cJSON_IsTrue(v);
    else
        return fail(R, "expected a boolean%s", nullable ? " or null" : "");
    R->path[n] = '\0';
    return FB_OK;
}

/* The client's fingerprint: 16 hex digits, or null (0); absent in logs saved before it (0). */
static int client(rd *R, const cJSON *o, uint64_t *out) {
    if (R->rc != FB_OK) return R->rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "client");
    size_t n = push(R, "client");
    *out = 0;
    if (v != NULL && !cJSON_IsNull(v)) {
        const char *t = cJSON_IsString(v) ? v->valuestring : "";
        size_t len = strspn(t, "0123456789abcdef");
        if (!cJSON_IsString(v) || len != 16 || t[len] != '\0')
            return fail(R, "expected 16 hex digits (0-9, a-f) or null");
        *out = strtoull(t, NULL, 16);
    }
    R->path[n] = '\0';
    return FB_OK;
}

#define US(ms) ((ms) < 0 ? -1 : (fb_time_us)llround((ms)*1e3))

/* long: one field after the other, as the log writes them */
static int entry(rd *R, const cJSON *o, mock_attempt *e) {
    if (!cJSON_IsObject(o)) return fail(R, "expected an object");
    known_keys(R, o, entry_keys);
    double seq = 0, t = 0, real = 0, rcount = 0, status = 0, lat = 0, sent = 0, ra = 0, tok = 0;
    int stream = 0, attempt = 0, sr = 0, broken = 0;
    const double big = 9e15;
    number(R, o, "seq", false, 0, big, 0, &seq);
    number(R, o, "t_ms", false, -big, big, 0, &t);
    number(R, o, "real_ms", false, 0, big, 0, &real);
    string(R, o, "method", false, e->method, sizeof e->method);
    string(R, o, "path", false, e->path, sizeof e->path);
    string(R, o, "model", false, e->model, sizeof e->model);
    boolean(R, o, "stream", false, &stream);
    boolean(R, o, "attempt", false, &attempt);
    number(R, o, "retry_count", true, 0, 1e9, -1, &rcount);
    string(R, o, "key", true, e->key, sizeof e->key);
    client(R, o, &e->client);
    number(R, o, "status", false, 0, 999, 0, &status);
    number(R, o, "latency_ms", true, 0, big, -1, &lat);
    string(R, o, "fault", true, e->fault, sizeof e->fault);
    number(R, o, "sent_ms", true, 0, big, -1, &sent);
    number(R, o, "retry_after_ms", true, 0, big, -1, &ra);
    boolean(R, o, "should_retry", true, &sr);
    number(R, o, "tokens", true, 0, big, -1, &tok);
    boolean(R, o, "broken", false, &broken);
    if (R->rc != FB_OK) return R->rc; /* explicit: the entry's fields from a whole entry only */
    e->seq = (uint64_t)seq;
    e->t_us = (fb_time_us)llround(t * 1e3);
    e->real_us = US(real);
    e->stream = stream;
    e->inference = attempt;
    e->retry_count = (int)rcount;
    e->status = (int)status;
    e->latency_us = US(lat);
    e->sent_us = US(sent);
    e->retry_after_us = US(ra);
    e->should_retry = sr;
    e->tokens = tok < 0 ? -1 : (int64_t)tok;
    e->broken = broken;
    return FB_OK;
}

static int entries(rd *R, const cJSON *arr, size_t max, mock_attempt **out, size_t *n) {
    if (R->rc != FB_OK) return R->rc;
    snprintf(R->path, sizeof R->path, "entries");
    if (arr == NULL) return fail(R, "missing");
    if (!cJSON_IsArray(arr)) return fail(R, "expected an array");
    size_t count = (size_t)cJSON_GetArraySize(arr);
    if (count > max) return fail(R, "%zu entries, more than the %zu a log holds", count, max);
    mock_attempt *e = calloc(count ? count : 1, sizeof *e);
    if (e == NULL) return FB_ENOMEM;
    size_t i = 0;
    for (const cJSON *it = arr->child; it != NULL; it = it->next, i++) {
        snprintf(R->path, sizeof R->path, "entries[%zu]", i);
        entry(R, it, &e[i]);
        if (i > 0 && e[i].seq <= e[i - 1].seq)
            fail(R, "seq %llu after %llu: entries are oldest first", (unsigned long long)e[i].seq,
                 (unsigned long long)e[i - 1].seq);
        if (R->rc != FB_OK) { /* explicit: e is freed at the first error */
            free(e);
            return R->rc;
        }
    }
    *out = e;
    *n = count;
    return FB_OK;
}

int mock_verdict_read_log(const char *json, size_t len, size_t max_entries, mock_attempt **out,
                          size_t *n, uint64_t *dropped, double *time_scale, mock_parse_error *err) {
    rd R = {err, "", FB_OK};
    *out = NULL;
    *n = 0;
    const char *end = NULL;
    /* the values counted first (memory bounded by the text's size), then a duplicate key
     * (cJSON would keep the first: a second "status" flipped a fail to a pass), text after
     * the document, invalid UTF-8: each an error with its JSON path */
    sim_error se = {{0}, {0}, {0}};
    int crc = scn_json_check(json, len, &se);
    if (crc != FB_OK) {
        snprintf(err->path, sizeof err->path, "%s", se.path);
        snprintf(err->msg, sizeof err->msg, "%s", se.msg);
        return crc == FB_ECAP ? FB_ECAP : FB_EINVAL;
    }
    errno = 0; /* malloc sets ENOMEM when it fails (cJSON then gives up where it was) */
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, false);
    int rc;
    if (root == NULL && errno == ENOMEM) {
        err->path[0] = '\0';
        snprintf(err->msg, sizeof err->msg,
                 "out of memory building the JSON tree of a log of %zu bytes (about %zu values, "
                 "some 80 bytes each)",
                 len, scn_json_values(json, len));
        return FB_ENOMEM;
    } else if (root == NULL) {
        rc = fail(&R, "not valid JSON (at byte %zu)", end != NULL ? (size_t)(end - json) : 0);
    } else if (!cJSON_IsObject(root)) {
        rc = fail(&R, "expected an object (the answer of GET /__fusebox/log)");
    } else {
        double total = 0, drop = 0;
        known_keys(&R, root, top_keys);
        number(&R, root, "total", false, 0, 9e15, 0, &total);
        number(&R, root, "dropped", false, 0, 9e15, 0, &drop);
        number(&R, root, "time_scale", false, 1e-9, 1e9, 1, time_scale);
        rc = entries(&R, cJSON_GetObjectItemCaseSensitive(root, "entries"), max_entries, out, n);
        *dropped = (uint64_t)drop;
    }
    cJSON_Delete(root);
    return rc;
}
