/* GGUF (v2/v3, little-endian) header parser and validator.
 *
 * Layout (ggml docs/gguf.md): magic "GGUF", u32 version, u64 tensor count,
 * u64 key/value count, the key/value pairs (u64-length strings, u32 value
 * type, value; arrays are u32 element type + u64 count + elements), then per
 * tensor: name, u32 n_dims (<= 4), u64 ne[n_dims] (ne[0] innermost), u32 ggml
 * type, u64 offset into the data region. The data region starts at the end
 * of the tensor infos rounded up to general.alignment (default 32).
 *
 * Everything a file can get wrong is checked before any tensor byte is read:
 * every read inside the image, counts bounded by the bytes left (so a huge
 * count fails at once instead of allocating), string lengths, value types,
 * the alignment a power of two, each tensor's offset aligned, its type known,
 * ne[0] a whole number of blocks, its bytes inside the data region without
 * overflow, no two tensors overlapping, no two with one name. */
#define _GNU_SOURCE
#include "engine_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENG__GG_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */
#define ENG__GG_MAX_DIMS 4
#define ENG__GG_MAX_NAME 4096

/* Block size (elements) and bytes per block of the ggml types; names for all
 * ids so that a message can say which type a file uses. size 0 = a type that
 * infilld cannot read (its tensors are rejected with their name). */
static const struct {
    const char *name;
    uint32_t blck, size;
} eng__gg_types[] = {
    [0] = {"F32", 1, 4},       [1] = {"F16", 1, 2},        [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 0},     [6] = {"Q5_0", 32, 0},      [7] = {"Q5_1", 32, 0},
    [8] = {"Q8_0", 32, 34},    [9] = {"Q8_1", 32, 0},      [10] = {"Q2_K", 256, 0},
    [11] = {"Q3_K", 256, 0},   [12] = {"Q4_K", 256, 144},  [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210}, [15] = {"Q8_K", 256, 0},    [16] = {"IQ2_XXS", 256, 0},
    [17] = {"IQ2_XS", 256, 0}, [18] = {"IQ3_XXS", 256, 0}, [19] = {"IQ1_S", 256, 0},
    [20] = {"IQ4_NL", 32, 0},  [21] = {"IQ3_S", 256, 0},   [22] = {"IQ2_S", 256, 0},
    [23] = {"IQ4_XS", 256, 0}, [24] = {"I8", 1, 0},        [25] = {"I16", 1, 0},
    [26] = {"I32", 1, 0},      [27] = {"I64", 1, 0},       [28] = {"F64", 1, 0},
    [29] = {"IQ1_M", 256, 0},  [30] = {"BF16", 1, 2},      [34] = {"TQ1_0", 256, 0},
    [35] = {"TQ2_0", 256, 0},  [39] = {"MXFP4", 32, 0},
};

const char *eng__gg_type_name(uint32_t type) {
    static _Thread_local char buf[24];
    if (type < BASE_ARRAY_LEN(eng__gg_types) && eng__gg_types[type].name)
        return eng__gg_types[type].name;
    snprintf(buf, sizeof buf, "type %u", type);
    return buf;
}

uint64_t eng__gg_row_bytes(uint32_t type, int64_t n) {
    if (type >= BASE_ARRAY_LEN(eng__gg_types) || !eng__gg_types[type].size || n < 0)
        return 0;
    const uint32_t b = eng__gg_types[type].blck;
    if ((uint64_t)n % b)
        return 0;
    return (uint64_t)n / b * eng__gg_types[type].size;
}

/* ---- bounded reader ---------------------------------------------------------- */

typedef struct eng__rd {
    const uint8_t *p, *end, *base;
    const char *fname;
    eng_error *err;
} eng__rd;

static base_status eng__rd_short(eng__rd *r, const char *what) {
    return eng__err(r->err, BASE_ERR_MODEL, "%s: truncated at byte %zu reading %s", r->fname,
                    (size_t)(r->p - r->base), what);
}

static bool eng__rd_need(const eng__rd *r, uint64_t n) { return (uint64_t)(r->end - r->p) >= n; }

