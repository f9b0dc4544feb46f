/*
 * setup.c - a run built from a scenario and one of its variants, and torn down.
 *
 * In order: the containers and their caps, the providers (capacity buckets,
 * fault windows and their edges as events), the traffic spikes (disturbance
 * windows too, disturbing the providers their class calls), which classes
 * are exposed to a disturbed provider, the spillover window, the variant's
 * policy (retry, classifier, breakers or the shared stores, rate limiters,
 * budgets, one fallback chain per pod), then the first arrivals. Each entity's random stream is
 * derived from (seed, entity, purpose), so adding one does not shift the others.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/simint.h"

/* The most layers a request of this variant passes through (each needs a hop). */
static uint32_t deepest(const sim_policy *pol) {
    uint32_t d = pol->stack.depth;
    for (uint32_t c = 0; c < SIM_CLASSES_MAX; c++)
        if (pol->class_stack[c].depth > d) d = pol->class_stack[c].depth;
    return d;
}

static bool hedges(const sim_policy *pol) {
    for (uint32_t l = 0; l < pol->layer_count; l++)
        if (pol->layers[l].has_hedge) return true;
    return false;
}

/* Attempts carry an attx when the variant hedges or pools, or a provider has network latency. */
static bool needs_attx(const sim *s) {
    for (uint32_t l = 0; l < s->pol->layer_count; l++)
        if (s->pol->layers[l].has_pool) return true;
    for (uint32_t p = 0; p < s->sc->provider_count; p++)
        if (s->sc->providers[p].has_network) return true;
    return hedges(s->pol);
}

/* A disturbance window, and the baseline's end if it is the first. */
static void add_window(sim *s, fb_time_us start, fb_time_us end) {
    s->windows[s->window_count].start_us = start;
    s->windows[s->window_count].end_us = end;
    s->window_count++;
    if (start < s->first_window_us) s->first_window_us = start;
}

static sim_fault_summary *add_disturbance(sim *s, fb_time_us start, fb_time_us end) {
    sim_fault_summary *fs = &s->sum->faults[s->sum->fault_count++];
    fs->start_us = start;
    fs->end_us = end;
    add_window(s, start, end);
    return fs;
}

/* Each disturbance's next: the first to start at or after its end (its recovery is judged
   until then, series.c). */
static void next_starts(sim *s) {
    sim_summary *sum = s->sum;
    for (uint32_t k = 0; k < sum->fault_count; k++) {
        sim_fault_summary *f = &sum->faults[k];
        f->next_us = FB_TIME_NONE;
        for (uint32_t j = 0; j < sum->fault_count; j++) {
            fb_time_us t = sum->faults[j].start_us;
            if (j != k && t >= f->end_us && (f->next_us == FB_TIME_NONE || t < f->next_us))
                f->next_us = t;
        }
    }
}

/* A class's token counts that are constants (most classes that call nothing), and its
   service time if constant (most that call): set once. */
static void setup_fixed_draws(sim *s) {
    for (uint32_t c = 0; c < s->sc->class_count; c++) {
        const sim_class *cl = &s->sc->classes[c];
        s->class_service_fixed[c] = cl->service_us.kind == SIM_DIST_CONSTANT;
        if (s->class_service_fixed[c])
            s->class_service_us[c] = scn_dist_draw_us_tab(NULL, &cl->service_us, NULL);
        bool fixed = cl->prompt_tokens.kind == SIM_DIST_CONSTANT &&
                     cl->completion_tokens.kind == SIM_DIST_CONSTANT;
        s->class_tokens_fixed[c] = fixed;
        if (!fixed) continue;
        /* a constant's draw reads no stream: what each request would draw */
        s->class_tokens[c][0] = scn_dist_draw_tokens_tab(NULL, &cl->prompt_tokens, NULL);
        s->class_tokens[c][1] = scn_dist_draw_tokens_tab(NULL, &cl->completion_tokens, NULL);
    }
}

/*
 * The inverse-CDF tables (fb_lntab, random streams fusebox-3) of the lognormals drawn per
 * request and per attempt: a class's token counts and service, a provider's TTFT and error
 * latency; one table per set of parameters. The other lognormals are drawn without one.
 */
