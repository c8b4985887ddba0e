"""Array creation and transfer: ``empty``, ``zeros``, ``ones``, ``full``, the ``*_like`` forms,
``arange``, ``linspace``, ``eye``, ``asarray``, ``array``, ``ascontiguousarray``, ``asnumpy``.

``arange``, ``linspace`` and ``eye`` are computed by NumPy on the host and uploaded, so their
values are NumPy's to the last bit.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .ndarray import ndarray
from .runtime import memory


def _dtype(dtype, default=np.float64):
    return dtypes.check(default if dtype is None else dtype)


def empty(shape, dtype=float, order="C") -> ndarray:
    """A new array with uninitialised contents."""
    return ndarray(shape, _dtype(dtype), order=order)


def zeros(shape, dtype=float, order="C") -> ndarray:
    a = empty(shape, dtype, order)
    memory.fill_bytes(a.data.ptr, 0, a.nbytes)   # all-zero bits are 0 in every dtype
    return a


def full(shape, fill_value, dtype=None, order="C") -> ndarray:
    if dtype is None:
        dtype = np.asarray(fill_value).dtype if not hasattr(fill_value, "dtype") else fill_value.dtype
    a = empty(shape, dtype, order)
    a.fill(fill_value)
    return a


def ones(shape, dtype=float, order="C") -> ndarray:
    return full(shape, 1, dtype, order)


def _like(a, dtype, shape):
    return (_dtype(dtype, a.dtype), a.shape if shape is None else shape)


def empty_like(a, dtype=None, order="K", shape=None) -> ndarray:
    dt, sh = _like(a, dtype, shape)
    return empty(sh, dt)


def zeros_like(a, dtype=None, order="K", shape=None) -> ndarray:
    dt, sh = _like(a, dtype, shape)
    return zeros(sh, dt)


def ones_like(a, dtype=None, order="K", shape=None) -> ndarray:
    dt, sh = _like(a, dtype, shape)
    return ones(sh, dt)


def full_like(a, fill_value, dtype=None, order="K", shape=None) -> ndarray:
    dt, sh = _like(a, dtype, shape)
    return full(sh, fill_value, dt)


def _upload(host: np.ndarray) -> ndarray:
    if not host.flags.c_contiguous:      # (np.ascontiguousarray would turn 0-d into 1-d)
        host = host.copy(order="C")
    dtypes.check(host.dtype)
    out = ndarray(host.shape, host.dtype)
    memory.copy_to_device(out.data.ptr, host)
    return out


def array(obj, dtype=None, copy=True, order="K", ndmin=0) -> ndarray:
    """A GPU array from a NumPy array, nested sequences, scalars or another GPU array."""
    from .ufuncs import _as_gpu

    g = _as_gpu(obj, "array()'s input") if not isinstance(obj, np.ndarray) else None
    if g is not None:
        out = g.astype(dtype if dtype is not None else g.dtype, copy=bool(copy))
    else:
        return _upload(np.array(obj, dtype=dtype, copy=True, order="C", ndmin=ndmin))
    while out.ndim < ndmin:
        out = out[None]
    return out


def asarray(obj, dtype=None, order=None) -> ndarray:
    """``obj`` as a GPU array: GPU arrays (any ``__cuda_array_interface__``) without a copy
    when the dtype matches; host data is copied to the GPU."""
    from .ufuncs import _as_gpu

    g = _as_gpu(obj, "asarray()'s input") if not isinstance(obj, np.ndarray) else None
    if g is not None:
        return g if dtype is None or np.dtype(dtype) == g.dtype else g.astype(dtype)
    return _upload(np.asarray(obj, dtype=dtype))


def ascontiguousarray(a, dtype=None) -> ndarray:
    a = asarray(a, dtype)
    return a if a.flags.c_contiguous else a.copy()


def asnumpy(a, stream=None) -> np.ndarray:
    """A NumPy array in host memory: copies GPU arrays, passes host data through."""
    if isinstance(a, ndarray):
        return a.get(stream)
    from .ufuncs import _as_gpu

    g = _as_gpu(a, "asnumpy()'s input") if not isinstance(a, np.ndarray) else None
    return g.get(stream) if g is not None else np.asarray(a)


def arange(start, stop=None, step=None, dtype=None) -> ndarray:
    return _upload(np.arange(start, stop, step, dtype=dtype) if stop is not None or step is not None
                   else np.arange(start, dtype=dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    host = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return _upload(host[0]), host[1]
    return _upload(host)


def eye(N, M=None, k=0, dtype=float, order="C") -> ndarray:
    return _upload(np.eye(N, M, k, dtype=dtype, order="C"))


def identity(n, dtype=float) -> ndarray:
    return eye(n, dtype=dtype)
