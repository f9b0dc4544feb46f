/*
 * load_providers.c - the "providers" section: each provider's latency,
 * capacity, price and fault timeline; the fault timeline alone, for the mock
 * (scn_faults_parse); and references to providers by name, which traffic
 * and policies make once the providers are read.
 */
#include "scenario/loadint.h"

#include <stdio.h>
#include <string.h>

/* ---- faults: the body of each kind ---- */

/* An HTTP status that is an error (4xx, 5xx): anything else would answer as a success. */
static int get_error_status(pctx *P, const cJSON *obj, const char *key, int *out) {
    int rc = scn__get_status(P, obj, key, out);
    if (rc == FB_OK && *out < 400) {
        size_t old = scn__push_key(P, key);
        rc = scn__fail(P, "%d is not an error status (use 400 to 599)", *out);
        scn__pop(P, old);
    }
    return rc;
}

static int outage_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const keys[] = {"status", "fraction", "retry_after", "error", NULL};
    static const char *const errors[] = {
        "none", "context_length", "content_policy", "rate_limit", "overloaded", "other", NULL};
    int e = 0;
    f->status = 503;
    int rc = scn__check_keys(P, b, keys);
    if (rc == FB_OK) rc = get_error_status(P, b, "status", &f->status);
    if (rc == FB_OK) rc = scn__get_enum(P, b, "error", errors, &e);
    f->error_kind = (fb_error_kind)e;
    return rc;
}

static int rate_limit_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const keys[] = {"status", "fraction", "retry_after", NULL};
    f->status = 429;
    int rc = scn__check_keys(P, b, keys);
    if (rc == FB_OK) rc = get_error_status(P, b, "status", &f->status);
    return rc;
}

static int slow_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const keys[] = {"factor", "fraction", NULL};
    static const char *const required[] = {"factor", NULL};
    int rc = scn__check_object(P, b, keys, required);
    if (rc == FB_OK) rc = scn__get_number(P, b, "factor", &f->factor, 1, 1000);
    return rc;
}

static int brownout_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const keys[] = {"capacity", NULL};
    int rc = scn__check_object(P, b, keys, keys);
    if (rc == FB_OK) rc = scn__get_number(P, b, "capacity", &f->capacity, 0, 1);
    return rc;
}

static int midstream_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const keys[] = {"after_tokens", "fraction", "mode", NULL};
    static const char *const required[] = {"after_tokens", NULL};
    static const char *const modes[] = {"error", "cut", "truncate", NULL};
    int m = 0;
    int rc = scn__check_object(P, b, keys, required);
    if (rc == FB_OK) rc = scn__get_u32(P, b, "after_tokens", &f->after_tokens, 1, 10000000);
    if (rc == FB_OK) rc = scn__get_enum(P, b, "mode", modes, &m);
    f->mode = (sim_midstream_mode)m;
    return rc;
}

static int flap_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const keys[] = {"period", "status", "retry_after", NULL};
    static const char *const required[] = {"period", NULL};
    f->status = 503;
    int rc = scn__check_object(P, b, keys, required);
    if (rc == FB_OK) rc = scn__get_duration(P, b, "period", &f->period_us, false);
    if (rc == FB_OK) rc = get_error_status(P, b, "status", &f->status);
    return rc;
}

