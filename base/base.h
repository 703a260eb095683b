/* base: the only module every other module may include.
 * Status codes, logging, a bump arena, UTF-8/UTF-16 helpers and a growable buffer. */
#ifndef INFILLD_BASE_H
#define INFILLD_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- status codes ------------------------------------------------------
 * One list, 0 ok and negative failures, in the manner of libuv's UV_ERRNO_MAP.
 * X(name, value, message) */
#define BASE_STATUS_MAP(X)                                                                         \
    X(OK, 0, "ok")                                                                                 \
    X(ERR_NOMEM, -1, "out of memory")                                                              \
    X(ERR_IO, -2, "input/output error")                                                            \
    X(ERR_INVALID, -3, "invalid argument")                                                         \
    X(ERR_PARSE, -4, "malformed input")                                                            \
    X(ERR_NOT_FOUND, -5, "not found")                                                              \
    X(ERR_UNSUPPORTED, -6, "not supported")                                                        \
    X(ERR_RANGE, -7, "out of range")                                                               \
    X(ERR_CANCELLED, -8, "cancelled")                                                              \
    X(ERR_TOO_LARGE, -9, "too large")                                                              \
    X(ERR_STATE, -10, "wrong state")                                                               \
    X(ERR_TIMEOUT, -11, "time budget exhausted")                                                   \
    X(ERR_DEVICE, -12, "device error")                                                             \
    X(ERR_MODEL, -13, "invalid model")                                                             \
    X(ERR_DENIED, -14, "permission denied")                                                        \
    X(ERR_EOF, -15, "end of input")                                                                \
    X(ERR_SUPERSEDED, -16, "superseded by a newer request")

typedef enum base_status {
#define BASE__STATUS_ENUM(name, value, msg) BASE_##name = value,
    BASE_STATUS_MAP(BASE__STATUS_ENUM)
#undef BASE__STATUS_ENUM
} base_status;

/* Human-readable message; never NULL. */
const char *base_status_str(base_status st);
/* The enum name without prefix ("ERR_NOMEM"); never NULL. */
const char *base_status_name(base_status st);

/* ---- logging -----------------------------------------------------------
 * Thread-safe. Writes "TIME LEVEL module: message" lines to stderr or a file.
 * stdout is never used: on stdio it carries LSP frames. */
typedef enum base_log_level {
    BASE_LOG_TRACE = 0,
    BASE_LOG_DEBUG,
    BASE_LOG_INFO,
    BASE_LOG_WARN,
    BASE_LOG_ERROR,
    BASE_LOG_OFF
} base_log_level;

void base_log_set_level(base_log_level level);
base_log_level base_log_get_level(void);
/* Opens (appends to) path; NULL means stderr. */
base_status base_log_set_file(const char *path);
/* "trace", "debug", ... "off"; never NULL. */
const char *base_log_level_name(base_log_level level);
/* Parses "trace|debug|info|warn|error|off". */
bool base_log_level_parse(const char *s, base_log_level *out);
/* Optional hook that receives every line at or above the hook level (e.g. to
 * forward them to LSP clients), whatever the level of the file or stderr.
 * Called on the logging thread with the log lock held; must not log. Once
 * base_log_set_hook(NULL, NULL) returns, no call is in progress. */
typedef void (*base_log_hook)(void *ud, base_log_level level, const char *module, const char *msg);
void base_log_set_hook(base_log_hook hook, void *ud);
/* The lowest level the hook receives; default info. */
void base_log_set_hook_level(base_log_level level);
void base_log_close(void);

#if defined(__GNUC__)
#define BASE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BASE_PRINTF(a, b)
#endif

void base_log(base_log_level level, const char *module, const char *fmt, ...) BASE_PRINTF(3, 4);
void base_logv(base_log_level level, const char *module, const char *fmt, va_list ap);

#define BASE_LOGE(mod, ...) base_log(BASE_LOG_ERROR, mod, __VA_ARGS__)
#define BASE_LOGW(mod, ...) base_log(BASE_LOG_WARN, mod, __VA_ARGS__)
#define BASE_LOGI(mod, ...) base_log(BASE_LOG_INFO, mod, __VA_ARGS__)
#define BASE_LOGD(mod, ...) base_log(BASE_LOG_DEBUG, mod, __VA_ARGS__)

