/*
 * export.c - a preset layer as the library's configuration; see export.h.
 *
 * One table per kind: a row per preset parameter says where in the file it
 * goes (an anchor, the map the kind's block is built around, and the keys
 * below it) and how its value is written. The values are the layer's own,
 * already in the library's units (resilience4j's "10s" or milliseconds,
 * LiteLLM's seconds, Envoy's "0.25s" proto durations): they are copied, not
 * converted, which is what makes import-policy read them back unchanged.
 * The document is then printed as block YAML that PyYAML (YAML 1.1),
 * snakeyaml and Envoy's YAML reader all read as written: a string that any
 * of them would take for a number, a boolean or null is quoted.
 */
#include "import/export.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/fb.h"
#include "import/policyint.h"
#include "scenario/preset.h"
#include "util/buf.h"

/* ---- the tables ---- */

/* The maps a kind's block is built around. */
enum anchor {
    AT_ROOT,      /* the document (LiteLLM, resilience4j) */
    AT_ROUTE,     /* Envoy: the route's RouteAction */
    AT_CLUSTER,   /* Envoy: the Cluster */
    AT_THRESHOLD, /* Envoy: the cluster's circuit_breakers.thresholds[] of priority DEFAULT */
    AT_N
};

/* How a value is written. */
enum conv {
    AS_IS,       /* the layer's value, verbatim */
    SECRET_ENV,  /* a secret: never its value, the environment variable `env` LiteLLM reads */
    DEPLOYMENTS, /* LiteLLM's model_list: a deployment's provider becomes its model_info.id */
};

typedef struct row {
    const char *param; /* the preset's parameter; an object parameter carries its "NAME.KEY"s */
    enum anchor at;
    const char *path; /* keys below the anchor, '.'-separated; "%s" is the instance's name;
                         NULL: no place in the file, `why` says */
    enum conv conv;
    const char *why; /* NULL-path rows: why not; SECRET_ENV: the variable */
} row;

/*
 * resilience4j (Spring Boot starters, CircuitBreakerConfigurationProperties and
 * RetryConfigurationProperties): every key under the instance, camelCase as the
 * preset names it (Spring's relaxed binding reads it, as it reads kebab-case).
 */
