"""The scalar types, NumPy's own objects (``gpunb.float32 is numpy.float32``, as in CuPy), for
the 14 dtypes gpunb supports, their NumPy 2 aliases, the abstract types that ``issubdtype``
tests against, and NumPy's types the GPU has no dtype for (``str_``, ``longdouble``...); and NumPy's type tables and constants (``typecodes``,
``ScalarType``, ``sctypeDict``, ``little_endian``, ``True_``, ``False_``), which describe
NumPy's types on the host, those gpunb has no GPU dtype for included
(``gpunb.core.dtypes.SUPPORTED`` lists the GPU's)."""

from __future__ import annotations

import numpy as np

SCALARS = ("bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "complex64", "complex128")
ALIASES = ("byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "long", "ulong",
           "longlong", "ulonglong", "intp", "uintp", "half", "single", "double", "csingle",
           "cdouble")
ABSTRACT = ("generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating")
# NumPy's types with no GPU dtype, for code that names them (issubdtype, isinstance, dtype
# tables); an array of one raises UnsupportedDTypeError naming the dtypes the GPU has
HOST_ONLY = ("bytes_", "str_", "object_", "void", "character", "flexible", "longdouble",
             "clongdouble")

globals().update({name: getattr(np, name) for name in SCALARS + ALIASES + ABSTRACT + HOST_ONLY})

typecodes = np.typecodes          # {'Character': 'c', 'Integer': 'bhilqnp', ...}
ScalarType = np.ScalarType        # (int, float, complex, bool, bytes, str, memoryview, numpy's...)
sctypeDict = np.sctypeDict        # names to scalar types ("float32": numpy.float32, "half"...)
little_endian = np.little_endian  # the host's byte order (the GPU's is little-endian)
True_ = np.True_                  # NumPy's bool scalars (numpy.bool_(True), numpy.bool_(False))
False_ = np.False_
