/* infill remote source, private: one request's transfers, for the loop
 * driver (remote_loop.c) that runs them on the daemon's libuv loop.
 *
 * A call is built on the worker thread (ifl_remote_call_new: the request
 * body, one easy handle per transfer), run by one thread at a time (the
 * loop), and collected back on the worker (ifl_remote_call_finish, which
 * frees it). */
#ifndef INFILLD_INFILL_REMOTE_CALL_H
#define INFILLD_INFILL_REMOTE_CALL_H

#include "source.h"

#include <curl/curl.h>

/* own_easy: the call's handles are its own copies (a multi handle other
 * than the source's runs them), freed with it. On failure res->error says
 * why. */
base_status ifl_remote_call_new(ifl_remote *r, const ifl_source_req *sr, const volatile int *cancel,
                                bool own_easy, ifl_remote_call **out, ifl_doc_res *res);
/* Candidates (or the failure) into res->raw / res->error; frees c. */
base_status ifl_remote_call_finish(ifl_remote_call *c, ifl_doc_res *res);
void ifl_remote_call_free(ifl_remote_call *c);

int ifl_remote_call_xfers(const ifl_remote_call *c);
CURL *ifl_remote_call_easy(ifl_remote_call *c, int i);
const volatile int *ifl_remote_call_cancel(const ifl_remote_call *c);
/* Readies transfer i for its next attempt (timeouts from the request's
 * budget); false: it is finished instead (the budget ran out). */
bool ifl_remote_call_arm(ifl_remote_call *c, int i);
/* Transfer i ended with res; true: try it again at ifl_remote_call_start_at
 * (a connection that failed before anything was sent, after a backoff). */
bool ifl_remote_call_settle(ifl_remote_call *c, int i, CURLcode res);
uint64_t ifl_remote_call_start_at(const ifl_remote_call *c, int i);
/* Transfer i could not start. */
void ifl_remote_call_fail(ifl_remote_call *c, int i, const char *msg);
/* The loop dropped the call's transfers (its cancel flag was set). */
void ifl_remote_call_cancelled(ifl_remote_call *c);

#endif
