/* client.c - libcurl multi + epoll + timerfd, as a simulator port; see client.h. */
#include "live/client.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/hist.h"
#include "core/retry_after.h"
#include "live/sse.h"

#define DEFAULT_TRANSFERS_MAX 4096u
#define PROBE_PATH "/v1/models"
#define SCHED_THREADS_MAX 256
#define EPOLL_BATCH 256
#define NS_NEVER INT64_MAX

typedef struct endpoint {
    bool set;
    char base[2048]; /* without a trailing "/v1" */
    char url[2048];
    char model[256];
    live_dialect dialect;
    struct curl_slist *headers;
    bool retry_count_given; /* a --header sets x-stainless-retry-count: it is sent as given */
} endpoint;

typedef struct xfer {
    live_client *c;
    CURL *easy;
    uint64_t id;
    uint8_t provider;
    bool stream;                     /* a stream was asked for */
    bool decided;                    /* the answer's kind is known (first body byte) */
    bool sse;                        /* reading an event stream */
    bool oversized;                  /* cut at the response cap */
    uint64_t received, received_max; /* body bytes */
    util_buf req;
    util_buf body;
    /* its x-stainless-retry-count, in front of its endpoint's headers (not curl's to free) */
    struct curl_slist retry_count;
    char retry_count_line[48];
    live_sse sse_p;
    live_stream st;
    char retry_after[64], retry_after_ms[64];
    int8_t should_retry;
    int64_t sent_ns; /* when the transfer started (monotonic) */
    int64_t plan_us; /* x-fusebox-plan-us, the target's planned answer time; -1 = none */
    sim_port_answer answer;
    /* for traces */
    uint64_t request;
    uint32_t resend, max_tokens;
    fb_time_us arrival_us, start_us, timeout_at_us;
    int status;             /* HTTP status received */
    const char *error_type; /* NULL, a fixed string, or status_text */
    char status_text[8];
    bool has_usage;
    live_meta meta;
    struct xfer *next; /* free list, or the ready list */
} xfer;

struct live_client {
    live_client_config cfg;
    CURLM *multi;
    int epfd, tfd;
    int64_t t0_ns;
    int64_t t0_unix_ns;  /* the wall clock at t0 */
    int64_t curl_due_ns; /* when curl wants its timeout callback; NS_NEVER = not */
    endpoint ep[SIM_PROVIDERS_MAX];
    xfer **by_attempt; /* attempt index (id >> 32) -> its transfer */
    size_t by_attempt_cap;
    xfer *free_list;
    xfer *ready, *ready_tail;
    uint32_t in_flight;
    live_client_stats stats;
    /* timekeeping (real microseconds) */
    fb_hist lag_us;    /* per due time: how late the loop got to it */
    fb_hist gap_us;    /* between two looks at the sockets */
    fb_hist late_us;   /* per planned answer: how much later than planned it ended */
    int64_t polled_ns; /* when the loop last looked at the sockets; 0 = not yet */
    int64_t cpu0_ns;   /* the thread's CPU time at the start */
    struct sched_thread {
        long tid;
        uint64_t run_ns, wait_ns, slices;
    } sched0[SCHED_THREADS_MAX]; /* the process's threads at the start */
    size_t nsched0;
    sim_port port;
};

/* ---- clocks ---- */

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_unix_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The simulated time of monotonic instant ns. */
static fb_time_us sim_at(const live_client *c, int64_t ns) {
    return (fb_time_us)((double)(ns - c->t0_ns) / 1000.0 * c->cfg.time_scale);
}

static fb_time_us sim_now(const live_client *c) {
    return sim_at(c, mono_ns());
}

/* The real (monotonic) instant of simulated time t. */
static int64_t real_ns_of(const live_client *c, fb_time_us t) {
    double ns = (double)t * 1000.0 / c->cfg.time_scale;
    if (t == FB_TIME_MAX || ns > 4e18) return NS_NEVER;
    return c->t0_ns + (int64_t)ns;
}

/* ---- curl callbacks ---- */

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
    live_client *c = userp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.data.fd = fd;
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    int op = socketp != NULL ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(c->epfd, op, fd, &ev) != 0) {
        /* a descriptor reused by another connection: whichever the kernel agrees with */
        op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        epoll_ctl(c->epfd, op, fd, &ev);
    }
    if (socketp == NULL) curl_multi_assign(c->multi, fd, c);
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp) {
    live_client *c = userp;
    (void)multi;
    c->curl_due_ns = timeout_ms < 0 ? NS_NEVER : mono_ns() + (int64_t)timeout_ms * 1000000;
    return 0;
}

