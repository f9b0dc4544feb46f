/*
 * content.c - what an answer says: the deterministic filler (one word per token) or a JSON
 * text cut into pieces of MOCK_JSON_PIECE bytes (never inside a UTF-8 sequence), and the
 * prompt's size in characters.
 */
#include <string.h>

#include "mockserver/api.h"

/* The filler's words, listed once: as an array, and as one text of a whole cycle. */
/* clang-format off */
#define WORDS                                                                                    \
    W("The") W("mock") W("provider") W("answers") W("with") W("deterministic") W("filler")      \
    W("text") W("so") W("that") W("every") W("run") W("sends") W("the") W("same") W("tokens")   \
    W("through") W("every") W("client") W("under") W("test") W("and") W("no") W("model")        \
    W("is") W("ever") W("called") W("at") W("all") W("here") W("today") W("again")
/* clang-format on */
#define W(w) w,
static const char *const words[] = {WORDS};
#undef W
#define N_WORDS ((int64_t)(sizeof words / sizeof words[0]))
/* Each word after a space: a text of T words is T words of this (repeated), less the first
 * space. */
#define W(w) " " w
static const char cycle[] = WORDS;
#undef W
/* Each word's length with its space. */
#define W(w) sizeof(" " w) - 1,
static const unsigned char spaced_len[] = {WORDS};
#undef W

const char *mock_wire_word(int64_t k, bool *leading_space) {
    *leading_space = k > 0;
    return words[k % N_WORDS];
}

/* A piece boundary near byte `at` of the JSON text, moved past continuation bytes. */
static size_t boundary(const mock_reply *r, size_t at) {
    if (at >= r->json_len) return r->json_len;
    while (at < r->json_len && ((unsigned char)r->json[at] & 0xC0) == 0x80) at++;
    return at;
}

size_t mock_piece(const mock_reply *r, int64_t k, char out[MOCK_PIECE_MAX]) {
    if (r->output == MOCK_OUT_TEXT) {
        bool sp;
        const char *w = mock_wire_word(k, &sp);
        size_t n = strlen(w);
        out[0] = ' ';
        memcpy(out + (sp ? 1 : 0), w, n);
        return n + (sp ? 1 : 0);
    }
    size_t a = boundary(r, (size_t)k * MOCK_JSON_PIECE);
    size_t b = boundary(r, (size_t)(k + 1) * MOCK_JSON_PIECE);
    memcpy(out, r->json + a, b - a);
    return b - a;
}

void mock_piece_json(util_buf *b, const mock_reply *r, int64_t k) {
    char p[MOCK_PIECE_MAX];
    mock_buf_json_escape(b, p, mock_piece(r, k, p));
}

void mock_text_json(util_buf *b, const mock_reply *r) {
    int64_t tokens = r->refusal ? 0 : r->tokens;
    if (r->output != MOCK_OUT_TEXT) {
        mock_buf_json_escape(b, r->json, boundary(r, (size_t)tokens * MOCK_JSON_PIECE));
        return;
    }
    /* The filler's words need no escaping: whole cycles of them at once, then the rest. */
    if (tokens <= 0) return;
    size_t left = (size_t)(tokens / N_WORDS) * (sizeof cycle - 1);
    for (int64_t k = 0; k < tokens % N_WORDS; k++) left += spaced_len[k];
    for (size_t skip = 1; left > skip; skip = 0) { /* the text's first space is not sent */
        size_t n = sizeof cycle - 1 < left ? sizeof cycle - 1 : left;
        util_buf_append(b, cycle + skip, n - skip);
        left -= n;
    }
}

int64_t mock_json_tokens(size_t len) {
    return (int64_t)((len + MOCK_JSON_PIECE - 1) / MOCK_JSON_PIECE);
}

bool mock_reply_hit_max(const mock_reply *r) {
    return r->max_tokens >= 0 && r->tokens >= r->max_tokens && !r->refusal &&
           r->output != MOCK_OUT_TOOL;
}

int64_t mock_wire_chars(const char *utf8) {
    int64_t n = 0;
    for (const unsigned char *p = (const unsigned char *)utf8; *p != '\0'; p++)
        if ((*p & 0xC0) != 0x80) n++;
    return n;
}

int64_t mock_content_chars(const cJSON *content) {
    if (cJSON_IsString(content)) return mock_wire_chars(content->valuestring);
    int64_t n = 0;
    const cJSON *part;
    const cJSON *list = cJSON_IsArray(content) ? content : NULL;
    cJSON_ArrayForEach(part, list) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(t)) n += mock_wire_chars(t->valuestring);
    }
    return n;
}
