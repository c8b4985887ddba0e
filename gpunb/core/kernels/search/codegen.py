"""Searching and counting kernels, CUDA C++ source: binary search (``searchsorted``,
``digitize``), histograms (``bincount``, ``histogram`` with uniform or arbitrary edges) and
the radix select behind ``median``/``quantile`` of one long array.

Three kernel kinds, each one source:

:class:`SearchKernel`: one thread per query, a binary search in a sorted contiguous array
(optionally through a ``sorter`` permutation), with NumPy's sort order: NaN last, complex
lexicographic with NaN parts last (``npy_sort``'s ``CLT``).

:class:`HistKernel`: each block counts into a private histogram in shared memory (integer
counts by plain shared-memory atomics: merging a warp's equal bins first with
``__match_any_sync`` made 2^26 float32 into 100 bins 2.3x slower on an H100, even when every
element falls in one bin), then adds its non-zero bins to the global one with atomics. Bins
too many for shared memory go straight to global atomics. The bin of an element:
``bincount``: the value itself; ``uniform``: NumPy's arithmetic (``(x - first) / denom * n``
in NumPy's dtypes, truncated, then corrected against the edges, the last bin closed);
``edges``: a binary search in the edges (``searchsorted(edges, x, 'right') - 1``, the last
edge closed). Weights accumulate in double (two doubles for complex), as ``np.bincount``
does.

:class:`SelectKernel`: order statistics of a long array without sorting it. Elements become
order-preserving unsigned keys (NaN the largest); each pass histograms one digit (11 bits) of
the keys whose higher digits match the prefix found so far, for two target ranks at once;
``_pick`` (one block) finds the digit holding each rank by a scan and narrows the prefix.
A 32-bit key takes 3 passes over the data, the whole select stays on the GPU, and the last
pick writes the two values (NaN if the array holds any NaN, as NumPy's median returns).

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...dtypes import compute_type, storage_type
from ..prelude import prelude

THREADS = 256
RADIX_BITS = 11
RADIX = 1 << RADIX_BITS
SHARED_BYTES = 48 * 1024      # dynamic shared memory without an opt-in attribute
UNROLL = 4            # elements a thread loads before counting them (loads in flight)
# The select's state words (uint64, zeroed before a select): prefix[2], rank[2], nan count,
# unused[3], then the two global digit histograms.
STATE_WORDS = 8 + 2 * RADIX


def vector_width(kernel) -> int:
    return 1


def entry_points(kernel) -> tuple[str, ...]:
    return kernel.entries


def render(kernel) -> str:
    return prelude() + _COMMON + kernel.source()


def _less(dt: np.dtype) -> str:
    """C++ ``lt(a, b)``: NumPy's sort order (NaN last; complex lexicographic)."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return """__device__ __forceinline__ bool lt(const T& a, const T& b) {
    if (a.re < b.re) return a.im == a.im || b.im != b.im;
    if (a.re > b.re) return b.im != b.im && a.im == a.im;
    if (a.re == b.re || (a.re != a.re && b.re != b.re)) return a.im < b.im || (b.im != b.im && a.im == a.im);
    return b.re != b.re;
}"""
    if dt.kind == "f":
        return ("__device__ __forceinline__ bool lt(const T& a, const T& b) "
                "{ return a < b || (b != b && a == a); }")
    return "__device__ __forceinline__ bool lt(const T& a, const T& b) { return a < b; }"


_COMMON = r"""
__device__ __forceinline__ long long gtid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long gstride() { return (long long)gridDim.x * blockDim.x; }
"""


# ---- binary search -------------------------------------------------------------------------------

@dataclass(frozen=True)
class SearchKernel:
    """``out[i] = searchsorted(a, v[i], side)`` for contiguous ``a`` (through ``sorter`` if
    set) and ``v`` of one dtype."""

    dtype: np.dtype
    side: str
    sorter: bool = False

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @cached_property
    def name(self) -> str:
        return f"searchsorted_{self.dtype.name}_{self.side}" + ("_sorter" if self.sorter else "")

    @property
    def entries(self):
        return (self.name,)

    @property
    def label(self) -> str:       # what the build announcement names
        return f"binary search for {self.dtype.name}"

    def source(self) -> str:
        T = compute_type(self.dtype)
        S = storage_type(self.dtype)
        at = "a[sorter[mid]]" if self.sorter else "a[mid]"
        # left: the first i with !(a[i] < v); right: the first i with v < a[i]. (A branchless
        # search running 4 queries per thread in lockstep measured 0.36 ms against this
        # loop's 0.23 ms for 2^20 queries into 2^26 float32 on the H100.)
        go_right = f"lt(gpunb::load({at}), x)" if self.side == "left" else f"!lt(x, gpunb::load({at}))"
        return f"""
