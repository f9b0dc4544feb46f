/* file.c - see file.h. */
#include "util/file.h"

#include <errno.h>
#include <stdlib.h>

int util_fclose_checked(FILE *f) {
    int err = ferror(f) ? EIO : 0;
    if (fflush(f) != 0) err = errno;
    if (fclose(f) != 0 && err == 0) err = errno;
    return err;
}

char *util_read_stream(FILE *f, size_t max, size_t *len) {
    size_t n = 0, cap = 0;
    char *buf = NULL;
    int err = 0;
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                err = EFBIG;
                break;
            }
            size_t want = cap == 0 ? 65536 : cap * 2;
            if (want > max + 1) want = max + 1; /* one byte past max tells a file too long */
            char *nb = realloc(buf, want + 1);
            if (nb == NULL) {
                err = ENOMEM;
                break;
            }
            buf = nb;
            cap = want;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (err == 0 && n > max) err = EFBIG;
    if (err == 0 && ferror(f)) err = EIO;
    if (err != 0) {
        free(buf);
        errno = err;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *util_read_file(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *buf = util_read_stream(f, max, len);
    int err = errno;
    fclose(f);
    errno = err;
    return buf;
}