#define CB(k)                                                                                      \
    { #k, AT_ROOT, "resilience4j.circuitbreaker.instances.%s." #k, AS_IS, NULL }
#define RETRY(k)                                                                                   \
    { #k, AT_ROOT, "resilience4j.retry.instances.%s." #k, AS_IS, NULL }
static const row r4j_rows[] = {
    CB(failureRateThreshold),
    CB(slowCallRateThreshold),
    CB(slowCallDurationThreshold),
    CB(permittedNumberOfCallsInHalfOpenState),
    CB(maxWaitDurationInHalfOpenState),
    CB(slidingWindowType),
    CB(slidingWindowSize),
    CB(minimumNumberOfCalls),
    CB(waitDurationInOpenState),
    CB(automaticTransitionFromOpenToHalfOpenEnabled),
    CB(recordExceptions),
    CB(ignoreExceptions),
    RETRY(maxAttempts),
    RETRY(waitDuration),
    RETRY(enableExponentialBackoff),
    RETRY(exponentialBackoffMultiplier),
    RETRY(exponentialMaxWaitDuration),
    RETRY(enableRandomizedWait),
    RETRY(randomizedWaitFactor),
    RETRY(retryExceptions),
    {"retryIgnoreExceptions", AT_ROOT, "resilience4j.retry.instances.%s.ignoreExceptions", AS_IS,
     NULL},
    {NULL, AT_ROOT, NULL, AS_IS, NULL},
};
#undef CB
#undef RETRY

/*
 * LiteLLM (a proxy config.yaml): the Router's arguments under router_settings,
 * where Router.__init__ takes each of them first (policy_litellm.c says the
 * rules); the deployments as model_list.
 */
#define ROUTER(k)                                                                                  \
    { #k, AT_ROOT, "router_settings." #k, AS_IS, NULL }
static const row litellm_rows[] = {
    {"model_list", AT_ROOT, "model_list", DEPLOYMENTS, NULL},
    {"model", AT_ROOT, NULL, AS_IS,
     "the model group a request asks for is the caller's, not the proxy's configuration"},
    {"map_provider", AT_ROOT, NULL, AS_IS,
     "fusebox's own: which scenario provider a deployment runs as; LiteLLM has no such key"},
    ROUTER(num_retries),
    ROUTER(retry_after),
    ROUTER(timeout),
    ROUTER(allowed_fails),
    ROUTER(allowed_fails_policy),
    ROUTER(retry_policy),
    ROUTER(cooldown_time),
    ROUTER(disable_cooldowns),
    ROUTER(fallbacks),
    ROUTER(default_fallbacks),
    ROUTER(context_window_fallbacks),
    ROUTER(content_policy_fallbacks),
    ROUTER(routing_strategy),
    ROUTER(redis_host),
    {"redis_url", AT_ROOT, "router_settings.redis_url", SECRET_ENV, "REDIS_URL"},
    ROUTER(redis_port),
    {"redis_password", AT_ROOT, "router_settings.redis_password", SECRET_ENV, "REDIS_PASSWORD"},
    {NULL, AT_ROOT, NULL, AS_IS, NULL},
};
#undef ROUTER

/* Envoy v3 (route_components.proto RetryPolicy, cluster.proto, circuit_breaker.proto). */
static const row envoy_rows[] = {
    {"retry_on", AT_ROUTE, "retry_policy.retry_on", AS_IS, NULL},
    {"num_retries", AT_ROUTE, "retry_policy.num_retries", AS_IS, NULL},
    {"per_try_timeout", AT_ROUTE, "retry_policy.per_try_timeout", AS_IS, NULL},
    {"timeout", AT_ROUTE, "timeout", AS_IS, NULL},
    {"retry_back_off", AT_ROUTE, "retry_policy.retry_back_off", AS_IS, NULL},
    {"retriable_status_codes", AT_ROUTE, "retry_policy.retriable_status_codes", AS_IS, NULL},
    {"max_retries", AT_THRESHOLD, "max_retries", AS_IS, NULL},
    {"retry_budget", AT_THRESHOLD, "retry_budget", AS_IS, NULL},
    {"outlier_detection", AT_CLUSTER, "outlier_detection", AS_IS, NULL},
    {"lb_policy", AT_CLUSTER, "lb_policy", AS_IS, NULL},
    {"hosts", AT_CLUSTER, NULL, AS_IS,
     "the cluster's endpoints are your hosts' addresses, not scenario providers: keep your "
     "load_assignment"},
    {NULL, AT_ROOT, NULL, AS_IS, NULL},
};

typedef struct kind_def {
    const char *kind, *preset;
    const row *rows;
} kind_def;

static const kind_def kind_defs[] = {
    {"resilience4j", "resilience4j", r4j_rows},
    {"litellm", "litellm", litellm_rows},
    {"envoy", "envoy", envoy_rows},
};

#define NKINDS (sizeof kind_defs / sizeof kind_defs[0])

static const char *const kinds[NKINDS + 1] = {"resilience4j", "litellm", "envoy", NULL};

const char *const *imp_export_kinds(void) {
    return kinds;
}

static const kind_def *kind_of(const char *kind) {
    for (size_t i = 0; i < NKINDS; i++)
        if (strcmp(kind, kind_defs[i].kind) == 0) return &kind_defs[i];
    return NULL;
}

const char *imp_export_preset(const char *kind) {
    const kind_def *k = kind_of(kind);
    return k ? k->preset : NULL;
}

/* The row of parameter `param` ("NAME.KEY": NAME's row), or NULL. */
static const row *row_of(const kind_def *k, const char *param) {
    size_t n = strcspn(param, ".");
    for (const row *r = k->rows; r->param; r++)
        if (strlen(r->param) == n && strncmp(r->param, param, n) == 0) return r;
    return NULL;
}

/* ---- YAML out ---- */

static void pad(util_buf *t, int n) {
    for (int i = 0; i < n; i++) util_buf_append(t, " ", 1);
}

/* A string every YAML reader takes for a string when written plain (block or flow). */
static bool plain_ok(const char *s) {
    static const char *const words[] = {"yes",  "Yes",  "YES",   "no",    "No",    "NO",   "true",
                                        "True", "TRUE", "false", "False", "FALSE", "on",   "On",
                                        "ON",   "off",  "Off",   "OFF",   "null",  "Null", "NULL",
                                        "y",    "Y",    "n",     "N",     NULL};
    if (s[0] == '\0' || strchr("-.+", s[0]) || imp_one_of(s, words)) return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("_./-", *c)))
            return false;
    cJSON *core = imp_scalar_core(s);
    bool number = core != NULL;
    cJSON_Delete(core);
    if (number) return false;
    /* YAML 1.1's numbers and dates: a digit first, then only what they are made of */
    if (s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789_.eExXabcdefABCDEFoO-") == strlen(s))
        return false;
    return true;
}

static void put_string(util_buf *t, const char *s) {
    if (plain_ok(s)) {
        util_buf_puts(t, s);
        return;
    }
    util_buf_append(t, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[8];
        if (*c == '"' || *c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*c;
            util_buf_append(t, esc, 2);
        } else if (*c < 0x20 || *c == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", *c);
            util_buf_puts(t, esc);
        } else {
            util_buf_append(t, (const char *)c, 1);
        }
    }
    util_buf_append(t, "\"", 1);
}

/* The shortest decimal that reads back as d. */
static void put_number(util_buf *t, double d) {
    char b[40];
    if (!isfinite(d)) {
        util_buf_puts(t, "null");
        return;
    }
    if (d == floor(d) && fabs(d) < 9007199254740992.0) {
        snprintf(b, sizeof b, "%.0f", d);
    } else {
        for (int p = 1; p <= 17; p++) {
            snprintf(b, sizeof b, "%.*g", p, d);
            if (strtod(b, NULL) == d) break;
        }
        /* YAML 1.1 (PyYAML) reads 1e-05 as a string: a float needs its dot */
        char *e = strpbrk(b, "eE");
        if (e && !strchr(b, '.')) {
            char mant[40];
            snprintf(mant, sizeof mant, "%.*s.0%s", (int)(e - b), b, e);
            snprintf(b, sizeof b, "%s", mant);
        }
    }
    util_buf_puts(t, b);
}

static bool scalar(const cJSON *v) {
    return !cJSON_IsObject(v) && !cJSON_IsArray(v);
}

static void put_scalar(util_buf *t, const cJSON *v) {
    if (cJSON_IsString(v))
        put_string(t, v->valuestring);
    else if (cJSON_IsNumber(v))
        put_number(t, v->valuedouble);
    else if (cJSON_IsBool(v))
        util_buf_puts(t, cJSON_IsTrue(v) ? "true" : "false");
    else
        util_buf_puts(t, "null");
}

/* Flow style, for what stands inside a sequence's sequence and for empty collections. */
static void put_flow(util_buf *t, const cJSON *v) {
    if (scalar(v)) {
        put_scalar(t, v);
        return;
    }
    bool obj = cJSON_IsObject(v);
    util_buf_append(t, obj ? "{" : "[", 1);
    for (const cJSON *c = v->child; c; c = c->next) {
        if (obj) {
            put_string(t, c->string);
            util_buf_puts(t, ": ");
        }
        put_flow(t, c);
        if (c->next) util_buf_puts(t, ", ");
    }
    util_buf_append(t, obj ? "}" : "]", 1);
}

static bool empty(const cJSON *v) {
    return !scalar(v) && v->child == NULL;
}

static void put_seq(util_buf *t, const cJSON *v, int indent);

/* A map's members at `indent`; the first one's indentation already written when `first_done`. */
static void put_map(util_buf *t, const cJSON *v, int indent, bool first_done) {
    for (const cJSON *c = v->child; c; c = c->next) {
        if (c != v->child || !first_done) pad(t, indent);
        put_string(t, c->string);
        util_buf_append(t, ":", 1);
        if (scalar(c) || empty(c)) {
            util_buf_append(t, " ", 1);
            put_flow(t, c);
            util_buf_append(t, "\n", 1);
        } else if (cJSON_IsObject(c)) {
            util_buf_append(t, "\n", 1);
            put_map(t, c, indent + 2, false);
        } else {
            util_buf_append(t, "\n", 1);
            put_seq(t, c, indent + 2);
        }
    }
}

static void put_seq(util_buf *t, const cJSON *v, int indent) {
    for (const cJSON *c = v->child; c; c = c->next) {
        pad(t, indent);
        util_buf_puts(t, "- ");
        if (cJSON_IsObject(c) && c->child) {
            put_map(t, c, indent + 2, true);
        } else {
            put_flow(t, c);
            util_buf_append(t, "\n", 1);
        }
    }
}

/* ---- building the document ---- */

typedef struct exporter {
    const kind_def *k;
    const char *name;
    cJSON *anchor[AT_N];
    util_buf notes;
    char *msg;
    size_t msglen;
} exporter;

static int fail(exporter *E, int rc, const char *fmt, const char *a, const char *b) {
    snprintf(E->msg, E->msglen, fmt, a, b);
    return rc;
}

static void note(exporter *E, const char *key, const char *why) {
    util_buf_puts(&E->notes, key);
    util_buf_puts(&E->notes, ": ");
    util_buf_puts(&E->notes, why);
    util_buf_puts(&E->notes, "\n");
}

/* Put `v` at path below map `at` ("%s" steps are the instance's name), creating the maps. */
static int place(exporter *E, cJSON *at, const char *path, cJSON *v) {
    char step[160];
    while (v) {
        size_t n = strcspn(path, ".");
        snprintf(step, sizeof step, "%.*s", (int)n, path);
        if (strcmp(step, "%s") == 0) snprintf(step, sizeof step, "%s", E->name);
        if (path[n] == '\0') {
            cJSON_DeleteItemFromObjectCaseSensitive(at, step);
            cJSON_AddItemToObject(at, step, v);
            return FB_OK;
        }
        cJSON *next = cJSON_GetObjectItemCaseSensitive(at, step);
        if (next == NULL) next = cJSON_AddObjectToObject(at, step);
        if (next == NULL) break;
        at = next;
        path += n + 1;
    }
    cJSON_Delete(v);
    return fail(E, FB_ENOMEM, "%s%s", "out of memory", "");
}

/* LiteLLM's deployments: a deployment's "provider" (fusebox's) as its model_info.id. */
static cJSON *deployments(exporter *E, const cJSON *list) {
    cJSON *out = cJSON_Duplicate(list, true);
    cJSON *d = NULL;
    bool moved = false, dropped = false;
    cJSON_ArrayForEach(d, out) {
        cJSON *prov = cJSON_DetachItemFromObjectCaseSensitive(d, "provider");
        if (prov == NULL) continue;
        cJSON *info = cJSON_GetObjectItemCaseSensitive(d, "model_info");
        if (info == NULL) info = cJSON_AddObjectToObject(d, "model_info");
        if (cJSON_IsObject(info) && !cJSON_GetObjectItemCaseSensitive(info, "id") &&
            cJSON_IsString(prov)) {
            cJSON_AddStringToObject(info, "id", prov->valuestring);
            moved = true;
        } else {
            dropped = true;
        }
        cJSON_Delete(prov);
    }
    if (moved)
        note(E, "model_list[].provider",
             "written as the deployment's model_info.id, which names the scenario provider "
             "when the file is imported again");
    if (dropped)
        note(E, "model_list[].provider",
             "not written where the deployment has a model_info.id (that id names its provider)");
    return out;
}

/* Every key of an object parameter is one of the preset's NAME.KEY parameters. */
static int check_object(exporter *E, const sim_preset *p, const cJSON *v) {
    if (!cJSON_IsObject(v))
        return fail(E, FB_EINVAL, "%s: an object (its keys are the preset's %s.KEY parameters)",
                    v->string, v->string);
    for (const cJSON *c = v->child; c; c = c->next) {
        char param[200];
        snprintf(param, sizeof param, "%s.%s", v->string, c->string);
        if (scn_preset_param(p, param) < 0)
            return fail(E, FB_EINVAL, "%s: not a parameter of the preset (fusebox presets %s)",
                        param, p->name);
    }
    return FB_OK;
}

static int one_key(exporter *E, const sim_preset *p, const cJSON *v) {
    int i = scn_preset_param(p, v->string);
    if (i < 0)
        return fail(E, FB_EINVAL, "%s: not a parameter of the preset %s", v->string, p->name);
    if (p->params[i].notation == SIM_PK_OBJECT) {
        int rc = check_object(E, p, v);
        if (rc != FB_OK) return rc;
    }
    const row *r = row_of(E->k, v->string);
    if (r == NULL)
        return fail(E, FB_EINVAL, "%s: the exporter has no place for this parameter of %s",
                    v->string, p->name);
    if (r->path == NULL) {
        note(E, v->string, r->why);
        return FB_OK;
    }
    cJSON *out = NULL;
    if (r->conv == SECRET_ENV) {
        char env[64], why[200];
        snprintf(env, sizeof env, "os.environ/%s", r->why);
        out = cJSON_CreateString(env);
        snprintf(why, sizeof why,
                 "a secret: written as %s (LiteLLM reads it from the environment; fusebox "
                 "never writes a secret's value)",
                 env);
        note(E, v->string, why);
    } else if (r->conv == DEPLOYMENTS) {
        out = deployments(E, v);
    } else {
        out = cJSON_Duplicate(v, true);
    }
    if (out == NULL) return fail(E, FB_ENOMEM, "%s%s", "out of memory", "");
    return place(E, E->anchor[r->at], r->path, out);
}

/* Envoy: a RouteConfiguration sending to the cluster, and the Cluster, as xDS resources. */
static cJSON *envoy_doc(exporter *E) {
    cJSON *doc = cJSON_CreateObject(), *res = cJSON_AddArrayToObject(doc, "resources");
    cJSON *action = E->anchor[AT_ROUTE], *cluster = E->anchor[AT_CLUSTER];
    cJSON *th = E->anchor[AT_THRESHOLD];
    bool has_cluster = cluster->child != NULL || th->child != NULL;
    if (th->child) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "priority", "DEFAULT");
        for (cJSON *c = th->child; c; c = c->next)
            cJSON_AddItemToObject(t, c->string, cJSON_Duplicate(c, true));
        cJSON *cb = cJSON_AddObjectToObject(cluster, "circuit_breakers");
        cJSON_AddItemToArray(cJSON_AddArrayToObject(cb, "thresholds"), t);
    }
    if (action->child || !has_cluster) {
        cJSON *rc = cJSON_CreateObject();
        cJSON_AddStringToObject(rc, "@type",
                                "type.googleapis.com/envoy.config.route.v3.RouteConfiguration");
        cJSON_AddStringToObject(rc, "name", E->name);
        cJSON *vh = cJSON_CreateObject();
        cJSON_AddStringToObject(vh, "name", E->name);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(vh, "domains"), cJSON_CreateString("*"));
        cJSON *route = cJSON_CreateObject();
        cJSON_AddStringToObject(cJSON_AddObjectToObject(route, "match"), "prefix", "/");
        cJSON *a = cJSON_AddObjectToObject(route, "route");
        cJSON_AddStringToObject(a, "cluster", E->name);
        for (cJSON *c = action->child; c; c = c->next)
            cJSON_AddItemToObject(a, c->string, cJSON_Duplicate(c, true));
        cJSON_AddItemToArray(cJSON_AddArrayToObject(vh, "routes"), route);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(rc, "virtual_hosts"), vh);
        cJSON_AddItemToArray(res, rc);
    }
    if (has_cluster) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "@type", "type.googleapis.com/envoy.config.cluster.v3.Cluster");
        cJSON_AddStringToObject(c, "name", E->name);
        for (cJSON *m = cluster->child; m; m = m->next)
            cJSON_AddItemToObject(c, m->string, cJSON_Duplicate(m, true));
        cJSON_AddItemToArray(res, c);
    }
    return doc;
}

