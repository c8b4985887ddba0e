"""Joining and splitting arrays: ``concatenate``, ``stack``, ``vstack``, ``hstack``, ``dstack``,
``column_stack``, ``append``, ``row_stack`` (NumPy 2's deprecated alias, warning as NumPy's);
``split``, ``array_split``, ``hsplit``, ``vsplit``, ``dsplit``.

Joining writes each input into its slice of one new array: a copy kernel each, except that
inputs whose slices are contiguous byte ranges are copied together in one launch when small
(``join``, :mod:`gpunb.core.kernels.rearrange`) and by a driver copy each when large;
splitting returns views. NumPy's rules, dtypes and
error messages.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ..core import args, memo
from ..core.kernels.elementwise.run import assign, copy
from ..core.kernels.rearrange import run as rearrange
from ..core.ndarray import ndarray
from ..core.runtime import driver, fastcall
from .dims import atleast_1d, atleast_2d, atleast_3d

_result_dtypes = memo.table("joining.result_dtypes")   # (input dtypes, dtype=, casting) -> checked dtype


# contiguous inputs of at most this many bytes on average are joined in one launch; larger
# ones are a driver copy each (bandwidth-bound: a call's host time no longer matters)
JOIN_BYTES = 1 << 20


def _arrays(seq, func: str) -> list[ndarray]:
    if isinstance(seq, ndarray):           # NumPy iterates an array's first axis
        seq = list(seq)
    return [args.array(a, func) for a in seq]


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The arrays joined along an existing axis (numpy.concatenate); ``axis=None`` joins them
    flattened. The result dtype is NumPy's ``result_type`` of the inputs unless ``dtype`` or
    ``out`` says otherwise, each input cast under ``casting``."""
    if axis.__class__ is int and axis == 0 and out is None and dtype is None \
            and type(arrays) in (list, tuple):
        result = _join_vectors(arrays)
        if result is not None:
            return result
    xs = _arrays(arrays, "concatenate")
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    if axis is None:
        xs = [x.ravel() for x in xs]
        axis = 0
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = args.axis(axis, nd)          # NumPy checks the axis against the first array first
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != nd:
            raise ValueError("all the input arrays must have same number of dimensions, but the "
                             f"array at index 0 has {nd} dimension(s) and the array at index {i} "
                             f"has {x.ndim} dimension(s)")
    shape = list(xs[0].shape)
    for i, x in enumerate(xs[1:], 1):
        for d in range(nd):
            if d != axis and x.shape[d] != shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array at "
                                 f"index 0 has size {shape[d]} and the array at index {i} has "
                                 f"size {x.shape[d]}")
        shape[axis] += x.shape[axis]
    shape = tuple(shape)
    out = args.out_array(out, "concatenate")
    if out is not None:
        if out.ndim != nd:
            raise ValueError("Output array has wrong dimensionality")
        if out.shape != shape:
            raise ValueError("Output array is the wrong shape")
        _check_casts(xs, out.dtype, casting)
        step = out.strides[axis]
        start = 0
        for x in xs:
            if x.size:     # the input's slice of out, a view made directly
                assign(out._derive(x.shape, out.strides, start * step), x)
            start += x.shape[axis]
        return out
    key = (tuple(x._dtype for x in xs), dtype, casting)
    dt = _result_dtypes.get(key)
    if dt is None:
        dt = args.dtype(dtype) if dtype is not None else args.dtype(np.result_type(*key[0]))
        _check_casts(xs, dt, casting)
        _result_dtypes[key] = dt
    result = ndarray._empty(shape, dt)
    # a new result overlaps no input; when the dimensions before the axis are all 1, each
    # input's slice of it is contiguous, and a contiguous input of the dtype is a byte range:
    # all of them in one launch (join) when they are small, else a driver copy each
    whole = math.prod(shape[:axis]) == 1
    base, itemsize, step = result._data.ptr, dt.itemsize, result._strides[axis]
    ranges = []
    start = 0
    for x in xs:
        if x._size:
            if whole and x._dtype is dt and (x._cc is True or x._c_contiguous):
                ranges.append((start * step, x._data.ptr, x._size * itemsize))
            else:
                copy(x, result._derive(x._shape, result._strides, start * step))
        start += x._shape[axis]
    total = sum(r[2] for r in ranges)
    # joined back to back: no input copied apart between them
    if _joinable(total, len(ranges)) and ranges[-1][0] + ranges[-1][2] - ranges[0][0] == total:
        rearrange.join(base + ranges[0][0], [r[1] for r in ranges], [r[2] for r in ranges])
    elif ranges:
        stream = driver.stream_handle()
        for offset, ptr, nbytes in ranges:
            fastcall.copy(base + offset, ptr, nbytes, stream)
    return result


