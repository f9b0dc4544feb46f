/*
 * html.c - report.html: one self-contained page (charts as SVG data URIs,
 * no script, no network), the same numbers as the text summary and
 * report.json. Every string from the scenario is escaped. See
 * docs/reports.md.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/version.h"
#include "reports/breakdown.h"
#include "reports/charts.h"
#include "reports/report.h"
#include "reports/settings.h"
#include "reports/verdict.h"
#include "sim/metrics.h"
#include "util/base64.h"
#include "util/file.h"

static const char css[] =
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
    "color:#222;max-width:1180px;margin:2em auto;padding:0 1em}\n"
    "h1{font-size:1.7em;margin-bottom:.1em}\n"
    "h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\n"
    "p.desc{font-size:1.1em;color:#444;margin-top:.2em;max-width:60em}\n"
    "p.incident{color:#555;font-style:italic;max-width:60em}\n"
    "dl.facts{display:grid;grid-template-columns:max-content auto;gap:.1em 1.2em}\n"
    "dl.facts dt{color:#666}\n"
    "dl.facts dd{margin:0;overflow-wrap:anywhere}\n"
    /* a wide table scrolls inside its box: the page itself never grows past the window */
    "div.scroll{overflow-x:auto;max-width:100%}\n"
    "p.verdict{font-size:1.08em;max-width:60em;background:#f3f7fb;border-left:4px solid #0072b2;"
    "padding:.6em 1em}\n"
    "ul.settings{margin:.1em 0 .4em;padding-left:1.2em}\n"
    "div.vdesc{color:#666;font-size:.9em;max-width:22em}\n"
    "span.bar{display:inline-block;height:.7em;margin-left:.4em;vertical-align:0;"
    "border-radius:2px}\n"
    "td.bar{white-space:nowrap;min-width:9em}\n"
    "table{border-collapse:collapse;margin:.5em 0 1em;font-variant-numeric:tabular-nums}\n"
    "th,td{padding:.25em .7em;border-bottom:1px solid #e6e6e6;vertical-align:top}\n"
    "th{text-align:left;background:#f4f4f4;font-weight:600}\n"
    "td.n,th.n{text-align:right}\n"
    "td.n{white-space:nowrap}\n"
    "tr.sub td:first-child{padding-left:1.8em;color:#555}\n"
    "tr.first td{border-top:2px solid #ccc}\n"
    "span.sw{display:inline-block;width:.8em;height:.8em;margin-right:.35em;"
    "vertical-align:-.05em;border-radius:2px}\n"
    ".note{background:#fff4e0;border-left:4px solid #e69f00;padding:.5em 1em}\n"
    ".warn{background:#fdecea;border-left:6px solid #c0392b;padding:.3em 1em;margin:1em 0}\n"
    "section.chart{margin:1.2em 0 2.2em}\n"
    "section.chart img{max-width:100%;height:auto;border:1px solid #eee}\n"
    "p.caption{color:#444;margin:.2em 0 .6em;max-width:60em}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}\n"
    "footer{margin-top:3em;color:#777;font-size:.9em}\n";

static void esc(FILE *f, const char *s) {
    rep_escape_markup(f, s);
}

/* <tag>text</tag>, escaped. */
static void tag(FILE *f, const char *open, const char *text, const char *close) {
    fputs(open, f);
    esc(f, text);
    fputs(close, f);
}

/* The page's warning: its first line in bold, each further line an item. */
static void write_warning(FILE *f, const char *warning) {
    fputs("<div class=\"warn\" id=\"warning\">\n<p><b>", f);
    char line[2048];
    bool first = true;
    for (const char *p = warning; *p != '\0';) {
        const char *eol = strchr(p, '\n');
        size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (first) {
            esc(f, line);
            fputs("</b></p>\n<ul>\n", f);
            first = false;
        } else if (line[0] != '\0') {
            tag(f, "<li>", line, "</li>\n");
        }
        p += len + (eol != NULL ? 1 : 0);
    }
    fputs(first ? "</b></p>\n</div>\n" : "</ul>\n</div>\n", f);
}

