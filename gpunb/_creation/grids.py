"""Coordinate grids: ``meshgrid`` (broadcast views of the inputs, copied unless asked not to)
and ``indices`` (each axis' index written into its slab by one broadcast copy)."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.ndarray import ndarray
from .from_data import upload


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors (numpy.meshgrid): a tuple of arrays, views
    of the (flattened) inputs when ``copy=False``."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [args.array(x, "meshgrid").ravel() for x in xi]
    nd = len(xs)
    shapes = [[1] * nd for _ in xs]
    for i, x in enumerate(xs):
        shapes[i][i] = x.size
    if indexing == "xy" and nd > 1:       # the first two axes swap places (Cartesian order)
        shapes[0][0], shapes[0][1] = 1, xs[0].size
        shapes[1][0], shapes[1][1] = xs[1].size, 1
    out = [x.reshape(tuple(s)) for x, s in zip(xs, shapes)]
    if not sparse:
        full = tuple(0 if min(s[d] for s in shapes) == 0 else max(s[d] for s in shapes)   # 0 wins
                     for d in range(nd))
        out = [x._broadcast_to(full) for x in out]
    if copy:
        out = [x.copy() for x in out]
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """An array (or with ``sparse``, a tuple of broadcastable arrays) holding the index of each
    position along each axis of a grid of shape ``dimensions`` (numpy.indices)."""
    dims = tuple(dimensions)
    dt = args.dtype(dtype, np.int64)
    n = len(dims)
    res = () if sparse else ndarray((n,) + dims, dt)
    for i, dim in enumerate(dims):
        shape = (1,) * i + (dim,) + (1,) * (n - i - 1)
        idx = upload(np.arange(dim, dtype=dt).reshape(shape))
        if sparse:
            res += (idx,)
        elif res.size:
            res[i] = idx
    return res


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function`` called on the index grids of ``shape`` (numpy.fromfunction): one GPU array
    of coordinates per axis, of ``dtype``."""
    return function(*indices(shape, dtype=dtype), **kwargs)
