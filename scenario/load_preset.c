/*
 * load_preset.c - a layer given as a library preset: {"preset": NAME, ...the
 * library's own keys}. Every key is checked against the preset's parameters
 * (with a did-you-mean), every value read in the library's unit and range,
 * and the preset's apply() builds the layer (scenario/preset.h).
 */
#include "scenario/loadint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/preset.h"

/* "PT10S", "PT1M30S", "PT0.5S", "PT2H": Spring's ISO-8601 durations (no days or dates). */
static bool iso_duration(const char *s, fb_time_us *out) {
    if (strncmp(s, "PT", 2) != 0 || s[2] == '\0') return false;
    double total = 0;
    for (const char *p = s + 2; *p;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0)) return false;
        double unit = *end == 'H' ? 3600 : *end == 'M' ? 60 : *end == 'S' ? 1 : -1;
        if (unit < 0) return false;
        total += v * unit;
        p = end + 1;
    }
    if (total > 1e9) return false;
    *out = (fb_time_us)llround(total * 1e6);
    return true;
}

/* What a number parameter is, in its unit's words. */
static const char *kind_phrase(const sim_param *pa) {
    return pa->notation == SIM_PK_COUNT      ? "an integer"
           : pa->notation == SIM_PK_PERCENT  ? "a percentage"
           : pa->notation == SIM_PK_SECONDS  ? "a number of seconds"
           : pa->notation == SIM_PK_MILLIS   ? "a number of milliseconds"
           : pa->notation == SIM_PK_FRACTION ? "a fraction"
                                             : "a number";
}

/* Not a number: say what it is in the library's unit, with the number a duration string meant. */
static int not_a_number(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v) {
    fb_time_us us;
    bool timed = pa->notation == SIM_PK_SECONDS || pa->notation == SIM_PK_MILLIS;
    if (timed && cJSON_IsString(v) && scn_parse_duration(v->valuestring, &us) == FB_OK)
        return scn__fail(P, "%s: %s is %s (a number, not a string), got \"%s\" (did you mean %g?)",
                         p->name, pa->name, kind_phrase(pa), v->valuestring,
                         (double)us / (pa->notation == SIM_PK_SECONDS ? 1e6 : 1e3));
    return scn__fail(P, "%s: %s is %s, got %s", p->name, pa->name, kind_phrase(pa),
                     scn__type_name(v));
}

/* A number in the parameter's range (in its unit). */
static int number(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v, double *out) {
    if (!cJSON_IsNumber(v)) return not_a_number(P, p, pa, v);
    double d = v->valuedouble;
    if (pa->notation == SIM_PK_COUNT && d != floor(d))
        return scn__fail(P, "%s: %s is an integer, got %g", p->name, pa->name, d);
    if (d >= pa->lo && d <= pa->hi) {
        *out = d;
        return FB_OK;
    }
    if (pa->notation == SIM_PK_PERCENT && d > 0 && d < 1 && d * 100 >= pa->lo)
        return scn__fail(P, "%s: %s is a percentage in [%g, %g], got %g (did you mean %g?)",
                         p->name, pa->name, pa->lo, pa->hi, d, d * 100);
    return scn__fail(P, "%s: %s is %s in [%g, %g], got %g", p->name, pa->name, kind_phrase(pa),
                     pa->lo, pa->hi, d);
}

/* A duration within the parameter's range (given in seconds) into *out. */
static int duration_in_range(pctx *P, const sim_preset *p, const sim_param *pa, fb_time_us us,
                             sim_param_value *out) {
    double s = (double)us / 1e6;
    if (!(s >= pa->lo && s <= pa->hi))
        return scn__fail(P, "%s: %s is a duration in [%gs, %gs]", p->name, pa->name, pa->lo,
                         pa->hi);
    out->us = us;
    out->num = s;
    return FB_OK;
}

