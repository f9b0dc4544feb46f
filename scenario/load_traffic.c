/*
 * load_traffic.c - the "traffic" section: classes of requests, how they
 * arrive (open or closed loop), how the rate moves over the run (ramps,
 * spikes, bursts, a diurnal swing), what they cost and what they call.
 */
#include "scenario/loadint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- arrivals ---- */

static int parse_closed(pctx *P, const cJSON *a, sim_class *c) {
    static const char *const keys[] = {"users", "think", NULL};
    static const char *const required[] = {"users", NULL};
    c->arrivals = SIM_ARR_CLOSED;
    c->think_us = scn__dist_const(1e6);
    int rc = scn__check_object(P, a, keys, required);
    if (rc == FB_OK) rc = scn__get_u32(P, a, "users", &c->users, 1, 10000000);
    if (rc == FB_OK) rc = scn__get_dist(P, a, "think", true, &c->think_us);
    return rc;
}

/* One recorded time: a number of milliseconds, in order, inside the traffic window. */
static int replay_time(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_class *c = out;
    if (!cJSON_IsNumber(e))
        return scn__fail(P, "expected a number of milliseconds, got %s", scn__type_name(e));
    if (!isfinite(e->valuedouble) || e->valuedouble < 0)
        return scn__fail(P, "%g ms is before the start of traffic", e->valuedouble);
    fb_time_us t = (fb_time_us)llround(e->valuedouble * 1000.0);
    if (t >= P->sc->duration_us)
        return scn__fail(P, "an arrival at %gs is at or after the end of traffic (duration %gs)",
                         (double)t / 1e6, (double)P->sc->duration_us / 1e6);
    if (i > 0 && t < c->replay_us[i - 1])
        return scn__fail(P, "replayed arrivals must be in time order (%g ms comes after %g ms)",
                         e->valuedouble, (double)c->replay_us[i - 1] / 1000.0);
    c->replay_us[i] = t;
    return FB_OK;
}

/* {"at_ms": [t0, t1, ...]}: the recorded arrival times (fusebox import writes them). */
static int parse_replay(pctx *P, const cJSON *a, sim_class *c) {
    static const char *const keys[] = {"at_ms", NULL};
    c->arrivals = SIM_ARR_REPLAY;
    int rc = scn__check_object(P, a, keys, keys);
    const cJSON *at = rc == FB_OK ? scn__field(a, "at_ms") : NULL;
    if (rc == FB_OK && !cJSON_IsArray(at)) {
        size_t old = scn__push_key(P, "at_ms");
        rc = scn__fail(P, "expected an array of times in milliseconds, got %s", scn__type_name(at));
        scn__pop(P, old);
    }
    if (rc != FB_OK) return rc;
    int n = cJSON_GetArraySize(at);
    c->replay_us = malloc((n > 0 ? (size_t)n : 1) * sizeof *c->replay_us);
    if (c->replay_us == NULL) return scn__fail(P, "out of memory");
    size_t old = scn__push_key(P, "at_ms");
    rc = scn__array(P, at, SIM_REPLAY_MAX, "replayed arrivals", replay_time, c, &c->replay_count);
    scn__pop(P, old);
    /* the mean rate, for the summaries that show one */
    c->rate = (double)c->replay_count / ((double)P->sc->duration_us / 1e6);
    return rc;
}

static int parse_arrivals(pctx *P, const cJSON *v, void *out) {
    static const char *const kinds[] = {"poisson", "constant", "closed", "replay", NULL};
    sim_class *c = out;
    int rc = scn__need_object(P, v);
    if (rc != FB_OK) return rc;
    if (v->child == NULL || v->child->next != NULL)
        return scn__fail(P, "expected exactly one of: poisson, constant, closed, replay");
    rc = scn__check_keys(P, v, kinds);
    if (rc != FB_OK) return rc;
    const cJSON *a = v->child;
    size_t old = scn__push_key(P, a->string);
    if (strcmp(a->string, "closed") == 0) {
        rc = parse_closed(P, a, c);
    } else if (strcmp(a->string, "replay") == 0) {
        rc = parse_replay(P, a, c);
    } else {
        c->arrivals = strcmp(a->string, "poisson") == 0 ? SIM_ARR_POISSON : SIM_ARR_CONSTANT;
        rc = scn__get_rate_value(P, a, &c->rate);
    }
    scn__pop(P, old);
    return rc;
}

/* ---- schedules ---- */

static int ramp_point(pctx *P, const cJSON *e, uint32_t i, void *out) {
    static const char *const keys[] = {"at", "rate", NULL};
    sim_class *c = out;
    int rc = scn__check_object(P, e, keys, keys);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "at", &c->ramp[i].at_us, true);
    if (rc == FB_OK) rc = scn__get_rate(P, e, "rate", &c->ramp[i].rate);
    if (rc == FB_OK && i > 0 && c->ramp[i].at_us <= c->ramp[i - 1].at_us)
        rc = scn__fail(P, "ramp points must be in increasing time order");
    return rc;
}

static int spike(pctx *P, const cJSON *e, uint32_t i, void *out) {
    static const char *const keys[] = {"at", "for", "rate", NULL};
    sim_spike *s = &((sim_class *)out)->spikes[i];
    int rc = scn__check_object(P, e, keys, keys);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "at", &s->at_us, true);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "for", &s->for_us, false);
    if (rc == FB_OK) rc = scn__get_rate(P, e, "rate", &s->rate);
    if (rc == FB_OK && s->at_us >= P->sc->duration_us)
        rc = scn__fail_past_end(P, "at", "the spike", s->at_us, P->sc->duration_us);
    return rc;
}

