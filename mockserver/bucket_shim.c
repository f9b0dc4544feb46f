/*
 * bucket_shim.c - TEMPORARY stand-in for core/ratelimit.c's fb_bucket_*, so
 * that the mock's capacity code builds before the core module lands. Delete
 * this file when core/ratelimit.c is merged (the symbols would clash).
 */
#include "core/ratelimit.h"

static void refill(fb_bucket *b, fb_time_us now_us) {
    if (now_us <= b->last_us) return;
    int64_t full = b->capacity * b->period_us;
    fb_time_us dt = now_us - b->last_us;
    /* Each microsecond adds `capacity` units (a token is period_us units). */
    if (dt >= b->period_us || b->level + dt * b->capacity >= full)
        b->level = full;
    else
        b->level += dt * b->capacity;
    b->last_us = now_us;
}

int fb_bucket_init(fb_bucket *b, int64_t capacity, fb_time_us period_us, fb_time_us now_us) {
    if (capacity <= 0 || period_us <= 0 || capacity > INT64_MAX / period_us) return FB_EINVAL;
    b->capacity = capacity;
    b->period_us = period_us;
    b->level = capacity * period_us;
    b->last_us = now_us;
    return FB_OK;
}

int64_t fb_bucket_available(fb_bucket *b, fb_time_us now_us) {
    refill(b, now_us);
    if (b->level >= 0) return b->level / b->period_us;
    return -((-b->level + b->period_us - 1) / b->period_us);
}

fb_time_us fb_bucket_wait(fb_bucket *b, int64_t n, fb_time_us now_us) {
    if (n > b->capacity) return FB_TIME_MAX;
    refill(b, now_us);
    int64_t need = n * b->period_us - b->level;
    if (need <= 0) return 0;
    return (need + b->capacity - 1) / b->capacity;
}

bool fb_bucket_take(fb_bucket *b, int64_t n, fb_time_us now_us) {
    if (fb_bucket_wait(b, n, now_us) != 0) return false;
    b->level -= n * b->period_us;
    return true;
}

void fb_bucket_reserve(fb_bucket *b, int64_t n, fb_time_us now_us) {
    refill(b, now_us);
    b->level -= n * b->period_us;
}

void fb_bucket_refund(fb_bucket *b, int64_t n, fb_time_us now_us) {
    refill(b, now_us);
    b->level += n * b->period_us;
    if (b->level > b->capacity * b->period_us) b->level = b->capacity * b->period_us;
}