static int setup_lntabs(sim *s) {
    enum { MOST = SIM_CLASSES_MAX * 3 + SIM_PROVIDERS_MAX * 2 };
    const sim_dist *d[MOST];
    const fb_lntab **slot[MOST];
    uint32_t n = 0;
    for (uint32_t c = 0; c < s->sc->class_count; c++) {
        const sim_class *cl = &s->sc->classes[c];
        const sim_dist *own[3] = {&cl->prompt_tokens, &cl->completion_tokens, &cl->service_us};
        for (int k = 0; k < 3; k++) {
            d[n] = own[k];
            slot[n++] = &s->class_tab[c][k];
        }
    }
    for (uint32_t p = 0; p < s->P; p++) {
        d[n] = &s->sc->providers[p].ttft_us;
        slot[n++] = &s->provs[p].ttft_tab;
        d[n] = &s->sc->providers[p].error_latency_us;
        slot[n++] = &s->provs[p].elat_tab;
    }
    uint32_t tab[MOST], tabs = 0; /* a distribution's table: the first with its parameters */
    const sim_dist *src[MOST];
    for (uint32_t i = 0; i < n; i++) {
        tab[i] = UINT32_MAX;
        if (!scn_dist_has_table(d[i])) continue;
        for (uint32_t j = 0; j < i && tab[i] == UINT32_MAX; j++)
            if (tab[j] != UINT32_MAX && d[j]->ln_a == d[i]->ln_a && d[j]->sigma == d[i]->sigma)
                tab[i] = tab[j];
        if (tab[i] == UINT32_MAX) {
            src[tabs] = d[i];
            tab[i] = tabs++;
        }
    }
    setup_fixed_draws(s);
    if (tabs == 0) return FB_OK;
    if ((s->lntabs = malloc(tabs * sizeof *s->lntabs)) == NULL) return FB_ENOMEM;
    for (uint32_t t = 0; t < tabs; t++) scn_dist_table(src[t], &s->lntabs[t]);
    for (uint32_t i = 0; i < n; i++)
        if (tab[i] != UINT32_MAX) *slot[i] = &s->lntabs[tab[i]];
    return FB_OK;
}

/* Capacity buckets, the fault windows and their edges. */
static int setup_providers(sim *s) {
    for (uint32_t p = 0; p < s->P; p++) {
        const sim_provider *pv = &s->sc->providers[p];
        prov *pr = &s->provs[p];
        sim__provider_set_capacity(s, p, 1.0);
        pr->codel.first_above_us = FB_TIME_NONE;
        sim_fifo_init(&pr->queue, sizeof(ref), (size_t)s->sc->limits.in_flight_max + 1);
        if (pv->rpm > 0) {
            pr->has_rpm = true;
            if (fb_bucket_init(&pr->rpm, pv->rpm, FB_US_PER_MIN, 0) != FB_OK) return FB_ERANGE;
        }
        if (pv->tpm > 0) {
            pr->has_tpm = true;
            if (fb_bucket_init(&pr->tpm, pv->tpm, FB_US_PER_MIN, 0) != FB_OK) return FB_ERANGE;
        }
        pr->disturbed = pv->fault_count > 0;
        pr->loaded = pv->load_in_service != 0 || pv->load_queued != 0;
        scn_fault_even_init(s->fault_even[p], pv->fault_count, s->sc->seed, p);
        for (uint32_t f = 0; f < pv->fault_count; f++) {
            const sim_fault *fa = &pv->faults[f];
            fb_time_us end = fb_time_add(fa->at_us, fa->for_us);
            sim_fault_summary *fs = add_disturbance(s, fa->at_us, end);
            fs->provider = (uint8_t)p;
            fs->fault = (uint8_t)f;
            sim__push(s, fa->at_us, EV_FAULT_EDGE, p, 0, f << 1);
            sim__push(s, end, EV_FAULT_EDGE, p, 0, f << 1 | 1);
        }
    }
    return FB_OK;
}

