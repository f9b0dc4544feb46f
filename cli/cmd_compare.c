/*
 * cmd_compare.c - 'fusebox compare A B': two reports (or two sweeps) side by
 * side, each headline figure's change and whether it is beyond noise
 * (reports/compare.h judges); compare.json and compare.html with -o DIR.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "core/fb.h"
#include "reports/compare.h"
#include "reports/gnuplot.h"
#include "reports/report.h"

#define CMP_TOLS_MAX 16
#define CMP_FILE_MAX (256u << 20)
/* variants charted (the first ones in common); the table has them all */
#define CMP_CHARTED_MAX 16

static size_t headline_count(void) {
    size_t n;
    rep_cmp_headlines(&n);
    return n;
}

static void usage(FILE *f) {
    cli_help_puts("usage: fusebox compare A B [options]\n"
                  "\n"
                  "Compare two runs: A and B are report folders (report.json, as fusebox run\n"
                  "or fusebox check -o write them), sweep folders (sweep.json), or the files\n"
                  "themselves (a baseline is a saved report.json). For every variant (or\n"
                  "sweep point) in both, print each headline figure of A and B, the change,\n"
                  "and whether it is beyond noise: the 95% confidence intervals of a sweep's\n"
                  "seeds when both have them, else a tolerance (the defaults below, or\n"
                  "--tolerance). The RULE column says which rule judged each figure.\n"
                  "\n"
                  "options:\n"
                  "  -o, --out DIR            also write DIR/compare.json and DIR/compare.html\n"
                  "                           (with both runs' time series on the same axes)\n"
                  "      --tolerance M=X      a change of metric M within X is noise: absolute\n"
                  "                           (success_rate=0.002; durations in seconds) or\n"
                  "                           relative (latency_p99=10%); repeatable\n"
                  "      --no-charts          compare.html without the gnuplot charts\n"
                  "  -h, --help               this text\n"
                  "\n"
                  "Headline figures and default tolerances: success_rate +-0.001 (absolute);\n"
                  "latency_p50, latency_p99 +-5% (at least 1ms); amplification +-2% (at\n"
                  "least 0.01); fallbacks, blast_radius +-2% (at least 1); cost_usd +-2%.\n"
                  "\n"
                  "Exit codes: 0 nothing regressed beyond noise, 1 a figure did (named on\n"
                  "the last line), 2 bad input (a file that is not a report or sweep, a\n"
                  "report compared with a sweep, different scenarios, no variant in common),\n"
                  "3 inconclusive: none regressed, but some figures were not judged (n/a):\n"
                  "a variant whose run stopped early on a side (interrupted, a cap), or single\n"
                  "runs of two seeds (a figure beyond its default tolerance: not the noise);\n"
                  "one seed under two random-stream versions (report.json's \"rng\") draws\n"
                  "other numbers and is judged as two seeds. See docs/compare.md.\n",
                  f);
}

/* The file a path names: DIR/report.json, DIR/sweep.json, or the path itself. */
static int resolve(const char *path, char *file, size_t len) {
    struct stat st;
    if (stat(path, &st) != 0) return cli_bad("compare", "%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        snprintf(file, len, "%s", path);
        return CLI_OK;
    }
    const char *names[] = {"report.json", "sweep.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(file, len, "%s/%s", path, names[i]);
        if (stat(file, &st) == 0) return CLI_OK;
    }
    return cli_bad("compare", "%s: holds neither report.json nor sweep.json", path);
}

static int load(const char *path, char *file, size_t flen, rep_cmp_side *side) {
    int rc = resolve(path, file, flen);
    if (rc != CLI_OK) return rc;
    size_t len = 0;
    char *text = cli_read_file(file, CMP_FILE_MAX, &len);
    if (text == NULL) return cli_bad("compare", "%s: %s", file, strerror(errno));
    char msg[600];
    rc = rep_cmp_parse(text, len, file, side, msg, sizeof msg);
    free(text);
    if (rc != FB_OK) return cli_bad("compare", "%s", msg);
    return CLI_OK;
}

/* ---- the table ---- */

enum { COL_ENTRY, COL_FIGURE, COL_A, COL_B, COL_CHANGE, COL_RULE, COL_VERDICT, NCOL };

typedef struct cell_row {
    char c[NCOL][REP_CMP_NAME_MAX];
} cell_row;

