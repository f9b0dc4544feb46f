/*
 * load_traffic.c - the "traffic" section: classes of requests, how they
 * arrive (open or closed loop), how the rate moves over the run (ramps,
 * spikes, bursts, a diurnal swing), what they cost and what they call.
 */
#include "scenario/loadint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- arrivals ---- */

static int parse_rate(pctx *P, const cJSON *v, void *out) {
    return scn__get_rate_value(P, v, out);
}

/* {"closed": {...}} (base: sim_class). */
const ld_section scn__closed_section = {
    "arrivals.closed", "/$defs/class/properties/arrivals/properties/closed",
    (const ld_field[]){{"users", LD_INTEGER, LD_AT(sim_class, users), .lo = 1, .hi = 10000000,
                        .flags = LD_F_REQUIRED, .doc = "users, each with one request at a time"},
                       {"think", LD_HOOK, LD_AT(sim_class, think_us),
                        .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"1s\"}",
                        .hook = scn__duration_dist, .def = "\"1s\"", .flags = LD_F_SET | LD_F_PURE,
                        LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
                        .doc = "from the end of a user's request to the next"},
                       {0}},
    NULL};

static int parse_closed(pctx *P, const cJSON *a, void *out) {
    sim_class *c = out;
    c->arrivals = SIM_ARR_CLOSED;
    return scn__fields(P, a, &scn__closed_section, c);
}

/* One recorded time: a number of milliseconds, in order, inside the traffic window. */
static int replay_time(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_class *c = out;
    if (!cJSON_IsNumber(e))
        return scn__fail(P, "expected a number of milliseconds, got %s", scn__type_name(e));
    if (!isfinite(e->valuedouble) || e->valuedouble < 0)
        return scn__fail(P, "%g ms is before the start of traffic", e->valuedouble);
    fb_time_us t = (fb_time_us)llround(e->valuedouble * 1000.0);
    if (t >= P->sc->duration_us)
        return scn__fail(P, "an arrival at %gs is at or after the end of traffic (duration %gs)",
                         (double)t / 1e6, (double)P->sc->duration_us / 1e6);
    if (i > 0 && t < c->replay_us[i - 1])
        return scn__fail(P, "replayed arrivals must be in time order (%g ms comes after %g ms)",
                         e->valuedouble, (double)c->replay_us[i - 1] / 1000.0);
    c->replay_us[i] = t;
    return FB_OK;
}

static int parse_at_ms(pctx *P, const cJSON *at, void *out) {
    sim_class *c = out;
    if (!cJSON_IsArray(at))
        return scn__fail(P, "expected an array of times in milliseconds, got %s",
                         scn__type_name(at));
    int n = cJSON_GetArraySize(at);
    c->replay_us = malloc((n > 0 ? (size_t)n : 1) * sizeof *c->replay_us);
    if (c->replay_us == NULL) return scn__fail(P, "out of memory");
    return scn__array(P, at, SIM_REPLAY_MAX, "replayed arrivals", replay_time, c, &c->replay_count);
}

/*
 * --set's check of at_ms: read into a scratch class against the document's duration (none
 * that reads: no end, the loader says what is wrong with it), and freed.
 */
static int check_at_ms(pctx *P, const cJSON *obj, const cJSON *root) {
    sim_scenario *sc = calloc(1, sizeof *sc);
    if (sc == NULL) return scn__fail(P, "out of memory");
    sim_error ignored = {{0}, {0}, {0}};
    pctx D = {&ignored, "", 0, false, NULL, NULL, FB_OK};
    const cJSON *d = scn__field(root, "duration");
    if (d == NULL || scn__get_duration_value(&D, d, &sc->duration_us, false) != FB_OK)
        sc->duration_us = INT64_MAX;
    sim_class c;
    memset(&c, 0, sizeof c);
    const sim_scenario *before = P->sc;
    P->sc = sc;
    int rc = scn__key(P, obj, "at_ms", parse_at_ms, &c);
    P->sc = before;
    free(c.replay_us);
    free(sc);
    return rc;
}

