/*
 * fuzz_sim.c - a libFuzzer target for a short sim_run under invariant checks (sim/engine.c and
 * the models, core/'s policies inside it, reports/expect.c on its summaries).
 *
 * Input: a scenario's JSON text. The harness keeps the run short: it refuses a scenario longer
 * than 20 simulated minutes, of more than 5,000 ticks or 64 pods, and lowers its caps to 3,000
 * requests, 1,000 in flight and 100,000 events queued (a cap that stops a run is an answer,
 * not a failure). Each variant runs twice with the simulator's own invariants on
 * (sim_run_opts.check_invariants: requests arrived = ended + live, outcomes <= attempts,
 * attempts and cost add up); the harness adds: time monotone in rows and events, no counter
 * above what it counts from, nothing negative, and the same input giving byte-identical rows,
 * events and summaries; then once more with every answer handled in its turn
 * (FUSEBOX_NO_AHEAD), which must give the same. A broken invariant aborts (libFuzzer keeps the
 * input).
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reports/expect.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What one run's callbacks saw: a running hash of rows and events, and time's order. */
typedef struct seen {
    uint64_t hash;
    fb_time_us last_row_us, last_event_us;
    uint64_t rows, events;
} seen;

static void mix(seen *w, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) w->hash = (w->hash ^ b[i]) * 1099511628211ULL;
}

static void on_row(void *ctx, const sim_row *row) {
    seen *w = ctx;
    if (w->rows > 0 && row->t_us <= w->last_row_us) abort(); /* ticks go forward */
    w->last_row_us = row->t_us;
    w->rows++;
    mix(w, &row->t_us, sizeof row->t_us);
    mix(w, &row->arrivals, sizeof row->arrivals);
    mix(w, &row->ended, sizeof row->ended);
    mix(w, &row->errors, sizeof row->errors);
    mix(w, &row->in_flight, sizeof row->in_flight);
    if (row->success > row->ended || row->errors > row->ended) abort();
}

static void on_event(void *ctx, const sim_log_event *ev) {
    seen *w = ctx;
    if (ev->t_us < 0 || (w->events > 0 && ev->t_us < w->last_event_us)) abort();
    w->last_event_us = ev->t_us;
    w->events++;
    mix(w, &ev->t_us, sizeof ev->t_us);
    mix(w, &ev->type, sizeof ev->type);
    mix(w, &ev->pod, sizeof ev->pod);
}

/* Nothing negative, nothing above what it is a part of. */
static void check_summary(const sim_summary *s) {
    uint64_t ended = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) ended += s->ended[e];
    if (ended > s->requests || s->requests_calling > s->requests) abort();
    if (s->ended[SIM_END_SUCCESS] + s->ended[SIM_END_DEGRADED] + s->errors != ended) abort();
    if (s->success_primary + s->success_fallback > s->ended[SIM_END_SUCCESS]) abort();
    if (s->retries > s->attempts || s->hedges_won > s->hedges || s->bad < s->errors) abort();
    if (!(s->cost_usd >= 0) || !(s->cost_wasted_usd >= 0) || s->end_us < 0) abort();
    if (s->complete && ended != s->requests) abort(); /* a finished run has nobody in flight */
}

static int run(const sim_scenario *sc, uint32_t v, sim_summary *out, seen *w) {
    sim_run_opts o = {on_row, on_event, NULL, w, 10000, true};
    sim_error err;
    memset(w, 0, sizeof *w);
    int rc = sim_run(sc, v, &o, out, &err);
    if (rc == FB_ESTATE) abort(); /* the simulator's own invariants */
    return rc;
}

static void lower(uint64_t *cap, uint64_t to) {
    if (*cap > to) *cap = to;
}

static void runs(sim_scenario *sc) {
    static sim_summary a[SIM_VARIANTS_MAX], b;
    sim_summary *ptrs[SIM_VARIANTS_MAX];
    lower(&sc->limits.requests_max, 1500);
    lower(&sc->limits.in_flight_max, 1000);
    lower(&sc->limits.events_max, 100000);
    for (uint32_t v = 0; v < sc->variant_count; v++) {
        seen wa, wb;
        memset(&a[v], 0, sizeof a[v]);
        memset(&b, 0, sizeof b);
        int ra = run(sc, v, &a[v], &wa), rb = run(sc, v, &b, &wb);
        if (ra != rb || wa.hash != wb.hash || wa.rows != wb.rows || wa.events != wb.events) abort();
        if (memcmp(&a[v], &b, sizeof b) != 0) abort(); /* same input, same summary */
        if (ra == FB_OK || ra == FB_ECAP) check_summary(&a[v]);
        /* and the same again with every answer in its turn (docs/engine.md, "Answers handled
           ahead"): the bytes and the summary, but for how many went ahead and the queue's peak;
           a cap that stops one of the two runs may spare the other (fewer events queued) */
        setenv("FUSEBOX_NO_AHEAD", "1", 1);
        int rc = run(sc, v, &b, &wb);
        unsetenv("FUSEBOX_NO_AHEAD");
        if (ra == FB_OK && rc == FB_OK) {
            if (wa.hash != wb.hash || wa.rows != wb.rows || wa.events != wb.events) abort();
            if (b.events_ahead != 0) abort();
            b.events_ahead = a[v].events_ahead;
            b.queue_peak = a[v].queue_peak;
            if (memcmp(&a[v], &b, sizeof b) != 0) abort();
        }
        ptrs[v] = &a[v];
    }
    char msg[512];
    for (uint32_t i = 0; i < sc->expect_count; i++) {
        rep_expect_result res;
        (void)rep_expect_eval(sc, ptrs, sc->variant_count, sc->expect[i], &res, msg, sizeof msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sim_scenario *sc = NULL;
    sim_error err;
    if (scn_parse((const char *)data, size, "fuzz.json", NULL, 0, NULL, &sc, &err) == FB_OK) {
        bool small = sc->duration_us <= 20 * 60 * FB_US_PER_S && sc->tick_us > 0 &&
                     sc->duration_us / sc->tick_us <= 5000 && sc->pods.count <= 64;
        if (small) runs(sc);
    }
    scn_free(sc);
    return 0;
}