static void on_sse_event(void *ctx, const char *event, const char *data, size_t len,
                         bool truncated) {
    xfer *x = ctx;
    if (truncated) {
        x->st.malformed = true;
        return;
    }
    live_stream_event(&x->st, event, data, len);
}

static size_t on_body(char *p, size_t size, size_t n, void *userp) {
    xfer *x = userp;
    size_t len = size * n;
    x->received += len;
    x->c->stats.bytes_received += len;
    if (x->received > x->received_max) {
        x->oversized = true;
        return 0; /* curl aborts the transfer */
    }
    if (!x->decided) {
        long status = 0;
        char *ctype = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ctype);
        x->sse = status == 200 && ctype != NULL && strncasecmp(ctype, "text/event-stream", 17) == 0;
        if (x->sse) {
            live_sse_init(&x->sse_p, on_sse_event, x);
            live_stream_init(&x->st, x->c->ep[x->provider].dialect);
        }
        x->decided = true;
    }
    if (x->sse)
        live_sse_feed(&x->sse_p, p, len);
    else
        util_buf_append(&x->body, p, len);
    return len;
}

/* x-fusebox-plan-us's value: whole microseconds, or -1 when it is not one. */
static int64_t plan_of(const char *v) {
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return end != v && *end == '\0' && errno == 0 && n >= 0 ? (int64_t)n : -1;
}

/* Keep a header's value (trimmed) when it is one the retry logic or the timekeeping reads. */
static size_t on_header(char *p, size_t size, size_t n, void *userp) {
    xfer *x = userp;
    size_t len = size * n;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new response (after a 100, a redirect) */
        x->retry_after[0] = x->retry_after_ms[0] = '\0';
        x->should_retry = -1;
        x->plan_us = -1;
        return len;
    }
    static const char *const names[] = {"retry-after", "retry-after-ms", "x-should-retry",
                                        "x-fusebox-plan-us"};
    const char *colon = memchr(p, ':', len);
    if (colon == NULL) return len;
    size_t nl = (size_t)(colon - p);
    for (size_t i = 0; i < 4; i++) {
        if (nl != strlen(names[i]) || strncasecmp(p, names[i], nl) != 0) continue;
        const char *v = colon + 1, *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t')) v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
        size_t vl = (size_t)(end - v);
        char val[64];
        if (vl >= sizeof val) vl = sizeof val - 1;
        memcpy(val, v, vl);
        val[vl] = '\0';
        if (i == 0)
            memcpy(x->retry_after, val, vl + 1);
        else if (i == 1)
            memcpy(x->retry_after_ms, val, vl + 1);
        else if (i == 3)
            x->plan_us = plan_of(val);
        else
            x->should_retry = strcmp(val, "true") == 0 ? 1 : strcmp(val, "false") == 0 ? 0 : -1;
    }
    return len;
}

/* ---- transfers ---- */

/* A streamed 200: an in-band error, a cut or garbled stream, a refusal. True when it failed. */
static bool read_stream(xfer *x, sim_port_answer *a) {
    a->reply.status = 200;
    if (x->st.error) {
        a->reply.error_kind = x->st.error_kind;
        return true;
    }
    if (x->st.malformed || !x->st.done) {
        a->reply.status = 0;
        a->reply.transport = FB_TRANSPORT_OTHER;
        return true;
    }
    if (x->st.refused) a->reply.error_kind = FB_ERRKIND_CONTENT_POLICY;
    return false;
}

/* A whole 200 body: its usage and refusal, or a broken reply. */
static void read_body(xfer *x, sim_port_answer *a) {
    bool refused = false;
    a->reply.status = 200;
    live_meta *meta = x->c->cfg.otlp ? &x->meta : NULL;
    if (x->body.err || live_wire_success(x->c->ep[x->provider].dialect, x->body.p ? x->body.p : "",
                                         x->body.len, &a->tokens_out, &refused, meta) != FB_OK) {
        a->reply.status = 0;
        a->reply.transport = FB_TRANSPORT_OTHER;
    } else {
        x->has_usage = true;
        if (refused) a->reply.error_kind = FB_ERRKIND_CONTENT_POLICY;
    }
}

