/*
 * verdict.c - the run in a few sentences (verdict.h). Each sentence reads
 * the metric table (sim/metrics.c) and the disturbance windows; none is
 * written in advance. In call order: variants that stopped early, which
 * variant does best on what, the incident, the collateral damage.
 */
#include "reports/verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "reports/settings.h"
#include "scenario/preset.h"
#include "sim/metrics.h"

/* A growing text in the caller's buffer; `cut` once something did not fit. */
typedef struct text {
    char *buf;
    size_t len, used;
    bool cut;
} text;

static const char cut_note[] = " (The verdict is cut here: see the tables.)";

static void put(text *t, const char *fmt, ...) {
    if (t->cut) return;
    size_t room = t->len - t->used;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(t->buf + t->used, room, fmt, ap);
    va_end(ap);
    /* keep room for the note that says the text was cut */
    if (w < 0 || (size_t)w + sizeof cut_note >= room) {
        t->buf[t->used] = '\0';
        t->cut = true;
        return;
    }
    t->used += (size_t)w;
}

/* One thing the variants are compared on. */
typedef struct aspect {
    const char *metric; /* a row of sim/metrics.c */
    const char *label;
    rep_show show;
    bool higher;   /* higher is better */
    bool binomial; /* a share of the requests ended: compared with its binomial interval */
} aspect;

static const aspect aspects[] = {
    {"success_rate", "success rate", REP_SHOW_PERCENT, true, true},
    {"blast_radius_rate", "requests failed or late", REP_SHOW_PERCENT, false, true},
    {"latency_p99", "p99 latency", REP_SHOW_DURATION, false, false},
    {"spillover", "spillover", REP_SHOW_DURATION, false, false},
    {"cost_usd", "cost", REP_SHOW_USD, false, false},
};
#define ASPECTS (sizeof aspects / sizeof aspects[0])

static double metric(const sim_scenario *sc, const sim_summary *s, const char *name) {
    return sim_metric_get(sc, s, name);
}

/* A variant's value as the summary shows it (spillover not recovered gets its "+"). */
static void shown(char *buf, size_t len, const sim_scenario *sc, const sim_summary *s,
                  const aspect *a) {
    rep_format_show(buf, len, a->show, metric(sc, s, a->metric), true);
    if (strcmp(a->metric, "spillover") == 0 && metric(sc, s, "recovered") == 0)
        strncat(buf, "+", len - strlen(buf) - 1);
}

/* Is x better than y on a? */
static bool better(const aspect *a, double x, double y) {
    return a->higher ? x > y : x < y;
}

/*
 * Can variant s be set against the others on a? Not when it stopped early (its cost and counts
 * are of part of the run: a variant stopped by a cap at 5 minutes of 60 "did best on cost"), nor
 * on a share or a p99 of no request (the metric table reads 0: docs/check.md).
 */
static bool comparable(const sim_scenario *sc, const sim_summary *s, const aspect *a) {
    if (!s->complete) return false;
    if (a->binomial) return metric(sc, s, "ended") > 0;
    return strcmp(a->metric, "latency_p99") != 0 || fb_hist_count(&s->latency) > 0;
}

/* The best variant on a other than `skip` (-1: none skipped), or -1 when no value is known. */
static int best_of(const sim_scenario *sc, sim_summary *const *sums, size_t n, const aspect *a,
                   int skip) {
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        double v = metric(sc, sums[i], a->metric);
        if ((int)i == skip || sim_metric_is_na(v) || !comparable(sc, sums[i], a)) continue;
        if (best < 0 || better(a, v, metric(sc, sums[best], a->metric))) best = (int)i;
    }
    return best;
}

/*
 * Does the best value stand apart from the next? Shares: outside the 95% binomial interval
 * of their difference (1.96 standard errors, Agresti-Caffo); others: by more than
 * REP_VERDICT_LEVEL.
 */
