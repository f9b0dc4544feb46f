/*
 * server.c - the mock server's life: configuration and its defaults, the daemon, reset and
 * statistics, shutdown; and the small helpers its files share (serverint.h).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "util/utf8.h"
#include "mockserver/serverint.h"

#define DEFAULT_MAX_CONNECTIONS 1024u
#define DEFAULT_MAX_BODY ((size_t)4 << 20)
#define DEFAULT_MAX_RESPONSE ((size_t)64 << 20)
#define DEFAULT_MAX_MEMORY ((size_t)512 << 20)
#define DEFAULT_HEADER_TIMEOUT_US (10 * FB_US_PER_S)
#define DEFAULT_COMPLETION_MAX 16
#define DEFAULT_LOG_CAPACITY 10000
#define DEFAULT_HANG_MAX_US (600 * FB_US_PER_S)

/* ---- helpers ---- */

void mock_logf(mock_server *s, mock_log_level lvl, const char *fmt, ...) {
    if (s->cfg.log == NULL) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->cfg.log(s->cfg.log_user, lvl, msg);
}

static void mhd_logger(void *cls, const char *fmt, va_list ap) {
    mock_server *s = cls;
    if (s->cfg.log == NULL) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n') msg[--n] = '\0';
    s->cfg.log(s->cfg.log_user, MOCK_LOG_WARN, msg);
}

int64_t mock_wall_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec;
}

void mock_copy_str(char *dst, size_t cap, const char *src) {
    size_t n = src != NULL ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n > 0) memcpy(dst, src, n);
    dst[n] = '\0';
}

void mock_copy_text(char *dst, size_t cap, const char *src) {
    mock_copy_str(dst, cap, src);
    util_utf8_fix(dst); /* a header's raw bytes, or a character the cap cut in two */
}

fb_time_us mock_timeline_locked(const mock_server *s, fb_time_us now_us) {
    return (fb_time_us)((double)(now_us - s->t0_us) * s->cfg.time_scale);
}

fb_time_us mock_to_real(const mock_server *s, fb_time_us d_us, double slow) {
    if (d_us <= 0) return 0;
    return (fb_time_us)((double)d_us * slow / s->cfg.time_scale);
}

