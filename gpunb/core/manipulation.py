"""Shape functions with NumPy's names (``gpunb.reshape(a, ...)`` as ``a.reshape(...)``): views
whenever NumPy gives a view, so ``numpy.transpose(x)`` on a gpunb array stays on the GPU."""

from __future__ import annotations

from . import layout
from .ndarray import ndarray


def _array(a, func: str) -> ndarray:
    if isinstance(a, ndarray):
        return a
    from .ufuncs import _as_gpu

    x = _as_gpu(a, f"the input of {func}")
    if x is None:
        raise TypeError(f"{func} needs a GPU array, not {type(a).__name__}; use gpunb.asarray()")
    return x


def reshape(a, /, shape=None, order="C", *, newshape=None):
    """A view with a new shape when the strides allow it, else a copy (numpy.reshape)."""
    return _array(a, "reshape").reshape(shape if shape is not None else newshape, order=order)


def ravel(a, order="C"):
    """The flattened array: a view when possible (numpy.ravel)."""
    return _array(a, "ravel").ravel(order=order)


def transpose(a, axes=None):
    """The axes permuted (reversed by default): a view (numpy.transpose)."""
    return _array(a, "transpose").transpose(axes)


def swapaxes(a, axis1, axis2):
    """Two axes exchanged: a view (numpy.swapaxes)."""
    return _array(a, "swapaxes").swapaxes(axis1, axis2)


def moveaxis(a, source, destination):
    """Axes moved to new positions: a view (numpy.moveaxis)."""
    x = _array(a, "moveaxis")
    from numpy.lib.array_utils import normalize_axis_tuple

    src = normalize_axis_tuple(source, x.ndim, "source")
    dst = normalize_axis_tuple(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.transpose(order)


def squeeze(a, axis=None):
    """Length-one axes removed: a view (numpy.squeeze)."""
    return _array(a, "squeeze").squeeze(axis)


def expand_dims(a, axis):
    """Length-one axes inserted at ``axis``: a view (numpy.expand_dims)."""
    from . import fusion

    if fusion.has_proxy((a,)):          # inside @gpunb.fuse: a view of an input operand
        import numpy as np

        return np.expand_dims(a, axis)
    x = _array(a, "expand_dims")
    return x._derive(*layout.expand_dims(x.shape, x.strides, axis))


def broadcast_to(array, shape):
    """A read-only-in-spirit view of ``array`` broadcast to ``shape`` (numpy.broadcast_to)."""
    x = _array(array, "broadcast_to")
    return x._broadcast_to(shape)


def copy(a, order="K"):
    """A new array with a copy of the data (numpy.copy)."""
    return _array(a, "copy").copy(order="F" if order == "F" else "C")


def shape(a):
    return _array(a, "shape").shape


def ndim(a):
    return _array(a, "ndim").ndim


def size(a, axis=None):
    x = _array(a, "size")
    return x.size if axis is None else x.shape[axis]


FUNCTIONS = ("reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
             "broadcast_to", "copy", "shape", "ndim", "size")
