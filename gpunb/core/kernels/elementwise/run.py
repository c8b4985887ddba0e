"""Elementwise launches, run: classify the operands, load the kernel of the layout class
(:mod:`..loader`), plan (:mod:`.plan`) and execute; and assignment (``dst[...] = value``),
which is an elementwise copy unless a transposing copy suits it better.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ... import args, layout
from ...runtime import driver, fastcall
from .. import loader
from ..execute import execute, operand_params, replay
from ..transpose.run import try_copy
from . import codegen as cg
from . import ir as eir
from .plan import classify, pieces, plan

# launch()'s step for a call run as several vector launches (:func:`.plan.pieces`): nothing
# to keep and replay, as a call that is planned again each time
PIECES = "pieces"


def launch(key, make, operands, is_array, results, shape):
    """Launch an elementwise kernel over ``shape``. ``operands`` are gpunb arrays (where
    ``is_array``) or scalar values of the operand's dtype; ``results`` arrays of ``shape``;
    ``make(kinds, layout, ndim)`` builds the kernel of a layout class and ``key`` names it.
    Returns the loaded kernel and the :class:`~gpunb.core.kernels.execute.Step` launched
    (None for an empty shape, :data:`PIECES` for a call too large for one vector launch)."""
    kinds, lay, nd = classify(shape, [(v._shape, v._strides, v._dtype.itemsize) if arr else None
                                      for v, arr in zip(operands, is_array)],
                              [(r._strides, r._dtype.itemsize) for r in results])
    values = [v._broadcast_to(shape) if k == "array" and v._shape != shape else v
              for v, k in zip(operands, kinds)]
    lk = loader.get(cg, key + (kinds, tuple(r.dtype for r in results), lay, nd),
                    lambda: make(kinds, lay, nd))
    parts = pieces(lk, values, results, shape)
    if parts is not None:
        base = operand_params(lk.kernel, values) + [ctypes.c_void_p(r._data.ptr) for r in results]
        moved = [(i, v._data.ptr, v._dtype.itemsize)
                 for i, (o, v) in enumerate(zip(lk.kernel.operands, values)) if o.kind == "array"]
        moved += [(len(values) + j, r._data.ptr, r._dtype.itemsize) for j, r in enumerate(results)]
        for start, step in parts:
            params = list(base)
            for i, ptr, itemsize in moved:
                params[i] = ctypes.c_void_p(ptr + start * itemsize)
            execute((step,), params)
        return lk, PIECES
    step = plan(lk, values, results, shape)
    if step is not None:
        execute((step,), operand_params(lk.kernel, values)
                + [ctypes.c_void_p(r.data.ptr) for r in results])
    return lk, step


def assign(dst, value) -> None:
    """``dst[...] = value`` with broadcasting and NumPy's unsafe assignment casting."""
    src = args.as_gpu(value, "the assigned value")
    if src is None:
        if isinstance(value, np.ndarray):       # 0-d: as_gpu refused the others
            value = value[()]
        args.scalar_type(value, "the assigned value")
        dt = dst.dtype
        v = dt.type(value) if not isinstance(value, complex) or dt.kind == "c" else dt.type(value.real)
        fill(dst, v)
        return
    if src.shape != dst.shape:
        try:
            src = src._broadcast_to(dst.shape)
        except ValueError:
            raise ValueError(f"could not broadcast input array from shape {src.shape} into shape "
                             f"{dst.shape}") from None
    if overlaps(src, dst):
        src = src.copy()
    copy(src, dst)


_F16, _U16 = np.dtype("float16"), np.dtype("uint16")
_TRANSPOSE = "transpose"     # a prepared copy's marker: the tiled transposing kernel takes it


def fill(dst, v) -> None:
    """``dst[...] = v`` for a scalar ``v`` of ``dst``'s dtype: planned once per layout, as
    :func:`copy`."""
    if dst._size == 0:
        return
    ctx = driver.active or driver.context()
    key = ("fill", dst._dtype, dst._shape, dst._strides, dst._data.ptr & 15)
    prepared = ctx.prepared.get(key)
    if prepared is None:
        dt = dst._dtype
        lk, step = launch(("fill", dt.name), lambda kinds, lay, nd: eir.copy_kernel(dt, dt, "scalar", lay, nd),
                          [v], [False], [dst], dst.shape)
        if step is not PIECES:
            ctx.remember(key, (lk.kernel, step))
        return
    kernel, step = prepared
    execute((step,), operand_params(kernel, [v]) + [ctypes.c_void_p(dst._data.ptr)])


def copy(src, dst) -> None:
    """``dst[...] = src`` for ``src`` already broadcast to ``dst``'s shape and not overlapping
    it. Same dtype and both C-contiguous: the driver's copy. Otherwise the copy's launch is
    planned once per (dtypes, shape, strides, alignment) on each device and replayed: the
    joining, tiling and padding functions make many small copies of the same layouts."""
    if dst._size == 0:
        return
    if src._dtype == dst._dtype == _F16:
        # the stored bits, as NumPy copies them (half computes in float: a NaN's payload
        # would not survive the round trip)
        src, dst = src._derive(src._shape, src._strides, 0, _U16), dst._derive(dst._shape, dst._strides, 0, _U16)
    if src._dtype == dst._dtype and src._c_contiguous and dst._c_contiguous:
        fastcall.copy(dst._data.ptr, src._data.ptr, dst._size * dst._dtype.itemsize,
                      driver.stream_handle())
        return
    ctx = driver.active or driver.context()
    key = ("assign", src._dtype, dst._dtype, dst._shape, src._strides, dst._strides,
           src._data.ptr & 15, dst._data.ptr & 15)
    step = ctx.prepared.get(key)
    if step is None:
        if try_copy(src, dst):      # a tiled kernel when the copy transposes
            step = _TRANSPOSE
        else:
            _, step = launch(("copy", src.dtype.name, dst.dtype.name),
                             lambda kinds, lay, nd: eir.copy_kernel(src.dtype, dst.dtype, kinds[0], lay, nd),
                             [src], [True], [dst], dst.shape)
        if step is not PIECES:
            ctx.remember(key, step)
        return
    if step is _TRANSPOSE:
        try_copy(src, dst)
        return
    replay(("assign:replay",) + key[1:], lambda: (step,), (src._data.ptr, dst._data.ptr))


def overlaps(a, b) -> bool:
    """Whether two views may share memory, except when they are the same view (an
    elementwise copy is safe in place)."""
    if a.data.owner is not b.data.owner or a.size == 0 or b.size == 0:
        return False
    if a.data.ptr == b.data.ptr and a.strides == b.strides and a.shape == b.shape:
        return False
    return layout.may_share_memory(layout.byte_extent(a.shape, a.strides, a.itemsize), a.data.ptr,
                                   layout.byte_extent(b.shape, b.strides, b.itemsize), b.data.ptr)
