/*
 * settings.c - a variant's settings in effect (settings.h). The defaults are
 * the core's own: each config goes through fb_*_config_effective(), which
 * runs the same step as the primitive's init, so the page cannot drift from
 * what ran. Names are the scenario format's (docs/scenario-format.md).
 */
#include "reports/settings.h"

#include <math.h>
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
static size_t cooldown_words(char *buf, size_t len, const sim_layer *l, const fb_breaker_config *b,
                             uint32_t p) {
    char a[32], c[32];
    size_t n = (size_t)snprintf(buf, len, "LiteLLM cooldown %s",
                                opens_at_once(l, 429, p) ? "at the first 429; otherwise " : "");
    if (n < len && b->cooldown_rule == FB_COOLDOWN_COUNT)
        n += (size_t)snprintf(buf + n, len - n,
                              "at more than %u failures (allowed_fails, or its exception class's) "
                              "counted within %s of the first",
                              b->consecutive_failures - 1, dur(a, sizeof a, b->window_us));
    else if (n < len && b->failure_rate >= 1.0)
        n += (size_t)snprintf(buf + n, len - n,
                              "when all of at least %u requests counted within %s failed",
                              b->minimum_calls, dur(a, sizeof a, b->window_us));
    else if (n < len)
        n += (size_t)snprintf(
            buf + n, len - n, "when %s %g%% of at least %u requests counted within %s failed",
            b->trip_compare == FB_CMP_PASS ? "more than" : "at least", b->failure_rate * 100,
            b->minimum_calls, dur(a, sizeof a, b->window_us));
    snprintf(c, sizeof c, "%.10g s", (double)b->open_us / 1e6);
    if (n < len && b->honor_hint == FB_ON && b->hint_mode == FB_HINT_REPLACES)
        n += (size_t)snprintf(buf + n, len - n,
                              "; it lasts the error's Retry-After, else cooldown_time %s", c);
    else if (n < len)
        n += (size_t)snprintf(buf + n, len - n, "; it lasts cooldown_time %s", c);
    if (n < len) n += (size_t)snprintf(buf + n, len - n, " and ends by itself (no half-open)");
    return n < len ? n : len - 1;
}

/* ---- the library's words (scenario/preset.h, sim_vocab) ---- */

static const sim_vocab *vocab_of(const sim_layer *l) {
    return l->preset ? l->preset->vocab : NULL;
}

/* A duration in the notation of kind k: Spring's "60s", Go's "1m30s", .NET's "00:00:30" ... */
static void lib_duration(char *buf, size_t len, sim_param_kind k, fb_time_us us) {
    double s = (double)us / 1e6, ms = (double)us / 1e3;
    long long whole = (long long)(us / FB_US_PER_S);
    bool whole_s = us % FB_US_PER_S == 0, whole_ms = us % FB_US_PER_MS == 0;
    switch (k) {
    case SIM_PK_SECONDS:
        snprintf(buf, len, "%.10g s", s);
        break;
    case SIM_PK_MILLIS:
        snprintf(buf, len, "%.10g ms", ms);
        break;
    case SIM_PK_TIMESPAN: {
        long long d = whole / 86400, h = whole / 3600 % 24, m = whole / 60 % 60, sec = whole % 60;
        int n = d ? snprintf(buf, len, "%lld.", d) : 0;
        n += snprintf(buf + n, len - (size_t)n, "%02lld:%02lld:%02lld", h, m, sec);
        if (!whole_s)
            snprintf(buf + n, len - (size_t)n, ".%03lld", (long long)(us % FB_US_PER_S / 1000));
        break;
    }
    case SIM_PK_GO_DURATION:
        if (!whole_s || whole < 60)
            snprintf(buf, len, whole_s ? "%.10gs" : "%.10gms", whole_s ? s : ms);
        else if (whole < 3600)
            snprintf(buf, len, "%lldm%llds", whole / 60, whole % 60);
        else
            snprintf(buf, len, "%lldh%lldm%llds", whole / 3600, whole / 60 % 60, whole % 60);
        break;
    case SIM_PK_PROTO_DURATION:
        snprintf(buf, len, "%.10gs", s);
        break;
    default: /* Spring's DURATION: "60s", "500ms" */
        snprintf(buf, len, whole_s || !whole_ms ? "%.10gs" : "%.10gms",
                 whole_s || !whole_ms ? s : ms);
        break;
    }
}

