/*
 * output.c - the sweep's files: sweep.csv (one row per run), sweep-points.csv
 * (per point, with intervals) and sweep.json, in fixed number formats, then
 * the charts and sweep.html. See docs/sweeps.md.
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

/* Fixed formats: counts as integers (means with 3 decimals), durations in seconds. */
static void format_value(char *buf, size_t len, double v, sim_unit unit, bool mean) {
    if (isnan(v) || isinf(v)) {
        buf[0] = '\0';
        return;
    }
    switch (unit) {
    case SIM_UNIT_COUNT:
    case SIM_UNIT_BOOL:
        snprintf(buf, len, mean ? "%.3f" : "%.0f", v);
        break;
    case SIM_UNIT_US:
        snprintf(buf, len, "%.6f", v / 1e6);
        break;
    case SIM_UNIT_USD:
        snprintf(buf, len, "%.4f", v);
        break;
    default:
        snprintf(buf, len, "%.6f", v);
        break;
    }
    if (strcmp(buf, "-0") == 0 || strncmp(buf, "-0.", 3) == 0) {
        /* -0.000000 and 0.000000 are the same number: print one of them */
        bool zero = true;
        for (const char *c = buf + 1; *c; c++) zero = zero && (*c == '0' || *c == '.');
        if (zero) memmove(buf, buf + 1, strlen(buf));
    }
}

static void csv_field(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_dim_values(FILE *f, const sweep *sw, uint64_t p) {
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        fputc(',', f);
        csv_field(f, v);
    }
}

static void csv_dim_keys(FILE *f, const sweep *sw) {
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        fputc(',', f);
        csv_field(f, sw->dims[d].key);
    }
}

static void write_runs_csv(FILE *f, const sweep *sw) {
    fputs("point,seed", f);
    csv_dim_keys(f, sw);
    fputs(",complete", f);
    for (size_t m = 0; m < sw->metric_count; m++) fprintf(f, ",%s", sw->metrics[m]);
    fputc('\n', f);
    for (uint64_t t = 0; t < sw->tasks; t++) {
        uint64_t p = t / sw->seeds;
        fprintf(f, "%" PRIu64 ",%" PRIu64, p, sw->seed + t % sw->seeds);
        csv_dim_values(f, sw, p);
        fprintf(f, ",%d", sw->state[t] == 1);
        for (size_t m = 0; m < sw->metric_count; m++) {
            char v[64];
            format_value(v, sizeof v, sw->values[t * sw->metric_count + m], sw->units[m], false);
            fprintf(f, ",%s", v);
        }
        fputc('\n', f);
    }
}

static void write_points_csv(FILE *f, const sweep *sw) {
    fputs("point", f);
    csv_dim_keys(f, sw);
    fputs(",runs,feasible,pareto", f);
    for (size_t m = 0; m < sw->metric_count; m++)
        fprintf(f, ",%s,%s_ci_low,%s_ci_high", sw->metrics[m], sw->metrics[m], sw->metrics[m]);
    fputc('\n', f);
    for (uint64_t p = 0; p < sw->points; p++) {
        fprintf(f, "%" PRIu64, p);
        csv_dim_values(f, sw, p);
        fprintf(f, ",%u,%d,%d", sw->runs_ok[p], sw->feasible[p], sw->pareto[p]);
        for (size_t m = 0; m < sw->metric_count; m++) {
            sweep_stat st;
            sweep_point_stat(sw, p, (int)m, &st);
            char a[64], b[64], c[64];
            format_value(a, sizeof a, st.mean, sw->units[m], true);
            format_value(b, sizeof b, st.ci_low, sw->units[m], true);
            format_value(c, sizeof c, st.ci_high, sw->units[m], true);
            fprintf(f, ",%s,%s,%s", a, b, c);
        }
        fputc('\n', f);
    }
}

/* A count, mean or bound in the fixed formats of the CSV files (null when there is none). */
static void json_value(util_json *w, const char *key, double v, sim_unit unit) {
    char buf[64];
    format_value(buf, sizeof buf, v, unit, true);
    util_json_raw(w, key, buf[0] ? buf : "null");
}

