/* client.c - libcurl multi + epoll + timerfd, as a simulator port; see client.h. */
#include "live/client.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/retry_after.h"
#include "live/sse.h"

#define DEFAULT_TRANSFERS_MAX 4096u
#define BODY_MAX ((size_t)1 << 20) /* a longer answer body is a broken reply */
#define EPOLL_BATCH 256
#define NS_NEVER INT64_MAX

typedef struct endpoint {
    bool set;
    char url[2048];
    char model[256];
    live_dialect dialect;
    struct curl_slist *headers;
} endpoint;

typedef struct xfer {
    live_client *c;
    CURL *easy;
    uint64_t id;
    uint8_t provider;
    bool stream;  /* a stream was asked for */
    bool decided; /* the answer's kind is known (first body byte) */
    bool sse;     /* reading an event stream */
    bool body_cut;
    live_buf req;
    live_buf body;
    live_sse sse_p;
    live_stream st;
    char retry_after[64], retry_after_ms[64];
    int8_t should_retry;
    sim_port_answer answer;
    struct xfer *next; /* free list, or the ready list */
} xfer;

struct live_client {
    live_client_config cfg;
    CURLM *multi;
    int epfd, tfd;
    int64_t t0_ns;
    int64_t curl_due_ns; /* when curl wants its timeout callback; NS_NEVER = not */
    endpoint ep[SIM_PROVIDERS_MAX];
    xfer **by_attempt; /* attempt index (id >> 32) -> its transfer */
    size_t by_attempt_cap;
    xfer *free_list;
    xfer *ready, *ready_tail;
    uint32_t in_flight;
    live_client_stats stats;
    sim_port port;
};

/* ---- clocks ---- */

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_unix_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static fb_time_us sim_now(const live_client *c) {
    return (fb_time_us)((double)(mono_ns() - c->t0_ns) / 1000.0 * c->cfg.time_scale);
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
    if (x->sse) {
        live_sse_feed(&x->sse_p, p, len);
    } else if (x->body.len + len <= BODY_MAX) {
        live_buf_put(&x->body, p, len);
    } else {
        x->body_cut = true;
    }
    return len;
}

/* Keep a header's value (trimmed) when it is one the retry logic reads. */
static size_t on_header(char *p, size_t size, size_t n, void *userp) {
    xfer *x = userp;
    size_t len = size * n;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new response (after a 100, a redirect) */
        x->retry_after[0] = x->retry_after_ms[0] = '\0';
        x->should_retry = -1;
        return len;
    }
    static const char *const names[] = {"retry-after", "retry-after-ms", "x-should-retry"};
    const char *colon = memchr(p, ':', len);
    if (colon == NULL) return len;
    size_t nl = (size_t)(colon - p);
    for (size_t i = 0; i < 3; i++) {
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
        else
            x->should_retry = strcmp(val, "true") == 0 ? 1 : strcmp(val, "false") == 0 ? 0 : -1;
    }
    return len;
}

/* ---- transfers ---- */

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

/* Read a finished transfer into its answer. */
static void read_answer(xfer *x, CURLcode rc) {
    sim_port_answer *a = &x->answer;
    memset(a, 0, sizeof *a);
    a->hint_us = FB_TIME_NONE;
    a->reply.should_retry = x->should_retry;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    bool failed = false;
    if (rc != CURLE_OK) {
        a->reply.transport = transport_of(rc);
        failed = true;
        x->c->stats.transport_errors++;
    } else if (status != 200) {
        a->reply.status = (int)status;
        if (x->body.len > 0) a->reply.error_kind = live_wire_error_kind(x->body.p, x->body.len);
        a->hint_us = fb_retry_after_hint(x->retry_after_ms[0] ? x->retry_after_ms : NULL,
                                         x->retry_after[0] ? x->retry_after : NULL, wall_unix_us());
        return;
    } else if (x->sse) {
        a->reply.status = 200;
        if (x->st.error) {
            a->reply.error_kind = x->st.error_kind;
            failed = true;
        } else if (x->st.malformed || !x->st.done) {
            a->reply.status = 0;
            a->reply.transport = FB_TRANSPORT_OTHER;
            failed = true;
        } else if (x->st.refused) {
            a->reply.error_kind = FB_ERRKIND_CONTENT_POLICY;
        }
    } else {
        bool refused = false;
        a->reply.status = 200;
        if (x->body_cut || x->body.oom ||
            live_wire_success(x->c->ep[x->provider].dialect, x->body.p ? x->body.p : "",
                              x->body.len, &a->tokens_out, &refused) != FB_OK) {
            a->reply.status = 0;
            a->reply.transport = FB_TRANSPORT_OTHER;
        } else if (refused) {
            a->reply.error_kind = FB_ERRKIND_CONTENT_POLICY;
        }
    }
    /* a 200 means the model worked on it: billed, whatever happened next */
    a->served = status == 200;
    if (x->sse) {
        a->tokens_out = live_stream_tokens(&x->st);
        a->reply.after_first_token = failed && x->st.chunks > 0;
    }
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
        x->answer.at_us = sim_now(c);
        curl_off_t up = 0, down = 0;
        curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &up);
        curl_easy_getinfo(x->easy, CURLINFO_SIZE_DOWNLOAD_T, &down);
        c->stats.bytes_sent += (uint64_t)up;
        c->stats.bytes_received += (uint64_t)down;
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

