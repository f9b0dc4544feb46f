/* compare.c - two reports or two sweeps side by side; see compare.h and docs/compare.md. */
#include "reports/compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fb.h"
#include "core/version.h"
#include "util/json.h"
#include "reports/report.h"

/* The headline figures and their default tolerances (report.json's units: seconds, USD). */
static const rep_cmp_headline HEADLINES[] = {
    {"success_rate", SIM_UNIT_RATIO, true, 0.001, 0, 0},
    {"latency_p50", SIM_UNIT_US, false, 0, 0.05, 0.001},
    {"latency_p99", SIM_UNIT_US, false, 0, 0.05, 0.001},
    {"amplification", SIM_UNIT_RATIO, false, 0, 0.02, 0.01},
    {"fallbacks", SIM_UNIT_COUNT, false, 0, 0.02, 1},
    {"cost_usd", SIM_UNIT_USD, false, 0, 0.02, 0.0001},
    {"blast_radius", SIM_UNIT_COUNT, false, 0, 0.02, 1},
};
#define NHEAD (sizeof HEADLINES / sizeof HEADLINES[0])
_Static_assert(sizeof HEADLINES / sizeof HEADLINES[0] <=
                   sizeof((rep_cmp_entry *)0)->value / sizeof(rep_cmp_value),
               "rep_cmp_entry.value holds every headline");

const rep_cmp_headline *rep_cmp_headlines(size_t *count) {
    *count = NHEAD;
    return HEADLINES;
}

const rep_cmp_headline *rep_cmp_headline_find(const char *metric) {
    for (size_t i = 0; i < NHEAD; i++)
        if (strcmp(HEADLINES[i].metric, metric) == 0) return &HEADLINES[i];
    return NULL;
}

/* ---- parsing ---- */

static int bad(char *msg, size_t len, const char *file, const char *path, const char *what) {
    snprintf(msg, len, "%s: %s: %s", file, path, what);
    return FB_EINVAL;
}

static bool entry_add(rep_cmp_side *s, size_t *cap, const char *name, rep_cmp_entry **e) {
    if (s->count == REP_CMP_ENTRIES_MAX) return false;
    if (s->count == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        rep_cmp_entry *p = realloc(s->entries, n * sizeof *p);
        if (p == NULL) return false;
        s->entries = p;
        *cap = n;
    }
    *e = &s->entries[s->count++];
    memset(*e, 0, sizeof **e);
    snprintf((*e)->name, sizeof(*e)->name, "%s", name);
    return true;
}

static int parse_report(const cJSON *root, const char *file, rep_cmp_side *s, char *msg,
                        size_t len) {
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(root, "seed");
    const cJSON *complete = cJSON_GetObjectItemCaseSensitive(root, "complete");
    s->kind = REP_CMP_REPORT;
    s->complete = !cJSON_IsFalse(complete);
    if (cJSON_IsNumber(seed)) snprintf(s->seeds, sizeof s->seeds, "%.0f", seed->valuedouble);
    size_t cap = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, vars) {
        char path[300];
        snprintf(path, sizeof path, "$.variants.%s.summary", v->string);
        const cJSON *sum = cJSON_GetObjectItemCaseSensitive(v, "summary");
        if (!cJSON_IsObject(sum)) return bad(msg, len, file, path, "missing (not a report.json?)");
        rep_cmp_entry *e;
        if (!entry_add(s, &cap, v->string, &e))
            return bad(msg, len, file, "$.variants", "too many variants or out of memory");
        const cJSON *ended = cJSON_GetObjectItemCaseSensitive(sum, "ended");
        e->ended = cJSON_IsNumber(ended) ? ended->valuedouble : NAN;
        const cJSON *done = cJSON_GetObjectItemCaseSensitive(v, "complete");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(v, "stopped");
        if (cJSON_IsFalse(done) || (done == NULL && !s->complete))
            snprintf(e->stopped, sizeof e->stopped, "%s",
                     cJSON_IsString(why) ? why->valuestring : "did not run to the end");
        for (size_t h = 0; h < NHEAD; h++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(sum, HEADLINES[h].metric);
            if (x != NULL && !cJSON_IsNumber(x) && !cJSON_IsNull(x)) {
                snprintf(path, sizeof path, "$.variants.%s.summary.%s", v->string,
                         HEADLINES[h].metric);
                return bad(msg, len, file, path, "not a number");
            }
            e->value[h].present = cJSON_IsNumber(x);
            e->value[h].v = cJSON_IsNumber(x) ? x->valuedouble : NAN;
        }
    }
    if (s->count == 0) return bad(msg, len, file, "$.variants", "no variant");
    return FB_OK;
}

