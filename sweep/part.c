/*
 * part.c - the partial files of a sharded sweep and their merge.
 *
 * A partial file carries everything the merge needs: the sweep's definition
 * (scenario path and its FNV-1a hash, variant, --set, --grid, sample, seeds),
 * the analysis options, the scenario text itself, and the metric values of
 * the shard's runs printed with %.17g, which reads back as the same doubles,
 * so the merged outputs are byte-identical to an unsharded run's.
 */
#include "sweep/sweepint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/version.h"
#include "util/json.h"

#define PART_TEXT_MAX ((size_t)2 * 1024 * 1024 * 1024)
#define PART_FORMAT 1

bool sweep_in_shard(uint64_t task, uint32_t k, uint32_t n) {
    return n > 0 && task % n == (uint64_t)(k - 1);
}

static void write_str_array(util_json *w, const char *key, char *const *v, size_t n) {
    util_json_open(w, key, '[', UTIL_JSON_INLINE);
    for (size_t i = 0; i < n; i++) util_json_str(w, NULL, v[i]);
    util_json_close(w);
}

/* What decides the tasks and their results; the merge checks the parts agree on all of it. */
static void write_definition(util_json *w, const sweep *sw) {
    util_json_open(w, "sweep", '{', UTIL_JSON_INLINE);
    util_json_str(w, "scenario", sw->file);
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, sw->hash);
    util_json_str(w, "scenario_fnv1a64", hash);
    util_json_str(w, "variant", sw->variant);
    write_str_array(w, "sets", sw->sets, sw->set_count);
    write_str_array(w, "grid", sw->grid_args, sw->dim_count);
    util_json_u64(w, "sample", sw->sample);
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, sw->seed);
    util_json_str(w, "seed", seed);
    util_json_u64(w, "seeds", sw->seeds);
    util_json_u64(w, "runs", sw->tasks);
    util_json_str(w, "rng", FB_RNG_VERSION); /* runs of two stream versions do not mix */
    util_json_close(w);
    util_json_open(w, "analysis", '{', UTIL_JSON_INLINE);
    util_json_str(w, "objective", sw->objective[0] ? sw->objective : NULL);
    util_json_i64(w, "sense", sw->sense);
    util_json_bool(w, "strict", sw->strict);
    util_json_str(w, "subject_to", sw->subject_to[0] ? sw->subject_to : NULL);
    util_json_str(w, "heatmap", sw->heatmap_given ? sw->heatmap : NULL);
    util_json_str(w, "heatmap_dims", sw->heatmap_dims[0] ? sw->heatmap_dims : NULL);
    util_json_close(w);
}

static void write_task(util_json *w, const sweep *sw, uint64_t t) {
    util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
    util_json_u64(w, "task", t);
    util_json_bool(w, "ok", sw->state[t] == 1);
    if (sw->state[t] != 1) util_json_str(w, "error", sw->errors[t] ? sw->errors[t] : "");
    /* %.17g reads back as the same double: merged outputs match unsharded ones */
    util_json_open(w, "values", '[', UTIL_JSON_COMPACT);
    for (size_t m = 0; m < sw->metric_count; m++)
        util_json_exact(w, NULL, sw->values[t * sw->metric_count + m]);
    util_json_close(w);
    util_json_close(w);
}

int sweep_write_part(FILE *f, const sweep *sw, uint32_t k, uint32_t n) {
    return sweep_part_write(f, sw, k, n, false);
}

int sweep_part_write(FILE *f, const sweep *sw, uint32_t k, uint32_t n, bool interrupted) {
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_u64(&w, "fusebox_sweep_part", PART_FORMAT);
    util_json_str(&w, "fusebox", FB_VERSION);
    util_json_u64(&w, "shard", k);
    util_json_u64(&w, "shards", n);
    /* only in an interrupted sweep's file: a finished shard's file stays as it was */
    if (interrupted) util_json_bool(&w, "interrupted", true);
    write_definition(&w, sw);
    util_json_open(&w, "metrics", '[', UTIL_JSON_INLINE);
    for (size_t m = 0; m < sw->metric_count; m++) util_json_str(&w, NULL, sw->metrics[m]);
    util_json_close(&w);
    util_json_str(&w, "scenario_text", sw->text);
    util_json_open(&w, "tasks", '[', UTIL_JSON_LINES_OPEN);
    for (uint64_t t = 0; t < sw->tasks; t++)
        if (sweep_in_shard(t, k, n) && sw->state[t] != 0) write_task(&w, sw, t);
    util_json_close(&w);
    util_json_close(&w);
    fputc('\n', f);
    return ferror(f) ? FB_EIO : FB_OK;
}

