/* cmd_check.c - 'fusebox check'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_check(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox check: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
