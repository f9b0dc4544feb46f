/*
 * answer.c - the answer for people: the best point with its metrics and
 * their intervals, its policy block and the command that runs it, and how
 * far the runner-up is behind (paired over the seeds); or, without an
 * objective, the Pareto front.
 */
#include "sweep/sweepint.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "reports/report.h"
#include "scenario/preset.h"
#include "util/json.h"

void sweep_format_human(char *buf, size_t len, double v, sim_unit unit) {
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return;
    }
    switch (unit) {
    case SIM_UNIT_US:
        rep_format_duration(buf, len, v);
        break;
    case SIM_UNIT_USD:
        snprintf(buf, len, v < 0 ? "-$%.2f" : "$%.2f", fabs(v));
        break;
    case SIM_UNIT_RATIO:
        snprintf(buf, len, "%.6f", v);
        break;
    default:
        snprintf(buf, len, v == floor(v) ? "%.0f" : "%.1f", v);
        break;
    }
}

static void answer_metric(FILE *f, const sweep *sw, uint64_t p, const char *metric) {
    int m = sweep_metric_index(sw, metric);
    if (m < 0) return;
    sweep_stat st;
    sweep_point_stat(sw, p, m, &st);
    char mean[64], lo[64], hi[64];
    sweep_format_human(mean, sizeof mean, st.mean, sw->units[m]);
    sweep_format_human(lo, sizeof lo, st.ci_low, sw->units[m]);
    sweep_format_human(hi, sizeof hi, st.ci_high, sw->units[m]);
    fprintf(f, "  %-22s %14s", metric, mean);
    if (st.n >= 2)
        fprintf(f, "   95%% CI [%s, %s]", lo, hi);
    else
        fputs("   (one run: no CI)", f);
    for (size_t c = 0; c < sw->con_count; c++) {
        const sweep_constraint *k = &sw->cons[c];
        if (strcmp(k->metric, metric) != 0) continue;
        bool ok = sweep_constraint_holds(k, sweep_judged_value(sw, &st, k));
        bool sure = st.n >= 2 && sweep_constraint_holds(k, st.ci_low) &&
                    sweep_constraint_holds(k, st.ci_high);
        fprintf(f, "   %s: %s", k->text,
                !ok                ? (sw->strict && sweep_constraint_holds(k, st.mean)
                                          ? "VIOLATED by the CI (--strict)"
                                          : "VIOLATED")
                : sure || st.n < 2 ? "ok"
                                   : "ok on the mean; the CI crosses it");
    }
    fputc('\n', f);
}

static void answer_metrics(FILE *f, const sweep *sw, uint64_t p) {
    const char *shown[SWEEP_CONSTRAINTS_MAX + 8];
    size_t n = 0;
    if (sw->objective[0]) shown[n++] = sw->objective;
    for (size_t c = 0; c < sw->con_count; c++) shown[n++] = sw->cons[c].metric;
    static const char *const extra[] = {"success_rate", "blast_radius", "cost_usd", "latency_p99"};
    for (size_t e = 0; e < 4; e++) shown[n++] = extra[e];
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i; j++) dup = dup || strcmp(shown[i], shown[j]) == 0;
        if (!dup) answer_metric(f, sw, p, shown[i]);
    }
}

