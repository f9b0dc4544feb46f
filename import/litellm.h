/*
 * litellm.h - LiteLLM's StandardLoggingPayload records into the log model.
 *
 * One record per call LiteLLM made (docs.litellm.ai/docs/proxy/logging_spec,
 * "StandardLoggingPayload Specification"; the TypedDict in BerriAI/litellm
 * litellm/types/utils.py, commit 001c64f): JSON lines, a JSON array of records, or one
 * record. `trace_id` groups the calls of one request ("fallbacks/retries", says the
 * source): the request is the group, each record one attempt. `startTime`, `endTime` and
 * `completionStartTime` are unix seconds as floats; `status` is "success" or "failure",
 * with `error_information.error_code` (the HTTP status) and `error_class`. The provider is
 * the deployment: `model_id` (or `hidden_params.model_id`), else `custom_llm_provider`,
 * `api_base` and `model`; the class is `model_group`. docs/import.md has every field.
 */
#ifndef IMP_LITELLM_H
#define IMP_LITELLM_H

#include <cjson/cJSON.h>

#include "import/log.h"

typedef struct imp_litellm imp_litellm;

imp_litellm *imp_litellm_begin(imp_log *log);
/* One record; `line` is its line in the file (or its index + 1 in an array, with line 0). */
int imp_litellm_add(imp_litellm *l, const cJSON *rec, int line, int index, imp_error *err);
/* Every record read: the requests' times and outcomes from their attempts. */
int imp_litellm_end(imp_litellm *l, imp_error *err);
void imp_litellm_free(imp_litellm *l);
/* Does this object look like a StandardLoggingPayload? */
int imp_litellm_looks(const cJSON *rec);

#endif /* IMP_LITELLM_H */
