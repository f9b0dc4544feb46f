/* test_charts.c - gnuplot charts and report.html on a synthetic run folder. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/charts.h"
#include "reports/gnuplot.h"
#include "reports/report.h"
#include "tests/unit/helpers.h"

static const char hostile[] = "Primary <script>alert('x')</script> & \"friends\" fail";

typedef struct fixture {
    char dir[64];
    sim_scenario *sc;
    sim_summary *sums[2];
} fixture;

static sim_scenario *make_scenario(fb_time_us duration_us, fb_time_us tick_us) {
    sim_scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    snprintf(sc->name, sizeof sc->name, "retry-storm");
    snprintf(sc->file, sizeof sc->file, "scenarios/retry-storm.json");
    sc->seed = 42;
    sc->duration_us = duration_us;
    sc->tick_us = tick_us;
    sc->slo_latency_us = 10 * S;
    sc->pods = (sim_pods){4, 8, 16, 60 * S};
    sc->provider_count = 2;
    snprintf(sc->providers[0].name, SIM_NAME_MAX, "openai");
    snprintf(sc->providers[1].name, SIM_NAME_MAX, "anthropic");
    sc->providers[0].fault_count = 1;
    sc->providers[0].faults[0] = (sim_fault){
        .kind = SIM_FAULT_OUTAGE, .at_us = 30 * S, .for_us = 40 * S, .fraction = 1, .status = 503};
    sc->class_count = 1;
    snprintf(sc->classes[0].name, SIM_NAME_MAX, "chat");
    sc->classes[0].spike_count = 1;
    sc->classes[0].spikes[0] = (sim_spike){90 * S, 5 * S, 40};
    sc->variant_count = 2;
    snprintf(sc->variants[0].name, SIM_NAME_MAX, "naive");
    snprintf(sc->variants[1].name, SIM_NAME_MAX, "tuned");
    for (int v = 0; v < 2; v++) {
        sc->variants[v].layer_count = 1;
        sc->variants[v].stack.depth = 1;
    }
    sc->variants[1].layers[0].per_provider[0].has_breaker = true;
    sc->variants[1].layers[0].per_provider[1].has_breaker = true;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", sc->name);
    cJSON_AddStringToObject(j, "description", hostile);
    sc->json = j;
    return sc;
}

/* The features that have charts of their own (or, the store's outages, an overlay), each used
 * by tuned alone where a variant can use it: naive is the variant without. */
enum { F_LIMIT, F_POOL, F_AUTOSCALE, F_RESUBMIT, F_STORE, F_COUNT };

static void use_feature(sim_scenario *sc, int feature) {
    switch (feature) {
    case F_LIMIT:
        sc->variants[1].layers[0].per_provider[0].has_conclimit = true;
        break;
    case F_POOL:
        sc->variants[1].layers[0].has_pool = true;
        break;
    case F_AUTOSCALE:
        sc->variants[1].autoscale.on = true;
        break;
    case F_RESUBMIT:
        sc->classes[0].resubmit.probability = 0.5;
        break;
    default:
        sc->store_outage_count = 1;
        sc->store_outages[0] = (sim_store_window){.at_us = 80 * S, .for_us = 10 * S};
    }
}

static void use_every_feature(sim_scenario *sc) {
    for (int k = 0; k < F_COUNT; k++) use_feature(sc, k);
}

static void free_scenario(sim_scenario *sc) {
    cJSON_Delete(sc->json);
    free(sc);
}

