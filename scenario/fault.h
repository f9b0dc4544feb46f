/*
 * fault.h - the fault model: what a provider's scripted faults do to one
 * attempt at one time.
 *
 * A fault timeline is an array of sim_fault (a scenario provider's "faults",
 * parsed by the loader, docs/scenario-format.md). scn_fault_decide() is the
 * one rule for what the active faults do to an attempt; the simulator's
 * provider model and the mock provider (mockserver/) both call it, so a
 * script means the same thing to both. It is pure: the random draws that
 * decide whether a fault with a `fraction` hits come from the caller's draw
 * function, asked once per fault that needs one, in the order below.
 *
 * A fraction is realised one of two ways (the fault's `sampling`):
 *   - draw (the default): each attempt the fault is asked about hits with
 *     probability `fraction`, a draw of its own; over a window of n attempts
 *     the hits vary from run to run (binomially); a fraction of 1 without a
 *     retry_fraction hits every attempt and draws nothing
 *     (scn_fault_hits_all);
 *   - even: the window's hits are spread evenly over the attempts it is asked
 *     about, systematic sampling with an offset u in [0, 1) drawn once per
 *     fault from the seed (scn_fault_even_init): its k-th attempt (from 0)
 *     hits when floor((k + 1) f + u) > floor(k f + u), so n attempts get
 *     floor(n f + u) hits, floor(n f) or ceil(n f), whatever the seed. It asks
 *     no draw; the caller keeps the count (sim_fault_even, one per fault). A
 *     slow fault's factor or delay distribution is realised evenly too: its
 *     j-th hit (from 0) takes the quantile frac(u + j phi), phi the golden
 *     ratio's fractional part (a low-discrepancy sequence: any run of hits
 *     covers the distribution's quantiles about evenly), instead of a draw.
 *
 * An attempt meets the timeline twice:
 *   - when it arrives (SIM_FAULT_ANSWER): the first active fault among
 *     outage, rate_limit, flap (its down half), reset, policy and hang that
 *     hits the attempt answers it instead of the provider; later answering
 *     faults are not asked;
 *   - when it is served (SIM_FAULT_SERVICE): every active slow fault that
 *     hits multiplies its latency by its factor (a number, or a draw from
 *     the factor's distribution: one more draw, SIM_FAULT_FACTOR_DRAW +
 *     the fault's index, right after the one that decided the hit) and adds
 *     its delay before the first token (a duration, or a draw from the
 *     delay's distribution: SIM_FAULT_DELAY_DRAW + the index, after the
 *     factor's), and
 *     the first active midstream fault that hits breaks its answer after
 *     `after_tokens` tokens.
 * The simulator asks the two phases at the two moments (an attempt may wait
 * in the provider's queue in between); the mock asks both at once.
 * Brownouts act on capacity, not on one attempt: scn_fault_capacity().
 *
 * A fault with a `retry_fraction` hits retries (an attempt after its request's first; the
 * caller says which with SIM_FAULT_RETRY, and which retry with SIM_FAULT_RETRY_NTH) by that
 * share and first attempts by `fraction`: the same one draw, against the attempt's share; an
 * even fault counts its retries apart (their own floor(n x retry_fraction + u), the same
 * offset u). A retry_fraction that is a list has a share per retry (the request's second
 * attempt, its third, ...), the last one for every later retry; an even fault counts each
 * share's retries apart. Without it every attempt meets `fraction`, and the flag changes
 * nothing.
 *
 * An even fault with `recorded` hits (an imported log's own, fusebox import) takes its k-th
 * attempt of a class (the count even keeps) as the log's k-th of that class went, hit or
 * not, while the record lasts, and evenly from there (the k-th by the formula above, k
 * counting on): the log's draw replayed, not a new one.
 */
#ifndef SIM_FAULT_H
#define SIM_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/classify.h"
#include "core/fb.h"
#include "scenario/dist.h"

#define SIM_FAULT_MAP(XX)                                                                          \
    XX(OUTAGE, "outage")                                                                           \
    XX(RATE_LIMIT, "rate_limit")                                                                   \
    XX(HANG, "hang")                                                                               \
    XX(SLOW, "slow")                                                                               \
    XX(BROWNOUT, "brownout")                                                                       \
    XX(MIDSTREAM, "midstream")                                                                     \
    XX(RESET, "reset")                                                                             \
    XX(POLICY, "policy")                                                                           \
    XX(FLAP, "flap")

typedef enum sim_fault_kind {
#define SIM_FK_ENUM(name, text) SIM_FAULT_##name,
    SIM_FAULT_MAP(SIM_FK_ENUM)
#undef SIM_FK_ENUM
        SIM_FAULT_KIND_COUNT
} sim_fault_kind;

typedef enum sim_midstream_mode {
    SIM_MIDSTREAM_ERROR = 0, /* in-band error event */
    SIM_MIDSTREAM_CUT,       /* abortive close */
    SIM_MIDSTREAM_TRUNCATE   /* clean end without the terminator */
} sim_midstream_mode;