/* One session's requests: an integer from 1. */
static int session_turns(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_class *c = out;
    if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 1 ||
        e->valuedouble > SIM_TURNS_MAX)
        return scn__fail(P, "expected a session's number of requests, an integer from 1 to %u",
                         (unsigned)SIM_TURNS_MAX);
    c->turns[i] = (uint32_t)e->valuedouble;
    return FB_OK;
}

static int parse_turns(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    if (!cJSON_IsArray(v))
        return scn__fail(P, "expected an array of integers (requests per session), got %s",
                         scn__type_name(v));
    int n = cJSON_GetArraySize(v);
    c->turns = malloc((n > 0 ? (size_t)n : 1) * sizeof *c->turns);
    if (c->turns == NULL) return scn__fail(P, "out of memory");
    return scn__array(P, v, SIM_REPLAY_MAX, "sessions", session_turns, c, &c->turns_count);
}

/* A list of recorded times in milliseconds (think_ms, turn_at_ms): where they go, and what
   each is ("a think time in milliseconds from 0"). */
typedef struct recorded_ms {
    fb_time_us *us;
    const char *what;
} recorded_ms;

/* One recorded time: a number of milliseconds from 0, at most SIM_RECORDED_MS_MAX. */
static int recorded_time(pctx *P, const cJSON *e, uint32_t i, void *out) {
    const recorded_ms *r = out;
    if (!cJSON_IsNumber(e) || e->valuedouble < 0)
        return scn__fail(P, "expected %s, got %s", r->what,
                         cJSON_IsNumber(e) ? "a negative number" : scn__type_name(e));
    if (!(e->valuedouble <= SIM_RECORDED_MS_MAX))
        return scn__fail(P, "%g ms: at most 1e12 ms", e->valuedouble);
    r->us[i] = (fb_time_us)llround(e->valuedouble * 1000.0);
    return FB_OK;
}

/* An array of recorded times into *us (malloc), their number into *count. */
static int parse_recorded_ms(pctx *P, const cJSON *v, const char *list, const char *what,
                             fb_time_us **us, uint32_t *count) {
    if (!cJSON_IsArray(v))
        return scn__fail(P, "expected an array of %s in milliseconds, got %s", list,
                         scn__type_name(v));
    int n = cJSON_GetArraySize(v);
    *us = malloc((n > 0 ? (size_t)n : 1) * sizeof **us);
    if (*us == NULL) return scn__fail(P, "out of memory");
    recorded_ms r = {*us, what};
    return scn__array(P, v, SIM_REPLAY_MAX, list, recorded_time, &r, count);
}

static int parse_think_ms(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return parse_recorded_ms(P, v, "think times", "a think time in milliseconds from 0",
                             &c->think_rec_us, &c->think_rec_count);
}

/* Each session request's recorded start, milliseconds from the start of the run. */
static int parse_turn_at_ms(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return parse_recorded_ms(P, v, "session requests' times",
                             "a time in milliseconds from the start", &c->turn_at_us,
                             &c->turn_at_count);
}

/* One replayed request's recorded retries: when each attempt after its first started, in
   milliseconds from the request's arrival, in time order; at most SIM_RETRY_AT_MAX. */
static int request_retries(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_class *c = out;
    if (!cJSON_IsArray(e))
        return scn__fail(P,
                         "expected when the request's retries started, an array of "
                         "milliseconds from its arrival, got %s",
                         scn__type_name(e));
    uint32_t at = c->retry_at_first[i], k = 0;
    for (const cJSON *w = e->child; w && P->rc == FB_OK; w = w->next, k++) {
        size_t old = scn__push_index(P, k);
        bool num = cJSON_IsNumber(w) && w->valuedouble <= SIM_RECORDED_MS_MAX;
        fb_time_us t = num ? (fb_time_us)llround(w->valuedouble * 1000.0) : 0;
        if (k >= SIM_RETRY_AT_MAX)
            scn__fail(P, "at most %d retries for one request", SIM_RETRY_AT_MAX);
        else if (!cJSON_IsNumber(w) || w->valuedouble < 0)
            scn__fail(P, "expected a time in milliseconds from the request's arrival, got %s",
                      cJSON_IsNumber(w) ? "a negative number" : scn__type_name(w));
        else if (!num)
            scn__fail(P, "%g ms: at most 1e12 ms", w->valuedouble);
        else if (k > 0 && t < c->retry_at_us[at + k - 1])
            scn__fail(P, "%g ms: before the retry before it; in time order", w->valuedouble);
        else
            c->retry_at_us[at + k] = t;
        scn__pop(P, old);
    }
    c->retry_at_first[i + 1] = at + k;
    return P->rc;
}