/* Seeds are written as strings: a JSON number (a double) loses integers above 2^53. */
static int parse_seed(const char *s, uint64_t *out) {
    char *end;
    if (*s < '0' || *s > '9') return FB_EPARSE;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') return FB_EPARSE;
    *out = v;
    return FB_OK;
}

typedef struct part {
    const char *file;
    cJSON *root;
    const cJSON *sweep;
    uint32_t shard, shards;
    bool interrupted;
    uint64_t digest; /* FNV-1a 64 of the file's bytes, for merge.json */
} part;

static const char *json_string_or_null(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int read_part(const char *file, part *pt, char *msg, size_t msglen) {
    memset(pt, 0, sizeof *pt);
    pt->file = file;
    char *text = NULL;
    size_t len = 0;
    int rc = sweep_read_file(file, PART_TEXT_MAX, &text, &len, msg, msglen);
    if (rc != FB_OK) return rc;
    /* bounded (values per byte) and strict (no duplicate key, no text after it) before the
     * tree is built: the file's numbers choose the recommended point */
    sim_error se = {{0}, {0}, {0}};
    int crc = scn_json_check(text, len, &se);
    if (crc != FB_OK) {
        free(text);
        return sweep_fail(msg, msglen, crc == FB_ECAP ? FB_ECAP : FB_EINVAL, "%s: %s%s%s", file,
                          se.path, se.path[0] ? ": " : "", se.msg);
    }
    errno = 0; /* malloc sets ENOMEM when it fails (cJSON then gives up where it was) */
    pt->root = cJSON_ParseWithLength(text, len);
    pt->digest = sweep_hash(text, len);
    free(text);
    if (pt->root == NULL && errno == ENOMEM) /* checked valid above: only memory is left */
        return sweep_fail(msg, msglen, FB_ENOMEM,
                          "%s: out of memory building the JSON tree of %zu bytes", file, len);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(pt->root, "fusebox_sweep_part");
    if (pt->root == NULL || !cJSON_IsNumber(fmt))
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: not a sweep partial file", file);
    if (fmt->valueint != PART_FORMAT)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: partial file format %d, expected %d", file,
                          fmt->valueint, PART_FORMAT);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(pt->root, "shard");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(pt->root, "shards");
    pt->sweep = cJSON_GetObjectItemCaseSensitive(pt->root, "sweep");
    if (!cJSON_IsNumber(k) || !cJSON_IsNumber(n) || !cJSON_IsObject(pt->sweep) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(pt->root, "tasks")) ||
        !json_string_or_null(pt->root, "scenario_text") || k->valueint < 1 ||
        n->valueint < k->valueint)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: damaged sweep partial file", file);
    pt->shard = (uint32_t)k->valueint;
    pt->shards = (uint32_t)n->valueint;
    pt->interrupted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pt->root, "interrupted"));
    return FB_OK;
}

/* What a field of the definition that differs means, when it is not plain: "" else. */
static const char *differs_why(const char *key) {
    return strcmp(key, "scenario_fnv1a64") == 0 ? ": the scenario file changed" : "";
}

/*
 * The part's runs drew from this fusebox's random streams (its definition's "rng"; none before
 * they were named there): a merge writes this version's name over them, a resume adds this
 * version's runs to them.
 */
static int check_streams(const part *pt, const char *then, char *msg, size_t msglen) {
    const char *v = json_string_or_null(pt->sweep, "rng");
    if (v != NULL && strcmp(v, FB_RNG_VERSION) == 0) return FB_OK;
    return sweep_fail(msg, msglen, FB_EINVAL,
                      "%s was run with random streams %s, this fusebox draws %s, which gives "
                      "other numbers from a seed (docs/rng.md): %s",
                      pt->file, v ? v : "not named (an older fusebox)", FB_RNG_VERSION, then);
}