static sim_summary *make_summary(const char *variant, bool tuned) {
    sim_summary *s = th_summary(variant);
    s->complete = true;
    s->requests = 1200;
    s->ended[SIM_END_SUCCESS] = tuned ? 1190 : 800;
    s->ended[SIM_END_EXHAUSTED] = tuned ? 10 : 400;
    s->errors = s->ended[SIM_END_EXHAUSTED];
    s->success_fallback = tuned ? 390 : 0;
    s->success_primary = s->ended[SIM_END_SUCCESS] - s->success_fallback;
    s->attempts = tuned ? 1500 : 4800;
    s->cost_usd = tuned ? 3.5 : 9.25;
    fb_hist_record_n(&s->latency, 800000, 1000);
    fb_hist_record_n(&s->latency, tuned ? 2000000 : 30000000, 200);
    s->providers[0].attempts = tuned ? 1100 : 4800;
    s->providers[0].outcomes[FB_OUT_SUCCESS] = 800;
    s->providers[0].outcomes[FB_OUT_TRANSIENT] = s->providers[0].attempts - 800;
    s->providers[0].cost_usd = tuned ? 2 : 9.25;
    s->providers[1].attempts = tuned ? 400 : 0;
    s->providers[1].outcomes[FB_OUT_SUCCESS] = tuned ? 390 : 0;
    s->providers[0].breaker_opens = tuned ? 4 : 0;
    s->providers[0].breaker_open_s = tuned ? 38 : 0;
    s->fault_count = 1;
    s->faults[0] = (sim_fault_summary){.provider = 0,
                                       .fault = 0,
                                       .start_us = 30 * S,
                                       .end_us = 70 * S,
                                       .spillover_us = tuned ? 4 * S : 50 * S,
                                       .recovered = tuned};
    return s;
}

