/*
 * embeddings.c - OpenAI embeddings (POST /v1/embeddings, Azure's deployment path): one unit
 * vector per input, drawn from a hash of the input text, so the same text always embeds the
 * same. openai-node asks for encoding_format "base64" unless told otherwise and decodes the
 * little-endian float32 array (openai-node 6.49.0 src/resources/embeddings.ts); "float" sends
 * numbers. No stream exists for this API.
 *
 * Gemini's embedContent ({"content": {"parts": [{"text"}]}, "outputDimensionality"} to
 * {"embedding": {"values": [...]}}) and batchEmbedContents ({"requests": [...]} to
 * {"embeddings": [{"values": [...]}]}, what @google/genai's models.embedContent calls on the
 * Gemini API: embedContentParametersPrivateToMldev, 2.32.0 dist/node/index.mjs), v1 and v1beta:
 * the same vectors, 768 numbers unless outputDimensionality says otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "mockserver/api.h"

#define INPUTS_MAX 2048 /* the API's own limit on inputs per request */
#define DIMENSIONS_DEFAULT 1536
#define DIMENSIONS_MAX 3072
#define GEMINI_DIMENSIONS_DEFAULT 768
#define GEMINI_REQUESTS_MAX 100 /* the Gemini API's batch limit */

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* One input: a string, or an array of token ids. Its hash and its size in characters. */
static bool input_hash(const cJSON *in, uint64_t *hash, int64_t *chars) {
    if (cJSON_IsString(in)) {
        *hash = fnv(0xcbf29ce484222325ull, in->valuestring, strlen(in->valuestring));
        *chars += mock_wire_chars(in->valuestring);
        return in->valuestring[0] != '\0';
    }
    char *text = cJSON_IsArray(in) ? cJSON_PrintUnformatted(in) : NULL;
    if (text == NULL) return false;
    *hash = fnv(0x84222325cbf29ce4ull, text, strlen(text));
    *chars += 4 * cJSON_GetArraySize(in);
    cJSON_free(text);
    return true;
}

static bool parse_inputs(const cJSON *input, mock_reply *r, mock_store *st, char *msg,
                         size_t msglen) {
    bool many = cJSON_IsArray(input) &&
                (cJSON_GetArraySize(input) == 0 || !cJSON_IsNumber(cJSON_GetArrayItem(input, 0)));
    int64_t n = many ? cJSON_GetArraySize(input) : 1, chars = 0;
    if (n < 1 || n > INPUTS_MAX)
        return mock_bad(msg, msglen, "'$.input' must hold 1 to %d inputs", INPUTS_MAX);
    uint64_t hashes[INPUTS_MAX];
    for (int64_t i = 0; i < n; i++) {
        const cJSON *in = many ? cJSON_GetArrayItem(input, (int)i) : input;
        if (!input_hash(in, &hashes[i], &chars))
            return mock_bad(msg, msglen,
                            "'$.input' is invalid: input[%lld] must be a non-empty "
                            "string or an array of token ids",
                            (long long)i);
    }
    util_buf_free(&st->json);
    util_buf_append(&st->json, (const char *)hashes, (size_t)n * sizeof hashes[0]);
    r->inputs = (const uint64_t *)(const void *)st->json.p;
    r->n_inputs = n;
    r->prompt_tokens = (chars + 3) / 4;
    return true;
}

static bool parse(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen) {
    if (!mock_parse_model(root, r, st, "you must provide a model parameter", msg, msglen))
        return false;
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (input == NULL) return mock_bad(msg, msglen, "Missing required parameter: 'input'.");
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(root, "dimensions");
    r->dimensions = DIMENSIONS_DEFAULT;
    if (dims != NULL && !cJSON_IsNull(dims)) {
        if (!cJSON_IsNumber(dims) || dims->valuedouble < 1 || dims->valuedouble > DIMENSIONS_MAX ||
            dims->valuedouble != floor(dims->valuedouble))
            return mock_bad(msg, msglen, "dimensions: must be an integer in [1, %d]",
                            DIMENSIONS_MAX);
        r->dimensions = (int64_t)dims->valuedouble;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "encoding_format");
    r->base64 = cJSON_IsString(fmt) && strcmp(fmt->valuestring, "base64") == 0;
    if (fmt != NULL && !cJSON_IsNull(fmt) && !r->base64 &&
        !(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "float") == 0))
        return mock_bad(msg, msglen, "encoding_format: must be 'float' or 'base64'");
    r->n = 1;
    return parse_inputs(input, r, st, msg, msglen);
}