static base_status eng__rd_bytes(eng__rd *r, void *out, size_t n, const char *what) {
    if (!eng__rd_need(r, n))
        return eng__rd_short(r, what);
    memcpy(out, r->p, n); /* little-endian host: checked by the build (x86-64, aarch64) */
    r->p += n;
    return BASE_OK;
}

static base_status eng__rd_u32(eng__rd *r, uint32_t *v, const char *what) {
    return eng__rd_bytes(r, v, 4, what);
}
static base_status eng__rd_u64(eng__rd *r, uint64_t *v, const char *what) {
    return eng__rd_bytes(r, v, 8, what);
}

static base_status eng__rd_str(eng__rd *r, eng__gg_str *s, const char *what) {
    uint64_t n = 0;
    base_status st = eng__rd_u64(r, &n, what);
    if (st)
        return st;
    if (!eng__rd_need(r, n))
        return eng__err(r->err, BASE_ERR_MODEL,
                        "%s: %s at byte %zu claims %llu bytes, more than the file holds", r->fname,
                        what, (size_t)(r->p - r->base), (unsigned long long)n);
    s->s = (const char *)r->p;
    s->n = n;
    r->p += n;
    return BASE_OK;
}

static uint32_t eng__gv_size(eng__gg_vtype t) {
    switch (t) {
    case ENG__GV_U8:
    case ENG__GV_I8:
    case ENG__GV_BOOL:
        return 1;
    case ENG__GV_U16:
    case ENG__GV_I16:
        return 2;
    case ENG__GV_U32:
    case ENG__GV_I32:
    case ENG__GV_F32:
        return 4;
    case ENG__GV_U64:
    case ENG__GV_I64:
    case ENG__GV_F64:
        return 8;
    case ENG__GV_STR:
    case ENG__GV_ARR:
        return 0;
    }
    return 0;
}

/* Widens the scalar at p of type t into kv->i/u/f. */
static void eng__gv_scalar(eng__gg_kv *kv, eng__gg_vtype t, const uint8_t *p) {
    union {
        uint8_t u8;
        int8_t i8;
        uint16_t u16;
        int16_t i16;
        uint32_t u32;
        int32_t i32;
        float f32;
        uint64_t u64;
        int64_t i64;
        double f64;
    } v;
    memcpy(&v, p, eng__gv_size(t));
    switch (t) {
    case ENG__GV_U8:
    case ENG__GV_BOOL:
        kv->u = v.u8, kv->i = v.u8, kv->f = v.u8;
        break;
    case ENG__GV_I8:
        kv->i = v.i8, kv->u = (uint64_t)v.i8, kv->f = v.i8;
        break;
    case ENG__GV_U16:
        kv->u = v.u16, kv->i = v.u16, kv->f = v.u16;
        break;
    case ENG__GV_I16:
        kv->i = v.i16, kv->u = (uint64_t)v.i16, kv->f = v.i16;
        break;
    case ENG__GV_U32:
        kv->u = v.u32, kv->i = v.u32, kv->f = v.u32;
        break;
    case ENG__GV_I32:
        kv->i = v.i32, kv->u = (uint64_t)v.i32, kv->f = v.i32;
        break;
    case ENG__GV_F32:
        kv->f = v.f32, kv->i = 0, kv->u = 0;
        break;
    case ENG__GV_U64:
        kv->u = v.u64, kv->i = (int64_t)v.u64, kv->f = (double)v.u64;
        break;
    case ENG__GV_I64:
        kv->i = v.i64, kv->u = (uint64_t)v.i64, kv->f = (double)v.i64;
        break;
    case ENG__GV_F64:
        kv->f = v.f64, kv->i = 0, kv->u = 0;
        break;
    case ENG__GV_STR:
    case ENG__GV_ARR:
        break;
    }
}

