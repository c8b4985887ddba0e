"""Sums and products: ``sum``, ``prod``, ``nansum``, ``nanprod`` (the reduction family: each
is a line of :data:`gpunb.core.kernels.reduction.ir.SPECS`); ``cumsum``, ``cumprod``,
``nancumsum``, ``nancumprod`` (the scan family, :mod:`gpunb.core.kernels.scan`)."""

from __future__ import annotations

from ..core import args
from ..core.kernels.reduction.run import reduce
from ..core.kernels.scan.run import scan


def sum(a, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Sum of array elements over the given axes (numpy.sum): int/bool sums accumulate in int64
    (uint64 for unsigned), float16 in float32."""
    return reduce("sum", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product of array elements over the given axes (numpy.prod)."""
    return reduce("prod", a, axis, dtype, out, keepdims)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum treating NaN as zero (numpy.nansum)."""
    return reduce("nansum", a, axis, dtype, out, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product treating NaN as one (numpy.nanprod)."""
    return reduce("nanprod", a, axis, dtype, out, keepdims)


def _accumulate(func, op, nan, a, axis, dtype, out):
    """NumPy's ``add.accumulate``/``multiply.accumulate`` arguments: ``axis=None`` scans the
    flattened (C order) array, a 0-d array is scanned as one element; ``out`` must have the
    result's shape."""
    x = args.array(a, func)
    dt = args.dtype(dtype)
    o = args.out_array(out, func)
    if axis is None or x.ndim == 0:
        if axis is not None:
            ax = _axis(axis, 1)
        x, ax = x.reshape(-1), 0
    else:
        ax = _axis(axis, x.ndim)
    if o is not None and o.shape != x.shape:
        if axis is None or o.ndim != x.ndim:
            raise ValueError("provided out is the wrong size for the accumulation.")
        shapes = [f"({','.join(map(str, s))}{',' if len(s) == 1 else ''})" for s in (o.shape, x.shape)]
        raise ValueError("operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {shapes[0]}->{shapes[0]} {shapes[1]}->{shapes[1]} ")
    return scan(x, ax, op, dt, o, nan)


def _axis(axis, ndim):
    if isinstance(axis, bool):
        raise TypeError("an integer is required for the axis")
    return args.axis(axis, ndim)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum of the elements along an axis (numpy.cumsum): bool and small ints
    accumulate in int64 (uint64 for unsigned); floats in a parallel order, so float results
    differ from NumPy's sequential ones by rounding only."""
    return _accumulate("cumsum", "sum", False, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product of the elements along an axis (numpy.cumprod)."""
    return _accumulate("cumprod", "prod", False, a, axis, dtype, out)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as zero (numpy.nancumsum)."""
    return _accumulate("nancumsum", "sum", True, a, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as one (numpy.nancumprod)."""
    return _accumulate("nancumprod", "prod", True, a, axis, dtype, out)