static int port_send(void *ctx, const sim_port_attempt *a, char *msg, size_t msglen) {
    live_client *c = ctx;
    const endpoint *ep = &c->ep[a->provider];
    if (!ep->set) {
        snprintf(msg, msglen, "live: no endpoint for provider %u", a->provider);
        return FB_EINVAL;
    }
    if (c->in_flight >= c->cfg.transfers_max) {
        snprintf(msg, msglen, "live: %u transfers in flight, the cap (--max-transfers)",
                 c->in_flight);
        return FB_ECAP;
    }
    if (grow_index(c, (size_t)(a->id >> 32)) != FB_OK) {
        snprintf(msg, msglen, "live: out of memory");
        return FB_ENOMEM;
    }
    xfer *x = c->free_list;
    if (x != NULL) {
        c->free_list = x->next;
        curl_easy_reset(x->easy);
    } else {
        x = calloc(1, sizeof *x);
        if (x == NULL || (x->easy = curl_easy_init()) == NULL) {
            free(x);
            snprintf(msg, msglen, "live: out of memory");
            return FB_ENOMEM;
        }
        x->c = c;
    }
    x->id = a->id;
    x->provider = a->provider;
    x->stream = a->stream;
    x->decided = x->sse = x->body_cut = false;
    x->retry_after[0] = x->retry_after_ms[0] = '\0';
    x->should_retry = -1;
    x->next = NULL;
    live_wire_request(&x->req, ep->dialect, ep->model, a->tokens_in, a->tokens_out, a->stream);
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, ep->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->req.p);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->req.len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, ep->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    if (x->req.oom || curl_multi_add_handle(c->multi, e) != CURLM_OK) {
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

static void port_cancel(void *ctx, uint64_t id) {
    live_client *c = ctx;
    size_t i = (size_t)(id >> 32);
    xfer *x = i < c->by_attempt_cap ? c->by_attempt[i] : NULL;
    if (x == NULL || x->id != id) return;
    c->stats.cancelled++;
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

static int port_wait(void *ctx, fb_time_us until_us, fb_time_us *now_us, char *msg, size_t msglen) {
    live_client *c = ctx;
    int64_t until_ns = real_ns_of(c, until_us);
    struct epoll_event evs[EPOLL_BATCH];
    for (;;) {
        *now_us = sim_now(c);
        if (c->cfg.stop != NULL && *c->cfg.stop) {
            snprintf(msg, msglen, "interrupted");
            return FB_ESTATE;
        }
        int64_t now = mono_ns();
        if (c->curl_due_ns <= now) {
            int running;
            c->curl_due_ns = NS_NEVER;
            curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            drain_done(c);
            continue;
        }
        if (c->ready != NULL || now >= until_ns) return FB_OK;
        if (until_ns == NS_NEVER && c->in_flight == 0) {
            snprintf(msg, msglen, "live: nothing to wait for");
            return FB_ESTATE;
        }
        arm_timerfd(c, c->curl_due_ns < until_ns ? c->curl_due_ns : until_ns);
        int n = c->cfg.wait_sigmask
                    ? epoll_pwait(c->epfd, evs, EPOLL_BATCH, -1, c->cfg.wait_sigmask)
                    : epoll_wait(c->epfd, evs, EPOLL_BATCH, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
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
        }
        drain_done(c);
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
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "cannot initialise libcurl");
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
    c->port = (sim_port){port_send, port_cancel, port_wait, port_collect, c};
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
    memcpy(ep->url, base_url, n);
    memcpy(ep->url + n, path, strlen(path) + 1);
    snprintf(ep->model, sizeof ep->model, "%s", model);
    ep->dialect = d;
    curl_slist_free_all(ep->headers);
    ep->headers = NULL;
    const char *fixed[] = {"content-type: application/json", "accept: application/json",
                           "Expect:", d == LIVE_ANTHROPIC ? "anthropic-version: 2023-06-01" : NULL};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] + header_count; i++) {
        const char *h = i < 4 ? fixed[i] : headers[i - 4];
        if (h == NULL) continue;
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

void live_client_start(live_client *c) {
    c->t0_ns = mono_ns();
}

const sim_port *live_client_port(live_client *c) {
    return &c->port;
}

void live_client_stats_get(const live_client *c, live_client_stats *out) {
    *out = c->stats;
}

static void xfer_free(xfer *x) {
    curl_easy_cleanup(x->easy);
    live_buf_free(&x->req);
    live_buf_free(&x->body);
    free(x);
}

void live_client_destroy(live_client *c) {
    if (c == NULL) return;
    for (size_t i = 0; i < c->by_attempt_cap; i++) {
        xfer *x = c->by_attempt[i];
        if (x == NULL) continue;
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
