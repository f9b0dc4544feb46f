/* report.c - report.json, timeseries.csv, events.jsonl, text summary. */
#include "reports/report.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "core/version.h"
#include "reports/breakdown.h"
#include "util/json.h"
#include "reports/settings.h"
#include "sim/metrics.h"
#include "util/xml.h"

/* A metric in its natural unit: counts as integers, durations in seconds; null when n/a. */
static void json_metric(util_json *w, const char *k, double v, sim_unit unit) {
    if (sim_metric_is_na(v)) {
        util_json_null(w, k);
        return;
    }
    switch (unit) {
    case SIM_UNIT_COUNT:
    case SIM_UNIT_BOOL:
        util_json_u64(w, k, (uint64_t)llround(v));
        break;
    case SIM_UNIT_RATIO:
        util_json_fixed(w, k, v, 6);
        break;
    case SIM_UNIT_US:
        util_json_fixed(w, k, v / 1e6, 6);
        break;
    case SIM_UNIT_USD:
        util_json_fixed(w, k, v, 4);
        break;
    }
}

void rep_escape_markup(FILE *f, const char *s) {
    util_out o = util_out_file(f);
    util_xml_escape(&o, s, UTIL_XML_APOS);
}

/* What the scenario's concurrency limits, hedging and connections did at this provider. */
static void write_provider_client(util_json *w, const sim_scenario *sc,
                                  const sim_provider_summary *ps) {
    if (scn_uses(sc, SIM_FEATURE_CONCLIMIT)) {
        util_json_open(w, "concurrency_limit", '{', UTIL_JSON_LINES);
        util_json_u64(w, "rejections", ps->limit_rejections);
        util_json_u64(w, "drops", ps->limit_drops);
        util_json_u64(w, "ignored", ps->limit_ignored);
        util_json_u64(w, "limit_min", ps->limit_min);
        util_json_u64(w, "limit_max", ps->limit_max);
        util_json_close(w);
    }
    if (scn_uses(sc, SIM_FEATURE_HEDGING)) util_json_u64(w, "hedges", ps->hedges);
    if (scn_uses(sc, SIM_FEATURE_POOL)) {
        util_json_open(w, "connections", '{', UTIL_JSON_LINES);
        util_json_u64(w, "waits", ps->conn_waits);
        util_json_fixed(w, "wait_s", ps->conn_wait_s, 6);
        util_json_u64(w, "setups", ps->conn_setups);
        util_json_close(w);
    }
}

static void write_provider(util_json *w, const sim_scenario *sc, uint32_t p, const sim_summary *s) {
    const sim_provider_summary *ps = &s->providers[p];
    util_json_open(w, sc->providers[p].name, '{', UTIL_JSON_LINES);
    util_json_u64(w, "attempts", ps->attempts);
    util_json_open(w, "outcomes", '{', UTIL_JSON_LINES);
    /* a provider's own answers are never "rejected" (that is a layer's refusal) */
    for (int o = 0; o < FB_OUT_REJECTED; o++)
        util_json_u64(w, fb_outcome_name((fb_outcome)o), ps->outcomes[o]);
    util_json_close(w);
    util_json_u64(w, "served", ps->served);
    util_json_u64(w, "abandoned", ps->abandoned);
    util_json_u64(w, "unfinished", ps->unfinished);
    util_json_u64(w, "capacity_429", ps->capacity_429);
    util_json_u64(w, "overloaded", ps->overloaded);
    util_json_u64(w, "shed", ps->shed);
    util_json_open(w, "tokens", '{', UTIL_JSON_LINES);
    util_json_u64(w, "in", ps->tokens_in);
    util_json_u64(w, "out", ps->tokens_out);
    util_json_u64(w, "in_wasted", ps->tokens_in_wasted);
    util_json_u64(w, "out_wasted", ps->tokens_out_wasted);
    util_json_close(w);
    util_json_fixed(w, "cost_usd", ps->cost_usd, 4);
    util_json_fixed(w, "cost_wasted_usd", ps->cost_wasted_usd, 4);
    util_json_open(w, "breaker", '{', UTIL_JSON_LINES);
    util_json_u64(w, "opens", ps->breaker_opens);
    util_json_u64(w, "transitions", ps->breaker_transitions);
    util_json_fixed(w, "open_s", ps->breaker_open_s, 6);
    util_json_u64(w, "rejections", ps->breaker_rejections);
    util_json_close(w);
    util_json_open(w, "limiter", '{', UTIL_JSON_LINES);
    util_json_u64(w, "waits", ps->limiter_waits);
    util_json_u64(w, "rejections", ps->limiter_rejections);
    util_json_close(w);
    util_json_open(w, "peaks", '{', UTIL_JSON_LINES);
    util_json_u64(w, "in_service", ps->in_service_peak);
    util_json_u64(w, "queue", ps->queue_peak);
    util_json_close(w);
    write_provider_client(w, sc, ps);
    util_json_close(w);
}

/* A layered variant's layers, outermost first as declared: what each received and made. */
/* A preset layer's settings in effect in the library's words (reports/settings.c). */
static void write_library(util_json *w, const sim_scenario *sc, const sim_layer *l) {
    char words[1024];
    if (l->preset == NULL || l->preset->vocab == NULL) return;
    util_json_open(w, "library", '{', UTIL_JSON_LINES);
    util_json_str(w, "preset", l->preset->name);
    if (rep_library_settings(words, sizeof words, l, SIM_PROVIDERS_MAX, false) > 0)
        util_json_str(w, "retry", words);
    /* by provider; an outer layer's one breaker guards the layer inside ("inside") */
    util_json_open(w, "breakers", '{', UTIL_JSON_LINES);
    bool outer = l->role == SIM_ROLE_OUTER;
    for (uint32_t p = 0; p < (outer ? 1 : sc->provider_count); p++)
        if (rep_library_settings(words, sizeof words, l, p, true) > 0)
            util_json_str(w, outer ? "inside" : sc->providers[p].name, words);
    util_json_close(w);
    util_json_close(w);
}

static void write_layers(util_json *w, const sim_scenario *sc, const sim_summary *s) {
    static const char *const roles[] = {"router", "outside the router", "inside the router"};
    int v = scn_variant(sc, s->variant);
    if (v < 0 || !sc->variants[v].layered) return;
    const sim_policy *pol = &sc->variants[v];
    util_json_open(w, "layers", '[', UTIL_JSON_LINES);
    for (uint32_t l = 0; l < s->layer_count; l++) {
        const sim_layer_summary *ls = &s->layers[l];
        util_json_open(w, NULL, '{', UTIL_JSON_LINES);
        util_json_str(w, "name", pol->layers[l].name);
        util_json_str(w, "role", roles[pol->layers[l].role]);
        if (pol->layers[l].gateway) util_json_bool(w, "gateway", true); /* runs on the replicas */
        util_json_u64(w, "calls", ls->calls);
        util_json_u64(w, "attempts", ls->attempts);
        util_json_fixed(w, "amplification",
                        ls->calls ? (double)ls->attempts / (double)ls->calls : 0, 6);
        util_json_u64(w, "retries", ls->retries);
        util_json_u64(w, "fallbacks", ls->fallbacks);
        if (pol->layers[l].role != SIM_ROLE_OUTER) {
            util_json_open(w, "attempts_to", '{', UTIL_JSON_LINES);
            for (uint32_t p = 0; p < sc->provider_count; p++)
                util_json_u64(w, sc->providers[p].name, ls->attempts_to[p]);
            util_json_close(w);
        }
        util_json_open(w, "breaker", '{', UTIL_JSON_LINES);
        util_json_u64(w, "opens", ls->breaker_opens);
        util_json_u64(w, "transitions", ls->breaker_transitions);
        util_json_u64(w, "rejections", ls->breaker_rejections);
        util_json_close(w);
        write_library(w, sc, &pol->layers[l]);
        util_json_close(w);
    }
    util_json_close(w);
}

