"""Truth value testing: ``any``, ``all`` (the reduction family)."""

from __future__ import annotations

from ..core.kernels.reduction.run import reduce


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Whether any element over the given axes is true (numpy.any)."""
    return reduce("any", a, axis, None, out, keepdims)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Whether all elements over the given axes are true (numpy.all)."""
    return reduce("all", a, axis, None, out, keepdims)
