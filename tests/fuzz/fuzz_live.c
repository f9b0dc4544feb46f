/*
 * fuzz_live.c - a libFuzzer target for live/'s readers of what a provider sends back: the SSE
 * reader (live/sse.c) fed in pieces, each event through the stream reader of a dialect
 * (live_stream_event, live/wire.c), and the whole input as an error body and as a success
 * body (live_wire_error_kind, live_wire_success).
 *
 * Input: the first byte picks the dialect and the size of the pieces (1 to 64 bytes, so that
 * lines and CRLFs break anywhere); the rest is the response body. Whatever the bytes, the
 * readers return without a crash, read out of bounds or undefined behaviour; the same bytes
 * fed in other pieces give the same events; what they report stays printable.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "live/sse.h"
#include "live/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct feed {
    live_stream st;
    uint64_t hash, events;
} feed;

static void on_event(void *ctx, const char *event, const char *data, size_t len, bool truncated) {
    feed *f = ctx;
    if (data[len] != '\0' || len >= LIVE_SSE_LINE_MAX) abort(); /* NUL-terminated, bounded */
    f->events++;
    for (const char *p = event; *p; p++) f->hash = (f->hash ^ (unsigned char)*p) * 1099511628211ULL;
    for (size_t i = 0; i < len; i++)
        f->hash = (f->hash ^ (unsigned char)data[i]) * 1099511628211ULL;
    f->hash ^= truncated;
    live_stream_event(&f->st, event, data, len);
}

static void printable(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) abort();
}

static void feed_all(feed *f, live_dialect d, const char *p, size_t n, size_t piece) {
    live_sse sse;
    memset(f, 0, sizeof *f);
    live_stream_init(&f->st, d);
    live_sse_init(&sse, on_event, f);
    for (size_t off = 0; off < n; off += piece)
        live_sse_feed(&sse, p + off, n - off < piece ? n - off : piece);
    live_sse_feed(&sse, "\n\n", 2); /* the end of the body dispatches what is pending */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    live_dialect d = (data[0] & 1) ? LIVE_ANTHROPIC : LIVE_OPENAI;
    size_t piece = (size_t)(data[0] >> 1) % 64 + 1;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    static feed a, b;
    feed_all(&a, d, p, n, piece);
    feed_all(&b, d, p, n, n > 0 ? n : 1);
    if (a.events != b.events || a.hash != b.hash) abort(); /* the pieces do not matter */
    if (live_stream_tokens(&a.st) != live_stream_tokens(&b.st)) abort();
    if (a.st.error && a.st.error_kind == FB_ERRKIND_NONE) abort();
    printable(a.st.meta.model);
    printable(a.st.meta.finish);
    (void)live_wire_error_kind(p, n);
    uint32_t tokens;
    bool refused;
    live_meta meta;
    if (live_wire_success(d, p, n, &tokens, &refused, &meta) == FB_OK) {
        printable(meta.model);
        printable(meta.finish);
    }
    return 0;
}
