/*
 * load_variants.c - the "policy" and "variants" sections.
 *
 * Each variant is the base policy with the variant's own keys deep-merged
 * over it (unless it says "inherit_policy": false). A variant is either one layer (its policy keys)
 * or a stack of layers ("layers", outermost first), and traffic classes may have stacks of their
 * own ("classes"), made of new layers or of the variant's by name (a gateway that several classes
 * share keeps one state). Then every stack is checked: one routing layer, roles that agree where a
 * layer is shared, degraded answers only outermost, resumed streams only innermost.
 */
#include "scenario/loadint.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Deep-merge `over` into a copy of `base` (objects merge, anything else replaces). */
static cJSON *merge(const cJSON *base, const cJSON *over) {
    cJSON *out = cJSON_Duplicate(base, 1);
    if (out == NULL) return NULL;
    for (const cJSON *it = over->child; it; it = it->next) {
        cJSON *cur = cJSON_GetObjectItemCaseSensitive(out, it->string);
        cJSON *repl = cur && cJSON_IsObject(cur) && cJSON_IsObject(it) ? merge(cur, it)
                                                                       : cJSON_Duplicate(it, 1);
        if (repl == NULL) {
            cJSON_Delete(out);
            return NULL;
        }
        if (cur)
            cJSON_ReplaceItemInObjectCaseSensitive(out, it->string, repl);
        else
            cJSON_AddItemToObject(out, it->string, repl);
    }
    return out;
}

/* Expectations name variants ("tuned.success_rate >= 0.99"): keep them identifiers. */
static bool variant_name_ok(const char *name) {
    size_t n = strlen(name);
    return n > 0 && n < SIM_NAME_MAX && (isalpha((unsigned char)name[0]) || name[0] == '_') &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* ---- layers ---- */

static int find_layer(const sim_policy *pol, const char *name) {
    for (uint32_t i = 0; i < pol->layer_count; i++)
        if (strcmp(pol->layers[i].name, name) == 0) return (int)i;
    return -1;
}

/* A new layer of the variant, named `name`: its index, or -1 after an error. */
static int new_layer(pctx *P, sim_policy *pol, const char *name) {
    if (pol->layer_count == SIM_LAYERS_MAX) {
        scn__fail(P, "at most %d layers in a variant (all its stacks together)", SIM_LAYERS_MAX);
        return -1;
    }
    if (find_layer(pol, name) >= 0) {
        scn__fail(P, "the variant already has a layer named '%s'", name);
        return -1;
    }
    sim_layer *L = &pol->layers[pol->layer_count];
    snprintf(L->name, sizeof L->name, "%s", name);
    return (int)pol->layer_count++;
}

/* A layer of a "layers" array: a name beside the layer's keys (scn__layer_section). */
const ld_section scn__layer_entry_section = {
    "layers[]", "/$defs/layer/oneOf/0",
    (const ld_field[]){{"name", LD_CODE, .schema = "{\"$ref\": \"#/$defs/name\"}",
                        .flags = LD_F_REQUIRED, .unit = "name",
                        .doc = "the layer's name in the variant (a class's stack may name it)"},
                       {0}},
    NULL};

/* A layer written out in a "layers" array: a name and the policy keys. */
static int layer_object(pctx *P, const cJSON *e, sim_policy *pol, uint8_t *idx) {
    static const ld_section *const secs[] = {&scn__layer_entry_section, &scn__layer_section, NULL};
    char name[SIM_NAME_MAX] = "";
    scn__need_object(P, e);
    scn__need_key(P, e, "name");
    scn__get_string(P, e, "name", name, sizeof name);
    scn__check_name(P, "name", name);
    if (P->rc != FB_OK) return P->rc; /* explicit: a layer is added for a valid name only */
    int i = new_layer(P, pol, name);
    if (i < 0) return FB_EINVAL;
    *idx = (uint8_t)i;
    if (scn__field(e, "preset")) return scn__parse_preset(P, e, &pol->layers[i]);
    if (scn__field(e, "import")) return scn__import_layer(P, e, &pol->layers[i]);
    return scn__parse_layer(P, e, &pol->layers[i], secs);
}

typedef struct stack_ctx {
    sim_policy *pol;
    sim_stack *st;
    bool refs; /* entries may name the variant's layers */
} stack_ctx;

/* A layer of a stack: an object (a new layer) or, in a class's stack, a layer's name. */
static int stack_item(pctx *P, const cJSON *e, uint32_t i, void *out) {
    stack_ctx *c = out;
    uint8_t idx = 0;
    if (cJSON_IsString(e) && c->refs) {
        int k = find_layer(c->pol, e->valuestring);
        if (k < 0) return scn__fail(P, "no layer named '%s' in this variant", e->valuestring);
        idx = (uint8_t)k;
    } else {
        int rc = layer_object(P, e, c->pol, &idx);
        if (rc != FB_OK) return rc;
    }
    for (uint32_t j = 0; j < i; j++)
        if (c->st->layer[j] == idx)
            return scn__fail(P, "layer '%s' is already in this stack", c->pol->layers[idx].name);
    c->st->layer[i] = idx;
    return FB_OK;
}

static int parse_stack(pctx *P, const cJSON *v, sim_policy *pol, sim_stack *st, bool refs) {
    stack_ctx c = {pol, st, refs};
    scn__array(P, v, SIM_DEPTH_MAX, "layers in a stack", stack_item, &c, &st->depth);
    if (st->depth == 0) scn__fail(P, "a stack needs at least one layer");
    return P->rc;
}

/* ---- the checks every stack passes ---- */

/* A layer's keys that make sense only at a place in the stack. */
static int check_place(pctx *P, const sim_layer *L, uint32_t i, uint32_t depth) {
    if (L->degraded && i != 0)
        return scn__fail(P, "layer '%s': only the outermost layer answers with a degraded response",
                         L->name);
    if (L->stream == FB_STREAM_RESUME && i + 1 != depth)
        return scn__fail(P, "layer '%s': only the innermost layer can resume a stream", L->name);
    if (L->context_check && L->role != SIM_ROLE_ROUTER)
        return scn__fail(P, "layer '%s': context_window_check belongs to the routing layer",
                         L->name);
    int rc = scn__check_client_place(P, L, i + 1 == depth);
    if (rc != FB_OK || L->role != SIM_ROLE_OUTER) return rc;
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++)
        if (L->per_provider[p].has_ratelimit || L->per_provider[p].timeout_us > 0)
            return scn__fail(P,
                             "layer '%s' is outside the routing layer: it calls the layer inside, "
                             "not providers, so it has no per-provider rate_limit or overrides",
                             L->name);
    return FB_OK;
}

