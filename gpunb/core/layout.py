"""View arithmetic for gpunb arrays: pure functions on shapes and byte strides.

A gpunb array is a view ``(base buffer, byte offset, shape, strides in bytes, dtype)``. Every
computation on that tuple (indexing, reshaping, broadcasting, transposing, collapsing dimensions
for kernels, bounds and overlap) lives here, free of any GPU code, so that it is tested on the CPU
against NumPy. The rules and error messages follow NumPy 2.x.
"""

from __future__ import annotations

import math
import operator

import numpy as np
from numpy.exceptions import AxisError

__all__ = [
    "AdvancedIndexError", "c_strides", "f_strides", "is_c_contiguous", "is_f_contiguous",
    "normalize_index", "basic_index", "broadcast_error", "broadcast_shapes", "broadcast_to",
    "as_shape", "new_shape", "resolve_shape", "reshape", "normalize_axis", "normalize_axes",
    "transpose", "swapaxes", "squeeze", "expand_dims", "collapse", "layout_class", "byte_extent",
    "may_share_memory",
]

# NumPy indexes with npy_intp; Python ints outside it are not valid indices there.
_INTP_MIN, _INTP_MAX = -(2**63), 2**63 - 1
_INVALID_INDEX = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                  "integer or boolean arrays are valid indices")


class AdvancedIndexError(IndexError):
    """An index NumPy treats as advanced (integer or boolean arrays, lists, bools): gpunb
    supports only basic indexing (integers, slices, Ellipsis, newaxis) for now."""


def _shape_str(shape, ending=""):
    """A shape as NumPy's C code prints it in errors (``convert_shape_to_string``).

    Negative entries print as ``newaxis`` and leading ones are dropped; only a 1-d shape gets
    the trailing comma, ``(4,)``. Reproduced so messages match NumPy's exactly.
    """
    i = next((i for i, d in enumerate(shape) if d >= 0), len(shape))
    parts = [str(shape[i])] + ["newaxis" if d < 0 else str(d) for d in shape[i + 1:]] \
        if i < len(shape) else []
    return "(" + ",".join(parts) + ("," if len(shape) == 1 and parts else "") + ")" + ending


def as_shape(shape):
    """``shape`` as a tuple of Python ints (a bare integer means a 1-d shape, as in NumPy)."""
    return tuple(map(operator.index, shape)) if hasattr(shape, "__iter__") else \
        (operator.index(shape),)


def new_shape(shape):
    """The shape of a new array: :func:`as_shape`, with NumPy's error for a negative extent."""
    shape = as_shape(shape)
    for s in shape:
        if s < 0:
            raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


# -- contiguous layouts -----------------------------------------------------------------------

def c_strides(shape, itemsize):
    """Strides in bytes of a C-ordered (row-major) array of ``shape``.

    Zero-length dimensions do not scale the strides of the outer ones, as in NumPy's
    ``_array_fill_strides`` (so ``(2, 0, 3)`` with itemsize 8 gives ``(24, 24, 8)``; a freshly
    allocated empty NumPy array has all strides 0 instead, which is equally valid).
    """
    strides, step = [0] * len(shape), itemsize
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = step
        step *= shape[i] or 1
    return tuple(strides)


def f_strides(shape, itemsize):
    """Strides in bytes of a Fortran-ordered (column-major) array of ``shape``."""
    return c_strides(shape[::-1], itemsize)[::-1]


def is_c_contiguous(shape, strides, itemsize):
    """Whether the view is C-contiguous under NumPy's rules: strides of size-1 dimensions are
    ignored and an array with no elements is contiguous."""
    if 0 in shape:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def is_f_contiguous(shape, strides, itemsize):
    """Whether the view is Fortran-contiguous under NumPy's rules (see `is_c_contiguous`)."""
    return is_c_contiguous(shape[::-1], strides[::-1], itemsize)


# -- basic indexing ---------------------------------------------------------------------------

