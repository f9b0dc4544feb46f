/* request.c - the checks every API's request parser shares. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mockserver/api.h"

bool mock_bad(char *msg, size_t msglen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return false;
}

bool mock_parse_model(const cJSON *root, mock_reply *r, mock_store *st, const char *missing,
                      char *msg, size_t msglen) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    bool named = cJSON_IsString(model) && model->valuestring[0] != '\0';
    if (st->model[0] == '\0') { /* not named by the path (an Azure deployment) */
        if (!named) return mock_bad(msg, msglen, "%s", missing);
        size_t n = strlen(model->valuestring); /* cut to the room there is, as snprintf */
        if (n >= sizeof st->model) n = sizeof st->model - 1;
        memcpy(st->model, model->valuestring, n);
        st->model[n] = '\0';
    }
    r->model = st->model;
    return true;
}

bool mock_parse_stream(const cJSON *root, mock_reply *r, char *msg, size_t msglen) {
    const cJSON *stream = cJSON_GetObjectItemCaseSensitive(root, "stream");
    if (stream != NULL && !cJSON_IsBool(stream) && !cJSON_IsNull(stream))
        return mock_bad(msg, msglen, "stream: Input should be a valid boolean");
    r->stream = cJSON_IsTrue(stream);
    return true;
}

bool mock_parse_max_tokens(const cJSON *root, const char *const *keys, size_t n_keys, mock_reply *r,
                           char *msg, size_t msglen) {
    r->max_tokens = -1;
    for (size_t i = 0; i < n_keys; i++) {
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, keys[i]);
        if (mt == NULL || cJSON_IsNull(mt)) continue;
        if (!cJSON_IsNumber(mt) || mt->valuedouble < 1 || mt->valuedouble > 1e9 ||
            mt->valuedouble != floor(mt->valuedouble))
            return mock_bad(msg, msglen, "%s: Input should be a positive integer", keys[i]);
        r->max_tokens = (int64_t)mt->valuedouble;
        return true;
    }
    return true;
}
