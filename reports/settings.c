/*
 * settings.c - a variant's settings in effect (settings.h). The defaults are
 * the core's own: each config goes through fb_*_config_effective(), which
 * runs the same step as the primitive's init, so the page cannot drift from
 * what ran. Names are the scenario format's (docs/scenario-format.md).
 */
#include "reports/settings.h"

#include <string.h>

#include "reports/report.h"

static const char *const backoffs[] = {"exponential", "constant", "linear", "none"};
static const char *const jitters[] = {"none",         "full",           "equal", "decorrelated",
                                      "proportional", "randomized",     "down",  "up",
                                      "additive",     "decorrelated v2"};

static const char *name_of(const char *const *names, size_t count, unsigned v) {
    return v < count ? names[v] : "?";
}

static const char *dur(char *buf, size_t len, fb_time_us us) {
    if (us <= 0) return "none";
    rep_format_duration(buf, len, (double)us);
    return buf;
}

static void retry_item(FILE *f, const fb_retry_config *given) {
    fb_retry_config r = *given;
    if (fb_retry_config_effective(&r) != FB_OK) {
        fputs("<li>retry: (invalid)</li>\n", f);
        return;
    }
    char a[32], b[32], c[32];
    if (r.attempts == 1)
        fputs("<li>retry: 1 attempt (no retries)", f);
    else
        fprintf(f, "<li>retry: %u attempts (%u retries); backoff %s", r.attempts, r.attempts - 1,
                name_of(backoffs, 4, (unsigned)r.backoff));
    if (r.attempts > 1 && r.backoff == FB_BACKOFF_CONSTANT)
        fprintf(f, " %s", dur(a, sizeof a, r.base_us));
    else if (r.attempts > 1 && r.backoff == FB_BACKOFF_EXPONENTIAL)
        fprintf(f, " from %s &times;%g up to %s", dur(a, sizeof a, r.base_us), r.multiplier,
                dur(b, sizeof b, r.delay_us_max));
    else if (r.attempts > 1 && r.backoff == FB_BACKOFF_LINEAR)
        fprintf(f, " %s &times; the retry's number, up to %s", dur(a, sizeof a, r.base_us),
                dur(b, sizeof b, r.delay_us_max));
    if (r.attempts > 1 && r.backoff != FB_BACKOFF_NONE)
        fprintf(f, ", jitter %s", name_of(jitters, 10, (unsigned)r.jitter));
    fprintf(f, "; attempt timeout %s; deadline %s</li>\n", dur(a, sizeof a, r.attempt_timeout_us),
            dur(c, sizeof c, r.deadline_us));
}

static void budget_item(FILE *f, const fb_budget_config *given) {
    fb_budget_config g = *given;
    if (g.kind == FB_BUDGET_NONE) {
        fputs("<li>retry budget: none</li>\n", f);
        return;
    }
    if (fb_budget_config_effective(&g) != FB_OK) {
        fputs("<li>retry budget: (invalid)</li>\n", f);
        return;
    }
    switch (g.kind) {
    case FB_BUDGET_TOKEN_BUCKET:
        fprintf(f,
                "<li>retry budget: token bucket of %g tokens, +%g per success, a retry "
                "needs more than half</li>\n",
                g.max_tokens, g.ratio);
        break;
    case FB_BUDGET_QUOTA:
        fprintf(f, "<li>retry budget: quota of %u, a retry costs %u (after a timeout %u)</li>\n",
                g.capacity, g.retry_cost, g.timeout_cost);
        break;
    case FB_BUDGET_DEPOSIT:
        fputs("<li>retry budget: deposit (every request deposits, every retry costs)</li>\n", f);
        break;
    case FB_BUDGET_RETRY_BREAKER:
        fputs("<li>retry budget: retry breaker (no retries while failures are high)</li>\n", f);
        break;
    default:
        fprintf(f,
                "<li>retry budget: retries in progress at most %g%% of requests (at least "
                "%u)</li>\n",
                g.budget_percent, g.min_retry_concurrency);
        break;
    }
}

/* "opens after 5 failures in a row", "opens at 50% failed of the last 100 calls" ... */
static void trip_rule(FILE *f, const fb_breaker_config *b) {
    char a[32];
    switch (b->mode) {
    case FB_BREAKER_MODE_CONSECUTIVE:
        fprintf(f, "opens after %u failures in a row", b->consecutive_failures);
        break;
    case FB_BREAKER_MODE_COUNT_WINDOW:
        fprintf(f, "opens at %g%% failed of the last %u calls (at least %u)", b->failure_rate * 100,
                b->window_calls, b->minimum_calls);
        break;
    case FB_BREAKER_MODE_TIME_WINDOW:
        fprintf(f, "opens at %g%% failed within %s (at least %u calls)", b->failure_rate * 100,
                dur(a, sizeof a, b->window_us), b->minimum_calls);
        break;
    default:
        fprintf(f, "cooldown after %u failures", b->consecutive_failures);
        break;
    }
}

/* Does the layer's first rule for status `st` from provider p open at once (trip NOW)? */
static bool opens_at_once(const sim_layer *l, int st, uint32_t p) {
    for (uint32_t i = 0; i < l->rule_count; i++) {
        const sim_status_rule *r = &l->rules[i];
        if (r->status != st || r->outcome >= 0 || r->transport >= 0) continue;
        if (r->providers != 0 && !(p < 8 && ((r->providers >> p) & 1u))) continue;
        return r->trip == FB_TRIP_NOW;
    }
    return false;
}

