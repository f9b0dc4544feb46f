/*
 * fidelity.h - was a live run driven faithfully, or is it inconclusive?
 *
 * A live run plays the scenario on the real clock scaled by the time scale.
 * When the driver cannot keep that clock (its own work exceeds a thread, the
 * machine is busy, the scale is too high for the machine), events run late,
 * answers are read late, and the run measures the driver rather than the
 * policies: its numbers must not be read as a result, good or bad.
 *
 * The rule: the driver's lag (the 99th percentile of how late it got to a
 * due time or to its sockets, live_client_stats), in simulated time (real
 * lag x scale), must stay within LIVE_LAG_FRACTION of the shortest time that
 * matters in the scenario (live_shortest_time: the smallest provider
 * latency, local service or think time, retry delay, timeout, breaker
 * period, Retry-After). So must the answers' lateness: a target that says
 * when it planned to end an answer (fusebox's mock, x-fusebox-plan-us) and
 * ended it later, at the 99th percentile by more than LIVE_ANSWER_ALLOW_US
 * of real time (the wire's cost and a few wake-ups, which the comparison's
 * latency floor also allows), made every attempt slower than the scenario
 * says: a mock thread or the machine could not keep up, and queues formed
 * where the simulation has none.
 *
 * The 99th percentiles a run reports (and --compare compares) read its
 * slowest 1% of requests, which a stall touching fewer than 1% of due times
 * and answers moves without moving their 99th percentile (a process held
 * 40 ms at x20 is 0.8 s of simulated time: measured, latency p99 +25%, the
 * rule above satisfied). So the slowest 0.1% are judged too: the 99.9th
 * percentile of the lag and of the answers' lateness (the latter less
 * LIVE_ANSWER_ALLOW_US), in simulated time, must stay within the larger of
 * the shortest time that matters and LIVE_TAIL_ALLOW_US of real time x the
 * scale (half the comparison's default latency floor, live/compare.h).
 *
 * Otherwise the run is inconclusive; the verdict names the cause (the
 * driver saturated, the machine busy, the answers late, the lag alone, or a
 * stall of the tail), the numbers, and a time scale that would keep the lag
 * within the budget.
 * docs/live.md explains the numbers.
 */
#ifndef LIVE_FIDELITY_H
#define LIVE_FIDELITY_H

#include <stdbool.h>
#include <stddef.h>

#include "live/live.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

#define LIVE_LAG_FRACTION 0.5  /* lag allowed: this share of the shortest time that matters */
#define LIVE_SATURATED_CPU 0.8 /* a thread (the driver's, a mock's) busy this share: saturated */
#define LIVE_BUSY_WAIT 0.5     /* the process waited this long for a CPU per second it ran */
#define LIVE_WORK_SHARE_MIN                                                                        \
    0.8                       /* ... or the live run made less than this share of the              \
                                 simulation's attempts: saturated */
#define LIVE_TARGET_CPU 0.5   /* a suggested time scale keeps the busiest thread this busy */
#define LIVE_SCALE_MARGIN 0.5 /* ... and the lag this share of the budget (the load varies) */
#define LIVE_ANSWER_ALLOW_US                                                                       \
    5000 /* real: answers may end this much later than planned (p99) before the excess counts */
#define LIVE_TAIL_ALLOW_US                                                                         \
    2500 /* real: the slowest 0.1% may be this late (x the scale), or the shortest time */

typedef enum live_cause {
    LIVE_CAUSE_NONE = 0,  /* kept the timing */
    LIVE_CAUSE_SATURATED, /* the work took a whole thread, or the run fell short of it */
    LIVE_CAUSE_BUSY,      /* the machine: the process's threads waited for a CPU */
    LIVE_CAUSE_LAG,       /* late, for no reason the counters name (timer precision, I/O) */
    LIVE_CAUSE_ANSWERS,   /* the driver kept time, the targets' answers came later than planned */
    LIVE_CAUSE_STALLED    /* the 99% kept time, the slowest 0.1% did not (a stall of the process) */
} live_cause;

const char *live_cause_name(live_cause c);

/*
 * The shortest time that matters in variant `variant` of sc, in simulated
 * microseconds, and where it is ("providers.openai.latency.error (median)").
 * Distributions count by their median; a per-token time counts only through
 * the latency it adds to a whole answer, so not alone. 0 when the scenario
 * has no time at all (then any lag is fine).
 */
fb_time_us live_shortest_time(const sim_scenario *sc, uint32_t variant, char *what, size_t len);

typedef struct live_fidelity {
    bool ok;
    live_cause cause;
    fb_time_us shortest_us;     /* simulated */
    char shortest[128];         /* where it is */
    double budget_us;           /* lag allowed, simulated */
    double lag_us;              /* measured, simulated: max(lag p99, gap p99) x scale */
    double lag_real_us;         /* the same in real time */
    double answers;             /* answers that said when they were planned to end */
    double answer_late_real_us; /* their lateness, p99, real time (0 without any) */
    double answer_excess_us;    /* beyond LIVE_ANSWER_ALLOW_US, simulated: x scale */
    double tail_lag_real_us;    /* the lag's 99.9th percentile (due times, gaps), real time */
    double tail_answer_real_us; /* the answers' lateness, 99.9th percentile, real (0 without) */
    double tail_us;             /* simulated: max(tail lag, tail answers - ALLOW) x scale */
    double tail_budget_us;      /* simulated: max(shortest, LIVE_TAIL_ALLOW_US x scale) */
    double cpu_share;           /* the driver's thread: CPU time / wall time */
    double busiest_share;       /* the process's busiest thread: CPU time / wall time */
    double wait_ratio;          /* the process: time waiting for a CPU / time on one; <0 unknown */
    double cancelled_share;     /* transfers given up by the simulator / transfers */
    double attempts_simulated;  /* with a simulated run at hand; 0 = none */
    double work_share;          /* live attempts / simulated attempts; 1 without a simulation */
    double time_scale_ok;       /* a time scale that keeps the lag within the budget; 0 = any */
    char reason[2048];          /* one paragraph: what, why, and what would work */
} live_fidelity;

/*
 * Judge one live run of variant `variant` at time scale `scale`. `live` is
 * its summary; `simulated`, the same variant simulated (may be NULL), lets
 * a saturated run's suggested time scale follow the work the scenario
 * really asks for (the live run did less, being late).
 */
void live_fidelity_judge(const sim_scenario *sc, uint32_t variant, double scale,
                         const live_stats *st, const sim_summary *live,
                         const sim_summary *simulated, live_fidelity *out);

#endif /* LIVE_FIDELITY_H */
