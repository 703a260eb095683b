/* libFuzzer harness for the remote source's response parsers (infill/remote.c):
 * what an HTTP inference server sends back, for every API shape (openai-fim,
 * llama-infill /infill, openai-completions with suffix and with a FIM
 * template, openai-chat), as one JSON body or as server-sent events
 * ("stream": true), with any status code — the parser, not the network.
 *
 * remote.c is included here so that its static body writer (ifl__write: the
 * SSE line and event parser), the transfer's settling (ifl__settle) and the
 * collection of candidates (ifl__collect, via ifl_remote_call_finish) run
 * exactly as libcurl would drive them, without a socket: the body arrives in
 * chunks of a size the input picks, so lines and events split anywhere.
 *
 * Input: byte 0 = API shape (low 3 bits) | stream (8) | partials (16) |
 * two candidates (32); byte 1 = HTTP status (low 4 bits) | how the transfer
 * ended (high 2 bits); byte 2 = chunk size - 1; the rest is the body.
 * Checks: no crash, leak or sanitizer report; a failure says why (a message);
 * a success's candidates (none for an empty "choices") are NUL-terminated
 * strings of the length they claim, none twice. */
#include "../../infill/remote.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_APIS 5

static ifl_remote *fz_remote[FZ_APIS][2]; /* [api][stream] */

static ifl_remote *fz_make(int api, bool stream) {
    /* Small maxResponseBytes, so that the size limit is reached too. */
    char js[512];
    snprintf(js, sizeof js,
             "{\"kind\": \"remote\", \"api\": \"%s\", \"url\": \"http://127.0.0.1:9/v1\", "
             "\"model\": \"qwen2.5-coder-1.5b\", \"stream\": %s, \"maxResponseBytes\": 3000}",
             ifl__api_names[api], stream ? "true" : "false");
    json_error_t je;
    json_t *src = json_loads(js, 0, &je);
    ifl_remote_cfg cfg;
    char err[256];
    if (!src || ifl_remote_cfg_parse(src, &cfg, err, sizeof err) != BASE_OK) {
        fprintf(stderr, "fuzz_remote: config: %s\n", err);
        abort();
    }
    json_decref(src);
    ifl_remote *r = ifl_remote_new(&cfg);
    if (!r)
        abort();
    return r;
}

static unsigned long fz_partials;
static bool fz_verbose; /* FUZZ_REMOTE_VERBOSE=1: each input's outcome on stderr */

static void fz_partial(void *ud, const char *text, size_t len, int step, int steps) {
    (void)ud;
    (void)steps;
    if (!text || step < 0)
        abort();
    for (size_t i = 0; i < len; i++) /* every byte readable */
        fz_partials += (unsigned char)text[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fz_remote[0][0]) {
        fz_verbose = getenv("FUZZ_REMOTE_VERBOSE") != NULL;
        /* A warning per failed input is noise. */
        base_log_set_level(fz_verbose ? BASE_LOG_WARN : BASE_LOG_OFF);
        for (int a = 0; a < FZ_APIS; a++)
            for (int s = 0; s < 2; s++)
                fz_remote[a][s] = fz_make(a, s);
    }
    if (size < 3)
        return 0;
    static const long codes[16] = {200, 200, 200, 200, 200, 201, 204, 206,
                                   0,   302, 400, 401, 403, 429, 500, 503};
    static const CURLcode ends[4] = {CURLE_OK, CURLE_OK, CURLE_RECV_ERROR,
                                     CURLE_OPERATION_TIMEDOUT};
    int api = (data[0] & 7) % FZ_APIS;
    bool stream = data[0] & 8;
    long code = codes[data[1] & 15];
    CURLcode end = ends[data[1] >> 6];
    size_t chunk = (size_t)data[2] + 1;
    const char *body = (const char *)data + 3;
    size_t body_len = size - 3;
    ifl_remote *r = fz_remote[api][stream];

    static const char text[] = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";
    const size_t cursor = 27; /* after "return " */
    ifl_doc_req d;
    ifl_doc_req_default(&d);
    d.text = text;
    d.len = sizeof text - 1;
    d.cursor = cursor;
    d.candidates = data[0] & 32 ? 2 : 1;
    if (data[0] & 16)
        d.partial = fz_partial;
    ifl_source_req sr = {0};
    sr.prefix = text;
    sr.prefix_len = cursor;
    sr.suffix = text + cursor;
    sr.suffix_len = d.len - cursor;
    sr.n_hole = 16;
    sr.n_hole_cap = 64;
    sr.doc = &d;

    volatile int cancel = 0;
    ifl_doc_res res;
    memset(&res, 0, sizeof res);
    ifl_remote_call *c = NULL;
    if (ifl_remote_call_new(r, &sr, &cancel, false, &c, &res) != BASE_OK)
        abort(); /* valid UTF-8, memory to spare: the request is built */
    for (int i = 0; i < c->n_x; i++) {
        ifl__xfer *x = &c->xs[i];
        ifl__body *b = &x->body;
        /* What ifl__write asks libcurl on the first byte. */
        b->sse_checked = true;
        b->sse = b->stream && code >= 200 && code < 300;
        CURLcode res_i = end;
        for (size_t off = 0; off < body_len;) {
            size_t k = BASE_MIN(chunk, body_len - off);
            if (ifl__write((char *)body + off, 1, k, b) != k) {
                res_i = CURLE_WRITE_ERROR; /* libcurl ends the transfer */
                break;
            }
            off += k;
        }
        if (ifl__settle(c, x, res_i))
            abort(); /* only a refused connection is tried again */
        /* An unperformed handle reports status 0; the server's goes here. */
        if (res_i == CURLE_OK || (b->sse && b->done))
            x->code = code;
    }
    base_status st = ifl_remote_call_finish(c, &res);
    if (fz_verbose) {
        fprintf(stderr, "fuzz_remote: %s stream=%d HTTP %ld: %s %s\n", ifl__api_names[api], stream,
                code, base_status_name(st), res.error);
        for (int i = 0; i < res.raw.n_cand; i++)
            fprintf(stderr, "  [%d] %.*s (%.3f)\n", i, (int)res.raw.cand[i].len,
                    res.raw.cand[i].text, res.raw.cand[i].mean_conf);
    }
    if (st != BASE_OK) {
        if (!res.error[0] || res.raw.n_cand != 0)
            abort();
    } else {
        for (int i = 0; i < res.raw.n_cand; i++) {
            const ifl_text_cand *tc = &res.raw.cand[i];
            if (!tc->text || tc->text[tc->len] != 0 || strlen(tc->text) > tc->len)
                abort();
            for (int k = 0; k < i; k++)
                if (res.raw.cand[k].len == tc->len &&
                    memcmp(res.raw.cand[k].text, tc->text, tc->len) == 0)
                    abort();
        }
    }
    ifl_doc_res_free(&res);
    return 0;
}