/* One row per tick: the outage (30s..70s) fails naive's requests and opens tuned's breakers. */
static void write_run(const char *dir, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    char path[128];
    snprintf(path, sizeof path, "%s/timeseries.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    rep_csv_header(f, sc);
    for (size_t v = 0; v < n; v++) {
        bool tuned = sc->variants[v].layers[0].per_provider[0].has_breaker;
        for (fb_time_us t = 0; t < sc->duration_us; t += sc->tick_us) {
            sim_row r;
            memset(&r, 0, sizeof r);
            bool fault = t >= 30 * S && t < 70 * S;
            bool after = t >= 70 * S && t < 120 * S;
            r.t_us = t;
            r.arrivals = 10;
            r.ended = t == 5 * S ? 0 : 10;
            r.success = r.ended;
            r.p[0].attempts = 10;
            r.in_flight = 12;
            if (fault && tuned) {
                r.fallback_success = 9;
                r.success = 10;
                r.p[0].attempts = 2;
                r.p[0].errors = 2;
                r.p[1].attempts = 9;
                r.p[0].open_share = 0.75;
                r.p[0].half_open_share = 0.25;
            } else if ((fault || after) && !tuned) {
                r.success = 2;
                r.errors = 8;
                r.p[0].attempts = 40;
                r.p[0].errors = 38;
                r.in_flight = 60;
                r.pod_queue = 30;
            }
            r.latency_p50_ms = r.ended ? 800 : 0;
            r.latency_p99_ms = r.ended ? (fault && !tuned ? 30000 : 2500) : 0;
            r.fault_active = fault;
            /* the features' columns (written only when the scenario uses them): tuned's limit
               halves and its pods double in the fault; naive has no limit (an empty cell) */
            bool limited = sc->variants[v].layers[0].per_provider[0].has_conclimit;
            r.p[0].limit = limited ? (fault ? 10 : 20) : NAN;
            r.p[1].limit = NAN;
            r.p[0].conn_wait = fault ? 6 : 0;
            r.pods_ready = fault && tuned ? 8 : 4;
            r.pods_starting = t == 30 * S && tuned ? 4 : 0;
            r.resubmissions = fault && !tuned ? 3 : 0;
            r.store_down = t >= 80 * S && t < 90 * S;
            rep_csv_row(f, sc, sums[v]->variant, &r);
        }
    }
    assert_int_equal(fclose(f), 0);
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    buf[got] = '\0';
    if (len) *len = got;
    return buf;
}

static char *slurp2(const char *dir, const char *name, size_t *len) {
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path, len);
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void need_gnuplot(void) {
    char buf[512];
    if (rep_gnuplot_find(buf, sizeof buf) != FB_OK) {
        print_message("%s\n", buf);
        skip();
    }
}

static int setup(void **state) {
    fixture *fx = calloc(1, sizeof *fx);
    if (fx == NULL) return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/fusebox-charts-XXXXXX");
    if (mkdtemp(fx->dir) == NULL) return -1;
    fx->sc = make_scenario(120 * S, 1 * S);
    fx->sums[0] = make_summary("naive", false);
    fx->sums[1] = make_summary("tuned", true);
    write_run(fx->dir, fx->sc, fx->sums, 2);
    *state = fx;
    return 0;
}

static int teardown(void **state) {
    fixture *fx = *state;
    remove_tree(fx->dir);
    free(fx->sums[0]);
    free(fx->sums[1]);
    free_scenario(fx->sc);
    free(fx);
    return 0;
}

static void run_charts(fixture *fx) {
    char msg[1024] = "";
    int rc = rep_charts(fx->dir, fx->sc, fx->sums, 2, NULL, 0, msg, sizeof msg);
    if (rc != FB_OK) print_message("rep_charts: %s\n", msg);
    assert_int_equal(rc, FB_OK);
}

static void charts_draws_every_chart_as_png_svg_and_script(void **state) {
    fixture *fx = *state;
    need_gnuplot();
    use_every_feature(fx->sc);
    write_run(fx->dir, fx->sc, fx->sums, 2);
    run_charts(fx);
    size_t count;
    const rep_chart_info *infos = rep_chart_list(&count);
    assert_true(count >= 5);
    for (size_t k = 0; k < count; k++) {
        char name[96];
        size_t len;
        snprintf(name, sizeof name, "charts/%s.png", infos[k].name);
        char *png = slurp2(fx->dir, name, &len);
        assert_non_null(png);
        assert_true(len > 1000);
        assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
        free(png);
        snprintf(name, sizeof name, "charts/%s.svg", infos[k].name);
        char *svg = slurp2(fx->dir, name, &len);
        assert_non_null(svg);
        assert_non_null(strstr(svg, "<svg"));
        assert_non_null(strstr(svg, "</svg>"));
        assert_true(strstr(svg, "<svg") < strstr(svg, "</svg>"));
        free(svg);
        snprintf(name, sizeof name, "charts/%s.gp", infos[k].name);
        char *gp = slurp2(fx->dir, name, &len);
        assert_non_null(gp);
        assert_non_null(strstr(gp, "set terminal pngcairo"));
        free(gp);
    }
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "src=\"data:image/svg+xml;base64,"));
    free(html);
}

static void charts_html_names_variants_and_escapes_description(void **state) {
    fixture *fx = *state;
    need_gnuplot();
    run_charts(fx);
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "<h1>retry-storm</h1>"));
    assert_non_null(strstr(html, "naive</th>"));
    assert_non_null(strstr(html, "tuned</th>"));
    assert_non_null(strstr(html, "Primary &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
                                 "&quot;friends&quot; fail"));
    assert_null(strstr(html, "<script"));
    assert_non_null(strstr(html, "<dd>42</dd>"));                /* the seed */
    assert_non_null(strstr(html, "<td class=\"n\">1,200</td>")); /* requests, grouped */
    /* the per-provider table and the spillover of the outage, per variant */
    assert_non_null(strstr(html, "<td>anthropic</td>"));
    assert_non_null(strstr(html, "50.0s (not recovered)"));
    assert_non_null(strstr(html, "<td class=\"n\">4.0s</td>"));
    free(html);
}