/* One routing layer per stack: the one with "fallback", else the outermost. */
static int assign_roles(pctx *P, sim_policy *pol, sim_stack *st, uint32_t *assigned) {
    int router = -1;
    for (uint32_t i = 0; i < st->depth; i++) {
        const sim_layer *L = &pol->layers[st->layer[i]];
        if (!L->routes) continue;
        if (router >= 0)
            return scn__fail(P,
                             "layers '%s' and '%s' both declare a fallback chain: fusebox models "
                             "one routing layer per stack",
                             pol->layers[st->layer[router]].name, L->name);
        router = (int)i;
    }
    st->router = router < 0 ? 0 : (uint32_t)router;
    for (uint32_t i = 0; i < st->depth; i++) {
        sim_layer *L = &pol->layers[st->layer[i]];
        sim_role role = i < st->router    ? SIM_ROLE_OUTER
                        : i == st->router ? SIM_ROLE_ROUTER
                                          : SIM_ROLE_INNER;
        if (*assigned & (1u << st->layer[i]) && L->role != role)
            return scn__fail(
                P,
                "layer '%s' has a different place (router, outside or inside it) in "
                "two stacks (without a \"fallback\", a stack's outermost layer routes: "
                "declare \"fallback\" on the routing layer)",
                L->name);
        L->role = role;
        *assigned |= 1u << st->layer[i];
        int rc = check_place(P, L, i, st->depth);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

/* ---- the gateway tier ---- */

static const char *const balances[] = {"round_robin", "random", "least_busy", NULL};

/* The answer to a call that finds the queue full: an error status (out: int). */
static int queue_full_value(pctx *P, const cJSON *v, void *out) {
    uint64_t s = 0; /* stays 0 unless read: below 400, and the error stands */
    scn__get_uint_value(P, v, &s, 100, 599);
    if (s < 400)
        return scn__fail(P, "the status a full gateway queue answers is an error (400..599)");
    *(int *)out = (int)s;
    return FB_OK;
}

/* "gateway" (base: sim_gateway); its layers are read by parse_gateway. */
const ld_section scn__gateway_section = {
    "gateway", "/$defs/gateway",
    (const ld_field[]){
        {"replicas", LD_INTEGER, LD_AT(sim_gateway, replicas), .lo = 1, .hi = SIM_GATEWAY_MAX,
         .flags = LD_F_REQUIRED, .def_doc = "required", .doc = "the gateway's replicas"},
        {"workers", LD_INTEGER, LD_AT(sim_gateway, workers), .lo = 1, .hi = 1000000, .def = "64",
         .flags = LD_F_SET,
         .doc = "calls one replica serves at once (its worker pool, its event loop's concurrency)"},
        {"queue", LD_INTEGER, LD_AT(sim_gateway, queue), .lo = 0, .hi = 10000000, .def = "256",
         .flags = LD_F_SET,
         .doc = "calls waiting for a worker per replica, first come first served"},
        {"balance", LD_ENUM, LD_AT(sim_gateway, balance), .names = balances,
         .def = "\"round_robin\"", .flags = LD_F_SET,
         .doc = "how a pod's call picks its replica: in turn (a Kubernetes Service's proxy in "
                "iptables mode is random, its IPVS mode round-robin), at random, or the replica "
                "holding the fewest calls (busy + queued; ties in turn)"},
        {"queue_full", LD_CODE, .hook = queue_full_value, .flags = LD_F_PURE,
         .schema = "{\"type\": \"integer\", \"minimum\": 400, \"maximum\": 599, \"default\": 429, "
                   "\"description\": \"the answer to a call that finds its replica's queue full\"}",
         .def = "429", .unit = "HTTP status in [400, 599]",
         .doc = "the answer to a call that finds its replica's queue full"},
        {"layers", LD_CODE,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 4, \"items\": {\"$ref\": "
                   "\"#/$defs/layer\"}}",
         .flags = LD_F_REQUIRED | LD_F_NAMED,
         .sub = (const ld_section *const[]){&scn__layer_entry_section, &scn__layer_section, NULL},
         .unit = "array of layers", .def_doc = "required",
         .doc = "the gateway's stack, outermost first, as in `layers` above (presets, files)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—"},
        {0}},
    NULL};

/* The gateway's own keys (its layers read by parse_gateway). */
static int parse_gateway_fields(pctx *P, const cJSON *g, sim_gateway *gw) {
    int status = 429;
    scn__fields(P, g, &scn__gateway_section, gw);
    scn__key(P, g, "queue_full", queue_full_value, &status);
    gw->queue_full_status = (uint32_t)status;
    return P->rc;
}

/*
 * "gateway": {"replicas": N, "layers": [...], ...}: its layers run on the replicas, inside
 * every stack of the variant (appended to each, innermost); the pods' layers call them.
 */
static int parse_gateway(pctx *P, const cJSON *g, sim_policy *pol) {
    parse_gateway_fields(P, g, &pol->gateway);
    if (pol->autoscale.on)
        scn__fail(P, "a gateway tier with an autoscaled fleet (\"autoscale\") is not "
                     "modelled: the replicas would sit beside pods that come and go");
    sim_stack gst;
    memset(&gst, 0, sizeof gst);
    size_t old = scn__push_key(P, "layers");
    parse_stack(P, scn__field(g, "layers"), pol, &gst, false); /* gst.depth: layers read whole */
    scn__pop(P, old);
    for (uint32_t i = 0; i < gst.depth; i++) {
        sim_layer *L = &pol->layers[gst.layer[i]];
        L->gateway = true;
        if (L->degraded)
            scn__fail(P,
                      "layer '%s': a gateway layer answers no degraded "
                      "response (the pods' outermost layer does)",
                      L->name);
    }
    sim_stack *stacks[1 + SIM_CLASSES_MAX];
    uint32_t n = 0;
    stacks[n++] = &pol->stack;
    for (uint32_t c = 0; c < SIM_CLASSES_MAX; c++)
        if (pol->class_stack[c].depth > 0) stacks[n++] = &pol->class_stack[c];
    for (uint32_t k = 0; k < n; k++) {
        sim_stack *st = stacks[k];
        if (st->depth + gst.depth > SIM_DEPTH_MAX)
            return scn__fail(P,
                             "a stack and the gateway's layers together pass through %u layers; "
                             "at most %d",
                             st->depth + gst.depth, SIM_DEPTH_MAX);
        st->gateway = st->depth;
        for (uint32_t i = 0; i < gst.depth; i++) st->layer[st->depth++] = gst.layer[i];
    }
    return P->rc;
}

/* ---- a variant ---- */

/* true or false: inherit_policy's check for --set (parse_variant reads it before it merges). */
static int bool_value(pctx *P, const cJSON *v, void *out) {
    if (!cJSON_IsBool(v)) return scn__fail(P, "expected true or false, got %s", scn__type_name(v));
    *(bool *)out = cJSON_IsTrue(v);
    return FB_OK;
}

/* "policy" or "recorded" (out: bool, recorded): waits' check for --set, and its reading. */
static int waits_value(pctx *P, const cJSON *v, void *out) {
    if (cJSON_IsString(v) && strcmp(v->valuestring, "recorded") == 0)
        *(bool *)out = true;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "policy") == 0)
        *(bool *)out = false;
    else
        return scn__fail(P, "expected \"policy\" or \"recorded\", got %s",
                         cJSON_IsString(v) ? v->valuestring : scn__type_name(v));
    return FB_OK;
}

