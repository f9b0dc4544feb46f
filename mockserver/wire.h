/*
 * wire.h - header values the mock sends: Go durations (x-ratelimit-reset-*), RFC 3339 and
 * IMF-fixdate times, and deterministic ids. Pure formatting: times are passed in.
 */
#ifndef MOCK_WIRE_H
#define MOCK_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"

/* v in decimal into out (no NUL); its length. Without stdio: every answer has several. */
size_t mock_wire_decimal(uint64_t v, char out[20]);
/* Go duration string ("0s", "12ms", "1.5s", "6m0s", "1h2m3s") for x-ratelimit-reset-*. */
void mock_wire_go_duration(fb_time_us d_us, char *out, size_t len);
/* RFC 3339 UTC "2025-08-21T12:40:59Z" for anthropic-ratelimit-*-reset. */
void mock_wire_rfc3339(int64_t epoch_s, char *out, size_t len);
/* IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" for retry-after dates. */
void mock_wire_http_date(int64_t epoch_s, char *out, size_t len);
/* Deterministic id characters from (seed, seq): hex or base62, nchars long. */
void mock_wire_id(uint64_t seed, uint64_t seq, bool base62, char *out, size_t nchars);
/* A version-4-shaped UUID from (seed, seq) (Azure's apim-request-id). */
void mock_wire_uuid(uint64_t seed, uint64_t seq, char out[37]);

#endif /* MOCK_WIRE_H */