static fb_transport transport_of(CURLcode rc) {
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return FB_TRANSPORT_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return FB_TRANSPORT_TIMEOUT;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return FB_TRANSPORT_RESET;
    default:
        return FB_TRANSPORT_OTHER;
    }
}

/* The attempt's error.type for traces (docs/live.md lists them); NULL for a whole answer. */
static const char *error_type_of(xfer *x, CURLcode rc, long status) {
    if (x->oversized) return "response_too_large";
    if (rc != CURLE_OK) {
        static const char *const names[] = {
            [FB_TRANSPORT_CONNECT] = "connect_error",
            [FB_TRANSPORT_TIMEOUT] = "timeout",
            [FB_TRANSPORT_RESET] = "connection_reset",
            [FB_TRANSPORT_OTHER] = "transport_error",
        };
        fb_transport t = transport_of(rc);
        return t <= FB_TRANSPORT_OTHER && names[t] ? names[t] : "_OTHER";
    }
    if (status != 200) {
        snprintf(x->status_text, sizeof x->status_text, "%ld", status);
        return x->status_text;
    }
    if (x->sse)
        return x->st.error                      ? "stream_error"
               : x->st.malformed || !x->st.done ? "broken_stream"
                                                : NULL;
    return x->answer.reply.transport != FB_TRANSPORT_NONE ? "broken_reply" : NULL;
}

/* Read a finished transfer into its answer. */
static void read_answer(xfer *x, CURLcode rc) {
    sim_port_answer *a = &x->answer;
    memset(a, 0, sizeof *a);
    a->hint_us = FB_TIME_NONE;
    a->reply.should_retry = x->should_retry;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    x->status = (int)status;
    bool failed = false;
    if (x->oversized) {
        a->reply.transport = FB_TRANSPORT_OTHER; /* a broken reply, whatever came before */
        failed = true;
        x->c->stats.oversized++;
    } else if (rc != CURLE_OK) {
        a->reply.transport = transport_of(rc);
        failed = true;
        x->c->stats.transport_errors++;
    } else if (status != 200) {
        a->reply.status = (int)status;
        if (x->body.len > 0) a->reply.error_kind = live_wire_error_kind(x->body.p, x->body.len);
        a->hint_us = fb_retry_after_hint(x->retry_after_ms[0] ? x->retry_after_ms : NULL,
                                         x->retry_after[0] ? x->retry_after : NULL, wall_unix_us());
    } else if (x->sse) {
        failed = read_stream(x, a);
    } else {
        read_body(x, a);
    }
    /* a 200 means the model worked on it: billed, whatever happened next */
    a->served = status == 200;
    if (x->sse) {
        a->tokens_out = live_stream_tokens(&x->st);
        a->reply.after_first_token = failed && x->st.chunks > 0;
        x->meta = x->st.meta;
        x->has_usage = status == 200;
    }
    x->error_type = error_type_of(x, rc, status);
}

static void xfer_recycle(live_client *c, xfer *x) {
    c->by_attempt[x->id >> 32] = NULL;
    x->req.len = 0;
    x->body.len = 0;
    x->next = c->free_list;
    c->free_list = x;
}

static void drain_done(live_client *c) {
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE) continue;
        xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode rc = m->data.result;
        curl_multi_remove_handle(c->multi, x->easy);
        c->in_flight--;
        read_answer(x, rc);
        int64_t now = mono_ns();
        x->answer.at_us = sim_at(c, now);
        if (rc == CURLE_OK && x->plan_us >= 0) {
            int64_t late = (now - x->sent_ns) / 1000 - x->plan_us;
            fb_hist_record(&c->late_us, late > 0 ? late : 0);
        }
        curl_off_t up = 0;
        curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &up);
        c->stats.bytes_sent += (uint64_t)up;
        x->next = NULL;
        if (c->ready_tail)
            c->ready_tail->next = x;
        else
            c->ready = x;
        c->ready_tail = x;
    }
}

static int grow_index(live_client *c, size_t i) {
    if (i < c->by_attempt_cap) return FB_OK;
    size_t cap = c->by_attempt_cap ? c->by_attempt_cap : 1024;
    while (cap <= i) cap *= 2;
    xfer **v = realloc(c->by_attempt, cap * sizeof *v);
    if (v == NULL) return FB_ENOMEM;
    memset(v + c->by_attempt_cap, 0, (cap - c->by_attempt_cap) * sizeof *v);
    c->by_attempt = v;
    c->by_attempt_cap = cap;
    return FB_OK;
}