/* A sweep point's name: its settings, "key=value key=value". */
static void point_name(const cJSON *settings, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    const cJSON *kv;
    cJSON_ArrayForEach(kv, settings) {
        char *val = cJSON_IsString(kv) ? NULL : cJSON_PrintUnformatted(kv);
        int k = snprintf(buf + at, len - at, "%s%s=%s", at ? " " : "", kv->string,
                         val ? val : kv->valuestring);
        free(val);
        if (k < 0 || (size_t)k >= len - at) return;
        at += (size_t)k;
    }
}

static int parse_sweep(const cJSON *root, const char *file, rep_cmp_side *s, char *msg,
                       size_t len) {
    s->kind = REP_CMP_SWEEP;
    s->complete = true;
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(root, "seeds"), *x;
    size_t at = 0;
    cJSON_ArrayForEach(x, seeds) {
        if (!cJSON_IsNumber(x) || at >= sizeof s->seeds - 24) break;
        at += (size_t)snprintf(s->seeds + at, sizeof s->seeds - at, "%s%.0f", at ? ", " : "",
                               x->valuedouble);
    }
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "results"), *r;
    size_t cap = 0, i = 0;
    cJSON_ArrayForEach(r, results) {
        char path[300], name[REP_CMP_NAME_MAX];
        const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(r, "metrics");
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(r, "runs");
        snprintf(path, sizeof path, "$.results[%zu].metrics", i);
        if (!cJSON_IsObject(metrics)) return bad(msg, len, file, path, "missing");
        point_name(cJSON_GetObjectItemCaseSensitive(r, "settings"), name, sizeof name);
        rep_cmp_entry *e;
        if (!entry_add(s, &cap, name, &e))
            return bad(msg, len, file, "$.results", "too many points or out of memory");
        e->ended = NAN;
        bool several = cJSON_IsNumber(runs) && runs->valuedouble >= 2;
        for (size_t h = 0; h < NHEAD; h++) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(metrics, HEADLINES[h].metric);
            const cJSON *mean = cJSON_GetObjectItemCaseSensitive(m, "mean");
            const cJSON *ci = cJSON_GetObjectItemCaseSensitive(m, "ci95");
            rep_cmp_value *val = &e->value[h];
            val->present = cJSON_IsNumber(mean);
            val->v = val->present ? mean->valuedouble : NAN;
            const cJSON *lo = cJSON_GetArrayItem(ci, 0), *hi = cJSON_GetArrayItem(ci, 1);
            val->has_ci = several && cJSON_IsNumber(lo) && cJSON_IsNumber(hi);
            val->lo = val->has_ci ? lo->valuedouble : NAN;
            val->hi = val->has_ci ? hi->valuedouble : NAN;
        }
        i++;
    }
    if (s->count == 0) return bad(msg, len, file, "$.results", "no point");
    return FB_OK;
}

