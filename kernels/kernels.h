/* kernels: CUDA kernels and cuBLAS GEMMs for the engine's CUDA backend.
 *
 * A plain C API: nothing here exposes a CUDA type, so engine/cuda/backend_cuda.c
 * compiles as C without the CUDA headers. Every call is asynchronous on the
 * context's stream unless it says it synchronises; errors are sticky per call
 * (each returns a base_status and writes "file:line: cuda message" into the
 * context's error text, see kcu_ctx_error).
 *
 * Layout conventions: activations are row-major [rows, features]; weights are
 * row-major [out, in] (nn.Linear); K/V caches are [seq, max_len, n_kv, head_dim]
 * fp32. "dev" pointers live in device memory, "pinned" ones in page-locked
 * host memory from kcu_host_alloc. */
#ifndef INFILLD_KERNELS_H
#define INFILLD_KERNELS_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Storage types; values match eng_dtype for the first three. The block types
 * (ggml's layouts, kernels/qblock.h) are eng_dtype + 1 (kcu_dtype_of_eng). */
typedef enum kcu_dtype {
    KCU_F32 = 0,
    KCU_F16,
    KCU_BF16,
    KCU_FP8,
    KCU_Q8_0,
    KCU_Q4_0,
    KCU_Q4_K,
    KCU_Q5_K,
    KCU_Q6_K
} kcu_dtype;

/* Bytes of one element; 0 for the block types (see kcu_row_bytes). */
size_t kcu_dtype_size(kcu_dtype dt);
static inline bool kcu_dtype_is_block(kcu_dtype dt) { return dt >= KCU_Q8_0 && dt <= KCU_Q6_K; }
/* Bytes of a row of `cols` elements (a whole number of blocks for block types;
 * 0 when it is not). */
size_t kcu_row_bytes(kcu_dtype dt, int64_t cols);
/* The kcu_dtype of an eng_dtype value (F32/F16/BF16 and the block types). */
static inline kcu_dtype kcu_dtype_of_eng(int eng_type) {
    return eng_type <= 2 ? (kcu_dtype)eng_type : (kcu_dtype)(eng_type + 1);
}

/* ---- devices ------------------------------------------------------------- */

typedef struct kcu_device_info {
    int count;         /* number of CUDA devices; 0 when none */
    int major, minor;  /* compute capability of device 0 */
    size_t free_bytes; /* device 0 memory */
    size_t total_bytes;
    char name[128];
    int driver_version;  /* e.g. 13000 */
    int runtime_version; /* the cudart linked in */
} kcu_device_info;

/* Fills info for device 0. Returns ERR_DEVICE (and info->count = 0) when there
 * is no usable device; msg (may be NULL) receives the reason. Never aborts. */
base_status kcu_device_query(kcu_device_info *info, char *msg, size_t msg_len);

/* ---- context: device, stream, cuBLAS handles ----------------------------- */

typedef struct kcu_ctx kcu_ctx;

/* Selects device `device`, creates a stream and the cuBLAS/cuBLASLt handles
 * with a fixed workspace (so GEMMs can be captured in graphs). NULL + err. */
kcu_ctx *kcu_ctx_new(int device, char *err, size_t err_len);
void kcu_ctx_free(kcu_ctx *k); /* NULL-safe; synchronises first */
/* Text of the last error ("kernels/attn.cu:88: cudaErrorIllegalAddress ..."). */
const char *kcu_ctx_error(const kcu_ctx *k);
/* Waits for the stream; the single device→host synchronisation point. */
base_status kcu_sync(kcu_ctx *k);
/* True once a sticky (context-corrupting) CUDA error has been seen: the
 * device must be treated as lost. */
bool kcu_ctx_lost(const kcu_ctx *k);

/* ---- memory -------------------------------------------------------------- */

base_status kcu_malloc(kcu_ctx *k, size_t bytes, void **dev);
void kcu_free(kcu_ctx *k, void *dev); /* NULL-safe */
base_status kcu_host_alloc(kcu_ctx *k, size_t bytes, void **pinned);
void kcu_host_free(kcu_ctx *k, void *pinned);
/* Synchronous copies (used at load time). */
base_status kcu_upload(kcu_ctx *k, void *dev, const void *host, size_t bytes);
base_status kcu_download(kcu_ctx *k, void *host, const void *dev, size_t bytes);
/* Asynchronous copies on the stream (host side must be pinned to overlap). */
base_status kcu_upload_async(kcu_ctx *k, void *dev, const void *host, size_t bytes);
base_status kcu_download_async(kcu_ctx *k, void *host, const void *dev, size_t bytes);
base_status kcu_copy_d2d(kcu_ctx *k, void *dst, const void *src, size_t bytes);
base_status kcu_memset(kcu_ctx *k, void *dev, int value, size_t bytes);
/* Measures device-to-device copy bandwidth in bytes/s over `bytes`-sized copies. */
base_status kcu_measure_d2d_bandwidth(kcu_ctx *k, size_t bytes, int iters, double *bytes_per_s);
/* Wall time of work on the stream between two marks, in milliseconds. */
base_status kcu_timer_start(kcu_ctx *k);
base_status kcu_timer_stop(kcu_ctx *k, double *ms); /* synchronises */

/* ---- graphs -------------------------------------------------------------- */

typedef struct kcu_graph kcu_graph;

/* Everything issued on the stream between begin and end is recorded, not run. */
base_status kcu_graph_begin(kcu_ctx *k);
base_status kcu_graph_end(kcu_ctx *k, kcu_graph **out);
base_status kcu_graph_launch(kcu_ctx *k, kcu_graph *g);
void kcu_graph_free(kcu_graph *g); /* NULL-safe */

/* ---- weights and GEMM ---------------------------------------------------- */

/* One row range of a stacked matrix, in its own storage type. */
#define KCU_MAX_PARTS 4
typedef struct kcu_part {
    kcu_dtype dtype; /* a block type or BF16 */
    int64_t rows;
    void *data; /* dev, rows * kcu_row_bytes(dtype, cols) */
} kcu_part;

/* A device weight matrix [rows = out, cols = in]. FP8 matrices carry one fp32
 * scale per output row (W ≈ scale[r] * fp8[r, c]). Quantised matrices
 * (n_parts > 0) are stored as their GGUF blocks, as row ranges stacked in
 * order, each in its own type (a Q4_K_M file has attn_q/attn_k in Q4_K and
 * attn_v in Q6_K; a tensor whose width is not a whole number of blocks is
 * BF16); dtype is then part[0]'s and data unused. */
typedef struct kcu_weight {
    kcu_dtype dtype;
    int64_t rows, cols;
    void *data;   /* dev */
    float *scale; /* dev [rows], FP8 only */
    int n_parts;
    kcu_part part[KCU_MAX_PARTS];
} kcu_weight;

/* y[n, rows] = x[n, cols] · Wᵀ + beta · y, FP32 accumulation. x must be in the
 * GEMM input type kcu_act_dtype(w->dtype) (BF16 for BF16 and FP8 weights, F16
 * for F16, F32 for F32). beta is 0 or 1 (1 fuses a residual add). FP8 weights
 * use a fused dequantising GEMV kernel for n <= 16, else dequantise into
 * `scratch` (>= rows*cols*2 bytes, may be NULL when no FP8 weight is used) and
 * call cuBLAS. */
base_status kcu_gemm(kcu_ctx *k, const kcu_weight *w, const void *x, int n, float *y, float beta,
                     void *scratch);
kcu_dtype kcu_act_dtype(kcu_dtype weight_dtype);

/* Quantised matrices (n_parts > 0; x BF16). Up to kcu_ctx_set_qdirect rows
 * (default KCU_Q_MAXN) the x rows are quantised to int8 blocks of 32
 * (kq_quantize32: the CPU backend's quantiser, bit for bit) into `scratch`, and
 * each block part runs a direct kernel that reads its blocks once per chunk of
 * KCU_Q_MAXN rows: one warp per output feature, lanes over the 32-value
 * sub-blocks, __dp4a integer dots with the per-block scales in fp32 (kq_vd: the
 * CPU int8 kernels' terms, bit for bit; only the order of their sum differs).
 * More rows dequantise each block part to BF16 into `scratch` and call cuBLAS.
 * BF16 parts always call cuBLAS on their rows. */
#define KCU_Q_MAXN 40
typedef enum kcu_gemm_path {
    KCU_GEMM_AUTO = 0,
    KCU_GEMM_DIRECT,  /* the int8 kernel whatever n (chunks of KCU_Q_MAXN rows) */
    KCU_GEMM_SCRATCH, /* dequantise + cuBLAS whatever n */
} kcu_gemm_path;
/* Rows up to which KCU_GEMM_AUTO takes the direct kernel (0: never). */
void kcu_ctx_set_qdirect(kcu_ctx *k, int max_rows);
base_status kcu_gemm_q(kcu_ctx *k, const kcu_weight *w, const void *x, int n, float *y, float beta,
                       void *scratch, kcu_gemm_path path);
/* Scratch bytes kcu_gemm needs for w (0 for unquantised, non-FP8 matrices). */
size_t kcu_gemm_scratch_bytes(const kcu_weight *w);
/* Dequantises n_values (a whole number of blocks) of block type dt to F32 or
 * BF16: value for value what kq_dq gives on the host. */
base_status kcu_dequant(kcu_ctx *k, const void *blocks, kcu_dtype dt, size_t n_values, void *out,
                        kcu_dtype out_dt);
/* x[n, cols] (F32/F16/BF16) -> n * cols / 32 int8 blocks (kq_q8a, 40 bytes each). */
base_status kcu_quantize_act(kcu_ctx *k, const void *x, kcu_dtype x_dt, int n, int cols, void *out);
/* Fills n_values of block type dt with random quants and fixed moderate scales
 * (synthetic benchmark weights; largest values 0.03 to 0.12 by type). */
base_status kcu_fill_random_blocks(kcu_ctx *k, void *dev, kcu_dtype dt, size_t n_values,
                                   uint64_t seed);

/* Quantises a device matrix of type src_dt [rows, cols] to FP8 E4M3 with one
 * scale per row (absmax / 448). dst->data/scale must be allocated. */
base_status kcu_quantize_fp8(kcu_ctx *k, const void *src, kcu_dtype src_dt, int64_t rows,
                             int64_t cols, kcu_weight *dst);
/* Fills a device buffer of n elements with deterministic pseudo-random values
 * uniform in [-scale, scale] (synthetic benchmark weights). */
base_status kcu_fill_random(kcu_ctx *k, void *dev, kcu_dtype dt, size_t n, float scale,
                            uint64_t seed);
/* Elementwise dtype conversion of n values; dst and src types among F32/F16/BF16. */
base_status kcu_convert(kcu_ctx *k, const void *src, kcu_dtype src_dt, void *dst, kcu_dtype dst_dt,
                        size_t n);

/* ---- elementwise / row ops ----------------------------------------------- */

/* out[i, :] = table[ids[i], :] as fp32; ids outside [0, vocab) give zeros. A
 * block-type table is decoded row by row (kq_dq, the CPU's values). */
base_status kcu_embed(kcu_ctx *k, const void *table, kcu_dtype dt, int vocab, int d,
                      const int32_t *ids, int n, float *out);
/* out[i, :] = (x[i, :] * r) * w with r = 1/sqrt(mean(x[i, :]^2) + eps) (sum in
 * double, r in fp32), written as out_dt (the GEMM input type). */
base_status kcu_rmsnorm(kcu_ctx *k, const float *x, const float *w, int n, int d, float eps,
                        void *out, kcu_dtype out_dt);
/* y[i, :] += b for n rows of width d. */
base_status kcu_bias_add(kcu_ctx *k, float *y, const float *b, int n, int d);
/* y += x, n elements. */
base_status kcu_add(kcu_ctx *k, float *y, const float *x, size_t n);
/* NeoX rotate-half RoPE in place on n rows of n_head heads of head_dim, rows
 * `row_stride` floats apart, at positions pos[i]; angle pos * theta^(-2j/hd)
 * in double, cos/sin rounded to fp32 (as the CPU backend). */
base_status kcu_rope(kcu_ctx *k, float *x, int row_stride, const int32_t *pos, int n, int n_head,
                     int head_dim, float theta);
/* out[i, j] = silu(gu[i, j]) * gu[i, d_ff + j] written as out_dt; gu is [n, 2*d_ff]. */
base_status kcu_swiglu(kcu_ctx *k, const float *gu, int n, int d_ff, void *out, kcu_dtype out_dt);
/* dst[i, :] = src[idx[i], :] (fp32 rows of width d); idx[i] < 0 gives zeros
 * (padded head rows: a zero row stays zero through RMSNorm and the LM head). */
base_status kcu_gather_rows(kcu_ctx *k, const float *src, const int32_t *idx, int n, int d,
                            float *dst);
/* Positions of the window slots [q_start, q_start + n_q) of each sequence:
 * pos[b*n_q + i] = cumsum(valid[b, :q_start+i+1]) - 1 for valid slots, 1 for
 * padded ones (Dream's convention; padded rows produce zeros anyway).
 * valid (dev [n_seq, len]) NULL = all valid. */
base_status kcu_positions(kcu_ctx *k, const uint8_t *valid, int n_seq, int len, int q_start,
                          int n_q, int32_t *pos);

/* ---- attention ----------------------------------------------------------- */

typedef struct kcu_attn_shape {
    int n_seq;    /* sequences */
    int len;      /* keys per sequence (canvas length) */
    int max_len;  /* cache stride per sequence, >= len */
    int q_start;  /* first canvas slot of the query window */
    int n_q;      /* query rows per sequence (window length) */
    int n_head;   /* query heads */
    int n_kv;     /* K/V heads; n_head % n_kv == 0 */
    int head_dim; /* even, <= 128 */
} kcu_attn_shape;

/* Writes the window's fresh K/V into the caches. kv holds n_seq*n_q rows whose
 * K part starts at column k_off and V part at v_off (row stride `stride`). */
base_status kcu_kv_store(kcu_ctx *k, const kcu_attn_shape *s, const float *qkv, int stride,
                         int k_off, int v_off, float *kcache, float *vcache);
/* Bidirectional attention of the window's queries over all len cached keys of
 * their sequence: out[b*n_q + i, h*hd:(h+1)*hd] (written as out_dt). Keys with
 * valid[b, j] == 0 are masked; query rows that are padded or see no valid key
 * produce zeros. q rows come from qkv with row stride `stride` (Q at column 0).
 * Online-softmax (flash-style) tiling over keys, scale 1/sqrt(head_dim).
 * Short windows split their keys over several blocks (flash-decoding) when
 * `scratch` (dev, at least kcu_attention_scratch(s) floats) is given; NULL
 * never splits. */
base_status kcu_attention(kcu_ctx *k, const kcu_attn_shape *s, const float *qkv, int stride,
                          const float *kcache, const float *vcache, const uint8_t *valid,
                          float *scratch, void *out, kcu_dtype out_dt);
/* Floats of scratch kcu_attention uses for shape s (0: it does not split). */
size_t kcu_attention_scratch(const kcu_attn_shape *s);

/* ---- vocabulary reductions ----------------------------------------------- */

typedef enum kcu_pick { KCU_PICK_DREAM = 0, KCU_PICK_GUMBEL } kcu_pick;

/* Sampling parameters read from device memory (so a captured graph can be
 * replayed with new values). Mirrors eng_sampling. */
typedef struct kcu_sample_params {
    int32_t pick; /* kcu_pick */
    float temperature;
    float top_p;
    int32_t top_k;
    uint64_t seed;
    uint32_t step;
    int32_t n_bias; /* entries used in the bias table */
} kcu_sample_params;

typedef struct kcu_bias {
    int32_t id;
    float bias;
} kcu_bias;

/* Same layout as eng_row_result. */
typedef struct kcu_row_result {
    int32_t token;
    float prob;
    float margin;
    float neg_entropy;
} kcu_row_result;

/* Per logit row r of logits[n, vocab]: applies the bias table (in place),
 * then the pick's filtering and statistics, and writes out[r]. noise_pos[r] is
 * the position counter of eng_noise_uniform for the row. */
base_status kcu_vocab_reduce(kcu_ctx *k, float *logits, int n, int vocab,
                             const kcu_sample_params *params, const kcu_bias *bias,
                             const uint32_t *noise_pos, kcu_row_result *out);

/* The counter-based uniform of engine/sample/noise.c, computed on the device for n
 * consecutive vocab indices v0..v0+n-1 (tests compare it with the host). */
base_status kcu_noise_uniform(kcu_ctx *k, uint64_t seed, uint32_t step, uint32_t position,
                              uint32_t v0, int n, double *out);

#ifdef __cplusplus
}
#endif

#endif
