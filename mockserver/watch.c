/*
 * watch.c - see watch.h. One node per connection (its socket context) in a list; a thread
 * sleeps until the earliest deadline and shuts down the connections past it. libmicrohttpd
 * removes a node (MHD_CONNECTION_NOTIFY_CLOSED) before it closes the socket, and the removal
 * and the shutdown take the same lock, so a descriptor is never shut down after its reuse.
 */
#include "mockserver/watch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "mockserver/sched.h"

typedef struct node {
    struct node *prev, *next;
    int fd;
    fb_time_us deadline_us; /* 0: none (a request is being answered) */
    fb_time_us armed_us;    /* when the deadline was set */
    bool idle;              /* between requests: the next request line resets the deadline */
    bool answered;          /* its over-long URI was answered on the socket */
    char *uri;              /* the request's URI as sent (keep_uri only) */
} node;

struct mock_watch {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    node *head;
    fb_time_us header_us, idle_us;
    size_t uri_max, args_max;
    size_t conns, busy_at; /* connections open; from busy_at on, the busy header timeout */
    mock_watch_long_uri_fn on_long_uri;
    void *user;
    uint64_t cut;
    bool keep_uri;
    fb_time_us wake_us; /* when the thread wakes next; 0: it waits for a signal */
    bool stopping;
};

/* A node's deadline now: while the server is busy, one waiting for its request's line and
 * headers (not idle between requests, not answered already) gets a tenth of the timeout. */
static fb_time_us deadline_of(const mock_watch *w, const node *n) {
    if (w->conns < w->busy_at || n->idle || n->answered) return n->deadline_us;
    fb_time_us busy = n->armed_us + w->header_us / 10;
    return busy < n->deadline_us ? busy : n->deadline_us;
}

static void cut_expired(mock_watch *w, fb_time_us now, fb_time_us *next) {
    *next = 0;
    for (node *n = w->head; n != NULL; n = n->next) {
        if (n->deadline_us == 0 || n->fd < 0) continue;
        fb_time_us deadline = deadline_of(w, n);
        if (deadline <= now) {
            shutdown(n->fd, SHUT_RDWR);
            n->deadline_us = 0;
            if (!n->answered) w->cut++;
        } else if (*next == 0 || deadline < *next) {
            *next = deadline;
        }
    }
}

static void *run(void *arg) {
    mock_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        fb_time_us next;
        cut_expired(w, mock_now_us(), &next);
        w->wake_us = next;
        if (next == 0) {
            pthread_cond_wait(&w->wake, &w->lock);
        } else {
            struct timespec ts = {.tv_sec = (time_t)(next / FB_US_PER_S),
                                  .tv_nsec = (long)(next % FB_US_PER_S) * 1000};
            pthread_cond_timedwait(&w->wake, &w->lock, &ts);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int mock_watch_create(fb_time_us header_timeout_us, fb_time_us idle_timeout_us, size_t uri_max,
                      size_t args_max, size_t conn_max, mock_watch_long_uri_fn on_long_uri,
                      void *user, mock_watch **out) {
    mock_watch *w = calloc(1, sizeof *w);
    if (w == NULL) return FB_ENOMEM;
    w->header_us = header_timeout_us;
    w->idle_us = idle_timeout_us;
    w->uri_max = uri_max;
    w->args_max = args_max;
    w->busy_at = conn_max - conn_max / 4;
    if (w->busy_at == 0) w->busy_at = 1;
    w->on_long_uri = on_long_uri;
    w->user = user;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&w->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->lock, NULL);
    if (rc != 0 || pthread_create(&w->thread, NULL, run, w) != 0) {
        if (rc == 0) pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return FB_ENOMEM;
    }
    *out = w;
    return FB_OK;
}

void mock_watch_destroy(mock_watch *w) {
    if (w == NULL) return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    while (w->head != NULL) { /* connections the daemon never reported closed */
        node *n = w->head;
        w->head = n->next;
        free(n->uri);
        free(n);
    }
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/*
 * Arm a node's deadline (the caller holds the lock). The thread is woken only for a deadline
 * before the one it sleeps until: with one timeout, new deadlines come later, so a busy server
 * never wakes it.
 */
static void arm(mock_watch *w, node *n, fb_time_us in_us) {
    n->armed_us = mock_now_us();
    n->deadline_us = n->armed_us + in_us;
    if (w->wake_us == 0 || n->deadline_us < w->wake_us) {
        w->wake_us = n->deadline_us;
        pthread_cond_signal(&w->wake);
    }
}

static void started(mock_watch *w, struct MHD_Connection *c, void **ctx) {
    node *n = calloc(1, sizeof *n);
    if (n == NULL) return; /* unwatched: it still has the idle timeout */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    n->fd = ci != NULL ? ci->connect_fd : -1;
    pthread_mutex_lock(&w->lock);
    n->next = w->head;
    if (w->head != NULL) w->head->prev = n;
    w->head = n;
    arm(w, n, w->header_us);
    if (++w->conns == w->busy_at) pthread_cond_signal(&w->wake); /* deadlines come sooner */
    pthread_mutex_unlock(&w->lock);
    *ctx = n;
}

void mock_watch_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code) {
    mock_watch *w = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        started(w, c, socket_context);
        return;
    }
    node *n = *socket_context;
    if (n == NULL) return;
    pthread_mutex_lock(&w->lock);
    if (n->prev != NULL)
        n->prev->next = n->next;
    else
        w->head = n->next;
    if (n->next != NULL) n->next->prev = n->prev;
    w->conns--;
    pthread_mutex_unlock(&w->lock);
    free(n->uri);
    free(n);
    *socket_context = NULL;
}

