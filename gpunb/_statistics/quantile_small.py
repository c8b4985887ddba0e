"""A scalar quantile of a short float array in two launches (issue 14's host time per small
call): one block sorts the array (:func:`gpunb.core.kernels.sort.run.sort_flat`) and one
thread interpolates between the two ranks, NaN where the array holds NaN
(:func:`gpunb.core.kernels.search.run.lerp_sorted`).

The general path (:mod:`.quantiles`) runs NumPy's index helpers on arrays, a radix select
and three to five ufuncs: about 200 us a call against CuPy's 117 on an H100. Here NumPy's
``_get_indexes`` is done on one Python float (the same floor, bounds and NaN rules) and
NumPy's ``_lerp`` in the kernel, each operation rounded alone, so the result is NumPy's bit
for bit.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.ndarray import ndarray


def small_quantile(x: ndarray, vi: np.ndarray, props: dict) -> ndarray | None:
    """The quantile of 1-D float32/float64 ``x`` at NumPy's scalar virtual index ``vi`` with
    NumPy's method ``props`` (its ``fix_gamma``), for a weak (Python scalar) ``q``: a 0-d
    array; None where this path does not apply (``x`` longer than one block's sort)."""
    from ..core.kernels.search.run import lerp_sorted
    from ..core.kernels.sort import run

    K = x.shape[0]
    if x.dtype.char not in "fd" or K > run.kernel_for(x.dtype).block_tile:
        return None
    v = float(vi)
    if v != v or v >= K - 1:        # NumPy's _get_indexes: -1 above the bounds and for NaN
        prev = nxt = -1
    elif v < 0:
        prev = nxt = 0
    else:
        prev = math.floor(v)
        nxt = prev + 1
    gamma = np.asanyarray(vi - np.float64(prev))
    gamma = float(np.asanyarray(props["fix_gamma"](gamma, vi), dtype=vi.dtype))
    return lerp_sorted(run.sort_flat(x)[0], prev % K, nxt % K, gamma, gamma >= 0.5)