int rep_cmp_parse(const char *text, size_t len, const char *file, rep_cmp_side *side, char *msg,
                  size_t msglen) {
    memset(side, 0, sizeof *side);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (root == NULL) return bad(msg, msglen, file, "$", "not JSON");
    int rc;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "scenario");
    if (!cJSON_IsObject(root) || !cJSON_IsString(name)) {
        rc = bad(msg, msglen, file, "$.scenario",
                 "missing: not a fusebox report.json or sweep.json");
    } else {
        snprintf(side->scenario, sizeof side->scenario, "%s", name->valuestring);
        const cJSON *rng = cJSON_GetObjectItemCaseSensitive(root, "rng");
        if (cJSON_IsString(rng)) snprintf(side->rng, sizeof side->rng, "%s", rng->valuestring);
        if (rng != NULL && !cJSON_IsString(rng))
            rc = bad(msg, msglen, file, "$.rng", "not a string (the random streams' version)");
        else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "results")))
            rc = parse_sweep(root, file, side, msg, msglen);
        else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "variants")))
            rc = parse_report(root, file, side, msg, msglen);
        else
            rc = bad(msg, msglen, file, "$",
                     "neither \"variants\" (report.json) nor \"results\" (sweep.json)");
    }
    cJSON_Delete(root);
    if (rc != FB_OK) rep_cmp_side_free(side);
    return rc;
}

void rep_cmp_side_free(rep_cmp_side *side) {
    free(side->entries);
    side->entries = NULL;
    side->count = 0;
}

int rep_cmp_tol_parse(const char *spec, rep_cmp_tol *t, char *msg, size_t msglen) {
    memset(t, 0, sizeof *t);
    const char *eq = strchr(spec, '=');
    size_t n = eq ? (size_t)(eq - spec) : 0;
    size_t h = 0;
    for (; eq && h < NHEAD; h++)
        if (strlen(HEADLINES[h].metric) == n && strncmp(HEADLINES[h].metric, spec, n) == 0) break;
    if (eq == NULL || h == NHEAD) {
        char list[200] = "";
        for (size_t k = 0; k < NHEAD; k++) {
            strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, HEADLINES[k].metric, sizeof list - strlen(list) - 1);
        }
        snprintf(msg, msglen, "--tolerance '%s': want METRIC=X or METRIC=X%% with METRIC one of %s",
                 spec, list);
        return FB_EINVAL;
    }
    t->metric = HEADLINES[h].metric;
    char *end;
    double x = strtod(eq + 1, &end);
    bool pct = *end == '%';
    if (end == eq + 1 || (pct ? end[1] != '\0' : *end != '\0') || !(x >= 0) || !isfinite(x)) {
        snprintf(msg, msglen, "--tolerance '%s': '%s' is not a non-negative number (or N%%)", spec,
                 eq + 1);
        return FB_EINVAL;
    }
    if (pct)
        t->rel = x / 100;
    else
        t->abs = x;
    return FB_OK;
}

/* ---- judging ---- */

static void tol_text(char *buf, size_t len, const rep_cmp_headline *h, double abs, double rel,
                     double min, const char *source) {
    char a[32];
    if (rel > 0) {
        snprintf(a, sizeof a, "%g%%", rel * 100);
        if (min > 0) {
            char m[32];
            rep_cmp_format(m, sizeof m, h, min);
            snprintf(buf, len, "tolerance +-%s, at least %s (%s)", a, m, source);
            return;
        }
    } else if (h->unit == SIM_UNIT_US) {
        rep_cmp_format(a, sizeof a, h, abs);
    } else {
        snprintf(a, sizeof a, "%g", abs);
    }
    snprintf(buf, len, "tolerance +-%s (%s)", a, source);
}

