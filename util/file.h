/*
 * file.h - checked file writes: a write error (a full disk) shows only when
 * the stream is flushed and closed, so every file the project writes is
 * closed through here.
 */
#ifndef UTIL_FILE_H
#define UTIL_FILE_H

#include <stdio.h>

/* Flush and close f; 0, or the errno of the first failure (EIO for an earlier write error). */
int util_fclose_checked(FILE *f);

#endif /* UTIL_FILE_H */