/* "retry_at_ms": [[t, ...], ...]: when each replayed request's retries started. */
static int parse_retry_at_ms(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    if (!cJSON_IsArray(v))
        return scn__fail(P,
                         "expected an array of each request's retry times (arrays of "
                         "milliseconds), got %s",
                         scn__type_name(v));
    size_t n = 0, all = 0;
    for (const cJSON *e = v->child; e; e = e->next, n++)
        if (cJSON_IsArray(e)) all += (size_t)cJSON_GetArraySize(e);
    if (n > SIM_REPLAY_MAX) /* scn__array says it, at the item past the cap */
        n = SIM_REPLAY_MAX;
    c->retry_at_first = malloc((n + 1) * sizeof *c->retry_at_first);
    c->retry_at_us = malloc((all > 0 ? all : 1) * sizeof *c->retry_at_us);
    if (c->retry_at_first == NULL || c->retry_at_us == NULL) return scn__fail(P, "out of memory");
    c->retry_at_first[0] = 0;
    return scn__array(P, v, SIM_REPLAY_MAX, "requests' retry times", request_retries, c,
                      &c->retry_at_count);
}

/* {"replay": {"at_ms": [t0, t1, ...]}} (base: sim_class): fusebox import writes them; with
   "turns" and "think", each time starts a session. */
const ld_section scn__replay_section = {
    "arrivals.replay", "/$defs/class/properties/arrivals/properties/replay",
    (const ld_field[]){
        {"at_ms", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 1000000, \"items\": "
                   "{\"type\": \"number\", \"minimum\": 0}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_at_ms, .check = check_at_ms,
         .flags = LD_F_REQUIRED, .unit = "array of numbers (milliseconds)",
         .doc = "each arrival's time from the start of the run, in time order, "
                "before `duration`; at most 1,000,000"},
        {"turns", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 1000000, \"items\": "
                   "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": "
                   "1000000}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_turns, .unit = "array of integers",
         .def_doc = "one request each",
         .doc = "sessions: `at_ms[i]` starts a session of `turns[i]` requests (1 "
                "to 1,000,000), one for each time, each sent `think` after the one "
                "before ended"},
        {"think", LD_HOOK, LD_AT(sim_class, think_us),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\"}", .hook = scn__duration_dist,
         .flags = LD_F_PURE, LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
         .def_doc = "required with `turns`",
         .doc = "sessions: from the end of a session's request to its next"},
        {"think_ms", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 1000000, \"items\": "
                   "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1e12}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_think_ms,
         .unit = "array of numbers (milliseconds)", .def_doc = "drawn from `think`",
         .doc = "sessions: the recorded think times, session by session in `at_ms`'s order, "
                "one after each of a session's requests but its last (the sum of `turns` less "
                "one each), used in order in place of draws from `think`"},
        {"turn_at_ms", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 1000000, \"items\": "
                   "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1e12}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_turn_at_ms,
         .unit = "array of numbers (milliseconds)", .def_doc = "none",
         .doc = "sessions, with `think_ms`: when each of the requests `think_ms` precedes "
                "started in the log, from the start, in the same order; a variant whose `waits` "
                "is `\"recorded\"` sends them then (at once when the request before ended "
                "later)"},
        {"retry_at_ms", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 1000000, \"items\": "
                   "{\"type\": \"array\", \"maxItems\": 255, \"items\": "
                   "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 1e12}}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_retry_at_ms,
         .unit = "array of arrays of numbers (milliseconds)", .def_doc = "none",
         .doc = "when each replayed request's retries started, in milliseconds from its "
                "arrival, one array per request (in `at_ms`'s order; sessions: session by "
                "session, each one's requests in order; in time order, at most 255 each); a "
                "variant whose `waits` is `\"recorded\"` sends its retries then"},
        {0}},
    NULL};

