"""Adding and removing elements: ``resize``, ``trim_zeros``, ``delete``, ``insert``.

Index arguments (``obj``) given on the host are resolved on the host with NumPy's rules and
messages; the data moves on the GPU by slice copies of the runs of consecutive indices (a
few launches for the usual cases: one element, a slice, a handful of positions), or by one
gather/scatter when the positions are scattered. Index arguments on the GPU use GPU
indexing.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..core import args
from ..core.layout import _shape_str
from ..core.ndarray import ndarray
from ..core.runtime import memory

MAX_RUNS = 16     # more runs of consecutive positions than this: one gather/scatter instead


def resize(a, new_shape) -> ndarray:
    """A new array of ``new_shape`` filled with ``a``'s (flattened) elements, repeated
    cyclically as needed (numpy.resize); zeros when either is empty."""
    x = args.array(a, "resize")
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    new_size = 1
    for d in new_shape:
        new_size *= d
        if d < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    shape = tuple(int(d) for d in new_shape)
    out = ndarray((new_size,), x.dtype)
    if x.size == 0 or new_size == 0:
        memory.fill_bytes(out.data.ptr, 0, out.nbytes)
        return out.reshape(shape)
    flat = x.ravel()
    full, rest = divmod(new_size, x.size)
    if full:       # whole copies: one broadcast copy
        out[:full * x.size].reshape(full, x.size)[...] = flat._broadcast_to((full, x.size))
    if rest:
        out[full * x.size:] = flat[:rest]
    return out.reshape(shape)


def trim_zeros(filt, trim="fb", axis=None):
    """A view of ``filt`` without its leading ('f') and/or trailing ('b') zeros (numpy.trim_zeros;
    along every axis in ``axis``, all by default: the smallest box holding every nonzero)."""
    x = args.array(filt, "trim_zeros")
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(x.ndim)) if axis is None else args.axis_list(axis, x.ndim, "axis")
    if not axes:
        return filt
    if x.size == 0:        # no nonzero anywhere: NumPy's empty slice on each trimmed axis
        return x[tuple(slice(0, 0) if d in axes else slice(None) for d in range(x.ndim))]
    from .._logic.truth import any as any_
    from .._sorting.search import argmax
    from .joining import stack
    # per axis: the first and last index with a nonzero anywhere in its slab; one read back
    found = []
    for d in range(x.ndim):
        others = tuple(o for o in range(x.ndim) if o != d)
        m = any_(x, axis=others) if others else (x != 0)
        found += [argmax(m), argmax(m[::-1])]
    nonzero = any_(x)
    values = stack([v.astype(np.int64) for v in found] + [nonzero.astype(np.int64)]).get()
    if not values[-1]:
        start = stop = [0] * x.ndim
    else:
        start = [int(values[2 * d]) for d in range(x.ndim)]
        stop = [x.shape[d] - int(values[2 * d + 1]) for d in range(x.ndim)]
        if "f" not in trim:
            start = [None] * x.ndim
        if "b" not in trim:
            stop = [None] * x.ndim
    return x[tuple(slice(start[d], stop[d]) if d in axes else slice(None) for d in range(x.ndim))]


def _runs(dst_idx, src_idx):
    """Runs ``(dst_start, src_start, length)`` in which both index lists go up by one."""
    runs = []
    for d, s in zip(dst_idx.tolist(), src_idx.tolist()):
        if runs and runs[-1][0] + runs[-1][2] == d and runs[-1][1] + runs[-1][2] == s:
            runs[-1][2] += 1
        else:
            runs.append([d, s, 1])
    return runs


def _move(dst, dst_idx, src, src_idx, axis: int) -> None:
    """``dst[..., dst_idx, ...] = src[..., src_idx, ...]`` along ``axis`` for host index
    arrays: slice copies of the runs, or one gather and scatter when there are many."""
    lead = (slice(None),) * axis
    runs = _runs(dst_idx, src_idx)
    if len(runs) <= MAX_RUNS:
        for d, s, n in runs:
            dst[lead + (slice(d, d + n),)] = src[lead + (slice(s, s + n),)]
        return
    from .._creation.from_data import upload
    dst[lead + (upload(np.asarray(dst_idx, np.intp)),)] = \
        src[lead + (upload(np.asarray(src_idx, np.intp)),)]


def _prepare(arr, axis, func):
    x = args.array(arr, func)
    order = "F" if x.ndim > 1 and x.flags.f_contiguous and not x.flags.c_contiguous else "C"
    if axis is None:
        x = x.ravel() if x.ndim != 1 else x
        axis = x.ndim - 1
    else:
        axis = normalize_axis_index(axis, x.ndim)
    return x, axis, order


def delete(arr, obj, axis=None) -> ndarray:
    """A new array without the sub-arrays at ``obj`` (an int, a slice, a sequence of ints or a
    boolean mask) along ``axis`` (numpy.delete; ``axis=None`` flattens)."""
    x, axis, order = _prepare(arr, axis, "delete")
    n = x.shape[axis]
    g = args.as_gpu(obj, "obj") if not isinstance(obj, (slice, np.ndarray)) else None
    if g is not None:       # the mask of what stays, built and applied on the GPU
        from .._creation.basic import ones
        if g.dtype == np.bool_:
            if g.shape != (n,):
                raise ValueError("boolean array argument obj to delete must be one dimensional "
                                 f"and match the axis length of {n}")
            keep = ~g
        else:
            keep = ones(n, dtype=bool)
            keep[g,] = False
        return x[(slice(None),) * axis + (keep,)]
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        if obj < -n or obj >= n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
    keep = np.delete(np.arange(n), obj)     # NumPy's own rules and messages, on positions
    shape = list(x.shape)
    shape[axis] = keep.size
    out = ndarray(tuple(shape), x.dtype, order=order)
    if out.size:
        _move(out, np.arange(keep.size), x, keep, axis)
    return out


def insert(arr, obj, values, axis=None) -> ndarray:
    """A new array with ``values`` inserted before the positions ``obj`` (an int, a slice or a
    sequence of ints) along ``axis`` (numpy.insert; ``axis=None`` flattens)."""
    x, axis, order = _prepare(arr, axis, "insert")
    n = x.shape[axis]
    if not isinstance(obj, (slice, np.ndarray)) and args.as_gpu(obj, "obj") is not None:
        raise TypeError("insert: obj must be host data (an int, a slice or a sequence); the "
                        "positions decide the result's shape")
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n), dtype=np.intp)
    else:
        indices = np.array(obj)
        if indices.dtype == bool:
            if indices.ndim != 1:
                raise ValueError("boolean array argument obj to insert must be one dimensional")
            indices = np.flatnonzero(indices)
        elif indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or "
                             "scalar")
    lead = (slice(None),) * axis
    if indices.size == 1:
        index = indices.item()
        if index < -n or index > n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
        if index < 0:
            index += n
        vals = _values(values, x)
        if indices.ndim == 0:       # a[:, 0] = v broadcasts differently: as a[:, 0:1]
            vals = vals.transpose(_move_first_to(axis, vals.ndim))
        numnew = vals.shape[axis]
        shape = list(x.shape)
        shape[axis] += numnew
        out = ndarray(tuple(shape), x.dtype, order=order)
        out[lead + (slice(None, index),)] = x[lead + (slice(None, index),)]
        out[lead + (slice(index, index + numnew),)] = vals
        out[lead + (slice(index + numnew, None),)] = x[lead + (slice(index, None),)]
        return out
    if indices.size == 0 and not isinstance(obj, np.ndarray):
        indices = indices.astype(np.intp)
    # NumPy's own positions (and its errors): np.insert on the positions
    positions = np.insert(np.arange(n), indices, -1)
    indices = indices.astype(np.intp)
    indices[indices < 0] += n
    order_ = indices.argsort(kind="mergesort")
    targets = np.empty_like(indices)
    targets[order_] = indices[order_] + np.arange(indices.size)
    shape = list(x.shape)
    shape[axis] += indices.size
    out = ndarray(tuple(shape), x.dtype, order=order)
    if out.size == 0:
        return out
    vals = _values(values, x)
    vshape = list(shape)
    vshape[axis] = indices.size
    vals = _broadcast(vals, tuple(vshape), x.ndim)
    _move(out, targets, vals, np.arange(indices.size), axis)
    _move(out, np.flatnonzero(positions >= 0), x, np.arange(n), axis)
    return out


def _values(values, x):
    """``numpy.array(values, copy=None, ndmin=x.ndim, dtype=x.dtype)`` on the GPU."""
    g = args.as_gpu(values, "insert's values")
    if g is None:
        from .._creation.from_data import upload
        g = upload(np.array(values, dtype=x.dtype, ndmin=x.ndim))
    elif g.dtype != x.dtype:
        g = g.astype(x.dtype)
    while g.ndim < x.ndim:
        g = g[None]
    return g


def _broadcast(vals, shape, nd):
    try:
        return vals._broadcast_to(shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {_shape_str(vals.shape)} could "
                         f"not be broadcast to indexing result of shape {_shape_str(shape)}") from None


def _move_first_to(axis, nd):
    perm = list(range(1, nd))
    perm.insert(axis, 0)
    return perm
