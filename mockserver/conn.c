/*
 * conn.c - libmicrohttpd's callbacks: a context per request, the request body (within
 * max_body_bytes and the memory budget), suspension with a look at the client every
 * HANG_POLL_US (a client that leaves while its answer waits frees its connection), the stream
 * reader, and the end of a request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "mockserver/serverint.h"

bool mock_peer_closed(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci == NULL) return true;
    char byte;
    ssize_t n = recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

bool mock_suspend_until(req *r, fb_time_us due_us) {
    mock_server *s = r->s;
    fb_time_us wake = due_us, poll = mock_now_us() + HANG_POLL_US;
    r->early = wake > poll;
    if (r->early) wake = poll;
    pthread_mutex_lock(&s->lock);
    bool stop = s->stopping;
    if (!stop) s->stats.suspended++;
    pthread_mutex_unlock(&s->lock);
    if (stop) return false;
    r->suspended = true;
    if (mock_sched_suspend(s->sched, r->conn, wake)) return true;
    r->suspended = false;
    pthread_mutex_lock(&s->lock);
    s->stats.suspended--;
    pthread_mutex_unlock(&s->lock);
    return false;
}

void mock_note_resumed(req *r) {
    if (!r->suspended) return;
    r->suspended = false;
    pthread_mutex_lock(&r->s->lock);
    r->s->stats.suspended--;
    pthread_mutex_unlock(&r->s->lock);
}

bool mock_client_left(req *r) {
    if (!r->early || !mock_peer_closed(r->conn)) return false;
    pthread_mutex_lock(&r->s->lock);
    r->s->stats.left_early++;
    pthread_mutex_unlock(&r->s->lock);
    return true;
}

/* ---- the stream ---- */

static fb_time_us step_due(const req *r) {
    if (r->st.step == MOCK_STEP_PRE || r->st.step == MOCK_STEP_END) return r->t0_us;
    fb_time_us due = r->t0_us + r->ttft_us + r->st.k * r->per_token_us;
    if (r->stall_after >= 0 && r->st.k >= r->stall_after) due += r->stall_us;
    return due;
}

/* The end of the bytes: a clean end, or an abortive one for a cut. */
static ssize_t stream_end(req *r) {
    return r->st.cut ? mock_cut_end(r) : MHD_CONTENT_READER_END_OF_STREAM;
}

ssize_t mock_cut_end(req *r) {
    pthread_mutex_lock(&r->s->lock);
    r->s->stats.cut_streams++;
    pthread_mutex_unlock(&r->s->lock);
    return mock_abort_end(r);
}

ssize_t mock_abort_end(req *r) {
    /* The FIN now, after the bytes sent: MHD_USE_TURBO closes without a shutdown(). */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci != NULL) shutdown(ci->connect_fd, SHUT_WR);
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* The dialect's in-band error event (as the error-K fault writes it) at cursor at, to b. */
static void stream_error(const mock_stream *at, util_buf *b) {
    mock_stream f = *at;
    f.end = MOCK_END_ERROR;
    if (f.ops->fault != NULL) f.ops->fault(&f, b);
}

/* The step just written to r->out (from cursor before) within --max-response, leaving room
 * for the error event while more is to come; else the dialect's in-band error in its place
 * (when it fits) and an abortive end: a stream never sends more than the limit. */
static void cap_stream(req *r, const mock_stream *before) {
    size_t max = r->s->cfg.max_response_bytes;
    if (r->err_bytes == 0) {
        util_buf e = {0};
        stream_error(before, &e);
        r->err_bytes = e.len + 1;
        util_buf_free(&e);
    }
    size_t reserve = r->st.step == MOCK_STEP_END ? 0 : r->err_bytes - 1;
    if (r->emitted + r->out.len + reserve <= max) {
        r->emitted += r->out.len;
        return;
    }
    r->out.len = 0;
    if (r->emitted + r->err_bytes - 1 <= max) stream_error(before, &r->out);
    r->emitted += r->out.len;
    r->st.step = MOCK_STEP_END;
    r->st.end = MOCK_END_ERROR;
    r->st.cut = true;
}

ssize_t mock_body_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    req *r = cls;
    (void)pos;
    mock_note_resumed(r);
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
        if (r->st.step == MOCK_STEP_END) return done > 0 ? (ssize_t)done : stream_end(r);
        fb_time_us due = step_due(r);
        if (due > mock_now_us()) {
            if (done > 0) return (ssize_t)done;
            if (mock_client_left(r) || !mock_suspend_until(r, due))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            return 0;
        }
        r->early = false;
        mock_stream before = r->st;
        mock_stream_emit(&r->st, &r->out);
        if (r->out.err) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (r->rep.stream) cap_stream(r, &before);
    }
}

/* ---- the request ---- */

