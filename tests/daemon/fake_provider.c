/* Test double for the completion provider (tests only, never in the product
 * binary). Answers with fixed text after an optional delay, in `steps`
 * timer ticks that each send infilld/partial, and honours cancellation
 * between ticks. Controlled per session through the settings object "fake":
 *   {"text": "fake()", "delayMs": 0, "steps": 0, "fail": null, "failRange": false}
 * "fail" ends the request with BASE_ERR_MODEL and that message; "failRange"
 * with BASE_ERR_RANGE and no message, as the real pipeline reported a model
 * token it could not decode.
 * Inline / completion: inserts text at the cursor (or extends the
 * selectedCompletionInfo text over its range). Regenerate / code action:
 * replaces the selection with "REGENERATED". A "model" change in configure
 * simulates a reload: progress, infilld/status and window/showMessage; the
 * model name "fail" simulates a load failure. */
#include "provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_job {
    struct fake_job *next;
    struct fake_provider *fp;
    lsp_server *srv;
    lsp_token token;
    lsp_completion_item item;
    char *text;
    int step, steps;
    bool want_partial;
    char *fail;
    bool fail_range;
    uv_timer_t timer;
} fake_job;

typedef struct fake_provider {
    lsp_provider_i iface;
    uv_loop_t *loop;
    dmn_host *host;
    fake_job *jobs;
    char *model;
    bool configured;
} fake_provider;

static void job_closed(uv_handle_t *h) {
    fake_job *j = h->data;
    free(j->text);
    free(j->fail);
    free(j);
}

static void job_remove(fake_job *j) {
    for (fake_job **pp = &j->fp->jobs; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            break;
        }
    uv_timer_stop(&j->timer);
    uv_close((uv_handle_t *)&j->timer, job_closed);
}

static void job_finish(fake_job *j) {
    if (j->fail_range)
        lsp_server_complete(j->srv, j->token, NULL, 0, BASE_ERR_RANGE, NULL);
    else if (j->fail)
        lsp_server_complete(j->srv, j->token, NULL, 0, BASE_ERR_MODEL, j->fail);
    else
        lsp_server_complete(j->srv, j->token, &j->item, 1, BASE_OK, NULL);
}

static void job_tick(uv_timer_t *t) {
    fake_job *j = t->data;
    j->step++;
    if (j->step < j->steps) {
        if (j->want_partial) {
            /* The partial text: the final text with its tail still masked. */
            size_t n = j->item.len * (size_t)j->step / (size_t)j->steps;
            char buf[512];
            snprintf(buf, sizeof(buf), "%.*s%s", (int)n, j->item.text,
                     n < j->item.len ? "\xE2\x96\x91" : "");
            lsp_server_partial(j->srv, j->token, buf, strlen(buf), j->item.start, j->item.end,
                               j->step, j->steps);
        }
        return;
    }
    job_finish(j);
    job_remove(j);
}

static void fake_complete(void *ud, lsp_server *srv, const lsp_completion_req *req) {
    fake_provider *fp = ud;
    const json_t *cfg = json_object_get(req->opts->all, "fake");
    const char *text = json_string_value(json_object_get(cfg, "text"));
    json_int_t delay = json_integer_value(json_object_get(cfg, "delayMs"));
    json_int_t steps = json_integer_value(json_object_get(cfg, "steps"));
    const char *fail = json_string_value(json_object_get(cfg, "fail"));
    if (!text)
        text = "fake()";
    fake_job *j = calloc(1, sizeof(*j));
    if (!j) {
        lsp_server_complete(srv, req->token, NULL, 0, BASE_ERR_NOMEM, NULL);
        return;
    }
    j->fp = fp;
    j->srv = srv;
    j->token = req->token;
    j->want_partial = req->want_partial;
    j->fail = fail ? strdup(fail) : NULL;
    j->fail_range = json_is_true(json_object_get(cfg, "failRange"));
    j->item.confidence = 0.75;
    if (req->kind == LSP_REQ_REGENERATE || req->kind == LSP_REQ_CODE_ACTION) {
        j->text = strdup("REGENERATED");
        j->item.start = req->sel_start;
        j->item.end = req->sel_end;
    } else if (req->has_selected) {
        size_t n = req->selected_len + strlen(text);
        j->text = malloc(n + 1);
        if (j->text)
            snprintf(j->text, n + 1, "%.*s%s", (int)req->selected_len, req->selected_text, text);
        j->item.start = req->selected_start;
        j->item.end = req->selected_end;
    } else {
        j->text = strdup(text);
        j->item.start = j->item.end = req->cursor;
    }
    j->item.text = j->text ? j->text : "";
    j->item.len = strlen(j->item.text);
    if (delay <= 0 && steps <= 0) {
        job_finish(j);
        free(j->text);
        free(j->fail);
        free(j);
        return;
    }
    j->steps = steps > 0 ? (int)steps : 1;
    uv_timer_init(fp->loop, &j->timer);
    j->timer.data = j;
    j->next = fp->jobs;
    fp->jobs = j;
    uint64_t per = (uint64_t)(delay > 0 ? delay : 1) / (uint64_t)j->steps;
    uv_timer_start(&j->timer, job_tick, per ? per : 1, per ? per : 1);
}