static bool apart(const sim_scenario *sc, const sim_summary *b, const sim_summary *c,
                  const aspect *a) {
    double x = metric(sc, b, a->metric), y = metric(sc, c, a->metric);
    if (a->binomial) {
        double nx = metric(sc, b, "ended"), ny = metric(sc, c, "ended");
        if (nx <= 0 || ny <= 0) return false;
        /* Agresti-Caffo (one success and one failure added to each): the plain interval has no
           width at 100%, and called 100% of 300 apart from 98.67% (4 failures against none) */
        double px = (x * nx + 1) / (nx + 2), py = (y * ny + 1) / (ny + 2);
        double se = sqrt(px * (1 - px) / (nx + 2) + py * (1 - py) / (ny + 2));
        return fabs(px - py) > 1.96 * se;
    }
    return fabs(x - y) > REP_VERDICT_LEVEL * fmax(fabs(x), fabs(y));
}

static void stopped_early(text *t, sim_summary *const *sums, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!sums[i]->complete)
            put(t, "%s stopped early (%s): its figures cover the simulated time up to then%s. ",
                sums[i]->variant, sums[i]->stop_reason,
                n > 1 ? ", and are not set against the other variants'" : "");
}

/*
 * "tuned does best against naive on success rate (99.90% against 62.73%) and cost (...)."
 * Sentences compare two variants (more get the table, rep_verdict_table): the other one is
 * the next best of every aspect.
 */
static void winner_sentence(text *t, const sim_scenario *sc, sim_summary *const *sums, int w,
                            const int *win, const int *next) {
    size_t count = 0, said = 0;
    int other = -1;
    for (size_t k = 0; k < ASPECTS; k++)
        if (win[k] == w) {
            count++;
            other = next[k];
        }
    if (count == 0) return;
    put(t, "%s does best against %s on ", sums[w]->variant, sums[other]->variant);
    for (size_t k = 0; k < ASPECTS; k++) {
        if (win[k] != w) continue;
        char x[64], y[64];
        shown(x, sizeof x, sc, sums[w], &aspects[k]);
        shown(y, sizeof y, sc, sums[next[k]], &aspects[k]);
        said++;
        put(t, "%s%s (%s against %s)",
            said == 1       ? ""
            : said == count ? " and "
                            : ", ",
            aspects[k].label, x, y);
    }
    put(t, ". ");
}

/* The aspects of one kind (shares or not) on which the best and the next are level. */
static void level_sentence(text *t, const sim_scenario *sc, sim_summary *const *sums,
                           const int *win, const int *best, const int *next, bool binomial) {
    size_t count = 0, said = 0;
    for (size_t k = 0; k < ASPECTS; k++)
        count += win[k] == -1 && best[k] >= 0 && next[k] >= 0 && aspects[k].binomial == binomial;
    if (count == 0) return;
    if (binomial)
        put(t, "Within the 95%% binomial interval, ");
    else
        put(t, "Within %.0f%%, the variants are level on ", REP_VERDICT_LEVEL * 100);
    for (size_t k = 0; k < ASPECTS; k++) {
        if (win[k] != -1 || best[k] < 0 || next[k] < 0 || aspects[k].binomial != binomial) continue;
        char x[64], y[64];
        shown(x, sizeof x, sc, sums[best[k]], &aspects[k]);
        shown(y, sizeof y, sc, sums[next[k]], &aspects[k]);
        said++;
        put(t, "%s%s (%s %s, %s %s)",
            said == 1       ? ""
            : said == count ? " and "
                            : ", ",
            aspects[k].label, sums[best[k]]->variant, x, sums[next[k]]->variant, y);
    }
    put(t, binomial ? " %s not tell the best variants apart. " : ". ", count == 1 ? "does" : "do");
}

static void comparison(text *t, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    int best[ASPECTS], next[ASPECTS], win[ASPECTS]; /* win: -1 level, -2 nothing to compare */
    for (size_t k = 0; k < ASPECTS; k++) {
        best[k] = best_of(sc, sums, n, &aspects[k], -1);
        next[k] = best[k] < 0 ? -1 : best_of(sc, sums, n, &aspects[k], best[k]);
        win[k] = next[k] < 0                                            ? -2
                 : apart(sc, sums[best[k]], sums[next[k]], &aspects[k]) ? best[k]
                                                                        : -1;
    }
    for (size_t i = 0; i < n; i++) winner_sentence(t, sc, sums, (int)i, win, next);
    level_sentence(t, sc, sums, win, best, next, true);
    level_sentence(t, sc, sums, win, best, next, false);
}

