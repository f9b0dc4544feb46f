/* metrics.c - the metric table; see metrics.h and docs/metrics.md. */
#include "reports/metrics.h"

#include <stdio.h>
#include <string.h>

static const rep_metric_def defs[] = {
    {"requests", REP_UNIT_COUNT, false, "user requests that arrived"},
    {"ended", REP_UNIT_COUNT, false, "user requests that ended (all of them once the run drains)"},
    {"success_rate", REP_UNIT_RATIO, false, "successes (primary or fallback) / requests ended"},
    {"availability", REP_UNIT_RATIO, false, "(successes + degraded answers) / requests ended"},
    {"error_rate", REP_UNIT_RATIO, false, "errors / requests ended"},
    {"successes", REP_UNIT_COUNT, false, "requests answered by a provider"},
    {"success_primary", REP_UNIT_COUNT, false, "answered by the first provider tried"},
    {"success_fallback", REP_UNIT_COUNT, false, "answered by a later provider in the chain"},
    {"fallback_rate", REP_UNIT_RATIO, false, "success_fallback / requests ended"},
    {"degraded", REP_UNIT_COUNT, false, "answered by the degraded/cached path"},
    {"errors", REP_UNIT_COUNT, false, "requests that ended in an error"},
    {"errors_timeout", REP_UNIT_COUNT, false, "errors: the pod's request timeout fired"},
    {"errors_queue_full", REP_UNIT_COUNT, false, "errors: the pod's queue was full"},
    {"errors_exhausted", REP_UNIT_COUNT, false, "errors: every provider tried failed"},
    {"errors_breaker_open", REP_UNIT_COUNT, false, "errors: every breaker rejected"},
    {"errors_permanent", REP_UNIT_COUNT, false, "errors: permanent 4xx"},
    {"errors_policy", REP_UNIT_COUNT, false, "errors: content-policy rejections"},
    {"errors_context_length", REP_UNIT_COUNT, false, "errors: no window large enough"},
    {"errors_rate_limited", REP_UNIT_COUNT, false, "errors: client-side limiter rejected"},
    {"errors_deadline", REP_UNIT_COUNT, false, "errors: the retry deadline passed"},
    {"errors_stream_broken", REP_UNIT_COUNT, false, "errors: failed after output was shown"},
    {"latency_p50", REP_UNIT_US, false, "median end-to-end latency of requests that ended"},
    {"latency_p90", REP_UNIT_US, false, "90th percentile latency"},
    {"latency_p99", REP_UNIT_US, false, "99th percentile latency"},
    {"latency_p999", REP_UNIT_US, false, "99.9th percentile latency"},
    {"latency_max", REP_UNIT_US, false, "maximum latency"},
    {"latency_mean", REP_UNIT_US, false, "mean latency"},
    {"success_latency_p99", REP_UNIT_US, false, "99th percentile latency of successes"},
    {"attempts", REP_UNIT_COUNT, false, "provider attempts, all providers"},
    {"retries", REP_UNIT_COUNT, false, "retries of the same provider"},
    {"fallbacks", REP_UNIT_COUNT, false, "moves to another provider after a failure"},
    {"amplification", REP_UNIT_RATIO, false,
     "provider attempts / user requests that call a provider"},
    {"amplification_fault", REP_UNIT_RATIO, false,
     "attempts / requests, both counted inside fault and spike windows"},
    {"blast_radius", REP_UNIT_COUNT, false, "requests that failed or missed the latency SLO"},
    {"blast_radius_rate", REP_UNIT_RATIO, false, "blast_radius / requests ended"},
    {"collateral", REP_UNIT_COUNT, false,
     "blast radius among requests whose class calls no faulted provider"},
    {"collateral_share", REP_UNIT_RATIO, false, "collateral / blast_radius (0 when none)"},
    {"slo_missed", REP_UNIT_COUNT, false, "answered, but later than the SLO"},
    {"spillover", REP_UNIT_US, false,
     "longest time from the end of a fault (or spike) until back to baseline"},
    {"recovered", REP_UNIT_BOOL, false, "1 when every fault's spillover ended before the run did"},
    {"in_flight_peak", REP_UNIT_COUNT, false, "most requests in the system at once"},
    {"pod_queue_peak", REP_UNIT_COUNT, false, "most requests waiting in pod queues at once"},
    {"cost_usd", REP_UNIT_USD, false, "tokens billed x price, all providers"},
    {"cost_wasted_usd", REP_UNIT_USD, false, "billed for attempts whose output was not used"},
    {"fallback_extra_cost_usd", REP_UNIT_USD, false,
     "what fallback answers cost beyond the same tokens on the primary"},
    {"breaker_opens", REP_UNIT_COUNT, false, "transitions into open, all providers and pods"},
    {"breaker_transitions", REP_UNIT_COUNT, false, "breaker state changes"},
    {"breaker_open_time", REP_UNIT_US, false, "time open per pod, summed over providers"},
    {"budget_refusals", REP_UNIT_COUNT, false, "retries refused by the retry budget"},
    {"stream_failures", REP_UNIT_COUNT, false, "attempts that failed after the first token"},
    {"tokens_duplicated", REP_UNIT_COUNT, false, "output tokens the user saw twice"},
    {"tokens_wasted", REP_UNIT_COUNT, false, "billed tokens (in + out) not used for an answer"},
    {"attempts[]", REP_UNIT_COUNT, true, "attempts sent to the provider"},
    {"served[]", REP_UNIT_COUNT, true, "attempts the provider worked on (billed)"},
    {"errors[]", REP_UNIT_COUNT, true, "attempts that did not succeed"},
    {"rate_limited[]", REP_UNIT_COUNT, true, "attempts answered 429"},
    {"timeouts[]", REP_UNIT_COUNT, true, "attempts the client timed out"},
    {"cost_usd[]", REP_UNIT_USD, true, "cost billed by the provider"},
    {"tokens_in[]", REP_UNIT_COUNT, true, "input tokens billed"},
    {"tokens_out[]", REP_UNIT_COUNT, true, "output tokens billed"},
    {"breaker_opens[]", REP_UNIT_COUNT, true, "transitions into open"},
    {"breaker_open_time[]", REP_UNIT_US, true, "time open (per pod, or the shared store's)"},
    {"breaker_rejections[]", REP_UNIT_COUNT, true, "calls the breaker rejected"},
    {"queue_peak[]", REP_UNIT_COUNT, true, "longest provider queue"},
    {NULL, REP_UNIT_COUNT, false, NULL},
};

