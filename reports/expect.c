/* expect.c - parse and evaluate expectations; see expect.h. */
#include "reports/expect.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/settings.h"
#include "scenario/preset.h"

typedef enum op { OP_GE, OP_LE, OP_GT, OP_LT, OP_EQ, OP_NE } op;

typedef struct val {
    double v;
    int kind; /* 0 plain number, 1 duration (us) */
} val;

typedef struct parser {
    const char *s, *p;
    const sim_scenario *sc;
    sim_summary *const *sums; /* NULL: validate only */
    sim_summary *blank;       /* validate only: an empty summary to check names against */
    size_t n;
    char *msg;
    size_t msglen;
    int err;
    char na[256]; /* the first n/a metric read: "VARIANT.METRIC is n/a (why)" */
} parser;

static void perr(parser *P, const char *fmt, const char *arg) {
    if (P->err) return;
    P->err = 1;
    char m[320];
    snprintf(m, sizeof m, fmt, arg ? arg : "");
    snprintf(P->msg, P->msglen, "%s (at column %d)", m, (int)(P->p - P->s) + 1);
}

static void skip(parser *P) {
    while (isspace((unsigned char)*P->p)) P->p++;
}

static val side(parser *P);

static const sim_summary *summary_for(parser *P, const char *variant) {
    int v = scn_variant(P->sc, variant);
    if (v < 0) {
        perr(P, "no variant named '%s'", variant);
        return NULL;
    }
    if (P->sums == NULL) return NULL;
    for (size_t i = 0; i < P->n; i++)
        if (strcmp(P->sums[i]->variant, variant) == 0) return P->sums[i];
    perr(P, "variant '%s' was not run", variant);
    return NULL;
}

