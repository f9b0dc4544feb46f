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

#include "core/version.h"
#include "reports/json.h"

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

static void write_runs_csv(FILE *f, const sweep *sw) {
    fputs("point,seed", f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        fputc(',', f);
        csv_field(f, sw->dims[d].key);
    }
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
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        fputc(',', f);
        csv_field(f, sw->dims[d].key);
    }
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

void sweep_json_str(FILE *f, const char *s) {
    rep_json_string(f, s);
}

static void json_num(FILE *f, double v, sim_unit unit, bool mean) {
    char buf[64];
    format_value(buf, sizeof buf, v, unit, mean);
    fputs(buf[0] ? buf : "null", f);
}

/* A swept value as JSON: itself when it is JSON (0.5, true, {...}), else a string. */
static void json_setting(FILE *f, const char *v) {
    cJSON *j = cJSON_ParseWithOpts(v, NULL, 1);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    if (text)
        fputs(text, f);
    else
        sweep_json_str(f, v);
    cJSON_free(text);
    cJSON_Delete(j);
}

static void json_settings(FILE *f, const sweep *sw, uint64_t p) {
    fputc('{', f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char v[SWEEP_VALUE_MAX];
        sweep_point_value(sw, p, d, v, sizeof v);
        fputs(d ? ", " : "", f);
        sweep_json_str(f, sw->dims[d].key);
        fputs(": ", f);
        json_setting(f, v);
    }
    fputc('}', f);
}

static void json_stat(FILE *f, const sweep_stat *st, sim_unit unit) {
    fputs("{\"mean\": ", f);
    json_num(f, st->mean, unit, true);
    fputs(", \"sd\": ", f);
    json_num(f, st->sd, unit, true);
    fputs(", \"ci95\": [", f);
    json_num(f, st->ci_low, unit, true);
    fputs(", ", f);
    json_num(f, st->ci_high, unit, true);
    fputs("]}", f);
}

static void json_point_or_null(FILE *f, int64_t p) {
    if (p < 0)
        fputs("null", f);
    else
        fprintf(f, "%" PRId64, p);
}

static void write_dims_json(FILE *f, const sweep *sw) {
    fputs("  \"dimensions\": [", f);
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        const sweep_dim *dim = &sw->dims[d];
        fputs(d ? ",\n    {\"key\": " : "\n    {\"key\": ", f);
        sweep_json_str(f, dim->key);
        fputs(", \"path\": ", f);
        sweep_json_str(f, sw->paths[d]);
        if (dim->kind == SWEEP_LIST) {
            fputs(", \"values\": [", f);
            for (uint32_t v = 0; v < dim->value_count; v++) {
                fputs(v ? ", " : "", f);
                json_setting(f, dim->values[v]);
            }
            fputs("]}", f);
        } else {
            fprintf(f,
                    ", \"range\": {\"low\": %.17g, \"high\": %.17g, \"type\": \"%s\", "
                    "\"scale\": \"%s\"}}",
                    dim->lo, dim->hi,
                    dim->type == SWEEP_DURATION  ? "duration_us"
                    : dim->type == SWEEP_INTEGER ? "integer"
                                                 : "number",
                    dim->log ? "log" : "linear");
        }
    }
    fputs("\n  ],\n", f);
}

static void write_objective_json(FILE *f, const sweep *sw) {
    fputs("  \"objective\": ", f);
    if (!sw->objective[0]) {
        fputs("null,\n", f);
        return;
    }
    fputs("{\"metric\": ", f);
    sweep_json_str(f, sw->objective);
    fprintf(f, ", \"sense\": \"%s\", \"judged_on\": \"%s\", \"subject_to\": [",
            sw->sense < 0 ? "maximize" : "minimize", sw->strict ? "ci95" : "mean");
    for (size_t c = 0; c < sw->con_count; c++) {
        fputs(c ? ", " : "", f);
        sweep_json_str(f, sw->cons[c].text);
    }
    fprintf(f, "], \"feasible_points\": %" PRIu64 ", \"best\": ", sw->feasible_count);
    json_point_or_null(f, sw->best);
    fputs(", \"runner_up\": ", f);
    json_point_or_null(f, sw->runner_up);
    fputs(", \"closest_infeasible\": ", f);
    json_point_or_null(f, sw->best < 0 ? sw->closest : -1);
    fputs("},\n", f);
}

static void write_json(FILE *f, const sweep *sw) {
    fputs("{\n  \"fusebox\": ", f);
    sweep_json_str(f, FB_VERSION);
    fputs(",\n  \"scenario\": ", f);
    sweep_json_str(f, sw->base->name);
    fputs(",\n  \"file\": ", f);
    sweep_json_str(f, sw->file);
    fprintf(f, ",\n  \"scenario_fnv1a64\": \"%016" PRIx64 "\",\n  \"variant\": ", sw->hash);
    sweep_json_str(f, sw->variant);
    fputs(",\n  \"sets\": [", f);
    for (size_t i = 0; i < sw->set_count; i++) {
        fputs(i ? ", " : "", f);
        sweep_json_str(f, sw->sets[i]);
    }
    fprintf(f, "],\n  \"design\": \"%s\",\n  \"points\": %" PRIu64 ",\n  \"seeds\": [",
            sw->sample ? "latin_hypercube" : "full_factorial", sw->points);
    for (uint32_t s = 0; s < sw->seeds; s++) fprintf(f, "%s%" PRIu64, s ? ", " : "", sw->seed + s);
    fprintf(f, "],\n  \"runs\": %" PRIu64 ",\n  \"failed_runs\": %" PRIu64 ",\n", sw->tasks,
            sw->failed);
    write_dims_json(f, sw);
    write_objective_json(f, sw);
    fputs("  \"pareto\": {\"minimised\": [\"blast_radius\", \"cost_usd\", \"latency_p99\"], "
          "\"points\": [",
          f);
    bool first = true;
    for (uint64_t p = 0; p < sw->points; p++)
        if (sw->pareto[p]) {
            fprintf(f, "%s%" PRIu64, first ? "" : ", ", p);
            first = false;
        }
    fputs("]},\n  \"results\": [", f);
    for (uint64_t p = 0; p < sw->points; p++) {
        fprintf(f, "%s\n    {\"point\": %" PRIu64 ", \"settings\": ", p ? "," : "", p);
        json_settings(f, sw, p);
        fprintf(f, ", \"runs\": %u, \"feasible\": %s, \"pareto\": %s,\n     \"metrics\": {",
                sw->runs_ok[p], sw->feasible[p] ? "true" : "false",
                sw->pareto[p] ? "true" : "false");
        for (size_t m = 0; m < sw->metric_count; m++) {
            sweep_stat st;
            sweep_point_stat(sw, p, (int)m, &st);
            fputs(m ? ",\n       " : "\n       ", f);
            sweep_json_str(f, sw->metrics[m]);
            fputs(": ", f);
            json_stat(f, &st, sw->units[m]);
        }
        fputs("}}", f);
    }
    fputs("\n  ]\n}\n", f);
}

static FILE *open_in(const char *dir, const char *name, char *msg, size_t msglen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) sweep_fail(msg, msglen, FB_EIO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, char *msg, size_t msglen) {
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return sweep_fail(msg, msglen, FB_EIO, "cannot write %s/%s: %s", dir, name,
                          strerror(errno));
    return FB_OK;
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
        int rc = close_checked(f, dir, names[i], msg, msglen);
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
