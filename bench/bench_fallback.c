/*
 * bench_fallback.c - cost of the request path on the hot path: one request
 * that succeeds on its first attempt, through a two-provider chain with a
 * breaker per provider and a retry policy (begin + result).
 */
#include <stdio.h>
#include <time.h>

#include "core/fallback.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void) {
    static fb_breaker breakers[2];
    fb_retry_policy retry;
    fb_fallback fb;
    fb_fallback_config cfg = {.provider_count = 2, .context_check = true};
    const fb_class ok = {.outcome = FB_OUT_SUCCESS, .effect = FB_EFFECT_SUCCESS};
    const long n = 20 * 1000 * 1000;
    volatile uint32_t sink = 0;

    fb_retry_config rc = {
        .attempts = 3, .jitter = FB_JITTER_FULL, .attempt_timeout_us = 30 * FB_US_PER_S};
    if (fb_retry_policy_init(&retry, &rc) != FB_OK) return 1;
    cfg.retry = &retry;
    for (int i = 0; i < 2; i++) {
        fb_breaker_config bc = {.mode = FB_BREAKER_MODE_TIME_WINDOW, .minimum_calls = 20};
        if (fb_breaker_init(&breakers[i], &bc, 0) != FB_OK) return 1;
        cfg.providers[i].breaker = &breakers[i];
        cfg.providers[i].context_window = 128000;
    }
    if (fb_fallback_init(&fb, &cfg) != FB_OK) return 1;

    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        fb_fallback_request req;
        fb_time_us t = (fb_time_us)i * 1000; /* one request per simulated millisecond */
        fb_fallback_decision d = fb_fallback_begin(&fb, &req, 4000, NULL, 0, t);
        d = fb_fallback_result(&fb, &req, &ok, FB_TIME_NONE, t + 500);
        sink += (uint32_t)d.stop + d.provider;
    }
    double t1 = now_ns();

    printf("fallback begin+result, 1 attempt, 2 providers, time-window breakers: %.1f ns/request"
           " (%ld requests)\n",
           (t1 - t0) / (double)n, n);
    (void)sink;
    return 0;
}
