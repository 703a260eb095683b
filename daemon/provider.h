/* daemon providers: what answers completion requests.
 *
 * The daemon creates exactly one provider at start-up and shares it between
 * all sessions. The real one (daemon/provider_infill.c) runs the infill pipeline with the model on
 * its worker thread. Tests build their own test double under tests/daemon/ against the same
 * signature. */
#ifndef INFILLD_DAEMON_PROVIDER_H
#define INFILLD_DAEMON_PROVIDER_H

#include "base.h"
#include "config.h"
#include "lsp.h"

#include <stdio.h>
#include <uv.h>

/* What a provider may ask of the daemon: messages for every session (the
 * model is shared, so its status is too). Loop thread only. */
typedef struct dmn_host dmn_host;
/* infilld/status to every session that opted in. */
void dmn_host_status(dmn_host *h, const lsp_status *st);
/* window/showMessage to every session (model load failure, CUDA→CPU fallback). */
void dmn_host_show_message(dmn_host *h, int type, const char *msg);
/* Work-done progress in every session (e.g. "Loading model"); returns a
 * handle for report/end (0 when no session wants progress). */
int dmn_host_progress_begin(dmn_host *h, const char *title, const char *message);
void dmn_host_progress_report(dmn_host *h, int handle, int percent, const char *message);
void dmn_host_progress_end(dmn_host *h, int handle, const char *message);

/* Creates the provider. cfg->settings holds "model" (checkpoint folder, may be
 * null: no model) and "device" ("auto" | "cpu" | "cuda"). Loading may finish
 * asynchronously; the provider reports through host. Returns NULL with *err
 * set on failure. cfg, loop and host outlive the provider. */
lsp_provider_i *dmn_provider_new(const dmn_config *cfg, uv_loop_t *loop, dmn_host *host,
                                 base_status *err);
/* NULL-safe. Stops the worker (joining it) and frees everything. Called after
 * every session has been closed. */
void dmn_provider_free(lsp_provider_i *p);

/* The model folder the provider loads for these settings: "model" when set
 * (non-empty), else the embedded default next to the executable
 * (<exe dir>/models/infilld-tiny-code, then models/tiny-dream, also under
 * <exe dir>/../share/infilld/; the lookup `infilld complete` uses), else NULL (no model). The path
 * is written to buf when it comes from the lookup. */
const char *dmn_provider_model_dir(const json_t *settings, char *buf, size_t cap);

/* `infilld doctor`: prints to f the model these settings would use (path,
 * family, size) and the backend it runs on. */
void dmn_provider_doctor(const json_t *settings, FILE *f);

/* Latency budget defaults per trigger (docs/PROTOCOL.md, `latencyBudgetMs`). */
#define DMN_BUDGET_AUTOMATIC_MS 400
#define DMN_BUDGET_INVOKED_MS 2000
/* The budget of a request: settings' "latencyBudgetMs" (a number for both
 * triggers, or {automatic, invoked}; 0 = none), else the defaults above. */
int dmn_latency_budget_ms(const json_t *settings, bool invoked);
/* The plan of res as JSON (`--json`, infilld/status): budget, what it chose,
 * the cost model; latency_ms < 0 leaves out latencyMs / inBudget. New reference. */
struct ifl_doc_res;
json_t *dmn_plan_json(const struct ifl_doc_res *res, double latency_ms);

#endif