/* "openai outage 503 from 5m 00s to 23m 00s", "chat spike to 400/s from ...". */
static void window_name(text *t, const sim_scenario *sc, const sim_fault_summary *f) {
    char from[32], to[32];
    rep_format_duration(from, sizeof from, (double)f->start_us);
    rep_format_duration(to, sizeof to, (double)f->end_us);
    if (f->store) {
        put(t, "an outage of the breaker store");
    } else if (f->spike) {
        put(t, "a spike of %s to %.0f/s", sc->classes[f->cls].name,
            sc->classes[f->cls].spikes[f->fault].rate);
    } else {
        const sim_fault *fa = &sc->providers[f->provider].faults[f->fault];
        put(t, "%s %s", sc->providers[f->provider].name, scn_fault_kind_name(fa->kind));
        if (fa->status > 0) put(t, " %d", fa->status);
        if (fa->fraction > 0 && fa->fraction < 1)
            put(t, " on %.0f%% of attempts", fa->fraction * 100);
    }
    put(t, " from %s to %s", from, to);
}

/* At most this many windows are named; the rest are counted. */
#define WINDOWS_NAMED 3

static void windows(text *t, const sim_scenario *sc, const sim_summary *s) {
    put(t, "The disturbance%s: ", s->fault_count > 1 ? "s" : "");
    for (uint32_t i = 0; i < s->fault_count && i < WINDOWS_NAMED; i++) {
        if (i) put(t, i + 1 == s->fault_count ? " and " : ", ");
        window_name(t, sc, &s->faults[i]);
    }
    if (s->fault_count > WINDOWS_NAMED) put(t, ", and %u more", s->fault_count - WINDOWS_NAMED);
    put(t, ". ");
}

/* Layer l's timeout in its library's words ("opossum's timeout 10000"), else fusebox's. */
static void timeout_words(text *t, const sim_layer *l, bool layered, uint32_t p, fb_time_us us) {
    const sim_vocab *v = l->preset ? l->preset->vocab : NULL;
    for (const sim_vocab_param *vp = v ? v->params : NULL; vp && vp->name; vp++) {
        char val[64];
        if (vp->field != SIM_VF_ATTEMPT_TIMEOUT_US || !rep_library_value(val, sizeof val, l, p, vp))
            continue;
        put(t, "%s's %s %s", v->name, vp->name, val);
        return;
    }
    char d[32];
    rep_format_duration(d, sizeof d, (double)us);
    if (layered)
        put(t, "layer %s's attempt_timeout (%s)", l->name, d);
    else
        put(t, "the attempt_timeout (%s)", d);
}

/* The timeout the p99 latency sits at (within 1%: the histogram's buckets), if one does. */
static bool timeout_cap(text *t, const sim_scenario *sc, const sim_policy *pol,
                        const sim_summary *s) {
    double p99 = metric(sc, s, "latency_p99");
    if (sim_metric_is_na(p99) || p99 <= 0) return false;
    for (uint32_t k = 0; k < pol->layer_count; k++) {
        const sim_layer *l = &pol->layers[k];
        for (uint32_t p = 0; p <= sc->provider_count && p < SIM_PROVIDERS_MAX; p++) {
            fb_time_us us = p < sc->provider_count ? l->per_provider[p].timeout_us
                                                   : l->retry.attempt_timeout_us;
            if (us <= 0 || fabs(p99 - (double)us) > 0.01 * (double)us) continue;
            char d[32];
            rep_format_duration(d, sizeof d, p99);
            put(t, "; its p99 latency (%s) is ", d);
            timeout_words(t, l, pol->layered, p < sc->provider_count ? p : 0, us);
            put(t, ": its slowest requests were cut there");
            return true;
        }
    }
    fb_time_us rt = sc->pods.request_timeout_us;
    if (rt <= 0 || fabs(p99 - (double)rt) > 0.01 * (double)rt) return false;
    char d[32];
    rep_format_duration(d, sizeof d, p99);
    put(t,
        "; its p99 latency (%s) is the pods' request_timeout: its slowest requests were cut "
        "there",
        d);
    return true;
}

