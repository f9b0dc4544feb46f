/* sweep_opts.c - what 'fusebox sweep' and 'fusebox merge' share. */
#include "cli/sweep_opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"

const char cli_sweep_analysis_help[] =
    "      --minimize METRIC    recommend the point with the lowest mean METRIC\n"
    "      --maximize METRIC    ... or the highest (metric names: docs/metrics.md)\n"
    "      --subject-to LIST    constraints on the point's means, comma-separated:\n"
    "                           \"success_rate>=0.999,latency_p99<=10s\" (>=, <=, >, <;\n"
    "                           durations with units, ratios as 0.999 or 99.9%)\n"
    "      --strict             judge the constraints on the 95% CI's far end, not\n"
    "                           on the mean (a point must pass on every likely value)\n"
    "      --heatmap METRIC     the heatmap's metric (default: the objective, else\n"
    "                           blast_radius)\n"
    "      --heatmap-dims K1,K2 the heatmap's two --grid keys (default: the first two)\n";

int cli_sweep_analysis_opt(const char *cmd, int argc, char **argv, int *i, sweep_args *a) {
    const char *a0 = argv[*i], *val = NULL;
    if (cli_opt(argc, argv, i, NULL, "--minimize", &val) ||
        cli_opt(argc, argv, i, NULL, "--maximize", &val)) {
        if (val == NULL) return cli_missing(cmd, a0);
        if (a->objective) return cli_bad(cmd, "one objective at a time (--minimize or --maximize)");
        a->objective = val;
        a->sense = strncmp(a0, "--maximize", 10) == 0 ? -1 : 1;
        return 1;
    }
    if (cli_opt(argc, argv, i, NULL, "--subject-to", &val)) {
        if (val == NULL) return cli_missing(cmd, a0);
        a->subject_to = val;
        return 1;
    }
    if (strcmp(a0, "--strict") == 0) {
        a->strict = true;
        return 1;
    }
    if (cli_opt(argc, argv, i, NULL, "--heatmap-dims", &val)) {
        if (val == NULL) return cli_missing(cmd, a0);
        a->heatmap_dims = val;
        return 1;
    }
    if (cli_opt(argc, argv, i, NULL, "--heatmap", &val)) {
        if (val == NULL) return cli_missing(cmd, a0);
        a->heatmap = val;
        return 1;
    }
    return 0;
}

int cli_sweep_finish(const char *cmd, sweep *sw, const char *dir, bool charts, bool quiet,
                     bool *written) {
    char msg[1024];
    *written = false;
    if (sweep_analyse(sw) != FB_OK) return cli_bad(cmd, "some runs have no result");
    if (cli_mkdirs(dir) != 0) return cli_bad(cmd, "cannot create %s: %s", dir, strerror(errno));
    bool replaced = false;
    int rc = sweep_save_outputs(sw, dir, charts, &replaced, msg, sizeof msg);
    /* FB_ENOTFOUND: no gnuplot; the files are written and the page says why it has no charts */
    if (rc != FB_OK && rc != FB_ENOTFOUND) return cli_bad(cmd, "%s", msg);
    *written = true;
    int status = rc == FB_OK ? CLI_OK : cli_bad(cmd, "%s", msg);
    if (!quiet) {
        sweep_write_answer(stdout, sw);
        printf("\nwrote %s/sweep.csv, sweep-points.csv, sweep.json%s%s\n", dir,
               charts ? ", charts/, sweep.html" : "",
               replaced ? " (replacing the sweep that was there)" : "");
    }
    const char *first = NULL;
    uint64_t failed = sweep_failed(sw, &first);
    if (failed > 0) {
        fprintf(stderr, "fusebox %s: %llu run%s failed; the first: %s\n", cmd,
                (unsigned long long)failed, failed == 1 ? "" : "s", first ? first : "?");
        return CLI_BAD_INPUT;
    }
    if (status == CLI_OK && sweep_infeasible(sw)) return CLI_EXPECT_FAILED;
    return status;
}
