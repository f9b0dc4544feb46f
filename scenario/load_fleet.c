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

/* A class's "resubmit" (base: sim_resubmit). */
const ld_section scn__resubmit_section = {
    "resubmit", "/$defs/class/properties/resubmit",
    (const ld_field[]){
        {"probability", LD_NUMBER, LD_AT(sim_resubmit, probability), .lo = 0, .hi = 1,
         .flags = LD_F_REQUIRED, .unit = "fraction",
         .doc = "chance that a failed submission is submitted again; `0` turns it off"},
        {"think", LD_HOOK, LD_AT(sim_resubmit, think_us),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"5s\"}",
         .hook = scn__duration_dist, .def = "\"5s\"", .flags = LD_F_SET | LD_F_PURE,
         LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
         .doc = "from the failure to the re-submission"},
        {"max", LD_INTEGER, LD_AT(sim_resubmit, max), .lo = 1, .hi = LD_RESUBMIT_MAX, .def = "3",
         .flags = LD_F_SET, .doc = "re-submissions per user request"},
        {0}},
    NULL};

int scn__parse_resubmit(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__resubmit_section, out);
}

/* A failure at KEY of the class being read. */
static int fail_key(pctx *P, const char *key, const char *msg) {
    size_t old = scn__push_key(P, key);
    int rc = scn__fail(P, "%s", msg);
    scn__pop(P, old);
    return rc;
}

int scn__parse_class_fleet(pctx *P, const cJSON *v, sim_class *c) {
    scn__read_range(P, v, &scn__class_section, c, "source", NULL);
    if (c->source == SIM_SOURCE_PER_POD && c->arrivals != SIM_ARR_POISSON)
        return fail_key(P, "source",
                        "per-pod sources are Poisson processes: use \"poisson\" arrivals");
    if (c->serial && c->arrivals == SIM_ARR_CLOSED)
        return fail_key(P, "serial",
                        "a serial client follows a schedule (\"poisson\", \"constant\" or "
                        "\"replay\"); closed-loop users already wait for their answers");
    if (c->serial && c->turns != NULL)
        return fail_key(P, "serial",
                        "a serial client follows a schedule; a replayed session's users already "
                        "wait for their answers (\"turns\")");
    if (c->serial && c->burst_count > 0)
        return fail_key(P, "serial", "a serial client has one call in flight: it cannot burst");
    if (c->serial && c->source == SIM_SOURCE_PER_POD)
        return fail_key(P, "serial", "a serial client is one source, not one per pod");
    return P->rc;
}

/* ---- a variant's autoscaler ---- */

/* A duration (zero allowed or not) of at most max_us; else `max_text`. */
static int duration_at_most(pctx *P, const cJSON *v, fb_time_us *out, bool allow_zero,
                            fb_time_us max_us, const char *max_text) {
    scn__get_duration_value(P, v, out, allow_zero);
    if (*out > max_us) scn__fail(P, "%s", max_text);
    return P->rc;
}

static int stabilization_value(pctx *P, const cJSON *v, void *out) {
    return duration_at_most(P, v, out, true, 3600 * FB_US_PER_S,
                            "at most 1h (as Kubernetes allows)");
}

static int rules_period_value(pctx *P, const cJSON *v, void *out) {
    return duration_at_most(P, v, out, false, 1800 * FB_US_PER_S,
                            "at most 30m (as Kubernetes allows)");
}

static const char *const selects[] = {"max", "min", "disabled", NULL};

/* "scale_up" and "scale_down" (base: sim_scale_rules); each one's defaults are its row's in
 * scn__autoscale_section (they differ). */
const ld_section scn__scale_rules_section = {
    "scale_rules", "/$defs/scale_rules",
    (const ld_field[]){
        {"stabilization", LD_HOOK, LD_AT(sim_scale_rules, stabilization_us),
         .schema = "{\"$ref\": \"#/$defs/duration\", \"description\": \"scale up: 0s; scale down: "
                   "5m (at most 1h)\"}",
         .hook = stabilization_value, .flags = LD_F_PURE, .unit = "duration, at most 1h",
         .doc = "the recommendations of this long are considered: scaling up takes the lowest, "
                "scaling down the highest"},
        {"pods", LD_INTEGER, LD_AT(sim_scale_rules, pods), .lo = 0, .hi = SIM_PODS_MAX,
         .doc = "at most this many pods added (removed) per `period`"},
        {"percent", LD_INTEGER, LD_AT(sim_scale_rules, percent), .lo = 0, .hi = 100000,
         .def = "100",
         .doc = "at most this share of the pods at the period's start added (removed) per "
                "`period`"},
        {"period", LD_HOOK, LD_AT(sim_scale_rules, period_us),
         .schema = "{\"$ref\": \"#/$defs/duration_positive\", \"default\": \"15s\"}",
         .hook = rules_period_value, .flags = LD_F_PURE, .def = "\"15s\"",
         .unit = "duration, at most 30m", .doc = "both policies' window"},
        {"select", LD_ENUM, LD_AT(sim_scale_rules, select), .names = selects, .def = "\"max\"",
         .doc = "the policy allowing the largest change, the smallest, or no change in that "
                "direction"},
        {0}},
    NULL};