/* "a, b, c": the names of a vocabulary's parameters, or of a variant's preset layers. */
static void names_of(char *buf, size_t len, const sim_vocab *v, const sim_policy *pol) {
    size_t n = 0;
    buf[0] = '\0';
    for (const sim_vocab_param *vp = v ? v->params : NULL; vp && vp->name && n < len; vp++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", vp->name);
    for (uint32_t k = 0; !v && k < pol->layer_count && n < len; k++)
        if (pol->layers[k].preset && pol->layers[k].preset->vocab)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", pol->layers[k].name);
}

/* The layer of variant v named `name` that a preset with a vocabulary gave, else an error. */
static const sim_layer *library_layer(parser *P, int v, const char *name) {
    const sim_policy *pol = &P->sc->variants[v];
    char m[300];
    for (uint32_t k = 0; k < pol->layer_count; k++) {
        const sim_layer *L = &pol->layers[k];
        if (strcmp(L->name, name) != 0) continue;
        if (L->preset && L->preset->vocab) return L;
        snprintf(m, sizeof m, "layer '%.40s' has no library's names (not a preset's)", name);
        perr(P, "%s", m);
        return NULL;
    }
    char list[120];
    names_of(list, sizeof list, NULL, pol);
    snprintf(m, sizeof m,
             "variant '%.40s' has no metric or library layer '%.40s' (its library "
             "layers: %.120s)",
             pol->name, name, list[0] ? list : "none");
    perr(P, "%s", m);
    return NULL;
}

/*
 * VARIANT.LAYER.KEY[provider]: a preset layer's setting by its library's name (its vocabulary,
 * scenario/preset.h), as it ran: "per-pod.proxy.cooldown_time == 60s". The provider is a
 * breaker setting's (default: the first with a breaker in that layer).
 */
static val library_setting(parser *P, const char *variant, const char *layer) {
    val out = {0, 0};
    char key[64] = "", prov[SIM_NAME_MAX] = "", m[300];
    size_t i = 0;
    for (P->p++; (isalnum((unsigned char)*P->p) || *P->p == '_') && i < sizeof key - 1;)
        key[i++] = *P->p++;
    if (*P->p == '[') {
        for (i = 0, P->p++; *P->p && *P->p != ']' && i < sizeof prov - 1;) prov[i++] = *P->p++;
        if (*P->p++ != ']') {
            perr(P, "missing ']' after a provider name", NULL);
            return out;
        }
    }
    int v = scn_variant(P->sc, variant);
    if (v < 0) {
        perr(P, "no variant named '%s'", variant);
        return out;
    }
    const sim_layer *L = library_layer(P, v, layer);
    if (L == NULL) return out;
    const sim_vocab *voc = L->preset->vocab;
    const sim_vocab_param *vp = voc->params;
    while (vp && vp->name && strcmp(vp->name, key) != 0) vp++;
    int p = prov[0] ? scn_provider(P->sc, prov) : 0;
    bool breaker = vp && vp->name && vp->field < SIM_VF_FIRST_RETRY;
    for (uint32_t q = 0; breaker && !prov[0] && q < P->sc->provider_count; q++)
        if (L->per_provider[q].has_breaker) {
            p = (int)q;
            break;
        }
    if (vp == NULL || vp->name == NULL) {
        char list[120];
        names_of(list, sizeof list, voc, NULL);
        snprintf(m, sizeof m,
                 "%.30s's layer '%.30s' has no setting '%.40s' here (its names: %.120s)", voc->name,
                 layer, key, list);
        perr(P, "%s", m);
        return out;
    }
    if (p < 0) {
        perr(P, "no provider named '%s'", prov);
        return out;
    }
    bool duration = false;
    if ((breaker && !L->per_provider[p].has_breaker) ||
        !rep_library_number(L, (uint32_t)p, vp, &out.v, &duration)) {
        snprintf(m, sizeof m, "%.30s's %.40s is not a number in layer '%.30s'%s%s%s", voc->name,
                 key, layer, prov[0] ? " for provider '" : "", prov, prov[0] ? "'" : "");
        perr(P, "%s", m);
        return out;
    }
    out.kind = duration ? 1 : 0;
    return out;
}

/*
 * The requests a figure is made of. A rate over no request, the mean or a percentile of none,
 * read 0 in the metric table: "latency_p99 <= 15s" passed as "0ms <= 15.0s" on a run in which
 * no request ended. An expectation on such a figure would pass or fail on no evidence, so it
 * reads n/a. (A percentile of few requests is their order statistic, as a log's is: the bands
 * an import writes compare those, docs/import.md; it stays a number.)
 */
typedef struct sample_rule {
    const char *metric;
    int of; /* what it counts: an index of sample_names */
    const char *what;
} sample_rule;

static const sample_rule sample_rules[] = {
    {"success_rate", 0, "a rate"},       {"availability", 0, "a rate"},
    {"error_rate", 0, "a rate"},         {"fallback_rate", 0, "a rate"},
    {"blast_radius_rate", 0, "a rate"},  {"latency_p50", 1, "a percentile"},
    {"latency_p90", 1, "a percentile"},  {"latency_p99", 1, "a percentile"},
    {"latency_p999", 1, "a percentile"}, {"latency_max", 1, "a maximum"},
    {"latency_mean", 1, "a mean"},       {"success_latency_p99", 2, "a percentile"},
    {"amplification", 3, "a ratio"},     {"amplification_fault", 4, "a ratio"},
};

/* 0 counts s->ended, 1 the latency histogram (the same requests), 2 that of successes */
static const char *const sample_names[] = {"no request ended", "no request ended", "no success",
                                           "no request calls a provider",
                                           "no request in a fault or spike window"};

static uint64_t sample_size(const sim_summary *s, int of) {
    uint64_t n = 0;
    switch (of) {
    case 0:
        for (int e = 0; e < SIM_END_COUNT; e++) n += s->ended[e];
        return n;
    case 1:
        return fb_hist_count(&s->latency);
    case 2:
        return fb_hist_count(&s->latency_ok);
    case 3:
        return s->requests_calling;
    default:
        return s->requests_in_fault;
    }
}

/* NAN, with P->na saying why, when `metric` of s is made of no request; else v. */
static double sampled(parser *P, const sim_summary *s, const char *variant, const char *metric,
                      double v) {
    for (size_t i = 0; i < sizeof sample_rules / sizeof sample_rules[0]; i++) {
        const sample_rule *r = &sample_rules[i];
        if (strcmp(r->metric, metric) != 0) continue;
        if (sample_size(s, r->of) > 0) return v;
        if (P->na[0] == '\0')
            snprintf(P->na, sizeof P->na, "%.63s.%.40s is n/a (%s: %s of none)", variant, metric,
                     sample_names[r->of], r->what);
        return NAN;
    }
    return v;
}

/* NAME or NAME.METRIC or METRIC[provider], or NAME.LAYER.KEY (library_setting) */
static val reference(parser *P) {
    val out = {0, 0};
    char a[128] = "", b[128] = "";
    size_t i = 0;
    while ((isalnum((unsigned char)*P->p) || *P->p == '_' || *P->p == '-') && i < sizeof a - 1)
        a[i++] = *P->p++;
    a[i] = '\0';
    const char *variant = NULL, *metric = a;
    if (*P->p == '.') {
        P->p++;
        i = 0;
        while ((isalnum((unsigned char)*P->p) || *P->p == '_') && i < sizeof b - 1)
            b[i++] = *P->p++;
        b[i] = '\0';
        variant = a;
        metric = b;
        if (*P->p == '.') return library_setting(P, a, b);
    }
    if (*P->p == '[') {
        size_t len = strlen(metric);
        char *m = variant ? b : a;
        size_t cap = sizeof a;
        while (*P->p && *P->p != ']' && len < cap - 2) m[len++] = *P->p++;
        if (*P->p != ']') {
            perr(P, "missing ']' after a provider name", NULL);
            return out;
        }
        m[len++] = *P->p++;
        m[len] = '\0';
    }
    if (metric[0] == '\0') {
        perr(P, "expected a metric name", NULL);
        return out;
    }
    if (variant == NULL) {
        if (P->sc->variant_count != 1) {
            perr(P, "'%s' needs a variant: write VARIANT.METRIC", metric);
            return out;
        }
        variant = P->sc->variants[0].name;
    }
    const sim_summary *s = summary_for(P, variant);
    if (P->err) return out;
    if (s == NULL) {
        /* validating: check the name only, against the variant it names (its layers) */
        snprintf(P->blank->variant, sizeof P->blank->variant, "%.*s",
                 (int)sizeof P->blank->variant - 1, variant);
        s = P->blank;
    }
    sim_unit unit = SIM_UNIT_COUNT;
    char m2[200];
    if (sim_metric_value(P->sc, s, metric, &out.v, &unit, m2, sizeof m2) != FB_OK) {
        perr(P, "%s", m2);
        return out;
    }
    out.kind = unit == SIM_UNIT_US ? 1 : 0;
    if (s != P->blank) out.v = sampled(P, s, variant, metric, out.v);
    if (sim_metric_is_na(out.v) && P->na[0] == '\0') {
        const sim_metric *row = sim_metric_find(metric);
        snprintf(P->na, sizeof P->na, "%.63s.%.63s is n/a (%.110s)", variant, metric,
                 row && row->na ? row->na : "no meaning for this run");
    }
    return out;
}

static val number(parser *P) {
    val out = {0, 0};
    bool quoted = *P->p == '"';
    if (quoted) P->p++;
    char *end;
    double v = strtod(P->p, &end);
    if (end == P->p) {
        perr(P, "expected a number, a duration or a metric", NULL);
        return out;
    }
    P->p = end;
    out.v = v;
    char unit[8] = "";
    size_t i = 0;
    while (isalpha((unsigned char)*P->p) && i < sizeof unit - 1) unit[i++] = *P->p++;
    unit[i] = '\0';
    if (*P->p == '%' && !quoted && i == 0) {
        P->p++;
        out.v = v / 100;
        return out;
    }
    if (i > 0) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g%s", v, unit);
        fb_time_us d;
        if (scn_parse_duration(buf, &d) != FB_OK) {
            perr(P, "unknown unit '%s' (durations use us, ms, s, m, h, d)", unit);
            return out;
        }
        out.v = (double)d;
        out.kind = 1;
    } else if (quoted) {
        perr(P, "a quoted value must be a duration such as \"15s\"", NULL);
        return out;
    }
    if (quoted) {
        if (*P->p != '"') {
            perr(P, "missing closing quote", NULL);
            return out;
        }
        P->p++;
    }
    return out;
}

