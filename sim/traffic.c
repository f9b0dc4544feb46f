/* traffic.c - arrival processes; see traffic.h. */
#include "sim/traffic.h"

#include <math.h>

#define PURPOSE_ARRIVALS 1u
#define ENTITY_CLASS 0x10000u

void sim_traffic_init(sim_traffic *tr, const sim_class *c, uint64_t seed, uint32_t class_index,
                      fb_time_us end_us) {
    tr->c = c;
    tr->end_us = end_us;
    fb_rng_derive(&tr->rng, seed, ENTITY_CLASS + class_index, PURPOSE_ARRIVALS);
    tr->next_us = FB_TIME_MAX;
    tr->carry_us = 0;
    tr->started = false;
    tr->burst_i = 0;
    tr->burst_k = 0;
    tr->scale = 1.0;
    tr->replay_i = 0;
    tr->seg_start_us = tr->seg_end_us = 0; /* no segment known */
    tr->seg_bound = 0;
    tr->seg_mean_us = 0;
}

static double base_rate(const sim_class *c, fb_time_us t) {
    for (uint32_t i = 0; i < c->spike_count; i++)
        if (t >= c->spikes[i].at_us && t - c->spikes[i].at_us < c->spikes[i].for_us)
            return c->spikes[i].rate;
    if (c->ramp_count == 0) return c->rate;
    if (t <= c->ramp[0].at_us) return c->ramp[0].rate;
    for (uint32_t i = 1; i < c->ramp_count; i++) {
        const sim_rate_point *a = &c->ramp[i - 1], *b = &c->ramp[i];
        if (t < b->at_us) {
            double f = (double)(t - a->at_us) / (double)(b->at_us - a->at_us);
            return a->rate + (b->rate - a->rate) * f;
        }
    }
    return c->ramp[c->ramp_count - 1].rate;
}

static double diurnal(const sim_class *c, fb_time_us t) {
    if (c->diurnal_amplitude <= 0) return 1.0;
    double phase = (double)(t - c->diurnal_peak_us) / (double)c->diurnal_period_us;
    return 1.0 + c->diurnal_amplitude * cos(2.0 * 3.14159265358979323846 * phase);
}

double sim_traffic_rate(const sim_class *c, fb_time_us t) {
    return base_rate(c, t) * diurnal(c, t);
}

double sim_traffic_peak_rate(const sim_scenario *sc) {
    double sum = 0;
    for (uint32_t k = 0; k < sc->class_count; k++) {
        const sim_class *c = &sc->classes[k];
        if ((c->arrivals != SIM_ARR_POISSON && c->arrivals != SIM_ARR_CONSTANT) ||
            c->burst_count > 0)
            return 0;
        double peak = c->rate;
        for (uint32_t i = 0; i < c->ramp_count; i++)
            if (c->ramp[i].rate > peak) peak = c->ramp[i].rate;
        for (uint32_t i = 0; i < c->spike_count; i++)
            if (c->spikes[i].rate > peak) peak = c->spikes[i].rate;
        sum += peak * (1.0 + c->diurnal_amplitude);
    }
    return sum;
}

/* The first ramp point or spike edge strictly after t (or end). */
static fb_time_us next_breakpoint(const sim_class *c, fb_time_us t, fb_time_us end) {
    fb_time_us b = end;
    for (uint32_t i = 0; i < c->ramp_count; i++)
        if (c->ramp[i].at_us > t && c->ramp[i].at_us < b) b = c->ramp[i].at_us;
    for (uint32_t i = 0; i < c->spike_count; i++) {
        fb_time_us s = c->spikes[i].at_us, e = fb_time_add(s, c->spikes[i].for_us);
        if (s > t && s < b) b = s;
        if (e > t && e < b) b = e;
    }
    return b;
}

/*
 * Candidates come at exponential gaps at the segment's bound rate, each kept
 * with probability rate(t) / bound (none is dropped when the rate is constant
 * over the segment, and then no draw decides). An arrival happens at a real
 * time x and is scheduled at floor(x); the fraction x - floor(x) is carried
 * into the next gap, which starts at x, so the realised rate is the rate at
 * any rate (truncating every gap made 100,000/s run 5% fast).
 */
/*
 * The candidates' rate (the bound) over [t, b), b the next breakpoint, and
 * whether they are thinned. A segment of constant rate is kept until its end,
 * sparing the loops over ramp points and spikes at every arrival.
 */
static double segment(sim_traffic *tr, fb_time_us t, fb_time_us *b, bool *thinned) {
    if (t >= tr->seg_start_us && t < tr->seg_end_us) {
        *b = tr->seg_end_us;
        *thinned = false;
        return tr->seg_bound;
    }
    const sim_class *c = tr->c;
    *b = next_breakpoint(c, t, tr->end_us);
    double lo = base_rate(c, t), hi = base_rate(c, *b - 1);
    double bound = (lo > hi ? lo : hi) * (1.0 + c->diurnal_amplitude);
    *thinned = lo != hi || c->diurnal_amplitude > 0;
    if (!*thinned) {
        tr->seg_start_us = t;
        tr->seg_end_us = *b;
        tr->seg_bound = bound;
        double scaled = bound * tr->scale; /* next_poisson's bound, and its mean gap */
        tr->seg_mean_us = scaled > 0 ? 1e6 / scaled : 0;
    }
    return bound;
}