/* A retry field's number (or duration, in us): 0 a number, 2 a duration where 0 is none; -1. */
static int retry_field(const fb_retry_config *r, sim_vocab_field f, double *x, fb_time_us *us) {
    switch (f) {
    case SIM_VF_ATTEMPTS:
        *x = r->attempts;
        return 0;
    case SIM_VF_RETRIES:
        *x = r->attempts - 1;
        return 0;
    case SIM_VF_MULTIPLIER:
        *x = r->multiplier;
        return 0;
    case SIM_VF_JITTER_FRACTION: /* only the jitters that have one */
        *x = r->jitter_fraction;
        return r->jitter == FB_JITTER_PROPORTIONAL || r->jitter == FB_JITTER_RANDOMIZED ||
                       r->jitter == FB_JITTER_DOWN || r->jitter == FB_JITTER_UP
                   ? 0
                   : -1;
    case SIM_VF_BASE_US:
        *us = r->base_us;
        return 1;
    case SIM_VF_DELAY_MAX_US:
        *us = r->delay_us_max;
        return 2;
    case SIM_VF_ATTEMPT_TIMEOUT_US:
        *us = r->attempt_timeout_us;
        return 2;
    case SIM_VF_DEADLINE_US:
        *us = r->deadline_us;
        return 2;
    default:
        return -1;
    }
}

/* A field's number (0) or duration in us (1; 2 where 0 means none), or -1: not a number. */
static int field_of(const fb_breaker_config *b, const fb_retry_config *r, sim_vocab_field f,
                    double *x, fb_time_us *us) {
    switch (f) {
    case SIM_VF_CONSECUTIVE:
        *x = b->consecutive_failures;
        return 0;
    case SIM_VF_CONSECUTIVE_ABOVE:
        *x = b->consecutive_failures - (b->trip_compare == FB_CMP_REACH ? 1 : 0);
        return 0;
    case SIM_VF_FAILURE_RATE:
        *x = b->failure_rate;
        return 0;
    case SIM_VF_SLOW_RATE:
        *x = b->slow_rate;
        return 0;
    case SIM_VF_WINDOW_CALLS:
        *x = b->window_calls;
        return 0;
    case SIM_VF_WINDOW_SECONDS:
        *x = (double)(b->window_us / FB_US_PER_S);
        return 0;
    case SIM_VF_WINDOW_BUCKETS:
        *x = b->window_buckets;
        return 0;
    case SIM_VF_MINIMUM_CALLS:
        *x = b->minimum_calls;
        return 0;
    case SIM_VF_PERMITS:
        *x = b->half_open_permits;
        return 0;
    case SIM_VF_OPEN_TIMER:
        *x = b->open_timer == FB_ON;
        return 0;
    case SIM_VF_SLOW_US:
        *us = b->slow_us;
        return 1;
    case SIM_VF_WINDOW_US:
        *us = b->window_us;
        return 1;
    case SIM_VF_OPEN_US:
        *us = b->open_us;
        return 1;
    case SIM_VF_OPEN_US_MAX:
        *us = b->open_us_max;
        return 1;
    case SIM_VF_HALF_OPEN_MAX_US:
        *us = b->half_open_max_us;
        return 1;
    case SIM_VF_OPEN_ALIGN_US:
        *us = b->open_align_us;
        return 1;
    case SIM_VF_CLOSED_INTERVAL_US:
        *us = b->closed_interval_us;
        return 1;
    default:
        return retry_field(r, f, x, us);
    }
}

