/* infill eval sandbox: one Python program in a child process with limits
 * (infill/eval.h). Model-generated code is untrusted: it may loop, allocate
 * without bound, write huge files, fork without end or reach for the
 * network, and the harness must go on counting.
 *
 * The child is made with clone(2) so that it can start in new PID and
 * network namespaces (and a user namespace when not root); where the kernel
 * refuses, fewer namespaces are tried, down to a plain fork in its own
 * session, and the isolation reached is reported. Between clone and execve
 * the child runs only system calls (the harness is multi-threaded, so
 * nothing that may take a lock): everything it needs is prepared before. The
 * seccomp filter is seven BPF instructions written here rather than built
 * with libseccomp, whose loading allocates and so cannot run in that child. */
#define _GNU_SOURCE
#include "eval.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define IFL__AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define IFL__AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* Root-run children become uid/gid base + 64 * pid + slot % 64: uids far
 * above the normal user range (Debian's dynamic range, below the overflow
 * uid for any pid up to the kernel's 2^22 maximum), so that no real process
 * shares their RLIMIT_NPROC count, and neither do parallel runners nor two
 * harnesses running at once. */
#define IFL__SANDBOX_UID_BASE 3900000000u

void ifl_sandbox_opts_default(ifl_sandbox_opts *o) {
    memset(o, 0, sizeof *o);
    o->wall_s = 10;
    o->cpu_s = 10;
    o->mem_bytes = (size_t)1 << 30;
    o->file_bytes = (size_t)16 << 20;
    o->nproc = 32;
}

const char *ifl_sandbox_outcome_name(ifl_sandbox_outcome o) {
    switch (o) {
    case IFL_SANDBOX_PASS:
        return "pass";
    case IFL_SANDBOX_FAIL:
        return "fail";
    case IFL_SANDBOX_SIGNAL:
        return "signal";
    case IFL_SANDBOX_TIMEOUT:
        return "timeout";
    }
    return "?";
}

/* The clone flags that worked, found by the first run: -1 not yet known. */
static atomic_int ifl__flags_ok = -1;
static atomic_bool ifl__seccomp_ok = true;

void ifl_sandbox_get_isolation(ifl_sandbox_isolation *out) {
    int f = atomic_load(&ifl__flags_ok);
    memset(out, 0, sizeof *out);
    if (f < 0)
        f = 0;
    out->netns = (f & CLONE_NEWNET) != 0;
    out->pidns = (f & CLONE_NEWPID) != 0;
    out->userns = (f & CLONE_NEWUSER) != 0;
#ifdef IFL__AUDIT_ARCH
    out->seccomp = atomic_load(&ifl__seccomp_ok);
#endif
    out->uid_drop = geteuid() == 0;
}

typedef struct ifl__child {
    const char *python;
    char *const *argv;
    char *const *envp;
    const char *dir;
    int out_fd, null_fd;
    bool drop;
    uid_t uid;
    struct rlimit cpu, as, fsize, nproc, nofile, core;
    struct sock_fprog *filter;
    int errpipe; /* write end: errno of a failed setup step, then the step's number */
} ifl__child;

static void ifl__child_fail(const ifl__child *c, int step) {
    int msg[2] = {errno, step};
    ssize_t w = write(c->errpipe, msg, sizeof msg);
    (void)w;
    _exit(126);
}

/* In the child: system calls only (it is a copy of a threaded parent made
 * by clone, so no lock of the C library may be taken). */
static int ifl__child_main(void *arg) {
    const ifl__child *c = arg;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &sa, NULL); /* ignored dispositions survive execve */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid(); /* its own process group: the parent kills the group */
    if (dup2(c->null_fd, 0) < 0 || dup2(c->out_fd, 1) < 0 || dup2(c->out_fd, 2) < 0)
        ifl__child_fail(c, 1);
        /* Nothing else is inherited: every other descriptor closes on exec (the
         * error pipe too, which tells the parent that execve succeeded). */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) < 0)
#endif
        for (int fd = 3; fd < 65536; fd++)
            if (fd != c->errpipe)
                close(fd);
    if (chdir(c->dir) < 0)
        ifl__child_fail(c, 2);
    if (setrlimit(RLIMIT_CPU, &c->cpu) < 0 || setrlimit(RLIMIT_AS, &c->as) < 0 ||
        setrlimit(RLIMIT_FSIZE, &c->fsize) < 0 || setrlimit(RLIMIT_NPROC, &c->nproc) < 0 ||
        setrlimit(RLIMIT_NOFILE, &c->nofile) < 0 || setrlimit(RLIMIT_CORE, &c->core) < 0)
        ifl__child_fail(c, 3);
    /* Raw system calls: glibc's setgroups/setgid/setuid apply the change to
     * every thread it knows of, under a lock another thread of the parent
     * may have held at clone time; the child has one thread and no such
     * lock may be taken (a run hung here now and then under load). */
    if (c->drop && (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setgid, c->uid) < 0 ||
                    syscall(SYS_setuid, c->uid) < 0))
        ifl__child_fail(c, 4);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        ifl__child_fail(c, 5);
    if (c->filter && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, c->filter, 0, 0) < 0)
        ifl__child_fail(c, 6);
    execve(c->python, c->argv, c->envp);
    ifl__child_fail(c, 7);
    return 127;
}

