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

void mock_attempts_clear(mock_attempts *a) {
    a->total = 0;
}

mock_attempt *mock_attempts_add(mock_attempts *a) {
    mock_attempt *e = &a->ring[a->total % a->cap];
    memset(e, 0, sizeof *e);
    e->seq = a->total++;
    e->retry_count = -1;
    e->latency_us = -1;
    return e;
}

mock_attempt *mock_attempts_get(mock_attempts *a, uint64_t seq) {
    if (seq >= a->total || a->total - seq > a->cap) return NULL;
    return &a->ring[seq % a->cap];
}

uint64_t mock_attempts_dropped(const mock_attempts *a) {
    return a->total > a->cap ? a->total - a->cap : 0;
}

void mock_attempts_json(const mock_attempts *a, mock_buf *out) {
    uint64_t first = mock_attempts_dropped(a);
    mock_buf_printf(out, "{\"total\":%llu,\"dropped\":%llu,\"entries\":[",
                    (unsigned long long)a->total, (unsigned long long)first);
    for (uint64_t s = first; s < a->total; s++) {
        const mock_attempt *e = &a->ring[s % a->cap];
        mock_buf_printf(
            out, "%s{\"seq\":%llu,\"t_ms\":%.3f,\"real_ms\":%.3f,\"method\":", s > first ? "," : "",
            (unsigned long long)e->seq, (double)e->t_us / 1e3, (double)e->real_us / 1e3);
        mock_buf_json_string(out, e->method);
        mock_buf_puts(out, ",\"path\":");
        mock_buf_json_string(out, e->path);
        mock_buf_puts(out, ",\"model\":");
        mock_buf_json_string(out, e->model);
        mock_buf_printf(out, ",\"stream\":%s,\"retry_count\":", e->stream ? "true" : "false");
        if (e->retry_count < 0)
            mock_buf_puts(out, "null");
        else
            mock_buf_printf(out, "%d", e->retry_count);
        mock_buf_puts(out, ",\"key\":");
        if (e->key[0] == '\0')
            mock_buf_puts(out, "null");
        else
            mock_buf_json_string(out, e->key);
        mock_buf_printf(out, ",\"status\":%d,\"latency_ms\":", e->status);
        if (e->latency_us < 0)
            mock_buf_puts(out, "null");
        else
            mock_buf_printf(out, "%.3f", (double)e->latency_us / 1e3);
        mock_buf_puts(out, ",\"fault\":");
        if (e->fault[0] == '\0')
            mock_buf_puts(out, "null");
        else
            mock_buf_json_string(out, e->fault);
        mock_buf_puts(out, "}");
    }
    mock_buf_puts(out, "]}");
}
