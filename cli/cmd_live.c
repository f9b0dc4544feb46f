/* cmd_live.c - 'fusebox live'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_live(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox live: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
