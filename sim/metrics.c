/* metrics.c - the metric table; see metrics.h and docs/metrics.md. */
#include "sim/metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Every row's function has the one signature; most rows read only the summary. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
/* Rows that are never n/a leave `na` out, and only the per-layer rows name `per_layer`. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static double ratio(double a, double b) {
    return b > 0 ? a / b : 0;
}

static double ended_total(const sim_summary *s) {
    uint64_t ended = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) ended += s->ended[e];
    return (double)ended;
}

/* ---- requests and how they ended ---- */

static double requests(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->requests;
}

static double ended(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ended_total(s);
}

static double success_rate(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->ended[SIM_END_SUCCESS], ended_total(s));
}

static double availability(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)(s->ended[SIM_END_SUCCESS] + s->ended[SIM_END_DEGRADED]), ended_total(s));
}

static double error_rate(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->errors, ended_total(s));
}

static double successes(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_SUCCESS];
}

static double success_primary(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->success_primary;
}

static double success_fallback(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->success_fallback;
}

static double fallback_rate(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->success_fallback, ended_total(s));
}

static double degraded(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_DEGRADED];
}

static double errors(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->errors;
}

static double errors_timeout(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_TIMEOUT];
}

static double errors_queue_full(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_QUEUE_FULL];
}

static double errors_exhausted(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_EXHAUSTED];
}

static double errors_breaker_open(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_BREAKER_OPEN];
}

static double errors_permanent(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_PERMANENT];
}

static double errors_policy(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_POLICY];
}

static double errors_context_length(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_CONTEXT_LENGTH];
}

static double errors_rate_limited(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_RATE_LIMITED];
}

static double errors_deadline(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_DEADLINE];
}

static double errors_stream_broken(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->ended[SIM_END_STREAM_BROKEN];
}

/* ---- latency ---- */

static double latency_p50(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)fb_hist_percentile(&s->latency, 50);
}

static double latency_p90(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)fb_hist_percentile(&s->latency, 90);
}

static double latency_p99(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)fb_hist_percentile(&s->latency, 99);
}

static double latency_p999(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)fb_hist_percentile(&s->latency, 99.9);
}

static double latency_max(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)fb_hist_max(&s->latency);
}

static double latency_mean(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return fb_hist_mean(&s->latency);
}

static double success_latency_p99(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)fb_hist_percentile(&s->latency_ok, 99);
}

/* ---- attempts, blast radius, spillover ---- */

static double attempts(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->attempts;
}

static double retries(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->retries;
}

static double fallbacks(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fallbacks;
}

static double amplification(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->attempts, (double)s->requests_calling);
}

static double amplification_fault(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->attempts_in_fault, (double)s->requests_in_fault);
}

static double blast_radius(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->bad;
}

static double blast_radius_rate(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->bad, ended_total(s));
}

/* Collateral needs classes on both sides: some that call a disturbed provider, some not. */
static double collateral(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    if (s->classes_exposed == 0 || s->classes_unexposed == 0) return NAN;
    return (double)s->bad_collateral;
}

static double collateral_share(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    if (sim_metric_is_na(collateral(sc, s, p)) || s->bad == 0) return NAN;
    return (double)s->bad_collateral / (double)s->bad;
}

static double slo_missed(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->slo_missed;
}

/*
 * 0 when some disturbance was judged and never got back to baseline; else
 * n/a when some could not be judged (or there was none); else 1.
 */
static double recovered(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    bool all = true, unknown = s->fault_count == 0;
    for (uint32_t i = 0; i < s->fault_count; i++) {
        if (s->faults[i].undetermined != SIM_DETERMINED)
            unknown = true;
        else if (!s->faults[i].recovered)
            all = false;
    }
    if (!all) return 0;
    return unknown ? NAN : 1;
}

/* The longest judged spillover; n/a exactly when `recovered` is. */
static double spillover(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    if (sim_metric_is_na(recovered(sc, s, p))) return NAN;
    fb_time_us m = 0;
    for (uint32_t i = 0; i < s->fault_count; i++)
        if (s->faults[i].undetermined == SIM_DETERMINED && s->faults[i].spillover_us > m)
            m = s->faults[i].spillover_us;
    return (double)m;
}

