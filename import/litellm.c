/*
 * litellm.c - StandardLoggingPayload records into requests and attempts; see litellm.h.
 *
 * Requests are found by trace_id in a hash table that grows with them (the records cap
 * bounds it). A record without trace_id is a request of its own, and counted: its
 * retries, if any, cannot be told from new requests.
 */
#include "import/litellm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LL_KEY 72

typedef struct ll_slot {
    char key[LL_KEY];
    uint32_t req; /* + 1; 0 = empty */
} ll_slot;

struct imp_litellm {
    imp_log *log;
    ll_slot *slot;
    size_t nslot, used;
};

imp_litellm *imp_litellm_begin(imp_log *log) {
    imp_litellm *l = calloc(1, sizeof *l);
    if (l) l->log = log;
    return l;
}

void imp_litellm_free(imp_litellm *l) {
    if (l == NULL) return;
    free(l->slot);
    free(l);
}

int imp_litellm_looks(const cJSON *rec) {
    return cJSON_IsObject(rec) && cJSON_GetObjectItemCaseSensitive(rec, "startTime") &&
           (cJSON_GetObjectItemCaseSensitive(rec, "trace_id") ||
            cJSON_GetObjectItemCaseSensitive(rec, "litellm_call_id") ||
            cJSON_GetObjectItemCaseSensitive(rec, "model_group"));
}

/* ---- the trace_id table ---- */

static uint32_t hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static ll_slot *lookup(ll_slot *slot, size_t n, const char *key) {
    for (size_t k = hash(key) % n;; k = (k + 1) % n)
        if (slot[k].req == 0 || strcmp(slot[k].key, key) == 0) return &slot[k];
}

static int rehash(imp_litellm *l, imp_error *err) {
    size_t n = l->nslot ? l->nslot * 2 : 4096;
    ll_slot *fresh = calloc(n, sizeof *fresh);
    if (fresh == NULL) return imp_fail(err, FB_ENOMEM, 0, "%s", "out of memory");
    for (size_t i = 0; i < l->nslot; i++)
        if (l->slot[i].req) *lookup(fresh, n, l->slot[i].key) = l->slot[i];
    free(l->slot);
    l->slot = fresh;
    l->nslot = n;
    return FB_OK;
}

/* ---- fields ---- */

static const char *text(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static bool number(const cJSON *o, const char *key, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) *out = v->valuedouble;
    return cJSON_IsNumber(v) && isfinite(v->valuedouble);
}

static int32_t count(const cJSON *o, const char *key) {
    double d = -1;
    return number(o, key, &d) && d >= 0 && d < 2e9 ? (int32_t)d : -1;
}

/* LiteLLM's exception classes (litellm/exceptions.py) when error_code is not a status. */
static const struct {
    const char *name;
    int status;
    imp_outcome outcome;
} classes[] = {
    {"RateLimitError", 429, IMP_STATUS},
    {"ServiceUnavailableError", 503, IMP_STATUS},
    {"InternalServerError", 500, IMP_STATUS},
    {"APIError", 500, IMP_STATUS},
    {"BadGatewayError", 502, IMP_STATUS},
    {"BadRequestError", 400, IMP_STATUS},
    {"ContextWindowExceededError", 400, IMP_STATUS},
    {"ContentPolicyViolationError", 400, IMP_STATUS},
    {"AuthenticationError", 401, IMP_STATUS},
    {"PermissionDeniedError", 403, IMP_STATUS},
    {"NotFoundError", 404, IMP_STATUS},
    {"UnprocessableEntityError", 422, IMP_STATUS},
    {"Timeout", 0, IMP_TIMEOUT},
    {"APIConnectionError", 0, IMP_RESET},
};

static imp_outcome failure(imp_log *log, const cJSON *rec, int16_t *status) {
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(rec, "error_information");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(info, "error_code");
    const char *cls = text(info, "error_class");
    /* litellm.Timeout carries status 408 and APIConnectionError 500: the class says more */
    if (cls && strcmp(cls, "Timeout") == 0) return IMP_TIMEOUT;
    if (cls && strcmp(cls, "APIConnectionError") == 0) return IMP_RESET;
    long n = cJSON_IsNumber(code)   ? (long)code->valuedouble
             : cJSON_IsString(code) ? strtol(code->valuestring, NULL, 10)
                                    : 0;
    if (n >= 400 && n <= 599) {
        *status = (int16_t)n;
        return IMP_STATUS;
    }
    for (size_t i = 0; cls && i < sizeof classes / sizeof classes[0]; i++)
        if (strcmp(cls, classes[i].name) == 0) {
            *status = (int16_t)classes[i].status;
            return classes[i].outcome;
        }
    log->assumed_status++; /* a failure the record does not classify: a server error, assumed */
    *status = 500;
    return IMP_STATUS;
}

