"""Writes by position pattern: ``putmask``, ``fill_diagonal``, and the bit packing
``packbits``/``unpackbits``, each a composition of views, ufuncs and gathers written against
an array namespace ``xp`` (gpunb's here; NumPy's in tests/test_numeric_cpu.py, which checks
the steps against NumPy's results without a GPU)."""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._math.numeric import _gp
from ..core import args


def _cyclic(xp, values, n: int):
    """``values`` flattened and repeated cyclically to ``n`` elements (NumPy's ``flat``
    assignment of a shorter sequence)."""
    v = xp.asarray(values).ravel()
    if v.size == n:
        return v
    return xp.take(v, xp.arange(n) % v.size)


def putmask(a, mask, values):
    """``a.flat[n] = values[n % len(values)]`` where ``mask`` is True (numpy.putmask), in
    place."""
    x = args.out_array(a, "putmask")
    if x is None:
        raise TypeError("putmask: first argument must be an array")
    _putmask(_gp(), x, args.array(mask, "putmask"), values)


def _putmask(xp, x, m, values):
    if m.shape != x.shape:
        raise ValueError("putmask: mask and data must be the same size")
    if x.size == 0:
        return
    v = _cyclic(xp, values, x.size).reshape(x.shape)
    x[...] = xp.where(m, v.astype(x.dtype), x)


def fill_diagonal(a, val, wrap=False):
    """The main diagonal of ``a`` set to ``val`` in place (numpy.fill_diagonal): every
    ``(i, i, ..., i)``; for a tall matrix with ``wrap`` the diagonal restarts below it."""
    x = args.out_array(a, "fill_diagonal")
    if x is None:
        raise TypeError("fill_diagonal: a must be a gpunb.ndarray")
    _fill_diagonal(_gp(), x, val, wrap)


def _fill_diagonal(xp, x, val, wrap):
    if x.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if x.ndim == 2:
        step = x.shape[1] + 1
        if not wrap:
            end = x.shape[1] * x.shape[1]
    else:
        if len(set(x.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(x.shape[:-1]).sum())
    target = x if x.flags.c_contiguous else x.copy()
    flat = target.reshape(target.size)[:end:step]
    if np.ndim(val) == 0 and not hasattr(val, "shape"):
        flat[...] = val
    elif flat.size:
        flat[...] = _cyclic(xp, val, flat.size)
    if target is not x:
        x[...] = target


def _bits_axis(x, axis):
    if axis is None:
        return x.ravel(), 0
    return x, normalize_axis_index(axis, x.ndim)


def packbits(a, /, axis=None, bitorder="big"):
    """The elements' truth packed 8 to a uint8 along ``axis`` (numpy.packbits; the flattened
    array when ``axis`` is None), zero-padded at the end."""
    return _packbits(_gp(), args.array(a, "packbits"), axis, bitorder)


def _packbits(xp, x, axis, bitorder):
    if x.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x, ax = _bits_axis(x, axis)
    n = x.shape[ax]
    bits = (x != 0).astype(np.uint8)
    if n % 8:
        widths = [(0, 0)] * x.ndim
        widths[ax] = (0, 8 - n % 8)
        bits = xp.pad(bits, widths)
    moved = bits.swapaxes(ax, -1)
    groups = moved.reshape(moved.shape[:-1] + (moved.shape[-1] // 8, 8))
    weights = xp.asarray((1 << (np.arange(8)[::-1] if bitorder == "big" else np.arange(8))).astype(np.uint8))
    packed = (groups * weights).sum(axis=-1, dtype=np.uint8)
    return packed.swapaxes(ax, -1).copy()


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """Each uint8 unpacked into 8 bits along ``axis`` (numpy.unpackbits; flattened when
    ``axis`` is None), ``count`` bits kept (negative: dropped from the end; more: zeros)."""
    return _unpackbits(_gp(), args.array(a, "unpackbits"), axis, count, bitorder)


def _unpackbits(xp, x, axis, count, bitorder):
    if x.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x, ax = _bits_axis(x, axis)
    shifts = xp.asarray((np.arange(8)[::-1] if bitorder == "big" else np.arange(8)).astype(np.uint8))
    moved = x.swapaxes(ax, -1)
    bits = (moved.reshape(moved.shape + (1,)) >> shifts) & np.uint8(1)
    bits = bits.reshape(moved.shape[:-1] + (moved.shape[-1] * 8,))
    total = bits.shape[-1]
    if count is not None:
        count = int(count)
        keep = count if count >= 0 else max(total + count, 0)
        if count < 0 and -count > total:
            raise ValueError("-count larger than number of elements")
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = xp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - total)])
    return bits.swapaxes(ax, -1).copy()