/* Spikes are disturbances too: their spillover is measured like a fault's. */
static void setup_spikes(sim *s, uint32_t c) {
    const sim_class *cl = &s->sc->classes[c];
    for (uint32_t i = 0; i < cl->spike_count; i++) {
        fb_time_us start = cl->spikes[i].at_us;
        sim_fault_summary *fs = add_disturbance(s, start, fb_time_add(start, cl->spikes[i].for_us));
        fs->spike = true;
        fs->cls = (uint8_t)c;
        fs->fault = (uint8_t)i;
    }
}

/*
 * The breaker store's outages are disturbances too; they disturb the providers
 * the variant guards with a breaker the store holds, shared or published
 * (every provider, for a breaker outside the routing layer).
 */
static void setup_store_windows(sim *s) {
    const sim_scenario *sc = s->sc;
    for (uint32_t i = 0; i < sc->store_outage_count; i++) {
        fb_time_us start = sc->store_outages[i].at_us;
        sim_fault_summary *fs =
            add_disturbance(s, start, fb_time_add(start, sc->store_outages[i].for_us));
        fs->store = true;
        fs->fault = (uint8_t)i;
    }
    for (uint32_t l = 0; sc->store_outage_count > 0 && l < s->pol->layer_count; l++) {
        const sim_layer *L = &s->pol->layers[l];
        if (L->breaker_scope == SIM_SCOPE_POD) continue;
        for (uint32_t p = 0; p < s->P; p++)
            if (L->role == SIM_ROLE_OUTER ? L->per_provider[0].has_breaker
                                          : L->per_provider[p].has_breaker)
                s->provs[p].disturbed = true;
    }
}

/* The providers a request of class cl may call: its tool, or its fallback chain. */
static uint32_t class_calls(const sim *s, const sim_class *cl, const uint8_t **order) {
    if (cl->target == SIM_TARGET_PROVIDER) {
        *order = &cl->provider;
        return 1;
    }
    if (cl->target == SIM_TARGET_NONE) return 0;
    const sim_stack *st = scn_policy_stack(s->pol, (uint32_t)(cl - s->sc->classes));
    const sim_layer *router = &s->pol->layers[st->layer[st->router]];
    *order = cl->order_len ? cl->order : router->order;
    return cl->order_len ? cl->order_len : router->order_len;
}

/* A spike disturbs every provider its class may call. */
static void mark_spiked(sim *s, const sim_class *cl) {
    const uint8_t *order = NULL;
    uint32_t n = cl->spike_count ? class_calls(s, cl, &order) : 0;
    for (uint32_t i = 0; i < n; i++) s->provs[order[i]].disturbed = true;
}

/* Can a request of class cl meet a disturbed provider (else its failures are collateral)? */
static bool class_exposed(const sim *s, const sim_class *cl) {
    const uint8_t *order = NULL;
    uint32_t n = class_calls(s, cl, &order);
    bool exposed = false;
    for (uint32_t i = 0; i < n; i++) exposed |= s->provs[order[i]].disturbed;
    return exposed;
}

/* The sliding window that judges "back to baseline": hold / tick ticks. */
static int setup_spillover(sim *s) {
    if (s->first_window_us == FB_TIME_MAX) s->baseline_ready = true;
    if (s->sum->fault_count == 0) return FB_OK;
    const sim_scenario *sc = s->sc;
    fb_time_us k = (sc->spillover.hold_us + sc->tick_us - 1) / sc->tick_us;
    s->win_k = (uint32_t)(k < 1 ? 1 : k);
    /* zero bytes: fb_hist_clear initializes a slot without writing its buckets (series.c) */
    s->win_hist = calloc(s->win_k + 1, sizeof *s->win_hist);
    s->win_ended = calloc(s->win_k + 1, sizeof *s->win_ended);
    s->win_bad = calloc(s->win_k + 1, sizeof *s->win_bad);
    if (!s->win_hist || !s->win_ended || !s->win_bad) return FB_ENOMEM;
    fb_hist_init(&s->win_sum);
    fb_hist_clear(&s->win_hist[0]);
    s->tick_hist = &s->win_hist[0]; /* the first tick's: the window's newest */
    return FB_OK;
}

