/* kernels: device query, context (stream + cuBLAS), memory, graphs, timers. */
#include "common.cuh"

#include <stdlib.h>
#include <string.h>

size_t kcu_dtype_size(kcu_dtype dt) {
    switch (dt) {
    case KCU_F16:
    case KCU_BF16:
        return 2;
    case KCU_FP8:
        return 1;
    case KCU_F32:
        return 4;
    default:
        return 0; /* block types */
    }
}

/* Errors after which the CUDA context is corrupted and every later call fails. */
static bool kcu__sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice:
    case cudaErrorCudartUnloading:
    case cudaErrorContextIsDestroyed:
    case cudaErrorLaunchTimeout:
        return true;
    default:
        return false;
    }
}

base_status kcu__fail(kcu_ctx *k, const char *file, int line, cudaError_t e, const char *what) {
    if (k) {
        snprintf(k->err, sizeof k->err, "%s:%d: %s (%s) in %s", file, line, cudaGetErrorName(e),
                 cudaGetErrorString(e), what);
        if (kcu__sticky(e))
            k->lost = true;
    }
    cudaGetLastError(); /* clear a non-sticky error so later calls can proceed */
    return e == cudaErrorMemoryAllocation ? BASE_ERR_NOMEM : BASE_ERR_DEVICE;
}

base_status kcu__fail_blas(kcu_ctx *k, const char *file, int line, cublasStatus_t s,
                           const char *what) {
    if (k)
        snprintf(k->err, sizeof k->err, "%s:%d: cuBLAS status %d in %s", file, line, (int)s, what);
    return s == CUBLAS_STATUS_ALLOC_FAILED ? BASE_ERR_NOMEM : BASE_ERR_DEVICE;
}

base_status kcu__fail_msg(kcu_ctx *k, const char *file, int line, base_status st, const char *msg) {
    if (k)
        snprintf(k->err, sizeof k->err, "%s:%d: %s", file, line, msg);
    return st;
}

base_status kcu_device_query(kcu_device_info *info, char *msg, size_t msg_len) {
    memset(info, 0, sizeof *info);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    cudaDriverGetVersion(&info->driver_version);
    cudaRuntimeGetVersion(&info->runtime_version);
    if (e != cudaSuccess || n <= 0) {
        if (msg && msg_len)
            snprintf(msg, msg_len, "no usable CUDA device: %s",
                     e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
        cudaGetLastError();
        return BASE_ERR_DEVICE;
    }
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, 0);
    if (e == cudaSuccess)
        e = cudaSetDevice(0);
    size_t fr = 0, tot = 0;
    if (e == cudaSuccess)
        e = cudaMemGetInfo(&fr, &tot);
    if (e != cudaSuccess) {
        if (msg && msg_len)
            snprintf(msg, msg_len, "CUDA device 0 unusable: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return BASE_ERR_DEVICE;
    }
    info->count = n;
    info->major = p.major;
    info->minor = p.minor;
    info->free_bytes = fr;
    info->total_bytes = tot;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    if (msg && msg_len)
        snprintf(msg, msg_len, "%s (sm_%d%d, %.1f GiB)", p.name, p.major, p.minor,
                 (double)tot / (1024.0 * 1024.0 * 1024.0));
    return BASE_OK;
}

kcu_ctx *kcu_ctx_new(int device, char *err, size_t err_len) {
    kcu_ctx *k = (kcu_ctx *)calloc(1, sizeof *k);
    if (!k) {
        if (err && err_len)
            snprintf(err, err_len, "out of memory");
        return NULL;
    }
    k->device = device;
    k->qdirect_max = KCU_Q_MAXN;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&k->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreate(&k->t0);
    if (e == cudaSuccess)
        e = cudaEventCreate(&k->t1);
    if (e != cudaSuccess) {
        kcu__fail(k, __FILE__, __LINE__, e, "context setup");
        goto fail;
    }
    if (cublasCreate(&k->blas) != CUBLAS_STATUS_SUCCESS) {
        kcu__fail_msg(k, __FILE__, __LINE__, BASE_ERR_DEVICE, "cublasCreate failed");
        goto fail;
    }
    k->workspace_bytes = 32u << 20;
    e = cudaMalloc(&k->workspace, k->workspace_bytes);
    if (e != cudaSuccess) {
        kcu__fail(k, __FILE__, __LINE__, e, "cuBLAS workspace");
        goto fail;
    }
    if (cublasSetStream(k->blas, k->stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSetWorkspace(k->blas, k->workspace, k->workspace_bytes) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(k->blas, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
        kcu__fail_msg(k, __FILE__, __LINE__, BASE_ERR_DEVICE, "cuBLAS setup failed");
        goto fail;
    }
    return k;
fail:
    if (err && err_len)
        snprintf(err, err_len, "%s", k->err);
    kcu_ctx_free(k);
    return NULL;
}

void kcu_ctx_free(kcu_ctx *k) {
    if (!k)
        return;
    if (k->stream)
        cudaStreamSynchronize(k->stream);
    if (k->blas)
        cublasDestroy(k->blas);
    cudaFree(k->workspace);
    if (k->t0)
        cudaEventDestroy(k->t0);
    if (k->t1)
        cudaEventDestroy(k->t1);
    if (k->stream)
        cudaStreamDestroy(k->stream);
    cudaGetLastError();
    free(k);
}

const char *kcu_ctx_error(const kcu_ctx *k) { return k ? k->err : "no context"; }

bool kcu_ctx_lost(const kcu_ctx *k) { return !k || k->lost; }

base_status kcu_sync(kcu_ctx *k) {
    KCU_CHECK(k, cudaStreamSynchronize(k->stream));
    return BASE_OK;
}

base_status kcu_malloc(kcu_ctx *k, size_t bytes, void **dev) {
    *dev = NULL;
    KCU_CHECK(k, cudaMalloc(dev, bytes ? bytes : 1));
    return BASE_OK;
}

void kcu_free(kcu_ctx *k, void *dev) {
    (void)k;
    if (dev)
        cudaFree(dev);
}

base_status kcu_host_alloc(kcu_ctx *k, size_t bytes, void **pinned) {
    *pinned = NULL;
    KCU_CHECK(k, cudaMallocHost(pinned, bytes ? bytes : 1));
    return BASE_OK;
}

void kcu_host_free(kcu_ctx *k, void *pinned) {
    (void)k;
    if (pinned)
        cudaFreeHost(pinned);
}

base_status kcu_upload(kcu_ctx *k, void *dev, const void *host, size_t bytes) {
    KCU_CHECK(k, cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, k->stream));
    KCU_CHECK(k, cudaStreamSynchronize(k->stream));
    return BASE_OK;
}

base_status kcu_download(kcu_ctx *k, void *host, const void *dev, size_t bytes) {
    KCU_CHECK(k, cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, k->stream));
    KCU_CHECK(k, cudaStreamSynchronize(k->stream));
    return BASE_OK;
}

base_status kcu_upload_async(kcu_ctx *k, void *dev, const void *host, size_t bytes) {
    if (bytes == 0) /* no node in a captured graph for an empty copy */
        return BASE_OK;
    KCU_CHECK(k, cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, k->stream));
    return BASE_OK;
}