static void fill_row(const rep_cmp_side *a, const rep_cmp_fig *f, cell_row *r) {
    size_t nh;
    const rep_cmp_headline *h = &rep_cmp_headlines(&nh)[f->headline];
    snprintf(r->c[COL_ENTRY], sizeof r->c[0], "%s", a->entries[f->entry_a].name);
    snprintf(r->c[COL_FIGURE], sizeof r->c[0], "%s", h->metric);
    const rep_cmp_value *v[2] = {&f->a, &f->b};
    for (int s = 0; s < 2; s++) {
        char x[64], lo[48], hi[48];
        rep_cmp_format(x, sizeof x, h, v[s]->present ? v[s]->v : NAN);
        if (v[s]->has_ci) {
            rep_cmp_format(lo, sizeof lo, h, v[s]->lo);
            rep_cmp_format(hi, sizeof hi, h, v[s]->hi);
            snprintf(r->c[COL_A + s], sizeof r->c[0], "%s [%s, %s]", x, lo, hi);
        } else {
            snprintf(r->c[COL_A + s], sizeof r->c[0], "%s", x);
        }
    }
    rep_cmp_format_change(r->c[COL_CHANGE], sizeof r->c[0], h, f);
    snprintf(r->c[COL_RULE], sizeof r->c[0], "%s", f->rule_text);
    const char *verdict = f->verdict == REP_CMP_WORSE    ? "WORSE"
                          : f->verdict == REP_CMP_BETTER ? "better"
                          : f->verdict == REP_CMP_NA     ? "n/a"
                                                         : "same";
    snprintf(r->c[COL_VERDICT], sizeof r->c[0], "%s", verdict);
}

static void print_table(const rep_cmp_side *a, const rep_cmp *c, cell_row *rows) {
    static const char *heads[NCOL] = {"", "figure", "A", "B", "change", "rule", "verdict"};
    heads[COL_ENTRY] = a->kind == REP_CMP_REPORT ? "variant" : "point";
    size_t w[NCOL];
    for (int k = 0; k < NCOL; k++) w[k] = strlen(heads[k]);
    for (size_t i = 0; i < c->count; i++)
        for (int k = 0; k < NCOL; k++)
            if (strlen(rows[i].c[k]) > w[k]) w[k] = strlen(rows[i].c[k]);
    for (int k = 0; k < NCOL; k++)
        printf("%-*s%s", k == NCOL - 1 ? 0 : (int)w[k], heads[k], k == NCOL - 1 ? "\n" : "  ");
    for (size_t i = 0; i < c->count; i++)
        for (int k = 0; k < NCOL; k++)
            printf("%-*s%s", k == NCOL - 1 ? 0 : (int)w[k], rows[i].c[k],
                   k == NCOL - 1 ? "\n" : "  ");
}

/* "naive, tuned": the entries with a figure not judged because a run stopped early. */
static void unjudged_names(const rep_cmp *c, const cell_row *rows, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->count && at < len; i++) {
        if (strncmp(c->figs[i].rule_text, "not judged", 10) != 0) continue;
        if (i > 0 && strcmp(rows[i].c[COL_ENTRY], rows[i - 1].c[COL_ENTRY]) == 0 &&
            strncmp(c->figs[i - 1].rule_text, "not judged", 10) == 0)
            continue;
        int k = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", rows[i].c[COL_ENTRY]);
        if (k < 0) break;
        at += (size_t)k;
    }
}

/* The last line: no change, changes that are not regressions, or the regressions named; before
 * it, the figures not judged (a run stopped early, two seeds), "inconclusive" when none is worse.
 */
