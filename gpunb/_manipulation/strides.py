"""``as_strided`` and ``sliding_window_view`` (``numpy.lib.stride_tricks``, CuPy's
``cupy.lib.stride_tricks``): views of a GPU array's memory with other shapes and strides.

NumPy's own functions decide the view: they run on a host stand-in with the array's shape,
dtype and strides over one element of memory (no data is read), so the resulting shape and
strides and every error are NumPy's; the GPU view takes them over. As in NumPy, ``as_strided``
checks no bounds: a view reaching outside the allocation reads or writes outside it (on a GPU,
an illegal-address error). gpunb arrays have no read-only flag: ``writeable`` is accepted and
the view is writable either way (as CuPy's).
"""

from __future__ import annotations

import numpy as np

from ..core import args

_np_st = np.lib.stride_tricks


def _stand_in(x) -> np.ndarray:
    return _np_st.as_strided(np.zeros(1, x.dtype), x.shape, x.strides, writeable=False)


def _view(x, host: np.ndarray):
    return x._derive(tuple(host.shape), tuple(host.strides))


def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """A view of ``x``'s memory with the given ``shape`` and ``strides`` (in bytes), as
    ``numpy.lib.stride_tricks.as_strided``. Unchecked: keep the view inside ``x``'s
    allocation."""
    x = args.array(x, "as_strided")
    return _view(x, _np_st.as_strided(_stand_in(x), shape, strides, writeable=False))


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """The sliding windows of ``window_shape`` over ``axis`` of ``x`` as one view (the
    window's axes last), as ``numpy.lib.stride_tricks.sliding_window_view``."""
    x = args.array(x, "sliding_window_view")
    return _view(x, _np_st.sliding_window_view(_stand_in(x), window_shape, axis))
