/*
 * control.c - the control plane under /__fusebox/: load a fault timeline, reset, the attempt
 * log, the counters, the verdict on the client. Its answers are plain JSON, outside every provider
 * dialect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mockserver/serverint.h"
#include "mockserver/verdict.h"
#include "util/json.h"

#define SNAP_CHUNK 256 /* log entries copied per hold of the server's lock (about 120 KB) */

/* {"ok":true}, with a count when name is not NULL. */
static void ok_json(util_buf *b, const char *name, uint64_t n) {
    util_json w;
    util_json_init(&w, util_buf_out(b), 0);
    util_json_open(&w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_bool(&w, "ok", true);
    if (name != NULL) util_json_u64(&w, name, n);
    util_json_close(&w);
}

static enum MHD_Result load_faults(req *r) {
    mock_server *s = r->s;
    util_buf b = {0};
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
    ok_json(&b, "faults", n);
    return mock_send_json(r, 200, &b);
}

static void stats_json(mock_server *s, util_buf *b) {
    mock_stats st;
    mock_server_stats(s, &st);
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    const struct {
        const char *name;
        uint64_t v;
    } counts[] = {{"requests", st.requests},
                  {"attempts", st.attempts},
                  {"faults", st.faults},
                  {"status_2xx", st.status_2xx},
                  {"status_4xx", st.status_4xx},
                  {"status_5xx", st.status_5xx},
                  {"status_429", st.status_429},
                  {"hangs", st.hangs},
                  {"resets", st.resets},
                  {"cut_streams", st.cut_streams},
                  {"capacity_rejects", st.capacity_rejects},
                  {"queued", st.queued},
                  {"left_early", st.left_early},
                  {"header_timeouts", st.header_timeouts},
                  {"memory_rejects", st.memory_rejects},
                  {"log_dropped", st.log_dropped},
                  {"proxied", st.proxied},
                  {"upstream_errors", st.upstream_errors}};
    util_json w;
    util_json_init(&w, util_buf_out(b), 0);
    util_json_open(&w, NULL, '{', UTIL_JSON_COMPACT);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        util_json_u64(&w, counts[i].name, counts[i].v);
    util_json_i64(&w, "in_flight", st.in_flight);
    util_json_i64(&w, "busy", st.busy);
    util_json_i64(&w, "waiting", st.waiting);
    util_json_i64(&w, "suspended", st.suspended);
    util_json_u64(&w, "connections", di != NULL ? di->num_connections : 0u);
    util_json_fixed(&w, "timeline_ms", (double)st.timeline_us / 1e3, 3);
    util_json_close(&w);
}

/* A query parameter as a whole number in [lo, hi] (absent: *out stays); false when bad. */
static bool query_count(req *r, const char *name, unsigned lo, unsigned hi, unsigned *out) {
    const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
    if (v == NULL) return true;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0' || n < lo || n > hi) return false;
    *out = (unsigned)n;
    return true;
}

/*
 * The log as it is now, copied SNAP_CHUNK entries per hold of the lock: a request thread waits
 * for one chunk at most, not for the whole ring. It is still the log of one instant (the one
 * mock_attempts_snap_begin saw): an entry that changes before its chunk is copied gives the
 * snapshot its earlier state first (attempts.h). One snapshot at a time (snap_lock).
 */
static int snapshot(mock_server *s, mock_attempts_snap *snap) {
    if (mock_attempts_snap_alloc(&s->log, snap) != FB_OK) return FB_ENOMEM;
    pthread_mutex_lock(&s->snap_lock);
    pthread_mutex_lock(&s->lock);
    mock_attempts_snap_begin(&s->log, snap);
    bool done = mock_attempts_snap_step(&s->log, SNAP_CHUNK);
    pthread_mutex_unlock(&s->lock);
    while (!done) {
        pthread_mutex_lock(&s->lock);
        done = mock_attempts_snap_step(&s->log, SNAP_CHUNK);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&s->snap_lock);
    return FB_OK;
}

/* GET /__fusebox/verdict[?max_attempts=N&expect_fallback=1&format=junit]: the log judged. */
static enum MHD_Result verdict(req *r) {
    mock_server *s = r->s;
    mock_verdict_config c = {.time_scale = s->cfg.time_scale};
    unsigned fb = 0;
    const char *format = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "format");
    bool junit = format != NULL && strcmp(format, "junit") == 0;
    if (format != NULL && !junit && strcmp(format, "json") != 0)
        return mock_send_control_error(r, 400, "format", "'json' or 'junit'");
    if (!query_count(r, "max_attempts", 1, 1000000, &c.max_attempts))
        return mock_send_control_error(r, 400, "max_attempts", "a whole number in [1, 1000000]");
    if (!query_count(r, "expect_fallback", 0, 1, &fb))
        return mock_send_control_error(r, 400, "expect_fallback", "0 or 1");
    c.expect_fallback = fb == 1;
    mock_attempts_snap snap;
    if (snapshot(s, &snap) != FB_OK) return MHD_NO;
    mock_verdict v;
    int rc = mock_verdict_judge(snap.e, snap.n, snap.first, &c, &v);
    mock_attempts_snap_free(&snap);
    if (rc != FB_OK) return MHD_NO;
    util_buf b = {0};
    if (junit)
        mock_verdict_junit(&v, &b);
    else
        mock_verdict_json(&v, &b);
    mock_verdict_free(&v);
    struct MHD_Response *resp = mock_buf_response(&b);
    if (resp != NULL)
        MHD_add_response_header(resp, "content-type",
                                junit ? "application/xml" : "application/json");
    return mock_queue(r, 200, resp);
}

