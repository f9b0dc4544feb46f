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
#include "scenario/scenario.h"
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
/* The rows of a run, up to TH_ROWS_MAX (ticks beyond are dropped). */
#define TH_ROWS_MAX 200
typedef struct th_rows {
    sim_row r[TH_ROWS_MAX];
    size_t n;
} th_rows;
/* A sim_row_fn keeping rows in a th_rows (ctx). */
void th_keep_row(void *ctx, const sim_row *row);
/* The rows in which requests ended, as "t_ms:count" pairs ("1000:1 1750:2"), into buf. */
void th_ends(const th_rows *rows, char *buf, size_t len);
/* Run variant 0 of sc, its rows into *rows, and check th_ends() against `want`. */
sim_summary *th_run_ends(const sim_scenario *sc, th_rows *rows, const char *want);

/* A metric of the table by name (NaN when n/a); the test fails on an unknown name. */
double th_metric(const sim_scenario *sc, const sim_summary *s, const char *name);

/* A zeroed summary (calloc) named `variant`, its histograms ready; free() it. */
sim_summary *th_summary(const char *variant);

/* Mix n bytes into an FNV-1a hash (start from any value, e.g. 0). */
void th_mix(uint64_t *hash, const void *p, size_t n);

/*
 * Run fn(ctx, out, outlen) in a child process whose address space is what it holds plus
 * 16 MiB (RLIMIT_AS), and bring back the text it wrote into out: for "out of memory is said,
 * not mistaken for bad input" tests. The test fails if the child could not be run or did not
 * end normally. Not under ASan (it reserves terabytes of address space): callers skip() there.
 */
void th_in_small_memory(void (*fn)(void *ctx, char *out, size_t outlen), void *ctx, char *out,
                        size_t outlen);

#endif
