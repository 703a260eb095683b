/* The quality harness's pieces (infill/eval.h):
 *   - metrics on hand-computed examples;
 *   - the held-out reader on the committed fixture and on a malformed file;
 *   - the copy baseline through the span and post-processing stages;
 *   - the sandbox: a program that loops forever, allocates without bound,
 *     writes a huge file, forks without end or opens a socket is stopped and
 *     fails, and the next program still passes; the child sees an empty
 *     environment, a fresh directory and no inherited descriptors. */
#define _GNU_SOURCE
#include "check.h"
#include "eval.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_metrics(void) {
    /* kitten → sitting: 3 edits over 7 bytes. */
    double s = ifl_eval_edit_sim("kitten", 6, "sitting", 7);
    CHECK(s > 1.0 - 3.0 / 7.0 - 1e-12 && s < 1.0 - 3.0 / 7.0 + 1e-12);
    CHECK(ifl_eval_edit_sim("", 0, "", 0) == 1.0);
    CHECK(ifl_eval_edit_sim("abc", 3, "", 0) == 0.0);
    CHECK(ifl_eval_edit_sim("abc", 3, "abc\n", 4) == 1.0); /* trailing newline normalised */
    /* Trailing whitespace per line and trailing blank lines do not count. */
    CHECK(ifl_eval_exact("  x = 1  \n\n", 11, "  x = 1\n", 8));
    CHECK(ifl_eval_exact("a \nb\t\n", 6, "a\nb", 3));
    CHECK(!ifl_eval_exact("x=1", 3, "x = 1", 5));
    CHECK(!ifl_eval_exact(" x = 1", 6, "x = 1", 5)); /* leading whitespace is code */
    CHECK(!ifl_eval_exact("a\n\nb", 4, "a\nb", 3));
    /* First line: the first line holding code, indentation included. */
    CHECK(ifl_eval_first_line("a\nb", 3, "a\nc", 3));
    CHECK(ifl_eval_first_line("\n  a", 4, "  a\n", 4));
    CHECK(!ifl_eval_first_line(" a", 2, "a", 1));
    CHECK(!ifl_eval_first_line("", 0, "a", 1));
    CHECK(ifl_eval_first_line("  \n", 3, "", 0));
    size_t n;
    char *t = ifl_eval_normalize("a  \r\nb \n\n \n", 11, &n);
    CHECK_STR(t, "a\nb");
    CHECK_EQ_I((int)n, 3);
    free(t);
}

static void test_reader(void) {
    ifl_eval_set set;
    char err[256] = "";
    base_status st = ifl_eval_set_load(EVAL_FIXTURE, 0, &set, err, sizeof err);
    CHECK_EQ_I(st, BASE_OK);
    CHECK_EQ_I((int)set.n, 3);
    if (set.n == 3) {
        CHECK_STR(set.tasks[0].id, "fixture/py/0");
        CHECK_STR(set.tasks[0].lang, "python");
        CHECK_STR(set.tasks[0].middle, "x * x for x in xs");
        CHECK_STR(set.tasks[1].lang, "c");
        CHECK_STR(set.tasks[1].cursor, "blank_line");
        CHECK(set.tasks[2].multiline);
        CHECK(!set.tasks[0].multiline);
        CHECK(set.tasks[0].test == NULL);
    }
    ifl_eval_set_free(&set);
    st = ifl_eval_set_load(EVAL_FIXTURE, 2, &set, err, sizeof err);
    CHECK_EQ_I((int)set.n, 2);
    ifl_eval_set_free(&set);

    char path[] = "/tmp/infilld-test-eval-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char bad[] =
        "{\"id\":\"a\",\"lang\":\"c\",\"prefix\":\"\",\"middle\":\"x\",\"suffix\":\"\"}\n"
        "\n{\"id\": \"b\", \"lang\": \"c\"}\n";
    CHECK(write(fd, bad, sizeof bad - 1) == (ssize_t)(sizeof bad - 1));
    close(fd);
    st = ifl_eval_set_load(path, 0, &set, err, sizeof err);
    CHECK_EQ_I(st, BASE_ERR_PARSE);
    CHECK(strstr(err, ":3: missing fields") != NULL);
    FILE *f = fopen(path, "w");
    fputs("{\"id\": 1\n", f);
    fclose(f);
    st = ifl_eval_set_load(path, 0, &set, err, sizeof err);
    CHECK_EQ_I(st, BASE_ERR_PARSE);
    CHECK(strstr(err, ":1: not a JSON object") != NULL);
    unlink(path);
    st = ifl_eval_set_load("/nonexistent/set.jsonl", 0, &set, err, sizeof err);
    CHECK_EQ_I(st, BASE_ERR_IO);
}

