/* main.c - the fusebox command: subcommands parse arguments and call the modules. */
#include <stdio.h>
#include <string.h>

#include "core/fb.h"

static void usage(FILE *out) {
    fputs("usage: fusebox <command> [options]\n"
          "\n"
          "commands:\n"
          "  run SCENARIO [-o DIR] [--seed N] [--set key=value]...   simulate a scenario\n"
          "  version                                                 print the version\n",
          out);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "version") == 0) {
        puts("fusebox 0.1.0");
        return 0;
    }
    fprintf(stderr, "fusebox: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
