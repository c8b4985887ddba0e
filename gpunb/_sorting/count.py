"""Counting: ``count_nonzero`` (the reduction family)."""

from __future__ import annotations

from ..core.kernels.reduction.run import reduce


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero elements (numpy.count_nonzero). Returns a GPU array (0-d for
    ``axis=None``, where NumPy returns a Python int) so nothing waits for the device."""
    return reduce("count_nonzero", a, axis, None, None, keepdims)
