/*
 * route.c - the endpoints: a path pattern and a method to an API and its dialect, or to the
 * control plane; unknown paths get 404, known paths with another method 405 (with Allow),
 * and the limits' answers (413, and 431 for an over-long URI) come out in the dialect the path
 * suggests.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "mockserver/serverint.h"

static const endpoint endpoints[] = {
    {"POST", "/v1/chat/completions", RT_API, &mock_api_chat, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/completions", RT_API, &mock_api_completions, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/responses", RT_API, &mock_api_responses, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/embeddings", RT_API, &mock_api_embeddings, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/messages", RT_API, &mock_api_messages, MOCK_ANTHROPIC, false, NULL},
    {"POST", "/v1/messages/count_tokens", RT_API, &mock_api_count_tokens, MOCK_ANTHROPIC, false,
     NULL},
    {"GET", "/v1/models", RT_API, &mock_api_models, MOCK_OPENAI, false, NULL},
    {"GET", "/v1/models/{id}", RT_API, &mock_api_model, MOCK_OPENAI, false, NULL},
    {"POST", "/openai/deployments/{d}/chat/completions", RT_API, &mock_api_chat, MOCK_AZURE, false,
     "ChatCompletions_Create"},
    {"POST", "/openai/deployments/{d}/completions", RT_API, &mock_api_completions, MOCK_AZURE,
     false, "Completions_Create"},
    {"POST", "/openai/deployments/{d}/embeddings", RT_API, &mock_api_embeddings, MOCK_AZURE, false,
     "Embeddings_Create"},
    {"POST", "/openai/responses", RT_API, &mock_api_responses, MOCK_AZURE, false,
     "Responses_Create"},
    {"POST", "/v1beta/models/{m}:generateContent", RT_API, &mock_api_gemini, MOCK_GEMINI, false,
     NULL},
    {"POST", "/v1beta/models/{m}:streamGenerateContent", RT_API, &mock_api_gemini, MOCK_GEMINI,
     true, NULL},
    {"POST", "/v1beta/models/{m}:countTokens", RT_API, &mock_api_gemini_count, MOCK_GEMINI, false,
     NULL},
    {"GET", "/v1beta/models", RT_API, &mock_api_models, MOCK_GEMINI, false, NULL},
    {"GET", "/v1beta/models/{m}", RT_API, &mock_api_model, MOCK_GEMINI, false, NULL},
    {"POST", "/__fusebox/faults", RT_C_FAULTS, NULL, MOCK_OPENAI, false, NULL},
    {"POST", "/__fusebox/reset", RT_C_RESET, NULL, MOCK_OPENAI, false, NULL},
    {"GET", "/__fusebox/log", RT_C_LOG, NULL, MOCK_OPENAI, false, NULL},
    {"GET", "/__fusebox/stats", RT_C_STATS, NULL, MOCK_OPENAI, false, NULL},
    {"GET", "/__fusebox/verdict", RT_C_VERDICT, NULL, MOCK_OPENAI, false, NULL},
};

/* Proxy mode: a path no endpoint has (or another method) is forwarded in its path's dialect. */
static const endpoint passthrough[] = {
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_OPENAI, false, NULL},
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_ANTHROPIC, false, NULL},
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_AZURE, false, NULL},
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_GEMINI, false, NULL},
};

/*
 * Does url match pattern? A "{x}" matches a non-empty run of characters up to the pattern's
 * next character (or the end, without '/'); it is copied into arg.
 */
static bool match(const char *pattern, const char *url, char *arg, size_t argcap) {
    while (*pattern != '\0') {
        if (*pattern != '{') {
            if (*pattern++ != *url++) return false;
            continue;
        }
        pattern = strchr(pattern, '}');
        if (pattern == NULL) return false;
        char stop = *++pattern;
        size_t n = 0;
        while (url[n] != '\0' && url[n] != stop && url[n] != '/') n++;
        if (n == 0 || (stop != '\0' && url[n] != stop)) return false;
        mock_copy_str(arg, argcap, url);
        if (n < argcap) arg[n] = '\0';
        url += n;
    }
    return *url == '\0';
}

