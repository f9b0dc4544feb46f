/*
 * policy_litellm.c - a LiteLLM proxy config.yaml, or a file of Router
 * keyword arguments, as one litellm preset layer (policyint.h).
 *
 * The proxy (litellm/proxy/proxy_server.py, ProxyConfig.load_config, at
 * 9344afb2) sets every litellm_settings key as a module global
 * (setattr(litellm, key, value)) and passes the router_settings keys that
 * are Router.__init__ arguments to the Router. Router.__init__ (router.py
 * f292d1ae) then combines the two per key: `num_retries` if not None, else
 * litellm.num_retries (but a set litellm.num_retries wins at run time: the
 * call's wrapper in utils.py puts it on the exception as num_retries, and
 * async_function_with_retries takes an exception's int num_retries over the
 * Router's); `timeout or litellm.request_timeout`; `fallbacks or
 * litellm.fallbacks` (and default_fallbacks, context_window_fallbacks,
 * content_policy_fallbacks alike); `allowed_fails` if not None, else
 * litellm.allowed_fails. The other Router settings (retry_after,
 * retry_policy, allowed_fails_policy, cooldown_time, disable_cooldowns,
 * routing_strategy, redis_*) are Router arguments only: in litellm_settings
 * they set a module global nothing reads. This file applies the same rules,
 * so the layer holds the values the Router runs with.
 *
 * LiteLLM reads its YAML with PyYAML (yaml.safe_load: YAML 1.1), so True,
 * yes and on are booleans and 20_000 is an integer here too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fb.h"
#include "import/policyint.h"

/* What a secret's value becomes in the layer: only its presence matters to the preset. */
#define SECRET "<secret: not copied>"
#define ENV_PREFIX "os.environ/"

/* ---- PyYAML's plain scalars (yaml/resolver.py, YAML 1.1) ---- */

/* Digits of `base` with underscores between them (not first): the end, or NULL. */
static const char *digits(const char *s, int base) {
    const char *start = s;
    for (; *s; s++) {
        int d = *s >= '0' && *s <= '9'   ? *s - '0'
                : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                         : -1;
        if (*s == '_' && s != start) continue;
        if (d < 0 || d >= base) break;
    }
    return s == start ? NULL : s;
}

/* `v` without underscores into buf; false when it does not fit. */
static bool strip_underscores(const char *v, char *buf, size_t len) {
    size_t j = 0;
    for (; *v && j + 1 < len; v++)
        if (*v != '_') buf[j++] = *v;
    buf[j] = '\0';
    return *v == '\0';
}

/*
 * int: [-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|0|[1-9][0-9_]*);
 * float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? (a float needs its dot: 1e3 is a string).
 */
static cJSON *py_number(const char *v) {
    const char *s = v + (v[0] == '-' || v[0] == '+');
    double sign = v[0] == '-' ? -1 : 1;
    char buf[80];
    if (!strip_underscores(s, buf, sizeof buf)) return NULL;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'b')) {
        int base = s[1] == 'x' ? 16 : 2;
        const char *end = digits(s + 2, base);
        if (end == NULL || *end) return NULL;
        return cJSON_CreateNumber(sign * (double)strtoll(buf + 2, NULL, base));
    }
    const char *end = digits(s, 10);
    if (end == NULL) return NULL;
    if (*end == '\0') {
        bool octal = s[0] == '0' && s[1];
        if (octal && digits(s, 8) != end) return NULL; /* 09: neither octal nor decimal */
        return cJSON_CreateNumber(sign * (double)strtoll(buf, NULL, octal ? 8 : 10));
    }
    if (*end != '.') return NULL;
    const char *e = digits(end + 1, 10);
    if (e == NULL) e = end + 1;
    if (*e == 'e' || *e == 'E') e = e[1] == '-' || e[1] == '+' ? digits(e + 2, 10) : NULL;
    if (e == NULL || *e) return NULL;
    double d = sign * strtod(buf, NULL);
    return isfinite(d) ? cJSON_CreateNumber(d) : NULL;
}

