"""Rearranging elements: ``flip``, ``fliplr``, ``flipud`` (views with negative strides) and
``roll`` (copies of at most two slices per rolled axis into a new array, NumPy's own
algorithm)."""

from __future__ import annotations

import itertools

import numpy as np

from ..core import args
from ..core.ndarray import ndarray


def flip(m, axis=None):
    """A view with the order of elements reversed along ``axis`` (all axes by default)
    (numpy.flip)."""
    x = args.array(m, "flip")
    axes = args.axes(axis, x.ndim)
    shape, strides, offset = x.shape, list(x.strides), 0
    for d in axes:
        if shape[d] > 1:
            offset += (shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    return x._derive(shape, tuple(strides), offset)


def fliplr(m):
    """Columns reversed: ``flip(m, axis=1)`` (numpy.fliplr), for 2 or more dimensions."""
    x = args.array(m, "fliplr")
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(x, 1)


def flipud(m):
    """Rows reversed: ``flip(m, axis=0)`` (numpy.flipud), for 1 or more dimensions."""
    x = args.array(m, "flipud")
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(x, 0)


def roll(a, shift, axis=None):
    """Elements shifted along the given axes, wrapping around (numpy.roll): a new array.
    ``shift`` and ``axis`` may be tuples (broadcast against each other); with ``axis=None``
    the flattened array rolls and keeps its shape."""
    x = args.array(a, "roll")
    if axis is None:
        return roll(x.ravel(), shift, 0).reshape(x.shape)
    axes = args.axis_list(axis, x.ndim, allow_duplicate=True)
    pairs = np.broadcast(shift, axes)       # NumPy's pairing of shifts and axes, and its error
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = [0] * x.ndim
    for sh, ax in pairs:
        total[ax] += int(sh)
    whole = ((slice(None), slice(None)),)
    rolls = [whole] * x.ndim
    for ax, offset in enumerate(total):
        n = x.shape[ax] or 1
        offset %= n
        if offset:
            rolls[ax] = ((slice(None, -offset), slice(offset, None)),
                         (slice(-offset, None), slice(None, offset)))
    result = ndarray(x.shape, x.dtype)
    for indices in itertools.product(*rolls):
        src, dst = zip(*indices)
        result[dst] = x[src]
    return result
