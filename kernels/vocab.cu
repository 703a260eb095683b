/* kernels: fused vocabulary reductions. One block per logit row computes the
 * pick's token and (prob, margin, neg_entropy), so only 16 bytes per row leave
 * the device. Semantics follow engine.h's eng_pick:
 *   DREAM:  z = l / T (T > 0) → top-p → top-k → P = softmax(z over the kept
 *           set); token = argmax P (T = 0, lowest index on ties) or, T > 0, the
 *           first v in vocabulary order whose cumulative P exceeds
 *           u(seed, step, pos, 0) (inverse CDF); stats from P.
 *   GUMBEL: token = argmax(l_v + T·g_v), g_v = -log(-log u(seed, step, pos, v))
 *           in double (argmax l when T = 0); stats from softmax(l), unfiltered
 *           and untempered.
 * u is eng_noise_uniform, computed here; pos is noise_pos[row]. These are the
 * semantics engine/cpu/backend_cpu.c documents; sums are in double as there.
 * Top-p keeps entry i of the descending order iff the mass before it is <= p;
 * top-k keeps z >= the k-th largest z. Both thresholds are found with a 4-pass
 * radix select over the order-preserving integer key of the float, so values
 * tied at a threshold are kept together. */
#include "common.cuh"

#define KCU_VR_THREADS 512

__device__ __forceinline__ uint64_t kcu__nmix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Bit-identical to engine/sample/noise.c. */
__device__ __forceinline__ double kcu__noise(uint64_t seed, uint32_t step, uint32_t pos,
                                             uint32_t v) {
    uint64_t kk = ((uint64_t)step << 32) | pos;
    uint64_t h = kcu__nmix(seed ^ kcu__nmix(kk ^ kcu__nmix(v)));
    return ((double)(h >> 11) + 0.5) * 0x1.0p-53;
}

__device__ __forceinline__ double kcu__gumbel(uint64_t seed, uint32_t step, uint32_t pos,
                                              uint32_t v) {
    return -log(-log(kcu__noise(seed, step, pos, v)));
}