static void test_baseline(void) {
    ifl_eval_set set;
    char err[256];
    if (ifl_eval_set_load(EVAL_FIXTURE, 0, &set, err, sizeof err) != BASE_OK) {
        CHECK(false);
        return;
    }
    /* python: the earlier line supplies the rest of the typed one. */
    ifl_doc_req r;
    char *text = NULL;
    CHECK_EQ_I(ifl_eval_task_doc(&set.tasks[0], &r, &text), BASE_OK);
    CHECK_EQ_I((int)r.cursor, (int)set.tasks[0].prefix_len);
    ifl_doc_res res;
    CHECK_EQ_I(ifl_eval_baseline_copy(&r, &res), BASE_OK);
    CHECK(res.n_items >= 1);
    if (res.n_items >= 1)
        CHECK_STR(res.items[0].text, "x * x for x in xs");
    ifl_doc_res_free(&res);
    free(text);
    /* c: nothing typed; no earlier line at the next code line's (empty)
     * indentation but the function's own header, which post-processing
     * keeps or drops; either way, no crash and a definite answer count. */
    CHECK_EQ_I(ifl_eval_task_doc(&set.tasks[1], &r, &text), BASE_OK);
    CHECK_EQ_I(ifl_eval_baseline_copy(&r, &res), BASE_OK);
    CHECK(res.n_items <= 1);
    ifl_doc_res_free(&res);
    free(text);
    ifl_eval_set_free(&set);

    /* No earlier line shares the typed text: no candidate at all. */
    const char *doc = "a = 1\nzz";
    ifl_doc_req_default(&r);
    r.text = doc;
    r.len = strlen(doc);
    r.cursor = r.sel_start = r.sel_end = r.len;
    r.language = "python";
    CHECK_EQ_I(ifl_eval_baseline_copy(&r, &res), BASE_OK);
    CHECK_EQ_I(res.n_items, 0);
    ifl_doc_res_free(&res);
}

static ifl_sandbox_opts quick_opts(void) {
    ifl_sandbox_opts o;
    ifl_sandbox_opts_default(&o);
    o.wall_s = 2;
    o.cpu_s = 1;
    o.mem_bytes = (size_t)256 << 20;
    o.file_bytes = (size_t)1 << 20;
    o.nproc = 16;
    return o;
}

static ifl_sandbox_result run_py(const char *what, const char *prog) {
    ifl_sandbox_opts o = quick_opts();
    ifl_sandbox_result r;
    base_status st = ifl_sandbox_run(&o, prog, strlen(prog), &r);
    CHECK_EQ_I(st, BASE_OK);
    fprintf(stderr, "sandbox %-12s %-8s exit %d signal %d, %.0f ms\n", what,
            ifl_sandbox_outcome_name(r.outcome), r.exit_code, r.signal, r.wall_ms);
    return r;
}