void rep_cmp_judge(const rep_cmp_headline *h, const rep_cmp_value *a, const rep_cmp_value *b,
                   const rep_cmp_tol *user, rep_cmp_fig *fig) {
    fig->a = *a;
    fig->b = *b;
    fig->tol_user = user != NULL;
    fig->tol = NAN;
    bool have = a->present && b->present && isfinite(a->v) && isfinite(b->v);
    fig->change = have ? b->v - a->v : NAN;
    fig->change_rel = !have ? NAN : a->v != 0 ? (b->v - a->v) / fabs(a->v) : b->v == 0 ? 0 : NAN;
    bool beyond;
    if (user == NULL && a->has_ci && b->has_ci) {
        fig->rule = REP_CMP_RULE_CI;
        beyond = have && (b->lo > a->hi || b->hi < a->lo);
        snprintf(fig->rule_text, sizeof fig->rule_text, "95%% CIs %s",
                 beyond ? "do not overlap" : "overlap");
    } else {
        fig->rule = REP_CMP_RULE_TOL;
        double abs = user ? user->abs : h->tol_abs, rel = user ? user->rel : h->tol_rel;
        double min = user ? 0 : h->tol_min;
        double base = have ? fabs(a->v) : 0;
        fig->tol = rel > 0 ? fmax(rel * base, min) : abs;
        tol_text(fig->rule_text, sizeof fig->rule_text, h, abs, rel, min,
                 user ? "--tolerance" : "default");
        /* a margin for the decimals report.json rounds to */
        beyond = have && fabs(fig->change) > fig->tol * (1 + 1e-9) + 1e-12;
    }
    if (!have)
        fig->verdict = REP_CMP_NA;
    else if (!beyond)
        fig->verdict = REP_CMP_SAME;
    else
        fig->verdict = (fig->change > 0) == h->higher_is_better ? REP_CMP_BETTER : REP_CMP_WORSE;
}

/* Two single runs of two seeds, or of one seed under two random-stream versions (docs/rng.md:
 * a version draws other numbers from a seed). */
static rep_cmp_apart apart(const rep_cmp_side *a, const rep_cmp_side *b) {
    if (a->kind != REP_CMP_REPORT) return REP_CMP_SAME_DRAWS;
    if (strcmp(a->seeds, b->seeds) != 0) return REP_CMP_TWO_SEEDS;
    return strcmp(a->rng, b->rng) != 0 ? REP_CMP_TWO_VERSIONS : REP_CMP_SAME_DRAWS;
}

const char *rep_cmp_apart_name(rep_cmp_apart apart) {
    switch (apart) {
    case REP_CMP_TWO_SEEDS:
        return "two seeds";
    case REP_CMP_TWO_VERSIONS:
        return "two stream versions";
    default:
        return "";
    }
}

/*
 * Single runs of two seeds: a share of n requests differs between seeds by about
 * sqrt(p(1-p)/n) by chance alone (the interval is Agresti and Caffo's, 2000), far beyond the 0.001
 * tolerance on a few hundred requests (19.0% and 18.2% of 200 were "WORSE beyond noise"). A change
 * inside the 95% binomial interval of the difference is the same, one beyond it keeps its verdict,
 * and the rule says which; true when the figure was judged so (a share, two seeds, the default
 * tolerance, both counts known).
 */
static bool binomial(rep_cmp_fig *f, const rep_cmp_headline *h, const rep_cmp_side *a,
                     const rep_cmp_side *b, const rep_cmp_entry *ea, const rep_cmp_entry *eb) {
    bool rate = strcmp(h->metric, "success_rate") == 0;
    rep_cmp_apart why = apart(a, b);
    if (why == REP_CMP_SAME_DRAWS || f->rule != REP_CMP_RULE_TOL || f->tol_user ||
        (!rate && strcmp(h->metric, "blast_radius") != 0))
        return false;
    if (!(ea->ended > 0) || !(eb->ended > 0)) return false;
    if (f->verdict != REP_CMP_WORSE && f->verdict != REP_CMP_BETTER) return true;
    /* blast_radius: a count of the requests ended, judged as their share */
    double x = rate ? f->a.v : f->a.v / ea->ended, y = rate ? f->b.v : f->b.v / eb->ended;
    if (!(x >= 0 && x <= 1 && y >= 0 && y <= 1)) return false;
    /* Agresti-Caffo: one success and one failure added to each side, so that a share of 0
       (no request failed in one run, 5 of 3,600 in the other) has an interval too */
    double na = ea->ended + 2, nb = eb->ended + 2;
    double xa = (x * ea->ended + 1) / na, yb = (y * eb->ended + 1) / nb;
    double half = 1.96 * sqrt(xa * (1 - xa) / na + yb * (1 - yb) / nb);
    bool beyond = fabs(yb - xa) > half;
    if (!beyond) f->verdict = REP_CMP_SAME;
    snprintf(f->rule_text, sizeof f->rule_text,
             "%s: %s the 95%% binomial interval, +-%.3f pp of the requests ended",
             rep_cmp_apart_name(why), beyond ? "beyond" : "within", half * 100);
    return true;
}

