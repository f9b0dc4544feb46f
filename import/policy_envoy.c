/*
 * policy_envoy.c - an Envoy bootstrap, or its clusters or route
 * configuration alone (an xDS resources file, a Cluster, a
 * RouteConfiguration), as envoy preset layers (policyint.h).
 *
 * One layer per cluster a route sends to, named after the cluster: the
 * route's timeout and retry policy (the virtual host's when the route has
 * none: a route-level retry_policy takes precedence and inherits nothing,
 * route_components.proto VirtualHost.retry_policy) joined with the
 * cluster's lb_policy, outlier_detection and the DEFAULT priority's
 * circuit_breakers thresholds (max_retries, retry_budget), which the preset
 * takes as flat keys. A file without routes gives one layer per cluster.
 * The listeners and filter chains are read for structure only; the
 * cluster's endpoints are not scenario providers: the layer keeps the
 * preset's hosts (every LLM provider of the scenario), and a note says so.
 * Keys are v3's (api/envoy/config/{route,cluster}/v3), as the preset's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fb.h"
#include "import/policyint.h"

#define ENVOY_REFS_MAX 64

typedef struct route_ref {
    const imp_node *cluster; /* the scalar that names it */
    const imp_node *action;  /* the RouteAction */
    const imp_node *retry;   /* the retry policy it runs with, or NULL */
    char action_path[IMP_PATH_MAX], retry_path[IMP_PATH_MAX];
} route_ref;

typedef struct cluster_ref {
    const imp_node *c;
    char path[IMP_PATH_MAX];
} cluster_ref;

typedef struct envoy_file {
    route_ref routes[ENVOY_REFS_MAX];
    size_t nroutes;
    cluster_ref clusters[ENVOY_REFS_MAX];
    size_t nclusters;
    imp_result *r;
    imp_error *err;
} envoy_file;

/* Every key of map not in `read`: noted under path. */
static void note_others(envoy_file *F, const imp_node *map, const char *path,
                        const char *const *read, const char *why) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        if (imp_one_of(map->items[i]->value, read)) continue;
        char where[IMP_PATH_MAX];
        imp_path_key(where, path, map->items[i]->value);
        imp_add_note(F->r, where, map->items[i], why ? why : "not modelled by the preset");
    }
}

/* The key node of `key` in map (its position), or NULL. */
static const imp_node *key_at(const imp_node *map, const char *key) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2)
        if (strcmp(map->items[i]->value, key) == 0) return map->items[i];
    return NULL;
}

static const char *name_of(const imp_node *n) {
    const imp_node *v = imp_get(n, "name");
    return v && v->kind == IMP_SCALAR ? v->value : NULL;
}

static int add_cluster(envoy_file *F, const imp_node *c, const char *path) {
    if (c->kind != IMP_MAP || name_of(c) == NULL)
        return imp_fail_at(F->err, c, FB_EINVAL, "%s: a cluster is a map with a name", path);
    if (F->nclusters == ENVOY_REFS_MAX)
        return imp_fail_at(F->err, c, FB_ECAP, "%s: more than 64 clusters", path);
    cluster_ref *ref = &F->clusters[F->nclusters++];
    ref->c = c;
    snprintf(ref->path, sizeof ref->path, "%s", path);
    return FB_OK;
}

static int add_route(envoy_file *F, const imp_node *action, const char *apath,
                     const imp_node *retry, const char *rpath) {
    if (F->nroutes == ENVOY_REFS_MAX)
        return imp_fail_at(F->err, action, FB_ECAP, "%s: more than 64 routes", apath);
    route_ref *ref = &F->routes[F->nroutes++];
    ref->cluster = imp_get(action, "cluster");
    ref->action = action;
    ref->retry = retry;
    snprintf(ref->action_path, sizeof ref->action_path, "%s", apath);
    snprintf(ref->retry_path, sizeof ref->retry_path, "%s", rpath);
    return FB_OK;
}

/* ---- the routes ---- */