static double in_flight_peak(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->in_flight_peak;
}

static double pod_queue_peak(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->pod_queue_peak;
}

/* ---- cost ---- */

static double cost_usd(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return s->cost_usd;
}

static double cost_wasted_usd(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return s->cost_wasted_usd;
}

static double fallback_extra_cost_usd(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return s->fallback_extra_cost_usd;
}

/* ---- per provider ---- */

static double p_attempts(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].attempts;
}

static double p_served(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].served;
}

static double p_errors(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    const sim_provider_summary *ps = &s->providers[p];
    return (double)(ps->attempts - ps->outcomes[FB_OUT_SUCCESS]);
}

static double p_rate_limited(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].outcomes[FB_OUT_RATE_LIMITED];
}

static double p_timeouts(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].outcomes[FB_OUT_TIMEOUT];
}

static double p_cost_usd(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return s->providers[p].cost_usd;
}

static double p_tokens_in(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].tokens_in;
}

static double p_tokens_out(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].tokens_out;
}

static double p_tokens_wasted(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)(s->providers[p].tokens_in_wasted + s->providers[p].tokens_out_wasted);
}

static double p_breaker_opens(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].breaker_opens;
}

static double p_breaker_transitions(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].breaker_transitions;
}

static double p_breaker_open_time(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return s->providers[p].breaker_open_s * 1e6;
}

static double p_breaker_rejections(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].breaker_rejections;
}

static double p_overloaded(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].overloaded;
}

static double p_shed(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].shed;
}

static double p_queue_peak(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].queue_peak;
}

static double p_limit_rejections(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].limit_rejections;
}

static double p_limit_min(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].limit_min;
}

static double p_limit_max(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].limit_max;
}

static double p_hedges(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].hedges;
}

static double p_conn_waits(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].conn_waits;
}

static double p_conn_setups(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->providers[p].conn_setups;
}

static double p_conn_wait_mean(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    const sim_provider_summary *ps = &s->providers[p];
    return ps->conn_waits ? ps->conn_wait_s * 1e6 / (double)ps->conn_waits : 0;
}

/* ---- totals over providers, summed in provider order ---- */

static double sum_providers(const sim_scenario *sc, const sim_summary *s, sim_metric_fn f) {
    double sum = 0;
    for (uint32_t p = 0; p < sc->provider_count; p++) sum += f(sc, s, p);
    return sum;
}

static double breaker_opens(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_breaker_opens);
}

static double breaker_transitions(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_breaker_transitions);
}

static double breaker_open_time(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_breaker_open_time);
}

static double limit_rejections(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_limit_rejections);
}

static double hedges(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->hedges;
}

static double hedges_won(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->hedges_won;
}

static double hedge_cost_usd(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return s->hedge_cost_usd;
}

static double conn_waits(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_conn_waits);
}

static double conn_setups(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_conn_setups);
}

static double budget_refusals(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->budget_refusals;
}

static double stream_failures(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->stream_failures;
}

static double tokens_duplicated(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->tokens_duplicated;
}

static double tokens_wasted(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return sum_providers(sc, s, p_tokens_wasted);
}

/* ---- the fleet's dynamics ---- */

static double resubmissions(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.resubmissions;
}

static double user_requests(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)(s->requests - s->fleet.resubmissions);
}

/* A user request ends with its last submission: the ends that were not submitted again. */
static double user_success_rate(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->ended[SIM_END_SUCCESS], ended_total(s) - (double)s->fleet.resubmitted);
}

static double users_gave_up(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)(s->errors - s->fleet.resubmitted);
}

static double user_amplification(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio((double)s->attempts,
                 (double)(s->requests_calling - s->fleet.resubmissions_calling));
}

static double serial_lag(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.serial_lag_us;
}

static double serial_backlog(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.serial_backlog;
}

static double pod_requests_min(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.pod_requests_min;
}

static double pod_requests_max(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.pod_requests_max;
}

static double pods_peak(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.pods_peak;
}

static double pods_mean(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return ratio(s->fleet.pod_seconds, (double)s->end_us / 1e6);
}

