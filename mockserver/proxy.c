/*
 * proxy.c - proxy mode: a request that no fault answered goes to the upstream, and the
 * upstream's answer comes back through the scripted faults.
 *
 * One transfer thread drives every upstream request on a libcurl multi handle. The connection
 * waits suspended (through the timer, so that it still looks at its client every
 * HANG_POLL_US); the thread wakes it when the upstream's headers, or more of its body, have
 * arrived. The body is handed over through a bounded buffer: past PROXY_BUF_MAX unread bytes
 * the transfer is paused until the client has read them, so an answer is never held whole
 * unless a fault needs all of it (half a non-streamed body). Without a fault the bytes go as
 * they come, unchanged; with a stream fault or an added delay a server-sent-events answer goes
 * event by event (sse.h), and the fault counts its content events.
 *
 * Headers: the client's go upstream but for the hop-by-hop ones (RFC 9110 section 7.6.1:
 * Connection and the fields it names, Keep-Alive, Proxy-Connection, TE, Trailer,
 * Transfer-Encoding, Upgrade), Host and Content-Length (libcurl writes the upstream's), Expect,
 * the mock's own x-fusebox-*, and the credentials that are not the provider's: Cookie,
 * Proxy-Authorization (and Origin, a browser's); Accept-Encoding too when a fault reads the
 * body. The provider's (Authorization, api-key, x-api-key, x-goog-api-key) go, and only to the
 * upstream: the URL is the upstream's scheme, host, port and prefix plus the request's
 * normalised path and query (mock_proxy_target), and redirects are not followed. The
 * upstream's come back but for the same hop-by-hop set and Content-Length (libmicrohttpd writes
 * its own, the same number when the size is known). Header values are never logged.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "mockserver/serverint.h"
#include "mockserver/sse.h"

#define PROXY_BUF_MAX ((size_t)256 * 1024) /* unread answer bytes before the upstream pauses */
#define PROXY_HEADERS_MAX ((size_t)64 * 1024)
/* Of --max-response, the bytes a streamed answer keeps for the in-band error event that ends it
 * when the upstream breaks or passes the limit (the dialects' are 150 to 400 bytes). */
#define PROXY_END_RESERVE ((size_t)1024)
/* Sockets remembered; a reused connection opened longer ago has its send queue not looked at. */
#define PROXY_FDS 256
#define DEFAULT_CONNECT_TIMEOUT_US (10 * FB_US_PER_S)
#define DEFAULT_IDLE_TIMEOUT_US (600 * FB_US_PER_S)
#define DEFAULT_UPSTREAM_MAX 256u

struct mock_xfer {
    mock_proxy *p;
    CURL *easy;
    struct curl_slist *hl;
    char *url, *body;
    size_t body_len;
    struct MHD_Connection *conn;
    req *r; /* NULL once the request ended: the thread then frees the transfer */
    /* shared with the thread, under p->lock */
    bool added, done, paused, unpause, waiting, too_big, headers_done;
    bool sse_up;     /* the final answer's Content-Type is text/event-stream (from its headers) */
    bool resume_now; /* the thread's own copy of unpause */
    CURLcode result;
    long status;
    util_buf hdrs; /* the final answer's header lines */
    util_buf data; /* the body; [off, len) not read yet */
    size_t off, cap;
    uint64_t received;
    fb_time_us start_us, headers_us;
    /* the last byte either way on the upstream's connection (or a pause, or the start): the
     * idle timeout runs from it */
    fb_time_us active_us;
    curl_off_t sent; /* request bytes libcurl had written at the last progress call */
    int queued;      /* of those, still in the socket's send queue then (-1: not known) */
    int fd;          /* the upstream connection's socket; -1 not looked up, -2 not found */
    bool idle_out;   /* no byte either way for upstream_idle_timeout_us */
    char err[CURL_ERROR_SIZE];
    mock_xfer *next;
    /* the connection's side only */
    bool shape, sse, half, finished, cut, fault_done, ttft_done, stall_done;
    /* an unshaped stream: the bytes after off known to be whole events (they go; a partial
     * event waits for its end), and whether bytes went that may have ended inside an event */
    size_t whole;
    bool mid_event;
    int64_t k; /* content events sent */
    fb_time_us hold_until_us;
    util_buf out, held;
    size_t out_off;
};

struct mock_proxy {
    mock_server *s;
    pthread_mutex_t lock;
    pthread_t thread;
    CURLM *multi;
    mock_xfer *head;
    unsigned active; /* transfers not done */
    /* the sockets libcurl opened, newest last (the thread's only): a transfer finds its own by
     * its ports, for its send queue (unsent) */
    int fds[PROXY_FDS];
    size_t n_opened;
    bool stopping;
};

/* Spelled out, not copied from a static: C11 wants a constant initializer (clang insists). */
const mock_api_ops mock_api_passthrough = {"passthrough", false, NULL, NULL,
                                           NULL,          NULL,  NULL, NULL};

/* ---- the transfer thread ---- */

/* Wake the connection if it waits for the upstream (caller holds p->lock). */
static void wake_locked(mock_xfer *x) {
    if (!x->waiting || x->r == NULL) return;
    x->waiting = false;
    mock_sched_wake(x->p->s->sched, x->conn);
}

static void free_xfer(mock_xfer *x) {
    if (x->added) {
        /* Removing a running transfer reports its progress once more: on_progress would take
         * p->lock, which the sweep holds. */
        curl_easy_setopt(x->easy, CURLOPT_NOPROGRESS, 1L);
        curl_easy_setopt(x->easy, CURLOPT_XFERINFOFUNCTION, NULL);
        curl_multi_remove_handle(x->p->multi, x->easy);
    }
    if (x->easy != NULL) curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->hl);
    mock_memory_give(x->p->s, x->data.len - x->off);
    util_buf_free(&x->data);
    util_buf_free(&x->hdrs);
    free(x->url);
    free(x->body);
    free(x);
}

