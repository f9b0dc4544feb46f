/*
 * server.c - the mock provider's HTTP side: routing, decisions, timing.
 *
 * One libmicrohttpd daemon with an internal epoll thread (or a small pool)
 * and connection suspend/resume. A request's life:
 *   1. headers arrive: a context is allocated; an oversized Content-Length
 *      is answered 413 at once;
 *   2. the body is collected (up to max_body_bytes, the rest is discarded);
 *   3. dispatch: route, parse, decide the fault (header > model > timeline),
 *      check capacity, then answer now, answer later (suspend + timer),
 *      stream (a content reader that suspends between events), hang
 *      (suspended, woken every HANG_POLL_US to see whether the client left)
 *      or reset (close the socket with no response).
 * All shared state sits behind one mutex; handlers hold it briefly.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "core/ratelimit.h"
#include "mockserver/attempts.h"
#include "mockserver/mock.h"
#include "mockserver/sched.h"
#include "mockserver/wire.h"

#define DEFAULT_MAX_CONNECTIONS 1024u
#define DEFAULT_MAX_BODY ((size_t)4 << 20)
#define DEFAULT_COMPLETION_MAX 16
#define DEFAULT_LOG_CAPACITY 10000
#define DEFAULT_HANG_MAX_US (600 * FB_US_PER_S)
#define HANG_POLL_US (500 * FB_US_PER_MS)
#define CONNECTION_TIMEOUT_S 60u
#define TIMES_CAP 4096
#define MODEL_MAX 256

/* Nominal rate-limit figures reported when no capacity is configured. */
#define NOMINAL_RPM 10000
#define NOMINAL_TPM 30000000

typedef struct times_slot {
    uint64_t hash;
    int64_t count;
} times_slot;

struct mock_server {
    mock_config cfg;
    char bind_addr[64];
    struct MHD_Daemon *daemon;
    mock_sched *sched;
    uint16_t port;

    pthread_mutex_t lock; /* everything below */
    bool stopping;
    sim_fault faults[MOCK_FAULTS_MAX];
    size_t n_faults;
    fb_time_us t0_us; /* real monotonic time of the timeline's zero */
    int64_t wall0_s;  /* wall clock at t0, for "created" */
    uint64_t attempt; /* attempts since reset: keys the fraction draws */
    uint64_t id_seq;  /* ids */
    mock_attempts log;
    times_slot *times;
    size_t times_used;
    mock_stats stats;
    fb_bucket rpm, tpm;
};

typedef enum phase {
    PH_BODY = 0, /* collecting the request body */
    PH_WAIT,     /* response prepared, suspended until due_us */
    PH_HANG,     /* never answering */
    PH_QUEUED    /* response queued (maybe a stream) */
} phase;

typedef enum route {
    RT_NONE = 0,
    RT_CHAT,
    RT_MESSAGES,
    RT_COUNT_TOKENS,
    RT_MODELS,
    RT_C_FAULTS,
    RT_C_RESET,
    RT_C_LOG,
    RT_C_STATS
} route;

static const struct route_def {
    const char *path;
    const char *method;
    route id;
} routes[] = {
    {"/v1/chat/completions", "POST", RT_CHAT},
    {"/v1/messages", "POST", RT_MESSAGES},
    {"/v1/messages/count_tokens", "POST", RT_COUNT_TOKENS},
    {"/v1/models", "GET", RT_MODELS},
    {"/__fusebox/faults", "POST", RT_C_FAULTS},
    {"/__fusebox/reset", "POST", RT_C_RESET},
    {"/__fusebox/log", "GET", RT_C_LOG},
    {"/__fusebox/stats", "GET", RT_C_STATS},
};

typedef struct req {
    mock_server *s;
    struct MHD_Connection *conn;
    phase phase;
    bool suspended;
    bool too_large;
    bool attempt; /* a completion request: counted in in_flight */
    bool has_log;
    uint64_t log_seq;
    fb_time_us arrival_us; /* real monotonic */
    fb_time_us due_us;
    fb_time_us hang_until_us;
    mock_buf body;
    size_t body_bytes;
    /* a prepared response for PH_WAIT */
    struct MHD_Response *pending;
    unsigned pending_status;
    /* streaming */
    mock_stream st;
    mock_buf out;
    size_t out_off;
    fb_time_us t0_us, ttft_us, per_token_us, stall_us;
    int64_t stall_after;
    char model[MODEL_MAX];
    char id[64];
    char request_id[64];
} req;

/* ---- small helpers ------------------------------------------------------------------------- */

