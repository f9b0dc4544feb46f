/* attempts.c - the attempt log ring and its JSON form. */
#include "mockserver/attempts.h"

#include <stdlib.h>
#include <string.h>

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
static void ms_or_null(mock_buf *out, const char *name, fb_time_us us) {
    if (us < 0)
        mock_buf_printf(out, ",\"%s\":null", name);
    else
        mock_buf_printf(out, ",\"%s\":%.3f", name, (double)us / 1e3);
}

static void string_or_null(mock_buf *out, const char *name, const char *v) {
    mock_buf_printf(out, ",\"%s\":", name);
    if (v[0] == '\0')
        mock_buf_puts(out, "null");
    else
        mock_buf_json_string(out, v);
}

static void entry_json(const mock_attempt *e, mock_buf *out) {
    mock_buf_printf(out, "{\"seq\":%llu,\"t_ms\":%.3f,\"real_ms\":%.3f,\"method\":",
                    (unsigned long long)e->seq, (double)e->t_us / 1e3, (double)e->real_us / 1e3);
    mock_buf_json_string(out, e->method);
    mock_buf_puts(out, ",\"path\":");
    mock_buf_json_string(out, e->path);
    mock_buf_puts(out, ",\"model\":");
    mock_buf_json_string(out, e->model);
    mock_buf_printf(out,
                    ",\"stream\":%s,\"attempt\":%s,\"retry_count\":", e->stream ? "true" : "false",
                    e->inference ? "true" : "false");
    if (e->retry_count < 0)
        mock_buf_puts(out, "null");
    else
        mock_buf_printf(out, "%d", e->retry_count);
    string_or_null(out, "key", e->key);
    if (e->client == 0)
        mock_buf_puts(out, ",\"client\":null");
    else
        mock_buf_printf(out, ",\"client\":\"%016llx\"", (unsigned long long)e->client);
    mock_buf_printf(out, ",\"status\":%d", e->status);
    ms_or_null(out, "latency_ms", e->latency_us);
    string_or_null(out, "fault", e->fault);
    ms_or_null(out, "sent_ms", e->sent_us);
    ms_or_null(out, "retry_after_ms", e->retry_after_us);
    mock_buf_printf(out, ",\"should_retry\":%s",
                    e->should_retry < 0 ? "null"
                    : e->should_retry   ? "true"
                                        : "false");
    if (e->tokens < 0)
        mock_buf_puts(out, ",\"tokens\":null");
    else
        mock_buf_printf(out, ",\"tokens\":%lld", (long long)e->tokens);
    mock_buf_printf(out, ",\"broken\":%s}", e->broken ? "true" : "false");
}

static void json_head(mock_buf *out, uint64_t total, uint64_t dropped, double time_scale) {
    mock_buf_printf(out, "{\"total\":%llu,\"dropped\":%llu,\"time_scale\":%.15g,\"entries\":[",
                    (unsigned long long)total, (unsigned long long)dropped, time_scale);
}

void mock_attempts_json(const mock_attempts *a, double time_scale, mock_buf *out) {
    uint64_t first = mock_attempts_dropped(a);
    json_head(out, a->total, first, time_scale);
    for (uint64_t s = first; s < a->total; s++) {
        if (s > first) mock_buf_puts(out, ",");
        entry_json(&a->ring[s % a->cap], out);
    }
    mock_buf_puts(out, "]}");
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

void mock_attempts_snap_json(const mock_attempts_snap *s, double time_scale, mock_buf *out) {
    json_head(out, s->total, s->first, time_scale);
    for (size_t i = 0; i < s->n; i++) {
        if (i > 0) mock_buf_puts(out, ",");
        entry_json(&s->e[i], out);
    }
    mock_buf_puts(out, "]}");
}
