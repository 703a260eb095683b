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
    int gg_type;         /* GGUF files: the ggml type id; -1 for safetensors */
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

/* ---- GGUF (format/gguf.c) -------------------------------------------------- */

/* ggml tensor type ids as written in GGUF files. */
enum {
    ENG__GG_F32 = 0,
    ENG__GG_F16 = 1,
    ENG__GG_Q4_0 = 2,
    ENG__GG_Q8_0 = 8,
    ENG__GG_Q4_K = 12,
    ENG__GG_Q5_K = 13,
    ENG__GG_Q6_K = 14,
    ENG__GG_BF16 = 30,
};

/* GGUF metadata value types. */
typedef enum eng__gg_vtype {
    ENG__GV_U8 = 0,
    ENG__GV_I8,
    ENG__GV_U16,
    ENG__GV_I16,
    ENG__GV_U32,
    ENG__GV_I32,
    ENG__GV_F32,
    ENG__GV_BOOL,
    ENG__GV_STR,
    ENG__GV_ARR,
    ENG__GV_U64,
    ENG__GV_I64,
    ENG__GV_F64,
} eng__gg_vtype;

typedef struct eng__gg_str {
    const char *s; /* borrowed from the file image; not NUL-terminated */
    uint64_t n;
} eng__gg_str;

/* One key/value pair. Scalars are widened into i/u/f; arrays of scalars point
 * at their packed little-endian elements; arrays of strings are indexed. */
typedef struct eng__gg_kv {
    eng__gg_str key;
    eng__gg_vtype type;
    eng__gg_vtype elem; /* arrays only */
    uint64_t count;     /* arrays only */
    const uint8_t *arr; /* arrays of scalars: first element */
    eng__gg_str *strs;  /* arrays of strings / the string: owned index [count] or [1] */
    int64_t i;
    uint64_t u;
    double f;
} eng__gg_kv;

typedef struct eng__gg_file {
    uint32_t version;
    uint32_t alignment;
    eng__gg_kv *kv; /* [n_kv] owned */
    uint64_t n_kv;
    uint64_t data_off; /* start of the tensor data region */
} eng__gg_file;

/* Bytes of a row of n elements of ggml type `type`, 0 when infilld does not
 * know the type or n is not a whole number of blocks. */
uint64_t eng__gg_row_bytes(uint32_t type, int64_t n);
const char *eng__gg_type_name(uint32_t type); /* "Q4_K", or "type 99" */

/* Parses and validates a GGUF image buf[0..size) named fname for messages:
 * header, every key/value, tensor infos (name, dims, type, offset aligned,
 * inside the data region, no overlaps). Appends its tensors to *tensors like
 * eng__st_parse (shape in row-major order: shape[0] = outermost). Fills *gf
 * (caller frees with eng__gg_file_deinit). Never reads outside buf. */
base_status eng__gg_parse(const uint8_t *buf, size_t size, const char *fname, int file,
                          eng__gg_file *gf, eng__st_tensor **tensors, int *n_tensors,
                          eng_error *err);
void eng__gg_file_deinit(eng__gg_file *gf);
/* The pair named key, or NULL. */
const eng__gg_kv *eng__gg_get(const eng__gg_file *gf, const char *key);
/* Typed reads: false when absent; *bad set when present with an unusable type. */
bool eng__gg_get_u64(const eng__gg_file *gf, const char *key, uint64_t *out, bool *bad);
bool eng__gg_get_f64(const eng__gg_file *gf, const char *key, double *out, bool *bad);
bool eng__gg_get_bool(const eng__gg_file *gf, const char *key, bool *out, bool *bad);
/* A string value copied into a NUL-terminated buffer (truncated to len). */
bool eng__gg_get_str(const eng__gg_file *gf, const char *key, char *out, size_t len, bool *bad);

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
    eng__gg_file *gg; /* [n_files] GGUF headers; NULL for safetensors */
    void **owned;     /* [n_owned] weight copies made at load (LLaDA GGUF Q/K rows) */
    int n_owned;
    const eng_backend_i *bi;
    eng_backend *be;
    eng_load_opts opts;
    struct eng__dg_model *dg; /* DiffusionGemma weights (arch/dgemma.c); NULL otherwise */
};

/* arch/model.c, shared with arch/dgemma.c: the tensor named `name` (sorted
 * index), binding with a shape check (rows = 0: 1-D of cols), and mapping
 * model.safetensors or its index. */
const eng__st_tensor *eng__find(const eng_model *m, const char *name);
base_status eng__bind(eng_model *m, eng_tensor *out, const char *name, int64_t rows, int64_t cols,
                      bool optional, eng_error *err);
base_status eng__map_weights(eng_model *m, eng_error *err);

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
/* ---- quantised blocks (cpu/quant.c) ------------------------------------------ */

static inline bool eng__dtype_is_block(eng_dtype t) { return t >= ENG_Q8_0; }
/* The dtype of a ggml tensor type infilld computes with (F32, F16, BF16, Q8_0,
 * Q4_0, Q4_K, Q5_K, Q6_K); false for any other. */
bool eng__dtype_from_gg(int gg_type, eng_dtype *out);
/* Bytes of n elements (n a whole number of blocks for block types). */
uint64_t eng__dtype_bytes(eng_dtype t, int64_t n);
/* Dequantises n elements starting at block-aligned element `first` of the
 * block stream at data (bit-exact to ggml's dequantize_row_*). */
void eng__dequant(eng_dtype t, const void *data, int64_t first, int64_t n, float *out);

/* Converts n elements of row `row` of tensor t to f32. */
void eng__tensor_row_f32(const eng_tensor *t, int64_t row, int64_t col0, int64_t n, float *out);

#endif
