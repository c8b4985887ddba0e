"""The scalar types, NumPy's own objects (``gpunb.float32 is numpy.float32``, as in CuPy), for
the 14 dtypes gpunb supports, their NumPy 2 aliases, and the abstract types that
``issubdtype`` tests against."""

from __future__ import annotations

import numpy as np

SCALARS = ("bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "complex64", "complex128")
ALIASES = ("byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "long", "ulong",
           "longlong", "ulonglong", "intp", "uintp", "half", "single", "double", "csingle",
           "cdouble")
ABSTRACT = ("generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating")

globals().update({name: getattr(np, name) for name in SCALARS + ALIASES + ABSTRACT})