/* What heads the block: where it comes from and where it goes. */
static void header(util_buf *t, const char *kind, const char *name) {
    if (strcmp(kind, "resilience4j") == 0) {
        util_buf_puts(t, "# resilience4j instance ");
        util_buf_puts(t, name);
        util_buf_puts(t, " (Spring Boot application.yml), from fusebox export-policy\n");
    } else if (strcmp(kind, "litellm") == 0) {
        util_buf_puts(t, "# LiteLLM proxy config.yaml (model_list, router_settings), from fusebox "
                         "export-policy\n");
    } else {
        util_buf_puts(t,
                      "# Envoy v3 xDS resources (a route's retry_policy and timeout, a cluster's\n"
                      "# circuit_breakers and outlier_detection), from fusebox export-policy\n");
    }
}

/* The kind's document for the layer (*doc, the caller's), the notes in E->notes. */
static int build(exporter *E, const char *kind, const char *layer_json, cJSON **doc_out) {
    *doc_out = NULL;
    E->k = kind_of(kind);
    if (E->k == NULL)
        return fail(E, FB_EINVAL, "unknown kind '%s' (one of: resilience4j, litellm, envoy)%s",
                    kind, "");
    const sim_preset *p = scn_preset_find(E->k->preset);
    cJSON *layer = cJSON_Parse(layer_json);
    if (p == NULL || !cJSON_IsObject(layer)) {
        cJSON_Delete(layer);
        return fail(E, FB_EINVAL, "%s%s", "the layer is not a JSON object", "");
    }
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(layer, "preset");
    if (!cJSON_IsString(pr) || strcmp(pr->valuestring, p->name) != 0) {
        int rc = fail(E, FB_EINVAL, "the layer is not of the preset %s (it has \"preset\": %s)",
                      p->name, cJSON_IsString(pr) ? pr->valuestring : "none");
        cJSON_Delete(layer);
        return rc;
    }
    cJSON *doc = cJSON_CreateObject();
    for (int a = 0; a < AT_N; a++) E->anchor[a] = a == AT_ROOT ? doc : cJSON_CreateObject();
    int rc = FB_OK;
    for (const cJSON *v = layer->child; rc == FB_OK && v; v = v->next) {
        if (!strcmp(v->string, "preset") || !strcmp(v->string, "name") ||
            !strcmp(v->string, "description"))
            continue;
        rc = one_key(E, p, v);
    }
    if (rc == FB_OK && strcmp(kind, "envoy") == 0) {
        cJSON *env = envoy_doc(E);
        cJSON_Delete(doc);
        doc = env;
    }
    /* LiteLLM: a config the proxy reads needs router_settings even when it sets nothing */
    if (rc == FB_OK && strcmp(kind, "litellm") == 0 &&
        !cJSON_GetObjectItemCaseSensitive(doc, "router_settings"))
        cJSON_AddObjectToObject(doc, "router_settings");
    for (int a = 1; a < AT_N; a++) cJSON_Delete(E->anchor[a]);
    cJSON_Delete(layer);
    if (rc == FB_OK && E->notes.err) rc = fail(E, FB_ENOMEM, "%s%s", "out of memory", "");
    if (rc != FB_OK) {
        cJSON_Delete(doc);
        return rc;
    }
    *doc_out = doc;
    return FB_OK;
}

