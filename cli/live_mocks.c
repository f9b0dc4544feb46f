/* live_mocks.c - a mock per provider without a target, around one live run. */
#include "cli/live_mocks.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mockserver/mock.h"
#include "mockserver/scenario.h"

#define MOCK_BODY_MAX ((size_t)16 << 20) /* LIVE_PROMPT_TOKENS_MAX x 4 characters, and JSON */

/* A mock's log callback's context: which provider, where to count. */
typedef struct log_ctx {
    cli_mock_log *log;
    uint8_t provider;
} log_ctx;

typedef struct mocks {
    mock_server *srv[SIM_PROVIDERS_MAX]; /* by provider index; NULL = a target of its own */
    char urls[SIM_PROVIDERS_MAX][64];
    log_ctx logs[SIM_PROVIDERS_MAX];
} mocks;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* From the mocks' threads: count the message with its like. */
static void mock_log(void *user, mock_log_level level, const char *msg) {
    log_ctx *lc = user;
    if (level == MOCK_LOG_INFO) return;
    cli_mock_log *l = lc->log;
    pthread_mutex_lock(&log_lock);
    size_t i = 0;
    while (i < l->n && (l->notes[i].provider != lc->provider || l->notes[i].level != level ||
                        strncmp(l->notes[i].msg, msg, sizeof l->notes[i].msg - 1) != 0))
        i++;
    if (i == l->n && l->n < CLI_MOCK_NOTES_MAX) {
        cli_mock_note *n = &l->notes[l->n++];
        n->provider = lc->provider;
        n->level = level;
        snprintf(n->msg, sizeof n->msg, "%s", msg);
    }
    if (i < l->n)
        l->notes[i].count++;
    else
        l->other++;
    pthread_mutex_unlock(&log_lock);
}

/* An in-process mock of provider p, on 127.0.0.1 and a free port. */
static int start_mock(mocks *m, const sim_scenario *sc, uint32_t p, const live_config *cfg,
                      cli_mock_log *log, sim_error *err) {
    mock_config mc;
    memset(&mc, 0, sizeof mc);
    sim_fault faults[SIM_FAULTS_MAX];
    char msg[256];
    int rc = mock_config_from_scenario(sc, sc->providers[p].name, &mc, faults, SIM_FAULTS_MAX, msg,
                                       sizeof msg);
    if (rc == FB_OK) {
        mc.time_scale = cfg->time_scale > 0 ? cfg->time_scale : 1.0;
        mc.completion_tokens_max = INT32_MAX; /* the request's limit decides */
        mc.max_connections = (cfg->transfers_max ? cfg->transfers_max : 4096) + 64;
        mc.max_body_bytes = MOCK_BODY_MAX;
        m->logs[p] = (log_ctx){log, (uint8_t)p};
        mc.log = log ? mock_log : NULL;
        mc.log_user = &m->logs[p];
        rc = mock_server_create(&mc, &m->srv[p], msg, sizeof msg);
    }
    if (rc != FB_OK) {
        memset(err, 0, sizeof *err);
        snprintf(err->file, sizeof err->file, "%s", sc->file);
        snprintf(err->msg, sizeof err->msg, "cannot start a mock for provider %s: %s",
                 sc->providers[p].name, msg);
        return rc;
    }
    snprintf(m->urls[p], sizeof m->urls[p], "http://127.0.0.1:%u",
             (unsigned)mock_server_port(m->srv[p]));
    return FB_OK;
}

static void stop_mocks(mocks *m) {
    for (size_t p = 0; p < SIM_PROVIDERS_MAX; p++) {
        mock_server_destroy(m->srv[p]);
        m->srv[p] = NULL;
    }
}

/* Start the mocks and point their providers' targets at them. */
static int start_mocks(mocks *m, const sim_scenario *sc, live_config *cfg, cli_mock_log *log,
                       sim_error *err) {
    for (uint32_t p = 0; p < sc->provider_count; p++) {
        live_target *t = &cfg->targets[p];
        if (t->url != NULL) continue;
        int rc = start_mock(m, sc, p, cfg, log, err);
        if (rc != FB_OK) return rc;
        t->url = m->urls[p];
        t->headers = NULL;
        t->header_count = 0;
    }
    return FB_OK;
}

/* live_config.on_start: the mocks' fault timelines start with the run's clock. */
static void reset_mocks(void *user) {
    mocks *m = user;
    for (size_t p = 0; p < SIM_PROVIDERS_MAX; p++)
        if (m->srv[p]) mock_server_reset(m->srv[p]);
}

int cli_live_run(const sim_scenario *sc, uint32_t variant, const live_config *cfg,
                 cli_mock_log *log, const sim_run_opts *opts, sim_summary *out, live_stats *stats,
                 sim_error *err) {
    mocks m;
    memset(&m, 0, sizeof m);
    live_config run = *cfg;
    run.on_start = reset_mocks;
    run.on_start_user = &m;
    int rc = start_mocks(&m, sc, &run, log, err);
    if (rc == FB_OK)
        rc = live_run(sc, variant, &run, opts, out, stats, err);
    else
        memset(out, 0, sizeof *out);
    stop_mocks(&m);
    return rc;
}