static int parse_replay(pctx *P, const cJSON *a, void *out) {
    sim_class *c = out;
    c->arrivals = SIM_ARR_REPLAY;
    scn__fields(P, a, &scn__replay_section, c);
    bool turns = cJSON_GetObjectItemCaseSensitive(a, "turns") != NULL,
         think = cJSON_GetObjectItemCaseSensitive(a, "think") != NULL;
    if (turns != think)
        scn__fail(P,
                  "sessions need both \"turns\" (requests per session) and \"think\" "
                  "(the time between them); %s is missing",
                  turns ? "think" : "turns");
    if (turns && c->turns_count != c->replay_count)
        scn__fail(P, "\"turns\" has %u sessions and \"at_ms\" %u starts: one each", c->turns_count,
                  c->replay_count);
    bool rec = cJSON_GetObjectItemCaseSensitive(a, "think_ms") != NULL;
    if (rec && !turns)
        scn__fail(P, "\"think_ms\" (recorded think times) needs sessions: \"turns\" and "
                     "\"think\"");
    /* the mean rate, for the summaries that show one */
    double n = c->replay_count;
    if (P->rc == FB_OK && turns) /* explicit: turns[] holds turns_count items read whole */
        for (uint32_t i = 0; i < c->turns_count; i++) n += c->turns[i] - 1;
    if (P->rc == FB_OK && rec && (double)c->think_rec_count != n - c->replay_count)
        scn__fail(P,
                  "\"think_ms\" has %u think times and the sessions %.0f gaps (\"turns\" less "
                  "one each): one each",
                  c->think_rec_count, n - c->replay_count);
    if (P->rc == FB_OK && cJSON_GetObjectItemCaseSensitive(a, "turn_at_ms") != NULL &&
        (!rec || c->turn_at_count != c->think_rec_count))
        scn__fail(P,
                  "\"turn_at_ms\" (when the sessions' requests started) needs \"think_ms\" "
                  "and one time for each of its think times (%u for %u)",
                  c->turn_at_count, c->think_rec_count);
    if (P->rc == FB_OK && cJSON_GetObjectItemCaseSensitive(a, "retry_at_ms") != NULL &&
        (double)c->retry_at_count != n)
        scn__fail(
            P,
            "\"retry_at_ms\" has %u requests' retry times and the replay %.0f requests: one each",
            c->retry_at_count, n);
    c->rate = n / ((double)P->sc->duration_us / 1e6);
    return P->rc;
}

static int parse_poisson(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    c->arrivals = SIM_ARR_POISSON;
    return scn__get_rate_value(P, v, &c->rate);
}

static int parse_constant(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    c->arrivals = SIM_ARR_CONSTANT;
    return scn__get_rate_value(P, v, &c->rate);
}

/* "arrivals": exactly one of these (base: sim_class). */
const ld_section scn__arrivals_section = {
    "arrivals", "/$defs/class/properties/arrivals",
    (const ld_field[]){
        {"poisson", LD_HOOK, .schema = "{\"$ref\": \"#/$defs/rate\"}", .offset = 0,
         .size = sizeof(sim_class), .hook = parse_poisson, .flags = LD_F_PURE, .unit = "rate",
         .doc = "open loop: a Poisson process at this rate"},
        {"constant", LD_HOOK, .schema = "{\"$ref\": \"#/$defs/rate\"}", .offset = 0,
         .size = sizeof(sim_class), .hook = parse_constant, .flags = LD_F_PURE, .unit = "rate",
         .doc = "open loop: evenly spaced arrivals at this rate"},
        {"closed", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [], "
                   "\"properties\": {}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_closed, LD_SUB(&scn__closed_section),
         .unit = "`{\"users\": N, \"think\": DIST}`",
         .doc = "closed loop: N users who each send a request, wait for it to end, think, and "
                "send the next"},
        {"replay", LD_HOOK,
         .schema = "{\"type\": \"object\", \"description\": \"recorded arrival times (fusebox "
                   "import): milliseconds from the start, in time order, before the duration; "
                   "with turns and think, each starts a session\", \"additionalProperties\": "
                   "false, \"required\": [], \"dependentRequired\": {\"turns\": [\"think\"], "
                   "\"think\": [\"turns\"], \"think_ms\": [\"turns\"]}, \"properties\": {}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_replay, LD_SUB(&scn__replay_section),
         .unit = "`{\"at_ms\": [T, ...]}`",
         .doc = "the recorded arrival times of a log (with `turns` and `think`: of its sessions' "
                "first requests)"},
        {0}},
    NULL};