static int parse_fault_body(pctx *P, const cJSON *b, sim_fault *f) {
    static const char *const frac_keys[] = {"fraction", NULL};
    int rc = scn__need_object(P, b);
    if (rc != FB_OK) return rc;
    f->fraction = 1.0;
    f->retry_after_us = FB_TIME_NONE;
    f->factor = 1.0;
    f->capacity = 1.0;
    switch (f->kind) {
    case SIM_FAULT_OUTAGE:
        rc = outage_body(P, b, f);
        break;
    case SIM_FAULT_RATE_LIMIT:
        rc = rate_limit_body(P, b, f);
        break;
    case SIM_FAULT_HANG:
    case SIM_FAULT_RESET:
    case SIM_FAULT_POLICY:
        rc = scn__check_keys(P, b, frac_keys);
        break;
    case SIM_FAULT_SLOW:
        rc = slow_body(P, b, f);
        break;
    case SIM_FAULT_BROWNOUT:
        rc = brownout_body(P, b, f);
        break;
    case SIM_FAULT_MIDSTREAM:
        rc = midstream_body(P, b, f);
        break;
    case SIM_FAULT_FLAP:
        rc = flap_body(P, b, f);
        break;
    default:
        break;
    }
    if (rc == FB_OK) rc = scn__get_number(P, b, "fraction", &f->fraction, 0, 1);
    if (rc == FB_OK) rc = scn__get_duration(P, b, "retry_after", &f->retry_after_us, true);
    return rc;
}

/* ---- a fault: {"at", "for", KIND: {...}} ---- */

/* The one member of v that names a kind (into *kind and f->kind). */
static int fault_kind(pctx *P, const cJSON *v, const cJSON **kind, sim_fault *f) {
    static const char *const all[] = {"at",     "for",  "description", "outage",    "rate_limit",
                                      "hang",   "slow", "brownout",    "midstream", "reset",
                                      "policy", "flap", NULL};
    for (const cJSON *it = v->child; it; it = it->next) {
        if (strcmp(it->string, "at") == 0 || strcmp(it->string, "for") == 0 ||
            strcmp(it->string, "description") == 0)
            continue;
        int k = -1;
        for (int i = 0; i < SIM_FAULT_KIND_COUNT; i++)
            if (strcmp(it->string, scn_fault_kind_name((sim_fault_kind)i)) == 0) k = i;
        if (k < 0) return scn__check_keys(P, v, all);
        if (*kind) {
            size_t old = scn__push_key(P, it->string);
            int rc = scn__fail(P, "a fault has exactly one kind; found '%s' and '%s'",
                               (*kind)->string, it->string);
            scn__pop(P, old);
            return rc;
        }
        *kind = it;
        f->kind = (sim_fault_kind)k;
    }
    if (*kind == NULL)
        return scn__fail(P, "a fault needs one of: outage, rate_limit, hang, slow, brownout, "
                            "midstream, reset, policy, flap");
    return FB_OK;
}

static int parse_fault(pctx *P, const cJSON *v, sim_fault *f) {
    const cJSON *kind = NULL;
    int rc = scn__need_object(P, v);
    if (rc == FB_OK) rc = fault_kind(P, v, &kind, f);
    if (rc != FB_OK) return rc;
    if (P->timing_optional) {
        f->at_us = 0;
        f->for_us = FB_TIME_MAX;
    } else {
        rc = scn__need_key(P, v, "at");
        if (rc == FB_OK) rc = scn__need_key(P, v, "for");
    }
    if (rc == FB_OK) rc = scn__get_duration(P, v, "at", &f->at_us, true);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "for", &f->for_us, false);
    if (rc == FB_OK && P->sc && f->at_us >= P->sc->duration_us)
        rc = scn__fail_past_end(P, "at", "the fault", f->at_us, P->sc->duration_us);
    if (rc != FB_OK) return rc;
    size_t old = scn__push_key(P, kind->string);
    rc = parse_fault_body(P, kind, f);
    scn__pop(P, old);
    return rc;
}

/* ---- a provider ---- */

/* "load": the share of the base latency each attempt in service (or waiting) adds. */
static int parse_load(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"in_service", "queued", NULL};
    sim_provider *p = out;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_number(P, v, "in_service", &p->load_in_service, 0, 100);
    if (rc == FB_OK) rc = scn__get_number(P, v, "queued", &p->load_queued, 0, 100);
    return rc;
}

