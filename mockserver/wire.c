/* wire.c - bodies, SSE events and header values of the two provider dialects. */
#include "mockserver/wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- buffer -------------------------------------------------------------------------------- */

void mock_buf_free(mock_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

static bool reserve(mock_buf *b, size_t extra) {
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void mock_buf_append(mock_buf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void mock_buf_puts(mock_buf *b, const char *s) {
    mock_buf_append(b, s, strlen(s));
}

void mock_buf_printf(mock_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void mock_buf_json_string(mock_buf *b, const char *s) {
    static const char hex[] = "0123456789abcdef";
    if (s == NULL) s = "";
    mock_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        const unsigned char c = *p;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            mock_buf_append(b, e, 2);
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            mock_buf_append(b, e, 6);
        } else {
            mock_buf_append(b, (const char *)p, 1);
        }
    }
    mock_buf_append(b, "\"", 1);
}

char *mock_buf_take(mock_buf *b, size_t *len) {
    if (b->oom || !reserve(b, 0)) {
        mock_buf_free(b);
        return NULL;
    }
    char *p = b->p;
    *len = b->len;
    memset(b, 0, sizeof *b);
    return p;
}

/* ---- filler text --------------------------------------------------------------------------- */

static const char *const words[] = {
    "The",     "mock",  "provider", "answers", "with",  "deterministic", "filler", "text",
    "so",      "that",  "every",    "run",     "sends", "the",           "same",   "tokens",
    "through", "every", "client",   "under",   "test",  "and",           "no",     "model",
    "is",      "ever",  "called",   "at",      "all",   "here",          "today",  "again",
};
#define N_WORDS ((int64_t)(sizeof words / sizeof words[0]))

const char *mock_wire_word(int64_t k, bool *leading_space) {
    *leading_space = k > 0;
    return words[k % N_WORDS];
}

static void append_text(mock_buf *b, int64_t tokens) {
    for (int64_t k = 0; k < tokens; k++) {
        bool sp;
        const char *w = mock_wire_word(k, &sp);
        if (sp) mock_buf_append(b, " ", 1);
        mock_buf_puts(b, w);
    }
}

static bool hit_max(const mock_reply *r) {
    return r->max_tokens >= 0 && r->tokens >= r->max_tokens && !r->refusal;
}

static const char *finish_reason(const mock_reply *r) {
    if (r->refusal) return r->dialect == MOCK_OPENAI ? "content_filter" : "refusal";
    if (hit_max(r)) return r->dialect == MOCK_OPENAI ? "length" : "max_tokens";
    return r->dialect == MOCK_OPENAI ? "stop" : "end_turn";
}

/* ---- success bodies ------------------------------------------------------------------------ */

void mock_wire_success(mock_buf *b, const mock_reply *r) {
    int64_t tokens = r->refusal ? 0 : r->tokens;
    if (r->dialect == MOCK_OPENAI) {
        int n = r->n > 0 ? r->n : 1;
        mock_buf_printf(
            b, "{\"id\":\"%s\",\"object\":\"chat.completion\",\"created\":%lld,\"model\":", r->id,
            (long long)r->created_s);
        mock_buf_json_string(b, r->model);
        mock_buf_puts(b, ",\"system_fingerprint\":\"fp_fusebox\",\"choices\":[");
        for (int i = 0; i < n; i++) {
            mock_buf_printf(b, "%s{\"index\":%d,\"message\":{\"role\":\"assistant\",\"content\":\"",
                            i ? "," : "", i);
            append_text(b, tokens);
            mock_buf_printf(b, "\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":\"%s\"}",
                            finish_reason(r));
        }
        int64_t completion = tokens * n;
        mock_buf_printf(b,
                        "],\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
                        "\"total_tokens\":%lld}}",
                        (long long)r->prompt_tokens, (long long)completion,
                        (long long)(r->prompt_tokens + completion));
    } else {
        mock_buf_printf(
            b, "{\"id\":\"%s\",\"type\":\"message\",\"role\":\"assistant\",\"model\":", r->id);
        mock_buf_json_string(b, r->model);
        mock_buf_puts(b, ",\"content\":[");
        if (tokens > 0) {
            mock_buf_puts(b, "{\"type\":\"text\",\"text\":\"");
            append_text(b, tokens);
            mock_buf_puts(b, "\"}");
        }
        mock_buf_printf(b,
                        "],\"stop_reason\":\"%s\",\"stop_sequence\":null,\"usage\":{"
                        "\"input_tokens\":%lld,\"output_tokens\":%lld,"
                        "\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0}}",
                        finish_reason(r), (long long)r->prompt_tokens, (long long)tokens);
    }
}

/* ---- errors -------------------------------------------------------------------------------- */

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
    switch (status) {
    case 400:
        e.msg = "Invalid request (fusebox mock fault).";
        break;
    case 401:
        e.type = "authentication_error";
        e.msg = "invalid x-api-key";
        break;
    case 402:
        e.type = "billing_error";
        e.msg = "Your credit balance is too low to access the Anthropic API.";
        break;
    case 403:
        e.type = "permission_error";
        e.msg = "Your API key does not have permission to use the specified resource.";
        break;
    case 404:
        e.type = "not_found_error";
        e.msg = "The requested resource could not be found.";
        break;
    case 408:
        e.type = "timeout_error";
        e.msg = "Request timed out.";
        break;
    case 413:
        e.type = "request_too_large";
        e.msg = "Request exceeds the maximum allowed number of bytes.";
        break;
    case 429:
        e.type = "rate_limit_error";
        e.msg = "This request would exceed your account's rate limit. Please try again later.";
        break;
    case 504:
        e.type = "timeout_error";
        e.msg = "Request timed out.";
        break;
    case 529:
        e.type = "overloaded_error";
        e.msg = "Overloaded";
        break;
    default:
        if (status >= 500) {
            e.type = "api_error";
            e.msg = "Internal server error";
        } else {
            e.msg = "Invalid request (fusebox mock fault).";
        }
    }
    return e;
}

static void json_or_null(mock_buf *b, const char *s) {
    if (s == NULL)
        mock_buf_puts(b, "null");
    else
        mock_buf_json_string(b, s);
}

void mock_wire_error(mock_buf *b, const mock_reply *r, int status, mock_flavor flavor,
                     const char *message) {
    char msg[512];
    int64_t window = r->context_window > 0       ? r->context_window
                     : r->dialect == MOCK_OPENAI ? 128000
                                                 : 200000;
    int64_t used = r->prompt_tokens > window ? r->prompt_tokens : window + 1;
    if (r->dialect == MOCK_OPENAI) {
        err_info e = openai_error(status, flavor);
        if (flavor == MOCK_FLAVOR_ROUTING && status < 500) {
            e.type = "invalid_request_error";
            e.code = e.param = NULL;
        }
        if (message == NULL && flavor == MOCK_FLAVOR_CONTEXT) {
            snprintf(msg, sizeof msg,
                     "This model's maximum context length is %lld tokens. However, your messages "
                     "resulted in %lld tokens. Please reduce the length of the messages.",
                     (long long)window, (long long)used);
            message = msg;
        } else if (message == NULL && (flavor == MOCK_FLAVOR_RATE_LIMIT ||
                                       (status == 429 && flavor == MOCK_FLAVOR_PLAIN))) {
            snprintf(msg, sizeof msg,
                     "Rate limit reached for %.100s in organization org-fusebox on requests per "
                     "min (RPM): Limit 60, Used 60, Requested 1. Please try again in %gs. Visit "
                     "https://platform.openai.com/account/rate-limits to learn more.",
                     r->model ? r->model : "model", r->retry_hint_s > 0 ? r->retry_hint_s : 1.0);
            message = msg;
        }
        mock_buf_puts(b, "{\"error\":{\"message\":");
        mock_buf_json_string(b, message ? message : e.msg);
        mock_buf_puts(b, ",\"type\":");
        json_or_null(b, e.type);
        mock_buf_puts(b, ",\"param\":");
        json_or_null(b, e.param);
        mock_buf_puts(b, ",\"code\":");
        json_or_null(b, e.code);
        mock_buf_puts(b, "}}");
    } else {
        err_info e = anthropic_error(status, flavor);
        if (message == NULL && flavor == MOCK_FLAVOR_CONTEXT) {
            snprintf(msg, sizeof msg, "prompt is too long: %lld tokens > %lld maximum",
                     (long long)used, (long long)window);
            message = msg;
        }
        mock_buf_puts(b, "{\"type\":\"error\",\"error\":{\"type\":");
        json_or_null(b, e.type);
        mock_buf_puts(b, ",\"message\":");
        mock_buf_json_string(b, message ? message : e.msg);
        if (e.code != NULL) mock_buf_printf(b, ",\"details\":{\"error_code\":\"%s\"}", e.code);
        mock_buf_puts(b, "},\"request_id\":");
        json_or_null(b, r->request_id);
        mock_buf_puts(b, "}");
    }
}

void mock_wire_models(mock_buf *b, mock_dialect d) {
    if (d == MOCK_OPENAI) {
        mock_buf_puts(b, "{\"object\":\"list\",\"data\":["
                         "{\"id\":\"gpt-4o-mini\",\"object\":\"model\",\"created\":1721172741,"
                         "\"owned_by\":\"fusebox\"},"
                         "{\"id\":\"gpt-4o\",\"object\":\"model\",\"created\":1715367049,"
                         "\"owned_by\":\"fusebox\"}]}");
    } else {
        mock_buf_puts(b, "{\"data\":[{\"type\":\"model\",\"id\":\"claude-sonnet-4-5\","
                         "\"display_name\":\"Claude Sonnet 4.5 (fusebox mock)\","
                         "\"created_at\":\"2025-09-29T00:00:00Z\"}],\"has_more\":false,"
                         "\"first_id\":\"claude-sonnet-4-5\",\"last_id\":\"claude-sonnet-4-5\"}");
    }
}

/* ---- streams ------------------------------------------------------------------------------- */

void mock_stream_init(mock_stream *s, const mock_reply *r, mock_stream_end end, int64_t end_after) {
    memset(s, 0, sizeof *s);
    s->r = *r;
    if (s->r.refusal) s->r.tokens = 0;
    if (s->r.n <= 0) s->r.n = 1;
    s->end = end;
    s->end_at = (end_after < 0 || end_after > s->r.tokens) ? s->r.tokens : end_after;
    s->step = MOCK_STEP_PRE;
}

static void oa_chunk_head(mock_buf *b, const mock_stream *s) {
    mock_buf_printf(b,
                    "data: {\"id\":\"%s\",\"object\":\"chat.completion.chunk\",\"created\":%lld,"
                    "\"model\":",
                    s->r.id, (long long)s->r.created_s);
    mock_buf_json_string(b, s->r.model);
    mock_buf_puts(b, ",\"system_fingerprint\":\"fp_fusebox\",\"choices\":[");
}

static void oa_chunk_tail(mock_buf *b, const mock_stream *s) {
    mock_buf_puts(b, s->r.include_usage ? "],\"usage\":null}\n\n" : "]}\n\n");
}

static void an_event(mock_buf *b, const char *name) {
    mock_buf_printf(b, "event: %s\ndata: ", name);
}

static bool in_fault(const mock_stream *s) {
    return s->end != MOCK_END_NORMAL && s->end != MOCK_END_NOTERM;
}

static void emit_pre(mock_stream *s, mock_buf *b) {
    if (s->r.dialect == MOCK_OPENAI) {
        for (int i = 0; i < s->r.n; i++) {
            oa_chunk_head(b, s);
            mock_buf_printf(b,
                            "{\"index\":%d,\"delta\":{\"role\":\"assistant\",\"content\":\"\","
                            "\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}",
                            i);
            oa_chunk_tail(b, s);
        }
    } else {
        an_event(b, "message_start");
        mock_buf_printf(b,
                        "{\"type\":\"message_start\",\"message\":{\"id\":\"%s\",\"type\":"
                        "\"message\",\"role\":\"assistant\",\"content\":[],\"model\":",
                        s->r.id);
        mock_buf_json_string(b, s->r.model);
        mock_buf_printf(b,
                        ",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":"
                        "%lld,\"output_tokens\":1,\"cache_creation_input_tokens\":0,"
                        "\"cache_read_input_tokens\":0}}}\n\n",
                        (long long)s->r.prompt_tokens);
        an_event(b, "content_block_start");
        mock_buf_puts(b, "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                         "{\"type\":\"text\",\"text\":\"\"}}\n\n");
        an_event(b, "ping");
        mock_buf_puts(b, "{\"type\": \"ping\"}\n\n");
    }
}

static void emit_content(mock_stream *s, mock_buf *b) {
    bool sp;
    const char *w = mock_wire_word(s->k, &sp);
    if (s->r.dialect == MOCK_OPENAI) {
        for (int i = 0; i < s->r.n; i++) {
            oa_chunk_head(b, s);
            mock_buf_printf(b,
                            "{\"index\":%d,\"delta\":{\"content\":\"%s%s\"},\"logprobs\":null,"
                            "\"finish_reason\":null}",
                            i, sp ? " " : "", w);
            oa_chunk_tail(b, s);
        }
    } else {
        an_event(b, "content_block_delta");
        mock_buf_printf(b,
                        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                        "\"text_delta\",\"text\":\"%s%s\"}}\n\n",
                        sp ? " " : "", w);
    }
}

static void emit_fault(mock_stream *s, mock_buf *b) {
    bool oa = s->r.dialect == MOCK_OPENAI;
    switch (s->end) {
    case MOCK_END_CUT:
        s->cut = true;
        break;
    case MOCK_END_MALFORMED:
        if (oa) {
            oa_chunk_head(b, s);
            mock_buf_puts(b, "{\"index\":0,\"delta\":{\"content\":\"broken\n\n");
        } else {
            an_event(b, "content_block_delta");
            mock_buf_puts(b, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\n\n");
        }
        break;
    case MOCK_END_ERROR:
        if (oa) {
            mock_buf_puts(b, "data: {\"error\":{\"message\":\"The server had an error while "
                             "processing your request. Sorry about that!\",\"type\":"
                             "\"server_error\",\"param\":null,\"code\":null}}\n\n");
        } else {
            an_event(b, "error");
            mock_buf_puts(b, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                             "\"message\":\"Overloaded\"}}\n\n");
        }
        break;
    default: /* TRUNCATE: a clean end with nothing more */
        break;
    }
}

static void emit_post(mock_stream *s, mock_buf *b) {
    const char *fr = finish_reason(&s->r);
    int64_t completion = s->r.tokens * s->r.n;
    bool term = s->end != MOCK_END_NOTERM;
    if (s->r.dialect == MOCK_OPENAI) {
        for (int i = 0; i < s->r.n; i++) {
            oa_chunk_head(b, s);
            mock_buf_printf(
                b, "{\"index\":%d,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"%s\"}", i, fr);
            oa_chunk_tail(b, s);
        }
        if (s->r.include_usage) {
            oa_chunk_head(b, s);
            mock_buf_printf(b,
                            "],\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
                            "\"total_tokens\":%lld}}\n\n",
                            (long long)s->r.prompt_tokens, (long long)completion,
                            (long long)(s->r.prompt_tokens + completion));
        }
        if (term) mock_buf_puts(b, "data: [DONE]\n\n");
    } else {
        an_event(b, "content_block_stop");
        mock_buf_puts(b, "{\"type\":\"content_block_stop\",\"index\":0}\n\n");
        an_event(b, "message_delta");
        mock_buf_printf(b,
                        "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\","
                        "\"stop_sequence\":null},\"usage\":{\"output_tokens\":%lld}}\n\n",
                        fr, (long long)completion);
        if (term) {
            an_event(b, "message_stop");
            mock_buf_puts(b, "{\"type\":\"message_stop\"}\n\n");
        }
    }
}

void mock_stream_emit(mock_stream *s, mock_buf *b) {
    switch (s->step) {
    case MOCK_STEP_PRE:
        emit_pre(s, b);
        s->step = MOCK_STEP_CONTENT;
        break;
    case MOCK_STEP_CONTENT:
        emit_content(s, b);
        s->k++;
        break;
    case MOCK_STEP_FAULT:
        emit_fault(s, b);
        s->step = MOCK_STEP_END;
        return;
    case MOCK_STEP_POST:
        emit_post(s, b);
        s->step = MOCK_STEP_END;
        return;
    case MOCK_STEP_END:
        return;
    }
    /* After PRE or a content chunk: what comes next? */
    if (in_fault(s) && s->k == s->end_at)
        s->step = MOCK_STEP_FAULT;
    else if (s->k >= s->r.tokens)
        s->step = MOCK_STEP_POST;
    else
        s->step = MOCK_STEP_CONTENT;
}

/* ---- header values ------------------------------------------------------------------------- */

void mock_wire_go_duration(fb_time_us d_us, char *out, size_t len) {
    if (d_us <= 0) {
        snprintf(out, len, "0s");
        return;
    }
    if (d_us < FB_US_PER_S) {
        /* Sub-second: milliseconds, fractional when needed ("12ms", "1.5ms"). */
        if (d_us % 1000 == 0)
            snprintf(out, len, "%lldms", (long long)(d_us / 1000));
        else {
            snprintf(out, len, "%lld.%03lld", (long long)(d_us / 1000), (long long)(d_us % 1000));
            char *p = out + strlen(out);
            while (p[-1] == '0') *--p = '\0';
            snprintf(p, len - (size_t)(p - out), "ms");
        }
        return;
    }
    long long h = (long long)(d_us / (3600 * FB_US_PER_S));
    long long m = (long long)(d_us / FB_US_PER_MIN % 60);
    long long s = (long long)(d_us / FB_US_PER_S % 60);
    long long frac = (long long)(d_us % FB_US_PER_S);
    char secs[32];
    if (frac == 0)
        snprintf(secs, sizeof secs, "%llds", s);
    else {
        snprintf(secs, sizeof secs, "%lld.%06lld", s, frac);
        char *p = secs + strlen(secs);
        while (p[-1] == '0') *--p = '\0';
        snprintf(p, sizeof secs - (size_t)(p - secs), "s");
    }
    if (h > 0)
        snprintf(out, len, "%lldh%lldm%s", h, m, secs);
    else if (m > 0)
        snprintf(out, len, "%lldm%s", m, secs);
    else
        snprintf(out, len, "%s", secs);
}

void mock_wire_rfc3339(int64_t epoch_s, char *out, size_t len) {
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void mock_wire_http_date(int64_t epoch_s, char *out, size_t len) {
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, len, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
             months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void mock_wire_id(uint64_t seed, uint64_t seq, bool base62, char *out, size_t nchars) {
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const uint64_t radix = base62 ? 62 : 16;
    uint64_t x = 0;
    for (size_t i = 0; i < nchars; i++) {
        if (i % 8 == 0) x = (uint64_t)(mock_draw(seed, seq, i) * 0x1.0p53);
        out[i] = alphabet[x % radix];
        x /= radix;
    }
    out[nchars] = '\0';
}

int64_t mock_wire_chars(const char *utf8) {
    int64_t n = 0;
    for (const unsigned char *p = (const unsigned char *)utf8; *p != '\0'; p++)
        if ((*p & 0xC0) != 0x80) n++;
    return n;
}
