/* cmd_sweep.c - 'fusebox sweep'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_sweep(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox sweep: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