static void logf_(mock_server *s, mock_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logf_(mock_server *s, mock_log_level lvl, const char *fmt, ...) {
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

static int64_t wall_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec;
}

/* Copy with truncation (log fields are for humans). */
static void copy_str(char *dst, size_t cap, const char *src) {
    size_t n = src != NULL ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n > 0) memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Timeline time now (caller holds the lock). */
static fb_time_us timeline_locked(const mock_server *s, fb_time_us now_us) {
    return (fb_time_us)((double)(now_us - s->t0_us) * s->cfg.time_scale);
}

/* A timeline duration as real time, with the latency factor. */
static fb_time_us to_real(const mock_server *s, fb_time_us d_us, double slow) {
    if (d_us <= 0) return 0;
    return (fb_time_us)((double)d_us * slow / s->cfg.time_scale);
}

static const char *header(struct MHD_Connection *c, const char *name) {
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s != '\0'; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* "times-N": has this (key, spec) pair already failed N times? Counts this attempt. */
static bool times_exhausted(mock_server *s, const char *key, const char *spec, int64_t n) {
    uint64_t h = fnv1a(fnv1a(0xcbf29ce484222325ull, key ? key : ""), "\n");
    h = fnv1a(h, spec);
    if (h == 0) h = 1;
    if (s->times_used >= TIMES_CAP * 3 / 4) {
        logf_(s, MOCK_LOG_WARN, "times table full: forgetting %zu counters", s->times_used);
        memset(s->times, 0, TIMES_CAP * sizeof *s->times);
        s->times_used = 0;
    }
    size_t i = (size_t)(h % TIMES_CAP);
    while (s->times[i].hash != 0 && s->times[i].hash != h) i = (i + 1) % TIMES_CAP;
    if (s->times[i].hash == 0) {
        s->times[i].hash = h;
        s->times_used++;
    }
    return ++s->times[i].count > n;
}

/* ---- responses and headers ----------------------------------------------------------------- */

typedef struct rl_view {
    int64_t limit_req, remaining_req, limit_tok, remaining_tok;
    fb_time_us reset_req_us, reset_tok_us;
} rl_view;

/* Time until a bucket is full again: (capacity - available) / rate. */
static fb_time_us bucket_full_in(fb_bucket *b, fb_time_us now_us) {
    int64_t avail = fb_bucket_available(b, now_us), capacity = fb_bucket_capacity(b);
    if (avail >= capacity) return 0;
    return fb_bucket_wait(b, capacity, now_us);
}

static rl_view rate_view(mock_server *s, int64_t tokens) {
    rl_view v = {NOMINAL_RPM, NOMINAL_RPM - 1, NOMINAL_TPM, NOMINAL_TPM - tokens, 6000, 0};
    pthread_mutex_lock(&s->lock);
    fb_time_us t = timeline_locked(s, mock_now_us());
    if (s->cfg.capacity.requests_per_min > 0) {
        v.limit_req = s->cfg.capacity.requests_per_min;
        v.remaining_req = fb_bucket_available(&s->rpm, t);
        v.reset_req_us = bucket_full_in(&s->rpm, t);
    }
    if (s->cfg.capacity.tokens_per_min > 0) {
        v.limit_tok = s->cfg.capacity.tokens_per_min;
        v.remaining_tok = fb_bucket_available(&s->tpm, t);
        v.reset_tok_us = bucket_full_in(&s->tpm, t);
    }
    pthread_mutex_unlock(&s->lock);
    if (v.remaining_req < 0) v.remaining_req = 0;
    if (v.remaining_tok < 0) v.remaining_tok = 0;
    return v;
}

static void add_num(struct MHD_Response *resp, const char *name, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    MHD_add_response_header(resp, name, buf);
}

static void add_common(req *r, struct MHD_Response *resp, mock_dialect d, const char *ctype,
                       int64_t tokens, fb_time_us processing_us) {
    char buf[64];
    MHD_add_response_header(resp, "content-type", ctype);
    rl_view v = rate_view(r->s, tokens);
    if (d == MOCK_OPENAI) {
        MHD_add_response_header(resp, "x-request-id", r->request_id);
        add_num(resp, "openai-processing-ms", processing_us / 1000);
        MHD_add_response_header(resp, "openai-version", "2020-10-01");
        MHD_add_response_header(resp, "openai-organization", "fusebox-mock");
        add_num(resp, "x-ratelimit-limit-requests", v.limit_req);
        add_num(resp, "x-ratelimit-limit-tokens", v.limit_tok);
        add_num(resp, "x-ratelimit-remaining-requests", v.remaining_req);
        add_num(resp, "x-ratelimit-remaining-tokens", v.remaining_tok);
        mock_wire_go_duration(v.reset_req_us, buf, sizeof buf);
        MHD_add_response_header(resp, "x-ratelimit-reset-requests", buf);
        mock_wire_go_duration(v.reset_tok_us, buf, sizeof buf);
        MHD_add_response_header(resp, "x-ratelimit-reset-tokens", buf);
    } else {
        static const char *const kinds[] = {"tokens", "input-tokens", "output-tokens"};
        char name[64];
        int64_t now_s = wall_now_s();
        MHD_add_response_header(resp, "request-id", r->request_id);
        MHD_add_response_header(resp, "anthropic-organization-id",
                                "00000000-0000-4000-8000-f05eb0c5f00d");
        add_num(resp, "anthropic-ratelimit-requests-limit", v.limit_req);
        add_num(resp, "anthropic-ratelimit-requests-remaining", v.remaining_req);
        mock_wire_rfc3339(now_s + (v.reset_req_us + FB_US_PER_S - 1) / FB_US_PER_S, buf,
                          sizeof buf);
        MHD_add_response_header(resp, "anthropic-ratelimit-requests-reset", buf);
        /* Token remaining is rounded to the nearest thousand, as the real API does. */
        int64_t rem = (v.remaining_tok + 500) / 1000 * 1000;
        mock_wire_rfc3339(now_s + (v.reset_tok_us + FB_US_PER_S - 1) / FB_US_PER_S, buf,
                          sizeof buf);
        for (size_t i = 0; i < 3; i++) {
            snprintf(name, sizeof name, "anthropic-ratelimit-%s-limit", kinds[i]);
            add_num(resp, name, v.limit_tok);
            snprintf(name, sizeof name, "anthropic-ratelimit-%s-remaining", kinds[i]);
            add_num(resp, name, rem);
            snprintf(name, sizeof name, "anthropic-ratelimit-%s-reset", kinds[i]);
            MHD_add_response_header(resp, name, buf);
        }
    }
}

static void add_fault_headers(struct MHD_Response *resp, const mock_action *a) {
    char buf[64];
    if (a->ra_kind == MOCK_RA_SECONDS) {
        snprintf(buf, sizeof buf, "%.15g", a->retry_after_s);
        MHD_add_response_header(resp, "retry-after", buf);
    } else if (a->ra_kind == MOCK_RA_DATE) {
        mock_wire_http_date(wall_now_s() + (int64_t)ceil(a->retry_after_s), buf, sizeof buf);
        MHD_add_response_header(resp, "retry-after", buf);
    }
    if (a->retry_after_ms >= 0) {
        snprintf(buf, sizeof buf, "%.15g", a->retry_after_ms);
        MHD_add_response_header(resp, "retry-after-ms", buf);
    }
    if (a->should_retry >= 0)
        MHD_add_response_header(resp, "x-should-retry", a->should_retry ? "true" : "false");
}

static struct MHD_Response *buf_response(mock_buf *b) {
    size_t len;
    char *p = mock_buf_take(b, &len);
    if (p == NULL) return NULL;
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, p, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) free(p);
    return resp;
}

static void count_status(mock_server *s, int status) {
    if (status == 429) s->stats.status_429++;
    if (status >= 200 && status < 300)
        s->stats.status_2xx++;
    else if (status >= 400 && status < 500)
        s->stats.status_4xx++;
    else if (status >= 500)
        s->stats.status_5xx++;
}

/* Record the status (and fault) in the attempt log entry and counters. */
static void note_sent(req *r, int status, const char *fault) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    count_status(s, status);
    if (r->has_log) {
        mock_attempt *e = mock_attempts_get(&s->log, r->log_seq);
        if (e != NULL) {
            e->status = status;
            if (fault != NULL && fault[0] != '\0') copy_str(e->fault, sizeof e->fault, fault);
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static enum MHD_Result queue(req *r, unsigned status, struct MHD_Response *resp) {
    if (resp == NULL) return MHD_NO;
    enum MHD_Result rc = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    r->phase = PH_QUEUED;
    return rc;
}

/* A JSON answer outside the provider dialects (control plane). */
static enum MHD_Result send_json(req *r, unsigned status, mock_buf *b) {
    struct MHD_Response *resp = buf_response(b);
    if (resp != NULL) MHD_add_response_header(resp, "content-type", "application/json");
    return queue(r, status, resp);
}

static enum MHD_Result send_control_error(req *r, unsigned status, const char *path,
                                          const char *msg) {
    mock_buf b = {0};
    char text[400];
    if (path != NULL && path[0] != '\0')
        snprintf(text, sizeof text, "%s: %s", path, msg);
    else
        snprintf(text, sizeof text, "%s", msg);
    mock_buf_puts(&b, "{\"error\":");
    mock_buf_json_string(&b, text);
    if (path != NULL) {
        mock_buf_puts(&b, ",\"path\":");
        mock_buf_json_string(&b, path);
    }
    mock_buf_puts(&b, "}");
    return send_json(r, status, &b);
}

static void new_ids(req *r, mock_dialect d) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    uint64_t seq = s->id_seq++;
    pthread_mutex_unlock(&s->lock);
    char x[40];
    if (d == MOCK_OPENAI) {
        mock_wire_id(s->cfg.seed, seq * 2, false, x, 32);
        snprintf(r->request_id, sizeof r->request_id, "req_%s", x);
        mock_wire_id(s->cfg.seed, seq * 2 + 1, true, x, 29);
        snprintf(r->id, sizeof r->id, "chatcmpl-%s", x);
    } else {
        mock_wire_id(s->cfg.seed, seq * 2, true, x, 20);
        snprintf(r->request_id, sizeof r->request_id, "req_011C%s", x);
        mock_wire_id(s->cfg.seed, seq * 2 + 1, true, x, 22);
        snprintf(r->id, sizeof r->id, "msg_01%s", x);
    }
}

/* A provider-format error, now (or at due_us when > now). */
static enum MHD_Result send_error(req *r, mock_reply *rep, int status, mock_flavor flavor,
                                  const char *message, const mock_action *a, fb_time_us due_us) {
    mock_buf b = {0};
    if (a != NULL)
        rep->retry_hint_s = a->retry_after_ms >= 0 ? a->retry_after_ms / 1000.0 : a->retry_after_s;
    mock_wire_error(&b, rep, status, flavor, message);
    struct MHD_Response *resp = buf_response(&b);
    if (resp == NULL) return MHD_NO;
    fb_time_us now = mock_now_us();
    add_common(r, resp, rep->dialect, "application/json", 0,
               (due_us > now ? due_us : now) - r->arrival_us);
    if (a != NULL) add_fault_headers(resp, a);
    note_sent(r, status, a != NULL ? a->label : NULL);
    if (due_us > now) {
        r->pending = resp;
        r->pending_status = (unsigned)status;
        r->due_us = due_us;
        r->phase = PH_WAIT;
        return MHD_YES; /* the caller suspends */
    }
    return queue(r, (unsigned)status, resp);
}

/* ---- suspension ---------------------------------------------------------------------------- */

static bool suspend_until(req *r, fb_time_us due_us) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    bool stop = s->stopping;
    if (!stop) s->stats.suspended++;
    pthread_mutex_unlock(&s->lock);
    if (stop) return false;
    r->suspended = true;
    if (mock_sched_suspend(s->sched, r->conn, due_us)) return true;
    r->suspended = false;
    pthread_mutex_lock(&s->lock);
    s->stats.suspended--;
    pthread_mutex_unlock(&s->lock);
    return false;
}

static void note_resumed(req *r) {
    if (!r->suspended) return;
    r->suspended = false;
    pthread_mutex_lock(&r->s->lock);
    r->s->stats.suspended--;
    pthread_mutex_unlock(&r->s->lock);
}

static bool stopping(mock_server *s) {
    pthread_mutex_lock(&s->lock);
    bool v = s->stopping;
    pthread_mutex_unlock(&s->lock);
    return v;
}

/* ---- streams ------------------------------------------------------------------------------- */

static fb_time_us step_due(const req *r) {
    if (r->st.step == MOCK_STEP_PRE || r->st.step == MOCK_STEP_END) return r->t0_us;
    fb_time_us due = r->t0_us + r->ttft_us + r->st.k * r->per_token_us;
    if (r->stall_after >= 0 && r->st.k >= r->stall_after) due += r->stall_us;
    return due;
}

static ssize_t body_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    req *r = cls;
    (void)pos;
    note_resumed(r);
    size_t done = 0;
    for (;;) {
        if (r->out_off < r->out.len) {
            size_t n = r->out.len - r->out_off;
            if (n > max - done) n = max - done;
            memcpy(buf + done, r->out.p + r->out_off, n);
            done += n;
            r->out_off += n;
            if (done == max) return (ssize_t)done;
            continue;
        }
        r->out.len = 0;
        r->out_off = 0;
        if (r->st.step == MOCK_STEP_END) {
            if (done > 0) return (ssize_t)done;
            if (r->st.cut) {
                pthread_mutex_lock(&r->s->lock);
                r->s->stats.cut_streams++;
                pthread_mutex_unlock(&r->s->lock);
                return MHD_CONTENT_READER_END_WITH_ERROR;
            }
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        fb_time_us due = step_due(r);
        if (due > mock_now_us()) {
            if (done > 0) return (ssize_t)done;
            if (!suspend_until(r, due)) return MHD_CONTENT_READER_END_WITH_ERROR;
            return 0;
        }
        mock_stream_emit(&r->st, &r->out);
        if (r->out.oom) return MHD_CONTENT_READER_END_WITH_ERROR;
    }
}

/* ---- request parsing ----------------------------------------------------------------------- */

static int64_t text_chars(const cJSON *content) {
    if (cJSON_IsString(content)) return mock_wire_chars(content->valuestring);
    int64_t n = 0;
    if (cJSON_IsArray(content)) {
        const cJSON *part;
        cJSON_ArrayForEach(part, content) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
            if (cJSON_IsString(t)) n += mock_wire_chars(t->valuestring);
        }
    }
    return n;
}

