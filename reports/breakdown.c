/*
 * breakdown.c - a run's figures broken down the way a log states them, and the log's
 * figures beside them; see breakdown.h.
 */
#include "reports/breakdown.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"

/* "openai fault 0 (outage)": how report.json and the scenario's "observed" name a window. */
static void window_name(char *buf, size_t len, const sim_scenario *sc,
                        const sim_window_summary *w) {
    const sim_provider *pv = &sc->providers[w->provider];
    snprintf(buf, len, "%s fault %u (%s)", pv->name, w->fault,
             scn_fault_kind_name(pv->faults[w->fault].kind));
}

static void json_window(util_json *w, const sim_scenario *sc, const sim_window_summary *x) {
    char name[128];
    window_name(name, sizeof name, sc, x);
    util_json_open(w, NULL, '{', UTIL_JSON_INLINE);
    util_json_str(w, "name", name);
    util_json_fixed(w, "start_s", (double)x->start_us / 1e6, 6);
    util_json_fixed(w, "end_s", (double)x->end_us / 1e6, 6);
    util_json_u64(w, "requests", x->requests);
    util_json_u64(w, "attempts", x->attempts);
    if (x->requests == 0) {
        util_json_null(w, "success_rate");
        util_json_null(w, "latency_p50");
        util_json_null(w, "latency_p90");
        util_json_null(w, "latency_p99");
    } else {
        util_json_fixed(w, "success_rate", (double)x->success / (double)x->requests, 6);
        util_json_fixed(w, "latency_p50", (double)x->latency_p50_us / 1e6, 6);
        util_json_fixed(w, "latency_p90", (double)x->latency_p90_us / 1e6, 6);
        util_json_fixed(w, "latency_p99", (double)x->latency_p99_us / 1e6, 6);
    }
    util_json_close(w);
}

void rep_breakdown_json(util_json *w, const sim_scenario *sc, const sim_summary *s) {
    const sim_breakdown *b = &s->breakdown;
    char key[16];
    util_json_open(w, "breakdown", '{', UTIL_JSON_LINES);
    util_json_open(w, "attempts_per_request", '{', UTIL_JSON_INLINE);
    for (int k = 0; k < SIM_ATTEMPT_BUCKETS; k++) {
        if (b->per_request[k] == 0) continue;
        snprintf(key, sizeof key, "%d", k);
        util_json_u64(w, key, b->per_request[k]);
    }
    util_json_close(w);
    if (b->per_request_beyond) util_json_u64(w, "attempts_beyond", b->per_request_beyond);
    util_json_open(w, "status", '{', UTIL_JSON_INLINE);
    for (int k = 0; k < SIM_STATUS_MAX; k++) {
        if (b->status[k] == 0) continue;
        snprintf(key, sizeof key, "%d", k);
        util_json_u64(w, key, b->status[k]);
    }
    for (int k = 0; k < SIM_ANSWER_WORDS; k++)
        if (b->words[k]) util_json_u64(w, sim_answer_word_name((sim_answer_word)k), b->words[k]);
    util_json_close(w);
    util_json_open(w, "end", '{', UTIL_JSON_INLINE);
    for (int e = 0; e < SIM_END_COUNT; e++)
        if (s->ended[e]) util_json_u64(w, sim_end_name((sim_end)e), s->ended[e]);
    util_json_close(w);
    util_json_open(w, "windows", '[', UTIL_JSON_LINES);
    for (uint32_t k = 0; k < b->window_count; k++) json_window(w, sc, &b->windows[k]);
    util_json_close(w);
    if (b->windows_beyond) util_json_u64(w, "windows_beyond", b->windows_beyond);
    util_json_close(w);
}

/* The variants' names padded to one width, for the text's rows. */
static int name_width(sim_summary *const *sums, size_t n) {
    int w = 8;
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(sums[i]->variant) + 2 > w) w = (int)strlen(sums[i]->variant) + 2;
    return w;
}

/* One "key:count" item of a row; with `indent` >= 0, on the next line (so indented) past 96
 * columns. */
static void item(FILE *f, int *col, int indent, const char *key, uint64_t v) {
    char buf[48];
    int len = snprintf(buf, sizeof buf, " %s:%" PRIu64, key, v);
    if (indent >= 0 && *col + len > 96) {
        fprintf(f, "\n%*s", indent, "");
        *col = indent;
    }
    fputs(*col < 0 ? buf + 1 : buf, f); /* a row's first item without its space */
    *col = *col < 0 ? len - 1 : *col + len;
}