static base_status eng__rd_value(eng__rd *r, eng__gg_kv *kv, const char *key) {
    char what[96];
    snprintf(what, sizeof what, "the value of '%.60s'", key);
    if (kv->type == ENG__GV_STR) {
        kv->strs = malloc(sizeof *kv->strs);
        if (!kv->strs)
            return eng__err(r->err, BASE_ERR_NOMEM, "%s: out of memory", r->fname);
        kv->count = 1;
        return eng__rd_str(r, kv->strs, what);
    }
    if (kv->type != ENG__GV_ARR) {
        uint32_t sz = eng__gv_size(kv->type);
        if (!eng__rd_need(r, sz))
            return eng__rd_short(r, what);
        if (kv->type == ENG__GV_BOOL && *r->p > 1)
            return eng__err(r->err, BASE_ERR_MODEL, "%s: key '%s': bool value %u is not 0 or 1",
                            r->fname, key, *r->p);
        eng__gv_scalar(kv, kv->type, r->p);
        r->p += sz;
        return BASE_OK;
    }
    uint32_t et = 0;
    base_status st;
    if ((st = eng__rd_u32(r, &et, what)) || (st = eng__rd_u64(r, &kv->count, what)))
        return st;
    if (et > ENG__GV_F64)
        return eng__err(r->err, BASE_ERR_MODEL, "%s: key '%s': unknown array element type %u",
                        r->fname, key, et);
    if (et == ENG__GV_ARR)
        return eng__err(r->err, BASE_ERR_UNSUPPORTED, "%s: key '%s': arrays of arrays", r->fname,
                        key);
    kv->elem = (eng__gg_vtype)et;
    if (et == ENG__GV_STR) {
        /* Every string needs at least its 8-byte length. */
        if (kv->count > (uint64_t)(r->end - r->p) / 8)
            return eng__err(r->err, BASE_ERR_MODEL,
                            "%s: key '%s': %llu strings cannot fit in the %zu bytes left", r->fname,
                            key, (unsigned long long)kv->count, (size_t)(r->end - r->p));
        kv->strs = malloc((size_t)(kv->count ? kv->count : 1) * sizeof *kv->strs);
        if (!kv->strs)
            return eng__err(r->err, BASE_ERR_NOMEM, "%s: out of memory", r->fname);
        for (uint64_t i = 0; i < kv->count; i++)
            if ((st = eng__rd_str(r, &kv->strs[i], what)))
                return st;
        return BASE_OK;
    }
    uint32_t sz = eng__gv_size(kv->elem);
    if (kv->count > (uint64_t)(r->end - r->p) / sz)
        return eng__err(r->err, BASE_ERR_MODEL,
                        "%s: key '%s': %llu elements of %u bytes cannot fit in the %zu bytes left",
                        r->fname, key, (unsigned long long)kv->count, sz, (size_t)(r->end - r->p));
    kv->arr = r->p;
    r->p += kv->count * sz;
    return BASE_OK;
}

void eng__gg_file_deinit(eng__gg_file *gf) {
    if (!gf)
        return;
    for (uint64_t i = 0; i < gf->n_kv; i++)
        free(gf->kv[i].strs);
    free(gf->kv);
    memset(gf, 0, sizeof *gf);
}

static bool eng__gg_key_is(const eng__gg_str *k, const char *key) {
    size_t n = strlen(key);
    return k->n == n && memcmp(k->s, key, n) == 0;
}

const eng__gg_kv *eng__gg_get(const eng__gg_file *gf, const char *key) {
    for (uint64_t i = 0; i < gf->n_kv; i++)
        if (eng__gg_key_is(&gf->kv[i].key, key))
            return &gf->kv[i];
    return NULL;
}

static bool eng__gv_is_int(eng__gg_vtype t) {
    return t == ENG__GV_U8 || t == ENG__GV_I8 || t == ENG__GV_U16 || t == ENG__GV_I16 ||
           t == ENG__GV_U32 || t == ENG__GV_I32 || t == ENG__GV_U64 || t == ENG__GV_I64;
}

bool eng__gg_get_u64(const eng__gg_file *gf, const char *key, uint64_t *out, bool *bad) {
    const eng__gg_kv *kv = eng__gg_get(gf, key);
    if (!kv)
        return false;
    if (!eng__gv_is_int(kv->type) || kv->i < 0) {
        *bad = true;
        return false;
    }
    *out = kv->u;
    return true;
}

