/*
 * file.h - checked file writes: a write error (a full disk) shows only when
 * the stream is flushed and closed, so every file the project writes is
 * closed through here. And the one reader of a whole file, with a cap.
 */
#ifndef UTIL_FILE_H
#define UTIL_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Flush and close f; 0, or the errno of the first failure (EIO for an earlier write error). */
int util_fclose_checked(FILE *f);

/*
 * The whole file at path, NUL-terminated (free() it), its length in *len; NULL with errno set:
 * fopen's, EFBIG past max bytes, ENOMEM, EIO for a read error.
 */
char *util_read_file(const char *path, size_t max, size_t *len);
/* The same from an open stream (standard input), which stays open. */
char *util_read_stream(FILE *f, size_t max, size_t *len);

#endif /* UTIL_FILE_H */