/* What a disturbance is: "api fault 0 (outage)", "chat spike 1", "breaker store outage 0". */
static void disturbance_name(char *buf, size_t len, const sim_scenario *sc,
                             const sim_fault_summary *f) {
    if (f->store) {
        snprintf(buf, len, "breaker store outage %u", f->fault);
        return;
    }
    if (f->spike) {
        snprintf(buf, len, "%s spike %u", sc->classes[f->cls].name, f->fault);
        return;
    }
    const sim_fault *fa = &sc->providers[f->provider].faults[f->fault];
    snprintf(buf, len, "%s fault %u (%s)", sc->providers[f->provider].name, f->fault,
             scn_fault_kind_name(fa->kind));
}

void rep_undetermined_reason(char *buf, size_t len, const sim_scenario *sc,
                             const sim_fault_summary *f) {
    char end[32], hold[32], dur[32];
    rep_format_duration(end, sizeof end, (double)f->end_us);
    rep_format_duration(dur, sizeof dur, (double)sc->duration_us);
    rep_format_duration(hold, sizeof hold, (double)sc->spillover.hold_us);
    if (f->undetermined == SIM_UNDETERMINED_ACTIVE) {
        snprintf(buf, len, "still active when traffic ended (at %s)", dur);
    } else if (f->undetermined == SIM_UNDETERMINED_NEXT && f->next_us <= f->end_us) {
        char next[32];
        rep_format_duration(next, sizeof next, (double)f->next_us);
        snprintf(buf, len,
                 "followed without a gap by the next disturbance (at %s): judged with it, the "
                 "system is back from both when it is back from the later",
                 next);
    } else if (f->undetermined == SIM_UNDETERMINED_NEXT) {
        char next[32], gap[32];
        rep_format_duration(next, sizeof next, (double)f->next_us);
        rep_format_duration(gap, sizeof gap, (double)f->spillover_us);
        snprintf(buf, len,
                 "not back to baseline before the next disturbance began (at %s): its spillover "
                 "is measured to there, at least %s",
                 next, gap);
    } else {
        snprintf(buf, len,
                 "no full spillover.hold window (%s) fits between its end (%s) and the end of "
                 "traffic (%s)",
                 hold, end, dur);
    }
}

/* A disturbance's spillover; recovered and spillover_s are null when it cannot be judged. */
static void write_disturbance(util_json *w, const sim_scenario *sc, const sim_fault_summary *f) {
    util_json_open(w, NULL, '{', UTIL_JSON_LINES);
    if (f->store) {
        util_json_u64(w, "store_outage", f->fault);
        util_json_str(w, "kind", "store_outage");
    } else if (f->spike) {
        util_json_str(w, "class", sc->classes[f->cls].name);
        util_json_u64(w, "spike", f->fault);
        util_json_str(w, "kind", "spike");
    } else {
        const sim_fault *fa = &sc->providers[f->provider].faults[f->fault];
        util_json_str(w, "provider", sc->providers[f->provider].name);
        util_json_u64(w, "fault", f->fault);
        util_json_str(w, "kind", scn_fault_kind_name(fa->kind));
    }
    util_json_fixed(w, "start_s", (double)f->start_us / 1e6, 6);
    util_json_fixed(w, "end_s", (double)f->end_us / 1e6, 6);
    if (f->undetermined != SIM_DETERMINED) {
        char why[256];
        rep_undetermined_reason(why, sizeof why, sc, f);
        if (f->undetermined == SIM_UNDETERMINED_NEXT) /* to the next one's start, said so */
            util_json_fixed(w, "spillover_s", (double)f->spillover_us / 1e6, 6);
        else
            util_json_null(w, "spillover_s");
        util_json_null(w, "recovered");
        util_json_str(w, "undetermined", why);
    } else {
        util_json_fixed(w, "spillover_s", (double)f->spillover_us / 1e6, 6);
        util_json_bool(w, "recovered", f->recovered);
    }
    util_json_close(w);
}

/* One gateway replica's figures (or the tier's totals). */
static void write_replica(util_json *w, const sim_replica_summary *x) {
    util_json_u64(w, "calls", x->calls);
    util_json_u64(w, "attempts", x->attempts);
    util_json_u64(w, "queued", x->queued);
    util_json_u64(w, "queue_full", x->queue_full);
    util_json_u64(w, "abandoned", x->abandoned);
    util_json_u64(w, "busy_peak", x->busy_peak);
    util_json_u64(w, "queue_peak", x->queue_peak);
    util_json_fixed(w, "wait_ms_mean",
                    x->queued > x->abandoned
                        ? (double)x->wait_us_total / 1e3 / (double)(x->queued - x->abandoned)
                        : 0,
                    3);
    util_json_fixed(w, "wait_ms_max", (double)x->wait_us_max / 1e3, 3);
    util_json_u64(w, "cooldowns", x->cooldowns);
    util_json_u64(w, "cooldowns_learned", x->learned);
}

/* A variant's gateway tier: its settings, its totals, each replica's figures. */
static void write_gateway(util_json *w, const sim_scenario *sc, const sim_summary *s) {
    static const char *const balances[] = {"round_robin", "random", "least_busy"};
    int v = scn_variant(sc, s->variant);
    if (v < 0 || sc->variants[v].gateway.replicas == 0) return;
    const sim_gateway *g = &sc->variants[v].gateway;
    util_json_open(w, "gateway", '{', UTIL_JSON_LINES);
    util_json_u64(w, "replicas", g->replicas);
    util_json_u64(w, "workers", g->workers);
    util_json_u64(w, "queue", g->queue);
    util_json_str(w, "balance", balances[g->balance]);
    util_json_u64(w, "queue_full_status", g->queue_full_status);
    util_json_open(w, "total", '{', UTIL_JSON_LINES);
    write_replica(w, &s->gateway.total);
    util_json_close(w);
    util_json_open(w, "per_replica", '[', UTIL_JSON_LINES);
    for (uint32_t k = 0; k < s->gateway.replicas; k++) {
        util_json_open(w, NULL, '{', UTIL_JSON_LINES);
        util_json_u64(w, "replica", k);
        write_replica(w, &s->gateway.replica[k]);
        util_json_close(w);
    }
    util_json_close(w);
    util_json_close(w);
}