def _join_vectors(xs):
    """The common small case without the general checks (a Dask reduction's aggregate joins a
    few one-element partial results, once per task): contiguous 1-D arrays of one dtype, small
    enough to join in one launch. None when any of that does not hold."""
    if len(xs) < 2 or type(xs[0]) is not ndarray:
        return None
    dt, n, ptrs, sizes = xs[0]._dtype, 0, [], []
    for x in xs:
        if type(x) is not ndarray or x._dtype is not dt or len(x._shape) != 1 \
                or not (x._cc is True or x._c_contiguous):
            return None
        if x._size:
            ptrs.append(x._data.ptr)
            sizes.append(x._size * dt.itemsize)
            n += x._size
    if not _joinable(n * dt.itemsize, len(ptrs)):
        return None
    result = ndarray._empty((n,), dt)
    rearrange.join(result._data.ptr, ptrs, sizes)
    return result


def _joinable(nbytes: int, count: int) -> bool:
    """Whether ``count`` contiguous ranges of ``nbytes`` in all are joined in one launch."""
    return count > 1 and nbytes <= JOIN_BYTES * count


def _check_casts(xs, dt, casting) -> None:
    for x in xs:
        if not np.can_cast(x.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dt!r} according to "
                            f"the rule {casting!r}")


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The arrays joined along a new axis (numpy.stack): all of one shape."""
    xs = _arrays(arrays, "stack")
    if not xs:
        raise ValueError("need at least one array to stack")
    if any(x.shape != xs[0].shape for x in xs[1:]):
        raise ValueError("all input arrays must have the same shape")
    axis = args.axis(axis, xs[0].ndim + 1)
    # each input with a new axis of 1 (stride 0, as numpy.newaxis), made directly
    return concatenate([x._derive(x._shape[:axis] + (1,) + x._shape[axis:],
                                  x._strides[:axis] + (0,) + x._strides[axis:]) for x in xs],
                       axis=axis, out=out, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays stacked vertically, 1-d ones as rows (numpy.vstack)."""
    return concatenate(_tuple(atleast_2d(*_arrays(tup, "vstack"))), axis=0, dtype=dtype,
                       casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays stacked horizontally: along the second axis, or the first for 1-d ones
    (numpy.hstack)."""
    xs = _tuple(atleast_1d(*_arrays(tup, "hstack")))
    axis = 0 if xs and xs[0].ndim == 1 else 1
    return concatenate(xs, axis=axis, dtype=dtype, casting=casting)


def dstack(tup):
    """The arrays stacked along the third axis (numpy.dstack)."""
    return concatenate(_tuple(atleast_3d(*_arrays(tup, "dstack"))), axis=2)


def column_stack(tup):
    """1-d arrays as the columns of a 2-d array, 2-d arrays as they are (numpy.column_stack)."""
    xs = [x.reshape(-1, 1) if x.ndim < 2 else x for x in _arrays(tup, "column_stack")]
    return concatenate(xs, axis=1)


def append(arr, values, axis=None):
    """``values`` appended to ``arr``: flattened with ``axis=None`` (numpy.append)."""
    arr, values = args.array(arr, "append"), args.array(values, "append")
    if axis is None:
        return concatenate((arr.ravel(), values.ravel()), axis=0)
    return concatenate((arr, values), axis=axis)


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def array_split(ary, indices_or_sections, axis=0):
    """Views of ``ary`` split into sections (unequal ones allowed: the first get one more
    element) or at the given indices (numpy.array_split)."""
    x = args.array(ary, "array_split")
    axis = args.axis(axis, x.ndim)
    n = x.shape[axis]
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        bounds = [0, *(int(i) for i in indices_or_sections), n]
    else:
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extras = divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        bounds = list(np.cumsum(sizes).tolist())
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index = (slice(None),) * axis + (slice(lo, hi),)
        out.append(x[index])
    return out


def split(ary, indices_or_sections, axis=0):
    """Views of ``ary`` split into equal sections or at the given indices (numpy.split)."""
    x = args.array(ary, "split")
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        return array_split(x, indices_or_sections, axis)
    if sections > 0 and x.shape[args.axis(axis, x.ndim)] % sections:
        raise ValueError("array split does not result in an equal division")
    return array_split(x, sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along the second axis, the first for 1-d arrays (numpy.hsplit)."""
    x = args.array(ary, "hsplit")
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along the first axis (numpy.vsplit): 2 or more dimensions."""
    x = args.array(ary, "vsplit")
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along the third axis (numpy.dsplit): 3 or more dimensions."""
    x = args.array(ary, "dsplit")
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """The arrays stacked vertically (numpy.row_stack): ``vstack``, after NumPy's
    ``DeprecationWarning`` (NumPy 2.0 deprecated the alias).

    .. deprecated:: NumPy 2.0
        Use :func:`gpunb.vstack` directly.
    """
    # NumPy's text and category, so that filters written for NumPy's warning match it
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)
