"""Data type routines with NumPy's rules: ``result_type``, ``can_cast``, ``promote_types``,
``issubdtype``, ``isscalar``, ``finfo``, ``iinfo`` and the ``dtype`` class. gpunb arrays are
read by their dtype (never copied to the host), Python scalars stay weak (NEP 50)."""

from __future__ import annotations

import numpy as np

from ..core.ndarray import ndarray

dtype = np.dtype
iinfo = np.iinfo
promote_types = np.promote_types
issubdtype = np.issubdtype
isscalar = np.isscalar
typename = np.typename
mintypecode = np.mintypecode


def _dtype_of(x):
    return x.dtype if isinstance(x, ndarray) else x


class finfo:
    """Machine limits of a floating-point type (numpy.finfo): ``finfo(gpunb.float32).eps``.

    NumPy's fields, with one difference the array API standard asks for: ``eps``, ``epsneg``,
    ``max``, ``min``, ``resolution``, ``smallest_normal``, ``smallest_subnormal`` and ``tiny``
    are Python floats (exactly NumPy's values), not NumPy scalars (numpy/numpy#18881;
    ``torch.finfo`` gives floats too). ``bits``, the exponent and mantissa counts and ``dtype``
    are NumPy's. Takes a dtype, a type, a NumPy or gpunb array, or a complex type (whose
    real part's limits it gives).
    """

    _FLOATS = ("eps", "epsneg", "max", "min", "resolution", "smallest_normal",
               "smallest_subnormal", "tiny")
    _cache: dict = {}

    def __new__(cls, dtype):
        info = np.finfo(_dtype_of(dtype))
        self = cls._cache.get(info.dtype)
        if self is None:
            self = object.__new__(cls)
            self._numpy = info
            for name in ("bits", "dtype", "iexp", "machep", "maxexp", "minexp", "negep", "nexp",
                         "nmant", "precision"):
                setattr(self, name, getattr(info, name))
            for name in cls._FLOATS:
                v = getattr(info, name)
                # float64 and narrower are exact as Python floats; longdouble keeps NumPy's
                setattr(self, name, float(v) if info.dtype.itemsize <= 8 else v)
            cls._cache[info.dtype] = self
        return self

    def __repr__(self):
        return repr(self._numpy)

    def __str__(self):
        return str(self._numpy)


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives these arrays, dtypes and scalars (numpy.result_type):
    a gpunb array counts as its dtype, a Python scalar is weak."""
    return np.result_type(*[_dtype_of(x) for x in arrays_and_dtypes])


def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a dtype, a gpunb array or a NumPy scalar) casts to ``to`` under the
    rule ``casting`` (numpy.can_cast)."""
    return np.can_cast(_dtype_of(from_), to, casting)


def common_type(*arrays):
    """The inexact scalar type common to the arrays (numpy.common_type), read by dtype."""
    return np.common_type(*[np.empty(0, x.dtype) if isinstance(x, ndarray) else x for x in arrays])


def min_scalar_type(a):
    """The smallest dtype that holds ``a`` (numpy.min_scalar_type): a gpunb array's own
    dtype, as NumPy gives an array's."""
    return a.dtype if isinstance(a, ndarray) else np.min_scalar_type(a)
