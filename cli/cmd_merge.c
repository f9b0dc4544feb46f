/* cmd_merge.c - 'fusebox merge'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_merge(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox merge: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
