"""Changing the number of dimensions: ``squeeze``, ``expand_dims``, ``broadcast_to``,
``broadcast_arrays``, ``atleast_1d/2d/3d`` (views) and ``broadcast_shapes``."""

from __future__ import annotations

import numpy as np

from ..core import args, layout


def squeeze(a, axis=None):
    """Length-one axes removed: a view (numpy.squeeze)."""
    return args.array(a, "squeeze").squeeze(axis)


def expand_dims(a, axis):
    """Length-one axes inserted at ``axis``: a view (numpy.expand_dims)."""
    x = args.array(a, "expand_dims")
    return x._derive(*layout.expand_dims(x.shape, x.strides, axis))


def broadcast_to(array, shape):
    """A view of ``array`` broadcast to ``shape`` (numpy.broadcast_to); its elements repeat,
    so write to it only through a copy."""
    return args.array(array, "broadcast_to")._broadcast_to(shape)


def _at_least(func, arrays, nd, place):
    out = []
    for a in arrays:
        x = args.array(a, func)
        if x.ndim < nd:
            x = x.reshape(place(x))
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Views with at least one dimension (numpy.atleast_1d): one array, or a tuple of them."""
    return _at_least("atleast_1d", arys, 1, lambda x: (1,))


def atleast_2d(*arys):
    """Views with at least two dimensions, a 1-d array as a row (numpy.atleast_2d)."""
    return _at_least("atleast_2d", arys, 2, lambda x: (1, x.size))


def atleast_3d(*arys):
    """Views with at least three dimensions (numpy.atleast_3d): a 1-d array of N as
    (1, N, 1), a 2-d array of (M, N) as (M, N, 1)."""
    return _at_least("atleast_3d", arys, 3, lambda x: (1, x.size, 1) if x.ndim < 2 else x.shape + (1,))


def broadcast_arrays(*arrays, subok=False):
    """Views of the arrays broadcast to their common shape (numpy.broadcast_arrays): a tuple."""
    xs = [args.array(a, "broadcast_arrays") for a in arrays]
    shape = np.broadcast_shapes(*[x.shape for x in xs])
    return tuple(x if x.shape == shape else x._broadcast_to(shape) for x in xs)


broadcast_shapes = np.broadcast_shapes     # pure shape arithmetic: NumPy's own, its errors