def _int_index(item):
    """``item`` as an integer index, or raise NumPy's error for a non-basic index."""
    # bools are ints to Python but boolean masks to NumPy; arrays (even 0-d) make copies there.
    if not isinstance(item, (bool, np.bool_, np.ndarray)):
        if hasattr(item, "__index__"):
            if not _INTP_MIN <= operator.index(item) <= _INTP_MAX:
                raise IndexError(_INVALID_INDEX)
            return operator.index(item)
        if isinstance(item, (str, bytes)) or not any(hasattr(item, a) for a in (
                "__iter__", "__array__", "__array_interface__", "__cuda_array_interface__")):
            raise IndexError(_INVALID_INDEX)  # float, str, ...: invalid in NumPy as well
    raise AdvancedIndexError(
        f"advanced indexing (an index of type {type(item).__name__}) is not supported: gpunb "
        "supports only basic indexing (integers, slices, Ellipsis, newaxis/None) for now")


def normalize_index(index, shape):
    """Resolve a basic index against ``shape``.

    Returns
    -------
    list
        In order: an ``int`` in ``range(n)`` for an integer index (the axis is dropped), a
        ``range`` of the selected positions for a slice or an axis kept whole (Ellipsis,
        trailing axes), ``None`` for a new axis. Each source axis appears once.

    Raises
    ------
    AdvancedIndexError
        For lists, arrays and booleans. Other errors are NumPy's (``IndexError``; ``ValueError``
        or ``TypeError`` from ``slice.indices`` for a zero step or non-integer bounds).
    """
    items = index if isinstance(index, tuple) else (index,)
    parsed, used, ellipsis = [], 0, False
    # First classify every item in order, as NumPy's prepare_index does, so that the first
    # offending item decides the error.
    for item in items:
        if item is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
        elif item is not None and not isinstance(item, slice):
            item = _int_index(item)
        parsed.append(item)
        used += item is not None and item is not Ellipsis
    ndim = len(shape)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {used} were indexed")
    if not ellipsis:
        parsed.append(Ellipsis)  # axes not indexed are kept whole
    out, axis = [], 0
    for item in parsed:
        if item is None:
            out.append(None)
            continue
        if item is Ellipsis:
            out += [range(n) for n in shape[axis:axis + ndim - used]]
            axis += ndim - used
            continue
        n = shape[axis]
        if isinstance(item, slice):
            out.append(range(*item.indices(n)))
        elif -n <= item < n:
            out.append(item + n if item < 0 else item)
        else:
            raise IndexError(f"index {item} is out of bounds for axis {axis} with size {n}")
        axis += 1
    return out


def basic_index(shape, strides, itemsize, index):
    """Apply a basic index (int, slice, Ellipsis, None or a tuple of them) to a view.

    ``itemsize`` is not needed (strides carry it) but kept for a uniform signature. Returns
    ``(new_shape, new_strides, offset)``, the offset in bytes from the view's start.
    """
    new_shape, new_strides, offset, axis = [], [], 0, 0
    for item in normalize_index(index, shape):
        if item is None:
            new_shape.append(1)
            new_strides.append(0)  # NumPy gives new axes stride 0 too
            continue
        stride = strides[axis]
        axis += 1
        if isinstance(item, int):
            offset += item * stride
        else:  # NumPy points an empty slice at the view start with step 1
            offset += item.start * stride if item else 0
            new_shape.append(len(item))
            new_strides.append(item.step * stride if item else stride)
    return tuple(new_shape), tuple(new_strides), offset


# -- broadcasting -----------------------------------------------------------------------------