bool eng__gg_get_f64(const eng__gg_file *gf, const char *key, double *out, bool *bad) {
    const eng__gg_kv *kv = eng__gg_get(gf, key);
    if (!kv)
        return false;
    if (kv->type == ENG__GV_F32 || kv->type == ENG__GV_F64)
        *out = kv->f;
    else if (eng__gv_is_int(kv->type))
        *out = kv->f;
    else {
        *bad = true;
        return false;
    }
    return true;
}

bool eng__gg_get_bool(const eng__gg_file *gf, const char *key, bool *out, bool *bad) {
    const eng__gg_kv *kv = eng__gg_get(gf, key);
    if (!kv)
        return false;
    if (kv->type != ENG__GV_BOOL) {
        *bad = true;
        return false;
    }
    *out = kv->u != 0;
    return true;
}

bool eng__gg_get_str(const eng__gg_file *gf, const char *key, char *out, size_t len, bool *bad) {
    const eng__gg_kv *kv = eng__gg_get(gf, key);
    if (!kv)
        return false;
    if (kv->type != ENG__GV_STR) {
        *bad = true;
        return false;
    }
    size_t n = (size_t)BASE_MIN(kv->strs[0].n, (uint64_t)len - 1);
    memcpy(out, kv->strs[0].s, n);
    out[n] = '\0';
    return true;
}

/* ---- tensors ------------------------------------------------------------------ */

typedef struct eng__gg_span {
    uint64_t begin, end;
    size_t idx; /* into the new tensors */
} eng__gg_span;