static int parse_latency(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"ttft", "per_output_token", "error", "load", NULL};
    sim_provider *p = out;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "ttft", true, &p->ttft_us);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "per_output_token", &p->per_token_us, true);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "error", true, &p->error_latency_us);
    if (rc == FB_OK) rc = scn__key(P, v, "load", parse_load, p);
    return rc;
}

/* "efficiency": {"queue_above": N, "share": F}, the slots left while overloaded. */
static int parse_efficiency(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"queue_above", "share", NULL};
    sim_provider *p = out;
    int rc = scn__check_object(P, v, keys, keys);
    if (rc == FB_OK)
        rc = scn__get_u32(P, v, "queue_above", &p->efficiency_queue_above, 0, 100000000);
    if (rc == FB_OK) rc = scn__get_number(P, v, "share", &p->efficiency_share, 0.001, 1);
    return rc;
}

/* "codel": {"target": D, "interval": D}, RFC 8289's two parameters. */
static int parse_codel(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"target", "interval", NULL};
    sim_provider *p = out;
    int rc = scn__check_object(P, v, keys, keys);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "target", &p->codel_target_us, false);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "interval", &p->codel_interval_us, false);
    return rc;
}

static int parse_capacity(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"concurrency",     "queue",       "rpm",        "tpm",
                                       "overload_status", "retry_after", "discipline", "codel",
                                       "efficiency",      NULL};
    static const char *const disciplines[] = {"fifo", "lifo", "drop_expired", "codel", NULL};
    sim_provider *p = out;
    uint64_t rpm = 0, tpm = 0;
    int d = 0;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "concurrency", &p->concurrency, 0, 10000000);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "queue", &p->queue, 0, 100000000);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "rpm", &rpm, 0, 1000000000);
    if (rc == FB_OK) rc = scn__get_uint(P, v, "tpm", &tpm, 0, LD_RATE_PER_MIN_MAX);
    if (rc == FB_OK) rc = get_error_status(P, v, "overload_status", &p->overload_status);
    if (rc == FB_OK) rc = scn__get_bool(P, v, "retry_after", &p->limit_retry_after);
    if (rc == FB_OK) rc = scn__get_enum(P, v, "discipline", disciplines, &d);
    p->discipline = (sim_discipline)d;
    if (rc == FB_OK) rc = scn__key(P, v, "codel", parse_codel, p);
    if (rc == FB_OK) rc = scn__key(P, v, "efficiency", parse_efficiency, p);
    p->rpm = (int64_t)rpm;
    p->tpm = (int64_t)tpm;
    return rc;
}

/* Fail at SECTION.KEY of the provider being read. */
static int fail_at(pctx *P, const char *section, const char *key, const char *msg) {
    size_t old = scn__push_key(P, section);
    scn__push_key(P, key);
    int rc = scn__fail(P, "%s", msg);
    scn__pop(P, old);
    return rc;
}

/* A queue setting that could never take effect is an error, not a silent no-op. */
static int capacity_consistent(pctx *P, const cJSON *v, const sim_provider *p) {
    const cJSON *cap = scn__field(v, "capacity");
    bool codel = cap && scn__field(cap, "codel"), efficiency = cap && scn__field(cap, "efficiency");
    if (p->discipline == SIM_QUEUE_CODEL && !codel)
        return fail_at(P, "capacity", "discipline",
                       "\"codel\" needs \"codel\": {\"target\": D, \"interval\": D} beside it");
    if (p->discipline != SIM_QUEUE_CODEL && codel)
        return fail_at(P, "capacity", "codel", "needs \"discipline\": \"codel\"");
    const char *why = "acts on the queue, and only a provider with a capacity.concurrency "
                      "queues attempts";
    if (p->concurrency == 0 && p->discipline != SIM_QUEUE_FIFO)
        return fail_at(P, "capacity", "discipline", why);
    if (p->concurrency == 0 && efficiency) return fail_at(P, "capacity", "efficiency", why);
    if (p->concurrency == 0 && p->load_queued > 0) {
        size_t old = scn__push_key(P, "latency");
        int rc = fail_at(P, "load", "queued", why);
        scn__pop(P, old);
        return rc;
    }
    if (efficiency && p->efficiency_queue_above >= p->queue)
        return fail_at(P, "capacity", "efficiency",
                       "queue_above must be below capacity.queue, or the queue never holds that "
                       "many");
    return FB_OK;
}