/* A transfer for a new attempt: a recycled one, or a new one (NULL when out of memory). */
static xfer *xfer_take(live_client *c) {
    xfer *x = c->free_list;
    if (x != NULL) {
        c->free_list = x->next;
        curl_easy_reset(x->easy);
        return x;
    }
    x = calloc(1, sizeof *x);
    if (x == NULL || (x->easy = curl_easy_init()) == NULL) {
        free(x);
        return NULL;
    }
    x->c = c;
    return x;
}

/* Everything about attempt a that its transfer keeps, reset from the last one. */
static void xfer_prepare(xfer *x, const sim_port_attempt *a) {
    x->id = a->id;
    x->provider = a->provider;
    x->stream = a->stream;
    x->request = a->request;
    x->resend = a->resend;
    x->max_tokens = a->tokens_out;
    x->arrival_us = a->arrival_us;
    x->timeout_at_us = a->timeout_at_us;
    x->start_us = a->sent_us; /* as the policies saw it, like its end (port_collect) */
    x->status = 0;
    x->error_type = NULL;
    x->has_usage = false;
    memset(&x->meta, 0, sizeof x->meta);
    x->decided = x->sse = x->oversized = false;
    x->received = 0;
    x->received_max = LIVE_RESPONSE_MAX + (uint64_t)LIVE_RESPONSE_PER_TOKEN * a->tokens_out;
    x->retry_after[0] = x->retry_after_ms[0] = '\0';
    x->should_retry = -1;
    x->plan_us = -1;
    x->next = NULL;
}

/* Why attempt a cannot start: no endpoint, or a cap reached. FB_OK when it can. */
static int refuse(live_client *c, const sim_port_attempt *a, char *msg, size_t msglen) {
    if (!c->ep[a->provider].set) {
        snprintf(msg, msglen, "live: no endpoint for provider %u", a->provider);
        return FB_EINVAL;
    }
    if (c->in_flight >= c->cfg.transfers_max) {
        snprintf(msg, msglen, "live: %u transfers in flight, the cap (--max-transfers)",
                 c->in_flight);
        return FB_ECAP;
    }
    if (c->cfg.otlp != NULL && live_otlp_full(c->cfg.otlp)) {
        snprintf(msg, msglen, "live: the trace file holds %llu spans, its cap (--otlp-max-spans)",
                 (unsigned long long)live_otlp_spans(c->cfg.otlp));
        return FB_ECAP;
    }
    return FB_OK;
}

static int port_send(void *ctx, const sim_port_attempt *a, char *msg, size_t msglen) {
    live_client *c = ctx;
    const endpoint *ep = &c->ep[a->provider];
    int rc = refuse(c, a, msg, msglen);
    if (rc != FB_OK) return rc;
    xfer *x = grow_index(c, (size_t)(a->id >> 32)) == FB_OK ? xfer_take(c) : NULL;
    if (x == NULL) {
        snprintf(msg, msglen, "live: out of memory");
        return FB_ENOMEM;
    }
    xfer_prepare(x, a);
    live_wire_request(&x->req, ep->dialect, ep->model, a->tokens_in, a->tokens_out, a->stream);
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, ep->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->req.p);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->req.len);
    /* The retry count as the openai and @anthropic-ai/sdk clients send it on every request: "0"
     * on the first, then the attempts before this one (a fallback's and a hedge's included, as
     * the simulator counts a retry: the mock's retry_fraction reads it, docs/live.md). */
    struct curl_slist *headers = ep->headers;
    if (!ep->retry_count_given) {
        snprintf(x->retry_count_line, sizeof x->retry_count_line, "x-stainless-retry-count: %u",
                 (unsigned)a->resend);
        x->retry_count.data = x->retry_count_line;
        x->retry_count.next = ep->headers;
        headers = &x->retry_count;
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    x->sent_ns = mono_ns();
    if (x->req.err || curl_multi_add_handle(c->multi, e) != CURLM_OK) {
        x->next = c->free_list;
        c->free_list = x;
        snprintf(msg, msglen, "live: cannot start a transfer");
        return FB_EIO;
    }
    c->by_attempt[a->id >> 32] = x;
    c->in_flight++;
    c->stats.transfers++;
    if (c->in_flight > c->stats.in_flight_peak) c->stats.in_flight_peak = c->in_flight;
    return FB_OK;
}