/* A route: its RouteAction when it sends to one cluster; its own retry policy, else vh's. */
static int route(envoy_file *F, const imp_node *rt, const char *path, const imp_node *vh_retry,
                 const char *vh_path, bool *vh_used) {
    static const char *const read[] = {"match", "route", "name", NULL};
    note_others(F, rt, path, read, NULL);
    const imp_node *action = imp_get(rt, "route");
    char apath[IMP_PATH_MAX], rpath[IMP_PATH_MAX];
    imp_path_key(apath, path, "route");
    if (action == NULL || action->kind != IMP_MAP) return FB_OK; /* a redirect: noted above */
    const imp_node *cl = imp_get(action, "cluster");
    if (cl == NULL || cl->kind != IMP_SCALAR) {
        imp_add_note(F->r, apath, imp_get(rt, "route"),
                     "no single cluster (weighted_clusters, cluster_header, ...): not modelled");
        return FB_OK;
    }
    const imp_node *retry = imp_get(action, "retry_policy");
    imp_path_key(rpath, apath, "retry_policy");
    if (retry == NULL && vh_retry) {
        retry = vh_retry;
        snprintf(rpath, sizeof rpath, "%s", vh_path);
        *vh_used = true;
    }
    return add_route(F, action, apath, retry, rpath);
}

static int virtual_host(envoy_file *F, const imp_node *vh, const char *path) {
    static const char *const read[] = {"name", "domains", "routes", "retry_policy", NULL};
    note_others(F, vh, path, read, NULL);
    const imp_node *retry = imp_get(vh, "retry_policy"), *routes = imp_get(vh, "routes");
    char rpath[IMP_PATH_MAX];
    imp_path_key(rpath, path, "retry_policy");
    bool used = false;
    for (size_t i = 0; routes && routes->kind == IMP_SEQ && i < routes->n; i++) {
        char p[IMP_PATH_MAX], q[IMP_PATH_MAX];
        imp_path_key(p, path, "routes");
        imp_path_index(q, p, i);
        int rc = route(F, routes->items[i], q, retry, rpath, &used);
        if (rc != FB_OK) return rc;
    }
    if (retry && !used)
        imp_add_note(F->r, rpath, key_at(vh, "retry_policy"),
                     "superseded: every route has its own retry_policy (Envoy inherits nothing)");
    return FB_OK;
}