static void print_verdict(FILE *f, const rep_cmp *c, const cell_row *rows, const char *prefix) {
    size_t stopped = c->unjudged - c->unjudged_seeds;
    if (stopped) {
        char names[600];
        unjudged_names(c, rows, names, sizeof names);
        fprintf(f, "%s%s%zu of %zu figures not judged: the run of %s stopped early on a side%s\n",
                prefix, c->worse ? "" : "inconclusive: ", stopped, c->count, names,
                c->worse || c->unjudged == c->count ? "" : "; the others:");
    }
    if (c->unjudged_seeds)
        fprintf(f,
                "%s%s%zu of %zu figures not judged: they moved beyond their default tolerance "
                "between single runs of %s, which measure no noise (--tolerance states "
                "it; sweeps with --seeds measure it)%s\n",
                prefix, c->worse || stopped ? "" : "inconclusive: ", c->unjudged_seeds, c->count,
                rep_cmp_apart_name(c->apart),
                c->worse || c->unjudged == c->count ? "" : "; the others:");
    if (c->unjudged == c->count) return;
    if (c->worse == 0 && c->better == 0) {
        fprintf(f, "%sno change beyond noise (%zu figures)\n", prefix, c->count - c->unjudged);
        return;
    }
    rep_cmp_verdict want = c->worse ? REP_CMP_WORSE : REP_CMP_BETTER;
    size_t n = c->worse ? c->worse : c->better;
    if (c->worse)
        fprintf(f, "%s%zu regression%s beyond noise:", prefix, n, n == 1 ? "" : "s");
    else
        fprintf(f, "%sno regression; %zu figure%s better beyond noise:", prefix, n,
                n == 1 ? "" : "s");
    size_t shown = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->figs[i].verdict != want) continue;
        fprintf(f, "%s %s %s %s", shown ? "," : "", rows[i].c[COL_ENTRY], rows[i].c[COL_FIGURE],
                rows[i].c[COL_CHANGE]);
        shown++;
    }
    fputc('\n', f);
}

/* ---- compare.html ---- */

static const struct series {
    const char *column; /* timeseries.csv's column; "*_attempts": the sum over providers */
    const char *title;
} SERIES[] = {
    {"p50_ms", "latency p50 (ms)"},
    {"p99_ms", "latency p99 (ms)"},
    {"error_rate", "error rate"},
    {"fallback_success", "fallback successes per interval"},
    {"*_attempts", "provider attempts per interval"},
};
#define NSERIES (sizeof SERIES / sizeof SERIES[0])

/* Split a CSV line in place (no quoting in timeseries.csv); returns the field count. */
static size_t split(char *line, char **f, size_t max) {
    size_t n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        p = strchr(p, ',');
        if (p == NULL) break;
        *p++ = '\0';
    }
    return n;
}

static bool ends_with(const char *s, const char *x) {
    size_t a = strlen(s), b = strlen(x);
    return a >= b && strcmp(s + a - b, x) == 0;
}

/*
 * DIR/charts/cmp_SIDE_K.dat for every common variant K: t_s then one column per SERIES, from
 * timeseries.csv beside `file`. False with why in msg.
 */
static bool write_series(const char *file, const char *outdir, char side, const rep_cmp_side *s,
                         const rep_cmp *c, bool a_side, char *msg, size_t len) {
    char csv[1100];
    snprintf(csv, sizeof csv, "%s", file);
    char *slash = strrchr(csv, '/');
    snprintf(slash ? slash + 1 : csv, sizeof csv - (size_t)(slash ? slash + 1 - csv : 0),
             "timeseries.csv");
    size_t n = 0;
    char *text = cli_read_file(csv, CMP_FILE_MAX, &n);
    if (text == NULL) {
        snprintf(msg, len, "%s: %s", csv, strerror(errno));
        return false;
    }
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    enum { MAXF = 512 };
    char *f[MAXF];
    size_t nf = line ? split(line, f, MAXF) : 0;
    int col[NSERIES];
    bool att[MAXF] = {false};
    for (size_t k = 0; k < NSERIES; k++) col[k] = -1;
    for (size_t i = 0; i < nf; i++) {
        for (size_t k = 0; k < NSERIES; k++)
            if (strcmp(f[i], SERIES[k].column) == 0) col[k] = (int)i;
        att[i] = ends_with(f[i], "_attempts");
    }
    if (nf < 2 || strcmp(f[0], "variant") != 0 || strcmp(f[1], "t_s") != 0) {
        snprintf(msg, len, "%s: not a timeseries.csv", csv);
        free(text);
        return false;
    }
    FILE *out[CMP_CHARTED_MAX] = {NULL};
    size_t nh = headline_count();
    bool ok = true;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && ok) {
        size_t m = split(line, f, MAXF);
        if (m < nf) continue;
        for (size_t i = 0, k = 0; i < c->count && k < CMP_CHARTED_MAX; i += nh, k++) {
            size_t e = a_side ? c->figs[i].entry_a : c->figs[i].entry_b;
            if (strcmp(f[0], s->entries[e].name) != 0) continue;
            if (out[k] == NULL) {
                char path[1200];
                snprintf(path, sizeof path, "%s/charts/cmp_%c_%zu.dat", outdir, side, k);
                out[k] = fopen(path, "w");
                if (out[k] == NULL) {
                    snprintf(msg, len, "cannot write %s: %s", path, strerror(errno));
                    ok = false;
                    break;
                }
            }
            fprintf(out[k], "%s", f[1]);
            for (size_t q = 0; q < NSERIES; q++) {
                if (col[q] >= 0) {
                    /* an empty field (no request ended) as NaN: gnuplot's columns stay put */
                    fprintf(out[k], " %s", f[col[q]][0] ? f[col[q]] : "NaN");
                } else {
                    double sum = 0;
                    for (size_t x = 2; x < nf; x++)
                        if (att[x]) sum += strtod(f[x], NULL);
                    fprintf(out[k], " %.0f", sum);
                }
            }
            fputc('\n', out[k]);
        }
    }
    for (size_t k = 0; k < CMP_CHARTED_MAX; k++)
        if (out[k] && fclose(out[k]) != 0) ok = false;
    free(text);
    return ok;
}

