/* lsp_server in process, with a recording provider: lifecycle, encodings,
 * supersession, cancellation, answer shapes, commands and error paths. */
#include "check.h"
#include "lsp.h"
#include "lsp_test_io.h"

#include <stdlib.h>
#include <string.h>

static int exit_code = -1;

static lsp_token tokens[64];
static lsp_completion_req reqs[64];
static size_t cursors[64];
static int n_reqs, n_cancels, n_accepted, n_open, n_close;
static lsp_token cancelled[64];
static uint32_t accepted_len;

static void on_exit_hook(void *ud, lsp_server *s, int code) {
    (void)ud;
    (void)s;
    exit_code = code;
}
static void p_complete(void *ud, lsp_server *s, const lsp_completion_req *r) {
    (void)ud;
    (void)s;
    tokens[n_reqs] = r->token;
    reqs[n_reqs] = *r;
    cursors[n_reqs] = r->cursor;
    n_reqs++;
}
static void p_cancel(void *ud, lsp_server *s, lsp_token t) {
    (void)ud;
    (void)s;
    cancelled[n_cancels++] = t;
}
static void p_accepted(void *ud, lsp_server *s, lsp_token t, uint32_t len) {
    (void)ud;
    (void)s;
    (void)t;
    n_accepted++;
    accepted_len = len;
}
static void p_open(void *ud, lsp_server *s) {
    (void)ud;
    (void)s;
    n_open++;
}
static void p_close(void *ud, lsp_server *s) {
    (void)ud;
    (void)s;
    n_close++;
}

/* The one message of the drain, with this id; decref'd by the caller. */
static json_t *reply(void) {
    json_t *a = lsp_test_drain(&lsp_test_out);
    json_t *m = json_array_size(a) ? json_incref(json_array_get(a, json_array_size(a) - 1)) : NULL;
    json_decref(a);
    return m;
}

static long long err_code(json_t *m) {
    return json_integer_value(json_object_get(json_object_get(m, "error"), "code"));
}

static lsp_server *new_server(void) {
    lsp_server_hooks h = {.write = lsp_test_write, .exit = on_exit_hook};
    lsp_provider_i p = {.complete = p_complete,
                        .cancel = p_cancel,
                        .accepted = p_accepted,
                        .session_open = p_open,
                        .session_close = p_close};
    base_status st;
    lsp_server *s = lsp_server_new(&h, &p, NULL, &st);
    CHECK(s != NULL);
    return s;
}

static void test_lifecycle(void) {
    lsp_server *s = new_server();
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"textDocument/completion\",\"params\":{}}");
    json_t *m = reply();
    CHECK_EQ_I(err_code(m), -32002);
    json_decref(m);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"capabilities\":"
           "{\"general\":{\"positionEncodings\":[\"utf-32\"]}}}}");
    m = reply();
    CHECK_STR(
        json_string_value(json_object_get(
            json_object_get(json_object_get(m, "result"), "capabilities"), "positionEncoding")),
        "utf-32");
    json_decref(m);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32600);
    json_decref(m);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"shutdown\"}");
    m = reply();
    CHECK(json_is_null(json_object_get(m, "result")));
    json_decref(m);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"infilld/viewFileText\",\"params\":{}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32600);
    json_decref(m);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
    CHECK_EQ_I(exit_code, 0);
    CHECK(lsp_server_exited(s));
    lsp_server_free(s);
    CHECK_EQ_I(n_close, 1);

    /* exit without shutdown → 1 */
    s = new_server();
    exit_code = -1;
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
    CHECK_EQ_I(exit_code, 1);
    lsp_server_free(s);
    json_decref(lsp_test_drain(&lsp_test_out));
}

