/* run.c - running one task of a sweep and recording its result. See sweep.h. */
#include "sweep/sweepint.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

int sweep_run_task(const sweep *sw, uint64_t task, double *values, char *msg, size_t msglen) {
    for (size_t m = 0; m < sw->metric_count; m++) values[m] = NAN;
    if (task >= sw->tasks) return sweep_fail(msg, msglen, FB_EINVAL, "no task %" PRIu64, task);
    uint64_t p = task / sw->seeds, seed = sw->seed + task % sw->seeds;
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = sweep_load_point(sw, p, &seed, &sc, &err);
    if (rc != FB_OK) {
        scn_error_format(&err, msg, msglen);
        return rc;
    }
    sim_summary *sum = calloc(1, sizeof *sum);
    if (sum == NULL) {
        scn_free(sc);
        return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    }
    sim_run_opts opts;
    memset(&opts, 0, sizeof opts);
    rc = sim_run(sc, (uint32_t)scn_variant(sc, sw->variant), &opts, sum, &err);
    if (rc != FB_OK) scn_error_format(&err, msg, msglen);
    for (size_t m = 0; m < sw->metric_count; m++) {
        char mm[256];
        if (sim_metric_value(sc, sum, sw->metrics[m], &values[m], NULL, mm, sizeof mm) != FB_OK)
            values[m] = NAN;
    }
    free(sum);
    scn_free(sc);
    return rc;
}

int sweep_set_result(sweep *sw, uint64_t task, int status, const double *values, const char *msg) {
    if (task >= sw->tasks) return FB_EINVAL;
    memcpy(&sw->values[task * sw->metric_count], values, sw->metric_count * sizeof *values);
    sw->state[task] = status == FB_OK ? 1 : -1;
    free(sw->errors[task]);
    sw->errors[task] = status == FB_OK ? NULL : strdup(msg && *msg ? msg : fb_strerror(status));
    sw->analysed = false;
    return FB_OK;
}

uint64_t sweep_failed(const sweep *sw, const char **first_msg) {
    uint64_t n = 0;
    if (first_msg) *first_msg = NULL;
    for (uint64_t t = 0; t < sw->tasks; t++) {
        if (sw->state[t] != -1) continue;
        if (n++ == 0 && first_msg) *first_msg = sw->errors[t];
    }
    return n;
}
