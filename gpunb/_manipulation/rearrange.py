"""Rearranging elements: ``flip``, ``fliplr``, ``flipud``, ``rot90`` (views with negative or
exchanged strides) and ``roll`` (one kernel whatever the number of rolled axes:
:mod:`gpunb.core.kernels.rearrange`)."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.kernels.rearrange import run as rearrange


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
    return rearrange.roll(x, total)


def rot90(m, k=1, axes=(0, 1)):
    """A view of ``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the
    first axis towards the second (numpy.rot90)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    x = args.array(m, "rot90")
    nd = x.ndim
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if axes[0] >= nd or axes[0] < -nd or axes[1] >= nd or axes[1] < -nd:
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    k = int(k) % 4
    if k == 0:
        return x._derive(x.shape, x.strides)
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    perm = list(range(nd))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return flip(x, axes[1]).transpose(perm)
    return flip(x.transpose(perm), axes[1])
