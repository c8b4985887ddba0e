"""``apply_along_axis``: a Python function applied to every 1-D slice (NumPy's loop: one
call per slice, the results written into one GPU array)."""

from __future__ import annotations

import numpy as np

from ..core import args


def apply_along_axis(func1d, axis, arr, *a, **kwargs):
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (numpy.apply_along_axis):
    the results' axes take ``axis``' place. A Python call per slice: for many small slices a
    vectorized expression is much faster."""
    from .._creation.from_data import asarray
    from ..core.ndarray import ndarray

    x = args.array(arr, "apply_along_axis")
    nd = x.ndim
    axis = args.axis(axis, nd)
    view = x.transpose([d for d in range(nd) if d != axis] + [axis])
    inds = iter(np.ndindex(view.shape[:-1]))
    try:
        first = next(inds)
    except StopIteration:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0") from None
    res = asarray(func1d(view[first], *a, **kwargs))
    buff = ndarray._empty(view.shape[:-1] + res.shape, res.dtype)
    buff[first] = res
    for ind in inds:
        buff[ind] = asarray(func1d(view[ind], *a, **kwargs))
    dims = list(range(buff.ndim))
    return buff.transpose(dims[:axis] + dims[buff.ndim - res.ndim:] + dims[axis:buff.ndim - res.ndim])


def _apply_over_axes(xp, func, a, axes):
    val = xp.asarray(a)
    n = val.ndim
    for axis in ((axes,) if np.ndim(axes) == 0 else axes):
        axis = axis + n if axis < 0 else axis
        res = func(val, axis)
        if res.ndim != val.ndim:
            res = xp.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied over each of ``axes`` in turn, keeping the dimensions
    (numpy.apply_over_axes)."""
    import gpunb

    return _apply_over_axes(gpunb, func, a, axes)
