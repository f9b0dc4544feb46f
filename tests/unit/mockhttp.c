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

/* ---- real-time bounds ---------------------------------------------------------------------- */

/* The total of /proc/pressure/cpu's "some" line (microseconds some task waited for a CPU);
 * -1 when the kernel has no PSI. */
static long long psi_cpu_some_us(void) {
    FILE *fp = fopen("/proc/pressure/cpu", "r");
    if (fp == NULL) return -1;
    char line[256];
    long long total = -1;
    while (fgets(line, sizeof line, fp) != NULL) {
        const char *t = strstr(line, "total=");
        if (strncmp(line, "some ", 5) == 0 && t != NULL) total = strtoll(t + 6, NULL, 10);
    }
    fclose(fp);
    return total;
}

void th_clock_start(th_clock *c) {
    c->t0 = mock_now_us();
    c->psi_us = psi_cpu_some_us();
}

/* The least of 5 looks, 20 ms apart, at /proc/stat's procs_running (the tasks runnable now,
 * the one reading it included); -1 when it cannot be read. */
static long runnable_now(void) {
    long least = -1;
    for (int i = 0; i < 5; i++) {
        if (i > 0) usleep(20 * 1000);
        FILE *fp = fopen("/proc/stat", "r");
        if (fp == NULL) return -1;
        char line[256];
        long n = -1;
        while (fgets(line, sizeof line, fp) != NULL)
            if (strncmp(line, "procs_running ", 14) == 0) n = strtol(line + 14, NULL, 10);
        fclose(fp);
        if (n < 0) return -1;
        if (least < 0 || n < least) least = n;
    }
    return least;
}

/* Why the machine counts as busy since c's start ("" when it does not): some task waited for a
 * CPU TH_BUSY_SHARE of the time since (PSI), or other tasks fill every CPU now. */
static void busy_since(const th_clock *c, char *why, size_t cap) {
    fb_time_us took = mock_now_us() - c->t0;
    if (took < 1) took = 1;
    why[0] = '\0';
    long long psi = c->psi_us >= 0 ? psi_cpu_some_us() : -1;
    double share = psi >= 0 ? (double)(psi - c->psi_us) / (double)took : 0;
    if (share >= TH_BUSY_SHARE) {
        snprintf(why, cap, "some task waited for a CPU %.0f%% of the %lld ms (/proc/pressure/cpu)",
                 100.0 * share, (long long)(took / FB_US_PER_MS));
        return;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long others = runnable_now() - 1;
    if (cpus > 0 && others >= cpus)
        snprintf(why, cap,
                 "%ld other tasks runnable on %ld CPUs (/proc/stat procs_running, the least of 5 "
                 "looks over 80 ms)",
                 others, cpus);
}

void th_late(fixture *f, const th_clock *c, const char *fmt, ...) {
    char what[512], why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    busy_since(c, why, sizeof why);
    if (f != NULL) th_stop(f);
    if (why[0] == '\0') fail_msg("%s (the machine was not busy)", what);
    print_message("inconclusive: the machine is busy: %s; %s\n", why, what);
    skip();
}

void th_wait_or_late(fixture *f, bool (*cond)(const mock_stats *st, void *arg), void *arg,
                     int timeout_ms, const char *what) {
    th_clock c;
    th_clock_start(&c);
    if (!th_wait_for(f, cond, arg, timeout_ms))
        th_late(f, &c, "%s: not within %d ms", what, timeout_ms);
}
