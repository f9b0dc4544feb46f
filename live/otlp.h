/*
 * otlp.h - a live run's requests and attempts as OpenTelemetry traces, in
 * OTLP/JSON (opentelemetry-proto v1.11.0, docs/specification.md "JSON
 * Protobuf Encoding": lowerCamelCase keys, trace and span ids in hex, enums
 * as integers, 64-bit integers as decimal strings).
 *
 * Each logical request (a request of a class that calls a provider) is a
 * trace whose root is a GenAI inference span ("chat MODEL", kind CLIENT);
 * each HTTP attempt it made is a child HTTP client span ("POST PATH", kind
 * CLIENT) with http.request.resend_count from its second attempt on, as the
 * semantic conventions v1.41.0 describe (gen-ai/gen-ai-spans.md,
 * http/http-spans.md). docs/live.md lists every attribute and error.type.
 *
 * Times: unix nanoseconds of simulated time since the run's start, anchored
 * at the wall clock when it started, so that a run at x20 gives the traces
 * of the scenario's own timing (at x1 they are the real ones).
 *
 * The file is written as the run goes: an attempt span when the attempt
 * ends, a request span when its request ends; one resourceSpans entry per
 * variant. Memory holds the requests in flight only. spans_max caps the
 * file: live_otlp_full() says when it is reached (the run then stops).
 */
#ifndef LIVE_OTLP_H
#define LIVE_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "live/wire.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

#define LIVE_OTLP_SPANS_MAX 1000000u /* default cap */

typedef struct live_otlp live_otlp;

/* Where a provider was reached (for server.address, url.full, the model sent). */
typedef struct live_otlp_provider {
    live_dialect dialect;
    const char *model; /* sent */
    const char *url;   /* the request URL */
} live_otlp_provider;

/* One HTTP attempt as the client saw it; times in simulated microseconds since the start. */
typedef struct live_span_attempt {
    uint64_t request, id;
    uint32_t resend;
    uint8_t provider;
    fb_time_us arrival_us; /* of its request */
    fb_time_us start_us, end_us;
    int status;             /* HTTP status received; 0 = none */
    const char *error_type; /* NULL: none (a success, or a cancellation) */
    bool cancelled;         /* its request ended first: the caller gave up, not an error */
    bool unfinished;        /* still in flight when the run stopped */
    bool stream;
    uint32_t max_tokens;
    uint32_t tokens_out; /* reported or streamed; with has_usage */
    bool has_usage;
    live_meta meta;
} live_span_attempt;

/* Start the document on f (which stays the caller's). FB_ENOMEM on failure. */
int live_otlp_open(FILE *f, uint64_t spans_max, live_otlp **out);
/*
 * A variant's run starts: its resourceSpans entry. `prov` has one entry per
 * provider of sc (copied); t0_unix_ns is the wall clock at simulated time
 * zero.
 */
int live_otlp_begin(live_otlp *o, const sim_scenario *sc, uint32_t variant, double scale,
                    int64_t t0_unix_ns, const live_otlp_provider *prov);
void live_otlp_attempt(live_otlp *o, const live_span_attempt *a);
void live_otlp_request(live_otlp *o, const sim_port_request *r);
/* The variant's run is over at simulated time now_us: requests still open end there. */
void live_otlp_end(live_otlp *o, fb_time_us now_us);
bool live_otlp_full(const live_otlp *o);
uint64_t live_otlp_spans(const live_otlp *o);
/* Finish the document and free o. FB_EIO when writing failed at any point. */
int live_otlp_close(live_otlp *o);

#endif /* LIVE_OTLP_H */
