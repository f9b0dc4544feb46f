/* fault.c - the fault timeline: its JSON shape, durations, and per-attempt decisions. */
#include "mockserver/fault.h"

#include "core/rng.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mock_action_init(mock_action *a) {
    memset(a, 0, sizeof *a);
    a->retry_after_ms = -1;
    a->should_retry = -1;
    a->ttft_us = -1;
    a->tokens = -1;
    a->slow = 1.0;
    a->stall_after = -1;
    a->end_after = -1;
}

bool mock_action_is_fault(const mock_action *a) {
    return a->status != 0 || a->hang || a->reset || a->refusal || a->ttft_us >= 0 ||
           a->slow != 1.0 || a->stall_after >= 0 || a->end != MOCK_END_NORMAL ||
           a->ra_kind != MOCK_RA_NONE || a->retry_after_ms >= 0 || a->should_retry >= 0 ||
           a->tokens >= 0;
}

int mock_duration_parse(const char *s, fb_time_us *out_us) {
    if (s == NULL || *s == '\0') return FB_EPARSE;
    const char *p = s;
    double whole = 0, frac = 0, scale = 1;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
        whole = whole * 10 + (*p++ - '0');
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            scale /= 10;
            frac += (*p++ - '0') * scale;
            digits++;
        }
    }
    if (digits == 0) return FB_EPARSE;
    double unit_us;
    if (strcmp(p, "us") == 0)
        unit_us = 1;
    else if (strcmp(p, "ms") == 0)
        unit_us = 1e3;
    else if (strcmp(p, "s") == 0)
        unit_us = 1e6;
    else if (strcmp(p, "m") == 0 || strcmp(p, "min") == 0)
        unit_us = 60e6;
    else if (strcmp(p, "h") == 0)
        unit_us = 3600e6;
    else if (strcmp(p, "d") == 0)
        unit_us = 86400e6;
    else if (*p == '\0' && whole == 0 && frac == 0)
        unit_us = 1; /* a bare "0" needs no unit */
    else
        return FB_EPARSE;
    double v = (whole + frac) * unit_us;
    if (v > 9.2e18) return FB_ERANGE;
    *out_us = (fb_time_us)llround(v);
    return FB_OK;
}

/* ---- JSON shape ---------------------------------------------------------------------------- */