typedef struct parsed {
    const char *model;
    bool stream;
    bool include_usage;
    int64_t max_tokens; /* -1: absent */
    int n;
    int64_t prompt_tokens;
} parsed;

/* Validate a completion request; on failure returns a message for a 400. */
static const char *parse_request(const cJSON *root, mock_dialect d, parsed *p) {
    memset(p, 0, sizeof *p);
    p->max_tokens = -1;
    p->n = 1;
    if (!cJSON_IsObject(root)) return "The request body must be a JSON object.";
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsString(model) || model->valuestring[0] == '\0')
        return d == MOCK_OPENAI ? "you must provide a model parameter" : "model: Field required";
    p->model = model->valuestring;
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    if (!cJSON_IsArray(msgs))
        return d == MOCK_OPENAI ? "Missing required parameter: 'messages'."
                                : "messages: Field required";
    int64_t chars = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) chars += text_chars(cJSON_GetObjectItemCaseSensitive(m, "content"));
    chars += text_chars(cJSON_GetObjectItemCaseSensitive(root, "system"));
    p->prompt_tokens = (chars + 3) / 4;

    const cJSON *stream = cJSON_GetObjectItemCaseSensitive(root, "stream");
    if (stream != NULL && !cJSON_IsBool(stream) && !cJSON_IsNull(stream))
        return "stream: Input should be a valid boolean";
    p->stream = cJSON_IsTrue(stream);
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
    p->include_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(so, "include_usage"));

    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "max_completion_tokens");
    if (mt == NULL || cJSON_IsNull(mt)) mt = cJSON_GetObjectItemCaseSensitive(root, "max_tokens");
    if (mt != NULL && !cJSON_IsNull(mt)) {
        if (!cJSON_IsNumber(mt) || mt->valuedouble < 1 || mt->valuedouble > 1e9 ||
            mt->valuedouble != floor(mt->valuedouble))
            return "max_tokens: Input should be a positive integer";
        p->max_tokens = (int64_t)mt->valuedouble;
    } else if (d == MOCK_ANTHROPIC) {
        return "max_tokens: Field required";
    }
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "n");
    if (d == MOCK_OPENAI && n != NULL && !cJSON_IsNull(n)) {
        if (!cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > 128 ||
            n->valuedouble != floor(n->valuedouble))
            return "n: must be an integer in [1, 128]";
        p->n = (int)n->valuedouble;
    }
    return NULL;
}