using T = {T};
{_less(self.dtype)}
extern "C" __global__ void __launch_bounds__({THREADS}) {self.name}(
        const {S}* __restrict__ a, long long n, const long long* __restrict__ sorter,
        const {S}* __restrict__ v, long long m, long long* __restrict__ out) {{
    for (long long i = gtid(); i < m; i += gstride()) {{
        const T x = gpunb::load(v[i]);
        long long lo = 0, hi = n;
        while (lo < hi) {{
            const long long mid = lo + ((hi - lo) >> 1);
            if ({go_right}) lo = mid + 1; else hi = mid;
        }}
        out[i] = lo;
    }}
}}
"""


# ---- histograms ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class HistKernel:
    """A histogram of ``x`` into ``nbins`` bins (a run-time value).

    ``kind``: ``'bincount'`` (x integer: its value is the bin), ``'uniform'`` or ``'edges'``.
    ``weights``: None (int64 counts), ``float64`` or ``complex128`` (the accumulation; the
    weights array is read as ``wdtype``). ``shared``: count in shared memory first.
    For ``'uniform'``: ``cmp`` the dtype of the range test ``first <= x <= last``, ``bt``
    the bin (edges) dtype, ``d1, d2, d3`` the dtypes of NumPy's ``x - first``, ``/ denom``
    and ``* n``. For ``'edges'``: ``bt`` the dtype both are compared in."""

    kind: str
    x: np.dtype
    weights: np.dtype | None = None
    wdtype: np.dtype | None = None
    shared: bool = True
    cmp: np.dtype | None = None
    bt: np.dtype | None = None
    d1: np.dtype | None = None
    d2: np.dtype | None = None
    d3: np.dtype | None = None

    def __post_init__(self):
        for f in ("x", "weights", "wdtype", "cmp", "bt", "d1", "d2", "d3"):
            v = getattr(self, f)
            if v is not None:
                object.__setattr__(self, f, np.dtype(v))

    @cached_property
    def name(self) -> str:
        parts = [f"hist_{self.kind}", self.x.name]
        if self.weights is not None:
            parts += ["w", self.wdtype.name, self.weights.name]
        parts += [d.name for d in (self.cmp, self.bt, self.d1, self.d2, self.d3) if d is not None]
        if not self.shared:
            parts.append("global")
        return "_".join(parts)

    @property
    def entries(self):
        return (self.name,)

    @property
    def label(self) -> str:
        return f"histogram ({self.kind}) for {self.x.name}"

    def counter_bytes(self) -> int:
        """Bytes of one shared-memory bin."""
        if self.weights is None:
            return 4
        return 16 if self.weights.kind == "c" else 8

    def _bin_code(self) -> str:
        """C++ setting ``b`` (declared, -1: not counted) from element ``i``."""
        if self.kind == "bincount":
            return "b = (long long)xv;"
        if self.kind == "edges":
            T = compute_type(self.bt)
            return f"""{{
            const {T} v = gpunb::cast<{T}>(gpunb::load(xv));
            if (!(v != v) && !(v < gpunb::load(edges[0])) && !(gpunb::load(edges[nbins]) < v)) {{
                long long lo = 0, hi = nbins + 1;      // searchsorted(edges, v, 'right')
                while (lo < hi) {{
                    const long long mid = (lo + hi) >> 1;
                    if (v < gpunb::load(edges[mid])) hi = mid; else lo = mid + 1;
                }}
                b = lo - 1 < nbins ? lo - 1 : nbins - 1;   // the last edge belongs to the last bin
            }}
        }}"""
        # uniform: NumPy's arithmetic in NumPy's dtypes, float16 rounded after each operation
        def ct(d):
            return compute_type(d)

        def rnd(d, e):
            return f"gpunb::to_float(gpunb::to_half({e}))" if d.name == "float16" else f"({e})"
        C, B, D1, D2, D3 = self.cmp, self.bt, self.d1, self.d2, self.d3
        return f"""{{
            const {ct(C)} c = gpunb::cast<{ct(C)}>(gpunb::load(xv));
            if (c >= ({ct(C)})lo_keep && c <= ({ct(C)})hi_keep) {{
                const {ct(B)} v = gpunb::cast<{ct(B)}>(gpunb::load(xv));
                const {ct(D1)} t1 = {rnd(D1, f"({ct(D1)})v - ({ct(D1)})first")};
                const {ct(D2)} t2 = {rnd(D2, f"({ct(D2)})t1 / ({ct(D2)})denom")};
                const {ct(D3)} t3 = {rnd(D3, f"({ct(D3)})t2 * ({ct(D3)})nbins")};
                b = (long long)t3;
                if (b == nbins) b -= 1;
                if (b > 0 && v < gpunb::load(edges[b])) b -= 1;
                if (b != nbins - 1 && v >= gpunb::load(edges[b + 1])) b += 1;
            }}
        }}"""

    def source(self) -> str:
        X = storage_type(self.x)
        E = storage_type(self.bt) if self.bt is not None else "double"
        wt = self.weights
        if wt is None:
            acc_t, g_t = "unsigned int", "unsigned long long"
        else:
            acc_t = g_t = "double"
        W = storage_type(self.wdtype) if wt is not None else "double"
        if wt is None:
            add_shared = "            if (valid) atomicAdd(&h[b], 1u);"
            add_global = "            if (valid) atomicAdd(&out[b], 1ull);"
        elif wt.kind == "c":
            add_shared = """            if (valid) { const gpunb::complex<double> wv = gpunb::cast<gpunb::complex<double> >(gpunb::load(w[i]));
                atomicAdd(&h[2 * b], wv.re); atomicAdd(&h[2 * b + 1], wv.im); }"""
            add_global = add_shared.replace("&h[", "&out[")
        else:
            add_shared = "            if (valid) atomicAdd(&h[b], gpunb::cast<double>(gpunb::load(w[i])));"
            add_global = add_shared.replace("&h[", "&out[")
        per = 2 if (wt is not None and wt.kind == "c") else 1
        if self.shared:
            add, prologue = add_shared, f"""    extern __shared__ __align__(16) unsigned char smem[];
    {acc_t}* h = ({acc_t}*)smem;
    for (long long j = threadIdx.x; j < {per} * nbins; j += blockDim.x) h[j] = 0;
    __syncthreads();"""
            epilogue = f"""    __syncthreads();
    for (long long j = threadIdx.x; j < {per} * nbins; j += blockDim.x)
        if (h[j] != 0) atomicAdd(&out[j], ({g_t})h[j]);"""
        else:
            add, prologue, epilogue = add_global, "", ""
        return f"""
