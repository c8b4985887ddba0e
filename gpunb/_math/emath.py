"""``gpunb.emath`` (numpy.emath, numpy.lib.scimath): ``sqrt``, ``log``, ``log2``, ``log10``,
``logn``, ``power``, ``arccos``, ``arcsin``, ``arctanh`` whose result is complex where a real
input lies outside the real function's domain (negative for the roots and logarithms and
for the base of ``power``, ``|x| > 1`` for ``arccos``, ``arcsin``, ``arctanh``).

NumPy decides per call from the data (``_fix_real_lt_zero``: ``if any(isreal(x) & (x < 0)):
x = x.astype(complex)``); gpunb the same way: one fused reduction (``(x < 0).any()``, one
kernel) and one flag read back, then the real or the complex ufunc. Only the kinds for which
the answer can be yes are checked: unsigned integers and booleans are never negative, and a
complex input is complex already (NumPy's conversion of it changes nothing).

The steps are NumPy's, written once against an array namespace ``xp`` and a flag reader
``flag(which, x)``: gpunb's here (:func:`device_flag`), NumPy's (:func:`host_flag`) in the
CPU tests (tests/test_emath_names.py), which so check the domain decisions and the dtypes
against ``numpy.emath`` without a GPU.
"""

from __future__ import annotations

import numpy as np

from ..core.fusion.function import fuse
from .numeric import _gp

# What NumPy tests on a real input, by name: gpunb fuses the test with its any() reduction.
PREDICATES = {"negative": lambda v: v < 0, "outside_unit": lambda v: abs(v) > 1}
_CHECKED = {"negative": "if", "outside_unit": "iuf"}    # the kinds for which it can hold


def _any_of(which: str):
    predicate = PREDICATES[which]
    return fuse(kernel_name=f"emath_any_{which}")(lambda v: predicate(v).any())


_fused = {which: _any_of(which) for which in PREDICATES}

# NumPy's _tocomplex: these become complex64, every other type complex128 (float16 included)
_SINGLE = (np.single, np.byte, np.short, np.ubyte, np.ushort, np.csingle)


def device_flag(which: str, x) -> bool:
    """Whether the predicate ``which`` holds anywhere in the GPU array ``x``: one fused
    reduction and one flag read back (nothing for an empty array)."""
    return x.size != 0 and bool(_fused[which](x))


def host_flag(which: str, x) -> bool:
    """NumPy's test (``any(isreal(x) & predicate(x))`` on a real array), for NumPy standing in."""
    return bool(np.any(PREDICATES[which](x)))


def _tocomplex(x):
    return x.astype(np.complex64 if issubclass(x.dtype.type, _SINGLE) else np.complex128)


def _fix(xp, flag, x, which):
    """``x`` as an array, complex where the predicate ``which`` holds somewhere (NumPy's
    ``_fix_real_lt_zero`` and ``_fix_real_abs_gt_1``)."""
    x = xp.asarray(x)
    if x.dtype.kind in _CHECKED[which] and flag(which, x):
        x = _tocomplex(x)
    return x


_DOMAIN = {"sqrt": "negative", "log": "negative", "log2": "negative", "log10": "negative",
           "arccos": "outside_unit", "arcsin": "outside_unit", "arctanh": "outside_unit"}


def _unary(xp, flag, name: str, x):
    return getattr(xp, name)(_fix(xp, flag, x, _DOMAIN[name]))


def _logn(xp, flag, n, x):
    x = _fix(xp, flag, x, "negative")
    n = _fix(xp, flag, n, "negative")
    return xp.log(x) / xp.log(n)


def _power(xp, flag, x, p):
    x = _fix(xp, flag, x, "negative")
    p = xp.asarray(p)
    # NumPy's _fix_int_lt_zero: p * 1.0 where p has a negative entry; that changes only an
    # integer p (to float64), so only an integer p is checked
    if p.dtype.kind == "i" and flag("negative", p):
        p = p * 1.0
    return xp.power(x, p)


def sqrt(x):
    """The square root, complex where ``x`` has a negative real entry (numpy.emath.sqrt)."""
    return _unary(_gp(), device_flag, "sqrt", x)


def log(x):
    """The natural logarithm, complex (the principal value) where ``x`` has a negative real
    entry (numpy.emath.log)."""
    return _unary(_gp(), device_flag, "log", x)


def log2(x):
    """The base-2 logarithm, complex where ``x`` has a negative real entry (numpy.emath.log2)."""
    return _unary(_gp(), device_flag, "log2", x)


def log10(x):
    """The base-10 logarithm, complex where ``x`` has a negative real entry
    (numpy.emath.log10)."""
    return _unary(_gp(), device_flag, "log10", x)


def logn(n, x):
    """The logarithm of ``x`` to base ``n``, ``log(x) / log(n)``, each complex where it has a
    negative real entry (numpy.emath.logn)."""
    return _logn(_gp(), device_flag, n, x)


def power(x, p):
    """``x ** p``, complex where ``x`` has a negative real entry; an integer ``p`` with a
    negative entry is taken as float64 (numpy.emath.power)."""
    return _power(_gp(), device_flag, x, p)


def arccos(x):
    """The inverse cosine, complex where ``x`` has a real entry with ``|x| > 1``
    (numpy.emath.arccos)."""
    return _unary(_gp(), device_flag, "arccos", x)


def arcsin(x):
    """The inverse sine, complex where ``x`` has a real entry with ``|x| > 1``
    (numpy.emath.arcsin)."""
    return _unary(_gp(), device_flag, "arcsin", x)


def arctanh(x):
    """The inverse hyperbolic tangent, complex where ``x`` has a real entry with ``|x| > 1``
    (numpy.emath.arctanh)."""
    return _unary(_gp(), device_flag, "arctanh", x)