/* Under the lock: new transfers join the multi handle, let-go ones are freed, a stop ends all. */
static void sweep_locked(mock_proxy *p) {
    for (mock_xfer **pp = &p->head; *pp != NULL;) {
        mock_xfer *x = *pp;
        if (x->r == NULL) {
            if (!x->done) p->active--;
            *pp = x->next;
            free_xfer(x);
            continue;
        }
        if (p->stopping && !x->done) {
            x->done = true;
            x->result = CURLE_ABORTED_BY_CALLBACK;
            p->active--;
        }
        if (!x->added && !x->done) x->added = curl_multi_add_handle(p->multi, x->easy) == CURLM_OK;
        pp = &x->next;
    }
}

static void finished_transfers(mock_proxy *p) {
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(p->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE) continue;
        mock_xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode rc = m->data.result;
        curl_multi_remove_handle(p->multi, m->easy_handle);
        pthread_mutex_lock(&p->lock);
        x->added = false;
        x->done = true;
        x->result = rc;
        p->active--;
        wake_locked(x);
        pthread_mutex_unlock(&p->lock);
    }
}

/*
 * Unpause a transfer, outside the lock: libcurl hands on_data the bytes it held at once, in
 * pieces of up to 16 KiB (bigger than the upstream's chunks it passed before). When on_data
 * refuses one (past --max-response or --max-memory), libcurl 7.88 (Debian 12's) fails only
 * this call: it drops the rest of the bytes it held and leaves the transfer running, so its
 * next, smaller pieces would still fit the limit and follow a gap: the client got an event
 * spliced from two (mock_proxy's endless stream, on a loaded machine). The transfer ends here
 * instead, failed, after the bytes on_data took (and on_data refuses all after a refusal).
 */
static void resume(mock_proxy *p, mock_xfer *x) {
    CURLcode rc = curl_easy_pause(x->easy, CURLPAUSE_CONT);
    if (rc == CURLE_OK) return;
    curl_multi_remove_handle(p->multi, x->easy);
    pthread_mutex_lock(&p->lock);
    x->added = false;
    if (!x->done) {
        x->done = true;
        x->result = rc;
        p->active--;
    }
    wake_locked(x);
    pthread_mutex_unlock(&p->lock);
}

static void *run(void *arg) {
    mock_proxy *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        sweep_locked(p);
        bool stop = p->stopping;
        mock_xfer *snapshot = p->head; /* only this thread unlinks, so the list stays valid */
        for (mock_xfer *x = snapshot; x != NULL; x = x->next) {
            x->resume_now = x->unpause && !x->done;
            if (x->unpause) x->paused = x->unpause = false;
        }
        pthread_mutex_unlock(&p->lock);
        if (stop) break;
        for (mock_xfer *x = snapshot; x != NULL; x = x->next)
            if (x->resume_now) resume(p, x);
        int running = 0;
        curl_multi_perform(p->multi, &running);
        finished_transfers(p);
        curl_multi_poll(p->multi, NULL, 0, 1000, NULL);
    }
    return NULL;
}

/* ---- libcurl's callbacks (on the thread) ---- */

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud) {
    mock_xfer *x = ud;
    size_t n = size * nmemb, rc = n;
    pthread_mutex_lock(&x->p->lock);
    x->active_us = mock_now_us();
    if (x->r == NULL) {
        rc = 0;
    } else if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0) { /* a new answer: 1xx ones are skipped */
        const char *sp = memchr(ptr, ' ', n);
        x->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
        x->hdrs.len = 0;
        x->sse_up = false;
    } else if (n <= 2 && (ptr[0] == '\r' || ptr[0] == '\n')) {
        if (x->status >= 200) {
            x->headers_done = true;
            x->headers_us = mock_now_us();
            wake_locked(x);
        }
    } else if (x->hdrs.len + n > PROXY_HEADERS_MAX) {
        rc = 0;
    } else {
        util_buf_append(&x->hdrs, ptr, n);
        if (n > 13 && strncasecmp(ptr, "content-type:", 13) == 0)
            for (size_t i = 13; i + 17 <= n && !x->sse_up; i++)
                x->sse_up = strncasecmp(ptr + i, "text/event-stream", 17) == 0;
    }
    pthread_mutex_unlock(&x->p->lock);
    return rc;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud) {
    mock_xfer *x = ud;
    mock_server *s = x->p->s;
    size_t n = size * nmemb, rc = n;
    size_t limit = s->cfg.max_response_bytes;
    pthread_mutex_lock(&x->p->lock);
    if (x->sse_up) limit = limit > PROXY_END_RESERVE ? limit - PROXY_END_RESERVE : 0;
    x->active_us = mock_now_us();
    if (x->r == NULL || x->p->stopping || x->too_big || x->data.err) {
        /* Once refused, always: bytes taken after a refused piece would follow a gap (libcurl
         * drops a refused piece it held for a pause and may carry on: see resume), and the
         * client would get an event spliced from two. */
        rc = 0;
    } else if (x->received + n > limit) {
        x->too_big = true;
        rc = 0;
    } else if (x->data.len > x->off && x->data.len - x->off + n > x->cap) {
        x->paused = true;
        rc = CURL_WRITEFUNC_PAUSE;
    } else if (!mock_memory_take(s, n)) {
        x->too_big = true;
        rc = 0;
    } else {
        if (x->off > 0 && x->off >= x->data.len - x->off) {
            /* the bytes read go (a partial event held back keeps off short of len) */
            memmove(x->data.p, x->data.p + x->off, x->data.len - x->off);
            x->data.len -= x->off;
            x->off = 0;
        }
        util_buf_append(&x->data, ptr, n);
        if (x->data.err) { /* nothing appended: the budget gets the bytes back */
            mock_memory_give(s, n);
            rc = 0;
        } else {
            x->received += n;
        }
    }
    wake_locked(x);
    pthread_mutex_unlock(&x->p->lock);
    return rc;
}