/* The unit vector of one input, as float32 (what the API computes in). */
static void vector(uint64_t hash, int64_t dims, float *v) {
    fb_rng rng;
    fb_rng_derive(&rng, hash, 0xE3B, 0);
    double norm = 0;
    for (int64_t j = 0; j < dims; j++) {
        double x = fb_rng_normal(&rng);
        v[j] = (float)x;
        norm += x * x;
    }
    norm = norm > 0 ? sqrt(norm) : 1;
    for (int64_t j = 0; j < dims; j++) v[j] = (float)(v[j] / norm);
}

static void embedding(util_buf *b, const mock_reply *r, int64_t i) {
    float v[DIMENSIONS_MAX];
    vector(r->inputs[i], r->dimensions, v);
    util_buf_printf(b, "%s{\"object\":\"embedding\",\"index\":%lld,\"embedding\":", i ? "," : "",
                    (long long)i);
    if (r->base64) {
        unsigned char le[DIMENSIONS_MAX * 4];
        for (int64_t j = 0; j < r->dimensions; j++) {
            uint32_t w;
            memcpy(&w, &v[j], 4);
            for (int k = 0; k < 4; k++) le[j * 4 + k] = (unsigned char)(w >> (8 * k));
        }
        util_buf_puts(b, "\"");
        mock_buf_base64(b, le, (size_t)r->dimensions * 4);
        util_buf_puts(b, "\"}");
        return;
    }
    util_buf_puts(b, "[");
    for (int64_t j = 0; j < r->dimensions; j++) util_buf_printf(b, "%s%.9g", j ? "," : "", v[j]);
    util_buf_puts(b, "]}");
}

static void body(util_buf *b, const mock_reply *r) {
    util_buf_puts(b, "{\"object\":\"list\",\"data\":[");
    for (int64_t i = 0; i < r->n_inputs; i++) embedding(b, r, i);
    util_buf_puts(b, "],\"model\":");
    mock_buf_json_string(b, r->model);
    util_buf_printf(b, ",\"usage\":{\"prompt_tokens\":%lld,\"total_tokens\":%lld}}",
                    (long long)r->prompt_tokens, (long long)r->prompt_tokens);
}

const mock_api_ops mock_api_embeddings = {"embeddings", true, parse, body, NULL, NULL, NULL, NULL};

/* ---- Gemini ---- */

/* One request's content ({"parts": [{"text"}...]}): its hash and characters; its dimensions. */
static bool gemini_one(const cJSON *req, const char *where, uint64_t *hash, int64_t *chars,
                       int64_t *dims, char *msg, size_t msglen) {
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(req, "content");
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(content, "parts");
    if (!cJSON_IsArray(parts) || cJSON_GetArraySize(parts) == 0)
        return mock_bad(msg, msglen, "* %scontent.parts: must hold at least one part", where);
    char *text = cJSON_PrintUnformatted(parts);
    if (text == NULL) return mock_bad(msg, msglen, "out of memory");
    *hash = fnv(0x6a65636d62656464ull, text, strlen(text));
    cJSON_free(text);
    const cJSON *part;
    cJSON_ArrayForEach(part, parts) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(t)) *chars += mock_wire_chars(t->valuestring);
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(req, "outputDimensionality");
    if (d != NULL && !cJSON_IsNull(d)) {
        if (!cJSON_IsNumber(d) || d->valuedouble < 1 || d->valuedouble > DIMENSIONS_MAX ||
            d->valuedouble != floor(d->valuedouble))
            return mock_bad(msg, msglen, "* %soutputDimensionality: must be an integer in [1, %d]",
                            where, DIMENSIONS_MAX);
        *dims = (int64_t)d->valuedouble;
    }
    return true;
}

