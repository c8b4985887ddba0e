"""The engine of :mod:`gpunb.fft`: how cuFFT sees a transform (plan layouts: stride,
distance, embeds, batch; a loop of execs for a middle run; a copy that casts, crops, pads or
moves the axes to the end otherwise) and the transform itself, through :mod:`.plans`.

:func:`_layout` is pure and memoized per call shape; :func:`_transform` is the one path every
function of :mod:`.transforms` takes to cuFFT.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import layout, memo
from ..core.kernels.elementwise.run import assign
from ..core.ndarray import ndarray
from ..core.runtime import driver, mathlibs
from . import plans as _plans

_cache = _plans.cache
_TYPES = _plans.TYPES
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _resized(x: ndarray, shape: tuple, dt, perm=None) -> ndarray:
    """A new C-contiguous array of ``shape`` and ``dt`` (axes in ``perm`` order when given:
    the result's axis i is ``x``'s axis ``perm[i]``) holding ``x`` cropped or zero-padded."""
    if perm is None:
        new = ndarray._empty(shape, dt)
        view = new
    else:
        new = ndarray._empty(tuple(shape[p] for p in perm), dt)
        view = new.transpose(_inverse(perm))
    common = tuple(min(a, b) for a, b in zip(x._shape, shape))
    if common != shape:
        assign(view, 0)
        if 0 in common:
            return new
        view = view._derive(common, view._strides)
    src = x if common == x._shape else x._derive(common, x._strides)
    assign(view, src)
    return new


def _run_layout(shape, axes):
    """(leading, batch, stride, dist, embed) of the consecutive run ``axes`` of a
    C-contiguous array of ``shape``: trailing axes (the batch is the outer axes, distance the
    run's size) or leading ones (the batch is the inner axes, stride their size, distance 1);
    None for a run in the middle."""
    a0, a1 = axes[0], axes[-1]
    if a1 == len(shape) - 1:
        embed = shape[a0:]
        return False, math.prod(shape[:a0]), 1, math.prod(embed), embed
    if a0 == 0:
        inner = math.prod(shape[a1 + 1:])
        return True, inner, inner, 1, shape[:a1 + 1]
    return None


def _inverse(perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def _layout(xshape: tuple, axes: tuple, ns: tuple, kind: str):
    """How cuFFT sees a transform of ``kind`` over ``axes`` (lengths ``ns``) of an array of
    ``xshape``; pure, memoized per call shape. Returns (the input shape cuFFT reads, in
    ``xshape``'s order; the result's shape in memory; perm (None, or the axis order of the
    copy that moves the axes to the end); its inverse; the plan's layout (n, inembed,
    istride, idist, onembed, ostride, odist, batch); the halved axis in memory)."""
    shape = list(xshape)
    for ax, n in zip(axes, ns):
        shape[ax] = n
    out_shape = list(shape)
    if kind == "r2c":
        out_shape[axes[-1]] = ns[-1] // 2 + 1
    elif kind == "c2r":
        shape[axes[-1]] = ns[-1] // 2 + 1
    shape, out_shape = tuple(shape), tuple(out_shape)
    nd = len(shape)
    run = tuple(sorted(axes)) if kind == "c2c" else tuple(axes)
    lay = loop = None
    if all(run[i + 1] == run[i] + 1 for i in range(len(run) - 1)):
        lay = _run_layout(shape, run)
        outer = math.prod(shape[:run[0]])
        if lay is None and outer <= LOOP_MAX:
            # a run in the middle, few outer blocks: one exec per block, each block's run
            # leading (cheaper than a transposing copy there and back)
            lay = _run_layout(shape[run[0]:], tuple(a - run[0] for a in run))
            loop = (outer, math.prod(shape[run[0]:]), math.prod(out_shape[run[0]:]))
    perm = inverse = None
    mshape = shape
    if lay is None:    # move the axes to the end, in order (the halved one innermost)
        perm = tuple(i for i in range(nd) if i not in axes) + tuple(axes)
        inverse = tuple(_inverse(perm))
        mshape = tuple(shape[p] for p in perm)
        out_shape = tuple(out_shape[p] for p in perm)
        run = tuple(range(nd - len(axes), nd))
        lay = _run_layout(mshape, run)
        n = tuple(ns)
    else:
        logical = dict(zip(axes, ns))
        n = tuple(logical[a] for a in run)
    leading, batch, stride, idist, inembed = lay
    if leading:
        onembed, ostride, odist = out_shape[(run[0] if loop else 0):run[-1] + 1], stride, 1
    else:
        onembed = out_shape[run[0]:]
        ostride, odist = 1, math.prod(onembed)
    return (shape, out_shape, perm, inverse,
            (n, inembed, stride, idist, onembed, ostride, odist, batch), run[-1], loop)


_LAYOUTS = memo.table("fft layouts")
LOOP_MAX = 8        # outer blocks of a middle run done by a loop of execs rather than a copy


def _transform(x: ndarray, axes: tuple, ns: tuple, kind: str, dt, forward: bool,
               own: bool) -> ndarray:
    """One cuFFT transform of ``kind`` ('c2c', 'r2c', 'c2r') over the distinct ``axes`` (at
    most 3; for r2c/c2r ``axes[-1]`` is the halved one) of logical lengths ``ns``; ``dt`` the
    input dtype cuFFT takes (complex64/128, or float32/64 for r2c); ``own``: ``x`` is a
    temporary that c2r may destroy. Returns the result, C-contiguous or a transposed view."""
    nd = len(x._shape)
    if nd > 1 and not x._c_contiguous and layout.is_f_contiguous(x._shape, x._strides,
                                                                   x._dtype.itemsize):
        # Fortran order: the C-ordered reversed view, so cuFFT reads it in place (and the
        # result comes back in Fortran order, as NumPy's empty_like gives it)
        rev = tuple(range(nd - 1, -1, -1))
        res = _transform(x.transpose(rev), tuple(nd - 1 - a for a in axes), ns, kind, dt,
                         forward, own)
        return res.transpose(rev)
    lkey = (x._shape, axes, ns, kind)
    lay = _LAYOUTS.get(lkey)
    if lay is None:
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        lay = _LAYOUTS[lkey] = _layout(x._shape, axes, ns, kind)
    shape, out_shape, perm, inverse, pkey, halved, loop = lay
    if loop is not None and (_block_bytes(loop[1], dt) % 16
                             or _block_bytes(loop[2], _out_dtype(kind, dt)) % 16):
        # cuFFT rejects blocks that do not start 16-byte aligned (CUFFT_INVALID_VALUE): move
        # the transformed axes last instead (one copy) and transform that
        rest = [d for d in range(nd) if d not in axes]
        order = rest + list(axes)
        res = _transform(x.transpose(order).copy(), tuple(range(len(rest), nd)), ns, kind, dt,
                         forward, True)
        return res.transpose(tuple(order.index(d) for d in range(nd)))
    if perm is not None or x._dtype != dt or x._shape != shape or not x._c_contiguous:
        x = _resized(x, shape, dt, perm)
        own = True
    double = dt.itemsize == (16 if dt.kind == "c" else 8)
    if kind == "c2r":
        if not own:     # cuFFT's C2R overwrites its input
            x = x.copy()
        _hermitian(x, halved, ns[-1])
        out = ndarray._empty(out_shape, _F64 if double else _F32)
    else:
        out = ndarray._empty(out_shape, _C128 if double else _C64)
    if out._size and x._size:
        ctx = driver.active or driver.context()
        key = (ctx.ordinal, driver.current_stream()[1], _TYPES[(kind, double)][0]) + pkey
        plan = _cache.lookup(key)
        kept = True
        if plan is None:
            plan, kept = _plans.make(key, double, kind)
        if loop is None:
            _execute(plan, x._data.ptr, out._data.ptr, forward, kept)
        else:
            outer, iblock, oblock = loop
            iblock *= x._dtype.itemsize
            oblock *= out._dtype.itemsize
            for o in range(outer):     # a plan out of the cache is closed after the last
                _execute(plan, x._data.ptr + o * iblock, out._data.ptr + o * oblock, forward,
                         kept or o < outer - 1)
    if perm is not None:
        out = out.transpose(inverse)
    return out


def _block_bytes(elements: int, dt) -> int:
    return elements * dt.itemsize


def _out_dtype(kind: str, dt):
    """The dtype cuFFT writes for a transform of ``kind`` reading ``dt``."""
    double = dt.itemsize == (16 if dt.kind == "c" else 8)
    if kind == "c2r":
        return _F64 if double else _F32
    return _C128 if double else _C64


def _execute(plan, iptr, optr, forward, kept):
    try:
        if plan.c2c:
            plan.run(plan.handle, iptr, optr, -1 if forward else 1)
        else:
            plan.run(plan.handle, iptr, optr)
    except Exception:
        with mathlibs.errors("cuFFT exec"):     # translates the status error
            raise
    if not kept:    # the cache is off: destroy the plan once its work is done
        driver.as_stream(None).sync()
        plan.close()


def _hermitian(x: ndarray, axis: int, n: int) -> None:
    """Zero the imaginary parts that a real signal's spectrum cannot have (the DC term and,
    for even ``n``, the Nyquist term) along ``axis``: NumPy's irfft ignores them, cuFFT's C2R
    would not (CuPy does the same)."""
    if x._size == 0:
        return
    half = x._dtype.itemsize // 2
    real = _F32 if half == 4 else _F64
    shape = x._shape[:axis] + x._shape[axis + 1:]
    strides = x._strides[:axis] + x._strides[axis + 1:]
    assign(x._derive(shape, strides, half, real), 0)
    if n % 2 == 0:
        assign(x._derive(shape, strides, (n // 2) * x._strides[axis] + half, real), 0)


def _scaled(res: ndarray, fct) -> ndarray:
    if fct is not None:
        from .._math.ufuncs import UFUNCS

        UFUNCS["multiply"](res, fct, out=res)
    return res
