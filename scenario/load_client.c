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
    if (a != FB_CONCLIMIT_AIMD) only_for(P, v, aimd, name, "aimd");
    if (a != FB_CONCLIMIT_GRADIENT2) only_for(P, v, g2, name, "gradient2");
    if (a == FB_CONCLIMIT_FIXED) only_for(P, v, adaptive, name, "aimd and gradient2");
    if (a != FB_CONCLIMIT_FIXED) only_for(P, v, fixed, name, "fixed");
    return P->rc;
}

static const char *const algos[] = {"fixed", "aimd", "gradient2", NULL};

/*
 * One provider's "concurrency_limit" (base: fb_conclimit_config). The code
 * reads limit (fixed) or initial, min and max (the others) after checking
 * the algorithm's keys; the defaults of the rest are core's (conclimit.h).
 */
const ld_section scn__conclimit_section = {
    "concurrency_limit", "/$defs/policy_keys/properties/concurrency_limit/additionalProperties",
    (const ld_field[]){
        {"algorithm", LD_ENUM, LD_AT(fb_conclimit_config, algo), .names = algos,
         .flags = LD_F_REQUIRED,
         .doc = "a fixed limit; additive increase, multiplicative decrease on drops and slow "
                "calls; or Gradient2, from the ratio of the long-term to the current round trip"},
        {"limit", LD_INTEGER, LD_AT(fb_conclimit_config, initial_limit), .lo = 1,
         .hi = FB_CONCLIMIT_LIMIT_MAX, .def_doc = "(required for `fixed`)",
         .doc = "the fixed limit, calls per pod"},
        {"initial", LD_INTEGER, LD_AT(fb_conclimit_config, initial_limit), .lo = 1,
         .hi = FB_CONCLIMIT_LIMIT_MAX, .def = "20",
         .doc = "aimd, gradient2: the limit at the start; within [`min`, `max`]"},
        {"min", LD_INTEGER, LD_AT(fb_conclimit_config, min_limit), .lo = 1,
         .hi = FB_CONCLIMIT_LIMIT_MAX, .def = "20",
         .doc = "aimd, gradient2: the lowest limit (Netflix's default of 20 per client cannot "
                "protect a provider whose capacity is below 20 x the pods)"},
        {"max", LD_INTEGER, LD_AT(fb_conclimit_config, max_limit), .lo = 1,
         .hi = FB_CONCLIMIT_LIMIT_MAX, .def = "200", .doc = "aimd, gradient2: the highest limit"},
        {"backoff_ratio", LD_NUMBER, LD_AT(fb_conclimit_config, backoff_ratio), .lo = 0.5,
         .hi = 0.999999, .def = "0.9",
         .doc = "aimd: the limit after a drop is `(int)(limit x ratio)`"},
        {"timeout", LD_DURATION, LD_AT(fb_conclimit_config, timeout_us), .def = "\"5s\"",
         .doc = "aimd: a call slower than this counts as a drop"},
        {"smoothing", LD_NUMBER, LD_AT(fb_conclimit_config, smoothing), .lo = 0.000001, .hi = 1,
         .def = "0.2", .doc = "gradient2: how far each sample moves the limit"},
        {"queue_size", LD_INTEGER, LD_AT(fb_conclimit_config, queue_size), .lo = 1,
         .hi = FB_CONCLIMIT_LIMIT_MAX, .def = "4",
         .doc = "gradient2: what the limit may grow by per sample"},
        {"long_window", LD_INTEGER, LD_AT(fb_conclimit_config, long_window), .lo = 1, .hi = 1000000,
         .def = "600", .doc = "gradient2: samples in the long-term round-trip average"},
        {"rtt_tolerance", LD_NUMBER, LD_AT(fb_conclimit_config, rtt_tolerance), .lo = 1, .hi = 1e6,
         .def = "1.5", .doc = "gradient2: how much the round trip may grow before the limit falls"},
        {"timeout_drops", LD_SWITCH, LD_AT(fb_conclimit_config, timeout_drops), .def = "false",
         .flags = LD_F_SET,
         .doc = "a timed-out call counts as a drop (the gRPC interceptor ignores "
                "DEADLINE_EXCEEDED; `true` follows the Limiter's \"hitting a timeout\")"},
        {0}},
    NULL};

/* initial, min and max: Netflix's defaults (the rows'); initial must lie between. */
static int adaptive_bounds(pctx *P, const cJSON *v, fb_conclimit_config *c) {
    const ld_section *s = &scn__conclimit_section;
    scn__set_defaults_range(P, s, c, "initial", "backoff_ratio");
    scn__read_range(P, v, s, c, "initial", "backoff_ratio");
    if (c->min_limit > c->max_limit)
        scn__fail(P, "min (%u) is above max (%u)", c->min_limit, c->max_limit);
    if (c->initial_limit < c->min_limit || c->initial_limit > c->max_limit) {
        size_t old = scn__push_key(P, "initial");
        scn__fail(P, "%u is outside [min, max] = [%u, %u]", c->initial_limit, c->min_limit,
                  c->max_limit);
        scn__pop(P, old);
    }
    return P->rc;
}

static int conclimit_part(pctx *P, const cJSON *v, sim_provider_policy *pp) {
    const ld_section *s = &scn__conclimit_section;
    fb_conclimit_config *c = &pp->conclimit;
    memset(c, 0, sizeof *c);
    scn__check_fields(P, v, s);
    scn__keep(P, scn__set_defaults(s, c, P->err)); /* its own context */
    scn__read_range(P, v, s, c, NULL, "limit");
    algo_keys(P, v, c->algo, algos[c->algo]); /* an index of algos: the memset's or one read */
    if (c->algo == FB_CONCLIMIT_FIXED) {
        scn__need_key(P, v, "limit");
        scn__read_range(P, v, s, c, "limit", "initial");
    } else {
        adaptive_bounds(P, v, c);
    }
    scn__read_range(P, v, s, c, "backoff_ratio", NULL);
    pp->has_conclimit = true;
    return P->rc;
}

