"""Scans and stream compaction, run: load the kernels of :mod:`.codegen` and launch them.

:func:`scan` is ``cumsum``/``cumprod`` and their NaN forms along one axis. :func:`select`
(``x[mask]``), :func:`nonzero_flat` (``flatnonzero``) and :func:`nonzero_nd` (``nonzero``)
are the stream compactions; their output size is read back from the GPU (8 bytes, one
synchronization), as CuPy and PyTorch do.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ... import memo
from ...ndarray import ndarray
from ...runtime import memory
from .. import loader
from ..elementwise.run import assign, overlaps
from ..execute import Step, execute
from . import codegen as cg
from .plan import cols_grid, plan, tiles

_I64 = np.dtype("int64")
_scan_kernels = memo.table("scan.kernels")     # (src, acc, dst, op, nan, exclusive) -> its IR
_compact_kernels = memo.table("scan.compact_kernels")     # (mask, what, value dtype) -> its IR
_U8 = np.dtype("uint8")
_vp, _i64, _sz, _int = ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t, ctypes.c_int


def accumulate_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype ``cumsum``/``cumprod`` accumulate in by default (NumPy's ``add.accumulate``):
    bool and signed integers narrower than 64 bits in int64, unsigned ones in uint64."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return _I64
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype("uint64")
    return dtype


def _contiguous(x: ndarray) -> ndarray:
    return x if x._c_contiguous else x.copy()


def _state(ntiles: int, acc) -> tuple[ndarray | None, int]:
    """A tile-state buffer for a single pass of ``ntiles`` tiles (none for one tile)."""
    if ntiles <= 1:
        return None, 0
    nbytes = cg.state_bytes(ntiles, acc)
    return ndarray._empty((nbytes,), _U8), nbytes


def _ptr(a) -> _vp:
    return _vp(a.data.ptr if a is not None else 0)


# ---- scans ---------------------------------------------------------------------------------------

def scan(x: ndarray, axis: int, op: str, dtype=None, out: ndarray | None = None,
         nan: bool = False, exclusive: bool = False) -> ndarray:
    """The ``op`` (``'sum'`` or ``'prod'``) scan of ``x`` (ndim >= 1) along ``axis``
    (normalized), accumulated in ``dtype`` (default :func:`accumulate_dtype`) and stored in
    ``out`` (any strides, of ``x``'s shape: the caller checks) or a new C-contiguous array of
    the accumulation dtype. ``nan`` treats NaN as the identity; ``exclusive`` excludes each
    element from its own result."""
    acc = np.dtype(dtype) if dtype is not None else accumulate_dtype(x.dtype)
    dst = out.dtype if out is not None else acc
    direct = out is not None and out._c_contiguous and not (overlaps(out, x) and (
        out.data.ptr != x.data.ptr or out.strides != x.strides))
    res = out if direct else ndarray._empty(x.shape, dst)
    if x.size:
        src = _contiguous(x)
        spec = (src.dtype, acc, dst, op, nan and src.dtype.kind in "fc", exclusive)
        k = _scan_kernels.get(spec)
        if k is None:
            k = _scan_kernels[spec] = cg.ScanKernel(*spec)
        p = plan(x.shape, axis)
        if p.kind == "moved":          # a few long columns: scan them as rows
            moved = src.swapaxes(axis, -1).copy()
            tmp = ndarray._empty(moved.shape, dst)
            _launch(k, moved, tmp, plan(moved.shape, moved.ndim - 1))
            assign(res, tmp.swapaxes(axis, -1))
        else:
            _launch(k, src, res, p)
    if out is not None and res is not out:
        assign(out, res)
    return out if out is not None else res


def _launch(k: cg.ScanKernel, src: ndarray, dst: ndarray, p) -> None:
    lk = loader.get(cg, ("scan", k.src, k.acc, k.dst, k.op, k.nan, k.exclusive), lambda: k)
    f = lk.functions
    name = k.name
    if p.kind == "cols":
        grid = cols_grid(p.outer * p.inner, lk.sm_count, lk.occupancy[name + "_cols"])
        step = Step(f[name + "_cols"], (grid,), (cg.THREADS,),
                    (0, 1, _i64(p.outer), _i64(p.L), _i64(p.inner)))
        execute((step,), [_ptr(src), _ptr(dst)])
        return
    n = p.n
    ntiles = tiles(n, k.items)
    segmented = p.kind == "rows"
    state, nbytes = _state(ntiles, k.acc)
    extra = (_i64(p.L),) if segmented else ()
    steps = []
    if state is not None:
        steps.append(Step(f[name + ("_init_rows" if segmented else "_init_flat")],
                          (-(-ntiles // cg.THREADS),), (cg.THREADS,), (2, _sz(nbytes), _int(ntiles))))
    steps.append(Step(f[name + ("_rows" if segmented else "_flat")], (ntiles,), (cg.THREADS,),
                      (0, 1, _i64(n), *extra, 2, _sz(nbytes), _int(ntiles))))
    execute(steps, [_ptr(src), _ptr(dst), _ptr(state)])


# ---- stream compaction ---------------------------------------------------------------------------

def _compact(mask: ndarray, what: str, values: ndarray | None = None):
    """The loaded compaction kernel, the contiguous mask and values, the tile offsets (on
    the GPU) and the number of selected elements (read back)."""
    m = _contiguous(mask)
    v = _contiguous(values) if values is not None else None
    spec = (m.dtype, what, v.dtype if v is not None else _I64)
    k = _compact_kernels.get(spec)
    if k is None:
        k = _compact_kernels[spec] = cg.CompactKernel(*spec)
    lk = loader.get(cg, ("compact", k.mask, k.what, k.value), lambda: k)
    n = m.size
    ntiles = tiles(n, k.items)
    offsets = ndarray._empty((ntiles + 1,), _I64)
    state, nbytes = _state(ntiles, _I64)
    steps = []
    if state is not None:
        steps.append(Step(lk.functions[k.name + "_init"], (-(-ntiles // cg.THREADS),), (cg.THREADS,),
                          (2, _sz(nbytes), _int(ntiles))))
    steps.append(Step(lk.functions[k.name + "_count"], (ntiles,), (cg.THREADS,),
                      (0, _i64(n), 1, 2, _sz(nbytes), _int(ntiles))))
    execute(steps, [_ptr(m), _ptr(offsets), _ptr(state)])
    total = np.empty(1, _I64)
    memory.copy_to_host(total, offsets.data.ptr + ntiles * 8, None)
    return lk, k, m, v, offsets, ntiles, int(total[0])


def _scatter(lk, k, m, v, offsets, ntiles, out, nout, shape=()) -> None:
    nd = (_i64 * (1 + cg.MAX_NDIM))(len(shape), *shape, *([1] * (cg.MAX_NDIM - len(shape))))
    step = Step(lk.functions[k.name + "_scatter"], (ntiles,), (cg.THREADS,),
                (0, 1, _i64(m.size), 2, 3, _i64(nout), nd))
    execute((step,), [_ptr(m), _ptr(v if v is not None else m), _ptr(offsets), _ptr(out)])


def _check_mask(values: ndarray, mask: ndarray) -> None:
    if values.shape != mask.shape:
        raise ValueError(f"select needs a mask of the values' shape: {mask.shape} vs {values.shape}")


def select(values: ndarray, mask: ndarray) -> ndarray:
    """``values[mask]``: a new 1-D array of the elements of ``values`` where ``mask`` (any
    dtype; nonzero is true) is true, in C order. Both any strides, of the same shape."""
    _check_mask(values, mask)
    if mask.size == 0:
        return ndarray._empty((0,), values.dtype)
    lk, k, m, v, offsets, ntiles, total = _compact(mask, "values", values)
    out = ndarray._empty((total,), v.dtype)
    if total:
        _scatter(lk, k, m, v, offsets, ntiles, out, total)
    return out


def nonzero_flat(a: ndarray) -> ndarray:
    """The int64 flat C-order positions where ``a`` (any dtype, any strides) is nonzero
    (``numpy.flatnonzero``)."""
    if a.size == 0:
        return ndarray._empty((0,), _I64)
    lk, k, m, _, offsets, ntiles, total = _compact(a, "flat")
    out = ndarray._empty((total,), _I64)
    if total:
        _scatter(lk, k, m, None, offsets, ntiles, out, total)
    return out


def nonzero_nd(a: ndarray) -> ndarray:
    """The indices where ``a`` (ndim >= 1, any dtype and strides) is nonzero, as one
    C-contiguous int64 array of shape ``(a.ndim, count)``: row ``d`` holds the indices along
    axis ``d`` (``numpy.nonzero`` returns its rows, ``argwhere`` its transpose)."""
    if a.ndim == 1:
        flat = nonzero_flat(a)
        return flat._derive((1, flat._size), (flat._size * 8, 8))
    if a.ndim > cg.MAX_NDIM:
        flat = nonzero_flat(a)
        return _unravel_host_free(flat, a.shape)
    if a.size == 0:
        return ndarray._empty((a.ndim, 0), _I64)
    lk, k, m, _, offsets, ntiles, total = _compact(a, "nd")
    out = ndarray._empty((a.ndim, total), _I64)
    if total:
        _scatter(lk, k, m, None, offsets, ntiles, out, total, a.shape)
    return out


def _unravel_host_free(flat: ndarray, shape) -> ndarray:
    """Rows of N-d indices from flat positions with elementwise kernels (arrays of more than
    ``MAX_NDIM`` axes)."""
    from ... import ufunc as uf

    floor_divide, remainder = uf.ufunc("floor_divide"), uf.ufunc("remainder")
    out = ndarray._empty((len(shape), flat.size), _I64)
    n, r = flat.size, flat
    for d in range(len(shape) - 1, 0, -1):
        assign(out._derive((n,), (8,), d * n * 8), remainder(r, shape[d]))
        r = floor_divide(r, shape[d])
    assign(out._derive((n,), (8,)), r)
    return out