/* Below the table: each gateway tier, one line per replica. */
static void text_gateways(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const sim_gateway_summary *g = &sums[i]->gateway;
        int v = scn_variant(sc, sums[i]->variant);
        if (v < 0 || g->replicas == 0) continue;
        const sim_gateway *cfg = &sc->variants[v].gateway;
        fprintf(f, "gateway of %s: %u replicas x %u workers, queue %u\n", sums[i]->variant,
                cfg->replicas, cfg->workers, cfg->queue);
        fprintf(f, "  %-8s%10s%10s%8s%11s%11s%10s%10s%9s\n", "replica", "calls", "attempts",
                "queued", "queue full", "wait max", "busy peak", "cooldowns", "learned");
        for (uint32_t k = 0; k < g->replicas; k++) {
            const sim_replica_summary *x = &g->replica[k];
            char wait[32];
            rep_format_duration(wait, sizeof wait, (double)x->wait_us_max);
            fprintf(f,
                    "  %-8u%10" PRIu64 "%10" PRIu64 "%8" PRIu64 "%11" PRIu64 "%11s%10u%10" PRIu64
                    "%9" PRIu64 "\n",
                    k, x->calls, x->attempts, x->queued, x->queue_full, wait, x->busy_peak,
                    x->cooldowns, x->learned);
        }
    }
}

/* Per traffic class, the per-class rows of the metric table, named without "class_" and "[]". */
static void write_classes(util_json *w, const sim_scenario *sc, const sim_summary *s) {
    util_json_open(w, "classes", '{', UTIL_JSON_LINES);
    for (uint32_t c = 0; c < sc->class_count; c++) {
        util_json_open(w, sc->classes[c].name, '{', UTIL_JSON_LINES);
        for (const sim_metric *d = sim_metrics(); d->name; d++) {
            if (!d->per_class) continue;
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)strlen(d->name) - 8, d->name + 6);
            json_metric(w, key, sim_metric_row(d, sc, s, c), d->unit);
        }
        util_json_close(w);
    }
    util_json_close(w);
}

static void write_variant(util_json *w, const sim_scenario *sc, const sim_summary *s) {
    util_json_open(w, s->variant, '{', UTIL_JSON_LINES);
    util_json_bool(w, "complete", s->complete);
    if (!s->complete) util_json_str(w, "stopped", s->stop_reason);
    util_json_open(w, "summary", '{', UTIL_JSON_LINES);
    for (const sim_metric *d = sim_metrics(); d->name; d++)
        if (!d->per_provider && !d->per_layer && !d->per_class && sim_metric_shown(sc, d))
            json_metric(w, d->name, sim_metric_row(d, sc, s, 0), d->unit);
    util_json_close(w);
    util_json_open(w, "outcomes", '{', UTIL_JSON_LINES);
    util_json_u64(w, "success_primary", s->success_primary);
    util_json_u64(w, "success_fallback", s->success_fallback);
    util_json_u64(w, "degraded", s->ended[SIM_END_DEGRADED]);
    util_json_open(w, "errors", '{', UTIL_JSON_LINES);
    for (int e = SIM_END_DEGRADED + 1; e < SIM_END_COUNT; e++)
        util_json_u64(w, sim_end_name((sim_end)e), s->ended[e]);
    util_json_close(w);
    util_json_close(w);
    util_json_open(w, "latency_ms", '{', UTIL_JSON_LINES);
    util_json_fixed(w, "p50", (double)fb_hist_percentile(&s->latency, 50) / 1e3, 3);
    util_json_fixed(w, "p90", (double)fb_hist_percentile(&s->latency, 90) / 1e3, 3);
    util_json_fixed(w, "p99", (double)fb_hist_percentile(&s->latency, 99) / 1e3, 3);
    util_json_fixed(w, "p99.9", (double)fb_hist_percentile(&s->latency, 99.9) / 1e3, 3);
    util_json_fixed(w, "max", (double)fb_hist_max(&s->latency) / 1e3, 3);
    util_json_fixed(w, "mean", fb_hist_mean(&s->latency) / 1e3, 3);
    util_json_close(w);
    util_json_open(w, "baseline", '{', UTIL_JSON_LINES);
    util_json_fixed(w, "error_rate", s->baseline_error_rate, 6);
    util_json_fixed(w, "p99_ms", (double)s->baseline_p99_us / 1e3, 3);
    util_json_close(w);
    util_json_open(w, "spillover", '[', UTIL_JSON_LINES);
    for (uint32_t i = 0; i < s->fault_count; i++) write_disturbance(w, sc, &s->faults[i]);
    util_json_close(w);
    util_json_open(w, "providers", '{', UTIL_JSON_LINES);
    for (uint32_t p = 0; p < sc->provider_count; p++) write_provider(w, sc, p, s);
    util_json_close(w);
    write_layers(w, sc, s);
    write_gateway(w, sc, s);
    write_classes(w, sc, s);
    rep_breakdown_json(w, sc, s);
    util_json_u64(w, "simulated_events", s->events);
    util_json_fixed(w, "end_s", (double)s->end_us / 1e6, 6);
    util_json_u64(w, "events_dropped", s->events_dropped);
    util_json_close(w);
}

int rep_write_json(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    return rep_write_json_extra(f, sc, sums, n, NULL, 0);
}

int rep_write_json_extra(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                         const rep_extra *extra, size_t nextra) {
    return rep_write_json_run(f, sc, sums, n, false, extra, nextra);
}

int rep_write_json_run(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n,
                       bool interrupted, const rep_extra *extra, size_t nextra) {
    util_json w;
    util_json_init(&w, util_out_file(f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_LINES);
    util_json_str(&w, "fusebox", FB_VERSION);
    util_json_str(&w, "scenario", sc->name);
    util_json_str(&w, "file", sc->file);
    util_json_u64(&w, "seed", sc->seed);
    util_json_str(&w, "rng", FB_RNG_VERSION); /* the random streams (docs/rng.md) */
    util_json_fixed(&w, "duration_s", (double)sc->duration_us / 1e6, 6);
    util_json_fixed(&w, "slo_latency_s", (double)sc->slo_latency_us / 1e6, 6);
    bool complete = !interrupted;
    for (size_t i = 0; i < n; i++) complete = complete && sums[i]->complete;
    util_json_bool(&w, "complete", complete);
    /* only when true, so that a whole run's report.json keeps its bytes */
    if (interrupted) util_json_bool(&w, "interrupted", true);
    for (size_t i = 0; i < nextra; i++) util_json_raw(&w, extra[i].key, extra[i].json);
    util_json_open(&w, "variants", '{', UTIL_JSON_LINES);
    for (size_t i = 0; i < n; i++) write_variant(&w, sc, sums[i]);
    util_json_close(&w);
    /* the scenario as run (after --set), printed by cJSON */
    char *echo = cJSON_Print((const cJSON *)sc->json);
    util_json_key(&w, "input");
    if (echo) {
        for (const char *p = echo; *p; p++) {
            fputc(*p, f);
            if (*p == '\n') fputs("  ", f);
        }
        cJSON_free(echo);
    } else {
        fputs("null", f);
    }
    util_json_close(&w);
    fputc('\n', f);
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
    /* the columns of what the scenario uses, after every provider's usual ones */
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        if (scn_uses(sc, SIM_FEATURE_CONCLIMIT)) fprintf(f, ",%s_limit", sc->providers[p].name);
        if (scn_uses(sc, SIM_FEATURE_POOL)) fprintf(f, ",%s_conn_wait", sc->providers[p].name);
    }
    /* then the fleet's, last, and only for scenarios that use them */
    if (scn_uses(sc, SIM_FEATURE_AUTOSCALE)) fputs(",pods,pods_starting", f);
    if (scn_uses(sc, SIM_FEATURE_RESUBMIT)) fputs(",resubmissions", f);
    if (scn_uses(sc, SIM_FEATURE_STORE_OUTAGE)) fputs(",store_down", f);
    fputc('\n', f);
}

