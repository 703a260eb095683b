/* Dynamic registration of inline completion (LSP 3.18): a client that asks
 * for it gets no static provider and a client/registerCapability after
 * `initialized`; a settings change unregisters / re-registers; a refusal is
 * shown once; a static client gets the static provider and no request. */
#include "check.h"
#include "lsp.h"
#include "lsp_test_io.h"

#include <stdlib.h>
#include <string.h>

/* The policy under test: "enabled": false switches inline completion off;
 * "onlyPython": true narrows the selector to Python documents. */
static bool selector_hook(void *ud, lsp_server *srv, json_t **sel) {
    (void)ud;
    const json_t *st = lsp_server_settings(srv);
    if (json_is_false(json_object_get(st, "enabled")))
        return false;
    if (json_is_true(json_object_get(st, "onlyPython")))
        *sel = json_pack("[{s:s}]", "language", "python");
    return true;
}

static const char *method(json_t *m) { return json_string_value(json_object_get(m, "method")); }

/* Initializes a session; returns the initialize result's capabilities
 * (new reference) in *caps. */
static lsp_server *start(bool dynamic, bool with_hook, json_t **caps) {
    lsp_server_hooks h = {.write = lsp_test_write,
                          .inline_selector = with_hook ? selector_hook : NULL};
    lsp_provider_i p = {.complete = lsp_test_no_complete, .cancel = lsp_test_no_cancel};
    lsp_server *s = lsp_server_new(&h, &p, NULL, NULL);
    CHECK(s != NULL);
    char msg[512];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"processId\":"
             "null,\"capabilities\":{\"textDocument\":{\"inlineCompletion\":{"
             "\"dynamicRegistration\":%s}}}}}",
             dynamic ? "true" : "false");
    lsp_test_send(s, msg);
    json_t *msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    *caps = json_incref(
        json_object_get(json_object_get(json_array_get(msgs, 0), "result"), "capabilities"));
    json_decref(msgs);
    return s;
}

static void configure(lsp_server *s, const char *settings) {
    char msg[512];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\":\"2.0\",\"method\":\"workspace/didChangeConfiguration\",\"params\":{"
             "\"settings\":%s}}",
             settings);
    lsp_test_send(s, msg);
}

/* The registration in a registerCapability request. */
static json_t *registration(json_t *m) {
    return json_array_get(json_object_get(json_object_get(m, "params"), "registrations"), 0);
}

static void test_dynamic(void) {
    json_t *caps;
    lsp_server *s = start(true, true, &caps);
    CHECK(json_object_get(caps, "inlineCompletionProvider") == NULL);
    CHECK(json_object_get(caps, "completionProvider") != NULL);
    json_decref(caps);

    /* Nothing is registered before `initialized`. */
    configure(s, "{\"onlyPython\":false}");
    json_t *msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);

    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    json_t *m = json_array_get(msgs, 0);
    CHECK_STR(method(m), "client/registerCapability");
    json_int_t reg_id1 = json_integer_value(json_object_get(m, "id"));
    json_t *r = registration(m);
    CHECK_STR(json_string_value(json_object_get(r, "method")), "textDocument/inlineCompletion");
    json_t *sel = json_object_get(json_object_get(r, "registerOptions"), "documentSelector");
    CHECK(sel != NULL && json_is_null(sel));
    char first_id[128];
    snprintf(first_id, sizeof(first_id), "%s", json_string_value(json_object_get(r, "id")));
    CHECK(first_id[0] != '\0');
    json_decref(msgs);

    /* The client accepts: nothing more is said. */
    char resp[256];
    snprintf(resp, sizeof(resp), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":null}",
             (long long)reg_id1);
    lsp_test_send(s, resp);
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);

    /* A settings change that leaves the selector alone sends nothing. */
    configure(s, "{\"seed\":3}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);

    /* A narrower selector: unregister the old registration, register anew. */
    configure(s, "{\"onlyPython\":true}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 2);
    m = json_array_get(msgs, 0);
    CHECK_STR(method(m), "client/unregisterCapability");
    json_t *u =
        json_array_get(json_object_get(json_object_get(m, "params"), "unregisterations"), 0);
    CHECK_STR(json_string_value(json_object_get(u, "id")), first_id);
    CHECK_STR(json_string_value(json_object_get(u, "method")), "textDocument/inlineCompletion");
    m = json_array_get(msgs, 1);
    CHECK_STR(method(m), "client/registerCapability");
    r = registration(m);
    CHECK(strcmp(json_string_value(json_object_get(r, "id")), first_id) != 0);
    sel = json_object_get(json_object_get(r, "registerOptions"), "documentSelector");
    CHECK_STR(json_string_value(json_object_get(json_array_get(sel, 0), "language")), "python");
    json_decref(msgs);

    /* Switched off: unregister only; off again: nothing; on: register. */
    configure(s, "{\"enabled\":false}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    CHECK_STR(method(json_array_get(msgs, 0)), "client/unregisterCapability");
    json_decref(msgs);
    configure(s, "{\"enabled\":false,\"seed\":1}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);
    configure(s, "{\"enabled\":true}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    m = json_array_get(msgs, 0);
    CHECK_STR(method(m), "client/registerCapability");
    json_int_t reg_id3 = json_integer_value(json_object_get(m, "id"));
    json_decref(msgs);

    /* The client refuses: a warning is shown once, and the registration is
     * gone, so a later change registers again instead of unregistering. */
    snprintf(resp, sizeof(resp),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
             (long long)reg_id3);
    lsp_test_send(s, resp);
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    m = json_array_get(msgs, 0);
    CHECK_STR(method(m), "window/showMessage");
    CHECK_EQ_I(json_integer_value(json_object_get(json_object_get(m, "params"), "type")), 2);
    json_decref(msgs);
    configure(s, "{\"onlyPython\":true}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    m = json_array_get(msgs, 0);
    CHECK_STR(method(m), "client/registerCapability");
    json_int_t reg_id4 = json_integer_value(json_object_get(m, "id"));
    json_decref(msgs);
    snprintf(resp, sizeof(resp),
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
             (long long)reg_id4);
    lsp_test_send(s, resp);
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0); /* shown once only */
    json_decref(msgs);

    /* After shutdown nothing is (un)registered. */
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"shutdown\"}");
    json_decref(lsp_test_drain(&lsp_test_out));
    json_t *off = json_pack("{s:b}", "enabled", 0);
    lsp_server_set_settings(s, off);
    json_decref(off);
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);
    lsp_server_free(s);
}

static void test_static(void) {
    json_t *caps;
    lsp_server *s = start(false, true, &caps);
    CHECK(json_is_true(json_object_get(caps, "inlineCompletionProvider")));
    json_decref(caps);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}");
    configure(s, "{\"enabled\":false}");
    configure(s, "{\"enabled\":true}");
    json_t *msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);
    lsp_server_free(s);

    /* Without the hook a dynamic client is registered for every document. */
    s = start(true, false, &caps);
    json_decref(caps);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    CHECK_STR(method(json_array_get(msgs, 0)), "client/registerCapability");
    json_decref(msgs);
    lsp_server_free(s);
}

int main(void) {
    base_log_set_level(BASE_LOG_OFF);
    base_buf_init(&lsp_test_out);
    test_dynamic();
    test_static();
    base_buf_deinit(&lsp_test_out);
    return check_finish("test_registration");
}