static val factor(parser *P) {
    skip(P);
    val out = {0, 0};
    if (*P->p == '(') {
        P->p++;
        out = side(P);
        skip(P);
        if (*P->p != ')')
            perr(P, "missing ')'", NULL);
        else
            P->p++;
        return out;
    }
    if (isdigit((unsigned char)*P->p) || *P->p == '.' || *P->p == '"' ||
        ((*P->p == '-' || *P->p == '+') && isdigit((unsigned char)P->p[1])))
        return number(P);
    if (isalpha((unsigned char)*P->p) || *P->p == '_') return reference(P);
    perr(P, "expected a number, a duration or a metric", NULL);
    return out;
}

static val term(parser *P) {
    val a = factor(P);
    for (;;) {
        skip(P);
        char c = *P->p;
        if (c != '*' && c != '/') return a;
        P->p++;
        skip(P);
        const char *divisor = P->p;
        val b = factor(P);
        if (a.kind && b.kind) perr(P, "cannot multiply or divide two durations", NULL);
        if (c == '/' && b.kind) perr(P, "cannot divide by a duration", NULL);
        if (c == '*') {
            a.v *= b.v;
        } else if (b.v == 0) {
            /* a ratio over nothing is no number: "errors / retries >= 1" passed as inf >= 1 */
            if (P->na[0] == '\0' && P->sums != NULL)
                snprintf(P->na, sizeof P->na, "divided by 0: %.*s is 0 in this run",
                         (int)(P->p - divisor > 120 ? 120 : P->p - divisor), divisor);
            a.v = NAN;
        } else {
            a.v /= b.v;
        }
        a.kind = a.kind || b.kind;
    }
}