extern "C" __global__ void __launch_bounds__({THREADS}) {self.name}(
        const {X}* __restrict__ x, long long n, const {W}* __restrict__ w,
        const {E}* __restrict__ edges, long long nbins, {g_t}* __restrict__ out,
        double lo_keep, double hi_keep, double first, double denom) {{
{prologue}
    // each thread loads {UNROLL} elements before counting them
    const long long step = (long long)gridDim.x * blockDim.x * {UNROLL};
    for (long long i0 = (long long)blockIdx.x * blockDim.x * {UNROLL} + threadIdx.x; i0 < n; i0 += step) {{
        {X} xs[{UNROLL}];
        #pragma unroll
        for (int u = 0; u < {UNROLL}; ++u) {{
            const long long i = i0 + (long long)u * blockDim.x;
            if (i < n) xs[u] = x[i];
        }}
        #pragma unroll
        for (int u = 0; u < {UNROLL}; ++u) {{
            const long long i = i0 + (long long)u * blockDim.x;
            bool valid = false;
            long long b = -1;
            if (i < n) {{
                const {X} xv = xs[u];
                {self._bin_code()}
                valid = b >= 0 && b < nbins;
            }}
{add}
        }}
    }}
{epilogue}
}}
"""


# ---- radix select --------------------------------------------------------------------------------

_KEY = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


@dataclass(frozen=True)
class SelectKernel:
    """Two order statistics of a contiguous array of ``dtype`` (not complex)."""

    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @cached_property
    def name(self) -> str:
        return f"radix_select_{self.dtype.name}"

    @property
    def entries(self):
        lerp = (self.name + "_lerp",) if self.dtype.char in "fd" else ()
        return (self.name + "_hist", self.name + "_pick", self.name + "_minmax") + lerp

    @property
    def label(self) -> str:
        return f"radix select for {self.dtype.name}"

    @property
    def key_bits(self) -> int:
        return 8 * self.dtype.itemsize

    def passes(self) -> list[tuple[int, int]]:
        """``(shift, bits)`` of each pass, most significant digit first."""
        out, left = [], self.key_bits
        while left > 0:
            bits = min(RADIX_BITS, left)
            left -= bits
            out.append((left, bits))
        return out

    def source(self) -> str:
        dt = self.dtype
        S, K = storage_type(dt), _KEY[dt.itemsize]
        top = f"(({K})1 << {self.key_bits - 1})"
        if dt.kind == "f":
            bits = {2: "x.x", 4: "__float_as_uint(x)", 8: "(unsigned long long)__double_as_longlong(x)"}[dt.itemsize]
            back = {2: "gpunb::half h; h.x = u; return h;", 4: "return __uint_as_float(u);",
                    8: "return __longlong_as_double((long long)u);"}[dt.itemsize]
            to_key = f"""    const {K} u = {bits};
    if (isnan_s(x)) return ({K})~({K})0;
    return (u & {top}) ? ({K})~u : ({K})(u | {top});"""
            from_key = f"""    const {K} u = (k & {top}) ? ({K})(k ^ {top}) : ({K})~k;
    {back}"""
            isnan = ("gpunb::to_float(x) != gpunb::to_float(x)" if dt.itemsize == 2 else "x != x")
            nan_value = {2: "gpunb::half h; h.x = 0x7e00; return h;", 4: "return __int_as_float(0x7fc00000);",
                         8: "return __longlong_as_double(0x7ff8000000000000LL);"}[dt.itemsize]
        else:
            flip = f" ^ {top}" if dt.kind == "i" else ""
            to_key = f"    return ({K})(({K})x{flip});"
            from_key = f"    return ({S})({K})(k{flip});"
            isnan, nan_value = "false", "return S();"
        n = self.name
        return f"""