static int on_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose) {
    mock_proxy *p = ud;
    (void)purpose;
    p->fds[p->n_opened++ % PROXY_FDS] = (int)fd;
    return CURL_SOCKOPT_OK;
}

static long port_of(int fd, bool peer) {
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if ((peer ? getpeername(fd, (struct sockaddr *)&a, &n)
              : getsockname(fd, (struct sockaddr *)&a, &n)) != 0)
        return -1;
    if (a.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&a)->sin_port);
    if (a.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return -1;
}

/* The transfer's socket: one libcurl opened with its local and remote ports; -1 not yet. */
static int find_fd(mock_xfer *x) {
    long local = 0, remote = 0;
    if (curl_easy_getinfo(x->easy, CURLINFO_LOCAL_PORT, &local) != CURLE_OK || local <= 0 ||
        curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_PORT, &remote) != CURLE_OK)
        return -1; /* not connected yet */
    mock_proxy *p = x->p;
    size_t n = p->n_opened < PROXY_FDS ? p->n_opened : PROXY_FDS;
    for (size_t i = 1; i <= n; i++) { /* newest first: a new connection's is the last */
        int fd = p->fds[(p->n_opened - i) % PROXY_FDS];
        if (port_of(fd, false) == local && port_of(fd, true) == remote) return fd;
    }
    return -2;
}

/*
 * The bytes written to the upstream's socket that it has not taken yet (Linux's TIOCOUTQ), or -1.
 * libcurl's upload count stops when the last byte is handed to the kernel, but the send queue
 * can hold megabytes: an upstream still draining it is reading, not idle.
 */
static int unsent(mock_xfer *x) {
    if (x->fd == -1) x->fd = find_fd(x);
    int n = 0;
    if (x->fd < 0 || ioctl(x->fd, TIOCOUTQ, &n) != 0) return -1;
    return n;
}

/*
 * Called about once a second and on every transfer step: a connection idle past the timeout is
 * given up. Idle means no byte either way: the request body still going up to an upstream that
 * reads it slowly is progress (the answer's bytes coming down are counted as they arrive, in
 * on_header and on_data), and a transfer paused for a slow client is not the upstream's silence.
 */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    mock_xfer *x = ud;
    (void)dltotal, (void)dlnow, (void)ultotal;
    fb_time_us now = mock_now_us();
    int queued = unsent(x);
    pthread_mutex_lock(&x->p->lock);
    bool moved = ulnow != x->sent || (queued >= 0 && queued != x->queued);
    if (x->paused || x->active_us == 0 || moved) x->active_us = now;
    x->sent = ulnow;
    x->queued = queued;
    x->idle_out = now - x->active_us > x->p->s->cfg.upstream_idle_timeout_us;
    bool stop = x->idle_out || x->r == NULL;
    pthread_mutex_unlock(&x->p->lock);
    return stop ? 1 : 0;
}

/* ---- the request upstream ---- */

static bool token_in(const char *list, const char *name) {
    size_t k = strlen(name);
    for (const char *p = list; p != NULL && *p != '\0';) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        size_t n = strcspn(p, ", \t");
        if (n == k && strncasecmp(p, name, k) == 0) return true;
        p += n;
    }
    return false;
}

static bool hop_by_hop(const char *name, const char *connection) {
    static const char *const hop[] = {"connection", "keep-alive",        "proxy-connection", "te",
                                      "trailer",    "transfer-encoding", "upgrade"};
    for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
        if (strcasecmp(name, hop[i]) == 0) return true;
    return connection != NULL && token_in(connection, name);
}

typedef struct fwd {
    struct curl_slist *hl;
    const char *connection;
    bool identity, content_type, accept, failed;
} fwd;

static enum MHD_Result forward_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
    fwd *f = cls;
    (void)kind;
    if (hop_by_hop(key, f->connection) || strcasecmp(key, "host") == 0 ||
        strcasecmp(key, "content-length") == 0 || strcasecmp(key, "expect") == 0 ||
        strncasecmp(key, "x-fusebox-", 10) == 0 || strcasecmp(key, "cookie") == 0 ||
        strcasecmp(key, "proxy-authorization") == 0 || strcasecmp(key, "origin") == 0 ||
        (f->identity && strcasecmp(key, "accept-encoding") == 0))
        return MHD_YES;
    if (strcasecmp(key, "content-type") == 0) f->content_type = true;
    if (strcasecmp(key, "accept") == 0) f->accept = true;
    util_buf line = {0};
    util_buf_puts(&line, key);
    util_buf_puts(&line, value != NULL && value[0] != '\0' ? ": " : ";"); /* ";": empty value */
    if (value != NULL) util_buf_puts(&line, value);
    struct curl_slist *l = line.err ? NULL : curl_slist_append(f->hl, line.p);
    util_buf_free(&line);
    if (l == NULL) {
        f->failed = true;
        return MHD_NO;
    }
    f->hl = l;
    return MHD_YES;
}

/* The client's headers for the upstream; libcurl's own defaults switched off where the client
 * sent none (Content-Type, Accept, Expect). NULL when out of memory. */
static struct curl_slist *forward_headers(req *r, bool identity) {
    fwd f = {NULL, mock_header(r->conn, "connection"), identity, false, false, false};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, forward_one, &f);
    const char *off[] = {
        f.content_type ? NULL : "Content-Type:", f.accept ? NULL : "Accept:", "Expect:"};
    for (size_t i = 0; i < 3 && !f.failed; i++) {
        if (off[i] == NULL) continue;
        struct curl_slist *l = curl_slist_append(f.hl, off[i]);
        if (l == NULL) f.failed = true;
        f.hl = l != NULL ? l : f.hl;
    }
    if (!f.failed) return f.hl;
    curl_slist_free_all(f.hl);
    return NULL;
}