static void print_shell_quoted(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* The variant's policy (variants.NAME, or policy) at point p, with 2-space indents. */
void sweep_answer_policy(FILE *f, const sweep *sw, uint64_t p) {
    sim_scenario *sc = NULL;
    sim_error err;
    if (sweep_load_point(sw, p, NULL, &sc, &err) != FB_OK) return;
    const cJSON *root = sc->json;
    const cJSON *pol = sw->has_variants
                           ? cJSON_GetObjectItemCaseSensitive(
                                 cJSON_GetObjectItemCaseSensitive(root, "variants"), sw->variant)
                           : cJSON_GetObjectItemCaseSensitive(root, "policy");
    cJSON *empty = pol ? NULL : cJSON_CreateObject();
    char *pretty = cJSON_Print(pol ? pol : empty);
    char *line = cJSON_PrintUnformatted(pol ? pol : empty);
    char where[SIM_NAME_MAX + 16];
    if (sw->has_variants)
        snprintf(where, sizeof where, "variants.%s", sw->variant);
    else
        snprintf(where, sizeof where, "policy");
    fprintf(f, "\npolicy (the %s entry of %s, with the best point's values):\n", where, sw->file);
    util_out o = util_out_file(f);
    util_json_spaced(&o, pretty ? pretty : "{}");
    fputs("\nor run it: fusebox run ", f);
    fputs(sw->file, f);
    for (size_t i = 0; i < sw->set_count; i++) {
        fputs(" --set ", f);
        print_shell_quoted(f, sw->sets[i]);
    }
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        if (!sw->absolute[d]) continue;
        char v[SWEEP_VALUE_MAX], set[SWEEP_PATH_MAX + SWEEP_VALUE_MAX + 2];
        sweep_point_value(sw, p, d, v, sizeof v);
        snprintf(set, sizeof set, "%s=%s", sw->paths[d], v);
        fputs(" --set ", f);
        print_shell_quoted(f, set);
    }
    fprintf(f, " --set %s='", where);
    for (const char *c = line ? line : "{}"; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", f);
        else
            fputc(*c, f);
    }
    fputs("'\n", f);
    cJSON_free(pretty);
    cJSON_free(line);
    cJSON_Delete(empty);
    scn_free(sc);
}

/* The preset layer a dimension's key addresses (layers.NAME.KEY, gateway.layers.NAME.KEY), and
   KEY; NULL when it addresses none. */
static const sim_layer *dim_layer(const sweep *sw, uint32_t d, const char **param) {
    char pre[SIM_NAME_MAX + 16];
    snprintf(pre, sizeof pre, sw->has_variants ? "variants.%s." : "policy.", sw->variant);
    const char *k = sw->paths[d];
    if (strncmp(k, pre, strlen(pre)) != 0) return NULL;
    k += strlen(pre);
    if (strncmp(k, "gateway.", 8) == 0) k += 8;
    if (strncmp(k, "layers.", 7) != 0) return NULL;
    k += 7;
    const char *dot = strchr(k, '.');
    int v = scn_variant(sw->base, sw->variant);
    if (dot == NULL || v < 0) return NULL;
    const sim_policy *pol = &sw->base->variants[v];
    for (uint32_t i = 0; i < pol->layer_count; i++) {
        const sim_layer *L = &pol->layers[i];
        if (L->preset && strlen(L->name) == (size_t)(dot - k) &&
            strncmp(L->name, k, (size_t)(dot - k)) == 0) {
            *param = dot + 1;
            return L;
        }
    }
    return NULL;
}

bool sweep_dim_rule(const sweep *sw, uint32_t d, char *why, size_t len) {
    const char *param = NULL;
    const sim_layer *L = dim_layer(sw, d, &param);
    return L && scn_preset_inert(L, sw->base, param, why, len) == 1;
}

/*
 * "KEY has no effect" for each such dimension, with the library's rule that explains it where
 * one does; how many there are. A sample cannot see it (no two points differ in one dimension
 * only): there the rule alone says it.
 */
/* none[d]: 0 it has an effect, NONE_SAME no effect (same results or the rule), NONE_NOISE within
 * the seeds' noise. */
enum { NONE_SAME = 1, NONE_NOISE = 2 };

