/* daemon: transports (stdio, TCP), sessions, signals and the process-id
 * watchdog around lsp_server, on one libuv loop. */
#ifndef INFILLD_DAEMON_H
#define INFILLD_DAEMON_H

#include "config.h"

/* Serves LSP as cfg says (stdio unless cfg->listen) until the stdio session
 * exits, or SIGTERM/SIGINT. Creates and frees the provider (dmn_provider_new).
 * Returns the process exit code: 0 after shutdown+exit or a signal, 1 for an
 * exit without shutdown or a lost stdio peer, 2 for a start-up failure. */
int dmn_serve(dmn_config *cfg);

/* Parses "HOST:PORT" ("[::1]:PORT" for IPv6) into a socket address and says
 * whether it is a loopback address. */
base_status dmn_parse_listen(const char *spec, void *sockaddr_storage_out, bool *loopback);

#endif
