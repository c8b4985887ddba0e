"""The array API standard's functions that NumPy spells differently or lacks a keyword of.

Plain renames (``concat``, ``permute_dims``, ``pow``, ``acos``, ``bitwise_left_shift``...)
are registry lines naming NumPy's function (:mod:`gpunb._registry`); what needs code is here:
``astype`` as a function, ``round`` (``numpy.round``), ``cumulative_sum`` and
``cumulative_prod`` (``include_initial``), ``unstack``, and ``isdtype``.
"""

from __future__ import annotations

import numpy as np

from ..core import args
from . import devices


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` as ``dtype`` (numpy.astype, the array API's): a new array unless ``copy=False``
    and the dtype is already ``x``'s; ``device`` None or ``x``'s."""
    x = args.array(x, "astype")
    devices.same_device(x, devices.check(device, "astype"), "astype")
    return x.astype(dtype, copy=copy)


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (numpy.isdtype): a dtype, a kind name (``'bool'``,
    ``'signed integer'``, ``'unsigned integer'``, ``'integral'``, ``'real floating'``,
    ``'complex floating'``, ``'numeric'``) or a tuple of these."""
    return np.isdtype(np.dtype(dtype), kind)


def round(x, /, decimals=0, out=None):       # noqa: A001 (the standard's name)
    """Round to ``decimals`` places, halves to even (numpy.round): integers are returned as
    they are (``decimals >= 0``); complex numbers round their parts."""
    from .._math.ufuncs import UFUNCS

    x = args.array(x, "round")
    decimals = int(decimals)
    rint, mul, div = UFUNCS["rint"], UFUNCS["multiply"], UFUNCS["true_divide"]
    if x.dtype.kind in "iu":
        if decimals >= 0:
            r = x.copy()
        else:
            f = 10 ** -decimals
            r = mul(rint(div(x, f)), f).astype(x.dtype)
    elif decimals == 0:
        return rint(x, out=out)
    elif decimals > 0:
        f = 10.0 ** decimals
        r = div(rint(mul(x, f)), f)
    else:
        f = 10.0 ** -decimals
        r = mul(rint(div(x, f)), f)
    if out is None:
        return r
    out[...] = r
    return out


def _cumulative(name, method, initial, x, axis, dtype, out, include_initial):
    from .._manipulation.joining import concatenate

    x = args.array(x, name)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: for arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        axis = 0
        if x.ndim == 0:
            x = x.reshape(1)
    ax = args.axis(axis, x.ndim)
    r = getattr(x, method)(axis=ax, dtype=dtype)
    if include_initial:
        shape = list(r.shape)
        shape[ax] = 1
        first = _filled(tuple(shape), initial, r.dtype)
        r = concatenate([first, r], axis=ax)
    if out is None:
        return r
    out[...] = r
    return out


def _filled(shape, value, dtype):
    from .._creation.basic import full

    return full(shape, value, dtype)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative sum along ``axis`` (numpy.cumulative_sum): ``axis`` may be left out only for a
    1-D array; ``include_initial`` starts with the sum of nothing (0), one element longer."""
    return _cumulative("cumulative_sum", "cumsum", 0, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative product along ``axis`` (numpy.cumulative_prod): ``axis`` may be left out only
    for a 1-D array; ``include_initial`` starts with the empty product (1)."""
    return _cumulative("cumulative_prod", "cumprod", 1, x, axis, dtype, out, include_initial)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple of views (numpy.unstack)."""
    x = args.array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    ax = args.axis(axis, x.ndim)
    moved = x if ax == 0 else x.transpose((ax, *[d for d in range(x.ndim) if d != ax]))
    return tuple(moved[i] for i in range(moved.shape[0]))
