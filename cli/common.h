/* common.h - helpers shared by the subcommands: options, errors, files. */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/scenario.h"
#include "sim/sim.h"

/*
 * Match option `shortname`/`longname` at argv[*i], in the forms "-o DIR",
 * "--out DIR" and "--out=DIR". On a match returns true and sets *value (NULL
 * when the value is missing), advancing *i past a separate value.
 */
bool cli_opt(int argc, char **argv, int *i, const char *shortname, const char *longname,
             const char **value);
/* Print "fusebox CMD: ..." on stderr and return CLI_BAD_INPUT. */
int cli_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_missing(const char *cmd, const char *opt);
/* Print a scenario error (file: path: message) and return CLI_BAD_INPUT. */
int cli_scenario_error(const sim_error *err);
int cli_parse_u64(const char *s, uint64_t *out);
/* mkdir -p */
int cli_mkdirs(const char *dir);
/* fopen(dir/name, "w"), printing an error on failure. */
FILE *cli_fopen(const char *dir, const char *name);

/*
 * Where a run's rows and events go while it runs: timeseries.csv and
 * events.jsonl rows for `variant`, and a progress line on stderr when
 * `progress` is set (a terminal).
 */
typedef struct cli_writer {
    const sim_scenario *sc;
    const char *variant;
    FILE *csv, *events;
    bool progress;
} cli_writer;

/* Run options whose callbacks write through w (events_log_max: the default). */
sim_run_opts cli_writer_opts(cli_writer *w);

#endif
