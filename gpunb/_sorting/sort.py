"""Sorting: ``sort``, ``argsort``, ``lexsort``, ``partition``, ``argpartition``,
``sort_complex`` and the in-place methods ``ndarray.sort`` / ``ndarray.partition``.

All run on the radix sort engine (:mod:`gpunb.core.kernels.sort`): CUB's onesweep passes and
block sorts, in NumPy's order (NaN last, -0.0 equal to 0.0, complex lexicographic with NumPy's
NaN groups). Every sort is stable, so ``kind`` only selects NumPy's argument checks: any kind
gives NumPy's ``kind='stable'`` result (which is also a valid result for the other kinds).
A partition is a full sort along the axis, which satisfies partition's contract.
"""

from __future__ import annotations

import operator

import numpy as np

from ..core import args
from ..core.kernels.elementwise.run import assign
from ..core.kernels.sort import run as engine
from ..core.ndarray import ndarray

_I64 = np.dtype("int64")


def _check_kind(kind, stable) -> None:
    if kind is not None and stable is not None:
        raise ValueError("`kind` and keyword parameters can't be provided at the same time. "
                         "Use only one of them.")
    if kind is None:
        return
    if not isinstance(kind, str):
        raise TypeError(f"sort kind must be str, not {type(kind).__name__}")
    if not kind or kind[0].lower() not in "qhsm":
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def _check_order(order) -> None:
    if order is not None:       # gpunb has no structured dtypes
        raise ValueError("Cannot specify order when the array has no fields.")


def _axis(axis, ndim: int, float_message: bool) -> int:
    if float_message and isinstance(axis, float):      # NumPy's sort parses axis as a C int
        raise TypeError("integer argument expected, got float")
    return args.axis(axis, ndim)


def _prepare(a, axis, func, arg=False):
    """(array, axis): ``axis=None`` flattens; NumPy's AxisError otherwise (0-d too, except
    for the arg- functions, which see a 0-d array as one element)."""
    x = args.array(a, func)
    if axis is None or (arg and x.ndim == 0):
        if arg and x.ndim == 0 and axis is not None:
            args.axis(axis, 1)
        return x.reshape(x.size) if x._c_contiguous else x.ravel(), 0
    return x, _axis(axis, x.ndim, not arg)


def _sorted(x: ndarray, axis: int, keys: bool, positions: bool):
    """(sorted keys or None, argsort positions or None) of ``x`` along ``axis``, both new
    C-contiguous arrays of ``x``'s shape."""
    last = axis == x.ndim - 1
    src = x if last else x.swapaxes(axis, -1)
    if not src._c_contiguous:
        src = src.copy()
    k, p = engine.sort_rows(src, keys, positions)
    if not last:
        k = _moved_back(k, axis)
        p = _moved_back(p, axis)
    return k, p


def _moved_back(r, axis):
    if r is None:
        return None
    view = r.swapaxes(axis, -1)
    out = ndarray._empty(view.shape, view.dtype)
    assign(out, view)
    return out


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """A sorted copy of an array (numpy.sort); NaN last, stable. ``descending`` (the array
    API's): the ascending result reversed along the axis (NaN first)."""
    if descending:
        x, ax = _prepare(a, axis, "sort")
        return sort(x, ax, kind, order, stable=stable)[_reversed(x.ndim, ax)]
    if (axis == -1 and kind is None and order is None and stable is None and type(a) is ndarray
            and a.ndim == 1 and a._c_contiguous):       # the common call, with little host time
        return engine.sort_flat(a)[0]
    _check_kind(kind, stable)
    _check_order(order)
    x, ax = _prepare(a, axis, "sort")
    return _sorted(x, ax, True, False)[0]


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """The int64 indices that sort an array along an axis (numpy.argsort); stable: ties keep
    their order, as NumPy's ``kind='stable'``. ``descending`` (the array API's): largest
    first, ties still in their order (``n - 1 -`` the reversed argsort of the reversed array)."""
    if descending:
        x, ax = _prepare(a, axis, "argsort", arg=True)
        rev = _reversed(x.ndim, ax)
        from .._math.ufuncs import UFUNCS

        return UFUNCS["subtract"](max(x.shape[ax] - 1, 0) if x.ndim else 0,
                                  argsort(x[rev], ax, kind, order, stable=stable)[rev])
    if (axis == -1 and kind is None and order is None and stable is None and type(a) is ndarray
            and a.ndim == 1 and a._c_contiguous):
        return engine.argsort_flat(a)
    _check_kind(kind, stable)
    _check_order(order)
    x, ax = _prepare(a, axis, "argsort", arg=True)
    return _sorted(x, ax, False, True)[1]


