/* report.c - report.json, timeseries.csv, events.jsonl, text summary. */
#include "reports/report.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/version.h"
#include "sim/metrics.h"

/* ---- a small JSON writer with fixed number formats ---- */

typedef struct jw {
    FILE *f;
    int depth;
    bool first[32];
} jw;

static void jw_indent(jw *w) {
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

static void jw_sep(jw *w) {
    if (!w->first[w->depth]) fputc(',', w->f);
    w->first[w->depth] = false;
    jw_indent(w);
}

void rep_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void jw_str(FILE *f, const char *s) {
    rep_json_string(f, s);
}

static void jw_key(jw *w, const char *k) {
    jw_sep(w);
    jw_str(w->f, k);
    fputs(": ", w->f);
}

static void jw_open(jw *w, const char *k, char c) {
    if (k)
        jw_key(w, k);
    else if (w->depth >= 0 && w->depth < 32 && w->f) {
        if (w->depth > 0 || !w->first[0]) jw_sep(w);
    }
    fputc(c, w->f);
    w->depth++;
    w->first[w->depth] = true;
}

static void jw_close(jw *w, char c) {
    bool empty = w->first[w->depth];
    w->depth--;
    if (!empty) jw_indent(w);
    fputc(c, w->f);
}

static void jw_u64(jw *w, const char *k, uint64_t v) {
    jw_key(w, k);
    fprintf(w->f, "%" PRIu64, v);
}

static void jw_num(jw *w, const char *k, double v, int decimals) {
    jw_key(w, k);
    if (!isfinite(v))
        fputs("null", w->f);
    else
        fprintf(w->f, "%.*f", decimals, v);
}

static void jw_bool(jw *w, const char *k, bool v) {
    jw_key(w, k);
    fputs(v ? "true" : "false", w->f);
}

static void jw_string(jw *w, const char *k, const char *v) {
    jw_key(w, k);
    jw_str(w->f, v);
}

/* A metric in its natural unit: counts as integers, durations in seconds. */
static void jw_metric(jw *w, const char *k, double v, sim_unit unit) {
    switch (unit) {
    case SIM_UNIT_COUNT:
    case SIM_UNIT_BOOL:
        jw_u64(w, k, (uint64_t)llround(v));
        break;
    case SIM_UNIT_RATIO:
        jw_num(w, k, v, 6);
        break;
    case SIM_UNIT_US:
        jw_num(w, k, v / 1e6, 6);
        break;
    case SIM_UNIT_USD:
        jw_num(w, k, v, 4);
        break;
    }
}

void rep_escape_markup(FILE *f, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*p < 0x20 && *p != '\n' && *p != '\t' ? ' ' : *p, f);
        }
    }
}

static void write_provider(jw *w, const sim_scenario *sc, uint32_t p, const sim_summary *s) {
    const sim_provider_summary *ps = &s->providers[p];
    jw_open(w, sc->providers[p].name, '{');
    jw_u64(w, "attempts", ps->attempts);
    jw_open(w, "outcomes", '{');
    for (int o = 0; o < FB_OUT_COUNT; o++)
        jw_u64(w, fb_outcome_name((fb_outcome)o), ps->outcomes[o]);
    jw_close(w, '}');
    jw_u64(w, "served", ps->served);
    jw_u64(w, "abandoned", ps->abandoned);
    jw_u64(w, "unfinished", ps->unfinished);
    jw_u64(w, "capacity_429", ps->capacity_429);
    jw_u64(w, "overloaded", ps->overloaded);
    jw_open(w, "tokens", '{');
    jw_u64(w, "in", ps->tokens_in);
    jw_u64(w, "out", ps->tokens_out);
    jw_u64(w, "in_wasted", ps->tokens_in_wasted);
    jw_u64(w, "out_wasted", ps->tokens_out_wasted);
    jw_close(w, '}');
    jw_num(w, "cost_usd", ps->cost_usd, 4);
    jw_num(w, "cost_wasted_usd", ps->cost_wasted_usd, 4);
    jw_open(w, "breaker", '{');
    jw_u64(w, "opens", ps->breaker_opens);
    jw_u64(w, "transitions", ps->breaker_transitions);
    jw_num(w, "open_s", ps->breaker_open_s, 6);
    jw_u64(w, "rejections", ps->breaker_rejections);
    jw_close(w, '}');
    jw_open(w, "limiter", '{');
    jw_u64(w, "waits", ps->limiter_waits);
    jw_u64(w, "rejections", ps->limiter_rejections);
    jw_close(w, '}');
    jw_open(w, "peaks", '{');
    jw_u64(w, "in_service", ps->in_service_peak);
    jw_u64(w, "queue", ps->queue_peak);
    jw_close(w, '}');
    jw_close(w, '}');
}