static int parse_arrivals(pctx *P, const cJSON *v, void *out) {
    int rc = scn__need_object(P, v);
    if (rc != FB_OK) return rc;
    if (v->child == NULL || v->child->next != NULL)
        return scn__fail(P, "expected exactly one of: poisson, constant, closed, replay");
    scn__check_fields(P, v, &scn__arrivals_section);
    scn__read_fields(P, v, &scn__arrivals_section, out);
    return P->rc;
}

/* ---- schedules ---- */

/* An item of "ramp" (base: sim_rate_point). */
const ld_section scn__ramp_section = {
    "ramp", "/$defs/class/properties/ramp/items",
    (const ld_field[]){{"at", LD_DURATION0, LD_AT(sim_rate_point, at_us), .flags = LD_F_REQUIRED,
                        .doc = "from the start of the run"},
                       {"rate", LD_HOOK, LD_AT(sim_rate_point, rate),
                        .schema = "{\"$ref\": \"#/$defs/rate\"}", .hook = parse_rate,
                        .flags = LD_F_REQUIRED | LD_F_PURE, .unit = "rate",
                        .doc = "the rate at that time"},
                       {0}},
    NULL};

static int ramp_point(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_class *c = out;
    scn__fields(P, e, &scn__ramp_section, &c->ramp[i]);
    if (i > 0 && c->ramp[i].at_us <= c->ramp[i - 1].at_us)
        scn__fail(P, "ramp points must be in increasing time order");
    return P->rc;
}

/* An item of "spikes" (base: sim_spike). */
const ld_section scn__spike_section = {
    "spikes", "/$defs/class/properties/spikes/items",
    (const ld_field[]){
        {"at", LD_DURATION0, LD_AT(sim_spike, at_us), .flags = LD_F_REQUIRED,
         .doc = "its start, before `duration`"},
        {"for", LD_DURATION, LD_AT(sim_spike, for_us), .flags = LD_F_REQUIRED, .doc = "its length"},
        {"rate", LD_HOOK, LD_AT(sim_spike, rate), .schema = "{\"$ref\": \"#/$defs/rate\"}",
         .hook = parse_rate, .flags = LD_F_REQUIRED | LD_F_PURE, .unit = "rate",
         .doc = "the rate during the spike (not added to the base rate)"},
        {0}},
    NULL};

static int spike(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_spike *s = &((sim_class *)out)->spikes[i];
    scn__fields(P, e, &scn__spike_section, s);
    if (s->at_us >= P->sc->duration_us)
        scn__fail_past_end(P, "at", "the spike", s->at_us, P->sc->duration_us);
    return P->rc;
}

/* An item of "bursts" (base: sim_burst). */
const ld_section scn__burst_section = {
    "bursts", "/$defs/class/properties/bursts/items",
    (const ld_field[]){{"at", LD_DURATION0, LD_AT(sim_burst, at_us), .flags = LD_F_REQUIRED,
                        .doc = "its start, before `duration`"},
                       {"count", LD_INTEGER, LD_AT(sim_burst, count), .lo = 1, .hi = 10000000,
                        .flags = LD_F_REQUIRED, .doc = "extra arrivals"},
                       {"over", LD_DURATION0, LD_AT(sim_burst, over_us), .def_doc = "at once",
                        .doc = "spread evenly over this long"},
                       {0}},
    NULL};

