"""Numerical ranges and matrices: ``arange``, ``linspace``, ``eye``, ``identity``. Computed by
NumPy on the host and uploaded, so their values are NumPy's to the last bit."""

from __future__ import annotations

import numpy as np

from .._array_api.devices import on
from ..core.ndarray import ndarray
from .from_data import upload


def arange(start, stop=None, step=None, dtype=None, *, device=None) -> ndarray:
    """Evenly spaced values within an interval (numpy.arange)."""
    if device is not None:
        with on(device, "arange"):
            return arange(start, stop, step, dtype)
    return upload(np.arange(start, stop, step, dtype=dtype) if stop is not None or step is not None
                  else np.arange(start, dtype=dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``num`` evenly spaced values over an interval (numpy.linspace)."""
    if device is not None:
        with on(device, "linspace"):
            return linspace(start, stop, num, endpoint, retstep, dtype, axis)
    host = np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if retstep:
        return upload(host[0]), host[1]
    return upload(host)


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None) -> ndarray:
    """Ones on the ``k``-th diagonal, zeros elsewhere (numpy.eye)."""
    if device is not None:
        with on(device, "eye"):
            return eye(N, M, k, dtype, order)
    return upload(np.eye(N, M, k, dtype=dtype, order="C"))


def identity(n, dtype=float) -> ndarray:
    """The ``n`` x ``n`` identity matrix (numpy.identity)."""
    return eye(n, dtype=dtype)


def _host(value, name: str):
    """A range endpoint or base, which NumPy's own routine computes on the host: a GPU array
    there would have to come back to the host, so it is refused (gpunb never copies behind
    your back)."""
    if hasattr(value, "__cuda_array_interface__"):
        raise TypeError(f"{name}: start, stop and base must be host values (scalars or NumPy "
                        "arrays); the result is computed by NumPy and uploaded")
    return value


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0) -> ndarray:
    """Numbers spaced evenly on a log scale, ``base ** linspace(start, stop)`` (numpy.logspace).
    Array-valued ``start``/``stop``/``base`` broadcast as in NumPy; the values are NumPy's."""
    return upload(np.logspace(_host(start, "logspace"), _host(stop, "logspace"), num, endpoint,
                              _host(base, "logspace"), dtype, axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0) -> ndarray:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (numpy.geomspace), with
    NumPy's handling of negative and complex endpoints and its values."""
    return upload(np.geomspace(_host(start, "geomspace"), _host(stop, "geomspace"), num, endpoint,
                               dtype, axis))
