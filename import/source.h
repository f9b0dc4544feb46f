/*
 * source.h - reading a log file: its size cap, its format, its JSON one piece at a time.
 *
 * A file is one JSON document (an OTLP ExportTraceServiceRequest, a JSON array of LiteLLM
 * records, one record) or JSON lines (one document per line). The format is the one asked
 * for, or the one the first document looks like. Each document is parsed, handed to its
 * reader and freed, so memory holds the records, not the JSON of the whole file (except
 * for a file that is one document). A document that does not parse, truncated JSON
 * included, is an error naming the line and column.
 *
 * Memory: a document holds at most SCN_JSON_VALUES_MAX(len) values (one per 4 bytes, plus
 * 65,536; more is FB_ECAP before a byte of the tree), and cJSON's tree takes about
 * IMP_JSON_VALUE_BYTES a value: at most about 20 times the document's size, plus the text.
 * A tree that does not fit in memory is FB_ENOMEM saying so, not "invalid JSON".
 */
#ifndef IMP_SOURCE_H
#define IMP_SOURCE_H

#include <stddef.h>

#include "import/log.h"

/* A JSON value in cJSON's tree: its node (64 bytes on 64-bit) and malloc's 16 (measured: 64 MB
 * of "[0,  0,  ...]", 16.7 M values, peaked at 1.38 GB). */
#define IMP_JSON_VALUE_BYTES 80

typedef struct imp_read_opts {
    imp_format format;  /* AUTO: detect */
    size_t max_records; /* 0: IMP_RECORDS_MAX */
    size_t max_bytes;   /* 0: IMP_BYTES_MAX */
} imp_read_opts;

/* Read `file` into a finished log (imp_log_finish). FB_OK, or an error in err. */
int imp_read_file(const char *file, const imp_read_opts *o, imp_log **out, imp_error *err);
/* The same from text in memory; `file` names it in messages. */
int imp_read_text(const char *text, size_t len, const char *file, const imp_read_opts *o,
                  imp_log **out, imp_error *err);
const char *imp_format_name(imp_format f);

#endif /* IMP_SOURCE_H */