using S = {S};
using K = {K};
__device__ __forceinline__ bool isnan_s(const S& x) {{ return {isnan}; }}
__device__ __forceinline__ K to_key(const S& x) {{
{to_key}
}}
__device__ __forceinline__ S from_key(K k) {{
{from_key}
}}
__device__ __forceinline__ S nan_s() {{ {nan_value} }}

// One pass: histogram digit (key >> shift) & (2^bits - 1) of the keys whose bits above
// shift + bits equal each target's prefix (all keys on the first pass, first != 0).
extern "C" __global__ void __launch_bounds__({THREADS}) {n}_hist(
        const S* __restrict__ x, long long n, unsigned long long* st, int shift, int bits,
        int first, int two) {{
    __shared__ unsigned int h[2][{RADIX}];
    __shared__ unsigned int nans;
    for (int j = threadIdx.x; j < 2 * {RADIX}; j += blockDim.x) (&h[0][0])[j] = 0;
    if (threadIdx.x == 0) nans = 0;
    __syncthreads();
    const K p0 = (K)st[0], p1 = (K)st[1];
    const K mask = (K)((1u << bits) - 1);
    const int hi = shift + bits;
    unsigned my_nans = 0;
    const long long step = (long long)gridDim.x * blockDim.x * {UNROLL};
    for (long long i0 = (long long)blockIdx.x * blockDim.x * {UNROLL} + threadIdx.x; i0 < n; i0 += step) {{
      S xs[{UNROLL}];
      #pragma unroll
      for (int u = 0; u < {UNROLL}; ++u) {{
          const long long i = i0 + (long long)u * blockDim.x;
          if (i < n) xs[u] = x[i];
      }}
      #pragma unroll
      for (int u = 0; u < {UNROLL}; ++u) {{
        const long long i = i0 + (long long)u * blockDim.x;
        int d0 = -1, d1 = -1;
        if (i < n) {{
            const S v = xs[u];
            const K k = to_key(v);
            if (first) my_nans += isnan_s(v);
            const int d = (int)((k >> shift) & mask);
            const bool m0 = first || (K)(k >> hi) == p0;
            const bool m1 = two && (first || (K)(k >> hi) == p1);
            d0 = m0 ? d : -1;
            d1 = m1 ? d : -1;
        }}
        if (d0 >= 0) atomicAdd(&h[0][d0], 1u);
        if (d1 >= 0) atomicAdd(&h[1][d1], 1u);
      }}
    }}
    if (first && my_nans) atomicAdd(&nans, my_nans);
    __syncthreads();
    unsigned long long* g = st + 8;
    for (int j = threadIdx.x; j < (two ? 2 : 1) * {RADIX}; j += blockDim.x) {{
        const unsigned c = (&h[0][0])[j];
        if (c) atomicAdd(&g[j], (unsigned long long)c);
    }}
    if (first && threadIdx.x == 0 && nans) atomicAdd(&st[4], (unsigned long long)nans);
}}

