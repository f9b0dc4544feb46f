/*
 * load_table.c - the walker of the format's tables (loadint.h): the keys of
 * an object checked against a section's table, then each key read by its
 * kind into the section's struct, in table order. Each read is one of the
 * typed getters of load_json.c, so the messages are theirs.
 */
#include "scenario/loadint.h"

#include <stdlib.h>
#include <string.h>

/* Field names, at most, of the sections an object holds together: the largest has 18. */
#define LD_FIELDS_MAX 48

int scn__check_fields(pctx *P, const cJSON *v, const ld_section *s) {
    const ld_section *const secs[] = {s, NULL};
    return scn__check_fields_in(P, v, secs);
}

int scn__check_fields_in(pctx *P, const cJSON *v, const ld_section *const *secs) {
    const char *keys[LD_FIELDS_MAX + 1], *required[LD_FIELDS_MAX + 1];
    size_t n = 0, r = 0;
    for (size_t i = 0; secs[i]; i++)
        for (const ld_field *f = secs[i]->fields; f->name && n < LD_FIELDS_MAX; f++) {
            keys[n++] = f->name;
            if (f->flags & LD_F_REQUIRED) required[r++] = f->name;
        }
    keys[n] = NULL;
    required[r] = NULL;
    return scn__check_object(P, v, keys, required);
}

/* An enum's or an integer's storage, by its size. */
static int read_enum(pctx *P, const cJSON *obj, const ld_field *f, char *at) {
    int k = 0;
    if (f->size != sizeof k) return scn__fail(P, "internal: '%s' is not an int", f->name);
    memcpy(&k, at, sizeof k);
    scn__get_enum(P, obj, f->name, f->names, &k);
    memcpy(at, &k, sizeof k); /* as it was unless read */
    return P->rc;
}

static int read_integer(pctx *P, const cJSON *obj, const ld_field *f, char *at) {
    if (f->size == sizeof(uint32_t)) {
        uint32_t u;
        memcpy(&u, at, sizeof u);
        scn__get_u32(P, obj, f->name, &u, (uint32_t)f->lo, (uint32_t)f->hi);
        memcpy(at, &u, sizeof u); /* as it was unless read */
        return P->rc;
    }
    if (f->size != sizeof(uint64_t))
        return scn__fail(P, "internal: '%s' has no integer size", f->name);
    uint64_t u;
    memcpy(&u, at, sizeof u);
    scn__get_uint(P, obj, f->name, &u, (uint64_t)f->lo, (uint64_t)f->hi);
    memcpy(at, &u, sizeof u); /* as it was unless read */
    return P->rc;
}

/* obj[f->name] into base + f->offset; absent keeps what is there. */
static int read_field(pctx *P, const cJSON *obj, const ld_field *f, void *base) {
    char *at = (char *)base + f->offset;
    switch (f->kind) {
    case LD_DURATION:
    case LD_DURATION0:
        return scn__get_duration(P, obj, f->name, (fb_time_us *)(void *)at,
                                 f->kind == LD_DURATION0);
    case LD_NUMBER:
        return scn__get_number(P, obj, f->name, (double *)(void *)at, f->lo, f->hi);
    case LD_INTEGER:
        return read_integer(P, obj, f, at);
    case LD_BOOL:
        return scn__get_bool(P, obj, f->name, (bool *)(void *)at);
    case LD_SWITCH:
        return scn__get_switch(P, obj, f->name, (fb_switch *)(void *)at);
    case LD_ENUM:
        return read_enum(P, obj, f, at);
    case LD_HOOK:
        return scn__key(P, obj, f->name, f->hook, at);
    case LD_CODE:
        break;
    }
    return FB_OK;
}

/* The LD_F_SET default, read as if the document had it ({NAME: DEF}). */
static int set_default(pctx *P, const ld_field *f, void *base) {
    if (P->rc != FB_OK) return P->rc;
    cJSON *obj = cJSON_CreateObject();
    cJSON *v = cJSON_Parse(f->def);
    if (obj == NULL || v == NULL) {
        cJSON_Delete(obj);
        cJSON_Delete(v);
        return scn__fail(P, "out of memory");
    }
    cJSON_AddItemToObject(obj, f->name, v);
    int rc = read_field(P, obj, f, base);
    cJSON_Delete(obj);
    return rc;
}

static int set_defaults(pctx *P, const ld_section *s, void *base) {
    for (const ld_field *f = s->fields; f->name; f++)
        if ((f->flags & LD_F_SET) && f->def)
            set_default(P, f, base);
        else if ((f->flags & LD_F_UNLIMITED) && f->kind == LD_INTEGER)
            memset((char *)base + f->offset, 0xff, f->size); /* UINT32_MAX or UINT64_MAX */
    return P->rc;
}

int scn__set_defaults(const ld_section *s, void *base, sim_error *err) {
    pctx P = {err, "", 0, false, NULL, NULL, FB_OK};
    return set_defaults(&P, s, base);
}

int scn__read_fields(pctx *P, const cJSON *v, const ld_section *s, void *base) {
    set_defaults(P, s, base);
    for (const ld_field *f = s->fields; f->name; f++) read_field(P, v, f, base);
    return P->rc;
}

/* The row `from` of s (NULL: the first), or NULL with the error in P. */
static const ld_field *row_from(pctx *P, const ld_section *s, const char *from) {
    const ld_field *f = s->fields;
    while (from && f->name && strcmp(f->name, from) != 0) f++;
    if (from && f->name == NULL) {
        scn__fail(P, "internal: no key '%s' in '%s'", from, s->name);
        return NULL;
    }
    return f;
}

