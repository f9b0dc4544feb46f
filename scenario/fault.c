/* fault.c - the fault model: one rule for what active faults do to an attempt; see fault.h. */
#include "scenario/fault.h"

#include <math.h>
#include <string.h>

#include "core/rng.h"

/* The purpose of an even fault's offset stream (fb_rng_derive): + the fault's index. */
#define EVEN_PURPOSE 0x45564e00u

static const char *const kind_names[] = {
#define SIM_FK_NAME(name, text) text,
    SIM_FAULT_MAP(SIM_FK_NAME)
#undef SIM_FK_NAME
};

const char *scn_fault_kind_name(sim_fault_kind k) {
    return (unsigned)k < SIM_FAULT_KIND_COUNT ? kind_names[k] : "unknown";
}

bool scn_fault_active(const sim_fault *f, fb_time_us t) {
    return t >= f->at_us && t - f->at_us < f->for_us;
}

/* Each kind's phase: the answering kinds', the served attempt's (slow, midstream), or none. */
static const unsigned char kind_phase[SIM_FAULT_KIND_COUNT] = {
    [SIM_FAULT_OUTAGE] = SIM_FAULT_ANSWER,
    [SIM_FAULT_RATE_LIMIT] = SIM_FAULT_ANSWER,
    [SIM_FAULT_HANG] = SIM_FAULT_ANSWER,
    [SIM_FAULT_SLOW] = SIM_FAULT_SERVICE,
    [SIM_FAULT_BROWNOUT] = 0,
    [SIM_FAULT_MIDSTREAM] = SIM_FAULT_SERVICE,
    [SIM_FAULT_RESET] = SIM_FAULT_ANSWER,
    [SIM_FAULT_POLICY] = SIM_FAULT_ANSWER,
    [SIM_FAULT_FLAP] = SIM_FAULT_ANSWER,
};

static unsigned phase_of(sim_fault_kind k) {
    return (unsigned)k < SIM_FAULT_KIND_COUNT ? kind_phase[k] : 0;
}

void scn_fault_even_init(sim_fault_even *even, uint32_t n, uint64_t seed, uint64_t entity) {
    for (uint32_t i = 0; i < n; i++) {
        fb_rng r;
        fb_rng_derive(&r, seed, entity, EVEN_PURPOSE + i);
        even[i].asked = even[i].hits = 0;
        memset(even[i].retry_asked, 0, sizeof even[i].retry_asked);
        even[i].offset = fb_rng_uniform(&r);
    }
}

/* The k-th attempt an even fault is asked about (of class c: *asked) hits as recorded while
   the record of c lasts, else when its running share crosses a whole. */
static bool hits_even(const sim_fault *f, unsigned c, double fraction, uint64_t *asked,
                      sim_fault_even *ev) {
    uint64_t n = (*asked)++;
    bool hit;
    if (f->recorded && n < f->recorded_len[c]) {
        size_t at = n;
        for (unsigned j = 0; j < c; j++) at += f->recorded_len[j];
        hit = f->recorded[at] != 0;
    } else {
        double k = (double)n;
        hit = floor((k + 1) * fraction + ev->offset) > floor(k * fraction + ev->offset);
    }
    ev->hits += hit;
    return hit;
}

/* The quantile an even fault's j-th hit takes of its factor or delay: frac(u + j phi). */
static double even_quantile(const sim_fault_even *ev) {
    const double phi = 0.6180339887498949; /* (sqrt(5) - 1) / 2 */
    double j = (double)(ev->hits - 1), x = ev->offset + j * phi;
    return x - floor(x);
}

/* The uniform draw behind a slow fault's factor or delay: its own draw, or an even quantile. */
static double slow_draw(const sim_fault *f, uint32_t what, sim_fault_even *even,
                        sim_fault_draw_fn draw, void *ctx) {
    uint32_t i = what & 0xffffu;
    if (f->sampling == SIM_SAMPLING_EVEN && even && even[i].hits > 0)
        return even_quantile(&even[i]);
    return draw(ctx, what);
}

bool scn_fault_hits_all(const sim_fault *f) {
    return f->kind != SIM_FAULT_FLAP && f->sampling == SIM_SAMPLING_DRAW &&
           f->retry_fraction.n == 0 && f->fraction >= 1;
}

/* Does fault i hit? Flap hits in the down half of its period; the others by their fraction
   (the k-th retry, k > 0, by its retry_fraction's share for it, when it has one: `phases` says
   which retry, SIM_FAULT_RETRY_NTH, worked out only then); one that hits every attempt
   (scn_fault_hits_all) without a draw. */
static bool hits(const sim_fault *f, uint32_t i, fb_time_us t, unsigned phases,
                 sim_fault_even *even, sim_fault_draw_fn draw, void *ctx) {
    if (f->kind == SIM_FAULT_FLAP) return (t - f->at_us) % f->period_us < f->period_us / 2;
    bool even_draw = f->sampling == SIM_SAMPLING_EVEN && even;
    if (f->retry_fraction.n == 0 || !(phases & SIM_FAULT_RETRY)) /* a first attempt's share */
        return even_draw ? hits_even(f, 0, f->fraction, &even[i].asked, &even[i])
                         : scn_fault_hits_all(f) || draw(ctx, i) < f->fraction;
    unsigned retry = phases >> 8 & 0xffu ? phases >> 8 & 0xffu : 1u; /* RETRY alone: the 1st */
    unsigned k = (retry < f->retry_fraction.n ? retry : f->retry_fraction.n) - 1;
    double share = f->retry_fraction.share[k];
    return even_draw ? hits_even(f, k + 1, share, &even[i].retry_asked[k], &even[i])
                     : draw(ctx, i) < share;
}