int imp_export_policy(const char *kind, const char *name, const char *layer_json, char **yaml,
                      char **notes, char *msg, size_t msglen) {
    exporter E = {.name = name && name[0] ? name : "default", .msg = msg, .msglen = msglen};
    *yaml = NULL;
    *notes = NULL;
    cJSON *doc = NULL;
    int rc = build(&E, kind, layer_json, &doc);
    util_buf out = {0};
    if (rc == FB_OK) {
        header(&out, kind, E.name);
        if (doc->child == NULL)
            util_buf_puts(&out, "{}\n");
        else
            put_map(&out, doc, 0, false);
        if (out.err) rc = fail(&E, FB_ENOMEM, "%s%s", "out of memory", "");
    }
    cJSON_Delete(doc);
    if (rc != FB_OK) {
        free(out.p);
        free(E.notes.p);
        return rc;
    }
    *yaml = out.p;
    *notes = E.notes.p;
    return FB_OK;
}

/* ---- into the user's file ---- */

/*
 * LiteLLM: a Router argument whose litellm module global the file sets under
 * litellm_settings is written there as well (the doc gains litellm_settings),
 * since the Router may take the global instead: num_retries always
 * (async_function_with_retries prefers litellm.num_retries), the timeout and
 * the fallbacks when router_settings has none. A router_settings value the
 * file has keeps being written too, so both say the same.
 */