base_status kcu_download_async(kcu_ctx *k, void *host, const void *dev, size_t bytes) {
    if (bytes == 0)
        return BASE_OK;
    KCU_CHECK(k, cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, k->stream));
    return BASE_OK;
}

base_status kcu_copy_d2d(kcu_ctx *k, void *dst, const void *src, size_t bytes) {
    KCU_CHECK(k, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, k->stream));
    return BASE_OK;
}

base_status kcu_memset(kcu_ctx *k, void *dev, int value, size_t bytes) {
    KCU_CHECK(k, cudaMemsetAsync(dev, value, bytes, k->stream));
    return BASE_OK;
}

base_status kcu_timer_start(kcu_ctx *k) {
    KCU_CHECK(k, cudaEventRecord(k->t0, k->stream));
    return BASE_OK;
}

base_status kcu_timer_stop(kcu_ctx *k, double *ms) {
    float f = 0;
    KCU_CHECK(k, cudaEventRecord(k->t1, k->stream));
    KCU_CHECK(k, cudaEventSynchronize(k->t1));
    KCU_CHECK(k, cudaEventElapsedTime(&f, k->t0, k->t1));
    *ms = f;
    return BASE_OK;
}

base_status kcu_measure_d2d_bandwidth(kcu_ctx *k, size_t bytes, int iters, double *bytes_per_s) {
    void *a = NULL, *b = NULL;
    base_status st = kcu_malloc(k, bytes, &a);
    if (st == BASE_OK)
        st = kcu_malloc(k, bytes, &b);
    double ms = 0;
    if (st == BASE_OK)
        st = kcu_memset(k, a, 1, bytes);
    if (st == BASE_OK)
        st = kcu_copy_d2d(k, b, a, bytes); /* warm-up */
    if (st == BASE_OK)
        st = kcu_timer_start(k);
    for (int i = 0; st == BASE_OK && i < iters; i++)
        st = kcu_copy_d2d(k, (i & 1) ? a : b, (i & 1) ? b : a, bytes);
    if (st == BASE_OK)
        st = kcu_timer_stop(k, &ms);
    /* a copy reads and writes every byte: count both directions */
    if (st == BASE_OK)
        *bytes_per_s = ms > 0 ? 2.0 * (double)bytes * iters / (ms * 1e-3) : 0.0;
    kcu_free(k, a);
    kcu_free(k, b);
    return st;
}

base_status kcu_graph_begin(kcu_ctx *k) {
    KCU_CHECK(k, cudaStreamBeginCapture(k->stream, cudaStreamCaptureModeThreadLocal));
    return BASE_OK;
}

base_status kcu_graph_end(kcu_ctx *k, kcu_graph **out) {
    *out = NULL;
    cudaGraph_t g = NULL;
    KCU_CHECK(k, cudaStreamEndCapture(k->stream, &g));
    kcu_graph *kg = (kcu_graph *)calloc(1, sizeof *kg);
    if (!kg) {
        cudaGraphDestroy(g);
        return kcu__fail_msg(k, __FILE__, __LINE__, BASE_ERR_NOMEM, "out of memory");
    }
    cudaError_t e = cudaGraphInstantiate(&kg->exec, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) {
        free(kg);
        return kcu__fail(k, __FILE__, __LINE__, e, "cudaGraphInstantiate");
    }
    *out = kg;
    return BASE_OK;
}

base_status kcu_graph_launch(kcu_ctx *k, kcu_graph *g) {
    KCU_CHECK(k, cudaGraphLaunch(g->exec, k->stream));
    return BASE_OK;
}

void kcu_graph_free(kcu_graph *g) {
    if (!g)
        return;
    cudaGraphExecDestroy(g->exec);
    free(g);
}
