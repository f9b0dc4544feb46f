/*
 * scenario.h - a scenario's provider as a mock configuration.
 *
 * `fusebox mock --scenario FILE --provider NAME` serves one provider of a
 * scenario: its fault timeline, capacity (concurrency with its queue and
 * overload status, RPM, TPM, Retry-After on capacity 429s, keeps_working),
 * context window and latency (every answer draws its time to first token and
 * error latency from the scenario's distributions; per token is constant).
 */
#ifndef MOCK_SCENARIO_H
#define MOCK_SCENARIO_H

#include <stddef.h>

#include "mockserver/fault.h"
#include "mockserver/mock.h"
#include "scenario/scenario.h"

/*
 * Fill cfg (whose other fields are kept) and faults[cap] from the named
 * provider. Returns FB_OK, or FB_ENOTFOUND / FB_ECAP with a message in err.
 */
int mock_config_from_scenario(const sim_scenario *sc, const char *provider, mock_config *cfg,
                              sim_fault *faults, size_t cap, char *err, size_t errlen);

#endif /* MOCK_SCENARIO_H */