static val side(parser *P) {
    val a = term(P);
    for (;;) {
        skip(P);
        char c = *P->p;
        if (c != '+' && c != '-') return a;
        P->p++;
        val b = term(P);
        if (a.kind != b.kind) perr(P, "cannot add a duration and a plain number", NULL);
        a.v = c == '+' ? a.v + b.v : a.v - b.v;
    }
}

static bool parse_op(parser *P, op *o) {
    skip(P);
    static const struct {
        const char *s;
        op o;
    } ops[] = {{">=", OP_GE}, {"<=", OP_LE}, {"==", OP_EQ},
               {"!=", OP_NE}, {">", OP_GT},  {"<", OP_LT}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t l = strlen(ops[i].s);
        if (strncmp(P->p, ops[i].s, l) == 0) {
            *o = ops[i].o;
            P->p += l;
            return true;
        }
    }
    perr(P, "expected a comparison (>=, <=, >, <, ==, !=)", NULL);
    return false;
}

static const char *op_text(op o) {
    static const char *const t[] = {">=", "<=", ">", "<", "==", "!="};
    return t[o];
}

static void show(char *buf, size_t len, val v) {
    if (v.kind)
        rep_format_duration(buf, len, v.v);
    else if (!isfinite(v.v))
        snprintf(buf, len, "%s", v.v > 0 ? "inf" : "-inf");
    else if (v.v == floor(v.v) && fabs(v.v) < 1e15)
        snprintf(buf, len, "%.0f", v.v);
    else
        snprintf(buf, len, "%.6g", v.v);
}