/* Spring's durations: "10s", "500ms", "PT10S", or a number of milliseconds. */
static int duration(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v,
                    sim_param_value *out) {
    fb_time_us us = 0;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1e12)
        us = (fb_time_us)llround(v->valuedouble * 1e3);
    else if (!cJSON_IsString(v) || (!iso_duration(v->valuestring, &us) &&
                                    scn_parse_duration(v->valuestring, &us) != FB_OK))
        return scn__fail(P,
                         "%s: %s is a duration (\"10s\", \"500ms\", \"PT10S\", or a number of "
                         "milliseconds)",
                         p->name, pa->name);
    return duration_in_range(P, p, pa, us, out);
}

/* A run of digits at *p, advancing it; false when there is none. */
static bool digits(const char **p, double *out) {
    char *end;
    if (**p < '0' || **p > '9') return false;
    *out = (double)strtoul(*p, &end, 10);
    *p = end;
    return true;
}

/* .NET TimeSpan.Parse: "[d.]hh:mm[:ss[.fffffff]]", or "d" (a number of days). */
static bool timespan(const char *s, fb_time_us *out) {
    double d = 0, h = 0, m = 0, sec = 0, first;
    const char *p = s;
    if (!digits(&p, &first)) return false;
    if (*p == '\0') {
        d = first;
    } else {
        if (*p == '.') {
            d = first;
            p++;
            if (!digits(&p, &first)) return false;
        }
        h = first;
        if (*p++ != ':' || !digits(&p, &m)) return false;
        if (*p == ':') {
            char *end;
            p++;
            if (*p < '0' || *p > '9') return false;
            sec = strtod(p, &end);
            p = end;
        }
        if (*p != '\0' || h >= 24 || m >= 60 || sec >= 60) return false;
    }
    double total = ((d * 24 + h) * 60 + m) * 60 + sec;
    if (total > 1e9) return false;
    *out = (fb_time_us)llround(total * 1e6);
    return true;
}

/* Go's time.ParseDuration: "0", or numbers with units ns, us, µs, ms, s, m, h: "1m30s". */
static bool go_duration(const char *s, fb_time_us *out) {
    static const struct {
        const char *unit;
        double us;
    } units[] = {{"ns", 1e-3}, {"us", 1},  {"\xc2\xb5s", 1}, {"ms", 1e3},
                 {"s", 1e6},   {"m", 6e7}, {"h", 3.6e9}};
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    double total = 0;
    for (const char *p = s; *p;) {
        char *end;
        if (!(*p >= '0' && *p <= '9') && *p != '.') return false;
        double v = strtod(p, &end);
        if (end == p) return false;
        size_t best = 0, len = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t l = strlen(units[i].unit);
            if (strncmp(end, units[i].unit, l) == 0 && l > len) best = i, len = l;
        }
        if (len == 0) return false;
        total += v * units[best].us;
        p = end + len;
    }
    if (total > 1e15) return false;
    *out = (fb_time_us)llround(total);
    return true;
}

/* TIMESPAN and GO_DURATION: a string in the library's own form. */
static int library_duration(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v,
                            sim_param_value *out) {
    bool dotnet = pa->notation == SIM_PK_TIMESPAN;
    fb_time_us us = 0;
    if (!cJSON_IsString(v) ||
        !(dotnet ? timespan(v->valuestring, &us) : go_duration(v->valuestring, &us)))
        return scn__fail(P, "%s: %s is %s", p->name, pa->name,
                         dotnet ? "a TimeSpan (\"00:00:05\", \"00:00:00.500\", \"1.00:00:00\")"
                                : "a Go duration (\"60s\", \"1m30s\", \"500ms\", \"0\")");
    return duration_in_range(P, p, pa, us, out);
}

static int word_index(const sim_param *pa, const char *w) {
    for (int i = 0; pa->names && pa->names[i]; i++)
        if (strcmp(pa->names[i], w) == 0) return i;
    return -1;
}

static int unknown_word(pctx *P, const sim_preset *p, const sim_param *pa, const char *w) {
    const char *s = scn__suggest(w, pa->names);
    if (s) return scn__fail(P, "%s: %s has no '%s' (did you mean '%s'?)", p->name, pa->name, w, s);
    return scn__fail(P, "%s: %s has no '%s'", p->name, pa->name, w);
}