static int burst(pctx *P, const cJSON *e, uint32_t i, void *out) {
    static const char *const keys[] = {"at", "count", "over", NULL};
    static const char *const required[] = {"at", "count", NULL};
    sim_class *c = out;
    sim_burst *b = &c->bursts[i];
    int rc = scn__check_object(P, e, keys, required);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "at", &b->at_us, true);
    if (rc == FB_OK) rc = scn__get_u32(P, e, "count", &b->count, 1, 10000000);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "over", &b->over_us, true);
    if (rc == FB_OK && i > 0 && b->at_us < c->bursts[i - 1].at_us + c->bursts[i - 1].over_us)
        rc = scn__fail(P, "bursts must be in time order and must not overlap");
    if (rc == FB_OK && b->at_us >= P->sc->duration_us)
        rc = scn__fail_past_end(P, "at", "the burst", b->at_us, P->sc->duration_us);
    return rc;
}

static int parse_ramp(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "ramp points", ramp_point, c, &c->ramp_count);
}

static int parse_spikes(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "spikes", spike, c, &c->spike_count);
}

static int parse_bursts(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "bursts", burst, c, &c->burst_count);
}

static int parse_diurnal(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"amplitude", "period", "peak", NULL};
    static const char *const required[] = {"amplitude", NULL};
    sim_class *c = out;
    c->diurnal_period_us = 86400 * FB_US_PER_S;
    c->diurnal_peak_us = 14 * 3600 * FB_US_PER_S;
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_number(P, v, "amplitude", &c->diurnal_amplitude, 0, 1);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "period", &c->diurnal_period_us, false);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "peak", &c->diurnal_peak_us, true);
    return rc;
}

/* The schedule keys sit on the class itself, beside "arrivals". */
static int parse_schedule(pctx *P, const cJSON *v, sim_class *c) {
    int rc = scn__key(P, v, "ramp", parse_ramp, c);
    if (rc == FB_OK) rc = scn__key(P, v, "spikes", parse_spikes, c);
    if (rc == FB_OK) rc = scn__key(P, v, "bursts", parse_bursts, c);
    if (rc == FB_OK) rc = scn__key(P, v, "diurnal", parse_diurnal, c);
    return rc;
}

/* ---- where a class goes ---- */

static int parse_target(pctx *P, const cJSON *t, void *out) {
    sim_class *c = out;
    if (!cJSON_IsString(t)) return scn__fail(P, "expected \"llm\", \"none\" or a provider name");
    if (strcmp(t->valuestring, "llm") == 0) {
        c->target = SIM_TARGET_LLM;
    } else if (strcmp(t->valuestring, "none") == 0) {
        c->target = SIM_TARGET_NONE;
    } else {
        c->target = SIM_TARGET_PROVIDER;
        return scn__lookup_provider(P, t, &c->provider);
    }
    return FB_OK;
}

static int parse_class_order(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    if (c->target != SIM_TARGET_LLM)
        return scn__fail(P, "only classes with target \"llm\" have an order");
    return scn__parse_order(P, v, c->order, &c->order_len);
}

/* ---- a class ---- */

static int class_item(pctx *P, const cJSON *v, uint32_t i, void *out) {
    static const char *const keys[] = {
        "class",       "arrivals", "ramp",          "spikes",
        "bursts",      "diurnal",  "prompt_tokens", "completion_tokens",
        "service",     "target",   "stream",        "order",
        "description", "source",   "serial",        "resubmit",
        NULL};
    static const char *const required[] = {"class", NULL};
    sim_scenario *sc = out;
    sim_class *c = &sc->classes[i];
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_string(P, v, "class", c->name, sizeof c->name);
    if (rc == FB_OK) rc = scn__check_name(P, "class", c->name);
    if (rc != FB_OK) return rc;
    c->prompt_tokens = scn__dist_const(1000);
    c->completion_tokens = scn__dist_const(200);
    c->service_us = scn__dist_const(0);
    c->target = SIM_TARGET_LLM;
    rc = scn__key(P, v, "target", parse_target, c);
    if (rc == FB_OK) rc = scn__need_key(P, v, "arrivals");
    if (rc == FB_OK) rc = scn__key(P, v, "arrivals", parse_arrivals, c);
    if (rc == FB_OK) rc = parse_schedule(P, v, c);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "prompt_tokens", false, &c->prompt_tokens);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "completion_tokens", false, &c->completion_tokens);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "service", true, &c->service_us);
    if (rc == FB_OK) rc = scn__get_bool(P, v, "stream", &c->stream);
    if (rc == FB_OK) rc = scn__key(P, v, "order", parse_class_order, c);
    bool schedule = c->ramp_count || c->spike_count || c->burst_count || c->diurnal_amplitude > 0;
    if (rc == FB_OK && c->arrivals == SIM_ARR_CLOSED && schedule)
        rc = scn__fail(P, "ramp, spikes, bursts and diurnal apply to open-loop arrivals only");
    if (rc == FB_OK && c->arrivals == SIM_ARR_REPLAY && schedule)
        rc = scn__fail(P, "ramp, spikes, bursts and diurnal do not apply to replayed arrivals (the "
                          "recorded times are the whole schedule)");
    if (rc == FB_OK) rc = scn__parse_class_fleet(P, v, c);
    for (uint32_t k = 0; rc == FB_OK && k < i; k++)
        if (strcmp(sc->classes[k].name, c->name) == 0)
            rc = scn__fail(P, "two classes are named \"%s\"", c->name);
    return rc;
}

int scn__parse_traffic(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    int rc = scn__array(P, v, SIM_CLASSES_MAX, "traffic classes", class_item, sc, &sc->class_count);
    if (rc == FB_OK && sc->class_count == 0)
        rc = scn__fail(P, "at least one traffic class is needed");
    return rc;
}
