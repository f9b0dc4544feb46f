/*
 * stream.c - the cursor over one streamed answer: the opening events, one event per content
 * piece, then either the finish events or the scripted fault. The API's table writes each
 * step's events; this file decides which step comes next.
 */
#include <stdint.h>
#include <string.h>

#include "mockserver/api.h"

void mock_stream_init(mock_stream *s, const mock_reply *r, const mock_api_ops *ops,
                      mock_stream_end end, int64_t end_after) {
    memset(s, 0, sizeof *s);
    s->r = *r;
    s->ops = ops;
    if (s->r.refusal) s->r.tokens = 0;
    if (s->r.n <= 0) s->r.n = 1;
    s->end = end;
    s->end_at = (end_after < 0 || end_after > s->r.tokens) ? s->r.tokens : end_after;
    s->step = MOCK_STEP_PRE;
}

size_t mock_stream_estimate(const mock_reply *r, const mock_api_ops *ops) {
    if (ops->pre == NULL || ops->piece == NULL || ops->post == NULL) return 0;
    mock_stream s;
    util_buf b = {0};
    mock_stream_init(&s, r, ops, MOCK_END_NORMAL, -1);
    int64_t tokens = s.r.tokens, m = tokens < MOCK_STREAM_SAMPLE ? tokens : MOCK_STREAM_SAMPLE;
    mock_stream t = s;
    ops->pre(&t, &b);
    size_t fixed = b.len;
    b.len = 0;
    for (t.k = 0; t.k < m; t.k++) ops->piece(&t, &b);
    double per_piece = m > 0 ? (double)b.len / (double)m : 0;
    /* the finish events: without text, and with m pieces' (the Responses API repeats it) */
    b.len = 0;
    t = s;
    t.r.tokens = 0;
    ops->post(&t, &b);
    fixed += b.len;
    size_t post0 = b.len;
    b.len = 0;
    t = s;
    t.r.tokens = m;
    t.k = m;
    ops->post(&t, &b);
    double post_per_piece = m > 0 && b.len > post0 ? (double)(b.len - post0) / (double)m : 0;
    bool oom = b.err;
    util_buf_free(&b);
    if (oom) return SIZE_MAX;
    double est = (double)fixed + (double)tokens * (per_piece + post_per_piece);
    return est >= (double)SIZE_MAX ? SIZE_MAX : (size_t)est;
}

bool mock_stream_faulty(const mock_stream *s) {
    return s->end != MOCK_END_NORMAL && s->end != MOCK_END_NOTERM;
}

void mock_stream_emit(mock_stream *s, util_buf *b) {
    switch (s->step) {
    case MOCK_STEP_PRE:
        if (s->ops->pre(s, b)) {
            s->step = MOCK_STEP_END;
            return;
        }
        break;
    case MOCK_STEP_CONTENT:
        s->ops->piece(s, b);
        s->k++;
        break;
    case MOCK_STEP_FAULT:
        if (s->end == MOCK_END_CUT)
            s->cut = true;
        else if (s->end == MOCK_END_MALFORMED || s->end == MOCK_END_ERROR)
            s->ops->fault(s, b);
        s->step = MOCK_STEP_END; /* TRUNCATE: a clean end with nothing more */
        return;
    case MOCK_STEP_POST:
        s->ops->post(s, b);
        s->step = MOCK_STEP_END;
        return;
    case MOCK_STEP_END:
        return;
    }
    /* After the opening or a content piece: what comes next? */
    if (mock_stream_faulty(s) && s->k == s->end_at)
        s->step = MOCK_STEP_FAULT;
    else if (s->k >= s->r.tokens)
        s->step = MOCK_STEP_POST;
    else
        s->step = MOCK_STEP_CONTENT;
}
