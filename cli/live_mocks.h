/*
 * live_mocks.h - 'fusebox live' runs with in-process mock providers.
 *
 * A provider given no --target is served by a mock (mockserver/) on
 * 127.0.0.1 and a free port, configured from the scenario as `fusebox mock
 * --scenario FILE --provider NAME` is, on the run's time scale. The mocks
 * live for one variant's run: started before live_run(), which gets their
 * URLs as targets and restarts their fault timelines through
 * live_config.on_start just before its clock starts; stopped after it.
 * Started with SIGINT/SIGTERM blocked, their threads keep them blocked.
 */
#ifndef CLI_LIVE_MOCKS_H
#define CLI_LIVE_MOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "live/live.h"
#include "sim/scenario.h"
#include "sim/sim.h"

/*
 * live_run() with a mock for every provider whose cfg->targets[p].url is
 * NULL; the mocks get none of the extra headers (API keys never go to a
 * mock). `log`: the mocks' warnings and errors go to stderr. A mock that
 * cannot start is a setup failure, as in live_run(): err filled, *out empty.
 * cfg->on_start is replaced by the mocks' reset.
 */
int cli_live_run(const sim_scenario *sc, uint32_t variant, const live_config *cfg, bool log,
                 const sim_run_opts *opts, sim_summary *out, live_stats *stats, sim_error *err);

#endif