static double pods_added(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.pods_added;
}

static double pods_removed(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.pods_removed;
}

static double scale_events(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.scale_decisions;
}

static double store_unreachable(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.store_unreachable;
}

static double store_records_lost(const sim_scenario *sc, const sim_summary *s, uint32_t p) {
    return (double)s->fleet.store_records_lost;
}

/* ---- the table ---- */

#define COUNT SIM_UNIT_COUNT
#define RATIO SIM_UNIT_RATIO
#define US SIM_UNIT_US
#define USD SIM_UNIT_USD

/* ---- per layer (index: the layer in the variant) ---- */

static double l_calls(const sim_scenario *sc, const sim_summary *s, uint32_t l) {
    return (double)s->layers[l].calls;
}

static double l_attempts(const sim_scenario *sc, const sim_summary *s, uint32_t l) {
    return (double)s->layers[l].attempts;
}

static double l_amplification(const sim_scenario *sc, const sim_summary *s, uint32_t l) {
    return ratio((double)s->layers[l].attempts, (double)s->layers[l].calls);
}

static double l_retries(const sim_scenario *sc, const sim_summary *s, uint32_t l) {
    return (double)s->layers[l].retries;
}

static double l_fallbacks(const sim_scenario *sc, const sim_summary *s, uint32_t l) {
    return (double)s->layers[l].fallbacks;
}

/* ---- per traffic class (index: the class) ---- */

static double c_requests(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return (double)s->classes[c].requests;
}

static double c_ended(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return (double)s->classes[c].ended;
}

static double c_success_rate(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return ratio((double)s->classes[c].success, (double)s->classes[c].ended);
}

static double c_fallback_rate(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return ratio((double)s->classes[c].success_fallback, (double)s->classes[c].ended);
}

static double c_errors(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return (double)s->classes[c].errors;
}

static double c_error_rate(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return ratio((double)s->classes[c].errors, (double)s->classes[c].ended);
}

static double c_slo_missed(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return (double)s->classes[c].slo_missed;
}

static double c_bad_rate(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    const sim_class_summary *k = &s->classes[c];
    return ratio((double)(k->errors + k->slo_missed), (double)k->ended);
}

static double c_latency_p50(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return (double)fb_hist_percentile(&s->classes[c].latency, 50);
}

static double c_latency_p99(const sim_scenario *sc, const sim_summary *s, uint32_t c) {
    return (double)fb_hist_percentile(&s->classes[c].latency, 99);
}

#define PER_CLASS NULL, false, SIM_FEATURE_ALWAYS, true

/* Kept under 110 characters: expectations quote it (reports/expect.c). */
#define SPILL_NA                                                                                   \
    "n/a when there is no disturbance, or one could not be judged and none was judged unrecovered"