/* A variant's keys beside its layer's (base: sim_policy; read by this file's code). */
const ld_section scn__variant_section = {
    "variant", "/$defs/variant_layered",
    (const ld_field[]){
        {"layers", LD_CODE,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 4, \"items\": {\"$ref\": "
                   "\"#/$defs/layer\"}}",
         .flags = LD_F_NAMED | LD_F_NEEDED,
         .sub = (const ld_section *const[]){&scn__layer_entry_section, &scn__layer_section, NULL},
         .unit = "array of layers", .def_doc = "one layer, named `policy`",
         .doc = "a stack of layers, outermost first, each a `name` and the keys above: "
                "[Layers](#layers-the-stack-a-request-passes-through); the variant's own keys "
                "then leave out the layer's"},
        {"classes", LD_CODE, .schema = "{\"$ref\": \"#/$defs/classes\"}", .flags = LD_F_NAMED,
         LD_SUB(&scn__class_stack_section, &scn__layer_section), .unit = "object",
         .def_doc = "none",
         .doc = "a traffic class's own stack, or one layer of its own, by class name"},
        {"autoscale", LD_CODE, .schema = "{\"$ref\": \"#/$defs/autoscale\"}",
         LD_SUB(&scn__autoscale_section), .unit = "object or `false`",
         .def_doc = "none (a fixed fleet of `pods.count`)",
         .doc = "Kubernetes' HPA sizes the variant's pods: [autoscale](#autoscale)"},
        {"gateway", LD_CODE, .schema = "{\"$ref\": \"#/$defs/gateway\"}",
         .sub = (const ld_section *const[]){&scn__gateway_section, NULL}, .unit = "object",
         .def_doc = "none (the layers run in the pods)",
         .doc = "a gateway tier between the pods and the providers: replicas with their workers, "
                "queue and own state of the gateway's layers ([Gateway tier](#gateway-tier))"},
        {"waits", LD_CODE, .hook = waits_value, .flags = LD_F_PURE,
         .schema = "{\"enum\": [\"policy\", \"recorded\"]}", .def = "\"policy\"",
         .unit = "`\"policy\"` or `\"recorded\"`",
         .doc = "the waits before retries and between a session's requests: the retry "
                "policy's and `think`'s (or `think_ms`'s), or `\"recorded\"`: a replayed "
                "request's retries start when the log's did (`arrivals.replay.retry_at_ms`, from "
                "its arrival; the innermost layer's retries, also those the policy sends at "
                "once; after the policy's own wait where the log has none, a request that fails "
                "more often than in the log or a call its breaker rejected; a fallback goes at "
                "once) and a session's requests when the log's did (`turn_at_ms`), each at once "
                "when what came before it ended later; `fusebox import` writes it on `as-was`"},
        {"inherit_policy", LD_CODE, .hook = bool_value, .flags = LD_F_VARIANT | LD_F_PURE,
         .schema = "{\"type\": \"boolean\", \"description\": \"false: the top-level policy is not "
                   "merged in (default true)\"}",
         .def = "true", .unit = "boolean",
         .doc = "`false`: the top-level `policy` is not merged in (a variant's key, not "
                "`policy`'s)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—"},
        {0}},
    NULL};