static int litellm_module_keys(exporter *E, cJSON *doc, const imp_node *root) {
    const imp_node *mod = imp_get(root, "litellm_settings"), *rs = imp_get(root, "router_settings");
    cJSON *router = cJSON_GetObjectItemCaseSensitive(doc, "router_settings");
    if (mod == NULL || mod->kind != IMP_MAP || !cJSON_IsObject(router)) return FB_OK;
    cJSON *into = NULL, *next = NULL;
    for (cJSON *v = router->child; v; v = next) {
        next = v->next;
        const char *lkey = imp__litellm_module_key(v->string);
        if (lkey == NULL || imp_get(mod, lkey) == NULL) continue;
        if (into == NULL) into = cJSON_AddObjectToObject(doc, "litellm_settings");
        if (into == NULL) return fail(E, FB_ENOMEM, "%s%s", "out of memory", "");
        bool keep = rs && rs->kind == IMP_MAP && imp_get(rs, v->string);
        cJSON *w = keep ? cJSON_Duplicate(v, true) : cJSON_DetachItemViaPointer(router, v);
        if (w == NULL) return fail(E, FB_ENOMEM, "%s%s", "out of memory", "");
        cJSON_AddItemToObject(into, lkey, w);
        char where[IMP_PATH_MAX], why[200];
        imp_path_key(where, "litellm_settings", lkey);
        snprintf(why, sizeof why,
                 "written here, where the file sets it: the Router reads litellm.%s for %s%s", lkey,
                 v->string, keep ? " (router_settings' value written too)" : "");
        note(E, where, why);
    }
    return FB_OK;
}

