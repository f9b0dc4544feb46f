/*
 * watch.h - deadlines for slow clients: a request's line and headers must arrive within the
 * header timeout (a slow-header client cannot hold a connection slot for long), and a
 * keep-alive connection's next request must start within the idle timeout. A connection
 * past its deadline is shut down; libmicrohttpd then closes it. A request line whose URI
 * (query included) is longer than uri_max, or whose query has more than args_max parameters,
 * is answered at once, on the raw socket, by the caller's on_long_uri (libmicrohttpd keeps the
 * line, the headers, a record per query parameter and the answer's headers in one 32 KiB pool:
 * a URI near its size, or about 500 parameters, leaves no room to read the headers or to build
 * an answer, and the connection would hang until its header timeout); the connection is cut a
 * second later. While 3/4 of conn_max connections are open, a connection still waiting for
 * its request's line and headers is cut a tenth of the header timeout after it began waiting
 * (slow-header connections reopened as fast as they are cut would otherwise hold the slots that
 * valid requests wait for in the listen backlog).
 *
 * libmicrohttpd calls mock_watch_notify (MHD_OPTION_NOTIFY_CONNECTION) and mock_watch_uri
 * (MHD_OPTION_URI_LOG_CALLBACK); the server calls the other two from its access handler.
 */
#ifndef MOCK_WATCH_H
#define MOCK_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "core/fb.h"

typedef struct mock_watch mock_watch;

/* Write the answer to an over-long URI on fd (the request line has just arrived): len bytes,
 * args query parameters. */
typedef void (*mock_watch_long_uri_fn)(void *user, int fd, const char *uri, size_t len,
                                       size_t args);

int mock_watch_create(fb_time_us header_timeout_us, fb_time_us idle_timeout_us, size_t uri_max,
                      size_t args_max, size_t conn_max, mock_watch_long_uri_fn on_long_uri,
                      void *user, mock_watch **out);
void mock_watch_destroy(mock_watch *w);
void mock_watch_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
void *mock_watch_uri(void *cls, const char *uri, struct MHD_Connection *c);
/* The request's headers are in: its deadline is met. False when its URI was answered already. */
bool mock_watch_headers_done(mock_watch *w, struct MHD_Connection *c);
/* The request is answered: the next one on this connection must start within the idle timeout. */
void mock_watch_request_done(mock_watch *w, struct MHD_Connection *c);
/* Keep each request's URI as sent (before any decoding), for the proxy. Call before serving. */
void mock_watch_keep_uri(mock_watch *w);
/* The current request's URI as sent (query included); NULL when not kept. */
const char *mock_watch_raw_uri(mock_watch *w, struct MHD_Connection *c);
/* Connections shut down for missing a deadline. */
uint64_t mock_watch_cut(mock_watch *w);

#endif /* MOCK_WATCH_H */