/* ---- provider and class ---- */

/* The prices the scenario can hold: its input_per_mtok and output_per_mtok are in [0, 1e6],
 * so a price per token in [0, 1] USD; another is an error here, not a scenario its own
 * loader refuses. */
static int model_info(imp_provider *p, const cJSON *rec, int line, const char *id, imp_error *err) {
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(rec, "model_map_information");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(map, "model_map_value");
    double d;
    if (number(v, "max_input_tokens", &d) && d > 0 && d < 4e9) p->context_window = (uint32_t)d;
    static const char *const keys[] = {"input_cost_per_token", "output_cost_per_token"};
    for (int k = 0; k < 2; k++) {
        if (!number(v, keys[k], &d)) continue;
        if (!(d >= 0 && d <= 1))
            return imp_fail(err, FB_EINVAL, line,
                            "record %s: model_map_information.model_map_value.%s: %.17g USD is "
                            "out of range [0, 1] per token (the scenario's %s_per_mtok holds at "
                            "most 1e6)",
                            id, keys[k], d, k == 0 ? "input" : "output");
        if (k == 0)
            p->price_in = d * 1e6;
        else
            p->price_out = d * 1e6;
    }
    return FB_OK;
}

static int provider(imp_litellm *l, const cJSON *rec, int line, const char *id, imp_error *err) {
    const char *custom = text(rec, "custom_llm_provider"), *base = text(rec, "api_base");
    const char *model = text(rec, "model"), *dep = text(rec, "model_id");
    if (dep == NULL) dep = text(cJSON_GetObjectItemCaseSensitive(rec, "hidden_params"), "model_id");
    if (!custom && !base && !model && !dep)
        return imp_fail(err, FB_EINVAL, line,
                        "record %s: unknown provider: no custom_llm_provider, api_base, model or "
                        "model_id",
                        id);
    char key[192], name[64] = "";
    if (dep)
        snprintf(key, sizeof key, "model_id=%s", dep);
    else
        snprintf(key, sizeof key, "%s|%s|%s", custom ? custom : "", base ? base : "",
                 model ? model : "");
    if (custom)
        snprintf(name, sizeof name, "%s", custom);
    else if (model)
        snprintf(name, sizeof name, "%.*s", (int)strcspn(model, "/"), model);
    else
        snprintf(name, sizeof name, "%s", base ? base : dep);
    int p = imp_log_provider(l->log, key, name, err);
    if (p < 0) return FB_ECAP;
    imp_provider *pv = &l->log->prov[p];
    snprintf(pv->system, sizeof pv->system, "%s", custom ? custom : "");
    snprintf(pv->address, sizeof pv->address, "%s", base ? base : "");
    snprintf(pv->model, sizeof pv->model, "%s", model ? model : "");
    if (model_info(pv, rec, line, id, err) != FB_OK) return FB_EINVAL;
    return p;
}

/* The request this record belongs to: its trace_id's, or a new one. */
static int request_of(imp_litellm *l, const cJSON *rec, int cls, imp_error *err) {
    const char *trace = text(rec, "trace_id");
    ll_slot *s = NULL;
    if (trace) {
        if ((l->used + 1) * 2 > l->nslot && rehash(l, err) != FB_OK) return -1;
        s = lookup(l->slot, l->nslot, trace);
        if (s->req) return (int)(s->req - 1);
    } else {
        l->log->ungrouped++;
    }
    imp_request *q = imp_log_request(l->log, err);
    if (q == NULL) return -1;
    q->cls = (uint8_t)cls;
    q->start_us = INT64_MAX;
    q->end_us = INT64_MIN;
    if (s) {
        snprintf(s->key, sizeof s->key, "%s", trace);
        s->req = (uint32_t)l->log->nreq;
        l->used++;
    }
    return (int)l->log->nreq - 1;
}

/* ---- one record ---- */

