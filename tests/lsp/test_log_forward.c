/* Daemon log lines to LSP clients: lines logged on another thread go through
 * the bounded queue (lsp_logq) to the session as $/logTrace (only with a
 * trace) and window/logMessage (from the "clientLogLevel" setting, default
 * warn); overflow is counted; nothing recurses, nothing is sent after
 * shutdown, nothing is queued once the hook is removed. */
#include "check.h"
#include "lsp.h"
#include "lsp_test_io.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_int wakes;

static lsp_server *ready(void) {
    lsp_server_hooks h = {.write = lsp_test_write};
    lsp_provider_i p = {.complete = lsp_test_no_complete, .cancel = lsp_test_no_cancel};
    lsp_server *s = lsp_server_new(&h, &p, NULL, NULL);
    CHECK(s != NULL);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"processId\":null,"
           "\"capabilities\":{}}}");
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}");
    json_decref(lsp_test_drain(&lsp_test_out));
    return s;
}

static void wake(void *ud) {
    (void)ud;
    atomic_fetch_add(&wakes, 1);
}

/* Lines to log from another thread: a level, then a message; level -1 ends. */
typedef struct line_spec {
    int level;
    const char *msg;
} line_spec;

static void *log_thread(void *arg) {
    const line_spec *l = arg;
    for (; l->level >= 0; l++)
        base_log((base_log_level)l->level, "eng", "%s", l->msg);
    return NULL;
}

static void log_from_thread(const line_spec *lines) {
    pthread_t t;
    CHECK_EQ_I(pthread_create(&t, NULL, log_thread, (void *)lines), 0);
    pthread_join(t, NULL);
}

static lsp_server *fwd_target;
static void forward(void *ud, const lsp_log_line *line) {
    (void)ud;
    lsp_server_log_line(fwd_target, line);
}

/* Forwards the queue to s; returns what s wrote. */
static json_t *forward_all(lsp_logq *q, lsp_server *s, size_t expect_lines) {
    fwd_target = s;
    CHECK_EQ_U(lsp_logq_drain(q, forward, NULL), expect_lines);
    return lsp_test_drain(&lsp_test_out);
}

static size_t count(json_t *msgs, const char *method) {
    size_t n = 0, i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        if (strcmp(json_string_value(json_object_get(m, "method")), method) == 0)
            n++;
    }
    return n;
}

/* The k-th message of msgs with this method (params), or NULL. */
static json_t *nth(json_t *msgs, const char *method, size_t k) {
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        if (strcmp(json_string_value(json_object_get(m, "method")), method) == 0 && k-- == 0)
            return json_object_get(m, "params");
    }
    return NULL;
}

static const line_spec mixed[] = {
    {BASE_LOG_DEBUG, "rejected candidate 2"},
    {BASE_LOG_INFO, "model loaded"},
    {BASE_LOG_WARN, "slow device"},
    {BASE_LOG_ERROR, "cannot read shard"},
    {-1, NULL},
};

