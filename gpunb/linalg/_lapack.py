"""The plumbing under gpunb.linalg: cuSOLVER/cuBLAS handles and type codes, work buffers in
the column-major layout the libraries read, device pointer arrays for the batched routines,
and the one readback of the libraries' info codes.

Layout: cuSOLVER reads matrices column-major. A C-ordered ``m x n`` matrix is, read
column-major, its transpose (``n x m``, leading dimension ``n``); the callers use that
instead of a transposing copy wherever the algebra allows (``solve`` through a transposed
``getrs``, ``inv`` by solving with ``A^T``, ``det`` from the LU of ``A^T``). A :class:`Work`
buffer is always a fresh C-contiguous array (the routines overwrite their input) holding each
matrix of the batch either as it is (``transposed=True``: the library sees ``A^T``) or
transposed (``transposed=False``: the library sees ``A``).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.kernels.elementwise.run import assign
from ..core.ndarray import ndarray
from ..core.runtime import driver, mathlibs, memory

# cudaDataType_t of each dtype cuSOLVER's X API takes
CUDA_TYPE = {np.dtype(np.float32): 0, np.dtype(np.float64): 1,
             np.dtype(np.complex64): 4, np.dtype(np.complex128): 5}
PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
REAL = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64),
        np.dtype(np.complex64): np.dtype(np.float32),
        np.dtype(np.complex128): np.dtype(np.float64)}
LOWER, UPPER = 0, 1          # cublasFillMode_t
OP_N, OP_T, OP_C = 0, 1, 2   # cublasOperation_t
NOVECTOR, VECTOR = 0, 1      # cusolverEigMode_t


def solver():
    """``nvmath.bindings.cusolverDn`` (MathLibraryMissing naming the pip command if absent)."""
    return mathlibs.module("cusolverDn")


def blas():
    return mathlibs.module("cublas")


_params: dict[int, int] = {}
# cusolverDnSetAdvOptions per routine (cusolverDnFunction_t -> cusolverAlgMode_t): ALG_0 is
# cuSOLVER's default; benchmarks/linalg_timing.py measures the others
GETRF, POTRF = 0, 1
ALGS = {GETRF: 0}


def set_alg(function: int, algo: int) -> None:
    """Choose cuSOLVER's algorithm for ``function`` (GETRF...) on every device's params."""
    ALGS[function] = algo
    for p in _params.values():
        with mathlibs.errors("cusolverDn options"):
            solver().set_adv_options(p, function, algo)


def handle_and_params() -> tuple[int, int]:
    """The cuSOLVER handle bound to gpunb's current stream and the device's default
    ``cusolverDnParams`` (made once per device)."""
    h = mathlibs.handle("cusolverDn")
    ctx = driver.active
    p = _params.get(ctx.ordinal)
    if p is None:
        with mathlibs.errors("cusolverDn params"):
            p = _params[ctx.ordinal] = solver().create_params()
            for function, algo in ALGS.items():
                if algo:
                    solver().set_adv_options(p, function, algo)
    return h, p


def ptr(x: ndarray) -> int:
    return x._data.ptr


def workspace(nbytes: int) -> ndarray:
    """A device scratch buffer of ``nbytes`` (at least 1) from gpunb's stream-ordered pool:
    freed when dropped, reused by the next call on the same stream."""
    return ndarray._empty((max(int(nbytes), 1),), np.dtype(np.uint8))


_host: dict[int, np.ndarray] = {}


def host_workspace(nbytes: int) -> np.ndarray:
    """A host scratch buffer of ``nbytes`` for cuSOLVER's X routines, kept for the process (one
    per size): it outlives the asynchronous call that may still read it."""
    nbytes = max(int(nbytes), 1)
    buf = _host.get(nbytes)
    if buf is None:
        if len(_host) > 32:
            _host.clear()
        buf = _host[nbytes] = np.empty(nbytes, np.uint8)
    return buf


def work(a: ndarray, dt: np.dtype, transposed: bool, batch=None) -> ndarray:
    """A new C-contiguous copy of ``a`` (cast to ``dt``, broadcast over ``batch``) of shape
    ``batch + (m, n)`` if ``transposed`` (read column-major: each ``A^T``, leading dimension
    ``n``), else of shape ``batch + (n, m)`` holding each ``A^T`` (read column-major: ``A``,
    leading dimension ``m``)."""
    solver()      # the math libraries are there before any kernel runs
    batch = a.shape[:-2] if batch is None else tuple(batch)
    m, n = a.shape[-2:]
    if transposed:
        buf = ndarray._empty(batch + (m, n), dt)
        if buf.size:
            assign(buf, a)
    else:
        buf = ndarray._empty(batch + (n, m), dt)
        if buf.size:
            assign(buf.swapaxes(-1, -2), a)
    return buf


def matrices(x: ndarray, dt: np.dtype, batch: tuple) -> tuple[ndarray, int]:
    """``x``'s matrices as the one-block kernels read them: an array of C-ordered matrices
    of ``dt`` and the elements from one to the next (0: one matrix for the whole batch),
    ``x`` itself where it already is that, else a copy."""
    if x.dtype == dt and x._c_contiguous:
        if x.shape[:-2] == batch:
            return x, x.shape[-1] * x.shape[-2]
        if math.prod(x.shape[:-2]) == 1:
            return x, 0
    return work(x, dt, True, batch), x.shape[-1] * x.shape[-2]


def pointers(buf: ndarray, count: int, matrix_bytes: int) -> ndarray:
    """A device array of ``count`` pointers to consecutive matrices of ``buf`` (the batched
    cuBLAS/cuSOLVER routines take arrays of pointers)."""
    host = np.arange(count, dtype=np.uint64) * np.uint64(matrix_bytes) + np.uint64(ptr(buf))
    out = ndarray._empty((count,), np.dtype(np.uint64))
    memory.copy_to_device(ptr(out), host)
    return out


def info(count: int = 1) -> ndarray:
    """Zeroed int32 info codes for ``count`` problems."""
    out = ndarray._empty((max(count, 1),), np.dtype(np.int32))
    memory.fill_bytes(ptr(out), 0, out.nbytes)
    return out


def early(codes: ndarray) -> memory.Readback:
    """The info codes' copy to the host, queued now (after the factorization that writes
    them) and read by :func:`failed` once the call's later work is queued too: the host's
    wait then ends while that work still runs, and the next call's host time overlaps it
    instead of leaving the GPU idle (solve of 2048 float64 back to back: ~0.35 ms a call)."""
    return memory.Readback(ptr(codes), codes.nbytes)


def failed(codes) -> np.ndarray | None:
    """Read the info codes back (the one small readback a solver call makes; ``codes`` a
    gpunb array or :func:`early`'s copy): None when all are 0, else the host array. A
    negative code is an argument gpunb passed wrongly (a bug)."""
    host = np.frombuffer(codes.wait(), np.int32) if isinstance(codes, memory.Readback) else codes.get()
    if not host.any():
        return None
    if (host < 0).any():
        raise mathlibs.MathLibraryError(f"cuSOLVER rejected argument {-int(host.min())} (a gpunb bug)")
    return host


def batch_of(shape) -> int:
    return math.prod(shape)
