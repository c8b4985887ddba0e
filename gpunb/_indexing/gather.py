"""Gathering and scattering routines (NumPy's "Indexing routines"): ``take``,
``take_along_axis``, ``put``, ``put_along_axis``, ``place``, ``choose``, ``compress``,
``extract``, ``select``. Each is one gather or scatter kernel
(:mod:`gpunb.core.kernels.indexing`), plus a stream compaction where a boolean condition
decides the result's size.

Index data given on the host (a list, a NumPy array) is small by nature: it is checked there
with NumPy's messages and uploaded. Out-of-bounds GPU indices with ``mode='raise'`` are
reported at the next synchronization (see :mod:`gpunb._indexing.advanced`).
"""

from __future__ import annotations

import numpy as np

from ..core import args, layout
from ..core.kernels.elementwise.run import assign
from ..core.kernels.indexing import run as irun
from ..core.kernels.indexing.resolve import gpu_or_none, check_mode, index_array
from ..core.ndarray import ndarray


def _out(out, shape, dtype, name):
    out = args.out_array(out, name)
    if out is not None and out.shape != tuple(shape):
        raise ValueError(f"output array does not match result of ndarray.{name}")
    return out


def _gather(a, idx, axis, out, mode):
    """``a`` gathered along ``axis`` by the GPU integer array ``idx``: the result has shape
    ``a.shape[:axis] + idx.shape + a.shape[axis + 1:]``."""
    shape = a.shape[:axis] + idx.shape + a.shape[axis + 1:]
    res = out if out is not None and out.dtype == a.dtype else ndarray._empty(shape, a.dtype)
    k = idx.ndim
    space_a = a.strides[:axis] + (0,) * k + a.strides[axis + 1:]
    t = (0,) * axis + idx.strides + (0,) * (a.ndim - axis - 1)
    if 0 in shape:
        pass
    elif a.shape[axis] == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    else:
        irun.launch("gather", a, res, [(idx, irun.Index(t, a.shape[axis], a.strides[axis], axis, mode))],
                    shape, space_a, res.strides)
    if out is not None and res is not out:
        assign(out, res)
        return out
    return res


def take(a, indices, axis=None, out=None, mode="raise"):
    """Take elements from an array along an axis, as :func:`numpy.take`.

    ``indices`` may be a GPU array, a list or a NumPy array (uploaded). ``mode='raise'``: host
    indices out of bounds raise at once; GPU ones are checked on the GPU and raise
    ``IndexError`` at the next synchronization (``gpunb.synchronize()``, ``.get()``...).
    Returns a 0-d GPU array for a scalar index where NumPy returns a scalar.
    """
    a = args.array(a, "take")
    mode = check_mode(mode)
    if axis is None:
        a = a if a.ndim == 1 else a.reshape(-1)
        axis = 0
    else:
        axis = layout.normalize_axis(axis, a.ndim)
    idx = index_array(indices, a.shape[axis], axis, mode)
    out = _out(out, a.shape[:axis] + idx.shape + a.shape[axis + 1:], a.dtype, "take")
    return _gather(a, idx, axis, out, mode)


def take_along_axis(arr, indices, axis=-1):
    """Take values from the input array by matching 1-d index and data slices, as
    :func:`numpy.take_along_axis` (``arr`` and ``indices`` broadcast on the other axes)."""
    arr = args.array(arr, "take_along_axis")
    idx, arr, axis = _along(arr, indices, axis)
    shape, a_str, t = _along_space(arr, idx, axis)
    out = ndarray._empty(shape, arr.dtype)
    if 0 not in shape:
        if arr.shape[axis] == 0:
            raise IndexError(f"index 0 is out of bounds for axis {axis} with size 0")
        irun.launch("gather", arr, out, [(idx, irun.Index(t, arr.shape[axis], arr.strides[axis], axis))],
                    shape, a_str, out.strides)
    return out


def _along(arr, indices, axis):
    if axis is None:
        if getattr(indices, "ndim", np.ndim(indices)) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.reshape(-1), 0
    else:
        axis = layout.normalize_axis(axis, arr.ndim)
    g = gpu_or_none(indices)
    if g is None:
        h = np.asarray(indices)
        if h.dtype.kind not in "iu":
            raise IndexError("`indices` must be an integer array")
        if h.ndim != arr.ndim:
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        from ..core.kernels.indexing.resolve import check_bounds, upload
        check_bounds(h, arr.shape[axis], axis)
        g = upload(h)
    elif g.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if g.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return g, arr, axis


