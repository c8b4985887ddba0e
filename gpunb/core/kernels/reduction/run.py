"""Reductions, run: NumPy's rules for a call (axes, result dtype, empty slices, ``out=``),
then the kernel loaded (:mod:`..loader`) and its plan (:mod:`.plan`) executed.

:func:`reduce` serves every one-pass reduction of :data:`.ir.SPECS`, :func:`moment` var and
std; :func:`run` is the launch underneath both, which ``gpunb.fuse`` shares for a fused
trailing reduction.
"""

from __future__ import annotations

import ctypes
import math
import operator
import warnings

import numpy as np

from ... import args
from ...errors import warn
from ...runtime import driver
from ...ndarray import ndarray
from .. import loader
from ..execute import execute, make_replay, operand_params
from . import codegen as rc
from .ir import SPECS, kernel_for, mean_dtype, moment_kernel, result_dtype
from .plan import geometry, steps


def run(key, make, operands, shape, axes, result: ndarray, divisor: float, keep_order: bool):
    """Launch a reduction of ``operands`` (('array'|'outer', ndarray broadcast to ``shape``)
    or ('scalar', value)) over ``axes`` into the contiguous ``result``; ``make(no, nr)``
    builds the kernel for ``no`` outer and ``nr`` reduced dims, ``key`` names it. Returns
    the steps launched and the temporary bytes they needed."""
    # The plan depends on the kernel, the geometry (shape, axes, strides) and the reduced
    # operand's alignment, not on the data: made once per device and replayed, so a repeated
    # reduction costs a dictionary lookup and the launches.
    ctx = driver.active or driver.context()
    memo_key = ("reduce", key, shape, axes, keep_order, divisor,
                tuple(kind if kind == "scalar" else (kind, v._strides, v._data.ptr & 15)
                      for kind, v in operands))
    prepared = ctx.prepared.get(memo_key)
    if prepared is None:
        strided = [v for kind, v in operands if kind != "scalar"]
        g = geometry(shape, axes, [kind for kind, _ in operands], [v.strides for v in strided],
                     keep_order)
        if g.M == 0:
            prepared = ((), 0, None)
        else:
            no, nr = len(g.oshape), len(g.rshape)
            lk = loader.get(rc, key + (no, nr), lambda: make(no, nr))
            prepared = (*steps(lk, g, len(operands), strided[g.slot], divisor), lk.kernel)
        ctx.remember(memo_key, prepared)
    launches, temp_bytes, kernel = prepared
    if not launches:
        return (), 0
    params = operand_params(kernel, [v for _, v in operands])
    execute(launches, params + [ctypes.c_void_p(result._data.ptr)], temp_bytes)
    return launches, temp_bytes


def out_shape(shape, axes, keepdims) -> tuple:
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def check_empty(func: str, K: int) -> None:
    """NumPy's error (no identity) or warning (mean of nothing) for an empty reduction."""
    if K == 0:
        error = SPECS[func].empty_error if func in SPECS else None
        if error is not None:
            raise ValueError(error)
        if func == "mean":
            warn("Mean of empty slice.")


def _target(out, shape, rdt, func) -> ndarray:
    """The array the kernel writes: ``out`` itself when it fits, else a new one."""
    out = args.out_array(out, func)
    if out is not None:
        if out.shape != shape:
            raise ValueError(f"output parameter for reduction operation {func} has the wrong shape: "
                             f"expected {shape}, got {out.shape}")
        if out.dtype == rdt and out._c_contiguous:
            return out
    return ndarray._empty(shape, rdt)


def _deliver(result: ndarray, out):
    if out is None:
        return result
    if result is not out:
        out[...] = result
    return out


def _axes(func: str, axis, ndim: int) -> tuple[int, ...]:
    if SPECS[func].keep_order and axis is not None:       # arg reductions: one int axis
        axis = operator.index(axis)
    return args.axes(axis, ndim)