static int burst(pctx *P, const cJSON *e, uint32_t i, void *out) {
    sim_class *c = out;
    sim_burst *b = &c->bursts[i];
    scn__fields(P, e, &scn__burst_section, b);
    if (i > 0 && b->at_us < c->bursts[i - 1].at_us + c->bursts[i - 1].over_us)
        scn__fail(P, "bursts must be in time order and must not overlap");
    if (b->at_us >= P->sc->duration_us)
        scn__fail_past_end(P, "at", "the burst", b->at_us, P->sc->duration_us);
    return P->rc;
}

static int parse_ramp(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "ramp points", ramp_point, c, &c->ramp_count);
}

static int parse_spikes(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "spikes", spike, c, &c->spike_count);
}

static int parse_bursts(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    return scn__array(P, v, SIM_SCHEDULE_MAX, "bursts", burst, c, &c->burst_count);
}

/* "diurnal" (base: sim_class). */
const ld_section scn__diurnal_section = {
    "diurnal", "/$defs/class/properties/diurnal",
    (const ld_field[]){{"amplitude", LD_NUMBER, LD_AT(sim_class, diurnal_amplitude), .lo = 0,
                        .hi = 1, .flags = LD_F_REQUIRED,
                        .doc = "A: the rate is multiplied by 1 + A·cos(2π(t − peak)/period)"},
                       {"period", LD_DURATION, LD_AT(sim_class, diurnal_period_us),
                        .def = "\"24h\"", .flags = LD_F_SET, .doc = "one cycle"},
                       {"peak", LD_DURATION0, LD_AT(sim_class, diurnal_peak_us), .def = "\"14h\"",
                        .flags = LD_F_SET, .doc = "when the rate is highest"},
                       {0}},
    NULL};

static int parse_diurnal(pctx *P, const cJSON *v, void *out) {
    return scn__fields(P, v, &scn__diurnal_section, out);
}

/* ---- where a class goes ---- */

static int parse_target(pctx *P, const cJSON *t, void *out) {
    sim_class *c = out;
    if (!cJSON_IsString(t)) return scn__fail(P, "expected \"llm\", \"none\" or a provider name");
    if (strcmp(t->valuestring, "llm") == 0) {
        c->target = SIM_TARGET_LLM;
    } else if (strcmp(t->valuestring, "none") == 0) {
        c->target = SIM_TARGET_NONE;
    } else {
        c->target = SIM_TARGET_PROVIDER;
        return scn__lookup_provider(P, t, &c->provider);
    }
    return FB_OK;
}

/* --set's check of target: "llm", "none" or one of the document's providers. */
static int check_target(pctx *P, const cJSON *obj, const cJSON *root) {
    const cJSON *t = scn__field(obj, "target");
    size_t old = scn__push_key(P, "target");
    int rc = FB_OK;
    if (!cJSON_IsString(t))
        rc = scn__fail(P, "expected \"llm\", \"none\" or a provider name");
    else if (strcmp(t->valuestring, "llm") != 0 && strcmp(t->valuestring, "none") != 0)
        rc = scn__check_provider_ref(P, t, root);
    scn__pop(P, old);
    return rc;
}

static int parse_class_order(pctx *P, const cJSON *v, void *out) {
    sim_class *c = out;
    if (c->target != SIM_TARGET_LLM)
        return scn__fail(P, "only classes with target \"llm\" have an order");
    return scn__parse_order(P, v, c->order, &c->order_len);
}

/* ---- a class ---- */

static const char *const sources[] = {"shared", "per_pod", NULL};

/*
 * An element of "traffic" (base: sim_class). The code reads class, target and
 * arrivals first (in that order); source, serial and resubmit are read by
 * scn__parse_class_fleet (load_fleet.c), after what holds between the rest.
 */
