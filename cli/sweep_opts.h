/* sweep_opts.h - what 'fusebox sweep' and 'fusebox merge' share: analysis options, the end. */
#ifndef CLI_SWEEP_OPTS_H
#define CLI_SWEEP_OPTS_H

#include <stdbool.h>

#include "sweep/sweep.h"

/*
 * Match an analysis option at argv[*i] (--minimize, --maximize, --subject-to,
 * --heatmap, --heatmap-dims) into *a. Returns 1 on a match, 0 when argv[*i]
 * is something else, or CLI_BAD_INPUT (after printing) on a missing value.
 */
int cli_sweep_analysis_opt(const char *cmd, int argc, char **argv, int *i, sweep_args *a);

/* The analysis options' help lines. */
extern const char cli_sweep_analysis_help[];

/*
 * Analyse, write the outputs in dir (staged, then renamed: sweep_save_outputs),
 * print the answer (unless quiet) and return the exit code: 2 when runs
 * failed or files could not be written, 1 when an objective was given and no
 * point satisfies the constraints. *written: the outputs are in dir.
 */
int cli_sweep_finish(const char *cmd, sweep *sw, const char *dir, bool charts, bool quiet,
                     bool *written);

#endif
