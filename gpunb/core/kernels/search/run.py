"""Searching and counting, run: load the kernels of :mod:`.codegen` and launch them.

:func:`searchsorted_flat` (binary search), :func:`histogram_flat` (bincount and histograms)
and :func:`select2` (two order statistics by radix select, all on the GPU: nothing is read
back). Inputs are contiguous 1-D arrays; the API modules arrange that.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ... import memo
from ...ndarray import ndarray
from ...runtime import memory
from .. import loader
from ..execute import Step, execute
from . import codegen as cg
from .plan import grid

_I64 = np.dtype("int64")
_U64 = np.dtype("uint64")
_kernels = memo.table("search.kernels")     # spec -> IR
_vp, _i64, _int, _dbl = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double


def _ptr(a) -> _vp:
    return _vp(a.data.ptr if a is not None else 0)


def _load(spec, make):
    k = _kernels.get(spec)
    if k is None:
        k = _kernels[spec] = make()
    return k, loader.get(cg, spec, lambda: k)


def _flat(x: ndarray) -> ndarray:
    x = x if x._c_contiguous else x.copy()
    return x.reshape(x.size) if x.ndim != 1 else x


def searchsorted_flat(a: ndarray, v: ndarray, side: str, sorter: ndarray | None = None) -> ndarray:
    """int64 positions (``v``'s shape) where the elements of ``v`` go in ``a`` (1-D, sorted
    in NumPy's order, or through ``sorter``, an int64 permutation); ``a`` and ``v`` of one
    dtype."""
    out = ndarray._empty(v.shape, _I64)
    if v.size == 0:
        return out
    a1, v1 = _flat(a), _flat(v)
    s1 = _flat(sorter) if sorter is not None else None
    k, lk = _load(("search", a.dtype, side, s1 is not None),
                  lambda: cg.SearchKernel(a.dtype, side, s1 is not None))
    g = grid(v1.size, lk.sm_count, lk.occupancy[k.name])
    execute((Step(lk.functions[k.name], (g,), (cg.THREADS,),
                  (0, _i64(a1.size), 1, 2, _i64(v1.size), 3)),),
            [_ptr(a1), _ptr(s1), _ptr(v1), _ptr(out)])
    return out


def histogram_flat(kind: str, x: ndarray, nbins: int, weights: ndarray | None = None,
                   edges: ndarray | None = None, dtypes=(None,) * 5,
                   lo_keep=0.0, hi_keep=0.0, first=0.0, denom=1.0) -> ndarray:
    """A histogram of ``x`` (any shape, read in C order) into ``nbins`` bins: int64 counts,
    or float64 / complex128 sums of ``weights`` (``x``'s shape). See :class:`.codegen.HistKernel`
    for ``kind``, ``dtypes`` (cmp, bt, d1, d2, d3) and the scalars."""
    acc = None if weights is None else np.dtype("complex128" if weights.dtype.kind == "c" else "float64")
    out = ndarray._empty((nbins,), _I64 if acc is None else acc)
    memory.fill_bytes(out.data.ptr, 0, out.nbytes)
    if x.size == 0 or nbins == 0:
        return out
    x1 = _flat(x)
    w1 = _flat(weights) if weights is not None else None
    cbytes = 4 if acc is None else acc.itemsize
    shared = nbins * cbytes <= cg.SHARED_BYTES
    wdt = w1.dtype if w1 is not None else None
    spec = ("hist", kind, x1.dtype, acc, wdt, shared, *dtypes)
    k, lk = _load(spec, lambda: cg.HistKernel(kind, x1.dtype, acc, wdt, shared, *dtypes))
    g = grid(-(-x1.size // cg.UNROLL), lk.sm_count, lk.occupancy[k.name])
    smem = nbins * cbytes if shared else 0
    if shared:     # as many blocks as fit with this much shared memory, and no more than needed
        g = min(g, lk.sm_count * max(1, min(lk.occupancy[k.name], (200 * 1024) // max(smem, 1))))
    execute((Step(lk.functions[k.name], (g,), (cg.THREADS,),
                  (0, _i64(x1.size), 1, 2, _i64(nbins), 3, _dbl(lo_keep), _dbl(hi_keep),
                   _dbl(first), _dbl(denom)), smem),),
            [_ptr(x1), _ptr(w1), _ptr(edges), _ptr(out)])
    return out


def select2(x: ndarray, k0: int, k1: int, nan_propagates: bool = True) -> ndarray:
    """A 2-element array of ``x``'s dtype: the ``k0``-th and ``k1``-th smallest elements of
    ``x`` (any shape, non-empty, not complex) in NumPy's sort order; both NaN when
    ``nan_propagates`` and ``x`` holds a NaN. Stays on the GPU (nothing is read back)."""
    x1 = _flat(x)
    k, lk = _load(("select", x1.dtype), lambda: cg.SelectKernel(x1.dtype))
    st = ndarray._empty((cg.STATE_WORDS,), _U64)
    memory.fill_bytes(st.data.ptr, 0, st.nbytes)
    out = ndarray._empty((2,), x1.dtype)
    two = int(k0 != k1)
    hist, pick = lk.functions[k.name + "_hist"], lk.functions[k.name + "_pick"]
    g = grid(-(-x1.size // cg.UNROLL), lk.sm_count, lk.occupancy[k.name + "_hist"])
    passes = k.passes()
    steps = []
    for p, (shift, bits) in enumerate(passes):
        steps.append(Step(hist, (g,), (cg.THREADS,),
                          (0, _i64(x1.size), 1, _int(shift), _int(bits), _int(p == 0), _int(two))))
        steps.append(Step(pick, (1,), (cg.THREADS,),
                          (1, 2, _int(bits), _int(p == len(passes) - 1), _int(two),
                           _int(nan_propagates), _i64(k0), _i64(k1), _int(p == 0))))
    execute(steps, [_ptr(x1), _ptr(st), _ptr(out)])
    return out


def lerp_sorted(s: ndarray, ia: int, ib: int, t: float, high: bool) -> ndarray:
    """A 0-d array: NumPy's ``_lerp(s[ia], s[ib], t)`` in ``s``'s dtype (float32 or float64;
    ``t`` a weak Python float, ``high``: ``t >= 0.5``), NaN where ``s[-1]`` (1-D, sorted) is."""
    k, lk = _load(("select", s.dtype), lambda: cg.SelectKernel(s.dtype))
    out = ndarray._empty((), s.dtype)
    real = ctypes.c_float if s.dtype.itemsize == 4 else ctypes.c_double
    execute((Step(lk.functions[k.name + "_lerp"], (1,), (1,),
                  (0, _i64(ia), _i64(ib), _i64(s.size - 1), real(s.dtype.type(t)),
                   real(s.dtype.type(1 - t)), _int(int(high)), 1)),), [_ptr(s), _ptr(out)])
    return out


def minmax(x: ndarray):
    """``(x.min(), x.max())`` of a non-empty array (not complex) as NumPy scalars of its
    dtype, in one pass and one 16-byte read back; both NaN if ``x`` holds a NaN, as NumPy's
    ``min`` and ``max`` are."""
    x1 = _flat(x)
    k, lk = _load(("select", x1.dtype), lambda: cg.SelectKernel(x1.dtype))
    res = ndarray._empty((2,), _U64)
    memory.fill_bytes(res.data.ptr, 0, 16)
    name = k.name + "_minmax"
    g = grid(-(-x1.size // cg.UNROLL), lk.sm_count, lk.occupancy[name])
    execute((Step(lk.functions[name], (g,), (cg.THREADS,), (0, _i64(x1.size), 1)),),
            [_ptr(x1), _ptr(res)])
    words = np.empty(2, _U64)
    memory.copy_to_host(words, res.data.ptr)
    return tuple(cg.value_of_key(int(w), x1.dtype) for w in (~words[0], words[1]))