static void charts_same_inputs_give_identical_html_and_svg(void **state) {
    fixture *fx = *state;
    need_gnuplot();
    use_every_feature(fx->sc);
    write_run(fx->dir, fx->sc, fx->sums, 2);
    run_charts(fx);
    size_t count;
    const rep_chart_info *infos = rep_chart_list(&count);
    size_t len1, len2;
    char *first = slurp2(fx->dir, "report.html", &len1);
    char *svgs[16] = {NULL};
    size_t svg_lens[16];
    assert_true(count <= 16);
    for (size_t k = 0; k < count; k++) {
        char name[96];
        snprintf(name, sizeof name, "charts/%s.svg", infos[k].name);
        svgs[k] = slurp2(fx->dir, name, &svg_lens[k]);
        assert_non_null(svgs[k]);
    }
    run_charts(fx);
    char *second = slurp2(fx->dir, "report.html", &len2);
    assert_non_null(first);
    assert_non_null(second);
    assert_int_equal(len1, len2);
    assert_memory_equal(first, second, len1);
    for (size_t k = 0; k < count; k++) {
        char name[96];
        size_t len;
        snprintf(name, sizeof name, "charts/%s.svg", infos[k].name);
        char *again = slurp2(fx->dir, name, &len);
        assert_non_null(again);
        assert_int_equal(len, svg_lens[k]);
        assert_memory_equal(again, svgs[k], len);
        free(again);
        free(svgs[k]);
    }
    free(first);
    free(second);
}

/* The page's summary table keeps step with the text summary: every row label appears. */
static void charts_html_has_every_row_of_the_text_summary(void **state) {
    fixture *fx = *state;
    char msg[1024];
    /* no gnuplot needed: the page alone */
    assert_int_equal(rep_html(fx->dir, fx->sc, fx->sums, 2, NULL, NULL, msg, sizeof msg), FB_OK);
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    char *text = NULL;
    size_t text_len = 0;
    FILE *m = open_memstream(&text, &text_len);
    assert_non_null(m);
    rep_text_summary(m, fx->sc, fx->sums, 2);
    fclose(m);
    int rows = 0;
    char *save = NULL;
    strtok_r(text, "\n", &save); /* title line */
    strtok_r(NULL, "\n", &save); /* variant names */
    for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char label[32];
        size_t skip = strspn(line, " ");
        size_t len = strlen(line) < 24 ? strlen(line) : 24;
        if (skip >= len) continue;
        snprintf(label, sizeof label, ">%.*s</td>", (int)(len - skip), line + skip);
        char *end = strstr(label, "  ");
        if (end) snprintf(end, sizeof label - (size_t)(end - label), "</td>");
        if (strstr(html, label) == NULL) print_message("missing row %s\n", label);
        assert_non_null(strstr(html, label));
        rows++;
    }
    assert_true(rows >= 15);
    free(text);
    free(html);
}

/* A warning heads the page, before the verdict: its title in bold, a line per item, escaped. */
static void charts_html_warning_heads_the_page(void **state) {
    fixture *fx = *state;
    char msg[1024];
    assert_int_equal(rep_html(fx->dir, fx->sc, fx->sums, 2, NULL, NULL, msg, sizeof msg), FB_OK);
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    assert_null(strstr(html, "id=\"warning\""));
    free(html);
    assert_int_equal(rep_html(fx->dir, fx->sc, fx->sums, 2,
                              "Inconclusive: <not> a result\na: late\n\nb: 5 < 10\n", NULL, msg,
                              sizeof msg),
                     FB_OK);
    html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    const char *w = strstr(html, "<div class=\"warn\" id=\"warning\">\n<p><b>Inconclusive: "
                                 "&lt;not&gt; a result</b></p>\n<ul>\n<li>a: late</li>\n"
                                 "<li>b: 5 &lt; 10</li>\n</ul>\n</div>\n");
    const char *v = strstr(html, "id=\"verdict\"");
    assert_non_null(w);
    assert_non_null(v);
    assert_true(w < v);
    free(html);
}