static int fail(mock_parse_error *err, const char *path, const char *fmt, ...) {
    if (err != NULL) {
        snprintf(err->path, sizeof err->path, "%s", path);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return FB_EPARSE;
}

/* dst = a.b, or a[i] when b is NULL; silently truncated (paths are for humans). */
static void join(char *dst, size_t cap, const char *a, const char *b, size_t i) {
    int n = b != NULL ? snprintf(dst, cap, "%s.%s", a, b) : snprintf(dst, cap, "%s[%zu]", a, i);
    if (n < 0) dst[0] = '\0';
}

static const char *const kind_names[] = {"outage",    "rate_limit", "hang",   "slow", "brownout",
                                         "midstream", "reset",      "policy", "flap"};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

static int get_duration(const cJSON *item, const char *path, fb_time_us *out,
                        mock_parse_error *err) {
    if (!cJSON_IsString(item))
        return fail(err, path, "must be a duration string such as \"250ms\", \"30s\", \"5m\"");
    if (mock_duration_parse(item->valuestring, out) != FB_OK)
        return fail(err, path, "cannot parse duration \"%s\" (use units ms, s, m, h)",
                    item->valuestring);
    return FB_OK;
}

static int get_number(const cJSON *item, const char *path, double lo, double hi, bool integer,
                      double *out, mock_parse_error *err) {
    if (!cJSON_IsNumber(item)) return fail(err, path, "must be a number");
    double v = item->valuedouble;
    if (integer && v != floor(v)) return fail(err, path, "must be an integer");
    if (!(v >= lo && v <= hi)) {
        if (hi >= 1e15) return fail(err, path, "must be >= %g", lo);
        return fail(err, path, "must be in [%g,%g]", lo, hi);
    }
    *out = v;
    return FB_OK;
}

/* Fields accepted inside each kind's object. */
static bool field_allowed(mock_fault_kind k, const char *name) {
    if (strcmp(name, "fraction") == 0) return k != MOCK_FAULT_BROWNOUT;
    switch (k) {
    case MOCK_FAULT_OUTAGE:
        return strcmp(name, "status") == 0 || strcmp(name, "retry_after") == 0 ||
               strcmp(name, "error") == 0;
    case MOCK_FAULT_RATE_LIMIT:
        return strcmp(name, "status") == 0 || strcmp(name, "retry_after") == 0;
    case MOCK_FAULT_FLAP:
        return strcmp(name, "status") == 0 || strcmp(name, "retry_after") == 0 ||
               strcmp(name, "period") == 0;
    case MOCK_FAULT_SLOW:
        return strcmp(name, "factor") == 0;
    case MOCK_FAULT_BROWNOUT:
        return strcmp(name, "capacity") == 0;
    case MOCK_FAULT_MIDSTREAM:
        return strcmp(name, "after_tokens") == 0 || strcmp(name, "mode") == 0;
    case MOCK_FAULT_HANG:
    case MOCK_FAULT_RESET:
    case MOCK_FAULT_POLICY:
        return false;
    }
    return false;
}

static int parse_body(const cJSON *body, mock_fault_kind kind, const char *path, mock_fault *f,
                      mock_parse_error *err) {
    char sub[sizeof((mock_parse_error *)0)->path + 64];
    bool has_capacity = false;
    if (!cJSON_IsObject(body)) return fail(err, path, "must be an object");
    for (const cJSON *it = body->child; it != NULL; it = it->next) {
        join(sub, sizeof sub, path, it->string, 0);
        if (!field_allowed(kind, it->string)) return fail(err, sub, "unknown key");
        double v = 0;
        int rc = FB_OK;
        if (strcmp(it->string, "fraction") == 0) {
            rc = get_number(it, sub, 0, 1, false, &v, err);
            f->fraction = v;
        } else if (strcmp(it->string, "status") == 0) {
            rc = get_number(it, sub, 400, 599, true, &v, err);
            f->status = (int)v;
        } else if (strcmp(it->string, "retry_after") == 0) {
            rc = get_duration(it, sub, &f->retry_after_us, err);
        } else if (strcmp(it->string, "period") == 0) {
            rc = get_duration(it, sub, &f->period_us, err);
            if (rc == FB_OK && f->period_us <= 0) rc = fail(err, sub, "must be > 0");
        } else if (strcmp(it->string, "factor") == 0) {
            rc = get_number(it, sub, 1, 1e6, false, &v, err);
            f->factor = v;
        } else if (strcmp(it->string, "capacity") == 0) {
            rc = get_number(it, sub, 0, 1, false, &v, err);
            f->capacity = v;
            has_capacity = true;
        } else if (strcmp(it->string, "error") == 0) {
            static const struct {
                const char *name;
                mock_flavor flavor;
            } errors[] = {{"overloaded", MOCK_FLAVOR_OVERLOADED},
                          {"rate_limit", MOCK_FLAVOR_RATE_LIMIT},
                          {"context_length", MOCK_FLAVOR_CONTEXT},
                          {"content_policy", MOCK_FLAVOR_FILTER},
                          {"other", MOCK_FLAVOR_PLAIN}};
            const char *e = cJSON_GetStringValue(it);
            size_t k = 0;
            while (e != NULL && k < 5 && strcmp(errors[k].name, e) != 0) k++;
            if (e == NULL || k == 5)
                rc = fail(err, sub,
                          "must be one of overloaded, rate_limit, context_length, "
                          "content_policy, other");
            else
                f->flavor = (int)errors[k].flavor;
        } else if (strcmp(it->string, "after_tokens") == 0) {
            rc = get_number(it, sub, 0, 1e15, true, &v, err);
            f->after_tokens = (int64_t)v;
        } else if (strcmp(it->string, "mode") == 0) {
            const char *m = cJSON_GetStringValue(it);
            if (m != NULL && strcmp(m, "error") == 0)
                f->mode = MOCK_MIDSTREAM_ERROR;
            else if (m != NULL && strcmp(m, "cut") == 0)
                f->mode = MOCK_MIDSTREAM_CUT;
            else if (m != NULL && strcmp(m, "truncate") == 0)
                f->mode = MOCK_MIDSTREAM_TRUNCATE;
            else
                rc = fail(err, sub, "must be \"error\", \"cut\" or \"truncate\"");
        }
        if (rc != FB_OK) return rc;
    }
    /* Required fields. */
    if (kind == MOCK_FAULT_SLOW && f->factor == 0) return fail(err, path, "missing key \"factor\"");
    if (kind == MOCK_FAULT_BROWNOUT && !has_capacity)
        return fail(err, path, "missing key \"capacity\"");
    if (kind == MOCK_FAULT_MIDSTREAM && f->after_tokens < 0)
        return fail(err, path, "missing key \"after_tokens\"");
    if (kind == MOCK_FAULT_FLAP && f->period_us <= 0)
        return fail(err, path, "missing key \"period\"");
    return FB_OK;
}

static void fault_defaults(mock_fault *f) {
    memset(f, 0, sizeof *f);
    f->for_us = FB_TIME_MAX;
    f->fraction = 1.0;
    f->retry_after_us = FB_TIME_NONE;
    f->after_tokens = -1;
}

int mock_faults_from_json(const cJSON *array, const char *path, mock_fault *out, size_t cap,
                          size_t *n_out, mock_parse_error *err) {
    char p[sizeof((mock_parse_error *)0)->path];
    *n_out = 0;
    if (path == NULL) path = "faults";
    if (!cJSON_IsArray(array)) return fail(err, path, "must be an array");
    size_t n = 0;
    for (const cJSON *e = array->child; e != NULL; e = e->next, n++) {
        join(p, sizeof p, path, NULL, n);
        if (n >= cap) return fail(err, p, "too many faults (at most %zu)", cap);
        if (!cJSON_IsObject(e)) return fail(err, p, "must be an object");
        mock_fault f;
        fault_defaults(&f);
        int kinds = 0;
        for (const cJSON *it = e->child; it != NULL; it = it->next) {
            char sub[sizeof p + 64];
            join(sub, sizeof sub, p, it->string, 0);
            int rc = FB_OK;
            if (strcmp(it->string, "at") == 0) {
                rc = get_duration(it, sub, &f.at_us, err);
            } else if (strcmp(it->string, "for") == 0) {
                rc = get_duration(it, sub, &f.for_us, err);
            } else {
                size_t k = 0;
                while (k < N_KINDS && strcmp(kind_names[k], it->string) != 0) k++;
                if (k == N_KINDS)
                    return fail(err, sub,
                                "unknown key (expected at, for, or one of outage, rate_limit, "
                                "hang, slow, brownout, midstream, reset, policy, flap)");
                if (++kinds > 1) return fail(err, sub, "one fault kind per entry");
                f.kind = (mock_fault_kind)k;
                rc = parse_body(it, f.kind, sub, &f, err);
            }
            if (rc != FB_OK) return rc;
        }
        if (kinds == 0) return fail(err, p, "missing fault kind (outage, rate_limit, ...)");
        if (f.status == 0) {
            if (f.kind == MOCK_FAULT_RATE_LIMIT)
                f.status = 429;
            else if (f.kind == MOCK_FAULT_OUTAGE || f.kind == MOCK_FAULT_FLAP)
                f.status = 503;
        }
        out[n] = f;
    }
    *n_out = n;
    return FB_OK;
}

int mock_faults_parse(const char *text, size_t len, mock_fault *out, size_t cap, size_t *n_out,
                      mock_parse_error *err) {
    *n_out = 0;
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (root == NULL) return fail(err, "faults", "not valid JSON");
    /* Accept a bare array or {"faults": [...]}. */
    const cJSON *arr = root;
    int rc;
    if (cJSON_IsObject(root)) {
        for (const cJSON *it = root->child; it != NULL; it = it->next)
            if (strcmp(it->string, "faults") != 0) {
                rc = fail(err, it->string, "unknown key (expected \"faults\")");
                goto out_root;
            }
        arr = cJSON_GetObjectItemCaseSensitive(root, "faults");
        if (arr == NULL) {
            rc = fail(err, "faults", "missing");
            goto out_root;
        }
    }
    rc = mock_faults_from_json(arr, "faults", out, cap, n_out, err);
out_root:
    cJSON_Delete(root);
    return rc;
}

/* ---- decisions ----------------------------------------------------------------------------- */

double mock_draw(uint64_t seed, uint64_t a, uint64_t b) {
    /* One short stream per (seed, attempt, fault): reproducible whatever else draws. */
    fb_rng r;
    fb_rng_derive(&r, seed, a, b);
    return fb_rng_uniform(&r);
}

static void set_retry_after(mock_action *act, fb_time_us ra_us) {
    if (ra_us == FB_TIME_NONE) return;
    /* Whole seconds (rounded up) in retry-after, exact in retry-after-ms. */
    act->ra_kind = MOCK_RA_SECONDS;
    act->retry_after_s = (double)((ra_us + FB_US_PER_S - 1) / FB_US_PER_S);
    act->retry_after_ms = (double)ra_us / 1000.0;
}

void mock_timeline_decide(const mock_fault *faults, size_t n, fb_time_us t_us, uint64_t seed,
                          uint64_t attempt, mock_action *act, double *capacity_scale) {
    bool terminal = false;
    *capacity_scale = 1.0;
    for (size_t i = 0; i < n; i++) {
        const mock_fault *f = &faults[i];
        if (t_us < f->at_us || t_us - f->at_us >= f->for_us) continue;
        if (f->kind == MOCK_FAULT_BROWNOUT) {
            *capacity_scale *= f->capacity;
            continue;
        }
        if (f->kind == MOCK_FAULT_FLAP && (t_us - f->at_us) % f->period_us >= f->period_us / 2)
            continue; /* the up half of the period */
        bool is_terminal = f->kind != MOCK_FAULT_SLOW && f->kind != MOCK_FAULT_MIDSTREAM;
        if (is_terminal && terminal) continue;
        if (f->kind == MOCK_FAULT_MIDSTREAM && act->end != MOCK_END_NORMAL) continue;
        if (f->fraction < 1.0 && mock_draw(seed, attempt, i) >= f->fraction) continue;
        size_t len = strlen(act->label);
        if (len + 24 < sizeof act->label)
            snprintf(act->label + len, sizeof act->label - len, "%sfaults[%zu].%s", len ? "," : "",
                     i, kind_names[f->kind]);
        switch (f->kind) {
        case MOCK_FAULT_OUTAGE:
        case MOCK_FAULT_RATE_LIMIT:
        case MOCK_FAULT_FLAP:
            act->status = f->status;
            act->flavor = (mock_flavor)f->flavor;
            set_retry_after(act, f->retry_after_us);
            break;
        case MOCK_FAULT_HANG:
            act->hang = true;
            break;
        case MOCK_FAULT_RESET:
            act->reset = true;
            break;
        case MOCK_FAULT_POLICY:
            act->status = 400;
            act->flavor = MOCK_FLAVOR_FILTER;
            break;
        case MOCK_FAULT_SLOW:
            act->slow *= f->factor;
            break;
        case MOCK_FAULT_MIDSTREAM:
            act->end = f->mode == MOCK_MIDSTREAM_CUT        ? MOCK_END_CUT
                       : f->mode == MOCK_MIDSTREAM_TRUNCATE ? MOCK_END_TRUNCATE
                                                            : MOCK_END_ERROR;
            act->end_after = f->after_tokens;
            break;
        case MOCK_FAULT_BROWNOUT:
            break;
        }
        if (is_terminal) terminal = true;
    }
}