/* A variant's attempts-per-request items (calls:requests). */
static void per_request_items(FILE *f, const sim_breakdown *b, int *col, int indent) {
    char key[16];
    for (int k = 0; k < SIM_ATTEMPT_BUCKETS; k++) {
        if (b->per_request[k] == 0) continue;
        snprintf(key, sizeof key, "%d", k);
        item(f, col, indent, key, b->per_request[k]);
    }
    snprintf(key, sizeof key, "%d+", SIM_ATTEMPT_BUCKETS);
    if (b->per_request_beyond) item(f, col, indent, key, b->per_request_beyond);
}

/* A variant's answer items (status:calls, then timeout, reset, broken). */
static void answer_items(FILE *f, const sim_breakdown *b, int *col, int indent) {
    char key[16];
    for (int k = 0; k < SIM_STATUS_MAX; k++) {
        if (b->status[k] == 0) continue;
        snprintf(key, sizeof key, "%d", k);
        item(f, col, indent, key, b->status[k]);
    }
    for (int k = 0; k < SIM_ANSWER_WORDS; k++)
        if (b->words[k])
            item(f, col, indent, sim_answer_word_name((sim_answer_word)k), b->words[k]);
}

typedef void (*items_fn)(FILE *f, const sim_breakdown *b, int *col, int indent);

static const struct {
    const char *label, *unit;
    items_fn items;
} sections[] = {
    {"attempts per request", "calls:requests", per_request_items},
    {"answers", "status:calls", answer_items},
};

void rep_breakdown_text(FILE *f, sim_summary *const *sums, size_t n) {
    int w = name_width(sums, n);
    for (size_t t = 0; t < sizeof sections / sizeof sections[0]; t++) {
        fprintf(f, "%-24s(%s)\n", sections[t].label, sections[t].unit);
        for (size_t i = 0; i < n; i++) {
            int col = fprintf(f, "  %-*s", w, sums[i]->variant);
            sections[t].items(f, &sums[i]->breakdown, &col, w + 2);
            fputc('\n', f);
        }
    }
}

void rep_breakdown_html(FILE *f, sim_summary *const *sums, size_t n) {
    fputs("<h2 id=\"breakdown\">Attempts and answers</h2>\n<div class=\"scroll\"><table>\n", f);
    for (size_t t = 0; t < sizeof sections / sizeof sections[0]; t++) {
        fprintf(f, "<tr><td>%s</td><th>%s</th></tr>\n", sections[t].label, sections[t].unit);
        for (size_t i = 0; i < n; i++) {
            fputs("<tr class=\"sub\"><td>", f);
            rep_escape_markup(f, sums[i]->variant);
            fputs("</td><td>", f);
            int col = -1;
            sections[t].items(f, &sums[i]->breakdown, &col, -1);
            fputs("</td></tr>\n", f);
        }
    }
    fputs("</table></div>\n<p>Requests by the provider calls they made, and calls by their "
          "answer: an HTTP status, or timeout, reset, broken (docs/reports.md, "
          "\"breakdown\"; report.json has them per variant).</p>\n",
          f);
}

/* ---- the log beside a variant ---- */

static rep_figure *next(rep_figure *out, size_t cap, size_t *n, const char *name,
                        rep_figure_kind kind, rep_figure_group group) {
    if (*n == cap) return NULL;
    rep_figure *g = &out[(*n)++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->kind = kind;
    g->group = group;
    return g;
}

bool rep_latency_within(double log_us, double sim_us, const sim_obs_rank *r, bool *cliff) {
    bool near = fabs(sim_us - log_us) <= REP_LATENCY_TOLERANCE * log_us + 1e-9;
    /* within 10% of the log's latency at a rank within q -+ d */
    bool band = !near && r != NULL && r->present &&
                sim_us >= (1 - REP_LATENCY_TOLERANCE) * (double)r->lo_us - 1e-9 &&
                sim_us <= (1 + REP_LATENCY_TOLERANCE) * (double)r->hi_us + 1e-9;
    if (cliff) *cliff = band;
    return near || band;
}

/* A count, or a latency: its tolerance and whether the variant's is within it. */
static void judge(rep_figure *g) {
    if (g->kind == REP_FIGURE_LATENCY) {
        g->tolerance = REP_LATENCY_TOLERANCE * g->log;
        g->within_tolerance = rep_latency_within(g->log, g->sim, &g->rank, &g->cliff);
        return;
    }
    g->tolerance = fmax(REP_COUNT_TOLERANCE * g->log, REP_COUNT_TOLERANCE_MIN);
    g->within_tolerance = fabs(g->sim - g->log) <= g->tolerance + 1e-9;
}

/* The noise the log states for each figure, and the verdict: within either band. */
static void add_noise(const sim_observed *o, rep_figure *g, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < o->noise_n; k++)
            if (strcmp(o->noise_name[k], g[i].name) == 0) g[i].noise = o->noise[k];
        double d =
            g[i].kind == REP_FIGURE_BUCKET ? g[i].sim_share - g[i].log_share : g[i].sim - g[i].log;
        g[i].within = g[i].within_tolerance || fabs(d) <= g[i].noise + 1e-9;
    }
}