static int eng__gg_span_cmp(const void *a, const void *b) {
    const eng__gg_span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int eng__gg_name_cmp(const void *a, const void *b) {
    return strcmp((*(const eng__st_tensor *const *)a)->name,
                  (*(const eng__st_tensor *const *)b)->name);
}

base_status eng__gg_parse(const uint8_t *buf, size_t size, const char *fname, int file,
                          eng__gg_file *gf, eng__st_tensor **tensors, int *n_tensors,
                          eng_error *err) {
    memset(gf, 0, sizeof *gf);
    eng__rd r = {buf, buf + size, buf, fname, err};
    uint32_t magic;
    uint64_t n_t = 0, n_kv = 0;
    base_status st;
    eng__gg_span *spans = NULL;
    eng__st_tensor **order = NULL;
    const int first = *n_tensors;
    if (size < 4 || (memcpy(&magic, buf, 4), magic != ENG__GG_MAGIC))
        return eng__err(err, BASE_ERR_MODEL, "%s: not a GGUF file (bad magic)", fname);
    r.p += 4;
    if ((st = eng__rd_u32(&r, &gf->version, "the version")))
        return st;
    if (gf->version != 2 && gf->version != 3)
        return eng__err(err, BASE_ERR_UNSUPPORTED,
                        "%s: GGUF version %u (infilld reads versions 2 and 3; a version that "
                        "looks byte-swapped is a big-endian file)",
                        fname, gf->version);
    if ((st = eng__rd_u64(&r, &n_t, "the tensor count")) ||
        (st = eng__rd_u64(&r, &n_kv, "the key/value count")))
        return st;
    /* A key/value pair takes at least 13 bytes, a tensor info at least 24. */
    if (n_kv > (uint64_t)(r.end - r.p) / 13)
        return eng__err(err, BASE_ERR_MODEL, "%s: %llu key/value pairs cannot fit in the file",
                        fname, (unsigned long long)n_kv);
    if (n_t > (uint64_t)(r.end - r.p) / 24 || n_t > (uint64_t)(INT32_MAX / 2 - *n_tensors))
        return eng__err(err, BASE_ERR_MODEL, "%s: %llu tensors cannot fit in the file", fname,
                        (unsigned long long)n_t);
    gf->kv = calloc((size_t)(n_kv ? n_kv : 1), sizeof *gf->kv);
    if (!gf->kv)
        return eng__err(err, BASE_ERR_NOMEM, "%s: out of memory", fname);
    gf->alignment = 32;
    for (uint64_t i = 0; i < n_kv; i++) {
        eng__gg_kv *kv = &gf->kv[i];
        uint32_t type = 0;
        char key[128];
        if ((st = eng__rd_str(&r, &kv->key, "a key")))
            goto fail;
        gf->n_kv = i + 1;
        snprintf(key, sizeof key, "%.*s", (int)BASE_MIN(kv->key.n, 100), kv->key.s);
        if (kv->key.n == 0 || kv->key.n > 65535 || memchr(kv->key.s, '\0', kv->key.n)) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: key/value pair %llu has a bad key", fname,
                          (unsigned long long)i);
            goto fail;
        }
        for (uint64_t j = 0; j < i; j++)
            if (gf->kv[j].key.n == kv->key.n &&
                memcmp(gf->kv[j].key.s, kv->key.s, kv->key.n) == 0) {
                st = eng__err(err, BASE_ERR_MODEL, "%s: key '%s' appears twice", fname, key);
                goto fail;
            }
        if ((st = eng__rd_u32(&r, &type, "a value type")))
            goto fail;
        if (type > ENG__GV_F64) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: key '%s': unknown value type %u", fname, key,
                          type);
            goto fail;
        }
        kv->type = (eng__gg_vtype)type;
        if ((st = eng__rd_value(&r, kv, key)))
            goto fail;
        if (eng__gg_key_is(&kv->key, "general.alignment")) {
            if (kv->type != ENG__GV_U32 || kv->u == 0 || (kv->u & (kv->u - 1)) || kv->u > 65536) {
                st =
                    eng__err(err, BASE_ERR_MODEL,
                             "%s: general.alignment must be a u32 power of two up to 65536", fname);
                goto fail;
            }
            gf->alignment = (uint32_t)kv->u;
        }
    }

    eng__st_tensor *grown =
        realloc(*tensors, ((size_t)*n_tensors + (size_t)n_t + 1) * sizeof(eng__st_tensor));
    spans = malloc(((size_t)n_t + 1) * sizeof *spans);
    order = malloc(((size_t)n_t + 1) * sizeof *order);
    if (grown)
        *tensors = grown;
    if (!grown || !spans || !order) {
        st = eng__err(err, BASE_ERR_NOMEM, "%s: out of memory", fname);
        goto fail;
    }
    for (uint64_t i = 0; i < n_t; i++) {
        eng__gg_str name;
        uint32_t nd = 0, type = 0;
        uint64_t ne[ENG__GG_MAX_DIMS] = {0}, off = 0;
        if ((st = eng__rd_str(&r, &name, "a tensor name")))
            goto fail;
        char nm[ENG__GG_MAX_NAME + 1];
        if (name.n == 0 || name.n > ENG__GG_MAX_NAME || memchr(name.s, '\0', name.n)) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensor %llu has a bad name", fname,
                          (unsigned long long)i);
            goto fail;
        }
        memcpy(nm, name.s, name.n);
        nm[name.n] = '\0';
        if ((st = eng__rd_u32(&r, &nd, "a tensor's dimension count")))
            goto fail;
        if (nd == 0 || nd > ENG__GG_MAX_DIMS) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s' has %u dimensions (1 to %d)", fname,
                          nm, nd, ENG__GG_MAX_DIMS);
            goto fail;
        }
        uint64_t n_el = 1;
        for (uint32_t d = 0; d < nd; d++) {
            if ((st = eng__rd_u64(&r, &ne[d], "a tensor's shape")))
                goto fail;
            if (ne[d] == 0 || ne[d] > ((uint64_t)1 << 40) || n_el > ((uint64_t)1 << 40) / ne[d]) {
                st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s': dimension %u is %llu", fname,
                              nm, d, (unsigned long long)ne[d]);
                goto fail;
            }
            n_el *= ne[d];
        }
        if ((st = eng__rd_u32(&r, &type, "a tensor's type")) ||
            (st = eng__rd_u64(&r, &off, "a tensor's offset")))
            goto fail;
        uint64_t row = eng__gg_row_bytes(type, (int64_t)ne[0]);
        if (!row) {
            if (type < BASE_ARRAY_LEN(eng__gg_types) && eng__gg_types[type].name &&
                !eng__gg_types[type].size)
                st = eng__err(err, BASE_ERR_UNSUPPORTED,
                              "%s: tensor '%s' has type %s, which infilld cannot read "
                              "(F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)",
                              fname, nm, eng__gg_types[type].name);
            else if (type < BASE_ARRAY_LEN(eng__gg_types) && eng__gg_types[type].name)
                st = eng__err(err, BASE_ERR_MODEL,
                              "%s: tensor '%s': %llu columns are not a whole number of %s "
                              "blocks of %u",
                              fname, nm, (unsigned long long)ne[0], eng__gg_types[type].name,
                              eng__gg_types[type].blck);
            else
                st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s' has unknown type %u", fname, nm,
                              type);
            goto fail;
        }
        if (off % gf->alignment) {
            st = eng__err(err, BASE_ERR_MODEL,
                          "%s: tensor '%s': offset %llu is not a multiple of the alignment %u",
                          fname, nm, (unsigned long long)off, gf->alignment);
            goto fail;
        }
        eng__st_tensor t = {0};
        t.ndim = (int)nd;
        for (uint32_t d = 0; d < nd; d++)
            t.shape[d] = (int64_t)ne[nd - 1 - d];
        t.begin = off;
        t.end = off + row * (n_el / ne[0]); /* <= 2^40 * 2^40 / ... : bounded by n_el * 4.1 */
        t.gg_type = (int)type;
        t.dtype = type == ENG__GG_F32    ? ENG__ST_F32
                  : type == ENG__GG_F16  ? ENG__ST_F16
                  : type == ENG__GG_BF16 ? ENG__ST_BF16
                                         : ENG__ST_OTHER;
        t.file = file;
        if (!(t.name = strdup(nm))) {
            st = eng__err(err, BASE_ERR_NOMEM, "%s: out of memory", fname);
            goto fail;
        }
        (*tensors)[(*n_tensors)++] = t;
        spans[i] = (eng__gg_span){t.begin, t.end, (size_t)i};
    }
    /* Data region: after the infos, aligned. */
    uint64_t infos_end = (uint64_t)(r.p - buf);
    gf->data_off = (infos_end + gf->alignment - 1) / gf->alignment * gf->alignment;
    if (gf->data_off > size && n_t > 0) {
        st = eng__err(err, BASE_ERR_MODEL, "%s: truncated before the tensor data", fname);
        goto fail;
    }
    const uint64_t data_size = gf->data_off <= size ? size - gf->data_off : 0;
    qsort(spans, (size_t)n_t, sizeof *spans, eng__gg_span_cmp);
    for (uint64_t i = 0; i < n_t; i++) {
        const eng__st_tensor *t = &(*tensors)[first + spans[i].idx];
        if (t->end > data_size || t->end < t->begin) {
            st = eng__err(err, BASE_ERR_MODEL,
                          "%s: tensor '%s' (%s, bytes [%llu, %llu) of the data region) runs past "
                          "the end of the file (%llu data bytes)",
                          fname, t->name, eng__gg_type_name((uint32_t)t->gg_type),
                          (unsigned long long)t->begin, (unsigned long long)t->end,
                          (unsigned long long)data_size);
            goto fail;
        }
        if (i > 0 && t->begin < spans[i - 1].end) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensors '%s' and '%s' overlap", fname,
                          (*tensors)[first + spans[i - 1].idx].name, t->name);
            goto fail;
        }
    }
    for (uint64_t i = 0; i < n_t; i++) {
        eng__st_tensor *t = &(*tensors)[first + i];
        t->data = buf + gf->data_off + t->begin;
        order[i] = t;
    }
    qsort(order, (size_t)n_t, sizeof *order, eng__gg_name_cmp);
    for (uint64_t i = 1; i < n_t; i++)
        if (strcmp(order[i - 1]->name, order[i]->name) == 0) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s' appears twice", fname,
                          order[i]->name);
            goto fail;
        }
    free(spans);
    free(order);
    return BASE_OK;
fail:
    free(spans);
    free(order);
    for (int i = first; i < *n_tensors; i++)
        free((*tensors)[i].name);
    *n_tensors = first;
    eng__gg_file_deinit(gf);
    return st;
}