static int alloc_policy_state(sim *s) {
    size_t n = (size_t)s->NL * s->nseats * s->P, stores = (size_t)s->NL * s->P;
    s->breakers = calloc(n, sizeof *s->breakers);
    s->stores = calloc(stores, sizeof *s->stores);
    s->bctxs = calloc(n + stores, sizeof *s->bctxs);
    s->open_since = malloc((n + stores) * sizeof *s->open_since);
    s->open_end = malloc((n + stores) * sizeof *s->open_end);
    s->views = calloc(n, sizeof *s->views);
    s->limiters = calloc(n, sizeof *s->limiters);
    s->published = calloc(n, sizeof *s->published);
    s->rr_cursors = calloc((size_t)s->nseats * s->NL, sizeof *s->rr_cursors);
    s->eject_groups = calloc((size_t)s->nseats * s->NL, sizeof *s->eject_groups);
    s->fbs = calloc((size_t)s->nseats * s->NL, sizeof *s->fbs);
    s->budgets = calloc((size_t)s->nseats * s->NL, sizeof *s->budgets);
    s->pods = calloc(s->nseats, sizeof *s->pods);
    if (!s->pods || !s->breakers || !s->stores || !s->bctxs || !s->open_since || !s->open_end ||
        !s->views || !s->limiters || !s->fbs || !s->budgets || !s->published || !s->rr_cursors ||
        !s->eject_groups) {
        sim__stop(s, FB_ENOMEM, "out of memory for %u pods", s->npods);
        return FB_ENOMEM;
    }
    for (size_t i = 0; i < n + stores; i++) {
        s->open_since[i] = FB_TIME_NONE;
        s->open_end[i] = FB_TIME_MAX;
    }
    return FB_OK;
}

static int invalid(sim *s, int rc, const char *what, const char *provider) {
    if (provider)
        sim__stop(s, FB_EINVAL, "invalid %s for %s (%s)", what, provider, fb_strerror(rc));
    else
        sim__stop(s, FB_EINVAL, "invalid %s (%s)", what, fb_strerror(rc));
    return rc;
}

/*
 * Layer l's targets in pod k's fallback config: the providers (the routing
 * layer and inside it), or one target, the layer inside (outside the router):
 * windows, timeouts, breakers, limiters.
 */
static int pod_targets(sim *s, uint32_t l, uint32_t k, fb_fallback_config *fc) {
    const sim_layer *L = s->lays[l].cfg;
    bool outer = L->role == SIM_ROLE_OUTER;
    fc->provider_count = outer ? 1 : s->P;
    for (uint32_t p = 0; p < fc->provider_count; p++) {
        size_t i = slot(s, l, k, p);
        const sim_provider_policy *pp = &L->per_provider[p];
        fb_fallback_provider *fp = &fc->providers[p];
        fp->context_window = outer ? 0 : s->sc->providers[p].context_window;
        fp->attempt_timeout_us = pp->timeout_us;
        if (pp->has_breaker) {
            int rc = sim__pod_breaker(s, l, k, p, fp);
            if (rc != FB_OK) return rc;
        }
        if (pp->has_ratelimit) {
            int rc = fb_ratelimit_init(&s->limiters[i], &pp->ratelimit, s->now);
            if (rc != FB_OK) return invalid(s, rc, "rate limit", s->sc->providers[p].name);
            fp->ratelimit = &s->limiters[i];
        }
        if (pp->has_conclimit) {
            int rc = fb_conclimit_init(&s->climits[i], &pp->conclimit);
            if (rc != FB_OK) return invalid(s, rc, "concurrency limit", s->sc->providers[p].name);
            fp->conclimit = &s->climits[i];
        }
        if (s->hwins) fb_hedge_window_init(&s->hwins[i], &s->lays[l].hedge);
    }
    fc->order_len = outer ? 1 : L->order_len;
    if (!outer) memcpy(fc->order, L->order, L->order_len);
    return FB_OK;
}