/* ---- capacity ------------------------------------------------------------------------------ */

/*
 * Admit one attempt of `tokens` tokens against the configured capacity,
 * scaled by active brownouts. On refusal fills *wait_us (timeline time
 * until it would fit; 1 s for concurrency) and returns false.
 */
static bool capacity_admit(mock_server *s, int64_t tokens, double scale, fb_time_us t_us,
                           fb_time_us *wait_us) {
    const mock_capacity *c = &s->cfg.capacity;
    if (scale <= 0) { /* a total brownout */
        *wait_us = FB_US_PER_S;
        return false;
    }
    if (c->concurrency > 0) {
        int64_t limit = (int64_t)floor((double)c->concurrency * scale);
        if (s->stats.in_flight >= (limit > 0 ? limit : 1)) {
            *wait_us = FB_US_PER_S;
            return false;
        }
    }
    /* A brownout makes every request cost 1/scale of a full one. */
    int64_t req_cost = (int64_t)ceil(1.0 / scale);
    int64_t tok_cost = (int64_t)ceil((double)tokens / scale);
    fb_time_us w = 0;
    if (c->requests_per_min > 0) {
        if (req_cost > fb_bucket_capacity(&s->rpm)) req_cost = fb_bucket_capacity(&s->rpm);
        fb_time_us wr = fb_bucket_wait(&s->rpm, req_cost, t_us);
        if (wr > w) w = wr;
    }
    if (c->tokens_per_min > 0) {
        if (tok_cost > fb_bucket_capacity(&s->tpm)) tok_cost = fb_bucket_capacity(&s->tpm);
        fb_time_us wt = fb_bucket_wait(&s->tpm, tok_cost, t_us);
        if (wt > w) w = wt;
    }
    if (w > 0) {
        *wait_us = w;
        return false;
    }
    if (c->requests_per_min > 0) fb_bucket_take(&s->rpm, req_cost, t_us);
    if (c->tokens_per_min > 0) fb_bucket_take(&s->tpm, tok_cost, t_us);
    return true;
}

/* ---- completion endpoints ------------------------------------------------------------------ */

static mock_attempt *log_attempt(req *r, const char *method, const char *url, const char *key) {
    mock_server *s = r->s;
    mock_attempt *e = mock_attempts_add(&s->log);
    fb_time_us now = mock_now_us();
    e->t_us = timeline_locked(s, r->arrival_us < s->t0_us ? now : r->arrival_us);
    e->real_us = (r->arrival_us > s->t0_us ? r->arrival_us : now) - s->t0_us;
    copy_str(e->method, sizeof e->method, method);
    copy_str(e->path, sizeof e->path, url);
    copy_str(e->key, sizeof e->key, key);
    const char *rc = header(r->conn, "x-stainless-retry-count");
    if (rc != NULL) e->retry_count = atoi(rc);
    r->has_log = true;
    r->log_seq = e->seq;
    return e;
}

static enum MHD_Result start_hang(req *r) {
    mock_server *s = r->s;
    fb_time_us now = mock_now_us();
    r->phase = PH_HANG;
    r->hang_until_us = now + s->cfg.hang_max_us;
    pthread_mutex_lock(&s->lock);
    s->stats.hangs++;
    pthread_mutex_unlock(&s->lock);
    if (!suspend_until(r, now + HANG_POLL_US)) return MHD_NO;
    return MHD_YES;
}

static enum MHD_Result do_reset(req *r) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    s->stats.resets++;
    pthread_mutex_unlock(&s->lock);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci != NULL) {
        /* Linger 0: the close sends RST where the stack allows, like a crashed upstream. */
        struct linger lg = {1, 0};
        setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    return MHD_NO;
}

/* The attempt is counted and logged; its number draws its faults, t_us places it on the timeline.
 */
static void begin_attempt(req *r, const char *method, const char *url, const char *key,
                          mock_reply *rep, uint64_t *attempt, fb_time_us *t_us) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    s->stats.attempts++;
    s->stats.in_flight++;
    r->attempt = true;
    log_attempt(r, method, url, key);
    *attempt = s->attempt++;
    *t_us = timeline_locked(s, mock_now_us());
    rep->created_s = s->wall0_s + *t_us / FB_US_PER_S;
    pthread_mutex_unlock(&s->lock);
}