const char *mock_header(struct MHD_Connection *c, const char *name) {
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

bool mock_stopping(mock_server *s) {
    pthread_mutex_lock(&s->lock);
    bool v = s->stopping;
    pthread_mutex_unlock(&s->lock);
    return v;
}

uint64_t mock_fnv1a(uint64_t h, const char *s) {
    for (; *s != '\0'; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

int64_t mock_count_locked(mock_server *s, uint64_t hash) {
    if (hash == 0) hash = 1;
    if (s->times_used >= TIMES_CAP * 3 / 4) {
        mock_logf(s, MOCK_LOG_WARN, "per-key table full: forgetting %zu counters", s->times_used);
        memset(s->times, 0, TIMES_CAP * sizeof *s->times);
        s->times_used = 0;
    }
    size_t i = (size_t)(hash % TIMES_CAP);
    while (s->times[i].hash != 0 && s->times[i].hash != hash) i = (i + 1) % TIMES_CAP;
    if (s->times[i].hash == 0) {
        s->times[i].hash = hash;
        s->times_used++;
    }
    return ++s->times[i].count;
}

req *mock_req_new(mock_server *s) {
    pthread_mutex_lock(&s->spare_lock);
    req *r = s->n_spare > 0 ? s->spare[--s->n_spare] : NULL;
    pthread_mutex_unlock(&s->spare_lock);
    if (r == NULL) return calloc(1, sizeof *r);
    memset(r, 0, sizeof *r);
    return r;
}

void mock_req_free(mock_server *s, req *r) {
    pthread_mutex_lock(&s->spare_lock);
    bool kept = s->n_spare < REQ_SPARE;
    if (kept) s->spare[s->n_spare++] = r;
    pthread_mutex_unlock(&s->spare_lock);
    if (!kept) free(r);
}

bool mock_memory_take(mock_server *s, size_t n) {
    size_t now = __atomic_add_fetch(&s->memory_used, n, __ATOMIC_RELAXED);
    if (now <= s->cfg.max_memory_bytes) return true;
    __atomic_sub_fetch(&s->memory_used, n, __ATOMIC_RELAXED);
    return false;
}

void mock_memory_give(mock_server *s, size_t n) {
    if (n > 0) __atomic_sub_fetch(&s->memory_used, n, __ATOMIC_RELAXED);
}

/* ---- state ---- */

/* The timeline's zero: now; the even faults count their attempts from there. */
static void restart_clock_locked(mock_server *s) {
    scn_fault_even_init(s->fault_even, (uint32_t)s->n_faults, s->cfg.seed, 0);
    s->t0_us = mock_now_us();
    s->wall0_s = mock_wall_now_s();
    const mock_capacity *c = &s->cfg.capacity;
    if (c->requests_per_min > 0) fb_bucket_init(&s->rpm, c->requests_per_min, FB_US_PER_MIN, 0);
    if (c->tokens_per_min > 0) fb_bucket_init(&s->tpm, c->tokens_per_min, FB_US_PER_MIN, 0);
}

int mock_server_set_faults(mock_server *s, const sim_fault *faults, size_t n) {
    if (n > MOCK_FAULTS_MAX || (n > 0 && faults == NULL)) return FB_EINVAL;
    pthread_mutex_lock(&s->lock);
    if (n > 0) memcpy(s->faults, faults, n * sizeof *faults);
    s->n_faults = n;
    s->attempt = 0;
    restart_clock_locked(s);
    pthread_mutex_unlock(&s->lock);
    return FB_OK;
}

void mock_server_reset(mock_server *s) {
    pthread_mutex_lock(&s->lock);
    mock_attempts_clear(&s->log);
    memset(s->times, 0, TIMES_CAP * sizeof *s->times);
    s->times_used = 0;
    mock_stats keep = s->stats;
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.in_flight = keep.in_flight; /* live gauges survive a reset */
    s->stats.suspended = keep.suspended;
    s->stats.busy = keep.busy;
    s->stats.waiting = keep.waiting;
    s->attempt = 0;
    s->id_seq = 0;
    restart_clock_locked(s);
    pthread_mutex_unlock(&s->lock);
}

void mock_server_stats(mock_server *s, mock_stats *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->stats;
    out->log_dropped = mock_attempts_dropped(&s->log);
    out->timeline_us = mock_timeline_locked(s, mock_now_us());
    pthread_mutex_unlock(&s->lock);
    out->header_timeouts = mock_watch_cut(s->watch);
}

uint16_t mock_server_port(const mock_server *s) {
    return s->port;
}

/* ---- creation ---- */

static int validate(const mock_config *c, char *err, size_t errlen) {
    const char *why = NULL;
    if (!(c->time_scale >= 0) || c->time_scale > 1e9)
        why = "time_scale must be > 0";
    else if (c->ttft_us < 0 || c->per_token_us < 0 || c->error_latency_us < 0)
        why = "latencies must be >= 0";
    else if (c->completion_tokens_max < 0 || c->context_window < 0)
        why = "token counts must be >= 0";
    else if (c->capacity.concurrency < 0 || c->capacity.requests_per_min < 0 ||
             c->capacity.tokens_per_min < 0 || c->capacity.queue < 0)
        why = "capacity limits must be >= 0";
    else if (c->capacity.overload_status != 0 &&
             (c->capacity.overload_status < 400 || c->capacity.overload_status > 599))
        why = "overload_status must be in 400..599";
    else if (c->n_faults > MOCK_FAULTS_MAX || (c->n_faults > 0 && c->faults == NULL))
        why = "too many faults";
    else if (c->hang_max_us < 0 || c->header_timeout_us < 0)
        why = "hang_max and header_timeout must be >= 0";
    if (why == NULL) return FB_OK;
    snprintf(err, errlen, "%s", why);
    return FB_EINVAL;
}

/* The configuration with its zeros replaced by the defaults, and the initial timeline. */
static void configure(mock_server *s, const mock_config *cfg) {
    s->cfg = *cfg;
    mock_config *c = &s->cfg;
    mock_copy_str(s->bind_addr, sizeof s->bind_addr, cfg->bind_addr ? cfg->bind_addr : "127.0.0.1");
    c->bind_addr = s->bind_addr;
    mock_copy_str(s->control_token, sizeof s->control_token,
                  cfg->control_token ? cfg->control_token : "");
    c->control_token = s->control_token[0] ? s->control_token : NULL;
    if (c->max_connections == 0) c->max_connections = DEFAULT_MAX_CONNECTIONS;
    if (c->max_body_bytes == 0) c->max_body_bytes = DEFAULT_MAX_BODY;
    if (c->max_response_bytes == 0) c->max_response_bytes = DEFAULT_MAX_RESPONSE;
    if (c->max_memory_bytes == 0) c->max_memory_bytes = DEFAULT_MAX_MEMORY;
    if (c->header_timeout_us == 0) c->header_timeout_us = DEFAULT_HEADER_TIMEOUT_US;
    if (c->threads == 0) c->threads = 1;
    if (c->time_scale == 0) c->time_scale = 1.0;
    if (c->completion_tokens_max == 0) c->completion_tokens_max = DEFAULT_COMPLETION_MAX;
    if (c->log_capacity == 0) c->log_capacity = DEFAULT_LOG_CAPACITY;
    if (c->hang_max_us == 0) c->hang_max_us = DEFAULT_HANG_MAX_US;
    c->faults = NULL;
    if (cfg->n_faults > 0) memcpy(s->faults, cfg->faults, cfg->n_faults * sizeof *s->faults);
    s->n_faults = cfg->n_faults;
}

/* The listening address, or FB_EINVAL with err filled. */
static int address(mock_server *s, struct sockaddr_in *a4, struct sockaddr_in6 *a6,
                   struct sockaddr **sa, unsigned *flags, char *err, size_t errlen) {
    memset(a4, 0, sizeof *a4);
    memset(a6, 0, sizeof *a6);
    if (inet_pton(AF_INET, s->bind_addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(s->cfg.port);
        *sa = (struct sockaddr *)a4;
        return FB_OK;
    }
    if (inet_pton(AF_INET6, s->bind_addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(s->cfg.port);
        *sa = (struct sockaddr *)a6;
        *flags |= MHD_USE_IPv6;
        return FB_OK;
    }
    snprintf(err, errlen, "bind address '%s' is not an IPv4 or IPv6 literal", s->bind_addr);
    return FB_EINVAL;
}

/* Listen on the configured address and port; FB_OK, or an error with err filled. */
static int start_daemon(mock_server *s, char *err, size_t errlen) {
    const mock_config *c = &s->cfg;
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    struct sockaddr *sa = NULL;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | MHD_USE_TURBO;
    if (address(s, &a4, &a6, &sa, &flags, err, errlen) != FB_OK) return FB_EINVAL;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_logger, s},
        {MHD_OPTION_SOCK_ADDR, 0, sa},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)c->max_connections, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)c->max_connections_per_ip, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)mock_on_completed, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)mock_watch_notify, s->watch},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)mock_watch_uri, s->watch},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL},
        {c->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t)c->threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    s->daemon = MHD_start_daemon(flags, c->port, NULL, NULL, mock_on_access, s, MHD_OPTION_ARRAY,
                                 opts, MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(err, errlen, "cannot listen on %s port %u (in use, or no permission)",
                 s->bind_addr, (unsigned)c->port);
        return FB_EIO;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di != NULL ? di->port : c->port;
    return FB_OK;
}