/* The breakers' openings in the library's words, when one preset's layer has them all. */
static void breaker_words(text *t, const sim_scenario *sc, const sim_policy *pol,
                          const sim_summary *s) {
    double opens = metric(sc, s, "breaker_opens");
    const sim_layer *found = NULL;
    for (uint32_t k = 0; k < pol->layer_count; k++) {
        const sim_layer *l = &pol->layers[k];
        bool has = false;
        for (uint32_t p = 0; p < sc->provider_count; p++)
            has = has || l->per_provider[p].has_breaker;
        if (!has) continue;
        if (found || l->preset == NULL || l->preset->vocab == NULL) return;
        found = l;
    }
    if (found == NULL || sim_metric_is_na(opens) || opens <= 0) return;
    const sim_vocab *v = found->preset->vocab;
    put(t, "; its %s went to '%s' %.0f times", v->breaker, v->states[1] ? v->states[1] : "open",
        opens);
}

/* What the variant's layers did to the figures, in their libraries' words where they have
   them: a p99 at a timeout (a cap, not speed), the breakers' (cooldowns') openings. */
static void mechanism(text *t, const sim_scenario *sc, const sim_summary *s) {
    int v = scn_variant(sc, s->variant);
    if (v < 0) return;
    timeout_cap(t, sc, &sc->variants[v], s);
    breaker_words(t, sc, &sc->variants[v], s);
}

/* One variant through the incident: attempts per request inside it, recovery, fallback. */
static void incident_of(text *t, const sim_scenario *sc, const sim_summary *s, bool several) {
    char amp[32], spill[32], fb[32];
    double a = metric(sc, s, "amplification_fault");
    snprintf(amp, sizeof amp, "%.*f", a < 10 ? 2 : 1, a); /* 0.04 when breakers fail fast */
    rep_format_duration(spill, sizeof spill, metric(sc, s, "spillover"));
    put(t, "%s sent %s attempts per request inside %s and ", s->variant, amp,
        several ? "them" : "it");
    double rec = metric(sc, s, "recovered");
    if (sim_metric_is_na(rec))
        put(t, "whether it got back to its baseline cannot be judged (see the spillover table)");
    else if (rec == 0)
        put(t, "was still not back to its baseline %s after %s ended, when the run did", spill,
            several ? "one" : "it");
    else if (metric(sc, s, "spillover") <= 0)
        put(t, "was back to its baseline as soon as %s ended", several ? "they" : "it");
    else
        put(t, "took %s after %s ended to get back to its baseline", spill, several ? "one" : "it");
    if (s->success_fallback > 0) {
        rep_format_show(fb, sizeof fb, REP_SHOW_PERCENT, metric(sc, s, "fallback_rate"), true);
        put(t, "; its fallback served %s of requests", fb);
    }
    mechanism(t, sc, s);
    put(t, ". ");
}

static void incident(text *t, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    if (n == 0) return;
    if (sums[0]->fault_count == 0) {
        put(t, "The scenario scripts no fault or traffic spike. ");
        return;
    }
    windows(t, sc, sums[0]);
    for (size_t i = 0; i < n; i++) incident_of(t, sc, sums[i], sums[0]->fault_count > 1);
}

/* Per class that calls no LLM: how its requests fared under each variant. */
static void collateral(text *t, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    for (uint32_t c = 0; c < sc->class_count; c++) {
        if (sc->classes[c].target != SIM_TARGET_NONE) continue;
        put(t,
            "%s never calls an LLM; the share of its requests that failed or missed the SLO "
            "was ",
            sc->classes[c].name);
        for (size_t i = 0; i < n; i++) {
            char name[SIM_NAME_MAX + 32], bad[32], p99[32];
            snprintf(name, sizeof name, "class_bad_rate[%s]", sc->classes[c].name);
            rep_format_show(bad, sizeof bad, REP_SHOW_PERCENT, metric(sc, sums[i], name), true);
            snprintf(name, sizeof name, "class_latency_p99[%s]", sc->classes[c].name);
            rep_format_duration(p99, sizeof p99, metric(sc, sums[i], name));
            put(t, "%s%s under %s (p99 %s)",
                i == 0       ? ""
                : i + 1 == n ? " and "
                             : ", ",
                bad, sums[i]->variant, p99);
        }
        put(t, ". ");
    }
}

