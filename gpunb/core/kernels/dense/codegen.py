"""Small dense factorizations in one thread block per matrix, CUDA C++ source: ``gesv``
(LU with partial pivoting and the solve, LAPACK's ``getrf`` + ``getrs`` on ``[A | B]``; ``B =
I`` for an inverse) and ``potrf`` (Cholesky).

Why: at n = 64 cuSOLVER's ``getrf`` + ``getrs`` is a chain of small kernels (events around
100 solves: ~0.4 ms a call on an H100) and ``solve`` reads the info code back for NumPy's
LinAlgError, so each call waits for all of it; CuPy's ``solve`` does not wait and took about
0.2 ms. Here the matrix (and the right-hand sides) sit in shared memory and one launch does
the whole solve; a stack of matrices is one block each.

The arithmetic is LAPACK's unblocked order: the pivot is the first row of largest ``|re| +
|im|`` (``i?amax``), each step's multipliers are ``a_ij / a_jj``, the right-hand sides are
eliminated with the same multipliers (``getrs``'s forward solve) and back-substituted row by
row (``trsm``: ``x_j = y_j / u_jj``, then ``y_i -= u_ij x_j``). ``info`` is LAPACK's: the first
exactly zero pivot (1-based), or for ``potrf`` the first diagonal that is not positive.

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..prelude import prelude

THREADS = 256
MAX_N = 64            # above this, cuSOLVER's blocked routines are faster than one block
# Up to order 16, blocks of 2 warps (the ``_small`` entry points): a stack of 1000 8 x 8
# systems ran in 38 us with 256-thread blocks (4 resident per SM: registers), ...
SMALL_N, SMALL_THREADS = 16, 64
_TYPES = {"float32": ("float", "float"), "float64": ("double", "double"),
          "complex64": ("complex<float>", "float"), "complex128": ("complex<double>", "double")}


def row_stride(width: int) -> int:
    """The shared-memory row length of a ``width``-column matrix: odd, so a warp reading one
    column (the pivot search) hits distinct banks."""
    return width | 1


def gesv_shared_bytes(n: int, k: int, itemsize: int) -> int:
    return n * row_stride(n + k) * itemsize


def potrf_shared_bytes(n: int, itemsize: int) -> int:
    return n * row_stride(n) * itemsize


def static_shared_bytes(entry: str, dtype, small: bool = False) -> int:
    """The static shared memory of entry point ``entry`` ('gesv' or 'potrf', ``small`` for
    the ``_small`` ones) for ``dtype``: ``perm`` and ``rdiag``, or ``diag`` and ``rdiag`` in
    the real type. It counts with the dynamic bytes against the 48 KiB a block has without
    opting in, and against the opt-in limit (a CPU test reads it from the cubin)."""
    dt = np.dtype(dtype)
    max_n = SMALL_N if small else MAX_N
    if entry == "gesv":
        return max_n * (4 + dt.itemsize)
    return 2 * max_n * (dt.itemsize // 2 if dt.kind == "c" else dt.itemsize)


@dataclass(frozen=True)
class DenseKernel:
    """The one-block ``gesv`` and ``potrf`` kernels for one dtype (float32, float64,
    complex64, complex128)."""

    dtype: str

    def __post_init__(self):
        if self.dtype not in _TYPES:
            raise ValueError(f"no dense kernels for {self.dtype}: float32, float64, complex64 "
                             "or complex128")

    @property
    def name(self) -> str:
        return f"dense_{self.dtype}"

    @property
    def gesv(self) -> str:
        return f"gesv_{self.dtype}"

    @property
    def potrf(self) -> str:
        return f"potrf_{self.dtype}"


def kernel_for(dtype) -> DenseKernel:
    return DenseKernel(np.dtype(dtype).name)


def render(kernel: DenseKernel) -> str:
    T, R = _TYPES[kernel.dtype]
    return "\n".join([prelude(), _HELPERS,
                      _gesv(kernel.gesv, T, R, THREADS, MAX_N), _potrf(kernel.potrf, T, R, THREADS, MAX_N),
                      _gesv(kernel.gesv + "_small", T, R, SMALL_THREADS, SMALL_N),
                      _potrf(kernel.potrf + "_small", T, R, SMALL_THREADS, SMALL_N)])


def entry_points(kernel: DenseKernel) -> tuple[str, ...]:
    return (kernel.gesv, kernel.potrf, kernel.gesv + "_small", kernel.potrf + "_small")


def vector_width(kernel: DenseKernel) -> int:
    return 1


_HELPERS = """
using gpunb::complex;
// |re| + |im| (LAPACK's i?amax measure), the real part, the conjugate: real and complex alike
__device__ __forceinline__ float dn_abs1(float x) { return fabsf(x); }
__device__ __forceinline__ double dn_abs1(double x) { return fabs(x); }
template <class R> __device__ __forceinline__ R dn_abs1(complex<R> x) { return fabs(x.re) + fabs(x.im); }
__device__ __forceinline__ float dn_re(float x) { return x; }
__device__ __forceinline__ double dn_re(double x) { return x; }
template <class R> __device__ __forceinline__ R dn_re(complex<R> x) { return x.re; }
__device__ __forceinline__ float dn_cj(float x) { return x; }
__device__ __forceinline__ double dn_cj(double x) { return x; }
template <class R> __device__ __forceinline__ complex<R> dn_cj(complex<R> x) { return complex<R>(x.re, -x.im); }
__device__ __forceinline__ float dn_scale(float x, float s) { return x * s; }
__device__ __forceinline__ double dn_scale(double x, double s) { return x * s; }
template <class R> __device__ __forceinline__ complex<R> dn_scale(complex<R> x, R s) { return complex<R>(x.re * s, x.im * s); }
__device__ __forceinline__ float dn_shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ double dn_shfl(double v, int src) { return __shfl_sync(0xffffffffu, v, src); }
template <class R> __device__ __forceinline__ complex<R> dn_shfl(complex<R> v, int src) {
    return complex<R>(__shfl_sync(0xffffffffu, v.re, src), __shfl_sync(0xffffffffu, v.im, src));
}
"""


def _gesv(name: str, T: str, R: str, threads: int, max_n: int) -> str:
    """``name(a, sa, b, sb, x, fail, n, k)``: block ``m`` solves ``A_m X = B_m`` for the
    C-ordered ``n x n`` matrix at ``a + m*sa`` and the C-ordered ``n x k`` right-hand sides at
    ``b + m*sb`` (``b`` null: the identity, ``k = n``), writing ``X`` C-ordered at ``x + m*n*k``
    (strides in elements; 0 broadcasts one matrix). A singular matrix writes its LAPACK info
    (the first zero pivot, 1-based) to ``*fail``, which the caller zeroed. Dynamic shared
    memory: :func:`gesv_shared_bytes`.

    Rows are not moved: ``perm[i]`` is the shared-memory row of the ``i``-th row after the
    interchanges so far, so a step is two barriers (warp 0's pivot search, then the
    elimination). A warp owns rows ``i = j + 1 + warp (mod warps)``, a lane columns ``c = lane
    (mod 32)``; each thread loads all its rows' operands before it stores any (shared-memory
    stores would order every later load behind them). Multipliers ``a_ij * (1 / a_jj)``
    (LAPACK's ``scal`` by the reciprocal). Back substitution ``x_j = y_j * (1 / u_jj)``
    (OpenBLAS's ``trsm``): up to one column per warp, each column's rows in its warp's
    registers and ``x_j`` sent to every lane by a shuffle, no barrier; more columns (an
    inverse) row by row, a barrier a row. Measured on an H100 (``.prof/lead``'s
    ``dense_threads.py``): one barrier a step (each warp's pivot candidate left by the lane
    that updates the next column, reduced by every warp) was no faster (66 against 69 us
    for n = 64, 106 against 91 for an inverse); 128, 512 or 1024 threads were slower."""
    warps = threads // 32
    rows = -(-max_n // warps)       # the rows of a step one warp updates, at most
    held = -(-max_n // 32)          # the rows of a column one lane holds in the substitution
    pick = "\n".join(f"            if ((j >> 5) == {t}) own = y[{t}];" for t in range(1, held))
    return f"""
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    const {T}* __restrict__ a, const long long sa, const {T}* __restrict__ b, const long long sb,
    {T}* __restrict__ x, int* __restrict__ fail, const int n, const int k)
{{
    extern __shared__ ulonglong2 smem[];
    {T}* A = reinterpret_cast<{T}*>(smem);       // [A | B], n rows of ld
    __shared__ int perm[{max_n}];
    __shared__ {T} rdiag[{max_n}];
    const int w = n + k, ld = w | 1, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long m = blockIdx.x;
    a += m * sa;
    x += m * (long long)n * k;
    for (int e = tid; e < n * n; e += {threads}) {{ const int i = e / n; A[i * ld + (e - i * n)] = a[e]; }}
    if (b != nullptr) {{
        b += m * sb;
        for (int e = tid; e < n * k; e += {threads}) {{ const int i = e / k; A[i * ld + n + (e - i * k)] = b[e]; }}
    }} else {{
        for (int e = tid; e < n * k; e += {threads}) {{
            const int i = e / k, c = e - i * k;
            A[i * ld + n + c] = i == c ? {T}(1) : {T}(0);
        }}
    }}
    for (int i = tid; i < n; i += {threads}) perm[i] = i;
    int zero = 0;
    __syncthreads();
    for (int j = 0; j < n; ++j) {{
        if (warp == 0) {{       // the first row of largest |re| + |im| at or below the diagonal
            {R} best = -1; int p = j;
            #pragma unroll
            for (int q = 0; q < {-(-max_n // 32)}; ++q) {{
                const int i = j + lane + 32 * q;
                const {R} v = i < n ? dn_abs1(A[perm[i] * ld + j]) : {R}(-1);
                if (v > best) {{ best = v; p = i; }}
            }}
            #pragma unroll
            for (int o = 16; o > 0; o >>= 1) {{
                const {R} ob = __shfl_xor_sync(0xffffffffu, best, o);
                const int op = __shfl_xor_sync(0xffffffffu, p, o);
                if (ob > best || (ob == best && op < p)) {{ best = ob; p = op; }}
            }}
            if (lane == 0 && p != j) {{ const int t = perm[j]; perm[j] = perm[p]; perm[p] = t; }}
        }}
        __syncthreads();
        const int pr = perm[j] * ld;
        const {T} d = A[pr + j];
        if (d == {T}(0)) {{     // the column is zero below too: nothing to eliminate (no
            if (zero == 0) zero = j + 1;    // barrier: the next pivot search writes other rows' perm)
            continue;
        }}
        const {T} r = {T}(1) / d;
        int ro[{rows}];
        {T} l[{rows}];
        #pragma unroll
        for (int q = 0; q < {rows}; ++q) {{
            const int i = j + 1 + warp + {warps} * q;
            ro[q] = i < n ? perm[i] * ld : -1;
            l[q] = i < n ? A[ro[q] + j] * r : {T}(0);
        }}
        for (int c = j + 1 + lane; c < w; c += 32) {{
            const {T} pv = A[pr + c];
            {T} v[{rows}];
            #pragma unroll
            for (int q = 0; q < {rows}; ++q) if (ro[q] >= 0) v[q] = A[ro[q] + c];
            #pragma unroll
            for (int q = 0; q < {rows}; ++q) if (ro[q] >= 0) A[ro[q] + c] = v[q] - l[q] * pv;
        }}
        __syncthreads();
    }}
    for (int i = tid; i < n; i += {threads}) rdiag[i] = {T}(1) / A[perm[i] * ld + i];
    __syncthreads();
    if (k <= {warps}) {{        // a column per warp, its rows in the lanes' registers
        int rr[{held}];
        #pragma unroll
        for (int t = 0; t < {held}; ++t) {{ const int i = lane + 32 * t; rr[t] = i < n ? perm[i] * ld : -1; }}
        const int c = n + warp;
        if (c < w) {{
            {T} y[{held}];
            #pragma unroll
            for (int t = 0; t < {held}; ++t) y[t] = rr[t] >= 0 ? A[rr[t] + c] : {T}(0);
            for (int j = n - 1; j >= 0; --j) {{
                {T} own = y[0];
{pick}
                const {T} xj = dn_shfl(own * rdiag[j], j & 31);
                if (lane == (j & 31)) x[(long long)j * k + (c - n)] = xj;
                #pragma unroll
                for (int t = 0; t < {held}; ++t) if (lane + 32 * t < j) y[t] = y[t] - A[rr[t] + j] * xj;
            }}
        }}
    }} else {{                  // many columns: row by row, a barrier a row
        for (int j = n - 1; j >= 0; --j) {{
            const int pj = perm[j] * ld;
            const {T} rj = rdiag[j];
            int ro[{rows}];
            {T} u[{rows}];
            #pragma unroll
            for (int q = 0; q < {rows}; ++q) {{
                const int i = warp + {warps} * q;
                ro[q] = i < j ? perm[i] * ld : -1;
                u[q] = i < j ? A[ro[q] + j] : {T}(0);
            }}
            for (int c = n + lane; c < w; c += 32) {{
                const {T} xj = A[pj + c] * rj;
                if (warp == 0) x[(long long)j * k + (c - n)] = xj;
                {T} v[{rows}];
                #pragma unroll
                for (int q = 0; q < {rows}; ++q) if (ro[q] >= 0) v[q] = A[ro[q] + c];
                #pragma unroll
                for (int q = 0; q < {rows}; ++q) if (ro[q] >= 0) A[ro[q] + c] = v[q] - u[q] * xj;
            }}
            __syncthreads();
        }}
    }}
    if (tid == 0 && zero != 0) *fail = zero;
}}
"""


def _potrf(name: str, T: str, R: str, threads: int, max_n: int) -> str:
    """``name(a, sa, out, fail, n, upper)``: block ``m`` writes the Cholesky factor of the
    Hermitian matrix at ``a + m*sa`` to ``out + m*n*n`` (C order): lower ``L`` from ``A``'s
    lower triangle, or with ``upper`` ``U = L^H`` from its upper triangle (``L`` of ``A^H``'s
    lower one), the other triangle zero. A matrix that is not positive definite writes its
    LAPACK info (the first diagonal that is not positive, 1-based) to ``*fail``. Dynamic
    shared memory: :func:`potrf_shared_bytes`.

    One barrier a step: column ``j`` stays unscaled in shared memory and each thread scales
    what it reads by ``1 / l_jj`` (LAPACK's ``scal``, the same products), the output scales
    it once more. Loads before stores, as in ``gesv``."""
    warps = threads // 32
    rows = -(-max_n // warps)     # the rows of a step one warp updates, at most
    return f"""
extern "C" __global__ void __launch_bounds__({threads}) {name}(
    const {T}* __restrict__ a, const long long sa, {T}* __restrict__ out, int* __restrict__ fail,
    const int n, const int upper)
{{
    extern __shared__ ulonglong2 smem[];
    {T}* A = reinterpret_cast<{T}*>(smem);       // the lower triangle, n rows of ld
    __shared__ {R} diag[{max_n}], rdiag[{max_n}];
    const int ld = n | 1, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long m = blockIdx.x;
    a += m * sa;
    out += m * (long long)n * n;
    for (int e = tid; e < n * n; e += {threads}) {{
        const int i = e / n, c = e - i * n;
        if (c <= i) A[i * ld + c] = upper ? dn_cj(a[c * n + i]) : a[e];
    }}
    int bad = 0, done = n;
    __syncthreads();
    for (int j = 0; j < n; ++j) {{
        const {R} d = dn_re(A[j * ld + j]);
        // a NaN goes on to NaN factors, as OpenBLAS's potrf (NumPy's wheels); LAPACK's stops
        if (d <= {R}(0)) {{ bad = j + 1; done = j; break; }}
        const {R} s = sqrt(d), rs = {R}(1) / s;
        if (tid == 0) {{ diag[j] = s; rdiag[j] = rs; }}
        {T} l[{rows}];
        #pragma unroll
        for (int q = 0; q < {rows}; ++q) {{
            const int i = j + 1 + warp + {warps} * q;
            l[q] = i < n ? dn_scale(A[i * ld + j], rs) : {T}(0);
        }}
        for (int c = j + 1 + lane; c < n; c += 32) {{
            const {T} lc = dn_cj(dn_scale(A[c * ld + j], rs));
            {T} v[{rows}];
            #pragma unroll
            for (int q = 0; q < {rows}; ++q) {{
                const int i = j + 1 + warp + {warps} * q;
                if (i < n && c <= i) v[q] = A[i * ld + c];
            }}
            #pragma unroll
            for (int q = 0; q < {rows}; ++q) {{
                const int i = j + 1 + warp + {warps} * q;
                if (i < n && c <= i) A[i * ld + c] = v[q] - l[q] * lc;
            }}
        }}
        __syncthreads();
    }}
    for (int e = tid; e < n * n; e += {threads}) {{
        const int i = e / n, c = e - i * n;
        const int r = upper ? c : i, q = upper ? i : c;      // L[r][q], q <= r
        {T} v = {T}(0);
        if (q < r && q < done) v = dn_scale(A[r * ld + q], rdiag[q]);
        else if (q == r && q < done) v = {T}(diag[q]);
        out[e] = upper ? dn_cj(v) : v;
    }}
    if (tid == 0 && bad != 0) *fail = bad;
}}
"""