def reduce(func: str, a, axis=None, dtype=None, out=None, keepdims=False):
    """The one-pass reduction ``func`` (a key of :data:`.ir.SPECS`) of ``a`` over ``axis``,
    with NumPy's result dtype (``dtype=`` where the function takes one), ``out=`` and
    ``keepdims``."""
    ctx = driver.active
    key = _call_key("reduce:call", func, a, axis, keepdims, dtype, out)
    if key is not None and ctx is not None:
        fast = ctx.prepared.get(key)
        if fast is not None:
            return fast(a)
    x = args.array(a, func)
    axes = _axes(func, axis, x.ndim)
    rdt = result_dtype(func, x.dtype, args.dtype(dtype))
    K = math.prod(x.shape[d] for d in axes)
    check_empty(func, K)
    result = _target(out, out_shape(x.shape, axes, keepdims), rdt, func)
    launches, temp_bytes = run(("reduce", func, x.dtype, rdt),
                               lambda no, nr: kernel_for(func, x.dtype, rdt, no, nr),
                               [("array", x)], x.shape, axes, result, float(K), SPECS[func].keep_order)
    if key is not None and K and launches:
        _prepare(func, x, axis, keepdims, dtype, result, launches, temp_bytes)
    return _deliver(result, out)


# -- the prepared path: a reduction call seen before (same dtype, shape, strides, alignment,
# axis, keepdims, dtype= as written; no out=) replays its launches with no argument handling -----

_FAST_AXES = (type(None), int, tuple)
_FAST_DTYPES = (type, np.dtype, str)     # dtype= as keys (Dask's chunk sums pass one)


def _call_key(kind, func, a, axis, keepdims, dtype, out, *rest):
    """The prepared table's key of a call that can be replayed (a gpunb array, no ``out=``,
    an axis and a ``dtype=`` that can be keys as written), else None."""
    if (out is None and type(a) is ndarray and type(axis) in _FAST_AXES
            and (dtype is None or isinstance(dtype, _FAST_DTYPES))):
        return (kind, func, a._dtype, a._shape, a._strides, a._data.ptr & 15, axis, keepdims,
                dtype, *rest)
    return None


def _prepare(func, x, axis, keepdims, dtype, result, launches, temp_bytes) -> None:
    ctx = driver.context()
    key = _call_key("reduce:call", func, x, axis, keepdims, dtype, None)
    fast = make_replay(launches, 1, result._shape, result._dtype, temp_bytes,
                       keep=lambda compiled: ctx.remember(key, compiled))
    if fast is not None:
        ctx.remember(key, fast)


def moment(func: str, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``var`` or ``std``: the mean, then the sum of squared deviations from it divided by
    N - ddof (NumPy's two-pass algorithm and dtypes; complex input gives a real result)."""
    ctx = driver.active
    fast_key = (_call_key("moment:call", func, a, axis, keepdims, dtype, out, ddof)
                if ddof.__class__ is int else None)
    if fast_key is not None and ctx is not None:
        fast = ctx.prepared.get(fast_key)
        if fast is not None:        # seen before with N - ddof > 0: nothing to warn of
            axes, mdt, replay = fast
            return replay(a, reduce("mean", a, axes, mdt, None, True))   # (its own replay)
    x = args.array(a, func)
    axes = args.axes(axis, x.ndim)
    dt = args.dtype(dtype)
    rdt = result_dtype(func, x.dtype, dt)
    mdt = mean_dtype(x.dtype, dt)
    K = math.prod(x.shape[d] for d in axes)
    if K - ddof <= 0:
        warn("Degrees of freedom <= 0 for slice")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy warns once, as above
        m = reduce("mean", x, axes, mdt, None, True)
    result = _target(out, out_shape(x.shape, axes, keepdims), rdt, func)
    launches, temp_bytes = run(("moment", func, x.dtype, mdt, rdt),
                               lambda no, nr: moment_kernel(func, x.dtype, mdt, rdt, no, nr),
                               [("array", x), ("outer", m._broadcast_to(x.shape))], x.shape, axes,
                               result, float(max(K - ddof, 0)), False)
    if fast_key is not None and launches and K - ddof > 0 and x is a:
        ctx = driver.context()
        replay = make_replay(launches, 2, result._shape, rdt, temp_bytes,   # x, the mean
                             keep=lambda compiled: ctx.remember(fast_key, (axes, mdt, compiled)))
        if replay is not None:
            ctx.remember(fast_key, (axes, mdt, replay))
    return _deliver(result, out)