/* Is `host` ("name:port") one of the mock's own names at its port? */
static bool own_host(const mock_server *s, const char *host, size_t len) {
    char want[128];
    const char *names[] = {"127.0.0.1", "localhost", "[::1]", s->bind_addr};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        bool v6 = i == 3 && strchr(names[i], ':') != NULL;
        int n = snprintf(want, sizeof want, "%s%s%s:%u", v6 ? "[" : "", names[i], v6 ? "]" : "",
                         (unsigned)s->port);
        if (n > 0 && (size_t)n == len && strncasecmp(host, want, len) == 0) return true;
        /* port 80 may go without it */
        size_t bare = (size_t)n - strlen(strrchr(want, ':'));
        if (s->port == 80 && len == bare && strncasecmp(host, want, bare) == 0) return true;
    }
    return false;
}

/* Byte-wise equal in a time that depends on the lengths only. */
static bool same_secret(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb;
    for (size_t i = 0; i < la && i < lb; i++) d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/*
 * The control plane answers the mock's own user only: a web page the developer opens can
 * POST text/plain to 127.0.0.1 (no CORS preflight), and a DNS-rebound name reaches it too.
 * With --control-token the request must carry it; without, Host must be one of the mock's
 * own names and an Origin (browsers send one on a cross-site POST) must be too.
 */
static bool control_allowed(req *r, char *why, size_t cap) {
    mock_server *s = r->s;
    if (s->control_token[0] != '\0') {
        const char *t = mock_header(r->conn, "x-fusebox-control-token");
        if (t != NULL && same_secret(t, s->control_token)) return true;
        snprintf(why, cap,
                 "fusebox mock: the control endpoints need the header x-fusebox-control-token "
                 "(--control-token)");
        return false;
    }
    const char *host = mock_header(r->conn, "host");
    if (host == NULL || !own_host(s, host, strlen(host))) {
        snprintf(why, cap,
                 "fusebox mock: the control endpoints answer only requests to the mock's own "
                 "address (Host 127.0.0.1:%u, localhost:%u or [::1]:%u); for remote use start "
                 "it with --control-token",
                 (unsigned)s->port, (unsigned)s->port, (unsigned)s->port);
        return false;
    }
    const char *origin = mock_header(r->conn, "origin");
    if (origin != NULL) {
        const char *h = strncasecmp(origin, "http://", 7) == 0    ? origin + 7
                        : strncasecmp(origin, "https://", 8) == 0 ? origin + 8
                                                                  : NULL;
        if (h == NULL || !own_host(s, h, strlen(h))) {
            snprintf(why, cap,
                     "fusebox mock: the control endpoints refuse requests from another origin "
                     "(a web page)");
            return false;
        }
    }
    return true;
}

enum MHD_Result mock_handle_control(req *r, route rt) {
    mock_server *s = r->s;
    util_buf b = {0};
    char why[300];
    if (!control_allowed(r, why, sizeof why)) {
        mock_logf(s, MOCK_LOG_WARN, "control request refused: %s", why + 14);
        return mock_send_control_error(r, 403, NULL, why);
    }
    switch (rt) {
    case RT_C_FAULTS:
        return load_faults(r);
    case RT_C_RESET:
        mock_server_reset(s);
        ok_json(&b, NULL, 0);
        return mock_send_json(r, 200, &b);
    case RT_C_LOG: {
        mock_attempts_snap snap; /* written out after the lock, not during */
        if (snapshot(s, &snap) != FB_OK) return MHD_NO;
        mock_attempts_snap_json(&snap, s->cfg.time_scale, &b);
        mock_attempts_snap_free(&snap);
        return mock_send_json(r, 200, &b);
    }
    case RT_C_STATS:
        stats_json(s, &b);
        return mock_send_json(r, 200, &b);
    case RT_C_VERDICT:
        return verdict(r);
    default:
        return MHD_NO;
    }
}
