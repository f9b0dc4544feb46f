/* cmd_validate.c - 'fusebox validate'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_validate(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox validate: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