/* ---- arena ---------------------------------------------------------------
 * Bump allocator for per-request memory, freed in one call. */
typedef struct base_arena base_arena;

base_arena *base_arena_new(size_t chunk_size);    /* 0 → 64 KiB */
void base_arena_free(base_arena *a);              /* NULL-safe */
void base_arena_reset(base_arena *a);             /* keeps the first chunk */
void *base_arena_alloc(base_arena *a, size_t n);  /* 16-byte aligned; NULL on OOM */
void *base_arena_calloc(base_arena *a, size_t n); /* zeroed */
char *base_arena_strndup(base_arena *a, const char *s, size_t n);
char *base_arena_strdup(base_arena *a, const char *s);
char *base_arena_printf(base_arena *a, const char *fmt, ...) BASE_PRINTF(2, 3);
size_t base_arena_used(const base_arena *a);

/* ---- growable byte buffer ------------------------------------------------ */
typedef struct base_buf {
    char *data; /* always NUL-terminated when cap > 0 */
    size_t len;
    size_t cap;
} base_buf;

void base_buf_init(base_buf *b);
void base_buf_deinit(base_buf *b);
base_status base_buf_reserve(base_buf *b, size_t extra);
base_status base_buf_append(base_buf *b, const void *p, size_t n);
base_status base_buf_appends(base_buf *b, const char *s);
base_status base_buf_printf(base_buf *b, const char *fmt, ...) BASE_PRINTF(2, 3);
/* Removes n bytes from the front. */
void base_buf_consume(base_buf *b, size_t n);
/* Replaces [off, off+del) with ins[0..ins_len). */
base_status base_buf_splice(base_buf *b, size_t off, size_t del, const char *ins, size_t ins_len);
/* Transfers ownership of data to the caller (caller frees); b becomes empty. */
char *base_buf_steal(base_buf *b, size_t *len);

/* ---- UTF-8 / UTF-16 --------------------------------------------------------
 * Invalid UTF-8 bytes count as one code point (U+FFFD, 1 UTF-16 unit) each, so
 * every byte string maps to a well-defined position sequence. */

/* Decodes one code point at s[0..n); returns its byte length (>= 1 when n > 0)
 * and stores the code point (U+FFFD for an invalid byte) in *cp. */
size_t base_utf8_decode(const char *s, size_t n, uint32_t *cp);
/* Encodes cp into out (4 bytes room); returns its length (0 if cp is invalid). */
size_t base_utf8_encode(uint32_t cp, char *out);
bool base_utf8_valid(const char *s, size_t n);
/* Number of UTF-16 code units in s[0..n). */
size_t base_utf16_len(const char *s, size_t n);
/* Number of code points in s[0..n). */
size_t base_utf32_len(const char *s, size_t n);
/* Byte offset inside line s[0..n) of the position `units` counted in UTF-16 code
 * units. Returns false when units lies past the end of the line, or inside a
 * surrogate pair (then *byte_off is the start of that code point). */
bool base_utf16_to_byte(const char *s, size_t n, size_t units, size_t *byte_off);
bool base_utf32_to_byte(const char *s, size_t n, size_t cps, size_t *byte_off);

/* ---- time ----------------------------------------------------------------- */
/* Monotonic clock in nanoseconds. */
uint64_t base_now_ns(void);
/* CPU time of the calling thread in nanoseconds: budgets for work that must
 * not run away (a parse) but may be slowed by a busy machine. */
uint64_t base_thread_cpu_ns(void);
static inline double base_ms_since(uint64_t t0) { return (double)(base_now_ns() - t0) / 1e6; }

/* ---- misc ------------------------------------------------------------------ */
#define BASE_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define BASE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BASE_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Reads a whole file (NUL-terminated). Caller frees *out. */
base_status base_read_file(const char *path, char **out, size_t *len);

/* Deterministic PRNG (splitmix64 seeding xoshiro256**), shared by the sampler,
 * tests and generators so that a seed means the same thing everywhere. */
typedef struct base_rng {
    uint64_t s[4];
} base_rng;
void base_rng_seed(base_rng *r, uint64_t seed);
uint64_t base_rng_next(base_rng *r);
/* Uniform double in [0, 1) with 53 random bits. */
double base_rng_uniform(base_rng *r);

#endif
