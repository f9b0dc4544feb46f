/*
 * load_fleet.c - the keys of the fleet's dynamics: where a class's arrivals
 * come from (one source for the fleet, or one per pod), serial clients, users
 * who re-submit what failed, a variant's pod autoscaler, and the windows in
 * which the shared breakers' store cannot be reached. Each is off unless a
 * scenario asks for it (docs/scenario-format.md, docs/models.md).
 */
#include "scenario/loadint.h"

#include <stdio.h>
#include <string.h>

/* ---- a traffic class: source, serial, resubmit ---- */

static int parse_resubmit(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"probability", "think", "max", NULL};
    static const char *const required[] = {"probability", NULL};
    sim_resubmit *r = out;
    r->think_us = scn__dist_const(5e6);
    r->max = 3;
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_number(P, v, "probability", &r->probability, 0, 1);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "think", true, &r->think_us);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "max", &r->max, 1, LD_RESUBMIT_MAX);
    return rc;
}

/* A failure at KEY of the class being read. */
static int fail_key(pctx *P, const char *key, const char *msg) {
    size_t old = scn__push_key(P, key);
    int rc = scn__fail(P, "%s", msg);
    scn__pop(P, old);
    return rc;
}

int scn__parse_class_fleet(pctx *P, const cJSON *v, sim_class *c) {
    static const char *const sources[] = {"shared", "per_pod", NULL};
    int src = 0;
    int rc = scn__get_enum(P, v, "source", sources, &src);
    c->source = (sim_source)src;
    if (rc == FB_OK) rc = scn__get_bool(P, v, "serial", &c->serial);
    if (rc == FB_OK) rc = scn__key(P, v, "resubmit", parse_resubmit, &c->resubmit);
    if (rc != FB_OK) return rc;
    if (c->source == SIM_SOURCE_PER_POD && c->arrivals != SIM_ARR_POISSON)
        return fail_key(P, "source",
                        "per-pod sources are Poisson processes: use \"poisson\" arrivals");
    if (c->serial && c->arrivals == SIM_ARR_CLOSED)
        return fail_key(P, "serial",
                        "a serial client follows a schedule (\"poisson\", \"constant\" or "
                        "\"replay\"); closed-loop users already wait for their answers");
    if (c->serial && c->burst_count > 0)
        return fail_key(P, "serial", "a serial client has one call in flight: it cannot burst");
    if (c->serial && c->source == SIM_SOURCE_PER_POD)
        return fail_key(P, "serial", "a serial client is one source, not one per pod");
    return FB_OK;
}

/* ---- a variant's autoscaler ---- */

static int duration_at_most(pctx *P, const cJSON *v, const char *key, fb_time_us *out,
                            bool allow_zero, fb_time_us max_us, const char *max_text) {
    int rc = scn__get_duration(P, v, key, out, allow_zero);
    if (rc == FB_OK && *out > max_us) rc = fail_key(P, key, max_text);
    return rc;
}

static int parse_rules(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"stabilization", "pods",   "percent",
                                       "period",        "select", NULL};
    static const char *const selects[] = {"max", "min", "disabled", NULL};
    sim_scale_rules *r = out;
    int rc = scn__check_object(P, v, keys, NULL);
    /* as HPA's "policies", the two given replace both defaults */
    if (scn__field(v, "pods") || scn__field(v, "percent")) r->pods = r->percent = 0;
    if (rc == FB_OK)
        rc = duration_at_most(P, v, "stabilization", &r->stabilization_us, true, 3600 * FB_US_PER_S,
                              "at most 1h (as Kubernetes allows)");
    if (rc == FB_OK) rc = scn__get_u32(P, v, "pods", &r->pods, 0, SIM_PODS_MAX);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "percent", &r->percent, 0, 100000);
    if (rc == FB_OK)
        rc = duration_at_most(P, v, "period", &r->period_us, false, 1800 * FB_US_PER_S,
                              "at most 30m (as Kubernetes allows)");
    int sel = (int)r->select;
    if (rc == FB_OK) rc = scn__get_enum(P, v, "select", selects, &sel);
    r->select = (sim_scale_select)sel;
    if (rc == FB_OK && r->pods == 0 && r->percent == 0 && r->select != SIM_SELECT_DISABLED)
        rc = scn__fail(P, "give \"pods\", \"percent\" or both (or \"select\": \"disabled\")");
    return rc;
}

/* HPA's defaults (Kubernetes pkg/apis/autoscaling/v2/defaults.go; docs/models.md). */
static void autoscale_defaults(sim_autoscale *a) {
    memset(a, 0, sizeof *a);
    a->min = 1;
    a->period_us = 15 * FB_US_PER_S;
    a->tolerance = 0.1;
    a->up.pods = 4;
    a->up.percent = 100;
    a->up.period_us = 15 * FB_US_PER_S;
    a->down.percent = 100;
    a->down.period_us = 15 * FB_US_PER_S;
    a->down.stabilization_us = 300 * FB_US_PER_S;
}