static void add_count(rep_figure *out, size_t cap, size_t *n, const char *name,
                      rep_figure_group group, int key, double log, double sim) {
    rep_figure *g = next(out, cap, n, name, REP_FIGURE_COUNT, group);
    if (g == NULL) return;
    g->key = key;
    g->log = log;
    g->sim = sim;
    judge(g);
}

static void add_latency(rep_figure *out, size_t cap, size_t *n, const char *name, fb_time_us log,
                        fb_time_us sim, const sim_obs_rank *rank) {
    rep_figure *g = next(out, cap, n, name, REP_FIGURE_LATENCY, REP_GROUP_LATENCY);
    if (g == NULL) return;
    g->log = (double)log;
    g->sim = (double)sim;
    g->rank = *rank;
    judge(g);
}

static void add_buckets(rep_figure *out, size_t cap, size_t *n, const sim_observed *o,
                        const sim_breakdown *b) {
    double ln = (double)o->per_request_beyond, sn = (double)b->per_request_beyond;
    for (int k = 0; k < SIM_ATTEMPT_BUCKETS; k++) {
        ln += (double)o->per_request[k];
        sn += (double)b->per_request[k];
    }
    for (int k = 0; k <= SIM_ATTEMPT_BUCKETS; k++) {
        bool beyond = k == SIM_ATTEMPT_BUCKETS;
        double l = (double)(beyond ? o->per_request_beyond : o->per_request[k]);
        double x = (double)(beyond ? b->per_request_beyond : b->per_request[k]);
        if (l == 0 && x == 0) continue;
        char name[48];
        snprintf(name, sizeof name, "attempts/request %d%s", k, beyond ? "+" : "");
        rep_figure *g = next(out, cap, n, name, REP_FIGURE_BUCKET, REP_GROUP_BUCKET);
        if (g == NULL) return;
        g->key = k;
        g->log = l;
        g->sim = x;
        g->log_share = ln > 0 ? l / ln : 0;
        g->sim_share = sn > 0 ? x / sn : 0;
        g->tolerance = REP_SHARE_TOLERANCE;
        g->within_tolerance = fabs(g->sim_share - g->log_share) <= REP_SHARE_TOLERANCE + 1e-9;
    }
}

static void add_statuses(rep_figure *out, size_t cap, size_t *n, const sim_observed *o,
                         const sim_breakdown *b) {
    char name[48];
    for (int k = 0; k < SIM_STATUS_MAX; k++) {
        if (o->status[k] == 0 && b->status[k] == 0) continue;
        snprintf(name, sizeof name, "status %d", k);
        add_count(out, cap, n, name, REP_GROUP_STATUS, k, (double)o->status[k],
                  (double)b->status[k]);
    }
    for (int k = 0; k < SIM_ANSWER_WORDS; k++) {
        if (o->words[k] == 0 && b->words[k] == 0) continue;
        snprintf(name, sizeof name, "status %s", sim_answer_word_name((sim_answer_word)k));
        add_count(out, cap, n, name, REP_GROUP_STATUS, 0, (double)o->words[k], (double)b->words[k]);
    }
}

/* The log's count for end cause `name`, 0 when it names none. */
static uint64_t observed_end(const sim_observed *o, const char *name) {
    for (uint32_t i = 0; i < o->end_n; i++)
        if (strcmp(o->end_name[i], name) == 0) return o->end_count[i];
    return 0;
}

static void add_ends(rep_figure *out, size_t cap, size_t *n, const sim_observed *o,
                     const sim_summary *s) {
    char name[48];
    for (int e = 0; e < SIM_END_COUNT; e++) {
        uint64_t l = observed_end(o, sim_end_name((sim_end)e));
        if (l == 0 && s->ended[e] == 0) continue;
        snprintf(name, sizeof name, "end %s", sim_end_name((sim_end)e));
        add_count(out, cap, n, name, REP_GROUP_END, e, (double)l, (double)s->ended[e]);
    }
}

