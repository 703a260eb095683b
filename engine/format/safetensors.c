/* safetensors header parser and validator.
 *
 * Layout: 8-byte little-endian header length N, N bytes of JSON, then the data
 * region. The JSON maps tensor names to {dtype, shape, data_offsets: [begin,
 * end)} relative to the data region, plus an optional "__metadata__" object.
 * Everything a file can get wrong is checked here, before any tensor byte is
 * read: N inside the file, offsets inside the data region, no two tensors
 * overlapping, shape x dtype size == byte length without overflow. */
#define _GNU_SOURCE
#include "engine_impl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest header accepted: real headers of 7B shards are well under 1 MiB. */
#define ENG__ST_MAX_HEADER (100u << 20)

base_status eng__err(eng_error *err, base_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = st;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

static bool eng__st_dtype_parse(const char *s, eng__st_dtype *dt, uint64_t *size) {
    static const struct {
        const char *name;
        eng__st_dtype dt;
        uint64_t size;
    } tab[] = {
        {"F32", ENG__ST_F32, 4},    {"F16", ENG__ST_F16, 2},       {"BF16", ENG__ST_BF16, 2},
        {"F64", ENG__ST_OTHER, 8},  {"I64", ENG__ST_OTHER, 8},     {"U64", ENG__ST_OTHER, 8},
        {"I32", ENG__ST_OTHER, 4},  {"U32", ENG__ST_OTHER, 4},     {"I16", ENG__ST_OTHER, 2},
        {"U16", ENG__ST_OTHER, 2},  {"I8", ENG__ST_OTHER, 1},      {"U8", ENG__ST_OTHER, 1},
        {"BOOL", ENG__ST_OTHER, 1}, {"F8_E4M3", ENG__ST_OTHER, 1}, {"F8_E5M2", ENG__ST_OTHER, 1},
    };
    for (size_t i = 0; i < BASE_ARRAY_LEN(tab); i++) {
        if (strcmp(s, tab[i].name) == 0) {
            *dt = tab[i].dt;
            *size = tab[i].size;
            return true;
        }
    }
    return false;
}

void eng__st_tensors_free(eng__st_tensor *t, int n) {
    if (!t)
        return;
    for (int i = 0; i < n; i++)
        free(t[i].name);
    free(t);
}

static int eng__st_cmp_begin(const void *a, const void *b) {
    const eng__st_tensor *x = *(eng__st_tensor *const *)a, *y = *(eng__st_tensor *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : (x->end > y->end);
}

/* Reads a non-negative JSON integer. */
static bool eng__json_u64(json_t *j, uint64_t *out) {
    if (!json_is_integer(j))
        return false;
    json_int_t v = json_integer_value(j);
    if (v < 0)
        return false;
    *out = (uint64_t)v;
    return true;
}

base_status eng__st_parse(const uint8_t *buf, size_t size, const char *fname, int file,
                          eng__st_tensor **tensors, int *n_tensors, eng_error *err) {
    if (size < 8)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: truncated safetensors file (%zu bytes, no header)", fname, size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | buf[i];
    if (hlen > size - 8)
        return eng__err(err, BASE_ERR_MODEL,
                        "%s: header length %llu runs past the end of the file (%zu bytes); the "
                        "file is truncated or not safetensors",
                        fname, (unsigned long long)hlen, size);
    if (hlen > ENG__ST_MAX_HEADER || hlen < 2)
        return eng__err(err, BASE_ERR_MODEL, "%s: implausible header length %llu", fname,
                        (unsigned long long)hlen);
    const uint64_t data_size = size - 8 - hlen;
    const uint8_t *data = buf + 8 + hlen;

    json_error_t jerr;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return eng__err(err, BASE_ERR_MODEL, "%s: header is not valid JSON: %s (at byte %d)", fname,
                        jerr.text, jerr.position);
    base_status st = BASE_OK;
    eng__st_tensor **order = NULL;
    if (!json_is_object(root)) {
        st = eng__err(err, BASE_ERR_MODEL, "%s: header is not a JSON object", fname);
        goto out;
    }
    size_t n_new = json_object_size(root);
    if (n_new > (size_t)(INT32_MAX / 2) - (size_t)*n_tensors) {
        st = eng__err(err, BASE_ERR_MODEL, "%s: too many tensors", fname);
        goto out;
    }
    eng__st_tensor *grown =
        realloc(*tensors, ((size_t)*n_tensors + n_new + 1) * sizeof(eng__st_tensor));
    if (!grown) {
        st = eng__err(err, BASE_ERR_NOMEM, "%s: out of memory", fname);
        goto out;
    }
    *tensors = grown;
    const int first = *n_tensors;

    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (strcmp(key, "__metadata__") == 0) {
            if (!json_is_object(val)) {
                st = eng__err(err, BASE_ERR_MODEL, "%s: __metadata__ is not an object", fname);
                goto out;
            }
            continue;
        }
        eng__st_tensor t = {0};
        uint64_t esize = 0;
        json_t *jd = json_object_get(val, "dtype");
        json_t *js = json_object_get(val, "shape");
        json_t *jo = json_object_get(val, "data_offsets");
        if (!json_is_object(val) || !json_is_string(jd) || !json_is_array(js) ||
            !json_is_array(jo) || json_array_size(jo) != 2) {
            st = eng__err(err, BASE_ERR_MODEL,
                          "%s: tensor '%s': entry needs dtype, shape and data_offsets [begin, end]",
                          fname, key);
            goto out;
        }
        if (!eng__st_dtype_parse(json_string_value(jd), &t.dtype, &esize)) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s': unknown dtype '%s'", fname, key,
                          json_string_value(jd));
            goto out;
        }
        size_t nd = json_array_size(js);
        if (nd > 8) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s': %zu dimensions (at most 8)", fname,
                          key, nd);
            goto out;
        }
        t.ndim = (int)nd;
        uint64_t n_el = 1;
        for (size_t d = 0; d < nd; d++) {
            uint64_t dim;
            if (!eng__json_u64(json_array_get(js, d), &dim) || dim > (1ull << 40)) {
                st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s': bad shape entry %zu", fname,
                              key, d);
                goto out;
            }
            t.shape[d] = (int64_t)dim;
            if (dim != 0 && n_el > UINT64_MAX / 16 / dim) {
                st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s': shape overflows", fname, key);
                goto out;
            }
            n_el *= dim;
        }
        if (!eng__json_u64(json_array_get(jo, 0), &t.begin) ||
            !eng__json_u64(json_array_get(jo, 1), &t.end) || t.begin > t.end) {
            st = eng__err(err, BASE_ERR_MODEL, "%s: tensor '%s': bad data_offsets", fname, key);
            goto out;
        }
        if (t.end > data_size) {
            st = eng__err(err, BASE_ERR_MODEL,
                          "%s: tensor '%s': data [%llu, %llu) lies past the end of the data region "
                          "(%llu bytes); the file is truncated",
                          fname, key, (unsigned long long)t.begin, (unsigned long long)t.end,
                          (unsigned long long)data_size);
            goto out;
        }
        if (n_el * esize != t.end - t.begin) {
            st = eng__err(err, BASE_ERR_MODEL,
                          "%s: tensor '%s': shape x dtype size is %llu bytes but data_offsets "
                          "span %llu bytes",
                          fname, key, (unsigned long long)(n_el * esize),
                          (unsigned long long)(t.end - t.begin));
            goto out;
        }
        t.data = data + t.begin;
        t.file = file;
        t.gg_type = -1;
        t.name = strdup(key);
        if (!t.name) {
            st = eng__err(err, BASE_ERR_NOMEM, "%s: out of memory", fname);
            goto out;
        }
        (*tensors)[(*n_tensors)++] = t;
    }

    /* Overlap check over this file's tensors, sorted by start offset. Empty
     * tensors occupy no bytes and overlap nothing. */
    int n_file = *n_tensors - first;
    order = malloc((size_t)(n_file + 1) * sizeof *order);
    if (!order) {
        st = eng__err(err, BASE_ERR_NOMEM, "%s: out of memory", fname);
        goto out;
    }
    for (int i = 0; i < n_file; i++)
        order[i] = &(*tensors)[first + i];
    qsort(order, (size_t)n_file, sizeof *order, eng__st_cmp_begin);
    const eng__st_tensor *prev = NULL;
    for (int i = 0; i < n_file; i++) {
        if (order[i]->begin == order[i]->end)
            continue;
        if (prev && order[i]->begin < prev->end) {
            st = eng__err(err, BASE_ERR_MODEL,
                          "%s: tensors '%s' and '%s' overlap in the data region", fname, prev->name,
                          order[i]->name);
            goto out;
        }
        prev = order[i];
    }
out:
    free(order);
    json_decref(root);
    return st;
}