/* Does this fault read the answer's body (then it must come uncompressed)? */
static bool reads_body(const mock_action *a) {
    return a->end != MOCK_END_NORMAL || a->ttft_us >= 0 || a->stall_after >= 0 || a->slow != 1.0;
}

static bool setup_easy(mock_xfer *x, req *r, const char *method) {
    mock_server *s = r->s;
    CURL *e = x->easy = curl_easy_init();
    x->hl = forward_headers(r, reads_body(&r->act));
    if (e == NULL || x->hl == NULL) return false;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hl);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->err);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(s->cfg.upstream_connect_timeout_us / FB_US_PER_MS));
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, x->p);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "GET") != 0 || x->body_len > 0) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body != NULL ? x->body : "");
        if (strcmp(method, "POST") != 0) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    }
    return true;
}

/* Is the segment [p, p+n) "." (dots 1) or ".." (dots 2), "%2e" counting as a dot? */
static int dots(const char *p, size_t n) {
    int d = 0;
    for (size_t i = 0; i < n; d++) {
        if (p[i] == '.') {
            i++;
        } else if (n - i >= 3 && p[i] == '%' && p[i + 1] == '2' && (p[i + 2] | 0x20) == 'e') {
            i += 3;
        } else {
            return 0;
        }
    }
    return d <= 2 ? d : 0;
}

static void cut_to(util_buf *b, size_t len) {
    b->len = len;
    if (b->p != NULL) b->p[len] = '\0';
}

int mock_proxy_target(const char *target, util_buf *out, char *err, size_t errlen) {
    if (target == NULL || target[0] != '/') {
        snprintf(err, errlen,
                 "fusebox mock: the request target must be a path starting with '/' (proxy "
                 "mode sends only the path and query to the upstream)");
        return FB_EINVAL;
    }
    for (const char *c = target; *c; c++) {
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '\\') {
            snprintf(err, errlen,
                     "fusebox mock: the request target holds a byte a URL cannot (0x%02x)",
                     (unsigned char)*c);
            return FB_EINVAL;
        }
    }
    size_t plen = strcspn(target, "?#");
    const char *query = target[plen] == '?' ? target + plen : NULL;
    size_t qlen = query ? strcspn(query, "#") : 0;
    /* remove_dot_segments (RFC 3986 section 5.2.4) over the path, refusing a climb above it */
    size_t *seg = malloc((plen + 1) * sizeof *seg), nseg = 0;
    if (seg == NULL) {
        snprintf(err, errlen, "out of memory");
        return FB_ENOMEM;
    }
    size_t start = out->len;
    bool slash_end = false;
    for (size_t i = 1; i <= plen;) {
        size_t n = strcspn(target + i, "/?#");
        if (i + n > plen) n = plen - i;
        int d = dots(target + i, n);
        bool last = i + n >= plen;
        if (d == 2) {
            if (nseg == 0) {
                free(seg);
                cut_to(out, start);
                snprintf(err, errlen,
                         "fusebox mock: the request path climbs above the upstream's path "
                         "prefix ('..')");
                return FB_EINVAL;
            }
            cut_to(out, seg[--nseg]);
            slash_end = last;
        } else if (d == 1) {
            slash_end = last;
        } else {
            seg[nseg++] = out->len;
            util_buf_append(out, "/", 1);
            util_buf_append(out, target + i, n);
            slash_end = false;
        }
        i += n + 1;
    }
    free(seg);
    if (out->len == start || slash_end) util_buf_append(out, "/", 1);
    if (query) util_buf_append(out, query, qlen);
    if (out->err) {
        snprintf(err, errlen, "out of memory");
        return FB_ENOMEM;
    }
    return FB_OK;
}

/* The transfer for r, or NULL when out of memory. */
static mock_xfer *new_xfer(req *r, const char *method, const char *url) {
    mock_server *s = r->s;
    mock_xfer *x = calloc(1, sizeof *x);
    if (x == NULL) return NULL;
    x->p = s->proxy;
    x->r = r;
    x->conn = r->conn;
    x->cap = PROXY_BUF_MAX;
    x->start_us = mock_now_us();
    x->queued = x->fd = -1;
    util_buf u = {0};
    util_buf_puts(&u, s->upstream);
    char err[200];
    if (mock_proxy_target(url, &u, err, sizeof err) != FB_OK)
        u.err = UTIL_BUF_NOMEM; /* checked before */
    x->url = util_buf_take(&u, &x->body_len);
    x->body = r->body.len > 0 ? util_buf_take(&r->body, &x->body_len) : NULL;
    if (x->body == NULL) x->body_len = 0;
    if (x->url != NULL && setup_easy(x, r, method)) return x;
    if (x->easy != NULL) curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->hl);
    free(x->url);
    free(x->body);
    free(x);
    return NULL;
}