/*
 * Single runs of two seeds, a figure with no noise model (a latency, the amplification, a cost)
 * judged on its default tolerance: a change beyond it may be the seeds' alone (sweep-small's
 * naive p50 moved 6.6% and its fallbacks 7.4% from seed 9 to seed 8, nothing else changed: "4
 * regressions beyond noise"). Not judged; --tolerance states the noise, a sweep measures it.
 */
static void across_seeds(rep_cmp_fig *f, const rep_cmp_side *a, const rep_cmp_side *b) {
    rep_cmp_apart why = apart(a, b);
    if (why == REP_CMP_SAME_DRAWS || f->rule != REP_CMP_RULE_TOL || f->tol_user) return;
    if (f->verdict != REP_CMP_WORSE && f->verdict != REP_CMP_BETTER) return;
    f->verdict = REP_CMP_NA;
    f->unjudged_apart = true;
    char tol[128];
    snprintf(tol, sizeof tol, "%s", f->rule_text);
    char *cut = strstr(tol, " (default)");
    if (cut) *cut = '\0';
    snprintf(f->rule_text, sizeof f->rule_text, "%s, not judged: beyond %.60s, not the %s noise",
             rep_cmp_apart_name(why), tol, why == REP_CMP_TWO_SEEDS ? "seeds'" : "draws'");
}

/*
 * A variant stopped early on a side (SIGINT, a cap) has figures of part of its run: a rate of
 * its first minutes, costs and counts summed over them. Set against a whole run they differ by
 * what was not simulated, not by the change compared, so the figure is not judged.
 */
static void unjudged(rep_cmp_fig *f, const char *stopped_a, const char *stopped_b) {
    if (stopped_a[0] == '\0' && stopped_b[0] == '\0') return;
    f->verdict = REP_CMP_NA;
    f->unjudged_apart = false; /* not judged for this reason first */
    snprintf(f->rule_text, sizeof f->rule_text, "not judged: %s's run %.90s",
             stopped_a[0] ? "A" : "B", stopped_a[0] ? stopped_a : stopped_b);
}