/* A swept value as JSON: itself when it is JSON (0.5, true, {...}), else a string. */
static void json_setting(util_json *w, const char *key, const char *v) {
    cJSON *j = cJSON_ParseWithOpts(v, NULL, 1);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    if (text)
        util_json_raw(w, key, text);
    else
        util_json_str(w, key, v);
    cJSON_free(text);
    cJSON_Delete(j);
}

static void json_point_or_null(util_json *w, const char *key, int64_t p) {
    if (p < 0)
        util_json_null(w, key);
    else
        util_json_i64(w, key, p);
}

static void write_dims_json(util_json *w, const sweep *sw) {
    util_json_open(w, "dimensions", '[', UTIL_JSON_LINES);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        const sweep_dim *dim = &sw->dims[d];
        util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
        util_json_str(w, "key", dim->key);
        util_json_str(w, "path", sw->paths[d]);
        if (dim->kind == SWEEP_LIST) {
            util_json_open(w, "values", '[', UTIL_JSON_INLINE);
            for (uint32_t v = 0; v < dim->value_count; v++) json_setting(w, NULL, dim->values[v]);
            util_json_close(w);
        } else {
            util_json_open(w, "range", '{', UTIL_JSON_INLINE);
            util_json_exact(w, "low", dim->lo);
            util_json_exact(w, "high", dim->hi);
            util_json_str(w, "type",
                          dim->type == SWEEP_DURATION  ? "duration_us"
                          : dim->type == SWEEP_INTEGER ? "integer"
                                                       : "number");
            util_json_str(w, "scale", dim->log ? "log" : "linear");
            util_json_close(w);
        }
        util_json_close(w);
    }
    util_json_close(w);
}

static void write_objective_json(util_json *w, const sweep *sw) {
    if (!sw->objective[0]) {
        util_json_null(w, "objective");
        return;
    }
    util_json_open(w, "objective", '{', UTIL_JSON_INLINE);
    util_json_str(w, "metric", sw->objective);
    util_json_str(w, "sense", sw->sense < 0 ? "maximize" : "minimize");
    util_json_str(w, "judged_on", sw->strict ? "ci95" : "mean");
    util_json_open(w, "subject_to", '[', UTIL_JSON_INLINE);
    for (size_t c = 0; c < sw->con_count; c++) util_json_str(w, NULL, sw->cons[c].text);
    util_json_close(w);
    util_json_u64(w, "feasible_points", sw->feasible_count);
    json_point_or_null(w, "best", sw->best);
    json_point_or_null(w, "runner_up", sw->runner_up);
    json_point_or_null(w, "closest_infeasible", sw->best < 0 ? sw->closest : -1);
    util_json_close(w);
}

static void write_pareto_json(util_json *w, const sweep *sw) {
    util_json_open(w, "pareto", '{', UTIL_JSON_INLINE);
    util_json_open(w, "minimised", '[', UTIL_JSON_INLINE);
    for (size_t k = 0; k < 3; k++) util_json_str(w, NULL, sweep_pareto_metrics[k]);
    util_json_close(w);
    util_json_open(w, "points", '[', UTIL_JSON_INLINE);
    for (uint64_t p = 0; p < sw->points; p++)
        if (sw->pareto[p]) util_json_u64(w, NULL, p);
    util_json_close(w);
    util_json_close(w);
}

