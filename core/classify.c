/*
 * classify.c - provider replies to outcomes, and outcomes to decisions.
 *
 * The outcome depends on the reply alone (fb_classify_outcome); what the
 * outcome means (retry, breaker effect, fallback) comes from the classifier's
 * table, so a caller can change a decision without touching this file.
 */
#include "classify.h"

#include <string.h>

static const char *const outcome_names[FB_OUT_COUNT] = {
#define FB_OUT_NAME(name, text) text,
    FB_OUTCOME_MAP(FB_OUT_NAME)
#undef FB_OUT_NAME
};

/* Defaults: the official OpenAI and Anthropic SDKs' retry rules (docs/classify.md). */
static const fb_outcome_rule default_rules[FB_OUT_COUNT] = {
    [FB_OUT_SUCCESS] = {.retry = false, .effect = FB_EFFECT_SUCCESS, .fallback = false},
    [FB_OUT_TRANSIENT] = {.retry = true, .effect = FB_EFFECT_FAILURE, .fallback = true},
    [FB_OUT_RATE_LIMITED] = {.retry = true, .effect = FB_EFFECT_IGNORE, .fallback = true},
    [FB_OUT_TIMEOUT] = {.retry = true, .effect = FB_EFFECT_FAILURE, .fallback = true},
    /* The provider answered: a caller's mistake says nothing about its health. */
    [FB_OUT_PERMANENT] = {.retry = false, .effect = FB_EFFECT_SUCCESS, .fallback = false},
    [FB_OUT_POLICY] = {.retry = false, .effect = FB_EFFECT_SUCCESS, .fallback = false},
    /* Another provider with a larger window may take the prompt. */
    [FB_OUT_CONTEXT_LENGTH] = {.retry = false, .effect = FB_EFFECT_SUCCESS, .fallback = true},
    [FB_OUT_CANCELLED] = {.retry = false, .effect = FB_EFFECT_CANCELLED, .fallback = false},
    /* A layer inside gave up without calling: another route may be open. */
    [FB_OUT_REJECTED] = {.retry = false, .effect = FB_EFFECT_IGNORE, .fallback = true},
};

static bool valid_switch(fb_switch s) {
    return s == FB_DEFAULT || s == FB_ON || s == FB_OFF;
}

int fb_classify_init(fb_classifier *c, const fb_classify_config *cfg) {
    static const fb_classify_config defaults = {0};
    if (c == NULL) return FB_EINVAL;
    if (cfg == NULL) cfg = &defaults;
    if (!valid_switch(cfg->rate_limit_trips) || !valid_switch(cfg->timeout_trips) ||
        !valid_switch(cfg->honor_should_retry) || !valid_switch(cfg->permanent_trips))
        return FB_EINVAL;

    memcpy(c->rules, default_rules, sizeof c->rules);
    if (cfg->rate_limit_trips == FB_ON) c->rules[FB_OUT_RATE_LIMITED].effect = FB_EFFECT_FAILURE;
    if (cfg->timeout_trips == FB_OFF) c->rules[FB_OUT_TIMEOUT].effect = FB_EFFECT_IGNORE;
    if (cfg->permanent_trips == FB_ON) {
        /* the misconfiguration the seed warns about: every error trips */
        c->rules[FB_OUT_PERMANENT].effect = FB_EFFECT_FAILURE;
        c->rules[FB_OUT_POLICY].effect = FB_EFFECT_FAILURE;
        c->rules[FB_OUT_CONTEXT_LENGTH].effect = FB_EFFECT_FAILURE;
    }
    c->honor_should_retry = cfg->honor_should_retry != FB_OFF;
    return FB_OK;
}

/*
 * An error reported in the body of a 2xx (a stream's in-band error event) is
 * the failure the same error would have been as a status: overloaded is a
 * 529, rate limit a 429, an unknown server error a 5xx.
 */
static fb_outcome outcome_of_kind(fb_error_kind k) {
    switch (k) {
    case FB_ERRKIND_CONTEXT_LENGTH:
        return FB_OUT_CONTEXT_LENGTH;
    case FB_ERRKIND_CONTENT_POLICY:
        return FB_OUT_POLICY;
    case FB_ERRKIND_RATE_LIMIT:
        return FB_OUT_RATE_LIMITED;
    case FB_ERRKIND_NONE:
        return FB_OUT_SUCCESS;
    case FB_ERRKIND_OVERLOADED:
    case FB_ERRKIND_OTHER:
    default:
        return FB_OUT_TRANSIENT;
    }
}

