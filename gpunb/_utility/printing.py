"""Text forms of GPU arrays: ``array2string``, ``array_repr``, ``array_str`` (NumPy's, of
the array copied to the host)."""

from __future__ import annotations

import numpy as np

from .._creation.from_data import asnumpy as _host


def array2string(a, *args, **kwargs) -> str:
    """numpy.array2string of the array's values (copied to the host)."""
    return np.array2string(_host(a), *args, **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    """numpy.array_repr of the array's values (copied to the host): ``array([...])``."""
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    """numpy.array_str of the array's values (copied to the host)."""
    return np.array_str(_host(a), max_line_width, precision, suppress_small)
