/*
 * fb.h - definitions shared by every fusebox module: time, errors, caps.
 *
 * Time is a signed count of microseconds (fb_time_us). The core never reads
 * a clock: every decision takes `now_us` from its caller, which is the
 * simulator's virtual clock or CLOCK_MONOTONIC in the live driver.
 *
 * Errors are negative integers generated from one table, FB_ERRNO_MAP, which
 * also produces fb_strerror() and fb_err_name().
 */
#ifndef FB_H
#define FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t fb_time_us;

#define FB_US_PER_MS ((fb_time_us)1000)
#define FB_US_PER_S ((fb_time_us)1000000)
#define FB_US_PER_MIN ((fb_time_us)60000000)
#define FB_TIME_MAX INT64_MAX
#define FB_TIME_NONE ((fb_time_us)-1) /* "no value", e.g. no Retry-After header */

/* Saturating add for times: never wraps past FB_TIME_MAX. */
static inline fb_time_us fb_time_add(fb_time_us a, fb_time_us b) {
    if (b > 0 && a > FB_TIME_MAX - b) return FB_TIME_MAX;
    return a + b;
}

/*
 * The zero rule, for every field of every *_config struct in core/: a field
 * left at zero means the default written beside it, so a zeroed config is
 * valid (sokol style). Defaults are chosen so that zero never switches
 * anything on: a number a policy cannot work without (a count, size, rate,
 * base delay, multiplier, cap or open period) defaults to a value, and
 * everything optional defaults to off, so that a zeroed config draws no
 * random numbers, waits for no hint, refunds nothing and has no deadline,
 * timeout or slow-call threshold. The zero member of every enum is the
 * default. An fb_switch field's FB_DEFAULT is the default written beside it;
 * FB_ON and FB_OFF say what they say.
 */
typedef enum fb_switch { FB_DEFAULT = 0, FB_ON = 1, FB_OFF = 2 } fb_switch;

#define FB_ERRNO_MAP(XX)                                                                           \
    XX(INVAL, -1, "invalid argument")                                                              \
    XX(RANGE, -2, "value out of range")                                                            \
    XX(CAP, -3, "capacity limit reached")                                                          \
    XX(PARSE, -4, "cannot parse value")                                                            \
    XX(NOMEM, -5, "out of memory")                                                                 \
    XX(IO, -6, "input/output error")                                                               \
    XX(STATE, -7, "operation not valid in this state")                                             \
    XX(NOTFOUND, -8, "not found")                                                                  \
    XX(INTR, -9, "interrupted")

typedef enum fb_err {
    FB_OK = 0,
#define FB_ERR_ENUM(name, code, text) FB_E##name = (code),
    FB_ERRNO_MAP(FB_ERR_ENUM)
#undef FB_ERR_ENUM
} fb_err;

/* Human text for an error code ("invalid argument"); never NULL. */
const char *fb_strerror(int err);
/* Symbolic name for an error code ("FB_EINVAL"); never NULL. */
const char *fb_err_name(int err);

#endif /* FB_H */