/* The same sweep: same scenario text, same definition, same number of shards. */
static int check_same_sweep(const part *a, const part *b, char *msg, size_t msglen) {
    const char *ha = json_string_or_null(a->sweep, "scenario_fnv1a64");
    const char *hb = json_string_or_null(b->sweep, "scenario_fnv1a64");
    if (!ha || !hb || strcmp(ha, hb) != 0)
        return sweep_fail(
            msg, msglen, FB_EINVAL,
            "%s and %s are sweeps of different scenario files (content hash %s vs %s)", a->file,
            b->file, ha ? ha : "?", hb ? hb : "?");
    for (const cJSON *x = a->sweep->child; x; x = x->next) {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b->sweep, x->string);
        if (y == NULL || !cJSON_Compare(x, y, true))
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "%s and %s are different sweeps ('%s' differs%s)", a->file, b->file,
                              x->string, differs_why(x->string));
    }
    if (cJSON_GetArraySize(a->sweep) != cJSON_GetArraySize(b->sweep))
        return sweep_fail(msg, msglen, FB_EINVAL, "%s and %s are different sweeps", a->file,
                          b->file);
    if (a->shards != b->shards)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s is shard %u of %u but %s is shard %u of %u",
                          a->file, a->shard, a->shards, b->file, b->shard, b->shards);
    if (a->shard == b->shard)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s and %s are both shard %u of %u", a->file,
                          b->file, a->shard, a->shards);
    return FB_OK;
}

static int args_from_part(const part *pt, const sweep_args *over, sweep_args *a, const char **sets,
                          const char **grids, uint64_t *seed, char *msg, size_t msglen) {
    memset(a, 0, sizeof *a);
    a->import = over ? over->import : NULL;
    const cJSON *s = pt->sweep, *an = cJSON_GetObjectItemCaseSensitive(pt->root, "analysis");
    a->scenario_file = json_string_or_null(s, "scenario");
    a->scenario_text = json_string_or_null(pt->root, "scenario_text");
    a->variant = json_string_or_null(s, "variant");
    const cJSON *jsets = cJSON_GetObjectItemCaseSensitive(s, "sets");
    const cJSON *jgrid = cJSON_GetObjectItemCaseSensitive(s, "grid");
    const char *js = json_string_or_null(s, "seed");
    const cJSON *jk = cJSON_GetObjectItemCaseSensitive(s, "seeds");
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(s, "sample");
    if (!a->scenario_file || !a->scenario_text || !a->variant || !cJSON_IsArray(jsets) ||
        !cJSON_IsArray(jgrid) || !js || parse_seed(js, seed) != FB_OK || !cJSON_IsNumber(jk) ||
        !cJSON_IsNumber(jn) || cJSON_GetArraySize(jsets) > SWEEP_SETS_MAX ||
        cJSON_GetArraySize(jgrid) > SWEEP_DIMS_MAX)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: damaged sweep definition", pt->file);
    a->scenario_len = strlen(a->scenario_text);
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, sweep_hash(a->scenario_text, a->scenario_len));
    const char *stored = json_string_or_null(s, "scenario_fnv1a64");
    if (!stored || strcmp(stored, hash) != 0)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: the scenario text does not match its hash",
                          pt->file);
    for (const cJSON *e = jsets->child; e; e = e->next) {
        if (!cJSON_IsString(e))
            return sweep_fail(msg, msglen, FB_EINVAL, "%s: damaged sets", pt->file);
        sets[a->set_count++] = e->valuestring;
    }
    for (const cJSON *e = jgrid->child; e; e = e->next) {
        if (!cJSON_IsString(e))
            return sweep_fail(msg, msglen, FB_EINVAL, "%s: damaged grid", pt->file);
        grids[a->grid_count++] = e->valuestring;
    }
    a->sets = sets;
    a->grids = grids;
    a->seed = seed;
    a->seeds = (uint32_t)jk->valueint;
    a->sample = (uint32_t)jn->valueint;
    a->objective = json_string_or_null(an, "objective");
    const cJSON *sense = cJSON_GetObjectItemCaseSensitive(an, "sense");
    a->sense = cJSON_IsNumber(sense) ? sense->valueint : 1;
    a->subject_to = json_string_or_null(an, "subject_to");
    a->strict = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(an, "strict"));
    a->heatmap = json_string_or_null(an, "heatmap");
    a->heatmap_dims = json_string_or_null(an, "heatmap_dims");
    if (over) {
        if (over->objective) {
            a->objective = over->objective;
            a->sense = over->sense;
        }
        if (over->subject_to) a->subject_to = over->subject_to;
        if (over->strict) a->strict = true;
        if (over->heatmap) a->heatmap = over->heatmap;
        if (over->heatmap_dims) a->heatmap_dims = over->heatmap_dims;
    }
    return FB_OK;
}