/* A cell of timeseries.csv, the comma before it: an integer ("%" PRIu64, "%u", "%d" of 0/1). */
static void cell_u(const util_out *o, uint64_t v) {
    char t[1 + 24];
    t[0] = ',';
    util_put(o, t, 1 + util_decimal(t + 1, v, false));
}

/* A cell with `decimals` decimals ("%.*f"): util_fixed's bytes, printf's where it has none. */
static void cell_f(const util_out *o, double v, int decimals) {
    char t[1 + UTIL_FIXED_MAX];
    t[0] = ',';
    size_t n = util_fixed(t + 1, v, decimals);
    if (n > 0)
        util_put(o, t, 1 + n);
    else
        util_printf(o, ",%.*f", decimals, v);
}

void rep_csv_row(FILE *f, const sim_scenario *sc, const char *variant, const sim_row *r) {
    util_out_buffer line; /* the row's bytes, written with one fwrite */
    const util_out o = util_out_buffered(&line, f), *out = &o;
    double err = r->ended ? (double)r->errors / (double)r->ended : 0;
    util_put(out, variant, strlen(variant));
    cell_f(out, (double)r->t_us / 1e6, 3);
    cell_u(out, r->arrivals);
    cell_u(out, r->ended);
    cell_u(out, r->success);
    cell_u(out, r->fallback_success);
    cell_u(out, r->degraded);
    cell_u(out, r->errors);
    cell_u(out, r->slo_missed);
    cell_f(out, err, 6);
    cell_u(out, r->in_flight);
    cell_u(out, r->pod_queue);
    cell_u(out, r->busy_workers);
    cell_f(out, r->latency_p50_ms, 3);
    cell_f(out, r->latency_p99_ms, 3);
    cell_u(out, r->fault_active ? 1 : 0);
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        cell_u(out, r->p[p].attempts);
        cell_u(out, r->p[p].errors);
        cell_u(out, r->p[p].rate_limited);
        cell_u(out, r->p[p].timeouts);
        cell_u(out, r->p[p].in_service);
        cell_u(out, r->p[p].queue);
        cell_f(out, r->p[p].open_share, 4);
        cell_f(out, r->p[p].half_open_share, 4);
    }
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        /* a variant without a limit for p leaves its cell empty */
        if (scn_uses(sc, SIM_FEATURE_CONCLIMIT)) {
            if (sim_metric_is_na(r->p[p].limit))
                util_put(out, ",", 1);
            else
                cell_f(out, r->p[p].limit, 2);
        }
        if (scn_uses(sc, SIM_FEATURE_POOL)) cell_u(out, r->p[p].conn_wait);
    }
    if (scn_uses(sc, SIM_FEATURE_AUTOSCALE)) {
        cell_u(out, r->pods_ready);
        cell_u(out, r->pods_starting);
    }
    if (scn_uses(sc, SIM_FEATURE_RESUBMIT)) cell_u(out, r->resubmissions);
    if (scn_uses(sc, SIM_FEATURE_STORE_OUTAGE)) cell_u(out, r->store_down ? 1 : 0);
    util_put(out, "\n", 1);
    util_out_flush(&line);
}

/* The autoscaler's decisions and the breaker store's outages (docs/reports.md). */
static bool fleet_event(util_json *w, const sim_log_event *ev) {
    switch (ev->type) {
    case SIM_EV_SCALE:
        util_json_str(w, "type", "scale");
        util_json_u64(w, "from", ev->pods_from);
        util_json_u64(w, "to", ev->pods_to);
        util_json_u64(w, "ready", ev->pods_ready);
        util_json_fixed(w, "metric", ev->metric, 6);
        return true;
    case SIM_EV_STORE_DOWN:
    case SIM_EV_STORE_UP:
        util_json_str(w, "type", ev->type == SIM_EV_STORE_DOWN ? "store_down" : "store_up");
        util_json_u64(w, "store_outage", ev->fault);
        return true;
    default:
        return false;
    }
}

/* The LiteLLM cooldown (a COOLDOWN-mode breaker) of provider p in the variant pol (NULL: none
   of the scenario's), or NULL. */
static const fb_breaker_config *litellm_cooldown(const sim_policy *pol, uint32_t p) {
    if (pol == NULL || p >= SIM_PROVIDERS_MAX) return NULL;
    for (uint32_t k = 0; k < pol->layer_count; k++) {
        const sim_provider_policy *pp = &pol->layers[k].per_provider[p];
        if (pp->has_breaker && pp->breaker.mode == FB_BREAKER_MODE_COOLDOWN) return &pp->breaker;
    }
    return NULL;
}

/*
 * A LiteLLM cooldown's transition as LiteLLM would tell it ("litellm" in events.jsonl): who
 * cools, how long and why, or that the cooldown ended by itself. NULL for other breakers.
 */
static const char *litellm_words(char *buf, size_t len, const sim_scenario *sc,
                                 const sim_policy *pol, const sim_log_event *ev) {
    const fb_breaker_config *c = litellm_cooldown(pol, ev->provider);
    const fb_breaker_event *b = &ev->breaker;
    const char *name = sc->providers[ev->provider].name;
    if (c == NULL) return NULL;
    if (b->to == FB_BREAKER_CLOSED) {
        snprintf(buf, len, "the cooldown of %s ends by itself (a TTL; no half-open)", name);
        return buf;
    }
    if (b->to != FB_BREAKER_OPEN) return NULL;
    fb_time_us d = b->open_until_us - ev->t_us;
    char dd[32];
    rep_format_duration(dd, sizeof dd, (double)d);
    const char *whose = c->honor_hint != FB_ON ? "its cooldown_time"
                        : d != c->open_us      ? "the error's Retry-After"
                                               : "cooldown_time, or a Retry-After as long";
    const char *why = "";
    switch (b->cause) {
    case FB_CAUSE_IMMEDIATE:
        why = "at once: a 429 in a group of several deployments, or a status LiteLLM does not "
              "retry (401, 404)";
        break;
    case FB_CAUSE_FAILURE_RATE:
        why = c->failure_rate >= 1.0
                  ? "every one of at least 1000 requests it counted in a minute failed"
                  : "more than half of the requests it counted in a minute failed (at least 5)";
        break;
    case FB_CAUSE_FAILURE_COUNT:
        why = "more failures than allowed_fails (or its exception class's) counted within "
              "cooldown_time of the first";
        break;
    case FB_CAUSE_SYNC:
        why = "read from Redis (another instance cooled it)";
        break;
    default:
        why = "";
        break;
    }
    snprintf(buf, len, "LiteLLM cools %s for %s (%s)%s%s", name, dd, whose, *why ? ": " : "", why);
    return buf;
}

