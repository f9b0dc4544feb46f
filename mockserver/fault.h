/*
 * fault.h - what the mock does to one attempt, and the timeline that decides it.
 *
 * Two inputs decide an attempt's fate:
 *   - a per-request spec (the x-fusebox-fault header or an "fb-<spec>" model
 *     name), parsed by mock_spec_parse() in spec.c;
 *   - the fault timeline: a plain array of mock_fault, active in windows of
 *     timeline time, each hitting a seeded fraction of attempts.
 * Both produce a mock_action, which the server executes. The timeline array
 * is the scenario format's provider "faults" shape, parsed and validated by
 * the scenario loader (sim_faults_parse) so the mock and the simulator read
 * a script the same way.
 * See docs/mock.md.
 */
#ifndef MOCK_FAULT_H
#define MOCK_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/fb.h"
#include "sim/scenario.h"

#define MOCK_FAULTS_MAX 256

typedef enum mock_fault_kind {
    MOCK_FAULT_OUTAGE = 0, /* status (default 503), optional retry_after */
    MOCK_FAULT_RATE_LIMIT, /* status (default 429), optional retry_after */
    MOCK_FAULT_HANG,       /* accept, never answer */
    MOCK_FAULT_SLOW,       /* latency x factor */
    MOCK_FAULT_BROWNOUT,   /* capacity x capacity */
    MOCK_FAULT_MIDSTREAM,  /* stream fails after after_tokens tokens */
    MOCK_FAULT_RESET,      /* close the connection before any header */
    MOCK_FAULT_POLICY,     /* content-filter rejection */
    MOCK_FAULT_FLAP        /* status for the first half of every period */
} mock_fault_kind;

typedef enum mock_midstream_mode {
    MOCK_MIDSTREAM_ERROR = 0, /* in-band error event, then a clean end */
    MOCK_MIDSTREAM_CUT,       /* abortive close: no terminating chunk */
    MOCK_MIDSTREAM_TRUNCATE   /* clean end without finish events or terminator */
} mock_midstream_mode;

/* One timeline entry. Times are timeline time (real time x time_scale). */
typedef struct mock_fault {
    mock_fault_kind kind;
    fb_time_us at_us;          /* window start; default 0 */
    fb_time_us for_us;         /* window length; FB_TIME_MAX = to the end (default) */
    double fraction;           /* share of attempts hit, [0,1]; default 1 */
    int status;                /* outage, rate_limit, flap */
    fb_time_us retry_after_us; /* outage, rate_limit; FB_TIME_NONE = no header */
    double factor;             /* slow: >= 1 */
    double capacity;           /* brownout: (0, 1] */
    int64_t after_tokens;      /* midstream: content tokens sent before the failure */
    mock_midstream_mode mode;  /* midstream */
    fb_time_us period_us;      /* flap */
    int flavor;                /* outage "error": a mock_flavor (0 = the status's own body) */
} mock_fault;

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
    fb_time_us ttft_us;    /* < 0: configured latency */
    int64_t tokens;        /* < 0: min(max_tokens, configured cap) */
    double slow;           /* latency factor */
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

/* The mock's form of a scenario fault. */
void mock_fault_from_sim(const sim_fault *s, mock_fault *f);
/*
 * Parse a fault timeline from JSON text (an array, or {"faults": [...]}) with
 * the scenario loader's rules; "at"/"for" may be left out (always active).
 * Fills at most `cap` entries; returns FB_OK or FB_EPARSE with *err filled.
 */
int mock_faults_parse(const char *text, size_t len, mock_fault *out, size_t cap, size_t *n_out,
                      mock_parse_error *err);

/*
 * Decide what the timeline does to one attempt at timeline time t_us.
 * Fractions draw from a PRNG keyed by (seed, attempt, fault index), so the
 * same request order gives the same faults. Modifiers (slow, brownout,
 * midstream) accumulate; the first terminal fault hit (outage, rate_limit,
 * hang, reset, policy, flap) wins. *capacity_scale gets the product of the
 * active brownouts (1 when none).
 */
void mock_timeline_decide(const mock_fault *faults, size_t n, fb_time_us t_us, uint64_t seed,
                          uint64_t attempt, mock_action *act, double *capacity_scale);

/*
 * Parse a per-request spec ("429-retry-after-2", "stall-3-2s", ...) into
 * *act (initialised by the caller). Returns FB_OK or FB_EPARSE with *err.
 */
int mock_spec_parse(const char *spec, mock_action *act, mock_parse_error *err);

/* Uniform double in [0,1) from (seed, a, b): the mock's fraction draws. */
double mock_draw(uint64_t seed, uint64_t a, uint64_t b);

#endif /* MOCK_FAULT_H */