static cJSON *py_scalar(const char *v) {
    static const char *const yes[] = {"yes",  "Yes", "YES", "true", "True",
                                      "TRUE", "on",  "On",  "ON",   NULL};
    static const char *const no[] = {"no",    "No",  "NO",  "false", "False",
                                     "FALSE", "off", "Off", "OFF",   NULL};
    static const char *const none[] = {"~", "null", "Null", "NULL", "", NULL};
    if (imp_one_of(v, yes)) return cJSON_CreateTrue();
    if (imp_one_of(v, no)) return cJSON_CreateFalse();
    if (imp_one_of(v, none)) return cJSON_CreateNull();
    return py_number(v);
}

/* Python's None: absent, or a null scalar. */
static bool py_none(const imp_node *n) {
    if (n == NULL) return true;
    if (n->kind != IMP_SCALAR || n->quoted) return false;
    cJSON *v = py_scalar(n->value);
    bool none = cJSON_IsNull(v);
    cJSON_Delete(v);
    return none;
}

/* Python's truth: not None, False, 0, "", [] or {}. */
static bool py_truthy(const imp_node *n) {
    if (py_none(n)) return false;
    if (n->kind != IMP_SCALAR) return n->n > 0;
    if (n->quoted) return n->value[0] != '\0';
    cJSON *v = py_scalar(n->value);
    bool t = v == NULL ? n->value[0] != '\0'
                       : cJSON_IsTrue(v) || (cJSON_IsNumber(v) && v->valuedouble != 0);
    cJSON_Delete(v);
    return t;
}

static bool env_ref(const imp_node *n) {
    return n && n->kind == IMP_SCALAR && strncmp(n->value, ENV_PREFIX, strlen(ENV_PREFIX)) == 0;
}

/* ---- model_list: deployments ---- */

static const char *const deployment_params[] = {"model", "weight",        "rpm",
                                                "tpm",   "cooldown_time", NULL};

/* A credential's key: noted like any other, with a word that its value stays out. */
static bool credential(const char *key) {
    static const char *const words[] = {"key", "secret", "token", "password", "credential", NULL};
    for (size_t i = 0; words[i]; i++)
        if (strstr(key, words[i])) return true;
    return false;
}

static void note_unread(imp_result *r, const char *path, const imp_node *k, const char *why) {
    char where[IMP_PATH_MAX];
    imp_path_key(where, path, k->value);
    imp_add_note(r, where, k,
                 credential(k->value) ? "not modelled (a credential: its value is not copied)"
                                      : why);
}

/* litellm_params: model, weight, rpm, tpm, cooldown_time; the rest is the call's, not routing. */
static cJSON *deployment_litellm_params(const imp_node *lp, const char *path, imp_result *r) {
    cJSON *out = cJSON_CreateObject();
    for (size_t i = 0; lp->kind == IMP_MAP && i + 1 < lp->n; i += 2) {
        const imp_node *k = lp->items[i], *v = lp->items[i + 1];
        if (!imp_one_of(k->value, deployment_params)) {
            note_unread(r, path, k, "not modelled by the preset");
        } else if (env_ref(v) && strcmp(k->value, "model") != 0) {
            note_unread(r, path, k, "read from the environment: fusebox does not read it");
        } else {
            cJSON_AddItemToObject(out, k->value, imp_to_json(v, py_scalar));
        }
    }
    return out;
}

