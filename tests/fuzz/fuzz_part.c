/*
 * fuzz_part.c - a libFuzzer target for the reader of the sweep's partial and shard files
 * (sweep/part.c: `fusebox sweep --resume` and `fusebox merge` read them the same way): the
 * strict JSON check (scn_json_check), the definition the file carries (its scenario text,
 * grid, seeds), the sweep built from it, and each task's metric values (a number or null,
 * fractions in [0, 1], counts not below 0).
 *
 * Input: a partial file's JSON, read as shard 1 of 1 by sweep_merge (the seeds are finished
 * unsharded sweeps: the whole path to the recorded results). Whatever the bytes, the reader
 * returns a sweep or an error with a message, without a crash, a leak or undefined behaviour.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fb.h"
#include "sweep/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the reader takes a file: one per process, rewritten for each input, removed at exit */
static char path[64];

static void remove_file(void) {
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (path[0] == '\0') {
        snprintf(path, sizeof path, "/tmp/fuzz-part-%ld.json", (long)getpid());
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) return 0;
    size_t wrote = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || wrote != size) return 0;
    const char *files[] = {path};
    sweep *sw = NULL;
    char msg[1024] = "";
    int rc = sweep_merge(files, 1, NULL, &sw, msg, sizeof msg);
    if (rc != FB_OK && (msg[0] == '\0' || sw != NULL)) abort(); /* an error says why */
    if (rc == FB_OK && (sw == NULL || sweep_task_count(sw) == 0)) abort();
    sweep_destroy(sw);
    return 0;
}
