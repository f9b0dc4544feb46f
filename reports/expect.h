/*
 * expect.h - expectations: assertions on a run's summary metrics.
 *
 *   expectation := side OP side
 *   OP          := ">=" | "<=" | ">" | "<" | "==" | "!="
 *   side        := term (("+" | "-") term)*,  term := factor (("*" | "/") factor)*
 *   factor      := VARIANT "." METRIC | METRIC | NUMBER | NUMBER "%" | DURATION
 *                  | '"' DURATION '"' | "(" side ")"
 *
 * METRIC is a name from sim/metrics.h (`success_rate`, `latency_p99`,
 * `attempts[openai]`); without a variant it needs a scenario with a single
 * variant. DURATION is a number with a unit (15s, "250ms", 5m). A metric that
 * is a duration must be compared with durations ("latency_p99 <= 15s", not
 * "<= 15"), so that no expectation silently means seconds or microseconds.
 * A metric that is n/a for the run (sim_metric_is_na) makes the expectation
 * fail, whatever it compares, with the reason in `detail`. See docs/check.md.
 */
#ifndef REP_EXPECT_H
#define REP_EXPECT_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/metrics.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

typedef struct rep_expect_result {
    bool passed;
    double lhs, rhs; /* the two sides' values (durations in microseconds) */
    bool duration;   /* the sides are durations */
    bool na;         /* a side read an n/a metric: failed, whatever the comparison */
    /* passed: "0.9990 >= 0.99" with units; failed: "measured 21.5s, limit <= 10.0s: over by
     * 11.5s" (short by, off by; "at the limit, not beyond it"; "equal"); n/a: "V.M is n/a
     * (why)". Two values that round
     * alike but differ are shown with every digit ("10.000412s <= 10.000000s"). */
    char detail[256];
} rep_expect_result;

/*
 * Check an expectation's syntax, variants and metric names against a
 * scenario without running it. FB_OK or FB_EINVAL with msg.
 */
int rep_expect_validate(const sim_scenario *sc, const char *expr, char *msg, size_t msglen);

/*
 * Evaluate against the summaries of a run (in scenario variant order; a
 * variant that was not run is an error). FB_OK (see out->passed) or
 * FB_EINVAL with msg.
 */
int rep_expect_eval(const sim_scenario *sc, sim_summary *const *sums, size_t n, const char *expr,
                    rep_expect_result *out, char *msg, size_t msglen);

#endif /* REP_EXPECT_H */