int rep_compare(const rep_cmp_side *a, const rep_cmp_side *b, const rep_cmp_tol *tols, size_t ntols,
                rep_cmp *out, char *msg, size_t msglen) {
    memset(out, 0, sizeof *out);
    if (a->kind != b->kind) {
        snprintf(msg, msglen, "cannot compare a %s with a %s",
                 a->kind == REP_CMP_REPORT ? "report" : "sweep",
                 b->kind == REP_CMP_REPORT ? "report" : "sweep");
        return FB_EINVAL;
    }
    if (strcmp(a->scenario, b->scenario) != 0) {
        snprintf(msg, msglen, "different scenarios: '%s' and '%s'", a->scenario, b->scenario);
        return FB_EINVAL;
    }
    out->figs = malloc((a->count ? a->count : 1) * NHEAD * sizeof *out->figs);
    if (out->figs == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    size_t common = 0;
    for (size_t i = 0; i < a->count; i++) {
        size_t j = 0;
        while (j < b->count && strcmp(a->entries[i].name, b->entries[j].name) != 0) j++;
        if (j == b->count) {
            out->only_a++;
            continue;
        }
        common++;
        for (size_t h = 0; h < NHEAD; h++) {
            const rep_cmp_tol *user = NULL;
            for (size_t t = 0; t < ntols; t++)
                if (strcmp(tols[t].metric, HEADLINES[h].metric) == 0) user = &tols[t];
            rep_cmp_fig *f = &out->figs[out->count++];
            memset(f, 0, sizeof *f);
            f->entry_a = i;
            f->entry_b = j;
            f->headline = h;
            rep_cmp_judge(&HEADLINES[h], &a->entries[i].value[h], &b->entries[j].value[h], user, f);
            if (!binomial(f, &HEADLINES[h], a, b, &a->entries[i], &b->entries[j]))
                across_seeds(f, a, b);
            unjudged(f, a->entries[i].stopped, b->entries[j].stopped);
            bool seeds = f->unjudged_apart;
            out->unjudged_seeds += seeds;
            out->unjudged += seeds || (f->verdict == REP_CMP_NA &&
                                       (a->entries[i].stopped[0] || b->entries[j].stopped[0]));
            out->worse += f->verdict == REP_CMP_WORSE;
            out->better += f->verdict == REP_CMP_BETTER;
        }
    }
    out->only_b = b->count - common;
    out->apart = apart(a, b);
    if (common == 0) {
        snprintf(msg, msglen, "no %s in common", a->kind == REP_CMP_REPORT ? "variant" : "point");
        rep_cmp_free(out);
        return FB_EINVAL;
    }
    return FB_OK;
}

void rep_cmp_free(rep_cmp *c) {
    free(c->figs);
    c->figs = NULL;
    c->count = 0;
}

/* ---- formatting ---- */

void rep_cmp_format(char *buf, size_t len, const rep_cmp_headline *h, double v) {
    if (!isfinite(v)) {
        snprintf(buf, len, "n/a");
        return;
    }
    switch (h->unit) {
    case SIM_UNIT_US:
        rep_format_duration(buf, len, v * 1e6);
        break;
    case SIM_UNIT_USD:
        snprintf(buf, len, "$%.4f", v);
        break;
    case SIM_UNIT_RATIO:
        if (h->higher_is_better)
            snprintf(buf, len, "%.3f%%", v * 100);
        else
            snprintf(buf, len, "%.3fx", v);
        break;
    default:
        if (v == floor(v))
            snprintf(buf, len, "%.0f", v);
        else
            snprintf(buf, len, "%.1f", v);
        break;
    }
}

void rep_cmp_format_change(char *buf, size_t len, const rep_cmp_headline *h, const rep_cmp_fig *f) {
    if (!isfinite(f->change)) {
        snprintf(buf, len, "n/a");
        return;
    }
    char abs[48], rel[32];
    const char *sign = f->change < 0 ? "-" : "+";
    if (h->unit == SIM_UNIT_RATIO && h->higher_is_better)
        snprintf(abs, sizeof abs, "%s%.3f pp", sign, fabs(f->change) * 100);
    else {
        abs[0] = *sign;
        rep_cmp_format(abs + 1, sizeof abs - 1, h, fabs(f->change));
    }
    if (isfinite(f->change_rel))
        snprintf(rel, sizeof rel, "%+.1f%%", f->change_rel * 100);
    else
        snprintf(rel, sizeof rel, "n/a");
    snprintf(buf, len, "%s (%s)", abs, rel);
}

const char *rep_cmp_verdict_name(rep_cmp_verdict v) {
    switch (v) {
    case REP_CMP_BETTER:
        return "better";
    case REP_CMP_WORSE:
        return "worse";
    case REP_CMP_NA:
        return "n/a";
    default:
        return "same";
    }
}

static const char *unit_name(sim_unit u) {
    switch (u) {
    case SIM_UNIT_RATIO:
        return "ratio";
    case SIM_UNIT_US:
        return "seconds";
    case SIM_UNIT_USD:
        return "usd";
    default:
        return "count";
    }
}

/* Six decimals, as report.json has its ratios and seconds. */
static void json_num(util_json *w, const char *key, double v) {
    util_json_fixed(w, key, v, 6);
}

static void json_value(util_json *w, const char *key, const rep_cmp_value *v) {
    util_json_open(w, key, '{', UTIL_JSON_INLINE);
    if (v->present)
        json_num(w, "value", v->v);
    else
        util_json_null(w, "value");
    if (v->has_ci) {
        util_json_open(w, "ci95", '[', UTIL_JSON_INLINE);
        json_num(w, NULL, v->lo);
        json_num(w, NULL, v->hi);
        util_json_close(w);
    } else {
        util_json_null(w, "ci95");
    }
    util_json_close(w);
}

static void json_side(util_json *w, const char *key, const char *path, const rep_cmp_side *s) {
    util_json_open(w, key, '{', UTIL_JSON_INLINE);
    util_json_str(w, "path", path);
    util_json_str(w, "seeds", s->seeds);
    util_json_str(w, "rng", s->rng[0] ? s->rng : NULL);
    util_json_bool(w, "complete", s->complete);
    util_json_u64(w, "entries", s->count);
    util_json_close(w);
}

void rep_cmp_write_json(FILE *f, const char *path_a, const char *path_b, const rep_cmp_side *a,
                        const rep_cmp_side *b, const rep_cmp *c) {
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_str(&w, "fusebox", FB_VERSION);
    util_json_str(&w, "kind", a->kind == REP_CMP_REPORT ? "report" : "sweep");
    util_json_str(&w, "scenario", a->scenario);
    json_side(&w, "a", path_a, a);
    json_side(&w, "b", path_b, b);
    util_json_u64(&w, "figures", c->count);
    util_json_u64(&w, "worse", c->worse);
    util_json_u64(&w, "better", c->better);
    util_json_u64(&w, "unjudged", c->unjudged);
    util_json_open(&w, "only_in_a", '[', UTIL_JSON_INLINE);
    for (size_t i = 0; i < a->count; i++) {
        size_t j = 0;
        while (j < b->count && strcmp(a->entries[i].name, b->entries[j].name) != 0) j++;
        if (j == b->count) util_json_str(&w, NULL, a->entries[i].name);
    }
    util_json_close(&w);
    util_json_open(&w, "only_in_b", '[', UTIL_JSON_INLINE);
    for (size_t j = 0; j < b->count; j++) {
        size_t i = 0;
        while (i < a->count && strcmp(a->entries[i].name, b->entries[j].name) != 0) i++;
        if (i == a->count) util_json_str(&w, NULL, b->entries[j].name);
    }
    util_json_close(&w);
    util_json_open(&w, "results", '[', UTIL_JSON_LINES_OPEN);
    for (size_t k = 0; k < c->count; k++) {
        const rep_cmp_fig *fig = &c->figs[k];
        const rep_cmp_headline *h = &HEADLINES[fig->headline];
        util_json_open(&w, NULL, '{', UTIL_JSON_INLINE);
        util_json_str(&w, a->kind == REP_CMP_REPORT ? "variant" : "point",
                      a->entries[fig->entry_a].name);
        util_json_str(&w, "metric", h->metric);
        util_json_str(&w, "unit", unit_name(h->unit));
        util_json_str(&w, "better", h->higher_is_better ? "higher" : "lower");
        json_value(&w, "a", &fig->a);
        json_value(&w, "b", &fig->b);
        json_num(&w, "change", fig->change);
        json_num(&w, "change_rel", fig->change_rel);
        util_json_str(&w, "rule", fig->rule == REP_CMP_RULE_CI ? "ci95" : "tolerance");
        json_num(&w, "tolerance", fig->tol);
        util_json_str(&w, "rule_text", fig->rule_text);
        util_json_str(&w, "verdict", rep_cmp_verdict_name(fig->verdict));
        util_json_close(&w);
    }
    util_json_close(&w);
    util_json_close(&w);
    fputc('\n', f);
}