static uint32_t answer_no_effect(FILE *f, const sweep *sw, uint8_t *none) {
    uint32_t n = 0;
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char why[1024];
        bool seen = sweep_dim_no_effect(sw, d);
        bool rule = (seen || sw->sample > 0) && sweep_dim_rule(sw, d, why, sizeof why);
        uint64_t pairs = 0;
        bool noise = !seen && !rule && sweep_dim_within_noise(sw, d, &pairs);
        none[d] = seen || rule ? NONE_SAME : noise ? NONE_NOISE : 0;
        if (!none[d]) continue;
        if (noise) {
            rule = sweep_dim_rule(sw, d, why, sizeof why);
            fprintf(f,
                    "%s%s has no measurable effect on %s in this scenario: each of its %" PRIu64
                    " changes, the other settings held, stayed within the %u seeds' noise (paired "
                    "95%% CI holds 0)\n",
                    n++ ? "" : "\n", sw->dims[d].key, sw->objective, pairs, sw->seeds);
        } else if (seen)
            fprintf(f,
                    "%s%s has no effect in this scenario: each of its %u values gave the same "
                    "results, seed for seed, whatever the other settings\n",
                    n++ ? "" : "\n", sw->dims[d].key, sw->dims[d].value_count);
        else
            fprintf(f, "%s%s has no effect in this scenario, by the library's rule below\n",
                    n++ ? "" : "\n", sw->dims[d].key);
        if (rule) fprintf(f, "  why: %s\n", why);
    }
    return n;
}

/* The runner-up differs from the best only in dimensions whose none[] is at least `at`. */
static bool differs_only_in(const sweep *sw, const uint8_t *none, uint8_t at) {
    for (uint32_t d = 0; d < sw->dim_count; d++) {
        char a[SWEEP_VALUE_MAX], b[SWEEP_VALUE_MAX];
        sweep_point_value(sw, (uint64_t)sw->best, d, a, sizeof a);
        sweep_point_value(sw, (uint64_t)sw->runner_up, d, b, sizeof b);
        if (strcmp(a, b) != 0 && (none[d] == 0 || none[d] > at)) return false;
    }
    return true;
}

static void answer_runner_up(FILE *f, const sweep *sw) {
    char label[1024], a[64], b[64], c[64], d[64];
    int m = sweep_metric_index(sw, sw->objective);
    uint64_t best = (uint64_t)sw->best, ru = (uint64_t)sw->runner_up;
    sweep_point_label(sw, ru, label, sizeof label);
    sweep_stat sb, sr, diff;
    sweep_point_stat(sw, best, m, &sb);
    sweep_point_stat(sw, ru, m, &sr);
    /* common random numbers: both points saw the same seeds, so compare seed by seed */
    uint32_t n = sweep_paired_diff(sw, best, ru, m, &diff);
    sweep_format_human(a, sizeof a, sr.mean, sw->units[m]);
    sweep_format_human(b, sizeof b, fabs(diff.mean), sw->units[m]);
    fprintf(f, "\nrunner-up: point %" PRIu64 "  %s\n  %s %s, %s %s than the best", ru, label,
            sw->objective, a, b, (diff.mean > 0) == (sw->sense > 0) ? "worse" : "better");
    if (sb.mean != 0 && !isnan(sb.mean)) fprintf(f, " (%.2g%%)", 100 * fabs(diff.mean / sb.mean));
    if (n >= 2) {
        sweep_format_human(c, sizeof c, diff.ci_low, sw->units[m]);
        sweep_format_human(d, sizeof d, diff.ci_high, sw->units[m]);
        bool separated = diff.ci_low > 0 || diff.ci_high < 0;
        fprintf(f, ";\n  paired over %u seeds, runner-up minus best: 95%% CI [%s, %s]: %s\n", n, c,
                d,
                separated ? "the best is better at 95% confidence"
                          : "not distinguishable at this many seeds (try more --seeds)");
    } else {
        fputs("; one seed: no confidence interval (use --seeds)\n", f);
    }
}

/* When no dimension has an effect, the best point is only the first of equals. */
static void answer_first_of_equals(FILE *f, const sweep *sw, const uint8_t *none,
                                   uint32_t no_effect) {
    bool noisy = false;
    for (uint32_t d = 0; d < sw->dim_count; d++) noisy = noisy || none[d] == NONE_NOISE;
    if (no_effect == sw->dim_count && !noisy)
        fputs("  (the first point: every dimension has no effect, so any of their values gives "
              "these results)\n",
              f);
    else if (no_effect == sw->dim_count)
        fprintf(f,
                "  (the first point: no dimension has a measurable effect on %s, so any of "
                "their values does as well within the seeds' noise)\n",
                sw->objective);
}