const rep_metric_def *rep_metric_defs(void) {
    return defs;
}

static double ratio(double a, double b) {
    return b > 0 ? a / b : 0;
}

const rep_metric_def *rep_metric_find(const char *name) {
    for (const rep_metric_def *d = defs; d->name; d++)
        if (strcmp(d->name, name) == 0) return d;
    return NULL;
}

static int provider_value(const sim_provider_summary *ps, const char *base, double *v) {
    if (strcmp(base, "attempts") == 0)
        *v = (double)ps->attempts;
    else if (strcmp(base, "served") == 0)
        *v = (double)ps->served;
    else if (strcmp(base, "errors") == 0)
        *v = (double)(ps->attempts - ps->outcomes[FB_OUT_SUCCESS]);
    else if (strcmp(base, "rate_limited") == 0)
        *v = (double)ps->outcomes[FB_OUT_RATE_LIMITED];
    else if (strcmp(base, "timeouts") == 0)
        *v = (double)ps->outcomes[FB_OUT_TIMEOUT];
    else if (strcmp(base, "cost_usd") == 0)
        *v = ps->cost_usd;
    else if (strcmp(base, "tokens_in") == 0)
        *v = (double)ps->tokens_in;
    else if (strcmp(base, "tokens_out") == 0)
        *v = (double)ps->tokens_out;
    else if (strcmp(base, "breaker_opens") == 0)
        *v = (double)ps->breaker_opens;
    else if (strcmp(base, "breaker_open_time") == 0)
        *v = ps->breaker_open_s * 1e6;
    else if (strcmp(base, "breaker_rejections") == 0)
        *v = (double)ps->breaker_rejections;
    else if (strcmp(base, "queue_peak") == 0)
        *v = (double)ps->queue_peak;
    else
        return FB_ENOTFOUND;
    return FB_OK;
}

