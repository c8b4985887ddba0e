"""Building matrices: ``diag``, ``diagflat`` (views of a diagonal, written by one copy), ``tri``,
``tril``, ``triu`` (one elementwise kernel each: the triangle is decided per element from its
row and column, never a materialized mask of the stack)."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.fusion.function import fuse
from ..core.ndarray import ndarray
from ..core.runtime import driver, memory
from .._math.ufuncs import greater_equal
from .._sorting.search import where
from .from_data import upload


def _diagonal_view(a: ndarray, k: int) -> ndarray:
    """The ``k``-th diagonal of the 2-d ``a`` as a 1-d view (numpy.diagonal's elements)."""
    n, m = a.shape
    s0, s1 = a.strides
    if k >= 0:
        length, offset = max(0, min(n, m - k)), k * s1
    else:
        length, offset = max(0, min(n + k, m)), -k * s0
    return a._derive((length,), (s0 + s1,), offset if length else 0)


def diag(v, k=0) -> ndarray:
    """A 2-d array with the 1-d ``v`` on its ``k``-th diagonal, or the ``k``-th diagonal of a
    2-d ``v`` as a view (numpy.diag)."""
    x = args.array(v, "diag")
    k = int(k)
    if x.ndim == 1:
        n = x.shape[0] + abs(k)
        out = ndarray((n, n), x.dtype)
        memory.fill_bytes(out.data.ptr, 0, out.nbytes)
        if x.size:
            _diagonal_view(out, k)[...] = x
        return out
    if x.ndim == 2:
        return _diagonal_view(x, k)
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v, k=0) -> ndarray:
    """A 2-d array with the flattened ``v`` on its ``k``-th diagonal (numpy.diagflat)."""
    return diag(args.array(v, "diagflat").ravel(), k)


def _rows_cols(n: int, m: int, k: int):
    """Row indices as an (n, 1) column and column indices as an (m,) row, int32 where
    ``k`` added to them still fits (narrow operands keep the kernel's vector width). Kept on
    the device per shape: repeated calls upload nothing."""
    t = np.int32 if n + abs(k) + m < 2**31 else np.int64
    ctx = driver.active or driver.context()
    key = ("matrices.rows_cols", n, m, t)
    rc = ctx.prepared.get(key)
    if rc is None:
        rc = ctx.remember(key, (upload(np.arange(n, dtype=t)).reshape(n, 1),
                                upload(np.arange(m, dtype=t))))
    return rc


def tri(N, M=None, k=0, dtype=float, *, like=None) -> ndarray:
    """Ones at and below the ``k``-th diagonal, zeros elsewhere (numpy.tri)."""
    if like is not None:
        raise TypeError("tri: like= is not supported")
    N = int(N)
    M = N if M is None else int(M)
    out = ndarray((N, M), args.dtype(dtype, np.float64))
    if out.size:
        r, c = _rows_cols(N, M, int(k))
        greater_equal(r + int(k), c, out=out) if k else greater_equal(r, c, out=out)
    return out


@fuse
def _keep_lower(m, r, c, k, zero):
    return where(r + k >= c, m, zero)


@fuse
def _keep_upper(m, r, c, k, zero):
    return where(r + k >= c, zero, m)


def _triangle(m, k, func, lower: bool) -> ndarray:
    x = args.array(m, func)
    if x.ndim == 0:       # NumPy's own error: tri() of an empty shape
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    n, mm = (x.shape[-2], x.shape[-1]) if x.ndim >= 2 else (x.shape[0], x.shape[0])
    # triu keeps j >= i + k, i.e. zero where i + (k - 1) >= j: the same test, shifted
    k = int(k) if lower else int(k) - 1
    r, c = _rows_cols(n, mm, k)
    shape = np.broadcast_shapes(x.shape, (n, mm))
    if 0 in shape:
        return ndarray(shape, x.dtype)
    zero = x.dtype.type(0)
    return (_keep_lower if lower else _keep_upper)(x, r, c, r.dtype.type(k), zero)


def tril(m, k=0) -> ndarray:
    """The lower triangle of ``m`` (of each matrix of a stack) at and below the ``k``-th
    diagonal, zeros above (numpy.tril)."""
    return _triangle(m, k, "tril", True)


def triu(m, k=0) -> ndarray:
    """The upper triangle of ``m`` (of each matrix of a stack) at and above the ``k``-th
    diagonal, zeros below (numpy.triu)."""
    return _triangle(m, k, "triu", False)


def mask_indices(n, mask_func, k=0):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (numpy.mask_indices, e.g.
    with :func:`triu`): a tuple of two GPU index arrays."""
    from .._sorting.nonzero import nonzero
    from .basic import ones

    return nonzero(mask_func(ones((n, n), int), k) != 0)