static void fake_cancel(void *ud, lsp_server *srv, lsp_token token) {
    fake_provider *fp = ud;
    for (fake_job *j = fp->jobs; j; j = j->next)
        if (j->srv == srv && j->token == token) {
            job_remove(j);
            return;
        }
}

static void fake_accepted(void *ud, lsp_server *srv, lsp_token id, uint32_t len) {
    (void)ud;
    char msg[128];
    snprintf(msg, sizeof(msg), "fake: accepted requestId=%llu acceptedLength=%u",
             (unsigned long long)id, len);
    lsp_server_log_message(srv, LSP_MSG_INFO, msg);
}

static base_status fake_configure(void *ud, const json_t *settings) {
    fake_provider *fp = ud;
    const char *m = json_string_value(json_object_get(settings, "model"));
    bool changed = (m == NULL) != (fp->model == NULL) || (m && strcmp(m, fp->model) != 0);
    if (!changed)
        return BASE_OK;
    free(fp->model);
    fp->model = m ? strdup(m) : NULL;
    if (!m)
        return BASE_OK;
    BASE_LOGI("fake", "model set to %s", m); /* an info line for log forwarding tests */
    int h = dmn_host_progress_begin(fp->host, "Loading model", m);
    lsp_status st = {.model = m, .device = "cpu", .state = "loading", .last_latency_ms = -1};
    dmn_host_status(fp->host, &st);
    if (strcmp(m, "fail") == 0) {
        dmn_host_progress_end(fp->host, h, "failed");
        st.state = "error";
        dmn_host_status(fp->host, &st);
        dmn_host_show_message(fp->host, LSP_MSG_ERROR, "infilld: model 'fail' failed to load");
        return BASE_OK;
    }
    dmn_host_progress_end(fp->host, h, "loaded");
    st.state = "ready";
    dmn_host_status(fp->host, &st);
    char msg[256];
    snprintf(msg, sizeof(msg), "fake: loaded model %s", m);
    dmn_host_show_message(fp->host, LSP_MSG_INFO, msg);
    return BASE_OK;
}

static void fake_session_close(void *ud, lsp_server *srv) {
    fake_provider *fp = ud;
    for (fake_job *j = fp->jobs, *next; j; j = next) {
        next = j->next;
        if (j->srv == srv)
            job_remove(j);
    }
}

lsp_provider_i *dmn_provider_new(const dmn_config *cfg, uv_loop_t *loop, dmn_host *host,
                                 base_status *err) {
    fake_provider *fp = calloc(1, sizeof(*fp));
    if (!fp) {
        *err = BASE_ERR_NOMEM;
        return NULL;
    }
    fp->loop = loop;
    fp->host = host;
    const char *m = json_string_value(json_object_get(cfg->settings, "model"));
    fp->model = m ? strdup(m) : NULL;
    fp->iface.complete = fake_complete;
    fp->iface.cancel = fake_cancel;
    fp->iface.accepted = fake_accepted;
    fp->iface.configure = fake_configure;
    fp->iface.session_close = fake_session_close;
    fp->iface.ud = fp;
    *err = BASE_OK;
    return &fp->iface;
}

void dmn_provider_free(lsp_provider_i *p) {
    if (!p)
        return;
    fake_provider *fp = p->ud;
    while (fp->jobs)
        job_remove(fp->jobs);
    free(fp->model);
    free(fp);
}

const char *dmn_provider_model_dir(const json_t *settings, char *buf, size_t cap) {
    (void)buf;
    (void)cap;
    return dmn_config_model(settings);
}

void dmn_provider_doctor(const json_t *settings, FILE *f) {
    const char *m = dmn_provider_model_dir(settings, NULL, 0);
    fprintf(f, "model: %s (test double)\nbackend: fake\n", m ? m : "(none)");
}