/* The attempt's span, ending at end_us: answered, given up (cancelled), or left unfinished. */
static void trace_attempt(live_client *c, const xfer *x, fb_time_us end_us, bool gave_up,
                          bool unfinished) {
    if (c->cfg.otlp == NULL) return;
    live_span_attempt s;
    memset(&s, 0, sizeof s);
    s.request = x->request;
    s.id = x->id;
    s.resend = x->resend;
    s.provider = x->provider;
    s.arrival_us = x->arrival_us;
    s.start_us = x->start_us;
    s.end_us = end_us > x->start_us ? end_us : x->start_us;
    s.stream = x->stream;
    s.max_tokens = x->max_tokens;
    s.unfinished = unfinished;
    if (gave_up || unfinished) {
        /* the attempt's own timeout is an error; its request ending first is a cancellation */
        bool timed_out = gave_up && end_us >= x->timeout_at_us;
        s.error_type = timed_out ? "timeout" : NULL;
        s.cancelled = gave_up && !timed_out;
    } else {
        s.status = x->status;
        s.error_type = x->error_type;
        s.has_usage = x->has_usage;
        s.tokens_out = x->answer.tokens_out;
        s.meta = x->meta;
    }
    live_otlp_attempt(c->cfg.otlp, &s);
}

static void port_request_end(void *ctx, const sim_port_request *r) {
    live_client *c = ctx;
    if (c->cfg.otlp != NULL) live_otlp_request(c->cfg.otlp, r);
}

static void port_cancel(void *ctx, uint64_t id) {
    live_client *c = ctx;
    size_t i = (size_t)(id >> 32);
    xfer *x = i < c->by_attempt_cap ? c->by_attempt[i] : NULL;
    if (x == NULL || x->id != id) return;
    c->stats.cancelled++;
    trace_attempt(c, x, sim_now(c), true, false);
    /* still running, or finished but not yet delivered */
    for (xfer **pp = &c->ready, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp != x) continue;
        *pp = x->next;
        if (c->ready_tail == x) c->ready_tail = prev;
        xfer_recycle(c, x);
        return;
    }
    curl_multi_remove_handle(c->multi, x->easy);
    c->in_flight--;
    xfer_recycle(c, x);
}