/* Parse the body into *p and the reply's fields; a message for the 400 when it is bad. */
static const char *read_request(req *r, mock_reply *rep, parsed *p) {
    mock_server *s = r->s;
    cJSON *root = cJSON_ParseWithLength(r->body.p ? r->body.p : "", r->body.len);
    if (root == NULL) {
        return rep->dialect == MOCK_OPENAI
                   ? "We could not parse the JSON body of your request. (HINT: This likely means "
                     "you aren't using your HTTP library correctly. The OpenAI API expects a JSON "
                     "payload, but what was sent was not valid JSON.)"
                   : "There was an issue with your request body: invalid JSON.";
    }
    const char *bad = parse_request(root, rep->dialect, p);
    if (p->model != NULL) copy_str(r->model, sizeof r->model, p->model);
    rep->model = r->model;
    pthread_mutex_lock(&s->lock);
    mock_attempt *e = mock_attempts_get(&s->log, r->log_seq);
    if (e != NULL) {
        copy_str(e->model, sizeof e->model, r->model);
        e->stream = p->stream;
    }
    pthread_mutex_unlock(&s->lock);
    cJSON_Delete(root);
    rep->prompt_tokens = p->prompt_tokens;
    rep->max_tokens = p->max_tokens;
    rep->n = p->n;
    rep->include_usage = p->include_usage;
    return bad;
}

/*
 * The attempt's fate: a per-request spec (header, then an "fb-" model) or
 * else the timeline. FB_EPARSE with msg filled for a bad spec.
 */
static int decide(req *r, const char *key, uint64_t attempt, fb_time_us t_us, mock_action *a,
                  double *scale, char *msg, size_t msglen) {
    mock_server *s = r->s;
    mock_action_init(a);
    *scale = 1.0;
    const char *spec = header(r->conn, "x-fusebox-fault");
    const char *origin = "x-fusebox-fault";
    if (spec == NULL && strncmp(r->model, "fb-", 3) == 0) {
        spec = r->model + 3;
        origin = "model";
    }
    mock_parse_error perr;
    if (spec != NULL && mock_spec_parse(spec, a, &perr) != FB_OK) {
        snprintf(msg, msglen, "%s: '%s': %s (fusebox fault spec)", origin, perr.path, perr.msg);
        return FB_EPARSE;
    }
    pthread_mutex_lock(&s->lock);
    if (spec == NULL)
        mock_timeline_decide(s->faults, s->n_faults, t_us, s->cfg.seed, attempt, a, scale);
    else if (a->times > 0 && times_exhausted(s, key, spec, a->times))
        mock_action_init(a); /* the first N attempts failed: this one succeeds */
    pthread_mutex_unlock(&s->lock);
    return FB_OK;
}

/* Would the attempt be served (no fault answers it)? */
static bool served(const mock_action *a) {
    return a->status == 0 && !a->hang && !a->reset;
}

/*
 * The provider's own limits on an attempt that would be served: the context
 * window (400), then capacity (429 with the bucket's wait), or a brownout's
 * share rejected as overloaded when no capacity is configured.
 */
static void apply_limits(req *r, mock_dialect d, const parsed *p, int64_t tokens, uint64_t attempt,
                         fb_time_us t_us, double scale, mock_action *a) {
    mock_server *s = r->s;
    if (served(a) && s->cfg.context_window > 0 && p->prompt_tokens > s->cfg.context_window) {
        a->status = 400;
        a->flavor = MOCK_FLAVOR_CONTEXT;
        copy_str(a->label, sizeof a->label, "context_window");
    }
    if (!served(a)) return;
    const mock_capacity *c = &s->cfg.capacity;
    fb_time_us wait_us = 0;
    bool brownout_reject = false, ok = true;
    pthread_mutex_lock(&s->lock);
    if (c->concurrency > 0 || c->requests_per_min > 0 || c->tokens_per_min > 0) {
        /* The attempt itself is already counted in in_flight. */
        s->stats.in_flight--;
        ok = capacity_admit(s, p->prompt_tokens + tokens * p->n, scale, t_us, &wait_us);
        s->stats.in_flight++;
    } else if (scale < 1.0) {
        brownout_reject = mock_draw(s->cfg.seed, attempt, 0xB0) >= scale;
    }
    if (!ok) s->stats.capacity_rejects++;
    pthread_mutex_unlock(&s->lock);
    if (!ok) {
        a->status = 429;
        a->ra_kind = MOCK_RA_SECONDS;
        a->retry_after_s = (double)((wait_us + FB_US_PER_S - 1) / FB_US_PER_S);
        a->retry_after_ms = (double)wait_us / 1000.0;
        copy_str(a->label, sizeof a->label, "capacity");
    } else if (brownout_reject) {
        a->status = d == MOCK_OPENAI ? 503 : 529;
        a->flavor = MOCK_FLAVOR_OVERLOADED;
    }
}

static enum MHD_Result answer_stream(req *r, const mock_reply *rep, const mock_action *a,
                                     int64_t billed) {
    mock_stream_init(&r->st, rep, a->end, a->end_after);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, body_reader, r, NULL);
    if (resp == NULL) return MHD_NO;
    add_common(r, resp, rep->dialect, "text/event-stream; charset=utf-8", billed, 0);
    MHD_add_response_header(resp, "cache-control", "no-cache");
    add_fault_headers(resp, a);
    note_sent(r, 200, a->label);
    return queue(r, MHD_HTTP_OK, resp);
}

/* Non-streamed: the whole body after ttft + T x per_token (+ a stall). */
static enum MHD_Result answer_plain(req *r, const mock_reply *rep, const mock_action *a,
                                    int64_t billed, fb_time_us now, fb_time_us due) {
    struct MHD_Response *resp;
    mock_buf b = {0};
    mock_wire_success(&b, rep);
    if (a->end == MOCK_END_CUT || a->end == MOCK_END_TRUNCATE || a->end == MOCK_END_MALFORMED) {
        /* The body stops half way: abortively for cut, cleanly (chunked) otherwise. */
        if (b.oom) return MHD_NO;
        r->out = b;
        r->out.len = b.len / 2;
        r->st.step = MOCK_STEP_END;
        r->st.cut = a->end == MOCK_END_CUT;
        r->t0_us = due;
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, body_reader, r, NULL);
    } else {
        resp = buf_response(&b);
    }
    if (resp == NULL) return MHD_NO;
    add_common(r, resp, rep->dialect, "application/json", billed, due - now);
    add_fault_headers(resp, a);
    note_sent(r, 200, a->label);
    if (due > now) {
        r->pending = resp;
        r->pending_status = MHD_HTTP_OK;
        r->due_us = due;
        r->phase = PH_WAIT;
        return suspend_until(r, due) ? MHD_YES : MHD_NO;
    }
    return queue(r, MHD_HTTP_OK, resp);
}