static const sim_metric table[] = {
    {"requests", COUNT, false, "user requests that arrived", requests},
    {"ended", COUNT, false, "user requests that ended (all of them once the run drains)", ended},
    {"success_rate", RATIO, false, "successes (primary or fallback) / requests ended",
     success_rate},
    {"availability", RATIO, false, "(successes + degraded answers) / requests ended", availability},
    {"error_rate", RATIO, false, "errors / requests ended", error_rate},
    {"successes", COUNT, false, "requests answered by a provider", successes},
    {"success_primary", COUNT, false, "answered by the first provider tried", success_primary},
    {"success_fallback", COUNT, false, "answered by a later provider in the chain",
     success_fallback},
    {"fallback_rate", RATIO, false, "success_fallback / requests ended", fallback_rate},
    {"degraded", COUNT, false, "answered by the degraded/cached path", degraded},
    {"errors", COUNT, false, "requests that ended in an error", errors},
    {"errors_timeout", COUNT, false, "errors: the pod's request timeout fired", errors_timeout},
    {"errors_queue_full", COUNT, false, "errors: the pod's queue was full", errors_queue_full},
    {"errors_exhausted", COUNT, false, "errors: every provider tried failed", errors_exhausted},
    {"errors_breaker_open", COUNT, false, "errors: every breaker rejected", errors_breaker_open},
    {"errors_permanent", COUNT, false, "errors: permanent 4xx", errors_permanent},
    {"errors_policy", COUNT, false, "errors: content-policy rejections", errors_policy},
    {"errors_context_length", COUNT, false, "errors: no window large enough",
     errors_context_length},
    {"errors_rate_limited", COUNT, false, "errors: client-side limiter rejected",
     errors_rate_limited},
    {"errors_deadline", COUNT, false, "errors: the retry deadline passed", errors_deadline},
    {"errors_stream_broken", COUNT, false, "errors: failed after output was shown",
     errors_stream_broken},
    {"latency_p50", US, false, "median end-to-end latency of requests that ended", latency_p50},
    {"latency_p90", US, false, "90th percentile latency", latency_p90},
    {"latency_p99", US, false, "99th percentile latency", latency_p99},
    {"latency_p999", US, false, "99.9th percentile latency", latency_p999},
    {"latency_max", US, false, "maximum latency", latency_max},
    {"latency_mean", US, false, "mean latency", latency_mean},
    {"success_latency_p99", US, false, "99th percentile latency of successes", success_latency_p99},
    {"attempts", COUNT, false, "provider attempts, all providers", attempts},
    {"retries", COUNT, false, "retries of the same provider", retries},
    {"fallbacks", COUNT, false, "moves to another provider after a failure", fallbacks},
    {"amplification", RATIO, false, "provider attempts / user requests that call a provider",
     amplification},
    {"amplification_fault", RATIO, false,
     "attempts / requests, both counted inside fault and spike windows", amplification_fault},
    {"blast_radius", COUNT, false, "requests that failed or missed the latency SLO", blast_radius},
    {"blast_radius_rate", RATIO, false, "blast_radius / requests ended", blast_radius_rate},
    {"collateral", COUNT, false,
     "blast radius among requests whose class calls no disturbed provider", collateral,
     "n/a when no class calls a disturbed provider, or every class does"},
    {"collateral_share", RATIO, false, "collateral / blast_radius", collateral_share,
     "n/a when collateral is, or when the blast radius is 0"},
    {"slo_missed", COUNT, false, "answered, but later than the SLO", slo_missed},
    {"spillover", US, false,
     "longest time from the end of a fault (or spike) until back to baseline", spillover, SPILL_NA},
    {"recovered", SIM_UNIT_BOOL, false,
     "1 when every disturbance got back to baseline, 0 when one was judged and did not", recovered,
     SPILL_NA},
    {"in_flight_peak", COUNT, false, "most requests in the system at once", in_flight_peak},
    {"pod_queue_peak", COUNT, false, "most requests waiting in pod queues at once", pod_queue_peak},
    {"cost_usd", USD, false, "tokens billed x price, all providers", cost_usd},
    {"cost_wasted_usd", USD, false, "billed for attempts whose output was not used",
     cost_wasted_usd},
    {"fallback_extra_cost_usd", USD, false,
     "what fallback answers cost beyond the same tokens on the primary", fallback_extra_cost_usd},
    {"breaker_opens", COUNT, false, "transitions into open, all providers and pods", breaker_opens},
    {"breaker_transitions", COUNT, false, "breaker state changes", breaker_transitions},
    {"breaker_open_time", US, false, "time open per pod, summed over providers", breaker_open_time},
    {"budget_refusals", COUNT, false, "retries refused by the retry budget", budget_refusals},
    {"stream_failures", COUNT, false, "attempts that failed after the first token",
     stream_failures},
    {"tokens_duplicated", COUNT, false, "output tokens the user saw twice", tokens_duplicated},
    {"tokens_wasted", COUNT, false, "billed tokens (in + out) not used for an answer",
     tokens_wasted},
    {"limit_rejections", COUNT, false, "calls the concurrency limits rejected, all providers",
     limit_rejections, NULL, false, SIM_FEATURE_CONCLIMIT},
    {"hedges", COUNT, false, "hedged attempts sent (beyond each group's first)", hedges, NULL,
     false, SIM_FEATURE_HEDGING},
    {"hedges_won", COUNT, false, "hedge groups whose answer came from a hedged attempt", hedges_won,
     NULL, false, SIM_FEATURE_HEDGING},
    {"hedge_cost_usd", USD, false, "billed for hedged attempts, winners and losers", hedge_cost_usd,
     NULL, false, SIM_FEATURE_HEDGING},
    {"conn_waits", COUNT, false, "attempts that waited for a connection, all providers", conn_waits,
     NULL, false, SIM_FEATURE_POOL},
    {"conn_setups", COUNT, false, "connections opened, all providers", conn_setups, NULL, false,
     SIM_FEATURE_POOL},
    {"resubmissions", COUNT, false, "requests that were a user's re-submission (in requests)",
     resubmissions, NULL, false, SIM_FEATURE_RESUBMIT},
    {"user_requests", COUNT, false, "requests - resubmissions: what users asked for", user_requests,
     NULL, false, SIM_FEATURE_RESUBMIT},
    {"user_success_rate", RATIO, false,
     "user requests whose last submission succeeded / user requests ended", user_success_rate, NULL,
     false, SIM_FEATURE_RESUBMIT},
    {"users_gave_up", COUNT, false, "user requests whose last submission failed", users_gave_up,
     NULL, false, SIM_FEATURE_RESUBMIT},
    {"user_amplification", RATIO, false,
     "provider attempts / user requests that call a provider (re-submissions included)",
     user_amplification, NULL, false, SIM_FEATURE_RESUBMIT},
    {"serial_lag", US, false, "the longest a serial client's call started after its schedule",
     serial_lag, NULL, false, SIM_FEATURE_SERIAL},
    {"serial_backlog", COUNT, false,
     "serial calls scheduled before the end of traffic that never started", serial_backlog, NULL,
     false, SIM_FEATURE_SERIAL},
    {"pod_requests_min", COUNT, false, "fewest requests a pod received", pod_requests_min, NULL,
     false, SIM_FEATURE_PER_POD},
    {"pod_requests_max", COUNT, false, "most requests a pod received", pod_requests_max, NULL,
     false, SIM_FEATURE_PER_POD},
    {"pods_peak", COUNT, false, "most pods taking traffic at once", pods_peak, NULL, false,
     SIM_FEATURE_AUTOSCALE},
    {"pods_mean", RATIO, false, "pods taking traffic, averaged over the run", pods_mean, NULL,
     false, SIM_FEATURE_AUTOSCALE},
    {"pods_added", COUNT, false, "pods the autoscaler added", pods_added, NULL, false,
     SIM_FEATURE_AUTOSCALE},
    {"pods_removed", COUNT, false, "pods the autoscaler removed", pods_removed, NULL, false,
     SIM_FEATURE_AUTOSCALE},
    {"scale_events", COUNT, false, "times the autoscaler changed the pods it wants", scale_events,
     NULL, false, SIM_FEATURE_AUTOSCALE},
    {"store_unreachable", COUNT, false,
     "breaker checks made while the breaker store was unreachable", store_unreachable, NULL, false,
     SIM_FEATURE_STORE_OUTAGE},
    {"store_records_lost", COUNT, false, "call results that never reached the breaker store",
     store_records_lost, NULL, false, SIM_FEATURE_STORE_OUTAGE},
    {"attempts[]", COUNT, true, "attempts sent to the provider", p_attempts},
    {"served[]", COUNT, true, "attempts the provider worked on (billed)", p_served},
    {"errors[]", COUNT, true, "attempts that did not succeed", p_errors},
    {"rate_limited[]", COUNT, true, "attempts answered 429", p_rate_limited},
    {"timeouts[]", COUNT, true, "attempts the client timed out", p_timeouts},
    {"cost_usd[]", USD, true, "cost billed by the provider", p_cost_usd},
    {"tokens_in[]", COUNT, true, "input tokens billed", p_tokens_in},
    {"tokens_out[]", COUNT, true, "output tokens billed", p_tokens_out},
    {"breaker_opens[]", COUNT, true, "transitions into open", p_breaker_opens},
    {"breaker_transitions[]", COUNT, true, "breaker state changes", p_breaker_transitions},
    {"breaker_open_time[]", US, true, "time open (per pod, or the shared store's)",
     p_breaker_open_time},
    {"breaker_rejections[]", COUNT, true, "calls the breaker rejected", p_breaker_rejections},
    {"overloaded[]", COUNT, true, "attempts answered the overload status: the queue was full",
     p_overloaded},
    {"shed[]", COUNT, true, "queued attempts dropped unserved (expired at the head, or CoDel)",
     p_shed},
    {"queue_peak[]", COUNT, true, "longest provider queue", p_queue_peak},
    {"limit_rejections[]", COUNT, true, "calls its concurrency limit rejected", p_limit_rejections,
     NULL, false, SIM_FEATURE_CONCLIMIT},
    {"limit_min[]", COUNT, true, "lowest concurrency limit a pod had", p_limit_min, NULL, false,
     SIM_FEATURE_CONCLIMIT},
    {"limit_max[]", COUNT, true, "highest concurrency limit a pod had", p_limit_max, NULL, false,
     SIM_FEATURE_CONCLIMIT},
    {"hedges[]", COUNT, true, "hedged attempts sent to the provider", p_hedges, NULL, false,
     SIM_FEATURE_HEDGING},
    {"conn_waits[]", COUNT, true, "attempts that waited for a connection to it", p_conn_waits, NULL,
     false, SIM_FEATURE_POOL},
    {"conn_setups[]", COUNT, true, "connections to it opened", p_conn_setups, NULL, false,
     SIM_FEATURE_POOL},
    {"conn_wait_mean[]", US, true, "mean wait of the attempts that waited for a connection",
     p_conn_wait_mean, NULL, false, SIM_FEATURE_POOL},
    {"layer_calls[]", COUNT, false, "requests the layer received (from users or the layer outside)",
     l_calls, NULL, true},
    {"layer_attempts[]", COUNT, false,
     "attempts the layer made (whole requests to the layer inside, or provider calls)", l_attempts,
     NULL, true},
    {"layer_amplification[]", RATIO, false, "layer_attempts / layer_calls: the layer's own factor",
     l_amplification, NULL, true},
    {"layer_retries[]", COUNT, false, "the layer's retries", l_retries, NULL, true},
    {"layer_fallbacks[]", COUNT, false, "the layer's moves to another provider", l_fallbacks, NULL,
     true},
    {"class_requests[]", COUNT, false, "requests of the class that arrived", c_requests, PER_CLASS},
    {"class_ended[]", COUNT, false, "requests of the class that ended", c_ended, PER_CLASS},
    {"class_success_rate[]", RATIO, false, "the class's successes / its requests ended",
     c_success_rate, PER_CLASS},
    {"class_fallback_rate[]", RATIO, false,
     "the class's successes from a later provider / its requests ended", c_fallback_rate,
     PER_CLASS},
    {"class_errors[]", COUNT, false, "the class's requests that ended in an error", c_errors,
     PER_CLASS},
    {"class_error_rate[]", RATIO, false, "the class's errors / its requests ended", c_error_rate,
     PER_CLASS},
    {"class_slo_missed[]", COUNT, false, "the class's answers later than the SLO", c_slo_missed,
     PER_CLASS},
    {"class_bad_rate[]", RATIO, false,
     "the class's errors and SLO misses / its requests ended (its blast radius rate)", c_bad_rate,
     PER_CLASS},
    {"class_latency_p50[]", US, false, "median latency of the class's requests that ended",
     c_latency_p50, PER_CLASS},
    {"class_latency_p99[]", US, false, "99th percentile latency of the class's requests",
     c_latency_p99, PER_CLASS},
    {NULL, COUNT, false, NULL, NULL, NULL, false},
};