const ld_section scn__class_section = {
    "traffic", "/$defs/class",
    (const ld_field[]){
        {"class", LD_CODE, .schema = "{\"$ref\": \"#/$defs/name\"}", .flags = LD_F_REQUIRED,
         .unit = "string", .doc = "its name (unique; letters, digits, `-`, `_`, `.`)"},
        {"arrivals", LD_CODE,
         .schema = "{\"type\": \"object\", \"minProperties\": 1, \"maxProperties\": 1, "
                   "\"additionalProperties\": false, \"properties\": {}}",
         LD_SUB(&scn__arrivals_section), .unit = "object", .def_doc = "required",
         .doc = "exactly one of `{\"poisson\": RATE}`, `{\"constant\": RATE}`, `{\"closed\": "
                "{\"users\": N, \"think\": DIST}}`, `{\"replay\": {\"at_ms\": [T, ...]}}` "
                "(with `\"turns\"` and `\"think\"`: sessions)",
         .flags = LD_F_NEEDED},
        {"ramp", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"required\": [], \"properties\": {}}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_ramp, .flags = LD_F_NAMED,
         LD_SUB(&scn__ramp_section), .unit = "array",
         .doc = "`[{\"at\": D, \"rate\": RATE}, ...]` in time order: the rate is interpolated "
                "linearly between points and held beyond the ends"},
        {"spikes", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"required\": [], \"properties\": {}}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_spikes, .flags = LD_F_NAMED,
         LD_SUB(&scn__spike_section), .unit = "array",
         .doc = "`[{\"at\": D, \"for\": D, \"rate\": RATE}]`: during a spike the rate **is** the "
                "spike's rate; `at` before `duration`"},
        {"bursts", LD_HOOK,
         .schema = "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"object\", "
                   "\"additionalProperties\": false, \"required\": [], \"properties\": {}}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_bursts, .flags = LD_F_NAMED,
         LD_SUB(&scn__burst_section), .unit = "array",
         .doc = "`[{\"at\": D, \"count\": N, \"over\": D}]`: N extra arrivals at one instant "
                "(`over` absent) or evenly spread over `over`; in time order; `at` before "
                "`duration`"},
        {"diurnal", LD_HOOK,
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [], "
                   "\"properties\": {}}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_diurnal,
         LD_SUB(&scn__diurnal_section), .unit = "object", .def_doc = "off",
         .doc = "`{\"amplitude\": A, \"period\": \"24h\", \"peak\": \"14h\"}`: the rate is "
                "multiplied by 1 + A·cos(2π(t − peak)/period)"},
        {"prompt_tokens", LD_HOOK, LD_AT(sim_class, prompt_tokens),
         .schema = "{\"$ref\": \"#/$defs/count_dist\", \"default\": 1000}", .hook = scn__count_dist,
         .def = "1000", .flags = LD_F_SET | LD_F_PURE, LD_SUB(&scn__count_dist_section),
         .unit = "distribution", .doc = "input tokens per request"},
        {"completion_tokens", LD_HOOK, LD_AT(sim_class, completion_tokens),
         .schema = "{\"$ref\": \"#/$defs/count_dist\", \"default\": 200}", .hook = scn__count_dist,
         .def = "200", .flags = LD_F_SET | LD_F_PURE, LD_SUB(&scn__count_dist_section),
         .unit = "distribution", .doc = "output tokens the request asks for"},
        {"service", LD_HOOK, LD_AT(sim_class, service_us),
         .schema = "{\"$ref\": \"#/$defs/duration_dist\", \"default\": \"0s\"}",
         .hook = scn__duration_dist, .def = "\"0s\"", .flags = LD_F_SET | LD_F_PURE,
         LD_SUB(&scn__duration_dist_section), .unit = "distribution (duration)",
         .doc = "local work on the worker before any call"},
        {"target", LD_CODE,
         .schema = "{\"type\": \"string\", \"default\": \"llm\", \"description\": \"\\\"llm\\\" "
                   "(the variant's fallback chain), \\\"none\\\" (local work only) or a provider "
                   "name (one dependency, no fallback)\"}",
         .def = "\"llm\"", .check = check_target, .unit = "string",
         .doc = "`\"llm\"`: the variant's fallback chain; `\"none\"`: local work only; a provider "
                "name: call that one provider (a tool API) with the variant's retry and breaker "
                "policy, no fallback"},
        {"stream", LD_BOOL, LD_AT(sim_class, stream), .def = "false",
         .doc = "the response is streamed: a `midstream` fault then fails after the user saw "
                "tokens and follows the variant's `stream` policy; for a class that does not "
                "stream it is a plain failure (nothing was shown)"},
        {"order", LD_HOOK,
         .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 8, \"uniqueItems\": true, "
                   "\"items\": {\"type\": \"string\"}, \"description\": \"a per-class chain order "
                   "(LLM provider names)\"}",
         .offset = 0, .size = sizeof(sim_class), .hook = parse_class_order,
         .unit = "array of provider names", .def_doc = "the variant's chain",
         .doc = "a per-class chain order (per-request order override)"},
        {"description", LD_CODE, .schema = "{\"type\": \"string\"}", .unit = "string"},
        {"source", LD_ENUM, LD_AT(sim_class, source), .names = sources, .def = "\"shared\"",
         .flags = LD_F_SET,
         .doc = "`shared`: one arrival process dealt round-robin to the pods; `per_pod`: each pod "
                "its own Poisson process at rate / `pods.count` (`poisson` arrivals only; not in a "
                "scenario where a variant autoscales)"},
        {"serial", LD_BOOL, LD_AT(sim_class, serial), .def = "false",
         .doc = "a serial client: one call in flight; the next starts at the later of its "
                "scheduled time and the end of the one before (`poisson`, `constant` or `replay` "
                "arrivals; no `bursts`; `source: \"shared\"`)"},
        {"resubmit", LD_HOOK, LD_AT(sim_class, resubmit),
         .schema = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [], "
                   "\"description\": \"a user whose request failed submits it again\", "
                   "\"properties\": {}}",
         .hook = scn__parse_resubmit, LD_SUB(&scn__resubmit_section), .unit = "object",
         .def_doc = "off",
         .doc = "users who submit a failed request again: `{\"probability\": F, \"think\": DIST, "
                "\"max\": N}` ([below](#re-submissions))"},
        {0}},
    NULL};