/* Greedy wrapping at `width` columns, in place (spaces become newlines). */
static void wrap(char *s, int width) {
    char *line = s, *space = NULL;
    for (char *p = s; *p; p++) {
        if (*p == ' ') space = p;
        if (p - line >= width && space != NULL) {
            *space = '\n';
            line = space + 1;
            space = NULL;
        }
    }
}

char *rep_verdict(char *buf, size_t len, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                  int width) {
    text t = {buf, len, 0, false};
    if (len == 0) return buf;
    buf[0] = '\0';
    stopped_early(&t, sums, n);
    if (n > 1 && n < REP_VERDICT_TABLE_FROM) comparison(&t, sc, sums, n);
    incident(&t, sc, sums, n);
    collateral(&t, sc, sums, n);
    if (t.cut) {
        snprintf(buf + t.used, len - t.used, "%s", cut_note + 1);
        t.used += strlen(buf + t.used);
    }
    while (t.used > 0 && buf[t.used - 1] == ' ') buf[--t.used] = '\0';
    if (width > 0) {
        wrap(buf, width);
        if (t.used + 1 < len) {
            buf[t.used++] = '\n';
            buf[t.used] = '\0';
        }
    }
    return buf;
}

/* ---- the table, for more than two variants ---- */

/* The line so far without its trailing spaces, then a newline. */
static void end_line(text *t) {
    while (!t->cut && t->used > 0 && t->buf[t->used - 1] == ' ') t->buf[--t->used] = '\0';
    put(t, "\n");
}

size_t rep_verdict_columns(void) {
    return ASPECTS;
}

const char *rep_verdict_column(size_t k) {
    return k < ASPECTS ? aspects[k].label : "";
}

rep_verdict_mark rep_verdict_cell(char *buf, size_t len, const sim_scenario *sc,
                                  sim_summary *const *sums, size_t n, size_t i, size_t k) {
    const aspect *a = &aspects[k];
    shown(buf, len, sc, sums[i], a);
    int best = best_of(sc, sums, n, a, -1);
    if (best < 0 || sim_metric_is_na(metric(sc, sums[i], a->metric)) || !comparable(sc, sums[i], a))
        return REP_MARK_NONE;
    int next = best_of(sc, sums, n, a, best);
    bool alone = next < 0 || apart(sc, sums[best], sums[next], a);
    if ((int)i == best) return alone ? REP_MARK_BEST : REP_MARK_LEVEL;
    return !alone && !apart(sc, sums[best], sums[i], a) ? REP_MARK_LEVEL : REP_MARK_NONE;
}

char *rep_verdict_table(char *buf, size_t len, const sim_scenario *sc, sim_summary *const *sums,
                        size_t n) {
    text t = {buf, len, 0, false};
    if (len == 0) return buf;
    buf[0] = '\0';
    if (n < REP_VERDICT_TABLE_FROM) return buf;
    int w = 8, cw[ASPECTS];
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(sums[i]->variant) > w) w = (int)strlen(sums[i]->variant);
    for (size_t k = 0; k < ASPECTS; k++) {
        cw[k] = (int)strlen(aspects[k].label);
        for (size_t i = 0; i < n; i++) {
            char cell[64];
            rep_verdict_cell(cell, sizeof cell, sc, sums, n, i, k);
            if ((int)strlen(cell) > cw[k]) cw[k] = (int)strlen(cell);
        }
    }
    put(&t, "%-*s", w, "");
    for (size_t k = 0; k < ASPECTS; k++) put(&t, "  %*s ", cw[k], aspects[k].label);
    end_line(&t);
    for (size_t i = 0; i < n; i++) {
        put(&t, "%-*s", w, sums[i]->variant);
        for (size_t k = 0; k < ASPECTS; k++) {
            char cell[64];
            rep_verdict_mark m = rep_verdict_cell(cell, sizeof cell, sc, sums, n, i, k);
            put(&t, "  %*s%c", cw[k], cell,
                m == REP_MARK_BEST    ? '*'
                : m == REP_MARK_LEVEL ? '='
                                      : ' ');
        }
        end_line(&t);
    }
    put(&t, "* the best; = level with the best (shares: 95%% binomial interval; others: %.0f%%)\n",
        REP_VERDICT_LEVEL * 100);
    return buf;
}
