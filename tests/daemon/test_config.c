/* Daemon configuration: option parsing, layer precedence, exclude globs and
 * per-language switches, listen address parsing. */
#include "check.h"
#include "config.h"
#include "daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
    /* A config file layer. */
    char path[] = "/tmp/infilld-test-config-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"model\": \"/file/model\", \"device\": \"cuda\", \"seed\": 7,"
          " \"exclude\": [\"*.secret\"], \"languages\": {\"markdown\": {\"enabled\": false}}}",
          f);
    fclose(f);
    char *argv[] = {"infilld", "--config", path, "--device", "cpu", "--stdio", NULL};
    dmn_config cfg;
    bool exit_now;
    char err[256];
    CHECK_EQ_I(dmn_config_parse(&cfg, 6, argv, &exit_now, err, sizeof(err)), BASE_OK);
    CHECK(!exit_now);
    /* --stdio is recorded (with --listen it adds a stdio session). */
    CHECK(cfg.stdio && cfg.listen == NULL);
    /* command line > file > defaults */
    CHECK_STR(json_string_value(json_object_get(cfg.settings, "device")), "cpu");
    CHECK_STR(json_string_value(json_object_get(cfg.settings, "model")), "/file/model");
    CHECK_EQ_I(json_integer_value(json_object_get(cfg.settings, "seed")), 7);
    /* initializationOptions > file, but < command line; token never kept. */
    json_t *io = json_pack("{s:s,s:s,s:i,s:s,s:[s]}", "model", "/init/model", "device", "cuda",
                           "seed", 9, "token", "secret", "exclude", "*.gen.py");
    json_t *e = dmn_config_effective(&cfg, io);
    CHECK_STR(json_string_value(json_object_get(e, "model")), "/init/model");
    CHECK_STR(json_string_value(json_object_get(e, "device")), "cpu");
    CHECK_EQ_I(json_integer_value(json_object_get(e, "seed")), 9);
    CHECK(json_object_get(e, "token") == NULL);
    /* Excludes add up: defaults + file + session. */
    CHECK(!dmn_config_allows(e, "file:///home/u/proj/.env", "dotenv"));
    CHECK(!dmn_config_allows(e, "file:///home/u/.ssh/id_ed25519", "plaintext"));
    CHECK(!dmn_config_allows(e, "file:///srv/tls/server.pem", "plaintext"));
    CHECK(!dmn_config_allows(e, "file:///a/b.secret", "plaintext"));
    CHECK(!dmn_config_allows(e, "file:///a/x.gen.py", "python"));
    CHECK(!dmn_config_allows(e, "file:///a/README.md", "markdown"));
    CHECK(!dmn_config_allows(e, "file:///a/%2Eenv", "dotenv")); /* percent-encoded */
    CHECK(dmn_config_allows(e, "file:///a/main.py", "python"));
    CHECK(dmn_config_allows(e, "untitled:Untitled-1", "python"));
    json_decref(e);
    json_decref(io);
    /* excludeDefaults: false removes only the built-in list. */
    io = json_pack("{s:b}", "excludeDefaults", 0);
    e = dmn_config_effective(&cfg, io);
    CHECK(dmn_config_allows(e, "file:///p/.env", "dotenv"));
    CHECK(!dmn_config_allows(e, "file:///a/b.secret", "plaintext"));
    json_decref(e);
    json_decref(io);
    /* didChangeConfiguration-style section wrapping. */
    io = json_pack("{s:{s:b}}", "infilld", "enabled", 0);
    e = dmn_config_effective(&cfg, io);
    CHECK(!dmn_config_allows(e, "file:///a/main.py", "python"));
    /* Switched off: inline completion is not registered at all. */
    json_t *sel = NULL;
    CHECK(!dmn_config_inline_selector(e, &sel));
    CHECK(sel == NULL);
    json_decref(e);
    json_decref(io);
    /* clientLogLevel: warn by default; a session's value wins over it, and a
     * disabled language still registers for every document (no negation in
     * an LSP document filter). */
    e = dmn_config_effective(&cfg, NULL);
    CHECK_STR(json_string_value(json_object_get(e, "clientLogLevel")), "warn");
    json_decref(e);
    io = json_pack("{s:s,s:{s:b}}", "clientLogLevel", "info", "languages", "python", 0);
    e = dmn_config_effective(&cfg, io);
    CHECK_STR(json_string_value(json_object_get(e, "clientLogLevel")), "info");
    CHECK(dmn_config_inline_selector(e, &sel));
    CHECK(sel == NULL);
    json_decref(e);
    json_decref(io);
    dmn_config_deinit(&cfg);
    remove(path);

    /* Bad options. */
    char *bad1[] = {"infilld", "--device", "tpu", NULL};
    CHECK_EQ_I(dmn_config_parse(&cfg, 3, bad1, &exit_now, err, sizeof(err)), BASE_ERR_INVALID);
    CHECK(strstr(err, "--device") != NULL);
    dmn_config_deinit(&cfg);
    char *bad2[] = {"infilld", "--allow-remote", NULL};
    CHECK_EQ_I(dmn_config_parse(&cfg, 2, bad2, &exit_now, err, sizeof(err)), BASE_ERR_INVALID);
    dmn_config_deinit(&cfg);
    char *bad3[] = {"infilld", "--bogus", NULL};
    CHECK_EQ_I(dmn_config_parse(&cfg, 2, bad3, &exit_now, err, sizeof(err)), BASE_ERR_INVALID);
    dmn_config_deinit(&cfg);
    char *ver[] = {"infilld", "--version", NULL};
    CHECK_EQ_I(dmn_config_parse(&cfg, 2, ver, &exit_now, err, sizeof(err)), BASE_OK);
    CHECK(exit_now);
    dmn_config_deinit(&cfg);

    struct sockaddr_storage ss;
    bool lo = false;
    CHECK_EQ_I(dmn_parse_listen("127.0.0.1:0", &ss, &lo), BASE_OK);
    CHECK(lo);
    CHECK_EQ_I(dmn_parse_listen("localhost:9000", &ss, &lo), BASE_OK);
    CHECK(lo);
    CHECK_EQ_I(dmn_parse_listen("[::1]:9000", &ss, &lo), BASE_OK);
    CHECK(lo);
    CHECK_EQ_I(dmn_parse_listen("0.0.0.0:9000", &ss, &lo), BASE_OK);
    CHECK(!lo);
    CHECK_EQ_I(dmn_parse_listen("10.1.2.3:99999", &ss, &lo), BASE_ERR_INVALID);
    CHECK_EQ_I(dmn_parse_listen("nohost", &ss, &lo), BASE_ERR_INVALID);
    return check_finish("test_config");
}