/* The vocabulary's parameter that says field f, with its value ("failureRateThreshold 50%"). */
static bool library_param(char *buf, size_t len, const sim_layer *l, uint32_t p,
                          sim_vocab_field f) {
    const sim_vocab *v = l->preset->vocab;
    for (const sim_vocab_param *vp = v->params; vp && vp->name; vp++) {
        char val[64];
        if (vp->field != f || !rep_library_value(val, sizeof val, l, p, vp)) continue;
        snprintf(buf, len, "%s%s%s", vp->name, f == SIM_VF_CONSECUTIVE_ABOVE ? " > " : " ", val);
        return true;
    }
    return false;
}

/* Why a transition happened, in the words of the library's parameters; the cause's name when
   the vocabulary has no parameter for it. */
static void library_why(char *buf, size_t len, const sim_layer *l, const sim_log_event *ev) {
    const fb_breaker_event *b = &ev->breaker;
    const fb_breaker_config *c = &l->per_provider[ev->provider].breaker;
    uint32_t p = ev->provider;
    char w[160] = "", sweep[96];
    bool named = true;
    switch (b->cause) {
    case FB_CAUSE_CONSECUTIVE_FAILURES:
        named = library_param(w, sizeof w, l, p, SIM_VF_CONSECUTIVE) ||
                library_param(w, sizeof w, l, p, SIM_VF_CONSECUTIVE_ABOVE);
        snprintf(buf, len, " at %s (%u failures in a row)", w, b->consecutive_failures);
        break;
    case FB_CAUSE_FAILURE_RATE:
        named = library_param(w, sizeof w, l, p, SIM_VF_FAILURE_RATE);
        snprintf(buf, len, " at %s (%u of %u calls failed)", w, b->failures, b->calls);
        break;
    case FB_CAUSE_SLOW_CALL_RATE:
        named = library_param(w, sizeof w, l, p, SIM_VF_SLOW_RATE);
        snprintf(buf, len, " at %s (%u of %u calls slow)", w, b->slow, b->calls);
        break;
    case FB_CAUSE_OPEN_ELAPSED: {
        /* a period that grows with the opens in a row, or ends at a sweep, says so (Envoy) */
        named = library_param(w, sizeof w, l, p, SIM_VF_OPEN_US);
        int n = snprintf(buf, len, " after %s%s", w,
                         c->open_growth != FB_OPEN_GROWTH_NONE ? " (grown with the opens in a row)"
                                                               : "");
        if (c->open_align_us > 0 && n >= 0 && (size_t)n < len &&
            library_param(sweep, sizeof sweep, l, p, SIM_VF_OPEN_ALIGN_US))
            snprintf(buf + n, len - (size_t)n, ", at a sweep (%s)", sweep);
        break;
    }
    case FB_CAUSE_HALF_OPEN_MAX_WAIT:
        named = library_param(w, sizeof w, l, p, SIM_VF_HALF_OPEN_MAX_US);
        snprintf(buf, len, " after %s", w);
        break;
    case FB_CAUSE_PROBES_SUCCEEDED:
        if (library_param(w, sizeof w, l, p, SIM_VF_PERMITS))
            snprintf(buf, len, " after the trial calls (%s)", w);
        else /* a library with one trial call and no parameter for it (Polly, opossum) */
            snprintf(buf, len, " after its trial call succeeded");
        break;
    case FB_CAUSE_PROBE_FAILED:
        snprintf(buf, len, ": a trial call failed");
        break;
    case FB_CAUSE_PROBE_LEASE_EXPIRED:
        snprintf(buf, len, ": a trial call did not report in time");
        break;
    case FB_CAUSE_SYNC:
        snprintf(buf, len, ": read from the shared store");
        break;
    default:
        named = false;
        break;
    }
    if (!named) snprintf(buf, len, " (%s)", fb_breaker_cause_name(b->cause));
}

/*
 * The transition in the words of the preset the breaker's layer was given as: its states
 * ("library_from", "library_to") and a sentence ("library": "resilience4j: OPEN -> HALF_OPEN
 * after waitDurationInOpenState 60s"). Nothing for a layer of fusebox's own keys.
 */
static void library_event(util_json *w, const sim_policy *pol, const sim_log_event *ev,
                          const char *litellm) {
    const sim_layer *l = pol == NULL ? NULL : rep_library_layer(pol, ev->provider);
    if (l == NULL) return;
    const fb_breaker_event *b = &ev->breaker;
    const char *from = rep_library_state(l, b->from), *to = rep_library_state(l, b->to);
    if (from == NULL) from = fb_breaker_state_name(b->from);
    if (to == NULL) to = fb_breaker_state_name(b->to);
    util_json_str(w, "library_from", from);
    util_json_str(w, "library_to", to);
    if (litellm) { /* LiteLLM's own sentence says it best */
        util_json_str(w, "library", litellm);
        return;
    }
    char why[256], open_for[96] = "", text[512];
    library_why(why, sizeof why, l, ev);
    if (b->to == FB_BREAKER_OPEN) {
        char d[32];
        rep_format_duration(d, sizeof d, (double)(b->open_until_us - ev->t_us));
        snprintf(open_for, sizeof open_for, "; %s for %s", to, d);
    }
    snprintf(text, sizeof text, "%s: %s -> %s%s%s", l->preset->vocab->name, from, to, why,
             open_for);
    util_json_str(w, "library", text);
}

/* The literal s onto the line (b, k): its length is known when compiled. */
#define LINE_LIT(b, k, s) (memcpy((b) + (k), (s), sizeof(s) - 1), (k) += sizeof(s) - 1)
/* The longest string a fast line takes as it is (util_json_str's one-put path takes 120). */
#define LINE_STR_MAX 100

/* The string s onto the line at *k when it needs no escape and is not long; false if not. */
static bool line_str(char *line, size_t *k, const char *s) {
    size_t n = util_json_plain_string(line + *k, s, LINE_STR_MAX);
    *k += n;
    return n > 0;
}

/* v with six decimals onto the line at *k when util_fixed writes it; false if not. */
static bool line_fixed(char *line, size_t *k, double v) {
    size_t n = util_fixed(line + *k, v, 6);
    *k += n;
    return n > 0;
}

/*
 * A breaker transition's line with the bytes the writer below gives it, for the common case (a
 * layer of fusebox's own keys, no LiteLLM cooldown, names that need no escape): made from
 * constants in a buffer and written with one fwrite, about a fifth of the writer's
 * instructions (a storm logs thousands). False, nothing written, when the line takes the
 * writer's way.
 */
