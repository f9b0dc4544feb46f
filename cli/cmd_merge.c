/* cmd_merge.c - 'fusebox merge': the shards of a sweep into the outputs of an unsharded run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/sweep_opts.h"
#include "sweep/sweep.h"

static void usage(FILE *f) {
    cli_help_puts(
        "usage: fusebox merge PARTIAL... [-o DIR] [options]\n"
        "\n"
        "Combine the partial files written by 'fusebox sweep --shard K/N' (every\n"
        "shard of one sweep, in any order) into the files an unsharded sweep writes:\n"
        "sweep.csv, sweep-points.csv, sweep.json, charts and sweep.html, byte for\n"
        "byte. The analysis options replace those the shards were run with.\n"
        "\n"
        "  -o, --out DIR          output folder (default out/<scenario name>-sweep; without\n"
        "                         -o, a sweep already there is written over only when it\n"
        "                         was merged from the same parts: DIR/merge.json)\n",
        f);
    cli_help_puts(cli_sweep_analysis_help, f);
    cli_help_puts("      --no-charts        skip the gnuplot charts and sweep.html\n"
                  "  -q, --quiet            no answer on stdout\n"
                  "  -h, --help             this text\n"
                  "\n"
                  "Exit codes: 0 ok, 1 no point satisfies --subject-to, 2 bad input (files from\n"
                  "different sweeps, missing or repeated shards) or failed runs.\n",
                  f);
}

int cli_cmd_merge(int argc, char **argv) {
    const char *out = NULL;
    bool charts = true, quiet = false;
    sweep_args analysis;
    memset(&analysis, 0, sizeof analysis);
    analysis.import = &cli_importer;
    const char **files = calloc((size_t)argc, sizeof *files);
    if (files == NULL) return cli_bad("merge", "out of memory");
    size_t n = 0;
    int status = -1;
    for (int i = 1; i < argc && status < 0; i++) {
        const char *a = argv[i], *val = NULL;
        int r = cli_sweep_analysis_opt("merge", argc, argv, &i, &analysis);
        if (r == CLI_BAD_INPUT) status = r;
        if (r != 0) continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            status = CLI_OK;
        } else if (cli_opt(argc, argv, &i, "-o", "--out", &val)) {
            if (val == NULL) status = cli_missing("merge", a);
            out = val;
        } else if (strcmp(a, "--no-charts") == 0) {
            charts = false;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            status = cli_bad("merge", "unknown option '%s' (see fusebox merge --help)", a);
        } else {
            files[n++] = a;
        }
    }
    if (status < 0 && n == 0) {
        usage(stderr);
        status = CLI_BAD_INPUT;
    }
    if (status >= 0) {
        free(files);
        return status;
    }
    sweep *sw = NULL;
    char msg[2048];
    if (sweep_merge(files, n, &analysis, &sw, msg, sizeof msg) != FB_OK) {
        free(files);
        return cli_bad("merge", "%s", msg);
    }
    free(files);
    char dir[1024];
    if (out)
        snprintf(dir, sizeof dir, "%s", out);
    else
        snprintf(dir, sizeof dir, "out/%s-sweep", sweep_scenario_name(sw));
    /* without -o, a folder holding some other sweep is not ours to write over */
    if (!out && sweep_folder_kind(sw, dir) == SWEEP_FOLDER_OTHER) {
        sweep_destroy(sw);
        return cli_bad("merge",
                       "%s holds a sweep that was not merged from these parts (its merge.json "
                       "differs or is missing); write over it with -o %s, or choose another "
                       "folder",
                       dir, dir);
    }
    bool written = false;
    status = cli_sweep_finish("merge", sw, dir, charts, quiet, &written);
    sweep_destroy(sw);
    return status;
}
