/*
 * version.h - the fusebox version: what --version prints and what every
 * output file names as its writer (report.json, report.html, sweep.json,
 * partial files), so a file says which build wrote it.
 */
#ifndef FB_VERSION_H
#define FB_VERSION_H

#define FB_VERSION "0.1.0"

#endif /* FB_VERSION_H */