/* The log, counters, timer and watch; FB_OK or FB_ENOMEM (everything freed). */
static int start_parts(mock_server *s) {
    if (mock_attempts_init(&s->log, s->cfg.log_capacity) != FB_OK) return FB_ENOMEM;
    s->times = calloc(TIMES_CAP, sizeof *s->times);
    /* One timer entry per connection, and per slot still busy after its client left. */
    size_t timers = s->cfg.max_connections + 16 + (size_t)s->cfg.capacity.concurrency;
    if (s->times != NULL && mock_sched_create(timers, &s->sched) == FB_OK) {
        if (mock_watch_create(s->cfg.header_timeout_us, CONNECTION_TIMEOUT_S * FB_US_PER_S, URL_MAX,
                              URL_ARGS_MAX, s->cfg.max_connections, mock_long_uri, s,
                              &s->watch) == FB_OK)
            return FB_OK;
        mock_sched_destroy(s->sched);
    }
    free(s->times);
    mock_attempts_free(&s->log);
    return FB_ENOMEM;
}

static void free_parts(mock_server *s) {
    mock_proxy_destroy(s->proxy);
    mock_watch_destroy(s->watch);
    mock_sched_destroy(s->sched);
    free(s->times);
    mock_attempts_free(&s->log);
    for (size_t i = 0; i < s->n_spare; i++) free(s->spare[i]);
    pthread_mutex_destroy(&s->spare_lock);
    pthread_mutex_destroy(&s->snap_lock);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int mock_server_create(const mock_config *cfg, mock_server **out, char *err, size_t errlen) {
    int rc = validate(cfg, err, errlen);
    if (rc != FB_OK) return rc;
    mock_server *s = calloc(1, sizeof *s);
    if (s == NULL) return FB_ENOMEM;
    configure(s, cfg);
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->spare_lock, NULL);
    pthread_mutex_init(&s->snap_lock, NULL);
    restart_clock_locked(s);
    if (start_parts(s) != FB_OK) {
        snprintf(err, errlen, "out of memory");
        pthread_mutex_destroy(&s->spare_lock);
        pthread_mutex_destroy(&s->snap_lock);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return FB_ENOMEM;
    }
    if (cfg->upstream_url != NULL && (rc = mock_proxy_create(s, &s->proxy, err, errlen)) != FB_OK) {
        free_parts(s);
        return rc;
    }
    rc = start_daemon(s, err, errlen);
    if (rc != FB_OK) {
        free_parts(s);
        return rc;
    }
    mock_logf(s, MOCK_LOG_INFO, "listening on %s port %u", s->bind_addr, (unsigned)s->port);
    *out = s;
    return FB_OK;
}

void mock_server_destroy(mock_server *s) {
    if (s == NULL) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_mutex_unlock(&s->lock);
    /* End the upstream transfers, then resume every waiting connection; their handlers see
     * `stopping` and end them. */
    mock_proxy_stop(s->proxy);
    mock_sched_stop(s->sched);
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&s->lock);
        int64_t n = s->stats.suspended;
        pthread_mutex_unlock(&s->lock);
        if (n <= 0) break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(s->daemon);
    free_parts(s);
}
