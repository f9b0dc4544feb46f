/*
 * settings.h - a variant's settings in effect, with the defaults of the
 * zero rule (core/fb.h) filled in by the core itself: what report.html's
 * Variants table shows instead of a variant's prose description.
 */
#ifndef REP_SETTINGS_H
#define REP_SETTINGS_H

#include <stdio.h>

#include "scenario/scenario.h"

/* The variant's layers (one, "policy", for a plain variant) as HTML lists, escaped. */
void rep_settings_html(FILE *f, const sim_scenario *sc, const sim_policy *pol);

#endif /* REP_SETTINGS_H */