static void charts_reject_timeseries_of_another_scenario(void **state) {
    fixture *fx = *state;
    snprintf(fx->sc->providers[1].name, SIM_NAME_MAX, "mistral");
    char msg[1024] = "";
    assert_int_equal(rep_charts(fx->dir, fx->sc, fx->sums, 2, NULL, 0, msg, sizeof msg), FB_EPARSE);
    assert_non_null(strstr(msg, "timeseries.csv"));
    assert_non_null(strstr(msg, "header"));
}

/* 1200 s at a 500 ms tick is 2400 ticks: four fold into each of 600 points, per second. */
static void charts_fold_long_runs_into_per_second_points(void **state) {
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/fusebox-charts-XXXXXX");
    assert_non_null(mkdtemp(dir));
    sim_scenario *sc = make_scenario(1200 * S, 500 * FB_US_PER_MS);
    sim_summary *sums[1] = {make_summary("naive", false)};
    write_run(dir, sc, sums, 1);
    char msg[1024] = "";
    int rc = rep_charts(dir, sc, sums, 1, NULL, 0, msg, sizeof msg);
    assert_true(rc == FB_OK || rc == FB_ENOTFOUND); /* the data files do not need gnuplot */
    char *data = slurp2(dir, "charts/data_naive.dat", NULL);
    assert_non_null(data);
    int lines = 0;
    for (const char *p = data; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 1 + 600);
    assert_memory_equal(data, "t ok_ps fallback_ps degraded_ps errors_ps slo_missed_ps arrivals_ps",
                        66);
    /* first point: ticks 0..1.5s, centred at 1 s = 0.0167 min; 10 per tick = 20 per second */
    const char *row = strchr(data, '\n') + 1;
    assert_memory_equal(row,
                        "0.0167 20.0000 0.0000 0.0000 0.0000 0.0000 20.0000 12.0000 0.0000 "
                        "0.8000 2.5000 20.0000 0.0000 0.0000 0.0000",
                        strlen("0.0167 20.0000 0.0000 0.0000 0.0000 0.0000 20.0000 12.0000 0.0000 "
                               "0.8000 2.5000 20.0000 0.0000 0.0000 0.0000"));
    free(data);
    remove_tree(dir);
    free(sums[0]);
    free_scenario(sc);
}

static void charts_quote_hostile_names_for_gnuplot(void **state) {
    fixture *fx = *state;
    need_gnuplot();
    /* the loader allows only [A-Za-z0-9_.-]; the chart writer must not rely on it */
    const char *evil = "x'; system('touch pwned'); '";
    snprintf(fx->sc->variants[0].name, SIM_NAME_MAX, "%s", evil);
    snprintf(fx->sums[0]->variant, SIM_NAME_MAX, "%s", evil);
    write_run(fx->dir, fx->sc, fx->sums, 2);
    run_charts(fx);
    char path[160];
    snprintf(path, sizeof path, "%s/charts/pwned", fx->dir);
    assert_int_not_equal(access(path, F_OK), 0);
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "x&#39;; system(&#39;touch pwned&#39;); &#39;</th>"));
    free(html);
}

/* A variant stopped by a cap before its first tick has no rows: its panels are empty. */
static void charts_draw_a_variant_without_rows(void **state) {
    fixture *fx = *state;
    need_gnuplot();
    write_run(fx->dir, fx->sc, fx->sums, 1);
    fx->sums[1]->complete = false;
    snprintf(fx->sums[1]->stop_reason, sizeof fx->sums[1]->stop_reason, "in-flight cap <1000>");
    run_charts(fx);
    char *data = slurp2(fx->dir, "charts/data_tuned.dat", NULL);
    assert_non_null(data);
    assert_null(strchr(strchr(data, '\n') + 1, '\n')); /* the header alone */
    free(data);
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "stopped early: in-flight cap &lt;1000&gt;"));
    free(html);
}