static int parse_conclimits(pctx *P, const cJSON *v, void *out) {
    return scn__per_provider(P, v, conclimit_part, out);
}

/* ---- hedging ---- */

static const char *const targets[] = {"same", "next", NULL};

/* A layer's "hedging" (base: fb_hedge_config). */
const ld_section scn__hedging_section = {
    "hedging", "/$defs/policy_keys/properties/hedging",
    (const ld_field[]){
        {"max_attempts", LD_INTEGER, LD_AT(fb_hedge_config, max_attempts), .lo = 2,
         .hi = FB_HEDGE_ATTEMPTS_MAX, .def = "2", .flags = LD_F_SET,
         .doc = "calls in a group, the first included (Polly's `MaxHedgedAttempts` + 1, gRPC's "
                "`maxAttempts`)"},
        {"delay", LD_DURATION0, LD_AT(fb_hedge_config, delay_us), .def = "\"2s\"",
         .flags = LD_F_SET,
         .doc = "wait before each further call (Polly's default); `\"0s\"` sends them all at "
                "once"},
        {"percentile", LD_NUMBER, LD_AT(fb_hedge_config, percentile), .lo = 0.001, .hi = 100,
         .def_doc = "none",
         .doc = "the delay is this percentile of the latencies of the pod's last `window` "
                "answers from the provider, once there are that many (`delay` until then)"},
        {"window", LD_INTEGER, LD_AT(fb_hedge_config, window), .lo = 1, .hi = FB_HEDGE_WINDOW_MAX,
         .def = "100", .flags = LD_F_SET, .doc = "with `percentile` only"},
        {"target", LD_ENUM, LD_AT(fb_hedge_config, target), .names = targets, .def = "\"same\"",
         .flags = LD_F_SET,
         .doc = "the provider of the first call, or the next one of the chain that admits a call "
                "(the routing layer only)"},
        {"cancel", LD_SWITCH, LD_AT(fb_hedge_config, cancel), .def = "true", .flags = LD_F_SET,
         .doc = "the losers are cancelled: the provider drops them if it does not keep working "
                "(`keeps_working: false`), else serves and bills them; `false` leaves them "
                "running (they hold their connection and concurrency permit until they answer)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string"},
        {0}},
    NULL};

static int parse_hedging(pctx *P, const cJSON *v, void *out) {
    const ld_section *s = &scn__hedging_section;
    sim_layer *L = out;
    fb_hedge_config *h = &L->hedge;
    memset(h, 0, sizeof *h);
    scn__keep(P, scn__set_defaults(s, h, P->err)); /* its own context */
    scn__check_fields(P, v, s);
    scn__read_range(P, v, s, h, NULL, "window");
    if (scn__field(v, "window") && !scn__field(v, "percentile"))
        scn__fail(P, "\"window\" is the percentile's: give \"percentile\" too");
    scn__read_range(P, v, s, h, "window", NULL);
    if (h->delay_us == 0) h->delay_us = FB_HEDGE_AT_ONCE; /* Polly's Delay = Zero */
    L->has_hedge = true;
    return P->rc;
}

/* ---- connections ---- */

/* A layer's "connections" (base: sim_pool). */
const ld_section scn__connections_section = {
    "connections", "/$defs/policy_keys/properties/connections",
    (const ld_field[]){
        {"max", LD_INTEGER, LD_AT(sim_pool, max), .lo = 1, .hi = 1000000, .def_doc = "no limit",
         .doc = "connections open per pod, every provider together (httpx `max_connections`, "
                "aiohttp `limit`)"},
        {"per_provider", LD_INTEGER, LD_AT(sim_pool, per_provider), .lo = 1, .hi = 1000000,
         .def_doc = "no limit",
         .doc = "connections open per pod to one provider (aiohttp `limit_per_host`); at most "
                "`max`"},
        {"keepalive", LD_INTEGER, LD_AT(sim_pool, keepalive), .lo = 0, .hi = 1000000,
         .flags = LD_F_UNLIMITED, .def_doc = "every one",
         .doc = "idle connections kept open per pod (httpx `max_keepalive_connections`); `0` "
                "closes every connection after its answer"},
        {"setup", LD_HOOK, LD_AT(sim_pool, setup_us),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"0s\"}",
         .hook = scn__duration_dist, .def = "\"0s\"", .flags = LD_F_SET | LD_F_PURE,
         LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
         .doc = "opening a new connection (TCP and TLS handshakes)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string"},
        {0}},
    NULL};

static int parse_connections(pctx *P, const cJSON *v, void *out) {
    sim_layer *L = out;
    sim_pool *c = &L->pool;
    memset(c, 0, sizeof *c);
    scn__fields(P, v, &scn__connections_section, c);
    if (c->max == 0 && c->per_provider == 0)
        scn__fail(P, "a pool needs a maximum: give \"max\", \"per_provider\" or both");
    if (c->max > 0 && c->per_provider > c->max) {
        size_t old = scn__push_key(P, "per_provider");
        scn__fail(P, "%u is above \"max\" (%u): it could never be reached", c->per_provider,
                  c->max);
        scn__pop(P, old);
    }
    L->has_pool = true;
    return P->rc;
}

int scn__parse_client(pctx *P, const cJSON *v, sim_layer *L) {
    scn__key(P, v, "concurrency_limit", parse_conclimits, L);
    scn__key(P, v, "hedging", parse_hedging, L);
    scn__key(P, v, "connections", parse_connections, L);
    return P->rc;
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
