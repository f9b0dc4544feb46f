/*
 * calibrate.c - the fidelity bands measured against the simulation's own noise; see
 * incident.h. A breaker that trips on a run of failures drawn at random, a retry storm
 * that feeds on itself: some metrics vary from run to run far more than the analytic
 * bands of fidelity.c assume (the requests independent). Running as-was at several seeds
 * measures it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/fitint.h"
#include "sim/metrics.h"
#include "sim/sim.h"

int imp_incident_calibrate(imp_incident *inc, sim_scenario *sc, uint32_t seeds, imp_error *err) {
    int v = sim_scenario_variant(sc, IMP_AS_WAS);
    sim_summary *s = malloc(sizeof *s);
    double sum[IMP_CHECKS_MAX] = {0}, sq[IMP_CHECKS_MAX] = {0};
    if (v < 0 || s == NULL) {
        free(s);
        return imp_fail(err, v < 0 ? FB_EINVAL : FB_ENOMEM, 0, "%s",
                        v < 0 ? "no as-was variant" : "out of memory");
    }
    uint64_t seed = sc->seed;
    int rc = FB_OK;
    sim_run_opts opts;
    memset(&opts, 0, sizeof opts);
    for (uint32_t k = 0; rc == FB_OK && k < seeds; k++) {
        sim_error e;
        sc->seed = seed + k;
        if (sim_run(sc, (uint32_t)v, &opts, s, &e) != FB_OK) {
            rc = imp_fail(err, FB_ESTATE, 0, "simulating as-was at seed %llu: %s: %s",
                          (unsigned long long)sc->seed, e.path, e.msg);
            break;
        }
        for (uint32_t i = 0; i < inc->nchecks; i++) {
            double x = sim_metric_get(sc, s, inc->checks[i].metric);
            x = sim_metric_is_na(x) ? 0 : x;
            sum[i] += x;
            sq[i] += x * x;
        }
    }
    sc->seed = seed;
    free(s);
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