enum MHD_Result mock_proxy_start(req *r) {
    mock_server *s = r->s;
    mock_proxy *p = s->proxy;
    char msg[200];
    /* the upstream's scheme, host, port and path prefix, and only the request's normalised
     * path and query: a target that is no path, or climbs above the prefix, is refused */
    const char *raw = mock_watch_raw_uri(s->watch, r->conn);
    util_buf check = {0};
    int trc = mock_proxy_target(raw != NULL ? raw : r->url, &check, msg, sizeof msg);
    util_buf_free(&check);
    if (trc == FB_EINVAL) return mock_send_error(r, 400, MOCK_FLAVOR_ROUTING, msg, NULL, 0);
    mock_xfer *x = new_xfer(r, r->method, raw != NULL ? raw : r->url);
    if (x == NULL) return MHD_NO;
    pthread_mutex_lock(&p->lock);
    if (p->stopping || p->active >= s->cfg.upstream_max) {
        pthread_mutex_unlock(&p->lock);
        free_xfer(x);
        snprintf(msg, sizeof msg,
                 "fusebox mock: %u upstream requests are in flight, the most it sends at once "
                 "(--upstream-max); try again later",
                 s->cfg.upstream_max);
        return mock_send_error(r, r->rep.dialect == MOCK_ANTHROPIC ? 529 : 503,
                               MOCK_FLAVOR_OVERLOADED, msg, NULL, 0);
    }
    p->active++;
    x->next = p->head;
    p->head = x;
    r->px = x;
    r->phase = PH_PROXY;
    x->waiting = true;
    bool ok = mock_suspend_until(r, mock_now_us() + s->cfg.hang_max_us);
    if (!ok) x->waiting = false;
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_lock(&s->lock);
    s->stats.proxied++;
    pthread_mutex_unlock(&s->lock);
    curl_multi_wakeup(p->multi);
    return ok ? MHD_YES : MHD_NO;
}

/* ---- the upstream's answer ---- */

/* Why the upstream gave no answer, as the status and message the client gets. */
static int failure(const req *r, mock_xfer *x, char *msg, size_t len) {
    const mock_config *c = &r->s->cfg;
    curl_off_t connect_us = 0;
    curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connect_us);
    const char *why = x->err[0] != '\0' ? x->err : curl_easy_strerror(x->result);
    if (x->too_big) {
        snprintf(msg, len,
                 "fusebox mock: the upstream's answer is over the mock's limit of %zu bytes "
                 "(--max-response or --max-memory)",
                 c->max_response_bytes);
        return 502;
    }
    if (x->result == CURLE_OPERATION_TIMEDOUT && connect_us == 0) {
        snprintf(msg, len,
                 "fusebox mock: could not connect to the upstream %.200s within %lld ms "
                 "(--upstream-connect-timeout)",
                 r->s->upstream, (long long)(c->upstream_connect_timeout_us / FB_US_PER_MS));
        return 504;
    }
    if (x->idle_out) {
        snprintf(msg, len,
                 "fusebox mock: the upstream %.200s sent nothing for %.15g s "
                 "(--upstream-timeout)",
                 r->s->upstream, (double)c->upstream_idle_timeout_us / 1e6);
        return 504;
    }
    snprintf(msg, len, "fusebox mock: the upstream %.200s did not answer: %.300s", r->s->upstream,
             why);
    return 502;
}

static void count_upstream_error(mock_server *s) {
    pthread_mutex_lock(&s->lock);
    s->stats.upstream_errors++;
    pthread_mutex_unlock(&s->lock);
}

/* No answer from the upstream: the dialect's 502 or 504 saying why. */
static enum MHD_Result upstream_failed(req *r, mock_xfer *x) {
    char msg[700];
    int status = failure(r, x, msg, sizeof msg);
    count_upstream_error(r->s);
    mock_logf(r->s, MOCK_LOG_WARN, "%s %s: %s", r->method, r->url, msg);
    return mock_send_error(r, status, MOCK_FLAVOR_PLAIN, msg, NULL, 0);
}

/*
 * One upstream header line onto the answer, unless it is hop-by-hop, Content-Length, or an
 * upstream fusebox mock's x-fusebox-plan-us (its plan, not this answer's: the hop adds time).
 */
static void copy_header(struct MHD_Response *resp, char *line, const char *connection) {
    char *colon = strchr(line, ':');
    if (colon == NULL) return;
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ')) v[--n] = '\0';
    if (!hop_by_hop(line, connection) && strcasecmp(line, "content-length") != 0 &&
        strcasecmp(line, "x-fusebox-plan-us") != 0)
        MHD_add_response_header(resp, line, v);
}

/* The upstream's header `name` (a copy in out), or NULL. */
static const char *upstream_header(const mock_xfer *x, const char *name, char *out, size_t cap) {
    size_t k = strlen(name);
    for (const char *p = x->hdrs.p; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '\n');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n > k && strncasecmp(p, name, k) == 0 && p[k] == ':') {
            const char *v = p + k + 1;
            while (*v == ' ' || *v == '\t') v++;
            size_t vn = (size_t)(p + n - v);
            while (vn > 0 && (v[vn - 1] == '\r' || v[vn - 1] == ' ')) vn--;
            mock_copy_str(out, vn + 1 < cap ? vn + 1 : cap, v);
            return out;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return NULL;
}

static void copy_headers(struct MHD_Response *resp, mock_xfer *x) {
    char connection[512];
    const char *conn = upstream_header(x, "connection", connection, sizeof connection);
    for (char *p = x->hdrs.p; p != NULL && *p != '\0';) {
        char *end = strchr(p, '\n');
        if (end != NULL) *end = '\0';
        copy_header(resp, p, conn);
        p = end != NULL ? end + 1 : NULL;
    }
}

static ssize_t proxy_reader(void *cls, uint64_t pos, char *buf, size_t max);

/* How long the answer waits before its headers go: an added time to first token, a stall on a
 * whole body, and slow-F as (F - 1) x the upstream's own time to its headers. */
static fb_time_us added_delay(const req *r, const mock_xfer *x, bool stream) {
    const mock_action *a = &r->act;
    fb_time_us d = 0;
    if (!stream && a->ttft_us >= 0) d += mock_to_real(r->s, a->ttft_us, 1.0);
    if (!stream && a->stall_after >= 0) d += mock_to_real(r->s, a->stall_us, 1.0);
    if (!stream && a->slow > 1.0)
        d += (fb_time_us)((a->slow - 1.0) * (double)(x->headers_us - x->start_us));
    return d;
}

/* The headers are in: the answer goes (now or after its added delay), its body read as it
 * comes. A half-body fault on a whole answer waits for all of it first. */