/* A preset's groups (LiteLLM model groups, an Envoy cluster): core/fallback.h. */
static void pod_groups(sim *s, uint32_t l, uint32_t k, fb_fallback_config *fc) {
    const sim_layer *L = s->lays[l].cfg;
    fc->pick = L->pick;
    memcpy(fc->group, L->group, sizeof fc->group);
    memcpy(fc->weight, L->weight, sizeof fc->weight);
    fc->rr_cursor = &s->rr_cursors[(size_t)k * s->NL + l];
    /* a pod the autoscaler starts again is a new process: its rotation starts over, at the
     * first host, as every pod's did at time 0 (Envoy keeps its index only over the host set
     * changes of one load balancer: round_robin_lb.h refreshHostSource) */
    *fc->rr_cursor = 0;
    fc->healthy_gate = L->healthy_gate;
    fc->zero_wait_if_healthy = L->zero_wait_if_healthy;
    fc->judge_first = L->judge_first;
    fc->on_context_length = L->on_context_length;
    fc->on_policy = L->on_policy;
}

/* Envoy's ejection limit: the layer's breakers of pod k, counted together. */
static void pod_eject_group(sim *s, uint32_t l, uint32_t k) {
    const sim_layer *L = s->lays[l].cfg;
    if (!L->eject_limit) return;
    uint32_t members = 0;
    for (uint32_t p = 0; p < s->P; p++) members += L->per_provider[p].has_breaker;
    fb_eject_group_init(&s->eject_groups[(size_t)k * s->NL + l], members, L->eject_max_percent);
}

/* Pod k's engine for layer l: its targets, retry policy, budget and stream handling. */
static int setup_pod_layer(sim *s, uint32_t k, uint32_t l) {
    const sim_layer *L = s->lays[l].cfg;
    fb_fallback_config fc;
    memset(&fc, 0, sizeof fc);
    pod_eject_group(s, l, k);
    if (L->role == SIM_ROLE_ROUTER) pod_groups(s, l, k, &fc);
    int rc = pod_targets(s, l, k, &fc);
    if (rc != FB_OK) return rc;
    fc.retry = &s->lays[l].retry;
    if (L->budget.kind != FB_BUDGET_NONE) {
        fb_budget *b = &s->budgets[(size_t)k * s->NL + l];
        rc = fb_budget_init(b, &L->budget);
        if (rc != FB_OK) return invalid(s, rc, "retry budget", NULL);
        fc.budget = b;
    }
    fc.rng = &s->pods[k].rng;
    fc.context_check = L->context_check;
    fc.degraded = L->degraded;
    fc.wait_always = s->pol->recorded_waits; /* each retry's wait: recorded_wait (request.c) */
    fc.stream = L->stream;
    rc = fb_fallback_init(pod_fb(s, k, l), &fc);
    if (rc != FB_OK) return invalid(s, rc, "fallback chain", NULL);
    return FB_OK;
}

/* Pod k's engine of every layer (also when the autoscaler starts it again). */
int sim__setup_pod_policy(sim *s, uint32_t k) {
    for (uint32_t l = 0; l < s->NL; l++) {
        if (k < seat_first(s, l) || k >= seat_end(s, l)) continue; /* another tier's layer */
        int rc = setup_pod_layer(s, k, l);
        if (rc != FB_OK) return rc;
    }
    return FB_OK;
}

/* Pod k: its stream, its queue, and its engine of every layer. */
static int setup_pod(sim *s, uint32_t k) {
    pod *pd = &s->pods[k];
    fb_rng_derive(&pd->rng, s->sc->seed, ENTITY_POD + k, PURPOSE_POD);
    /* a gateway replica's queue holds gw_ref (gateway.c) */
    if (k < s->npods)
        sim_fifo_init(&pd->queue, sizeof(ref), (size_t)s->sc->limits.in_flight_max + 1);
    else /* a call may wait again after a retry: stale entries until they are popped */
        sim_fifo_init(&pd->queue, sizeof(gw_ref), (size_t)s->sc->limits.in_flight_max * 16 + 1);
    return sim__setup_pod_policy(s, k);
}

