/* attempts.c - the attempt log ring and its JSON form. */
#include "mockserver/attempts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

int mock_attempts_init(mock_attempts *a, size_t cap) {
    memset(a, 0, sizeof *a);
    a->ring = calloc(cap ? cap : 1, sizeof *a->ring);
    if (a->ring == NULL) return FB_ENOMEM;
    a->cap = cap ? cap : 1;
    return FB_OK;
}

void mock_attempts_free(mock_attempts *a) {
    free(a->ring);
    memset(a, 0, sizeof *a);
}

/* The snapshot's copy of entry seq, if it has none yet: done before the entry changes. */
static void keep(mock_attempts *a, uint64_t seq) {
    mock_attempts_snap *s = a->snap;
    if (s == NULL || seq < s->first || seq - s->first >= s->n) return;
    size_t i = (size_t)(seq - s->first);
    if (s->done[i]) return;
    s->e[i] = a->ring[seq % a->cap];
    s->done[i] = 1;
}

void mock_attempts_clear(mock_attempts *a) {
    /* the seqs start again and reach the old ones' slots: the snapshot takes the rest now */
    if (a->snap != NULL) mock_attempts_snap_step(a, a->snap->n);
    a->total = 0;
}

mock_attempt *mock_attempts_add(mock_attempts *a) {
    if (a->total >= a->cap) keep(a, a->total - a->cap); /* the oldest, overwritten */
    mock_attempt *e = &a->ring[a->total % a->cap];
    memset(e, 0, sizeof *e);
    e->seq = a->total++;
    e->retry_count = -1;
    e->latency_us = e->sent_us = e->retry_after_us = -1;
    e->should_retry = -1;
    e->tokens = -1;
    return e;
}

mock_attempt *mock_attempts_get(mock_attempts *a, uint64_t seq) {
    if (seq >= a->total || a->total - seq > a->cap) return NULL;
    keep(a, seq); /* the caller changes it */
    return &a->ring[seq % a->cap];
}

uint64_t mock_attempts_dropped(const mock_attempts *a) {
    return a->total > a->cap ? a->total - a->cap : 0;
}

/* A time in milliseconds, or null. */
static void ms_or_null(util_json *w, const char *name, fb_time_us us) {
    if (us < 0)
        util_json_null(w, name);
    else
        util_json_fixed(w, name, (double)us / 1e3, 3);
}

static void string_or_null(util_json *w, const char *name, const char *v) {
    util_json_str(w, name, v[0] == '\0' ? NULL : v);
}

/* null below 0 */
static void int_or_null(util_json *w, const char *name, int64_t v) {
    if (v < 0)
        util_json_null(w, name);
    else
        util_json_i64(w, name, v);
}

static void entry_json(const mock_attempt *e, util_json *w) {
    util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_u64(w, "seq", e->seq);
    util_json_fixed(w, "t_ms", (double)e->t_us / 1e3, 3);
    util_json_fixed(w, "real_ms", (double)e->real_us / 1e3, 3);
    util_json_str(w, "method", e->method);
    util_json_str(w, "path", e->path);
    util_json_str(w, "model", e->model);
    util_json_bool(w, "stream", e->stream);
    util_json_bool(w, "attempt", e->inference);
    int_or_null(w, "retry_count", e->retry_count);
    string_or_null(w, "key", e->key);
    char client[20];
    snprintf(client, sizeof client, "%016llx", (unsigned long long)e->client);
    util_json_str(w, "client", e->client == 0 ? NULL : client);
    util_json_i64(w, "status", e->status);
    ms_or_null(w, "latency_ms", e->latency_us);
    string_or_null(w, "fault", e->fault);
    ms_or_null(w, "sent_ms", e->sent_us);
    ms_or_null(w, "retry_after_ms", e->retry_after_us);
    if (e->should_retry < 0)
        util_json_null(w, "should_retry");
    else
        util_json_bool(w, "should_retry", e->should_retry);
    int_or_null(w, "tokens", e->tokens);
    util_json_bool(w, "broken", e->broken);
    util_json_close(w);
}

/* The log's head; the entries' array is left open. */
static void json_head(util_json *w, util_buf *out, uint64_t total, uint64_t dropped,
                      double time_scale) {
    util_json_init(w, util_buf_out(out), 0);
    util_json_open(w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_u64(w, "total", total);
    util_json_u64(w, "dropped", dropped);
    util_json_digits(w, "time_scale", time_scale, 15);
    util_json_open(w, "entries", '[', UTIL_JSON_COMPACT);
}

static void json_tail(util_json *w) {
    util_json_close(w);
    util_json_close(w);
}

void mock_attempts_json(const mock_attempts *a, double time_scale, util_buf *out) {
    uint64_t first = mock_attempts_dropped(a);
    util_json w;
    json_head(&w, out, a->total, first, time_scale);
    for (uint64_t s = first; s < a->total; s++) entry_json(&a->ring[s % a->cap], &w);
    json_tail(&w);
}

/* ---- snapshots ---- */

int mock_attempts_snap_alloc(const mock_attempts *a, mock_attempts_snap *s) {
    memset(s, 0, sizeof *s);
    /* malloc: pages past the entries a snapshot fills are never touched */
    s->e = malloc(a->cap * sizeof *s->e);
    s->done = calloc(a->cap, 1);
    if (s->e != NULL && s->done != NULL) return FB_OK;
    mock_attempts_snap_free(s);
    return FB_ENOMEM;
}

void mock_attempts_snap_free(mock_attempts_snap *s) {
    free(s->e);
    free(s->done);
    memset(s, 0, sizeof *s);
}

void mock_attempts_snap_begin(mock_attempts *a, mock_attempts_snap *s) {
    s->first = mock_attempts_dropped(a);
    s->total = a->total;
    s->n = (size_t)(a->total - s->first);
    s->next = 0;
    memset(s->done, 0, s->n);
    a->snap = s->n > 0 ? s : NULL;
}

bool mock_attempts_snap_step(mock_attempts *a, size_t k) {
    mock_attempts_snap *s = a->snap;
    if (s == NULL) return true;
    /* Not copied yet means not changed since the snapshot began (keep() copies first), and
     * not overwritten either: the ring slot still holds that entry as it was. */
    for (; k > 0 && s->next < s->n; s->next++, k--)
        if (!s->done[s->next]) keep(a, s->first + s->next);
    if (s->next < s->n) return false;
    a->snap = NULL;
    return true;
}

void mock_attempts_snap_json(const mock_attempts_snap *s, double time_scale, util_buf *out) {
    util_json w;
    json_head(&w, out, s->total, s->first, time_scale);
    for (size_t i = 0; i < s->n; i++) entry_json(&s->e[i], &w);
    json_tail(&w);
}
