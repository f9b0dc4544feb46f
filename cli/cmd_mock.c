/* cmd_mock.c - 'fusebox mock': run the mock LLM provider until SIGINT/SIGTERM. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "mockserver/mock.h"
#include "mockserver/scenario.h"
#include "scenario/scenario.h"

static const char usage_text[] =
    "usage: fusebox mock [options]\n"
    "\n"
    "Run a mock LLM provider with scripted faults: OpenAI (chat, responses, completions,\n"
    "embeddings, models), Anthropic (messages, count_tokens, models), Azure OpenAI\n"
    "(/openai/deployments/...) and Gemini (/v1beta/models/...).\n"
    "Prints the URL on stdout once listening; runs until SIGINT or SIGTERM.\n"
    "\n"
    "  --faults FILE          fault timeline (JSON array, the scenario \"faults\" shape; <= 1 "
    "MiB)\n"
    "  --scenario FILE --provider NAME   serve a scenario's provider: its faults, capacity and\n"
    "                         queue, context window and latency distributions; options override\n"
    "  --bind ADDR            listen address (default 127.0.0.1)\n"
    "  --control-token TOKEN  /__fusebox/ answers only requests with the header\n"
    "                         x-fusebox-control-token: TOKEN (remote use); without it, only\n"
    "                         requests to 127.0.0.1:PORT, localhost:PORT or [::1]:PORT\n"
    "  --port P               port (default 0 = any free port)\n"
    "  --time-scale X         timeline time = real time x X (default 1)\n"
    "  --seed N               seed of the fault fractions, latency draws and ids (default 1)\n"
    "  --threads N            HTTP polling threads (default 1)\n"
    "  --ttft DIST            time to first token: a duration (200ms) or a scenario\n"
    "                         distribution, e.g. "
    "'{\"lognormal\":{\"median\":\"200ms\",\"p99\":\"2s\"}}'\n"
    "  --error-latency DIST   how long an error answer takes (same forms; default 0)\n"
    "  --per-token DUR        time per output token (default 0)\n"
    "  --completion-tokens N  cap on completion tokens (default 16)\n"
    "  --context-window N     prompts above N tokens get the context-length error\n"
    "  --concurrency N        capacity: attempts served at once (default unlimited)\n"
    "  --queue N              at the concurrency limit, queue up to N attempts (FIFO) and\n"
    "                         answer --overload-status beyond; without it: 429\n"
    "  --overload-status S    the queue-full answer (default 503; Anthropic 529)\n"
    "  --rpm N                capacity: requests per minute\n"
    "  --tpm N                capacity: tokens per minute\n"
    "  --max-connections N    concurrent connections (default 1024)\n"
    "  --max-connections-per-ip N   connections from one address (default: no limit)\n"
    "  --max-body BYTES       larger request bodies get 413 (default 4194304)\n"
    "  --max-response BYTES   a larger answer is a 400 (default 67108864)\n"
    "  --max-memory BYTES     bodies held at once; beyond: 503/529 (default 536870912)\n"
    "  --header-timeout DUR   request line and headers must arrive within (default 10s)\n"
    "  --log-capacity N       attempt log entries kept (default 10000)\n"
    "  --upstream URL         proxy mode: forward every request to URL (a real provider or\n"
    "                         any compatible server) and apply the faults on top of its answers\n"
    "  --upstream-connect-timeout DUR   connecting to the upstream (default 10s; then 504)\n"
    "  --upstream-timeout DUR no byte either way with the upstream for this long: 504, or a\n"
    "                         cut answer (default 600s)\n"
    "  --upstream-max N       upstream requests at once; beyond: 503/529 (default 256)\n"
    "  --quiet                no diagnostics on stderr\n"
    "\n"
    "Faults per request: header 'x-fusebox-fault: 429-retry-after-2' or model\n"
    "'fb-429-retry-after-2' (header only with --upstream).\n"
    "Control: /__fusebox/{faults,reset,log,stats,verdict}; 'fusebox verdict LOG' judges a\n"
    "saved log the way /__fusebox/verdict judges the live one.\n"
    "See docs/mock.md.\n";

#define FAULTS_FILE_MAX ((size_t)1 << 20)

static void log_stderr(void *user, mock_log_level level, const char *msg) {
    static const char *const names[] = {"info", "warn", "error"};
    if (user != NULL) return; /* --quiet */
    fprintf(stderr, "fusebox mock: %s: %s\n", names[level], msg);
}

