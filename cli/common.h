/* common.h - helpers shared by the subcommands: options, errors, files. */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/outdir.h"
#include "reports/report.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

/*
 * Match option `shortname`/`longname` at argv[*i], in the forms "-o DIR",
 * "--out DIR" and "--out=DIR". On a match returns true and sets *value (NULL
 * when the value is missing), advancing *i past a separate value.
 */
bool cli_opt(int argc, char **argv, int *i, const char *shortname, const char *longname,
             const char **value);
/* An error message's bytes printed at most (the rest is counted, not printed). */
#define CLI_ERROR_MAX 4096
/* Print "fusebox CMD: ..." on stderr and return CLI_BAD_INPUT. The message at most
 * CLI_ERROR_MAX bytes, escaped as cli_put_error does. */
int cli_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* msg on stderr, at most CLI_ERROR_MAX bytes, with controls other than a newline or a tab,
 * DEL, C1 controls and bytes that are no UTF-8 as \xNN / \u00NN: messages quote input. */
void cli_put_error(const char *msg);
int cli_missing(const char *cmd, const char *opt);
/* fputs for a --help text: each "docs/" in it names the folder the docs are in, the checkout's
 * docs/ or, when this binary runs from PREFIX/bin and PREFIX/share/doc/fusebox/docs/ exists (make
 * install puts both there), that folder. */
int cli_help_puts(const char *text, FILE *f);
/* The loader's notes (e.g. keys of an imported file not modelled), on stderr. */
void cli_print_notes(const char *cmd, const sim_scenario *sc);
/* The loader's hook for layers that name a policy file (import/policy.h). */
extern const sim_import cli_importer;
/* Print a scenario error (file: path: message) and return CLI_BAD_INPUT. */
int cli_scenario_error(const sim_error *err);
int cli_parse_u64(const char *s, uint64_t *out);
/* The whole file ("-": standard input), NUL-terminated, or NULL with errno set (EFBIG past
 * max bytes). free() it. */
char *cli_read_file(const char *path, size_t max, size_t *len);
/* mkdir -p */
int cli_mkdirs(const char *dir);
/* fopen(dir/name, "w"), printing an error on failure. */
FILE *cli_fopen(const char *dir, const char *name);

/*
 * Where a run's rows and events go while it runs: timeseries.csv and
 * events.jsonl rows for `variant`, and a progress line on stderr when
 * `progress` is set (a terminal). Every file is written into the folder's
 * staging folder and swapped in whole when closed (cli/outdir.h).
 */
typedef struct cli_writer {
    const sim_scenario *sc;
    const char *variant;
    FILE *csv, *events;
    bool progress;
    /* the command's signal flag (set after cli_writer_open), or NULL: the runs stop at their next
     * event once it is set, and then report.json says "interrupted" and no charts are drawn */
    volatile sig_atomic_t *stop;
    cli_outdir out;
    /* set before closing: the close stops short of the commit, so that the caller can stage files
     * of its own (cli_outdir_path(&w->out, ...)) and commit with cli_writer_commit; still set
     * after the close when the files wait for it, cleared by the commit or a failed close */
    bool hold;
    bool committed;   /* after closing: the new files are in place (out.replaced says of what) */
    bool interrupted; /* after closing: report.json says "interrupted" */
    /* set before closing, or NULL: heads report.html (its first line the title, then items) */
    const char *warning;
    unsigned jobs; /* gnuplots drawing the charts at once (0: the CPUs; run's --jobs) */
    /* the reason a write to csv or events failed where the stream cannot keep it (a write
     * straight from a buffer of the caller's), reported by the close instead of EIO; 0: none */
    int csv_errno, events_errno;
} cli_writer;

/* Run options whose callbacks write through w (events_log_max: the default). */
sim_run_opts cli_writer_opts(cli_writer *w);

/*
 * Create dir and its staging folder and open w on the staged timeseries.csv
 * (header written) and events.jsonl. Returns CLI_OK, or CLI_BAD_INPUT with
 * the error printed ("fusebox CMD: ..."); cli_writer_close() is due either way.
 */
int cli_writer_open(cli_writer *w, const char *cmd, const char *dir, const sim_scenario *sc,
                    bool progress);
/*
 * After the runs: the files closed, the charts unless !charts, report.json
 * of sums[n], each checked; then, when all of it was written, the staged
 * files replace the earlier run's in dir (w->committed), else dir is left as
 * it was. Returns `status`, or CLI_BAD_INPUT when any of it failed (the
 * error printed naming the file and the reason).
 */
int cli_writer_close(cli_writer *w, const char *cmd, const char *dir, sim_summary *const *sums,
                     size_t n, bool charts, int status);
/* The same with extra top-level members in report.json (rep_write_json_extra). */
int cli_writer_close_extra(cli_writer *w, const char *cmd, const char *dir,
                           sim_summary *const *sums, size_t n, bool charts, int status,
                           const rep_extra *extra, size_t nextra);

/*
 * After a close with w->hold: when `ok`, the staged files replace the
 * earlier run's in the folder (w->committed), else they are discarded.
 * Returns CLI_OK, or CLI_BAD_INPUT (not ok, or the commit failed, printed).
 */
int cli_writer_commit(cli_writer *w, const char *cmd, bool ok);

#define CLI_POLICIES_MAX 4 /* --policy options of one command */
#define CLI_MAPS_MAX 16    /* --map-provider options of one command */

/* What the commands that run one scenario share: the file and its overrides. */
typedef struct cli_run_args {
    const char *file, *out; /* -o DIR */
    const char *sets[256];  /* --set KEY=VALUE */
    size_t nsets;
    const char *only[SIM_VARIANTS_MAX]; /* --variant NAME */
    size_t nonly;
    uint64_t seed; /* --seed N */
    bool has_seed;
    char policies[CLI_POLICIES_MAX][2048]; /* --policy, as the "+variants.NAME=" sets */
    size_t npolicies;
    char policy_name[CLI_POLICIES_MAX][SIM_NAME_MAX]; /* each --policy's variant and layer */
    bool policy_litellm[CLI_POLICIES_MAX];            /* ... and whether it is KIND litellm */
    const char *maps[CLI_MAPS_MAX];                   /* --map-provider FROM=TO */
    size_t nmaps;
    bool strict; /* --strict: the loader's warnings are errors */
} cli_run_args;

/*
 * Match -o, --seed, --set, --variant, --policy, --map-provider or --strict at argv[*i] (as
 * cli_opt). Returns
 * false when it is none of them, else true with *rc CLI_OK or
 * CLI_BAD_INPUT (printed as "fusebox CMD: ...").
 */
bool cli_run_opt(int argc, char **argv, int *i, const char *cmd, cli_run_args *a, int *rc);
/*
 * Load a->file with its overrides, and mark in selected[] the variants
 * --variant named. Returns CLI_OK, or CLI_BAD_INPUT with the error printed
 * and *out NULL (with --strict also when the loader warned).
 */
int cli_run_load(const cli_run_args *a, const char *cmd, sim_scenario **out, bool *selected);

/* The first SIGINT or SIGTERM since cli_catch_stop_signals(), or 0. */
extern volatile sig_atomic_t cli_stop_signal;
/* From now on SIGINT and SIGTERM only set cli_stop_signal. `restart`: with SA_RESTART, so that a
   write in progress is not failed (run); without, so that poll returns at once (sweep). */
void cli_catch_stop_signals(bool restart);

#endif
