"""``x[index]`` and ``x[index] = value`` with basic indices (integers, slices, ``...``,
``newaxis``): a view, and an elementwise copy into one (NumPy's broadcasting and unsafe
assignment casting). These are ndarray's ``__getitem__`` and ``__setitem__``; an index with
an array, list or boolean goes to :mod:`.advanced` (the basic parser raises
``AdvancedIndexError`` for it, so the basic path pays nothing for the test). ``diagonal``."""

from __future__ import annotations

from ..core import args, layout
from ..core.kernels.elementwise.run import assign
from ..core.ndarray import ndarray

# What the basic parser raises for an advanced index: AdvancedIndexError, or TypeError from a
# GPU integer array's __index__ (the advanced parser raises a basic index's own TypeError again).
_Advanced = (layout.AdvancedIndexError, TypeError)


def getitem(a, index):
    """``a[index]``: a view of ``a`` for a basic index (NumPy's basic indexing rules and
    errors); a new array for an advanced one (:func:`.advanced.getitem`)."""
    if index.__class__ is ndarray:      # x[gpu_array]: straight to the gather
        from .advanced import getitem as advanced

        return advanced(a, index)
    if index.__class__ is slice and a._shape:    # x[1:-1]: the common view, without the parser
        r = range(*index.indices(a._shape[0]))
        st = a._strides
        # NumPy points an empty slice at the view start with step 1
        return a._derive((len(r),) + a._shape[1:], ((r.step * st[0]) if r else st[0],) + st[1:],
                         r.start * st[0] if r else 0)
    try:
        shape, strides, offset = layout.basic_index(a._shape, a._strides, a._dtype.itemsize, index)
    except _Advanced:
        from .advanced import getitem as advanced

        return advanced(a, index)
    return a._derive(shape, strides, offset)


def setitem(a, index, value) -> None:
    """``a[index] = value``: ``value`` (a GPU array or a scalar) broadcast and cast into the
    view ``a[index]``; an advanced index scatters (:func:`.advanced.setitem`)."""
    if index is Ellipsis:
        assign(a, value)
        return
    try:
        shape, strides, offset = layout.basic_index(a._shape, a._strides, a._dtype.itemsize, index)
    except _Advanced:
        from .advanced import setitem as advanced

        advanced(a, index, value)
        return
    assign(a._derive(shape, strides, offset), value)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """Specified diagonals, as :func:`numpy.diagonal`: a view (read-only in NumPy; writable
    here, as CuPy's), with the diagonal as the last axis."""
    a = args.array(a, "diagonal")
    nd = a.ndim
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1 = layout.normalize_axis(axis1, nd, "axis1")
    ax2 = layout.normalize_axis(axis2, nd, "axis2")
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = int(offset)
    n1, n2 = a.shape[ax1], a.shape[ax2]
    s1, s2 = a.strides[ax1], a.strides[ax2]
    start = 0
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        if length:
            start = offset * s2
    else:
        length = max(0, min(n1 + offset, n2))
        if length:
            start = -offset * s1
    keep = [k for k in range(nd) if k not in (ax1, ax2)]
    shape = tuple(a.shape[k] for k in keep) + (length,)
    strides = tuple(a.strides[k] for k in keep) + (s1 + s2,)
    return a._derive(shape, strides, start)
