"""Arrays from existing data: ``array``, ``asarray``, ``ascontiguousarray``, ``copy``, and
the way back to the host, ``asnumpy``. Host data is uploaded; GPU arrays (gpunb's, or any
``__cuda_array_interface__`` array) are taken without a copy unless one is asked for."""

from __future__ import annotations

import numpy as np

from ..core import args, dtypes
from ..core.ndarray import ndarray
from ..core.runtime import memory


def upload(host: np.ndarray) -> ndarray:
    """A new GPU array with the contents of the NumPy array ``host`` (C order)."""
    if not host.flags.c_contiguous:      # (np.ascontiguousarray would turn 0-d into 1-d)
        host = host.copy(order="C")
    dtypes.check(host.dtype)
    out = ndarray(host.shape, host.dtype)
    memory.copy_to_device(out.data.ptr, host)
    return out


def _gpu(obj, what):
    return args.as_gpu(obj, what) if not isinstance(obj, np.ndarray) else None


def array(obj, dtype=None, copy=True, order="K", ndmin=0) -> ndarray:
    """A GPU array from a NumPy array, nested sequences, scalars or another GPU array
    (numpy.array)."""
    g = _gpu(obj, "array()'s input")
    if g is None:
        return upload(np.array(obj, dtype=dtype, copy=True, order="C", ndmin=ndmin))
    out = g.astype(dtype if dtype is not None else g.dtype, copy=bool(copy))
    while out.ndim < ndmin:
        out = out[None]
    return out


def asarray(obj, dtype=None, order=None) -> ndarray:
    """``obj`` as a GPU array (numpy.asarray): GPU arrays (any ``__cuda_array_interface__``)
    without a copy when the dtype matches; host data is copied to the GPU."""
    g = _gpu(obj, "asarray()'s input")
    if g is not None:
        return g if dtype is None or np.dtype(dtype) == g.dtype else g.astype(dtype)
    return upload(np.asarray(obj, dtype=dtype))


def ascontiguousarray(a, dtype=None) -> ndarray:
    """``a`` as a C-contiguous GPU array, copied only if it is not one (numpy.ascontiguousarray)."""
    a = asarray(a, dtype)
    return a if a.flags.c_contiguous else a.copy()


def copy(a, order="K"):
    """A new array with a copy of the data (numpy.copy)."""
    return args.array(a, "copy").copy(order="F" if order == "F" else "C")


def asnumpy(a, stream=None) -> np.ndarray:
    """A NumPy array in host memory (CuPy's asnumpy): copies GPU arrays, passes host data
    through."""
    if isinstance(a, ndarray):
        return a.get(stream)
    g = _gpu(a, "asnumpy()'s input")
    return g.get(stream) if g is not None else np.asarray(a)
