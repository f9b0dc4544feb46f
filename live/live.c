/* live.c - one variant over HTTP: mocks for the providers without a target, the client, the run. */
#include "live/live.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "live/client.h"
#include "mockserver/mock.h"
#include "mockserver/scenario.h"

#define MOCK_BODY_MAX ((size_t)16 << 20) /* LIVE_PROMPT_TOKENS_MAX x 4 characters, and JSON */

typedef struct mocks {
    mock_server *srv[SIM_PROVIDERS_MAX];
    sim_fault faults[SIM_FAULTS_MAX];
} mocks;

static void mock_log(void *user, mock_log_level level, const char *msg) {
    const live_config *cfg = user;
    char line[600];
    if (cfg->log == NULL || level == MOCK_LOG_INFO) return;
    snprintf(line, sizeof line, "mock: %s", msg);
    cfg->log(cfg->log_user, line);
}

static void stop_mocks(mocks *m) {
    for (size_t p = 0; p < SIM_PROVIDERS_MAX; p++) {
        mock_server_destroy(m->srv[p]);
        m->srv[p] = NULL;
    }
}

/* An in-process mock of provider p, on 127.0.0.1 and a free port. */
static int start_mock(const sim_scenario *sc, uint32_t p, const live_config *cfg, mocks *m,
                      char *url, size_t urllen, sim_error *err) {
    mock_config mc;
    memset(&mc, 0, sizeof mc);
    char msg[256];
    int rc = mock_config_from_scenario(sc, sc->providers[p].name, &mc, m->faults, SIM_FAULTS_MAX,
                                       msg, sizeof msg);
    if (rc == FB_OK) {
        mc.time_scale = cfg->time_scale > 0 ? cfg->time_scale : 1.0;
        mc.completion_tokens_max = INT32_MAX; /* the request's limit decides */
        mc.max_connections = (cfg->transfers_max ? cfg->transfers_max : 4096) + 64;
        mc.max_body_bytes = MOCK_BODY_MAX;
        mc.log = mock_log;
        mc.log_user = (void *)cfg;
        rc = mock_server_create(&mc, &m->srv[p], msg, sizeof msg);
    }
    if (rc != FB_OK) {
        snprintf(err->msg, sizeof err->msg, "cannot start a mock for provider %s: %s",
                 sc->providers[p].name, msg);
        return rc;
    }
    snprintf(url, urllen, "http://127.0.0.1:%u", (unsigned)mock_server_port(m->srv[p]));
    return FB_OK;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int live_run(const sim_scenario *sc, uint32_t variant, const live_config *cfg,
             const sim_run_opts *opts, sim_summary *out, live_stats *stats, sim_error *err) {
    mocks m;
    memset(&m, 0, sizeof m);
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", sc->file);
    memset(out, 0, sizeof *out);
    live_stats st;
    memset(&st, 0, sizeof st);
    live_client *client = NULL;
    live_client_config cc = {cfg->time_scale, cfg->transfers_max, cfg->stop, cfg->wait_sigmask};
    char msg[256];
    int rc = live_client_create(&cc, &client, msg, sizeof msg);
    if (rc != FB_OK) {
        snprintf(err->msg, sizeof err->msg, "live: %s", msg);
        return rc;
    }
    for (uint32_t p = 0; p < sc->provider_count && rc == FB_OK; p++) {
        const live_target *t = &cfg->targets[p];
        char url[128];
        const char *base = t->url;
        if (base == NULL) {
            rc = start_mock(sc, p, cfg, &m, url, sizeof url, err);
            base = url;
        }
        if (rc != FB_OK) break;
        snprintf(st.urls[p], sizeof st.urls[p], "%s", base);
        rc = live_client_endpoint(
            client, (uint8_t)p, base, t->dialect, t->model ? t->model : sc->providers[p].name,
            t->url ? t->headers : NULL, t->url ? t->header_count : 0, msg, sizeof msg);
        if (rc != FB_OK)
            snprintf(err->msg, sizeof err->msg, "live: provider %s: %s", sc->providers[p].name,
                     msg);
    }
    if (rc == FB_OK) {
        /* the mocks' fault timelines and the simulated clock start together */
        for (size_t p = 0; p < SIM_PROVIDERS_MAX; p++)
            if (m.srv[p]) mock_server_reset(m.srv[p]);
        live_client_start(client);
        double t0 = wall_s();
        rc = sim_run_port(sc, variant, opts, live_client_port(client), out, err);
        st.wall_s = wall_s() - t0;
    }
    live_client_stats cs;
    live_client_stats_get(client, &cs);
    st.transfers = cs.transfers;
    st.cancelled = cs.cancelled;
    st.transport_errors = cs.transport_errors;
    st.in_flight_peak = cs.in_flight_peak;
    st.bytes_sent = cs.bytes_sent;
    st.bytes_received = cs.bytes_received;
    live_client_destroy(client);
    stop_mocks(&m);
    if (stats) *stats = st;
    return rc;
}