void sweep_write_answer(FILE *f, const sweep *sw) {
    char label[1024];
    fprintf(f, "sweep: %s, variant %s, %" PRIu64 " points x %u seeds = %" PRIu64 " runs (%s)\n",
            sw->base->name, sw->variant, sw->points, sw->seeds, sw->tasks,
            sw->sample ? "Latin hypercube" : "full factorial");
    if (sw->failed > 0)
        fprintf(f, "%" PRIu64 " runs failed and are left out of the statistics\n", sw->failed);
    if (!sw->objective[0]) {
        fprintf(f,
                "Pareto front (blast_radius, cost_usd, latency_p99, all minimised): %" PRIu64
                " of %" PRIu64 " points\n",
                sw->pareto_count, sw->points);
        uint64_t shown = 0;
        for (uint64_t p = 0; p < sw->points && shown < 10; p++) {
            if (!sw->pareto[p]) continue;
            char br[64], cost[64], lat[64];
            sweep_format_human(br, sizeof br, sweep_point_mean(sw, p, "blast_radius"),
                               SIM_UNIT_COUNT);
            sweep_format_human(cost, sizeof cost, sweep_point_mean(sw, p, "cost_usd"),
                               SIM_UNIT_USD);
            sweep_format_human(lat, sizeof lat, sweep_point_mean(sw, p, "latency_p99"),
                               SIM_UNIT_US);
            sweep_point_label(sw, p, label, sizeof label);
            fprintf(f, "  point %" PRIu64 "  blast_radius %s  cost %s  p99 %s  %s\n", p, br, cost,
                    lat, label);
            shown++;
        }
        if (sw->pareto_count > shown) fputs("  ... (sweep.json has them all)\n", f);
        fputs("add --minimize METRIC [--subject-to ...] for a recommendation\n", f);
        return;
    }
    fprintf(f, "objective: %s %s", sw->sense < 0 ? "maximise" : "minimise", sw->objective);
    for (size_t c = 0; c < sw->con_count; c++)
        fprintf(f, "%s%s", c ? ", " : " subject to ", sw->cons[c].text);
    if (sw->con_count) fputs(sw->strict ? " (judged on the 95% CI)" : " (judged on the mean)", f);
    fprintf(f, "\nfeasible: %" PRIu64 " of %" PRIu64 " points\n", sw->feasible_count, sw->points);
    if (sw->best < 0) {
        fprintf(f, "\nno point satisfies %s\n", sw->subject_to[0] ? sw->subject_to : "the run");
        if (sw->closest >= 0) {
            sweep_point_label(sw, (uint64_t)sw->closest, label, sizeof label);
            fprintf(f, "closest: point %" PRId64 "  %s\n", sw->closest, label);
            answer_metrics(f, sw, (uint64_t)sw->closest);
        }
        return;
    }
    uint8_t none[SWEEP_DIMS_MAX];
    uint32_t no_effect = answer_no_effect(f, sw, none);
    sweep_point_label(sw, (uint64_t)sw->best, label, sizeof label);
    fprintf(f, "\nbest: point %" PRId64 "  %s\n", sw->best, label);
    answer_first_of_equals(f, sw, none, no_effect);
    answer_metrics(f, sw, (uint64_t)sw->best);
    sweep_answer_policy(f, sw, (uint64_t)sw->best);
    if (sw->runner_up >= 0 && no_effect > 0 && differs_only_in(sw, none, NONE_SAME))
        fprintf(f,
                "\nrunner-up: point %" PRId64 " differs from the best only in settings that have "
                "no effect (above): the same results; more seeds would not separate them\n",
                sw->runner_up);
    else if (sw->runner_up >= 0 && no_effect > 0 && differs_only_in(sw, none, NONE_NOISE))
        fprintf(f,
                "\nrunner-up: point %" PRId64 " differs from the best only in settings with no "
                "measurable effect (above): pick either on other grounds\n",
                sw->runner_up);
    else if (sw->runner_up >= 0)
        answer_runner_up(f, sw);
    else
        fputs("\nrunner-up: none (only one point is feasible)\n", f);
}