static int parse_rules(pctx *P, const cJSON *v, void *out) {
    sim_scale_rules *r = out;
    /* as HPA's "policies", the two given replace both defaults */
    if (scn__field(v, "pods") || scn__field(v, "percent")) r->pods = r->percent = 0;
    scn__fields(P, v, &scn__scale_rules_section, r);
    if (r->pods == 0 && r->percent == 0 && r->select != SIM_SELECT_DISABLED)
        scn__fail(P, "give \"pods\", \"percent\" or both (or \"select\": \"disabled\")");
    return P->rc;
}

static int period_value(pctx *P, const cJSON *v, void *out) {
    return duration_at_most(P, v, out, false, 3600 * FB_US_PER_S, "at most 1h");
}

static int window_value(pctx *P, const cJSON *v, void *out) {
    return duration_at_most(P, v, out, false, LD_SCALE_WINDOW_MAX_S * FB_US_PER_S,
                            "at most 1h (it is kept one sample a second)");
}

static int delay_value(pctx *P, const cJSON *v, void *out) {
    return duration_at_most(P, v, out, true, 3600 * FB_US_PER_S, "at most 1h");
}

static const char *const metrics[] = {"in_flight", "utilization", NULL};

/* The target in the widest range, for --set (the code reads it in the metric's). */
static int target_value(pctx *P, const cJSON *v, void *out) {
    return scn__get_number_value(P, v, out, 1e-6, 1e6);
}

/* --set's check of target in its metric's range, as autoscale_keys reads it (a metric that
 * does not read: the widest, the loader says what is wrong with it). */
static int check_target(pctx *P, const cJSON *obj, const cJSON *root) {
    (void)root;
    sim_error ignored = {{0}, {0}, {0}};
    pctx M = {&ignored, "", 0, false, NULL, NULL, FB_OK};
    int metric = -1;
    double target = 0;
    if (scn__get_enum(&M, obj, "metric", metrics, &metric) != FB_OK) metric = -1;
    double hi = metric == SIM_SCALE_UTILIZATION ? 1 : 1e6;
    return scn__get_number(P, obj, "target", &target, 1e-6, hi);
}

/*
 * "autoscale" (base: sim_autoscale). The code reads target (its range depends
 * on the metric) and checks the period before the window (whose default it is).
 */
const ld_section scn__autoscale_section = {
    "autoscale", "/$defs/autoscale/oneOf/1",
    (const ld_field[]){
        {"metric", LD_ENUM, LD_AT(sim_autoscale, metric), .names = metrics, .flags = LD_F_REQUIRED,
         .doc = "per ready pod: the requests it holds (running and queued), or its busy workers "
                "/ `workers`"},
        {"target", LD_CODE, .hook = target_value, .check = check_target,
         .flags = LD_F_REQUIRED | LD_F_PURE,
         .schema =
             "{\"type\": \"number\", \"exclusiveMinimum\": 0, \"maximum\": 1000000, "
             "\"description\": \"the desired average over ready pods (utilization: at most 1)\"}",
         .unit = "number",
         .doc = "the metric's desired average over the ready pods; in (0, 1,000,000], "
                "`utilization` at most 1"},
        {"min", LD_INTEGER, LD_AT(sim_autoscale, min), .lo = 1, .hi = SIM_PODS_MAX / 2, .def = "1",
         .flags = LD_F_SET, .doc = "fewest pods"},
        {"max", LD_INTEGER, LD_AT(sim_autoscale, max), .lo = 1, .hi = SIM_PODS_MAX / 2,
         .flags = LD_F_REQUIRED, .doc = "most pods"},
        {"period", LD_HOOK, LD_AT(sim_autoscale, period_us),
         .schema = "{\"$ref\": \"#/$defs/duration_positive\", \"default\": \"15s\"}",
         .hook = period_value, .def = "\"15s\"", .flags = LD_F_SET | LD_F_PURE,
         .unit = "duration, whole seconds",
         .doc = "how often it decides (the HPA's sync period); at most 1h"},
        {"window", LD_HOOK, LD_AT(sim_autoscale, window_us),
         .schema = "{\"$ref\": \"#/$defs/duration_positive\", \"description\": \"the metric is "
                   "averaged over this (at most 1h), sampled every second; default: the period\"}",
         .hook = window_value, .flags = LD_F_PURE, .unit = "duration", .def_doc = "the `period`",
         .doc = "the metric is sampled every second and averaged over this; at most 1h"},
        {"tolerance", LD_NUMBER, LD_AT(sim_autoscale, tolerance), .lo = 0, .hi = 0.999,
         .def = "0.1", .flags = LD_F_SET,
         .doc = "no change while \\|metric / target − 1\\| ≤ tolerance"},
        {"delay", LD_HOOK, LD_AT(sim_autoscale, delay_us),
         .schema = "{\"$ref\": \"#/$defs/duration\", \"default\": \"0s\"}", .hook = delay_value,
         .flags = LD_F_PURE, .def = "\"0s\"", .unit = "duration",
         .doc = "from a decision to the new pod's start (scheduling, image pull); at most 1h"},
        {"cold_start", LD_HOOK, LD_AT(sim_autoscale, cold_start_us),
         .schema = "{\"$ref\": \"#/$defs/duration\", \"default\": \"0s\"}", .hook = delay_value,
         .flags = LD_F_PURE, .def = "\"0s\"", .unit = "duration",
         .doc = "from its start to its first request (readiness); at most 1h"},
        /* HPA's defaults (Kubernetes pkg/apis/autoscaling/v2/defaults.go; docs/models.md) */
        {"scale_up", LD_HOOK, LD_AT(sim_autoscale, up),
         .schema = "{\"$ref\": \"#/$defs/scale_rules\"}", .hook = parse_rules,
         .def = "{\"stabilization\": \"0s\", \"pods\": 4, \"percent\": 100, \"period\": \"15s\", "
                "\"select\": \"max\"}",
         .flags = LD_F_SET | LD_F_PURE, LD_SUB(&scn__scale_rules_section), .unit = "object",
         .doc = "HPA's `behavior.scaleUp`, below"},
        {"scale_down", LD_HOOK, LD_AT(sim_autoscale, down),
         .schema = "{\"$ref\": \"#/$defs/scale_rules\"}", .hook = parse_rules,
         .def = "{\"stabilization\": \"5m\", \"percent\": 100, \"period\": \"15s\", "
                "\"select\": \"max\"}",
         .flags = LD_F_SET | LD_F_PURE, LD_SUB(&scn__scale_rules_section), .unit = "object",
         .doc = "HPA's `behavior.scaleDown`, below"},
        {0}},
    NULL};