static void variant_head(FILE *f, const sim_scenario *sc, const char *variant) {
    fprintf(f, "<th class=\"n\"><span class=\"sw\" style=\"background:%s\"></span>",
            rep_chart_variant_color(sc, variant));
    esc(f, variant);
    fputs("</th>", f);
}

static void write_facts(FILE *f, const sim_scenario *sc) {
    char buf[64], tick[64];
    fputs("<dl class=\"facts\">\n", f);
    tag(f, "<dt>scenario file</dt><dd><code>", sc->file, "</code></dd>\n");
    fprintf(f, "<dt>seed</dt><dd>%" PRIu64 "</dd>\n", sc->seed);
    rep_format_duration(buf, sizeof buf, (double)sc->duration_us);
    rep_format_duration(tick, sizeof tick, (double)sc->tick_us);
    fprintf(f, "<dt>simulated</dt><dd>%s, one time-series row every %s</dd>\n", buf, tick);
    rep_format_duration(buf, sizeof buf, (double)sc->slo_latency_us);
    fprintf(f, "<dt>latency SLO</dt><dd>%s</dd>\n", buf);
    fprintf(f, "<dt>pods</dt><dd>%u pods &times; %u workers, queue %u per pod</dd>\n",
            sc->pods.count, sc->pods.workers, sc->pods.queue);
    fputs("<dt>traffic</dt><dd>", f);
    for (uint32_t k = 0; k < sc->class_count; k++) {
        const sim_class *cl = &sc->classes[k];
        if (k) fputs("; ", f);
        esc(f, cl->name);
        if (cl->arrivals == SIM_ARR_CLOSED)
            fprintf(f, " (%u users", cl->users);
        else if (cl->turns)
            fprintf(f, " (%g/s in %u sessions", cl->rate, cl->turns_count);
        else
            fprintf(f, " (%g/s", cl->rate);
        if (cl->target == SIM_TARGET_NONE)
            fputs(", no LLM)", f);
        else if (cl->target == SIM_TARGET_PROVIDER)
            tag(f, ", calls ", sc->providers[cl->provider].name, ")");
        else
            fputs(", LLM)", f);
    }
    fputs("</dd>\n<dt>providers</dt><dd>", f);
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        if (p) fputs(", ", f);
        esc(f, sc->providers[p].name);
    }
    fputs("</dd>\n<dt>reproduce</dt><dd><code>fusebox run ", f);
    esc(f, sc->file);
    fprintf(f,
            " --seed %" PRIu64 "</code> (plus any <code>--set</code> used: report.json "
            "holds the scenario as run)</dd>\n",
            sc->seed);
    fputs("<dt>fusebox</dt><dd>" FB_VERSION "</dd>\n</dl>\n", f);
}