/* One point: its settings and flags on a line, then a line per metric. */
static void write_result_json(util_json *w, const sweep *sw, uint64_t p) {
    util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
    util_json_u64(w, "point", p);
    util_json_open(w, "settings", '{', UTIL_JSON_INLINE);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        json_setting(w, sw->dims[d].key, v);
    }
    util_json_close(w);
    util_json_u64(w, "runs", sw->runs_ok[p]);
    util_json_bool(w, "feasible", sw->feasible[p]);
    util_json_bool(w, "pareto", sw->pareto[p]);
    util_json_wrap(w, 5);
    util_json_open(w, "metrics", '{', UTIL_JSON_INLINE);
    for (size_t m = 0; m < sw->metric_count; m++) {
        sweep_stat st;
        sweep_point_stat(sw, p, (int)m, &st);
        util_json_wrap(w, 7);
        util_json_open(w, sw->metrics[m], '{', UTIL_JSON_INLINE);
        json_value(w, "mean", st.mean, sw->units[m]);
        json_value(w, "sd", st.sd, sw->units[m]);
        util_json_open(w, "ci95", '[', UTIL_JSON_INLINE);
        json_value(w, NULL, st.ci_low, sw->units[m]);
        json_value(w, NULL, st.ci_high, sw->units[m]);
        util_json_close(w);
        util_json_close(w);
    }
    util_json_close(w);
    util_json_close(w);
}

static void write_json(FILE *f, const sweep *sw) {
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_str(&w, "fusebox", FB_VERSION);
    util_json_str(&w, "scenario", sw->base->name);
    util_json_str(&w, "file", sw->file);
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, sw->hash);
    util_json_str(&w, "scenario_fnv1a64", hash);
    util_json_str(&w, "variant", sw->variant);
    util_json_open(&w, "sets", '[', UTIL_JSON_INLINE);
    for (size_t i = 0; i < sw->set_count; i++) util_json_str(&w, NULL, sw->sets[i]);
    util_json_close(&w);
    util_json_str(&w, "design", sw->sample ? "latin_hypercube" : "full_factorial");
    util_json_u64(&w, "points", sw->points);
    util_json_open(&w, "seeds", '[', UTIL_JSON_INLINE);
    for (uint32_t s = 0; s < sw->seeds; s++) util_json_u64(&w, NULL, sw->seed + s);
    util_json_close(&w);
    util_json_str(&w, "rng", FB_RNG_VERSION);
    util_json_u64(&w, "runs", sw->tasks);
    util_json_u64(&w, "failed_runs", sw->failed);
    write_dims_json(&w, sw);
    write_objective_json(&w, sw);
    write_pareto_json(&w, sw);
    util_json_open(&w, "results", '[', UTIL_JSON_LINES);
    for (uint64_t p = 0; p < sw->points; p++) write_result_json(&w, sw, p);
    util_json_close(&w);
    util_json_close(&w);
    fputc('\n', f);
}

static FILE *open_in(const char *dir, const char *name, char *msg, size_t msglen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

int sweep_write_outputs(sweep *sw, const char *dir, bool charts, char *msg, size_t msglen) {
    if (!sw->analysed) {
        int rc = sweep_analyse(sw);
        if (rc != FB_OK) return sweep_fail(msg, msglen, rc, "some runs have no result");
    }
    static const char *const names[3] = {"sweep.csv", "sweep-points.csv", "sweep.json"};
    for (int i = 0; i < 3; i++) {
        FILE *f = open_in(dir, names[i], msg, msglen);
        if (f == NULL) return FB_EIO;
        if (i == 0)
            write_runs_csv(f, sw);
        else if (i == 1)
            write_points_csv(f, sw);
        else
            write_json(f, sw);
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int rc = sweep_close_checked(f, path, msg, msglen);
        if (rc != FB_OK) return rc;
    }
    if (!charts) return FB_OK;
    /* without gnuplot the page is still written, saying why it has no charts */
    int rc = sweep_write_charts(sw, dir, msg, msglen);
    if (rc != FB_OK && rc != FB_ENOTFOUND) return rc;
    char note[512];
    snprintf(note, sizeof note, "%s", rc == FB_ENOTFOUND ? msg : "");
    char *answer = NULL;
    size_t alen = 0;
    FILE *mem = open_memstream(&answer, &alen);
    if (mem == NULL) return sweep_fail(msg, msglen, FB_ENOMEM, "out of memory");
    sweep_write_answer(mem, sw);
    fclose(mem);
    int hrc = sweep_write_html(sw, dir, answer ? answer : "", note[0] ? note : NULL, msg, msglen);
    free(answer);
    if (hrc != FB_OK) return hrc;
    if (rc != FB_OK) snprintf(msg, msglen, "%s", note);
    return rc;
}