/* The charts: one gnuplot script, an SVG per common variant and series. */
static bool draw(const char *outdir, const rep_cmp_side *a, const rep_cmp *c, char *msg,
                 size_t len) {
    char gp[600];
    if (rep_gnuplot_find(gp, sizeof gp) != FB_OK) {
        snprintf(msg, len, "%s", gp);
        return false;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/charts/compare.gp", outdir);
    FILE *g = fopen(path, "w");
    if (g == NULL) {
        snprintf(msg, len, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    fputs("set terminal svg size 900,320 fixed font 'sans-serif,12' background rgb 'white'\n"
          "set grid\nset key outside top center horizontal\nset xlabel 'time (s)'\n"
          "set lmargin 12\nset rmargin 4\n",
          g);
    for (size_t i = 0, k = 0; i < c->count && k < CMP_CHARTED_MAX; i += headline_count(), k++) {
        for (size_t q = 0; q < NSERIES; q++) {
            char name[64], title[REP_CMP_NAME_MAX + 64];
            snprintf(name, sizeof name, "cmp_%zu_%zu.svg", k, q);
            snprintf(title, sizeof title, "%s: %s", a->entries[c->figs[i].entry_a].name,
                     SERIES[q].title);
            fputs("set output ", g);
            rep_gnuplot_quote(g, name);
            fputs("\nset title ", g);
            rep_gnuplot_quote(g, title);
            fprintf(g,
                    "\nplot 'cmp_a_%zu.dat' using 1:%zu with lines lw 2 lc rgb '#1f77b4' "
                    "title 'A', 'cmp_b_%zu.dat' using 1:%zu with lines lw 2 lc rgb '#d62728' "
                    "title 'B'\n",
                    k, q + 2, k, q + 2);
        }
    }
    if (fclose(g) != 0) {
        snprintf(msg, len, "cannot write %s", path);
        return false;
    }
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/charts", outdir);
    if (rep_gnuplot_run(gp, dir, "compare.gp", msg, len) != FB_OK) return false;
    for (size_t i = 0, k = 0; i < c->count && k < CMP_CHARTED_MAX; i += headline_count(), k++)
        for (size_t q = 0; q < NSERIES; q++) {
            char svg[1200];
            snprintf(svg, sizeof svg, "%s/cmp_%zu_%zu.svg", dir, k, q);
            if (rep_gnuplot_check_drawing(svg, msg, len) != FB_OK) return false;
        }
    return true;
}

static void copy_into(FILE *to, const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fputs("<p>(chart missing)</p>\n", to);
        return;
    }
    char buf[8192];
    size_t k;
    bool head = true;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
        /* the SVG inline: its XML declaration left out */
        char *start = buf;
        if (head && strncmp(buf, "<?xml", 5) == 0) {
            char *end = memchr(buf, '>', k);
            if (end) {
                k -= (size_t)(end + 1 - buf);
                start = end + 1;
            }
        }
        head = false;
        fwrite(start, 1, k, to);
    }
    fclose(f);
}

static int write_html(const char *outdir, const char *fa, const char *fb, const rep_cmp_side *a,
                      const rep_cmp_side *b, const rep_cmp *c, const cell_row *rows,
                      const char *charts_note, bool charts) {
    char path[1100], tmp[1200];
    snprintf(path, sizeof path, "%s/compare.html", outdir);
    FILE *h = cli_file_begin("compare", path, true, tmp, sizeof tmp);
    if (h == NULL) return CLI_BAD_INPUT;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fusebox compare: ", h);
    rep_escape_markup(h, a->scenario);
    fputs("</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:1em auto}"
          "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;"
          "text-align:left}.worse{background:#fdd}.better{background:#dfd}svg{max-width:100%;"
          "height:auto}</style></head><body>\n<h1>",
          h);
    rep_escape_markup(h, a->scenario);
    fputs(": A against B</h1>\n<p>A: <code>", h);
    rep_escape_markup(h, fa);
    fprintf(h, "</code> (seed %s, random streams ", a->seeds);
    rep_escape_markup(h, a->rng[0] ? a->rng : "unnamed");
    fputs(")<br>B: <code>", h);
    rep_escape_markup(h, fb);
    fprintf(h, "</code> (seed %s, random streams ", b->seeds);
    rep_escape_markup(h, b->rng[0] ? b->rng : "unnamed");
    fputs(")</p>\n<p><b>", h);
    char *verdict = NULL;
    size_t vlen = 0;
    FILE *m = open_memstream(&verdict, &vlen);
    if (m) {
        print_verdict(m, c, rows, "");
        fclose(m);
        rep_escape_markup(h, verdict);
        free(verdict);
    }
    fprintf(h,
            "</b></p>\n<table>\n<tr><th>%s</th><th>figure</th><th>A</th><th>B</th>"
            "<th>change</th><th>rule</th><th>verdict</th></tr>\n",
            a->kind == REP_CMP_REPORT ? "variant" : "point");
    for (size_t i = 0; i < c->count; i++) {
        const char *cls = c->figs[i].verdict == REP_CMP_WORSE    ? " class=\"worse\""
                          : c->figs[i].verdict == REP_CMP_BETTER ? " class=\"better\""
                                                                 : "";
        fprintf(h, "<tr%s>", cls);
        for (int k = 0; k < NCOL; k++) {
            fputs("<td>", h);
            rep_escape_markup(h, rows[i].c[k]);
            fputs("</td>", h);
        }
        fputs("</tr>\n", h);
    }
    fputs("</table>\n<h2>Time series</h2>\n", h);
    if (!charts) {
        fputs("<p>No charts: ", h);
        rep_escape_markup(h, charts_note);
        fputs("</p>\n", h);
    } else {
        fputs("<p>A in blue, B in red, on the same axes (where B equals A, its line hides "
              "A's).</p>\n",
              h);
        for (size_t i = 0, k = 0; i < c->count && k < CMP_CHARTED_MAX; i += headline_count(), k++)
            for (size_t q = 0; q < NSERIES; q++) {
                char svg[1300];
                snprintf(svg, sizeof svg, "%s/charts/cmp_%zu_%zu.svg", outdir, k, q);
                copy_into(h, svg);
            }
    }
    fputs("</body></html>\n", h);
    return cli_file_commit(h, "compare", path, tmp) == 0 ? CLI_OK : CLI_BAD_INPUT;
}

static int write_outputs(const char *outdir, const char *fa, const char *fb, const rep_cmp_side *a,
                         const rep_cmp_side *b, const rep_cmp *c, const cell_row *rows,
                         bool no_charts) {
    char path[1100], tmp[1200];
    snprintf(path, sizeof path, "%s/compare.json", outdir);
    FILE *j = cli_file_begin("compare", path, true, tmp, sizeof tmp);
    if (j == NULL) return CLI_BAD_INPUT;
    rep_cmp_write_json(j, fa, fb, a, b, c);
    if (cli_file_commit(j, "compare", path, tmp) != 0) return CLI_BAD_INPUT;
    char note[2600] = "";
    bool charts = false;
    if (no_charts) {
        snprintf(note, sizeof note, "--no-charts was given.");
    } else if (a->kind == REP_CMP_SWEEP) {
        snprintf(note, sizeof note, "sweeps have no time series (timeseries.csv is a run's).");
    } else {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/charts", outdir);
        if (cli_mkdirs(dir) != 0) {
            snprintf(note, sizeof note, "cannot create %s: %s", dir, strerror(errno));
        } else if (write_series(fa, outdir, 'a', a, c, true, note, sizeof note) &&
                   write_series(fb, outdir, 'b', b, c, false, note, sizeof note)) {
            charts = draw(outdir, a, c, note, sizeof note);
        }
    }
    return write_html(outdir, fa, fb, a, b, c, rows, note, charts);
}

typedef struct cmp_args {
    const char *paths[2], *outdir;
    rep_cmp_tol tols[CMP_TOLS_MAX];
    size_t ntols;
    bool no_charts;
} cmp_args;

/* Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_args(int argc, char **argv, cmp_args *o) {
    memset(o, 0, sizeof *o);
    size_t npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (cli_opt(argc, argv, &i, "-o", "--out", &val)) {
            if (val == NULL) return cli_missing("compare", a);
            o->outdir = val;
        } else if (cli_opt(argc, argv, &i, NULL, "--tolerance", &val)) {
            char msg[400];
            if (val == NULL) return cli_missing("compare", a);
            if (o->ntols == CMP_TOLS_MAX) return cli_bad("compare", "too many --tolerance");
            if (rep_cmp_tol_parse(val, &o->tols[o->ntols++], msg, sizeof msg) != FB_OK)
                return cli_bad("compare", "%s", msg);
        } else if (strcmp(a, "--no-charts") == 0) {
            o->no_charts = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_bad("compare", "unknown option '%s' (see fusebox compare --help)", a);
        } else if (npaths == 2) {
            return cli_bad("compare", "more than two reports ('%s')", a);
        } else {
            o->paths[npaths++] = a;
        }
    }
    if (npaths != 2) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

int cli_cmd_compare(int argc, char **argv) {
    cmp_args o;
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK) return rc < 0 ? CLI_OK : rc;
    char fa[1100], fb[1100];
    rep_cmp_side a, b;
    rc = load(o.paths[0], fa, sizeof fa, &a);
    if (rc != CLI_OK) return rc;
    rc = load(o.paths[1], fb, sizeof fb, &b);
    if (rc != CLI_OK) {
        rep_cmp_side_free(&a);
        return rc;
    }
    rep_cmp c;
    char msg[600];
    if (rep_compare(&a, &b, o.tols, o.ntols, &c, msg, sizeof msg) != FB_OK) {
        rc = cli_bad("compare", "%s and %s: %s", fa, fb, msg);
        goto free_sides;
    }
    cell_row *rows = calloc(c.count, sizeof *rows);
    if (rows == NULL) {
        rc = cli_bad("compare", "out of memory");
        goto free_cmp;
    }
    for (size_t i = 0; i < c.count; i++) fill_row(&a, &c.figs[i], &rows[i]);
    printf("compare: %s (%s), A: %s (seed %s), B: %s (seed %s)\n", a.scenario,
           a.kind == REP_CMP_REPORT ? "report" : "sweep", fa, a.seeds, fb, b.seeds);
    if (!a.complete || !b.complete)
        printf("note: %s is an interrupted run (\"complete\": false)\n", !a.complete ? fa : fb);
    if (a.kind == REP_CMP_REPORT && strcmp(a.seeds, b.seeds) != 0)
        printf("note: different seeds (%s, %s): single runs measure no noise: shares judged on "
               "their binomial interval, a change beyond a default tolerance not judged\n",
               a.seeds, b.seeds);
    else if (a.kind == REP_CMP_REPORT && strcmp(a.rng, b.rng) != 0)
        printf("note: different random-stream versions (%s, %s): the same seed draws other "
               "numbers (docs/rng.md), judged as two seeds: shares on their binomial interval, a "
               "change beyond a default tolerance not judged\n",
               a.rng[0] ? a.rng : "unnamed, before fusebox-2",
               b.rng[0] ? b.rng : "unnamed, before fusebox-2");
    if (c.only_a || c.only_b)
        printf("note: %zu %s only in A, %zu only in B (not compared)\n", c.only_a,
               a.kind == REP_CMP_REPORT ? "variant(s)" : "point(s)", c.only_b);
    print_table(&a, &c, rows);
    print_verdict(stdout, &c, rows, "compare: ");
    fflush(stdout);
    rc = c.worse ? CLI_EXPECT_FAILED : c.unjudged ? CLI_INCONCLUSIVE : CLI_OK;
    if (o.outdir) {
        int w = write_outputs(o.outdir, fa, fb, &a, &b, &c, rows, o.no_charts);
        if (w != CLI_OK) rc = w;
    }
    free(rows);
free_cmp:
    rep_cmp_free(&c);
free_sides:
    rep_cmp_side_free(&a);
    rep_cmp_side_free(&b);
    return rc;
}