/* Order-preserving map float → uint32 (larger float, larger key). */
__device__ __forceinline__ uint32_t kcu__fkey(float f) {
    uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float kcu__keyf(uint32_t k) {
    uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    return __uint_as_float(u);
}

/* Block argmax of (value, index): largest value, lowest index on ties. */
__device__ void kcu__block_argmax(double &v, int &i, double *sv, int *si) {
    for (int o = 16; o > 0; o >>= 1) {
        double ov = __shfl_xor_sync(0xffffffffu, v, o);
        int oi = __shfl_xor_sync(0xffffffffu, i, o);
        if (ov > v || (ov == v && oi < i)) {
            v = ov;
            i = oi;
        }
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) {
        sv[wid] = v;
        si[wid] = i;
    }
    __syncthreads();
    v = lane < nw ? sv[lane] : -INFINITY;
    i = lane < nw ? si[lane] : 0x7fffffff;
    for (int o = 16; o > 0; o >>= 1) {
        double ov = __shfl_xor_sync(0xffffffffu, v, o);
        int oi = __shfl_xor_sync(0xffffffffu, i, o);
        if (ov > v || (ov == v && oi < i)) {
            v = ov;
            i = oi;
        }
    }
}

__device__ __forceinline__ void kcu__top2_merge(float &a1, float &a2, float b1, float b2) {
    if (b1 > a1) {
        a2 = fmaxf(a1, b2);
        a1 = b1;
    } else {
        a2 = fmaxf(a2, b1);
    }
}

__device__ void kcu__block_top2(float &a1, float &a2, float *s1, float *s2) {
    for (int o = 16; o > 0; o >>= 1) {
        float b1 = __shfl_xor_sync(0xffffffffu, a1, o);
        float b2 = __shfl_xor_sync(0xffffffffu, a2, o);
        kcu__top2_merge(a1, a2, b1, b2);
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) {
        s1[wid] = a1;
        s2[wid] = a2;
    }
    __syncthreads();
    a1 = lane < nw ? s1[lane] : -INFINITY;
    a2 = lane < nw ? s2[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) {
        float b1 = __shfl_xor_sync(0xffffffffu, a1, o);
        float b2 = __shfl_xor_sync(0xffffffffu, a2, o);
        kcu__top2_merge(a1, a2, b1, b2);
    }
}

struct kcu__vr_smem {
    float red[32];
    double dred[32];
    int cdf_tok;
    float t1[32], t2[32];
    double av[32];
    int ai[32];
    unsigned cnt[256];
    double mass[256];
    uint32_t sel_prefix;
    unsigned sel_rem;
    double sel_above;
};

/* k-th largest key (1-based k) among z[0..V) / tdiv. */
__device__ uint32_t kcu__select_topk(const float *z, int V, float tdiv, unsigned kth,
                                     kcu__vr_smem &sm) {
    uint32_t prefix = 0, mask = 0;
    unsigned rem = kth;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int t = threadIdx.x; t < 256; t += blockDim.x)
            sm.cnt[t] = 0;
        __syncthreads();
        for (int v = threadIdx.x; v < V; v += blockDim.x) {
            uint32_t key = kcu__fkey(z[v] / tdiv);
            if ((key & mask) == prefix)
                atomicAdd(&sm.cnt[(key >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned acc = 0;
            int bkt = 0;
            for (int b = 255; b >= 0; b--) {
                if (acc + sm.cnt[b] >= rem) {
                    bkt = b;
                    break;
                }
                acc += sm.cnt[b];
            }
            sm.sel_prefix = prefix | ((uint32_t)bkt << shift);
            sm.sel_rem = rem - acc;
        }
        __syncthreads();
        prefix = sm.sel_prefix;
        rem = sm.sel_rem;
        mask |= 255u << shift;
        __syncthreads();
    }
    return prefix;
}

/* Key of the entry at which the descending cumulative softmax mass first
 * exceeds p (the last entry top-p keeps); the lowest key when it never does. */
__device__ uint32_t kcu__select_topp(const float *z, int V, float tdiv, float zmax, double inv_s,
                                     double p, kcu__vr_smem &sm) {
    uint32_t prefix = 0, mask = 0;
    double above = 0.0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int t = threadIdx.x; t < 256; t += blockDim.x) {
            sm.mass[t] = 0.0;
            sm.cnt[t] = 0;
        }
        __syncthreads();
        for (int v = threadIdx.x; v < V; v += blockDim.x) {
            float zz = z[v] / tdiv;
            uint32_t key = kcu__fkey(zz);
            if ((key & mask) == prefix) {
                atomicAdd(&sm.mass[(key >> shift) & 255u], (double)expf(zz - zmax) * inv_s);
                atomicAdd(&sm.cnt[(key >> shift) & 255u], 1u);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int bkt = -1, lowest = -1;
            double acc = above;
            for (int b = 255; b >= 0; b--) {
                if (sm.cnt[b] == 0)
                    continue;
                lowest = b;
                if (acc + sm.mass[b] > p) {
                    bkt = b;
                    break;
                }
                acc += sm.mass[b];
            }
            if (bkt < 0) /* never crosses: keep down to the lowest non-empty bucket */
                bkt = lowest < 0 ? 0 : lowest;
            sm.sel_prefix = prefix | ((uint32_t)bkt << shift);
            sm.sel_above = acc;
        }
        __syncthreads();
        prefix = sm.sel_prefix;
        above = sm.sel_above;
        mask |= 255u << shift;
        __syncthreads();
    }
    return prefix;
}

__global__ void __launch_bounds__(KCU_VR_THREADS)
    kcu__vocab_reduce(float *__restrict__ logits, int V, const kcu_sample_params *__restrict__ pp,
                      const kcu_bias *__restrict__ bias, const uint32_t *__restrict__ noise_pos,
                      kcu_row_result *__restrict__ out) {
    __shared__ kcu__vr_smem sm;
    const kcu_sample_params prm = *pp;
    float *row = logits + (size_t)blockIdx.x * V;
    const uint32_t npos = noise_pos ? noise_pos[blockIdx.x] : (uint32_t)blockIdx.x;

    if (threadIdx.x == 0)
        for (int t = 0; t < prm.n_bias; t++)
            if (bias[t].id >= 0 && bias[t].id < V)
                row[bias[t].id] += bias[t].bias;
    __syncthreads();

    const bool dream = prm.pick == KCU_PICK_DREAM;
    const float T = prm.temperature;
    /* DREAM works on z = l / T (an IEEE division, as the CPU); GUMBEL's
     * statistics use l itself. */
    const float tdiv = (dream && T > 0.0f) ? T : 1.0f;

    float mx = -INFINITY;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        mx = fmaxf(mx, row[v] / tdiv);
    mx = kcu__block_max(mx, sm.red);
    if (mx == -INFINITY) { /* every entry forbidden: as the CPU, token 0 and zeros */
        if (threadIdx.x == 0) {
            kcu_row_result r = {0, 0.0f, 0.0f, 0.0f};
            out[blockIdx.x] = r;
        }
        return;
    }

    /* Threshold on z: entries with z >= zthr are kept (DREAM filters only). */
    float zthr = -INFINITY;
    if (dream && prm.top_p < 1.0f) {
        double s = 0.0;
        for (int v = threadIdx.x; v < V; v += blockDim.x)
            s += (double)expf(row[v] / tdiv - mx);
        s = kcu__block_sum_d(s, sm.dred);
        uint32_t kp = kcu__select_topp(row, V, tdiv, mx, 1.0 / s, (double)prm.top_p, sm);
        zthr = fmaxf(zthr, kcu__keyf(kp));
    }
    if (dream && prm.top_k > 0 && prm.top_k < V) {
        uint32_t kk = kcu__select_topk(row, V, tdiv, (unsigned)prm.top_k, sm);
        zthr = fmaxf(zthr, kcu__keyf(kk));
    }
    double zs = 0.0;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        float z = row[v] / tdiv;
        if (z >= zthr && z > -INFINITY)
            zs += (double)expf(z - mx);
    }
    zs = kcu__block_sum_d(zs, sm.dred);

    /* Entropy, top-2 and the argmax (or Gumbel-max) in one pass over the kept set. */
    double ent = 0.0, best = -INFINITY;
    float a1 = -INFINITY, a2 = -INFINITY;
    int best_i = 0x7fffffff;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        float z = row[v] / tdiv;
        if (!(z >= zthr) || z == -INFINITY)
            continue;
        double pv = (double)expf(z - mx) / zs;
        if (pv > 0.0)
            ent += pv * log(pv + 1e-10);
        kcu__top2_merge(a1, a2, z, -INFINITY);
        double sc = (double)z;
        if (!dream && T > 0.0f)
            sc += (double)T * kcu__gumbel(prm.seed, prm.step, npos, (uint32_t)v);
        if (sc > best || (sc == best && v < best_i)) {
            best = sc;
            best_i = v;
        }
    }
    ent = kcu__block_sum_d(ent, sm.dred);
    kcu__block_top2(a1, a2, sm.t1, sm.t2);
    kcu__block_argmax(best, best_i, sm.av, sm.ai);
    int tok = best_i < V ? best_i : 0;

    if (dream && T > 0.0f) {
        /* Inverse CDF in vocabulary order: the first v whose cumulative mass
         * exceeds u * Z. Each thread owns a contiguous chunk; a block scan of
         * the chunk sums finds the chunk that crosses. */
        const int chunk = (V + blockDim.x - 1) / blockDim.x;
        const int lo = threadIdx.x * chunk, hi = min(V, lo + chunk);
        double own = 0.0;
        int last = -1;
        for (int v = lo; v < hi; v++) {
            float z = row[v] / tdiv;
            if (z >= zthr && z > -INFINITY) {
                float e = expf(z - mx);
                if (e > 0.0f) {
                    own += e;
                    last = v;
                }
            }
        }
        int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
        double incl = own;
        for (int o = 1; o < 32; o <<= 1) {
            double t = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= o)
                incl += t;
        }
        __syncthreads();
        if (lane == 31)
            sm.dred[wid] = incl;
        if (threadIdx.x == 0)
            sm.cdf_tok = -1;
        __syncthreads();
        double wbase = 0.0, total = 0.0;
        for (int w = 0; w < nw; w++) {
            if (w < wid)
                wbase += sm.dred[w];
            total += sm.dred[w];
        }
        incl += wbase;
        double excl = incl - own;
        double target = kcu__noise(prm.seed, prm.step, npos, 0) * total;
        if (own > 0.0 && excl <= target && target < incl) {
            double cum = excl;
            int t = last;
            for (int v = lo; v < hi; v++) {
                float z = row[v] / tdiv;
                if (!(z >= zthr) || z == -INFINITY)
                    continue;
                float e = expf(z - mx);
                if (e <= 0.0f)
                    continue;
                cum += e;
                t = v;
                if (cum > target)
                    break;
            }
            sm.cdf_tok = t;
        }
        double lv = (double)last;
        int li = 0;
        kcu__block_argmax(lv, li, sm.av, sm.ai); /* the last kept index, as fallback */
        __syncthreads();
        tok = sm.cdf_tok >= 0 ? sm.cdf_tok : (lv >= 0.0 ? (int)lv : 0);
    }

    if (threadIdx.x == 0) {
        kcu_row_result r;
        r.token = tok;
        float zt = row[tok] / tdiv;
        r.prob = (zt >= zthr && zt > -INFINITY) ? (float)((double)expf(zt - mx) / zs) : 0.0f;
        double p1 = (double)expf(a1 - mx) / zs;
        double p2 = a2 > -INFINITY ? (double)expf(a2 - mx) / zs : 0.0;
        r.margin = (float)(p1 - p2);
        r.neg_entropy = (float)ent;
        out[blockIdx.x] = r;
    }
}

base_status kcu_vocab_reduce(kcu_ctx *k, float *logits, int n, int vocab,
                             const kcu_sample_params *params, const kcu_bias *bias,
                             const uint32_t *noise_pos, kcu_row_result *out) {
    KCU_REQUIRE(k, vocab > 0, BASE_ERR_INVALID);
    if (n <= 0)
        return BASE_OK;
    kcu__vocab_reduce<<<n, KCU_VR_THREADS, 0, k->stream>>>(logits, vocab, params, bias, noise_pos,
                                                           out);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}

__global__ void kcu__noise_kernel(uint64_t seed, uint32_t step, uint32_t pos, uint32_t v0, int n,
                                  double *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = kcu__noise(seed, step, pos, v0 + (uint32_t)i);
}

base_status kcu_noise_uniform(kcu_ctx *k, uint64_t seed, uint32_t step, uint32_t position,
                              uint32_t v0, int n, double *out) {
    if (n <= 0)
        return BASE_OK;
    kcu__noise_kernel<<<(n + 255) / 256, 256, 0, k->stream>>>(seed, step, position, v0, n, out);
    KCU_CHECK_LAUNCH(k);
    return BASE_OK;
}