/* The variant's layers: retry policies and classifiers. */
static int setup_layers(sim *s) {
    const sim_policy *pol = s->pol;
    s->NL = pol->layer_count;
    s->sum->layer_count = s->NL;
    for (uint32_t l = 0; l < s->NL; l++) {
        lay *L = &s->lays[l];
        L->cfg = &pol->layers[l];
        int rc = fb_retry_policy_init(&L->retry, &L->cfg->retry);
        if (rc != FB_OK) return invalid(s, rc, "retry policy", NULL);
        rc = fb_classify_init(&L->classifier, &L->cfg->classify);
        if (rc != FB_OK) return rc;
        L->classifier_only = scn_layer_classifier_only(L->cfg);
        if (L->cfg->has_hedge) {
            rc = fb_hedge_policy_init(&L->hedge, &L->cfg->hedge);
            if (rc != FB_OK) return invalid(s, rc, "hedging policy", NULL);
        }
    }
    return FB_OK;
}

/* Which layer's breaker (and concurrency limit) the time series shows for each provider:
 * the outermost at or inside the variant's routing layer that has one. */
static void pick_share_layers(sim *s) {
    const sim_stack *st = &s->pol->stack;
    for (uint32_t p = 0; p < s->P; p++) {
        s->provs[p].share_layer = -1;
        s->provs[p].limit_layer = -1;
        for (uint32_t i = st->router; i < st->depth; i++) {
            const sim_provider_policy *pp = &s->pol->layers[st->layer[i]].per_provider[p];
            if (pp->has_breaker && s->provs[p].share_layer < 0)
                s->provs[p].share_layer = st->layer[i];
            if (pp->has_conclimit && s->provs[p].limit_layer < 0)
                s->provs[p].limit_layer = st->layer[i];
        }
    }
}

/* The state only some variants need: concurrency limits, hedge windows, connections. */
static int alloc_client_state(sim *s) {
    size_t n = (size_t)s->NL * s->nseats * s->P;
    bool climits = false, windows = false;
    for (uint32_t l = 0; l < s->NL; l++) {
        const sim_layer *L = s->lays[l].cfg;
        windows = windows || (L->has_hedge && L->hedge.percentile > 0);
        for (uint32_t p = 0; p < s->P; p++) climits = climits || L->per_provider[p].has_conclimit;
    }
    if (climits && (s->climits = calloc(n, sizeof *s->climits)) == NULL) return FB_ENOMEM;
    if (windows && (s->hwins = calloc(n, sizeof *s->hwins)) == NULL) return FB_ENOMEM;
    return sim__setup_conns(s);
}

static int setup_policy(sim *s) {
    int rc = setup_layers(s);
    if (rc == FB_OK) rc = alloc_policy_state(s);
    if (rc == FB_OK) rc = alloc_client_state(s);
    for (uint32_t l = 0; l < s->NL && rc == FB_OK; l++) rc = sim__setup_stores(s, l);
    for (uint32_t k = 0; k < s->nseats && rc == FB_OK; k++) rc = setup_pod(s, k);
    if (rc == FB_OK) {
        pick_share_layers(s);
        /* the stores' messages in flight: at most one per event */
        sim_fifo_init(&s->recs, sizeof(store_record), (size_t)s->sc->limits.events_max);
        sim_fifo_init(&s->syncs, sizeof(store_sync), (size_t)s->sc->limits.events_max);
    }
    return rc;
}

/*
 * Closed-loop users start spread over one think time. A replayed session is a user too (after
 * every closed-loop one, so that those keep their streams), started by its class's replayed
 * arrival (engine.c) with its turns to send.
 */