static bool breaker_line(FILE *f, const sim_scenario *sc, const char *variant,
                         const sim_policy *pol, const sim_log_event *ev) {
    const fb_breaker_event *b = &ev->breaker;
    if (pol == NULL || litellm_cooldown(pol, ev->provider) != NULL ||
        rep_library_layer(pol, ev->provider) != NULL)
        return false;
    char line[5 * (LINE_STR_MAX + 2) + 2 * UTIL_FIXED_MAX + 6 * 21 + 200];
    size_t k = 0;
    LINE_LIT(line, k, "{\"t_s\":");
    if (!line_fixed(line, &k, (double)ev->t_us / 1e6)) return false;
    LINE_LIT(line, k, ",\"variant\":");
    if (!line_str(line, &k, variant)) return false;
    LINE_LIT(line, k, ",\"provider\":");
    if (!line_str(line, &k, sc->providers[ev->provider].name)) return false;
    LINE_LIT(line, k, ",\"type\":\"breaker\",");
    if (ev->pod < 0) {
        LINE_LIT(line, k, "\"pod\":\"shared\"");
    } else if (pol->gateway.replicas > 0 && ev->pod >= (int)sc->pods.count) {
        LINE_LIT(line, k, "\"replica\":");
        k += util_decimal(line + k, (uint64_t)(ev->pod - (int)sc->pods.count), false);
    } else {
        LINE_LIT(line, k, "\"pod\":");
        k += util_decimal(line + k, (uint64_t)ev->pod, false);
    }
    LINE_LIT(line, k, ",\"from\":");
    if (!line_str(line, &k, fb_breaker_state_name(b->from))) return false;
    LINE_LIT(line, k, ",\"to\":");
    if (!line_str(line, &k, fb_breaker_state_name(b->to))) return false;
    LINE_LIT(line, k, ",\"cause\":");
    if (!line_str(line, &k, fb_breaker_cause_name(b->cause))) return false;
    LINE_LIT(line, k, ",\"calls\":");
    k += util_decimal(line + k, b->calls, false);
    LINE_LIT(line, k, ",\"failures\":");
    k += util_decimal(line + k, b->failures, false);
    LINE_LIT(line, k, ",\"slow\":");
    k += util_decimal(line + k, b->slow, false);
    LINE_LIT(line, k, ",\"consecutive_failures\":");
    k += util_decimal(line + k, b->consecutive_failures, false);
    LINE_LIT(line, k, ",\"trips\":");
    k += util_decimal(line + k, b->trips, false);
    if (b->to == FB_BREAKER_OPEN) {
        LINE_LIT(line, k, ",\"open_until_s\":");
        if (!line_fixed(line, &k, (double)b->open_until_us / 1e6)) return false;
    }
    LINE_LIT(line, k, "}\n");
    fwrite(line, 1, k, f);
    return true;
}

void rep_event_line(FILE *f, const sim_scenario *sc, const char *variant, const sim_log_event *ev) {
    util_out_buffer line; /* the line's bytes, written with one fwrite */
    util_json w;
    int v = scn_variant(sc, variant); /* once: the words below read its layers too */
    const sim_policy *pol = v >= 0 ? &sc->variants[v] : NULL;
    if (ev->type == SIM_EV_BREAKER && breaker_line(f, sc, variant, pol, ev)) return;
    util_json_init(&w, util_out_buffered(&line, f), UTIL_JSON_SHORT_NEWLINE);
    util_json_open(&w, NULL, '{', UTIL_JSON_COMPACT);
    util_json_fixed(&w, "t_s", (double)ev->t_us / 1e6, 6);
    util_json_str(&w, "variant", variant);
    if (fleet_event(&w, ev)) {
        util_json_close(&w);
        util_json_text(&w, "\n");
        util_out_flush(&line);
        return;
    }
    util_json_str(&w, "provider", sc->providers[ev->provider].name);
    if (ev->type == SIM_EV_BREAKER) {
        const fb_breaker_event *b = &ev->breaker;
        util_json_str(&w, "type", "breaker");
        bool tier = pol != NULL && pol->gateway.replicas > 0;
        if (ev->pod < 0)
            util_json_str(&w, "pod", "shared");
        else if (tier && ev->pod >= (int)sc->pods.count) /* a gateway replica's seat */
            util_json_i64(&w, "replica", ev->pod - (int)sc->pods.count);
        else
            util_json_i64(&w, "pod", ev->pod);
        util_json_str(&w, "from", fb_breaker_state_name(b->from));
        util_json_str(&w, "to", fb_breaker_state_name(b->to));
        util_json_str(&w, "cause", fb_breaker_cause_name(b->cause));
        util_json_u64(&w, "calls", b->calls);
        util_json_u64(&w, "failures", b->failures);
        util_json_u64(&w, "slow", b->slow);
        util_json_u64(&w, "consecutive_failures", b->consecutive_failures);
        util_json_u64(&w, "trips", b->trips);
        if (b->to == FB_BREAKER_OPEN)
            util_json_fixed(&w, "open_until_s", (double)b->open_until_us / 1e6, 6);
        char words[256];
        const char *lw = litellm_words(words, sizeof words, sc, pol, ev);
        if (lw) util_json_str(&w, "litellm", lw);
        library_event(&w, pol, ev, lw);
    } else {
        const sim_fault *fa = &sc->providers[ev->provider].faults[ev->fault];
        util_json_str(&w, "type", ev->type == SIM_EV_FAULT_START ? "fault_start" : "fault_end");
        util_json_u64(&w, "fault", ev->fault);
        util_json_str(&w, "kind", scn_fault_kind_name(fa->kind));
    }
    util_json_close(&w);
    util_json_text(&w, "\n");
    util_out_flush(&line);
}