/* The interpreter: the given path or name, else /usr/bin/python3, else
 * python3 on the PATH. */
static bool ifl__find_python(const char *want, char *out, size_t cap) {
    if (want && strchr(want, '/')) {
        snprintf(out, cap, "%s", want);
        return access(out, X_OK) == 0;
    }
    /* Debian's interpreter first: a PATH entry may be a shim (pyenv) that
     * needs the environment, or sit where the dropped uid cannot read. */
    if (!want && access("/usr/bin/python3", X_OK) == 0) {
        snprintf(out, cap, "/usr/bin/python3");
        return true;
    }
    const char *name = want ? want : "python3";
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        if (n > 0 && (size_t)snprintf(out, cap, "%.*s/%s", (int)n, path, name) < cap &&
            access(out, X_OK) == 0)
            return true;
        path += n + (e ? 1 : 0);
    }
    return false;
}

static int ifl__rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    if (type == FTW_DP || type == FTW_D || type == FTW_DNR)
        rmdir(p);
    else
        unlink(p);
    return 0;
}

static int ifl__open_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw) {
    (void)ftw;
    if (type == FTW_D || type == FTW_DNR)
        chmod(p, (sb->st_mode & 07777) | S_IRWXU); /* a child's mode-000 folder */
    return 0;
}

