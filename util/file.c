/* file.c - see file.h. */
#include "util/file.h"

#include <errno.h>

int util_fclose_checked(FILE *f) {
    int err = ferror(f) ? EIO : 0;
    if (fflush(f) != 0) err = errno;
    if (fclose(f) != 0 && err == 0) err = errno;
    return err;
}
