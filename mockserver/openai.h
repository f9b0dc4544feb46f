/*
 * openai.h - what OpenAI's chat and legacy completions (and Azure's) share: chunk framing,
 * usage, finish reasons. Private to chat.c and completions.c.
 */
#ifndef MOCK_OPENAI_H
#define MOCK_OPENAI_H

#include "mockserver/api.h"

/* "data: {"id":...,"object":OBJECT,"created":...,"model":...,"system_fingerprint":...,"choices":["
 */
void mock_oa_chunk_head(util_buf *b, const mock_stream *s, const char *object);
/* "]}\n\n", with "usage":null when include_usage asked for a usage chunk. */
void mock_oa_chunk_tail(util_buf *b, const mock_stream *s);
/* "usage":{...} for the completion tokens of every choice. */
void mock_oa_usage(util_buf *b, const mock_reply *r);
/* The usage chunk (when asked for) and data: [DONE] (unless noterm). */
void mock_oa_stream_end(util_buf *b, const mock_stream *s, const char *object);
/* The malformed chunk (OBJECT's head, then `broken`) or the in-band error. */
void mock_oa_fault(util_buf *b, const mock_stream *s, const char *object, const char *broken);
const char *mock_oa_finish(const mock_reply *r);
/* n, stream, stream_options.include_usage, the token cap under `keys`. */
bool mock_oa_common(const cJSON *root, mock_reply *r, const char *const *keys, size_t n_keys,
                    char *msg, size_t msglen);
/* The model: required unless the path named a deployment (Azure). */
bool mock_oa_model(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen);

#endif /* MOCK_OPENAI_H */
