/* engine-private: struct bodies of the model and context, the safetensors
 * index, the thread pool and the matrix kernels shared by the CPU backend. */
#ifndef INFILLD_ENGINE_IMPL_H
#define INFILLD_ENGINE_IMPL_H

#include "backend.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Fills err (if non-NULL) with status and a printf-style message; returns status. */
base_status eng__err(eng_error *err, base_status st, const char *fmt, ...) BASE_PRINTF(3, 4);

/* ---- safetensors ------------------------------------------------------------ */

/* Dtype of a tensor in a safetensors file; only F32/F16/BF16 are computable. */
typedef enum eng__st_dtype {
    ENG__ST_F32 = 0,
    ENG__ST_F16,
    ENG__ST_BF16,
    ENG__ST_OTHER, /* a valid safetensors dtype the engine cannot compute with */
} eng__st_dtype;

typedef struct eng__st_tensor {
    char *name;          /* owned */
    eng__st_dtype dtype; /* computable dtype or OTHER */
    int ndim;
    int64_t shape[8];
    uint64_t begin, end; /* byte offsets inside the data region */
    const void *data;    /* base + header + begin (borrowed from the mapping) */
    int file;            /* index of the shard that holds it */
} eng__st_tensor;

typedef struct eng__st_file {
    char *path; /* owned */
    void *map;  /* mmap of the whole file (NULL for in-memory buffers) */
    size_t size;
    int guard;              /* format/mapguard.c slot of map, -1 when none */
    unsigned long dev, ino; /* the mapped file, to tell truncation from replacement */
    int64_t mtime_ns;       /* its modification time when mapped */
} eng__st_file;

/* format/mapguard.c: SIGBUS on a registered mapping (its file truncated)
 * maps zeros over the page and counts a fault instead of ending the process.
 * add returns a slot (-1: not guarded); faults counts since add. */
int eng__mapguard_add(const void *p, size_t n);
void eng__mapguard_remove(int slot);
unsigned eng__mapguard_faults(int slot);

/* Parses and validates a safetensors image buf[0..size) named fname for
 * messages. Appends its tensors to *tensors (realloc'ed; *n_tensors updated)
 * with file index `file`. Never reads outside buf. */
base_status eng__st_parse(const uint8_t *buf, size_t size, const char *fname, int file,
                          eng__st_tensor **tensors, int *n_tensors, eng_error *err);
void eng__st_tensors_free(eng__st_tensor *t, int n);

/* ---- model and context ---------------------------------------------------- */

struct eng_model {
    eng_model_info info;
    char *arch; /* owned copy of architectures[0] */
    char *dir;  /* owned */
    eng__st_file *files;
    int n_files;
    eng__st_tensor *tensors; /* sorted by name */
    int n_tensors;
    eng_weights w;
    eng_layer_w *layers; /* [n_layer], w.layers */
    eng_tokenizer *tok;
    const eng_backend_i *bi;
    eng_backend *be;
    eng_load_opts opts;
};

struct eng_ctx {
    eng_model *m;
    eng_bctx *bc;
};

/* ---- thread pool ----------------------------------------------------------- */

typedef struct eng__pool eng__pool;
/* One task of a parallel loop: task in [0, n_tasks), tid in [0, n_threads). */
typedef void (*eng__task_fn)(void *arg, int task, int tid);

eng__pool *eng__pool_new(int n_threads); /* the caller counts as thread 0 */
void eng__pool_free(eng__pool *p);
int eng__pool_threads(const eng__pool *p);
/* Runs fn for every task, distributed over the threads; returns when all are done. */
void eng__pool_run(eng__pool *p, eng__task_fn fn, void *arg, int n_tasks);

/* ---- conversions ------------------------------------------------------------ */

float eng__f16_to_f32(uint16_t h);
static inline float eng__bf16_to_f32(uint16_t b) {
    union {
        uint32_t u;
        float f;
    } v = {(uint32_t)b << 16};
    return v.f;
}
/* Converts n elements of row `row` of tensor t to f32. */
void eng__tensor_row_f32(const eng_tensor *t, int64_t row, int64_t col0, int64_t n, float *out);

#endif
