"""Arguments, normalized: the one place where what a caller passed becomes what the engine
takes, with NumPy's rules and error messages.

Every public function goes through these: an array argument (a gpunb array, or any object
with ``__cuda_array_interface__``: CuPy, PyTorch, Numba) becomes a gpunb array without a copy;
a host array is refused with a message that says how to move it (gpunb never copies behind
your back); scalars are classified as NumPy's type resolution sees them (Python scalars weak,
NEP 50); ``axis``, ``dtype``, ``out`` and shapes are checked as NumPy checks them.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import dtypes, layout
from .interop import from_cuda_array_interface
from .ndarray import ndarray

WEAK = (int, float, complex)     # Python scalars: weak in NumPy's type resolution (NEP 50)


def as_gpu(value, what: str) -> ndarray | None:
    """``value`` as a gpunb array if it is a GPU array (a view, never a copy), None if it is
    not an array (a scalar, for the caller to judge); TypeError for a host array."""
    if isinstance(value, ndarray):
        return value
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"{what} is a NumPy array in host memory; move it to the GPU with "
                        "gpunb.asarray() first (gpunb never copies behind your back)")
    if hasattr(value, "__cuda_array_interface__"):
        return from_cuda_array_interface(value)
    return None


def array(value, func: str) -> ndarray:
    """``value``, which must be a GPU array, as a gpunb array; TypeError naming ``func``
    otherwise."""
    if type(value) is ndarray:
        return value
    x = as_gpu(value, f"the input of {func}")
    if x is None:
        raise TypeError(f"{func} needs a GPU array, not {type(value).__name__}; use gpunb.asarray() "
                        "to move data to the GPU")
    return x


def scalar_type(value, what: str):
    """What NumPy's type resolution sees for a scalar: the type int/float/complex for a weak
    Python scalar, a dtype for bool and NumPy scalars (and 0-d NumPy arrays)."""
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, (np.generic, np.ndarray)):   # before int/float: np.float64 is a float
        return dtypes.check(value.dtype)
    if isinstance(value, WEAK):
        return type(value)
    raise TypeError(f"{what} must be a GPU array or a scalar, not {type(value).__name__}")


def operands(values, name: str) -> tuple[dict, dict]:
    """Split the inputs of an elementwise call: ({position: gpunb array},
    {position: (value, scalar type)})."""
    arrays, scalars = {}, {}
    for i, a in enumerate(values):
        g = as_gpu(a, f"input {i} of {name}")
        if g is not None:
            dtypes.check(g.dtype)
            arrays[i] = g
        else:
            scalars[i] = (a, scalar_type(a, f"input {i} of {name}"))
    return arrays, scalars


def dtype(value, default=None) -> np.dtype | None:
    """``dtype=`` as a supported NumPy dtype (``default`` when None); TypeError naming an
    unsupported one."""
    if value is None:
        return None if default is None else dtypes.check(default)
    return dtypes.check(value)


def axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` of a reduction (None: all, an int, or a tuple of ints) as a tuple of
    non-negative axes: NumPy's AxisError, and its errors for duplicates and non-integers."""
    return layout.normalize_axes(axis, ndim)


def axis(value, ndim: int, argname: str | None = None) -> int:
    """A single ``axis`` (an int) in ``range(ndim)``: NumPy's AxisError when out of bounds."""
    return layout.normalize_axis(value, ndim, argname)


def axis_list(value, ndim: int, argname: str | None = None,
              allow_duplicate: bool = False) -> tuple[int, ...]:
    """An int or a sequence of ints naming axes (``moveaxis``'s ``source``): NumPy's
    ``normalize_axis_tuple``, with ``argname`` in its messages."""
    return normalize_axis_tuple(value, ndim, argname, allow_duplicate)


def out(value, nout: int, name: str) -> tuple | None:
    """``out=`` of an elementwise call as a tuple of ``nout`` gpunb arrays (or None
    entries), or None when not given."""
    if value is None:
        return None
    outs = value if isinstance(value, tuple) else (value,)
    if len(outs) != nout:
        raise ValueError(f"{name}: out must have {nout} element{'s' if nout > 1 else ''}")
    for o in outs:
        if o is not None and not isinstance(o, ndarray):
            raise TypeError(f"{name}: out must be a gpunb.ndarray, not {type(o).__name__}")
    return outs


def out_array(value, name: str) -> ndarray | None:
    """``out=`` of a function with one result: a gpunb array, or None."""
    if value is not None and not isinstance(value, ndarray):
        raise TypeError(f"{name}: out must be a gpunb.ndarray, not {type(value).__name__}")
    return value
