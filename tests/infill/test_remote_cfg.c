/* The remote source's settings: what is accepted, what is refused and why
 * (key files others can read, http:// off loopback, inline keys, header
 * injection), and the key never in an error message. No network. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "source.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *KEY = "sk-unit-test-0123456789";

static base_status parse(const char *json, ifl_remote_cfg *c, char *err, size_t cap) {
    json_error_t je;
    json_t *j = json_loads(json, 0, &je);
    CHECK(j != NULL);
    base_status st = ifl_remote_cfg_parse(j, c, err, cap);
    json_decref(j);
    if (st == BASE_OK)
        CHECK(!strstr(err, KEY));
    return st;
}

static void refused(const char *json, base_status want, const char *needle) {
    ifl_remote_cfg c;
    char err[512];
    base_status st = parse(json, &c, err, sizeof err);
    CHECK_EQ_I(st, want);
    if (!strstr(err, needle))
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", err, needle);
    CHECK(strstr(err, needle) != NULL);
    CHECK(strstr(err, KEY) == NULL);
    CHECK(c.url == NULL && c.api_key == NULL);
}

int main(void) {
    setenv("IFL_UNIT_KEY", KEY, 1);
    ifl_remote_cfg c;
    char err[512];
    CHECK_EQ_I(ifl_remote_cfg_parse(NULL, &c, err, sizeof err), BASE_ERR_NOT_FOUND);
    CHECK_EQ_I(parse("{\"kind\":\"local\"}", &c, err, sizeof err), BASE_ERR_NOT_FOUND);

    CHECK_EQ_I(
        parse("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"https://api.example.com/"
              "v1/\",\"model\":\"m\",\"apiKeyEnv\":\"IFL_UNIT_KEY\",\"timeoutMs\":900,"
              "\"maxTokens\":32,\"temperature\":0.2,\"headers\":{\"X-Team\":\"a\"}}",
              &c, err, sizeof err),
        BASE_OK);
    CHECK_STR(c.url, "https://api.example.com/v1"); /* trailing slash dropped */
    CHECK_STR(c.api_key, KEY);
    CHECK_STR(c.model, "m");
    CHECK_EQ_I(c.timeout_ms, 900);
    CHECK_EQ_I(c.max_tokens, 32);
    CHECK(c.has_temperature && c.temperature > 0.19 && c.temperature < 0.21);
    CHECK_EQ_I(c.n_headers, 1);
    CHECK_STR(c.headers[0], "X-Team: a");
    CHECK(strstr(c.key_from, "IFL_UNIT_KEY") != NULL);
    ifl_remote_cfg_free(&c);

    CHECK_EQ_I(
        parse("{\"kind\":\"remote\",\"api\":\"llama-infill\",\"url\":\"http://127.0.0.1:8080\"}",
              &c, err, sizeof err),
        BASE_OK);
    CHECK(c.api == IFL_API_LLAMA_INFILL && c.api_key == NULL && c.timeout_ms == 5000);
    ifl_remote_cfg_free(&c);
    CHECK_EQ_I(parse("{\"kind\":\"remote\",\"api\":\"llama-infill\",\"url\":\"http://[::1]:8080\"}",
                     &c, err, sizeof err),
               BASE_OK);
    ifl_remote_cfg_free(&c);
    CHECK_EQ_I(
        parse("{\"kind\":\"remote\",\"api\":\"llama-infill\",\"url\":\"http://gpu.lan:8080\","
              "\"allowInsecure\":true}",
              &c, err, sizeof err),
        BASE_OK);
    ifl_remote_cfg_free(&c);

    refused("{\"kind\":\"gpu\"}", BASE_ERR_INVALID, "source.kind");
    refused("{\"kind\":\"remote\",\"url\":\"https://x\"}", BASE_ERR_INVALID, "source.api");
    refused("{\"kind\":\"remote\",\"api\":\"openai-nope\",\"url\":\"https://x\"}", BASE_ERR_INVALID,
            "must be one of openai-fim, openai-completions-suffix");
    refused("{\"kind\":\"remote\",\"api\":\"openai-completions-template\",\"url\":\"https://x\","
            "\"model\":\"mine\"}",
            BASE_ERR_INVALID, "names no known FIM template");
    refused("{\"kind\":\"remote\",\"api\":\"openai-completions-template\",\"url\":\"https://x\","
            "\"template\":\"nope\"}",
            BASE_ERR_INVALID, "is not one of qwen2.5-coder");
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"https://x\",\"stream\":1}",
            BASE_ERR_INVALID, "stream must be true or false");
    CHECK_EQ_I(parse("{\"kind\":\"remote\",\"api\":\"openai-completions-template\",\"url\":"
                     "\"https://x\",\"model\":\"Qwen/Qwen2.5-Coder-7B\",\"stream\":true}",
                     &c, err, sizeof err),
               BASE_OK);
    CHECK(c.tmpl != NULL && strcmp(c.tmpl->name, "qwen2.5-coder") == 0);
    CHECK(c.stream);
    ifl_remote_cfg_free(&c);
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\"}", BASE_ERR_INVALID, "source.url");
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"ftp://x/\"}", BASE_ERR_INVALID,
            "https://");
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"http://gpu.lan:8080\"}",
            BASE_ERR_INVALID, "allowInsecure");
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"https://x\",\"apiKey\":"
            "\"sk-unit-test-0123456789\"}",
            BASE_ERR_INVALID, "apiKey is not accepted");
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"https://x\",\"apiKeyEnv\":"
            "\"IFL_UNIT_NO_SUCH\"}",
            BASE_ERR_INVALID, "IFL_UNIT_NO_SUCH is not set");
    refused("{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"https://x\",\"headers\":{\"X\":"
            "\"a\\r\\nEvil: 1\"}}",
            BASE_ERR_INVALID, "one-line");

    /* Key files: 0600 accepted (trailing newline trimmed), 0644 refused. */
    char path[] = "/tmp/ifl-key-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "sk-unit-test-0123456789\n", 24) == 24);
    close(fd);
    char json[256];
    snprintf(
        json, sizeof json,
        "{\"kind\":\"remote\",\"api\":\"openai-fim\",\"url\":\"https://x\",\"apiKeyFile\":\"%s\"}",
        path);
    chmod(path, 0600);
    CHECK_EQ_I(parse(json, &c, err, sizeof err), BASE_OK);
    CHECK_STR(c.api_key, KEY);
    ifl_remote_cfg_free(&c);
    chmod(path, 0644);
    refused(json, BASE_ERR_DENIED, "chmod 600");
    chmod(path, 0640);
    refused(json, BASE_ERR_DENIED, "mode 0640");
    unlink(path);
    refused(json, BASE_ERR_IO, "apiKeyFile");
    return check_finish("test_remote_cfg");
}
