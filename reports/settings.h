/*
 * settings.h - a variant's settings in effect, with the defaults of the
 * zero rule (core/fb.h) filled in by the core itself: what report.html's
 * Variants table shows instead of a variant's prose description.
 */
#ifndef REP_SETTINGS_H
#define REP_SETTINGS_H

#include <stdio.h>

#include "scenario/preset.h"
#include "scenario/scenario.h"

/*
 * In the library's words (its preset's vocabulary, scenario/preset.h), read from what ran:
 * layer l's breaker of provider p ("resilience4j CircuitBreaker: failureRateThreshold 50%,
 * ...") when breaker is true, else its retry ("resilience4j Retry: maxAttempts 3, ..."), into
 * buf. Returns the length, 0 when the layer is not a preset's or its vocabulary says nothing
 * of it (then buf is "").
 */
size_t rep_library_settings(char *buf, size_t len, const sim_layer *l, uint32_t p, bool breaker);
/* The value of vp as the library writes it ("50%", "60s", "00:00:30", "COUNT_BASED"), read from
   layer l (provider p's breaker); false when it does not apply (its modes, a NULL word). */
bool rep_library_value(char *buf, size_t len, const sim_layer *l, uint32_t p,
                       const sim_vocab_param *vp);
/* The value of vp as a number (a duration in microseconds, *duration then true; a rate as a
   fraction; no limit is INFINITY), read from layer l (provider p's breaker) as it ran; false when
   it does not apply or is a word (a mode, a backoff's name). check's LAYER.KEY reads it. */
bool rep_library_number(const sim_layer *l, uint32_t p, const sim_vocab_param *vp, double *x,
                        bool *duration);
/* The library's name of breaker state s in layer l, or NULL (no vocabulary, no such state). */
const char *rep_library_state(const sim_layer *l, fb_breaker_state s);
/* The variant's one layer with a breaker on provider p, when a preset with a vocabulary gave it;
   NULL when none does, or when two layers have one (an event does not say whose it is). */
const sim_layer *rep_library_layer(const sim_policy *pol, uint32_t p);

/* The variant's layers (one, "policy", for a plain variant) as HTML lists, escaped. */
void rep_settings_html(FILE *f, const sim_scenario *sc, const sim_policy *pol);

#endif /* REP_SETTINGS_H */
