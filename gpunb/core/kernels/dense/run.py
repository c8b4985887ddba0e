"""Small dense factorizations, run: decide whether a problem fits one block, load the
kernels of :mod:`.codegen`, launch one block per matrix, and wait for the failure word.

NumPy raises LinAlgError for a singular or indefinite matrix, so these calls wait for the
GPU. The kernels write a failure to a word of mapped host memory (the host reads it after
a stream synchronize): a 4-byte ``.get()`` of device info codes took 17.6 us on an H100,
most of a 16 x 16 solve's time."""

from __future__ import annotations

import ctypes
import itertools
import threading

import numpy as np

from ...runtime import driver, libcuda
from .. import loader
from ..execute import Step, execute
from . import codegen as cg

_DEFAULT_SHARED = 48 * 1024     # what a kernel may use without opting in (static included:
# inv of 55 x 55 float64, 48840 dynamic bytes and 768 static, failed to launch before)
_optin: dict[int, int] = {}      # device ordinal -> its opt-in shared memory per block
_granted: dict[int, int] = {}    # CUfunction -> the dynamic shared memory it was allowed
_KERNELS = {np.dtype(t): cg.kernel_for(t) for t in ("float32", "float64", "complex64", "complex128")}
_SLOTS = 4096                    # failure words, used round robin (each call waits for its own)
_words = None                    # (host address, device address) of the mapped words
_next = itertools.count()
_lock = threading.Lock()


def _limit() -> int:
    ordinal = (driver.active or driver.context()).ordinal
    v = _optin.get(ordinal)
    if v is None:
        v = _optin[ordinal] = max(_DEFAULT_SHARED, libcuda.device_attribute(
            ordinal, libcuda.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN))
    return v


def fits_gesv(n: int, k: int, dtype: np.dtype) -> bool:
    """Whether ``n x n`` systems with ``k`` right-hand sides go to the one-block kernel."""
    return (0 < n <= cg.MAX_N and dtype in _KERNELS
            and cg.gesv_shared_bytes(n, k, dtype.itemsize)
            + cg.static_shared_bytes("gesv", dtype, n <= cg.SMALL_N) <= _limit())


def fits_potrf(n: int, dtype: np.dtype) -> bool:
    return (0 < n <= cg.MAX_N and dtype in _KERNELS
            and cg.potrf_shared_bytes(n, dtype.itemsize)
            + cg.static_shared_bytes("potrf", dtype, n <= cg.SMALL_N) <= _limit())


def _function(dtype: np.dtype, entry: str, n: int, shared: int) -> tuple[int, int]:
    """(CUfunction, threads) of ``entry`` for order ``n``."""
    k = _KERNELS[dtype]
    lk = loader.get(cg, ("dense", k.dtype), lambda: k)
    small = n <= cg.SMALL_N
    f = lk.functions[getattr(k, entry) + ("_small" if small else "")]
    if (shared + cg.static_shared_bytes(entry, dtype, small) > _DEFAULT_SHARED
            and _granted.get(f, 0) < shared):
        libcuda.allow_dynamic_shared(f, shared)
        _granted[f] = shared
    return f, cg.SMALL_THREADS if small else cg.THREADS


def _word() -> tuple[int, int]:
    """A zeroed failure word: (host address, device address)."""
    global _words
    if _words is None:
        with _lock:
            if _words is None:
                driver.context()
                _words = libcuda.mapped_words(_SLOTS)
    i = 4 * (next(_next) % _SLOTS)
    ctypes.c_int32.from_address(_words[0] + i).value = 0
    return _words[0] + i, _words[1] + i


def _launch(function: tuple, count: int, shared: int, params: tuple, pointers: list) -> int:
    host, dev = _word()
    step = Step(function[0], (count,), (function[1],), params, shared)
    execute((step,), [*pointers, ctypes.c_void_p(dev)])
    handle = driver.stream_handle()
    libcuda.check(libcuda.lib().cuStreamSynchronize(handle), "waiting for a factorization")
    return ctypes.c_int32.from_address(host).value


def gesv(a: int, sa: int, b: int | None, sb: int, x: int, n: int, k: int, count: int,
         dtype: np.dtype) -> int:
    """Solve ``count`` systems ``A X = B`` (pointers and element strides as the kernel takes
    them, :func:`codegen._gesv`; ``b=None``: the identity, an inverse) and wait: 0, or the
    LAPACK info of a singular matrix. ``fits_gesv`` must hold."""
    shared = cg.gesv_shared_bytes(n, k, dtype.itemsize)
    return _launch(_function(dtype, "gesv", n, shared), count, shared,
                   (0, ctypes.c_int64(sa), 1, ctypes.c_int64(sb), 2, 3, ctypes.c_int32(n),
                    ctypes.c_int32(k)),
                   [ctypes.c_void_p(a), ctypes.c_void_p(b), ctypes.c_void_p(x)])


def potrf(a: int, sa: int, out: int, n: int, upper: bool, count: int, dtype: np.dtype) -> int:
    """Cholesky factors of ``count`` matrices (:func:`codegen._potrf`) and wait: 0, or the
    LAPACK info of a matrix that is not positive definite. ``fits_potrf`` must hold."""
    shared = cg.potrf_shared_bytes(n, dtype.itemsize)
    return _launch(_function(dtype, "potrf", n, shared), count, shared,
                   (0, ctypes.c_int64(sa), 1, 2, ctypes.c_int32(n), ctypes.c_int32(int(upper))),
                   [ctypes.c_void_p(a), ctypes.c_void_p(out)])
