/* hpa.c - the HPA's replica arithmetic; see hpa.h. */
#include "sim/hpa.h"

#include <math.h>

static bool within(double ratio, double tolerance) {
    return fabs(1.0 - ratio) <= tolerance;
}

static uint32_t ceil_pods(double x) {
    if (!(x > 0)) return 0;
    return x >= (double)SIM_PODS_MAX * 1000 ? SIM_PODS_MAX * 1000u : (uint32_t)ceil(x);
}

uint32_t sim_hpa_replicas(double value, double target, double tolerance, uint32_t ready,
                          uint32_t missing) {
    uint32_t current = ready + missing;
    if (ready == 0 || !(target > 0)) return current;
    double ratio = value / target;
    if (missing == 0) return within(ratio, tolerance) ? current : ceil_pods(ratio * ready);
    /* pods without metrics: the target on a scale down, nothing on a scale up */
    double fill = ratio < 1.0 ? target : 0.0;
    double avg = (value * ready + fill * missing) / (double)current;
    double again = avg / target;
    if (within(again, tolerance) || (ratio < 1.0 && again > 1.0) || (ratio > 1.0 && again < 1.0))
        return current;
    uint32_t n = ceil_pods(again * current);
    if ((again < 1.0 && n > current) || (again > 1.0 && n < current)) return current;
    return n;
}

void sim_hpa_history_add(sim_hpa_history *h, fb_time_us t_us, int32_t value) {
    if (h->cap == 0) return;
    uint32_t at = (h->head + h->len) % h->cap;
    if (h->len == h->cap) {
        at = h->head;
        h->head = (h->head + 1) % h->cap;
    } else {
        h->len++;
    }
    h->e[at].t_us = t_us;
    h->e[at].value = value;
}

static const sim_hpa_entry *entry(const sim_hpa_history *h, uint32_t i) {
    return &h->e[(h->head + i) % h->cap];
}

uint32_t sim_hpa_stabilize(sim_hpa_history *recs, const sim_autoscale *a, uint32_t current,
                           uint32_t desired, fb_time_us now_us) {
    bool up = desired >= current;
    fb_time_us cutoff = now_us - (up ? a->up.stabilization_us : a->down.stabilization_us);
    int32_t best = (int32_t)desired;
    for (uint32_t i = 0; i < recs->len; i++) {
        const sim_hpa_entry *e = entry(recs, i);
        if (e->t_us <= cutoff) continue;
        if (up ? e->value < best : e->value > best) best = e->value;
    }
    sim_hpa_history_add(recs, now_us, (int32_t)desired);
    return (uint32_t)best;
}

/* The net change (+ added, - removed) of the events strictly after now - period. */
static int64_t change_within(const sim_hpa_history *ev, fb_time_us period_us, fb_time_us now_us) {
    int64_t sum = 0;
    for (uint32_t i = 0; i < ev->len; i++)
        if (entry(ev, i)->t_us > now_us - period_us) sum += entry(ev, i)->value;
    return sum;
}

/* The most pods the rules allow on a scale up (up) or the fewest on a scale down. */
static int64_t rate_limit(const sim_hpa_history *ev, const sim_scale_rules *r, bool up,
                          uint32_t current, fb_time_us now_us) {
    if (r->select == SIM_SELECT_DISABLED) return current;
    int64_t start = (int64_t)current - change_within(ev, r->period_us, now_us);
    int64_t by_pods = up ? start + r->pods : start - r->pods;
    double share = (double)r->percent / 100.0;
    int64_t by_percent = up ? (int64_t)ceil((double)start * (1 + share))
                            : (int64_t)floor((double)start * (1 - share));
    /* "max" picks the policy that allows the largest change */
    bool largest = r->select == SIM_SELECT_MAX;
    if (r->pods == 0) return by_percent;
    if (r->percent == 0) return by_pods;
    if (up == largest) return by_pods > by_percent ? by_pods : by_percent;
    return by_pods < by_percent ? by_pods : by_percent;
}

uint32_t sim_hpa_bound(const sim_hpa_history *events, const sim_autoscale *a, uint32_t current,
                       uint32_t desired, fb_time_us now_us) {
    if (desired > current) {
        int64_t limit = rate_limit(events, &a->up, true, current, now_us);
        if (limit < current) limit = current;
        int64_t allowed = (int64_t)a->max < limit ? a->max : limit;
        return (int64_t)desired > allowed ? (uint32_t)allowed : desired;
    }
    if (desired < current) {
        int64_t limit = rate_limit(events, &a->down, false, current, now_us);
        if (limit > current) limit = current;
        int64_t allowed = (int64_t)a->min > limit ? a->min : limit;
        return (int64_t)desired < allowed ? (uint32_t)allowed : desired;
    }
    return desired;
}
