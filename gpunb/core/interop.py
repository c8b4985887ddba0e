"""Interoperability: ``__cuda_array_interface__`` in, NumPy's ``__array_function__``."""

from __future__ import annotations

import numpy as np

from . import dtypes, layout
from .ndarray import MemoryPointer, ndarray


def from_cuda_array_interface(obj) -> ndarray:
    """A zero-copy gpunb view of any object exposing ``__cuda_array_interface__`` (v2/v3).
    The view keeps ``obj`` alive; its stream (v3) is waited on before gpunb uses the data."""
    cai = obj.__cuda_array_interface__
    dt = dtypes.check(np.dtype(cai["typestr"]))
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    strides = tuple(int(s) for s in strides) if strides is not None else layout.c_strides(shape, dt.itemsize)
    if cai.get("mask") is not None:
        raise TypeError("masked __cuda_array_interface__ arrays are not supported")
    stream = cai.get("stream")
    if stream not in (None, 0, 1, 2):
        from .runtime import driver

        driver.wait_for_producers(driver.as_stream(None), [stream])
    ptr = int(cai["data"][0])
    return ndarray._view(MemoryPointer(ptr, obj), shape, strides, dt, obj)


def to_dlpack(a, **kwargs):
    raise NotImplementedError("DLPack export is not implemented yet; use __cuda_array_interface__")


def dispatch_numpy_function(func, types, args, kwargs):
    """NumPy functions on gpunb arrays run gpunb's function of the same name, or raise."""
    import gpunb

    f = getattr(gpunb, func.__name__, None)
    if f is None or not callable(f):
        raise TypeError(f"numpy.{func.__name__} is not supported on gpunb arrays (gpunb has no "
                        "GPU implementation; it never copies to the host behind your back)")
    return f(*args, **kwargs)