/* A new request: its context; an over-long URI or Content-Length is answered at once. */
static enum MHD_Result first_call(mock_server *s, struct MHD_Connection *conn, const char *url,
                                  const char *method, void **req_cls) {
    req *r = mock_req_new(s);
    if (r == NULL) return MHD_NO;
    r->s = s;
    r->conn = conn;
    r->arrival_us = mock_now_us();
    r->stall_after = -1;
    *req_cls = r;
    if (!mock_watch_headers_done(s->watch, conn)) return MHD_NO; /* its 431 went already */
    const char *cl = mock_header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl != NULL && mock_header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL) {
        /* RFC 9112 section 6.3: a request with both is a smuggling attempt (or a broken
         * client); refused before its body is read, and the connection closed after it */
        r->method = method;
        r->url = url;
        return mock_send_control_error(r, 400, NULL,
                                       "fusebox mock: a request with both Content-Length and "
                                       "Transfer-Encoding is refused (RFC 9112 section 6.3)");
    }
    if (cl != NULL && strtoull(cl, NULL, 10) > s->cfg.max_body_bytes) {
        /* Answer before reading the body; MHD then closes the connection. */
        r->too_large = true;
        return mock_dispatch(r, url, method);
    }
    return MHD_YES;
}

/* A piece of the body: kept while within the size limit and the memory budget. */
static void body_piece(req *r, const char *upload, size_t n) {
    r->body_bytes += n;
    if (r->too_large || r->over_memory) return;
    if (r->body_bytes > r->s->cfg.max_body_bytes) {
        r->too_large = true;
    } else if (!mock_memory_take(r->s, n)) {
        r->over_memory = true;
    } else {
        r->memory_held += n;
        if (r->body.size == 0) { /* room for the whole body at once, as Content-Length says */
            const char *cl = mock_header(r->conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
            size_t want = cl != NULL ? (size_t)strtoull(cl, NULL, 10) : 0;
            util_buf_reserve(&r->body, want > n && want <= r->s->cfg.max_body_bytes ? want : n);
        }
        util_buf_append(&r->body, upload, n);
        return;
    }
    mock_memory_give(r->s, r->memory_held);
    r->memory_held = 0;
    util_buf_free(&r->body);
}

/* Resumed in a wait: send the prepared answer when due, else look at the client again. */
static enum MHD_Result resume_wait(req *r) {
    if (mock_stopping(r->s) || mock_client_left(r)) return MHD_NO;
    if (mock_now_us() < r->due_us) return mock_suspend_until(r, r->due_us) ? MHD_YES : MHD_NO;
    struct MHD_Response *resp = r->pending;
    r->pending = NULL;
    return mock_queue(r, r->pending_status, resp);
}

static enum MHD_Result resume_hang(req *r) {
    fb_time_us now = mock_now_us();
    if (mock_stopping(r->s) || mock_peer_closed(r->conn) || now >= r->hang_until_us) return MHD_NO;
    return mock_suspend_until(r, r->hang_until_us) ? MHD_YES : MHD_NO;
}

/* Resumed in the capacity queue: answer once it holds a slot, else keep waiting. */
static enum MHD_Result resume_queue(req *r) {
    pthread_mutex_lock(&r->s->lock); /* the slot is given on another connection's thread */
    bool held = r->holds_slot;
    pthread_mutex_unlock(&r->s->lock);
    if (held) return mock_answer(r);
    r->early = true;
    if (mock_stopping(r->s) || mock_client_left(r) || mock_now_us() >= r->hang_until_us) {
        mock_unqueue(r);
        return MHD_NO;
    }
    return mock_suspend_until(r, r->hang_until_us) ? MHD_YES : MHD_NO;
}

enum MHD_Result mock_on_access(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **req_cls) {
    req *r = *req_cls;
    (void)version;
    if (r == NULL) return first_call(cls, conn, url, method, req_cls);
    mock_note_resumed(r);
    switch (r->phase) {
    case PH_BODY:
        if (*upload_size > 0) {
            body_piece(r, upload, *upload_size);
            *upload_size = 0;
            return MHD_YES;
        }
        if (r->body.err) return MHD_NO;
        return mock_dispatch(r, url, method);
    case PH_QUEUE:
        return resume_queue(r);
    case PH_WAIT:
        return resume_wait(r);
    case PH_HANG:
        return resume_hang(r);
    case PH_PROXY:
        return mock_proxy_resume(r);
    case PH_QUEUED:
        return MHD_YES;
    }
    return MHD_NO;
}

void mock_on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                       enum MHD_RequestTerminationCode toe) {
    mock_server *s = cls;
    req *r = *req_cls;
    if (r == NULL) return;
    *req_cls = NULL;
    mock_unqueue(r);
    mock_request_end(r, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
    /* A cut stream ended at the provider too; any other early end is the client's. */
    mock_release_slot(r, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !r->st.cut);
    mock_memory_give(s, r->memory_held);
    mock_watch_request_done(s->watch, conn);
    if (r->pending != NULL) MHD_destroy_response(r->pending);
    util_buf_free(&r->body);
    util_buf_free(&r->out);
    util_buf_free(&r->store.json);
    mock_req_free(s, r);
}