#define EDITS_MAX 512

typedef struct edit {
    size_t from, to; /* bytes of the file replaced */
    int indent;      /* at one place, the deeper map's keys first (they end its block) */
    char *with;
} edit;

typedef struct splice {
    exporter *E;
    const char *text, *file;
    size_t len;
    bool relaxed; /* Spring's relaxed binding: failure-rate-threshold is failureRateThreshold */
    edit edits[EDITS_MAX];
    size_t nedits;
} splice;

/* A character offset of libyaml's as a byte offset into the (UTF-8) text. */
static size_t byte_at(const splice *S, size_t chars) {
    size_t b = 0;
    for (size_t c = 0; c < chars && b < S->len; c++) {
        unsigned char u = (unsigned char)S->text[b];
        b += u < 0x80 ? 1 : u < 0xe0 ? 2 : u < 0xf0 ? 3 : 4;
    }
    return b < S->len ? b : S->len;
}

static bool same_key(const splice *S, const char *a, const char *b) {
    if (!S->relaxed) return strcmp(a, b) == 0;
    for (;; a++, b++) {
        while (*a == '-' || *a == '_') a++;
        while (*b == '-' || *b == '_') b++;
        if ((*a | 0x20) != (*b | 0x20) || !*a || !*b) return *a == *b;
    }
}

static int add_edit(splice *S, size_t from, size_t to, int indent, util_buf *with) {
    if (with->err) return fail(S->E, FB_ENOMEM, "%s%s", "out of memory", "");
    if (S->nedits == EDITS_MAX) {
        free(with->p);
        return fail(S->E, FB_ECAP, "more than %s edits%s", "512", "");
    }
    S->edits[S->nedits++] = (edit){from, to, indent, with->p ? with->p : strdup("")};
    return FB_OK;
}

