/* wire.c - request bodies and answers, in the OpenAI and Anthropic dialects; see wire.h. */
#include "live/wire.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/json.h"

static const char *const dialect_names[] = {"openai", "anthropic"};

int live_dialect_parse(const char *s, live_dialect *out) {
    for (int d = LIVE_OPENAI; d <= LIVE_ANTHROPIC; d++) {
        if (strcmp(s, dialect_names[d]) == 0) {
            *out = (live_dialect)d;
            return FB_OK;
        }
    }
    return FB_EINVAL;
}

const char *live_dialect_name(live_dialect d) {
    return d == LIVE_ANTHROPIC ? dialect_names[1] : dialect_names[0];
}

/* Case-insensitive substring. */
static bool mentions(const char *s, const char *word) {
    size_t n = strlen(word);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == word[i]) i++;
        if (i == n) return true;
    }
    return false;
}

live_dialect live_dialect_guess(const char *provider) {
    return mentions(provider, "anthropic") || mentions(provider, "claude") ? LIVE_ANTHROPIC
                                                                           : LIVE_OPENAI;
}

const char *live_dialect_path(live_dialect d) {
    return d == LIVE_ANTHROPIC ? "/v1/messages" : "/v1/chat/completions";
}

static void put_json_string(util_buf *b, const char *s) {
    util_out o = util_buf_out(b);
    util_json_string(&o, s, 0);
}

/* Filler: words of three letters and a space, four characters per token. */
static void put_prompt(util_buf *b, uint32_t tokens) {
    static const char words[] = "the and for you are not all any can had her was one our out day "
                                "get has him his how man new now old see two way who boy did its "
                                "let put say she too use ";
    const size_t nwords = (sizeof words - 1) / 4;
    if (tokens > LIVE_PROMPT_TOKENS_MAX) tokens = LIVE_PROMPT_TOKENS_MAX;
    if (tokens == 0) tokens = 1;
    for (uint32_t i = 0; i < tokens;) {
        uint32_t k = i % (uint32_t)nwords;
        uint32_t run = (uint32_t)nwords - k;
        if (run > tokens - i) run = tokens - i;
        util_buf_append(b, words + 4 * k, 4 * (size_t)run);
        i += run;
    }
}

/* A template like the mock's bodies (docs/architecture.md, "Where JSON is written"): the prompt
 * goes into its string in pieces, which util_json does not write. */
void live_wire_request(util_buf *b, live_dialect d, const char *model, uint32_t tokens_in,
                       uint32_t tokens_out, bool stream) {
    char num[64];
    util_buf_puts(b, "{\"model\":");
    put_json_string(b, model);
    snprintf(num, sizeof num, ",\"%s\":%u",
             d == LIVE_ANTHROPIC ? "max_tokens" : "max_completion_tokens",
             tokens_out > 0 ? tokens_out : 1);
    util_buf_puts(b, num);
    if (stream) {
        util_buf_puts(b, ",\"stream\":true");
        if (d == LIVE_OPENAI) util_buf_puts(b, ",\"stream_options\":{\"include_usage\":true}");
    }
    util_buf_puts(b, ",\"messages\":[{\"role\":\"user\",\"content\":\"");
    put_prompt(b, tokens_in);
    util_buf_puts(b, "\"}]}");
}

static const char *str_item(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The error object's fields: {"error": {...}} (OpenAI, and Anthropic inside "type":"error"). */
static fb_error_kind kind_of(const cJSON *root) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (cJSON_IsObject(e))
        return fb_classify_error_kind(str_item(e, "type"), str_item(e, "code"),
                                      str_item(e, "message"));
    if (cJSON_IsString(e)) return fb_classify_error_kind(NULL, NULL, e->valuestring);
    return FB_ERRKIND_NONE;
}

fb_error_kind live_wire_error_kind(const char *body, size_t len) {
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (root == NULL) return FB_ERRKIND_NONE;
    fb_error_kind k = kind_of(root);
    cJSON_Delete(root);
    return k;
}

static uint32_t count_of(const cJSON *v) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 0) return 0;
    return v->valuedouble > 4e9 ? 4000000000u : (uint32_t)v->valuedouble;
}

/* src into dst as a trace attribute: printable ASCII, up to a backslash or the end. */
static void safe_copy(char *dst, size_t cap, const char *src, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch == '\\' || ch == '"' || ch < 0x20 || ch > 0x7e) break;
        dst[k++] = (char)ch;
    }
    dst[k] = '\0';
}

static void meta_str(char *dst, size_t cap, const char *v) {
    if (v != NULL) safe_copy(dst, cap, v, strlen(v));
}