/* The most shares a retry_fraction lists (per retry; the last one repeats). */
#define SIM_FAULT_RETRY_SHARES 8

/* A fault's retry_fraction: share[k - 1] for a request's k-th retry (its attempt k + 1), the
   last one given (share[n - 1]) for every later retry; n = 0: none (`fraction` for every
   attempt). */
typedef struct sim_fault_retry {
    double share[SIM_FAULT_RETRY_SHARES];
    uint8_t n;
} sim_fault_retry;

/* How a fault's fraction is realised (see the header). */
typedef enum sim_fault_sampling {
    SIM_SAMPLING_DRAW = 0, /* a draw per attempt */
    SIM_SAMPLING_EVEN      /* evenly over the window's attempts */
} sim_fault_sampling;

typedef struct sim_fault {
    sim_fault_kind kind;
    fb_time_us at_us, for_us; /* active in [at, at + for); for = FB_TIME_MAX: to the end */
    double fraction;          /* share of attempts affected, [0, 1] */
    /* shares of retries affected, each in [0, 1], when retry_fraction.n > 0 (else `fraction`
       is every attempt's); a retry is an attempt after its request's first (SIM_FAULT_RETRY) */
    sim_fault_retry retry_fraction;
    int status;                /* OUTAGE, RATE_LIMIT, FLAP */
    fb_error_kind error_kind;  /* OUTAGE with a provider error type; NONE = the status's own */
    fb_time_us retry_after_us; /* FB_TIME_NONE = no header */
    sim_dist factor;           /* SLOW: latency multiplier (a constant, or drawn per attempt) */
    sim_dist delay;            /* SLOW: added before the first token, us (constant 0: none) */
    sim_dist latency;          /* OUTAGE, RATE_LIMIT: its answers' (see scn_fault_latency) */
    double capacity;           /* BROWNOUT: share of capacity left */
    uint32_t after_tokens;     /* MIDSTREAM */
    sim_midstream_mode mode;   /* MIDSTREAM */
    fb_time_us period_us;      /* FLAP: down for the first half of each period */
    /* how `fraction` is realised (not FLAP, BROWNOUT) */
    sim_fault_sampling sampling;
    /* an even fault's recorded hits (`recorded`): for each class even counts apart ([0] the
       attempts `fraction` is for, [k] retry_fraction's k-th share's), the first
       recorded_len[c] attempts of it hit or not as a log's did (a byte 0 or 1 each, the
       classes one after the other in one block; malloc, the scenario's; NULL: none) */
    uint8_t *recorded;
    uint32_t recorded_len[1 + SIM_FAULT_RETRY_SHARES];
} sim_fault;

/* An even fault's running state: the attempts it was asked about, and its offset. */
typedef struct sim_fault_even {
    uint64_t asked, hits;
    /* a fault with a retry_fraction: the retries asked (not in asked), per share */
    uint64_t retry_asked[SIM_FAULT_RETRY_SHARES];
    double offset; /* [0, 1) */
} sim_fault_even;

/* The phases of scn_fault_decide(), as a mask. */
#define SIM_FAULT_ANSWER 1u
#define SIM_FAULT_SERVICE 2u
/* Not a phase: a flag of the attempt asked about, a retry (an attempt after its request's
   first): a fault with a retry_fraction hits it by that share, counted apart when even. */
#define SIM_FAULT_RETRY 4u
/* A retry that says which: the request's k-th (k >= 1; its attempt k + 1; 255 and above count
   as 255), for a retry_fraction with a share per retry. SIM_FAULT_RETRY alone is the first. */
#define SIM_FAULT_RETRY_NTH(k) (SIM_FAULT_RETRY | ((unsigned)((k) < 255 ? (k) : 255) << 8))

#define SIM_FAULT_HITS_MAX 8

/* What the timeline does to one attempt. */
typedef struct sim_fault_effect {
    /* SIM_FAULT_ANSWER: an answer instead of service */
    int answer;                /* index of the answering fault; -1 = none */
    sim_fault_kind kind;       /* its kind */
    int status;                /* its status (outage, rate_limit, flap; 400 for policy) */
    fb_error_kind error_kind;  /* as the fault states it (NONE: the status says it all) */
    fb_time_us retry_after_us; /* FB_TIME_NONE = none */
    /* SIM_FAULT_SERVICE: how a served attempt goes */
    double slow;             /* latency factor; 1 = none */
    fb_time_us delay_us;     /* added before the first token (after the factor); 0 = none */
    int midstream;           /* index of the fault that breaks the answer; -1 = none */
    uint32_t after_tokens;   /* ... after this many output tokens */
    sim_midstream_mode mode; /* ... this way */
    /* the faults that applied, in index order (the first SIM_FAULT_HITS_MAX) */
    uint32_t hits[SIM_FAULT_HITS_MAX];
    uint32_t hit_count;
} sim_fault_effect;

