#include "toy.h"

#include <math.h>
#include <string.h>

void toy_info(eng_model_info *info, bool with_expand) {
    memset(info, 0, sizeof *info);
    info->family = ENG_FAMILY_DREAM;
    info->arch = "ToyDream";
    info->vocab_size = TOY_VOCAB;
    info->shift_logits = true;
    info->mask_id = TOY_MASK;
    info->bos_id = TOY_BOS;
    info->eos_id = TOY_EOS;
    info->pad_id = TOY_EOS;
    info->expand_id = with_expand ? TOY_EXPAND : -1;
    info->max_context = 4096;
}

static uint64_t toy_mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double toy_logit(const int32_t *seq, int len, int pos, int v) {
    uint64_t ctx = 0;
    for (int i = 0; i < len; i++)
        if (seq[i] != TOY_MASK)
            ctx += (uint64_t)(seq[i] + 1) * (uint64_t)(i + 1);
    uint64_t h = toy_mix(toy_mix(ctx) ^ toy_mix(((uint64_t)pos << 20) | (uint64_t)v));
    return (double)(h % 4001u) / 500.0 - 4.0;
}

static double toy_bias(const eng_sampling *s, int v) {
    double b = 0.0;
    for (int i = 0; i < s->n_bias; i++)
        if (s->bias[i].id == v)
            b += (double)s->bias[i].bias;
    return b;
}

/* Fills out from the final distribution P (double) and the chosen token. */
static void toy_stats(const double *P, int x0, eng_row_result *out) {
    double p1 = -1.0, p2 = -1.0, ne = 0.0;
    for (int v = 0; v < TOY_VOCAB; v++) {
        if (P[v] > p1) {
            p2 = p1;
            p1 = P[v];
        } else if (P[v] > p2) {
            p2 = P[v];
        }
        ne += P[v] * log(P[v] + 1e-10);
    }
    out->token = x0;
    out->prob = (float)P[x0];
    out->margin = (float)(p1 - p2);
    out->neg_entropy = (float)ne;
}

static void toy_softmax(const double *z, double *P) {
    double mx = -INFINITY, sum = 0.0;
    for (int v = 0; v < TOY_VOCAB; v++)
        if (z[v] > mx)
            mx = z[v];
    for (int v = 0; v < TOY_VOCAB; v++) {
        P[v] = isinf(z[v]) && z[v] < 0 ? 0.0 : exp(z[v] - mx);
        sum += P[v];
    }
    for (int v = 0; v < TOY_VOCAB; v++)
        P[v] /= sum;
}

static void toy_row(const int32_t *seq, int len, int pos, uint32_t flat, const eng_sampling *s,
                    eng_row_result *out) {
    double l[TOY_VOCAB], z[TOY_VOCAB], P[TOY_VOCAB];
    for (int v = 0; v < TOY_VOCAB; v++)
        l[v] = toy_logit(seq, len, pos, v) + toy_bias(s, v);
    double T = s->temperature;
    if (s->pick == ENG_PICK_GUMBEL) {
        toy_softmax(l, P);
        int best = 0;
        double bk = -INFINITY;
        for (int v = 0; v < TOY_VOCAB; v++) {
            double k = l[v];
            if (T > 0)
                k += T * -log(-log(eng_noise_uniform(s->seed, s->step, flat, (uint32_t)v)));
            if (k > bk) {
                bk = k;
                best = v;
            }
        }
        toy_stats(P, best, out);
        return;
    }
    for (int v = 0; v < TOY_VOCAB; v++)
        z[v] = T > 0 ? l[v] / T : l[v];
    if (s->top_p > 0.0f && s->top_p < 1.0f) {
        /* Sort ids by z descending (stable), cumulative softmax, drop past p but
         * keep the first entry that crosses it. */
        int idx[TOY_VOCAB];
        for (int v = 0; v < TOY_VOCAB; v++)
            idx[v] = v;
        for (int i = 1; i < TOY_VOCAB; i++) {
            int x = idx[i], j = i - 1;
            while (j >= 0 && z[idx[j]] < z[x]) {
                idx[j + 1] = idx[j];
                j--;
            }
            idx[j + 1] = x;
        }
        double Pz[TOY_VOCAB];
        toy_softmax(z, Pz);
        double c = 0.0;
        bool drop[TOY_VOCAB] = {0};
        for (int i = 0; i < TOY_VOCAB; i++) {
            bool over = c > (double)s->top_p; /* cumsum before this entry crossed p */
            c += Pz[idx[i]];
            drop[idx[i]] = over;
        }
        for (int v = 0; v < TOY_VOCAB; v++)
            if (drop[v])
                z[v] = -INFINITY;
    }
    if (s->top_k > 0 && s->top_k < TOY_VOCAB) {
        double sorted[TOY_VOCAB];
        memcpy(sorted, z, sizeof sorted);
        for (int i = 1; i < TOY_VOCAB; i++) {
            double x = sorted[i];
            int j = i - 1;
            while (j >= 0 && sorted[j] < x) {
                sorted[j + 1] = sorted[j];
                j--;
            }
            sorted[j + 1] = x;
        }
        double kth = sorted[s->top_k - 1];
        for (int v = 0; v < TOY_VOCAB; v++)
            if (z[v] < kth)
                z[v] = -INFINITY;
    }
    toy_softmax(z, P);
    int best = 0;
    if (T > 0) {
        /* Inverse CDF in vocabulary order with u = noise(seed, step, position, 0). */
        double u = eng_noise_uniform(s->seed, s->step, flat, 0), cum = 0.0;
        for (int v = 0; v < TOY_VOCAB; v++) {
            if (P[v] <= 0)
                continue;
            cum += P[v];
            best = v;
            if (cum > u)
                break;
        }
    } else {
        for (int v = 1; v < TOY_VOCAB; v++)
            if (P[v] > P[best])
                best = v;
    }
    toy_stats(P, best, out);
}

base_status toy_step(void *ud, const eng_batch *batch, const eng_step_req *req,
                     eng_row_result *out) {
    (void)ud;
    for (int q = 0; q < req->n_pos; q++) {
        int flat = req->positions[q];
        int b = flat / batch->len, i = flat % batch->len;
        if (b >= batch->n_seq)
            return BASE_ERR_INVALID;
        const int32_t *seq = batch->tokens + (size_t)b * batch->len;
        int len = batch->len;
        if (batch->valid) {
            /* Only the valid prefix is the sequence (DreamOn's window). */
            const uint8_t *va = batch->valid + (size_t)b * batch->len;
            while (len > 0 && !va[len - 1])
                len--;
        }
        toy_row(seq, len, i, (uint32_t)flat, &req->sampling, &out[q]);
    }
    return BASE_OK;
}