static void arm_timerfd(live_client *c, int64_t due_ns) {
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (due_ns != NS_NEVER) {
        if (due_ns <= 0) due_ns = 1;
        its.it_value.tv_sec = (time_t)(due_ns / 1000000000);
        its.it_value.tv_nsec = (long)(due_ns % 1000000000);
    }
    timerfd_settime(c->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/*
 * epoll_pwait returns ready sockets without delivering a signal that is
 * pending (the kernel restores the mask first), so with a target that keeps
 * its socket ready a SIGINT would wait for ever: let pending signals in
 * here, for a moment, with the wait's mask.
 */
static void deliver_pending(const live_client *c) {
    if (c->cfg.wait_sigmask == NULL) return;
    sigset_t pending, old;
    if (sigpending(&pending) != 0) return;
    bool any = false;
    for (int sig = 1; sig < NSIG && !any; sig++)
        any = sigismember(&pending, sig) == 1 && sigismember(c->cfg.wait_sigmask, sig) == 0;
    if (!any) return;
    pthread_sigmask(SIG_SETMASK, c->cfg.wait_sigmask, &old);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Look at the sockets once: wait for them until due_ns at the latest (not at
 * all when it has passed), then let curl read what is ready. A flooding
 * target keeps its socket ready forever, so the batch stops once until_ns
 * (the simulator's next due time) is reached: the sockets not handled are
 * still ready next time (level-triggered), and the simulator's timers run
 * first. Every call goes through epoll_pwait, the only place SIGINT is
 * unblocked, so a stop is seen whatever the sockets do.
 */
static int poll_once(live_client *c, int64_t due_ns, int64_t until_ns, char *msg, size_t msglen) {
    struct epoll_event evs[EPOLL_BATCH];
    int64_t now = mono_ns();
    if (c->polled_ns != 0) fb_hist_record(&c->gap_us, (now - c->polled_ns) / 1000);
    int timeout = 0;
    if (due_ns > now) {
        arm_timerfd(c, due_ns);
        timeout = -1;
    }
    int n = c->cfg.wait_sigmask
                ? epoll_pwait(c->epfd, evs, EPOLL_BATCH, timeout, c->cfg.wait_sigmask)
                : epoll_wait(c->epfd, evs, EPOLL_BATCH, timeout);
    c->polled_ns = mono_ns();
    if (n > 0) deliver_pending(c);
    if (n < 0) {
        if (errno == EINTR) return FB_OK;
        snprintf(msg, msglen, "live: epoll_wait: %s", strerror(errno));
        return FB_EIO;
    }
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        if (fd == c->tfd) {
            uint64_t ticks;
            if (read(c->tfd, &ticks, sizeof ticks) < 0) { /* spurious: nothing to do */
            }
            continue;
        }
        int flags = ((evs[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                    ((evs[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                    ((evs[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
        int running;
        curl_multi_socket_action(c->multi, fd, flags, &running);
        if (mono_ns() >= until_ns) break;
    }
    drain_done(c);
    return FB_OK;
}

/*
 * Each turn checks, in this order: the stop flag, the simulator's due time
 * (recording how late it is reached), the answers ready, then gives curl its
 * timeout if due and looks at the sockets once. No turn can be skipped, so
 * no answer, however long, keeps the simulator's timers or a stop waiting.
 */
static int port_wait(void *ctx, fb_time_us until_us, fb_time_us *now_us, char *msg, size_t msglen) {
    live_client *c = ctx;
    int64_t until_ns = real_ns_of(c, until_us);
    for (;;) {
        int64_t now = mono_ns();
        *now_us = sim_at(c, now);
        if (c->cfg.stop != NULL && *c->cfg.stop) {
            snprintf(msg, msglen, "interrupted");
            return FB_ESTATE;
        }
        if (now >= until_ns) {
            fb_hist_record(&c->lag_us, (now - until_ns) / 1000);
            return FB_OK;
        }
        if (c->ready != NULL) return FB_OK;
        if (until_ns == NS_NEVER && c->in_flight == 0) {
            snprintf(msg, msglen, "live: nothing to wait for");
            return FB_ESTATE;
        }
        if (c->curl_due_ns <= now) {
            int running;
            c->curl_due_ns = NS_NEVER;
            curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            drain_done(c);
        }
        int64_t due = c->ready != NULL            ? now
                      : c->curl_due_ns < until_ns ? c->curl_due_ns
                                                  : until_ns;
        int rc = poll_once(c, due, until_ns, msg, msglen);
        if (rc != FB_OK) return rc;
    }
}

static void port_collect(void *ctx, struct sim *s) {
    live_client *c = ctx;
    while (c->ready != NULL) {
        xfer *x = c->ready;
        c->ready = x->next;
        if (c->ready == NULL) c->ready_tail = NULL;
        sim_port_answer a = x->answer;
        uint64_t id = x->id;
        /* its end as the policies saw it: delivered late, it counts when it is delivered */
        trace_attempt(c, x, sim_port_seen_at(s, a.at_us), false, false);
        xfer_recycle(c, x);
        sim_port_deliver(s, id, &a);
    }
}

/* ---- setup ---- */

int live_client_create(const live_client_config *cfg, live_client **out, char *err, size_t errlen) {
    *out = NULL;
    live_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return FB_ENOMEM;
    }
    c->cfg = *cfg;
    if (!(c->cfg.time_scale > 0)) c->cfg.time_scale = 1.0;
    if (c->cfg.transfers_max == 0) c->cfg.transfers_max = DEFAULT_TRANSFERS_MAX;
    c->curl_due_ns = NS_NEVER;
    c->epfd = c->tfd = -1;
    fb_hist_init(&c->lag_us);
    fb_hist_init(&c->gap_us);
    fb_hist_init(&c->late_us);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "cannot initialise libcurl (libcurl.so.4, Debian's libcurl4)");
        free(c);
        return FB_EIO;
    }
    c->multi = curl_multi_init();
    c->epfd = epoll_create1(EPOLL_CLOEXEC);
    c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.fd = c->tfd;
    if (c->multi == NULL || c->epfd < 0 || c->tfd < 0 ||
        epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->tfd, &ev) != 0) {
        snprintf(err, errlen, "cannot set up the event loop: %s", strerror(errno));
        live_client_destroy(c);
        return FB_EIO;
    }
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    /* keep a connection per concurrent transfer, as a client pool would */
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->cfg.transfers_max);
    c->port = (sim_port){port_send,    port_cancel, port_wait,
                         port_collect, c,           c->cfg.otlp ? port_request_end : NULL};
    c->t0_ns = mono_ns();
    *out = c;
    return FB_OK;
}

int live_client_endpoint(live_client *c, uint8_t provider, const char *base_url, live_dialect d,
                         const char *model, const char *const *headers, size_t header_count,
                         char *err, size_t errlen) {
    if (provider >= SIM_PROVIDERS_MAX) return FB_EINVAL;
    endpoint *ep = &c->ep[provider];
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/') n--;
    /* an SDK-style base URL ending in /v1 names the same endpoints */
    if (n >= 3 && strncmp(base_url + n - 3, "/v1", 3) == 0) n -= 3;
    const char *path = live_dialect_path(d);
    if (n + strlen(path) >= sizeof ep->url || strlen(model) >= sizeof ep->model) {
        snprintf(err, errlen, "URL or model name too long");
        return FB_EINVAL;
    }
    if (strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0) {
        snprintf(err, errlen, "'%s' is not an http:// or https:// URL", base_url);
        return FB_EINVAL;
    }
    memcpy(ep->base, base_url, n);
    ep->base[n] = '\0';
    memcpy(ep->url, base_url, n);
    memcpy(ep->url + n, path, strlen(path) + 1);
    snprintf(ep->model, sizeof ep->model, "%s", model);
    ep->dialect = d;
    curl_slist_free_all(ep->headers);
    ep->headers = NULL;
    ep->retry_count_given = false;
    const char *fixed[] = {"content-type: application/json", "accept: application/json",
                           "Expect:", d == LIVE_ANTHROPIC ? "anthropic-version: 2023-06-01" : NULL};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] + header_count; i++) {
        const char *h = i < 4 ? fixed[i] : headers[i - 4];
        if (h == NULL) continue;
        if (strncasecmp(h, "x-stainless-retry-count:", 24) == 0) ep->retry_count_given = true;
        struct curl_slist *l = curl_slist_append(ep->headers, h);
        if (l == NULL) {
            snprintf(err, errlen, "out of memory");
            return FB_ENOMEM;
        }
        ep->headers = l;
    }
    ep->set = true;
    return FB_OK;
}

/* ---- the probe ---- */

static size_t probe_header(char *p, size_t size, size_t n, void *userp) {
    (void)p;
    (void)size;
    (void)n;
    *(bool *)userp = true;
    return 0; /* the status line is enough: stop there */
}

static size_t probe_body(char *p, size_t size, size_t n, void *userp) {
    (void)p;
    (void)userp;
    return size * n;
}

int live_client_probe(live_client *c, uint8_t provider, long timeout_ms, char *err, size_t errlen) {
    const endpoint *ep = &c->ep[provider];
    char url[sizeof ep->base + sizeof PROBE_PATH], why[CURL_ERROR_SIZE] = "";
    snprintf(url, sizeof url, "%s%s", ep->base, PROBE_PATH);
    CURL *e = curl_easy_init();
    if (e == NULL) {
        snprintf(err, errlen, "out of memory");
        return FB_ENOMEM;
    }
    bool answered = false;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, ep->headers);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, probe_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &answered);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, probe_body);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, why);
    CURLcode rc = curl_easy_perform(e);
    curl_easy_cleanup(e);
    if (answered) return FB_OK;
    if (rc == CURLE_COULDNT_CONNECT)
        snprintf(err, errlen, "%s refuses connections (%s)", ep->base, why);
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        snprintf(err, errlen, "%s answered nothing within %.1f s (GET %s)", ep->base,
                 (double)timeout_ms / 1e3, url);
    else if (rc == CURLE_GOT_NOTHING)
        snprintf(err, errlen, "%s closed the connection without answering (GET %s)", ep->base, url);
    else
        snprintf(err, errlen, "%s cannot be reached: %s", ep->base,
                 why[0] ? why : curl_easy_strerror(rc));
    return FB_EIO;
}

/* ---- timekeeping ---- */

/*
 * The process's threads' scheduling counters: at the start (into c->sched0)
 * or since then (into *out), thread by thread, so that threads that came or
 * went in between count for what they did while both were seen.
 */
static void sched_read(live_client *c, live_sched *out) {
    if (out != NULL) memset(out, 0, sizeof *out);
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char path[300];
        unsigned long long run, wait, slices;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", de->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        int got = fscanf(f, "%llu %llu %llu", &run, &wait, &slices);
        fclose(f);
        if (got != 3) continue;
        long tid = strtol(de->d_name, NULL, 10);
        if (out == NULL) {
            if (c->nsched0 < SCHED_THREADS_MAX)
                c->sched0[c->nsched0++] = (struct sched_thread){tid, run, wait, slices};
            continue;
        }
        for (size_t i = 0; i < c->nsched0; i++) {
            if (c->sched0[i].tid != tid) continue;
            run -= c->sched0[i].run_ns < run ? c->sched0[i].run_ns : run;
            wait -= c->sched0[i].wait_ns < wait ? c->sched0[i].wait_ns : wait;
            slices -= c->sched0[i].slices < slices ? c->sched0[i].slices : slices;
        }
        out->known = true;
        if (run > out->busiest_run_ns) out->busiest_run_ns = run;
        out->run_ns += run;
        out->wait_ns += wait;
        out->slices += slices;
    }
    closedir(d);
}