/*
 * A uniform draw in [0, 1) deciding whether fault `fault` hits this attempt; or, as
 * SIM_FAULT_FACTOR_DRAW + the fault's index, the quantile of a slow fault's factor
 * distribution this attempt takes (scn_dist_quantile; a draw below 1 counts as 1, above
 * SIM_FAULT_FACTOR_MAX as that); or, as SIM_FAULT_DELAY_DRAW + the index, its delay's. A
 * factor that is a number and a delay that is a duration (or none) ask no such draw, so a
 * timeline of numbers draws what it always drew.
 */
#define SIM_FAULT_FACTOR_DRAW 0x10000u
#define SIM_FAULT_FACTOR_MAX 1000.0
/* As SIM_FAULT_FACTOR_DRAW, for a slow fault's delay distribution (a draw below 0 counts as 0,
   above SIM_FAULT_DELAY_MAX_US as that); a delay that is a duration asks no draw. */
#define SIM_FAULT_DELAY_DRAW 0x20000u
#define SIM_FAULT_DELAY_MAX_US ((fb_time_us)3600 * 1000000)
typedef double (*sim_fault_draw_fn)(void *ctx, uint32_t fault);

/* What no fault does: no answer, no slowdown, no break (hits[] past hit_count unset). */
static inline void scn_fault_clear(sim_fault_effect *out) {
    out->answer = -1;
    out->kind = SIM_FAULT_OUTAGE;
    out->status = 0;
    out->error_kind = FB_ERRKIND_NONE;
    out->retry_after_us = FB_TIME_NONE;
    out->slow = 1.0;
    out->delay_us = 0;
    out->midstream = -1;
    out->after_tokens = 0;
    out->mode = SIM_MIDSTREAM_ERROR;
    out->hit_count = 0;
}

const char *scn_fault_kind_name(sim_fault_kind k);
/*
 * Start the counts of a timeline's n faults in even[0..n): none asked yet, and
 * each offset drawn from (seed, entity, its index) (fb_rng_derive), so that the
 * offsets do not depend on anything else that draws. The simulator's entity is
 * the provider's index, the mock's 0. A fault that draws gets a state too (unused).
 */
void scn_fault_even_init(sim_fault_even *even, uint32_t n, uint64_t seed, uint64_t entity);
/* True when f is active at time t. */
bool scn_fault_active(const sim_fault *f, fb_time_us t);
/* The latency of f's answers, or NULL: the provider's latency.error (the loader's default,
   a constant below 0, says it has none of its own); inline: asked for every fault's answer. */
static inline const sim_dist *scn_fault_latency(const sim_fault *f) {
    return f->latency.kind == SIM_DIST_CONSTANT && f->latency.a < 0 ? NULL : &f->latency;
}
/*
 * Decide what faults[0..n) do to an attempt at time t, for the phases in
 * `phases` (SIM_FAULT_ANSWER, SIM_FAULT_SERVICE or both). A fault with a
 * fraction asks draw(ctx, index) once (flap has none: it hits in its down
 * half, an even fault none, and one that hits every attempt none:
 * scn_fault_hits_all); in each phase the draws come in index order,
 * and stop where the header above says later faults are not asked. `even`
 * holds the n faults' states (scn_fault_even_init), counted on here; NULL: an
 * even fault draws like the others.
 */
void scn_fault_decide(const sim_fault *faults, uint32_t n, fb_time_us t, unsigned phases,
                      sim_fault_even *even, sim_fault_draw_fn draw, void *ctx,
                      sim_fault_effect *out);
/*
 * No fault of `phases` is active at time t (scn_fault_decide would then draw
 * nothing and leave its effect as scn_fault_clear() does). [*from, *to) is
 * the span around t over which each of those faults stays active or not as
 * at t (between the two edges of the timeline nearest t), so that the answer
 * holds there: the simulator asks again only when its clock leaves the span.
 */
bool scn_fault_quiet(const sim_fault *faults, uint32_t n, fb_time_us t, unsigned phases,
                     fb_time_us *from, fb_time_us *to);
/*
 * The one fault of `phase` active at time t, when there is one alone and it is an
 * answering fault that decides with one draw against its `fraction` (sampling draw, no
 * retry_fraction, not a flap): its index i; else -1. scn_fault_decide for that phase
 * would then ask draw(ctx, i) once (none when it hits every attempt, scn_fault_hits_all)
 * and answer with fault i (scn_fault_answer) when the draw is below its fraction, else
 * leave its effect clear; the answer holds over
 * scn_fault_quiet's span around t. Lets a caller that asks per attempt skip the walk.
 */
int scn_fault_lone(const sim_fault *faults, uint32_t n, fb_time_us t, unsigned phase);
/* f hits every attempt it is asked about, without a draw: a fraction of 1, no retry_fraction,
   sampled by draw, not a flap (random streams fusebox-4, docs/rng.md). */
bool scn_fault_hits_all(const sim_fault *f);
/* Set e's answer (answer, kind, status, error_kind, retry_after_us) to fault i's, f. */
void scn_fault_answer(const sim_fault *f, uint32_t i, sim_fault_effect *e);
/* The share of capacity left at time t: the smallest active brownout's (1 when none). */
double scn_fault_capacity(const sim_fault *faults, uint32_t n, fb_time_us t);

#endif /* SIM_FAULT_H */