static lsp_server *ready(const char *encs, const char *init_opts) {
    lsp_server *s = new_server();
    char msg[1024];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"processId\":"
             "null,\"capabilities\":{\"general\":{\"positionEncodings\":%s},\"workspace\":{"
             "\"applyEdit\":true},\"window\":{\"workDoneProgress\":true},\"textDocument\":{"
             "\"codeAction\":{\"resolveSupport\":{\"properties\":[\"edit\"]}}}},"
             "\"initializationOptions\":%s}}",
             encs, init_opts);
    lsp_test_send(s, msg);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}");
    /* "héllo 😀 wörld" on line 1 */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"textDocument\":"
           "{\"uri\":\"file:///t.py\",\"languageId\":\"python\",\"version\":1,\"text\":"
           "\"x = 1\\nh\\u00e9llo \\ud83d\\ude00 w\\u00f6rld\\n\"}}}");
    json_decref(lsp_test_drain(&lsp_test_out));
    return s;
}

static void test_inline(void) {
    lsp_server *s = ready("[\"utf-16\"]", "{\"partial\":true,\"status\":true}");
    n_reqs = n_cancels = 0;
    /* UTF-16 character 9 on line 1 is after "héllo 😀 " (h é l l o ␣ 😀=2 ␣). */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"textDocument/inlineCompletion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":1,\"character\":"
           "9},\"context\":{\"triggerKind\":2}}}");
    CHECK_EQ_I(n_reqs, 1);
    CHECK_EQ_U(cursors[0], 6 + strlen("h\xC3\xA9llo \xF0\x9F\x98\x80 "));
    CHECK(!reqs[0].invoked);
    CHECK(reqs[0].want_partial);
    /* A newer request for the same document supersedes: null answer + cancel. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"textDocument/inlineCompletion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":1,\"character\":"
           "9},\"context\":{\"triggerKind\":1}}}");
    json_t *m = reply();
    CHECK_EQ_I(json_integer_value(json_object_get(m, "id")), 10);
    CHECK(json_is_null(json_object_get(m, "result")));
    json_decref(m);
    CHECK_EQ_I(n_cancels, 1);
    CHECK_EQ_U(cancelled[0], tokens[0]);
    CHECK_EQ_I(n_reqs, 2);
    CHECK(reqs[1].invoked);
    /* Answering the old token is ignored. */
    CHECK_EQ_I(lsp_server_complete(s, tokens[0], NULL, 0, BASE_OK, NULL), BASE_ERR_NOT_FOUND);
    /* Partial, then the final answer, whose range converts back to UTF-16. */
    size_t c = cursors[1];
    CHECK_EQ_I(lsp_server_partial(s, tokens[1], "w?", 2, c, c, 1, 4), BASE_OK);
    m = reply();
    CHECK_STR(json_string_value(json_object_get(m, "method")), "infilld/partial");
    CHECK_EQ_I(json_integer_value(json_object_get(json_object_get(m, "params"), "step")), 1);
    json_decref(m);
    lsp_completion_item items[3] = {
        {.text = "w\xC3\xB6rld()", .len = 8, .start = c, .end = c, .confidence = -1},
        /* replaces text after the cursor: dropped */
        {.text = "zz", .len = 2, .start = c, .end = c + 2, .confidence = -1},
        /* replaces "😀 " before the cursor, which the text starts with: kept */
        {.text = "\xF0\x9F\x98\x80 go", .len = 7, .start = c - 5, .end = c, .confidence = -1},
    };
    CHECK_EQ_I(lsp_server_complete(s, tokens[1], items, 3, BASE_OK, NULL), BASE_OK);
    json_t *a = lsp_test_drain(&lsp_test_out);
    m = json_array_get(a, json_array_size(a) - 1);
    json_t *its = json_object_get(json_object_get(m, "result"), "items");
    CHECK_EQ_U(json_array_size(its), 2);
    json_t *r0 = json_object_get(json_array_get(its, 0), "range");
    CHECK_EQ_I(json_integer_value(json_object_get(json_object_get(r0, "start"), "character")), 9);
    json_t *r1 = json_object_get(json_array_get(its, 1), "range");
    CHECK_EQ_I(json_integer_value(json_object_get(json_object_get(r1, "start"), "character")), 6);
    CHECK_STR(json_string_value(
                  json_object_get(json_object_get(json_array_get(its, 0), "command"), "command")),
              "infilld.accepted");
    json_decref(a);
    /* selectedCompletionInfo: "wö" typed, menu item "wörld"; a plain
     * insertion continuing it is rewritten over the selected range, one
     * that does not is dropped. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"textDocument/inlineCompletion\","
           "\"params\":{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":1,"
           "\"character\":11},\"context\":{\"triggerKind\":1,\"selectedCompletionInfo\":{"
           "\"range\":{\"start\":{\"line\":1,\"character\":9},\"end\":{\"line\":1,"
           "\"character\":11}},\"text\":\"w\u00f6rld\"}}}}");
    CHECK(reqs[n_reqs - 1].has_selected);
    size_t cur = reqs[n_reqs - 1].cursor;
    CHECK_EQ_U(reqs[n_reqs - 1].selected_end, cur);
    CHECK_EQ_U(reqs[n_reqs - 1].selected_start, cur - 3);
    lsp_completion_item sel[2] = {
        {.text = "rld = 1", .len = 7, .start = cur, .end = cur, .confidence = -1},
        {.text = "x", .len = 1, .start = cur, .end = cur, .confidence = -1},
    };
    lsp_server_complete(s, tokens[n_reqs - 1], sel, 2, BASE_OK, NULL);
    m = reply();
    its = json_object_get(json_object_get(m, "result"), "items");
    CHECK_EQ_U(json_array_size(its), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(its, 0), "insertText")),
              "w\xC3\xB6rld = 1");
    CHECK_EQ_I(json_integer_value(json_object_get(
                   json_object_get(json_object_get(json_array_get(its, 0), "range"), "start"),
                   "character")),
               9);
    json_decref(m);
    /* $/cancelRequest → -32800 and a provider cancel. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    CHECK_EQ_I(n_reqs, 4);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32600); /* duplicate id while pending */
    json_decref(m);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"s1\"}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32800);
    json_decref(m);
    CHECK_EQ_I(n_cancels, 2);
    /* textDocument/completion: one item with a textEdit. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    lsp_completion_item ci = {.text = "0 + 2", .len = 5, .start = 5, .end = 5, .confidence = 0.5};
    lsp_server_complete(s, tokens[n_reqs - 1], &ci, 1, BASE_OK, NULL);
    m = reply();
    json_t *it0 = json_array_get(json_object_get(json_object_get(m, "result"), "items"), 0);
    CHECK_STR(json_string_value(json_object_get(json_object_get(it0, "textEdit"), "newText")),
              "0 + 2");
    json_decref(m);
    /* A provider error becomes a JSON-RPC error. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    lsp_server_complete(s, tokens[n_reqs - 1], NULL, 0, BASE_ERR_MODEL, "model not loaded");
    m = reply();
    CHECK_EQ_I(err_code(m), -32803);
    json_decref(m);
    /* So does a range error from inside the provider: the params were valid,
     * so it is not -32602. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    /* The latency budget counts from when the bytes arrived. */
    CHECK(reqs[n_reqs - 1].received_ns > 0 && reqs[n_reqs - 1].received_ns <= base_now_ns());
    lsp_server_complete(s, tokens[n_reqs - 1], NULL, 0, BASE_ERR_RANGE, NULL);
    m = reply();
    CHECK_EQ_I(err_code(m), -32803);
    CHECK_STR(json_string_value(json_object_get(json_object_get(m, "error"), "message")),
              "textDocument/completion failed: out of range");
    json_decref(m);
    /* Status goes out because the client opted in. */
    lsp_status st = {.model = "tiny", .device = "cpu", .state = "ready", .last_latency_ms = 12.5};
    lsp_server_status(s, &st);
    m = reply();
    CHECK_STR(json_string_value(json_object_get(m, "method")), "infilld/status");
    CHECK(json_object_get(json_object_get(m, "params"), "plan") == NULL);
    json_decref(m);
    /* With the last request's plan: copied into the notification. */
    json_t *plan = json_pack("{s:f, s:s}", "budgetMs", 400.0, "why", "fits");
    st.plan = plan;
    lsp_server_status(s, &st);
    json_decref(plan);
    m = reply();
    CHECK_STR(json_string_value(
                  json_object_get(json_object_get(json_object_get(m, "params"), "plan"), "why")),
              "fits");
    json_decref(m);
    lsp_server_free(s);
    json_decref(lsp_test_drain(&lsp_test_out));
}