/* Processes left running under the sandbox's uids (root runs). */
static int leftover_sandbox_processes(void) {
    if (geteuid() != 0)
        return 0;
    /* This process's uids (infill/eval_sandbox.c). */
    unsigned lo = 3900000000u + 64u * ((unsigned)getpid() & 0x3fffffu);
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[300];
        struct stat sb;
        snprintf(p, sizeof p, "/proc/%s", e->d_name);
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && stat(p, &sb) == 0 && sb.st_uid >= lo &&
            sb.st_uid < lo + 64u)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void test_sandbox(void) {
    const char *ok = "assert 1 + 1 == 2\n";
    ifl_sandbox_result r = run_py("pass", ok);
    CHECK_EQ_I(r.outcome, IFL_SANDBOX_PASS);
    r = run_py("assert", "assert 1 + 1 == 3\n");
    CHECK_EQ_I(r.outcome, IFL_SANDBOX_FAIL);
    CHECK(strstr(r.output, "AssertionError") != NULL);

    /* Loops forever: the CPU limit (1 s) or the wall limit (2 s) ends it. */
    r = run_py("loop", "while True:\n    pass\n");
    CHECK(r.outcome == IFL_SANDBOX_SIGNAL || r.outcome == IFL_SANDBOX_TIMEOUT);
    CHECK(r.wall_ms < 5000);
    /* Sleeps forever: only the wall clock sees it. */
    r = run_py("sleep", "import time\ntime.sleep(1000)\n");
    CHECK_EQ_I(r.outcome, IFL_SANDBOX_TIMEOUT);
    CHECK(r.wall_ms < 5000);
    CHECK_EQ_I(run_py("pass", ok).outcome, IFL_SANDBOX_PASS);

    /* Allocates without bound: MemoryError under RLIMIT_AS. */
    r = run_py("alloc", "x = []\nwhile True:\n    x.append(bytearray(1 << 22))\n");
    CHECK(r.outcome != IFL_SANDBOX_PASS);
    CHECK(r.wall_ms < 5000);

    /* Writes a huge file: SIGXFSZ at 1 MiB. */
    r = run_py("bigfile", "with open('big', 'wb') as f:\n    while True:\n"
                          "        f.write(b'x' * 65536)\n");
    CHECK(r.outcome != IFL_SANDBOX_PASS);
    CHECK(r.wall_ms < 5000);

    /* A fork bomb, with children that leave the process group. */
    r = run_py("forkbomb", "import os\nwhile True:\n    try:\n        if os.fork() == 0:\n"
                           "            os.setsid()\n    except OSError:\n        pass\n");
    CHECK(r.outcome != IFL_SANDBOX_PASS);
    CHECK(r.wall_ms < 6000);
    usleep(200000);
    CHECK_EQ_I(leftover_sandbox_processes(), 0);
    CHECK_EQ_I(run_py("pass", ok).outcome, IFL_SANDBOX_PASS);

    /* Opens a socket: refused. */
    r = run_py("socket", "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                         "s.connect(('127.0.0.1', 9))\n");
    CHECK_EQ_I(r.outcome, IFL_SANDBOX_FAIL);
    r = run_py("unixsocket", "import socket\nsocket.socketpair()\n");
    CHECK_EQ_I(r.outcome, IFL_SANDBOX_FAIL);

    /* Nothing inherited: an open descriptor of ours, the environment. */
    int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC on purpose */
    CHECK(fd >= 3);
    setenv("INFILLD_EVAL_SECRET", "1", 1);
    char prog[512];
    snprintf(prog, sizeof prog,
             "import os\n"
             "assert 'INFILLD_EVAL_SECRET' not in os.environ, os.environ\n"
             "assert set(os.environ) <= {'LC_CTYPE'}, dict(os.environ)\n"
             "try:\n    os.fstat(%d)\n    raise SystemExit('fd %d inherited')\n"
             "except OSError:\n    pass\n"
             "assert set(os.listdir('.')) <= {'prog.py', '.output'}, os.listdir('.')\n"
             "assert os.getuid() != 0\n",
             fd, fd);
    r = run_py("isolation", prog);
    CHECK_EQ_I(r.outcome, IFL_SANDBOX_PASS);
    if (r.outcome != IFL_SANDBOX_PASS)
        fprintf(stderr, "%s\n", r.output);
    close(fd);
    unsetenv("INFILLD_EVAL_SECRET");

    ifl_sandbox_isolation iso;
    ifl_sandbox_get_isolation(&iso);
    fprintf(stderr, "isolation: netns %d pidns %d userns %d seccomp %d uid_drop %d\n", iso.netns,
            iso.pidns, iso.userns, iso.seccomp, iso.uid_drop);
    CHECK(iso.seccomp);
}

int main(void) {
    test_metrics();
    test_reader();
    test_baseline();
    test_sandbox();
    return check_finish("test_eval");
}
