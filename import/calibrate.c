/*
 * calibrate.c - the fidelity bands measured against the simulation's own noise; see
 * incident.h. A breaker that trips on a run of failures drawn at random, a retry storm
 * that feeds on itself: some metrics vary from run to run far more than the analytic
 * bands of fidelity.c assume (the requests independent). Running as-was at several seeds
 * measures it; the caller runs the simulation (import/ does not include sim/).
 */
#include <math.h>
#include <string.h>

#include "import/fitint.h"

int imp_incident_calibrate(imp_incident *inc, sim_scenario *sc, uint32_t seeds,
                           imp_measure_fn measure, void *ctx, imp_error *err) {
    if (scn_variant(sc, IMP_AS_WAS) < 0)
        return imp_fail(err, FB_EINVAL, 0, "%s", "no as-was variant");
    const char *names[IMP_CHECKS_MAX];
    double sum[IMP_CHECKS_MAX] = {0}, sq[IMP_CHECKS_MAX] = {0}, x[IMP_CHECKS_MAX];
    for (uint32_t i = 0; i < inc->nchecks; i++) names[i] = inc->checks[i].metric;
    uint64_t seed = sc->seed;
    int rc = FB_OK;
    for (uint32_t k = 0; rc == FB_OK && k < seeds; k++) {
        char msg[sizeof err->msg] = "";
        sc->seed = seed + k;
        if (measure(ctx, sc, names, inc->nchecks, x, msg, sizeof msg) != FB_OK) {
            rc = imp_fail(err, FB_ESTATE, 0, "simulating as-was at seed %llu: %s",
                          (unsigned long long)sc->seed, msg);
            break;
        }
        for (uint32_t i = 0; i < inc->nchecks; i++) {
            sum[i] += x[i];
            sq[i] += x[i] * x[i];
        }
    }
    sc->seed = seed;
    for (uint32_t i = 0; rc == FB_OK && seeds > 1 && i < inc->nchecks; i++) {
        imp_check *c = &inc->checks[i];
        double mean = sum[i] / seeds,
               sd = sqrt(fmax(0, (sq[i] - seeds * mean * mean) / (seeds - 1)));
        double h = 3 * sqrt(2.0) * sd;
        if (c->logs - h < c->lo) c->lo = fmax(0, c->logs - h);
        if (c->logs + h > c->hi) c->hi = c->logs + h;
        if (strcmp(c->metric, "success_rate") == 0) c->hi = fmin(c->hi, 1);
    }
    return rc;
}
