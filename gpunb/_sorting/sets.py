"""Sets: ``unique`` (and the array API's ``unique_values``, ``unique_counts``,
``unique_inverse``, ``unique_all``), ``isin``, ``intersect1d``, ``union1d``, ``setdiff1d``,
``setxor1d``.

NumPy's sort-based algorithms, step for step, on the GPU: a (stable) radix sort, a flag per
element that differs from its predecessor, and a stream compaction of the flagged elements
(:mod:`gpunb.core.kernels.scan`; its output size, 8 bytes, is read back, as CuPy does).
``isin`` sorts the test elements and binary-searches each element among them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core import args
from ..core.kernels.elementwise.run import assign
from ..core.kernels.scan.run import nonzero_flat, scan, select
from ..core.ndarray import ndarray

_I64 = np.dtype("int64")


class UniqueAllResult(NamedTuple):
    values: ndarray
    indices: ndarray
    inverse_indices: ndarray
    counts: ndarray


class UniqueCountsResult(NamedTuple):
    values: ndarray
    counts: ndarray


class UniqueInverseResult(NamedTuple):
    values: ndarray
    inverse_indices: ndarray


def _uf(name):
    from .._math.ufuncs import UFUNCS

    return UFUNCS[name]


def _flat(x: ndarray) -> ndarray:
    return x.reshape(x.size) if x.ndim != 1 else x


def _gpu(value, func: str) -> ndarray:
    return args.array(value, func)


def _isin_operand(value, other) -> ndarray:
    """An operand of isin: a GPU array, or a Python scalar beside one (the 2025.12 standard;
    NumPy takes it as ``numpy.asarray(value)``, a 0-d array uploaded here)."""
    if type(value) in (bool, int, float, complex) and type(other) is ndarray:
        from .._creation.from_data import upload

        return upload(np.asarray(value))
    return _gpu(value, "isin")


def _first_nan(aux: ndarray) -> int | None:
    """Where the NaN run at the end of the sorted ``aux`` starts (one element read back
    first; None when the last element is not NaN): NumPy's ``aux_firstnan``."""
    from .bisect import searchsorted

    isnan = _uf("isnan")
    if not bool(isnan(aux[-1]).get()):
        return None
    if aux.dtype.kind == "c":
        return int(searchsorted(isnan(aux), True, side="left").get())
    return int(searchsorted(aux, aux[-1:], side="left")[0].get())


def _flags(aux: ndarray, equal_nan: bool) -> ndarray:
    """``mask[i]``: ``aux[i]`` starts a run of equal values (NaNs one run if ``equal_nan``)."""
    n = aux.size
    mask = ndarray._empty((n,), np.dtype(bool))
    assign(mask[:1], True)
    if n > 1:
        _uf("not_equal")(aux[1:], aux[:-1], out=mask[1:])
    if equal_nan and n and aux.dtype.kind in "fc":
        k = _first_nan(aux)
        if k is not None:
            assign(mask[k:k + 1], True)
            if k + 1 < n:
                assign(mask[k + 1:], False)
    return mask


def _unique1d(ar: ndarray, return_index, return_inverse, return_counts, equal_nan,
              inverse_shape, axis_given):
    from .sort import argsort, sort

    ar = _flat(ar)
    indices = return_index or return_inverse
    if indices:
        perm = argsort(ar, kind="stable")
        from .._indexing.gather import take

        aux = take(ar, perm)
    else:
        aux = sort(ar)
    if aux.size == 0:
        mask = ndarray._empty((0,), np.dtype(bool))
    else:
        mask = _flags(aux, equal_nan)
    ret = (select(aux, mask),)
    if return_index:
        ret += (select(perm, mask),)
    if return_inverse:
        imask = _uf("subtract")(scan(mask, 0, "sum"), 1)
        inv = ndarray._empty((mask.size,), _I64)
        if mask.size:
            inv[perm] = imask
        ret += (inv.reshape(inverse_shape) if not axis_given else inv,)
    if return_counts:
        starts = nonzero_flat(mask)
        from .._creation.from_data import upload
        from .._manipulation.joining import concatenate

        ends = concatenate((starts[1:], upload(np.array([mask.size], np.int64))))
        ret += (_uf("subtract")(ends, starts),)
    return ret