static int times(const cJSON *rec, int line, const char *id, imp_attempt *a, imp_error *err) {
    double t0, t1, tf;
    if (!number(rec, "startTime", &t0) || t0 <= 0)
        return imp_fail(err, FB_EINVAL, line, "record %s: no startTime (unix seconds)", id);
    if (!number(rec, "endTime", &t1) || t1 <= 0)
        return imp_fail(err, FB_EINVAL, line, "record %s: no endTime (unix seconds)", id);
    if (t1 < t0) return imp_fail(err, FB_EINVAL, line, "record %s: endTime before startTime", id);
    if ((t1 - t0) * 1e6 > (double)IMP_CALL_MAX_US)
        return imp_fail(err, FB_EINVAL, line,
                        "record %s: lasts %.1f days, more than a day: its times cannot be right",
                        id, (t1 - t0) / 86400);
    if (t0 > 4e9 || t1 > 4e9)
        return imp_fail(err, FB_EINVAL, line,
                        "record %s: startTime %.0f is no unix time in seconds", id, t0);
    a->start_us = llround(t0 * 1e6);
    a->end_us = llround(t1 * 1e6);
    const cJSON *stream = cJSON_GetObjectItemCaseSensitive(rec, "stream");
    /* for a call that did not stream, completionStartTime is when the answer came */
    if (cJSON_IsTrue(stream) && number(rec, "completionStartTime", &tf) && tf >= t0 && tf <= t1)
        a->ttft_us = llround(tf * 1e6) - a->start_us;
    return FB_OK;
}

static int outcome(imp_log *log, const cJSON *rec, int line, const char *id, imp_attempt *a,
                   imp_error *err) {
    const char *status = text(rec, "status");
    bool failed = cJSON_GetObjectItemCaseSensitive(rec, "error_information") != NULL;
    if (status && strcmp(status, "success") != 0 && strcmp(status, "failure") != 0)
        return imp_fail(err, FB_EINVAL, line,
                        "record %s: status \"%s\" is neither \"success\" nor \"failure\"", id,
                        status);
    if (status) failed = strcmp(status, "failure") == 0;
    int16_t code = 0;
    a->outcome = (uint8_t)(failed ? failure(log, rec, &code) : IMP_OK);
    a->status = code;
    return FB_OK;
}

static void fold(imp_request *q, const imp_attempt *a, const cJSON *rec) {
    if (a->start_us < q->start_us) q->start_us = a->start_us;
    if (a->end_us > q->end_us) q->end_us = a->end_us;
    q->stream |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "stream"));
    if (a->outcome == IMP_OK) {
        q->ok = true;
        q->tokens_in = a->tokens_in;
        q->tokens_out = a->tokens_out;
    } else if (q->tokens_in < 0) {
        q->tokens_in = a->tokens_in;
    }
}

int imp_litellm_add(imp_litellm *l, const cJSON *rec, int line, int index, imp_error *err) {
    char id[96];
    const char *call = text(rec, "litellm_call_id");
    if (call == NULL) call = text(rec, "id");
    if (call)
        snprintf(id, sizeof id, "%.80s", call);
    else
        snprintf(id, sizeof id, "#%d", index + 1);
    if (!cJSON_IsObject(rec))
        return imp_fail(err, FB_EINVAL, line, "record %s: expected a StandardLoggingPayload object",
                        id);
    const char *group = text(rec, "model_group");
    int cls = imp_log_class(l->log, group ? group : text(rec, "model"), err);
    if (cls < 0) return FB_ECAP;
    int p = provider(l, rec, line, id, err);
    if (p < 0) return p;
    imp_attempt *a = imp_log_attempt(l->log, err);
    if (a == NULL) return FB_ECAP;
    a->provider = (uint8_t)p;
    int rc = times(rec, line, id, a, err);
    if (rc == FB_OK) rc = outcome(l->log, rec, line, id, a, err);
    if (rc != FB_OK) return rc;
    a->tokens_in = count(rec, "prompt_tokens");
    a->tokens_out = count(rec, "completion_tokens");
    double cost;
    if (number(rec, "response_cost", &cost)) a->cost = cost;
    if (a->ttft_us >= 0) l->log->ttft_seen++;
    int r = request_of(l, rec, cls, err);
    if (r < 0) return FB_ECAP;
    a = &l->log->att[l->log->natt - 1]; /* request_of may not move attempts, but be plain */
    a->request = (uint32_t)r;
    fold(&l->log->req[r], a, rec);
    /* the session: the metadata's session_id, where the gateway logs it */
    uint64_t session =
        imp_session_id(text(cJSON_GetObjectItemCaseSensitive(rec, "metadata"), "session_id"));
    if (session && !l->log->req[r].session) {
        l->log->req[r].session = session;
        l->log->sessioned++;
    }
    return FB_OK;
}

int imp_litellm_end(imp_litellm *l, imp_error *err) {
    (void)l;
    (void)err;
    return FB_OK;
}
