/*
 * errors.c - the providers' error bodies: OpenAI {"error":{message,type,param,code}},
 * Anthropic {"type":"error","error":{type,message},"request_id"}, Azure's gateway envelope
 * {"error":{"code":"429","message"}} (its model errors keep OpenAI's shape), Gemini's
 * {"error":{code,message,status,details}}. Rate-limit messages name the limit that was hit.
 * Sources in docs/mock.md.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mockserver/api.h"
#include "mockserver/wire.h"

typedef struct err_info {
    const char *type;
    const char *code; /* OpenAI only; NULL = null */
    const char *param;
    const char *msg;
} err_info;

/* OpenAI's error bodies by status (type, code, message); msg NULL: the caller's. */
static const struct {
    int status;
    err_info e;
} openai_by_status[] = {
    {400, {"invalid_request_error", NULL, NULL, "Invalid request (fusebox mock fault)."}},
    {401,
     {"invalid_request_error", "invalid_api_key", NULL,
      "Incorrect API key provided: sk-fb****. You can find your API key at "
      "https://platform.openai.com/account/api-keys."}},
    {403,
     {"request_forbidden", "unsupported_country_region_territory", NULL,
      "Country, region, or territory not supported"}},
    {404,
     {"invalid_request_error", "model_not_found", NULL,
      "The model does not exist or you do not have access to it."}},
    {408, {"timeout", NULL, NULL, "Request timed out."}},
    {409, {"invalid_request_error", NULL, NULL, "The request conflicted with another request."}},
    {413, {"invalid_request_error", NULL, NULL, "Request too large."}},
    {422, {"invalid_request_error", NULL, NULL, "Unprocessable entity."}},
    {429, {"requests", "rate_limit_exceeded", NULL, NULL}},
    {500,
     {"server_error", NULL, NULL,
      "The server had an error while processing your request. Sorry about that!"}},
    {503,
     {"server_error", NULL, NULL, "The engine is currently overloaded, please try again later."}},
};

/* A flavor that decides the body whatever the status; false when the status decides. */
static bool openai_flavored(mock_flavor flavor, err_info *e) {
    switch (flavor) {
    case MOCK_FLAVOR_CONTEXT:
        e->code = "context_length_exceeded";
        e->param = "messages";
        return true;
    case MOCK_FLAVOR_FILTER:
        e->code = "invalid_prompt";
        e->msg = "Invalid prompt: your prompt was flagged as potentially violating our usage "
                 "policy. Please try again with a different prompt.";
        return true;
    case MOCK_FLAVOR_OVERLOADED:
        e->type = "server_error";
        e->msg = "That model is currently overloaded with other requests. You can retry your "
                 "request, or contact us through our help center at help.openai.com if the "
                 "error persists.";
        return true;
    case MOCK_FLAVOR_QUOTA:
        e->type = e->code = "insufficient_quota";
        e->msg = "You exceeded your current quota, please check your plan and billing details. "
                 "For more information on this error, read the docs: "
                 "https://platform.openai.com/docs/guides/error-codes/api-errors.";
        return true;
    default:
        return false;
    }
}

static err_info openai_error(int status, mock_flavor flavor) {
    err_info e = {"invalid_request_error", NULL, NULL, NULL};
    if (openai_flavored(flavor, &e)) return e;
    if (flavor == MOCK_FLAVOR_RATE_LIMIT) status = 429;
    for (size_t i = 0; i < sizeof openai_by_status / sizeof openai_by_status[0]; i++)
        if (openai_by_status[i].status == status) return openai_by_status[i].e;
    if (status >= 500) {
        e.type = "server_error";
        e.msg = status == 502   ? "Bad gateway."
                : status == 504 ? "Gateway timeout."
                                : "The server is overloaded or not ready yet.";
    } else {
        e.msg = "Invalid request (fusebox mock fault).";
    }
    return e;
}