/* A string member of a JSON object, or NULL. */
static const char *json_str(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void write_variants(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    const cJSON *variants = cJSON_GetObjectItemCaseSensitive((const cJSON *)sc->json, "variants");
    fputs("<h2 id=\"variants\">Variants</h2>\n<p>The settings in effect, with every default "
          "filled in as the run used it.</p>\n<div class=\"scroll\"><table>\n<tr>"
          "<th>variant</th><th>fallback chain</th><th>settings in effect</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        int v = scn_variant(sc, sums[i]->variant);
        const char *desc =
            json_str(cJSON_GetObjectItemCaseSensitive(variants, sums[i]->variant), "description");
        fprintf(f, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>",
                rep_chart_variant_color(sc, sums[i]->variant));
        esc(f, sums[i]->variant);
        if (desc && desc[0]) tag(f, "<div class=\"vdesc\">", desc, "</div>");
        fputs("</td><td>", f);
        if (v >= 0) {
            const sim_policy *pol = &sc->variants[v];
            const sim_layer *router = scn_policy_router(pol);
            for (uint32_t k = 0; k < router->order_len; k++) {
                if (k) fputs(" &rarr; ", f);
                esc(f, sc->providers[router->order[k]].name);
            }
            fputs("</td><td>", f);
            rep_settings_html(f, sc, pol);
        } else {
            fputs("</td><td>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* More than two variants: one row each, a column per headline figure, the best marked. */
static void write_verdict_table(FILE *f, const sim_scenario *sc, sim_summary *const *sums,
                                size_t n) {
    if (n < REP_VERDICT_TABLE_FROM) return;
    fputs("<div class=\"scroll\"><table class=\"verdict\">\n<tr><th>variant</th>", f);
    for (size_t k = 0; k < rep_verdict_columns(); k++)
        tag(f, "<th>", rep_verdict_column(k), "</th>");
    fputs("</tr>\n", f);
    for (size_t i = 0; i < n; i++) {
        tag(f, "<tr><td>", sums[i]->variant, "</td>");
        for (size_t k = 0; k < rep_verdict_columns(); k++) {
            char cell[64];
            rep_verdict_mark m = rep_verdict_cell(cell, sizeof cell, sc, sums, n, i, k);
            tag(f,
                m == REP_MARK_BEST    ? "<td class=\"n best\" title=\"the best\"><b>"
                : m == REP_MARK_LEVEL ? "<td class=\"n level\" title=\"level with the best "
                                        "within noise\">"
                                      : "<td class=\"n\">",
                cell,
                m == REP_MARK_BEST    ? " *</b></td>"
                : m == REP_MARK_LEVEL ? " =</td>"
                                      : "</td>");
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p class=\"note\">* the best of its column; = level with the best "
          "within noise (shares: the 95% binomial interval; others: 2%).</p>\n",
          f);
}

static void write_verdict(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    char verdict[REP_VERDICT_MAX];
    fputs("<h2 id=\"verdict\">Verdict</h2>\n", f);
    write_verdict_table(f, sc, sums, n);
    tag(f, "<p class=\"verdict\">", rep_verdict(verdict, sizeof verdict, sc, sums, n, 0), "</p>\n");
}

/* A cell with its value and a bar of `share` (0..1) in the variant's colour. */
static void bar_cell(FILE *f, const char *text, double share, const char *color) {
    if (!(share >= 0)) share = 0;
    fputs("<td class=\"n bar\">", f);
    esc(f, text);
    fprintf(f, "<span class=\"bar\" style=\"width:%.1fem;background:%s\"></span></td>",
            fmin(share, 1) * 6, color);
}

static void class_row(FILE *f, const sim_scenario *sc, const sim_summary *s, uint32_t c,
                      bool first) {
    static const struct {
        const char *metric;
        rep_show show;
        bool bar;
    } cols[] = {{"class_requests", REP_SHOW_COUNT, false},
                {"class_success_rate", REP_SHOW_PERCENT, false},
                {"class_errors", REP_SHOW_COUNT, false},
                {"class_slo_missed", REP_SHOW_COUNT, false},
                {"class_bad_rate", REP_SHOW_PERCENT, true},
                {"class_latency_p50", REP_SHOW_DURATION, false},
                {"class_latency_p99", REP_SHOW_DURATION, false}};
    const char *color = rep_chart_variant_color(sc, s->variant);
    fputs(first ? "<tr class=\"first\">" : "<tr>", f);
    tag(f, "<td>", first ? sc->classes[c].name : "", "</td>");
    fprintf(f, "<td><span class=\"sw\" style=\"background:%s\"></span>", color);
    tag(f, "", s->variant, "</td>");
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        char name[SIM_NAME_MAX + 48], buf[64];
        snprintf(name, sizeof name, "%s[%s]", cols[k].metric, sc->classes[c].name);
        double v = sim_metric_get(sc, s, name);
        rep_format_show(buf, sizeof buf, cols[k].show, v, true);
        if (cols[k].bar)
            bar_cell(f, buf, v, color);
        else
            tag(f, "<td class=\"n\">", buf, "</td>");
    }
    fputs("</tr>\n", f);
}

static void write_classes(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    fputs("<h2 id=\"classes\">Traffic classes</h2>\n<p>Each class's requests under each "
          "variant. A class that calls no LLM shares the pods' workers and queues with those "
          "that do: what it suffers is collateral damage. The bar is the share of the class's "
          "requests that failed or answered later than the SLO (full width: all of them).</p>\n"
          "<div class=\"scroll\"><table>\n<tr><th>class</th><th>variant</th>"
          "<th class=\"n\">requests</th><th class=\"n\">success rate</th>"
          "<th class=\"n\">errors</th><th class=\"n\">later than SLO</th>"
          "<th class=\"n\">failed or late</th><th class=\"n\">p50</th>"
          "<th class=\"n\">p99</th></tr>\n",
          f);
    for (uint32_t c = 0; c < sc->class_count; c++)
        for (size_t i = 0; i < n; i++) class_row(f, sc, sums[i], c, i == 0);
    fputs("</table></div>\n", f);
}

static void write_summary(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    fputs("<h2 id=\"summary\">Summary</h2>\n<div class=\"scroll\"><table>\n<tr><th>metric</th>", f);
    for (size_t i = 0; i < n; i++) variant_head(f, sc, sums[i]->variant);
    fputs("</tr>\n", f);
    size_t nrows;
    const rep_summary_row *rows = rep_summary_rows(&nrows);
    for (size_t r = 0; r < nrows; r++) {
        if (!rep_summary_row_shown(sc, &rows[r])) continue;
        const sim_metric *d = sim_metric_find(rows[r].metric);
        fputs(rows[r].sub ? "<tr class=\"sub\"><td" : "<tr><td", f);
        if (d) tag(f, " title=\"", d->definition, "\"");
        fputc('>', f);
        esc(f, rows[r].label);
        fputs("</td>", f);
        for (size_t i = 0; i < n; i++) {
            char buf[64];
            rep_summary_cell(buf, sizeof buf, sc, sums[i], &rows[r], true);
            tag(f, "<td class=\"n\">", buf, "</td>");
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n<p>Hover a metric for its definition (docs/metrics.md has them all). "
          "Spillover marked + had not returned to baseline when the run ended.</p>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        if (sums[i]->complete) continue;
        fputs("<p class=\"note\">Variant ", f);
        tag(f, "<b>", sums[i]->variant, "</b> stopped early: ");
        esc(f, sums[i]->stop_reason);
        fputs(". Its numbers cover the simulated time up to then.</p>\n", f);
    }
}

static void cell_metric(FILE *f, const sim_scenario *sc, const sim_summary *s, const char *base,
                        const char *provider, rep_show k) {
    char name[SIM_NAME_MAX + 32], buf[64];
    snprintf(name, sizeof name, "%s[%s]", base, provider);
    rep_format_show(buf, sizeof buf, k, sim_metric_get(sc, s, name), true);
    tag(f, "<td class=\"n\">", buf, "</td>");
}

/* An outcome's column head, "rate limited" for rate_limited: heads may wrap, names do not. */
static void outcome_head(FILE *f, fb_outcome o) {
    char name[64];
    snprintf(name, sizeof name, "%s", fb_outcome_name(o));
    for (char *p = name; *p; p++)
        if (*p == '_') *p = ' ';
    tag(f, "<th class=\"n\">", name, "</th>");
}

/* One table's rows, per variant and provider: attempts by outcome, or cost and breakers. */
static void provider_rows(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                          const bool *shown, bool money) {
    for (size_t i = 0; i < n; i++) {
        const sim_summary *s = sums[i];
        for (uint32_t p = 0; p < sc->provider_count; p++) {
            const char *pn = sc->providers[p].name;
            const sim_provider_summary *ps = &s->providers[p];
            fputs(p == 0 ? "<tr class=\"first\">" : "<tr>", f);
            tag(f, "<td>", p == 0 ? s->variant : "", "</td>");
            tag(f, "<td>", pn, "</td>");
            if (money) {
                cell_metric(f, sc, s, "cost_usd", pn, REP_SHOW_USD);
                fprintf(f, "<td class=\"n\">$%.2f</td>", ps->cost_wasted_usd);
                cell_metric(f, sc, s, "breaker_opens", pn, REP_SHOW_COUNT);
                cell_metric(f, sc, s, "breaker_open_time", pn, REP_SHOW_DURATION);
                cell_metric(f, sc, s, "breaker_rejections", pn, REP_SHOW_COUNT);
            } else {
                cell_metric(f, sc, s, "attempts", pn, REP_SHOW_COUNT);
                for (int o = 0; o < FB_OUT_COUNT; o++)
                    if (shown[o]) {
                        char buf[32];
                        rep_format_show(buf, sizeof buf, REP_SHOW_COUNT, (double)ps->outcomes[o],
                                        true);
                        tag(f, "<td class=\"n\">", buf, "</td>");
                    }
            }
            fputs("</tr>\n", f);
        }
    }
}

/* Two tables, so that each fits a narrow window: attempts by outcome; cost and breakers. */
static void write_providers(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    /* outcomes no attempt had are left out: the table stays narrow */
    bool shown[FB_OUT_COUNT] = {[FB_OUT_SUCCESS] = true};
    for (size_t i = 0; i < n; i++)
        for (uint32_t p = 0; p < sc->provider_count; p++)
            for (int o = 0; o < FB_OUT_COUNT; o++)
                shown[o] |= sums[i]->providers[p].outcomes[o] > 0;
    fputs("<h2 id=\"providers\">Providers</h2>\n<p>Attempts each provider received and how the "
          "client classified them (outcomes no attempt had are left out):</p>\n"
          "<div class=\"scroll\"><table>\n<tr><th>variant</th><th>provider</th>"
          "<th class=\"n\">attempts</th>",
          f);
    for (int o = 0; o < FB_OUT_COUNT; o++)
        if (shown[o]) outcome_head(f, (fb_outcome)o);
    fputs("</tr>\n", f);
    provider_rows(f, sc, sums, n, shown, false);
    fputs("</table></div>\n<p>What each provider billed, including the tokens of failed and "
          "abandoned attempts (wasted), and its breakers. Breaker open time is per pod "
          "(averaged over pods), or the shared store's.</p>\n<div class=\"scroll\"><table>\n"
          "<tr><th>variant</th><th>provider</th><th class=\"n\">cost</th>"
          "<th class=\"n\">wasted</th><th class=\"n\">breaker opens</th>"
          "<th class=\"n\">open time</th><th class=\"n\">rejected by breaker</th></tr>\n",
          f);
    provider_rows(f, sc, sums, n, shown, true);
    fputs("</table></div>\n", f);
}

static const sim_fault_summary *find_fault(const sim_summary *s, uint32_t p, uint32_t k) {
    for (uint32_t i = 0; i < s->fault_count; i++)
        if (!s->faults[i].spike && !s->faults[i].store && s->faults[i].provider == p &&
            s->faults[i].fault == k)
            return &s->faults[i];
    return NULL;
}

/* A disturbance's spillover, "(not recovered)", or "undetermined" with the reason on hover. */
static void spillover_cell(FILE *f, const sim_scenario *sc, const sim_fault_summary *fs) {
    char buf[256];
    if (fs->undetermined != SIM_DETERMINED) {
        rep_undetermined_reason(buf, sizeof buf, sc, fs);
        tag(f, "<td class=\"n\" title=\"", buf, "\">undetermined</td>");
        return;
    }
    rep_format_duration(buf, sizeof buf, (double)fs->spillover_us);
    if (!fs->recovered) strncat(buf, " (not recovered)", sizeof buf - strlen(buf) - 1);
    tag(f, "<td class=\"n\">", buf, "</td>");
}

static void write_faults(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    fputs("<h2 id=\"spillover\">Faults and spillover</h2>\n", f);
    uint32_t faults = 0;
    for (uint32_t p = 0; p < sc->provider_count; p++) faults += sc->providers[p].fault_count;
    for (uint32_t c = 0; c < sc->class_count; c++) faults += sc->classes[c].spike_count;
    if (faults == 0) {
        fputs("<p>The scenario scripts no faults or traffic spikes.</p>\n", f);
        return;
    }
    fputs("<p>Spillover is how long after a fault ended the error rate and p99 latency took to "
          "get back to their baseline (from before the first disturbance) and stay there. "
          "&ldquo;not recovered&rdquo; means they had not by the end of the run; the time "
          "shown is until then. &ldquo;undetermined&rdquo; means no full spillover.hold "
          "window fitted after it before traffic ended (hover for why).</p>\n<div "
          "class=\"scroll\"><table>\n"
          "<tr><th>provider</th><th>fault</th>"
          "<th class=\"n\">from</th><th class=\"n\">to</th>",
          f);
    for (size_t i = 0; i < n; i++) variant_head(f, sc, sums[i]->variant);
    fputs("</tr>\n", f);
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        for (uint32_t k = 0; k < sc->providers[p].fault_count; k++) {
            const sim_fault *fa = &sc->providers[p].faults[k];
            char buf[96];
            tag(f, "<tr><td>", sc->providers[p].name, "</td><td>");
            esc(f, scn_fault_kind_name(fa->kind));
            if (fa->status > 0) fprintf(f, " %d", fa->status);
            if (fa->fraction > 0 && fa->fraction < 1)
                fprintf(f, " (%.0f%% of attempts)", fa->fraction * 100);
            rep_format_duration(buf, sizeof buf, (double)fa->at_us);
            tag(f, "</td><td class=\"n\">", buf, "</td>");
            rep_format_duration(buf, sizeof buf, (double)fb_time_add(fa->at_us, fa->for_us));
            tag(f, "<td class=\"n\">", buf, "</td>");
            for (size_t i = 0; i < n; i++) {
                const sim_fault_summary *fs = find_fault(sums[i], p, k);
                if (fs == NULL) {
                    fputs("<td class=\"n\">&mdash;</td>", f);
                    continue;
                }
                spillover_cell(f, sc, fs);
            }
            fputs("</tr>\n", f);
        }
    }
    for (size_t i = 0; n > 0 && i < sums[0]->fault_count; i++) {
        const sim_fault_summary *fs0 = &sums[0]->faults[i];
        if (!fs0->spike) continue;
        const sim_spike *sp = &sc->classes[fs0->cls].spikes[fs0->fault];
        char buf[96];
        tag(f, "<tr><td>traffic: ", sc->classes[fs0->cls].name, "</td><td>");
        fprintf(f, "spike to %.0f/s", sp->rate);
        rep_format_duration(buf, sizeof buf, (double)fs0->start_us);
        tag(f, "</td><td class=\"n\">", buf, "</td>");
        rep_format_duration(buf, sizeof buf, (double)fs0->end_us);
        tag(f, "<td class=\"n\">", buf, "</td>");
        for (size_t v = 0; v < n; v++) {
            /* every variant lists the same windows in the same order */
            spillover_cell(f, sc, &sums[v]->faults[i]);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

/* The file as a base64 data URI. Returns false when it cannot be read. */
static bool data_uri(FILE *out, const char *path, const char *mime) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    bool ok = util_data_uri(out, f, mime) == 0;
    fclose(f);
    return ok;
}

static void write_charts(FILE *f, const char *dir, const sim_scenario *sc, sim_summary *const *sums,
                         size_t n, const char *note) {
    size_t count;
    const rep_chart_info *infos = rep_chart_list(&count);
    fputs("<h2 id=\"charts\">Charts</h2>\n", f);
    if (note) tag(f, "<p class=\"note\">", note, "</p>\n");
    for (size_t k = 0; k < count; k++) {
        char path[1200];
        if (!rep_chart_applies(sc, sums, n, infos[k].name)) continue;
        snprintf(path, sizeof path, "%s/charts/%s.svg", dir, infos[k].name);
        struct stat st;
        if (note && stat(path, &st) != 0) continue;
        fprintf(f, "<section class=\"chart\" id=\"chart-%s\">\n", infos[k].name);
        tag(f, "<h3>", infos[k].title, "</h3>\n");
        tag(f, "<p class=\"caption\">", rep_chart_caption(sc, &infos[k]), "</p>\n");
        fputs("<img alt=\"", f);
        esc(f, infos[k].title);
        fputs("\" src=\"", f);
        if (!data_uri(f, path, "image/svg+xml")) {
            fputs("\">\n<p class=\"note\">This chart is missing: ", f);
            esc(f, path);
            fputs(" cannot be read.</p>\n</section>\n", f);
            continue;
        }
        fputs("\">\n</section>\n", f);
    }
}

static void file_link(FILE *f, const char *href, const char *what) {
    tag(f, "<li><a href=\"", href, "\">");
    esc(f, href);
    tag(f, "</a> &mdash; ", what, "</li>\n");
}

static void write_files(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    size_t count;
    const rep_chart_info *infos = rep_chart_list(&count);
    fputs("<h2 id=\"files\">Files</h2>\n<p>Beside this page, in the same folder "
          "(docs/reports.md describes each):</p>\n<ul>\n",
          f);
    file_link(f, "report.json", "every summary metric per variant, and the scenario as run");
    file_link(f, "timeseries.csv", "one row per variant per tick: the data behind the charts");
    file_link(f, "events.jsonl", "breaker transitions and fault starts and ends, one per line");
    for (size_t k = 0; k < count; k++) {
        char href[96];
        if (!rep_chart_applies(sc, sums, n, infos[k].name)) continue;
        fprintf(f, "<li>");
        esc(f, infos[k].title);
        fputs(":", f);
        static const char *const ext[] = {"png", "svg", "gp"};
        for (size_t e = 0; e < 3; e++) {
            snprintf(href, sizeof href, "charts/%s.%s", infos[k].name, ext[e]);
            tag(f, " <a href=\"", href, "\">");
            esc(f, href + 7);
            fputs("</a>", f);
        }
        fputs("</li>\n", f);
    }
    fputs("<li>chart data (gnuplot reads these):", f);
    for (size_t i = 0; i < n; i++) {
        char href[SIM_NAME_MAX + 32];
        rep_chart_data_file(href, sizeof href, sums[i]->variant);
        fputs(" <a href=\"charts/", f);
        esc(f, href);
        tag(f, "\">", href, "</a>");
    }
    fputs(" <a href=\"charts/compare.dat\">compare.dat</a> <a "
          "href=\"charts/classes.dat\">classes.dat</a>"
          "</li>\n</ul>\n",
          f);
}

int rep_html(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n,
             const char *warning, const char *note, char *msg, size_t msglen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/report.html", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(msg, msglen, "cannot write %s: %s", path, strerror(errno));
        return FB_EIO;
    }
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive((const cJSON *)sc->json, "description");
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
          f);
    tag(f, "<title>fusebox: ", sc->name, "</title>\n");
    fprintf(f, "<style>\n%s</style>\n</head>\n<body>\n", css);
    tag(f, "<h1>", sc->name, "</h1>\n");
    if (cJSON_IsString(desc) && desc->valuestring[0])
        tag(f, "<p class=\"desc\">", desc->valuestring, "</p>\n");
    const char *incident = json_str((const cJSON *)sc->json, "incident");
    if (incident && incident[0]) tag(f, "<p class=\"incident\">Reproduces: ", incident, "</p>\n");
    if (warning != NULL && warning[0] != '\0') write_warning(f, warning);
    write_verdict(f, sc, sums, n);
    write_facts(f, sc);
    fputs("<p><a href=\"#verdict\">Verdict</a> &middot; <a href=\"#variants\">Variants</a> "
          "&middot; <a href=\"#summary\">Summary</a> &middot; <a href=\"#classes\">Traffic "
          "classes</a> &middot; <a href=\"#providers\">Providers</a> "
          "&middot; <a href=\"#spillover\">Faults and spillover</a> &middot; "
          "<a href=\"#charts\">Charts</a> &middot; <a href=\"#files\">Files</a></p>\n",
          f);
    write_variants(f, sc, sums, n);
    write_summary(f, sc, sums, n);
    rep_breakdown_html(f, sums, n);
    write_classes(f, sc, sums, n);
    write_providers(f, sc, sums, n);
    write_faults(f, sc, sums, n);
    write_charts(f, dir, sc, sums, n, note);
    write_files(f, sc, sums, n);
    fputs(
        "<footer>Written by fusebox " FB_VERSION " from the run's own outputs: the same "
        "scenario, seed, fusebox and gnuplot versions give the same page, byte for byte.</footer>\n"
        "</body>\n</html>\n",
        f);
    int err = util_fclose_checked(f);
    if (err != 0) {
        snprintf(msg, msglen, "cannot write %s: %s", path, strerror(err));
        return FB_EIO;
    }
    return FB_OK;
}
