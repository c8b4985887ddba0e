"""Gather and scatter kernels (advanced indexing, ``take``/``put``, ``ufunc.at``): CUDA C++
source.

One loop over an iteration space of ``N`` (collapsed) dimensions, C order. For each point
``c`` the kernel forms the byte offset of one element of the indexed array ``a``::

    off = sum_d c[d] * S[d] + sum_m fix_m(idx_m[sum_d c[d] * T[m][d]]) * step[m]

where ``S`` are the strides of ``a``'s sliced axes, each ``idx_m`` an integer index array
(broadcast: its strides ``T[m]``), ``fix_m`` NumPy's treatment of the index for the mode
(``raise``: a negative index counts from the end, an out-of-bounds one is reported to the
error word and replaced by 0; ``wrap``; ``clip``) and ``step[m]`` the stride of the indexed
axis. The other operand ``o`` is addressed by ``sum_d c[d] * V[d]``. By kind:

- ``gather``: ``o[c] = a[off]``;
- ``scatter``: ``a[off] = cast(o[c])`` (skipped for an out-of-bounds index);
- ``fill``: ``a[off] = value`` (a by-value scalar in ``a``'s storage type), optionally only
  where a boolean ``mask[sum_d c[d] * K[d]]`` holds (``x[mask] = 0`` needs no compaction);
- ``at``: ``a[off] = op(a[off], o[c])`` atomically (``ufunc.at``): CUDA's atomics where they
  compute exactly what NumPy computes (integer add/subtract, float32/float64 add, integer
  max/min of 32 and 64 bits, complex add as two float adds), a compare-and-swap loop on the
  element's bits otherwise (8- and 16-bit types through their 32-bit word, float max/min
  with NaN propagating as NumPy's, float16, multiply, complex max/min with a 128-bit CAS).

All pointers are ``char*`` with byte strides (views of complex parts have strides that are
not multiples of their itemsize). Offsets and index values are 64-bit; the point's
coordinates are 32-bit unless the space has 2**31 elements or more (``wide``).

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...dtypes import compute_type, storage_type
from ..elementwise.codegen import body
from ..elementwise.ir import copy_kernel
from ..prelude import prelude

THREADS = 256
KINDS = ("gather", "scatter", "fill", "at")
MODES = ("raise", "wrap", "clip")
OPS = ("add", "subtract", "multiply", "maximum", "minimum")
ERROR_WORDS = 4      # the error word: flag (1 signed, 2 unsigned index), index value, axis, size


@dataclass(frozen=True)
class IndexKernel:
    """One gather/scatter kernel. ``dtype``: the indexed array's; ``index``: the index
    arrays' dtypes; ``modes``: one per index array; ``ndim``: dimensions of the iteration
    space; ``value``: the other operand's dtype (gather: the output's, equal to ``dtype``;
    fill: None); ``op`` and ``loop``: ``at``'s ufunc and loop dtype; ``mask``: a boolean
    predicate operand (fill); ``wide``: 64-bit coordinates."""

    kind: str
    dtype: np.dtype
    index: tuple
    modes: tuple
    ndim: int
    value: np.dtype | None = None
    op: str | None = None
    loop: np.dtype | None = None
    mask: bool = False
    wide: bool = False

    def __post_init__(self):
        assert self.kind in KINDS and len(self.index) == len(self.modes)
        assert all(m in MODES for m in self.modes) and self.ndim >= 1
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        object.__setattr__(self, "index", tuple(np.dtype(d) for d in self.index))
        if self.value is not None:
            object.__setattr__(self, "value", np.dtype(self.value))
        if self.loop is not None:
            object.__setattr__(self, "loop", np.dtype(self.loop))
        assert all(d.kind in "iu" for d in self.index)
        assert (self.op in OPS and self.loop is not None) == (self.kind == "at")

    @property
    def name(self) -> str:
        parts = [f"index_{self.kind}", self.dtype.name]
        if self.value is not None and self.kind != "gather":
            parts.append(f"from_{self.value.name}")
        if self.kind == "at":
            parts += [self.op, f"in_{self.loop.name}"]
        parts += [f"{d.name}_{m}" for d, m in zip(self.index, self.modes)]
        parts.append(f"{self.ndim}d")
        if self.mask:
            parts.append("masked")
        if self.wide:
            parts.append("wide")
        return "_".join(parts)


def render(k: IndexKernel) -> str:
    return source(k)


def entry_points(k: IndexKernel) -> tuple[str, ...]:
    return (k.name,)


def vector_width(k: IndexKernel) -> int:
    return 1


def arg_words(k: IndexKernel) -> int:
    """Length of the by-value argument struct in 64-bit words (see :func:`source`)."""
    n, m = k.ndim, len(k.index)
    return 1 + 3 * n + m * n + (n if k.mask else 0) + 3 * m


_HELPERS = r"""
namespace gpunb_index {
// The first out-of-bounds index wins the error word; the host reads it at the next
// synchronization (gpunb.core.kernels.indexing.run.check).
__device__ __noinline__ void report(unsigned long long* err, long long v, long long axis, long long n, bool uns) {
    if (atomicCAS(err, 0ULL, uns ? 2ULL : 1ULL) == 0ULL) {
        ((volatile long long*)err)[1] = v; ((volatile long long*)err)[2] = axis;
        ((volatile long long*)err)[3] = n;
    }
}
template <class I> __device__ __forceinline__ long long fix_raise(I v, long long n, long long axis,
                                                                unsigned long long* err, bool& ok) {
    long long k = (long long)v;
    bool bad;
    if (I(-1) > I(0)) bad = (unsigned long long)v >= (unsigned long long)n;
    else { if (k < 0) k += n; bad = k < 0 || k >= n; }
    if (bad) { report(err, (long long)v, axis, n, I(-1) > I(0)); ok = false; k = 0; }
    return k;
}
template <class I> __device__ __forceinline__ long long fix_wrap(I v, long long n, long long, unsigned long long*, bool&) {
    if (I(-1) > I(0)) return (long long)((unsigned long long)v % (unsigned long long)n);
    long long k = (long long)v % n;
    return k < 0 ? k + n : k;
}
template <class I> __device__ __forceinline__ long long fix_clip(I v, long long n, long long, unsigned long long*, bool&) {
    if (I(-1) > I(0)) return (unsigned long long)v >= (unsigned long long)n ? n - 1 : (long long)v;
    long long k = (long long)v;
    return k < 0 ? 0 : (k >= n ? n - 1 : k);
}
template <class D, class B> union pun { D d; B b; __device__ __forceinline__ pun() {} };
template <int S> struct bits_of;
template <> struct bits_of<2> { typedef unsigned short type; };
template <> struct bits_of<4> { typedef unsigned int type; };
template <> struct bits_of<8> { typedef unsigned long long type; };
struct __align__(16) u128 { unsigned long long lo, hi; };
__device__ __forceinline__ bool operator==(u128 a, u128 b) { return a.lo == b.lo && a.hi == b.hi; }
__device__ __forceinline__ bool operator!=(u128 a, u128 b) { return !(a == b); }
template <> struct bits_of<16> { typedef u128 type; };
// a[0] = f(a[0]) atomically, by compare-and-swap on the element's bits.
template <class D, class F> __device__ __forceinline__ void cas(D* p, F f) {
    if constexpr (sizeof(D) == 1) {
        unsigned int* w = (unsigned int*)((unsigned long long)p & ~3ULL);
        const int sh = (int)((unsigned long long)p & 3ULL) * 8;
        unsigned int old = *(volatile unsigned int*)w, assumed;
        do {
            assumed = old;
            pun<D, unsigned char> cur; cur.b = (unsigned char)(assumed >> sh);
            pun<D, unsigned char> nxt; nxt.d = f(cur.d);
            if (nxt.b == cur.b) break;
            old = atomicCAS(w, assumed, (assumed & ~(0xffu << sh)) | ((unsigned int)nxt.b << sh));
        } while (old != assumed);
    } else {
        typedef typename bits_of<sizeof(D)>::type B;
        B* q = (B*)p;
        pun<D, B> cur; cur.b = *q;     // a stale first read only costs one more round
        while (true) {
            pun<D, B> nxt; nxt.d = f(cur.d);
            if (nxt.b == cur.b) break;
            const B seen = atomicCAS(q, cur.b, nxt.b);
            if (seen == cur.b) break;
            cur.b = seen;
        }
    }
}
}
"""


# Types with CUDA's streaming (evict-first) load and store: the index arrays are read once
# and a gather's output written once, so they go through L2 without evicting the indexed
# array's sectors, which random indices read again. H100, 2**26 float32 by random int64
# indices: gather 2.234 ms with them, 2.244 without (CuPy 2.27-2.34, same processes).
_STREAMED = ("short", "unsigned short", "int", "unsigned int", "long long", "unsigned long long",
             "float", "double")


def _streamed_load(t: str, address: str) -> str:
    return f"__ldcs((const {t}*)({address}))" if t in _STREAMED else f"*(const {t}*)({address})"


def _index_type(wide: bool) -> str:
    return "long long" if wide else "unsigned int"


def _native_at(k: IndexKernel) -> list[str] | None:
    """Statements applying ``v`` (of the loop's compute type) to ``*p`` with one CUDA atomic,
    when that computes exactly what NumPy's loop does; None otherwise (a CAS loop then)."""
    d, L, op = k.dtype, k.loop, k.op
    if d.kind == "b":
        # or / and are idempotent: a plain store of the one value that changes anything
        if op in ("add", "maximum"):
            return ["if (v) *p = true;"]
        if op in ("minimum", "multiply"):
            return ["if (!v) *p = false;"]
        return None
    if d.kind in "iu" and L.kind in "iu" and op in ("add", "subtract") and d.itemsize >= 4:
        # wrapping integer add is exact modulo 2**bits whatever the loop's width
        u = "unsigned int" if d.itemsize == 4 else "unsigned long long"
        sign = "-" if op == "subtract" else ""
        return [f"atomicAdd(({u}*)p, ({u})({sign}({storage_type(d)})v));"]
    if L != d:
        return None
    if d.kind in "iu" and op in ("maximum", "minimum") and d.itemsize >= 4:
        fn = "atomicMax" if op == "maximum" else "atomicMin"
        t = {("i", 4): "int", ("u", 4): "unsigned int", ("i", 8): "long long",
             ("u", 8): "unsigned long long"}[d.kind, d.itemsize]
        return [f"{fn}(({t}*)p, ({t})v);"]
    if d.name in ("float32", "float64") and op in ("add", "subtract"):
        sign = "-" if op == "subtract" else ""
        return [f"atomicAdd(p, {sign}v);"]
    if d.kind == "c" and op in ("add", "subtract"):
        part = "float" if d.name == "complex64" else "double"
        sign = "-" if op == "subtract" else ""
        return [f"atomicAdd(({part}*)p, {sign}v.re);", f"atomicAdd(({part}*)p + 1, {sign}v.im);"]
    return None


def _op_expr(op: str, loop: np.dtype, a: str, b: str) -> str:
    if loop.kind == "b":
        return {"add": f"({a} || {b})", "maximum": f"({a} || {b})", "multiply": f"({a} && {b})",
                "minimum": f"({a} && {b})"}[op]
    return {"add": f"({a} + {b})", "subtract": f"({a} - {b})", "multiply": f"({a} * {b})",
            "maximum": f"gpunb::maximum_({a}, {b})", "minimum": f"gpunb::minimum_({a}, {b})"}[op]


def _at_lines(k: IndexKernel, indent: str) -> list[str]:
    D, LC = storage_type(k.dtype), compute_type(k.loop)
    lines = [f"{D}* p = ({D}*)(a + off);",
             f"{storage_type(k.loop)} vs;",
             "{", *body(copy_kernel(k.value, k.loop), lambda i: f"*(const {storage_type(k.value)}*)(o + voff)",
                        lambda j: "vs", "    "), "}",
             f"const {LC} v = gpunb::load(vs);"]
    native = _native_at(k)
    if native is not None:
        lines += native
    else:
        expr = _op_expr(k.op, k.loop, f"gpunb::cast<{LC}>(gpunb::load(cur))", "v")
        lines.append(f"gpunb_index::cas(p, [&](const {D} cur) {{ return gpunb::store<{D}>({expr}); }});")
    return [indent + ln for ln in lines]


def source(k: IndexKernel) -> str:
    """The complete CUDA C++ source of ``k``.

    Signature: ``name(char* a, char* o, const char* idx_0, ..., [const bool* mask,]
    unsigned long long* err, const name_args s[, const D value])``; ``name_args`` holds 64-bit
    words: ``n`` (points), ``shape[N]``, ``S[N]`` (strides of ``a``), ``V[N]`` (strides of
    ``o``), ``T[M][N]`` (strides of each index array), ``K[N]`` (the mask's, if any),
    ``size[M]`` and ``step[M]`` (extent and stride of each indexed axis of ``a``), ``axis[M]``
    (the axis each index array indexes, for the error message). Strides are in bytes; the
    pointers point at each operand's element ``[0, ..., 0]``. Launch with ``THREADS`` threads
    and any number of blocks (a grid-stride loop).
    """
    N, M = k.ndim, len(k.index)
    IT = _index_type(k.wide)
    D = storage_type(k.dtype)
    name = k.name
    fields = [f"long long n; long long shape[{N}]; long long S[{N}]; long long V[{N}];"]
    if M:
        fields.append(f"long long T[{M}][{N}];")
    if k.mask:
        fields.append(f"long long K[{N}];")
    if M:
        fields.append(f"long long size[{M}]; long long step[{M}]; long long axis[{M}];")
    params = ["char* __restrict__ a", "char* __restrict__ o"]
    params += [f"const char* __restrict__ idx{m}" for m in range(M)]
    if k.mask:
        params.append("const char* __restrict__ mask")
    params += ["unsigned long long* err", f"const {name}_args s"]
    if k.kind == "fill":
        params.append(f"const {D} value")
    offs = ["off", "voff"] + [f"t{m}" for m in range(M)] + (["koff"] if k.mask else [])
    strides = ["s.S[{d}]", "s.V[{d}]"] + [f"s.T[{m}][{{d}}]" for m in range(M)] + (["s.K[{d}]"] if k.mask else [])
    lines = [
        prelude(), _HELPERS,
        f"struct {name}_args {{ {' '.join(fields)} }};",
        "",
        f'extern "C" __global__ void __launch_bounds__({THREADS}) {name}({", ".join(params)}) {{',
        f"    const {IT} n = ({IT})s.n;",
        f"    for ({IT} i = blockIdx.x * ({IT})blockDim.x + threadIdx.x; i < n; i += ({IT})gridDim.x * blockDim.x) {{",
        f"        long long {', '.join(o + ' = 0' for o in offs)};",
        f"        {IT} r = i;",
    ]
    for d in range(N - 1, -1, -1):
        if d:
            lines += [f"        {{ const {IT} e = ({IT})s.shape[{d}], q = r / e, c = r - q * e; r = q;"]
        else:
            lines += [f"        {{ const {IT} c = r;"]
        lines += [f"          {o} += (long long)c * {st.format(d=d)};" for o, st in zip(offs, strides)]
        lines.append("        }")
    lines.append("        bool ok = true;")
    for m, (dt, mode) in enumerate(zip(k.index, k.modes)):
        lines.append(f"        off += gpunb_index::fix_{mode}({_streamed_load(storage_type(dt), f'idx{m} + t{m}')}, "
                     f"s.size[{m}], s.axis[{m}], err, ok) * s.step[{m}];")
    if k.kind == "gather":
        if D in _STREAMED:
            lines.append(f"        __stcs(({D}*)(o + voff), *(const {D}*)(a + off));")
        else:
            lines.append(f"        *({D}*)(o + voff) = *(const {D}*)(a + off);")
    elif k.kind == "scatter":
        V = storage_type(k.value)
        if k.value == k.dtype:
            lines.append(f"        if (ok) *({D}*)(a + off) = *(const {V}*)(o + voff);")
        else:
            lines += ["        if (ok) {",
                      *body(copy_kernel(k.value, k.dtype), lambda i: f"*(const {V}*)(o + voff)",
                            lambda j: f"*({D}*)(a + off)", "            "),
                      "        }"]
    elif k.kind == "fill":
        cond = "ok && *(const bool*)(mask + koff)" if k.mask else "ok"
        lines.append(f"        if ({cond}) *({D}*)(a + off) = value;")
    else:
        lines += ["        if (ok) {", *_at_lines(k, "            "), "        }"]
    lines += ["    }", "}", ""]
    return "\n".join(lines)