static void test_commands(void) {
    lsp_server *s = ready("[\"utf-8\",\"utf-16\"]", "{}");
    n_reqs = 0;
    /* codeAction → lazy action; resolve → provider; answer → edit. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"textDocument/codeAction\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"range\":{\"start\":{\"line\":0,"
           "\"character\":4},\"end\":{\"line\":0,\"character\":5}},\"context\":{"
           "\"diagnostics\":[]}}}");
    json_t *m = reply();
    json_t *act = json_array_get(json_object_get(m, "result"), 0);
    CHECK_STR(json_string_value(json_object_get(act, "kind")), "refactor.rewrite");
    CHECK(json_object_get(act, "edit") == NULL);
    char *acts = json_dumps(act, JSON_COMPACT);
    json_decref(m);
    char msg[1024];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"codeAction/resolve\",\"params\":%s}",
             acts);
    free(acts);
    lsp_test_send(s, msg);
    CHECK_EQ_I(n_reqs, 1);
    CHECK_EQ_I(reqs[0].kind, LSP_REQ_CODE_ACTION);
    CHECK_EQ_U(reqs[0].sel_start, 4);
    CHECK_EQ_U(reqs[0].sel_end, 5);
    lsp_completion_item it = {.text = "42", .len = 2, .start = 4, .end = 5, .confidence = -1};
    lsp_server_complete(s, tokens[0], &it, 1, BASE_OK, NULL);
    m = reply();
    json_t *edits = json_object_get(
        json_object_get(json_object_get(json_object_get(m, "result"), "edit"), "changes"),
        "file:///t.py");
    CHECK_STR(json_string_value(json_object_get(json_array_get(edits, 0), "newText")), "42");
    json_decref(m);
    /* infilld.regenerate → workspace/applyEdit + result. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"workspace/executeCommand\",\"params\":{"
           "\"command\":\"infilld.regenerate\",\"arguments\":[{\"uri\":\"file:///t.py\","
           "\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":"
           "5}}}]}}");
    CHECK_EQ_I(reqs[1].kind, LSP_REQ_REGENERATE);
    it = (lsp_completion_item){.text = "y = 2", .len = 5, .start = 0, .end = 5, .confidence = -1};
    lsp_server_complete(s, tokens[1], &it, 1, BASE_OK, NULL);
    json_t *a = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(a), 2);
    CHECK_STR(json_string_value(json_object_get(json_array_get(a, 0), "method")),
              "workspace/applyEdit");
    json_t *ae_id = json_object_get(json_array_get(a, 0), "id");
    snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"applied\":true}}",
             (long long)json_integer_value(ae_id));
    json_decref(a);
    lsp_test_send(s, msg);
    CHECK_EQ_U(lsp_test_out.len, 0);
    /* A response with an unknown id: logged, nothing else. */
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":null}");
    m = reply();
    CHECK_STR(json_string_value(json_object_get(m, "method")), "window/logMessage");
    json_decref(m);
    /* infilld.accepted */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"workspace/executeCommand\",\"params\":{"
           "\"command\":\"infilld.accepted\",\"arguments\":[{\"requestId\":1,\"acceptedLength\":"
           "7}]}}");
    CHECK_EQ_I(n_accepted, 1);
    CHECK_EQ_U(accepted_len, 7);
    json_decref(reply());
    /* Bad params name the field. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":24,\"method\":\"textDocument/inlineCompletion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":\"1\","
           "\"character\":0},\"context\":{\"triggerKind\":1}}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32602);
    CHECK(strstr(json_string_value(json_object_get(json_object_get(m, "error"), "message")),
                 "position.line") != NULL);
    json_decref(m);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":25,\"method\":\"workspace/executeCommand\",\"params\":{"
           "\"command\":\"nope\"}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32602);
    json_decref(m);
    /* Notification with an id; unknown method; invalid JSON. */
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":26,\"method\":\"initialized\",\"params\":{}}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32600);
    json_decref(m);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":27,\"method\":\"x/y\"}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32601);
    json_decref(m);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":28,");
    m = reply();
    CHECK_EQ_I(err_code(m), -32700);
    json_decref(m);
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":29,\"method\":\"a\xff\"}");
    m = reply();
    CHECK_EQ_I(err_code(m), -32700);
    json_decref(m);
    /* didChange for an unknown document, and out of range: logged, text kept. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{"
           "\"textDocument\":{\"uri\":\"file:///nope\",\"version\":2},\"contentChanges\":[]}}");
    m = reply();
    CHECK_STR(json_string_value(json_object_get(m, "method")), "window/logMessage");
    json_decref(m);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{"
           "\"textDocument\":{\"uri\":\"file:///t.py\",\"version\":2},\"contentChanges\":[{"
           "\"range\":{\"start\":{\"line\":9,\"character\":0},\"end\":{\"line\":9,\"character\":"
           "0}},\"text\":\"boom\"}]}}");
    m = reply();
    CHECK_STR(json_string_value(json_object_get(m, "method")), "window/logMessage");
    json_decref(m);
    lsp_test_send(s,
                  "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"infilld/viewFileText\",\"params\":{"
                  "\"textDocument\":{\"uri\":\"file:///t.py\"}}}");
    m = reply();
    CHECK(strncmp(json_string_value(json_object_get(m, "result")), "x = 1\nh", 7) == 0);
    json_decref(m);
    /* Work-done progress: create request first, begin after the client's yes. */
    int h = lsp_server_progress_begin(s, "Loading model", "tiny");
    CHECK(h > 0);
    m = reply();
    CHECK_STR(json_string_value(json_object_get(m, "method")), "window/workDoneProgress/create");
    snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":null}",
             (long long)json_integer_value(json_object_get(m, "id")));
    json_decref(m);
    lsp_server_progress_end(s, h, "done");
    CHECK_EQ_U(lsp_test_out.len, 0);
    lsp_test_send(s, msg);
    a = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(a), 2); /* begin + end */
    json_decref(a);
    /* An edit ends pending completions of that document with null. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    CHECK_EQ_U(lsp_server_pending(s), 1);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{"
           "\"textDocument\":{\"uri\":\"file:///t.py\",\"version\":3},\"contentChanges\":[{"
           "\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":"
           "0}},\"text\":\"#\"}]}}");
    CHECK_EQ_U(lsp_server_pending(s), 0);
    m = reply();
    CHECK_EQ_I(json_integer_value(json_object_get(m, "id")), 32);
    CHECK(json_is_null(json_object_get(m, "result")));
    json_decref(m);
    /* Pending work is cancelled when the session goes. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"textDocument/completion\",\"params\":"
           "{\"textDocument\":{\"uri\":\"file:///t.py\"},\"position\":{\"line\":0,\"character\":"
           "5}}}");
    CHECK_EQ_U(lsp_server_pending(s), 1);
    int before = n_cancels;
    lsp_server_free(s);
    CHECK_EQ_I(n_cancels, before + 1);
    json_decref(lsp_test_drain(&lsp_test_out));
}

int main(void) {
    base_log_set_level(BASE_LOG_OFF);
    base_buf_init(&lsp_test_out);
    test_lifecycle();
    test_inline();
    test_commands();
    CHECK_EQ_I(n_open, n_close);
    base_buf_deinit(&lsp_test_out);
    return check_finish("test_server");
}
