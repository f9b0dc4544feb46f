/*
 * fitint.h - what the files of the fitting share (private to import/): one function per
 * step, in the order incident.c calls them, each filling its part of the incident.
 *
 *   incident.c  the slice of time, the windows, the order of the steps, the notes
 *   latency.c   latency per provider: first token, per token, errors, slow periods
 *   faults.c    the fault timeline per provider: segments of windows, edges, fractions
 *   classes.c   arrivals and tokens per class
 *   infer.c     the policy as it was, and its evidence
 *   fidelity.c  what the logs measured, and the bands the simulation must meet
 *   emit.c      the scenario as JSON
 */
#ifndef IMP_FITINT_H
#define IMP_FITINT_H

#include "import/incident.h"

#include <stdlib.h>

/* malloc and calloc for the fits: a failure sets *oom (the incident's or its provider's), which
   imp_incident_build reports as an error, where the fit was once left out without a word. */
static inline void *fit_malloc(bool *oom, size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) *oom = true;
    return p;
}

static inline void *fit_calloc(bool *oom, size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) *oom = true;
    return p;
}

/* The requests of the slice: for (FOR_SLICE(inc, r)) { ... inc->log->req[r] ... }. */
#define FOR_SLICE(inc, r)                                                                          \
    size_t r = (inc)->r0;                                                                          \
    r < (inc)->r1;                                                                                 \
    r++

/* An attempt's start from the origin. */
static inline fb_time_us fit_t(const imp_incident *inc, const imp_attempt *a) {
    /* an attempt before the slice's start (its span's clock ahead of its request's) at the start */
    return a->start_us > inc->origin_us ? a->start_us - inc->origin_us : 0;
}

/* The index of an attempt's error kind in pf->kinds; IMP_FIT_ANSWER for a success,
   IMP_FIT_LEFT_OUT for a cancelled attempt that tells nothing of its provider's fate. A
   cancelled attempt of an unanswered request that waited longer than any answer of its
   provider is a hang (imp__fit_hang): the kind of a timeout. */
#define IMP_FIT_ANSWER (-1)
#define IMP_FIT_LEFT_OUT (-2)
int imp__fit_kind(const imp_log *log, const imp_pfit *pf, const imp_attempt *a);
bool imp__fit_hang(const imp_log *log, const imp_pfit *pf, const imp_attempt *a);

void imp__fit_latency(imp_incident *inc, uint32_t p);
void imp__fit_faults(imp_incident *inc, uint32_t p);
int imp__fit_classes(imp_incident *inc, imp_error *err);
void imp__fit_policy(imp_incident *inc);
void imp__fit_checks(imp_incident *inc);
/* observed.c: the log's own figures, and per fault of doc's providers, as "observed" */
struct cJSON;
struct cJSON *imp__observed_json(const imp_incident *inc, const struct cJSON *doc);

#endif /* IMP_FITINT_H */