/* Carry out the decided action: reset, hang, an error, or the answer (streamed or not). */
static enum MHD_Result answer(req *r, mock_reply *rep, const parsed *p, const mock_action *a,
                              int64_t tokens) {
    mock_server *s = r->s;
    if (mock_action_is_fault(a)) {
        pthread_mutex_lock(&s->lock);
        s->stats.faults++;
        pthread_mutex_unlock(&s->lock);
    }
    if (a->reset || a->hang) {
        note_sent(r, 0, a->label);
        return a->reset ? do_reset(r) : start_hang(r);
    }
    fb_time_us now = mock_now_us();
    fb_time_us ttft = to_real(s, a->ttft_us >= 0 ? a->ttft_us : s->cfg.ttft_us, a->slow);
    if (a->status != 0) {
        /* Errors come back after an explicit ttft, else after the error latency. */
        fb_time_us due = a->ttft_us >= 0 ? now + ttft
                         : s->cfg.error_latency_us > 0
                             ? now + to_real(s, s->cfg.error_latency_us, 1.0)
                             : 0;
        return send_error(r, rep, a->status, a->flavor, NULL, a, due);
    }
    r->t0_us = now;
    r->ttft_us = ttft;
    r->per_token_us = to_real(s, s->cfg.per_token_us, a->slow);
    r->stall_after = a->stall_after;
    r->stall_us = to_real(s, a->stall_us, 1.0);
    int64_t T = a->refusal ? 0 : tokens;
    if (!p->stream && a->end == MOCK_END_ERROR) {
        /* An in-band error has no stream to travel in: the provider's overload error. */
        fb_time_us due = now + ttft + a->end_after * r->per_token_us;
        return send_error(r, rep, rep->dialect == MOCK_OPENAI ? 500 : 529, MOCK_FLAVOR_PLAIN, NULL,
                          a, due);
    }
    int64_t billed = p->prompt_tokens + tokens * p->n;
    if (p->stream) return answer_stream(r, rep, a, billed);
    fb_time_us due = now + ttft + T * r->per_token_us;
    if (a->stall_after >= 0 && a->stall_after <= T) due += r->stall_us;
    return answer_plain(r, rep, a, billed, now, due);
}

/* A completion request: count it, read it, decide its fate, apply the limits, answer. */
static enum MHD_Result handle_completion(req *r, route rt, const char *method, const char *url) {
    mock_server *s = r->s;
    mock_dialect d = rt == RT_CHAT ? MOCK_OPENAI : MOCK_ANTHROPIC;
    const char *key = header(r->conn, "x-fusebox-key");
    new_ids(r, d);
    mock_reply rep = {.dialect = d,
                      .model = "",
                      .id = r->id,
                      .request_id = r->request_id,
                      .n = 1,
                      .max_tokens = -1,
                      .context_window = s->cfg.context_window};
    uint64_t attempt;
    fb_time_us t_us;
    begin_attempt(r, method, url, key, &rep, &attempt, &t_us);
    parsed p;
    const char *bad = read_request(r, &rep, &p);
    if (bad != NULL) return send_error(r, &rep, 400, MOCK_FLAVOR_ROUTING, bad, NULL, 0);
    mock_action a;
    double scale;
    char msg[900];
    if (decide(r, key, attempt, t_us, &a, &scale, msg, sizeof msg) != FB_OK)
        return send_error(r, &rep, 400, MOCK_FLAVOR_ROUTING, msg, NULL, 0);
    int64_t tokens = a.tokens >= 0 ? a.tokens : s->cfg.completion_tokens_max;
    if (p.max_tokens >= 0 && tokens > p.max_tokens) tokens = p.max_tokens;
    rep.tokens = tokens;
    rep.refusal = a.refusal;
    apply_limits(r, d, &p, tokens, attempt, t_us, scale, &a);
    return answer(r, &rep, &p, &a, tokens);
}

/* ---- other endpoints ----------------------------------------------------------------------- */

static enum MHD_Result handle_count_tokens(req *r) {
    mock_reply rep = {.dialect = MOCK_ANTHROPIC, .model = "", .request_id = r->request_id};
    new_ids(r, MOCK_ANTHROPIC);
    cJSON *root = cJSON_ParseWithLength(r->body.p ? r->body.p : "", r->body.len);
    if (root == NULL)
        return send_error(r, &rep, 400, MOCK_FLAVOR_ROUTING,
                          "There was an issue with your request body: invalid JSON.", NULL, 0);
    int64_t chars = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "messages")) {
        chars += text_chars(cJSON_GetObjectItemCaseSensitive(m, "content"));
    }
    chars += text_chars(cJSON_GetObjectItemCaseSensitive(root, "system"));
    cJSON_Delete(root);
    mock_buf b = {0};
    mock_buf_printf(&b, "{\"input_tokens\":%lld}", (long long)((chars + 3) / 4));
    struct MHD_Response *resp = buf_response(&b);
    if (resp == NULL) return MHD_NO;
    add_common(r, resp, MOCK_ANTHROPIC, "application/json", 0, 0);
    note_sent(r, 200, NULL);
    return queue(r, MHD_HTTP_OK, resp);
}

static enum MHD_Result handle_models(req *r) {
    mock_dialect d = header(r->conn, "anthropic-version") ? MOCK_ANTHROPIC : MOCK_OPENAI;
    new_ids(r, d);
    mock_buf b = {0};
    mock_wire_models(&b, d);
    struct MHD_Response *resp = buf_response(&b);
    if (resp == NULL) return MHD_NO;
    add_common(r, resp, d, "application/json", 0, 0);
    note_sent(r, 200, NULL);
    return queue(r, MHD_HTTP_OK, resp);
}

