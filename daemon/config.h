/* daemon configuration: command line, config file, initializationOptions.
 *
 * Precedence (highest first): command line > initializationOptions /
 * workspace/didChangeConfiguration > $XDG_CONFIG_HOME/infilld/config.json >
 * built-in defaults. Settings are one JSON object with the keys documented in
 * docs/PROTOCOL.md; the daemon merges the layers into the effective object. */
#ifndef INFILLD_DAEMON_CONFIG_H
#define INFILLD_DAEMON_CONFIG_H

#include "base.h"

#include <jansson.h>

typedef struct dmn_config {
    /* Transport and process options (command line only). */
    char *listen;       /* "HOST:PORT" for TCP, NULL for stdio */
    bool stdio;         /* --stdio: with listen, serve stdio as well (one process) */
    bool allow_remote;  /* permit a non-loopback listen address */
    char *token_file;   /* file holding the session token (with allow_remote) */
    char *token;        /* its contents, trimmed */
    char *log_file;     /* NULL: stderr */
    char *log_level;    /* "info" default */
    char *config_file;  /* explicit --config, else the XDG path */
    size_t max_message; /* body limit, bytes (0 → 256 MiB) */
    /* Effective settings shared by every session: defaults < config file <
     * command line. Always a JSON object; keys include "model", "device",
     * "languages", "exclude", "seed", "candidates", "validate", "steps", "alg",
     * "partial", "status", "clientLogLevel". Owned. */
    json_t *settings;
    /* The config file layer alone (NULL when there is none). Owned. */
    json_t *file;
    /* The command-line layer alone (re-applied on top of every merge). Owned. */
    json_t *cli;
} dmn_config;

/* Built-in defaults (always a valid object; NULL only on OOM). New reference. */
json_t *dmn_config_defaults(void);
/* Parses argv into cfg (reads the config file too). Returns ERR_INVALID with a
 * message in err for a bad option; *exit_now set for --help / --version. */
base_status dmn_config_parse(dmn_config *cfg, int argc, char **argv, bool *exit_now, char *err,
                             size_t err_len);
void dmn_config_deinit(dmn_config *cfg);
/* Effective settings for a session: defaults < file < overlay (may be NULL:
 * initializationOptions / didChangeConfiguration) < command line.
 * New reference. */
json_t *dmn_config_effective(const dmn_config *cfg, const json_t *overlay);

/* The "model" setting when it names a folder (a non-empty string), else NULL
 * (the provider then uses its default). */
const char *dmn_config_model(const json_t *settings);

/* May a document with this uri and language id be sent to a model, under the
 * settings' "exclude" globs and "languages" {id: {"enabled": bool}}? */
bool dmn_config_allows(const json_t *settings, const char *uri, const char *language_id);

/* Inline completion as a client registers it dynamically: false when the
 * settings switch completions off ("enabled": false). *selector then stays
 * NULL, i.e. every document: an LSP document filter can only include, so
 * disabled languages and exclude globs cannot be expressed in it and are
 * enforced by dmn_config_allows (those documents get empty answers). */
bool dmn_config_inline_selector(const json_t *settings, json_t **selector);

#endif
