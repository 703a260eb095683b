#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static base_log_level g_level = BASE_LOG_INFO;
static FILE *g_file; /* NULL → stderr */
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

base_status base_log_set_file(const char *path) {
    FILE *f = NULL;
    if (path) {
        f = fopen(path, "a");
        if (!f)
            return BASE_ERR_IO;
        setvbuf(f, NULL, _IOLBF, 0);
    }
    pthread_mutex_lock(&g_log_mu);
    if (g_file)
        fclose(g_file);
    g_file = f;
    pthread_mutex_unlock(&g_log_mu);
    return BASE_OK;
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