/* The word a MODE, BACKOFF, JITTER or AS_ADMITTED field names, or -1. */
static int word_of(const fb_breaker_config *b, const fb_retry_config *r, sim_vocab_field f) {
    switch (f) {
    case SIM_VF_MODE:
        return (int)b->mode;
    case SIM_VF_BACKOFF:
        return (int)r->backoff;
    case SIM_VF_JITTER:
        return (int)r->jitter;
    case SIM_VF_AS_ADMITTED:
        return b->late_results == FB_LATE_AS_ADMITTED;
    default:
        return -1;
    }
}

/* The breaker and the retry as they ran (the zero rule's defaults filled in). */
static bool effective(const sim_layer *l, uint32_t p, fb_breaker_config *b, fb_retry_config *r) {
    *r = l->retry;
    if (fb_retry_config_effective(r) != FB_OK) return false;
    if (r->attempt_timeout_us <= 0 && p < SIM_PROVIDERS_MAX)
        r->attempt_timeout_us = l->per_provider[p].timeout_us;
    memset(b, 0, sizeof *b);
    if (p >= SIM_PROVIDERS_MAX || !l->per_provider[p].has_breaker) return true;
    *b = l->per_provider[p].breaker;
    b->open_jitter = 0; /* its random draws need the run's generator */
    return fb_breaker_config_effective(b) == FB_OK;
}

bool rep_library_value(char *buf, size_t len, const sim_layer *l, uint32_t p,
                       const sim_vocab_param *vp) {
    fb_breaker_config b;
    fb_retry_config r;
    if (!effective(l, p, &b, &r)) return false;
    bool is_retry = vp->field >= SIM_VF_FIRST_RETRY;
    unsigned mode = is_retry ? (unsigned)r.backoff : (unsigned)b.mode;
    if (vp->modes && !(vp->modes & (1u << mode))) return false;
    int w = word_of(&b, &r, vp->field);
    if (w >= 0) {
        if (vp->words == NULL || vp->words[w] == NULL) return false;
        snprintf(buf, len, "%s", vp->words[w]);
        return true;
    }
    double x = 0;
    fb_time_us us = 0;
    int t = field_of(&b, &r, vp->field, &x, &us);
    if (t < 0) return false;
    /* retries without a limit (fusebox's cap): the library's word for none, when it has one */
    bool counts = vp->field == SIM_VF_ATTEMPTS || vp->field == SIM_VF_RETRIES;
    if (counts && r.attempts >= FB_RETRY_ATTEMPTS_MAX && vp->words && vp->words[0]) {
        snprintf(buf, len, "%s", vp->words[0]);
        return true;
    }
    if (t == 2 && (us <= 0 || us >= FB_TIME_MAX))
        snprintf(buf, len, "none");
    else if (t > 0)
        lib_duration(buf, len, vp->kind, us);
    else if (vp->kind == SIM_PK_PERCENT)
        snprintf(buf, len, "%g%%", x < 1e-6 ? 0 : x * 100); /* 0%: the rate's least above 0 */
    else if (vp->kind == SIM_PK_FRACTION)
        snprintf(buf, len, "%g", x < 1e-9 ? 0 : x);
    else if (vp->kind == SIM_PK_BOOL)
        snprintf(buf, len, "%s", x != 0 ? "true" : "false");
    else
        snprintf(buf, len, "%.10g", x);
    return true;
}

bool rep_library_number(const sim_layer *l, uint32_t p, const sim_vocab_param *vp, double *x,
                        bool *duration) {
    fb_breaker_config b;
    fb_retry_config r;
    if (!effective(l, p, &b, &r)) return false;
    unsigned mode = vp->field >= SIM_VF_FIRST_RETRY ? (unsigned)r.backoff : (unsigned)b.mode;
    if ((vp->modes && !(vp->modes & (1u << mode))) || word_of(&b, &r, vp->field) >= 0) return false;
    fb_time_us us = 0;
    int t = field_of(&b, &r, vp->field, x, &us);
    if (t < 0) return false;
    *duration = t > 0;
    if (t > 0) *x = t == 2 && (us <= 0 || us >= FB_TIME_MAX) ? INFINITY : (double)us;
    return true;
}