/* A metric's value as the partial file gives it: a number in its unit's range, or null (a
 * metric with no value, written as null); anything else is a damaged file, not a NaN that
 * moves the recommended point. */
static int check_value(const sweep *sw, size_t m, const cJSON *x, const char *file, size_t index,
                       char *msg, size_t msglen) {
    if (cJSON_IsNull(x)) return FB_OK;
    const char *name = sw->metrics[m];
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "%s: tasks[%zu].values[%zu] (%s): not a number or null", file, index, m,
                          name);
    /* fractions (a *_rate, a *_share, availability) in [0, 1], other ratios (amplification,
     * pods_mean), counts and booleans not below 0; money and durations may be (a cheaper
     * fallback's extra cost) */
    double d = x->valuedouble, lo = -INFINITY, hi = INFINITY;
    size_t nl = strlen(name);
    sim_unit u = sw->units[m];
    if (u == SIM_UNIT_COUNT || u == SIM_UNIT_RATIO || u == SIM_UNIT_BOOL) lo = 0;
    if (u == SIM_UNIT_BOOL || strcmp(name, "availability") == 0 ||
        (u == SIM_UNIT_RATIO && ((nl > 5 && strcmp(name + nl - 5, "_rate") == 0) ||
                                 (nl > 6 && strcmp(name + nl - 6, "_share") == 0))))
        hi = 1;
    if (d < lo || d > hi)
        return sweep_fail(msg, msglen, FB_EINVAL,
                          "%s: tasks[%zu].values[%zu] (%s): %.17g is out of range [%g, %g]", file,
                          index, m, name, d, lo, hi);
    return FB_OK;
}

/* whole: the part must hold every run of its shard (merge); else as many as it has (resume). */
static int load_tasks(sweep *sw, const part *pt, bool whole, uint64_t *loaded, char *msg,
                      size_t msglen) {
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(pt->root, "metrics");
    if ((size_t)cJSON_GetArraySize(metrics) != sw->metric_count)
        return sweep_fail(msg, msglen, FB_EINVAL, "%s: written by another version (metrics differ)",
                          pt->file);
    size_t m = 0;
    for (const cJSON *e = metrics->child; e; e = e->next, m++)
        if (!cJSON_IsString(e) || strcmp(e->valuestring, sw->metrics[m]) != 0)
            return sweep_fail(msg, msglen, FB_EINVAL,
                              "%s: written by another version (metrics differ)", pt->file);
    double *v = malloc(sw->metric_count * sizeof *v);
    if (v == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    int rc = FB_OK;
    uint64_t count = 0;
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(pt->root, "tasks");
    size_t index = 0;
    for (const cJSON *e = tasks->child; e && rc == FB_OK; e = e->next, index++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "task");
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(e, "ok");
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(e, "values");
        if (!cJSON_IsNumber(t) || !cJSON_IsBool(ok) || !cJSON_IsArray(vals) ||
            (size_t)cJSON_GetArraySize(vals) != sw->metric_count || t->valuedouble < 0 ||
            t->valuedouble >= (double)sw->tasks) {
            rc = sweep_fail(msg, msglen, FB_EINVAL, "%s: damaged task", pt->file);
            break;
        }
        uint64_t task = (uint64_t)t->valuedouble;
        if (!sweep_in_shard(task, pt->shard, pt->shards))
            rc = sweep_fail(msg, msglen, FB_EINVAL,
                            "%s: run %" PRIu64 " does not belong to shard %u/%u", pt->file, task,
                            pt->shard, pt->shards);
        else if (sw->state[task] != 0)
            rc = sweep_fail(msg, msglen, FB_EINVAL, "%s: run %" PRIu64 " is listed twice", pt->file,
                            task);
        if (rc != FB_OK) break;
        m = 0;
        for (const cJSON *x = vals->child; x && rc == FB_OK; x = x->next, m++) {
            v[m] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
            rc = check_value(sw, m, x, pt->file, index, msg, msglen);
        }
        if (rc != FB_OK) break;
        sweep_set_result(sw, task, cJSON_IsTrue(ok) ? FB_OK : FB_ESTATE, v,
                         json_string_or_null(e, "error"));
        count++;
    }
    free(v);
    if (loaded) *loaded = count;
    uint64_t expected = 0;
    for (uint64_t t = 0; t < sw->tasks; t++) expected += sweep_in_shard(t, pt->shard, pt->shards);
    if (rc == FB_OK && whole && pt->interrupted)
        rc = sweep_fail(msg, msglen, FB_EINVAL,
                        "%s: an interrupted sweep's partial file (%" PRIu64 " of %" PRIu64
                        " runs); finish it with the same fusebox sweep command and --resume",
                        pt->file, count, expected);
    else if (rc == FB_OK && whole && count != expected)
        rc =
            sweep_fail(msg, msglen, FB_EINVAL,
                       "%s: shard %u/%u holds %" PRIu64 " of its %" PRIu64 " runs (did it finish?)",
                       pt->file, pt->shard, pt->shards, count, expected);
    return rc;
}

