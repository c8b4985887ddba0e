"""Dask's dispatch registrations for gpunb's chunk type (what Dask's ``backends.py`` does for
CuPy), the meta object, tokens, sizes and pickling.

:func:`register` runs once per process: from the ``dask.array.backends`` entry point, from the
lazy ``dask.sizeof`` hook (:mod:`gpunb.dask.hooks`) or by hand (:func:`gpunb.dask.register`).
"""

from __future__ import annotations

import itertools
import math
import threading
import uuid
import weakref

import numpy as np

_lock = threading.Lock()
_registered = False
_to_gpunb = None


def meta(ndim: int = 1, dtype=np.float64):
    """A 0-size gpunb array of ``ndim`` dimensions: Dask's ``_meta`` of a gpunb-backed array.

    It views a null device address: building it allocates nothing, needs no CUDA context and
    launches nothing; no kernel ever reads it (it has no element). ``ndim=0`` has one element,
    so is refused: Dask derives 0-d metas by reducing this one."""
    from gpunb.core.ndarray import MemoryPointer, ndarray

    if ndim < 1:
        raise ValueError("a 0-size meta array needs ndim >= 1 (a 0-d array has one element)")
    dt = np.dtype(dtype)
    shape = (0,) * ndim
    strides = tuple(dt.itemsize for _ in shape)
    return ndarray._view(MemoryPointer(0, None, 0), shape, strides, dt, None)


# -- the chunk functions Dask looks up by type -----------------------------------------------

def _einsum(*args, **kwargs):
    import gpunb

    kwargs.pop("casting", None)     # Dask passes NumPy's defaults; gpunb's einsum keeps NumPy's
    kwargs.pop("order", None)       # spelling but the chunks are always fresh arrays
    return gpunb.einsum(*args, **kwargs)


def _divide(x1, x2, out=None, dtype=None):
    import gpunb

    x = gpunb.divide(x1, x2, out=out)
    return x if dtype is None else x.astype(dtype, copy=False)


def _percentile(a, q, method="linear"):
    """Dask's per-chunk percentile: ``(values, count)``, values None for an empty chunk. The
    values (one per ``q``) come to the host: Dask merges them with NumPy."""
    import gpunb

    n = len(a)
    if not n:
        return None, n
    if not np.issubdtype(a.dtype, np.number):
        method = "nearest"
    return gpunb.percentile(a, list(q), method=method).get(), n


def _numel(x, **kwargs):
    """The element count per reduction cell, as a gpunb array (Dask's ``numel`` chunk)."""
    import gpunb

    shape, keepdims = x.shape, kwargs.get("keepdims", False)
    axis, dtype = kwargs.get("axis"), kwargs.get("dtype", np.float64)
    if axis is None:
        prod = math.prod(shape)
        if not keepdims:
            return np.asarray(prod, dtype=dtype)[()]
        return gpunb.full((1,) * len(shape), prod, dtype=dtype)
    axis = [axis] if not isinstance(axis, (tuple, list)) else axis
    axis = [a % len(shape) for a in axis]
    prod = math.prod(shape[d] for d in axis)
    if keepdims:
        new = tuple(1 if d in axis else s for d, s in enumerate(shape))
    else:
        new = tuple(s for d, s in enumerate(shape) if d not in axis)
    return gpunb.full(new, prod, dtype=dtype)


def _nannumel(x, **kwargs):
    import gpunb

    return gpunb.sum(~gpunb.isnan(x), **kwargs)


def _to_numpy(x, **kwargs):
    return x.get()


def _to_cupy(x, **kwargs):
    import cupy

    return cupy.asarray(x, **kwargs)        # zero copy, through __cuda_array_interface__


def _identity(x, **kwargs):
    return x


def _numpy_to_gpunb(x, **kwargs):
    import gpunb

    return gpunb.asarray(x, **kwargs)


def to_gpunb(x, **kwargs):
    """A chunk (NumPy, CuPy or gpunb) as a gpunb array (``to_backend("gpunb")``)."""
    return to_gpunb_dispatch()(x, **kwargs)


def to_gpunb_dispatch():
    """Dask's ``Dispatch`` that moves a chunk to gpunb (created on first use)."""
    global _to_gpunb
    if _to_gpunb is None:
        from dask.utils import Dispatch

        d = Dispatch("to_gpunb_dispatch")
        d.register(np.ndarray, _numpy_to_gpunb)

        @d.register_lazy("cupy")
        def _register_cupy():
            import cupy

            from gpunb.core.interop import from_cuda_array_interface

            d.register(cupy.ndarray, lambda x, **kwargs: from_cuda_array_interface(x))

        _to_gpunb = d
    return _to_gpunb


# -- tokens, sizes, pickling -------------------------------------------------------------------

_serials: dict = {}       # id(owning array) -> (weak reference, serial): arrays are unhashable
_count = itertools.count()
_serial_lock = threading.Lock()


def _serial(root):
    """A number unique to this owning array for the life of the process (an address or an id
    can be reused once it is freed)."""
    key = id(root)
    with _serial_lock:
        entry = _serials.get(key)
        if entry is None or entry[0]() is not root:
            ref = weakref.ref(root, lambda _, key=key: _serials.pop(key, None))
            entry = _serials[key] = (ref, next(_count))
        return entry[1]


def _token(x):
    """Dask's token of a gpunb array: its memory (a serial number of the owning array, the
    offset, shape, strides and dtype), never its contents, which would need a copy to the
    host. Writing into an array in place does not change its token: build the collection
    again (``da.from_array(x, name=...)``) after such a write."""
    root = x if x._base is None else x._base
    try:
        serial = _serial(root)
    except TypeError:                        # an owner that takes no weak reference
        serial = uuid.uuid4().hex
    base_ptr = root._data.ptr if hasattr(root, "_data") else 0
    return ("gpunb.ndarray", serial, x._data.ptr - base_ptr, x.shape, x.strides, x.dtype.str,
            x._data.device_id)


def _sizeof(x) -> int:
    return int(x.nbytes)


# -- registration --------------------------------------------------------------------------------

def register() -> None:
    """Register :class:`gpunb.ndarray` with Dask's dispatches (idempotent, thread-safe)."""
    global _registered
    if _registered:
        return
    with _lock:
        if not _registered:
            _register()
            _registered = True


def _register() -> None:
    import gpunb
    from dask.array import dispatch as d
    from dask.array.chunk_types import register_chunk_type
    from dask.sizeof import sizeof
    from dask.tokenize import normalize_token

    from gpunb.core.ndarray import ndarray

    # a chunk type Dask handles: dask_array * gpunb_array stays a Dask operation (gpunb's
    # higher __array_priority__ would otherwise hand it to gpunb's __rmul__)
    register_chunk_type(ndarray)
    sizeof.register(ndarray, _sizeof)
    normalize_token.register(ndarray, _token)

    d.concatenate_lookup.register(ndarray, gpunb.concatenate)
    d.take_lookup.register(ndarray, gpunb.take)
    d.tensordot_lookup.register(ndarray, gpunb.tensordot)
    d.einsum_lookup.register(ndarray, _einsum)
    d.empty_lookup.register(ndarray, gpunb.empty)
    d.divide_lookup.register(ndarray, _divide)
    d.percentile_lookup.register(ndarray, _percentile)
    d.numel_lookup.register(ndarray, _numel)
    d.nannumel_lookup.register(ndarray, _nannumel)
    d.to_numpy_dispatch.register(ndarray, _to_numpy)
    d.to_cupy_dispatch.register(ndarray, _to_cupy)
    to_gpunb_dispatch().register(ndarray, _identity)