static node *node_of(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

void *mock_watch_uri(void *cls, const char *uri, struct MHD_Connection *c) {
    mock_watch *w = cls;
    node *n = node_of(c);
    if (n == NULL) return NULL;
    size_t len = strlen(uri), args = 0;
    const char *q = strchr(uri, '?');
    for (const char *p = q; p != NULL; p = strchr(p + 1, '&')) args++;
    bool too_long = (len > w->uri_max || args > w->args_max) && n->fd >= 0;
    /* Called on the connection's own thread, before any answer to this request. */
    if (too_long) w->on_long_uri(w->user, n->fd, uri, len, args);
    if (w->keep_uri && !too_long) { /* read on this connection's thread only */
        free(n->uri);
        n->uri = strdup(uri);
    }
    pthread_mutex_lock(&w->lock);
    n->answered = too_long;
    /* After an idle wait the headers get a fresh header timeout; the first request keeps the
     * deadline its connection started with. An answered one is cut a second later. */
    if (too_long)
        arm(w, n, FB_US_PER_S);
    else if (n->idle)
        arm(w, n, w->header_us);
    n->idle = false;
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

bool mock_watch_headers_done(mock_watch *w, struct MHD_Connection *c) {
    node *n = node_of(c);
    if (n == NULL) return true;
    pthread_mutex_lock(&w->lock);
    bool fresh = !n->answered;
    if (fresh) n->deadline_us = 0;
    pthread_mutex_unlock(&w->lock);
    return fresh;
}

void mock_watch_request_done(mock_watch *w, struct MHD_Connection *c) {
    node *n = node_of(c);
    if (n == NULL) return;
    pthread_mutex_lock(&w->lock);
    arm(w, n, w->idle_us);
    n->idle = true;
    pthread_mutex_unlock(&w->lock);
}

void mock_watch_keep_uri(mock_watch *w) {
    w->keep_uri = true;
}

const char *mock_watch_raw_uri(mock_watch *w, struct MHD_Connection *c) {
    (void)w;
    node *n = node_of(c);
    return n != NULL ? n->uri : NULL;
}

uint64_t mock_watch_cut(mock_watch *w) {
    pthread_mutex_lock(&w->lock);
    uint64_t n = w->cut;
    pthread_mutex_unlock(&w->lock);
    return n;
}
