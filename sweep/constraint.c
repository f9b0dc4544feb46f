/*
 * constraint.c - --subject-to "success_rate>=0.999,latency_p99<=10s": metric
 * names checked against the metric table, bounds read in the metric's unit.
 * See sweep.h.
 */
#include "sweep/sweepint.h"

#include <stdlib.h>
#include <string.h>

int sweep_check_metric(const sim_scenario *sc, const char *name, sim_unit *unit, char *msg,
                       size_t msglen) {
    sim_summary *dummy = calloc(1, sizeof *dummy);
    if (dummy == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    double v;
    sim_unit u = SIM_UNIT_COUNT;
    int rc = sim_metric_value(sc, dummy, name, &v, &u, msg, msglen);
    free(dummy);
    if (rc == FB_OK && unit) *unit = u;
    return rc;
}

static int parse_bound(const char *item, const char *metric, sim_unit unit, const char *v,
                       double *out, char *msg, size_t msglen) {
    switch (unit) {
    case SIM_UNIT_US: {
        fb_time_us d;
        if (scn_parse_duration(v, &d) == FB_OK) {
            *out = (double)d;
            return FB_OK;
        }
        snprintf(msg, msglen,
                 "--subject-to '%s': %s is a duration: write it with a unit (10s, "
                 "250ms)",
                 item, metric);
        return FB_EINVAL;
    }
    case SIM_UNIT_RATIO: {
        size_t n = strlen(v);
        if (n > 1 && v[n - 1] == '%') {
            char num[64];
            snprintf(num, sizeof num, "%.*s", (int)(n - 1), v);
            if (sweep_parse_number(num, out) == FB_OK) {
                *out /= 100;
                return FB_OK;
            }
        } else if (sweep_parse_number(v, out) == FB_OK) {
            return FB_OK;
        }
        break;
    }
    case SIM_UNIT_USD:
        if (sweep_parse_number(v[0] == '$' ? v + 1 : v, out) == FB_OK) return FB_OK;
        break;
    default:
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
            *out = v[0] == 't';
            return unit == SIM_UNIT_BOOL ? FB_OK : FB_EINVAL;
        }
        if (sweep_parse_number(v, out) == FB_OK) return FB_OK;
        break;
    }
    snprintf(msg, msglen, "--subject-to '%s': cannot read the bound '%s' for %s", item, v, metric);
    return FB_EINVAL;
}

static int parse_constraint(char *item, const sim_scenario *sc, sweep_constraint *c, char *msg,
                            size_t msglen) {
    memset(c, 0, sizeof *c);
    const char *t = sweep_trim(item);
    snprintf(c->text, sizeof c->text, "%s", t);
    char *op = strpbrk((char *)t, "<>=!");
    if (op == NULL || *op == '=' || *op == '!') {
        snprintf(msg, msglen, "--subject-to '%s': expected METRIC >= VALUE (or <=, >, <)", t);
        return FB_EINVAL;
    }
    char opc = *op;
    bool eq = op[1] == '=';
    c->op = opc == '>' ? (eq ? SWEEP_GE : SWEEP_GT) : (eq ? SWEEP_LE : SWEEP_LT);
    *op = '\0';
    const char *name = sweep_trim((char *)t);
    char *value = op + (eq ? 2 : 1);
    const char *v = sweep_trim(value);
    if (*name == '\0' || *v == '\0') {
        snprintf(msg, msglen, "--subject-to '%s': expected METRIC >= VALUE (or <=, >, <)", c->text);
        return FB_EINVAL;
    }
    if (strlen(name) >= sizeof c->metric) {
        snprintf(msg, msglen, "--subject-to '%s': metric name too long", c->text);
        return FB_EINVAL;
    }
    snprintf(c->metric, sizeof c->metric, "%s", name);
    sim_unit unit;
    char m[256];
    if (sweep_check_metric(sc, name, &unit, m, sizeof m) != FB_OK) {
        snprintf(msg, msglen, "--subject-to '%s': %s", c->text, m);
        return FB_EINVAL;
    }
    return parse_bound(c->text, name, unit, v, &c->value, msg, msglen);
}

int sweep_parse_constraints(const char *text, const sim_scenario *sc, sweep_constraint *out,
                            size_t max, size_t *count, char *msg, size_t msglen) {
    *count = 0;
    char *copy = strdup(text);
    if (copy == NULL) {
        snprintf(msg, msglen, "out of memory");
        return FB_ENOMEM;
    }
    int rc = FB_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == FB_OK;
         item = strtok_r(NULL, ",", &save)) {
        if (*sweep_trim(item) == '\0') continue;
        if (*count == max) {
            snprintf(msg, msglen, "--subject-to: at most %zu constraints", max);
            rc = FB_ECAP;
            break;
        }
        rc = parse_constraint(item, sc, &out[*count], msg, msglen);
        if (rc == FB_OK) (*count)++;
    }
    if (rc == FB_OK && *count == 0) {
        snprintf(msg, msglen, "--subject-to: no constraint given");
        rc = FB_EINVAL;
    }
    free(copy);
    return rc;
}

bool sweep_constraint_holds(const sweep_constraint *c, double v) {
    switch (c->op) {
    case SWEEP_GE:
        return v >= c->value;
    case SWEEP_LE:
        return v <= c->value;
    case SWEEP_GT:
        return v > c->value;
    default:
        return v < c->value;
    }
}
