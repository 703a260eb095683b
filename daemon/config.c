/* daemon configuration: command line, config file, session overlays, and the
 * exclude / per-language policy deciding which buffers may reach a model. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Files that must never be sent to a model, whatever the user configures
 * (switch off only with "excludeDefaults": false). */
static const char *const dmn__default_excludes[] = {
    ".env", ".env.*", "*.pem", "*.key", "id_*", "*.p12", "*.pfx", ".netrc", ".pgpass",
};

json_t *dmn_config_defaults(void) {
    json_t *ex = json_array();
    for (size_t i = 0; i < BASE_ARRAY_LEN(dmn__default_excludes); i++)
        json_array_append_new(ex, json_string(dmn__default_excludes[i]));
    return json_pack("{s:n,s:s,s:o,s:b,s:{},s:b,s:b,s:b,s:s}", "model", "device", "auto", "exclude",
                     ex, "excludeDefaults", 1, "languages", "enabled", 1, "partial", 0, "status", 0,
                     "clientLogLevel", "warn");
}

/* Applies layer onto dst: top-level keys replace, except "languages" (merged
 * per language) and "exclude" (lists add up, so a layer cannot silently drop
 * the secret-file defaults). */
static void dmn__merge(json_t *dst, const json_t *layer) {
    const char *k;
    json_t *v;
    if (!json_is_object(layer))
        return;
    json_object_foreach((json_t *)layer, k, v) {
        if (strcmp(k, "languages") == 0 && json_is_object(v)) {
            json_t *l = json_object_get(dst, "languages");
            if (!json_is_object(l)) {
                l = json_object();
                json_object_set_new(dst, "languages", l);
            }
            const char *lk;
            json_t *lv;
            json_object_foreach(v, lk, lv) {
                json_t *cur = json_object_get(l, lk);
                if (json_is_object(cur) && json_is_object(lv))
                    json_object_update(cur, lv);
                else
                    json_object_set_new(l, lk, json_deep_copy(lv));
            }
        } else if (strcmp(k, "exclude") == 0 && json_is_array(v)) {
            json_t *ex = json_object_get(dst, "exclude");
            if (!json_is_array(ex)) {
                ex = json_array();
                json_object_set_new(dst, "exclude", ex);
            }
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                if (json_is_string(e))
                    json_array_append(ex, e);
            }
        } else {
            json_object_set_new(dst, k, json_deep_copy(v));
        }
    }
}

json_t *dmn_config_effective(const dmn_config *cfg, const json_t *overlay) {
    json_t *e = dmn_config_defaults();
    if (!e)
        return NULL;
    if (cfg)
        dmn__merge(e, cfg->file);
    /* VS Code sends didChangeConfiguration settings wrapped in their section. */
    const json_t *o = overlay;
    if (json_is_object(json_object_get(overlay, "infilld")))
        o = json_object_get(overlay, "infilld");
    dmn__merge(e, o);
    if (cfg)
        dmn__merge(e, cfg->cli);
    /* The session token is a secret, not a setting. */
    json_object_del(e, "token");
    if (json_is_false(json_object_get(e, "excludeDefaults"))) {
        json_t *ex = json_object_get(e, "exclude");
        for (size_t i = 0; i < BASE_ARRAY_LEN(dmn__default_excludes) && json_array_size(ex); i++)
            json_array_remove(ex, 0);
    }
    return e;
}

static int dmn__hex(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool dmn_config_allows(const json_t *settings, const char *uri, const char *language_id) {
    if (!uri)
        return false;
    if (json_is_false(json_object_get(settings, "enabled")))
        return false;
    json_t *lang =
        json_object_get(json_object_get(settings, "languages"), language_id ? language_id : "");
    if (json_is_false(lang) || json_is_false(json_object_get(lang, "enabled")))
        return false;
    /* The uri's path, percent-decoded. */
    const char *p = strstr(uri, "://");
    p = p ? p + 3 : (strchr(uri, ':') ? strchr(uri, ':') + 1 : uri);
    if (strncmp(uri, "file://", 7) == 0) {
        const char *slash = strchr(p, '/'); /* skip an authority */
        p = slash ? slash : p;
    }
    size_t n = strlen(p);
    char *path = malloc(n + 1);
    if (!path)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '%' && i + 2 < n + 0 && dmn__hex(p[i + 1]) >= 0 && dmn__hex(p[i + 2]) >= 0) {
            path[k++] = (char)(dmn__hex(p[i + 1]) * 16 + dmn__hex(p[i + 2]));
            i += 2;
        } else if (p[i] == '?' || p[i] == '#') {
            break;
        } else {
            path[k++] = p[i];
        }
    }
    path[k] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    bool ok = true;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(settings, "exclude"), i, g) {
        const char *glob = json_string_value(g);
        if (!glob)
            continue;
        /* A glob with a slash matches the whole path, others the file name. */
        if (strchr(glob, '/') ? fnmatch(glob, path, 0) == 0 : fnmatch(glob, base, 0) == 0) {
            ok = false;
            break;
        }
    }
    free(path);
    return ok;
}

