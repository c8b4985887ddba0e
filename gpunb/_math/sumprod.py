"""Sums and products: ``sum``, ``prod``, ``nansum``, ``nanprod`` (the reduction family: each
is a line of :data:`gpunb.core.kernels.reduction.ir.SPECS`)."""

from __future__ import annotations

from ..core.kernels.reduction.run import reduce


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