void rep_format_duration(char *buf, size_t len, double us) {
    double s = us / 1e6;
    /* found by tests/fuzz/fuzz_sim.c: an n/a duration (NaN), or one past INT_MAX hours,
       reached the (int) casts below, which is undefined behaviour */
    if (isnan(s))
        snprintf(buf, len, "n/a");
    else if (s >= 3600.0 * 1e9)
        snprintf(buf, len, "%.3gh", s / 3600);
    else if (s < 1)
        snprintf(buf, len, "%.0fms", us / 1e3);
    else if (s < 60)
        snprintf(buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm %02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%dh %02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static const rep_summary_row summary_rows[] = {
    {"requests", "requests", REP_SHOW_COUNT, false, SIM_FEATURE_ALWAYS},
    {"success rate", "success_rate", REP_SHOW_PERCENT, false, SIM_FEATURE_ALWAYS},
    {"via fallback", "fallback_rate", REP_SHOW_PERCENT, true, SIM_FEATURE_ALWAYS},
    {"degraded answers", "degraded", REP_SHOW_COUNT, true, SIM_FEATURE_ALWAYS},
    {"errors", "errors", REP_SHOW_COUNT, false, SIM_FEATURE_ALWAYS},
    {"pod timeouts", "errors_timeout", REP_SHOW_COUNT, true, SIM_FEATURE_ALWAYS},
    {"pod queue full", "errors_queue_full", REP_SHOW_COUNT, true, SIM_FEATURE_ALWAYS},
    {"latency p50", "latency_p50", REP_SHOW_DURATION, false, SIM_FEATURE_ALWAYS},
    {"latency p99", "latency_p99", REP_SHOW_DURATION, false, SIM_FEATURE_ALWAYS},
    {"amplification", "amplification", REP_SHOW_MULTIPLIER, false, SIM_FEATURE_ALWAYS},
    {"inside faults", "amplification_fault", REP_SHOW_MULTIPLIER, true, SIM_FEATURE_ALWAYS},
    {"blast radius", "blast_radius", REP_SHOW_COUNT, false, SIM_FEATURE_ALWAYS},
    {"collateral share", "collateral_share", REP_SHOW_PERCENT, true, SIM_FEATURE_ALWAYS},
    {"spillover", "spillover", REP_SHOW_DURATION, false, SIM_FEATURE_ALWAYS},
    {"peak in flight", "in_flight_peak", REP_SHOW_COUNT, false, SIM_FEATURE_ALWAYS},
    {"cost", "cost_usd", REP_SHOW_USD, false, SIM_FEATURE_ALWAYS},
    {"wasted", "cost_wasted_usd", REP_SHOW_USD, true, SIM_FEATURE_ALWAYS},
    {"breaker opens", "breaker_opens", REP_SHOW_COUNT, false, SIM_FEATURE_ALWAYS},
    /* the features a scenario may use, each only when it does */
    {"limit rejections", "limit_rejections", REP_SHOW_COUNT, false, SIM_FEATURE_CONCLIMIT},
    {"hedges", "hedges", REP_SHOW_COUNT, false, SIM_FEATURE_HEDGING},
    {"won by a hedge", "hedges_won", REP_SHOW_COUNT, true, SIM_FEATURE_HEDGING},
    {"connection waits", "conn_waits", REP_SHOW_COUNT, false, SIM_FEATURE_POOL},
    {"connections opened", "conn_setups", REP_SHOW_COUNT, true, SIM_FEATURE_POOL},
    {"pods peak", "pods_peak", REP_SHOW_COUNT, false, SIM_FEATURE_AUTOSCALE},
    {"pods mean", "pods_mean", REP_SHOW_DECIMAL, true, SIM_FEATURE_AUTOSCALE},
    {"pods added", "pods_added", REP_SHOW_COUNT, true, SIM_FEATURE_AUTOSCALE},
    {"pods removed", "pods_removed", REP_SHOW_COUNT, true, SIM_FEATURE_AUTOSCALE},
    {"scale events", "scale_events", REP_SHOW_COUNT, true, SIM_FEATURE_AUTOSCALE},
    {"re-submissions", "resubmissions", REP_SHOW_COUNT, false, SIM_FEATURE_RESUBMIT},
    {"user requests", "user_requests", REP_SHOW_COUNT, true, SIM_FEATURE_RESUBMIT},
    {"user success rate", "user_success_rate", REP_SHOW_PERCENT, true, SIM_FEATURE_RESUBMIT},
    {"users gave up", "users_gave_up", REP_SHOW_COUNT, true, SIM_FEATURE_RESUBMIT},
    {"user amplification", "user_amplification", REP_SHOW_MULTIPLIER, true, SIM_FEATURE_RESUBMIT},
    {"serial lag", "serial_lag", REP_SHOW_DURATION, false, SIM_FEATURE_SERIAL},
    {"serial backlog", "serial_backlog", REP_SHOW_COUNT, true, SIM_FEATURE_SERIAL},
    {"pod requests min", "pod_requests_min", REP_SHOW_COUNT, false, SIM_FEATURE_PER_POD},
    {"pod requests max", "pod_requests_max", REP_SHOW_COUNT, true, SIM_FEATURE_PER_POD},
    {"store unreachable", "store_unreachable", REP_SHOW_COUNT, false, SIM_FEATURE_STORE_OUTAGE},
    {"store records lost", "store_records_lost", REP_SHOW_COUNT, true, SIM_FEATURE_STORE_OUTAGE},
    {"gateway calls", "gateway_calls", REP_SHOW_COUNT, false, SIM_FEATURE_GATEWAY},
    {"queued", "gateway_queued", REP_SHOW_COUNT, true, SIM_FEATURE_GATEWAY},
    {"queue full", "gateway_queue_full", REP_SHOW_COUNT, true, SIM_FEATURE_GATEWAY},
    {"cooldowns", "gateway_cooldowns", REP_SHOW_COUNT, true, SIM_FEATURE_GATEWAY},
};

const rep_summary_row *rep_summary_rows(size_t *count) {
    *count = sizeof summary_rows / sizeof summary_rows[0];
    return summary_rows;
}

bool rep_summary_row_shown(const sim_scenario *sc, const rep_summary_row *row) {
    return scn_uses(sc, row->feature);
}

/* 13265045 -> "13,265,045": long counts are read at a glance. */
static void format_count(char *buf, size_t len, uint64_t v) {
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < nd && o + 2 < len; i++) {
        if (i > 0 && (nd - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void rep_format_show(char *buf, size_t len, rep_show show, double v, bool grouped) {
    if (sim_metric_is_na(v)) {
        snprintf(buf, len, "n/a");
        return;
    }
    switch (show) {
    case REP_SHOW_COUNT:
        if (grouped)
            format_count(buf, len, v > 0 ? (uint64_t)llround(v) : 0);
        else
            snprintf(buf, len, "%.0f", v);
        break;
    case REP_SHOW_PERCENT:
        snprintf(buf, len, "%.2f%%", v * 100);
        break;
    case REP_SHOW_DURATION:
        rep_format_duration(buf, len, v);
        break;
    case REP_SHOW_USD:
        snprintf(buf, len, "$%.2f", v);
        break;
    case REP_SHOW_MULTIPLIER:
        snprintf(buf, len, "%.2fx", v);
        break;
    case REP_SHOW_DECIMAL:
        snprintf(buf, len, "%.1f", v);
        break;
    }
}

void rep_summary_cell(char *buf, size_t len, const sim_scenario *sc, const sim_summary *s,
                      const rep_summary_row *row, bool grouped) {
    rep_format_show(buf, len, row->show, sim_metric_get(sc, s, row->metric), grouped);
    if (strcmp(row->metric, "spillover") == 0 && sim_metric_get(sc, s, "recovered") == 0)
        strncat(buf, "+", len - strlen(buf) - 1);
}

/* Is fault k undetermined for the same reason in every variant? */
static bool same_everywhere(const sim_scenario *sc, sim_summary *const *sums, size_t n, uint32_t k,
                            char *why, size_t len) {
    char other[256];
    for (size_t i = 0; i < n; i++) {
        const sim_fault_summary *fs = &sums[i]->faults[k];
        if (k >= sums[i]->fault_count || fs->undetermined == SIM_DETERMINED) return false;
        rep_undetermined_reason(i ? other : why, i ? sizeof other : len, sc, fs);
        if (i && strcmp(other, why) != 0) return false;
    }
    return n > 0;
}

/* Does disturbance k run into the next one without a gap, in every variant? */
static bool adjoins_everywhere(sim_summary *const *sums, size_t n, uint32_t k) {
    for (size_t i = 0; i < n; i++) {
        const sim_fault_summary *fs = &sums[i]->faults[k];
        if (k >= sums[i]->fault_count || fs->undetermined != SIM_UNDETERMINED_NEXT ||
            fs->next_us > fs->end_us)
            return false;
    }
    return n > 0;
}

/* One line for disturbances first..last, each running into the next without a gap. */
static void adjoining_line(FILE *f, const sim_scenario *sc, sim_summary *const *sums,
                           uint32_t first, uint32_t last) {
    char a[160], b[160], at[32];
    disturbance_name(a, sizeof a, sc, &sums[0]->faults[first]);
    disturbance_name(b, sizeof b, sc, &sums[0]->faults[last]);
    rep_format_duration(at, sizeof at, (double)sums[0]->faults[last].next_us);
    if (first == last)
        fprintf(f,
                "%s runs into the next disturbance (at %s) without a gap: its recovery is "
                "judged with it\n",
                a, at);
    else
        fprintf(f,
                "%s to %s run into each other and the next (at %s) without a gap: their "
                "recovery is judged with the last\n",
                a, b, at);
}

/*
 * Below the table: every disturbance whose recovery nobody can judge, and why - once for
 * all variants where they agree, and one line alone when no disturbance can be judged
 * because the traffic is shorter than a spillover.hold window after each of them.
 */
static void text_undetermined(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    uint32_t nf = n ? sums[0]->fault_count : 0;
    bool short_run = nf > 0; /* no disturbance had a full window after it, in any variant */
    size_t voters = 0;       /* ... of those not judged with the next (adjoining) */
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < sums[i]->fault_count; k++) {
            const sim_fault_summary *fs = &sums[i]->faults[k];
            if (fs->undetermined == SIM_UNDETERMINED_NEXT && fs->next_us <= fs->end_us) continue;
            voters++;
            fb_time_us until = fs->next_us != FB_TIME_NONE && fs->next_us < sc->duration_us
                                   ? fs->next_us
                                   : sc->duration_us;
            short_run &= fs->undetermined != SIM_DETERMINED &&
                         fb_time_add(fs->end_us, sc->spillover.hold_us) > until;
        }
    if (short_run && voters > 0) {
        char hold[32], dur[32];
        rep_format_duration(hold, sizeof hold, (double)sc->spillover.hold_us);
        rep_format_duration(dur, sizeof dur, (double)sc->duration_us);
        fprintf(f,
                "recovery not measured: no disturbance is followed by a full spillover.hold "
                "window (%s) before the next one or the end of traffic (%s)\n",
                hold, dur);
        return;
    }
    uint32_t run = 0; /* disturbances in a row that run into the next in every variant */
    for (uint32_t k = 0; k < nf; k++) {
        char name[160], why[256];
        if (adjoins_everywhere(sums, n, k)) {
            run++;
            continue;
        }
        if (run > 0) adjoining_line(f, sc, sums, k - run, k - 1);
        run = 0;
        disturbance_name(name, sizeof name, sc, &sums[0]->faults[k]);
        if (n > 1 && same_everywhere(sc, sums, n, k, why, sizeof why)) {
            fprintf(f, "every variant: recovery from %s undetermined: %s\n", name, why);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const sim_fault_summary *fs = &sums[i]->faults[k];
            if (k >= sums[i]->fault_count || fs->undetermined == SIM_DETERMINED) continue;
            rep_undetermined_reason(why, sizeof why, sc, fs);
            fprintf(f, "variant %s: recovery from %s undetermined: %s\n", sums[i]->variant, name,
                    why);
        }
    }
    if (run > 0) adjoining_line(f, sc, sums, nf - run, nf - 1);
}

/* One layer's settings in the library's words: its retry, then its breakers (once when every
   provider's is the same). */
static void text_library_layer(FILE *f, const sim_scenario *sc, const sim_layer *l,
                               const char *lead) {
    char words[1024], first[1024] = "";
    bool same = true;
    uint32_t count = l->role == SIM_ROLE_OUTER ? 1 : sc->provider_count, with = 0;
    if (rep_library_settings(words, sizeof words, l, SIM_PROVIDERS_MAX, false) > 0)
        fprintf(f, "  %s: %s\n", lead, words);
    for (uint32_t p = 0; p < count; p++) {
        if (rep_library_settings(words, sizeof words, l, p, true) == 0) continue;
        if (with++ == 0) snprintf(first, sizeof first, "%s", words);
        same = same && strcmp(first, words) == 0;
    }
    for (uint32_t p = 0; p < count && with > 0; p++) {
        if (rep_library_settings(words, sizeof words, l, p, true) == 0) continue;
        const char *who = l->role == SIM_ROLE_OUTER ? "the layer inside"
                          : same && with > 1        ? "every provider"
                                                    : sc->providers[p].name;
        fprintf(f, "  %s, %s: %s\n", lead, who, words);
        if (same) break;
    }
}

/* The preset layers' settings in effect, in the libraries' words (docs/presets.md). */
static void text_library(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    bool header = false;
    for (size_t i = 0; i < n; i++) {
        int v = scn_variant(sc, sums[i]->variant);
        const sim_policy *pol = v < 0 ? NULL : &sc->variants[v];
        for (uint32_t k = 0; pol && k < pol->layer_count; k++) {
            const sim_layer *l = &pol->layers[k];
            if (l->preset == NULL || l->preset->vocab == NULL) continue;
            if (!header) fputs("settings in effect, in the libraries' words:\n", f);
            header = true;
            char lead[2 * SIM_NAME_MAX + 4];
            snprintf(lead, sizeof lead, "%s%s%s", sums[i]->variant, pol->layered ? "/" : "",
                     pol->layered ? l->name : "");
            text_library_layer(f, sc, l, lead);
        }
    }
}

void rep_text_summary(FILE *f, const sim_scenario *sc, sim_summary *const *sums, size_t n) {
    char buf[64];
    rep_format_duration(buf, sizeof buf, (double)sc->duration_us);
    fprintf(f, "%s: %s simulated, seed %" PRIu64 ", %zu variant%s\n", sc->name, buf, sc->seed, n,
            n == 1 ? "" : "s");
    int w = 16; /* column width: wide enough for every variant's name */
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(sums[i]->variant) + 2 > w) w = (int)strlen(sums[i]->variant) + 2;
    fprintf(f, "%-24s", "");
    for (size_t i = 0; i < n; i++) fprintf(f, "%*s", w, sums[i]->variant);
    fputc('\n', f);
    for (size_t r = 0; r < sizeof summary_rows / sizeof summary_rows[0]; r++) {
        const rep_summary_row *row = &summary_rows[r];
        if (!rep_summary_row_shown(sc, row)) continue;
        snprintf(buf, sizeof buf, "%s%s", row->sub ? "  " : "", row->label);
        fprintf(f, "%-24s", buf);
        for (size_t i = 0; i < n; i++) {
            rep_summary_cell(buf, sizeof buf, sc, sums[i], row, false);
            fprintf(f, "%*s", w, buf);
        }
        fputc('\n', f);
    }
    rep_breakdown_text(f, sums, n);
    text_gateways(f, sc, sums, n);
    rep_observed_text(f, sc, sums, n);
    text_undetermined(f, sc, sums, n);
    text_library(f, sc, sums, n);
    for (size_t i = 0; i < n; i++)
        if (!sums[i]->complete)
            fprintf(f, "variant %s stopped early: %s\n", sums[i]->variant, sums[i]->stop_reason);
}
