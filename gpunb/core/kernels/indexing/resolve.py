"""Advanced indices resolved with NumPy's rules into what the gather/scatter kernels take.

``x[index]`` with integer or boolean arrays (gpunb arrays, NumPy arrays, lists), mixed with
integers, slices, ``newaxis`` and ``Ellipsis``: the index arrays broadcast together to a shape
``B``; the result's shape is the sliced (and new) axes with ``B`` in place of the advanced
ones when those are next to each other in the index, else ``B`` first (NumPy's rule). A
boolean mask of ``k`` dimensions stands for its ``nonzero()``: ``k`` integer arrays.

Host index data (lists, NumPy arrays, boolean masks) is checked on the host with NumPy's
messages and uploaded (small, as CuPy does). GPU index arrays are not read: their bounds
are checked by the kernels (``mode='raise'``, see :mod:`.run`). A GPU boolean mask needs its
count of true elements to size the result: that reads one number back (a synchronization,
as in CuPy and NumPy-on-GPU libraries).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ... import layout, memo
from ...interop import from_cuda_array_interface
from ...ndarray import ndarray
from ...runtime import memory
from .plan import Index

INVALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
           "boolean arrays are valid indices")
NOT_INTEGER = "arrays used as indices must be of integer (or boolean) type"


@dataclass
class Resolved:
    """``x[index]`` as a kernel sees it: ``base`` (``x``'s dtype, pointer at the first
    selected element, advanced axes at position 0), the result ``shape``, ``x``'s byte
    stride along each result axis (``strides``, 0 on the broadcast axes ``B``) and the index
    arrays with their :class:`~.plan.Index` (strides over the result)."""

    base: ndarray
    shape: tuple
    strides: tuple
    indices: list


def upload(host: np.ndarray) -> ndarray:
    """A small host array (index data) copied to a new GPU array."""
    shape = host.shape
    host = np.ascontiguousarray(host)        # (0-d comes back 1-d: keep the shape)
    out = ndarray._empty(shape, host.dtype)
    memory.copy_to_device(out.data.ptr, host)
    return out


def check_bounds(host: np.ndarray, n: int, axis: int) -> None:
    """NumPy's IndexError for the first out-of-bounds entry of host index data."""
    if host.size == 0:
        return
    bad = (host < -n) | (host >= n)
    if bad.any():
        v = host.reshape(-1)[np.flatnonzero(bad)[0]]
        raise IndexError(f"index {v} is out of bounds for axis {axis} with size {n}")


def gpu_or_none(item):
    if isinstance(item, ndarray):
        return item
    if hasattr(item, "__cuda_array_interface__"):
        return from_cuda_array_interface(item)
    return None


