"""Order statistics: ``amax``/``max``, ``amin``/``min``, ``nanmax``, ``nanmin`` (the
reduction family) and ``ptp``."""

from __future__ import annotations

from ..core.kernels.reduction.run import reduce


def amax(a, axis=None, out=None, keepdims=False):
    """Maximum over the given axes (numpy.max); NaN propagates."""
    return reduce("max", a, axis, None, out, keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    """Minimum over the given axes (numpy.min); NaN propagates."""
    return reduce("min", a, axis, None, out, keepdims)


def nanmax(a, axis=None, out=None, keepdims=False):
    """Maximum ignoring NaN (numpy.nanmax); an all-NaN slice gives NaN (NumPy also warns)."""
    return reduce("nanmax", a, axis, None, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    """Minimum ignoring NaN (numpy.nanmin); an all-NaN slice gives NaN (NumPy also warns)."""
    return reduce("nanmin", a, axis, None, out, keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """The range of values, maximum minus minimum, over the given axes (numpy.ptp)."""
    from .._math.ufuncs import UFUNCS

    return UFUNCS["subtract"](amax(a, axis, None, keepdims), amin(a, axis, None, keepdims), out=out)


max = amax  # noqa: A001 - NumPy 2's names
min = amin  # noqa: A001