static void write_variant(jw *w, const sim_scenario *sc, const sim_summary *s) {
    jw_open(w, s->variant, '{');
    jw_bool(w, "complete", s->complete);
    if (!s->complete) jw_string(w, "stopped", s->stop_reason);
    jw_open(w, "summary", '{');
    for (const sim_metric *d = sim_metrics(); d->name; d++)
        if (!d->per_provider) jw_metric(w, d->name, d->value(sc, s, 0), d->unit);
    jw_close(w, '}');
    jw_open(w, "outcomes", '{');
    jw_u64(w, "success_primary", s->success_primary);
    jw_u64(w, "success_fallback", s->success_fallback);
    jw_u64(w, "degraded", s->ended[SIM_END_DEGRADED]);
    jw_open(w, "errors", '{');
    for (int e = SIM_END_DEGRADED + 1; e < SIM_END_COUNT; e++)
        jw_u64(w, sim_end_name((sim_end)e), s->ended[e]);
    jw_close(w, '}');
    jw_close(w, '}');
    jw_open(w, "latency_ms", '{');
    jw_num(w, "p50", (double)fb_hist_percentile(&s->latency, 50) / 1e3, 3);
    jw_num(w, "p90", (double)fb_hist_percentile(&s->latency, 90) / 1e3, 3);
    jw_num(w, "p99", (double)fb_hist_percentile(&s->latency, 99) / 1e3, 3);
    jw_num(w, "p99.9", (double)fb_hist_percentile(&s->latency, 99.9) / 1e3, 3);
    jw_num(w, "max", (double)fb_hist_max(&s->latency) / 1e3, 3);
    jw_num(w, "mean", fb_hist_mean(&s->latency) / 1e3, 3);
    jw_close(w, '}');
    jw_open(w, "baseline", '{');
    jw_num(w, "error_rate", s->baseline_error_rate, 6);
    jw_num(w, "p99_ms", (double)s->baseline_p99_us / 1e3, 3);
    jw_close(w, '}');
    jw_open(w, "spillover", '[');
    for (uint32_t i = 0; i < s->fault_count; i++) {
        const sim_fault_summary *f = &s->faults[i];
        jw_open(w, NULL, '{');
        if (f->spike) {
            jw_string(w, "class", sc->classes[f->cls].name);
            jw_u64(w, "spike", f->fault);
            jw_string(w, "kind", "spike");
        } else {
            const sim_fault *fa = &sc->providers[f->provider].faults[f->fault];
            jw_string(w, "provider", sc->providers[f->provider].name);
            jw_u64(w, "fault", f->fault);
            jw_string(w, "kind", sim_fault_kind_name(fa->kind));
        }
        jw_num(w, "start_s", (double)f->start_us / 1e6, 6);
        jw_num(w, "end_s", (double)f->end_us / 1e6, 6);
        jw_num(w, "spillover_s", (double)f->spillover_us / 1e6, 6);
        jw_bool(w, "recovered", f->recovered);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_open(w, "providers", '{');
    for (uint32_t p = 0; p < sc->provider_count; p++) write_provider(w, sc, p, s);
    jw_close(w, '}');
    jw_u64(w, "simulated_events", s->events);
    jw_num(w, "end_s", (double)s->end_us / 1e6, 6);
    jw_u64(w, "events_dropped", s->events_dropped);
    jw_close(w, '}');
}

int rep_write_json(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    jw w;
    memset(&w, 0, sizeof w);
    w.f = f;
    w.first[0] = true;
    fputc('{', f);
    w.depth = 1;
    w.first[1] = true;
    jw_string(&w, "fusebox", FB_VERSION);
    jw_string(&w, "scenario", sc->name);
    jw_string(&w, "file", sc->file);
    jw_u64(&w, "seed", sc->seed);
    jw_num(&w, "duration_s", (double)sc->duration_us / 1e6, 6);
    jw_num(&w, "slo_latency_s", (double)sc->slo_latency_us / 1e6, 6);
    bool complete = true;
    for (size_t i = 0; i < n; i++) complete = complete && sums[i]->complete;
    jw_bool(&w, "complete", complete);
    jw_open(&w, "variants", '{');
    for (size_t i = 0; i < n; i++) write_variant(&w, sc, sums[i]);
    jw_close(&w, '}');
    /* the scenario as run (after --set), printed by cJSON */
    char *echo = cJSON_Print((const cJSON *)sc->json);
    jw_key(&w, "input");
    if (echo) {
        for (const char *p = echo; *p; p++) {
            fputc(*p, f);
            if (*p == '\n') fputs("  ", f);
        }
        cJSON_free(echo);
    } else {
        fputs("null", f);
    }
    fputs("\n}\n", f);
    return ferror(f) ? FB_EIO : FB_OK;
}

void rep_csv_header(FILE *f, const sim_scenario *sc) {
    fputs("variant,t_s,arrivals,ended,success,fallback_success,degraded,errors,slo_missed,"
          "error_rate,in_flight,pod_queue,busy_workers,p50_ms,p99_ms,fault_active",
          f);
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        const char *n = sc->providers[p].name;
        fprintf(f,
                ",%s_attempts,%s_errors,%s_rate_limited,%s_timeouts,%s_in_service,%s_queue,"
                "%s_open,%s_half_open",
                n, n, n, n, n, n, n, n);
    }
    fputc('\n', f);
}

