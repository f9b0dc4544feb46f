/*
 * live_out.h - what 'fusebox live' writes and prints about its runs besides
 * the report files: live.json, the verdict of each live run (faithful or
 * inconclusive, live/fidelity.h) in report.json and on stdout, and the
 * mocks' counted messages.
 */
#ifndef CLI_LIVE_OUT_H
#define CLI_LIVE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/live_mocks.h"
#include "cli/outdir.h"
#include "live/fidelity.h"
#include "live/live.h"
#include "reports/report.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

/* The variants run (live, or simulated for --compare), in the scenario's order. */
typedef struct cli_live_runs {
    sim_summary *sums[SIM_VARIANTS_MAX];
    live_stats stats[SIM_VARIANTS_MAX];
    live_fidelity fid[SIM_VARIANTS_MAX]; /* live runs: judged */
    cli_mock_log mocks[SIM_VARIANTS_MAX];
    size_t n;
    bool interrupted;
} cli_live_runs;

/* The run of variant `name` in rs, or NULL. */
const sim_summary *cli_live_find(const cli_live_runs *rs, const char *name);

/*
 * Judge every live run of rs at time scale `scale` (live_fidelity_judge),
 * with the simulated runs of `sim` (may be NULL) for the work each variant
 * asks for; an inconclusive run without one is simulated here for that. A
 * run a signal cut short is judged on its timekeeping alone.
 */
void cli_live_judge(const sim_scenario *sc, double scale, cli_live_runs *rs,
                    const cli_live_runs *sim);
/* Any live run of rs inconclusive? */
bool cli_live_inconclusive(const cli_live_runs *rs);
/*
 * report.html's warning for an inconclusive live run (first line the title, then a line per
 * inconclusive variant with its reason), malloc'd; NULL when every run kept its timing (or
 * out of memory: the page then goes without, report.json still says it).
 */
char *cli_live_warning(const cli_live_runs *rs);

/*
 * report.json's members for a live run: "interrupted": false (an
 * interrupted run's report says true itself) and "live" (the verdict per
 * variant). extra[] points into text (freed by the caller with
 * cli_live_extras_free); returns how many.
 */
size_t cli_live_extras(const cli_live_runs *rs, rep_extra extra[2], char *text[2]);
void cli_live_extras_free(char *text[2]);

/*
 * live.json, staged in out: how each variant was run over the wire, and
 * whether it kept the timing. Returns CLI_OK, or CLI_BAD_INPUT with the
 * error printed naming DIR/live.json.
 */
int cli_live_json(const cli_outdir *out, const sim_scenario *sc, const cli_live_runs *rs,
                  const live_config *cfg);

/* One line per live run: the wire, the timekeeping. */
void cli_live_print(FILE *f, const cli_live_runs *rs, double scale);
/*
 * The verdict of the live runs (rep_verdict, as `fusebox run` prints it),
 * after the reason of each run that could not be driven faithfully
 * ("NAME: INCONCLUSIVE, REASON"): then the verdict reads as the run's, not
 * the scenario's.
 */
void cli_live_print_verdict(FILE *f, const sim_scenario *sc, const cli_live_runs *rs);
/* The mocks' messages of one run, one line per distinct message with its count. */
void cli_live_print_mocks(FILE *f, const sim_scenario *sc, const char *variant,
                          const cli_mock_log *log);

#endif