/* The table's defaults, each direction's rules included. */
static int autoscale_defaults(pctx *P, sim_autoscale *a) {
    memset(a, 0, sizeof *a);
    return scn__keep(P, scn__set_defaults(&scn__autoscale_section, a, P->err));
}

static int autoscale_keys(pctx *P, const cJSON *v, sim_autoscale *a) {
    const ld_section *s = &scn__autoscale_section;
    scn__read_range(P, v, s, a, NULL, "target");
    double hi = a->metric == SIM_SCALE_UTILIZATION ? 1 : 1e6;
    scn__get_number(P, v, "target", &a->target, 1e-6, hi);
    scn__read_range(P, v, s, a, "min", "window");
    if (a->period_us % FB_US_PER_S != 0)
        fail_key(P, "period", "a whole number of seconds (the metric is sampled every second)");
    a->window_us = a->period_us;
    scn__read_range(P, v, s, a, "window", NULL);
    return P->rc;
}

static int parse_autoscale(pctx *P, const cJSON *v, void *out) {
    sim_autoscale *a = out;
    autoscale_defaults(P, a);
    if (cJSON_IsFalse(v)) return P->rc;
    scn__check_fields(P, v, &scn__autoscale_section);
    autoscale_keys(P, v, a);
    if (P->rc != FB_OK) return P->rc; /* explicit: on only when read whole */
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
    autoscale_defaults(P, &pol->autoscale);
    scn__key(P, m, "autoscale", parse_autoscale, &pol->autoscale);
    cJSON_DeleteItemFromObjectCaseSensitive(m, "autoscale");
    return P->rc;
}

/* ---- the breaker store ---- */

/* An item of breaker_store.outages (base: sim_store_window). */
const ld_section scn__store_outage_section = {
    "breaker_store.outages", "/properties/breaker_store/properties/outages/items",
    (const ld_field[]){{"at", LD_DURATION0, LD_AT(sim_store_window, at_us), .flags = LD_F_REQUIRED,
                        .doc = "its start, before `duration`"},
                       {"for", LD_DURATION, LD_AT(sim_store_window, for_us), .flags = LD_F_REQUIRED,
                        .doc = "its length"},
                       {0}},
    NULL};

static int store_window(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_scenario *sc = out;
    sim_store_window *w = &sc->store_outages[i];
    scn__fields(P, e, &scn__store_outage_section, w);
    if (w->at_us >= sc->duration_us)
        scn__fail_past_end(P, "at", "the store outage", w->at_us, sc->duration_us);
    if (i > 0 &&
        w->at_us < fb_time_add(sc->store_outages[i - 1].at_us, sc->store_outages[i - 1].for_us))
        scn__fail(P, "store outages must be in time order and must not overlap");
    return P->rc;
}

static int parse_outages(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "store outages", store_window, sc,
                      &sc->store_outage_count);
}

/* "breaker_store" (base: sim_scenario). */
const ld_section scn__breaker_store_section = {
    "breaker_store", "/properties/breaker_store",
    (const ld_field[]){
        {"outages", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"required\": [], \"properties\": {}}}",
         .offset = 0, .size = sizeof(sim_scenario), .hook = parse_outages,
         .flags = LD_F_REQUIRED | LD_F_NAMED, LD_SUB(&scn__store_outage_section),
         .unit = "array of `{\"at\": D, \"for\": D}`",
         .doc = "at most 32 windows, in time order, not overlapping, each starting "
                "before `duration`"},
        {0}},
    NULL};

int scn__parse_breaker_store(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__breaker_store_section, out);
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
