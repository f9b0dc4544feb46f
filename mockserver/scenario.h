/*
 * scenario.h - a scenario's provider as a mock configuration.
 *
 * `fusebox mock --scenario FILE --provider NAME` serves one provider of a
 * scenario: its fault timeline, capacity (concurrency, RPM, TPM), context
 * window and latency (time to first token, per token, error answers). The
 * mock's latency is a constant, so a latency distribution contributes its
 * median.
 */
#ifndef MOCK_SCENARIO_H
#define MOCK_SCENARIO_H

#include <stddef.h>

#include "mockserver/fault.h"
#include "mockserver/mock.h"
#include "sim/scenario.h"

/*
 * Fill cfg (whose other fields are kept) and faults[cap] from the named
 * provider. Returns FB_OK, or FB_ENOTFOUND / FB_ECAP with a message in err.
 */
int mock_config_from_scenario(const sim_scenario *sc, const char *provider, mock_config *cfg,
                              sim_fault *faults, size_t cap, char *err, size_t errlen);

#endif /* MOCK_SCENARIO_H */
