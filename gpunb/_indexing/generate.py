"""Index-generating routines (NumPy's "Generating index arrays"): ``diag_indices``,
``tril_indices``, ``triu_indices`` (and their ``*_from`` forms), ``unravel_index``,
``ravel_multi_index``, ``ix_``. Results are GPU arrays, as CuPy's. Index data that only
depends on shapes is computed on the host and uploaded (it is what the caller would index
with); index data given on the GPU stays there and is computed by ufuncs."""

from __future__ import annotations

import numpy as np

from ..core import args
from ..core.kernels.indexing.resolve import gpu_or_none, upload
from ..core.ufunc import ufunc


def _up(t):
    return tuple(upload(np.asarray(x)) for x in t)


def diag_indices(n, ndim=2):
    """Return the indices to access the main diagonal of an array, as
    :func:`numpy.diag_indices` (``ndim`` times the same GPU array)."""
    idx = upload(np.arange(n))
    return (idx,) * ndim


def diag_indices_from(arr):
    """Return the indices to access the main diagonal of an n-dimensional array, as
    :func:`numpy.diag_indices_from`."""
    arr = args.array(arr, "diag_indices_from")
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def tril_indices(n, k=0, m=None):
    """Return the indices for the lower-triangle of an (n, m) array, as
    :func:`numpy.tril_indices`."""
    return _up(np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Return the indices for the upper-triangle of an (n, m) array, as
    :func:`numpy.triu_indices`."""
    return _up(np.triu_indices(n, k, m))


def _square2d(arr, name):
    arr = args.array(arr, name)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return arr


def tril_indices_from(arr, k=0):
    """Return the indices for the lower-triangle of arr, as :func:`numpy.tril_indices_from`."""
    arr = _square2d(arr, "tril_indices_from")
    return tril_indices(arr.shape[-2], k=k, m=arr.shape[-1])


def triu_indices_from(arr, k=0):
    """Return the indices for the upper-triangle of arr, as :func:`numpy.triu_indices_from`."""
    arr = _square2d(arr, "triu_indices_from")
    return triu_indices(arr.shape[-2], k=k, m=arr.shape[-1])


def _strides(dims, order):
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    out, step = [0] * len(dims), 1
    for j in (range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))):
        out[j] = step
        step *= dims[j]
    return out, step


def unravel_index(indices, shape, order="C"):
    """Converts a flat index or array of flat indices into a tuple of coordinate arrays, as
    :func:`numpy.unravel_index`. Host indices are checked (NumPy's ValueError); GPU indices are
    not read, and out-of-range ones give coordinates modulo the shape."""
    g = gpu_or_none(indices)
    if g is None:
        return _up(np.unravel_index(indices, shape, order=order))
    if g.dtype.kind not in "iu":
        raise TypeError(f"Cannot cast array data from {g.dtype!r} to dtype('int64') according to "
                        "the rule 'safe'")
    dims = tuple(int(d) for d in (shape if np.iterable(shape) else (shape,)))
    st, _ = _strides(dims, order)
    fdiv, rem = ufunc("floor_divide"), ufunc("remainder")
    g = g.astype(np.int64, copy=False)
    return tuple(rem(fdiv(g, s) if s > 1 else g, d) if d else fdiv(g, s) for s, d in zip(st, dims))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Converts a tuple of index arrays into an array of flat indices, as
    :func:`numpy.ravel_multi_index`. Host index data is checked (NumPy's errors); GPU index
    arrays with ``mode='raise'`` are not read (out-of-range entries give unchecked values)."""
    gs = [gpu_or_none(x) for x in multi_index]
    if all(g is None for g in gs):
        return upload(np.asarray(np.ravel_multi_index(multi_index, dims, mode=mode, order=order)))
    dims = tuple(int(d) for d in (dims if np.iterable(dims) else (dims,)))
    if len(gs) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    for m in modes:
        if m not in ("raise", "wrap", "clip"):
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {m!r})")
    st, _ = _strides(dims, order)
    add, mul, rem = ufunc("add"), ufunc("multiply"), ufunc("remainder")
    from .._math.misc import clip
    out = None
    for x, g, s, d, m in zip(multi_index, gs, st, dims, modes):
        v = g if g is not None else upload(np.asarray(x, np.int64))
        v = v.astype(np.int64, copy=False)
        if m == "wrap":
            v = rem(v, d)
        elif m == "clip":
            v = clip(v, 0, d - 1)
        term = mul(v, s)
        out = term if out is None else add(out, term)
    return out


def ix_(*args_):
    """Construct an open mesh from multiple sequences, as :func:`numpy.ix_` (boolean
    sequences stand for their nonzero positions)."""
    out = []
    nd = len(args_)
    for k, new in enumerate(args_):
        g = gpu_or_none(new)
        if g is None:
            h = np.asarray(new)
            if h.ndim != 1:
                raise ValueError("Cross index must be 1 dimensional")
            if h.size == 0:
                h = h.astype(np.intp)
            if h.dtype == bool:
                (h,) = h.nonzero()
            g = upload(h)
        else:
            if g.ndim != 1:
                raise ValueError("Cross index must be 1 dimensional")
            if g.dtype == bool:
                from ..core.kernels.scan.run import nonzero_flat
                g = nonzero_flat(g)
        out.append(g.reshape((1,) * k + (g.size,) + (1,) * (nd - k - 1)))
    return tuple(out)
