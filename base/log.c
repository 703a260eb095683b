#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static base_log_level g_level = BASE_LOG_INFO;
static FILE *g_file; /* NULL → stderr */
static char *g_path; /* g_file's path, to reopen it */
static uint64_t g_checked_ns;
static base_log_hook g_hook;
static void *g_hook_ud;
/* Read without the lock on every call: a line below both levels costs one
 * comparison and is never formatted. */
static atomic_int g_hook_level = BASE_LOG_INFO;

static const char *const g_level_names[] = {"trace", "debug", "info", "warn", "error", "off"};

void base_log_set_level(base_log_level level) { g_level = level; }
base_log_level base_log_get_level(void) { return g_level; }

const char *base_log_level_name(base_log_level level) {
    return level >= BASE_LOG_TRACE && level <= BASE_LOG_OFF ? g_level_names[level] : "?";
}

bool base_log_level_parse(const char *s, base_log_level *out) {
    for (size_t i = 0; i < BASE_ARRAY_LEN(g_level_names); i++) {
        if (s && strcmp(s, g_level_names[i]) == 0) {
            *out = (base_log_level)i;
            return true;
        }
    }
    return false;
}

/* The log may hold file names and code positions: only its owner reads it. */
static FILE *base__log_open(const char *path) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

base_status base_log_set_file(const char *path) {
    FILE *f = NULL;
    char *p = NULL;
    if (path) {
        f = base__log_open(path);
        p = strdup(path);
        if (!f || !p) {
            if (f)
                fclose(f);
            free(p);
            return BASE_ERR_IO;
        }
    }
    pthread_mutex_lock(&g_log_mu);
    if (g_file)
        fclose(g_file);
    free(g_path);
    g_file = f;
    g_path = p;
    g_checked_ns = 0;
    pthread_mutex_unlock(&g_log_mu);
    return BASE_OK;
}

/* A log file deleted (or moved away by a log rotation) under the daemon
 * would swallow every later line: at most once a second, a file whose link
 * count dropped to 0 or whose path now names another file is reopened at its
 * path. A full disk loses lines (fprintf fails) and nothing else. Lock held. */
static void base__log_check(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    if (!g_file || !g_path || ns - g_checked_ns < 1000000000u)
        return;
    g_checked_ns = ns;
    struct stat a, b;
    if (fstat(fileno(g_file), &a) != 0)
        return;
    bool gone =
        a.st_nlink == 0 || stat(g_path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev;
    if (!gone)
        return;
    FILE *f = base__log_open(g_path);
    if (f) {
        fclose(g_file);
        g_file = f;
    }
}

void base_log_set_hook(base_log_hook hook, void *ud) {
    pthread_mutex_lock(&g_log_mu);
    g_hook = hook;
    g_hook_ud = ud;
    pthread_mutex_unlock(&g_log_mu);
}

void base_log_set_hook_level(base_log_level level) {
    atomic_store_explicit(&g_hook_level, (int)level, memory_order_relaxed);
}

void base_log_close(void) {
    pthread_mutex_lock(&g_log_mu);
    if (g_file)
        fclose(g_file);
    g_file = NULL;
    free(g_path);
    g_path = NULL;
    g_hook = NULL;
    pthread_mutex_unlock(&g_log_mu);
}

void base_logv(base_log_level level, const char *module, const char *fmt, va_list ap) {
    if (level >= BASE_LOG_OFF)
        return;
    bool to_file = level >= g_level;
    if (!to_file && (int)level < atomic_load_explicit(&g_hook_level, memory_order_relaxed))
        return;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    pthread_mutex_lock(&g_log_mu);
    if (to_file)
        base__log_check();
    FILE *f = g_file ? g_file : stderr;
    if (to_file)
        fprintf(f, "%02d:%02d:%02d.%03ld %-5s %s: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
                ts.tv_nsec / 1000000, g_level_names[level], module ? module : "-", msg);
    if (g_hook && (int)level >= atomic_load_explicit(&g_hook_level, memory_order_relaxed))
        g_hook(g_hook_ud, level, module ? module : "-", msg);
    pthread_mutex_unlock(&g_log_mu);
}

void base_log(base_log_level level, const char *module, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    base_logv(level, module, fmt, ap);
    va_end(ap);
}