/* The dialect of an error outside any endpoint, chosen by the path (and anthropic-version). */
static mock_dialect dialect_of(struct MHD_Connection *c, const char *url) {
    if (strncmp(url, "/openai/", 8) == 0) return MOCK_AZURE;
    if (strncmp(url, "/v1beta/", 8) == 0) return MOCK_GEMINI;
    if (strncmp(url, "/v1/messages", 12) == 0 || (c != NULL && mock_header(c, "anthropic-version")))
        return MOCK_ANTHROPIC;
    return MOCK_OPENAI;
}

void mock_long_uri(void *user, int fd, const char *uri, size_t len) {
    mock_server *s = user;
    char msg[200];
    snprintf(msg, sizeof msg,
             "Request header fields too large: the URL is %zu bytes (the mock "
             "takes %d)",
             len, URL_MAX);
    mock_reply rep = {.dialect = dialect_of(NULL, uri), .model = "", .request_id = ""};
    mock_buf body = {0}, b = {0};
    mock_wire_error(&body, &rep, 431, MOCK_FLAVOR_ROUTING, msg);
    mock_buf_printf(&b,
                    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json"
                    "\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                    body.len);
    mock_buf_append(&b, body.p, body.len);
    if (!b.oom) send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    mock_buf_free(&body);
    mock_buf_free(&b);
    pthread_mutex_lock(&s->lock);
    s->stats.requests++;
    s->stats.status_4xx++;
    pthread_mutex_unlock(&s->lock);
}

enum MHD_Result mock_routing_error(req *r, const char *url, const char *method, int status,
                                   const char *allow) {
    mock_dialect d = dialect_of(r->conn, url);
    mock_new_ids(r, d, NULL);
    char msg[300];
    const char *m = NULL;
    if (status == 404 && d != MOCK_AZURE && d != MOCK_GEMINI) {
        snprintf(msg, sizeof msg, "Invalid URL (%.16s %.200s)", method, url);
        m = msg;
    } else if (status == 405) {
        snprintf(msg, sizeof msg, "Method %.16s not allowed for %.200s", method, url);
        m = msg;
    }
    r->rep = (mock_reply){.dialect = d, .model = "", .request_id = r->request_id};
    mock_buf b = {0};
    mock_wire_error(&b, &r->rep, status, MOCK_FLAVOR_ROUTING, m);
    struct MHD_Response *resp = mock_buf_response(&b);
    if (resp == NULL) return MHD_NO;
    mock_add_common(r, resp, "application/json", 0, 0);
    if (allow != NULL) MHD_add_response_header(resp, "allow", allow);
    mock_note_sent(r, status, NULL);
    return mock_queue(r, (unsigned)status, resp);
}

/* The endpoint for url and method; *path_match the one whose path matched (for 405). */
static const endpoint *find(const char *url, const char *method, char *arg, size_t argcap,
                            const endpoint **path_match) {
    *path_match = NULL;
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++) {
        char a[256] = "";
        if (!match(endpoints[i].pattern, url, a, sizeof a)) continue;
        if (*path_match == NULL) *path_match = &endpoints[i];
        if (strcmp(method, endpoints[i].method) != 0) continue;
        mock_copy_str(arg, argcap, a);
        return &endpoints[i];
    }
    return NULL;
}

enum MHD_Result mock_dispatch(req *r, const char *url, const char *method) {
    mock_server *s = r->s;
    bool control = strncmp(url, "/__fusebox/", 11) == 0;
    r->method = method;
    r->url = url;
    const endpoint *path_match = NULL;
    const endpoint *ep =
        r->too_large ? NULL : find(url, method, r->store.model, sizeof r->store.model, &path_match);
    if (ep == NULL && !r->too_large && !control && s->proxy != NULL)
        ep = &passthrough[dialect_of(r->conn, url)];
    if (ep != NULL) {
        r->ep = ep; /* an endpoint's request is counted with its log entry (attempt.c) */
        return ep->id == RT_API ? mock_handle_api(r, method, url) : mock_handle_control(r, ep->id);
    }
    if (!control) {
        pthread_mutex_lock(&s->lock);
        s->stats.requests++;
        pthread_mutex_unlock(&s->lock);
    }
    if (r->too_large) return mock_routing_error(r, url, method, 413, NULL);
    if (path_match != NULL) {
        if (control) return mock_send_control_error(r, 405, NULL, "method not allowed");
        return mock_routing_error(r, url, method, 405, path_match->method);
    }
    if (control) return mock_send_control_error(r, 404, NULL, "unknown control endpoint");
    return mock_routing_error(r, url, method, 404, NULL);
}