static enum MHD_Result handle_control(req *r, route rt) {
    mock_server *s = r->s;
    mock_buf b = {0};
    switch (rt) {
    case RT_C_FAULTS: {
        sim_fault *f = calloc(MOCK_FAULTS_MAX, sizeof *f);
        if (f == NULL) return MHD_NO;
        size_t n = 0;
        mock_parse_error err = {{0}, {0}};
        int rc = mock_faults_parse(r->body.p ? r->body.p : "", r->body.len, f, MOCK_FAULTS_MAX, &n,
                                   &err);
        if (rc == FB_OK) rc = mock_server_set_faults(s, f, n);
        free(f);
        if (rc != FB_OK) return send_control_error(r, 400, err.path, err.msg);
        logf_(s, MOCK_LOG_INFO, "loaded %zu timeline faults", n);
        mock_buf_printf(&b, "{\"ok\":true,\"faults\":%zu}", n);
        return send_json(r, 200, &b);
    }
    case RT_C_RESET:
        mock_server_reset(s);
        mock_buf_puts(&b, "{\"ok\":true}");
        return send_json(r, 200, &b);
    case RT_C_LOG:
        pthread_mutex_lock(&s->lock);
        mock_attempts_json(&s->log, &b);
        pthread_mutex_unlock(&s->lock);
        return send_json(r, 200, &b);
    case RT_C_STATS: {
        mock_stats st;
        mock_server_stats(s, &st);
        const union MHD_DaemonInfo *di =
            MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        mock_buf_printf(
            &b,
            "{\"requests\":%llu,\"attempts\":%llu,\"faults\":%llu,\"status_2xx\":%llu,"
            "\"status_4xx\":%llu,\"status_5xx\":%llu,\"status_429\":%llu,\"hangs\":%llu,"
            "\"resets\":%llu,\"cut_streams\":%llu,\"capacity_rejects\":%llu,"
            "\"log_dropped\":%llu,\"in_flight\":%lld,\"suspended\":%lld,\"connections\":%u,"
            "\"timeline_ms\":%.3f}",
            (unsigned long long)st.requests, (unsigned long long)st.attempts,
            (unsigned long long)st.faults, (unsigned long long)st.status_2xx,
            (unsigned long long)st.status_4xx, (unsigned long long)st.status_5xx,
            (unsigned long long)st.status_429, (unsigned long long)st.hangs,
            (unsigned long long)st.resets, (unsigned long long)st.cut_streams,
            (unsigned long long)st.capacity_rejects, (unsigned long long)st.log_dropped,
            (long long)st.in_flight, (long long)st.suspended, di != NULL ? di->num_connections : 0u,
            (double)st.timeline_us / 1e3);
        return send_json(r, 200, &b);
    }
    default:
        return MHD_NO;
    }
}

/* Errors for routing and limits, in the dialect the path suggests. */
static enum MHD_Result routing_error(req *r, const char *url, const char *method, int status,
                                     const char *allow) {
    mock_dialect d = (strncmp(url, "/v1/messages", 12) == 0 || header(r->conn, "anthropic-version"))
                         ? MOCK_ANTHROPIC
                         : MOCK_OPENAI;
    new_ids(r, d);
    char msg[300];
    const char *m = NULL;
    if (status == 404) {
        snprintf(msg, sizeof msg, "Invalid URL (%.16s %.200s)", method, url);
        m = msg;
    } else if (status == 405) {
        snprintf(msg, sizeof msg, "Method %.16s not allowed for %.200s", method, url);
        m = msg;
    }
    mock_reply rep = {.dialect = d, .model = "", .request_id = r->request_id};
    mock_buf b = {0};
    mock_wire_error(&b, &rep, status, MOCK_FLAVOR_ROUTING, m);
    struct MHD_Response *resp = buf_response(&b);
    if (resp == NULL) return MHD_NO;
    add_common(r, resp, d, "application/json", 0, 0);
    if (allow != NULL) MHD_add_response_header(resp, "allow", allow);
    note_sent(r, status, NULL);
    return queue(r, (unsigned)status, resp);
}

static enum MHD_Result dispatch(req *r, const char *url, const char *method) {
    mock_server *s = r->s;
    bool control = strncmp(url, "/__fusebox/", 11) == 0;
    if (!control) {
        pthread_mutex_lock(&s->lock);
        s->stats.requests++;
        pthread_mutex_unlock(&s->lock);
    }
    if (r->too_large) return routing_error(r, url, method, 413, NULL);
    const struct route_def *path_match = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(url, routes[i].path) != 0) continue;
        path_match = &routes[i];
        if (strcmp(method, routes[i].method) != 0) continue;
        switch (routes[i].id) {
        case RT_CHAT:
        case RT_MESSAGES: {
            enum MHD_Result rc = handle_completion(r, routes[i].id, method, url);
            if (r->phase == PH_WAIT && !r->suspended && !suspend_until(r, r->due_us)) return MHD_NO;
            return rc;
        }
        case RT_COUNT_TOKENS:
            return handle_count_tokens(r);
        case RT_MODELS:
            return handle_models(r);
        default:
            return handle_control(r, routes[i].id);
        }
    }
    if (path_match != NULL) {
        if (control) return send_control_error(r, 405, NULL, "method not allowed");
        return routing_error(r, url, method, 405, path_match->method);
    }
    if (control) return send_control_error(r, 404, NULL, "unknown control endpoint");
    return routing_error(r, url, method, 404, NULL);
}

/* ---- libmicrohttpd callbacks --------------------------------------------------------------- */