static int parse_price(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"input_per_mtok", "output_per_mtok", "per_call", NULL};
    sim_provider *p = out;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_number(P, v, "input_per_mtok", &p->price_in_per_mtok, 0, 1e6);
    if (rc == FB_OK) rc = scn__get_number(P, v, "output_per_mtok", &p->price_out_per_mtok, 0, 1e6);
    if (rc == FB_OK) rc = scn__get_number(P, v, "per_call", &p->price_per_call, 0, 1e6);
    return rc;
}

/* {"latency": DIST}: each way between a pod and the provider (docs/models.md, "Network"). */
static int parse_network(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"latency", NULL};
    sim_provider *p = out;
    int rc = scn__check_object(P, v, keys, keys);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "latency", true, &p->net_latency_us);
    p->has_network = true;
    return rc;
}

static int fault_item(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_fault *faults = out;
    return parse_fault(P, e, &faults[i]);
}

static int parse_faults(pctx *P, const cJSON *v, void *out) {
    sim_provider *p = out;
    return scn__array(P, v, SIM_FAULTS_MAX, "faults per provider", fault_item, p->faults,
                      &p->fault_count);
}

/* "name": a valid name, and not one that "target" gives another meaning. */
static int provider_name(pctx *P, const cJSON *v, sim_provider *p) {
    static const char *const keys[] = {
        "name",   "kind",          "context_window", "latency",     "capacity", "price",
        "faults", "keeps_working", "network",        "description", NULL};
    static const char *const required[] = {"name", NULL};
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_string(P, v, "name", p->name, sizeof p->name);
    if (rc == FB_OK) rc = scn__check_name(P, "name", p->name);
    if (rc != FB_OK) return rc;
    if (strcmp(p->name, "llm") == 0 || strcmp(p->name, "none") == 0 || p->name[0] == '\0') {
        size_t old = scn__push_key(P, "name");
        rc = scn__fail(P, "\"%s\" is reserved", p->name);
        scn__pop(P, old);
    }
    return rc;
}

static int provider_item(pctx *P, const cJSON *v, uint32_t i, void *out) {
    static const char *const kinds[] = {"llm", "tool", NULL};
    sim_scenario *sc = out;
    sim_provider *p = &sc->providers[i];
    int kind = 0;
    int rc = provider_name(P, v, p);
    if (rc != FB_OK) return rc;
    p->ttft_us = scn__dist_const(500e3);
    p->error_latency_us = scn__dist_const(50e3);
    p->queue = 1000;
    p->overload_status = 503;
    p->limit_retry_after = true;
    p->keeps_working = true;
    p->efficiency_share = 1;
    rc = scn__get_enum(P, v, "kind", kinds, &kind);
    p->kind = (sim_provider_kind)kind;
    if (rc == FB_OK) rc = scn__get_u32(P, v, "context_window", &p->context_window, 0, 100000000);
    if (rc == FB_OK) rc = scn__get_bool(P, v, "keeps_working", &p->keeps_working);
    if (rc == FB_OK) rc = scn__key(P, v, "latency", parse_latency, p);
    if (rc == FB_OK) rc = scn__key(P, v, "capacity", parse_capacity, p);
    if (rc == FB_OK) rc = scn__key(P, v, "price", parse_price, p);
    if (rc == FB_OK) rc = scn__key(P, v, "network", parse_network, p);
    if (rc == FB_OK) rc = scn__key(P, v, "faults", parse_faults, p);
    if (rc == FB_OK) rc = capacity_consistent(P, v, p);
    for (uint32_t k = 0; rc == FB_OK && k < i; k++)
        if (strcmp(sc->providers[k].name, p->name) == 0)
            rc = scn__fail(P, "two providers are named \"%s\"", p->name);
    return rc;
}

