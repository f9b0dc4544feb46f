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
#include "sim/scenario.h"

static const char usage_text[] =
    "usage: fusebox mock [options]\n"
    "\n"
    "Run an OpenAI- and Anthropic-compatible mock provider with scripted faults.\n"
    "Prints the URL on stdout once listening; runs until SIGINT or SIGTERM.\n"
    "\n"
    "  --faults FILE          fault timeline (JSON array, the scenario \"faults\" shape)\n"
    "  --scenario FILE --provider NAME   serve a scenario's provider: its faults, capacity,\n"
    "                         context window and (median) latency; other options override\n"
    "  --bind ADDR            listen address (default 127.0.0.1)\n"
    "  --port P               port (default 0 = any free port)\n"
    "  --time-scale X         timeline time = real time x X (default 1)\n"
    "  --max-connections N    concurrent connections (default 1024)\n"
    "  --max-body BYTES       larger request bodies get 413 (default 4194304)\n"
    "  --seed N               seed of the fault fractions and ids (default 1)\n"
    "  --threads N            HTTP polling threads (default 1)\n"
    "  --ttft DUR             time to first token, e.g. 200ms (default 0)\n"
    "  --per-token DUR        time per output token (default 0)\n"
    "  --completion-tokens N  cap on completion tokens (default 16)\n"
    "  --context-window N     prompts above N tokens get the context-length error\n"
    "  --concurrency N        capacity: requests in flight (default unlimited)\n"
    "  --rpm N                capacity: requests per minute\n"
    "  --tpm N                capacity: tokens per minute\n"
    "  --log-capacity N       attempt log entries kept (default 10000)\n"
    "  --quiet                no diagnostics on stderr\n"
    "\n"
    "Faults per request: header 'x-fusebox-fault: 429-retry-after-2' or model\n"
    "'fb-429-retry-after-2'. Control: /__fusebox/{faults,reset,log,stats}.\n"
    "See docs/mock.md.\n";

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

static const char *const value_options[] = {
    "--faults",
    "--scenario",
    "--provider",
    "--bind",
    "--port",
    "--time-scale",
    "--max-connections",
    "--max-body",
    "--seed",
    "--threads",
    "--ttft",
    "--per-token",
    "--completion-tokens",
    "--context-window",
    "--concurrency",
    "--rpm",
    "--tpm",
    "--log-capacity",
};

static bool known_option(const char *name) {
    for (size_t i = 0; i < sizeof value_options / sizeof value_options[0]; i++)
        if (strcmp(name, value_options[i]) == 0) return true;
    return false;
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

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            char *p = realloc(buf, cap + 1);
            if (p == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    bool err = ferror(f) != 0;
    fclose(f);
    if (err) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
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
    if (sim_scenario_load_import(scenario, NULL, 0, NULL, &cli_importer, &sc, &serr) != FB_OK) {
        char msg[1024];
        sim_error_format(&serr, msg, sizeof msg);
        fprintf(stderr, "fusebox mock: %s\n", msg);
        return CLI_BAD_INPUT;
    }
    char err[512];
    int rc = mock_config_from_scenario(sc, provider, cfg, faults, MOCK_FAULTS_MAX, err, sizeof err);
    sim_scenario_free(sc);
    if (rc != FB_OK) {
        fprintf(stderr, "fusebox mock: %s\n", err);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

static bool is_count_option(const char *name) {
    static const char *const counts[] = {
        "--completion-tokens", "--context-window", "--concurrency", "--rpm", "--tpm",
        "--log-capacity"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (strcmp(name, counts[i]) == 0) return true;
    return false;
}

/* The count options: completion tokens, context window, capacity, log capacity. */
static int set_count(const char *name, const char *val, mock_config *cfg) {
    uint64_t u = 0;
    if (!parse_u64(val, (uint64_t)1 << 40, &u)) return bad("%s: '%s' must be a count", name, val);
    int64_t v = (int64_t)u;
    if (strcmp(name, "--completion-tokens") == 0) {
        if (v == 0) return bad("%s: '%s' must be > 0", name, val);
        cfg->completion_tokens_max = v;
    } else if (strcmp(name, "--context-window") == 0) {
        cfg->context_window = v;
    } else if (strcmp(name, "--concurrency") == 0) {
        cfg->capacity.concurrency = v;
    } else if (strcmp(name, "--rpm") == 0) {
        cfg->capacity.requests_per_min = v;
    } else if (strcmp(name, "--tpm") == 0) {
        cfg->capacity.tokens_per_min = v;
    } else {
        if (v == 0 || v > 10000000) return bad("%s: '%s' must be in 1..10000000", name, val);
        cfg->log_capacity = (size_t)v;
    }
    return CLI_OK;
}

/* One option that takes a value, by its name. */
static int set_option(const char *name, const char *val, mock_config *cfg,
                      const char **faults_file) {
    uint64_t u = 0;
    fb_time_us us = 0;
    if (strcmp(name, "--faults") == 0) {
        *faults_file = val;
    } else if (strcmp(name, "--scenario") == 0 || strcmp(name, "--provider") == 0) {
        /* handled by apply_scenario */
    } else if (strcmp(name, "--bind") == 0) {
        cfg->bind_addr = val;
    } else if (strcmp(name, "--port") == 0) {
        if (!parse_u64(val, 65535, &u)) return bad("--port: '%s' is not a port%s", val, "");
        cfg->port = (uint16_t)u;
    } else if (strcmp(name, "--time-scale") == 0) {
        char *end;
        double x = strtod(val, &end);
        if (end == val || *end != '\0' || !(x >= 1e-3) || x > 1e6)
            return bad("--time-scale: '%s' must be a number from 0.001 to 1000000%s", val, "");
        cfg->time_scale = x;
    } else if (strcmp(name, "--max-connections") == 0) {
        if (!parse_u64(val, 1000000, &u) || u == 0)
            return bad("--max-connections: '%s' must be in 1..1000000%s", val, "");
        cfg->max_connections = (unsigned)u;
    } else if (strcmp(name, "--max-body") == 0) {
        if (!parse_u64(val, (uint64_t)1 << 40, &u) || u == 0)
            return bad("--max-body: '%s' must be a byte count > 0%s", val, "");
        cfg->max_body_bytes = (size_t)u;
    } else if (strcmp(name, "--seed") == 0) {
        if (!parse_u64(val, UINT64_MAX, &u)) return bad("--seed: '%s' is not a number%s", val, "");
        cfg->seed = u;
    } else if (strcmp(name, "--threads") == 0) {
        if (!parse_u64(val, 64, &u) || u == 0)
            return bad("--threads: '%s' must be in 1..64%s", val, "");
        cfg->threads = (unsigned)u;
    } else if (strcmp(name, "--ttft") == 0 || strcmp(name, "--per-token") == 0) {
        if (mock_duration_parse(val, &us) != FB_OK)
            return bad("%s: '%s' is not a duration (e.g. 250ms, 2s)", name, val);
        if (strcmp(name, "--ttft") == 0)
            cfg->ttft_us = us;
        else
            cfg->per_token_us = us;
    } else if (is_count_option(name)) {
        return set_count(name, val, cfg);
    } else {
        return bad("unknown option '%s'%s", name, "");
    }
    return CLI_OK;
}

/* Every option but --scenario/--provider. Returns CLI_OK, an exit code, or -1 after --help. */
static int parse_options(int argc, char **argv, mock_config *cfg, const char **faults_file) {
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            fputs(usage_text, stdout);
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
    char *text = read_file(path, &len);
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

int cmd_mock(int argc, char **argv) {
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
