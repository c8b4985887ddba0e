"""Searching: ``argmax``, ``argmin`` (the reduction family), ``where`` (elementwise)."""

from __future__ import annotations

from ..core.kernels.reduction.run import reduce
from ..core.ufunc import ufunc

_where = ufunc("where")     # the elementwise select: NumPy's result_type(x, y), broadcasting


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum (numpy.argmax): the first one; the first NaN if any."""
    return reduce("argmax", a, axis, None, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum (numpy.argmin): the first one; the first NaN if any."""
    return reduce("argmin", a, axis, None, out, keepdims)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``, broadcast together (numpy.where); the
    result dtype is NumPy's ``result_type(x, y)`` (Python scalars weak)."""
    if x is None and y is None:
        raise NotImplementedError("where(condition) (nonzero) is not supported yet; give x and y")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _where(condition, x, y)
