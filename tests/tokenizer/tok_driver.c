/* Runs `infilld tokenize` without the daemon: the agreement tests link only
 * the engine and daemon/cli/tokenize.c, so they do not depend on the rest of
 * the binary. */
#include "cli/cli.h"

int main(int argc, char **argv) { return dmn_cli_tokenize(argc, argv); }