def _along_space(arr, idx, axis):
    """The broadcast space of ``arr`` and ``idx`` with ``idx``'s extent along ``axis``, and
    both operands' strides over it (``arr``'s 0 along ``axis``: the index selects there)."""
    ash = list(arr.shape)
    ash[axis] = 1
    try:
        shape = layout.broadcast_shapes(tuple(ash), idx.shape)
    except ValueError:
        raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape.  Mismatch "
                         f"is between arg 0 with shape {arr.shape} and arg 1 with shape {idx.shape}.") from None
    a_str = list(layout.broadcast_to(tuple(ash), arr.strides, shape))
    a_str[axis] = 0
    return shape, tuple(a_str), layout.broadcast_to(idx.shape, idx.strides, shape)


def put_along_axis(arr, indices, values, axis):
    """Put values into the destination array by matching 1-d index and data slices, as
    :func:`numpy.put_along_axis` (which value lands at a repeated index is unspecified)."""
    arr = args.array(arr, "put_along_axis")
    target = arr
    if axis is None and not arr._c_contiguous:
        target = arr.copy()
    idx, flat, ax = _along(target, indices, axis)
    shape, a_str, t = _along_space(flat, idx, ax)
    ix = [(idx, irun.Index(t, flat.shape[ax], flat.strides[ax], ax))]
    _scatter_values(flat, ix, shape, a_str, values)
    if target is not arr:
        assign(arr, target)


def _scatter_values(a, ix, shape, a_str, values):
    """Scatter ``values`` (a GPU array broadcast to ``shape``, or a scalar) through ``ix``."""
    v = args.as_gpu(values, "values")
    if v is None:
        from ..core.kernels.indexing.resolve import _scalar
        args.scalar_type(values, "values")
        irun.launch("fill", a, None, ix, shape, a_str, (0,) * len(shape), value=_scalar(values, a.dtype))
        return
    from ..core.kernels.elementwise.run import overlaps
    if overlaps(v, a):
        v = v.copy()
    irun.launch("scatter", a, v, ix, shape, a_str, layout.broadcast_to(v.shape, v.strides, shape))


def _flat_target(a):
    """A flat C-order view of ``a`` to scatter into, and whether it is a copy to write back."""
    return (a.reshape(-1), False) if a._c_contiguous else (a.copy().reshape(-1), True)


def _cyclic(v, n):
    """``v`` flattened and repeated to ``n`` values (NumPy's put/place rule)."""
    v = v.reshape(-1)
    if v.size == n:
        return v
    from ..core.kernels.indexing.resolve import upload
    return take(v, upload(np.arange(n, dtype=np.int64)), mode="wrap")


def put(a, ind, v, mode="raise"):
    """Replaces specified elements of an array with given values, as :func:`numpy.put`
    (``a.flat[ind] = v``, ``v`` repeated as needed). Which value lands at a repeated index is
    unspecified."""
    a = args.array(a, "put")
    mode = check_mode(mode)
    if a.size == 0:
        if np.size(ind) if gpu_or_none(ind) is None else gpu_or_none(ind).size:
            raise IndexError("cannot replace elements of an empty array")
        return
    idx = index_array(ind, a.size, 0, mode)
    flat, copied = _flat_target(a)
    vg = args.as_gpu(v, "v")
    if vg is not None and idx.size:
        if vg.size == 0:
            return
        vg = _cyclic(vg, idx.size).reshape(idx.shape)
    ix = [(idx, irun.Index(idx.strides, flat.size, flat.strides[0], 0, mode))]
    _scatter_values(flat, ix, idx.shape, (0,) * idx.ndim, vg if vg is not None else v)
    if copied:
        assign(a, flat.reshape(a.shape))


def place(arr, mask, vals):
    """Change elements of an array based on conditional and input values, as
    :func:`numpy.place`: the true positions of ``mask`` get ``vals`` in order, repeated."""
    arr = args.array(arr, "place")
    m = gpu_or_none(mask)
    if m is None:
        from ..core.kernels.indexing.resolve import upload
        m = upload(np.asarray(mask))
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    from ..core.kernels.scan.run import nonzero_flat
    pos = nonzero_flat(m)
    vg = args.as_gpu(vals, "vals")
    if vg is None:
        h = np.asarray(vals)
        if h.size == 0:
            vg = None
        elif h.ndim == 0:
            vg = h[()]
        else:
            raise TypeError("vals is a NumPy array in host memory; move it to the GPU with "
                            "gpunb.asarray() first (gpunb never copies behind your back)")
    n = pos.size
    if n == 0:
        return
    if vg is None or (isinstance(vg, ndarray) and vg.size == 0):
        raise ValueError("Cannot insert from an empty array!")
    flat, copied = _flat_target(arr)
    if isinstance(vg, ndarray):
        vg = _cyclic(vg, n)
    ix = [(pos, irun.Index(pos.strides, flat.size, flat.strides[0], 0))]
    _scatter_values(flat, ix, (n,), (0,), vg)
    if copied:
        assign(arr, flat.reshape(arr.shape))


