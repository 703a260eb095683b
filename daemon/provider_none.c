/* daemon provider_none: used when the build has no infill pipeline
 * (daemon/provider_infill.c absent). Every completion gets an empty answer;
 * the daemon still serves documents, commands and every other method. */
#include "provider.h"

#include <stdlib.h>

typedef struct dmn__none {
    lsp_provider_i iface;
    dmn_host *host;
    bool warned;
} dmn__none;

static void dmn__none_complete(void *ud, lsp_server *srv, const lsp_completion_req *req) {
    dmn__none *n = ud;
    if (!n->warned) {
        BASE_LOGW("dmn", "no model pipeline in this build: completions are empty");
        n->warned = true;
    }
    lsp_server_complete(srv, req->token, NULL, 0, BASE_OK, NULL);
}

static void dmn__none_cancel(void *ud, lsp_server *srv, lsp_token token) {
    (void)ud;
    (void)srv;
    (void)token;
}

lsp_provider_i *dmn_provider_new(const dmn_config *cfg, uv_loop_t *loop, dmn_host *host,
                                 base_status *err) {
    (void)cfg;
    (void)loop;
    dmn__none *n = calloc(1, sizeof(*n));
    if (!n) {
        if (err)
            *err = BASE_ERR_NOMEM;
        return NULL;
    }
    n->host = host;
    n->iface.complete = dmn__none_complete;
    n->iface.cancel = dmn__none_cancel;
    n->iface.ud = n;
    if (err)
        *err = BASE_OK;
    return &n->iface;
}

void dmn_provider_free(lsp_provider_i *p) { free(p ? p->ud : NULL); }

const char *dmn_provider_model_dir(const json_t *settings, char *buf, size_t cap) {
    (void)buf;
    (void)cap;
    return dmn_config_model(settings);
}

void dmn_provider_doctor(const json_t *settings, FILE *f) {
    const char *m = dmn_provider_model_dir(settings, NULL, 0);
    fprintf(f, "model: %s (not loaded: no model pipeline in this build)\n", m ? m : "(none)");
    fprintf(f, "backend: none\n");
}