/* STATUSES and WORDS: a list of at most SIM_PRESET_LIST_MAX entries. */
static int list(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v,
                sim_param_value *out) {
    if (!cJSON_IsArray(v)) return scn__fail(P, "%s: %s is a list", p->name, pa->name);
    for (const cJSON *e = v->child; e; e = e->next) {
        if (out->list_count == SIM_PRESET_LIST_MAX)
            return scn__fail(P, "at most %d entries in %s", SIM_PRESET_LIST_MAX, pa->name);
        size_t old = scn__push_index(P, out->list_count);
        int rc = FB_OK;
        if (pa->notation == SIM_PK_STATUSES) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 100 || e->valuedouble > 599)
                rc = scn__fail(P, "an HTTP status is an integer in 100..599");
            else
                out->list[out->list_count] = (int)e->valuedouble;
        } else if (!cJSON_IsString(e)) {
            rc = scn__fail(P, "expected a name, got %s", scn__type_name(e));
        } else if (pa->names) {
            int k = word_index(pa, e->valuestring);
            rc = k < 0 ? unknown_word(P, p, pa, e->valuestring) : FB_OK;
            out->list[out->list_count] = k;
        }
        scn__pop(P, old);
        if (rc != FB_OK) return rc;
        out->list_count++;
    }
    return FB_OK;
}

/* "5xx,reset": names separated by commas (spaces around them ignored, as Envoy's splitToken). */
static int csv_words(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v,
                     sim_param_value *out) {
    if (!cJSON_IsString(v))
        return scn__fail(P, "%s: %s is a string of comma-separated names", p->name, pa->name);
    const char *c = v->valuestring;
    while (*c) {
        while (*c == ' ' || *c == ',') c++;
        const char *end = c;
        while (*end && *end != ',') end++;
        size_t n = (size_t)(end - c);
        while (n > 0 && c[n - 1] == ' ') n--;
        if (n > 0) {
            char w[64];
            if (n >= sizeof w || out->list_count == SIM_PRESET_LIST_MAX)
                return scn__fail(P, "%s: %s: too long", p->name, pa->name);
            memcpy(w, c, n);
            w[n] = '\0';
            int k = word_index(pa, w);
            if (k < 0) return unknown_word(P, p, pa, w);
            out->list[out->list_count++] = k;
        }
        c = end;
    }
    return FB_OK;
}

/* A protobuf Duration: "0.025s" (JSON's form), or {"seconds": ..., "nanos": ...}. */
static int proto_duration(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v,
                          sim_param_value *out) {
    double secs = -1;
    if (cJSON_IsString(v)) {
        const char *t = v->valuestring;
        char *end;
        size_t n = strlen(t);
        double d = n > 1 && t[n - 1] == 's' && t[0] != '+' ? strtod(t, &end) : -1;
        if (d >= 0 && end == t + n - 1) secs = d;
    } else if (cJSON_IsObject(v)) {
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(v, "seconds");
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(v, "nanos");
        bool ok = (sec == NULL || cJSON_IsNumber(sec)) && (ns == NULL || cJSON_IsNumber(ns));
        for (const cJSON *it = v->child; it && ok; it = it->next)
            ok = strcmp(it->string, "seconds") == 0 || strcmp(it->string, "nanos") == 0;
        if (ok) secs = (sec ? sec->valuedouble : 0) + (ns ? ns->valuedouble / 1e9 : 0);
    }
    if (!(secs >= 0))
        return scn__fail(P,
                         "%s: %s is a protobuf Duration: a string of seconds ending in 's' "
                         "(\"0.025s\", \"30s\") or {\"seconds\": N, \"nanos\": N}",
                         p->name, pa->name);
    if (!(secs >= pa->lo && secs <= pa->hi))
        return scn__fail(P, "%s: %s is a duration in [%gs, %gs]", p->name, pa->name, pa->lo,
                         pa->hi);
    out->us = (fb_time_us)llround(secs * 1e6);
    out->num = secs;
    return FB_OK;
}