bool dmn_config_inline_selector(const json_t *settings, json_t **selector) {
    (void)selector;
    return !json_is_false(json_object_get(settings, "enabled"));
}

static char *dmn__dup(const char *s) { return s ? strdup(s) : NULL; }

static base_status dmn__read_json(const char *path, json_t **out, char *err, size_t err_len) {
    json_error_t je;
    *out = json_load_file(path, 0, &je);
    if (!*out) {
        snprintf(err, err_len, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return BASE_ERR_PARSE;
    }
    if (!json_is_object(*out)) {
        snprintf(err, err_len, "%s: the configuration must be a JSON object", path);
        json_decref(*out);
        *out = NULL;
        return BASE_ERR_PARSE;
    }
    return BASE_OK;
}

/* Reads the token file; the token is its first line without whitespace. */
static base_status dmn__read_token(dmn_config *cfg, char *err, size_t err_len) {
    char *text = NULL;
    size_t len = 0;
    base_status st = base_read_file(cfg->token_file, &text, &len);
    if (st != BASE_OK) {
        snprintf(err, err_len, "--token-file %s: %s", cfg->token_file, base_status_str(st));
        return BASE_ERR_INVALID;
    }
    size_t a = 0, b = 0;
    while (a < len && isspace((unsigned char)text[a]))
        a++;
    b = a;
    while (b < len && !isspace((unsigned char)text[b]))
        b++;
    if (b - a < 8) {
        free(text);
        snprintf(err, err_len, "--token-file %s: the token must have at least 8 characters",
                 cfg->token_file);
        return BASE_ERR_INVALID;
    }
    text[b] = '\0';
    cfg->token = strdup(text + a);
    free(text);
    return cfg->token ? BASE_OK : BASE_ERR_NOMEM;
}

base_status dmn_config_parse(dmn_config *cfg, int argc, char **argv, bool *exit_now, char *err,
                             size_t err_len) {
    memset(cfg, 0, sizeof(*cfg));
    *exit_now = false;
    err[0] = '\0';
    cfg->cli = json_object();
    if (!cfg->cli)
        return BASE_ERR_NOMEM;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = true;
        if (strcmp(a, "--model") == 0 && v) {
            json_object_set_new(cfg->cli, "model", json_string(v));
        } else if (strcmp(a, "--device") == 0 && v) {
            if (strcmp(v, "auto") && strcmp(v, "cpu") && strcmp(v, "cuda")) {
                snprintf(err, err_len, "--device must be auto, cpu or cuda (not '%s')", v);
                return BASE_ERR_INVALID;
            }
            json_object_set_new(cfg->cli, "device", json_string(v));
        } else if (strcmp(a, "--log-file") == 0 && v) {
            free(cfg->log_file);
            cfg->log_file = dmn__dup(v);
        } else if (strcmp(a, "--log-level") == 0 && v) {
            base_log_level lv;
            if (!base_log_level_parse(v, &lv)) {
                snprintf(err, err_len,
                         "--log-level must be trace, debug, info, warn, error or off (not '%s')",
                         v);
                return BASE_ERR_INVALID;
            }
            free(cfg->log_level);
            cfg->log_level = dmn__dup(v);
        } else if (strcmp(a, "--listen") == 0 && v) {
            free(cfg->listen);
            cfg->listen = dmn__dup(v);
        } else if (strcmp(a, "--token-file") == 0 && v) {
            free(cfg->token_file);
            cfg->token_file = dmn__dup(v);
        } else if (strcmp(a, "--config") == 0 && v) {
            free(cfg->config_file);
            cfg->config_file = dmn__dup(v);
        } else if (strcmp(a, "--max-message") == 0 && v) {
            char *end;
            errno = 0;
            unsigned long long x = strtoull(v, &end, 10);
            if (errno || *end || x < 64 || v[0] == '-') {
                snprintf(err, err_len, "--max-message must be a byte count >= 64 (not '%s')", v);
                return BASE_ERR_INVALID;
            }
            cfg->max_message = (size_t)x;
        } else {
            takes = false;
            if (strcmp(a, "--allow-remote") == 0) {
                cfg->allow_remote = true;
            } else if (strcmp(a, "--stdio") == 0) {
                /* vscode-languageclient passes this for the stdio transport;
                 * with --listen it adds a stdio session next to TCP. */
                cfg->stdio = true;
            } else if (strcmp(a, "--version") == 0 || strcmp(a, "--help") == 0 ||
                       strcmp(a, "-h") == 0) {
                *exit_now = true;
            } else {
                snprintf(err, err_len, "unknown option or missing value: %s", a);
                return BASE_ERR_INVALID;
            }
        }
        if (takes)
            i++;
    }
    if (*exit_now)
        return BASE_OK;
    if (cfg->allow_remote && !cfg->token_file) {
        snprintf(err, err_len, "--allow-remote needs --token-file");
        return BASE_ERR_INVALID;
    }
    if (cfg->token_file) {
        base_status st = dmn__read_token(cfg, err, err_len);
        if (st != BASE_OK)
            return st;
    }
    /* The config file: explicit, else $XDG_CONFIG_HOME (or ~/.config). */
    char path[4096];
    bool explicit_file = cfg->config_file != NULL;
    if (explicit_file) {
        snprintf(path, sizeof(path), "%s", cfg->config_file);
    } else {
        const char *xdg = getenv("XDG_CONFIG_HOME");
        const char *home = getenv("HOME");
        if (xdg && xdg[0])
            snprintf(path, sizeof(path), "%s/infilld/config.json", xdg);
        else if (home && home[0])
            snprintf(path, sizeof(path), "%s/.config/infilld/config.json", home);
        else
            path[0] = '\0';
    }
    FILE *f = path[0] ? fopen(path, "rb") : NULL;
    if (f) {
        fclose(f);
        base_status st = dmn__read_json(path, &cfg->file, err, err_len);
        if (st != BASE_OK)
            return BASE_ERR_INVALID;
        if (!cfg->config_file)
            cfg->config_file = dmn__dup(path);
    } else if (explicit_file) {
        snprintf(err, err_len, "--config %s: %s", path, strerror(errno));
        return BASE_ERR_INVALID;
    }
    /* Logging options may also come from the file; the command line wins. */
    const char *fl = json_string_value(json_object_get(cfg->file, "logLevel"));
    if (!cfg->log_level && fl)
        cfg->log_level = dmn__dup(fl);
    const char *ff = json_string_value(json_object_get(cfg->file, "logFile"));
    if (!cfg->log_file && ff)
        cfg->log_file = dmn__dup(ff);
    json_t *fm = json_object_get(cfg->file, "maxMessage");
    if (!cfg->max_message && json_is_integer(fm) && json_integer_value(fm) >= 64)
        cfg->max_message = (size_t)json_integer_value(fm);
    cfg->settings = dmn_config_effective(cfg, NULL);
    return cfg->settings ? BASE_OK : BASE_ERR_NOMEM;
}

void dmn_config_deinit(dmn_config *cfg) {
    if (!cfg)
        return;
    free(cfg->listen);
    free(cfg->token_file);
    if (cfg->token) {
        memset(cfg->token, 0, strlen(cfg->token));
        free(cfg->token);
    }
    free(cfg->log_file);
    free(cfg->log_level);
    free(cfg->config_file);
    json_decref(cfg->settings);
    json_decref(cfg->cli);
    json_decref(cfg->file);
    memset(cfg, 0, sizeof(*cfg));
}

const char *dmn_config_model(const json_t *settings) {
    const char *m = json_string_value(json_object_get(settings, "model"));
    return m && *m ? m : NULL;
}
