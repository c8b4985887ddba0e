"""New arrays from a shape: ``empty``, ``zeros``, ``ones``, ``full`` and their ``*_like``
forms."""

from __future__ import annotations

import numpy as np

from .._array_api.devices import on
from ..core import args, dtypes, layout
from ..core.ndarray import _alloc, _order, ndarray
from ..core.runtime import memory


_parsed = dtypes._checked     # dtype-like -> supported dtype, filled by dtypes.check


def _c_or_f(order) -> str:
    order = _order(order)
    if order in "AK":
        raise ValueError("only 'C' or 'F' order is permitted")
    return order


def empty(shape, dtype=float, order="C", *, device=None) -> ndarray:
    """A new array with uninitialised contents (numpy.empty); ``order`` 'C' or 'F'."""
    if shape.__class__ is int and device is None and order == "C" and shape >= 0:
        try:        # the common call, in the fewest steps (host time per small call)
            dt = _parsed[dtype]
        except (KeyError, TypeError):
            pass
        else:
            return ndarray._empty((shape,), dt)
    if device is not None:
        with on(device, "empty"):
            return empty(shape, dtype, order)
    dt = args.dtype(dtype, np.float64)
    if order == "C":        # the common call, with no shape parsing (host time per small call)
        t = type(shape)
        if t is int and shape >= 0:
            return ndarray._empty((shape,), dt)
        if t is tuple and all(type(s) is int and s >= 0 for s in shape):
            return ndarray._empty(shape, dt)
    return ndarray(shape, dt, order=_c_or_f(order))


def zeros(shape, dtype=float, order="C", *, device=None) -> ndarray:
    """A new array of zeros (numpy.zeros)."""
    a = empty(shape, dtype, order, device=device)
    memory.fill_bytes(a.data.ptr, 0, a.nbytes)   # all-zero bits are 0 in every dtype
    return a


def full(shape, fill_value, dtype=None, order="C", *, device=None) -> ndarray:
    """A new array filled with ``fill_value`` (numpy.full); the dtype is the value's unless
    given."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype if not hasattr(fill_value, "dtype") else fill_value.dtype
    a = empty(shape, dtype, order, device=device)
    a.fill(fill_value)
    return a


def ones(shape, dtype=float, order="C", *, device=None) -> ndarray:
    """A new array of ones (numpy.ones)."""
    return full(shape, 1, float if dtype is None else dtype, order, device=device)


def _like(a, dtype, order, shape, device=None) -> ndarray:
    """The new uninitialised array of a ``*_like`` function: ``a``'s dtype and shape unless
    given; ``order`` 'K' keeps ``a``'s memory layout (as NumPy, only when the shape keeps its
    number of dimensions), 'A' is Fortran for a Fortran-contiguous ``a``; ``device`` (the
    array API's) the GPU it is made on."""
    if device is not None:
        with on(device, "the *_like functions"):
            return _like(a, dtype, order, shape)
    dt = args.dtype(dtype, a.dtype)
    sh = tuple(a.shape) if shape is None else layout.new_shape(shape)
    order = _order(order, "K")
    if order in "AK" and len(sh) != len(a.shape):
        order = "C"
    like = a if isinstance(a, ndarray) else (
        None if isinstance(a, np.ndarray) else args.as_gpu(a, "the prototype"))
    if like is None or order in "CF":
        return ndarray(sh, dt, order="F" if order == "F" else "C")
    return _alloc(sh, dt, order, like)


def empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    """A new uninitialised array with the shape and dtype of ``a`` (numpy.empty_like)."""
    return _like(a, dtype, order, shape, device)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    """Zeros with the shape and dtype of ``a`` (numpy.zeros_like)."""
    out = _like(a, dtype, order, shape, device)
    memory.fill_bytes(out.data.ptr, 0, out.nbytes)
    return out


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    """Ones with the shape and dtype of ``a`` (numpy.ones_like)."""
    out = _like(a, dtype, order, shape, device)
    out.fill(1)
    return out


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None) -> ndarray:
    """``fill_value`` with the shape and dtype of ``a`` (numpy.full_like)."""
    out = _like(a, dtype, order, shape, device)
    out.fill(fill_value)
    return out
