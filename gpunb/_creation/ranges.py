"""Numerical ranges and matrices: ``arange``, ``linspace``, ``eye``, ``identity``. Computed by
NumPy on the host and uploaded, so their values are NumPy's to the last bit."""

from __future__ import annotations

import numpy as np

from ..core.ndarray import ndarray
from .from_data import upload


def arange(start, stop=None, step=None, dtype=None) -> ndarray:
    """Evenly spaced values within an interval (numpy.arange)."""
    return upload(np.arange(start, stop, step, dtype=dtype) if stop is not None or step is not None
                  else np.arange(start, dtype=dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values over an interval (numpy.linspace)."""
    host = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return upload(host[0]), host[1]
    return upload(host)


def eye(N, M=None, k=0, dtype=float, order="C") -> ndarray:
    """Ones on the ``k``-th diagonal, zeros elsewhere (numpy.eye)."""
    return upload(np.eye(N, M, k, dtype=dtype, order="C"))


def identity(n, dtype=float) -> ndarray:
    """The ``n`` x ``n`` identity matrix (numpy.identity)."""
    return eye(n, dtype=dtype)