/* One deployment: model_name, litellm_params (routing keys), model_info.id. */
static int deployment(const imp_node *e, const char *path, cJSON *list, imp_result *r,
                      imp_error *err) {
    const imp_node *name = imp_get(e, "model_name");
    if (name == NULL || name->kind != IMP_SCALAR)
        return imp_fail_at(err, e, FB_EINVAL, "%s: a deployment needs a model_name", path);
    cJSON *d = cJSON_CreateObject();
    cJSON_AddItemToArray(list, d);
    for (size_t i = 0; i + 1 < e->n; i += 2) {
        const imp_node *k = e->items[i], *v = e->items[i + 1];
        char where[IMP_PATH_MAX];
        imp_path_key(where, path, k->value);
        if (strcmp(k->value, "model_name") == 0) {
            cJSON_AddStringToObject(d, "model_name", v->value);
        } else if (strcmp(k->value, "litellm_params") == 0 && v->kind == IMP_MAP) {
            cJSON_AddItemToObject(d, "litellm_params", deployment_litellm_params(v, where, r));
        } else if (strcmp(k->value, "model_info") == 0 && v->kind == IMP_MAP) {
            cJSON *info = cJSON_AddObjectToObject(d, "model_info");
            for (size_t j = 0; j + 1 < v->n; j += 2) {
                if (strcmp(v->items[j]->value, "id") == 0)
                    cJSON_AddItemToObject(info, "id", imp_to_json(v->items[j + 1], py_scalar));
                else
                    note_unread(r, where, v->items[j], "not modelled by the preset");
            }
        } else {
            note_unread(r, path, k, "not modelled by the preset");
        }
    }
    return FB_OK;
}

static int model_list(const imp_node *ml, cJSON *layer, imp_result *r, imp_error *err) {
    if (ml->kind != IMP_SEQ)
        return imp_fail_at(err, ml, FB_EINVAL, "%s", "model_list: a list of deployments");
    if (ml->n == 0)
        return imp_fail_at(err, ml, FB_EINVAL, "%s",
                           "model_list is empty: no deployment to route to");
    cJSON *list = cJSON_AddArrayToObject(layer, "model_list");
    for (size_t i = 0; i < ml->n; i++) {
        char path[IMP_PATH_MAX];
        imp_path_index(path, "model_list", i);
        if (ml->items[i]->kind != IMP_MAP)
            return imp_fail_at(err, ml->items[i], FB_EINVAL, "%s: a deployment is a map", path);
        int rc = deployment(ml->items[i], path, list, r, err);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

/* ---- router_settings and litellm_settings ---- */

/* How Router.__init__ combines a router_settings value with litellm_settings'. */
enum how {
    ROUTER_ONLY, /* a Router argument: litellm_settings does not reach it */
    NOT_NONE,    /* `x if x is not None else litellm.y` */
    TRUTHY,      /* `x or litellm.y` */
    MODULE_WINS, /* litellm.y if not None, else x (num_retries: see the top of the file) */
};

typedef struct setting {
    const char *param; /* the preset's parameter, the Router's argument */
    const char *lkey;  /* the litellm module global (litellm_settings key), or NULL */
    enum how how;
} setting;

static const setting settings[] = {
    {"num_retries", "num_retries", MODULE_WINS},
    {"timeout", "request_timeout", TRUTHY},
    {"retry_after", NULL, ROUTER_ONLY},
    {"retry_policy", NULL, ROUTER_ONLY},
    {"allowed_fails_policy", NULL, ROUTER_ONLY},
    {"cooldown_time", NULL, ROUTER_ONLY},
    {"disable_cooldowns", NULL, ROUTER_ONLY},
    {"fallbacks", "fallbacks", TRUTHY},
    {"default_fallbacks", "default_fallbacks", TRUTHY},
    {"context_window_fallbacks", "context_window_fallbacks", TRUTHY},
    {"content_policy_fallbacks", "content_policy_fallbacks", TRUTHY},
    {"routing_strategy", NULL, ROUTER_ONLY},
    {"redis_host", NULL, ROUTER_ONLY},
    {"redis_port", NULL, ROUTER_ONLY},
    {"redis_url", NULL, ROUTER_ONLY},
    {"redis_password", NULL, ROUTER_ONLY},
};

#define NSETTINGS (sizeof settings / sizeof settings[0])

const char *imp__litellm_module_key(const char *param) {
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strcmp(settings[i].param, param) == 0) return settings[i].lkey;
    return NULL;
}

/* The two sections, with the paths their keys are reported under. */
typedef struct sections {
    const imp_node *router, *module;
    const char *rpath, *lpath; /* "router_settings" ("" for a Router-arguments file) */
} sections;

static void note_key(imp_result *r, const char *sec, const imp_node *map, const char *key,
                     const char *why) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        if (strcmp(map->items[i]->value, key) != 0) continue;
        char where[IMP_PATH_MAX];
        imp_path_key(where, sec, key);
        imp_add_note(r, where, map->items[i], why);
    }
}