static int setup_users(sim *s) {
    const sim_scenario *sc = s->sc;
    if (s->users_total == 0) return FB_OK;
    s->user_class = malloc(s->users_total * sizeof *s->user_class);
    s->user_rng = malloc(s->users_total * sizeof *s->user_rng);
    s->user_sent = calloc(s->users_total, sizeof *s->user_sent);
    if (!s->user_class || !s->user_rng || !s->user_sent) return FB_ENOMEM;
    uint32_t u = 0;
    for (uint32_t c = 0; c < sc->class_count; c++) {
        const sim_class *cl = &sc->classes[c];
        if (cl->arrivals != SIM_ARR_CLOSED) continue;
        for (uint32_t k = 0; k < cl->users; k++, u++) {
            s->user_class[u] = c;
            fb_rng_derive(&s->user_rng[u], sc->seed, ENTITY_USER + u, PURPOSE_USER);
            fb_time_us t = scn_dist_draw_us(&s->user_rng[u], &cl->think_us);
            if (t < sc->duration_us) sim__push(s, t, EV_USER, u, 0, 0);
        }
    }
    if (u == s->users_total) return FB_OK;
    s->user_left = malloc(s->users_total * sizeof *s->user_left);
    if (!s->user_left) return FB_ENOMEM;
    for (uint32_t k = 0; k < u; k++) s->user_left[k] = UINT32_MAX;
    bool rec = false;
    bool waits = false; /* the variant waits as a sessions class's log did */
    for (uint32_t c = 0; c < sc->class_count; c++) {
        rec |= sc->classes[c].think_rec_us != NULL;
        waits |= s->pol->recorded_waits && sc->classes[c].turns && sc->classes[c].retry_at_first;
    }
    if (rec && (s->user_gap = calloc(s->users_total, sizeof *s->user_gap)) == NULL)
        return FB_ENOMEM;
    if (waits && (s->user_rec = calloc(s->users_total, sizeof *s->user_rec)) == NULL)
        return FB_ENOMEM;
    for (uint32_t c = 0; c < sc->class_count; c++) {
        const sim_class *cl = &sc->classes[c];
        if (cl->turns == NULL) continue;
        s->session_base[c] = u;
        uint32_t gap = 0;   /* the session's first recorded think time */
        uint32_t first = 0; /* its first request's recorded retries */
        for (uint32_t k = 0; k < cl->turns_count; k++, u++) {
            s->user_class[u] = c;
            fb_rng_derive(&s->user_rng[u], sc->seed, ENTITY_USER + u, PURPOSE_USER);
            s->user_left[u] = cl->turns[k];
            if (cl->think_rec_us) s->user_gap[u] = gap;
            if (s->user_rec) s->user_rec[u] = first;
            gap += cl->turns[k] - 1;
            first += cl->turns[k];
        }
    }
    return FB_OK;
}

/* Each class's first arrival and first burst; closed-loop classes count their users, and
   classes that replay sessions their sessions. */
static int setup_traffic(sim *s) {
    const sim_scenario *sc = s->sc;
    for (uint32_t c = 0; c < sc->class_count; c++) {
        const sim_class *cl = &sc->classes[c];
        sim_traffic *tr = &s->traffic[c];
        sim_traffic_init(tr, cl, sc->seed, c, sc->duration_us);
        if (cl->arrivals == SIM_ARR_CLOSED) {
            s->users_total += cl->users;
        } else if (cl->source == SIM_SOURCE_SHARED && !cl->serial) { /* else sources.c */
            fb_time_us t = sim_traffic_next(tr, 0);
            if (t != FB_TIME_MAX) sim__push_arrival(s, t, c);
        }
        if (cl->turns != NULL) s->users_total += cl->turns_count;
        fb_time_us b = sim_traffic_next_burst(tr);
        if (b != FB_TIME_MAX) sim__push(s, b, EV_BURST, c, 0, 0);
    }
    return setup_users(s);
}