static bool flow(const splice *S, const imp_node *n) {
    size_t b = byte_at(S, n->start);
    return n->kind != IMP_SCALAR && b < S->len && (S->text[b] == '{' || S->text[b] == '[');
}

/* Just past the last character a node spans (a block collection: its last item's). */
static size_t node_end(const splice *S, const imp_node *n) {
    if (n->kind == IMP_SCALAR || n->n == 0 || flow(S, n)) return n->end;
    return node_end(S, n->items[n->n - 1]);
}

/* Where a node stands, for messages. */
static int fail_at(splice *S, const imp_node *n, const char *what) {
    char where[300];
    snprintf(where, sizeof where, "%s:%d:%d", S->file, n->line, n->col);
    return fail(S->E, FB_EINVAL, "%s: %s; write the block (without --into) and paste it", where,
                what);
}

/* The value of key k (indented `indent`) replaced by v: after the key, through its end. */
static int replace(splice *S, const imp_node *k, const imp_node *val, const cJSON *v, int indent,
                   bool in_flow) {
    if (val->start == IMP_YAML_NOWHERE) return fail_at(S, k, "the value is an alias");
    util_buf t = {0};
    bool none = val->kind == IMP_SCALAR && !val->quoted && val->value[0] == '\0';
    if (none && !in_flow && !scalar(v) && !empty(v)) {
        /* "key:" with nothing (or a comment) after it: the block goes on the lines below */
        size_t at = byte_at(S, k->end);
        while (at < S->len && S->text[at] != '\n') at++;
        util_buf_puts(&t, "\n");
        if (cJSON_IsObject(v))
            put_map(&t, v, indent + 2, false);
        else
            put_seq(&t, v, indent + 2);
        if (t.len) t.p[--t.len] = '\0';
        return add_edit(S, at, at, indent + 1, &t);
    }
    if (in_flow || flow(S, val) || scalar(v) || empty(v)) { /* a flow value stays one */
        util_buf_puts(&t, ": ");
        put_flow(&t, v);
    } else if (cJSON_IsObject(v)) {
        util_buf_puts(&t, ":\n");
        put_map(&t, v, indent + 2, false);
        if (t.len) t.p[--t.len] = '\0'; /* the line's end stays the file's */
    } else {
        util_buf_puts(&t, ":\n");
        put_seq(&t, v, indent + 2);
        if (t.len) t.p[--t.len] = '\0';
    }
    return add_edit(S, byte_at(S, k->end), byte_at(S, node_end(S, val)), indent, &t);
}

/* After the line of the map's last character: the keys it lacks, at its keys' indentation. */
static int insert(splice *S, const imp_node *map, const cJSON *missing, int indent) {
    if (map->kind == IMP_MAP && flow(S, map))
        return fail_at(S, map, "a flow map ({...}) gets no new keys from --into");
    size_t at = map->n ? byte_at(S, node_end(S, map)) : S->len;
    while (at < S->len && S->text[at] != '\n') at++;
    util_buf t = {0};
    if (at == S->len && S->len > 0 && S->text[S->len - 1] != '\n') util_buf_puts(&t, "\n");
    put_map(&t, missing, indent, false);
    return add_edit(S, at < S->len ? at + 1 : at, at < S->len ? at + 1 : at, indent, &t);
}

static int walk(splice *S, const cJSON *want, const imp_node *map, int indent);

/* A value the file has (key k, value val) taking w: walked into, or replaced. */
static int update(splice *S, const imp_node *map, const char *key, const imp_node *k,
                  const imp_node *val, const cJSON *w) {
    if (cJSON_IsObject(w) && w->child && val->kind == IMP_MAP && val->n > 0)
        return walk(S, w, val, val->items[0]->col - 1);
    if (cJSON_IsArray(w) && strcmp(key, "model_list") == 0) {
        note(S->E, "model_list",
             "not written into the file: its deployments hold keys fusebox does not read "
             "(api_base, api_key, ...); change the routing keys by hand");
        return FB_OK;
    }
    return replace(S, k, val, w, k->col - 1, flow(S, map));
}

/* Spring's one-key spelling of two levels ("resilience4j.retry:"): m's children found so. */
static int dotted(splice *S, cJSON *m, const imp_node *map) {
    size_t n = strlen(m->string);
    cJSON *c = m->child;
    while (c) {
        cJSON *next = c->next;
        for (size_t i = 0; i + 1 < map->n; i += 2) {
            const char *key = map->items[i]->value;
            if (strncmp(key, m->string, n) != 0 || key[n] != '.' ||
                !same_key(S, key + n + 1, c->string))
                continue;
            int rc = update(S, map, c->string, map->items[i], map->items[i + 1], c);
            if (rc != FB_OK) return rc;
            cJSON_Delete(cJSON_DetachItemViaPointer(m, c));
            break;
        }
        c = next;
    }
    return FB_OK;
}

