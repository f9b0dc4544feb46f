/*
 * hpa.h - the replica arithmetic of Kubernetes' Horizontal Pod Autoscaler.
 *
 * Pure functions over plain numbers and short histories, so that each rule
 * can be tested with exact values: the replica calculation (desiredReplicas
 * = ceil(currentReplicas x currentMetricValue / desiredMetricValue), with the
 * tolerance and the rules for pods that have no metrics yet), the
 * stabilization window, and the scaling policies that bound the rate of
 * change. The rules follow the Kubernetes documentation ("Horizontal Pod
 * Autoscaling", algorithm details and configurable scaling behavior,
 * kubernetes/website content/en/docs/tasks/run-application/
 * horizontal-pod-autoscale.md at 01650250) and the defaults of
 * kubernetes/kubernetes pkg/apis/autoscaling/v2/defaults.go (1adaa753);
 * docs/models.md ("Autoscaling") says what is and is not modelled.
 * sim/autoscale.c runs them every sync period.
 */
#ifndef SIM_HPA_H
#define SIM_HPA_H

#include <stdbool.h>
#include <stdint.h>

#include "core/fb.h"
#include "scenario/scenario.h"

/*
 * The replica calculation for one metric. `ready` pods report metrics whose
 * average is `value`; `missing` pods (started by the autoscaler, not yet
 * ready) report none; current = ready + missing. Within the tolerance the
 * answer is `current`. Missing pods count as using the target on a scale
 * down and nothing on a scale up, and when that reverses the direction or
 * lands within the tolerance nothing changes (the documented dampening).
 * With no ready pod there is no metric: the answer is `current`.
 */
uint32_t sim_hpa_replicas(double value, double target, double tolerance, uint32_t ready,
                          uint32_t missing);

/* A timestamped number: a recommendation, or a scale event's change (+ up, - down). */
typedef struct sim_hpa_entry {
    fb_time_us t_us;
    int32_t value;
} sim_hpa_entry;

/* A ring of entries; the oldest is overwritten once it is full (size it for the longest window). */
typedef struct sim_hpa_history {
    sim_hpa_entry *e;
    uint32_t cap, len, head; /* head: the oldest */
} sim_hpa_history;

void sim_hpa_history_add(sim_hpa_history *h, fb_time_us t_us, int32_t value);

/*
 * The stabilized recommendation: for a desired count at or above current,
 * the lowest of it and the recommendations of the last up.stabilization;
 * below current, the highest over down.stabilization (entries strictly after
 * now - window count, as in the controller). Then `desired` joins the history.
 */
uint32_t sim_hpa_stabilize(sim_hpa_history *recs, const sim_autoscale *a, uint32_t current,
                           uint32_t desired, fb_time_us now_us);

/*
 * The desired count bounded by the scaling policies and by [min, max]: on a
 * scale up at most the selected policy's limit (Pods: the replicas at the
 * period's start + pods; Percent: ceil(start x (1 + percent/100))), where the
 * period's start is current minus the net change of the events within it; on a
 * scale down symmetrically (Percent: floor(start x (1 - percent/100))).
 */
uint32_t sim_hpa_bound(const sim_hpa_history *events, const sim_autoscale *a, uint32_t current,
                       uint32_t desired, fb_time_us now_us);

#endif /* SIM_HPA_H */