/* A protobuf Percent: {"value": 20.0}, or the number itself. */
static int proto_percent(pctx *P, const sim_preset *p, const sim_param *pa, const cJSON *v,
                         sim_param_value *out) {
    const cJSON *n = v;
    if (cJSON_IsObject(v)) {
        n = cJSON_GetObjectItemCaseSensitive(v, "value");
        if (n == NULL || v->child->next != NULL)
            return scn__fail(P, "%s: %s is a Percent: {\"value\": N}", p->name, pa->name);
    }
    return number(P, p, pa, n, &out->num);
}

static int param_value(pctx *P, const sim_preset *p, int idx, const cJSON *v,
                       sim_param_value *values);

/* SIM_PK_OBJECT: each key is the parameter "NAME.KEY", read in its own kind. */
static int object_value(pctx *P, const sim_preset *p, int idx, const cJSON *v,
                        sim_param_value *values) {
    const sim_param *pa = &p->params[idx];
    if (!cJSON_IsObject(v)) return scn__fail(P, "%s: %s is an object", p->name, pa->name);
    const char *keys[SIM_PRESET_PARAMS_MAX + 1];
    int ids[SIM_PRESET_PARAMS_MAX];
    size_t n = 0, len = strlen(pa->name);
    for (int j = 0; p->params[j].name && n < SIM_PRESET_PARAMS_MAX; j++) {
        const char *name = p->params[j].name;
        if (strncmp(name, pa->name, len) != 0 || name[len] != '.' || strchr(name + len + 1, '.'))
            continue;
        keys[n] = name + len + 1;
        ids[n++] = j;
    }
    keys[n] = NULL;
    for (const cJSON *it = v->child; it; it = it->next) {
        size_t k = 0;
        while (k < n && strcmp(keys[k], it->string) != 0) k++;
        size_t old = scn__push_key(P, it->string);
        int rc;
        if (k == n) {
            const char *sg = scn__suggest(it->string, keys);
            rc = sg ? scn__fail(P, "%s (%s %s) has no parameter '%s.%s' (did you mean '%s'?)",
                                p->name, p->library, p->version, pa->name, it->string, sg)
                    : scn__fail(P, "%s (%s %s) has no parameter '%s.%s'", p->name, p->library,
                                p->version, pa->name, it->string);
        } else {
            rc = param_value(P, p, ids[k], it, values);
        }
        scn__pop(P, old);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

static void add_note(pctx *P, const char *line);

/*
 * A percentage under 1 is a fraction written where the library means a percentage (0.5 for
 * 50 %): accepted, as the library accepts it, with a warning (--strict: an error).
 */
static void warn_fraction_as_percent(pctx *P, const sim_preset *p, const sim_param *pa, double d) {
    char line[256], part[64];
    if (d == 0.5)
        snprintf(part, sizeof part, "half a percent");
    else
        snprintf(part, sizeof part, "%g of a percent", d);
    snprintf(line, sizeof line, "%s's %s is a percentage: %g means %s; did you mean %g?", p->name,
             pa->name, d, part, d * 100);
    if (P->sc == NULL) return; /* --set checks the value alone */
    uint32_t before = P->sc->note_count;
    add_note(P, line);
    if (P->sc->note_count > before) ((sim_scenario *)P->sc)->warning_notes |= (uint64_t)1 << before;
}

/* One parameter's value, read in the library's unit. */
static int param_value(pctx *P, const sim_preset *p, int idx, const cJSON *v,
                       sim_param_value *values) {
    if (P->rc != FB_OK) return P->rc; /* the readers below are not sticky themselves */
    const sim_param *pa = &p->params[idx];
    sim_param_value *out = &values[idx];
    out->set = true;
    out->json = v;
    switch (pa->notation) {
    case SIM_PK_PERCENT: {
        if (number(P, p, pa, v, &out->num) == FB_OK && out->num > 0 && out->num < 1)
            warn_fraction_as_percent(P, p, pa, out->num); /* explicit: a number read */
        return P->rc;
    }
    case SIM_PK_COUNT:
    case SIM_PK_NUMBER:
    case SIM_PK_FRACTION:
        return number(P, p, pa, v, &out->num);
    case SIM_PK_SECONDS:
    case SIM_PK_MILLIS: {
        int rc = number(P, p, pa, v, &out->num);
        double scale = pa->notation == SIM_PK_SECONDS ? 1e6 : 1e3;
        out->us = (fb_time_us)llround(out->num * scale);
        return rc;
    }
    case SIM_PK_DURATION:
        return duration(P, p, pa, v, out);
    case SIM_PK_BOOL:
        if (!cJSON_IsBool(v)) return scn__fail(P, "%s: %s is true or false", p->name, pa->name);
        out->num = cJSON_IsTrue(v);
        return FB_OK;
    case SIM_PK_WORD:
        if (!cJSON_IsString(v)) return scn__fail(P, "%s: %s is a name", p->name, pa->name);
        out->word = word_index(pa, v->valuestring);
        return out->word < 0 ? unknown_word(P, p, pa, v->valuestring) : FB_OK;
    case SIM_PK_STATUSES:
    case SIM_PK_WORDS:
        return list(P, p, pa, v, out);
    case SIM_PK_JSON:
        return FB_OK;
    case SIM_PK_TIMESPAN:
    case SIM_PK_GO_DURATION:
        return library_duration(P, p, pa, v, out);
    case SIM_PK_OBJECT:
        return object_value(P, p, idx, v, values);
    case SIM_PK_CSV:
        return csv_words(P, p, pa, v, out);
    case SIM_PK_PROTO_DURATION:
        return proto_duration(P, p, pa, v, out);
    case SIM_PK_PROTO_PERCENT:
        return proto_percent(P, p, pa, v, out);
    }
    return FB_OK;
}

/* The keys a preset layer may have: its own three, then the library's. */
static int check_preset_keys(pctx *P, const cJSON *e, const sim_preset *p) {
    if (P->rc != FB_OK) return P->rc;
    const char *keys[SIM_PRESET_PARAMS_MAX + 4] = {"name", "description", "preset"};
    size_t n = 3;
    for (const sim_param *pa = p->params; pa->name && n + 1 < sizeof keys / sizeof keys[0]; pa++)
        if (!strchr(pa->name, '.')) keys[n++] = pa->name; /* NAME.KEY: inside NAME's object */
    keys[n] = NULL;
    for (const cJSON *it = e->child; it; it = it->next) {
        bool known = false;
        for (size_t i = 0; i < n && !known; i++) known = strcmp(it->string, keys[i]) == 0;
        if (known) continue;
        size_t old = scn__push_key(P, it->string);
        const char *s = scn__suggest(it->string, keys);
        int rc = s ? scn__fail(P, "%s (%s %s) has no parameter '%s' (did you mean '%s'?)", p->name,
                               p->library, p->version, it->string, s)
                   : scn__fail(P, "%s (%s %s) has no parameter '%s'", p->name, p->library,
                               p->version, it->string);
        scn__pop(P, old);
        return rc;
    }
    return FB_OK;
}

static int find_preset(pctx *P, const cJSON *e, const sim_preset **out) {
    char name[SIM_NAME_MAX] = "";
    int rc = scn__get_string(P, e, "preset", name, sizeof name);
    if (rc != FB_OK) return rc;
    *out = scn_preset_find(name);
    if (*out) return FB_OK;
    const char *names[64];
    size_t n = 0;
    for (const sim_preset *const *p = scn_presets(); *p && n + 1 < 64; p++) names[n++] = (*p)->name;
    names[n] = NULL;
    size_t old = scn__push_key(P, "preset");
    const char *s = scn__suggest(name, names);
    rc = s ? scn__fail(P, "no preset named '%s' (did you mean '%s'? fusebox presets lists them)",
                       name, s)
           : scn__fail(P, "no preset named '%s' (fusebox presets lists them)", name);
    scn__pop(P, old);
    return rc;
}

/* The keys of e checked against p's table, then each parameter given read into values. */
static int read_params(pctx *P, const cJSON *e, const sim_preset *p, sim_param_value *values) {
    check_preset_keys(P, e, p);
    int i = 0;
    for (const sim_param *pa = p->params; pa->name; pa++, i++) {
        if (strchr(pa->name, '.')) continue;
        const cJSON *v = scn__field(e, pa->name);
        if (v == NULL) continue;
        size_t old = scn__push_key(P, pa->name);
        param_value(P, p, i, v, values);
        scn__pop(P, old);
    }
    return P->rc;
}

int scn__check_preset_set(pctx *P, const cJSON *layer, const char *key, const cJSON *val) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(layer, "preset");
    const sim_preset *p = cJSON_IsString(name) ? scn_preset_find(name->valuestring) : NULL;
    size_t first = strcspn(key, ".");
    if (p == NULL || strchr(key, '[') || (first == 4 && strncmp(key, "name", 4) == 0) ||
        (first == 6 && strncmp(key, "preset", 6) == 0) ||
        (first == 11 && strncmp(key, "description", 11) == 0))
        return FB_OK; /* the loader says what is wrong, if anything */
    /* {"a": {"b": val}} for "a.b": the layer as the loader would read it, with val alone */
    cJSON *obj = cJSON_CreateObject(), *at = obj, *copy = cJSON_Duplicate(val, 1);
    char step[SIM_NAME_MAX * 4];
    if (obj == NULL || copy == NULL) scn__fail(P, "out of memory");
    for (const char *k = key; obj && copy;) {
        size_t n = strcspn(k, ".");
        snprintf(step, sizeof step, "%.*s", (int)n, k);
        if (k[n] == '\0') {
            cJSON_AddItemToObject(at, step, copy);
            copy = NULL;
            break;
        }
        at = cJSON_AddObjectToObject(at, step);
        if (at == NULL) {
            scn__fail(P, "out of memory");
            break;
        }
        k += n + 1;
    }
    sim_param_value values[SIM_PRESET_PARAMS_MAX];
    memset(values, 0, sizeof values);
    read_params(P, obj, p, values); /* sticky: nothing after an out of memory */
    cJSON_Delete(obj);
    cJSON_Delete(copy);
    return P->rc;
}

int scn__parse_preset(pctx *P, const cJSON *e, sim_layer *L) {
    const sim_preset *p = NULL;
    int rc = find_preset(P, e, &p);
    if (rc != FB_OK) return rc;
    sim_param_value values[SIM_PRESET_PARAMS_MAX];
    memset(values, 0, sizeof values);
    rc = read_params(P, e, p, values);
    if (rc != FB_OK) return rc;
    scn__layer_defaults(P->sc, L);
    char msg[1400] = "";
    rc = p->apply(p, values, P->sc, L, msg, sizeof msg);
    if (rc != FB_OK) return scn__fail(P, "%s: %s", p->name, msg[0] ? msg : "invalid parameters");
    /* a library that does not route calls the one endpoint it is given */
    if (!L->routes && L->order_len > 1) L->order_len = 1;
    L->preset = p;
    return FB_OK;
}

/* Record a note on the scenario being read (the loader owns it until it returns). */
static void add_note(pctx *P, const char *line) {
    sim_scenario *sc = (sim_scenario *)P->sc;
    if (sc->note_count == SIM_NOTES_MAX) {
        sc->notes_dropped++;
        return;
    }
    snprintf(sc->notes[sc->note_count++], SIM_NOTE_LEN, "%s: %s", P->path, line);
}

/* A relative path is beside the scenario file. */
static void resolve(const pctx *P, const char *file, char *out, size_t len) {
    const char *slash = strrchr(P->sc->file, '/');
    if (file[0] == '/' || slash == NULL)
        snprintf(out, len, "%s", file);
    else
        snprintf(out, len, "%.*s/%s", (int)(slash - P->sc->file), P->sc->file, file);
}

/* The preset layer the hook made of the file, parsed as if written here. */
/* The keys of an import layer that are fusebox's own; any other key overrides the import. */
static const char *const import_keys[] = {"name", "description", "import",
                                          "file", "instance",    NULL};

static bool import_key(const char *k) {
    for (size_t i = 0; import_keys[i]; i++)
        if (strcmp(k, import_keys[i]) == 0) return true;
    return false;
}

/* Put src's members into dst: an object into an object member-wise, anything else replaces. */
static bool merge_into(cJSON *dst, const cJSON *src) {
    for (const cJSON *it = src->child; it; it = it->next) {
        cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, it->string);
        if (cJSON_IsObject(have) && cJSON_IsObject(it)) {
            if (!merge_into(have, it)) return false;
            continue;
        }
        cJSON *copy = cJSON_Duplicate(it, true);
        if (copy == NULL) return false;
        if (have)
            cJSON_ReplaceItemInObjectCaseSensitive(dst, it->string, copy);
        else
            cJSON_AddItemToObject(dst, it->string, copy);
    }
    return true;
}

