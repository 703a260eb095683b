/* infill eval: the pieces of the quality harness (`infilld eval`,
 * docs/QUALITY.md) that do not depend on the command line:
 *   - tasks: HumanEval-Infilling (gzip JSON lines) and the held-out sets
 *     (JSON lines: id, lang, prefix, middle, suffix, ...), read into memory;
 *   - metrics: exact match, edit similarity, first line correct;
 *   - the non-neural baseline (copy an earlier line), run through the same
 *     span and post-processing stages as a model;
 *   - the sandbox that runs a Python program with limits (eval_sandbox.c).
 * Tasks and results are plain data; everything here is thread-safe except
 * where noted, so a harness may run tasks on several threads. */
#ifndef INFILLD_INFILL_EVAL_H
#define INFILLD_INFILL_EVAL_H

#include "infill.h"

/* ---- tasks ------------------------------------------------------------------ */

typedef struct ifl_eval_task {
    char *id;
    char *lang; /* canonical language name ("python") */
    char *prefix, *middle, *suffix;
    size_t prefix_len, middle_len, suffix_len;
    /* HumanEval: the tests and the function they check (NULL for held-out). */
    char *test, *entry_point;
    bool multiline; /* held-out: the middle spans lines */
    char *cursor;   /* held-out: "line_end" | "in_line" | "blank_line" | "after_comment" */
} ifl_eval_task;

typedef struct ifl_eval_set {
    ifl_eval_task *tasks;
    size_t n;
} ifl_eval_set;

/* Reads a JSON-lines file, gzip-compressed or not (zlib reads both). Each
 * line is either a HumanEval-Infilling problem (task_id, prompt, suffix,
 * canonical_solution, test, entry_point; language python) or a held-out item
 * (id, lang, prefix, middle, suffix, cursor, multiline). At most limit tasks
 * (0 = all). A malformed line is an error naming its line number (err, cap
 * bytes); blank lines are skipped. */
base_status ifl_eval_set_load(const char *path, size_t limit, ifl_eval_set *out, char *err,
                              size_t err_cap);
void ifl_eval_set_free(ifl_eval_set *s); /* NULL-safe */

/* ---- metrics -----------------------------------------------------------------
 * Texts are compared after normalisation: trailing spaces and tabs of every
 * line and trailing blank lines dropped (an editor's completion on an empty
 * line carries no line break; HumanEval's middles end in one). */

/* Normalised copy (malloc'ed, NUL-terminated); NULL on OOM. */
char *ifl_eval_normalize(const char *s, size_t n, size_t *out_len);
bool ifl_eval_exact(const char *answer, size_t alen, const char *middle, size_t mlen);
/* 1 - Levenshtein(a, b) / max(|a|, |b|) over the normalised bytes; 1 when
 * both are empty. */
double ifl_eval_edit_sim(const char *answer, size_t alen, const char *middle, size_t mlen);
/* The first non-blank line of each normalised text, compared with its
 * leading whitespace (indentation is code in Python); both blank → true. */
bool ifl_eval_first_line(const char *answer, size_t alen, const char *middle, size_t mlen);

/* ---- the document of a task -------------------------------------------------- */

/* A request as an editor would send it: the document is prefix + suffix, the
 * cursor at the end of the prefix. text is malloc'ed into *text (caller
 * frees); r gets the defaults of ifl_doc_req_default. */
base_status ifl_eval_task_doc(const ifl_eval_task *t, ifl_doc_req *r, char **text);

/* ---- the non-neural baseline --------------------------------------------------
 * Copy: the typed part of the current line (line start to cursor) is looked
 * up among the earlier lines of the document; the longest earlier line that
 * starts with it, and is longer, supplies the rest of the line (ties: the
 * nearest). With nothing typed but indentation the line must share that
 * indentation exactly and be code (not blank); with nothing typed at all
 * (column 0) the indentation is that of the next line holding code, and the
 * copy carries it. The span is located and the
 * candidate post-processed exactly as for a model (ifl_syntax_locate_text,
 * ifl_doc_span, ifl_doc_post); no candidate → res->n_items == 0. */
base_status ifl_eval_baseline_copy(const ifl_doc_req *r, ifl_doc_res *res);

/* ---- the sandbox (eval_sandbox.c) ----------------------------------------------
 * Runs `python3 -I -B prog.py` in a fresh temporary directory with an empty
 * environment, stdin from /dev/null, no inherited descriptors, its own
 * process group or PID namespace, a new network namespace where the kernel
 * permits, socket(2) refused by a seccomp filter, and rlimits on CPU time,
 * address space, file size, processes, open files and core dumps. As root
 * the child drops to an unprivileged uid (root ignores RLIMIT_NPROC). The
 * wall timeout kills the whole group (namespace). */

typedef struct ifl_sandbox_opts {
    const char *python; /* interpreter; NULL → /usr/bin/python3, else python3 on the PATH */
    const char *tmp;    /* parent of the temporary directories; NULL → $TMPDIR or /tmp */
    double wall_s;      /* wall-clock limit (10) */
    int cpu_s;          /* RLIMIT_CPU seconds (10) */
    size_t mem_bytes;   /* RLIMIT_AS (1 GiB) */
    size_t file_bytes;  /* RLIMIT_FSIZE (16 MiB) */
    int nproc;          /* RLIMIT_NPROC (32) */
    unsigned slot;      /* parallel runner index (0..63): picks the uid dropped to as root */
} ifl_sandbox_opts;

void ifl_sandbox_opts_default(ifl_sandbox_opts *o);

typedef enum ifl_sandbox_outcome {
    IFL_SANDBOX_PASS = 0, /* exit status 0 */
    IFL_SANDBOX_FAIL,     /* non-zero exit status (a failed assert, an exception) */
    IFL_SANDBOX_SIGNAL,   /* killed by a signal (SIGXCPU, SIGXFSZ, SIGSYS, ...) */
    IFL_SANDBOX_TIMEOUT,  /* the wall limit passed; killed */
} ifl_sandbox_outcome;

typedef struct ifl_sandbox_result {
    ifl_sandbox_outcome outcome;
    int exit_code; /* FAIL */
    int signal;    /* SIGNAL */
    double wall_ms;
    char output[512]; /* the last bytes of stdout + stderr, NUL-terminated */
} ifl_sandbox_result;

/* What the sandbox could set up on this machine (the first run decides). */
typedef struct ifl_sandbox_isolation {
    bool netns;   /* a new network namespace */
    bool pidns;   /* a new PID namespace (else a process group) */
    bool userns;  /* a new user namespace (non-root) */
    bool seccomp; /* socket(2) refused */
    bool uid_drop;
} ifl_sandbox_isolation;

/* OK with r filled whenever the program ran (any outcome); an error when the
 * sandbox itself could not be set up (no interpreter, no temporary
 * directory, fork failed). Thread-safe. */
base_status ifl_sandbox_run(const ifl_sandbox_opts *o, const char *program, size_t len,
                            ifl_sandbox_result *r);
void ifl_sandbox_get_isolation(ifl_sandbox_isolation *out);
const char *ifl_sandbox_outcome_name(ifl_sandbox_outcome o);

/* The HumanEval program: prompt + completion + suffix exactly as the editor
 * would leave the buffer, then the tests and check(entry_point). malloc'ed;
 * NULL on OOM. */
char *ifl_eval_humaneval_program(const ifl_eval_task *t, const char *completion, size_t len,
                                 size_t *out_len);

#endif
