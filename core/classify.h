/*
 * classify.h - turn a provider reply into an outcome, once.
 *
 * A reply (HTTP status, provider error kind, x-should-retry, transport error,
 * timeout, whether tokens had already streamed) becomes an fb_class: the
 * outcome plus three decisions taken from a table: is it retryable, what does
 * it mean to a circuit breaker, may the request fall back to another provider.
 * The table has defaults that match the official OpenAI and Anthropic SDKs and
 * can be edited by the caller after fb_classify_init(). See docs/classify.md.
 */
#ifndef FB_CLASSIFY_H
#define FB_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "fb.h"

#define FB_OUTCOME_MAP(XX)                                                                         \
    XX(SUCCESS, "success")                                                                         \
    XX(TRANSIENT, "transient")           /* 5xx, 529, 408, 409, connection refused/reset */        \
    XX(RATE_LIMITED, "rate_limited")     /* 429 */                                                 \
    XX(TIMEOUT, "timeout")               /* no complete answer within the attempt timeout */       \
    XX(PERMANENT, "permanent")           /* 400, 401, 403, 404, 413, 422, other 4xx */             \
    XX(POLICY, "policy")                 /* content-policy rejection */                            \
    XX(CONTEXT_LENGTH, "context_length") /* prompt longer than the model's window */               \
    XX(CANCELLED, "cancelled")           /* the caller gave up on the attempt */                   \
    XX(REJECTED, "rejected")             /* never sent: a layer inside refused (open, limited) */

typedef enum fb_outcome {
#define FB_OUT_ENUM(name, text) FB_OUT_##name,
    FB_OUTCOME_MAP(FB_OUT_ENUM)
#undef FB_OUT_ENUM
        FB_OUT_COUNT
} fb_outcome;

/* What an outcome means to a circuit breaker. */
typedef enum fb_effect {
    FB_EFFECT_IGNORE = 0, /* neither success nor failure; a half-open permit is released */
    FB_EFFECT_SUCCESS,
    FB_EFFECT_FAILURE,
    FB_EFFECT_CANCELLED /* the caller gave up; the breaker counts it as its cancelled_as */
} fb_effect;

typedef enum fb_transport {
    FB_TRANSPORT_NONE = 0, /* a complete HTTP response was read */
    FB_TRANSPORT_CONNECT,  /* connection refused / could not connect */
    FB_TRANSPORT_RESET,    /* connection reset or closed early */
    FB_TRANSPORT_TIMEOUT,  /* the attempt timed out */
    FB_TRANSPORT_OTHER,
    FB_TRANSPORT_REJECTED /* no call went out: a layer inside refused it (breaker, limiter) */
} fb_transport;

/* The provider's error, reduced to what changes a decision. */
typedef enum fb_error_kind {
    FB_ERRKIND_NONE = 0,
    FB_ERRKIND_CONTEXT_LENGTH, /* OpenAI context_length_exceeded, Anthropic "prompt is too long" */
    FB_ERRKIND_CONTENT_POLICY, /* OpenAI content_filter / content_policy_violation */
    FB_ERRKIND_RATE_LIMIT,     /* rate_limit_error, rate_limit_exceeded */
    FB_ERRKIND_OVERLOADED,     /* Anthropic overloaded_error */
    FB_ERRKIND_OTHER
} fb_error_kind;

typedef struct fb_reply {
    int status;               /* HTTP status; 0 when no response was read */
    fb_transport transport;   /* transport-level failure, if any */
    fb_error_kind error_kind; /* from the error body, if any */
    int8_t should_retry;      /* x-should-retry: -1 absent, 0 "false", 1 "true" */
    bool after_first_token;   /* the failure happened after output had streamed */
} fb_reply;

typedef struct fb_outcome_rule {
    bool retry;       /* retry the same provider */
    fb_effect effect; /* what the breaker records */
    bool fallback;    /* may move to the next provider in the chain */
} fb_outcome_rule;

/* What a failure does to a breaker's trip rules (zero: the rules decide). */
typedef enum fb_trip {
    FB_TRIP_RULES = 0, /* default: the breaker's rules decide */
    FB_TRIP_NOW,       /* opens the breaker at once (LiteLLM: a 429 in a group of several) */
    FB_TRIP_NEVER      /* counted, but never opens the breaker by itself */
} fb_trip;

typedef struct fb_class {
    fb_outcome outcome;
    bool retryable;
    fb_effect effect;
    bool may_fallback;
    bool after_first_token;
    /* Set by callers that map statuses to a library's rules; fb_classify() leaves them 0. */
    fb_trip trip;           /* for the breaker (fb_breaker_result.trip) */
    uint32_t failure_limit; /* for the breaker (fb_breaker_result.failure_limit); 0 = its own */
    uint32_t attempts;      /* the first failure of a request sets its attempts (LiteLLM
                               RetryPolicy: 1 + retries for its exception class); 0 = the
                               policy's */
} fb_class;

typedef struct fb_classify_config {
    fb_switch rate_limit_trips;   /* 429 counts as a breaker failure; default OFF (ignored) */
    fb_switch timeout_trips;      /* a timeout counts as a breaker failure; default ON */
    fb_switch honor_should_retry; /* x-should-retry overrides retryable; default ON */
    fb_switch permanent_trips;    /* 4xx, policy and context-length answers count as breaker
                                     failures; default OFF (they are successes: the provider
                                     answered). ON models a breaker that counts every error. */
} fb_classify_config;

typedef struct fb_classifier {
    fb_outcome_rule rules[FB_OUT_COUNT]; /* public: may be edited after init */
    bool honor_should_retry;
} fb_classifier;

/* Fill the default table, then apply the switches in cfg (which may be NULL). */
int fb_classify_init(fb_classifier *c, const fb_classify_config *cfg);
/* Outcome of a reply and the decisions attached to it. */
fb_class fb_classify(const fb_classifier *c, const fb_reply *r);
/* Outcome of a reply alone (status, transport, error kind). */
fb_outcome fb_classify_outcome(const fb_reply *r);
/*
 * Reduce a provider error body's fields to an fb_error_kind. Any argument may
 * be NULL. Recognises the OpenAI and Anthropic spellings (docs/classify.md).
 */
fb_error_kind fb_classify_error_kind(const char *type, const char *code, const char *message);

const char *fb_outcome_name(fb_outcome o);
/* Parse an outcome name back; FB_ENOTFOUND when unknown. */
int fb_outcome_parse(const char *name, fb_outcome *out);

#endif /* FB_CLASSIFY_H */
