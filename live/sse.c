/* sse.c - server-sent events, incrementally; see sse.h. */
#include "live/sse.h"

#include <string.h>

void live_sse_init(live_sse *p, live_sse_fn fn, void *ctx) {
    memset(p, 0, sizeof *p);
    p->fn = fn;
    p->ctx = ctx;
}

static void dispatch(live_sse *p) {
    if (p->has_data) {
        p->data[p->data_len] = '\0';
        p->fn(p->ctx, p->event, p->data, p->data_len, p->truncated);
    }
    p->event[0] = '\0';
    p->data_len = 0;
    p->has_data = false;
    p->truncated = false;
}

/* The value of field `name` in the line, or NULL ("data:x" and "data: x" are both "x"). */
static const char *field(const char *line, size_t len, const char *name, size_t *vlen) {
    size_t n = strlen(name);
    if (len < n || memcmp(line, name, n) != 0) return NULL;
    if (len == n) {
        *vlen = 0;
        return line + n;
    }
    if (line[n] != ':') return NULL;
    size_t off = n + 1;
    if (off < len && line[off] == ' ') off++;
    *vlen = len - off;
    return line + off;
}

static void on_line(live_sse *p) {
    const char *line = p->line;
    size_t len = p->line_len, vlen = 0;
    const char *v;
    if (len == 0) {
        dispatch(p);
    } else if ((v = field(line, len, "data", &vlen)) != NULL) {
        size_t room = sizeof p->data - 1 - p->data_len;
        if (p->has_data && room > 0) {
            p->data[p->data_len++] = '\n';
            room--;
        }
        if (vlen > room) {
            vlen = room;
            p->truncated = true;
        }
        memcpy(p->data + p->data_len, v, vlen);
        p->data_len += vlen;
        p->has_data = true;
        if (p->line_cut) p->truncated = true;
    } else if ((v = field(line, len, "event", &vlen)) != NULL) {
        if (vlen >= sizeof p->event) vlen = sizeof p->event - 1;
        memcpy(p->event, v, vlen);
        p->event[vlen] = '\0';
    }
    p->line_len = 0;
    p->line_cut = false;
}

/* The first CR or LF in buf[0, len), or NULL: two memchr passes, fast on long lines. */
static const char *line_end(const char *buf, size_t len) {
    const char *lf = memchr(buf, '\n', len);
    const char *cr = memchr(buf, '\r', lf ? (size_t)(lf - buf) : len);
    return cr ? cr : lf;
}

/*
 * Runs of line characters are copied at once (an endless line from a
 * flooding server costs a memchr, not a loop per byte); what does not fit
 * the buffer only marks the line cut.
 */
void live_sse_feed(live_sse *p, const char *buf, size_t len) {
    const char *end = buf + len;
    while (buf < end) {
        if (p->after_cr && *buf == '\n') buf++; /* CRLF: the CR ended the line */
        p->after_cr = false;
        if (buf == end) break;
        const char *eol = line_end(buf, (size_t)(end - buf));
        size_t run = (size_t)((eol ? eol : end) - buf);
        size_t room = sizeof p->line - 1 - p->line_len;
        if (run > room) p->line_cut = true;
        memcpy(p->line + p->line_len, buf, run < room ? run : room);
        p->line_len += run < room ? run : room;
        if (eol == NULL) break;
        p->after_cr = *eol == '\r';
        on_line(p);
        buf = eol + 1;
    }
}