/* rep_charts with a PATH where gnuplot is not: the scripts and the page, no drawing. */
static int charts_without_gnuplot(fixture *fx, char *msg, size_t len) {
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("PATH", fx->dir, 1);
    int rc = rep_charts(fx->dir, fx->sc, fx->sums, 2, NULL, 0, msg, len);
    if (saved) {
        setenv("PATH", saved, 1);
        free(saved);
    }
    return rc;
}

/* Does DIR/charts/NAME exist? */
static bool chart_file(const fixture *fx, const char *name) {
    char path[160];
    snprintf(path, sizeof path, "%s/charts/%s", fx->dir, name);
    return access(path, F_OK) == 0;
}

/* Issue 15: no empty panels. Each feature's chart exists exactly when the scenario uses the
 * feature, in charts/ and on the page, and draws only the variants that use it. */
static void charts_draw_a_feature_chart_exactly_when_it_is_used(void **state) {
    fixture *fx = *state;
    static const char *const charts[F_COUNT] = {"limits", "connections", "pods", "resubmissions",
                                                NULL};
    for (int used = -1; used < F_COUNT; used++) {
        sim_scenario *sc = make_scenario(120 * S, 1 * S);
        if (used >= 0) use_feature(sc, used);
        free_scenario(fx->sc);
        fx->sc = sc;
        write_run(fx->dir, sc, fx->sums, 2);
        char msg[1024] = "";
        /* the scripts are written without gnuplot (six runs drawn would take seconds); the page
           without a note lists every chart the run has, drawn or not */
        assert_int_equal(charts_without_gnuplot(fx, msg, sizeof msg), FB_ENOTFOUND);
        assert_int_equal(rep_html(fx->dir, sc, fx->sums, 2, NULL, NULL, msg, sizeof msg), FB_OK);
        char *html = slurp2(fx->dir, "report.html", NULL);
        assert_non_null(html);
        for (int k = 0; k < F_STORE; k++) {
            char gp[64], id[64];
            snprintf(gp, sizeof gp, "%s.gp", charts[k]);
            snprintf(id, sizeof id, "id=\"chart-%s\"", charts[k]);
            if (chart_file(fx, gp) != (k == used)) print_message("%s with %d\n", gp, used);
            assert_int_equal(chart_file(fx, gp), k == used);
            assert_int_equal(strstr(html, id) != NULL, k == used);
        }
        char *breakers = slurp2(fx->dir, "charts/breakers.gp", NULL);
        assert_non_null(breakers);
        assert_int_equal(strstr(breakers, "'store_down_pct'") != NULL, used == F_STORE);
        assert_int_equal(strstr(html, "breaker store was unreachable") != NULL, used == F_STORE);
        free(breakers);
        free(html);
    }
}

/* The lines of the variants that use the feature, and only those (naive has no limit, no
 * pool, no autoscaler: its pods are drawn, as the comparison, but it starts none). */