int scn__parse_providers(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    int rc =
        scn__array(P, v, SIM_PROVIDERS_MAX, "providers", provider_item, sc, &sc->provider_count);
    if (rc == FB_OK && sc->provider_count == 0)
        rc = scn__fail(P, "at least one provider is needed");
    return rc;
}

/* ---- a fault timeline alone ---- */

static int script_item(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_fault *faults = out;
    memset(&faults[i], 0, sizeof faults[i]);
    return parse_fault(P, e, &faults[i]);
}

int scn_faults_parse(const char *text, size_t len, const char *file, sim_fault *out, uint32_t cap,
                     uint32_t *count, sim_error *err) {
    static const char *const keys[] = {"faults", NULL};
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", file ? file : "<faults>");
    *count = 0;
    cJSON *root = scn__parse_json(text, len, err);
    if (root == NULL) return FB_EPARSE;
    pctx P = {err, "", 0, true, NULL, NULL};
    const cJSON *arr = root;
    int rc = FB_OK;
    if (cJSON_IsObject(root)) { /* {"faults": [...]} */
        rc = scn__check_object(&P, root, keys, keys);
        arr = scn__field(root, "faults");
    }
    uint32_t n = 0;
    size_t old = scn__push_key(&P, "faults");
    if (rc == FB_OK) rc = scn__array(&P, arr, cap, "faults", script_item, out, &n);
    scn__pop(&P, old);
    cJSON_Delete(root);
    if (rc == FB_OK) *count = n;
    return rc;
}

/* ---- references by name, from traffic and policies ---- */

int scn__lookup_provider_name(pctx *P, const char *name, uint8_t *out) {
    const sim_scenario *sc = P->sc;
    int i = scn_provider(sc, name);
    if (i < 0) {
        const char *names[SIM_PROVIDERS_MAX + 1];
        for (uint32_t k = 0; k < sc->provider_count; k++) names[k] = sc->providers[k].name;
        names[sc->provider_count] = NULL;
        const char *s = scn__suggest(name, names);
        return s ? scn__fail(P, "no provider named \"%s\" (did you mean \"%s\"?)", name, s)
                 : scn__fail(P, "no provider named \"%s\"", name);
    }
    *out = (uint8_t)i;
    return FB_OK;
}

int scn__lookup_provider(pctx *P, const cJSON *v, uint8_t *out) {
    if (!cJSON_IsString(v))
        return scn__fail(P, "expected a provider name, got %s", scn__type_name(v));
    return scn__lookup_provider_name(P, v->valuestring, out);
}

static int chain_link(pctx *P, const cJSON *e, uint32_t i, void *out) {
    uint8_t *order = out;
    int rc = scn__lookup_provider(P, e, &order[i]);
    for (uint32_t k = 0; rc == FB_OK && k < i; k++)
        if (order[k] == order[i])
            rc = scn__fail(P, "provider \"%s\" is listed twice", e->valuestring);
    if (rc == FB_OK && P->sc->providers[order[i]].kind != SIM_PROVIDER_LLM)
        rc = scn__fail(P, "\"%s\" is a tool, not an LLM provider", e->valuestring);
    return rc;
}

int scn__parse_order(pctx *P, const cJSON *v, uint8_t *order, uint32_t *len) {
    uint32_t n = 0;
    int rc = scn__array(P, v, SIM_PROVIDERS_MAX, "providers", chain_link, order, &n);
    if (rc == FB_OK && n == 0) rc = scn__fail(P, "must name at least one provider");
    if (rc == FB_OK) *len = n;
    return rc;
}
