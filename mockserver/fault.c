/* fault.c - actions, durations, and the timeline through the simulator's fault model. */
#include "mockserver/fault.h"

#include "core/rng.h"
#include "mockserver/wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mock_action_init(mock_action *a) {
    memset(a, 0, sizeof *a);
    a->retry_after_ms = -1;
    a->should_retry = -1;
    a->ttft_us = -1;
    a->tokens = -1;
    a->slow = 1.0;
    a->stall_after = -1;
    a->end_after = -1;
}

bool mock_action_is_fault(const mock_action *a) {
    return a->status != 0 || a->hang || a->reset || a->refusal || a->ttft_us >= 0 ||
           a->slow != 1.0 || a->stall_after >= 0 || a->end != MOCK_END_NORMAL ||
           a->ra_kind != MOCK_RA_NONE || a->retry_after_ms >= 0 || a->should_retry >= 0 ||
           a->tokens >= 0 || a->no_retry_after || a->delay_us > 0;
}

int mock_duration_parse(const char *s, fb_time_us *out_us) {
    if (s != NULL && strcmp(s, "0") == 0) {
        *out_us = 0; /* a bare "0" needs no unit */
        return FB_OK;
    }
    return scn_parse_duration(s, out_us);
}

/* ---- the timeline: parsed by the scenario loader, decided by the fault model ---- */

static int fail(mock_parse_error *err, const char *path, const char *msg) {
    if (err != NULL) {
        snprintf(err->path, sizeof err->path, "%s", path);
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return FB_EPARSE;
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

int mock_faults_parse(const char *text, size_t len, sim_fault *out, size_t cap, size_t *n_out,
                      mock_parse_error *err) {
    *n_out = 0;
    uint32_t n = 0, c = cap > MOCK_FAULTS_MAX ? MOCK_FAULTS_MAX : (uint32_t)cap;
    sim_error se;
    if (scn_faults_parse(text, len, "faults", out, c, &n, &se) != FB_OK)
        return fail(err, se.path[0] ? se.path : "faults", se.msg);
    *n_out = n;
    return FB_OK;
}

/* ---- decisions ----------------------------------------------------------------------------- */

double mock_draw(uint64_t seed, uint64_t a, uint64_t b) {
    /* One short stream per (seed, attempt, fault): reproducible whatever else draws. */
    fb_rng r;
    fb_rng_derive(&r, seed, a, b);
    return fb_rng_uniform(&r);
}

static void set_retry_after(mock_action *act, fb_time_us ra_us) {
    if (ra_us == FB_TIME_NONE) { /* the script says: no Retry-After, as in the simulation */
        act->no_retry_after = true;
        return;
    }
    /* Whole seconds (rounded up) in retry-after, exact in retry-after-ms. */
    act->ra_kind = MOCK_RA_SECONDS;
    act->retry_after_s = (double)((ra_us + FB_US_PER_S - 1) / FB_US_PER_S);
    act->retry_after_ms = (double)ra_us / 1000.0;
}

typedef struct draw_key {
    uint64_t seed, attempt;
} draw_key;

static double keyed_draw(void *ctx, uint32_t fault) {
    const draw_key *k = ctx;
    return mock_draw(k->seed, k->attempt, fault);
}

/* "faults[2].outage,faults[5].slow": what applied, for the attempt log. Built by hand (a
 * quarter of the answers carry one), cut where the label ends as snprintf would cut it. */
static void label(mock_action *act, const sim_fault *faults, const sim_fault_effect *e) {
    for (uint32_t h = 0; h < e->hit_count; h++) {
        size_t len = strlen(act->label);
        if (len + 24 >= sizeof act->label) break;
        const char *kind = scn_fault_kind_name(faults[e->hits[h]].kind);
        char one[128], *p = one;
        if (len > 0) *p++ = ',';
        memcpy(p, "faults[", 7);
        p += 7;
        p += mock_wire_decimal(e->hits[h], p);
        *p++ = ']';
        *p++ = '.';
        size_t nk = strlen(kind), room = sizeof one - 1 - (size_t)(p - one);
        memcpy(p, kind, nk < room ? nk : room);
        p += nk < room ? nk : room;
        size_t n = (size_t)(p - one), cap = sizeof act->label - len - 1;
        if (n > cap) n = cap;
        memcpy(act->label + len, one, n);
        act->label[len + n] = '\0';
    }
}

void mock_timeline_decide(const sim_fault *faults, size_t n, fb_time_us t_us, uint64_t seed,
                          uint64_t attempt, uint32_t retry, sim_fault_even *even, mock_action *act,
                          double *capacity_scale) {
    uint32_t count = n > MOCK_FAULTS_MAX ? MOCK_FAULTS_MAX : (uint32_t)n;
    draw_key key = {seed, attempt};
    sim_fault_effect e;
    scn_fault_decide(faults, count, t_us,
                     SIM_FAULT_ANSWER | SIM_FAULT_SERVICE |
                         (retry ? SIM_FAULT_RETRY_NTH(retry) : 0u),
                     even, keyed_draw, &key, &e);
    *capacity_scale = scn_fault_capacity(faults, count, t_us);
    label(act, faults, &e);
    if (e.answer >= 0) {
        switch (e.kind) {
        case SIM_FAULT_HANG:
            act->hang = true;
            break;
        case SIM_FAULT_RESET:
            act->reset = true;
            break;
        case SIM_FAULT_POLICY:
            act->status = 400;
            act->flavor = MOCK_FLAVOR_FILTER;
            break;
        default:
            act->status = e.status;
            act->flavor = flavor_of(e.error_kind);
            set_retry_after(act, e.retry_after_us);
            break;
        }
    }
    act->slow *= e.slow;
    act->delay_us += e.delay_us;
    if (e.midstream >= 0) {
        act->end = e.mode == SIM_MIDSTREAM_CUT        ? MOCK_END_CUT
                   : e.mode == SIM_MIDSTREAM_TRUNCATE ? MOCK_END_TRUNCATE
                                                      : MOCK_END_ERROR;
        act->end_after = e.after_tokens;
    }
}