size_t rep_observed_figures(const sim_scenario *sc, const sim_summary *s, rep_figure *out,
                            size_t cap) {
    const sim_observed *o = &sc->observed;
    size_t n = 0;
    if (!o->present) return 0;
    add_count(out, cap, &n, "requests", REP_GROUP_TOTALS, 0, (double)o->requests,
              (double)s->requests);
    add_count(out, cap, &n, "attempts", REP_GROUP_TOTALS, 0, (double)o->attempts,
              (double)s->attempts);
    add_count(out, cap, &n, "retries", REP_GROUP_TOTALS, 0, (double)o->retries, (double)s->retries);
    add_latency(out, cap, &n, "latency_p50", o->latency_p50_us, fb_hist_percentile(&s->latency, 50),
                &o->latency_rank[0]);
    add_latency(out, cap, &n, "latency_p90", o->latency_p90_us, fb_hist_percentile(&s->latency, 90),
                &o->latency_rank[1]);
    add_latency(out, cap, &n, "latency_p99", o->latency_p99_us, fb_hist_percentile(&s->latency, 99),
                &o->latency_rank[2]);
    add_buckets(out, cap, &n, o, &s->breakdown);
    add_statuses(out, cap, &n, o, &s->breakdown);
    add_ends(out, cap, &n, o, s);
    add_noise(o, out, n);
    return n;
}

double rep_quantile_spread(const fb_hist *h, double q, double toward) {
    double n = (double)fb_hist_count(h);
    if (n <= 0) return 0;
    double dp = 100 * (3 * sqrt(n * q * (1 - q)) + 1) / n,
           x = (double)fb_hist_percentile(h, 100 * q);
    if (toward < x) return x - (double)fb_hist_percentile(h, fmax(0, 100 * q - dp));
    return (double)fb_hist_percentile(h, fmin(100, 100 * q + dp)) - x;
}

void rep_figure_cell(char *buf, size_t len, const rep_figure *g, bool log) {
    double v = log ? g->log : g->sim;
    if (g->kind == REP_FIGURE_LATENCY)
        rep_format_duration(buf, len, v);
    else if (g->kind == REP_FIGURE_BUCKET)
        snprintf(buf, len, "%.0f (%.1f%%)", v, 100 * (log ? g->log_share : g->sim_share));
    else
        snprintf(buf, len, "%.0f", v);
}

void rep_figure_tolerance(char *buf, size_t len, const rep_figure *g) {
    if (g->kind == REP_FIGURE_LATENCY)
        snprintf(buf, len, "+-%.0f%%", 100 * REP_LATENCY_TOLERANCE);
    else if (g->kind == REP_FIGURE_BUCKET)
        snprintf(buf, len, "+-%.0f pts", 100 * REP_SHARE_TOLERANCE);
    else
        snprintf(buf, len, "+-%.0f", g->tolerance);
}

void rep_figure_noise(char *buf, size_t len, const rep_figure *g) {
    char d[32];
    if (g->noise <= 0) {
        snprintf(buf, len, "-");
    } else if (g->kind == REP_FIGURE_LATENCY) {
        rep_format_duration(d, sizeof d, g->noise);
        snprintf(buf, len, "+-%.20s", d);
    } else if (g->kind == REP_FIGURE_BUCKET) {
        snprintf(buf, len, "+-%.1f pts", 100 * g->noise);
    } else {
        snprintf(buf, len, "+-%.0f", g->noise);
    }
}

void rep_figure_mark(char *buf, size_t len, const rep_figure *g) {
    if (!g->within)
        snprintf(buf, len, "  MISS");
    else if (g->cliff)
        snprintf(buf, len, "  (on a cliff: within 10%% of the log's p%.4g..p%.4g)",
                 100 * g->rank.from, 100 * g->rank.to);
    else if (!g->within_tolerance)
        snprintf(buf, len, "  (noise)");
    else
        snprintf(buf, len, "%s", "");
}

int rep_observed_text(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    const sim_summary *s = NULL;
    for (size_t i = 0; i < n && sc->observed.present; i++)
        if (strcmp(sums[i]->variant, sc->observed.variant) == 0) s = sums[i];
    if (s == NULL) return 0;
    rep_figure g[REP_FIGURES_MAX];
    size_t k = rep_observed_figures(sc, s, g, REP_FIGURES_MAX);
    int misses = 0;
    fprintf(f, "the log beside %s (docs/import.md, \"Fidelity\")\n", s->variant);
    fprintf(f, "%-24s %14s %14s %10s %11s\n", "", "log", s->variant, "tolerance", "noise");
    for (size_t i = 0; i < k; i++) {
        char l[48], x[48], t[32], z[40], m[64];
        rep_figure_cell(l, sizeof l, &g[i], true);
        rep_figure_cell(x, sizeof x, &g[i], false);
        rep_figure_tolerance(t, sizeof t, &g[i]);
        rep_figure_noise(z, sizeof z, &g[i]);
        rep_figure_mark(m, sizeof m, &g[i]);
        fprintf(f, "%-24s %14s %14s %10s %11s%s\n", g[i].name, l, x, t, z, m);
        misses += !g[i].within;
    }
    return misses;
}
