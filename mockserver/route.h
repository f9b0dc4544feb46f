/*
 * route.h - which endpoint a request is for, decided from its method, path, query and a few of
 * its headers alone: an API in its dialect, a control endpoint, or a routing error (404, 405
 * with Allow, 413) with its dialect and message; and the refusals an API's credentials and
 * query get before its body is read. Pure: no connection, no clock, no allocation. The server
 * answers what it says (dispatch.c, attempt.c); the unit tests and the mock's fuzz target call
 * it directly.
 */
#ifndef MOCK_ROUTE_H
#define MOCK_ROUTE_H

#include <stdbool.h>

#include "mockserver/api.h"

typedef enum route {
    RT_NONE = 0,
    RT_API, /* a provider endpoint: ops and dialect below */
    RT_C_FAULTS,
    RT_C_RESET,
    RT_C_LOG,
    RT_C_STATS,
    RT_C_VERDICT
} route;

/* One endpoint: a path pattern ({x} matches one segment, stored as the path argument). */
typedef struct endpoint {
    const char *method;
    const char *pattern;
    route id;
    const mock_api_ops *ops;
    mock_dialect dialect;
    bool stream;           /* the path streams (Gemini's streamGenerateContent) */
    const char *operation; /* Azure's operation name, for its 429 message */
} endpoint;

/* Proxy mode: a path the mock does not know, forwarded (proxy.c). */
extern const mock_api_ops mock_api_passthrough;

#define MOCK_ROUTE_ARG_MAX 256 /* the path argument's bytes, with its NUL (mock_store's model) */

typedef struct mock_route_in {
    const char *method;
    const char *path;              /* without the query, unescaped (libmicrohttpd's url) */
    const char *anthropic_version; /* the header, or NULL */
    bool too_large;                /* the body is over max_body_bytes */
    bool proxy;                    /* proxy mode: a path no endpoint has is forwarded */
} mock_route_in;

typedef struct mock_route {
    const endpoint *ep;   /* the endpoint (proxy mode: maybe the passthrough); NULL: an error */
    int status;           /* with no endpoint: 404, 405 or 413 */
    bool control;         /* the path is under /__fusebox/ (not counted in the stats' requests;
                             its 404 and 405 are the control plane's) */
    const char *allow;    /* a 405's Allow: the method the path takes */
    mock_dialect dialect; /* an error's dialect, by the path (and anthropic-version) */
    char arg[MOCK_ROUTE_ARG_MAX]; /* the path's {argument} (a model, a deployment); "" if none */
    char msg[300];                /* an error's message; "" for the dialect's own */
} mock_route;

void mock_route_decide(const mock_route_in *in, mock_route *out);

/* The dialect of an answer outside any endpoint, chosen by the path (and anthropic-version). */
mock_dialect mock_route_dialect(const char *path, const char *anthropic_version);

/* What an API's refusal before its body looks at: query parameters and headers present. */
typedef struct mock_route_creds {
    const char *api_version, *key, *alt;         /* query parameters; NULL when absent */
    bool api_key, authorization, x_goog_api_key; /* headers present */
} mock_route_creds;

/*
 * Azure wants its api-version (404) and a key (401); Gemini a key (403) and streams with
 * alt=sse only (400). 0 when the request is taken.
 */
int mock_route_refusal(mock_dialect d, bool stream, const mock_route_creds *c);

#endif /* MOCK_ROUTE_H */