static int scalar_value(const sim_scenario *sc, const sim_summary *s, const char *n, double *v) {
    uint64_t ended = 0, succ = s->ended[SIM_END_SUCCESS];
    for (int e = 0; e < SIM_END_COUNT; e++) ended += s->ended[e];
    double dended = (double)ended;
    if (strcmp(n, "requests") == 0)
        *v = (double)s->requests;
    else if (strcmp(n, "ended") == 0)
        *v = dended;
    else if (strcmp(n, "success_rate") == 0)
        *v = ratio((double)succ, dended);
    else if (strcmp(n, "availability") == 0)
        *v = ratio((double)(succ + s->ended[SIM_END_DEGRADED]), dended);
    else if (strcmp(n, "error_rate") == 0)
        *v = ratio((double)s->errors, dended);
    else if (strcmp(n, "successes") == 0)
        *v = (double)succ;
    else if (strcmp(n, "success_primary") == 0)
        *v = (double)s->success_primary;
    else if (strcmp(n, "success_fallback") == 0)
        *v = (double)s->success_fallback;
    else if (strcmp(n, "fallback_rate") == 0)
        *v = ratio((double)s->success_fallback, dended);
    else if (strcmp(n, "degraded") == 0)
        *v = (double)s->ended[SIM_END_DEGRADED];
    else if (strcmp(n, "errors") == 0)
        *v = (double)s->errors;
    else if (strncmp(n, "errors_", 7) == 0) {
        for (int e = 0; e < SIM_END_COUNT; e++)
            if (strcmp(n + 7, sim_end_name((sim_end)e)) == 0) {
                *v = (double)s->ended[e];
                return FB_OK;
            }
        return FB_ENOTFOUND;
    } else if (strcmp(n, "latency_p50") == 0)
        *v = (double)fb_hist_percentile(&s->latency, 50);
    else if (strcmp(n, "latency_p90") == 0)
        *v = (double)fb_hist_percentile(&s->latency, 90);
    else if (strcmp(n, "latency_p99") == 0)
        *v = (double)fb_hist_percentile(&s->latency, 99);
    else if (strcmp(n, "latency_p999") == 0)
        *v = (double)fb_hist_percentile(&s->latency, 99.9);
    else if (strcmp(n, "latency_max") == 0)
        *v = (double)fb_hist_max(&s->latency);
    else if (strcmp(n, "latency_mean") == 0)
        *v = fb_hist_mean(&s->latency);
    else if (strcmp(n, "success_latency_p99") == 0)
        *v = (double)fb_hist_percentile(&s->latency_ok, 99);
    else if (strcmp(n, "attempts") == 0)
        *v = (double)s->attempts;
    else if (strcmp(n, "retries") == 0)
        *v = (double)s->retries;
    else if (strcmp(n, "fallbacks") == 0)
        *v = (double)s->fallbacks;
    else if (strcmp(n, "amplification") == 0)
        *v = ratio((double)s->attempts, (double)s->requests_calling);
    else if (strcmp(n, "amplification_fault") == 0)
        *v = ratio((double)s->attempts_in_fault, (double)s->requests_in_fault);
    else if (strcmp(n, "blast_radius") == 0)
        *v = (double)s->bad;
    else if (strcmp(n, "blast_radius_rate") == 0)
        *v = ratio((double)s->bad, dended);
    else if (strcmp(n, "collateral") == 0)
        *v = (double)s->bad_collateral;
    else if (strcmp(n, "collateral_share") == 0)
        *v = ratio((double)s->bad_collateral, (double)s->bad);
    else if (strcmp(n, "slo_missed") == 0)
        *v = (double)s->slo_missed;
    else if (strcmp(n, "spillover") == 0) {
        fb_time_us m = 0;
        for (uint32_t i = 0; i < s->fault_count; i++)
            if (s->faults[i].spillover_us > m) m = s->faults[i].spillover_us;
        *v = (double)m;
    } else if (strcmp(n, "recovered") == 0) {
        bool all = true;
        for (uint32_t i = 0; i < s->fault_count; i++) all = all && s->faults[i].recovered;
        *v = all ? 1 : 0;
    } else if (strcmp(n, "in_flight_peak") == 0)
        *v = (double)s->in_flight_peak;
    else if (strcmp(n, "pod_queue_peak") == 0)
        *v = (double)s->pod_queue_peak;
    else if (strcmp(n, "cost_usd") == 0)
        *v = s->cost_usd;
    else if (strcmp(n, "cost_wasted_usd") == 0)
        *v = s->cost_wasted_usd;
    else if (strcmp(n, "fallback_extra_cost_usd") == 0)
        *v = s->fallback_extra_cost_usd;
    else if (strcmp(n, "budget_refusals") == 0)
        *v = (double)s->budget_refusals;
    else if (strcmp(n, "stream_failures") == 0)
        *v = (double)s->stream_failures;
    else if (strcmp(n, "tokens_duplicated") == 0)
        *v = (double)s->tokens_duplicated;
    else {
        double sum = 0;
        const char *base = NULL;
        if (strcmp(n, "breaker_opens") == 0)
            base = "breaker_opens";
        else if (strcmp(n, "breaker_transitions") == 0)
            base = "transitions";
        else if (strcmp(n, "breaker_open_time") == 0)
            base = "breaker_open_time";
        else if (strcmp(n, "tokens_wasted") == 0)
            base = "wasted";
        else
            return FB_ENOTFOUND;
        for (uint32_t p = 0; p < sc->provider_count; p++) {
            const sim_provider_summary *ps = &s->providers[p];
            double x = 0;
            if (strcmp(base, "transitions") == 0)
                x = (double)ps->breaker_transitions;
            else if (strcmp(base, "wasted") == 0)
                x = (double)(ps->tokens_in_wasted + ps->tokens_out_wasted);
            else
                provider_value(ps, base, &x);
            sum += x;
        }
        *v = sum;
    }
    return FB_OK;
}