void rep_csv_row(FILE *f, const sim_scenario *sc, const char *variant, const sim_row *r) {
    double err = r->ended ? (double)r->errors / (double)r->ended : 0;
    fprintf(f,
            "%s,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
            ",%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%d",
            variant, (double)r->t_us / 1e6, r->arrivals, r->ended, r->success, r->fallback_success,
            r->degraded, r->errors, r->slo_missed, err, r->in_flight, r->pod_queue, r->busy_workers,
            r->latency_p50_ms, r->latency_p99_ms, r->fault_active ? 1 : 0);
    for (uint32_t p = 0; p < sc->provider_count; p++)
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%.4f,%.4f",
                r->p[p].attempts, r->p[p].errors, r->p[p].rate_limited, r->p[p].timeouts,
                r->p[p].in_service, r->p[p].queue, r->p[p].open_share, r->p[p].half_open_share);
    fputc('\n', f);
}

void rep_event_line(FILE *f, const sim_scenario *sc, const char *variant, const sim_log_event *ev) {
    fprintf(f, "{\"t_s\":%.6f,\"variant\":", (double)ev->t_us / 1e6);
    jw_str(f, variant);
    fputs(",\"provider\":", f);
    jw_str(f, sc->providers[ev->provider].name);
    if (ev->type == SIM_EV_BREAKER) {
        const fb_breaker_event *b = &ev->breaker;
        if (ev->pod < 0)
            fputs(",\"type\":\"breaker\",\"pod\":\"shared\"", f);
        else
            fprintf(f, ",\"type\":\"breaker\",\"pod\":%d", ev->pod);
        fprintf(f,
                ",\"from\":\"%s\",\"to\":\"%s\",\"cause\":\"%s\",\"calls\":%u,\"failures\":%u,"
                "\"slow\":%u,\"consecutive_failures\":%u,\"trips\":%u",
                fb_breaker_state_name(b->from), fb_breaker_state_name(b->to),
                fb_breaker_cause_name(b->cause), b->calls, b->failures, b->slow,
                b->consecutive_failures, b->trips);
        if (b->to == FB_BREAKER_OPEN)
            fprintf(f, ",\"open_until_s\":%.6f", (double)b->open_until_us / 1e6);
        fputs("}\n", f);
        return;
    }
    const sim_fault *fa = &sc->providers[ev->provider].faults[ev->fault];
    fprintf(f, ",\"type\":\"%s\",\"fault\":%u,\"kind\":\"%s\"}\n",
            ev->type == SIM_EV_FAULT_START ? "fault_start" : "fault_end", ev->fault,
            sim_fault_kind_name(fa->kind));
}

