/*
 * bench_retry.c - cost of one retry decision, one classification and one
 * Retry-After parse. Prints ns/op; never passes or fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "core/budget.h"
#include "core/classify.h"
#include "core/retry.h"
#include "core/retry_after.h"
#include "core/rng.h"

static volatile int64_t sink;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void report(const char *what, long n, double ns) {
    printf("%-58s %8.1f ns/op  (%ld ops)\n", what, ns / (double)n, n);
}

static int bench_retry_next(void) {
    fb_retry_config cfg = {
        .attempts = 10, .jitter = FB_JITTER_FULL, .deadline_us = 120 * FB_US_PER_S}; /* exp */
    fb_retry_policy p;
    fb_budget_config bcfg = {.kind = FB_BUDGET_TOKEN_BUCKET, .max_tokens = 1000, .ratio = 1};
    fb_budget b;
    if (fb_retry_policy_init(&p, &cfg) != FB_OK || fb_budget_init(&b, &bcfg) != FB_OK) return 1;
    fb_rng rng;
    fb_rng_seed(&rng, 42, 1);
    const fb_class c = {.outcome = FB_OUT_TRANSIENT, .retryable = true};
    const long n = 20000000;
    int64_t acc = 0;
    long retried = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        /* Refill the bucket before it would start refusing: every call takes the full path. */
        if (i % 400 == 0) (void)fb_budget_init(&b, &bcfg);
        /* attempt number (i % 9) + 1 failing: fb_retry_next() counts it */
        fb_retry_state s = {.attempt = (uint32_t)(i % 9), .start_us = 0};
        fb_retry_decision d = fb_retry_next(&p, &s, &c, FB_TIME_NONE, &b, &rng, i);
        acc += d.delay_us;
        retried += d.retry;
    }
    double t1 = now_ns();
    sink = acc;
    report("fb_retry_next (exponential, full jitter, token bucket)", n, t1 - t0);
    printf("%-58s %8.3f\n", "  share of decisions that retried", (double)retried / (double)n);
    return 0;
}

static int bench_classify(void) {
    fb_classifier c;
    if (fb_classify_init(&c, NULL) != FB_OK) return 1;
    const fb_reply replies[8] = {
        {.status = 200, .should_retry = -1},
        {.status = 503, .should_retry = -1},
        {.status = 429, .should_retry = -1},
        {.status = 400, .error_kind = FB_ERRKIND_CONTEXT_LENGTH, .should_retry = -1},
        {.transport = FB_TRANSPORT_TIMEOUT, .should_retry = -1},
        {.status = 529, .should_retry = 1},
        {.status = 200, .error_kind = FB_ERRKIND_OVERLOADED, .after_first_token = true},
        {.transport = FB_TRANSPORT_RESET, .should_retry = -1},
    };
    const long n = 50000000;
    int64_t acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        fb_class k = fb_classify(&c, &replies[i & 7]);
        acc += (int64_t)k.outcome + k.retryable + (int64_t)k.effect;
    }
    double t1 = now_ns();
    sink = acc;
    report("fb_classify (8 reply shapes, round robin)", n, t1 - t0);

    const char *bodies[4][3] = {
        {"invalid_request_error", "context_length_exceeded", "This model's maximum..."},
        {"invalid_request_error", NULL, "prompt is too long: 205351 tokens > 200000 maximum"},
        {"overloaded_error", NULL, "Overloaded"},
        {"server_error", NULL, "The server had an error"},
    };
    const long m = 20000000;
    t0 = now_ns();
    for (long i = 0; i < m; i++) {
        const char **f = bodies[i & 3];
        acc += fb_classify_error_kind(f[0], f[1], f[2]);
    }
    t1 = now_ns();
    sink = acc;
    report("fb_classify_error_kind (4 bodies, round robin)", m, t1 - t0);
    return 0;
}

static int bench_retry_after(void) {
    const long n = 5000000;
    int64_t acc = 0;
    fb_time_us d = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        (void)fb_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", 784111000LL * FB_US_PER_S, &d);
        acc += d;
    }
    double t1 = now_ns();
    report("fb_retry_after_parse (IMF-fixdate)", n, t1 - t0);
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
        acc += fb_retry_after_hint("1500.5", NULL, 0);
    }
    t1 = now_ns();
    sink = acc;
    report("fb_retry_after_hint (retry-after-ms \"1500.5\")", n, t1 - t0);
    return 0;
}

int main(void) {
    if (bench_retry_next() != 0 || bench_classify() != 0 || bench_retry_after() != 0) {
        fprintf(stderr, "bench_retry: init failed\n");
        return 1;
    }
    return 0;
}
