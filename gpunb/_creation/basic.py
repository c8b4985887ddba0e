"""New arrays from a shape: ``empty``, ``zeros``, ``ones``, ``full`` and their ``*_like``
forms."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.ndarray import ndarray
from ..core.runtime import memory


def empty(shape, dtype=float, order="C") -> ndarray:
    """A new array with uninitialised contents (numpy.empty)."""
    return ndarray(shape, args.dtype(dtype, np.float64), order=order)


def zeros(shape, dtype=float, order="C") -> ndarray:
    """A new array of zeros (numpy.zeros)."""
    a = empty(shape, dtype, order)
    memory.fill_bytes(a.data.ptr, 0, a.nbytes)   # all-zero bits are 0 in every dtype
    return a


def full(shape, fill_value, dtype=None, order="C") -> ndarray:
    """A new array filled with ``fill_value`` (numpy.full); the dtype is the value's unless
    given."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype if not hasattr(fill_value, "dtype") else fill_value.dtype
    a = empty(shape, dtype, order)
    a.fill(fill_value)
    return a


def ones(shape, dtype=float, order="C") -> ndarray:
    """A new array of ones (numpy.ones)."""
    return full(shape, 1, dtype, order)


def _like(a, dtype, shape):
    return (args.dtype(dtype, a.dtype), a.shape if shape is None else shape)


def empty_like(a, dtype=None, order="K", shape=None) -> ndarray:
    """A new uninitialised array with the shape and dtype of ``a`` (numpy.empty_like)."""
    dt, sh = _like(a, dtype, shape)
    return empty(sh, dt)


def zeros_like(a, dtype=None, order="K", shape=None) -> ndarray:
    """Zeros with the shape and dtype of ``a`` (numpy.zeros_like)."""
    dt, sh = _like(a, dtype, shape)
    return zeros(sh, dt)


def ones_like(a, dtype=None, order="K", shape=None) -> ndarray:
    """Ones with the shape and dtype of ``a`` (numpy.ones_like)."""
    dt, sh = _like(a, dtype, shape)
    return ones(sh, dt)


def full_like(a, fill_value, dtype=None, order="K", shape=None) -> ndarray:
    """``fill_value`` with the shape and dtype of ``a`` (numpy.full_like)."""
    dt, sh = _like(a, dtype, shape)
    return full(sh, fill_value, dt)