def _reversed(ndim: int, axis: int) -> tuple:
    """The index that reverses ``axis`` (a view)."""
    return (slice(None),) * axis + (slice(None, None, -1),) if ndim else ()


def sort_inplace(self, axis=-1, kind=None, order=None, *, stable=None):
    """Sort an array in place (ndarray.sort); returns None."""
    _check_kind(kind, stable)
    _check_order(order)
    x = args.array(self, "sort")
    ax = _axis(axis, x.ndim, True)
    assign(x, _sorted(x, ax, True, False)[0])


def _kth(kth, n: int, check: bool) -> None:
    """NumPy's checks of partition's ``kth`` (an int or a 1-D sequence of ints) for an axis of
    length ``n`` (none of the bounds when the array is empty)."""
    if isinstance(kth, (bool, np.bool_)):
        raise ValueError("Booleans unacceptable as partition index")
    k = np.asarray(kth)
    if k.ndim > 1:
        raise ValueError("setting an array element with a sequence. The requested array would "
                         "exceed the maximum number of dimension of 1.")
    if k.dtype.kind == "b":
        raise ValueError("Booleans unacceptable as partition index")
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if not check:
        return
    for v in k.reshape(-1).tolist():
        v = v + n if v < 0 else v
        if not 0 <= v < n:
            raise ValueError(f"kth(={v}) out of bounds ({n})")


def _partition_args(a, kth, axis, kind, order, func):
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    _check_order(order)
    x, ax = _prepare(a, axis, func, arg=func == "argpartition")
    _kth(kth, x.shape[ax], x.size > 0)
    return x, ax


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A partitioned copy of an array (numpy.partition): the element at each ``kth`` is where
    a sort puts it, smaller ones before, larger after. Here the whole axis is sorted."""
    x, ax = _partition_args(a, kth, axis, kind, order, "partition")
    return _sorted(x, ax, True, False)[0]


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition an array (numpy.argpartition); here a stable argsort."""
    x, ax = _partition_args(a, kth, axis, kind, order, "argpartition")
    return _sorted(x, ax, False, True)[1]


def partition_inplace(self, kth, axis=-1, kind="introselect", order=None):
    """Partition an array in place (ndarray.partition); returns None."""
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    _check_order(order)
    x = args.array(self, "partition")
    ax = _axis(axis, x.ndim, True)
    _kth(kth, x.shape[ax], x.size > 0)
    assign(x, _sorted(x, ax, True, False)[0])


def sort_complex(a):
    """Sort a complex array by real part, then imaginary part (numpy.sort_complex); real
    input becomes complex64 (int8/16, uint8/16) or complex128."""
    x = args.array(a, "sort_complex")
    s = sort(x)
    if s.dtype.kind == "c":
        return s
    return s.astype(np.complex64 if s.dtype.char in "bhBH" else np.complex128)


def lexsort(keys, axis=-1):
    """Indirect stable sort on several keys, the last the primary one (numpy.lexsort)."""
    if isinstance(keys, ndarray):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        ks = [keys[i] for i in range(keys.shape[0])]
    elif isinstance(keys, (tuple, list)):
        ks = [args.array(k, "lexsort") for k in keys]
    else:
        ks = [args.array(keys, "lexsort")]
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = ks[0].shape
    if any(k.shape != shape for k in ks):
        raise ValueError("all keys need to be the same shape")
    if len(shape) == 0:
        operator.index(axis)
        out = ndarray._empty((), _I64)
        assign(out, 0)
        return out
    ax = args.axis(axis, len(shape))
    moved = [k if ax == len(shape) - 1 else k.swapaxes(ax, -1) for k in ks]
    flat = [(m if m._c_contiguous else m.copy()).reshape(m.size) for m in moved]
    mshape = moved[0].shape
    L = mshape[-1]
    if L == 0 or moved[0].size == 0:
        return ndarray._empty(shape, _I64)
    pos = engine.lexsort_rows(flat, L).reshape(mshape)
    return pos if ax == len(shape) - 1 else _moved_back(pos, ax)