/* The key node of `key` in map (for positions), or NULL. */
static const imp_node *key_node(const imp_node *map, const char *key) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2)
        if (strcmp(map->items[i]->value, key) == 0) return map->items[i];
    return NULL;
}

/*
 * RetryPolicy and AllowedFailsPolicy fields the Router at f292d1ae never
 * reads: get_num_retries_from_retry_policy (router_utils/
 * get_retry_from_policy.py) and get_allowed_fails_from_policy have no
 * InternalServerError branch (BerriAI/litellm#29283, #37805), so a 500 takes
 * num_retries / allowed_fails. Noted and left out of the layer.
 */
static void unread_class_keys(cJSON *obj, const imp_node *map, const char *where, imp_result *r) {
    static const char *const keys[] = {"InternalServerErrorRetries",
                                       "InternalServerErrorAllowedFails", NULL};
    static const char *const instead[] = {"num_retries", "allowed_fails"};
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        for (size_t k = 0; keys[k]; k++) {
            if (strcmp(map->items[i]->value, keys[k]) != 0) continue;
            char path[IMP_PATH_MAX], why[160];
            imp_path_key(path, where, keys[k]);
            snprintf(why, sizeof why,
                     "no effect: the Router (f292d1ae) reads no InternalServerError field "
                     "(BerriAI/litellm#29283, #37805); a 500 takes %s",
                     instead[k]);
            imp_add_note(r, path, map->items[i], why);
            cJSON_DeleteItemFromObjectCaseSensitive(obj, keys[k]);
        }
    }
}

/* The value the Router runs with (v, under key k of section sec), as the layer's parameter. */
static void add_value(cJSON *layer, const sim_preset *p, const setting *s, const imp_node *k,
                      const imp_node *v, const char *sec, imp_result *r) {
    char where[IMP_PATH_MAX];
    imp_path_key(where, sec, k->value);
    cJSON *j = NULL;
    if (!strcmp(s->param, "redis_password") || !strcmp(s->param, "redis_url")) {
        cJSON_AddStringToObject(layer, s->param, SECRET); /* a secret: only its presence counts */
    } else if (env_ref(v) && strcmp(s->param, "redis_host") != 0) {
        imp_add_note(r, where, k,
                     "read from the environment when LiteLLM starts: fusebox does not read it "
                     "(the preset's default applies)");
    } else if (!strcmp(s->param, "redis_port") && !cJSON_IsNumber(j = imp_to_json(v, py_scalar))) {
        cJSON_Delete(j);
        imp_add_note(r, where, k, "not a port number: not copied (the preset only accepts it)");
    } else if (j) {
        cJSON_AddItemToObject(layer, s->param, j);
    } else if (p->params[scn_preset_param(p, s->param)].notation == SIM_PK_OBJECT) {
        cJSON *obj = imp_copy_object(v, p, s->param, where, py_scalar, r);
        unread_class_keys(obj, v, where, r);
        cJSON_AddItemToObject(layer, s->param, obj);
    } else {
        cJSON_AddItemToObject(layer, s->param, imp_to_json(v, py_scalar));
    }
}