def classify(item):
    """One index item as ``(kind, value)``: 'new', 'ellipsis', 'slice', 'int', 'array'
    (integer: GPU or host array) or 'mask' (boolean: GPU or host array)."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        return "mask", np.asarray(item)
    g = gpu_or_none(item)
    if g is not None:
        if g.dtype.kind == "b":
            return "mask", g
        if g.dtype.kind not in "iu":
            raise IndexError(NOT_INTEGER)
        return "array", g
    if isinstance(item, np.ndarray) or (not isinstance(item, (str, bytes))
                                        and hasattr(item, "__iter__") or hasattr(item, "__array__")):
        h = np.asarray(item)
        if h.dtype.kind == "b":
            return "mask", h
        if h.dtype.kind in "iu":
            if h.ndim == 0 and isinstance(item, np.ndarray):
                return "int", int(h)          # NumPy: a 0-d integer array is an integer
            return "array", h
        if h.size == 0 and not isinstance(item, np.ndarray):
            return "array", h.astype(np.intp)      # [] indexes with intp
        if isinstance(item, np.ndarray):      # a list of floats is "not an index" instead
            raise IndexError(NOT_INTEGER)
        raise IndexError(INVALID)
    if hasattr(item, "__index__"):
        v = operator.index(item)
        if not -(2**63) <= v < 2**63:
            raise IndexError(INVALID)
        return "int", v
    raise IndexError(INVALID)


def _mask_mismatch(axis, n, m):
    return IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis "
                      f"is {n} but size of corresponding boolean axis is {m}")


def _false_mask(mask, shape):
    """A mask with no elements whose shape is not ``shape`` selects nothing, as in NumPy
    (``np.ones(1)[np.array([], bool)]`` is empty): an all-False mask of ``shape`` stands for
    it; any other mask is returned as it is."""
    shape = tuple(shape)
    if mask.size != 0 or tuple(mask.shape) == shape:
        return mask
    if isinstance(mask, np.ndarray):
        return np.zeros(shape, bool)
    out = ndarray._empty(shape, np.dtype(bool))
    if out.nbytes:
        memory.fill_bytes(out.data.ptr, 0, out.nbytes)
    return out


def _mask_indices(mask, shape, strides, axis0):
    """The integer index arrays (with the axes' extents and strides) standing for a boolean
    mask over ``shape``: host masks by NumPy's nonzero, GPU masks by the stream compaction."""
    mask = _false_mask(mask, shape)
    for j, (n, m) in enumerate(zip(shape, mask.shape)):
        if n != m:
            raise _mask_mismatch(axis0 + j, n, m)
    k = mask.ndim
    if isinstance(mask, np.ndarray):
        return [(p, n, s, axis0 + j) for j, (p, n, s) in enumerate(zip(np.nonzero(mask), shape, strides))]
    from ..scan.run import nonzero_flat

    merged = layout.collapse(shape, [strides])
    if k == 1 or len(merged[0]) == 1 and 0 not in shape:   # the mask's axes form one: flat
        flat = nonzero_flat(mask)
        return [(flat, merged[0][0] if k > 1 else shape[0], merged[1][0][0] if k > 1 else strides[0], axis0)]
    from ..scan.run import nonzero_nd

    rows = nonzero_nd(mask)      # (k, count): one index array per axis of the mask
    return [(rows[j], shape[j], strides[j], axis0 + j) for j in range(k)]


def resolve(x: ndarray, index) -> Resolved:
    """``x[index]`` for an index with at least one array, list or boolean (NumPy's rules and
    errors)."""
    items = index if isinstance(index, tuple) else (index,)
    parsed = [classify(it) for it in items]
    ndim = x.ndim
    used, ellipses = 0, 0
    for kind, v in parsed:
        if kind == "ellipsis":
            ellipses += 1
            if ellipses > 1:
                raise IndexError("an index can only have a single ellipsis ('...')")
        elif kind == "mask":
            used += v.ndim
        elif kind != "new":
            used += 1
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    if not ellipses:
        parsed.append(("ellipsis", None))
    has_arrays = any(k in ("array", "mask") for k, _ in parsed)
    offset, axis = 0, 0
    dims = []             # result axes other than B: (extent, stride, item number)
    arrays = []           # (array, extent, stride, axis)
    positions = []        # item numbers of the advanced items
    shape, strides = x.shape, x.strides
    for pos, (kind, v) in enumerate(parsed):
        if kind == "new":
            dims.append((1, 0, pos))
        elif kind in ("slice", "ellipsis"):
            for sl in ([v] if kind == "slice" else [slice(None)] * (ndim - used)):
                r = range(*sl.indices(shape[axis]))
                if len(r):
                    offset += r.start * strides[axis]
                dims.append((len(r), r.step * strides[axis], pos))
                axis += 1
        elif kind == "int":
            n = shape[axis]
            if not -n <= v < n:
                raise IndexError(f"index {v} is out of bounds for axis {axis} with size {n}")
            offset += (v + n if v < 0 else v) * strides[axis]
            axis += 1
            if has_arrays:
                positions.append(pos)
        elif kind == "array":
            n = shape[axis]
            if isinstance(v, np.ndarray):
                check_bounds(v, n, axis)
            arrays.append((v, n, strides[axis], axis))
            positions.append(pos)
            axis += 1
        else:     # mask
            positions.append(pos)
            if v.ndim == 0:     # True/False: a new axis of length 1, indexed by [0] or []
                on = bool(v) if isinstance(v, np.ndarray) else bool(v.get())
                arrays.append((np.zeros(1 if on else 0, np.intp), 1, 0, axis))
            else:
                arrays += _mask_indices(v, shape[axis:axis + v.ndim], strides[axis:axis + v.ndim], axis)
                axis += v.ndim
    try:
        bshape = layout.broadcast_shapes(*[a.shape for a, *_ in arrays])
    except ValueError:
        listed = "".join(layout._shape_str(a.shape, " ") for a, *_ in arrays)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {listed}") from None
    # B replaces the advanced items where they are next to each other in the index, else
    # it comes first (NumPy's rule: a slice, Ellipsis or newaxis between them separates them).
    consecutive = all(b - a == 1 for a, b in zip(positions, positions[1:]))
    at = sum(1 for d in dims if d[2] < positions[0]) if positions and consecutive else 0
    nb = len(bshape)
    out_shape = tuple(d[0] for d in dims[:at]) + bshape + tuple(d[0] for d in dims[at:])
    out_strides = tuple(d[1] for d in dims[:at]) + (0,) * nb + tuple(d[1] for d in dims[at:])
    indices = []
    for a, n, step, ax in arrays:
        if isinstance(a, np.ndarray):      # host index data, checked: uploaded (small)
            a = upload(a)
        bs = layout.broadcast_to(a.shape, a.strides, bshape)
        t = (0,) * at + bs + (0,) * (len(dims) - at)
        indices.append((a, Index(t, n, step, ax)))
    base = x._derive(x.shape, x.strides, offset) if offset else x
    return Resolved(base, out_shape, out_strides, indices)


def index_array(obj, n: int, axis: int, mode: str, what: str = "indices") -> ndarray:
    """``take``/``put``-style index data as a GPU integer array: GPU arrays as they are
    (floats truncated, as NumPy's same-kind cast), host data (a scalar, list, NumPy array)
    checked on the host for ``mode='raise'`` and uploaded."""
    g = gpu_or_none(obj)
    if g is not None:
        if g.dtype.kind not in "iu":
            if g.dtype.kind == "c":
                raise TypeError(f"Cannot cast array data from {g.dtype!r} to dtype('int64') "
                                "according to the rule 'same_kind'")
            g = g.astype(np.int64)
        return g
    h = np.asarray(obj)
    if h.dtype.kind not in "iu":
        if h.dtype.kind in "c" or not np.can_cast(h.dtype, np.intp, "same_kind") and h.dtype.kind not in "fb":
            raise TypeError(f"Cannot cast array data from {h.dtype!r} to dtype('int64') "
                            "according to the rule 'same_kind'")
        h = h.astype(np.intp)
    if mode == "raise" and n:
        check_bounds(h, n, axis)
    return upload(h)


def check_mode(mode) -> str:
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return mode


# -- the operations ---------------------------------------------------------------------------

_simple_memo = memo.table("indexing.simple")


def simple(x: ndarray, index) -> Resolved | None:
    """``x[idx]`` for one GPU integer array (the common case), without the general parser:
    its layout memoized; None for any other index."""
    if index.__class__ is not ndarray or index._dtype.kind not in "iu" or not x._shape:
        return None
    key = (x._shape, x._strides, index._shape, index._strides)
    hit = _simple_memo.get(key)
    if hit is None:
        nb, rest = len(index._shape), len(x._shape) - 1
        hit = _simple_memo[key] = (index._shape + x._shape[1:], (0,) * nb + x._strides[1:],
                                   Index(index._strides + (0,) * rest, x._shape[0], x._strides[0], 0))
    return Resolved(x, hit[0], hit[1], [(index, hit[2])])


def gather(x: ndarray, index) -> ndarray:
    """``x[index]`` for an advanced index: a new C-ordered array."""
    from .run import launch

    r = simple(x, index)
    if r is not None:
        out = ndarray._empty(r.shape, x._dtype)
        launch("gather", x, out, r.indices, r.shape, r.strides, out._strides)
        return out
    mask = _single_gpu_mask(x, index)
    if mask is not None and mask.ndim == x.ndim:      # x[mask]: one stream compaction
        from ..scan.run import select

        return select(x, mask)
    r = resolve(x, index)
    out = ndarray._empty(r.shape, x.dtype)
    launch("gather", r.base, out, r.indices, r.shape, r.strides, out.strides)
    return out


def _single_gpu_mask(x, index):
    """The GPU boolean mask when ``index`` is just that (``x[mask]``), else None."""
    if isinstance(index, tuple):
        if len(index) != 1:
            return None
        index = index[0]
    g = gpu_or_none(index) if not isinstance(index, (np.ndarray, list, bool, np.bool_)) else None
    if g is None or g.dtype.kind != "b" or g.ndim == 0 or g.ndim > x.ndim:
        return None
    g = _false_mask(g, x.shape[:g.ndim])
    for j, (n, m) in enumerate(zip(x.shape, g.shape)):
        if n != m:
            raise _mask_mismatch(j, n, m)
    return g


def _scalar(value, dt):
    """A scalar assigned into ``dt`` as NumPy's setitem converts it."""
    if isinstance(value, np.ndarray):
        value = value[()]
    if isinstance(value, complex) and dt.kind != "c":
        value = value.real
    return dt.type(value)


def scatter(x: ndarray, index, value) -> None:
    """``x[index] = value`` for an advanced index. Where an index repeats, which of its
    values lands is unspecified (one of them does)."""
    from ...args import as_gpu, scalar_type
    from ..elementwise.run import overlaps
    from .run import launch

    v = as_gpu(value, "the assigned value")
    if v is None:
        scalar_type(value, "the assigned value")
        value = _scalar(value, x.dtype)
        mask = _single_gpu_mask(x, index)
        if mask is not None:       # x[mask] = scalar: a masked fill, no compaction
            ks = mask.strides + (0,) * (x.ndim - mask.ndim)
            launch("fill", x, None, [], x.shape, x.strides, (0,) * x.ndim, mask=mask,
                   mask_strides=ks, value=value)
            return
        r = simple(x, index) or resolve(x, index)
        launch("fill", r.base, None, r.indices, r.shape, r.strides, (0,) * len(r.shape), value=value)
        return
    r = simple(x, index) or resolve(x, index)
    try:
        vs = layout.broadcast_to(v.shape, v.strides, r.shape)
    except ValueError:
        only = index[0] if isinstance(index, tuple) and len(index) == 1 else index
        if getattr(only, "dtype", None) == np.bool_ and v.ndim == 1 and len(r.shape) == 1:
            raise ValueError(f"NumPy boolean array indexing assignment cannot assign {v.shape[0]} "
                             f"input values to the {r.shape[0]} output values where the mask "
                             "is true") from None
        raise ValueError(f"shape mismatch: value array of shape {layout._shape_str(v.shape)} could "
                         "not be broadcast to indexing result of shape "
                         f"{layout._shape_str(r.shape)}") from None
    if overlaps(v, x):
        v = v.copy()
        vs = layout.broadcast_to(v.shape, v.strides, r.shape)
    launch("scatter", r.base, v, r.indices, r.shape, r.strides, vs)


def accumulate(x: ndarray, index, value, op: str, loop) -> None:
    """``ufunc.at``: ``x[index] = op(x[index], value)`` unbuffered: every repeated index
    applies its value (atomics), in an unspecified order."""
    from .run import launch

    r = resolve(x, index)
    try:
        vs = layout.broadcast_to(value.shape, value.strides, r.shape)
    except ValueError:
        raise ValueError("array is not broadcastable to correct shape") from None
    launch("at", r.base, value, r.indices, r.shape, r.strides, vs, op=op, loop=loop)