/* merge.json: what the merged folder was produced from, the parts' digests in shard order. */
static int make_manifest(sweep *sw, const part *parts, size_t n, char *msg, size_t msglen) {
    size_t len = 0;
    FILE *f = open_memstream(&sw->manifest, &len);
    if (f == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_u64(&w, "fusebox_merge", PART_FORMAT);
    util_json_open(&w, "parts", '[', UTIL_JSON_LINES);
    for (uint32_t k = 1; k <= parts[0].shards; k++)
        for (size_t i = 0; i < n; i++) {
            if (parts[i].shard != k) continue;
            char digest[17];
            snprintf(digest, sizeof digest, "%016" PRIx64, parts[i].digest);
            util_json_open(&w, NULL, '{', UTIL_JSON_INLINE);
            util_json_u64(&w, "shard", k);
            util_json_u64(&w, "shards", parts[i].shards);
            util_json_str(&w, "fnv1a64", digest);
            util_json_close(&w);
        }
    util_json_close(&w);
    util_json_close(&w);
    fputc('\n', f);
    if (fclose(f) != 0 || sw->manifest == NULL)
        return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    return FB_OK;
}

int sweep_merge(const char *const *files, size_t n, const sweep_args *analysis, sweep **out,
                char *msg, size_t msglen) {
    *out = NULL;
    if (n == 0) return sweep_fail(msg, msglen, FB_EINVAL, "no partial files given");
    part *parts = calloc(n, sizeof *parts);
    if (parts == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    sweep *sw = NULL;
    int rc = FB_OK;
    for (size_t i = 0; i < n && rc == FB_OK; i++) {
        rc = read_part(files[i], &parts[i], msg, msglen);
        if (rc == FB_OK)
            rc = check_streams(&parts[i], "run that shard again with this fusebox", msg, msglen);
        for (size_t j = 0; j < i && rc == FB_OK; j++)
            rc = check_same_sweep(&parts[j], &parts[i], msg, msglen);
    }
    if (rc == FB_OK && n != parts[0].shards) {
        char missing[512] = "";
        for (uint32_t k = 1; k <= parts[0].shards && strlen(missing) < 400; k++) {
            bool have = false;
            for (size_t i = 0; i < n; i++) have = have || parts[i].shard == k;
            if (!have)
                snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%u",
                         missing[0] ? ", " : "", k);
        }
        rc = sweep_fail(msg, msglen, FB_EINVAL, "the sweep has %u shards; missing shard%s %s of %u",
                        parts[0].shards, strchr(missing, ',') ? "s" : "", missing, parts[0].shards);
    }
    /* shard 1's analysis options, whatever the order of the files */
    size_t first = 0;
    for (size_t i = 0; i < n && rc == FB_OK; i++)
        if (parts[i].shard < parts[first].shard) first = i;
    if (rc == FB_OK) {
        sweep_args a;
        const char *sets[SWEEP_SETS_MAX], *grids[SWEEP_DIMS_MAX];
        uint64_t seed;
        rc = args_from_part(&parts[first], analysis, &a, sets, grids, &seed, msg, msglen);
        if (rc == FB_OK) rc = sweep_create(&a, &sw, msg, msglen);
    }
    for (size_t i = 0; i < n && rc == FB_OK; i++)
        rc = load_tasks(sw, &parts[i], true, NULL, msg, msglen);
    if (rc == FB_OK) rc = make_manifest(sw, parts, n, msg, msglen);
    for (size_t i = 0; i < n; i++) cJSON_Delete(parts[i].root);
    free(parts);
    if (rc != FB_OK) {
        sweep_destroy(sw);
        return rc;
    }
    *out = sw;
    return FB_OK;
}

uint64_t sweep_result_count(const sweep *sw, uint32_t k, uint32_t n) {
    uint64_t c = 0;
    for (uint64_t t = 0; t < sw->tasks; t++)
        c += sw->state[t] != 0 && (n == 0 || sweep_in_shard(t, k, n));
    return c;
}

bool sweep_has_result(const sweep *sw, uint64_t task) {
    return task < sw->tasks && sw->state[task] != 0;
}

/* The partial file's definition against this sweep's: the first field that differs. */
static int check_definition(const sweep *sw, const part *pt, char *msg, size_t msglen) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    write_definition(&w, sw);
    util_json_close(&w);
    fclose(f);
    cJSON *mine = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(mine, "sweep");
    int rc = def ? FB_OK : sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    for (const cJSON *x = def ? def->child : NULL; x && rc == FB_OK; x = x->next) {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(pt->sweep, x->string);
        if (y == NULL || !cJSON_Compare(x, y, true))
            rc = sweep_fail(msg, msglen, FB_EINVAL,
                            "%s is from a different sweep ('%s' differs%s); run it without "
                            "--resume to start again",
                            pt->file, x->string, differs_why(x->string));
    }
    cJSON_Delete(mine);
    return rc;
}

