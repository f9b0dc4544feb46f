/*
 * otlpint.h - what otlp.c (reading spans) and otlp_tree.c (requests and attempts from
 * them) share. Private to import/.
 */
#ifndef IMP_OTLPINT_H
#define IMP_OTLPINT_H

#include <stdbool.h>
#include <stdint.h>

#include "import/log.h"
#include "import/otlp.h"

#define OT_STRINGS_MAX 2048 /* distinct provider, address, model and class names */
#define OT_STR_LEN 128
#define OT_DEPTH_MAX 256 /* span nesting */

/* One span, reduced to what an import needs (strings are ids into the table, 0 = none). */
typedef struct ospan {
    uint64_t tr_hi, tr_lo, id, parent; /* parent 0: a root */
    uint64_t session;                  /* gen_ai.conversation.id, else session.id: 0 none */
    int64_t start_us, end_us;
    int64_t retry_after_us; /* -1: no header recorded */
    int32_t tokens_in, tokens_out;
    uint32_t seq, line; /* order and line in the file (line 0: one document) */
    uint16_t rs, ss;    /* resourceSpans[rs].scopeSpans[ss] ... */
    uint32_t sp;        /* ... .spans[sp], for messages */
    uint16_t system, address, model, cls, fprov, name;
    int16_t status;           /* http.response.status_code, 0 = none */
    int16_t resend;           /* http.request.resend_count, -1 = none */
    bool genai, http, failed; /* failed: span status Error */
    bool stream, cancelled;
    bool user_abort; /* the application aborted the call (APIUserAbortError) */
    char error_type[32];
} ospan;

struct imp_otlp {
    imp_log *log;
    ospan *sp;
    size_t n, cap;
    char (*str)[OT_STR_LEN]; /* the table; entry 0 is "" */
    uint32_t nstr;
    uint16_t *slot; /* open addressing over the table: 0 = empty, else the id */
};

/* The id of s in the table (added when new); 0 for NULL or "", -1 when the table is full. */
int imp__ot_intern(imp_otlp *o, const char *s);
/* "FILE:LINE: span ID (NAME)" or "FILE: resourceSpans[..]...: span ID (NAME)" into buf. */
void imp__ot_where(const imp_otlp *o, const ospan *s, char *buf, size_t len);

#endif /* IMP_OTLPINT_H */
