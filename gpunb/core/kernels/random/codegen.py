"""Random-number kernels: Philox4x64-10 in generated CUDA C++ (no cuRAND, no header).

Counter-based: the stream's 64-bit value at position ``a`` (counted from a call's start) is
lane ``a % 4`` of ``philox4x64(S + a / 4, key)``, ``S`` a 256-bit block counter. So every
thread computes its own block, and a draw of ``n`` values is ``n`` independent positions:
thread ``B`` computes block ``S + B`` and writes the elements that come from its four
values. This is NumPy's ``numpy.random.Philox`` stream exactly (the host turns NumPy's
``counter``/``buffer_pos`` state into ``S`` and a lane offset ``o``; :mod:`.plan`).

Kernel kinds (:class:`RandomKernel`):

- ``fill``: NumPy's exact transforms of the stream. ``random`` float64 is
  ``(x >> 11) * 2**-53`` of a 64-bit value; float32 is ``(w >> 8) * 2**-24`` of a 32-bit word,
  where NumPy splits each 64-bit value into its low then high half (and keeps a pending high
  half between calls: the ``lead`` argument). ``integers`` maps words of 64, 32, 16, 8 or 1
  bits (NumPy's choice by dtype and range; 16/8/1-bit words are the parts of a 32-bit word,
  lowest first) by Lemire's multiply-shift. ``fill`` is used when no word can be rejected.
- ``count`` / ``scan`` / ``write``: Lemire's method with rejection. A rejected word shifts
  every later element, so element ``i`` is the ``i``-th accepted word: ``count`` counts each
  tile's accepted words, ``scan`` (one block) turns the counts into offsets, ``write``
  ranks each accepted word within its tile and stores the first ``n``; it also records the
  index of the ``n``-th accepted word, which is how far NumPy's stream advances.
- ``try``: ``fill`` for a range that can reject but rarely does ([0, 1000) rejects one 32-bit
  word in 14 million): element ``i`` from word ``i``, and a flag set if any of the first ``n``
  words is rejected, in which case the host runs ``count`` / ``scan`` / ``write`` instead.
  One pass over the stream instead of two.
- ``dist``: the distributions NumPy computes with its ziggurat or rejection loops, here
  GPU-friendly transforms (not NumPy's values): Box-Muller float32 normals, inverse-CDF
  float32 exponentials, the ziggurat for float64 ones (NumPy's algorithm, :mod:`.ziggurat`),
  uniforms and Philox4x3210's integers from Philox4x32-10 (a quarter of the multiply work per bit: these are
  compute-bound), counter ``(block, S)`` with ``S`` the draw's first 4x64 block;
  gamma (Marsaglia-Tsang), beta (two gammas), poisson (multiplication / PTRS), binomial
  (Knuth's beta splitting, then inversion). Element ``i``
  starts at block ``S + i / per_block``; a rejection loop's further attempts use blocks
  ``S + i + j * 2**128`` (counter word 2 plus the attempt), which the main stream reaches
  only after 2**128 blocks, so the stream's advance stays fixed and needs no read-back.
  Von Mises, Zipf, logarithmic series, hypergeometric, multinomial and multivariate
  hypergeometric kernels, on the same scheme, are in :mod:`.dists`.

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import continuous, dists
from .continuous import LIB as _DIST_LIB

THREADS = 256
SCAN_THREADS = 1024
# The by-value argument struct, 64-bit words in order (doubles stored as their bits).
# ``lead``: -1 none; >= 0 the pending 32-bit half's value; <= -2 the high half of lane
# ``-2 - lead`` of block ``lc`` (NumPy's pending half, kept by position: computed here).
ARG_FIELDS = ("c0", "c1", "c2", "c3", "k0", "k1", "o", "n", "nblocks", "lead", "limit",
              "off", "rng", "threshold", "f0", "f1", "f2", "f3", "lc0", "lc1", "lc2", "lc3")
DOUBLES = ("f0", "f1", "f2", "f3")

_CTYPE = {"bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
          "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
          "uint32": "unsigned int", "uint64": "unsigned long long", "float32": "float",
          "float64": "double"}
WIDTHS = (1, 8, 16, 32, 64)
# Distributions of the ``dist`` kind and the elements one Philox block gives, by dtype size.
DIST_PER_BLOCK = {"normal": {4: 4, 8: 2}, "exponential": {4: 4, 8: 2}, "uniform": {4: 4, 8: 2},
                  "gamma": {4: 1, 8: 1}, "beta": {4: 1, 8: 1}, "poisson": {8: 1},
                  "binomial": {8: 1}}


@dataclass(frozen=True)
class RandomKernel:
    """One random kernel: ``kind`` (fill, count, scan, write, dist), ``what`` (random, int,
    or a distribution's name), the output dtype, and for integers the word width in bits and
    whether the range is the word's full range (``full``: no multiply)."""

    kind: str
    what: str = ""
    dtype: np.dtype = np.dtype("float64")
    width: int = 64
    full: bool = False

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def name(self) -> str:
        if self.kind == "scan":
            return "philox_scan"
        tail = f"_w{self.width}{'_full' if self.full else ''}" if self.what == "int" else ""
        return f"philox_{self.kind}_{self.what}_{self.dtype.name}{tail}"


def entry_points(k: RandomKernel) -> tuple[str, ...]:
    return (k.name,)


def vector_width(k: RandomKernel) -> int:
    return 1


def render(k: RandomKernel) -> str:
    if k.kind == "scan":
        return _HEAD + _SCAN
    if k.kind == "dist" and k.what in dists.WHATS:     # von Mises, Zipf, ... (:mod:`.dists`)
        return _HEAD + _DIST_LIB + dists.LIB + dists.source(k, THREADS, _CTYPE)
    if k.kind == "dist" and k.what == "int":      # Philox4x3210's integers
        return _HEAD + continuous.integer_kernel(k, THREADS, _CTYPE)
    if k.kind == "dist":
        return _HEAD + _DIST_LIB + continuous.kernel(k, DIST_PER_BLOCK[k.what][k.dtype.itemsize],
                                                     THREADS, _CTYPE)
    return _HEAD + _stream_kernel(k)


_HEAD = r"""
typedef unsigned long long u64;
typedef unsigned int u32;
struct rng_args { u64 c[4]; u64 k[2]; long long o, n, nblocks, lead, limit; u64 off, rng, threshold; double f[4]; u64 lc[4]; };

// Philox4x64-10 (Random123; NumPy's numpy.random.Philox): c is the counter, out in place.
__device__ __forceinline__ void philox(u64 c[4], u64 k0, u64 k1) {
    #pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r) { k0 += 0x9E3779B97F4A7C15ULL; k1 += 0xBB67AE8584CAA73BULL; }
        const u64 lo0 = 0xD2E7470EE14C6C93ULL * c[0], hi0 = __umul64hi(0xD2E7470EE14C6C93ULL, c[0]);
        const u64 lo1 = 0xCA5A826395121157ULL * c[2], hi1 = __umul64hi(0xCA5A826395121157ULL, c[2]);
        c[0] = hi1 ^ c[1] ^ k0; c[1] = lo1; c[2] = hi0 ^ c[3] ^ k1; c[3] = lo0;
    }
}

// The block S + b (256-bit counter plus a 64-bit block index, carries included), word 2 + w.
__device__ __forceinline__ void block(const rng_args& a, u64 b, u64 w, u64 c[4]) {
    c[0] = a.c[0] + b;
    u64 carry = c[0] < b;
    c[1] = a.c[1] + carry; carry = carry & (c[1] == 0);
    c[2] = a.c[2] + carry; carry = carry & (c[2] == 0);
    c[3] = a.c[3] + carry;
    c[2] += w; c[3] += c[2] < w;
    philox(c, a.k[0], a.k[1]);
}
"""


def _word_value(k: RandomKernel) -> tuple[str, str]:
    """(value expression, accept expression) of a word ``x`` (type W) for integer kinds."""
    if k.full:
        return "(T)(a.off + (u64)x)", "true"
    if k.width == 64:
        return "(T)(a.off + __umul64hi(x, a.rng))", "(x * a.rng) >= a.threshold"
    mask = (1 << k.width) - 1
    return (f"(T)(a.off + (((u64)x * a.rng) >> {k.width}))",
            f"((((u64)x * a.rng) & {mask}ULL) >= a.threshold)")


def _vector_fill(k: RandomKernel, value: str, accept: str, width: int, per: int, epb: int) -> str:
    """The common case of ``fill``, first: the draw starts on a block (no lane offset, no
    pending half), the output is 16-byte aligned and the whole thread block's elements are
    wanted. Then a thread's ``epb`` elements are contiguous and known at compile time: kept in
    registers and stored as two 16-byte vectors, with no staging through shared memory
    (H100, 2**27 float64: 0.53 against 0.64 ms; 2**28 float32: 0.52 against 0.76). The
    condition is the same for every thread of a thread block, so the staged path's barrier is
    never split."""
    size = epb * k.dtype.itemsize
    if size != 32:      # 64 bytes a thread (int64 from 32-bit words) stored 4x slower this way
        return ""
    check = f" rej |= !({accept});" if k.kind == "try" else ""
    if width == 64:
        fills = "\n".join(f"{{ const u64 x = c[{lane}]; v[{lane}] = {value};{check} }}" for lane in range(4))
    else:
        mask = (1 << width) - 1
        fills = "\n".join(
            f"{{ const u32 x = ((u32)(c[{lane}] >> {32 * half}) >> {width * part}) & {mask}U; "
            f"v[{(2 * lane + half) * per + part}] = {value};{check} }}"
            for lane in range(4) for half in range(2) for part in range(per))
    stores = "\n".join(f"{{ uint4 q; memcpy(&q, reinterpret_cast<const char*>(v) + {16 * i}, 16); "
                        f"reinterpret_cast<uint4*>(out + B * {epb})[{i}] = q; }}"
                        for i in range(size // 16))
    return f"""
    if (a.o == 0 && a.lead == -1 && ((u64)out & 15) == 0 && (B0 + {THREADS}) * {epb} <= a.n) {{
        block(a, B, 0, c);
        __align__(16) T v[{epb}];
        {fills}
        {stores}
        {"if (rej) *flag = 1;" if k.kind == "try" else ""}
        return;
    }}"""


def _stream_kernel(k: RandomKernel) -> str:
    """fill / count / write: elements from NumPy's exact stream (lead half, lane offset).

    A thread computes one Philox block; its elements are contiguous, so a block of threads
    stages its values in shared memory (by element, or for ``write`` by rank) and stores
    them with consecutive threads on consecutive elements (coalesced)."""
    T = _CTYPE[k.dtype.name]
    if k.what == "random":
        if k.dtype == np.float64:    # uniform(low, high) too: low + range * u, unfused as NumPy
            value = ("(a.f[2] == 0.0 ? (double)(x >> 11) * (1.0 / 9007199254740992.0) : __dadd_rn(a.f[0], "
                     "__dmul_rn(a.f[1], (double)(x >> 11) * (1.0 / 9007199254740992.0))))")
            width = 64
        else:
            value, width = "(float)(x >> 8) * (1.0f / 16777216.0f)", 32
        accept = "true"
    else:
        width = k.width
        value, accept = _word_value(k)
    per = 1 if width == 64 else 32 // width          # elements per 32-bit word
    epb = 4 if width == 64 else 8 * per              # elements per Philox block
    epc = THREADS * epb                              # elements per thread block
    Wt = "u64" if width == 64 else "u32"
    direct = k.kind == "fill" and width == 1      # 1-bit: 64 KiB to stage; store directly
    if direct:
        visit = f"{{ if (e >= 0 && e < a.n) out[e] = {value}; }}"
    elif k.kind in ("fill", "try"):
        # stage by element index; the lead word's elements may fall before the staged range
        check = f" if (e >= 0 && e < a.n && !({accept})) rej = true;" if k.kind == "try" else ""
        visit = (f"{{ const long long s = e - E0; const T v = {value}; "
                 f"if (s >= 0 && s < {epc}) sh[s] = v; else if (e >= 0 && e < a.n) out[e] = v;{check} }}")
    elif k.kind == "count":
        visit = f"if (e < a.limit && ({accept})) ++cnt;"
    else:   # write: stage by rank within the thread block
        visit = (f"if (e < a.limit && ({accept})) {{ if (r < a.n) sh[r - base] = {value}; "
                 f"if (r == a.n - 1) result[0] = e; ++r; }}")
    if width == 64:
        body = f"""
        #pragma unroll
        for (int lane = 0; lane < 4; ++lane) {{
            const long long e = 4 * B + lane - a.o;
            const u64 x = c[lane];
            if (e >= 0) {visit}
        }}"""
        lead = ""
        e0 = "4 * B0 - a.o"
    else:
        if width < 32:
            parts = f"""
            #pragma unroll
            for (int part = 0; part < {per}; ++part) {{
                const long long e = j * {per} + part;
                const {Wt} x = (w >> ({width} * part)) & {(1 << width) - 1}U;
                {visit}
            }}"""
        else:
            parts = f"""
            {{ const long long e = j; const u32 x = w; {visit} }}"""
        lead = f"""
        if (B == 0 && a.lead != -1) {{
            const long long j = 0;
            u32 w = (u32)a.lead;
            if (a.lead < -1) {{ u64 d[4] = {{a.lc[0], a.lc[1], a.lc[2], a.lc[3]}}; philox(d, a.k[0], a.k[1]); w = (u32)(d[-2 - a.lead] >> 32); }}
            {parts}
        }}"""
        body = f"""
        #pragma unroll
        for (int lane = 0; lane < 4; ++lane) {{
            const long long p = 4 * B + lane - a.o;
            if (p < 0) continue;     // (p = -1's high half is the lead word: never twice)
            #pragma unroll
            for (int half = 0; half < 2; ++half) {{
                const long long j = (a.lead != -1) + 2 * p + half;
                const u32 w = half ? (u32)(c[lane] >> 32) : (u32)c[lane];
                {parts}
            }}
        }}"""
        e0 = f"{per} * ((a.lead != -1) + 2 * (4 * B0 - a.o))"
    head = f"""
typedef {T} T;
extern "C" __global__ void __launch_bounds__({THREADS}) {k.name}(PARAMS) {{
    const long long B0 = blockIdx.x * (long long){THREADS}, B = B0 + threadIdx.x;
    const long long E0 = {e0};     // the element of lane 0 of this thread block's first block
    (void)E0;
    u64 c[4];
    long long cnt = 0;
    bool rej = false;
    (void)cnt; (void)rej;
"""
    if direct:
        return head.replace("PARAMS", f"{T}* __restrict__ out, const rng_args a") + f"""
    if (B >= a.nblocks) return;
    {lead}
    block(a, B, 0, c);
    {body}
}}
"""
    if k.kind in ("fill", "try"):
        params = f"{T}* __restrict__ out, const rng_args a" if k.kind == "fill" else \
            f"{T}* __restrict__ out, int* __restrict__ flag, const rng_args a"
        return head.replace("PARAMS", params) + f"""
    {_vector_fill(k, value, accept, width, per, epb)}
    __shared__ __align__(16) T sh[{epc}];
    {{
        {lead}
        block(a, B, 0, c);
        {body}
    }}
    __syncthreads();
    #pragma unroll 4
    for (int s = threadIdx.x; s < {epc}; s += {THREADS}) {{
        const long long e = E0 + s;
        if (e >= 0 && e < a.n) out[e] = sh[s];
    }}
    {"if (rej) *flag = 1;" if k.kind == "try" else ""}
}}
"""
    count_body = body.replace(visit, f"if (e < a.limit && ({accept})) ++cnt;")
    count_lead = lead.replace(visit, f"if (e < a.limit && ({accept})) ++cnt;")
    scan = f"""
    // Block-wide exclusive scan of the threads' accepted counts (warp shuffles).
    __shared__ long long warp_sums[{THREADS // 32}];
    long long incl = cnt;
    const int lane_id = threadIdx.x & 31, warp = threadIdx.x >> 5;
    #pragma unroll
    for (int d = 1; d < 32; d <<= 1) {{ const long long v = __shfl_up_sync(0xffffffffu, incl, d); if (lane_id >= d) incl += v; }}
    if (lane_id == 31) warp_sums[warp] = incl;
    __syncthreads();
    long long before = 0, total = 0;
    for (int i = 0; i < {THREADS // 32}; ++i) {{ if (i < warp) before += warp_sums[i]; total += warp_sums[i]; }}
"""
    if k.kind == "count":
        return head.replace("PARAMS", "long long* __restrict__ counts, const rng_args a") + f"""
    if (B < a.nblocks) {{
        {count_lead}
        block(a, B, 0, c);
        {count_body}
    }}
    {scan}
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}}
"""
    params = (f"{T}* __restrict__ out, const long long* __restrict__ offsets, "
              "long long* __restrict__ result, const rng_args a")
    return head.replace("PARAMS", params) + f"""
    __shared__ __align__(16) T sh[{epc + 32}];
    if (B < a.nblocks) {{
        {count_lead}
        block(a, B, 0, c);
        {count_body}
    }}
    {scan}
    const long long base = offsets[blockIdx.x];
    if (B < a.nblocks && base < a.n) {{
        long long r = base + before + incl - cnt;
        {lead}
        {body}
    }}
    __syncthreads();
    for (long long s = threadIdx.x; s < total && base + s < a.n; s += {THREADS}) out[base + s] = sh[s];
}}
"""


_SCAN = f"""
// One block: counts[0..n) -> exclusive offsets in place; result[1] = the total.
extern "C" __global__ void __launch_bounds__({SCAN_THREADS}) philox_scan(long long* counts, long long* result, long long n) {{
    __shared__ long long sums[{SCAN_THREADS}];
    const long long per = (n + {SCAN_THREADS - 1}) / {SCAN_THREADS};
    const long long lo = threadIdx.x * per, hi = min(n, lo + per);
    long long s = 0;
    for (long long i = lo; i < hi; ++i) s += counts[i];
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int d = 1; d < {SCAN_THREADS}; d <<= 1) {{
        const long long v = threadIdx.x >= d ? sums[threadIdx.x - d] : 0;
        __syncthreads();
        sums[threadIdx.x] += v;
        __syncthreads();
    }}
    long long run = sums[threadIdx.x] - s;
    for (long long i = lo; i < hi; ++i) {{ const long long v = counts[i]; counts[i] = run; run += v; }}
    if (threadIdx.x == {SCAN_THREADS - 1}) result[1] = sums[threadIdx.x];
}}
"""