size_t rep_library_settings(char *buf, size_t len, const sim_layer *l, uint32_t p, bool breaker) {
    const sim_vocab *v = vocab_of(l);
    size_t n = 0, items = 0;
    if (len) buf[0] = '\0';
    if (v == NULL || v->params == NULL || len == 0) return 0;
    if (breaker && (p >= SIM_PROVIDERS_MAX || !l->per_provider[p].has_breaker)) return 0;
    if (breaker && l->per_provider[p].breaker.mode == FB_BREAKER_MODE_COOLDOWN) {
        fb_breaker_config b = l->per_provider[p].breaker;
        b.open_jitter = 0;
        return fb_breaker_config_effective(&b) == FB_OK ? cooldown_words(buf, len, l, &b, p) : 0;
    }
    const char *what = breaker || v->retry == NULL ? v->breaker : v->retry;
    for (const sim_vocab_param *vp = v->params; vp->name && n < len; vp++) {
        char val[64];
        if ((vp->field >= SIM_VF_FIRST_RETRY) == breaker) continue;
        if (!rep_library_value(val, sizeof val, l, p, vp)) continue;
        /* gobreaker's ReadyToTrip: "ConsecutiveFailures > 5" */
        const char *op = vp->field == SIM_VF_CONSECUTIVE_ABOVE ? " > " : " ";
        if (items++ == 0 && what)
            n += (size_t)snprintf(buf + n, len - n, "%s: ", what);
        else if (items > 1)
            n += (size_t)snprintf(buf + n, len - n, ", ");
        if (n < len) n += (size_t)snprintf(buf + n, len - n, "%s%s%s", vp->name, op, val);
    }
    if (items == 0) {
        buf[0] = '\0';
        return 0;
    }
    return n < len ? n : len - 1;
}

const char *rep_library_state(const sim_layer *l, fb_breaker_state s) {
    const sim_vocab *v = vocab_of(l);
    return v && (unsigned)s < 3 ? v->states[s] : NULL;
}

const sim_layer *rep_library_layer(const sim_policy *pol, uint32_t p) {
    const sim_layer *found = NULL;
    for (uint32_t k = 0; k < pol->layer_count && p < SIM_PROVIDERS_MAX; k++) {
        const sim_layer *l = &pol->layers[k];
        /* an outer layer's one breaker is entry 0, for the layer inside (its events: provider 0) */
        if (!l->per_provider[p].has_breaker || (l->role == SIM_ROLE_OUTER && p > 0)) continue;
        if (found) return NULL; /* two layers' breakers: an event does not say whose it is */
        found = l;
    }
    return found && vocab_of(found) ? found : NULL;
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
    char words[1024];
    if (rep_library_settings(words, sizeof words, l, p, true) > 0) {
        fputs(pp->timeout_us > 0 ? "; " : ": ", f);
        rep_escape_markup(f, words);
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
        char words[1024];
        if (rep_library_settings(words, sizeof words, l, SIM_PROVIDERS_MAX, false) > 0) {
            fputs("<li>", f);
            rep_escape_markup(f, words);
            fputs("</li>\n", f);
        } else {
            retry_item(f, &l->retry);
        }
        budget_item(f, &l->budget);
        /* the router's chain in its order, for it and the layers inside it */
        const sim_layer *router = scn_policy_router(pol);
        if (l->role != SIM_ROLE_OUTER)
            for (uint32_t i = 0; i < router->order_len; i++)
                breaker_item(f, sc, l, router->order[i]);
        if (l->role == SIM_ROLE_OUTER && l->per_provider[0].has_breaker) {
            fputs("<li>a breaker on the layer inside", f);
            if (rep_library_settings(words, sizeof words, l, 0, true) > 0) {
                fputs(": ", f);
                rep_escape_markup(f, words);
            }
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
}
