"""``permutation``, ``shuffle`` and ``choice`` of :class:`~gpunb.random.Generator`, on the GPU.

A random permutation is the argsort of random 64-bit keys (gpunb's parallel sort); a
weighted sample without replacement takes the ``k`` smallest of ``E_i / p_i`` for
exponential ``E_i`` (Efraimidis-Spirakis: the same distribution as NumPy's sequential
draws). Not NumPy's values: NumPy shuffles with sequential Fisher-Yates swaps.
"""

from __future__ import annotations

import operator

import numpy as np

from ..core import args
from ..core.kernels.random import plan as pl
from ..core.kernels.random import run
from ..core.ndarray import ndarray

_U64 = np.dtype(np.uint64)


def _api(name):
    import gpunb
    return getattr(gpunb, name)


def _perm(gen, n: int) -> ndarray:
    """A random permutation of ``range(n)`` (int64)."""
    keys = ndarray._empty((n,), _U64)
    run.fill_integers(gen._state, keys, 0, pl.MASK64)
    from .._sorting.sort import argsort
    return argsort(keys, kind="stable")


def _normalize_axis(axis, ndim):
    return args.axis(operator.index(axis), ndim)


def permutation(gen, x, axis=0):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return _perm(gen, int(x))
    a = args.array(x, "permutation")
    if a.ndim == 0:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    ax = _normalize_axis(axis, a.ndim)
    return _api("take")(a, _perm(gen, a.shape[ax]), axis=ax)


def shuffle(gen, x, axis=0) -> None:
    a = args.array(x, "shuffle")
    if a.ndim == 0:
        raise TypeError("len() of unsized object")
    ax = _normalize_axis(axis, a.ndim)
    if a.shape[ax] <= 1:
        return
    from ..core.kernels.elementwise.run import assign
    assign(a, _api("take")(a, _perm(gen, a.shape[ax]), axis=ax))


def choice(gen, a, size=None, replace=True, p=None, axis=0, shuffle=True):
    from .generator import _shape
    pop = None
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        n = int(a)
        if n < 0:
            raise ValueError("a must be a positive integer unless no samples are taken")
    else:
        pop = args.as_gpu(a, "a")
        if pop is None:
            raise TypeError("choice needs an int or a GPU array for a")
        if pop.ndim == 0:
            raise ValueError("a must be a sequence or an integer, not a scalar")
        axis = _normalize_axis(axis, pop.ndim)
        n = pop.shape[axis]
    shape = _shape(size)
    k = int(np.prod(shape, dtype=np.int64))
    if n == 0 and k:
        raise ValueError("a cannot be empty unless no samples are taken" if pop is not None
                         else "a must be a positive integer unless no samples are taken")
    probs = None
    if p is not None:
        probs = args.as_gpu(p, "p")          # a host list or tuple is checked on the host
        host = np.asarray(p, np.float64) if probs is None else None
        ndim, size = (host.ndim, host.size) if host is not None else (probs.ndim, probs.size)
        if ndim != 1:
            raise ValueError("p must be 1-dimensional")
        if size != n:
            raise ValueError("a and p must have same size")
        if host is not None:
            negative, total = bool((host < 0).any()), float(host.sum())
        else:
            probs = probs.astype(np.float64)
            negative = bool(_api("any")(probs < 0).get())
            total = float(_api("sum")(probs).get())
        if negative:
            raise ValueError("Probabilities are not non-negative")
        if abs(total - 1.0) > np.sqrt(np.finfo(np.float64).eps):
            raise ValueError("Probabilities do not sum to 1. See Notes section of docstring for more "
                             "information.")
        if host is not None:
            nonzero = int(np.count_nonzero(host))
            if not replace and k > nonzero:
                raise ValueError("Fewer non-zero entries in p than size")
            probs = _api("asarray")(host)
    if not replace:
        if k > n:
            raise ValueError("Cannot take a larger sample than population when replace is False")
        if probs is not None and host is None and k > int(_api("count_nonzero")(probs).get()):
            raise ValueError("Fewer non-zero entries in p than size")
    if replace:
        if probs is None:
            idx = gen.integers(0, n, size=shape) if k else ndarray._empty(shape, np.dtype(np.int64))
        else:
            cdf = _api("cumsum")(probs)
            cdf = cdf / cdf[-1:]
            u = gen.random(shape)
            idx = _api("minimum")(_api("searchsorted")(cdf, u, side="right"), n - 1)
    else:
        if probs is None:
            idx = _perm(gen, n)[:k]
        else:
            keys = gen.standard_exponential(n) / probs      # zero p: +inf, never taken first
            from .._sorting.sort import argsort
            idx = argsort(keys, kind="stable")[:k]
        if not shuffle:
            idx = _api("sort")(idx)
        idx = idx.reshape(shape)
    if pop is None:
        return idx
    res = _api("take")(pop, idx.reshape(-1), axis=axis)
    return res.reshape(pop.shape[:axis] + shape + pop.shape[axis + 1:])


def permuted(gen, x, axis=None, out=None):
    """NumPy's ``Generator.permuted``: each slice along ``axis`` (the flattened array when
    None) shuffled independently, by the argsort of random 64-bit keys along ``axis``; the
    result in a new array or ``out`` (which may be ``x``: shuffled in place)."""
    a = args.array(x, "permuted")
    if out is not None:
        if not isinstance(out, ndarray):
            raise TypeError(f"permuted: out must be a gpunb.ndarray, not {type(out).__name__}")
        if out.shape != a.shape:
            raise ValueError("out must have the same shape as x")
        if not np.can_cast(a.dtype, out.dtype, "safe"):
            raise TypeError(f"Cannot cast array data from {a.dtype!r} to {out.dtype!r} "
                            "according to the rule 'safe'")
    if axis is None:
        if a.ndim == 0:
            raise TypeError("len() of unsized object")
        flat = a.reshape(-1)
        res = a.copy() if a.size <= 1 else _api("take")(flat, _perm(gen, flat.size)).reshape(a.shape)
    else:
        ax = _normalize_axis(axis, a.ndim)
        if a.shape[ax] <= 1 or a.size == 0:
            res = a.copy()
        else:
            keys = ndarray._empty(a.shape, _U64)
            run.fill_integers(gen._state, keys, 0, pl.MASK64)
            from .._sorting.sort import argsort
            res = _api("take_along_axis")(a, argsort(keys, axis=ax, kind="stable"), axis=ax)
    if out is None:
        return res
    from ..core.kernels.elementwise.run import assign
    assign(out, res)
    return out
