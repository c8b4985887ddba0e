"""Data type routines with NumPy's rules: ``result_type``, ``can_cast``, ``promote_types``,
``issubdtype``, ``isscalar``, ``finfo``, ``iinfo`` and the ``dtype`` class. gpunb arrays are
read by their dtype (never copied to the host), Python scalars stay weak (NEP 50)."""

from __future__ import annotations

import numpy as np

from ..core.ndarray import ndarray

dtype = np.dtype
finfo = np.finfo
iinfo = np.iinfo
promote_types = np.promote_types
issubdtype = np.issubdtype
isscalar = np.isscalar


def _dtype_of(x):
    return x.dtype if isinstance(x, ndarray) else x


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives these arrays, dtypes and scalars (numpy.result_type):
    a gpunb array counts as its dtype, a Python scalar is weak."""
    return np.result_type(*[_dtype_of(x) for x in arrays_and_dtypes])


def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a dtype, a gpunb array or a NumPy scalar) casts to ``to`` under the
    rule ``casting`` (numpy.can_cast)."""
    return np.can_cast(_dtype_of(from_), to, casting)
