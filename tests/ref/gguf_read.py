"""Independent GGUF reader and ggml block dequantisers for the tests (numpy only).

Written from the GGUF specification and ggml's block layouts (ggml-common.h,
dequantize_row_* in ggml-quants.c), separately from both infilld's C loader and the
generator's quantisers: it decodes bit fields and never shares code with
tests/gen/gguf_writer.py. Values are computed in float32 with ggml's order of
operations, so they equal ggml's dequantisation bit for bit.
"""

import struct

import numpy as np

# ggml type id -> (name, block elements, block bytes)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 8: ("Q8_0", 32, 34),
         12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210),
         30: ("BF16", 1, 2)}
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}


class Reader:
    def __init__(self, buf):
        self.b = buf
        self.p = 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.p)
        self.p += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("<Q")
        s = bytes(self.b[self.p : self.p + n])
        self.p += n
        return s.decode("utf-8", errors="surrogateescape")

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.take("<I"), self.take("<Q")
            return [self.value(et) for _ in range(n)]
        return self.take(_SCALAR[t])


def read(path):
    """Returns (metadata dict, {name: (type id, shape row-major, raw bytes)})."""
    with open(path, "rb") as f:
        buf = f.read()
    r = Reader(buf)
    if r.take("<I") != 0x46554747:
        raise ValueError("%s: bad magic" % path)
    version, n_t, n_kv = r.take("<I"), r.take("<Q"), r.take("<Q")
    if version not in (2, 3):
        raise ValueError("%s: version %d" % (path, version))
    meta = {}
    for _ in range(n_kv):
        k = r.string()
        meta[k] = r.value(r.take("<I"))
    infos = []
    for _ in range(n_t):
        name = r.string()
        nd = r.take("<I")
        ne = [r.take("<Q") for _ in range(nd)]
        t, off = r.take("<I"), r.take("<Q")
        infos.append((name, t, list(reversed(ne)), off))
    align = meta.get("general.alignment", 32)
    data = (r.p + align - 1) // align * align
    tensors = {}
    for name, t, shape, off in infos:
        _, blk, bs = TYPES[t]
        n = int(np.prod(shape))
        nbytes = n // blk * bs
        tensors[name] = (t, shape, buf[data + off : data + off + nbytes])
    return meta, tensors


def _h(b):
    """(n, 2) uint8 -> (n,) float32 from IEEE half."""
    return np.ascontiguousarray(b).view("<f2").reshape(-1).astype(np.float32)


def _scale_min_k4(sc):
    """(n, 12) -> (n, 8) scales, (n, 8) mins, as get_scale_min_k4."""
    d = np.zeros((sc.shape[0], 8), np.uint8)
    m = np.zeros_like(d)
    for j in range(8):
        if j < 4:
            d[:, j] = sc[:, j] & 63
            m[:, j] = sc[:, j + 4] & 63
        else:
            d[:, j] = (sc[:, j + 4] & 0xF) | ((sc[:, j - 4] >> 6) << 4)
            m[:, j] = (sc[:, j + 4] >> 4) | ((sc[:, j] >> 6) << 4)
    return d, m


def dequant(t, raw, n):
    """float32 values of n elements of ggml type t."""
    a = np.frombuffer(raw, np.uint8)
    if t == 0:
        return a.view("<f4").astype(np.float32)
    if t == 1:
        return a.view("<f2").astype(np.float32)
    if t == 30:
        return (a.view("<u2").astype(np.uint32) << 16).view(np.float32)
    name, blk, bs = TYPES[t]
    b = a.reshape(-1, bs)
    if name == "Q8_0":
        return (b[:, 2:].view(np.int8).astype(np.float32) * _h(b[:, :2])[:, None]).reshape(-1)
    if name == "Q4_0":
        d = _h(b[:, :2])[:, None]
        q = b[:, 2:]
        lo = ((q & 0xF).astype(np.int32) - 8).astype(np.float32) * d
        hi = ((q >> 4).astype(np.int32) - 8).astype(np.float32) * d
        return np.concatenate([lo, hi], axis=1).reshape(-1)
    if name in ("Q4_K", "Q5_K"):
        d, dmin = _h(b[:, 0:2]), _h(b[:, 2:4])
        sc, mn = _scale_min_k4(b[:, 4:16])
        qs = b[:, 16:144] if name == "Q4_K" else b[:, 48:176]
        qh = None if name == "Q4_K" else b[:, 16:48]
        out = np.zeros((b.shape[0], 256), np.float32)
        for c in range(4):
            ql = qs[:, 32 * c : 32 * (c + 1)]
            for half in range(2):
                j = 2 * c + half
                q = ((ql >> 4) if half else (ql & 0xF)).astype(np.float32)
                if qh is not None:
                    q = q + np.where(qh & (1 << j), 16, 0).astype(np.float32)
                dj = (d * sc[:, j]).astype(np.float32)[:, None]
                mj = (dmin * mn[:, j]).astype(np.float32)[:, None]
                out[:, 64 * c + 32 * half : 64 * c + 32 * half + 32] = dj * q - mj
        return out.reshape(-1)
    if name == "Q6_K":
        ql, qh = b[:, 0:128], b[:, 128:192]
        sc = b[:, 192:208].view(np.int8).astype(np.float32)
        d = _h(b[:, 208:210])
        out = np.zeros((b.shape[0], 256), np.float32)
        for h in range(2):
            L, H = ql[:, 64 * h : 64 * h + 64], qh[:, 32 * h : 32 * h + 32]
            parts = [(L[:, :32] & 0xF) | (((H >> 0) & 3) << 4),
                     (L[:, 32:] & 0xF) | (((H >> 2) & 3) << 4),
                     (L[:, :32] >> 4) | (((H >> 4) & 3) << 4),
                     (L[:, 32:] >> 4) | (((H >> 6) & 3) << 4)]
            for k, q in enumerate(parts):
                qv = (q.astype(np.int32) - 32).astype(np.float32)
                for s in range(2):
                    e0 = 128 * h + 32 * k + 16 * s
                    scale = (d * sc[:, 8 * h + 2 * k + s]).astype(np.float32)[:, None]
                    out[:, e0 : e0 + 16] = scale * qv[:, 16 * s : 16 * s + 16]
        return out.reshape(-1)
    raise ValueError(name)


def unpermute_rows(w, n_head):
    """Inverse of llama.cpp's LLaDA Q/K permutation (interleaved pairs -> rotate-half)."""
    return (w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2)
            .reshape(w.shape))
