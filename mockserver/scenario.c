/* scenario.c - copy one scenario provider into a mock_config. */
#include "mockserver/scenario.h"

#include <math.h>
#include <stdio.h>

static mock_fault_kind kind_of(sim_fault_kind k) {
    switch (k) {
    case SIM_FAULT_OUTAGE:
        return MOCK_FAULT_OUTAGE;
    case SIM_FAULT_RATE_LIMIT:
        return MOCK_FAULT_RATE_LIMIT;
    case SIM_FAULT_HANG:
        return MOCK_FAULT_HANG;
    case SIM_FAULT_SLOW:
        return MOCK_FAULT_SLOW;
    case SIM_FAULT_BROWNOUT:
        return MOCK_FAULT_BROWNOUT;
    case SIM_FAULT_MIDSTREAM:
        return MOCK_FAULT_MIDSTREAM;
    case SIM_FAULT_RESET:
        return MOCK_FAULT_RESET;
    case SIM_FAULT_POLICY:
        return MOCK_FAULT_POLICY;
    case SIM_FAULT_FLAP:
    default:
        return MOCK_FAULT_FLAP;
    }
}

static mock_flavor flavor_of(fb_error_kind k) {
    switch (k) {
    case FB_ERRKIND_CONTEXT_LENGTH:
        return MOCK_FLAVOR_CONTEXT;
    case FB_ERRKIND_CONTENT_POLICY:
        return MOCK_FLAVOR_FILTER;
    case FB_ERRKIND_RATE_LIMIT:
        return MOCK_FLAVOR_RATE_LIMIT;
    case FB_ERRKIND_OVERLOADED:
        return MOCK_FLAVOR_OVERLOADED;
    default:
        return MOCK_FLAVOR_PLAIN;
    }
}

/* The median of a latency distribution, in microseconds. */
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
                              mock_fault *faults, size_t cap, char *err, size_t errlen) {
    int i = sim_scenario_provider(sc, provider);
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
    for (uint32_t k = 0; k < p->fault_count; k++) {
        const sim_fault *s = &p->faults[k];
        faults[k] =
            (mock_fault){.kind = kind_of(s->kind),
                         .at_us = s->at_us,
                         .for_us = s->for_us,
                         .fraction = s->fraction,
                         .status = s->status,
                         .retry_after_us = s->retry_after_us,
                         .factor = s->factor,
                         .capacity = s->capacity,
                         .after_tokens = s->after_tokens,
                         .mode = s->mode == SIM_MIDSTREAM_CUT        ? MOCK_MIDSTREAM_CUT
                                 : s->mode == SIM_MIDSTREAM_TRUNCATE ? MOCK_MIDSTREAM_TRUNCATE
                                                                     : MOCK_MIDSTREAM_ERROR,
                         .period_us = s->period_us,
                         .flavor = (int)flavor_of(s->error_kind)};
    }
    cfg->faults = faults;
    cfg->n_faults = p->fault_count;
    cfg->seed = sc->seed;
    cfg->context_window = p->context_window;
    cfg->capacity.concurrency = p->concurrency;
    cfg->capacity.requests_per_min = p->rpm;
    cfg->capacity.tokens_per_min = p->tpm;
    cfg->ttft_us = median_us(&p->ttft_us);
    cfg->per_token_us = p->per_token_us;
    return FB_OK;
}
