/* scenario.c - copy one scenario provider into a mock_config. */
#include "mockserver/scenario.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The median of a latency distribution, in microseconds (the constant a draw replaces). */
static fb_time_us median_us(const sim_dist *d) {
    double v;
    switch (d->kind) {
    case SIM_DIST_UNIFORM:
        v = (d->a + d->b) / 2;
        break;
    case SIM_DIST_EXPONENTIAL:
        v = d->a * log(2.0);
        break;
    case SIM_DIST_CONSTANT:
    case SIM_DIST_LOGNORMAL:
    default:
        v = d->a;
        break;
    }
    return v > 0 ? (fb_time_us)llround(v) : 0;
}

int mock_config_from_scenario(const sim_scenario *sc, const char *provider, mock_config *cfg,
                              sim_fault *faults, size_t cap, char *err, size_t errlen) {
    int i = scn_provider(sc, provider);
    if (i < 0) {
        snprintf(err, errlen, "%s: no provider named '%s'", sc->file, provider);
        return FB_ENOTFOUND;
    }
    const sim_provider *p = &sc->providers[i];
    if (p->fault_count > cap) {
        snprintf(err, errlen, "%s: provider '%s' has %u faults (the mock takes %zu)", sc->file,
                 provider, p->fault_count, cap);
        return FB_ECAP;
    }
    memcpy(faults, p->faults, p->fault_count * sizeof *faults);
    /* a fault's recorded hits are a log's attempts, not the live client's: the mock plays the
       fault evenly (and the scenario's block is not the mock's to keep) */
    for (uint32_t k = 0; k < p->fault_count; k++) faults[k].recorded = NULL;
    cfg->faults = faults;
    cfg->n_faults = p->fault_count;
    cfg->seed = sc->seed;
    cfg->context_window = p->context_window;
    cfg->capacity.concurrency = p->concurrency;
    cfg->capacity.requests_per_min = p->rpm;
    cfg->capacity.tokens_per_min = p->tpm;
    cfg->capacity.queue_at_limit = true; /* as the simulator: queue, then the overload answer */
    cfg->capacity.queue = p->queue;
    cfg->capacity.overload_status = p->overload_status;
    cfg->capacity.no_retry_after = !p->limit_retry_after;
    cfg->capacity.cancel_on_disconnect = !p->keeps_working;
    cfg->ttft_us = median_us(&p->ttft_us);
    cfg->per_token_us = p->per_token_us;
    cfg->error_latency_us = median_us(&p->error_latency_us);
    cfg->has_ttft_dist = cfg->has_error_latency_dist = true;
    cfg->ttft_dist = p->ttft_us;
    cfg->error_latency_dist = p->error_latency_us;
    return FB_OK;
}