static int bad(const char *fmt, const char *a, const char *b) {
    fputs("fusebox mock: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputs("\n(see 'fusebox mock --help')\n", stderr);
    return CLI_BAD_INPUT;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9') return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max) return false;
    *out = v;
    return true;
}

/* The count options and their ranges. */
static const struct count_def {
    const char *name;
    uint64_t lo, hi;
} counts[] = {
    {"--port", 0, 65535},
    {"--max-connections", 1, 1000000},
    {"--max-connections-per-ip", 0, 1000000},
    {"--max-body", 1, (uint64_t)1 << 40},
    {"--max-response", 1024, (uint64_t)1 << 40},
    {"--max-memory", (uint64_t)1 << 20, (uint64_t)1 << 44},
    {"--seed", 0, UINT64_MAX},
    {"--threads", 1, 64},
    {"--completion-tokens", 1, (uint64_t)1 << 40},
    {"--context-window", 0, (uint64_t)1 << 40},
    {"--concurrency", 0, (uint64_t)1 << 40},
    {"--queue", 0, (uint64_t)1 << 40},
    {"--overload-status", 400, 599},
    {"--rpm", 0, (uint64_t)1 << 40},
    {"--tpm", 0, (uint64_t)1 << 40},
    {"--log-capacity", 1, 10000000},
    {"--upstream-max", 1, 100000},
};

/* The count's field; the caller checked the range. */
static void assign_count(mock_config *c, const char *name, uint64_t v) {
    int64_t s = (int64_t)v;
    if (strcmp(name, "--port") == 0)
        c->port = (uint16_t)v;
    else if (strcmp(name, "--max-connections") == 0)
        c->max_connections = (unsigned)v;
    else if (strcmp(name, "--max-connections-per-ip") == 0)
        c->max_connections_per_ip = (unsigned)v;
    else if (strcmp(name, "--max-body") == 0)
        c->max_body_bytes = (size_t)v;
    else if (strcmp(name, "--max-response") == 0)
        c->max_response_bytes = (size_t)v;
    else if (strcmp(name, "--max-memory") == 0)
        c->max_memory_bytes = (size_t)v;
    else if (strcmp(name, "--seed") == 0)
        c->seed = v;
    else if (strcmp(name, "--threads") == 0)
        c->threads = (unsigned)v;
    else if (strcmp(name, "--completion-tokens") == 0)
        c->completion_tokens_max = s;
    else if (strcmp(name, "--context-window") == 0)
        c->context_window = s;
    else if (strcmp(name, "--concurrency") == 0)
        c->capacity.concurrency = s;
    else if (strcmp(name, "--rpm") == 0)
        c->capacity.requests_per_min = s;
    else if (strcmp(name, "--tpm") == 0)
        c->capacity.tokens_per_min = s;
    else if (strcmp(name, "--log-capacity") == 0)
        c->log_capacity = (size_t)v;
    else if (strcmp(name, "--upstream-max") == 0)
        c->upstream_max = (unsigned)v;
    else if (strcmp(name, "--overload-status") == 0)
        c->capacity.overload_status = (int)v;
    else { /* --queue */
        c->capacity.queue_at_limit = true;
        c->capacity.queue = s;
    }
}

static const struct count_def *count_of(const char *name) {
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (strcmp(name, counts[i].name) == 0) return &counts[i];
    return NULL;
}

static int set_count(const struct count_def *d, const char *val, mock_config *cfg) {
    uint64_t v = 0;
    if (!parse_u64(val, d->hi, &v) || v < d->lo) {
        char range[64];
        snprintf(range, sizeof range, "%llu..%llu", (unsigned long long)d->lo,
                 (unsigned long long)d->hi);
        fprintf(stderr, "fusebox mock: %s: '%s' must be a count in %s\n", d->name, val, range);
        fputs("(see 'fusebox mock --help')\n", stderr);
        return CLI_BAD_INPUT;
    }
    assign_count(cfg, d->name, v);
    return CLI_OK;
}

/* --ttft and --error-latency: a duration, or a scenario distribution in JSON. */
static int set_latency(const char *name, const char *val, mock_config *cfg) {
    bool ttft = strcmp(name, "--ttft") == 0;
    sim_dist d = {.kind = SIM_DIST_CONSTANT};
    fb_time_us us = 0;
    if (val[0] != '{') {
        if (mock_duration_parse(val, &us) != FB_OK)
            return bad("%s: '%s' is not a duration (e.g. 250ms, 2s) or a distribution", name, val);
    } else {
        sim_error err;
        if (scn_dist_parse(val, strlen(val), name, true, &d, &err) != FB_OK) {
            char msg[1024];
            scn_error_format(&err, msg, sizeof msg);
            return bad("%s%s", msg, "");
        }
    }
    if (ttft) {
        cfg->ttft_us = us;
        cfg->has_ttft_dist = val[0] == '{';
        cfg->ttft_dist = d;
    } else {
        cfg->error_latency_us = us;
        cfg->has_error_latency_dist = val[0] == '{';
        cfg->error_latency_dist = d;
    }
    return CLI_OK;
}

/* One option that takes a value, by its name. */
static int set_option(const char *name, const char *val, mock_config *cfg,
                      const char **faults_file) {
    const struct count_def *count = count_of(name);
    fb_time_us us = 0;
    if (count != NULL) return set_count(count, val, cfg);
    if (strcmp(name, "--faults") == 0) {
        *faults_file = val;
    } else if (strcmp(name, "--scenario") == 0 || strcmp(name, "--provider") == 0) {
        /* handled by apply_scenario */
    } else if (strcmp(name, "--bind") == 0) {
        cfg->bind_addr = val;
    } else if (strcmp(name, "--control-token") == 0) {
        if (val[0] == '\0' || strlen(val) > MOCK_CONTROL_TOKEN_MAX ||
            strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=") !=
                strlen(val))
            return bad("--control-token: must be 1 to 255 letters, digits or -._~+/=%s%s", "", "");
        cfg->control_token = val;
    } else if (strcmp(name, "--upstream") == 0) {
        if (strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0)
            return bad("--upstream: '%s' must be an http:// or https:// URL%s", val, "");
        cfg->upstream_url = val;
    } else if (strcmp(name, "--upstream-connect-timeout") == 0 ||
               strcmp(name, "--upstream-timeout") == 0) {
        if (mock_duration_parse(val, &us) != FB_OK || us <= 0)
            return bad("%s: '%s' is not a duration above 0 (e.g. 250ms, 2s)", name, val);
        if (strcmp(name, "--upstream-timeout") == 0)
            cfg->upstream_idle_timeout_us = us;
        else
            cfg->upstream_connect_timeout_us = us;
    } else if (strcmp(name, "--time-scale") == 0) {
        char *end;
        double x = strtod(val, &end);
        if (end == val || *end != '\0' || !(x >= 1e-3) || x > 1e6)
            return bad("--time-scale: '%s' must be a number from 0.001 to 1000000%s", val, "");
        cfg->time_scale = x;
    } else if (strcmp(name, "--ttft") == 0 || strcmp(name, "--error-latency") == 0) {
        return set_latency(name, val, cfg);
    } else if (strcmp(name, "--per-token") == 0 || strcmp(name, "--header-timeout") == 0) {
        if (mock_duration_parse(val, &us) != FB_OK)
            return bad("%s: '%s' is not a duration (e.g. 250ms, 2s)", name, val);
        if (strcmp(name, "--per-token") == 0)
            cfg->per_token_us = us;
        else
            cfg->header_timeout_us = us > 0 ? us : 1;
    } else {
        return bad("unknown option '%s'%s", name, "");
    }
    return CLI_OK;
}

static bool known_option(const char *name) {
    static const char *const others[] = {
        "--faults",          "--scenario",       "--provider", "--bind",
        "--control-token",   "--time-scale",     "--ttft",     "--error-latency",
        "--per-token",       "--header-timeout", "--upstream", "--upstream-connect-timeout",
        "--upstream-timeout"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (strcmp(name, others[i]) == 0) return true;
    return count_of(name) != NULL;
}

/* Let the process hold as many sockets as connections were asked for. */
static void raise_fd_limit(unsigned connections) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    rlim_t want = (rlim_t)connections + 64;
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* A scenario provider first, so that the other options override it. */
static int apply_scenario(int argc, char **argv, mock_config *cfg, sim_fault *faults) {
    const char *scenario = NULL, *provider = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if ((strcmp(argv[i], "--scenario") == 0 || strcmp(argv[i], "--provider") == 0) &&
            i + 1 < argc)
            v = argv[i + 1];
        else if (strncmp(argv[i], "--scenario=", 11) == 0 ||
                 strncmp(argv[i], "--provider=", 11) == 0)
            v = argv[i] + 11;
        if (v == NULL) continue;
        if (strncmp(argv[i], "--scenario", 10) == 0)
            scenario = v;
        else
            provider = v;
    }
    if (scenario == NULL && provider == NULL) return CLI_OK;
    if (scenario == NULL || provider == NULL)
        return bad("--scenario and --provider go together%s%s", "", "");
    sim_scenario *sc = NULL;
    sim_error serr;
    memset(&serr, 0, sizeof serr);
    if (scn_load_import(scenario, NULL, 0, NULL, &cli_importer, &sc, &serr) != FB_OK) {
        char msg[1024];
        scn_error_format(&serr, msg, sizeof msg);
        fprintf(stderr, "fusebox mock: %s\n", msg);
        return CLI_BAD_INPUT;
    }
    char err[512];
    int rc = mock_config_from_scenario(sc, provider, cfg, faults, MOCK_FAULTS_MAX, err, sizeof err);
    scn_free(sc);
    if (rc != FB_OK) {
        fprintf(stderr, "fusebox mock: %s\n", err);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* Every option but --scenario/--provider. Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_options(int argc, char **argv, mock_config *cfg, const char **faults_file) {
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            cli_help_puts(usage_text, stdout);
            return -1;
        }
        if (strcmp(opt, "--quiet") == 0) {
            cfg->log_user = cfg; /* non-NULL: silence */
            continue;
        }
        if (strncmp(opt, "--", 2) != 0) return bad("unexpected argument '%s'%s", opt, "");
        /* Every other option takes a value: "--opt VALUE" or "--opt=VALUE". */
        char name[64];
        const char *val;
        const char *eq = strchr(opt, '=');
        if (eq != NULL) {
            size_t n = (size_t)(eq - opt);
            if (n >= sizeof name) return bad("unknown option '%s'%s", opt, "");
            memcpy(name, opt, n);
            name[n] = '\0';
            val = eq + 1;
        } else {
            if (strlen(opt) >= sizeof name) return bad("unknown option '%s'%s", opt, "");
            strcpy(name, opt);
            if (!known_option(name)) return bad("unknown option '%s'%s", opt, "");
            if (i + 1 >= argc) return bad("option '%s' needs a value%s", opt, "");
            val = argv[++i];
        }
        int rc = set_option(name, val, cfg, faults_file);
        if (rc != CLI_OK) return rc;
    }
    return CLI_OK;
}

/* --faults FILE: the timeline, in place of a scenario's. */
static int load_faults(const char *path, mock_config *cfg, sim_fault *faults) {
    size_t len = 0;
    char *text = cli_read_file(path, FAULTS_FILE_MAX, &len);
    if (text == NULL && errno == EFBIG) {
        fprintf(stderr, "fusebox mock: %s: larger than %zu MiB\n", path, FAULTS_FILE_MAX >> 20);
        return CLI_BAD_INPUT;
    }
    if (text == NULL) {
        fprintf(stderr, "fusebox mock: %s: %s\n", path, strerror(errno));
        return CLI_BAD_INPUT;
    }
    mock_parse_error perr = {{0}, {0}};
    int rc = mock_faults_parse(text, len, faults, MOCK_FAULTS_MAX, &cfg->n_faults, &perr);
    free(text);
    if (rc != FB_OK) {
        fprintf(stderr, "fusebox mock: %s: %s: %s\n", path, perr.path, perr.msg);
        return CLI_BAD_INPUT;
    }
    cfg->faults = faults;
    return CLI_OK;
}

/* Listen, print the URL and serve until SIGINT or SIGTERM. */
static int serve(const mock_config *cfg) {
    /* Block the stop signals in every thread; this one waits for them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit(cfg->max_connections ? cfg->max_connections : 1024);

    mock_server *srv = NULL;
    char err[256];
    int rc = mock_server_create(cfg, &srv, err, sizeof err);
    if (rc != FB_OK) {
        fprintf(stderr, "fusebox mock: %s\n", err);
        return CLI_BAD_INPUT;
    }
    const char *host = cfg->bind_addr ? cfg->bind_addr : "127.0.0.1";
    bool v6 = strchr(host, ':') != NULL;
    printf("http://%s%s%s:%u\n", v6 ? "[" : "", host, v6 ? "]" : "",
           (unsigned)mock_server_port(srv));
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    mock_server_destroy(srv);
    if (cfg->log_user == NULL) fprintf(stderr, "fusebox mock: stopped (signal %d)\n", sig);
    return CLI_OK;
}

int cli_cmd_mock(int argc, char **argv) {
    mock_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = 1;
    cfg.log = log_stderr;
    const char *faults_file = NULL;
    static sim_fault faults[MOCK_FAULTS_MAX];
    int rc = apply_scenario(argc, argv, &cfg, faults);
    if (rc == CLI_OK) rc = parse_options(argc, argv, &cfg, &faults_file);
    if (rc == CLI_OK && faults_file != NULL) rc = load_faults(faults_file, &cfg, faults);
    if (rc != CLI_OK) return rc < 0 ? CLI_OK : rc;
    return serve(&cfg);
}
