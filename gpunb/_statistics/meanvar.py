"""Averages and variances: ``mean``, ``var``, ``std`` (the reduction family)."""

from __future__ import annotations

from ..core.kernels.reduction.run import moment, reduce


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean (numpy.mean): ints in float64, float16 accumulated in float32; the
    mean of an empty slice is NaN with NumPy's RuntimeWarning."""
    return reduce("mean", a, axis, dtype, out, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance (numpy.var): mean of squared deviations from the mean, divided by N - ddof;
    complex input gives a real result."""
    return moment("var", a, axis, dtype, out, ddof, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation (numpy.std): the square root of :func:`var`."""
    return moment("std", a, axis, dtype, out, ddof, keepdims)