void live_client_start(live_client *c) {
    fb_hist_init(&c->lag_us);
    fb_hist_init(&c->gap_us);
    fb_hist_init(&c->late_us);
    c->polled_ns = 0;
    c->nsched0 = 0;
    sched_read(c, NULL);
    c->cpu0_ns = thread_cpu_ns();
    c->t0_ns = mono_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->t0_unix_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t live_client_t0_unix_ns(const live_client *c) {
    return c->t0_unix_ns;
}

fb_time_us live_client_now(const live_client *c) {
    return sim_now(c);
}

const char *live_client_url(const live_client *c, uint8_t provider) {
    return c->ep[provider].url;
}

const sim_port *live_client_port(live_client *c) {
    return &c->port;
}

void live_client_stats_get(live_client *c, live_client_stats *out) {
    *out = c->stats;
    out->lag_samples = fb_hist_count(&c->lag_us);
    out->lag_p50_us = fb_hist_percentile(&c->lag_us, 50);
    out->lag_p99_us = fb_hist_percentile(&c->lag_us, 99);
    out->lag_p999_us = fb_hist_percentile(&c->lag_us, 99.9);
    out->lag_max_us = fb_hist_max(&c->lag_us);
    out->gap_p99_us = fb_hist_percentile(&c->gap_us, 99);
    out->gap_p999_us = fb_hist_percentile(&c->gap_us, 99.9);
    out->gap_max_us = fb_hist_max(&c->gap_us);
    out->late_samples = fb_hist_count(&c->late_us);
    out->late_p50_us = fb_hist_percentile(&c->late_us, 50);
    out->late_p99_us = fb_hist_percentile(&c->late_us, 99);
    out->late_p999_us = fb_hist_percentile(&c->late_us, 99.9);
    out->late_max_us = fb_hist_max(&c->late_us);
    out->cpu_s = (double)(thread_cpu_ns() - c->cpu0_ns) / 1e9;
    sched_read(c, &out->sched);
}

static void xfer_free(xfer *x) {
    curl_easy_cleanup(x->easy);
    util_buf_free(&x->req);
    util_buf_free(&x->body);
    free(x);
}

void live_client_destroy(live_client *c) {
    if (c == NULL) return;
    fb_time_us now = sim_now(c);
    for (size_t i = 0; i < c->by_attempt_cap; i++) {
        xfer *x = c->by_attempt[i];
        if (x == NULL) continue;
        trace_attempt(c, x, now, false, true);
        if (c->multi) curl_multi_remove_handle(c->multi, x->easy);
        xfer_free(x);
    }
    for (xfer *x = c->free_list, *next; x; x = next) {
        next = x->next;
        xfer_free(x);
    }
    for (size_t p = 0; p < SIM_PROVIDERS_MAX; p++) curl_slist_free_all(c->ep[p].headers);
    if (c->multi) curl_multi_cleanup(c->multi);
    if (c->epfd >= 0) close(c->epfd);
    if (c->tfd >= 0) close(c->tfd);
    free(c->by_attempt);
    free(c);
    curl_global_cleanup();
}
