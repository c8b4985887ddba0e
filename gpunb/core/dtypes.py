"""The dtypes gpunb supports and how each appears in CUDA C++.

Every dtype has a storage type (how an element sits in memory) and a compute type (what the
generated code does arithmetic in): float16 is stored as ``gpunb::half`` and computed in
``float``, as NumPy's own float16 loops do. Literals are rendered exactly: floats as
hexadecimal literals (no decimal round trip), inf and nan by bit pattern.
"""

from __future__ import annotations

import math

import numpy as np

from . import memo

SUPPORTED = tuple(np.dtype(n) for n in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))

_STORAGE = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
    "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long long", "float16": "gpunb::half", "float32": "float",
    "float64": "double", "complex64": "gpunb::complex<float>",
    "complex128": "gpunb::complex<double>",
}
_COMPUTE = dict(_STORAGE, float16="float")


class UnsupportedDTypeError(TypeError):
    pass


_SUPPORTED_SET = frozenset(SUPPORTED)
_checked = memo.table("dtypes.parsed")    # dtype-like (np.float32, 'f4', float) -> its dtype: NumPy's parse is slow


def check(dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype, or a TypeError naming it and the supported ones."""
    try:
        if dtype.__class__ is not type and dtype in _SUPPORTED_SET and getattr(dtype, "isnative", False):
            return dtype        # the dispatch fast path: already a supported native dtype
        return _checked[dtype]
    except (KeyError, TypeError):   # TypeError: unhashable, for NumPy to judge below
        pass
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise UnsupportedDTypeError(f"{dtype!r} is not a dtype") from None
    if dt.byteorder == ">" or dt not in SUPPORTED:
        names = ", ".join(d.name for d in SUPPORTED)
        raise UnsupportedDTypeError(f"dtype {dt} is not supported on the GPU; gpunb supports {names}")
    dt = np.dtype(dt.name)
    try:
        _checked[dtype] = dt
    except TypeError:
        pass
    return dt


def storage_type(dtype) -> str:
    return _STORAGE[np.dtype(dtype).name]


def compute_type(dtype) -> str:
    return _COMPUTE[np.dtype(dtype).name]


def _float_literal(value: float, dtype: np.dtype) -> str:
    suffix = "" if dtype == np.float64 else "f"
    if math.isnan(value):
        return "__longlong_as_double(0x7ff8000000000000LL)" if not suffix else "__int_as_float(0x7fc00000)"
    if math.isinf(value):
        body = "__longlong_as_double(0x7ff0000000000000LL)" if not suffix else "__int_as_float(0x7f800000)"
        return body if value > 0 else f"(-{body})"
    text = float(value).hex()          # exact: '0x1.921fb54442d18p+1'
    if text.startswith("-"):
        return f"(-{text[1:]}{suffix})"
    return text + suffix


def literal(value, dtype) -> str:
    """A CUDA C++ expression of compute type for ``value`` converted to ``dtype`` exactly as
    NumPy converts it (float16 values are rounded to half first)."""
    dt = np.dtype(dtype)
    with np.errstate(over="ignore"):   # a float16 literal past 65504 is inf, as in NumPy
        v = dt.type(value)
    kind = dt.kind
    if kind == "b":
        return "true" if v else "false"
    if kind == "u":
        return f"{int(v)}ULL" if dt.itemsize == 8 else f"{int(v)}U"
    if kind == "i":
        n = int(v)
        if n == np.iinfo(dt).min:
            return f"(-{-(n + 1)}LL - 1)" if dt.itemsize == 8 else f"(-{-(n + 1)} - 1)"
        return f"{n}LL" if dt.itemsize == 8 else str(n) if n >= 0 else f"({n})"
    if kind == "f":
        compute = np.dtype(np.float32) if dt == np.float16 else dt
        return _float_literal(float(v), compute)
    if kind == "c":
        part = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
        return f"{compute_type(dt)}({_float_literal(float(v.real), part)}, {_float_literal(float(v.imag), part)})"
    raise UnsupportedDTypeError(f"no literal for dtype {dt}")
