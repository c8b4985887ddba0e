"""Source that makes a new C-contiguous array inside generated prepared calls (ufuncs and
ElementwiseKernels, reductions' replays, random draws): :meth:`gpunb.ndarray._empty` written
out, so a repeated small call pays neither its frame, its size loop nor the pool's lookup.

Pure source strings, plus the namespace they read (the current device's pool).
"""

from __future__ import annotations

import math

import numpy as np

from ..ndarray import c_strides, ndarray
from ..runtime import memory


def empty_lines(var: str, shape: str, strides: str, size: str, dtype: str, nbytes: str) -> list[str]:
    """Source lines that make ``var`` a new C-contiguous array: :meth:`ndarray._empty` written
    out for generated prepared calls (its frame, size loop and pool lookup: 0.7k of ``a + b``'s
    24.4k instructions). The arguments are expressions; the lines read
    :func:`empty_namespace`'s names."""
    return [f"{var} = NEW(ndarray)", f"{var}._data = MALLOC({nbytes})",
            f"{var}._shape, {var}._strides, {var}._dtype, {var}._base, {var}._size, {var}._cc = "
            f"{shape}, {strides}, {dtype}, None, {size}, True"]


def fixed_empty_lines(var: str, shape: tuple, dt: np.dtype, dtype: str) -> list[str]:
    """:func:`empty_lines` for a ``shape`` and ``dt`` known when the source is made: the shape,
    strides, size and byte count written in as constants (``dtype``: the name ``dt`` has)."""
    shape = tuple(int(s) for s in shape)
    size = math.prod(shape)
    return empty_lines(var, repr(shape), repr(c_strides(shape, dt.itemsize)), str(size), dtype,
                       str(size * dt.itemsize))


def empty_namespace() -> dict:
    """The names :func:`empty_lines` reads: the current device's pool's ``malloc`` (a prepared
    call runs only on the device it was made on)."""
    return {"ndarray": ndarray, "NEW": ndarray.__new__,
            "MALLOC": memory.get_default_memory_pool().malloc}