/* One setting: router_settings' value or litellm_settings', as Router.__init__ chooses. */
static void one_setting(const setting *s, const sections *S, const sim_preset *p, cJSON *layer,
                        imp_result *r) {
    const imp_node *rv = imp_get(S->router, s->param);
    const imp_node *lv = s->lkey ? imp_get(S->module, s->lkey) : NULL;
    char why[160];
    if (s->how == ROUTER_ONLY) {
        snprintf(why, sizeof why,
                 "the Router takes %s from router_settings only: litellm.%s is never read",
                 s->param, s->param);
        note_key(r, S->lpath, S->module, s->param, why);
        if (!py_none(rv)) add_value(layer, p, s, key_node(S->router, s->param), rv, S->rpath, r);
        return;
    }
    if (s->how == MODULE_WINS && !py_none(lv)) {
        add_value(layer, p, s, key_node(S->module, s->lkey), lv, S->lpath, r);
        snprintf(why, sizeof why,
                 "superseded by litellm_settings.%s at line %d (utils.py puts litellm.%s on "
                 "every exception; async_function_with_retries prefers it)",
                 s->lkey, lv->line, s->lkey);
        note_key(r, S->rpath, S->router, s->param, why);
        return;
    }
    bool router_wins = s->how == TRUTHY ? py_truthy(rv) : !py_none(rv);
    const char *rule = s->how == TRUTHY ? "%s or litellm.%s" : "%s if not None, else litellm.%s";
    char code[96];
    snprintf(code, sizeof code, rule, s->param, s->lkey);
    if (router_wins) {
        add_value(layer, p, s, key_node(S->router, s->param), rv, S->rpath, r);
        snprintf(why, sizeof why, "superseded by router_settings.%s at line %d (Router: %s)",
                 s->param, rv->line, code);
        note_key(r, S->lpath, S->module, s->lkey, why);
        return;
    }
    if (!py_none(lv)) add_value(layer, p, s, key_node(S->module, s->lkey), lv, S->lpath, r);
    snprintf(why, sizeof why, "%s, so the Router takes litellm_settings.%s (%s)",
             py_none(rv) ? "None" : "falsy", s->lkey, code);
    if (key_node(S->router, s->param) && !py_none(lv))
        note_key(r, S->rpath, S->router, s->param, why);
}

/* A number the file gives for allowed_fails; NAN for None or unreadable (noted). */
static double allowed_fails_of(const imp_node *v, const char *sec, imp_result *r) {
    if (py_none(v)) return NAN;
    cJSON *j = v->kind == IMP_SCALAR && !v->quoted ? py_scalar(v->value) : NULL;
    double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    cJSON_Delete(j);
    if (isnan(d)) {
        char where[IMP_PATH_MAX];
        imp_path_key(where, sec, "allowed_fails");
        imp_add_note(r, where, v, "not a number fusebox can read");
    }
    return d;
}

/*
 * allowed_fails (cooldown_handlers.py _is_allowed_fails_set_on_router): the
 * allowed-fails rule applies with allowed_fails_policy, or when the Router's
 * allowed_fails differs from litellm.allowed_fails (3 unless litellm_settings
 * says); otherwise the percentage rule, which does not read it.
 */
static void allowed_fails(const sections *S, cJSON *layer, imp_result *r) {
    const imp_node *rv = imp_get(S->router, "allowed_fails");
    const imp_node *lv = imp_get(S->module, "allowed_fails");
    bool policy = !py_none(imp_get(S->router, "allowed_fails_policy"));
    double router = rv ? allowed_fails_of(rv, S->rpath, r) : NAN;
    double module = lv ? allowed_fails_of(lv, S->lpath, r) : 3;
    double used = isnan(router) ? module : router;
    bool v1 = policy || (!isnan(router) && router != module);
    if (!v1) {
        const char *why = "LiteLLM's percentage rule applies: allowed_fails counts only with "
                          "allowed_fails_policy or a router_settings value other than "
                          "litellm.allowed_fails";
        note_key(r, S->rpath, S->router, "allowed_fails", why);
        note_key(r, S->lpath, S->module, "allowed_fails", why);
        return;
    }
    if (!isnan(router))
        note_key(r, S->lpath, S->module, "allowed_fails",
                 "superseded by router_settings.allowed_fails (Router: allowed_fails if not "
                 "None, else litellm.allowed_fails)");
    if (isnan(used)) return;
    cJSON_AddNumberToObject(layer, "allowed_fails", used);
    /* the preset turns the rule on for a value other than 3, or a policy: give an empty one */
    if (used == 3 && !policy) cJSON_AddObjectToObject(layer, "allowed_fails_policy");
}

