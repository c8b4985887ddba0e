"""The ``dask.array.backends`` entry point ``gpunb``: with
``dask.config.set({"array.backend": "gpunb"})``, Dask's creation functions build gpunb chunks.

As Dask's CuPy backend: each creation function is Dask's NumPy one given a gpunb meta (so
each chunk is ``gpunb.ones_like(meta, shape=())`` broadcast, ``gpunb.arange(..., like=meta)``
...), and ``da.random`` draws each chunk with :class:`gpunb.random.RandomState` or a
:class:`gpunb.random.Generator` on a :class:`gpunb.random.Philox4x3210` spawned per chunk."""

from __future__ import annotations

import numbers

import numpy as np
from dask import config
from dask.array.backends import ArrayBackendEntrypoint

from . import dispatch


def _meta_for(shape, dtype):
    ndim = 1 if isinstance(shape, numbers.Integral) else len(shape)
    # a 0-d array has one element: Dask reduces the 1-d meta (with a GPU) or falls back to NumPy
    return dispatch.meta(max(ndim, 1), dtype)


def _with_meta(name, *args, meta=None, **kwargs):
    import dask.array as da

    if meta is None:
        shape = args[0] if args else kwargs["shape"]
        dtype = kwargs.get("dtype")
        if dtype is None:
            if name == "full":
                fill = args[1] if len(args) > 1 else kwargs["fill_value"]
                dtype = np.asarray(fill).dtype
            else:
                dtype = np.float64
        meta = _meta_for(shape, dtype)
    with config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=meta, **kwargs)


class GpunbBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's array backend for gpunb (``array.backend: gpunb``)."""

    def __init__(self):
        dispatch.register()

    @classmethod
    def to_backend_dispatch(cls):
        return dispatch.to_gpunb_dispatch()

    @classmethod
    def to_backend(cls, data, **kwargs):
        """``x.to_backend("gpunb")``: a NumPy- or CuPy-backed array moved chunk by chunk."""
        from gpunb.core.ndarray import ndarray

        if isinstance(data._meta, ndarray):
            return data
        return data.map_blocks(dispatch.to_gpunb, meta=dispatch.meta(max(data.ndim, 1),
                                                                      data.dtype), **kwargs)

    @property
    def RandomState(self):
        from gpunb.random import RandomState

        return RandomState

    @property
    def default_bit_generator(self):
        from gpunb.random import Philox4x3210

        return Philox4x3210

    @staticmethod
    def ones(*args, **kwargs):
        return _with_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        import dask.array as da

        if like is None:     # the chunks' dtype: NumPy's arange's (a meta of another would
            dtype = kwargs.get("dtype")   # be cast by Dask, which allocates)
            if dtype is None:
                dtype = np.result_type(*[a for a in args[:3] if a is not None] or [0])
            like = dispatch.meta(1, dtype)
        with config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)