static void test_levels(lsp_logq *q) {
    lsp_server *s = ready();
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_WARN);

    /* Trace off: warnings and errors only, as window/logMessage 2 and 1. */
    atomic_store(&wakes, 0);
    log_from_thread(mixed);
    CHECK(atomic_load(&wakes) >= 1);
    json_t *msgs = forward_all(q, s, 4);
    CHECK_EQ_U(json_array_size(msgs), 2);
    CHECK_EQ_U(count(msgs, "$/logTrace"), 0);
    json_t *p = nth(msgs, "window/logMessage", 0);
    CHECK_EQ_I(json_integer_value(json_object_get(p, "type")), 2);
    CHECK_STR(json_string_value(json_object_get(p, "message")), "eng: slow device");
    p = nth(msgs, "window/logMessage", 1);
    CHECK_EQ_I(json_integer_value(json_object_get(p, "type")), 1);
    CHECK_STR(json_string_value(json_object_get(p, "message")), "eng: cannot read shard");
    json_decref(msgs);

    /* Trace "messages": info and above also as $/logTrace; debug stays out. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/setTrace\",\"params\":{\"value\":\"messages\"}}");
    json_decref(lsp_test_drain(&lsp_test_out));
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_INFO);
    log_from_thread(mixed);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(count(msgs, "$/logTrace"), 3);
    CHECK_EQ_U(count(msgs, "window/logMessage"), 2);
    CHECK_STR(json_string_value(json_object_get(nth(msgs, "$/logTrace", 0), "message")),
              "[info] eng: model loaded");
    json_decref(msgs);

    /* Trace "verbose": every level, debug included. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/setTrace\",\"params\":{\"value\":\"verbose\"}}");
    json_decref(lsp_test_drain(&lsp_test_out));
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_TRACE);
    log_from_thread(mixed);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(count(msgs, "$/logTrace"), 4);
    CHECK_STR(json_string_value(json_object_get(nth(msgs, "$/logTrace", 0), "message")),
              "[debug] eng: rejected candidate 2");
    json_decref(msgs);

    /* Trace off again; "clientLogLevel" info adds info lines (type 3). */
    lsp_test_send(s,
                  "{\"jsonrpc\":\"2.0\",\"method\":\"$/setTrace\",\"params\":{\"value\":\"off\"}}");
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"workspace/didChangeConfiguration\",\"params\":{"
           "\"settings\":{\"clientLogLevel\":\"info\"}}}");
    json_decref(lsp_test_drain(&lsp_test_out));
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_INFO);
    log_from_thread(mixed);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(count(msgs, "$/logTrace"), 0);
    CHECK_EQ_U(count(msgs, "window/logMessage"), 3);
    CHECK_EQ_I(json_integer_value(json_object_get(nth(msgs, "window/logMessage", 0), "type")), 3);
    json_decref(msgs);

    /* "error" keeps warnings out; "off" everything; a bad value means warn. */
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"workspace/didChangeConfiguration\",\"params\":{"
           "\"settings\":{\"clientLogLevel\":\"error\"}}}");
    log_from_thread(mixed);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(count(msgs, "window/logMessage"), 1);
    json_decref(msgs);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"workspace/didChangeConfiguration\",\"params\":{"
           "\"settings\":{\"clientLogLevel\":\"off\"}}}");
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_OFF);
    log_from_thread(mixed);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);
    lsp_test_send(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"workspace/didChangeConfiguration\",\"params\":{"
           "\"settings\":{\"clientLogLevel\":7}}}");
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_WARN);

    /* A problem the server reports to this session itself is not queued a
     * second time (it already went out as window/logMessage). */
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didClose\",\"params\":{"
                     "\"textDocument\":{\"uri\":\"file:///nope\"}}}");
    msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(count(msgs, "window/logMessage"), 1);
    json_decref(msgs);
    CHECK_EQ_U(lsp_logq_drain(q, forward, NULL), 0);

    /* After shutdown nothing is forwarded. */
    lsp_test_send(s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"shutdown\"}");
    json_decref(lsp_test_drain(&lsp_test_out));
    CHECK_EQ_I(lsp_server_log_wants(s), BASE_LOG_OFF);
    log_from_thread(mixed);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(json_array_size(msgs), 0);
    json_decref(msgs);
    lsp_server_free(s);
}

/* Logging from inside the forwarding callback (as a failed write would) is
 * not queued again: the loop cannot feed itself. */
static void forward_and_log(void *ud, const lsp_log_line *line) {
    (void)ud;
    lsp_server_log_line(fwd_target, line);
    BASE_LOGW("dmn", "write failed while forwarding");
}

