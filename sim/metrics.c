/* metrics.c - the metric table; see metrics.h and docs/metrics.md. */
#include "sim/metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Every computed row's function has the one signature (sim_metric_fn; `index` named p, l or c
 * for a provider, layer or class); most read only the summary. */
#define UNUSED __attribute__((unused))
#define ROW(name, index)                                                                           \
    static double name(const sim_scenario *sc UNUSED, const sim_summary *s, uint32_t index UNUSED)

/* A row that reads field `f` of a T (sim_summary, or the summary of the row's provider, layer or
 * class): its offset and its type. */
/* clang-format off */
#define FIELD_TYPE(T, f)                                                                           \
    _Generic(((T *)0)->f,                                                                          \
             uint64_t: SIM_FIELD_U64,                                                              \
             uint32_t: SIM_FIELD_U32,                                                              \
             int64_t: SIM_FIELD_I64,                                                               \
             double: SIM_FIELD_F64)
/* clang-format on */
#define FIELD(T, f) .field = FIELD_TYPE(T, f), .offset = offsetof(T, f)

/* The field of type `type` at base + offset, as a double (as the accessors cast it). */
static double read_field(const void *base, sim_field type, size_t offset) {
    const char *at = (const char *)base + offset;
    switch (type) {
    case SIM_FIELD_U64: {
        uint64_t v;
        memcpy(&v, at, sizeof v);
        return (double)v;
    }
    case SIM_FIELD_U32: {
        uint32_t v;
        memcpy(&v, at, sizeof v);
        return (double)v;
    }
    case SIM_FIELD_I64: {
        int64_t v;
        memcpy(&v, at, sizeof v);
        return (double)v;
    }
    case SIM_FIELD_F64: {
        double v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    case SIM_FIELD_NONE:
        break;
    }
    return NAN;
}

static double ratio(double a, double b) {
    return b > 0 ? a / b : 0;
}

static double ended_total(const sim_summary *s) {
    uint64_t ended = 0;
    for (int e = 0; e < SIM_END_COUNT; e++) ended += s->ended[e];
    return (double)ended;
}

/* ---- requests and how they ended ---- */

ROW(ended, p) {
    return ended_total(s);
}

ROW(success_rate, p) {
    return ratio((double)s->ended[SIM_END_SUCCESS], ended_total(s));
}

ROW(availability, p) {
    return ratio((double)(s->ended[SIM_END_SUCCESS] + s->ended[SIM_END_DEGRADED]), ended_total(s));
}

ROW(error_rate, p) {
    return ratio((double)s->errors, ended_total(s));
}

ROW(fallback_rate, p) {
    return ratio((double)s->success_fallback, ended_total(s));
}

/* ---- latency ---- */

ROW(latency_p50, p) {
    return (double)fb_hist_percentile(&s->latency, 50);
}

ROW(latency_p90, p) {
    return (double)fb_hist_percentile(&s->latency, 90);
}

ROW(latency_p99, p) {
    return (double)fb_hist_percentile(&s->latency, 99);
}

ROW(latency_p999, p) {
    return (double)fb_hist_percentile(&s->latency, 99.9);
}

ROW(latency_max, p) {
    return (double)fb_hist_max(&s->latency);
}

ROW(latency_mean, p) {
    return fb_hist_mean(&s->latency);
}

ROW(success_latency_p99, p) {
    return (double)fb_hist_percentile(&s->latency_ok, 99);
}

/* ---- attempts, blast radius, spillover ---- */

ROW(amplification, p) {
    return ratio((double)s->attempts, (double)s->requests_calling);
}

ROW(amplification_fault, p) {
    return ratio((double)s->attempts_in_fault, (double)s->requests_in_fault);
}

ROW(blast_radius_rate, p) {
    return ratio((double)s->bad, ended_total(s));
}

/* Collateral needs classes on both sides: some that call a disturbed provider, some not. */
ROW(collateral, p) {
    if (s->classes_exposed == 0 || s->classes_unexposed == 0) return NAN;
    return (double)s->bad_collateral;
}

ROW(collateral_share, p) {
    if (sim_metric_is_na(collateral(sc, s, p)) || s->bad == 0) return NAN;
    return (double)s->bad_collateral / (double)s->bad;
}

/*
 * 0 when some disturbance was judged and never got back to baseline; else
 * n/a when some could not be judged (or there was none); else 1. One that was
 * followed by another before it got back (SIM_UNDETERMINED_NEXT) is judged with
 * the one that followed: the system is back from both when it is back from the
 * later.
 */
ROW(recovered, p) {
    bool all = true, unknown = s->fault_count == 0;
    for (uint32_t i = 0; i < s->fault_count; i++) {
        if (s->faults[i].undetermined == SIM_UNDETERMINED_NEXT)
            continue;
        else if (s->faults[i].undetermined != SIM_DETERMINED)
            unknown = true;
        else if (!s->faults[i].recovered)
            all = false;
    }
    if (!all) return 0;
    return unknown ? NAN : 1;
}

/* The longest judged spillover; n/a exactly when `recovered` is. */
ROW(spillover, p) {
    if (sim_metric_is_na(recovered(sc, s, p))) return NAN;
    fb_time_us m = 0;
    for (uint32_t i = 0; i < s->fault_count; i++)
        if (s->faults[i].undetermined == SIM_DETERMINED && s->faults[i].spillover_us > m)
            m = s->faults[i].spillover_us;
    return (double)m;
}

/* ---- cost ---- */

/* ---- per provider ---- */

ROW(p_errors, p) {
    const sim_provider_summary *ps = &s->providers[p];
    return (double)(ps->attempts - ps->outcomes[FB_OUT_SUCCESS]);
}

ROW(p_tokens_wasted, p) {
    return (double)(s->providers[p].tokens_in_wasted + s->providers[p].tokens_out_wasted);
}

ROW(p_breaker_open_time, p) {
    return s->providers[p].breaker_open_s * 1e6;
}

ROW(p_conn_wait_mean, p) {
    const sim_provider_summary *ps = &s->providers[p];
    return ps->conn_waits ? ps->conn_wait_s * 1e6 / (double)ps->conn_waits : 0;
}

/* ---- totals over providers, summed in provider order ---- */

static double sum_providers(const sim_scenario *sc, const sim_summary *s, sim_field type,
                            size_t offset) {
    double sum = 0;
    for (uint32_t p = 0; p < sc->provider_count; p++)
        sum += read_field(&s->providers[p], type, offset);
    return sum;
}

#define SUM_PROVIDERS(f)                                                                           \
    sum_providers(sc, s, FIELD_TYPE(sim_provider_summary, f), offsetof(sim_provider_summary, f))

ROW(breaker_opens, p) {
    return SUM_PROVIDERS(breaker_opens);
}

ROW(breaker_transitions, p) {
    return SUM_PROVIDERS(breaker_transitions);
}

ROW(breaker_open_time, p) {
    double sum = 0;
    for (uint32_t i = 0; i < sc->provider_count; i++) sum += p_breaker_open_time(sc, s, i);
    return sum;
}

ROW(limit_rejections, p) {
    return SUM_PROVIDERS(limit_rejections);
}

ROW(conn_waits, p) {
    return SUM_PROVIDERS(conn_waits);
}

ROW(conn_setups, p) {
    return SUM_PROVIDERS(conn_setups);
}

ROW(tokens_wasted, p) {
    double sum = 0;
    for (uint32_t i = 0; i < sc->provider_count; i++) sum += p_tokens_wasted(sc, s, i);
    return sum;
}

/* ---- the fleet's dynamics ---- */

ROW(user_requests, p) {
    return (double)(s->requests - s->fleet.resubmissions);
}

/* A user request ends with its last submission: the ends that were not submitted again. */
ROW(user_success_rate, p) {
    return ratio((double)s->ended[SIM_END_SUCCESS], ended_total(s) - (double)s->fleet.resubmitted);
}

ROW(users_gave_up, p) {
    return (double)(s->errors - s->fleet.resubmitted);
}

ROW(user_amplification, p) {
    return ratio((double)s->attempts,
                 (double)(s->requests_calling - s->fleet.resubmissions_calling));
}

ROW(pods_mean, p) {
    return ratio(s->fleet.pod_seconds, (double)s->end_us / 1e6);
}

/* ---- the table ---- */

/* ---- per layer (index: the layer in the variant) ---- */

ROW(l_amplification, l) {
    return ratio((double)s->layers[l].attempts, (double)s->layers[l].calls);
}

/* ---- per traffic class (index: the class) ---- */

ROW(c_success_rate, c) {
    return ratio((double)s->classes[c].success, (double)s->classes[c].ended);
}

ROW(c_fallback_rate, c) {
    return ratio((double)s->classes[c].success_fallback, (double)s->classes[c].ended);
}

ROW(c_error_rate, c) {
    return ratio((double)s->classes[c].errors, (double)s->classes[c].ended);
}

ROW(c_bad_rate, c) {
    const sim_class_summary *k = &s->classes[c];
    return ratio((double)(k->errors + k->slo_missed), (double)k->ended);
}

ROW(c_latency_p50, c) {
    return (double)fb_hist_percentile(&s->classes[c].latency, 50);
}

ROW(c_latency_p99, c) {
    return (double)fb_hist_percentile(&s->classes[c].latency, 99);
}

/* Kept under 110 characters: expectations quote it (reports/expect.c). */
#define SPILL_NA                                                                                   \
    "n/a when there is no disturbance, or one could not be judged and none was judged unrecovered"

static const sim_metric table[] = {
    {.name = "requests",
     .unit = SIM_UNIT_COUNT,
     .definition = "user requests that arrived",
     FIELD(sim_summary, requests)},
    {.name = "ended",
     .unit = SIM_UNIT_COUNT,
     .definition = "user requests that ended (all of them once the run drains)",
     .value = ended},
    {.name = "success_rate",
     .unit = SIM_UNIT_RATIO,
     .definition = "successes (primary or fallback) / requests ended",
     .value = success_rate},
    {.name = "availability",
     .unit = SIM_UNIT_RATIO,
     .definition = "(successes + degraded answers) / requests ended",
     .value = availability},
    {.name = "error_rate",
     .unit = SIM_UNIT_RATIO,
     .definition = "errors / requests ended",
     .value = error_rate},
    {.name = "successes",
     .unit = SIM_UNIT_COUNT,
     .definition = "requests answered by a provider",
     FIELD(sim_summary, ended[SIM_END_SUCCESS])},
    {.name = "success_primary",
     .unit = SIM_UNIT_COUNT,
     .definition = "answered by the first provider tried",
     FIELD(sim_summary, success_primary)},
    {.name = "success_fallback",
     .unit = SIM_UNIT_COUNT,
     .definition = "answered by a later provider in the chain",
     FIELD(sim_summary, success_fallback)},
    {.name = "fallback_rate",
     .unit = SIM_UNIT_RATIO,
     .definition = "success_fallback / requests ended",
     .value = fallback_rate},
    {.name = "degraded",
     .unit = SIM_UNIT_COUNT,
     .definition = "answered by the degraded/cached path",
     FIELD(sim_summary, ended[SIM_END_DEGRADED])},
    {.name = "errors",
     .unit = SIM_UNIT_COUNT,
     .definition = "requests that ended in an error",
     FIELD(sim_summary, errors)},
    {.name = "errors_timeout",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: the pod's request timeout fired",
     FIELD(sim_summary, ended[SIM_END_TIMEOUT])},
    {.name = "errors_queue_full",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: the pod's queue was full",
     FIELD(sim_summary, ended[SIM_END_QUEUE_FULL])},
    {.name = "errors_exhausted",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: every provider tried failed",
     FIELD(sim_summary, ended[SIM_END_EXHAUSTED])},
    {.name = "errors_breaker_open",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: every breaker rejected",
     FIELD(sim_summary, ended[SIM_END_BREAKER_OPEN])},
    {.name = "errors_permanent",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: permanent 4xx",
     FIELD(sim_summary, ended[SIM_END_PERMANENT])},
    {.name = "errors_policy",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: content-policy rejections",
     FIELD(sim_summary, ended[SIM_END_POLICY])},
    {.name = "errors_context_length",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: no window large enough",
     FIELD(sim_summary, ended[SIM_END_CONTEXT_LENGTH])},
    {.name = "errors_rate_limited",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: client-side limiter rejected",
     FIELD(sim_summary, ended[SIM_END_RATE_LIMITED])},
    {.name = "errors_deadline",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: the retry deadline passed",
     FIELD(sim_summary, ended[SIM_END_DEADLINE])},
    {.name = "errors_stream_broken",
     .unit = SIM_UNIT_COUNT,
     .definition = "errors: failed after output was shown",
     FIELD(sim_summary, ended[SIM_END_STREAM_BROKEN])},
    {.name = "latency_p50",
     .unit = SIM_UNIT_US,
     .definition = "median end-to-end latency of requests that ended",
     .value = latency_p50},
    {.name = "latency_p90",
     .unit = SIM_UNIT_US,
     .definition = "90th percentile latency",
     .value = latency_p90},
    {.name = "latency_p99",
     .unit = SIM_UNIT_US,
     .definition = "99th percentile latency",
     .value = latency_p99},
    {.name = "latency_p999",
     .unit = SIM_UNIT_US,
     .definition = "99.9th percentile latency",
     .value = latency_p999},
    {.name = "latency_max",
     .unit = SIM_UNIT_US,
     .definition = "maximum latency",
     .value = latency_max},
    {.name = "latency_mean",
     .unit = SIM_UNIT_US,
     .definition = "mean latency",
     .value = latency_mean},
    {.name = "success_latency_p99",
     .unit = SIM_UNIT_US,
     .definition = "99th percentile latency of successes",
     .value = success_latency_p99},
    {.name = "attempts",
     .unit = SIM_UNIT_COUNT,
     .definition = "provider attempts, all providers",
     FIELD(sim_summary, attempts)},
    {.name = "retries",
     .unit = SIM_UNIT_COUNT,
     .definition = "retries of the same provider",
     FIELD(sim_summary, retries)},
    {.name = "fallbacks",
     .unit = SIM_UNIT_COUNT,
     .definition = "moves to another provider after a failure",
     FIELD(sim_summary, fallbacks)},
    {.name = "amplification",
     .unit = SIM_UNIT_RATIO,
     .definition = "provider attempts / user requests that call a provider",
     .value = amplification},
    {.name = "amplification_fault",
     .unit = SIM_UNIT_RATIO,
     .definition = "attempts / requests, both counted inside fault and spike windows",
     .value = amplification_fault},
    {.name = "blast_radius",
     .unit = SIM_UNIT_COUNT,
     .definition = "requests that failed or missed the latency SLO",
     FIELD(sim_summary, bad)},
    {.name = "blast_radius_rate",
     .unit = SIM_UNIT_RATIO,
     .definition = "blast_radius / requests ended",
     .value = blast_radius_rate},
    {.name = "collateral",
     .unit = SIM_UNIT_COUNT,
     .definition = "blast radius among requests whose class calls no disturbed provider",
     .value = collateral,
     .na = "n/a when no class calls a disturbed provider, or every class does"},
    {.name = "collateral_share",
     .unit = SIM_UNIT_RATIO,
     .definition = "collateral / blast_radius",
     .value = collateral_share,
     .na = "n/a when collateral is, or when the blast radius is 0"},
    {.name = "slo_missed",
     .unit = SIM_UNIT_COUNT,
     .definition = "answered, but later than the SLO",
     FIELD(sim_summary, slo_missed)},
    {.name = "spillover",
     .unit = SIM_UNIT_US,
     .definition = "longest time from the end of a fault (or spike) until back to baseline",
     .value = spillover,
     .na = SPILL_NA},
    {.name = "recovered",
     .unit = SIM_UNIT_BOOL,
     .definition =
         "1 when every disturbance got back to baseline, 0 when one was judged and did not",
     .value = recovered,
     .na = SPILL_NA},
    {.name = "in_flight_peak",
     .unit = SIM_UNIT_COUNT,
     .definition = "most requests in the system at once",
     FIELD(sim_summary, in_flight_peak)},
    {.name = "pod_queue_peak",
     .unit = SIM_UNIT_COUNT,
     .definition = "most requests waiting in pod queues at once",
     FIELD(sim_summary, pod_queue_peak)},
    {.name = "cost_usd",
     .unit = SIM_UNIT_USD,
     .definition = "tokens billed x price, all providers",
     FIELD(sim_summary, cost_usd)},
    {.name = "cost_wasted_usd",
     .unit = SIM_UNIT_USD,
     .definition = "billed for attempts whose output was not used",
     FIELD(sim_summary, cost_wasted_usd)},
    {.name = "fallback_extra_cost_usd",
     .unit = SIM_UNIT_USD,
     .definition = "what fallback answers cost beyond the same tokens on the primary",
     FIELD(sim_summary, fallback_extra_cost_usd)},
    {.name = "breaker_opens",
     .unit = SIM_UNIT_COUNT,
     .definition = "transitions into open, all providers and pods",
     .value = breaker_opens},
    {.name = "breaker_transitions",
     .unit = SIM_UNIT_COUNT,
     .definition = "breaker state changes",
     .value = breaker_transitions},
    {.name = "breaker_open_time",
     .unit = SIM_UNIT_US,
     .definition = "time open per pod, summed over providers",
     .value = breaker_open_time},
    {.name = "budget_refusals",
     .unit = SIM_UNIT_COUNT,
     .definition = "retries refused by the retry budget",
     FIELD(sim_summary, budget_refusals)},
    {.name = "stream_failures",
     .unit = SIM_UNIT_COUNT,
     .definition = "attempts that failed after the first token",
     FIELD(sim_summary, stream_failures)},
    {.name = "tokens_duplicated",
     .unit = SIM_UNIT_COUNT,
     .definition = "output tokens the user saw twice",
     FIELD(sim_summary, tokens_duplicated)},
    {.name = "tokens_wasted",
     .unit = SIM_UNIT_COUNT,
     .definition = "billed tokens (in + out) not used for an answer",
     .value = tokens_wasted},
    {.name = "limit_rejections",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_CONCLIMIT,
     .definition = "calls the concurrency limits rejected, all providers",
     .value = limit_rejections},
    {.name = "hedges",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_HEDGING,
     .definition = "hedged attempts sent (beyond each group's first)",
     FIELD(sim_summary, hedges)},
    {.name = "hedges_won",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_HEDGING,
     .definition = "hedge groups whose answer came from a hedged attempt",
     FIELD(sim_summary, hedges_won)},
    {.name = "hedge_cost_usd",
     .unit = SIM_UNIT_USD,
     .feature = SIM_FEATURE_HEDGING,
     .definition = "billed for hedged attempts, winners and losers",
     FIELD(sim_summary, hedge_cost_usd)},
    {.name = "conn_waits",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_POOL,
     .definition = "attempts that waited for a connection, all providers",
     .value = conn_waits},
    {.name = "conn_setups",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_POOL,
     .definition = "connections opened, all providers",
     .value = conn_setups},
    {.name = "resubmissions",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_RESUBMIT,
     .definition = "requests that were a user's re-submission (in requests)",
     FIELD(sim_summary, fleet.resubmissions)},
    {.name = "user_requests",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_RESUBMIT,
     .definition = "requests - resubmissions: what users asked for",
     .value = user_requests},
    {.name = "user_success_rate",
     .unit = SIM_UNIT_RATIO,
     .feature = SIM_FEATURE_RESUBMIT,
     .definition = "user requests whose last submission succeeded / user requests ended",
     .value = user_success_rate},
    {.name = "users_gave_up",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_RESUBMIT,
     .definition = "user requests whose last submission failed",
     .value = users_gave_up},
    {.name = "user_amplification",
     .unit = SIM_UNIT_RATIO,
     .feature = SIM_FEATURE_RESUBMIT,
     .definition =
         "provider attempts / user requests that call a provider (re-submissions included)",
     .value = user_amplification},
    {.name = "serial_lag",
     .unit = SIM_UNIT_US,
     .feature = SIM_FEATURE_SERIAL,
     .definition = "the longest a serial client's call started after its schedule",
     FIELD(sim_summary, fleet.serial_lag_us)},
    {.name = "serial_backlog",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_SERIAL,
     .definition = "serial calls scheduled before the end of traffic that never started",
     FIELD(sim_summary, fleet.serial_backlog)},
    {.name = "pod_requests_min",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_PER_POD,
     .definition = "fewest requests a pod received",
     FIELD(sim_summary, fleet.pod_requests_min)},
    {.name = "pod_requests_max",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_PER_POD,
     .definition = "most requests a pod received",
     FIELD(sim_summary, fleet.pod_requests_max)},
    {.name = "pods_peak",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_AUTOSCALE,
     .definition = "most pods taking traffic at once",
     FIELD(sim_summary, fleet.pods_peak)},
    {.name = "pods_mean",
     .unit = SIM_UNIT_RATIO,
     .feature = SIM_FEATURE_AUTOSCALE,
     .definition = "pods taking traffic, averaged over the run",
     .value = pods_mean},
    {.name = "pods_added",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_AUTOSCALE,
     .definition = "pods the autoscaler added",
     FIELD(sim_summary, fleet.pods_added)},
    {.name = "pods_removed",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_AUTOSCALE,
     .definition = "pods the autoscaler removed",
     FIELD(sim_summary, fleet.pods_removed)},
    {.name = "scale_events",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_AUTOSCALE,
     .definition = "times the autoscaler changed the pods it wants",
     FIELD(sim_summary, fleet.scale_decisions)},
    {.name = "store_unreachable",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_STORE_OUTAGE,
     .definition = "breaker checks made while the breaker store was unreachable",
     FIELD(sim_summary, fleet.store_unreachable)},
    {.name = "store_records_lost",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_STORE_OUTAGE,
     .definition = "call results that never reached the breaker store",
     FIELD(sim_summary, fleet.store_records_lost)},
    {.name = "gateway_calls",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "calls from the pods' layers that reached the gateway tier (every replica)",
     FIELD(sim_summary, gateway.total.calls)},
    {.name = "gateway_attempts",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "provider attempts the gateway's layers sent (every replica)",
     FIELD(sim_summary, gateway.total.attempts)},
    {.name = "gateway_queued",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "gateway calls that waited for a replica's worker",
     FIELD(sim_summary, gateway.total.queued)},
    {.name = "gateway_queue_full",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "gateway calls refused at once: their replica's queue was full",
     FIELD(sim_summary, gateway.total.queue_full)},
    {.name = "gateway_queue_peak",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "most calls waiting at one replica at once",
     FIELD(sim_summary, gateway.total.queue_peak)},
    {.name = "gateway_wait_max",
     .unit = SIM_UNIT_US,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "the longest a gateway call waited for a replica's worker",
     FIELD(sim_summary, gateway.total.wait_us_max)},
    {.name = "gateway_cooldowns",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "openings of the replicas' own breakers (cooldowns), every replica",
     FIELD(sim_summary, gateway.total.cooldowns)},
    {.name = "gateway_cooldowns_learned",
     .unit = SIM_UNIT_COUNT,
     .feature = SIM_FEATURE_GATEWAY,
     .definition = "openings the replicas read from the store (another replica's cooldown)",
     FIELD(sim_summary, gateway.total.learned)},
    {.name = "attempts[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "attempts sent to the provider",
     FIELD(sim_provider_summary, attempts)},
    {.name = "served[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "attempts the provider worked on (billed)",
     FIELD(sim_provider_summary, served)},
    {.name = "errors[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "attempts that did not succeed",
     .value = p_errors},
    {.name = "rate_limited[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "attempts answered 429",
     FIELD(sim_provider_summary, outcomes[FB_OUT_RATE_LIMITED])},
    {.name = "timeouts[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "attempts the client timed out",
     FIELD(sim_provider_summary, outcomes[FB_OUT_TIMEOUT])},
    {.name = "cost_usd[]",
     .unit = SIM_UNIT_USD,
     .per_provider = true,
     .definition = "cost billed by the provider",
     FIELD(sim_provider_summary, cost_usd)},
    {.name = "tokens_in[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "input tokens billed",
     FIELD(sim_provider_summary, tokens_in)},
    {.name = "tokens_out[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "output tokens billed",
     FIELD(sim_provider_summary, tokens_out)},
    {.name = "breaker_opens[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "transitions into open",
     FIELD(sim_provider_summary, breaker_opens)},
    {.name = "breaker_transitions[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "breaker state changes",
     FIELD(sim_provider_summary, breaker_transitions)},
    {.name = "breaker_open_time[]",
     .unit = SIM_UNIT_US,
     .per_provider = true,
     .definition = "time open (per pod, or the shared store's)",
     .value = p_breaker_open_time},
    {.name = "breaker_rejections[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "calls the breaker rejected",
     FIELD(sim_provider_summary, breaker_rejections)},
    {.name = "overloaded[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "attempts answered the overload status: the queue was full",
     FIELD(sim_provider_summary, overloaded)},
    {.name = "shed[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "queued attempts dropped unserved (expired at the head, or CoDel)",
     FIELD(sim_provider_summary, shed)},
    {.name = "queue_peak[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .definition = "longest provider queue",
     FIELD(sim_provider_summary, queue_peak)},
    {.name = "limit_rejections[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .feature = SIM_FEATURE_CONCLIMIT,
     .definition = "calls its concurrency limit rejected",
     FIELD(sim_provider_summary, limit_rejections)},
    {.name = "limit_min[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .feature = SIM_FEATURE_CONCLIMIT,
     .definition = "lowest concurrency limit a pod had",
     FIELD(sim_provider_summary, limit_min)},
    {.name = "limit_max[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .feature = SIM_FEATURE_CONCLIMIT,
     .definition = "highest concurrency limit a pod had",
     FIELD(sim_provider_summary, limit_max)},
    {.name = "hedges[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .feature = SIM_FEATURE_HEDGING,
     .definition = "hedged attempts sent to the provider",
     FIELD(sim_provider_summary, hedges)},
    {.name = "conn_waits[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .feature = SIM_FEATURE_POOL,
     .definition = "attempts that waited for a connection to it",
     FIELD(sim_provider_summary, conn_waits)},
    {.name = "conn_setups[]",
     .unit = SIM_UNIT_COUNT,
     .per_provider = true,
     .feature = SIM_FEATURE_POOL,
     .definition = "connections to it opened",
     FIELD(sim_provider_summary, conn_setups)},
    {.name = "conn_wait_mean[]",
     .unit = SIM_UNIT_US,
     .per_provider = true,
     .feature = SIM_FEATURE_POOL,
     .definition = "mean wait of the attempts that waited for a connection",
     .value = p_conn_wait_mean},
    {.name = "layer_calls[]",
     .unit = SIM_UNIT_COUNT,
     .per_layer = true,
     .definition = "requests the layer received (from users or the layer outside)",
     FIELD(sim_layer_summary, calls)},
    {.name = "layer_attempts[]",
     .unit = SIM_UNIT_COUNT,
     .per_layer = true,
     .definition =
         "attempts the layer made (whole requests to the layer inside, or provider calls)",
     FIELD(sim_layer_summary, attempts)},
    {.name = "layer_amplification[]",
     .unit = SIM_UNIT_RATIO,
     .per_layer = true,
     .definition = "layer_attempts / layer_calls: the layer's own factor",
     .value = l_amplification},
    {.name = "layer_retries[]",
     .unit = SIM_UNIT_COUNT,
     .per_layer = true,
     .definition = "the layer's retries",
     FIELD(sim_layer_summary, retries)},
    {.name = "layer_fallbacks[]",
     .unit = SIM_UNIT_COUNT,
     .per_layer = true,
     .definition = "the layer's moves to another provider",
     FIELD(sim_layer_summary, fallbacks)},
    {.name = "class_requests[]",
     .unit = SIM_UNIT_COUNT,
     .per_class = true,
     .definition = "requests of the class that arrived",
     FIELD(sim_class_summary, requests)},
    {.name = "class_ended[]",
     .unit = SIM_UNIT_COUNT,
     .per_class = true,
     .definition = "requests of the class that ended",
     FIELD(sim_class_summary, ended)},
    {.name = "class_success_rate[]",
     .unit = SIM_UNIT_RATIO,
     .per_class = true,
     .definition = "the class's successes / its requests ended",
     .value = c_success_rate},
    {.name = "class_fallback_rate[]",
     .unit = SIM_UNIT_RATIO,
     .per_class = true,
     .definition = "the class's successes from a later provider / its requests ended",
     .value = c_fallback_rate},
    {.name = "class_errors[]",
     .unit = SIM_UNIT_COUNT,
     .per_class = true,
     .definition = "the class's requests that ended in an error",
     FIELD(sim_class_summary, errors)},
    {.name = "class_error_rate[]",
     .unit = SIM_UNIT_RATIO,
     .per_class = true,
     .definition = "the class's errors / its requests ended",
     .value = c_error_rate},
    {.name = "class_slo_missed[]",
     .unit = SIM_UNIT_COUNT,
     .per_class = true,
     .definition = "the class's answers later than the SLO",
     FIELD(sim_class_summary, slo_missed)},
    {.name = "class_bad_rate[]",
     .unit = SIM_UNIT_RATIO,
     .per_class = true,
     .definition = "the class's errors and SLO misses / its requests ended (its blast radius rate)",
     .value = c_bad_rate},
    {.name = "class_latency_p50[]",
     .unit = SIM_UNIT_US,
     .per_class = true,
     .definition = "median latency of the class's requests that ended",
     .value = c_latency_p50},
    {.name = "class_latency_p99[]",
     .unit = SIM_UNIT_US,
     .per_class = true,
     .definition = "99th percentile latency of the class's requests",
     .value = c_latency_p99},
    {.name = NULL},
};

double sim_metric_row(const sim_metric *m, const sim_scenario *sc, const sim_summary *sum,
                      uint32_t index) {
    if (m->value != NULL) return m->value(sc, sum, index);
    const void *base = m->per_provider ? (const void *)&sum->providers[index]
                       : m->per_layer  ? (const void *)&sum->layers[index]
                       : m->per_class  ? (const void *)&sum->classes[index]
                                       : (const void *)sum;
    return read_field(base, m->field, m->offset);
}

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
    double v = sim_metric_row(row, sc, sum, (uint32_t)provider);
    if (value) *value = v;
    return FB_OK;
}

double sim_metric_get(const sim_scenario *sc, const sim_summary *sum, const char *name) {
    double v = 0;
    char msg[160];
    if (sim_metric_value(sc, sum, name, &v, NULL, msg, sizeof msg) != FB_OK) return 0;
    return v;
}