static enum MHD_Result answer_upstream(req *r, mock_xfer *x) {
    mock_proxy *p = r->s->proxy;
    const mock_action *a = &r->act;
    char ctype[256], clen[32];
    const char *ct = upstream_header(x, "content-type", ctype, sizeof ctype);
    x->sse = ct != NULL && strstr(ct, "text/event-stream") != NULL;
    x->half = !x->sse && (a->end == MOCK_END_CUT || a->end == MOCK_END_TRUNCATE ||
                          a->end == MOCK_END_MALFORMED);
    x->shape = x->sse && reads_body(a);
    const char *cl = upstream_header(x, "content-length", clen, sizeof clen);
    if (cl != NULL && strtoull(cl, NULL, 10) > r->s->cfg.max_response_bytes) {
        x->too_big = true; /* said before a byte of it: refused whole, nothing buffered */
        return upstream_failed(r, x);
    }
    if (x->half && !x->done) {
        pthread_mutex_lock(&p->lock);
        x->cap = r->s->cfg.max_response_bytes;
        x->unpause = x->paused;
        x->waiting = !x->done;
        bool ok = !x->waiting || mock_suspend_until(r, mock_now_us() + r->s->cfg.hang_max_us);
        pthread_mutex_unlock(&p->lock);
        curl_multi_wakeup(p->multi);
        if (!x->waiting) return answer_upstream(r, x);
        return ok ? MHD_YES : MHD_NO;
    }
    uint64_t size = MHD_SIZE_UNKNOWN;
    if (cl != NULL && !x->shape && !x->half &&
        upstream_header(x, "transfer-encoding", ctype, sizeof ctype) == NULL)
        size = strtoull(cl, NULL, 10);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(size, 16 * 1024, proxy_reader, r, NULL);
    if (resp == NULL) return MHD_NO;
    copy_headers(resp, x);
    fb_time_us now = mock_now_us(), delay = added_delay(r, x, x->sse);
    mock_note_sent(r, (int)x->status, a->label);
    return mock_send_at(r, (unsigned)x->status, resp, delay > 0 ? now + delay : 0);
}

enum MHD_Result mock_proxy_resume(req *r) {
    mock_xfer *x = r->px;
    mock_proxy *p = r->s->proxy;
    if (mock_stopping(r->s) || mock_client_left(r)) return MHD_NO;
    pthread_mutex_lock(&p->lock);
    bool ready = x->headers_done || x->done;
    if (!ready) x->waiting = true;
    bool ok = ready || mock_suspend_until(r, mock_now_us() + r->s->cfg.hang_max_us);
    pthread_mutex_unlock(&p->lock);
    if (!ready) return ok ? MHD_YES : MHD_NO;
    if (x->headers_done && !x->too_big) return answer_upstream(r, x);
    return upstream_failed(r, x);
}

/* ---- the body ---- */

/* Bytes read from the buffer: the memory budget gets them back, a paused upstream resumes. */
static void consumed_locked(req *r, mock_xfer *x, size_t n) {
    x->off += n;
    mock_memory_give(r->s, n);
    if (x->paused && x->data.len - x->off < x->cap / 2) x->unpause = true;
}

