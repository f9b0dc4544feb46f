/* main.c - the fusebox command: subcommands parse arguments and call the modules. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "scenario/scenario.h"
#include "core/version.h"
#include "util/mem.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *synopsis;
    bool many_runs; /* simulates many runs in one process: util_mem_keep_freed */
};

static const struct command commands[] = {
    {"run", cli_cmd_run,
     "run SCENARIO [-o DIR] [--seed N] [--set key=value]...  simulate a scenario", false},
    {"check", cli_cmd_check,
     "check FILE|DIR... [--junit FILE] [--baseline DIR] evaluate expectations", true},
    {"validate", cli_cmd_validate,
     "validate FILE|DIR... [--set key=value]...      check scenario files", false},
    {"compare", cli_cmd_compare,
     "compare A B [-o DIR] [--tolerance M=X]         two runs or sweeps side by side", false},
    {"sweep", cli_cmd_sweep, "sweep SCENARIO --grid key=v1,v2 [...]          tune over a grid",
     true},
    {"tune", cli_cmd_tune,
     "tune SCENARIO|DIR... --knob key=v1,v2 [...]    one setting for many scenarios", true},
    {"merge", cli_cmd_merge, "merge PARTIAL... -o DIR                         combine sweep shards",
     false},
    {"mock", cli_cmd_mock, "mock [--scenario FILE] [--port P] [...]        mock LLM provider",
     false},
    {"live", cli_cmd_live, "live SCENARIO [--target URL] [...]             scenario over real HTTP",
     false},
    {"presets", cli_cmd_presets, "presets [NAME] [--markdown]                    library presets",
     false},
    {"import", cli_cmd_import,
     "import FILE [-o SCENARIO] [...]                logs of a bad hour as a scenario", false},
    {"import-policy", cli_cmd_import_policy,
     "import-policy KIND FILE                        a library's config as layers", false},
    {"export-policy", cli_cmd_export_policy,
     "export-policy KIND FILE [--layer V.L]          a layer as the library's config", false},
    {"verdict", cli_cmd_verdict,
     "verdict LOG [--json FILE] [--junit FILE]       judge a client from a mock log", false},
};

static void usage(FILE *out) {
    fputs("usage: fusebox <command> [options]\n\ncommands:\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %s\n", commands[i].synopsis);
    fputs("  version                                        print the version\n"
          "\n'fusebox <command> --help' or 'fusebox help <command>' describes a command.\n"
          "Exit codes: 0 ok, 1 expectations failed, 2 bad input or usage, 3 inconclusive\n"
          "(live, verdict).\n",
          out);
}

/* An unknown command: named, the nearest command when one is near, and where the list is. */
static void unknown(const char *name, const char *what) {
    const char *names[sizeof commands / sizeof commands[0] + 2];
    size_t n = 0;
    for (; n < sizeof commands / sizeof commands[0]; n++) names[n] = commands[n].name;
    names[n++] = "version";
    names[n] = NULL;
    const char *near = scn_suggest(name, names);
    fprintf(stderr, "fusebox: %sunknown command '%s'", what, name);
    if (near) fprintf(stderr, " (did you mean '%s'?)", near);
    fputs("; the commands: fusebox --help\n", stderr);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return CLI_BAD_INPUT;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc > 2) {
        /* 'fusebox help CMD' is 'fusebox CMD --help' */
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[2], commands[i].name) == 0) {
                static char help_opt[] = "--help";
                char *args[] = {argv[2], help_opt, NULL};
                return commands[i].fn(2, args);
            }
        if (strcmp(argv[2], "version") != 0) {
            unknown(argv[2], "no help for ");
            return CLI_BAD_INPUT;
        }
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
        puts("fusebox " FB_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            if (commands[i].many_runs) util_mem_keep_freed();
            return commands[i].fn(argc - 1, argv + 1);
        }
    unknown(name, "");
    return CLI_BAD_INPUT;
}