/* "waits" (the variant's, or the policy's merged in): "recorded" needs a class with recorded
   waits to replay. */
static int parse_waits(pctx *P, cJSON *m, sim_policy *pol) {
    if (scn__key(P, m, "waits", waits_value, &pol->recorded_waits) == FB_OK &&
        pol->recorded_waits) {
        bool any = false;
        for (uint32_t c = 0; c < P->sc->class_count; c++)
            any |= P->sc->classes[c].retry_at_first || P->sc->classes[c].turn_at_us;
        if (!any) {
            size_t old = scn__push_key(P, "waits");
            scn__fail(P, "\"recorded\" needs times recorded in a log: a traffic class whose "
                         "arrivals.replay has \"retry_at_ms\" or \"turn_at_ms\" (fusebox "
                         "import writes them)");
            scn__pop(P, old);
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(m, "waits");
    return P->rc;
}

/* A policy key beside "layers" is a mistake worth its own message. */
static int check_layered_keys(pctx *P, const cJSON *m) {
    for (const cJSON *it = m->child; it; it = it->next) {
        for (const ld_field *f = scn__layer_section.fields; f->name; f++) {
            if (strcmp(it->string, f->name) != 0 || strcmp(it->string, "description") == 0)
                continue;
            size_t old = scn__push_key(P, it->string);
            int rc = scn__fail(P,
                               "with \"layers\", \"%s\" belongs inside a layer (the top-level "
                               "\"policy\" is merged into every variant)",
                               it->string);
            scn__pop(P, old);
            return rc;
        }
    }
    return scn__check_fields(P, m, &scn__variant_section);
}

/* The variant's policy keys as its one layer (the form without "layers"). */
static int parse_single(pctx *P, const cJSON *m, sim_policy *pol) {
    static const ld_section *const secs[] = {&scn__layer_section, &scn__variant_section, NULL};
    int i = new_layer(P, pol, "policy");
    if (i < 0) return FB_EINVAL;
    pol->stack.layer[0] = (uint8_t)i;
    pol->stack.depth = 1;
    return scn__parse_layer(P, m, &pol->layers[i], secs);
}

static int class_index(pctx *P, const char *name, uint32_t *out) {
    for (uint32_t c = 0; c < P->sc->class_count; c++)
        if (strcmp(P->sc->classes[c].name, name) == 0) {
            *out = c;
            return FB_OK;
        }
    return scn__fail(P, "no traffic class named '%s'", name);
}

/* A class's own stack: {"layers": [...]}, new layers or the variant's by name. */
const ld_section scn__class_stack_section = {
    "classes", "/$defs/classes/additionalProperties/oneOf/0",
    (const ld_field[]){
        {"layers", LD_CODE,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 4, \"items\": {\"oneOf\": "
                   "[{\"$ref\": \"#/$defs/layer\"}, {\"$ref\": \"#/$defs/name\", \"description\": "
                   "\"a layer of the variant, shared\"}]}}",
         .flags = LD_F_REQUIRED | LD_F_NAMED,
         LD_SUB(&scn__layer_entry_section, &scn__layer_section), .unit = "array",
         .doc = "the class's stack, outermost first: new layers, or the names of "
                "the variant's layers (shared)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string",
         .def_doc = "—"},
        {0}},
    NULL};

/* "classes": {CLASS: {"layers": [...]}} or {CLASS: policy keys} (one layer named CLASS). */
static int parse_classes(pctx *P, const cJSON *v, void *out) {
    static const ld_section *const layer[] = {&scn__layer_section, NULL};
    sim_policy *pol = out;
    if (scn__need_object(P, v) != FB_OK) return P->rc; /* explicit: members have keys */
    for (const cJSON *e = v->child; e; e = e->next) {
        size_t old = scn__push_key(P, e->string);
        uint32_t c = 0;
        class_index(P, e->string, &c);
        scn__need_object(P, e);
        sim_stack *st = &pol->class_stack[c];
        if (P->rc != FB_OK) { /* explicit: c names a class and e is an object */
            scn__pop(P, old);
            break;
        }
        if (scn__field(e, "layers")) {
            scn__check_fields(P, e, &scn__class_stack_section);
            size_t o2 = scn__push_key(P, "layers");
            parse_stack(P, scn__field(e, "layers"), pol, st, true);
            scn__pop(P, o2);
        } else {
            int i = new_layer(P, pol, e->string);
            if (i >= 0 && scn__field(e, "preset")) /* explicit: i is a layer */
                scn__parse_preset(P, e, &pol->layers[i]);
            else if (i >= 0)
                scn__parse_layer(P, e, &pol->layers[i], layer);
            st->layer[0] = (uint8_t)i;
            st->depth = 1;
        }
        scn__pop(P, old);
    }
    return P->rc;
}

static int parse_stacks(pctx *P, const cJSON *m, sim_policy *pol) {
    if (scn__field(m, "layers")) {
        pol->layered = true;
        check_layered_keys(P, m);
        size_t old = scn__push_key(P, "layers");
        parse_stack(P, scn__field(m, "layers"), pol, &pol->stack, false);
        scn__pop(P, old);
    } else {
        parse_single(P, m, pol);
    }
    scn__key(P, m, "classes", parse_classes, pol);
    if (scn__field(m, "gateway")) {
        size_t old = scn__push_key(P, "gateway");
        parse_gateway(P, scn__field(m, "gateway"), pol);
        scn__pop(P, old);
    }
    if (P->rc != FB_OK) return P->rc; /* explicit: roles are given to whole stacks only */
    uint32_t assigned = 0;
    assign_roles(P, pol, &pol->stack, &assigned);
    for (uint32_t c = 0; c < SIM_CLASSES_MAX; c++)
        if (pol->class_stack[c].depth > 0) assign_roles(P, pol, &pol->class_stack[c], &assigned);
    return P->rc;
}

static int parse_variant(pctx *P, const cJSON *base, const cJSON *v, sim_policy *pol) {
    if (!variant_name_ok(v->string))
        return scn__fail(P, "variant names start with a letter and use letters, digits, '_' and "
                            "'-' (expectations refer to them)");
    int rc = scn__need_object(P, v);
    if (rc != FB_OK) return rc;
    /* "inherit_policy": false, a stack of its own (fusebox run --policy adds one) */
    bool inherit = true;
    rc = scn__get_bool(P, v, "inherit_policy", &inherit);
    if (rc != FB_OK) return rc;
    cJSON *none = inherit ? NULL : cJSON_CreateObject();
    cJSON *m = merge(inherit ? base : none, v);
    cJSON_Delete(none);
    snprintf(pol->name, SIM_NAME_MAX, "%s", v->string);
    if (m == NULL) return scn__fail(P, "out of memory"); /* explicit: m is read below */
    cJSON_DeleteItemFromObjectCaseSensitive(m, "inherit_policy");
    scn__parse_variant_fleet(P, m, pol);
    parse_waits(P, m, pol);
    parse_stacks(P, m, pol);
    cJSON_Delete(m);
    return P->rc;
}

static int parse_variant_list(pctx *P, const cJSON *base, const cJSON *vars, sim_scenario *sc) {
    if (scn__need_object(P, vars) != FB_OK) return P->rc; /* explicit: members have keys */
    uint32_t i = 0;
    for (const cJSON *e = vars->child; e; e = e->next, i++) {
        size_t old = scn__push_key(P, e->string);
        if (i >= SIM_VARIANTS_MAX)
            scn__fail(P, "at most %d variants", SIM_VARIANTS_MAX);
        else if (parse_variant(P, base, e, &sc->variants[i]) == FB_OK)
            sc->variant_count = i + 1; /* explicit: the variants read whole */
        scn__pop(P, old);
    }
    if (i == 0) scn__fail(P, "at least one variant is needed");
    return P->rc;
}

int scn__parse_variants(pctx *P, const cJSON *root, sim_scenario *sc) {
    const cJSON *base = scn__field(root, "policy");
    const cJSON *vars = scn__field(root, "variants");
    int rc = FB_OK;
    if (base && !cJSON_IsObject(base)) {
        size_t old = scn__push_key(P, "policy");
        rc = scn__need_object(P, base);
        scn__pop(P, old);
        return rc;
    }
    if (base && scn__field(base, "inherit_policy")) {
        size_t old = scn__push_key(P, "policy");
        scn__push_key(P, "inherit_policy");
        rc = scn__fail(P,
                       "unknown key 'inherit_policy' (a variant's key: it keeps this policy out)");
        scn__pop(P, old);
        return rc;
    }
    cJSON *empty = NULL;
    if (base == NULL) base = empty = cJSON_CreateObject();
    if (vars == NULL) {
        /* no variants: the policy alone, named "default" */
        size_t old = scn__push_key(P, "policy");
        snprintf(sc->variants[0].name, SIM_NAME_MAX, "default");
        cJSON *m = cJSON_Duplicate(base, 1);
        if (m == NULL) { /* explicit: m is read below */
            scn__fail(P, "out of memory");
        } else {
            scn__parse_variant_fleet(P, m, &sc->variants[0]);
            parse_waits(P, m, &sc->variants[0]);
            parse_stacks(P, m, &sc->variants[0]);
        }
        cJSON_Delete(m);
        sc->variant_count = 1;
        scn__pop(P, old);
    } else {
        size_t old = scn__push_key(P, "variants");
        parse_variant_list(P, base, vars, sc);
        scn__pop(P, old);
    }
    cJSON_Delete(empty);
    return P->rc;
}