static void test_no_recursion(lsp_logq *q) {
    lsp_server *s = ready();
    static const line_spec one[] = {{BASE_LOG_WARN, "w"}, {-1, NULL}};
    log_from_thread(one);
    fwd_target = s;
    CHECK_EQ_U(lsp_logq_drain(q, forward_and_log, NULL), 1);
    CHECK_EQ_U(lsp_logq_drain(q, forward_and_log, NULL), 0);
    json_t *msgs = lsp_test_drain(&lsp_test_out);
    CHECK_EQ_U(json_array_size(msgs), 1);
    json_decref(msgs);
    /* Outside forwarding, the same thread's lines are queued as usual. */
    BASE_LOGW("dmn", "ordinary");
    CHECK_EQ_U(lsp_logq_drain(q, NULL, NULL), 1);
    lsp_server_free(s);
    json_decref(lsp_test_drain(&lsp_test_out));
}

static void test_overflow(void) {
    lsp_logq *q = lsp_logq_new(4, wake, NULL);
    CHECK(q != NULL);
    base_log_set_hook(lsp_logq_hook, q);
    static const line_spec ten[] = {
        {BASE_LOG_WARN, "l0"},
        {BASE_LOG_WARN, "l1"},
        {BASE_LOG_WARN, "l2"},
        {BASE_LOG_WARN, "l3"},
        {BASE_LOG_WARN, "l4"},
        {BASE_LOG_WARN, "l5"},
        {BASE_LOG_WARN, "l6"},
        {BASE_LOG_WARN, "l7"},
        {BASE_LOG_WARN, "l8"},
        {BASE_LOG_WARN, "l9"},
        {-1, NULL},
    };
    atomic_store(&wakes, 0);
    log_from_thread(ten);
    /* Rung once: the queue was never empty after the first line. */
    CHECK_EQ_I(atomic_load(&wakes), 1);
    lsp_server *s = ready();
    json_t *msgs = forward_all(q, s, 4);
    CHECK_EQ_U(json_array_size(msgs), 4);
    /* The newest four survive; the first of them reports the six dropped. */
    CHECK_STR(json_string_value(json_object_get(nth(msgs, "window/logMessage", 0), "message")),
              "eng: l6 (6 earlier log lines dropped)");
    CHECK_STR(json_string_value(json_object_get(nth(msgs, "window/logMessage", 1), "message")),
              "eng: l7");
    json_decref(msgs);
    /* Lines still queued when the queue is freed are released (ASan). */
    log_from_thread(ten);
    base_log_set_hook(NULL, NULL);
    /* With the hook removed nothing more is queued. */
    log_from_thread(ten);
    msgs = forward_all(q, s, 4);
    CHECK_EQ_U(json_array_size(msgs), 4);
    json_decref(msgs);
    log_from_thread(ten);
    CHECK_EQ_U(lsp_logq_drain(q, NULL, NULL), 0);
    log_from_thread(ten);
    base_log_set_hook(lsp_logq_hook, q);
    log_from_thread(ten);
    base_log_set_hook(NULL, NULL);
    lsp_logq_free(q);
    lsp_server_free(s);
    json_decref(lsp_test_drain(&lsp_test_out));
}

int main(void) {
    base_log_set_level(BASE_LOG_OFF); /* stderr stays quiet; the hook level decides */
    base_log_set_hook_level(BASE_LOG_TRACE);
    base_buf_init(&lsp_test_out);
    lsp_logq *q = lsp_logq_new(0, wake, NULL);
    CHECK(q != NULL);
    base_log_set_hook(lsp_logq_hook, q);
    test_levels(q);
    test_no_recursion(q);
    base_log_set_hook(NULL, NULL);
    lsp_logq_free(q);
    test_overflow();
    /* The hook level gates formatting: below it, a line never reaches a hook. */
    lsp_logq *g = lsp_logq_new(0, wake, NULL);
    base_log_set_hook(lsp_logq_hook, g);
    base_log_set_hook_level(BASE_LOG_WARN);
    BASE_LOGI("eng", "below the hook level");
    BASE_LOGW("eng", "at the hook level");
    CHECK_EQ_U(lsp_logq_drain(g, NULL, NULL), 1);
    base_log_set_hook(NULL, NULL);
    lsp_logq_free(g);
    base_buf_deinit(&lsp_test_out);
    return check_finish("test_log_forward");
}