def broadcast_error(shapes):
    """The ``ValueError`` (returned, not raised) of a NumPy ufunc whose operands do not
    broadcast: "operands could not be broadcast together with shapes (2,3) (4,) "."""
    listed = "".join(_shape_str(s, " ") for s in shapes)
    return ValueError(f"operands could not be broadcast together with shapes {listed}")


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to, under NumPy's rules.

    Raises `broadcast_error` (a ufunc's message rather than ``np.broadcast_shapes``'s, since
    gpunb's operators are what report it).
    """
    shapes = [as_shape(s) for s in shapes]
    if any(d < 0 for s in shapes for d in s):
        raise ValueError("negative dimensions are not allowed")
    ndim = max(map(len, shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if out[i] != d and d != 1:
                if out[i] != 1:
                    raise broadcast_error(shapes)
                out[i] = d
    return tuple(out)


def broadcast_to(shape, strides, new_shape):
    """Strides of the view broadcast to ``new_shape``: 0 on new and size-1 axes (even those
    that stay size 1), as ``np.broadcast_to``, whose error messages are reproduced."""
    shape, new_shape = tuple(shape), as_shape(new_shape)
    if not new_shape and shape:
        raise ValueError("cannot broadcast a non-scalar to a scalar array")
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    if len(shape) > len(new_shape):
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    out = [0] * (len(new_shape) - len(shape))
    for n, s, m in zip(shape, strides, new_shape[len(out):]):
        if n != 1 and n != m:
            raise ValueError(
                "operands could not be broadcast together with remapped shapes "
                f"[original->remapped]: {_shape_str(shape, ' ')} and requested shape "
                f"{_shape_str(new_shape)}")
        out.append(0 if n == 1 else s)
    return tuple(out)


# -- reshaping --------------------------------------------------------------------------------

def resolve_shape(size, new_shape):
    """``new_shape`` with its one unknown (negative) entry filled in, checked against ``size``.

    Raises NumPy's ``ValueError``: "can only specify one unknown dimension" or "cannot reshape
    array of size 6 into shape (4,)".
    """
    dims = list(as_shape(new_shape))
    unknown, known = None, 1
    def mismatch():     # made only when raised: every reshape passes here
        return ValueError(f"cannot reshape array of size {size} into shape {_shape_str(dims)}")

    for i, d in enumerate(dims):
        if d < 0:  # NumPy takes any negative entry, not only -1, as the unknown one
            if unknown is not None:
                raise ValueError("can only specify one unknown dimension")
            unknown = i
        else:
            known *= d
            if known > _INTP_MAX:
                raise mismatch()
    if unknown is not None:
        if known == 0 or size % known:
            raise mismatch()
        dims[unknown] = size // known
    elif known != size:
        raise mismatch()
    return tuple(dims)


def _nocopy_strides(shape, strides, itemsize, new_shape, fortran):
    """NumPy's ``_attempt_nocopy_reshape``: strides for ``new_shape`` or None.

    Only called for arrays that are not contiguous in the requested order, hence of size >= 2
    and without zero-length axes. Old and new axes are matched in groups of equal products;
    a group of old axes must be contiguous among itself to be re-split.
    """
    odims = [n for n in shape if n != 1]  # size-1 axes: their strides are free
    ostr = [s for n, s in zip(shape, strides) if n != 1]
    nnew, nold, new = len(new_shape), len(odims), [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < nnew and oi < nold:
        np_, op = new_shape[ni], odims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= odims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if (ostr[ok + 1] != odims[ok] * ostr[ok] if fortran
                    else ostr[ok] != odims[ok + 1] * ostr[ok + 1]):
                return None
        if fortran:
            new[ni] = ostr[oi]
            for nk in range(ni + 1, nj):
                new[nk] = new[nk - 1] * new_shape[nk - 1]
        else:
            new[nj - 1] = ostr[oj - 1]
            for nk in range(nj - 1, ni, -1):
                new[nk - 1] = new[nk] * new_shape[nk]
        ni, oi, nj, oj = nj, oj, nj + 1, oj + 1
    # Trailing size-1 axes of the new shape.
    last = itemsize if ni == 0 else new[ni - 1] * (new_shape[ni - 1] if fortran else 1)
    return tuple(new[:ni]) + (last,) * (nnew - ni)


def reshape(shape, strides, itemsize, new_shape, order="C"):
    """Strides of ``new_shape`` when the reshape can be a view, else None (a copy is needed).

    ``new_shape`` may hold one unknown entry (-1); `resolve_shape` gives the resulting shape.
    Follows ``ndarray.reshape(new_shape, order=order, copy=False)`` of NumPy 2, strides
    included: an unchanged shape keeps the strides, a contiguous array gets fresh contiguous
    strides, any other goes through NumPy's no-copy algorithm.
    """
    order = order.upper() if isinstance(order, str) else order
    if order == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    if order not in ("C", "F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    shape, strides, requested = tuple(shape), tuple(strides), as_shape(new_shape)
    if requested == shape:
        return strides
    dims = resolve_shape(math.prod(shape), requested)
    c = is_c_contiguous(shape, strides, itemsize)
    f = is_f_contiguous(shape, strides, itemsize)
    if order == "A":
        order = "F" if f and not c else "C"
    if order == "C" and c:
        return c_strides(dims, itemsize)
    if order == "F" and f:
        return f_strides(dims, itemsize)
    return _nocopy_strides(shape, strides, itemsize, dims, order == "F")


# -- axes -------------------------------------------------------------------------------------

def view_as(shape, strides, itemsize, new_itemsize):
    """``(shape, strides)`` of a view of the same bytes as items of ``new_itemsize`` bytes
    (NumPy's ``ndarray.view(dtype)``: the last axis changes length, and must be contiguous,
    with its bytes a multiple of the new size when that is larger)."""
    if new_itemsize == itemsize:
        return shape, strides
    if not shape:
        raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize "
                         "is unchanged")
    if shape[-1] != 1 and math.prod(shape) != 0 and strides[-1] != itemsize:
        raise ValueError("To change to a dtype of a different size, the last axis must be "
                         "contiguous")
    if new_itemsize < itemsize:
        if itemsize % new_itemsize:
            raise ValueError("When changing to a smaller dtype, its size must be a divisor of "
                             "the size of original dtype")
        last = shape[-1] * (itemsize // new_itemsize)
    else:
        if shape[-1] * itemsize % new_itemsize:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of "
                             "the total size in bytes of the last axis of the array.")
        last = shape[-1] * itemsize // new_itemsize
    return shape[:-1] + (last,), strides[:-1] + (new_itemsize,)


def normalize_axis(axis, ndim, msg_prefix=None):
    """``axis`` in ``range(ndim)``, negative axes counting from the end; NumPy's ``AxisError``
    ("axis 2 is out of bounds for array of dimension 2", after ``msg_prefix: ``) if out of it."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim, msg_prefix)
    return axis + ndim if axis < 0 else axis


def normalize_axes(axis, ndim):
    """The axes named by ``axis`` (None: all, an int, or a tuple of ints) as a tuple.

    As NumPy's reductions: every axis is checked against the bounds (``AxisError``) before
    duplicates raise ``ValueError("duplicate value in 'axis'")``; for a 0-d array a single
    integer axis of 0 or -1 is accepted and names no axis (NumPy's backwards-compatibility rule).
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required")
    if not isinstance(axis, tuple):
        axis = operator.index(axis)
        if ndim == 0 and axis in (0, -1):
            return ()
        axis = (axis,)
    out = tuple(normalize_axis(a, ndim) for a in axis)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return out


def transpose(shape, strides, axes=None):
    """``(shape, strides)`` with axes permuted; None reverses them, as ``ndarray.transpose``."""
    shape, strides = tuple(shape), tuple(strides)
    axes = range(len(shape) - 1, -1, -1) if axes is None else as_shape(axes)
    if len(axes) != len(shape):
        raise ValueError("axes don't match array")
    perm = []
    for a in axes:
        a = normalize_axis(a, len(shape))
        if a in perm:
            raise ValueError("repeated axis in transpose")
        perm.append(a)
    return tuple(shape[a] for a in perm), tuple(strides[a] for a in perm)


def swapaxes(shape, strides, a, b):
    """``(shape, strides)`` with axes ``a`` and ``b`` exchanged, as ``ndarray.swapaxes``."""
    a = normalize_axis(a, len(shape), "axis1")
    b = normalize_axis(b, len(shape), "axis2")
    perm = list(range(len(shape)))
    perm[a], perm[b] = b, a
    return transpose(shape, strides, perm)


def squeeze(shape, strides, axis=None):
    """``(shape, strides)`` without the size-1 axes named by ``axis`` (None: all of them)."""
    if axis is None:
        drop = {i for i, n in enumerate(shape) if n == 1}
    elif not isinstance(axis, tuple):
        drop = set(normalize_axes(axis, len(shape)))
    else:
        drop = set()
        for a in axis:  # unlike reductions, squeeze checks bounds and duplicates item by item
            if normalize_axis(a, len(shape)) in drop:
                raise ValueError("duplicate value in 'axis'")
            drop.add(normalize_axis(a, len(shape)))
    if any(shape[a] != 1 for a in drop):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    keep = [i for i in range(len(shape)) if i not in drop]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep)


def expand_dims(shape, strides, axis):
    """``(shape, strides)`` with new size-1 axes at positions ``axis`` (int or tuple).

    Positions refer to the result, as in ``np.expand_dims``; the new axes get stride 0 like
    ``np.newaxis`` (NumPy, going through reshape, may pick other, equally valid strides).
    """
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    ndim = len(axis) + len(shape)
    axes = [normalize_axis(a, ndim) for a in axis]
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    rest = iter(zip(shape, strides))
    pairs = [(1, 0) if i in axes else next(rest) for i in range(ndim)]
    return tuple(n for n, _ in pairs), tuple(s for _, s in pairs)


# -- kernels: collapsing, layout classes, extents ---------------------------------------------

def collapse(shape, strides_list):
    """Merge adjacent axes that are contiguous with each other in every operand.

    Kernels index with fewer dimensions this way. Axes ``i`` and ``i + 1`` merge iff for every
    operand ``strides[i] == strides[i + 1] * shape[i + 1]``; size-1 axes are dropped first.
    Axes are never reordered, so elements are visited in the same order. Returns ``(shape,
    strides_list)`` with at least one axis: ``(1,)`` for one element, ``(0,)`` for none.
    """
    strides_list = [tuple(s) for s in strides_list]
    if 0 in shape:
        return (0,), [(0,) for _ in strides_list]
    keep = [i for i, n in enumerate(shape) if n != 1]
    if not keep:
        return (1,), [(0,) for _ in strides_list]
    dims = [shape[keep[0]]]
    out = [[s[keep[0]]] for s in strides_list]
    for i in keep[1:]:
        n = shape[i]
        # Greedy merging is optimal: whether an axis merges with the block before it depends
        # only on the block's outer stride, which merging does not change.
        if all(o[-1] == s[i] * n for o, s in zip(out, strides_list)):
            dims[-1] *= n
            for o, s in zip(out, strides_list):
                o[-1] = s[i]
        else:
            dims.append(n)
            for o, s in zip(out, strides_list):
                o.append(s[i])
    return tuple(dims), [tuple(o) for o in out]


def layout_class(shape, views) -> tuple[str, int]:
    """The layout class of an elementwise launch over ``shape``: ``('contiguous', 1)`` if every
    view is C-contiguous with that shape, else ``('strided', ndim)`` with the number of
    dimensions left after `collapse`.

    ``views`` are ``(shape, strides, itemsize)`` of the operands broadcast to ``shape`` and of
    the outputs, so a broadcast operand (a stride 0 on an axis longer than 1) is 'strided'.
    0-d and empty shapes are 'contiguous'.
    """
    views = list(views)
    if all(s == tuple(shape) and is_c_contiguous(s, st, n) for s, st, n in views):
        return "contiguous", 1
    return "strided", len(collapse(shape, [st for _, st, _ in views])[0])


def byte_extent(shape, strides, itemsize):
    """``(low, high)``: lowest and one-past-highest byte offsets the view touches, relative to
    its start (``low < 0`` with negative strides); ``(0, 0)`` for a view with no elements."""
    if 0 in shape:
        return 0, 0
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return low, high + itemsize


def may_share_memory(extent_a, base_a, extent_b, base_b):
    """Whether two views' byte intervals overlap (bounds only, like ``np.may_share_memory``).

    ``extent_*`` come from `byte_extent`, ``base_*`` are the views' start addresses (or offsets
    in one buffer). Empty views share nothing.
    """
    lo_a, hi_a = base_a + extent_a[0], base_a + extent_a[1]
    lo_b, hi_b = base_b + extent_b[0], base_b + extent_b[1]
    return lo_a < hi_a and lo_b < hi_b and lo_a < hi_b and lo_b < hi_a