/* Removes what the program left in its directory, whatever the modes. */
static void ifl__rmtree(const char *dir) {
    nftw(dir, ifl__open_entry, 16, FTW_PHYS);
    nftw(dir, ifl__rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool ifl__write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static void ifl__read_tail(int fd, char *out, size_t cap) {
    out[0] = 0;
    off_t end = lseek(fd, 0, SEEK_END);
    if (end <= 0)
        return;
    off_t from = end > (off_t)(cap - 1) ? end - (off_t)(cap - 1) : 0;
    ssize_t r = pread(fd, out, cap - 1, from);
    out[r > 0 ? r : 0] = 0;
    for (ssize_t i = 0; i < r; i++)
        if (out[i] == 0)
            out[i] = '?';
}

base_status ifl_sandbox_run(const ifl_sandbox_opts *o, const char *program, size_t len,
                            ifl_sandbox_result *r) {
    ifl_sandbox_opts def;
    if (!o) {
        ifl_sandbox_opts_default(&def);
        o = &def;
    }
    memset(r, 0, sizeof *r);
    char python[4096];
    if (!ifl__find_python(o->python, python, sizeof python))
        return BASE_ERR_NOT_FOUND;
    const char *tmp = o->tmp ? o->tmp : getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char dir[4096], prog[4200], outp[4200];
    if ((size_t)snprintf(dir, sizeof dir, "%s/infilld-eval-XXXXXX", tmp) >= sizeof dir)
        return BASE_ERR_TOO_LARGE;
    if (!mkdtemp(dir))
        return BASE_ERR_IO;
    snprintf(prog, sizeof prog, "%s/prog.py", dir);
    snprintf(outp, sizeof outp, "%s/.output", dir);
    base_status st = BASE_OK;
    int pfd = -1, out_fd = -1, null_fd = -1, ep[2] = {-1, -1};
    char *stack = NULL;
    bool drop = geteuid() == 0;
    uid_t uid =
        (uid_t)(IFL__SANDBOX_UID_BASE + 64u * ((unsigned)getpid() & 0x3fffffu) + (o->slot % 64u));

    pfd = open(prog, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (pfd < 0 || !ifl__write_all(pfd, program, len)) {
        st = BASE_ERR_IO;
        goto out;
    }
    close(pfd);
    pfd = -1;
    /* The output file is outside the child's reach by name (a dot file it
     * could delete, but it only gets the descriptor's writes counted). */
    out_fd = open(outp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out_fd < 0 || null_fd < 0 || pipe2(ep, O_CLOEXEC) < 0) {
        st = BASE_ERR_IO;
        goto out;
    }
    if (drop && (chown(dir, uid, uid) < 0 || chown(prog, uid, uid) < 0)) {
        st = BASE_ERR_DENIED;
        goto out;
    }

    char *argv[] = {"python3", "-I", "-B", "prog.py", NULL};
    char *envp[] = {NULL};
#ifdef IFL__AUDIT_ARCH
    /* socket(2) and socketpair(2) fail with EACCES; another ABI (x32, a
     * 32-bit entry) kills the process. */
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IFL__AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 4, 0),
#else
        BPF_JUMP(BPF_JMP | BPF_JA | BPF_K, 0, 0, 0),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    struct sock_fprog filter = {(unsigned short)BASE_ARRAY_LEN(code), code};
    struct sock_fprog *fp = &filter;
#else
    struct sock_fprog *fp = NULL;
#endif
    ifl__child c = {
        .python = python,
        .argv = argv,
        .envp = envp,
        .dir = dir,
        .out_fd = out_fd,
        .null_fd = null_fd,
        .drop = drop,
        .uid = uid,
        .cpu = {(rlim_t)o->cpu_s, (rlim_t)o->cpu_s + 1},
        .as = {(rlim_t)o->mem_bytes, (rlim_t)o->mem_bytes},
        .fsize = {(rlim_t)o->file_bytes, (rlim_t)o->file_bytes},
        .nproc = {(rlim_t)o->nproc, (rlim_t)o->nproc},
        .nofile = {64, 64},
        .core = {0, 0},
        .filter = fp,
        .errpipe = ep[1],
    };
    const size_t stack_size = 256 * 1024;
    stack = malloc(stack_size);
    if (!stack) {
        st = BASE_ERR_NOMEM;
        goto out;
    }
    /* Namespaces, most first; root needs no user namespace (and its
     * RLIMIT_NPROC needs the uid drop instead). */
    int base = drop ? 0 : CLONE_NEWUSER;
    int tries[] = {base | CLONE_NEWPID | CLONE_NEWNET, base | CLONE_NEWNET, 0};
    int known = atomic_load(&ifl__flags_ok);
    pid_t pid = -1;
    int used = 0;
    uint64_t t0 = base_now_ns();
    for (size_t i = 0; i < BASE_ARRAY_LEN(tries); i++) {
        if (known >= 0 && tries[i] != known)
            continue;
        /* The stack grows down on every architecture Linux runs this on. */
        pid = clone(ifl__child_main, stack + stack_size, tries[i] | SIGCHLD, &c);
        if (pid >= 0) {
            used = tries[i];
            break;
        }
    }
    if (pid < 0) {
        st = BASE_ERR_IO;
        goto out;
    }
    close(ep[1]);
    ep[1] = -1;
    /* The wall clock: poll the child, at 1 ms and then up to 20 ms. */
    int status = 0;
    bool timed_out = false;
    long wait_ns = 1000000;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            st = BASE_ERR_IO;
            break;
        }
        if (base_ms_since(t0) > o->wall_s * 1000.0) {
            timed_out = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        struct timespec ts = {0, wait_ns};
        nanosleep(&ts, NULL);
        if (wait_ns < 20000000)
            wait_ns *= 2;
    }
    /* Children left behind in the group (no PID namespace to end them). */
    kill(-pid, SIGKILL);
    r->wall_ms = base_ms_since(t0);
    int msg[2];
    ssize_t got = read(ep[0], msg, sizeof msg);
    if (got == (ssize_t)sizeof msg) {
        /* The setup failed before execve: no program ran. A seccomp refusal
         * (an old kernel) is retried without the filter next time. */
        if (msg[1] == 6)
            atomic_store(&ifl__seccomp_ok, false);
        snprintf(r->output, sizeof r->output, "sandbox setup step %d failed: %s", msg[1],
                 strerror(msg[0]));
        st = BASE_ERR_IO;
        goto out;
    }
    if (st != BASE_OK)
        goto out;
    atomic_store(&ifl__flags_ok, used);
    ifl__read_tail(out_fd, r->output, sizeof r->output);
    if (timed_out) {
        r->outcome = IFL_SANDBOX_TIMEOUT;
    } else if (WIFEXITED(status)) {
        r->exit_code = WEXITSTATUS(status);
        r->outcome = r->exit_code == 0 ? IFL_SANDBOX_PASS : IFL_SANDBOX_FAIL;
    } else {
        r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        r->outcome = IFL_SANDBOX_SIGNAL;
    }
out:
    free(stack);
    if (pfd >= 0)
        close(pfd);
    if (out_fd >= 0)
        close(out_fd);
    if (null_fd >= 0)
        close(null_fd);
    if (ep[0] >= 0)
        close(ep[0]);
    if (ep[1] >= 0)
        close(ep[1]);
    ifl__rmtree(dir);
    return st;
}