/* Nothing to read yet: wait for the upstream (suspended, waking to look at the client). */
static ssize_t wait_data_locked(req *r, mock_xfer *x) {
    if (mock_client_left(r)) return MHD_CONTENT_READER_END_WITH_ERROR;
    x->waiting = true;
    if (mock_suspend_until(r, mock_now_us() + r->s->cfg.hang_max_us)) return 0;
    x->waiting = false;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* The end of the answer: clean, or abortive for a cut or an upstream that failed midway. */
static ssize_t body_end(req *r, bool cut, bool upstream_failed) {
    if (upstream_failed) count_upstream_error(r->s);
    if (!cut && !upstream_failed) return MHD_CONTENT_READER_END_OF_STREAM;
    return cut ? mock_cut_end(r) : mock_abort_end(r); /* the client learns it at once */
}

/* A stream's malformed or in-band error event, in the dialect of r's path, onto x->out. */
static void fault_event(req *r, mock_xfer *x, mock_stream_end end) {
    const mock_api_ops *ops = r->ep->ops;
    if (ops->fault == NULL) { /* a path the mock does not know: OpenAI's shapes */
        util_buf_puts(&x->out, end == MOCK_END_ERROR ? "data: " : "data: {\"broken\n\n");
        if (end == MOCK_END_ERROR) mock_wire_stream_error(&x->out, &r->rep);
        if (end == MOCK_END_ERROR) util_buf_puts(&x->out, "\n\n");
        return;
    }
    mock_stream st;
    mock_stream_init(&st, &r->rep, ops, end, x->k);
    st.k = x->k;
    ops->fault(&st, &x->out);
}

/* An upstream stream that broke or passed --max-response ends, after its last whole event,
 * with the dialect's in-band error event (as error-K sends it: PROXY_END_RESERVE of the limit
 * is kept for it) and then abortively: the client reads why, then the FIN, at once. */
static void broken_stream(req *r, mock_xfer *x) {
    x->finished = true;
    if (x->mid_event) return; /* an event passed on in pieces: no boundary to end at */
    fault_event(r, x, MOCK_END_ERROR);
    if (x->out.len > PROXY_END_RESERVE) x->out.len = 0;
}

/* Of avail bytes after off, those an unshaped stream sends now: its whole events; the rest of
 * an event waits for its end, unless half the buffer holds no boundary (passed on as is). */
static size_t whole_events_locked(mock_xfer *x, size_t avail) {
    const char *p = x->data.p + x->off;
    for (size_t k; x->whole < avail && (k = mock_sse_next(p + x->whole, avail - x->whole)) > 0;) {
        x->whole += k;
        x->mid_event = false;
    }
    if (x->whole == 0 && avail >= x->cap / 2) {
        x->whole = avail;
        x->mid_event = true;
    }
    return x->done && x->result == CURLE_OK && !x->too_big ? avail : x->whole;
}

/* The bytes as they come (a stream's in whole events); for a half-body fault, the first half
 * of the whole answer. */
static ssize_t plain_read(req *r, mock_xfer *x, char *buf, size_t max) {
    mock_proxy *p = r->s->proxy;
    if (x->out_off < x->out.len) { /* the error event that ends a broken stream */
        size_t n = x->out.len - x->out_off < max ? x->out.len - x->out_off : max;
        memcpy(buf, x->out.p + x->out_off, n);
        x->out_off += n;
        return (ssize_t)n;
    }
    if (x->finished) return body_end(r, false, true);
    pthread_mutex_lock(&p->lock);
    size_t end = x->half ? (size_t)(x->received / 2) : x->data.len;
    size_t avail = end > x->off ? end - x->off : 0;
    if (x->sse && !x->half && avail > 0) avail = whole_events_locked(x, avail);
    ssize_t rc;
    if (avail > 0) {
        size_t n = avail < max ? avail : max;
        memcpy(buf, x->data.p + x->off, n);
        consumed_locked(r, x, n);
        x->whole = x->whole > n ? x->whole - n : 0;
        rc = (ssize_t)n;
    } else if (x->done || x->half) {
        bool failed = !x->half && (x->result != CURLE_OK || x->too_big);
        if (failed && x->sse) {
            consumed_locked(r, x, x->data.len - x->off); /* a partial event does not go */
            pthread_mutex_unlock(&p->lock);
            broken_stream(r, x);
            return plain_read(r, x, buf, max);
        }
        pthread_mutex_unlock(&p->lock);
        return body_end(r, x->half && r->act.end == MOCK_END_CUT, failed);
    } else {
        rc = wait_data_locked(r, x);
    }
    bool wake = x->unpause;
    pthread_mutex_unlock(&p->lock);
    if (wake) curl_multi_wakeup(p->multi);
    return rc;
}

/* The scripted stream fault in place of the next content event (or of the terminator). */
static void stream_fault(req *r, mock_xfer *x) {
    const mock_action *a = &r->act;
    x->fault_done = x->finished = true;
    if (a->end == MOCK_END_CUT) {
        x->cut = true;
        return;
    }
    if (a->end != MOCK_END_MALFORMED && a->end != MOCK_END_ERROR) return; /* truncate */
    fault_event(r, x, a->end);
}

/* A content event: the fault's place, or the event after any delay it adds. */
static void content_event(req *r, mock_xfer *x, const char *ev, size_t n) {
    const mock_action *a = &r->act;
    bool faulty = a->end == MOCK_END_CUT || a->end == MOCK_END_TRUNCATE ||
                  a->end == MOCK_END_MALFORMED || a->end == MOCK_END_ERROR;
    if (faulty && !x->fault_done && a->end_after >= 0 && x->k >= a->end_after) {
        stream_fault(r, x);
        return;
    }
    fb_time_us delay = 0;
    if (!x->ttft_done) {
        x->ttft_done = true;
        if (a->ttft_us >= 0) delay += mock_to_real(r->s, a->ttft_us, 1.0);
        if (a->slow > 1.0)
            delay += (fb_time_us)((a->slow - 1.0) * (double)(x->headers_us - x->start_us));
    }
    if (a->stall_after >= 0 && x->k >= a->stall_after && !x->stall_done) {
        x->stall_done = true;
        delay += mock_to_real(r->s, a->stall_us, 1.0);
    }
    x->k++;
    util_buf_append(delay > 0 ? &x->held : &x->out, ev, n);
    if (delay > 0) x->hold_until_us = mock_now_us() + delay;
}

/* One whole event of the upstream's stream through the fault. */
static void shape_event(req *r, mock_xfer *x, const char *ev, size_t n) {
    const mock_action *a = &r->act;
    mock_sse_kind kind = mock_sse_classify(ev, n);
    if (kind == MOCK_SSE_CONTENT) {
        content_event(r, x, ev, n);
        return;
    }
    bool faulty = a->end == MOCK_END_CUT || a->end == MOCK_END_TRUNCATE ||
                  a->end == MOCK_END_MALFORMED || a->end == MOCK_END_ERROR;
    if (kind == MOCK_SSE_TERMINATOR && faulty && !x->fault_done) {
        stream_fault(r, x); /* K beyond the answer's content: the fault comes at its end */
        return;
    }
    if (kind == MOCK_SSE_TERMINATOR && a->end == MOCK_END_NOTERM) return;
    util_buf_append(&x->out, ev, n);
}

/* Take the next whole event from the buffer into the answer; false when none is there yet. */
static bool next_event_locked(req *r, mock_xfer *x) {
    const char *p = x->data.p != NULL ? x->data.p + x->off : ""; /* nothing came: no buffer */
    size_t avail = x->data.len - x->off;
    size_t n = mock_sse_next(p, avail);
    if (n == 0 && avail >= x->cap / 2) n = avail; /* no event boundary in sight: pass it on */
    if (n == 0 && !x->done) return false;
    if (n == 0) { /* the upstream ended: a partial event goes as it is, unless it broke */
        bool failed = x->result != CURLE_OK || x->too_big;
        if (avail > 0 && !failed) util_buf_append(&x->out, p, avail);
        consumed_locked(r, x, avail);
        if (!failed && !x->fault_done && r->act.end != MOCK_END_NORMAL &&
            r->act.end != MOCK_END_NOTERM)
            stream_fault(r, x);
        if (failed && !x->fault_done) broken_stream(r, x);
        x->finished = true;
        x->cut = x->cut || failed;
        return true;
    }
    shape_event(r, x, p, n);
    consumed_locked(r, x, n);
    return true;
}

/* A stream with a fault or a delay: event by event. */
static ssize_t shaped_read(req *r, mock_xfer *x, char *buf, size_t max) {
    mock_proxy *p = r->s->proxy;
    size_t done = 0;
    for (;;) {
        if (x->out_off < x->out.len) {
            size_t n = x->out.len - x->out_off;
            n = n < max - done ? n : max - done;
            memcpy(buf + done, x->out.p + x->out_off, n);
            done += n;
            x->out_off += n;
            if (done == max) return (ssize_t)done;
            continue;
        }
        x->out.len = x->out_off = 0;
        if (x->finished && x->held.len == 0)
            return done > 0 ? (ssize_t)done
                            : body_end(r, x->cut && r->act.end == MOCK_END_CUT,
                                       x->cut && r->act.end != MOCK_END_CUT);
        if (x->held.len > 0 && x->hold_until_us > mock_now_us()) {
            if (done > 0) return (ssize_t)done;
            if (mock_client_left(r) || !mock_suspend_until(r, x->hold_until_us))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            return 0;
        }
        if (x->held.len > 0) {
            util_buf_append(&x->out, x->held.p, x->held.len);
            x->held.len = 0;
            continue;
        }
        pthread_mutex_lock(&p->lock);
        bool got = x->finished || next_event_locked(r, x);
        ssize_t rc = got || done > 0 ? (ssize_t)done : wait_data_locked(r, x);
        bool wake = x->unpause;
        pthread_mutex_unlock(&p->lock);
        if (wake) curl_multi_wakeup(p->multi);
        if (!got) return rc;
    }
}

static ssize_t proxy_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    req *r = cls;
    (void)pos;
    mock_note_resumed(r);
    if (mock_stopping(r->s)) return MHD_CONTENT_READER_END_WITH_ERROR;
    return r->px->shape ? shaped_read(r, r->px, buf, max) : plain_read(r, r->px, buf, max);
}