int sweep_resume(sweep *sw, const char *file, uint32_t k, uint32_t n, uint64_t *loaded, char *msg,
                 size_t msglen) {
    part pt;
    *loaded = 0;
    int rc = read_part(file, &pt, msg, msglen);
    const char *version = rc == FB_OK ? json_string_or_null(pt.root, "fusebox") : NULL;
    if (rc == FB_OK && (version == NULL || strcmp(version, FB_VERSION) != 0))
        rc = sweep_fail(msg, msglen, FB_EINVAL,
                        "%s was written by fusebox %s, this is %s: run the sweep without "
                        "--resume",
                        file, version ? version : "?", FB_VERSION);
    if (rc == FB_OK && (pt.shard != k || pt.shards != n))
        rc = sweep_fail(msg, msglen, FB_EINVAL, "%s is shard %u of %u, not %u of %u", file,
                        pt.shard, pt.shards, k, n);
    if (rc == FB_OK && !pt.interrupted)
        rc =
            sweep_fail(msg, msglen, FB_EINVAL,
                       "%s is a finished shard, not an interrupted sweep: nothing to resume", file);
    if (rc == FB_OK) rc = check_streams(&pt, "run the sweep without --resume", msg, msglen);
    if (rc == FB_OK) rc = check_definition(sw, &pt, msg, msglen);
    if (rc == FB_OK) rc = load_tasks(sw, &pt, false, loaded, msg, msglen);
    cJSON_Delete(pt.root);
    return rc;
}

sweep_folder sweep_folder_kind(const sweep *sw, const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    FILE *f = fopen(path, "rb");
    if (f == NULL) return SWEEP_FOLDER_EMPTY;
    fclose(f);
    if (sw->manifest == NULL) return SWEEP_FOLDER_OTHER;
    snprintf(path, sizeof path, "%s/merge.json", dir);
    char *text = NULL, m[256];
    size_t len = 0;
    if (sweep_read_file(path, 1 << 20, &text, &len, m, sizeof m) != FB_OK)
        return SWEEP_FOLDER_OTHER;
    bool same = len == strlen(sw->manifest) && memcmp(text, sw->manifest, len) == 0;
    free(text);
    return same ? SWEEP_FOLDER_SAME : SWEEP_FOLDER_OTHER;
}
