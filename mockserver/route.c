/*
 * route.c - the endpoints: a path pattern and a method to an API and its dialect, or to the
 * control plane; unknown paths are 404, known paths with another method 405 (with Allow), an
 * over-long body 413, each in the dialect the path suggests; and the refusals of an API's
 * credentials and query. Pure (route.h): dispatch.c answers what it decides.
 */
#include "mockserver/route.h"

#include <stdio.h>
#include <string.h>

static const endpoint endpoints[] = {
    {"POST", "/v1/chat/completions", RT_API, &mock_api_chat, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/completions", RT_API, &mock_api_completions, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/responses", RT_API, &mock_api_responses, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/embeddings", RT_API, &mock_api_embeddings, MOCK_OPENAI, false, NULL},
    {"POST", "/v1/messages", RT_API, &mock_api_messages, MOCK_ANTHROPIC, false, NULL},
    {"POST", "/v1/messages/count_tokens", RT_API, &mock_api_count_tokens, MOCK_ANTHROPIC, false,
     NULL},
    /* Gemini's v1 (@google/genai's default since 1.x) before OpenAI's /v1/models/{id}: a
     * model name with ":method" after it is Gemini's */
    {"POST", "/v1/models/{m}:generateContent", RT_API, &mock_api_gemini, MOCK_GEMINI, false, NULL},
    {"POST", "/v1/models/{m}:streamGenerateContent", RT_API, &mock_api_gemini, MOCK_GEMINI, true,
     NULL},
    {"POST", "/v1/models/{m}:countTokens", RT_API, &mock_api_gemini_count, MOCK_GEMINI, false,
     NULL},
    {"POST", "/v1/models/{m}:embedContent", RT_API, &mock_api_gemini_embed, MOCK_GEMINI, false,
     NULL},
    {"POST", "/v1/models/{m}:batchEmbedContents", RT_API, &mock_api_gemini_batch_embed, MOCK_GEMINI,
     false, NULL},
    {"GET", "/v1/models", RT_API, &mock_api_models, MOCK_OPENAI, false, NULL},
    {"GET", "/v1/models/{id}", RT_API, &mock_api_model, MOCK_OPENAI, false, NULL},
    {"POST", "/openai/deployments/{d}/chat/completions", RT_API, &mock_api_chat, MOCK_AZURE, false,
     "ChatCompletions_Create"},
    {"POST", "/openai/deployments/{d}/completions", RT_API, &mock_api_completions, MOCK_AZURE,
     false, "Completions_Create"},
    {"POST", "/openai/deployments/{d}/embeddings", RT_API, &mock_api_embeddings, MOCK_AZURE, false,
     "Embeddings_Create"},
    {"POST", "/openai/responses", RT_API, &mock_api_responses, MOCK_AZURE, false,
     "Responses_Create"},
    {"POST", "/v1beta/models/{m}:generateContent", RT_API, &mock_api_gemini, MOCK_GEMINI, false,
     NULL},
    {"POST", "/v1beta/models/{m}:streamGenerateContent", RT_API, &mock_api_gemini, MOCK_GEMINI,
     true, NULL},
    {"POST", "/v1beta/models/{m}:countTokens", RT_API, &mock_api_gemini_count, MOCK_GEMINI, false,
     NULL},
    {"POST", "/v1beta/models/{m}:embedContent", RT_API, &mock_api_gemini_embed, MOCK_GEMINI, false,
     NULL},
    {"POST", "/v1beta/models/{m}:batchEmbedContents", RT_API, &mock_api_gemini_batch_embed,
     MOCK_GEMINI, false, NULL},
    {"GET", "/v1beta/models", RT_API, &mock_api_models, MOCK_GEMINI, false, NULL},
    {"GET", "/v1beta/models/{m}", RT_API, &mock_api_model, MOCK_GEMINI, false, NULL},
    {"POST", "/__fusebox/faults", RT_C_FAULTS, NULL, MOCK_OPENAI, false, NULL},
    {"POST", "/__fusebox/reset", RT_C_RESET, NULL, MOCK_OPENAI, false, NULL},
    {"GET", "/__fusebox/log", RT_C_LOG, NULL, MOCK_OPENAI, false, NULL},
    {"GET", "/__fusebox/stats", RT_C_STATS, NULL, MOCK_OPENAI, false, NULL},
    {"GET", "/__fusebox/verdict", RT_C_VERDICT, NULL, MOCK_OPENAI, false, NULL},
};

/* Proxy mode: a path no endpoint has (or another method) is forwarded in its path's dialect. */
static const endpoint passthrough[] = {
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_OPENAI, false, NULL},
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_ANTHROPIC, false, NULL},
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_AZURE, false, NULL},
    {"*", "*", RT_API, &mock_api_passthrough, MOCK_GEMINI, false, NULL},
};

