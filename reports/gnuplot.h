/*
 * gnuplot.h - gnuplot as a program: finding it, running a script, and the
 * quoting of the strings the scripts and their data files hold. The run's
 * charts (charts.c) and the sweep's (sweep/charts.c) both draw through here.
 */
#ifndef REP_GNUPLOT_H
#define REP_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Where gnuplot is: FB_OK with its path in buf, or FB_ENOTFOUND with a
 * message naming the Debian package in buf.
 */
int rep_gnuplot_find(char *buf, size_t len);
/*
 * Run `gnuplot -d SCRIPT` in DIR (no init files, so the output depends on the
 * script only; no shell). FB_OK, or FB_EIO with gnuplot's own message in msg.
 */
int rep_gnuplot_run(const char *gnuplot, const char *dir, const char *script, char *msg,
                    size_t msglen);
/*
 * Run scripts[0..n) so, up to `jobs` gnuplots at once (0: the CPUs online; at most
 * REP_GNUPLOT_JOBS_MAX). None starts after one fails; FB_EIO then says what the first
 * failing script in the list's order said, as rep_gnuplot_run would have, whatever the
 * children's timing. Each script must write files of its own; on success the files are the
 * same for any `jobs` (after a failure, which later scripts ran depends on it).
 */
#define REP_GNUPLOT_JOBS_MAX 16
int rep_gnuplot_run_all(const char *gnuplot, const char *dir, const char *const *scripts, size_t n,
                        unsigned jobs, char *msg, size_t msglen);

/*
 * After gnuplot exited 0: is the PNG or SVG at `path` whole (a PNG's last chunk, an SVG's
 * closing tag)? gnuplot exits 0 when it cannot write its output (a full disk leaves an empty
 * PNG). FB_OK, or FB_EIO with "cannot write PATH: REASON (gnuplot left it incomplete)" in msg,
 * the reason a full disk's or a file size limit's when the file system or the limit says so.
 */
int rep_gnuplot_check_drawing(const char *path, char *msg, size_t msglen);

/*
 * A string in a script: single-quoted, where nothing is an escape but ''
 * for a quote; control characters become spaces (a newline would end the
 * command). Titles, labels, file names and paths all go through here.
 */
void rep_gnuplot_quote(FILE *f, const char *s);
/* A string in a data file, read as one column: double-quoted, a '"' becomes a "'". */
void rep_gnuplot_datum(FILE *f, const char *s);

#endif /* REP_GNUPLOT_H */