/* The next arrival after the last one, at t + frac. Not inlined: next_poisson's common case
   stays a leaf's size. */
__attribute__((noinline)) static fb_time_us poisson_from(sim_traffic *tr, fb_time_us t,
                                                         double frac) {
    const sim_class *c = tr->c;
    while (t < tr->end_us) {
        fb_time_us b;
        bool thinned;
        double bound = segment(tr, t, &b, &thinned) * tr->scale;
        if (bound <= 0) {
            t = b;
            frac = 0;
            continue;
        }
        double gap = frac + fb_rng_exponential(&tr->rng, 1e6 / bound);
        if (gap >= (double)(b - t)) {
            /* none before the breakpoint: start again there, exactly (no memory) */
            t = b;
            frac = 0;
            continue;
        }
        fb_time_us whole = (fb_time_us)gap;
        frac = gap - (double)whole;
        t += whole;
        if (!thinned || fb_rng_uniform(&tr->rng) * bound <= sim_traffic_rate(c, t) * tr->scale) {
            tr->carry_us = frac;
            return t;
        }
    }
    return FB_TIME_MAX;
}

static fb_time_us next_poisson(sim_traffic *tr, fb_time_us t) {
    double frac = t == tr->next_us ? tr->carry_us : 0; /* x = t + frac: the last arrival */
    /* the common case, the loop's first round inside a known segment of constant rate: the
       same draw, without the loop's calls */
    if (t >= tr->seg_start_us && t < tr->seg_end_us && tr->seg_mean_us > 0) {
        double gap = frac + fb_rng_exponential(&tr->rng, tr->seg_mean_us);
        if (gap < (double)(tr->seg_end_us - t)) {
            fb_time_us whole = (fb_time_us)gap;
            tr->carry_us = gap - (double)whole;
            return t + whole;
        }
        t = tr->seg_end_us; /* none before the breakpoint: as the loop does */
        frac = 0;
    }
    return poisson_from(tr, t, frac);
}

/* Not inlined: sim_traffic_next's Poisson case keeps a leaf's frame. */
__attribute__((noinline)) static fb_time_us next_constant(sim_traffic *tr, fb_time_us t) {
    if (!tr->started && sim_traffic_rate(tr->c, t) > 0) {
        tr->started = true; /* the first arrival is at the start, not one gap later */
        return t < tr->end_us ? t : FB_TIME_MAX;
    }
    while (t < tr->end_us) {
        double r = sim_traffic_rate(tr->c, t);
        if (r <= 0) {
            fb_time_us b = next_breakpoint(tr->c, t, tr->end_us);
            /* with a diurnal cycle the rate may come back before a breakpoint */
            t = tr->c->diurnal_amplitude > 0 && b - t > FB_US_PER_S ? t + FB_US_PER_S : b;
            tr->carry_us = 0;
            continue;
        }
        double gap = 1e6 / r + tr->carry_us;
        fb_time_us whole = (fb_time_us)gap;
        tr->carry_us = gap - (double)whole;
        t += whole;
        return t < tr->end_us ? t : FB_TIME_MAX;
    }
    return FB_TIME_MAX;
}

/* The next recorded time: a cursor, so that arrivals at the same instant all come. */
static fb_time_us next_replay(sim_traffic *tr) {
    if (tr->replay_i >= tr->c->replay_count) return FB_TIME_MAX;
    fb_time_us t = tr->c->replay_us[tr->replay_i++];
    return t < tr->end_us ? t : FB_TIME_MAX;
}

fb_time_us sim_traffic_next(sim_traffic *tr, fb_time_us from) {
    switch (tr->c->arrivals) {
    case SIM_ARR_POISSON:
        tr->next_us = next_poisson(tr, from);
        break;
    case SIM_ARR_CONSTANT:
        tr->next_us = next_constant(tr, from);
        break;
    case SIM_ARR_REPLAY:
        tr->next_us = next_replay(tr);
        break;
    default:
        tr->next_us = FB_TIME_MAX;
        break;
    }
    return tr->next_us;
}

fb_time_us sim_traffic_next_burst(sim_traffic *tr) {
    const sim_class *c = tr->c;
    while (tr->burst_i < c->burst_count) {
        const sim_burst *b = &c->bursts[tr->burst_i];
        if (tr->burst_k < b->count) {
            fb_time_us t = b->at_us;
            if (b->over_us > 0)
                t += (fb_time_us)((double)b->over_us * (double)tr->burst_k / (double)b->count);
            tr->burst_k++;
            if (t >= tr->end_us) return FB_TIME_MAX;
            return t;
        }
        tr->burst_i++;
        tr->burst_k = 0;
    }
    return FB_TIME_MAX;
}