/*
 * Does url match pattern? A "{x}" matches a non-empty run of characters up to the pattern's
 * next character (or the end, without '/'); it is copied into arg (cut to argcap - 1 bytes).
 */
static bool match(const char *pattern, const char *url, char *arg, size_t argcap) {
    while (*pattern != '\0') {
        if (*pattern != '{') {
            if (*pattern++ != *url++) return false;
            continue;
        }
        pattern = strchr(pattern, '}');
        if (pattern == NULL) return false;
        char stop = *++pattern;
        size_t n = 0;
        while (url[n] != '\0' && url[n] != stop && url[n] != '/') n++;
        if (n == 0 || (stop != '\0' && url[n] != stop)) return false;
        snprintf(arg, argcap, "%.*s", n < argcap ? (int)n : (int)argcap - 1, url);
        url += n;
    }
    return *url == '\0';
}

mock_dialect mock_route_dialect(const char *path, const char *anthropic_version) {
    if (strncmp(path, "/openai/", 8) == 0) return MOCK_AZURE;
    if (strncmp(path, "/v1beta/", 8) == 0) return MOCK_GEMINI;
    if (strncmp(path, "/v1/models/", 11) == 0 && strchr(path + 11, ':') != NULL) return MOCK_GEMINI;
    if (strncmp(path, "/v1/messages", 12) == 0 || anthropic_version != NULL) return MOCK_ANTHROPIC;
    return MOCK_OPENAI;
}

/* The endpoint for path and method; *path_match the first whose path matched (for 405). */
static const endpoint *find(const char *path, const char *method, char *arg, size_t argcap,
                            const endpoint **path_match) {
    *path_match = NULL;
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++) {
        char a[MOCK_ROUTE_ARG_MAX] = "";
        if (!match(endpoints[i].pattern, path, a, sizeof a)) continue;
        if (*path_match == NULL) *path_match = &endpoints[i];
        if (strcmp(method, endpoints[i].method) != 0) continue;
        snprintf(arg, argcap, "%s", a);
        return &endpoints[i];
    }
    return NULL;
}

/* The error's message: the control plane's own, or the provider's where it names the URL. */
static void message(mock_route *o, const char *method, const char *path) {
    if (o->control && o->status != 413)
        snprintf(o->msg, sizeof o->msg, "%s",
                 o->status == 405 ? "method not allowed" : "unknown control endpoint");
    else if (o->status == 404 && o->dialect != MOCK_AZURE && o->dialect != MOCK_GEMINI)
        snprintf(o->msg, sizeof o->msg, "Invalid URL (%.16s %.200s)", method, path);
    else if (o->status == 405)
        snprintf(o->msg, sizeof o->msg, "Method %.16s not allowed for %.200s", method, path);
}

void mock_route_decide(const mock_route_in *in, mock_route *out) {
    memset(out, 0, sizeof *out);
    out->control = strncmp(in->path, "/__fusebox/", 11) == 0;
    out->dialect = mock_route_dialect(in->path, in->anthropic_version);
    const endpoint *path_match = NULL;
    if (!in->too_large)
        out->ep = find(in->path, in->method, out->arg, sizeof out->arg, &path_match);
    if (out->ep == NULL && !in->too_large && !out->control && in->proxy)
        out->ep = &passthrough[out->dialect];
    if (out->ep != NULL) return;
    out->status = in->too_large ? 413 : path_match != NULL ? 405 : 404;
    if (out->status == 405 && !out->control) out->allow = path_match->method;
    message(out, in->method, in->path);
}

int mock_route_refusal(mock_dialect d, bool stream, const mock_route_creds *c) {
    if (d == MOCK_AZURE) {
        if (c->api_version == NULL || c->api_version[0] == '\0') return 404;
        if (!c->api_key && !c->authorization) return 401;
    } else if (d == MOCK_GEMINI) {
        if (!c->x_goog_api_key && !c->authorization && c->key == NULL) return 403;
        if (stream && (c->alt == NULL || strcmp(c->alt, "sse") != 0)) return 400;
    }
    return 0;
}
