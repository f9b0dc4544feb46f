/* mockhttp.c - see mockhttp.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mockserver/sched.h"
#include "tests/unit/mockhttp.h"

/* ---- client helpers ------------------------------------------------------------------------ */

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
    resp *r = ud;
    util_buf_append(&r->body, p, size * n);
    if (r->nwrites < MAX_WRITES) {
        r->write_end[r->nwrites] = r->body.len;
        r->write_us[r->nwrites++] = mock_now_us();
    }
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud) {
    resp *r = ud;
    if (r->hdrs.len == 0) r->headers_us = mock_now_us();
    util_buf_append(&r->hdrs, p, size * n);
    return size * n;
}

void th_resp_free(resp *r) {
    util_buf_free(&r->hdrs);
    util_buf_free(&r->body);
}

CURL *th_make_easy(resp *r, const char *url, const char *method, const char *body,
                   struct curl_slist *hl, long timeout_ms) {
    CURL *c = curl_easy_init();
    assert_non_null(c);
    memset(r, 0, sizeof *r);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body != NULL) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    if (hl != NULL) curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    r->start_us = mock_now_us();
    return c;
}

/* One request. Extra headers are "Name: value" strings, NULL-terminated. */
void th_req_full(resp *r, const char *base, const char *method, const char *path, const char *body,
                 long timeout_ms, const char *const *headers) {
    size_t len = strlen(base) + strlen(path) + 1;
    char *url = malloc(len);
    assert_non_null(url);
    snprintf(url, len, "%s%s", base, path);
    struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
    hl = curl_slist_append(hl, "Expect:");
    for (size_t i = 0; headers != NULL && headers[i] != NULL; i++)
        hl = curl_slist_append(hl, headers[i]);
    CURL *c = th_make_easy(r, url, method, body, hl, timeout_ms);
    r->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    curl_slist_free_all(hl);
    free(url);
}

void th_post(resp *r, const char *base, const char *path, const char *body,
             const char *const *headers) {
    th_req_full(r, base, "POST", path, body, TIMEOUT_MS, headers);
}

/* Header value (case-insensitive name) copied into out; false when absent. */
bool th_hdr(const resp *r, const char *name, char *out, size_t cap) {
    size_t nl = strlen(name);
    const char *p = r->hdrs.p;
    while (p != NULL && *p != '\0') {
        const char *eol = strstr(p, "\r\n");
        if (eol == NULL) break;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ') v++;
            size_t len = (size_t)(eol - v);
            if (len >= cap) len = cap - 1;
            memcpy(out, v, len);
            out[len] = '\0';
            return true;
        }
        p = eol + 2;
    }
    return false;
}

void th_assert_hdr(const resp *r, const char *name, const char *want) {
    char v[256];
    if (!th_hdr(r, name, v, sizeof v)) fail_msg("missing header %s", name);
    assert_string_equal(v, want);
}

bool th_has_hdr(const resp *r, const char *name) {
    char v[256];
    return th_hdr(r, name, v, sizeof v);
}

cJSON *th_json_body(const resp *r) {
    cJSON *j = cJSON_ParseWithLength(r->body.p ? r->body.p : "", r->body.len);
    if (j == NULL) fail_msg("body is not JSON: %.300s", r->body.p ? r->body.p : "");
    return j;
}

const char *th_jstr(const cJSON *j, const char *a, const char *b) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, a);
    if (b != NULL) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

double th_jnum(const cJSON *j, const char *a, const char *b) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, a);
    if (b != NULL) x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (!cJSON_IsNumber(x)) fail_msg("no number at %s.%s", a, b ? b : "");
    return x->valuedouble;
}

/* ---- SSE ------------------------------------------------------------------------------------ */

void th_sse_parse(sse *s, const resp *r) {
    memset(s, 0, sizeof *s);
    s->copy = malloc(r->body.len + 1);
    assert_non_null(s->copy);
    memcpy(s->copy, r->body.p ? r->body.p : "", r->body.len);
    s->copy[r->body.len] = '\0';
    char *p = s->copy;
    for (;;) {
        char *end = strstr(p, "\n\n"), *crlf = strstr(p, "\r\n\r\n");
        size_t gap = 2;
        if (crlf != NULL && (end == NULL || crlf < end)) {
            end = crlf;
            gap = 4;
        }
        if (end == NULL) break;
        *end = '\0';
        assert_true(s->n < 256);
        sse_event *e = &s->ev[s->n++];
        e->end = (size_t)(end + gap - s->copy);
        for (char *line = p; line != NULL && *line != '\0';) {
            char *nl = strchr(line, '\n');
            if (nl != NULL) *nl = '\0';
            size_t len = strlen(line);
            if (len > 0 && line[len - 1] == '\r') line[len - 1] = '\0';
            if (strncmp(line, "event: ", 7) == 0) snprintf(e->name, sizeof e->name, "%s", line + 7);
            if (strncmp(line, "data: ", 6) == 0) e->data = line + 6;
            line = nl != NULL ? nl + 1 : NULL;
        }
        p = end + gap;
    }
    s->tail = *p != '\0';
}

void th_sse_free(sse *s) {
    free(s->copy);
}

/* When did the byte at body offset `off` arrive? */
fb_time_us th_arrival_of(const resp *r, size_t off) {
    for (int i = 0; i < r->nwrites; i++)
        if (r->write_end[i] > off) return r->write_us[i];
    return 0;
}

/* ---- fixtures ------------------------------------------------------------------------------ */

void th_quiet(void *user, mock_log_level level, const char *msg) {
    (void)user;
    (void)level;
    (void)msg;
}

fixture *th_start(const mock_config *in) {
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    mock_config cfg;
    if (in != NULL)
        cfg = *in;
    else
        memset(&cfg, 0, sizeof cfg);
    cfg.seed = cfg.seed ? cfg.seed : 7;
    if (cfg.log == NULL) cfg.log = th_quiet;
    char err[200];
    int rc = mock_server_create(&cfg, &f->srv, err, sizeof err);
    if (rc != FB_OK) fail_msg("mock_server_create: %s", err);
    snprintf(f->base, sizeof f->base, "http://127.0.0.1:%u", (unsigned)mock_server_port(f->srv));
    return f;
}

void th_stop(fixture *f) {
    mock_server_destroy(f->srv);
    free(f);
}

int th_setup(void **state) {
    *state = th_start(NULL);
    return 0;
}

int th_teardown(void **state) {
    th_stop(*state);
    return 0;
}

int th_connect_raw(const fixture *f) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(mock_server_port(f->srv))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Read until EOF or timeout; returns bytes read, -1 on timeout with nothing, -2 on error. */
ssize_t th_read_some(int fd, char *buf, size_t cap, int timeout_ms) {
    size_t got = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0) return got > 0 ? (ssize_t)got : -1;
        ssize_t n = recv(fd, buf + got, cap - got - 1, 0);
        if (n < 0) return got > 0 ? (ssize_t)got : -2;
        if (n == 0) break;
        got += (size_t)n;
        if (got + 1 >= cap) break;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

bool th_wait_for(const fixture *f, bool (*cond)(const mock_stats *st, void *arg), void *arg,
                 int timeout_ms) {
    for (int waited = 0;; waited += 10) {
        mock_stats st;
        mock_server_stats(f->srv, &st);
        if (cond(&st, arg)) return true;
        if (waited >= timeout_ms) return false;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