/*
 * The imported layer (JSON text), with the layer's other keys on top: the
 * preset's parameters in the library's names ("cooldown_time": 30, as --set
 * layers.NAME.cooldown_time=30 or a sweep's --grid writes them).
 */
static int parse_imported(pctx *P, const char *json, const char *file, const cJSON *e,
                          sim_layer *L) {
    cJSON *obj = cJSON_Parse(json), *over = cJSON_CreateObject();
    if (obj == NULL || !cJSON_IsObject(obj) || over == NULL) {
        cJSON_Delete(obj);
        cJSON_Delete(over);
        return scn__fail(P, "the import of %s did not give a layer", file);
    }
    size_t n_over = 0;
    for (const cJSON *it = e->child; it; it = it->next)
        if (!import_key(it->string)) {
            cJSON_AddItemReferenceToObject(over, it->string, (cJSON *)it);
            n_over++;
        }
    if (!merge_into(obj, over)) {
        cJSON_Delete(obj);
        cJSON_Delete(over);
        return scn__fail(P, "%s", "out of memory");
    }
    cJSON_Delete(over);
    int rc = scn__parse_preset(P, obj, L);
    if (rc != FB_OK) {
        /* an error at one of this layer's own keys says what they are */
        bool own = false;
        for (const cJSON *it = e->child; it && n_over; it = it->next) {
            const char *at = strstr(P->err->path, it->string);
            own = own || (!import_key(it->string) && at && (at == P->err->path || at[-1] == '.'));
        }
        size_t n = strlen(P->err->msg);
        snprintf(P->err->msg + n, sizeof P->err->msg - n, " (imported from %s%s)", file,
                 own ? "; this layer's own keys override the file's: each is one of the "
                       "preset's parameters, in the library's names (fusebox presets NAME)"
                     : "");
    }
    cJSON_Delete(obj);
    return rc;
}