static const struct {
    int status;
    const char *type, *msg;
} anthropic_by_status[] = {
    {400, "invalid_request_error", "Invalid request (fusebox mock fault)."},
    {401, "authentication_error", "invalid x-api-key"},
    {402, "billing_error", "Your credit balance is too low to access the Anthropic API."},
    {403, "permission_error",
     "Your API key does not have permission to use the specified resource."},
    {404, "not_found_error", "The requested resource could not be found."},
    {408, "timeout_error", "Request timed out."},
    {413, "request_too_large", "Request exceeds the maximum allowed number of bytes."},
    {429, "rate_limit_error", NULL},
    {504, "timeout_error", "Request timed out."},
    {529, "overloaded_error", "Overloaded"},
};

static err_info anthropic_error(int status, mock_flavor flavor) {
    err_info e = {"invalid_request_error", NULL, NULL, NULL};
    if (flavor == MOCK_FLAVOR_FILTER) {
        e.msg = "Output blocked by content filtering policy";
        return e;
    }
    if (flavor == MOCK_FLAVOR_CONTEXT) return e; /* message built by the caller */
    if (flavor == MOCK_FLAVOR_OVERLOADED) status = 529;
    if (flavor == MOCK_FLAVOR_RATE_LIMIT) status = 429;
    if (flavor == MOCK_FLAVOR_QUOTA) {
        e.type = "rate_limit_error";
        e.code = "enforced_spend_limit_reached";
        e.msg = "You have reached your specified API usage limits.";
        return e;
    }
    for (size_t i = 0; i < sizeof anthropic_by_status / sizeof anthropic_by_status[0]; i++) {
        if (anthropic_by_status[i].status != status) continue;
        e.type = anthropic_by_status[i].type;
        e.msg = anthropic_by_status[i].msg;
        return e;
    }
    e.type = status >= 500 ? "api_error" : "invalid_request_error";
    e.msg = status >= 500 ? "Internal server error" : "Invalid request (fusebox mock fault).";
    return e;
}

static void json_or_null(util_buf *b, const char *s) {
    if (s == NULL)
        util_buf_puts(b, "null");
    else
        mock_buf_json_string(b, s);
}

static int64_t window_of(const mock_reply *r) {
    if (r->context_window > 0) return r->context_window;
    return r->dialect == MOCK_ANTHROPIC ? 200000 : r->dialect == MOCK_GEMINI ? 1048576 : 128000;
}

static int64_t used_of(const mock_reply *r) {
    int64_t w = window_of(r);
    return r->prompt_tokens > w ? r->prompt_tokens : w + 1;
}