/* A slow fault's factor for this attempt: its number, or a draw from its distribution. */
static double slow_factor(const sim_fault *f, uint32_t i, sim_fault_even *even,
                          sim_fault_draw_fn draw, void *ctx) {
    if (f->factor.kind == SIM_DIST_CONSTANT) return f->factor.a;
    double x =
        scn_dist_quantile(&f->factor, slow_draw(f, SIM_FAULT_FACTOR_DRAW + i, even, draw, ctx));
    if (!(x > 1.0)) return 1.0; /* NaN too */
    return x < SIM_FAULT_FACTOR_MAX ? x : SIM_FAULT_FACTOR_MAX;
}

/* A slow fault's delay for this attempt: its duration, or a draw from its distribution. */
static fb_time_us slow_delay(const sim_fault *f, uint32_t i, sim_fault_even *even,
                             sim_fault_draw_fn draw, void *ctx) {
    if (f->delay.kind == SIM_DIST_CONSTANT) return (fb_time_us)f->delay.a;
    double x =
        scn_dist_quantile(&f->delay, slow_draw(f, SIM_FAULT_DELAY_DRAW + i, even, draw, ctx));
    if (!(x > 0)) return 0; /* NaN too */
    return x < (double)SIM_FAULT_DELAY_MAX_US ? (fb_time_us)llround(x) : SIM_FAULT_DELAY_MAX_US;
}

void scn_fault_answer(const sim_fault *f, uint32_t i, sim_fault_effect *e) {
    e->answer = (int)i;
    e->kind = f->kind;
    e->status = 0;
    e->error_kind = FB_ERRKIND_NONE;
    e->retry_after_us = FB_TIME_NONE;
    switch (f->kind) {
    case SIM_FAULT_OUTAGE:
    case SIM_FAULT_RATE_LIMIT:
    case SIM_FAULT_FLAP:
        e->status = f->status;
        e->error_kind = f->error_kind;
        e->retry_after_us = f->retry_after_us;
        break;
    case SIM_FAULT_POLICY:
        e->status = 400;
        e->error_kind = FB_ERRKIND_CONTENT_POLICY;
        break;
    default: /* reset, hang: no status */
        break;
    }
}

void scn_fault_decide(const sim_fault *faults, uint32_t n, fb_time_us t, unsigned phases,
                      sim_fault_even *even, sim_fault_draw_fn draw, void *ctx,
                      sim_fault_effect *out) {
    scn_fault_clear(out);
    for (uint32_t i = 0; i < n; i++) {
        const sim_fault *f = &faults[i];
        unsigned phase = phase_of(f->kind);
        if (!(phases & phase) || !scn_fault_active(f, t)) continue;
        if (phase == SIM_FAULT_ANSWER && out->answer >= 0) continue;
        if (f->kind == SIM_FAULT_MIDSTREAM && out->midstream >= 0) continue;
        if (!hits(f, i, t, phases, even, draw, ctx)) continue;
        if (phase == SIM_FAULT_ANSWER) {
            scn_fault_answer(f, i, out);
        } else if (f->kind == SIM_FAULT_SLOW) {
            out->slow *= slow_factor(f, i, even, draw, ctx);
            out->delay_us += slow_delay(f, i, even, draw, ctx);
        } else {
            out->midstream = (int)i;
            out->after_tokens = f->after_tokens;
            out->mode = f->mode;
        }
        if (out->hit_count < SIM_FAULT_HITS_MAX) out->hits[out->hit_count++] = i;
    }
}

bool scn_fault_quiet(const sim_fault *faults, uint32_t n, fb_time_us t, unsigned phases,
                     fb_time_us *from, fb_time_us *to) {
    bool quiet = true;
    fb_time_us lo = INT64_MIN, hi = FB_TIME_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const sim_fault *f = &faults[i];
        if (!(phases & phase_of(f->kind))) continue;
        if (scn_fault_active(f, t)) quiet = false;
        /* f is active in [at, at + for) (to the end when the sum passes FB_TIME_MAX) */
        fb_time_us edge[2] = {f->at_us, fb_time_add(f->at_us, f->for_us)};
        for (int k = 0; k < 2; k++) {
            if (edge[k] <= t && edge[k] > lo) lo = edge[k];
            if (edge[k] > t && edge[k] < hi) hi = edge[k];
        }
    }
    *from = lo;
    *to = hi;
    return quiet;
}

int scn_fault_lone(const sim_fault *faults, uint32_t n, fb_time_us t, unsigned phase) {
    int lone = -1;
    for (uint32_t i = 0; i < n; i++) {
        const sim_fault *f = &faults[i];
        if (!(phase & phase_of(f->kind)) || !scn_fault_active(f, t)) continue;
        if (lone >= 0) return -1; /* a second one */
        lone = (int)i;
    }
    if (lone < 0) return -1;
    const sim_fault *f = &faults[lone];
    bool one_draw =
        f->kind != SIM_FAULT_FLAP && f->sampling == SIM_SAMPLING_DRAW && f->retry_fraction.n == 0;
    return phase == SIM_FAULT_ANSWER && one_draw ? lone : -1;
}

double scn_fault_capacity(const sim_fault *faults, uint32_t n, fb_time_us t) {
    double c = 1.0;
    for (uint32_t i = 0; i < n; i++)
        if (faults[i].kind == SIM_FAULT_BROWNOUT && scn_fault_active(&faults[i], t) &&
            faults[i].capacity < c)
            c = faults[i].capacity;
    return c;
}