int sim__setup(sim *s) {
    const sim_scenario *sc = s->sc;
    s->P = sc->provider_count;
    s->npods = sim__autoscale_slots(s->pol, sc->pods.count);
    s->nseats = s->npods + s->pol->gateway.replicas;
    int rc = sim_queue_init_rate(&s->q, (size_t)sc->limits.events_max, sim_traffic_peak_rate(sc));
    if (rc != FB_OK) return rc;
    s->dl_first = s->dl_last = NONE32; /* no request, no deadline */
    s->depth_max = deepest(s->pol);
    size_t req_size = sizeof(req) + s->depth_max * sizeof(hop);
    s->att_x = needs_attx(s);
    if (hedges(s->pol)) {
        s->hg_offset = req_size;
        req_size += sizeof(hgroup);
    }
    req_size = (req_size + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN; /* whole lines (simint.h) */
    sim__pool_init(&s->reqs, req_size, (size_t)sc->limits.in_flight_max);
    size_t att_size = sizeof(attempt) + (s->att_x ? sizeof(attx) : 0);
    att_size = (att_size + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN; /* whole lines (simint.h) */
    sim__pool_init(&s->atts, att_size, (size_t)sc->limits.in_flight_max * 4);
    /* zero bytes (sim_run_port callocs s and zeroes the summary): fb_hist_clear initializes
       them without writing their 37 KB each */
    s->tick_hist = &s->tick_buf;
    fb_hist_clear(s->tick_hist);
    fb_hist_clear(&s->base_hist);
    fb_hist_clear(&s->sum->latency);
    fb_hist_clear(&s->sum->latency_ok);
    for (uint32_t c = 0; c < SIM_CLASSES_MAX; c++) fb_hist_clear(&s->sum->classes[c].latency);
    s->first_window_us = FB_TIME_MAX;
    fb_rng_family_init(&s->req_family, sc->seed, PURPOSE_REQUEST);
    fb_rng_family_init(&s->user_req_family, sc->seed, PURPOSE_USER_REQUEST);
    fb_rng_family_init(&s->serial_req_family, sc->seed, PURPOSE_SERIAL_REQUEST);
    fb_rng_family_init(&s->resub_family, sc->seed, PURPOSE_RESUBMIT);
    rc = setup_providers(s);
    if (rc == FB_OK) rc = setup_lntabs(s);
    if (rc != FB_OK) return rc;
    for (uint32_t c = 0; c < sc->class_count; c++) {
        setup_spikes(s, c);
        mark_spiked(s, &sc->classes[c]);
    }
    setup_store_windows(s);
    next_starts(s);
    for (uint32_t c = 0; c < sc->class_count; c++) {
        s->class_exposed[c] = class_exposed(s, &sc->classes[c]);
        s->class_calls[c] = sc->classes[c].target != SIM_TARGET_NONE;
        const sim_stack *st = s->class_stack[c] = scn_policy_stack(s->pol, c);
        s->class_att[c].stream = sc->classes[c].stream;
        s->class_att[c].keeps_partial =
            st->depth > 0 && s->pol->layers[st->layer[st->depth - 1]].stream == FB_STREAM_RESUME;
        sim__stat_class_exposure(s, s->class_exposed[c]);
    }
    rc = setup_spillover(s);
    if (rc == FB_OK) rc = sim__stat_setup(s);
    if (rc == FB_OK) rc = setup_policy(s);
    if (rc == FB_OK && s->pol->gateway.replicas > 0) rc = sim__gateway_setup(s);
    if (rc == FB_OK) rc = setup_traffic(s);
    if (rc == FB_OK) rc = sim__fleet_setup(s);
    if (rc != FB_OK) return rc;
    s->next_tick_us = sc->tick_us;
    sim__tick_due(s);
    return s->rc;
}

void sim__teardown(sim *s) {
    sim__fleet_teardown(s);
    sim_queue_free(&s->q);
    sim__pool_free(&s->reqs);
    sim__pool_free(&s->atts);
    if (s->pods)
        for (uint32_t k = 0; k < s->nseats; k++) sim_fifo_free(&s->pods[k].queue);
    for (uint32_t p = 0; p < SIM_PROVIDERS_MAX; p++) sim_fifo_free(&s->provs[p].queue);
    sim_fifo_free(&s->recs);
    sim_fifo_free(&s->syncs);
    free(s->pods);
    free(s->fbs);
    free(s->budgets);
    free(s->stores);
    free(s->breakers);
    free(s->bctxs);
    free(s->open_since);
    free(s->open_end);
    free(s->views);
    free(s->limiters);
    free(s->published);
    free(s->rr_cursors);
    free(s->eject_groups);
    free(s->climits);
    free(s->hwins);
    free(s->lntabs);
    sim__free_conns(s);
    free(s->user_class);
    free(s->user_rng);
    free(s->user_sent);
    free(s->user_left);
    free(s->user_gap);
    free(s->user_rec);
    free(s->win_hist);
    free(s->win_ended);
    free(s->win_bad);
    free(s->bd_hist);
    free(s->ok_hist);
}
