"""Where an array is nonzero: ``nonzero``, ``flatnonzero``, ``argwhere`` (the scan family's
stream compaction, :mod:`gpunb.core.kernels.scan`; the count is read back, as CuPy does)."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.kernels.scan.run import nonzero_flat, nonzero_nd
from ..core.ndarray import ndarray

_I64 = np.dtype("int64")


def nonzero(a):
    """The indices of the nonzero elements, one int64 array per axis (numpy.nonzero)."""
    x = args.array(a, "nonzero")
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. "
                         "Use np.atleast_1d(scalar).nonzero() instead.")
    idx = nonzero_nd(x)
    n = idx.shape[1]
    return tuple(idx._derive((n,), (8,), d * n * 8) for d in range(x.ndim))


def flatnonzero(a):
    """The flat (C order) indices of the nonzero elements (numpy.flatnonzero)."""
    return nonzero_flat(args.array(a, "flatnonzero"))


def argwhere(a):
    """The indices of the nonzero elements, one row per element (numpy.argwhere): shape
    ``(count, a.ndim)``."""
    x = args.array(a, "argwhere")
    if x.ndim == 0:     # NumPy: one row of no indices if the scalar is nonzero
        return ndarray._empty((nonzero_flat(x).size, 0), _I64)
    return nonzero_nd(x).T
