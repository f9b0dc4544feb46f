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
#include "mockserver/mock.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

#define CLI_MOCK_NOTES_MAX 16

/*
 * What the mocks said, counted rather than printed: a live run cancels
 * transfers by the thousand (timeouts, deadlines), and each closed
 * connection is a warning from libmicrohttpd ("Connection was closed by
 * remote side with incomplete request").
 */
typedef struct cli_mock_note {
    uint8_t provider;
    mock_log_level level;
    char msg[200];
    uint64_t count;
} cli_mock_note;

typedef struct cli_mock_log {
    cli_mock_note notes[CLI_MOCK_NOTES_MAX]; /* distinct messages, in order of first sight */
    size_t n;
    uint64_t other; /* messages that found the table full */
} cli_mock_log;

/*
 * live_run() with a mock for every provider whose cfg->targets[p].url is
 * NULL; the mocks get none of the extra headers (API keys never go to a
 * mock). `log` (may be NULL) counts the mocks' warnings and errors. A mock
 * that cannot start is a setup failure, as in live_run(): err filled, *out
 * empty. cfg->on_start is replaced by the mocks' reset.
 */
int cli_live_run(const sim_scenario *sc, uint32_t variant, const live_config *cfg,
                 cli_mock_log *log, const sim_run_opts *opts, sim_summary *out, live_stats *stats,
                 sim_error *err);

#endif