/* ---- the request's side ---- */

void mock_proxy_read(req *r) {
    if (r->body.len == 0) return;
    cJSON *root = cJSON_ParseWithLength(r->body.p, r->body.len);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (cJSON_IsString(model) && r->store.model[0] == '\0')
        mock_copy_str(r->store.model, sizeof r->store.model, model->valuestring);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "stream"))) r->rep.stream = true;
    cJSON_Delete(root);
}

void mock_proxy_stream_end(const req *r, int64_t *tokens, bool *broken) {
    const mock_xfer *x = r->px;
    *tokens = x->shape ? x->k : -1;
    bool short_end = x->fault_done && r->act.end != MOCK_END_NORMAL;
    *broken =
        *broken || short_end || x->cut || x->half || (x->shape && r->act.end == MOCK_END_NOTERM);
}

void mock_proxy_done(req *r) {
    mock_xfer *x = r->px;
    if (x == NULL) return;
    r->px = NULL;
    util_buf_free(&x->out);
    util_buf_free(&x->held);
    mock_proxy *p = x->p;
    pthread_mutex_lock(&p->lock);
    x->r = NULL;
    x->waiting = false;
    pthread_mutex_unlock(&p->lock);
    curl_multi_wakeup(p->multi);
}

/* ---- life ---- */

int mock_proxy_create(mock_server *s, mock_proxy **out, char *err, size_t errlen) {
    mock_config *c = &s->cfg;
    const char *u = c->upstream_url;
    if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) {
        snprintf(err, errlen, "upstream '%.200s' must be an http:// or https:// URL", u);
        return FB_EINVAL;
    }
    if (strpbrk(u, "?#") != NULL) {
        snprintf(err, errlen,
                 "upstream '%.200s' must be a scheme, host, port and path prefix only (no query "
                 "or fragment): the request's path and query go after it",
                 u);
        return FB_EINVAL;
    }
    mock_copy_str(s->upstream, sizeof s->upstream, u);
    size_t n = strlen(s->upstream);
    while (n > 0 && s->upstream[n - 1] == '/') s->upstream[--n] = '\0';
    if (c->upstream_connect_timeout_us == 0)
        c->upstream_connect_timeout_us = DEFAULT_CONNECT_TIMEOUT_US;
    if (c->upstream_idle_timeout_us == 0) c->upstream_idle_timeout_us = DEFAULT_IDLE_TIMEOUT_US;
    if (c->upstream_max == 0) c->upstream_max = DEFAULT_UPSTREAM_MAX;
    mock_proxy *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return FB_ENOMEM;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) { /* util/curl_dl.c loads it here */
        free(p);
        snprintf(err, errlen, "cannot initialise libcurl (libcurl.so.4, Debian's libcurl4)");
        return FB_EIO;
    }
    p->s = s;
    p->multi = curl_multi_init();
    pthread_mutex_init(&p->lock, NULL);
    if (p->multi != NULL && pthread_create(&p->thread, NULL, run, p) == 0) {
        mock_watch_keep_uri(s->watch);
        *out = p;
        return FB_OK;
    }
    if (p->multi != NULL) curl_multi_cleanup(p->multi);
    pthread_mutex_destroy(&p->lock);
    free(p);
    curl_global_cleanup();
    snprintf(err, errlen, "cannot start the upstream transfer thread");
    return FB_ENOMEM;
}

void mock_proxy_stop(mock_proxy *p) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->lock);
    bool was = p->stopping;
    p->stopping = true;
    pthread_mutex_unlock(&p->lock);
    curl_multi_wakeup(p->multi);
    if (!was) pthread_join(p->thread, NULL);
}

void mock_proxy_destroy(mock_proxy *p) {
    if (p == NULL) return;
    mock_proxy_stop(p);
    while (p->head != NULL) {
        mock_xfer *x = p->head;
        p->head = x->next;
        free_xfer(x);
    }
    curl_multi_cleanup(p->multi);
    pthread_mutex_destroy(&p->lock);
    free(p);
    curl_global_cleanup();
}