// The smallest and largest keys: out[0] = max of the inverted keys, out[1] = max of the
// keys (both start at 0: one memset); NaN's key is the largest.
extern "C" __global__ void __launch_bounds__({THREADS}) {n}_minmax(
        const S* __restrict__ x, long long n, unsigned long long* out) {{
    K lo = (K)~(K)0, hi = 0;
    const long long step = (long long)gridDim.x * blockDim.x * {UNROLL};
    for (long long i0 = (long long)blockIdx.x * blockDim.x * {UNROLL} + threadIdx.x; i0 < n; i0 += step) {{
        S xs[{UNROLL}];
        #pragma unroll
        for (int u = 0; u < {UNROLL}; ++u) {{
            const long long i = i0 + (long long)u * blockDim.x;
            xs[u] = x[i < n ? i : i0];
        }}
        #pragma unroll
        for (int u = 0; u < {UNROLL}; ++u) {{
            const K k = to_key(xs[u]);
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
        }}
    }}
    unsigned long long a = (unsigned long long)(K)~lo, b = (unsigned long long)hi;
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) {{
        const unsigned long long a2 = __shfl_xor_sync(0xffffffffu, a, off);
        const unsigned long long b2 = __shfl_xor_sync(0xffffffffu, b, off);
        a = a2 > a ? a2 : a;
        b = b2 > b ? b2 : b;
    }}
    if ((threadIdx.x & 31) == 0) {{
        atomicMax(&out[0], a);
        atomicMax(&out[1], b);
    }}
}}