/* As show, with every digit that tells two close values apart. */
static void show_exact(char *buf, size_t len, val v) {
    if (v.kind)
        snprintf(buf, len, "%.6fs", v.v / 1e6);
    else
        snprintf(buf, len, "%.12g", v.v);
}

static int run(parser *P, rep_expect_result *out) {
    val l = side(P);
    op o = OP_EQ;
    if (!P->err) parse_op(P, &o);
    val r = P->err ? l : side(P);
    skip(P);
    if (!P->err && *P->p) perr(P, "unexpected '%s'", P->p);
    if (!P->err && l.kind != r.kind) {
        const char *what = l.kind ? "the left side is a duration" : "the right side is a duration";
        perr(P, "%s: compare durations with durations (e.g. 15s)", what);
    }
    if (P->err) return FB_EINVAL;
    if (out == NULL) return FB_OK;
    bool pass = false;
    switch (o) {
    case OP_GE:
        pass = l.v >= r.v;
        break;
    case OP_LE:
        pass = l.v <= r.v;
        break;
    case OP_GT:
        pass = l.v > r.v;
        break;
    case OP_LT:
        pass = l.v < r.v;
        break;
    case OP_EQ:
        pass = l.v == r.v;
        break;
    case OP_NE:
        pass = l.v != r.v;
        break;
    }
    char a[64], b[64];
    show(a, sizeof a, l);
    show(b, sizeof b, r);
    if (strcmp(a, b) == 0 && l.v != r.v) {
        /* rounded alike but not equal: the digits that decide it */
        show_exact(a, sizeof a, l);
        show_exact(b, sizeof b, r);
    }
    out->passed = pass;
    out->lhs = l.v;
    out->rhs = r.v;
    out->duration = l.kind;
    if (pass) {
        snprintf(out->detail, sizeof out->detail, "%s %s %s", a, op_text(o), b);
    } else if (l.v == r.v) {
        snprintf(out->detail, sizeof out->detail, "measured %s, limit %s %s: %s", a, op_text(o), b,
                 o == OP_NE ? "equal" : "at the limit, not beyond it");
    } else {
        char by[64];
        val d = {.v = fabs(l.v - r.v), .kind = l.kind};
        show(by, sizeof by, d);
        if (strcmp(by, "0") == 0 || strcmp(by, "0ms") == 0 || strcmp(by, "0us") == 0)
            show_exact(by, sizeof by, d);
        const char *how = o == OP_GE || o == OP_GT ? "short" : o == OP_EQ ? "off" : "over";
        snprintf(out->detail, sizeof out->detail, "measured %s, limit %s %s: %s by %s", a,
                 op_text(o), b, how, by);
    }
    if (isnan(l.v) || isnan(r.v)) {
        /* nothing compares with n/a: the expectation fails, and says why */
        out->passed = false;
        out->na = true;
        snprintf(out->detail, sizeof out->detail, "%s",
                 P->na[0] ? P->na : "a side is not a number");
    }
    return FB_OK;
}

int rep_expect_validate(const sim_scenario *sc, const char *expr, char *msg, size_t msglen) {
    sim_summary *blank = calloc(1, sizeof *blank);
    if (blank == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    parser P = {expr, expr, sc, NULL, blank, 0, msg, msglen, 0, ""};
    int rc = run(&P, NULL);
    free(blank);
    return rc;
}

int rep_expect_eval(const sim_scenario *sc, sim_summary *const *sums, size_t n, const char *expr,
                    rep_expect_result *out, char *msg, size_t msglen) {
    memset(out, 0, sizeof *out);
    parser P = {expr, expr, sc, sums, NULL, n, msg, msglen, 0, ""};
    return run(&P, out);
}