/* A message in a fixed array, cut where the array ends as snprintf cuts it (len >= 1). */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void text_add(text *t, const char *s, size_t n) {
    size_t room = t->cap - 1 - t->len;
    if (n > room) n = room;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void text_put(text *t, const char *s) {
    text_add(t, s, strlen(s));
}

static void text_int(text *t, int64_t v) {
    char d[24];
    size_t n = v < 0 ? 1 : 0;
    d[0] = '-';
    n += mock_wire_decimal(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, d + n);
    text_add(t, d, n);
}

/* v as "%g" writes it: whole values under a million (the usual wait) are their digits. */
static void text_g(text *t, double v) {
    if (v >= 0 && v < 1e6 && v == floor(v)) {
        text_int(t, (int64_t)v);
        return;
    }
    char g[32];
    snprintf(g, sizeof g, "%g", v);
    text_put(t, g);
}

static double hint_s(const mock_reply *r) {
    return r->retry_hint_s > 0 ? r->retry_hint_s : 1.0;
}

/* The wait in whole seconds, rounded up (at least 1), as headers and RetryInfo carry it. */
static long long whole_s(const mock_reply *r) {
    double s = ceil(hint_s(r));
    return s < 1 ? 1 : (long long)s;
}

/* The limit a 429 names: the one hit, or the nominal requests limit for a scripted 429. */
static mock_limit_hit limit_of(const mock_reply *r) {
    mock_limit_hit h = r->limit;
    if (h.kind == MOCK_LIMIT_NONE) h.kind = MOCK_LIMIT_REQUESTS;
    if (h.limit <= 0) h.limit = 10000;
    if (h.used <= 0 && h.kind != MOCK_LIMIT_CONCURRENCY) h.used = h.limit;
    if (h.requested <= 0) h.requested = 1;
    return h;
}

static void openai_rate_message(const mock_reply *r, char *out, size_t len) {
    mock_limit_hit h = limit_of(r);
    const char *model = r->model != NULL && r->model[0] ? r->model : "model";
    if (h.kind == MOCK_LIMIT_CONCURRENCY) {
        snprintf(out, len,
                 "Too many concurrent requests for %.100s in organization org-fusebox: Limit %lld "
                 "in flight. Please try again in %gs.",
                 model, (long long)h.limit, hint_s(r));
        return;
    }
    /* Every scripted 429 writes this one: put together without stdio, the same text. */
    bool tpm = h.kind == MOCK_LIMIT_TOKENS;
    text t = {out, 0, len};
    text_put(&t, "Rate limit reached for ");
    text_add(&t, model, strnlen(model, 100));
    text_put(&t, " in organization org-fusebox on ");
    text_put(&t, tpm ? "tokens per min (TPM)" : "requests per min (RPM)");
    text_put(&t, ": Limit ");
    text_int(&t, h.limit);
    text_put(&t, ", Used ");
    text_int(&t, h.used);
    text_put(&t, ", Requested ");
    text_int(&t, h.requested);
    text_put(&t, ". Please try again in ");
    text_g(&t, hint_s(r));
    text_put(&t, "s. Visit https://platform.openai.com/account/rate-limits to learn more.");
}

static void openai_body(util_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                        const char *message) {
    char msg[600];
    err_info e = openai_error(status, flavor);
    if (flavor == MOCK_FLAVOR_ROUTING && status < 500) {
        e.type = "invalid_request_error";
        e.code = e.param = NULL;
    }
    if (message == NULL && flavor == MOCK_FLAVOR_CONTEXT) {
        snprintf(msg, sizeof msg,
                 "This model's maximum context length is %lld tokens. However, your messages "
                 "resulted in %lld tokens. Please reduce the length of the messages.",
                 (long long)window_of(r), (long long)used_of(r));
        message = msg;
    } else if (message == NULL && (flavor == MOCK_FLAVOR_RATE_LIMIT ||
                                   (status == 429 && flavor == MOCK_FLAVOR_PLAIN))) {
        openai_rate_message(r, msg, sizeof msg);
        message = msg;
    }
    util_buf_puts(b, "{\"error\":{\"message\":");
    mock_buf_json_string(b, message ? message : e.msg);
    util_buf_puts(b, ",\"type\":");
    json_or_null(b, e.type);
    util_buf_puts(b, ",\"param\":");
    json_or_null(b, e.param);
    util_buf_puts(b, ",\"code\":");
    json_or_null(b, e.code);
    util_buf_puts(b, "}}");
}

static void anthropic_rate_message(const mock_reply *r, char *out, size_t len) {
    mock_limit_hit h = limit_of(r);
    if (h.kind == MOCK_LIMIT_CONCURRENCY) {
        snprintf(out, len,
                 "Number of concurrent connections has exceeded your rate limit of %lld. Please "
                 "try again later or contact sales at https://www.anthropic.com/contact-sales to "
                 "discuss your options for a rate limit increase.",
                 (long long)h.limit);
        return;
    }
    snprintf(out, len,
             "This request would exceed the rate limit for your organization (fusebox-mock) of "
             "%lld %s per minute. For details, refer to: "
             "https://docs.claude.com/en/api/rate-limits. You can see the response headers for "
             "current usage. Please reduce the prompt length or the maximum tokens requested, or "
             "try again later.",
             (long long)h.limit, h.kind == MOCK_LIMIT_TOKENS ? "tokens" : "requests");
}

static void anthropic_body(util_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                           const char *message) {
    char msg[600];
    err_info e = anthropic_error(status, flavor);
    if (message == NULL && flavor == MOCK_FLAVOR_CONTEXT) {
        snprintf(msg, sizeof msg, "prompt is too long: %lld tokens > %lld maximum",
                 (long long)used_of(r), (long long)window_of(r));
        message = msg;
    } else if (message == NULL && e.msg == NULL) {
        anthropic_rate_message(r, msg, sizeof msg);
        message = msg;
    }
    util_buf_puts(b, "{\"type\":\"error\",\"error\":{\"type\":");
    json_or_null(b, e.type);
    util_buf_puts(b, ",\"message\":");
    mock_buf_json_string(b, message ? message : e.msg);
    if (e.code != NULL) util_buf_printf(b, ",\"details\":{\"error_code\":\"%s\"}", e.code);
    util_buf_puts(b, "},\"request_id\":");
    json_or_null(b, r->request_id);
    util_buf_puts(b, "}");
}

/* ---- Azure ---- */

static void azure_message(const mock_reply *r, int status, char *out, size_t len) {
    mock_limit_hit h = limit_of(r);
    if (status == 401) {
        snprintf(out, len,
                 "Access denied due to invalid subscription key or wrong API endpoint. "
                 "Make sure to provide a valid key for an active subscription and use a "
                 "correct regional API endpoint for your resource.");
    } else if (status == 404) {
        snprintf(out, len, "Resource not found");
    } else if (status == 429) {
        snprintf(out, len,
                 "Requests to the %s Operation under Azure OpenAI API version %.40s have exceeded "
                 "%s of your current OpenAI S0 pricing tier (%lld). Please retry after %lld "
                 "seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to "
                 "further increase the default rate limit.",
                 r->operation ? r->operation : "ChatCompletions_Create",
                 r->api_version ? r->api_version : "",
                 h.kind == MOCK_LIMIT_TOKENS        ? "token rate limit"
                 : h.kind == MOCK_LIMIT_CONCURRENCY ? "the concurrency limit"
                                                    : "call rate limit",
                 (long long)h.limit, whole_s(r));
    } else if (status >= 500) {
        snprintf(out, len,
                 "The service is temporarily unable to process your request. Please "
                 "try again later.");
    } else {
        snprintf(out, len, "Invalid request (fusebox mock fault).");
    }
}

/* Gateway errors in Azure's envelope; model errors (a 400 of the model) in OpenAI's. */
static void azure_body(util_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                       const char *message) {
    if (flavor == MOCK_FLAVOR_FILTER) {
        util_buf_puts(b, "{\"error\":{\"message\":\"The response was filtered due to the prompt "
                         "triggering Azure OpenAI's content management policy.\",\"type\":null,"
                         "\"param\":\"prompt\",\"code\":\"content_filter\",\"status\":400,"
                         "\"innererror\":{\"code\":\"ResponsibleAIPolicyViolation\","
                         "\"content_filter_result\":{\"violence\":{\"filtered\":true,"
                         "\"severity\":\"medium\"}}}}}");
        return;
    }
    if (status == 400 || status == 422 || flavor == MOCK_FLAVOR_QUOTA) {
        openai_body(b, r, status, flavor, message);
        return;
    }
    char msg[600];
    if (message == NULL) azure_message(r, status, msg, sizeof msg);
    util_buf_printf(b, "{\"error\":{\"code\":\"%d\",\"message\":", status);
    mock_buf_json_string(b, message ? message : msg);
    util_buf_puts(b, "}}");
}

/* ---- Gemini ---- */

static const char *gemini_status(int status, mock_flavor flavor) {
    if (flavor == MOCK_FLAVOR_RATE_LIMIT || flavor == MOCK_FLAVOR_QUOTA)
        return "RESOURCE_EXHAUSTED";
    if (flavor == MOCK_FLAVOR_OVERLOADED) return "UNAVAILABLE";
    switch (status) {
    case 401:
        return "UNAUTHENTICATED";
    case 403:
        return "PERMISSION_DENIED";
    case 404:
        return "NOT_FOUND";
    case 409:
        return "ABORTED";
    case 429:
        return "RESOURCE_EXHAUSTED";
    case 499:
        return "CANCELLED";
    case 501:
        return "UNIMPLEMENTED";
    case 503:
    case 529:
        return "UNAVAILABLE";
    case 504:
    case 408:
        return "DEADLINE_EXCEEDED";
    default:
        return status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT";
    }
}

static void gemini_message(const mock_reply *r, int status, mock_flavor flavor, char *out,
                           size_t len) {
    const char *s = gemini_status(status, flavor);
    mock_limit_hit h = limit_of(r);
    if (flavor == MOCK_FLAVOR_CONTEXT)
        snprintf(out, len,
                 "The input token count (%lld) exceeds the maximum number of tokens "
                 "allowed (%lld).",
                 (long long)used_of(r), (long long)window_of(r));
    else if (strcmp(s, "RESOURCE_EXHAUSTED") == 0)
        snprintf(out, len,
                 "You exceeded your current quota, please check your plan and billing details. "
                 "For more information on this error, head to: "
                 "https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: "
                 "generativelanguage.googleapis.com/generate_content_%s, limit: %lld, model: "
                 "%.100s\nPlease retry in %gs.",
                 h.kind == MOCK_LIMIT_TOKENS ? "input_token_count" : "requests", (long long)h.limit,
                 r->model ? r->model : "", hint_s(r));
    else if (strcmp(s, "UNAVAILABLE") == 0)
        snprintf(out, len, "The model is overloaded. Please try again later.");
    else if (strcmp(s, "NOT_FOUND") == 0)
        snprintf(out, len,
                 "models/%.100s is not found for API version v1beta, or is not "
                 "supported for generateContent.",
                 r->model ? r->model : "");
    else if (strcmp(s, "PERMISSION_DENIED") == 0 || strcmp(s, "UNAUTHENTICATED") == 0)
        snprintf(out, len,
                 "Method doesn't allow unregistered callers (callers without "
                 "established identity). Please use API Key or other form of API "
                 "consumer identity to call this API.");
    else if (status >= 500)
        snprintf(out, len,
                 "An internal error has occurred. Please retry or report in "
                 "https://developers.generativeai.google/guide/troubleshooting");
    else
        snprintf(out, len, "Request contains an invalid argument.");
}

/* RESOURCE_EXHAUSTED names its quota and carries the wait (RetryInfo) in its details. */
static void gemini_details(util_buf *b, const mock_reply *r) {
    mock_limit_hit h = limit_of(r);
    bool tokens = h.kind == MOCK_LIMIT_TOKENS;
    util_buf_printf(b,
                    ",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\","
                    "\"violations\":[{\"quotaMetric\":\"generativelanguage.googleapis.com/"
                    "generate_content_%s\",\"quotaId\":\"Generate%sPerMinutePerProjectPerModel\","
                    "\"quotaDimensions\":{\"location\":\"global\",\"model\":",
                    tokens ? "input_token_count" : "requests",
                    tokens ? "ContentInputTokens" : "Requests");
    mock_buf_json_string(b, r->model ? r->model : "");
    util_buf_printf(b,
                    "},\"quotaValue\":\"%lld\"}]},{\"@type\":\"type.googleapis.com/"
                    "google.rpc.RetryInfo\",\"retryDelay\":\"%llds\"}]",
                    (long long)h.limit, whole_s(r));
}

static void gemini_body(util_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                        const char *message) {
    char msg[600];
    const char *s = gemini_status(status, flavor);
    if (message == NULL) gemini_message(r, status, flavor, msg, sizeof msg);
    util_buf_printf(b, "{\"error\":{\"code\":%d,\"message\":", status);
    mock_buf_json_string(b, message ? message : msg);
    util_buf_printf(b, ",\"status\":\"%s\"", s);
    if (strcmp(s, "RESOURCE_EXHAUSTED") == 0 && flavor != MOCK_FLAVOR_QUOTA) gemini_details(b, r);
    util_buf_puts(b, "}}");
}

void mock_wire_error(util_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                     const char *message) {
    switch (r->dialect) {
    case MOCK_ANTHROPIC:
        anthropic_body(b, r, status, flavor, message);
        break;
    case MOCK_AZURE:
        azure_body(b, r, status, flavor, message);
        break;
    case MOCK_GEMINI:
        gemini_body(b, r, status, flavor, message);
        break;
    default:
        openai_body(b, r, status, flavor, message);
        break;
    }
}

void mock_wire_stream_error(util_buf *b, const mock_reply *r) {
    switch (r->dialect) {
    case MOCK_ANTHROPIC:
        util_buf_puts(b, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                         "\"message\":\"Overloaded\"}}");
        break;
    case MOCK_GEMINI:
        util_buf_puts(b, "{\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please "
                         "try again later.\",\"status\":\"UNAVAILABLE\"}}");
        break;
    default:
        util_buf_puts(b, "{\"error\":{\"message\":\"The server had an error while processing your "
                         "request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,"
                         "\"code\":null}}");
        break;
    }
}