int scn__import_layer(pctx *P, const cJSON *e, sim_layer *L) {
    char kind[SIM_NAME_MAX] = "", file[256] = "", instance[SIM_NAME_MAX] = "", path[512];
    scn__need_object(P, e);
    scn__need_key(P, e, "import");
    scn__need_key(P, e, "file");
    scn__get_string(P, e, "import", kind, sizeof kind);
    scn__get_string(P, e, "file", file, sizeof file);
    scn__get_string(P, e, "instance", instance, sizeof instance);
    if (P->rc != FB_OK) return P->rc; /* explicit: nothing to import */
    if (P->imp == NULL || P->imp->layer == NULL)
        return scn__fail(P, "this program cannot import policy files (fusebox run can)");
    resolve(P, file, path, sizeof path);
    char *json = NULL, *notes = NULL, msg[512] = "";
    int rc = P->imp->layer(P->imp->ctx, kind, path, instance[0] ? instance : NULL, &json, &notes,
                           msg, sizeof msg);
    if (rc != FB_OK) {
        scn__fail(P, "%s", msg);
    } else if (parse_imported(P, json, path, e, L) == FB_OK) { /* explicit: a layer's notes */
        char *save = NULL; /* strtok_r: strtok keeps its place in process-wide state */
        for (char *line = notes ? strtok_r(notes, "\n", &save) : NULL; line;
             line = strtok_r(NULL, "\n", &save))
            add_note(P, line);
    }
    free(json);
    free(notes);
    return P->rc;
}
