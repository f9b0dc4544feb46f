/* live.c - one variant over HTTP: the client, an endpoint per provider's target, the run. */
#include "live/live.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "live/client.h"

/* Point the client at every provider's target URL, and check that each answers. */
static int set_endpoints(live_client *client, const sim_scenario *sc, const live_config *cfg,
                         live_stats *st, sim_error *err) {
    char msg[256];
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        const live_target *t = &cfg->targets[p];
        const char *name = sc->providers[p].name;
        if (t->url == NULL) {
            snprintf(err->msg, sizeof err->msg, "live: provider %s: no target URL", name);
            return FB_EINVAL;
        }
        snprintf(st->urls[p], sizeof st->urls[p], "%s", t->url);
        int rc =
            live_client_endpoint(client, (uint8_t)p, t->url, t->dialect, t->model ? t->model : name,
                                 t->headers, t->header_count, msg, sizeof msg);
        if (rc == FB_OK)
            rc = live_client_probe(client, (uint8_t)p, LIVE_PROBE_TIMEOUT_MS, msg, sizeof msg);
        if (rc != FB_OK) {
            snprintf(err->msg, sizeof err->msg, "live: provider %s: %s", name, msg);
            return rc;
        }
    }
    return FB_OK;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int live_run(const sim_scenario *sc, uint32_t variant, const live_config *cfg,
             const sim_run_opts *opts, sim_summary *out, live_stats *stats, sim_error *err) {
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", sc->file);
    memset(out, 0, sizeof *out);
    live_stats st;
    memset(&st, 0, sizeof st);
    live_client *client = NULL;
    live_client_config cc = {cfg->time_scale, cfg->transfers_max, cfg->stop, cfg->wait_sigmask,
                             cfg->otlp};
    char msg[256];
    int rc = live_client_create(&cc, &client, msg, sizeof msg);
    if (rc != FB_OK) {
        snprintf(err->msg, sizeof err->msg, "live: %s", msg);
        return rc;
    }
    rc = set_endpoints(client, sc, cfg, &st, err);
    if (rc == FB_OK) {
        /* the caller's timelines (its mocks' faults) and the simulated clock start together */
        if (cfg->on_start) cfg->on_start(cfg->on_start_user);
        live_client_start(client);
        live_otlp_provider prov[SIM_PROVIDERS_MAX];
        for (uint32_t p = 0; p < sc->provider_count; p++) {
            const live_target *t = &cfg->targets[p];
            prov[p] = (live_otlp_provider){t->dialect, t->model ? t->model : sc->providers[p].name,
                                           live_client_url(client, (uint8_t)p)};
        }
        if (cfg->otlp)
            live_otlp_begin(cfg->otlp, sc, variant, cfg->time_scale, live_client_t0_unix_ns(client),
                            prov);
        double t0 = wall_s();
        rc = sim_run_port(sc, variant, opts, live_client_port(client), out, err);
        st.wall_s = wall_s() - t0;
        fb_time_us now = live_client_now(client);
        live_client_stats_get(client, &st.wire);
        live_client_destroy(client); /* the attempts in flight: traced as unfinished */
        client = NULL;
        if (cfg->otlp) live_otlp_end(cfg->otlp, now);
    }
    if (client != NULL) live_client_stats_get(client, &st.wire);
    live_client_destroy(client);
    if (stats) *stats = st;
    return rc;
}