void rep_format_duration(char *buf, size_t len, double us) {
    double s = us / 1e6;
    if (s < 1)
        snprintf(buf, len, "%.0fms", us / 1e3);
    else if (s < 60)
        snprintf(buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm %02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%dh %02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void row_label(FILE *f, const char *label) {
    fprintf(f, "%-24s", label);
}

void rep_text_summary(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    char buf[64];
    rep_format_duration(buf, sizeof buf, (double)sc->duration_us);
    fprintf(f, "%s: %s simulated, seed %" PRIu64 ", %zu variant%s\n", sc->name, buf, sc->seed, n,
            n == 1 ? "" : "s");
    int w = 16; /* column width: wide enough for every variant's name */
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(sums[i]->variant) + 2 > w) w = (int)strlen(sums[i]->variant) + 2;
    row_label(f, "");
    for (size_t i = 0; i < n; i++) fprintf(f, "%*s", w, sums[i]->variant);
    fputc('\n', f);
    struct {
        const char *label, *metric;
        int kind; /* 0 count, 1 percent, 2 duration, 3 usd, 4 multiplier */
    } rows[] = {
        {"requests", "requests", 0},
        {"success rate", "success_rate", 1},
        {"  via fallback", "fallback_rate", 1},
        {"  degraded answers", "degraded", 0},
        {"errors", "errors", 0},
        {"  pod timeouts", "errors_timeout", 0},
        {"  pod queue full", "errors_queue_full", 0},
        {"latency p50", "latency_p50", 2},
        {"latency p99", "latency_p99", 2},
        {"amplification", "amplification", 4},
        {"  inside faults", "amplification_fault", 4},
        {"blast radius", "blast_radius", 0},
        {"  collateral share", "collateral_share", 1},
        {"spillover", "spillover", 2},
        {"peak in flight", "in_flight_peak", 0},
        {"cost", "cost_usd", 3},
        {"  wasted", "cost_wasted_usd", 3},
        {"breaker opens", "breaker_opens", 0},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        row_label(f, rows[r].label);
        for (size_t i = 0; i < n; i++) {
            double v = sim_metric_get(sc, sums[i], rows[r].metric);
            switch (rows[r].kind) {
            case 0:
                snprintf(buf, sizeof buf, "%.0f", v);
                break;
            case 1:
                snprintf(buf, sizeof buf, "%.2f%%", v * 100);
                break;
            case 2:
                rep_format_duration(buf, sizeof buf, v);
                break;
            case 3:
                snprintf(buf, sizeof buf, "$%.2f", v);
                break;
            default:
                snprintf(buf, sizeof buf, "%.2fx", v);
                break;
            }
            if (rows[r].kind == 2 && strcmp(rows[r].metric, "spillover") == 0 &&
                sim_metric_get(sc, sums[i], "recovered") < 0.5)
                strncat(buf, "+", sizeof buf - strlen(buf) - 1);
            fprintf(f, "%*s", w, buf);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < n; i++)
        if (!sums[i]->complete)
            fprintf(f, "variant %s stopped early: %s\n", sums[i]->variant, sums[i]->stop_reason);
}