/* embedContent (one request, the body itself) or batchEmbedContents ("requests"). */
static bool gemini_parse(const cJSON *root, mock_reply *r, mock_store *st, bool batch, char *msg,
                         size_t msglen) {
    r->model = st->model; /* the path's */
    const cJSON *reqs = batch ? cJSON_GetObjectItemCaseSensitive(root, "requests") : NULL;
    int64_t n = batch ? cJSON_GetArraySize(reqs) : 1, chars = 0, dims = -1;
    if (batch && (!cJSON_IsArray(reqs) || n < 1 || n > GEMINI_REQUESTS_MAX))
        return mock_bad(msg, msglen, "* requests: must hold 1 to %d requests", GEMINI_REQUESTS_MAX);
    uint64_t hashes[GEMINI_REQUESTS_MAX];
    for (int64_t i = 0; i < n; i++) {
        char where[40] = "";
        if (batch) snprintf(where, sizeof where, "requests[%lld].", (long long)i);
        int64_t d = -1;
        if (!gemini_one(batch ? cJSON_GetArrayItem(reqs, (int)i) : root, where, &hashes[i], &chars,
                        &d, msg, msglen))
            return false;
        if (i == 0) dims = d;
        if (d != dims)
            return mock_bad(msg, msglen,
                            "* %soutputDimensionality: the requests of a batch must agree", where);
    }
    util_buf_free(&st->json);
    util_buf_append(&st->json, (const char *)hashes, (size_t)n * sizeof hashes[0]);
    r->inputs = (const uint64_t *)(const void *)st->json.p;
    r->n_inputs = n;
    r->n = batch; /* the body's shape: a list or one */
    r->dimensions = dims > 0 ? dims : GEMINI_DIMENSIONS_DEFAULT;
    r->prompt_tokens = (chars + 3) / 4;
    return true;
}

static bool gemini_parse_one(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                             size_t msglen) {
    return gemini_parse(root, r, st, false, msg, msglen);
}

static bool gemini_parse_batch(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                               size_t msglen) {
    return gemini_parse(root, r, st, true, msg, msglen);
}

static void gemini_values(util_buf *b, const mock_reply *r, int64_t i) {
    float v[DIMENSIONS_MAX];
    vector(r->inputs[i], r->dimensions, v);
    util_buf_puts(b, "{\"values\":[");
    for (int64_t j = 0; j < r->dimensions; j++) util_buf_printf(b, "%s%.9g", j ? "," : "", v[j]);
    util_buf_puts(b, "]}");
}

static void gemini_body(util_buf *b, const mock_reply *r) {
    if (r->n == 0) {
        util_buf_puts(b, "{\"embedding\":");
        gemini_values(b, r, 0);
        util_buf_puts(b, "}");
        return;
    }
    util_buf_puts(b, "{\"embeddings\":[");
    for (int64_t i = 0; i < r->n_inputs; i++) {
        if (i > 0) util_buf_puts(b, ",");
        gemini_values(b, r, i);
    }
    util_buf_puts(b, "]}");
}

const mock_api_ops mock_api_gemini_embed = {
    "gemini_embed", true, gemini_parse_one, gemini_body, NULL, NULL, NULL, NULL};
const mock_api_ops mock_api_gemini_batch_embed = {
    "gemini_batch_embed", true, gemini_parse_batch, gemini_body, NULL, NULL, NULL, NULL};

bool mock_api_is_embeddings(const mock_api_ops *ops) {
    return ops == &mock_api_embeddings || ops == &mock_api_gemini_embed ||
           ops == &mock_api_gemini_batch_embed;
}
