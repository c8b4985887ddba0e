"""``x[index]`` and ``x[index] = value`` with basic indices (integers, slices, ``...``,
``newaxis``): a view, and an elementwise copy into one (NumPy's broadcasting and unsafe
assignment casting). These are ndarray's ``__getitem__`` and ``__setitem__``."""

from __future__ import annotations

from ..core import layout
from ..core.kernels.elementwise.run import assign


def getitem(a, index):
    """``a[index]``: a view of ``a`` (NumPy's basic indexing rules and errors)."""
    shape, strides, offset = layout.basic_index(a._shape, a._strides, a._dtype.itemsize, index)
    return a._derive(shape, strides, offset)


def setitem(a, index, value) -> None:
    """``a[index] = value``: ``value`` (a GPU array or a scalar) broadcast and cast into the
    view ``a[index]``."""
    assign(a if index is Ellipsis else getitem(a, index), value)
