/*
 * dispatch.c - a request to what route.c decided for it: its endpoint's handler (an API's
 * attempt, or the control plane), or the routing error written in its dialect; and the 431 of
 * an over-long URI, written on the raw socket before libmicrohttpd sees the request.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "mockserver/serverint.h"

void mock_long_uri(void *user, int fd, const char *uri, size_t len, size_t args) {
    mock_server *s = user;
    char msg[200];
    bool long_uri = len > URL_MAX;
    if (long_uri)
        snprintf(msg, sizeof msg,
                 "Request header fields too large: the URL is %zu bytes (the mock "
                 "takes %d)",
                 len, URL_MAX);
    else
        snprintf(msg, sizeof msg,
                 "URI too long: the URL has %zu query parameters (the mock takes %d)", args,
                 URL_ARGS_MAX);
    mock_reply rep = {.dialect = mock_route_dialect(uri, NULL), .model = "", .request_id = ""};
    util_buf body = {0}, b = {0};
    mock_wire_error(&body, &rep, long_uri ? 431 : 414, MOCK_FLAVOR_ROUTING, msg);
    util_buf_printf(&b,
                    "HTTP/1.1 %s\r\nContent-Type: application/json"
                    "\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                    long_uri ? "431 Request Header Fields Too Large" : "414 URI Too Long",
                    body.len);
    util_buf_append(&b, body.p, body.len);
    if (!b.err) send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    util_buf_free(&body);
    util_buf_free(&b);
    pthread_mutex_lock(&s->lock);
    s->stats.requests++;
    s->stats.status_4xx++;
    pthread_mutex_unlock(&s->lock);
}

/* A 404, 405 or 413 in the dialect the path suggests (route.c's decision). */
static enum MHD_Result routing_error(req *r, const mock_route *rt) {
    mock_new_ids(r, rt->dialect, NULL);
    r->rep = (mock_reply){.dialect = rt->dialect, .model = "", .request_id = r->request_id};
    util_buf b = {0};
    mock_wire_error(&b, &r->rep, rt->status, MOCK_FLAVOR_ROUTING,
                    rt->msg[0] != '\0' ? rt->msg : NULL);
    struct MHD_Response *resp = mock_buf_response(&b);
    if (resp == NULL) return MHD_NO;
    mock_add_common(r, resp, "application/json", 0, 0);
    if (rt->allow != NULL) MHD_add_response_header(resp, "allow", rt->allow);
    mock_note_sent(r, rt->status, NULL);
    return mock_queue(r, (unsigned)rt->status, resp);
}

enum MHD_Result mock_dispatch(req *r, const char *url, const char *method) {
    mock_server *s = r->s;
    r->method = method;
    r->url = url;
    mock_route_in in = {.method = method,
                        .path = url,
                        .anthropic_version = mock_header(r->conn, "anthropic-version"),
                        .too_large = r->too_large,
                        .proxy = s->proxy != NULL};
    mock_route rt;
    mock_route_decide(&in, &rt);
    if (rt.ep != NULL) {
        r->ep = rt.ep; /* an endpoint's request is counted with its log entry (attempt.c) */
        mock_copy_str(r->store.model, sizeof r->store.model, rt.arg);
        return rt.ep->id == RT_API ? mock_handle_api(r, method, url)
                                   : mock_handle_control(r, rt.ep->id);
    }
    if (!rt.control) {
        pthread_mutex_lock(&s->lock);
        s->stats.requests++;
        pthread_mutex_unlock(&s->lock);
    }
    if (rt.control && rt.status != 413)
        return mock_send_control_error(r, (unsigned)rt.status, NULL, rt.msg);
    return routing_error(r, &rt);
}