// One block of {THREADS} threads: for each target, the digit whose cumulative count passes
// the rank; narrows the prefix and the rank, clears the histogram; the last pass writes
// the two values (NaN when the array holds NaN and nan_propagates).
extern "C" __global__ void __launch_bounds__({THREADS}) {n}_pick(
        unsigned long long* st, S* out, int bits, int last, int two, int nan_propagates,
        long long k0, long long k1, int first) {{
    __shared__ unsigned long long part[{THREADS}];
    unsigned long long* g = st + 8;
    const int per = {RADIX // THREADS};
    const int t = threadIdx.x;
    for (int target = 0; target < (two ? 2 : 1); ++target) {{
        unsigned long long* hist = g + target * {RADIX};
        // the ranks come as parameters on the first pass (the state starts zeroed); read
        // before any thread narrows it
        const unsigned long long rank = first ? (unsigned long long)(target ? k1 : k0) : st[2 + target];
        unsigned long long mine = 0;
        for (int j = 0; j < per; ++j) mine += hist[t * per + j];
        part[t] = mine;
        __syncthreads();
        // inclusive scan over the threads' sums (Hillis-Steele)
        for (int off = 1; off < {THREADS}; off <<= 1) {{
            const unsigned long long add = t >= off ? part[t - off] : 0;
            __syncthreads();
            part[t] += add;
            __syncthreads();
        }}
        unsigned long long before = t ? part[t - 1] : 0;
        if (rank >= before && rank < part[t]) {{
            for (int j = 0; j < per; ++j) {{
                const unsigned long long c = hist[t * per + j];
                if (rank < before + c) {{
                    st[target] = (st[target] << bits) | (unsigned long long)(t * per + j);
                    st[2 + target] = rank - before;
                    break;
                }}
                before += c;
            }}
        }}
        __syncthreads();
        for (int j = 0; j < per; ++j) hist[t * per + j] = 0;
        __syncthreads();
    }}
    if (last && t == 0) {{
        const bool nan = nan_propagates && st[4] != 0;
        out[0] = nan ? nan_s() : from_key((K)st[0]);
        out[1] = nan ? nan_s() : from_key((K)(two ? st[1] : st[0]));
    }}
}}
""" + (_LERP.format(n=n, f=self.dtype.char) if self.dtype.char in "fd" else "")



# ``_lerp`` (float32, float64): a scalar quantile of a sorted array (``sort`` of one block):
# NumPy's _lerp, a + (b - a) * t, or b - (b - a) * u (u = 1 - t) where t >= 0.5, each operation
# rounded alone (no contraction into a fused multiply-add: NumPy's result bit for bit); NaN
# where the largest sorted value is NaN (NaN sorts last).
_LERP = """
#define LERP_RN(op, a, b) __{f}##op##_rn(a, b)
extern "C" __global__ void {n}_lerp(const S* s, long long ia, long long ib, long long last,
                                   S t, S u, int high, S* out) {{
    const S a = s[ia], b = s[ib], l = s[last];
    const S d = LERP_RN(sub, b, a);
    const S r = high ? LERP_RN(sub, b, LERP_RN(mul, d, u)) : LERP_RN(add, a, LERP_RN(mul, d, t));
    out[0] = l != l ? l : r;
}}
"""


def value_of_key(key: int, dtype) -> np.generic:
    """The value of ``dtype`` whose order-preserving key (low ``8 * itemsize`` bits of
    ``key``) is ``key``: the host's inverse of the kernels' ``to_key``; NaN for NaN's key."""
    dt = np.dtype(dtype)
    bits = 8 * dt.itemsize
    mask = (1 << bits) - 1
    top = 1 << (bits - 1)
    k = int(key) & mask
    udt = np.dtype(f"u{dt.itemsize}")
    if dt.kind == "f":
        if k == mask:
            return dt.type(np.nan)
        u = (k ^ top) if k & top else (~k & mask)
    elif dt.kind == "i":
        u = k ^ top
    else:
        u = k
    return np.array(u, udt).view(dt)[()]