int scn__read_range(pctx *P, const cJSON *v, const ld_section *s, void *base, const char *from,
                    const char *to) {
    const ld_field *f = row_from(P, s, from);
    if (f == NULL) return P->rc; /* explicit: no row to start from */
    for (; f->name && !(to && strcmp(f->name, to) == 0); f++) read_field(P, v, f, base);
    return P->rc;
}

int scn__set_defaults_range(pctx *P, const ld_section *s, void *base, const char *from,
                            const char *to) {
    const ld_field *f = row_from(P, s, from);
    if (f == NULL) return P->rc; /* explicit: no row to start from */
    for (; f->name && !(to && strcmp(f->name, to) == 0); f++)
        if (f->def) set_default(P, f, base);
    return P->rc;
}

int scn__read_field(pctx *P, const cJSON *v, const ld_section *s, const char *name, void *base) {
    if (P->rc != FB_OK) return P->rc;
    for (const ld_field *f = s->fields; f->name; f++)
        if (strcmp(f->name, name) == 0) return read_field(P, v, f, base);
    return scn__fail(P, "internal: no key '%s' in the table '%s'", name, s->name);
}

/* A pure hook's value read into scratch storage of the row's size (an LD_CODE row's: a number's),
 * over the row's default where the loader stores one first (a value that gives some of an
 * object's keys, as scale_down's {"stabilization": "30s"}, is read over the others' defaults). */
static int check_hook(pctx *P, const cJSON *obj, const ld_field *f) {
    if (P->rc != FB_OK || !(f->flags & LD_F_PURE) || f->hook == NULL) return P->rc;
    void *scratch = calloc(1, f->size > sizeof(double) ? f->size : sizeof(double));
    if (scratch == NULL) return scn__fail(P, "out of memory");
    ld_field at = *f;
    at.offset = 0;
    if (f->kind == LD_HOOK && (f->flags & LD_F_SET) && f->def) set_default(P, &at, scratch);
    scn__key(P, obj, f->name, f->hook, scratch);
    free(scratch);
    return P->rc;
}

int scn__check_field(pctx *P, const cJSON *obj, const ld_field *f) {
    union {
        uint64_t u;
        double d;
        int i;
        bool b;
        fb_switch s;
    } scratch;
    memset(&scratch, 0, sizeof scratch);
    if (f->kind == LD_HOOK || f->kind == LD_CODE) return check_hook(P, obj, f);
    if (f->size > sizeof scratch) return FB_OK;
    ld_field at = *f;
    at.offset = 0;
    return read_field(P, obj, &at, &scratch);
}

int scn__fields(pctx *P, const cJSON *v, const ld_section *s, void *base) {
    scn__check_fields(P, v, s);
    scn__read_fields(P, v, s, base);
    return P->rc;
}

/* The order of the docs' rows where several tables share a name. */
const ld_section *const scn__sections[] = {&scn__retry_section,
                                           &scn__token_bucket_section,
                                           &scn__quota_section,
                                           &scn__deposit_section,
                                           &scn__retry_breaker_section,
                                           &scn__breaker_section,
                                           &scn__variant_breaker_section,
                                           &scn__classify_section,
                                           &scn__rate_limit_section,
                                           &scn__pods_section,
                                           &scn__slo_section,
                                           &scn__spillover_section,
                                           &scn__limits_section,
                                           &scn__provider_section,
                                           &scn__latency_section,
                                           &scn__latency_load_section,
                                           &scn__capacity_section,
                                           &scn__codel_section,
                                           &scn__efficiency_section,
                                           &scn__price_section,
                                           &scn__network_section,
                                           &scn__fault_section,
                                           &scn__fault_outage_section,
                                           &scn__fault_rate_limit_section,
                                           &scn__fault_hang_section,
                                           &scn__fault_slow_section,
                                           &scn__fault_brownout_section,
                                           &scn__fault_midstream_section,
                                           &scn__fault_reset_section,
                                           &scn__fault_policy_section,
                                           &scn__fault_flap_section,
                                           &scn__class_section,
                                           &scn__arrivals_section,
                                           &scn__closed_section,
                                           &scn__replay_section,
                                           &scn__ramp_section,
                                           &scn__spike_section,
                                           &scn__burst_section,
                                           &scn__diurnal_section,
                                           &scn__resubmit_section,
                                           &scn__conclimit_section,
                                           &scn__hedging_section,
                                           &scn__connections_section,
                                           &scn__autoscale_section,
                                           &scn__scale_rules_section,
                                           &scn__breaker_store_section,
                                           &scn__store_outage_section,
                                           &scn__observed_section,
                                           &scn__observed_window_section,
                                           &scn__layer_section,
                                           &scn__override_section,
                                           &scn__degraded_section,
                                           &scn__layer_entry_section,
                                           &scn__variant_section,
                                           &scn__class_stack_section,
                                           &scn__gateway_section,
                                           &scn__top_section,
                                           &scn__backoff_section,
                                           &scn__jitter_section,
                                           &scn__duration_dist_section,
                                           &scn__duration_uniform_section,
                                           &scn__duration_exponential_section,
                                           &scn__duration_lognormal_section,
                                           &scn__duration_empirical_section,
                                           &scn__count_dist_section,
                                           &scn__count_uniform_section,
                                           &scn__count_exponential_section,
                                           &scn__count_lognormal_section,
                                           &scn__count_empirical_section,
                                           NULL};
