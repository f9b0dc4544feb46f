/* cmd_mock.c - 'fusebox mock'. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_mock(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("fusebox mock: not implemented yet\n", stderr);
    return CLI_BAD_INPUT;
}