/* A transport-level failure's outcome. */
static fb_outcome outcome_of_transport(fb_transport t) {
    switch (t) {
    case FB_TRANSPORT_TIMEOUT:
        return FB_OUT_TIMEOUT;
    case FB_TRANSPORT_REJECTED:
        return FB_OUT_REJECTED;
    case FB_TRANSPORT_CONNECT:
    case FB_TRANSPORT_RESET:
    case FB_TRANSPORT_OTHER:
    default:
        return FB_OUT_TRANSIENT;
    }
}

/* The outcome of a reply; inline into fb_classify, which every attempt's answer goes through. */
static inline fb_outcome outcome_of_reply(const fb_reply *r) {
    if (r->transport != FB_TRANSPORT_NONE) return outcome_of_transport(r->transport);
    int s = r->status;
    /* First: a storm's every answer (none of the tests below takes a status >= 500). */
    if (s >= 500) return FB_OUT_TRANSIENT;
    if (s == 0) {
        /* No status but a complete read: an in-band error, else a broken reply. */
        return r->error_kind == FB_ERRKIND_NONE ? FB_OUT_TRANSIENT : outcome_of_kind(r->error_kind);
    }
    if (s >= 200 && s <= 299) return outcome_of_kind(r->error_kind);
    if (s == 408 || s == 409) return FB_OUT_TRANSIENT;
    if (s == 429) return FB_OUT_RATE_LIMITED;
    /* Every other status is the caller's problem; the body may say which one. */
    if (r->error_kind == FB_ERRKIND_CONTEXT_LENGTH) return FB_OUT_CONTEXT_LENGTH;
    if (r->error_kind == FB_ERRKIND_CONTENT_POLICY) return FB_OUT_POLICY;
    return FB_OUT_PERMANENT;
}

fb_outcome fb_classify_outcome(const fb_reply *r) {
    return outcome_of_reply(r);
}

fb_class fb_classify(const fb_classifier *c, const fb_reply *r) {
    fb_outcome o = outcome_of_reply(r);
    fb_outcome_rule rule = c->rules[o];
    fb_class k = {
        .outcome = o,
        .retryable = rule.retry,
        .effect = rule.effect,
        .may_fallback = rule.fallback,
        .after_first_token = r->after_first_token,
    };
    /* The SDKs consult x-should-retry before the status, and only on failures. */
    if (c->honor_should_retry && o != FB_OUT_SUCCESS && r->should_retry >= 0)
        k.retryable = r->should_retry > 0;
    return k;
}

static bool equals(const char *s, const char *lit) {
    return s != NULL && strcmp(s, lit) == 0;
}

static bool starts_with(const char *s, const char *prefix) {
    return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool empty(const char *s) {
    return s == NULL || s[0] == '\0';
}

fb_error_kind fb_classify_error_kind(const char *type, const char *code, const char *message) {
    if (equals(code, "context_length_exceeded")) return FB_ERRKIND_CONTEXT_LENGTH;
    if (equals(type, "invalid_request_error") &&
        (starts_with(message, "prompt is too long") ||
         starts_with(message, "input length and `max_tokens` exceed context limit")))
        return FB_ERRKIND_CONTEXT_LENGTH;
    if (equals(code, "content_filter") || equals(code, "content_policy_violation") ||
        equals(code, "invalid_prompt"))
        return FB_ERRKIND_CONTENT_POLICY;
    if (equals(type, "rate_limit_error") || equals(code, "rate_limit_exceeded"))
        return FB_ERRKIND_RATE_LIMIT;
    if (equals(type, "overloaded_error")) return FB_ERRKIND_OVERLOADED;
    if (empty(type) && empty(code) && empty(message)) return FB_ERRKIND_NONE;
    return FB_ERRKIND_OTHER;
}

const char *fb_outcome_name(fb_outcome o) {
    if ((unsigned)o >= FB_OUT_COUNT) return "unknown";
    return outcome_names[o];
}

int fb_outcome_parse(const char *name, fb_outcome *out) {
    if (name == NULL || out == NULL) return FB_EINVAL;
    for (int i = 0; i < FB_OUT_COUNT; i++) {
        if (strcmp(name, outcome_names[i]) == 0) {
            *out = (fb_outcome)i;
            return FB_OK;
        }
    }
    return FB_ENOTFOUND;
}