static void charts_feature_lines_are_the_variants_that_use_it(void **state) {
    fixture *fx = *state;
    use_every_feature(fx->sc);
    write_run(fx->dir, fx->sc, fx->sums, 2);
    char msg[1024] = "";
    assert_int_equal(charts_without_gnuplot(fx, msg, sizeof msg), FB_ENOTFOUND);
    static const struct {
        const char *script, *has[2], *lacks;
    } want[] = {
        {"charts/limits.gp",
         {"plot 'data_tuned.dat' using 't':'openai_limit' with lines lc rgb '#D55E00' dt 1 lw 2 "
          "title 'tuned openai'\n",
          "set yrange [0:25]"}, /* 20 x 1.05, rounded up */
         "data_naive.dat"},
        {"charts/connections.gp", {"'tuned openai'", "'tuned anthropic'"}, "data_naive.dat"},
        {"charts/pods.gp", {"title 'naive'", "title 'tuned starting'"}, "naive starting"},
        {"charts/resubmissions.gp", {"title 'naive'", "title 'tuned'"}, "anthropic"},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char *gp = slurp2(fx->dir, want[k].script, NULL);
        assert_non_null(gp);
        for (int i = 0; i < 2; i++) {
            if (strstr(gp, want[k].has[i]) == NULL) print_message("%s\n", want[k].has[i]);
            assert_non_null(strstr(gp, want[k].has[i]));
        }
        assert_null(strstr(gp, want[k].lacks));
        free(gp);
    }
    /* the data: tuned's limit 10 and 8 pods in the fault (t = 40 s), the store down at 85 s;
       naive's empty limit cells are NaN */
    char *data = slurp2(fx->dir, "charts/data_tuned.dat", NULL);
    assert_non_null(data);
    assert_non_null(strstr(data, " openai_limit openai_conn_wait anthropic_limit "
                                 "anthropic_conn_wait pods pods_starting resubmissions_ps "
                                 "store_down_pct\n"));
    assert_non_null(strstr(data, " 10.0000 6.0000 NaN 0.0000 8.0000 0.0000 0.0000 0.0000\n"));
    assert_non_null(strstr(data, " 20.0000 0.0000 NaN 0.0000 4.0000 0.0000 0.0000 100.0000\n"));
    free(data);
    data = slurp2(fx->dir, "charts/data_naive.dat", NULL);
    assert_non_null(data);
    assert_non_null(strstr(data, " NaN 6.0000 NaN 0.0000 4.0000 0.0000 3.0000 0.0000\n"));
    free(data);
}

static void charts_without_gnuplot_name_the_package_and_still_write_the_page(void **state) {
    fixture *fx = *state;
    char msg[1024] = "";
    int rc = charts_without_gnuplot(fx, msg, sizeof msg);
    assert_int_equal(rc, FB_ENOTFOUND);
    assert_non_null(strstr(msg, "gnuplot-nox"));
    char *html = slurp2(fx->dir, "report.html", NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "gnuplot-nox"));
    assert_null(strstr(html, "data:image/svg+xml"));
    free(html);
    char *gp = slurp2(fx->dir, "charts/outcomes.gp", NULL); /* scripts to draw them later */
    assert_non_null(gp);
    free(gp);
}

