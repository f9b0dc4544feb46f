/*
 * client.h - the live driver's HTTP side, as a simulator port (sim/sim.h).
 *
 * One thread drives every transfer through libcurl's multi interface in
 * its socket form: curl tells which sockets to watch (an epoll set) and
 * when to call it back (a timer), so thousands of concurrent transfers cost
 * one epoll_wait, not a poll over all of them. A timerfd in the same set
 * wakes the thread at the simulator's next event with sub-millisecond
 * precision.
 *
 * Time: simulated time = real time since live_client_start() x time_scale.
 * The port converts the simulator's deadlines to real ones and measures in
 * simulated time, so every wait is divided by the scale and every latency
 * multiplied back. The attempt timeout and the request deadline are the
 * simulator's timers, which cancel transfers through the port.
 *
 * An answer is read as the official SDKs read it: status, the Retry-After
 * family (retry-after-ms, retry-after in seconds or as an HTTP date),
 * x-should-retry, the error body's type/code/message, and for a streamed
 * 200 the events (wire.h): a failure after the first content event is
 * after_first_token; a stream that ends without its terminator, or with a
 * malformed event, is a broken reply (FB_TRANSPORT_OTHER).
 */
#ifndef LIVE_CLIENT_H
#define LIVE_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "live/wire.h"
#include "sim/sim.h"

typedef struct live_client live_client;

typedef struct live_client_config {
    double time_scale;                 /* 0 = 1 */
    uint32_t transfers_max;            /* concurrent transfers; 0 = 4096 */
    const volatile sig_atomic_t *stop; /* non-zero: the run stops ("interrupted"); may be NULL */
    const sigset_t *wait_sigmask;      /* signal mask while waiting (epoll_pwait); NULL = as is */
} live_client_config;

typedef struct live_client_stats {
    uint64_t transfers; /* started */
    uint64_t cancelled; /* given up by the simulator */
    uint64_t transport_errors;
    uint32_t in_flight_peak; /* concurrent transfers */
    uint64_t bytes_sent, bytes_received;
} live_client_stats;

int live_client_create(const live_client_config *cfg, live_client **out, char *err, size_t errlen);
/*
 * Where provider `provider` is: a base URL ("http://host:port", with or
 * without a trailing "/v1"), the dialect, the model name to send and extra
 * request headers ("Name: value"; copied).
 */
int live_client_endpoint(live_client *c, uint8_t provider, const char *base_url, live_dialect d,
                         const char *model, const char *const *headers, size_t header_count,
                         char *err, size_t errlen);
/* Time zero of the simulated clock: now. */
void live_client_start(live_client *c);
const sim_port *live_client_port(live_client *c);
void live_client_stats_get(const live_client *c, live_client_stats *out);
/* Abort what is still in flight and free everything. NULL is fine. */
void live_client_destroy(live_client *c);

#endif /* LIVE_CLIENT_H */
