/*
 * retry_after.h - the server's "wait this long" headers, parsed.
 *
 * Each parser returns FB_OK and the delay in *delay_us, or FB_EPARSE (and
 * leaves *delay_us alone). A negative delay (a date in the past) is reported
 * as 0.
 *   retry-after-ms: "250", "1500.5"
 *   Retry-After:    delta-seconds "30", fractional "1.5", or an HTTP-date in
 *                   IMF-fixdate, RFC 850 or asctime form, relative to
 *                   now_unix_us (wall-clock microseconds since 1970).
 * What the delay then does to a retry is the retry policy's business
 * (retry.h). See docs/retry_after.md.
 */
#ifndef FB_RETRY_AFTER_H
#define FB_RETRY_AFTER_H

#include <stdint.h>

#include "fb.h"

int fb_retry_after_parse_ms(const char *value, fb_time_us *delay_us);
int fb_retry_after_parse(const char *value, int64_t now_unix_us, fb_time_us *delay_us);
/* Pick the hint from the headers an LLM SDK reads: retry-after-ms first, then retry-after. */
fb_time_us fb_retry_after_hint(const char *retry_after_ms, const char *retry_after,
                               int64_t now_unix_us);

#endif /* FB_RETRY_AFTER_H */