const sim_metric *sim_metrics(void) {
    return table;
}

bool sim_metric_shown(const sim_scenario *sc, const sim_metric *m) {
    return m->feature == SIM_FEATURE_ALWAYS || scn_uses(sc, m->feature);
}

const sim_metric *sim_metric_find(const char *name) {
    for (const sim_metric *m = table; m->name; m++)
        if (strcmp(m->name, name) == 0) return m;
    return NULL;
}

/* The layer named `name` in the summary's variant, or -1. */
static int layer_index(const sim_scenario *sc, const sim_summary *sum, const char *name) {
    int v = scn_variant(sc, sum->variant);
    if (v < 0) return -1;
    const sim_policy *pol = &sc->variants[v];
    for (uint32_t l = 0; l < pol->layer_count; l++)
        if (strcmp(pol->layers[l].name, name) == 0) return (int)l;
    return -1;
}

/* The traffic class named `name`, or -1. */
static int class_index(const sim_scenario *sc, const char *name) {
    for (uint32_t c = 0; c < sc->class_count; c++)
        if (strcmp(sc->classes[c].name, name) == 0) return (int)c;
    return -1;
}

/* "attempts[openai]", "layer_attempts[sdk]": the row "...[]" and the provider's or layer's index.
 */
static int indexed_metric(const sim_scenario *sc, const sim_summary *sum, const char *name,
                          const char *br, const sim_metric **row, int *provider, char *msg,
                          size_t msglen) {
    char base[64];
    size_t blen = (size_t)(br - name);
    const char *close = strchr(br, ']');
    if (close == NULL || close[1] != '\0' || blen == 0 || blen + 3 > sizeof base) {
        snprintf(msg, msglen,
                 "malformed metric '%s' (per-provider metrics look like attempts[openai])", name);
        return FB_ENOTFOUND;
    }
    memcpy(base, name, blen);
    memcpy(base + blen, "[]", 3);
    *row = sim_metric_find(base);
    if (*row == NULL) {
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
    if ((*row)->per_class) {
        *provider = class_index(sc, prov);
        if (*provider < 0) {
            snprintf(msg, msglen, "metric '%s': no traffic class named '%s'", name, prov);
            return FB_ENOTFOUND;
        }
        return FB_OK;
    }
    if ((*row)->per_layer) {
        *provider = layer_index(sc, sum, prov);
        if (*provider < 0) {
            snprintf(msg, msglen, "metric '%s': variant %s has no layer named '%s'", name,
                     sum->variant, prov);
            return FB_ENOTFOUND;
        }
        return FB_OK;
    }
    *provider = scn_provider(sc, prov);
    if (*provider < 0) {
        snprintf(msg, msglen, "metric '%s': no provider named '%s'", name, prov);
        return FB_ENOTFOUND;
    }
    return FB_OK;
}

/* An unknown name: suggest the row sharing the longest prefix with it. */
static int unknown_metric(const char *name, char *msg, size_t msglen) {
    const char *best = NULL;
    size_t best_score = 0;
    for (const sim_metric *m = table; m->name; m++) {
        size_t common = 0;
        while (m->name[common] && m->name[common] == name[common]) common++;
        if (common > best_score) {
            best_score = common;
            best = m->name;
        }
    }
    if (best && best_score >= 3)
        snprintf(msg, msglen, "unknown metric '%s' (did you mean '%s'?)", name, best);
    else
        snprintf(msg, msglen, "unknown metric '%s'", name);
    return FB_ENOTFOUND;
}

int sim_metric_value(const sim_scenario *sc, const sim_summary *sum, const char *name,
                     double *value, sim_unit *unit, char *msg, size_t msglen) {
    const sim_metric *row = NULL;
    int provider = 0;
    const char *br = strchr(name, '[');
    if (br) {
        int rc = indexed_metric(sc, sum, name, br, &row, &provider, msg, msglen);
        if (rc != FB_OK) return rc;
    } else {
        row = sim_metric_find(name);
        if (row == NULL || row->per_provider || row->per_layer || row->per_class)
            return unknown_metric(name, msg, msglen);
    }
    if (unit) *unit = row->unit;
    double v = row->value(sc, sum, (uint32_t)provider);
    if (value) *value = v;
    return FB_OK;
}

double sim_metric_get(const sim_scenario *sc, const sim_summary *sum, const char *name) {
    double v = 0;
    char msg[160];
    if (sim_metric_value(sc, sum, name, &v, NULL, msg, sizeof msg) != FB_OK) return 0;
    return v;
}
