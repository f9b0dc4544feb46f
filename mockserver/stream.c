/*
 * stream.c - the cursor over one streamed answer: the opening events, one event per content
 * piece, then either the finish events or the scripted fault. The API's table writes each
 * step's events; this file decides which step comes next.
 */
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

bool mock_stream_faulty(const mock_stream *s) {
    return s->end != MOCK_END_NORMAL && s->end != MOCK_END_NOTERM;
}

void mock_stream_emit(mock_stream *s, mock_buf *b) {
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