def _unpack(x):
    return x[0] if len(x) == 1 else x


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    """The sorted unique elements of ``ar`` (numpy.unique), optionally with the first
    indices, the inverse (NumPy 2's shape rules) and the counts; ``axis`` makes the
    sub-arrays along it the elements; ``equal_nan`` collapses NaNs."""
    x = _gpu(ar, "unique")
    if axis is None or x.ndim == 1:
        if axis is not None:
            args.axis(axis, x.ndim)
        return _unpack(_unique1d(x, return_index, return_inverse, return_counts, equal_nan,
                                 x.shape, False))
    from numpy.exceptions import AxisError

    try:
        ax = args.axis(axis, x.ndim)
    except AxisError:
        raise AxisError(axis, x.ndim) from None
    moved = _moveaxis0(x, ax)
    orig_shape = moved.shape
    m = 1
    for s in orig_shape[1:]:
        m *= s
    rows = moved.reshape(orig_shape[0], m).copy()
    out = _unique_rows(rows, return_index, return_inverse, return_counts)
    u = out[0].reshape((out[0].shape[0],) + orig_shape[1:])
    u = _moveaxis_back(u, ax)
    return _unpack((u,) + out[1:])


def _moveaxis0(x, ax):
    if ax == 0:
        return x
    order = [ax] + [d for d in range(x.ndim) if d != ax]
    return x.transpose(order)


def _moveaxis_back(u, ax):
    if ax == 0:
        return u
    order = list(range(1, u.ndim))
    order.insert(ax, 0)
    return u.transpose(order).copy()


def _unique_rows(rows: ndarray, return_index, return_inverse, return_counts):
    """``unique`` of the rows of a C-contiguous 2-D array, in lexicographic order (NumPy's
    structured view: rows with NaN are never equal)."""
    from .._indexing.gather import take

    n, m = rows.shape
    if m == 0 or n == 0:
        perm = _arange(n)
    else:
        from .sort import lexsort

        perm = lexsort(tuple(rows[:, j] for j in range(m - 1, -1, -1)))
    aux = take(rows, perm, axis=0)
    mask = ndarray._empty((n,), np.dtype(bool))
    if n:
        assign(mask[:1], True)
    if n > 1:
        if m:
            diff = _uf("not_equal")(aux[1:], aux[:-1]).any(axis=1)
            assign(mask[1:], diff)
        else:
            assign(mask[1:], False)
    keep = nonzero_flat(mask)
    ret = (take(aux, keep, axis=0),)
    if return_index:
        ret += (take(perm, keep),)
    if return_inverse:
        imask = _uf("subtract")(scan(mask, 0, "sum"), 1)
        inv = ndarray._empty((n,), _I64)
        if n:
            inv[perm] = imask
        ret += (inv,)
    if return_counts:
        from .._creation.from_data import upload
        from .._manipulation.joining import concatenate

        ends = concatenate((keep[1:], upload(np.array([n], np.int64))))
        ret += (_uf("subtract")(ends, keep),)
    return ret


def _arange(n):
    from .._creation.ranges import arange

    return arange(n, dtype=np.int64)


