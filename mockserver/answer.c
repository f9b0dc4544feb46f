/*
 * answer.c - carrying out the decided action: a reset, a hang, a provider error (after its
 * latency), a whole body (after the time to first token and every token) or a stream (a
 * content reader that suspends between events). Every 429 gets its dialect's Retry-After
 * unless the fault said otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "mockserver/serverint.h"
#include "util/json.h"

struct MHD_Response *mock_buf_response(util_buf *b) {
    size_t len;
    char *p = util_buf_take(b, &len);
    if (p == NULL) return NULL;
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, p, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) free(p);
    return resp;
}

/*
 * A body that is all there at once and ends in a cut (half a plain answer): corked, so that the
 * headers, the half body and the FIN (mock_cut_end's shutdown flushes the cork) leave in one
 * segment rather than three. The bytes and their order are the same; the client just wakes once.
 */
static void cork(const req *r) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int on = 1;
    if (ci != NULL) setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

enum MHD_Result mock_queue(req *r, unsigned status, struct MHD_Response *resp) {
    if (resp == NULL) return MHD_NO;
    if (r->cork) cork(r);
    enum MHD_Result rc = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    r->phase = PH_QUEUED;
    return rc;
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

/* What was decided before the answer went, written with its status (caller holds the lock). */
static void flush_pending_locked(req *r, mock_attempt *e) {
    if (r->pend_fault) r->s->stats.faults++;
    r->pend_fault = false;
    if (e != NULL && r->pend_latency) e->latency_us = r->pend_latency_us;
    if (e != NULL && r->pend_hints) {
        e->retry_after_us = r->pend_ra_us;
        e->should_retry = r->pend_should_retry;
    }
    r->pend_latency = r->pend_hints = false;
}

static mock_attempt *entry_locked(req *r) {
    return r->has_log ? mock_attempts_get(&r->s->log, r->log_seq) : NULL;
}

/* The answer's status, when it goes (due, or now), the fault and what was pending: one lock. */
static void note_sent_at(req *r, int status, const char *fault, fb_time_us due, fb_time_us now) {
    mock_server *s = r->s;
    fb_time_us at = due > now ? due : now;
    pthread_mutex_lock(&s->lock);
    count_status(s, status);
    mock_attempt *e = entry_locked(r);
    if (e != NULL) {
        e->status = status;
        e->sent_us = at > s->t0_us ? at - s->t0_us : 0;
        if (fault != NULL && fault[0] != '\0') mock_copy_text(e->fault, sizeof e->fault, fault);
    }
    flush_pending_locked(r, e);
    pthread_mutex_unlock(&s->lock);
}

void mock_note_sent(req *r, int status, const char *fault) {
    note_sent_at(r, status, fault, 0, mock_now_us());
}

/* An answer that waits until due goes then: the log's sent time moves with it. */
static void log_sent_at(req *r, fb_time_us due) {
    mock_server *s = r->s;
    pthread_mutex_lock(&s->lock);
    mock_attempt *e = entry_locked(r);
    if (e != NULL) e->sent_us = due > s->t0_us ? due - s->t0_us : 0;
    pthread_mutex_unlock(&s->lock);
}

/* What an error answer told the client about retrying, for the verdict: the least wait a
 * client can read from it (retry-after-ms first, as the SDKs read it; an HTTP-date has whole
 * seconds, so one less; Gemini's RetryInfo in whole seconds) and x-should-retry. Logged with
 * the status. */
static void log_retry_hints(req *r, const mock_action *a, int status) {
    fb_time_us ra = -1;
    if (a->retry_after_ms >= 0)
        ra = (fb_time_us)(a->retry_after_ms * 1e3);
    else if (a->ra_kind == MOCK_RA_SECONDS)
        ra = (fb_time_us)(a->retry_after_s * 1e6);
    else if (a->ra_kind == MOCK_RA_DATE)
        ra = (fb_time_us)((ceil(a->retry_after_s) - 1) * 1e6);
    else if (r->rep.dialect == MOCK_GEMINI && status == 429 && a->flavor != MOCK_FLAVOR_QUOTA)
        ra = (fb_time_us)(ceil(r->rep.retry_hint_s > 0 ? r->rep.retry_hint_s : 1.0) * 1e6);
    r->pend_hints = true;
    r->pend_ra_us = ra < 0 ? -1 : ra;
    r->pend_should_retry = a->should_retry;
}

void mock_request_end(req *r, bool completed) {
    mock_server *s = r->s;
    int64_t tokens = -1;
    bool broken = !completed;
    if (r->px != NULL) {
        mock_proxy_stream_end(r, &tokens, &broken);
    } else if (r->rep.stream && r->st.ops != NULL) {
        tokens = r->st.k;
        broken = broken || r->st.end != MOCK_END_NORMAL;
    } else {
        broken = broken || r->act.end == MOCK_END_CUT || r->act.end == MOCK_END_TRUNCATE ||
                 r->act.end == MOCK_END_MALFORMED;
    }
    mock_proxy_done(r);
    pthread_mutex_lock(&s->lock);
    /* The control plane, and a request refused before its log entry, have none. */
    mock_attempt *e = entry_locked(r);
    if (e != NULL && e->status >= 200 && e->status < 300) {
        e->tokens = e->stream ? tokens : -1;
        e->broken = broken;
    }
    flush_pending_locked(r, e); /* an answer that could not be built */
    if (r->attempt) s->stats.in_flight--;
    if (r->suspended) s->stats.suspended--;
    pthread_mutex_unlock(&s->lock);
}

enum MHD_Result mock_send_json(req *r, unsigned status, util_buf *b) {
    struct MHD_Response *resp = mock_buf_response(b);
    if (resp != NULL) MHD_add_response_header(resp, "content-type", "application/json");
    return mock_queue(r, status, resp);
}

enum MHD_Result mock_send_control_error(req *r, unsigned status, const char *path,
                                        const char *msg) {
    util_buf b = {0};
    char text[400];
    if (path != NULL && path[0] != '\0')
        snprintf(text, sizeof text, "%s: %s", path, msg);
    else
        snprintf(text, sizeof text, "%s", msg);
    util_json w;
    util_json_init(&w, util_buf_out(&b), 0);
    util_json_open(&w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_str(&w, "error", text);
    if (path != NULL) util_json_str(&w, "path", path);
    util_json_close(&w);
    return mock_send_json(r, status, &b);
}

/* A prepared answer now, or suspended until due; `now` read by the caller. */
static enum MHD_Result send_at(req *r, unsigned status, struct MHD_Response *resp, fb_time_us due,
                               fb_time_us now) {
    r->done_us = due;
    if (due <= now) return mock_queue(r, status, resp);
    r->pending = resp;
    r->pending_status = status;
    r->due_us = due;
    r->phase = PH_WAIT;
    return mock_suspend_until(r, due) ? MHD_YES : MHD_NO;
}

enum MHD_Result mock_send_at(req *r, unsigned status, struct MHD_Response *resp, fb_time_us due) {
    fb_time_us now = mock_now_us();
    if (due > now) log_sent_at(r, due);
    return send_at(r, status, resp, due, now);
}

/*
 * The dialect's Retry-After on a 429 that has none: the wait of the limit hit (1 s for a
 * scripted 429) in whole seconds, and exactly in retry-after-ms where Azure sends it. Gemini
 * carries the wait in its body (RetryInfo), not in a header.
 */
static void default_retry_after(req *r, mock_action *a) {
    mock_limit_hit *h = &r->rep.limit;
    if (h->kind == MOCK_LIMIT_NONE && a->flavor != MOCK_FLAVOR_QUOTA) {
        fb_time_us ra = a->retry_after_ms >= 0       ? (fb_time_us)(a->retry_after_ms * 1000)
                        : a->ra_kind != MOCK_RA_NONE ? (fb_time_us)(a->retry_after_s * 1e6)
                                                     : FB_US_PER_S;
        *h = (mock_limit_hit){MOCK_LIMIT_REQUESTS, 0, 0, 1, ra};
    }
    bool set = a->ra_kind != MOCK_RA_NONE || a->retry_after_ms >= 0;
    fb_time_us wait = h->wait_us > 0 ? h->wait_us : FB_US_PER_S;
    r->rep.retry_hint_s =
        set ? (a->retry_after_ms >= 0 ? a->retry_after_ms / 1000.0 : a->retry_after_s)
            : (double)wait / 1e6;
    if (set || a->no_retry_after || r->rep.dialect == MOCK_GEMINI || a->flavor == MOCK_FLAVOR_QUOTA)
        return;
    a->ra_kind = MOCK_RA_SECONDS;
    a->retry_after_s = ceil((double)wait / 1e6);
    if (r->rep.dialect == MOCK_AZURE) a->retry_after_ms = (double)wait / 1000.0;
}

enum MHD_Result mock_send_error(req *r, int status, mock_flavor flavor, const char *message,
                                const mock_action *a, fb_time_us due_us) {
    mock_action none;
    mock_action_init(&none);
    mock_action act = a != NULL ? *a : none;
    act.flavor = flavor;
    if (status == 429)
        default_retry_after(r, &act);
    else if (act.retry_after_ms >= 0 || act.ra_kind != MOCK_RA_NONE)
        r->rep.retry_hint_s =
            act.retry_after_ms >= 0 ? act.retry_after_ms / 1000.0 : act.retry_after_s;
    util_buf b = {0};
    mock_wire_error(&b, &r->rep, status, flavor, message);
    struct MHD_Response *resp = mock_buf_response(&b);
    if (resp == NULL) return MHD_NO;
    fb_time_us now = mock_now_us();
    /* openai-processing-ms: the planned time from the decision (as a success's, due - now in
     * answer_plain), not the time the request took to read: that moved with the machine's load
     * and told a proxy's copy of an answer apart from the upstream's. */
    fb_time_us from = r->t0_us != 0 ? r->t0_us : now;
    mock_add_common(r, resp, "application/json", 0, due_us > from ? due_us - from : 0);
    mock_add_plan(r, resp, due_us > now ? due_us : now);
    mock_add_fault_headers(resp, &act);
    log_retry_hints(r, &act, status);
    note_sent_at(r, status, act.label, due_us, now);
    return send_at(r, (unsigned)status, resp, due_us, now);
}

static enum MHD_Result start_hang(req *r) {
    mock_server *s = r->s;
    r->phase = PH_HANG;
    r->hang_until_us = mock_now_us() + s->cfg.hang_max_us;
    pthread_mutex_lock(&s->lock);
    s->stats.hangs++;
    pthread_mutex_unlock(&s->lock);
    return mock_suspend_until(r, r->hang_until_us) ? MHD_YES : MHD_NO;
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

static const char *content_type(const req *r) {
    return r->rep.stream ? "text/event-stream; charset=utf-8" : "application/json";
}

static enum MHD_Result answer_stream(req *r) {
    mock_stream_init(&r->st, &r->rep, r->ep->ops, r->act.end, r->act.end_after);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, mock_body_reader, r, NULL);
    if (resp == NULL) return MHD_NO;
    mock_add_common(r, resp, content_type(r), r->billed, 0);
    mock_add_plan(r, resp, r->done_us);
    MHD_add_response_header(resp, "cache-control", "no-cache");
    mock_add_fault_headers(resp, &r->act);
    mock_note_sent(r, 200, r->act.label);
    return mock_queue(r, MHD_HTTP_OK, resp);
}

/* Non-streamed: the whole body after ttft + T x per_token (+ a stall). */
static enum MHD_Result answer_plain(req *r, fb_time_us now, fb_time_us due) {
    struct MHD_Response *resp;
    const mock_action *a = &r->act;
    util_buf b = {.cap = r->s->cfg.max_response_bytes};
    /* A first block within malloc's small-size caches (the usual body fits in 512 bytes); a
     * larger one grows by doubling. */
    util_buf_reserve(&b, r->memory_held < 480 ? r->memory_held : 480);
    r->ep->ops->body(&b, &r->rep);
    if (a->end == MOCK_END_CUT || a->end == MOCK_END_TRUNCATE || a->end == MOCK_END_MALFORMED) {
        /* The body stops half way: abortively for cut, cleanly (chunked) otherwise. */
        if (b.err) return MHD_NO;
        r->out = b;
        r->out.len = b.len / 2;
        r->st.step = MOCK_STEP_END;
        r->st.cut = a->end == MOCK_END_CUT;
        r->cork = r->st.cut;
        r->t0_us = due;
        /* The block is only used without chunking (HTTP/1.0: one read per block); the half body
         * fits in one as before, without zeroing 16 KiB for every cut. */
        size_t block = r->out.len < 16 * 1024 ? r->out.len + 1 : 16 * 1024;
        resp =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block, mock_body_reader, r, NULL);
    } else {
        resp = mock_buf_response(&b);
    }
    if (resp == NULL) return MHD_NO;
    mock_add_common(r, resp, "application/json", r->billed, due - now);
    mock_add_plan(r, resp, due);
    mock_add_fault_headers(resp, a);
    note_sent_at(r, 200, a->label, due, now);
    return send_at(r, MHD_HTTP_OK, resp, due, now);
}

/* The answer's latency (timeline time) for the attempt log, written with its status. */
static void log_latency(req *r, fb_time_us tl_us) {
    r->pend_latency = true;
    r->pend_latency_us = tl_us;
}

/* An error comes back after an explicit ttft, else after the error latency. */
static fb_time_us error_due(req *r, fb_time_us now, fb_time_us ttft) {
    if (r->act.ttft_us >= 0) {
        log_latency(r, (fb_time_us)((double)r->act.ttft_us * r->act.slow) + r->act.delay_us);
        return now + ttft;
    }
    log_latency(r, r->error_tl_us);
    fb_time_us lat = mock_to_real(r->s, r->error_tl_us, 1.0);
    return lat > 0 ? now + lat : 0;
}

enum MHD_Result mock_answer(req *r) {
    mock_server *s = r->s;
    mock_action *a = &r->act;
    r->phase = PH_BODY;
    r->pend_fault = mock_action_is_fault(a); /* counted when the answer goes */
    if (a->reset || a->hang) {
        mock_note_sent(r, 0, a->label);
        return a->reset ? do_reset(r) : start_hang(r);
    }
    fb_time_us now = mock_now_us();
    /* a slow fault's delay comes after the factor, as in the simulator (scenario/fault.h) */
    fb_time_us ttft = mock_to_real(s, a->ttft_us >= 0 ? a->ttft_us : r->ttft_tl_us, a->slow) +
                      mock_to_real(s, a->delay_us, 1.0);
    r->t0_us = now;
    if (a->status != 0)
        return mock_send_error(r, a->status, a->flavor, NULL, a, error_due(r, now, ttft));
    log_latency(r, (fb_time_us)((double)(a->ttft_us >= 0 ? a->ttft_us : r->ttft_tl_us) * a->slow) +
                       a->delay_us);
    r->ttft_us = ttft;
    r->per_token_us = mock_to_real(s, s->cfg.per_token_us, a->slow);
    r->stall_after = a->stall_after;
    r->stall_us = mock_to_real(s, a->stall_us, 1.0);
    int64_t T = r->rep.refusal ? 0 : r->rep.tokens;
    bool stall = a->stall_after >= 0 && a->stall_after <= T;
    r->done_us = now + ttft + T * r->per_token_us + (stall ? r->stall_us : 0);
    bool can_stream = r->ep->ops->pre != NULL || s->proxy != NULL;
    if ((!r->rep.stream || !can_stream) && a->end == MOCK_END_ERROR) {
        /* An in-band error has no stream to travel in: the provider's overload error. */
        fb_time_us due = now + ttft + a->end_after * r->per_token_us;
        int status = r->rep.dialect == MOCK_ANTHROPIC ? 529
                     : r->rep.dialect == MOCK_GEMINI  ? 503
                                                      : 500;
        return mock_send_error(r, status, MOCK_FLAVOR_PLAIN, NULL, a, due);
    }
    if (s->proxy != NULL) {
        pthread_mutex_lock(&s->lock); /* the upstream answers later: the log gets it now */
        flush_pending_locked(r, entry_locked(r));
        pthread_mutex_unlock(&s->lock);
        return mock_proxy_start(r);
    }
    if (r->rep.stream && can_stream) return answer_stream(r);
    return answer_plain(r, now, r->done_us);
}