static int autoscale_keys(pctx *P, const cJSON *v, sim_autoscale *a) {
    static const char *const metrics[] = {"in_flight", "utilization", NULL};
    int m = 0;
    int rc = scn__get_enum(P, v, "metric", metrics, &m);
    a->metric = (sim_scale_metric)m;
    double hi = a->metric == SIM_SCALE_UTILIZATION ? 1 : 1e6;
    if (rc == FB_OK) rc = scn__get_number(P, v, "target", &a->target, 1e-6, hi);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "min", &a->min, 1, SIM_PODS_MAX / 2);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "max", &a->max, 1, SIM_PODS_MAX / 2);
    if (rc == FB_OK)
        rc = duration_at_most(P, v, "period", &a->period_us, false, 3600 * FB_US_PER_S,
                              "at most 1h");
    if (rc == FB_OK && a->period_us % FB_US_PER_S != 0)
        rc =
            fail_key(P, "period", "a whole number of seconds (the metric is sampled every second)");
    a->window_us = a->period_us;
    if (rc == FB_OK)
        rc = duration_at_most(P, v, "window", &a->window_us, false,
                              LD_SCALE_WINDOW_MAX_S * FB_US_PER_S,
                              "at most 1h (it is kept one sample a second)");
    if (rc == FB_OK) rc = scn__get_number(P, v, "tolerance", &a->tolerance, 0, 0.999);
    if (rc == FB_OK)
        rc = duration_at_most(P, v, "delay", &a->delay_us, true, 3600 * FB_US_PER_S, "at most 1h");
    if (rc == FB_OK)
        rc = duration_at_most(P, v, "cold_start", &a->cold_start_us, true, 3600 * FB_US_PER_S,
                              "at most 1h");
    if (rc == FB_OK) rc = scn__key(P, v, "scale_up", parse_rules, &a->up);
    if (rc == FB_OK) rc = scn__key(P, v, "scale_down", parse_rules, &a->down);
    return rc;
}

static int parse_autoscale(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"metric",     "target",   "min",        "max",
                                       "period",     "window",   "tolerance",  "delay",
                                       "cold_start", "scale_up", "scale_down", NULL};
    static const char *const required[] = {"metric", "target", "max", NULL};
    sim_autoscale *a = out;
    autoscale_defaults(a);
    if (cJSON_IsFalse(v)) return FB_OK;
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = autoscale_keys(P, v, a);
    if (rc != FB_OK) return rc;
    a->on = true;
    uint32_t count = P->sc->pods.count;
    if (a->min > a->max) return fail_key(P, "min", "more than max pods");
    if (count < a->min || count > a->max) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "pods.count (%u, the pods at the start) must lie in [min, max] = [%u, %u]", count,
                 a->min, a->max);
        return fail_key(P, count < a->min ? "min" : "max", msg);
    }
    return FB_OK;
}

int scn__parse_variant_fleet(pctx *P, cJSON *m, sim_policy *pol) {
    autoscale_defaults(&pol->autoscale);
    int rc = scn__key(P, m, "autoscale", parse_autoscale, &pol->autoscale);
    cJSON_DeleteItemFromObjectCaseSensitive(m, "autoscale");
    return rc;
}

/* ---- the breaker store ---- */

static int store_window(pctx *P, const cJSON *e, uint32_t i, void *out) {
    static const char *const keys[] = {"at", "for", NULL};
    sim_scenario *sc = out;
    sim_store_window *w = &sc->store_outages[i];
    int rc = scn__check_object(P, e, keys, keys);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "at", &w->at_us, true);
    if (rc == FB_OK) rc = scn__get_duration(P, e, "for", &w->for_us, false);
    if (rc == FB_OK && w->at_us >= sc->duration_us)
        rc = scn__fail_past_end(P, "at", "the store outage", w->at_us, sc->duration_us);
    if (rc == FB_OK && i > 0 &&
        w->at_us < fb_time_add(sc->store_outages[i - 1].at_us, sc->store_outages[i - 1].for_us))
        rc = scn__fail(P, "store outages must be in time order and must not overlap");
    return rc;
}

static int parse_outages(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "store outages", store_window, sc,
                      &sc->store_outage_count);
}

int scn__parse_breaker_store(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"outages", NULL};
    int rc = scn__check_object(P, v, keys, keys);
    if (rc == FB_OK) rc = scn__key(P, v, "outages", parse_outages, out);
    return rc;
}

/* ---- what holds across sections ---- */

/* Does a layer keep breakers in the store: shared ones, or published cooldowns (LiteLLM)? */
static bool has_store(const sim_policy *pol) {
    for (uint32_t l = 0; l < pol->layer_count; l++) {
        const sim_layer *L = &pol->layers[l];
        if (L->breaker_scope == SIM_SCOPE_POD) continue;
        for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++)
            if (L->per_provider[p].has_breaker) return true;
    }
    return false;
}

/* Store outages need a store (a shared breaker, published cooldowns); per-pod sources need a
 * fixed fleet. */
int scn__check_fleet(pctx *P, const sim_scenario *sc) {
    bool shared = false;
    int autoscaled = -1;
    for (uint32_t v = 0; v < sc->variant_count; v++) {
        shared |= has_store(&sc->variants[v]);
        if (autoscaled < 0 && sc->variants[v].autoscale.on) autoscaled = (int)v;
    }
    if (sc->store_outage_count > 0 && !shared) {
        size_t old = scn__push_key(P, "breaker_store");
        int rc = scn__fail(P, "no variant has a shared breaker (breaker.scope \"shared\") or "
                              "cooldowns shared through Redis (the litellm preset with redis_host "
                              "or redis_url): a store outage would change nothing");
        scn__pop(P, old);
        return rc;
    }
    for (uint32_t c = 0; autoscaled >= 0 && c < sc->class_count; c++) {
        if (sc->classes[c].source != SIM_SOURCE_PER_POD) continue;
        size_t old = scn__push_key(P, "traffic");
        scn__push_index(P, c);
        scn__push_key(P, "source");
        int rc = scn__fail(P,
                           "per-pod sources model a fixed fleet of clients, and variant %s "
                           "autoscales its pods: use \"shared\" (the load balancer deals arrivals "
                           "to the pods that are ready)",
                           sc->variants[autoscaled].name);
        scn__pop(P, old);
        return rc;
    }
    return FB_OK;
}