def choose(a, choices, out=None, mode="raise"):
    """Construct an array from an index array and a list of arrays to choose from, as
    :func:`numpy.choose` (``a`` and every choice broadcast together). Host ``a`` out of range
    raises NumPy's ValueError; a GPU ``a`` with ``mode='raise'`` is checked on the GPU (a
    negative entry counts from the end there, and one out of range raises IndexError at the
    next synchronization)."""
    mode = check_mode(mode)
    g = gpu_or_none(a)
    if g is None:
        from ..core.kernels.indexing.resolve import upload
        h = np.asarray(a)
        if not np.can_cast(h.dtype, np.intp, "safe"):
            raise TypeError(f"Cannot cast array data from {h.dtype!r} to dtype('int64') according "
                            "to the rule 'safe'")
        if mode == "raise" and h.size and (h.min() < 0 or h.max() >= len(choices)):
            raise ValueError("invalid entry in choice array")
        g = upload(h.astype(np.intp))
    elif g.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {g.dtype!r} to dtype('int64') according to "
                        "the rule 'safe'")
    cs = [args.array(c, "choose") for c in choices]
    if not cs:
        raise ValueError("0-length sequence.")
    shapes = [g.shape] + [c.shape for c in cs]
    try:
        shape = layout.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("shape mismatch: objects cannot be broadcast to a single shape.") from None
    dt = np.result_type(*[c.dtype for c in cs])
    from .._manipulation.joining import stack
    stacked = stack([c._broadcast_to(shape) for c in cs]) if len(cs) > 1 or cs[0].dtype != dt \
        else cs[0]._broadcast_to(shape)[None]
    if stacked.dtype != dt:
        stacked = stacked.astype(dt)
    res = ndarray._empty(shape, dt)
    gi = g if g.dtype.kind != "b" else g.astype(np.int64)
    if 0 not in shape:
        ix = [(gi, irun.Index(layout.broadcast_to(gi.shape, gi.strides, shape), len(cs),
                              stacked.strides[0], 0, mode))]
        irun.launch("gather", stacked, res, ix, shape, stacked.strides[1:], res.strides)
    if out is not None:
        out = args.out_array(out, "choose")
        assign(out, res)
        return out
    return res


def compress(condition, a, axis=None, out=None):
    """Return selected slices of an array along given axis, as :func:`numpy.compress`."""
    a = args.array(a, "compress")
    c = gpu_or_none(condition)
    if c is None:
        h = np.asarray(condition)
        if h.ndim != 1:
            raise ValueError("condition must be a 1-d array")
        pos = np.flatnonzero(h)
    else:
        if c.ndim != 1:
            raise ValueError("condition must be a 1-d array")
        from ..core.kernels.scan.run import nonzero_flat
        pos = nonzero_flat(c)
    return take(a, pos, axis=axis, out=out)


def compress_method(self, condition, axis=None, out=None):
    """``a.compress(condition, axis=None, out=None)``: :func:`compress` with the array first."""
    return compress(condition, self, axis, out)


def extract(condition, arr):
    """Return the elements of an array that satisfy some condition, as :func:`numpy.extract`
    (``arr.ravel()[nonzero(condition.ravel())]``)."""
    arr = args.array(arr, "extract")
    c = gpu_or_none(condition)
    if c is None:
        pos = np.flatnonzero(np.asarray(condition))
    else:
        from ..core.kernels.scan.run import nonzero_flat
        pos = nonzero_flat(c)
    return take(arr.reshape(-1), pos)


def select(condlist, choicelist, default=0):
    """Return an array drawn from elements in choicelist, depending on conditions, as
    :func:`numpy.select` (the first condition that holds picks)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [args.array(c, "select") if not isinstance(c, (bool, np.bool_)) else c for c in condlist]
    for i, c in enumerate(conds):
        if getattr(c, "dtype", np.dtype(bool)) != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [args.as_gpu(c, "choice") if args.as_gpu(c, "choice") is not None else c for c in choicelist]
    dt = np.result_type(*[c.dtype if isinstance(c, ndarray) else c for c in choices], default)
    shapes = [getattr(x, "shape", ()) for x in conds + choices]
    shape = layout.broadcast_shapes(*shapes)
    from ..core.ufunc import ufunc
    where = ufunc("where")
    res = ndarray._empty(shape, dt)
    assign(res, default)
    for c, ch in zip(conds[::-1], choices[::-1]):
        if isinstance(ch, ndarray) and ch.dtype != dt:
            ch = ch.astype(dt)
        elif not isinstance(ch, ndarray):
            ch = dt.type(ch)
        where(c, ch, res, out=res)
    return res