static void body_meta(live_dialect d, const cJSON *root, const cJSON *c0, live_meta *m) {
    memset(m, 0, sizeof *m);
    meta_str(m->model, sizeof m->model, str_item(root, "model"));
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (d == LIVE_OPENAI) {
        meta_str(m->finish, sizeof m->finish, str_item(c0, "finish_reason"));
        m->tokens_in = count_of(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens"));
    } else {
        meta_str(m->finish, sizeof m->finish, str_item(root, "stop_reason"));
        m->tokens_in = count_of(cJSON_GetObjectItemCaseSensitive(usage, "input_tokens"));
    }
}

int live_wire_success(live_dialect d, const char *body, size_t len, uint32_t *tokens_out,
                      bool *refused, live_meta *meta) {
    cJSON *root = cJSON_ParseWithLength(body, len);
    int rc = FB_EPARSE;
    *tokens_out = 0;
    *refused = false;
    if (!cJSON_IsObject(root)) goto free_root;
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (d == LIVE_OPENAI) {
        const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
        const cJSON *c0 = cJSON_GetArrayItem(choices, 0);
        if (!cJSON_IsObject(c0)) goto free_root;
        const char *fr = str_item(c0, "finish_reason");
        *refused = fr != NULL && strcmp(fr, "content_filter") == 0;
        *tokens_out = count_of(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens"));
    } else {
        if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "content"))) goto free_root;
        const char *sr = str_item(root, "stop_reason");
        *refused = sr != NULL && strcmp(sr, "refusal") == 0;
        *tokens_out = count_of(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens"));
    }
    if (meta != NULL)
        body_meta(d, root, cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "choices"), 0),
                  meta);
    rc = FB_OK;
free_root:
    cJSON_Delete(root);
    return rc;
}

void live_stream_init(live_stream *st, live_dialect d) {
    memset(st, 0, sizeof *st);
    st->dialect = d;
}

/* A JSON object's text, judged by its ends: enough to catch a cut or garbled event cheaply. */
static bool looks_like_object(const char *s, size_t len) {
    while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
    while (len > 0 && isspace((unsigned char)*s)) s++, len--;
    return len >= 2 && s[0] == '{' && s[len - 1] == '}';
}

/* The number after `"key":` in s, or 0. */
static uint32_t number_after(const char *s, const char *key) {
    const char *p = strstr(s, key);
    if (p == NULL) return 0;
    p += strlen(key);
    while (*p == ' ') p++;
    unsigned long v = strtoul(p, NULL, 10);
    return v > 4000000000ul ? 4000000000u : (uint32_t)v;
}

/* The string after `"key":"` in s into dst (safe_copy), when there is one. */
static void string_after(const char *s, const char *key, char *dst, size_t cap) {
    const char *p = strstr(s, key);
    if (p == NULL) return;
    p += strlen(key);
    const char *q = strchr(p, '"');
    if (q != NULL) safe_copy(dst, cap, p, (size_t)(q - p));
}

/* The model (first named), the stop reason (last given), the prompt tokens. */
static void stream_meta(live_stream *st, const char *data) {
    live_meta *m = &st->meta;
    if (m->model[0] == '\0') string_after(data, "\"model\":\"", m->model, sizeof m->model);
    bool oa = st->dialect == LIVE_OPENAI;
    string_after(data, oa ? "\"finish_reason\":\"" : "\"stop_reason\":\"", m->finish,
                 sizeof m->finish);
    uint32_t in = number_after(data, oa ? "\"prompt_tokens\":" : "\"input_tokens\":");
    if (in > 0) m->tokens_in = in;
}

static void in_band_error(live_stream *st, const char *data, size_t len) {
    st->error = true;
    cJSON *root = cJSON_ParseWithLength(data, len);
    st->error_kind = root ? kind_of(root) : FB_ERRKIND_NONE;
    cJSON_Delete(root);
    if (st->error_kind == FB_ERRKIND_NONE) st->error_kind = FB_ERRKIND_OTHER;
}

/*
 * Content chunks are recognised by their text, not parsed: a stream carries
 * one event per token and parsing each would cost more than the rest of the
 * driver. Errors, which are rare, are parsed.
 */
void live_stream_event(live_stream *st, const char *event, const char *data, size_t len) {
    if (st->done || st->error || st->malformed) return; /* the SDKs stop reading there */
    if (st->dialect == LIVE_OPENAI) {
        if (strcmp(data, "[DONE]") == 0) {
            st->done = true;
            return;
        }
        if (!looks_like_object(data, len)) {
            st->malformed = true;
            return;
        }
        if (strcmp(event, "error") == 0 || strncmp(data, "{\"error\"", 8) == 0) {
            in_band_error(st, data, len);
            return;
        }
        stream_meta(st, data);
        const char *delta = strstr(data, "\"delta\":{");
        const char *content = delta ? strstr(delta, "\"content\":\"") : NULL;
        if (content != NULL && content[11] != '"') st->chunks++;
        if (strstr(data, "\"finish_reason\":\"content_filter\"")) st->refused = true;
        uint32_t u = number_after(data, "\"completion_tokens\":");
        if (u > 0) st->usage_tokens = u;
        return;
    }
    if (strcmp(event, "ping") == 0) return;
    if (!looks_like_object(data, len)) {
        st->malformed = true;
        return;
    }
    if (strcmp(event, "error") == 0) {
        in_band_error(st, data, len);
    } else if (strcmp(event, "content_block_delta") == 0) {
        /* a token: nothing else to read there */
        st->chunks++;
    } else if (strcmp(event, "message_start") == 0) {
        stream_meta(st, data);
    } else if (strcmp(event, "message_delta") == 0) {
        stream_meta(st, data);
        if (strstr(data, "\"stop_reason\":\"refusal\"")) st->refused = true;
        uint32_t u = number_after(data, "\"output_tokens\":");
        if (u > 0) st->usage_tokens = u;
    } else if (strcmp(event, "message_stop") == 0) {
        st->done = true;
    }
}

uint32_t live_stream_tokens(const live_stream *st) {
    return st->usage_tokens > 0 ? st->usage_tokens : st->chunks;
}