/* Write DIR/NAME with `text`, mode `mode`. */
static void put_file(const char *dir, const char *name, const char *text, mode_t mode) {
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* rep_gnuplot_run_all on a stand-in gnuplot (a shell script that does what each script's first
 * line says): every script runs, up to `jobs` at once; after a failure none starts; the error is
 * the first failing script's in the list's order, whichever failed first in time (here the
 * second fails at once and the first a moment later). */
static void gnuplot_run_all_reports_the_first_failure_in_order(void **state) {
    fixture *fx = *state;
    char gp[160];
    snprintf(gp, sizeof gp, "%s/gnuplot", fx->dir);
    put_file(fx->dir, "gnuplot",
             "#!/bin/sh\n# gnuplot -d SCRIPT: run the script's first line\n"
             "eval \"$(head -n 1 \"$2\")\"\n",
             0755);
    put_file(fx->dir, "ok1.gp", "touch ok1.done\n", 0644);
    put_file(fx->dir, "ok2.gp", "touch ok2.done\n", 0644);
    put_file(fx->dir, "ok3.gp", "touch ok3.done\n", 0644);
    put_file(fx->dir, "late.gp", "sleep 0.3; echo 'late: line 1: bad' >&2; exit 1\n", 0644);
    put_file(fx->dir, "soon.gp", "echo 'soon: line 1: worse' >&2; exit 1\n", 0644);
    char msg[1024] = "";
    const char *all_ok[] = {"ok1.gp", "ok2.gp", "ok3.gp"};
    for (unsigned jobs = 0; jobs <= 3; jobs++) {
        assert_int_equal(rep_gnuplot_run_all(gp, fx->dir, all_ok, 3, jobs, msg, sizeof msg), FB_OK);
        for (int k = 1; k <= 3; k++) {
            char done[32];
            snprintf(done, sizeof done, "ok%d.done", k);
            char path[200];
            snprintf(path, sizeof path, "%s/%s", fx->dir, done);
            assert_int_equal(access(path, F_OK), 0);
            assert_int_equal(unlink(path), 0);
        }
    }
    const char *two_fail[] = {"ok1.gp", "late.gp", "soon.gp", "ok2.gp"};
    assert_int_equal(rep_gnuplot_run_all(gp, fx->dir, two_fail, 4, 4, msg, sizeof msg), FB_EIO);
    assert_non_null(strstr(msg, "gnuplot failed on "));
    assert_non_null(strstr(msg, "/late.gp: late: line 1: bad"));
    assert_null(strstr(msg, "worse"));
    /* nothing starts after a failure: one at a time, ok2.gp waits for late.gp; two at a time,
       for a slot that late.gp or soon.gp frees, and both fail */
    char path[200];
    snprintf(path, sizeof path, "%s/ok2.done", fx->dir);
    for (unsigned jobs = 1; jobs <= 2; jobs++) {
        unlink(path);
        assert_int_equal(rep_gnuplot_run_all(gp, fx->dir, two_fail, 4, jobs, msg, sizeof msg),
                         FB_EIO);
        assert_non_null(strstr(msg, "/late.gp: late: line 1: bad"));
        assert_int_equal(access(path, F_OK), -1);
    }
    /* a gnuplot that exits 0 without writing its drawings whole (as gnuplot does on a full
       disk): the run says which file, not that all went well */
    put_file(fx->dir, "gnuplot",
             "#!/bin/sh\n# gnuplot -d NAME.gp: NAME.png empty, NAME.svg cut\n"
             "n=${2%.gp}; : >\"$n.png\"; printf '<svg><g>' >\"$n.svg\"\n",
             0755);
    const char *old_path = getenv("PATH");
    char *saved = old_path ? strdup(old_path) : NULL;
    setenv("PATH", fx->dir, 1);
    int rc = rep_charts(fx->dir, fx->sc, fx->sums, 2, NULL, 0, msg, sizeof msg);
    if (saved) {
        setenv("PATH", saved, 1);
        free(saved);
    }
    assert_int_equal(rc, FB_EIO);
    assert_non_null(strstr(msg, "/charts/compare.png: "));
    assert_non_null(strstr(msg, "(gnuplot left it incomplete)"));
    /* a gnuplot that cannot start */
    const char *one[] = {"ok1.gp"};
    snprintf(path, sizeof path, "%s/no-such-gnuplot", fx->dir);
    assert_int_equal(rep_gnuplot_run_all(path, fx->dir, one, 1, 2, msg, sizeof msg), FB_EIO);
    assert_non_null(strstr(msg, "cannot run "));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(charts_draws_every_chart_as_png_svg_and_script, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(charts_html_names_variants_and_escapes_description, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(charts_same_inputs_give_identical_html_and_svg, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(charts_html_has_every_row_of_the_text_summary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(charts_html_warning_heads_the_page, setup, teardown),
        cmocka_unit_test_setup_teardown(charts_reject_timeseries_of_another_scenario, setup,
                                        teardown),
        cmocka_unit_test(charts_fold_long_runs_into_per_second_points),
        cmocka_unit_test_setup_teardown(charts_quote_hostile_names_for_gnuplot, setup, teardown),
        cmocka_unit_test_setup_teardown(charts_draw_a_variant_without_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(charts_draw_a_feature_chart_exactly_when_it_is_used, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(charts_feature_lines_are_the_variants_that_use_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            charts_without_gnuplot_name_the_package_and_still_write_the_page, setup, teardown),
        cmocka_unit_test_setup_teardown(gnuplot_run_all_reports_the_first_failure_in_order, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
