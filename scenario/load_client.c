/*
 * load_client.c - a layer's client-side mechanisms beyond retries and
 * breakers: adaptive concurrency limits per provider ("concurrency_limit",
 * core/conclimit.h), hedged requests ("hedging", core/hedge.h) and HTTP
 * connections ("connections", the pool model of sim/conn.c). Each is off
 * unless the layer names it; docs/scenario-format.md lists the keys.
 */
#include "scenario/loadint.h"

#include <string.h>

/* ---- concurrency_limit: {PROVIDER: {...}} ---- */

/* A key that belongs to another algorithm is an error, not silently ignored. */
static int only_for(pctx *P, const cJSON *v, const char *const *keys, const char *algo,
                    const char *owner) {
    for (size_t i = 0; keys[i]; i++) {
        if (!scn__field(v, keys[i])) continue;
        size_t old = scn__push_key(P, keys[i]);
        int rc = scn__fail(P, "\"%s\" is a setting of the %s algorithm, not of \"%s\"", keys[i],
                           owner, algo);
        scn__pop(P, old);
        return rc;
    }
    return FB_OK;
}

/* The keys each algorithm does not have. */
static int algo_keys(pctx *P, const cJSON *v, fb_conclimit_algo a, const char *name) {
    static const char *const aimd[] = {"backoff_ratio", "timeout", NULL};
    static const char *const g2[] = {"smoothing", "queue_size", "long_window", "rtt_tolerance",
                                     NULL};
    static const char *const adaptive[] = {"initial", "min", "max", NULL};
    static const char *const fixed[] = {"limit", NULL};
    int rc = a == FB_CONCLIMIT_AIMD ? FB_OK : only_for(P, v, aimd, name, "aimd");
    if (rc == FB_OK && a != FB_CONCLIMIT_GRADIENT2) rc = only_for(P, v, g2, name, "gradient2");
    if (rc == FB_OK && a == FB_CONCLIMIT_FIXED)
        rc = only_for(P, v, adaptive, name, "aimd and gradient2");
    if (rc == FB_OK && a != FB_CONCLIMIT_FIXED) rc = only_for(P, v, fixed, name, "fixed");
    return rc;
}

/* initial, min and max: Netflix's defaults 20, 20, 200; initial must lie between. */
static int adaptive_bounds(pctx *P, const cJSON *v, fb_conclimit_config *c) {
    const uint32_t cap = FB_CONCLIMIT_LIMIT_MAX;
    c->initial_limit = 20;
    c->min_limit = 20;
    c->max_limit = 200;
    int rc = scn__get_u32(P, v, "initial", &c->initial_limit, 1, cap);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "min", &c->min_limit, 1, cap);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "max", &c->max_limit, 1, cap);
    if (rc == FB_OK && c->min_limit > c->max_limit)
        rc = scn__fail(P, "min (%u) is above max (%u)", c->min_limit, c->max_limit);
    if (rc == FB_OK && (c->initial_limit < c->min_limit || c->initial_limit > c->max_limit)) {
        size_t old = scn__push_key(P, "initial");
        rc = scn__fail(P, "%u is outside [min, max] = [%u, %u]", c->initial_limit, c->min_limit,
                       c->max_limit);
        scn__pop(P, old);
    }
    return rc;
}

static int conclimit_part(pctx *P, const cJSON *v, sim_provider_policy *pp) {
    static const char *const keys[] = {
        "algorithm",     "limit",         "initial",   "min",        "max",
        "backoff_ratio", "timeout",       "smoothing", "queue_size", "long_window",
        "rtt_tolerance", "timeout_drops", NULL};
    static const char *const algos[] = {"fixed", "aimd", "gradient2", NULL};
    static const char *const required[] = {"algorithm", NULL};
    fb_conclimit_config *c = &pp->conclimit;
    memset(c, 0, sizeof *c);
    int a = 0;
    int rc = scn__check_object(P, v, keys, required);
    if (rc == FB_OK) rc = scn__get_enum(P, v, "algorithm", algos, &a);
    c->algo = (fb_conclimit_algo)a;
    if (rc == FB_OK) rc = algo_keys(P, v, c->algo, algos[a]);
    if (rc == FB_OK && c->algo == FB_CONCLIMIT_FIXED) {
        rc = scn__need_key(P, v, "limit");
        if (rc == FB_OK)
            rc = scn__get_u32(P, v, "limit", &c->initial_limit, 1, FB_CONCLIMIT_LIMIT_MAX);
    } else if (rc == FB_OK) {
        rc = adaptive_bounds(P, v, c);
    }
    if (rc == FB_OK) rc = scn__get_number(P, v, "backoff_ratio", &c->backoff_ratio, 0.5, 0.999999);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "timeout", &c->timeout_us, false);
    if (rc == FB_OK) rc = scn__get_number(P, v, "smoothing", &c->smoothing, 0.000001, 1);
    if (rc == FB_OK)
        rc = scn__get_u32(P, v, "queue_size", &c->queue_size, 1, FB_CONCLIMIT_LIMIT_MAX);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "long_window", &c->long_window, 1, 1000000);
    if (rc == FB_OK) rc = scn__get_number(P, v, "rtt_tolerance", &c->rtt_tolerance, 1, 1e6);
    bool drops = false;
    if (rc == FB_OK) rc = scn__get_bool(P, v, "timeout_drops", &drops);
    c->timeout_drops = drops ? FB_ON : FB_OFF;
    pp->has_conclimit = true;
    return rc;
}

