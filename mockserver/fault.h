/*
 * fault.h - what the mock does to one attempt.
 *
 * Two inputs decide an attempt's fate:
 *   - a per-request spec (the x-fusebox-fault header or an "fb-<spec>" model
 *     name), parsed by mock_spec_parse() in spec.c;
 *   - the fault timeline: the scenario format's provider "faults" (an array
 *     of sim_fault, parsed by the scenario loader), decided by the
 *     simulator's own fault model (scenario/fault.h), so the mock and the
 *     simulator read a script and apply it the same way.
 * Both produce a mock_action, which the server executes.
 * See docs/mock.md.
 */
#ifndef MOCK_FAULT_H
#define MOCK_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/fb.h"
#include "scenario/fault.h"
#include "scenario/scenario.h"

#define MOCK_FAULTS_MAX 256

/* Where a parser failed: JSON path (or spec term) and a message. */
typedef struct mock_parse_error {
    char path[256];
    char msg[512];
} mock_parse_error;

/* What happens at the end of a stream (or to a body) after `after` tokens. */
typedef enum mock_stream_end {
    MOCK_END_NORMAL = 0,
    MOCK_END_CUT,       /* abortive close */
    MOCK_END_TRUNCATE,  /* clean end, no finish events / terminator */
    MOCK_END_NOTERM,    /* everything but the terminator ([DONE] / message_stop) */
    MOCK_END_MALFORMED, /* one malformed event, then a clean end */
    MOCK_END_ERROR      /* in-band error event, then a clean end */
} mock_stream_end;

typedef enum mock_flavor {
    MOCK_FLAVOR_PLAIN = 0,  /* the provider's generic body for `status` */
    MOCK_FLAVOR_CONTEXT,    /* context length exceeded (400) */
    MOCK_FLAVOR_FILTER,     /* content filter / policy (400) */
    MOCK_FLAVOR_QUOTA,      /* insufficient quota / spend limit (429) */
    MOCK_FLAVOR_OVERLOADED, /* brownout or concurrency overload */
    MOCK_FLAVOR_ROUTING,    /* unknown path, wrong method, bad body: no error code */
    MOCK_FLAVOR_RATE_LIMIT, /* a rate-limit body whatever the status */
} mock_flavor;

typedef enum mock_retry_after {
    MOCK_RA_NONE = 0,
    MOCK_RA_SECONDS, /* retry-after: <seconds, possibly fractional> */
    MOCK_RA_DATE,    /* retry-after: <IMF-fixdate of now + seconds> */
} mock_retry_after;

/* The decided fate of one attempt. mock_action_init() gives "answer normally". */
typedef struct mock_action {
    int status; /* 0: answer normally with 200 */
    mock_flavor flavor;
    bool hang;
    bool reset;
    bool refusal; /* 200 with finish_reason content_filter / stop_reason refusal */
    mock_retry_after ra_kind;
    double retry_after_s;  /* value for ra_kind */
    double retry_after_ms; /* < 0: no retry-after-ms header */
    int should_retry;      /* -1: no header, 0: false, 1: true */
    bool no_retry_after;   /* a 429 without the dialect's default retry-after */
    fb_time_us ttft_us;    /* < 0: configured latency */
    int64_t tokens;        /* < 0: min(max_tokens, configured cap) */
    double slow;           /* latency factor */
    fb_time_us delay_us;   /* a slow fault's delay: added to the first token (timeline time) */
    int64_t stall_after;   /* < 0: no stall */
    fb_time_us stall_us;
    mock_stream_end end;
    int64_t end_after; /* content chunks before `end` applies; < 0 = all */
    int64_t times;     /* > 0: apply to the first `times` attempts per key only */
    char label[96];    /* what was applied, for the attempt log; "" = nothing */
} mock_action;

void mock_action_init(mock_action *a);
/* True when the action changes anything about the answer. */
bool mock_action_is_fault(const mock_action *a);

/* "250us", "250ms", "30s", "1.5s", "5m" (or "5min"), "1h", "1d", "0" -> microseconds. */
int mock_duration_parse(const char *s, fb_time_us *out_us);

/*
 * Parse a fault timeline from JSON text (an array, or {"faults": [...]}) with
 * the scenario loader (scn_faults_parse); "at"/"for" may be left out (always
 * active). Fills at most `cap` entries; returns FB_OK or FB_EPARSE with *err.
 */
int mock_faults_parse(const char *text, size_t len, sim_fault *out, size_t cap, size_t *n_out,
                      mock_parse_error *err);

/*
 * What the timeline does to one attempt at timeline time t_us: both phases
 * of scn_fault_decide() at once, as a mock_action. A fault's fraction draws
 * from a PRNG keyed by (seed, attempt, fault index), so the same request
 * order gives the same faults; an even fault ("sampling": "even") counts the
 * attempts in even[0..n) instead (scn_fault_even_init with entity 0; NULL: it
 * draws), so the same request order gives the same faults too. `retry`: which
 * retry of its request the attempt is, 0 for a first attempt (a fault's
 * retry_fraction applies to the others, its share for that retry; the server
 * reads it from the request's x-stainless-retry-count).
 * *capacity_scale gets the share of capacity the active brownouts leave
 * (scn_fault_capacity; 1 when none).
 */
void mock_timeline_decide(const sim_fault *faults, size_t n, fb_time_us t_us, uint64_t seed,
                          uint64_t attempt, uint32_t retry, sim_fault_even *even, mock_action *act,
                          double *capacity_scale);

/*
 * Parse a per-request spec ("429-retry-after-2", "stall-3-2s", ...) into
 * *act (initialised by the caller). Returns FB_OK or FB_EPARSE with *err.
 */
int mock_spec_parse(const char *spec, mock_action *act, mock_parse_error *err);

/* Uniform double in [0,1) from (seed, a, b): the mock's fraction draws. */
double mock_draw(uint64_t seed, uint64_t a, uint64_t b);

#endif /* MOCK_FAULT_H */
