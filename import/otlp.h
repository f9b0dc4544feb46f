/*
 * otlp.h - OpenTelemetry traces (OTLP/JSON) into the log model.
 *
 * The file is an ExportTraceServiceRequest ({"resourceSpans": [{"scopeSpans": [{"spans":
 * [...]}]}]}, open-telemetry/opentelemetry-proto v1.11.0, docs/specification.md "JSON
 * Protobuf Encoding"), or one such object per line (the collector's file exporter). Spans
 * are read with the GenAI and HTTP semantic conventions (open-telemetry/semantic-conventions
 * v1.41.0: docs/gen-ai/gen-ai-spans.md, docs/http/http-spans.md): a logical request is the
 * outermost GenAI span of its trace (one with gen_ai.operation.name, gen_ai.provider.name
 * or the older gen_ai.system); its attempts are the HTTP client spans below it
 * (http.request.method, http.response.status_code). A request without HTTP spans below it
 * (the OpenAI instrumentation alone) is its own single attempt: the client's retries are
 * invisible then, and log.hidden_attempts counts such requests. HTTP spans outside any
 * GenAI span (a health check, a control call) are counted in log.ignored, not imported.
 * docs/import.md has the mapping attribute by attribute.
 */
#ifndef IMP_OTLP_H
#define IMP_OTLP_H

#include <cjson/cJSON.h>

#include "import/log.h"

typedef struct imp_otlp imp_otlp;

imp_otlp *imp_otlp_begin(imp_log *log);
/*
 * The spans of one ExportTraceServiceRequest; `line` is where it starts in the file
 * (0: the file is one document, positions are JSON paths). FB_OK, or an error naming the
 * span (its id and place) that has no id or no times, or the cap reached.
 */
int imp_otlp_add(imp_otlp *o, const cJSON *doc, int line, imp_error *err);
/* Every span read: requests and attempts into the log. */
int imp_otlp_end(imp_otlp *o, imp_error *err);
void imp_otlp_free(imp_otlp *o);
/* Does this object look like an ExportTraceServiceRequest? */
int imp_otlp_looks(const cJSON *doc);

#endif /* IMP_OTLP_H */
