"""Tiling and repeating: ``tile`` and ``repeat``.

``tile`` and a scalar ``repeat`` are one copy each: the input, seen as a broadcast view with a
0 stride on each repetition axis, is written into the new array seen with the matching shape
(copy bandwidth, no index arithmetic beyond the strided copy). Per-element repeats gather
along the axis with an index array: built on the host from host repeats (NumPy's own
``repeat`` of ``arange``, which also checks them as NumPy does), on the GPU from GPU repeats.
"""

from __future__ import annotations

import operator

import numpy as np

from ..core import args, layout
from ..core.kernels.elementwise.run import copy
from ..core.kernels.rearrange import run as rearrange
from ..core.ndarray import ndarray


def _broadcast_copy(src: ndarray, view_shape, view_strides, out_shape) -> ndarray:
    """A new C-ordered array of ``out_shape`` holding ``src`` seen as (view_shape,
    view_strides), a broadcast view with the same number of elements."""
    out = ndarray._empty(out_shape, src.dtype)
    if out.size:      # both views made directly: this runs per call, so no index parsing
        view_shape = tuple(view_shape)
        copy(src._derive(view_shape, tuple(view_strides)),
             out._derive(view_shape, layout.c_strides(view_shape, src.itemsize)))
    return out


def tile(A, reps) -> ndarray:
    """``A`` repeated ``reps`` times along each axis (numpy.tile); ``reps`` longer than ``A``'s
    dimensions prepends axes to ``A``, shorter prepends ones to ``reps``."""
    x = args.array(A, "tile")
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    tup = tuple(operator.index(r) for r in tup)
    if any(r < 0 for r in tup):
        raise ValueError("negative dimensions are not allowed")
    nd = max(len(tup), x.ndim)
    tup = (1,) * (nd - len(tup)) + tup
    shape = (1,) * (nd - x.ndim) + x.shape
    strides = (0,) * (nd - x.ndim) + x.strides
    view_shape, view_strides = [], []
    for s, st, r in zip(shape, strides, tup):
        view_shape += [r, s]
        view_strides += [0, st]
    return _broadcast_copy(x, view_shape, view_strides, tuple(s * r for s, r in zip(shape, tup)))


def repeat(a, repeats, axis=None) -> ndarray:
    """Each element of ``a`` repeated ``repeats`` times (numpy.repeat; also ``a.repeat``):
    ``repeats`` an int, or one count per element along ``axis`` (a host sequence or a GPU
    array); ``axis=None`` repeats the flattened array."""
    x = args.array(a, "repeat")
    if axis is None:
        x, axis = x.ravel(), 0
    elif x.ndim == 0:
        x = x.reshape(1)       # NumPy treats a 0-d array as 1-d here
    axis = args.axis(axis, x.ndim)
    if type(repeats) is int:       # the common case, without NumPy's conversions
        count = repeats
    else:
        count = _one_count(x, repeats, axis)
        if isinstance(count, ndarray):     # per-element counts: the repeated array itself
            return count
    count = int(count)
    if count < 0:
        raise ValueError("negative dimensions are not allowed")
    if (axis == x.ndim - 1 and 1 < count and count * x.itemsize < 16 and x._c_contiguous
            and x.itemsize in (1, 2, 4, 8)):
        # fewer than 16 bytes of output per element: the copy kernel cannot store vectors;
        # this one stores 16 bytes per thread whatever the count
        return rearrange.repeat_last(x, count)
    shape, strides = list(x.shape), list(x.strides)
    view_shape = shape[:axis + 1] + [count] + shape[axis + 1:]
    view_strides = strides[:axis + 1] + [0] + strides[axis + 1:]
    shape[axis] *= count
    return _broadcast_copy(x, view_shape, view_strides, tuple(shape))


def _one_count(x: ndarray, repeats, axis: int):
    """The count of a scalar ``repeats`` (a GPU array of one element, a NumPy scalar...), or,
    for per-element counts, the repeated array itself."""
    g = None if isinstance(repeats, np.ndarray) else args.as_gpu(repeats, "repeats")
    if g is not None:
        if g.size != 1:
            return _repeat_gpu(x, g, axis)
        return g.item()     # one value decides the result's shape: read it, as CuPy
    host = np.asarray(repeats)
    if host.ndim > 1 or host.size != 1:
        index = np.repeat(np.arange(x.shape[axis]), repeats)    # NumPy's checks and messages
        return _gather(x, index, axis)
    return np.repeat(np.zeros(1, np.int8), repeats).size   # NumPy's conversion of one count


def _gather(x: ndarray, index, axis: int) -> ndarray:
    """``take(x, index, axis)`` for a host index (uploaded: its length is the result's)."""
    from .._creation.from_data import upload
    from .._indexing.gather import take
    return take(x, upload(np.ascontiguousarray(index, dtype=np.int64)), axis=axis)


def _repeat_gpu(x: ndarray, repeats: ndarray, axis: int) -> ndarray:
    """Per-element repeats held on the GPU: the index of each output position is found on the
    GPU (a binary search in the running sum of the counts); only the smallest count and the
    total come back to the host (one small read), because the result's length is the total."""
    from .._indexing.gather import take
    from .._manipulation.joining import stack
    from .._math.sumprod import cumsum
    n = x.shape[axis]
    if repeats.ndim > 1:
        raise ValueError("object too deep for desired array")
    if not np.can_cast(repeats.dtype, np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {repeats.dtype!r} to dtype('int64') "
                        "according to the rule 'safe'")
    if repeats.shape[0] != n:
        raise ValueError("operands could not be broadcast together with shape "
                         f"({n},) ({repeats.shape[0]},)")
    if n == 0:
        return x.copy()
    cum = cumsum(repeats, dtype=np.int64)
    smallest, total = (int(v) for v in stack([repeats.min().astype(np.int64), cum[-1]]).get())
    if smallest < 0:
        raise ValueError("repeats may not contain negative values.")
    return take(x, rearrange.repeat_index(cum, total), axis=axis)
