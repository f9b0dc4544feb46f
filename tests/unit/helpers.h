/*
 * helpers.h - what several unit tests share: time units, scenarios from JSON
 * strings, empty summaries to fill by hand, a hash to compare runs. Linked
 * into every test binary, where it also makes CMOCKA_TEST_FILTER select tests
 * by name; include it after <cmocka.h>. The helpers fail the current test
 * (cmocka's fail_msg) instead of returning errors.
 */
#ifndef FUSEBOX_TESTS_HELPERS_H
#define FUSEBOX_TESTS_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/sim.h"

/* Times are data: tests write them as 30 * S or 250 * MS. */
#define S FB_US_PER_S
#define MS FB_US_PER_MS

/* Parse a scenario from a JSON string; on error the test fails naming the path. */
sim_scenario *th_load(const char *json);
/* The same with --set overrides (may be NULL) and a seed override (NULL: the file's). */
sim_scenario *th_load_with(const char *json, const char *const *sets, size_t set_count,
                           const uint64_t *seed);

/*
 * Run variant `v` of sc with invariant checks on, rows to on_row(ctx, row) (NULL: none);
 * the test fails unless the run completes. free() the summary.
 */
sim_summary *th_run(const sim_scenario *sc, uint32_t v, sim_row_fn on_row, void *ctx);
/* A metric of the table by name (NaN when n/a); the test fails on an unknown name. */
double th_metric(const sim_scenario *sc, const sim_summary *s, const char *name);

/* A zeroed summary (calloc) named `variant`, its histograms ready; free() it. */
sim_summary *th_summary(const char *variant);

/* Mix n bytes into an FNV-1a hash (start from any value, e.g. 0). */
void th_mix(uint64_t *hash, const void *p, size_t n);

#endif