static bool is_setting(const char *key, bool module) {
    if (strcmp(key, "allowed_fails") == 0) return true;
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strcmp(key, module ? (settings[i].lkey ? settings[i].lkey : settings[i].param)
                               : settings[i].param) == 0)
            return true;
    return false;
}

/* The keys of a section that are no setting of the preset: reported. */
static void other_keys(const imp_node *map, const char *sec, bool module, bool skip_model_list,
                       imp_result *r) {
    for (size_t i = 0; map && map->kind == IMP_MAP && i + 1 < map->n; i += 2) {
        const char *k = map->items[i]->value;
        if (is_setting(k, module) || (skip_model_list && strcmp(k, "model_list") == 0)) continue;
        note_unread(r, sec, map->items[i], "not modelled by the preset");
    }
}

/* The top-level sections a proxy config has besides the three read: noted once each. */
static void other_sections(const imp_node *root, imp_result *r) {
    for (size_t i = 0; i + 1 < root->n; i += 2) {
        const imp_node *k = root->items[i];
        if (!strcmp(k->value, "model_list") || !strcmp(k->value, "router_settings") ||
            !strcmp(k->value, "litellm_settings"))
            continue;
        imp_add_note(r, k->value, k,
                     !strcmp(k->value, "general_settings") ? "proxy server settings: not modelled"
                     : !strcmp(k->value, "environment_variables")
                         ? "not read: fusebox does not set or read the environment"
                         : "not modelled (fusebox reads model_list, router_settings and "
                           "litellm_settings)");
    }
}

int imp_import_litellm(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err) {
    const sim_preset *p = scn_preset_find("litellm");
    if (p == NULL) return imp_fail_at(err, NULL, FB_ENOTFOUND, "%s", "no litellm preset");
    if (root->kind != IMP_MAP)
        return imp_fail_at(err, root, FB_EINVAL, "%s", "a LiteLLM config is a map");
    const imp_node *ml = imp_get(root, "model_list");
    sections S = {imp_get(root, "router_settings"), imp_get(root, "litellm_settings"),
                  "router_settings", "litellm_settings"};
    /* a file of Router keyword arguments (Router(**yaml.safe_load(f))): its top level */
    bool bare = !S.router && !S.module && !imp_get(root, "general_settings");
    if (bare) S = (sections){root, NULL, "", "litellm_settings"};
    if (!ml && !imp_get(root, "router_settings") && !imp_get(root, "litellm_settings"))
        return imp_fail_at(err, root, FB_EINVAL, "%s",
                           "no model_list, router_settings or litellm_settings (a LiteLLM proxy "
                           "config.yaml, or a file of Router arguments)");
    cJSON *layer = cJSON_AddObjectToObject(layers, "litellm");
    cJSON_AddStringToObject(layer, "preset", "litellm");
    int rc = ml ? model_list(ml, layer, r, err) : FB_OK;
    if (rc != FB_OK) return rc;
    if (!ml)
        imp_add_note(r, "model_list", NULL,
                     "none in the file: the preset's default (every LLM provider, one group)");
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (!strcmp(settings[i].param, "allowed_fails_policy")) allowed_fails(&S, layer, r);
        one_setting(&settings[i], &S, p, layer, r);
    }
    other_keys(S.router, S.rpath, false, bare, r);
    other_keys(S.module, S.lpath, true, false, r);
    if (!bare) other_sections(root, r);
    return FB_OK;
}
