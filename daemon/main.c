/* infilld entry point: LSP server by default, subcommands for people and scripts. */
#include "base.h"
#include "engine.h"

#include <stdio.h>
#include <string.h>

static int dmn__usage(FILE *f) {
    fprintf(f, "usage: infilld [options]            serve LSP on stdio\n"
               "       infilld doctor               build options, devices, model, grammars\n"
               "       infilld logits --model DIR --tokens ID,...   raw logits (see --help)\n"
               "       infilld --version | --help\n");
    return f == stderr ? 2 : 0;
}

static int dmn__doctor(void) {
    printf("infilld %s\n", INFILLD_VERSION);
#ifdef __AVX2__
    printf("cpu: AVX2 compiled in\n");
#else
    printf("cpu: portable build\n");
#endif
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("infilld %s\n", INFILLD_VERSION);
        return 0;
    }
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return dmn__usage(stdout);
    if (argc > 1 && strcmp(argv[1], "doctor") == 0)
        return dmn__doctor();
    if (argc > 1 && strcmp(argv[1], "logits") == 0)
        return eng_cli_logits(argc - 1, argv + 1);
    return dmn__usage(stderr);
}