static int class_item(pctx *P, const cJSON *v, uint32_t i, void *out) {
    sim_scenario *sc = out;
    sim_class *c = &sc->classes[i];
    scn__check_fields(P, v, &scn__class_section);
    scn__get_string(P, v, "class", c->name, sizeof c->name);
    scn__check_name(P, "class", c->name);
    scn__keep(P, scn__set_defaults(&scn__class_section, c, P->err));
    c->target = SIM_TARGET_LLM;
    scn__key(P, v, "target", parse_target, c);
    scn__need_key(P, v, "arrivals");
    scn__key(P, v, "arrivals", parse_arrivals, c);
    scn__read_range(P, v, &scn__class_section, c, NULL, "source");
    bool schedule = c->ramp_count || c->spike_count || c->burst_count || c->diurnal_amplitude > 0;
    if (c->arrivals == SIM_ARR_CLOSED && schedule)
        scn__fail(P, "ramp, spikes, bursts and diurnal apply to open-loop arrivals only");
    if (c->arrivals == SIM_ARR_REPLAY && schedule)
        scn__fail(P, "ramp, spikes, bursts and diurnal do not apply to replayed arrivals (the "
                     "recorded times are the whole schedule)");
    scn__parse_class_fleet(P, v, c);
    for (uint32_t k = 0; k < i; k++)
        if (strcmp(sc->classes[k].name, c->name) == 0)
            scn__fail(P, "two classes are named \"%s\"", c->name);
    return P->rc;
}

int scn__parse_traffic(pctx *P, const cJSON *v, void *out) {
    sim_scenario *sc = out;
    scn__array(P, v, SIM_CLASSES_MAX, "traffic classes", class_item, sc, &sc->class_count);
    if (sc->class_count == 0) scn__fail(P, "at least one traffic class is needed");
    return P->rc;
}