def unique_all(x):
    """``unique`` with first indices, inverse and counts, NaNs distinct (numpy.unique_all)."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, equal_nan=False))


def unique_counts(x):
    """The unique values and their counts, NaNs distinct (numpy.unique_counts)."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x):
    """The unique values and the inverse (``x``'s shape), NaNs distinct
    (numpy.unique_inverse)."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


def unique_values(x):
    """The unique values, NaNs distinct (numpy.unique_values; sorted here)."""
    return unique(x, equal_nan=False)


# ---- membership and set operations ---------------------------------------------------------------

def _isin_flat(e: ndarray, t: ndarray, invert: bool) -> ndarray:
    """Whether each element of ``e`` (any shape) equals some element of ``t``: ``t``
    sorted, each element binary-searched in it (NaN is in nothing)."""
    from .bisect import searchsorted
    from .sort import sort

    t = _flat(t)
    if t.size == 0:
        out = ndarray._empty(e.shape, np.dtype(bool))
        if out.size:
            assign(out, bool(invert))
        return out
    dt = np.promote_types(e.dtype, t.dtype)
    st = sort(t if t.dtype == dt else t.astype(dt))
    ec = e if e.dtype == dt else e.astype(dt)
    pos = searchsorted(st, ec, side="left")
    pos = _uf("minimum")(pos, st.size - 1)
    from .._indexing.gather import take

    found = _uf("equal")(take(st, pos), ec)
    return _uf("logical_not")(found) if invert else found


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is in ``test_elements`` (numpy.isin), of
    ``element``'s shape; ``invert`` negates. ``kind`` is checked as NumPy checks it; both
    kinds give the same result (a sort and a binary search)."""
    e, t = _isin_operand(element, test_elements), _isin_operand(test_elements, element)
    if kind not in {None, "sort", "table"}:
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    if kind == "table" and not all(a.dtype.kind in "uib" for a in (e, t)):
        raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                         "Please select 'sort' or None for kind.")
    return _isin_flat(e, t, invert)


def _concat(a: ndarray, b: ndarray) -> ndarray:
    from .._manipulation.joining import concatenate

    return concatenate((_flat(a), _flat(b)))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both arrays (numpy.intersect1d); ``return_indices``
    adds the first indices of them in each."""
    from .._indexing.gather import take
    from .sort import argsort, sort

    a, b = _gpu(ar1, "intersect1d"), _gpu(ar2, "intersect1d")
    if not assume_unique:
        if return_indices:
            a, ind1 = unique(a, return_index=True)
            b, ind2 = unique(b, return_index=True)
        else:
            a, b = unique(a), unique(b)
    else:
        a, b = _flat(a), _flat(b)
    aux = _concat(a, b)
    if return_indices:
        order = argsort(aux, kind="stable")
        aux = take(aux, order)
    else:
        aux = sort(aux)
    if aux.size < 2:
        mask = ndarray._empty((0,), np.dtype(bool))
        head = aux[:0]
    else:
        mask = _uf("equal")(aux[1:], aux[:-1])
        head = aux[:-1]
    int1d = select(head, mask) if mask.size else head
    if not return_indices:
        return int1d
    if mask.size:
        i1 = select(order[:-1], mask)
        i2 = _uf("subtract")(select(order[1:], mask), a.size)
    else:
        i1 = i2 = ndarray._empty((0,), _I64)
    if not assume_unique:
        i1, i2 = take(ind1, i1), take(ind2, i2)
    return int1d, i1, i2


def union1d(ar1, ar2):
    """The sorted unique values in either array (numpy.union1d)."""
    return unique(_concat(_gpu(ar1, "union1d"), _gpu(ar2, "union1d")))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The unique values of ``ar1`` not in ``ar2`` (numpy.setdiff1d), sorted unless
    ``assume_unique``."""
    a, b = _gpu(ar1, "setdiff1d"), _gpu(ar2, "setdiff1d")
    if assume_unique:
        a = _flat(a)
    else:
        a, b = unique(a), unique(b)
    return select(a, _isin_flat(a, b, True)) if a.size else a


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values in exactly one of the arrays (numpy.setxor1d)."""
    from .sort import sort

    a, b = _gpu(ar1, "setxor1d"), _gpu(ar2, "setxor1d")
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = _concat(a, b)
    if aux.size == 0:
        return aux
    aux = sort(aux)
    n = aux.size
    flag = ndarray._empty((n + 1,), np.dtype(bool))
    assign(flag[:1], True)
    assign(flag[n:], True)
    if n > 1:
        _uf("not_equal")(aux[1:], aux[:-1], out=flag[1:n])
    return select(aux, _uf("logical_and")(flag[1:], flag[:-1]))
