/* fault.c - the fault timeline: its JSON shape, durations, and per-attempt decisions. */
#include "mockserver/fault.h"

#include "core/rng.h"

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
           a->tokens >= 0;
}

int mock_duration_parse(const char *s, fb_time_us *out_us) {
    if (s != NULL && strcmp(s, "0") == 0) {
        *out_us = 0; /* a bare "0" needs no unit */
        return FB_OK;
    }
    return sim_parse_duration(s, out_us);
}

/* ---- the timeline: parsed by the scenario loader, so both read faults alike ---- */

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

void mock_fault_from_sim(const sim_fault *s, mock_fault *f) {
    /* the two enums list the kinds in the same order */
    _Static_assert((int)MOCK_FAULT_FLAP == (int)SIM_FAULT_FLAP, "fault kinds differ");
    _Static_assert((int)MOCK_FAULT_POLICY == (int)SIM_FAULT_POLICY, "fault kinds differ");
    memset(f, 0, sizeof *f);
    f->kind = (mock_fault_kind)s->kind;
    f->at_us = s->at_us;
    f->for_us = s->for_us;
    f->fraction = s->fraction;
    f->status = s->status;
    f->retry_after_us = s->retry_after_us;
    f->factor = s->factor;
    f->capacity = s->capacity;
    f->after_tokens = s->after_tokens;
    f->mode = s->mode == SIM_MIDSTREAM_CUT        ? MOCK_MIDSTREAM_CUT
              : s->mode == SIM_MIDSTREAM_TRUNCATE ? MOCK_MIDSTREAM_TRUNCATE
                                                  : MOCK_MIDSTREAM_ERROR;
    f->period_us = s->period_us;
    f->flavor = (int)flavor_of(s->error_kind);
}

int mock_faults_parse(const char *text, size_t len, mock_fault *out, size_t cap, size_t *n_out,
                      mock_parse_error *err) {
    *n_out = 0;
    uint32_t n = 0, c = cap > MOCK_FAULTS_MAX ? MOCK_FAULTS_MAX : (uint32_t)cap;
    sim_fault *tmp = calloc(c ? c : 1, sizeof *tmp);
    if (tmp == NULL) return fail(err, "faults", "out of memory");
    sim_error se;
    int rc = sim_faults_parse(text, len, "faults", tmp, c, &n, &se);
    if (rc != FB_OK) {
        fail(err, se.path[0] ? se.path : "faults", se.msg);
        free(tmp);
        return FB_EPARSE;
    }
    for (uint32_t i = 0; i < n; i++) mock_fault_from_sim(&tmp[i], &out[i]);
    *n_out = n;
    free(tmp);
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
    if (ra_us == FB_TIME_NONE) return;
    /* Whole seconds (rounded up) in retry-after, exact in retry-after-ms. */
    act->ra_kind = MOCK_RA_SECONDS;
    act->retry_after_s = (double)((ra_us + FB_US_PER_S - 1) / FB_US_PER_S);
    act->retry_after_ms = (double)ra_us / 1000.0;
}

void mock_timeline_decide(const mock_fault *faults, size_t n, fb_time_us t_us, uint64_t seed,
                          uint64_t attempt, mock_action *act, double *capacity_scale) {
    bool terminal = false;
    *capacity_scale = 1.0;
    for (size_t i = 0; i < n; i++) {
        const mock_fault *f = &faults[i];
        if (t_us < f->at_us || t_us - f->at_us >= f->for_us) continue;
        if (f->kind == MOCK_FAULT_BROWNOUT) {
            *capacity_scale *= f->capacity;
            continue;
        }
        if (f->kind == MOCK_FAULT_FLAP && (t_us - f->at_us) % f->period_us >= f->period_us / 2)
            continue; /* the up half of the period */
        bool is_terminal = f->kind != MOCK_FAULT_SLOW && f->kind != MOCK_FAULT_MIDSTREAM;
        if (is_terminal && terminal) continue;
        if (f->kind == MOCK_FAULT_MIDSTREAM && act->end != MOCK_END_NORMAL) continue;
        if (f->fraction < 1.0 && mock_draw(seed, attempt, i) >= f->fraction) continue;
        size_t len = strlen(act->label);
        if (len + 24 < sizeof act->label)
            snprintf(act->label + len, sizeof act->label - len, "%sfaults[%zu].%s", len ? "," : "",
                     i, sim_fault_kind_name((sim_fault_kind)f->kind));
        switch (f->kind) {
        case MOCK_FAULT_OUTAGE:
        case MOCK_FAULT_RATE_LIMIT:
        case MOCK_FAULT_FLAP:
            act->status = f->status;
            act->flavor = (mock_flavor)f->flavor;
            set_retry_after(act, f->retry_after_us);
            break;
        case MOCK_FAULT_HANG:
            act->hang = true;
            break;
        case MOCK_FAULT_RESET:
            act->reset = true;
            break;
        case MOCK_FAULT_POLICY:
            act->status = 400;
            act->flavor = MOCK_FLAVOR_FILTER;
            break;
        case MOCK_FAULT_SLOW:
            act->slow *= f->factor;
            break;
        case MOCK_FAULT_MIDSTREAM:
            act->end = f->mode == MOCK_MIDSTREAM_CUT        ? MOCK_END_CUT
                       : f->mode == MOCK_MIDSTREAM_TRUNCATE ? MOCK_END_TRUNCATE
                                                            : MOCK_END_ERROR;
            act->end_after = f->after_tokens;
            break;
        case MOCK_FAULT_BROWNOUT:
            break;
        }
        if (is_terminal) terminal = true;
    }
}