static int route_config(envoy_file *F, const imp_node *rc_node, const char *path) {
    const imp_node *vhs = imp_get(rc_node, "virtual_hosts");
    note_others(F, rc_node, path, (const char *const[]){"name", "virtual_hosts", "@type", NULL},
                NULL);
    for (size_t i = 0; vhs && vhs->kind == IMP_SEQ && i < vhs->n; i++) {
        char p[IMP_PATH_MAX], q[IMP_PATH_MAX];
        imp_path_key(p, path, "virtual_hosts");
        imp_path_index(q, p, i);
        int rc = virtual_host(F, vhs->items[i], q);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

/* A network filter: the HTTP connection manager's route_config, or its RDS source (noted). */
static int filter(envoy_file *F, const imp_node *f, const char *path) {
    const imp_node *cfg = imp_get(f, "typed_config");
    char p[IMP_PATH_MAX], q[IMP_PATH_MAX];
    imp_path_key(p, path, cfg ? "typed_config" : "config");
    if (cfg == NULL) cfg = imp_get(f, "config");
    const imp_node *rc_node = imp_get(cfg, "route_config");
    if (rc_node) {
        imp_path_key(q, p, "route_config");
        return route_config(F, rc_node, q);
    }
    if (imp_get(cfg, "rds")) {
        imp_path_key(q, p, "rds");
        imp_add_note(F->r, q, imp_get(cfg, "rds"), "routes from RDS: not in the file");
    }
    return FB_OK;
}

static int listener(envoy_file *F, const imp_node *l, const char *path) {
    const imp_node *chains = imp_get(l, "filter_chains");
    for (size_t i = 0; chains && chains->kind == IMP_SEQ && i < chains->n; i++) {
        const imp_node *filters = imp_get(chains->items[i], "filters");
        for (size_t j = 0; filters && filters->kind == IMP_SEQ && j < filters->n; j++) {
            char p[IMP_PATH_MAX], q[IMP_PATH_MAX];
            imp_path_key(p, path, "filter_chains");
            imp_path_index(q, p, i);
            imp_path_key(p, q, "filters");
            imp_path_index(q, p, j);
            int rc = filter(F, filters->items[j], q);
            if (rc != FB_OK) return rc;
        }
    }
    return FB_OK;
}

/* ---- the file's forms ---- */

/* static_resources: listeners and clusters; the bootstrap's other sections noted. */
static int bootstrap(envoy_file *F, const imp_node *root) {
    const imp_node *sr = imp_get(root, "static_resources");
    note_others(F, root, "", (const char *const[]){"static_resources", NULL},
                "not read (fusebox reads static_resources' listeners and clusters)");
    note_others(F, sr, "static_resources", (const char *const[]){"listeners", "clusters", NULL},
                "not read");
    const char *const secs[] = {"listeners", "clusters"};
    for (int s = 0; s < 2; s++) {
        const imp_node *list = imp_get(sr, secs[s]);
        for (size_t i = 0; list && list->kind == IMP_SEQ && i < list->n; i++) {
            char p[IMP_PATH_MAX];
            snprintf(p, sizeof p, "static_resources.%s[%zu]", secs[s], i);
            int rc = s == 0 ? listener(F, list->items[i], p) : add_cluster(F, list->items[i], p);
            if (rc != FB_OK) return rc;
        }
    }
    return FB_OK;
}

/* An xDS file (resources: [...]), each resource by its @type. */
static int resources(envoy_file *F, const imp_node *list) {
    for (size_t i = 0; list->kind == IMP_SEQ && i < list->n; i++) {
        const imp_node *res = list->items[i], *type = imp_get(res, "@type");
        char p[IMP_PATH_MAX];
        imp_path_index(p, "resources", i);
        const char *t = type && type->kind == IMP_SCALAR ? type->value : "";
        const char *dot = strrchr(t, '.');
        int rc = FB_OK;
        if (dot && strcmp(dot, ".Cluster") == 0)
            rc = add_cluster(F, res, p);
        else if (dot && strcmp(dot, ".RouteConfiguration") == 0)
            rc = route_config(F, res, p);
        else if (dot && strcmp(dot, ".Listener") == 0)
            rc = listener(F, res, p);
        else
            imp_add_note(F->r, p, res, "not a Cluster, RouteConfiguration or Listener: not read");
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

static bool looks_like_cluster(const imp_node *root) {
    static const char *const keys[] = {"load_assignment",
                                       "type",
                                       "connect_timeout",
                                       "outlier_detection",
                                       "circuit_breakers",
                                       "lb_policy",
                                       "eds_cluster_config",
                                       "cluster_type",
                                       NULL};
    for (size_t i = 0; name_of(root) && keys[i]; i++)
        if (imp_get(root, keys[i])) return true;
    return false;
}

static int read_file(envoy_file *F, const imp_node *root) {
    if (root->kind != IMP_MAP)
        return imp_fail_at(F->err, root, FB_EINVAL, "%s", "an Envoy configuration is a map");
    if (imp_get(root, "static_resources")) return bootstrap(F, root);
    const imp_node *res = imp_get(root, "resources");
    if (res) {
        note_others(F, root, "", (const char *const[]){"resources", "version_info", NULL},
                    "not read");
        return resources(F, res);
    }
    if (imp_get(root, "virtual_hosts")) return route_config(F, root, "");
    if (looks_like_cluster(root)) return add_cluster(F, root, "");
    return imp_fail_at(
        F->err, root, FB_EINVAL, "%s",
        "no static_resources, resources, virtual_hosts or cluster (an Envoy bootstrap, "
        "an xDS resources file, a RouteConfiguration or a Cluster)");
}

/* ---- the layers ---- */

/* retry_on without the gRPC conditions, which an HTTP reply never meets (noted). */
static void retry_on(envoy_file *F, const imp_node *k, const imp_node *v, const char *path,
                     cJSON *layer) {
    static const char *const grpc[] = {"cancelled",          "deadline-exceeded", "internal",
                                       "resource-exhausted", "unavailable",       NULL};
    char kept[512] = "", dropped[256] = "";
    const char *s = v->kind == IMP_SCALAR ? v->value : "";
    while (*s) {
        while (*s == ' ' || *s == ',') s++;
        size_t n = strcspn(s, ",");
        while (n > 0 && s[n - 1] == ' ') n--;
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)n, s);
        char *to = imp_one_of(word, grpc) ? dropped : kept;
        size_t cap = to == kept ? sizeof kept : sizeof dropped, len = strlen(to);
        if (n > 0) snprintf(to + len, cap - len, "%s%s", len ? "," : "", word);
        s += strcspn(s, ",");
    }
    if (dropped[0]) {
        char why[sizeof dropped + 64];
        snprintf(why, sizeof why, "gRPC conditions %s: not modelled (fusebox's replies are HTTP)",
                 dropped);
        imp_add_note(F->r, path, k, why);
    }
    if (kept[0]) cJSON_AddStringToObject(layer, "retry_on", kept);
}

static void retry_policy(envoy_file *F, const sim_preset *p, const route_ref *rt, cJSON *layer) {
    static const char *const flat[] = {"num_retries", "per_try_timeout", "retriable_status_codes",
                                       NULL};
    const imp_node *m = rt->retry;
    for (size_t i = 0; m && m->kind == IMP_MAP && i + 1 < m->n; i += 2) {
        const imp_node *k = m->items[i], *v = m->items[i + 1];
        char where[IMP_PATH_MAX];
        imp_path_key(where, rt->retry_path, k->value);
        if (strcmp(k->value, "retry_on") == 0)
            retry_on(F, k, v, where, layer);
        else if (strcmp(k->value, "retry_back_off") == 0)
            cJSON_AddItemToObject(layer, "retry_back_off",
                                  imp_copy_object(v, p, "retry_back_off", where, NULL, F->r));
        else if (imp_one_of(k->value, flat))
            cJSON_AddItemToObject(layer, k->value, imp_to_json(v, NULL));
        else
            imp_add_note(F->r, where, k, "not modelled by the preset");
    }
}

/* circuit_breakers: the DEFAULT priority's max_retries and retry_budget. */
static void circuit_breakers(envoy_file *F, const sim_preset *p, const imp_node *cb,
                             const char *path, cJSON *layer) {
    note_others(F, cb, path, (const char *const[]){"thresholds", NULL}, NULL);
    const imp_node *th = imp_get(cb, "thresholds");
    for (size_t i = 0; th && th->kind == IMP_SEQ && i < th->n; i++) {
        const imp_node *t = th->items[i], *prio = imp_get(t, "priority");
        char tp[IMP_PATH_MAX], where[IMP_PATH_MAX];
        imp_path_key(where, path, "thresholds");
        imp_path_index(tp, where, i);
        if (prio && prio->kind == IMP_SCALAR && strcmp(prio->value, "DEFAULT") != 0) {
            imp_add_note(F->r, tp, t, "not modelled (fusebox's requests have priority DEFAULT)");
            continue;
        }
        note_others(F, t, tp,
                    (const char *const[]){"priority", "max_retries", "retry_budget", NULL}, NULL);
        const imp_node *mr = imp_get(t, "max_retries"), *rb = imp_get(t, "retry_budget");
        if (mr) cJSON_AddItemToObject(layer, "max_retries", imp_to_json(mr, NULL));
        imp_path_key(where, tp, "retry_budget");
        if (rb)
            cJSON_AddItemToObject(layer, "retry_budget",
                                  imp_copy_object(rb, p, "retry_budget", where, NULL, F->r));
    }
}

static void cluster(envoy_file *F, const sim_preset *p, const cluster_ref *c, cJSON *layer) {
    static const char *const read[] = {
        "name",  "@type", "lb_policy", "outlier_detection", "circuit_breakers", "load_assignment",
        "hosts", NULL};
    note_others(F, c->c, c->path, read, NULL);
    char where[IMP_PATH_MAX];
    const imp_node *lb = imp_get(c->c, "lb_policy"), *od = imp_get(c->c, "outlier_detection");
    if (lb) cJSON_AddItemToObject(layer, "lb_policy", imp_to_json(lb, NULL));
    imp_path_key(where, c->path, "outlier_detection");
    if (od)
        cJSON_AddItemToObject(layer, "outlier_detection",
                              imp_copy_object(od, p, "outlier_detection", where, NULL, F->r));
    imp_path_key(where, c->path, "circuit_breakers");
    if (imp_get(c->c, "circuit_breakers"))
        circuit_breakers(F, p, imp_get(c->c, "circuit_breakers"), where, layer);
    const char *ep = imp_get(c->c, "load_assignment") ? "load_assignment" : "hosts";
    imp_path_key(where, c->path, ep);
    imp_add_note(F->r, where, key_at(c->c, ep) ? key_at(c->c, ep) : key_at(c->c, "name"),
                 "the cluster's endpoints are not scenario providers: the layer's hosts are the "
                 "preset's (every LLM provider; give \"hosts\" in a layer to choose)");
}

static const cluster_ref *find_cluster(const envoy_file *F, const char *name) {
    for (size_t i = 0; i < F->nclusters; i++)
        if (strcmp(name_of(F->clusters[i].c), name) == 0) return &F->clusters[i];
    return NULL;
}

/* The route's layer: its timeout and retry policy, then its cluster's settings. */
static void route_layer(envoy_file *F, const sim_preset *p, const route_ref *rt, cJSON *layers) {
    const char *name = rt->cluster->value;
    cJSON *layer = cJSON_AddObjectToObject(layers, name);
    cJSON_AddStringToObject(layer, "preset", "envoy");
    note_others(F, rt->action, rt->action_path,
                (const char *const[]){"cluster", "retry_policy", "timeout", NULL}, NULL);
    const imp_node *t = imp_get(rt->action, "timeout");
    if (t) cJSON_AddItemToObject(layer, "timeout", imp_to_json(t, NULL));
    retry_policy(F, p, rt, layer);
    const cluster_ref *c = find_cluster(F, name);
    char where[IMP_PATH_MAX];
    imp_path_key(where, rt->action_path, "cluster");
    if (c)
        cluster(F, p, c, layer);
    else
        imp_add_note(F->r, where, rt->cluster,
                     "the cluster is not in the file: its circuit breakers and outlier detection "
                     "are Envoy's defaults");
}

/* A layer per cluster routed to (the first route to it); without routes, per cluster. */
static void layers_of(envoy_file *F, const sim_preset *p, cJSON *layers) {
    for (size_t i = 0; i < F->nroutes; i++) {
        const route_ref *rt = &F->routes[i];
        const cJSON *seen = cJSON_GetObjectItemCaseSensitive(layers, rt->cluster->value);
        char where[IMP_PATH_MAX], why[IMP_PATH_MAX];
        imp_path_key(where, rt->action_path, "cluster");
        snprintf(why, sizeof why, "another route to %s: not read (its layer is the first route's)",
                 rt->cluster->value);
        if (seen)
            imp_add_note(F->r, where, rt->cluster, why);
        else
            route_layer(F, p, rt, layers);
    }
    for (size_t i = 0; i < F->nclusters; i++) {
        const char *name = name_of(F->clusters[i].c);
        if (F->nroutes == 0) {
            cJSON *layer = cJSON_AddObjectToObject(layers, name);
            cJSON_AddStringToObject(layer, "preset", "envoy");
            cluster(F, p, &F->clusters[i], layer);
        } else if (!cJSON_GetObjectItemCaseSensitive(layers, name)) {
            char where[IMP_PATH_MAX];
            imp_path_key(where, F->clusters[i].path, "name");
            imp_add_note(F->r, where, key_at(F->clusters[i].c, "name"),
                         "no route in the file sends to this cluster: not read");
        }
    }
}

int imp_import_envoy(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err) {
    const sim_preset *p = scn_preset_find("envoy");
    if (p == NULL) return imp_fail_at(err, NULL, FB_ENOTFOUND, "%s", "no envoy preset");
    /* 64 routes and clusters with their paths: off the stack, one per call (reentrant) */
    envoy_file *F = calloc(1, sizeof *F);
    if (F == NULL) return imp_fail_at(err, NULL, FB_ENOMEM, "%s", "out of memory");
    F->r = r;
    F->err = err;
    int rc = read_file(F, root);
    if (rc == FB_OK && F->nroutes == 0 && F->nclusters == 0)
        rc = imp_fail_at(err, root, FB_EINVAL, "%s",
                         "no route to a cluster and no cluster in the file");
    if (rc == FB_OK) layers_of(F, p, layers);
    free(F);
    return rc;
}