/*
 * COOLDOWN mode is LiteLLM's deployment cooldown: said as LiteLLM does it (a
 * cooldown that ends by itself, for the Retry-After or cooldown_time), not as a
 * breaker with a half-open state it does not have.
 */
static void cooldown_rule(FILE *f, const sim_layer *l, const fb_breaker_config *b, uint32_t p,
                          const char *sep) {
    char a[32], c[32];
    fprintf(f, "%sLiteLLM cooldown ", sep);
    if (opens_at_once(l, 429, p)) fputs("at the first 429; otherwise ", f);
    if (b->cooldown_rule == FB_COOLDOWN_COUNT)
        fprintf(f,
                "at more than %u failures (allowed_fails, or its exception class's) counted "
                "within %s of the first",
                b->consecutive_failures - 1, dur(a, sizeof a, b->window_us));
    else if (b->failure_rate >= 1.0)
        fprintf(f, "when all of at least %u requests counted within %s failed", b->minimum_calls,
                dur(a, sizeof a, b->window_us));
    else
        fprintf(f, "when %s %g%% of at least %u requests counted within %s failed",
                b->trip_compare == FB_CMP_PASS ? "more than" : "at least", b->failure_rate * 100,
                b->minimum_calls, dur(a, sizeof a, b->window_us));
    if (b->honor_hint == FB_ON && b->hint_mode == FB_HINT_REPLACES)
        fprintf(f, "; it lasts the error's Retry-After, else %s", dur(c, sizeof c, b->open_us));
    else
        fprintf(f, "; it lasts %s", dur(c, sizeof c, b->open_us));
    fputs(" and ends by itself (no half-open)", f);
}

static void breaker_item(FILE *f, const sim_scenario *sc, const sim_layer *l, uint32_t p) {
    const sim_provider_policy *pp = &l->per_provider[p];
    char a[32];
    fputs("<li>", f);
    rep_escape_markup(f, sc->providers[p].name);
    if (pp->timeout_us > 0) fprintf(f, ": attempt timeout %s", dur(a, sizeof a, pp->timeout_us));
    if (!pp->has_breaker) {
        fputs(pp->timeout_us > 0 ? "; no circuit breaker</li>\n" : ": no circuit breaker</li>\n",
              f);
        return;
    }
    fb_breaker_config b = pp->breaker;
    b.open_jitter = 0; /* its random draws need the run's generator; shown below */
    if (fb_breaker_config_effective(&b) != FB_OK) {
        fputs(": breaker (invalid)</li>\n", f);
        return;
    }
    if (b.mode == FB_BREAKER_MODE_COOLDOWN) {
        cooldown_rule(f, l, &b, p, pp->timeout_us > 0 ? "; " : ": ");
    } else {
        fputs(pp->timeout_us > 0 ? "; breaker " : ": breaker ", f);
        trip_rule(f, &b);
        fprintf(f, ", open %s", dur(a, sizeof a, b.open_us));
        if (b.open_growth != FB_OPEN_GROWTH_NONE) fputs(" (growing)", f);
        if (pp->breaker.open_jitter > 0) fprintf(f, " &plusmn;%g%%", pp->breaker.open_jitter * 100);
        if (b.probe_limit == FB_PROBES_NONE) /* pybreaker calling(): no limit in half-open */
            fprintf(f, ", half-open admits every call, %u success%s close%s", b.half_open_permits,
                    b.half_open_permits == 1 ? "" : "es", b.half_open_permits == 1 ? "s" : "");
        else
            fprintf(f, ", %u half-open probe%s", b.half_open_permits,
                    b.half_open_permits == 1 ? "" : "s");
    }
    if (l->gateway) /* a gateway layer's state is its replicas' */
        fputs(l->breaker_scope == SIM_SCOPE_SHARED      ? ", shared by all replicas"
              : l->breaker_scope == SIM_SCOPE_PUBLISHED ? ", per replica, openings published"
                                                        : ", one per replica",
              f);
    else
        fputs(l->breaker_scope == SIM_SCOPE_SHARED      ? ", shared by all pods"
              : l->breaker_scope == SIM_SCOPE_PUBLISHED ? ", per pod, openings published"
                                                        : ", one per pod",
              f);
    fputs("</li>\n", f);
}

void rep_settings_html(FILE *f, const sim_scenario *sc, const sim_policy *pol) {
    static const char *const roles[] = {"router", "outside the router", "inside the router"};
    for (uint32_t k = 0; k < pol->layer_count; k++) {
        const sim_layer *l = &pol->layers[k];
        if (pol->layered) {
            fputs("<div class=\"layer\"><b>", f);
            rep_escape_markup(f, l->name);
            if (l->gateway)
                fprintf(f,
                        "</b> (%s; the gateway tier: %u replicas x %u workers, queue %u)</div>\n",
                        roles[l->role], pol->gateway.replicas, pol->gateway.workers,
                        pol->gateway.queue);
            else
                fprintf(f, "</b> (%s)</div>\n", roles[l->role]);
        }
        fputs("<ul class=\"settings\">\n", f);
        retry_item(f, &l->retry);
        budget_item(f, &l->budget);
        /* the router's chain in its order, for it and the layers inside it */
        const sim_layer *router = scn_policy_router(pol);
        if (l->role != SIM_ROLE_OUTER)
            for (uint32_t i = 0; i < router->order_len; i++)
                breaker_item(f, sc, l, router->order[i]);
        if (l->role == SIM_ROLE_OUTER && l->per_provider[0].has_breaker)
            fputs("<li>a breaker on the layer inside</li>\n", f);
        fputs("</ul>\n", f);
    }
}