/* The keys of `want` into map, at `indent` (the map's keys' column). */
static int walk(splice *S, const cJSON *want, const imp_node *map, int indent) {
    cJSON *rest = cJSON_Duplicate(want, true), *missing = cJSON_CreateObject();
    int rc = rest && missing ? FB_OK : fail(S->E, FB_ENOMEM, "%s%s", "out of memory", "");
    for (cJSON *m = rest ? rest->child : NULL; rc == FB_OK && m; m = m->next)
        if (cJSON_IsObject(m) && m->child && map->kind == IMP_MAP) rc = dotted(S, m, map);
    for (const cJSON *m = rest ? rest->child : NULL; rc == FB_OK && m; m = m->next) {
        if (cJSON_IsObject(m) && m->child == NULL &&
            cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(want, m->string)) &&
            cJSON_GetObjectItemCaseSensitive(want, m->string)->child)
            continue; /* all of it found under the dotted spelling */
        const imp_node *k = NULL, *val = NULL;
        for (size_t i = 0; map->kind == IMP_MAP && i + 1 < map->n && !k; i += 2)
            if (same_key(S, map->items[i]->value, m->string)) {
                k = map->items[i];
                val = map->items[i + 1];
            }
        if (k == NULL)
            cJSON_AddItemToObject(missing, m->string, cJSON_Duplicate(m, true));
        else
            rc = update(S, map, m->string, k, val, m);
    }
    if (rc == FB_OK && missing->child) rc = insert(S, map, missing, indent);
    cJSON_Delete(rest);
    cJSON_Delete(missing);
    return rc;
}

static int by_offset(const void *a, const void *b) {
    const edit *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return x->indent > y->indent ? -1 : x->indent < y->indent;
}

/* The file with S's edits made, into t. */
static int apply_edits(splice *S, util_buf *t) {
    qsort(S->edits, S->nedits, sizeof S->edits[0], by_offset);
    size_t at = 0;
    for (size_t i = 0; i < S->nedits; i++) {
        util_buf_append(t, S->text + at, S->edits[i].from - at);
        util_buf_puts(t, S->edits[i].with);
        at = S->edits[i].to;
    }
    util_buf_append(t, S->text + at, S->len - at);
    if (t->err || S->E->notes.err) return fail(S->E, FB_ENOMEM, "%s%s", "out of memory", "");
    return FB_OK;
}

int imp_export_into(const char *kind, const char *name, const char *layer_json, const char *file,
                    const char *text_in, size_t len, char **out, char **notes, char *msg,
                    size_t msglen) {
    exporter E = {.name = name && name[0] ? name : "default", .msg = msg, .msglen = msglen};
    *out = NULL;
    *notes = NULL;
    if (strcmp(kind, "envoy") == 0)
        return fail(&E, FB_EINVAL,
                    "--into writes resilience4j and LiteLLM files; an Envoy route and cluster "
                    "are found %s%s",
                    "through listeners and names: write the block and paste it", "");
    cJSON *doc = NULL;
    int rc = build(&E, kind, layer_json, &doc);
    imp_node *root = NULL;
    imp_error err;
    /* the call's own state (its edits take 16 KiB: on the heap rather than the stack) */
    splice *S = calloc(1, sizeof *S);
    if (S == NULL && rc == FB_OK) rc = fail(&E, FB_ENOMEM, "%s%s", "out of memory", "");
    if (S != NULL) {
        S->E = &E;
        S->text = text_in;
        S->file = file;
        S->len = len;
        S->relaxed = strcmp(kind, "resilience4j") == 0;
    }
    if (rc == FB_OK && imp_yaml_parse(text_in, len, file, &root, &err) != FB_OK) {
        char m[600];
        imp_error_format(&err, m, sizeof m);
        rc = fail(&E, FB_EPARSE, "%s%s", m, "");
    }
    if (rc == FB_OK && root->kind != IMP_MAP) rc = fail_at(S, root, "the file is not a map");
    if (rc == FB_OK && strcmp(kind, "litellm") == 0) rc = litellm_module_keys(&E, doc, root);
    if (rc == FB_OK) rc = walk(S, doc, root, 0);
    util_buf t = {0};
    if (rc == FB_OK) rc = apply_edits(S, &t);
    for (size_t i = 0; S && i < S->nedits; i++) free(S->edits[i].with);
    free(S);
    imp_node_free(root);
    cJSON_Delete(doc);
    if (rc != FB_OK) {
        free(t.p);
        free(E.notes.p);
        return rc;
    }
    *out = t.p ? t.p : strdup("");
    *notes = E.notes.p;
    return FB_OK;
}
