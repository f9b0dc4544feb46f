/* cmd_run.c - 'fusebox run'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_run(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox run: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
