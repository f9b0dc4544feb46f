/* sse.c - see sse.h. */
#include "mockserver/sse.h"

#include <string.h>

size_t mock_sse_next(const char *p, size_t n) {
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] == '\n' && p[i + 1] == '\n') return i + 2;
        if (p[i] == '\r' && p[i + 1] == '\r') return i + 2;
        if (p[i] == '\r' && p[i + 1] == '\n' && i + 3 < n && p[i + 2] == '\r' && p[i + 3] == '\n')
            return i + 4;
    }
    return 0;
}

/* The value of the field `name` ("event", "data") on one of the event's lines; its length. */
static const char *field(const char *ev, size_t n, const char *name, size_t *len) {
    size_t k = strlen(name);
    for (size_t i = 0; i < n;) {
        size_t end = i;
        while (end < n && ev[end] != '\n' && ev[end] != '\r') end++;
        if (end - i > k && memcmp(ev + i, name, k) == 0 && ev[i + k] == ':') {
            size_t v = i + k + 1;
            if (v < end && ev[v] == ' ') v++;
            *len = end - v;
            return ev + v;
        }
        i = end + 1;
    }
    return NULL;
}

static bool named(const char *v, size_t len, const char *name) {
    return len == strlen(name) && memcmp(v, name, len) == 0;
}

static bool ends_with(const char *v, size_t len, const char *tail) {
    size_t k = strlen(tail);
    return len >= k && memcmp(v + len - k, tail, k) == 0;
}

static bool has(const char *v, size_t len, const char *what) {
    size_t k = strlen(what);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(v + i, what, k) == 0) return true;
    return false;
}

/* Does the JSON text hold "key": "<at least one character>" for one of the content keys? */
static bool nonempty_string_member(const char *v, size_t len) {
    static const char *const keys[] = {"\"content\"", "\"text\"", "\"arguments\"",
                                       "\"partial_json\""};
    for (size_t i = 0; i < len; i++) {
        if (v[i] != '"') continue;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t kl = strlen(keys[k]);
            if (i + kl > len || memcmp(v + i, keys[k], kl) != 0) continue;
            size_t j = i + kl;
            while (j < len && (v[j] == ' ' || v[j] == '\t')) j++;
            if (j >= len || v[j] != ':') continue;
            j++;
            while (j < len && (v[j] == ' ' || v[j] == '\t')) j++;
            if (j + 1 < len && v[j] == '"' && v[j + 1] != '"') return true;
        }
    }
    return false;
}

mock_sse_kind mock_sse_classify(const char *ev, size_t n) {
    size_t len = 0, dlen = 0;
    const char *name = field(ev, n, "event", &len);
    if (name != NULL) {
        if (named(name, len, "content_block_delta") || ends_with(name, len, ".delta"))
            return MOCK_SSE_CONTENT;
        if (named(name, len, "message_stop") || named(name, len, "response.completed") ||
            named(name, len, "response.incomplete"))
            return MOCK_SSE_TERMINATOR;
        return MOCK_SSE_OTHER;
    }
    const char *data = field(ev, n, "data", &dlen);
    if (data == NULL) return MOCK_SSE_OTHER;
    if (named(data, dlen, "[DONE]") || has(data, dlen, "\"finishReason\""))
        return MOCK_SSE_TERMINATOR;
    return nonempty_string_member(data, dlen) ? MOCK_SSE_CONTENT : MOCK_SSE_OTHER;
}