static bool peer_closed(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci == NULL) return true;
    char byte;
    ssize_t n = recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls) {
    mock_server *s = cls;
    req *r = *req_cls;
    (void)version;
    if (r == NULL) {
        r = calloc(1, sizeof *r);
        if (r == NULL) return MHD_NO;
        r->s = s;
        r->conn = conn;
        r->arrival_us = mock_now_us();
        r->stall_after = -1;
        *req_cls = r;
        const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl != NULL && strtoull(cl, NULL, 10) > s->cfg.max_body_bytes) {
            /* Answer before reading the body; MHD then closes the connection. */
            r->too_large = true;
            return dispatch(r, url, method);
        }
        return MHD_YES;
    }
    note_resumed(r);
    switch (r->phase) {
    case PH_BODY:
        if (*upload_size > 0) {
            r->body_bytes += *upload_size;
            if (r->body_bytes > s->cfg.max_body_bytes) {
                r->too_large = true;
                mock_buf_free(&r->body);
            } else {
                mock_buf_append(&r->body, upload, *upload_size);
            }
            *upload_size = 0;
            return MHD_YES;
        }
        if (r->body.oom) return MHD_NO;
        return dispatch(r, url, method);
    case PH_WAIT:
        if (stopping(s)) return MHD_NO;
        if (mock_now_us() < r->due_us) return suspend_until(r, r->due_us) ? MHD_YES : MHD_NO;
        {
            struct MHD_Response *resp = r->pending;
            r->pending = NULL;
            return queue(r, r->pending_status, resp);
        }
    case PH_HANG: {
        fb_time_us now = mock_now_us();
        if (stopping(s) || peer_closed(conn) || now >= r->hang_until_us) return MHD_NO;
        fb_time_us next = now + HANG_POLL_US;
        if (next > r->hang_until_us) next = r->hang_until_us;
        return suspend_until(r, next) ? MHD_YES : MHD_NO;
    }
    case PH_QUEUED:
        return MHD_YES;
    }
    return MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe) {
    mock_server *s = cls;
    req *r = *req_cls;
    (void)conn;
    (void)toe;
    if (r == NULL) return;
    *req_cls = NULL;
    pthread_mutex_lock(&s->lock);
    if (r->attempt) s->stats.in_flight--;
    if (r->suspended) s->stats.suspended--;
    pthread_mutex_unlock(&s->lock);
    if (r->pending != NULL) MHD_destroy_response(r->pending);
    mock_buf_free(&r->body);
    mock_buf_free(&r->out);
    free(r);
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

static void restart_clock_locked(mock_server *s) {
    s->t0_us = mock_now_us();
    s->wall0_s = wall_now_s();
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
    int64_t in_flight = s->stats.in_flight, suspended = s->stats.suspended;
    memset(&s->stats, 0, sizeof s->stats);
    s->stats.in_flight = in_flight; /* live gauges survive a reset */
    s->stats.suspended = suspended;
    s->attempt = 0;
    s->id_seq = 0;
    restart_clock_locked(s);
    pthread_mutex_unlock(&s->lock);
}

void mock_server_stats(mock_server *s, mock_stats *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->stats;
    out->log_dropped = mock_attempts_dropped(&s->log);
    out->timeline_us = timeline_locked(s, mock_now_us());
    pthread_mutex_unlock(&s->lock);
}

uint16_t mock_server_port(const mock_server *s) {
    return s->port;
}

static int validate(const mock_config *c, char *err, size_t errlen) {
    const char *why = NULL;
    if (!(c->time_scale >= 0) || c->time_scale > 1e9)
        why = "time_scale must be > 0";
    else if (c->ttft_us < 0 || c->per_token_us < 0)
        why = "latencies must be >= 0";
    else if (c->completion_tokens_max < 0 || c->context_window < 0)
        why = "token counts must be >= 0";
    else if (c->capacity.concurrency < 0 || c->capacity.requests_per_min < 0 ||
             c->capacity.tokens_per_min < 0)
        why = "capacity limits must be >= 0";
    else if (c->n_faults > MOCK_FAULTS_MAX || (c->n_faults > 0 && c->faults == NULL))
        why = "too many faults";
    else if (c->hang_max_us < 0)
        why = "hang_max must be >= 0";
    if (why == NULL) return FB_OK;
    snprintf(err, errlen, "%s", why);
    return FB_EINVAL;
}

/* The configuration with its zeros replaced by the defaults, and the initial timeline. */
static void configure(mock_server *s, const mock_config *cfg) {
    s->cfg = *cfg;
    mock_config *c = &s->cfg;
    copy_str(s->bind_addr, sizeof s->bind_addr, cfg->bind_addr ? cfg->bind_addr : "127.0.0.1");
    c->bind_addr = s->bind_addr;
    if (c->max_connections == 0) c->max_connections = DEFAULT_MAX_CONNECTIONS;
    if (c->max_body_bytes == 0) c->max_body_bytes = DEFAULT_MAX_BODY;
    if (c->threads == 0) c->threads = 1;
    if (c->time_scale == 0) c->time_scale = 1.0;
    if (c->completion_tokens_max == 0) c->completion_tokens_max = DEFAULT_COMPLETION_MAX;
    if (c->log_capacity == 0) c->log_capacity = DEFAULT_LOG_CAPACITY;
    if (c->hang_max_us == 0) c->hang_max_us = DEFAULT_HANG_MAX_US;
    c->faults = NULL;
    if (cfg->n_faults > 0) memcpy(s->faults, cfg->faults, cfg->n_faults * sizeof *s->faults);
    s->n_faults = cfg->n_faults;
}

/* Listen on the configured address and port; FB_OK, or an error with err filled. */
static int start_daemon(mock_server *s, char *err, size_t errlen) {
    const mock_config *c = &s->cfg;
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    if (inet_pton(AF_INET, s->bind_addr, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons(c->port);
        sa = (struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, s->bind_addr, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons(c->port);
        sa = (struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "bind address '%s' is not an IPv4 or IPv6 literal", s->bind_addr);
        return FB_EINVAL;
    }
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_logger, s},
        {MHD_OPTION_SOCK_ADDR, 0, sa},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)c->max_connections, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL},
        {c->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t)c->threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    s->daemon = MHD_start_daemon(flags, c->port, NULL, NULL, on_access, s, MHD_OPTION_ARRAY, opts,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(err, errlen, "cannot listen on %s port %u (in use, or no permission)",
                 s->bind_addr, (unsigned)c->port);
        return FB_EIO;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di != NULL ? di->port : c->port;
    return FB_OK;
}

int mock_server_create(const mock_config *cfg, mock_server **out, char *err, size_t errlen) {
    int rc = validate(cfg, err, errlen);
    if (rc != FB_OK) return rc;
    mock_server *s = calloc(1, sizeof *s);
    if (s == NULL) return FB_ENOMEM;
    configure(s, cfg);
    pthread_mutex_init(&s->lock, NULL);
    restart_clock_locked(s);

    rc = FB_ENOMEM;
    snprintf(err, errlen, "out of memory");
    if (mock_attempts_init(&s->log, s->cfg.log_capacity) != FB_OK) goto fail_log;
    s->times = calloc(TIMES_CAP, sizeof *s->times);
    if (s->times == NULL) goto fail_times;
    if (mock_sched_create(s->cfg.max_connections + 16, &s->sched) != FB_OK) goto fail_sched;
    rc = start_daemon(s, err, errlen);
    if (rc != FB_OK) goto fail_daemon;
    logf_(s, MOCK_LOG_INFO, "listening on %s port %u", s->bind_addr, (unsigned)s->port);
    *out = s;
    return FB_OK;

fail_daemon:
    mock_sched_destroy(s->sched);
fail_sched:
    free(s->times);
fail_times:
    mock_attempts_free(&s->log);
fail_log:
    pthread_mutex_destroy(&s->lock);
    free(s);
    return rc;
}

void mock_server_destroy(mock_server *s) {
    if (s == NULL) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_mutex_unlock(&s->lock);
    /* Resume every waiting connection; their handlers see `stopping` and end them. */
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
    mock_sched_destroy(s->sched);
    free(s->times);
    mock_attempts_free(&s->log);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
