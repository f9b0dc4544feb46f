/*
 * control.c - the control plane under /__fusebox/: load a fault timeline, reset, the attempt
 * log, the counters. Its answers are plain JSON, outside every provider dialect.
 */
#include <stdlib.h>

#include "mockserver/serverint.h"

static enum MHD_Result load_faults(req *r) {
    mock_server *s = r->s;
    mock_buf b = {0};
    sim_fault *f = calloc(MOCK_FAULTS_MAX, sizeof *f);
    if (f == NULL) return MHD_NO;
    size_t n = 0;
    mock_parse_error err = {{0}, {0}};
    int rc =
        mock_faults_parse(r->body.p ? r->body.p : "", r->body.len, f, MOCK_FAULTS_MAX, &n, &err);
    if (rc == FB_OK) rc = mock_server_set_faults(s, f, n);
    free(f);
    if (rc != FB_OK) return mock_send_control_error(r, 400, err.path, err.msg);
    mock_logf(s, MOCK_LOG_INFO, "loaded %zu timeline faults", n);
    mock_buf_printf(&b, "{\"ok\":true,\"faults\":%zu}", n);
    return mock_send_json(r, 200, &b);
}

static void stats_json(mock_server *s, mock_buf *b) {
    mock_stats st;
    mock_server_stats(s, &st);
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    mock_buf_printf(
        b,
        "{\"requests\":%llu,\"attempts\":%llu,\"faults\":%llu,\"status_2xx\":%llu,"
        "\"status_4xx\":%llu,\"status_5xx\":%llu,\"status_429\":%llu,\"hangs\":%llu,"
        "\"resets\":%llu,\"cut_streams\":%llu,\"capacity_rejects\":%llu,\"queued\":%llu,"
        "\"left_early\":%llu,\"header_timeouts\":%llu,\"memory_rejects\":%llu,"
        "\"log_dropped\":%llu,\"proxied\":%llu,\"upstream_errors\":%llu,\"in_flight\":%lld,"
        "\"busy\":%lld,\"waiting\":%lld,"
        "\"suspended\":%lld,\"connections\":%u,\"timeline_ms\":%.3f}",
        (unsigned long long)st.requests, (unsigned long long)st.attempts,
        (unsigned long long)st.faults, (unsigned long long)st.status_2xx,
        (unsigned long long)st.status_4xx, (unsigned long long)st.status_5xx,
        (unsigned long long)st.status_429, (unsigned long long)st.hangs,
        (unsigned long long)st.resets, (unsigned long long)st.cut_streams,
        (unsigned long long)st.capacity_rejects, (unsigned long long)st.queued,
        (unsigned long long)st.left_early, (unsigned long long)st.header_timeouts,
        (unsigned long long)st.memory_rejects, (unsigned long long)st.log_dropped,
        (unsigned long long)st.proxied, (unsigned long long)st.upstream_errors,
        (long long)st.in_flight, (long long)st.busy, (long long)st.waiting, (long long)st.suspended,
        di != NULL ? di->num_connections : 0u, (double)st.timeline_us / 1e3);
}

enum MHD_Result mock_handle_control(req *r, route rt) {
    mock_server *s = r->s;
    mock_buf b = {0};
    switch (rt) {
    case RT_C_FAULTS:
        return load_faults(r);
    case RT_C_RESET:
        mock_server_reset(s);
        mock_buf_puts(&b, "{\"ok\":true}");
        return mock_send_json(r, 200, &b);
    case RT_C_LOG:
        pthread_mutex_lock(&s->lock);
        mock_attempts_json(&s->log, &b);
        pthread_mutex_unlock(&s->lock);
        return mock_send_json(r, 200, &b);
    case RT_C_STATS:
        stats_json(s, &b);
        return mock_send_json(r, 200, &b);
    default:
        return MHD_NO;
    }
}