static int parse_conclimits(pctx *P, const cJSON *v, void *out) {
    return scn__per_provider(P, v, conclimit_part, out);
}

/* ---- hedging ---- */

static int parse_hedging(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"max_attempts", "delay",  "percentile",  "window",
                                       "target",       "cancel", "description", NULL};
    static const char *const targets[] = {"same", "next", NULL};
    sim_layer *L = out;
    fb_hedge_config *h = &L->hedge;
    memset(h, 0, sizeof *h);
    h->max_attempts = 2;
    h->delay_us = 2 * FB_US_PER_S;
    int t = 0;
    bool cancel = true;
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK)
        rc = scn__get_u32(P, v, "max_attempts", &h->max_attempts, 2, FB_HEDGE_ATTEMPTS_MAX);
    if (rc == FB_OK) rc = scn__get_duration(P, v, "delay", &h->delay_us, true);
    if (rc == FB_OK && h->delay_us == 0) h->delay_us = FB_HEDGE_AT_ONCE; /* Polly's Delay = Zero */
    if (rc == FB_OK) rc = scn__get_number(P, v, "percentile", &h->percentile, 0.001, 100);
    if (rc == FB_OK && scn__field(v, "window") && !scn__field(v, "percentile"))
        rc = scn__fail(P, "\"window\" is the percentile's: give \"percentile\" too");
    h->window = 100;
    if (rc == FB_OK) rc = scn__get_u32(P, v, "window", &h->window, 1, FB_HEDGE_WINDOW_MAX);
    if (rc == FB_OK) rc = scn__get_enum(P, v, "target", targets, &t);
    h->target = (fb_hedge_target)t;
    if (rc == FB_OK) rc = scn__get_bool(P, v, "cancel", &cancel);
    h->cancel = cancel ? FB_ON : FB_OFF;
    L->has_hedge = true;
    return rc;
}

/* ---- connections ---- */

static int parse_connections(pctx *P, const cJSON *v, void *out) {
    static const char *const keys[] = {"max",   "per_provider", "keepalive",
                                       "setup", "description",  NULL};
    sim_layer *L = out;
    sim_pool *c = &L->pool;
    memset(c, 0, sizeof *c);
    c->keepalive = UINT32_MAX;
    c->setup_us = scn__dist_const(0);
    int rc = scn__check_object(P, v, keys, NULL);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "max", &c->max, 1, 1000000);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "per_provider", &c->per_provider, 1, 1000000);
    if (rc == FB_OK) rc = scn__get_u32(P, v, "keepalive", &c->keepalive, 0, 1000000);
    if (rc == FB_OK) rc = scn__get_dist(P, v, "setup", true, &c->setup_us);
    if (rc == FB_OK && c->max == 0 && c->per_provider == 0)
        rc = scn__fail(P, "a pool needs a maximum: give \"max\", \"per_provider\" or both");
    if (rc == FB_OK && c->max > 0 && c->per_provider > c->max) {
        size_t old = scn__push_key(P, "per_provider");
        rc = scn__fail(P, "%u is above \"max\" (%u): it could never be reached", c->per_provider,
                       c->max);
        scn__pop(P, old);
    }
    L->has_pool = true;
    return rc;
}

int scn__parse_client(pctx *P, const cJSON *v, sim_layer *L) {
    int rc = scn__key(P, v, "concurrency_limit", parse_conclimits, L);
    if (rc == FB_OK) rc = scn__key(P, v, "hedging", parse_hedging, L);
    if (rc == FB_OK) rc = scn__key(P, v, "connections", parse_connections, L);
    return rc;
}

/* Where in a stack these may be: hedging and connections belong to the layer that calls providers.
 */
int scn__check_client_place(pctx *P, const sim_layer *L, bool innermost) {
    if (L->has_hedge && !innermost)
        return scn__fail(P,
                         "layer '%s': hedging belongs to the innermost layer (its attempts are the "
                         "provider calls)",
                         L->name);
    if (L->has_pool && !innermost)
        return scn__fail(P,
                         "layer '%s': connections belong to the innermost layer (it makes the "
                         "HTTP calls)",
                         L->name);
    if (L->has_hedge && L->stream == FB_STREAM_RESUME)
        return scn__fail(
            P,
            "layer '%s': hedging and stream \"resume\" cannot be combined (two answers "
            "cannot both continue one stream)",
            L->name);
    if (L->has_hedge && L->hedge.target == FB_HEDGE_NEXT && L->role != SIM_ROLE_ROUTER)
        return scn__fail(P,
                         "layer '%s': hedging to the \"next\" provider needs the chain: only the "
                         "routing layer has one",
                         L->name);
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX && L->role == SIM_ROLE_OUTER; p++)
        if (L->per_provider[p].has_conclimit)
            return scn__fail(P,
                             "layer '%s' is outside the routing layer: it calls the layer inside, "
                             "not providers, so it has no per-provider concurrency_limit",
                             L->name);
    return FB_OK;
}
