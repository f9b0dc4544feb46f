/*
 * calibrate.c - the fidelity bands measured against the simulation's own noise; see
 * incident.h. A breaker that trips on a run of failures drawn at random, a retry storm
 * that feeds on itself: some metrics vary from run to run far more than the analytic
 * bands of fidelity.c assume (the requests independent). Running as-was at several seeds
 * measures it; the caller runs the simulation (import/ does not include sim/).
 *
 * The log is one draw of what its provider did, attempt by attempt; a replay whose
 * faults are realised evenly ("sampling": "even") is not: it varies far less. Its noise
 * alone left out the log's own: trace-b of the corpus (a 529 storm at 55%, Retry-After
 * 2 s) replays 100 retries +-1.3 (sd over 20 seeds) evenly, 97 +-10 drawn, for the
 * log's 104, which missed a band of +-3. So the log's noise is measured with those faults
 * drawn per attempt, and the band is the noise of the difference of the two.
 */
#include <math.h>
#include <string.h>

#include "import/fitint.h"

/* Set sc's even faults to draw (drawn) or back (from the mask they left); how many. */
static uint32_t draw_even(sim_scenario *sc, bool drawn, bool mask[][SIM_FAULTS_MAX]) {
    uint32_t n = 0;
    for (uint32_t p = 0; p < sc->provider_count && p < SIM_PROVIDERS_MAX; p++)
        for (uint32_t i = 0; i < sc->providers[p].fault_count; i++) {
            sim_fault *f = &sc->providers[p].faults[i];
            if (drawn && f->sampling == SIM_SAMPLING_EVEN) {
                f->sampling = SIM_SAMPLING_DRAW;
                mask[p][i] = true;
                n++;
            } else if (!drawn && mask[p][i]) {
                f->sampling = SIM_SAMPLING_EVEN;
                n++;
            }
        }
    return n;
}

/* `seeds` runs from sc->seed: each metric's sum and sum of squares into sum[], sq[]. */
static int runs(imp_incident *inc, sim_scenario *sc, bool drawn, uint32_t seeds,
                imp_measure_fn measure, void *ctx, double *sum, double *sq, imp_error *err) {
    const char *names[IMP_CHECKS_MAX];
    double x[IMP_CHECKS_MAX];
    for (uint32_t i = 0; i < inc->nchecks; i++) names[i] = inc->checks[i].metric;
    uint64_t seed = sc->seed;
    int rc = FB_OK;
    for (uint32_t k = 0; rc == FB_OK && k < seeds; k++) {
        char msg[sizeof err->msg] = "";
        sc->seed = seed + k;
        if (measure(ctx, sc, drawn, names, inc->nchecks, x, msg, sizeof msg) != FB_OK) {
            rc = imp_fail(err, FB_ESTATE, 0, "simulating as-was at seed %llu%s: %s",
                          (unsigned long long)sc->seed,
                          drawn ? " (its even faults drawn per attempt)" : "", msg);
            break;
        }
        for (uint32_t i = 0; i < inc->nchecks; i++) {
            sum[i] += x[i];
            sq[i] += x[i] * x[i];
        }
    }
    sc->seed = seed;
    return rc;
}

/* The variance of a metric over n runs from its sum and sum of squares. */
static double variance(double sum, double sq, uint32_t n) {
    double mean = sum / n;
    return fmax(0, (sq - n * mean * mean) / (n - 1));
}

int imp_incident_calibrate(imp_incident *inc, sim_scenario *sc, uint32_t seeds,
                           imp_measure_fn measure, void *ctx, imp_error *err) {
    if (scn_variant(sc, IMP_AS_WAS) < 0)
        return imp_fail(err, FB_EINVAL, 0, "%s", "no as-was variant");
    double sum[IMP_CHECKS_MAX] = {0}, sq[IMP_CHECKS_MAX] = {0};
    double dsum[IMP_CHECKS_MAX] = {0}, dsq[IMP_CHECKS_MAX] = {0};
    bool mask[SIM_PROVIDERS_MAX][SIM_FAULTS_MAX];
    memset(mask, 0, sizeof mask);
    int rc = runs(inc, sc, false, seeds, measure, ctx, sum, sq, err);
    bool drawn = rc == FB_OK && seeds > 1 && draw_even(sc, true, mask) > 0;
    if (drawn) {
        rc = runs(inc, sc, true, seeds, measure, ctx, dsum, dsq, err);
        draw_even(sc, false, mask);
    }
    for (uint32_t i = 0; rc == FB_OK && seeds > 1 && i < inc->nchecks; i++) {
        imp_check *c = &inc->checks[i];
        double v = variance(sum[i], sq[i], seeds);
        double h = drawn ? 3 * sqrt(v + variance(dsum[i], dsq[i], seeds)) : 3 * sqrt(2.0) * sqrt(v);
        if (c->logs - h < c->lo) c->lo = fmax(0, c->logs - h);
        if (c->logs + h > c->hi) c->hi = c->logs + h;
        if (strcmp(c->metric, "success_rate") == 0) c->hi = fmin(c->hi, 1);
    }
    return rc;
}