int rep_metric_value(const sim_scenario *sc, const sim_summary *sum, const char *name,
                     double *value, rep_unit *unit, char *msg, size_t msglen) {
    char base[64];
    const char *br = strchr(name, '[');
    if (br) {
        size_t blen = (size_t)(br - name);
        const char *close = strchr(br, ']');
        if (close == NULL || close[1] != '\0' || blen == 0 || blen + 3 > sizeof base) {
            snprintf(msg, msglen,
                     "malformed metric '%s' (per-provider metrics look like "
                     "attempts[openai])",
                     name);
            return FB_ENOTFOUND;
        }
        memcpy(base, name, blen);
        memcpy(base + blen, "[]", 3);
        const rep_metric_def *d = rep_metric_find(base);
        if (d == NULL) {
            snprintf(msg, msglen, "unknown per-provider metric '%.*s'", (int)blen, name);
            return FB_ENOTFOUND;
        }
        char prov[SIM_NAME_MAX];
        size_t plen = (size_t)(close - br - 1);
        if (plen == 0 || plen >= sizeof prov) {
            snprintf(msg, msglen, "metric '%s': empty or long provider name", name);
            return FB_ENOTFOUND;
        }
        memcpy(prov, br + 1, plen);
        prov[plen] = '\0';
        int p = sim_scenario_provider(sc, prov);
        if (p < 0) {
            snprintf(msg, msglen, "metric '%s': no provider named '%s'", name, prov);
            return FB_ENOTFOUND;
        }
        base[blen] = '\0';
        if (unit) *unit = d->unit;
        return provider_value(&sum->providers[p], base, value);
    }
    const rep_metric_def *d = rep_metric_find(name);
    if (d == NULL || d->per_provider) {
        /* suggest the closest name */
        const char *best = NULL;
        size_t best_score = 0;
        for (const rep_metric_def *e = defs; e->name; e++) {
            size_t common = 0;
            while (e->name[common] && e->name[common] == name[common]) common++;
            if (common > best_score) {
                best_score = common;
                best = e->name;
            }
        }
        if (best && best_score >= 3)
            snprintf(msg, msglen, "unknown metric '%s' (did you mean '%s'?)", name, best);
        else
            snprintf(msg, msglen, "unknown metric '%s'", name);
        return FB_ENOTFOUND;
    }
    if (unit) *unit = d->unit;
    return scalar_value(sc, sum, name, value);
}

double rep_metric(const sim_scenario *sc, const sim_summary *sum, const char *name) {
    double v = 0;
    char msg[160];
    if (rep_metric_value(sc, sum, name, &v, NULL, msg, sizeof msg) != FB_OK) return 0;
    return v;
}
