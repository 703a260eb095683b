/* Runs `infilld tokenize` without the daemon: the agreement tests link only
 * the engine, so they do not depend on the rest of the binary. */
#include "engine.h"

int main(int argc, char **argv) { return eng_cli_tokenize(argc, argv); }
