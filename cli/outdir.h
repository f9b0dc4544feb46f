/*
 * outdir.h - an output folder that is replaced whole: a run writes its files
 * into a staging folder inside it (DIR/.fusebox-new), and only when every
 * file is written and closed without error are fusebox's own files of an
 * earlier run removed from DIR and the new ones renamed into place. A run
 * killed, interrupted before its commit, or failing on a write leaves DIR as
 * it was. Files in DIR that fusebox does not write are never touched.
 *
 * Also the checked close and the write error message every command can use.
 */
#ifndef CLI_OUTDIR_H
#define CLI_OUTDIR_H

#include <stdbool.h>
#include <stdio.h>

#define CLI_STAGE_NAME ".fusebox-new"

typedef struct cli_outdir {
    char dir[1024];   /* where the results go */
    char stage[1100]; /* DIR/.fusebox-new: where they are written first */
    /* after cli_outdir_commit: what the commit replaced, e.g. "an earlier run of retry-storm"
     * ("" when DIR held none of fusebox's files) */
    char replaced[160];
} cli_outdir;

/*
 * mkdir -p DIR, remove what a killed run may have left in its staging
 * folder, and create the staging folder. Returns 0, or -1 with the error
 * printed ("fusebox CMD: cannot create ...").
 */
int cli_outdir_begin(cli_outdir *o, const char *cmd, const char *dir);
/* The staged path of NAME ("charts/x.png" too): o->stage/NAME. */
void cli_outdir_path(const cli_outdir *o, const char *name, char *buf, size_t len);
/*
 * Replace fusebox's files in DIR with the staged ones and remove the staging
 * folder. Returns 0, or -1 with the error printed.
 */
int cli_outdir_commit(cli_outdir *o, const char *cmd);
/* Remove the staged files and the staging folder (DIR stays as it was). */
void cli_outdir_discard(cli_outdir *o);
/* Remove the staged charts and report.html (an interrupted run has none). */
void cli_outdir_drop_charts(cli_outdir *o);

/*
 * One file replaced whole: written to PATH.fusebox-new beside it (with
 * `mkdirs`, the missing folders of PATH created first), then renamed over PATH, so that a
 * failed or killed command leaves an earlier PATH as it was (a PATH that
 * is not a regular file, /dev/full, a pipe or a link, is written in place, tmp
 * then ""). Begin returns
 * the open file and its temporary name in tmp, or NULL with the error
 * printed ("fusebox CMD: cannot ...").
 */
FILE *cli_file_begin(const char *cmd, const char *path, bool mkdirs, char *tmp, size_t len);
/* Close f checked and rename tmp over path. Returns 0, or -1 with the error printed and tmp
   removed. */
int cli_file_commit(FILE *f, const char *cmd, const char *path, const char *tmp);
/* Close f unchecked and remove tmp (path stays as it was). */
void cli_file_discard(FILE *f, const char *tmp);

/*
 * Flush and close f, checking both and the stream's error flag. Returns 0,
 * or -1 with "fusebox CMD: cannot write PATH: REASON" printed.
 */
int cli_close_checked(FILE *f, const char *cmd, const char *path);
/* Print "fusebox CMD: cannot write PATH: strerror(err)" and return -1. */
int cli_write_error(const char *cmd, const char *path, int err);

#endif
